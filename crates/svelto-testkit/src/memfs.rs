//! `MemRepo`: a storage backend held in memory, written against the storage seam
//! (`svelto_fs`) alone, as a second backend is: no file, no offset, ids counted from 1.
//! Made empty ([`MemRepo::create`]) or by copying any backend's repository through its
//! [`ReadRepo`] ([`MemRepo::copy_of`]: a history built or loaded with the local engine,
//! then read back from memory), and written through its [`MemWriter`] (the seam's
//! [`WriteRepo`] and [`WriteTxn`]), so that the contract (`svelto_fs::contract::check`) and
//! the callers' suites, commits included, run over both backends.
//!
//! A `MemRepo` is a reading handle: clones share the repository, each sees the revisions
//! published when it was made or last refreshed. One [`MemWriter`] at a time holds the
//! write lock (others wait); what it commits is unpublished, seen by its own view alone,
//! until `sync`.

use md5::Digest;
use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, RwLock};
use svelto_core::{
    compare_paths, join, parent_and_name, ChangeKind, Env, ListingId, Lock, Md5, NodeKind,
    NodeRevId, PropList, PropsId, Revnum, Sha1, SystemEnv, TextId,
};
use svelto_fs::{
    Change, Corruption, DirEntry, FileText, FoldedChanges, LockTable, NodeInfo, NodeRev,
    PathChange, ReadRepo, Result, RevInfo, RevMeta, StoreError, WriteRepo, WriteTxn,
};

/// A repository in memory (a reading handle onto it): every record in a map under an id
/// handed out in order, so that what a record names always has a smaller id, and a later
/// revision's ids are greater.
pub struct MemRepo {
    shared: Arc<Shared>,
    /// The youngest revision this handle sees.
    seen: AtomicU64,
}

impl Clone for MemRepo {
    fn clone(&self) -> MemRepo {
        MemRepo {
            shared: self.shared.clone(),
            seen: AtomicU64::new(self.seen.load(Ordering::Acquire)),
        }
    }
}

struct Shared {
    uuid: Mutex<String>,
    /// The directory holding the repository's `conf/` and `hooks/` on this machine, when
    /// it has one ([`MemBackend`] gives each repository its directory).
    dir: std::sync::OnceLock<std::path::PathBuf>,
    env: Mutex<Arc<dyn Env>>,
    store: RwLock<Store>,
    locks: Mutex<Arc<LockTable>>,
    /// Whether a writer holds the write lock, and its waiters' wake-up.
    write_lock: Mutex<bool>,
    unlocked: Condvar,
}

/// The records and revisions; those past `published` belong to the writer that made them.
#[derive(Default)]
struct Store {
    revs: Vec<(RevInfo, Arc<RevMeta>)>,
    published: Revnum,
    /// The next id to hand out, and what it was when `published` was published (the ids
    /// from there on are forgotten when the unpublished revisions are dropped).
    next: u64,
    published_next: u64,
    nodes: HashMap<u64, Arc<NodeRev>>,
    listings: HashMap<u64, Arc<Vec<DirEntry>>>,
    props: HashMap<u64, Arc<PropList>>,
    texts: HashMap<u64, Arc<Vec<u8>>>,
}

impl Store {
    fn fresh(&mut self) -> u64 {
        let id = self.next;
        self.next += 1;
        id
    }

