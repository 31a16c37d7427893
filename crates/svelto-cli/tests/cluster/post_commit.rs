//! Post-commit hooks across a failover (docs/cluster.md, "Hooks"): each revision's hook
//! runs once on the front end that committed it, its etcd record gone before the client
//! hears of the commit; a front end killed while its hook runs has the hook run by
//! another (claimed once the record is older than `hook-grace` and the committer's member
//! key is gone), and a claimer killed while it runs the hook leaves it to a third.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use svelto_testkit::Run;

use crate::relay::HoldingRelay;
use crate::{hook, put, svnmucc, Rig, IDS};

/// Installs in every front end's `proj` a post-commit hook that appends
/// `REV ID TXN-NAME REPOS PID` to `log` (`ID` the front end's), then, while `hold` exists,
/// becomes `sleep 60` (same PID: killing it ends the hook).
pub(crate) fn logging_post_commit_hooks(rig: &Rig, log: &Path, hold: &Path) {
    for (root, id) in rig.roots.iter().zip(IDS) {
        hook(
            root,
            "proj",
            "post-commit",
            &format!(
                "#!/bin/sh\necho \"$2 {id} $3 $1 $$\" >> '{}'\nif [ -e '{}' ]; then exec /bin/sleep \
                 60; fi\nexit 0\n",
                log.display(),
                hold.display()
            ),
        );
    }
}

/// One line of the hooks' log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Ran {
    pub rev: u64,
    pub front_end: String,
    pub txn: String,
    pub repos: PathBuf,
    pub pid: u32,
}

/// The lines of the hooks' log.
pub(crate) fn hook_runs(log: &Path) -> Vec<Ran> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(|line| {
            let f: Vec<&str> = line.split(' ').collect();
            assert_eq!(f.len(), 5, "a hook log line: {line:?}");
            Ran {
                rev: f[0].parse().expect("REV"),
                front_end: f[1].to_owned(),
                txn: f[2].to_owned(),
                repos: PathBuf::from(f[3]),
                pid: f[4].parse().expect("PID"),
            }
        })
        .collect()
}

/// The keys under `/svelto/test/PREFIX/` (post-commit records, claims), with values.
pub(crate) fn etcd_keys(rig: &Rig, prefix: &str) -> Vec<(String, String)> {
    let out = Run::tool("etcdctl")
        .arg(format!("--endpoints={}", rig.etcd.endpoints().join(",")))
        .args([
            "--command-timeout=3s",
            "get",
            "--prefix",
            &format!("/svelto/test/{prefix}/"),
        ])
        .success()
        .stdout_text();
    let lines: Vec<&str> = out.lines().collect();
    let mut keys = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let key = lines[i].to_owned();
        // A record's value is three lines; a claim's one.
        let mut value = Vec::new();
        i += 1;
        while i < lines.len() && !lines[i].starts_with("/svelto/") {
            value.push(lines[i]);
            i += 1;
        }
        keys.push((key, value.join("\n").trim_end().to_owned()));
    }
    keys
}

