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
