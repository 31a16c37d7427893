//! A minimal svn:// client talking to the real `svnserve -i` over pipes: it sends the
//! update-family commands and reports exactly as the 1.14 client does, and records the editor
//! drive svnserve answers with, as the same `Call`s our drive records.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use svelto_core::Md5;
use svelto_repos::editor::{Call, Token};
use svelto_testkit::require_tool;
use svelto_wire::{Decoder, Item, Limits};

use crate::harness::{Cmd, Op, Scenario};

pub struct Svnserve {
    child: Child,
    stdin: ChildStdin,
    stdout: ChildStdout,
    buf: Vec<u8>,
    decoder: Decoder,
    repo_url: String,
}

/// What svnserve answered a report with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The drive ran to `close-edit` and the command succeeded.
    Drive(Vec<Call>),
    /// A failure in place of the drive (`(code, message)` of the first error).
    Refused(u64, String),
    /// The drive was aborted: the calls before `abort-edit`, then the failure.
    Aborted(Vec<Call>, u64, String),
    /// svnserve died (it has assertions that some reports trip).
    Crashed,
}

/// Percent-encodes a repository relpath for a URL.
pub fn uri_encode(path: &str) -> String {
    let mut out = String::new();
    for &b in path.as_bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/!$&'()*+,;=:@".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn s(text: &str) -> Item {
    Item::string(text.as_bytes())
}

fn n(value: u64) -> Item {
    Item::Number(value)
}

fn w(word: &str) -> Item {
    Item::word(word)
}

fn l(items: Vec<Item>) -> Item {
    Item::list(items)
}

fn cmd(name: &str, params: Vec<Item>) -> Item {
    l(vec![w(name), l(params)])
}

