//! update, switch, status and diff (protocol doc 4.7, 5): read the client's report, then
//! drive its working copy to the target with the wire editor.

use crate::actions::{self, one, Ctx, Pending};
use crate::budget::Charge;
use crate::command::{Command, Reply};
use crate::conn::Conn;
use crate::editor::WireEditor;
use crate::error::{code, CmdError, CmdResult, Failure};
use crate::session::{empty_slot, Session};
use crate::url::path_in_repo;
use std::io::{Read, Write};
use svelto_core::{validate_path, Depth, Revnum};
use svelto_repos::action;
use svelto_repos::report::{Report, ReportOptions};
use svelto_repos::TextOptions;
use svelto_wire::{failure, Response, TupleReader};

/// The depth word of a command, or what `recurse` means when it is missing.
fn command_depth(word: Option<&str>, recurse: bool, not_recursive: Depth) -> CmdResult<Depth> {
    match word {
        None => Ok(if recurse {
            Depth::Infinity
        } else {
            not_recursive
        }),
        Some(w) => Depth::from_word(w).ok_or_else(|| {
            CmdError::new(code::REPOS_BAD_ARGS, format!("Unknown depth '{w}'")).into()
        }),
    }
}

fn target_name(raw: &[u8]) -> Result<String, Failure> {
    let t = std::str::from_utf8(raw)
        .map_err(|_| CmdError::new(code::BAD_FILENAME, "Update target is not UTF-8"))?;
    validate_path(t).map_err(|e| {
        CmdError::new(code::BAD_FILENAME, format!("Invalid update target: {e}")).into()
    })
}

/// What a report command asked for, before the report itself.
struct Drive {
    target: Result<String, Failure>,
    rev: Option<Revnum>,
    /// switch and diff: the URL the working copy is compared with.
    other_url: Option<String>,
    depth: Depth,
    send_copyfrom_args: bool,
    ignore_ancestry: bool,
    send_deltas: bool,
}

impl Drive {
    fn options(self, s: &Session) -> CmdResult<ReportOptions> {
        let switch_path = match &self.other_url {
            Some(url) => Some(path_in_repo(&s.root_url, url)?),
            None => None,
        };
        Ok(ReportOptions {
            anchor: s.path.clone(),
            target: self.target?,
            target_rev: s.ctx.rev_or_head(self.rev)?,
            switch_path,
            depth: self.depth,
            send_copyfrom_args: self.send_copyfrom_args,
            ignore_ancestry: self.ignore_ancestry,
            text: TextOptions {
                svndiff_version: s.svndiff_version(),
                accepts: s.svndiff_accepts(),
                send_deltas: self.send_deltas,
            },
        })
    }
}

/// `update ( [ rev:number ] target:string recurse:bool ? depth:word
/// send-copyfrom-args:bool ? ignore-ancestry:bool )`, then the report.
pub struct Update {
    rev: Option<Revnum>,
    target: Vec<u8>,
    recurse: bool,
    depth: Option<String>,
    send_copyfrom_args: Option<bool>,
    ignore_ancestry: Option<bool>,
}

impl Command for Update {
    fn parse(p: &mut TupleReader<'_>) -> CmdResult<Self> {
        Ok(Update {
            rev: p.bracket_rev()?,
            target: p.string()?.to_vec(),
            recurse: p.bool()?,
            depth: p.opt_word()?.map(str::to_string),
            send_copyfrom_args: p.opt_bool()?,
            ignore_ancestry: p.opt_bool()?,
        })
    }

    fn authz_path(&self) -> Option<&[u8]> {
        Some(&self.target)
    }

    fn run<R: Read, W: Write>(&self, s: &mut Session, conn: &mut Conn<R, W>) -> CmdResult<Reply> {
        let depth = command_depth(self.depth.as_deref(), self.recurse, Depth::Files)?;
        let req = Drive {
            target: target_name(&self.target),
            rev: self.rev,
            other_url: None,
            depth,
            send_copyfrom_args: self.send_copyfrom_args.unwrap_or(false),
            ignore_ancestry: self.ignore_ancestry.unwrap_or(false),
            send_deltas: true,
        };
        run(s, conn, req)
    }

