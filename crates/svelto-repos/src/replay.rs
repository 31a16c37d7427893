//! Replay of one revision through an [`Editor`]: the drive svnserve sends for `replay` and
//! `replay-range` (Subversion's `svn_repos_replay2`), which `svnsync sync` and
//! `svnrdump dump` turn back into commits and dumpfiles (`docs/formats/svn-protocol.md` §4.6).
//!
//! The drive follows the revision's changed paths in Subversion's path order, opening and
//! closing the directories between them, and replays each change as an action: deletes,
//! adds (with their copy source when the receiver has it), replaces (a delete, then an add),
//! and opens of modified nodes with their property and text changes. It is not a tree
//! delta: what it sends is how the revision was made, not the shortest way to its tree.
//!
//! What svnserve sends around the drive is the caller's: `finish-replay` after it (a replay
//! drive never calls `close_edit`), for `replay-range` the revision properties before each
//! drive, and `abort-edit` when the drive fails.

use crate::editor::{send_text, Editor, TextOptions, Token};
use crate::error::{ReposError, Result};
use crate::log::Readable;
use std::collections::HashMap;
use std::sync::Arc;
use svelto_core::{
    compare_paths, fspath, is_ancestor, join, parent_and_name, skip_ancestor, ChangeKind, NodeKind,
    PropList, Revnum,
};
use svelto_fs::{Change, FileText, NodeRev, NodeRevId, ReadRepo, StoreError, DELTA_MAX};

/// The parameters of one replay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayOptions {
    /// The relpath the session is rooted at ("" for the repository root; slashes around it
    /// are ignored). Only changes at or below it, or to its parent directories, are replayed.
    /// Paths in the drive stay relative to the repository root, as svnserve sends them:
    /// `svnsync` and `svnrdump` of `svn://host/repo/trunk` see `trunk/a.txt`.
    pub base_dir: String,
    /// Copies from revisions older than this are sent as plain adds with all their contents
    /// (the receiver does not have the source). 0 keeps every copy whose source is below
    /// `base_dir`.
    pub low_water_mark: Revnum,
    /// True: property changes as differences and texts as deltas against the previous
    /// version or the copy source. False: each property change is one `change_*_prop` with
    /// an empty name and no value, and each text change is an svndiff stream of the 4-byte
    /// header alone, without base checksum (copies sent as plain adds still carry their
    /// full properties and texts).
    pub send_deltas: bool,
    /// Only `svndiff_version` is used; `send_deltas` above decides what is sent.
    pub text: TextOptions,
}

/// Replays revision `rev` into `editor`: `target_rev`, then the drive (nothing more for
/// revision 0 or a revision without changes under `base_dir`). Never calls `close_edit` or
/// `abort_edit`. A revision past the youngest is `StoreError::NoSuchRevision`, before any
/// editor call.
pub fn replay(
    repo: &dyn ReadRepo,
    rev: Revnum,
    opts: &ReplayOptions,
    editor: &mut dyn Editor,
) -> Result<()> {
    replay_authz(repo, rev, opts, None, editor)
}

/// [`replay`] for a user who may not read every path (`svn_repos_replay2` with an authz
/// function): changes to unreadable paths are left out; a copy from an unreadable source
/// is sent as an add without history with the copy's readable contents; a delete is sent
/// only when the deleted path was readable (under a copy: its source); unreadable entries
/// of a copied directory sent as a plain add are left out.
pub fn replay_authz(
    repo: &dyn ReadRepo,
    rev: Revnum,
    opts: &ReplayOptions,
    readable: Option<Readable<'_>>,
    editor: &mut dyn Editor,
) -> Result<()> {
    let root = repo.root(rev)?;
    if rev == 0 {
        return editor.target_rev(0);
    }
    let base_dir = opts.base_dir.trim_matches('/');
    let meta = repo.rev_meta(rev)?;
    let mut changes: Vec<Change> = meta
        .changes
        .iter()
        .filter(|c| readable.is_none_or(|r| r(&c.path)))
        .filter(|c| is_ancestor(base_dir, &c.path) || is_ancestor(&c.path, base_dir))
        .cloned()
        .collect();
    changes.sort_by(|a, b| compare_paths(&a.path, &b.path));
    let paths: Vec<String> = changes.iter().map(|c| c.path.clone()).collect();
    editor.target_rev(rev)?;
    let mut r = Replayer {
        repo,
        rev,
        root,
        base_dir,
        low_water_mark: opts.low_water_mark,
        send_deltas: opts.send_deltas,
        svndiff_version: opts.text.svndiff_version,
        editor,
        pending: changes.into_iter().map(|c| (c.path.clone(), c)).collect(),
        copies: Vec::new(),
        readable,
    };
    r.drive(&paths)
}

