//! `svelto admin load` with svnadmin's other options, each against svnadmin given the
//! same command: `--ignore-dates`, `--normalize-props`, `--bypass-prop-validation`,
//! `--use-pre-commit-hook`, `--use-post-commit-hook`, `--no-flush-to-disk`, `-M`, `-r`;
//! the property errors' codes, a dump that only sets the UUID, and `svelto admin help`.

use std::path::Path;

use svelto_testkit::{scenario_dump, Run};

use crate::common::{install_hook as hook, svelto, write_file};
use crate::pair::{Pair, REPO};

fn date(repo_tool: Run, repo: &Path, rev: &str) -> String {
    repo_tool
        .args(["propget", "--revprop", "-r", rev])
        .arg(repo)
        .arg("svn:date")
        .success()
        .stdout_text()
}

#[test]
fn ignore_dates_dates_revisions_when_loaded() {
    let pair = Pair::new();
    let dump = scenario_dump("basic");
    let dump = dump.to_str().expect("utf-8");
    pair.same(&["load", "-q", "--ignore-dates", "-F", dump, REPO]);
    let today = svelto_core::svn_date_now()[..10].to_string();
    for rev in ["1", "2"] {
        let fs = date(Run::tool("svnlook"), pair.fs.path(), rev);
        let sv = date(svelto().arg("look"), pair.sv.path(), rev);
        assert!(fs.starts_with(&today), "svnadmin: {fs}");
        assert!(sv.starts_with(&today), "svelto: {sv}");
    }
    pair.sv.verify();
}

/// Subversion's load_bad_props dump: svn:log with mixed line endings.
const BAD_PROPS: &[u8] = b"SVN-fs-dump-format-version: 2\n\n\
UUID: dc40867b-38f6-0310-9f5f-f81aa277e06f\n\n\
Revision-number: 0\nProp-content-length: 56\nContent-length: 56\n\n\
K 8\nsvn:date\nV 27\n2005-05-03T19:09:41.129900Z\nPROPS-END\n\n\
Revision-number: 1\nProp-content-length: 99\nContent-length: 99\n\n\
K 7\nsvn:log\nV 3\n\n\r\n\nK 10\nsvn:author\nV 2\npl\nK 8\nsvn:date\nV 27\n2005-05-03T19:10:19.975578Z\nPROPS-END\n\n\
Node-path: file\nNode-kind: file\nNode-action: add\nProp-content-length: 10\n\
Text-content-length: 5\nText-content-md5: e1cbb0c3879af8347246f12c559a86b5\n\
Content-length: 15\n\nPROPS-END\ntext\n\n\n";

fn codes(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter_map(|l| l.strip_prefix("svnadmin: "))
        .map(|l| l[..7].to_string())
        .collect()
}

#[test]
fn property_errors_and_normalization_as_svnadmin() {
    let pair = Pair::new();
    let file = write_file(pair.sv.dir(), "bad.dump", BAD_PROPS);
    let file = file.to_str().expect("utf-8");
    let (fs, sv) = pair.run_with(&["load", "-q", "-F", file, REPO], |r| r);
    assert_eq!(sv.status.code(), Some(1), "{sv}");
    assert_eq!(
        codes(&sv.stderr_text()),
        codes(&fs.stderr_text()),
        "{sv}\n{fs}"
    );
    assert_eq!(codes(&sv.stderr_text()), ["E125005", "E125005", "E125017"]);
    assert!(
        sv.stderr_text()
            .contains("consider using --normalize-props"),
        "{sv}"
    );
    // Loaded with --normalize-props, the log has LF line endings on both.
    pair.same(&["load", "-q", "--normalize-props", "-F", file, REPO]);
    let fs_log = Run::tool("svnlook")
        .arg("log")
        .arg(pair.fs.path())
        .success();
    let sv_log = svelto().args(["look", "log"]).arg(pair.sv.path()).success();
    assert_eq!(sv_log.stdout_text(), fs_log.stdout_text());
    assert_eq!(sv_log.stdout_text(), "\n\n\n");
    // --bypass-prop-validation keeps the value as it is.
    let pair = Pair::new();
    pair.same(&["load", "-q", "--bypass-prop-validation", "-F", file, REPO]);
    let sv = svelto()
        .args(["admin", "dump-revprops", "-q", "-r", "1"])
        .arg(pair.sv.path())
        .success();
    assert!(sv.stdout_text().contains("svn:log\nV 3\n\n\r\n\n"), "{sv}");
}

