//! One repository in the cluster: its head in etcd, its writer election, its publications
//! and its segments (docs/cluster.md, "Publishing a commit" and "Reads").

use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use etcd_client::{
    Client, Compare, CompareOp, EventType, GetOptions, PutOptions, Txn, TxnOp, TxnOpResponse,
    WatchOptions,
};
use object_store::multipart::MultipartStore;
use object_store::ObjectStore;

use crate::head::{CommitId, Head, SegmentRef};
use crate::objects::{Index, Objects, PartSink, PartSource, Segment, SegmentHeader};
use crate::post_commit::PostCommitRecord;
use crate::stats::{Counters, Stats, Trip};
use crate::{ClusterConfig, ClusterError};

pub(crate) struct Inner {
    pub(crate) runtime: tokio::runtime::Runtime,
    pub(crate) etcd: Client,
    pub(crate) store: Arc<dyn ObjectStore>,
    pub(crate) multipart: Arc<dyn MultipartStore>,
    pub(crate) config: ClusterConfig,
    pub(crate) counters: Counters,
}

/// A head and the etcd revision that last wrote it (what a publication is conditioned on).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeadVersion {
    /// The decoded head.
    pub head: Head,
    /// Its key's mod revision in etcd.
    pub mod_revision: i64,
}

/// A definite answer to a publication.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Publish {
    /// etcd committed it: the revision is published and may be acknowledged. `head` is the
    /// newest head seen (this publication's, or a later one when the answer was resolved
    /// after another writer published on top of it).
    Published {
        /// The revision published.
        revision: u64,
        /// The newest head known.
        head: HeadVersion,
    },
    /// Someone published since the head it was built on: nothing of it is visible; build
    /// again on `current` (or answer "out of date").
    Moved {
        /// The head now.
        current: HeadVersion,
    },
    /// The writer's lease ended (its election key is gone or another's): nothing of it is
    /// visible, and this front end is no longer the writer.
    LostLease,
}

/// The writer's hold on a repository: its etcd lease, kept alive in the background, and
/// the create revision of the election key on it (publications are conditioned on it).
/// Dropping it stops the keep-alives (the lease then ends after its TTL, as after a
/// crash); [`WriterLease::resign`] ends it at once.
pub struct WriterLease {
    writer: String,
    lease: i64,
    election: i64,
    lost: Arc<AtomicBool>,
    /// Until when (nanoseconds after [`epoch`]) etcd cannot have let the lease expire.
    valid_until: Arc<AtomicU64>,
    keep_alive: tokio::task::JoinHandle<()>,
    /// The watch of the repository's `wanted` key (another front end asking for the
    /// lease), when the campaign was given a [`WantedHook`].
    wanted_watch: Option<tokio::task::JoinHandle<()>>,
    inner: Arc<Inner>,
}

/// Called (on a thread of its own) with the lease id and the asking front end's id each
/// time another front end asks for the lease held ([`Repository::ask`]).
pub type WantedHook = Arc<dyn Fn(i64, &str) + Send + Sync>;

/// What a campaign found.
pub enum Campaign {
    /// This front end holds the lease now.
    Won(WriterLease),
    /// Another front end holds it.
    Held {
        /// The holder's writer id.
        holder: String,
        /// The create revision of its election key (one per lease won).
        election: i64,
        /// The etcd revision at which it was seen holding it.
        seen_at: i64,
    },
}

impl WriterLease {
    /// The writer id it was won with.
    pub fn writer(&self) -> &str {
        &self.writer
    }

    /// The etcd lease id.
    pub fn lease_id(&self) -> i64 {
        self.lease
    }

    /// The etcd revision at which the election key was created.
    pub fn election_revision(&self) -> i64 {
        self.election
    }

    /// False once a keep-alive answer or a publication said the lease is gone (a hint for
    /// the front end; the fencing itself is the publication's compare in etcd).
    pub fn is_held(&self) -> bool {
        !self.lost.load(Ordering::SeqCst)
    }

    /// A handle that answers whether the lease surely still holds (see
    /// [`LeaseClock::surely_held`]).
    pub fn clock(&self) -> LeaseClock {
        LeaseClock {
            lease: self.lease,
            lost: self.lost.clone(),
            valid_until: self.valid_until.clone(),
        }
    }

    /// Revokes the lease: the election key goes at once and another writer can win.
    pub fn resign(self) -> Result<(), ClusterError> {
        self.revoke(Trip::Resign)
    }

    /// [`WriterLease::resign`] because another front end asked for the lease (counted as
    /// a hand-over, not a resignation).
    pub fn hand_over(self) -> Result<(), ClusterError> {
        self.revoke(Trip::Handover)
    }