impl Svnserve {
    /// Starts `svnserve -i -r root` and opens a session on `svn://localhost/<repo_name>`.
    pub fn start(root: &Path, repo_name: &str) -> Svnserve {
        let program = require_tool("svnserve");
        let mut child = Command::new(program)
            .arg("-i")
            .arg("-r")
            .arg(root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("svnserve starts");
        let stdin = child.stdin.take().expect("stdin is piped");
        let stdout = child.stdout.take().expect("stdout is piped");
        let mut me = Svnserve {
            child,
            stdin,
            stdout,
            buf: Vec::new(),
            decoder: Decoder::new(Limits {
                max_request: 1 << 30,
                ..Limits::default()
            }),
            repo_url: format!("svn://localhost/{repo_name}"),
        };
        let greeting = me.read();
        assert_eq!(word_at(&greeting, 0), "success", "greeting: {greeting:?}");
        let caps = [
            "edit-pipeline",
            "svndiff1",
            "accepts-svndiff2",
            "absent-entries",
            "depth",
            "mergeinfo",
            "log-revprops",
        ];
        let url = me.repo_url.clone();
        me.write(&l(vec![
            n(2),
            l(caps.iter().map(|c| w(c)).collect()),
            s(&url),
            s("svelto-report-test"),
            l(vec![]),
        ]));
        let auth = me.read();
        assert_eq!(word_at(&auth, 0), "success", "auth request: {auth:?}");
        me.write(&l(vec![w("ANONYMOUS"), l(vec![s("")])]));
        let ok = me.read();
        assert_eq!(word_at(&ok, 0), "success", "auth: {ok:?}");
        let info = me.read();
        assert_eq!(word_at(&info, 0), "success", "repos-info: {info:?}");
        me
    }

    fn read(&mut self) -> Item {
        self.try_read().expect("svnserve closed the connection")
    }

    fn try_read(&mut self) -> Option<Item> {
        loop {
            match self.decoder.decode(&self.buf) {
                Ok(Some((item, used))) => {
                    self.buf.drain(..used);
                    return Some(item);
                }
                Ok(None) => {}
                Err(e) => panic!("svnserve sent a malformed item: {e}"),
            }
            let mut chunk = [0u8; 1 << 16];
            let got = self.stdout.read(&mut chunk).unwrap_or(0);
            if got == 0 {
                return None;
            }
            self.buf.extend_from_slice(&chunk[..got]);
        }
    }

    fn write(&mut self, item: &Item) {
        self.stdin
            .write_all(&item.to_bytes())
            .expect("write to svnserve");
        self.stdin.flush().expect("flush");
    }

    fn url(&self, relpath: &str) -> String {
        if relpath.is_empty() {
            self.repo_url.clone()
        } else {
            format!("{}/{}", self.repo_url, uri_encode(relpath))
        }
    }

    /// Reads `( success ( ( ) 0: ) )`, the empty auth request before a response.
    fn read_slot(&mut self) {
        let slot = self.read();
        assert_eq!(word_at(&slot, 0), "success", "auth slot: {slot:?}");
    }

    pub fn reparent(&mut self, anchor: &str) {
        let url = self.url(anchor);
        self.write(&cmd("reparent", vec![s(&url)]));
        self.read_slot();
        let ok = self.read();
        assert_eq!(word_at(&ok, 0), "success", "reparent {anchor}: {ok:?}");
    }

    /// Sends `sc`'s command and report, and records what svnserve answers.
    pub fn run(&mut self, sc: &Scenario) -> Outcome {
        self.reparent(&sc.anchor);
        let rev = l(vec![n(sc.target_rev)]);
        let depth = w(sc.depth.as_str());
        let command = match sc.cmd {
            Cmd::Update => cmd(
                "update",
                vec![
                    rev,
                    s(&sc.target),
                    Item::bool(true),
                    depth,
                    Item::bool(sc.send_copyfrom),
                    Item::bool(sc.ignore_ancestry),
                ],
            ),
            Cmd::Switch => cmd(
                "switch",
                vec![
                    rev,
                    s(&sc.target),
                    Item::bool(true),
                    s(&self.url(sc.switch_path.as_deref().unwrap_or_default())),
                    depth,
                    Item::bool(sc.send_copyfrom),
                    Item::bool(sc.ignore_ancestry),
                ],
            ),
            Cmd::Status => cmd("status", vec![s(&sc.target), Item::bool(true), rev, depth]),
            Cmd::Diff => cmd(
                "diff",
                vec![
                    rev,
                    s(&sc.target),
                    Item::bool(true),
                    Item::bool(sc.ignore_ancestry),
                    s(&self.url(sc.switch_path.as_deref().unwrap_or_default())),
                    Item::bool(sc.text_deltas),
                    depth,
                ],
            ),
        };
        self.write(&command);
        self.read_slot();
        let mut report = Vec::new();
        for op in &sc.ops {
            let lock = |t: &Option<String>| l(t.iter().map(|t| s(t)).collect());
            report.push(match op {
                Op::Set {
                    path,
                    rev,
                    depth,
                    start_empty,
                    lock_token,
                } => cmd(
                    "set-path",
                    vec![
                        s(path),
                        n(*rev),
                        Item::bool(*start_empty),
                        lock(lock_token),
                        w(depth.as_str()),
                    ],
                ),
                Op::Link {
                    path,
                    url_path,
                    rev,
                    depth,
                    start_empty,
                } => cmd(
                    "link-path",
                    vec![
                        s(path),
                        s(&self.url(url_path)),
                        n(*rev),
                        Item::bool(*start_empty),
                        l(vec![]),
                        w(depth.as_str()),
                    ],
                ),
                Op::Delete { path } => cmd("delete-path", vec![s(path)]),
            });
        }
        report.push(cmd("finish-report", vec![]));
        let mut bytes = Vec::new();
        for item in &report {
            item.encode(&mut bytes);
        }
        if self.stdin.write_all(&bytes).is_err() || self.stdin.flush().is_err() {
            return Outcome::Crashed;
        }
        match self.try_read() {
            Some(slot) => assert_eq!(word_at(&slot, 0), "success", "auth slot: {slot:?}"),
            None => return Outcome::Crashed,
        }
        self.read_drive()
    }

    fn read_drive(&mut self) -> Outcome {
        let mut calls = Vec::new();
        let mut tokens: HashMap<Vec<u8>, Token> = HashMap::new();
        let mut next: Token = 0;
        loop {
            let Some(item) = self.try_read() else {
                return Outcome::Crashed;
            };
            let name = word_at(&item, 0).to_string();
            if name == "failure" {
                let (code, message) = first_error(&item);
                return Outcome::Refused(code, message);
            }
            let params = item
                .as_list()
                .and_then(|l| l.get(1))
                .and_then(Item::as_list)
                .unwrap_or_else(|| panic!("editor command without params: {item:?}"))
                .to_vec();
            let call = match name.as_str() {
                "target-rev" => Call::TargetRev(num(&params[0])),
                "open-root" => Call::OpenRoot(
                    opt_num(&params[0]),
                    new_tok(&mut tokens, &mut next, &params[1]),
                ),
                "delete-entry" => Call::DeleteEntry(
                    string(&params[0]),
                    opt_num(&params[1]),
                    tok(&tokens, &params[2]),
                ),
                "add-dir" => {
                    let parent = tok(&tokens, &params[1]);
                    Call::AddDir(
                        string(&params[0]),
                        parent,
                        new_tok(&mut tokens, &mut next, &params[2]),
                        copyfrom(params.get(3)),
                    )
                }
                "open-dir" => {
                    let parent = tok(&tokens, &params[1]);
                    Call::OpenDir(
                        string(&params[0]),
                        parent,
                        new_tok(&mut tokens, &mut next, &params[2]),
                        opt_num(&params[3]),
                    )
                }
                "change-dir-prop" => Call::ChangeDirProp(
                    tok(&tokens, &params[0]),
                    bytes(&params[1]),
                    opt_bytes(&params[2]),
                ),
                "close-dir" => Call::CloseDir(tok(&tokens, &params[0])),
                "absent-dir" => Call::AbsentDir(string(&params[0]), tok(&tokens, &params[1])),
                "add-file" => {
                    let parent = tok(&tokens, &params[1]);
                    Call::AddFile(
                        string(&params[0]),
                        parent,
                        new_tok(&mut tokens, &mut next, &params[2]),
                        copyfrom(params.get(3)),
                    )
                }
                "open-file" => {
                    let parent = tok(&tokens, &params[1]);
                    Call::OpenFile(
                        string(&params[0]),
                        parent,
                        new_tok(&mut tokens, &mut next, &params[2]),
                        opt_num(&params[3]),
                    )
                }
                "apply-textdelta" => Call::ApplyTextdelta(
                    tok(&tokens, &params[0]),
                    opt_bytes(&params[1])
                        .map(|h| Md5::from_hex(&String::from_utf8_lossy(&h)).expect("md5 hex")),
                ),
                "textdelta-chunk" => {
                    Call::TextdeltaChunk(tok(&tokens, &params[0]), bytes(&params[1]))
                }
                "textdelta-end" => Call::TextdeltaEnd(tok(&tokens, &params[0])),
                "change-file-prop" => Call::ChangeFileProp(
                    tok(&tokens, &params[0]),
                    bytes(&params[1]),
                    opt_bytes(&params[2]),
                ),
                "close-file" => Call::CloseFile(
                    tok(&tokens, &params[0]),
                    opt_bytes(&params[1])
                        .map(|h| Md5::from_hex(&String::from_utf8_lossy(&h)).expect("md5 hex")),
                ),
                "absent-file" => Call::AbsentFile(string(&params[0]), tok(&tokens, &params[1])),
                "close-edit" => {
                    calls.push(Call::CloseEdit);
                    self.write(&cmd("success", vec![]));
                    let response = self.read();
                    if word_at(&response, 0) == "failure" {
                        let (code, message) = first_error(&response);
                        return Outcome::Aborted(calls, code, message);
                    }
                    return Outcome::Drive(calls);
                }
                "abort-edit" => {
                    self.write(&cmd("success", vec![]));
                    let response = self.read();
                    let (code, message) = first_error(&response);
                    return Outcome::Aborted(calls, code, message);
                }
                other => panic!("unexpected editor command {other}: {item:?}"),
            };
            calls.push(call);
        }
    }
}

impl Drop for Svnserve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn word_at(item: &Item, i: usize) -> &str {
    item.as_list()
        .and_then(|l| l.get(i))
        .and_then(Item::as_word)
        .unwrap_or("")
}

fn first_error(item: &Item) -> (u64, String) {
    let err = item
        .as_list()
        .and_then(|l| l.get(1))
        .and_then(Item::as_list)
        .and_then(|l| l.first())
        .and_then(Item::as_list)
        .unwrap_or_else(|| panic!("failure without an error: {item:?}"));
    (
        err[0].as_number().expect("error code"),
        String::from_utf8_lossy(err[1].as_string().unwrap_or_default()).into_owned(),
    )
}

fn num(item: &Item) -> u64 {
    item.as_number()
        .unwrap_or_else(|| panic!("not a number: {item:?}"))
}

fn opt_num(item: &Item) -> Option<u64> {
    item.as_list()
        .unwrap_or_else(|| panic!("not a tuple: {item:?}"))
        .first()
        .map(num)
}

fn bytes(item: &Item) -> Vec<u8> {
    item.as_string()
        .unwrap_or_else(|| panic!("not a string: {item:?}"))
        .to_vec()
}

fn string(item: &Item) -> String {
    String::from_utf8(bytes(item)).expect("UTF-8 path")
}

fn opt_bytes(item: &Item) -> Option<Vec<u8>> {
    item.as_list()
        .unwrap_or_else(|| panic!("not a tuple: {item:?}"))
        .first()
        .map(bytes)
}

fn copyfrom(item: Option<&Item>) -> Option<(String, u64)> {
    let list = item?.as_list()?;
    match list {
        [path, rev] => Some((string(path), num(rev))),
        _ => None,
    }
}

fn new_tok(tokens: &mut HashMap<Vec<u8>, Token>, next: &mut Token, item: &Item) -> Token {
    let t = item.as_string().expect("token").to_vec();
    let id = *next;
    *next += 1;
    tokens.insert(t, id);
    id
}

fn tok(tokens: &HashMap<Vec<u8>, Token>, item: &Item) -> Token {
    let t = item.as_string().expect("token");
    *tokens
        .get(t)
        .unwrap_or_else(|| panic!("unknown token {:?}", String::from_utf8_lossy(t)))
}
