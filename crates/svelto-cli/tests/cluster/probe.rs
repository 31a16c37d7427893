//! The cluster's latency probe (bench/cluster.sh runs it: `cargo test -p svelto-cli --test
//! cluster -- --ignored --nocapture probe`; ignored by the default `cargo test`: it is a
//! measurement, not a check. It lives in this test binary, whose dependencies are built
//! already, rather than in svelto-cluster's tests). Against the real components (three etcd members and weed on
//! 127.0.0.1, `svelto_testkit::cluster`) it commits through the seam's backend API (no
//! client start-up, no protocol) and breaks each commit down by round trip with the
//! cluster's counters (`Cluster::stats`): the segment PUT, the head's transaction; then
//! the fence alone (a linearizable head read), the lock-table read, a campaign for the
//! writer lease and its resignation, and the time from the acknowledgement (`sync`
//! returned) on front end A to the revision being visible through front end B's fence
//! (`refresh`). Prints a markdown table (median, p99, max); PROBE_N sets the number of
//! commits (default 100).

use std::path::Path;
use std::time::{Duration, Instant};

use svelto_cluster::{Cluster, ClusterConfig, ClusterRepo, ClusterWriter, Trip};
use svelto_core::{NodeKind, PropList};
use svelto_fs::{ReadRepo, WriteRepo};
use svelto_testkit::cluster::{EtcdCluster, S3Server, S3_ACCESS_KEY, S3_REGION, S3_SECRET_KEY};
use svelto_testkit::tempdir;

fn connect(etcd: &EtcdCluster, s3: &S3Server) -> Cluster {
    let mut config =
        ClusterConfig::new(etcd.endpoints(), "/svelto/probe", &s3.endpoint(), "svelto");
    config.s3_region = S3_REGION.to_owned();
    config.s3_access_key = S3_ACCESS_KEY.to_owned();
    config.s3_secret_key = S3_SECRET_KEY.to_owned();
    config.request_timeout = Duration::from_secs(3);
    Cluster::connect(config).unwrap_or_else(|e| panic!("connect: {e}"))
}

fn create(cluster: &Cluster, cache: &Path) -> ClusterRepo {
    let started = Instant::now();
    let mut r0 = PropList::new();
    r0.insert(
        b"svn:date".to_vec(),
        b"2026-11-29T00:00:00.000000Z".to_vec(),
    );
    loop {
        let env = svelto_core::SystemEnv;
        match ClusterRepo::create(
            cluster,
            "probe",
            cache,
            "6c0f3b1e-2a4d-4e8f-9b1c-3d5e7f9a0b2c",
            &r0,
            "creator",
            &env,
        ) {
            Ok(repo) => return repo,
            Err(svelto_fs::StoreError::Unavailable { .. })
                if started.elapsed() < Duration::from_secs(60) =>
            {
                std::thread::sleep(Duration::from_millis(200));
            }
            Err(e) => panic!("create: {e}"),
        }
    }
}

/// A one-file commit (the file's text changed), built in the cache; not yet published.
fn build(w: &mut dyn WriteRepo) -> u64 {
    let mut txn = w.begin().expect("begin");
    let rev = txn.rev();
    if rev == 1 {
        txn.make_node("a.txt", NodeKind::File).expect("add");
    }
    txn.set_text("a.txt", &mut format!("revision {rev}\n").as_bytes())
        .expect("text");
    let mut revprops = PropList::new();
    revprops.insert(
        b"svn:date".to_vec(),
        b"2026-11-29T00:00:01.000000Z".to_vec(),
    );
    revprops.insert(b"svn:log".to_vec(), format!("r{rev}").into_bytes());
    txn.set_revprops(revprops);
    txn.commit().expect("commit")
}

