//! `svelto admin create`: the layout administrators expect from `svnadmin
//! create`, and a revision 0 with a date.

use std::collections::BTreeSet;
use std::path::Path;

use svelto_testkit::dumpfile::{assert_dumps_eq, mask_revision_date, uuid_of, with_uuid};
use svelto_testkit::svnadmin_create;

use crate::common::{svelto, SveltoRepo};

fn names_in(dir: &Path, filter: impl Fn(&str) -> bool) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot list {dir:?}: {e}"))
        .map(|e| {
            e.expect("readable directory entry")
                .file_name()
                .into_string()
                .expect("UTF-8 file name")
        })
        .filter(|n| filter(n))
        .collect()
}

#[test]
fn create_lays_out_conf_and_hooks_like_svnadmin() {
    let fs = svnadmin_create();
    let sv = SveltoRepo::create();
    for required in ["conf/svnserve.conf", "conf/passwd", "conf/authz"] {
        assert!(
            sv.path().join(required).is_file(),
            "svelto admin create made no {required}"
        );
    }
    assert_eq!(
        names_in(&sv.path().join("conf"), |_| true),
        names_in(&fs.path().join("conf"), |_| true),
        "conf/ should hold the files svnadmin create makes"
    );
    let tmpl = |n: &str| n.ends_with(".tmpl");
    let fs_hooks = names_in(&fs.path().join("hooks"), tmpl);
    assert!(!fs_hooks.is_empty());
    assert_eq!(
        names_in(&sv.path().join("hooks"), tmpl),
        fs_hooks,
        "hooks/*.tmpl should be the templates svnadmin create makes"
    );
}

#[test]
fn create_makes_revision_0_with_a_date_and_a_fresh_uuid() {
    let a = SveltoRepo::create();
    let b = SveltoRepo::create();
    let (ia, ib) = (a.info(), b.info());
    assert_eq!(ia.youngest, 0);
    let is_uuid = |u: &str| {
        let parts: Vec<&str> = u.split('-').collect();
        parts.iter().map(|p| p.len()).collect::<Vec<_>>() == [8, 4, 4, 4, 12]
            && u.chars().all(|c| c == '-' || c.is_ascii_hexdigit())
    };
    assert!(is_uuid(&ia.uuid), "not a UUID: {:?}", ia.uuid);
    assert_ne!(ia.uuid, ib.uuid, "two repositories got the same UUID");
    a.verify();

    // The dump of an empty repository is svnadmin's, up to UUID and date.
    let fs = svnadmin_create();
    let fs_dump = fs.dump(&[]);
    let sv_dump = a.dump(&[]);
    assert_eq!(uuid_of(&sv_dump), Some(ia.uuid.clone()));
    assert_dumps_eq(
        &mask_revision_date(&fs_dump, 0),
        &mask_revision_date(&with_uuid(&sv_dump, &fs.uuid()), 0),
        "dump of a new repository",
    );
    let text = String::from_utf8_lossy(&sv_dump).into_owned();
    let date = text
        .split("K 8\nsvn:date\nV 27\n")
        .nth(1)
        .map(|rest| &rest[..27])
        .unwrap_or_else(|| panic!("revision 0 has no svn:date:\n{text}"));
    let shape_ok = date.len() == 27
        && date.ends_with('Z')
        && date.as_bytes()[10] == b'T'
        && date.as_bytes()[19] == b'.'
        && date.starts_with("20");
    assert!(
        shape_ok,
        "svn:date of revision 0 is {date:?}, not like 2024-01-02T03:04:05.678901Z"
    );
}

#[test]
fn create_refuses_an_existing_repository() {
    let sv = SveltoRepo::create();
    let out = svelto().args(["admin", "create"]).arg(sv.path()).output();
    assert!(
        !out.success(),
        "creating over an existing repository succeeded:\n{out}"
    );
    assert_eq!(sv.info().youngest, 0);
    sv.verify();
}

#[test]
fn info_into_a_closed_pipe_exits_cleanly() {
    let sv = SveltoRepo::create();
    // `svelto admin info REPO | true`, the reader gone before the first write.
    let script = format!(
        "set -o pipefail; (sleep 0.3; exec '{}' admin info '{}') | true",
        env!("CARGO_BIN_EXE_svelto"),
        sv.path().display()
    );
    let out = std::process::Command::new("bash")
        .args(["-c", &script])
        .output()
        .expect("run bash");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && !stderr.contains("panicked"),
        "svelto admin info | head failed: {:?}\n{stderr}",
        out.status
    );
}

/// svnadmin create refuses an existing repository, a directory inside one (an FSFS one
/// too) and a directory that is not empty, with its codes and texts.
#[test]
fn create_refuses_what_svnadmin_refuses() {
    use crate::pair::{Pair, REPO};
    let pair = Pair::new();
    for args in [
        &["create", REPO][..],
        &["create", "{REPO}/sub"],
        &["create", "{REPO}/db/x/y"],
    ] {
        let seen = pair.same(args);
        assert_eq!(seen.code, Some(1), "{args:?}");
        assert!(seen.stderr.starts_with("svnadmin: E165002: '"), "{seen:?}");
    }
    assert!(!pair.sv.path().join("sub").exists());
    // Inside an FSFS repository.
    let out = svelto()
        .args(["admin", "create"])
        .arg(pair.fs.path().join("sub"))
        .failure();
    assert!(
        out.stderr_text()
            .contains("is a subdirectory of an existing repository rooted at"),
        "{out}"
    );
    // A directory that is not empty, named as given.
    let dir = svelto_testkit::tempdir();
    std::fs::create_dir(dir.path().join("nonempty")).expect("mkdir");
    std::fs::write(dir.path().join("nonempty/f"), "x").expect("write");
    let fs = svelto_testkit::Run::tool("svnadmin")
        .args(["create", "nonempty"])
        .current_dir(dir.path())
        .output();
    let sv = svelto()
        .args(["admin", "create", "nonempty"])
        .current_dir(dir.path())
        .output();
    assert_eq!(sv.stderr_text(), fs.stderr_text());
    assert_eq!(sv.status.code(), Some(1));
    assert!(
        sv.stderr_text()
            .contains("E200011: 'nonempty' exists and is non-empty"),
        "{sv}"
    );
}

/// `info` prints svnadmin's lines where they apply: the path as svnadmin prints it, the
/// UUID and the number of revisions are the same as svnadmin's for the same history.
#[test]
fn info_prints_svnadmins_lines() {
    use crate::pair::Pair;
    let pair = Pair::with_dump(&svelto_testkit::scenario_dump("basic"));
    let lines = |out: &svelto_testkit::Outcome, repo: &Path| -> Vec<String> {
        out.stdout_text()
            .replace(&repo.display().to_string(), "{REPO}")
            .lines()
            .take(3)
            .map(str::to_string)
            .collect()
    };
    for suffix in ["", "/", "/."] {
        let fs = svelto_testkit::Run::tool("svnadmin")
            .arg("info")
            .arg(format!("{}{suffix}", pair.fs.path().display()))
            .success();
        let sv = svelto()
            .args(["admin", "info"])
            .arg(format!("{}{suffix}", pair.sv.path().display()))
            .success();
        assert_eq!(lines(&sv, pair.sv.path()), lines(&fs, pair.fs.path()));
        let text = sv.stdout_text();
        assert!(
            text.contains("Repository Capability: mergeinfo\n"),
            "{text}"
        );
        assert!(text.contains("Filesystem Type: svelto\n"), "{text}");
    }
}
