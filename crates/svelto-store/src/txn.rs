//! Transactions: a mutable tree over a base revision, built by Subversion's FS operations
//! (make, copy, delete, property and text changes), committed as one new revision.

use crate::error::{Result, StoreError};
use crate::node::{Change, DirEntry, FileText, NodeRev, RevMeta};
use crate::rep::LINEAR;
use crate::repo::Repo;
use crate::writer::{Mark, Writer};
use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use svelto_core::{
    compare_paths, join, parent_and_name, ChangeKind, ListingId, NodeKind, NodeRevId, PropList,
    PropsId, Revnum, TextId,
};

enum Slot {
    Stored(NodeRevId, NodeKind),
    Mut(Box<MutNode>),
}

struct MutNode {
    /// The node-revision to write: identity and history fields are final, `props`,
    /// `text` and `entries` hold the stored values unless replaced below.
    node: NodeRev,
    /// A property list changed in this transaction.
    props: Option<PropList>,
    /// A directory's entries once loaded or changed in this transaction.
    entries: Option<BTreeMap<String, Slot>>,
}

pub use svelto_fs::NodeInfo;

use svelto_fs::{FoldedChanges as Changes, PathChange as ChangeRec};

/// A transaction. Dropping it without `commit` rolls back everything it appended.
pub struct Txn<'w> {
    w: &'w mut Writer,
    mark: Mark,
    ids: (u64, u64),
    base_rev: Revnum,
    root: MutNode,
    changes: Changes,
    /// The revision properties the new revision will have.
    pub revprops: PropList,
    /// Last representation key handed out (see `NodeRev::text_key`).
    keys: u64,
    done: bool,
}

fn open_stored(repo: &Repo, off: NodeRevId, path: &str, parent: &NodeRev) -> Result<MutNode> {
    Ok(MutNode {
        node: repo.node(off)?.successor(off, path, parent),
        props: None,
        entries: None,
    })
}

fn load_entries<'a>(repo: &Repo, n: &'a mut MutNode) -> Result<&'a mut BTreeMap<String, Slot>> {
    if n.entries.is_none() {
        let listing = repo.dir_at(n.node.entries)?;
        let map = listing
            .iter()
            .map(|e| (e.name.clone(), Slot::Stored(e.node, e.kind)))
            .collect();
        n.entries = Some(map);
    }
    Ok(n.entries.get_or_insert_with(BTreeMap::new))
}

/// Walks to `comps` below `n` (at `at`), making every node on the way mutable.
fn walk<'a>(repo: &Repo, n: &'a mut MutNode, at: &str, comps: &[&str]) -> Result<&'a mut MutNode> {
    let Some((first, rest)) = comps.split_first() else {
        return Ok(n);
    };
    if n.node.kind != NodeKind::Dir {
        return Err(StoreError::NotADirectory(at.to_string()));
    }
    let child_path = join(at, first);
    let parent = n.node.clone();
    let entries = load_entries(repo, n)?;
    let slot = entries
        .get_mut(*first)
        .ok_or_else(|| StoreError::TxnPathNotFound {
            path: child_path.clone(),
        })?;
    if let Slot::Stored(off, _) = *slot {
        *slot = Slot::Mut(Box::new(open_stored(repo, off, &child_path, &parent)?));
    }
    match slot {
        Slot::Mut(b) => walk(repo, b, &child_path, rest),
        Slot::Stored(..) => unreachable!("converted above"),
    }
}

/// The directory holding `path`, made mutable, and `path`'s last component.
fn open_parent<'a, 'p>(
    repo: &Repo,
    root: &'a mut MutNode,
    path: &'p str,
) -> Result<(&'a mut MutNode, &'p str)> {
    let (parent_path, name) = parent_and_name(path);
    let parent = walk(repo, root, "", &comps(parent_path))?;
    if parent.node.kind != NodeKind::Dir {
        return Err(StoreError::NotADirectory(parent_path.to_string()));
    }
    Ok((parent, name))
}

/// Puts a new node under `name` in `parent`, which must not have that entry yet.
fn insert_new(
    repo: &Repo,
    parent: &mut MutNode,
    name: &str,
    path: &str,
    node: MutNode,
) -> Result<()> {
    let entries = load_entries(repo, parent)?;
    if entries.contains_key(name) {
        return Err(StoreError::AlreadyExists(path.to_string()));
    }
    entries.insert(name.to_string(), Slot::Mut(Box::new(node)));
    Ok(())
}

fn comps(path: &str) -> Vec<&str> {
    if path.is_empty() {
        Vec::new()
    } else {
        path.split('/').collect()
    }
}

