//! `log`: the revisions that changed a set of paths, as svnserve answers the `log` command
//! (Subversion's `svn_repos_get_logs5` plus svnserve's receivers; docs/formats/
//! svn-protocol.md §4.4), including merged revisions (`-g`) found through `svn:mergeinfo`.
//!
//! The whole-repository log (path "" without `-g`) reads only revision metadata
//! (`db/meta`): one record per revision. Path logs follow node history (across copies
//! unless `strict_node_history`).

use crate::error::{ReposError, Result};
use crate::fs::{
    check_rev, is_missing, lookup, mergeinfo_prop, prev_location, History, Inherit, MergeinfoCache,
};
use crate::locations::{location_segments, Segment};
use crate::mergeinfo::{self, Mergeinfo, Range};
use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use svelto_core::{fspath, is_ancestor, relpath, ChangeKind, NodeKind, PropList, Revnum};
use svelto_fs::{Change, ReadRepo, RevMeta};

/// What a `log` request asks for.
#[derive(Debug, Clone, Default)]
pub struct LogOptions {
    /// Relpaths, already joined with the session path; empty means `[""]`.
    pub paths: Vec<String>,
    pub start: Revnum,
    /// `start > end` lists newest first (and so does `start == end`).
    pub end: Revnum,
    /// 0 = no limit; values above 2^31 - 1 also mean none, as in svnserve.
    pub limit: u64,
    pub discover_changed_paths: bool,
    /// `--stop-on-copy`: do not follow history across copies.
    pub strict_node_history: bool,
    /// `-g`: merged revisions follow the revision that merged them, as its children.
    pub include_merged_revisions: bool,
    /// None = all revision properties; Some(names) = only those (none if empty).
    pub revprops: Option<Vec<Vec<u8>>>,
}

/// One changed path of a log entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangedPath {
    /// An fspath, `/trunk/a`.
    pub path: String,
    pub action: ChangeKind,
    /// Copy source (fspath, revision) of an add or replace with history.
    pub copyfrom: Option<(String, Revnum)>,
    pub kind: Option<NodeKind>,
    pub text_mods: Option<bool>,
    pub prop_mods: Option<bool>,
}

/// One changed path of a log entry as the revision's metadata holds it, borrowed: what the
/// protocol writers read, without a copy of each path (a whole-history `log -v` reports
/// tens of thousands).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChangedPathRef<'a> {
    /// A relpath, `trunk/a`: the protocols send it as the fspath `/trunk/a`.
    pub relpath: &'a str,
    pub action: ChangeKind,
    /// Copy source (relpath, revision) of an add or replace with history.
    pub copyfrom: Option<(&'a str, Revnum)>,
    pub kind: Option<NodeKind>,
    pub text_mods: bool,
    pub prop_mods: bool,
}

impl ChangedPathRef<'_> {
    pub fn into_owned(self) -> ChangedPath {
        ChangedPath {
            path: fspath(self.relpath),
            action: self.action,
            copyfrom: self.copyfrom.map(|(p, r)| (fspath(p), r)),
            kind: self.kind,
            text_mods: Some(self.text_mods),
            prop_mods: Some(self.prop_mods),
        }
    }
}

/// A [`LogEntry`] borrowed from the revisions' metadata, as [`log_authz_ref`] gives it.
#[derive(Clone, Copy)]
pub struct LogEntryRef<'a> {
    pub rev: Revnum,
    pub changed_paths: ChangedPaths<'a>,
    /// The wanted revision properties the revision has.
    pub revprops: Revprops<'a>,
    pub has_children: bool,
    pub subtractive_merge: bool,
    pub invalid_rev: bool,
}

impl LogEntryRef<'_> {
    pub fn into_owned(self) -> LogEntry {
        LogEntry {
            rev: self.rev,
            changed_paths: self
                .changed_paths
                .iter()
                .map(ChangedPathRef::into_owned)
                .collect(),
            revprops: self
                .revprops
                .iter()
                .map(|(k, v)| (k.to_vec(), v.to_vec()))
                .collect(),
            has_children: self.has_children,
            subtractive_merge: self.subtractive_merge,
            invalid_rev: self.invalid_rev,
        }
    }
}

/// The changed paths of a log entry, in the order they go out (byte order of the path
/// within each revision examined).
#[derive(Clone, Copy)]
pub struct ChangedPaths<'a> {
    metas: &'a [Arc<RevMeta>],
    pending: &'a [Pending],
}

impl<'a> ChangedPaths<'a> {
    pub fn iter(&self) -> impl Iterator<Item = ChangedPathRef<'a>> + 'a {
        let metas = self.metas;
        self.pending.iter().map(move |p| {
            let mut c = change_ref(&metas[p.meta as usize].changes[p.change as usize]);
            if !p.copyfrom {
                c.copyfrom = None;
            }
            c
        })
    }

