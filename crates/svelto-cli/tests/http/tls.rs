//! `https://`: Svelto with `--http-tls-cert`/`--http-tls-key` against Apache with mod_ssl,
//! both with the same self-signed certificate made here with openssl; the stock client,
//! told to trust it (`--trust-server-cert-failures=unknown-ca,cn-mismatch`), prints the
//! same and checks out the same working copies. The certificate is read again on SIGHUP;
//! a broken one then keeps the old, and a broken one at start stops the server.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use svelto_testkit::{Pair, Run};

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_svelto"))
}

const TRUST: &str = "--trust-server-cert-failures=unknown-ca,cn-mismatch";

fn make_cert(dir: &Path, cn: &str) -> (PathBuf, PathBuf) {
    crate::self_signed(dir, cn)
}

/// The subject of the certificate a server at `port` presents, as openssl prints it.
fn served_subject(port: u16) -> String {
    let out = Run::new("sh")
        .arg("-c")
        .arg(format!(
            "openssl s_client -connect 127.0.0.1:{port} </dev/null 2>/dev/null | openssl x509 -noout -subject"
        ))
        .output();
    out.stdout_text().trim().to_string()
}

#[test]
fn https_with_a_self_signed_certificate_matches_apache() {
    let pair = Pair::https("basic", &bin(), &|dir| make_cert(dir, "svelto-test"));
    assert!(pair.subject_url().starts_with("https://"));
    for args in [
        &["ls", TRUST, "-R", "-v", "{URL}"][..],
        &["log", TRUST, "-v", "{URL}"],
        &["info", TRUST, "{URL}/trunk/README.txt"],
        &["cat", TRUST, "{URL}/trunk/README.txt"],
        &["diff", TRUST, "-r", "1:HEAD", "{URL}/trunk"],
        &["blame", TRUST, "{URL}/trunk/README.txt"],
    ] {
        pair.both(args);
    }
    let s = pair.scope("https");
    s.both(&["checkout", TRUST, "-r", "1", "{URL}/trunk", "wc"]);
    s.compare_wc("wc");
    s.both(&["update", TRUST, "wc"]);
    s.compare_wc("wc");
    s.both(&["status", TRUST, "-u", "wc"]);
    s.both(&["export", TRUST, "-q", "{URL}", "exported"]);
    s.compare_tree("exported");
    // Without being told to trust it, the client refuses the certificate on both.
    pair.both_fails(&["ls", "{URL}"]).expect_stderr("E230001");
}

/// SIGHUP reads the certificate again: new connections get the new one. A broken key then
/// keeps the old certificate (and the log says why); a broken one at start is an error.
#[test]
fn the_certificate_is_reloaded_on_sighup() {
    let pair = Pair::https("basic", &bin(), &|dir| make_cert(dir, "first"));
    let server = pair.subject();
    let port = server.port();
    assert_eq!(served_subject(port), "subject=CN = first");
    let dir = pair.dir().to_path_buf();
    make_cert(&dir, "second");
    let hup = |expect: &str| {
        Run::new("kill")
            .args(["-HUP", &server.pid().to_string()])
            .success();
        let log = dir.join("b/serve.log");
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            if text.matches("SIGHUP").count() > 0
                && text.lines().last().is_some_and(|l| l.contains(expect))
            {
                return text;
            }
            assert!(
                Instant::now() < deadline,
                "no '{expect}' after SIGHUP:\n{text}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    hup("TLS certificate reloaded");
    assert_eq!(served_subject(port), "subject=CN = second");
    let client = pair.client();
    let ls = client.svn(&["ls", TRUST, &pair.subject_url()], pair.dir());
    assert!(ls.success(), "{}", ls.stderr_text());

    std::fs::write(dir.join("key.pem"), "not a key\n").expect("write key");
    let log = hup("TLS certificate kept");
    assert!(log.contains("holds no PEM private key"), "{log}");
    assert_eq!(served_subject(port), "subject=CN = second");

    // At start: refused with the reason.
    let out = Run::new(bin())
        .args(["serve", "-X", "-r"])
        .arg(dir.join("b/repos"))
        .args(["--listen-port", "0", "--http-listen", "127.0.0.1:0"])
        .arg("--http-tls-cert")
        .arg(dir.join("cert.pem"))
        .arg("--http-tls-key")
        .arg(dir.join("key.pem"))
        .output();
    assert!(!out.success());
    assert!(
        out.stderr_text().contains("holds no PEM private key"),
        "{}",
        out.stderr_text()
    );
}
