//! Read queries a server answers about paths in one revision: merge-tracking information
//! (`get-mergeinfo`, Subversion's `svn_repos_fs_get_mergeinfo2` over FSFS) and the
//! properties a path inherits from its parents (`get-iprops`,
//! `svn_repos_fs_get_inherited_props`).
//!
//! Paths in and out are relpaths ("" = the root); error messages name fspaths.

use crate::mergeinfo::{self, MergeinfoMap};
use crate::{ReposError, Result};
use std::collections::BTreeMap;
use std::sync::Arc;
use svelto_core::{join, NodeKind, PropList, Revnum};
use svelto_store::{NodeRev, Repo};

const MERGEINFO_PROP: &[u8] = b"svn:mergeinfo";

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

/// Why a path could not be opened.
enum Missing {
    /// A component does not exist.
    NotFound,
    /// The first this many components name a file, and more follow.
    ThroughFile(usize),
}

/// The node-revisions from the root down to `path` in `rev` (root first).
fn open_nodes(
    repo: &Repo,
    rev: Revnum,
    path: &str,
) -> Result<std::result::Result<Vec<Arc<NodeRev>>, Missing>> {
    let mut nodes = vec![repo.node(repo.root(rev)?)?];
    if path.is_empty() {
        return Ok(Ok(nodes));
    }
    for comp in path.split('/') {
        let Some(node) = nodes.last() else {
            return Ok(Err(Missing::NotFound));
        };
        if node.kind != NodeKind::Dir {
            return Ok(Err(Missing::ThroughFile(nodes.len() - 1)));
        }
        let entries = repo.dir(node)?;
        match entries.binary_search_by(|e| e.name.as_bytes().cmp(comp.as_bytes())) {
            Ok(i) => {
                let next = repo.node(entries[i].node)?;
                nodes.push(next);
            }
            Err(_) => return Ok(Err(Missing::NotFound)),
        }
    }
    Ok(Ok(nodes))
}

/// Like `open_nodes`, with None for any missing path.
fn nodes_on_path(repo: &Repo, rev: Revnum, path: &str) -> Result<Option<Vec<Arc<NodeRev>>>> {
    Ok(open_nodes(repo, rev, path)?.ok())
}

/// The `svn:mergeinfo` value of a node, if it has one.
fn mergeinfo_prop(repo: &Repo, node: &NodeRev) -> Result<Option<Vec<u8>>> {
    if node.props == 0 {
        return Ok(None);
    }
    Ok(repo.props(node)?.remove(MERGEINFO_PROP))
}

/// The mergeinfo of `path` (a relpath) in `rev` as FSFS computes it for one path
/// (`svn_fs__get_mergeinfo_for_path` with inherited mergeinfo adjusted): None when there
/// is none, or when the governing value does not parse. A missing path is
/// [`ReposError::NotFound`], one below a file [`ReposError::NotDirectory`].
pub fn mergeinfo_for_path(
    repo: &Repo,
    rev: Revnum,
    path: &str,
    inherit: Inherit,
) -> Result<Option<MergeinfoMap>> {
    let nodes = match open_nodes(repo, rev, path)? {
        Ok(nodes) => nodes,
        Err(Missing::NotFound) => {
            return Err(ReposError::NotFound {
                rev,
                path: format!("/{path}"),
            })
        }
        Err(Missing::ThroughFile(depth)) => {
            let file: Vec<&str> = path.split('/').take(depth).collect();
            return Err(ReposError::NotDirectory {
                rev,
                path: format!("/{}", file.join("/")),
            });
        }
    };
    let target = nodes.len() - 1;
    let (first, last) = match inherit {
        Inherit::Explicit => (target, target),
        Inherit::Inherited => (0, target),
        Inherit::NearestAncestor if target == 0 => return Ok(None),
        Inherit::NearestAncestor => (0, target - 1),
    };
    for i in (first..=last).rev() {
        let Some(value) = mergeinfo_prop(repo, &nodes[i])? else {
            continue;
        };
        let Ok(mi) = mergeinfo::parse_svn(&value) else {
            return Ok(None);
        };
        if i == target {
            return Ok(Some(mi));
        }
        // Components of `path` below the ancestor at depth i.
        let rel: Vec<&str> = path.split('/').skip(i).collect();
        return Ok(Some(mergeinfo::inherited_by(&mi, &rel.join("/"))));
    }
    Ok(None)
}

