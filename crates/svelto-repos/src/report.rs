//! The server side of update reports: what `svn update`, `switch`, `status` and `diff` receive
//! (`docs/formats/svn-protocol.md` §5.3 "What a report means", §5.7 "What the server's drive
//! contains"). The behaviour is svnserve's (Subversion's `libsvn_repos/reporter.c`), so that
//! the stock client prints the same lines and stores the same working copy.
//!
//! A [`Report`] collects the client's `set-path`, `link-path` and `delete-path` entries under
//! [`ReportLimits`]. [`prepare`] checks everything that can fail before the first editor call
//! (a bad report, a revision that does not exist, a missing target); [`PreparedDrive::run`]
//! then drives an [`Editor`] from `target_rev` to `close_edit`. An error from `run` leaves the
//! edit open: the caller aborts it (svnserve sends `abort-edit`).
//!
//! The walk compares the working copy's tree (the source: each reported path at its reported
//! revision) with the target tree, directory by directory. Subtrees whose node-revision is the
//! same on both sides are skipped without being read, so an update costs what changed.

use crate::editor::{send_text, Editor, TextOptions, Token};
use crate::error::{ReposError, Result, SvnErrorKind};
use std::collections::{HashMap, HashSet};
use std::io::Read;
use svelto_core::{
    join, parent_and_name, skip_ancestor, validate_path, Depth, NodeKind, PropList, Revnum,
};
use svelto_delta::{compute_window, stream_header, Window, WINDOW_SIZE};
use svelto_store::{DirEntry, FileText, NodeRev, Offset, Repo};

/// What the drive compares the report against, and how it sends the difference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportOptions {
    /// Repository relpath of the session URL, the drive's anchor ("" = the root).
    pub anchor: String,
    /// The update target: "" or one path component below `anchor`.
    pub target: String,
    /// The revision the working copy is brought to (HEAD already resolved by the caller).
    pub target_rev: Revnum,
    /// Switch and diff: the repository relpath `anchor/target` is compared against (the full
    /// path of the other URL). None for update and status.
    pub switch_path: Option<String>,
    /// The requested depth; [`Depth::Unknown`] keeps each directory's ambient depth.
    pub depth: Depth,
    /// Add files copied in the repository with their copy source (and a delta against it).
    pub send_copyfrom_args: bool,
    /// Treat any two nodes of the same kind as related (open instead of delete and add).
    pub ignore_ancestry: bool,
    /// svndiff version, and whether texts are sent at all (false for `status`,
    /// `diff --summarize`: each changed file gets only the 4-byte stream header).
    pub text: TextOptions,
}

/// Bounds on what a client's report may hold in memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReportLimits {
    /// Most entries (`set-path`, `link-path`, `delete-path`) in one report.
    pub max_entries: usize,
    /// Most bytes of paths, link paths and lock tokens in one report (at most 4 GiB).
    pub max_bytes: usize,
}

impl Default for ReportLimits {
    fn default() -> Self {
        ReportLimits {
            max_entries: 2_000_000,
            max_bytes: 256 << 20,
        }
    }
}

/// A byte range of [`Report::text`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span {
    start: u32,
    len: u32,
}

/// One report entry; `rev` None is a `delete-path`.
#[derive(Debug, Clone, Copy)]
struct Entry {
    path: Span,
    link: Option<Span>,
    rev: Option<Revnum>,
    depth: Depth,
    start_empty: bool,
    lock: Option<Span>,
}

/// The working copy as the client describes it, built entry by entry as report commands
/// arrive. Paths are as the client sends them: relative to the update target, "" being the
/// target itself.
#[derive(Debug, Clone)]
pub struct Report {
    entries: Vec<Entry>,
    /// Every path, link path and lock token, back to back (one allocation, not one each).
    text: String,
    limits: ReportLimits,
}

impl Default for Report {
    fn default() -> Self {
        Report::new()
    }
}

fn bad_args(message: impl Into<String>) -> ReposError {
    ReposError::svn(SvnErrorKind::BadArgs, message)
}

fn bad_report(message: impl Into<String>) -> ReposError {
    ReposError::svn(SvnErrorKind::BadRevisionReport, message)
}

fn no_such_revision(rev: Revnum) -> ReposError {
    ReposError::svn(
        SvnErrorKind::NoSuchRevision,
        format!("No such revision {rev}"),
    )
}

fn report_depth(depth: Depth) -> Result<Depth> {
    if depth == Depth::Unknown {
        return Err(bad_args("Unsupported report depth 'unknown'"));
    }
    Ok(depth)
}

impl Report {
    pub fn new() -> Report {
        Report::with_limits(ReportLimits::default())
    }

    pub fn with_limits(limits: ReportLimits) -> Report {
        Report {
            entries: Vec::new(),
            text: String::new(),
            limits,
        }
    }

    /// Number of entries so far.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Bytes the report holds in memory (its entries and their text, as allocated).
    pub fn memory(&self) -> usize {
        self.entries.capacity() * std::mem::size_of::<Entry>() + self.text.capacity()
    }

    /// `set-path`: the working copy has `path` at `rev`, with ambient `depth`; `start_empty`
    /// when it is a directory without any of its entries yet (a checkout); `lock_token` when
    /// it holds a lock on that file. Depth `unknown` is an error, as in svnserve.
    pub fn set_path(
        &mut self,
        path: &str,
        rev: Revnum,
        depth: Depth,
        start_empty: bool,
        lock_token: Option<&str>,
    ) -> Result<()> {
        let depth = report_depth(depth)?;
        self.add(path, None, Some(rev), depth, start_empty, lock_token)
    }

