//! `log` against svnserve's `log` answers (item by item, as they go on the wire) and
//! against `svn log --xml` output on the FSFS copy.

use crate::{changed_locations, touched_paths, wire_error, Pair, SCENARIOS};
use std::collections::BTreeMap;
use svelto_core::{compare_paths, NodeKind, PropList, Revnum};
use svelto_repos::{get_locations, log, LogEntry, LogOptions};
use svelto_testkit::svnserve_client::{Mode, SvnserveClient as Svnserve};
use svelto_testkit::Run;
use svelto_wire::Item;

const AUTHOR: &[u8] = b"svn:author";
const DATE: &[u8] = b"svn:date";
const LOG: &[u8] = b"svn:log";

fn ours(pair: &Pair, opts: &LogOptions) -> Result<Vec<LogEntry>, (u64, String)> {
    let mut out = Vec::new();
    log(&pair.repo, opts, &mut |e| {
        out.push(e);
        Ok(())
    })
    .map_err(|e| wire_error(&e))?;
    Ok(out)
}

/// A log entry as svnserve writes it (its revprops sorted: svnserve sends a hash).
fn entry_item(e: &LogEntry) -> Item {
    let changes: Vec<Item> = e
        .changed_paths
        .iter()
        .map(|c| {
            let kind = match c.kind {
                Some(NodeKind::File) => "file",
                Some(NodeKind::Dir) => "dir",
                None => "unknown",
            };
            Item::list(vec![
                Item::string(c.path.as_str()),
                Item::word(c.action.letter().to_string()),
                Item::list(match &c.copyfrom {
                    Some((p, r)) => vec![Item::string(p.as_str()), Item::Number(*r)],
                    None => vec![],
                }),
                Item::list(vec![
                    Item::string(kind),
                    Item::bool(c.text_mods.unwrap_or(false)),
                    Item::bool(c.prop_mods.unwrap_or(false)),
                ]),
            ])
        })
        .collect();
    let p = &e.revprops;
    let slot = |name: &[u8]| Item::opt(p.get(name).map(|v| Item::string(v.clone())));
    let standard = [AUTHOR, DATE, LOG].iter().all(|n| p.contains_key(*n)) && p.len() == 3;
    let rest: Vec<(Vec<u8>, Vec<u8>)> = if standard {
        vec![]
    } else {
        p.iter()
            .filter(|(k, _)| ![AUTHOR, DATE, LOG].contains(&k.as_slice()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    };
    Item::list(vec![
        Item::list(changes),
        Item::Number(e.rev),
        slot(AUTHOR),
        slot(DATE),
        slot(LOG),
        Item::bool(e.has_children),
        Item::bool(e.invalid_rev),
        Item::Number(rest.len() as u64),
        Item::list(
            rest.into_iter()
                .map(|(k, v)| Item::list(vec![Item::string(k), Item::string(v)]))
                .collect::<Vec<_>>(),
        ),
        Item::bool(e.subtractive_merge),
    ])
}

/// svnserve's items with each entry's rev-props list sorted.
fn normalize(item: &Item) -> Item {
    let mut l = item.as_list().expect("log entry is a list").to_vec();
    if let Some(Item::List(props)) = l.get_mut(8) {
        props.sort_by(|a, b| format!("{a:?}").cmp(&format!("{b:?}")));
    }
    Item::List(l)
}

fn log_params(opts: &LogOptions) -> Vec<Item> {
    let (word, names) = match &opts.revprops {
        None => ("all-revprops", vec![]),
        Some(n) => (
            "revprops",
            n.iter().map(|x| Item::string(x.clone())).collect(),
        ),
    };
    vec![
        Item::list(
            opts.paths
                .iter()
                .map(|p| Item::string(p.as_str()))
                .collect::<Vec<_>>(),
        ),
        Item::list(vec![Item::Number(opts.start)]),
        Item::list(vec![Item::Number(opts.end)]),
        Item::bool(opts.discover_changed_paths),
        Item::bool(opts.strict_node_history),
        Item::Number(opts.limit),
        Item::bool(opts.include_merged_revisions),
        Item::word(word),
        Item::list(names),
    ]
}

/// Runs one request both ways and asserts the answers are the same. Returns the number
/// of entries, counting those about merges 1000 times.
fn compare(pair: &Pair, s: &mut Svnserve, opts: &LogOptions) -> usize {
    let theirs = s.stream("log", log_params(opts));
    let mine = ours(pair, opts);
    let ctx = format!("{}: {opts:?}", pair.name);
    match (&mine, &theirs.response) {
        (Ok(m), Ok(_)) => {
            let mine: Vec<Item> = m.iter().map(entry_item).collect();
            let theirs: Vec<Item> = theirs.items.iter().map(normalize).collect();
            if mine != theirs {
                let show = |v: &[Item]| {
                    v.iter()
                        .map(|i| String::from_utf8_lossy(&i.to_bytes()).into_owned())
                        .collect::<Vec<_>>()
                        .join("\n")
                };
                panic!(
                    "{ctx}\nours:\n{}\nsvnserve:\n{}",
                    show(&mine),
                    show(&theirs)
                );
            }
            m.iter()
                .map(|e| {
                    if e.has_children || e.invalid_rev || e.subtractive_merge {
                        1000
                    } else {
                        1
                    }
                })
                .sum()
        }
        (Err(m), Err(t)) => {
            assert_eq!(m, t, "{ctx}: errors");
            0
        }
        _ => panic!(
            "{ctx}: ours {:?}, svnserve {:?} with {} items",
            mine.as_ref().map(|v| v.len()),
            theirs.response,
            theirs.items.len()
        ),
    }
}

fn opts(path: &str, start: Revnum, end: Revnum) -> LogOptions {
    LogOptions {
        paths: vec![path.to_string()],
        start,
        end,
        limit: 0,
        discover_changed_paths: true,
        strict_node_history: false,
        include_merged_revisions: false,
        revprops: None,
    }
}

fn std_revprops() -> Option<Vec<Vec<u8>>> {
    Some(vec![AUTHOR.to_vec(), DATE.to_vec(), LOG.to_vec()])
}

#[test]
fn log_matches_svnserve_on_every_fixture() {
    let mut entries = 0;
    for name in SCENARIOS {
        let pair = Pair::scenario(name);
        let mut s = pair.svnserve(Mode::Tunnel);
        let head = pair.youngest();
        let mut locations = changed_locations(&pair.repo);
        for (p, _) in locations.clone() {
            locations.insert((p, head));
        }
        locations.insert((String::new(), head));
        for (path, rev) in &locations {
            let (path, rev) = (path.as_str(), *rev);
            entries += compare(&pair, &mut s, &opts(path, rev, 0));
            entries += compare(
                &pair,
                &mut s,
                &LogOptions {
                    strict_node_history: true,
                    ..opts(path, 0, rev)
                },
            );
            entries += compare(
                &pair,
                &mut s,
                &LogOptions {
                    limit: 2,
                    revprops: Some(vec![AUTHOR.to_vec(), DATE.to_vec()]),
                    ..opts(path, rev, 1.min(rev))
                },
            );
            entries += compare(
                &pair,
                &mut s,
                &LogOptions {
                    include_merged_revisions: true,
                    revprops: std_revprops(),
                    ..opts(path, rev, 0)
                },
            );
            entries += compare(
                &pair,
                &mut s,
                &LogOptions {
                    include_merged_revisions: true,
                    ..opts(path, 1.min(rev), rev)
                },
            );
            entries += compare(
                &pair,
                &mut s,
                &LogOptions {
                    include_merged_revisions: true,
                    strict_node_history: true,
                    discover_changed_paths: false,
                    limit: 3,
                    revprops: Some(vec![]),
                    ..opts(path, rev, 0)
                },
            );
        }
        // Several paths at once, the root fast path, errors.
        let paths: Vec<String> = locations
            .iter()
            .filter(|(_, r)| *r == head)
            .map(|(p, _)| p.clone())
            .collect();
        for w in paths.chunks(3) {
            for merged in [false, true] {
                entries += compare(
                    &pair,
                    &mut s,
                    &LogOptions {
                        paths: w.to_vec(),
                        include_merged_revisions: merged,
                        ..opts("", head, 0)
                    },
                );
            }
        }
        for (start, end, limit) in [
            (head, 0, 0),
            (0, head, 0),
            (head, 0, 3),
            (1, head, 2),
            (head, head, 0),
        ] {
            entries += compare(
                &pair,
                &mut s,
                &LogOptions {
                    limit,
                    revprops: std_revprops(),
                    ..opts("", start, end)
                },
            );
        }
        entries += compare(
            &pair,
            &mut s,
            &LogOptions {
                paths: vec![],
                ..opts("", head, 0)
            },
        );
        for bad in [
            opts("no/such/path", head, 0),
            opts("", head + 1, 0),
            opts("", 0, head + 1),
        ] {
            compare(&pair, &mut s, &bad);
        }
    }
    assert!(entries > 5000, "only {entries} entries compared");
    eprintln!("{} merge-related entries", entries / 1000);
    assert!(entries / 1000 > 100, "too few entries about merges");
}

/// A path's history through deletes: the path exists at the younger bound only.
#[test]
fn log_of_a_path_missing_at_the_younger_revision_fails_like_svnserve() {
    let pair = Pair::scenario("readd");
    let mut s = pair.svnserve(Mode::Tunnel);
    for (path, revs) in touched_paths(&pair.repo) {
        for rev in 0..=pair.youngest() {
            if revs.contains(&rev) || rev == pair.youngest() {
                compare(&pair, &mut s, &opts(&path, rev, 0));
                compare(&pair, &mut s, &opts(&path, 0, rev));
            }
        }
    }
    let e = ours(&pair, &opts("no/such", pair.youngest(), 0)).expect_err("missing path");
    assert_eq!(
        e,
        (
            160013,
            format!(
                "File not found: revision {}, path '/no/such'",
                pair.youngest()
            )
        )
    );
}

#[test]
fn root_log_of_many_revisions_reads_only_metadata_fast() {
    let pair = Pair::scenario("many-revs");
    let head = pair.youngest();
    assert!(head >= 2000);
    let mut s = pair.svnserve(Mode::Tunnel);
    let all = LogOptions {
        revprops: std_revprops(),
        ..opts("", head, 0)
    };
    let t = std::time::Instant::now();
    let n = ours(&pair, &all).expect("log").len();
    let elapsed = t.elapsed();
    assert_eq!(n as u64, head + 1);
    eprintln!("log of {n} revisions (changed paths too): {elapsed:?}");
    compare(&pair, &mut s, &all);
    compare(
        &pair,
        &mut s,
        &LogOptions {
            discover_changed_paths: false,
            ..opts("", 0, head)
        },
    );
    // The busiest directory, with and without merged revisions.
    let busiest = "trunk";
    assert!(
        pair.repo.node_at(head, busiest).is_ok(),
        "many-revs has a trunk"
    );
    for merged in [false, true] {
        let o = LogOptions {
            include_merged_revisions: merged,
            ..opts(busiest, head, 0)
        };
        let t = std::time::Instant::now();
        let n = ours(&pair, &o).expect("log").len();
        eprintln!(
            "log -g={merged} of '{busiest}': {n} entries in {:?}",
            t.elapsed()
        );
        compare(&pair, &mut s, &o);
    }
    // A branch's and a file's history through the generated copies.
    for (path, rev) in changed_locations(&pair.repo).into_iter().step_by(97) {
        compare(&pair, &mut s, &opts(&path, rev, 0));
        compare(
            &pair,
            &mut s,
            &LogOptions {
                include_merged_revisions: true,
                limit: 5,
                ..opts(&path, rev, 0)
            },
        );
    }
}

// ---- svn log --xml ----------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq, Eq)]
enum XmlEvent {
    Entry {
        rev: Revnum,
        reverse_merge: Option<bool>,
        props: BTreeMap<String, String>,
        paths: Vec<BTreeMap<String, String>>,
    },
    Close,
}

fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        let end = rest[i..].find(';').map(|j| i + j).expect("entity ends");
        let ent = &rest[i + 1..end];
        match ent {
            "amp" => out.push('&'),
            "lt" => out.push('<'),
            "gt" => out.push('>'),
            "quot" => out.push('"'),
            "apos" => out.push('\''),
            _ => {
                let code = ent.strip_prefix('#').expect("numeric entity");
                let n: u32 = match code.strip_prefix('x') {
                    Some(h) => u32::from_str_radix(h, 16).expect("hex"),
                    None => code.parse().expect("decimal"),
                };
                out.push(char::from_u32(n).expect("char"));
            }
        }
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    out
}

fn attrs(tag: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut rest = tag;
    while let Some(eq) = rest.find("=\"") {
        let name = rest[..eq]
            .split_whitespace()
            .last()
            .expect("name")
            .to_string();
        let after = &rest[eq + 2..];
        let close = after.find('"').expect("attribute ends");
        out.insert(name, unescape(&after[..close]));
        rest = &after[close + 1..];
    }
    out
}

/// The log entries and closing tags `svn log --xml` printed, in order.
fn parse_xml(xml: &str) -> Vec<XmlEvent> {
    let mut events = Vec::new();
    let mut rest = xml;
    let mut current: Option<XmlEvent> = None;
    let mut pending_path: Option<BTreeMap<String, String>> = None;
    let mut text_for: Option<String> = None;
    while let Some(lt) = rest.find('<') {
        let text = &rest[..lt];
        let gt = rest[lt..].find('>').map(|j| lt + j).expect("tag ends");
        let tag = &rest[lt + 1..gt];
        rest = &rest[gt + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            match name {
                "logentry" => {
                    if let Some(e) = current.take() {
                        events.push(e);
                    }
                    events.push(XmlEvent::Close);
                }
                "path" => {
                    if let (Some(mut p), Some(XmlEvent::Entry { paths, .. })) =
                        (pending_path.take(), current.as_mut())
                    {
                        p.insert("path".into(), unescape(text));
                        paths.push(p);
                    }
                }
                "author" | "date" | "msg" => {
                    if let (Some(what), Some(XmlEvent::Entry { props, .. })) =
                        (text_for.take(), current.as_mut())
                    {
                        props.insert(what, unescape(text));
                    }
                }
                _ => {}
            }
            continue;
        }
        let name = tag.split_whitespace().next().unwrap_or("");
        match name {
            "logentry" => {
                if let Some(e) = current.take() {
                    events.push(e);
                }
                let a = attrs(tag);
                current = Some(XmlEvent::Entry {
                    rev: a["revision"].parse().expect("revision"),
                    reverse_merge: a.get("reverse-merge").map(|v| v == "true"),
                    props: BTreeMap::new(),
                    paths: Vec::new(),
                });
            }
            "path" => pending_path = Some(attrs(tag)),
            "author" | "date" | "msg" => {
                if tag.ends_with('/') {
                    if let Some(XmlEvent::Entry { props, .. }) = current.as_mut() {
                        props.insert(name.to_string(), String::new());
                    }
                } else {
                    text_for = Some(name.to_string());
                }
            }
            _ => {}
        }
    }
    events
}

/// What the svn client prints for our entries.
fn client_view(entries: &[LogEntry], verbose: bool) -> Vec<XmlEvent> {
    let mut out = Vec::new();
    let mut stack = 0usize;
    for e in entries {
        if e.invalid_rev {
            stack = stack.saturating_sub(1);
            out.push(XmlEvent::Close);
            continue;
        }
        if e.rev == 0 && !e.revprops.contains_key(LOG) {
            continue;
        }
        let text =
            |p: &PropList, n: &[u8]| p.get(n).map(|v| String::from_utf8_lossy(v).into_owned());
        let mut props = BTreeMap::new();
        for (k, n) in [("author", AUTHOR), ("date", DATE), ("msg", LOG)] {
            if let Some(v) = text(&e.revprops, n) {
                if !(k == "date" && v.is_empty()) {
                    props.insert(k.to_string(), v);
                }
            }
        }
        let mut by_path: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
        if verbose {
            for c in &e.changed_paths {
                let mut a = BTreeMap::new();
                a.insert("action".into(), c.action.letter().to_string());
                a.insert("kind".into(), c.kind.map_or("", |k| k.as_str()).to_string());
                a.insert("text-mods".into(), c.text_mods.unwrap_or(false).to_string());
                a.insert("prop-mods".into(), c.prop_mods.unwrap_or(false).to_string());
                if let Some((p, r)) = &c.copyfrom {
                    a.insert("copyfrom-path".into(), p.clone());
                    a.insert("copyfrom-rev".into(), r.to_string());
                }
                a.insert("path".into(), c.path.clone());
                by_path.insert(c.path.clone(), a);
            }
        }
        let mut paths: Vec<_> = by_path.into_values().collect();
        paths.sort_by(|a, b| compare_paths(&a["path"], &b["path"]));
        out.push(XmlEvent::Entry {
            rev: e.rev,
            reverse_merge: (stack > 0).then_some(e.subtractive_merge),
            props,
            paths,
        });
        if e.has_children {
            stack += 1;
        } else {
            out.push(XmlEvent::Close);
        }
    }
    out
}

/// `svn log --xml` through `svnserve -t` (svn+ssh:// with a local "ssh") for a path and a
/// range, compared with what the client would print for our entries. (Over file:// the
/// client would see libsvn_repos' raw stream, which differs from svnserve's: svnserve
/// drops closing entries that close nothing.)
fn compare_cli(pair: &Pair, path: &str, peg: Revnum, start: Revnum, end: Revnum, flags: &[&str]) {
    let younger = start.max(end);
    // The client looks the path up at the younger bound, then asks for its log there.
    let Some(at) = get_locations(&pair.repo, path, peg, &[younger])
        .ok()
        .and_then(|v| v.into_iter().next())
        .map(|(_, p)| p)
    else {
        return;
    };
    let verbose = flags.contains(&"-v");
    let quiet = flags.contains(&"-q");
    let mut o = opts(at.trim_start_matches('/'), start, end);
    o.discover_changed_paths = verbose;
    o.strict_node_history = flags.contains(&"--stop-on-copy");
    o.include_merged_revisions = flags.contains(&"-g");
    o.revprops = Some(if quiet {
        vec![AUTHOR.to_vec(), DATE.to_vec()]
    } else {
        vec![AUTHOR.to_vec(), DATE.to_vec(), LOG.to_vec()]
    });
    if let Some(l) = flags.iter().position(|f| *f == "-l") {
        o.limit = flags[l + 1].parse().expect("limit");
    }
    let url = format!(
        "svn+ssh://localhost{}/{}@{peg}",
        pair.fsfs.path().display(),
        uri_escape(path)
    );
    let out = Run::tool("svn")
        .env("SVN_SSH", fake_ssh())
        .args(["log", "--xml", "--non-interactive", "-r"])
        .arg(format!("{start}:{end}"))
        .args(flags)
        .arg(&url)
        .output();
    let ctx = format!(
        "{}: svn log {flags:?} -r {start}:{end} {path}@{peg}",
        pair.name
    );
    let mine = ours(pair, &o);
    if !out.success() {
        assert!(mine.is_err(), "{ctx}: svn failed but we answered: {out}");
        return;
    }
    let mine = mine.unwrap_or_else(|e| panic!("{ctx}: {e:?}"));
    let theirs = parse_xml(&out.stdout_text());
    assert_eq!(client_view(&mine, verbose), theirs, "{ctx}");
}

/// An "ssh" that runs the remote command here: `svn+ssh://` then talks to `svnserve -t`.
fn fake_ssh() -> std::path::PathBuf {
    static SCRIPT: std::sync::OnceLock<(tempfile::TempDir, std::path::PathBuf)> =
        std::sync::OnceLock::new();
    SCRIPT
        .get_or_init(|| {
            use std::os::unix::fs::PermissionsExt;
            let dir = svelto_testkit::tempdir();
            let path = dir.path().join("fake-ssh");
            std::fs::write(
                &path,
                "#!/bin/sh\n# host, then the remote command\nshift\nexec \"$@\"\n",
            )
            .expect("write fake ssh");
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
            (dir, path)
        })
        .1
        .clone()
}

fn uri_escape(p: &str) -> String {
    let mut out = String::new();
    for b in p.bytes() {
        if b.is_ascii_alphanumeric() || b"/-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[test]
fn log_matches_svn_log_xml() {
    for name in ["mergeinfo", "mixed", "moves", "copies", "replace", "names"] {
        let pair = Pair::scenario(name);
        let head = pair.youngest();
        let mut runs = 0;
        for (path, rev) in changed_locations(&pair.repo).into_iter().step_by(3) {
            let flag_sets: &[&[&str]] = &[
                &["-v"],
                &["-v", "-g"],
                &["-q", "--stop-on-copy"],
                &["-v", "-l", "2"],
                &["-q", "-g"],
            ];
            for flags in flag_sets {
                compare_cli(&pair, &path, rev, rev, 0, flags);
                runs += 1;
            }
            compare_cli(&pair, &path, head, 1, rev, &["-v", "-g"]);
            compare_cli(&pair, &path, rev, 0, rev, &["-v"]);
        }
        compare_cli(&pair, "", head, head, 0, &["-v", "-g"]);
        compare_cli(&pair, "", head, 0, head, &["-v"]);
        assert!(runs > 5, "{name}: only {runs} runs");
    }
}