    pub fn len(&self) -> usize {
        self.pending.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }
}

/// The revision properties of a log entry: those of the revision that were asked for and
/// that authorization lets through, in name order.
#[derive(Clone, Copy)]
pub struct Revprops<'a> {
    props: Option<&'a PropList>,
    /// None: all.
    names: Option<&'a [Vec<u8>]>,
    access: RevisionAccess,
}

impl<'a> Revprops<'a> {
    fn shown(&self, name: &[u8]) -> bool {
        let allowed = match self.access {
            RevisionAccess::Full => true,
            RevisionAccess::Partial => name == b"svn:author" || name == b"svn:date",
            RevisionAccess::None => false,
        };
        allowed
            && self
                .names
                .is_none_or(|n| n.iter().any(|w| w.as_slice() == name))
    }

    pub fn iter(&self) -> impl Iterator<Item = (&'a [u8], &'a [u8])> + 'a {
        let this = *self;
        self.props
            .into_iter()
            .flat_map(|p| p.iter())
            .filter(move |(k, _)| this.shown(k))
            .map(|(k, v)| (k.as_slice(), v.as_slice()))
    }

    /// The value of `name`, if asked for, shown and set.
    pub fn get(&self, name: &[u8]) -> Option<&'a [u8]> {
        if !self.shown(name) {
            return None;
        }
        self.props?.get(name).map(Vec::as_slice)
    }

    pub fn len(&self) -> usize {
        self.iter().count()
    }

    pub fn is_empty(&self) -> bool {
        self.iter().next().is_none()
    }
}

/// One entry of a log answer, exactly what svnserve puts on the wire.
///
/// With `include_merged_revisions`, an entry with `has_children` is followed by the
/// entries of the revisions it merged and then by a closing entry: `invalid_rev` true,
/// `rev` 0, no revision properties (svnserve sends that closing entry as `rev 0` with
/// `invalid-rev true`). Changed paths are in svnserve's order (byte order of the path).
/// Like svnserve, an entry may carry the changed paths of a merged revision that was
/// examined but not sent before it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LogEntry {
    pub rev: Revnum,
    pub changed_paths: Vec<ChangedPath>,
    /// The wanted revision properties the revision has, `svn:author`, `svn:date` and
    /// `svn:log` included (the server puts those three in their own slots).
    pub revprops: PropList,
    pub has_children: bool,
    pub subtractive_merge: bool,
    /// The closing entry of a list of merged revisions.
    pub invalid_rev: bool,
}

/// Merged revisions nest through mergeinfo; beyond this depth (only reachable with
/// mergeinfo that points at younger revisions) no further children are looked for.
const MAX_MERGE_DEPTH: usize = 256;

/// Lists the log of `opts.paths` between `opts.start` and `opts.end`, giving each entry to
/// `receiver` in the order svnserve sends them.
///
/// Errors: `NoSuchRevision` if `start` or `end` is past HEAD; `NotFound` (SVN_ERR_FS_NOT_FOUND,
/// naming the younger bound and the path) if a path does not exist in the younger of
/// `start` and `end`. An error may come after some entries were given.
pub fn log(
    repo: &dyn ReadRepo,
    opts: &LogOptions,
    receiver: &mut dyn FnMut(LogEntry) -> Result<()>,
) -> Result<()> {
    log_authz(repo, opts, None, receiver)
}

/// [`log_authz`] giving each entry borrowed ([`LogEntryRef`]): nothing copied out of the
/// revisions' metadata.
pub fn log_authz_ref(
    repo: &dyn ReadRepo,
    opts: &LogOptions,
    readable: Option<Readable<'_>>,
    receiver: &mut dyn FnMut(&LogEntryRef<'_>) -> Result<()>,
) -> Result<()> {
    run_log(repo, opts, readable, receiver)
}

/// Path-based authorization: whether a repository path may be read.
pub type Readable<'a> = &'a dyn Fn(&str) -> bool;

/// How much of a revision path-based authorization lets a user see.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RevisionAccess {
    /// Every changed path (and copy source) is readable, or nothing changed.
    Full,
    /// Some are: only `svn:author` and `svn:date` of the revision properties are shown.
    Partial,
    /// None is: no revision properties are shown.
    None,
}

/// Subversion's `svn_repos_check_revision_access` (and log's `detect_changed`): the access to
/// a revision, and its changed paths without the unreadable ones (copy sources that cannot
/// be read are dropped from the paths that stay).
pub fn revision_access(
    meta: &RevMeta,
    readable: Readable<'_>,
) -> (RevisionAccess, Vec<ChangedPath>) {
    let mut shown = Vec::new();
    let access = visible_changes(meta, readable, &mut shown);
    let mut paths: Vec<ChangedPath> = shown
        .iter()
        .map(|&(i, keep_copyfrom)| {
            let mut c = change_ref(&meta.changes[i as usize]);
            if !keep_copyfrom {
                c.copyfrom = None;
            }
            c.into_owned()
        })
        .collect();
    paths.sort_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes()));
    (access, paths)
}

