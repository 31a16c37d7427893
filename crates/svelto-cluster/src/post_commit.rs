//! Post-commit hooks across a failover (docs/cluster.md, "Hooks"): a commit whose front end
//! runs a post-commit hook records that in the publication's own etcd transaction
//! (`PREFIX/post-commit/NAME/REV`, a [`PostCommitRecord`]); the front end deletes the key
//! once the hook ran. A key whose front end is gone (its member key is absent, or on
//! another lease: a process that started since) is claimed, once it is older than
//! `hook-grace`, by another front end: a transaction that creates
//! `PREFIX/post-commit-claims/NAME/REV` on the claimer's member lease iff no claim exists
//! and the key is unchanged; the claimer runs the hook, then deletes both keys. A claimer
//! that dies while the hook runs leaves its claim to go with its lease, and another claims
//! the key again. So every recorded hook runs at least once; twice only when a front end
//! dies (or loses its member lease) while it runs, or when its hook outlives it.

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use etcd_client::{Compare, CompareOp, GetOptions, PutOptions, Txn, TxnOp, TxnOpResponse};

use crate::repo::etcd_call_within;
use crate::{Cluster, ClusterError, Repository};

/// What a publication records for its post-commit hook, the value of
/// `PREFIX/post-commit/NAME/REV` (docs/formats/cluster.md, "Post-commit keys").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PostCommitRecord {
    /// The front end that published the revision and runs its hook (its `front-end` id).
    pub front_end: String,
    /// The etcd lease of that front end's member key when it published (0: the process
    /// was not in the member registry, e.g. an svn+ssh tunnel process): while the member
    /// key `members/FRONT-END` is on this lease, the process that runs the hook lives.
    pub member_lease: i64,
    /// The transaction's name, the hook's third argument.
    pub txn: String,
}

impl PostCommitRecord {
    /// `front-end ID\nmember-lease N\ntxn NAME\n`.
    pub fn encode(&self) -> String {
        format!(
            "front-end {}\nmember-lease {}\ntxn {}\n",
            self.front_end, self.member_lease, self.txn
        )
    }

    /// The record in `bytes`; what is wrong with it otherwise.
    pub fn decode(bytes: &[u8]) -> Result<PostCommitRecord, String> {
        let text = std::str::from_utf8(bytes).map_err(|_| "not UTF-8".to_owned())?;
        let (mut front_end, mut member_lease, mut txn) = (None, None, None);
        for line in text.lines() {
            let (key, value) = line.split_once(' ').unwrap_or((line, ""));
            match key {
                "front-end" => front_end = Some(value.to_owned()),
                "member-lease" => {
                    member_lease = Some(
                        value
                            .parse::<i64>()
                            .map_err(|_| format!("member-lease '{value}' is not a number"))?,
                    )
                }
                "txn" => txn = Some(value.to_owned()),
                // Later versions may add lines.
                _ => {}
            }
        }
        match (front_end, member_lease, txn) {
            (Some(front_end), Some(member_lease), Some(txn))
                if !front_end.is_empty() && !txn.is_empty() =>
            {
                Ok(PostCommitRecord {
                    front_end,
                    member_lease,
                    txn,
                })
            }
            _ => Err(format!(
                "expected 'front-end', 'member-lease' and 'txn' lines, found {text:?}"
            )),
        }
    }
}

/// A recorded post-commit hook not yet known to have run, as a scan found it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PendingPostCommit {
    /// The repository.
    pub name: String,
    /// The revision.
    pub revision: u64,
    /// The record (Err: the value could not be read, with why; such a key is never
    /// claimed).
    pub record: Result<PostCommitRecord, String>,
    /// The key's mod revision (a claim is conditioned on it).
    pub mod_revision: i64,
    /// The front end holding a claim on it, if one does.
    pub claimed_by: Option<String>,
    /// Whether the process that recorded it is still registered (its member key on the
    /// lease recorded).
    pub committer_alive: bool,
}

fn prefix(cluster: &str) -> String {
    format!("{cluster}/post-commit/")
}

fn claims_prefix(cluster: &str) -> String {
    format!("{cluster}/post-commit-claims/")
}

