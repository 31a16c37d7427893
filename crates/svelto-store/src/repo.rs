//! Reading a repository: revisions, node-revisions, directories, properties, contents.
//! Readers take no locks: they read `db/current` and never look past the lengths it gives.

use crate::cache::{Bounded, CachedMeta};
use crate::enc::FRAME_OVERHEAD;
use crate::error::{io_err, Corruption, Result, StoreError};
use crate::files::{
    self, le_u32, le_u64, read_exact_at, read_record, Current, RevRecord, StoreFile, Which,
    REVPROPS_RECORD, REV_RECORD,
};
use crate::locks::LockTable;
use crate::node::{
    apply_dir_delta, decode_dir, decode_dir_delta, decode_props, Codec, DirEntry, FileText,
    NodeRev, Offset, RevMeta,
};
use crate::rep::{self, DataFile, RepTrailer, WindowStream};
pub use svelto_fs::{HistoryEntry, Listed, ListedDir, RevInfo, Stored};

/// How far before a REP record [`Repo::stored_delta`] reads in the same read, for its
/// windows (an update's changed files: deltas of a few KB).
const NEAR: u64 = 4 << 10;
/// How far [`Repo::text_over`] reads before a REP record: a blame walks thousands of
/// versions of one file, mostly deltas of a few hundred bytes (an entry added to a log), and
/// copying 4 KiB out of the page cache for each was a quarter of its cost; a larger delta
/// costs a second read.
const NEAR_SMALL: u64 = 1 << 10;
/// The longest REP record, framed: 87 bytes of payload (five varints of at most 10 bytes, a
/// version byte, MD5 and SHA-1) and 9 of frame.
const REP_RECORD_MAX: u64 = 96;
/// Bytes read with a REP record and where its windows' records begin in them.
type NearWindows = (Vec<u8>, usize);
/// A REP record read on a chain walk and the bytes read with it.
type ChainLink = (RepTrailer, Option<NearWindows>);
/// A stored delta's REP record, its text cache entry and where its stream begins in it.
type KeptDelta = (RepTrailer, Arc<Vec<u8>>, usize);
use crate::{MAX_DIR_CHAIN, TAG_DIR, TAG_DIR_DELTA, TAG_NODE, TAG_PROPS, TAG_REVISION};
use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use svelto_core::{
    ChangeKind, Env, ListingId, NodeKind, NodeRevId, PropList, PropsId, Revnum, SystemEnv, TextId,
};
use svelto_delta::Window;

/// Revision properties changed after their commit: how much of `db/revprops` has been
/// read, and revision -> (META offset, length) of the newest record.
type Overlay = (u64, HashMap<Revnum, (u64, u32)>);

/// Set in a text cache key: the entry is a representation's stored stream
/// ([`Repo::stored_stream`]), not its reconstructed text. Offsets stay far below it.
const STORED_STREAM: u64 = 1 << 63;
/// Set in a text cache key: the entry is a representation's REP record and, for a delta of
/// at most [`DELTA_KEPT`] bytes, its windows as an svndiff stream ([`Repo::stored_delta`]).
const STORED_DELTA: u64 = 1 << 62;
/// The largest stored delta (its window records' bytes) whose windows the text cache keeps.
const DELTA_KEPT: u64 = 256 << 10;

/// The default memory of a handle's caches (admin tools: loads, dumps, verify); a server
/// sets its own with [`Repo::set_cache_limit`].
const CACHE_BYTES: u64 = 64 << 20;

/// How a handle's cache memory is shared, in parts of 100: reconstructed texts, directory
/// listings, node-revisions, revision metadata, `db/revs` records, property lists, what a
/// listing's entries are (`svn ls`).
const CACHE_SHARES: [u64; 7] = [68, 12, 8, 5, 3, 2, 2];

struct Inner {
    path: PathBuf,
    db: PathBuf,
    files: [StoreFile; 5],
    /// Device and inode of the `db/data` this handle opened (see [`Repo::replaced`]).
    data_id: (u64, u64),
    overlay: Mutex<Overlay>,
    current: Mutex<Current>,
    nodes: Bounded<Arc<NodeRev>>,
    dirs: Bounded<Arc<Vec<DirEntry>>>,
    /// `db/revs` records by revision.
    revs: Bounded<RevRecord>,
    /// Decoded META records by offset in `db/meta`.
    metas: Bounded<CachedMeta>,
    /// Reconstructed file texts by the offset of their representation.
    fulltexts: Bounded<Arc<Vec<u8>>>,
    /// Decoded PROPS records by offset (a checkout sends every file's properties).
    props: Bounded<Arc<PropList>>,
    /// What each entry of a directory listing is, by the listing's offset.
    listed: Bounded<Arc<Vec<Listed>>>,
    /// The lock table as last read or written through this handle.
    locks: crate::locks::Cache,
    /// Where this handle's users take the time and fresh names from.
    env: Mutex<Arc<dyn Env>>,
}

/// A handle to read a repository; cheap to clone, safe to share between threads.
#[derive(Clone)]
pub struct Repo {
    inner: Arc<Inner>,
}

/// `bytes` shared as [`CACHE_SHARES`] says.
fn cache_share(bytes: u64, i: usize) -> u64 {
    bytes / 100 * CACHE_SHARES[i]
}

pub const FORMAT: &str = "svelto-store 1\n";

impl Repo {
    /// Opens the repository at `path` (the directory holding `db/`).
    pub fn open(path: &Path) -> Result<Repo> {
        let (repo, current) = Self::open_files(path, None, None)?;
        repo.check_current(&current)?;
        Ok(repo)
    }

    /// Opens the repository as if `db/current` said `current`, checked as `open` checks
    /// the real one (`svelto admin recover` tries the lines it rebuilds this way).
    pub(crate) fn open_as(path: &Path, current: Current) -> Result<Repo> {
        let (repo, current) = Self::open_files(path, None, Some(current))?;
        repo.check_current(&current)?;
        Ok(repo)
    }

