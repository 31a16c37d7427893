//! The drive `replay` makes, compared with the one svnserve sends for `replay-range` over the
//! same history in FSFS (read off the wire of `svnserve -i`).
//!
//! Both drives are brought to one text form: the tree of opened and added nodes with their
//! copy sources, property changes (sorted, as svnserve sends them in hash order), the MD5 of
//! the text each delta produces from its base, and the MD5 at close. Siblings are sorted by
//! path, keeping their order otherwise, because svnserve lists a copied directory sent as a
//! plain add in hash order too.

use super::{load_fixture, md5_of};
use std::collections::HashMap;
use std::io::{Read, Write};
use std::process::{Child, Command, Stdio};
use std::sync::{mpsc, Arc};
use std::time::Duration;
use svelto_core::{Md5, NodeKind, Revnum};
use svelto_delta::{apply_windows, decode_stream, Limits};
use svelto_repos::editor::{Call, Recorder};
use svelto_repos::{replay, Editor, ReplayOptions, TextOptions, Token};
use svelto_store::Repo;
use svelto_wire::{Decoder, Item};

/// A `svnserve -i` child, killed when dropped.
struct Svnserve {
    child: Child,
    input: Option<std::process::ChildStdin>,
    output: mpsc::Receiver<Vec<u8>>,
    buf: Vec<u8>,
    decoder: Decoder,
}

impl Drop for Svnserve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Svnserve {
    fn start(root: &std::path::Path) -> Svnserve {
        svelto_testkit::require_tool("svnserve");
        let mut child = Command::new("svnserve")
            .arg("-i")
            .arg("-r")
            .arg(root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start svnserve -i");
        let mut stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut b = vec![0u8; 1 << 16];
            while let Ok(n) = stdout.read(&mut b) {
                if n == 0 || tx.send(b[..n].to_vec()).is_err() {
                    break;
                }
            }
        });
        let input = child.stdin.take();
        Svnserve {
            child,
            input,
            output: rx,
            buf: Vec::new(),
            decoder: Decoder::new(svelto_wire::Limits::default()),
        }
    }

    fn send(&mut self, item: &Item) {
        // One write with the trailing space, as the client does: svnserve checks for input
        // during a drive, and a lone space arriving then would be read as a new item.
        let mut bytes = item.to_bytes();
        bytes.push(b' ');
        let input = self.input.as_mut().expect("stdin open");
        input.write_all(&bytes).expect("write to svnserve");
        input.flush().expect("flush");
    }

    fn item(&mut self) -> Item {
        loop {
            if let Some((item, used)) = self.decoder.decode(&self.buf).expect("svnserve's item") {
                self.buf.drain(..used);
                return item;
            }
            let more = self
                .output
                .recv_timeout(Duration::from_secs(60))
                .expect("svnserve answers within a minute");
            self.buf.extend_from_slice(&more);
        }
    }

    /// `( success ( ... ) )`: the parameters.
    fn success(&mut self) -> Vec<Item> {
        let item = self.item();
        match command(&item) {
            ("success", params) => params.to_vec(),
            _ => panic!("svnserve: expected success, got {item:?}"),
        }
    }
}

fn command(item: &Item) -> (&str, &[Item]) {
    match item.as_list() {
        Some([Item::Word(w), Item::List(params)]) => (w.as_str(), params),
        _ => panic!("not a command: {item:?}"),
    }
}

fn string(item: &Item) -> String {
    String::from_utf8(item.as_string().expect("a string").to_vec()).expect("UTF-8")
}

fn opt(item: &Item) -> Option<&Item> {
    item.as_list().expect("an optional tuple").first()
}

