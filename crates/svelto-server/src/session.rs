//! A connection's state once the handshake is done: the client's view of the repository
//! (`svelto_repos::service::Ctx`), the session path, the client's capabilities, and the
//! auth slot each command's row asks for.

use crate::actions::RunNote;
use crate::auth::Auth;
use crate::conn::Conn;
use crate::error::{code, CmdError, Failure};
use std::cell::Cell;
use std::io::{Read, Write};
use svelto_core::{join, validate_path, Revnum};
use svelto_repos::conf::Access;
use svelto_repos::service::{Ctx, Where};
use svelto_wire::{success, Item};

/// What the client announced.
#[derive(Debug, Clone, Copy, Default)]
pub struct ClientCaps {
    pub svndiff1: bool,
    pub svndiff2: bool,
    pub absent_entries: bool,
    /// `mergeinfo`: the one client capability svnserve passes to the start-commit hook.
    pub mergeinfo: bool,
}

pub struct Session {
    /// The client's view of the repository: handle, writer, user, authz rules.
    pub ctx: Ctx,
    pub uuid: String,
    /// The repository's root URL as the client spells it.
    pub root_url: String,
    /// The session path (relpath inside the repository).
    pub path: String,
    pub caps: ClientCaps,
    pub(crate) auth: Auth,
    /// The peer is on this machine: send deltas uncompressed.
    pub loopback: bool,
    /// The repository's name as the log gives it (its path under the root, URI-encoded).
    pub repos_name: String,
    /// What the running command's report and commit said, for the log line.
    pub note: Cell<RunNote>,
}

impl Session {
    /// The svndiff version to send: uncompressed to a peer on this machine, else the best
    /// the client accepts.
    pub fn svndiff_version(&self) -> u8 {
        if self.loopback {
            0
        } else {
            self.svndiff_accepts()
        }
    }

    /// The newest svndiff version the client decodes (texts stored in it are sent as
    /// stored, also to a peer on this machine).
    pub fn svndiff_accepts(&self) -> u8 {
        if self.caps.svndiff2 {
            2
        } else if self.caps.svndiff1 {
            1
        } else {
            0
        }
    }

    /// A client path (relative to the session path) as a repository relpath.
    pub fn full_path(&self, p: &[u8]) -> Result<String, CmdError> {
        let s = std::str::from_utf8(p).map_err(|_| {
            CmdError::new(
                code::BAD_FILENAME,
                format!("Path '{}' is not UTF-8", String::from_utf8_lossy(p)),
            )
        })?;
        validate_path(&join(&self.path, s.trim_matches('/')))
            .map_err(|e| CmdError::new(code::BAD_FILENAME, format!("Invalid path: {e}")))
    }
}

impl Session {
    /// For the log: a report entry (`set-path` when `set`, else `link-path`).
    pub fn note_report_entry(&self, path: &str, rev: Option<Revnum>, start_empty: bool, set: bool) {
        let mut n = self.note.get();
        n.report_entry(path, rev, start_empty, set);
        self.note.set(n);
    }

    /// For the log and the metrics: the command committed revision `rev`.
    pub fn note_commit(&self, rev: Revnum) {
        let mut n = self.note.get();
        n.committed = Some(rev);
        self.note.set(n);
    }

    /// Sends the auth slot for a command that needs `needs`: empty when the session has
    /// it, else the exchange that gets it; fails (in the slot's place) when it cannot.
    pub fn authorize<R: Read, W: Write>(
        &mut self,
        conn: &mut Conn<R, W>,
        needs: Needs,
        at: Where,
    ) -> Result<(), Failure> {
        let (required, needs_user) = match needs {
            Needs::Read => (Access::Read, false),
            Needs::Write => (Access::Write, false),
            Needs::WriteAsUser => (Access::Write, true),
        };
        // svnserve's lookup_access: blanket access, the authz rules for the path, a user name.
        let enough = |s: &Session| {
            s.auth.current(s.ctx.user()) >= required
                && (!needs_user || s.ctx.user().is_some())
                && s.ctx.allows(&at, required == Access::Write)
        };
        if enough(self) {
            conn.write_item(&empty_slot())?;
            return Ok(());
        }
        // A user name is what could bring more: ask for one (no ANONYMOUS), as svnserve's
        // must_have_access does; the exchange's final answer stands in for the slot.
        if self.ctx.user().is_none() && self.auth.can_authenticate_for(required) {
            let mut user = None;
            self.auth.request(conn, &mut user, required, true)?;
            if user.is_some() {
                self.ctx = self.ctx.with_user(user);
            }
        }
        if enough(self) {
            Ok(())
        } else {
            Err(crate::auth::not_authorized().into())
        }
    }
}

/// What a command needs from the session's user before it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Needs {
    Read,
    Write,
    /// Write, by a named user (locks belong to someone).
    WriteAsUser,
}

/// The auth slot before a command's response when nothing more is needed.
pub fn empty_slot() -> Item {
    success(vec![Item::empty_list(), Item::string("")])
}
