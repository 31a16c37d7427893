//! A minimal svn:// client talking to the real `svnserve -t` over pipes: the oracle for
//! what svnserve answers to the history commands.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use svelto_testkit::require_tool;
use svelto_wire::{Decoder, Item, Limits};

pub struct Svnserve {
    child: Child,
    stdin: ChildStdin,
    stdout: ChildStdout,
    buf: Vec<u8>,
    decoder: Decoder,
}

/// What a streaming command answered: the items before `done`, then the final response.
#[derive(Debug)]
pub struct Answer {
    pub items: Vec<Item>,
    pub response: Result<Vec<Item>, (u64, String)>,
}

fn list(item: &Item) -> &[Item] {
    item.as_list()
        .unwrap_or_else(|| panic!("expected a list, got {item:?}"))
}

fn word(w: &str) -> Item {
    Item::Word(w.to_string())
}

/// The result list of `( success ( ... ) )`, or the first error of a failure.
fn response(item: &Item) -> Result<Vec<Item>, (u64, String)> {
    let l = list(item);
    match l.first().and_then(Item::as_word) {
        Some("success") => Ok(l.get(1).map(|x| list(x).to_vec()).unwrap_or_default()),
        Some("failure") => {
            let errors = list(&l[1]);
            let first = list(&errors[0]);
            let code = first[0].as_number().expect("error code");
            let msg = String::from_utf8_lossy(first[1].as_string().expect("message")).into_owned();
            Err((code, msg))
        }
        _ => panic!("not a response: {item:?}"),
    }
}

impl Svnserve {
    /// Starts `svnserve -t` and opens a session on the repository root at `repo`.
    pub fn open(repo: &Path) -> Svnserve {
        let mut child = Command::new(require_tool("svnserve"))
            .arg("-t")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("svnserve starts");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let mut s = Svnserve {
            child,
            stdin,
            stdout,
            buf: Vec::new(),
            decoder: Decoder::new(Limits::default()),
        };
        let greeting = s.read();
        response(&greeting).expect("greeting");
        let url = format!("svn+ssh://localhost{}", repo.display());
        let caps = [
            "edit-pipeline",
            "svndiff1",
            "accepts-svndiff2",
            "absent-entries",
            "depth",
            "mergeinfo",
            "log-revprops",
        ];
        s.write(&Item::list(vec![
            Item::Number(2),
            Item::list(caps.iter().map(|c| word(c)).collect::<Vec<_>>()),
            Item::string(url),
            Item::string("svelto-test"),
            Item::empty_list(),
        ]));
        let auth = response(&s.read()).expect("auth request");
        let mechs: Vec<String> = list(&auth[0])
            .iter()
            .filter_map(|m| m.as_word().map(str::to_string))
            .collect();
        if !mechs.is_empty() {
            let mech = if mechs.iter().any(|m| m == "EXTERNAL") {
                "EXTERNAL"
            } else {
                "ANONYMOUS"
            };
            s.write(&Item::list(vec![
                word(mech),
                Item::list(vec![Item::string("")]),
            ]));
            response(&s.read()).expect("authenticated");
        }
        response(&s.read()).expect("repos-info");
        s
    }

    fn write(&mut self, item: &Item) {
        let mut out = item.to_bytes();
        out.push(b'\n');
        self.stdin.write_all(&out).expect("write to svnserve");
        self.stdin.flush().expect("flush");
    }

    fn read(&mut self) -> Item {
        loop {
            if let Some((item, used)) = self.decoder.decode(&self.buf).expect("svnserve speaks") {
                self.buf.drain(..used);
                return item;
            }
            let mut chunk = [0u8; 65536];
            let n = self.stdout.read(&mut chunk).expect("read from svnserve");
            assert!(n > 0, "svnserve closed the connection");
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }

    /// Sends a command, reads the auth slot, and returns the plain response.
    pub fn call(&mut self, name: &str, params: Vec<Item>) -> Result<Vec<Item>, (u64, String)> {
        self.write(&Item::list(vec![word(name), Item::list(params)]));
        let slot = self.read();
        response(&slot)?;
        response(&self.read())
    }

    /// Sends a streaming command: items until `done`, then the response.
    pub fn stream(&mut self, name: &str, params: Vec<Item>) -> Answer {
        self.write(&Item::list(vec![word(name), Item::list(params)]));
        let slot = self.read();
        if let Err(e) = response(&slot) {
            return Answer {
                items: Vec::new(),
                response: Err(e),
            };
        }
        let mut items = Vec::new();
        loop {
            let item = self.read();
            if item.as_word() == Some("done") {
                break;
            }
            items.push(item);
        }
        let response = response(&self.read());
        Answer { items, response }
    }
}

impl Drop for Svnserve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