    /// Forgets every revision and record past what was published.
    fn drop_unpublished(&mut self) {
        self.revs.truncate(self.published as usize + 1);
        let keep = self.published_next;
        self.nodes.retain(|&id, _| id < keep);
        self.listings.retain(|&id, _| id < keep);
        self.props.retain(|&id, _| id < keep);
        self.texts.retain(|&id, _| id < keep);
        self.next = keep;
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl MemRepo {
    fn with_store(uuid: String, store: Store) -> MemRepo {
        let seen = store.published;
        MemRepo {
            shared: Arc::new(Shared {
                uuid: Mutex::new(uuid),
                dir: std::sync::OnceLock::new(),
                env: Mutex::new(Arc::new(SystemEnv)),
                store: RwLock::new(store),
                locks: Mutex::new(Arc::default()),
                write_lock: Mutex::new(false),
                unlocked: Condvar::new(),
            }),
            seen: AtomicU64::new(seen),
        }
    }

    /// An empty repository: revision 0 with `r0_props` (its `svn:date`).
    pub fn create(uuid: &str, r0_props: PropList) -> MemRepo {
        let mut store = Store {
            next: 1,
            ..Store::default()
        };
        let root = NodeRevId::from_raw(store.fresh());
        store
            .nodes
            .insert(root.raw(), Arc::new(NodeRev::empty_root()));
        store.revs.push((
            RevInfo {
                root,
                next_node_id: 1,
                next_copy_id: 1,
            },
            Arc::new(RevMeta::new(r0_props, Vec::new())),
        ));
        store.published_next = store.next;
        MemRepo::with_store(uuid.to_string(), store)
    }

    /// Every revision of `src`, copied record by record (shared records stay shared: a
    /// copied subtree is one listing, equal texts one text), and its locks.
    pub fn copy_of(src: &dyn ReadRepo) -> Result<MemRepo> {
        let mut c = Copier {
            src,
            store: Store {
                next: 1,
                ..Store::default()
            },
            node_ids: HashMap::new(),
            listing_ids: HashMap::new(),
            props_ids: HashMap::new(),
            text_ids: HashMap::new(),
        };
        for rev in 0..=src.youngest() {
            let info = src.rev_info(rev)?;
            let root = c.node(info.root)?;
            let meta = src.rev_meta(rev)?;
            let mut changes = Vec::with_capacity(meta.changes.len());
            for ch in meta.changes.iter() {
                changes.push(Change {
                    node: c.node(ch.node)?,
                    ..ch.clone()
                });
            }
            let info = RevInfo { root, ..info };
            let meta = RevMeta::new(meta.revprops.clone(), changes);
            c.store.revs.push((info, Arc::new(meta)));
        }
        let mut store = c.store;
        store.published = src.youngest();
        store.published_next = store.next;
        let repo = MemRepo::with_store(src.uuid()?, store);
        *lock(&repo.shared.locks) = src.locks()?;
        Ok(repo)
    }

    /// Gives the handle's users (and its clones') another clock and source of names.
    pub fn set_env(&self, env: Arc<dyn Env>) {
        *lock(&self.shared.env) = env;
    }

    /// Takes the write lock, waiting while another writer holds it.
    pub fn writer(&self) -> MemWriter {
        let mut held = lock(&self.shared.write_lock);
        while *held {
            held = self
                .shared
                .unlocked
                .wait(held)
                .unwrap_or_else(|e| e.into_inner());
        }
        *held = true;
        drop(held);
        self.writer_locked()
    }

    /// The write lock if nobody holds it.
    pub fn try_writer(&self) -> Option<MemWriter> {
        let mut held = lock(&self.shared.write_lock);
        if *held {
            return None;
        }
        *held = true;
        drop(held);
        Some(self.writer_locked())
    }

    fn writer_locked(&self) -> MemWriter {
        let store = self.shared.store.read().unwrap_or_else(|e| e.into_inner());
        let published = store.published;
        drop(store);
        let view = MemRepo {
            shared: self.shared.clone(),
            seen: AtomicU64::new(published),
        };
        MemWriter {
            view,
            youngest: published,
            published,
            locked: true,
            revprops: Vec::new(),
            failed: false,
        }
    }

    fn store(&self) -> std::sync::RwLockReadGuard<'_, Store> {
        self.shared.store.read().unwrap_or_else(|e| e.into_inner())
    }

    fn missing(what: &str, raw: u64) -> StoreError {
        StoreError::Corrupt {
            file: "memory",
            offset: raw,
            what: Corruption::new(format!("no {what} with this id")),
        }
    }

    fn rev_index(&self, rev: Revnum) -> Result<usize> {
        if rev > self.youngest() {
            return Err(StoreError::NoSuchRevision(rev));
        }
        usize::try_from(rev).map_err(|_| StoreError::NoSuchRevision(rev))
    }
}

struct Copier<'a> {
    src: &'a dyn ReadRepo,
    store: Store,
    node_ids: HashMap<NodeRevId, NodeRevId>,
    listing_ids: HashMap<ListingId, ListingId>,
    props_ids: HashMap<PropsId, PropsId>,
    text_ids: HashMap<TextId, TextId>,
}

impl Copier<'_> {
    fn node(&mut self, id: NodeRevId) -> Result<NodeRevId> {
        if id.is_none() {
            return Ok(NodeRevId::NONE);
        }
        if let Some(&done) = self.node_ids.get(&id) {
            return Ok(done);
        }
        let n = self.src.node(id)?;
        let mut copy = NodeRev::clone(&n);
        copy.predecessor = self.node(n.predecessor)?;
        copy.props = self.props(n.props)?;
        copy.entries = self.listing(n.entries)?;
        if let Some(t) = n.text {
            copy.text = Some(FileText {
                rep: self.text(&t)?,
                ..t
            });
        }
        let new = NodeRevId::from_raw(self.store.fresh());
        self.store.nodes.insert(new.raw(), Arc::new(copy));
        self.node_ids.insert(id, new);
        Ok(new)
    }

    fn listing(&mut self, id: ListingId) -> Result<ListingId> {
        if id.is_none() {
            return Ok(ListingId::NONE);
        }
        if let Some(&done) = self.listing_ids.get(&id) {
            return Ok(done);
        }
        let entries = self.src.listing(id)?;
        let mut copy = Vec::with_capacity(entries.len());
        for e in entries.iter() {
            copy.push(DirEntry {
                node: self.node(e.node)?,
                ..e.clone()
            });
        }
        let new = ListingId::from_raw(self.store.fresh());
        self.store.listings.insert(new.raw(), Arc::new(copy));
        self.listing_ids.insert(id, new);
        Ok(new)
    }

    fn props(&mut self, id: PropsId) -> Result<PropsId> {
        if id.is_none() {
            return Ok(PropsId::NONE);
        }
        if let Some(&done) = self.props_ids.get(&id) {
            return Ok(done);
        }
        let props = self.src.props_shared(id)?;
        let new = PropsId::from_raw(self.store.fresh());
        self.store.props.insert(new.raw(), props);
        self.props_ids.insert(id, new);
        Ok(new)
    }

    fn text(&mut self, t: &FileText) -> Result<TextId> {
        if t.rep.is_none() {
            return Ok(TextId::NONE);
        }
        if let Some(&done) = self.text_ids.get(&t.rep) {
            return Ok(done);
        }
        let text = self.src.read_text(t)?;
        let new = TextId::from_raw(self.store.fresh());
        self.store.texts.insert(new.raw(), text);
        self.text_ids.insert(t.rep, new);
        Ok(new)
    }
}

