//! The filesystem-level questions Subversion's repository layer asks, answered from the
//! store's node-revisions: the nodes on the way to a path (and their youngest copy root),
//! a node's closest copy and previous location, its origin revision, node history
//! (`svn_fs_history_prev`, across copies: a branch made by copying a parent directory
//! shows up as the copy of the file, at the copy's path and revision), and `svn:mergeinfo`
//! with inheritance.
//!
//! Paths here are relpaths ("" = root); errors name fspaths, as Subversion's do.

use crate::error::{ReposError, Result};
use crate::mergeinfo::{self, Mergeinfo};
use std::collections::HashMap;
use std::sync::Arc;
use svelto_core::{compare_paths, fspath, join, skip_ancestor, ChangeKind, NodeKind, Revnum};
use svelto_fs::{NodeRev, NodeRevId, PropsId, ReadRepo, RevMeta};

pub(crate) const MERGEINFO: &[u8] = b"svn:mergeinfo";

/// The node-revisions from the root down to a path in one revision.
pub(crate) type Chain = Vec<(NodeRevId, Arc<NodeRev>)>;

pub(crate) enum Opened {
    Found(Chain),
    NotFound,
    /// A file stands where a directory is needed; its relpath.
    NotDirectory(String),
}

pub(crate) fn check_rev(repo: &dyn ReadRepo, rev: Revnum) -> Result<()> {
    if rev > repo.youngest() {
        return Err(ReposError::NoSuchRevision(rev));
    }
    Ok(())
}

/// Walks from the root of `rev` to `path`. A revision above HEAD is the store's
/// `NoSuchRevision` ([`require`] and [`lookup`] check it first and say
/// [`ReposError::NoSuchRevision`]).
pub(crate) fn open_path(repo: &dyn ReadRepo, rev: Revnum, path: &str) -> Result<Opened> {
    let root = repo.root(rev)?;
    let mut chain: Chain = vec![(root, repo.node(root)?)];
    if path.is_empty() {
        return Ok(Opened::Found(chain));
    }
    let mut so_far = String::new();
    for comp in path.split('/') {
        let Some((_, here)) = chain.last() else {
            return Ok(Opened::NotFound);
        };
        if here.kind != NodeKind::Dir {
            return Ok(Opened::NotDirectory(so_far));
        }
        let entries = repo.dir(here)?;
        let Ok(i) = entries.binary_search_by(|e| e.name.as_bytes().cmp(comp.as_bytes())) else {
            return Ok(Opened::NotFound);
        };
        let off = entries[i].node;
        chain.push((off, repo.node(off)?));
        so_far = join(&so_far, comp);
    }
    Ok(Opened::Found(chain))
}

/// Like `open_path` (the revision checked), but a missing path is Subversion's error.
pub(crate) fn require(repo: &dyn ReadRepo, rev: Revnum, path: &str) -> Result<Chain> {
    check_rev(repo, rev)?;
    match open_path(repo, rev, path)? {
        Opened::Found(chain) => Ok(chain),
        Opened::NotFound => Err(ReposError::NotFound {
            rev,
            path: fspath(path),
        }),
        Opened::NotDirectory(at) => Err(ReposError::NotDirectory {
            rev,
            path: fspath(&at),
        }),
    }
}

/// The node at `path` in `rev`, or None (`svn_fs_check_path` says "none").
pub(crate) fn lookup(repo: &dyn ReadRepo, rev: Revnum, path: &str) -> Result<Option<Arc<NodeRev>>> {
    check_rev(repo, rev)?;
    find(repo, rev, path)
}

/// Like [`lookup`], without checking the revision first (above HEAD is the store's error).
pub(crate) fn find(repo: &dyn ReadRepo, rev: Revnum, path: &str) -> Result<Option<Arc<NodeRev>>> {
    match open_path(repo, rev, path)? {
        Opened::Found(mut chain) => Ok(chain.pop().map(|(_, n)| n)),
        _ => Ok(None),
    }
}

/// The node at `path@rev`, which must exist.
pub(crate) fn leaf_node(repo: &dyn ReadRepo, rev: Revnum, path: &str) -> Result<Arc<NodeRev>> {
    Ok(leaf(&require(repo, rev, path)?)?.clone())
}

pub(crate) fn is_missing(e: &ReposError) -> bool {
    matches!(
        e,
        ReposError::NotFound { .. } | ReposError::NotDirectory { .. }
    )
}

