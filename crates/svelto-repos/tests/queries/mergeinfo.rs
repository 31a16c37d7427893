//! `get_mergeinfo` against svnserve's `get-mergeinfo` for every path of the fixtures, in
//! every inheritance mode, with and without descendants, and against `svn propget`.

use crate::common::{pair, pair_from, require_svn_tools, response, Pair, Svnserve};
use std::collections::BTreeMap;
use svelto_core::NodeKind;
use svelto_repos::{get_mergeinfo, Inherit, ReposError};
use svelto_testkit::dumpfile::{records, replace_in_content};
use svelto_testkit::{svnadmin_create, Run};
use svelto_wire::Item;

type Outcome = Result<BTreeMap<String, String>, (u64, String)>;

fn theirs(s: &mut Svnserve, paths: &[String], rev: u64, inherit: Inherit, desc: bool) -> Outcome {
    s.command(
        "get-mergeinfo",
        vec![
            Item::list(
                paths
                    .iter()
                    .map(|p| Item::string(p.as_str()))
                    .collect::<Vec<_>>(),
            ),
            Item::list(vec![Item::Number(rev)]),
            Item::word(inherit.as_word()),
            Item::bool(desc),
        ],
    );
    let results = response(&s.read())?;
    let list = results[0].as_list().expect("mergeinfo list");
    Ok(list
        .iter()
        .map(|e| {
            let e = e.as_list().expect("entry");
            let s = |i: &Item| String::from_utf8(i.as_string().expect("string").to_vec());
            (s(&e[0]).expect("utf-8"), s(&e[1]).expect("utf-8"))
        })
        .collect())
}

fn ours(p: &Pair, paths: &[String], rev: u64, inherit: Inherit, desc: bool) -> Outcome {
    get_mergeinfo(&p.repo, paths, Some(rev), inherit, desc).map_err(|e| {
        let code = match &e {
            ReposError::NotFound { .. } => 160013,
            ReposError::NotDirectory { .. } => 160016,
            ReposError::Store(svelto_fs::StoreError::NoSuchRevision(_)) => 160006,
            other => panic!("unexpected error {other}"),
        };
        (code, e.to_string())
    })
}

/// Every path of every revision, one request per path and one for all at once, in each
/// mode; svnserve caches explicit and inherited answers under the same key, so each mode
/// gets its own connection.
fn compare_everything(p: &Pair) -> usize {
    let mut nonempty = 0;
    for inherit in [
        Inherit::Explicit,
        Inherit::Inherited,
        Inherit::NearestAncestor,
    ] {
        let mut s = p.svnserve();
        for rev in 0..=p.repo.youngest() {
            let mut all = p.paths(rev, NodeKind::Dir);
            all.extend(p.paths(rev, NodeKind::File));
            for path in &all {
                let one = std::slice::from_ref(path);
                let expected = theirs(&mut s, one, rev, inherit, false);
                assert_eq!(
                    ours(p, one, rev, inherit, false),
                    expected,
                    "{path}@{rev} {inherit:?}"
                );
                nonempty += expected.map_or(0, |m| m.len());
            }
            for desc in [false, true] {
                assert_eq!(
                    ours(p, &all, rev, inherit, desc),
                    theirs(&mut s, &all, rev, inherit, desc),
                    "all paths @{rev} {inherit:?} descendants={desc}"
                );
            }
            let root = vec![String::new()];
            assert_eq!(
                ours(p, &root, rev, inherit, true),
                theirs(&mut s, &root, rev, inherit, true),
                "root @{rev} {inherit:?} with descendants"
            );
        }
    }
    nonempty
}

#[test]
fn mergeinfo_fixture_matches_svnserve() {
    require_svn_tools();
    let p = pair("mergeinfo");
    assert!(compare_everything(&p) > 50);
}

#[test]
fn mixed_fixture_matches_svnserve() {
    require_svn_tools();
    let p = pair("mixed");
    assert!(compare_everything(&p) > 0);
}

