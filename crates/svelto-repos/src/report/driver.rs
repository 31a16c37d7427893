//! The drive: the working copy's tree (each reported path at its reported revision)
//! compared with the target tree, directory by directory, into an [`Editor`].

use super::entries::{no_such_revision, Ent};
use super::PreparedDrive;
use crate::editor::{
    send_added_text, send_stream, send_text, send_windows, Editor, TextOptions, Token,
};
use crate::error::{ReposError, Result, SvnErrorKind};
use crate::stream::read_full;
use std::collections::HashMap;
use std::rc::Rc;
use svelto_core::Md5;
use svelto_core::{decimal, join, parent_and_name, skip_ancestor, Depth, NodeKind, Revnum};
use svelto_delta::{compute_window, stream_header, Instruction, Window, WINDOW_SIZE};
use svelto_fs::{DirEntry, FileText, NodeRev, NodeRevId, Stored};
pub(super) const COMMITTED_REV: &[u8] = b"svn:entry:committed-rev";
pub(super) const COMMITTED_DATE: &[u8] = b"svn:entry:committed-date";
pub(super) const LAST_AUTHOR: &[u8] = b"svn:entry:last-author";
pub(super) const UUID: &[u8] = b"svn:entry:uuid";
pub(super) const LOCK_TOKEN: &[u8] = b"svn:entry:lock-token";

/// Files larger than this are sent from streams, window by window, instead of from texts held
/// in memory.
pub(super) const STREAM_ABOVE: u64 = 16 << 20;

/// A self-contained text stored in more than all but 1/this of its size does not compress.
const INCOMPRESSIBLE: u64 = 32;

/// The node whose properties are being sent.
#[derive(Clone, Copy)]
pub(super) enum PropTarget {
    Dir(Token),
    File(Token),
}

/// The depth that applies one level further down.
pub(super) fn below(depth: Depth) -> Depth {
    if depth == Depth::Immediates {
        Depth::Empty
    } else {
        depth
    }
}

/// Whether a target entry must be sent whole because the requested depth makes the working
/// copy deeper than its ambient `wc_depth` (the `U` cells of §5.3's depth rules).
pub(super) fn is_depth_upgrade(wc_depth: Depth, requested: Depth, kind: NodeKind) -> bool {
    if requested == Depth::Unknown || requested <= wc_depth || wc_depth == Depth::Immediates {
        return false;
    }
    if kind == NodeKind::File && wc_depth == Depth::Files {
        return false;
    }
    !(kind == NodeKind::Dir && wc_depth == Depth::Empty && requested == Depth::Files)
}

/// A directory listing with the names already handled marked off.
pub(super) struct Listing {
    pub(super) entries: std::sync::Arc<Vec<DirEntry>>,
    pub(super) gone: Vec<bool>,
}

impl Listing {
    pub(super) fn new(entries: std::sync::Arc<Vec<DirEntry>>) -> Listing {
        let gone = vec![false; entries.len()];
        Listing { entries, gone }
    }

    pub(super) fn index(&self, name: &str) -> Option<usize> {
        self.entries
            .binary_search_by(|e| e.name.as_bytes().cmp(name.as_bytes()))
            .ok()
            .filter(|&i| !self.gone[i])
    }

    pub(super) fn get(&self, name: &str) -> Option<Ent> {
        self.index(name).map(|i| Ent::of(&self.entries[i]))
    }

    /// [`get`](Self::get) for names asked in increasing byte order, as a walk over another
    /// sorted listing asks them: `at` (0 before the first call) is where the last search
    /// ended and only moves forward, so the walk matches the two listings in one pass
    /// instead of a binary search per name.
    pub(super) fn get_ascending(&self, at: &mut usize, name: &str) -> Option<Ent> {
        let entries = &self.entries;
        while entries
            .get(*at)
            .is_some_and(|e| e.name.as_bytes() < name.as_bytes())
        {
            *at += 1;
        }
        let e = entries.get(*at)?;
        (e.name == name && !self.gone[*at]).then(|| Ent::of(e))
    }

    pub(super) fn remove(&mut self, name: &str) {
        if let Some(i) = self.index(name) {
            self.gone[i] = true;
        }
    }
}

/// svn:date and svn:author of a revision, shared by every node the drive sends from it.
pub(super) type RevInfo = Rc<(Option<Vec<u8>>, Option<Vec<u8>>)>;

/// The revisions whose svn:date and svn:author a drive keeps (a checkout of a tree changed
/// in 12,000 revisions sends nodes from most of them, in no order).
const REVINFO_KEPT: usize = 1 << 16;

