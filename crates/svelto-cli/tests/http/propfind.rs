//! Raw `PROPFIND`s compared with Apache + mod_dav_svn: depth 0 and 1 on a repository's
//! public URLs, on protocol v2's `!svn/rvr/N/path` and on v1's `!svn/bc/N/path` (which
//! mod_dav_svn answers with `bc` hrefs: the URI it was asked), over every directory and
//! file of three fixtures (one of odd names), all properties and a list of ra_serf's: the
//! statuses and each `D:response` (hrefs and properties) the same XML; members are
//! compared as a set (mod_dav_svn lists a directory in hash order).

use crate::{addr_and_path, head, pair};

/// What ra_serf asks for (a checkout's and `svn info`'s properties) and a property
/// neither side has.
const SOME_PROPS: &str = "<?xml version=\"1.0\" encoding=\"utf-8\"?><propfind xmlns=\"DAV:\"><prop><resourcetype xmlns=\"DAV:\"/><getcontentlength xmlns=\"DAV:\"/><version-name xmlns=\"DAV:\"/><creationdate xmlns=\"DAV:\"/><creator-displayname xmlns=\"DAV:\"/><checked-in xmlns=\"DAV:\"/><baseline-relative-path xmlns=\"http://subversion.tigris.org/xmlns/dav/\"/><md5-checksum xmlns=\"http://subversion.tigris.org/xmlns/dav/\"/><repository-uuid xmlns=\"http://subversion.tigris.org/xmlns/dav/\"/><no-such-prop xmlns=\"urn:x\"/></prop></propfind>";

/// Only a property neither side has: mod_dav answers its 404 propstat alone, without an
/// empty 200 one (Subversion's mod_dav_svn_tests 4).
const ONLY_MISSING: &str = "<?xml version=\"1.0\" encoding=\"utf-8\"?><propfind xmlns=\"DAV:\"><prop><no-such-prop xmlns=\"urn:x\"/></prop></propfind>";

/// A PROPFIND's status and its `D:response`s (each with the side's repository path
/// replaced by `{REPO}`), sorted.
fn propfind(
    pair: &svelto_testkit::Pair,
    i: usize,
    rel: &str,
    depth: &str,
    body: &str,
) -> (u16, Vec<String>) {
    let (addr, path) = addr_and_path(pair, i);
    let depth = format!("Depth: {depth}");
    // As the stock client: mod_dav_svn gives other clients a file's getcontenttype from
    // the response's own Content-Type (text/xml) where it has no svn:mime-type.
    let mut headers: Vec<&[u8]> = vec![
        depth.as_bytes(),
        b"User-Agent: SVN/1.14.2 (x86_64-pc-linux-gnu) serf/1.3.9",
    ];
    if !body.is_empty() {
        headers.push(b"Content-Type: text/xml");
    }
    let (status, text) = crate::raw_request(
        &addr,
        "PROPFIND",
        &format!("{path}{rel}"),
        &headers,
        body.as_bytes(),
    );
    let (_, body) = crate::head_and_body(&text);
    if std::env::var_os("SHOW_PROPFIND").is_some() {
        eprintln!("SIDE {i} {rel} {depth}:\n{text}");
    }
    let mut responses: Vec<String> = body
        .split("<D:response")
        .skip(1)
        .map(|r| {
            // After the start tag (Apache declares namespaces on it, Svelto on the root).
            let r = r.split_once('>').map_or("", |(_, r)| r);
            without_g_declarations(r.split("</D:response>").next().unwrap_or(""))
                .replace(&path, "{REPO}")
        })
        .collect();
    responses.sort();
    (status, responses)
}

