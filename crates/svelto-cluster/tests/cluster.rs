//! svelto-cluster against the real components (docs/cluster.md): three etcd members
//! (Debian's etcd-server) and SeaweedFS's S3 gateway (weed, built by scripts/s3-server),
//! started on 127.0.0.1 by `svelto_testkit::cluster`; they fail loudly when missing.
//! Timings are printed (`-- --nocapture`) for docs/cluster.md, never asserted tightly.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use svelto_cluster::{
    Cluster, ClusterConfig, ClusterError, CommitId, HeadVersion, Publish, Repository, Segment,
    SegmentRef, WriterLease,
};
use svelto_testkit::cluster::{EtcdCluster, S3Server, S3_ACCESS_KEY, S3_REGION, S3_SECRET_KEY};
use svelto_testkit::tempdir;

struct Rig {
    etcd: EtcdCluster,
    s3: S3Server,
    _dir: tempfile::TempDir,
}

fn rig() -> Rig {
    let dir = tempdir();
    let etcd = EtcdCluster::start(dir.path(), 3);
    let s3 = S3Server::start(dir.path(), "svelto");
    Rig {
        etcd,
        s3,
        _dir: dir,
    }
}

fn config_of(etcd: Vec<String>, s3: &str, bucket: &str) -> ClusterConfig {
    let mut config = ClusterConfig::new(etcd, "/svelto/test", s3, bucket);
    config.s3_region = S3_REGION.to_owned();
    config.s3_access_key = S3_ACCESS_KEY.to_owned();
    config.s3_secret_key = S3_SECRET_KEY.to_owned();
    // weed grows its first volumes on the first PUT (8 s measured under load).
    config.request_timeout = Duration::from_secs(3);
    config
}

fn config(rig: &Rig) -> ClusterConfig {
    config_of(rig.etcd.endpoints(), &rig.s3.endpoint(), rig.s3.bucket())
}

fn connect(config: &ClusterConfig) -> Cluster {
    Cluster::connect(config.clone()).unwrap_or_else(|e| panic!("connect: {e}"))
}

fn new_id() -> CommitId {
    CommitId(rand::random())
}

/// A segment whose bytes follow from its commit id, so any reader can check them.
fn segment_of(commit: CommitId, size: usize) -> Segment {
    let seed = u32::from_le_bytes(commit.0[..4].try_into().expect("4 bytes"));
    let bytes = |n: usize, salt: u32| -> Vec<u8> {
        (0..n)
            .map(|i| ((i as u32).wrapping_mul(2654435761) ^ seed ^ salt).to_le_bytes()[3])
            .collect()
    };
    Segment {
        parts: [
            bytes(size, 1),
            bytes(size / 7, 2),
            bytes(40, 3),
            bytes(16, 4),
            bytes(size % 13, 5),
        ],
    }
}