impl ReadRepo for MemRepo {
    fn youngest(&self) -> Revnum {
        self.seen.load(Ordering::Acquire)
    }

    fn refresh(&self) -> Result<Revnum> {
        let published = self.store().published;
        Ok(self
            .seen
            .fetch_max(published, Ordering::AcqRel)
            .max(published))
    }

    fn uuid(&self) -> Result<String> {
        Ok(lock(&self.shared.uuid).clone())
    }

    fn env(&self) -> Arc<dyn Env> {
        lock(&self.shared.env).clone()
    }

    fn rev_info(&self, rev: Revnum) -> Result<RevInfo> {
        let r = self.rev_index(rev)?;
        self.store()
            .revs
            .get(r)
            .map(|(info, _)| *info)
            .ok_or(StoreError::NoSuchRevision(rev))
    }

    fn rev_meta(&self, rev: Revnum) -> Result<Arc<RevMeta>> {
        let r = self.rev_index(rev)?;
        self.store()
            .revs
            .get(r)
            .map(|(_, meta)| meta.clone())
            .ok_or(StoreError::NoSuchRevision(rev))
    }

    fn node(&self, id: NodeRevId) -> Result<Arc<NodeRev>> {
        self.store()
            .nodes
            .get(&id.raw())
            .cloned()
            .ok_or_else(|| Self::missing("node-revision", id.raw()))
    }

    fn listing(&self, id: ListingId) -> Result<Arc<Vec<DirEntry>>> {
        if id.is_none() {
            return Ok(Arc::default());
        }
        self.store()
            .listings
            .get(&id.raw())
            .cloned()
            .ok_or_else(|| Self::missing("listing", id.raw()))
    }

    fn props_shared(&self, id: PropsId) -> Result<Arc<PropList>> {
        if id.is_none() {
            return Ok(Arc::default());
        }
        self.store()
            .props
            .get(&id.raw())
            .cloned()
            .ok_or_else(|| Self::missing("property list", id.raw()))
    }

    fn text(&self, id: TextId) -> Result<Arc<Vec<u8>>> {
        if id.is_none() {
            return Ok(Arc::default());
        }
        self.store()
            .texts
            .get(&id.raw())
            .cloned()
            .ok_or_else(|| Self::missing("text", id.raw()))
    }

    fn text_reader(&self, text: &FileText) -> Result<Box<dyn Read + Send>> {
        Ok(Box::new(std::io::Cursor::new(SharedBytes(
            self.text(text.rep)?,
        ))))
    }

    fn locks(&self) -> Result<Arc<LockTable>> {
        Ok(lock(&self.shared.locks).clone())
    }

