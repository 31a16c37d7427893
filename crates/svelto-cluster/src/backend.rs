//! The cluster as a backend of the storage seam (docs/cluster.md, "What is built"): the
//! local engine's formats with another byte source and commit point.
//!
//! A front end's cache directory *is* a local repository (svelto-store's files): its five
//! files are the concatenation of the published segments, and its `db/current` names the
//! newest head this front end has caught up with. [`ClusterRepo`] reads through the local
//! engine's reader (a warm read is a local read, no extra copy or dynamic call), and its
//! `refresh` is the fence: a linearizable read of the head, then the segments it names
//! that the cache lacks, appended and made current. [`ClusterWriter`] holds the etcd
//! writer lease and builds revisions with the local engine's writer in the cache; its
//! `sync` sends the bytes the commit appended as one segment and publishes it by the
//! conditioned etcd transaction, and only then writes the cache's `db/current`.

use std::fs::{File, OpenOptions};
use std::io::Read;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use std::collections::BTreeMap;

use svelto_core::{Env, ListingId, Lock, NodeRevId, PropList, PropsId, Revnum, TextId};
use svelto_fs::{
    DirEntry, FileText, ListedDir, LockTable, NodeRev, ReadRepo, RevInfo, RevMeta, StoreError,
    Stored, WriteRepo, WriteTxn,
};
use svelto_store::{Current, Repo, Writer};

use crate::head::{CommitId, Head, PARTS};
use crate::objects::Segment;
use crate::post_commit::{PostCommitRecord, PostCommits};
use crate::repo::{
    Campaign, HeadVersion, LeaseClock, LockKeyOp, Publish, Repository, WantedHook, WriterLease,
};
use crate::{Cluster, ClusterError};

type Result<T> = std::result::Result<T, StoreError>;

/// How long the fence (a refresh's linearizable head read) tries again before it answers
/// that etcd is unavailable (docs/cluster.md, "Failure behaviour": `fence_timeout`).
const FENCE_TIMEOUT: Duration = Duration::from_secs(1);

/// A cluster error as the seam's: components down or slow are `Unavailable`, the rest
/// corruption or a conflict, each naming what failed.
fn store_error(e: ClusterError) -> StoreError {
    match e {
        e if e.is_unavailable() => StoreError::Unavailable {
            what: "the cluster".into(),
            reason: e.to_string(),
        },
        e @ ClusterError::Corrupt { .. } => StoreError::Corrupt {
            file: "cluster",
            offset: 0,
            what: svelto_fs::Corruption::new(e.to_string()),
        },
        ClusterError::Local { what, source } => io_error(what)(source),
        e => StoreError::Conflict(e.to_string()),
    }
}

fn io_error(context: String) -> impl FnOnce(std::io::Error) -> StoreError {
    move |err| StoreError::Io { context, err }
}

/// An etcd read `read`, tried again on unavailability until FENCE_TIMEOUT: a member that
/// just came back refuses connections for a moment, and after every member was down the
/// client's connection to one of them may stay refused for seconds (seen: `tcp connect
/// error` 7 s after all three were back), while the next attempt goes to another member.
/// Only for reads (safe to repeat).
pub(crate) fn read_tried_again<T>(
    read: impl Fn() -> std::result::Result<T, ClusterError>,
) -> std::result::Result<T, ClusterError> {
    let started = Instant::now();
    loop {
        match read() {
            Ok(value) => return Ok(value),
            Err(e) if e.is_unavailable() && started.elapsed() < FENCE_TIMEOUT => {
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(e) => return Err(e),
        }
    }
}

/// A linearizable read of `repository`'s head, tried again ([`read_tried_again`]).
fn head_tried_again(repository: &Repository) -> std::result::Result<HeadVersion, ClusterError> {
    read_tried_again(|| repository.head())
}

/// A commit id from one of the environment's fresh UUIDs (the library makes no ids).
fn commit_id(env: &dyn Env) -> CommitId {
    let hex: Vec<u8> = env.uuid().bytes().filter(u8::is_ascii_hexdigit).collect();
    let mut id = [0u8; 16];
    for (i, pair) in hex.chunks(2).take(16).enumerate() {
        let text = std::str::from_utf8(pair).unwrap_or("0");
        id[i] = u8::from_str_radix(text, 16).unwrap_or(0);
    }
    CommitId(id)
}

/// The five files' bytes `from..to` of the local repository's `db/` (one segment).
fn read_parts(db: &Path, from: &Current, to: &Current) -> Result<Segment> {
    let mut segment = Segment::default();
    for (i, name) in PARTS.iter().enumerate() {
        let (start, end) = (from.lens[i], to.lens[i]);
        if end < start {
            return Err(StoreError::Conflict(format!(
                "db/{name} shrank from {start} to {end} bytes under the writer"
            )));
        }
        let path = db.join(name);
        let file = File::open(&path).map_err(io_error(format!("opening {}", path.display())))?;
        let mut bytes = vec![0u8; (end - start) as usize];
        file.read_exact_at(&mut bytes, start)
            .map_err(io_error(format!("reading {}", path.display())))?;
        segment.parts[i] = bytes;
    }
    Ok(segment)
}

/// The five files' bytes `from..to` of the local repository's `db/` as a segment's parts,
/// read from the files as they are written to the object store (a large revision is
/// never whole in memory).
struct FileParts {
    files: Vec<(File, PathBuf)>,
    start: [u64; 5],
    lengths: [u64; 5],
}

impl FileParts {
    fn open(db: &Path, from: &Current, to: &Current) -> Result<FileParts> {
        let mut files = Vec::with_capacity(PARTS.len());
        let mut lengths = [0u64; 5];
        for (i, name) in PARTS.iter().enumerate() {
            let (start, end) = (from.lens[i], to.lens[i]);
            if end < start {
                return Err(StoreError::Conflict(format!(
                    "db/{name} shrank from {start} to {end} bytes under the writer"
                )));
            }
            lengths[i] = end - start;
            let path = db.join(name);
            let file =
                File::open(&path).map_err(io_error(format!("opening {}", path.display())))?;
            files.push((file, path));
        }
        Ok(FileParts {
            files,
            start: from.lens,
            lengths,
        })
    }
}

impl crate::PartSource for FileParts {
    fn lengths(&self) -> [u64; 5] {
        self.lengths
    }
    fn read_part(&self, part: usize, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        if offset + buf.len() as u64 > self.lengths[part] {
            return Err(std::io::Error::from(std::io::ErrorKind::UnexpectedEof));
        }
        self.files[part]
            .0
            .read_exact_at(buf, self.start[part] + offset)
    }
    fn describe(&self, part: usize) -> String {
        format!(
            "{} (from byte {})",
            self.files[part].1.display(),
            self.start[part]
        )
    }
}

/// Replaces `db/current` atomically and durably.
fn write_current(db: &Path, cur: &Current) -> Result<()> {
    let (tmp, dst) = (db.join("current.cluster.tmp"), db.join("current"));
    let write = || -> std::io::Result<()> {
        let mut f = File::create(&tmp)?;
        std::io::Write::write_all(&mut f, cur.render().as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, &dst)?;
        File::open(db)?.sync_all()
    };
    write().map_err(io_error(format!("writing {}", dst.display())))
}

/// Where in the cache's files a youngest revision's segment lies: the cache's record of
/// which segment of that revision it holds, since a revision property change replaces the
/// youngest revision's segment by a longer one (docs/formats/cluster.md, "The cache").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct TailRecord {
    revision: u64,
    commit: CommitId,
    start: [u64; 5],
    end: [u64; 5],
}

/// The file in the cache's `db/` holding the last few [`TailRecord`]s, one a line.
const TAIL_RECORDS: &str = "cluster-youngest";
/// How many lines it keeps.
const TAIL_RECORDS_KEPT: usize = 8;

impl TailRecord {
    fn render(&self) -> String {
        let nums: Vec<String> = self
            .start
            .iter()
            .chain(self.end.iter())
            .map(u64::to_string)
            .collect();
        format!(
            "{} {} {}\n",
            self.revision,
            self.commit.hex(),
            nums.join(" ")
        )
    }

    fn parse(line: &str) -> Option<TailRecord> {
        let mut words = line.split_ascii_whitespace();
        let revision = words.next()?.parse().ok()?;
        let hex = words.next()?;
        if hex.len() != 32 {
            return None;
        }
        let mut commit = [0u8; 16];
        for (i, byte) in commit.iter_mut().enumerate() {
            *byte = u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok()?;
        }
        let mut nums = [0u64; 10];
        for n in &mut nums {
            *n = words.next()?.parse().ok()?;
        }
        if words.next().is_some() {
            return None;
        }
        let (mut start, mut end) = ([0u64; 5], [0u64; 5]);
        start.copy_from_slice(&nums[..5]);
        end.copy_from_slice(&nums[5..]);
        Some(TailRecord {
            revision,
            commit: CommitId(commit),
            start,
            end,
        })
    }

    /// The record of the segment whose end is `cur` (the cache's `db/current`), if any.
    fn find(db: &Path, cur: &Current) -> Option<TailRecord> {
        let text = std::fs::read_to_string(db.join(TAIL_RECORDS)).ok()?;
        text.lines()
            .rev()
            .filter_map(TailRecord::parse)
            .find(|r| r.revision == cur.youngest && r.end == cur.lens)
    }