fn url_encode(path: &str) -> String {
    let mut out = String::new();
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"/-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// svnserve's `replay-range start..=end` of the FSFS repository at `root/repo`, session at
/// `base`: one recorded drive per revision.
fn svnserve_drives(
    root: &std::path::Path,
    base: &str,
    range: (Revnum, Revnum),
    lwm: Revnum,
    send_deltas: bool,
) -> Vec<Vec<Call>> {
    let mut s = Svnserve::start(root);
    let url = format!("svn://localhost/repo/{}", url_encode(base));
    let caps = [
        "edit-pipeline",
        "svndiff1",
        "accepts-svndiff2",
        "absent-entries",
        "depth",
    ];
    s.success(); // greeting
    s.send(&Item::list(vec![
        Item::Number(2),
        Item::list(caps.iter().map(|c| Item::word(*c)).collect::<Vec<_>>()),
        Item::string(url.as_bytes()),
        Item::string("svelto-test"),
        Item::empty_list(),
    ]));
    s.success(); // auth request
    s.send(&Item::list(vec![
        Item::word("ANONYMOUS"),
        Item::list(vec![Item::string("")]),
    ]));
    s.success(); // authenticated
    s.success(); // repos-info
    s.send(&svelto_wire::command(
        "replay-range",
        vec![
            Item::Number(range.0),
            Item::Number(range.1),
            Item::Number(lwm),
            Item::bool(send_deltas),
        ],
    ));
    s.success(); // no further authentication
    let mut drives = Vec::new();
    loop {
        let item = s.item();
        match command(&item) {
            ("revprops", _) => {}
            ("success", _) => break,
            _ => panic!("svnserve: expected revprops, got {item:?}"),
        }
        let mut rec = Recorder::default();
        let mut tokens: HashMap<Vec<u8>, Token> = HashMap::new();
        loop {
            let item = s.item();
            match command(&item) {
                ("finish-replay", _) => break,
                ("abort-edit", _) => {
                    s.send(&svelto_wire::success(vec![]));
                    let failure = s.item();
                    panic!(
                        "svnserve {url} lwm {lwm} send-deltas {send_deltas}: replay failed after \
                         {:?}: {failure:?}",
                        rec.calls
                    );
                }
                (name, p) => feed(&mut rec, &mut tokens, name, p).expect("recording"),
            }
        }
        drives.push(rec.calls);
    }
    drop(s.input.take());
    drives
}

/// One editor command read off the wire, replayed into `rec`.
fn feed(
    rec: &mut Recorder,
    tokens: &mut HashMap<Vec<u8>, Token>,
    name: &str,
    p: &[Item],
) -> svelto_repos::Result<()> {
    let key = |i: usize| p[i].as_string().expect("token").to_vec();
    let tok = |i: usize| tokens[&key(i)];
    let rev = |i: usize| opt(&p[i]).map(|r| r.as_number().expect("rev"));
    let value = |i: usize| opt(&p[i]).map(|v| v.as_string().expect("value").to_vec());
    let md5 = |i: usize| opt(&p[i]).map(|m| Md5::from_hex(&string(m)).expect("hex MD5"));
    let copy = match p.get(3).and_then(Item::as_list) {
        Some([path, rev]) => Some((string(path), rev.as_number().expect("rev"))),
        _ => None,
    };
    let copy = copy.as_ref().map(|(p, r)| (p.as_str(), *r));
    let opened = match name {
        "target-rev" => return rec.target_rev(p[0].as_number().expect("rev")),
        "open-root" => Some((1, rec.open_root(rev(0))?)),
        "delete-entry" => return rec.delete_entry(&string(&p[0]), rev(1), tok(2)),
        "add-dir" => Some((2, rec.add_dir(&string(&p[0]), tok(1), copy)?)),
        "add-file" => Some((2, rec.add_file(&string(&p[0]), tok(1), copy)?)),
        "open-dir" => Some((2, rec.open_dir(&string(&p[0]), tok(1), rev(3))?)),
        "open-file" => Some((2, rec.open_file(&string(&p[0]), tok(1), rev(3))?)),
        "change-dir-prop" => {
            let name = p[1].as_string().expect("name");
            return rec.change_dir_prop(tok(0), name, value(2).as_deref());
        }
        "change-file-prop" => {
            let name = p[1].as_string().expect("name");
            return rec.change_file_prop(tok(0), name, value(2).as_deref());
        }
        "close-dir" => return rec.close_dir(tok(0)),
        "apply-textdelta" => return rec.apply_textdelta(tok(0), md5(1).as_ref()),
        "textdelta-chunk" => return rec.textdelta_chunk(tok(0), p[1].as_string().expect("chunk")),
        "textdelta-end" => return rec.textdelta_end(tok(0)),
        "close-file" => return rec.close_file(tok(0), md5(1).as_ref()),
        _ => panic!("svnserve: unexpected command {name} {p:?}"),
    };
    if let Some((i, t)) = opened {
        let k = key(i);
        tokens.insert(k, t);
    }
    Ok(())
}

#[derive(Default)]
struct Node {
    head: String,
    path: String,
    lines: Vec<String>,
    children: Vec<usize>,
}

/// The text form of a drive (see the module comment). `texts` maps MD5s to the texts a
/// delta may have as its base.
fn render(calls: &[Call], texts: &HashMap<Md5, Arc<Vec<u8>>>) -> String {
    let mut nodes: Vec<Node> = vec![Node::default()];
    let mut at: HashMap<Token, usize> = HashMap::new();
    let mut streams: HashMap<Token, (Option<Md5>, Vec<u8>)> = HashMap::new();
    let mut top = Vec::new();
    let mut push = |nodes: &mut Vec<Node>, parent: Option<usize>, head: String, path: &str| {
        nodes.push(Node {
            head,
            path: path.to_string(),
            ..Node::default()
        });
        let i = nodes.len() - 1;
        match parent {
            Some(p) => nodes[p].children.push(i),
            None => top.push(i),
        }
        i
    };
    let copy = |c: &Option<(String, Revnum)>| match c {
        Some((p, r)) => format!(" from {p}@{r}"),
        None => String::new(),
    };
    let prop = |n: &[u8], v: &Option<Vec<u8>>| {
        format!(
            "prop {:?} = {:?}",
            String::from_utf8_lossy(n),
            v.as_ref().map(|v| String::from_utf8_lossy(v).into_owned())
        )
    };
    for c in calls {
        match c {
            Call::TargetRev(r) => {
                push(&mut nodes, None, format!("target-rev {r}"), "");
            }
            Call::OpenRoot(rev, t) => {
                let i = push(&mut nodes, None, format!("open-root {rev:?}"), "");
                at.insert(*t, i);
            }
            Call::DeleteEntry(path, rev, parent) => {
                push(
                    &mut nodes,
                    Some(at[parent]),
                    format!("delete {path} {rev:?}"),
                    path,
                );
            }
            Call::AddDir(path, parent, t, from) | Call::AddFile(path, parent, t, from) => {
                let kind = if matches!(c, Call::AddDir(..)) {
                    "add-dir"
                } else {
                    "add-file"
                };
                let head = format!("{kind} {path}{}", copy(from));
                let i = push(&mut nodes, Some(at[parent]), head, path);
                at.insert(*t, i);
            }
            Call::OpenDir(path, parent, t, rev) | Call::OpenFile(path, parent, t, rev) => {
                let i = push(
                    &mut nodes,
                    Some(at[parent]),
                    format!("open {path} {rev:?}"),
                    path,
                );
                at.insert(*t, i);
            }
            Call::ChangeDirProp(t, n, v) | Call::ChangeFileProp(t, n, v) => {
                nodes[at[t]].lines.push(prop(n, v));
            }
            Call::CloseDir(t) => nodes[at[t]].lines.push("close".into()),
            Call::ApplyTextdelta(t, base) => {
                streams.insert(*t, (*base, Vec::new()));
            }
            Call::TextdeltaChunk(t, bytes) => streams
                .get_mut(t)
                .expect("stream")
                .1
                .extend_from_slice(bytes),
            Call::TextdeltaEnd(t) => {
                let (base, stream) = streams.remove(t).expect("stream");
                let source = match &base {
                    Some(md5) => texts
                        .get(md5)
                        .cloned()
                        .unwrap_or_else(|| panic!("unknown base {}", md5.to_hex())),
                    None => Arc::new(Vec::new()),
                };
                let windows = decode_stream(&stream, &Limits::default()).expect("svndiff");
                let result = apply_windows(&windows, &source).expect("applies");
                let base = base.map_or("-".to_string(), |m| m.to_hex());
                let line = format!(
                    "text base {base} gives {} (header only: {})",
                    md5_of(&result).to_hex(),
                    stream.len() == 4 && result.is_empty()
                );
                nodes[at[t]].lines.push(line);
            }
            Call::CloseFile(t, md5) => {
                let md5 = md5.map_or("-".to_string(), |m| m.to_hex());
                nodes[at[t]].lines.push(format!("close {md5}"));
            }
            other => panic!("unexpected call in a replay: {other:?}"),
        }
    }
    let mut out = String::new();
    fn write(nodes: &[Node], i: usize, depth: usize, out: &mut String) {
        let n = &nodes[i];
        out.push_str(&format!("{}{}\n", "  ".repeat(depth), n.head));
        let mut lines = n.lines.clone();
        lines.sort();
        for l in &lines {
            out.push_str(&format!("{}  . {l}\n", "  ".repeat(depth)));
        }
        let mut children = n.children.clone();
        children.sort_by(|a, b| svelto_core::compare_paths(&nodes[*a].path, &nodes[*b].path));
        for c in children {
            write(nodes, c, depth + 1, out);
        }
    }
    for i in top {
        write(&nodes, i, 0, &mut out);
    }
    out
}

/// Every text the repository ever held, by MD5.
pub(super) fn all_texts(repo: &Repo) -> HashMap<Md5, Arc<Vec<u8>>> {
    let mut texts = HashMap::new();
    for rev in 1..=repo.youngest() {
        for c in repo.rev_meta(rev).expect("meta").changes {
            if c.node == 0 {
                continue;
            }
            let node = repo.node(c.node).expect("node");
            if node.kind == NodeKind::File {
                let t = node.file_text();
                texts.insert(t.md5, repo.read_text(&t).expect("text"));
            }
        }
    }
    texts
}

fn first_difference(a: &str, b: &str) -> String {
    let (al, bl): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    let i = al.iter().zip(&bl).take_while(|(x, y)| x == y).count();
    let from = i.saturating_sub(8);
    format!(
        "first difference at line {i}\n--- svnserve\n{}\n--- svelto\n{}",
        al[from..(i + 8).min(al.len())].join("\n"),
        bl[from..(i + 8).min(bl.len())].join("\n")
    )
}

pub(super) fn compare(
    name: &str,
    repo: &Repo,
    fsfs: &svelto_testkit::TempRepo,
    texts: &HashMap<Md5, Arc<Vec<u8>>>,
    base: &str,
    lwm: Revnum,
    send_deltas: bool,
) {
    let head = repo.youngest();
    let theirs = svnserve_drives(fsfs.dir(), base, (0, head), lwm, send_deltas);
    assert_eq!(theirs.len() as u64, head + 1);
    for (rev, calls) in theirs.iter().enumerate() {
        let rev = rev as Revnum;
        let what =
            format!("{name} r{rev} base '{base}' low-water-mark {lwm} send-deltas {send_deltas}");
        let mut rec = Recorder::default();
        let opts = ReplayOptions {
            base_dir: base.to_string(),
            low_water_mark: lwm,
            send_deltas,
            text: TextOptions {
                svndiff_version: 2,
                send_deltas: true,
            },
        };
        replay(repo, rev, &opts, &mut rec).unwrap_or_else(|e| panic!("{what}: {e}"));
        let (a, b) = (render(calls, texts), render(&rec.calls, texts));
        assert!(a == b, "{what}: {}", first_difference(&a, &b));
    }
}

fn compare_fixture(name: &str) {
    let (_dir, repo) = load_fixture(name);
    let fsfs = svelto_testkit::svnadmin_create_load(&svelto_testkit::scenario_dump(name));
    let texts = all_texts(&repo);
    let head = repo.youngest();
    let mut truth = super::Truth {
        repo: &repo,
        trees: HashMap::new(),
    };
    for base in super::bases(&mut truth, head) {
        for lwm in [0, head / 2, head] {
            for send_deltas in [true, false] {
                compare(name, &repo, &fsfs, &texts, &base, lwm, send_deltas);
            }
        }
    }
}

#[test]
fn same_as_svnserve_many_revs() {
    let name = "many-revs";
    let (_dir, repo) = load_fixture(name);
    let fsfs = svelto_testkit::svnadmin_create_load(&svelto_testkit::scenario_dump(name));
    let texts = all_texts(&repo);
    let head = repo.youngest();
    compare(name, &repo, &fsfs, &texts, "", head / 2, true);
    compare(name, &repo, &fsfs, &texts, "trunk", 0, false);
}

macro_rules! svnserve_tests {
    ($($test:ident => $name:expr,)*) => {
        $(
            #[test]
            fn $test() {
                compare_fixture($name);
            }
        )*

        #[test]
        fn every_small_fixture_is_compared_with_svnserve() {
            let mut covered = vec![$($name),*, "many-revs"];
            covered.sort();
            assert_eq!(covered, svelto_testkit::fixture_names());
        }
    };
}

svnserve_tests! {
    same_as_svnserve_basic => "basic",
    same_as_svnserve_copies => "copies",
    same_as_svnserve_empty_revs => "empty-revs",
    same_as_svnserve_eol_keywords => "eol-keywords",
    same_as_svnserve_mergeinfo => "mergeinfo",
    same_as_svnserve_mixed => "mixed",
    same_as_svnserve_moves => "moves",
    same_as_svnserve_names => "names",
    same_as_svnserve_props => "props",
    same_as_svnserve_readd => "readd",
    same_as_svnserve_replace => "replace",
    same_as_svnserve_revprops => "revprops",
    same_as_svnserve_symlinks => "symlinks",
}
