//! Bad input: truncated dumps, wrong lengths, checksum mismatches, copies
//! from nowhere, malformed property blocks, invalid revision properties.
//! `svelto admin load` must exit non-zero with an error naming the revision
//! (and the path, where there is one), leave the repository at the last fully
//! loaded revision, pass `verify`, and take the rest of the good dump after.
//!
//! What "last fully loaded" means is what `svnadmin load` does with the same
//! bytes: a revision is committed when the next revision record's headers
//! have been read, or at a clean end of input. So a dump cut between two node
//! records loads (a shorter revision) with svnadmin too; the truncation tests
//! ask svnadmin what happens at each cut and require the same of Svelto.

use svelto_testkit::dumpfile::{
    assert_dumps_eq, describe_difference, head_revision, records, set_header, Record, RecordKind,
};
use svelto_testkit::{scenario_dump, svnadmin_create, Outcome};

use crate::common::{comparable_dumps, names_revision, read, SveltoRepo};

const FIXTURE: &str = "mixed";

fn fixture_bytes() -> Vec<u8> {
    read(&scenario_dump(FIXTURE))
}

fn find<'a>(recs: &'a [Record], rev: u64, path: &str) -> &'a Record {
    recs.iter()
        .find(|r| r.revision == Some(rev) && r.node_path() == Some(path))
        .unwrap_or_else(|| panic!("{FIXTURE}.dump has no node {path} in r{rev}"))
}

fn revision_record(recs: &[Record], rev: u64) -> &Record {
    recs.iter()
        .find(|r| r.kind == RecordKind::Revision(rev))
        .unwrap_or_else(|| panic!("{FIXTURE}.dump has no revision {rev}"))
}

fn flip_first_hex_digit(value: &str) -> String {
    let first = if value.starts_with('0') { '1' } else { '0' };
    format!("{first}{}", &value[1..])
}

fn header_number(record: &Record, name: &str) -> i64 {
    record
        .header(name)
        .unwrap_or_else(|| panic!("{} has no {name}", record.describe()))
        .parse()
        .expect("a numeric header")
}

/// A corrupted copy of the fixture and what the error must name.
struct Case {
    name: &'static str,
    dump: Vec<u8>,
    revision: u64,
    path: Option<String>,
}

fn case(name: &'static str, dump: Vec<u8>, revision: u64, path: Option<&str>) -> Case {
    Case {
        name,
        dump,
        revision,
        path: path.map(str::to_owned),
    }
}

/// Insert a header line before the first header of `record`.
fn insert_header_line(dump: &[u8], record: &Record, line: &str) -> Vec<u8> {
    let mut out = dump[..record.start].to_vec();
    out.extend_from_slice(line.as_bytes());
    out.extend_from_slice(&dump[record.start..]);
    out
}

/// Replace `from` by `to` (same length) inside the content of `record`.
fn edit_content(dump: &[u8], record: &Record, from: &[u8], to: &[u8]) -> Vec<u8> {
    svelto_testkit::dumpfile::replace_in_content(dump, record, from, to)
}

