//! Reads over HTTP compared with Apache: checkout and export (skelta and send-all),
//! `ls`, `cat`, `info`, `log`, `blame`, properties, `mergeinfo`, dated revisions.

use crate::{head, pair, ALL, BULK};

#[test]
fn checkout_and_export_of_every_fixture() {
    for fixture in ALL {
        let pair = pair(fixture);
        let s = pair.scope("checkout_and_export");
        s.both(&["checkout", "{URL}", "wc"]);
        s.compare_wc("wc");
        s.both(&["--config-option", BULK, "checkout", "{URL}", "wc-bulk"]);
        s.compare_wc("wc-bulk");
        s.both(&["export", "{URL}", "exported"]);
        s.compare_tree("exported");
        s.both(&["--config-option", BULK, "export", "{URL}", "exported-bulk"]);
        s.compare_tree("exported-bulk");
    }
}

#[test]
fn checkout_at_every_depth_and_revision() {
    let pair = pair("basic");
    let s = pair.scope("checkout_at_every_depth");
    for depth in ["empty", "files", "immediates", "infinity"] {
        let wc = format!("wc-{depth}");
        s.both(&["checkout", "--depth", depth, "{URL}/trunk", &wc]);
        s.compare_wc(&wc);
    }
    for rev in 0..=head(pair) {
        let wc = format!("wc-r{rev}");
        s.both(&["checkout", "-r", &rev.to_string(), "{URL}", &wc]);
        s.compare_wc(&wc);
    }
    s.both_fails(&["checkout", "{URL}/no-such-dir", "missing"]);
    s.both_fails(&["checkout", "-r", "99", "{URL}", "future"]);
}

#[test]
fn ls_cat_info() {
    for fixture in ALL {
        let pair = pair(fixture);
        pair.both(&["ls", "-R", "-v", "{URL}"]);
        pair.both(&["ls", "--xml", "-R", "{URL}"]);
        pair.both(&["info", "-R", "{URL}"]);
        pair.both(&["info", "--xml", "{URL}"]);
    }
    let basic = pair("basic");
    basic.both(&["ls", "-v", "{URL}/trunk@3"]);
    basic.both(&["ls", "-R", "--search", "*.txt", "{URL}/trunk@8"]);
    basic.both(&["cat", "{URL}/trunk/README.txt"]);
    basic.both(&["cat", "-r", "2", "{URL}/trunk/README.txt"]);
    basic.both_fails(&["cat", "{URL}/trunk"]);
    basic.both_fails(&["cat", "{URL}/trunk/no-such-file"]);
    basic.both_fails(&["ls", "{URL}/trunk/no-such-dir"]);
    basic.both(&["info", "{URL}/trunk@1"]);
    basic.both(&["ls", "{URL}@{2000-01-01}"]);
}

#[test]
fn log_blame_and_properties() {
    for fixture in ALL {
        let pair = pair(fixture);
        pair.both(&["log", "-v", "{URL}"]);
        pair.both(&["log", "-v", "-g", "--xml", "--with-all-revprops", "{URL}"]);
        pair.both(&["proplist", "-v", "-R", "{URL}"]);
        pair.both(&["proplist", "-v", "--show-inherited-props", "{URL}"]);
        pair.both(&["proplist", "--revprop", "-v", "-r", "1", "{URL}"]);
    }
    let basic = pair("basic");
    basic.both(&["log", "-q", "-l", "3", "{URL}/trunk/README.txt"]);
    basic.both(&["log", "--stop-on-copy", "-v", "{URL}/trunk"]);
    basic.both(&["blame", "{URL}/trunk/README.txt"]);
    basic.both(&["blame", "-r", "HEAD:1", "{URL}/trunk/README.txt"]);
    let props = pair("props");
    props.both(&[
        "propget",
        "--show-inherited-props",
        "-v",
        "dirprop",
        "{URL}/trunk/file.txt",
    ]);
    props.both(&[
        "propget",
        "--show-inherited-props",
        "--xml",
        "custom:two",
        "{URL}/trunk",
    ]);
    let merges = pair("mergeinfo");
    merges.both(&["log", "-g", "-v", "{URL}/trunk"]);
    merges.both(&["blame", "-g", "{URL}/trunk/a.txt"]);
    merges.both(&["blame", "-g", "-v", "{URL}/trunk/b.txt"]);
    merges.both(&[
        "blame",
        "-g",
        "-r",
        "2:HEAD",
        "{URL}/branches/feature/a.txt",
    ]);
    merges.both(&["mergeinfo", "{URL}/branches/feature", "{URL}/trunk"]);
    merges.both(&["propget", "-R", "svn:mergeinfo", "{URL}"]);
}

#[test]
fn diffs_between_revisions_and_urls() {
    let pair = pair("basic");
    let h = head(pair).to_string();
    pair.both(&["diff", "-r", &format!("1:{h}"), "{URL}"]);
    pair.both(&["diff", "--summarize", "-r", &format!("2:{h}"), "{URL}"]);
    pair.both(&["diff", "{URL}/trunk@2", "{URL}/trunk@HEAD"]);
}

