//! Damaged repository files: `svelto admin verify` reports them, naming the revision, and
//! neither verify nor dump panics, whatever byte was damaged.

use crate::common::{svelto, SveltoRepo};
use std::fs;
use svelto_testkit::scenario_dump;

/// Offsets spread over a file: every stride-th byte plus the first and last ones.
fn offsets(len: usize, count: usize) -> Vec<usize> {
    let stride = (len / count).max(1);
    let mut v: Vec<usize> = (0..len).step_by(stride).collect();
    v.push(len - 1);
    v
}

#[test]
fn every_damaged_byte_is_reported_without_panics() {
    let repo = SveltoRepo::create();
    repo.load(&scenario_dump("mixed"), &[]);
    let db = repo.path().join("db");
    let mut checked = 0;
    for (file, count) in [("data", 60), ("meta", 25), ("revs", 15), ("current", 5)] {
        let path = db.join(file);
        let original = fs::read(&path).expect("read");
        for off in offsets(original.len(), count) {
            let mut damaged = original.clone();
            damaged[off] ^= 0x5a;
            fs::write(&path, &damaged).expect("write");
            let verify = svelto()
                .args(["admin", "verify", "-q"])
                .arg(repo.path())
                .output();
            let dump = svelto()
                .args(["admin", "dump", "-q"])
                .arg(repo.path())
                .output();
            fs::write(&path, &original).expect("restore");
            let what = format!("byte {off} of db/{file} damaged");
            for out in [&verify, &dump] {
                let err = out.stderr_text();
                assert!(!err.contains("panicked"), "{what}: a panic:\n{out}");
                assert!(
                    out.status.code().is_some(),
                    "{what}: killed by a signal:\n{out}"
                );
            }
            assert!(!verify.success(), "{what}: verify passed");
            let err = verify.stderr_text();
            assert!(
                err.contains("revision") || err.contains("current") || err.contains("format"),
                "{what}: the error names no revision:\n{verify}"
            );
            checked += 1;
        }
    }
    assert!(checked > 100);
    let verify = svelto()
        .args(["admin", "verify", "-q"])
        .arg(repo.path())
        .output();
    assert!(
        verify.success(),
        "the restored repository verifies:\n{verify}"
    );
}

/// An FSFS repository made by the real `svnadmin` is named as such, with the way to move it,
/// by every tool that opens a repository; a format file of another kind is quoted, escaped.
#[test]
fn an_fsfs_repository_is_named_with_the_way_to_move_it() {
    let dir = svelto_testkit::tempdir();
    let fsfs = dir.path().join("fsfs");
    svelto_testkit::Run::tool("svnadmin")
        .arg("create")
        .arg(&fsfs)
        .success();
    for args in [
        &["admin", "verify"][..],
        &["admin", "dump"],
        &["look", "youngest"],
    ] {
        let out = svelto().args(args).arg(&fsfs).output();
        assert!(!out.success(), "{args:?} on FSFS succeeded:\n{out}");
        let err = out.stderr_text();
        assert!(
            err.contains("is a Subversion FSFS repository, not a Svelto one")
                && err.contains("svelto admin load")
                && err.contains(&fsfs.display().to_string()),
            "{args:?}:\n{out}"
        );
    }
    let repo = SveltoRepo::create();
    fs::write(repo.path().join("db/format"), "svelto-store 9\nshiny\n").expect("write format");
    let out = svelto().args(["admin", "verify"]).arg(repo.path()).output();
    assert!(!out.success());
    assert!(
        out.stderr_text()
            .contains("unsupported repository format: svelto-store 9")
            && !out.stderr_text().contains("shiny"),
        "{out}"
    );
}
