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
    set.into_iter().take(40).collect()
}

fn check_scenario(name: &str) {
    let pair = Pair::load(&scenario_dump(name));
    for rev in revisions(pair.youngest()) {
        let r = rev.to_string();
        for path in paths_of(&pair, &r) {
            let p = path.as_str();
            for sub in [
                &["cat"][..],
                &["filesize"],
                &["history"],
                &["history", "-l", "2"],
                &["tree"],
                &["tree", "--full-paths", "-N"],
                &["propget", "svn:mime-type"],
                &["propget", "-v", "svn:eol-style"],
                &["propget", "--show-inherited-props", "svn:mergeinfo"],
                &["propget", "-v", "--show-inherited-props", "svn:mergeinfo"],
            ] {
                let mut args = vec![sub[0], "REPO"];
                args.extend(&sub[1..]);
                args.extend([p, "-r", &r]);
                pair.same(&args);
            }
            for sub in [
                &["proplist"][..],
                &["proplist", "-v"],
                &["proplist", "-v", "--xml"],
                &["proplist", "--show-inherited-props"],
            ] {
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
