//! `svelto admin dump-revprops` and `load-revprops` against svnadmin 1.14's: the dumps
//! written, the properties loaded (replaced whole, node records ignored), progress lines,
//! ranges and errors.

use svelto_testkit::scenario_dump;

use crate::common::write_file;
use crate::pair::{Pair, REPO};

/// A revision-properties dump: revision records only, with `props` for revision 1 and 2.
fn revprops_dump(r1: &str, r2: &str) -> Vec<u8> {
    let mut out = b"SVN-fs-dump-format-version: 2\n\n".to_vec();
    for (rev, props) in [(1, r1), (2, r2)] {
        let block = format!("{props}PROPS-END\n");
        out.extend_from_slice(
            format!(
                "Revision-number: {rev}\nProp-content-length: {len}\nContent-length: {len}\n\n{block}\n",
                len = block.len()
            )
            .as_bytes(),
        );
    }
    out
}

fn prop(name: &str, value: &str) -> String {
    format!("K {}\n{name}\nV {}\n{value}\n", name.len(), value.len())
}

#[test]
fn dump_revprops_writes_what_svnadmin_writes() {
    let pair = Pair::with_dump(&scenario_dump("revprops"));
    let seen = pair.same(&["dump-revprops", REPO]);
    assert!(seen
        .stdout
        .starts_with("SVN-fs-dump-format-version: 2\n\nUUID: "));
    assert!(seen
        .stderr
        .starts_with("* Dumped revision 0.\n* Dumped revision 1.\n"));
    assert!(!seen.stdout.contains("Node-path"), "{}", seen.stdout);
    pair.same(&["dump-revprops", REPO, "-r", "1:2"]);
    pair.same(&["dump-revprops", REPO, "-r", "HEAD", "-q"]);
    pair.same(&["dump-revprops", REPO, "-r", "1"]);
    // -F: the same file from both.
    let (fs_file, sv_file) = (pair.fs.path().join("out"), pair.sv.path().join("out"));
    let (fs, sv) = pair.run_with(&["dump-revprops", REPO, "-q", "-F", "{REPO}/out"], |r| r);
    assert!(fs.success() && sv.success(), "{fs}\n{sv}");
    assert_eq!(
        std::fs::read(&sv_file).expect("svelto's file"),
        std::fs::read(&fs_file).expect("svnadmin's file")
    );
    for args in [
        &["dump-revprops", REPO, "-r", "99"][..],
        &["dump-revprops", REPO, "-r", "2:1"],
        &["dump-revprops", REPO, "-r", "PREV"],
        &["dump-revprops", REPO, "-r", "x"],
        &["dump-revprops", REPO, "--incremental"],
        &["dump-revprops", "/nonexistent/repo"],
    ] {
        let seen = pair.same(args);
        assert_eq!(seen.code, Some(1), "{args:?}");
    }
}

#[test]
fn load_revprops_replaces_the_properties_as_svnadmin() {
    let pair = Pair::with_dump(&scenario_dump("basic"));
    let dir = pair.sv.dir().to_path_buf();
    // Revision 1 gets new properties and loses its date; revision 2 keeps only a log.
    let dump = revprops_dump(
        &(prop("custom", "value") + &prop("svn:author", "someone") + &prop("svn:log", "new\n")),
        &prop("svn:log", "only a log"),
    );
    let file = write_file(&dir, "revprops.dump", &dump);
    let file = file.to_str().expect("utf-8 path");
    let seen = pair.same(&["load-revprops", REPO, "-F", file]);
    assert_eq!(
        seen.stdout,
        "Properties set on revision 1.\nProperties set on revision 2.\n"
    );
    pair.same(&["dump-revprops", REPO, "-q"]);
    // A whole dump (node records ignored) puts the original properties back, within -r.
    let basic = scenario_dump("basic");
    let basic = basic.to_str().expect("utf-8 path");
    let seen = pair.same(&["load-revprops", REPO, "-r", "2:2", "-F", basic]);
    assert!(
        seen.stdout.contains("<<< Skipped original revision 1\n"),
        "{seen:?}"
    );
    assert!(
        seen.stdout.contains("Properties set on revision 2.\n"),
        "{seen:?}"
    );
    pair.same(&["dump-revprops", REPO, "-q"]);
    pair.same_with(&["load-revprops", REPO, "-q"], |r| {
        r.stdin_bytes(std::fs::read(basic).expect("basic dump"))
    });
    let seen = pair.same(&["dump-revprops", REPO, "-q"]);
    // The properties of the first load are gone.
    assert!(!seen.stdout.contains("custom"), "{}", seen.stdout);
    assert!(!seen.stdout.contains("only a log"), "{}", seen.stdout);
    pair.sv.verify();
}

#[test]
fn load_revprops_checks_values_and_revisions_as_svnadmin() {
    let pair = Pair::with_dump(&scenario_dump("basic"));
    let dir = pair.sv.dir().to_path_buf();
    let crlf = revprops_dump(&prop("svn:log", "a\r\nb\rc\n"), &prop("svn:log", "fine"));
    let crlf = write_file(&dir, "crlf.dump", &crlf);
    let crlf = crlf.to_str().expect("utf-8 path");
    let seen = pair.same(&["load-revprops", REPO, "-F", crlf]);
    assert_eq!(
        seen.stderr,
        "svnadmin: E125005: A property with invalid line ending found in dumpstream; \
         consider using --normalize-props while loading.\n\
         svnadmin: E125005: Invalid property value\n\
         svnadmin: E125017: Cannot accept non-LF line endings in 'svn:log' property\n"
    );
    pair.same(&["load-revprops", REPO, "--normalize-props", "-F", crlf]);
    pair.same(&["dump-revprops", REPO, "-q", "-r", "1:2"]);
    pair.same(&[
        "load-revprops",
        REPO,
        "--bypass-prop-validation",
        "-F",
        crlf,
    ]);
    pair.same(&["dump-revprops", REPO, "-q", "-r", "1:2"]);
    let bad_date = revprops_dump(&prop("svn:date", "yesterday"), "");
    let bad_date = write_file(&dir, "date.dump", &bad_date);
    let seen = pair.same(&[
        "load-revprops",
        REPO,
        "-F",
        bad_date.to_str().expect("utf-8"),
    ]);
    assert!(seen.stderr.contains("E125005"), "{seen:?}");
    // A revision the repository does not have.
    let missing = b"SVN-fs-dump-format-version: 2\n\nRevision-number: 99\n\
                    Prop-content-length: 10\nContent-length: 10\n\nPROPS-END\n\n";
    let missing = write_file(&dir, "missing.dump", missing);
    let seen = pair.same(&[
        "load-revprops",
        REPO,
        "-F",
        missing.to_str().expect("utf-8"),
    ]);
    assert_eq!(seen.stderr, "svnadmin: E160006: No such revision 99\n");
    for args in [
        &["load-revprops", REPO, "-r", "HEAD", "-F", crlf][..],
        &["load-revprops", REPO, "-r", "3:1", "-F", crlf],
        &["load-revprops", REPO, "-F", "/nonexistent/file"],
        &["load-revprops", REPO, "--ignore-uuid", "-F", crlf],
        &["load-revprops", "/nonexistent/repo", "-F", crlf],
    ] {
        let seen = pair.same(args);
        assert_eq!(seen.code, Some(1), "{args:?}");
    }
    // Accepted options.
    pair.same(&[
        "load-revprops",
        REPO,
        "-q",
        "--force-uuid",
        "--no-flush-to-disk",
        "-F",
        crlf,
        "--normalize-props",
    ]);
    pair.sv.verify();
}