/// The access to a revision, and which of its changes may be shown: (index, whether its
/// copy source may be) pushed to `shown` in the stored order.
fn visible_changes(
    meta: &RevMeta,
    readable: Readable<'_>,
    shown: &mut Vec<(u32, bool)>,
) -> RevisionAccess {
    if meta.changes.is_empty() {
        return RevisionAccess::Full;
    }
    let (mut found_readable, mut found_unreadable) = (false, false);
    for (i, c) in meta.changes.iter().enumerate() {
        if !readable(&fspath(&c.path)) {
            found_unreadable = true;
            continue;
        }
        found_readable = true;
        let mut keep_copyfrom = true;
        if let Some((_, from)) = &c.copyfrom {
            if matches!(c.change, ChangeKind::Add | ChangeKind::Replace) && !readable(&fspath(from))
            {
                found_unreadable = true;
                keep_copyfrom = false;
            }
        }
        shown.push((i as u32, keep_copyfrom));
    }
    if !found_readable {
        RevisionAccess::None
    } else if found_unreadable {
        RevisionAccess::Partial
    } else {
        RevisionAccess::Full
    }
}

fn change_ref(c: &Change) -> ChangedPathRef<'_> {
    ChangedPathRef {
        relpath: &c.path,
        action: c.change,
        copyfrom: c.copyfrom.as_ref().map(|(r, p)| (p.as_str(), *r)),
        kind: c.kind,
        text_mods: c.text_mod,
        prop_mods: c.prop_mod,
    }
}

fn unreadable() -> ReposError {
    ReposError::svn(crate::SvnErrorKind::AuthzUnreadable, "")
}

/// [`log`] under path-based authorization (svnserve's authz read function): a target path
/// that cannot be read is an error, history stops at a location that cannot be read,
/// unreadable changed paths are left out, and a revision that is partly unreadable shows
/// only its author and date (one wholly unreadable, no revision properties).
pub fn log_authz(
    repo: &dyn ReadRepo,
    opts: &LogOptions,
    readable: Option<Readable<'_>>,
    receiver: &mut dyn FnMut(LogEntry) -> Result<()>,
) -> Result<()> {
    run_log(repo, opts, readable, &mut |e| receiver(e.into_owned()))
}

