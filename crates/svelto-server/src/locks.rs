//! Lock commands (protocol doc 4.5): `lock`, `lock-many`, `unlock`, `unlock-many` (write
//! access and a user name), `get-lock`, `get-locks` (reads).

use crate::actions::{full_paths, one, Ctx, Pending};
use crate::command::{Command, Reply};
use crate::conn::Conn;
use crate::error::{code, repos_error, CmdError, CmdResult, Failure};
use crate::session::Needs;
use crate::session::Session;
use std::io::{Read, Write};
use svelto_core::Revnum;
use svelto_repos::action;
use svelto_repos::locks::{Lock, LockTarget, UnlockTarget};
use svelto_wire::{failure, success, Item, TupleReader};

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

/// An optional string in its own tuple (`( ? comment )`, `( ? token )`), read leniently.
fn opt_string_in_tuple(p: &mut TupleReader<'_>) -> CmdResult<Option<String>> {
    Ok(p.opt_tuple()?
        .and_then(|mut t| t.opt_string().ok().flatten())
        .map(|c| String::from_utf8_lossy(c).into_owned()))
}

/// `( ? rev )`, read leniently.
fn opt_rev_in_tuple(p: &mut TupleReader<'_>) -> CmdResult<Option<Revnum>> {
    Ok(p.opt_tuple()?.and_then(|mut t| t.opt_rev().ok().flatten()))
}

/// `lock ( path:string ( ? comment:string ) steal:bool ( ? current-rev:number ) )`.
pub struct LockOne {
    path: Vec<u8>,
    comment: Option<String>,
    steal: bool,
    current_rev: Option<Revnum>,
}

impl Command for LockOne {
    fn parse(p: &mut TupleReader<'_>) -> CmdResult<Self> {
        Ok(LockOne {
            path: p.string()?.to_vec(),
            comment: opt_string_in_tuple(p)?,
            steal: p.bool()?,
            current_rev: opt_rev_in_tuple(p)?,
        })
    }

    fn authz_path(&self) -> Option<&[u8]> {
        Some(&self.path)
    }

    fn run<R: Read, W: Write>(&self, s: &mut Session, _: &mut Conn<R, W>) -> CmdResult<Reply> {
        let path = s.full_path(&self.path)?;
        let target = LockTarget {
            path,
            current_rev: self.current_rev,
        };
        let l = s
            .ctx
            .lock_many(
                self.comment.as_deref(),
                self.steal,
                &s.ctx.env().svn_date(),
                vec![target],
            )?
            .single()?;
        Ok(Some(vec![lock_item(&l)]))
    }

    fn action(&self, ctx: &Ctx<'_>) -> Pending {
        one(action::lock(&[ctx.full(&self.path)], self.steal))
    }
}

/// `lock-many ( ( ? comment ) steal ( ( path ( ? current-rev ) ) ... ) )`: a result per
/// path in request order, `done`, then the response.
pub struct LockMany {
    comment: Option<String>,
    steal: bool,
    targets: Vec<(Vec<u8>, Option<Revnum>)>,
}

impl Command for LockMany {
    fn parse(p: &mut TupleReader<'_>) -> CmdResult<Self> {
        let comment = opt_string_in_tuple(p)?;
        let steal = p.bool()?;
        let mut targets = Vec::new();
        for item in p.list()? {
            let mut t = TupleReader::from_item(item)?;
            let path = t.string()?.to_vec();
            targets.push((path, opt_rev_in_tuple(&mut t)?));
        }
        Ok(LockMany {
            comment,
            steal,
            targets,
        })
    }

    fn run<R: Read, W: Write>(&self, s: &mut Session, conn: &mut Conn<R, W>) -> CmdResult<Reply> {
        lock_many(s, conn, self)
    }

    fn action(&self, ctx: &Ctx<'_>) -> Pending {
        let paths = full_paths(self.targets.iter().map(|(p, _)| p.as_slice()), ctx);
        one(action::lock(&paths, self.steal))
    }
}

