//! The HTTP front end takes the time from the host's `Env`, never from the clock: served
//! with a fixed clock set 25 years back, a commit's `svn:date`, a lock's creation date (as
//! the real `svn` client reads them over HTTP) and a web page's "how long ago" are that
//! clock's. A direct clock read left on one of these paths gives today's date instead (the
//! service stamps the latest of the date a front end passes and its own `Env`'s).

use std::io::{Read, Write};
use std::sync::Arc;
use svelto_core::FixedEnv;
use svelto_host::{Host, HostConfig, Logger};

use svelto_testkit::clock::{FIXED_NOW as NOW, R0_DATE};

/// The body of an anonymous `GET path` (HTTP/1.1, the connection closed after it).
fn get(addr: std::net::SocketAddr, path: &str) -> String {
    let mut s = std::net::TcpStream::connect(addr).expect("connect");
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .expect("request");
    let mut answer = Vec::new();
    s.read_to_end(&mut answer).expect("answer");
    let answer = String::from_utf8_lossy(&answer).into_owned();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    answer
}

#[test]
fn commit_and_lock_dates_and_page_ages_come_from_the_hosts_env() {
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
        "[general]\nanon-access = read\nauth-access = write\n",
    )
    .expect("svnserve.conf");
    // joe's password `joepw` as `htpasswd -s` writes it.
    let htpasswd = dir.path().join("htpasswd");
    std::fs::write(&htpasswd, "joe:{SHA}tqd/EnzxT9cLHeUnWSAYDUgdFQs=\n").expect("htpasswd");
    let host = Host::new(
        HostConfig::new(root),
        Logger::disabled(),
        backend,
        Arc::new(FixedEnv::new(NOW)),
    );
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("address");
    let config = svelto_http::HttpConfig {
        auth_file: Some(htpasswd),
        ..svelto_http::HttpConfig::new()
    };
    let _server = svelto_http::spawn(host, listener, config).expect("serve");
    let url = format!("http://{addr}/r");
    svelto_testkit::clock::assert_commit_and_lock_dates_are_fixed(&url, dir.path());

    // A web page's ages are counted from the injected time: the change is 0 seconds old.
    let page = get(addr, "/r/!svn/web/browse/HEAD/");
    assert!(page.contains("0 seconds ago"), "{page}");
    assert!(!page.contains("years ago"), "{page}");
}
