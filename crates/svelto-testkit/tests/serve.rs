//! The differential harness checked on itself: svnserve on both sides of a
//! [`Pair`] must compare equal, and a real difference must be caught.

use std::path::Path;
use std::time::{Duration, Instant};

use svelto_testkit::serve::first_difference;
use svelto_testkit::{Expect, Pair, Svnserve, SvnserveConfig};

#[test]
fn svnserve_starts_serves_and_dies_on_drop() {
    let pair = Pair::selftest("basic");
    let server = Svnserve::start_with(
        pair.reference_repo().parent().expect("repos dir"),
        &SvnserveConfig::best(),
    );
    let pid = server.pid();
    let url = server.url("basic");
    assert!(url.starts_with("svn://127.0.0.1:"), "{url}");
    let out = pair
        .client()
        .svn(&["ls", &format!("{url}/trunk")], pair.dir());
    assert!(out.success(), "{out}");
    assert_eq!(out.stdout_text(), "README.txt\na/\nsrc/\n");
    assert!(server.is_running());
    drop(server);
    let deadline = Instant::now() + Duration::from_secs(10);
    while Path::new(&format!("/proc/{pid}")).exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "svnserve {pid} survived its drop"
    );
}

#[test]
fn selftest_pair_compares_equal() {
    let pair = Pair::selftest("basic");
    assert_ne!(pair.reference().port(), pair.subject().port());
    pair.both(&["log", "-v", "{URL}"])
        .expect_stdout("r12 | alice");
    pair.both(&["info", "{URL}/trunk"])
        .expect_stdout("URL: svn://SERVER/basic/trunk");
    pair.both_fails(&["cat", "{URL}/trunk/nope"])
        .expect_stderr("W160013");
    let s = pair.scope("wc-test");
    s.walk("/trunk", "wc", &[2, 8, 12, 1]);
    s.both(&["update", "--set-depth", "empty", "wc"]);
    s.compare_wc("wc");
    s.both(&["export", "{URL}/trunk", "exported"]);
    s.compare_tree("exported");
    pair.both_tool("svnbench", &["null-log", "{URL}"], Expect::Success)
        .expect_stdout("12 revisions");
}

#[test]
#[should_panic(expected = "differ on `svn status wc")]
fn a_difference_is_caught() {
    let pair = Pair::selftest("basic");
    let s = pair.scope("diff");
    s.both(&["checkout", "{URL}/trunk", "wc"]);
    std::fs::write(s.path(1).join("wc/README.txt"), b"changed").expect("write");
    s.both(&["status", "wc"]);
}

#[test]
#[should_panic(expected = "the trees")]
fn a_tree_difference_is_caught() {
    let pair = Pair::selftest("basic");
    let s = pair.scope("tree");
    s.both(&["checkout", "{URL}/trunk", "wc"]);
    std::fs::write(s.path(1).join("wc/README.txt"), b"changed").expect("write");
    s.compare_tree("wc");
}

#[test]
fn differences_are_described() {
    let d = first_difference(["svnserve", "svelto"], b"a\nb\n", b"a\nc\n").expect("differ");
    assert!(d.contains("svnserve: b") && d.contains("svelto: c"), "{d}");
}
