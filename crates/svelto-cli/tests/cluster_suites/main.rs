//! The differential suites against a cluster (issue 35): the same test bodies as the
//! `serve` (svn://) and `http` suites, the reference side unchanged (svnserve or Apache over
//! FSFS), the subject side three `svelto serve --cluster` front ends behind a round-robin
//! TCP balancer in the test process (each client connection goes to the next front end, so
//! one command's sessions and consecutive commands land on different front ends). All the
//! pairs of the process share one rig (three etcd members and weed, started by the first
//! pair, kept to the end), each pair a cluster of its own on it; the fixture is loaded with
//! `svelto admin load --cluster`. Fresh pairs (commit sessions, authz, hooks, locks) are
//! cluster pairs on the same rig (`svelto_testkit::Subject::Cluster`). Commit sessions end
//! by comparing `svelto admin dump --cluster` with the reference's dump after `svelto admin
//! verify --cluster` (`Pair::subject_dump`). See docs/cluster.md, "The differential suites
//! against a cluster".
//!
//! Run against the cluster, over both protocols: path-based authz for every user (svn://),
//! reads (`ls`, `cat`, `info`, properties, mergeinfo), checkouts, updates, switches, diffs,
//! exports, log, blame, the tools that read (svnsync from the server, svnrdump dump,
//! svnbench), the commit sessions (two working copies, branches and merges, revision
//! properties, copies, large files, bad destinations, svnsync, svnrdump load and svnmucc
//! into the server), bad editor drives over raw svn:// and a client vanishing mid-commit
//! (refused alike, nothing changed), the hooks (`serve`'s hooks module: start-commit, pre-commit,
//! post-commit, revision property hooks, hooks reading with `svelto look`), locks (`serve`'s
//! and `http`'s lock modules: lock, steal, break, lock hooks, `svelto admin lslocks` and
//! `svelto look lock` on the front ends' `ROOT/NAME`), HTTP's raw GETs, keyword queries,
//! OPTIONS, PROPFIND and WebDAV writes. The tests sending each request into one HTTP
//! transaction on a connection of its own go through the balancer too: a request of a
//! transaction another front end holds is forwarded to it (docs/cluster.md, "HTTP
//! transactions").
//!
//! What stays with the local engine's suites (`serve`, `http`, `memory`), by nature:
//! - kill -9 of the server, crash recovery and durability (`serve/durability.rs`): a
//!   cluster's are the cluster suite's fault tests (`tests/cluster/faults.rs`);
//! - a repository deleted or replaced on disk under the server (`serve/replaced.rs`), and
//!   docs/migrating.md's steps on one machine (`serve/migrating.rs`);
//! - the server process's flags, limits, memory, signals and request logs (`serve/ops.rs`,
//!   `serve/cli.rs`,
//!   `serve/bounds.rs`, `serve/robust.rs`, `http/conn.rs`, `http/idle.rs`, `http/bad.rs`):
//!   they test one process, not the storage; a balancer in front would test the balancer;
//! - what starts servers of its own on a local repository (`serve/concurrency.rs`, whose
//!   concurrent committers on a cluster are the fault tests' four, `serve/first_day.rs`,
//!   `serve/ssh.rs` through sshd, `http/tls.rs`, `http/proxy.rs`, `http/nested.rs`,
//!   `http/ldap.rs`, `http/owners.rs`, `http/log.rs`'s request logs, `http/auth.rs`'s pairs
//!   made with their own flags), and `serve/auth.rs` (svnserve.conf logins: the front ends
//!   read the same `conf/` whatever the store);
//! - `http/bench_client.rs`: a measurement, not a comparison.

mod backend;

#[path = "../serve/common.rs"]
mod common;
#[path = "../serve/hook_sessions.rs"]
mod hook_sessions;
#[path = "../serve/lock_sessions.rs"]
mod lock_sessions;
// What `commit_bad` sends over raw svn://; the rest serves the `serve` suite's `robust`.
#[allow(dead_code)]
#[path = "../serve/raw.rs"]
mod raw;
#[path = "../serve/sessions.rs"]
mod sessions;

