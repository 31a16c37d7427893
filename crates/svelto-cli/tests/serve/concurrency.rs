//! Concurrency: many committers at once. Commits to distinct paths all land, in
//! contiguous revisions; overlapping ones fail as out of date (as they do with svnserve);
//! readers are never blocked by a commit and never see a partial revision.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use svelto_testkit::{require_tool, tempdir, Outcome, SvnClient};

use crate::commit::{mask_dates, mask_txn_names, writable_pair};
use crate::durability::{changed_paths, committed_rev, fresh_repo, start, verify, youngest};

#[test]
fn eight_committers_to_distinct_paths_with_readers() {
    require_tool("svn");
    require_tool("svnmucc");
    let dir = tempdir();
    let repo = fresh_repo(dir.path(), "many");
    let root = repo.parent().expect("root").to_owned();
    let server = start(&root, &dir.path().join("serve.log"));
    let url = server.url("many");
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).expect("work dir");
    let client = Arc::new(SvnClient::new());
    let (threads, per_thread) = (8, 15);
    let acked: Arc<Mutex<Vec<(u64, String)>>> = Arc::new(Mutex::new(Vec::new()));
    let done = Arc::new(AtomicBool::new(false));
    // A reader: every listing of HEAD shows each commit's two files together, with the
    // same content; `svn log` of HEAD never fails.
    let reader = {
        let (client, url, done, work) = (
            Arc::clone(&client),
            url.clone(),
            Arc::clone(&done),
            work.clone(),
        );
        std::thread::spawn(move || {
            let mut reads = 0;
            while !done.load(Ordering::SeqCst) {
                let out = client.svn(&["ls", "-R", &url], &work);
                assert!(out.success(), "a reader's `svn ls -R` failed:\n{out}");
                let listing: BTreeSet<String> =
                    out.stdout_text().lines().map(str::to_string).collect();
                for entry in &listing {
                    if let Some(d) = entry.strip_suffix('/') {
                        for f in ["a.txt", "b.txt"] {
                            assert!(
                                listing.contains(&format!("{d}/{f}")),
                                "a reader saw {d}/ without {d}/{f}: a partial revision:\n{}",
                                out.stdout_text()
                            );
                        }
                    }
                }
                if let Some(d) = listing.iter().rev().find_map(|e| e.strip_suffix('/')) {
                    let a = client.svn(&["cat", &format!("{url}/{d}/a.txt")], &work);
                    let b = client.svn(&["cat", &format!("{url}/{d}/b.txt")], &work);
                    assert!(
                        a.success() && b.success(),
                        "a reader's cat failed:\n{a}\n{b}"
                    );
                    assert_eq!(a.stdout, b.stdout, "{d}: a.txt and b.txt differ");
                }
                let out = client.svn(&["log", "-q", "-l", "3", &url], &work);
                assert!(out.success(), "a reader's `svn log` failed:\n{out}");
                reads += 1;
            }
            reads
        })
    };
    let writers: Vec<_> = (0..threads)
        .map(|t| {
            let (client, url, acked, work) = (
                Arc::clone(&client),
                url.clone(),
                Arc::clone(&acked),
                work.clone(),
            );
            std::thread::spawn(move || {
                for n in 0..per_thread {
                    let d = format!("t{t}-c{n:02}");
                    let file = work.join(format!("{d}.txt"));
                    std::fs::write(&file, format!("{d}\n")).expect("writing a client file");
                    let f = file.display().to_string();
                    let out = client.run(
                        "svnmucc",
                        &[
                            "-m".to_string(),
                            d.clone(),
                            "mkdir".to_string(),
                            format!("{url}/{d}"),
                            "put".to_string(),
                            f.clone(),
                            format!("{url}/{d}/a.txt"),
                            "put".to_string(),
                            f,
                            format!("{url}/{d}/b.txt"),
                        ],
                        &work,
                    );
                    assert!(out.success(), "commit {d} failed:\n{out}");
                    let rev = committed_rev(&out.stdout_text())
                        .unwrap_or_else(|| panic!("svnmucc printed no revision:\n{out}"));
                    acked.lock().expect("lock").push((rev, d));
                }
            })
        })
        .collect();
    for w in writers {
        w.join().expect("a committer failed");
    }
    done.store(true, Ordering::SeqCst);
    let reads = reader.join().expect("a reader failed");
    assert!(reads > 0, "the reader never ran");
    let total = (threads * per_thread) as u64;
    let acked = acked.lock().expect("lock").clone();
    let revs: BTreeSet<u64> = acked.iter().map(|(r, _)| *r).collect();
    assert_eq!(
        revs,
        (1..=total).collect::<BTreeSet<_>>(),
        "the commits' revisions are not exactly 1..={total}"
    );
    assert_eq!(youngest(&repo), total);
    let log = changed_paths(&client, &url, &work);
    for (rev, d) in &acked {
        let mut got = log[rev].clone();
        got.sort();
        let want = [
            format!("A /{d}"),
            format!("A /{d}/a.txt"),
            format!("A /{d}/b.txt"),
        ];
        assert_eq!(got, want, "r{rev}");
    }
    verify(&repo, "after the concurrent commits");
}