fn run_log(
    repo: &dyn ReadRepo,
    opts: &LogOptions,
    readable: Option<Readable<'_>>,
    receiver: &mut dyn FnMut(&LogEntryRef<'_>) -> Result<()>,
) -> Result<()> {
    let head = repo.youngest();
    for rev in [opts.start, opts.end] {
        if rev > head {
            return Err(ReposError::NoSuchRevision(rev));
        }
    }
    let descending = opts.start >= opts.end;
    let (lo, hi) = (opts.start.min(opts.end), opts.start.max(opts.end));
    let limit = if opts.limit > i32::MAX as u64 {
        0
    } else {
        opts.limit
    };
    let paths: Vec<String> = if opts.paths.is_empty() {
        vec![String::new()]
    } else {
        opts.paths.iter().map(|p| relpath(p)).collect()
    };
    let mut ctx = Ctx {
        repo,
        readable,
        strict: opts.strict_node_history,
        discover: opts.discover_changed_paths,
        revprops: opts.revprops.as_deref(),
        target_history: Mergeinfo::new(),
        nested: None,
        processed: None,
        mergeinfo: MergeinfoCache::default(),
        depth: 0,
        sink: Sink {
            receiver,
            metas: Vec::new(),
            pending: Vec::new(),
            open: 0,
        },
    };
    if !opts.include_merged_revisions && paths.len() == 1 && paths[0].is_empty() {
        // The root changes in every revision.
        if readable.is_some_and(|r| !r("")) {
            return Err(unreadable());
        }
        let count = hi - lo + 1;
        let count = if limit > 0 { count.min(limit) } else { count };
        for i in 0..count {
            let rev = if descending { hi - i } else { lo + i };
            ctx.send_log(rev, false, false, false)?;
        }
        return Ok(());
    }
    if opts.include_merged_revisions {
        ctx.target_history = history_as_mergeinfo(repo, &paths, hi, lo)?;
    }
    let top = Search {
        start: lo,
        end: hi,
        limit,
        include_merged: opts.include_merged_revisions,
        subtractive: false,
        handling_merged: false,
        descending,
    };
    ctx.do_logs(paths, top)
}

/// The revisions and paths of the history of `paths` between `oldest` and `youngest`, as
/// mergeinfo (merged revisions already in that history are not listed again).
fn history_as_mergeinfo(
    repo: &dyn ReadRepo,
    paths: &[String],
    youngest: Revnum,
    oldest: Revnum,
) -> Result<Mergeinfo> {
    let mut out = Mergeinfo::new();
    for path in paths {
        let mut segments: Vec<Segment> = Vec::new();
        location_segments(repo, path, youngest, youngest, oldest, &mut |s| {
            segments.push(s);
            Ok(())
        })?;
        for s in segments {
            let Some(p) = s.path else { continue };
            if s.start == 0 && s.end == 0 {
                continue;
            }
            let range = [Range {
                start: s.start.saturating_sub(1),
                end: s.end,
                inheritable: true,
            }];
            mergeinfo::merge_into(&mut out, &[(p, range.to_vec())].into());
        }
    }
    Ok(out)
}

/// The parameters of one search through history (Subversion's `do_logs`).
#[derive(Clone, Copy)]
struct Search {
    start: Revnum,
    end: Revnum,
    limit: u64,
    include_merged: bool,
    subtractive: bool,
    /// A search for merged revisions: paths missing at `end` are skipped, revisions
    /// already sent or already in the target's history are not sent.
    handling_merged: bool,
    descending: bool,
}

/// One path's walk back through its history.
struct PathHistory {
    path: String,
    rev: Revnum,
    done: bool,
    history: History,
}

/// A changed path reported and not yet attached to an entry: the revision's metadata (an
/// index in `Sink::metas`), the change's index in it, and whether its copy source is shown.
#[derive(Clone, Copy)]
struct Pending {
    meta: u32,
    change: u32,
    copyfrom: bool,
}

/// Hands entries to the receiver as svnserve's receivers put them on the wire.
struct Sink<'r> {
    receiver: &'r mut dyn FnMut(&LogEntryRef<'_>) -> Result<()>,
    /// The metadata of the revisions whose changed paths are pending.
    metas: Vec<Arc<RevMeta>>,
    /// Changed paths reported and not yet attached to an entry, in the order they go out.
    pending: Vec<Pending>,
    /// Entries sent with children whose closing entry has not been sent.
    open: usize,
}

impl Sink<'_> {
    /// Sends an entry carrying the pending changed paths.
    fn entry(&mut self, e: Entry<'_>) -> Result<()> {
        if e.has_children {
            self.open += 1;
        }
        let r = (self.receiver)(&LogEntryRef {
            rev: e.rev,
            changed_paths: ChangedPaths {
                metas: &self.metas,
                pending: &self.pending,
            },
            revprops: e.revprops,
            has_children: e.has_children,
            subtractive_merge: e.subtractive_merge,
            invalid_rev: e.invalid_rev,
        });
        self.pending.clear();
        self.metas.clear();
        r
    }

    fn close(&mut self) -> Result<()> {
        // svnserve drops a closing entry with nothing open, and keeps the pending paths.
        if self.open == 0 {
            return Ok(());
        }
        self.open -= 1;
        self.entry(Entry {
            rev: 0,
            revprops: Revprops {
                props: None,
                names: None,
                access: RevisionAccess::None,
            },
            has_children: false,
            subtractive_merge: false,
            invalid_rev: true,
        })
    }

    /// Reports the changes of `meta` that `shown` lists (as `visible_changes` gives them;
    /// None: all of them), in byte order of their paths.
    fn report(&mut self, meta: &Arc<RevMeta>, shown: Option<&[(u32, bool)]>) {
        let m = self.metas.len() as u32;
        let base = self.pending.len();
        let pending = |(change, copyfrom)| Pending {
            meta: m,
            change,
            copyfrom,
        };
        match shown {
            None => match meta.byte_order() {
                Some(order) => self
                    .pending
                    .extend(order.iter().map(|&i| pending((i, true)))),
                None => self
                    .pending
                    .extend((0..meta.changes.len() as u32).map(|i| pending((i, true)))),
            },
            Some(shown) => {
                self.pending.extend(shown.iter().copied().map(pending));
                let path = |p: &Pending| meta.changes[p.change as usize].path.as_bytes();
                self.pending[base..].sort_by(|a, b| path(a).cmp(path(b)));
            }
        }
        if self.pending.len() > base {
            self.metas.push(meta.clone());
        }
    }
}

/// What an entry carries besides the pending changed paths.
struct Entry<'a> {
    rev: Revnum,
    revprops: Revprops<'a>,
    has_children: bool,
    subtractive_merge: bool,
    invalid_rev: bool,
}