#[path = "../serve/authz.rs"]
mod svn_authz;
#[path = "../serve/blame.rs"]
mod svn_blame;
#[path = "../serve/checkout.rs"]
mod svn_checkout;
// Its re-exports of `sessions` serve the `serve` suite's other modules.
#[allow(unused_imports)]
#[path = "../serve/commit.rs"]
mod svn_commit;
#[path = "../serve/commit_bad.rs"]
mod svn_commit_bad;
#[path = "../serve/commit_tools.rs"]
mod svn_commit_tools;
#[path = "../serve/diff.rs"]
mod svn_diff;
#[path = "../serve/export.rs"]
mod svn_export;
#[path = "../serve/hooks.rs"]
mod svn_hooks;
#[path = "../serve/locks.rs"]
mod svn_locks;
#[path = "../serve/log.rs"]
mod svn_log;
#[path = "../serve/read.rs"]
mod svn_read;
#[path = "../serve/tools.rs"]
mod svn_tools;
#[path = "../serve/update.rs"]
mod svn_update;

#[path = "../http/support.rs"]
mod support;
pub use support::*;

#[path = "../http/commit.rs"]
mod http_commit;
#[path = "../http/locks.rs"]
mod http_locks;
#[path = "../http/options.rs"]
mod http_options;
#[path = "../http/propfind.rs"]
mod http_propfind;
#[path = "../http/read.rs"]
mod http_read;
#[path = "../http/tools.rs"]
mod http_tools;
#[path = "../http/update.rs"]
mod http_update;
#[path = "../http/write.rs"]
mod http_write;

/// What the `serve` and `http` suites' modules call `crate::commit`: both suites' writable
/// pairs.
mod commit {
    pub use crate::http_commit::writable_http_pair;
    pub use crate::svn_commit::{mask_txn_names, writable_pair, Script};
}

use std::path::PathBuf;

use svelto_testkit::Pair;

/// The `svelto` binary under test.
pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_svelto"))
}

/// The HTTP pair serving `fixture` from a cluster (made on first use, shared by all tests).
pub fn pair(fixture: &str) -> &'static Pair {
    svelto_testkit::shared_cluster_http_pair(fixture, &bin())
}

/// What serves the subject side of a fresh HTTP pair: a cluster of three front ends.
pub fn subject() -> svelto_testkit::Subject {
    backend::subject()
}

/// The subject side is what this suite says: a cluster (the repository's directory on disk
/// holds `conf/` and `hooks/`, no `db/`), each front end serves client connections (the
/// balancer gives each the next one), and a commit through one is seen through the others.
#[test]
fn the_subject_is_a_cluster_and_clients_spread_across_its_front_ends() {
    let svn = crate::common::pair("basic");
    let http = pair("basic");
    for pair in [svn, http] {
        assert!(
            matches!(pair.subject_kind(), svelto_testkit::Subject::Cluster(_)),
            "{:?}",
            pair.labels()
        );
        assert!(!pair.subject_repo().join("db").exists());
        for _ in 0..6 {
            pair.both(&["info", "{URL}"]);
        }
        let counts = pair.cluster_connections().expect("a cluster pair");
        assert_eq!(counts.len(), 3, "{counts:?}");
        assert!(
            counts.iter().all(|&n| n >= 2),
            "some front end served fewer than 2 of the client connections: {counts:?}"
        );
    }
    let mut fresh = crate::svn_commit::writable_pair("basic");
    // Each side stamps its commit when it makes it: a second may pass between the two.
    fresh.mask_dates();
    let before = crate::common::head(&fresh);
    let _scope = fresh.scope("spread");
    for i in 0..3 {
        fresh.both(&["mkdir", "-m", "spread it", &format!("{{URL}}/spread-{i}")]);
        // The next connection goes to the next front end: each sees the commit at once.
        fresh.both(&["ls", &format!("{{URL}}/spread-{i}")]);
        fresh.both(&["log", "-q", "-r", "HEAD", "{URL}"]);
    }
    let dump = String::from_utf8_lossy(&fresh.subject_dump()).into_owned();
    assert!(
        dump.contains(&format!("Revision-number: {}\n", before + 3))
            && dump.contains("Node-path: spread-2\n"),
        "the commits are not in the cluster repository's dump"
    );
    let counts = fresh.cluster_connections().expect("a cluster pair");
    assert!(counts.iter().all(|&n| n >= 3), "{counts:?}");
}