/// Non-inheritable ranges, an empty value, a relative source path, an unparsable value:
/// made with svnmucc, the bad value written into the dump afterwards.
fn edge_cases() -> Pair {
    let fsfs = svnadmin_create();
    let url = fsfs.url();
    let empty = fsfs.dir().join("empty");
    std::fs::write(&empty, b"").expect("write");
    let f = fsfs.dir().join("f");
    std::fs::write(&f, b"one\n").expect("write");
    let mucc = |args: &[&str]| {
        Run::tool("svnmucc")
            .args(["-U", &url, "-m", "edge"])
            .args(args)
            .success();
    };
    let fpath = f.to_str().expect("utf-8 path");
    mucc(&[
        "mkdir",
        "d",
        "mkdir",
        "d/e",
        "put",
        fpath,
        "d/e/f",
        "mkdir",
        "x",
        "mkdir",
        "bad",
        "mkdir",
        "bad/sub",
        "put",
        fpath,
        "bad/sub/g",
    ]);
    mucc(&[
        "propset",
        "svn:mergeinfo",
        "/x:1*",
        "d",
        "propset",
        "svn:mergeinfo",
        "",
        "x",
        "propset",
        "svn:mergeinfo",
        "/x:3-4",
        "bad",
    ]);
    mucc(&[
        "propset",
        "svn:mergeinfo",
        "/d:1,3*\n/x:2-3",
        "d/e",
        "propset",
        "svn:mergeinfo",
        "x:1",
        "d/e/f",
    ]);
    mucc(&[
        "cp",
        "3",
        "d",
        "d2",
        "propset",
        "svn:mergeinfo",
        "/x:5",
        "bad/sub",
    ]);
    let dump = fsfs.dump(&[]);
    let recs = records(&dump).expect("records");
    let bad = recs
        .iter()
        .find(|r| r.node_path() == Some("bad") && r.revision == Some(2))
        .expect("the record setting bad's mergeinfo");
    let dump = replace_in_content(&dump, bad, b"/x:3-4", b"/x:4-3");
    let file = fsfs.dir().join("edge.dump");
    std::fs::write(&file, dump).expect("write");
    pair_from(&file, true)
}

#[test]
fn edge_cases_match_svnserve() {
    require_svn_tools();
    let p = edge_cases();
    compare_everything(&p);
    let head = p.repo.youngest();
    let get = |path: &str, inherit| {
        get_mergeinfo(&p.repo, &[path.to_string()], Some(head), inherit, false)
            .expect("mergeinfo")
            .get(path)
            .cloned()
    };
    // Spelled out, so that a regression says what it broke.
    assert_eq!(get("d", Inherit::Explicit).as_deref(), Some("/x:1*"));
    assert_eq!(get("d/e", Inherit::NearestAncestor).as_deref(), Some(""));
    assert_eq!(get("x", Inherit::Explicit).as_deref(), Some(""));
    assert_eq!(get("d/e/f", Inherit::Explicit).as_deref(), Some("/x:1"));
    assert_eq!(
        get("d/e/f", Inherit::NearestAncestor).as_deref(),
        Some("/d/f:1\n/x/f:2-3")
    );
    assert_eq!(get("bad", Inherit::Explicit), None, "unparsable is none");
    assert_eq!(
        get("bad/sub/g", Inherit::Inherited).as_deref(),
        Some("/x/g:5")
    );
    assert_eq!(get("d", Inherit::NearestAncestor), None);
    assert_eq!(get("", Inherit::NearestAncestor), None);
}

#[test]
fn missing_paths_and_revisions_match_svnserve() {
    require_svn_tools();
    let p = pair("mergeinfo");
    let mut s = p.svnserve();
    let head = p.repo.youngest();
    for (paths, rev) in [
        (vec!["nope".to_string()], head),
        (vec!["nope".to_string(), "trunk".to_string()], head),
        (vec!["trunk/a.txt/x".to_string()], head),
        (vec!["trunk".to_string()], head + 1),
    ] {
        let expected = theirs(&mut s, &paths, rev, Inherit::Inherited, false);
        assert!(expected.is_err(), "{paths:?}@{rev}");
        let actual = ours(&p, &paths, rev, Inherit::Inherited, false);
        assert_eq!(actual, expected, "{paths:?}@{rev}");
    }
}

#[test]
fn explicit_mergeinfo_is_what_svn_propget_prints() {
    require_svn_tools();
    let p = pair("mergeinfo");
    let head = p.repo.youngest();
    let out = p.svn(&["propget", "-R", "--xml", "svn:mergeinfo", &p.url("")]);
    let mut expected = BTreeMap::new();
    for target in out.split("<target").skip(1) {
        let at = target.find("path=\"").expect("path") + 6;
        let url = &target[at..at + target[at..].find('"').expect("quote")];
        let path = url
            .strip_prefix(&p.url(""))
            .expect("under the repository")
            .to_string();
        let at = target.find('>').expect("tag end");
        let at = at + target[at..].find("<property").expect("property");
        let at = at + target[at..].find('>').expect("tag end") + 1;
        let value = &target[at..at + target[at..].find("</property>").expect("end")];
        expected.insert(path, value.to_string());
    }
    assert!(expected.len() >= 4, "{expected:?}");
    let mut all = p.paths(head, NodeKind::Dir);
    all.extend(p.paths(head, NodeKind::File));
    let actual = get_mergeinfo(&p.repo, &all, None, Inherit::Explicit, false).expect("mergeinfo");
    assert_eq!(actual, expected);
}
