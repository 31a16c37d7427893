//! Writes over HTTP compared with Apache beyond the commit sessions (`commit.rs`): hooks
//! and revision property changes, request bounds, bad commit requests, refused changes.

use crate::commit::writable_http_pair;
use crate::sessions::{self, Script};
use svelto_testkit::{Pair, Run};

/// Installs hook `name` (a shell script) in both repositories, readable and runnable by
/// whoever Apache's children run as.
fn install(pair: &Pair, name: &str, script: &str) {
    for repo in [pair.reference_repo(), pair.subject_repo()] {
        let p = repo.join("hooks").join(name);
        std::fs::write(&p, script).expect("write hook");
        Run::new("chmod").arg("a+rx").arg(&p).success();
    }
}

fn remove(pair: &Pair, name: &str) {
    for repo in [pair.reference_repo(), pair.subject_repo()] {
        let _ = std::fs::remove_file(repo.join("hooks").join(name));
    }
}

/// Hooks over HTTP as through Apache: revision property changes refused without a
/// pre-revprop-change hook, allowed with one, refused by one with its message; atomic
/// changes; start-commit and pre-commit refusals reaching the client; a failing
/// post-commit hook reported as a warning after the commit.
#[test]
fn hooks_and_revision_property_changes() {
    let pair = writable_http_pair("basic");
    let mut s = Script::new(&pair);
    let _scope = pair.scope("hooks");
    let w = "hooks";
    s.svn_fails(
        w,
        &[
            "propset",
            "--revprop",
            "-r",
            "1",
            "svn:log",
            "new log",
            "{URL}",
        ],
    );
    install(&pair, "pre-revprop-change", "#!/bin/sh\nexit 0\n");
    s.svn(
        w,
        &[
            "propset",
            "--revprop",
            "-r",
            "1",
            "svn:log",
            "new log",
            "{URL}",
        ],
    );
    s.svn(
        w,
        &["propset", "--revprop", "-r", "2", "team", "blue", "{URL}"],
    );
    s.svn(w, &["propdel", "--revprop", "-r", "2", "team", "{URL}"]);
    s.svn_fails(
        w,
        &["propset", "--revprop", "-r", "99", "team", "x", "{URL}"],
    );
    install(
        &pair,
        "pre-revprop-change",
        "#!/bin/sh\necho \"no changes to $5 of r$2 by ${3:-nobody}\" >&2\nexit 1\n",
    );
    s.svn_fails(
        w,
        &[
            "propset",
            "--revprop",
            "-r",
            "1",
            "svn:log",
            "again",
            "{URL}",
        ],
    );
    s.svn(w, &["log", "-r", "1:2", "{URL}"]);
    install(
        &pair,
        "start-commit",
        "#!/bin/sh\necho 'the repository is frozen' >&2\nexit 1\n",
    );
    s.svn_fails(w, &["mkdir", "-m", "frozen", "{URL}/frozen"]);
    // The capabilities start-commit is given: mod_dav_svn passes `mergeinfo` only (the
    // stock client announces depth, mergeinfo and log-revprops).
    install(
        &pair,
        "start-commit",
        "#!/bin/sh\necho \"user [$2] capabilities [$3]\" >&2\nexit 1\n",
    );
    s.svn_fails(w, &["mkdir", "-m", "caps", "{URL}/caps"]);
    remove(&pair, "start-commit");
    install(
        &pair,
        "pre-commit",
        "#!/bin/sh\necho 'commits need a ticket' >&2\nexit 1\n",
    );
    s.svn_fails(w, &["mkdir", "-m", "no ticket", "{URL}/refused"]);
    remove(&pair, "pre-commit");
    install(
        &pair,
        "post-commit",
        "#!/bin/sh\necho 'the mailer broke' >&2\nexit 3\n",
    );
    s.svn(w, &["mkdir", "-m", "post fails", "{URL}/post"]);
    s.svn(w, &["log", "-v", "-l", "1", "{URL}"]);
    s.assert_same_repositories();
}

