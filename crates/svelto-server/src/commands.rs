//! The main commands (protocol doc 4): dispatch, and the handlers that read nodes and
//! revision properties. History, reports and replay live in their own modules.

use crate::conn::{Conn, StringChunks};
use crate::error::{code, CmdError, CmdResult, Failure};
use crate::session::Session;
use crate::url::path_in_repo;
use std::io::{Read, Write};
use svelto_core::{join, parent_and_name, Depth, NodeKind, PropList, Revnum};
use svelto_store::NodeRev;
use svelto_wire::{success, Item, TupleReader};

/// The epoch, for dates a field needs but a revision lacks.
const EPOCH: &str = "1970-01-01T00:00:00.000000Z";

/// The size svnserve sends for a directory in `stat` and `list` (the client's "invalid").
const DIR_SIZE: u64 = u64::MAX;

/// What a command needs from the session's user before it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
    /// Write, by a named user (locks belong to someone).
    WriteAsUser,
}

/// Runs one command: the auth slot, the work, the response. A failure returned here is
/// sent by the caller (in the slot's place when nothing was sent yet).
pub fn dispatch<R: Read, W: Write>(
    s: &mut Session,
    conn: &mut Conn<R, W>,
    name: &str,
    p: &mut TupleReader<'_>,
) -> CmdResult<()> {
    if let Some(handler) = write_handler::<R, W>(name) {
        if let Some(e) = crate::revprops::check_before_slot(name, p) {
            return Err(e.into());
        }
        let at = authz_where(s, name, p);
        s.authorize(conn, write_access(name, p), at)?;
        if let Some(results) = handler(s, conn, p)? {
            conn.write_item(&success(results))?;
        }
        return Ok(());
    }
    let handler: Handler<R, W> = match name {
        "reparent" => reparent,
        "get-latest-rev" => get_latest_rev,
        "get-dated-rev" => get_dated_rev,
        "rev-proplist" => rev_proplist,
        "rev-prop" => rev_prop,
        "check-path" => check_path,
        "stat" => stat,
        "get-file" => get_file,
        "get-dir" => get_dir,
        "list" => list,
        "get-iprops" => get_iprops,
        "get-lock" => crate::locks::get_lock,
        "get-locks" => crate::locks::get_locks,
        "replay" => crate::replay::replay,
        "log" => crate::history::log_cmd,
        "get-locations" => crate::history::get_locations_cmd,
        "get-location-segments" => crate::history::get_location_segments_cmd,
        "get-deleted-rev" => crate::history::get_deleted_rev_cmd,
        "get-file-revs" => crate::history::get_file_revs_cmd,
        "get-mergeinfo" => crate::history::get_mergeinfo_cmd,
        "update" => crate::report::update,
        "switch" => crate::report::switch,
        "status" => crate::report::status,
        "diff" => crate::report::diff,
        "replay-range" => crate::replay::replay_range,
        _ => {
            return Err(CmdError::new(
                code::UNKNOWN_CMD,
                format!("Unknown editor command '{name}'"),
            )
            .into())
        }
    };
    if name == "get-locks" {
        crate::locks::get_locks_depth(p)?;
    }
    let at = authz_where(s, name, p);
    s.authorize(conn, Access::Read, at)?;
    if let Some(results) = handler(s, conn, p)? {
        conn.write_item(&success(results))?;
    }
    Ok(())
}

/// What svnserve checks the authz rules against in a command's auth slot.
fn authz_where(s: &Session, name: &str, p: &TupleReader<'_>) -> crate::authz::Where {
    use crate::authz::Where;
    if s.authz.is_none() {
        return Where::Blanket;
    }
    let mut t = TupleReader::new(p.rest());
    let first_path = |t: &mut TupleReader<'_>| {
        t.string()
            .ok()
            .and_then(|raw| s.full_path(raw).ok())
            .map_or(Where::Blanket, Where::Path)
    };
    match name {
        "get-file" | "get-dir" | "check-path" | "stat" | "list" | "get-iprops" | "get-lock"
        | "lock" | "unlock" => first_path(&mut t),
        "update" => {
            let _ = t.bracket_rev();
            first_path(&mut t)
        }
        "commit" | "change-rev-prop" | "change-rev-prop2" | "lock-many" | "unlock-many" => {
            Where::Anywhere
        }
        _ => Where::Blanket,
    }
}