/// Subversion's `get-mergeinfo`: for each of `paths` (relpaths) in `rev` (HEAD when None),
/// its mergeinfo as `inherit` asks, and with `include_descendants` also the explicit
/// mergeinfo of every path below it. The result maps a path as given (descendants: the
/// given path joined with their path below it) to the `svn:mergeinfo` text.
///
/// As FSFS: a path whose mergeinfo is empty after inheritance (an ancestor with only
/// non-inheritable ranges, or an explicitly empty value) is present with the empty string;
/// a path without any mergeinfo, or whose governing value does not parse, is absent.
/// A missing path is [`ReposError::NotFound`] (one below a file
/// [`ReposError::NotDirectory`]); a revision above HEAD is `StoreError::NoSuchRevision`.
/// The first failing path fails the whole query (svnserve, having started its answer,
/// sends a broken response then).
pub fn get_mergeinfo(
    repo: &Repo,
    paths: &[String],
    rev: Option<Revnum>,
    inherit: Inherit,
    include_descendants: bool,
) -> Result<BTreeMap<String, String>> {
    let rev = rev.unwrap_or_else(|| repo.youngest());
    repo.root(rev)?;
    let mut out = BTreeMap::new();
    for path in paths {
        if let Some(mi) = mergeinfo_for_path(repo, rev, path, inherit)? {
            out.insert(path.clone(), mergeinfo::to_svn_string(&mi));
        }
        if include_descendants {
            descendant_mergeinfo(repo, rev, path, &mut out)?;
        }
    }
    Ok(out)
}

/// Adds the explicit, parseable mergeinfo of every node below `path` to `out`.
fn descendant_mergeinfo(
    repo: &Repo,
    rev: Revnum,
    path: &str,
    out: &mut BTreeMap<String, String>,
) -> Result<()> {
    let Some(nodes) = nodes_on_path(repo, rev, path)? else {
        return Ok(());
    };
    let Some(top) = nodes.last() else {
        return Ok(());
    };
    let mut stack: Vec<(String, Arc<NodeRev>)> = vec![(path.to_string(), top.clone())];
    while let Some((dir_path, dir)) = stack.pop() {
        if dir.kind != NodeKind::Dir {
            continue;
        }
        for entry in repo.dir(&dir)?.iter() {
            let node = repo.node(entry.node)?;
            let child = join(&dir_path, &entry.name);
            if let Some(value) = mergeinfo_prop(repo, &node)? {
                if let Ok(mi) = mergeinfo::parse_svn(&value) {
                    out.insert(child.clone(), mergeinfo::to_svn_string(&mi));
                }
            }
            if node.kind == NodeKind::Dir {
                stack.push((child, node));
            }
        }
    }
    Ok(())
}

/// Subversion's `get-iprops`: the properties `path` (a relpath) inherits in `rev`, one
/// entry per ancestor that has any properties, the root first, each named by its relpath
/// ("" for the root). The path's own properties are not included. A missing path is
/// [`ReposError::PathNotFound`], as svnserve words it.
pub fn inherited_props(repo: &Repo, path: &str, rev: Revnum) -> Result<Vec<(String, PropList)>> {
    let nodes = nodes_on_path(repo, rev, path)?.ok_or_else(|| ReposError::PathNotFound {
        path: format!("/{path}"),
    })?;
    let comps: Vec<&str> = if path.is_empty() {
        Vec::new()
    } else {
        path.split('/').collect()
    };
    let mut out = Vec::new();
    for (depth, node) in nodes.iter().enumerate().take(nodes.len() - 1) {
        if node.props == 0 {
            continue;
        }
        let props = repo.props(node)?;
        if !props.is_empty() {
            out.push((comps[..depth].join("/"), props));
        }
    }
    Ok(out)
}