    /// Adds this record (keeping the last few), durably, before `db/current` names it.
    fn write(&self, db: &Path) -> Result<()> {
        let path = db.join(TAIL_RECORDS);
        let old = std::fs::read_to_string(&path).unwrap_or_default();
        let mut lines: Vec<&str> = old.lines().collect();
        let skip = lines.len().saturating_sub(TAIL_RECORDS_KEPT - 1);
        lines.drain(..skip);
        let mut text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        text.push_str(&self.render());
        let tmp = db.join(format!("{TAIL_RECORDS}.tmp"));
        let write = || -> std::io::Result<()> {
            let mut f = File::create(&tmp)?;
            std::io::Write::write_all(&mut f, text.as_bytes())?;
            f.sync_all()?;
            std::fs::rename(&tmp, &path)
        };
        write().map_err(io_error(format!("writing {}", path.display())))
    }
}

/// One repository of the cluster read through a front end's cache directory.
#[derive(Clone)]
pub struct ClusterRepo {
    repository: Repository,
    local: Repo,
    dir: PathBuf,
    /// Serializes this process's catch-ups of the cache.
    catching_up: Arc<Mutex<()>>,
    /// The lock table last read from etcd and the head's lock-change field it was read
    /// with (None: not read yet).
    locks: Arc<Mutex<(Option<u64>, Arc<LockTable>)>>,
    /// The front end's own directory of this repository (its `conf/` and `hooks/`).
    local_dir: Option<PathBuf>,
    /// When set, a fence that cannot reach etcd serves reads at the cached head.
    unfenced: Option<Arc<Unfenced>>,
    /// The front end's log (lease hand-overs of this repository's writers).
    log: Option<LogSink>,
    /// The lease of this process's writer of the repository while its cache holds every
    /// revision published (set by the writer when its head is checked, cleared before it
    /// publishes, releases or resigns): while it surely holds, nobody else can publish,
    /// and the fence is answered from the cache without asking etcd.
    lease_read: Arc<Mutex<Option<LeaseRead>>>,
    /// The id of the lease under which the kept lock table was read from etcd (0: none).
    /// While that lease surely holds, only this front end's writer can change the table
    /// (lock changes are conditioned on its election key), and it updates the kept copy:
    /// lock reads are answered from it.
    locks_read_under: Arc<std::sync::atomic::AtomicI64>,
    /// When this process last gave the writer lease to a front end that asked for it: its
    /// own next campaign waits [`HAND_OVER_GRACE`] from then, so that the asker (woken by
    /// its watch) wins the election instead of this process's next queued commit.
    handed_over_at: Arc<Mutex<Option<Instant>>>,
    /// The front end's post-commit records (docs/cluster.md, "Hooks"): what a commit
    /// records for its hook, and the deletion once it ran. None: a commit records
    /// itself with no member lease (claimable after the grace).
    post_commits: Option<Arc<PostCommits>>,
}

/// How long a front end that handed the writer lease over leaves the election to the
/// front end that asked: without it, under a steady stream of commits, the giver's next
/// commit (already waiting, in-process) won nearly every race against the asker's
/// watch-woken campaign, and the asker gave up after its wait ("asked to give it back:
/// it did not").
const HAND_OVER_GRACE: Duration = Duration::from_millis(200);

/// The writer's lease as the reader uses it.
struct LeaseRead {
    clock: LeaseClock,
}

/// A sink for the front end's log lines.
pub type LogSink = Arc<dyn Fn(&str) + Send + Sync>;

/// Reads served at the cached head while etcd cannot answer the fence (docs/cluster.md,
/// "Failure behaviour": the etcd majority lost).
pub(crate) struct Unfenced {
    log: LogSink,
    /// Until when fences are not tried again after one failed (each costs a request
    /// timeout while etcd has no majority), and since when reads are unfenced.
    down: Mutex<Option<(Instant, Instant)>>,
}

/// How long reads go on unfenced after a fence failed before the next command tries
/// etcd again.
const UNFENCED_FOR: Duration = Duration::from_secs(1);

impl ClusterRepo {
    /// Creates repository `name` in the cluster with `uuid` and revision 0 (its
    /// properties `r0_props`) published by `writer`, then opens it with `cache_dir`.
    pub fn create(
        cluster: &Cluster,
        name: &str,
        cache_dir: &Path,
        uuid: &str,
        r0_props: &PropList,
        writer: &str,
        env: &dyn Env,
    ) -> Result<ClusterRepo> {
        let scratch = cache_dir.with_extension("create.tmp");
        let _ = std::fs::remove_dir_all(&scratch);
        svelto_store::create_db(&scratch, uuid, r0_props)?;
        let mut lens = [0u64; 5];
        for (i, part) in PARTS.iter().enumerate() {
            let path = scratch.join("db").join(part);
            lens[i] = std::fs::metadata(&path)
                .map_err(io_error(format!("reading {}", path.display())))?
                .len();
        }
        let zero = Current { youngest: 0, lens };
        let segment = read_parts(
            &scratch.join("db"),
            &Current {
                youngest: 0,
                lens: [0; 5],
            },
            &zero,
        );
        let _ = std::fs::remove_dir_all(&scratch);
        let repository = cluster.repository(name);
        repository
            .create_with_uuid(writer, commit_id(env), &segment?, Some(uuid))
            .map_err(store_error)?;
        ClusterRepo::open(cluster, name, cache_dir)
    }

    /// Opens repository `name` of the cluster with `cache_dir` as this front end's cache
    /// (made from revision 0's segment when empty), caught up with the head.
    pub fn open(cluster: &Cluster, name: &str, cache_dir: &Path) -> Result<ClusterRepo> {
        let repository = cluster.repository(name);
        let head = head_tried_again(&repository).map_err(store_error)?;
        if !cache_dir.join("db").join("format").exists() {
            Self::seed(&repository, &head, cache_dir)?;
        }
        let local = Repo::open(cache_dir)?;
        let repo = ClusterRepo {
            repository,
            local,
            dir: cache_dir.to_path_buf(),
            catching_up: Arc::new(Mutex::new(())),
            locks: Arc::new(Mutex::new((None, Arc::default()))),
            local_dir: None,
            unfenced: None,
            log: None,
            lease_read: Arc::default(),
            locks_read_under: Arc::default(),
            handed_over_at: Arc::default(),
            post_commits: None,
        };
        repo.catch_up(&head)?;
        Ok(repo)
    }

    /// Gives the repository a directory on this front end holding its `conf/` and
    /// `hooks/` (what `ReadRepo::local_dir` answers: hooks run from there, with it as
    /// `REPOS`).
    pub fn with_local_dir(mut self, dir: &Path) -> ClusterRepo {
        self.local_dir = Some(dir.to_path_buf());
        self
    }

    /// Shares the front end's post-commit records (its id and member lease, the deletions
    /// to try again) with this handle and its writers.
    pub(crate) fn with_post_commits(mut self, post_commits: Arc<PostCommits>) -> ClusterRepo {
        self.post_commits = Some(post_commits);
        self
    }

    /// Sends the log lines of this repository's writers (the writer lease given back on
    /// another front end's request, taken over after asking for it) to `log`.
    pub fn with_log(mut self, log: LogSink) -> ClusterRepo {
        self.log = Some(log);
        self
    }

    /// Makes `refresh` serve reads at the cached head when etcd cannot answer the fence
    /// (its majority lost), saying so once in `log` (and once when it answers again),
    /// instead of failing. Without it `refresh` fails then.
    pub fn with_unfenced_reads(mut self, log: LogSink) -> ClusterRepo {
        self.unfenced = Some(Arc::new(Unfenced {
            log,
            down: Mutex::new(None),
        }));
        self
    }

    /// The fence: a linearizable read of the head (tried again until FENCE_TIMEOUT).
    fn fence(&self) -> std::result::Result<HeadVersion, ClusterError> {
        head_tried_again(&self.repository)
    }

    /// The lock table read from etcd now (a linearizable read: the head and the per-lock
    /// keys in one snapshot), kept with the head's lock-change field it was read with;
    /// also the per-lock keys' own table (what a lock change replaces).
    fn read_locks(&self) -> Result<(HeadVersion, Arc<LockTable>, BTreeMap<String, Lock>)> {
        let snapshot = self.repository.lock_snapshot().map_err(store_error)?;
        let mut keyed = BTreeMap::new();
        for (path, value) in &snapshot.keys {
            let bad = |offset, what| StoreError::Corrupt {
                file: "cluster lock key",
                offset,
                what,
            };
            let mut one = svelto_store::parse_lock_table(value).map_err(|(o, w)| bad(o, w))?;
            match one.remove(path) {
                Some(lock) if one.is_empty() => {
                    keyed.insert(path.clone(), lock);
                }
                _ => {
                    return Err(StoreError::Unavailable {
                        what: format!("the lock key {}{path}", self.repository.lock_key_prefix()),
                        reason: "its value is not one lock on its own path".into(),
                    })
                }
            }
        }
        let locks_revision = snapshot.head.head.locks_revision;
        let table = if locks_revision > 0 {
            keyed.clone()
        } else {
            match &snapshot.legacy {
                None => BTreeMap::new(),
                Some(bytes) => {
                    svelto_store::parse_lock_table(bytes).map_err(|(offset, what)| {
                        StoreError::Corrupt {
                            file: "cluster lock table",
                            offset,
                            what,
                        }
                    })?
                }
            }
        };
        let table = Arc::new(LockTable::new(table));
        let mut kept = self.locks.lock().unwrap_or_else(|e| e.into_inner());
        if kept.0.is_none_or(|at| at <= locks_revision) {
            *kept = (Some(locks_revision), table.clone());
        }
        Ok((snapshot.head, table, keyed))
    }

