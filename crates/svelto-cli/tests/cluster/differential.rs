//! The serve differential suite against a cluster (issue 35's first "done means" item):
//! svnserve over FSFS as the reference, and as the subject three `svelto serve --cluster`
//! front ends over three etcd members and weed, behind a round-robin balancer, so each
//! client connection goes to the next front end (`Pair::cluster`). The sessions are the
//! serve suite's own (`tests/serve/sessions.rs`, `lock_sessions.rs`), unchanged.

use std::path::Path;

use svelto_testkit::{Pair, Run};

use crate::hook_sessions;
use crate::lock_sessions;
use crate::sessions;

fn bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_svelto"))
}

/// `first..=head`, then back down to `first`.
fn forward_and_back(first: u64, head: u64) -> Vec<u64> {
    let mut revs: Vec<u64> = (first..=head).collect();
    revs.extend((first..head).rev());
    revs
}

/// Each front end served at least `least` client connections: the clients were spread.
fn spread(pair: &Pair, least: usize) {
    let counts = pair.cluster_connections().expect("a cluster pair");
    eprintln!("client connections per front end: {counts:?}");
    assert_eq!(counts.len(), 3);
    assert!(counts.iter().all(|&n| n >= least), "{counts:?}");
}

/// `svelto admin hotcopy --cluster` makes a local repository that verifies and dumps (and
/// lists its locks) as the cluster does; an existing destination is refused.
fn hotcopy_is_the_cluster(pair: &Pair) -> std::path::PathBuf {
    let copy = pair.dir().join("hotcopy");
    let out = pair.subject_admin(bin(), &["hotcopy"]).arg(&copy).success();
    assert!(out.stdout_text().contains("* Copied revision 1."), "{out}");
    Run::new(bin())
        .args(["admin", "verify", "-q"])
        .arg(&copy)
        .success();
    for args in [
        &["dump", "-q"][..],
        &["dump", "-q", "--deltas"][..],
        &["lslocks"][..],
    ] {
        let cluster = pair.subject_admin(bin(), args).success().stdout;
        let local = Run::new(bin())
            .arg("admin")
            .args(args)
            .arg(&copy)
            .success()
            .stdout;
        assert!(cluster == local, "svelto admin {args:?} of the hotcopy");
    }
    let again = pair.subject_admin(bin(), &["hotcopy"]).arg(&copy).failure();
    assert!(again.stderr_text().contains("File exists"), "{again}");
    copy
}

fn youngest(repo: &Path) -> u64 {
    let out = Run::tool("svnlook").arg("youngest").arg(repo).success();
    out.stdout_text().trim().parse().expect("svnlook youngest")
}

