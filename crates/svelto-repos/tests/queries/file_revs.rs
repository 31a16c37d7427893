//! `get_file_revs` against svnserve's `get-file-revs` (every file of the fixtures, both
//! directions, with and without merged revisions) and against `svn blame --xml [-g]`.

use crate::common::{pair, proplist, require_svn_tools, response, Pair, Svnserve};
use std::time::Instant;
use svelto_core::NodeKind;
use svelto_delta::{apply_windows, decode_stream, Limits};
use svelto_fs::StoreError;
use svelto_repos::{
    get_file_revs, FileRev, FileRevsHandler, FileRevsOptions, PropDiff, ReposError,
};
use svelto_wire::Item;

/// One version as either side delivered it; `delta` is the whole svndiff stream.
#[derive(Debug, Clone, PartialEq)]
struct Got {
    path: String,
    rev: u64,
    revprops: Vec<(Vec<u8>, Vec<u8>)>,
    prop_diffs: Vec<PropDiff>,
    merged: bool,
    delta: Option<Vec<u8>>,
}

#[derive(Default)]
struct Collect {
    revs: Vec<Got>,
    ended: usize,
}

impl FileRevsHandler for Collect {
    fn file_rev(&mut self, r: &FileRev<'_>) -> svelto_repos::Result<()> {
        assert_eq!(
            self.ended,
            self.revs.len(),
            "file_rev_end after each version"
        );
        let mut prop_diffs = r.prop_diffs.to_vec();
        prop_diffs.sort();
        self.revs.push(Got {
            path: r.path.to_string(),
            rev: r.rev,
            revprops: r.revprops.clone().into_iter().collect(),
            prop_diffs,
            merged: r.merged,
            delta: r.text_delta.then(Vec::new),
        });
        Ok(())
    }
    fn delta_chunk(&mut self, chunk: &[u8]) -> svelto_repos::Result<()> {
        assert!(
            !chunk.is_empty(),
            "chunks are never empty (the wire ends on one)"
        );
        let last = self.revs.last_mut().expect("a version before its delta");
        last.delta
            .as_mut()
            .expect("delta chunks only when text_delta is set")
            .extend_from_slice(chunk);
        Ok(())
    }
    fn file_rev_end(&mut self) -> svelto_repos::Result<()> {
        self.ended += 1;
        Ok(())
    }
}

type Outcome = Result<Vec<Got>, (u64, String)>;

fn code_of(e: &ReposError) -> u64 {
    match e {
        ReposError::NotFile { .. } => 160017,
        ReposError::NotFound { .. } | ReposError::PathNotFound { .. } => 160013,
        ReposError::Unsupported(_) => 200007,
        ReposError::Store(StoreError::NoSuchRevision(_)) => 160006,
        other => panic!("unexpected error {other}"),
    }
}

fn ours(p: &Pair, path: &str, start: Option<u64>, end: Option<u64>, g: bool, v: u8) -> Outcome {
    let mut c = Collect::default();
    let opts = FileRevsOptions {
        start,
        end,
        include_merged: g,
        svndiff_version: v,
    };
    match get_file_revs(&p.repo, path, &opts, &mut c) {
        Ok(()) => {
            assert_eq!(c.ended, c.revs.len());
            Ok(c.revs)
        }
        Err(e) => Err((code_of(&e), e.to_string())),
    }
}

