//! Reading a repository: the handle every reader of a backend is given.

use crate::admin::{DbCopy, Frozen, HotcopyError, TxnRemoval};
use crate::error::{Corruption, Result, StoreError};
use crate::types::{
    DirEntry, FileText, HistoryEntry, Listed, ListedDir, NodeRev, RevInfo, RevMeta, Stored,
};
use crate::write::{LockTable, WriteRepo};
use std::any::Any;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use svelto_core::{
    compare_paths, ChangeKind, Env, ListingId, NodeKind, NodeRevId, PropList, PropsId, Revnum,
    TextId,
};
use svelto_delta::Window;

/// A repository as its readers see it: one handle per repository, shared by threads, no
/// lock taken. It sees the revisions published when it was opened or last refreshed.
///
/// The required methods are the backend's; the provided ones are written once in terms of
/// them, and the optional fast paths (`stored_*`, `text_over`, `self_contained_bytes`,
/// `listed`) answer "not stored that way" (`None`) or compute the plain result unless a
/// backend has something better. Ids follow [`svelto_core::NodeRevId`]'s contract: a
/// backend refuses, as corruption, a record that names an id not smaller than its own.
pub trait ReadRepo: Send + Sync {
    /// The youngest revision this handle sees.
    fn youngest(&self) -> Revnum;
    /// Sees the revisions published since; never moves backwards.
    fn refresh(&self) -> Result<Revnum>;
    fn uuid(&self) -> Result<String>;
    /// Where this handle's users take the time and fresh names from.
    fn env(&self) -> Arc<dyn Env>;
    /// `rev`'s root and the identities it left unused (`NoSuchRevision` past the youngest).
    fn rev_info(&self, rev: Revnum) -> Result<RevInfo>;
    /// `rev`'s revision properties and changed paths, shared.
    fn rev_meta(&self, rev: Revnum) -> Result<Arc<RevMeta>>;
    fn node(&self, id: NodeRevId) -> Result<Arc<NodeRev>>;
    /// A directory listing, sorted by name (`NONE`: empty).
    fn listing(&self, id: ListingId) -> Result<Arc<Vec<DirEntry>>>;
    /// A property list, shared (`NONE`: empty).
    fn props_shared(&self, id: PropsId) -> Result<Arc<PropList>>;
    /// Stored contents, whole (`NONE`: empty).
    fn text(&self, id: TextId) -> Result<Arc<Vec<u8>>>;
    /// A file's contents as a stream: memory stays bounded however large it is.
    fn text_reader(&self, text: &FileText) -> Result<Box<dyn Read + Send>>;

    /// The repository's lock table now: a shared snapshot, kept per handle (changed with
    /// [`WriteRepo::set_locks`]).
    fn locks(&self) -> Result<Arc<LockTable>>;
    /// The backend's own type, for a writer that checks a handle is one of its own.
    fn as_any(&self) -> &dyn Any;

    /// Stages the unpublished revision a writer will build as transaction `name`, apart
    /// from the repository and without the write lock, for a pre-commit hook to read;
    /// the transaction lasts as long as the returned writer. A backend without hooks'
    /// transactions refuses (`Unsupported`).
    fn stage(&self, name: &str) -> Result<Box<dyn WriteRepo>> {
        Err(StoreError::Unsupported(format!(
            "staging transaction '{name}'"
        )))
    }

    /// The repository's directory when it lives in one on this machine (where `conf/` and
    /// `hooks/` are); None for a backend without one (no hooks run then).
    fn local_dir(&self) -> Option<&Path> {
        None
    }

    /// The post-commit hook of `rev`, recorded with its publication
    /// ([`WriteRepo::record_post_commit`]), ran on this machine: a backend shared by
    /// several machines forgets the record, so that no other machine runs the hook again.
    /// Never fails the caller (a record it could not forget is retried or reported by the
    /// backend).
    fn post_commit_ran(&self, rev: Revnum) {
        let _ = rev;
    }

    /// Checks what the backend keeps beside the records (its own files or objects): Ok
    /// when it keeps nothing else.
    fn verify_storage(&self) -> Result<()> {
        Ok(())
    }

    /// Reads every stored record and checks it, beyond what a walk of the revisions
    /// reaches (records no revision names): Ok when the walk reaches everything.
    fn verify_records(&self) -> Result<()> {
        Ok(())
    }

