//! A minimal svn:// client that drives the real `svnserve` over pipes (`svnserve -t` or
//! `svnserve -i`, one session per child): the oracle the svelto-repos tests compare their
//! answers with. It opens a session as the 1.14 client does, sends commands, reads the auth
//! slot, responses, streamed items and editor drives (as the [`Call`]s svelto's `Recorder`
//! records, with the same token numbering).

use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use svelto_core::Md5;
use svelto_repos::editor::Call;
use svelto_repos::Token;
use svelto_wire::{Decoder, Item, Limits};

use crate::run::require_tool;

/// How long svnserve may take to send the next bytes before the test fails.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(120);

/// The capabilities the session announces (those of the 1.14 client that matter here).
const CAPABILITIES: [&str; 7] = [
    "edit-pipeline",
    "svndiff1",
    "accepts-svndiff2",
    "absent-entries",
    "depth",
    "mergeinfo",
    "log-revprops",
];

/// How svnserve is started: both serve the parent of the repository (`-r`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `svnserve -t` (tunnel mode, `svn+ssh://` URLs, EXTERNAL authentication).
    Tunnel,
    /// `svnserve -i` (inetd mode, `svn://` URLs, ANONYMOUS authentication).
    Inetd,
}

/// A failure response: the code and message of the first error of the chain.
pub type WireError = (u64, String);

/// What a streaming command answered: the items before `done`, then the final response.
#[derive(Debug)]
pub struct Answer {
    pub items: Vec<Item>,
    pub response: Result<Vec<Item>, WireError>,
}

/// How an editor drive read by [`SvnserveClient::read_drive`] ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DriveOutcome {
    /// The drive ran to `close-edit` (kept as the last call) and the command succeeded, or
    /// to `finish-replay` (not kept).
    Drive(Vec<Call>),
    /// A failure in place of the drive.
    Refused(u64, String),
    /// The calls before `abort-edit` (or before a failed command after `close-edit`,
    /// `CloseEdit` included), then the failure.
    Aborted(Vec<Call>, u64, String),
    /// svnserve died (it has assertions that some requests trip).
    Crashed,
}

/// One svn:// session with a `svnserve` child, killed when dropped.
pub struct SvnserveClient {
    child: Child,
    stdin: Option<ChildStdin>,
    output: mpsc::Receiver<Vec<u8>>,
    buf: Vec<u8>,
    decoder: Decoder,
    repo_url: String,
}

impl SvnserveClient {
    /// Starts `svnserve` in `mode` on the parent of `repo` and opens a session on the
    /// repository root; panics unless the handshake succeeds.
    pub fn open(mode: Mode, repo: &Path) -> SvnserveClient {
        SvnserveClient::open_at(mode, repo, "")
    }