/// A directory added with history that the drive is inside of, and where its unchanged
/// contents come from (None: an add without history nested in such a copy).
struct CopyScope {
    path: String,
    from: Option<(Revnum, String)>,
}

struct Replayer<'a> {
    repo: &'a dyn ReadRepo,
    rev: Revnum,
    root: NodeRevId,
    base_dir: &'a str,
    low_water_mark: Revnum,
    send_deltas: bool,
    svndiff_version: u8,
    editor: &'a mut dyn Editor,
    /// Changed paths not replayed yet; a copy sent as a plain add takes the changes inside it.
    pending: HashMap<String, Change>,
    copies: Vec<CopyScope>,
    /// The user's read check (None: everything readable).
    readable: Option<Readable<'a>>,
}

/// The longest common ancestor of two relpaths.
fn common_ancestor<'p>(a: &'p str, b: &str) -> &'p str {
    let mut end = 0;
    let (ab, bb) = (a.as_bytes(), b.as_bytes());
    let mut i = 0;
    while i < ab.len() && i < bb.len() && ab[i] == bb[i] {
        i += 1;
        let a_done = i == ab.len() || ab[i] == b'/';
        let b_done = i == bb.len() || bb[i] == b'/';
        if a_done && b_done {
            end = i;
        }
    }
    &a[..end]
}

fn components(rel: &str) -> usize {
    if rel.is_empty() {
        0
    } else {
        rel.split('/').count()
    }
}

