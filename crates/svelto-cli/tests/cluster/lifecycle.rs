//! A front end's life around the cluster: an svn+ssh tunnel process (`svelto serve -t
//! --cluster FILE`, forced by a real OpenSSH server's `authorized_keys`) gives the writer
//! lease back when its connection ends (and runs its commits' post-commit hooks once,
//! leaving no record for a front end to run again); a commit still running when `--shutdown-grace`
//! ends is refused and leaves no revision behind; front ends come back (member keys,
//! writer campaigns) after every etcd member was down; commits and revision property
//! changes in flight while the etcd majority is lost.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use svelto_testkit::sshd::{forced, keygen, login_name, openssh, quoted, Sshd};
use svelto_testkit::Run;

use crate::{
    changers, check_changes, check_log, cluster_file, committing, fixed, hook, post_commit, put,
    root_with_conf, rotating, seeded_rig, stopped, svelto_bin, svn, Rig,
};

/// The log of `url` as (revision, author, message) lines, oldest first.
fn history(url: &str) -> Vec<String> {
    let xml = svn(&["log", "--xml", "-r", "1:HEAD", url]);
    let mut out = Vec::new();
    for entry in xml.split("<logentry").skip(1) {
        let field = |tag: &str| {
            entry
                .split_once(&format!("<{tag}>"))
                .and_then(|(_, rest)| rest.split_once(&format!("</{tag}>")))
                .map_or(String::new(), |(v, _)| v.to_owned())
        };
        let rev = entry
            .split_once("revision=\"")
            .and_then(|(_, r)| r.split_once('"'))
            .map_or(String::new(), |(r, _)| r.to_owned());
        out.push(format!(
            "r{rev} {} {}",
            field("author"),
            field("msg").trim()
        ));
    }
    out
}

