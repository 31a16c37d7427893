//! HTTP transactions forwarded between front ends that serve only `https://`
//! (docs/cluster.md, "HTTP transactions"): three front ends with one certificate made here
//! with openssl (SAN `IP:127.0.0.1`, as each advertises `https://127.0.0.1:PORT`), Debian's
//! nginx terminating TLS and re-encrypting to them (`proxy_pass https://`, round robin,
//! kept-alive upstream connections), the stock `svn` and `svnmucc` committing through it.
//! Then a front end restarted with a certificate its peers do not trust: a request of its
//! transaction through another front end gets the clear error, and nothing is published;
//! once the other front end's `http-forward-ca` names that certificate (and `http-forward-name`
//! the name in it), the same transaction commits through it.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use svelto_testkit::nginx::Nginx;
use svelto_testkit::{Run, Svelto};

use super::balancer::{header, merge_body, upstream_of};
use super::{svelto_bin, svnmucc, Rig, IDS};

/// What the stock client is told to accept: the test's self-signed certificate.
const TRUST: &str = "--trust-server-cert-failures=unknown-ca,cn-mismatch";

/// A self-signed certificate (not a CA: rustls refuses a CA certificate as a server's) for
/// `san` (`IP:127.0.0.1,DNS:localhost`), `DIR/cert.pem` and `DIR/key.pem`.
fn certificate(dir: &Path, cn: &str, san: &str) -> (PathBuf, PathBuf) {
    svelto_testkit::require_tool("openssl");
    std::fs::create_dir_all(dir).expect("cert dir");
    let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    Run::new("openssl")
        .args(["req", "-x509", "-newkey", "ec", "-pkeyopt"])
        .args(["ec_paramgen_curve:prime256v1", "-nodes", "-days", "2"])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .arg("-subj")
        .arg(format!("/CN={cn}"))
        .arg("-addext")
        .arg(format!("subjectAltName={san}"))
        .args(["-addext", "basicConstraints=critical,CA:FALSE"])
        .success();
    (cert, key)
}

/// Starts front end `i` serving only https:// with `cert` and `key`.
fn serve_https(rig: &Rig, i: usize, cert: &Path, key: &Path) -> Svelto {
    let log = rig.dir.path().join(format!("serve-{}.log", IDS[i]));
    let s = Svelto::start_http(
        &svelto_bin(),
        &rig.roots[i],
        &log,
        "",
        &[
            "--cluster",
            rig.files[i].to_str().expect("a UTF-8 path"),
            "--http-tls-cert",
            cert.to_str().expect("a UTF-8 path"),
            "--http-tls-key",
            key.to_str().expect("a UTF-8 path"),
        ],
    );
    assert!(s.base_url().starts_with("https://"), "{}", s.base_url());
    s
}

/// Stops a front end with SIGTERM (it resigns its writer lease, leaves the registry).
fn stop(server: Svelto) {
    let pid = server.pid();
    Run::new("kill").args(["-TERM", &pid.to_string()]).success();
    let deadline = Instant::now() + Duration::from_secs(40);
    while server.is_running() {
        assert!(Instant::now() < deadline, "front end {pid} did not stop");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// nginx serving https:// with `cert` in front of `servers`, to which it speaks https://
/// (one upstream, round robin, kept-alive connections).
fn balancer(rig: &Rig, servers: &[Svelto], cert: &Path, key: &Path) -> Nginx {
    let dir = rig.dir.path().join("nginx");
    std::fs::create_dir_all(&dir).expect("nginx dir");
    Nginx::start_with_http(
        &dir,
        &upstream_of(servers),
        &format!(
            "    listen 127.0.0.1:{{PORT}} ssl;\n    ssl_certificate {};\n    \
             ssl_certificate_key {};\n    client_max_body_size 0;\n    location / {{\n      \
             proxy_pass https://svelto;\n      proxy_http_version 1.1;\n      \
             proxy_set_header Connection \"\";\n      proxy_set_header Host $http_host;\n      \
             proxy_ssl_session_reuse on;\n      proxy_request_buffering off;\n      \
             proxy_buffering off;\n    }}",
            cert.display(),
            key.display()
        ),
    )
}

fn svn(args: &[&str]) -> String {
    Run::tool("svn")
        .args(args)
        .args(["--non-interactive", "--no-auth-cache", TRUST])
        .success()
        .stdout_text()
}

/// One request with curl over https:// (any certificate accepted): status and the whole
/// answer, headers first.
fn curl(dir: &Path, url: &str, method: &str, headers: &[&str], body: &[u8]) -> (u16, String) {
    let file = dir.join("curl-body");
    std::fs::write(&file, body).expect("body");
    let mut run = Run::tool("curl")
        .args(["-sS", "-k", "-i", "--max-time", "30", "-X", method])
        .arg("--data-binary")
        .arg(format!("@{}", file.display()))
        .args(["-H", "User-Agent: SVN/1.14.2 (curl test)"]);
    for h in headers {
        run = run.args(["-H", h]);
    }
    let out = run.arg(url).output();
    let text = out.stdout_text();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            panic!(
                "no status from {method} {url}: {text:?} {}",
                out.stderr_text()
            )
        });
    (status, text)
}

