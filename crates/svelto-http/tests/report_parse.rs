//! The `REPORT` bodies' parsers (`svelto_http::parse_report`, the fuzz target `report`):
//! what ra_serf sends parses to its report, malformed requests get mod_dav_svn's refusal,
//! and no truncation or corrupted byte of any of them panics. With `SVELTO_FUZZ_CORPUS`
//! set, the bodies are written to its `report/` directory as the fuzzer's seeds.

use svelto_http::parse_report;

/// Bodies as Subversion 1.14's ra_serf writes them (one per report Svelto serves).
const SEEDS: &[(&str, &str)] = &[
    (
        "update-report",
        r#"<S:update-report xmlns:S="svn:" send-all="true"><S:include-props>yes</S:include-props><S:src-path>http://127.0.0.1:8080/repo/trunk</S:src-path><S:target-revision>5</S:target-revision><S:depth>infinity</S:depth><S:entry rev="3" depth="infinity" start-empty="true"></S:entry><S:entry rev="4" linkpath="/branches/b" lock-token="opaquelocktoken:1">sub</S:entry><S:missing>gone</S:missing></S:update-report>"#,
    ),
    (
        "log-report",
        r#"<S:log-report xmlns:S="svn:"><S:start-revision>5</S:start-revision><S:end-revision>0</S:end-revision><S:limit>10</S:limit><S:discover-changed-paths/><S:revprop>svn:author</S:revprop><S:revprop>svn:date</S:revprop><S:path></S:path><S:path>trunk/a b</S:path></S:log-report>"#,
    ),
    (
        "list-report",
        r#"<S:list-report xmlns:S="svn:"><S:path></S:path><S:revision>4</S:revision><S:depth>immediates</S:depth><S:prop>DAV:resourcetype</S:prop><S:prop>DAV:getcontentlength</S:prop><S:pattern>*.c</S:pattern></S:list-report>"#,
    ),
    (
        "file-revs-report",
        r#"<S:file-revs-report xmlns:S="svn:"><S:start-revision>1</S:start-revision><S:end-revision>5</S:end-revision><S:include-merged-revisions/><S:path>trunk/README</S:path></S:file-revs-report>"#,
    ),
    (
        "get-locations",
        r#"<S:get-locations xmlns:S="svn:"><S:path>trunk</S:path><S:peg-revision>5</S:peg-revision><S:location-revision>1</S:location-revision><S:location-revision>3</S:location-revision></S:get-locations>"#,
    ),
    (
        "get-location-segments",
        r#"<S:get-location-segments xmlns:S="svn:"><S:path>trunk</S:path><S:peg-revision>5</S:peg-revision><S:start-revision>5</S:start-revision><S:end-revision>0</S:end-revision></S:get-location-segments>"#,
    ),
    (
        "mergeinfo-report",
        r#"<S:mergeinfo-report xmlns:S="svn:"><S:revision>5</S:revision><S:inherit>inherited</S:inherit><S:include-descendants>yes</S:include-descendants><S:path>trunk</S:path></S:mergeinfo-report>"#,
    ),
    (
        "get-deleted-rev-report",
        r#"<S:get-deleted-rev-report xmlns:S="svn:"><S:path>trunk/gone</S:path><S:peg-revision>2</S:peg-revision><S:end-revision>5</S:end-revision></S:get-deleted-rev-report>"#,
    ),
    (
        "dated-rev-report",
        r#"<S:dated-rev-report xmlns:S="svn:" xmlns:D="DAV:"><D:creationdate>2026-11-28T12:00:00.000000Z</D:creationdate></S:dated-rev-report>"#,
    ),
    (
        "inherited-props-report",
        r#"<S:inherited-props-report xmlns:S="svn:"><S:revision>5</S:revision><S:path>trunk/a</S:path></S:inherited-props-report>"#,
    ),
    (
        "get-locks-report",
        r#"<S:get-locks-report xmlns:S="svn:" depth="immediates"></S:get-locks-report>"#,
    ),
    (
        "replay-report",
        r#"<S:replay-report xmlns:S="svn:"><S:revision>3</S:revision><S:low-water-mark>0</S:low-water-mark><S:send-deltas>1</S:send-deltas><S:include-path>trunk</S:include-path></S:replay-report>"#,
    ),
];

