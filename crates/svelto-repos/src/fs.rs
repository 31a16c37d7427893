//! The filesystem-level history questions Subversion's repository layer asks, answered
//! from the store's node-revisions: the nodes on the way to a path, a node's closest copy
//! and previous location, its origin revision, node history (`svn_fs_history_prev`), and
//! `svn:mergeinfo` with inheritance.
//!
//! Paths here are relpaths ("" = root); errors name fspaths, as Subversion's do.

use crate::error::{ReposError, Result};
use crate::rangelist::{self, Mergeinfo};
use std::collections::HashMap;
use std::sync::Arc;
use svelto_core::{join, skip_ancestor, NodeKind, Revnum};
use svelto_store::{NodeRev, Offset, Repo};

pub(crate) const MERGEINFO: &[u8] = b"svn:mergeinfo";

pub(crate) fn fspath(relpath: &str) -> String {
    format!("/{relpath}")
}

/// A path given by a caller, as a relpath (a leading or trailing slash is tolerated).
pub(crate) fn relpath(path: &str) -> String {
    path.trim_matches('/').to_string()
}

/// The node-revisions from the root down to a path in one revision.
pub(crate) type Chain = Vec<(Offset, Arc<NodeRev>)>;

pub(crate) enum Opened {
    Found(Chain),
    NotFound,
    /// A file stands where a directory is needed; its relpath.
    NotDirectory(String),
}

pub(crate) fn check_rev(repo: &Repo, rev: Revnum) -> Result<()> {
    if rev > repo.youngest() {
        return Err(ReposError::NoSuchRevision(rev));
    }
    Ok(())
}

