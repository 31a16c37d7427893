//! The single writer of a repository: appends records, commits revisions, publishes them.

use crate::enc::frame;
use crate::error::{io_err, Corruption, Result, StoreError};
use crate::files::{self, Appender, Current, RevRecord, Which, DEDUP_RECORD, REVPROPS_RECORD};
use crate::io::{OsIo, StoreIo};
use crate::node::{
    diff_dirs, encode_dir, encode_dir_delta, encode_props, Codec, DirDelta, DirEntry, FileText,
    NodeRev, Offset, RevMeta,
};
use crate::rep::{RepTrailer, DELTA_MAX, MAX_CHAIN};
use crate::repo::Repo;
use crate::{
    MAX_DIR_CHAIN, TAG_DIR, TAG_DIR_DELTA, TAG_NODE, TAG_PROPS, TAG_REP, TAG_REVISION, TAG_WINDOW,
};

/// Listings smaller than this are always written whole (a delta would save little).
const DIR_DELTA_MIN: usize = 64;
use crate::locks::LockTable;
use md5::Digest;
use std::collections::{BTreeMap, HashMap};
use std::fs::{File, OpenOptions};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use svelto_core::{ListingId, Lock, Md5, NodeRevId, PropList, PropsId, Revnum, Sha1, TextId};
use svelto_delta::{delta_windows, Window, WINDOW_SIZE};

/// zlib level, used only if windows are ever written as svndiff1.
const ZLIB_LEVEL: u32 = 5;
/// Windows are stored as svndiff2 (LZ4): decoding costs a fraction of zlib, and 1.10+
/// clients accept svndiff2 as sent (measured: dump 4x faster than with zlib, 40% larger).
const SVNDIFF_VERSION: u8 = 2;

/// Lengths of the files when a transaction began, to roll back to.
#[derive(Clone, Copy)]
pub(crate) struct Mark {
    lens: [u64; 5],
    dedup_text: usize,
    dedup_props: usize,
}

/// Holds the repository's write lock. One per repository at a time, across processes.
///
/// Or, made by [`Writer::stage`], writes one transaction apart from the repository's files,
/// without the lock, for hooks to read while other commits go on.
pub struct Writer {
    repo: Repo,
    /// `db/write.lock`, or None for a staging writer.
    lock_file: Option<File>,
    /// A staging writer's `db/txns/NAME.txn`, removed with the writer.
    staged: Option<PathBuf>,
    apps: Vec<Appender>,
    youngest: Revnum,
    published: Revnum,
    /// What this writer last read from or wrote to `db/current` (checked): never truncate
    /// below it.
    published_at: Current,
    pub(crate) next_node_id: u64,
    pub(crate) next_copy_id: u64,
    dedup_text: HashMap<Sha1, FileText>,
    dedup_props: HashMap<[u8; 20], Offset>,
    /// Keys added since the last commit point, removed again on abort.
    added_text: Vec<Sha1>,
    added_props: Vec<[u8; 20]>,
    /// DIRDELTA depths of the listings this writer wrote (0 for whole ones).
    dir_depths: HashMap<Offset, u64>,
    io: Arc<dyn StoreIo>,
    /// Publishing `db/current` failed: nothing more is done (see `Appender`).
    failed: files::Failure,
}

impl Writer {
    /// Opens `path` for writing, waiting for the write lock. Drops any uncommitted tail a
    /// crashed writer left behind.
    pub fn open(path: &Path) -> Result<Writer> {
        Self::open_with(path, Arc::new(OsIo))
    }

    /// `open`, with the writer's file operations going through `io` (tests use one that
    /// fails or forgets them).
    pub fn open_with(path: &Path, io: Arc<dyn StoreIo>) -> Result<Writer> {
        let (lock, lock_path) = Self::lock_file(&path.join("db"))?;
        lock.lock()
            .map_err(io_err(format!("locking {}", lock_path.display())))?;
        Self::open_locked(path, lock, io)
    }

    /// [`Writer::open`] without waiting: None while another writer (a commit, a `freeze`)
    /// holds the write lock.
    pub fn try_open(path: &Path) -> Result<Option<Writer>> {
        let (lock, lock_path) = Self::lock_file(&path.join("db"))?;
        match lock.try_lock() {
            Ok(()) => Self::open_locked(path, lock, Arc::new(OsIo)).map(Some),
            Err(std::fs::TryLockError::WouldBlock) => Ok(None),
            Err(std::fs::TryLockError::Error(e)) => {
                Err(io_err(format!("locking {}", lock_path.display()))(e))
            }
        }
    }

