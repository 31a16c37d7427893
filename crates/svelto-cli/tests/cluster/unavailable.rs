//! Failure paths that must not leave a client waiting (docs/cluster.md, "Failure
//! behaviour"): `svn lock` / `svn unlock` of many paths and a commit while etcd has no
//! majority, over svn:// and over http://, each end within a bound with an error naming
//! the cause, and the front ends serve again once the members return.

use super::*;

/// How long any client command may take while a component is down.
const BOUND: Duration = Duration::from_secs(30);

/// `svn ARGS` as alice, killed after twice the bound (so that a hang is reported, not
/// waited out).
fn svn_as_alice(args: &[&str]) -> svelto_testkit::Outcome {
    Run::tool("svn")
        .args(["--non-interactive", "--no-auth-cache"])
        .args(["--username", "alice", "--password", "apw"])
        .args(args)
        .timeout(BOUND * 2)
        .output()
}

/// What a refusal while etcd has no majority says (the cluster's words for it).
fn names_etcd(text: &str) -> bool {
    text.contains("coordination service (etcd)") || text.contains("etcd")
}

/// The command ended within the bound, refused, naming etcd.
fn refused_in_bound(what: &str, out: &svelto_testkit::Outcome) {
    assert!(
        out.elapsed < BOUND,
        "{what} took {:?} (bound {BOUND:?}): {out}",
        out.elapsed
    );
    assert!(
        !out.success(),
        "{what} succeeded without etcd's majority: {out}"
    );
    assert!(
        names_etcd(&out.stderr_text()),
        "{what}: the error does not name etcd: {out}"
    );
}

/// Files `f000..fNNN` imported under `/files` through `url`; their URLs below `base`.
fn import_files(rig: &Rig, url: &str, count: usize, name: &str) {
    let tree = rig.dir.path().join(name);
    std::fs::create_dir_all(&tree).expect("tree");
    for i in 0..count {
        std::fs::write(tree.join(format!("f{i:03}")), format!("{i}\n")).expect("file");
    }
    svn(&[
        "import",
        "-m",
        "files",
        tree.to_str().expect("UTF-8"),
        &format!("{url}/{name}"),
    ]);
}

fn urls_of(base: &str, name: &str, range: std::ops::Range<usize>) -> Vec<String> {
    range.map(|i| format!("{base}/{name}/f{i:03}")).collect()
}

/// Front end A over svn://, front end B over http:// (alice's password in an htpasswd
/// file), on the same cluster.
fn svn_and_http_front_ends() -> (Rig, Svelto, Svelto) {
    let (rig, mut fe) = Rig::start(2, "");
    rig.let_alice_in();
    let b = fe.pop().expect("B");
    drop(b);
    let a = fe.pop().expect("A");
    let htpasswd = rig.dir.path().join("htpasswd");
    Run::tool("htpasswd")
        .args(["-bc"])
        .arg(&htpasswd)
        .args(["alice", "apw"])
        .success();
    let b = Svelto::start_http(
        &svelto_bin(),
        &rig.roots[1],
        &rig.dir.path().join("serve-b-http.log"),
        "/svn",
        &[
            "--cluster",
            rig.files[1].to_str().expect("UTF-8"),
            "--http-auth-file",
            htpasswd.to_str().expect("UTF-8"),
        ],
    );
    (rig, a, b)
}

