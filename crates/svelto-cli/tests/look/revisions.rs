//! Every revision subcommand at every revision of every fixture.

use crate::common::{revisions, scenarios, Pair};
use svelto_testkit::scenario_dump;

fn check_scenario(name: &str) {
    let pair = Pair::load(&scenario_dump(name));
    let youngest = pair.youngest();
    for args in [
        vec!["youngest", "REPO"],
        vec!["youngest", "--no-newline", "REPO"],
        vec!["uuid", "REPO"],
        vec!["info", "REPO"],
        vec!["changed", "REPO"],
    ] {
        pair.same(&args);
    }
    let past = (youngest + 1).to_string();
    pair.same(&["author", "REPO", "-r", &past]);
    pair.same(&["diff", "REPO", "-r", &past]);
    for rev in revisions(youngest) {
        let r = rev.to_string();
        for sub in [
            &["author"][..],
            &["date"],
            &["log"],
            &["info"],
            &["changed"],
            &["changed", "--copy-info"],
            &["dirs-changed"],
            &["propget", "--revprop", "svn:log"],
            &["tree", "-N"],
        ] {
            let mut args = sub.to_vec();
            args.extend(["REPO", "-r", &r]);
            pair.same(&args);
        }
        for sub in [
            &["proplist", "--revprop", "-v"][..],
            &["proplist", "--revprop", "-v", "--xml"],
        ] {
            let mut args = sub.to_vec();
            args.extend(["REPO", "-r", &r]);
            pair.same_props(&args);
        }
        // The whole tree where it is small.
        if rev <= 40 {
            pair.same(&["tree", "REPO", "-r", &r]);
            pair.same(&["tree", "--full-paths", "REPO", "-r", &r]);
        }
        let diff = pair.same(&["diff", "REPO", "-r", &r]);
        if diff.stdout.is_empty() {
            continue;
        }
        for opts in [
            &["--diff-copy-from"][..],
            &["--no-diff-added"],
            &["--no-diff-deleted"],
            &["--properties-only"],
            &["--ignore-properties"],
            &[
                "--diff-copy-from",
                "--no-diff-deleted",
                "--ignore-properties",
            ],
            &["-x", "-b"],
            &["-x", "-w --ignore-eol-style"],
            &["--diff-cmd", "diff"],
            &["--diff-cmd", "diff", "-x", "-U 1 -b"],
        ] {
            let mut args = vec!["diff", "REPO", "-r", &r];
            args.extend(opts);
            pair.same(&args);
        }
    }
}

macro_rules! scenario_tests {
    ($($test:ident => $name:literal),* $(,)?) => {
        $(
            #[test]
            fn $test() {
                check_scenario($name);
            }
        )*

        #[test]
        fn every_scenario_is_covered() {
            let covered = [$($name),*];
            for name in scenarios() {
                assert!(covered.contains(&name.as_str()), "no look test for fixture {name}");
            }
        }
    };
}

scenario_tests! {
    basic => "basic",
    copies => "copies",
    empty_revs => "empty-revs",
    eol_keywords => "eol-keywords",
    many_revs => "many-revs",
    mergeinfo => "mergeinfo",
    mixed => "mixed",
    moves => "moves",
    names => "names",
    props => "props",
    readd => "readd",
    replace => "replace",
    revprops => "revprops",
    symlinks => "symlinks",
}