#[test]
fn reads_through_three_front_ends_match_svnserve() {
    let pair = Pair::cluster("copies", bin());
    let head = youngest(pair.reference_repo());
    assert!(head >= 10, "the fixture has history: r{head}");
    pair.both(&["log", "-v", "{URL}"]).expect_stdout("r1 |");
    pair.both(&["log", "--xml", "-v", "--with-all-revprops", "{URL}"]);
    pair.both(&["log", "--stop-on-copy", "-v", "{URL}/branches/feature2"])
        .expect_stdout("r7");
    pair.both(&["log", "-v", "{URL}/trunk/lib2/a.c"]);
    pair.both(&["log", "-v", "-r", "1:HEAD", "{URL}/trunk/main-copy.c"]);
    pair.both(&["blame", "{URL}/trunk/lib2/a.c"]);
    pair.both(&["blame", "-v", "{URL}/tags/root-at-10/trunk/main.c"]);
    pair.both(&["diff", "-r", &format!("1:{head}"), "{URL}"]);
    pair.both(&["diff", "--summarize", "-r", &format!("0:{head}"), "{URL}"]);
    pair.both(&["diff", "--git", "-r", &format!("1:{head}"), "{URL}"]);
    for rev in 1..=head {
        pair.both(&["diff", "-c", &rev.to_string(), "{URL}"]);
    }
    pair.both(&["ls", "-R", "-v", "{URL}"]);
    pair.both(&["info", "-R", "{URL}"]);
    pair.both(&["proplist", "-R", "-v", "{URL}"]);
    // A working copy walked forward and back through every revision, one update at a
    // time, each compared on disk and as svn sees it.
    let scope = pair.scope("walk");
    scope.walk("", "wc", &forward_and_back(1, head));
    scope.both(&["export", "{URL}", "exported"]);
    scope.compare_tree("exported");
    // svnrdump's dump through the balancer, loaded into FSFS, is the reference's history
    // (as the serve suite's tools test checks it; the cluster's UUID made the reference's).
    let out = pair.run_on(1, Path::new(""), "svnrdump", &["dump", "-q", "{URL}"]);
    assert!(out.success(), "svnrdump dump through the cluster:\n{out}");
    let loaded = svelto_testkit::svnadmin_create();
    let load = loaded.try_load_bytes(&pair.normalize(1, &out.stdout), &[]);
    assert!(
        load.success(),
        "svnadmin load of the cluster's svnrdump dump:\n{load}"
    );
    let expected = Run::tool("svnadmin")
        .args(["dump", "-q"])
        .arg(pair.reference_repo())
        .success()
        .stdout;
    svelto_testkit::dumpfile::assert_dumps_eq(
        &expected,
        &loaded.dump(&[]),
        "svnrdump-copies-cluster",
    );

    // `svelto admin dump --cluster` (whole, revision 0 included) is byte for byte the dump
    // of a repository on one machine loaded from the same dumpfile, given the cluster
    // repository's UUID; with --deltas too. And the cluster verifies.
    let uuid = Run::tool("svn")
        .args(["info", "--show-item", "repos-uuid", "--non-interactive"])
        .arg(pair.subject_url())
        .success()
        .stdout_text()
        .trim()
        .to_owned();
    let local = pair.dir().join("one-machine");
    Run::new(bin())
        .args(["admin", "create"])
        .arg(&local)
        .success();
    Run::new(bin())
        .args(["admin", "load", "-q", "-F"])
        .arg(svelto_testkit::scenario_dump("copies"))
        .arg(&local)
        .success();
    Run::new(bin())
        .args(["admin", "setuuid"])
        .arg(&local)
        .arg(&uuid)
        .success();
    for extra in [&[][..], &["--deltas"][..]] {
        let mut args = vec!["dump", "-q"];
        args.extend_from_slice(extra);
        let cluster = pair.subject_admin(bin(), &args).success().stdout;
        let one = Run::new(bin())
            .arg("admin")
            .args(&args)
            .arg(&local)
            .success()
            .stdout;
        assert!(cluster.len() > 1000, "the dump has the history");
        svelto_testkit::dumpfile::assert_dumps_eq(
            &one,
            &cluster,
            &format!("cluster-dump{extra:?}"),
        );
    }
    let verified = pair.subject_admin(bin(), &["verify"]).success();
    assert!(
        verified
            .stdout_text()
            .contains(&format!("* Verified revision {head}.")),
        "{}",
        verified.stdout_text()
    );
    spread(&pair, 20);
}

/// A cluster pair anonymous clients may write.
fn writable(fixture: &str) -> Pair {
    let pair = Pair::cluster(fixture, bin());
    pair.set_svnserve_conf("[general]\nanon-access = write\n");
    pair
}

#[test]
fn commit_sessions_through_three_front_ends_match_svnserve() {
    let pair = writable("basic");
    // Adds, edits, conflicts and updates from two working copies.
    sessions::two_working_copies_edit_commit_conflict_and_update(&pair);
    // Copies (branches, tags), merges, URL operations, deletes.
    sessions::branch_merge_tag_and_url_operations(&pair);
    // Revision properties (set at commit, changed after: the hooks of the front ends).
    sessions::revision_properties_of_commits(&pair);
    // Copies with changes inside them in one commit; large files.
    sessions::changes_inside_a_copy_in_the_same_commit(&pair);
    sessions::large_files_are_committed_and_changed(&pair);
    revision_property_changes(&pair);
    spread(&pair, 20);
    hotcopy_is_the_cluster(&pair);
}