type Handler<R, W> =
    fn(&mut Session, &mut Conn<R, W>, &mut TupleReader<'_>) -> CmdResult<Option<Vec<Item>>>;

/// The commands that change the repository (the auth slot asks for write access).
fn write_handler<R: Read, W: Write>(name: &str) -> Option<Handler<R, W>> {
    let h: Handler<R, W> = match name {
        "commit" => crate::commit::commit,
        "change-rev-prop" => crate::revprops::change_rev_prop_cmd,
        "change-rev-prop2" => crate::revprops::change_rev_prop2_cmd,
        "lock" => crate::locks::lock,
        "lock-many" => crate::locks::lock_many,
        "unlock" => crate::locks::unlock,
        "unlock-many" => crate::locks::unlock_many,
        _ => return None,
    };
    Some(h)
}

/// What a write command needs: locks need a user name (unlocking only when not breaking).
fn write_access(name: &str, p: &TupleReader<'_>) -> Access {
    let breaking = || {
        let mut t = TupleReader::new(p.rest());
        match name {
            "unlock" => {
                let _ = t.string();
                let _ = t.opt_tuple();
                t.bool().unwrap_or(false)
            }
            _ => t.bool().unwrap_or(false),
        }
    };
    match name {
        "lock" | "lock-many" => Access::WriteAsUser,
        "unlock" | "unlock-many" if !breaking() => Access::WriteAsUser,
        _ => Access::Write,
    }
}

fn reparent<R: Read, W: Write>(
    s: &mut Session,
    _: &mut Conn<R, W>,
    p: &mut TupleReader<'_>,
) -> CmdResult<Option<Vec<Item>>> {
    let url = String::from_utf8_lossy(p.string()?).into_owned();
    s.path = path_in_repo(&s.root_url, &url)?;
    Ok(Some(vec![]))
}

fn get_latest_rev<R: Read, W: Write>(
    s: &mut Session,
    _: &mut Conn<R, W>,
    _: &mut TupleReader<'_>,
) -> CmdResult<Option<Vec<Item>>> {
    Ok(Some(vec![Item::Number(s.repo.refresh()?)]))
}

fn get_dated_rev<R: Read, W: Write>(
    s: &mut Session,
    _: &mut Conn<R, W>,
    p: &mut TupleReader<'_>,
) -> CmdResult<Option<Vec<Item>>> {
    let text = String::from_utf8_lossy(p.string()?).into_owned();
    let want = parse_svn_date(&text)
        .ok_or_else(|| CmdError::new(code::BAD_DATE, format!("Can't parse date '{text}'")))?;
    let head = s.repo.refresh()?;
    // The youngest revision whose date is not after `want` (dates assumed to increase).
    let (mut lo, mut hi) = (0u64, head);
    let mut found = 0;
    while lo <= hi {
        let mid = lo + (hi - lo) / 2;
        let date = s.rev_info(mid)?.0;
        let d = date
            .as_deref()
            .and_then(|d| std::str::from_utf8(d).ok())
            .and_then(parse_svn_date)
            .unwrap_or(0);
        if d <= want {
            found = mid;
            lo = mid + 1;
        } else if mid == 0 {
            break;
        } else {
            hi = mid - 1;
        }
    }
    Ok(Some(vec![Item::Number(found)]))
}

/// Microseconds since the epoch of an `svn:date` (`YYYY-MM-DDTHH:MM:SS[.ffffff]Z`).
pub fn parse_svn_date(s: &str) -> Option<i64> {
    let s = s.trim().strip_suffix('Z').unwrap_or(s.trim());
    let (date, time) = s.split_once('T')?;
    let mut d = date.split('-');
    let y: i64 = d.next()?.parse().ok()?;
    let m: i64 = d.next()?.parse().ok()?;
    let day: i64 = d.next()?.parse().ok()?;
    let (hms, frac) = time.split_once('.').unwrap_or((time, "0"));
    let mut t = hms.split(':');
    let hh: i64 = t.next()?.parse().ok()?;
    let mm: i64 = t.next()?.parse().ok()?;
    let ss: i64 = t.next().unwrap_or("0").parse().ok()?;
    let frac6: String = frac.chars().chain(std::iter::repeat('0')).take(6).collect();
    let micros: i64 = frac6.parse().ok()?;
    if !(1..=12).contains(&m) || !(1..=31).contains(&day) || hh > 23 || mm > 59 || ss > 60 {
        return None;
    }
    // Days from civil (proleptic Gregorian).
    let y2 = if m <= 2 { y - 1 } else { y };
    let era = y2.div_euclid(400);
    let yoe = y2 - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(((days * 86_400 + hh * 3600 + mm * 60 + ss) * 1_000_000) + micros)
}

pub fn proplist_items(props: &PropList) -> Vec<Item> {
    props
        .iter()
        .map(|(k, v)| Item::list(vec![Item::string(k.clone()), Item::string(v.clone())]))
        .collect()
}

pub fn proplist_item(props: &PropList) -> Item {
    Item::List(proplist_items(props))
}

fn rev_proplist<R: Read, W: Write>(
    s: &mut Session,
    _: &mut Conn<R, W>,
    p: &mut TupleReader<'_>,
) -> CmdResult<Option<Vec<Item>>> {
    let rev = s.rev_or_head(Some(p.rev()?))?;
    Ok(Some(vec![proplist_item(&readable_revprops(s, rev)?)]))
}

fn rev_prop<R: Read, W: Write>(
    s: &mut Session,
    _: &mut Conn<R, W>,
    p: &mut TupleReader<'_>,
) -> CmdResult<Option<Vec<Item>>> {
    let rev = s.rev_or_head(Some(p.rev()?))?;
    let name = p.string()?;
    let props = readable_revprops(s, rev)?;
    Ok(Some(vec![Item::opt(
        props.get(name).cloned().map(Item::String),
    )]))
}

/// The revision properties of `rev` the user may see (all of them without authz-db).
pub fn readable_revprops(s: &Session, rev: Revnum) -> CmdResult<svelto_core::PropList> {
    let check = s.read_check();
    let readable = crate::authz::readable(&check);
    Ok(svelto_repos::revprops::readable_revprops(
        &s.repo, rev, readable,
    )?)
}

/// The node at a client path and revision (HEAD if none), or None when it does not exist.
fn node_at(s: &Session, path: &str, rev: Revnum) -> CmdResult<Option<std::sync::Arc<NodeRev>>> {
    Ok(s.repo.lookup(rev, path)?.map(|(_, n)| n))
}

fn kind_word(k: NodeKind) -> Item {
    Item::word(k.as_str())
}

fn check_path<R: Read, W: Write>(
    s: &mut Session,
    _: &mut Conn<R, W>,
    p: &mut TupleReader<'_>,
) -> CmdResult<Option<Vec<Item>>> {
    let raw = p.string()?;
    let rev = s.rev_or_head(p.bracket_rev()?)?;
    if names_nothing(raw) {
        return Ok(Some(vec![Item::word("none")]));
    }
    let path = s.full_path(raw)?;
    let kind = match node_at(s, &path, rev)? {
        Some(n) => kind_word(n.kind),
        None => Item::word("none"),
    };
    Ok(Some(vec![kind]))
}

/// A path with a control character names no node (commits and loads refuse them): svnserve
/// looks it up and finds nothing, so `svn copy URL URL/tab%09dir` reaches the commit, which
/// refuses the path with E160005, instead of failing at the client's existence check.
fn names_nothing(raw: &[u8]) -> bool {
    raw.iter().any(u8::is_ascii_control)
}

/// Whether a node has any properties: the store never writes an empty property list, so
/// a node has properties exactly when it points at one (no read needed).
fn has_props(node: &NodeRev) -> bool {
    node.props != 0
}

fn opt_string(v: Option<Vec<u8>>) -> Item {
    Item::opt(v.map(Item::String))
}

fn stat<R: Read, W: Write>(
    s: &mut Session,
    _: &mut Conn<R, W>,
    p: &mut TupleReader<'_>,
) -> CmdResult<Option<Vec<Item>>> {
    let raw = p.string()?;
    let rev = s.rev_or_head(p.bracket_rev()?)?;
    if names_nothing(raw) {
        return Ok(Some(vec![Item::empty_list()]));
    }
    let path = s.full_path(raw)?;
    let Some(node) = node_at(s, &path, rev)? else {
        return Ok(Some(vec![Item::empty_list()]));
    };
    let (date, author) = s.rev_info(node.created_rev)?;
    let size = match node.kind {
        NodeKind::File => node.file_text().size,
        NodeKind::Dir => DIR_SIZE,
    };
    let dirent = Item::list(vec![
        kind_word(node.kind),
        Item::Number(size),
        Item::bool(has_props(&node)),
        Item::Number(node.created_rev),
        Item::opt(Some(Item::string(date.unwrap_or_else(|| EPOCH.into())))),
        opt_string(author),
    ]);
    Ok(Some(vec![Item::list(vec![dirent])]))
}

/// A node's properties followed by the entry props the client keeps in its working copy.
fn props_with_entry_props(s: &mut Session, node: &NodeRev) -> CmdResult<PropList> {
    let mut props = s.repo.props(node)?;
    let (date, author) = s.rev_info(node.created_rev)?;
    props.insert(
        b"svn:entry:committed-rev".to_vec(),
        node.created_rev.to_string().into_bytes(),
    );
    if let Some(d) = date {
        props.insert(b"svn:entry:committed-date".to_vec(), d);
    }
    if let Some(a) = author {
        props.insert(b"svn:entry:last-author".to_vec(), a);
    }
    props.insert(b"svn:entry:uuid".to_vec(), s.uuid.clone().into_bytes());
    Ok(props)
}

/// The properties of each ancestor of `path` that has any, root first.
pub fn inherited_props(s: &Session, path: &str, rev: Revnum) -> CmdResult<Vec<(String, PropList)>> {
    let mut iprops = svelto_repos::inherited_props(&s.repo, path, rev)?;
    // Ancestors the user cannot read are left out (svn_repos_fs_get_inherited_props).
    iprops.retain(|(p, _)| s.allowed(p, false));
    Ok(iprops)
}

fn iprops_item(iprops: &[(String, PropList)]) -> Item {
    Item::List(
        iprops
            .iter()
            .map(|(p, props)| Item::list(vec![Item::string(p.clone()), proplist_item(props)]))
            .collect(),
    )
}

fn get_file<R: Read, W: Write>(
    s: &mut Session,
    conn: &mut Conn<R, W>,
    p: &mut TupleReader<'_>,
) -> CmdResult<Option<Vec<Item>>> {
    let path = s.full_path(p.string()?)?;
    let rev = s.rev_or_head(p.bracket_rev()?)?;
    let want_props = p.bool()?;
    let want_contents = p.bool()?;
    let want_iprops = p.opt_bool()?.unwrap_or(false);
    let (_, node) = s.repo.node_at(rev, &path)?;
    if node.kind != NodeKind::File {
        return Err(CmdError::new(
            code::FS_NOT_FILE,
            "Attempted to get checksum of a *non*-file node",
        )
        .into());
    }
    let text = node.file_text();
    let props = if want_props {
        props_with_entry_props(s, &node)?
    } else {
        PropList::new()
    };
    let mut results = vec![
        Item::opt(Some(Item::string(text.md5.to_hex()))),
        Item::Number(rev),
        proplist_item(&props),
    ];
    if want_iprops {
        results.push(iprops_item(&inherited_props(s, &path, rev)?));
    }
    if !want_contents {
        return Ok(Some(results));
    }
    conn.write_item(&success(results))?;
    let mut chunks = StringChunks::new(conn);
    let streamed = s.repo.write_text(&text, &mut chunks);
    match streamed {
        Ok(()) => {
            chunks.finish()?;
            conn.write_string(b"")?;
            Ok(Some(vec![]))
        }
        Err(e) => {
            // The client reads the end marker, then this error as the second response.
            chunks.finish()?;
            conn.write_string(b"")?;
            Err(Failure::from(e))
        }
    }
}

/// Which dirent fields the client asked for (`kind size has-props created-rev time
/// last-author`); all when the list is missing.
#[derive(Debug, Clone, Copy)]
struct Fields {
    kind: bool,
    size: bool,
    has_props: bool,
    created_rev: bool,
    time: bool,
    author: bool,
}

impl Fields {
    fn parse(list: Option<&[Item]>) -> Fields {
        match list {
            None => Fields {
                kind: true,
                size: true,
                has_props: true,
                created_rev: true,
                time: true,
                author: true,
            },
            Some(items) => {
                let has = |w: &str| items.iter().any(|i| i.as_word() == Some(w));
                Fields {
                    kind: has("kind"),
                    size: has("size"),
                    has_props: has("has-props"),
                    created_rev: has("created-rev"),
                    time: has("time"),
                    author: has("last-author"),
                }
            }
        }
    }

    fn only_kind(&self) -> bool {
        self.kind && !(self.size || self.has_props || self.created_rev || self.time || self.author)
    }
}

fn get_dir<R: Read, W: Write>(
    s: &mut Session,
    _: &mut Conn<R, W>,
    p: &mut TupleReader<'_>,
) -> CmdResult<Option<Vec<Item>>> {
    let path = s.full_path(p.string()?)?;
    let rev = s.rev_or_head(p.bracket_rev()?)?;
    let want_props = p.bool()?;
    let want_contents = p.bool()?;
    let fields = Fields::parse(p.opt_list()?);
    let want_iprops = p.opt_bool()?.unwrap_or(false);
    let (_, node) = s.repo.node_at(rev, &path)?;
    if node.kind != NodeKind::Dir {
        return Err(CmdError::new(
            code::FS_NOT_DIRECTORY,
            format!("Path '/{path}' not a directory"),
        )
        .into());
    }
    let props = if want_props {
        props_with_entry_props(s, &node)?
    } else {
        PropList::new()
    };
    let mut entries = Vec::new();
    if want_contents {
        let dir = s.repo.dir(&node)?;
        for e in dir.iter() {
            if !s.allowed(&join(&path, &e.name), false) {
                continue;
            }
            let child = s.repo.node(e.node)?;
            let (date, author) = if fields.time || fields.author {
                s.rev_info(child.created_rev)?
            } else {
                (None, None)
            };
            let size = match (fields.size, child.kind) {
                (true, NodeKind::File) => child.file_text().size,
                _ => 0,
            };
            entries.push(Item::list(vec![
                Item::string(e.name.clone()),
                if fields.kind {
                    kind_word(child.kind)
                } else {
                    Item::word("none")
                },
                Item::Number(size),
                Item::bool(fields.has_props && has_props(&child)),
                Item::Number(if fields.created_rev {
                    child.created_rev
                } else {
                    0
                }),
                Item::opt(Some(Item::string(match (fields.time, date) {
                    (true, Some(d)) => d,
                    _ => EPOCH.as_bytes().to_vec(),
                }))),
                opt_string(if fields.author { author } else { None }),
            ]));
        }
    }
    let mut results = vec![
        Item::Number(rev),
        proplist_item(&props),
        Item::List(entries),
    ];
    if want_iprops {
        results.push(iprops_item(&inherited_props(s, &path, rev)?));
    }
    Ok(Some(results))
}

/// Shell-style glob (`*`, `?`, `[...]`, `\x`) against a whole name, as `svn ls --search`
/// matches entry names (apr_fnmatch without flags; the same matcher authz globs use).
pub fn glob_match(pattern: &[u8], name: &[u8]) -> bool {
    svelto_repos::authz::fnmatch(pattern, name)
}

fn list<R: Read, W: Write>(
    s: &mut Session,
    conn: &mut Conn<R, W>,
    p: &mut TupleReader<'_>,
) -> CmdResult<Option<Vec<Item>>> {
    let path = s.full_path(p.string()?)?;
    let rev = s.rev_or_head(p.bracket_rev()?)?;
    let depth_word = p.word()?.to_string();
    let fields = Fields::parse(Some(p.list()?));
    let patterns: Option<Vec<Vec<u8>>> = match p.opt_list()? {
        None => None,
        Some(items) => Some(
            items
                .iter()
                .map(|i| i.as_string().map(<[u8]>::to_vec))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| {
                    CmdError::new(code::MALFORMED_DATA, "list: patterns must be strings")
                })?,
        ),
    };
    let depth = match Depth::from_word(&depth_word) {
        Some(d) if d >= Depth::Empty => d,
        _ => {
            conn.write_item(&Item::word("done"))?;
            return Err(CmdError::new(
                code::REPOS_BAD_ARGS,
                format!("Invalid depth '{depth_word}' for list"),
            )
            .into());
        }
    };
    let result = list_walk(s, conn, &path, rev, depth, fields, patterns.as_deref());
    conn.write_item(&Item::word("done"))?;
    result.map(|()| Some(vec![]))
}