/// `svn lock` of 200 paths over svn:// and of 10 over http://, `svn unlock` of locked
/// ones, and a commit through each, while two of the three etcd members are down: each
/// ends within the bound, refused naming etcd (before the fix, svn:// `lock-many` and
/// `unlock-many` answered a failure of the whole batch with the failure alone, which the
/// client read as the first path's result, then waited for the others' forever). With the
/// members back, the same commands succeed through both.
#[test]
fn lock_unlock_and_commit_without_etcds_majority_end_in_bound_naming_etcd() {
    let (mut rig, a, b) = svn_and_http_front_ends();
    let (a_url, b_url) = (a.url("proj"), b.url("proj"));
    import_files(&rig, &a_url, 200, "files");
    // Locked while etcd is whole: the unlocks below have something to do.
    let locked = urls_of(&a_url, "files", 150..200);
    let mut args = vec!["lock", "-m", "before"];
    args.extend(locked.iter().map(String::as_str));
    let out = svn_as_alice(&args);
    assert!(out.success(), "{out}");

    rig.etcd.kill(0);
    rig.etcd.kill(1);
    let comment = "c".repeat(1000);
    let svn_targets = urls_of(&a_url, "files", 0..150);
    let mut args = vec!["lock", "-m", comment.as_str()];
    args.extend(svn_targets.iter().map(String::as_str));
    let out = svn_as_alice(&args);
    refused_in_bound("svn lock of 150 paths over svn://", &out);
    eprintln!(
        "lock of 150 over svn:// without a majority: {:?}: {}",
        out.elapsed,
        out.stderr_text().lines().last().unwrap_or("")
    );
    let mut args = vec!["unlock"];
    args.extend(locked.iter().map(String::as_str));
    let out = svn_as_alice(&args);
    refused_in_bound("svn unlock of 50 paths over svn://", &out);

    let http_targets = urls_of(&b_url, "files", 0..10);
    let mut args = vec!["lock", "-m", comment.as_str()];
    args.extend(http_targets.iter().map(String::as_str));
    let out = svn_as_alice(&args);
    refused_in_bound("svn lock of 10 paths over http://", &out);
    // B has nothing of proj cached: the error names the repository's head, not that of a
    // path in it taken for one (the search for the repository goes deepest first).
    assert!(
        out.stderr_text().contains("repos/proj/head")
            && !out.stderr_text().contains("repos/proj/files"),
        "the refusal names a path below the repository: {out}"
    );
    eprintln!(
        "lock of 10 over http:// without a majority: {:?}: {}",
        out.elapsed,
        out.stderr_text().lines().last().unwrap_or("")
    );
    let http_locked = urls_of(&b_url, "files", 190..200);
    let mut args = vec!["unlock"];
    args.extend(http_locked.iter().map(String::as_str));
    let out = svn_as_alice(&args);
    refused_in_bound("svn unlock of 10 paths over http://", &out);

    for url in [&a_url, &b_url] {
        let out = svn_as_alice(&["mkdir", "-m", "no majority", &format!("{url}/refused")]);
        refused_in_bound(&format!("a commit through {url}"), &out);
    }

    rig.etcd.restart(0);
    rig.etcd.restart(1);
    // Serving again: the lock batch and the unlocks go through once etcd answers.
    let back = Instant::now();
    let mut args = vec!["lock", "-m", comment.as_str()];
    args.extend(svn_targets.iter().map(String::as_str));
    loop {
        let out = svn_as_alice(&args);
        if out.success() {
            assert_eq!(
                out.stdout_text().matches("locked by user 'alice'").count(),
                150,
                "{out}"
            );
            break;
        }
        assert!(
            back.elapsed() < Duration::from_secs(60),
            "no lock a minute after etcd's return: {out}"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    let mut args = vec!["unlock"];
    args.extend(locked.iter().map(String::as_str));
    let out = svn_as_alice(&args);
    assert!(out.success(), "{out}");
    let out = svn_as_alice(&["mkdir", "-m", "back", &format!("{b_url}/back")]);
    assert!(
        out.success(),
        "a commit over http:// after etcd's return: {out}"
    );
    let info = svn(&["info", &format!("{b_url}/files/f000")]);
    assert!(info.contains("Lock Owner: alice"), "{info}");
    drop((a, b));
}

/// A commit over svn:// and one over http:// while the object store is down end within
/// the bound, refused naming the object store; once it is back, commits go through both.
#[test]
fn commits_without_the_object_store_end_in_bound_naming_it() {
    let (mut rig, a, b) = svn_and_http_front_ends();
    let (a_url, b_url) = (a.url("proj"), b.url("proj"));
    svn(&["mkdir", "-m", "before", &format!("{a_url}/before")]);
    rig._s3.kill();
    for url in [&a_url, &b_url] {
        let out = svn_as_alice(&["mkdir", "-m", "no store", &format!("{url}/refused")]);
        assert!(
            out.elapsed < BOUND,
            "a commit through {url} took {:?}: {out}",
            out.elapsed
        );
        assert!(!out.success(), "{out}");
        assert!(
            out.stderr_text().contains("object store"),
            "the error does not name the object store: {out}"
        );
    }
    rig._s3.restart();
    // weed refuses PUTs for a while after its restart (docs/cluster.md, "Measured").
    let back = Instant::now();
    for (i, url) in [&a_url, &b_url].into_iter().enumerate() {
        loop {
            let out = svn_as_alice(&["mkdir", "-m", "back", &format!("{url}/back-{i}")]);
            assert!(out.elapsed < BOUND, "{out}");
            if out.success() {
                break;
            }
            assert!(
                back.elapsed() < Duration::from_secs(90),
                "no commit through {url} 90 s after the object store's return: {out}"
            );
            std::thread::sleep(Duration::from_millis(500));
        }
    }
    eprintln!(
        "commits through both front ends {:?} after the object store's return",
        back.elapsed()
    );
    drop((a, b));
}

/// The writer front end stopped (SIGSTOP) longer than its lease's TTL in the middle of an
/// `svn lock` batch (each path's pre-lock hook sleeping, so that the batch lasts), then
/// continued: the client's command ends within the bound after SIGCONT, either done
/// (the lease taken again) or refused saying the lease was lost; the front end then
/// locks and commits as before.
#[test]
fn a_lock_batch_whose_writer_lost_its_lease_ends_in_bound() {
    let (rig, a, b) = svn_and_http_front_ends();
    let a_url = a.url("proj");
    import_files(&rig, &a_url, 40, "files");
    hook(
        &rig.roots[0],
        "proj",
        "pre-lock",
        "#!/bin/sh\nsleep 0.1\nexit 0\n",
    );
    let targets = urls_of(&a_url, "files", 0..40);
    let mut args: Vec<&str> = vec![
        "lock",
        "--non-interactive",
        "--no-auth-cache",
        "--username",
        "alice",
        "--password",
        "apw",
        "-m",
        "held",
    ];
    args.extend(targets.iter().map(String::as_str));
    let running = Run::tool("svn").args(&args).timeout(BOUND * 4).spawn();
    std::thread::sleep(Duration::from_millis(1500));
    let pid = a.pid().to_string();
    Run::tool("kill").args(["-STOP", &pid]).success();
    // The lease's TTL is 2 s: 5 s stopped lose it.
    std::thread::sleep(Duration::from_secs(5));
    Run::tool("kill").args(["-CONT", &pid]).success();
    let continued = Instant::now();
    let out = running.wait();
    let after = continued.elapsed();
    eprintln!(
        "svn lock with its writer stopped 5 s: ended {after:?} after SIGCONT, {}: {}",
        if out.success() { "done" } else { "refused" },
        out.stderr_text().lines().last().unwrap_or("")
    );
    assert!(after < BOUND, "ended {after:?} after SIGCONT: {out}");
    if !out.success() {
        let err = out.stderr_text();
        assert!(
            err.contains("lease") || err.contains("etcd"),
            "the refusal does not say why: {out}"
        );
    }
    // Serving again: the rest locked, a commit through A.
    let out = svn_as_alice(&[
        "lock",
        "--force",
        "-m",
        "again",
        &format!("{a_url}/files/f039"),
    ]);
    assert!(out.success(), "{out}");
    let out = svn_as_alice(&["mkdir", "-m", "after", &format!("{a_url}/after")]);
    assert!(out.success(), "{out}");
    drop((a, b));
}