impl Replayer<'_> {
    fn can_read(&self, path: &str) -> bool {
        self.readable.is_none_or(|r| r(path))
    }

    /// Whether the user could read `path` before this revision deleted it: under a copy,
    /// where it came from (Subversion's issue #4121).
    fn was_readable(&self, path: &str) -> bool {
        match self.copies.last() {
            Some(CopyScope {
                path: top,
                from: Some((_, from)),
            }) if is_ancestor(top, path) => {
                self.can_read(&join(from, skip_ancestor(top, path).unwrap_or("")))
            }
            _ => self.can_read(path),
        }
    }

    fn corrupt(&self, path: &str, msg: impl Into<String>) -> ReposError {
        ReposError::Corrupt(msg.into()).at_path(self.rev, path)
    }

    /// Walks the sorted paths as Subversion's path driver does: the root opened before the
    /// first path (unless the root is that path), the directories closed back to the common
    /// ancestor of the last and the next path, those down to the next path's parent opened,
    /// and each path handed to [`Self::replay_path`].
    fn drive(&mut self, paths: &[String]) -> Result<()> {
        let mut stack: Vec<Token> = Vec::new();
        let mut last: Option<String> = None;
        for path in paths {
            if last.is_none() && !path.is_empty() {
                stack.push(self.editor.open_root(None)?);
            }
            let common = match &last {
                Some(l) => {
                    let common = common_ancestor(l, path).to_string();
                    let rel = skip_ancestor(&common, l).unwrap_or("");
                    for _ in 0..components(rel) {
                        self.close_top(&mut stack)?;
                    }
                    common
                }
                None => String::new(),
            };
            let parent = if path.is_empty() {
                ""
            } else {
                parent_and_name(path).0
            };
            if let Some(rest) = skip_ancestor(&common, parent).filter(|r| !r.is_empty()) {
                let mut dir = common.clone();
                for name in rest.split('/') {
                    dir = join(&dir, name);
                    let p = *stack
                        .last()
                        .ok_or_else(|| self.corrupt(&dir, "no open parent"))?;
                    stack.push(self.editor.open_dir(&dir, p, None)?);
                }
            }
            let opened = self.replay_path(path, stack.last().copied())?;
            if let Some(tok) = opened {
                stack.push(tok);
            }
            last = Some(if opened.is_some() {
                path.clone()
            } else {
                parent.to_string()
            });
        }
        while !stack.is_empty() {
            self.close_top(&mut stack)?;
        }
        Ok(())
    }

    fn close_top(&mut self, stack: &mut Vec<Token>) -> Result<()> {
        match stack.pop() {
            Some(t) => self.editor.close_dir(t),
            None => Err(ReposError::Corrupt(format!(
                "revision {}: replay closed more directories than it opened",
                self.rev
            ))),
        }
    }

    /// The node at `path` in the replayed revision.
    fn target(&self, path: &str, change: &Change) -> Result<Arc<NodeRev>> {
        match change.node.get() {
            None => Ok(self
                .repo
                .lookup_from(self.root, path)?
                .ok_or(StoreError::PathNotFound {
                    rev: self.rev,
                    path: path.to_string(),
                })?
                .1),
            Some(off) => Ok(self.repo.node(off)?),
        }
    }

    /// Replays the change at `path`; returns the token of the directory it left open.
    fn replay_path(&mut self, path: &str, parent: Option<Token>) -> Result<Option<Token>> {
        while self
            .copies
            .last()
            .is_some_and(|c| !is_ancestor(&c.path, path))
        {
            self.copies.pop();
        }
        let Some(change) = self.pending.remove(path) else {
            // Already sent inside a copy that was replayed as a plain add.
            return Ok(None);
        };
        let (do_delete, do_add) = match change.change {
            ChangeKind::Add => (false, true),
            ChangeKind::Delete => (true, false),
            ChangeKind::Replace => (true, true),
            ChangeKind::Modify => (false, false),
        };
        if do_delete {
            let p = parent.ok_or_else(|| self.corrupt(path, "the root cannot be deleted"))?;
            if self.was_readable(path) {
                self.editor.delete_entry(path, None, p)?;
            }
            if !do_add {
                return Ok(None);
            }
        }
        let node = self.target(path, &change)?;
        let kind = node.kind;
        // Where the previous version of this node is: the delta source.
        let mut source: Option<(Revnum, String)> = Some((self.rev - 1, path.to_string()));
        let mut dir = None;
        let mut file = None;
        let mut downgraded = false;
        if do_add {
            let p = parent.ok_or_else(|| self.corrupt(path, "Root directory already exists."))?;
            let kept = change
                .copyfrom
                .as_ref()
                .filter(|(r, from)| *r >= self.low_water_mark && is_ancestor(self.base_dir, from))
                .filter(|(_, from)| self.can_read(from));
            downgraded = change.copyfrom.is_some() && kept.is_none();
            let copyfrom = kept.map(|(r, from)| (fspath(from), *r));
            let copyfrom = copyfrom.as_ref().map(|(f, r)| (f.as_str(), *r));
            match kind {
                NodeKind::Dir => match (&change.copyfrom, downgraded) {
                    (Some((r, from)), true) => {
                        dir = Some(self.add_subtree(path, p, (*r, from), &node)?);
                    }
                    _ => dir = Some(self.editor.add_dir(path, p, copyfrom)?),
                },
                NodeKind::File => file = Some(self.editor.add_file(path, p, copyfrom)?),
            }
            match kept {
                Some(from) => {
                    if kind == NodeKind::Dir {
                        self.copies.push(CopyScope {
                            path: path.to_string(),
                            from: Some(from.clone()),
                        });
                    }
                    source = Some(from.clone());
                }
                None => {
                    if kind == NodeKind::Dir && !self.copies.is_empty() {
                        self.copies.push(CopyScope {
                            path: path.to_string(),
                            from: None,
                        });
                    }
                    source = None;
                }
            }
        } else {
            match (kind, parent) {
                (NodeKind::Dir, Some(p)) => dir = Some(self.editor.open_dir(path, p, None)?),
                (NodeKind::Dir, None) => dir = Some(self.editor.open_root(None)?),
                (NodeKind::File, Some(p)) => file = Some(self.editor.open_file(path, p, None)?),
                (NodeKind::File, None) => return Err(self.corrupt(path, "the root is a file")),
            }
            if let Some(scope) = self.copies.last() {
                source = match &scope.from {
                    Some((r, from)) => {
                        let rel = skip_ancestor(&scope.path, path).unwrap_or("");
                        Some((*r, join(from, rel)))
                    }
                    None => None,
                };
            }
        }
        if change.prop_mod || downgraded {
            let target = dir
                .or(file)
                .ok_or_else(|| self.corrupt(path, "no open node"))?;
            if self.send_deltas {
                let old = match &source {
                    Some((r, p)) => self.repo.props(&self.repo.node_at(*r, p)?.1)?,
                    None => PropList::new(),
                };
                let new = self.repo.props(&node)?;
                for (name, value) in prop_diffs(&old, &new) {
                    self.change_prop(kind, target, name, value)?;
                }
            } else {
                self.change_prop(kind, target, b"", None)?;
            }
        }
        if let Some(f) = file {
            if change.text_mod || downgraded {
                if self.send_deltas {
                    let base = match &source {
                        Some((r, p)) => Some(self.repo.node_at(*r, p)?.1.file_text()),
                        None => None,
                    };
                    self.send_file_text(f, base, node.file_text())?;
                } else {
                    let header_only = TextOptions {
                        svndiff_version: self.svndiff_version,
                        accepts: self.svndiff_version,
                        send_deltas: false,
                    };
                    send_text(&mut *self.editor, f, None, &[], header_only)?;
                }
            }
            self.editor.close_file(f, Some(&node.file_text().md5))?;
        }
        Ok(dir)
    }

    fn change_prop(
        &mut self,
        kind: NodeKind,
        token: Token,
        name: &[u8],
        value: Option<&[u8]>,
    ) -> Result<()> {
        match kind {
            NodeKind::Dir => self.editor.change_dir_prop(token, name, value),
            NodeKind::File => self.editor.change_file_prop(token, name, value),
        }
    }

    /// A copied directory the receiver cannot copy: added without history, with all its
    /// properties and the whole tree of the copy source (`from`), in which changes made
    /// in this revision replace the source's nodes. The changes inside are taken off
    /// `pending` (new entries, which the source lacks, stay there). Returns the open
    /// directory's token.
    fn add_subtree(
        &mut self,
        path: &str,
        parent: Token,
        from: (Revnum, &str),
        node: &NodeRev,
    ) -> Result<Token> {
        let dir = self.editor.add_dir(path, parent, None)?;
        for (name, value) in &self.repo.props(node)? {
            self.editor.change_dir_prop(dir, name, Some(value))?;
        }
        let (_, source) = self.repo.node_at(from.0, from.1)?;
        if source.kind != NodeKind::Dir {
            return Err(self.corrupt(path, format!("copy source '{}' is not a directory", from.1)));
        }
        let entries = self.repo.dir(&source)?;
        let target_entries = self.repo.dir(node)?;
        for e in entries.iter() {
            let child = join(path, &e.name);
            let change = self.pending.remove(&child);
            if !self.can_read(&child) {
                continue;
            }
            let mut child_from = (from.0, join(from.1, &e.name));
            let mut replaced_without_history = false;
            match &change {
                Some(c) if c.change == ChangeKind::Delete => continue,
                Some(c) if c.change == ChangeKind::Replace => match &c.copyfrom {
                    Some((r, p)) => child_from = (*r, p.clone()),
                    None => replaced_without_history = true,
                },
                _ => {}
            }
            // The kind in this revision: a replace may have changed it (svnserve goes by
            // the source's kind there and sends a wrong node or fails).
            let target = match change.as_ref().and_then(|c| c.node.get()) {
                None => {
                    let found = target_entries
                        .binary_search_by(|t| t.name.as_bytes().cmp(e.name.as_bytes()));
                    match found {
                        Ok(i) => self.repo.node(target_entries[i].node)?,
                        Err(_) => return Err(self.corrupt(&child, "missing from the copy")),
                    }
                }
                Some(off) => self.repo.node(off)?,
            };
            match target.kind {
                NodeKind::Dir => {
                    let sub = if replaced_without_history {
                        self.editor.add_dir(&child, dir, None)?
                    } else {
                        self.add_subtree(&child, dir, (child_from.0, &child_from.1), &target)?
                    };
                    self.editor.close_dir(sub)?;
                }
                NodeKind::File => {
                    let f = self.editor.add_file(&child, dir, None)?;
                    for (name, value) in &self.repo.props(&target)? {
                        self.editor.change_file_prop(f, name, Some(value))?;
                    }
                    let text = target.file_text();
                    self.send_file_text(f, None, text)?;
                    self.editor.close_file(f, Some(&text.md5))?;
                }
            }
        }
        Ok(dir)
    }

    /// `apply_textdelta` and the svndiff stream from `base` (None: the empty text) to
    /// `target`. Large texts go as self-contained windows read as a stream, so memory stays
    /// bounded; they apply to any base.
    fn send_file_text(
        &mut self,
        file: Token,
        base: Option<FileText>,
        target: FileText,
    ) -> Result<()> {
        let small = |t: &FileText| t.size as usize <= DELTA_MAX;
        let opts = TextOptions {
            svndiff_version: self.svndiff_version,
            accepts: self.svndiff_version,
            send_deltas: true,
        };
        if small(&target) && base.as_ref().is_none_or(small) {
            let source = match &base {
                Some(b) => Some((self.repo.read_text(b)?, b.md5)),
                None => None,
            };
            let text = self.repo.read_text(&target)?;
            let base = source.as_ref().map(|(t, md5)| (&t[..], md5));
            return send_text(&mut *self.editor, file, base, &text, opts);
        }
        let mut reader = self.repo.text_reader(&target)?;
        crate::editor::send_new_text(
            &mut *self.editor,
            file,
            base.as_ref().map(|b| &b.md5),
            &mut reader,
            opts,
        )
    }
}

/// The property changes that turn `old` into `new`: new and changed values, then deletions.
fn prop_diffs<'p>(old: &'p PropList, new: &'p PropList) -> Vec<(&'p [u8], Option<&'p [u8]>)> {
    let mut out: Vec<(&[u8], Option<&[u8]>)> = new
        .iter()
        .filter(|(k, v)| old.get(*k) != Some(*v))
        .map(|(k, v)| (&k[..], Some(&v[..])))
        .collect();
    out.extend(
        old.keys()
            .filter(|k| !new.contains_key(*k))
            .map(|k| (&k[..], None)),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_ancestors_are_whole_components() {
        assert_eq!(common_ancestor("a/b/c", "a/b/d"), "a/b");
        assert_eq!(common_ancestor("a/bc", "a/b"), "a");
        assert_eq!(common_ancestor("a/b", "a/b/c"), "a/b");
        assert_eq!(common_ancestor("a/b/c", "a/b"), "a/b");
        assert_eq!(common_ancestor("x", "y"), "");
        assert_eq!(common_ancestor("", "a"), "");
        assert_eq!(common_ancestor("ab", "a"), "");
    }
}
