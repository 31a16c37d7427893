//! The client's report: `set-path`, `link-path` and `delete-path` entries collected under
//! limits, checked, and put in the order the drive walks them.

use super::ReportLimits;
use crate::error::{ReposError, Result, SvnErrorKind};
use std::collections::{HashMap, HashSet};
use svelto_core::{validate_path, Depth, NodeKind, Revnum};
use svelto_fs::{DirEntry, NodeRevId};

/// A byte range of [`Report::text`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Span {
    pub(super) start: u32,
    pub(super) len: u32,
}

/// One report entry; `rev` None is a `delete-path`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Entry {
    pub(super) path: Span,
    pub(super) link: Option<Span>,
    pub(super) rev: Option<Revnum>,
    pub(super) depth: Depth,
    pub(super) start_empty: bool,
    pub(super) lock: Option<Span>,
}

/// The working copy as the client describes it, built entry by entry as report commands
/// arrive. Paths are as the client sends them: relative to the update target, "" being the
/// target itself.
#[derive(Debug, Clone)]
pub struct Report {
    pub(super) entries: Vec<Entry>,
    /// Every path, link path and lock token, back to back (one allocation, not one each).
    pub(super) text: String,
    pub(super) limits: ReportLimits,
}

impl Default for Report {
    fn default() -> Self {
        Report::new()
    }
}

pub(super) fn bad_args(message: impl Into<String>) -> ReposError {
    ReposError::svn(SvnErrorKind::BadArgs, message)
}

pub(super) fn bad_report(message: impl Into<String>) -> ReposError {
    ReposError::svn(SvnErrorKind::BadRevisionReport, message)
}

pub(super) fn no_such_revision(rev: Revnum) -> ReposError {
    ReposError::svn(
        SvnErrorKind::NoSuchRevision,
        format!("No such revision {rev}"),
    )
}

pub(super) fn report_depth(depth: Depth) -> Result<Depth> {
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

    pub(super) fn add(
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

    pub(super) fn push_text(&mut self, s: &str) -> Span {
        // Both fit in u32: `add` keeps the text under `max_bytes`, itself at most u32::MAX.
        let span = Span {
            start: self.text.len() as u32,
            len: s.len() as u32,
        };
        self.text.push_str(s);
        span
    }

    pub(super) fn str(&self, span: Span) -> &str {
        let start = span.start as usize;
        self.text
            .get(start..start + span.len as usize)
            .unwrap_or_default()
    }

    pub(super) fn path(&self, index: u32) -> &str {
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
pub(super) fn walk_order(report: &Report, start: usize) -> Option<Vec<u32>> {
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
pub(super) fn in_walk_order(report: &Report, entries: &[Entry]) -> bool {
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
pub(super) struct Ent {
    pub(super) kind: NodeKind,
    pub(super) off: NodeRevId,
}

impl Ent {
    pub(super) fn of(e: &DirEntry) -> Ent {
        Ent {
            kind: e.kind,
            off: e.node,
        }
    }
}