    fn local_dir(&self) -> Option<&std::path::Path> {
        self.shared.dir.get().map(std::path::PathBuf::as_path)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

struct SharedBytes(Arc<Vec<u8>>);

impl AsRef<[u8]> for SharedBytes {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

/// The write lock and commit point of a [`MemRepo`]: revisions it commits are seen by its
/// own view until `sync` publishes them; dropped unpublished, they and their ids are
/// forgotten. Dropping it releases the lock.
pub struct MemWriter {
    view: MemRepo,
    youngest: Revnum,
    published: Revnum,
    locked: bool,
    /// Revision property changes waiting for `sync`.
    revprops: Vec<(Revnum, PropList)>,
    failed: bool,
}

impl MemWriter {
    fn usable(&self) -> Result<()> {
        if self.failed {
            return Err(StoreError::Conflict(
                "an earlier write of this writer failed".into(),
            ));
        }
        if !self.locked {
            return Err(StoreError::Conflict("the writer is unlocked".into()));
        }
        Ok(())
    }

    fn store_mut(&self) -> std::sync::RwLockWriteGuard<'_, Store> {
        self.view
            .shared
            .store
            .write()
            .unwrap_or_else(|e| e.into_inner())
    }

    fn release(&mut self) {
        if self.locked {
            self.locked = false;
            *lock(&self.view.shared.write_lock) = false;
            self.view.shared.unlocked.notify_one();
        }
    }
}

impl Drop for MemWriter {
    fn drop(&mut self) {
        if self.youngest != self.published {
            self.store_mut().drop_unpublished();
        }
        self.release();
    }
}

impl WriteRepo for MemWriter {
    fn youngest(&self) -> Revnum {
        self.youngest
    }

    fn published(&self) -> Revnum {
        self.published
    }

    fn view(&mut self) -> Result<&dyn ReadRepo> {
        self.view.seen.store(self.youngest, Ordering::Release);
        Ok(&self.view)
    }

    fn begin(&mut self) -> Result<Box<dyn WriteTxn + '_>> {
        self.usable()?;
        Ok(Box::new(MemTxn::begin(self)?))
    }

    fn sync(&mut self) -> Result<Revnum> {
        self.usable()?;
        let pending = std::mem::take(&mut self.revprops);
        let mut store = self.store_mut();
        for (rev, props) in pending {
            let at = usize::try_from(rev).map_err(|_| StoreError::NoSuchRevision(rev))?;
            let (_, meta) = store
                .revs
                .get_mut(at)
                .ok_or(StoreError::NoSuchRevision(rev))?;
            *meta = Arc::new(RevMeta::new(props, meta.changes.clone()));
        }
        store.published = self.youngest;
        store.published_next = store.next;
        drop(store);
        self.published = self.youngest;
        Ok(self.published)
    }

    fn discard_unpublished(&mut self) -> Result<()> {
        let mut store = self.store_mut();
        if store.published != self.published {
            return Err(StoreError::Conflict(format!(
                "r{} is published but this writer published r{}",
                store.published, self.published
            )));
        }
        store.drop_unpublished();
        drop(store);
        self.revprops.clear();
        self.youngest = self.published;
        Ok(())
    }

    fn unlock(&mut self) -> Result<()> {
        if self.published != self.youngest {
            return Err(StoreError::Conflict(
                "unlocking a writer with unpublished revisions".to_string(),
            ));
        }
        self.release();
        Ok(())
    }

    fn relock(&mut self) -> Result<bool> {
        if self.failed {
            return Ok(false);
        }
        let shared = self.view.shared.clone();
        let mut held = lock(&shared.write_lock);
        while *held {
            held = shared
                .unlocked
                .wait(held)
                .unwrap_or_else(|e| e.into_inner());
        }
        let published = shared
            .store
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .published;
        if published != self.published {
            return Ok(false);
        }
        *held = true;
        self.locked = true;
        Ok(true)
    }

    fn expose_txn(&mut self, name: &str) -> Result<()> {
        Err(StoreError::Unsupported(format!(
            "showing transaction '{name}' to hooks (no hooks run in memory)"
        )))
    }

    fn forget_txn(&self, _name: &str) {}

    fn set_revprops(&mut self, rev: Revnum, revprops: PropList) -> Result<()> {
        self.usable()?;
        if rev > self.youngest {
            return Err(StoreError::NoSuchRevision(rev));
        }
        self.revprops.push((rev, revprops));
        Ok(())
    }

    fn set_uuid(&mut self, uuid: &str) -> Result<()> {
        let b = uuid.as_bytes();
        let ok = b.len() == 36
            && b.iter().enumerate().all(|(i, c)| match i {
                8 | 13 | 18 | 23 => *c == b'-',
                _ => c.is_ascii_hexdigit(),
            });
        if !ok {
            return Err(StoreError::BadUuid(uuid.to_string()));
        }
        *lock(&self.view.shared.uuid) = uuid.to_string();
        Ok(())
    }

    fn set_locks(&mut self, locks: BTreeMap<String, Lock>, reader: &dyn ReadRepo) -> Result<()> {
        self.usable()?;
        let same = reader
            .as_any()
            .downcast_ref::<MemRepo>()
            .is_some_and(|r| Arc::ptr_eq(&r.shared, &self.view.shared));
        if !same {
            return Err(StoreError::Conflict(
                "the lock table changed through a writer of another repository".into(),
            ));
        }
        *lock(&self.view.shared.locks) = Arc::new(LockTable::new(locks));
        Ok(())
    }
}

/// A node of the transaction's tree: as stored, or changed here.
enum Slot {
    Stored(NodeRevId, NodeKind),
    Mut(Box<MutNode>),
}

struct MutNode {
    /// Identity and history final; `props`, `text` and `entries` as stored unless replaced.
    node: NodeRev,
    props: Option<PropList>,
    entries: Option<BTreeMap<String, Slot>>,
}

/// A revision being built on a [`MemWriter`]: a tree of changed nodes over the base
/// revision; texts are kept aside (with ids handed out now) and everything else is written
/// bottom-up at `commit`.
struct MemTxn<'w> {
    w: &'w mut MemWriter,
    base: Revnum,
    root: MutNode,
    changes: FoldedChanges,
    revprops: PropList,
    next_node_id: u64,
    next_copy_id: u64,
    keys: u64,
    /// Texts set in this transaction, by the id they are stored under at `commit`.
    texts: Vec<(u64, Arc<Vec<u8>>)>,
}

