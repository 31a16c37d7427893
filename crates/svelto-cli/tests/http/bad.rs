//! Bad requests get a clear HTTP error (and never a panic or unbounded memory): malformed
//! XML, unknown reports, absurd Content-Length, escapes out of the tree, unknown `!svn/`
//! names. The server still answers afterwards.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use crate::pair;

/// Sends one request on a new connection and returns the status and the whole response.
fn request(addr: &str, method: &str, path: &str, headers: &[&str], body: &[u8]) -> (u16, String) {
    let headers: Vec<&[u8]> = headers.iter().map(|h| h.as_bytes()).collect();
    crate::raw_request(addr, method, path, &headers, body)
}

fn svelto_addr() -> (String, String) {
    let pair = pair("basic");
    let url = pair.subject_url();
    // http://127.0.0.1:PORT/svn/basic
    let rest = url.strip_prefix("http://").expect("an http URL");
    let (addr, path) = rest.split_at(rest.find('/').expect("a path"));
    (addr.to_string(), path.to_string())
}

#[test]
fn bad_requests_get_clear_errors() {
    let (addr, repo) = svelto_addr();
    let me = format!("{repo}/!svn/me");
    let report = |body: &[u8]| request(&addr, "REPORT", &me, &["Content-Type: text/xml"], body);

    let (status, text) = report(b"<S:update-report xmlns:S=\"svn:\"><S:src-path>");
    assert_eq!(status, 400, "{text}");
    assert!(text.contains("malformed"), "{text}");

    let (status, text) = report(b"<S:frobnicate-report xmlns:S=\"svn:\"/>");
    assert_eq!(status, 501, "{text}");
    assert!(text.contains("The requested report is unknown"), "{text}");

    let (status, text) = report(b"<x:a xmlns:x=\"urn:other\"/>");
    assert_eq!(status, 501, "{text}");

    let (status, text) = report(b"\xff\xfe<not-utf8/>");
    assert_eq!(status, 400, "{text}");

    let deep = "<a>".repeat(10_000);
    let (status, _) = report(deep.as_bytes());
    assert_eq!(status, 400);

    // An update report without its src-path, or with a revision past HEAD.
    let (status, text) =
        report(b"<S:update-report xmlns:S=\"svn:\"><S:entry rev=\"0\"/></S:update-report>");
    assert_eq!(status, 400, "{text}");
    assert!(text.contains("src-path"), "{text}");
    let body = format!(
        "<S:update-report xmlns:S=\"svn:\"><S:src-path>{repo}</S:src-path><S:target-revision>99</S:target-revision><S:entry rev=\"0\" start-empty=\"true\"/></S:update-report>"
    );
    let (status, text) = report(body.as_bytes());
    assert!(status == 404 || status == 500, "{text}");
    assert!(text.contains("No such revision 99"), "{text}");

    // A body larger than the limit is refused from its Content-Length, before it is read.
    let (status, text) = request(
        &addr,
        "REPORT",
        &me,
        &["Content-Length: 99999999999999"],
        b"",
    );
    assert_eq!(status, 413, "{text}");
    let (status, _) = request(&addr, "REPORT", &me, &["Content-Length: -5"], b"");
    assert_eq!(status, 400);

    // Paths out of the tree, bad escapes, unknown special resources.
    for path in [
        format!("{repo}/../basic/trunk"),
        format!("{repo}/%2e%2e/x"),
        format!("{repo}/trunk/%00"),
        format!("{repo}/%ff"),
    ] {
        let (status, text) = request(&addr, "GET", &path, &[], b"");
        assert_eq!(status, 400, "{path}: {text}");
    }
    for path in [
        format!("{repo}/!svn/nonsense/1"),
        format!("{repo}/!svn/rvr/x/trunk"),
    ] {
        let (status, text) = request(&addr, "GET", &path, &[], b"");
        assert!(status == 404 || status == 400, "{path}: {text}");
    }
    let (status, _) = request(&addr, "GET", "/svn/no-such-repo/", &[], b"");
    assert_eq!(status, 404);
    let (status, _) = request(
        &addr,
        "PROPFIND",
        &format!("{repo}/trunk"),
        &["Depth: infinity"],
        b"",
    );
    assert_eq!(status, 403);
    // A write by an anonymous client: anon-access is read (svnserve's default) and no
    // password file lets anyone log in, so it is refused before anything else.
    let (status, _) = request(&addr, "DELETE", &format!("{repo}/trunk"), &[], b"");
    assert_eq!(status, 403);

    // Still serving.
    let (status, text) = request(&addr, "GET", &format!("{repo}/trunk/"), &[], b"");
    assert_eq!(status, 200, "{text}");
    assert!(
        text.contains("<li><a href=\"README.txt\">README.txt</a></li>"),
        "{text}"
    );
}

