//! A fixture loaded twice (FSFS by `svnadmin`, Svelto by `svelto_repos::load`), and a
//! minimal svn:// client talking to `svnserve -t` over the FSFS copy.

use std::fs::File;
use std::io::{BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use svelto_core::NodeKind;
use svelto_repos::LoadOptions;
use svelto_store::Repo;
use svelto_testkit::{require_tool, scenario_dump, svnadmin_create, tempdir, Run, TempRepo};
use svelto_wire::{Decoder, Item, Limits};
use tempfile::TempDir;

pub struct Pair {
    pub fsfs: TempRepo,
    pub repo: Repo,
    _dir: TempDir,
}

/// Loads the scenario `name` into FSFS and into Svelto.
pub fn pair(name: &str) -> Pair {
    pair_from(&scenario_dump(name), false)
}

/// Loads a dump into FSFS and into Svelto, optionally without validating `svn:*`
/// properties (to store mergeinfo that does not parse).
pub fn pair_from(dump: &Path, bypass_prop_validation: bool) -> Pair {
    let fsfs = svnadmin_create();
    let args: &[&str] = if bypass_prop_validation {
        &["--bypass-prop-validation"]
    } else {
        &[]
    };
    fsfs.load(dump, args);
    let dir = tempdir();
    let path = dir.path().join("svelto");
    svelto_repos::create(&path, &fsfs.uuid(), "2011-03-13T08:00:00.000000Z").expect("create");
    let input = BufReader::new(File::open(dump).expect("open dump"));
    let opts = LoadOptions {
        bypass_prop_validation,
        ..Default::default()
    };
    svelto_repos::load(&path, input, opts, &mut |_| {}).expect("load");
    let repo = Repo::open(&path).expect("open");
    assert_eq!(
        repo.youngest(),
        fsfs.youngest(),
        "{dump:?}: both hold the history"
    );
    Pair {
        fsfs,
        repo,
        _dir: dir,
    }
}

impl Pair {
    /// Every path (relpath) of a kind in `rev`, in depth-first order, from Svelto's tree.
    pub fn paths(&self, rev: u64, kind: NodeKind) -> Vec<String> {
        let mut out = Vec::new();
        let mut stack = vec![(String::new(), self.repo.root(rev).expect("root"))];
        while let Some((path, off)) = stack.pop() {
            let node = self.repo.node(off).expect("node");
            if node.kind == kind {
                out.push(path.clone());
            }
            if node.kind == NodeKind::Dir {
                for e in self.repo.dir(&node).expect("dir").iter() {
                    stack.push((svelto_core::join(&path, &e.name), e.node));
                }
            }
        }
        out.sort();
        out
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}/{path}", self.fsfs.url())
    }

    /// `svn ARGS` over file:// (an isolated config dir), its standard output.
    pub fn svn(&self, args: &[&str]) -> String {
        let config = self.fsfs.dir().join("svn-config");
        Run::tool("svn")
            .arg("--config-dir")
            .arg(&config)
            .arg("--non-interactive")
            .args(args)
            .env("LANG", "C")
            .success()
            .stdout_text()
    }

    pub fn svnserve(&self) -> Svnserve {
        Svnserve::start(self.fsfs.dir(), "repo")
    }
}

/// An svn:// session with `svnserve -t -r ROOT` on the repository ROOT/NAME.
pub struct Svnserve {
    child: Child,
    stdin: ChildStdin,
    stdout: ChildStdout,
    buf: Vec<u8>,
    decoder: Decoder,
}

fn words(ws: &[&str]) -> Item {
    Item::list(ws.iter().map(|w| Item::word(*w)).collect::<Vec<_>>())
}

impl Svnserve {
    pub fn start(root: &Path, name: &str) -> Svnserve {
        let mut child = Command::new(require_tool("svnserve"))
            .arg("-t")
            .arg("-r")
            .arg(root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start svnserve -t");
        let stdin = child.stdin.take().expect("piped");
        let stdout = child.stdout.take().expect("piped");
        let mut s = Svnserve {
            child,
            stdin,
            stdout,
            buf: Vec::new(),
            decoder: Decoder::new(Limits::default()),
        };
        s.item(); // greeting
        let caps = [
            "edit-pipeline",
            "svndiff1",
            "accepts-svndiff2",
            "absent-entries",
            "depth",
            "mergeinfo",
            "log-revprops",
        ];
        s.send(&Item::list(vec![
            Item::Number(2),
            words(&caps),
            Item::string(format!("svn+ssh://localhost/{name}")),
            Item::string("svelto-test"),
            Item::empty_list(),
        ]));
        s.item(); // auth request
        s.send(&Item::list(vec![
            Item::word("EXTERNAL"),
            Item::list(vec![Item::string("")]),
        ]));
        let ok = s.item();
        assert!(is_success(&ok), "EXTERNAL auth: {ok:?}");
        let info = s.item();
        assert!(is_success(&info), "repos-info: {info:?}");
        s
    }

    fn send(&mut self, item: &Item) {
        self.stdin.write_all(&item.to_bytes()).expect("write");
        self.stdin.flush().expect("flush");
    }

    pub fn item(&mut self) -> Item {
        loop {
            if let Some((item, used)) = self.decoder.decode(&self.buf).expect("svnserve item") {
                self.buf.drain(..used);
                return item;
            }
            let mut chunk = [0u8; 65536];
            let n = self.stdout.read(&mut chunk).expect("read");
            assert!(n > 0, "svnserve closed the connection");
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }

    /// Sends a command and reads its auth slot.
    pub fn command(&mut self, name: &str, params: Vec<Item>) {
        self.send(&svelto_wire::command(name, params));
        let slot = self.item();
        assert!(is_success(&slot), "{name}: auth slot {slot:?}");
    }
}

impl Drop for Svnserve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn is_success(item: &Item) -> bool {
    matches!(item.as_list(), Some([Item::Word(w), ..]) if w == "success")
}

/// The result list of a success response, or the (code, message) of a failure.
pub fn response(item: &Item) -> Result<Vec<Item>, (u64, String)> {
    let list = item.as_list().expect("response is a list");
    match list {
        [Item::Word(w), Item::List(results)] if w == "success" => Ok(results.clone()),
        [Item::Word(w), Item::List(chain)] if w == "failure" => {
            let first = chain[0].as_list().expect("error link");
            let code = first[0].as_number().expect("code");
            let msg = String::from_utf8_lossy(first[1].as_string().expect("message"));
            Err((code, msg.into_owned()))
        }
        _ => panic!("not a response: {item:?}"),
    }
}

/// A wire proplist `( ( name value ) ... )` as sorted pairs.
pub fn proplist(item: &Item) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out: Vec<(Vec<u8>, Vec<u8>)> = item
        .as_list()
        .expect("proplist")
        .iter()
        .map(|p| {
            let p = p.as_list().expect("prop");
            (
                p[0].as_string().expect("name").to_vec(),
                p[1].as_string().expect("value").to_vec(),
            )
        })
        .collect();
    out.sort();
    out
}

/// The tools these tests run; panics loudly when one is missing.
pub fn require_svn_tools() {
    for tool in ["svn", "svnadmin", "svnserve"] {
        require_tool(tool);
    }
}
