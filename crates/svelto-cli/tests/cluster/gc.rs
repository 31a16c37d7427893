//! The orphan collector (`svelto admin gc --cluster`, docs/cluster.md "Orphans") against
//! the real rig: orphans made as failed attempts and revision property changes leave
//! them (a well-formed segment under another commit id of a published revision, one of a
//! revision beyond the head, a replaced youngest segment, a staged `txn/` object), then
//! passes with and without the minimum age.

use std::collections::BTreeMap;

use object_store::path::Path as ObjectPath;
use object_store::{ObjectStoreExt, PutPayload};
use svelto_cluster::{Cluster, CommitId, FrontEndConfig, SegmentRef};
use svelto_testkit::cluster::S3Server;
use svelto_testkit::Run;

use super::{bucket_client, cluster_file, hook, objects, put, runtime, svelto_bin, Rig};

/// `svelto admin gc --cluster FILE proj ARGS...`: its standard output.
/// Prints how long the command took (for docs/cluster.md; never asserted).
fn gc(file: &std::path::Path, args: &[&str]) -> String {
    let started = std::time::Instant::now();
    let out = Run::new(svelto_bin())
        .args(["admin", "gc", "--cluster"])
        .arg(file)
        .arg("proj")
        .args(args)
        .success()
        .stdout_text();
    eprintln!("svelto admin gc {args:?}: {:?}", started.elapsed());
    out
}

/// `svelto admin dump --cluster FILE proj ARGS...` (every byte).
fn admin_dump(file: &std::path::Path, args: &[&str]) -> Vec<u8> {
    Run::new(svelto_bin())
        .args(["admin", "dump", "-q", "--cluster"])
        .arg(file)
        .arg("proj")
        .args(args)
        .success()
        .stdout
}

fn deleted_keys(out: &str) -> Vec<String> {
    out.lines()
        .filter_map(|l| l.strip_prefix("deleted "))
        .map(|l| l.rsplit_once(' ').expect("KEY BYTES").0.to_owned())
        .collect()
}