#[test]
fn every_report_the_client_sends_parses_to_its_name() {
    for (name, body) in SEEDS {
        assert_eq!(parse_report(body.as_bytes()), Ok(*name), "{body}");
    }
    if let Some(dir) = std::env::var_os("SVELTO_FUZZ_CORPUS") {
        let dir = std::path::Path::new(&dir).join("report");
        std::fs::create_dir_all(&dir).expect("corpus directory");
        for (name, body) in SEEDS {
            std::fs::write(dir.join(format!("seed-{name}")), body).expect("seed");
        }
    }
}

/// A parse that must fail, and a word of the message it must give.
fn refused(body: &str, says: &str) {
    match parse_report(body.as_bytes()) {
        Ok(name) => panic!("{body} parsed as {name}"),
        Err(e) => assert!(e.contains(says), "{body}: {e:?} does not say {says:?}"),
    }
}

#[test]
fn malformed_reports_are_refused_with_what_is_wrong() {
    refused(
        r#"<S:log-report xmlns:S="svn:"><S:start-revision>x</S:start-revision></S:log-report>"#,
        "Invalid revision 'x'",
    );
    refused(
        r#"<S:list-report xmlns:S="svn:"><S:revision>1</S:revision></S:list-report>"#,
        "missing the path argument",
    );
    refused(
        r#"<S:list-report xmlns:S="svn:"><S:path>a/../../etc</S:path></S:list-report>"#,
        "Invalid path",
    );
    refused(
        r#"<S:list-report xmlns:S="svn:"><S:path>a</S:path><S:depth>sideways</S:depth></S:list-report>"#,
        "Invalid depth 'sideways'",
    );
    refused(r#"<S:no-such-report xmlns:S="svn:"/>"#, "unknown");
    refused(r#"<D:log-report xmlns:D="DAV:"/>"#, "unknown");
    refused(
        r#"<S:update-report xmlns:S="svn:"><S:entry>x</S:entry></S:update-report>"#,
        "Missing XML attribute: rev",
    );
    refused(
        r#"<S:update-report xmlns:S="svn:"><S:entry rev="-">x</S:entry></S:update-report>"#,
        "Invalid revision '-'",
    );
    refused(
        r#"<S:update-report xmlns:S="svn:"><S:target-revision></S:target-revision></S:update-report>"#,
        "'target-revision' element is malformed",
    );
    refused(
        r#"<S:replay-report xmlns:S="svn:"><S:revision>1</S:revision><S:revision>2</S:revision></S:replay-report>"#,
        "'revision' element is malformed",
    );
    refused(
        r#"<S:get-locations xmlns:S="svn:"><S:path>a</S:path></S:get-locations>"#,
        "no peg revision",
    );
    refused(
        r#"<S:get-deleted-rev-report xmlns:S="svn:"><S:path>a</S:path><S:peg-revision>1</S:peg-revision></S:get-deleted-rev-report>"#,
        "peg and end revisions",
    );
    refused(
        r#"<S:dated-rev-report xmlns:S="svn:" xmlns:D="DAV:"><D:creationdate>yesterday</D:creationdate></S:dated-rev-report>"#,
        "DAV:creationdate",
    );
    refused(r#"<S:log-report xmlns:S="svn:">"#, "");
}

/// Every prefix of every seed, and every seed with one byte replaced by each of a few
/// troublesome ones, parses or is refused: never a panic.
#[test]
fn truncated_and_corrupted_reports_never_panic() {
    let mut refused = 0usize;
    for (_, body) in SEEDS {
        let b = body.as_bytes();
        for end in 0..b.len() {
            refused += usize::from(parse_report(&b[..end]).is_err());
        }
        for i in 0..b.len() {
            for x in [0u8, b'<', b'>', b'&', b'"', b'/', 0xff] {
                let mut m = b.to_vec();
                m[i] = x;
                let _ = parse_report(&m);
            }
        }
    }
    // Every strict prefix is unfinished XML.
    let prefixes: usize = SEEDS.iter().map(|(_, b)| b.len()).sum();
    assert_eq!(refused, prefixes);
}