struct Ctx<'a, 'r> {
    repo: &'a dyn ReadRepo,
    readable: Option<Readable<'a>>,
    strict: bool,
    discover: bool,
    revprops: Option<&'a [Vec<u8>]>,
    /// With `-g`: the history of the log targets as mergeinfo.
    target_history: Mergeinfo,
    /// Merged revisions already sent.
    nested: Option<HashSet<Revnum>>,
    /// Paths and revision ranges already searched for merged revisions (Subversion keeps
    /// them as mergeinfo whose ranges end one past the searched range).
    processed: Option<Mergeinfo>,
    mergeinfo: MergeinfoCache,
    depth: usize,
    sink: Sink<'r>,
}

impl Ctx<'_, '_> {
    /// Sends `rev` (Subversion's `send_log`). A merged revision is skipped when it was
    /// sent already, or when every path it changed lies in the targets' own history at
    /// that revision; its changed paths are reported all the same.
    fn send_log(
        &mut self,
        rev: Revnum,
        subtractive: bool,
        handling_merged: bool,
        has_children: bool,
    ) -> Result<()> {
        let meta = self.repo.rev_meta(rev)?;
        self.send_meta(rev, meta, subtractive, handling_merged, has_children)
    }

    /// [`Ctx::send_log`] with the revision's metadata read already.
    fn send_meta(
        &mut self,
        rev: Revnum,
        meta: Arc<RevMeta>,
        subtractive: bool,
        handling_merged: bool,
        has_children: bool,
    ) -> Result<()> {
        let filter = handling_merged && !self.target_history.is_empty();
        let mut wanted = !filter;
        let mut access = RevisionAccess::Full;
        if rev > 0 && (self.discover || filter || self.readable.is_some()) {
            let mut shown = Vec::new();
            match self.readable {
                Some(r) => access = visible_changes(&meta, r, &mut shown),
                None if filter => shown.extend((0..meta.changes.len() as u32).map(|i| (i, true))),
                None => {}
            }
            if filter {
                wanted = shown
                    .iter()
                    .any(|&(i, _)| !self.in_target_history(&meta.changes[i as usize].path, rev));
            }
            if self.discover {
                let all = self.readable.is_none();
                self.sink.report(&meta, (!all).then_some(&shown[..]));
            }
        }
        if !wanted {
            return Ok(());
        }
        if handling_merged {
            if let Some(nested) = &mut self.nested {
                if !nested.insert(rev) {
                    return Ok(());
                }
            }
        }
        self.sink.entry(Entry {
            rev,
            revprops: Revprops {
                props: Some(&meta.revprops),
                names: self.revprops,
                access,
            },
            has_children,
            subtractive_merge: subtractive,
            invalid_rev: false,
        })
    }

    fn in_target_history(&self, path: &str, rev: Revnum) -> bool {
        let rel = path.trim_start_matches('/');
        self.target_history.iter().any(|(src, ranges)| {
            is_ancestor(src.trim_start_matches('/'), rel) && mergeinfo::contains(ranges, rev)
        })
    }

    fn step(&self, h: &mut PathHistory, start: Revnum) -> Result<()> {
        if !h.history.prev(self.repo, !self.strict)? {
            h.done = true;
            return Ok(());
        }
        let (path, rev) = h.history.location();
        if h.path != path {
            h.path = path.to_string();
        }
        h.rev = rev;
        if rev < start || self.readable.is_some_and(|r| !r(&h.path)) {
            h.done = true;
        }
        Ok(())
    }

