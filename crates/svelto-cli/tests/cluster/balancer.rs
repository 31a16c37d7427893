//! HTTP commits through a per-request balancer (docs/cluster.md, "HTTP transactions"):
//! Debian's nginx with an upstream of the three front ends, round robin, kept-alive
//! connections to them, so that the requests of one commit reach different front ends; a
//! request of another front end's transaction is forwarded to it. The stock `svn` and
//! `svnmucc` commit through it; a raw commit whose front end is killed between create-txn
//! and MERGE gets a clear answer, and nothing is published.

use std::io::{Read, Write};
use std::time::Duration;

use svelto_testkit::nginx::Nginx;
use svelto_testkit::{Run, Svelto};

use super::{svelto_bin, svn, svnmucc, Rig, IDS};

/// nginx's `upstream svelto` of `servers`: round robin, 8 kept-alive connections.
pub(crate) fn upstream_of(servers: &[Svelto]) -> String {
    let upstream: String = servers
        .iter()
        .map(|s| format!("    server 127.0.0.1:{};\n", s.port()))
        .collect();
    format!("  upstream svelto {{\n{upstream}    keepalive 8;\n  }}\n")
}

/// nginx in front of `servers`: one upstream, round robin, kept-alive HTTP/1.1 connections
/// to the front ends, bodies passed on as they come.
fn balancer(rig: &Rig, servers: &[Svelto]) -> Nginx {
    let dir = rig.dir.path().join("nginx");
    std::fs::create_dir_all(&dir).expect("nginx dir");
    Nginx::start_with_http(
        &dir,
        &upstream_of(servers),
        "    listen 127.0.0.1:{PORT};\n    client_max_body_size 0;\n    location / {\n      \
         proxy_pass http://svelto;\n      proxy_http_version 1.1;\n      \
         proxy_set_header Connection \"\";\n      proxy_set_header Host $http_host;\n      \
         proxy_request_buffering off;\n      proxy_buffering off;\n    }",
    )
}

/// Sends one request on a connection of its own; the status, the headers and the body.
fn raw(port: u16, method: &str, path: &str, headers: &[&str], body: &[u8]) -> (u16, String) {
    let addr = format!("127.0.0.1:{port}");
    let mut stream = std::net::TcpStream::connect(&addr).unwrap_or_else(|e| panic!("{addr}: {e}"));
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\
         User-Agent: SVN/1.14.2 (raw test)\r\nContent-Length: {}\r\n",
        body.len()
    );
    for h in headers {
        head.push_str(h);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).expect("head");
    stream.write_all(body).expect("body");
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let text = String::from_utf8_lossy(&answer).into_owned();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status in {text:?}"));
    (status, text)
}

pub(super) fn header<'t>(answer: &'t str, name: &str) -> Option<&'t str> {
    answer.lines().take_while(|l| !l.is_empty()).find_map(|l| {
        let (n, v) = l.split_once(':')?;
        n.eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

pub(super) fn merge_body(txn: &str) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?><D:merge xmlns:D=\"DAV:\"><D:source>\
         <D:href>/proj/!svn/txn/{txn}</D:href></D:source><D:no-auto-merge/><D:no-checkout/>\
         <D:prop><D:checked-in/><D:version-name/><D:resourcetype/><D:creationdate/>\
         <D:creator-displayname/></D:prop></D:merge>"
    )
}

/// Opens a transaction through `port`: its name and the index of the front end holding it
/// (the id after the name's `_`).
fn create_txn(port: u16) -> (String, usize) {
    let (status, answer) = raw(
        port,
        "POST",
        "/proj/!svn/me",
        &["Content-Type: application/vnd.svn-skel"],
        b"( create-txn )",
    );
    assert_eq!(status, 201, "{answer}");
    let name = header(&answer, "SVN-Txn-Name")
        .unwrap_or_else(|| panic!("no SVN-Txn-Name: {answer}"))
        .to_owned();
    let (_, owner) = name
        .split_once('_')
        .unwrap_or_else(|| panic!("'{name}' names no front end"));
    let at = IDS
        .iter()
        .position(|id| *id == owner)
        .unwrap_or_else(|| panic!("'{name}': no front end '{owner}'"));
    (name, at)
}