    fn action(&self, ctx: &Ctx<'_>) -> Pending {
        let depth = actions::command_depth(self.depth.as_deref(), self.recurse, Depth::Files);
        Pending::Update {
            path: ctx.full(&self.target),
            rev: ctx.rev(self.rev),
            depth,
            copyfrom: self.send_copyfrom_args == Some(true),
        }
    }
}

/// `switch ( [ rev:number ] target:string recurse:bool url:string ? depth:word
/// ? send-copyfrom-args:bool ? ignore-ancestry:bool )`, then the report.
pub struct Switch {
    rev: Option<Revnum>,
    target: Vec<u8>,
    recurse: bool,
    url: String,
    depth: Option<String>,
    send_copyfrom_args: Option<bool>,
    ignore_ancestry: Option<bool>,
}

impl Command for Switch {
    fn parse(p: &mut TupleReader<'_>) -> CmdResult<Self> {
        Ok(Switch {
            rev: p.bracket_rev()?,
            target: p.string()?.to_vec(),
            recurse: p.bool()?,
            url: String::from_utf8_lossy(p.string()?).into_owned(),
            depth: p.opt_word()?.map(str::to_string),
            send_copyfrom_args: p.opt_bool()?,
            ignore_ancestry: p.opt_bool()?,
        })
    }

    fn run<R: Read, W: Write>(&self, s: &mut Session, conn: &mut Conn<R, W>) -> CmdResult<Reply> {
        let depth = command_depth(self.depth.as_deref(), self.recurse, Depth::Files)?;
        let req = Drive {
            target: target_name(&self.target),
            rev: self.rev,
            other_url: Some(self.url.clone()),
            depth,
            send_copyfrom_args: self.send_copyfrom_args.unwrap_or(false),
            // A missing ignore-ancestry means true for switch.
            ignore_ancestry: self.ignore_ancestry.unwrap_or(true),
            send_deltas: true,
        };
        run(s, conn, req)
    }

    fn action(&self, ctx: &Ctx<'_>) -> Pending {
        let Some(target) = ctx.url_path(self.url.as_bytes()) else {
            return Pending::Nothing;
        };
        let depth = actions::command_depth(self.depth.as_deref(), self.recurse, Depth::Files);
        one(action::switch(
            &ctx.full(&self.target),
            &target,
            ctx.rev(self.rev),
            depth,
        ))
    }
}

/// `status ( target:string recurse:bool ? [ rev:number ] ? depth:word )`, then the
/// report.
pub struct Status {
    target: Vec<u8>,
    recurse: bool,
    rev: Option<Revnum>,
    depth: Option<String>,
}

impl Command for Status {
    fn parse(p: &mut TupleReader<'_>) -> CmdResult<Self> {
        let target = p.string()?.to_vec();
        let recurse = p.bool()?;
        let rev = match p.opt_tuple()? {
            Some(mut t) => t.opt_rev()?,
            None => None,
        };
        let depth = p.opt_word()?.map(str::to_string);
        Ok(Status {
            target,
            recurse,
            rev,
            depth,
        })
    }

    fn run<R: Read, W: Write>(&self, s: &mut Session, conn: &mut Conn<R, W>) -> CmdResult<Reply> {
        let depth = command_depth(self.depth.as_deref(), self.recurse, Depth::Empty)?;
        let req = Drive {
            target: target_name(&self.target),
            rev: self.rev,
            other_url: None,
            depth,
            send_copyfrom_args: false,
            ignore_ancestry: false,
            send_deltas: false,
        };
        run(s, conn, req)
    }

    fn action(&self, ctx: &Ctx<'_>) -> Pending {
        let depth = actions::command_depth(self.depth.as_deref(), self.recurse, Depth::Empty);
        one(action::status(
            &ctx.full(&self.target),
            ctx.rev(self.rev),
            depth,
        ))
    }
}

/// `diff ( [ rev:number ] target:string recurse:bool ignore-ancestry:bool url:string
/// ? text-deltas:bool ? depth:word )`, then the report.
pub struct Diff {
    rev: Option<Revnum>,
    target: Vec<u8>,
    recurse: bool,
    ignore_ancestry: bool,
    url: String,
    send_deltas: Option<bool>,
    depth: Option<String>,
}