    /// `link-path`: like [`Report::set_path`], with `path` switched to `linked_relpath` (a
    /// repository relpath, the client's URL already mapped by the caller).
    pub fn link_path(
        &mut self,
        path: &str,
        linked_relpath: &str,
        rev: Revnum,
        depth: Depth,
        start_empty: bool,
        lock_token: Option<&str>,
    ) -> Result<()> {
        if depth == Depth::Exclude {
            return Err(bad_args("Depth 'exclude' not supported for link"));
        }
        let depth = report_depth(depth)?;
        self.add(
            path,
            Some(linked_relpath),
            Some(rev),
            depth,
            start_empty,
            lock_token,
        )
    }

    /// `delete-path`: `path` is missing from the working copy.
    pub fn delete_path(&mut self, path: &str) -> Result<()> {
        self.add(path, None, None, Depth::Infinity, false, None)
    }

    fn add(
        &mut self,
        path: &str,
        link: Option<&str>,
        rev: Option<Revnum>,
        depth: Depth,
        start_empty: bool,
        lock: Option<&str>,
    ) -> Result<()> {
        if self.entries.len() >= self.limits.max_entries {
            return Err(ReposError::svn(
                SvnErrorKind::LimitExceeded,
                format!(
                    "The report has more than {} entries (Svelto's limit)",
                    self.limits.max_entries
                ),
            ));
        }
        let path = validate_path(path).map_err(|e| bad_args(e.to_string()))?;
        let link = link
            .map(|l| validate_path(l).map_err(|e| bad_args(e.to_string())))
            .transpose()?;
        let more = path.len() + link.as_ref().map_or(0, String::len) + lock.map_or(0, str::len);
        let max = self.limits.max_bytes.min(u32::MAX as usize);
        if self.text.len() + more > max {
            return Err(ReposError::svn(
                SvnErrorKind::LimitExceeded,
                format!("The report's paths exceed {max} bytes (Svelto's limit)"),
            ));
        }
        let path = self.push_text(&path);
        let link = link.map(|l| self.push_text(&l));
        let lock = lock.map(|l| self.push_text(l));
        self.entries.push(Entry {
            path,
            link,
            rev,
            depth,
            start_empty,
            lock,
        });
        Ok(())
    }

    fn push_text(&mut self, s: &str) -> Span {
        // Both fit in u32: `add` keeps the text under `max_bytes`, itself at most u32::MAX.
        let span = Span {
            start: self.text.len() as u32,
            len: s.len() as u32,
        };
        self.text.push_str(s);
        span
    }

    fn str(&self, span: Span) -> &str {
        let start = span.start as usize;
        self.text
            .get(start..start + span.len as usize)
            .unwrap_or_default()
    }

    fn path(&self, index: u32) -> &str {
        self.entries
            .get(index as usize)
            .map_or("", |e| self.str(e.path))
    }
}

/// The order in which the entries after the top-level ones are walked, when it is not their
/// arrival order: every directory's entries must be contiguous, each after the entry of the
/// directory itself, as the stock client sends them (svnserve streams the report and relies on
/// that). A report in another order, or naming a path twice, is put in that order here (the
/// later of two entries for one path wins). Entries for "" beyond the top-level ones are
/// dropped, as svnserve ignores them.
fn walk_order(report: &Report, start: usize) -> Option<Vec<u32>> {
    let rest = report.entries.get(start..).unwrap_or_default();
    if in_walk_order(report, rest) {
        return None;
    }
    // A tree of the reported paths, children in order of first mention.
    struct TreeNode {
        children: Vec<u32>,
        entry: Option<u32>,
    }
    let mut nodes = vec![TreeNode {
        children: Vec::new(),
        entry: None,
    }];
    let mut index: HashMap<(u32, &str), u32> = HashMap::new();
    for (i, e) in rest.iter().enumerate() {
        let path = report.str(e.path);
        if path.is_empty() {
            continue;
        }
        let mut at = 0u32;
        for comp in path.split('/') {
            at = match index.get(&(at, comp)) {
                Some(&child) => child,
                None => {
                    let child = nodes.len() as u32;
                    nodes.push(TreeNode {
                        children: Vec::new(),
                        entry: None,
                    });
                    nodes[at as usize].children.push(child);
                    index.insert((at, comp), child);
                    child
                }
            };
        }
        nodes[at as usize].entry = Some((start + i) as u32);
    }
    drop(index);
    let mut order = Vec::with_capacity(rest.len());
    let mut stack: Vec<u32> = nodes[0].children.iter().rev().copied().collect();
    while let Some(n) = stack.pop() {
        let node = &nodes[n as usize];
        if let Some(e) = node.entry {
            order.push(e);
        }
        stack.extend(node.children.iter().rev().copied());
    }
    Some(order)
}

/// True when `entries` name distinct, non-empty paths and every directory's entries are
/// contiguous and after the directory's own (depth-first order). Memory: the names seen in the
/// directories on the current path only.
fn in_walk_order(report: &Report, entries: &[Entry]) -> bool {
    let mut open: Vec<&str> = Vec::new();
    let mut seen: Vec<HashSet<&str>> = vec![HashSet::new()];
    for e in entries {
        let path = report.str(e.path);
        if path.is_empty() {
            return false;
        }
        let comps: Vec<&str> = path.split('/').collect();
        let common = open.iter().zip(&comps).take_while(|(a, b)| a == b).count();
        if common == comps.len() {
            return false;
        }
        open.truncate(common);
        seen.truncate(common + 1);
        if !seen[common].insert(comps[common]) {
            return false;
        }
        open.push(comps[common]);
        for comp in &comps[common + 1..] {
            seen.push(HashSet::from([*comp]));
            open.push(comp);
        }
        seen.push(HashSet::new());
    }
    true
}

/// A node found in a tree: its kind and node-revision.
#[derive(Debug, Clone, Copy)]
struct Ent {
    kind: NodeKind,
    off: Offset,
}

