//! `commit` (protocol doc 4.9, 5.8): the client drives an editor; each call is checked and
//! recorded by svelto-repos' `CommitTxn`; `close-edit` applies the edit under the
//! repository's writer and answers once the revision is durable.

use crate::actions::{Ctx, Pending};
use crate::cmd::{Command, Reply};
use crate::conn::Conn;
use crate::error::{code, repos_error, CmdError, CmdResult, Failure};
use crate::session::{empty_slot, Session};
use crate::url::{path_in_repo, uri_decode};
use std::collections::HashMap;
use std::io::{Read, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use svelto_core::{svn_date_now, NodeKind, PropList, Revnum};
use svelto_repos::commit::TextDelta;
use svelto_repos::locks::UnlockTarget;
use svelto_repos::{CommitTxn, Hooks, ReposError};
use svelto_wire::{success, Item, TupleReader};

/// Transaction names: the base revision and a number unique in this server's life.
static TXN_SEQ: AtomicU64 = AtomicU64::new(1);

fn txn_name(base: Revnum) -> String {
    let mut n = TXN_SEQ.fetch_add(1, Ordering::Relaxed);
    // Base 36, as FSFS names its transactions.
    let mut digits = Vec::new();
    loop {
        digits.push(b"0123456789abcdefghijklmnopqrstuvwxyz"[(n % 36) as usize]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    digits.reverse();
    format!("{base}-{}", String::from_utf8_lossy(&digits))
}

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
        let params = Params {
            revprops: self.revprops.clone(),
            lock_tokens,
            hook_lock_tokens,
            keep_locks: self.keep_locks,
        };
        commit(s, conn, params)
    }

    /// Logged only when it made a revision.
    fn action(&self, _: &Ctx<'_>) -> Pending {
        Pending::Commit
    }
}

/// What the client asked for besides the edit, its paths resolved.
struct Params {
    revprops: PropList,
    /// The lock tokens with the repository paths they name.
    lock_tokens: Vec<(String, String)>,
    /// The same tokens with the paths as the client sent them (relative to the session
    /// URL): what svnserve hands the pre-commit hook.
    hook_lock_tokens: Vec<(String, String)>,
    keep_locks: bool,
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
struct Tokens<'h> {
    /// The repository's hooks (start-commit runs at `open-root`).
    hooks: Option<&'h Hooks>,
    /// `open-root` came.
    opened: bool,
    dirs: HashMap<Vec<u8>, Dir>,
    files: HashMap<Vec<u8>, FileState>,
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

fn err(e: ReposError) -> Failure {
    Failure::Cmd(repos_error(&e))
}

/// The drive ended how.
enum End {
    /// close-edit: the edit is complete.
    Close,
    /// abort-edit (answered), or the connection ended.
    Aborted,
}

fn commit<R: Read, W: Write>(
    s: &mut Session,
    conn: &mut Conn<R, W>,
    params: Params,
) -> CmdResult<Reply> {
    // svnserve checks write access on each path whose lock token the client hands over,
    // before the commit starts (SVN_ERR_RA_NOT_AUTHORIZED, no message).
    if params
        .lock_tokens
        .iter()
        .any(|(path, _)| !s.allowed(path, true))
    {
        return Err(CmdError::new(code::RA_NOT_AUTHORIZED, "").into());
    }
    let mut revprops = params.revprops;
    // The author is who authenticated; a client cannot claim another name.
    revprops.remove(&b"svn:author"[..]);
    if let Some(u) = &s.user {
        revprops.insert(b"svn:author".to_vec(), u.as_bytes().to_vec());
    }
    let base = s.repo.refresh()?;
    let name = txn_name(base);
    let mut txn = CommitTxn::begin(&s.repo, &name, revprops).map_err(err)?;
    let hooks = Hooks::new(s.repo.path(), Some(&s.hooks_env)).map_err(err)?;
    conn.write_item(&success(vec![]))?;
    let mut tokens = Tokens {
        hooks: Some(&hooks),
        ..Tokens::default()
    };
    let outcome = drive(s, conn, &mut txn, &mut tokens);
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
    drop(tokens);
    let date = svn_date_now();
    let changed = txn.changed_paths();
    let user = s.user.clone();
    let repo_path = s.repo.path().to_path_buf();
    let committed = s.writer.with(|w| -> Result<Revnum, ReposError> {
        // Under the writer: no lock can be taken or broken between this check and the
        // commit.
        svelto_repos::locks::check_commit(
            &repo_path,
            &changed,
            user.as_deref(),
            &params.lock_tokens,
        )?;
        let prepared = txn.prepare(w, &date)?;
        if let Err(e) = hooks.pre_commit(prepared.name(), &params.hook_lock_tokens) {
            prepared.abort()?;
            return Err(e);
        }
        prepared.publish()
    });
    let rev = match committed {
        Ok(rev) => {
            s.note_commit(rev);
            rev
        }
        Err(e) => {
            conn.write_item(&svelto_wire::failure(&repos_error(&e).chain))?;
            conn.flush()?;
            discard_until_abort(conn)?;
            return Ok(None);
        }
    };
    s.repo.refresh()?;
    let warning = hooks.post_commit(rev, &name);
    if !params.keep_locks && !params.lock_tokens.is_empty() {
        // The client gave up these locks with the commit (errors are not reported).
        let targets: Vec<UnlockTarget> = params
            .lock_tokens
            .iter()
            .map(|(path, token)| UnlockTarget {
                path: path.clone(),
                token: Some(token.clone()),
            })
            .collect();
        let writer = s.writer.clone();
        let _ = svelto_repos::locks::unlock_many(
            &s.repo,
            &hooks,
            s.user.as_deref(),
            false,
            &targets,
            |f| writer.with(|w| f(w)),
        );
    }
    conn.write_item(&success(vec![]))?;
    conn.write_item(&empty_slot())?;
    let author = s.user.clone();
    conn.write_item(&Item::list(vec![
        Item::Number(rev),
        Item::list(vec![Item::string(date)]),
        Item::list(author.map(Item::string).into_iter().collect::<Vec<_>>()),
        Item::list(warning.map(Item::string).into_iter().collect::<Vec<_>>()),
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
    txn: &mut CommitTxn,
    tok: &mut Tokens<'_>,
) -> Result<End, Failure> {
    loop {
        let Some(item) = conn.read_item()? else {
            return Ok(End::Aborted);
        };
        let mut t = TupleReader::from_item(&item)?;
        let cmd = t.word()?.to_string();
        let params = t.list()?;
        let mut p = TupleReader::new(params);
        if tok.dirs.len() + tok.files.len() > MAX_OPEN_TOKENS {
            return Err(CmdError::new(
                code::MALFORMED_DATA,
                format!("More than {MAX_OPEN_TOKENS} directories and files open in one edit"),
            )
            .into());
        }
        match cmd.as_str() {
            "open-root" => {
                let rev = rev_in(&mut p)?;
                let token = p.string()?.to_vec();
                txn.open_root(rev).map_err(err)?;
                if let Some(h) = tok.hooks {
                    let caps = if s.caps.mergeinfo { "mergeinfo" } else { "" };
                    h.start_commit(s.user.as_deref(), caps, txn.name())
                        .map_err(err)?;
                }
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
                if s.authz.is_some() {
                    // Deleting needs (recursive, for a directory) write access to the path
                    // and write access to its parent.
                    let is_dir = txn
                        .lookup(&path)
                        .map_err(err)?
                        .is_some_and(|seen| seen.kind == NodeKind::Dir);
                    s.require(&path, true, is_dir)?;
                    s.require(&parent_path, true, false)?;
                }
                txn.delete(&path, rev).map_err(err)?;
            }
            "add-dir" | "add-file" => {
                let kind = if cmd == "add-dir" {
                    NodeKind::Dir
                } else {
                    NodeKind::File
                };
                let client_path = p.string()?;
                check_control_chars(client_path)?;
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
                if s.authz.is_some() {
                    // Adding needs write access to the path (recursive for a copied
                    // directory) and to its parent; a copy needs read access to its source.
                    let is_dir = kind == NodeKind::Dir;
                    s.require(&path, true, copy.is_some() && is_dir)?;
                    s.require(&parent_dir.path, true, false)?;
                    if let Some((from, Some(_))) = &copy {
                        s.require(from, false, is_dir)?;
                    }
                }
                let copy = match copy {
                    Some((from, Some(rev))) => Some((from, rev)),
                    Some((_, None)) => {
                        return Err(CmdError::new(
                            code::FS_GENERAL,
                            format!("Got source path but no source revision for '/{path}'"),
                        )
                        .into())
                    }
                    None => None,
                };
                let copied = copy.is_some() || parent_copied;
                txn.add(&path, kind, copy, parent_copied).map_err(err)?;
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
                txn.open_dir(&path, &client_path).map_err(err)?;
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
                s.require(&path, false, false)?;
                txn.open_file(&path, rev).map_err(err)?;
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
                        txn.check_dir_current(&dir.path, rev).map_err(err)?;
                    }
                    dir.checked = true;
                }
                let path = dir.path.clone();
                s.require(&path, true, false)?;
                txn.change_prop(&path, &name, value).map_err(err)?;
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
                s.require(&path, true, false)?;
                txn.change_prop(&path, &name, value).map_err(err)?;
            }
            "apply-textdelta" => {
                let token = p.string()?;
                let base = p
                    .opt_tuple()?
                    .and_then(|mut v| v.opt_string().ok().flatten());
                let base = base.map(|b| String::from_utf8_lossy(b).into_owned());
                let f = tok.files.get_mut(token).ok_or_else(|| bad_token(token))?;
                s.require(&f.path, true, false)?;
                f.delta = Some(txn.start_text(&f.path, base.as_deref()).map_err(err)?);
            }
            "textdelta-chunk" => {
                let token = p.string()?;
                let chunk = p.string()?;
                let f = tok.files.get_mut(token).ok_or_else(|| bad_token(token))?;
                let td = f.delta.as_mut().ok_or_else(|| {
                    CmdError::new(
                        code::MALFORMED_DATA,
                        "textdelta-chunk without apply-textdelta",
                    )
                })?;
                txn.text_chunk(td, chunk).map_err(err)?;
            }
            "textdelta-end" => {
                let token = p.string()?;
                let f = tok.files.get_mut(token).ok_or_else(|| bad_token(token))?;
                let td = f.delta.take().ok_or_else(|| {
                    CmdError::new(
                        code::MALFORMED_DATA,
                        "textdelta-end without apply-textdelta",
                    )
                })?;
                txn.end_text(td).map_err(err)?;
            }
            "close-file" => {
                let token = p.string()?.to_vec();
                let md5 = p
                    .opt_tuple()?
                    .and_then(|mut v| v.opt_string().ok().flatten());
                let md5 = md5.map(|b| String::from_utf8_lossy(b).into_owned());
                let f = tok.files.remove(&token).ok_or_else(|| bad_token(&token))?;
                txn.close_file(&f.path, md5.as_deref()).map_err(err)?;
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
                    code::UNKNOWN_CMD,
                    format!("Unknown editor command '{other}'"),
                )
                .into())
            }
        }
    }
}

/// Subversion refuses new names with control characters (`svn_path_check_valid`), quoting
/// the path with those characters as octal escapes.
fn check_control_chars(path: &[u8]) -> Result<(), Failure> {
    let Some(&c) = path.iter().find(|b| b.is_ascii_control()) else {
        return Ok(());
    };
    let mut shown = String::new();
    for &b in path {
        if b.is_ascii_control() {
            shown.push_str(&format!("\\{b:03o}"));
        } else {
            shown.push(b as char);
        }
    }
    Err(CmdError::new(
        code::FS_PATH_SYNTAX,
        format!("Invalid control character '0x{c:02x}' in path '{shown}'"),
    )
    .into())
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
