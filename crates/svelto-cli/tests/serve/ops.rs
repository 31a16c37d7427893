//! Running `svelto serve` as a service: the request log in svnserve's `--log-file` format
//! (compared with the real svnserve's) and in JSON, Prometheus metrics, the connection
//! bound, a client that stops reading, `--max-response-size`, `--virtual-host`, IPv6,
//! SIGTERM during commits, SIGHUP and log rotation.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use svelto_testkit::{tempdir, Run};

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_svelto"))
}

/// `svelto serve -d --foreground` with a log file; stopped (SIGKILL) on drop.
struct Serve {
    child: Option<Child>,
    addr: SocketAddr,
    log: PathBuf,
}

impl Serve {
    fn start(root: &Path, host: &str, log: &Path, extra: &[&str]) -> Serve {
        let mut child = Command::new(bin())
            .args(["serve", "-d", "--foreground", "-r"])
            .arg(root)
            .args(["--listen-host", host, "--listen-port", "0", "--log-file"])
            .arg(log)
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start svelto serve");
        let stderr = child.stderr.take().expect("stderr pipe");
        let mut first = String::new();
        BufReader::new(stderr)
            .read_line(&mut first)
            .expect("read the server's first line");
        let addr = first
            .trim()
            .strip_prefix("listening on ")
            .and_then(|a| a.parse().ok())
            .unwrap_or_else(|| panic!("no 'listening on ADDR' line: {first:?}"));
        Serve {
            child: Some(child),
            addr,
            log: log.to_path_buf(),
        }
    }