fn corrupted_cases() -> Vec<Case> {
    let good = fixture_bytes();
    let recs = records(&good).expect("the fixture parses");
    let d = &good[..];
    let text = find(&recs, 3, "trunk/src/main.c"); // a change with text
    let added = find(&recs, 2, "trunk/src/main.c"); // an add with props and text
    let props = find(&recs, 2, "trunk/src"); // a directory with a property
    let copy = find(&recs, 8, "tags/v1"); // a directory copy
    let text_copy = find(&recs, 11, "trunk/src/main2.c"); // a file copy with Text-copy-source-*
    let delete = find(&recs, 6, "trunk/data/empty");
    let rev3 = revision_record(&recs, 3);
    let cl = header_number(text, "Content-length");
    let tl = header_number(text, "Text-content-length");
    let md5 = text.header("Text-content-md5").expect("md5");
    let src_md5 = text_copy
        .header("Text-copy-source-md5")
        .expect("copy source md5");
    let main = Some("trunk/src/main.c");

    let both_lengths_plus_3 = {
        let step = set_header(d, text, "Content-length", Some(&(cl + 3).to_string()));
        let recs2 = records(&step).expect("still parses");
        let again = recs2
            .iter()
            .find(|r| r.start == text.start)
            .expect("same record");
        set_header(
            &step,
            again,
            "Text-content-length",
            Some(&(tl + 3).to_string()),
        )
    };
    let wrong_path = |record: &Record, path: &str| set_header(d, record, "Node-path", Some(path));

    vec![
        case(
            "Content-length too long",
            set_header(d, text, "Content-length", Some(&(cl + 7).to_string())),
            3,
            main,
        ),
        case(
            "Content-length too short",
            set_header(d, text, "Content-length", Some(&(cl - 7).to_string())),
            3,
            main,
        ),
        case(
            "Content-length not a number",
            set_header(d, text, "Content-length", Some("12a")),
            3,
            main,
        ),
        case(
            "Text-content-length and Content-length 3 too long",
            both_lengths_plus_3,
            3,
            main,
        ),
        case(
            "Text-content-length 3 too long",
            set_header(d, text, "Text-content-length", Some(&(tl + 3).to_string())),
            3,
            main,
        ),
        case(
            "Text-content-length 3 too short",
            set_header(d, text, "Text-content-length", Some(&(tl - 3).to_string())),
            3,
            main,
        ),
        case(
            "Text-content-md5 mismatch",
            set_header(
                d,
                text,
                "Text-content-md5",
                Some(&flip_first_hex_digit(md5)),
            ),
            3,
            main,
        ),
        case(
            "Text-copy-source-md5 mismatch",
            set_header(
                d,
                text_copy,
                "Text-copy-source-md5",
                Some(&flip_first_hex_digit(src_md5)),
            ),
            11,
            Some("trunk/src/main2.c"),
        ),
        case(
            "copy from a path that does not exist",
            set_header(d, copy, "Node-copyfrom-path", Some("trunk/does-not-exist")),
            8,
            Some("tags/v1"),
        ),
        case(
            "copy from the revision being loaded",
            set_header(d, copy, "Node-copyfrom-rev", Some("8")),
            8,
            Some("tags/v1"),
        ),
        case(
            "copy from a revision that does not exist",
            set_header(d, copy, "Node-copyfrom-rev", Some("999")),
            8,
            Some("tags/v1"),
        ),
        case(
            "property key length wrong",
            edit_content(d, props, b"K 6\ncustom", b"K 7\ncustom"),
            2,
            Some("trunk/src"),
        ),
        case(
            "property value length wrong",
            edit_content(d, props, b"V 5\nvalue", b"V 9\nvalue"),
            2,
            Some("trunk/src"),
        ),
        case(
            "property block without PROPS-END",
            edit_content(d, props, b"PROPS-END", b"PROPS-ENX"),
            2,
            Some("trunk/src"),
        ),
        case(
            "property block with a bad line",
            edit_content(d, props, b"K 6\ncustom", b"X 6\ncustom"),
            2,
            Some("trunk/src"),
        ),
        case(
            "revision properties malformed",
            edit_content(d, rev3, b"K 7\nsvn:log", b"X 7\nsvn:log"),
            3,
            None,
        ),
        case(
            "svn:log not UTF-8",
            edit_content(
                d,
                rev3,
                b"Edit text and binary",
                b"Edit \xff\xfe\xfd\xfc and binary",
            ),
            3,
            None,
        ),
        case(
            "svn:log with a CR",
            edit_content(d, rev3, b"Edit text and binary", b"Edit text\rand binary"),
            3,
            None,
        ),
        case(
            "change of a path that does not exist",
            wrong_path(text, "trunk/src/zzz.c"),
            3,
            Some("trunk/src/zzz.c"),
        ),
        case(
            "delete of a path that does not exist",
            wrong_path(delete, "trunk/data/zzz"),
            6,
            Some("trunk/data/zzz"),
        ),
        case(
            "add of a path that exists",
            wrong_path(added, "trunk/src/lib"),
            2,
            Some("trunk/src/lib"),
        ),
        case(
            "add without Node-kind",
            set_header(d, added, "Node-kind", None),
            2,
            main,
        ),
        case(
            "unknown Node-action",
            set_header(d, text, "Node-action", Some("explode")),
            3,
            main,
        ),
        case(
            "Text-delta on plain text",
            insert_header_line(d, text, "Text-delta: true\n"),
            3,
            None,
        ),
        case(
            "header line without a colon",
            insert_header_line(d, text, "Garbage line\n"),
            3,
            None,
        ),
        case(
            "node path not UTF-8",
            {
                let mut out = d[..added.start].to_vec();
                out.extend_from_slice(b"Node-path: trunk/src/m\xffin.c\n");
                out.extend_from_slice(
                    &d[added
                        .header_line_end(d, "Node-path")
                        .expect("has Node-path")..],
                );
                out
            },
            2,
            None,
        ),
    ]
}