    fn revoke(self, trip: Trip) -> Result<(), ClusterError> {
        self.keep_alive.abort();
        if let Some(watch) = &self.wanted_watch {
            watch.abort();
        }
        self.lost.store(true, Ordering::SeqCst);
        let mut etcd = self.inner.etcd.clone();
        let lease = self.lease;
        let after = self.inner.config.request_timeout;
        let started = Instant::now();
        let revoked = crate::block_on(&self.inner.runtime, async {
            tokio::time::timeout(after, etcd.lease_revoke(lease)).await
        });
        self.inner.counters.add(trip, started.elapsed());
        revoked
            .map_err(|_| ClusterError::EtcdTimeout {
                what: "revoke lease",
                key: lease.to_string(),
                after,
            })?
            .map_err(|e| ClusterError::Etcd {
                what: "revoke lease",
                key: lease.to_string(),
                source: Box::new(e),
            })?;
        Ok(())
    }
}

impl Drop for WriterLease {
    fn drop(&mut self) {
        self.keep_alive.abort();
        if let Some(watch) = &self.wanted_watch {
            watch.abort();
        }
    }
}

/// The process's reference instant for [`LeaseClock`]'s deadlines.
fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

/// `at` as nanoseconds after [`epoch`] (0 for an instant before it).
fn since_epoch(at: Instant) -> u64 {
    u64::try_from(at.saturating_duration_since(epoch()).as_nanos()).unwrap_or(u64::MAX)
}

/// Whether a writer lease surely still holds: its last renewal (or grant) was *sent* at
/// time S with a TTL of T granted, so etcd cannot expire it before S + T (a leader counts
/// from when it received the request, later than S; a new leader extends leases, never
/// shortens them). Nine tenths of T are counted, for clock rate differences. While it
/// holds no other writer can publish (publications are conditioned on the election key on
/// this lease): a front end that holds it may answer a fence from its cache.
#[derive(Clone)]
pub struct LeaseClock {
    lease: i64,
    lost: Arc<AtomicBool>,
    valid_until: Arc<AtomicU64>,
}

impl LeaseClock {
    /// The etcd lease id.
    pub fn lease_id(&self) -> i64 {
        self.lease
    }

    /// True while the lease cannot have ended (and was not reported lost or resigned).
    pub fn surely_held(&self) -> bool {
        !self.lost.load(Ordering::SeqCst)
            && since_epoch(Instant::now()) < self.valid_until.load(Ordering::SeqCst)
    }

    fn renewed(valid_until: &AtomicU64, sent: Instant, ttl: Duration) {
        let until = since_epoch(sent + ttl * 9 / 10);
        valid_until.fetch_max(until, Ordering::SeqCst);
    }
}

/// A handle on repository `name` (cheap; clone the [`crate::Cluster`] it came from freely).
#[derive(Clone)]
pub struct Repository {
    pub(crate) inner: Arc<Inner>,
    name: String,
    head_key: String,
    writer_key: String,
    wanted_key: String,
    uuid_key: String,
    locks_key: String,
    lock_prefix: String,
    pub(crate) objects: Objects,
}

/// Per-lock keys read per page of a lock snapshot (about 1.2 MB with 1 KB comments, under
/// the client's 4 MiB answer limit).
const LOCK_PAGE: i64 = 1000;

/// The end of the key range holding every key that starts with `prefix` (its last byte
/// plus one; the prefixes used end in `/`).
fn prefix_end(prefix: &str) -> Vec<u8> {
    let mut end = prefix.as_bytes().to_vec();
    if let Some(last) = end.last_mut() {
        *last += 1;
    }
    end
}

/// What [`Repository::lock_snapshot`] read, all at one etcd revision.
#[derive(Clone, Debug)]
pub struct LockSnapshot {
    /// The head (its `locks_revision` says which of the two below is the table: the old
    /// key while it is 0, the per-lock keys after).
    pub head: HeadVersion,
    /// The old single `locks` key's value (db/locks's format), if present.
    pub legacy: Option<Vec<u8>>,
    /// Every per-lock key: its path and its value (db/locks's format, one lock).
    pub keys: Vec<(String, Vec<u8>)>,
}

/// One per-lock key changed by [`Repository::change_locks`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LockKeyOp {
    /// The lock on a path, its value in db/locks's format (one lock).
    Put(String, Vec<u8>),
    /// The lock on a path removed.
    Delete(String),
}

/// One etcd call given `after` to answer: its error, or the timeout, named by `what` and
/// `key`.
pub(crate) async fn etcd_call_within<T>(
    after: Duration,
    what: &'static str,
    key: &str,
    call: impl std::future::Future<Output = Result<T, etcd_client::Error>>,
) -> Result<T, ClusterError> {
    match tokio::time::timeout(after, call).await {
        Ok(result) => result.map_err(etcd_error(what, key)),
        Err(_) => Err(ClusterError::EtcdTimeout {
            what,
            key: key.to_owned(),
            after,
        }),
    }
}

fn etcd_error(what: &'static str, key: &str) -> impl FnOnce(etcd_client::Error) -> ClusterError {
    let key = key.to_owned();
    move |e| ClusterError::Etcd {
        what,
        key,
        source: Box::new(e),
    }
}