    /// Makes `cache_dir` a local repository holding revision 0's segment, written beside
    /// it and renamed into place (a process sharing the cache sees all of it or nothing).
    fn seed(repository: &Repository, head: &HeadVersion, cache_dir: &Path) -> Result<()> {
        let uuid = read_tried_again(|| repository.uuid())
            .map_err(store_error)?
            .ok_or_else(|| StoreError::Unavailable {
                what: format!("repository {} in the cluster", repository.name()),
                reason: "it has no UUID key (created without one)".into(),
            })?;
        let zero = repository.segment_of(&head.head, 0).map_err(store_error)?;
        let segment = repository.read_segment(zero).map_err(store_error)?;
        // A name of this call's own: two threads of one front end may seed at once (the
        // first requests after its start), and one's clean-up must not remove the other's.
        static SEEDS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = SEEDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let scratch = cache_dir.with_extension(format!("seed.{}.{n}.tmp", std::process::id()));
        let _ = std::fs::remove_dir_all(&scratch);
        svelto_store::create_db(&scratch, &uuid, &PropList::new())?;
        let db = scratch.join("db");
        for (i, part) in PARTS.iter().enumerate() {
            let path = db.join(part);
            std::fs::write(&path, &segment.parts[i])
                .map_err(io_error(format!("writing {}", path.display())))?;
        }
        TailRecord {
            revision: 0,
            commit: zero.commit,
            start: [0; 5],
            end: segment.lengths(),
        }
        .write(&db)?;
        write_current(
            &db,
            &Current {
                youngest: 0,
                lens: segment.lengths(),
            },
        )?;
        if let Some(parent) = cache_dir.parent() {
            std::fs::create_dir_all(parent)
                .map_err(io_error(format!("creating {}", parent.display())))?;
        }
        match std::fs::rename(&scratch, cache_dir) {
            Ok(()) => Ok(()),
            // Another process seeded it first: its copy holds the same bytes.
            Err(_) if cache_dir.join("db").join("format").exists() => {
                let _ = std::fs::remove_dir_all(&scratch);
                Ok(())
            }
            Err(e) => Err(io_error(format!(
                "renaming {} into place",
                scratch.display()
            ))(e)),
        }
    }

    /// The cluster handle of the repository.
    pub fn repository(&self) -> &Repository {
        &self.repository
    }

    /// The cache directory (a local repository's layout).
    pub fn cache_dir(&self) -> &Path {
        &self.dir
    }

