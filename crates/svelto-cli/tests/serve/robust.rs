//! Hostile and broken clients against `svelto serve`, over raw TCP: each
//! breaks at most its own connection. After each, a session opened before
//! it still works, the server still serves a normal `svn ls`, and its memory
//! stays small.

use std::path::Path;
use std::time::Duration;

use svelto_testkit::Pair;

use crate::common::pair;
use crate::raw::{string, Conn, Item};

/// How long a server may take to close a connection it must close.
const CLOSE_WITHIN: Duration = Duration::from_secs(10);

/// What the server's resident memory may reach in these tests.
const MAX_RSS_KIB: u64 = 512 * 1024;

fn url(pair: &Pair) -> String {
    pair.subject_url()
}

/// The server is alive, `idle` (opened earlier) still answers, a normal
/// `svn ls` works, and memory stayed bounded.
fn still_serving(pair: &Pair, idle: &mut Conn, after: &str) {
    let server = pair.subject();
    assert!(
        server.is_running(),
        "the server died after {after}:\n{}",
        server.diagnostics()
    );
    assert_eq!(idle.latest_rev(), 12, "an idle session broke after {after}");
    let out = pair
        .client()
        .svn(&["ls", &format!("{}/trunk", url(pair))], pair.dir());
    assert!(
        out.success() && out.stdout_text() == "README.txt\na/\nsrc/\n",
        "svn ls failed after {after}:\n{out}\n{}",
        server.diagnostics()
    );
    if let Some(rss) = server.rss_kib() {
        assert!(rss < MAX_RSS_KIB, "the server uses {rss} KiB after {after}");
    }
}

/// Send `bytes` at `stage` and require the server to close the connection
/// (it may send a failure first, never a success).
fn expect_closed(conn: &mut Conn, bytes: &[u8], what: &str) {
    conn.send_lossy(bytes);
    match conn.until_closed(CLOSE_WITHIN) {
        Ok(items) => assert!(
            items.iter().all(|i| !i.is_success() || is_slot(i)),
            "{what}: the server answered with success: {items:?}"
        ),
        Err(items) => {
            panic!("{what}: the connection is still open after {CLOSE_WITHIN:?} ({items:?})")
        }
    }
}

/// The empty auth slot `( success ( ( ) 0: ) )` a server sends before it
/// looks at a command's parameters.
fn is_slot(item: &Item) -> bool {
    *item
        == Item::List(vec![
            Item::Word("success".into()),
            Item::List(vec![Item::List(vec![]), Item::String(vec![])]),
        ])
}

#[test]
fn malformed_items_close_only_their_connection() {
    let pair = pair("basic");
    let addr = pair.subject().addr();
    let mut idle = Conn::session(addr, &url(pair));
    let response = |version: &str, caps: &str, url: &str| -> Vec<u8> {
        [
            format!("( {version} ( {caps} ) ").as_bytes(),
            &string(url.as_bytes()),
            b"1:x ( ) ) ",
        ]
        .concat()
    };
    let good_url = url(pair);
    let before_handshake: Vec<(&str, Vec<u8>)> = vec![
        ("a closing parenthesis", b") ".to_vec()),
        ("bytes that start no item", b"\xff\xfe\x00 ".to_vec()),
        ("a tab between items", b"( 2\t( edit-pipeline ) ) ".to_vec()),
        (
            "an item with no terminator",
            b"( 2 ( edit-pipeline ))".to_vec(),
        ),
        (
            "a number that overflows",
            b"( 99999999999999999999999999 ) ".to_vec(),
        ),
        ("a word far too long", [b'a'; 200].to_vec()),
        (
            "lists nested 1000 deep",
            [b"( ".repeat(1000), b") ".repeat(1000)].concat(),
        ),
        (
            "protocol version 1",
            response("1", "edit-pipeline", &good_url),
        ),
        ("no edit-pipeline", response("2", "svndiff1", &good_url)),
        (
            "a URL that is not svn://",
            response("2", "edit-pipeline", "http://127.0.0.1/basic"),
        ),
        (
            "a capability that is a string",
            response("2", "edit-pipeline 3:abc", &good_url),
        ),
    ];
    for (what, bytes) in &before_handshake {
        let (mut conn, _) = Conn::open(addr);
        expect_closed(&mut conn, bytes, what);
        still_serving(pair, &mut idle, what);
    }
    let after_handshake: &[(&str, &[u8])] = &[
        ("a string for a command name", b"( 14:get-latest-rev ( ) ) "),
        ("a command without parameters", b"( get-latest-rev ) "),
        ("parameters of the wrong types", b"( get-dir ( 1 2 3 ) ) "),
        ("a number for a path", b"( stat ( 42 ( ) ) ) "),
        ("a stray closing parenthesis", b") ( get-latest-rev ( ) ) "),
        ("a bare word", b"get-latest-rev "),
    ];
    for (what, bytes) in after_handshake {
        let mut conn = Conn::session(addr, &url(pair));
        expect_closed(&mut conn, bytes, what);
        still_serving(pair, &mut idle, what);
    }
}