    /// Where an edit keeps its texts until it commits (None: the system's temporary
    /// directory).
    fn scratch_dir(&self) -> Option<PathBuf> {
        None
    }

    /// Whether the repository this handle reads was replaced under it (a registry then
    /// opens it again).
    fn replaced(&self) -> bool {
        false
    }

    /// Bounds the memory of the handle's caches.
    fn set_cache_limit(&self, bytes: usize) {
        let _ = bytes;
    }

    /// The transactions a hook script can see now, sorted by name, each with its base
    /// revision (the one before the revision it would become): none for a backend that
    /// keeps no hooks' transactions.
    fn txns(&self) -> Result<Vec<(String, Revnum)>> {
        Ok(Vec::new())
    }

    /// The bytes revision `rev`'s commit added to storage (`svnadmin rev-size`).
    fn rev_size(&self, rev: Revnum) -> Result<u64> {
        Err(StoreError::Unsupported(format!(
            "the stored size of revision {rev}"
        )))
    }

    fn root(&self, rev: Revnum) -> Result<NodeRevId> {
        Ok(self.rev_info(rev)?.root)
    }

    fn revprops(&self, rev: Revnum) -> Result<PropList> {
        Ok(self.rev_meta(rev)?.revprops.clone())
    }

    /// The entries of a directory node-revision.
    fn dir(&self, node: &NodeRev) -> Result<Arc<Vec<DirEntry>>> {
        self.listing(node.entries)
    }

    fn props(&self, node: &NodeRev) -> Result<PropList> {
        if node.props.is_none() {
            return Ok(PropList::new());
        }
        Ok(PropList::clone(&*self.props_shared(node.props)?))
    }

    fn read_text(&self, text: &FileText) -> Result<Arc<Vec<u8>>> {
        self.text(text.rep)
    }

    /// Writes a file's contents to `out`, streamed (bounded memory).
    fn write_text(&self, text: &FileText, out: &mut dyn std::io::Write) -> Result<()> {
        let mut r = self.text_reader(text)?;
        std::io::copy(&mut r, out)
            .map(drop)
            .map_err(|err| StoreError::Io {
                context: "writing file contents".into(),
                err,
            })
    }

    /// The entry `name` of a directory node-revision (None when `node` is not a directory
    /// or has no such entry).
    fn child(&self, node: &NodeRev, name: &str) -> Result<Option<(NodeRevId, Arc<NodeRev>)>> {
        if node.kind != NodeKind::Dir {
            return Ok(None);
        }
        let entries = self.dir(node)?;
        match entries.binary_search_by(|e| e.name.as_bytes().cmp(name.as_bytes())) {
            Ok(i) => {
                let id = entries[i].node;
                Ok(Some((id, self.node(id)?)))
            }
            Err(_) => Ok(None),
        }
    }

    /// Finds `path` (a relpath) under the directory node-revision `root`.
    fn lookup_from(
        &self,
        root: NodeRevId,
        path: &str,
    ) -> Result<Option<(NodeRevId, Arc<NodeRev>)>> {
        let mut at = root;
        let mut node = self.node(at)?;
        if path.is_empty() {
            return Ok(Some((at, node)));
        }
        for comp in path.split('/') {
            match self.child(&node, comp)? {
                Some((i, n)) => (at, node) = (i, n),
                None => return Ok(None),
            }
        }
        Ok(Some((at, node)))
    }

    fn lookup(&self, rev: Revnum, path: &str) -> Result<Option<(NodeRevId, Arc<NodeRev>)>> {
        self.lookup_from(self.root(rev)?, path)
    }

    /// Like `lookup`, but a missing path is an error naming it.
    fn node_at(&self, rev: Revnum, path: &str) -> Result<(NodeRevId, Arc<NodeRev>)> {
        self.lookup(rev, path)?
            .ok_or_else(|| StoreError::PathNotFound {
                rev,
                path: path.to_string(),
            })
    }

    /// The node-revision at `path` in `rev` when `rev` added, modified or replaced it, by a
    /// binary search of the revision's changed paths; None otherwise (look it up then).
    fn changed_node(&self, rev: Revnum, path: &str) -> Result<Option<(NodeRevId, Arc<NodeRev>)>> {
        let meta = self.rev_meta(rev)?;
        let found = meta
            .changes
            .binary_search_by(|c| compare_paths(&c.path, path))
            .ok()
            .map(|i| &meta.changes[i])
            .filter(|c| c.node.is_some() && c.change != ChangeKind::Delete && c.path == path);
        match found {
            Some(c) => Ok(Some((c.node, self.node(c.node)?))),
            None => Ok(None),
        }
    }