/// A file larger than `--max-request-size` (16 MiB) is committed as through Apache: a
/// PUT's svndiff is applied as it arrives, not collected under the request bound.
#[test]
fn files_past_the_request_bound_are_committed() {
    let pair = writable_http_pair("basic");
    let mut s = Script::new(&pair);
    let _scope = pair.scope("huge");
    let big = sessions::noise(20 << 20, 5);
    for i in 0..2 {
        std::fs::write(pair.work(i).join("huge/huge.bin"), &big).expect("write huge.bin");
    }
    s.svn(
        "huge",
        &["import", "-m", "huge", "huge.bin", "{URL}/huge.bin"],
    );
    s.svn("huge", &["checkout", "{URL}", "wc"]);
    for i in 0..2 {
        let got = std::fs::read(pair.work(i).join("huge/wc/huge.bin")).expect("read");
        assert!(
            got == big,
            "{}: the checked-out file differs",
            pair.labels()[i]
        );
    }
    s.assert_same_repositories();
}

/// Bad commit requests get clear HTTP errors and change nothing: malformed skels, unknown
/// POST requests, unknown transactions, malformed svndiff and XML, a PUT outside any
/// transaction, a COPY to nowhere, a MERGE of nothing.
#[test]
fn bad_commit_requests_get_clear_errors() {
    let pair = writable_http_pair("basic");
    // Each request on a connection of its own, into one transaction (through a cluster's
    // balancer, to any front end).
    let (addr, _) = crate::addr_and_path(&pair, 1);
    let repo = "/svn/basic";
    let req = |method: &str, path: &str, headers: &[&str], body: &[u8]| {
        let headers: Vec<&[u8]> = headers.iter().map(|h| h.as_bytes()).collect();
        crate::raw_request(&addr, method, path, &headers, body)
    };
    let me = format!("{repo}/!svn/me");
    for body in [
        &b"( create-txn"[..],
        b"",
        b"create-txn",
        b"(99 x)",
        b"(((((",
    ] {
        let (status, text) = req("POST", &me, &[], body);
        assert_eq!(status, 400, "{body:?}: {text}");
        assert!(text.contains("Malformatted request skel"), "{text}");
    }
    let (status, text) = req("POST", &me, &[], b"( frobnicate )");
    assert_eq!(status, 400, "{text}");
    assert!(
        text.contains("Unsupported POST request type 'frobnicate'"),
        "{text}"
    );
    for (method, path) in [
        ("PUT", format!("{repo}/!svn/txr/0-nope/x")),
        ("MKCOL", format!("{repo}/!svn/txr/0-nope/x")),
        ("DELETE", format!("{repo}/!svn/txn/0-nope")),
    ] {
        let (status, text) = req(method, &path, &[], b"");
        assert_eq!(status, 404, "{method} {path}: {text}");
        assert!(text.contains("No such transaction '0-nope'"), "{text}");
    }
    let (status, text) = req("PUT", &format!("{repo}/trunk/x"), &[], b"text");
    assert_eq!(status, 405, "{text}");
    // A real transaction, then bad requests into it.
    let (status, text) = req("POST", &me, &[], b"( create-txn )");
    assert_eq!(status, 201, "{text}");
    let txn = text
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("svn-txn-name")
                .then(|| v.trim().to_string())
        })
        .unwrap_or_else(|| panic!("no SVN-Txn-Name in {text}"));
    let txr = format!("{repo}/!svn/txr/{txn}");
    let svndiff = ["Content-Type: application/vnd.svn-svndiff"];
    let (status, text) = req(
        "PUT",
        &format!("{txr}/new.txt"),
        &svndiff,
        b"SVN\x00\xff\xff\xff",
    );
    assert!(status == 400 || status == 500, "{text}");
    assert!(text.contains("new.txt"), "{text}");
    let (status, text) = req("PROPPATCH", &format!("{txr}/trunk"), &[], b"<not xml");
    assert_eq!(status, 400, "{text}");
    let (status, text) = req(
        "COPY",
        &format!("{repo}/!svn/rvr/1/trunk"),
        &["Destination: http://x/elsewhere/y"],
        b"",
    );
    assert!(status == 400 || status == 404, "{text}");
    let (status, text) = req(
        "MERGE",
        &format!("{repo}/"),
        &[],
        b"<?xml version=\"1.0\"?><D:merge xmlns:D=\"DAV:\"><D:source><D:href>/svn/basic/!svn/txn/0-nope</D:href></D:source></D:merge>",
    );
    assert_eq!(status, 405, "{text}");
    let (status, _) = req("DELETE", &format!("{repo}/!svn/txn/{txn}"), &[], b"");
    assert_eq!(status, 204);
    // Nothing was committed, and the server still serves.
    let out = pair.client().svn(
        &["info", "--show-item", "revision", &pair.subject_url()],
        pair.dir(),
    );
    assert_eq!(
        out.stdout_text().trim(),
        crate::head(&pair).to_string(),
        "{out}"
    );
}