#[test]
fn corrupted_dumps_are_refused_and_leave_the_last_good_revision() {
    let good = fixture_bytes();
    let head = head_revision(&good);
    let mut failures = Vec::new();
    for case in corrupted_cases() {
        // svnadmin must refuse it too, or the case tests nothing.
        let fs = svnadmin_create();
        let f = fs.try_load_bytes(&case.dump, &[]);
        assert!(
            !f.success(),
            "{}: svnadmin load accepted it; fix the case",
            case.name
        );
        let fs_youngest = fs.youngest();
        assert_eq!(
            fs_youngest,
            case.revision - 1,
            "{}: svnadmin stopped elsewhere",
            case.name
        );

        let repo = SveltoRepo::create();
        let s = repo.try_load_bytes(&case.dump, &[]);
        if let Err(problem) =
            check_refusal(&repo, &s, fs_youngest, case.revision, case.path.as_deref())
        {
            failures.push(format!("--- {}: {problem}\n{s}", case.name));
            continue;
        }
        // The rest of the good dump loads on top and gives the whole history.
        repo.load(
            &scenario_dump(FIXTURE),
            &["-r", &format!("{}:{head}", fs_youngest + 1)],
        );
        let back = repo.dump(&[]);
        if back != good {
            failures.push(format!(
                "--- {}: after loading the rest of the good dump, the dump differs from \
                 {FIXTURE}.dump:\n{}",
                case.name,
                describe_difference(&good, &back)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} case(s) failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn sha1_mismatches_are_refused_although_svnadmin_ignores_them() {
    // svnadmin 1.14 does not check Text-content-sha1 or Text-copy-source-sha1;
    // a checksum mismatch is still corruption, and Svelto refuses it.
    let good = fixture_bytes();
    let recs = records(&good).expect("the fixture parses");
    let text = find(&recs, 3, "trunk/src/main.c");
    let text_copy = find(&recs, 11, "trunk/src/main2.c");
    let cases = [
        case(
            "Text-content-sha1 mismatch",
            set_header(
                &good,
                text,
                "Text-content-sha1",
                Some(&flip_first_hex_digit(
                    text.header("Text-content-sha1").expect("sha1"),
                )),
            ),
            3,
            Some("trunk/src/main.c"),
        ),
        case(
            "Text-copy-source-sha1 mismatch",
            set_header(
                &good,
                text_copy,
                "Text-copy-source-sha1",
                Some(&flip_first_hex_digit(
                    text_copy.header("Text-copy-source-sha1").expect("sha1"),
                )),
            ),
            11,
            Some("trunk/src/main2.c"),
        ),
    ];
    for case in cases {
        let repo = SveltoRepo::create();
        let s = repo.try_load_bytes(&case.dump, &[]);
        if let Err(problem) = check_refusal(
            &repo,
            &s,
            case.revision - 1,
            case.revision,
            case.path.as_deref(),
        ) {
            panic!("{}: {problem}\n{s}", case.name);
        }
    }
}

/// The checks on a load that must have failed.
fn check_refusal(
    repo: &SveltoRepo,
    out: &Outcome,
    youngest: u64,
    revision: u64,
    path: Option<&str>,
) -> Result<(), String> {
    if out.success() {
        return Err("svelto admin load succeeded".into());
    }
    let stderr = out.stderr_text();
    if stderr.trim().is_empty() {
        return Err("no error message on stderr".into());
    }
    if !names_revision(&stderr, revision) {
        return Err(format!("the error does not name revision {revision}"));
    }
    if let Some(path) = path {
        if !stderr.contains(path) {
            return Err(format!("the error does not name the path {path:?}"));
        }
    }
    let info = repo.info();
    if info.youngest != youngest {
        return Err(format!(
            "youngest is {}, expected {youngest}",
            info.youngest
        ));
    }
    let verify = crate::common::svelto()
        .args(["admin", "verify"])
        .arg(repo.path())
        .output();
    if !verify.success() {
        return Err(format!("verify fails afterwards:\n{verify}"));
    }
    Ok(())
}

/// Where a cut falls, and what an error about it can name.
struct Cut {
    at: usize,
    label: &'static str,
    record: usize,
}

/// Cut points inside and between the records of the fixture: in the first
/// header line, just after a node's `Node-path` line, with the headers read
/// but no content, in the middle of the content, at the end of the content,
/// and at the end of the record.
///
/// Left out: other cuts at the end of a header line. svnadmin takes a header
/// block cut at a line boundary as complete, so that a dump ending in
/// `Revision-number: 3\n` loads an empty revision 3 without properties; that
/// is not behaviour to require of anyone.
fn cut_points(dump: &[u8], recs: &[Record], pick: impl Fn(usize, &Record) -> bool) -> Vec<Cut> {
    let mut cuts = Vec::new();
    for (i, r) in recs.iter().enumerate() {
        if !pick(i, r) {
            continue;
        }
        let first_line_end = dump[r.start..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(r.headers_end, |p| r.start + p + 1);
        let mut push = |at: usize, label: &'static str| {
            if at < dump.len() && !cuts.iter().any(|c: &Cut| c.at == at) {
                cuts.push(Cut {
                    at,
                    label,
                    record: i,
                });
            }
        };
        push(r.start + 3, "in the first header line");
        if matches!(r.kind, RecordKind::Node { .. }) && first_line_end < r.headers_end - 1 {
            push(first_line_end, "after the Node-path line");
        }
        if r.content_end > r.headers_end {
            push(r.headers_end, "after the headers, before the content");
            push(
                (r.headers_end + r.content_end) / 2,
                "in the middle of the content",
            );
            push(r.content_end, "at the end of the content");
        }
        push(r.end, "at the end of the record");
    }
    cuts
}

fn check_truncations(pick: impl Fn(usize, &Record) -> bool) {
    let good = fixture_bytes();
    let recs = records(&good).expect("the fixture parses");
    let mut failures = Vec::new();
    let cuts = cut_points(&good, &recs, pick);
    assert!(cuts.len() > 20, "too few cut points: {}", cuts.len());
    for cut in &cuts {
        let record = &recs[cut.record];
        let what = format!(
            "cut at byte {} ({}) of {}",
            cut.at,
            cut.label,
            record.describe()
        );
        let truncated = &good[..cut.at];
        let fs = svnadmin_create();
        let f = fs.try_load_bytes(truncated, &[]);
        let fs_youngest = fs.youngest();
        let repo = SveltoRepo::create();
        let s = repo.try_load_bytes(truncated, &[]);

        if f.success() {
            // Nothing is known to be missing: load like svnadmin.
            if !s.success() {
                failures.push(format!(
                    "--- {what}: svnadmin loads it, svelto refused:\n{s}"
                ));
                continue;
            }
            let info = repo.info();
            if info.youngest != fs_youngest {
                failures.push(format!(
                    "--- {what}: youngest {} instead of {fs_youngest}",
                    info.youngest
                ));
                continue;
            }
            match comparable_dumps(&fs, &repo, &[truncated.to_vec()]) {
                Ok((f, s)) if f == s => {}
                Ok((f, s)) => failures.push(format!(
                    "--- {what}: the loaded history differs from svnadmin's:\n{}",
                    describe_difference(&f, &s)
                )),
                Err(problem) => failures.push(format!("--- {what}: {problem}")),
            }
            continue;
        }

        // The revision being read when input ended, and whether the error can
        // know its number and the node's path.
        let in_first_line = cut.label == "in the first header line";
        let revision = match record.kind {
            RecordKind::Revision(_) if in_first_line => None,
            _ => record.revision,
        };
        let path = match &record.kind {
            RecordKind::Node { path, .. } if !in_first_line && !path.is_empty() => {
                Some(path.as_str())
            }
            _ => None,
        };
        // svnadmin commits a revision only once the next revision record's
        // headers are read; Svelto may also commit one whose records were all
        // complete before the cut, but no more.
        let upper = match record.kind {
            RecordKind::Revision(n) => n.saturating_sub(1).max(fs_youngest),
            _ => fs_youngest,
        };
        match check_truncation_refusal(&repo, &s, fs_youngest..=upper, revision, path) {
            Ok(()) => {}
            Err(problem) => failures.push(format!("--- {what}: {problem}\n{s}")),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} truncations failed:\n{}",
        failures.len(),
        cuts.len(),
        failures.join("\n")
    );
}

fn check_truncation_refusal(
    repo: &SveltoRepo,
    out: &Outcome,
    youngest: std::ops::RangeInclusive<u64>,
    revision: Option<u64>,
    path: Option<&str>,
) -> Result<(), String> {
    if out.success() {
        return Err("svelto admin load succeeded although svnadmin load failed".into());
    }
    let stderr = out.stderr_text();
    if stderr.trim().is_empty() {
        return Err("no error message on stderr".into());
    }
    if let Some(rev) = revision {
        if !names_revision(&stderr, rev) {
            return Err(format!("the error does not name revision {rev}"));
        }
    }
    if let Some(path) = path {
        if !stderr.contains(path) {
            return Err(format!("the error does not name the path {path:?}"));
        }
    }
    let info = repo.info();
    if !youngest.contains(&info.youngest) {
        return Err(format!(
            "youngest is {}, expected {youngest:?}",
            info.youngest
        ));
    }
    let verify = crate::common::svelto()
        .args(["admin", "verify"])
        .arg(repo.path())
        .output();
    if !verify.success() {
        return Err(format!("verify fails afterwards:\n{verify}"));
    }
    Ok(())
}

#[test]
fn truncated_in_the_first_revisions() {
    // Every record of r0..r2: format and UUID headers, revision records,
    // node records of files, directories, a symlink, an empty file.
    check_truncations(|_, r| r.revision.is_none_or(|rev| rev <= 2));
}

#[test]
fn truncated_in_later_revisions() {
    // Copies, deletes, replaces, property changes, a move, an empty path.
    check_truncations(|i, r| r.revision.is_some_and(|rev| rev > 2) && i % 2 == 0);
}

#[test]
fn empty_input_and_garbage_are_refused() {
    for (what, bytes) in [
        ("garbage", &b"this is not a dumpfile\n\n"[..]),
        (
            "an unknown format version",
            &b"SVN-fs-dump-format-version: 9\n\n"[..],
        ),
    ] {
        let fs = svnadmin_create();
        assert!(
            !fs.try_load_bytes(bytes, &[]).success(),
            "{what}: svnadmin accepted it"
        );
        let repo = SveltoRepo::create();
        let out = repo.try_load_bytes(bytes, &[]);
        assert!(!out.success(), "{what}: svelto accepted it:\n{out}");
        assert!(!out.stderr.is_empty(), "{what}: no message");
        assert_eq!(repo.info().youngest, 0);
        repo.verify();
    }
}

#[test]
fn a_failed_load_keeps_earlier_loads() {
    // A good history, then a bad dump on top: the good history stays whole.
    let repo = SveltoRepo::create();
    let basic = scenario_dump("basic");
    repo.load(&basic, &[]);
    let before = repo.dump(&[]);
    let good = fixture_bytes();
    let recs = records(&good).expect("the fixture parses");
    let copy = find(&recs, 8, "tags/v1");
    let bad = set_header(&good, copy, "Node-copyfrom-path", Some("nowhere"));
    let out = repo.try_load_bytes(&bad, &["--parent-dir", "trunk"]);
    assert!(!out.success(), "{out}");
    repo.verify();
    let after = repo.dump(&["-r", &format!("0:{}", head_revision(&before))]);
    assert_dumps_eq(&before, &after, "the history before a failed load");
}
