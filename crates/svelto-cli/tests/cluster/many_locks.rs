//! Locks in the cluster: one etcd key per lock, read by a front end only when the head's
//! lock-change field moved (docs/cluster.md, "Locks"). More locks than one etcd value can
//! hold, the old single `locks` key converted by the next lock change, and the etcd round
//! trips of an `svn info`.

use super::*;

/// The etcd prefix of the rig's repository `proj`.
const PROJ: &str = "/svelto/test/repos/proj";

/// `etcdctl` against the rig's members.
fn etcdctl(rig: &Rig) -> Run {
    Run::tool("etcdctl")
        .arg(format!("--endpoints={}", rig.etcd.endpoints().join(",")))
        .arg("--command-timeout=10s")
}

/// The keys under `prefix`.
fn keys_under(rig: &Rig, prefix: &str) -> Vec<String> {
    etcdctl(rig)
        .args(["get", "--prefix", "--keys-only", prefix])
        .success()
        .stdout_text()
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The sum over the etcd members of `grpc_server_handled_total` for `method` (Range,
/// Txn...): every request etcd answered.
fn etcd_calls(rig: &Rig, method: &str) -> u64 {
    use std::io::{Read, Write};
    let query = format!("grpc_server_handled_total{{grpc_method=\"{method}\"}}");
    rig.etcd
        .endpoints()
        .iter()
        .map(|url| {
            let addr = url.trim_start_matches("http://");
            let mut s = std::net::TcpStream::connect(addr).expect("connect to etcd");
            s.write_all(b"GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n")
                .expect("ask for metrics");
            let mut text = String::new();
            s.read_to_string(&mut text).expect("read metrics");
            svelto_testkit::metric_sum(&text, &query).unwrap_or(0)
        })
        .sum()
}

/// `svn lock` (or `unlock`) of `targets` as alice, with `extra` flags.
fn as_alice(command: &str, extra: &[&str], targets: &[String]) -> svelto_testkit::Outcome {
    Run::tool("svn")
        .args([command, "--non-interactive", "--no-auth-cache"])
        .args(["--username", "alice", "--password", "apw"])
        .args(extra)
        .args(targets)
        .timeout(Duration::from_secs(600))
        .output()
}

#[test]
fn more_locks_than_one_etcd_value_holds_and_the_old_key_converted() {
    const FILES: usize = 2000;
    let (rig, fe) = Rig::start(2, "");
    rig.let_alice_in();
    let (a, _) = (fe[0].url("proj"), fe[1].url("proj"));
    let admin_file = cluster_file(rig.dir.path(), &rig.etcd, &rig._s3, "admin", "");
    let lslocks = || {
        Run::new(svelto_bin())
            .args(["admin", "lslocks", "--cluster"])
            .arg(&admin_file)
            .arg("proj")
            .timeout(Duration::from_secs(120))
            .success()
            .stdout_text()
    };
    let tree = rig.dir.path().join("tree");
    std::fs::create_dir_all(&tree).expect("tree");
    for i in 0..FILES {
        std::fs::write(tree.join(format!("f{i:04}.bin")), format!("{i}\n")).expect("file");
    }
    let url_of = |base: &str, i: usize| format!("{base}/files/f{i:04}.bin");
    svn(&[
        "import",
        "-m",
        "files",
        tree.to_str().expect("UTF-8"),
        &format!("{a}/files"),
    ]);

    // A cluster made before the per-lock keys: its table is the single `locks` key (put
    // while the front ends are stopped, then started again: an upgrade).
    drop(fe);
    let legacy = svelto_core::Lock {
        path: "files/f0000.bin".into(),
        token: "opaquelocktoken:0a6e8f1c-2b3d-4e5f-8a9b-0c1d2e3f4a5b".into(),
        owner: "alice".into(),
        comment: Some("from before".into()),
        created: "2026-11-29T00:00:00.000000Z".into(),
        expires: None,
    };
    let table = BTreeMap::from([(legacy.path.clone(), legacy.clone())]);
    etcdctl(&rig)
        .args(["put", &format!("{PROJ}/locks")])
        .stdin_bytes(svelto_store::encode_lock_table(&table).into_bytes())
        .success();
    let fe: Vec<Svelto> = (0..2).map(|i| rig.serve(i)).collect();
    let (a, b) = (fe[0].url("proj"), fe[1].url("proj"));
    for url in [&a, &b] {
        let info = svn(&["info", &url_of(url, 0)]);
        assert!(
            info.contains("Lock Token: opaquelocktoken:0a6e8f1c") && info.contains("from before"),
            "the old key is read as before: {info}"
        );
    }

    // 2,000 locks with a 1 KB comment: about 2.4 MB, more than one etcd value (1.5 MiB).
    let comment = "c".repeat(1000);
    let started = Instant::now();
    for chunk in (1..FILES).collect::<Vec<_>>().chunks(500) {
        let targets: Vec<String> = chunk.iter().map(|&i| url_of(&a, i)).collect();
        let out = as_alice("lock", &["-m", &comment], &targets);
        assert!(out.success(), "lock through A: {out}");
        assert_eq!(
            out.stdout_text().matches("locked by user 'alice'").count(),
            chunk.len(),
            "{out}"
        );
    }
    eprintln!(
        "{} locks in 4 svn lock commands: {:?}",
        FILES - 1,
        started.elapsed()
    );
    // Converted by the first lock change: the old key gone, one key per lock.
    let keys = keys_under(&rig, &format!("{PROJ}/locks"));
    assert!(
        !keys.contains(&format!("{PROJ}/locks")),
        "the old key is gone"
    );
    assert_eq!(keys.len(), FILES, "one key per lock");
    assert!(keys.contains(&format!("{PROJ}/locks/files/f0000.bin")));

    // All seen through B: svn info and lslocks.
    let info = svn(&["info", "--depth", "infinity", &format!("{b}/files")]);
    assert_eq!(
        info.matches("Lock Owner: alice").count(),
        FILES,
        "svn info through B"
    );
    assert_eq!(info.matches(&comment).count(), FILES - 1);
    let listed = lslocks();
    assert_eq!(listed.matches("Owner: alice").count(), FILES, "lslocks");
    assert!(
        listed.contains("Path: /files/f1999.bin"),
        "{}",
        &listed[..500]
    );

    // A commit through B touching a locked file without its token is refused, as
    // svnserve refuses it (an anonymous writer: svnserve's words for that case).
    let refused = svnmucc("no token", &["put", "/dev/null", &url_of(&b, 1234)]);
    assert!(!refused.success(), "{refused}");
    assert!(
        refused.stderr_text().contains(
            "E160034: Cannot verify lock on path '/files/f1234.bin'; no username available"
        ),
        "{refused}"
    );

    // Unlocked through B (the last 1,000), seen through A at once.
    let targets: Vec<String> = (1000..FILES).map(|i| url_of(&b, i)).collect();
    let out = as_alice("unlock", &[], &targets);
    assert!(out.success(), "unlock through B: {out}");
    for i in [1000, 1500, 1999] {
        let info = svn(&["info", &url_of(&a, i)]);
        assert!(!info.contains("Lock Owner"), "{info}");
    }
    let info = svn(&["info", &url_of(&a, 999)]);
    assert!(info.contains("Lock Owner: alice"), "{info}");
    assert_eq!(
        keys_under(&rig, &format!("{PROJ}/locks/")).len(),
        1000,
        "the unlocked keys deleted"
    );
    assert_eq!(lslocks().matches("Owner: alice").count(), 1000);
    // The same commit through A, of a file unlocked through B, is accepted.
    let put = svnmucc("unlocked", &["put", "/dev/null", &url_of(&a, 1234)]);
    assert!(put.success(), "{put}");

    drop(fe);
}

/// The etcd requests (Range, Txn) of `count` runs of `svn info` of a locked file through
/// each front end, the lock taken through A (the writer then).
#[test]
fn svn_info_reads_no_lock_key_while_no_lock_changes() {
    let (rig, fe) = Rig::start(2, "");
    rig.let_alice_in();
    let (a, b) = (fe[0].url("proj"), fe[1].url("proj"));
    let work = rig.dir.path().join("work");
    std::fs::create_dir_all(&work).expect("work");
    put(&work, &a, "f.txt", "text\n");
    let out = as_alice("lock", &["-m", "mine"], &[format!("{a}/f.txt")]);
    assert!(out.success(), "{out}");
    let count = 20;
    let mut costs = Vec::new();
    for (name, url) in [("A (the writer)", &a), ("B", &b)] {
        let file = format!("{url}/f.txt");
        assert!(svn(&["info", &file]).contains("Lock Owner: alice"));
        let (ranges, txns) = (etcd_calls(&rig, "Range"), etcd_calls(&rig, "Txn"));
        for _ in 0..count {
            assert!(svn(&["info", &file]).contains("Lock Owner: alice"));
        }
        let (ranges, txns) = (
            etcd_calls(&rig, "Range") - ranges,
            etcd_calls(&rig, "Txn") - txns,
        );
        eprintln!("{count} svn info through {name}: {ranges} Range, {txns} Txn");
        costs.push((ranges, txns));
    }
    // B: fences alone (svn info over svn:// is three commands, each fenced, and the lock
    // check fences once more of its own: 4 Range each, a few more from the front ends'
    // own background); no read of the lock keys (a snapshot Txn) while no lock changes.
    let (ranges, txns) = costs[1];
    assert!(
        txns == 0 && 2 * ranges <= 9 * count,
        "svn info through B: {ranges} Range, {txns} Txn for {count}"
    );
    // A lock change through A costs B one snapshot read, once.
    let out = as_alice("unlock", &[], &[format!("{a}/f.txt")]);
    assert!(out.success(), "{out}");
    let txns = etcd_calls(&rig, "Txn");
    for _ in 0..3 {
        assert!(!svn(&["info", &format!("{b}/f.txt")]).contains("Lock Owner"));
    }
    assert_eq!(
        etcd_calls(&rig, "Txn") - txns,
        1,
        "one snapshot read, then none"
    );
    drop(fe);
}