fn comps(path: &str) -> Vec<&str> {
    if path.is_empty() {
        Vec::new()
    } else {
        path.split('/').collect()
    }
}

/// `id`'s node opened for change at `path` in the transaction: its successor.
fn successor(repo: &MemRepo, id: NodeRevId, path: &str, parent: &NodeRev) -> Result<MutNode> {
    Ok(MutNode {
        node: repo.node(id)?.successor(id, path, parent),
        props: None,
        entries: None,
    })
}

fn entries<'a>(repo: &MemRepo, n: &'a mut MutNode) -> Result<&'a mut BTreeMap<String, Slot>> {
    if n.entries.is_none() {
        let listing = repo.listing(n.node.entries)?;
        n.entries = Some(
            listing
                .iter()
                .map(|e| (e.name.clone(), Slot::Stored(e.node, e.kind)))
                .collect(),
        );
    }
    Ok(n.entries.as_mut().expect("loaded above"))
}

/// The node at `path` below `n` (whose path is `at`), opened for change on the way.
fn walk<'a>(
    repo: &MemRepo,
    n: &'a mut MutNode,
    at: &str,
    rest: &[&str],
) -> Result<&'a mut MutNode> {
    let Some((first, rest)) = rest.split_first() else {
        return Ok(n);
    };
    let path = join(at, first);
    if n.node.kind != NodeKind::Dir {
        return Err(StoreError::NotADirectory(at.to_string()));
    }
    let parent = n.node.clone();
    let map = entries(repo, n)?;
    let slot = map
        .get_mut(*first)
        .ok_or_else(|| StoreError::TxnPathNotFound { path: path.clone() })?;
    if let Slot::Stored(id, _) = *slot {
        *slot = Slot::Mut(Box::new(successor(repo, id, &path, &parent)?));
    }
    match slot {
        Slot::Mut(child) => walk(repo, child, &path, rest),
        Slot::Stored(..) => unreachable!("opened above"),
    }
}

impl<'w> MemTxn<'w> {
    fn begin(w: &'w mut MemWriter) -> Result<MemTxn<'w>> {
        let base = w.youngest;
        w.view.seen.store(base, Ordering::Release);
        let info = w.view.rev_info(base)?;
        let mut node = NodeRev::clone(&*w.view.node(info.root)?);
        node.predecessor = info.root;
        node.pred_count += 1;
        Ok(MemTxn {
            w,
            base,
            root: MutNode {
                node,
                props: None,
                entries: None,
            },
            changes: FoldedChanges::default(),
            revprops: PropList::new(),
            next_node_id: info.next_node_id,
            next_copy_id: info.next_copy_id,
            keys: (base + 1) << 32,
            texts: Vec::new(),
        })
    }

    fn record(&mut self, path: &str, change: ChangeKind, kind: NodeKind, text: bool, props: bool) {
        self.changes.record(
            path,
            PathChange {
                change,
                kind: Some(kind),
                text_mod: text,
                prop_mod: props,
                copyfrom: None,
            },
        );
    }

    /// The parent directory of `path`, opened for change, and `path`'s name in it.
    fn parent<'p>(&mut self, path: &'p str) -> Result<(&mut MutNode, &'p str)> {
        let (parent, name) = parent_and_name(path);
        let n = walk(&self.w.view, &mut self.root, "", &comps(parent))?;
        if n.node.kind != NodeKind::Dir {
            return Err(StoreError::NotADirectory(parent.to_string()));
        }
        Ok((n, name))
    }

    fn insert(&mut self, path: &str, node: MutNode) -> Result<()> {
        let repo = self.w.view.clone();
        let (parent, name) = self.parent(path)?;
        let map = entries(&repo, parent)?;
        if map.contains_key(name) {
            return Err(StoreError::AlreadyExists(path.to_string()));
        }
        map.insert(name.to_string(), Slot::Mut(Box::new(node)));
        Ok(())
    }