/// Two working copies based on the same revision change the same file and commit at the
/// same moment: exactly one commit lands; the other fails as svnserve fails it.
#[test]
fn overlapping_commits_one_wins_the_other_is_out_of_date() {
    let pair = writable_pair("basic");
    let _scope = pair.scope("overlap");
    let races = 4;
    // Per side: the normalized error texts of the losers.
    let mut errors: [BTreeSet<String>; 2] = [BTreeSet::new(), BTreeSet::new()];
    for (side, errors) in errors.iter_mut().enumerate() {
        let url = if side == 0 {
            pair.reference_url()
        } else {
            pair.subject_url()
        };
        let work = pair.work(side).join("overlap");
        std::fs::create_dir_all(&work).expect("work dir");
        let client = pair.client();
        let run = |args: &[&str], cwd: &Path| -> Outcome {
            let out = client.svn(args, cwd);
            assert!(
                out.success(),
                "side {side}: `svn {}`:\n{out}",
                args.join(" ")
            );
            out
        };
        let f = work.join("seed.txt");
        std::fs::write(&f, "seed\n").expect("seed");
        run(
            &[
                "import",
                "-m",
                "seed",
                &f.display().to_string(),
                &format!("{url}/race.txt"),
            ],
            &work,
        );
        run(&["checkout", &url, "wc1"], &work);
        run(&["checkout", &url, "wc2"], &work);
        for race in 0..races {
            for wc in ["wc1", "wc2"] {
                // The loser of the last race still holds its change: drop it.
                run(&["revert", "-q", &format!("{wc}/race.txt")], &work);
                run(&["update", "-q", wc], &work);
                std::fs::write(
                    work.join(wc).join("race.txt"),
                    format!("{wc} race {race}\n"),
                )
                .expect("editing race.txt");
            }
            let outs: Vec<Outcome> = std::thread::scope(|s| {
                let hs: Vec<_> = ["wc1", "wc2"]
                    .map(|wc| {
                        let work = work.clone();
                        s.spawn(move || {
                            client.svn(&["commit", "-m", &format!("{wc} {race}"), wc], &work)
                        })
                    })
                    .into_iter()
                    .collect();
                hs.into_iter()
                    .map(|h| h.join().expect("commit thread"))
                    .collect()
            });
            let wins = outs.iter().filter(|o| o.success()).count();
            assert_eq!(
                wins, 1,
                "side {side} race {race}: {wins} commits succeeded:\n{}\n{}",
                outs[0], outs[1]
            );
            let loser = outs.iter().find(|o| !o.success()).expect("a loser");
            let text = String::from_utf8_lossy(&mask_txn_names(&mask_dates(
                &pair.normalize(side, &loser.stderr),
            )))
            .replace("wc1", "wcN")
            .replace("wc2", "wcN");
            assert!(
                text.contains("E160028: File '/race.txt' is out of date")
                    || text.contains("E160024: Conflict at '/race.txt'"),
                "side {side}: the losing commit's error:\n{text}"
            );
            errors.insert(text);
        }
        let out = run(&["cat", &format!("{url}/race.txt")], &work);
        assert!(out.stdout_text().contains(&format!("race {}", races - 1)));
    }
    // Each kind of error Svelto gave must read exactly as svnserve's of the same kind
    // (which kind a race gives depends on its timing).
    eprintln!("overlapping commits: losers' errors: {errors:#?}");
    let kind = |t: &str| t.contains("E160024");
    for ours in &errors[1] {
        if let Some(theirs) = errors[0].iter().find(|t| kind(t) == kind(ours)) {
            assert_eq!(
                ours, theirs,
                "the losing commit's error differs from svnserve's"
            );
        }
    }
}