    fn url(&self, path: &str) -> String {
        format!("svn://{}/{path}", self.addr)
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    fn signal(&self, sig: &str) {
        let pid = self.child.as_ref().expect("running").id().to_string();
        let ok = Command::new("kill")
            .args([sig, &pid])
            .status()
            .expect("run kill");
        assert!(ok.success(), "kill {sig} {pid}");
    }

    /// Waits for the process to exit (at most `limit`).
    fn wait(&mut self, limit: Duration) -> ExitStatus {
        let mut child = self.child.take().expect("running");
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = child.try_wait().expect("try_wait") {
                return status;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!("the server did not exit within {limit:?}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn svn(args: &[&str]) -> svelto_testkit::Outcome {
    let config = tempdir();
    Run::tool("svn")
        .arg("--config-dir")
        .arg(config.path())
        .arg("--non-interactive")
        .args(args)
        .env("LC_ALL", "C.UTF-8")
        .timeout(Duration::from_secs(60))
        .output()
}

fn svn_ok(args: &[&str]) -> String {
    let out = svn(args);
    assert!(out.success(), "svn {args:?}: {}", out.stderr_text());
    out.stdout_text()
}

/// A Svelto repository `repo` under a fresh root, anonymous writes allowed.
fn svelto_root(dir: &Path) -> PathBuf {
    let root = dir.join("svelto");
    std::fs::create_dir_all(&root).expect("mkdir");
    Run::new(bin())
        .args(["admin", "create"])
        .arg(root.join("repo"))
        .success();
    allow_anonymous_writes(&root.join("repo"));
    root
}

fn allow_anonymous_writes(repo: &Path) {
    std::fs::write(
        repo.join("conf").join("svnserve.conf"),
        "[general]\nanon-access = write\n",
    )
    .expect("write svnserve.conf");
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// The same client session against a server whose repository is at `url`.
fn client_session(url: &str, work: &Path) {
    let wc = work.join("wc");
    let wc_s = wc.to_str().expect("utf-8");
    let trunk = format!("{url}/trunk");
    svn_ok(&["mkdir", "-m", "dirs", &trunk, &format!("{url}/branches")]);
    svn_ok(&["checkout", &trunk, wc_s]);
    std::fs::write(wc.join("a"), "a\n").expect("write");
    svn_ok(&["add", &format!("{wc_s}/a")]);
    svn_ok(&["commit", "-m", "add a", wc_s]);
    std::fs::write(wc.join("a"), "a\nb\n").expect("write");
    svn_ok(&["commit", "-m", "change a", wc_s]);
    svn_ok(&["update", "-r", "2", wc_s]);
    svn_ok(&["update", wc_s]);
    svn_ok(&["log", &trunk]);
    svn_ok(&["log", "-v", "-l", "2", url]);
    svn_ok(&["ls", "-R", url]);
    svn_ok(&["cat", &format!("{trunk}/a")]);
    svn_ok(&["info", &trunk]);
    svn_ok(&["propget", "svn:log", "--revprop", "-r", "1", url]);
    svn_ok(&[
        "export",
        &trunk,
        work.join("export").to_str().expect("utf-8"),
    ]);
    svn_ok(&["diff", "-r", "2:3", &trunk]);
    svn_ok(&["blame", &format!("{trunk}/a")]);
    svn_ok(&[
        "copy",
        "-m",
        "branch",
        &trunk,
        &format!("{url}/branches/b1"),
    ]);
    svn_ok(&["switch", &format!("{url}/branches/b1"), wc_s]);
    svn_ok(&["proplist", "-v", "--revprop", "-r", "3", url]);
    svn_ok(&["mergeinfo", &trunk, &format!("{url}/branches/b1")]);
    svn_ok(&[
        "diff",
        &format!("{trunk}@1"),
        &format!("{url}/branches/b1@4"),
    ]);
    // A failing command is logged too.
    assert!(!svn(&["ls", &format!("{url}/no-such-path")]).success());
}

/// Authenticated writes and a refused one: the log names the user, and a command refused
/// for want of access has no action line (svnserve checks access before it logs).
fn auth_session(url: &str, repo: &Path) {
    std::fs::write(
        repo.join("conf").join("svnserve.conf"),
        "[general]\nanon-access = read\nauth-access = write\npassword-db = passwd\n",
    )
    .expect("write svnserve.conf");
    std::fs::write(repo.join("conf").join("passwd"), "[users]\nharry = pw\n").expect("passwd");
    let harry = ["--username", "harry", "--password", "pw", "--no-auth-cache"];
    let mut args = harry.to_vec();
    let target = format!("{url}/by-harry");
    args.extend(["mkdir", "-m", "harry", &target]);
    svn_ok(&args);
    assert!(!svn(&["lock", &format!("{url}/trunk/a")]).success());
    let mut args = harry.to_vec();
    let file = format!("{url}/trunk/a");
    args.extend(["lock", &file]);
    svn_ok(&args);
}

/// The action part of each request line (`PID TIME CLIENT USER REPOS ACTION`), sorted
/// (two connections of one client command may interleave); ERR and INFO lines left out.
fn actions(log: &str) -> Vec<String> {
    let mut v: Vec<String> = log
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.splitn(6, ' ').collect();
            (f.len() == 6 && f[2] != "-").then(|| format!("{} {} {}", f[3], f[4], f[5]))
        })
        .filter(|a| !a.contains(" ERR") && !a.contains(" INFO "))
        .collect();
    v.sort();
    v
}

#[test]
fn request_log_has_svnserves_action_lines() {
    let dir = tempdir();
    // svnserve over FSFS, with its --log-file.
    let fsfs_root = dir.path().join("fsfs");
    std::fs::create_dir_all(&fsfs_root).expect("mkdir");
    Run::tool("svnadmin")
        .arg("create")
        .arg(fsfs_root.join("repo"))
        .success();
    allow_anonymous_writes(&fsfs_root.join("repo"));
    let port = free_port();
    let svnserve_log = dir.path().join("svnserve.log");
    let mut svnserve = Command::new(svelto_testkit::require_tool("svnserve"))
        .args(["-d", "--foreground", "-r"])
        .arg(&fsfs_root)
        .args([
            "--listen-host",
            "127.0.0.1",
            "--listen-port",
            &port.to_string(),
        ])
        .arg("--log-file")
        .arg(&svnserve_log)
        .spawn()
        .expect("start svnserve");
    let deadline = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "svnserve does not listen");
        std::thread::sleep(Duration::from_millis(20));
    }
    let work = dir.path().join("work-fsfs");
    client_session(&format!("svn://127.0.0.1:{port}/repo"), &work);
    auth_session(
        &format!("svn://127.0.0.1:{port}/repo"),
        &fsfs_root.join("repo"),
    );
    let _ = svnserve.kill();
    let _ = svnserve.wait();

    let root = svelto_root(dir.path());
    let server = Serve::start(&root, "127.0.0.1", &dir.path().join("svelto.log"), &[]);
    client_session(&server.url("repo"), &dir.path().join("work-svelto"));
    auth_session(&server.url("repo"), &root.join("repo"));
    std::thread::sleep(Duration::from_millis(200));

    let expected = actions(&std::fs::read_to_string(&svnserve_log).expect("svnserve log"));
    let got = actions(&server.log_text());
    assert!(expected.len() > 60, "{expected:#?}");
    for needle in [
        "- repo checkout-or-export /trunk r1",
        "- repo checkout-or-export /trunk r3 depth=infinity",
        "- repo commit r4",
        "- repo log (/trunk) r3:0 revprops=(svn:author svn:date svn:log)",
        "- repo switch /trunk /branches/b1@4",
        "- repo diff /trunk@1 /branches/b1@4 ignore-ancestry",
        "harry repo commit r5",
        "harry repo lock (/trunk/a)",
    ] {
        assert!(
            expected.iter().any(|a| a == needle),
            "svnserve logged no '{needle}': {expected:#?}"
        );
    }
    if expected != got {
        let only = |a: &[String], b: &[String]| -> Vec<String> {
            a.iter().filter(|x| !b.contains(x)).cloned().collect()
        };
        panic!(
            "action lines differ\nonly svnserve: {:#?}\nonly svelto: {:#?}",
            only(&expected, &got),
            only(&got, &expected)
        );
    }
    // Svelto also logs the failure, as svnserve's ERR lines look.
    let text = server.log_text();
    assert!(
        text.lines().any(|l| l.contains(" - repo ERR - 0 ")),
        "{text}"
    );
}

#[test]
fn json_log_has_one_object_per_request() {
    let dir = tempdir();
    let root = svelto_root(dir.path());
    let server = Serve::start(
        &root,
        "127.0.0.1",
        &dir.path().join("svelto.log"),
        &["--log-format", "json"],
    );
    let url = server.url("repo");
    svn_ok(&["mkdir", "-m", "m", &format!("{url}/trunk")]);
    svn_ok(&["ls", &url]);
    assert!(!svn(&["cat", &format!("{url}/nope")]).success());
    std::thread::sleep(Duration::from_millis(100));
    let text = server.log_text();
    for line in text.lines() {
        assert!(
            line.starts_with("{\"time\":\"") && line.ends_with('}'),
            "not a JSON object: {line}"
        );
    }
    let commit = text
        .lines()
        .find(|l| l.contains("\"command\":\"commit\""))
        .unwrap_or_else(|| panic!("no commit line: {text}"));
    for part in [
        "\"client\":\"127.0.0.1\"",
        "\"user\":null",
        "\"repos\":\"repo\"",
        "\"action\":\"commit r1\"",
        "\"duration_ms\":",
        "\"error\":null",
    ] {
        assert!(commit.contains(part), "{part} in {commit}");
    }
    assert!(
        text.lines()
            .any(|l| l.contains("\"command\":\"get-file\"") && l.contains("\"code\":160013")),
        "{text}"
    );
    // A commit a hook refuses (the handler answers the failure itself) is logged too.
    let hook = root.join("repo").join("hooks").join("pre-commit");
    std::fs::write(&hook, "#!/bin/sh\necho 'not today' >&2\nexit 1\n").expect("hook");
    Run::new("chmod").arg("+x").arg(&hook).success();
    assert!(!svn(&["mkdir", "-m", "m", &format!("{url}/refused")]).success());
    std::thread::sleep(Duration::from_millis(100));
    let text = server.log_text();
    let refused = text
        .lines()
        .find(|l| l.contains("\"command\":\"commit\"") && l.contains("\"code\":165001"))
        .unwrap_or_else(|| panic!("no refused commit: {text}"));
    assert!(refused.contains("not today"), "{refused}");
    assert!(refused.contains("\"action\":\"\""), "{refused}");
}

/// `GET /metrics` over HTTP/1.0 (answered in 1.0, the connection closed after it).
fn scrape(addr: SocketAddr) -> String {
    let mut s = TcpStream::connect(addr).expect("connect to metrics");
    s.write_all(b"GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n")
        .expect("send");
    let mut text = String::new();
    s.read_to_string(&mut text).expect("read metrics");
    assert!(text.starts_with("HTTP/1.0 200 OK\r\n"), "{text}");
    text
}

fn metric(text: &str, name: &str) -> u64 {
    svelto_testkit::metric_sum(text, name).unwrap_or_else(|| panic!("no {name} in\n{text}"))
}

#[test]
fn metrics_count_requests_bytes_commits_and_cache() {
    let dir = tempdir();
    let root = svelto_root(dir.path());
    let mport = free_port();
    let maddr: SocketAddr = format!("127.0.0.1:{mport}").parse().expect("addr");
    let server = Serve::start(
        &root,
        "127.0.0.1",
        &dir.path().join("svelto.log"),
        &["--metrics-listen", &maddr.to_string()],
    );
    let before = scrape(maddr);
    assert_eq!(metric(&before, "svelto_commits_total"), 0);
    let url = server.url("repo");
    svn_ok(&["mkdir", "-m", "m", &format!("{url}/trunk")]);
    let wc = dir.path().join("wc");
    let wc_s = wc.to_str().expect("utf-8");
    svn_ok(&["checkout", &format!("{url}/trunk"), wc_s]);
    std::fs::write(wc.join("f"), "x".repeat(10_000)).expect("write");
    svn_ok(&["add", &format!("{wc_s}/f")]);
    svn_ok(&["commit", "-m", "f", wc_s]);
    svn_ok(&["cat", &format!("{url}/trunk/f")]);
    svn_ok(&["cat", &format!("{url}/trunk/f")]);
    assert!(!svn(&["cat", &format!("{url}/trunk/missing")]).success());
    let after = scrape(maddr);
    assert_eq!(metric(&after, "svelto_commits_total"), 2, "{after}");
    assert!(
        metric(
            &after,
            "svelto_requests_total{protocol=\"svn\",command=\"get-file\"}"
        ) >= 3
    );
    // No HTTP side: no HTTP request names listed.
    assert_eq!(
        svelto_testkit::metric_sum(&after, "svelto_requests_total{protocol=\"http\"}"),
        None
    );
    assert!(after.contains("\nsvelto_uptime_seconds "), "{after}");
    assert!(
        after.contains(&format!(
            "\nsvelto_build_info{{version=\"{}\"}} 1\n",
            env!("CARGO_PKG_VERSION")
        )),
        "{after}"
    );
    assert!(metric(&after, "svelto_requests_total{command=\"update\"}") >= 1);
    assert!(metric(&after, "svelto_request_errors_total{command=\"get-file\"}") >= 1);
    assert!(metric(&after, "svelto_errors_total{kind=\"command\"}") >= 1);
    assert!(
        metric(
            &after,
            "svelto_request_duration_seconds_count{command=\"commit\"}"
        ) == 2
    );
    assert!(metric(&after, "svelto_received_bytes_total") > 1_000);
    assert!(metric(&after, "svelto_sent_bytes_total") > 20_000);
    assert!(metric(&after, "svelto_connections_total") >= 5);
    assert_eq!(metric(&after, "svelto_open_connections"), 0, "{after}");
    let cache = metric(&after, "svelto_cache_hits_total{cache=\"node\"}")
        + metric(&after, "svelto_cache_misses_total{cache=\"node\"}");
    assert!(cache > 0, "{after}");
    // Anything but /metrics is a 404.
    let mut s = TcpStream::connect(maddr).expect("connect");
    s.write_all(b"GET /other HTTP/1.0\r\n\r\n").expect("send");
    let mut text = String::new();
    s.read_to_string(&mut text).expect("read");
    assert!(text.starts_with("HTTP/1.0 404"), "{text}");
}

/// Sends `bytes` to the metrics port on a new connection; the whole answer.
fn metrics_raw(addr: SocketAddr, bytes: &[u8]) -> String {
    let mut s = TcpStream::connect(addr).expect("connect to metrics");
    s.set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    // The responder may answer and close before it has read everything.
    let _ = s.write_all(bytes);
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// The metrics port is served by hyper: what is not HTTP gets a 400, a request head past
/// 16 KiB (long headers, a long target) a 431, a method other than GET or HEAD a 405 (its body unread, whatever its
/// Content-Length), clients that say nothing are cut off after 5 s; scrapes are answered
/// meanwhile and after, and the server keeps serving svn://.
#[test]
fn metrics_port_answers_bad_requests_with_http_errors() {
    let dir = tempdir();
    let root = svelto_root(dir.path());
    let mport = free_port();
    let maddr: SocketAddr = format!("127.0.0.1:{mport}").parse().expect("addr");
    let server = Serve::start(
        &root,
        "127.0.0.1",
        &dir.path().join("svelto.log"),
        &["--metrics-listen", &maddr.to_string()],
    );
    // Silent clients, up to the responder's bound and beyond.
    let silent: Vec<TcpStream> = (0..12)
        .map(|_| TcpStream::connect(maddr).expect("connect"))
        .collect();
    let mut huge = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: ".to_vec();
    huge.extend(std::iter::repeat_n(b'a', 1 << 20));
    huge.extend_from_slice(b"\r\n\r\n");
    let mut long_uri = b"GET /".to_vec();
    long_uri.extend(std::iter::repeat_n(b'm', 100_000));
    long_uri.extend_from_slice(b" HTTP/1.1\r\nHost: x\r\n\r\n");
    for (bytes, status) in [
        (
            b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03".to_vec(),
            "400",
        ),
        (b"BLAH\r\n\r\n".to_vec(), "400"),
        (
            b"GET /metrics HTTP/1.1\r\nno colon here\r\n\r\n".to_vec(),
            "400",
        ),
        (
            b"GET /metrics HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nxy".to_vec(),
            "400",
        ),
        (huge, "431"),
        (long_uri, "431"),
        (
            b"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999\r\n\r\n".to_vec(),
            "405",
        ),
        (
            b"GET /metrics/../x HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
            "404",
        ),
    ] {
        let text = metrics_raw(maddr, &bytes);
        assert!(
            text.starts_with(&format!("HTTP/1.1 {status} ")),
            "{:?}: {text}",
            String::from_utf8_lossy(&bytes[..bytes.len().min(60)])
        );
    }
    drop(silent);
    // Still scraped, over HTTP/1.1 and 1.0, and svn:// still served.
    let text = metrics_raw(maddr, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
    assert!(text.starts_with("HTTP/1.1 200 OK\r\n"), "{text}");
    assert!(
        text.contains("svelto_connections_total{protocol=\"svn\"} "),
        "{text}"
    );
    let text = scrape(maddr);
    assert!(
        text.contains("svelto_open_connections{protocol=\"svn\"} 0"),
        "{text}"
    );
    svn_ok(&["ls", &server.url("repo")]);
}

/// Reads the greeting of a raw connection (the server holds the connection open).
fn hold_connection(addr: SocketAddr) -> TcpStream {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    let mut buf = [0u8; 512];
    let n = s.read(&mut buf).expect("greeting");
    assert!(buf[..n].starts_with(b"( success ( 2 2 "), "{:?}", &buf[..n]);
    s
}

#[test]
fn clients_over_max_connections_are_told_the_server_is_busy() {
    let dir = tempdir();
    let root = svelto_root(dir.path());
    let server = Serve::start(
        &root,
        "127.0.0.1",
        &dir.path().join("svelto.log"),
        &["--max-connections", "1"],
    );
    let held = hold_connection(server.addr);
    let out = svn(&["ls", &server.url("repo")]);
    assert!(!out.success());
    assert!(
        out.stderr_text().contains("Server busy"),
        "{}",
        out.stderr_text()
    );
    drop(held);
    // Once the first client left, the next one is served.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let out = svn(&["ls", &server.url("repo")]);
        if out.success() {
            break;
        }
        assert!(Instant::now() < deadline, "{}", out.stderr_text());
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_client_that_stops_reading_does_not_hold_back_others() {
    let dir = tempdir();
    let root = svelto_root(dir.path());
    let mport = free_port();
    let maddr: SocketAddr = format!("127.0.0.1:{mport}").parse().expect("addr");
    let server = Serve::start(
        &root,
        "127.0.0.1",
        &dir.path().join("svelto.log"),
        &[
            "--idle-timeout",
            "2",
            "--metrics-listen",
            &maddr.to_string(),
        ],
    );
    let url = server.url("repo");
    let src = dir.path().join("src");
    std::fs::create_dir_all(&src).expect("mkdir");
    std::fs::write(src.join("big"), "0123456789abcdef".repeat(64 * 1024)).expect("write");
    svn_ok(&[
        "import",
        "-m",
        "big",
        src.to_str().expect("utf-8"),
        &format!("{url}/trunk"),
    ]);
    // A raw client asks for the 1 MiB file 200 times and never reads an answer.
    let mut stalled = hold_connection(server.addr);
    let hello = format!(
        "( 2 ( edit-pipeline svndiff1 absent-entries depth mergeinfo log-revprops ) {}:{} ) ",
        url.len(),
        url
    );
    stalled.write_all(hello.as_bytes()).expect("hello");
    stalled.write_all(b"( ANONYMOUS ( 0: ) ) ").expect("auth");
    stalled
        .set_write_timeout(Some(Duration::from_secs(2)))
        .expect("timeout");
    let request = b"( get-file ( 9:trunk/big ( ) false true ) ) ";
    for _ in 0..200 {
        if stalled.write_all(request).is_err() {
            break;
        }
    }
    std::thread::sleep(Duration::from_millis(300));
    // Meanwhile another client checks out, promptly.
    let started = Instant::now();
    let wc = dir.path().join("wc");
    svn_ok(&[
        "checkout",
        &format!("{url}/trunk"),
        wc.to_str().expect("utf-8"),
    ]);
    assert_eq!(
        std::fs::metadata(wc.join("big"))
            .expect("checked out")
            .len(),
        1 << 20
    );
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "checkout took {:?}",
        started.elapsed()
    );
    // The server gives up on the client that does not read after --idle-timeout (its
    // writes time out), freeing the connection, while the client still holds its end.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let m = scrape(maddr);
        if metric(&m, "svelto_errors_total{kind=\"timeout\"}") >= 1 {
            assert_eq!(metric(&m, "svelto_open_connections"), 0, "{m}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the stalled connection was not closed: {m}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    drop(stalled);
}

#[test]
fn max_response_size_ends_oversized_responses() {
    let dir = tempdir();
    let root = svelto_root(dir.path());
    let server = Serve::start(
        &root,
        "127.0.0.1",
        &dir.path().join("svelto.log"),
        &["--max-response-size", "1"],
    );
    let url = server.url("repo");
    let src = dir.path().join("src");
    std::fs::create_dir_all(&src).expect("mkdir");
    std::fs::write(src.join("big"), vec![b'x'; 3 << 20]).expect("write");
    std::fs::write(src.join("small"), "small\n").expect("write");
    svn_ok(&[
        "import",
        "-m",
        "files",
        src.to_str().expect("utf-8"),
        &format!("{url}/trunk"),
    ]);
    assert_eq!(svn_ok(&["cat", &format!("{url}/trunk/small")]), "small\n");
    let out = svn(&["cat", &format!("{url}/trunk/big")]);
    assert!(
        !out.success(),
        "a 3 MiB response went through a 1 MiB bound"
    );
    std::thread::sleep(Duration::from_millis(100));
    let text = server.log_text();
    assert!(
        text.contains("ERR - 0 210010 ") && text.contains("--max-response-size"),
        "{text}"
    );
}

#[test]
fn virtual_host_finds_repositories_under_the_host_name() {
    let dir = tempdir();
    let root = dir.path().join("vhosts");
    let port = free_port();
    let host_dir = root.join(format!("127.0.0.1:{port}"));
    std::fs::create_dir_all(&host_dir).expect("mkdir");
    Run::new(bin())
        .args(["admin", "create"])
        .arg(host_dir.join("repo"))
        .success();
    let log = dir.path().join("svelto.log");
    let mut child = Command::new(bin())
        .args(["serve", "-d", "--foreground", "--virtual-host", "-r"])
        .arg(&root)
        .args([
            "--listen-host",
            "127.0.0.1",
            "--listen-port",
            &port.to_string(),
        ])
        .arg("--log-file")
        .arg(&log)
        .stderr(Stdio::piped())
        .spawn()
        .expect("start");
    let mut first = String::new();
    BufReader::new(child.stderr.take().expect("stderr"))
        .read_line(&mut first)
        .expect("first line");
    assert!(first.starts_with("listening on"), "{first}");
    let out = svn(&["info", &format!("svn://127.0.0.1:{port}/repo")]);
    let _ = child.kill();
    let _ = child.wait();
    assert!(out.success(), "{}", out.stderr_text());
    assert!(
        out.stdout_text().contains("Revision: 0"),
        "{}",
        out.stdout_text()
    );
}

#[test]
fn ipv6_loopback_is_served() {
    // Fails loudly where the machine has no IPv6 loopback, unless SVELTO_NO_IPV6=1 says
    // so on purpose (containers without IPv6).
    if std::env::var_os("SVELTO_NO_IPV6").is_some_and(|v| v == "1") {
        eprintln!("ipv6_loopback_is_served: not run, SVELTO_NO_IPV6=1");
        return;
    }
    TcpListener::bind("[::1]:0").expect(
        "this machine has no IPv6 loopback (::1); set SVELTO_NO_IPV6=1 to leave this test out",
    );
    let dir = tempdir();
    let root = svelto_root(dir.path());
    let server = Serve::start(&root, "::1", &dir.path().join("svelto.log"), &[]);
    assert!(server.addr.is_ipv6(), "{}", server.addr);
    let out = svn_ok(&["ls", &server.url("repo")]);
    assert_eq!(out, "");
    std::thread::sleep(Duration::from_millis(100));
    assert!(
        server.log_text().contains(" ::1 - repo open 2 "),
        "{}",
        server.log_text()
    );
}

#[test]
fn sighup_reopens_the_log_file_after_rotation() {
    let dir = tempdir();
    let root = svelto_root(dir.path());
    let log = dir.path().join("svelto.log");
    let server = Serve::start(&root, "127.0.0.1", &log, &[]);
    svn_ok(&["ls", &server.url("repo")]);
    let rotated = dir.path().join("svelto.log.1");
    std::fs::rename(&log, &rotated).expect("rotate");
    server.signal("-HUP");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !log.exists() {
        assert!(Instant::now() < deadline, "no new log file after SIGHUP");
        std::thread::sleep(Duration::from_millis(20));
    }
    svn_ok(&["ls", &server.url("repo")]);
    std::thread::sleep(Duration::from_millis(100));
    let new = std::fs::read_to_string(&log).expect("new log");
    assert!(new.contains("SIGHUP: log file reopened"), "{new}");
    assert!(new.contains(" - repo list / r0"), "{new}");
    let old = std::fs::read_to_string(&rotated).expect("old log");
    assert!(!old.contains("SIGHUP"), "{old}");
}

#[test]
fn sigterm_lets_running_commits_finish_and_exits_zero() {
    let dir = tempdir();
    let root = svelto_root(dir.path());
    let mut server = Serve::start(&root, "127.0.0.1", &dir.path().join("svelto.log"), &[]);
    let url = server.url("repo");
    // A stream of commits, each its own connection, until the server goes away.
    let committer = std::thread::spawn(move || {
        let mut ok = Vec::new();
        for i in 0..400 {
            let config = tempdir();
            let out = Run::tool("svnmucc")
                .arg("--config-dir")
                .arg(config.path())
                .arg("--non-interactive")
                .args(["-m", &format!("c{i}"), "put", "/dev/null"])
                .arg(format!("{url}/f{i}"))
                .timeout(Duration::from_secs(60))
                .output();
            if out.success() {
                let text = out.stdout_text();
                let rev: u64 = text
                    .trim()
                    .strip_prefix('r')
                    .and_then(|t| t.split(' ').next())
                    .and_then(|r| r.parse().ok())
                    .unwrap_or_else(|| panic!("svnmucc printed {text:?}"));
                ok.push((i, rev));
            } else if !ok.is_empty() {
                break;
            }
        }
        ok
    });
    std::thread::sleep(Duration::from_millis(1500));
    server.signal("-TERM");
    let status = server.wait(Duration::from_secs(40));
    assert!(status.success(), "exit status {status:?}");
    let ok = committer.join().expect("committer");
    assert!(!ok.is_empty(), "no commit succeeded before SIGTERM");
    let repo = root.join("repo");
    Run::new(bin())
        .args(["admin", "verify"])
        .arg(&repo)
        .success();
    let dump = Run::new(bin())
        .args(["admin", "dump"])
        .arg(&repo)
        .success()
        .stdout_text();
    for (i, rev) in &ok {
        assert!(
            dump.contains(&format!("Revision-number: {rev}\n"))
                && dump.contains(&format!("Node-path: f{i}\n")),
            "commit {i} (r{rev}) was reported to the client but is not in the repository"
        );
    }
    let log = server.log_text();
    assert!(log.contains("SIGTERM: shutting down"), "{log}");
}

/// A pre-commit hook in `root`'s repository that touches a marker (its path returned, in
/// `dir`) and then holds the commit `secs` seconds.
fn hold_commits(root: &Path, dir: &Path, secs: u32) -> PathBuf {
    let marker = dir.join("hook-started");
    let hook = root.join("repo").join("hooks").join("pre-commit");
    std::fs::write(
        &hook,
        format!(
            "#!/bin/sh\ntouch '{}'\nsleep {secs}\nexit 0\n",
            marker.display()
        ),
    )
    .expect("write hook");
    Run::new("chmod").arg("+x").arg(&hook).success();
    marker
}

/// `svn mkdir URL/slow` on a thread of its own, returned once its commit is in the hook
/// [`hold_commits`] installed.
fn commit_held(url: &str, marker: &Path) -> std::thread::JoinHandle<svelto_testkit::Outcome> {
    let url = url.to_string();
    let client = std::thread::spawn(move || svn(&["mkdir", "-m", "slow", &format!("{url}/slow")]));
    let deadline = Instant::now() + Duration::from_secs(20);
    while !marker.exists() {
        assert!(Instant::now() < deadline, "the pre-commit hook never ran");
        std::thread::sleep(Duration::from_millis(20));
    }
    client
}

/// The commit is still running (in its pre-commit hook) when SIGTERM arrives.
#[test]
fn sigterm_waits_for_a_commit_in_progress() {
    let dir = tempdir();
    let root = svelto_root(dir.path());
    let marker = hold_commits(&root, dir.path(), 2);
    let mut server = Serve::start(&root, "127.0.0.1", &dir.path().join("svelto.log"), &[]);
    let client = commit_held(&server.url("repo"), &marker);
    server.signal("-TERM");
    // New clients are refused at once while the commit finishes.
    std::thread::sleep(Duration::from_millis(300));
    assert!(TcpStream::connect(server.addr).is_err(), "still accepting");
    let out = client.join().expect("client");
    assert!(
        out.success(),
        "the running commit failed: {}",
        out.stderr_text()
    );
    assert!(
        out.stdout_text().contains("Committed revision 1."),
        "{}",
        out.stdout_text()
    );
    let status = server.wait(Duration::from_secs(20));
    assert!(status.success(), "exit status {status:?}");
    let log = server.log_text();
    assert!(
        log.contains("waiting up to 30 s for 1 running write commands"),
        "{log}"
    );
    assert!(log.contains("shutdown: no write running; exiting"), "{log}");
}

/// The same over http://: the commit's MERGE is in its pre-commit hook when SIGTERM
/// arrives; the commit lands, the client hears of it, and the server then exits. Once the
/// shutdown began, a new transaction is refused with a 503 that says why.
#[test]
fn sigterm_waits_for_an_http_commit_in_progress() {
    let dir = tempdir();
    let root = svelto_root(dir.path());
    let marker = hold_commits(&root, dir.path(), 3);
    let http = format!("127.0.0.1:{}", free_port());
    let mut server = Serve::start(
        &root,
        "127.0.0.1",
        &dir.path().join("svelto.log"),
        &["--http-listen", &http],
    );
    let url = format!("http://{http}/repo");
    let client = commit_held(&url, &marker);
    server.signal("-TERM");
    std::thread::sleep(Duration::from_millis(300));
    // A new commit is refused while the running one finishes.
    let refused = svn(&["mkdir", "-m", "late", &format!("{url}/late")]);
    assert!(!refused.success(), "a commit began during the shutdown");
    assert!(
        refused.stderr_text().contains("shutting down"),
        "{}",
        refused.stderr_text()
    );
    let out = client.join().expect("client");
    assert!(
        out.success(),
        "the running commit failed: {}",
        out.stderr_text()
    );
    assert!(
        out.stdout_text().contains("Committed revision 1."),
        "{}",
        out.stdout_text()
    );
    let status = server.wait(Duration::from_secs(20));
    assert!(status.success(), "exit status {status:?}");
    let log = server.log_text();
    assert!(log.contains("shutdown: no write running; exiting"), "{log}");
    let youngest = Run::new(bin())
        .args(["look", "youngest"])
        .arg(root.join("repo"))
        .success();
    assert_eq!(youngest.stdout_text().trim(), "1");
}

/// HTTP commits count in `svelto_commits_total` as svn:// ones do, and the 401 challenge
/// every HTTP client gets before it sends its credentials is an ordinary request: no `ERR`
/// line, no error in the metrics (a wrong password still is one, with a log line).
#[test]
fn http_commits_are_counted_and_challenges_are_not_errors() {
    let dir = tempdir();
    let root = svelto_root(dir.path());
    std::fs::write(
        root.join("repo/conf/svnserve.conf"),
        "[general]\nanon-access = read\nauth-access = write\n[http]\npassword-db = htpasswd\n",
    )
    .expect("svnserve.conf");
    Run::new("htpasswd")
        .args(["-c", "-b", "-B"])
        .arg(root.join("repo/conf/htpasswd"))
        .args(["harry", "harryssecret"])
        .success();
    let maddr: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().expect("addr");
    let http = format!("127.0.0.1:{}", free_port());
    let server = Serve::start(
        &root,
        "127.0.0.1",
        &dir.path().join("svelto.log"),
        &[
            "--metrics-listen",
            &maddr.to_string(),
            "--http-listen",
            &http,
        ],
    );
    let url = format!("http://{http}/repo");
    let harry = ["--username", "harry", "--password", "harryssecret"];
    for dir_name in ["a", "b"] {
        let mut args = vec!["mkdir", "-m", "m"];
        args.extend_from_slice(&harry);
        let target = format!("{url}/{dir_name}");
        args.push(&target);
        svn_ok(&args);
    }
    // One commit over svn:// too.
    std::fs::write(
        root.join("repo/conf/svnserve.conf"),
        "[general]\nanon-access = write\n[http]\npassword-db = htpasswd\n",
    )
    .expect("svnserve.conf");
    svn_ok(&["mkdir", "-m", "m", &server.url("repo/c")]);
    let after = scrape(maddr);
    assert_eq!(metric(&after, "svelto_commits_total"), 3, "{after}");
    // Each protocol's own: two over HTTP, one over svn://.
    assert_eq!(metric(&after, "svelto_commits_total{protocol=\"http\"}"), 2);
    assert_eq!(metric(&after, "svelto_commits_total{protocol=\"svn\"}"), 1);
    assert_eq!(
        metric(&after, "svelto_errors_total{kind=\"auth\"}"),
        0,
        "{after}"
    );
    let log = std::fs::read_to_string(dir.path().join("svelto.log")).expect("log");
    assert!(log.contains(" commit r2"), "{log}");
    assert!(
        !log.contains(" ERR "),
        "a challenge was logged as an error:\n{log}"
    );
    // A wrong password is still refused, logged and counted.
    std::fs::write(
        root.join("repo/conf/svnserve.conf"),
        "[general]\nanon-access = read\nauth-access = write\n[http]\npassword-db = htpasswd\n",
    )
    .expect("svnserve.conf");
    std::thread::sleep(Duration::from_millis(1100));
    let out = svn(&[
        "mkdir",
        "-m",
        "m",
        "--username",
        "harry",
        "--password",
        "wrong",
        &format!("{url}/d"),
    ]);
    assert!(!out.success());
    let log = std::fs::read_to_string(dir.path().join("svelto.log")).expect("log");
    assert!(
        log.contains("user harry: authentication failure: Password Mismatch"),
        "{log}"
    );
}