/// `anon-access` and `authz-db` from the repository's svnserve.conf apply to anonymous HTTP
/// requests: with no password file nobody can log in, so what anonymous users may not read
/// is a 403 without a challenge (as mod_authz_svn answers without `AuthType`); protected
/// entries are left out of listings, checkouts and logs. (With a password file: auth.rs.)
#[test]
fn anonymous_reads_follow_svnserve_conf_and_authz() {
    let pair =
        svelto_testkit::Pair::http("basic", std::path::Path::new(env!("CARGO_BIN_EXE_svelto")));
    let repo = pair.subject_repo().to_path_buf();
    let url = pair.subject_url();
    let rest = url.strip_prefix("http://").expect("an http URL");
    let (addr, path) = rest.split_at(rest.find('/').expect("a path"));
    let conf = repo.join("conf");
    std::fs::write(conf.join("authz"), "[/]\n* = r\n[basic:/trunk/a]\n* =\n").expect("authz");
    std::fs::write(
        conf.join("svnserve.conf"),
        "[general]\nanon-access = read\nauthz-db = authz\n",
    )
    .expect("svnserve.conf");

    let (status, text) = request(addr, "GET", &format!("{path}/trunk/a/"), &[], b"");
    assert_eq!(status, 403, "{text}");
    assert!(
        !text.to_ascii_lowercase().contains("www-authenticate"),
        "{text}"
    );
    let (status, text) = request(addr, "GET", &format!("{path}/trunk/"), &[], b"");
    assert_eq!(status, 200, "{text}");
    assert!(!text.contains("href=\"a/\""), "{text}");
    assert!(text.contains("README.txt"), "{text}");

    let s = pair.scope("authz");
    let wc = s.path(1).join("wc");
    let client = pair.client();
    let out = client.svn(
        &[
            "checkout",
            &format!("{url}/trunk"),
            wc.to_str().expect("utf-8"),
        ],
        &s.path(1),
    );
    assert!(out.success(), "{}", out.stderr_text());
    assert!(wc.join("README.txt").is_file());
    assert!(
        !wc.join("a").exists(),
        "the protected directory was checked out"
    );
    let ls = client.svn(&["ls", "-R", &format!("{url}/trunk")], &s.path(1));
    assert!(ls.success(), "{}", ls.stderr_text());
    assert!(!ls.stdout_text().contains("a/"), "{}", ls.stdout_text());
    let cat = client.svn(&["ls", &format!("{url}/trunk/a")], &s.path(1));
    assert!(
        !cat.success(),
        "an unreadable directory was listed: {}",
        cat.stdout_text()
    );

    // anon-access = none: nothing at all.
    std::fs::write(
        conf.join("svnserve.conf"),
        "[general]\nanon-access = none\n",
    )
    .expect("conf");
    let (status, text) = request(addr, "OPTIONS", &format!("{path}/trunk"), &[], b"");
    assert_eq!(status, 403, "{text}");
    let info = client.svn(&["info", &url], &s.path(1));
    assert!(
        !info.success(),
        "info succeeded without access: {}",
        info.stdout_text()
    );
}