fn log_of(rig: &Rig, i: usize) -> String {
    std::fs::read_to_string(rig.dir.path().join(format!("serve-{}.log", IDS[i])))
        .unwrap_or_default()
}

#[test]
fn https_front_ends_forward_over_tls_behind_a_re_encrypting_balancer() {
    let rig = Rig::prepare(3, &[]);
    let dir = rig.dir.path().to_path_buf();
    let (cert, key) = certificate(
        &dir.join("tls"),
        "svelto-cluster",
        "IP:127.0.0.1,DNS:localhost",
    );
    let mut servers: Vec<Svelto> = (0..3).map(|i| serve_https(&rig, i, &cert, &key)).collect();
    let nginx = balancer(&rig, &servers, &cert, &key);
    let url = format!("https://127.0.0.1:{}/proj", nginx.port());
    let ports: Vec<u16> = servers.iter().map(|s| s.port()).collect();
    let direct = |i: usize| format!("https://127.0.0.1:{}/proj", ports[i]);

    // The member entries say https.
    let members = Run::new(svelto_bin())
        .args(["admin", "members", "--cluster"])
        .arg(&rig.files[0])
        .success()
        .stdout_text();
    for p in &ports {
        assert!(
            members.contains(&format!("https://127.0.0.1:{p}")),
            "{members}"
        );
    }

    // The stock client's commits through nginx; each checked through every front end.
    let wc = dir.join("wc");
    let wcs = wc.to_str().expect("a UTF-8 path");
    svn(&["checkout", &url, wcs]);
    let mut expected: Vec<(String, String)> = Vec::new();
    for n in 1..=4u32 {
        let name = format!("file{n}.txt");
        let text = format!("commit {n} through nginx over https\n");
        std::fs::write(wc.join(&name), &text).expect("file");
        svn(&["add", "-q", &format!("{wcs}/{name}")]);
        if n > 1 {
            // A change to an earlier file too: a PUT of a delta.
            let (old, _) = &expected[0];
            let changed = format!("changed by commit {n}\n");
            std::fs::write(wc.join(old), &changed).expect("change");
            expected[0].1 = changed;
        }
        let out = svn(&["commit", "-m", &format!("commit {n}"), wcs]);
        assert!(out.contains(&format!("Committed revision {n}.")), "{out}");
        expected.push((name, text));
        for (i, id) in IDS.iter().enumerate() {
            let youngest = svn(&["info", "--show-item", "revision", &direct(i)]);
            assert_eq!(youngest.trim(), n.to_string(), "front end {id}");
            for (name, text) in &expected {
                assert_eq!(
                    &svn(&["cat", &format!("{}/{name}", direct(i))]),
                    text,
                    "{name} through front end {id}"
                );
            }
        }
    }
    let out = svnmucc(
        "svnmucc over https",
        &[
            TRUST, "-U", &url, "mkdir", "dir", "propset", "color", "red", "dir",
        ],
    );
    assert!(out.success(), "{}", out.stderr_text());
    assert!(
        out.stdout_text().contains("r5 committed"),
        "{}",
        out.stdout_text()
    );
    for i in 0..3 {
        assert_eq!(
            svn(&["propget", "color", &format!("{}/dir", direct(i))]),
            "red\n"
        );
    }
    // Requests were forwarded, over https.
    let forwarded: Vec<String> = (0..3)
        .flat_map(|i| {
            log_of(&rig, i)
                .lines()
                .filter(|l| l.contains(": forwarded to "))
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(
        !forwarded.is_empty(),
        "no request was forwarded: nginx sent everything to one front end?"
    );
    for line in &forwarded {
        assert!(line.contains(": forwarded to https://127.0.0.1:"), "{line}");
    }
    eprintln!(
        "{} requests forwarded; e.g. {}",
        forwarded.len(),
        forwarded[0]
    );
    let not_forwarded = (0..3).map(|i| log_of(&rig, i)).collect::<String>();
    assert!(!not_forwarded.contains("not forwarded"), "{not_forwarded}");

    // Front end C restarted with a certificate of its own, which A does not trust: a
    // request of C's transaction through A gets the clear error, and nothing is published.
    let c = servers.pop().expect("c");
    stop(c);
    let (rogue, rogue_key) = certificate(&dir.join("tls-c"), "front-end-c", "DNS:svn.example.test");
    servers.push(serve_https(&rig, 2, &rogue, &rogue_key));
    let c_url = format!("https://127.0.0.1:{}", servers[2].port());
    // A may hold C's old address (on another port) for its 10 s.
    std::thread::sleep(Duration::from_secs(11));
    let open_txn = || {
        let (status, answer) = curl(
            &dir,
            &format!("{c_url}/proj/!svn/me"),
            "POST",
            &["Content-Type: application/vnd.svn-skel"],
            b"( create-txn )",
        );
        assert_eq!(status, 201, "{answer}");
        let txn = header(&answer, "SVN-Txn-Name")
            .unwrap_or_else(|| panic!("no SVN-Txn-Name: {answer}"))
            .to_owned();
        assert!(txn.ends_with("_c"), "{txn}");
        let (status, answer) = curl(
            &dir,
            &format!("{c_url}/proj/!svn/txr/{txn}/from-c"),
            "MKCOL",
            &[],
            b"",
        );
        assert_eq!(status, 201, "{answer}");
        txn
    };
    let txn = open_txn();
    let a_url = format!("https://127.0.0.1:{}", ports[0]);
    let (status, answer) = curl(
        &dir,
        &format!("{a_url}/proj"),
        "MERGE",
        &["Content-Type: text/xml"],
        merge_body(&txn).as_bytes(),
    );
    assert_eq!(status, 404, "{answer}");
    assert!(
        answer.contains(&format!(
            "No such transaction '{txn}': front end 'c', which holds it, cannot be reached (https://127.0.0.1:{}",
            servers[2].port()
        )) && answer.contains("invalid peer certificate")
            && answer.contains("http-forward-ca"),
        "{answer}"
    );
    let a_log = log_of(&rig, 0);
    assert!(
        a_log.lines().any(|l| l.contains(&format!(
            "transaction '{txn}' is front end 'c''s, not forwarded: https://127.0.0.1:"
        )) && l.contains("invalid peer certificate")),
        "{a_log}"
    );
    for i in 0..3 {
        let base = format!("https://127.0.0.1:{}/proj", servers[i].port());
        let youngest = svn(&["info", "--show-item", "revision", &base]);
        assert_eq!(youngest.trim(), "5", "front end {}", IDS[i]);
    }

    // A with `http-forward-ca` naming both certificates and `http-forward-name` the name
    // in C's (not C's advertised 127.0.0.1): the same transaction, still open on C,
    // commits through A.
    let both = dir.join("tls/both.pem");
    let mut pem = std::fs::read(&cert).expect("cert");
    pem.extend(std::fs::read(&rogue).expect("rogue"));
    std::fs::write(&both, pem).expect("both.pem");
    let mut file = std::fs::read_to_string(&rig.files[0]).expect("a's file");
    file.push_str(&format!(
        "http-forward-ca = {}\nhttp-forward-name = svn.example.test\n",
        both.display()
    ));
    std::fs::write(&rig.files[0], file).expect("a's file");
    let a = servers.remove(0);
    stop(a);
    servers.insert(0, serve_https(&rig, 0, &cert, &key));
    let a_url = format!("https://127.0.0.1:{}", servers[0].port());
    let (status, answer) = curl(
        &dir,
        &format!("{a_url}/proj"),
        "MERGE",
        &["Content-Type: text/xml"],
        merge_body(&txn).as_bytes(),
    );
    assert_eq!(status, 200, "{answer}");
    assert!(answer.contains("version-name>6<"), "{answer}");
    for server in &servers {
        let base = format!("https://127.0.0.1:{}/proj", server.port());
        let ls = svn(&["ls", &base]);
        assert!(ls.contains("from-c/"), "{ls}");
    }
    // An http-forward-ca file that cannot be read stops the front end, saying why.
    let b = servers.remove(1);
    stop(b);
    let mut file = std::fs::read_to_string(&rig.files[1]).expect("b's file");
    file.push_str("http-forward-ca = no-such.pem\n");
    std::fs::write(&rig.files[1], file).expect("b's file");
    let out = Run::new(svelto_bin())
        .args(["serve", "--foreground", "-d", "-r"])
        .arg(&rig.roots[1])
        .args(["--listen-host", "127.0.0.1", "--listen-port", "0"])
        .args(["--http-listen", "127.0.0.1:0", "--cluster"])
        .arg(&rig.files[1])
        .arg("--http-tls-cert")
        .arg(&cert)
        .arg("--http-tls-key")
        .arg(&key)
        .timeout(Duration::from_secs(60))
        .output();
    assert!(!out.success());
    assert!(
        out.stderr_text().contains("http-forward-ca: cannot read '")
            && out.stderr_text().contains("no-such.pem"),
        "{}",
        out.stderr_text()
    );
    drop(nginx);
}