#[test]
fn a_dump_of_a_uuid_sets_the_uuid() {
    let pair = Pair::new();
    let uuid = "0c1e8b2a-3d4f-4a5b-8c6d-7e8f9a0b1c2d";
    let dump = format!("SVN-fs-dump-format-version: 2\n\nUUID: {uuid}\n\n");
    pair.same_with(&["load", REPO], |r| {
        r.stdin_bytes(dump.clone().into_bytes())
    });
    assert_eq!(pair.sv.info().uuid, uuid);
    let fs = Run::tool("svnlook")
        .arg("uuid")
        .arg(pair.fs.path())
        .success();
    assert_eq!(fs.stdout_text().trim(), uuid);
    // Without the blank line after the UUID (Subversion's svnlook_tests sends it so),
    // with --force-uuid on a repository that has revisions.
    let uuid = "01234567-89ab-cdef-89ab-cdef01234567";
    let dump = format!("SVN-fs-dump-format-version: 2\n\nUUID: {uuid}\n");
    pair.same_with(&["load", "--force-uuid", REPO], |r| {
        r.stdin_bytes(dump.clone().into_bytes())
    });
    assert_eq!(pair.sv.info().uuid, uuid);
}

#[test]
fn accepted_options_and_range_errors_as_svnadmin() {
    let pair = Pair::new();
    let dump = scenario_dump("basic");
    let dump = dump.to_str().expect("utf-8");
    for args in [
        &["load", "-q", "-r", "HEAD", "-F", dump, REPO][..],
        &["load", "-q", "-r", "3:1", "-F", dump, REPO],
        &["load", "-q", "-F", "/nonexistent/dump", REPO],
    ] {
        let seen = pair.same(args);
        assert_eq!(seen.code, Some(1), "{args:?}");
    }
    let seen = pair.same(&[
        "load",
        "--no-flush-to-disk",
        "-M",
        "32",
        "-r",
        "0:1",
        "-F",
        dump,
        REPO,
    ]);
    assert!(
        seen.stdout.contains("------- Committed revision 1 >>>"),
        "{seen:?}"
    );
}

#[test]
fn commit_hooks_run_when_asked_as_svnadmin() {
    let pair = Pair::new();
    let svnlook = svelto_testkit::require_tool("svnlook");
    let sv = env!("CARGO_BIN_EXE_svelto");
    // Each pre-commit hook lists what the transaction changes with its repository's tool;
    // the post-commit hooks the revision.
    for (repo, look) in [
        (pair.fs.path(), format!("'{}'", svnlook.display())),
        (pair.sv.path(), format!("'{sv}' look")),
    ] {
        hook(
            repo,
            "pre-commit",
            &format!("{look} changed -t \"$2\" \"$1\" >> \"$1/hooks.log\"; exit 0\n"),
        );
        hook(
            repo,
            "post-commit",
            "echo \"post-commit $2\" >> \"$1/hooks.log\"\n",
        );
    }
    let dump = scenario_dump("basic");
    let dump = dump.to_str().expect("utf-8");
    // Without the options, no hook runs.
    pair.same(&["load", "-q", "-r", "0:1", "-F", dump, REPO]);
    assert!(!pair.sv.path().join("hooks.log").exists());
    pair.same(&[
        "load",
        "-q",
        "--use-pre-commit-hook",
        "--use-post-commit-hook",
        "-r",
        "2:3",
        "-F",
        dump,
        REPO,
    ]);
    let log = |repo: &Path| std::fs::read_to_string(repo.join("hooks.log")).expect("hooks ran");
    assert_eq!(log(pair.sv.path()), log(pair.fs.path()));
    assert!(
        log(pair.sv.path()).contains("post-commit 3\n"),
        "{}",
        log(pair.sv.path())
    );
    // A pre-commit hook that refuses stops the load at the revision it refuses.
    for repo in [pair.fs.path(), pair.sv.path()] {
        hook(repo, "pre-commit", "echo no more >&2; exit 1\n");
    }
    let (fs, sv) = pair.run_with(
        &[
            "load",
            "-q",
            "--use-pre-commit-hook",
            "-r",
            "4:4",
            "-F",
            dump,
            REPO,
        ],
        |r| r,
    );
    assert_eq!(sv.status.code(), Some(1), "{sv}");
    assert_eq!(
        codes(&sv.stderr_text()),
        codes(&fs.stderr_text()),
        "{sv}\n{fs}"
    );
    assert!(sv.stderr_text().contains("no more"), "{sv}");
    assert_eq!(pair.sv.info().youngest, 3);
    pair.sv.verify();
}

#[test]
fn help_lists_every_subcommand_svnadmin_lists() {
    let names = |text: &str| -> Vec<String> {
        text.split("Available subcommands:\n")
            .nth(1)
            .expect("a subcommand list")
            .lines()
            .take_while(|l| l.starts_with("   "))
            .map(|l| l.trim().to_string())
            .collect()
    };
    let fs = Run::tool("svnadmin").arg("help").success();
    let sv = svelto().args(["admin", "help"]).success();
    assert_eq!(names(&sv.stdout_text()), names(&fs.stdout_text()));
    let again = svelto().args(["admin", "--help"]).success();
    assert_eq!(again.stdout_text(), sv.stdout_text());
    let out = svelto()
        .args(["admin", "help", "dump-revprops", "nosuch"])
        .success();
    assert!(out.stdout_text().contains("-F, --file"), "{out}");
    assert!(
        out.stdout_text().contains("\"nosuch\": unknown command."),
        "{out}"
    );
}
