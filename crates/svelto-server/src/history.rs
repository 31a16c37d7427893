//! History commands (protocol doc 4.4): log, get-locations, get-location-segments,
//! get-deleted-rev, get-file-revs, get-mergeinfo.

use crate::actions::{full_paths, one, Ctx, Pending};
use crate::command::{Command, Reply};
use crate::conn::Conn;
use crate::error::{code, CmdError, CmdResult, Failure};
use crate::session::Session;
use std::io::{Read, Write};
use svelto_core::{ChangeKind, NodeKind, Revnum};
use svelto_repos::action;
use svelto_repos::{
    ChangedPathRef, FileRev, FileRevsHandler, FileRevsOptions, Inherit, LogEntryRef, LogOptions,
};
use svelto_wire::{Item, ItemWriter, TupleReader};

const AUTHOR: &[u8] = b"svn:author";
const DATE: &[u8] = b"svn:date";
const MESSAGE: &[u8] = b"svn:log";

/// The connection as a repository callback writes to it: a write error is kept (it ends
/// the connection) and reported to the query as an error, so the query stops.
struct Out<'c, R: Read, W: Write> {
    conn: &'c mut Conn<R, W>,
    io_err: Option<std::io::Error>,
    /// An item written piece by piece before it goes out whole.
    buf: Vec<u8>,
}

impl<R: Read, W: Write> Out<'_, R, W> {
    fn check(&mut self, r: std::io::Result<()>) -> svelto_repos::Result<()> {
        r.map_err(|e| {
            let msg = e.to_string();
            self.io_err = Some(e);
            svelto_repos::ReposError::Stopped(msg)
        })
    }

    fn item(&mut self, item: &Item) -> svelto_repos::Result<()> {
        let r = self.conn.write_item(item);
        self.check(r)
    }

    /// Bytes that already form whole items.
    fn raw(&mut self, bytes: &[u8]) -> svelto_repos::Result<()> {
        let r = self.conn.write_raw(bytes);
        self.check(r)
    }

    fn string(&mut self, bytes: &[u8]) -> svelto_repos::Result<()> {
        let r = self.conn.write_string(bytes);
        self.check(r)
    }
}

/// Runs a query that streams items through `Out`, then writes `done`; an error of the
/// query becomes the command's response after the marker, as svnserve sends it.
fn streamed<R: Read, W: Write>(
    conn: &mut Conn<R, W>,
    work: impl FnOnce(&mut Out<'_, R, W>) -> svelto_repos::Result<()>,
) -> CmdResult<Reply> {
    let mut out = Out {
        conn,
        io_err: None,
        buf: Vec::new(),
    };
    let result = work(&mut out);
    if let Some(e) = out.io_err {
        return Err(Failure::from(e));
    }
    conn.write_item(&Item::word("done"))?;
    result.map(|()| Some(vec![])).map_err(Failure::from)
}

fn strings(items: &[Item], what: &str) -> CmdResult<Vec<Vec<u8>>> {
    items
        .iter()
        .map(|i| i.as_string().map(<[u8]>::to_vec))
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| {
            CmdError::new(code::RA_SVN_MALFORMED_DATA, format!("{what} not a string")).into()
        })
}

/// Which revision properties a `log` asks for.
enum LogRevprops {
    /// A pre-1.5 client (no word): the three standard ones.
    Standard,
    /// `all-revprops`.
    All,
    /// `revprops ( name ... )`.
    Named(Vec<Vec<u8>>),
}

/// `log ( ( target-path:string ... ) [ start-rev:number ] [ end-rev:number ]
/// changed-paths:bool strict-node:bool ? limit:number ? include-merged-revisions:bool
/// all-revprops | revprops ( revprop:string ... ) )`.
pub struct Log {
    paths: Vec<Vec<u8>>,
    start: Option<Revnum>,
    end: Option<Revnum>,
    changed_paths: bool,
    strict: bool,
    limit: u64,
    include_merged: bool,
    revprops: LogRevprops,
}

