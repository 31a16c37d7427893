//! Revision properties (protocol doc 4.2): `rev-proplist` and `rev-prop` (what the user may
//! read), `change-rev-prop` and `change-rev-prop2` (decided by the repository's
//! pre-revprop-change hook).

use crate::actions::{one, Ctx, Pending};
use crate::command::{Command, Reply};
use crate::conn::Conn;
use crate::error::{code, CmdError, CmdResult};
use crate::items::proplist_item;
use crate::session::Session;
use std::io::{Read, Write};
use svelto_core::Revnum;
use svelto_repos::action;
use svelto_wire::{Item, TupleReader};

/// `rev-proplist ( rev:number )`.
pub struct RevProplist {
    rev: Revnum,
}

impl Command for RevProplist {
    fn parse(p: &mut TupleReader<'_>) -> CmdResult<Self> {
        Ok(RevProplist { rev: p.rev()? })
    }

    fn run<R: Read, W: Write>(&self, s: &mut Session, _: &mut Conn<R, W>) -> CmdResult<Reply> {
        let rev = s.ctx.rev_or_head(Some(self.rev))?;
        Ok(Some(vec![proplist_item(&s.ctx.readable_revprops(rev)?)]))
    }

    fn action(&self, _: &Ctx<'_>) -> Pending {
        one(action::rev_proplist(self.rev))
    }
}

/// `rev-prop ( rev:number name:string )`.
pub struct RevProp {
    rev: Revnum,
    name: Vec<u8>,
}

impl Command for RevProp {
    fn parse(p: &mut TupleReader<'_>) -> CmdResult<Self> {
        let rev = p.rev()?;
        let name = p.string()?.to_vec();
        Ok(RevProp { rev, name })
    }

    fn run<R: Read, W: Write>(&self, s: &mut Session, _: &mut Conn<R, W>) -> CmdResult<Reply> {
        let rev = s.ctx.rev_or_head(Some(self.rev))?;
        let props = s.ctx.readable_revprops(rev)?;
        Ok(Some(vec![Item::opt(
            props.get(&self.name).cloned().map(Item::String),
        )]))
    }

    fn action(&self, _: &Ctx<'_>) -> Pending {
        one(action::rev_prop(
            self.rev,
            &String::from_utf8_lossy(&self.name),
        ))
    }
}

/// `change-rev-prop ( rev:number name:string ? value:string )`.
pub struct ChangeRevProp {
    rev: Revnum,
    name: String,
    value: Option<Vec<u8>>,
}

impl Command for ChangeRevProp {
    fn parse(p: &mut TupleReader<'_>) -> CmdResult<Self> {
        let rev = p.rev()?;
        let name = String::from_utf8_lossy(p.string()?).into_owned();
        let value = p.opt_string()?.map(<[u8]>::to_vec);
        Ok(ChangeRevProp { rev, name, value })
    }

    fn run<R: Read, W: Write>(&self, s: &mut Session, _: &mut Conn<R, W>) -> CmdResult<Reply> {
        change(s, self.rev, &self.name, self.value.as_deref(), None)
    }

    fn action(&self, _: &Ctx<'_>) -> Pending {
        change_action(self.rev, &self.name)
    }
}

/// `change-rev-prop2 ( rev:number name:string ( ? value:string ) ( dont-care:bool
/// ? old-value:string ) )`.
pub struct ChangeRevProp2 {
    rev: Revnum,
    name: String,
    value: Option<Vec<u8>>,
    dont_care: bool,
    old: Option<Vec<u8>>,
}

impl Command for ChangeRevProp2 {
    fn parse(p: &mut TupleReader<'_>) -> CmdResult<Self> {
        let rev = p.rev()?;
        let name = String::from_utf8_lossy(p.string()?).into_owned();
        let value = p.tuple()?.opt_string()?.map(<[u8]>::to_vec);
        let mut cond = p.tuple()?;
        let dont_care = cond.bool()?;
        let old = cond.opt_string()?.map(<[u8]>::to_vec);
        Ok(ChangeRevProp2 {
            rev,
            name,
            value,
            dont_care,
            old,
        })
    }

    /// svnserve refuses both `dont-care` and an old value before it checks access.
    fn refuse_before_slot(&self) -> Option<CmdError> {
        (self.dont_care && self.old.is_some()).then(|| {
            CmdError::new(
                code::INCORRECT_PARAMS,
                "'previous-value' and 'dont-care' cannot both be set in 'change-rev-prop2' request",
            )
        })
    }

    fn run<R: Read, W: Write>(&self, s: &mut Session, _: &mut Conn<R, W>) -> CmdResult<Reply> {
        let expected = if self.dont_care {
            None
        } else {
            Some(self.old.as_deref())
        };
        change(s, self.rev, &self.name, self.value.as_deref(), expected)
    }

    fn action(&self, _: &Ctx<'_>) -> Pending {
        change_action(self.rev, &self.name)
    }
}

fn change_action(rev: Revnum, name: &str) -> Pending {
    one(action::change_rev_prop(rev, name))
}

fn change(
    s: &mut Session,
    rev: u64,
    name: &str,
    value: Option<&[u8]>,
    expected: Option<Option<&[u8]>>,
) -> CmdResult<Reply> {
    s.ctx.change_rev_prop(rev, name, value, expected)?;
    Ok(Some(vec![]))
}