    /// Opens the files of `path`'s `db/`, each continued by the file of the same name in
    /// `ext`'s directory past `ext`'s lengths when given (a staged transaction). Returns the
    /// handle, which reads up to `db/current`'s lengths (or `given`'s), and those lengths,
    /// unchecked.
    fn open_files(
        path: &Path,
        ext: Option<(&Path, &Current)>,
        given: Option<Current>,
    ) -> Result<(Repo, Current)> {
        let db = path.join("db");
        let fmt = std::fs::read_to_string(db.join("format"));
        if fmt.as_deref().ok() != Some(FORMAT) {
            // FSFS and BDB repositories name their back end in db/fs-type.
            if let Ok(fs_type) = std::fs::read_to_string(db.join("fs-type")) {
                return Err(StoreError::ForeignRepository {
                    path: path.display().to_string(),
                    fs_type: fs_type.trim().to_uppercase(),
                });
            }
        }
        // Only a missing db/format says "not a repository": any other failure (out of file
        // descriptors, permissions) is reported as it is.
        let fmt = fmt.map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory => {
                StoreError::NotARepository(path.display().to_string())
            }
            _ => io_err(format!("reading {}", db.join("format").display()))(e),
        })?;
        if fmt != FORMAT {
            let first: String = fmt.lines().next().unwrap_or("").chars().take(80).collect();
            return Err(StoreError::UnsupportedFormat {
                path: path.display().to_string(),
                format: first.escape_debug().to_string(),
            });
        }
        let current = match given {
            Some(c) => c,
            None => files::read_current(&db)?,
        };
        let open = |w: Which| -> Result<StoreFile> {
            let f = files::open_read(&db, w)?;
            Ok(match ext {
                None => StoreFile::new(f),
                Some((dir, at)) => StoreFile::continued(f, at.len(w), files::open_read(dir, w)?),
            })
        };
        let files = [
            open(Which::Data)?,
            open(Which::Revs)?,
            open(Which::Meta)?,
            open(Which::Dedup)?,
            open(Which::Revprops)?,
        ];
        for (w, f) in Which::ALL.iter().zip(&files) {
            if read_exact_at(f, *w, 0, 16)? != w.header() {
                let what = Corruption::new("file header is not Svelto's (format 1)");
                return Err(Self::corrupt(*w, 0, what));
            }
        }
        let data_id = file_id(&files[Which::Data as usize].metadata().map_err(
            crate::error::io_err(format!(
                "reading the metadata of {}",
                db.join("data").display()
            )),
        )?);
        let repo = Repo {
            inner: Arc::new(Inner {
                path: path.to_path_buf(),
                db,
                files,
                data_id,
                current: Mutex::new(current),
                overlay: Mutex::new((16, HashMap::new())),
                fulltexts: Bounded::new(cache_share(CACHE_BYTES, 0), 16 << 10),
                dirs: Bounded::new(cache_share(CACHE_BYTES, 1), 512),
                nodes: Bounded::new(cache_share(CACHE_BYTES, 2), 256),
                metas: Bounded::new(cache_share(CACHE_BYTES, 3), 1024),
                revs: Bounded::new(cache_share(CACHE_BYTES, 4), 100),
                props: Bounded::new(cache_share(CACHE_BYTES, 5), 128),
                listed: Bounded::new(cache_share(CACHE_BYTES, 6), 64),
                locks: crate::locks::Cache::default(),
                env: Mutex::new(Arc::new(SystemEnv)),
            }),
        };
        Ok((repo, current))
    }

    /// The repository as a staging writer reads it: its files continued past `base`'s
    /// lengths by those in `dir`, up to `base` for now.
    pub(crate) fn open_continued(path: &Path, dir: &Path, base: &Current) -> Result<Repo> {
        let (repo, _) = Self::open_files(path, Some((dir, base)), None)?;
        repo.set_current(*base);
        Ok(repo)
    }

    /// Opens the repository with transaction `name` visible as its youngest revision,
    /// which is returned. For hook scripts. The transaction is a staged one
    /// (`db/txns/NAME.txn/`, see `Writer::stage`), or the unpublished revision a writer
    /// exposed (`db/txns/NAME`, `Writer::expose_txn`).
    pub fn open_txn(path: &Path, name: &str) -> Result<(Repo, Revnum)> {
        if !valid_txn_name(name) {
            Repo::open(path)?;
            return Err(StoreError::NoSuchTxn(name.to_string()));
        }
        let db = path.join("db");
        let staged = db.join("txns").join(format!("{name}.txn"));
        if let Some(cur) = read_txn_line(&staged.join("current"))? {
            let base = read_txn_line(&staged.join("base"))?
                .ok_or_else(|| StoreError::NoSuchTxn(name.to_string()))?;
            let (repo, _) = Self::open_files(path, Some((&staged, &base)), None)?;
            repo.check_current(&cur)?;
            repo.set_current(cur);
            return Ok((repo, cur.youngest));
        }
        let repo = Repo::open(path)?;
        let cur = read_txn_line(&db.join("txns").join(name))?
            .ok_or_else(|| StoreError::NoSuchTxn(name.to_string()))?;
        repo.set_current(cur);
        Ok((repo, cur.youngest))
    }

    /// Bounds the memory of this handle's caches together (default 64 MiB): a server
    /// that sends the same texts and trees to many clients keeps more of them. Most of it
    /// goes to reconstructed texts (`CACHE_SHARES`).
    pub fn set_cache_limit(&self, bytes: usize) {
        let bytes = u64::try_from(bytes).unwrap_or(u64::MAX).max(4 << 20);
        let inner = &self.inner;
        inner.fulltexts.set_capacity(cache_share(bytes, 0));
        inner.dirs.set_capacity(cache_share(bytes, 1));
        inner.nodes.set_capacity(cache_share(bytes, 2));
        inner.metas.set_capacity(cache_share(bytes, 3));
        inner.revs.set_capacity(cache_share(bytes, 4));
        inner.props.set_capacity(cache_share(bytes, 5));
        inner.listed.set_capacity(cache_share(bytes, 6));
    }

    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// Whether the repository directory no longer holds the files this handle opened: it was
    /// deleted and created again, or another repository was moved to its place. One `stat`
    /// of `db/data`, whose device and inode cannot be reused while this handle keeps the file
    /// open. A repository that is gone counts as replaced.
    pub fn replaced(&self) -> bool {
        match std::fs::metadata(self.inner.db.join(Which::Data.name())) {
            Ok(m) => file_id(&m) != self.inner.data_id,
            Err(_) => true,
        }
    }

    /// Whether two handles opened the same files (one repository, not one replaced by another).
    pub fn same_files(&self, other: &Repo) -> bool {
        self.inner.data_id == other.inner.data_id
    }

    /// The repository's locks now (`db/locks`): parsed once per version of the file and
    /// kept by this handle; changed with [`crate::Writer::set_locks`].
    pub fn locks(&self) -> Result<Arc<LockTable>> {
        self.inner.locks.get(&self.inner.db)
    }

    /// Where the users of this handle take the time and fresh names from (lock dates and
    /// tokens, commit dates): the system's clock and UUIDs unless [`Repo::set_env`] gave
    /// another where the handle was made. A backend of several servers gives one they agree
    /// on.
    pub fn env(&self) -> Arc<dyn Env> {
        self.inner
            .env
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Gives this handle (and its clones) `env` (see [`Repo::env`]).
    pub fn set_env(&self, env: Arc<dyn Env>) {
        *self.inner.env.lock().unwrap_or_else(|e| e.into_inner()) = env;
    }

    /// Keeps `table`, just written, as this handle's lock table.
    pub(crate) fn locks_written(&self, table: Arc<LockTable>) -> Result<()> {
        self.inner.locks.written(&self.inner.db, table)
    }

    pub fn db_path(&self) -> &Path {
        &self.inner.db
    }

    pub fn current(&self) -> Current {
        *self.inner.current.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Re-reads `db/current`, making revisions committed since visible. Returns the youngest.
    ///
    /// Never moves backwards: published files only grow, so a `db/current` older than the
    /// one already seen is a stale read by a thread that lost a race with another (taking
    /// it would make a revision a client has already been told about disappear).
    pub fn refresh(&self) -> Result<Revnum> {
        let cur = files::read_current(&self.inner.db)?;
        let seen = self.inner.current.lock().unwrap_or_else(|e| e.into_inner());
        let newer = cur.youngest >= seen.youngest
            && cur.lens.iter().zip(seen.lens.iter()).all(|(a, b)| a >= b);
        if !newer || cur == *seen {
            return Ok(seen.youngest);
        }
        let cur_copy = cur;
        drop(seen);
        self.check_current(&cur_copy)?;
        let mut seen = self.inner.current.lock().unwrap_or_else(|e| e.into_inner());
        let newer = cur.youngest >= seen.youngest
            && cur.lens.iter().zip(seen.lens.iter()).all(|(a, b)| a >= b);
        if newer {
            *seen = cur;
        }
        Ok(seen.youngest)
    }

    /// Moves the visible limit (the writer's own view, which runs ahead of `db/current`).
    pub(crate) fn set_current(&self, cur: Current) {
        *self.inner.current.lock().unwrap_or_else(|e| e.into_inner()) = cur;
    }

    pub fn youngest(&self) -> Revnum {
        self.current().youngest
    }

    pub fn uuid(&self) -> Result<String> {
        let p = self.inner.db.join("uuid");
        let s = std::fs::read_to_string(&p).map_err(io_err(format!("reading {}", p.display())))?;
        crate::uuid::parse_uuid(&s).map_err(|what| StoreError::Corrupt {
            file: "uuid",
            offset: 0,
            what,
        })
    }

    pub(crate) fn file(&self, w: Which) -> &StoreFile {
        &self.inner.files[w as usize]
    }

    pub(crate) fn record(&self, w: Which, off: u64, want: u8) -> Result<Vec<u8>> {
        let limit = self.current().len(w);
        let (tag, payload) = read_record(self.file(w), w, off, limit)?;
        if tag != want {
            return Err(StoreError::Corrupt {
                file: w.name(),
                offset: off,
                what: Corruption::new(format!("expected record tag {want}, found {tag}")),
            });
        }
        Ok(payload)
    }

    pub(crate) fn corrupt(w: Which, off: u64, what: Corruption) -> StoreError {
        StoreError::Corrupt {
            file: w.name(),
            offset: off,
            what,
        }
    }

    /// What a revision is beside its metadata: its root and the identities it left
    /// unused (`db/revs`'s record without the store's offsets).
    pub fn rev_info(&self, rev: Revnum) -> Result<RevInfo> {
        let r = self.rev_record(rev)?;
        Ok(RevInfo {
            root: NodeRevId::from_raw(r.root),
            next_node_id: r.next_node_id,
            next_copy_id: r.next_copy_id,
        })
    }

    /// The local engine's `db/revs` record of `rev` (file offsets: for this engine's own
    /// tools and damage tests; others use [`Repo::rev_info`]).
    pub fn rev_record(&self, rev: Revnum) -> Result<RevRecord> {
        let cur = self.current();
        if rev > cur.youngest {
            return Err(StoreError::NoSuchRevision(rev));
        }
        let cached = self.inner.revs.get(rev);
        crate::stats::REV_CACHE.count(cached.is_some());
        if let Some(r) = cached {
            return Ok(r);
        }
        let off = 16 + rev * REV_RECORD;
        if off + REV_RECORD > cur.len(Which::Revs) {
            let what = Corruption::new(format!("revision {rev} lies past the committed file"));
            return Err(Self::corrupt(Which::Revs, off, what));
        }
        let b = read_exact_at(
            self.file(Which::Revs),
            Which::Revs,
            off,
            REV_RECORD as usize,
        )?;
        let r = RevRecord::decode(&b).map_err(|what| Self::corrupt(Which::Revs, off, what))?;
        self.inner.revs.put(rev, r);
        Ok(r)
    }

    /// The bytes revision `rev`'s commit added to the store (`svnadmin rev-size`): its
    /// part of `db/data` (from where the previous revision's root node-revision ends to
    /// where its own ends: every commit writes its root last), its META record in
    /// `db/meta` (revision properties and changed paths as committed) and its `db/revs`
    /// record. The `db/dedup` index records are left out, as FSFS leaves out its indexes.
    pub fn rev_size(&self, rev: Revnum) -> Result<u64> {
        let rec = self.rev_record(rev)?;
        let data_len = self.current().len(Which::Data);
        let root_end = |r: Revnum| -> Result<u64> {
            let rec = self.rev_record(r)?;
            let (_, payload) =
                read_record(self.file(Which::Data), Which::Data, rec.root, data_len)?;
            Ok(rec.root + (payload.len() + FRAME_OVERHEAD) as u64)
        };
        let start = match rev.checked_sub(1) {
            Some(prev) => root_end(prev)?,
            None => 16,
        };
        let end = root_end(rev)?;
        let data = end.checked_sub(start).ok_or_else(|| {
            Self::corrupt(
                Which::Data,
                end,
                Corruption::new(format!(
                    "r{rev}'s root ends before r{}'s",
                    rev.saturating_sub(1)
                )),
            )
        })?;
        Ok(data + u64::from(rec.meta_len) + REV_RECORD)
    }

    /// The transactions there are, sorted by name, each with its base revision (the one
    /// before the revision it would become): staged ones (`db/txns/NAME.txn/`, see
    /// `Writer::stage`) and those a writer exposes to its hooks (`db/txns/NAME`, see
    /// `Writer::expose_txn`). A staged transaction whose staging never finished (its
    /// `current` is missing) is listed with the revision it was based on.
    pub fn txns(&self) -> Result<Vec<(String, Revnum)>> {
        let dir = self.db_path().join("txns");
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io_err(format!("reading {}", dir.display()))(e)),
        };
        let mut out = Vec::new();
        for e in entries {
            let e = e.map_err(io_err(format!("reading {}", dir.display())))?;
            let Ok(file) = e.file_name().into_string() else {
                continue;
            };
            if let Some(name) = file.strip_suffix(".txn").filter(|n| valid_txn_name(n)) {
                // Unreadable lines (a staging cut short) still name a leftover to remove.
                let base = read_txn_line(&e.path().join("base"))
                    .ok()
                    .flatten()
                    .map_or(0, |c| c.youngest);
                out.push((name.to_string(), base));
                continue;
            }
            // Spool files (NAME.PID.spool) are a commit's texts, not transactions.
            if !valid_txn_name(&file) {
                continue;
            }
            // A transaction its commit removed meanwhile is simply not listed.
            if let Ok(Some(cur)) = read_txn_line(&e.path()) {
                out.push((file, cur.youngest.saturating_sub(1)));
            }
        }
        out.sort();
        Ok(out)
    }

    pub fn root(&self, rev: Revnum) -> Result<NodeRevId> {
        Ok(self.rev_info(rev)?.root)
    }

    pub fn node(&self, id: NodeRevId) -> Result<Arc<NodeRev>> {
        let off = id.raw();
        let cached = self.inner.nodes.get(off);
        crate::stats::NODE_CACHE.count(cached.is_some());
        if let Some(n) = cached {
            return Ok(n);
        }
        let payload = self.record(Which::Data, off, TAG_NODE)?;
        let n = NodeRev::decode(&payload).map_err(|w| Self::corrupt(Which::Data, off, w))?;
        // Everything a node-revision names was written before it: no walk over nodes,
        // listings and predecessors can loop, however the records are damaged.
        let pointers = [
            ("predecessor", n.predecessor.raw()),
            ("property list", n.props.raw()),
            ("directory listing", n.entries.raw()),
            ("representation", n.text.map_or(0, |t| t.rep.raw())),
        ];
        if let Some((what, at)) = pointers.iter().find(|(_, p)| *p >= off) {
            let what = Corruption::new(format!("NODE record: {what} at {at} lies after it"));
            return Err(Self::corrupt(Which::Data, off, what));
        }
        let n = Arc::new(n);
        self.inner.nodes.put(off, n.clone());
        Ok(n)
    }

    /// The entries of a directory node-revision, sorted by name.
    pub fn dir(&self, node: &NodeRev) -> Result<Arc<Vec<DirEntry>>> {
        self.dir_at(node.entries)
    }

    /// The directory listing `id` and, entry by entry, what each entry is (read from
    /// its node-revision once, then kept: a listing of a tree asks for every entry's node,
    /// and one look per directory costs less than one per entry).
    pub fn listed_at(&self, id: ListingId) -> Result<ListedDir> {
        let entries = self.dir_at(id)?;
        let off = id.raw();
        if off == 0 {
            return Ok((entries, Arc::new(Vec::new())));
        }
        if let Some(listed) = self.inner.listed.get(off) {
            return Ok((entries, listed));
        }
        let listed = entries
            .iter()
            .map(|e| self.node(e.node).map(|n| Listed::of(&n)))
            .collect::<Result<Vec<_>>>()?;
        let listed = Arc::new(listed);
        self.inner.listed.put(off, listed.clone());
        Ok((entries, listed))
    }

    pub fn dir_at(&self, id: ListingId) -> Result<Arc<Vec<DirEntry>>> {
        self.dir_at_offset(id.raw())
    }

    fn dir_at_offset(&self, off: Offset) -> Result<Arc<Vec<DirEntry>>> {
        if off == 0 {
            return Ok(Arc::new(Vec::new()));
        }
        let cached = self.inner.dirs.get(off);
        crate::stats::DIR_CACHE.count(cached.is_some());
        if let Some(d) = cached {
            return Ok(d);
        }
        let limit = self.current().len(Which::Data);
        let (tag, payload) = read_record(self.file(Which::Data), Which::Data, off, limit)?;
        let listing = match tag {
            TAG_DIR => decode_dir(&payload).map_err(|w| Self::corrupt(Which::Data, off, w))?,
            TAG_DIR_DELTA => {
                let d =
                    decode_dir_delta(&payload).map_err(|w| Self::corrupt(Which::Data, off, w))?;
                // A base lies before its delta, and chains are short: no cycles, bounded
                // recursion.
                if d.base == 0 || d.base >= off || d.depth == 0 || d.depth > MAX_DIR_CHAIN {
                    let what = Corruption::new(format!(
                        "DIRDELTA record: base {} at depth {}",
                        d.base, d.depth
                    ));
                    return Err(Self::corrupt(Which::Data, off, what));
                }
                if self.dir_depth(d.base)? + 1 != d.depth {
                    let what = Corruption::new("DIRDELTA record: depth does not follow its base");
                    return Err(Self::corrupt(Which::Data, off, what));
                }
                let base = self.dir_at_offset(d.base)?;
                apply_dir_delta(&base, &d.changes)
                    .map_err(|w| Self::corrupt(Which::Data, off, w))?
            }
            t => {
                let what = Corruption::new(format!("expected a directory record, found tag {t}"));
                return Err(Self::corrupt(Which::Data, off, what));
            }
        };
        if let Some(e) = listing.iter().find(|e| e.node.raw() >= off) {
            let what = Corruption::new(format!(
                "directory entry '{}' names node {}, which lies after its listing",
                e.name.escape_debug(),
                e.node.raw()
            ));
            return Err(Self::corrupt(Which::Data, off, what));
        }
        let d = Arc::new(listing);
        self.cache_dir(off, d.clone());
        Ok(d)
    }

    /// Keeps a listing in the directory cache (weighed by its bytes: one directory of
    /// 100,000 entries weighs as much as 100,000 small ones).
    pub(crate) fn cache_dir(&self, off: Offset, d: Arc<Vec<DirEntry>>) {
        self.inner.dirs.put(off, d);
    }

    /// How many DIRDELTA records lie between the listing at `off` and a whole DIR.
    pub(crate) fn dir_depth(&self, off: Offset) -> Result<u64> {
        let limit = self.current().len(Which::Data);
        let (tag, payload) = read_record(self.file(Which::Data), Which::Data, off, limit)?;
        match tag {
            TAG_DIR => Ok(0),
            TAG_DIR_DELTA => {
                let mut c = crate::enc::Cursor::new(&payload, "DIRDELTA");
                let _base = c.varint().map_err(|w| Self::corrupt(Which::Data, off, w))?;
                c.varint().map_err(|w| Self::corrupt(Which::Data, off, w))
            }
            t => {
                let what = Corruption::new(format!("expected a directory record, found tag {t}"));
                Err(Self::corrupt(Which::Data, off, what))
            }
        }
    }

    pub fn props_at(&self, id: PropsId) -> Result<PropList> {
        if id.is_none() {
            return Ok(PropList::new());
        }
        Ok(PropList::clone(&*self.props_shared(id)?))
    }

    pub fn props(&self, node: &NodeRev) -> Result<PropList> {
        self.props_at(node.props)
    }

    /// The property list `id` (`NONE`: none) as the cache holds it, shared.
    pub fn props_shared(&self, id: PropsId) -> Result<Arc<PropList>> {
        let off = id.raw();
        if off == 0 {
            return Ok(Arc::default());
        }
        if let Some(p) = self.inner.props.get(off) {
            return Ok(p);
        }
        let payload = self.record(Which::Data, off, TAG_PROPS)?;
        let props =
            Arc::new(decode_props(&payload).map_err(|w| Self::corrupt(Which::Data, off, w))?);
        self.inner.props.put(off, props.clone());
        Ok(props)
    }

    /// Finds `path` under the directory node at `root`.
    pub fn lookup_from(
        &self,
        root: NodeRevId,
        path: &str,
    ) -> Result<Option<(NodeRevId, Arc<NodeRev>)>> {
        let mut off = root;
        let mut node = self.node(off)?;
        if path.is_empty() {
            return Ok(Some((off, node)));
        }
        for comp in path.split('/') {
            match self.child(&node, comp)? {
                Some((o, n)) => (off, node) = (o, n),
                None => return Ok(None),
            }
        }
        Ok(Some((off, node)))
    }

    /// The entry `name` of a directory node-revision (None when `node` is not a directory
    /// or has no such entry): one step of [`Repo::lookup_from`].
    pub fn child(&self, node: &NodeRev, name: &str) -> Result<Option<(NodeRevId, Arc<NodeRev>)>> {
        if node.kind != NodeKind::Dir {
            return Ok(None);
        }
        let entries = self.dir(node)?;
        match entries.binary_search_by(|e| e.name.as_bytes().cmp(name.as_bytes())) {
            Ok(i) => {
                let off = entries[i].node;
                Ok(Some((off, self.node(off)?)))
            }
            Err(_) => Ok(None),
        }
    }

    pub fn lookup(&self, rev: Revnum, path: &str) -> Result<Option<(NodeRevId, Arc<NodeRev>)>> {
        self.lookup_from(self.root(rev)?, path)
    }

    /// The node-revision at `path` in `rev` when `rev` changed that path (added, modified or
    /// replaced it): its changed-path entry names it, found by one binary search of the
    /// revision's list (sorted component-wise, docs/formats/store.md) instead of a walk from
    /// the root. None when `rev` did not change `path` (or deleted it): look it up then. A
    /// client that fetches files by the revision that last changed them (ra_serf's `GET` of
    /// every file of a checkout) finds them this way.
    pub fn changed_node(
        &self,
        rev: Revnum,
        path: &str,
    ) -> Result<Option<(NodeRevId, Arc<NodeRev>)>> {
        let meta = self.rev_meta(rev)?;
        let found = meta
            .changes
            .binary_search_by(|c| svelto_core::compare_paths(&c.path, path))
            .ok()
            .map(|i| &meta.changes[i])
            .filter(|c| c.node.is_some() && c.change != ChangeKind::Delete && c.path == path);
        match found {
            Some(c) => Ok(Some((c.node, self.node(c.node)?))),
            None => Ok(None),
        }
    }

    /// Like `lookup`, but a missing path is an error naming it.
    pub fn node_at(&self, rev: Revnum, path: &str) -> Result<(NodeRevId, Arc<NodeRev>)> {
        self.lookup(rev, path)?
            .ok_or_else(|| StoreError::PathNotFound {
                rev,
                path: path.to_string(),
            })
    }

    /// A revision's properties and changed paths, decoded once and shared (cached by
    /// revision number, with the revision property change it is the result of: one cache
    /// lookup, no revision record, when it is held).
    pub fn rev_meta(&self, rev: Revnum) -> Result<Arc<RevMeta>> {
        let cur = self.current();
        if rev > cur.youngest {
            return Err(StoreError::NoSuchRevision(rev));
        }
        let overlay = self.overlay_at(cur.len(Which::Revprops), rev)?;
        let changed_at = overlay.map(|(off, _)| off);
        let cached = self
            .inner
            .metas
            .get(rev)
            .filter(|c| c.changed_at == changed_at);
        crate::stats::META_CACHE.count(cached.is_some());
        if let Some(c) = cached {
            return Ok(c.meta);
        }
        let off = match changed_at {
            Some(off) => off,
            None => self.rev_record(rev)?.meta_offset,
        };
        let payload = self.record(Which::Meta, off, TAG_REVISION)?;
        let meta =
            Arc::new(RevMeta::decode(&payload).map_err(|w| Self::corrupt(Which::Meta, off, w))?);
        self.inner.metas.put(
            rev,
            CachedMeta {
                changed_at,
                meta: meta.clone(),
            },
        );
        Ok(meta)
    }

    /// The newest META record written for `rev` by a revision property change, if any,
    /// with `db/revprops` read up to `limit` (its committed length).
    fn overlay_at(&self, limit: u64, rev: Revnum) -> Result<Option<(u64, u32)>> {
        let mut guard = self.inner.overlay.lock().unwrap_or_else(|e| e.into_inner());
        let (loaded, map) = &mut *guard;
        if *loaded > limit {
            // A writer truncated an uncommitted tail; start over.
            *loaded = 16;
            map.clear();
        }
        if *loaded < limit {
            let len = usize::try_from(limit - *loaded).unwrap_or(0);
            let bytes = self.read_raw(Which::Revprops, *loaded, len)?;
            let records =
                files::checked_records(Which::Revprops, *loaded, &bytes, REVPROPS_RECORD, 20)?;
            for (_, rec) in records {
                map.insert(le_u64(rec), (le_u64(&rec[8..]), le_u32(&rec[16..])));
            }
            *loaded = limit;
        }
        Ok(map.get(&rev).copied())
    }

    pub fn revprops(&self, rev: Revnum) -> Result<PropList> {
        Ok(self.rev_meta(rev)?.revprops.clone())
    }

    pub(crate) fn rep_trailer(&self, off: Offset) -> Result<RepTrailer> {
        let payload = self.record(Which::Data, off, crate::TAG_REP)?;
        Self::trailer(off, &payload)
    }

    /// The REP record at `off` and, when they lie within `before` bytes before it (a small
    /// delta's do: they are written just before it), the bytes read and where its windows'
    /// records begin in them: one read.
    fn rep_near(&self, off: Offset, before: u64) -> Result<(RepTrailer, Option<NearWindows>)> {
        let limit = self.current().len(Which::Data);
        if off < 16 || off >= limit {
            return Ok((self.rep_trailer(off)?, None));
        }
        let start = off.saturating_sub(before).max(16);
        let end = off.saturating_add(REP_RECORD_MAX).min(limit);
        let mut buf = self.read_raw(Which::Data, start, (end - start) as usize)?;
        let at = (off - start) as usize;
        let Some((tag, payload)) = files::record_in(&buf[at..], Which::Data, off, limit)? else {
            return Ok((self.rep_trailer(off)?, None));
        };
        if tag != crate::TAG_REP {
            let what = Corruption::new(format!(
                "expected record tag {}, found {tag}",
                crate::TAG_REP
            ));
            return Err(Self::corrupt(Which::Data, off, what));
        }
        let t = Self::trailer(off, payload)?;
        if t.first_window < start {
            return Ok((t, None));
        }
        buf.truncate(at);
        let from = (t.first_window - start) as usize;
        Ok((t, Some((buf, from))))
    }

    fn trailer(off: Offset, payload: &[u8]) -> Result<RepTrailer> {
        let t = RepTrailer::decode(payload).map_err(|w| Self::corrupt(Which::Data, off, w))?;
        // Windows and base were written before the trailer.
        if t.base >= off || t.first_window >= off || (t.windows > 0 && t.first_window < 16) {
            let what = Corruption::new(format!(
                "REP record: windows at {} or base {} not before it",
                t.first_window, t.base
            ));
            return Err(Self::corrupt(Which::Data, off, what));
        }
        Ok(t)
    }

    /// The whole contents of a file, reconstructed in memory.
    pub fn read_text(&self, text: &FileText) -> Result<Arc<Vec<u8>>> {
        self.fulltext(text.rep)
    }

    /// The windows `text` is stored as, when they are a delta against the representation
    /// `base` (not 0): the delta from that contents to `text`'s, to send as it is instead of
    /// computing one. None when `text` is stored otherwise (self-contained, or against
    /// another base). The REP record and a small delta's windows stay in the text cache:
    /// every client updating across the same commit asks for the same deltas, and a
    /// representation that is not one against `base` is known as such without a read.
    pub fn stored_delta(&self, text: &FileText, base: TextId) -> Result<Option<Vec<Window>>> {
        let Some((t, entry, start)) = self.delta_kept(text, base)? else {
            return Ok(None);
        };
        if start == entry.len() {
            return rep::windows(self, text.rep.raw(), &t).map(Some);
        }
        rep::windows_of_stream(text.rep.raw(), &t, &entry[start..]).map(Some)
    }

    /// [`Repo::stored_delta`] as the svndiff stream it is stored as, header included (sent
    /// as it is to a client that reads its version, `stream[3]`): the text cache's entry and
    /// where the stream begins in it. None when `text` is not stored as a delta against
    /// `base`, or the delta is larger than what the cache keeps.
    pub fn stored_delta_stream(
        &self,
        text: &FileText,
        base: TextId,
    ) -> Result<Option<(Arc<Vec<u8>>, usize)>> {
        Ok(self
            .delta_kept(text, base)?
            .filter(|(_, entry, start)| *start < entry.len())
            .map(|(_, entry, start)| (entry, start)))
    }

    /// The text cache's entry for `text`'s stored delta when it is one against `base`: its
    /// REP record and where its svndiff stream begins in the entry (at the end when not kept).
    fn delta_kept(&self, text: &FileText, base: TextId) -> Result<Option<KeptDelta>> {
        if text.rep.is_none() || base.is_none() {
            return Ok(None);
        }
        let entry = self.kept(text.rep.raw() | STORED_DELTA, || {
            self.delta_entry(text.rep.raw())
        })?;
        let len = u32::from_le_bytes([entry[0], entry[1], entry[2], entry[3]]) as usize;
        let t = Self::trailer(text.rep.raw(), &entry[4..4 + len])?;
        if t.base != base.raw() {
            return Ok(None);
        }
        Ok(Some((t, entry, 4 + len)))
    }

    /// The text cache's entry under `key`, made by `make` and kept when it is missing.
    fn kept(&self, key: u64, make: impl FnOnce() -> Result<Vec<u8>>) -> Result<Arc<Vec<u8>>> {
        let cached = self.inner.fulltexts.get(key);
        crate::stats::FULLTEXT_CACHE.count(cached.is_some());
        if let Some(entry) = cached {
            return Ok(entry);
        }
        let entry = Arc::new(make()?);
        self.inner.fulltexts.put(key, entry.clone());
        Ok(entry)
    }

    /// What the text cache keeps for [`Repo::stored_delta`]: the REP record's payload after
    /// its length (4 bytes, little-endian) and, for a delta of at most [`DELTA_KEPT`] bytes,
    /// its windows as an svndiff stream (read with the REP record when they lie just before
    /// it).
    fn delta_entry(&self, rep: Offset) -> Result<Vec<u8>> {
        let (t, near) = self.rep_near(rep, NEAR)?;
        let mut entry = vec![0; 4];
        t.encode(&mut entry);
        let len = (entry.len() - 4) as u32;
        entry[..4].copy_from_slice(&len.to_le_bytes());
        if t.base != 0 && t.windows > 0 && rep - t.first_window <= DELTA_KEPT {
            entry.extend_from_slice(&svelto_delta::stream_header(t.version));
            rep::delta_stream_into(self, rep, &t, near, &mut entry)?;
        }
        Ok(entry)
    }

    /// The bytes `text`'s windows take in `db/data` when it is stored self-contained (about
    /// its size when the contents do not compress); None when it is stored as a delta.
    pub fn self_contained_bytes(&self, text: &FileText) -> Result<Option<u64>> {
        if text.rep.raw() == 0 {
            return Ok(None);
        }
        let t = self.rep_trailer(text.rep.raw())?;
        if t.base != 0 || t.windows == 0 {
            return Ok(None);
        }
        Ok(Some(text.rep.raw() - t.first_window))
    }

    /// `text` as the svndiff stream it is stored as, header included, when it is stored
    /// self-contained (its windows' bytes as written: sent as they are to a client that reads
    /// their version, `stream[3]`, nothing decoded, copied or compressed); None when it is
    /// empty or stored as a delta. Kept in the text cache beside the reconstructed texts and
    /// weighed with them; that a text is a delta is kept too (as an empty entry), so asking
    /// again costs no read.
    pub fn stored_stream(&self, text: &FileText) -> Result<Option<Arc<Vec<u8>>>> {
        let (stream, _) = self.stream_entry(text)?;
        Ok((!stream.is_empty()).then_some(stream))
    }

    /// `text`'s stored stream as [`Repo::stored_stream`] gives it, or its contents when it
    /// is stored as a delta (or empty): what a receiver without a version of the file is sent.
    /// A delta's REP record, read to learn that it is one, is the first step of the chain
    /// walk: one read of it, not two.
    pub fn stored_stream_or_text(&self, text: &FileText) -> Result<Stored> {
        let (stream, first) = self.stream_entry(text)?;
        if !stream.is_empty() {
            return Ok(Stored::Stream(stream));
        }
        Ok(Stored::Text(self.fulltext_from(text.rep.raw(), first)?))
    }

    /// The text cache's stream entry for `text` (empty for a delta or an empty text) and,
    /// when it was just read and is a delta, its REP record and the bytes read with it.
    fn stream_entry(&self, text: &FileText) -> Result<(Arc<Vec<u8>>, Option<ChainLink>)> {
        if text.rep.raw() == 0 {
            return Ok((Arc::new(Vec::new()), None));
        }
        let mut first = None;
        let stream = self.kept(text.rep.raw() | STORED_STREAM, || {
            // The REP record with what lies just before it: a small text's windows.
            let (t, near) = self.rep_near(text.rep.raw(), NEAR_SMALL)?;
            let mut stream = Vec::new();
            if t.base == 0 && t.windows > 0 {
                stream.extend_from_slice(&svelto_delta::stream_header(t.version));
                rep::stored_stream_into(self, text.rep.raw(), &t, near, &mut stream)?;
            } else {
                first = Some((t, near));
            }
            Ok(stream)
        })?;
        Ok((stream, first))
    }

    /// `text`'s windows and contents when it is stored as a delta against the
    /// representation `base` (not 0), whose contents the caller holds (`base_text`): one
    /// read of the windows and one application, no chain walk, nothing put in the text
    /// cache (a blame walking a file's versions in order). None when `text` is stored
    /// otherwise.
    pub fn text_over(
        &self,
        text: &FileText,
        base: TextId,
        base_text: &[u8],
    ) -> Result<Option<(Vec<Window>, Vec<u8>)>> {
        if text.rep.is_none() || base.is_none() {
            return Ok(None);
        }
        let (t, near) = self.rep_near(text.rep.raw(), NEAR_SMALL)?;
        if t.base != base.raw() {
            return Ok(None);
        }
        let windows = match near {
            Some((bytes, from)) => rep::windows_in(self, text.rep.raw(), &t, bytes, from)?,
            None => rep::windows(self, text.rep.raw(), &t)?,
        };
        let contents = rep::apply_all(text.rep.raw(), &t, &windows, base_text)?;
        Ok(Some((windows, contents)))
    }

    /// The expanded contents of a representation, kept in a bounded cache.
    ///
    /// The chain is walked without recursion and never further than the writer makes it
    /// (`MAX_CHAIN` deltas above a self-contained representation); each base lies before
    /// the representation built on it, so damaged records cannot make it loop. Each REP
    /// record is read with the windows written just before it (one read for most deltas).
    /// The bases on the way are rebuilt in two buffers used in turn and not kept: a
    /// checkout's texts share none of them, and keeping them doubled the memory a first
    /// checkout fills (every new page a fault) and pushed its texts out of the cache; the
    /// version before (`text_over`'s callers, a dump's or a replay's previous version) is
    /// kept as a text of its own when it was read.
    pub fn fulltext(&self, rep: TextId) -> Result<Arc<Vec<u8>>> {
        self.fulltext_from(rep.raw(), None)
    }

    /// [`Repo::fulltext`], the REP record at `rep` already read when `first` holds it.
    fn fulltext_from(&self, rep: Offset, mut first: Option<ChainLink>) -> Result<Arc<Vec<u8>>> {
        if rep == 0 {
            return Ok(Arc::new(Vec::new()));
        }
        let cached = self.inner.fulltexts.get(rep);
        crate::stats::FULLTEXT_CACHE.count(cached.is_some());
        if let Some(t) = cached {
            return Ok(t);
        }
        // Down the chain to a self-contained or cached base, then back up applying deltas.
        let mut chain = Vec::new();
        let mut at = rep;
        let base = loop {
            let (t, near) = match first.take() {
                Some(link) => link,
                None => self.rep_near(at, NEAR_SMALL)?,
            };
            chain.push((at, t, near));
            if t.base == 0 {
                break None;
            }
            if chain.len() > rep::MAX_CHAIN as usize {
                let what = Corruption::new(format!(
                    "delta chain longer than {} representations",
                    rep::MAX_CHAIN
                ));
                return Err(Self::corrupt(Which::Data, rep, what));
            }
            // A base found on the way is not counted as a use of its own: the versions a
            // blame or a replay reads once must not earn a place through each other.
            if let Some(base) = self.inner.fulltexts.peek(t.base) {
                break Some(base);
            }
            at = t.base;
        };
        let (top, bases) = chain.split_first_mut().expect("the chain holds `rep`");
        let mut prev = Vec::new();
        let mut next = Vec::new();
        let deepest = bases.len();
        for (i, (off, t, near)) in bases.iter_mut().enumerate().rev() {
            let src: &[u8] = match (&base, i + 1 == deepest) {
                (Some(b), true) => b,
                (None, true) => &[],
                _ => &prev,
            };
            rep::apply_into(self, *off, t, near.take(), src, &mut next)?;
            std::mem::swap(&mut prev, &mut next);
        }
        let src: &[u8] = match (&base, bases.is_empty()) {
            (Some(b), true) => b,
            (None, true) => &[],
            _ => &prev,
        };
        let (off, t, near) = top;
        let mut out =
            Vec::with_capacity(usize::try_from(t.size).unwrap_or(0).min(rep::DELTA_MAX * 4));
        rep::apply_into(self, *off, t, near.take(), src, &mut out)?;
        let text = Arc::new(out);
        self.inner.fulltexts.put(rep, text.clone());
        Ok(text)
    }

    pub(crate) fn cache_fulltext(&self, rep: Offset, text: Arc<Vec<u8>>) {
        self.inner.fulltexts.put(rep, text);
    }

    /// Forgets everything cached by offset: a writer truncated records that those offsets
    /// may now name again.
    pub(crate) fn clear_caches(&self) {
        self.inner.fulltexts.clear();
        self.inner.nodes.clear();
        self.inner.dirs.clear();
        self.inner.listed.clear();
        self.inner.revs.clear();
        self.inner.metas.clear();
        self.inner.props.clear();
    }

    /// Writes the contents of a file to `out`, in as few large writes as it can.
    pub fn write_text(&self, text: &FileText, out: &mut dyn std::io::Write) -> Result<()> {
        let werr = |e| StoreError::Io {
            context: "writing file contents".into(),
            err: e,
        };
        if text.rep.raw() == 0 {
            return Ok(());
        }
        if text.size as usize <= rep::DELTA_MAX || self.rep_trailer(text.rep.raw())?.base != 0 {
            return out.write_all(&self.fulltext(text.rep)?).map_err(werr);
        }
        let mut r = self.reader(text.rep.raw())?;
        let mut buf = vec![0u8; 1 << 20];
        loop {
            let n = r.read(&mut buf).map_err(|e| StoreError::Io {
                context: "reading file contents".into(),
                err: e,
            })?;
            if n == 0 {
                return Ok(());
            }
            out.write_all(&buf[..n]).map_err(werr)?;
        }
    }

    /// The windows of a file stored self-contained, to be read one by one
    /// ([`WindowStream::next_chunk`]) when it is too large to be held whole (past
    /// `DELTA_MAX`, as [`Repo::write_text`] streams it); None otherwise (read it with
    /// [`Repo::read_text`]).
    pub fn large_text_windows(&self, text: &FileText) -> Result<Option<WindowStream<Repo>>> {
        if text.rep.raw() == 0 || text.size as usize <= rep::DELTA_MAX {
            return Ok(None);
        }
        let t = self.rep_trailer(text.rep.raw())?;
        if t.base != 0 {
            return Ok(None);
        }
        Ok(Some(WindowStream::new(self.clone(), text.rep.raw(), &t)))
    }

    /// The contents of a file as a stream; memory stays bounded for large files.
    pub fn text_reader(&self, text: &FileText) -> Result<Box<dyn Read + Send>> {
        self.reader(text.rep.raw())
    }

    /// A streaming reader; self-contained representations are decoded window by window,
    /// a delta against a base is reconstructed (and cached) whole.
    fn reader(&self, rep: Offset) -> Result<Box<dyn Read + Send>> {
        if rep == 0 {
            return Ok(Box::new(std::io::empty()));
        }
        let t = self.rep_trailer(rep)?;
        if t.base != 0 {
            return Ok(Box::new(std::io::Cursor::new(Shared(
                self.fulltext_from(rep, None)?,
            ))));
        }
        Ok(Box::new(WindowStream::new(self.clone(), rep, &t)))
    }

    pub(crate) fn read_raw(&self, w: Which, off: u64, len: usize) -> Result<Vec<u8>> {
        read_exact_at(self.file(w), w, off, len)
    }
}