impl Command for Log {
    fn parse(p: &mut TupleReader<'_>) -> CmdResult<Self> {
        let paths = strings(p.list()?, "Log path entry")?;
        let start = p.bracket_rev()?;
        let end = p.bracket_rev()?;
        let changed_paths = p.bool()?;
        let strict = p.bool()?;
        let limit = p.opt_number()?.unwrap_or(0);
        let include_merged = p.opt_bool()?.unwrap_or(false);
        let revprops = match p.opt_word()? {
            None => LogRevprops::Standard,
            Some("all-revprops") => LogRevprops::All,
            Some("revprops") => {
                LogRevprops::Named(strings(p.opt_list()?.unwrap_or(&[]), "Log revprop entry")?)
            }
            Some(w) => {
                return Err(CmdError::new(
                    code::RA_SVN_MALFORMED_DATA,
                    format!("Unknown revprop word '{w}' in log command"),
                )
                .into())
            }
        };
        Ok(Log {
            paths,
            start,
            end,
            changed_paths,
            strict,
            limit,
            include_merged,
            revprops,
        })
    }

    fn run<R: Read, W: Write>(&self, s: &mut Session, conn: &mut Conn<R, W>) -> CmdResult<Reply> {
        log(s, conn, self)
    }

    fn action(&self, ctx: &Ctx<'_>) -> Pending {
        let limit = if self.limit <= i32::MAX as u64 {
            self.limit
        } else {
            0
        };
        let names: Option<Vec<String>> = match &self.revprops {
            LogRevprops::Standard => Some(
                [AUTHOR, DATE, MESSAGE]
                    .map(|n| String::from_utf8_lossy(n).into_owned())
                    .to_vec(),
            ),
            LogRevprops::All => None,
            LogRevprops::Named(names) => Some(
                names
                    .iter()
                    .map(|s| String::from_utf8_lossy(s).into_owned())
                    .collect(),
            ),
        };
        one(action::log(&action::Log {
            paths: &full_paths(self.paths.iter().map(Vec::as_slice), ctx),
            start: self.start,
            end: self.end,
            limit,
            changed_paths: self.changed_paths,
            strict: self.strict,
            include_merged: self.include_merged,
            revprops: names.as_deref(),
        }))
    }
}

fn log<R: Read, W: Write>(s: &mut Session, conn: &mut Conn<R, W>, req: &Log) -> CmdResult<Reply> {
    let mut paths = Vec::with_capacity(req.paths.len());
    for p in &req.paths {
        paths.push(s.full_path(p)?);
    }
    let head = s.ctx.head()?;
    let opts = LogOptions {
        paths,
        start: req.start.unwrap_or(head),
        end: req.end.unwrap_or(head),
        limit: req.limit,
        discover_changed_paths: req.changed_paths,
        strict_node_history: req.strict,
        include_merged_revisions: req.include_merged,
        revprops: match &req.revprops {
            LogRevprops::Standard => Some(vec![AUTHOR.to_vec(), DATE.to_vec(), MESSAGE.to_vec()]),
            LogRevprops::All => None,
            LogRevprops::Named(names) => Some(names.clone()),
        },
    };
    let mut buf = Vec::new();
    streamed(conn, |out| {
        s.ctx.log_ref(&opts, &mut |entry| {
            buf.clear();
            write_log_entry(entry, &mut buf, &mut |b| out.raw(b))?;
            out.raw(&buf)
        })
    })
}

/// Bytes of a log entry beyond which they go out before the entry is complete: an entry's
/// changed paths can be megabytes (an import), its buffer need not be.
const LOG_ENTRY_CHUNK: usize = 32 * 1024;

