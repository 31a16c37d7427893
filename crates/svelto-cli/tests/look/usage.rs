//! Argument errors, option checks, bad revisions: the same messages and exit codes.

use crate::common::{look, svnlook, Pair};
use std::process::Command;
use svelto_testkit::scenario_dump;

#[test]
fn usage_errors_match() {
    let pair = Pair::load(&scenario_dump("copies"));
    for args in [
        &["bogus", "REPO"][..],
        &["changed"],
        &["changed", "REPO", "--bogus"],
        &["changed", "REPO", "-Z"],
        &["changed", "REPO", "-r"],
        &["changed", "REPO", "--revision=3"],
        &["changed", "REPO", "-r3"],
        &["changed", "REPO", "-r", "-1"],
        &["changed", "REPO", "-r", "abc"],
        &["changed", "REPO", "-r", "3x"],
        &["changed", "REPO", "-r", "99"],
        &["changed", "REPO", "-r", "1", "-t", "1-1"],
        &["changed", "REPO", "extra"],
        &["changed", "REPO", "--show-inherited-props", "--revprop"],
        &["log", "REPO", "-t", "nosuch"],
        &["log", "REPO", "-t", "../x"],
        &["youngest", "REPO", "-r", "3"],
        &["history", "REPO", "-t", "x"],
        &["history", "REPO", "-l", "0"],
        &["history", "REPO", "-l", "x"],
        &["history", "REPO", "a", "b"],
        &["history", "REPO", "/trunk", "-r", "99"],
        &["tree", "REPO", "a", "b"],
        &["tree", "REPO", "/nope"],
        &["tree", "REPO", "--copy-info"],
        &["cat", "REPO"],
        &["cat", "REPO", "a", "b"],
        &["cat", "REPO", "/trunk"],
        &["cat", "REPO", "trunk/"],
        &["cat", "REPO", "/nope"],
        &["cat", "REPO", "/trunk/main.c/x"],
        &["cat", "REPO", "http://host/x"],
        &["filesize", "REPO", "trunk"],
        &["filesize", "REPO", "/trunk/main.c", "-r", "99"],
        &["propget", "REPO"],
        &["propget", "REPO", "foo"],
        &["propget", "--revprop", "REPO"],
        &["propget", "--revprop", "REPO", "foo"],
        &["propget", "--revprop", "REPO", "foo", "bar"],
        &["propget", "REPO", "foo", "/", "extra"],
        &["propget", "REPO", "foo", "/"],
        &["propget", "REPO", "foo", "/nope"],
        &["propget", "--show-inherited-props", "REPO", "foo", "/trunk"],
        &["pg", "--revprop", "REPO", "svn:log", "-r", "2"],
        &["pl", "REPO"],
        &["plist", "REPO", "/", "-r", "2"],
        &["proplist", "REPO", "/nope"],
        &["uuid", "REPO", "x"],
        &["info", "REPO", "x"],
        &["diff", "REPO", "-x", "--bogus"],
        &["diff", "REPO", "-x", "-U"],
        &["diff", "REPO", "-r", "0"],
        &["dirs-changed", "REPO", "-r", "0"],
        &["changed", "REPO", "-r", "0"],
        &["author", "http://example.com/repo"],
    ] {
        pair.same(args);
    }
}

/// FSFS node-revision ids cannot be reproduced: `--show-ids` is refused, with a reason.
#[test]
fn show_ids_is_refused() {
    let pair = Pair::load(&scenario_dump("basic"));
    for args in [
        &["history", "--show-ids", "REPO"][..],
        &["tree", "--show-ids", "REPO"],
    ] {
        let out = look(&pair.svelto, args);
        assert_eq!(out.code, Some(1), "{out}");
        assert!(out.stdout.is_empty(), "{out}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            "svelto look: E200007: --show-ids is not supported: Svelto's node-revision ids are not FSFS's\n"
        );
    }
}

#[test]
fn missing_repository() {
    let dir = svelto_testkit::tempdir();
    let missing = dir.path().join("none");
    let out = look(&missing, &["youngest", "REPO"]);
    assert_eq!(out.code, Some(1));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("svelto look: E000002: Can't open file '") && err.contains("none/format'"),
        "{err}"
    );
}

/// `date` and `info` print the commit time in the local time zone, as svnlook does.
#[test]
fn dates_in_local_time() {
    let pair = Pair::load(&scenario_dump("basic"));
    for tz in [
        "UTC",
        "Europe/Paris",
        "America/New_York",
        "Asia/Kolkata",
        ":Australia/Adelaide",
    ] {
        for rev in ["1", "5", "12"] {
            let run = |program: &std::path::Path, prefix: &[&str], repo: &std::path::Path| {
                let out = Command::new(program)
                    .args(prefix)
                    .args(["date"])
                    .arg(repo)
                    .args(["-r", rev])
                    .env("LC_ALL", "C.UTF-8")
                    .env("TZ", tz)
                    .output()
                    .expect("runs");
                (out.status.code(), out.stdout)
            };
            let want = run(
                &svelto_testkit::require_tool("svnlook"),
                &[],
                pair.fsfs.path(),
            );
            let got = run(
                std::path::Path::new(crate::common::svelto_bin()),
                &["look"],
                &pair.svelto,
            );
            assert_eq!(
                String::from_utf8_lossy(&got.1),
                String::from_utf8_lossy(&want.1),
                "TZ={tz} -r {rev}"
            );
            assert_eq!(got.0, want.0);
        }
    }
}

/// `help SUBCOMMAND` (by name and alias, several at once, an unknown one) and
/// `SUBCOMMAND --help` print what svnlook prints, with svnlook's name read as ours.
#[test]
fn help_on_each_subcommand_matches() {
    let dir = svelto_testkit::tempdir();
    let ours = |s: &[u8]| String::from_utf8_lossy(s).replace("svnlook ", "svelto look ");
    let mut asked: Vec<Vec<&str>> = [
        "author",
        "cat",
        "changed",
        "date",
        "diff",
        "dirs-changed",
        "filesize",
        "help",
        "history",
        "info",
        "lock",
        "log",
        "propget",
        "proplist",
        "tree",
        "uuid",
        "youngest",
        "pg",
        "plist",
        "?",
    ]
    .iter()
    .map(|s| vec!["help", *s])
    .collect();
    asked.push(vec!["help", "author", "bogus", "tree"]);
    asked.push(vec!["h", "youngest", "lock"]);
    asked.push(vec!["changed", "--help"]);
    asked.push(vec!["pl", "-h"]);
    for args in asked {
        let want = svnlook(dir.path(), &args);
        let got = look(dir.path(), &args);
        assert_eq!(got.code, want.code, "{args:?}: {got}");
        assert_eq!(ours(&got.stdout), ours(&want.stdout), "{args:?}");
        assert_eq!(ours(&got.stderr), ours(&want.stderr), "{args:?}");
        assert!(!got.stdout.is_empty(), "{args:?}");
    }
}