impl DataFile for Repo {
    fn read_data_into(&self, off: u64, buf: &mut [u8]) -> Result<()> {
        files::read_exact_into(self.file(Which::Data), Which::Data, off, buf)
    }
}

/// Bytes shared with the fulltext cache, readable through `std::io::Cursor`.
struct Shared(std::sync::Arc<Vec<u8>>);

impl AsRef<[u8]> for Shared {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl Repo {
    /// The node-revisions of the line of history of `path` in `rev`, newest first,
    /// following predecessors across copies (Subversion's `svn_fs_node_history`).
    pub fn history(&self, rev: Revnum, path: &str) -> Result<Vec<HistoryEntry>> {
        let (mut off, _) = self.node_at(rev, path)?;
        let mut out = Vec::new();
        while off.is_some() {
            let n = self.node(off)?;
            if n.predecessor >= off {
                let what = Corruption::new("node-revision's predecessor lies after it");
                return Err(Self::corrupt(Which::Data, off.raw(), what));
            }
            out.push(HistoryEntry {
                rev: n.created_rev,
                path: n.created_path.clone(),
                copyfrom: n.copyfrom.clone(),
            });
            off = n.predecessor;
        }
        Ok(out)
    }

    /// Subversion's "related" test: two node-revisions are related when they are versions
    /// of the same node (one line of history, copies included).
    pub fn related(&self, a: NodeRevId, b: NodeRevId) -> Result<bool> {
        Ok(self.node(a)?.node_id == self.node(b)?.node_id)
    }
}

/// Transaction names are made by the server: 1 to 64 of `[A-Za-z0-9_-]`, nothing that could
/// leave `db/txns`.
pub(crate) fn valid_txn_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// A line in `db/current`'s format from a file of `db/txns`, or None when the file does not
/// exist.
fn read_txn_line(p: &Path) -> Result<Option<Current>> {
    let text = match std::fs::read_to_string(p) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_err(format!("reading {}", p.display()))(e)),
    };
    Current::parse(&text)
        .map(Some)
        .map_err(|what| StoreError::Corrupt {
            file: "txns",
            offset: 0,
            what,
        })
}