/// `text` without the declarations of the `gN` prefixes a 404 propstat names its
/// properties with (Apache declares them on the `D:response` start tag, Svelto on each).
fn without_g_declarations(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(" xmlns:g") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        // xmlns:gN="..."
        let end = after
            .find('"')
            .and_then(|q| after[q + 1..].find('"').map(|e| q + 1 + e + 1))
            .unwrap_or(after.len());
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

/// The href of a response.
fn href(response: &str) -> &str {
    response
        .split_once("<D:href>")
        .and_then(|(_, r)| r.split_once("</D:href>"))
        .map_or("", |(h, _)| h)
}

#[test]
fn propfinds_on_public_rvr_and_bc_urls_match_apache() {
    let mut compared = 0;
    let mut bc_hrefs = 0;
    for fixture in ["basic", "names", "props"] {
        let pair = pair(fixture);
        let h = head(pair);
        let mut roots = vec![
            String::new(),
            format!("/!svn/rvr/{h}"),
            format!("/!svn/bc/{h}"),
        ];
        if h > 1 {
            roots.push(format!("/!svn/bc/{}", h - 1));
            roots.push(format!("/!svn/rvr/{}", h - 1));
        }
        for root in roots {
            // Every resource under the root, found through Apache's depth-1 answers.
            let mut todo = vec![format!("{root}/")];
            let mut seen = 0;
            while let Some(rel) = todo.pop() {
                seen += 1;
                assert!(seen < 500, "{fixture}: too many resources under {root}");
                for depth in ["0", "1"] {
                    for body in ["", SOME_PROPS, ONLY_MISSING] {
                        let answers: Vec<_> = (0..2)
                            .map(|i| propfind(pair, i, &rel, depth, body))
                            .collect();
                        let what = format!(
                            "{fixture}: PROPFIND {rel} depth {depth}, {}",
                            match body {
                                "" => "allprop",
                                ONLY_MISSING => "a missing property",
                                _ => "some props",
                            }
                        );
                        assert_eq!(
                            answers[0].0, 207,
                            "{what}: Apache answered\n{:?}",
                            answers[0]
                        );
                        // The same XML: Svelto writes DAV:supportedlock and
                        // DAV:lockdiscovery with its live properties' prefix, and quotes
                        // escaped in text, where Apache writes D: and bare quotes; the
                        // same lines, in any order.
                        let same_xml = |a: &(u16, Vec<String>)| -> (u16, Vec<String>) {
                            let mut r: Vec<String> =
                                a.1.iter()
                                    .map(|r| {
                                        let r = r
                                            .replace("lp1:supportedlock>", "D:supportedlock>")
                                            .replace("lp1:lockdiscovery", "D:lockdiscovery")
                                            .replace("&quot;", "\"");
                                        // Its lines as a set: Apache lists a node's
                                        // properties in hash order.
                                        let mut lines: Vec<&str> = r.lines().collect();
                                        lines.sort();
                                        lines.join("\n")
                                    })
                                    .collect();
                            r.sort();
                            (a.0, r)
                        };
                        let (a, b) = (same_xml(&answers[0]), same_xml(&answers[1]));
                        if a != b {
                            let first = a.1.iter().zip(&b.1).find(|(x, y)| x != y);
                            panic!(
                                "{what}: Apache, then Svelto differ (statuses {} {}, {} and {} responses), first at:\n{first:#?}",
                                a.0,
                                b.0,
                                a.1.len(),
                                b.1.len()
                            );
                        }
                        compared += 1;
                        if depth == "1" && body.is_empty() {
                            for r in &answers[0].1 {
                                let href = href(r);
                                if root.contains("/bc/") {
                                    assert!(href.contains("/!svn/bc/"), "{what}: {href}");
                                    bc_hrefs += 1;
                                }
                                // The href as XML text: the URL path it names.
                                let child = href
                                    .trim_start_matches("{REPO}")
                                    .replace("&lt;", "<")
                                    .replace("&gt;", ">")
                                    .replace("&quot;", "\"")
                                    .replace("&amp;", "&");
                                if child.trim_end_matches('/') != rel.trim_end_matches('/') {
                                    todo.push(child);
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    assert!(compared > 100, "only {compared} PROPFINDs compared");
    assert!(bc_hrefs > 10, "only {bc_hrefs} bc hrefs seen");
}
