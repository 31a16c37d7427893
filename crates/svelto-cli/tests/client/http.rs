//! `svelto checkout`, `export` and `update` over http:// and https://, against the stock
//! client on the same server: Apache with mod_dav_svn and `svelto serve --http-listen`
//! (the testkit's HTTP pair), compared as over svn:// (working files, `svn status -v`,
//! `info -R`, `proplist -R -v`, `diff`, wc.db rows with their dav_cache, pristines).
//! Bad answers from a server (made up here by a small listener) give clear errors.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;

use svelto_testkit::{shared_http_pair, tempdir, Pair, Run};

use crate::{
    binary, compare_checkouts, compare_exports, compare_sparse_updates, compare_stock_commands,
    svelto, svn, tree, writable,
};

fn http_pair(fixture: &str) -> &'static Pair {
    shared_http_pair(fixture, binary())
}

fn http_servers(pair: &Pair) -> [(&'static str, String); 2] {
    [
        ("apache", pair.reference_url()),
        ("svelto serve --http-listen", pair.subject_url()),
    ]
}

#[test]
fn http_checkouts_match_the_stock_clients() {
    for fixture in ["eol-keywords", "symlinks", "names", "mixed"] {
        let pair = http_pair(fixture);
        for (label, base) in http_servers(pair) {
            for args in [&[][..], &["-r", "3"], &["--depth", "immediates"]] {
                let dir = tempdir();
                compare_checkouts(pair, dir.path(), label, &format!("{base}/trunk"), args);
            }
        }
    }
    let pair = http_pair("basic");
    for (label, base) in http_servers(pair) {
        for args in [&[][..], &["--depth", "files"], &["-r", "5"]] {
            let dir = tempdir();
            compare_checkouts(pair, dir.path(), label, &base, args);
        }
    }
}

#[test]
fn http_exports_match_the_stock_clients() {
    for fixture in ["eol-keywords", "symlinks", "mixed"] {
        let pair = http_pair(fixture);
        for (label, base) in http_servers(pair) {
            for args in [&[][..], &["--native-eol", "CRLF"], &["-r", "3"]] {
                compare_exports(pair, label, &format!("{base}/trunk"), args);
            }
        }
    }
}

#[test]
fn http_the_stock_clients_commands_behave_alike_on_sveltos_working_copy() {
    let pair = writable(Pair::http("mixed", binary()));
    for (label, base) in http_servers(&pair) {
        compare_stock_commands(&pair, label, &base);
    }
}

#[test]
fn http_updates_match_the_stock_clients() {
    for fixture in ["basic", "mixed", "eol-keywords", "symlinks", "replace"] {
        let pair = http_pair(fixture);
        for (label, base) in http_servers(pair) {
            compare_sparse_updates(
                pair,
                label,
                &format!("{base}/trunk"),
                "1",
                &["HEAD", "2", "3", "4", "HEAD"],
                &[],
            );
        }
    }
    let props = http_pair("props");
    for (label, base) in http_servers(props) {
        let url = format!("{base}/trunk");
        let steps = ["7", "2", "5", "4", "7", "HEAD", "7", "6"];
        compare_sparse_updates(props, label, &url, "1", &steps, &[]);
    }
    let basic = http_pair("basic");
    for (label, base) in http_servers(basic) {
        let url = format!("{base}/trunk");
        compare_sparse_updates(
            basic,
            label,
            &url,
            "2",
            &["HEAD", "3"],
            &["--depth", "files"],
        );
        compare_sparse_updates(basic, label, &base, "0", &["5", "HEAD", "1"], &[]);
    }
}

#[test]
fn https_checkout_and_update_match_the_stock_clients() {
    let pair = Pair::https("basic", binary(), &|dir: &Path| {
        svelto_testkit::require_tool("openssl");
        let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
        Run::new("openssl")
            .args([
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
            ])
            .arg("-keyout")
            .arg(&key)
            .arg("-out")
            .arg(&cert)
            .args(["-subj", "/CN=svelto-test"])
            .success();
        (cert, key)
    });
    const TRUST: &str = "--trust-server-cert-failures=unknown-ca,cn-mismatch";
    for (label, base) in http_servers(&pair) {
        assert!(base.starts_with("https://"), "{base}");
        let dir = tempdir();
        let url = format!("{base}/trunk");
        // Not told to trust the self-signed certificate: refused, saying why.
        let out = Run::new(binary())
            .args(["checkout", &url, "refused"])
            .current_dir(dir.path())
            .failure();
        assert!(
            out.stderr_text().to_lowercase().contains("certificate"),
            "{label}: {}",
            out.stderr_text()
        );
        let (stock, ours) = (dir.path().join("stock"), dir.path().join("svelto"));
        svn(
            &pair,
            &["checkout", "-q", TRUST, "-r", "2", &url, "stock"],
            dir.path(),
        );
        svelto(
            &["checkout", "-q", TRUST, "-r", "2", &url, "svelto"],
            dir.path(),
        );
        assert_eq!(tree(&stock), tree(&ours), "{label}: https checkout");
        assert_eq!(crate::nodes(&stock), crate::nodes(&ours), "{label}: wc.db");
        let a = svn(&pair, &["update", TRUST], &stock).stdout_text();
        let b = svelto(&["update", TRUST], &ours).stdout_text();
        assert_eq!(
            crate::sorted_lines(&a),
            crate::sorted_lines(&b),
            "{label}: https update"
        );
        assert_eq!(tree(&stock), tree(&ours), "{label}: after the update");
        assert_eq!(crate::nodes(&stock), crate::nodes(&ours), "{label}: wc.db");
    }
}

/// A listener answering each request with the next of `answers` (whole HTTP responses,
/// `{}` standing for nothing), then closing; its URL.
fn fake_server(answers: Vec<Vec<u8>>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
    let port = listener
        .local_addr()
        .unwrap_or_else(|e| panic!("{e}"))
        .port();
    std::thread::spawn(move || {
        let mut answers = answers.into_iter();
        'conns: for conn in listener.incoming() {
            let Ok(conn) = conn else { break };
            let mut reader = BufReader::new(conn.try_clone().unwrap_or_else(|e| panic!("{e}")));
            let mut conn = conn;
            loop {
                // One request: its head, then its body.
                let mut len = 0usize;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        continue 'conns;
                    }
                    if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                        len = v.trim().parse().unwrap_or(0);
                    }
                    if line == "\r\n" {
                        break;
                    }
                }
                let mut body = vec![0; len];
                if reader.read_exact(&mut body).is_err() {
                    continue 'conns;
                }
                let Some(answer) = answers.next() else {
                    break 'conns;
                };
                let _ = conn.write_all(&answer);
                let _ = conn.flush();
                if answer.windows(17).any(|w| w == b"Connection: close") {
                    continue 'conns;
                }
            }
        }
    });
    format!("http://127.0.0.1:{port}/repo")
}

