//! (svelto-cli's tests, not svelto-cluster's: it compares the cluster with the local engine
//! through svelto-repos, which stands above the seam.)
//!
//! The cluster as a backend of the storage seam (`ClusterRepo`, `ClusterWriter`) against
//! the real components: three etcd members (Debian's etcd-server) and SeaweedFS's S3
//! gateway (weed), started on 127.0.0.1 by `svelto_testkit::cluster`; they fail loudly
//! when missing. Timings are printed (`-- --nocapture`) for docs/cluster.md, never
//! asserted tightly.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use svelto_cluster::{Cluster, ClusterConfig, ClusterRepo, ClusterWriter, Trip};
use svelto_core::{ChangeKind, NodeKind, PropList};
use svelto_fs::{ReadRepo, WriteRepo, WriteTxn};
use svelto_repos::{dump, DumpOptions, LoadOptions};
use svelto_testkit::cluster::{EtcdCluster, S3Server, S3_ACCESS_KEY, S3_REGION, S3_SECRET_KEY};
use svelto_testkit::tempdir;

const UUID: &str = "3f2c9a40-1b7e-4c55-9d0e-6a1f2b3c4d5e";

struct Rig {
    etcd: EtcdCluster,
    s3: S3Server,
    dir: tempfile::TempDir,
}