#[test]
fn absurd_lengths_are_refused_without_allocating() {
    let pair = pair("basic");
    let addr = pair.subject().addr();
    let mut idle = Conn::session(addr, &url(pair));
    let ten_gb = b"10737418240:";
    let mut before = b"( 2 ( edit-pipeline ) ".to_vec();
    before.extend_from_slice(ten_gb);
    before.extend_from_slice(b"svn://127.0.0.1/basic");
    let (mut conn, _) = Conn::open(addr);
    expect_closed(&mut conn, &before, "a 10 GB URL");
    still_serving(pair, &mut idle, "a 10 GB URL");
    for (what, bytes) in [
        (
            "a 10 GB path",
            [&b"( get-file ( "[..], ten_gb, b"trunk/README.txt"].concat(),
        ),
        (
            "a 2^64-1 byte string",
            b"( stat ( 18446744073709551615:x".to_vec(),
        ),
        (
            "a string length that overflows",
            b"( stat ( 99999999999999999999999:x".to_vec(),
        ),
        (
            "a 100 MB log message",
            [&b"( commit ( 104857600:"[..], &vec![b'x'; 1 << 20]].concat(),
        ),
    ] {
        let mut conn = Conn::session(addr, &url(pair));
        expect_closed(&mut conn, &bytes, what);
        still_serving(pair, &mut idle, what);
    }
}

#[test]
fn unknown_commands_keep_the_connection() {
    let pair = pair("basic");
    let addr = pair.subject().addr();
    let mut conn = Conn::session(addr, &url(pair));
    for cmd in [
        &b"( frobnicate ( ) ) "[..],
        b"( get-latest-rev-please ( 1 2 ( 3 ) ) ) ",
        b"( x ( ) ) ",
    ] {
        conn.send(cmd);
        let answer = conn.item();
        assert!(
            answer.is_failure() && answer.error_codes().contains(&210001),
            "{:?} answered {answer:?}",
            String::from_utf8_lossy(cmd)
        );
        assert_eq!(conn.latest_rev(), 12);
    }
    // Unknown words where the protocol allows extensions are ignored.
    let mut conn2 = {
        let (mut c, _) = Conn::open(addr);
        let url = url(pair);
        let mut msg = b"( 2 ( edit-pipeline svndiff1 some-future-capability ) ".to_vec();
        msg.extend_from_slice(&string(url.as_bytes()));
        msg.extend_from_slice(b"10:raw-client ( ) ) ");
        c.send(&msg);
        let auth = c.item();
        assert!(auth.is_success(), "{auth:?}");
        c.send(b"( ANONYMOUS ( 0: ) ) ");
        assert!(c.item().is_success());
        assert!(c.item().is_success());
        c
    };
    assert_eq!(conn2.latest_rev(), 12);
}