/// A chunked body larger than `--max-request-size` (16 MiB) is refused with 413 once the
/// limit is reached, and the server's memory stays bounded: 64 MiB sent, its peak RSS grows
/// by less than 48 MiB.
#[test]
fn oversized_chunked_bodies_are_refused_in_bounded_memory() {
    let (addr, repo) = svelto_addr();
    let pair = pair("basic");
    let before = pair.subject().peak_rss_kib().expect("the server's VmHWM");
    let mut stream = TcpStream::connect(&addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .expect("read timeout");
    let head = format!(
        "REPORT {repo}/!svn/me HTTP/1.1\r\nHost: {addr}\r\nTransfer-Encoding: chunked\r\nContent-Type: text/xml\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).expect("head");
    let chunk = vec![b'<'; 1 << 20];
    for _ in 0..64 {
        let framed = [format!("{:x}\r\n", chunk.len()).as_bytes(), &chunk, b"\r\n"].concat();
        if stream.write_all(&framed).is_err() {
            break; // The server answered and closed: that is the point.
        }
    }
    let _ = stream.write_all(b"0\r\n\r\n");
    let mut out = Vec::new();
    let _ = stream.read_to_end(&mut out);
    let text = String::from_utf8_lossy(&out);
    assert!(text.starts_with("HTTP/1.1 413"), "{text}");
    let after = pair.subject().peak_rss_kib().expect("the server's VmHWM");
    assert!(
        after.saturating_sub(before) < 48 * 1024,
        "peak RSS grew from {before} to {after} KiB"
    );
}

/// `--http-listen` makes no sense when the one connection is standard input and output:
/// refused with a clear error, not ignored.
#[test]
fn http_listen_is_refused_in_inetd_and_tunnel_modes() {
    let root = tempfile::tempdir().expect("temporary directory");
    for mode in ["-i", "-t"] {
        let out = svelto_testkit::Run::new(std::path::Path::new(env!("CARGO_BIN_EXE_svelto")))
            .arg("serve")
            .arg(mode)
            .arg("-r")
            .arg(root.path())
            .arg("--http-listen")
            .arg("127.0.0.1:0")
            .failure();
        assert!(
            out.stderr_text()
                .contains("Option --http-listen is only valid with -d or -X"),
            "{mode}: {}",
            out.stderr_text()
        );
    }
}

/// `--max-connections` bounds HTTP connections too, as svn:// ones: past it a connection
/// gets 503, and once one closes the next is served.
#[test]
fn connections_past_max_connections_get_503() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let root = dir.path().join("root");
    std::fs::create_dir(&root).expect("root");
    let bin = std::path::Path::new(env!("CARGO_BIN_EXE_svelto"));
    svelto_testkit::Run::new(bin)
        .args(["admin", "create"])
        .arg(root.join("repo"))
        .success();
    let server = svelto_testkit::Svelto::start_http(
        bin,
        &root,
        &dir.path().join("serve.log"),
        "/svn",
        &["--max-connections", "1"],
    );
    let addr = format!("127.0.0.1:{}", server.port());
    // Served once the harness's readiness probe (a connection opened and closed at once) is
    // counted out: the server sees that close on the probe's own thread, which may run
    // after it accepted this request's connection.
    get_until(&addr, 200);
    let held = TcpStream::connect(&addr).expect("connect");
    // The one slot is held (once the previous request's connection is counted out).
    let text = get_until(&addr, 503);
    assert!(text.contains("Server busy"), "{text}");
    drop(held);
    get_until(&addr, 200);
    let log = std::fs::read_to_string(dir.path().join("serve.log")).expect("the server's log");
    assert!(
        log.contains("refused, 1 HTTP connections already served (--max-connections)"),
        "{log}"
    );
}

/// A `GET` of the repository's root, on a new connection each time, until it answers
/// `status` (within 60 s: a loaded machine); the response.
fn get_until(addr: &str, status: u16) -> String {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let (got, text) = request(addr, "GET", "/svn/repo/", &[], b"");
        if got == status {
            return text;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "wanted {status}, got {got}: {text}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}