    /// Brings the cache up to `head`: appends the segments of the revisions it lacks to
    /// the five files (after cutting off any tail a dead writer left past `db/current`),
    /// makes them durable, then replaces `db/current`. Holds the cache's write lock
    /// meanwhile, so a writer in the cache and a catch-up never interleave.
    fn catch_up(&self, head: &HeadVersion) -> Result<Revnum> {
        // At the head or past it: a younger revision, or the same one with lengths at least
        // the head's (a revision property change publishes lengths without a revision).
        // Past it when this process's writer published after the fence read `head`: the
        // cache's `db/current` only ever names published heads, so longer is newer.
        let at_head = |cur: &Current| {
            cur.youngest > head.head.youngest
                || (cur.youngest == head.head.youngest
                    && cur.lens.iter().zip(head.head.lengths).all(|(c, h)| *c >= h))
        };
        // This front end's writer may have published it into the cache already.
        if !at_head(&self.local.current()) {
            self.local.refresh()?;
        }
        if at_head(&self.local.current()) {
            return Ok(self.local.youngest());
        }
        let _serial = self.catching_up.lock().unwrap_or_else(|e| e.into_inner());
        let db = self.local.db_path().to_path_buf();
        let (lock, lock_path) = svelto_store::Writer::lock_file(&db)?;
        let waited = Instant::now();
        loop {
            match lock.try_lock() {
                Ok(()) => break,
                Err(std::fs::TryLockError::WouldBlock)
                    if waited.elapsed() < Duration::from_secs(5) =>
                {
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(std::fs::TryLockError::WouldBlock) => {
                    return Err(StoreError::Unavailable {
                        what: format!("the cache {}", self.dir.display()),
                        reason: format!(
                            "a writer has held its write lock for 5 s while r{} waits to be \
                             fetched",
                            head.head.youngest
                        ),
                    })
                }
                Err(std::fs::TryLockError::Error(e)) => {
                    return Err(io_error(format!("locking {}", lock_path.display()))(e))
                }
            }
        }
        self.local.refresh()?;
        let mut cur = self.local.current();
        if at_head(&cur) {
            return Ok(cur.youngest);
        }
        let mut files = Vec::with_capacity(PARTS.len());
        for (i, part) in PARTS.iter().enumerate() {
            let path = db.join(part);
            let f = OpenOptions::new()
                .write(true)
                .open(&path)
                .map_err(io_error(format!("opening {}", path.display())))?;
            f.set_len(cur.lens[i])
                .map_err(io_error(format!("truncating {}", path.display())))?;
            files.push((f, path));
        }
        // The head's tail names the newest segments; older ones are found through the
        // index objects, each read once for the whole chain.
        let first = cur.youngest + 1;
        let chain = match head.head.tail.first() {
            Some(oldest) if oldest.revision <= first => head.head.tail.clone(),
            _ => self.repository.chain(&head.head).map_err(store_error)?,
        };
        // The cache's youngest revision's segment may have been replaced since (revision
        // property changes): its new bytes past the cache's end come first.
        let mine = TailRecord::find(&db, &cur);
        let named = match (mine, chain.iter().find(|s| s.revision == cur.youngest)) {
            (None, _) => None,
            (Some(_), Some(named)) => Some(*named),
            (Some(_), None) => Some(
                self.repository
                    .segment_of(&head.head, cur.youngest)
                    .map_err(store_error)?,
            ),
        };
        if let (Some(mine), Some(named)) = (mine, named) {
            if named.commit != mine.commit {
                // Its bytes up to what the cache holds are the same (a replacing segment
                // begins with the one it replaces); only those past it are written.
                let header = {
                    let files = &files;
                    let (cur, start) = (&cur, mine.start);
                    let mut sink = |part: usize, offset: u64, bytes: &[u8]| {
                        let have = cur.lens[part] - start[part];
                        let end = offset + bytes.len() as u64;
                        if end <= have {
                            return Ok(());
                        }
                        let skip = have.saturating_sub(offset);
                        let (f, path) = &files[part];
                        f.write_all_at(&bytes[skip as usize..], start[part] + offset + skip)
                            .map_err(|source| ClusterError::Local {
                                what: format!("writing {}", path.display()),
                                source,
                            })
                    };
                    self.repository
                        .read_segment_into(named, &mut sink)
                        .map_err(store_error)?
                };
                for (i, length) in header.lengths.iter().enumerate() {
                    let have = cur.lens[i] - mine.start[i];
                    if *length < have {
                        return Err(StoreError::Corrupt {
                            file: "cluster segment",
                            offset: 0,
                            what: svelto_fs::Corruption::new(format!(
                                "r{}'s segment {} has {length} bytes of {}, fewer than the \
                                 {have} the cache {} holds of the segment it replaced",
                                named.revision,
                                named.commit,
                                PARTS[i],
                                self.dir.display()
                            )),
                        });
                    }
                    cur.lens[i] = mine.start[i] + length;
                }
            }
        }
        let mut last = None;
        if let (Some(mine), Some(named)) = (mine, named) {
            last = Some(TailRecord {
                revision: named.revision,
                commit: named.commit,
                start: mine.start,
                end: cur.lens,
            });
        }
        for rev in first..=head.head.youngest {
            let at = chain
                .iter()
                .find(|s| s.revision == rev)
                .copied()
                .ok_or_else(|| {
                    store_error(ClusterError::Corrupt {
                        what: "head chain",
                        key: self.repository.head_key().to_owned(),
                        detail: format!("no segment for r{rev}"),
                    })
                })?;
            let start = cur.lens;
            let header = {
                let files = &files;
                let mut sink = |part: usize, offset: u64, bytes: &[u8]| {
                    let (f, path) = &files[part];
                    f.write_all_at(bytes, start[part] + offset)
                        .map_err(|source| ClusterError::Local {
                            what: format!("writing {}", path.display()),
                            source,
                        })
                };
                self.repository
                    .read_segment_into(at, &mut sink)
                    .map_err(store_error)?
            };
            for (i, length) in header.lengths.iter().enumerate() {
                cur.lens[i] += length;
            }
            cur.youngest = rev;
            last = Some(TailRecord {
                revision: rev,
                commit: at.commit,
                start,
                end: cur.lens,
            });
        }
        if cur.lens != head.head.lengths {
            return Err(StoreError::Corrupt {
                file: "cluster head",
                offset: 0,
                what: svelto_fs::Corruption::new(format!(
                    "r{}'s head says the files are {:?} bytes long, its segments make {:?} \
                     (a cache made before revision property changes were published in the \
                     cluster cannot follow one: delete {} and it is rebuilt)",
                    head.head.youngest,
                    head.head.lengths,
                    cur.lens,
                    self.dir.display()
                )),
            });
        }
        for (f, path) in &files {
            f.sync_data()
                .map_err(io_error(format!("syncing {}", path.display())))?;
        }
        if let Some(last) = last {
            last.write(&db)?;
        }
        write_current(&db, &cur)?;
        drop(lock);
        self.local.refresh()
    }
}

impl ReadRepo for ClusterRepo {
    fn youngest(&self) -> Revnum {
        self.local.youngest()
    }
    /// The fence: a linearizable read of the head, then the cache caught up with it; or,
    /// while this process's writer surely holds the lease with the cache at the head it
    /// checked, the cache's head alone (no other front end can publish meanwhile).
    fn refresh(&self) -> Result<Revnum> {
        let surely_held = self
            .lease_read
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .is_some_and(|r| r.clock.surely_held());
        if surely_held {
            return self.local.refresh();
        }
        let Some(unfenced) = &self.unfenced else {
            let head = self.fence().map_err(store_error)?;
            return self.catch_up(&head);
        };
        {
            let down = unfenced.down.lock().unwrap_or_else(|e| e.into_inner());
            if let Some((until, _)) = *down {
                if Instant::now() < until {
                    return Ok(self.local.youngest());
                }
            }
        }
        match self.fence() {
            Ok(head) => {
                let was = unfenced
                    .down
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .take();
                if let Some((_, since)) = was {
                    (unfenced.log)(&format!(
                        "cluster: etcd answers the fence of {} again (reads were unfenced \
                         for {:.1} s)",
                        self.repository.name(),
                        since.elapsed().as_secs_f64()
                    ));
                }
                self.catch_up(&head)
            }
            Err(e) if e.is_unavailable() => {
                let mut down = unfenced.down.lock().unwrap_or_else(|e| e.into_inner());
                let now = Instant::now();
                let since = match *down {
                    Some((_, since)) => since,
                    None => {
                        (unfenced.log)(&format!(
                            "cluster: no fence for {}: {e}; reads are served unfenced at \
                             r{}, the newest head this front end has, and commits are \
                             refused until etcd answers",
                            self.repository.name(),
                            self.local.youngest()
                        ));
                        now
                    }
                };
                *down = Some((now + UNFENCED_FOR, since));
                Ok(self.local.youngest())
            }
            Err(e) => Err(store_error(e)),
        }
    }
    /// Deletes the revision's post-commit record (docs/cluster.md, "Hooks"), before the
    /// client is answered: a record left behind would be run again by another front end
    /// once this process is gone. One that cannot be deleted now is tried again at the
    /// front end's next scan.
    fn post_commit_ran(&self, rev: Revnum) {
        let log = |line: &str| {
            if let Some(log) = &self.log {
                log(line);
            }
        };
        match &self.post_commits {
            Some(post_commits) => post_commits.ran(&self.repository, rev, &log),
            None => {
                if let Err(e) = self.repository.forget_post_commit(rev) {
                    log(&format!(
                        "cluster: {}: r{rev}'s post-commit hook ran, but its key could not be \
                         deleted ({e})",
                        self.repository.name()
                    ));
                }
            }
        }
    }
    fn local_dir(&self) -> Option<&Path> {
        self.local_dir.as_deref()
    }
    fn uuid(&self) -> Result<String> {
        self.local.uuid()
    }
    fn env(&self) -> Arc<dyn Env> {
        self.local.env()
    }
    fn rev_info(&self, rev: Revnum) -> Result<RevInfo> {
        ReadRepo::rev_info(&self.local, rev)
    }
    fn rev_meta(&self, rev: Revnum) -> Result<Arc<RevMeta>> {
        ReadRepo::rev_meta(&self.local, rev)
    }
    fn node(&self, id: NodeRevId) -> Result<Arc<NodeRev>> {
        ReadRepo::node(&self.local, id)
    }
    fn listing(&self, id: ListingId) -> Result<Arc<Vec<DirEntry>>> {
        ReadRepo::listing(&self.local, id)
    }
    fn props_shared(&self, id: PropsId) -> Result<Arc<PropList>> {
        ReadRepo::props_shared(&self.local, id)
    }
    fn text(&self, id: TextId) -> Result<Arc<Vec<u8>>> {
        ReadRepo::text(&self.local, id)
    }
    fn text_reader(&self, text: &FileText) -> Result<Box<dyn Read + Send>> {
        ReadRepo::text_reader(&self.local, text)
    }
    /// The table as of this handle's last fence: the kept one while the head it read
    /// names the lock change the kept table was read at, else read again from etcd (the
    /// head and every per-lock key, one snapshot).
    fn locks(&self) -> Result<Arc<LockTable>> {
        // Under this front end's surely held lease, once read: the kept table (lock
        // changes are conditioned on the writer's election key, so only this front end's
        // writer can make them, and it updates the kept table).
        let lease = self
            .lease_read
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .filter(|r| r.clock.surely_held())
            .map(|r| r.clock.lease_id());
        let read_under = self
            .locks_read_under
            .load(std::sync::atomic::Ordering::SeqCst);
        if lease.is_some_and(|id| id == read_under) {
            return Ok(self
                .locks
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .1
                .clone());
        }
        if lease.is_none() {
            // A fence of its own: this handle is shared by every request of the front end,
            // and its last fence may be another request's, older than this one began (a
            // lock taken or released through another front end since would go unseen).
            // The head it reads says whether the kept table is current.
            let head = self.fence().map_err(store_error)?;
            let kept = self.locks.lock().unwrap_or_else(|e| e.into_inner());
            if kept.0 == Some(head.head.locks_revision) {
                return Ok(kept.1.clone());
            }
        }
        let (_, table, _) = self.read_locks()?;
        if let Some(id) = lease {
            // Read after the lease was surely held: every change by another front end
            // came before it.
            self.locks_read_under
                .store(id, std::sync::atomic::Ordering::SeqCst);
        }
        Ok(table)
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn stage(&self, name: &str) -> Result<Box<dyn WriteRepo>> {
        ReadRepo::stage(&self.local, name)
    }
    fn verify_storage(&self) -> Result<()> {
        ReadRepo::verify_storage(&self.local)
    }
    fn verify_records(&self) -> Result<()> {
        ReadRepo::verify_records(&self.local)
    }
    fn scratch_dir(&self) -> Option<PathBuf> {
        ReadRepo::scratch_dir(&self.local)
    }
    fn set_cache_limit(&self, bytes: usize) {
        ReadRepo::set_cache_limit(&self.local, bytes)
    }
    fn listed(&self, id: ListingId) -> Result<ListedDir> {
        ReadRepo::listed(&self.local, id)
    }
    fn stored_stream(&self, text: &FileText) -> Result<Option<Arc<Vec<u8>>>> {
        ReadRepo::stored_stream(&self.local, text)
    }
    fn stored_stream_or_text(&self, text: &FileText) -> Result<Stored> {
        ReadRepo::stored_stream_or_text(&self.local, text)
    }
    fn stored_delta(
        &self,
        text: &FileText,
        base: TextId,
    ) -> Result<Option<Vec<svelto_delta::Window>>> {
        ReadRepo::stored_delta(&self.local, text, base)
    }
    fn stored_delta_stream(
        &self,
        text: &FileText,
        base: TextId,
    ) -> Result<Option<(Arc<Vec<u8>>, usize)>> {
        ReadRepo::stored_delta_stream(&self.local, text, base)
    }
    fn text_over(
        &self,
        text: &FileText,
        base: TextId,
        base_text: &[u8],
    ) -> Result<Option<(Vec<svelto_delta::Window>, Vec<u8>)>> {
        ReadRepo::text_over(&self.local, text, base, base_text)
    }
    fn self_contained_bytes(&self, text: &FileText) -> Result<Option<u64>> {
        ReadRepo::self_contained_bytes(&self.local, text)
    }
    // The local engine's tuned versions of the provided methods (its caches, the
    // changed-path search, large texts streamed as windows): the trait's plain fallbacks
    // cost a front end up to a third more server CPU on an export than one machine.
    fn root(&self, rev: Revnum) -> Result<NodeRevId> {
        ReadRepo::root(&self.local, rev)
    }
    fn revprops(&self, rev: Revnum) -> Result<PropList> {
        ReadRepo::revprops(&self.local, rev)
    }
    fn dir(&self, node: &NodeRev) -> Result<Arc<Vec<DirEntry>>> {
        ReadRepo::dir(&self.local, node)
    }
    fn props(&self, node: &NodeRev) -> Result<PropList> {
        ReadRepo::props(&self.local, node)
    }
    fn read_text(&self, text: &FileText) -> Result<Arc<Vec<u8>>> {
        ReadRepo::read_text(&self.local, text)
    }
    fn write_text(&self, text: &FileText, out: &mut dyn std::io::Write) -> Result<()> {
        ReadRepo::write_text(&self.local, text, out)
    }
    fn child(&self, node: &NodeRev, name: &str) -> Result<Option<(NodeRevId, Arc<NodeRev>)>> {
        ReadRepo::child(&self.local, node, name)
    }
    fn lookup_from(
        &self,
        root: NodeRevId,
        path: &str,
    ) -> Result<Option<(NodeRevId, Arc<NodeRev>)>> {
        ReadRepo::lookup_from(&self.local, root, path)
    }
    fn lookup(&self, rev: Revnum, path: &str) -> Result<Option<(NodeRevId, Arc<NodeRev>)>> {
        ReadRepo::lookup(&self.local, rev, path)
    }
    fn node_at(&self, rev: Revnum, path: &str) -> Result<(NodeRevId, Arc<NodeRev>)> {
        ReadRepo::node_at(&self.local, rev, path)
    }
    fn changed_node(&self, rev: Revnum, path: &str) -> Result<Option<(NodeRevId, Arc<NodeRev>)>> {
        ReadRepo::changed_node(&self.local, rev, path)
    }
    fn history(&self, rev: Revnum, path: &str) -> Result<Vec<svelto_fs::HistoryEntry>> {
        ReadRepo::history(&self.local, rev, path)
    }
    fn related(&self, a: NodeRevId, b: NodeRevId) -> Result<bool> {
        ReadRepo::related(&self.local, a, b)
    }
    fn large_text_chunks(&self, text: &FileText) -> Result<Option<svelto_fs::TextChunks>> {
        ReadRepo::large_text_chunks(&self.local, text)
    }
}

/// Why a writer gives its lease back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Release {
    /// `writer-idle-ms` passed without a commit.
    Idle,
    /// Another front end asked for it (its `wanted` request), and no commit runs here.
    Asked,
    /// The front end shuts down (SIGTERM), after its running commits.
    Shutdown,
    /// The writer is dropped, or was never usable.
    Dropped,
}

/// A writer's lease and what may end it, shared by the writer, its idle-release timers,
/// the watch that hears another front end ask for the lease, and the front end's backend
/// (which resigns it at shutdown). Lock order: `state`, then `lease`.
pub(crate) struct Hold {
    /// The etcd lease (None once given back).
    lease: Mutex<Option<WriterLease>>,
    state: Mutex<HoldState>,
    reader: ClusterRepo,
    /// The writer id campaigned with.
    writer: String,
}

#[derive(Default)]
struct HoldState {
    /// A commit (or another write) runs: from `open` or `relock` to `unlock`. The lease is
    /// never given back on request meanwhile.
    busy: bool,
    /// Bumped by each `unlock`, `relock` and release: an idle-release timer acts only on
    /// its own.
    epoch: u64,
    /// Who asked for the lease while a commit ran: it goes back at `unlock`.
    wanted_by: Option<String>,
    /// The last release was on request: the asking front end has likely published since,
    /// so `relock` opens a fresh writer (which catches up) instead of campaigning.
    handed_over: bool,
}

impl Hold {
    fn new(reader: &ClusterRepo, writer: &str) -> Arc<Hold> {
        Arc::new(Hold {
            lease: Mutex::new(None),
            state: Mutex::new(HoldState {
                busy: true,
                ..HoldState::default()
            }),
            reader: reader.clone(),
            writer: writer.to_owned(),
        })
    }

