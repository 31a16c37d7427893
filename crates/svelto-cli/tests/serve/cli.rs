//! `svelto serve`'s command line, with svnserve's meaning: tunnel mode (what `svn+ssh://`
//! runs), `-X`, `-R`, `-d` in the background with `--pid-file`, svnserve's tuning flags
//! accepted and ignored, idle connections closed, and a mode required.

use std::io::Read;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use svelto_testkit::{tempdir, Run, Svelto};

use crate::common::pair;

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_svelto"))
}

/// The root `svelto serve` serves for the basic fixture, and the repository's name in it.
fn root_and_name() -> (PathBuf, String) {
    let repo = pair("basic").subject_repo().to_path_buf();
    let name = repo
        .file_name()
        .and_then(|n| n.to_str())
        .expect("repository directory name")
        .to_string();
    let root = repo
        .parent()
        .expect("repository has a parent")
        .to_path_buf();
    (root, name)
}

/// `svn` with a private configuration, as the harness runs it.
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

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

#[test]
fn tunnel_mode_serves_svn_ssh_like_svnserve_t() {
    let (root, name) = root_and_name();
    let dir = tempdir();
    // What ssh would run on the server: `svnserve -t`, here `svelto serve -t`.
    let ssh = dir.path().join("fake-ssh");
    std::fs::write(
        &ssh,
        format!(
            "#!/bin/sh\nexec '{}' serve -t -r '{}'\n",
            bin().display(),
            root.display()
        ),
    )
    .expect("write fake ssh");
    Run::new("chmod").arg("+x").arg(&ssh).success();
    let config = tempdir();
    let tunnel = Run::tool("svn")
        .arg("--config-dir")
        .arg(config.path())
        .arg("--non-interactive")
        .args(["ls", "-R", "-v"])
        .arg(format!("svn+ssh://localhost/{name}/trunk"))
        .env("SVN_SSH", &ssh)
        .env("LC_ALL", "C.UTF-8")
        .timeout(Duration::from_secs(60))
        .success();
    let reference = svn(&[
        "ls",
        "-R",
        "-v",
        &format!("{}/trunk", pair("basic").reference_url()),
    ]);
    assert!(reference.success(), "{}", reference.stderr_text());
    assert_eq!(tunnel.stdout_text(), reference.stdout_text());
    assert!(
        tunnel.stdout_text().lines().count() > 3,
        "{}",
        tunnel.stdout_text()
    );
}