impl Command for Diff {
    fn parse(p: &mut TupleReader<'_>) -> CmdResult<Self> {
        Ok(Diff {
            rev: p.bracket_rev()?,
            target: p.string()?.to_vec(),
            recurse: p.bool()?,
            ignore_ancestry: p.bool()?,
            url: String::from_utf8_lossy(p.string()?).into_owned(),
            send_deltas: p.opt_bool()?,
            depth: p.opt_word()?.map(str::to_string),
        })
    }

    fn run<R: Read, W: Write>(&self, s: &mut Session, conn: &mut Conn<R, W>) -> CmdResult<Reply> {
        let depth = command_depth(self.depth.as_deref(), self.recurse, Depth::Files)?;
        let req = Drive {
            target: target_name(&self.target),
            rev: self.rev,
            other_url: Some(self.url.clone()),
            depth,
            send_copyfrom_args: false,
            ignore_ancestry: self.ignore_ancestry,
            send_deltas: self.send_deltas.unwrap_or(true),
        };
        run(s, conn, req)
    }

    fn action(&self, ctx: &Ctx<'_>) -> Pending {
        let Some(versus) = ctx.url_path(self.url.as_bytes()) else {
            return Pending::Nothing;
        };
        let depth = actions::command_depth(self.depth.as_deref(), self.recurse, Depth::Files);
        Pending::Diff {
            path: ctx.full(&self.target),
            versus,
            rev: ctx.rev(self.rev),
            depth,
            ignore_ancestry: self.ignore_ancestry,
        }
    }
}

/// Reads report commands until `finish-report` (Some) or `abort-report` (None). Errors in
/// the report are kept and reported after `finish-report`, as svnserve does; protocol
/// errors end the connection.
///
/// The report's memory is counted in `charge` against the server's budget (the caller keeps
/// the charge while the report is driven).
fn read_report<R: Read, W: Write>(
    s: &Session,
    conn: &mut Conn<R, W>,
    charge: &mut Charge,
) -> CmdResult<Option<Result<Report, Failure>>> {
    let mut report = Report::new();
    let mut err: Option<Failure> = None;
    loop {
        let item = conn.expect_item()?;
        let mut t = TupleReader::from_item(&item)?;
        let name = t.word()?.to_string();
        let mut p = TupleReader::new(t.list()?);
        let result: CmdResult<()> = match name.as_str() {
            "set-path" => {
                let path = report_path(p.string()?)?;
                let e = EntryState::parse(&mut p)?;
                s.note_report_entry(&path, Some(e.rev), e.start_empty, true);
                report
                    .set_path(&path, e.rev, e.depth, e.start_empty, e.lock.as_deref())
                    .map_err(Failure::from)
            }
            "delete-path" => {
                let path = report_path(p.string()?)?;
                report.delete_path(&path).map_err(Failure::from)
            }
            "link-path" => {
                let path = report_path(p.string()?)?;
                let url = String::from_utf8_lossy(p.string()?).into_owned();
                let e = EntryState::parse(&mut p)?;
                s.note_report_entry(&path, Some(e.rev), e.start_empty, false);
                path_in_repo(&s.root_url, &url)
                    .map_err(Failure::from)
                    .and_then(|linked| {
                        report
                            .link_path(
                                &path,
                                &linked,
                                e.rev,
                                e.depth,
                                e.start_empty,
                                e.lock.as_deref(),
                            )
                            .map_err(Failure::from)
                    })
            }
            "finish-report" => {
                return Ok(Some(match err {
                    Some(e) => Err(e),
                    None => Ok(report),
                }))
            }
            "abort-report" => return Ok(None),
            other => {
                return Err(CmdError::new(
                    code::RA_SVN_UNKNOWN_CMD,
                    format!("Unknown editor command '{other}'"),
                )
                .into())
            }
        };
        match result {
            Ok(()) => {}
            Err(Failure::Fatal(e)) => return Err(Failure::Fatal(e)),
            Err(e @ Failure::Cmd(_)) => {
                if err.is_none() {
                    err = Some(e);
                }
            }
        }
        if err.is_none() {
            if let Err(e) = charge.set(report.memory()) {
                err = Some(CmdError::new(code::RA_SVN_REQUEST_SIZE, e.to_string()).into());
            }
        }
        // A failed report is answered with its error after finish-report: what it holds is
        // of no more use.
        if err.is_some() && !report.is_empty() {
            report = Report::new();
            let _ = charge.set(0);
        }
    }
}

