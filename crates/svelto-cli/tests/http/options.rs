//! `OPTIONS` compared with Apache + mod_dav_svn: the `Allow:` header mod_dav lists for each
//! kind of resource (the repository root, a directory, a file, a path the revision does not
//! have, a deleted path still locked: mod_dav's lock-null resource, the `!svn/` resources
//! of HTTP protocol v1 and v2, an open transaction's root, nodes and new paths), for an
//! anonymous reader and for a user who may write, without a body (no body in the answer)
//! and with ra_serf's; revisions and transactions that do not exist answered with
//! mod_dav_svn's errors.

// Each request on a connection of its own, into transactions: through a cluster's
// balancer, they reach any front end (docs/cluster.md, "HTTP transactions").
use crate::addr_and_path;
use crate::{basic, users_pair};

/// ra_serf's `OPTIONS` body.
const ACTIVITY: &str = "<?xml version=\"1.0\" encoding=\"utf-8\"?><D:options xmlns:D=\"DAV:\"><D:activity-collection-set></D:activity-collection-set></D:options>";

/// The status, the `Allow:` header and whether the body is empty, of an `OPTIONS` of
/// `rel` (under the repository URL) on side `i`.
fn options(
    pair: &svelto_testkit::Pair,
    i: usize,
    rel: &str,
    login: Option<&str>,
    body: &str,
) -> (u16, Option<String>, bool) {
    let (addr, path) = addr_and_path(pair, i);
    let mut headers: Vec<&[u8]> = Vec::new();
    if let Some(l) = login {
        headers.push(l.as_bytes());
    }
    let (status, text) = crate::raw_request(
        &addr,
        "OPTIONS",
        &format!("{path}{rel}"),
        &headers,
        body.as_bytes(),
    );
    let (head, rest) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let allow = head.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.trim()
            .eq_ignore_ascii_case("allow")
            .then(|| v.trim().to_string())
    });
    let no_type = !head
        .lines()
        .any(|l| l.to_ascii_lowercase().starts_with("content-type:"));
    (status, allow, rest.is_empty() && no_type)
}

/// Opens a transaction on side `i` (`POST` of `create-txn` to `!svn/me` as alice) and
/// returns its name.
fn create_txn(pair: &svelto_testkit::Pair, i: usize, alice: &str) -> String {
    let (addr, path) = addr_and_path(pair, i);
    let (status, text) = crate::raw_request(
        &addr,
        "POST",
        &format!("{path}/!svn/me"),
        &[alice.as_bytes(), b"Content-Type: application/vnd.svn-skel"],
        b"( create-txn )",
    );
    assert_eq!(status, 201, "create-txn on side {i}:\n{text}");
    text.lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim()
                .eq_ignore_ascii_case("svn-txn-name")
                .then(|| v.trim().to_string())
        })
        .unwrap_or_else(|| panic!("no SVN-Txn-Name in\n{text}"))
}

#[test]
fn allow_headers_match_apache() {
    let pair = users_pair();
    let s = pair.scope("options");
    let alice_args = ["--username", "alice", "--password", "apw"];
    let with = |args: &[&str]| -> Vec<String> {
        let mut all = vec![args[0].to_string()];
        all.extend(alice_args.iter().map(|a| a.to_string()));
        all.extend(args[1..].iter().map(|a| a.to_string()));
        all
    };
    let run = |args: &[&str]| {
        let all = with(args);
        let refs: Vec<&str> = all.iter().map(String::as_str).collect();
        s.both(&refs);
    };
    for i in 0..2 {
        std::fs::write(s.path(i).join("f.txt"), "f\n").expect("write f.txt");
    }
    run(&["import", "-m", "f", "f.txt", "{URL}/o/f.txt"]);
    run(&["import", "-m", "g", "f.txt", "{URL}/o/g.txt"]);
    run(&["mkdir", "-m", "d", "{URL}/o/d"]);
    run(&["checkout", "{URL}/o", "wc"]);
    // g.txt deleted with its lock kept: a lock-null resource at HEAD.
    run(&["lock", "wc/g.txt"]);
    run(&["rm", "wc/g.txt"]);
    run(&["commit", "--no-unlock", "-m", "rm g", "wc"]);
    let head = crate::head(&pair);
    let alice = basic("alice", "apw");
    let txns: Vec<String> = (0..2).map(|i| create_txn(&pair, i, &alice)).collect();
    let mut urls: Vec<String> = [
        "",
        "/",
        "/o",
        "/o/",
        "/o/d",
        "/o/f.txt",
        "/o/g.txt",
        "/o/none",
        "/o/none/deeper",
        "/!svn/me",
        "/!svn/vcc/default",
        "/!svn/rev/0",
        "/!svn/rev/99",
        "/!svn/bln/1",
        "/!svn/bln/99",
        "/!svn/rvr/99/o/f.txt",
        "/!svn/ver/99/o/f.txt",
        "/!svn/txn/1-zz",
        "/!svn/txr/1-zz/o/f.txt",
    ]
    .iter()
    .map(|u| u.to_string())
    .collect();
    for kind in ["rvr", "bc"] {
        for rel in ["", "/o", "/o/d", "/o/f.txt", "/o/g.txt", "/o/none"] {
            urls.push(format!("/!svn/{kind}/{head}{rel}"));
            urls.push(format!("/!svn/{kind}/{}{rel}", head - 1));
        }
    }
    for rel in ["", "/o/d", "/o/f.txt"] {
        urls.push(format!("/!svn/ver/{head}{rel}"));
    }
    for rel in ["", "/o", "/o/f.txt", "/o/g.txt", "/o/new"] {
        urls.push(format!("/!svn/txr/{{TXN}}{rel}"));
    }
    urls.push("/!svn/txn/{TXN}".into());
    let mut checked = 0;
    for url in &urls {
        for login in [None, Some(alice.as_str())] {
            for body in ["", ACTIVITY] {
                let answers: Vec<_> = (0..2)
                    .map(|i| options(&pair, i, &url.replace("{TXN}", &txns[i]), login, body))
                    .collect();
                let what = format!(
                    "OPTIONS {url} ({}, {})",
                    if login.is_some() {
                        "alice"
                    } else {
                        "anonymous"
                    },
                    if body.is_empty() { "no body" } else { "a body" }
                );
                assert_eq!(answers[0], answers[1], "{what}: Apache, then Svelto");
                if answers[0].0 == 200 {
                    let allow = answers[0].1.as_deref().unwrap_or("");
                    assert!(allow.starts_with("OPTIONS"), "{what}: {allow}");
                    checked += 1;
                }
            }
        }
    }
    // Most of them are answered: the comparison is not one of errors.
    assert!(checked > urls.len() * 3, "only {checked} answered");
}