pub(super) struct Driver<'a> {
    pub(super) p: &'a PreparedDrive,
    pub(super) editor: &'a mut dyn Editor,
    /// Position in the walk order of the next entry not yet handled (the lookahead).
    pub(super) pos: usize,
    pub(super) roots: HashMap<Revnum, NodeRevId>,
    pub(super) revinfo: HashMap<Revnum, RevInfo>,
    /// The first windows [`Driver::looks_unrelated`] compares, reused from file to file.
    pub(super) first_windows: (Vec<u8>, Vec<u8>),
}

impl Driver<'_> {
    pub(super) fn drive(&mut self) -> Result<()> {
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

    pub(super) fn entry_at(&self, k: usize) -> Option<u32> {
        match &self.p.order {
            Some(order) => order.get(k).copied(),
            None => {
                let i = self.p.first + k;
                (i < self.p.report.entries.len()).then_some(i as u32)
            }
        }
    }

    /// `e_path` (relative to the anchor) as a report path (relative to the target).
    pub(super) fn report_prefix<'e>(&self, e_path: &'e str) -> &'e str {
        skip_ancestor(&self.p.opts.target, e_path).unwrap_or(e_path)
    }

    /// The next entry's path if it lies below `e_path`.
    pub(super) fn relevant(&self, e_path: &str) -> Option<(u32, &str)> {
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
    pub(super) fn fetch(&mut self, e_path: &str) -> Option<(String, Option<u32>)> {
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
    pub(super) fn skip(&mut self, e_path: &str) {
        while self.relevant(e_path).is_some() {
            self.pos += 1;
        }
    }

    pub(super) fn any_below(&self, e_path: &str) -> bool {
        self.relevant(e_path).is_some()
    }

    // --- The repository. ---

    pub(super) fn root_of(&mut self, rev: Revnum) -> Result<NodeRevId> {
        if let Some(&off) = self.roots.get(&rev) {
            return Ok(off);
        }
        let off = self.p.repo.root(rev).map_err(|e| match e {
            svelto_fs::StoreError::NoSuchRevision(rev) => no_such_revision(rev),
            other => other.into(),
        })?;
        if self.roots.len() >= 1024 {
            self.roots.clear();
        }
        self.roots.insert(rev, off);
        Ok(off)
    }

    pub(super) fn lookup(&self, root: NodeRevId, path: &str) -> Result<Option<Ent>> {
        Ok(self
            .p
            .repo
            .lookup_from(root, path)?
            .map(|(off, n)| Ent { kind: n.kind, off }))
    }

    pub(super) fn lookup_node(
        &mut self,
        rev: Revnum,
        path: &str,
    ) -> Result<Option<std::sync::Arc<NodeRev>>> {
        let root = self.root_of(rev)?;
        Ok(self.p.repo.lookup_from(root, path)?.map(|(_, n)| n))
    }

    pub(super) fn revision_info(&mut self, rev: Revnum) -> Result<RevInfo> {
        if let Some(info) = self.revinfo.get(&rev) {
            return Ok(info.clone());
        }
        // Borrowed from the cached metadata: only the two values are copied.
        let meta = self.p.repo.rev_meta(rev)?;
        let info = Rc::new((
            meta.revprops.get(&b"svn:date"[..]).cloned(),
            meta.revprops.get(&b"svn:author"[..]).cloned(),
        ));
        if self.revinfo.len() >= REVINFO_KEPT {
            self.revinfo.clear();
        }
        self.revinfo.insert(rev, info.clone());
        Ok(info)
    }

    /// Whether the repository holds the lock the working copy reported for `path` (a reported
    /// token that is not, or no longer, the path's lock is removed from the working copy).
    pub(super) fn lock_is_held(&self, path: &str, token: &str) -> Result<bool> {
        let locks = match self.p.locks.get() {
            Some(l) => l,
            None => {
                let read = crate::locks::read_locks(&*self.p.repo)?
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
    pub(super) fn closest_copy(
        &mut self,
        rev: Revnum,
        path: &str,
    ) -> Result<Option<(Revnum, String)>> {
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
            || (copied.created_rev == youngest.0 && copied.predecessor.is_none())
        {
            return Ok(None);
        }
        Ok(Some(youngest))
    }

    /// Subversion's `svn_repos_deleted_rev`: the revision in which `path`, existing in the
    /// older of `a` and `b`, was first deleted (or replaced) before the younger one.
    pub(super) fn deleted_rev(
        &mut self,
        path: &str,
        a: Revnum,
        b: Revnum,
    ) -> Result<Option<Revnum>> {
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
        Err(ReposError::Corrupt(format!(
            "searching the deletion of '{path}' between r{a} and r{b} did not end"
        )))
    }

    // --- The drive. ---

    /// Sends the changes that turn the source entry (`s_path` in `s_rev`, absent when None)
    /// into the target entry (`t_path` in the target revision), as `e_path` inside the
    /// directory `dir`; `info` is the report entry for `e_path`, if any.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn update_entry(
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
                let same = s.off == t.off;
                let mut ancestry = true;
                let mut changed = true;
                if !same {
                    let (s_node, t_node) = (p.repo.node(s.off)?, p.repo.node(t.off)?);
                    ancestry = s_node.node_id == t_node.node_id;
                    // A related file with the same text and properties (a copy) is not sent.
                    if !p.opts.ignore_ancestry && t.kind == NodeKind::File && ancestry {
                        changed = s_node.props_key != t_node.props_key
                            || s_node.text_key != t_node.text_key;
                    }
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
    pub(super) fn copy_source(
        &mut self,
        t_path: &str,
    ) -> Result<Option<(Revnum, String, NodeRevId)>> {
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
    pub(super) fn delta_dirs(
        &mut self,
        s_rev: Revnum,
        source: Option<(&str, NodeRevId)>,
        target: (&str, NodeRevId),
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
            let mut t_at = 0;
            for (k, s_entry) in s.entries.iter().enumerate() {
                if s.gone[k] || t_list.get_ascending(&mut t_at, &s_entry.name).is_some() {
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
        let mut s_at = 0;
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
                let s_ent = s_list
                    .as_ref()
                    .and_then(|s| s.get_ascending(&mut s_at, &t_entry.name));
                // The same node-revision on both sides, which the report says nothing about
                // (the loop above took every report entry below this directory): nothing to
                // send, as update_entry would find, without building its paths.
                if source.is_some()
                    && s_ent.is_some_and(|s| s.off == t_entry.node && s.kind == t_entry.kind)
                    && (t_entry.kind == NodeKind::File || below(requested) <= below(wc_depth))
                {
                    debug_assert!(!self.any_below(&join(e_path, &t_entry.name)));
                    continue;
                }
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

    pub(super) fn change_prop(
        &mut self,
        node: PropTarget,
        name: &[u8],
        value: Option<&[u8]>,
    ) -> Result<()> {
        match node {
            PropTarget::Dir(d) => self.editor.change_dir_prop(d, name, value),
            PropTarget::File(f) => self.editor.change_file_prop(f, name, value),
        }
    }

    /// Sends the entry props of the target node, then its properties: all of them when there
    /// is no source, else the difference (nothing when they are equal).
    pub(super) fn delta_proplists(
        &mut self,
        source: Option<NodeRevId>,
        t_node: &NodeRev,
        t_path: &str,
        lock: Option<&str>,
        node: PropTarget,
    ) -> Result<()> {
        let p = self.p;
        let crev = t_node.created_rev;
        let mut digits = [0u8; 20];
        self.change_prop(node, COMMITTED_REV, Some(decimal(crev, &mut digits)))?;
        let info = self.revision_info(crev)?;
        let (date, author) = &*info;
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

        let mut s_props = None;
        if let Some(s_off) = source {
            let s_node = p.repo.node(s_off)?;
            if s_node.props == t_node.props {
                return Ok(());
            }
            let props = p.repo.props_shared(s_node.props)?;
            if props == p.repo.props_shared(t_node.props)? {
                return Ok(());
            }
            s_props = Some(props);
        }
        let t_props = p.repo.props_shared(t_node.props)?;
        match s_props {
            Some(s_props) if !s_props.is_empty() => {
                for (name, value) in s_props.iter() {
                    match t_props.get(name) {
                        None => self.change_prop(node, name, None)?,
                        Some(v) if v != value => self.change_prop(node, name, Some(v))?,
                        Some(_) => {}
                    }
                }
                for (name, value) in t_props.iter() {
                    if !s_props.contains_key(name) {
                        self.change_prop(node, name, Some(value))?;
                    }
                }
            }
            _ => {
                for (name, value) in t_props.iter() {
                    self.change_prop(node, name, Some(value))?;
                }
            }
        }
        Ok(())
    }

    /// Sends the properties and the text change of an open or added file: the text as a
    /// delta against the source (absent: against nothing), nothing when the contents are the
    /// same.
    pub(super) fn delta_files(
        &mut self,
        source: Option<NodeRevId>,
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

    pub(super) fn send_file_text(
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
        if let Some(b) = &base {
            // Stored as a delta against the receiver's version: those windows are the delta
            // (the writer made them with the same computation from the same two texts), sent
            // as stored to a receiver of their version.
            if let Some((entry, from)) = self.sendable_delta(&target, b)? {
                return send_stream(&mut *self.editor, file, Some(&b.md5), &entry, from);
            }
            if let Some(windows) = repo.stored_delta(&target, b.rep)? {
                return send_windows(&mut *self.editor, file, &b.md5, &windows, opts);
            }
            if target.size > WINDOW_SIZE as u64 && self.looks_unrelated(b, &target)? {
                if let Some(stream) = self.sendable_stream(&target)? {
                    return send_stream(&mut *self.editor, file, Some(&b.md5), &stream, 0);
                }
                return self.send_new_text(file, &b.md5, &target);
            }
        }
        if target.size > STREAM_ABOVE || base.is_some_and(|b| b.size > STREAM_ABOVE) {
            return self.stream_text(file, base, target);
        }
        if base.is_none() && opts.accepts != 0 {
            // One look at the REP record: the stored stream, or the first step of the
            // text's reconstruction.
            match repo.stored_stream_or_text(&target)? {
                Stored::Stream(stream) if stream[3] <= opts.accepts => {
                    return send_stream(&mut *self.editor, file, None, &stream, 0);
                }
                Stored::Text(text) => return send_added_text(&mut *self.editor, file, &text, opts),
                Stored::Stream(_) => {}
            }
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
            None => send_added_text(&mut *self.editor, file, &text, opts),
        }
    }

    /// `target` as it is stored, when it is stored self-contained in an svndiff version the
    /// receiver reads and is not one streamed for its size: sent as stored (on loopback too:
    /// fewer bytes through the kernel, and nothing decompressed).
    fn sendable_stream(&self, target: &FileText) -> Result<Option<std::sync::Arc<Vec<u8>>>> {
        let accepts = self.p.opts.text.accepts;
        if accepts == 0 || target.size > STREAM_ABOVE {
            return Ok(None);
        }
        Ok(self
            .p
            .repo
            .stored_stream(target)?
            .filter(|stream| stream[3] <= accepts))
    }

    /// [`svelto_fs::ReadRepo::stored_delta_stream`] of `target` against `base`, when the receiver reads its
    /// svndiff version.
    fn sendable_delta(
        &self,
        target: &FileText,
        base: &FileText,
    ) -> Result<Option<(std::sync::Arc<Vec<u8>>, usize)>> {
        let accepts = self.p.opts.text.accepts;
        if accepts == 0 {
            return Ok(None);
        }
        Ok(self
            .p
            .repo
            .stored_delta_stream(target, base.rep)?
            .filter(|(entry, from)| entry[from + 3] <= accepts))
    }

    /// Whether a delta of `target` against `base` would find nothing to copy, judged without
    /// reading either whole: `target` is stored self-contained and does not compress (an
    /// archive, an image, a PDF: a new version of such a file shares no runs of bytes with the
    /// old one except a prefix left as it was), and its first window copies nothing from
    /// `base`'s first.
    fn looks_unrelated(&mut self, base: &FileText, target: &FileText) -> Result<bool> {
        let repo = &self.p.repo;
        let Some(stored) = repo.self_contained_bytes(target)? else {
            return Ok(false);
        };
        if stored < target.size - target.size / INCOMPRESSIBLE {
            return Ok(false);
        }
        let (t, s) = &mut self.first_windows;
        t.resize(WINDOW_SIZE, 0);
        s.resize(WINDOW_SIZE, 0);
        let t_len = read_full(&mut repo.text_reader(target)?, t)?;
        let s_len = read_full(&mut repo.text_reader(base)?, s)?;
        let window = compute_window(&s[..s_len], 0, &t[..t_len]);
        Ok(!window
            .instructions
            .iter()
            .any(|i| matches!(i, Instruction::CopySource { .. })))
    }

    /// Sends `target` as new data (each window its bytes, no source), streamed from storage,
    /// as the change from the text whose MD5 is `base_md5`.
    fn send_new_text(&mut self, file: Token, base_md5: &Md5, target: &FileText) -> Result<()> {
        let mut reader = self.p.repo.text_reader(target)?;
        crate::editor::send_new_text(
            &mut *self.editor,
            file,
            Some(base_md5),
            &mut reader,
            self.p.opts.text,
        )
    }

    /// Sends a text change read from streams: each window of the target is a delta against
    /// the source bytes at the same position, as Subversion's own delta streams are, so memory
    /// stays at two windows whatever the file size.
    pub(super) fn stream_text(
        &mut self,
        file: Token,
        base: Option<FileText>,
        target: FileText,
    ) -> Result<()> {
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
                .map_err(|e| ReposError::Internal(format!("encoding a text delta: {e}")))?;
            self.editor.textdelta_chunk(file, &chunk)?;
        }
        self.editor.textdelta_end(file)
    }
}

/// Subversion's strict "contents different" test, by checksums.
pub(super) fn same_contents(a: &FileText, b: &FileText) -> bool {
    if a.size == 0 && b.size == 0 {
        return true;
    }
    a.size == b.size && a.md5 == b.md5 && a.sha1 == b.sha1
}
