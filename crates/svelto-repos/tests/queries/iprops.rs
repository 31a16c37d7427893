//! `inherited_props` against svnserve's `get-iprops` for every path of the fixtures, and
//! against `svn proplist --show-inherited-props`.

use crate::common::{pair, proplist, require_svn_tools, response, Pair, Svnserve};
use svelto_core::NodeKind;
use svelto_repos::{inherited_props, ReposError};
use svelto_wire::Item;

type Props = Vec<(Vec<u8>, Vec<u8>)>;
type Outcome = Result<Vec<(String, Props)>, (u64, String)>;

fn theirs(s: &mut Svnserve, path: &str, rev: u64) -> Outcome {
    s.command(
        "get-iprops",
        vec![Item::string(path), Item::list(vec![Item::Number(rev)])],
    );
    let results = response(&s.read())?;
    Ok(results[0]
        .as_list()
        .expect("iproplist")
        .iter()
        .map(|e| {
            let e = e.as_list().expect("iprop");
            let path = String::from_utf8(e[0].as_string().expect("path").to_vec());
            (path.expect("utf-8"), proplist(&e[1]))
        })
        .collect())
}

fn ours(p: &Pair, path: &str, rev: u64) -> Outcome {
    match inherited_props(&p.repo, path, rev) {
        Ok(v) => Ok(v
            .into_iter()
            .map(|(path, props)| (path, props.into_iter().collect()))
            .collect()),
        Err(e @ ReposError::PathNotFound { .. }) => Err((160013, e.to_string())),
        Err(e) => panic!("unexpected error {e}"),
    }
}

fn compare_everything(name: &str) -> usize {
    let p = pair(name);
    let mut s = p.svnserve();
    let mut inherited = 0;
    for rev in 0..=p.repo.youngest() {
        let mut all = p.paths(rev, NodeKind::Dir);
        all.extend(p.paths(rev, NodeKind::File));
        all.push("nope".into());
        all.push("nope/deeper".into());
        for path in &all {
            let expected = theirs(&mut s, path, rev);
            assert_eq!(ours(&p, path, rev), expected, "{name}: {path}@{rev}");
            inherited += expected.map_or(0, |v| v.len());
        }
    }
    inherited
}

#[test]
fn props_fixture_matches_svnserve() {
    require_svn_tools();
    assert!(compare_everything("props") > 20);
}

#[test]
fn mergeinfo_and_mixed_fixtures_match_svnserve() {
    require_svn_tools();
    assert!(compare_everything("mergeinfo") > 10);
    assert!(compare_everything("mixed") > 0);
}

#[test]
fn matches_svn_proplist_show_inherited_props() {
    require_svn_tools();
    let p = pair("props");
    let head = p.repo.youngest();
    let mut checked = 0;
    for path in p.paths(head, NodeKind::File).iter().take(6) {
        let out = p.svn(&["proplist", "--show-inherited-props", "--xml", &p.url(path)]);
        // Each inherited target, in order, with its property names; the path's own
        // properties come last and are not inherited.
        let mut expected: Vec<(String, Vec<String>)> = Vec::new();
        for target in out.split("<target").skip(1) {
            let at = target.find("path=\"").expect("path") + 6;
            let url = &target[at..at + target[at..].find('"').expect("quote")];
            // `<inherited_property name=...>` for inherited ones, `<property` for own.
            let names: Vec<String> = target
                .split("name=\"")
                .skip(1)
                .map(|rest| rest[..rest.find('"').expect("quote")].to_string())
                .collect();
            let rel = url.strip_prefix(&p.url("")).expect("inside the repository");
            expected.push((rel.trim_end_matches('/').to_string(), names));
        }
        if expected.last().is_some_and(|(rel, _)| rel == path) {
            expected.pop();
        }
        let actual: Vec<(String, Vec<String>)> = inherited_props(&p.repo, path, head)
            .expect("iprops")
            .into_iter()
            .map(|(rel, props)| {
                let names = props
                    .keys()
                    .map(|k| String::from_utf8_lossy(k).into_owned())
                    .collect();
                (rel, names)
            })
            .collect();
        let mut expected_sorted = expected.clone();
        for (_, names) in &mut expected_sorted {
            names.sort();
        }
        assert_eq!(actual, expected_sorted, "{path}: {out}");
        checked += actual.len();
    }
    assert!(checked > 0, "the props fixture has inherited properties");
}