fn leaf(chain: &Chain) -> Result<&Arc<NodeRev>> {
    chain
        .last()
        .map(|(_, n)| n)
        .ok_or_else(|| ReposError::Internal("empty path chain".into()))
}

/// The youngest copy root among the nodes on the way to a path; a child wins a tie with
/// its parent (the copy that made the child is the one relevant to its history).
fn youngest_copyroot(chain: &Chain) -> (Revnum, String) {
    let mut best: (Revnum, &str) = (0, "");
    for (_, n) in chain {
        if n.copyroot.0 >= best.0 {
            best = (n.copyroot.0, &n.copyroot.1);
        }
    }
    (best.0, best.1.to_string())
}

/// The revision and path of the copy that most recently brought `path@rev` (or one of its
/// parents) to where it is, if that copy is relevant to the node (`svn_fs_closest_copy`).
pub(crate) fn closest_copy(
    repo: &dyn ReadRepo,
    rev: Revnum,
    path: &str,
) -> Result<Option<(Revnum, String)>> {
    let chain = require(repo, rev, path)?;
    let node = leaf(&chain)?;
    let (copy_rev, copy_path) = youngest_copyroot(&chain);
    if copy_rev == 0 {
        return Ok(None);
    }
    let Some(then) = lookup(repo, copy_rev, path)? else {
        return Ok(None);
    };
    if then.node_id != node.node_id {
        return Ok(None);
    }
    // A node added below a copy in the copy's own revision was not made by that copy.
    if then.created_rev == copy_rev && then.predecessor.is_none() {
        return Ok(None);
    }
    Ok(Some((copy_rev, copy_path)))
}

/// Where `path@rev` was before the copy that most recently affected it: (revision of that
/// copy, path in the copy source, source revision); None if no copy affected it.
pub(crate) fn prev_location(
    repo: &dyn ReadRepo,
    rev: Revnum,
    path: &str,
) -> Result<Option<(Revnum, String, Revnum)>> {
    let Some((copy_rev, copy_path)) = closest_copy(repo, rev, path)? else {
        return Ok(None);
    };
    let copy_node = leaf(&require(repo, copy_rev, &copy_path)?)?.clone();
    let Some((src_rev, src_path)) = &copy_node.copyfrom else {
        return Ok(None);
    };
    let Some(rest) = skip_ancestor(&copy_path, path) else {
        return Ok(None);
    };
    Ok(Some((copy_rev, join(src_path, rest), *src_rev)))
}