/// `NAME/REV` of a key below a prefix.
fn name_and_revision(rest: &str) -> Option<(String, u64)> {
    let (name, rev) = rest.rsplit_once('/')?;
    let rev = rev.parse().ok().filter(|_| !name.is_empty())?;
    Some((name.to_owned(), rev))
}

impl Repository {
    /// The etcd key recording revision `rev`'s post-commit hook.
    pub fn post_commit_key(&self, rev: u64) -> String {
        format!(
            "{}{}/{rev}",
            prefix(&self.inner.config.etcd_prefix),
            self.name()
        )
    }

    fn post_commit_claim_key(&self, rev: u64) -> String {
        format!(
            "{}{}/{rev}",
            claims_prefix(&self.inner.config.etcd_prefix),
            self.name()
        )
    }

    /// Deletes the record of `rev`'s post-commit hook, and a claim on it (the hook ran).
    pub fn forget_post_commit(&self, rev: u64) -> Result<(), ClusterError> {
        let key = self.post_commit_key(rev);
        let claim = self.post_commit_claim_key(rev);
        let txn = Txn::new().and_then(vec![
            TxnOp::delete(key.as_str(), None),
            TxnOp::delete(claim.as_str(), None),
        ]);
        let mut etcd = self.inner.etcd.clone();
        let after = self.inner.config.request_timeout;
        let started = Instant::now();
        let deleted = self.block(etcd_call_within(
            after,
            "delete post-commit key",
            &key,
            etcd.txn(txn),
        ));
        self.inner
            .counters
            .add(crate::Trip::PostCommitDelete, started.elapsed());
        deleted.map(drop)
    }

    /// Claims `rev`'s post-commit hook for front end `claimer` on its member lease
    /// `lease`: creates the claim key iff no claim exists and the record is still at
    /// `mod_revision`. True when claimed.
    pub fn claim_post_commit(
        &self,
        rev: u64,
        mod_revision: i64,
        claimer: &str,
        lease: i64,
    ) -> Result<bool, ClusterError> {
        let key = self.post_commit_key(rev);
        let claim = self.post_commit_claim_key(rev);
        let txn = Txn::new()
            .when(vec![
                Compare::create_revision(claim.as_str(), CompareOp::Equal, 0),
                Compare::mod_revision(key.as_str(), CompareOp::Equal, mod_revision),
            ])
            .and_then(vec![TxnOp::put(
                claim.as_str(),
                claimer,
                Some(PutOptions::new().with_lease(lease)),
            )]);
        let mut etcd = self.inner.etcd.clone();
        let after = self.inner.config.request_timeout;
        self.block(etcd_call_within(
            after,
            "claim post-commit hook",
            &claim,
            etcd.txn(txn),
        ))
        .map(|resp| resp.succeeded())
    }
}

impl Cluster {
    /// Every recorded post-commit hook of the cluster not yet known to have run, with its
    /// claim and whether the process that recorded it is alive: one etcd transaction
    /// reading the records, the claims and the member registry.
    pub fn pending_post_commits(&self) -> Result<Vec<PendingPostCommit>, ClusterError> {
        let cluster = &self.inner.config.etcd_prefix;
        let (records, claims, members) = (
            prefix(cluster),
            claims_prefix(cluster),
            format!("{cluster}/members/"),
        );
        let txn = Txn::new().and_then(
            [&records, &claims, &members]
                .iter()
                .map(|p| TxnOp::get(p.as_str(), Some(GetOptions::new().with_prefix())))
                .collect::<Vec<_>>(),
        );
        let mut etcd = self.inner.etcd.clone();
        let after = self.inner.config.request_timeout;
        let resp = crate::block_on(
            &self.inner.runtime,
            etcd_call_within(after, "list post-commit keys", &records, etcd.txn(txn)),
        )?;
        let mut ranges = resp.op_responses().into_iter().filter_map(|op| match op {
            TxnOpResponse::Get(get) => Some(get.kvs().to_vec()),
            _ => None,
        });
        let (Some(found), Some(claimed), Some(registered)) =
            (ranges.next(), ranges.next(), ranges.next())
        else {
            return Err(ClusterError::Corrupt {
                what: "etcd answer",
                key: records,
                detail: "fewer than three ranges".into(),
            });
        };
        let below = |kv: &etcd_client::KeyValue, p: &str| {
            String::from_utf8_lossy(kv.key())
                .strip_prefix(p)
                .map(str::to_owned)
        };
        let claims: HashMap<String, String> = claimed
            .iter()
            .filter_map(|kv| {
                let rest = below(kv, &claims)?;
                Some((rest, String::from_utf8_lossy(kv.value()).into_owned()))
            })
            .collect();
        let leases: HashMap<String, i64> = registered
            .iter()
            .filter_map(|kv| Some((below(kv, &members)?, kv.lease())))
            .collect();
        Ok(found
            .iter()
            .filter_map(|kv| {
                let rest = below(kv, &records)?;
                let (name, revision) = name_and_revision(&rest)?;
                let record = PostCommitRecord::decode(kv.value());
                let committer_alive = record.as_ref().is_ok_and(|r| {
                    r.member_lease != 0 && leases.get(&r.front_end) == Some(&r.member_lease)
                });
                Some(PendingPostCommit {
                    name,
                    revision,
                    record,
                    mod_revision: kv.mod_revision(),
                    claimed_by: claims.get(&rest).cloned(),
                    committer_alive,
                })
            })
            .collect())
    }
}