impl Repository {
    pub(crate) fn new(inner: Arc<Inner>, name: &str) -> Repository {
        let base = format!("{}/repos/{name}", inner.config.etcd_prefix);
        let objects = Objects {
            store: inner.store.clone(),
            prefix: format!("{}/{name}", inner.config.object_prefix),
            timeout: inner.config.request_timeout,
            multipart: inner.multipart.clone(),
            chunk: inner.config.chunk_bytes,
        };
        Repository {
            name: name.to_owned(),
            head_key: format!("{base}/head"),
            writer_key: format!("{base}/writer"),
            wanted_key: format!("{base}/wanted"),
            uuid_key: format!("{base}/uuid"),
            locks_key: format!("{base}/locks"),
            lock_prefix: format!("{base}/locks/"),
            objects,
            inner,
        }
    }

    /// The repository's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The round trips made so far through the cluster's clients (every repository's).
    pub fn stats(&self) -> Stats {
        self.inner.counters.snapshot()
    }

    /// The etcd key of its head.
    pub fn head_key(&self) -> &str {
        &self.head_key
    }

    /// The object key of a segment.
    pub fn segment_key(&self, segment: SegmentRef) -> String {
        self.objects.segment_key(segment)
    }

    pub(crate) fn block<T: Send>(&self, f: impl std::future::Future<Output = T> + Send) -> T {
        crate::block_on(&self.inner.runtime, f)
    }