#[test]
fn the_collector_deletes_orphans_of_published_revisions_and_nothing_else() {
    let (rig, servers) = Rig::start(1, "");
    let dir = rig.dir.path().to_owned();
    let url = servers[0].url("proj");
    hook(
        &rig.roots[0],
        "proj",
        "pre-revprop-change",
        "#!/bin/sh\nexit 0\n",
    );
    // r1-r66: past r64, so r0-r62 are named by an index object, r63-r66 by the head's tail.
    for n in 1..=66 {
        put(&dir, &url, &format!("f{}", n % 5), &format!("text {n}\n"));
    }
    // A revision property change of the youngest: r66's first segment is replaced, an
    // orphan, but one of the youngest revision (kept until r67 is published).
    Run::tool("svn")
        .args(["propset", "--revprop", "-r", "66", "svn:log", "changed log"])
        .arg(&url)
        .args(["--non-interactive", "--no-auth-cache"])
        .success();

    let file = rig.files[0].clone();
    let config = FrontEndConfig::load(&file, &|_| None).expect("the cluster file");
    let prefix = format!("{}/proj", config.cluster.object_prefix);
    let cluster = Cluster::connect(config.cluster).expect("connect");
    let repo = cluster.repository("proj");
    let head = repo.head().expect("head").head;
    assert_eq!(head.youngest, 66);
    assert!(head.index.is_some(), "r0-r62 are in an index object");
    let chain = repo.chain(&head).expect("chain");
    // Orphans as failed attempts leave them: well-formed segments under other commit ids.
    let orphan = |of: u64, at: u64, id: u8| {
        let segment = repo.read_segment(chain[of as usize]).expect("a segment");
        let theirs = SegmentRef {
            revision: at,
            commit: CommitId([id; 16]),
        };
        assert!(repo
            .put_raw_segment(theirs, segment.encode(at, theirs.commit))
            .expect("put an orphan"));
        repo.segment_key(theirs)
    };
    let in_index = orphan(5, 5, 0xa1);
    let in_tail = orphan(64, 64, 0xa2);
    let beyond = orphan(66, 67, 0xa3);
    let txn = format!("{prefix}/txn/{}/0", "b4".repeat(16));
    // What repository `proj/txn` would keep, and a txn/ layout the cluster never writes:
    // both left alone.
    let nested = format!("{prefix}/txn/seg/000000000001-{}", "c5".repeat(16));
    let odd = format!("{prefix}/txn/{}/notes", "d6".repeat(16));
    runtime().block_on(async {
        for key in [&txn, &nested, &odd] {
            bucket_client(&rig._s3)
                .put(
                    &ObjectPath::from(key.as_str()),
                    PutPayload::from(vec![7u8; 100]),
                )
                .await
                .expect("put a txn object");
        }
    });
    let published: Vec<String> = chain.iter().map(|s| repo.segment_key(*s)).collect();

    let warm_file = cluster_file(&dir, &rig.etcd, &rig._s3, "warm", "");
    let before = admin_dump(&warm_file, &[]);
    let all_before = objects(&rig._s3);
    for key in [&in_index, &in_tail, &beyond, &txn] {
        assert!(all_before.contains_key(key.as_str()), "{key} was put");
    }
    let replaced_66: Vec<&String> = all_before
        .keys()
        .filter(|k| k.starts_with(&format!("{prefix}/seg/000000000066-")))
        .filter(|k| !published.contains(k))
        .collect();
    assert_eq!(
        replaced_66.len(),
        1,
        "the revprop change's replaced segment"
    );
    let replaced_66 = replaced_66[0].clone();

    // The default minimum age (1 h): everything was put just now, nothing goes.
    let out = gc(&file, &[]);
    eprintln!("{out}");
    assert!(deleted_keys(&out).is_empty(), "{out}");
    assert!(out.contains("deleted 0 objects, 0 bytes"), "{out}");
    assert_eq!(objects(&rig._s3), all_before);

    // Minimum age 0: the orphans of published revisions (and the staged txn/ with its
    // maximum age 0) go; the youngest's replaced segment, the one beyond the head, idx/ and
    // every published segment stay.
    let out = gc(&file, &["--min-age", "0", "--txn-max-age", "0"]);
    eprintln!("{out}");
    let mut deleted = deleted_keys(&out);
    deleted.sort();
    // Besides the ones put here: the segments of r0 that `admin create`'s attempts left
    // when weed answered late while growing its first volume (seen: two).
    let mut expected: Vec<String> = all_before
        .keys()
        .filter(|k| !published.contains(k))
        .filter(|k| {
            k.strip_prefix(&format!("{prefix}/seg/"))
                .and_then(|name| name.get(..12))
                .and_then(|r| r.parse::<u64>().ok())
                .is_some_and(|r| r < 66)
        })
        .cloned()
        .chain([txn.clone()])
        .collect();
    expected.sort();
    assert!(expected.contains(&in_index) && expected.contains(&in_tail));
    assert_eq!(deleted, expected, "{out}");
    assert!(out.contains("proj: r66: "), "{out}");
    let after = objects(&rig._s3);
    let mut gone: Vec<&String> = all_before
        .keys()
        .filter(|k| !after.contains_key(*k))
        .collect();
    gone.sort();
    assert_eq!(gone, expected.iter().collect::<Vec<_>>());
    assert!(after.contains_key(&beyond) && after.contains_key(&replaced_66));
    assert!(after.contains_key(&nested) && after.contains_key(&odd));
    assert!(
        out.contains("left alone (not a name the cluster writes): ")
            && out.contains(&format!("{prefix}/txn/seg")),
        "{out}"
    );
    for key in &published {
        assert!(after.contains_key(key), "published {key} was deleted");
    }
    let idx = |all: &BTreeMap<String, u64>| {
        all.keys()
            .filter(|k| k.starts_with(&format!("{prefix}/idx/")))
            .count()
    };
    assert!(idx(&after) >= 1 && idx(&after) == idx(&all_before));
    // A second pass finds nothing more.
    let out = gc(&file, &["--min-age", "0", "--txn-max-age", "0"]);
    assert!(deleted_keys(&out).is_empty(), "{out}");

    // Once r67 is published, r66's replaced segment is final garbage; the one put beyond
    // the head is now an unpublished segment of the youngest, and stays.
    let (rev, _) = put(&dir, &url, "f0", "text 67\n");
    assert_eq!(rev, 67);
    let out = gc(&file, &["--min-age", "0"]);
    eprintln!("{out}");
    assert_eq!(deleted_keys(&out), vec![replaced_66.clone()], "{out}");
    assert!(objects(&rig._s3).contains_key(&beyond));
    let out = gc(&file, &["--min-age", "0"]);
    assert!(deleted_keys(&out).is_empty(), "{out}");

    // A segment a revision property change replaced goes only once its replacement is
    // gc-min-age old as well: an etcd snapshot taken before the change names it, and a
    // backup's copy made within gc-min-age must still find it. r67's first segment is 8 s
    // old when the change replaces it and r68 follows at once: a pass with a minimum age of
    // 5 s keeps it (and `beyond`, an orphan of r67 too); 6 s later both go.
    std::thread::sleep(std::time::Duration::from_secs(8));
    Run::tool("svn")
        .args(["propset", "--revprop", "-r", "67", "svn:log", "changed 67"])
        .arg(&url)
        .args(["--non-interactive", "--no-auth-cache"])
        .success();
    let (rev, _) = put(&dir, &url, "f1", "text 68\n");
    assert_eq!(rev, 68);
    let of_67 = |all: &BTreeMap<String, u64>| -> Vec<String> {
        all.keys()
            .filter(|k| k.starts_with(&format!("{prefix}/seg/000000000067-")))
            .cloned()
            .collect()
    };
    assert_eq!(
        of_67(&objects(&rig._s3)).len(),
        3,
        "r67's first, its replacement, beyond"
    );
    let out = gc(&file, &["--min-age", "5"]);
    eprintln!("{out}");
    assert!(deleted_keys(&out).is_empty(), "{out}");
    std::thread::sleep(std::time::Duration::from_secs(6));
    let out = gc(&file, &["--min-age", "5"]);
    eprintln!("{out}");
    let mut deleted = deleted_keys(&out);
    deleted.sort();
    let left = of_67(&objects(&rig._s3));
    assert_eq!(left.len(), 1, "r67's published segment stays: {left:?}");
    assert!(deleted.contains(&beyond) && deleted.len() == 2, "{out}");
    assert!(deleted
        .iter()
        .all(|k| k.contains("/seg/000000000067-") && !left.contains(k)));

    // A front end with an empty cache dumps r0-r66 byte-identically to before, and all
    // of r67 as the warm one does.
    let cold_file = cluster_file(&dir, &rig.etcd, &rig._s3, "cold", "");
    let cold_to_66 = admin_dump(&cold_file, &["-r", "0:66"]);
    assert!(
        cold_to_66 == before,
        "a cold front end dumps r0-r66 otherwise than before the passes (first difference \
         at byte {:?})",
        cold_to_66.iter().zip(&before).position(|(c, b)| c != b)
    );
    let cold = admin_dump(&cold_file, &[]);
    let warm = admin_dump(&warm_file, &[]);
    assert!(
        cold == warm,
        "a cold front end dumps otherwise after the passes"
    );
    assert!(String::from_utf8_lossy(&cold).contains("changed log"));
}