/// Starts `svelto serve ARGS...` in the foreground and returns it with its port.
fn spawn_listening(args: &[&str], log: &Path) -> (svelto_testkit::Running, u16) {
    let running = Run::new(bin())
        .arg("serve")
        .args(args)
        .arg("--log-file")
        .arg(log)
        .timeout(Duration::from_secs(60))
        .spawn();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        if let Some(port) = text
            .lines()
            .find_map(|l| l.rsplit_once("listening on 127.0.0.1:"))
            .and_then(|(_, p)| p.trim().parse().ok())
        {
            return (running, port);
        }
        assert!(
            Instant::now() < deadline,
            "no 'listening on' in the log: {text}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn listen_once_serves_one_connection_and_exits() {
    let (root, name) = root_and_name();
    let dir = tempdir();
    let log = dir.path().join("serve.log");
    let root_s = root.to_str().expect("utf-8 root");
    let (mut running, port) = spawn_listening(
        &[
            "-X",
            "-r",
            root_s,
            "--listen-host",
            "127.0.0.1",
            "--listen-port",
            "0",
        ],
        &log,
    );
    let out = svn(&["info", &format!("svn://127.0.0.1:{port}/{name}")]);
    assert!(out.success(), "{}", out.stderr_text());
    let deadline = Instant::now() + Duration::from_secs(10);
    while !running.has_exited() {
        assert!(
            Instant::now() < deadline,
            "-X server still running after its connection"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn default_configuration_and_read_only_refuse_anonymous_writes_as_svnserve() {
    // Fresh repositories with the configuration `create` writes (anonymous: read only).
    let dir = tempdir();
    let (fsfs_root, our_root) = (dir.path().join("fsfs"), dir.path().join("svelto"));
    std::fs::create_dir_all(&fsfs_root).expect("mkdir");
    std::fs::create_dir_all(&our_root).expect("mkdir");
    Run::tool("svnadmin")
        .arg("create")
        .arg(fsfs_root.join("r"))
        .success();
    Run::new(bin())
        .args(["admin", "create"])
        .arg(our_root.join("r"))
        .success();
    let theirs = svelto_testkit::Svnserve::start(&fsfs_root);
    let plain = Svelto::start_with(&bin(), &our_root, &dir.path().join("a.log"), &[]);
    let refused = |url: String| {
        let out = svn(&["mkdir", "-m", "x", &format!("{url}/newdir")]);
        assert!(!out.success(), "an anonymous write succeeded at {url}");
        out.stderr_text().replace(&url, "{URL}")
    };
    assert_eq!(refused(plain.url("r")), refused(theirs.url("r")));
    let ro = Svelto::start_with(&bin(), &our_root, &dir.path().join("b.log"), &["-R"]);
    let out = svn(&["mkdir", "-m", "x", &format!("{}/newdir", ro.url("r"))]);
    assert!(!out.success());
    assert!(
        out.stderr_text().contains("E170001"),
        "{}",
        out.stderr_text()
    );
    let (root, name) = root_and_name();
    let ro = Svelto::start_with(&bin(), &root, &dir.path().join("c.log"), &["-R"]);
    // Reads still work under -R.
    let out = svn(&["ls", &ro.url(&name)]);
    assert!(out.success(), "{}", out.stderr_text());
}

#[test]
fn svnserve_tuning_flags_are_accepted_and_noted() {
    let (root, name) = root_and_name();
    let dir = tempdir();
    let log = dir.path().join("serve.log");
    let flags = [
        "-T",
        "-M",
        "1024",
        "-c",
        "0",
        "--cache-txdeltas",
        "yes",
        "--cache-fulltexts",
        "yes",
        "--cache-revprops",
        "yes",
        "--block-read",
        "yes",
        "--cache-nodeprops",
        "no",
        "--single-thread",
    ];
    let server = Svelto::start_with(&bin(), &root, &log, &flags);
    let out = svn(&["ls", &server.url(&name)]);
    assert!(out.success(), "{}", out.stderr_text());
    let text = std::fs::read_to_string(&log).expect("log");
    assert!(
        text.contains("ignoring svnserve tuning flags")
            && text.contains("--memory-cache-size 1024")
            && text.contains("--block-read yes")
            && text.contains("--cache-nodeprops no")
            && text.contains("--single-thread"),
        "{text}"
    );
}

/// `svelto serve --version` (what init scripts and package checks call, as `svnserve
/// --version`): the version, the commit, the storage format and the protocols; with `-q`
/// the version alone.
#[test]
fn serve_prints_its_version() {
    let out = Run::new(bin()).args(["serve", "--version"]).success();
    let text = out.stdout_text();
    let version = env!("CARGO_PKG_VERSION");
    assert!(
        text.starts_with(&format!("svelto serve, version {version} (commit "))
            && text.contains("storage format: svelto-store 1")
            && text.contains("svn://"),
        "{text}"
    );
    let quiet = Run::new(bin()).args(["serve", "--version", "-q"]).success();
    assert_eq!(quiet.stdout_text(), format!("{version}\n"));
    let top = Run::new(bin()).arg("--version").success();
    assert!(
        top.stdout_text().contains("storage format"),
        "{}",
        top.stdout_text()
    );
}

#[test]
fn idle_connections_are_closed() {
    let (root, _) = root_and_name();
    let dir = tempdir();
    let server = Svelto::start_with(
        &bin(),
        &root,
        &dir.path().join("serve.log"),
        &["--idle-timeout", "1"],
    );
    let mut stream = TcpStream::connect(("127.0.0.1", server.port())).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .expect("timeout");
    let started = Instant::now();
    let mut buf = Vec::new();
    // The greeting arrives, then nothing: the server must close within a few seconds.
    let n = stream
        .read_to_end(&mut buf)
        .expect("the server closes the idle connection");
    assert!(n > 0 && buf.starts_with(b"( success ( 2 2 "), "{buf:?}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "closed only after {:?}",
        started.elapsed()
    );
}

#[test]
fn daemon_mode_detaches_and_writes_its_pid() {
    let (root, name) = root_and_name();
    let dir = tempdir();
    let pid_file = dir.path().join("svelto.pid");
    let port = free_port().to_string();
    Run::new(bin())
        .args(["serve", "-d", "-r"])
        .arg(&root)
        .args([
            "--listen-host",
            "127.0.0.1",
            "--listen-port",
            &port,
            "--pid-file",
        ])
        .arg(&pid_file)
        .timeout(Duration::from_secs(30))
        .success();
    let pid = std::fs::read_to_string(&pid_file).expect("pid file");
    let pid = pid.trim().to_string();
    let out = svn(&["ls", &format!("svn://127.0.0.1:{port}/{name}")]);
    Run::new("kill").arg(&pid).output();
    assert!(out.success(), "{}", out.stderr_text());
    assert!(
        !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()),
        "{pid}"
    );
}

#[test]
fn a_mode_is_required() {
    let (root, _) = root_and_name();
    let out = Run::new(bin()).arg("serve").arg("-r").arg(&root).failure();
    assert!(
        out.stderr_text()
            .contains("exactly one of -d, -i, -t or -X"),
        "{}",
        out.stderr_text()
    );
}
