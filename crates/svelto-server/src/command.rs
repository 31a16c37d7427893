//! What a handler implements: a command's typed request (`Command`: decode, run, log
//! action) and what its run answers (`Reply`). The table that names each command with its
//! request type is `cmd.rs`.

use crate::actions::{Ctx, Pending};
use crate::conn::Conn;
use crate::error::{CmdError, CmdResult};
use crate::session::{Needs, Session};
use std::io::{Read, Write};
use svelto_wire::{Item, TupleReader};

/// What a command's run answers: `Some(items)` is sent as `( success ( items ) )`; `None`
/// when the handler sent its own response.
pub type Reply = Option<Vec<Item>>;

/// A command's typed request: decoded once from the parameter tuple, then checked, run and
/// logged from the same value.
pub trait Command: Sized {
    /// Decodes the parameter tuple. A malformed tuple ends the connection (a wire error);
    /// a well-formed one with values svnserve refuses fails in the auth slot's place.
    fn parse(p: &mut TupleReader<'_>) -> CmdResult<Self>;

    /// An error svnserve sends before it checks access, in the auth slot's place.
    fn refuse_before_slot(&self) -> Option<CmdError> {
        None
    }

    /// The client path the authz rules are checked against, for rows with `At::Path` (`cmd.rs`).
    fn authz_path(&self) -> Option<&[u8]> {
        None
    }

    /// The access needed, given the table's (breaking a lock needs no user name).
    fn needs(&self, row: Needs) -> Needs {
        row
    }

    /// Does the work and writes what the command streams; returns the response.
    fn run<R: Read, W: Write>(&self, s: &mut Session, conn: &mut Conn<R, W>) -> CmdResult<Reply>;

    /// svnserve's log action for it (`docs/formats/server-log.md`).
    fn action(&self, ctx: &Ctx<'_>) -> Pending;
}