#[test]
fn lock_sessions_through_three_front_ends_match_svnserve() {
    let pair = Pair::cluster("basic", bin());
    pair.set_svnserve_conf(
        "[general]\nanon-access = read\nauth-access = write\npassword-db = passwd\n",
    );
    for repo in [pair.reference_repo(), pair.subject_repo()] {
        std::fs::write(
            repo.join("conf/passwd"),
            "[users]\nalice = apw\nbob = bpw\n",
        )
        .expect("write passwd");
    }
    lock_sessions::update_keeps_held_locks_and_drops_broken_ones(&pair);
    lock_sessions::pre_commit_hook_sees_lock_tokens(&pair);
    // `svelto admin lslocks --cluster` lists what `svnadmin lslocks` lists (tokens and
    // dates aside), the locks being the ones the sessions left.
    let mask = |text: String| -> Vec<String> {
        let masked = text
            .lines()
            .map(|l| {
                if l.starts_with("UUID Token: ") || l.starts_with("Created: ") {
                    l.split(':').next().unwrap_or_default().to_owned()
                } else {
                    l.to_owned()
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
        // svnadmin lists them in its hash order: compared as sorted blocks.
        let mut blocks: Vec<String> = masked
            .split("\n\n")
            .map(|b| b.trim_end().to_owned())
            .collect();
        blocks.sort();
        blocks
    };
    for (user, path) in [
        ("alice", "trunk/README.txt"),
        ("bob", "trunk/a/b/all-bytes.bin"),
    ] {
        let url = format!("{{URL}}/{path}");
        let password = if user == "alice" { "apw" } else { "bpw" };
        pair.both(&[
            "lock",
            "--username",
            user,
            "--password",
            password,
            "-m",
            "held\nover two lines",
            &url,
        ])
        .expect_stdout("locked by user");
    }
    let reference = Run::tool("svnadmin")
        .arg("lslocks")
        .arg(pair.reference_repo())
        .success()
        .stdout_text();
    let cluster = pair
        .subject_admin(bin(), &["lslocks"])
        .success()
        .stdout_text();
    assert!(
        reference.contains("Owner: "),
        "the sessions left locks: {reference}"
    );
    assert_eq!(mask(cluster), mask(reference), "lslocks");
    let copy = hotcopy_is_the_cluster(&pair);
    let listed = Run::new(bin())
        .args(["admin", "lslocks"])
        .arg(&copy)
        .success();
    assert!(listed.stdout_text().contains("Owner: bob"), "{listed}");
    // The sessions that run `svelto look lock` on the repository's directory (a front
    // end's ROOT/NAME, which names the front ends serving it: docs/cluster.md, "Hooks").
    // Each session as on a pair of its own: the hooks and their log of the ones before
    // removed.
    let fresh_hooks = || {
        for repo in [pair.reference_repo(), pair.subject_repo()] {
            for h in ["pre-commit", "pre-lock", "post-lock", "post-unlock"] {
                let _ = std::fs::remove_file(repo.join("hooks").join(h));
            }
            let _ = std::fs::remove_file(repo.with_extension("lockhooks.log"));
        }
    };
    fresh_hooks();
    lock_sessions::locking_workflows(&pair);
    fresh_hooks();
    lock_sessions::lock_hook_tokens_and_post_hook_failures(&pair, false);
    spread(&pair, 5);
}

/// The serve suite's hook sessions that read the repository with `svelto look` on the
/// `REPOS` their hooks are given (a front end's `ROOT/NAME`): pre-commit's transaction is
/// staged in the cache of the front end that received the commit, which `svelto look -t`
/// finds; post-commit's revision and the rest are read through the cluster.
#[test]
fn hook_sessions_through_three_front_ends_match_svnserve() {
    let pair = writable("basic");
    hook_sessions::hooks_read_the_repository_with_look(&pair);
    hook_sessions::a_held_pre_commit_hook_holds_up_no_other_commit(&pair);
    // No staged transaction is left in any front end's cache (each a local repository's
    // layout).
    let caches = std::fs::read_dir(pair.dir().join("cluster"))
        .expect("the cluster's directory")
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("cache-"))
        .map(|e| e.path().join(pair.name()))
        .collect::<Vec<_>>();
    assert_eq!(caches.len(), 3, "{caches:?}");
    for cache in caches {
        let out = Run::new(bin())
            .args(["admin", "lstxns"])
            .arg(&cache)
            .success();
        assert_eq!(out.stdout_text(), "", "transactions left in {cache:?}");
    }
    let served = std::fs::read_to_string(pair.subject_repo().join("cluster-front-ends"))
        .expect("the front ends recorded themselves");
    assert_eq!(
        served.lines().filter(|l| !l.starts_with('#')).count(),
        3,
        "{served}"
    );
    sessions::Script::new(&pair).assert_same_repositories();
    // What a hook's `svelto look` costs in the cluster (a process, the connections to
    // etcd and the object store, a fence) against the same on the FSFS reference with
    // svnlook: printed for the notes.
    let time = |run: &mut dyn FnMut() -> svelto_testkit::Outcome| {
        let mut ms: Vec<f64> = (0..7)
            .map(|_| {
                let started = std::time::Instant::now();
                let out = run();
                assert!(out.success(), "{out}");
                started.elapsed().as_secs_f64() * 1000.0
            })
            .collect();
        ms.sort_by(f64::total_cmp);
        (ms[3], ms[6])
    };
    let cluster = time(&mut || {
        Run::new(bin())
            .args(["look", "youngest"])
            .arg(pair.subject_repo())
            .output()
    });
    let reference = time(&mut || {
        Run::tool("svnlook")
            .arg("youngest")
            .arg(pair.reference_repo())
            .output()
    });
    eprintln!(
        "svelto look youngest ROOT/NAME in the cluster: median {:.1} ms, max {:.1} ms \
         (svnlook youngest on FSFS: {:.1} / {:.1} ms)",
        cluster.0, cluster.1, reference.0, reference.1
    );
    spread(&pair, 4);
}

/// The http suite against the cluster: Apache with mod_dav_svn over FSFS as the
/// reference, the front ends' `--http-listen` behind the balancer as the subject (each
/// HTTP connection to the next front end; a client keeps a connection for several
/// requests, and opens several).
#[test]
fn http_reads_and_commits_through_three_front_ends_match_apache() {
    let pair = Pair::http_cluster("copies", bin());
    let head = youngest(pair.reference_repo());
    pair.both(&["log", "-v", "{URL}"]).expect_stdout("r1 |");
    pair.both(&["log", "--xml", "-v", "--with-all-revprops", "{URL}"]);
    pair.both(&["blame", "{URL}/trunk/lib2/a.c"]);
    pair.both(&["diff", "-r", &format!("1:{head}"), "{URL}"]);
    pair.both(&["diff", "--summarize", "-r", &format!("0:{head}"), "{URL}"]);
    pair.both(&["ls", "-R", "-v", "{URL}"]);
    pair.both(&["proplist", "-R", "-v", "{URL}"]);
    let scope = pair.scope("walk");
    scope.walk("", "wc", &forward_and_back(1, head));
    scope.both(&["export", "{URL}", "exported"]);
    scope.compare_tree("exported");
    spread(&pair, 10);

    let pair = Pair::http_cluster("basic", bin());
    pair.set_svnserve_conf("[general]\nanon-access = write\n");
    sessions::two_working_copies_edit_commit_conflict_and_update(&pair);
    sessions::branch_merge_tag_and_url_operations(&pair);
    sessions::revision_properties_of_commits(&pair);
    revision_property_changes(&pair);
    spread(&pair, 10);
}

/// Revision property changes after the commit (the pre-revprop-change hook in the front
/// ends' shared `ROOT/NAME/hooks` allows them): set and deleted through one front end,
/// read through the next, and the histories equal.
fn revision_property_changes(pair: &Pair) {
    sessions::allow_revprop_changes(pair);
    pair.both(&[
        "propset",
        "--revprop",
        "-r",
        "1",
        "svn:log",
        "changed later",
        "{URL}",
    ])
    .expect_stdout("set on repository revision 1");
    pair.both(&["propdel", "--revprop", "-r", "2", "svn:log", "{URL}"]);
    pair.both(&["propset", "--revprop", "-r", "HEAD", "team", "red", "{URL}"]);
    pair.both(&["log", "-r", "1:2", "{URL}"])
        .expect_stdout("changed later");
    pair.both(&["propget", "--revprop", "-r", "HEAD", "team", "{URL}"])
        .expect_stdout("red");
    sessions::Script::new(pair).assert_same_repositories();
}

/// The http suite's lock sessions (`http/locks.rs`'s, from `serve/lock_sessions.rs`)
/// against the cluster: Apache with mod_dav_svn, Basic logins and an authz file as the
/// reference, the front ends' `--http-auth-file` and the same authz file behind the
/// balancer as the subject; `svelto look lock` on the front ends' `ROOT/NAME`.
#[test]
fn http_lock_sessions_through_three_front_ends_match_apache() {
    let pair = Pair::http_cluster_auth("basic", bin());
    svelto_testkit::require_tool("htpasswd");
    for (i, (user, password, flag)) in [("alice", "apw", "-B"), ("bob", "bpw", "-m")]
        .into_iter()
        .enumerate()
    {
        let mut run = Run::new("htpasswd");
        if i == 0 {
            run = run.arg("-c");
        }
        run.args(["-b", flag])
            .arg(pair.htpasswd())
            .args([user, password])
            .success();
    }
    for repo in [pair.reference_repo(), pair.subject_repo()] {
        let conf = repo.join("conf");
        std::fs::write(
            conf.join("svnserve.conf"),
            "[general]\nanon-access = read\nauth-access = write\nauthz-db = authz\n\
             realm = Svelto test realm\n",
        )
        .expect("write svnserve.conf");
        std::fs::write(conf.join("authz"), "[/]\n* = r\nalice = rw\nbob = rw\n")
            .expect("write authz");
    }
    let fresh_hooks = || {
        for repo in [pair.reference_repo(), pair.subject_repo()] {
            for h in ["pre-commit", "pre-lock", "post-lock", "post-unlock"] {
                let _ = std::fs::remove_file(repo.join("hooks").join(h));
            }
            let _ = std::fs::remove_file(repo.with_extension("lockhooks.log"));
        }
    };
    lock_sessions::locking_workflows(&pair);
    fresh_hooks();
    lock_sessions::update_keeps_held_locks_and_drops_broken_ones(&pair);
    fresh_hooks();
    lock_sessions::pre_commit_hook_sees_lock_tokens(&pair);
    fresh_hooks();
    lock_sessions::lock_hook_tokens_and_post_hook_failures(&pair, true);
    spread(&pair, 5);
}