    /// The node-revisions of the line of history of `path` in `rev`, newest first,
    /// following predecessors across copies (Subversion's `svn_fs_node_history`).
    fn history(&self, rev: Revnum, path: &str) -> Result<Vec<HistoryEntry>> {
        let (mut id, _) = self.node_at(rev, path)?;
        let mut out = Vec::new();
        while id.is_some() {
            let n = self.node(id)?;
            if n.predecessor >= id {
                return Err(StoreError::Corrupt {
                    file: "node-revisions",
                    offset: id.raw(),
                    what: Corruption::new("node-revision's predecessor lies after it"),
                });
            }
            out.push(HistoryEntry {
                rev: n.created_rev,
                path: n.created_path.clone(),
                copyfrom: n.copyfrom.clone(),
            });
            id = n.predecessor;
        }
        Ok(out)
    }

    /// Subversion's "related": versions of the same node (one line of history).
    fn related(&self, a: NodeRevId, b: NodeRevId) -> Result<bool> {
        Ok(self.node(a)?.node_id == self.node(b)?.node_id)
    }

    /// The listing `id` and what each entry is (fast path: kept per listing; plain: one
    /// node read per entry).
    fn listed(&self, id: ListingId) -> Result<ListedDir> {
        let entries = self.listing(id)?;
        let listed = entries
            .iter()
            .map(|e| self.node(e.node).map(|n| Listed::of(&n)))
            .collect::<Result<Vec<_>>>()?;
        Ok((entries, Arc::new(listed)))
    }

    /// `text` as the svndiff stream it is stored as, header included, when it is stored
    /// self-contained; None otherwise (the caller encodes it).
    fn stored_stream(&self, text: &FileText) -> Result<Option<Arc<Vec<u8>>>> {
        let _ = text;
        Ok(None)
    }

    /// [`ReadRepo::stored_stream`], or the contents when there is none.
    fn stored_stream_or_text(&self, text: &FileText) -> Result<Stored> {
        match self.stored_stream(text)? {
            Some(s) => Ok(Stored::Stream(s)),
            None => Ok(Stored::Text(self.read_text(text)?)),
        }
    }

    /// The windows `text` is stored as when they are a delta against the stored contents
    /// `base`; None otherwise (the caller computes a delta).
    fn stored_delta(&self, text: &FileText, base: TextId) -> Result<Option<Vec<Window>>> {
        let _ = (text, base);
        Ok(None)
    }

    /// [`ReadRepo::stored_delta`] as an svndiff stream, header included: the bytes and
    /// where the stream begins in them.
    fn stored_delta_stream(
        &self,
        text: &FileText,
        base: TextId,
    ) -> Result<Option<(Arc<Vec<u8>>, usize)>> {
        let _ = (text, base);
        Ok(None)
    }

    /// `text`'s stored windows and contents when it is a delta against `base`, whose
    /// contents the caller holds; None otherwise.
    fn text_over(
        &self,
        text: &FileText,
        base: TextId,
        base_text: &[u8],
    ) -> Result<Option<(Vec<Window>, Vec<u8>)>> {
        let _ = (text, base, base_text);
        Ok(None)
    }

    /// The bytes a self-contained text takes in storage; None when unknown or a delta.
    fn self_contained_bytes(&self, text: &FileText) -> Result<Option<u64>> {
        let _ = text;
        Ok(None)
    }

    /// A file too large to be held whole (past [`crate::DELTA_MAX`]) as the pieces it is
    /// stored in, in order, each owned (an HTTP answer passes each on without a copy of
    /// its own); None when the backend keeps it otherwise (a caller reads it whole or
    /// streams it with [`ReadRepo::text_reader`]).
    fn large_text_chunks(&self, text: &FileText) -> Result<Option<TextChunks>> {
        let _ = text;
        Ok(None)
    }

    /// Whether `other` reads the same stored repository as this handle (not one that was
    /// deleted and created again in its place): a registry keeps one handle per
    /// repository. False when the backend cannot tell (the registry then keeps the
    /// handle it opened last).
    fn same_storage(&self, other: &dyn ReadRepo) -> bool {
        let _ = other;
        false
    }
}