    /// [`Repository::block`] for a future owning what it needs (no thread made for it).
    fn block_owned<T: Send + 'static>(
        &self,
        f: impl std::future::Future<Output = T> + Send + 'static,
    ) -> T {
        crate::block_on_owned(&self.inner.runtime, f)
    }

    async fn etcd_call<T>(
        &self,
        what: &'static str,
        key: &str,
        call: impl std::future::Future<Output = Result<T, etcd_client::Error>>,
    ) -> Result<T, ClusterError> {
        etcd_call_within(self.inner.config.request_timeout, what, key, call).await
    }

    fn decode_head(&self, value: &[u8], mod_revision: i64) -> Result<HeadVersion, ClusterError> {
        let head = Head::decode(value).map_err(|e| ClusterError::Corrupt {
            what: "head",
            key: self.head_key.clone(),
            detail: e.to_string(),
        })?;
        Ok(HeadVersion { head, mod_revision })
    }

    /// Creates the repository with revision 0 holding `segment`, published by `writer`:
    /// the segment is put, then the head is created iff no head exists.
    pub fn create(
        &self,
        writer: &str,
        commit: CommitId,
        segment: &Segment,
    ) -> Result<HeadVersion, ClusterError> {
        self.create_with_uuid(writer, commit, segment, None)
    }

    /// [`Repository::create`], writing the repository's UUID (etcd key `uuid`) in the same
    /// transaction as the head when given.
    pub fn create_with_uuid(
        &self,
        writer: &str,
        commit: CommitId,
        segment: &Segment,
        uuid: Option<&str>,
    ) -> Result<HeadVersion, ClusterError> {
        self.block(async {
            let zero = SegmentRef {
                revision: 0,
                commit,
            };
            self.objects
                .put_once(
                    "put segment",
                    &self.objects.segment_key(zero),
                    segment.encode(0, commit),
                )
                .await?;
            let head = Head::initial(writer, commit, segment.lengths());
            let txn = Txn::new()
                .when(vec![Compare::create_revision(
                    self.head_key.as_str(),
                    CompareOp::Equal,
                    0,
                )])
                .and_then(
                    std::iter::once(TxnOp::put(self.head_key.as_str(), head.encode(), None))
                        .chain(uuid.map(|u| TxnOp::put(self.uuid_key.as_str(), u, None)))
                        .collect::<Vec<_>>(),
                );
            let mut etcd = self.inner.etcd.clone();
            let resp = self
                .etcd_call("create head", &self.head_key, etcd.txn(txn))
                .await?;
            if !resp.succeeded() {
                return Err(ClusterError::Exists(self.name.clone()));
            }
            let revision = resp.header().map_or(0, |h| h.revision());
            Ok(HeadVersion {
                head,
                mod_revision: revision,
            })
        })
    }

    /// The head, by a linearizable read (etcd's leader confirms it leads before it
    /// answers): at least as new as every publication acknowledged before the call.
    pub fn head(&self) -> Result<HeadVersion, ClusterError> {
        let this = self.clone();
        self.block_owned(async move { this.head_async().await })
    }

    async fn head_async(&self) -> Result<HeadVersion, ClusterError> {
        let mut etcd = self.inner.etcd.clone();
        let started = Instant::now();
        let resp = self
            .etcd_call(
                "read head",
                &self.head_key,
                etcd.get(self.head_key.as_str(), None),
            )
            .await;
        self.inner.counters.add(Trip::HeadRead, started.elapsed());
        let resp = resp?;
        let Some(kv) = resp.kvs().first() else {
            return Err(ClusterError::NoSuchRepository {
                name: self.name.clone(),
                key: self.head_key.clone(),
            });
        };
        self.decode_head(kv.value(), kv.mod_revision())
    }

    /// The repository's UUID as [`Repository::create_with_uuid`] wrote it (None when it
    /// was created without one).
    pub fn uuid(&self) -> Result<Option<String>, ClusterError> {
        self.read_text("read uuid", &self.uuid_key)
    }

    /// The value of `key` as text (None when absent), by a linearizable read.
    fn read_text(&self, what: &'static str, key: &str) -> Result<Option<String>, ClusterError> {
        self.block(async {
            let mut etcd = self.inner.etcd.clone();
            let resp = self.etcd_call(what, key, etcd.get(key, None)).await?;
            Ok(resp
                .kvs()
                .first()
                .map(|kv| String::from_utf8_lossy(kv.value()).into_owned()))
        })
    }

    /// The etcd prefix of the repository's per-lock keys: each lock is the key of this
    /// prefix followed by its path's bytes (docs/formats/cluster.md, "Locks").
    pub fn lock_key_prefix(&self) -> &str {
        &self.lock_prefix
    }

    /// The head, the lock table of the old single `locks` key (None when absent) and
    /// every per-lock key (its path, its value) as one snapshot: the head and the first
    /// page by one transaction, the further pages read at that transaction's etcd
    /// revision (a linearizable read: at least as new as every change acknowledged before
    /// the call).
    pub fn lock_snapshot(&self) -> Result<LockSnapshot, ClusterError> {
        let this = self.clone();
        self.block_owned(async move {
            let started = Instant::now();
            let read = this.lock_snapshot_async().await;
            this.inner.counters.add(Trip::LockRead, started.elapsed());
            read
        })
    }

    async fn lock_snapshot_async(&self) -> Result<LockSnapshot, ClusterError> {
        let prefix = self.lock_prefix.as_str();
        let end = prefix_end(prefix);
        let txn = Txn::new().and_then(vec![
            TxnOp::get(self.head_key.as_str(), None),
            TxnOp::get(self.locks_key.as_str(), None),
            TxnOp::get(
                prefix,
                Some(
                    GetOptions::new()
                        .with_range(end.clone())
                        .with_limit(LOCK_PAGE),
                ),
            ),
        ]);
        let mut etcd = self.inner.etcd.clone();
        let resp = self.etcd_call("read locks", prefix, etcd.txn(txn)).await?;
        let revision = resp.header().map_or(0, |h| h.revision());
        let mut gets = resp.op_responses().into_iter().filter_map(|op| match op {
            TxnOpResponse::Get(get) => Some(get),
            _ => None,
        });
        let (Some(head), Some(legacy), Some(first)) = (gets.next(), gets.next(), gets.next())
        else {
            return Err(ClusterError::Corrupt {
                what: "lock read",
                key: prefix.to_owned(),
                detail: "etcd answered the transaction without its three reads".into(),
            });
        };
        let Some(head) = head.kvs().first() else {
            return Err(ClusterError::NoSuchRepository {
                name: self.name.clone(),
                key: self.head_key.clone(),
            });
        };
        let head = self.decode_head(head.value(), head.mod_revision())?;
        let legacy = legacy.kvs().first().map(|kv| kv.value().to_vec());
        let mut keys = Vec::new();
        let mut page = first;
        loop {
            for kv in page.kvs() {
                let path = kv
                    .key()
                    .strip_prefix(prefix.as_bytes())
                    .and_then(|p| std::str::from_utf8(p).ok())
                    .ok_or_else(|| ClusterError::Corrupt {
                        what: "lock key",
                        key: String::from_utf8_lossy(kv.key()).into_owned(),
                        detail: "not the lock prefix followed by a UTF-8 path".into(),
                    })?;
                keys.push((path.to_owned(), kv.value().to_vec()));
            }
            let Some(last) = page.kvs().last().filter(|_| page.more()) else {
                break;
            };
            let mut from = last.key().to_vec();
            from.push(0);
            let options = GetOptions::new()
                .with_range(end.clone())
                .with_limit(LOCK_PAGE)
                .with_revision(revision);
            let mut etcd = self.inner.etcd.clone();
            page = self
                .etcd_call("read locks", prefix, etcd.get(from, Some(options)))
                .await?;
        }
        Ok(LockSnapshot { head, legacy, keys })
    }

    /// One transaction of a lock change, conditioned on the head's mod revision still
    /// being `base`'s and on `lease` still holding the election key: the per-lock keys of
    /// `ops` put or deleted, and with `head` the head replaced (its lock-change field
    /// moved) and, with `drop_legacy`, the old single `locks` key deleted.
    /// `Ok(Some(revision))` when applied (the transaction's etcd revision), `Ok(None)` when
    /// a compare failed (the lease lost, or the head moved); an error leaves the outcome
    /// unknown.
    pub fn change_locks(
        &self,
        lease: &WriterLease,
        base: &HeadVersion,
        ops: &[LockKeyOp],
        head: Option<&Head>,
        drop_legacy: bool,
    ) -> Result<Option<i64>, ClusterError> {
        let mut then: Vec<TxnOp> = ops
            .iter()
            .map(|op| match op {
                LockKeyOp::Put(path, value) => {
                    TxnOp::put(format!("{}{path}", self.lock_prefix), value.clone(), None)
                }
                LockKeyOp::Delete(path) => {
                    TxnOp::delete(format!("{}{path}", self.lock_prefix), None)
                }
            })
            .collect();
        if let Some(head) = head {
            then.push(TxnOp::put(self.head_key.as_str(), head.encode(), None));
        }
        if drop_legacy {
            then.push(TxnOp::delete(self.locks_key.as_str(), None));
        }
        let txn = Txn::new()
            .when(vec![
                Compare::mod_revision(self.head_key.as_str(), CompareOp::Equal, base.mod_revision),
                Compare::create_revision(
                    self.writer_key.as_str(),
                    CompareOp::Equal,
                    lease.election,
                ),
            ])
            .and_then(then);
        let key = self.lock_prefix.clone();
        let this = self.clone();
        let started = Instant::now();
        let resp = self.block_owned(async move {
            let mut etcd = this.inner.etcd.clone();
            this.etcd_call("write locks", &key, etcd.txn(txn)).await
        });
        self.inner.counters.add(Trip::LockWrite, started.elapsed());
        let resp = resp?;
        Ok(resp
            .succeeded()
            .then(|| resp.header().map_or(0, |h| h.revision())))
    }

    /// Puts the old single `locks` key (db/locks's format) as a cluster made before the
    /// per-lock keys has it, for tests of the migration: unconditioned.
    pub fn put_legacy_locks(&self, bytes: Vec<u8>) -> Result<(), ClusterError> {
        let key = self.locks_key.clone();
        let this = self.clone();
        self.block_owned(async move {
            let mut etcd = this.inner.etcd.clone();
            this.etcd_call("write locks", &key, etcd.put(key.as_str(), bytes, None))
                .await
                .map(|_| ())
        })
    }

    /// The id of the writer holding the election key, if one does.
    pub fn writer(&self) -> Result<Option<String>, ClusterError> {
        self.read_text("read writer", &self.writer_key)
    }

    /// Campaigns once for the writer lease: grants a lease and creates the election key on
    /// it iff the key is absent. `None` when another writer holds it.
    pub fn campaign(&self, writer: &str) -> Result<Option<WriterLease>, ClusterError> {
        Ok(match self.campaign_as(writer, None)? {
            Campaign::Won(lease) => Some(lease),
            Campaign::Held { .. } => None,
        })
    }

    /// [`Repository::campaign`], saying who holds the lease when it is lost (read in the
    /// same transaction). With `wanted`, the lease won watches the repository's `wanted`
    /// key from its election on (a stream: no round trip on the commit path) and calls
    /// `wanted` each time another front end asks for it ([`Repository::ask`]).
    pub fn campaign_as(
        &self,
        writer: &str,
        wanted: Option<WantedHook>,
    ) -> Result<Campaign, ClusterError> {
        let ttl = self.inner.config.lease_ttl_secs;
        let key = self.writer_key.clone();
        let started = Instant::now();
        let won = self.block(async {
            let mut etcd = self.inner.etcd.clone();
            let granted = self
                .etcd_call("grant lease", &key, etcd.lease_grant(ttl, None))
                .await?;
            let (lease, granted_ttl) = (granted.id(), granted.ttl());
            let txn = Txn::new()
                .when(vec![Compare::create_revision(
                    key.as_str(),
                    CompareOp::Equal,
                    0,
                )])
                .and_then(vec![TxnOp::put(
                    key.as_str(),
                    writer,
                    Some(PutOptions::new().with_lease(lease)),
                )])
                .or_else(vec![TxnOp::get(key.as_str(), None)]);
            let result = self.etcd_call("campaign", &key, etcd.txn(txn)).await;
            match result {
                Ok(resp) if resp.succeeded() => {
                    let election = resp.header().map_or(0, |h| h.revision());
                    Ok(Ok((lease, election, granted_ttl)))
                }
                other => {
                    // Lost, or unknown: the lease must not keep a key we may have made.
                    let _ = tokio::time::timeout(
                        self.inner.config.request_timeout,
                        etcd.lease_revoke(lease),
                    )
                    .await;
                    other.map(|resp| {
                        let seen_at = resp.header().map_or(0, |h| h.revision());
                        let holder = resp.op_responses().into_iter().find_map(|op| match op {
                            TxnOpResponse::Get(get) => get.kvs().first().cloned(),
                            _ => None,
                        });
                        Err(match holder {
                            Some(kv) => Campaign::Held {
                                holder: String::from_utf8_lossy(kv.value()).into_owned(),
                                election: kv.create_revision(),
                                seen_at,
                            },
                            // Gone between the compare and the read: nobody to name.
                            None => Campaign::Held {
                                holder: String::new(),
                                election: 0,
                                seen_at,
                            },
                        })
                    })
                }
            }
        });
        self.inner.counters.add(Trip::Campaign, started.elapsed());
        let (lease, election, granted_ttl) = match won? {
            Ok(won) => won,
            Err(held) => return Ok(held),
        };
        let lost = Arc::new(AtomicBool::new(false));
        let valid_until = Arc::new(AtomicU64::new(0));
        LeaseClock::renewed(
            &valid_until,
            started,
            Duration::from_secs(u64::try_from(granted_ttl.max(0)).unwrap_or(0)),
        );
        let keep_alive = self.inner.runtime.spawn(keep_alive(
            self.inner.etcd.clone(),
            lease,
            Duration::from_secs(ttl as u64),
            lost.clone(),
            valid_until.clone(),
        ));
        let wanted_watch = wanted.map(|hook| {
            self.inner.runtime.spawn(watch_wanted(
                self.inner.etcd.clone(),
                self.wanted_key.clone(),
                lease,
                election + 1,
                hook,
            ))
        });
        Ok(Campaign::Won(WriterLease {
            writer: writer.to_owned(),
            lease,
            election,
            lost,
            valid_until,
            keep_alive,
            wanted_watch,
            inner: self.inner.clone(),
        }))
    }

    /// Asks the front end holding the writer lease to give it back as soon as it has no
    /// commit running: puts the repository's `wanted` key (its value: `writer`, the asking
    /// front end's id), which the holder watches. One round trip, made only by a front end
    /// that waits for the lease.
    pub fn ask(&self, writer: &str) -> Result<(), ClusterError> {
        let started = Instant::now();
        let put = self.block(async {
            let mut etcd = self.inner.etcd.clone();
            self.etcd_call(
                "ask for the writer lease",
                &self.wanted_key,
                etcd.put(self.wanted_key.as_str(), writer, None),
            )
            .await
        });
        self.inner.counters.add(Trip::Ask, started.elapsed());
        put.map(|_| ())
    }

    /// Waits at most `timeout` for the writer key to be deleted after etcd revision
    /// `seen_at` (the holder resigned, handed over, or its lease expired), by a watch:
    /// true when it was (campaign at once), false when the time ran out or the watch
    /// failed (campaign anyway: the campaign is what decides).
    pub fn wait_vacant(&self, seen_at: i64, timeout: Duration) -> bool {
        self.block(async {
            let mut etcd = self.inner.etcd.clone();
            let key = self.writer_key.as_str();
            let watched = tokio::time::timeout(timeout, async {
                let options = WatchOptions::new().with_start_revision(seen_at + 1);
                let mut stream = etcd.watch(key, Some(options)).await.ok()?;
                while let Ok(Some(answer)) = stream.message().await {
                    if answer.canceled()
                        || answer
                            .events()
                            .iter()
                            .any(|e| e.event_type() == EventType::Delete)
                    {
                        return Some(true);
                    }
                }
                None
            })
            .await;
            matches!(watched, Ok(Some(true)))
        })
    }

    /// Publishes `segment` as revision `base.head.youngest + 1` under `commit`: puts the
    /// segment (and an index object when the head's tail is full), then replaces the head
    /// with one etcd transaction conditioned on the head still being `base` and on the
    /// election key still being `lease`'s. Acknowledge the commit only on
    /// [`Publish::Published`]. A transaction whose answer is lost is sent again (the
    /// compare makes at most one of its copies apply) and the head is read, until a
    /// definite answer or `commit_timeout` ([`ClusterError::OutcomeUnknown`]).
    pub fn publish(
        &self,
        lease: &WriterLease,
        base: &HeadVersion,
        commit: CommitId,
        segment: &dyn PartSource,
    ) -> Result<Publish, ClusterError> {
        self.publish_recording(lease, base, commit, segment, None)
    }

    /// [`Repository::publish`], also putting `post_commit` as the new revision's
    /// post-commit record ([`Repository::post_commit_key`]) in the same transaction as
    /// the head: published together or not at all.
    pub fn publish_recording(
        &self,
        lease: &WriterLease,
        base: &HeadVersion,
        commit: CommitId,
        segment: &dyn PartSource,
        post_commit: Option<&PostCommitRecord>,
    ) -> Result<Publish, ClusterError> {
        let revision = base.head.youngest + 1;
        let (next, flushed) = base.head.next(&lease.writer, commit, segment.lengths());
        let record = post_commit.map(|r| (self.post_commit_key(revision), r.encode()));
        let outcome = self.block(self.publish_async(
            lease, base, commit, segment, revision, next, flushed, record,
        ));
        if matches!(outcome, Ok(Publish::LostLease)) {
            lease.lost.store(true, Ordering::SeqCst);
        }
        outcome
    }

    /// Publishes a change that adds no revision (a revision property change): `segment`
    /// is the youngest revision's segment as it is now (the bytes of the one the head
    /// names) followed by `added` bytes appended since; it replaces that segment under
    /// `commit`, by the same conditioned transaction as a commit's. The answer's
    /// `revision` is the youngest revision (unchanged).
    pub fn publish_replacing_youngest(
        &self,
        lease: &WriterLease,
        base: &HeadVersion,
        commit: CommitId,
        segment: &dyn PartSource,
        added: [u64; 5],
    ) -> Result<Publish, ClusterError> {
        let revision = base.head.youngest;
        let next = base.head.replace_youngest(&lease.writer, commit, added);
        let outcome = self.block(self.publish_async(
            lease,
            base,
            commit,
            segment,
            revision,
            next,
            Vec::new(),
            None,
        ));
        if matches!(outcome, Ok(Publish::LostLease)) {
            lease.lost.store(true, Ordering::SeqCst);
        }
        outcome
    }

    #[allow(clippy::too_many_arguments)]
    async fn publish_async(
        &self,
        lease: &WriterLease,
        base: &HeadVersion,
        commit: CommitId,
        segment: &dyn PartSource,
        revision: u64,
        next: Head,
        flushed: Vec<SegmentRef>,
        post_commit: Option<(String, String)>,
    ) -> Result<Publish, ClusterError> {
        let mine = SegmentRef { revision, commit };
        let started = Instant::now();
        let put = self
            .objects
            .put_segment(&self.objects.segment_key(mine), revision, commit, segment)
            .await;
        self.inner.counters.add(Trip::Put, started.elapsed());
        put?;
        if !flushed.is_empty() {
            let index = Index::of(&flushed, base.head.index);
            let key = self.objects.index_key(index.covers);
            let started = Instant::now();
            let put = self.objects.put_index(&key, index.encode()).await;
            self.inner.counters.add(Trip::Put, started.elapsed());
            put?;
        }
        let head_key = self.head_key.as_str();
        let txn = Txn::new()
            .when(vec![
                Compare::mod_revision(head_key, CompareOp::Equal, base.mod_revision),
                Compare::create_revision(
                    self.writer_key.as_str(),
                    CompareOp::Equal,
                    lease.election,
                ),
            ])
            .and_then(
                std::iter::once(TxnOp::put(head_key, next.encode(), None))
                    .chain(post_commit.map(|(key, value)| TxnOp::put(key, value, None)))
                    .collect::<Vec<_>>(),
            )
            .or_else(vec![TxnOp::get(head_key, None)]);
        let started = Instant::now();
        let commit_timeout = self.inner.config.commit_timeout;
        let mut pause = Duration::from_millis(20);
        loop {
            let mut etcd = self.inner.etcd.clone();
            let attempt = etcd.txn(txn.clone());
            let after = self.inner.config.attempt_timeout;
            let sent = Instant::now();
            let answer = etcd_call_within(after, "publish head", head_key, attempt).await;
            self.inner.counters.add(Trip::PublishTxn, sent.elapsed());
            match answer {
                Ok(resp) if resp.succeeded() => {
                    let mod_revision = resp.header().map_or(0, |h| h.revision());
                    return Ok(Publish::Published {
                        revision,
                        head: HeadVersion {
                            head: next,
                            mod_revision,
                        },
                    });
                }
                Ok(resp) => {
                    let current = resp.op_responses().into_iter().find_map(|op| match op {
                        TxnOpResponse::Get(get) => get.kvs().first().cloned(),
                        _ => None,
                    });
                    let Some(kv) = current else {
                        return Err(ClusterError::NoSuchRepository {
                            name: self.name.clone(),
                            key: self.head_key.clone(),
                        });
                    };
                    let current = self.decode_head(kv.value(), kv.mod_revision())?;
                    // An earlier copy of this transaction may have applied, its answer
                    // lost: then the chain names this commit at this revision.
                    if current.head.youngest >= revision
                        && self.segment_of_async(&current.head, revision).await? == mine
                    {
                        return Ok(Publish::Published {
                            revision,
                            head: current,
                        });
                    }
                    if current.mod_revision != base.mod_revision {
                        return Ok(Publish::Moved { current });
                    }
                    return Ok(Publish::LostLease);
                }
                Err(e) => {
                    // No answer, or an error that may have come after the proposal: the
                    // outcome is unknown; the same compare-and-swap again resolves it.
                    let last = e.to_string();
                    if started.elapsed() + pause > commit_timeout {
                        return Err(ClusterError::OutcomeUnknown {
                            revision,
                            commit,
                            after: started.elapsed(),
                            last,
                        });
                    }
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_millis(250));
                }
            }
        }
    }

    /// The segment of `revision` in the chain of `head` (its tail, else its index objects).
    pub fn segment_of(&self, head: &Head, revision: u64) -> Result<SegmentRef, ClusterError> {
        self.block(self.segment_of_async(head, revision))
    }

    async fn segment_of_async(
        &self,
        head: &Head,
        revision: u64,
    ) -> Result<SegmentRef, ClusterError> {
        if let Some(found) = head.in_tail(revision) {
            return Ok(found);
        }
        let mut next = head.index;
        while let Some(at) = next.filter(|_| revision <= head.youngest) {
            let index = self.objects.index(at).await?;
            if let Some(found) = index.get(revision) {
                return Ok(found);
            }
            next = index.previous;
        }
        Err(ClusterError::Corrupt {
            what: "head chain",
            key: self.head_key.clone(),
            detail: format!("no segment for r{revision} (youngest r{})", head.youngest),
        })
    }

    /// Every published segment of `head`'s chain, r0 first.
    pub fn chain(&self, head: &Head) -> Result<Vec<SegmentRef>, ClusterError> {
        self.block(async {
            let mut chain = head.tail.clone();
            let mut next = head.index;
            while let Some(at) = next {
                let index = self.objects.index(at).await?;
                let mut older: Vec<SegmentRef> =
                    (at.first..=at.upto).filter_map(|r| index.get(r)).collect();
                older.append(&mut chain);
                chain = older;
                next = index.previous;
            }
            Ok(chain)
        })
    }

    /// A segment's header (one ranged GET).
    pub fn segment_header(&self, segment: SegmentRef) -> Result<SegmentHeader, ClusterError> {
        self.block(self.objects.segment_header(segment))
    }

    /// Bytes `range` of part `part` ([`crate::PARTS`] order) of a segment: one ranged GET
    /// for the header, one for the bytes.
    pub fn read_part(
        &self,
        segment: SegmentRef,
        part: usize,
        range: Range<u64>,
    ) -> Result<Vec<u8>, ClusterError> {
        self.block(async {
            let header = self.objects.segment_header(segment).await?;
            let key = self.objects.segment_key(segment);
            let at = header
                .object_range(part, range)
                .map_err(|detail| ClusterError::Corrupt {
                    what: "segment read",
                    key: key.clone(),
                    detail,
                })?;
            self.objects.get_range("read segment", &key, at).await
        })
    }

    /// A whole segment, both its CRCs checked.
    pub fn read_segment(&self, segment: SegmentRef) -> Result<Segment, ClusterError> {
        self.block(async {
            let key = self.objects.segment_key(segment);
            let started = Instant::now();
            let bytes = self.objects.get("read segment", &key).await;
            self.inner.counters.add(Trip::SegmentGet, started.elapsed());
            let bytes = bytes?;
            Segment::decode(&bytes, segment).map_err(|e| ClusterError::Corrupt {
                what: "segment",
                key,
                detail: e.to_string(),
            })
        })
    }

    /// Reads `segment` into `sink` part by part, in order, never whole in memory when it is
    /// larger than `chunk-bytes` (ranged GETs); its header and CRC are checked, the CRC
    /// after the last byte: use nothing the sink got unless this returns `Ok`.
    pub fn read_segment_into(
        &self,
        segment: SegmentRef,
        sink: &mut PartSink<'_>,
    ) -> Result<SegmentHeader, ClusterError> {
        self.block(async {
            let started = Instant::now();
            let read = self.objects.read_segment_into(segment, sink).await;
            self.inner.counters.add(Trip::SegmentGet, started.elapsed());
            read
        })
    }

    /// Puts `bytes` under a segment's key if nothing is there (for tests of what is
    /// refused): `Ok(true)` written, `Ok(false)` an object of that length was there.
    pub fn put_raw_segment(
        &self,
        segment: SegmentRef,
        bytes: Vec<u8>,
    ) -> Result<bool, ClusterError> {
        self.block(
            self.objects
                .put_once("put segment", &self.objects.segment_key(segment), bytes),
        )
    }
}