/// The `serve` suite's held pre-commit hook session (a commit held in its pre-commit hook
/// holds up no other commit, through other front ends), then no staged transaction is left
/// in any front end's cache (each a local repository's layout) and the three front ends
/// recorded themselves in `ROOT/NAME`.
#[test]
fn a_held_pre_commit_hook_holds_up_no_other_commit() {
    let pair = crate::svn_commit::writable_pair("basic");
    hook_sessions::a_held_pre_commit_hook_holds_up_no_other_commit(&pair);
    let caches = std::fs::read_dir(pair.dir().join("cluster"))
        .expect("the cluster's directory")
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("cache-"))
        .map(|e| e.path().join(pair.name()))
        .collect::<Vec<_>>();
    assert_eq!(caches.len(), 3, "{caches:?}");
    for cache in caches {
        let out = svelto_testkit::Run::new(bin())
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
    // svnlook: printed for the notes (docs/cluster.md, "Hooks").
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
        svelto_testkit::Run::new(bin())
            .args(["look", "youngest"])
            .arg(pair.subject_repo())
            .output()
    });
    let reference = time(&mut || {
        svelto_testkit::Run::tool("svnlook")
            .arg("youngest")
            .arg(pair.reference_repo())
            .output()
    });
    eprintln!(
        "svelto look youngest ROOT/NAME in the cluster: median {:.1} ms, max {:.1} ms \
         (svnlook youngest on FSFS: {:.1} / {:.1} ms)",
        cluster.0, cluster.1, reference.0, reference.1
    );
}

/// The cluster repository has the fixture dump's UUID, as the reference has it from
/// `svnadmin load` (`svelto admin create --cluster --uuid`); a UUID that is not one is
/// refused saying so, and `svelto admin lock --cluster` without a front end's directory
/// (whose hooks would run) asks for --bypass-hooks.
#[test]
fn the_cluster_repository_has_the_dumps_uuid_and_bad_admin_calls_are_refused() {
    let pair = crate::common::pair("basic");
    let uuids = [0, 1].map(|side| {
        let out = pair.run_on(
            side,
            std::path::Path::new(""),
            "svn",
            &["info", "--show-item", "repos-uuid", "{URL}"],
        );
        assert!(out.success(), "{out}");
        out.stdout_text().trim().to_owned()
    });
    let dump = std::fs::read(svelto_testkit::scenario_dump("basic")).expect("the fixture");
    let fixture = svelto_testkit::dumpfile::uuid_of(&dump).expect("the fixture's UUID");
    assert_eq!(uuids, [fixture.clone(), fixture]);
    let flags = pair.subject_serve_flags();
    assert_eq!(flags.len(), 2, "{flags:?}");
    let file = &flags[1];
    let bad = svelto_testkit::Run::new(bin())
        .args([
            "admin",
            "create",
            "--cluster",
            file,
            "other",
            "--uuid",
            "not-a-uuid",
        ])
        .output();
    assert!(!bad.success(), "{bad}");
    assert!(
        bad.stderr_text().contains("'not-a-uuid' is not a UUID"),
        "{bad}"
    );
    let comment = pair.dir().join("lock-comment");
    std::fs::write(&comment, "mine\n").expect("comment");
    let lock = svelto_testkit::Run::new(bin())
        .args([
            "admin",
            "lock",
            "--cluster",
            file,
            "basic",
            "trunk/README.txt",
            "alice",
        ])
        .arg(&comment)
        .output();
    assert!(!lock.success(), "{lock}");
    assert!(
        lock.stderr_text()
            .contains("a cluster repository's hooks are its front ends'"),
        "{lock}"
    );
}
