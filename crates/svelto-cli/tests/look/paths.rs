//! The subcommands that take a path, for the paths each revision changed (and their
//! parents, and paths that do not exist).

use crate::common::{revisions, svnlook, Pair};
use std::collections::BTreeSet;
use svelto_testkit::scenario_dump;

/// The paths `svnlook changed` names for `rev`, their parent directories, and a few
/// that do not exist (or go through a file).
fn paths_of(pair: &Pair, rev: &str) -> Vec<String> {
    let changed = svnlook(pair.fsfs.path(), &["changed", "REPO", "-r", rev]);
    let mut set = BTreeSet::new();
    for line in String::from_utf8_lossy(&changed.stdout).lines() {
        let Some(path) = line.get(4..) else { continue };
        let path = path.trim_end_matches('/');
        set.insert(path.to_string());
        set.insert(format!("{path}/nope"));
        let mut p = path;
        while let Some((parent, _)) = p.rsplit_once('/') {
            set.insert(format!("/{parent}/"));
            p = parent;
        }
    }
    set.insert("/".into());
    set.insert("nope".into());
    // Changed paths first (longest), then parents and missing ones: at most 6.
    let mut paths: Vec<String> = set.into_iter().collect();
    paths.sort_by_key(|p| {
        (
            p.starts_with('/') || p.ends_with("nope"),
            std::cmp::Reverse(p.len()),
        )
    });
    paths.truncate(6);
    paths
}

fn check_scenario(name: &str) {
    let pair = Pair::load(&scenario_dump(name));
    for rev in revisions(pair.youngest()) {
        let r = rev.to_string();
        for (n, path) in paths_of(&pair, &r).into_iter().enumerate() {
            let p = path.as_str();
            let common: &[&[&str]] = &[
                &["cat"],
                &["filesize"],
                &["history", "-l", "3"],
                &["propget", "-v", "svn:eol-style"],
            ];
            let more: &[&[&str]] = &[
                &["history"],
                &["tree"],
                &["tree", "--full-paths", "-N"],
                &["propget", "svn:mime-type"],
                &["propget", "--show-inherited-props", "svn:mergeinfo"],
                &["propget", "-v", "--show-inherited-props", "svn:mergeinfo"],
            ];
            let subs = common.iter().chain(more.iter().filter(|_| n % 4 == 0));
            for sub in subs {
                let mut args = vec![sub[0], "REPO"];
                args.extend(&sub[1..]);
                args.extend([p, "-r", &r]);
                pair.same(&args);
            }
            let lists: &[&[&str]] = if n % 4 == 0 {
                &[
                    &["proplist", "-v"],
                    &["proplist", "--xml"],
                    &["proplist", "-v", "--xml"],
                    &["proplist", "--show-inherited-props"],
                ]
            } else {
                &[&["proplist", "-v"]]
            };
            for sub in lists {
                let mut args = vec![sub[0], "REPO"];
                args.extend(&sub[1..]);
                args.extend([p, "-r", &r]);
                pair.same_props(&args);
            }
        }
    }
}

#[test]
fn copies_and_props() {
    check_scenario("copies");
    check_scenario("props");
}

#[test]
fn names_symlinks_mergeinfo() {
    check_scenario("names");
    check_scenario("symlinks");
    check_scenario("mergeinfo");
}

#[test]
fn replace_readd_moves_mixed() {
    check_scenario("replace");
    check_scenario("readd");
    check_scenario("moves");
    check_scenario("mixed");
}

#[test]
fn basic_eol_revprops_empty() {
    check_scenario("basic");
    check_scenario("eol-keywords");
    check_scenario("revprops");
    check_scenario("empty-revs");
}