    /// `db/write.lock` of the repository whose `db` is `db` (the writers' lock, which
    /// anything appending to its files takes), opened (created if missing)
    /// but not locked, and its path.
    pub fn lock_file(db: &Path) -> Result<(File, PathBuf)> {
        let lock_path = db.join("write.lock");
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(io_err(format!("opening {}", lock_path.display())))?;
        Ok((lock, lock_path))
    }

    /// A writer appending to `apps` after the published state `cur` of `repo`, its ids
    /// continuing from the youngest revision's record.
    fn over(
        repo: Repo,
        lock_file: Option<File>,
        apps: Vec<Appender>,
        cur: Current,
        io: Arc<dyn StoreIo>,
    ) -> Result<Writer> {
        let last = repo.rev_record(cur.youngest)?;
        Ok(Writer {
            repo,
            lock_file,
            staged: None,
            apps,
            youngest: cur.youngest,
            published: cur.youngest,
            published_at: cur,
            next_node_id: last.next_node_id,
            next_copy_id: last.next_copy_id,
            dedup_text: HashMap::new(),
            dedup_props: HashMap::new(),
            added_text: Vec::new(),
            added_props: Vec::new(),
            dir_depths: HashMap::new(),
            io,
            failed: None,
        })
    }

    fn open_locked(path: &Path, lock: File, io: Arc<dyn StoreIo>) -> Result<Writer> {
        let db = path.join("db");
        // Opening checks db/current against the files (`Repo::check_current`) before
        // anything is truncated below.
        let repo = Repo::open(path)?;
        let cur = repo.current();
        let mut apps = Vec::new();
        for w in Which::ALL {
            apps.push(Appender::open(&*io, &db, w, cur.len(w))?);
        }
        let mut writer = Writer::over(repo, Some(lock), apps, cur, io)?;
        writer.load_dedup(cur.len(Which::Dedup))?;
        // A db/uuid written before it had a checksum gets one.
        let uuid_path = db.join("uuid");
        let text = std::fs::read_to_string(&uuid_path)
            .map_err(io_err(format!("reading {}", uuid_path.display())))?;
        if !text.contains(" crc=") {
            let uuid = writer.repo.uuid()?;
            writer.set_uuid(&uuid)?;
        }
        // Transactions exposed by a writer that is gone (it held the lock we now hold).
        // Staged transactions (directories) belong to commits that hold no lock.
        if let Ok(dir) = std::fs::read_dir(db.join("txns")) {
            for e in dir.flatten() {
                if e.file_type().is_ok_and(|t| t.is_file()) {
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
        Ok(writer)
    }

    /// A writer for transaction `name`, staged apart from the repository's files in
    /// `db/txns/NAME.txn/` (docs/formats/store.md) without the write lock, based on the
    /// youngest revision published now: what it appends continues each file of `db/` past
    /// its published length in a file of that directory, and its `sync` writes the
    /// directory's `current` instead of `db/current`, making the transaction readable with
    /// `Repo::open_txn` (the repository's own files are never touched). Texts are
    /// deduplicated only within the transaction. Dropping the writer removes the
    /// directory; a process that dies first leaves it for `svelto admin rmtxns`.
    pub fn stage(path: &Path, name: &str) -> Result<Writer> {
        check_txn_name(name)?;
        let base = Repo::open(path)?.current();
        let txns = path.join("db").join("txns");
        std::fs::create_dir_all(&txns).map_err(io_err(format!("creating {}", txns.display())))?;
        let dir = txns.join(format!("{name}.txn"));
        std::fs::create_dir(&dir).map_err(io_err(format!("creating {}", dir.display())))?;
        let mut writer = Writer::staging(path, &dir, base);
        if let Ok(w) = &mut writer {
            w.staged = Some(dir);
        } else {
            let _ = std::fs::remove_dir_all(&dir);
        }
        writer
    }

    fn staging(path: &Path, dir: &Path, base: Current) -> Result<Writer> {
        let io: Arc<dyn StoreIo> = Arc::new(OsIo);
        let p = dir.join("base");
        std::fs::write(&p, base.render()).map_err(io_err(format!("writing {}", p.display())))?;
        let mut apps = Vec::new();
        for w in Which::ALL {
            apps.push(Appender::continuation(
                &*io,
                &dir.join(w.name()),
                base.len(w),
            )?);
        }
        let repo = Repo::open_continued(path, dir, &base)?;
        Writer::over(repo, None, apps, base, io)
    }

    fn load_dedup(&mut self, len: u64) -> Result<()> {
        let bytes = self.repo.read_raw(Which::Dedup, 16, (len - 16) as usize)?;
        for (at, rec) in files::checked_records(Which::Dedup, 16, &bytes, DEDUP_RECORD, 53)? {
            let mut sha = [0u8; 20];
            sha.copy_from_slice(&rec[1..21]);
            let mut md5 = [0u8; 16];
            md5.copy_from_slice(&rec[21..37]);
            let (size, off) = (files::le_u64(&rec[37..]), files::le_u64(&rec[45..]));
            match rec[0] {
                1 => {
                    let ft = FileText {
                        rep: TextId::from_raw(off),
                        size,
                        md5: Md5(md5),
                        sha1: Sha1(sha),
                    };
                    self.dedup_text.insert(Sha1(sha), ft);
                }
                2 => {
                    self.dedup_props.insert(sha, off);
                }
                k => {
                    let what = Corruption::new(format!("dedup record kind {k}"));
                    return Err(Repo::corrupt(Which::Dedup, at, what));
                }
            }
        }
        Ok(())
    }

    /// The youngest revision, including committed revisions not yet made durable by `sync`.
    pub fn youngest(&self) -> Revnum {
        self.youngest
    }

    /// A reader that sees everything this writer has committed, durable or not.
    pub fn view(&mut self) -> Result<&Repo> {
        for a in &mut self.apps {
            a.flush()?;
        }
        let cur = self.lens_current();
        self.repo.set_current(cur);
        Ok(&self.repo)
    }

    fn lens_current(&self) -> Current {
        let mut lens = [0u64; 5];
        for (i, a) in self.apps.iter().enumerate() {
            lens[i] = a.len();
        }
        Current {
            youngest: self.youngest,
            lens,
        }
    }

    /// Makes every committed revision durable and visible to readers: fsync the files, then
    /// atomically replace `db/current`. Returns the youngest revision now published.
    ///
    /// Any failure is final for this writer: what reached the disk is unknown, and an
    /// fsync is never retried. Every later call fails; a new writer starts again from what
    /// `db/current` publishes.
    pub fn sync(&mut self) -> Result<Revnum> {
        self.usable()?;
        for a in &mut self.apps {
            a.sync()?;
        }
        let cur = self.lens_current();
        if let Some(dir) = &self.staged {
            // A transaction for hooks to read: not durable (a crash leaves a leftover for
            // rmtxns), so written and renamed into place without fsync.
            let (tmp, dst) = (dir.join("current.tmp"), dir.join("current"));
            std::fs::write(&tmp, cur.render())
                .and_then(|()| std::fs::rename(&tmp, &dst))
                .map_err(io_err(format!("writing {}", dst.display())))?;
            self.published = self.youngest;
            self.published_at = cur;
            return Ok(self.published);
        }
        let written = files::write_atomically_with(
            &*self.io,
            self.repo.db_path(),
            "current",
            cur.render().as_bytes(),
        );
        if let Err(StoreError::Io { context, err }) = &written {
            self.failed = Some((err.kind(), context.clone()));
        }
        written?;
        self.published = self.youngest;
        self.published_at = cur;
        self.added_text.clear();
        self.added_props.clear();
        Ok(self.published)
    }

    /// Whether an earlier write or fsync failed (then everything is refused).
    pub(crate) fn usable(&self) -> Result<()> {
        files::refuse_after(&self.failed)?;
        self.apps.iter().try_for_each(Appender::failed)
    }

    /// The youngest revision that `sync` has made durable.
    pub fn published(&self) -> Revnum {
        self.published
    }

    /// Shows what this writer has committed but not published to other processes as a
    /// named transaction: `db/txns/NAME` records the file lengths that include it, and
    /// `Repo::open_txn` reads the repository as if they were current. The bytes are
    /// flushed to the OS (not synced): a hook reads them while this writer waits.
    pub fn expose_txn(&mut self, name: &str) -> Result<()> {
        check_txn_name(name)?;
        self.view()?;
        let dir = self.repo.db_path().join("txns");
        std::fs::create_dir_all(&dir).map_err(io_err(format!("creating {}", dir.display())))?;
        let p = dir.join(name);
        std::fs::write(&p, self.lens_current().render())
            .map_err(io_err(format!("writing {}", p.display())))
    }

    /// Removes a transaction file written by `expose_txn` (missing is fine).
    pub fn forget_txn(&self, name: &str) {
        if check_txn_name(name).is_ok() {
            let _ = std::fs::remove_file(self.repo.db_path().join("txns").join(name));
        }
    }

    /// Forgets every revision committed since the last `sync` (a pre-commit hook said no):
    /// the files go back to their published lengths.
    pub fn discard_unpublished(&mut self) -> Result<()> {
        self.usable()?;
        let cur = files::read_current(self.repo.db_path())?;
        if cur != self.published_at {
            // Never truncate to lengths this writer did not publish itself.
            return Err(StoreError::Conflict(format!(
                "db/current reads '{}' but this writer published '{}'",
                cur.render().trim_end(),
                self.published_at.render().trim_end()
            )));
        }
        let last = self.repo.rev_record(cur.youngest)?;
        let mark = Mark {
            lens: cur.lens,
            dedup_text: 0,
            dedup_props: 0,
        };
        self.rollback(mark)?;
        self.youngest = cur.youngest;
        self.next_node_id = last.next_node_id;
        self.next_copy_id = last.next_copy_id;
        self.repo.set_current(cur);
        Ok(())
    }

    /// Lets other writers (other processes, or another `Writer` of this one) in until
    /// `relock`. Everything committed must be published first.
    pub fn unlock(&mut self) -> Result<()> {
        if self.published != self.youngest {
            return Err(StoreError::Conflict(
                "unlocking a writer with unpublished revisions".to_string(),
            ));
        }
        self.held_lock()?
            .unlock()
            .map_err(io_err("unlocking db/write.lock".to_string()))
    }

    fn held_lock(&self) -> Result<&File> {
        self.lock_file
            .as_ref()
            .ok_or_else(|| StoreError::Conflict("a staging writer holds no lock".to_string()))
    }

    /// Takes the write lock again after `unlock`. Returns false when another writer
    /// published revisions meanwhile, or when a write or fsync of this writer failed: this
    /// writer's state is stale, open a new one (the lock is then not taken).
    pub fn relock(&mut self) -> Result<bool> {
        if self.usable().is_err() {
            return Ok(false);
        }
        let lock = self.held_lock()?;
        lock.lock()
            .map_err(io_err("locking db/write.lock".to_string()))?;
        match files::read_current(self.repo.db_path()) {
            Ok(cur) => Ok(cur == self.lens_current()),
            Err(e) => {
                // Not kept locked by a writer that will not be used.
                let _ = lock.unlock();
                Err(e)
            }
        }
    }

    pub(crate) fn mark(&self) -> Mark {
        let mut lens = [0u64; 5];
        for (i, a) in self.apps.iter().enumerate() {
            lens[i] = a.len();
        }
        Mark {
            lens,
            dedup_text: self.added_text.len(),
            dedup_props: self.added_props.len(),
        }
    }

    /// Forgets everything appended since `mark` (an aborted transaction).
    pub(crate) fn rollback(&mut self, mark: Mark) -> Result<()> {
        for (i, a) in self.apps.iter_mut().enumerate() {
            a.truncate(mark.lens[i])?;
        }
        for k in self.added_text.drain(mark.dedup_text..) {
            self.dedup_text.remove(&k);
        }
        for k in self.added_props.drain(mark.dedup_props..) {
            self.dedup_props.remove(&k);
        }
        self.repo.clear_caches();
        self.dir_depths.clear();
        Ok(())
    }

    fn app(&mut self, w: Which) -> &mut Appender {
        &mut self.apps[w as usize]
    }

    pub(crate) fn write_record(&mut self, tag: u8, payload: &[u8]) -> Result<Offset> {
        if payload.len() > crate::enc::MAX_PAYLOAD {
            return Err(StoreError::TooLarge(payload.len()));
        }
        let mut framed = Vec::with_capacity(payload.len() + 9);
        frame(tag, payload, &mut framed);
        self.app(Which::Data).append(&framed)
    }

    pub(crate) fn write_node(&mut self, node: &NodeRev) -> Result<NodeRevId> {
        let mut p = Vec::with_capacity(96);
        node.encode(&mut p);
        self.write_record(TAG_NODE, &p).map(NodeRevId::from_raw)
    }

    /// Writes a directory listing: as the changes from `previous` (the listing it
    /// replaces, 0 = none) when those are few and the chain is short, else whole. A large
    /// directory changed by one entry then costs one entry, not the whole listing.
    pub(crate) fn write_dir(
        &mut self,
        entries: &[DirEntry],
        previous: ListingId,
    ) -> Result<ListingId> {
        if entries.is_empty() {
            return Ok(ListingId::NONE);
        }
        let previous = previous.raw();
        let mut p = Vec::new();
        let mut tag = TAG_DIR;
        let mut depth = 0;
        if previous != 0 && entries.len() >= DIR_DELTA_MIN {
            let d = match self.dir_depths.get(&previous) {
                Some(&d) => d,
                None => self.readable(previous)?.dir_depth(previous)?,
            } + 1;
            if d <= MAX_DIR_CHAIN {
                let old = self
                    .readable(previous)?
                    .dir_at(ListingId::from_raw(previous))?;
                let changes = diff_dirs(&old, entries);
                if changes.len() * 4 <= entries.len() {
                    let delta = DirDelta {
                        base: previous,
                        depth: d,
                        changes,
                    };
                    encode_dir_delta(&delta, &mut p);
                    tag = TAG_DIR_DELTA;
                    depth = d;
                }
            }
        }
        if tag == TAG_DIR {
            p.reserve(entries.len() * 24);
            encode_dir(entries, &mut p);
        }
        let off = self.write_record(tag, &p)?;
        self.repo.cache_dir(off, Arc::new(entries.to_vec()));
        if self.dir_depths.len() >= 1 << 20 {
            self.dir_depths.clear();
        }
        self.dir_depths.insert(off, depth);
        Ok(ListingId::from_raw(off))
    }

    /// A reader that can see the record at `off` (written records still in the append
    /// buffer are flushed first; usually they are not: earlier listings are cached).
    fn readable(&mut self, off: Offset) -> Result<&Repo> {
        if off >= self.repo.current().len(Which::Data) {
            return self.view();
        }
        Ok(&self.repo)
    }

    fn add_dedup(
        &mut self,
        kind: u8,
        sha: [u8; 20],
        md5: [u8; 16],
        size: u64,
        off: u64,
    ) -> Result<()> {
        let mut rec = Vec::with_capacity(DEDUP_RECORD as usize);
        rec.push(kind);
        rec.extend_from_slice(&sha);
        rec.extend_from_slice(&md5);
        rec.extend_from_slice(&size.to_le_bytes());
        rec.extend_from_slice(&off.to_le_bytes());
        let crc = crc32fast::hash(&rec);
        rec.extend_from_slice(&crc.to_le_bytes());
        rec.extend_from_slice(&[0u8; 4]);
        self.app(Which::Dedup).append(&rec)?;
        Ok(())
    }

    /// Stores a property list once; identical lists share one record.
    pub(crate) fn store_props(&mut self, props: &PropList) -> Result<PropsId> {
        if props.is_empty() {
            return Ok(PropsId::NONE);
        }
        let payload = encode_props(props);
        let key: [u8; 20] = sha1::Sha1::digest(&payload).into();
        if let Some(&off) = self.dedup_props.get(&key) {
            return Ok(PropsId::from_raw(off));
        }
        let off = self.write_record(TAG_PROPS, &payload)?;
        self.dedup_props.insert(key, off);
        self.added_props.push(key);
        self.add_dedup(2, key, [0; 16], payload.len() as u64, off)?;
        Ok(PropsId::from_raw(off))
    }

    /// The expanded contents of a representation (cached).
    pub(crate) fn fulltext(&mut self, rep: TextId) -> Result<Arc<Vec<u8>>> {
        self.view()?.fulltext(rep)
    }

    /// Stores file contents read from `src`, deduplicated by SHA-1. `base` is the
    /// representation to delta against (chosen by the transaction), if any.
    pub(crate) fn store_text(&mut self, src: &mut dyn Read, base: TextId) -> Result<FileText> {
        let base = base.raw();
        let mut md5 = md5::Md5::new();
        let mut sha = sha1::Sha1::new();
        let mut buf = Vec::new();
        let read_err = io_err("reading file contents");
        let n = src
            .take(DELTA_MAX as u64 + 1)
            .read_to_end(&mut buf)
            .map_err(read_err)?;
        if n <= DELTA_MAX {
            md5.update(&buf);
            sha.update(&buf);
            let (md5, sha) = (Md5(md5.finalize().into()), Sha1(sha.finalize().into()));
            if buf.is_empty() {
                return Ok(FileText::EMPTY);
            }
            if let Some(ft) = self.dedup_text.get(&sha) {
                return Ok(*ft);
            }
            let buf = Arc::new(buf);
            let (windows, base, chain) = self.delta_against(&buf, base)?;
            let rep = self.write_rep(&windows, base, chain, buf.len() as u64, md5, sha)?;
            self.repo.cache_fulltext(rep, buf.clone());
            return self.remember_text(rep, buf.len() as u64, md5, sha);
        }
        // Large: stream self-contained windows; never hold the whole file.
        let mark = self.app(Which::Data).len();
        let mut first = 0;
        let mut count = 0u64;
        let mut size = 0u64;
        let mut chunk = buf;
        loop {
            for piece in chunk.chunks(WINDOW_SIZE) {
                md5.update(piece);
                sha.update(piece);
                size += piece.len() as u64;
                let off = self.write_window(&Window::fulltext(piece))?;
                if count == 0 {
                    first = off;
                }
                count += 1;
            }
            chunk = Vec::with_capacity(WINDOW_SIZE * 16);
            let n = src
                .take((WINDOW_SIZE * 16) as u64)
                .read_to_end(&mut chunk)
                .map_err(io_err("reading file contents"))?;
            if n == 0 {
                break;
            }
        }
        let (md5, sha) = (Md5(md5.finalize().into()), Sha1(sha.finalize().into()));
        if let Some(ft) = self.dedup_text.get(&sha).copied() {
            self.app(Which::Data).truncate(mark)?;
            return Ok(ft);
        }
        let trailer = RepTrailer {
            version: SVNDIFF_VERSION,
            first_window: first,
            windows: count,
            base: 0,
            chain: 0,
            size,
            md5,
            sha1: sha,
        };
        let mut p = Vec::new();
        trailer.encode(&mut p);
        let rep = self.write_record(TAG_REP, &p)?;
        self.remember_text(rep, size, md5, sha)
    }

    fn remember_text(&mut self, rep: Offset, size: u64, md5: Md5, sha: Sha1) -> Result<FileText> {
        let ft = FileText {
            rep: TextId::from_raw(rep),
            size,
            md5,
            sha1: sha,
        };
        self.dedup_text.insert(sha, ft);
        self.added_text.push(sha);
        self.add_dedup(1, sha.0, md5.0, size, rep)?;
        Ok(ft)
    }

    /// Windows for `text`: a delta against `base` when that is usable and smaller.
    fn delta_against(&mut self, text: &[u8], base: Offset) -> Result<(Vec<Window>, Offset, u64)> {
        let fulltext = || {
            text.chunks(WINDOW_SIZE)
                .map(Window::fulltext)
                .collect::<Vec<_>>()
        };
        if base == 0 {
            return Ok((fulltext(), 0, 0));
        }
        let t = self.view()?.rep_trailer(base)?;
        if t.chain + 1 > MAX_CHAIN || t.size as usize > DELTA_MAX {
            return Ok((fulltext(), 0, 0));
        }
        let source = self.fulltext(TextId::from_raw(base))?;
        let windows = delta_windows(&source, text);
        let new_bytes: usize = windows.iter().map(|w| w.new_data.len()).sum();
        if new_bytes >= text.len() {
            return Ok((fulltext(), 0, 0));
        }
        Ok((windows, base, t.chain + 1))
    }

    fn write_window(&mut self, w: &Window) -> Result<Offset> {
        let mut enc = Vec::with_capacity(w.new_data.len() / 2 + 32);
        w.encode(SVNDIFF_VERSION, ZLIB_LEVEL, &mut enc)
            .map_err(|e| StoreError::BadDelta {
                path: String::new(),
                reason: e.to_string(),
            })?;
        self.write_record(TAG_WINDOW, &enc)
    }

    fn write_rep(
        &mut self,
        windows: &[Window],
        base: Offset,
        chain: u64,
        size: u64,
        md5: Md5,
        sha1: Sha1,
    ) -> Result<Offset> {
        let mut first = 0;
        for (i, w) in windows.iter().enumerate() {
            let off = self.write_window(w)?;
            if i == 0 {
                first = off;
            }
        }
        let trailer = RepTrailer {
            version: SVNDIFF_VERSION,
            first_window: first,
            windows: windows.len() as u64,
            base,
            chain,
            size,
            md5,
            sha1,
        };
        let mut p = Vec::new();
        trailer.encode(&mut p);
        self.write_record(TAG_REP, &p)
    }

    /// Appends the revision's metadata and its `revs` record; the revision exists for this
    /// writer at once and for readers after the next `sync`.
    pub(crate) fn finish_revision(&mut self, root: NodeRevId, meta: &RevMeta) -> Result<Revnum> {
        let root = root.raw();
        let rev = self.youngest + 1;
        let mut p = Vec::new();
        meta.encode(&mut p);
        let mut framed = Vec::with_capacity(p.len() + 9);
        frame(TAG_REVISION, &p, &mut framed);
        let meta_offset = self.app(Which::Meta).append(&framed)?;
        let rec = RevRecord {
            root,
            meta_offset,
            meta_len: framed.len() as u32,
            next_node_id: self.next_node_id,
            next_copy_id: self.next_copy_id,
        };
        self.app(Which::Revs).append(&rec.encode())?;
        self.youngest = rev;
        Ok(rev)
    }

    /// Replaces the revision properties of `rev` (appends a new META record and points the
    /// overlay at it). Durable and visible after the next `sync`.
    pub fn set_revprops(&mut self, rev: Revnum, revprops: PropList) -> Result<()> {
        self.usable()?;
        let mut meta = Arc::unwrap_or_clone(self.view()?.rev_meta(rev)?);
        meta.revprops = revprops;
        let mut p = Vec::new();
        meta.encode(&mut p);
        let mut framed = Vec::with_capacity(p.len() + 9);
        frame(TAG_REVISION, &p, &mut framed);
        let off = self.app(Which::Meta).append(&framed)?;
        let mut rec = Vec::with_capacity(REVPROPS_RECORD as usize);
        rec.extend_from_slice(&rev.to_le_bytes());
        rec.extend_from_slice(&off.to_le_bytes());
        rec.extend_from_slice(&(framed.len() as u32).to_le_bytes());
        let crc = crc32fast::hash(&rec);
        rec.extend_from_slice(&crc.to_le_bytes());
        self.app(Which::Revprops).append(&rec)?;
        Ok(())
    }

    /// Replaces the repository UUID (atomically).
    pub fn set_uuid(&mut self, uuid: &str) -> Result<()> {
        if !crate::uuid::is_uuid(uuid) {
            return Err(StoreError::BadUuid(uuid.to_string()));
        }
        let line = crate::uuid::render_uuid(uuid);
        files::write_atomically_with(&*self.io, self.repo.db_path(), "uuid", line.as_bytes())
    }

    pub fn repo(&self) -> &Repo {
        &self.repo
    }

    /// Replaces the repository's lock table with `locks` (`db/locks`, whole: temporary
    /// file, fsync, rename, fsync of `db/`), serialized with commits by the write lock this
    /// writer holds. `reader`, a handle of the same repository (the one the caller read the
    /// table through), and this writer's own view learn the new table at once, whatever
    /// the file's version looks like (an inode freed by an earlier write may come back
    /// within the clock's tick).
    pub fn set_locks(&mut self, locks: BTreeMap<String, Lock>, reader: &Repo) -> Result<()> {
        if self.lock_file.is_none() {
            return Err(StoreError::Conflict(
                "a staging writer does not hold the write lock to change locks".into(),
            ));
        }
        if !reader.same_files(&self.repo) {
            return Err(StoreError::Conflict(format!(
                "the lock table of {} changed through a writer of {}",
                reader.path().display(),
                self.repo.path().display()
            )));
        }
        let db = self.repo.db_path().to_path_buf();
        crate::locks::write(&*self.io, &db, &locks)?;
        let table = Arc::new(LockTable::new(locks));
        self.repo.locks_written(table.clone())?;
        reader.locks_written(table)
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        if let Some(dir) = self.staged.take() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// Transaction names are made by the server; refuse anything that could leave `db/txns`.
fn check_txn_name(name: &str) -> Result<()> {
    if crate::repo::valid_txn_name(name) {
        Ok(())
    } else {
        Err(StoreError::NoSuchTxn(name.to_string()))
    }
}

/// Creates the `db/` of a new repository with revision 0 (an empty root directory).
pub fn create_db(path: &Path, uuid: &str, r0_props: &PropList) -> Result<()> {
    if !crate::uuid::is_uuid(uuid) {
        return Err(StoreError::BadUuid(uuid.to_string()));
    }
    let db = path.join("db");
    // db/txns from the start, as FSFS has it (hotcopies and tools that compare trees
    // expect it in the source too).
    let txns = db.join("txns");
    std::fs::create_dir_all(&txns).map_err(io_err(format!("creating {}", txns.display())))?;
    let mut data = files::DATA_HEADER.to_vec();
    let root = NodeRev::empty_root();
    let mut p = Vec::new();
    root.encode(&mut p);
    let root_off = data.len() as u64;
    frame(TAG_NODE, &p, &mut data);
    let mut meta = files::META_HEADER.to_vec();
    let mut m = Vec::new();
    RevMeta::new(r0_props.clone(), Vec::new()).encode(&mut m);
    let meta_off = meta.len() as u64;
    frame(TAG_REVISION, &m, &mut meta);
    let rec = RevRecord {
        root: root_off,
        meta_offset: meta_off,
        meta_len: (meta.len() as u64 - meta_off) as u32,
        next_node_id: 1,
        next_copy_id: 1,
    };
    let mut revs = files::REVS_HEADER.to_vec();
    revs.extend_from_slice(&rec.encode());
    let contents: [(Which, Vec<u8>); 5] = [
        (Which::Data, data),
        (Which::Revs, revs),
        (Which::Meta, meta),
        (Which::Dedup, files::DEDUP_HEADER.to_vec()),
        (Which::Revprops, files::REVPROPS_HEADER.to_vec()),
    ];
    let mut lens = [0u64; 5];
    for (w, bytes) in contents {
        lens[w as usize] = bytes.len() as u64;
        files::write_atomically(&db, w.name(), &bytes)?;
    }
    files::write_atomically(&db, "uuid", crate::uuid::render_uuid(uuid).as_bytes())?;
    files::write_current(&db, &Current { youngest: 0, lens })?;
    // The format file last: its presence says the repository is complete.
    files::write_atomically(&db, "format", crate::repo::FORMAT.as_bytes())
}

/// The local engine's writer as the storage seam's (every method the one above; a reader
/// given to `set_locks` must be this engine's `Repo`).
impl svelto_fs::WriteRepo for Writer {
    fn youngest(&self) -> Revnum {
        Writer::youngest(self)
    }
    fn published(&self) -> Revnum {
        Writer::published(self)
    }
    fn view(&mut self) -> Result<&dyn svelto_fs::ReadRepo> {
        Ok(Writer::view(self)?)
    }
    fn begin(&mut self) -> Result<Box<dyn svelto_fs::WriteTxn + '_>> {
        Ok(Box::new(crate::txn::Txn::begin(self)?))
    }
    fn sync(&mut self) -> Result<Revnum> {
        Writer::sync(self)
    }
    fn discard_unpublished(&mut self) -> Result<()> {
        Writer::discard_unpublished(self)
    }
    fn unlock(&mut self) -> Result<()> {
        Writer::unlock(self)
    }
    fn relock(&mut self) -> Result<bool> {
        Writer::relock(self)
    }
    fn expose_txn(&mut self, name: &str) -> Result<()> {
        Writer::expose_txn(self, name)
    }
    fn forget_txn(&self, name: &str) {
        Writer::forget_txn(self, name)
    }
    fn set_revprops(&mut self, rev: Revnum, revprops: PropList) -> Result<()> {
        Writer::set_revprops(self, rev, revprops)
    }
    fn set_uuid(&mut self, uuid: &str) -> Result<()> {
        Writer::set_uuid(self, uuid)
    }
    fn set_locks(
        &mut self,
        locks: BTreeMap<String, Lock>,
        reader: &dyn svelto_fs::ReadRepo,
    ) -> Result<()> {
        let Some(reader) = reader.as_any().downcast_ref::<Repo>() else {
            return Err(StoreError::Conflict(format!(
                "the lock table of {} changed through a handle of another backend",
                self.repo.path().display()
            )));
        };
        Writer::set_locks(self, locks, reader)
    }
}