    fn write_tree(
        &mut self,
        mut n: MutNode,
        path: &str,
        written: &mut HashMap<String, NodeRevId>,
    ) -> Result<NodeRevId> {
        if let Some(p) = n.props.take() {
            n.node.props = if p.is_empty() {
                PropsId::NONE
            } else {
                let mut store = self.w.store_mut();
                let id = store.fresh();
                store.props.insert(id, Arc::new(p));
                PropsId::from_raw(id)
            };
        }
        if let Some(map) = n.entries.take() {
            let mut listing = Vec::with_capacity(map.len());
            for (name, slot) in map {
                let (node, kind) = match slot {
                    Slot::Stored(id, kind) => (id, kind),
                    Slot::Mut(child) => {
                        let kind = child.node.kind;
                        (self.write_tree(*child, &join(path, &name), written)?, kind)
                    }
                };
                listing.push(DirEntry { name, kind, node });
            }
            n.node.entries = if listing.is_empty() {
                ListingId::NONE
            } else {
                let mut store = self.w.store_mut();
                let id = store.fresh();
                store.listings.insert(id, Arc::new(listing));
                ListingId::from_raw(id)
            };
        }
        n.node.created_rev = self.base + 1;
        let mut store = self.w.store_mut();
        let id = NodeRevId::from_raw(store.fresh());
        store.nodes.insert(id.raw(), Arc::new(n.node));
        drop(store);
        if self.changes.paths().contains_key(path) {
            written.insert(path.to_string(), id);
        }
        Ok(id)
    }
}

