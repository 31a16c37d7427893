//! Locks against svnserve and Svelto with the same svnserve.conf and passwd: the sessions
//! of `lock_sessions.rs` (lock, steal, break, commits with and without the token,
//! `--no-unlock`, lock hooks; the same client output on both, dates and lock tokens
//! masked), and locks surviving a restart.

use svelto_testkit::Pair;

use crate::commit::{writable_pair, Script};
use crate::lock_sessions;

fn users_pair() -> Pair {
    let pair = writable_pair("basic");
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
    pair
}

#[test]
fn locking_workflows_match_svnserve() {
    lock_sessions::locking_workflows(&users_pair());
}

#[test]
fn locks_survive_a_restart() {
    let pair = users_pair();
    let mut s = Script::new(&pair);
    let _scope = pair.scope("relock");
    let alice = ["--username", "alice", "--password", "apw"];
    s.write("relock/f.txt", "one\n");
    let mut args: Vec<&str> = alice.to_vec();
    args.extend(["import", "-m", "add", "f.txt", "{URL}/f.txt"]);
    s.svn("relock", &args);
    let mut args: Vec<&str> = alice.to_vec();
    args.extend(["lock", "-m", "kept", "{URL}/f.txt"]);
    s.svn("relock", &args);
    // Another server process on the same repository (what a restart starts) sees it.
    let root = pair.subject_repo().parent().expect("root").to_path_buf();
    let name = pair
        .subject_repo()
        .file_name()
        .expect("name")
        .to_string_lossy()
        .into_owned();
    let log = pair.dir().join("second.log");
    // (a cluster pair's: another front end of the cluster)
    let flags = pair.subject_serve_flags();
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let second = svelto_testkit::Svelto::start_with(
        std::path::Path::new(env!("CARGO_BIN_EXE_svelto")),
        &root,
        &log,
        &flags,
    );
    let out = pair.client().svn(
        &["info", &format!("{}/f.txt", second.url(&name))],
        pair.dir(),
    );
    assert!(out.success(), "{out}");
    assert!(
        out.stdout_text().contains("Lock Owner: alice"),
        "{}",
        out.stdout_text()
    );
    assert!(out.stdout_text().contains("kept"), "{}", out.stdout_text());
}

#[test]
fn update_keeps_held_locks_and_drops_broken_ones() {
    lock_sessions::update_keeps_held_locks_and_drops_broken_ones(&users_pair());
}

#[test]
fn pre_commit_hook_sees_lock_tokens_as_svnserve() {
    lock_sessions::pre_commit_hook_sees_lock_tokens(&users_pair());
}

#[test]
fn lock_hook_tokens_and_post_hook_failures_match_svnserve() {
    lock_sessions::lock_hook_tokens_and_post_hook_failures(&users_pair(), false);
}