/// One log entry as the protocol's `log` sends it (protocol doc, "log"), written straight
/// into `out`: per revision, without building items (a whole-history `log -v` sends
/// thousands). Over [`LOG_ENTRY_CHUNK`] bytes, what `out` holds goes to `send` first.
fn write_log_entry(
    e: &LogEntryRef<'_>,
    out: &mut Vec<u8>,
    send: &mut dyn FnMut(&[u8]) -> svelto_repos::Result<()>,
) -> svelto_repos::Result<()> {
    ItemWriter(out).open().open();
    for c in e.changed_paths.iter() {
        if out.len() >= LOG_ENTRY_CHUNK {
            send(out)?;
            out.clear();
        }
        write_changed_path(&c, out);
    }
    // The three standard properties travel in their own fields; the rest in the list.
    let (mut author, mut date, mut message, mut others) = (None, None, None, 0);
    for (k, v) in e.revprops.iter() {
        match k {
            AUTHOR => author = Some(v),
            DATE => date = Some(v),
            MESSAGE => message = Some(v),
            _ => others += 1,
        }
    }
    let mut w = ItemWriter(out);
    w.close()
        .number(if e.invalid_rev { 0 } else { e.rev })
        .opt_string(author)
        .opt_string(date)
        .opt_string(message)
        .bool(e.has_children)
        .bool(e.invalid_rev)
        .number(others)
        .open();
    if others > 0 {
        for (k, v) in e.revprops.iter() {
            if ![AUTHOR, DATE, MESSAGE].contains(&k) {
                w.open().string(k).string(v).close();
            }
        }
    }
    w.close().bool(e.subtractive_merge).close();
    Ok(())
}

/// One changed path of a log entry, `( path action ( [copy-path copy-rev] ) ( [kind
/// text-mods prop-mods] ) ) `: the fixed parts as whole pieces (a whole-history log
/// writes tens of thousands).
fn write_changed_path(c: &ChangedPathRef<'_>, out: &mut Vec<u8>) {
    out.extend_from_slice(b"( ");
    ItemWriter(out).fspath(c.relpath.as_bytes());
    out.extend_from_slice(match c.action {
        ChangeKind::Modify => b"M ( ",
        ChangeKind::Add => b"A ( ",
        ChangeKind::Delete => b"D ( ",
        ChangeKind::Replace => b"R ( ",
    });
    if let Some((p, r)) = c.copyfrom {
        ItemWriter(out).fspath(p.as_bytes()).number(r);
    }
    let tail: &[u8] = match (c.kind, c.text_mods, c.prop_mods) {
        (None, _, _) => b") ( ) ) ",
        (Some(NodeKind::File), false, false) => b") ( 4:file false false ) ) ",
        (Some(NodeKind::File), false, true) => b") ( 4:file false true ) ) ",
        (Some(NodeKind::File), true, false) => b") ( 4:file true false ) ) ",
        (Some(NodeKind::File), true, true) => b") ( 4:file true true ) ) ",
        (Some(NodeKind::Dir), false, false) => b") ( 3:dir false false ) ) ",
        (Some(NodeKind::Dir), false, true) => b") ( 3:dir false true ) ) ",
        (Some(NodeKind::Dir), true, false) => b") ( 3:dir true false ) ) ",
        (Some(NodeKind::Dir), true, true) => b") ( 3:dir true true ) ) ",
    };
    out.extend_from_slice(tail);
}

/// `get-locations ( path:string peg-rev:number ( rev:number ... ) )`: `( rev path )`
/// per location, then `done`.
pub struct GetLocations {
    path: Vec<u8>,
    peg: Revnum,
    revs: Vec<Revnum>,
}

impl Command for GetLocations {
    fn parse(p: &mut TupleReader<'_>) -> CmdResult<Self> {
        let path = p.string()?.to_vec();
        let peg = p.rev()?;
        let revs = p
            .list()?
            .iter()
            .map(Item::as_number)
            .collect::<Option<_>>()
            .ok_or_else(|| {
                CmdError::new(
                    code::RA_SVN_MALFORMED_DATA,
                    "Get-locations location revisions entry not a revision number",
                )
            })?;
        Ok(GetLocations { path, peg, revs })
    }

    fn run<R: Read, W: Write>(&self, s: &mut Session, conn: &mut Conn<R, W>) -> CmdResult<Reply> {
        get_locations_cmd(s, conn, self)
    }

    fn action(&self, ctx: &Ctx<'_>) -> Pending {
        one(action::get_locations(
            &ctx.full(&self.path),
            self.peg,
            &self.revs,
        ))
    }
}

fn get_locations_cmd<R: Read, W: Write>(
    s: &mut Session,
    conn: &mut Conn<R, W>,
    req: &GetLocations,
) -> CmdResult<Reply> {
    let path = s.full_path(&req.path)?;
    streamed(conn, |out| {
        for (rev, p) in s.ctx.locations(&path, req.peg, &req.revs)? {
            out.item(&Item::list(vec![Item::Number(rev), Item::string(p)]))?;
        }
        Ok(())
    })
}