impl Ent {
    fn of(e: &DirEntry) -> Ent {
        Ent {
            kind: e.kind,
            off: e.node,
        }
    }
}

/// Path-based authorization: whether a repository relpath may be read.
pub type ReadCheck = Box<dyn Fn(&str) -> bool + Send>;

/// A report checked against the repository, ready to drive an editor.
pub struct PreparedDrive {
    repo: Repo,
    opts: ReportOptions,
    report: Report,
    /// Walk order of the entries below the target (None: arrival order from `first`).
    order: Option<Vec<u32>>,
    first: usize,
    /// The entry describing the target (the first, or a second one for "").
    top: u32,
    /// The revision of the report's first entry: the anchor's, sent with `open_root`.
    s_rev: Revnum,
    t_root: Offset,
    t_path: String,
    uuid: Vec<u8>,
    /// The repository's locks (path to token), read from `db/locks` when the first reported
    /// lock token is checked: most reports carry none, and then the file is not read.
    locks: std::sync::OnceLock<HashMap<String, String>>,
    readable: Option<ReadCheck>,
}

impl std::fmt::Debug for PreparedDrive {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreparedDrive")
            .field("opts", &self.opts)
            .field("entries", &self.report.len())
            .field("s_rev", &self.s_rev)
            .field("t_path", &self.t_path)
            .finish_non_exhaustive()
    }
}

fn relpath(what: &str, path: &str) -> Result<String> {
    validate_path(path).map_err(|e| bad_args(format!("{what}: {e}")))
}

/// Checks what svnserve checks before it starts a drive, and answers with a plain failure:
/// the depths, the target revision, and the shape of the report (it must start with
/// `set-path ""`; a second entry for "" only when there is a target).
///
/// Other errors come from [`PreparedDrive::run`], some before its first editor call (the
/// revision of the first entry does not exist, the target path does not exist, the anchor
/// would be replaced); svnserve answers all of those with `abort-edit` and then the failure.
pub fn prepare(repo: &Repo, opts: &ReportOptions, mut report: Report) -> Result<PreparedDrive> {
    if opts.depth == Depth::Exclude {
        return Err(bad_args("Request depth 'exclude' not supported"));
    }
    let anchor = relpath("anchor", &opts.anchor)?;
    let target = relpath("update target", &opts.target)?;
    if target.contains('/') {
        return Err(bad_args(format!(
            "The update target '{target}' is not a single path component"
        )));
    }
    let switch_path = opts
        .switch_path
        .as_deref()
        .map(|p| relpath("switch path", p))
        .transpose()?;
    let youngest = repo.youngest();
    if opts.target_rev > youngest {
        return Err(no_such_revision(opts.target_rev));
    }
    let first = match report.entries.first() {
        Some(e) if report.str(e.path).is_empty() && e.link.is_none() && e.rev.is_some() => *e,
        _ => return Err(bad_report("Invalid report for top level of working copy")),
    };
    let mut top = 0u32;
    if report.entries.len() > 1 && report.path(1).is_empty() {
        if target.is_empty() {
            return Err(bad_report("Two top-level reports with no target"));
        }
        // A delete of the target keeps the depth its set-path gave.
        if report.entries[1].rev.is_none() {
            report.entries[1].depth = first.depth;
        }
        top = 1;
    }
    let start = top as usize + 1;
    let order = walk_order(&report, start);
    let s_rev = first.rev.unwrap_or_default();
    let t_root = repo.root(opts.target_rev)?;
    let t_path = switch_path.unwrap_or_else(|| join(&anchor, &target));
    let uuid = repo.uuid()?.into_bytes();
    let mut opts = opts.clone();
    opts.anchor = anchor;
    opts.target = target;
    Ok(PreparedDrive {
        repo: repo.clone(),
        opts,
        report,
        order,
        first: start,
        top,
        s_rev,
        t_root,
        t_path,
        uuid,
        locks: std::sync::OnceLock::new(),
        readable: None,
    })
}

/// Prepares and runs the drive of `report` (see [`prepare`] and [`PreparedDrive::run`]).
pub fn drive(
    repo: &Repo,
    opts: &ReportOptions,
    report: Report,
    editor: &mut dyn Editor,
) -> Result<()> {
    prepare(repo, opts, report)?.run(editor)
}

impl PreparedDrive {
    /// Path-based authorization (svnserve's authz read function): unreadable target
    /// entries are sent as absent and not descended, unreadable copy sources are not named,
    /// and an unreadable anchor fails the drive before it starts.
    pub fn with_read_check(mut self, readable: ReadCheck) -> Self {
        self.readable = Some(readable);
        self
    }

    fn can_read(&self, path: &str) -> bool {
        self.readable.as_ref().is_none_or(|f| f(path))
    }

    /// Drives `editor` from `target_rev` to `close_edit`. On error the edit is left open for
    /// the caller to abort (svnserve sends `abort-edit`, also when the error came before the
    /// first editor call).
    pub fn run(self, editor: &mut dyn Editor) -> Result<()> {
        let mut d = Driver {
            p: &self,
            editor,
            pos: 0,
            roots: HashMap::new(),
            revinfo: HashMap::new(),
        };
        d.drive()
    }
}

const COMMITTED_REV: &[u8] = b"svn:entry:committed-rev";
const COMMITTED_DATE: &[u8] = b"svn:entry:committed-date";
const LAST_AUTHOR: &[u8] = b"svn:entry:last-author";
const UUID: &[u8] = b"svn:entry:uuid";
const LOCK_TOKEN: &[u8] = b"svn:entry:lock-token";

/// Files larger than this are sent from streams, window by window, instead of from texts held
/// in memory.
const STREAM_ABOVE: u64 = 16 << 20;