/// What a scanning front end knows of one record besides etcd's view.
struct Here<'a> {
    /// Its id.
    front_end: &'a str,
    /// Its member lease now (0: not registered).
    lease: i64,
    /// Whether this process published the record's revision and its hook is to run, or
    /// runs, here ([`PostCommits::publishing`]).
    in_flight: bool,
    /// Whether the hook ran here and the record's deletion is to be tried again.
    undeleted: bool,
}

/// Whether the scanning front end may claim the record `p` (read as `record`), first seen
/// `age` ago. Never the hook of a publication of this process whose hook it runs or is
/// about to run, whatever the member lease says meanwhile (a front end whose member key
/// was registered again since it published would otherwise take its own record for a
/// gone front end's); never one claimed, run here already, or younger than `grace`; a
/// record of a live front end only when it is this process's (a publication whose answer
/// was lost but which etcd applied).
fn claimable(
    p: &PendingPostCommit,
    record: &PostCommitRecord,
    here: &Here<'_>,
    age: Duration,
    grace: Duration,
) -> bool {
    let mine =
        here.lease != 0 && record.front_end == here.front_end && record.member_lease == here.lease;
    !((p.committer_alive && !mine)
        || here.in_flight
        || p.claimed_by.is_some()
        || here.undeleted
        || age < grace
        || record.front_end.is_empty())
}

/// Runs the post-commit hooks a front end claims: given by `svelto serve`, which knows
/// where a repository's hooks and their environment are (`ROOT/NAME`, its
/// svnserve.conf's `hooks-env`).
pub trait PostCommitRunner {
    /// Whether this front end has a post-commit hook for repository `name` (a front end
    /// without one leaves the record to one that has).
    fn has_hook(&self, name: &str) -> bool;
    /// Runs it as `post-commit REPOS REV TXN-NAME`: None when it succeeded, else what the
    /// failure said.
    fn run(&self, name: &str, rev: u64, txn: &str) -> Option<String>;
}

/// The post-commit counters of one front end, for `svelto serve --metrics-listen`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PostCommitStats {
    /// Hooks of revisions recorded by another front end (gone) run here by claim.
    pub run_by_claim: u64,
    /// Of those, the ones whose hook failed (each logged).
    pub failed_by_claim: u64,
    /// Records not yet known to have run, at the last scan.
    pub pending: u64,
    /// Records of hooks this front end ran whose deletion failed and is tried again.
    pub undeleted: u64,
}