fn forwarded_lines(rig: &Rig) -> Vec<String> {
    IDS.iter()
        .flat_map(|id| {
            let log = std::fs::read_to_string(rig.dir.path().join(format!("serve-{id}.log")))
                .unwrap_or_default();
            log.lines()
                .filter(|l| l.contains(": forwarded to "))
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn http_commits_through_a_per_request_balancer() {
    let rig = Rig::prepare(3, &[]);
    let mut servers: Vec<Svelto> = (0..3).map(|i| rig.serve_http(i)).collect();
    let nginx = balancer(&rig, &servers);
    let dir = rig.dir.path();
    let url = format!("http://127.0.0.1:{}/proj", nginx.port());
    let ports: Vec<u16> = servers.iter().map(|s| s.port()).collect();
    let direct = |i: usize| format!("http://127.0.0.1:{}/proj", ports[i]);

    // The stock client's commits through nginx: add (files, a directory, a property, a
    // revision property at commit), modify, delete, copy, a file over 1 MiB.
    let wc = dir.join("wc");
    let wcs = wc.to_str().expect("a UTF-8 path");
    svn(&["checkout", &url, wcs]);
    std::fs::create_dir_all(wc.join("trunk/src")).expect("trunk");
    std::fs::write(wc.join("trunk/README"), "through nginx\n").expect("README");
    std::fs::write(
        wc.join("trunk/src/main.c"),
        "int main(void) { return 0; }\n",
    )
    .expect("main.c");
    svn(&["add", &format!("{wcs}/trunk")]);
    svn(&[
        "propset",
        "svn:eol-style",
        "native",
        &format!("{wcs}/trunk/README"),
    ]);
    let out = svn(&["commit", "-m", "first", "--with-revprop", "team=blue", wcs]);
    assert!(out.contains("Committed revision 1."), "{out}");

    std::fs::write(wc.join("trunk/README"), "through nginx, changed\n").expect("README");
    let big: Vec<u8> = (0..(1536 * 1024u32))
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(wc.join("trunk/big.bin"), &big).expect("big");
    svn(&["add", &format!("{wcs}/trunk/big.bin")]);
    svn(&[
        "copy",
        &format!("{wcs}/trunk/src"),
        &format!("{wcs}/trunk/src2"),
    ]);
    svn(&["rm", &format!("{wcs}/trunk/src/main.c")]);
    svn(&["propset", "owner", "alice", &format!("{wcs}/trunk/src2")]);
    let out = svn(&["commit", "-m", "second", wcs]);
    assert!(out.contains("Committed revision 2."), "{out}");

    // svnmucc: several operations in one commit.
    let text = dir.join("text");
    std::fs::write(&text, "from svnmucc\n").expect("text");
    let out = svnmucc(
        "third",
        &[
            "-U",
            &url,
            "mkdir",
            "tags",
            "cp",
            "2",
            "trunk",
            "tags/one",
            "put",
            text.to_str().expect("a UTF-8 path"),
            "trunk/mucc.txt",
            "propset",
            "color",
            "red",
            "trunk/mucc.txt",
            "rm",
            "trunk/src2/main.c",
        ],
    );
    assert!(out.success(), "{}", out.stderr_text());
    assert!(
        out.stdout_text().contains("r3 committed"),
        "{}",
        out.stdout_text()
    );

    // What was committed, read through each front end directly.
    for (i, id) in IDS.iter().enumerate() {
        let base = direct(i);
        assert_eq!(
            svn(&["cat", &format!("{base}/trunk/README")]),
            "through nginx, changed\n"
        );
        assert_eq!(
            svn(&["cat", &format!("{base}/trunk/mucc.txt")]),
            "from svnmucc\n"
        );
        assert_eq!(
            svn(&["propget", "color", &format!("{base}/trunk/mucc.txt")]),
            "red\n"
        );
        assert_eq!(
            svn(&["propget", "owner", &format!("{base}/tags/one/src2")]),
            "alice\n"
        );
        let got = Run::tool("svn")
            .args(["cat", "--non-interactive", &format!("{base}/trunk/big.bin")])
            .success()
            .stdout;
        assert!(got == big, "big.bin through {id}");
        let ls = svn(&["ls", "-R", &format!("{base}/trunk")]);
        assert!(
            !ls.contains("src/main.c") && !ls.contains("src2/main.c"),
            "{ls}"
        );
        let team = svn(&["propget", "--revprop", "-r", "1", "team", &base]);
        assert_eq!(team, "blue\n");
        let youngest = svn(&["info", "--show-item", "revision", &base]);
        assert_eq!(youngest.trim(), "3");
    }
    // nginx spread the requests: some were forwarded (else this test proves nothing).
    let forwarded = forwarded_lines(&rig);
    assert!(
        !forwarded.is_empty(),
        "no request was forwarded: nginx sent everything to one front end?"
    );
    eprintln!(
        "{} requests forwarded; e.g. {}",
        forwarded.len(),
        forwarded[0]
    );

    // A raw commit, each request through a front end that does not hold the transaction:
    // forwarded, and it commits.
    let (txn, owner) = create_txn(nginx.port());
    let other = (owner + 1) % 3;
    let (status, answer) = raw(
        ports[other],
        "MKCOL",
        &format!("/proj/!svn/txr/{txn}/raw"),
        &[],
        b"",
    );
    assert_eq!(status, 201, "{answer}");
    let (status, answer) = raw(
        ports[(owner + 2) % 3],
        "MERGE",
        "/proj",
        &["Content-Type: text/xml"],
        merge_body(&txn).as_bytes(),
    );
    assert_eq!(status, 200, "{answer}");
    assert!(answer.contains("version-name>4<"), "{answer}");

    // The owner of an open transaction killed between create-txn and MERGE: the MERGE
    // through another front end is told the transaction is gone, and why; nothing is
    // published.
    let (txn, owner) = create_txn(nginx.port());
    let other = (owner + 1) % 3;
    let (status, answer) = raw(
        ports[other],
        "MKCOL",
        &format!("/proj/!svn/txr/{txn}/lost"),
        &[],
        b"",
    );
    assert_eq!(status, 201, "{answer}");
    servers[owner].kill_hard();
    let (status, answer) = raw(
        ports[other],
        "MERGE",
        "/proj",
        &["Content-Type: text/xml"],
        merge_body(&txn).as_bytes(),
    );
    assert_eq!(status, 404, "{answer}");
    assert!(
        answer.contains(&format!("No such transaction '{txn}'"))
            && answer.contains(&format!(
                "front end '{}', which holds it, cannot be reached",
                IDS[owner]
            )),
        "{answer}"
    );
    // Through nginx (whichever front end it picks), a request of that transaction gets the
    // same answer.
    let (status, answer) = raw(
        nginx.port(),
        "PROPPATCH",
        &format!("/proj/!svn/txn/{txn}"),
        &["Content-Type: text/xml"],
        b"<?xml version=\"1.0\"?><D:propertyupdate xmlns:D=\"DAV:\" \
          xmlns:S=\"http://subversion.tigris.org/xmlns/svn/\"><D:set><D:prop>\
          <S:log>x</S:log></D:prop></D:set></D:propertyupdate>",
    );
    assert_eq!(status, 404, "{answer}");
    // Nothing half-published: the survivors say r4, and the repository verifies.
    for i in (0..3).filter(|&i| i != owner) {
        let youngest = svn(&["info", "--show-item", "revision", &direct(i)]);
        assert_eq!(youngest.trim(), "4");
        let ls = svn(&["ls", &direct(i)]);
        assert!(ls.contains("raw/") && !ls.contains("lost"), "{ls}");
    }
    // Commits go on through nginx with two front ends.
    let out = svnmucc("after the kill", &["-U", &url, "mkdir", "after"]);
    assert!(out.success(), "{}", out.stderr_text());
    assert!(
        out.stdout_text().contains("r5 committed"),
        "{}",
        out.stdout_text()
    );
    Run::new(svelto_bin())
        .args(["admin", "verify", "-q", "--cluster"])
        .arg(&rig.files[(owner + 1) % 3])
        .arg("proj")
        .timeout(Duration::from_secs(120))
        .success();
}