/// Watches `key` (the repository's `wanted` key) from etcd revision `from` (just after
/// the election) until the task is aborted, calling `hook` on a thread of its own for each
/// put: another front end asked for the lease. A watch that fails is made again from the
/// revision after the last event seen; one whose revisions were compacted away counts as a
/// request (giving the lease back when nobody asked costs a campaign, never a commit).
async fn watch_wanted(mut etcd: Client, key: String, lease: i64, from: i64, hook: WantedHook) {
    let mut next = from;
    let call = |who: String| {
        let hook = hook.clone();
        std::thread::spawn(move || hook(lease, &who));
    };
    loop {
        let options = WatchOptions::new().with_start_revision(next);
        if let Ok(mut stream) = etcd.watch(key.as_str(), Some(options)).await {
            while let Ok(Some(answer)) = stream.message().await {
                if answer.canceled() {
                    if answer.compact_revision() > next {
                        next = answer.compact_revision();
                        call(String::new());
                    }
                    break;
                }
                for event in answer.events() {
                    let Some(kv) = event.kv() else { continue };
                    next = next.max(kv.mod_revision() + 1);
                    if event.event_type() == EventType::Put {
                        call(String::from_utf8_lossy(kv.value()).into_owned());
                    }
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Keeps `lease` alive every third of its TTL until the task is aborted; sets `lost` when
/// etcd says the lease is gone. Errors (a killed member, no leader) are retried on a new
/// stream: while they last, the lease may run out, which the publication's compare sees.
pub(crate) async fn keep_alive(
    mut etcd: Client,
    lease: i64,
    ttl: Duration,
    lost: Arc<AtomicBool>,
    valid_until: Arc<AtomicU64>,
) {
    let interval = (ttl / 3).max(Duration::from_millis(100));
    loop {
        let stream = tokio::time::timeout(interval, etcd.lease_keep_alive(lease)).await;
        if let Ok(Ok((mut keeper, mut answers))) = stream {
            loop {
                let sent = Instant::now();
                if !matches!(
                    tokio::time::timeout(interval, keeper.keep_alive()).await,
                    Ok(Ok(()))
                ) {
                    break;
                }
                match tokio::time::timeout(interval, answers.message()).await {
                    Ok(Ok(Some(answer))) if answer.ttl() <= 0 => {
                        lost.store(true, Ordering::SeqCst);
                        return;
                    }
                    Ok(Ok(Some(answer))) => LeaseClock::renewed(
                        &valid_until,
                        sent,
                        Duration::from_secs(u64::try_from(answer.ttl()).unwrap_or(0)),
                    ),
                    _ => break,
                }
                tokio::time::sleep(interval).await;
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
