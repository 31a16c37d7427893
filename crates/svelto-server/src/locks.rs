//! Lock commands (protocol doc 4.5): `lock`, `lock-many`, `unlock`, `unlock-many` (write
//! access and a user name), `get-lock`, `get-locks` (reads).

use crate::conn::Conn;
use crate::error::{code, repos_error, CmdError, CmdResult, Failure};
use crate::session::Session;
use std::io::{Read, Write};
use svelto_core::svn_date_now;
use svelto_repos::locks::{self, Lock, LockTarget, UnlockTarget};
use svelto_repos::{Hooks, ReposError};
use svelto_wire::{failure, success, Item, TupleReader};

fn fail(e: ReposError) -> Failure {
    Failure::Cmd(repos_error(&e))
}

/// A lock as the wire carries it: `( path token owner ( ? comment ) created ( ? expires ) )`.
pub fn lock_item(l: &Lock) -> Item {
    let opt = |v: &Option<String>| {
        Item::list(
            v.iter()
                .map(|x| Item::string(x.as_str()))
                .collect::<Vec<_>>(),
        )
    };
    Item::list(vec![
        Item::string(format!("/{}", l.path)),
        Item::string(l.token.clone()),
        Item::string(l.owner.clone()),
        opt(&l.comment),
        Item::string(l.created.clone()),
        opt(&l.expires),
    ])
}

fn hooks(s: &Session) -> Result<Hooks, Failure> {
    Hooks::new(s.repo.path(), Some(&s.hooks_env)).map_err(fail)
}

fn user(s: &Session) -> Result<String, Failure> {
    s.user
        .clone()
        .ok_or_else(|| CmdError::new(code::RA_NOT_AUTHORIZED, "Authorization failed").into())
}

fn do_lock(
    s: &mut Session,
    comment: Option<String>,
    steal: bool,
    targets: &[LockTarget],
) -> Result<Vec<Result<Lock, ReposError>>, Failure> {
    let user = user(s)?;
    let hooks = hooks(s)?;
    let writer = s.writer.clone();
    locks::lock_many(
        &s.repo,
        &hooks,
        &user,
        comment.as_deref(),
        steal,
        &svn_date_now(),
        targets,
        |f| writer.with(|w| f(w)),
    )
    .map_err(fail)
}

/// `lock ( path:string ( ? comment:string ) steal:bool ( ? current-rev:number ) )`.
pub fn lock<R: Read, W: Write>(
    s: &mut Session,
    _conn: &mut Conn<R, W>,
    p: &mut TupleReader<'_>,
) -> CmdResult<Option<Vec<Item>>> {
    let path = s.full_path(p.string()?)?;
    let comment = p
        .opt_tuple()?
        .and_then(|mut t| t.opt_string().ok().flatten())
        .map(|c| String::from_utf8_lossy(c).into_owned());
    let steal = p.bool()?;
    let current_rev = p.opt_tuple()?.and_then(|mut t| t.opt_rev().ok().flatten());
    let mut results = do_lock(s, comment, steal, &[LockTarget { path, current_rev }])?;
    let l = results
        .pop()
        .expect("one target, one result")
        .map_err(fail)?;
    Ok(Some(vec![lock_item(&l)]))
}

/// `lock-many ( ( ? comment ) steal ( ( path ( ? current-rev ) ) ... ) )`: a result per
/// path in request order, `done`, then the response.
pub fn lock_many<R: Read, W: Write>(
    s: &mut Session,
    conn: &mut Conn<R, W>,
    p: &mut TupleReader<'_>,
) -> CmdResult<Option<Vec<Item>>> {
    let comment = p
        .opt_tuple()?
        .and_then(|mut t| t.opt_string().ok().flatten())
        .map(|c| String::from_utf8_lossy(c).into_owned());
    let steal = p.bool()?;
    let mut targets = Vec::new();
    for item in p.list()? {
        let mut t = TupleReader::from_item(item)?;
        let path = s.full_path(t.string()?)?;
        let current_rev = t.opt_tuple()?.and_then(|mut r| r.opt_rev().ok().flatten());
        targets.push(LockTarget { path, current_rev });
    }
    // Paths the authz rules do not let this user write get "not authorized" in their place.
    let denied: Vec<bool> = targets.iter().map(|t| !s.allowed(&t.path, true)).collect();
    let allowed: Vec<LockTarget> = targets
        .into_iter()
        .zip(&denied)
        .filter(|(_, d)| !**d)
        .map(|(t, _)| t)
        .collect();
    let mut done = do_lock(s, comment, steal, &allowed)?.into_iter();
    let results: Vec<Option<Result<Lock, ReposError>>> = denied
        .iter()
        .map(|d| if *d { None } else { done.next() })
        .collect();
    for r in &results {
        let Some(r) = r else {
            conn.write_item(&failure(&crate::auth::not_authorized().chain))?;
            continue;
        };
        match r {
            Ok(l) => {
                let Item::List(fields) = lock_item(l) else {
                    unreachable!("lock_item is a list")
                };
                conn.write_item(&success(fields))?;
            }
            Err(e) => conn.write_item(&failure(&repos_error(e).chain))?,
        }
    }
    conn.write_item(&Item::word("done"))?;
    Ok(Some(vec![]))
}