/// Waits up to `limit` for `done`, polling; how long it took, or None.
fn within(limit: Duration, mut done: impl FnMut() -> bool) -> Option<Duration> {
    let started = Instant::now();
    loop {
        if done() {
            return Some(started.elapsed());
        }
        if started.elapsed() > limit {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn an_svn_ssh_tunnel_process_gives_the_writer_lease_back_when_its_connection_ends() {
    for tool in ["sshd", "ssh", "ssh-keygen"] {
        openssh(tool);
    }
    // A keeps the lease a minute after its commits; the tunnel's lease would live 10 s,
    // and it too keeps it a minute when idle: only its resignation at the connection's
    // end lets A in at once. Post-commit hooks on A and on the tunnel's root log each run;
    // A would claim within a second a record the tunnel process left (it is not in the
    // member registry).
    let (rig, servers) = Rig::start(1, "writer-idle-ms = 60000\nhook-grace = 1\n");
    let dir = rig.dir.path().to_path_buf();
    let tunnel_file = cluster_file(
        &dir,
        &rig.etcd,
        &rig._s3,
        "t",
        "lease-ttl = 10\nwriter-idle-ms = 60000\nwriter-wait = 20\n",
    );
    let tunnel_root = root_with_conf(&dir, "t", "proj");
    let hook_log = dir.join("post-commit.log");
    post_commit::logging_post_commit_hooks(&rig, &hook_log, &dir.join("hold"));
    hook(
        &tunnel_root,
        "proj",
        "post-commit",
        &format!(
            "#!/bin/sh\necho \"$2 t $3 $1 $$\" >> {}\n",
            quoted(&hook_log)
        ),
    );
    let (key, public) = keygen(&dir, "alice");
    let command = format!(
        "{} serve -t --cluster {} -r {} --tunnel-user=alice",
        quoted(&svelto_bin()),
        quoted(&tunnel_file),
        quoted(&tunnel_root)
    );
    let sshd_dir = dir.join("sshd");
    std::fs::create_dir_all(&sshd_dir).expect("sshd's directory");
    let sshd = Sshd::start(&sshd_dir, &forced(&command, &public));
    let tunnel_url = format!("svn+ssh://{}@127.0.0.1/proj", login_name());
    let a = servers[0].url("proj");
    let work = dir.join("work");
    std::fs::create_dir_all(&work).expect("work");

    for round in 0..3 {
        // A commits and keeps the lease (idle).
        let (rev_a, _) = put(&work, &a, "a.txt", &format!("A, round {round}\n"));
        assert_eq!(rig.writer().as_deref(), Some("a"), "after r{rev_a}");
        // Through the tunnel: it asks A for the lease (A gives it back, idle), commits,
        // and resigns when the connection ends.
        let started = Instant::now();
        let out = sshd.svn(
            &key,
            &work,
            &[
                "mkdir",
                "-m",
                &format!("tunnel, round {round}"),
                &format!("{tunnel_url}/t{round}"),
            ],
        );
        let tunnel_took = started.elapsed();
        assert!(
            out.success(),
            "svn mkdir through the tunnel: {out}\n{}",
            sshd.log_text()
        );
        assert!(
            out.stdout_text()
                .contains(&format!("Committed revision {}.", rev_a + 1)),
            "{out}"
        );
        let vacant = within(Duration::from_secs(3), || rig.writer().is_none());
        assert!(
            vacant.is_some(),
            "the tunnel process still holds the writer lease ({:?}) 3 s after its \
             connection ended (its lease lives 10 s)",
            rig.writer()
        );
        let (rev, took) = put(&work, &a, "a.txt", &format!("A after the tunnel {round}\n"));
        assert_eq!(rev, rev_a + 2);
        eprintln!(
            "round {round}: tunnel commit r{} took {tunnel_took:?} (ssh login and all); the \
             lease vacant {:?} after svn exited; A's next commit r{rev} took {took:?}",
            rev_a + 1,
            vacant.unwrap_or_default()
        );
        assert!(
            took < Duration::from_secs(4),
            "A's commit after the tunnel took {took:?}"
        );
    }
    let log = history(&a);
    assert_eq!(log.len(), 9, "{log:?}");
    for round in 0..3 {
        assert!(
            log.contains(&format!("r{} alice tunnel, round {round}", 3 * round + 2)),
            "{log:?}"
        );
    }
    // Each revision's post-commit ran once, where it was committed (the tunnel's three on
    // its root, as svnserve -t runs them), and no record is left for A to claim, past
    // A's grace and several of its scans.
    std::thread::sleep(Duration::from_secs(2));
    let runs = post_commit::hook_runs(&hook_log);
    let ran: Vec<(u64, &str)> = runs.iter().map(|r| (r.rev, r.front_end.as_str())).collect();
    let mut expected: Vec<(u64, &str)> = (1..=9)
        .map(|rev| (rev, if rev % 3 == 2 { "t" } else { "a" }))
        .collect();
    let mut sorted = ran.clone();
    sorted.sort();
    expected.sort();
    assert_eq!(sorted, expected, "post-commit runs {runs:?}");
    assert_eq!(runs[1].repos, tunnel_root.join("proj"));
    assert!(post_commit::etcd_keys(&rig, "post-commit").is_empty());
}

#[test]
fn a_commit_running_past_the_shutdown_grace_is_refused_and_leaves_no_revision() {
    let (rig, mut servers) = Rig::start(2, "");
    let dir = rig.dir.path().to_path_buf();
    // A again with a one-second grace, and a pre-commit hook that takes four.
    drop(servers.remove(0));
    let a = rig.serve_with(0, &["--shutdown-grace", "1"]);
    let b = &servers[0];
    let work = dir.join("work");
    std::fs::create_dir_all(&work).expect("work");
    let (first, _) = put(&work, &b.url("proj"), "f.txt", "one\n");
    let started_mark = dir.join("hook-started");
    hook(
        &rig.roots[0],
        "proj",
        "pre-commit",
        &format!(
            "#!/bin/sh\ntouch {}\nsleep 4\nexit 0\n",
            quoted(&started_mark)
        ),
    );
    let text = work.join("slow.txt");
    std::fs::write(&text, "slow\n").expect("text");
    let a_url = a.url("proj");
    let slow = std::thread::spawn({
        let text = text.clone();
        let url = format!("{a_url}/slow.txt");
        move || {
            Run::tool("svnmucc")
                .args(["--non-interactive", "--no-auth-cache", "-m", "slow", "put"])
                .arg(&text)
                .arg(url)
                .timeout(Duration::from_secs(60))
                .output()
        }
    });
    assert!(
        within(Duration::from_secs(20), || started_mark.exists()).is_some(),
        "the hook never started"
    );
    let signalled = Instant::now();
    Run::tool("kill")
        .args(["-TERM", &a.pid().to_string()])
        .success();
    let exited = within(Duration::from_secs(10), || !a.is_running());
    assert!(exited.is_some(), "A did not exit after SIGTERM");
    let out = slow.join().expect("the slow commit");
    let answered = signalled.elapsed();
    eprintln!(
        "SIGTERM with a commit in its pre-commit hook: A exited after {:?}; the client's \
         answer {answered:?} after the signal: {}",
        exited.unwrap_or_default(),
        out.stderr_text().trim()
    );
    assert!(
        !out.success(),
        "the commit cannot have been acknowledged: {out}"
    );
    assert!(
        out.stderr_text().contains("svnmucc: E"),
        "the client says it failed: {out}"
    );
    let a_log = std::fs::read_to_string(dir.join("serve-a.log")).expect("A's log");
    assert!(
        a_log.contains("still running after 1 s; exiting anyway"),
        "{a_log}"
    );
    // Nothing of it is visible; the next commit is the next revision; the cluster
    // verifies; the hook finished after A was gone and changed nothing.
    std::thread::sleep(Duration::from_secs(4));
    let b_url = b.url("proj");
    let missing = Run::tool("svn")
        .args(["cat", "--non-interactive", &format!("{b_url}/slow.txt")])
        .failure();
    assert!(
        missing.stderr_text().contains("W160013: File not found"),
        "{missing}"
    );
    let (next, _) = put(&work, &b_url, "g.txt", "two\n");
    assert_eq!(next, first + 1, "no revision was left behind");
    Run::new(svelto_bin())
        .args(["admin", "verify", "-q", "--cluster"])
        .arg(&rig.files[1])
        .arg("proj")
        .timeout(Duration::from_secs(120))
        .success();
    // A restarted on its cache serves the same history.
    let a = rig.serve(0);
    assert_eq!(history(&a.url("proj")), history(&b_url));
}

#[test]
fn front_ends_register_and_commit_again_after_every_etcd_member_was_down() {
    let (mut rig, servers) = Rig::start(2, "writer-idle-ms = 60000\n");
    let dir = rig.dir.path().to_path_buf();
    let work = dir.join("work");
    std::fs::create_dir_all(&work).expect("work");
    let urls: Vec<String> = servers.iter().map(|s| s.url("proj")).collect();
    // A opens the repository (and holds the writer lease, idle) before the outage; B
    // first opens it after (before a fix, its open read the head once, on a connection
    // etcd's client kept refused: "tcp connect error" 7 s after every member was back).
    put(&work, &urls[0], "f.txt", "before\n");
    assert_eq!(rig.writer().as_deref(), Some("a"));
    let members = |file: &Path| {
        Run::new(svelto_bin())
            .args(["admin", "members", "--cluster"])
            .arg(file)
            .timeout(Duration::from_secs(60))
            .output()
    };
    let both_listed = |text: &str| {
        servers.iter().zip(["a", "b"]).all(|(s, id)| {
            text.lines().any(|l| {
                l.starts_with(&format!("{id} svn://")) && l.ends_with(&format!("pid={}", s.pid()))
            })
        })
    };
    assert!(both_listed(&members(&rig.files[1]).stdout_text()));

    // Every member down for longer than the leases' TTL (2 s), then back.
    let down = Instant::now();
    for i in 0..3 {
        rig.etcd.kill(i);
    }
    std::thread::sleep(Duration::from_secs(4));
    let listed = members(&rig.files[1]);
    assert!(!listed.success(), "members listed without etcd: {listed}");
    let refused = crate::svnmucc("without etcd", &["mkdir", &format!("{}/no", urls[1])]);
    assert!(!refused.success(), "a commit without etcd: {refused}");
    for i in 0..3 {
        rig.etcd.restart(i);
    }
    let back = Instant::now();
    eprintln!("etcd down for {:?}", back - down);
    // Both front ends registered again, and stay registered past their old leases' TTL
    // (a key left on a lease no longer kept alive would go then).
    let listed_again = within(Duration::from_secs(30), || {
        both_listed(&members(&rig.files[1]).stdout_text())
    });
    assert!(
        listed_again.is_some(),
        "the front ends did not register again: {}",
        members(&rig.files[1])
    );
    std::thread::sleep(Duration::from_secs(6));
    let listed = members(&rig.files[0]).stdout_text();
    assert!(both_listed(&listed), "{listed}");
    // Commits through both, alternately: each front end campaigns for the lease again.
    let mut revs = Vec::new();
    let mut first_commit = None;
    for round in 0..4 {
        let url = &urls[round % 2];
        let started = Instant::now();
        let out = crate::svnmucc(
            &format!("after the outage, {round}"),
            &["mkdir", &format!("{url}/after-{round}")],
        );
        if first_commit.is_none() {
            first_commit = Some(started.elapsed());
        }
        assert!(out.success(), "commit {round} after the outage: {out}");
        revs.push(out.stdout_text());
    }
    eprintln!(
        "after etcd's return: both front ends listed again after {:?}; four commits \
         through both: {revs:?} (the first, through A, took {:?})",
        listed_again.unwrap_or_default(),
        first_commit.unwrap_or_default()
    );
    let log = history(&urls[0]);
    assert_eq!(log.len(), 5, "{log:?}");
    assert!(log[4].ends_with("after the outage, 3"), "{log:?}");
    assert_eq!(history(&urls[1]), log);
}

/// Losing the etcd majority while committers and a changer of revision properties run:
/// every commit and change is either acknowledged (and there once etcd is back) or
/// refused saying etcd has no quorum; reads go on meanwhile; all is writable again once the members
/// return; the three front ends give the same value of every changed property.
#[test]
fn majority_loss_with_commits_and_revision_property_changes_in_flight() {
    let (mut rig, servers, urls) = seeded_rig();
    let dir = rig.dir.path().to_path_buf();
    let (stop, acks, committing) = committing(vec![fixed(&urls[0]), fixed(&urls[1])], &dir);
    let shared = Arc::new(Mutex::new(urls[1..].to_vec()));
    let changing = changers(&[(1, rotating(&shared, 0))], &stop);
    std::thread::sleep(Duration::from_secs(3));

    // Two of three members down for 8 s: reads through C go on meanwhile.
    rig.etcd.kill(0);
    rig.etcd.kill(1);
    let down = Instant::now();
    let mut reads = 0;
    while down.elapsed() < Duration::from_secs(8) {
        let seed = Run::tool("svn")
            .args(["cat", "-r", "1", "--non-interactive"])
            .arg(format!("{}/seed.txt", urls[2]))
            .timeout(Duration::from_secs(30))
            .output();
        assert!(seed.success(), "a read without etcd's majority: {seed}");
        assert_eq!(seed.stdout_text(), "seed 1\n");
        let log = Run::tool("svn")
            .args(["log", "-q", "-r", "HEAD", "--non-interactive", &urls[2]])
            .timeout(Duration::from_secs(30))
            .output();
        assert!(log.success(), "a log without etcd's majority: {log}");
        reads += 2;
    }
    rig.etcd.restart(0);
    rig.etcd.restart(1);
    let back = Instant::now();
    std::thread::sleep(Duration::from_secs(6));
    let (refused, changes) = stopped(&stop, committing, changing);

    // Writable again through every front end.
    for (i, url) in urls.iter().enumerate() {
        let since = Instant::now();
        for attempt in 0.. {
            let out = crate::svnmucc(
                &format!("after the outage, front end {i}, attempt {attempt}"),
                &["mkdir", &format!("{url}/after-{i}-{attempt}")],
            );
            if out.success() {
                break;
            }
            assert!(
                since.elapsed() < Duration::from_secs(30),
                "{url} not writable 30 s after etcd's return: {out}"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }
    eprintln!(
        "writable again through the three {:?} after the members' return",
        back.elapsed()
    );
    // Refusals say etcd has no quorum, or (commits) that the base is out of date: a
    // publication whose outcome was unknown (refused, yet published) changed the
    // committer's file in a revision its front end, serving unfenced reads, did not know
    // yet, so the committer's next put was based on an older one; Subversion's answer
    // to an out-of-date base. Acknowledged commits and changes are there, alike through
    // the three front ends.
    let change_errors: Vec<&String> = changes
        .iter()
        .flat_map(|(_, tried)| tried.iter().filter_map(|t| t.2.as_ref()))
        .collect();
    let no_quorum =
        |e: &str| e.contains("coordination service (etcd) has no quorum or is unreachable");
    for error in &change_errors {
        assert!(
            no_quorum(error),
            "a refusal that does not say etcd has no quorum: {error}"
        );
    }
    let out_of_date = refused.iter().filter(|e| !no_quorum(e)).count();
    for error in &refused {
        assert!(
            no_quorum(error) || error.contains("E160024: Conflict at '/c"),
            "a refusal that does not say etcd has no quorum: {error}"
        );
    }
    for url in &urls {
        check_log(url, &acks);
    }
    let (acked, failed) = check_changes(&urls, &changes);
    eprintln!(
        "majority lost for 8 s: {} commits acknowledged, {} refused; {acked} revision \
         property changes acknowledged, {failed} refused; {out_of_date} commits refused as \
         out of date; {reads} reads through C meanwhile; refusals: {:?}",
        acks.lock().expect("acks").len(),
        refused.len(),
        refused
            .iter()
            .chain(change_errors.iter().copied())
            .take(3)
            .collect::<Vec<_>>()
    );
    assert!(
        !refused.is_empty() && failed > 0,
        "commits and changes were refused while etcd had no majority"
    );
    assert!(
        acks.lock().expect("acks").len() >= 2 && acked >= 2,
        "some went through"
    );
    drop(servers);
}