    /// Like [`open`](Self::open), with the session URL at `relpath` inside the repository.
    pub fn open_at(mode: Mode, repo: &Path, relpath: &str) -> SvnserveClient {
        let root = repo.parent().expect("the repository has a parent");
        let name = repo
            .file_name()
            .expect("the repository has a name")
            .to_string_lossy();
        let (flag, scheme) = match mode {
            Mode::Tunnel => ("-t", "svn+ssh"),
            Mode::Inetd => ("-i", "svn"),
        };
        let mut child = Command::new(require_tool("svnserve"))
            .arg(flag)
            .arg("-r")
            .arg(root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("svnserve starts");
        let stdin = child.stdin.take().expect("stdin is piped");
        let mut stdout = child.stdout.take().expect("stdout is piped");
        // A reader thread, so that a silent svnserve fails the test instead of hanging it;
        // the channel closes when svnserve closes its output (or dies).
        let (tx, output) = mpsc::channel();
        std::thread::spawn(move || {
            let mut chunk = vec![0u8; 1 << 16];
            while let Ok(n) = stdout.read(&mut chunk) {
                if n == 0 || tx.send(chunk[..n].to_vec()).is_err() {
                    break;
                }
            }
        });
        let mut s = SvnserveClient {
            child,
            stdin: Some(stdin),
            output,
            buf: Vec::new(),
            decoder: Decoder::new(Limits {
                max_request: 1 << 30,
                max_decoded: usize::MAX,
                ..Limits::default()
            }),
            repo_url: format!("{scheme}://localhost/{}", uri_encode(&name)),
        };
        let greeting = s.read();
        response(&greeting).expect("greeting");
        let url = s.url(relpath);
        s.send(&Item::list(vec![
            Item::Number(2),
            Item::list(CAPABILITIES.map(Item::word).to_vec()),
            Item::string(url),
            Item::string("svelto-test"),
            Item::empty_list(),
        ]));
        let auth = response(&s.read()).expect("auth request");
        let offered: Vec<&str> = auth
            .first()
            .and_then(Item::as_list)
            .unwrap_or_default()
            .iter()
            .filter_map(Item::as_word)
            .collect();
        let mech = if offered.contains(&"EXTERNAL") {
            "EXTERNAL"
        } else {
            "ANONYMOUS"
        };
        s.send(&Item::list(vec![
            Item::word(mech),
            Item::list(vec![Item::string("")]),
        ]));
        response(&s.read()).unwrap_or_else(|e| panic!("{mech} authentication: {e:?}"));
        response(&s.read()).expect("repos-info");
        s
    }

    /// The URL of the repository root.
    pub fn repo_url(&self) -> &str {
        &self.repo_url
    }

    /// The URL of a relpath in the repository (percent-encoded).
    pub fn url(&self, relpath: &str) -> String {
        if relpath.is_empty() {
            self.repo_url.clone()
        } else {
            format!("{}/{}", self.repo_url, uri_encode(relpath))
        }
    }

    /// Writes items in one write, as the client does (svnserve looks for input during a
    /// drive); false when svnserve is gone.
    pub fn try_send(&mut self, items: &[Item]) -> bool {
        let mut bytes = Vec::new();
        for item in items {
            item.encode(&mut bytes);
        }
        let Some(stdin) = self.stdin.as_mut() else {
            return false;
        };
        stdin.write_all(&bytes).is_ok() && stdin.flush().is_ok()
    }

    /// Writes one item; panics when svnserve is gone.
    pub fn send(&mut self, item: &Item) {
        assert!(
            self.try_send(std::slice::from_ref(item)),
            "svnserve closed its input"
        );
    }

    /// The next item, or `None` when svnserve closed the connection.
    pub fn try_read(&mut self) -> Option<Item> {
        loop {
            match self.decoder.decode(&self.buf) {
                Ok(Some((item, used))) => {
                    self.buf.drain(..used);
                    return Some(item);
                }
                Ok(None) => {}
                Err(e) => panic!("svnserve sent a malformed item: {e}"),
            }
            match self.output.recv_timeout(ANSWER_TIMEOUT) {
                Ok(more) => self.buf.extend_from_slice(&more),
                Err(RecvTimeoutError::Disconnected) => return None,
                Err(RecvTimeoutError::Timeout) => {
                    panic!("svnserve sent nothing for {ANSWER_TIMEOUT:?}")
                }
            }
        }
    }

    /// The next item; panics when svnserve closed the connection.
    pub fn read(&mut self) -> Item {
        self.try_read().expect("svnserve closed the connection")
    }

    /// Reads a response: its result list, or the first error of a failure.
    pub fn response(&mut self) -> Result<Vec<Item>, WireError> {
        response(&self.read())
    }

    /// Sends a command and reads its auth slot (empty when no authentication is needed).
    pub fn send_command(&mut self, name: &str, params: Vec<Item>) -> Result<(), WireError> {
        self.send(&svelto_wire::command(name, params));
        self.response().map(drop)
    }

    /// Sends a command and reads its auth slot, which must be a success.
    pub fn command(&mut self, name: &str, params: Vec<Item>) {
        if let Err(e) = self.send_command(name, params) {
            panic!("{name}: auth slot {e:?}");
        }
    }

    /// Sends a command, reads the auth slot and returns the plain response.
    pub fn call(&mut self, name: &str, params: Vec<Item>) -> Result<Vec<Item>, WireError> {
        self.send_command(name, params)?;
        self.response()
    }

    /// Sends a streaming command: items until `done`, then the response.
    pub fn stream(&mut self, name: &str, params: Vec<Item>) -> Answer {
        if let Err(e) = self.send_command(name, params) {
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
        let response = self.response();
        Answer { items, response }
    }

    /// Reads an editor drive svnserve sends, answering `close-edit` and `abort-edit` as the
    /// client does; it ends at `close-edit` (and the command's response), `abort-edit`,
    /// `finish-replay`, a failure in place of the drive, or the end of the connection.
    pub fn read_drive(&mut self) -> DriveOutcome {
        let mut calls = Vec::new();
        let mut tokens = Tokens::default();
        loop {
            let Some(item) = self.try_read() else {
                return DriveOutcome::Crashed;
            };
            let name = word_at(&item, 0).to_string();
            if name == "failure" {
                let (code, message) = first_error(&item);
                return DriveOutcome::Refused(code, message);
            }
            let p = item
                .as_list()
                .and_then(|l| l.get(1))
                .and_then(Item::as_list)
                .unwrap_or_else(|| panic!("editor command without params: {item:?}"));
            let call = match name.as_str() {
                "target-rev" => Call::TargetRev(num(&p[0])),
                "open-root" => Call::OpenRoot(opt_num(&p[0]), tokens.open(&p[1])),
                "delete-entry" => {
                    Call::DeleteEntry(string(&p[0]), opt_num(&p[1]), tokens.get(&p[2]))
                }
                "add-dir" => {
                    let parent = tokens.get(&p[1]);
                    Call::AddDir(
                        string(&p[0]),
                        parent,
                        tokens.open(&p[2]),
                        copyfrom(p.get(3)),
                    )
                }
                "open-dir" => {
                    let parent = tokens.get(&p[1]);
                    Call::OpenDir(string(&p[0]), parent, tokens.open(&p[2]), opt_num(&p[3]))
                }
                "change-dir-prop" => {
                    Call::ChangeDirProp(tokens.get(&p[0]), bytes(&p[1]), opt_bytes(&p[2]))
                }
                "close-dir" => Call::CloseDir(tokens.get(&p[0])),
                "absent-dir" => Call::AbsentDir(string(&p[0]), tokens.get(&p[1])),
                "add-file" => {
                    let parent = tokens.get(&p[1]);
                    Call::AddFile(
                        string(&p[0]),
                        parent,
                        tokens.open(&p[2]),
                        copyfrom(p.get(3)),
                    )
                }
                "open-file" => {
                    let parent = tokens.get(&p[1]);
                    Call::OpenFile(string(&p[0]), parent, tokens.open(&p[2]), opt_num(&p[3]))
                }
                "apply-textdelta" => Call::ApplyTextdelta(tokens.get(&p[0]), opt_md5(&p[1])),
                "textdelta-chunk" => Call::TextdeltaChunk(tokens.get(&p[0]), bytes(&p[1])),
                "textdelta-end" => Call::TextdeltaEnd(tokens.get(&p[0])),
                "change-file-prop" => {
                    Call::ChangeFileProp(tokens.get(&p[0]), bytes(&p[1]), opt_bytes(&p[2]))
                }
                "close-file" => Call::CloseFile(tokens.get(&p[0]), opt_md5(&p[1])),
                "absent-file" => Call::AbsentFile(string(&p[0]), tokens.get(&p[1])),
                "finish-replay" => return DriveOutcome::Drive(calls),
                "close-edit" => {
                    calls.push(Call::CloseEdit);
                    self.send(&svelto_wire::success(vec![]));
                    return match self.response() {
                        Ok(_) => DriveOutcome::Drive(calls),
                        Err((code, message)) => DriveOutcome::Aborted(calls, code, message),
                    };
                }
                "abort-edit" => {
                    self.send(&svelto_wire::success(vec![]));
                    let (code, message) = first_error(&self.read());
                    return DriveOutcome::Aborted(calls, code, message);
                }
                other => panic!("unexpected editor command {other}: {item:?}"),
            };
            calls.push(call);
        }
    }
}

impl Drop for SvnserveClient {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The drive's tokens (svnserve's strings) mapped to numbers given in order of opening, as
/// `Recorder` numbers its own.
#[derive(Default)]
struct Tokens {
    map: HashMap<Vec<u8>, Token>,
    next: Token,
}

impl Tokens {
    fn open(&mut self, item: &Item) -> Token {
        let id = self.next;
        self.next += 1;
        self.map
            .insert(item.as_string().expect("token").to_vec(), id);
        id
    }

    fn get(&self, item: &Item) -> Token {
        let t = item.as_string().expect("token");
        *self
            .map
            .get(t)
            .unwrap_or_else(|| panic!("unknown token {:?}", String::from_utf8_lossy(t)))
    }
}

/// Whether `item` is `( success ... )`.
pub fn is_success(item: &Item) -> bool {
    word_at(item, 0) == "success"
}

/// The result list of `( success ( ... ) )`, or the first error of a failure.
pub fn response(item: &Item) -> Result<Vec<Item>, WireError> {
    match item.as_list() {
        Some([Item::Word(w), Item::List(results)]) if w == "success" => Ok(results.clone()),
        Some([Item::Word(w)]) if w == "success" => Ok(Vec::new()),
        Some([Item::Word(w), Item::List(_)]) if w == "failure" => Err(first_error(item)),
        _ => panic!("not a response: {item:?}"),
    }
}

/// The word at position `i` of a list ("" when there is none).
pub fn word_at(item: &Item, i: usize) -> &str {
    item.as_list()
        .and_then(|l| l.get(i))
        .and_then(Item::as_word)
        .unwrap_or("")
}

/// The code and message of the first error of `( failure ( ( code message ... ) ... ) )`.
pub fn first_error(item: &Item) -> WireError {
    let err = item
        .as_list()
        .and_then(|l| l.get(1))
        .and_then(Item::as_list)
        .and_then(|l| l.first())
        .and_then(Item::as_list)
        .unwrap_or_else(|| panic!("failure without an error: {item:?}"));
    (
        err[0].as_number().expect("error code"),
        String::from_utf8_lossy(err[1].as_string().expect("error message")).into_owned(),
    )
}

/// A wire proplist `( ( name value ) ... )` as sorted pairs.
pub fn proplist(item: &Item) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out: Vec<(Vec<u8>, Vec<u8>)> = item
        .as_list()
        .expect("proplist")
        .iter()
        .map(|p| {
            let p = p.as_list().expect("prop");
            (bytes(&p[0]), bytes(&p[1]))
        })
        .collect();
    out.sort();
    out
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

fn num(item: &Item) -> u64 {
    item.as_number()
        .unwrap_or_else(|| panic!("not a number: {item:?}"))
}

fn opt(item: &Item) -> Option<&Item> {
    item.as_list()
        .unwrap_or_else(|| panic!("not a tuple: {item:?}"))
        .first()
}

fn opt_num(item: &Item) -> Option<u64> {
    opt(item).map(num)
}

fn bytes(item: &Item) -> Vec<u8> {
    item.as_string()
        .unwrap_or_else(|| panic!("not a string: {item:?}"))
        .to_vec()
}

fn opt_bytes(item: &Item) -> Option<Vec<u8>> {
    opt(item).map(bytes)
}

fn string(item: &Item) -> String {
    String::from_utf8(bytes(item)).expect("UTF-8 path")
}

fn opt_md5(item: &Item) -> Option<Md5> {
    opt(item).map(|h| Md5::from_hex(&string(h)).expect("hex MD5"))
}

fn copyfrom(item: Option<&Item>) -> Option<(String, u64)> {
    match item?.as_list()? {
        [path, rev] => Some((string(path), num(rev))),
        _ => None,
    }
}