/// A file's identity on this machine: its device and inode.
fn file_id(m: &std::fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (m.dev(), m.ino())
}

/// The local engine as the storage seam's reading handle: every method is the tuned one
/// above (the caches, the one-read REP records, the stored streams and deltas).
impl svelto_fs::ReadRepo for Repo {
    fn youngest(&self) -> Revnum {
        Repo::youngest(self)
    }
    fn txns(&self) -> Result<Vec<(String, Revnum)>> {
        Repo::txns(self)
    }
    fn rev_size(&self, rev: Revnum) -> Result<u64> {
        Repo::rev_size(self, rev)
    }
    fn refresh(&self) -> Result<Revnum> {
        Repo::refresh(self)
    }
    fn uuid(&self) -> Result<String> {
        Repo::uuid(self)
    }
    fn env(&self) -> Arc<dyn Env> {
        Repo::env(self)
    }
    fn rev_info(&self, rev: Revnum) -> Result<RevInfo> {
        Repo::rev_info(self, rev)
    }
    fn rev_meta(&self, rev: Revnum) -> Result<Arc<RevMeta>> {
        Repo::rev_meta(self, rev)
    }
    fn node(&self, id: NodeRevId) -> Result<Arc<NodeRev>> {
        Repo::node(self, id)
    }
    fn listing(&self, id: ListingId) -> Result<Arc<Vec<DirEntry>>> {
        Repo::dir_at(self, id)
    }
    fn props_shared(&self, id: PropsId) -> Result<Arc<PropList>> {
        Repo::props_shared(self, id)
    }
    fn text(&self, id: TextId) -> Result<Arc<Vec<u8>>> {
        Repo::fulltext(self, id)
    }
    fn text_reader(&self, text: &FileText) -> Result<Box<dyn Read + Send>> {
        Repo::text_reader(self, text)
    }
    fn replaced(&self) -> bool {
        Repo::replaced(self)
    }
    fn set_cache_limit(&self, bytes: usize) {
        Repo::set_cache_limit(self, bytes)
    }
    fn root(&self, rev: Revnum) -> Result<NodeRevId> {
        Repo::root(self, rev)
    }
    fn revprops(&self, rev: Revnum) -> Result<PropList> {
        Repo::revprops(self, rev)
    }
    fn dir(&self, node: &NodeRev) -> Result<Arc<Vec<DirEntry>>> {
        Repo::dir(self, node)
    }
    fn props(&self, node: &NodeRev) -> Result<PropList> {
        Repo::props(self, node)
    }
    fn read_text(&self, text: &FileText) -> Result<Arc<Vec<u8>>> {
        Repo::read_text(self, text)
    }
    fn write_text(&self, text: &FileText, out: &mut dyn std::io::Write) -> Result<()> {
        Repo::write_text(self, text, out)
    }
    fn child(&self, node: &NodeRev, name: &str) -> Result<Option<(NodeRevId, Arc<NodeRev>)>> {
        Repo::child(self, node, name)
    }
    fn lookup_from(
        &self,
        root: NodeRevId,
        path: &str,
    ) -> Result<Option<(NodeRevId, Arc<NodeRev>)>> {
        Repo::lookup_from(self, root, path)
    }
    fn lookup(&self, rev: Revnum, path: &str) -> Result<Option<(NodeRevId, Arc<NodeRev>)>> {
        Repo::lookup(self, rev, path)
    }
    fn node_at(&self, rev: Revnum, path: &str) -> Result<(NodeRevId, Arc<NodeRev>)> {
        Repo::node_at(self, rev, path)
    }
    fn changed_node(&self, rev: Revnum, path: &str) -> Result<Option<(NodeRevId, Arc<NodeRev>)>> {
        Repo::changed_node(self, rev, path)
    }
    fn history(&self, rev: Revnum, path: &str) -> Result<Vec<HistoryEntry>> {
        Repo::history(self, rev, path)
    }
    fn related(&self, a: NodeRevId, b: NodeRevId) -> Result<bool> {
        Repo::related(self, a, b)
    }
    fn listed(&self, id: ListingId) -> Result<ListedDir> {
        Repo::listed_at(self, id)
    }
    fn stored_stream(&self, text: &FileText) -> Result<Option<Arc<Vec<u8>>>> {
        Repo::stored_stream(self, text)
    }
    fn stored_stream_or_text(&self, text: &FileText) -> Result<Stored> {
        Repo::stored_stream_or_text(self, text)
    }
    fn stored_delta(&self, text: &FileText, base: TextId) -> Result<Option<Vec<Window>>> {
        Repo::stored_delta(self, text, base)
    }
    fn stored_delta_stream(
        &self,
        text: &FileText,
        base: TextId,
    ) -> Result<Option<(Arc<Vec<u8>>, usize)>> {
        Repo::stored_delta_stream(self, text, base)
    }
    fn text_over(
        &self,
        text: &FileText,
        base: TextId,
        base_text: &[u8],
    ) -> Result<Option<(Vec<Window>, Vec<u8>)>> {
        Repo::text_over(self, text, base, base_text)
    }
    fn self_contained_bytes(&self, text: &FileText) -> Result<Option<u64>> {
        Repo::self_contained_bytes(self, text)
    }
    fn locks(&self) -> Result<Arc<LockTable>> {
        Repo::locks(self)
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn stage(&self, name: &str) -> Result<Box<dyn svelto_fs::WriteRepo>> {
        Ok(Box::new(crate::Writer::stage(self.path(), name)?))
    }
    fn scratch_dir(&self) -> Option<std::path::PathBuf> {
        Some(self.db_path().join("txns"))
    }
    fn local_dir(&self) -> Option<&std::path::Path> {
        Some(self.path())
    }
    fn verify_storage(&self) -> Result<()> {
        Repo::verify_files(self)
    }
    fn verify_records(&self) -> Result<()> {
        Repo::verify_records(self)
    }
    fn large_text_chunks(&self, text: &FileText) -> Result<Option<svelto_fs::TextChunks>> {
        Ok(Repo::large_text_windows(self, text)?.map(|mut w| {
            Box::new(std::iter::from_fn(move || w.next_chunk().transpose()))
                as svelto_fs::TextChunks
        }))
    }
    fn same_storage(&self, other: &dyn svelto_fs::ReadRepo) -> bool {
        other
            .as_any()
            .downcast_ref::<Repo>()
            .is_some_and(|o| self.same_files(o))
    }
}

/// The local engine as a server opens it: a repository is a directory on this machine
/// ([`Repo::open`], [`crate::Writer::open`]); its caches' counters are the process's
/// ([`crate::stats::caches`]).
#[derive(Debug, Default, Clone, Copy)]
pub struct LocalBackend;

impl svelto_fs::Backend for LocalBackend {
    fn open(&self, dir: &Path, env: &Arc<dyn Env>) -> Result<Arc<dyn svelto_fs::ReadRepo>> {
        let repo = Repo::open(dir)?;
        repo.set_env(env.clone());
        Ok(Arc::new(repo))
    }
    fn is_repository(&self, dir: &Path) -> bool {
        dir.join("db").join("format").is_file()
    }
    fn open_writer(&self, dir: &Path) -> Result<Box<dyn svelto_fs::WriteRepo>> {
        Ok(Box::new(crate::Writer::open(dir)?))
    }
    fn create(&self, dir: &Path, uuid: &str, r0_props: &svelto_core::PropList) -> Result<()> {
        crate::create_db(dir, uuid, r0_props)
    }
    fn open_txn(
        &self,
        dir: &Path,
        name: &str,
        env: &Arc<dyn Env>,
    ) -> Result<(Arc<dyn svelto_fs::ReadRepo>, Revnum)> {
        let (repo, rev) = Repo::open_txn(dir, name)?;
        repo.set_env(env.clone());
        Ok((Arc::new(repo), rev))
    }
    fn try_open_writer(&self, dir: &Path) -> Result<Option<Box<dyn svelto_fs::WriteRepo>>> {
        Ok(crate::Writer::try_open(dir)?.map(|w| Box::new(w) as Box<dyn svelto_fs::WriteRepo>))
    }
    fn hotcopy(
        &self,
        src: &Path,
        dst: &Path,
        incremental: bool,
    ) -> std::result::Result<svelto_fs::DbCopy, svelto_fs::HotcopyError> {
        crate::hotcopy_db(src, dst, incremental)
    }
    fn freeze(&self, dirs: &[std::path::PathBuf]) -> Result<svelto_fs::Frozen> {
        Ok(Box::new(crate::freeze(dirs)?))
    }
    fn recover(&self, dir: &Path, wait: bool) -> Result<Option<Vec<String>>> {
        Ok(crate::recover_current(dir, wait)?.map(|r| r.report()))
    }
    fn remove_txn(&self, dir: &Path, name: &str) -> Result<svelto_fs::TxnRemoval> {
        use svelto_fs::TxnRemoval;
        if !Repo::open(dir)?.txns()?.iter().any(|(n, _)| n == name) {
            return Err(StoreError::NoSuchTxn(name.to_string()));
        }
        let staged = dir.join("db").join("txns").join(format!("{name}.txn"));
        if staged.is_dir() {
            std::fs::remove_dir_all(&staged)
                .map_err(io_err(format!("removing {}", staged.display())))?;
            return Ok(TxnRemoval::Removed);
        }
        // Opening a writer removes what a writer that is gone left behind.
        Ok(match crate::Writer::try_open(dir)? {
            Some(_) => TxnRemoval::Removed,
            None => TxnRemoval::InProgress,
        })
    }
    fn cache_stats(&self) -> Vec<(&'static str, u64, u64)> {
        crate::stats::caches()
            .iter()
            .map(|(name, c)| (*name, c.hits(), c.misses()))
            .collect()
    }
}