fn list_walk<R: Read, W: Write>(
    s: &mut Session,
    conn: &mut Conn<R, W>,
    path: &str,
    rev: Revnum,
    depth: Depth,
    fields: Fields,
    patterns: Option<&[Vec<u8>]>,
) -> CmdResult<()> {
    let Some((_, node)) = s.repo.lookup(rev, path)? else {
        return Err(CmdError::new(code::FS_NOT_FOUND, format!("Path '/{path}' not found")).into());
    };
    // Names are matched case-folded, as svn_utf__fuzzy_glob_match does (it also strips
    // accents, which this does not); an entry that does not match is not reported, but a
    // directory is still descended.
    let matches = |name: &str| match patterns {
        None => true,
        Some(ps) => {
            let folded = name.to_lowercase();
            ps.iter().any(|p| glob_match(p, folded.as_bytes()))
        }
    };
    let root_name = parent_and_name(path).1;
    if matches(root_name) {
        send_list_entry(s, conn, path, &node, fields)?;
    }
    if node.kind != NodeKind::Dir || depth == Depth::Empty {
        return Ok(());
    }
    // Depth-first, children in name order: each subdirectory's listing follows its entry.
    let mut stack = vec![(path.to_string(), s.repo.dir(&node)?, 0usize)];
    while let Some(top) = stack.last_mut() {
        let Some(e) = top.1.get(top.2).cloned() else {
            stack.pop();
            continue;
        };
        top.2 += 1;
        let child_path = join(&top.0, &e.name);
        if depth == Depth::Files && e.kind == NodeKind::Dir {
            continue;
        }
        if !s.allowed(&child_path, false) {
            continue;
        }
        let child = s.repo.node(e.node)?;
        if matches(&e.name) {
            send_list_entry(s, conn, &child_path, &child, fields)?;
        }
        if e.kind == NodeKind::Dir && depth == Depth::Infinity {
            let entries = s.repo.dir(&child)?;
            stack.push((child_path, entries, 0));
        }
    }
    Ok(())
}