impl<'w> Txn<'w> {
    /// Starts a transaction on `w`, based on its youngest revision.
    pub fn begin(w: &'w mut Writer) -> Result<Txn<'w>> {
        w.usable()?;
        let mark = w.mark();
        let ids = (w.next_node_id, w.next_copy_id);
        let base_rev = w.youngest();
        let repo = w.view()?;
        let off = repo.root(base_rev)?;
        let src = repo.node(off)?;
        let mut node = (*src).clone();
        node.predecessor = off;
        node.pred_count += 1;
        Ok(Txn {
            w,
            mark,
            ids,
            base_rev,
            root: MutNode {
                node,
                props: None,
                entries: None,
            },
            changes: Changes::default(),
            revprops: PropList::new(),
            keys: (base_rev + 1) << 32,
            done: false,
        })
    }

    pub fn base_rev(&self) -> Revnum {
        self.base_rev
    }

    /// The number the revision gets when this transaction commits.
    pub fn rev(&self) -> Revnum {
        self.base_rev + 1
    }

    /// A reader of committed revisions (including ones not yet synced).
    pub fn repo(&mut self) -> Result<&Repo> {
        self.w.view()
    }

    fn open(&mut self, path: &str) -> Result<&mut MutNode> {
        let repo = self.w.view()?;
        walk(repo, &mut self.root, "", &comps(path))
    }

    /// Describes the node at `path` in the transaction, or None.
    pub fn info(&mut self, path: &str) -> Result<Option<NodeInfo>> {
        let repo = self.w.view()?;
        let cs = comps(path);
        // Walk the mutable part; continue in stored trees below it.
        let mut n = &self.root;
        let mut i = 0;
        let stored = loop {
            if i == cs.len() {
                let props = match &n.props {
                    Some(p) => p.clone(),
                    None => repo.props_at(n.node.props)?,
                };
                return Ok(Some(NodeInfo {
                    kind: n.node.kind,
                    props,
                    text: n.node.file_text(),
                }));
            }
            if n.node.kind != NodeKind::Dir {
                return Ok(None);
            }
            match &n.entries {
                Some(map) => match map.get(cs[i]) {
                    None => return Ok(None),
                    Some(Slot::Mut(b)) => n = b,
                    Some(Slot::Stored(off, _)) => break (*off, i + 1),
                },
                None => {
                    let listing = repo.dir_at(n.node.entries)?;
                    match listing.binary_search_by(|e| e.name.as_bytes().cmp(cs[i].as_bytes())) {
                        Ok(j) => break (listing[j].node, i + 1),
                        Err(_) => return Ok(None),
                    }
                }
            }
            i += 1;
        };
        let rest = cs[stored.1..].join("/");
        let Some((_, node)) = repo.lookup_from(stored.0, &rest)? else {
            return Ok(None);
        };
        let props = repo.props(&node)?;
        Ok(Some(NodeInfo {
            kind: node.kind,
            props,
            text: node.file_text(),
        }))
    }

    pub fn kind(&mut self, path: &str) -> Result<Option<NodeKind>> {
        Ok(self.info(path)?.map(|i| i.kind))
    }

    fn record(&mut self, path: &str, change: ChangeKind, kind: NodeKind, text: bool, props: bool) {
        let rec = ChangeRec {
            change,
            kind: Some(kind),
            text_mod: text,
            prop_mod: props,
            copyfrom: None,
        };
        self.changes.record(path, rec);
    }

    /// Adds an empty file or directory at `path` (Subversion's make_file / make_dir).
    pub fn make_node(&mut self, path: &str, kind: NodeKind) -> Result<()> {
        if path.is_empty() {
            return Err(StoreError::RootOperation("added"));
        }
        let node_id = self.w.next_node_id;
        let rev = self.rev();
        let repo = self.w.view()?;
        let (parent, name) = open_parent(repo, &mut self.root, path)?;
        let node = NodeRev {
            kind,
            node_id,
            copy_id: parent.node.copy_id,
            predecessor: NodeRevId::NONE,
            pred_count: 0,
            created_rev: rev,
            created_path: path.to_string(),
            copyfrom: None,
            copyroot: parent.node.copyroot.clone(),
            props: PropsId::NONE,
            props_key: 0,
            text: (kind == NodeKind::File).then_some(FileText::EMPTY),
            text_key: 0,
            entries: ListingId::NONE,
        };
        let entries = (kind == NodeKind::Dir).then(BTreeMap::new);
        insert_new(
            repo,
            parent,
            name,
            path,
            MutNode {
                node,
                props: None,
                entries,
            },
        )?;
        self.w.next_node_id += 1;
        self.record(path, ChangeKind::Add, kind, false, false);
        Ok(())
    }

    /// Removes `path` and everything below it.
    pub fn delete(&mut self, path: &str) -> Result<()> {
        if path.is_empty() {
            return Err(StoreError::RootOperation("deleted"));
        }
        let repo = self.w.view()?;
        let (parent, name) = open_parent(repo, &mut self.root, path)?;
        let kind = match load_entries(repo, parent)?.remove(name) {
            Some(Slot::Stored(_, k)) => k,
            Some(Slot::Mut(b)) => b.node.kind,
            None => {
                return Err(StoreError::TxnPathNotFound {
                    path: path.to_string(),
                })
            }
        };
        self.record(path, ChangeKind::Delete, kind, false, false);
        Ok(())
    }

    /// Copies `from_path` as it was in `from_rev` to `to_path` (which must not exist). Costs
    /// one node-revision whatever the size of the copied tree.
    pub fn copy(&mut self, from_rev: Revnum, from_path: &str, to_path: &str) -> Result<()> {
        if to_path.is_empty() {
            return Err(StoreError::RootOperation("a copy target"));
        }
        if from_rev > self.base_rev {
            return Err(StoreError::NoSuchRevision(from_rev));
        }
        let copy_id = self.w.next_copy_id;
        let rev = self.rev();
        let repo = self.w.view()?;
        let (src_off, src) =
            repo.lookup(from_rev, from_path)?
                .ok_or_else(|| StoreError::PathNotFound {
                    rev: from_rev,
                    path: from_path.to_string(),
                })?;
        let (parent, name) = open_parent(repo, &mut self.root, to_path)?;
        let mut node = (*src).clone();
        node.predecessor = src_off;
        node.pred_count += 1;
        node.copy_id = copy_id;
        node.created_rev = rev;
        node.created_path = to_path.to_string();
        node.copyfrom = Some((from_rev, from_path.to_string()));
        node.copyroot = (rev, to_path.to_string());
        let kind = node.kind;
        insert_new(
            repo,
            parent,
            name,
            to_path,
            MutNode {
                node,
                props: None,
                entries: None,
            },
        )?;
        self.w.next_copy_id += 1;
        let rec = ChangeRec {
            change: ChangeKind::Add,
            kind: Some(kind),
            text_mod: false,
            prop_mod: false,
            copyfrom: Some((from_rev, from_path.to_string())),
        };
        self.changes.record(to_path, rec);
        Ok(())
    }

    /// Sets (Some) or removes (None) one property of the node at `path`.
    pub fn change_prop(&mut self, path: &str, name: &[u8], value: Option<&[u8]>) -> Result<()> {
        self.keys += 1;
        let key = self.keys;
        let repo = self.w.view()?;
        let n = walk(repo, &mut self.root, "", &comps(path))?;
        n.node.props_key = key;
        if n.props.is_none() {
            n.props = Some(repo.props_at(n.node.props)?);
        }
        let props = n.props.get_or_insert_with(PropList::new);
        match value {
            Some(v) => {
                props.insert(name.to_vec(), v.to_vec());
            }
            None => {
                props.remove(name);
            }
        }
        let kind = n.node.kind;
        self.record(path, ChangeKind::Modify, kind, false, true);
        Ok(())
    }

    /// Replaces the contents of the file at `path` with what `src` yields; returns the
    /// stored contents' size and checksums.
    pub fn set_text(&mut self, path: &str, src: &mut dyn Read) -> Result<FileText> {
        let n = self.open(path)?;
        if n.node.kind != NodeKind::File {
            return Err(StoreError::NotAFile(path.to_string()));
        }
        let (pred, count) = (n.node.predecessor, n.node.pred_count);
        let base = self.delta_base(pred, count)?;
        let ft = self.w.store_text(src, base)?;
        self.keys += 1;
        let key = self.keys;
        let n = self.open(path)?;
        n.node.text = Some(ft);
        n.node.text_key = key;
        self.record(path, ChangeKind::Modify, NodeKind::File, true, false);
        Ok(ft)
    }

    /// The contents to delta against (docs/formats/store.md, "REP"): the version just
    /// before, unless `count` is a multiple of [`LINEAR`]; then skip-delta, the ancestor
    /// whose predecessor count is `count & (count - 1)`. So a chain is at most `LINEAR - 1`
    /// linear steps above a skip-delta chain shorter than log2 of the history, and a file's
    /// history is mostly small deltas between neighbours, which blame sends as stored.
    fn delta_base(&mut self, mut pred: NodeRevId, count: u64) -> Result<TextId> {
        if pred.is_none() || count == 0 {
            return Ok(TextId::NONE);
        }
        let skip = count & (count - 1);
        let target = if count - skip < LINEAR {
            count - 1
        } else {
            skip
        };
        let repo = self.w.view()?;
        loop {
            let n = repo.node(pred)?;
            if n.kind != NodeKind::File || n.predecessor >= pred {
                return Ok(TextId::NONE);
            }
            if n.pred_count <= target || n.predecessor.is_none() {
                return Ok(n.file_text().rep);
            }
            pred = n.predecessor;
        }
    }

    /// The full contents of the file at `path` in this transaction.
    pub fn read_text(&mut self, path: &str) -> Result<std::sync::Arc<Vec<u8>>> {
        let info = self
            .info(path)?
            .ok_or_else(|| StoreError::TxnPathNotFound {
                path: path.to_string(),
            })?;
        self.w.fulltext(info.text.rep)
    }

    /// Commits: writes every changed node bottom-up, then the revision's metadata.
    /// The revision is visible to this writer at once and to readers after `Writer::sync`.
    pub fn commit(mut self) -> Result<Revnum> {
        let rev = self.rev();
        let placeholder = MutNode {
            node: self.root.node.clone(),
            props: None,
            entries: None,
        };
        let root = std::mem::replace(&mut self.root, placeholder);
        let mut offsets = HashMap::new();
        let root_off = write_tree(self.w, root, "", rev, self.changes.paths(), &mut offsets)?;
        let mut changes: Vec<Change> = Vec::with_capacity(self.changes.paths().len());
        for (path, c) in self.changes.take() {
            let node = if c.change == ChangeKind::Delete {
                NodeRevId::NONE
            } else {
                match offsets.get(&path) {
                    Some(&o) => o,
                    None => self
                        .w
                        .view()?
                        .lookup_from(root_off, &path)?
                        .map_or(NodeRevId::NONE, |(o, _)| o),
                }
            };
            changes.push(Change {
                path,
                change: c.change,
                kind: c.kind,
                text_mod: c.text_mod,
                prop_mod: c.prop_mod,
                copyfrom: c.copyfrom,
                node,
            });
        }
        changes.sort_by(|a, b| compare_paths(&a.path, &b.path));
        let meta = RevMeta::new(std::mem::take(&mut self.revprops), changes);
        let committed = self.w.finish_revision(root_off, &meta)?;
        self.done = true;
        Ok(committed)
    }
}

fn write_tree(
    w: &mut Writer,
    mut n: MutNode,
    path: &str,
    rev: Revnum,
    wanted: &BTreeMap<String, ChangeRec>,
    offsets: &mut HashMap<String, NodeRevId>,
) -> Result<NodeRevId> {
    if let Some(p) = n.props.take() {
        n.node.props = w.store_props(&p)?;
    }
    if let Some(entries) = n.entries.take() {
        let previous = n.node.entries;
        let mut listing = Vec::with_capacity(entries.len());
        for (name, slot) in entries {
            let (node, kind) = match slot {
                Slot::Stored(off, kind) => (off, kind),
                Slot::Mut(child) => {
                    let kind = child.node.kind;
                    (
                        write_tree(w, *child, &join(path, &name), rev, wanted, offsets)?,
                        kind,
                    )
                }
            };
            listing.push(DirEntry { name, kind, node });
        }
        n.node.entries = w.write_dir(&listing, previous)?;
    }
    n.node.created_rev = rev;
    let off = w.write_node(&n.node)?;
    if wanted.contains_key(path) {
        offsets.insert(path.to_string(), off);
    }
    Ok(off)
}

impl Drop for Txn<'_> {
    fn drop(&mut self) {
        if !self.done {
            let _ = self.w.rollback(self.mark);
            self.w.next_node_id = self.ids.0;
            self.w.next_copy_id = self.ids.1;
        }
    }
}

