//! replay and replay-range (protocol doc 4.6): what svnsync and svnrdump read.

use crate::commands::proplist_items;
use crate::conn::{Conn, ConnError};
use crate::editor::WireEditor;
use crate::error::{code, CmdError, CmdResult, Failure};
use crate::session::Session;
use std::io::{Read, Write};
use svelto_core::Revnum;
use svelto_repos::replay::{replay_authz, ReplayOptions};
use svelto_repos::TextOptions;
use svelto_wire::{Item, TupleReader};

fn options(s: &Session, low_water_mark: Revnum, send_deltas: bool) -> ReplayOptions {
    ReplayOptions {
        base_dir: s.path.clone(),
        low_water_mark,
        send_deltas,
        text: TextOptions {
            svndiff_version: s.svndiff_version(),
            send_deltas,
        },
    }
}

/// One revision's drive, ended by `finish-replay`. A failure mid-drive aborts the edit
/// (the client answers) and is returned for the command's response.
fn one<R: Read, W: Write>(
    s: &Session,
    conn: &mut Conn<R, W>,
    rev: Revnum,
    opts: &ReplayOptions,
) -> CmdResult<()> {
    let check = s.read_check();
    let readable = crate::authz::readable(&check);
    let mut editor = WireEditor::new(conn, s.caps.absent_entries, true);
    let result = replay_authz(&s.repo, rev, opts, readable, &mut editor);
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

pub fn replay<R: Read, W: Write>(
    s: &mut Session,
    conn: &mut Conn<R, W>,
    p: &mut TupleReader<'_>,
) -> CmdResult<Option<Vec<Item>>> {
    let rev = p.rev()?;
    let low_water_mark = p.rev()?;
    let send_deltas = p.bool()?;
    let rev = s.rev_or_head(Some(rev))?;
    let opts = options(s, low_water_mark, send_deltas);
    one(s, conn, rev, &opts)?;
    Ok(Some(vec![]))
}

pub fn replay_range<R: Read, W: Write>(
    s: &mut Session,
    conn: &mut Conn<R, W>,
    p: &mut TupleReader<'_>,
) -> CmdResult<Option<Vec<Item>>> {
    let start = p.rev()?;
    let end = p.rev()?;
    let low_water_mark = p.rev()?;
    let send_deltas = p.bool()?;
    // The whole range is checked before anything is sent or logged: svnserve answers
    // "No such revision N" for the first revision of the range that does not exist (after
    // replaying those that do); an empty range (start after end) is a success.
    if start > end {
        return Ok(Some(vec![]));
    }
    let head = s.rev_or_head(None)?;
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
    let opts = options(s, low_water_mark, send_deltas);
    for rev in start..=end {
        let props = crate::commands::readable_revprops(s, rev)?;
        conn.write_item(&svelto_wire::command("revprops", proplist_items(&props)))?;
        one(s, conn, rev, &opts)?;
    }
    Ok(Some(vec![]))
}