    fn do_logs(&mut self, mut paths: Vec<String>, mut s: Search) -> Result<()> {
        if s.handling_merged {
            if let Some(processed) = &mut self.processed {
                reduce_search(&mut paths, &mut s.start, &mut s.end, processed);
                if paths.is_empty() {
                    return Ok(());
                }
                store_search(processed, &paths, s.start, s.end);
            }
        }
        if paths.is_empty() {
            return Ok(());
        }
        check_rev(self.repo, s.end)?;
        let mut histories: Vec<PathHistory> = Vec::with_capacity(paths.len());
        for path in &paths {
            if self.readable.is_some_and(|r| !r(path)) {
                return Err(unreadable());
            }
            if lookup(self.repo, s.end, path)?.is_none() {
                if s.handling_merged {
                    continue;
                }
                return Err(ReposError::NotFound {
                    rev: s.end,
                    path: fspath(path),
                });
            }
            let mut h = PathHistory {
                path: path.clone(),
                rev: s.end,
                done: false,
                history: History::new(path, s.end),
            };
            match self.step(&mut h, s.start) {
                Err(e) if s.handling_merged && is_missing(&e) => continue,
                other => other?,
            }
            histories.push(h);
        }

        type MergeDelta = (Mergeinfo, Mergeinfo);
        let mut ascending: Vec<(Revnum, Option<MergeDelta>)> = Vec::new();
        let mut sent = 0u64;
        let mut current = s.end;
        let mut any_left = true;
        while any_left {
            let mut changed = false;
            any_left = false;
            let mut meta = None;
            for h in &mut histories {
                if !h.done && h.rev >= current {
                    changed = true;
                    if meta.is_none() {
                        meta = h.history.meta().cloned();
                    }
                    self.step(h, s.start)?;
                }
                if !h.done {
                    any_left = true;
                }
            }
            if changed {
                let mut delta = None;
                let mut has_children = false;
                if s.include_merged {
                    let cur_paths: Vec<String> = histories.iter().map(|h| h.path.clone()).collect();
                    let (added, deleted) = self.combined_mergeinfo_changes(&cur_paths, current)?;
                    has_children = !added.is_empty() || !deleted.is_empty();
                    delta = Some((added, deleted));
                }
                if s.descending {
                    let meta = match meta {
                        Some(m) => m,
                        None => self.repo.rev_meta(current)?,
                    };
                    self.send_meta(
                        current,
                        meta,
                        s.subtractive,
                        s.handling_merged,
                        has_children,
                    )?;
                    if has_children {
                        if self.nested.is_none() {
                            self.nested = Some(HashSet::new());
                            self.processed = Some(Mergeinfo::new());
                        }
                        if let Some((added, deleted)) = delta {
                            self.handle_merged_revisions(&added, &deleted)?;
                        }
                    }
                    sent += 1;
                    if s.limit > 0 && sent >= s.limit {
                        break;
                    }
                } else {
                    ascending.push((current, delta));
                }
            }
            current = histories
                .iter()
                .filter(|h| !h.done)
                .map(|h| h.rev)
                .max()
                .unwrap_or(0);
        }

        for (i, (rev, delta)) in ascending.iter().rev().enumerate() {
            let has_children = delta
                .as_ref()
                .is_some_and(|(a, d)| !a.is_empty() || !d.is_empty());
            self.send_log(*rev, s.subtractive, s.handling_merged, has_children)?;
            if has_children {
                if self.nested.is_none() {
                    self.nested = Some(HashSet::new());
                }
                if let Some((added, deleted)) = delta {
                    self.handle_merged_revisions(added, deleted)?;
                }
            }
            if s.limit > 0 && i as u64 + 1 >= s.limit {
                break;
            }
        }
        Ok(())
    }

    /// Logs the revisions a revision merged (added mergeinfo) or reverse-merged (deleted
    /// mergeinfo), youngest range first, then the closing entry.
    fn handle_merged_revisions(&mut self, added: &Mergeinfo, deleted: &Mergeinfo) -> Result<()> {
        if added.is_empty() && deleted.is_empty() {
            return Ok(());
        }
        let mut ranges = path_list_ranges(added, false);
        ranges.extend(path_list_ranges(deleted, true));
        ranges.sort_by_key(|r| (r.start, r.end));
        if self.depth < MAX_MERGE_DEPTH {
            self.depth += 1;
            for r in ranges.iter().rev() {
                let search = Search {
                    start: r.start,
                    end: r.end,
                    limit: 0,
                    include_merged: true,
                    subtractive: r.reverse,
                    handling_merged: true,
                    descending: true,
                };
                let result = self.do_logs(r.paths.clone(), search);
                if result.is_err() {
                    self.depth -= 1;
                    return result;
                }
            }
            self.depth -= 1;
        }
        self.sink.close()
    }