impl PostCommitStats {
    /// The counters in Prometheus' text exposition format.
    pub fn render(&self) -> String {
        format!(
            "# HELP svelto_cluster_post_commit_claimed_total Post-commit hooks of revisions \
             committed through a front end that went away before its hook ran, run on this \
             front end by claim, by outcome.\n\
             # TYPE svelto_cluster_post_commit_claimed_total counter\n\
             svelto_cluster_post_commit_claimed_total{{result=\"ok\"}} {}\n\
             svelto_cluster_post_commit_claimed_total{{result=\"failed\"}} {}\n\
             # HELP svelto_cluster_post_commit_pending Recorded post-commit hooks not yet \
             known to have run, at this front end's last scan.\n\
             # TYPE svelto_cluster_post_commit_pending gauge\n\
             svelto_cluster_post_commit_pending {}\n\
             # HELP svelto_cluster_post_commit_undeleted Records of post-commit hooks run \
             here whose deletion failed (tried again at each scan).\n\
             # TYPE svelto_cluster_post_commit_undeleted gauge\n\
             svelto_cluster_post_commit_undeleted {}\n",
            self.run_by_claim - self.failed_by_claim,
            self.failed_by_claim,
            self.pending,
            self.undeleted
        )
    }
}

/// A front end's side of the post-commit records, shared by its repositories' handles
/// and writers and its scan.
pub(crate) struct PostCommits {
    /// This front end's id.
    pub(crate) front_end: String,
    /// How old a record of a front end that is gone must be before it is claimed.
    pub(crate) grace: Duration,
    /// The lease of this front end's member key (0 while not registered), once it joined.
    lease: Mutex<Option<Arc<AtomicI64>>>,
    /// Records of hooks run here whose deletion failed: (repository, revision).
    undeleted: Mutex<BTreeSet<(String, u64)>>,
    /// Records this process published and whose hook it is about to run or runs.
    in_flight: Mutex<BTreeSet<(String, u64)>>,
    /// When this front end first saw each record (its key), for `grace`.
    seen: Mutex<HashMap<String, Instant>>,
    stats: Mutex<PostCommitStats>,
}

impl PostCommits {
    pub(crate) fn new(front_end: &str, grace: Duration) -> PostCommits {
        PostCommits {
            front_end: front_end.to_owned(),
            grace,
            lease: Mutex::default(),
            undeleted: Mutex::default(),
            in_flight: Mutex::default(),
            seen: Mutex::default(),
            stats: Mutex::default(),
        }
    }

    pub(crate) fn set_lease(&self, lease: Arc<AtomicI64>) {
        *self.lease.lock().unwrap_or_else(|e| e.into_inner()) = Some(lease);
    }

    /// The member lease now (0: not registered).
    pub(crate) fn member_lease(&self) -> i64 {
        self.lease
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .map_or(0, |l| l.load(Ordering::SeqCst))
    }

    pub(crate) fn stats(&self) -> PostCommitStats {
        let mut stats = *self.stats.lock().unwrap_or_else(|e| e.into_inner());
        stats.undeleted = self
            .undeleted
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .len() as u64;
        stats
    }

    /// This process is about to publish `rev` of repository `name` with a post-commit
    /// record: once published, its hook runs here next (until [`PostCommits::ran`] or
    /// [`PostCommits::not_published`], the scan leaves the record alone). Called before
    /// the publication's transaction is sent: the record is in etcd from the moment etcd
    /// applies it, and the answer may come seconds later (an etcd leader election), long
    /// enough for this front end's own scan to find the record older than `hook-grace`
    /// and run the hook by claim while the commit then runs it too.
    pub(crate) fn publishing(&self, name: &str, rev: u64) {
        self.in_flight
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert((name.to_owned(), rev));
    }

