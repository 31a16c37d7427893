//! Read queries a server answers about paths in one revision: merge-tracking information
//! (`get-mergeinfo`, Subversion's `svn_repos_fs_get_mergeinfo2` over FSFS) and the
//! properties a path inherits from its parents (`get-iprops`,
//! `svn_repos_fs_get_inherited_props`).
//!
//! Paths in and out are relpaths ("" = the root); error messages name fspaths.

use crate::fs::{node_mergeinfo_prop, open_path, MergeinfoCache, Opened};
use crate::mergeinfo::{self, Mergeinfo};
use crate::{Inherit, ReposError, Result};
use std::collections::BTreeMap;
use std::sync::Arc;
use svelto_core::{fspath, join, NodeKind, PropList, Revnum};
use svelto_fs::{NodeRev, ReadRepo};

/// The mergeinfo of `path` (a relpath) in `rev` as FSFS computes it for one path
/// (`svn_fs__get_mergeinfo_for_path` with inherited mergeinfo adjusted): None when there
/// is none, or when the governing value does not parse. A missing path is
/// [`ReposError::NotFound`], one below a file [`ReposError::NotDirectory`].
pub fn mergeinfo_for_path(
    repo: &dyn ReadRepo,
    rev: Revnum,
    path: &str,
    inherit: Inherit,
) -> Result<Option<Mergeinfo>> {
    // A revision above HEAD is the store's error, as the queries have always said it.
    repo.root(rev)?;
    MergeinfoCache::default().for_path(repo, rev, path, inherit, true)
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
    repo: &dyn ReadRepo,
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
    repo: &dyn ReadRepo,
    rev: Revnum,
    path: &str,
    out: &mut BTreeMap<String, String>,
) -> Result<()> {
    let Opened::Found(chain) = open_path(repo, rev, path)? else {
        return Ok(());
    };
    let Some((_, top)) = chain.last() else {
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
            if let Some(value) = node_mergeinfo_prop(repo, &node)? {
                if let Ok(mi) = mergeinfo::parse(&value) {
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
pub fn inherited_props(
    repo: &dyn ReadRepo,
    path: &str,
    rev: Revnum,
) -> Result<Vec<(String, PropList)>> {
    let Opened::Found(nodes) = open_path(repo, rev, path)? else {
        return Err(ReposError::PathNotFound { path: fspath(path) });
    };
    let comps: Vec<&str> = if path.is_empty() {
        Vec::new()
    } else {
        path.split('/').collect()
    };
    let mut out = Vec::new();
    for (depth, (_, node)) in nodes.iter().enumerate().take(nodes.len() - 1) {
        if node.props.is_none() {
            continue;
        }
        let props = repo.props(node)?;
        if !props.is_empty() {
            out.push((comps[..depth].join("/"), props));
        }
    }
    Ok(out)
}