#[test]
fn dotdot_paths_do_not_escape_the_root() {
    let pair = pair("basic");
    let addr = pair.subject().addr();
    let root = pair.subject().root().to_owned();
    let secret = b"THIS-FILE-IS-OUTSIDE-THE-ROOT";
    for dir in [root.parent().expect("root has a parent"), &root] {
        std::fs::write(dir.join("secret.txt"), secret).expect("write the secret");
    }
    let base = pair.subject().base_url().to_owned();
    let mut idle = Conn::session(addr, &url(pair));
    for bad in [
        format!("{base}/../secret.txt"),
        format!("{base}/basic/../../secret.txt"),
        format!("{base}/%2E%2E/secret.txt"),
        format!("{base}/basic/%2e%2e/%2e%2e/b"),
        format!("{base}/basic/../basic"),
    ] {
        let (mut conn, _) = Conn::open(addr);
        conn.send_client_response(&bad);
        let answer = conn.item();
        assert!(answer.is_failure(), "{bad} answered {answer:?}");
        let _ = conn.until_closed(CLOSE_WITHIN);
        assert!(!contains(&conn.received, secret), "{bad} leaked the file");
        still_serving(pair, &mut idle, &bad);
    }
    let commands: Vec<Vec<u8>> = vec![
        [
            &b"( get-file ( "[..],
            &string(b"../../secret.txt"),
            b"( ) true true ) ) ",
        ]
        .concat(),
        [
            &b"( get-file ( "[..],
            &string(b"../secret.txt"),
            b"( ) true true ) ) ",
        ]
        .concat(),
        [
            &b"( get-file ( "[..],
            &string(b"trunk/../../secret.txt"),
            b"( ) true true ) ) ",
        ]
        .concat(),
        [&b"( stat ( "[..], &string(b"../.."), b"( ) ) ) "].concat(),
        [&b"( check-path ( "[..], &string(b".."), b"( ) ) ) "].concat(),
        [
            &b"( get-dir ( "[..],
            &string(b"../.."),
            b"( ) true true ) ) ",
        ]
        .concat(),
        [
            &b"( reparent ( "[..],
            &string(format!("{base}/basic/../secret.txt").as_bytes()),
            b") ) ",
        ]
        .concat(),
        [
            &b"( list ( "[..],
            &string(b".."),
            b"( ) infinity ( kind ) ) ) ",
        ]
        .concat(),
    ];
    for cmd in &commands {
        let what = String::from_utf8_lossy(cmd).into_owned();
        let mut conn = Conn::session(addr, &url(pair));
        conn.send(cmd);
        // Whatever the answer (failure, not found, or closing), the file's
        // contents never come back.
        let _ = conn.until_closed(Duration::from_millis(500));
        assert!(!contains(&conn.received, secret), "{what} leaked the file");
        still_serving(pair, &mut idle, &what);
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[test]
fn clients_vanishing_mid_report_and_mid_drive() {
    let pair = pair("basic");
    let addr = pair.subject().addr();
    let mut idle = Conn::session(addr, &url(pair));
    // 1. Gone after the report started.
    let mut conn = Conn::session(addr, &url(pair));
    conn.send(b"( update ( ( 12 ) 0: true infinity false false ) ) ");
    assert!(conn.item().is_success(), "the update's first slot");
    conn.send(
        b"( set-path ( 0: 1 false ( ) infinity ) ) ( set-path ( 5:trunk 3 false ( ) infinity ) ) ",
    );
    drop(conn);
    still_serving(pair, &mut idle, "a client gone mid-report");
    // 2. Gone in the middle of the editor drive.
    let mut conn = Conn::session(addr, &url(pair));
    conn.send(b"( update ( ( 12 ) 0: true infinity false false ) ) ");
    assert!(conn.item().is_success());
    conn.send(b"( set-path ( 0: 0 true ( ) infinity ) ) ( finish-report ( ) ) ");
    assert!(conn.item().is_success(), "the update's second slot");
    let first = conn.item();
    assert!(
        matches!(&first, Item::List(i) if i.first() == Some(&Item::Word("target-rev".into()))),
        "{first:?}"
    );
    drop(conn);
    still_serving(pair, &mut idle, "a client gone mid-drive");
    // 3. Gone without reading a drive at all, with the socket half-closed.
    let mut conn = Conn::session(addr, &url(pair));
    conn.send(b"( update ( ( 12 ) 0: true infinity false false ) ) ");
    conn.send(b"( set-path ( 0: 0 true ( ) infinity ) ) ( finish-report ( ) ) ");
    drop(conn);
    still_serving(pair, &mut idle, "a client that never read the drive");
    // 4. Gone in the middle of streaming commands.
    for cmd in [
        &b"( log ( ( 0: ) ( 12 ) ( 1 ) true false 0 false revprops ( ) ) ) "[..],
        b"( get-file ( 27:trunk/a/b/all-bytes.bin ( 12 ) true true ) ) ",
        b"( list ( 0: ( 12 ) infinity ( kind size ) ) ) ",
        b"( get-file-revs ( 15:trunk/README.txt ( 1 ) ( 12 ) ) ) ",
    ] {
        let mut conn = Conn::session(addr, &url(pair));
        conn.send(cmd);
        drop(conn);
        still_serving(pair, &mut idle, &String::from_utf8_lossy(cmd));
    }
    // 5. An abandoned half-open connection that never sends its response.
    let (silent, _) = Conn::open(addr);
    still_serving(pair, &mut idle, "a silent connection");
    drop(silent);
}

#[test]
fn a_hundred_concurrent_checkouts() {
    let pair = pair("basic");
    let url = format!("{}/trunk", url(pair));
    let dir = svelto_testkit::tempdir();
    let running: Vec<_> = (0..100)
        .map(|i| {
            pair.client()
                .command("svn", dir.path())
                .args(["checkout", "-q", &url, &format!("wc{i}")])
                .spawn()
        })
        .collect();
    let failures: Vec<String> = running
        .into_iter()
        .map(|r| r.wait())
        .filter(|out| !out.success())
        .map(|out| out.to_string())
        .collect();
    assert!(
        failures.is_empty(),
        "{} of 100 concurrent checkouts failed; the first:\n{}\n{}",
        failures.len(),
        failures[0],
        pair.subject().diagnostics()
    );
    let expected = std::fs::read(dir.path().join("wc0/README.txt")).expect("a checked-out file");
    for i in 1..100 {
        let wc = dir.path().join(format!("wc{i}"));
        assert_eq!(
            std::fs::read(wc.join("README.txt")).expect("a checked-out file"),
            expected,
            "{wc:?}"
        );
        assert!(Path::new(&wc.join("a/b/all-bytes.bin")).is_file(), "{wc:?}");
    }
    let mut idle = Conn::session(pair.subject().addr(), &pair.subject_url());
    still_serving(pair, &mut idle, "100 concurrent checkouts");
}