fn send_list_entry<R: Read, W: Write>(
    s: &mut Session,
    conn: &mut Conn<R, W>,
    path: &str,
    node: &NodeRev,
    fields: Fields,
) -> CmdResult<()> {
    let fspath = format!("/{path}");
    let kind = if fields.kind {
        kind_word(node.kind)
    } else {
        Item::word("unknown")
    };
    if fields.only_kind() {
        conn.write_item(&Item::list(vec![Item::string(fspath), kind]))?;
        return Ok(());
    }
    let (date, author) = if fields.time || fields.author {
        s.rev_info(node.created_rev)?
    } else {
        (None, None)
    };
    let size = match node.kind {
        NodeKind::File => node.file_text().size,
        NodeKind::Dir => DIR_SIZE,
    };
    let item = Item::list(vec![
        Item::string(fspath),
        kind,
        Item::opt(fields.size.then_some(Item::Number(size))),
        Item::opt(fields.has_props.then(|| Item::bool(has_props(node)))),
        Item::opt(fields.created_rev.then_some(Item::Number(node.created_rev))),
        opt_string(if fields.time { date } else { None }),
        opt_string(if fields.author { author } else { None }),
    ]);
    conn.write_item(&item)?;
    Ok(())
}

fn get_iprops<R: Read, W: Write>(
    s: &mut Session,
    _: &mut Conn<R, W>,
    p: &mut TupleReader<'_>,
) -> CmdResult<Option<Vec<Item>>> {
    let path = s.full_path(p.string()?)?;
    let rev = s.rev_or_head(p.bracket_rev()?)?;
    if s.repo.lookup(rev, &path)?.is_none() {
        return Err(CmdError::new(code::FS_NOT_FOUND, format!("'/{path}' path not found")).into());
    }
    Ok(Some(vec![iprops_item(&inherited_props(s, &path, rev)?)]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob_match(b"*.c", b"main.c"));
        assert!(!glob_match(b"*.c", b"main.h"));
        assert!(glob_match(b"a?c", b"abc"));
        assert!(glob_match(b"[a-c]x", b"bx"));
        assert!(!glob_match(b"[!a-c]x", b"bx"));
        assert!(glob_match(b"*", b""));
        assert!(glob_match(b"a*b*c", b"aXXbYYc"));
        assert!(!glob_match(b"a*b*c", b"aXXbYY"));
    }

    #[test]
    fn dates() {
        assert_eq!(parse_svn_date("1970-01-01T00:00:00.000000Z"), Some(0));
        assert_eq!(
            parse_svn_date("1970-01-02T00:00:01.5Z"),
            Some(86_401_500_000)
        );
        assert_eq!(
            parse_svn_date("2024-05-01T12:00:00.000000Z"),
            Some(1_714_564_800_000_000)
        );
        assert_eq!(parse_svn_date("garbage"), None);
    }
}