/// The local engine's transaction as the storage seam's (every method the one above).
impl svelto_fs::WriteTxn for Txn<'_> {
    fn base_rev(&self) -> Revnum {
        Txn::base_rev(self)
    }
    fn set_revprops(&mut self, revprops: PropList) {
        self.revprops = revprops;
    }
    fn view(&mut self) -> Result<&dyn svelto_fs::ReadRepo> {
        Ok(Txn::repo(self)?)
    }
    fn info(&mut self, path: &str) -> Result<Option<NodeInfo>> {
        Txn::info(self, path)
    }
    fn make_node(&mut self, path: &str, kind: NodeKind) -> Result<()> {
        Txn::make_node(self, path, kind)
    }
    fn delete(&mut self, path: &str) -> Result<()> {
        Txn::delete(self, path)
    }
    fn copy(&mut self, from_rev: Revnum, from_path: &str, to_path: &str) -> Result<()> {
        Txn::copy(self, from_rev, from_path, to_path)
    }
    fn change_prop(&mut self, path: &str, name: &[u8], value: Option<&[u8]>) -> Result<()> {
        Txn::change_prop(self, path, name, value)
    }
    fn set_text(&mut self, path: &str, src: &mut dyn Read) -> Result<FileText> {
        Txn::set_text(self, path, src)
    }
    fn read_text(&mut self, path: &str) -> Result<std::sync::Arc<Vec<u8>>> {
        Txn::read_text(self, path)
    }
    fn commit(self: Box<Self>) -> Result<Revnum> {
        Txn::commit(*self)
    }
}