fn row(what: &str, mut v: Vec<Duration>) -> String {
    v.sort();
    let at = |p: f64| {
        let i = ((v.len() as f64) * p).ceil() as usize;
        v[i.clamp(1, v.len()) - 1].as_secs_f64() * 1000.0
    };
    format!(
        "| {what} | {:.2} | {:.2} | {:.2} | {} |",
        at(0.5),
        at(0.99),
        v.last().expect("samples").as_secs_f64() * 1000.0,
        v.len()
    )
}

#[test]
#[ignore = "a measurement for bench/cluster.sh, not a check"]
fn probe() {
    let n: usize = std::env::var("PROBE_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    let dir = tempdir();
    let etcd = EtcdCluster::start(dir.path(), 3);
    let s3 = S3Server::start(dir.path(), "svelto");
    let (a_cluster, b_cluster) = (connect(&etcd, &s3), connect(&etcd, &s3));
    let a = create(&a_cluster, &dir.path().join("cache-a/probe"));
    let b = ClusterRepo::open(&b_cluster, "probe", &dir.path().join("cache-b/probe"))
        .expect("open on B");
    let mut w = ClusterWriter::open(&a, "probe-a", Duration::from_secs(10)).expect("writer");
    // Warm: weed's first PUTs to a new volume are slow.
    for _ in 0..5 {
        build(&mut w);
        w.sync().expect("publish");
        b.refresh().expect("refresh B");
    }
    let (mut built, mut put, mut txn, mut publish, mut commit, mut visible) =
        (vec![], vec![], vec![], vec![], vec![], vec![]);
    let mut extra_trips = 0;
    for _ in 0..n {
        let began = Instant::now();
        let rev = build(&mut w);
        built.push(began.elapsed());
        let before = a_cluster.stats();
        let publishing = Instant::now();
        assert_eq!(w.sync().expect("publish"), rev);
        let acked = Instant::now();
        publish.push(acked - publishing);
        commit.push(acked - began);
        let d = a_cluster.stats().since(&before);
        // A second PUT when the head's tail was full (an index object, every 64).
        assert!(d.count(Trip::Put) >= 1, "a PUT per publication");
        put.push(d.time(Trip::Put));
        txn.push(d.time(Trip::PublishTxn));
        extra_trips += d.count(Trip::PublishTxn) - 1;
        assert_eq!(
            b.refresh().expect("refresh B"),
            rev,
            "B sees r{rev} at once"
        );
        visible.push(acked.elapsed());
    }
    let repository = a.repository();
    let (mut head, mut locks) = (vec![], vec![]);
    for _ in 0..n {
        let t = Instant::now();
        repository.head().expect("head");
        head.push(t.elapsed());
        let t = Instant::now();
        a.locks().expect("locks");
        locks.push(t.elapsed());
    }
    drop(w);
    let (mut campaign, mut resign) = (vec![], vec![]);
    for _ in 0..n.min(50) {
        let t = Instant::now();
        let lease = repository
            .campaign("probe-c")
            .expect("campaign")
            .expect("won: nobody else writes");
        campaign.push(t.elapsed());
        let t = Instant::now();
        lease.resign().expect("resign");
        resign.push(t.elapsed());
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("probe: {n} commits, load {}", load.trim());
    println!("| phase | median ms | p99 ms | max ms | n |");
    println!("|---|---|---|---|---|");
    for line in [
        row(
            "build a one-file revision in the cache (local writer)",
            built,
        ),
        row(
            "PUTs to the object store (segment; index object every 64)",
            put,
        ),
        row("head transaction (etcd, 3 members)", txn),
        row(
            "publish = sync (segment read + PUT + txn + cache current)",
            publish,
        ),
        row("commit = build + publish", commit),
        row("fence: linearizable head read", head),
        row("lock-table read", locks),
        row("campaign (lease grant + election txn)", campaign),
        row("resign (lease revoke)", resign),
        row("acknowledged on A to visible through B's refresh", visible),
    ] {
        println!("{line}");
    }
    println!("head transactions sent again (attempt timed out): {extra_trips}");
}