/// Property changes the repository refuses inside a commit (a PROPPATCH on a transaction
/// node, which mod_dav answers 207 with the property's propstat `500` "Could not execute
/// PROPPATCH."): the client's errors and exit statuses are Apache's, and nothing is
/// committed on either side. (The stock clients check most values themselves first:
/// malformed `svn:mergeinfo`, a bad `svn:eol-style` or CRLF in `svn:` values never reach
/// the server; those checks are compared too.)
#[test]
fn refused_property_changes_in_a_commit() {
    let pair = writable_http_pair("basic");
    let mut s = sessions::Script::new(&pair);
    let _scope = pair.scope("bad-props");
    let w = "bad-props";
    for (name, value, path) in [
        ("svn:mergeinfo", "not mergeinfo", "trunk"),
        ("svn:eol-style", "sideways", "trunk/README.txt"),
        ("svn:entry:foo", "x", "trunk"),
        ("svn:entry:committed-rev", "1", "trunk/README.txt"),
    ] {
        let out = s.run(
            w,
            "svnmucc",
            &[
                "-m", "bad prop", "-U", "{URL}", "propset", name, value, path,
            ],
        );
        assert!(
            !out.success(),
            "svnmucc propset {name} {value:?} {path} succeeded"
        );
    }
    // Several changes in one PROPPATCH (svnmucc sends each node's in one request), the
    // refused one among others that are then not made either.
    s.write("bad-props/f.txt", "f\n");
    let out = s.run(
        w,
        "svnmucc",
        &[
            "-m",
            "bad props",
            "-U",
            "{URL}",
            "propset",
            "fine",
            "yes",
            "trunk",
            "propset",
            "svn:entry:uuid",
            "x",
            "trunk",
            "propdel",
            "svn:ignore",
            "trunk",
            "put",
            "f.txt",
            "trunk/f.txt",
        ],
    );
    assert!(
        out.stderr_text().contains("Could not execute PROPPATCH"),
        "{}",
        out.stderr_text()
    );
    s.svn(w, &["log", "-q", "-l", "1", "{URL}"]);
    s.assert_same_repositories();
}

/// Commits of changes made against versions deleted or changed since (Subversion's
/// commit_tests 30 over HTTP): an edited file deleted meanwhile, a deleted file edited
/// meanwhile, a property set on a deleted directory, each refused as Apache refuses it
/// (an edited file the transaction lacks: mod_dav_svn's out-of-date check finds no created
/// revision, "File not found", where Svelto said "Base checksum mismatch").
#[test]
fn changes_to_versions_deleted_since_are_refused_as_apache_refuses_them() {
    let pair = writable_http_pair("basic");
    let mut s = Script::new(&pair);
    let _scope = pair.scope("gone");
    let w = "gone";
    s.svn(w, &["mkdir", "-m", "dir", "{URL}/gone", "{URL}/gone/d"]);
    s.write("gone/src/chi", "chi\n");
    s.write("gone/src/omega", "omega\n");
    s.svn(w, &["import", "-m", "files", "src", "{URL}/gone/f"]);
    s.svn(w, &["checkout", "{URL}/gone", "wc1"]);
    s.svn(w, &["checkout", "{URL}/gone", "wc2"]);
    s.svn(w, &["rm", "wc1/f/chi", "wc1/d"]);
    s.append("gone/wc1/f/omega", "more omega\n");
    s.svn(w, &["commit", "-m", "first", "wc1"]);
    s.append("gone/wc2/f/chi", "more chi\n");
    s.svn_fails(w, &["commit", "-m", "edit deleted", "wc2/f/chi"]);
    s.svn(w, &["rm", "wc2/f/omega"]);
    s.svn_fails(w, &["commit", "-m", "delete edited", "wc2/f/omega"]);
    s.svn(w, &["propset", "p", "v", "wc2/d"]);
    s.svn_fails(w, &["commit", "-m", "prop on deleted", "wc2/d"]);
    s.assert_same_repositories();
}

