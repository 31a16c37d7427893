//! `svelto admin setlog`, `setrevprop`, `delrevprop` against svnadmin's: the values set,
//! which hooks run with which arguments, and the errors.

use std::path::Path;

use svelto_testkit::{scenario_dump, Run};

use crate::common::write_file;
use crate::pair::{Pair, REPO};

/// Installs an executable hook `name` in both repositories.
fn hook(pair: &Pair, name: &str, body: &str) {
    for repo in [pair.fs.path(), pair.sv.path()] {
        crate::common::install_hook(repo, name, body);
    }
}

/// A hook that appends its arguments after the repository, and its standard input, to
/// `REPO/hooks.log`.
fn logging_hook(pair: &Pair, name: &str) {
    hook(
        pair,
        name,
        &format!(
            "shift; echo \"{name} $*\" >> \"$(dirname \"$0\")/../hooks.log\"; \
             /bin/cat >> \"$(dirname \"$0\")/../hooks.log\"; echo >> \"$(dirname \"$0\")/../hooks.log\"\n"
        ),
    );
}

fn hook_log(repo: &Path) -> String {
    std::fs::read_to_string(repo.join("hooks.log")).unwrap_or_default()
}

fn revprops(pair: &Pair, rev: &str) -> (String, String) {
    let fs = Run::tool("svnlook")
        .args(["proplist", "-v", "--revprop", "-r", rev])
        .arg(pair.fs.path())
        .success();
    let sv = crate::common::svelto()
        .args(["look", "proplist", "-v", "--revprop", "-r", rev])
        .arg(pair.sv.path())
        .success();
    (sv.stdout_text(), fs.stdout_text())
}

/// `proplist -v` output as name -> value lines (svnlook lists in hash order).
fn parse_proplist(text: &str) -> std::collections::BTreeMap<String, Vec<String>> {
    let mut out: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    let mut current = None;
    for line in text.lines() {
        if let Some(v) = line.strip_prefix("    ") {
            if let Some(name) = &current {
                out.entry(String::clone(name))
                    .or_default()
                    .push(v.to_string());
            }
        } else if let Some(name) = line.strip_prefix("  ") {
            current = Some(name.to_string());
            out.entry(name.to_string()).or_default();
        }
    }
    // svn:date is when each repository loaded the dump or was created.
    out.remove("svn:date");
    out
}

fn assert_same_revprops(pair: &Pair, rev: &str) {
    let (sv, fs) = revprops(pair, rev);
    assert_eq!(
        parse_proplist(&sv),
        parse_proplist(&fs),
        "revision properties of r{rev}"
    );
}

#[test]
fn setlog_runs_the_hooks_unless_bypassed() {
    let pair = Pair::with_dump(&scenario_dump("basic"));
    let dir = pair.sv.dir().to_path_buf();
    let msg = write_file(&dir, "msg", b"new message\r\nsecond line\r\n");
    let msg = msg.to_str().expect("utf-8 path");
    // No pre-revprop-change hook: refused, as a client's change would be.
    let seen = pair.same(&["setlog", REPO, "-r", "1", msg]);
    assert!(seen.stderr.contains("E165006"), "{seen:?}");
    pair.same(&["setlog", REPO, "-r", "1", msg, "--bypass-hooks"]);
    assert_same_revprops(&pair, "1");
    logging_hook(&pair, "pre-revprop-change");
    logging_hook(&pair, "post-revprop-change");
    let other = write_file(&dir, "other", b"third\n");
    pair.same(&["setlog", REPO, "-r", "2", other.to_str().expect("utf-8")]);
    assert_same_revprops(&pair, "2");
    assert_eq!(hook_log(pair.sv.path()), hook_log(pair.fs.path()));
    assert!(hook_log(pair.sv.path()).contains("pre-revprop-change 2  svn:log M"));
    // A refusing hook: svnadmin's E165001 with the hook's output.
    hook(
        &pair,
        "pre-revprop-change",
        "echo refused by policy >&2; exit 1\n",
    );
    let seen = pair.same(&["setlog", REPO, "-r", "2", msg]);
    assert!(seen.stderr.contains("E165001"), "{seen:?}");
    assert!(seen.stderr.contains("refused by policy"), "{seen:?}");
    pair.sv.verify();
}