impl WriteTxn for MemTxn<'_> {
    fn base_rev(&self) -> Revnum {
        self.base
    }

    fn set_revprops(&mut self, revprops: PropList) {
        self.revprops = revprops;
    }

    fn view(&mut self) -> Result<&dyn ReadRepo> {
        Ok(&self.w.view)
    }

    fn info(&mut self, path: &str) -> Result<Option<NodeInfo>> {
        let repo = &self.w.view;
        let cs = comps(path);
        let mut n = &self.root;
        let mut i = 0;
        let (stored, from) = loop {
            if i == cs.len() {
                let props = match &n.props {
                    Some(p) => p.clone(),
                    None => repo.props(&n.node)?,
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
                    Some(Slot::Stored(id, _)) => break (*id, i + 1),
                },
                None => match repo.child(&n.node, cs[i])? {
                    Some((id, _)) => break (id, i + 1),
                    None => return Ok(None),
                },
            }
            i += 1;
        };
        let Some((_, node)) = repo.lookup_from(stored, &cs[from..].join("/"))? else {
            return Ok(None);
        };
        Ok(Some(NodeInfo {
            kind: node.kind,
            props: repo.props(&node)?,
            text: node.file_text(),
        }))
    }

    fn make_node(&mut self, path: &str, kind: NodeKind) -> Result<()> {
        if path.is_empty() {
            return Err(StoreError::RootOperation("added"));
        }
        let node_id = self.next_node_id;
        let rev = self.base + 1;
        let (parent, _) = self.parent(path)?;
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
        self.insert(
            path,
            MutNode {
                node,
                props: None,
                entries: (kind == NodeKind::Dir).then(BTreeMap::new),
            },
        )?;
        self.next_node_id += 1;
        self.record(path, ChangeKind::Add, kind, false, false);
        Ok(())
    }

    fn delete(&mut self, path: &str) -> Result<()> {
        if path.is_empty() {
            return Err(StoreError::RootOperation("deleted"));
        }
        let repo = self.w.view.clone();
        let (parent, name) = self.parent(path)?;
        let kind = match entries(&repo, parent)?.remove(name) {
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

    fn copy(&mut self, from_rev: Revnum, from_path: &str, to_path: &str) -> Result<()> {
        if to_path.is_empty() {
            return Err(StoreError::RootOperation("a copy target"));
        }
        if from_rev > self.base {
            return Err(StoreError::NoSuchRevision(from_rev));
        }
        let rev = self.base + 1;
        let (src_id, src) = self.w.view.node_at(from_rev, from_path)?;
        let mut node = NodeRev::clone(&src);
        node.predecessor = src_id;
        node.pred_count += 1;
        node.copy_id = self.next_copy_id;
        node.created_rev = rev;
        node.created_path = to_path.to_string();
        node.copyfrom = Some((from_rev, from_path.to_string()));
        node.copyroot = (rev, to_path.to_string());
        let kind = node.kind;
        self.insert(
            to_path,
            MutNode {
                node,
                props: None,
                entries: None,
            },
        )?;
        self.next_copy_id += 1;
        self.changes.record(
            to_path,
            PathChange {
                change: ChangeKind::Add,
                kind: Some(kind),
                text_mod: false,
                prop_mod: false,
                copyfrom: Some((from_rev, from_path.to_string())),
            },
        );
        Ok(())
    }

    fn change_prop(&mut self, path: &str, name: &[u8], value: Option<&[u8]>) -> Result<()> {
        self.keys += 1;
        let key = self.keys;
        let repo = self.w.view.clone();
        let n = walk(&repo, &mut self.root, "", &comps(path))?;
        n.node.props_key = key;
        if n.props.is_none() {
            n.props = Some(repo.props(&n.node)?);
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

    fn set_text(&mut self, path: &str, src: &mut dyn Read) -> Result<FileText> {
        let repo = self.w.view.clone();
        if walk(&repo, &mut self.root, "", &comps(path))?.node.kind != NodeKind::File {
            return Err(StoreError::NotAFile(path.to_string()));
        }
        let mut bytes = Vec::new();
        src.read_to_end(&mut bytes).map_err(|err| StoreError::Io {
            context: format!("reading the new contents of '{path}'"),
            err,
        })?;
        let md5 = Md5(md5::Md5::digest(&bytes).into());
        let sha1 = Sha1(sha1::Sha1::digest(&bytes).into());
        let rep = if bytes.is_empty() {
            TextId::NONE
        } else {
            let id = self.w.store_mut().fresh();
            self.texts.push((id, Arc::new(bytes.clone())));
            TextId::from_raw(id)
        };
        let ft = FileText {
            rep,
            size: bytes.len() as u64,
            md5,
            sha1,
        };
        self.keys += 1;
        let key = self.keys;
        let n = walk(&repo, &mut self.root, "", &comps(path))?;
        n.node.text = Some(ft);
        n.node.text_key = key;
        self.record(path, ChangeKind::Modify, NodeKind::File, true, false);
        Ok(ft)
    }

    fn read_text(&mut self, path: &str) -> Result<Arc<Vec<u8>>> {
        let info = self
            .info(path)?
            .ok_or_else(|| StoreError::TxnPathNotFound {
                path: path.to_string(),
            })?;
        if let Some((_, t)) = self.texts.iter().find(|(id, _)| *id == info.text.rep.raw()) {
            return Ok(t.clone());
        }
        self.w.view.text(info.text.rep)
    }

    fn commit(mut self: Box<Self>) -> Result<Revnum> {
        let rev = self.base + 1;
        {
            let mut store = self.w.store_mut();
            for (id, t) in std::mem::take(&mut self.texts) {
                store.texts.insert(id, t);
            }
        }
        let root = std::mem::replace(
            &mut self.root,
            MutNode {
                node: NodeRev::empty_root(),
                props: None,
                entries: None,
            },
        );
        let mut written = HashMap::new();
        let root_id = self.write_tree(root, "", &mut written)?;
        self.w.view.seen.store(self.base, Ordering::Release);
        let mut changes = Vec::with_capacity(self.changes.paths().len());
        for (path, c) in self.changes.take() {
            let node = if c.change == ChangeKind::Delete {
                NodeRevId::NONE
            } else {
                match written.get(&path) {
                    Some(&id) => id,
                    None => self
                        .w
                        .view
                        .lookup_from(root_id, &path)?
                        .map_or(NodeRevId::NONE, |(id, _)| id),
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
        let info = RevInfo {
            root: root_id,
            next_node_id: self.next_node_id,
            next_copy_id: self.next_copy_id,
        };
        let meta = RevMeta::new(std::mem::take(&mut self.revprops), changes);
        self.w.store_mut().revs.push((info, Arc::new(meta)));
        self.w.youngest = rev;
        self.w.view.seen.store(rev, Ordering::Release);
        Ok(rev)
    }
}

impl Drop for MemTxn<'_> {
    fn drop(&mut self) {
        // Ids handed out to texts of an uncommitted transaction are simply never stored.
    }
}

/// Repositories in memory found by directory, as a server opens them: the in-memory
/// backend behind a server's `Backend` (the differential suites' memory side). A
/// repository is made by `svelto_repos::create` through it (its `conf/` and `hooks/` on
/// disk, in the directory it is known by, which its handles answer as `local_dir`, so
/// that hooks run), and lives as long as the backend.
#[derive(Default)]
pub struct MemBackend {
    repos: Mutex<HashMap<std::path::PathBuf, MemRepo>>,
}

impl MemBackend {
    pub fn new() -> MemBackend {
        MemBackend::default()
    }

    /// The repository known by `dir` (a handle seeing its published revisions).
    pub fn repo(&self, dir: &std::path::Path) -> Option<MemRepo> {
        let repo = lock(&self.repos).get(dir).cloned()?;
        repo.refresh().ok()?;
        Some(repo)
    }

    fn known(&self, dir: &std::path::Path) -> Result<MemRepo> {
        self.repo(dir).ok_or_else(|| {
            StoreError::Unsupported(format!("no repository in memory at '{}'", dir.display()))
        })
    }
}

impl svelto_fs::Backend for MemBackend {
    fn open(&self, dir: &std::path::Path, env: &Arc<dyn Env>) -> Result<Arc<dyn ReadRepo>> {
        let repo = self.known(dir)?;
        repo.set_env(env.clone());
        Ok(Arc::new(repo))
    }

    fn is_repository(&self, dir: &std::path::Path) -> bool {
        lock(&self.repos).contains_key(dir)
    }

    fn open_writer(&self, dir: &std::path::Path) -> Result<Box<dyn WriteRepo>> {
        Ok(Box::new(self.known(dir)?.writer()))
    }

    fn try_open_writer(&self, dir: &std::path::Path) -> Result<Option<Box<dyn WriteRepo>>> {
        Ok(self
            .known(dir)?
            .try_writer()
            .map(|w| Box::new(w) as Box<dyn WriteRepo>))
    }

    fn create(&self, dir: &std::path::Path, uuid: &str, r0_props: &PropList) -> Result<()> {
        let mut repos = lock(&self.repos);
        if repos.contains_key(dir) {
            return Err(StoreError::Conflict(format!(
                "'{}' already holds a repository in memory",
                dir.display()
            )));
        }
        let repo = MemRepo::create(uuid, r0_props.clone());
        let _ = repo.shared.dir.set(dir.to_path_buf());
        repos.insert(dir.to_path_buf(), repo);
        Ok(())
    }
}

/// The local engine as a server opens repositories by directory (`svelto serve`'s
/// backend), for the tests of the layers above the seam, which name no backend.
pub fn local_backend() -> Arc<dyn svelto_fs::Backend> {
    Arc::new(svelto_store::LocalBackend)
}

/// A reading handle of the local repository in `dir`, as the seam's callers take it (the
/// local engine picked here, for the tests of the layers above the seam, which name no
/// backend).
pub fn open_local(dir: &std::path::Path) -> Arc<dyn ReadRepo> {
    svelto_fs::Backend::open(
        &svelto_store::LocalBackend,
        dir,
        &(Arc::new(SystemEnv) as Arc<dyn Env>),
    )
    .unwrap_or_else(|e| panic!("open {dir:?}: {e}"))
}

/// The writer of the local repository in `dir` (takes its write lock).
pub fn local_writer(dir: &std::path::Path) -> Box<dyn WriteRepo> {
    svelto_fs::Backend::open_writer(&svelto_store::LocalBackend, dir)
        .unwrap_or_else(|e| panic!("the writer of {dir:?}: {e}"))
}

/// Which storage backend a test runs over: the local engine's files or [`MemRepo`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Local,
    Memory,
}

/// Both backends, for a test that runs over each.
pub const BACKENDS: [Backend; 2] = [Backend::Local, Backend::Memory];

/// A new, empty repository on one backend, as the seam's callers see it: a shared reading
/// handle and a way to take its writer. A local one lives in a temporary directory made
/// with `svelto_repos::create` (conf/, hooks/ and all), removed with it.
pub struct TestRepo {
    pub backend: Backend,
    pub repo: Arc<dyn ReadRepo>,
    mem: Option<MemRepo>,
    dir: Option<(tempfile::TempDir, std::path::PathBuf)>,
}

impl TestRepo {
    /// An empty repository with `uuid`, revision 0 dated `date`.
    pub fn create(backend: Backend, uuid: &str, date: &str) -> TestRepo {
        match backend {
            Backend::Local => {
                let tmp = tempfile::tempdir().expect("tempdir");
                let path = tmp.path().join("repo");
                svelto_repos::create(&svelto_store::LocalBackend, &path, uuid, date)
                    .expect("create a local repository");
                let repo = svelto_store::Repo::open(&path).expect("open");
                TestRepo {
                    backend,
                    repo: Arc::new(repo),
                    mem: None,
                    dir: Some((tmp, path)),
                }
            }
            Backend::Memory => {
                let mut r0 = PropList::new();
                r0.insert(b"svn:date".to_vec(), date.as_bytes().to_vec());
                let mem = MemRepo::create(uuid, r0);
                TestRepo {
                    backend,
                    repo: Arc::new(mem.clone()),
                    mem: Some(mem),
                    dir: None,
                }
            }
        }
    }

    /// Takes the repository's writer (waiting for another to finish).
    pub fn writer(&self) -> Box<dyn WriteRepo> {
        match (&self.mem, &self.dir) {
            (Some(mem), _) => Box::new(mem.writer()),
            (None, Some((_, path))) => {
                Box::new(svelto_store::Writer::open(path).expect("open the writer"))
            }
            (None, None) => unreachable!("a test repository is local or in memory"),
        }
    }

    /// Gives the repository's handles another clock and source of names.
    pub fn set_env(&self, env: Arc<dyn Env>) {
        match &self.mem {
            Some(mem) => mem.set_env(env),
            None => self
                .repo
                .as_any()
                .downcast_ref::<svelto_store::Repo>()
                .expect("a local repository")
                .set_env(env),
        }
    }

    /// Another reading handle of the same repository, as another process opens it
    /// (it sees what was published).
    pub fn open_again(&self) -> Arc<dyn ReadRepo> {
        match (&self.mem, &self.dir) {
            (Some(mem), _) => {
                let again = mem.clone();
                again.refresh().expect("refresh");
                Arc::new(again)
            }
            (None, Some((_, path))) => Arc::new(svelto_store::Repo::open(path).expect("open")),
            (None, None) => unreachable!("a test repository is local or in memory"),
        }
    }

    /// A local repository's directory (None in memory).
    pub fn path(&self) -> Option<&std::path::Path> {
        self.dir.as_ref().map(|(_, p)| p.as_path())
    }
}