/// An `svn:author` XML cannot carry (a backspace: Subversion's prop_tests 42): mod_dav_svn
/// leaves the control characters out of the `D:creator-displayname` of PROPFIND and of the
/// `list` report so that the client can parse the answer; Svelto sent the backspace and
/// `svn ls --xml`, `svn ls -v` and `svn info` failed ("Malformed XML"). `svn log` gets the
/// author base64-encoded from both. (`svn info --xml` writes its attributes in hash order:
/// not compared.)
#[test]
fn unsafe_authors_are_filtered_as_apache_filters_them() {
    let pair = crate::users_pair();
    crate::lock_sessions::hook(&pair, "pre-revprop-change", "exit 0\n");
    let mut s = crate::sessions::Script::new(&pair);
    let _scope = pair.scope("badauthor");
    let w = "badauthor";
    s.write("badauthor/.keep", "");
    let alice = ["--username", "alice", "--password", "apw"];
    let mut run = |args: &[&str]| {
        let mut all: Vec<&str> = args[..1].to_vec();
        all.extend_from_slice(&alice);
        all.extend_from_slice(&args[1..]);
        let out = s.run(w, "svn", &all);
        assert!(out.success(), "svn {}:\n{out}", all.join(" "));
    };
    run(&["mkdir", "-m", "d", "{URL}/ba"]);
    run(&[
        "propset",
        "--revprop",
        "-r",
        "HEAD",
        "svn:author",
        "foo\u{8}bar\tx",
        "{URL}",
    ]);
    run(&["ls", "--xml", "{URL}"]);
    run(&["ls", "-v", "{URL}"]);
    run(&["info", "{URL}/ba"]);
    run(&["log", "--xml", "-r", "HEAD", "{URL}"]);
}

/// The caching headers of `GET`s as mod_dav_svn sends them (Subversion's mod_dav_svn_tests
/// 1 and 7): a public URL's file or directory has `Last-Modified` (its created revision's
/// date: wget and curl keep it as the file's time) and `Cache-Control: max-age=0` (the
/// answer changes with the youngest revision); a versioned URL's file a week's
/// `max-age` and no `Last-Modified`; a versioned directory `max-age=0`. (mod_dav_svn's
/// `?p=PEG` and `?r=REV` queries: `public_queries_match_apache`.)
#[test]
fn get_caching_headers_match_apache() {
    let pair = pair("basic");
    let h = head(pair);
    let cases = [
        "/trunk/README.txt".to_string(),
        "/trunk/".to_string(),
        "/".to_string(),
        format!("/!svn/rvr/{h}/trunk/README.txt"),
        format!("/!svn/rvr/{h}/trunk/"),
    ];
    for rel in &cases {
        let [apache, svelto] = [0, 1].map(|i| {
            let (addr, path) = crate::addr_and_path(pair, i);
            let (status, text) =
                crate::raw_request(&addr, "GET", &format!("{path}{rel}"), &[], b"");
            let head = text
                .split("\r\n\r\n")
                .next()
                .unwrap_or("")
                .to_ascii_lowercase();
            let mut caching: Vec<String> = head
                .lines()
                .filter(|l| l.starts_with("cache-control:") || l.starts_with("last-modified:"))
                .map(|l| l.trim().to_string())
                .collect();
            caching.sort();
            (status, caching)
        });
        assert_eq!(apache.0, 200, "GET {rel}: Apache answered {apache:?}");
        assert_eq!(apache, svelto, "GET {rel}: Apache, then Svelto");
    }
}