fn theirs(s: &mut Svnserve, path: &str, start: Option<u64>, end: Option<u64>, g: bool) -> Outcome {
    s.command(
        "get-file-revs",
        vec![
            Item::string(path),
            Item::opt(start.map(Item::Number)),
            Item::opt(end.map(Item::Number)),
            Item::bool(g),
        ],
    );
    let mut revs = Vec::new();
    loop {
        let item = s.read();
        if item.as_word() == Some("done") {
            break;
        }
        let t = item.as_list().expect("file-rev tuple");
        let mut prop_diffs: Vec<PropDiff> = t[3]
            .as_list()
            .expect("prop diffs")
            .iter()
            .map(|d| {
                let d = d.as_list().expect("prop diff");
                let value = d[1].as_list().expect("optional value");
                (
                    d[0].as_string().expect("name").to_vec(),
                    value
                        .first()
                        .map(|v| v.as_string().expect("value").to_vec()),
                )
            })
            .collect();
        prop_diffs.sort();
        let mut delta: Option<Vec<u8>> = None;
        loop {
            let chunk = s.read();
            let chunk = chunk.as_string().expect("delta chunk");
            if chunk.is_empty() {
                break;
            }
            delta.get_or_insert_with(Vec::new).extend_from_slice(chunk);
        }
        revs.push(Got {
            path: String::from_utf8(t[0].as_string().expect("path").to_vec()).expect("utf-8"),
            rev: t[1].as_number().expect("rev"),
            revprops: proplist(&t[2]),
            prop_diffs,
            merged: t[4].as_word() == Some("true"),
            delta,
        });
    }
    response(&s.read()).map(|_| revs)
}

/// The texts the versions' deltas produce, each applied to the one before.
fn texts(revs: &[Got]) -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = Vec::new();
    for r in revs {
        let prev = out.last().cloned().unwrap_or_default();
        let text = match &r.delta {
            Some(d) => {
                let windows = decode_stream(d, &Limits::default()).expect("a valid svndiff stream");
                apply_windows(&windows, &prev).expect("the delta applies to the previous text")
            }
            None => prev,
        };
        out.push(text);
    }
    out
}

/// Compares one request on both sides: the same versions, revision properties, property
/// changes, merge marks, delta presence, and texts.
fn compare(p: &Pair, s: &mut Svnserve, path: &str, start: Option<u64>, end: Option<u64>, g: bool) {
    let what = format!("get-file-revs {path} {start:?} {end:?} g={g}");
    let expected = theirs(s, path, start, end, g);
    let version = (start.unwrap_or(0) % 3) as u8;
    let actual = ours(p, path, start, end, g, version);
    match (expected, actual) {
        (Ok(e), Ok(a)) => {
            let strip = |v: &[Got]| -> Vec<Got> {
                v.iter()
                    .map(|g| Got {
                        delta: g.delta.as_ref().map(|_| Vec::new()),
                        ..g.clone()
                    })
                    .collect()
            };
            assert_eq!(strip(&a), strip(&e), "{what}");
            assert_eq!(texts(&a), texts(&e), "{what}: texts");
            for g in &a {
                if let Some(d) = &g.delta {
                    assert_eq!(&d[..4], &[b'S', b'V', b'N', version], "{what}: header");
                }
            }
        }
        (Err(e), Err(a)) => assert_eq!(a, e, "{what}: error"),
        (e, a) => panic!("{what}: svnserve {e:?}\nsvelto {a:?}"),
    }
}

fn compare_all_files(name: &str) {
    require_svn_tools();
    let p = pair(name);
    let mut s = p.svnserve();
    let head = p.repo.youngest();
    let mid = head / 2;
    let mut requests = 0;
    for path in p.paths(head, NodeKind::File) {
        for (start, end, g) in [
            (Some(0), Some(head), false),
            (Some(0), Some(head), true),
            (Some(head), Some(0), false),
            (Some(mid), Some(head), true),
            (Some(head), Some(mid), false),
            (Some(mid + 1), Some(head - 1), false),
            (None, None, false),
        ] {
            compare(&p, &mut s, &path, start, end, g);
            requests += 1;
        }
    }
    for path in p.paths(mid, NodeKind::File) {
        compare(&p, &mut s, &path, Some(1), Some(mid), true);
        compare(&p, &mut s, &path, Some(mid), Some(1), false);
        requests += 2;
    }
    assert!(requests > 10, "{name}: the fixture has files");
}

#[test]
fn basic_matches_svnserve() {
    compare_all_files("basic");
}

#[test]
fn copies_matches_svnserve() {
    compare_all_files("copies");
}

#[test]
fn mergeinfo_matches_svnserve() {
    compare_all_files("mergeinfo");
}

#[test]
fn props_matches_svnserve() {
    compare_all_files("props");
}

#[test]
fn mixed_matches_svnserve() {
    compare_all_files("mixed");
}

