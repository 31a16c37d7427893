//! The svn:// front end takes the time from the host's `Env`, never from the clock: served
//! with a fixed clock set 25 years back, a commit's `svn:date` and a lock's creation date
//! (as the real `svn` client reads them, logged in by CRAM-MD5, whose challenge is the
//! Env's too) are that clock's. A direct clock read left on one of these paths gives
//! today's date instead (the service stamps the latest of the date a front end passes and
//! its own `Env`'s).

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use svelto_core::FixedEnv;
use svelto_host::{Host, HostConfig, Logger};

/// The injected clock's time, after revision 0's.
const NOW: &str = "2001-02-03T04:05:06.000007Z";
const R0_DATE: &str = "2001-01-01T00:00:00.000000Z";

/// `svn ARGS` as `joe`, with a configuration of its own; its standard output.
fn svn(config: &Path, args: &[&str]) -> String {
    let out = Command::new("svn")
        .args(["--non-interactive", "--no-auth-cache", "--config-dir"])
        .arg(config)
        .args(["--username", "joe", "--password", "joepw"])
        .args(args)
        .output()
        .expect("run svn (Subversion's client must be installed)");
    assert!(
        out.status.success(),
        "svn {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

#[test]
fn commit_and_lock_dates_come_from_the_hosts_env() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("root");
    let repo = root.join("r");
    let backend = svelto_testkit::memfs::local_backend();
    svelto_repos::create(
        &*backend,
        &repo,
        "00000000-0000-4000-8000-0000000000aa",
        R0_DATE,
    )
    .expect("create");
    std::fs::write(
        repo.join("conf/svnserve.conf"),
        "[general]\nanon-access = read\nauth-access = write\npassword-db = passwd\n",
    )
    .expect("svnserve.conf");
    std::fs::write(repo.join("conf/passwd"), "[users]\njoe = joepw\n").expect("passwd");
    let host = Host::new(
        HostConfig::new(root),
        Logger::disabled(),
        backend,
        Arc::new(FixedEnv::new(NOW)),
    );
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("address");
    std::thread::spawn(move || {
        svelto_server::run(host, listener, svelto_server::Config::default())
    });
    let url = format!("svn://{addr}/r");
    let cfg = dir.path().join("svn-config");
    let file = dir.path().join("f.txt");
    std::fs::write(&file, "text\n").expect("file");

    // A commit: its svn:date is the injected time.
    svn(
        &cfg,
        &[
            "import",
            "-m",
            "add",
            file.to_str().expect("utf-8"),
            &format!("{url}/f.txt"),
        ],
    );
    let date = svn(&cfg, &["propget", "--revprop", "-r", "1", "svn:date", &url]);
    assert_eq!(date.trim(), NOW, "the commit's date");

    // A lock (`lock`), taken in a working copy: its creation date is the injected time
    // too, as `svn info` of the URL reads it back.
    let wc = dir.path().join("wc");
    let wc_file = wc.join("f.txt");
    svn(&cfg, &["checkout", &url, wc.to_str().expect("utf-8")]);
    svn(
        &cfg,
        &["lock", "-m", "mine", wc_file.to_str().expect("utf-8")],
    );
    let info = svn(&cfg, &["info", "--xml", &format!("{url}/f.txt")]);
    assert!(
        info.contains(&format!("<created>{NOW}</created>")),
        "the lock's creation date: {info}"
    );
    // Committing the locked file hands its token back; the date is still the Env's.
    std::fs::write(&wc_file, "more\n").expect("edit");
    svn(&cfg, &["commit", "-m", "edit", wc.to_str().expect("utf-8")]);
    let date = svn(&cfg, &["propget", "--revprop", "-r", "2", "svn:date", &url]);
    assert_eq!(date.trim(), NOW, "the second commit's date");
}
