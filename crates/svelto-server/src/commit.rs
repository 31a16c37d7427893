//! `commit` (protocol doc 4.9, 5.8): the client drives an editor; each call is checked and
//! recorded by svelto-repos' `CommitTxn`; `close-edit` applies the edit under the
//! repository's writer and answers once the revision is durable.

use crate::actions::{Ctx, Pending};
use crate::budget::Charge;
use crate::command::{Command, Reply};
use crate::conn::Conn;
use crate::error::{code, repos_error, CmdError, CmdResult, Failure};
use crate::session::{empty_slot, Session};
use crate::url::{path_in_repo, uri_decode};
use std::collections::HashMap;
use std::io::{Read, Write};
use svelto_core::{NodeKind, PropList, Revnum};
use svelto_repos::commit::TextDelta;
use svelto_repos::service::{check_new_name, CommitEdit, CommitRequest, WriteRule};
use svelto_wire::{success, Item, TupleReader};

/// `commit ( logmsg:string ? ( ( lock-path:string lock-token:string ) ... )
/// keep-locks:bool ? ( ( name:string value:string ) ... ) )`, then the editor drive.
pub struct Commit {
    /// The revision properties (`svn:log` alone from a client that sends no list).
    revprops: PropList,
    /// (client path, token) of each lock the client holds for the commit.
    lock_tokens: Vec<(Vec<u8>, String)>,
    keep_locks: bool,
}

impl Command for Commit {
    fn parse(p: &mut TupleReader<'_>) -> CmdResult<Self> {
        let log_msg = p.string()?.to_vec();
        let mut revprops = PropList::new();
        if p.is_at_end() {
            // Clients before 1.2: no locks, keep them.
            revprops.insert(b"svn:log".to_vec(), log_msg);
            return Ok(Commit {
                revprops,
                lock_tokens: Vec::new(),
                keep_locks: true,
            });
        }
        let mut lock_tokens = Vec::new();
        for item in p.list()? {
            let mut t = TupleReader::from_item(item)?;
            let path = t.string()?.to_vec();
            let token = String::from_utf8_lossy(t.string()?).into_owned();
            lock_tokens.push((path, token));
        }
        let keep_locks = p.bool()?;
        match p.opt_list()? {
            Some(list) => {
                for item in list {
                    let mut t = TupleReader::from_item(item)?;
                    let name = t.string()?.to_vec();
                    let value = t.string()?.to_vec();
                    revprops.insert(name, value);
                }
            }
            None => {
                revprops.insert(b"svn:log".to_vec(), log_msg);
            }
        }
        Ok(Commit {
            revprops,
            lock_tokens,
            keep_locks,
        })
    }

    fn run<R: Read, W: Write>(&self, s: &mut Session, conn: &mut Conn<R, W>) -> CmdResult<Reply> {
        let mut lock_tokens = Vec::with_capacity(self.lock_tokens.len());
        let mut hook_lock_tokens = Vec::with_capacity(self.lock_tokens.len());
        for (path, token) in &self.lock_tokens {
            // Through a lossy string, as the path came.
            let path = String::from_utf8_lossy(path).into_owned();
            lock_tokens.push((s.full_path(path.as_bytes())?, token.clone()));
            hook_lock_tokens.push((path, token.clone()));
        }
        let req = CommitRequest {
            revprops: self.revprops.clone(),
            lock_tokens,
            hook_lock_tokens,
            keep_locks: self.keep_locks,
            capabilities: if s.caps.mergeinfo { "mergeinfo" } else { "" }.into(),
            write_rule: WriteRule::PathAndParent,
            name_tag: String::new(),
        };
        commit(s, conn, req)
    }

    /// Logged only when it made a revision.
    fn action(&self, _: &Ctx<'_>) -> Pending {
        Pending::Commit
    }
}

struct Dir {
    path: String,
    base_rev: Option<Revnum>,
    copied: bool,
    /// Its properties were checked to be up to date (first property change).
    checked: bool,
}

