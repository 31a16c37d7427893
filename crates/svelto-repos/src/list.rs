//! `svn ls`: Subversion's `svn_repos_list` walk, as svnserve's `list` command and
//! mod_dav_svn's list report both answer it: the path itself, then depth-first, children in
//! name order, each subdirectory's entries right after its own; names filtered by glob
//! patterns (case-folded), unreadable entries skipped and not descended.

use crate::authz::fnmatch;
use crate::node::{ListedNode, Node};
use crate::Result;
use std::sync::Arc;
use svelto_core::{parent_and_name, Depth, NodeKind, Revnum};
use svelto_fs::ReadRepo;

/// Which fields of a directory entry a client asked for (Subversion's `SVN_DIRENT_*`
/// flags): what `get-dir`, `list` and `stat` over svn:// and the list report over HTTP
/// send; each front end reads its own spelling of the request into it.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct DirentFields {
    pub kind: bool,
    pub size: bool,
    pub has_props: bool,
    pub created_rev: bool,
    pub time: bool,
    pub author: bool,
}

impl DirentFields {
    /// Every field (`SVN_DIRENT_ALL`).
    pub const ALL: DirentFields = DirentFields {
        kind: true,
        size: true,
        has_props: true,
        created_rev: true,
        time: true,
        author: true,
    };

    /// Only the node kind: nothing that needs the node's properties or revision.
    pub fn only_kind(&self) -> bool {
        self.kind && !(self.size || self.has_props || self.created_rev || self.time || self.author)
    }
}

/// Walks `path` in `rev` to `depth`, giving each listed entry (its relpath and what it is)
/// to `receiver`. `patterns` None lists every name; an entry whose name matches none is not
/// given, but a directory is still descended. A missing path is
/// [`crate::ReposError::NotFound`]-like: `Path '/PATH' not found` (SVN_ERR_FS_NOT_FOUND).
pub fn list(
    repo: &dyn ReadRepo,
    path: &str,
    rev: Revnum,
    depth: Depth,
    patterns: Option<&[Vec<u8>]>,
    readable: Option<&dyn Fn(&str) -> bool>,
    receiver: &mut dyn FnMut(&str, &ListedNode) -> Result<()>,
) -> Result<()> {
    let Some((_, node)) = repo.lookup(rev, path)? else {
        return Err(crate::ReposError::svn(
            crate::SvnErrorKind::NotFound,
            format!("Path '/{path}' not found"),
        ));
    };
    // Names are matched case-folded, as svn_utf__fuzzy_glob_match does (it also strips
    // accents, which this does not).
    let matches = |name: &str| match patterns {
        None => true,
        Some(ps) => {
            let folded = name.to_lowercase();
            ps.iter().any(|p| fnmatch(p, folded.as_bytes()))
        }
    };
    let node = Node(node, Arc::from(path));
    if matches(parent_and_name(path).1) {
        receiver(path, &ListedNode::from(&node))?;
    }
    if node.kind() != NodeKind::Dir || depth == Depth::Empty {
        return Ok(());
    }
    // Each directory's entries are walked in place (its shared listing and what each entry
    // is, an index); a child's path is built in one buffer, kept only for a directory that
    // is descended.
    let (entries, listed) = repo.listed(node.0.entries)?;
    let mut stack = vec![(path.to_string(), entries, listed, 0usize)];
    let mut child_path = String::new();
    while let Some((dir_path, entries, listed, i)) = stack.last_mut() {
        let (Some(e), Some(&what)) = (entries.get(*i), listed.get(*i)) else {
            stack.pop();
            continue;
        };
        *i += 1;
        if depth == Depth::Files && e.kind == NodeKind::Dir {
            continue;
        }
        child_path.clear();
        if !dir_path.is_empty() {
            child_path.push_str(dir_path);
            child_path.push('/');
        }
        child_path.push_str(&e.name);
        if readable.is_some_and(|f| !f(&child_path)) {
            continue;
        }
        if matches(&e.name) {
            receiver(&child_path, &ListedNode(what))?;
        }
        if e.kind == NodeKind::Dir && depth == Depth::Infinity {
            let (entries, listed) = repo.listed(what.entries)?;
            stack.push((child_path.clone(), entries, listed, 0));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::fnmatch;

    /// `svn ls --search` globs: shell-style (`*`, `?`, `[...]`, `\x`) against a whole name
    /// (apr_fnmatch without flags; the same matcher authz globs use).
    #[test]
    fn globs() {
        assert!(fnmatch(b"*.c", b"main.c"));
        assert!(!fnmatch(b"*.c", b"main.h"));
        assert!(fnmatch(b"a?c", b"abc"));
        assert!(fnmatch(b"[a-c]x", b"bx"));
        assert!(!fnmatch(b"[!a-c]x", b"bx"));
        assert!(fnmatch(b"*", b""));
        assert!(fnmatch(b"a*b*c", b"aXXbYYc"));
        assert!(!fnmatch(b"a*b*c", b"aXXbYY"));
    }
}