    /// The publication of `rev` of repository `name` that [`PostCommits::publishing`]
    /// announced did not happen, or its outcome is unknown (the commit is refused, its hook
    /// does not run here): a record etcd may hold is left to the scan.
    pub(crate) fn not_published(&self, name: &str, rev: u64) {
        self.in_flight
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&(name.to_owned(), rev));
    }

    /// The hook of `rev` of `repository` ran here: its record goes (now, or at a later
    /// scan if etcd cannot delete it now).
    pub(crate) fn ran(&self, repository: &Repository, rev: u64, log: &dyn Fn(&str)) {
        let forgotten = repository.forget_post_commit(rev);
        let key = (repository.name().to_owned(), rev);
        if let Err(e) = forgotten {
            log(&format!(
                "cluster: {}: r{rev}'s post-commit hook ran, but its key could not be deleted \
                 ({e}); tried again at the next scan",
                repository.name()
            ));
            self.undeleted
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(key.clone());
        }
        self.in_flight
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&key);
    }

    /// One scan: deletes the records of hooks run here that could not be deleted before,
    /// then claims and runs, one at a time, the hooks recorded by front ends that are gone
    /// and older than the grace (as this front end saw them), and this process's own
    /// records older than the grace whose hook it is not running (a publication whose
    /// answer was lost, so that the commit failed, but which etcd applied). Answers how
    /// many ran here.
    pub(crate) fn scan(
        &self,
        cluster: &Cluster,
        runner: &dyn PostCommitRunner,
        log: &dyn Fn(&str),
    ) -> usize {
        let undeleted: Vec<(String, u64)> = self
            .undeleted
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .cloned()
            .collect();
        for (name, rev) in undeleted {
            if cluster.repository(&name).forget_post_commit(rev).is_ok() {
                self.undeleted
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(&(name, rev));
            }
        }
        let pending = match cluster.pending_post_commits() {
            Ok(pending) => pending,
            Err(e) => {
                log(&format!("cluster: post-commit scan: {e}"));
                return 0;
            }
        };
        let lease = self.member_lease();
        let now = Instant::now();
        let ripe: Vec<PendingPostCommit> = {
            let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
            let present: BTreeSet<String> = pending
                .iter()
                .map(|p| format!("{}/{}", p.name, p.revision))
                .collect();
            seen.retain(|key, _| present.contains(key));
            let mut ripe = Vec::new();
            for p in &pending {
                let first = *seen
                    .entry(format!("{}/{}", p.name, p.revision))
                    .or_insert(now);
                let Ok(record) = &p.record else {
                    if first == now {
                        // Logged once per front end (while it stays there).
                        if let Err(why) = &p.record {
                            log(&format!(
                                "cluster: {}: r{}'s post-commit key is unreadable ({why}); left \
                                 alone",
                                p.name, p.revision
                            ));
                        }
                    }
                    continue;
                };
                let key = (p.name.clone(), p.revision);
                let here = Here {
                    front_end: &self.front_end,
                    lease,
                    in_flight: self
                        .in_flight
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .contains(&key),
                    undeleted: self
                        .undeleted
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .contains(&key),
                };
                if claimable(p, record, &here, now.duration_since(first), self.grace) {
                    ripe.push(p.clone());
                }
            }
            ripe
        };
        self.stats.lock().unwrap_or_else(|e| e.into_inner()).pending = pending.len() as u64;
        if lease == 0 {
            return 0;
        }
        let mut ran = 0;
        for p in ripe {
            let Ok(record) = &p.record else { continue };
            if !runner.has_hook(&p.name) {
                continue;
            }
            let repository = cluster.repository(&p.name);
            match repository.claim_post_commit(p.revision, p.mod_revision, &self.front_end, lease) {
                Ok(true) => {}
                Ok(false) => continue,
                Err(e) => {
                    log(&format!(
                        "cluster: {}: claiming r{}'s post-commit hook: {e}",
                        p.name, p.revision
                    ));
                    continue;
                }
            }
            let age = self
                .seen
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get(&format!("{}/{}", p.name, p.revision))
                .map_or(Duration::ZERO, |first| first.elapsed());
            log(&format!(
                "cluster: {}: r{}'s post-commit hook claimed from front end '{}' ({}; its \
                 key seen here {:.1} s ago): running it here as transaction {}",
                p.name,
                p.revision,
                record.front_end,
                if p.committer_alive {
                    "this process, whose commit failed after etcd applied it"
                } else {
                    "gone"
                },
                age.as_secs_f64(),
                record.txn
            ));
            let warning = runner.run(&p.name, p.revision, &record.txn);
            {
                let mut stats = self.stats.lock().unwrap_or_else(|e| e.into_inner());
                stats.run_by_claim += 1;
                if warning.is_some() {
                    stats.failed_by_claim += 1;
                }
            }
            match &warning {
                None => log(&format!(
                    "cluster: {}: r{}'s post-commit hook ran here by claim",
                    p.name, p.revision
                )),
                Some(w) => log(&format!(
                    "cluster: {}: r{}'s post-commit hook, run here by claim, failed: {}",
                    p.name,
                    p.revision,
                    w.trim_end()
                )),
            }
            self.ran(&repository, p.revision, log);
            ran += 1;
        }
        ran
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_read_back_and_bad_ones_are_named() {
        let r = PostCommitRecord {
            front_end: "a".into(),
            member_lease: 7_587_869_401_234,
            txn: "41-00abc0123456789abcdef".into(),
        };
        assert_eq!(
            r.encode(),
            "front-end a\nmember-lease 7587869401234\ntxn 41-00abc0123456789abcdef\n"
        );
        assert_eq!(PostCommitRecord::decode(r.encode().as_bytes()), Ok(r));
        let e = PostCommitRecord::decode(b"front-end a\ntxn 1-x\n").expect_err("refused");
        assert!(e.contains("expected"), "{e}");
        let e = PostCommitRecord::decode(b"front-end a\nmember-lease x\ntxn 1-x\n")
            .expect_err("refused");
        assert!(e.contains("not a number"), "{e}");
        assert!(PostCommitRecord::decode(b"\xff").is_err());
    }

    /// The claim decision of a scan, on hand-made records: the case of a double run was a
    /// front end's own scan claiming the record of a publication whose hook it was about
    /// to run (the record applied by etcd, its answer not yet back) or ran (its member key
    /// registered again on a new lease meanwhile).
    #[test]
    fn a_scan_never_claims_a_hook_its_own_process_runs_or_is_about_to_run() {
        let grace = Duration::from_secs(1);
        let old = Duration::from_secs(5);
        let record = PostCommitRecord {
            front_end: "a".into(),
            member_lease: 41,
            txn: "7-abc".into(),
        };
        let pending = |alive: bool, claimed: Option<&str>| PendingPostCommit {
            name: "proj".into(),
            revision: 7,
            record: Ok(record.clone()),
            mod_revision: 99,
            claimed_by: claimed.map(str::to_owned),
            committer_alive: alive,
        };
        let here = |front_end, lease, in_flight, undeleted| Here {
            front_end,
            lease,
            in_flight,
            undeleted,
        };
        // A's own publication, its hook about to run or running: not claimed by A's scan,
        // on its lease (the answer of the publication not back yet) or on a new one (its
        // member key registered again since).
        for lease in [41, 42] {
            let alive = lease == 41;
            assert!(!claimable(
                &pending(alive, None),
                &record,
                &here("a", lease, true, false),
                old,
                grace
            ));
        }
        // Not in flight: A's own record older than the grace is claimed by A (a
        // publication whose answer was lost), and by A on a new lease (A's old self gone
        // as far as etcd can tell).
        assert!(claimable(
            &pending(true, None),
            &record,
            &here("a", 41, false, false),
            old,
            grace
        ));
        assert!(claimable(
            &pending(false, None),
            &record,
            &here("a", 42, false, false),
            old,
            grace
        ));
        // Another front end: never while A is registered on the record's lease; once A is
        // gone, only past the grace, unclaimed, and not yet run there.
        assert!(!claimable(
            &pending(true, None),
            &record,
            &here("b", 50, false, false),
            old,
            grace
        ));
        assert!(claimable(
            &pending(false, None),
            &record,
            &here("b", 50, false, false),
            old,
            grace
        ));
        assert!(!claimable(
            &pending(false, None),
            &record,
            &here("b", 50, false, false),
            Duration::from_millis(500),
            grace
        ));
        assert!(!claimable(
            &pending(false, Some("c")),
            &record,
            &here("b", 50, false, false),
            old,
            grace
        ));
        assert!(!claimable(
            &pending(false, None),
            &record,
            &here("b", 50, false, true),
            old,
            grace
        ));
    }

    #[test]
    fn keys_name_their_repository_and_revision() {
        assert_eq!(name_and_revision("proj/12"), Some(("proj".into(), 12)));
        assert_eq!(
            name_and_revision("deep/post-commit/3/7"),
            Some(("deep/post-commit/3".into(), 7))
        );
        assert_eq!(name_and_revision("proj/head"), None);
        assert_eq!(name_and_revision("/4"), None);
        assert_eq!(name_and_revision("4"), None);
    }
}