fn lock_many<R: Read, W: Write>(
    s: &mut Session,
    conn: &mut Conn<R, W>,
    req: &LockMany,
) -> CmdResult<Reply> {
    let mut targets = Vec::new();
    for (raw, current_rev) in &req.targets {
        let path = match s.full_path(raw) {
            Ok(path) => path,
            Err(e) => return whole_batch_failed(conn, e.into()),
        };
        targets.push(LockTarget {
            path,
            current_rev: *current_rev,
        });
    }
    let date = s.ctx.env().svn_date();
    let many = match s
        .ctx
        .lock_many(req.comment.as_deref(), req.steal, &date, targets)
    {
        Ok(many) => many,
        Err(e) => return whole_batch_failed(conn, e.into()),
    };
    for r in &many.results {
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
    after_done(conn, many.post_hook_failure)
}

/// `unlock ( path:string ( ? token:string ) break:bool )`.
pub struct UnlockOne {
    path: Vec<u8>,
    token: Option<String>,
    brk: bool,
}

impl Command for UnlockOne {
    fn parse(p: &mut TupleReader<'_>) -> CmdResult<Self> {
        Ok(UnlockOne {
            path: p.string()?.to_vec(),
            token: opt_string_in_tuple(p)?,
            brk: p.bool()?,
        })
    }

    fn authz_path(&self) -> Option<&[u8]> {
        Some(&self.path)
    }

    /// Breaking someone's lock needs write access, not a user name.
    fn needs(&self, row: Needs) -> Needs {
        if self.brk {
            Needs::Write
        } else {
            row
        }
    }

    fn run<R: Read, W: Write>(&self, s: &mut Session, _: &mut Conn<R, W>) -> CmdResult<Reply> {
        let path = s.full_path(&self.path)?;
        let target = UnlockTarget {
            path,
            token: self.token.clone(),
        };
        s.ctx.unlock_many(self.brk, vec![target])?.single()?;
        Ok(Some(vec![]))
    }

    fn action(&self, ctx: &Ctx<'_>) -> Pending {
        one(action::unlock(&[ctx.full(&self.path)], self.brk))
    }
}

/// `unlock-many ( break:bool ( ( path ( ? token ) ) ... ) )`.
pub struct UnlockMany {
    brk: bool,
    targets: Vec<(Vec<u8>, Option<String>)>,
}

impl Command for UnlockMany {
    fn parse(p: &mut TupleReader<'_>) -> CmdResult<Self> {
        let brk = p.bool()?;
        let mut targets = Vec::new();
        for item in p.list()? {
            let mut t = TupleReader::from_item(item)?;
            let path = t.string()?.to_vec();
            targets.push((path, opt_string_in_tuple(&mut t)?));
        }
        Ok(UnlockMany { brk, targets })
    }

    /// Breaking locks needs write access, not a user name.
    fn needs(&self, row: Needs) -> Needs {
        if self.brk {
            Needs::Write
        } else {
            row
        }
    }

    fn run<R: Read, W: Write>(&self, s: &mut Session, conn: &mut Conn<R, W>) -> CmdResult<Reply> {
        unlock_many(s, conn, self)
    }

    fn action(&self, ctx: &Ctx<'_>) -> Pending {
        let paths = full_paths(self.targets.iter().map(|(p, _)| p.as_slice()), ctx);
        one(action::unlock(&paths, self.brk))
    }
}

/// `done`, then the response: a failure when the post hook failed (svnserve's
/// `SVN_CMD_ERR` after `done`; the client reports it and exits 1), else success.
fn after_done<R: Read, W: Write>(
    conn: &mut Conn<R, W>,
    post_hook_failure: Option<svelto_repos::ReposError>,
) -> CmdResult<Reply> {
    conn.write_item(&Item::word("done"))?;
    match post_hook_failure {
        Some(e) => Err(e.into()),
        None => Ok(Some(vec![])),
    }
}

/// A `lock-many` or `unlock-many` that failed as a whole before any path's result was
/// sent (e.g. the cluster's etcd without a majority): `done` at once, then the failure as
/// the command's response (svnserve's `SVN_CMD_ERR` after `done`; the client ends its
/// per-path results early at `done` and reports the failure). The failure alone would be
/// read as the first path's result, the client then waiting for the others' forever.
fn whole_batch_failed<R: Read, W: Write>(
    conn: &mut Conn<R, W>,
    failure: Failure,
) -> CmdResult<Reply> {
    if let Failure::Cmd(_) = failure {
        conn.write_item(&Item::word("done"))?;
    }
    Err(failure)
}

fn unlock_many<R: Read, W: Write>(
    s: &mut Session,
    conn: &mut Conn<R, W>,
    req: &UnlockMany,
) -> CmdResult<Reply> {
    let mut targets = Vec::new();
    for (raw, token) in &req.targets {
        let path = match s.full_path(raw) {
            Ok(path) => path,
            Err(e) => return whole_batch_failed(conn, e.into()),
        };
        targets.push(UnlockTarget {
            path,
            token: token.clone(),
        });
    }
    let many = match s.ctx.unlock_many(req.brk, targets) {
        Ok(many) => many,
        Err(e) => return whole_batch_failed(conn, e.into()),
    };
    for (r, (raw, _)) in many.results.iter().zip(&req.targets) {
        match r {
            Ok(()) => conn.write_item(&success(vec![Item::String(raw.clone())]))?,
            Err(e) => conn.write_item(&failure(&repos_error(e).chain))?,
        }
    }
    after_done(conn, many.post_hook_failure)
}

/// `get-lock ( path:string )` -> `( [ lockdesc ] )`.
pub struct GetLock {
    path: Vec<u8>,
}

impl Command for GetLock {
    fn parse(p: &mut TupleReader<'_>) -> CmdResult<Self> {
        Ok(GetLock {
            path: p.string()?.to_vec(),
        })
    }

    fn authz_path(&self) -> Option<&[u8]> {
        Some(&self.path)
    }

    fn run<R: Read, W: Write>(&self, s: &mut Session, _: &mut Conn<R, W>) -> CmdResult<Reply> {
        let path = s.full_path(&self.path)?;
        let l = s.ctx.get_lock(&path)?;
        Ok(Some(vec![Item::list(
            l.iter().map(lock_item).collect::<Vec<_>>(),
        )]))
    }

    fn action(&self, ctx: &Ctx<'_>) -> Pending {
        one(action::get_lock(&ctx.full(&self.path)))
    }
}

/// `get-locks ( path:string ? ( ? depth:word ) )` -> `( ( lockdesc ... ) )`.
pub struct GetLocks {
    path: Vec<u8>,
    depth: Option<String>,
}

impl GetLocks {
    /// How deep below the path, in levels (None: all the way).
    fn levels(&self) -> Result<Option<usize>, CmdError> {
        match self.depth.as_deref() {
            None | Some("infinity") => Ok(None),
            Some("empty") => Ok(Some(0)),
            Some("files") | Some("immediates") => Ok(Some(1)),
            Some(_) => Err(CmdError::new(
                code::INCORRECT_PARAMS,
                "Invalid 'depth' specified in get-locks request",
            )),
        }
    }
}

impl Command for GetLocks {
    fn parse(p: &mut TupleReader<'_>) -> CmdResult<Self> {
        let path = p.string()?.to_vec();
        let depth = p
            .opt_tuple()
            .ok()
            .flatten()
            .and_then(|mut d| d.opt_word().ok().flatten().map(str::to_string));
        Ok(GetLocks { path, depth })
    }

    /// svnserve checks the depth before access: the failure takes the slot's place.
    fn refuse_before_slot(&self) -> Option<CmdError> {
        self.levels().err()
    }

    fn run<R: Read, W: Write>(&self, s: &mut Session, _: &mut Conn<R, W>) -> CmdResult<Reply> {
        let depth = self.levels()?;
        let path = s.full_path(&self.path)?;
        let ls = s.ctx.get_locks(&path, depth)?;
        Ok(Some(vec![Item::list(
            ls.iter().map(lock_item).collect::<Vec<_>>(),
        )]))
    }

    fn action(&self, ctx: &Ctx<'_>) -> Pending {
        one(action::get_locks(&ctx.full(&self.path)))
    }
}
