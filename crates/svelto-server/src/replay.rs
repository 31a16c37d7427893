//! replay and replay-range (protocol doc 4.6): what svnsync and svnrdump read.

use crate::actions::{one, Ctx, Pending};
use crate::command::{Command, Reply};
use crate::conn::{Conn, ConnError};
use crate::editor::WireEditor;
use crate::error::{code, CmdError, CmdResult, Failure};
use crate::items::proplist_items;
use crate::session::Session;
use std::io::{Read, Write};
use svelto_core::Revnum;
use svelto_repos::action;
use svelto_repos::replay::ReplayOptions;
use svelto_repos::TextOptions;
use svelto_wire::TupleReader;

fn options(s: &Session, low_water_mark: Revnum, send_deltas: bool) -> ReplayOptions {
    ReplayOptions {
        base_dir: s.path.clone(),
        low_water_mark,
        send_deltas,
        text: TextOptions {
            svndiff_version: s.svndiff_version(),
            accepts: s.svndiff_accepts(),
            send_deltas,
        },
    }
}

/// One revision's drive, ended by `finish-replay`. A failure mid-drive aborts the edit
/// (the client answers) and is returned for the command's response.
fn one_drive<R: Read, W: Write>(
    s: &Session,
    conn: &mut Conn<R, W>,
    rev: Revnum,
    opts: &ReplayOptions,
) -> CmdResult<()> {
    let mut editor = WireEditor::new(conn, s.caps.absent_entries, true);
    let result = s.ctx.replay(rev, opts, &mut editor);
    let broken = editor.broken;
    match result {
        Ok(()) => {
            conn.write_item(&svelto_wire::command("finish-replay", vec![]))?;
            Ok(())
        }
        Err(e) if broken => Err(Failure::Fatal(ConnError::Io(std::io::Error::other(
            e.to_string(),
        )))),
        Err(e) => {
            conn.write_item(&svelto_wire::command("abort-edit", vec![]))?;
            let _ = conn.expect_item()?;
            Err(e.into())
        }
    }
}

/// `replay ( revision:number low-water-mark:number send-deltas:bool )`.
pub struct Replay {
    rev: Revnum,
    low_water_mark: Revnum,
    send_deltas: bool,
}

impl Command for Replay {
    fn parse(p: &mut TupleReader<'_>) -> CmdResult<Self> {
        Ok(Replay {
            rev: p.rev()?,
            low_water_mark: p.rev()?,
            send_deltas: p.bool()?,
        })
    }

    fn run<R: Read, W: Write>(&self, s: &mut Session, conn: &mut Conn<R, W>) -> CmdResult<Reply> {
        let rev = s.ctx.rev_or_head(Some(self.rev))?;
        let opts = options(s, self.low_water_mark, self.send_deltas);
        one_drive(s, conn, rev, &opts)?;
        Ok(Some(vec![]))
    }

    fn action(&self, ctx: &Ctx<'_>) -> Pending {
        one(action::replay(&ctx.fs_path, self.rev))
    }
}

/// `replay-range ( start-rev:number end-rev:number low-water-mark:number
/// send-deltas:bool )`: per revision, its readable properties and its drive.
pub struct ReplayRange {
    start: Revnum,
    end: Revnum,
    low_water_mark: Revnum,
    send_deltas: bool,
}

impl Command for ReplayRange {
    fn parse(p: &mut TupleReader<'_>) -> CmdResult<Self> {
        Ok(ReplayRange {
            start: p.rev()?,
            end: p.rev()?,
            low_water_mark: p.rev()?,
            send_deltas: p.bool()?,
        })
    }

    fn run<R: Read, W: Write>(&self, s: &mut Session, conn: &mut Conn<R, W>) -> CmdResult<Reply> {
        let (start, end) = (self.start, self.end);
        // The whole range is checked before anything is sent or logged: svnserve answers
        // "No such revision N" for the first revision of the range that does not exist
        // (after replaying those that do); an empty range (start after end) is a success.
        if start > end {
            return Ok(Some(vec![]));
        }
        let head = s.ctx.rev_or_head(None)?;
        if end > head {
            let missing = start.max(head + 1);
            return Err(CmdError::new(
                code::FS_NO_SUCH_REVISION,
                format!("No such revision {missing}"),
            )
            .into());
        }
        let mut note = s.note.get();
        note.replayed = Some((start, end));
        s.note.set(note);
        let opts = options(s, self.low_water_mark, self.send_deltas);
        for rev in start..=end {
            let props = s.ctx.readable_revprops(rev)?;
            conn.write_item(&svelto_wire::command("revprops", proplist_items(&props)))?;
            one_drive(s, conn, rev, &opts)?;
        }
        Ok(Some(vec![]))
    }

    /// One line for the range, once it was found valid.
    fn action(&self, ctx: &Ctx<'_>) -> Pending {
        Pending::ReplayRange {
            path: ctx.fs_path.clone(),
        }
    }
}
