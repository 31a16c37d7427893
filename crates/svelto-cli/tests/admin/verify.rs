//! `svelto admin verify` against `svnadmin verify`: progress on standard output, the
//! options (`-r`, `-t`, `-q`, `--metadata-only`, `--keep-going`, `--check-normalization`,
//! `-M`), the errors, and `--keep-going` over a damaged repository.

use svelto_testkit::dumpfile::mkdir_dump;
use svelto_testkit::scenario_dump;

use crate::common::{svelto, write_file, SveltoRepo};
use crate::pair::{Pair, REPO};

#[test]
fn verify_prints_what_svnadmin_prints() {
    let pair = Pair::with_dump(&scenario_dump("basic"));
    let seen = pair.same(&["verify", REPO]);
    assert!(seen.stdout.contains("* Verified revision 0.\n"), "{seen:?}");
    assert!(seen
        .stdout
        .contains("* Verifying repository metadata ...\n"));
    assert_eq!(seen.stderr, "");
    for args in [
        &["verify", "-q", REPO][..],
        &["verify", REPO, "-r", "1:2"],
        &["verify", REPO, "-r", "2"],
        &["verify", REPO, "-r", "HEAD"],
        &["verify", REPO, "--metadata-only"],
        &["verify", REPO, "--keep-going"],
        &["verify", REPO, "--check-normalization"],
        &["verify", REPO, "-M", "16"],
    ] {
        let seen = pair.same(args);
        assert_eq!(seen.code, Some(0), "{args:?}");
    }
    for args in [
        &["verify", REPO, "-r", "99"][..],
        &["verify", REPO, "-r", "3:1"],
        &["verify", REPO, "-r", "PREV"],
        &["verify", REPO, "-t", "1-1"],
        &["verify", REPO, "-t", "1-1", "-r", "1"],
        &["verify", "/nonexistent/repo"],
    ] {
        let seen = pair.same(args);
        assert_eq!(seen.code, Some(1), "{args:?}");
    }
}

#[test]
fn check_normalization_reports_names_that_collide_as_svnadmin() {
    // "café" twice: precomposed, and e + combining acute accent.
    let dump = mkdir_dump(&["caf\u{e9}", "cafe\u{301}", "plain"]);
    let pair = Pair::new();
    let file = write_file(pair.sv.dir(), "names.dump", &dump);
    pair.fs.load(&file, &[]);
    pair.sv.load(&file, &[]);
    let seen = pair.same(&["verify", REPO, "--check-normalization"]);
    assert!(
        seen.stdout
            .contains("WARNING 0x0003: Duplicate representation of path"),
        "{seen:?}"
    );
    // Without the option, no warning.
    let seen = pair.same(&["verify", REPO]);
    assert!(!seen.stdout.contains("WARNING"), "{seen:?}");
}

#[test]
fn keep_going_lists_every_damaged_revision() {
    let repo = SveltoRepo::create();
    repo.load(&scenario_dump("mixed"), &[]);
    let youngest = repo.info().youngest;
    let data = repo.path().join("db/data");
    let mut bytes = std::fs::read(&data).expect("read db/data");
    let at = bytes.len() / 3;
    bytes[at] ^= 0x5a;
    std::fs::write(&data, &bytes).expect("damage db/data");
    let out = svelto()
        .args(["admin", "verify", "--keep-going"])
        .arg(repo.path())
        .output();
    assert_eq!(out.status.code(), Some(1), "{out}");
    let (stdout, stderr) = (out.stdout_text(), out.stderr_text());
    assert!(stderr.contains("* Error verifying "), "{out}");
    assert!(
        stdout.contains(&format!("* Verified revision {youngest}.\n"))
            || stderr.contains(&format!("* Error verifying revision {youngest}.\n")),
        "verify stopped before the last revision:\n{out}"
    );
    let summary = stdout
        .split("\n-----Summary of corrupt revisions-----\n")
        .nth(1)
        .unwrap_or_else(|| panic!("no summary:\n{out}"));
    let first = summary.lines().next().expect("a summary line");
    assert!(
        first.trim_start().starts_with('r') && first.contains(": E"),
        "{summary}"
    );
    let last = stderr.lines().last().expect("an error line");
    assert!(
        last.starts_with("svnadmin: E205012: Failed to verify repository '"),
        "{out}"
    );
    // Without --keep-going the first damaged revision stops it.
    let out = svelto().args(["admin", "verify"]).arg(repo.path()).output();
    assert_eq!(out.status.code(), Some(1), "{out}");
    assert!(!out.stdout_text().contains("Summary"), "{out}");
}
