//! The differential suites over the second backend: the same test bodies as the `serve`
//! (svn://) and `http` suites, the reference side unchanged (svnserve or Apache over FSFS),
//! the subject side Svelto's front ends started in this process (`front.rs`: a `Host`, the
//! svn:// listener, the HTTP server, as `svelto serve` wires them) over the in-memory
//! backend (`svelto_testkit::memfs::MemBackend`), each fixture loaded into it by
//! `svelto_repos::load` and the repositories' `conf/` and `hooks/` on disk. Commit
//! sessions end by comparing the dumps, the subject's made from memory after
//! `svelto_repos::verify` (`Pair::subject_dump`).
//!
//! Run over memory: path-based authz for every user (reads, writes, blame, revision
//! properties, svnsync mirrors, lock tokens), reads (`ls`, `cat`, `info`, properties, mergeinfo), checkouts,
//! updates, switches, diffs, exports, log, blame, the tools that read (svnsync from the
//! server, svnrdump dump, svnbench) and the commit sessions (two working copies, branches
//! and merges, revision properties, copies, large files, bad destinations, svnsync and
//! svnrdump load into the server) over both protocols, plus HTTP's raw GETs, keyword
//! queries, OPTIONS and PROPFIND, and logins by HTTP Basic (`--http-auth-file`). What stays with the local engine's suites, by nature: kill -9 and crash
//! recovery, hot copies, `svelto admin` and `svelto look` on the served repository (the
//! hooks that call them, lock listings), the server process's flags, memory and signals.

mod backend;
mod front;

#[path = "../serve/common.rs"]
mod common;
#[path = "../serve/sessions.rs"]
mod sessions;
// Its `hook` serves here; the rest reads the lock table with `svelto admin`.
#[allow(dead_code)]
#[path = "../serve/lock_sessions.rs"]
mod lock_sessions;

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
#[path = "../serve/commit_tools.rs"]
mod svn_commit_tools;
#[path = "../serve/diff.rs"]
mod svn_diff;
#[path = "../serve/export.rs"]
mod svn_export;
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

use svelto_testkit::Pair;

/// The HTTP pair serving `fixture` from memory (made on first use, shared by all tests).
pub fn pair(fixture: &str) -> &'static Pair {
    svelto_testkit::shared_memory_http_pair(fixture, front::start())
}

/// What serves the subject side of a fresh HTTP pair: the front end over memory.
pub fn subject() -> svelto_testkit::Subject {
    front::subject()
}

/// The subject side is what this suite says: served by the test process, its revisions in
/// memory (the repository's directory on disk holds `conf/` and `hooks/`, no `db/`), and a
/// commit through it lands there.
#[test]
fn the_subject_serves_from_memory() {
    let svn = crate::common::pair("basic");
    let http = pair("basic");
    for pair in [svn, http] {
        assert!(pair.subject().is_in_process(), "{:?}", pair.labels());
        assert!(matches!(
            pair.subject_kind(),
            svelto_testkit::Subject::Memory(_)
        ));
        let repo = pair.subject_repo();
        assert!(repo.join("conf/svnserve.conf").is_file(), "{repo:?}");
        assert!(!repo.join("db").exists(), "{repo:?} has a db/ on disk");
    }
    let fresh = crate::svn_commit::writable_pair("basic");
    let before = crate::common::head(&fresh);
    let _scope = fresh.scope("memory");
    fresh.both(&["mkdir", "-m", "in memory", "{URL}/memory-dir"]);
    let dump = String::from_utf8_lossy(&fresh.subject_dump()).into_owned();
    assert!(
        dump.contains(&format!("Revision-number: {}\n", before + 1))
            && dump.contains("Node-path: memory-dir\n"),
        "the commit is not in the memory repository's dump"
    );
    assert!(!fresh.subject_repo().join("db").exists());
}