/// The revision in which the node at `path@rev` came into being (`svn_fs_node_origin_rev`):
/// node ids are handed out in revision order, and each revision records the next one.
pub(crate) fn node_origin_rev(repo: &dyn ReadRepo, rev: Revnum, path: &str) -> Result<Revnum> {
    let node_id = leaf(&require(repo, rev, path)?)?.node_id;
    let (mut lo, mut hi) = (0, rev);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if repo.rev_info(mid)?.next_node_id > node_id {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    Ok(lo)
}

/// One position in a node's history (Subversion's `svn_fs_history_t`).
#[derive(Debug, Clone)]
pub(crate) struct History {
    path: String,
    rev: Revnum,
    /// This position has been (or is to be) reported.
    interesting: bool,
    /// Set on the destination of a copy: where the history continues.
    copy_source: Option<(String, Revnum)>,
    /// While no copy lies between, history can follow predecessors directly: the revision
    /// of the youngest copy root seen, and the node-revision last reported.
    next_copy: Option<Revnum>,
    current: Option<NodeRevId>,
    /// Follow the file's line through the revisions' changed-path lists (`db/meta`) instead
    /// of its node-revisions: set when at least a quarter of the revisions since its copy
    /// root changed it.
    dense: bool,
    /// How the revision at this position changed the path, when a changed-path list said,
    /// and that revision's metadata (a log sends it next: no second lookup).
    change: Option<ChangeKind>,
    meta: Option<Arc<RevMeta>>,
}

/// What the changed-path lists say about the version before a file's current one.
enum MetaStep {
    /// The file was changed at this revision, by this node-revision.
    Found(Revnum, NodeRevId, ChangeKind, Arc<RevMeta>),
    /// The current version is where the line began (an add or replace without history).
    First,
    /// Not decided here (a copy, or nothing changed the path since the copy root): the
    /// node-revisions decide.
    Unknown,
}

/// How a revision changed a path: the kind of change, the node-revision it made (0 for a
/// delete) and whether it was a copy.
type ChangedEntry = (ChangeKind, NodeRevId, bool);

/// How `rev` changed `path`, if it did, and the revision's metadata that says so.
fn changed_entry(
    repo: &dyn ReadRepo,
    rev: Revnum,
    path: &str,
) -> Result<(Option<ChangedEntry>, Arc<RevMeta>)> {
    let meta = repo.rev_meta(rev)?;
    let found = meta
        .changes
        .binary_search_by(|c| compare_paths(&c.path, path))
        .ok()
        .map(|i| {
            let c = &meta.changes[i];
            (c.change, c.node, c.copyfrom.is_some())
        });
    Ok((found, meta))
}

impl History {
    /// The history of `path@rev`, before its first step (the path must exist).
    pub(crate) fn new(path: &str, rev: Revnum) -> History {
        History {
            path: path.to_string(),
            rev,
            interesting: false,
            copy_source: None,
            next_copy: None,
            current: None,
            dense: false,
            change: None,
            meta: None,
        }
    }

    pub(crate) fn location(&self) -> (&str, Revnum) {
        (&self.path, self.rev)
    }

    /// The metadata of the revision at this position, when the walk read it to get here.
    pub(crate) fn meta(&self) -> Option<&Arc<RevMeta>> {
        self.meta.as_ref()
    }

    /// Steps to the next older interesting location (`svn_fs_history_prev`); false when
    /// the history has ended. `cross_copies` follows the node across copies.
    pub(crate) fn prev(&mut self, repo: &dyn ReadRepo, cross_copies: bool) -> Result<bool> {
        if self.path.is_empty() {
            // The root changes in every revision and is never copied.
            if !self.interesting {
                self.interesting = true;
                return Ok(true);
            }
            if self.rev == 0 {
                return Ok(false);
            }
            self.rev -= 1;
            return Ok(true);
        }
        loop {
            match self.step(repo, cross_copies)? {
                None => return Ok(false),
                Some(next) => {
                    *self = next;
                    if self.interesting {
                        return Ok(true);
                    }
                }
            }
        }
    }

    fn step(&self, repo: &dyn ReadRepo, cross_copies: bool) -> Result<Option<History>> {
        let mut reported = self.interesting;
        if let (Some(next_copy), Some(current)) = (self.next_copy, self.current) {
            if self.rev > next_copy && self.dense {
                match self.meta_step(repo, next_copy, current)? {
                    MetaStep::First => return Ok(None),
                    MetaStep::Found(rev, node, change, meta) => {
                        return Ok(Some(History {
                            path: self.path.clone(),
                            rev,
                            interesting: true,
                            copy_source: None,
                            next_copy: Some(next_copy),
                            current: Some(node),
                            dense: true,
                            change: Some(change),
                            meta: Some(meta),
                        }))
                    }
                    MetaStep::Unknown => {}
                }
            }
            if self.rev > next_copy {
                let node = repo.node(current)?;
                if node.predecessor.is_none() {
                    return Ok(None);
                }
                let pred = repo.node(node.predecessor)?;
                if pred.created_rev > next_copy {
                    return Ok(Some(History {
                        path: pred.created_path.clone(),
                        rev: pred.created_rev,
                        interesting: true,
                        copy_source: None,
                        next_copy: Some(next_copy),
                        current: Some(node.predecessor),
                        dense: false,
                        change: None,
                        meta: None,
                    }));
                }
            }
        }
        let (path, rev) = match &self.copy_source {
            Some((src_path, src_rev)) => {
                if !cross_copies {
                    return Ok(None);
                }
                reported = false;
                (src_path.as_str(), *src_rev)
            }
            None => (self.path.as_str(), self.rev),
        };
        let chain = require(repo, rev, path)?;
        let mut node = leaf(&chain)?.clone();
        let mut pred_off = None;
        if node.created_rev == rev {
            if !reported {
                return Ok(Some(History {
                    path: node.created_path.clone(),
                    rev,
                    interesting: true,
                    copy_source: None,
                    next_copy: None,
                    current: None,
                    dense: false,
                    change: None,
                    meta: None,
                }));
            }
            if node.predecessor.is_none() {
                return Ok(None);
            }
            pred_off = Some(node.predecessor);
            node = repo.node(node.predecessor)?;
        }
        let (copy_rev, copy_path) = youngest_copyroot(&chain);
        if copy_rev > node.created_rev {
            let copy_node = leaf(&require(repo, copy_rev, &copy_path)?)?.clone();
            if let (Some(rest), Some((src_rev, src_path))) = (
                skip_ancestor(&copy_node.created_path, path),
                &copy_node.copyfrom,
            ) {
                let retry = copy_rev == rev && reported;
                return Ok(Some(History {
                    path: path.to_string(),
                    rev: copy_rev,
                    interesting: !retry,
                    copy_source: Some((join(src_path, rest), *src_rev)),
                    next_copy: None,
                    current: None,
                    dense: false,
                    change: None,
                    meta: None,
                }));
            }
        }
        // A file changed in many revisions since its copy root (a ChangeLog) is followed
        // through the changed-path lists, which its log reads anyway, rather than through
        // node-revisions spread over the whole data file (one random read each when cold).
        let span = node.created_rev.saturating_sub(copy_rev);
        let dense = node.kind == NodeKind::File && node.pred_count.saturating_mul(4) >= span;
        Ok(Some(History {
            path: node.created_path.clone(),
            rev: node.created_rev,
            interesting: true,
            copy_source: None,
            next_copy: Some(copy_rev),
            current: pred_off,
            dense,
            change: None,
            meta: None,
        }))
    }

    /// The version before this one of a file whose line has no copy after `next_copy`,
    /// from the changed-path lists: the youngest earlier revision that changed the path
    /// (within that range every version of the line was made at this path, and a revision
    /// makes a new version of a file exactly when it lists the path as changed).
    fn meta_step(
        &self,
        repo: &dyn ReadRepo,
        next_copy: Revnum,
        current: NodeRevId,
    ) -> Result<MetaStep> {
        let change = match self.change {
            Some(c) => c,
            None => match changed_entry(repo, self.rev, &self.path)?.0 {
                Some((change, node, false)) if node == current => change,
                _ => return Ok(MetaStep::Unknown),
            },
        };
        match change {
            ChangeKind::Add | ChangeKind::Replace => return Ok(MetaStep::First),
            ChangeKind::Delete => return Ok(MetaStep::Unknown),
            ChangeKind::Modify => {}
        }
        for rev in (next_copy + 1..self.rev).rev() {
            if let (Some((change, node, copied)), meta) = changed_entry(repo, rev, &self.path)? {
                if change == ChangeKind::Delete || node.is_none() || copied {
                    return Ok(MetaStep::Unknown);
                }
                return Ok(MetaStep::Found(rev, node, change, meta));
            }
        }
        Ok(MetaStep::Unknown)
    }
}

/// Walks the history of a node from a revision backwards, crossing copies.
///
/// ```text
/// let mut h = NodeHistory::new(&repo, 12, "branches/b/f.txt")?;
/// while let Some((path, rev)) = h.prev()? { ... }   // youngest first
/// ```
pub struct NodeHistory<'r> {
    repo: &'r dyn ReadRepo,
    at: History,
}

