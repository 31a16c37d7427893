//! The svn:// front end takes the time from the host's `Env`, never from the clock: served
//! with a fixed clock set 25 years back, a commit's `svn:date` and a lock's creation date
//! (as the real `svn` client reads them, logged in by CRAM-MD5, whose challenge is the
//! Env's too) are that clock's. A direct clock read left on one of these paths gives
//! today's date instead (the service stamps the latest of the date a front end passes and
//! its own `Env`'s).

use std::sync::Arc;
use svelto_core::FixedEnv;
use svelto_host::{Host, HostConfig, Logger};

use svelto_testkit::clock::{FIXED_NOW as NOW, R0_DATE};

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
    svelto_testkit::clock::assert_commit_and_lock_dates_are_fixed(&url, dir.path());
}