/// What `set-path` and `link-path` say about the working copy at a path, after the path
/// (and the URL): `rev start-empty ? [ lock-token ] ? depth`.
struct EntryState {
    rev: Revnum,
    start_empty: bool,
    lock: Option<String>,
    depth: Depth,
}

impl EntryState {
    fn parse(p: &mut TupleReader<'_>) -> CmdResult<EntryState> {
        let rev = p.rev()?;
        let start_empty = p.bool()?;
        let lock = match p.opt_tuple()? {
            Some(mut l) => l.opt_string()?,
            None => None,
        };
        let lock = lock.map(|l| String::from_utf8_lossy(l).into_owned());
        let depth = report_depth(p.opt_word()?)?;
        Ok(EntryState {
            rev,
            start_empty,
            lock,
            depth,
        })
    }
}

fn report_path(raw: &[u8]) -> CmdResult<String> {
    let s = std::str::from_utf8(raw)
        .map_err(|_| CmdError::new(code::BAD_FILENAME, "Report path is not UTF-8"))?;
    validate_path(s)
        .map_err(|e| CmdError::new(code::BAD_FILENAME, format!("Invalid report path: {e}")).into())
}

/// A report entry's depth: infinity when missing (old clients); an unknown word is
/// `unknown`, which the report refuses with Subversion's wording.
fn report_depth(word: Option<&str>) -> CmdResult<Depth> {
    Ok(match word {
        None => Depth::Infinity,
        Some(w) => Depth::from_word(w).unwrap_or(Depth::Unknown),
    })
}

/// The report, the second auth slot, the drive, and the command's response.
fn run<R: Read, W: Write>(s: &mut Session, conn: &mut Conn<R, W>, req: Drive) -> CmdResult<Reply> {
    // The report always follows, even when the command itself was bad.
    let mut charge = conn.new_charge();
    let report = read_report(s, conn, &mut charge)?;
    let Some(report) = report else {
        return Ok(None);
    };
    conn.write_item(&empty_slot())?;
    let opts = req.options(s);
    let (opts, report) = match (opts, report) {
        (Ok(o), Ok(r)) => (o, r),
        (Err(e), _) | (_, Err(e)) => return Err(e),
    };
    // Errors svnserve sends as a plain failure come from `prepare`; every error of the
    // drive itself (some before its first command) gets the abort-edit sequence, as in
    // svnserve.
    let prepared = s.ctx.prepare_report(&opts, report)?;
    let mut editor = WireEditor::new(conn, s.caps.absent_entries, false);
    let driven = prepared.run(&mut editor);
    let broken = editor.broken;
    match driven {
        Ok(()) => finish_drive(conn),
        Err(e) if broken => Err(Failure::Fatal(crate::conn::ConnError::Io(
            std::io::Error::other(e.to_string()),
        ))),
        Err(e) => {
            // Abort the edit, read the client's answer, then report.
            conn.write_item(&svelto_wire::command("abort-edit", vec![]))?;
            let _ = conn.expect_item()?;
            Err(e.into())
        }
    }
}

/// After `close-edit`: the client's answer, then our response.
fn finish_drive<R: Read, W: Write>(conn: &mut Conn<R, W>) -> CmdResult<Reply> {
    let answer = conn.expect_item()?;
    match Response::from_item(&answer)? {
        Response::Success(_) => Ok(Some(vec![])),
        Response::Failure(chain) => {
            // Let the client's discarding loop stop, then hand its error back.
            conn.write_item(&svelto_wire::command("abort-edit", vec![]))?;
            conn.write_item(&failure(&chain))?;
            Ok(None)
        }
    }
}