    /// How the mergeinfo of `paths` (and of paths below them) changed in `rev`: (added,
    /// deleted). Mergeinfo that does not parse counts as no change.
    fn combined_mergeinfo_changes(
        &mut self,
        paths: &[String],
        rev: Revnum,
    ) -> Result<(Mergeinfo, Mergeinfo)> {
        let mut added = Mergeinfo::new();
        let mut deleted = Mergeinfo::new();
        if rev == 0 || paths.is_empty() {
            return Ok((added, deleted));
        }
        let Some(changed) = self.mergeinfo_changed(rev)? else {
            return Ok((added, deleted));
        };
        if changed.is_empty() {
            return Ok((added, deleted));
        }
        // Changes of inherited mergeinfo, for paths whose own did not change.
        for path in paths {
            if changed.contains_key(path) {
                continue;
            }
            let prev = match prev_location(self.repo, rev, path) {
                Err(e) if is_missing(&e) => continue,
                other => other?,
            };
            let (prev_path, prev_rev) = match prev {
                Some((appeared, p, r)) if appeared == rev => (p, r),
                _ => (path.clone(), rev - 1),
            };
            let prev_mi = match self.mergeinfo.for_path(
                self.repo,
                prev_rev,
                &prev_path,
                Inherit::Inherited,
                true,
            ) {
                Err(e) if is_missing(&e) => continue,
                other => other?,
            };
            let prev_inherited = self.mergeinfo.for_path(
                self.repo,
                prev_rev,
                &prev_path,
                Inherit::NearestAncestor,
                false,
            )?;
            let mi = self
                .mergeinfo
                .for_path(self.repo, rev, path, Inherit::Inherited, true)?;
            let inherited =
                self.mergeinfo
                    .for_path(self.repo, rev, path, Inherit::NearestAncestor, false)?;
            if prev_mi.is_none() && mi.is_none() {
                continue;
            }
            // A copy changes what a path inherits without any merge; only a change of
            // the nearest ancestor's own mergeinfo means one.
            let same = match (&prev_inherited, &inherited) {
                (Some(a), Some(b)) => mergeinfo::equals(Some(a), Some(b), true),
                _ => prev_inherited.is_none(),
            };
            if same {
                continue;
            }
            let (d, a) = mergeinfo::diff(prev_mi.as_ref(), mi.as_ref());
            mergeinfo::merge_into(&mut deleted, &d);
            mergeinfo::merge_into(&mut added, &a);
        }
        for (changed_path, (d, a)) in &changed {
            if paths.iter().any(|p| is_ancestor(p, changed_path)) {
                mergeinfo::merge_into(&mut deleted, d);
                mergeinfo::merge_into(&mut added, a);
            }
        }
        Ok((added, deleted))
    }

    /// The paths whose explicit mergeinfo `rev` changed, each with (deleted, added);
    /// None if some mergeinfo involved does not parse.
    #[allow(clippy::type_complexity)]
    fn mergeinfo_changed(
        &mut self,
        rev: Revnum,
    ) -> Result<Option<BTreeMap<String, (Mergeinfo, Mergeinfo)>>> {
        let mut out = BTreeMap::new();
        let meta = self.repo.rev_meta(rev)?;
        if !meta.changes.iter().any(|c| c.prop_mod) {
            return Ok(Some(out));
        }
        let any_copy = meta
            .changes
            .iter()
            .any(|c| matches!(c.change, ChangeKind::Add | ChangeKind::Replace));
        for c in &meta.changes {
            if !c.prop_mod {
                continue;
            }
            let base: Option<(String, Revnum)> = match c.change {
                ChangeKind::Modify => {
                    let moved = if any_copy {
                        match prev_location(self.repo, rev, &c.path)? {
                            Some((appeared, p, r)) if appeared == rev => Some((p, r)),
                            _ => None,
                        }
                    } else {
                        None
                    };
                    Some(moved.unwrap_or_else(|| (c.path.clone(), rev - 1)))
                }
                ChangeKind::Add | ChangeKind::Replace => {
                    c.copyfrom.as_ref().map(|(r, p)| (p.clone(), *r))
                }
                ChangeKind::Delete => continue,
            };
            let prev_value = match &base {
                Some((p, r)) => mergeinfo_prop(self.repo, *r, p)?,
                None => None,
            };
            let value = mergeinfo_prop(self.repo, rev, &c.path)?;
            if prev_value.is_none() && value.is_none() {
                continue;
            }
            if prev_value.is_some() && prev_value == value {
                continue;
            }
            let mi = match &value {
                Some(v) => match mergeinfo::parse(v) {
                    Ok(mi) => Some(mi),
                    Err(_) => return Ok(None),
                },
                None => {
                    self.mergeinfo
                        .for_path(self.repo, rev, &c.path, Inherit::Inherited, true)?
                }
            };
            let prev_mi = match (&prev_value, &base) {
                (Some(v), _) => match mergeinfo::parse(v) {
                    Ok(mi) => Some(mi),
                    Err(_) => return Ok(None),
                },
                (None, Some((p, r))) => {
                    self.mergeinfo
                        .for_path(self.repo, *r, p, Inherit::Inherited, true)?
                }
                (None, None) => None,
            };
            out.insert(
                c.path.clone(),
                mergeinfo::diff(prev_mi.as_ref(), mi.as_ref()),
            );
        }
        Ok(Some(out))
    }
}

/// A revision range (inclusive) and the merge sources that have it.
struct PathListRange {
    start: Revnum,
    end: Revnum,
    paths: Vec<String>,
    reverse: bool,
}