/// Orphans of r1 made by hand in repository `proj` (a copy of r1's segment under another
/// commit id), through a cluster file's clients.
struct Orphans {
    repo: svelto_cluster::Repository,
    chain: Vec<SegmentRef>,
    _cluster: Cluster,
}

impl Orphans {
    fn new(file: &std::path::Path) -> Orphans {
        let config = FrontEndConfig::load(file, &|_| None).expect("the cluster file");
        let cluster = Cluster::connect(config.cluster).expect("connect");
        let repo = cluster.repository("proj");
        let head = repo.head().expect("head").head;
        let chain = repo.chain(&head).expect("chain");
        Orphans {
            repo,
            chain,
            _cluster: cluster,
        }
    }

    /// Puts the orphan of commit id `[id; 16]`: its key.
    fn put(&self, id: u8) -> String {
        let segment = self.repo.read_segment(self.chain[1]).expect("a segment");
        let theirs = SegmentRef {
            revision: 1,
            commit: CommitId([id; 16]),
        };
        assert!(self
            .repo
            .put_raw_segment(theirs, segment.encode(1, theirs.commit))
            .expect("put an orphan"));
        self.repo.segment_key(theirs)
    }
}

/// Waits up to `within` for `key` to be gone from the bucket.
fn gone_within(s3: &S3Server, key: &str, within: std::time::Duration) -> bool {
    let started = std::time::Instant::now();
    while started.elapsed() < within {
        if !objects(s3).contains_key(key) {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    false
}

#[test]
fn one_elected_front_end_collects_every_gc_interval_and_another_takes_over() {
    let every = "gc-interval = 1\ngc-min-age = 0\n";
    let (rig, mut servers) = Rig::start_with(2, &[every, every]);
    let dir = rig.dir.path().to_owned();
    let url = servers[0].url("proj");
    for n in 1..=3 {
        put(&dir, &url, "f", &format!("text {n}\n"));
    }
    let orphans = Orphans::new(&rig.files[0]);
    let (repo, chain) = (&orphans.repo, &orphans.chain);
    let orphan = |id: u8| orphans.put(id);
    let first = orphan(0xc1);
    assert!(
        gone_within(&rig._s3, &first, std::time::Duration::from_secs(20)),
        "no front end collected {first} within 20 s"
    );
    let log = |i: usize| {
        std::fs::read_to_string(dir.join(format!("serve-{}.log", super::IDS[i])))
            .unwrap_or_default()
    };
    let collected: Vec<usize> = (0..2)
        .filter(|&i| log(i).contains(&format!("cluster gc: proj: deleted {first}")))
        .collect();
    assert_eq!(collected.len(), 1, "one collector: {collected:?}");
    let collector = collected[0];
    assert!(
        !log(1 - collector).contains("cluster gc: proj:"),
        "the other front end ran passes too"
    );
    // The collector stops (its collector key goes with its member lease, revoked at
    // shutdown or expired after a kill); the other front end is elected and collects the
    // next orphan.
    drop(servers.remove(collector));
    let second = orphan(0xc2);
    assert!(
        gone_within(&rig._s3, &second, std::time::Duration::from_secs(20)),
        "the remaining front end did not collect {second} within 20 s"
    );
    let other = 1 - collector;
    assert!(log(other).contains(&format!("cluster gc: proj: deleted {second}")));
    for segment in chain {
        assert!(
            objects(&rig._s3).contains_key(&repo.segment_key(*segment)),
            "a published segment was deleted"
        );
    }
}

/// The collector's counters on the elected front end's metrics page
/// (`--metrics-listen`): passes, objects and bytes deleted, the last round's time.
#[test]
fn the_collectors_counters_are_on_the_metrics_page() {
    let every = "gc-interval = 1\ngc-min-age = 0\n";
    let (rig, servers) = Rig::start_with(1, &[every]);
    drop(servers);
    let fe = rig.serve_with(0, &["--metrics-listen", "127.0.0.1:0"]);
    let dir = rig.dir.path().to_owned();
    let log = std::fs::read_to_string(dir.join("serve-a.log")).expect("A's log");
    let addr = log
        .lines()
        .find_map(|l| {
            l.split_once("metrics on http://")
                .map(|(_, a)| a.to_owned())
        })
        .unwrap_or_else(|| panic!("no metrics address in {log}"));
    let scrape = || {
        Run::tool("curl")
            .args(["-sf", &format!("http://{addr}")])
            .success()
            .stdout_text()
    };
    let metric = |text: &str, name: &str| {
        svelto_testkit::metric_sum(text, name).unwrap_or_else(|| panic!("no {name} in\n{text}"))
    };
    let url = fe.url("proj");
    for n in 1..=3 {
        put(&dir, &url, "f", &format!("text {n}\n"));
    }
    let orphans = Orphans::new(&rig.files[0]);
    let before = scrape();
    let (objects_before, bytes_before) = (
        metric(&before, "svelto_cluster_gc_deleted_objects_total"),
        metric(&before, "svelto_cluster_gc_deleted_bytes_total"),
    );
    let keys = [orphans.put(0xd1), orphans.put(0xd2)];
    let sizes: u64 = {
        let all = objects(&rig._s3);
        keys.iter().map(|k| all[k]).sum()
    };
    for key in &keys {
        assert!(
            gone_within(&rig._s3, key, std::time::Duration::from_secs(20)),
            "{key} not collected within 20 s"
        );
    }
    let after = scrape();
    assert!(
        metric(&after, "svelto_cluster_gc_passes_total{result=\"ok\"}") >= 1,
        "{after}"
    );
    assert_eq!(
        metric(&after, "svelto_cluster_gc_passes_total{result=\"failed\"}"),
        0,
        "{after}"
    );
    // The two orphans and whatever else this front end's passes deleted (each logged:
    // the counters are the log's sums).
    let (objects, bytes) = (
        metric(&after, "svelto_cluster_gc_deleted_objects_total"),
        metric(&after, "svelto_cluster_gc_deleted_bytes_total"),
    );
    assert!(
        objects >= objects_before + 2 && bytes >= bytes_before + sizes,
        "{after}"
    );
    let log = std::fs::read_to_string(dir.join("serve-a.log")).expect("A's log");
    let this_run = &log[log.rfind("metrics on http://").expect("A's start")..];
    let logged: Vec<u64> = this_run
        .lines()
        .filter_map(|l| l.split_once("cluster gc: proj: deleted ").map(|(_, d)| d))
        .map(|d| {
            d.rsplit_once(' ')
                .expect("KEY BYTES")
                .1
                .parse()
                .expect("bytes")
        })
        .collect();
    for key in &keys {
        assert!(this_run.contains(&format!("cluster gc: proj: deleted {key} ")));
    }
    let lines = logged.len() as u64;
    assert!(
        lines >= objects && logged.iter().take(objects as usize).sum::<u64>() == bytes,
        "the counters ({objects} objects, {bytes} bytes) are not the log's {logged:?}\n{after}"
    );
    // A round ended at a plausible time (after 2020), and rounds go on every second.
    let last = metric(&after, "svelto_cluster_gc_last_round_timestamp_seconds");
    assert!(last > 1_577_836_800, "{after}");
    std::thread::sleep(std::time::Duration::from_millis(2500));
    let later = scrape();
    assert!(
        metric(&later, "svelto_cluster_gc_last_round_timestamp_seconds") > last,
        "{later}"
    );
    assert!(
        metric(&later, "svelto_cluster_gc_passes_total{result=\"ok\"}")
            > metric(&after, "svelto_cluster_gc_passes_total{result=\"ok\"}"),
        "{later}"
    );
    drop(fe);
}