impl<'r> NodeHistory<'r> {
    /// Starts at `path` (a relpath) in `rev`; the path must exist there.
    pub fn new(repo: &'r dyn ReadRepo, rev: Revnum, path: &str) -> Result<Self> {
        if find(repo, rev, path)?.is_none() {
            return Err(ReposError::NotFound {
                rev,
                path: fspath(path),
            });
        }
        Ok(NodeHistory {
            repo,
            at: History::new(path, rev),
        })
    }

    /// The next older interesting location (relpath, revision), or None at the start of
    /// the history.
    pub fn prev(&mut self) -> Result<Option<(String, Revnum)>> {
        Ok(self.prev_node()?.map(|(path, rev, _)| (path, rev)))
    }

    /// [`NodeHistory::prev`] with the node-revision at that location when the walk read it
    /// on the way (its offset), so a caller need not look the path up again.
    pub(crate) fn prev_node(&mut self) -> Result<Option<(String, Revnum, Option<NodeRevId>)>> {
        if !self.at.prev(self.repo, true)? {
            return Ok(None);
        }
        let (path, rev) = self.at.location();
        Ok(Some((path.to_string(), rev, self.at.current)))
    }
}

/// Which mergeinfo a query wants (Subversion's `svn_mergeinfo_inheritance_t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inherit {
    /// Only the path's own `svn:mergeinfo`.
    Explicit,
    /// The path's own, else the nearest ancestor's, as the path inherits it.
    Inherited,
    /// The nearest ancestor's (never the path's own), as the path inherits it.
    NearestAncestor,
}