/// `get-location-segments ( path:string [ peg-rev:number ] [ start-rev:number ]
/// [ end-rev:number ] )`: `( range-start range-end [ path ] )` per segment, then `done`.
pub struct GetLocationSegments {
    path: Vec<u8>,
    peg: Option<Revnum>,
    start: Option<Revnum>,
    end: Option<Revnum>,
}

impl Command for GetLocationSegments {
    fn parse(p: &mut TupleReader<'_>) -> CmdResult<Self> {
        Ok(GetLocationSegments {
            path: p.string()?.to_vec(),
            peg: p.bracket_rev()?,
            start: p.bracket_rev()?,
            end: p.bracket_rev()?,
        })
    }

    fn run<R: Read, W: Write>(&self, s: &mut Session, conn: &mut Conn<R, W>) -> CmdResult<Reply> {
        get_location_segments_cmd(s, conn, self)
    }

    fn action(&self, ctx: &Ctx<'_>) -> Pending {
        one(action::get_location_segments(
            &ctx.full(&self.path),
            self.peg,
            self.start,
            self.end,
        ))
    }
}

fn get_location_segments_cmd<R: Read, W: Write>(
    s: &mut Session,
    conn: &mut Conn<R, W>,
    req: &GetLocationSegments,
) -> CmdResult<Reply> {
    let path = s.full_path(&req.path)?;
    let head = s.ctx.head()?;
    let peg = req.peg.unwrap_or(head);
    let start = req.start.unwrap_or(head);
    let end = req.end.unwrap_or(0);
    streamed(conn, |out| {
        s.ctx.location_segments(&path, peg, start, end, &mut |seg| {
            let path = seg
                .path
                .map(|p| Item::string(p.trim_start_matches('/').to_string()));
            out.item(&Item::list(vec![
                Item::Number(seg.start),
                Item::Number(seg.end),
                Item::opt(path),
            ]))
        })
    })
}

/// `get-deleted-rev ( path:string peg-rev:number end-rev:number )`.
pub struct GetDeletedRev {
    path: Vec<u8>,
    peg: Revnum,
    end: Revnum,
}

impl Command for GetDeletedRev {
    fn parse(p: &mut TupleReader<'_>) -> CmdResult<Self> {
        Ok(GetDeletedRev {
            path: p.string()?.to_vec(),
            peg: p.rev()?,
            end: p.rev()?,
        })
    }

    fn run<R: Read, W: Write>(&self, s: &mut Session, _: &mut Conn<R, W>) -> CmdResult<Reply> {
        get_deleted_rev_cmd(s, self)
    }

    fn action(&self, _: &Ctx<'_>) -> Pending {
        one(action::get_deleted_rev())
    }
}

fn get_deleted_rev_cmd(s: &mut Session, req: &GetDeletedRev) -> CmdResult<Reply> {
    let path = s.full_path(&req.path)?;
    let (peg, end) = (req.peg, req.end);
    match s.ctx.deleted_rev(&path, peg, end)? {
        Some(r) => Ok(Some(vec![Item::Number(r)])),
        None => Err(CmdError::new(
            code::ENTRY_MISSING_REVISION,
            format!(
                "svn protocol command 'get-deleted-rev': path '/{path}' was not deleted in \
                 r{peg}-{end}; NOTE: newer clients handle this case and do not report it as an error"
            ),
        )
        .into()),
    }
}

/// Each file-rev and its delta chunks are written as they come (protocol doc 4.4).
impl<R: Read, W: Write> FileRevsHandler for Out<'_, R, W> {
    fn file_rev(&mut self, rev: &FileRev<'_>) -> svelto_repos::Result<()> {
        // Written straight into a buffer, as log entries are: a blame sends thousands.
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        let mut w = ItemWriter(&mut buf);
        w.open().string(rev.path.as_bytes()).number(rev.rev).open();
        for (name, value) in rev.revprops {
            w.open().string(name).string(value).close();
        }
        w.close().open();
        for (name, value) in rev.prop_diffs {
            w.open().string(name).opt_string(value.as_deref()).close();
        }
        w.close().bool(rev.merged).close();
        let r = self.raw(&buf);
        self.buf = buf;
        r
    }

    fn delta_chunk(&mut self, chunk: &[u8]) -> svelto_repos::Result<()> {
        self.string(chunk)
    }

    fn file_rev_end(&mut self) -> svelto_repos::Result<()> {
        self.string(b"")
    }
}

