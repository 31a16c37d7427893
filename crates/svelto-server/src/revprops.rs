//! `change-rev-prop` and `change-rev-prop2` (protocol doc 4.2): revision property changes,
//! decided by the repository's pre-revprop-change hook.

use crate::conn::Conn;
use crate::error::{repos_error, CmdResult, Failure};
use crate::session::Session;
use std::io::{Read, Write};
use svelto_repos::revprops::{change_rev_prop, RevpropChange};
use svelto_repos::{Hooks, ReposError};
use svelto_wire::{Item, TupleReader};

/// `change-rev-prop ( rev:number name:string ? value:string )`.
pub fn change_rev_prop_cmd<R: Read, W: Write>(
    s: &mut Session,
    _conn: &mut Conn<R, W>,
    p: &mut TupleReader<'_>,
) -> CmdResult<Option<Vec<Item>>> {
    let rev = p.rev()?;
    let name = String::from_utf8_lossy(p.string()?).into_owned();
    let value = p.opt_string()?;
    change(s, rev, &name, value, None)
}

/// `change-rev-prop2 ( rev:number name:string ( ? value:string ) ( dont-care:bool ?
/// old-value:string ) )`.
pub fn change_rev_prop2_cmd<R: Read, W: Write>(
    s: &mut Session,
    _conn: &mut Conn<R, W>,
    p: &mut TupleReader<'_>,
) -> CmdResult<Option<Vec<Item>>> {
    let rev = p.rev()?;
    let name = String::from_utf8_lossy(p.string()?).into_owned();
    let value = p.tuple()?.opt_string()?;
    let mut cond = p.tuple()?;
    let dont_care = cond.bool()?;
    let old = cond.opt_string()?;
    let expected = if dont_care { None } else { Some(old) };
    change(s, rev, &name, value, expected)
}

fn change(
    s: &mut Session,
    rev: u64,
    name: &str,
    value: Option<&[u8]>,
    expected: Option<Option<&[u8]>>,
) -> CmdResult<Option<Vec<Item>>> {
    let fail = |e: ReposError| Failure::Cmd(repos_error(&e));
    let hooks = Hooks::new(s.repo.path(), Some(&s.hooks_env)).map_err(fail)?;
    let user = s.user.clone();
    let writer = s.writer.clone();
    let check = s.read_check();
    let readable = crate::authz::readable(&check);
    let req = RevpropChange {
        rev,
        name,
        value,
        expected,
        user: user.as_deref(),
        readable,
    };
    change_rev_prop(&s.repo, &hooks, &req, |f| writer.with(|w| f(w))).map_err(fail)?;
    s.forget_rev_info(rev);
    Ok(Some(vec![]))
}

/// svnserve refuses `change-rev-prop2` with both `dont-care` and an old value before it
/// checks access: the failure takes the auth slot's place.
pub fn check_before_slot(name: &str, p: &TupleReader<'_>) -> Option<crate::error::CmdError> {
    if name != "change-rev-prop2" {
        return None;
    }
    let mut t = TupleReader::new(p.rest());
    let _ = t.rev().ok()?;
    let _ = t.string().ok()?;
    let _ = t.tuple().ok()?;
    let mut cond = t.tuple().ok()?;
    let dont_care = cond.bool().ok()?;
    let old = cond.opt_string().ok()?;
    (dont_care && old.is_some()).then(|| {
        crate::error::CmdError::new(
            crate::error::code::INCORRECT_PARAMS,
            "'previous-value' and 'dont-care' cannot both be set in 'change-rev-prop2' request",
        )
    })
}
