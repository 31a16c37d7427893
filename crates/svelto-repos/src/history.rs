//! The history of a node, as Subversion's `svn_fs_history_prev` walks it across copies:
//! the revisions in which a line of history was changed, and the revisions in which it was
//! copied without being changed (a branch made by copying a parent directory shows up as
//! the copy of the file, at the copy's path and revision).

use crate::{ReposError, Result};
use std::sync::Arc;
use svelto_core::{skip_ancestor, NodeKind, Revnum};
use svelto_store::{NodeRev, Offset, Repo};

/// A path opened in a revision: its node-revision and the youngest copy root on the way
/// down from the root (Subversion's `find_youngest_copyroot`: a child wins a tie, being
/// the copy that matters for its own history).
pub(crate) struct Opened {
    pub node: Arc<NodeRev>,
    pub copyroot: (Revnum, String),
}

/// Opens `path` in `rev`; None when it does not exist there.
pub(crate) fn open_path(repo: &Repo, rev: Revnum, path: &str) -> Result<Option<Opened>> {
    let mut node = repo.node(repo.root(rev)?)?;
    let mut copyroot = node.copyroot.clone();
    if !path.is_empty() {
        for comp in path.split('/') {
            if node.kind != NodeKind::Dir {
                return Ok(None);
            }
            let entries = repo.dir(&node)?;
            let off: Offset =
                match entries.binary_search_by(|e| e.name.as_bytes().cmp(comp.as_bytes())) {
                    Ok(i) => entries[i].node,
                    Err(_) => return Ok(None),
                };
            node = repo.node(off)?;
            if node.copyroot.0 >= copyroot.0 {
                copyroot = node.copyroot.clone();
            }
        }
    }
    Ok(Some(Opened { node, copyroot }))
}

/// One place in a line of history, and what the walk knows to continue from it.
#[derive(Debug, Clone)]
struct Point {
    path: String,
    rev: Revnum,
    /// Whether this point is one the walk reports (a change or a copy).
    interesting: bool,
    /// Set when the point is the destination of a copy: where history continues.
    copy_source: Option<(String, Revnum)>,
}

/// Walks the history of a node from a revision backwards, crossing copies.
///
/// ```text
/// let mut h = NodeHistory::new(&repo, 12, "branches/b/f.txt")?;
/// while let Some((path, rev)) = h.prev()? { ... }   // youngest first
/// ```
pub struct NodeHistory<'r> {
    repo: &'r Repo,
    at: Option<Point>,
}

impl<'r> NodeHistory<'r> {
    /// Starts at `path` (a relpath) in `rev`; the path must exist there.
    pub fn new(repo: &'r Repo, rev: Revnum, path: &str) -> Result<Self> {
        if open_path(repo, rev, path)?.is_none() {
            return Err(ReposError::NotFound {
                rev,
                path: format!("/{path}"),
            });
        }
        Ok(NodeHistory {
            repo,
            at: Some(Point {
                path: path.to_string(),
                rev,
                interesting: false,
                copy_source: None,
            }),
        })
    }

    /// The next older interesting location (relpath, revision), or None at the start of
    /// the history.
    pub fn prev(&mut self) -> Result<Option<(String, Revnum)>> {
        loop {
            let Some(point) = self.at.take() else {
                return Ok(None);
            };
            let Some(next) = self.step(point)? else {
                return Ok(None);
            };
            let found = next.interesting.then(|| (next.path.clone(), next.rev));
            self.at = Some(next);
            if found.is_some() {
                return Ok(found);
            }
        }
    }

    /// One step of the walk, interesting or not.
    fn step(&self, point: Point) -> Result<Option<Point>> {
        let (path, rev, reported) = match point.copy_source {
            Some((src_path, src_rev)) => (src_path, src_rev, false),
            None => (point.path, point.rev, point.interesting),
        };
        if path.is_empty() {
            // The root changes in every revision and is never copied.
            let rev = if reported {
                rev.checked_sub(1)
            } else {
                Some(rev)
            };
            return Ok(rev.map(|rev| Point {
                path,
                rev,
                interesting: true,
                copy_source: None,
            }));
        }
        let opened = open_path(self.repo, rev, &path)?.ok_or_else(|| ReposError::NotFound {
            rev,
            path: format!("/{path}"),
        })?;
        let mut node = opened.node.clone();
        if node.created_rev == rev {
            if !reported {
                return Ok(Some(Point {
                    path: node.created_path.clone(),
                    rev,
                    interesting: true,
                    copy_source: None,
                }));
            }
            if node.predecessor == 0 {
                return Ok(None);
            }
            node = self.repo.node(node.predecessor)?;
        }
        let (copyroot_rev, copyroot_path) = &opened.copyroot;
        if *copyroot_rev > node.created_rev {
            let dst = open_path(self.repo, *copyroot_rev, copyroot_path)?.ok_or_else(|| {
                ReposError::NotFound {
                    rev: *copyroot_rev,
                    path: format!("/{copyroot_path}"),
                }
            })?;
            if let (Some(rest), Some((src_rev, src_path))) = (
                skip_ancestor(&dst.node.created_path, &path),
                dst.node.copyfrom.as_ref(),
            ) {
                let retry = *copyroot_rev == rev && reported;
                let source = (svelto_core::join(src_path, rest), *src_rev);
                return Ok(Some(Point {
                    path,
                    rev: *copyroot_rev,
                    interesting: !retry,
                    copy_source: Some(source),
                }));
            }
        }
        Ok(Some(Point {
            path: node.created_path.clone(),
            rev: node.created_rev,
            interesting: true,
            copy_source: None,
        }))
    }
}