    fn log(&self, line: &str) {
        if let Some(log) = &self.reader.log {
            log(line);
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, HoldState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn lease(&self) -> std::sync::MutexGuard<'_, Option<WriterLease>> {
        self.lease.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Gives the lease back if held: the reader fences through etcd again first, then the
    /// lease is revoked (its election key goes at once). True when a lease was held. The
    /// caller holds `state` (so that no commit starts meanwhile) except at shutdown.
    fn release(&self, why: Release, asked_by: &str) -> bool {
        let Some(lease) = self.lease().take() else {
            return false;
        };
        ClusterWriter::stop_lease_reads(&self.reader);
        let name = self.reader.repository.name();
        let started = Instant::now();
        let revoked = match why {
            Release::Asked => lease.hand_over(),
            _ => lease.resign(),
        };
        let took = started.elapsed().as_secs_f64() * 1000.0;
        match (why, revoked) {
            (Release::Asked, Ok(())) => {
                *self
                    .reader
                    .handed_over_at
                    .lock()
                    .unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
                self.log(&format!(
                    "cluster: {name}: writer lease given back to front end '{}', which asked for \
                 it (revoked in {took:.1} ms)",
                    if asked_by.is_empty() { "?" } else { asked_by }
                ))
            }
            (Release::Shutdown, Ok(())) => self.log(&format!(
                "cluster: {name}: writer lease resigned at shutdown (revoked in {took:.1} ms)"
            )),
            (Release::Idle | Release::Dropped, Ok(())) => {}
            (why, Err(e)) => self.log(&format!(
                "cluster: {name}: the writer lease could not be revoked ({why:?}): {e}; it \
                 ends after its TTL"
            )),
        }
        true
    }

    /// Resigns the lease at the front end's shutdown (after the drain: a commit still
    /// running past it loses the lease, its publication refused). True when one was held.
    pub(crate) fn shut_down(&self) -> bool {
        let mut state = self.state();
        state.epoch += 1;
        self.release(Release::Shutdown, "")
    }

    /// Another front end (`by`) asked for lease `lease_id`: given back now if no commit
    /// runs, else at the commit's `unlock`. A request for an earlier lease of this writer
    /// is ignored.
    fn asked(&self, lease_id: i64, by: &str) {
        let mut state = self.state();
        if self.lease().as_ref().map(WriterLease::lease_id) != Some(lease_id) {
            return;
        }
        if state.busy {
            state.wanted_by = Some(by.to_owned());
            return;
        }
        state.epoch += 1;
        state.handed_over = true;
        self.release(Release::Asked, by);
    }

    /// Campaigns until this writer holds the lease, for at most `wait`. While another
    /// front end holds it, asks it once per lease of its for the lease back
    /// ([`Repository::ask`]), then waits for its election key to go (a watch) before
    /// campaigning again.
    fn campaign(self: &Arc<Self>, wait: Duration) -> Result<WriterLease> {
        let repository = &self.reader.repository;
        let weak = Arc::downgrade(self);
        let hook: WantedHook = Arc::new(move |lease, by| {
            if let Some(hold) = weak.upgrade() {
                hold.asked(lease, by);
            }
        });
        let handed_over_at = *self
            .reader
            .handed_over_at
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(at) = handed_over_at {
            let left = HAND_OVER_GRACE.saturating_sub(at.elapsed());
            if !left.is_zero() {
                std::thread::sleep(left);
            }
        }
        let started = Instant::now();
        // The holder's election asked for, its id, and when it was first asked.
        let mut asked: Option<(i64, String, Instant)> = None;
        loop {
            let campaign = repository
                .campaign_as(&self.writer, Some(hook.clone()))
                .map_err(store_error)?;
            let (holder, election, seen_at) = match campaign {
                Campaign::Won(lease) => {
                    if let Some((_, holder, at)) = asked {
                        self.log(&format!(
                            "cluster: {}: writer lease taken over from front end '{holder}' \
                             {:.1} ms after asking for it",
                            repository.name(),
                            at.elapsed().as_secs_f64() * 1000.0
                        ));
                    }
                    return Ok(lease);
                }
                Campaign::Held {
                    holder,
                    election,
                    seen_at,
                } => (holder, election, seen_at),
            };
            let waited = started.elapsed();
            if waited >= wait {
                return Err(StoreError::Unavailable {
                    what: format!("the writer lease of {}", repository.name()),
                    reason: format!(
                        "front end '{holder}' held it for {wait:?}{}",
                        if asked.is_some() {
                            " (asked to give it back: it did not)"
                        } else {
                            ""
                        }
                    ),
                });
            }
            if election == 0 {
                // The key went between the campaign's compare and its read: at once.
                continue;
            }
            if asked.as_ref().map(|a| a.0) != Some(election) {
                // A put of the same value: tried again like a read when a member is not
                // reachable yet (after etcd's return the client's channel to a member may
                // still be down while the others answer).
                read_tried_again(|| repository.ask(&self.writer)).map_err(store_error)?;
                let first = asked.map_or_else(Instant::now, |a| a.2);
                asked = Some((election, holder, first));
            }
            let watching = Instant::now();
            let vacant =
                repository.wait_vacant(seen_at, (wait - waited).min(Duration::from_secs(1)));
            if !vacant && watching.elapsed() < Duration::from_millis(50) {
                // The watch failed at once: not a busy loop of campaigns.
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }
}

/// The writer of one repository of the cluster on this front end: holds the etcd writer
/// lease for as long as it lives, builds revisions with the local engine's writer in the
/// cache, and publishes each by the head's conditioned transaction. A publication refused
/// (another front end published: `Moved`; the lease ended: `LostLease`) or whose outcome
/// is unknown is never acknowledged; the writer is then stale (`relock` answers false).
pub struct ClusterWriter {
    reader: ClusterRepo,
    /// The etcd lease and what may end it (idle, another front end's request, shutdown).
    hold: Arc<Hold>,
    /// How long `open` and `relock` wait for the lease.
    wait: Duration,
    /// When set, `unlock` releases the lease after this long without `relock`.
    idle_release: Option<Duration>,
    /// The head the next publication is conditioned on.
    base: HeadVersion,
    /// The cache's file lengths at `base`.
    published_at: Current,
    inner: Writer,
    stale: Option<String>,
    /// Where each publication's round trips are logged (`log-timings = yes`), and the
    /// counters at the previous one.
    timings: Option<(LogSink, crate::Stats, Instant)>,
    /// The transaction name the next commit's post-commit hook runs as, when this
    /// process runs one: recorded with the publication (`record_post_commit`).
    post_commit: Option<String>,
}

impl ClusterWriter {
    /// Campaigns for the writer lease as `writer` (for at most `wait` while another front
    /// end holds it, asking it for the lease), catches the cache up with the head and
    /// opens the local writer. While the writer holds the lease it gives it back, between
    /// commits, to another front end that asks for it.
    pub fn open(reader: &ClusterRepo, writer: &str, wait: Duration) -> Result<ClusterWriter> {
        let repository = &reader.repository;
        let hold = Hold::new(reader, writer);
        let lease = hold.campaign(wait)?;
        *hold.lease() = Some(lease);
        let prepared = (|| {
            let base = head_tried_again(repository).map_err(store_error)?;
            reader.catch_up(&base)?;
            let inner = Writer::open(&reader.dir)?;
            let published_at = inner.repo().current();
            if published_at.youngest != base.head.youngest || published_at.lens != base.head.lengths
            {
                return Err(StoreError::Conflict(format!(
                    "the cache {} is at r{} but the head at r{}",
                    reader.dir.display(),
                    published_at.youngest,
                    base.head.youngest
                )));
            }
            Ok((base, inner, published_at))
        })();
        let (base, inner, published_at) = match prepared {
            Ok(prepared) => prepared,
            Err(e) => {
                // Not kept until its TTL by a writer that will not be used.
                hold.release(Release::Dropped, "");
                return Err(e);
            }
        };
        let writer = ClusterWriter {
            reader: reader.clone(),
            hold,
            wait,
            idle_release: None,
            base,
            published_at,
            inner,
            stale: None,
            timings: None,
            post_commit: None,
        };
        writer.allow_lease_reads();
        Ok(writer)
    }

    /// Logs to `log`, after each publication, the round trips made to etcd and the object
    /// store since the previous one (the fences and lock reads of the commit's request,
    /// a campaign, the PUT, the head's transaction) with their times.
    pub fn log_timings(&mut self, log: LogSink) {
        let now = self.reader.repository.stats();
        self.timings = Some((log, now, Instant::now()));
    }

    /// The head the next publication builds on.
    pub fn head(&self) -> &HeadVersion {
        &self.base
    }

    /// Makes `unlock` release the writer lease after `idle` without a `relock` (the
    /// design's `writer_idle`), so that another front end can write; `relock` then
    /// campaigns again and answers false if anyone published meanwhile.
    pub fn set_idle_release(&mut self, idle: Duration) {
        self.idle_release = Some(idle);
    }

    /// Whether this writer holds the lease now.
    pub fn holds_lease(&self) -> bool {
        self.hold.lease().as_ref().is_some_and(WriterLease::is_held)
    }

    /// A handle on the writer's lease for the front end's backend (which resigns the
    /// leases still held at shutdown).
    pub(crate) fn hold(&self) -> std::sync::Weak<Hold> {
        Arc::downgrade(&self.hold)
    }

    /// The lease again after an idle release (campaigning for at most `wait`), and whether
    /// the head is still the one this writer built on. False at once after a release on
    /// another front end's request (it has likely published: a fresh writer catches up).
    fn lease_again(&mut self) -> Result<bool> {
        if let Some(lease) = self.hold.lease().as_ref() {
            // Held without a break since this writer's last publication (or its open): no
            // other front end can have published, since a publication is conditioned on
            // its own election key and the key is this lease's. So the head is still
            // `base`, and no read is needed. Were the lease lost unseen (its keep-alives
            // failing), the publication's compare refuses the commit and the writer goes
            // stale: never a wrong acknowledgement.
            return Ok(lease.is_held());
        }
        if std::mem::take(&mut self.hold.state().handed_over) {
            return Ok(false);
        }
        // Only this writer's thread campaigns for its hold (the server's slot serializes
        // commits), so the lease cannot have come back meanwhile.
        let lease = self.hold.campaign(self.wait)?;
        let lease_held = lease.is_held();
        *self.hold.lease() = Some(lease);
        let head = head_tried_again(&self.reader.repository).map_err(store_error)?;
        let fresh = lease_held && head.mod_revision == self.base.mod_revision;
        if fresh {
            self.allow_lease_reads();
        }
        Ok(fresh)
    }

    /// Lets the reader answer fences from the cache while the lease surely holds (the
    /// cache is at `base`, the head this writer checked or published).
    fn allow_lease_reads(&self) {
        let held = self.hold.lease();
        let clock = held.as_ref().map(WriterLease::clock);
        let mut read = self
            .reader
            .lease_read
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        *read = clock.map(|clock| LeaseRead { clock });
    }

    /// Makes the reader fence through etcd again (before anything that may end the lease
    /// or leave the cache behind the head).
    fn stop_lease_reads(reader: &ClusterRepo) {
        *reader.lease_read.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }

    /// Where the youngest revision's segment starts in the cache's files (the cache is
    /// at `base`): from the cache's record, else from the segment's header (one ranged
    /// GET).
    fn youngest_start(&self) -> Result<[u64; 5]> {
        let named = self.base.head.commit();
        if let Some(record) = TailRecord::find(self.reader.local.db_path(), &self.published_at)
            .filter(|r| r.commit == named)
        {
            return Ok(record.start);
        }
        let segment = crate::head::SegmentRef {
            revision: self.base.head.youngest,
            commit: named,
        };
        let header = self
            .reader
            .repository
            .segment_header(segment)
            .map_err(store_error)?;
        let mut start = [0u64; 5];
        for (i, s) in start.iter_mut().enumerate() {
            *s = self.published_at.lens[i]
                .checked_sub(header.lengths[i])
                .ok_or_else(|| StoreError::Corrupt {
                    file: "cluster segment",
                    offset: 0,
                    what: svelto_fs::Corruption::new(format!(
                        "r{}'s segment {named} has {} bytes of {}, more than the head's {}",
                        segment.revision, header.lengths[i], PARTS[i], self.published_at.lens[i]
                    )),
                })?;
        }
        Ok(start)
    }

    fn usable(&self) -> Result<()> {
        match &self.stale {
            Some(why) => Err(StoreError::Conflict(format!(
                "this cluster writer is stale ({why}): open a new one"
            ))),
            None => Ok(()),
        }
    }

    /// Publishes the one revision committed since the last publication.
    fn publish_pending(&mut self) -> Result<Revnum> {
        // Asked for the revision this call publishes, if any, and only for it.
        let post_commit = self.post_commit.take();
        self.usable()?;
        let (youngest, published) = (self.inner.youngest(), self.inner.published());
        if youngest != published && youngest != published + 1 {
            return Err(StoreError::Unsupported(format!(
                "publishing {} revisions at once (the cluster publishes each commit)",
                youngest - published
            )));
        }
        let now = self.inner.view()?.current();
        // A publication without a revision: revision property changes appended since.
        let replacing = youngest == published;
        if replacing && now.lens == self.published_at.lens {
            return Ok(published);
        }
        let db = self.reader.local.db_path().to_path_buf();
        let start = if replacing {
            self.youngest_start()?
        } else {
            self.published_at.lens
        };
        // Until this publication's outcome is known and the cache holds it.
        Self::stop_lease_reads(&self.reader);
        let reading = Instant::now();
        let from = Current {
            youngest: published,
            lens: start,
        };
        let segment = FileParts::open(&db, &from, &now)?;
        let read_took = reading.elapsed();
        let commit = commit_id(&*self.reader.local.env());
        let recorded = post_commit.is_some() && !replacing;
        // Announced before the transaction: the scan must not take the record for a gone
        // front end's while the answer is on its way (docs/cluster.md, "Hooks").
        let announced = match (recorded, &self.reader.post_commits) {
            (true, Some(post_commits)) => {
                post_commits.publishing(self.reader.repository.name(), youngest);
                Some(post_commits.clone())
            }
            _ => None,
        };
        let outcome = {
            let held = self.hold.lease();
            match held.as_ref() {
                Some(lease) if replacing => {
                    let mut added = [0u64; 5];
                    for (i, a) in added.iter_mut().enumerate() {
                        *a = now.lens[i] - self.published_at.lens[i];
                    }
                    self.reader
                        .repository
                        .publish_replacing_youngest(lease, &self.base, commit, &segment, added)
                }
                Some(lease) => {
                    let record = post_commit.map(|txn| PostCommitRecord {
                        front_end: self.hold.writer.clone(),
                        member_lease: self
                            .reader
                            .post_commits
                            .as_ref()
                            .map_or(0, |p| p.member_lease()),
                        txn,
                    });
                    self.reader.repository.publish_recording(
                        lease,
                        &self.base,
                        commit,
                        &segment,
                        record.as_ref(),
                    )
                }
                None => Ok(Publish::LostLease),
            }
        };
        if let (Some(post_commits), false) =
            (&announced, matches!(outcome, Ok(Publish::Published { .. })))
        {
            // Refused, or not known: its hook does not run here (the scan runs it if etcd
            // applied the record after all).
            post_commits.not_published(self.reader.repository.name(), youngest);
        }
        let why = match outcome {
            Ok(Publish::Published { revision, head }) => {
                if let Some(post_commits) = announced.as_ref().filter(|_| revision != youngest) {
                    let name = self.reader.repository.name();
                    post_commits.not_published(name, youngest);
                    post_commits.publishing(name, revision);
                }
                let record = TailRecord {
                    revision,
                    commit,
                    start,
                    end: now.lens,
                };
                if head.head.youngest == revision {
                    self.base = head;
                } else {
                    self.stale = Some(format!(
                        "r{} was published after r{revision}",
                        head.head.youngest
                    ));
                }
                self.published_at = now;
                if let Some((log, before, at)) = &mut self.timings {
                    let stats = self.reader.repository.stats();
                    log(&format!(
                        "cluster timings: {} r{revision} published {:.1} ms after the \
                         previous publication; since then: {}; segment files opened {:.1} ms (read \
                         during the PUT)",
                        self.reader.repository.name(),
                        at.elapsed().as_secs_f64() * 1000.0,
                        stats.since(before).describe(),
                        read_took.as_secs_f64() * 1000.0
                    ));
                    (*before, *at) = (stats, Instant::now());
                }
                // Published in the cluster: acknowledged whatever the cache does next (a
                // cache that could not take it is caught up again by a reader).
                if let Err(e) = record.write(&db).and_then(|()| self.inner.sync().map(drop)) {
                    self.stale = Some(format!("the cache could not record r{revision}: {e}"));
                }
                if self.stale.is_none() {
                    self.allow_lease_reads();
                }
                return Ok(revision);
            }
            Ok(Publish::Moved { current }) if replacing => format!(
                "front end '{}' published since this writer's r{} (the head is at r{}): the \
                 revision property change is refused, nothing of it is visible",
                current.head.writer, self.base.head.youngest, current.head.youngest
            ),
            Ok(Publish::Moved { current }) => format!(
                "r{} was published by front end '{}' since this writer's r{}: r{} is refused, \
                 nothing of it is visible",
                current.head.youngest, current.head.writer, self.base.head.youngest, youngest
            ),
            Ok(Publish::LostLease) if replacing => format!(
                "this front end lost the writer lease of {}: the revision property change is \
                 refused, nothing of it is visible",
                self.reader.repository.name()
            ),
            Ok(Publish::LostLease) => format!(
                "this front end lost the writer lease of {}: r{youngest} is refused, nothing \
                 of it is visible",
                self.reader.repository.name()
            ),
            Err(e @ ClusterError::OutcomeUnknown { .. }) => {
                self.stale = Some(e.to_string());
                let _ = self.inner.discard_unpublished();
                return Err(StoreError::Unavailable {
                    what: "the cluster's commit point".into(),
                    reason: format!("{e}; the commit is not acknowledged"),
                });
            }
            Err(e) => {
                self.stale = Some(e.to_string());
                let _ = self.inner.discard_unpublished();
                return Err(store_error(e));
            }
        };
        self.stale = Some(why.clone());
        let _ = self.inner.discard_unpublished();
        Err(StoreError::Conflict(why))
    }
}

impl Drop for ClusterWriter {
    fn drop(&mut self) {
        // Resigning lets the next writer in at once (dropping the lease would make it wait
        // out the TTL, as after a crash).
        let mut state = self.hold.state();
        state.epoch += 1;
        Self::stop_lease_reads(&self.reader);
        self.hold.release(Release::Dropped, "");
    }
}

impl WriteRepo for ClusterWriter {
    fn youngest(&self) -> Revnum {
        self.inner.youngest()
    }
    fn published(&self) -> Revnum {
        self.inner.published()
    }
    fn view(&mut self) -> Result<&dyn ReadRepo> {
        Ok(self.inner.view()?)
    }
    /// Publishes a revision committed and not yet synced first (the cluster publishes
    /// one revision at a time: a load that syncs every few revisions still works).
    fn begin(&mut self) -> Result<Box<dyn WriteTxn + '_>> {
        self.publish_pending()?;
        WriteRepo::begin(&mut self.inner)
    }
    fn sync(&mut self) -> Result<Revnum> {
        self.publish_pending()
    }
    fn discard_unpublished(&mut self) -> Result<()> {
        self.post_commit = None;
        self.inner.discard_unpublished()
    }
    fn record_post_commit(&mut self, txn: &str) {
        self.post_commit = Some(txn.to_owned());
    }
    /// Ends the running write: gives the lease back now when another front end asked for
    /// it meanwhile, else (with an idle release set) after that long without `relock`.
    fn unlock(&mut self) -> Result<()> {
        let unlocked = self.inner.unlock();
        let mut state = self.hold.state();
        state.busy = false;
        state.epoch += 1;
        if let Some(by) = state.wanted_by.take() {
            state.handed_over = true;
            self.hold.release(Release::Asked, &by);
        } else if let Some(idle) = self.idle_release {
            let (epoch, hold) = (state.epoch, Arc::downgrade(&self.hold));
            std::thread::spawn(move || {
                std::thread::sleep(idle);
                if let Some(hold) = hold.upgrade() {
                    let state = hold.state();
                    if state.epoch == epoch && !state.busy {
                        hold.release(Release::Idle, "");
                    }
                }
            });
        }
        unlocked
    }
    /// Cancels an idle release; campaigns again if the lease was released. False when
    /// anyone published since this writer's head (open a new one then).
    fn relock(&mut self) -> Result<bool> {
        {
            let mut state = self.hold.state();
            state.busy = true;
            state.epoch += 1;
        }
        let answer = if self.stale.is_some() {
            Ok(false)
        } else {
            // The lease first, then the cache's write lock: a campaign may wait (up to
            // `writer-wait`) for another front end's lease, and while it did with the lock
            // held, this front end's reads that had to catch up with that front end's
            // publications waited for the lock, and failed after 5 s (the likely cause of
            // one "Unable to connect" in `revision_property_changes_and_commits_at_once_
            // lose_neither`, 2026-11-30).
            match self.lease_again() {
                Ok(true) => self.inner.relock(),
                other => other,
            }
        };
        if !matches!(answer, Ok(true)) {
            // Not writing: a request for the lease is answered at once, and a lease kept
            // by a writer whose caller gives up on it (a failed head read) goes back now.
            let mut state = self.hold.state();
            state.busy = false;
            state.epoch += 1;
            if answer.is_err() {
                self.hold.release(Release::Idle, "");
            }
        }
        answer
    }
    fn expose_txn(&mut self, name: &str) -> Result<()> {
        self.inner.expose_txn(name)
    }
    fn forget_txn(&self, name: &str) {
        self.inner.forget_txn(name)
    }
    /// Appends the change in the cache (as the local engine does); `sync` publishes it
    /// by replacing the youngest revision's segment (docs/cluster.md, "Revision property
    /// changes").
    fn set_revprops(&mut self, rev: Revnum, revprops: PropList) -> Result<()> {
        self.usable()?;
        self.inner.set_revprops(rev, revprops)
    }
    fn set_uuid(&mut self, uuid: &str) -> Result<()> {
        Err(StoreError::Unsupported(format!(
            "setting the UUID {uuid} of a cluster repository (it is written at creation)"
        )))
    }
    fn set_locks(
        &mut self,
        locks: std::collections::BTreeMap<String, svelto_core::Lock>,
        reader: &dyn ReadRepo,
    ) -> Result<()> {
        self.usable()?;
        let name = self.reader.repository.name().to_owned();
        let same = reader
            .as_any()
            .downcast_ref::<ClusterRepo>()
            .filter(|r| r.repository.name() == name && r.dir == self.reader.dir);
        let Some(reader) = same else {
            return Err(StoreError::Conflict(format!(
                "the lock table of cluster repository {name} changed through a handle of \
                 another repository or backend"
            )));
        };
        match self.change_locks(&locks) {
            Ok(Some(locks_revision)) => {
                let table = Arc::new(LockTable::new(locks));
                for r in [reader, &self.reader] {
                    let mut kept = r.locks.lock().unwrap_or_else(|e| e.into_inner());
                    if kept.0.is_none_or(|at| at <= locks_revision) {
                        *kept = (Some(locks_revision), table.clone());
                    }
                }
                Ok(())
            }
            Ok(None) => {
                let why = format!(
                    "the lock table of {name} was not changed: this front end lost the writer \
                     lease, or the head moved under it"
                );
                self.stale = Some(why.clone());
                Err(StoreError::Conflict(why))
            }
            Err(e) => {
                self.stale = Some(e.to_string());
                Err(StoreError::Unavailable {
                    what: format!("the lock table of {name}"),
                    reason: format!("{e}; whether it changed (wholly or in part) is unknown"),
                })
            }
        }
    }
}

/// At most this many per-lock keys are put or deleted by one transaction of a lock change
/// (etcd's `--max-txn-ops` is 128 by default; the head and the old key take two more).
const LOCK_OPS_PER_TXN: usize = 100;
/// At most about this many bytes of keys and values per transaction of a lock change
/// (etcd's `--max-request-bytes` is 1.5 MiB by default).
const LOCK_BYTES_PER_TXN: usize = 1 << 20;

/// The per-lock key operations that turn `old` into `new`, in transactions of at most
/// [`LOCK_OPS_PER_TXN`] operations and about [`LOCK_BYTES_PER_TXN`] bytes (a lock alone
/// larger than that still gets a transaction of its own, which etcd may refuse).
fn lock_batches(old: &BTreeMap<String, Lock>, new: &BTreeMap<String, Lock>) -> Vec<Vec<LockKeyOp>> {
    let mut ops = Vec::new();
    for path in old.keys().filter(|p| !new.contains_key(*p)) {
        ops.push(LockKeyOp::Delete(path.clone()));
    }
    for (path, lock) in new {
        if old.get(path) != Some(lock) {
            let one = BTreeMap::from([(path.clone(), lock.clone())]);
            let value = svelto_store::encode_lock_table(&one).into_bytes();
            ops.push(LockKeyOp::Put(path.clone(), value));
        }
    }
    let mut batches: Vec<Vec<LockKeyOp>> = Vec::new();
    let mut bytes = 0;
    for op in ops {
        let size = match &op {
            LockKeyOp::Put(path, value) => 64 + path.len() * 2 + value.len(),
            LockKeyOp::Delete(path) => 64 + path.len(),
        };
        let full = batches.last().is_none_or(|b| {
            b.len() >= LOCK_OPS_PER_TXN || (!b.is_empty() && bytes + size > LOCK_BYTES_PER_TXN)
        });
        if full {
            batches.push(Vec::new());
            bytes = 0;
        }
        bytes += size;
        batches.last_mut().expect("a batch").push(op);
    }
    batches
}

impl ClusterWriter {
    /// Makes `locks` the lock table in etcd: the per-lock keys that differ from the ones
    /// in etcd put or deleted by transactions conditioned on the lease and on the head
    /// (`base`), each also replacing the head with its lock-change field moved to `base`'s
    /// mod revision plus one (a number that grows with every lock change). While the field
    /// is 0 (no per-lock keys yet: the table is the old single `locks` key, if any) only
    /// the last transaction moves it, and deletes the old key: the conversion. The new
    /// field when done (`None`: a compare failed).
    fn change_locks(
        &mut self,
        locks: &BTreeMap<String, Lock>,
    ) -> std::result::Result<Option<u64>, ClusterError> {
        let repository = self.reader.repository.clone();
        // The per-lock keys as they are at `base`: the kept table when it was read at the
        // head's field (and the field is not 0: then the kept table may be the old key's),
        // else a snapshot, which must be at `base`.
        let at = self.base.head.locks_revision;
        let kept = {
            let kept = self.reader.locks.lock().unwrap_or_else(|e| e.into_inner());
            (at > 0 && kept.0 == Some(at)).then(|| kept.1.locks().clone())
        };
        let (old, legacy) = match kept {
            Some(old) => (old, false),
            None => {
                let snapshot = repository.lock_snapshot()?;
                if snapshot.head.mod_revision != self.base.mod_revision {
                    return Ok(None);
                }
                let mut old = BTreeMap::new();
                for (path, value) in snapshot.keys {
                    // A key that does not parse is replaced (or deleted) by the change.
                    let lock = svelto_store::parse_lock_table(&value)
                        .ok()
                        .and_then(|mut one| one.remove(&path))
                        .unwrap_or_else(|| Lock {
                            path: path.clone(),
                            token: String::new(),
                            owner: String::new(),
                            comment: None,
                            created: String::new(),
                            expires: None,
                        });
                    old.insert(path, lock);
                }
                (old, snapshot.legacy.is_some())
            }
        };
        let mut batches = lock_batches(&old, locks);
        if batches.is_empty() {
            if at > 0 {
                return Ok(Some(at));
            }
            // Nothing under the prefix to change, but the field must move (and the old
            // key go): one transaction of the head alone.
            batches.push(Vec::new());
        }
        let count = batches.len();
        for (i, batch) in batches.iter().enumerate() {
            let last = i + 1 == count;
            let moves = at > 0 || last;
            let lease = self.hold.lease();
            let Some(lease) = lease.as_ref() else {
                return Ok(None);
            };
            let next = moves.then(|| {
                let mut head: Head = self.base.head.clone();
                head.locks_revision = u64::try_from(self.base.mod_revision).unwrap_or(0) + 1;
                head.writer = lease.writer().to_owned();
                head
            });
            let applied =
                repository.change_locks(lease, &self.base, batch, next.as_ref(), last && legacy)?;
            let Some(revision) = applied else {
                return Ok(None);
            };
            if let Some(head) = next {
                self.base = HeadVersion {
                    head,
                    mod_revision: revision,
                };
            }
        }
        Ok(Some(self.base.head.locks_revision))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a_lock(path: &str, comment_bytes: usize) -> Lock {
        Lock {
            path: path.into(),
            token: format!("opaquelocktoken:{path}"),
            owner: "alice".into(),
            comment: Some("c".repeat(comment_bytes)),
            created: "2026-11-30T00:00:00.000000Z".into(),
            expires: None,
        }
    }

    fn table(paths: impl Iterator<Item = String>, comment_bytes: usize) -> BTreeMap<String, Lock> {
        paths
            .map(|p| (p.clone(), a_lock(&p, comment_bytes)))
            .collect()
    }

    #[test]
    fn a_lock_change_puts_and_deletes_only_what_differs_in_bounded_transactions() {
        let old = table((0..10).map(|i| format!("f{i}")), 10);
        let mut new = old.clone();
        new.remove("f3");
        new.insert("f4".into(), a_lock("f4", 11));
        new.insert("g".into(), a_lock("g", 10));
        let batches = lock_batches(&old, &new);
        assert_eq!(batches.len(), 1);
        let one = BTreeMap::from([("f4".to_owned(), a_lock("f4", 11))]);
        assert_eq!(
            batches[0],
            vec![
                LockKeyOp::Delete("f3".into()),
                LockKeyOp::Put(
                    "f4".into(),
                    svelto_store::encode_lock_table(&one).into_bytes()
                ),
                LockKeyOp::Put(
                    "g".into(),
                    svelto_store::encode_lock_table(&BTreeMap::from([(
                        "g".to_owned(),
                        a_lock("g", 10)
                    )]))
                    .into_bytes()
                ),
            ]
        );
        assert!(lock_batches(&old, &old).is_empty(), "nothing changed");
        // Many small locks: at most LOCK_OPS_PER_TXN keys each.
        let many = table((0..250).map(|i| format!("f{i:03}")), 10);
        let sizes: Vec<usize> = lock_batches(&BTreeMap::new(), &many)
            .iter()
            .map(Vec::len)
            .collect();
        assert_eq!(sizes, [100, 100, 50]);
        // Large comments: about LOCK_BYTES_PER_TXN bytes each.
        let large = table((0..40).map(|i| format!("f{i:03}")), 100_000);
        let batches = lock_batches(&BTreeMap::new(), &large);
        assert_eq!(batches.iter().map(Vec::len).sum::<usize>(), 40);
        for batch in &batches {
            let bytes: usize = batch
                .iter()
                .map(|op| match op {
                    LockKeyOp::Put(path, value) => path.len() + value.len(),
                    LockKeyOp::Delete(path) => path.len(),
                })
                .sum();
            assert!(bytes <= LOCK_BYTES_PER_TXN, "{bytes}");
        }
        assert_eq!(batches.len(), 4, "10 of about 100 KB each");
        // Removing them all: deletes, 100 at most each.
        let sizes: Vec<usize> = lock_batches(&many, &BTreeMap::new())
            .iter()
            .map(Vec::len)
            .collect();
        assert_eq!(sizes, [100, 100, 50]);
    }

    fn record(revision: u64, commit: u8, end: u64) -> TailRecord {
        TailRecord {
            revision,
            commit: CommitId([commit; 16]),
            start: [1, 2, 3, 4, 5],
            end: [end, end + 1, end + 2, end + 3, end + 4],
        }
    }

    #[test]
    fn the_cache_keeps_the_last_records_of_its_youngest_segment() {
        let dir = tempfile::tempdir().expect("tempdir");
        let r = record(7, 0xab, 100);
        assert_eq!(TailRecord::parse(r.render().trim_end()), Some(r));
        for bad in [
            "",
            "7",
            "7 abab 1 2 3 4 5 6 7 8 9 10",
            &format!("{} 11", r.render()),
        ] {
            assert_eq!(TailRecord::parse(bad), None, "{bad:?}");
        }
        for i in 0..20u64 {
            record(i, i as u8, 100 + i)
                .write(dir.path())
                .expect("write");
        }
        let text = std::fs::read_to_string(dir.path().join(TAIL_RECORDS)).expect("read");
        assert_eq!(text.lines().count(), TAIL_RECORDS_KEPT);
        // The line in force is the one db/current's revision and lengths name.
        let cur = |youngest, end: u64| Current {
            youngest,
            lens: [end, end + 1, end + 2, end + 3, end + 4],
        };
        assert_eq!(
            TailRecord::find(dir.path(), &cur(19, 119)),
            Some(record(19, 19, 119))
        );
        assert_eq!(
            TailRecord::find(dir.path(), &cur(15, 115)),
            Some(record(15, 15, 115))
        );
        assert_eq!(
            TailRecord::find(dir.path(), &cur(19, 118)),
            None,
            "other lengths"
        );
        assert_eq!(
            TailRecord::find(dir.path(), &cur(3, 103)),
            None,
            "no longer kept"
        );
        // A replaced segment of the same revision: the newer line matches the newer end.
        record(19, 0xcd, 150).write(dir.path()).expect("write");
        assert_eq!(
            TailRecord::find(dir.path(), &cur(19, 150)),
            Some(record(19, 0xcd, 150))
        );
        assert_eq!(
            TailRecord::find(dir.path(), &cur(19, 119)),
            Some(record(19, 19, 119))
        );
    }
}