/// The node whose properties are being sent.
#[derive(Clone, Copy)]
enum PropTarget {
    Dir(Token),
    File(Token),
}

/// The depth that applies one level further down.
fn below(depth: Depth) -> Depth {
    if depth == Depth::Immediates {
        Depth::Empty
    } else {
        depth
    }
}

/// Whether a target entry must be sent whole because the requested depth makes the working
/// copy deeper than its ambient `wc_depth` (the `U` cells of §5.3's depth rules).
fn is_depth_upgrade(wc_depth: Depth, requested: Depth, kind: NodeKind) -> bool {
    if requested == Depth::Unknown || requested <= wc_depth || wc_depth == Depth::Immediates {
        return false;
    }
    if kind == NodeKind::File && wc_depth == Depth::Files {
        return false;
    }
    !(kind == NodeKind::Dir && wc_depth == Depth::Empty && requested == Depth::Files)
}

/// A directory listing with the names already handled marked off.
struct Listing {
    entries: std::sync::Arc<Vec<DirEntry>>,
    gone: Vec<bool>,
}

impl Listing {
    fn new(entries: std::sync::Arc<Vec<DirEntry>>) -> Listing {
        let gone = vec![false; entries.len()];
        Listing { entries, gone }
    }

    fn index(&self, name: &str) -> Option<usize> {
        self.entries
            .binary_search_by(|e| e.name.as_bytes().cmp(name.as_bytes()))
            .ok()
            .filter(|&i| !self.gone[i])
    }

    fn get(&self, name: &str) -> Option<Ent> {
        self.index(name).map(|i| Ent::of(&self.entries[i]))
    }

    fn remove(&mut self, name: &str) {
        if let Some(i) = self.index(name) {
            self.gone[i] = true;
        }
    }
}

/// svn:date and svn:author of a revision.
type RevInfo = (Option<Vec<u8>>, Option<Vec<u8>>);

struct Driver<'a> {
    p: &'a PreparedDrive,
    editor: &'a mut dyn Editor,
    /// Position in the walk order of the next entry not yet handled (the lookahead).
    pos: usize,
    roots: HashMap<Revnum, Offset>,
    revinfo: HashMap<Revnum, RevInfo>,
}