#[test]
fn replace_moves_readd_match_svnserve() {
    for name in ["replace", "moves", "readd", "symlinks", "names"] {
        compare_all_files(name);
    }
}

#[test]
fn errors_match_svnserve() {
    require_svn_tools();
    let p = pair("mergeinfo");
    let mut s = p.svnserve();
    let head = p.repo.youngest();
    for (path, start, end, g) in [
        ("trunk", Some(1), Some(head), false),
        ("", Some(1), Some(head), false),
        ("nope.txt", Some(1), Some(head), false),
        ("trunk/a.txt/x", Some(1), Some(head), false),
        ("trunk/a.txt", Some(1), Some(head + 1), false),
        ("trunk/a.txt", Some(head + 1), Some(1), false),
        ("trunk/a.txt", Some(head), Some(1), true),
        (
            "branches/feature/feature-only.txt",
            Some(1),
            Some(13),
            false,
        ),
    ] {
        let expected = theirs(&mut s, path, start, end, g);
        assert!(expected.is_err(), "{path}: svnserve fails");
        compare(&p, &mut s, path, start, end, g);
    }
}

/// Who a line is blamed on: (revision, fspath), None before the range.
type Attr = Option<(u64, String)>;

/// Lines as Subversion's diff and blame see them: ended by LF, CRLF or a lone CR.
fn lines(text: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < text.len() {
        let end = match text[i] {
            b'\n' => Some(i + 1),
            b'\r' if text.get(i + 1) == Some(&b'\n') => Some(i + 2),
            b'\r' => Some(i + 1),
            _ => None,
        };
        match end {
            Some(e) => {
                out.push(&text[start..e]);
                start = e;
                i = e;
            }
            None => i += 1,
        }
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

fn update(old: Option<&[u8]>, new: &[u8], chain: &[Attr], attr: &Attr) -> Vec<Attr> {
    let new_lines = lines(new);
    let Some(old) = old else {
        return vec![attr.clone(); new_lines.len()];
    };
    let old_lines = lines(old);
    let (n, m) = (old_lines.len(), new_lines.len());
    let mut lcs = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if old_lines[i] == new_lines[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let mut out = Vec::with_capacity(m);
    let (mut i, mut j) = (0, 0);
    while j < m {
        if i < n && old_lines[i] == new_lines[j] {
            out.push(chain[i].clone());
            i += 1;
            j += 1;
        } else if i < n && lcs[i + 1][j] >= lcs[i][j + 1] {
            i += 1;
        } else {
            out.push(attr.clone());
            j += 1;
        }
    }
    out
}

/// A line-tracking blame over delivered versions, as the client computes it (blame.c): a
/// version older than the range's start contributes its lines unattributed; with merged
/// revisions, every version feeds the merged chain and mainline versions also feed the
/// mainline chain, each diffed against the last text of its own chain.
/// Returns (mainline attribution, merged attribution) per line of the last text.
fn blame(revs: &[Got], start: u64, g: bool) -> Vec<(Attr, Attr)> {
    let texts = texts(revs);
    let mut last: Option<Vec<u8>> = None;
    let mut last_original: Option<Vec<u8>> = None;
    let (mut chain, mut merged_chain): (Vec<Attr>, Vec<Attr>) = (Vec::new(), Vec::new());
    for (r, text) in revs.iter().zip(&texts) {
        if r.delta.is_none() && (!g || r.merged) {
            continue;
        }
        let attr = (r.merged || r.rev >= start).then(|| (r.rev, r.path.clone()));
        if g {
            merged_chain = update(last.as_deref(), text, &merged_chain, &attr);
            if !r.merged {
                chain = update(last_original.as_deref(), text, &chain, &attr);
                last_original = Some(text.clone());
            }
        } else {
            chain = update(last.as_deref(), text, &chain, &attr);
        }
        last = Some(text.clone());
    }
    if !g {
        merged_chain = vec![None; chain.len()];
    }
    chain.into_iter().zip(merged_chain).collect()
}

/// One line's blame: its revision, and with `-g` the merged (revision, path).
type BlameLine = (Option<u64>, Option<(u64, String)>);

/// `svn blame --xml` per line.
fn parse_blame_xml(xml: &str) -> Vec<BlameLine> {
    let attr = |s: &str, name: &str| -> Option<String> {
        let at = s.find(&format!("{name}=\""))? + name.len() + 2;
        let len = s[at..].find('"')?;
        Some(s[at..at + len].to_string())
    };
    xml.split("<entry")
        .skip(1)
        .map(|e| {
            let (own, merged) = match e.find("<merged") {
                Some(i) => (&e[..i], Some(&e[i..])),
                None => (e, None),
            };
            let rev = attr(own, "revision").map(|r| r.parse().expect("revision"));
            let merged = merged.map(|m| {
                let path = attr(m, "path").expect("merged path");
                let rev = attr(m, "revision").expect("merged revision");
                (rev.parse().expect("revision"), path)
            });
            (rev, merged)
        })
        .collect()
}

fn is_binary(p: &Pair, path: &str) -> bool {
    let (_, node) = p.repo.node_at(p.repo.youngest(), path).expect("node");
    let props = p.repo.props(&node).expect("props");
    props
        .get(&b"svn:mime-type"[..])
        .is_some_and(|m| !m.starts_with(b"text/"))
}

fn compare_blame(p: &Pair, path: &str, from: u64, to: u64, g: bool) {
    match p.repo.lookup(to, path).expect("lookup") {
        Some((_, node)) if node.kind == NodeKind::File => {}
        _ => return,
    }
    let range = format!("{from}:{to}");
    let mut args = vec!["blame", "--xml", "-r", &range];
    if g {
        args.push("-g");
    }
    let url = format!("{}@{to}", p.url(path));
    args.push(&url);
    let expected = parse_blame_xml(&p.svn(&args));
    let revs = ours(p, path, Some(from.saturating_sub(1)), Some(to), g, 1)
        .unwrap_or_else(|e| panic!("{path}: {e:?}"));
    let actual: Vec<BlameLine> = blame(&revs, from, g)
        .into_iter()
        .map(|(own, merged)| {
            let merged = if g { merged } else { None };
            (own.map(|(r, _)| r), merged)
        })
        .collect();
    assert_eq!(actual, expected, "svn blame --xml -r {range} g={g} {path}");
}

#[test]
fn blame_matches_svn_blame() {
    require_svn_tools();
    let mut compared = 0;
    for name in ["mergeinfo", "basic", "copies", "mixed"] {
        let p = pair(name);
        let head = p.repo.youngest();
        for path in p.paths(head, NodeKind::File) {
            if is_binary(&p, &path) {
                continue;
            }
            compare_blame(&p, &path, 1, head, false);
            compare_blame(&p, &path, 1, head, true);
            compare_blame(&p, &path, head / 2, head, true);
            compare_blame(&p, &path, head / 2 + 1, head - 1, false);
            compared += 1;
        }
    }
    assert!(compared > 20);
}

/// A format-3 dump of a file changed in every one of `head - 2` revisions (one line of
/// 200 rewritten each time), copied to a branch half way and changed on both lines
/// after that.
fn long_history_dump(head: u64) -> Vec<u8> {
    use md5::{Digest, Md5};
    let mut out =
        b"SVN-fs-dump-format-version: 3\n\nUUID: 0b16f11e-5e17-4000-8000-000000000400\n\n".to_vec();
    let revision = |out: &mut Vec<u8>, rev: u64| {
        let props = format!(
            "K 10\nsvn:author\nV 5\nalice\nK 8\nsvn:date\nV 27\n2011-03-13T08:{:02}:{:02}.000000Z\nK 7\nsvn:log\nV 6\nchange\nPROPS-END\n",
            (rev / 60) % 60,
            rev % 60
        );
        out.extend_from_slice(
            format!(
                "Revision-number: {rev}\nProp-content-length: {0}\nContent-length: {0}\n\n{props}\n",
                props.len()
            )
            .as_bytes(),
        );
    };
    let text_node = |out: &mut Vec<u8>, path: &str, action: &str, old: &[u8], new: &[u8]| {
        let delta = svelto_delta::encode_stream(&svelto_delta::delta_windows(old, new), 0, 0)
            .expect("encode");
        let md5 = hex(&Md5::digest(new));
        out.extend_from_slice(
            format!(
                "Node-path: {path}\nNode-kind: file\nNode-action: {action}\nText-delta: true\nText-content-length: {len}\nText-content-md5: {md5}\nContent-length: {len}\n\n",
                len = delta.len()
            )
            .as_bytes(),
        );
        out.extend_from_slice(&delta);
        out.extend_from_slice(b"\n\n");
    };
    let dir_node = |out: &mut Vec<u8>, path: &str, copy: Option<(u64, &str)>| {
        let mut h = format!("Node-path: {path}\nNode-kind: dir\nNode-action: add\n");
        if let Some((rev, from)) = copy {
            h.push_str(&format!(
                "Node-copyfrom-rev: {rev}\nNode-copyfrom-path: {from}\n\n\n"
            ));
        } else {
            h.push_str("Prop-content-length: 10\nContent-length: 10\n\nPROPS-END\n\n\n");
        }
        out.extend_from_slice(h.as_bytes());
    };
    let line =
        |n: u64, rev: u64| format!("line {n:03} last written in r{rev}: the quick brown fox\n");
    revision(&mut out, 0);
    revision(&mut out, 1);
    dir_node(&mut out, "trunk", None);
    dir_node(&mut out, "branches", None);
    let mut trunk: Vec<u8> = (0..200).flat_map(|n| line(n, 2).into_bytes()).collect();
    revision(&mut out, 2);
    text_node(&mut out, "trunk/log.txt", "add", b"", &trunk);
    let half = head / 2;
    let mut branch = Vec::new();
    let rewrite = |text: &[u8], n: u64, rev: u64| -> Vec<u8> {
        let mut lines: Vec<&[u8]> = text.split_inclusive(|&b| b == b'\n').collect();
        let new = line(n, rev);
        lines[n as usize] = new.as_bytes();
        lines.concat()
    };
    for rev in 3..=head {
        revision(&mut out, rev);
        if rev == half {
            dir_node(&mut out, "branches/b", Some((rev - 1, "trunk")));
            branch = trunk.clone();
            continue;
        }
        if rev > half && rev % 3 == 0 {
            let new = rewrite(&branch, (rev * 7) % 200, rev);
            text_node(&mut out, "branches/b/log.txt", "change", &branch, &new);
            branch = new;
        } else {
            let new = rewrite(&trunk, (rev * 13) % 200, rev);
            text_node(&mut out, "trunk/log.txt", "change", &trunk, &new);
            trunk = new;
        }
    }
    out
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn a_long_history_is_fast_and_matches() {
    require_svn_tools();
    let head = 2500;
    let dir = svelto_testkit::tempdir();
    let dump = dir.path().join("long.dump");
    std::fs::write(&dump, long_history_dump(head)).expect("write dump");
    let p = crate::common::pair_from(&dump, false);
    assert_eq!(p.repo.youngest(), head);
    let mut s = p.svnserve();
    for path in ["trunk/log.txt", "branches/b/log.txt"] {
        let t = Instant::now();
        let ours = ours(&p, path, Some(0), Some(head), false, 2).expect("file revs");
        let ours_time = t.elapsed();
        let t = Instant::now();
        let theirs = theirs(&mut s, path, Some(0), Some(head), false).expect("svnserve");
        let theirs_time = t.elapsed();
        assert!(ours.len() > 1000, "{path}: {} versions", ours.len());
        assert_eq!(ours.len(), theirs.len(), "{path}");
        assert_eq!(texts(&ours), texts(&theirs), "{path}");
        eprintln!(
            "{path}: {} versions, svelto {ours_time:?}, svnserve {theirs_time:?}",
            ours.len()
        );
        // Generous: quadratic work would take minutes here.
        assert!(ours_time.as_secs() < 20, "{path}: {ours_time:?}");
        compare(&p, &mut s, path, Some(0), Some(head), true);
        compare(&p, &mut s, path, Some(head), Some(0), false);
        compare(&p, &mut s, path, Some(head / 3), Some(head - 100), false);
    }
}