#[test]
fn setrevprop_and_delrevprop_run_hooks_only_when_asked() {
    let pair = Pair::with_dump(&scenario_dump("basic"));
    let dir = pair.sv.dir().to_path_buf();
    let value = write_file(&dir, "value", b"v1\n");
    let value = value.to_str().expect("utf-8 path");
    logging_hook(&pair, "post-revprop-change");
    hook(
        &pair,
        "pre-revprop-change",
        "echo never asked >&2; exit 1\n",
    );
    pair.same(&["setrevprop", REPO, "-r", "1", "my:prop", value]);
    pair.same(&["setrevprop", REPO, "-r", "0", "svn:author", value]);
    pair.same(&["delrevprop", REPO, "-r", "1", "svn:log"]);
    pair.same(&["delrevprop", REPO, "-r", "1", "no:such-prop"]);
    assert_same_revprops(&pair, "0");
    assert_same_revprops(&pair, "1");
    assert_eq!(hook_log(pair.sv.path()), "");
    let seen = pair.same(&[
        "setrevprop",
        REPO,
        "-r",
        "1",
        "my:prop",
        value,
        "--use-pre-revprop-change-hook",
    ]);
    assert!(seen.stderr.contains("never asked"), "{seen:?}");
    pair.same(&[
        "delrevprop",
        REPO,
        "-r",
        "1",
        "my:prop",
        "--use-post-revprop-change-hook",
    ]);
    assert_same_revprops(&pair, "1");
    assert_eq!(hook_log(pair.sv.path()), hook_log(pair.fs.path()));
    assert!(hook_log(pair.sv.path()).starts_with("post-revprop-change 1  my:prop D\nv1\n"));
}

#[test]
fn revprop_errors_are_svnadmins() {
    let pair = Pair::with_dump(&scenario_dump("basic"));
    let dir = pair.sv.dir().to_path_buf();
    let value = write_file(&dir, "value", b"v\n");
    let value = value.to_str().expect("utf-8 path");
    let mixed = write_file(&dir, "mixed", b"a\r\nb\n");
    let mixed = mixed.to_str().expect("utf-8 path");
    let date = write_file(&dir, "date", b"yesterday");
    let date = date.to_str().expect("utf-8 path");
    let cases: &[&[&str]] = &[
        &["setlog", REPO, value],
        &["setlog", REPO, "-r", "HEAD", value, "--bypass-hooks"],
        &["setlog", REPO, "-r", "1:2", value, "--bypass-hooks"],
        &["setlog", REPO, "-r", "x", value],
        &["setlog", REPO, "-r", "99", value, "--bypass-hooks"],
        &[
            "setlog",
            REPO,
            "-r",
            "1",
            "/nonexistent/file",
            "--bypass-hooks",
        ],
        &[
            "setlog",
            REPO,
            "-r",
            "1",
            value,
            "--use-pre-revprop-change-hook",
        ],
        &["setrevprop", REPO, "-r", "1", "svn:date", date],
        &["setrevprop", REPO, "-r", "1", "mixed", mixed],
        &["setrevprop", REPO, "-r", "1", "only-a-name"],
        &["setrevprop", REPO, "-t", "1-1", "-r", "1", "p", value],
        &[
            "setrevprop",
            REPO,
            "-t",
            "1-1",
            "p",
            value,
            "--use-pre-revprop-change-hook",
        ],
        &["setrevprop", REPO, "-t", "1-1", "p", value],
        &["delrevprop", REPO, "-r", "1"],
        &["delrevprop", REPO, "p"],
        &["delrevprop", "/nonexistent/repo", "-r", "1", "p"],
    ];
    for args in cases {
        let seen = pair.same(args);
        assert_eq!(seen.code, Some(1), "{args:?}");
    }
}