/// Makes the repository (or fails the test), with revision 0 from `writer`.
fn create(repo: &Repository, writer: &str) -> HeadVersion {
    let commit = new_id();
    let started = Instant::now();
    let mut last = None;
    // The first PUT into weed's bucket may take seconds (it grows its volumes).
    while started.elapsed() < Duration::from_secs(60) {
        match repo.create(writer, commit, &segment_of(commit, 100)) {
            Ok(head) => return head,
            Err(e) if e.is_unavailable() => last = Some(e),
            Err(e) => panic!("create {}: {e}", repo.name()),
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    panic!("create {}: {last:?}", repo.name());
}

fn campaign_until_won(repo: &Repository, writer: &str, within: Duration) -> WriterLease {
    let started = Instant::now();
    loop {
        match repo.campaign(writer) {
            Ok(Some(lease)) => return lease,
            Ok(None) => {}
            Err(e) if e.is_unavailable() => {}
            Err(e) => panic!("campaign: {e}"),
        }
        assert!(
            started.elapsed() < within,
            "{writer} did not win the writer lease in {within:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

/// Checks the repository after a run: its head's chain holds r0..=youngest, every
/// acknowledged (revision, commit) is in it, and every segment it names reads back whole
/// with the bytes its commit id gives.
fn check_chain(repo: &Repository, acked: &BTreeMap<u64, CommitId>, size: usize) -> HeadVersion {
    let head = retry(|| repo.head());
    let chain = retry(|| repo.chain(&head.head));
    let revisions: Vec<u64> = chain.iter().map(|s| s.revision).collect();
    let expected: Vec<u64> = (0..=head.head.youngest).collect();
    assert_eq!(revisions, expected, "the chain is r0..=youngest");
    for (&revision, &commit) in acked {
        assert_eq!(
            chain[revision as usize].commit, commit,
            "acknowledged r{revision} is in the head chain with its commit"
        );
    }
    for segment in &chain[1..] {
        let read = retry(|| repo.read_segment(*segment));
        assert!(
            read == segment_of(segment.commit, size),
            "r{} reads back whole",
            segment.revision
        );
    }
    head
}

/// Retries `f` while a component is unavailable (after a kill), up to 30 s.
fn retry<T>(mut f: impl FnMut() -> Result<T, ClusterError>) -> T {
    let started = Instant::now();
    loop {
        match f() {
            Ok(value) => return value,
            Err(e) if e.is_unavailable() && started.elapsed() < Duration::from_secs(30) => {
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(e) => panic!("{e}"),
        }
    }
}

#[test]
fn a_writer_publishes_revisions_that_another_front_end_reads_at_once() {
    let rig = rig();
    let config = config(&rig);
    let (a, b) = (connect(&config), connect(&config));
    let (repo_a, repo_b) = (a.repository("r"), b.repository("r"));
    let mut head = create(&repo_a, "fe-a");
    let again = repo_b.create("fe-b", new_id(), &segment_of(new_id(), 10));
    assert!(matches!(again, Err(ClusterError::Exists(_))), "{again:?}");

    let lease = campaign_until_won(&repo_a, "fe-a", Duration::from_secs(10));
    assert!(
        repo_b.campaign("fe-b").expect("campaign").is_none(),
        "a second writer must not win while the first holds the lease"
    );
    assert_eq!(repo_b.writer().expect("writer"), Some("fe-a".to_owned()));

    // 150 revisions: the head's tail (64) moves to index objects twice.
    let n = 150;
    let mut acked = BTreeMap::new();
    let (mut publish, mut visible) = (Vec::new(), Vec::new());
    for _ in 0..n {
        let commit = new_id();
        let segment = segment_of(commit, 3000);
        let t = Instant::now();
        let outcome = repo_a
            .publish(&lease, &head, commit, &segment)
            .unwrap_or_else(|e| panic!("publish: {e}"));
        let acknowledged = Instant::now();
        publish.push(acknowledged - t);
        let Publish::Published {
            revision,
            head: new,
        } = outcome
        else {
            panic!("the only writer's publication must succeed: {outcome:?}");
        };
        assert_eq!(revision, head.head.youngest + 1);
        acked.insert(revision, commit);
        // Read-your-writes across front ends: B's next linearizable read sees it.
        let seen = repo_b.head().expect("B reads the head");
        visible.push(acknowledged.elapsed());
        assert!(
            seen.head.youngest >= revision,
            "front end B saw r{} after r{revision} was acknowledged",
            seen.head.youngest
        );
        head = new;
    }
    publish.sort();
    visible.sort();
    eprintln!(
        "publish (segment PUT + head transaction) over {n}: median {}, p99 {}, max {}; \
         acknowledgement to visibility on B (one linearizable read): median {}, p99 {}",
        ms(percentile(&publish, 0.5)),
        ms(percentile(&publish, 0.99)),
        ms(publish[publish.len() - 1]),
        ms(percentile(&visible, 0.5)),
        ms(percentile(&visible, 0.99)),
    );
    assert_eq!(head.head.youngest, n);
    assert!(head.head.index.is_some(), "the tail moved to index objects");
    check_chain(&repo_b, &acked, 3000);

    // Ranged reads: a part of a segment named by an index object, and one in the tail.
    for revision in [5, n] {
        let segment = repo_b.segment_of(&head.head, revision).expect("segment_of");
        let want = segment_of(segment.commit, 3000);
        let got = repo_b.read_part(segment, 1, 100..300).expect("ranged read");
        assert_eq!(got, want.parts[1][100..300]);
        let got = repo_b.read_part(segment, 4, 0..want.parts[4].len() as u64);
        assert_eq!(got.expect("whole part"), want.parts[4]);
        let past = repo_b
            .read_part(segment, 2, 30..41)
            .expect_err("past the end");
        assert!(
            past.to_string()
                .contains("bytes 30..41 of part meta (40 bytes)"),
            "{past}"
        );
    }
    // Keys are never rewritten: another object under a published segment's key is refused.
    let published = repo_b.segment_of(&head.head, 7).expect("segment_of");
    let refused = repo_b.put_raw_segment(published, b"other bytes".to_vec());
    let refused = refused.expect_err("a second object under a segment key");
    assert!(
        refused.to_string().contains("is there already"),
        "{refused}"
    );
    assert!(
        repo_b.read_segment(published).expect("still readable")
            == segment_of(published.commit, 3000)
    );
    let missing = SegmentRef {
        revision: 3,
        commit: new_id(),
    };
    let e = repo_b.read_segment(missing).expect_err("no such segment");
    assert!(e.to_string().contains(&repo_b.segment_key(missing)), "{e}");

    // Resigning hands the lease over at once.
    lease.resign().expect("resign");
    let lease_b = campaign_until_won(&repo_b, "fe-b", Duration::from_secs(1));
    assert_eq!(lease_b.writer(), "fe-b");
}

#[test]
fn concurrent_publishers_win_each_revision_once() {
    let rig = rig();
    let config = config(&rig);
    let cluster = connect(&config);
    let repo = cluster.repository("concurrent");
    let base = create(&repo, "fe-a");

    // Two front ends campaign at once: exactly one wins.
    let other = connect(&config);
    let other_repo = other.repository("concurrent");
    let (x, y) = std::thread::scope(|s| {
        let x = s.spawn(|| repo.campaign("fe-a").expect("campaign"));
        let y = s.spawn(|| other_repo.campaign("fe-b").expect("campaign"));
        (x.join().expect("join"), y.join().expect("join"))
    });
    assert!(x.is_some() != y.is_some(), "exactly one campaign wins");
    let lease = x.or(y).expect("one won");
    let repo = if lease.writer() == "fe-a" {
        repo
    } else {
        other_repo
    };

    // Two attempts built on the same head: one is published, the other finds it moved.
    let (c1, c2) = (new_id(), new_id());
    let first = repo
        .publish(&lease, &base, c1, &segment_of(c1, 500))
        .expect("publish");
    let second = repo
        .publish(&lease, &base, c2, &segment_of(c2, 500))
        .expect("publish");
    assert!(
        matches!(first, Publish::Published { revision: 1, .. }),
        "{first:?}"
    );
    let Publish::Moved { current } = second else {
        panic!("the second attempt on the same head must find it moved: {second:?}");
    };
    assert_eq!(current.head.youngest, 1);
    assert_eq!(current.head.commit(), c1);

    // Four threads publish concurrently, each on the head it last saw.
    let (threads, each) = (4, 12);
    let acks = Mutex::new(BTreeMap::new());
    let moved = Mutex::new(0u32);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                let mut seen = repo.head().expect("head");
                let mut mine = 0;
                while mine < each {
                    let commit = new_id();
                    match repo.publish(&lease, &seen, commit, &segment_of(commit, 500)) {
                        Ok(Publish::Published { revision, head }) => {
                            let previous = acks.lock().expect("lock").insert(revision, commit);
                            assert!(previous.is_none(), "r{revision} acknowledged twice");
                            seen = head;
                            mine += 1;
                        }
                        Ok(Publish::Moved { current }) => {
                            *moved.lock().expect("lock") += 1;
                            seen = current;
                        }
                        other => panic!("unexpected outcome: {other:?}"),
                    }
                }
            });
        }
    });
    let mut acked = acks.into_inner().expect("lock");
    acked.insert(1, c1);
    let moved = moved.into_inner().expect("lock");
    eprintln!(
        "{threads} concurrent publishers, {each} revisions each: {moved} attempts found the \
         head moved"
    );
    let total = (threads * each + 1) as u64;
    assert_eq!(acked.len() as u64, total);
    let head = check_chain(&repo, &acked, 500);
    assert_eq!(
        head.head.youngest, total,
        "no revision published unacknowledged"
    );
}

/// Publishes until `stop`, campaigning whenever it holds no lease, recording every
/// acknowledged (revision, commit) and every error; returns them.
fn publisher(
    repo: &Repository,
    writer: &str,
    size: usize,
    stop: &AtomicBool,
    acks: &Mutex<BTreeMap<u64, CommitId>>,
) -> Vec<String> {
    let mut errors = Vec::new();
    let mut lease: Option<WriterLease> = None;
    let mut seen: Option<HeadVersion> = None;
    while !stop.load(Ordering::SeqCst) {
        let Some(held) = lease.as_ref() else {
            match repo.campaign(writer) {
                Ok(won) => lease = won,
                Err(e) => errors.push(format!("campaign: {e}")),
            }
            std::thread::sleep(Duration::from_millis(20));
            continue;
        };
        let Some(base) = seen.as_ref() else {
            match repo.head() {
                Ok(head) => seen = Some(head),
                Err(e) => {
                    errors.push(format!("head: {e}"));
                    std::thread::sleep(Duration::from_millis(50));
                }
            }
            continue;
        };
        let commit = new_id();
        match repo.publish(held, base, commit, &segment_of(commit, size)) {
            Ok(Publish::Published { revision, head }) => {
                acks.lock().expect("lock").insert(revision, commit);
                seen = Some(head);
            }
            Ok(Publish::Moved { current }) => seen = Some(current),
            Ok(Publish::LostLease) => {
                errors.push("lost the writer lease".to_owned());
                lease = None;
            }
            Err(e) => {
                assert!(e.is_unavailable(), "only unavailability is expected: {e}");
                errors.push(e.to_string());
                seen = None;
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }
    if let Some(lease) = lease {
        let _ = lease.resign();
    }
    errors
}

fn wait_for_acks(acks: &Mutex<BTreeMap<u64, CommitId>>, more: usize, within: Duration) {
    let start = acks.lock().expect("lock").len();
    let started = Instant::now();
    while acks.lock().expect("lock").len() < start + more {
        assert!(
            started.elapsed() < within,
            "fewer than {more} acknowledgements in {within:?}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn every_acknowledged_revision_survives_kill_9_of_the_etcd_leader() {
    let mut rig = rig();
    let config = config(&rig);
    let cluster = connect(&config);
    let repo = cluster.repository("etcd-kills");
    create(&repo, "fe-a");
    let stop = AtomicBool::new(false);
    let acks = Mutex::new(BTreeMap::new());
    let errors = std::thread::scope(|s| {
        let worker = s.spawn(|| publisher(&repo, "fe-a", 2000, &stop, &acks));
        for round in 0..3 {
            wait_for_acks(&acks, 10, Duration::from_secs(60));
            let leader = rig.etcd.wait_leader(Duration::from_secs(30));
            let before = acks.lock().expect("lock").len();
            let killed = Instant::now();
            rig.etcd.kill(leader);
            wait_for_acks(&acks, 1, Duration::from_secs(60));
            eprintln!(
                "round {round}: kill -9 of etcd leader m{leader} -> next acknowledged \
                 publication after {} ({before} acknowledged before)",
                ms(killed.elapsed())
            );
            wait_for_acks(&acks, 5, Duration::from_secs(60));
            rig.etcd.restart(leader);
        }
        wait_for_acks(&acks, 5, Duration::from_secs(60));
        stop.store(true, Ordering::SeqCst);
        worker.join().expect("the publisher")
    });
    let acked = acks.into_inner().expect("lock");
    eprintln!(
        "{} acknowledged across 3 leader kills; {} errors: {:?}",
        acked.len(),
        errors.len(),
        errors.iter().take(5).collect::<Vec<_>>()
    );
    check_chain(&repo, &acked, 2000);
}

#[test]
fn no_acknowledged_revision_is_lost_when_the_object_store_is_killed() {
    let mut rig = rig();
    let config = config(&rig);
    let cluster = connect(&config);
    let repo = cluster.repository("s3-kills");
    create(&repo, "fe-a");
    let size = 1 << 20;
    let stop = AtomicBool::new(false);
    let acks = Mutex::new(BTreeMap::new());
    let errors = std::thread::scope(|s| {
        let worker = s.spawn(|| publisher(&repo, "fe-a", size, &stop, &acks));
        for round in 0..2 {
            wait_for_acks(&acks, 5, Duration::from_secs(60));
            // Segments of about 1.2 MiB: the kill lands in the middle of one's PUT or
            // between PUT and publication most of the time.
            rig.s3.kill();
            let killed = acks.lock().expect("lock").len();
            std::thread::sleep(Duration::from_millis(1500));
            let during = acks.lock().expect("lock").len();
            assert!(
                during <= killed + 1,
                "no publication can complete while the object store is down \
                 ({killed} then {during})"
            );
            let restarted = Instant::now();
            rig.s3.restart();
            wait_for_acks(&acks, 1, Duration::from_secs(60));
            eprintln!(
                "round {round}: object store restarted -> next acknowledged publication \
                 after {}",
                ms(restarted.elapsed())
            );
        }
        wait_for_acks(&acks, 3, Duration::from_secs(60));
        stop.store(true, Ordering::SeqCst);
        worker.join().expect("the publisher")
    });
    let acked = acks.into_inner().expect("lock");
    let object_store_errors = errors.iter().filter(|e| e.contains("object store")).count();
    eprintln!(
        "{} acknowledged across 2 object store kills; {} errors naming the object store: {:?}",
        acked.len(),
        object_store_errors,
        errors.iter().rev().take(4).collect::<Vec<_>>()
    );
    assert!(
        object_store_errors > 0,
        "the publisher saw the object store down: {errors:?}"
    );
    check_chain(&repo, &acked, size);
}

/// The child side of the failover test: runs only when the parent sets SVELTO_CLUSTER_CHILD.
/// It wins the writer lease, then publishes (mode "publish": until killed; mode "stall":
/// once, then waits for a line on stdin and publishes on the head it saw last), writing one
/// line per event on stdout: `writer`, `ack REV COMMIT`, `ready`, `outcome WORD`.
#[test]
fn child_writer() {
    let Ok(mode) = std::env::var("SVELTO_CLUSTER_CHILD") else {
        return;
    };
    let var = |name: &str| std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set"));
    let mut config = config_of(
        var("SVELTO_CLUSTER_ETCD")
            .split(',')
            .map(str::to_owned)
            .collect(),
        &var("SVELTO_CLUSTER_S3"),
        &var("SVELTO_CLUSTER_BUCKET"),
    );
    config.lease_ttl_secs = 2;
    let cluster = connect(&config);
    let repo = cluster.repository(&var("SVELTO_CLUSTER_REPO"));
    let writer = var("SVELTO_CLUSTER_WRITER");
    let lease = campaign_until_won(&repo, &writer, Duration::from_secs(30));
    let mut out = std::io::stdout();
    let say = |out: &mut std::io::Stdout, line: String| {
        writeln!(out, "{line}").expect("stdout");
        out.flush().expect("stdout");
    };
    say(&mut out, "writer".to_owned());
    let mut seen = retry(|| repo.head());
    loop {
        let commit = new_id();
        match repo.publish(&lease, &seen, commit, &segment_of(commit, 500)) {
            Ok(Publish::Published { revision, head }) => {
                say(&mut out, format!("ack {revision} {commit}"));
                seen = head;
            }
            other => panic!("the child writer's publication failed: {other:?}"),
        }
        if mode == "stall" {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    say(&mut out, "ready".to_owned());
    let mut line = String::new();
    std::io::stdin().read_line(&mut line).expect("stdin");
    let commit = new_id();
    let word = match repo.publish(&lease, &seen, commit, &segment_of(commit, 500)) {
        Ok(Publish::Published { .. }) => "published".to_owned(),
        Ok(Publish::Moved { .. }) => "moved".to_owned(),
        Ok(Publish::LostLease) => "lost-lease".to_owned(),
        Err(e) => format!("error {e}"),
    };
    say(&mut out, format!("outcome {word}"));
}

/// A child writer process, killed with SIGKILL when dropped.
struct ChildWriter {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
}

impl ChildWriter {
    fn spawn(rig: &Rig, repo: &str, writer: &str, mode: &str) -> ChildWriter {
        let exe = std::env::current_exe().expect("the test binary");
        let mut child = Command::new(exe)
            .args(["child_writer", "--exact", "--nocapture", "--test-threads=1"])
            .env("SVELTO_CLUSTER_CHILD", mode)
            .env("SVELTO_CLUSTER_ETCD", rig.etcd.endpoints().join(","))
            .env("SVELTO_CLUSTER_S3", rig.s3.endpoint())
            .env("SVELTO_CLUSTER_BUCKET", rig.s3.bucket())
            .env("SVELTO_CLUSTER_REPO", repo)
            .env("SVELTO_CLUSTER_WRITER", writer)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn the child writer");
        let stdout = child.stdout.take().expect("piped");
        let (send, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        ChildWriter {
            child,
            stdin,
            lines,
        }
    }

    /// The next event line (`writer`, `ack ...`, `ready`, `outcome ...`), skipping the test
    /// harness's own lines.
    fn next(&self, within: Duration) -> String {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self
                .lines
                .recv_timeout(left)
                .unwrap_or_else(|e| panic!("the child writer said nothing in {within:?}: {e}"));
            // The harness's `test child_writer ... ` may precede the first event.
            let line = line.rsplit("... ").next().unwrap_or("").to_owned();
            let word = line.split(' ').next().unwrap_or("");
            if ["writer", "ack", "ready", "outcome"].contains(&word) {
                return line;
            }
        }
    }

    fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .args([signal, &self.child.id().to_string()])
            .status()
            .expect("run kill");
        assert!(status.success(), "kill {signal} failed");
    }
}

impl Drop for ChildWriter {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn parse_ack(line: &str) -> (u64, String) {
    let mut words = line.split(' ').skip(1);
    let revision = words
        .next()
        .and_then(|r| r.parse().ok())
        .expect("a revision");
    (revision, words.next().expect("a commit id").to_owned())
}

#[test]
fn a_killed_writer_is_replaced_and_a_stalled_one_is_fenced() {
    let rig = rig();
    let config = config(&rig);
    let cluster = connect(&config);
    let repo = cluster.repository("failover");
    create(&repo, "setup");
    let mut acked: BTreeMap<u64, String> = BTreeMap::new();
    let mut failovers = Vec::new();
    for round in 0..3 {
        let child = ChildWriter::spawn(&rig, "failover", &format!("child-{round}"), "publish");
        assert_eq!(child.next(Duration::from_secs(60)), "writer");
        for _ in 0..5 {
            let (revision, commit) = parse_ack(&child.next(Duration::from_secs(30)));
            acked.insert(revision, commit);
        }
        let mut child = child;
        let killed = Instant::now();
        child.child.kill().expect("kill -9 the writer");
        child.child.wait().expect("reap it");
        // Its acknowledgements may still be in the pipe.
        while let Ok(line) = child.lines.recv_timeout(Duration::from_millis(100)) {
            if line.starts_with("ack ") {
                let (revision, commit) = parse_ack(&line);
                acked.insert(revision, commit);
            }
        }
        let lease = campaign_until_won(&repo, "parent", Duration::from_secs(30));
        let won = killed.elapsed();
        let head = retry(|| repo.head());
        let commit = new_id();
        let outcome = repo
            .publish(&lease, &head, commit, &segment_of(commit, 500))
            .expect("publish after the takeover");
        let Publish::Published { revision, .. } = outcome else {
            panic!("the new writer's publication must succeed: {outcome:?}");
        };
        acked.insert(revision, commit.hex());
        let accepted = killed.elapsed();
        failovers.push(accepted);
        eprintln!(
            "round {round}: kill -9 of the writer -> lease won after {}, next publication \
             acknowledged after {}",
            ms(won),
            ms(accepted)
        );
        lease.resign().expect("resign");
    }
    failovers.sort();
    eprintln!(
        "failover (kill -9 of the writer to the next acknowledged publication): {:?}",
        failovers.iter().map(|d| ms(*d)).collect::<Vec<_>>()
    );

    // A writer stalled (SIGSTOP) past its lease cannot publish once resumed, even though
    // no one published since the head it saw: the election key is another's.
    let mut child = ChildWriter::spawn(&rig, "failover", "stalled", "stall");
    assert_eq!(child.next(Duration::from_secs(60)), "writer");
    let (revision, commit) = parse_ack(&child.next(Duration::from_secs(30)));
    acked.insert(revision, commit);
    assert_eq!(child.next(Duration::from_secs(30)), "ready");
    child.signal("-STOP");
    let lease = campaign_until_won(&repo, "parent", Duration::from_secs(30));
    let before = retry(|| repo.head());
    child.signal("-CONT");
    let stdin = child.stdin.as_mut().expect("piped");
    writeln!(stdin, "go").expect("tell the child to publish");
    stdin.flush().expect("flush");
    assert_eq!(child.next(Duration::from_secs(30)), "outcome lost-lease");
    let after = retry(|| repo.head());
    assert_eq!(after, before, "the fenced publication changed nothing");
    let commit = new_id();
    let outcome = repo
        .publish(&lease, &after, commit, &segment_of(commit, 500))
        .expect("publish");
    assert!(matches!(outcome, Publish::Published { .. }), "{outcome:?}");
    if let Publish::Published { revision, .. } = outcome {
        acked.insert(revision, commit.hex());
    }

    let head = retry(|| repo.head());
    let chain = retry(|| repo.chain(&head.head));
    for (revision, commit) in &acked {
        assert_eq!(
            &chain[*revision as usize].commit.hex(),
            commit,
            "acknowledged r{revision} is in the chain"
        );
    }
}