/// mod_dav_svn's "universal" URLs, `path?p=PEG&r=REV` (Subversion's mod_dav_svn_tests 1):
/// GETs of files and directories pegged or not, followed back through copies and renames
/// (a 301 when pegged, else a 302, to `PATH?p=REV`), the directory redirect keeping the
/// query, pegged listings whose links carry the peg, and the queries mod_dav_svn refuses
/// (400), finds nothing for (404) or reads oddly (`P=`, `p=r2`, `p=2x`, repeated keys):
/// status, `Location`, caching headers, ETag and body as Apache's; PROPFINDs of the same
/// URLs name the same versions.
#[test]
fn public_queries_match_apache() {
    let pair = pair("copies");
    let h = head(pair);
    let mut cases: Vec<String> = [
        "/trunk/main-copy.c?p=7&r=6",
        "/trunk/main-copy.c?r=2",
        "/trunk/main-copy.c?p=7&r=1",
        "/trunk/main-copy.c?p=7",
        "/trunk/lib2/a.c?p=9&r=3",
        "/trunk/lib2/added.c?p=9&r=3",
        "/trunk/lib/a.c?p=1",
        "/trunk/lib/a.c?p=2",
        "/trunk/lib/a.c?r=1",
        "/trunk/lib/a.c?p=1&r=1",
        "/trunk/lib/a.c?P=2",
        "/trunk/lib/a.c?p=r2",
        "/trunk/lib/a.c?p=2x",
        "/trunk/lib/a.c?p=1&p=2",
        "/trunk/lib/a.c?foo=1",
        "/trunk/lib/a.c?kw=1&p=2",
        "/trunk/lib/a.c?p=-1",
        "/trunk/lib/a.c?r=5&p=2",
        "/trunk/lib/a.c?p=r",
        "/trunk/?p=1",
        "/trunk/?p=3&r=1",
        "/trunk?p=1",
        "/trunk?r=2",
        "/branches/feature/?p=6",
        "/trunk/lib2/?p=9&r=3",
        "/?p=3",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    cases.push(format!("/trunk/lib/a.c?p={}", h + 1));
    cases.push(format!("/trunk/?r={h}"));
    for rel in &cases {
        let [apache, svelto] = [0, 1].map(|i| {
            let (addr, path) = crate::addr_and_path(pair, i);
            let (status, text) =
                crate::raw_request(&addr, "GET", &format!("{path}{rel}"), &[], b"");
            let (head, body) = crate::head_and_body(&text);
            let mut headers: Vec<String> = head
                .lines()
                .skip(1)
                .map(|l| l.trim().replace(&addr, "HOST"))
                .filter(|l| {
                    let l = l.to_ascii_lowercase();
                    [
                        "cache-control:",
                        "last-modified:",
                        "location:",
                        "etag:",
                        "content-type:",
                    ]
                    .iter()
                    .any(|h| l.starts_with(h))
                })
                .map(|l| match l.split_once(':') {
                    Some((n, v)) => format!("{}:{v}", n.to_ascii_lowercase()),
                    None => l,
                })
                .collect();
            headers.sort();
            let body: Vec<String> = body
                .replace(&addr, "HOST")
                .lines()
                .filter(|l| !l.contains("Powered by"))
                .map(str::to_string)
                .collect();
            (status, headers, body)
        });
        assert_eq!(apache, svelto, "GET {rel}: Apache, then Svelto");
    }
    // PROPFIND of the same URLs: the same status, and the same versions named.
    for rel in &cases {
        let [apache, svelto] = [0, 1].map(|i| {
            let (addr, path) = crate::addr_and_path(pair, i);
            let (status, text) = crate::raw_request(
                &addr,
                "PROPFIND",
                &format!("{path}{rel}"),
                &[b"Depth: 0"],
                b"",
            );
            let named: Vec<String> = ["version-name>", "getetag>", "D:href>"]
                .iter()
                .filter_map(|tag| {
                    let v = text.split(tag).nth(1)?.split('<').next()?;
                    Some(v.replace("&quot;", "\""))
                })
                .collect();
            (status, if status == 207 { named } else { Vec::new() })
        });
        assert_eq!(apache, svelto, "PROPFIND {rel}: Apache, then Svelto");
    }
}

/// mod_dav_svn's `?kw=1`: a file's `GET` with the keywords its `svn:keywords` names expanded
/// (revision, author, dates, URLs as the client asked for them), as Apache answers, on the
/// eol-keywords fixture: the file with every fixed keyword (r2 and r3), with only `Id`
/// (the youngest), a file with keyword-like text but no property, `kw=0`, a key in
/// capitals, and an older revision reached by a redirect that keeps `kw=1`.
#[test]
fn keywords_expanded_on_request_as_apache_does() {
    let pair = pair("eol-keywords");
    let cases = [
        "/trunk/keywords.txt?kw=1",
        "/trunk/keywords.txt?kw=1&p=2",
        "/trunk/keywords.txt?p=3&kw=1",
        "/trunk/keywords.txt?KW=1&p=3",
        "/trunk/keywords.txt?kw=0&p=3",
        "/trunk/keywords.txt?p=3",
        "/trunk/keywords.txt?kw=1&r=2",
        "/trunk/no-prop.txt?kw=1",
        "/trunk/native.txt?kw=1",
    ];
    let mut expanded = 0;
    for rel in cases {
        let [apache, svelto] = [0, 1].map(|i| {
            let (addr, path) = crate::addr_and_path(pair, i);
            let (status, text) =
                crate::raw_request(&addr, "GET", &format!("{path}{rel}"), &[], b"");
            let (head, body) = crate::head_and_body(&text);
            let location: Vec<String> = head
                .lines()
                .filter_map(|l| l.split_once(':'))
                .filter(|(name, _)| name.eq_ignore_ascii_case("location"))
                .map(|(_, v)| v.trim().replace(&addr, "HOST").replace(&path, "PATH"))
                .collect();
            let body = body.replace(&addr, "HOST").replace(&path, "PATH");
            (
                status,
                location,
                if status == 200 { body } else { String::new() },
            )
        });
        assert_eq!(apache, svelto, "GET {rel}: Apache, then Svelto");
        if apache.2.contains("$Id: keywords.txt") {
            expanded += 1;
        }
    }
    // The fixture's file does carry expanded keywords in some of these answers.
    assert!(expanded >= 3, "{expanded} answers with $Id expanded");
}