const OPTIONS_OK: &str = "HTTP/1.1 200 OK\r\nSVN-Youngest-Rev: 1\r\n\
    SVN-Repository-UUID: 00000000-0000-0000-0000-000000000001\r\n\
    SVN-Repository-Root: /repo\r\nSVN-Me-Resource: /repo/!svn/me\r\n\
    SVN-Rev-Root-Stub: /repo/!svn/rvr\r\nContent-Length: 0\r\n\r\n";
const PROPFIND_DIR: &str = "HTTP/1.1 207 Multi-Status\r\nContent-Length: 124\r\n\r\n\
    <D:multistatus xmlns:D=\"DAV:\"><D:response><D:propstat><D:prop><D:resourcetype><D:collection/>\
    </D:resourcetype></D:prop></D:propstat></D:response></D:multistatus>";

fn answer(status: &str, body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/xml\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

#[test]
fn bad_http_answers_get_clear_errors() {
    let report_head = "<?xml version=\"1.0\"?><S:update-report xmlns:S=\"svn:\" \
        xmlns:D=\"DAV:\" send-all=\"true\"><S:target-revision rev=\"1\"/><S:open-directory rev=\"1\">";
    let cases: Vec<(Vec<Vec<u8>>, &str)> = vec![
        // Not a Subversion server.
        (
            vec![answer("200 OK", "")],
            "not a Subversion repository served over HTTP v2",
        ),
        // A failure with mod_dav_svn's error body.
        (
            vec![answer(
                "500 Internal Server Error",
                "<D:error xmlns:D=\"DAV:\" xmlns:m=\"http://apache.org/dav/xmlns\">\
                 <m:human-readable errcode=\"160013\">Could not open the repository</m:human-readable></D:error>",
            )],
            "HTTP status 500 in OPTIONS: Could not open the repository",
        ),
        (
            vec![answer("401 Unauthorized", "")],
            "authorization failed",
        ),
        // Malformed XML in the report.
        (
            vec![
                OPTIONS_OK.as_bytes().to_vec(),
                PROPFIND_DIR.as_bytes().to_vec(),
                answer("200 OK", &format!("{report_head}<S:add-file name=\"a\"></S:add-directory>")),
            ],
            "malformed XML",
        ),
        // A report that stops half way.
        (
            vec![
                OPTIONS_OK.as_bytes().to_vec(),
                PROPFIND_DIR.as_bytes().to_vec(),
                answer("200 OK", &format!("{report_head}<S:add-file name=\"a\">")),
            ],
            "ended before </S:update-report>",
        ),
        // A path that climbs out of the working copy.
        (
            vec![
                OPTIONS_OK.as_bytes().to_vec(),
                PROPFIND_DIR.as_bytes().to_vec(),
                answer("200 OK", &format!("{report_head}<S:add-file name=\"..\">")),
            ],
            "the name '..'",
        ),
        // An absurd length: far more than is sent.
        (
            vec![
                OPTIONS_OK.as_bytes().to_vec(),
                PROPFIND_DIR.as_bytes().to_vec(),
                format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999\r\nConnection: close\r\n\r\n{report_head}"
                )
                .into_bytes(),
            ],
            "update-report",
        ),
    ];
    for (answers, want) in cases {
        let url = fake_server(answers);
        let dir = tempdir();
        let out = Run::new(binary())
            .args(["checkout", &url, "wc"])
            .current_dir(dir.path())
            .failure();
        let err = out.stderr_text();
        assert!(err.contains(want), "want {want:?}, got: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}