struct FileState {
    path: String,
    delta: Option<TextDelta>,
}

/// The editor tokens of one drive (client-chosen strings).
#[derive(Default)]
struct Tokens {
    /// `open-root` came.
    opened: bool,
    dirs: HashMap<Vec<u8>, Dir>,
    files: HashMap<Vec<u8>, FileState>,
    /// What the text delta last given a chunk holds (`TextDelta::memory`).
    delta_held: usize,
}

/// What an open token costs (its string, its path, the map's entry), for the budget.
const PER_TOKEN: usize = 256;

impl Tokens {
    /// What the drive holds besides the edit, for the memory budget: its open tokens and
    /// the text delta being applied (the stock client applies one at a time).
    fn memory(&self) -> usize {
        (self.dirs.len() + self.files.len()) * PER_TOKEN + self.delta_held
    }
}

/// How many editor tokens a drive may hold open at once.
const MAX_OPEN_TOKENS: usize = 1 << 20;

/// A token the drive never opened: the client is broken, and the connection ends (as with
/// svnserve).
fn bad_token(t: &[u8]) -> Failure {
    Failure::Fatal(crate::conn::ConnError::Io(std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        format!("unknown editor token '{}'", String::from_utf8_lossy(t)),
    )))
}

/// The drive ended how.
enum End {
    /// close-edit: the edit is complete.
    Close,
    /// abort-edit (answered), or the connection ended.
    Aborted,
}

fn commit<R: Read, W: Write>(
    s: &Session,
    conn: &mut Conn<R, W>,
    req: CommitRequest,
) -> CmdResult<Reply> {
    let mut edit = s.ctx.begin_commit(req)?;
    conn.write_item(&success(vec![]))?;
    let mut tokens = Tokens::default();
    // What the edit holds until it is committed or dropped, against the memory budget.
    let mut charge = conn.new_charge();
    let outcome = drive(s, conn, &mut edit, &mut tokens, &mut charge);
    match outcome {
        Ok(End::Close) => {}
        Ok(End::Aborted) => return Ok(None),
        Err(Failure::Cmd(e)) => {
            conn.write_item(&svelto_wire::failure(&e.chain))?;
            conn.flush()?;
            discard_until_abort(conn)?;
            return Ok(None);
        }
        Err(f) => return Err(f),
    }
    let date = s.ctx.env().svn_date();
    let done = match edit.finish(&date) {
        Ok(done) => {
            s.note_commit(done.rev);
            done
        }
        Err(e) => {
            conn.write_item(&svelto_wire::failure(&repos_error(&e).chain))?;
            conn.flush()?;
            discard_until_abort(conn)?;
            return Ok(None);
        }
    };
    conn.write_item(&success(vec![]))?;
    conn.write_item(&empty_slot())?;
    conn.write_item(&Item::list(vec![
        Item::Number(done.rev),
        Item::list(vec![Item::string(done.date)]),
        Item::list(
            done.author
                .map(Item::string)
                .into_iter()
                .collect::<Vec<_>>(),
        ),
        Item::list(
            done.post_commit_warning
                .map(Item::string)
                .into_iter()
                .collect::<Vec<_>>(),
        ),
    ]))?;
    Ok(None)
}

/// After a failure: the client notices it, sends `abort-edit`, and expects no answer.
/// Commands it sent before noticing are read and dropped.
fn discard_until_abort<R: Read, W: Write>(conn: &mut Conn<R, W>) -> Result<(), Failure> {
    while let Some(item) = conn.read_item()? {
        let mut t = TupleReader::from_item(&item)?;
        let word = t.word()?;
        if word == "abort-edit" || word == "success" {
            break;
        }
    }
    Ok(())
}

fn rev_in(t: &mut TupleReader<'_>) -> Result<Option<Revnum>, Failure> {
    Ok(t.opt_tuple()?.and_then(|mut r| r.opt_rev().ok().flatten()))
}