/// The `D:status` codes and `D:responsedescription`s of a PROPPATCH's 207 answer, in order
/// (Apache writes `(status)` where a reason phrase goes and a newline before each
/// description).
fn propstats(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for part in text.split("<D:propstat>").skip(1) {
        let status = part
            .split("<D:status>HTTP/1.1 ")
            .nth(1)
            .and_then(|s| s.get(..3))
            .unwrap_or("")
            .to_string();
        let why = part
            .split("<D:responsedescription>")
            .nth(1)
            .and_then(|s| s.split("</D:responsedescription>").next())
            .unwrap_or("")
            .trim()
            .to_string();
        out.push((status, why));
    }
    out
}

/// Revision property values the repository refuses (Subversion's prop_tests 26 over HTTP:
/// a bogus `svn:date`), and refused changes among others in one PROPPATCH of a revision:
/// the client prints what it prints against Apache ("Wrong or unexpected property value",
/// where Svelto's message was empty), and each change's status and description in the
/// 207 answer are Apache's (the refused one 500 with the error's first message, every
/// other one 424), the changes made before the refused one kept on both.
#[test]
fn refused_revision_property_values_are_answered_as_apache_answers_them() {
    let pair = writable_http_pair("basic");
    install(&pair, "pre-revprop-change", "#!/bin/sh\nexit 0\n");
    let mut s = Script::new(&pair);
    let _scope = pair.scope("bad-revprops");
    let w = "bad-revprops";
    for (name, value) in [
        ("svn:date", "Sat May 10 12:12:31 2008"),
        ("svn:date", ""),
        ("svn:date", "2008-05-10T12:12:31.000000Z"),
    ] {
        s.run(
            w,
            "svn",
            &["propset", "--revprop", "-r", "0", name, value, "{URL}"],
        );
    }
    let out = s.svn_fails(
        w,
        &[
            "propset",
            "--revprop",
            "-r",
            "1",
            "svn:date",
            "bogus",
            "{URL}",
        ],
    );
    assert!(
        out.stderr_text()
            .contains("E175008: Wrong or unexpected property value"),
        "{}",
        out.stderr_text()
    );
    let svn = "http://subversion.tigris.org/xmlns/svn/";
    let custom = "http://subversion.tigris.org/xmlns/custom/";
    let bodies = [
        format!("<S:date xmlns:S=\"{svn}\">bad</S:date>"),
        format!("<S:log xmlns:S=\"{svn}\">a&#13;\nb</S:log><S:date xmlns:S=\"{svn}\">bad</S:date>"),
        format!(
            "<S:log xmlns:S=\"{svn}\">new log</S:log></D:prop></D:set><D:remove><D:prop>\
             <C:gone xmlns:C=\"{custom}\"/></D:prop></D:remove><D:set><D:prop>\
             <S:date xmlns:S=\"{svn}\">bad</S:date><C:after xmlns:C=\"{custom}\">x</C:after>"
        ),
    ];
    let mut answers = [Vec::new(), Vec::new()];
    for (i, answer) in answers.iter_mut().enumerate() {
        let (addr, path) = crate::addr_and_path(&pair, i);
        for props in &bodies {
            let body = format!(
                "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<D:propertyupdate xmlns:D=\"DAV:\">\
                 <D:set><D:prop>{props}</D:prop></D:set></D:propertyupdate>"
            );
            let (status, text) = crate::raw_request(
                &addr,
                "PROPPATCH",
                &format!("{path}/!svn/bln/2"),
                &[b"Content-Type: text/xml"],
                body.as_bytes(),
            );
            answer.push((status, propstats(&text)));
        }
    }
    assert_eq!(answers[0], answers[1], "Apache, Svelto");
    assert_eq!(answers[1][2].1.len(), 4, "{:?}", answers[1]);
    s.svn(w, &["propget", "--revprop", "-r", "2", "svn:log", "{URL}"]);
    s.svn(w, &["log", "-r", "0:2", "{URL}"]);
    s.assert_same_repositories();
}