impl Driver<'_> {
    fn drive(&mut self) -> Result<()> {
        let p = self.p;
        let requested = p.opts.depth;
        let info = p.report.entries[p.top as usize];
        let t_anchor = if p.opts.target.is_empty() {
            p.t_path.as_str()
        } else {
            parent_and_name(&p.t_path).0
        };
        if !p.can_read(t_anchor) {
            return Err(ReposError::svn(
                SvnErrorKind::AuthzRootUnreadable,
                "Not authorized to open root of edit operation",
            ));
        }
        let s_full = join(&p.opts.anchor, &p.opts.target);
        let s_root = self.root_of(p.s_rev)?;
        let s_ent = self.lookup(s_root, &s_full)?;
        let t_ent = self.lookup(p.t_root, &p.t_path)?;
        // A target added in the working copy does not exist in the source.
        let info_is_set_path = info.rev.is_some() && info.link.is_none();
        let s_path = (!info_is_set_path || s_ent.is_some()).then_some(s_full);
        if p.opts.target.is_empty() {
            let Some(t) = t_ent else {
                return Err(ReposError::svn(
                    SvnErrorKind::PathSyntax,
                    format!("Target path '/{}' does not exist", p.t_path),
                ));
            };
            let Some(s) = s_ent.filter(|s| s.kind == NodeKind::Dir && t.kind == NodeKind::Dir)
            else {
                return Err(ReposError::svn(
                    SvnErrorKind::PathSyntax,
                    "Cannot replace a directory from within",
                ));
            };
            self.editor.target_rev(p.opts.target_rev)?;
            let root = self.editor.open_root(Some(p.s_rev))?;
            let source = s_path.as_deref().map(|path| (path, s.off));
            self.delta_dirs(
                p.s_rev,
                source,
                (&p.t_path, t.off),
                root,
                "",
                info.start_empty,
                info.depth,
                requested,
            )?;
            self.editor.close_dir(root)?;
        } else {
            self.editor.target_rev(p.opts.target_rev)?;
            let root = self.editor.open_root(Some(p.s_rev))?;
            self.update_entry(
                p.s_rev,
                s_path,
                s_ent,
                p.t_path.clone(),
                t_ent,
                root,
                &p.opts.target,
                Some(p.top),
                info.depth,
                requested,
            )?;
            self.editor.close_dir(root)?;
        }
        self.editor.close_edit()
    }

    // --- The report, walked like a stream with one entry of lookahead. ---

    fn entry_at(&self, k: usize) -> Option<u32> {
        match &self.p.order {
            Some(order) => order.get(k).copied(),
            None => {
                let i = self.p.first + k;
                (i < self.p.report.entries.len()).then_some(i as u32)
            }
        }
    }

    /// `e_path` (relative to the anchor) as a report path (relative to the target).
    fn report_prefix<'e>(&self, e_path: &'e str) -> &'e str {
        skip_ancestor(&self.p.opts.target, e_path).unwrap_or(e_path)
    }

    /// The next entry's path if it lies below `e_path`.
    fn relevant(&self, e_path: &str) -> Option<(u32, &str)> {
        let index = self.entry_at(self.pos)?;
        let path = self.p.report.path(index);
        let prefix = self.report_prefix(e_path);
        if prefix.is_empty() {
            return Some((index, path));
        }
        let rest = path.strip_prefix(prefix)?.strip_prefix('/')?;
        Some((index, rest))
    }

    /// The next child of `e_path` the report mentions: its name, and its entry when the entry
    /// is for the child itself (and not for something deeper below it).
    fn fetch(&mut self, e_path: &str) -> Option<(String, Option<u32>)> {
        let (index, rest) = self.relevant(e_path)?;
        match rest.split_once('/') {
            Some((name, _)) => Some((name.to_string(), None)),
            None => {
                let name = rest.to_string();
                self.pos += 1;
                Some((name, Some(index)))
            }
        }
    }

    /// Passes over every entry below `e_path`.
    fn skip(&mut self, e_path: &str) {
        while self.relevant(e_path).is_some() {
            self.pos += 1;
        }
    }

    fn any_below(&self, e_path: &str) -> bool {
        self.relevant(e_path).is_some()
    }

    // --- The repository. ---

    fn root_of(&mut self, rev: Revnum) -> Result<Offset> {
        if let Some(&off) = self.roots.get(&rev) {
            return Ok(off);
        }
        let off = self.p.repo.root(rev).map_err(|e| match e {
            svelto_store::StoreError::NoSuchRevision(rev) => no_such_revision(rev),
            other => other.into(),
        })?;
        if self.roots.len() >= 1024 {
            self.roots.clear();
        }
        self.roots.insert(rev, off);
        Ok(off)
    }

    fn lookup(&self, root: Offset, path: &str) -> Result<Option<Ent>> {
        Ok(self
            .p
            .repo
            .lookup_from(root, path)?
            .map(|(off, n)| Ent { kind: n.kind, off }))
    }

    fn lookup_node(&mut self, rev: Revnum, path: &str) -> Result<Option<std::sync::Arc<NodeRev>>> {
        let root = self.root_of(rev)?;
        Ok(self.p.repo.lookup_from(root, path)?.map(|(_, n)| n))
    }

    fn revision_info(&mut self, rev: Revnum) -> Result<RevInfo> {
        if let Some(info) = self.revinfo.get(&rev) {
            return Ok(info.clone());
        }
        let props = self.p.repo.revprops(rev)?;
        let info = (
            props.get(&b"svn:date"[..]).cloned(),
            props.get(&b"svn:author"[..]).cloned(),
        );
        if self.revinfo.len() >= 4096 {
            self.revinfo.clear();
        }
        self.revinfo.insert(rev, info.clone());
        Ok(info)
    }

    /// Whether the repository holds the lock the working copy reported for `path` (a reported
    /// token that is not, or no longer, the path's lock is removed from the working copy).
    fn lock_is_held(&self, path: &str, token: &str) -> Result<bool> {
        let locks = match self.p.locks.get() {
            Some(l) => l,
            None => {
                let read = crate::locks::read_locks(self.p.repo.path())?
                    .into_values()
                    .map(|l| (l.path, l.token))
                    .collect();
                self.p.locks.get_or_init(|| read)
            }
        };
        Ok(locks.get(path).is_some_and(|t| t == token))
    }

    /// Subversion's closest copy: the revision and path of the copy that made the node at
    /// `path` in `rev` what it is (the youngest copy root on the way down, the node's own on a
    /// tie), unless the node was created there from scratch after that copy.
    fn closest_copy(&mut self, rev: Revnum, path: &str) -> Result<Option<(Revnum, String)>> {
        let p = self.p;
        let repo = &p.repo;
        let mut node = repo.node(self.root_of(rev)?)?;
        let mut youngest = node.copyroot.clone();
        if !path.is_empty() {
            for comp in path.split('/') {
                if node.kind != NodeKind::Dir {
                    return Ok(None);
                }
                let entries = repo.dir(&node)?;
                let Ok(i) = entries.binary_search_by(|e| e.name.as_bytes().cmp(comp.as_bytes()))
                else {
                    return Ok(None);
                };
                node = repo.node(entries[i].node)?;
                if node.copyroot.0 >= youngest.0 {
                    youngest = node.copyroot.clone();
                }
            }
        }
        if youngest.0 == 0 {
            return Ok(None);
        }
        let Some(copied) = self.lookup_node(youngest.0, path)? else {
            return Ok(None);
        };
        if copied.node_id != node.node_id
            || (copied.created_rev == youngest.0 && copied.predecessor == 0)
        {
            return Ok(None);
        }
        Ok(Some(youngest))
    }

    /// Subversion's `svn_repos_deleted_rev`: the revision in which `path`, existing in the
    /// older of `a` and `b`, was first deleted (or replaced) before the younger one.
    fn deleted_rev(&mut self, path: &str, a: Revnum, b: Revnum) -> Result<Option<Revnum>> {
        let (mut start, mut end) = if a <= b { (a, b) } else { (b, a) };
        let Some(start_node) = self.lookup_node(start, path)? else {
            return Ok(None);
        };
        if let Some(end_node) = self.lookup_node(end, path)? {
            if end_node.node_id == start_node.node_id {
                match self.closest_copy(end, path)? {
                    Some((copy_rev, _)) if copy_rev > start => {}
                    _ => return Ok(None),
                }
            }
        }
        let mut mid = (start + end) / 2;
        // The range halves every round.
        for _ in 0..130 {
            let Some(node) = self.lookup_node(mid, path)? else {
                end = mid;
                mid = (start + mid) / 2;
                continue;
            };
            let related = node.node_id == start_node.node_id;
            let copied_later = related
                && self
                    .closest_copy(mid, path)?
                    .is_some_and(|(copy_rev, _)| copy_rev > start);
            if !related || copied_later {
                end = mid;
                mid = (start + mid) / 2;
            } else if end - mid == 1 {
                return Ok(Some(end));
            } else {
                start = mid;
                mid = (start + end) / 2;
            }
        }
        Err(ReposError::Invalid(format!(
            "searching the deletion of '{path}' between r{a} and r{b} did not end"
        )))
    }

    // --- The drive. ---

    /// Sends the changes that turn the source entry (`s_path` in `s_rev`, absent when None)
    /// into the target entry (`t_path` in the target revision), as `e_path` inside the
    /// directory `dir`; `info` is the report entry for `e_path`, if any.
    #[allow(clippy::too_many_arguments)]
    fn update_entry(
        &mut self,
        mut s_rev: Revnum,
        mut s_path: Option<String>,
        mut s_ent: Option<Ent>,
        mut t_path: String,
        mut t_ent: Option<Ent>,
        dir: Token,
        e_path: &str,
        info: Option<u32>,
        wc_depth: Depth,
        requested: Depth,
    ) -> Result<()> {
        let p = self.p;
        let info = info.map(|i| p.report.entries[i as usize]);
        if let Some(inf) = info {
            // An update follows switched subtrees into their URLs; a switch replaces them.
            if let (Some(link), None) = (inf.link, &p.opts.switch_path) {
                t_path = p.report.str(link).to_string();
                t_ent = self.lookup(p.t_root, &t_path)?;
            }
            match inf.rev {
                None => {
                    s_path = None;
                    s_ent = None;
                }
                Some(rev) if s_path.is_some() => {
                    if let Some(link) = inf.link {
                        s_path = Some(p.report.str(link).to_string());
                    }
                    s_rev = rev;
                    let root = self.root_of(rev)?;
                    s_ent = self.lookup(root, s_path.as_deref().unwrap_or_default())?;
                }
                Some(_) => {}
            }
        }
        if s_path.is_some() && s_ent.is_none() {
            return Err(ReposError::svn(
                SvnErrorKind::NotFound,
                format!("Working copy path '{e_path}' does not exist in repository"),
            ));
        }

        let mut related = false;
        if let (Some(s), Some(t)) = (s_ent, t_ent) {
            if s.kind == t.kind {
                let (s_node, t_node) = (p.repo.node(s.off)?, p.repo.node(t.off)?);
                let same = s.off == t.off;
                let ancestry = same || s_node.node_id == t_node.node_id;
                // A related file with the same text and properties (a copy) is not sent.
                let mut changed = true;
                if !p.opts.ignore_ancestry && t.kind == NodeKind::File && ancestry && !same {
                    changed =
                        s_node.props_key != t_node.props_key || s_node.text_key != t_node.text_key;
                }
                if (same || !changed)
                    && !self.any_below(e_path)
                    && (requested <= wc_depth || t.kind == NodeKind::File)
                {
                    match info {
                        None => return Ok(()),
                        Some(inf) if !inf.start_empty => match inf.lock {
                            None => return Ok(()),
                            Some(token) => {
                                if self.lock_is_held(&t_path, p.report.str(token))? {
                                    return Ok(());
                                }
                            }
                        },
                        Some(_) => {}
                    }
                }
                related = ancestry || p.opts.ignore_ancestry;
            }
        }

        if s_ent.is_some() && !related {
            let mut deleted = self.deleted_rev(&t_path, s_rev, p.opts.target_rev)?;
            if deleted.is_none() && t_ent.is_some() {
                deleted = p.opts.target_rev.checked_sub(1);
            }
            self.editor.delete_entry(e_path, deleted, dir)?;
            s_path = None;
        }

        let Some(t) = t_ent else {
            self.skip(e_path);
            return Ok(());
        };
        if !p.can_read(&t_path) {
            if t.kind == NodeKind::Dir {
                self.editor.absent_dir(e_path, dir)?;
            } else {
                self.editor.absent_file(e_path, dir)?;
            }
            self.skip(e_path);
            return Ok(());
        }
        let source = match (&s_path, s_ent) {
            (Some(path), Some(s)) if related => Some((path.as_str(), s.off)),
            _ => None,
        };
        if t.kind == NodeKind::Dir {
            let token = if related {
                self.editor.open_dir(e_path, dir, Some(s_rev))?
            } else {
                self.editor.add_dir(e_path, dir, None)?
            };
            self.delta_dirs(
                s_rev,
                source,
                (&t_path, t.off),
                token,
                e_path,
                info.is_some_and(|i| i.start_empty),
                wc_depth,
                requested,
            )?;
            return self.editor.close_dir(token);
        }

        let lock = info.and_then(|i| i.lock).map(|s| p.report.str(s));
        let t_node = p.repo.node(t.off)?;
        let token = if related {
            let token = self.editor.open_file(e_path, dir, Some(s_rev))?;
            self.delta_files(source.map(|s| s.1), &t_node, &t_path, lock, token)?;
            token
        } else {
            let copy = if p.opts.send_copyfrom_args {
                self.copy_source(&t_path)?
            } else {
                None
            };
            let copyfrom = copy
                .as_ref()
                .map(|(rev, path, _)| (format!("/{path}"), *rev));
            let token = self.editor.add_file(
                e_path,
                dir,
                copyfrom.as_ref().map(|(path, rev)| (path.as_str(), *rev)),
            )?;
            self.delta_files(copy.map(|c| c.2), &t_node, &t_path, lock, token)?;
            token
        };
        let md5 = t_node.file_text().md5;
        self.editor.close_file(token, Some(&md5))
    }

    /// The copy source of the file at `t_path` in the target revision when the file itself
    /// was copied there: (revision, path, node-revision).
    fn copy_source(&mut self, t_path: &str) -> Result<Option<(Revnum, String, Offset)>> {
        let t_rev = self.p.opts.target_rev;
        let Some((copy_rev, copy_path)) = self.closest_copy(t_rev, t_path)? else {
            return Ok(None);
        };
        if copy_path != t_path {
            return Ok(None);
        }
        let Some(copied) = self.lookup_node(copy_rev, &copy_path)? else {
            return Ok(None);
        };
        let Some((from_rev, from_path)) = copied.copyfrom.clone() else {
            return Ok(None);
        };
        if !self.p.can_read(&from_path) {
            return Ok(None);
        }
        let root = self.root_of(from_rev)?;
        let from = self.lookup(root, &from_path)?.ok_or_else(|| {
            ReposError::svn(
                SvnErrorKind::NotFound,
                format!("File not found: revision {from_rev}, path '/{from_path}'"),
            )
        })?;
        Ok(Some((from_rev, from_path, from.off)))
    }

    /// Sends the changes inside the directory `dir` (`e_path`) that turn the source directory
    /// (None: absent) into the target directory.
    #[allow(clippy::too_many_arguments)]
    fn delta_dirs(
        &mut self,
        s_rev: Revnum,
        source: Option<(&str, Offset)>,
        target: (&str, Offset),
        dir: Token,
        e_path: &str,
        start_empty: bool,
        wc_depth: Depth,
        requested: Depth,
    ) -> Result<()> {
        let p = self.p;
        let t_node = p.repo.node(target.1)?;
        let prop_source = if start_empty {
            None
        } else {
            source.map(|s| s.1)
        };
        self.delta_proplists(prop_source, &t_node, target.0, None, PropTarget::Dir(dir))?;
        if !(requested > Depth::Empty || requested == Depth::Unknown) {
            return Ok(());
        }
        let mut s_list = match source {
            Some((_, off)) if !start_empty => Some(Listing::new(p.repo.dir(&*p.repo.node(off)?)?)),
            _ => None,
        };
        let mut t_list = Listing::new(p.repo.dir(&t_node)?);

        // First the entries the report mentions, in report order.
        while let Some((name, info_index)) = self.fetch(e_path) {
            let info = info_index.map(|i| p.report.entries[i as usize]);
            let e_full = join(e_path, &name);
            if let Some(inf) = info {
                if inf.rev.is_none() && inf.depth != Depth::Exclude {
                    // Missing from the working copy: forget the source entry, so that the
                    // target entry (if any) is added below, after the deletions.
                    if let Some(s) = s_list.as_mut() {
                        s.remove(&name);
                    }
                    continue;
                }
            }
            let t_ent = t_list.get(&name);
            let s_ent = s_list.as_ref().and_then(|s| s.get(&name));
            let excluded = info.is_some_and(|i| i.depth == Depth::Exclude);
            let dirs_unwanted = requested == Depth::Files
                && (t_ent.is_some_and(|t| t.kind == NodeKind::Dir)
                    || s_ent.is_some_and(|s| s.kind == NodeKind::Dir));
            if !(dirs_unwanted || excluded) {
                self.update_entry(
                    s_rev,
                    source.map(|s| join(s.0, &name)),
                    s_ent,
                    join(target.0, &name),
                    t_ent,
                    dir,
                    &e_full,
                    info_index,
                    info.map_or(below(wc_depth), |i| i.depth),
                    below(requested),
                )?;
            }
            // Entries the walk of this name left below it come back as this name again,
            // now without source and target: svnserve then fails with "does not exist in
            // repository" when there is a source directory, and skips them otherwise.
            t_list.remove(&name);
            // An excluded entry deleted in the repository stays, to be deleted below.
            if let Some(s) = s_list.as_mut() {
                if !excluded || t_ent.is_some() {
                    s.remove(&name);
                }
            }
        }

        // Then the deletions, in name order.
        if let Some(s) = &s_list {
            for (k, s_entry) in s.entries.iter().enumerate() {
                if s.gone[k] || t_list.get(&s_entry.name).is_some() {
                    continue;
                }
                if s_entry.kind == NodeKind::File && wc_depth < Depth::Files {
                    continue;
                }
                if s_entry.kind == NodeKind::Dir
                    && (wc_depth < Depth::Immediates || requested == Depth::Files)
                {
                    continue;
                }
                let e_full = join(e_path, &s_entry.name);
                let deleted =
                    self.deleted_rev(&join(target.0, &s_entry.name), s_rev, p.opts.target_rev)?;
                self.editor.delete_entry(&e_full, deleted, dir)?;
            }
        }

        // Then the rest of the target, in name order.
        for (k, t_entry) in t_list.entries.iter().enumerate() {
            if t_list.gone[k] {
                continue;
            }
            let (s_ent, s_full) = if is_depth_upgrade(wc_depth, requested, t_entry.kind) {
                // The working copy does not have it yet: send it whole.
                (None, None)
            } else {
                if t_entry.kind == NodeKind::File
                    && requested == Depth::Unknown
                    && wc_depth < Depth::Files
                {
                    continue;
                }
                if t_entry.kind == NodeKind::Dir
                    && (wc_depth < Depth::Immediates || requested == Depth::Files)
                {
                    continue;
                }
                let s_ent = s_list.as_ref().and_then(|s| s.get(&t_entry.name));
                let s_full = match (s_ent, source) {
                    (Some(_), Some((s_path, _))) => Some(join(s_path, &t_entry.name)),
                    _ => None,
                };
                (s_ent, s_full)
            };
            self.update_entry(
                s_rev,
                s_full,
                s_ent,
                join(target.0, &t_entry.name),
                Some(Ent::of(t_entry)),
                dir,
                &join(e_path, &t_entry.name),
                None,
                below(wc_depth),
                below(requested),
            )?;
        }
        Ok(())
    }

    fn change_prop(&mut self, node: PropTarget, name: &[u8], value: Option<&[u8]>) -> Result<()> {
        match node {
            PropTarget::Dir(d) => self.editor.change_dir_prop(d, name, value),
            PropTarget::File(f) => self.editor.change_file_prop(f, name, value),
        }
    }

    /// Sends the entry props of the target node, then its properties: all of them when there
    /// is no source, else the difference (nothing when they are equal).
    fn delta_proplists(
        &mut self,
        source: Option<Offset>,
        t_node: &NodeRev,
        t_path: &str,
        lock: Option<&str>,
        node: PropTarget,
    ) -> Result<()> {
        let p = self.p;
        let crev = t_node.created_rev;
        self.change_prop(node, COMMITTED_REV, Some(crev.to_string().as_bytes()))?;
        let (date, author) = self.revision_info(crev)?;
        if date.is_some() || source.is_some() {
            self.change_prop(node, COMMITTED_DATE, date.as_deref())?;
        }
        if author.is_some() || source.is_some() {
            self.change_prop(node, LAST_AUTHOR, author.as_deref())?;
        }
        self.change_prop(node, UUID, Some(&p.uuid))?;
        if let Some(token) = lock {
            if !self.lock_is_held(t_path, token)? {
                self.change_prop(node, LOCK_TOKEN, None)?;
            }
        }

        let mut s_props: Option<PropList> = None;
        if let Some(s_off) = source {
            let s_node = p.repo.node(s_off)?;
            if s_node.props == t_node.props {
                return Ok(());
            }
            let props = p.repo.props(&s_node)?;
            if props == p.repo.props(t_node)? {
                return Ok(());
            }
            s_props = Some(props);
        }
        let t_props = p.repo.props(t_node)?;
        match s_props {
            Some(s_props) if !s_props.is_empty() => {
                for (name, value) in &s_props {
                    match t_props.get(name) {
                        None => self.change_prop(node, name, None)?,
                        Some(v) if v != value => self.change_prop(node, name, Some(v))?,
                        Some(_) => {}
                    }
                }
                for (name, value) in &t_props {
                    if !s_props.contains_key(name) {
                        self.change_prop(node, name, Some(value))?;
                    }
                }
            }
            _ => {
                for (name, value) in &t_props {
                    self.change_prop(node, name, Some(value))?;
                }
            }
        }
        Ok(())
    }

    /// Sends the properties and the text change of an open or added file: the text as a
    /// delta against the source (absent: against nothing), nothing when the contents are the
    /// same.
    fn delta_files(
        &mut self,
        source: Option<Offset>,
        t_node: &NodeRev,
        t_path: &str,
        lock: Option<&str>,
        file: Token,
    ) -> Result<()> {
        self.delta_proplists(source, t_node, t_path, lock, PropTarget::File(file))?;
        let target = t_node.file_text();
        let base = match source {
            Some(off) => {
                let base = self.p.repo.node(off)?.file_text();
                if same_contents(&base, &target) {
                    return Ok(());
                }
                Some(base)
            }
            None => None,
        };
        self.send_file_text(file, base, target)
    }

    fn send_file_text(
        &mut self,
        file: Token,
        base: Option<FileText>,
        target: FileText,
    ) -> Result<()> {
        let p = self.p;
        let repo = &p.repo;
        let opts = self.p.opts.text;
        if !opts.send_deltas {
            let base = base.as_ref().map(|b| (&[][..], &b.md5));
            return send_text(&mut *self.editor, file, base, &[], opts);
        }
        if target.size > STREAM_ABOVE || base.is_some_and(|b| b.size > STREAM_ABOVE) {
            return self.stream_text(file, base, target);
        }
        let text = repo.read_text(&target)?;
        match base {
            Some(b) => {
                let base_text = repo.read_text(&b)?;
                send_text(
                    &mut *self.editor,
                    file,
                    Some((&base_text, &b.md5)),
                    &text,
                    opts,
                )
            }
            None => send_text(&mut *self.editor, file, None, &text, opts),
        }
    }

    /// Sends a text change read from streams: each window of the target is a delta against
    /// the source bytes at the same position, as Subversion's own delta streams are, so memory
    /// stays at two windows whatever the file size.
    fn stream_text(&mut self, file: Token, base: Option<FileText>, target: FileText) -> Result<()> {
        let p = self.p;
        let repo = &p.repo;
        let opts: TextOptions = self.p.opts.text;
        let mut t_reader = repo.text_reader(&target)?;
        let mut s_reader = base.map(|b| repo.text_reader(&b)).transpose()?;
        self.editor
            .apply_textdelta(file, base.as_ref().map(|b| &b.md5))?;
        self.editor
            .textdelta_chunk(file, &stream_header(opts.svndiff_version))?;
        let mut t_buf = vec![0u8; WINDOW_SIZE];
        let mut s_buf = vec![0u8; if s_reader.is_some() { WINDOW_SIZE } else { 0 }];
        let mut s_offset = 0u64;
        let mut chunk = Vec::new();
        loop {
            let t_len = read_full(&mut t_reader, &mut t_buf)?;
            if t_len == 0 {
                break;
            }
            let s_len = match s_reader.as_mut() {
                Some(r) => read_full(r, &mut s_buf)?,
                None => 0,
            };
            let window = if s_len == 0 {
                Window::fulltext(&t_buf[..t_len])
            } else {
                compute_window(&s_buf[..s_len], s_offset, &t_buf[..t_len])
            };
            s_offset += s_len as u64;
            chunk.clear();
            window
                .encode(opts.svndiff_version, 1, &mut chunk)
                .map_err(|e| ReposError::Invalid(format!("encoding a text delta: {e}")))?;
            self.editor.textdelta_chunk(file, &chunk)?;
        }
        self.editor.textdelta_end(file)
    }
}

/// Subversion's strict "contents different" test, by checksums.
fn same_contents(a: &FileText, b: &FileText) -> bool {
    if a.size == 0 && b.size == 0 {
        return true;
    }
    a.size == b.size && a.md5 == b.md5 && a.sha1 == b.sha1
}

fn read_full(r: &mut dyn Read, buf: &mut [u8]) -> Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(err) => {
                return Err(ReposError::Io {
                    context: "reading file contents".into(),
                    err,
                })
            }
        }
    }
    Ok(n)
}