fn rig() -> Rig {
    let dir = tempdir();
    let etcd = EtcdCluster::start(dir.path(), 3);
    let s3 = S3Server::start(dir.path(), "svelto");
    Rig { etcd, s3, dir }
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

fn connect(rig: &Rig) -> Cluster {
    let config = config_of(rig.etcd.endpoints(), &rig.s3.endpoint(), rig.s3.bucket());
    Cluster::connect(config).unwrap_or_else(|e| panic!("connect: {e}"))
}

/// Creates repository `name` (retrying while weed grows its first volume).
fn create(cluster: &Cluster, name: &str, cache: &Path, r0: &PropList, uuid: &str) -> ClusterRepo {
    let started = Instant::now();
    loop {
        let env = svelto_core::SystemEnv;
        match ClusterRepo::create(cluster, name, cache, uuid, r0, "creator", &env) {
            Ok(repo) => return repo,
            Err(svelto_fs::StoreError::Unavailable { reason, .. })
                if started.elapsed() < Duration::from_secs(60) =>
            {
                eprintln!("create: {reason}; again");
                std::thread::sleep(Duration::from_millis(200));
            }
            Err(e) => panic!("create {name}: {e}"),
        }
    }
}

fn r0_dated(date: &str) -> PropList {
    let mut r0 = PropList::new();
    r0.insert(b"svn:date".to_vec(), date.as_bytes().to_vec());
    r0
}

fn dumped(repo: &dyn ReadRepo) -> Vec<u8> {
    let mut out = Vec::new();
    let opts = DumpOptions {
        start: 0,
        end: repo.youngest(),
        incremental: false,
        deltas: false,
        filter: None,
    };
    dump(repo, &mut out, opts, &mut |_| {}).expect("dump");
    out
}

/// A local repository at `path` made as the cluster's (same UUID and r0 date): its reading
/// handle and its writer, to be given the same commits.
fn local_twin(path: &Path) -> (svelto_store::Repo, svelto_store::Writer) {
    svelto_repos::create(
        &svelto_store::LocalBackend,
        path,
        UUID,
        "2026-11-28T00:00:00.000000Z",
    )
    .expect("create");
    let local = svelto_store::Repo::open(path).expect("open local");
    let writer = svelto_store::Writer::open(path).expect("local writer");
    (local, writer)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

/// Makes the node at `path` in `txn` what `node` of `src` is: its properties and, for a
/// file, its text. A text or properties the source's change says were modified are set
/// even when they equal what the transaction has (as the source's writer did).
fn match_node(
    txn: &mut dyn WriteTxn,
    src: &dyn ReadRepo,
    path: &str,
    node: &svelto_fs::NodeRev,
    change: &svelto_fs::Change,
) {
    let info = txn
        .info(path)
        .expect("info")
        .unwrap_or_else(|| panic!("{path} is in the transaction"));
    let want = src.props(node).expect("props");
    let mut props_set = false;
    for (name, value) in &want {
        if info.props.get(name) != Some(value) {
            txn.change_prop(path, name, Some(value)).expect("set prop");
            props_set = true;
        }
    }
    for name in info.props.keys() {
        if !want.contains_key(name) {
            txn.change_prop(path, name, None).expect("delete prop");
            props_set = true;
        }
    }
    if change.prop_mod && !props_set {
        if let Some((name, value)) = want.iter().next() {
            txn.change_prop(path, name, Some(value))
                .expect("set prop again");
        }
    }
    if let Some(text) = node.text {
        if info.text.sha1 != text.sha1 || change.text_mod {
            let mut reader = src.text_reader(&text).expect("text reader");
            txn.set_text(path, &mut reader).expect("set text");
        }
    }
}

/// Builds revision `rev` of `src` through `w`'s transaction API (a load of the fixture
/// through the seam's writer: svelto-repos' load takes a local path).
fn replay_revision(w: &mut dyn WriteRepo, src: &dyn ReadRepo, rev: u64) {
    let meta = src.rev_meta(rev).expect("rev_meta");
    let mut txn = w.begin().expect("begin");
    for ch in meta.changes.iter() {
        if matches!(ch.change, ChangeKind::Delete | ChangeKind::Replace) {
            txn.delete(&ch.path).expect("delete");
        }
        if ch.change == ChangeKind::Delete {
            continue;
        }
        let node = src.node(ch.node).expect("node");
        match (&ch.change, &ch.copyfrom) {
            (ChangeKind::Add | ChangeKind::Replace, Some((from_rev, from_path))) => {
                txn.copy(*from_rev, from_path, &ch.path).expect("copy");
            }
            (ChangeKind::Add | ChangeKind::Replace, None) => {
                txn.make_node(&ch.path, node.kind).expect("make node");
            }
            _ => {}
        }
        match_node(&mut *txn, src, &ch.path, &node, ch);
    }
    txn.set_revprops(meta.revprops.clone());
    let made = txn.commit().expect("commit");
    assert_eq!(made, rev, "the replayed revision's number");
}

/// A file's contents in revision `rev` of a little history.
fn contents(rev: u64) -> Vec<u8> {
    format!("line one\nrevision {rev}\n")
        .repeat(1 + (rev as usize % 5))
        .into_bytes()
}

/// One small commit (what a client's one-file commit does): a file changed, and every
/// tenth revision a directory copied.
fn small_commit(w: &mut dyn WriteRepo) -> u64 {
    let mut txn = w.begin().expect("begin");
    let rev = txn.rev();
    if rev == 1 {
        txn.make_node("trunk", NodeKind::Dir).expect("mkdir");
        txn.make_node("trunk/a.txt", NodeKind::File).expect("add");
    }
    if rev.is_multiple_of(10) {
        txn.copy(rev - 1, "trunk", &format!("tag-{rev}"))
            .expect("copy");
    }
    txn.set_text("trunk/a.txt", &mut &contents(rev)[..])
        .expect("text");
    let mut revprops = r0_dated(&format!("2026-11-28T00:00:{:02}.000000Z", rev % 60));
    revprops.insert(b"svn:log".to_vec(), format!("r{rev}").into_bytes());
    txn.set_revprops(revprops);
    txn.commit().expect("commit")
}

#[test]
fn the_seam_over_the_cluster_a_revision_built_on_a_is_read_at_once_on_b() {
    let rig = rig();
    let a_cluster = connect(&rig);
    let b_cluster = connect(&rig);
    let r0 = r0_dated("2026-11-28T00:00:00.000000Z");
    let a = create(
        &a_cluster,
        "seam",
        &rig.dir.path().join("cache-a/seam"),
        &r0,
        UUID,
    );
    let b = ClusterRepo::open(&b_cluster, "seam", &rig.dir.path().join("cache-b/seam"))
        .expect("open on B");
    // The same commits on the local store, for the contract walk and the latency.
    let local_dir = tempdir();
    let local_path = local_dir.path().join("local");
    let (local, mut lw) = local_twin(&local_path);

    let mut w = ClusterWriter::open(&a, "front-end-a", Duration::from_secs(10)).expect("writer");
    let (mut cluster_sync, mut local_sync, mut visible) = (Vec::new(), Vec::new(), Vec::new());
    let (mut cluster_commit, mut local_commit) = (Vec::new(), Vec::new());
    // More than the head's tail holds (64): the oldest segments move to an index object.
    for i in 1..=70u64 {
        let began = Instant::now();
        assert_eq!(small_commit(&mut w), i);
        let started = Instant::now();
        assert_eq!(w.sync().expect("publish"), i);
        cluster_sync.push(started.elapsed());
        cluster_commit.push(began.elapsed());
        // Acknowledged: another front end's fence sees it at once.
        let acked = Instant::now();
        assert_eq!(b.refresh().expect("refresh B"), i, "B sees r{i} at once");
        visible.push(acked.elapsed());
        let began = Instant::now();
        assert_eq!(small_commit(&mut lw), i);
        let started = Instant::now();
        lw.sync().expect("local sync");
        local_sync.push(started.elapsed());
        local_commit.push(began.elapsed());
    }
    local.refresh().expect("refresh local");
    a.refresh().expect("refresh A");
    // While A's writer surely holds the lease, A's fences and lock reads are answered from
    // its cache (nobody else can publish or change a lock): no round trip to etcd, but
    // for the rare refresh whose lease renewal is late on a loaded machine.
    let quiet = a_cluster.stats();
    for _ in 0..20 {
        assert_eq!(a.refresh().expect("refresh A"), 70);
        a.locks().expect("locks on A");
    }
    let trips = a_cluster.stats().since(&quiet);
    println!(
        "20 fences and lock reads on the writer's front end: {}",
        trips.describe()
    );
    assert!(
        trips.count(Trip::HeadRead) < 10 && trips.count(Trip::LockRead) < 10,
        "the writer's front end fences from its cache: {}",
        trips.describe()
    );
    let on_a = svelto_fs::contract::check(&a).expect("A keeps the contract");
    let on_b = svelto_fs::contract::check(&b).expect("B keeps the contract");
    let on_local = svelto_fs::contract::check(&local).expect("local keeps the contract");
    assert_eq!(on_a, on_local);
    assert_eq!(on_b, on_local);
    assert_eq!(
        dumped(&b),
        dumped(&local),
        "B dumps what the local store dumps"
    );
    assert_eq!(b.uuid().expect("uuid"), UUID);
    // The cache is the local format: B's files are the local store's, byte for byte.
    for part in svelto_cluster::PARTS {
        let on_b = std::fs::read(b.cache_dir().join("db").join(part)).expect("read B");
        let here = std::fs::read(local_path.join("db").join(part)).expect("read local");
        assert!(on_b == here, "db/{part} of B's cache is the local store's");
    }
    for (what, mut v) in [
        ("publish (cluster sync)", cluster_sync),
        ("local sync", local_sync),
        ("cluster commit (build + publish)", cluster_commit),
        ("local commit (build + sync)", local_commit),
        ("ack to visible on B", visible),
    ] {
        v.sort();
        println!(
            "{what}: median {}, p99 {}, max {} over {}",
            ms(percentile(&v, 0.5)),
            ms(percentile(&v, 0.99)),
            ms(*v.last().expect("some")),
            v.len()
        );
    }
    // The lock table lives in etcd: set through A's writer, B reads it at its next fence.
    assert!(b.locks().expect("locks").locks().is_empty());
    let lock = svelto_core::Lock {
        path: "trunk/a.txt".into(),
        token: "opaquelocktoken:6b1d3a52-9d42-4c8b-a1c4-0a7e1c2f3b4d".into(),
        owner: "alice".into(),
        comment: Some("editing\nfor a while".into()),
        created: "2026-11-29T00:00:00.000000Z".into(),
        expires: None,
    };
    let table = std::collections::BTreeMap::from([(lock.path.clone(), lock)]);
    w.set_locks(table.clone(), &a).expect("lock");
    assert_eq!(a.locks().expect("A's locks").locks(), &table);
    // B's next read of the table sees it (its own fence finds the head's lock-change
    // field moved), with no refresh of B's revisions first.
    assert_eq!(
        b.locks().expect("B's locks").locks(),
        &table,
        "B sees the lock at once"
    );
    let other = w.set_locks(Default::default(), &local);
    assert!(
        matches!(other, Err(svelto_fs::StoreError::Conflict(_))),
        "a handle of another backend is refused: {other:?}"
    );
    w.set_locks(Default::default(), &a).expect("unlock");
    b.refresh().expect("refresh B");
    assert!(
        b.locks().expect("B's locks").locks().is_empty(),
        "B sees the unlock"
    );
    // A second writer cannot publish while A holds the lease; after A resigns it can.
    drop(lw);
    let refused = ClusterWriter::open(&b, "front-end-b", Duration::from_millis(300));
    let Err(svelto_fs::StoreError::Unavailable { what, reason }) = refused else {
        panic!("B took the lease A holds");
    };
    assert!(reason.contains("front-end-a"), "{what}: {reason}");
    drop(w);
    let mut wb = ClusterWriter::open(&b, "front-end-b", Duration::from_secs(10)).expect("B");
    assert_eq!(small_commit(&mut wb), 71);
    assert_eq!(wb.sync().expect("B publishes"), 71);
    assert_eq!(a.refresh().expect("A refreshes"), 71, "A sees B's commit");
    svelto_fs::contract::check(&a).expect("A after B's commit");
    // A front end with an empty cache reads the chain through the index object.
    let c = ClusterRepo::open(&b_cluster, "seam", &rig.dir.path().join("cache-c/seam"))
        .expect("open on C");
    assert_eq!(c.youngest(), 71);
    assert!(dumped(&c) == dumped(&a), "C dumps what A dumps");
}

#[test]
fn fixtures_loaded_through_the_cluster_writer_read_as_the_local_store() {
    let rig = rig();
    let cluster = connect(&rig);
    let other = connect(&rig);
    for (i, name) in svelto_testkit::SMALL_SCENARIOS.iter().enumerate() {
        let loaded = svelto_testkit::svelto_create_load(
            &svelto_testkit::scenario_dump(name),
            LoadOptions::default(),
        );
        let src = &loaded.repo;
        let uuid = src.uuid().expect("uuid");
        let r0 = src.revprops(0).expect("r0");
        let cache = rig.dir.path().join(format!("cache-{i}/{name}"));
        let repo = create(&cluster, name, &cache, &r0, &uuid);
        {
            let mut w =
                ClusterWriter::open(&repo, "loader", Duration::from_secs(10)).expect("writer");
            for rev in 1..=src.youngest() {
                replay_revision(&mut w, src, rev);
                // Every few revisions, as svelto-repos' load syncs: the writer publishes
                // each revision on its own.
                if rev.is_multiple_of(3) {
                    w.sync().expect("publish");
                }
            }
            w.sync().expect("publish");
        }
        // Read by another front end with an empty cache.
        let reader =
            ClusterRepo::open(&other, name, &rig.dir.path().join(format!("r-{i}"))).expect("open");
        assert_eq!(reader.youngest(), src.youngest(), "{name}");
        let theirs = svelto_fs::contract::check(src).expect("local");
        let ours = svelto_fs::contract::check(&reader).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(ours, theirs, "{name}: the contract walk");
        let (ours_dump, theirs_dump) = (dumped(&reader), dumped(src));
        if ours_dump != theirs_dump {
            let (a, b) = (
                String::from_utf8_lossy(&ours_dump),
                String::from_utf8_lossy(&theirs_dump),
            );
            let at = a
                .lines()
                .zip(b.lines())
                .position(|(x, y)| x != y)
                .unwrap_or(0);
            let around = |t: &str| {
                t.lines()
                    .skip(at.saturating_sub(8))
                    .take(16)
                    .collect::<Vec<_>>()
                    .join("\n")
            };
            panic!(
                "{name}: the dump differs from the local store's at line {at}:\n--- cluster\n{}\n--- local\n{}",
                around(&a),
                around(&b)
            );
        }
        println!("{name}: r{} {ours:?}", src.youngest());
    }
}

/// Threads of one front end opening a repository at once on an empty cache (its first
/// requests after a start) each seed it without removing another's half-made copy.
#[test]
fn threads_seeding_one_empty_cache_at_once_all_open_it() {
    let rig = rig();
    let cluster = connect(&rig);
    let r0 = r0_dated("2026-11-28T00:00:00.000000Z");
    create(
        &cluster,
        "seeded",
        &rig.dir.path().join("a/seeded"),
        &r0,
        UUID,
    );
    for round in 0..5 {
        let cache = rig.dir.path().join(format!("round-{round}/seeded"));
        let opened: Vec<Result<u64, String>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..8)
                .map(|_| {
                    s.spawn(|| {
                        ClusterRepo::open(&cluster, "seeded", &cache)
                            .map(|r| r.youngest())
                            .map_err(|e| e.to_string())
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("thread"))
                .collect()
        });
        for o in opened {
            assert_eq!(o, Ok(0), "round {round}");
        }
    }
}

/// A text above the local engine's delta limit (4 MiB), committed through one front end, is
/// read on another with an empty cache as the local engine reads it: as stored windows
/// (`large_text_chunks`, what an export of a large file streams) and through
/// `write_text`, not through the trait's plain fallbacks.
#[test]
fn a_large_text_is_read_on_another_front_end_through_the_local_engines_paths() {
    let rig = rig();
    let (a_cluster, b_cluster) = (connect(&rig), connect(&rig));
    let r0 = r0_dated("2026-11-28T00:00:00.000000Z");
    let a = create(
        &a_cluster,
        "large",
        &rig.dir.path().join("a/large"),
        &r0,
        UUID,
    );
    let local_dir = tempdir();
    let (local, mut lw) = local_twin(&local_dir.path().join("local"));
    // 6 MiB that do not compress: a linear congruential sequence.
    let mut x = 0x2545_f491_u32;
    let big: Vec<u8> = (0..6 << 20)
        .map(|_| {
            x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (x >> 24) as u8
        })
        .collect();
    let mut w = ClusterWriter::open(&a, "front-end-a", Duration::from_secs(10)).expect("writer");
    for writer in [&mut w as &mut dyn WriteRepo, &mut lw] {
        let mut txn = writer.begin().expect("begin");
        txn.make_node("big.bin", NodeKind::File).expect("add");
        txn.set_text("big.bin", &mut &big[..]).expect("text");
        txn.set_revprops(r0_dated("2026-11-28T00:00:01.000000Z"));
        assert_eq!(txn.commit().expect("commit"), 1);
        writer.sync().expect("publish");
    }
    local.refresh().expect("refresh local");
    let b = ClusterRepo::open(&b_cluster, "large", &rig.dir.path().join("b/large")).expect("B");
    assert_eq!(b.youngest(), 1);
    for (who, repo) in [("local", &local as &dyn ReadRepo), ("front end B", &b)] {
        let (_, node) = repo.node_at(1, "big.bin").expect("node");
        let text = node.text.expect("a file");
        let chunks = repo
            .large_text_chunks(&text)
            .expect("large_text_chunks")
            .unwrap_or_else(|| panic!("{who}: the text is not read as stored windows"));
        let joined: Vec<u8> = chunks.flat_map(|c| c.expect("chunk")).collect();
        assert!(joined == big, "{who}: the windows make the text");
        let mut written = Vec::new();
        repo.write_text(&text, &mut written).expect("write_text");
        assert!(written == big, "{who}: write_text writes the text");
    }
}

/// The child side of the kill test: commits in a loop through a cluster writer with the
/// cache directory the parent names, printing `ack REV` after each acknowledgement and
/// `refused MESSAGE` when a publication is refused (then it opens a new writer).
#[test]
fn child_committer() {
    let Ok(cache) = std::env::var("SVELTO_BACKEND_CHILD") else {
        return;
    };
    let var = |name: &str| std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set"));
    let config = config_of(
        var("SVELTO_BACKEND_ETCD")
            .split(',')
            .map(str::to_owned)
            .collect(),
        &var("SVELTO_BACKEND_S3"),
        &var("SVELTO_BACKEND_BUCKET"),
    );
    let cluster = Cluster::connect(config).expect("connect");
    let repo = ClusterRepo::open(&cluster, "killed", Path::new(&cache)).expect("open");
    loop {
        let mut w = match ClusterWriter::open(&repo, "child", Duration::from_secs(30)) {
            Ok(w) => w,
            Err(e) => {
                println!("refused {e}");
                continue;
            }
        };
        println!("writer r{}", w.youngest());
        loop {
            let mut txn = match w.begin() {
                Ok(txn) => txn,
                Err(e) => {
                    println!("refused {e}");
                    break;
                }
            };
            let rev = txn.rev();
            let path = format!("f{}", rev % 7);
            if txn.kind(&path).expect("kind").is_none() {
                txn.make_node(&path, NodeKind::File).expect("add");
            }
            let big = contents(rev).repeat(2000);
            txn.set_text(&path, &mut &big[..]).expect("text");
            txn.set_revprops(r0_dated("2026-11-28T00:00:00.000000Z"));
            txn.commit().expect("commit");
            match w.sync() {
                Ok(r) => println!("ack {r}"),
                Err(e) => {
                    println!("refused {e}");
                    break;
                }
            }
        }
    }
}

struct ChildCommitter {
    child: Child,
    lines: mpsc::Receiver<String>,
}

impl ChildCommitter {
    fn spawn(rig: &Rig, cache: &Path) -> ChildCommitter {
        let exe = std::env::current_exe().expect("the test binary");
        let mut child = Command::new(exe)
            .args([
                "backend::child_committer",
                "--exact",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("SVELTO_BACKEND_CHILD", cache)
            .env("SVELTO_BACKEND_ETCD", rig.etcd.endpoints().join(","))
            .env("SVELTO_BACKEND_S3", rig.s3.endpoint())
            .env("SVELTO_BACKEND_BUCKET", rig.s3.bucket())
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn the child committer");
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
        ChildCommitter { child, lines }
    }

    /// The next `ack`, `refused` or `writer` line.
    fn next(&self, within: Duration) -> String {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self
                .lines
                .recv_timeout(left)
                .unwrap_or_else(|e| panic!("the child said nothing in {within:?}: {e}"));
            let line = line.rsplit("... ").next().unwrap_or("").to_owned();
            let word = line.split(' ').next().unwrap_or("");
            if ["ack", "refused", "writer"].contains(&word) {
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

impl Drop for ChildCommitter {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Checks the repository on a front end with a fresh cache: every acknowledged revision
/// is there and the whole history keeps the seam's contract (no half revision).
fn check_fresh(cluster: &Cluster, rig: &Rig, tag: &str, acked: u64) -> u64 {
    let repo = ClusterRepo::open(
        cluster,
        "killed",
        &rig.dir.path().join(format!("check-{tag}")),
    )
    .expect("open a fresh front end");
    let youngest = repo.youngest();
    assert!(
        youngest >= acked,
        "{tag}: r{acked} was acknowledged, the head is r{youngest}"
    );
    let checked = svelto_fs::contract::check(&repo).unwrap_or_else(|e| panic!("{tag}: {e}"));
    assert_eq!(checked.revisions, youngest + 1, "{tag}");
    for rev in 1..=youngest {
        let path = format!("f{}", rev % 7);
        let (_, node) = repo.node_at(rev, &path).expect("the revision's file");
        let mut text = Vec::new();
        repo.text_reader(&node.text.expect("a file"))
            .expect("reader")
            .read_to_end(&mut text)
            .expect("read");
        assert!(
            text == contents(rev).repeat(2000),
            "{tag}: r{rev}'s text whole"
        );
    }
    youngest
}

#[test]
fn kill_9_or_a_lost_lease_during_commits_leaves_no_half_revision() {
    let rig = rig();
    let cluster = connect(&rig);
    let r0 = r0_dated("2026-11-28T00:00:00.000000Z");
    create(
        &cluster,
        "killed",
        &rig.dir.path().join("creator/killed"),
        &r0,
        UUID,
    );
    // One cache directory for every child: each finds the tail its killed predecessor
    // left past db/current.
    let cache = rig.dir.path().join("child-cache/killed");
    let mut acked = 0;
    for round in 0..4 {
        let child = ChildCommitter::spawn(&rig, &cache);
        let mut acks = 0;
        let started = Instant::now();
        let wanted = 3 + round;
        while acks < wanted {
            let line = child.next(Duration::from_secs(90));
            if let Some(rev) = line.strip_prefix("ack ") {
                acked = rev.parse().expect("a revision");
                acks += 1;
            }
        }
        // Somewhere in the next commit: its text write, PUT or transaction.
        std::thread::sleep(Duration::from_millis(rand::random::<u64>() % 40));
        child.signal("-KILL");
        drop(child);
        println!(
            "round {round}: killed after r{acked} ({:?})",
            started.elapsed()
        );
        let youngest = check_fresh(&cluster, &rig, &format!("kill-{round}"), acked);
        acked = acked.max(youngest);
    }
    // A stalled writer: stopped past its lease, another front end publishes, then it
    // resumes. Its commit in flight must be refused, never acknowledged.
    let child = ChildCommitter::spawn(&rig, &cache);
    loop {
        let line = child.next(Duration::from_secs(90));
        if let Some(rev) = line.strip_prefix("ack ") {
            acked = rev.parse().expect("a revision");
            break;
        }
    }
    child.signal("-STOP");
    let parent =
        ClusterRepo::open(&cluster, "killed", &rig.dir.path().join("parent/killed")).expect("open");
    let started = Instant::now();
    let mut w = ClusterWriter::open(&parent, "parent", Duration::from_secs(30))
        .expect("the lease of a stopped writer ends");
    println!("stopped writer's lease taken after {:?}", started.elapsed());
    let rev = w.begin().expect("begin").rev();
    {
        let mut txn = w.begin().expect("begin");
        let path = format!("f{}", rev % 7);
        if txn.kind(&path).expect("kind").is_none() {
            txn.make_node(&path, NodeKind::File).expect("add");
        }
        txn.set_text(&path, &mut &contents(rev).repeat(2000)[..])
            .expect("text");
        txn.commit().expect("commit");
    }
    assert_eq!(w.sync().expect("the parent publishes"), rev);
    drop(w);
    child.signal("-CONT");
    let mut refused = None;
    while refused.is_none() {
        let line = child.next(Duration::from_secs(60));
        // Acknowledgements it printed before SIGSTOP arrived may still be in the pipe:
        // those revisions are below the parent's, which was built on them. Until it is
        // refused, it must acknowledge nothing at or above the parent's revision.
        if let Some(n) = line.strip_prefix("ack ") {
            let n: u64 = n.parse().expect("a revision");
            assert!(
                n < rev,
                "the stalled writer acknowledged r{n} at or over the parent's r{rev}"
            );
            acked = acked.max(n);
        }
        if let Some(why) = line.strip_prefix("refused ") {
            refused = Some(why.to_owned());
        }
    }
    let why = refused.expect("refused");
    println!("the stalled writer was told: {why}");
    // Its lease is gone or the head moved; or, its connections having been cut while it
    // was stopped, the cluster was unreachable or the outcome unknown (not acknowledged):
    // each a refusal that says why (the rule above is what no refusal may break).
    assert!(
        why.contains("lost the writer lease")
            || why.contains("published by front end")
            || why.contains("storage unavailable:"),
        "{why}"
    );
    drop(child);
    check_fresh(&cluster, &rig, "stalled", rev.max(acked));
}

/// Commits one small revision and publishes it; the error of whichever step failed.
fn try_commit(w: &mut ClusterWriter) -> Result<u64, svelto_fs::StoreError> {
    let mut txn = w.begin()?;
    let rev = txn.rev();
    if rev == 1 {
        txn.make_node("trunk", NodeKind::Dir)?;
        txn.make_node("trunk/a.txt", NodeKind::File)?;
    }
    txn.set_text("trunk/a.txt", &mut &contents(rev)[..])?;
    txn.set_revprops(r0_dated("2026-11-28T00:00:00.000000Z"));
    txn.commit()?;
    w.sync()
}

/// Opens a writer and commits, retrying while a component that came back is not serving
/// yet (weed refuses PUTs for about 17 s after its restart); the revision and how long.
fn commit_when_back(repo: &ClusterRepo, within: Duration) -> (u64, Duration) {
    let started = Instant::now();
    loop {
        let attempt = ClusterWriter::open(repo, "after", Duration::from_secs(5))
            .and_then(|mut w| try_commit(&mut w));
        match attempt {
            Ok(rev) => return (rev, started.elapsed()),
            Err(e) if started.elapsed() < within => {
                eprintln!("not yet: {e}");
                std::thread::sleep(Duration::from_millis(200));
            }
            Err(e) => panic!("no commit within {within:?}: {e}"),
        }
    }
}

#[test]
fn an_unreachable_object_store_or_etcd_majority_refuses_commits_and_cached_reads_go_on() {
    let mut rig = rig();
    let mut config = config_of(rig.etcd.endpoints(), &rig.s3.endpoint(), rig.s3.bucket());
    config.commit_timeout = Duration::from_secs(2);
    let cluster = Cluster::connect(config.clone()).expect("connect");
    let reader_cluster = Cluster::connect(config).expect("connect");
    let r0 = r0_dated("2026-11-28T00:00:00.000000Z");
    let a = create(
        &cluster,
        "faults",
        &rig.dir.path().join("a/faults"),
        &r0,
        UUID,
    );
    let b = ClusterRepo::open(&reader_cluster, "faults", &rig.dir.path().join("b/faults"))
        .expect("open B");
    let mut w = ClusterWriter::open(&a, "a", Duration::from_secs(10)).expect("writer");
    for i in 1..=3 {
        assert_eq!(try_commit(&mut w).expect("commit"), i);
    }
    assert_eq!(b.refresh().expect("B"), 3);
    let before = dumped(&b);

    // The object store killed: the commit is refused naming it, nothing is visible, and
    // B goes on reading what its cache holds; a front end with an empty cache cannot.
    rig.s3.kill();
    let err = try_commit(&mut w).expect_err("a commit without the object store");
    let text = err.to_string();
    println!("object store down, the committer is told: {text}");
    assert!(
        matches!(err, svelto_fs::StoreError::Unavailable { .. }) && text.contains("object store"),
        "{text}"
    );
    assert_eq!(
        b.refresh().expect("the head is in etcd"),
        3,
        "nothing new is visible"
    );
    assert!(dumped(&b) == before, "B reads its cache");
    let cold = ClusterRepo::open(
        &reader_cluster,
        "faults",
        &rig.dir.path().join("cold/faults"),
    );
    let cold_err = cold
        .err()
        .expect("an empty cache needs the object store")
        .to_string();
    assert!(cold_err.contains("object store"), "{cold_err}");
    assert!(
        try_commit(&mut w).is_err(),
        "the writer is stale after a refused commit"
    );
    drop(w);
    let restarted = Instant::now();
    rig.s3.restart();
    let (rev, took) = commit_when_back(&a, Duration::from_secs(90));
    assert_eq!(rev, 4, "the refused commit left no revision behind");
    println!(
        "object store restarted: the next commit after {:?} (weed serving after {:?})",
        restarted.elapsed(),
        restarted.elapsed() - took
    );
    assert_eq!(b.refresh().expect("B"), 4);

    // The etcd majority killed: commits are refused naming etcd, the fence fails naming
    // it, and reads of what the cache holds go on.
    let mut w = ClusterWriter::open(&a, "a", Duration::from_secs(10)).expect("writer");
    rig.etcd.kill(0);
    rig.etcd.kill(1);
    let err = try_commit(&mut w).expect_err("a commit without etcd's majority");
    let text = err.to_string();
    println!("etcd majority down, the committer is told: {text}");
    assert!(
        matches!(err, svelto_fs::StoreError::Unavailable { .. }) && text.contains("etcd"),
        "{text}"
    );
    let fence = b
        .refresh()
        .expect_err("no linearizable read without a majority");
    assert!(fence.to_string().contains("etcd"), "{fence}");
    assert_eq!(b.youngest(), 4);
    svelto_fs::contract::check(&b).expect("B reads its cache");
    drop(w);
    let restarted = Instant::now();
    rig.etcd.restart(0);
    rig.etcd.restart(1);
    let (rev, _) = commit_when_back(&a, Duration::from_secs(60));
    // The commit was answered "outcome unknown", never acknowledged: its transaction may
    // still have been in the surviving member's log and applied once the majority came
    // back. Either way it is whole.
    assert!(
        rev == 5 || rev == 6,
        "r{rev} after r4 and one unknown commit"
    );
    println!(
        "etcd majority back: the next commit (r{rev}) after {:?}{}",
        restarted.elapsed(),
        if rev == 6 {
            "; the unknown one applied as r5"
        } else {
            ""
        }
    );
    assert_eq!(b.refresh().expect("B"), rev);
    let (_, node) = b.node_at(rev, "trunk/a.txt").expect("the file");
    let text = b.read_text(&node.text.expect("a file")).expect("text");
    assert!(*text == contents(rev), "r{rev}'s text whole");
    svelto_fs::contract::check(&b).expect("B after the faults");
}

#[test]
fn two_front_ends_take_turns_as_writer_and_their_caches_agree() {
    let rig = rig();
    let r0 = r0_dated("2026-11-28T00:00:00.000000Z");
    let first = connect(&rig);
    create(
        &first,
        "turns",
        &rig.dir.path().join("creator/turns"),
        &r0,
        UUID,
    );
    let fronts: Vec<(String, std::path::PathBuf)> = ["a", "b"]
        .iter()
        .map(|n| (n.to_string(), rig.dir.path().join(format!("{n}/turns"))))
        .collect();
    let mut threads = Vec::new();
    for (name, cache) in fronts.clone() {
        let cluster = connect(&rig);
        threads.push(std::thread::spawn(move || {
            let repo = ClusterRepo::open(&cluster, "turns", &cache).expect("open");
            let mut mine = Vec::new();
            for i in 0..8 {
                let mut w = ClusterWriter::open(&repo, &name, Duration::from_secs(60))
                    .unwrap_or_else(|e| panic!("{name}: writer: {e}"));
                let mut txn = w.begin().expect("begin");
                let path = format!("{name}-{i}");
                txn.make_node(&path, NodeKind::File).expect("add");
                txn.set_text(&path, &mut path.as_bytes()).expect("text");
                txn.set_revprops(r0_dated("2026-11-28T00:00:00.000000Z"));
                txn.commit().expect("commit");
                mine.push(w.sync().unwrap_or_else(|e| panic!("{name}: publish: {e}")));
            }
            (repo, mine)
        }));
    }
    let results: Vec<(ClusterRepo, Vec<u64>)> = threads
        .into_iter()
        .map(|t| t.join().expect("a front end"))
        .collect();
    let mut all: Vec<u64> = results.iter().flat_map(|(_, m)| m.clone()).collect();
    all.sort();
    assert_eq!(
        all,
        (1..=16).collect::<Vec<_>>(),
        "each revision acknowledged once"
    );
    for (repo, _) in &results {
        assert_eq!(repo.refresh().expect("refresh"), 16);
        svelto_fs::contract::check(repo).expect("contract");
        for (name, _) in &fronts {
            for i in 0..8 {
                let path = format!("{name}-{i}");
                let (_, node) = repo.node_at(16, &path).expect("every file");
                let text = repo.read_text(&node.text.expect("a file")).expect("text");
                assert_eq!(&text[..], path.as_bytes());
            }
        }
    }
    for part in svelto_cluster::PARTS {
        let read = |i: usize| std::fs::read(fronts[i].1.join("db").join(part)).expect("read");
        assert!(read(0) == read(1), "db/{part} is the same in both caches");
    }

    // As serve's writer slot uses a writer: kept between commits, unlocked after each. With
    // an idle release, the lease goes after a while without a commit.
    let (a, b) = (&results[0].0, &results[1].0);
    let commit = |w: &mut ClusterWriter, path: &str| -> u64 {
        let mut txn = w.begin().expect("begin");
        txn.make_node(path, NodeKind::File).expect("add");
        txn.commit().expect("commit");
        w.sync().expect("publish")
    };
    let mut wa = ClusterWriter::open(a, "a", Duration::from_secs(10)).expect("A");
    wa.set_idle_release(Duration::from_millis(300));
    assert_eq!(commit(&mut wa, "idle-1"), 17);
    wa.unlock().expect("unlock");
    // Relocked before the release: still the writer, nothing moved.
    assert!(
        wa.relock().expect("relock"),
        "A relocks within its idle time"
    );
    assert_eq!(commit(&mut wa, "idle-2"), 18);
    wa.unlock().expect("unlock");
    std::thread::sleep(Duration::from_millis(600));
    assert!(!wa.holds_lease(), "A released the lease after 300 ms idle");
    // Released and nobody published: A campaigns again and goes on.
    assert!(wa.relock().expect("relock"), "A takes the lease again");
    assert_eq!(commit(&mut wa, "idle-3"), 19);
    wa.unlock().expect("unlock");
    // Released, and B publishes meanwhile: A's relock says its writer is stale.
    let started = Instant::now();
    let mut wb = ClusterWriter::open(b, "b", Duration::from_secs(10)).expect("B");
    println!(
        "B took the idle writer's lease after {:?}",
        started.elapsed()
    );
    assert_eq!(commit(&mut wb, "idle-4"), 20);
    drop(wb);
    assert!(!wa.relock().expect("relock"), "A is stale after B's commit");
    drop(wa);
    let mut wa = ClusterWriter::open(a, "a", Duration::from_secs(10)).expect("A again");
    assert_eq!(commit(&mut wa, "idle-5"), 21);
    drop(wa);
    assert_eq!(b.refresh().expect("B"), 21);
    svelto_fs::contract::check(b).expect("B's contract");
}

#[test]
fn a_writer_asked_for_the_lease_gives_it_back_once_its_commit_is_done() {
    let rig = rig();
    let r0 = r0_dated("2026-11-28T00:00:00.000000Z");
    let (ca, cb) = (connect(&rig), connect(&rig));
    let (cache_a, cache_b) = (
        rig.dir.path().join("a/asked"),
        rig.dir.path().join("b/asked"),
    );
    let a = create(&ca, "asked", &cache_a, &r0, UUID);
    let b = ClusterRepo::open(&cb, "asked", &cache_b).expect("B");
    let commit = |w: &mut ClusterWriter, path: &str| -> u64 {
        let mut txn = w.begin().expect("begin");
        txn.make_node(path, NodeKind::File).expect("add");
        txn.set_revprops(r0_dated("2026-11-28T00:00:00.000000Z"));
        txn.commit().expect("commit");
        w.sync().expect("publish")
    };
    // A keeps the lease a minute after each commit (serve's writer slot: unlock after
    // each commit, relock before the next).
    let mut wa = ClusterWriter::open(&a, "a", Duration::from_secs(10)).expect("A");
    wa.set_idle_release(Duration::from_secs(60));
    assert_eq!(commit(&mut wa, "a-1"), 1);
    wa.unlock().expect("unlock");

    // A commit runs on A when B asks for the lease: A keeps it until the commit is done.
    assert!(wa.relock().expect("relock"), "A is still the writer");
    let (stats_a, stats_b) = (ca.stats(), cb.stats());
    let (tx, rx) = mpsc::channel();
    let b_repo = b.clone();
    let asker = std::thread::spawn(move || {
        let w = ClusterWriter::open(&b_repo, "b", Duration::from_secs(20));
        let _ = tx.send(Instant::now());
        w
    });
    std::thread::sleep(Duration::from_millis(1500));
    assert!(
        rx.try_recv().is_err(),
        "B took the lease while A's commit ran"
    );
    assert!(wa.holds_lease(), "A keeps the lease while its commit runs");
    assert_eq!(
        cb.stats().since(&stats_b).count(Trip::Ask),
        1,
        "B asked once"
    );
    // The commit publishes under the lease asked for (not lost); unlock gives it back.
    assert_eq!(commit(&mut wa, "a-2"), 2);
    let unlocked = Instant::now();
    wa.unlock().expect("unlock");
    assert!(!wa.holds_lease(), "A gave the lease back at unlock");
    let got = rx
        .recv_timeout(Duration::from_secs(15))
        .expect("B took the lease");
    let mut wb = asker.join().expect("B").expect("B's writer");
    let waited = got.saturating_duration_since(unlocked);
    println!("B had the lease {waited:?} after the unlock of A's running commit");
    assert!(waited < Duration::from_secs(1), "{waited:?}");
    assert_eq!(
        ca.stats().since(&stats_a).count(Trip::Handover),
        1,
        "A handed over once"
    );
    assert_eq!(commit(&mut wb, "b-3"), 3, "B builds on A's r2");
    wb.set_idle_release(Duration::from_secs(60));
    wb.unlock().expect("unlock");

    // A's writer gave the lease away: its relock answers false (B has published), and a
    // new writer of A asks B, idle, which gives it back at once.
    assert!(
        !wa.relock().expect("relock"),
        "A's writer after its hand-over"
    );
    drop(wa);
    let started = Instant::now();
    let mut wa = ClusterWriter::open(&a, "a", Duration::from_secs(10)).expect("A again");
    let took = started.elapsed();
    println!("an idle writer's hand-over: A's writer opened after {took:?}");
    assert!(took < Duration::from_secs(1), "{took:?}");
    assert!(!wb.holds_lease(), "B gave the lease back");
    assert_eq!(commit(&mut wa, "a-4"), 4);
    assert!(
        !wb.relock().expect("relock"),
        "B's writer after its hand-over"
    );
    drop(wb);
    drop(wa);
    assert_eq!(b.refresh().expect("B"), 4);
    svelto_fs::contract::check(&b).expect("B's contract");
    for path in ["a-1", "a-2", "b-3", "a-4"] {
        b.node_at(4, path).expect("every commit's file");
    }
}

/// `rev`'s revision properties with `name` set to `value`.
fn with_prop(repo: &dyn ReadRepo, rev: u64, name: &str, value: &str) -> PropList {
    repo.refresh().expect("refresh");
    let mut props = repo.revprops(rev).expect("revprops");
    props.insert(name.as_bytes().to_vec(), value.as_bytes().to_vec());
    props
}

/// The same revision property change through the cluster writer and the local one.
fn change_both(
    w: &mut ClusterWriter,
    lw: &mut svelto_store::Writer,
    a: &ClusterRepo,
    rev: u64,
    value: &str,
) {
    let props = with_prop(a, rev, "svn:log", value);
    w.set_revprops(rev, props.clone())
        .expect("set on the cluster");
    let youngest = w.youngest();
    assert_eq!(w.sync().expect("publish the change"), youngest);
    lw.set_revprops(rev, props).expect("set locally");
    lw.sync().expect("local sync");
}

#[test]
fn revision_property_changes_are_publications_read_at_once_and_by_late_caches() {
    let rig = rig();
    let (a_cluster, b_cluster) = (connect(&rig), connect(&rig));
    let r0 = r0_dated("2026-11-28T00:00:00.000000Z");
    let cache = |n: &str| rig.dir.path().join(format!("cache-{n}/rp"));
    let a = create(&a_cluster, "rp", &cache("a"), &r0, UUID);
    let b = ClusterRepo::open(&b_cluster, "rp", &cache("b")).expect("open on B");
    let local_dir = tempdir();
    let local_path = local_dir.path().join("local");
    let (local, mut lw) = local_twin(&local_path);
    let mut w = ClusterWriter::open(&a, "front-end-a", Duration::from_secs(10)).expect("writer");

    // r0's properties while r0 is the youngest revision (its segment replaced).
    change_both(&mut w, &mut lw, &a, 0, "r0 changed");
    assert_eq!(b.refresh().expect("refresh B"), 0);
    assert_eq!(b.revprops(0).expect("B r0")[&b"svn:log"[..]], b"r0 changed");
    for i in 1..=3u64 {
        assert_eq!(small_commit(&mut w), i);
        assert_eq!(w.sync().expect("publish"), i);
        assert_eq!(small_commit(&mut lw), i);
        lw.sync().expect("local sync");
    }
    assert_eq!(b.refresh().expect("refresh B"), 3);
    // C catches up now, then sleeps through what follows.
    let c = ClusterRepo::open(&a_cluster, "rp", &cache("c")).expect("open on C");
    assert_eq!(c.youngest(), 3);
    // Changes of an older revision and of the youngest, each seen at once on B (whose
    // cache holds r3's segment as it was before each change).
    let mut times = Vec::new();
    for (rev, value) in [
        (2, "two, changed"),
        (3, "three, changed"),
        (2, "two, again"),
    ] {
        let started = Instant::now();
        change_both(&mut w, &mut lw, &a, rev, value);
        let published = started.elapsed();
        assert_eq!(b.refresh().expect("refresh B"), 3);
        times.push((published, started.elapsed()));
        assert_eq!(
            b.revprops(rev).expect("B's revprops")[&b"svn:log"[..]],
            value.as_bytes(),
            "B sees r{rev}'s change at once"
        );
        assert_eq!(a.refresh().expect("refresh A"), 3);
        assert_eq!(
            a.revprops(rev).expect("A's revprops")[&b"svn:log"[..]],
            value.as_bytes()
        );
    }
    println!("revision property changes: (published, seen on B) {times:?}");
    // A writer that opens on B finds the record of r3's latest segment in B's cache.
    drop(w);
    let mut wb = ClusterWriter::open(&b, "front-end-b", Duration::from_secs(10)).expect("B");
    change_both(&mut wb, &mut lw, &b, 1, "one, through B");
    assert_eq!(a.refresh().expect("refresh A"), 3);
    assert_eq!(
        a.revprops(1).expect("A r1")[&b"svn:log"[..]],
        b"one, through B"
    );
    // More commits than the head's tail holds: r3's replaced segment moves to an index
    // object before C, still holding r3's first segment, catches up.
    for i in 4..=70u64 {
        assert_eq!(small_commit(&mut wb), i);
        assert_eq!(wb.sync().expect("publish"), i);
        assert_eq!(small_commit(&mut lw), i);
        lw.sync().expect("local sync");
    }
    change_both(&mut wb, &mut lw, &b, 70, "seventy, changed");
    assert_eq!(c.refresh().expect("refresh C"), 70);
    assert_eq!(c.revprops(2).expect("C r2")[&b"svn:log"[..]], b"two, again");
    assert_eq!(
        c.revprops(3).expect("C r3")[&b"svn:log"[..]],
        b"three, changed"
    );
    local.refresh().expect("refresh local");
    a.refresh().expect("refresh A");
    let reference = dumped(&local);
    for (name, repo) in [("A", &a), ("B", &b), ("C", &c)] {
        assert_eq!(repo.refresh().expect("refresh"), 70);
        assert!(
            dumped(repo) == reference,
            "{name} dumps what the local store dumps"
        );
        repo.verify_storage().expect("verify storage");
        repo.verify_records().expect("verify records");
    }
    // The caches are the local format byte for byte, and so is a new one.
    let d = ClusterRepo::open(&b_cluster, "rp", &cache("d")).expect("open on D");
    for part in svelto_cluster::PARTS {
        let here = std::fs::read(local_path.join("db").join(part)).expect("read local");
        for repo in [&a, &b, &c, &d] {
            let there = std::fs::read(repo.cache_dir().join("db").join(part)).expect("read");
            assert!(there == here, "db/{part} of {}", repo.cache_dir().display());
        }
    }
}