/// The errors of a `( failure ( ( code msg file line ) ... ) )`: (code, message) pairs.
fn errors_of(item: &crate::raw::Item) -> Vec<(u64, String)> {
    use crate::raw::Item;
    let Item::List(items) = item else {
        return Vec::new();
    };
    let Some(Item::List(errors)) = items.get(1) else {
        return Vec::new();
    };
    errors
        .iter()
        .filter_map(|e| match e {
            Item::List(f) => match (f.first(), f.get(1)) {
                (Some(Item::Number(n)), Some(Item::String(m))) => {
                    Some((*n, String::from_utf8_lossy(m).into_owned()))
                }
                _ => None,
            },
            _ => None,
        })
        .collect()
}

/// The race made deterministic: an edit opens a file, another commit changes the file,
/// then the edit ends. The merge into the newer HEAD must fail with the errors svnserve
/// sends (`Conflict at '/race2.txt'`), and leave the repository as it was.
#[test]
fn edit_overtaken_by_a_commit_fails_with_svnserves_conflict() {
    require_tool("svnmucc");
    let pair = writable_pair("basic");
    let _scope = pair.scope("overtaken");
    let mut answers = Vec::new();
    for side in 0..2 {
        let (addr, url) = if side == 0 {
            (pair.reference().addr(), pair.reference_url())
        } else {
            (pair.subject().addr(), pair.subject_url())
        };
        let work = pair.work(side).join("overtaken");
        std::fs::create_dir_all(&work).expect("work dir");
        let f = work.join("v1.txt");
        std::fs::write(&f, "v1\n").expect("v1");
        let fs = f.display().to_string();
        let target = format!("{url}/race2.txt");
        let out = pair
            .client()
            .run("svnmucc", &["-m", "v1", "put", &fs, &target], &work);
        assert!(out.success(), "{out}");
        let head = committed_rev(&out.stdout_text()).expect("a revision");
        // The edit: commit, open-root, open-file; nothing more yet.
        let mut a = crate::raw::Conn::session(addr, &url);
        a.send(b"( commit ( 4:slow ( ) false ( ) ) ) ");
        let auth = a.item();
        assert!(auth.is_success(), "side {side}: commit's auth: {auth:?}");
        let ack = a.item();
        assert!(ack.is_success(), "side {side}: commit: {ack:?}");
        let open = format!(
            "( open-root ( ( ) 2:d0 ) ) ( open-file ( 9:race2.txt 2:d0 2:f1 ( {head} ) ) ) "
        );
        a.send(open.as_bytes());
        // Another commit changes the file meanwhile.
        std::fs::write(&f, "v2\n").expect("v2");
        let out = pair
            .client()
            .run("svnmucc", &["-m", "v2", "put", &fs, &target], &work);
        assert!(out.success(), "side {side}: the overtaking commit:\n{out}");
        // The edit ends: "x\n" as one svndiff0 window.
        let mut end =
            b"( apply-textdelta ( 2:f1 ( ) ) ) ( textdelta-chunk ( 2:f1 12:SVN\0".to_vec();
        end.extend_from_slice(b"\0\0\x02\x01\x02\x82x\n ) ) ( textdelta-end ( 2:f1 ) ) ");
        end.extend_from_slice(b"( close-file ( 2:f1 ( ) ) ) ( close-dir ( 2:d0 ) ) ");
        end.extend_from_slice(b"( close-edit ( ) ) ");
        a.send(&end);
        let answer = a.item();
        assert!(answer.is_failure(), "side {side}: close-edit: {answer:?}");
        answers.push(errors_of(&answer));
        let cat = pair.client().svn(&["cat", &target], &work);
        assert_eq!(cat.stdout_text(), "v2\n", "side {side}");
    }
    assert!(
        answers[0]
            .iter()
            .any(|(c, m)| *c == 160024 && m == "Conflict at '/race2.txt'"),
        "svnserve's answer: {:?}",
        answers[0]
    );
    assert_eq!(
        answers[1], answers[0],
        "Svelto's errors differ from svnserve's"
    );
}