impl Inherit {
    /// The wire word (`explicit`, `inherited`, `nearest-ancestor`); any other word means
    /// explicit, as in Subversion's `svn_inheritance_from_word`.
    pub fn from_word(word: &str) -> Inherit {
        match word {
            "inherited" => Inherit::Inherited,
            "nearest-ancestor" => Inherit::NearestAncestor,
            _ => Inherit::Explicit,
        }
    }

    pub fn as_word(self) -> &'static str {
        match self {
            Inherit::Explicit => "explicit",
            Inherit::Inherited => "inherited",
            Inherit::NearestAncestor => "nearest-ancestor",
        }
    }
}

/// `svn:mergeinfo` by property-list offset: None when the property is absent, Some(None)
/// when its value does not parse (which Subversion's lookups treat as no mergeinfo, though
/// it still stops the walk up the tree).
#[derive(Default)]
pub(crate) struct MergeinfoCache {
    parsed: HashMap<PropsId, Option<Option<Arc<Mergeinfo>>>>,
}

const MERGEINFO_CACHE_MAX: usize = 4096;

impl MergeinfoCache {
    fn explicit(
        &mut self,
        repo: &dyn ReadRepo,
        node: &NodeRev,
    ) -> Result<Option<Option<Arc<Mergeinfo>>>> {
        if node.props.is_none() {
            return Ok(None);
        }
        if let Some(v) = self.parsed.get(&node.props) {
            return Ok(v.clone());
        }
        let v = node_mergeinfo_prop(repo, node)?
            .map(|value| mergeinfo::parse(&value).ok().map(Arc::new));
        if self.parsed.len() >= MERGEINFO_CACHE_MAX {
            self.parsed.clear();
        }
        self.parsed.insert(node.props, v.clone());
        Ok(v)
    }

    /// `svn_fs__get_mergeinfo_for_path`: the mergeinfo of `path@rev` (the path must
    /// exist), its own or inherited from the nearest ancestor that has some, as `inherit`
    /// asks. None when there is none or the governing value does not parse. With `adjust`,
    /// inherited mergeinfo keeps only its inheritable ranges and has the path below that
    /// ancestor appended to its sources.
    pub(crate) fn for_path(
        &mut self,
        repo: &dyn ReadRepo,
        rev: Revnum,
        path: &str,
        inherit: Inherit,
        adjust: bool,
    ) -> Result<Option<Mergeinfo>> {
        let chain = require(repo, rev, path)?;
        let last = chain.len() - 1;
        let (mut i, lowest) = match inherit {
            Inherit::Explicit => (last, last),
            Inherit::Inherited => (last, 0),
            Inherit::NearestAncestor if last == 0 => return Ok(None),
            Inherit::NearestAncestor => (last - 1, 0),
        };
        let mi = loop {
            if let Some(found) = self.explicit(repo, &chain[i].1)? {
                match found {
                    Some(mi) => break mi,
                    None => return Ok(None),
                }
            }
            if i == lowest {
                return Ok(None);
            }
            i -= 1;
        };
        if !adjust || i == last {
            return Ok(Some((*mi).clone()));
        }
        let below: Vec<&str> = path.split('/').skip(i).collect();
        Ok(Some(mergeinfo::inherited_by(&mi, &below.join("/"))))
    }
}

/// The raw `svn:mergeinfo` value of a node.
pub(crate) fn node_mergeinfo_prop(repo: &dyn ReadRepo, node: &NodeRev) -> Result<Option<Vec<u8>>> {
    if node.props.is_none() {
        return Ok(None);
    }
    Ok(repo.props(node)?.remove(MERGEINFO))
}

/// The raw `svn:mergeinfo` value of `path@rev` (the path must exist).
pub(crate) fn mergeinfo_prop(
    repo: &dyn ReadRepo,
    rev: Revnum,
    path: &str,
) -> Result<Option<Vec<u8>>> {
    let chain = require(repo, rev, path)?;
    node_mergeinfo_prop(repo, leaf(&chain)?)
}