/// Waits up to `within` for `done` to answer Some.
fn wait_for<T>(within: Duration, what: &str, mut done: impl FnMut() -> Option<T>) -> T {
    let started = Instant::now();
    loop {
        if let Some(v) = done() {
            return v;
        }
        assert!(started.elapsed() < within, "{what}: not within {within:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn kill_process(pid: u32) {
    let _ = std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status();
}

/// The metrics page of the front end whose log is `log` (its last start's address).
fn scrape(log: &Path) -> String {
    let text = std::fs::read_to_string(log).expect("a front end's log");
    let addr = text
        .lines()
        .rev()
        .find_map(|l| {
            l.split_once("metrics on http://")
                .map(|(_, a)| a.to_owned())
        })
        .unwrap_or_else(|| panic!("no metrics address in {}", log.display()));
    Run::tool("curl")
        .args(["-sf", &format!("http://{addr}")])
        .success()
        .stdout_text()
}

fn claimed(metrics: &str, result: &str) -> u64 {
    let name = format!("svelto_cluster_post_commit_claimed_total{{result=\"{result}\"}}");
    svelto_testkit::metric_sum(metrics, &name).unwrap_or_else(|| panic!("no {name} in\n{metrics}"))
}

/// Commits through the three front ends (in turn, then four at once): each revision's
/// post-commit hook ran exactly once, on the front end that committed it, with `REPOS`
/// that front end's directory and the transaction's name; its record was gone when the
/// client heard of the commit; no hook ran by claim.
#[test]
fn each_revisions_post_commit_runs_once_on_its_front_end_and_leaves_no_record() {
    // A logs its round trips: what a record's deletion costs.
    let (rig, servers) = Rig::start(3, "log-timings = yes\n");
    let dir = rig.dir.path().to_owned();
    let (log, hold) = (dir.join("post-commit.log"), dir.join("hold"));
    logging_post_commit_hooks(&rig, &log, &hold);
    let urls: Vec<String> = servers.iter().map(|s| s.url("proj")).collect();
    let mut committed_by = std::collections::BTreeMap::new();
    for n in 0..9 {
        let i = n % 3;
        let (rev, _) = put(&dir, &urls[i], "f.txt", &format!("commit {n}\n"));
        committed_by.insert(rev, IDS[i]);
        // Deleted before the answer: the client never sees its record.
        let left = etcd_keys(&rig, "post-commit");
        assert!(left.is_empty(), "records left after r{rev}: {left:?}");
    }
    // Four committers at once, each through its own front end (rotating).
    let threads: Vec<_> = (0..4)
        .map(|k| {
            let (url, dir) = (urls[k % 3].clone(), dir.join(format!("c{k}")));
            std::fs::create_dir_all(&dir).expect("dir");
            std::thread::spawn(move || {
                (0..3)
                    .map(|n| put(&dir, &url, &format!("c{k}.txt"), &format!("c{k} {n}\n")).0)
                    .collect::<Vec<u64>>()
            })
        })
        .collect();
    for (k, t) in threads.into_iter().enumerate() {
        for rev in t.join().expect("committer") {
            committed_by.insert(rev, IDS[k % 3]);
        }
    }
    let youngest = *committed_by.keys().last().expect("commits");
    assert_eq!(
        committed_by.keys().copied().collect::<Vec<_>>(),
        (1..=youngest).collect::<Vec<_>>()
    );
    let runs = hook_runs(&log);
    for (rev, id) in &committed_by {
        let of: Vec<&Ran> = runs.iter().filter(|r| r.rev == *rev).collect();
        assert_eq!(of.len(), 1, "r{rev}'s post-commit ran once: {of:?}");
        let i = IDS.iter().position(|x| x == id).expect("an id");
        assert_eq!(of[0].front_end, *id, "r{rev} ran where it was committed");
        assert_eq!(of[0].repos, rig.roots[i].join("proj"), "r{rev}'s REPOS");
        // The edit's base (a concurrent commit's may be older than r{rev-1}).
        let base: u64 = of[0]
            .txn
            .split_once('-')
            .and_then(|(b, _)| b.parse().ok())
            .unwrap_or_else(|| panic!("r{rev}'s TXN-NAME {}", of[0].txn));
        assert!(
            base < *rev,
            "r{rev}'s TXN-NAME {} names its base",
            of[0].txn
        );
        if *rev <= 9 {
            assert_eq!(base, rev - 1, "r{rev}'s TXN-NAME {}", of[0].txn);
        }
    }
    assert_eq!(runs.len(), committed_by.len(), "{runs:?}");
    assert!(etcd_keys(&rig, "post-commit").is_empty());
    assert!(etcd_keys(&rig, "post-commit-claims").is_empty());
    // A moment later (several scans at the default grace): still nothing ran by claim.
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(hook_runs(&log).len(), runs.len());
    for id in IDS {
        let text = std::fs::read_to_string(dir.join(format!("serve-{id}.log"))).expect("log");
        assert!(!text.contains("by claim"), "{id} claimed a hook:\n{text}");
    }
    // The deletions A made, as the next publication's timings line counts them.
    let timings = std::fs::read_to_string(dir.join("serve-a.log")).expect("A's log");
    let mut deletes: Vec<f64> = timings
        .lines()
        .filter_map(|l| l.split_once(" post-commit deletes "))
        .filter_map(|(before, after)| {
            let n: f64 = before.rsplit(' ').next()?.parse().ok()?;
            let ms: f64 = after.split(" ms").next()?.parse().ok()?;
            Some(ms / n)
        })
        .collect();
    deletes.sort_by(f64::total_cmp);
    assert!(
        !deletes.is_empty(),
        "no deletion in A's timings:\n{timings}"
    );
    eprintln!(
        "post-commit: r1..=r{youngest} each ran once on its front end; no record left; a \
         record's deletion on A took {:.2} ms median, {:.2} ms max of {}",
        deletes[deletes.len() / 2],
        deletes[deletes.len() - 1],
        deletes.len()
    );
    drop(servers);
}

/// `kill -9` of the front end running a revision's post-commit hook (and of the hook):
/// another front end claims the record and runs the hook with the same arguments (its own
/// `REPOS`) within `hook-grace` + the lease's TTL; killed in turn while it runs it, the
/// third front end runs it; then no record or claim is left, and the third front end's
/// metrics count one hook run by claim.
#[test]
fn a_post_commit_hook_whose_front_end_dies_is_run_by_another_and_by_a_third() {
    // A grace of 1 s (the lease's TTL is the rig's 2 s).
    let grace = "hook-grace = 1\n";
    let (rig, mut servers) = Rig::start_with(3, &[grace, grace, grace]);
    let dir = rig.dir.path().to_owned();
    let (log, hold) = (dir.join("post-commit.log"), dir.join("hold"));
    logging_post_commit_hooks(&rig, &log, &hold);
    // B and C with their metrics pages.
    for (i, server) in servers.iter_mut().enumerate().skip(1) {
        server.kill_hard();
        *server = rig.serve_with(i, &["--metrics-listen", "127.0.0.1:0"]);
    }
    // Settled: every front end registered under its current lease.
    std::thread::sleep(Duration::from_secs(3));
    std::fs::write(&hold, "").expect("hold");
    let url = servers[0].url("proj");
    let text = dir.join("r1.txt");
    std::fs::write(&text, "r1\n").expect("text");
    let client = {
        let (text, url) = (text.clone(), url.clone());
        std::thread::spawn(move || {
            svnmucc(
                "r1",
                &[
                    "put",
                    text.to_str().expect("UTF-8"),
                    &format!("{url}/r1.txt"),
                ],
            )
        })
    };
    let first = wait_for(Duration::from_secs(30), "A runs r1's hook", || {
        hook_runs(&log).into_iter().find(|r| r.rev == 1)
    });
    assert_eq!(first.front_end, "a");
    let records = etcd_keys(&rig, "post-commit");
    assert_eq!(records.len(), 1, "{records:?}");
    assert_eq!(records[0].0, "/svelto/test/post-commit/proj/1");
    assert!(
        records[0].1.starts_with("front-end a\nmember-lease ")
            && records[0].1.ends_with(&format!("\ntxn {}", first.txn)),
        "{records:?}"
    );
    // A dies while its hook runs (the hook too: it is A's child, not killed with it).
    servers[0].kill_hard();
    kill_process(first.pid);
    let killed = Instant::now();
    let out = client.join().expect("the client");
    assert!(!out.success(), "r1 was not acknowledged: {out}");
    let second = wait_for(Duration::from_secs(20), "B or C claims r1's hook", || {
        hook_runs(&log)
            .into_iter()
            .find(|r| r.rev == 1 && r.front_end != "a")
    });
    let took = killed.elapsed();
    let j = IDS
        .iter()
        .position(|x| *x == second.front_end)
        .expect("an id");
    assert_eq!(second.txn, first.txn, "the same TXN-NAME");
    assert_eq!(second.repos, rig.roots[j].join("proj"), "its own REPOS");
    eprintln!(
        "post-commit: r1's hook run by {} {took:?} after A's kill -9 (grace 1 s, lease TTL 2 s)",
        second.front_end
    );
    assert!(
        took < Duration::from_secs(5),
        "claimed {took:?} after the kill: more than the grace (1 s) + the TTL (2 s) + 2 s"
    );
    let claims = etcd_keys(&rig, "post-commit-claims");
    assert_eq!(
        claims,
        vec![(
            "/svelto/test/post-commit-claims/proj/1".to_owned(),
            second.front_end.clone()
        )]
    );
    // The claimer dies while it runs it: the third front end runs it.
    servers[j].kill_hard();
    kill_process(second.pid);
    std::fs::remove_file(&hold).expect("no more holding");
    let killed = Instant::now();
    let k = 3 - j;
    let third = wait_for(
        Duration::from_secs(20),
        "the third front end runs it",
        || {
            hook_runs(&log)
                .into_iter()
                .find(|r| r.rev == 1 && r.front_end == IDS[k])
        },
    );
    let took_again = killed.elapsed();
    assert_eq!(third.txn, first.txn);
    assert_eq!(third.repos, rig.roots[k].join("proj"));
    eprintln!(
        "post-commit: then by {} {took_again:?} after {}'s kill -9",
        IDS[k], second.front_end
    );
    assert!(
        took_again < Duration::from_secs(5),
        "claimed again {took_again:?} after the claimer's kill"
    );
    wait_for(Duration::from_secs(5), "no record or claim left", || {
        (etcd_keys(&rig, "post-commit").is_empty()
            && etcd_keys(&rig, "post-commit-claims").is_empty())
        .then_some(())
    });
    assert_eq!(hook_runs(&log).len(), 3, "{:?}", hook_runs(&log));
    let metrics = scrape(&dir.join(format!("serve-{}.log", IDS[k])));
    assert_eq!(claimed(&metrics, "ok"), 1, "{metrics}");
    assert_eq!(claimed(&metrics, "failed"), 0, "{metrics}");
    let served = std::fs::read_to_string(dir.join(format!("serve-{}.log", IDS[k]))).expect("log");
    assert!(
        served.contains("cluster: proj: r1's post-commit hook ran here by claim"),
        "{served}"
    );
    // r1 is published (the client was never told): the log through the third shows it.
    let youngest = Run::tool("svn")
        .args(["info", "--show-item", "revision", "--non-interactive"])
        .arg(servers[k].url("proj"))
        .success()
        .stdout_text();
    assert_eq!(youngest.trim(), "1");
    // The killed front ends come back; a commit through A runs its hook there, once.
    servers[0] = rig.serve(0);
    let (rev, _) = put(&dir, &servers[0].url("proj"), "r2.txt", "r2\n");
    assert_eq!(rev, 2);
    let runs = hook_runs(&log);
    assert_eq!(
        runs.iter()
            .filter(|r| r.rev == 2)
            .map(|r| r.front_end.as_str())
            .collect::<Vec<_>>(),
        vec!["a"]
    );
    assert!(etcd_keys(&rig, "post-commit").is_empty());
    drop(servers);
}

fn etcdctl(rig: &Rig, args: &[&str]) -> String {
    Run::tool("etcdctl")
        .arg(format!("--endpoints={}", rig.etcd.endpoints().join(",")))
        .arg("--command-timeout=3s")
        .args(args)
        .success()
        .stdout_text()
}

/// Records put by hand: one of front end B's own (on its current member lease) whose hook
/// B is not running (as a publication whose answer was lost leaves) is run by B alone;
/// one of a front end never registered (lease 0) by one front end; an unreadable one is
/// left alone and logged once by each front end.
#[test]
fn records_of_a_live_front_ends_refused_commit_and_of_an_unknown_one_are_run_once() {
    let grace = "hook-grace = 1\n";
    let (rig, servers) = Rig::start_with(3, &[grace, grace, grace]);
    let dir = rig.dir.path().to_owned();
    let (log, hold) = (dir.join("post-commit.log"), dir.join("hold"));
    logging_post_commit_hooks(&rig, &log, &hold);
    let url = servers[0].url("proj");
    for n in 1..=2 {
        let (rev, _) = put(&dir, &url, "f.txt", &format!("{n}\n"));
        assert_eq!(rev, n);
    }
    assert_eq!(hook_runs(&log).len(), 2);
    let member = etcdctl(&rig, &["get", "/svelto/test/members/b", "-w", "json"]);
    let lease: i64 = member
        .split("\"lease\":")
        .nth(1)
        .and_then(|s| s.split([',', '}']).next())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or_else(|| panic!("B's member lease in {member}"));
    let put_record = |rev: u64, value: &str| {
        etcdctl(
            &rig,
            &[
                "put",
                &format!("/svelto/test/post-commit/proj/{rev}"),
                value,
            ],
        );
    };
    put_record(
        1,
        &format!("front-end b\nmember-lease {lease}\ntxn 0-own\n"),
    );
    put_record(2, "front-end zz\nmember-lease 0\ntxn 1-gone\n");
    put_record(3, "not a record");
    let put_at = Instant::now();
    let runs = wait_for(Duration::from_secs(15), "both records run", || {
        let runs = hook_runs(&log);
        (runs.len() >= 4).then_some(runs)
    });
    eprintln!(
        "post-commit: hand-made records run {:?} after they were put (grace 1 s)",
        put_at.elapsed()
    );
    // A moment more: nothing runs twice.
    std::thread::sleep(Duration::from_secs(2));
    let runs_later = hook_runs(&log);
    assert_eq!(runs_later, runs, "ran again");
    let own: Vec<&Ran> = runs.iter().filter(|r| r.txn == "0-own").collect();
    assert_eq!(own.len(), 1, "{runs:?}");
    assert_eq!((own[0].rev, own[0].front_end.as_str()), (1, "b"));
    let gone: Vec<&Ran> = runs.iter().filter(|r| r.txn == "1-gone").collect();
    assert_eq!(gone.len(), 1, "{runs:?}");
    assert_eq!(gone[0].rev, 2);
    let left = etcd_keys(&rig, "post-commit");
    assert_eq!(
        left,
        vec![(
            "/svelto/test/post-commit/proj/3".to_owned(),
            "not a record".to_owned()
        )]
    );
    assert!(etcd_keys(&rig, "post-commit-claims").is_empty());
    let b_log = std::fs::read_to_string(dir.join("serve-b.log")).expect("B's log");
    assert!(
        b_log.contains("r1's post-commit hook claimed from front end 'b' (this process"),
        "{b_log}"
    );
    assert_eq!(
        b_log
            .matches("cluster: proj: r3's post-commit key is unreadable")
            .count(),
        1,
        "logged once, not at each scan:\n{b_log}"
    );
    drop(servers);
}

/// etcd's answer to a publication delayed past `hook-grace` (front end A's etcd
/// connection through a relay that holds the answers to the publication's transaction,
/// each attempt of it, while every other call, A's post-commit scans included, goes on):
/// the record is in etcd and A's scan sees it, older than the grace, for 3 s while the
/// commit waits, yet no front end claims it; once the answers go on the hook runs once, on
/// A, and the client hears of the commit. Before the publication was announced to the
/// scan ahead of its transaction (f667a0f), A's own scan claimed and ran the hook during
/// the wait and the commit then ran it again.
#[test]
fn a_post_commit_hook_runs_once_when_etcds_answer_to_its_publication_comes_after_the_grace() {
    let grace = Duration::from_secs(1);
    let line = "hook-grace = 1\n";
    let rig = Rig::prepare(3, &[line, line, line]);
    let dir = rig.dir.path().to_owned();
    // A reaches etcd (one member) through the relay.
    let member = rig.etcd.endpoint(0);
    let relay = HoldingRelay::start(member.trim_start_matches("http://"), b"\nmember-lease ");
    super::relay::through_relay(&rig.files[0], &relay);
    let servers = vec![
        rig.serve_with(0, &["--metrics-listen", "127.0.0.1:0"]),
        rig.serve(1),
        rig.serve(2),
    ];
    let (log, hold) = (dir.join("post-commit.log"), dir.join("hold"));
    logging_post_commit_hooks(&rig, &log, &hold);
    let url = servers[0].url("proj");
    // r1 as usual (the relay's connection warm, its headers in HPACK's table).
    let (rev, _) = put(&dir, &url, "f.txt", "r1\n");
    assert_eq!(rev, 1);
    assert_eq!(relay.caught(), 0);
    // r2's pre-commit hook on A says it runs, and waits for the test.
    let (running, go) = (dir.join("pre-commit.running"), dir.join("pre-commit.go"));
    hook(
        &rig.roots[0],
        "proj",
        "pre-commit",
        &format!(
            "#!/bin/sh\ntouch '{}'\ni=0\nwhile [ ! -e '{}' ]; do sleep 0.05; i=$((i+1)); \
             [ $i -gt 600 ] && exit 1; done\nexit 0\n",
            running.display(),
            go.display()
        ),
    );
    let text = dir.join("r2.txt");
    std::fs::write(&text, "r2\n").expect("text");
    let client = {
        let (text, url) = (text.clone(), url.clone());
        std::thread::spawn(move || {
            svnmucc(
                "r2",
                &[
                    "put",
                    text.to_str().expect("UTF-8"),
                    &format!("{url}/r2.txt"),
                ],
            )
        })
    };
    wait_for(Duration::from_secs(30), "r2's pre-commit hook runs", || {
        running.exists().then_some(())
    });
    relay.hold();
    std::fs::write(&go, "").expect("go");
    wait_for(
        Duration::from_secs(10),
        "the relay catches r2's publication",
        || (relay.caught() > 0).then_some(()),
    );
    let caught = Instant::now();
    // etcd applied it: the record is there while its answer waits in the relay.
    let record = wait_for(Duration::from_secs(3), "r2's record in etcd", || {
        etcd_keys(&rig, "post-commit")
            .into_iter()
            .find(|(k, _)| k == "/svelto/test/post-commit/proj/2")
    });
    std::thread::sleep((grace * 3).saturating_sub(caught.elapsed()));
    // Past 3 x the grace: what the front ends did meanwhile.
    let ran_while_held: Vec<Ran> = hook_runs(&log).into_iter().filter(|r| r.rev == 2).collect();
    let metrics = scrape(&dir.join("serve-a.log"));
    let answered_while_held = client.is_finished();
    let held_frames = relay.held_frames();
    relay.release();
    let released = Instant::now();
    let out = client.join().expect("the client");
    let acknowledged = released.elapsed();
    // Several scans later.
    std::thread::sleep(Duration::from_secs(2));
    let runs: Vec<Ran> = hook_runs(&log).into_iter().filter(|r| r.rev == 2).collect();
    assert_eq!(
        runs.len(),
        1,
        "r2's post-commit ran once: {runs:?} (during the hold: {ran_while_held:?})"
    );
    assert_eq!(runs[0].front_end, "a", "{runs:?}");
    assert!(ran_while_held.is_empty(), "{ran_while_held:?}");
    assert!(
        out.success() && out.stdout_text().contains("r2 committed"),
        "r2 acknowledged: {out}"
    );
    assert!(
        !answered_while_held,
        "the client was answered during the hold"
    );
    assert!(
        record.1.starts_with("front-end a\nmember-lease ")
            && record.1.ends_with(&format!("\ntxn {}", runs[0].txn)),
        "{record:?}"
    );
    // Each attempt of the publication's transaction (one every 0.5 s, abandoned
    // unanswered and sent again) was held; the answer to the last one told the commit.
    let attempts = relay.caught();
    assert!(
        attempts >= 2,
        "{attempts} attempts of r2's publication held"
    );
    assert!(held_frames > 0, "no frame of etcd's answer held");
    // A's scan went on during the hold and saw the record.
    let pending = svelto_testkit::metric_sum(&metrics, "svelto_cluster_post_commit_pending")
        .unwrap_or_else(|| panic!("no pending gauge in\n{metrics}"));
    assert_eq!(pending, 1, "{metrics}");
    assert!(etcd_keys(&rig, "post-commit").is_empty());
    assert!(etcd_keys(&rig, "post-commit-claims").is_empty());
    for id in IDS {
        let text = std::fs::read_to_string(dir.join(format!("serve-{id}.log"))).expect("log");
        assert!(!text.contains("by claim"), "{id} claimed a hook:\n{text}");
    }
    eprintln!(
        "post-commit: etcd's answers to r2's publication held {:?} (grace {grace:?}; \
         {attempts} attempts, {held_frames} frames held); the client acknowledged \
         {acknowledged:?} after the release; its hook ran once, on A",
        released.duration_since(caught)
    );
    drop(servers);
}