/// `get-file-revs ( path:string [ start-rev:number ] [ end-rev:number ]
/// ? include-merged-revisions:bool )`: blame's input.
pub struct GetFileRevs {
    path: Vec<u8>,
    start: Option<Revnum>,
    end: Option<Revnum>,
    include_merged: bool,
}

impl Command for GetFileRevs {
    fn parse(p: &mut TupleReader<'_>) -> CmdResult<Self> {
        Ok(GetFileRevs {
            path: p.string()?.to_vec(),
            start: p.bracket_rev()?,
            end: p.bracket_rev()?,
            include_merged: p.opt_bool()?.unwrap_or(false),
        })
    }

    fn run<R: Read, W: Write>(&self, s: &mut Session, conn: &mut Conn<R, W>) -> CmdResult<Reply> {
        get_file_revs_cmd(s, conn, self)
    }

    fn action(&self, ctx: &Ctx<'_>) -> Pending {
        one(action::get_file_revs(
            &ctx.full(&self.path),
            self.start,
            self.end,
            self.include_merged,
        ))
    }
}

fn get_file_revs_cmd<R: Read, W: Write>(
    s: &mut Session,
    conn: &mut Conn<R, W>,
    req: &GetFileRevs,
) -> CmdResult<Reply> {
    let path = s.full_path(&req.path)?;
    let (start, end, include_merged) = (req.start, req.end, req.include_merged);
    let opts = FileRevsOptions {
        start,
        end,
        include_merged,
        svndiff_version: s.svndiff_version(),
    };
    streamed(conn, |out| s.ctx.file_revs(&path, &opts, out))
}

/// `get-mergeinfo ( ( path:string ... ) [ rev:number ] inherit:word
/// include-descendants:bool )`.
pub struct GetMergeinfo {
    paths: Vec<Vec<u8>>,
    rev: Option<Revnum>,
    inherit: String,
    include_descendants: bool,
}

impl Command for GetMergeinfo {
    fn parse(p: &mut TupleReader<'_>) -> CmdResult<Self> {
        Ok(GetMergeinfo {
            paths: strings(p.list()?, "Mergeinfo path entry")?,
            rev: p.bracket_rev()?,
            inherit: p.word()?.to_string(),
            include_descendants: p.bool()?,
        })
    }

    fn run<R: Read, W: Write>(&self, s: &mut Session, _: &mut Conn<R, W>) -> CmdResult<Reply> {
        get_mergeinfo_cmd(s, self)
    }

    fn action(&self, ctx: &Ctx<'_>) -> Pending {
        let inherit = match self.inherit.as_str() {
            w @ ("explicit" | "inherited" | "nearest-ancestor") => w,
            _ => "explicit",
        };
        one(action::get_mergeinfo(
            &full_paths(self.paths.iter().map(Vec::as_slice), ctx),
            inherit,
            self.include_descendants,
        ))
    }
}

fn get_mergeinfo_cmd(s: &mut Session, req: &GetMergeinfo) -> CmdResult<Reply> {
    let inherit = Inherit::from_word(&req.inherit);
    let include_descendants = req.include_descendants;
    let mut paths = Vec::with_capacity(req.paths.len());
    for r in &req.paths {
        paths.push(s.full_path(r)?);
    }
    let rev = s.ctx.rev_or_head(req.rev)?;
    let found = s.ctx.mergeinfo(&paths, rev, inherit, include_descendants)?;
    let items: Vec<Item> = found
        .into_iter()
        .map(|(path, mi)| {
            let rel = svelto_core::skip_ancestor(&s.path, &path)
                .unwrap_or(&path)
                .to_string();
            Item::list(vec![Item::string(rel), Item::string(mi)])
        })
        .collect();
    Ok(Some(vec![Item::List(items)]))
}