/// Reads editor commands until `close-edit` or `abort-edit`.
fn drive<R: Read, W: Write>(
    s: &Session,
    conn: &mut Conn<R, W>,
    txn: &mut CommitEdit<&svelto_repos::service::Ctx>,
    tok: &mut Tokens,
    charge: &mut Charge,
) -> Result<End, Failure> {
    loop {
        charge
            .set(txn.memory() + tok.memory())
            .map_err(|e| CmdError::new(code::RA_SVN_REQUEST_SIZE, e.to_string()))?;
        let Some(item) = conn.read_item()? else {
            return Ok(End::Aborted);
        };
        let mut t = TupleReader::from_item(&item)?;
        let cmd = t.word()?.to_string();
        let params = t.list()?;
        let mut p = TupleReader::new(params);
        if tok.dirs.len() + tok.files.len() > MAX_OPEN_TOKENS {
            return Err(CmdError::new(
                code::RA_SVN_MALFORMED_DATA,
                format!("More than {MAX_OPEN_TOKENS} directories and files open in one edit"),
            )
            .into());
        }
        match cmd.as_str() {
            "open-root" => {
                let rev = rev_in(&mut p)?;
                let token = p.string()?.to_vec();
                txn.open_root(rev)?;
                tok.opened = true;
                tok.dirs.insert(
                    token,
                    Dir {
                        path: s.path.clone(),
                        base_rev: rev,
                        copied: false,
                        checked: false,
                    },
                );
            }
            "delete-entry" => {
                let path = s.full_path(p.string()?)?;
                let rev = rev_in(&mut p)?;
                let parent = p.string()?;
                let parent_path = tok
                    .dirs
                    .get(parent)
                    .ok_or_else(|| bad_token(parent))?
                    .path
                    .clone();
                txn.delete(&path, rev, &parent_path)?;
            }
            "add-dir" | "add-file" => {
                let kind = if cmd == "add-dir" {
                    NodeKind::Dir
                } else {
                    NodeKind::File
                };
                let client_path = p.string()?;
                check_new_name(client_path)?;
                let path = s.full_path(client_path)?;
                let parent = p.string()?;
                let child = p.string()?.to_vec();
                let copy = match p.opt_tuple()? {
                    Some(mut c) => match c.opt_string()? {
                        Some(url) => {
                            let url = String::from_utf8_lossy(url).into_owned();
                            let rev = c.opt_rev()?;
                            Some((copy_source(s, &url)?, rev))
                        }
                        None => None,
                    },
                    None => None,
                };
                let parent_dir = tok.dirs.get(parent).ok_or_else(|| bad_token(parent))?;
                let parent_copied = parent_dir.copied;
                let copied = copy.is_some() || parent_copied;
                txn.add(&path, kind, copy, &parent_dir.path, parent_copied)?;
                if kind == NodeKind::Dir {
                    tok.dirs.insert(
                        child,
                        Dir {
                            path,
                            base_rev: None,
                            copied,
                            checked: true,
                        },
                    );
                } else {
                    tok.files.insert(child, FileState { path, delta: None });
                }
            }
            "open-dir" => {
                let client_path = String::from_utf8_lossy(p.string()?).into_owned();
                let path = s.full_path(client_path.as_bytes())?;
                let parent = p.string()?;
                let child = p.string()?.to_vec();
                let rev = rev_in(&mut p)?;
                let copied = tok
                    .dirs
                    .get(parent)
                    .ok_or_else(|| bad_token(parent))?
                    .copied;
                txn.open_dir(&path, &client_path)?;
                tok.dirs.insert(
                    child,
                    Dir {
                        path,
                        base_rev: rev,
                        copied,
                        checked: false,
                    },
                );
            }
            "open-file" => {
                let path = s.full_path(p.string()?)?;
                let parent = p.string()?;
                let child = p.string()?.to_vec();
                let rev = rev_in(&mut p)?;
                if !tok.dirs.contains_key(parent) {
                    return Err(bad_token(parent));
                }
                txn.open_file(&path, rev)?;
                tok.files.insert(child, FileState { path, delta: None });
            }
            "change-dir-prop" => {
                let token = p.string()?;
                let name = p.string()?.to_vec();
                let value = p
                    .opt_tuple()?
                    .and_then(|mut v| v.opt_string().ok().flatten());
                let dir = tok.dirs.get_mut(token).ok_or_else(|| bad_token(token))?;
                if !dir.checked {
                    if let Some(rev) = dir.base_rev {
                        txn.check_dir_current(&dir.path, rev)?;
                    }
                    dir.checked = true;
                }
                let path = dir.path.clone();
                txn.change_prop(&path, &name, value)?;
            }
            "change-file-prop" => {
                let token = p.string()?;
                let name = p.string()?.to_vec();
                let value = p
                    .opt_tuple()?
                    .and_then(|mut v| v.opt_string().ok().flatten());
                let path = tok
                    .files
                    .get(token)
                    .ok_or_else(|| bad_token(token))?
                    .path
                    .clone();
                txn.change_prop(&path, &name, value)?;
            }
            "apply-textdelta" => {
                let token = p.string()?;
                let base = p
                    .opt_tuple()?
                    .and_then(|mut v| v.opt_string().ok().flatten());
                let base = base.map(|b| String::from_utf8_lossy(b).into_owned());
                let f = tok.files.get_mut(token).ok_or_else(|| bad_token(token))?;
                f.delta = Some(txn.start_text(&f.path, base.as_deref())?);
            }
            "textdelta-chunk" => {
                let token = p.string()?;
                let chunk = p.string()?;
                let f = tok.files.get_mut(token).ok_or_else(|| bad_token(token))?;
                let td = f.delta.as_mut().ok_or_else(|| {
                    CmdError::new(
                        code::RA_SVN_MALFORMED_DATA,
                        "textdelta-chunk without apply-textdelta",
                    )
                })?;
                txn.text_chunk(td, chunk)?;
                tok.delta_held = td.memory();
            }
            "textdelta-end" => {
                let token = p.string()?;
                let f = tok.files.get_mut(token).ok_or_else(|| bad_token(token))?;
                let td = f.delta.take().ok_or_else(|| {
                    CmdError::new(
                        code::RA_SVN_MALFORMED_DATA,
                        "textdelta-end without apply-textdelta",
                    )
                })?;
                tok.delta_held = 0;
                txn.end_text(td)?;
            }
            "close-file" => {
                let token = p.string()?.to_vec();
                let md5 = p
                    .opt_tuple()?
                    .and_then(|mut v| v.opt_string().ok().flatten());
                let md5 = md5.map(|b| String::from_utf8_lossy(b).into_owned());
                let f = tok.files.remove(&token).ok_or_else(|| bad_token(&token))?;
                txn.close_file(&f.path, md5.as_deref())?;
            }
            "close-dir" => {
                let token = p.string()?;
                tok.dirs.remove(token).ok_or_else(|| bad_token(token))?;
            }
            "absent-dir" | "absent-file" | "target-rev" => {}
            "close-edit" if tok.opened => return Ok(End::Close),
            "close-edit" => {
                return Err(CmdError::new(
                    code::REPOS_BAD_ARGS,
                    "No valid transaction supplied to close_edit",
                )
                .into())
            }
            "abort-edit" => {
                conn.write_item(&success(vec![]))?;
                return Ok(End::Aborted);
            }
            other => {
                return Err(CmdError::new(
                    code::RA_SVN_UNKNOWN_CMD,
                    format!("Unknown editor command '{other}'"),
                )
                .into())
            }
        }
    }
}

/// A copy source URL as a path in this repository.
fn copy_source(s: &Session, url: &str) -> Result<String, Failure> {
    let decoded = String::from_utf8_lossy(&uri_decode(url)).into_owned();
    path_in_repo(&s.root_url, url).map_err(|_| {
        Failure::Cmd(CmdError::new(
            code::FS_GENERAL,
            format!("Source url '{decoded}' is from different repository"),
        ))
    })
}