/// Walks from the root of `rev` to `path`.
pub(crate) fn open_path(repo: &Repo, rev: Revnum, path: &str) -> Result<Opened> {
    check_rev(repo, rev)?;
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

/// Like `open_path`, but a missing path is Subversion's error.
pub(crate) fn require(repo: &Repo, rev: Revnum, path: &str) -> Result<Chain> {
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
pub(crate) fn lookup(repo: &Repo, rev: Revnum, path: &str) -> Result<Option<Arc<NodeRev>>> {
    match open_path(repo, rev, path)? {
        Opened::Found(mut chain) => Ok(chain.pop().map(|(_, n)| n)),
        _ => Ok(None),
    }
}

/// The node at `path@rev`, which must exist.
pub(crate) fn leaf_node(repo: &Repo, rev: Revnum, path: &str) -> Result<Arc<NodeRev>> {
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
        .ok_or_else(|| ReposError::Invalid("empty path chain".into()))
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
    repo: &Repo,
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
    if then.created_rev == copy_rev && then.predecessor == 0 {
        return Ok(None);
    }
    Ok(Some((copy_rev, copy_path)))
}

/// Where `path@rev` was before the copy that most recently affected it: (revision of that
/// copy, path in the copy source, source revision); None if no copy affected it.
pub(crate) fn prev_location(
    repo: &Repo,
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
pub(crate) fn node_origin_rev(repo: &Repo, rev: Revnum, path: &str) -> Result<Revnum> {
    let node_id = leaf(&require(repo, rev, path)?)?.node_id;
    let (mut lo, mut hi) = (0, rev);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if repo.rev_record(mid)?.next_node_id > node_id {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    Ok(lo)
}

/// One position in a node's history (Subversion's `svn_fs_history_t`).
#[derive(Debug, Clone)]
pub(crate) struct NodeHistory {
    path: String,
    rev: Revnum,
    /// This position has been (or is to be) reported.
    interesting: bool,
    /// Set on the destination of a copy: where the history continues.
    copy_source: Option<(String, Revnum)>,
    /// While no copy lies between, history can follow predecessors directly: the revision
    /// of the youngest copy root seen, and the node-revision last reported.
    next_copy: Option<Revnum>,
    current: Option<Offset>,
}

impl NodeHistory {
    /// The history of `path@rev`, before its first step (the path must exist).
    pub(crate) fn new(path: &str, rev: Revnum) -> NodeHistory {
        NodeHistory {
            path: path.to_string(),
            rev,
            interesting: false,
            copy_source: None,
            next_copy: None,
            current: None,
        }
    }

    pub(crate) fn location(&self) -> (&str, Revnum) {
        (&self.path, self.rev)
    }

    /// Steps to the next older interesting location (`svn_fs_history_prev`); false when
    /// the history has ended. `cross_copies` follows the node across copies.
    pub(crate) fn prev(&mut self, repo: &Repo, cross_copies: bool) -> Result<bool> {
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

    fn step(&self, repo: &Repo, cross_copies: bool) -> Result<Option<NodeHistory>> {
        let mut reported = self.interesting;
        if let (Some(next_copy), Some(current)) = (self.next_copy, self.current) {
            if self.rev > next_copy {
                let node = repo.node(current)?;
                if node.predecessor == 0 {
                    return Ok(None);
                }
                let pred = repo.node(node.predecessor)?;
                if pred.created_rev > next_copy {
                    return Ok(Some(NodeHistory {
                        path: pred.created_path.clone(),
                        rev: pred.created_rev,
                        interesting: true,
                        copy_source: None,
                        next_copy: Some(next_copy),
                        current: Some(node.predecessor),
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
                return Ok(Some(NodeHistory {
                    path: node.created_path.clone(),
                    rev,
                    interesting: true,
                    copy_source: None,
                    next_copy: None,
                    current: None,
                }));
            }
            if node.predecessor == 0 {
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
                return Ok(Some(NodeHistory {
                    path: path.to_string(),
                    rev: copy_rev,
                    interesting: !retry,
                    copy_source: Some((join(src_path, rest), *src_rev)),
                    next_copy: None,
                    current: None,
                }));
            }
        }
        Ok(Some(NodeHistory {
            path: node.created_path.clone(),
            rev: node.created_rev,
            interesting: true,
            copy_source: None,
            next_copy: Some(copy_rev),
            current: pred_off,
        }))
    }
}

/// How far up the tree a mergeinfo lookup may go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Inherit {
    /// The path's own mergeinfo, else its nearest ancestor's.
    Inherited,
    /// The nearest ancestor's, never the path's own.
    NearestAncestor,
}

/// `svn:mergeinfo` by property-list offset: None when the property is absent, Some(None)
/// when its value does not parse (which Subversion's lookups treat as no mergeinfo, though
/// it still stops the walk up the tree).
#[derive(Default)]
pub(crate) struct MergeinfoCache {
    parsed: HashMap<Offset, Option<Option<Arc<Mergeinfo>>>>,
}

const MERGEINFO_CACHE_MAX: usize = 4096;

impl MergeinfoCache {
    fn explicit(&mut self, repo: &Repo, node: &NodeRev) -> Result<Option<Option<Arc<Mergeinfo>>>> {
        if node.props == 0 {
            return Ok(None);
        }
        if let Some(v) = self.parsed.get(&node.props) {
            return Ok(v.clone());
        }
        let props = repo.props(node)?;
        let v = props
            .get(MERGEINFO)
            .map(|value| rangelist::parse(value).ok().map(Arc::new));
        if self.parsed.len() >= MERGEINFO_CACHE_MAX {
            self.parsed.clear();
        }
        self.parsed.insert(node.props, v.clone());
        Ok(v)
    }

    /// `svn_fs__get_mergeinfo_for_path`: the mergeinfo of `path@rev`, inherited from the
    /// nearest ancestor that has some; with `adjust`, inherited mergeinfo keeps only its
    /// inheritable ranges and has the path below that ancestor appended to its sources.
    pub(crate) fn for_path(
        &mut self,
        repo: &Repo,
        rev: Revnum,
        path: &str,
        inherit: Inherit,
        adjust: bool,
    ) -> Result<Option<Mergeinfo>> {
        let chain = require(repo, rev, path)?;
        let last = chain.len() - 1;
        let mut i = match inherit {
            Inherit::Inherited => last,
            Inherit::NearestAncestor if last == 0 => return Ok(None),
            Inherit::NearestAncestor => last - 1,
        };
        let mi = loop {
            if let Some(found) = self.explicit(repo, &chain[i].1)? {
                match found {
                    Some(mi) => break mi,
                    None => return Ok(None),
                }
            }
            if i == 0 {
                return Ok(None);
            }
            i -= 1;
        };
        if !adjust || i == last {
            return Ok(Some((*mi).clone()));
        }
        let below: Vec<&str> = path.split('/').skip(i).collect();
        let below = below.join("/");
        Ok(Some(
            rangelist::inheritable_only(&mi)
                .into_iter()
                .map(|(src, ranges)| {
                    let joined = join(src.trim_start_matches('/'), &below);
                    (fspath(&joined), ranges)
                })
                .collect(),
        ))
    }
}

/// The raw `svn:mergeinfo` value of `path@rev` (the path must exist).
pub(crate) fn mergeinfo_prop(repo: &Repo, rev: Revnum, path: &str) -> Result<Option<Vec<u8>>> {
    let chain = require(repo, rev, path)?;
    let node = leaf(&chain)?;
    if node.props == 0 {
        return Ok(None);
    }
    Ok(repo.props(node)?.remove(MERGEINFO))
}