/// A large file's contents, one owned piece after another ([`ReadRepo::large_text_chunks`]).
pub type TextChunks = Box<dyn Iterator<Item = Result<Vec<u8>>> + Send>;

/// How a server opens the repositories it serves: given by the program's composition
/// root (the local engine for `svelto serve` today), so that the service names no
/// backend.
pub trait Backend: Send + Sync {
    /// A reading handle of the repository in `dir`, whose users take the time and fresh
    /// names from `env` ([`ReadRepo::env`]).
    fn open(&self, dir: &Path, env: &Arc<dyn Env>) -> Result<Arc<dyn ReadRepo>>;
    /// Whether `dir` holds a repository of this backend (what a server looks for under its
    /// root).
    fn is_repository(&self, dir: &Path) -> bool;
    /// The writer of the repository in `dir` (takes the write lock).
    fn open_writer(&self, dir: &Path) -> Result<Box<dyn WriteRepo>>;
    /// Creates the stored part of a new repository in `dir` (whose other files, conf/ and
    /// hooks/, are the caller's): revision 0, empty, with `r0_props`, and `uuid`.
    fn create(&self, dir: &Path, uuid: &str, r0_props: &PropList) -> Result<()> {
        let _ = (uuid, r0_props);
        Err(StoreError::Unsupported(format!(
            "creating a repository in '{}'",
            dir.display()
        )))
    }
    /// Opens the repository in `dir` with transaction `name` (a commit whose hooks run)
    /// as the handle's youngest revision, and that revision's number.
    fn open_txn(
        &self,
        dir: &Path,
        name: &str,
        env: &Arc<dyn Env>,
    ) -> Result<(Arc<dyn ReadRepo>, Revnum)> {
        let _ = (dir, env);
        Err(StoreError::Unsupported(format!(
            "opening transaction '{name}'"
        )))
    }
    /// [`Backend::open_writer`] without waiting: None while another writer (a commit, a
    /// freeze) holds the write lock.
    fn try_open_writer(&self, dir: &Path) -> Result<Option<Box<dyn WriteRepo>>> {
        let _ = dir;
        Err(StoreError::Unsupported(
            "taking the write lock without waiting".into(),
        ))
    }
    /// Copies the stored repository of `src` into `dst` while commits go on, up to one
    /// commit point (`svnadmin hotcopy`); with `incremental`, `dst` holds an earlier copy
    /// and receives only what `src` gained since. The repository's other files (conf/,
    /// hooks/) are the caller's.
    fn hotcopy(
        &self,
        src: &Path,
        dst: &Path,
        incremental: bool,
    ) -> std::result::Result<DbCopy, HotcopyError> {
        let _ = (src, dst, incremental);
        Err(StoreError::Unsupported("hot copies".into()).into())
    }
    /// Holds the writes of the repositories in `dirs` (taken in that order, waiting for a
    /// commit in progress) until the returned value is dropped; reads go on.
    fn freeze(&self, dirs: &[PathBuf]) -> Result<Frozen> {
        let _ = dirs;
        Err(StoreError::Unsupported("freezing writes".into()))
    }
    /// Takes the write lock of the repository in `dir` (waiting for it when `wait`, else
    /// None while another writer holds it) and repairs what a writer that crashed left,
    /// as the next writer would; the lock is released on return. What it found beyond
    /// "all agreed", in the backend's words, one line each (none: nothing to repair).
    fn recover(&self, dir: &Path, wait: bool) -> Result<Option<Vec<String>>> {
        let _ = (dir, wait);
        Err(StoreError::Unsupported("recovery".into()))
    }
    /// Removes transaction `name` of the repository in `dir` (`svnadmin rmtxns`; one
    /// [`ReadRepo::txns`] lists): `NoSuchTxn` when there is none.
    fn remove_txn(&self, dir: &Path, name: &str) -> Result<TxnRemoval> {
        let _ = dir;
        Err(StoreError::NoSuchTxn(name.to_string()))
    }
    /// The counters of the backend's caches: (the name a metric labels the cache with,
    /// hits, misses); none when it keeps no caches.
    fn cache_stats(&self) -> Vec<(&'static str, u64, u64)> {
        Vec::new()
    }
}