fn do_unlock(
    s: &mut Session,
    brk: bool,
    targets: &[UnlockTarget],
) -> Result<Vec<Result<(), ReposError>>, Failure> {
    let hooks = hooks(s)?;
    let writer = s.writer.clone();
    let user = s.user.clone();
    locks::unlock_many(&s.repo, &hooks, user.as_deref(), brk, targets, |f| {
        writer.with(|w| f(w))
    })
    .map_err(fail)
}

/// `unlock ( path:string ( ? token:string ) break:bool )`.
pub fn unlock<R: Read, W: Write>(
    s: &mut Session,
    _conn: &mut Conn<R, W>,
    p: &mut TupleReader<'_>,
) -> CmdResult<Option<Vec<Item>>> {
    let path = s.full_path(p.string()?)?;
    let token = p
        .opt_tuple()?
        .and_then(|mut t| t.opt_string().ok().flatten())
        .map(|c| String::from_utf8_lossy(c).into_owned());
    let brk = p.bool()?;
    let mut results = do_unlock(s, brk, &[UnlockTarget { path, token }])?;
    results
        .pop()
        .expect("one target, one result")
        .map_err(fail)?;
    Ok(Some(vec![]))
}

/// `unlock-many ( break:bool ( ( path ( ? token ) ) ... ) )`.
pub fn unlock_many<R: Read, W: Write>(
    s: &mut Session,
    conn: &mut Conn<R, W>,
    p: &mut TupleReader<'_>,
) -> CmdResult<Option<Vec<Item>>> {
    let brk = p.bool()?;
    let mut targets = Vec::new();
    let mut client_paths = Vec::new();
    for item in p.list()? {
        let mut t = TupleReader::from_item(item)?;
        let raw = t.string()?;
        client_paths.push(raw.to_vec());
        let path = s.full_path(raw)?;
        let token = t
            .opt_tuple()?
            .and_then(|mut r| r.opt_string().ok().flatten())
            .map(|c| String::from_utf8_lossy(c).into_owned());
        targets.push(UnlockTarget { path, token });
    }
    let denied: Vec<bool> = targets.iter().map(|t| !s.allowed(&t.path, true)).collect();
    let allowed: Vec<UnlockTarget> = targets
        .into_iter()
        .zip(&denied)
        .filter(|(_, d)| !**d)
        .map(|(t, _)| t)
        .collect();
    let mut done = do_unlock(s, brk, &allowed)?.into_iter();
    let results: Vec<Option<Result<(), ReposError>>> = denied
        .iter()
        .map(|d| if *d { None } else { done.next() })
        .collect();
    for (r, raw) in results.iter().zip(client_paths) {
        let Some(r) = r else {
            conn.write_item(&failure(&crate::auth::not_authorized().chain))?;
            continue;
        };
        match r {
            Ok(()) => conn.write_item(&success(vec![Item::String(raw)]))?,
            Err(e) => conn.write_item(&failure(&repos_error(e).chain))?,
        }
    }
    conn.write_item(&Item::word("done"))?;
    Ok(Some(vec![]))
}

/// `get-lock ( path )` -> `( [ lockdesc ] )`.
pub fn get_lock<R: Read, W: Write>(
    s: &mut Session,
    _: &mut Conn<R, W>,
    p: &mut TupleReader<'_>,
) -> CmdResult<Option<Vec<Item>>> {
    let path = s.full_path(p.string()?)?;
    let l = locks::get_lock(s.repo.path(), &path).map_err(fail)?;
    Ok(Some(vec![Item::list(
        l.iter().map(lock_item).collect::<Vec<_>>(),
    )]))
}

/// The depth word of `get-locks`, checked before the auth slot (svnserve sends the
/// failure in its place).
pub fn get_locks_depth(p: &TupleReader<'_>) -> Result<Option<usize>, CmdError> {
    let mut t = TupleReader::new(p.rest());
    let _ = t.string();
    let word = t
        .opt_tuple()
        .ok()
        .flatten()
        .and_then(|mut d| d.opt_word().ok().flatten().map(str::to_string));
    match word.as_deref() {
        None | Some("infinity") => Ok(None),
        Some("empty") => Ok(Some(0)),
        Some("files") | Some("immediates") => Ok(Some(1)),
        Some(_) => Err(CmdError::new(
            code::INCORRECT_PARAMS,
            "Invalid 'depth' specified in get-locks request",
        )),
    }
}

/// `get-locks ( path ? ( depth ) )` -> `( ( lockdesc ... ) )`.
pub fn get_locks<R: Read, W: Write>(
    s: &mut Session,
    _: &mut Conn<R, W>,
    p: &mut TupleReader<'_>,
) -> CmdResult<Option<Vec<Item>>> {
    let depth = get_locks_depth(p)?;
    let path = s.full_path(p.string()?)?;
    let ls = locks::get_locks(s.repo.path(), &path, depth).map_err(fail)?;
    // Locks on paths the user cannot read are left out.
    Ok(Some(vec![Item::list(
        ls.iter()
            .filter(|l| s.allowed(&l.path, false))
            .map(lock_item)
            .collect::<Vec<_>>(),
    )]))
}
