//! `MemRepo`: a storage backend held in memory, written against the storage seam
//! (`svelto_fs`) alone, as a second backend is: no file, no offset, ids counted from 1.
//! Made by copying any backend's repository through its [`ReadRepo`] (for tests: a
//! history built or loaded with the local engine, then read back from memory), so the
//! contract (`svelto_fs::contract::check`) and the callers' suites can run over both.

use std::collections::HashMap;
use std::io::Read;
use std::sync::{Arc, Mutex};
use svelto_core::{Env, ListingId, NodeRevId, PropList, PropsId, Revnum, SystemEnv, TextId};
use svelto_fs::{
    Change, Corruption, DirEntry, FileText, NodeRev, ReadRepo, Result, RevInfo, RevMeta, StoreError,
};

/// A repository in memory: every record in a map under an id handed out in order, so that
/// what a record names always has a smaller id, and a later revision's ids are greater.
pub struct MemRepo {
    uuid: String,
    env: Mutex<Arc<dyn Env>>,
    revs: Vec<(RevInfo, Arc<RevMeta>)>,
    nodes: HashMap<u64, Arc<NodeRev>>,
    listings: HashMap<u64, Arc<Vec<DirEntry>>>,
    props: HashMap<u64, Arc<PropList>>,
    texts: HashMap<u64, Arc<Vec<u8>>>,
}

impl MemRepo {
    /// Every revision of `src`, copied record by record (shared records stay shared: a
    /// copied subtree is one listing, equal texts one text).
    pub fn copy_of(src: &dyn ReadRepo) -> Result<MemRepo> {
        let mut c = Copier {
            src,
            next: 1,
            repo: MemRepo {
                uuid: src.uuid()?,
                env: Mutex::new(Arc::new(SystemEnv)),
                revs: Vec::new(),
                nodes: HashMap::new(),
                listings: HashMap::new(),
                props: HashMap::new(),
                texts: HashMap::new(),
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
            c.repo.revs.push((info, Arc::new(meta)));
        }
        Ok(c.repo)
    }

    /// Gives the handle's users another clock and source of names.
    pub fn set_env(&self, env: Arc<dyn Env>) {
        *self.env.lock().expect("env lock") = env;
    }

    fn missing(what: &str, raw: u64) -> StoreError {
        StoreError::Corrupt {
            file: "memory",
            offset: raw,
            what: Corruption::new(format!("no {what} with this id")),
        }
    }
}

struct Copier<'a> {
    src: &'a dyn ReadRepo,
    next: u64,
    repo: MemRepo,
    node_ids: HashMap<NodeRevId, NodeRevId>,
    listing_ids: HashMap<ListingId, ListingId>,
    props_ids: HashMap<PropsId, PropsId>,
    text_ids: HashMap<TextId, TextId>,
}

impl Copier<'_> {
    fn fresh(&mut self) -> u64 {
        let id = self.next;
        self.next += 1;
        id
    }

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
        let new = NodeRevId::from_raw(self.fresh());
        self.repo.nodes.insert(new.raw(), Arc::new(copy));
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
        let new = ListingId::from_raw(self.fresh());
        self.repo.listings.insert(new.raw(), Arc::new(copy));
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
        let new = PropsId::from_raw(self.fresh());
        self.repo.props.insert(new.raw(), props);
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
        let new = TextId::from_raw(self.fresh());
        self.repo.texts.insert(new.raw(), text);
        self.text_ids.insert(t.rep, new);
        Ok(new)
    }
}

impl ReadRepo for MemRepo {
    fn youngest(&self) -> Revnum {
        self.revs.len() as Revnum - 1
    }

    fn refresh(&self) -> Result<Revnum> {
        Ok(self.youngest())
    }

    fn uuid(&self) -> Result<String> {
        Ok(self.uuid.clone())
    }

    fn env(&self) -> Arc<dyn Env> {
        self.env.lock().expect("env lock").clone()
    }

    fn rev_info(&self, rev: Revnum) -> Result<RevInfo> {
        let r = usize::try_from(rev).map_err(|_| StoreError::NoSuchRevision(rev))?;
        self.revs
            .get(r)
            .map(|(info, _)| *info)
            .ok_or(StoreError::NoSuchRevision(rev))
    }

    fn rev_meta(&self, rev: Revnum) -> Result<Arc<RevMeta>> {
        let r = usize::try_from(rev).map_err(|_| StoreError::NoSuchRevision(rev))?;
        self.revs
            .get(r)
            .map(|(_, meta)| meta.clone())
            .ok_or(StoreError::NoSuchRevision(rev))
    }

    fn node(&self, id: NodeRevId) -> Result<Arc<NodeRev>> {
        self.nodes
            .get(&id.raw())
            .cloned()
            .ok_or_else(|| Self::missing("node-revision", id.raw()))
    }

    fn listing(&self, id: ListingId) -> Result<Arc<Vec<DirEntry>>> {
        if id.is_none() {
            return Ok(Arc::default());
        }
        self.listings
            .get(&id.raw())
            .cloned()
            .ok_or_else(|| Self::missing("listing", id.raw()))
    }

    fn props_shared(&self, id: PropsId) -> Result<Arc<PropList>> {
        if id.is_none() {
            return Ok(Arc::default());
        }
        self.props
            .get(&id.raw())
            .cloned()
            .ok_or_else(|| Self::missing("property list", id.raw()))
    }

    fn text(&self, id: TextId) -> Result<Arc<Vec<u8>>> {
        if id.is_none() {
            return Ok(Arc::default());
        }
        self.texts
            .get(&id.raw())
            .cloned()
            .ok_or_else(|| Self::missing("text", id.raw()))
    }

    fn text_reader(&self, text: &FileText) -> Result<Box<dyn Read + Send>> {
        Ok(Box::new(std::io::Cursor::new(Shared(self.text(text.rep)?))))
    }
}

struct Shared(Arc<Vec<u8>>);

impl AsRef<[u8]> for Shared {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}