/// Every revision's `svn:date` from `svn log --xml`, by revision.
fn rev_dates(client: &SvnClient, url: &str, cwd: &Path) -> Vec<(u64, String)> {
    let out = client.svn(&["log", "--xml", "-r", "1:HEAD", url], cwd);
    assert!(out.success(), "svn log --xml:\n{out}");
    let text = out.stdout_text();
    let mut dates = Vec::new();
    for entry in text.split("<logentry").skip(1) {
        let rev = entry
            .split_once("revision=\"")
            .and_then(|(_, r)| r.split_once('"'))
            .and_then(|(r, _)| r.parse::<u64>().ok())
            .unwrap_or_else(|| panic!("a logentry without a revision: {entry}"));
        let date = entry
            .split_once("<date>")
            .and_then(|(_, d)| d.split_once("</date>"))
            .map(|(d, _)| d.to_string())
            .unwrap_or_else(|| panic!("r{rev} has no date: {entry}"));
        dates.push((rev, date));
    }
    dates
}

/// Eight committers at once: each revision's `svn:date` is stamped once the commit holds
/// the repository's writer (as FSFS stamps it inside its write lock), so dates never go
/// down as revision numbers go up, which `-r {DATE}` relies on. Then a revision dated in
/// the future: the next commit is not dated before it.
#[test]
fn dates_never_go_backwards_under_concurrent_commits() {
    require_tool("svn");
    require_tool("svnmucc");
    let dir = tempdir();
    let repo = fresh_repo(dir.path(), "dates");
    let root = repo.parent().expect("root").to_owned();
    let server = start(&root, &dir.path().join("serve.log"));
    let url = server.url("dates");
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).expect("work dir");
    let client = Arc::new(SvnClient::new());
    let (threads, per_thread) = (8, 10);
    let workers: Vec<_> = (0..threads)
        .map(|t| {
            let (client, url, work) = (Arc::clone(&client), url.clone(), work.clone());
            std::thread::spawn(move || {
                for i in 0..per_thread {
                    let out = client.run(
                        "svnmucc",
                        &["-m", "c", "put", "/dev/null", &format!("{url}/t{t}-{i}")],
                        &work,
                    );
                    assert!(out.success(), "svnmucc put:\n{out}");
                }
            })
        })
        .collect();
    for w in workers {
        w.join().expect("a committer panicked");
    }
    let dates = rev_dates(&client, &url, &work);
    assert_eq!(dates.len(), threads * per_thread);
    for pair in dates.windows(2) {
        assert!(
            pair[0].1 <= pair[1].1,
            "r{} is dated {} but r{} {}",
            pair[0].0,
            pair[0].1,
            pair[1].0,
            pair[1].1
        );
    }

    // The youngest revision dated in the future (a revprop change): the next revision
    // gets that date, not an earlier one.
    let head = dates.last().expect("revisions").0;
    let future = "2099-01-02T03:04:05.000006Z";
    let date_file = dir.path().join("date");
    std::fs::write(&date_file, future).expect("date file");
    let out = std::process::Command::new(crate::durability::binary())
        .args(["admin", "setrevprop"])
        .arg(&repo)
        .args(["-r", &head.to_string(), "svn:date"])
        .arg(&date_file)
        .output()
        .expect("running svelto admin setrevprop");
    assert!(out.status.success(), "svelto admin setrevprop: {out:?}");
    let out = client.run(
        "svnmucc",
        &["-m", "after", "put", "/dev/null", &format!("{url}/after")],
        &work,
    );
    assert!(out.success(), "svnmucc put:\n{out}");
    let dates = rev_dates(&client, &url, &work);
    assert_eq!(
        dates.last().map(|(r, d)| (*r, d.as_str())),
        Some((head + 1, future))
    );
}