/// Cuts mergeinfo into revision ranges, each with the set of sources that cover all of
/// it, oldest first (Subversion's `combine_mergeinfo_path_lists`).
fn path_list_ranges(mi: &Mergeinfo, reverse: bool) -> Vec<PathListRange> {
    // Per source, its ranges as inclusive (start, end), oldest first.
    let mut lists: Vec<(String, std::collections::VecDeque<(Revnum, Revnum)>)> = mi
        .iter()
        .filter(|(_, r)| !r.is_empty())
        .map(|(p, r)| {
            (
                p.trim_start_matches('/').to_string(),
                r.iter().map(|x| (x.start + 1, x.end)).collect(),
            )
        })
        .collect();
    let mut out = Vec::new();
    while lists.len() > 1 {
        lists.sort_by(|a, b| a.1.front().cmp(&b.1.front()).then_with(|| a.0.cmp(&b.0)));
        let Some(&(lo, _)) = lists[0].1.front() else {
            break;
        };
        let group = lists
            .iter()
            .take_while(|l| l.1.front().is_some_and(|f| f.0 == lo))
            .count();
        let min_end = lists[..group]
            .iter()
            .filter_map(|l| l.1.front().map(|f| f.1))
            .min()
            .unwrap_or(lo);
        let next_start = lists.get(group).and_then(|l| l.1.front()).map(|f| f.0);
        let hi = match next_start {
            Some(n) if n <= min_end => n - 1,
            _ => min_end,
        };
        out.push(PathListRange {
            start: lo,
            end: hi,
            paths: lists[..group].iter().map(|l| l.0.clone()).collect(),
            reverse,
        });
        for l in &mut lists[..group] {
            if let Some(f) = l.1.front_mut() {
                f.0 = hi + 1;
                if f.0 > f.1 {
                    l.1.pop_front();
                }
            }
        }
        lists.retain(|l| !l.1.is_empty());
    }
    if let Some((path, ranges)) = lists.pop() {
        for (start, end) in ranges {
            out.push(PathListRange {
                start,
                end,
                paths: vec![path.clone()],
                reverse,
            });
        }
    }
    out
}

/// Subversion's `reduce_search`: drops paths whose range was searched already, and with a
/// single path narrows the range to the part not searched yet.
fn reduce_search(
    paths: &mut Vec<String>,
    start: &mut Revnum,
    end: &mut Revnum,
    processed: &Mergeinfo,
) {
    let (lo, hi) = (*start, *end + 1);
    let mut i = 0;
    while i < paths.len() {
        let Some(ranges) = processed.get(&fspath(&paths[i])) else {
            i += 1;
            continue;
        };
        let mut removed = false;
        for r in ranges {
            if r.start <= lo && r.end >= hi {
                paths.remove(i);
                removed = true;
                break;
            }
            if paths.len() == 1 {
                if r.start <= lo && r.end > lo {
                    *start = r.end - 1;
                    break;
                }
                if r.start < hi && r.end >= hi {
                    *end = r.start;
                    break;
                }
            }
        }
        if !removed {
            i += 1;
        }
    }
}

/// Subversion's `store_search`: records `paths` as searched from `start` to `end`.
fn store_search(processed: &mut Mergeinfo, paths: &[String], start: Revnum, end: Revnum) {
    for p in paths {
        let range = vec![Range {
            start,
            end: end + 1,
            inheritable: true,
        }];
        mergeinfo::merge_into(processed, &[(fspath(p), range)].into());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mi(text: &str) -> Mergeinfo {
        mergeinfo::parse(text.as_bytes()).expect("valid mergeinfo")
    }

    fn flat(v: &[PathListRange]) -> Vec<(Revnum, Revnum, Vec<String>)> {
        v.iter()
            .map(|r| (r.start, r.end, r.paths.clone()))
            .collect()
    }

    #[test]
    fn path_list_ranges_split_where_the_sources_change() {
        let v = path_list_ranges(&mi("/a:1-5\n/b:3-8,10"), false);
        let s = |x: &[&str]| x.iter().map(|p| p.to_string()).collect::<Vec<_>>();
        assert_eq!(
            flat(&v),
            vec![
                (1, 2, s(&["a"])),
                (3, 5, s(&["a", "b"])),
                (6, 8, s(&["b"])),
                (10, 10, s(&["b"])),
            ]
        );
        let v = path_list_ranges(&mi("/a:4-6,9"), true);
        assert_eq!(flat(&v), vec![(4, 6, s(&["a"])), (9, 9, s(&["a"]))]);
        assert!(v.iter().all(|r| r.reverse));
    }

    #[test]
    fn searches_are_reduced_by_what_was_searched() {
        let mut processed = Mergeinfo::new();
        store_search(&mut processed, &["a".to_string()], 3, 6);
        let mut paths = vec!["a".to_string()];
        let (mut s, mut e) = (4, 5);
        reduce_search(&mut paths, &mut s, &mut e, &processed);
        assert!(paths.is_empty());
        let mut paths = vec!["a".to_string()];
        let (mut s, mut e) = (5, 9);
        reduce_search(&mut paths, &mut s, &mut e, &processed);
        assert_eq!((paths.len(), s, e), (1, 6, 9));
    }
}