fn write_hook(repo: &Path, name: &str, script: &str) {
    use std::os::unix::fs::PermissionsExt;
    let p = repo.join("hooks").join(name);
    std::fs::write(&p, script).expect("writing the hook");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// A pre-commit hook that does not finish holds up only its own repository's writes: a
/// commit to another repository of the same server lands, and reads of its own go on. A
/// hook that exits but leaves a background child holding its standard error does not hold
/// up the commit.
#[test]
fn a_hung_pre_commit_hook_holds_up_only_its_own_repository() {
    require_tool("svn");
    require_tool("svnmucc");
    let dir = tempdir();
    let a = fresh_repo(dir.path(), "a");
    let b = crate::durability::fresh_repo(dir.path(), "b");
    let root = a.parent().expect("root").to_owned();
    let server = start(&root, &dir.path().join("serve.log"));
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).expect("work dir");
    let (started, release) = (dir.path().join("started"), dir.path().join("release"));
    write_hook(
        &a,
        "pre-commit",
        &format!(
            "#!/bin/sh\ntouch {}\ni=0\nwhile [ ! -e {} ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done\nexit 0\n",
            started.display(),
            release.display()
        ),
    );
    write_hook(&b, "pre-commit", "#!/bin/sh\nsleep 30 &\nexit 0\n");
    let client = Arc::new(SvnClient::new());
    let (url_a, url_b) = (server.url("a"), server.url("b"));
    let hung = {
        let (client, url, work) = (Arc::clone(&client), url_a.clone(), work.clone());
        std::thread::spawn(move || {
            client.run(
                "svnmucc",
                &["-m", "held", "put", "/dev/null", &format!("{url}/held")],
                &work,
            )
        })
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !started.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the hook never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // Another repository: its commit lands while the first hook hangs, and its own hook's
    // background child does not hold it up.
    let t = std::time::Instant::now();
    let out = client.run(
        "svnmucc",
        &["-m", "other", "put", "/dev/null", &format!("{url_b}/other")],
        &work,
    );
    assert!(out.success(), "commit to b:\n{out}");
    assert!(
        t.elapsed() < std::time::Duration::from_secs(5),
        "the commit to b took {:?}",
        t.elapsed()
    );
    // Reads of the hung repository go on.
    let out = client.svn(&["ls", &url_a], &work);
    assert!(out.success(), "svn ls a:\n{out}");
    assert!(
        !release.exists() && !hung.is_finished(),
        "the hook was released early"
    );
    std::fs::write(&release, "").expect("release");
    let out = hung.join().expect("the held commit");
    assert!(out.success(), "the held commit:\n{out}");
    assert_eq!(youngest(&a), 1);
    assert_eq!(youngest(&b), 1);
}

/// The session of `hook_sessions::a_held_pre_commit_hook_holds_up_no_other_commit`, then
/// no transaction is left over.
#[test]
fn a_held_pre_commit_hook_holds_up_no_other_commit() {
    let pair = writable_pair("basic");
    crate::hook_sessions::a_held_pre_commit_hook_holds_up_no_other_commit(&pair);
    let lstxns = svelto_testkit::Run::new(env!("CARGO_BIN_EXE_svelto"))
        .args(["admin", "lstxns"])
        .arg(pair.subject_repo())
        .output();
    assert_eq!(
        String::from_utf8_lossy(&lstxns.stdout),
        "",
        "transactions left over"
    );
}
