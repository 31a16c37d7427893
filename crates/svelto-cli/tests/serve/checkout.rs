//! Checkouts at every depth, depth changes, externals, single-file updates,
//! switch and `status -u`, compared with svnserve.

use crate::common::pair;

#[test]
fn checkout_at_every_depth() {
    let pair = pair("basic");
    let s = pair.scope("checkout_at_every_depth");
    for depth in ["empty", "files", "immediates", "infinity"] {
        let wc = format!("wc-{depth}");
        s.both(&["checkout", "--depth", depth, "{URL}/trunk", &wc])
            .expect_stdout("Checked out revision 12.");
        s.compare_wc(&wc);
    }
    // The deep tree of r8, and the whole repository at an old revision.
    s.both(&["checkout", "-r", "8", "{URL}/trunk/a", "deep"])
        .expect_stdout("deep/b/c/d/e/leaf.txt");
    s.compare_wc("deep");
    s.both(&["checkout", "{URL}@3", "root-at-3"]);
    s.compare_wc("root-at-3");
    s.both(&[
        "checkout",
        "--depth",
        "immediates",
        "-r",
        "2",
        "{URL}/trunk",
        "imm-2",
    ]);
    s.compare_wc("imm-2");
}

#[test]
fn set_depth_widens_and_narrows() {
    let pair = pair("basic");
    let s = pair.scope("set_depth_widens_and_narrows");
    s.both(&[
        "checkout",
        "--depth",
        "empty",
        "-r",
        "8",
        "{URL}/trunk",
        "wc",
    ]);
    s.steps(
        "wc",
        &[
            &["update", "--set-depth", "files", "wc"],
            &["update", "--set-depth", "immediates", "wc"],
            &["update", "--set-depth", "infinity", "wc/a"],
            &["update", "--set-depth", "empty", "wc/a/b"],
            &["update", "--set-depth", "files", "wc/a/b"],
            &["update", "--set-depth", "immediates", "wc"],
            &["update", "--set-depth", "infinity", "wc"],
            &["update", "--set-depth", "empty", "wc/src"],
            &["update", "--set-depth", "exclude", "wc/a"],
            &["update", "-r", "12", "wc"],
            &["update", "--set-depth", "infinity", "wc/a"],
            &["update", "--set-depth", "files", "wc"],
            &["update", "--depth", "infinity", "wc"],
        ],
    );
}

#[test]
fn externals_in_a_checkout() {
    let pair = pair("props");
    let s = pair.scope("externals_in_a_checkout");
    s.both(&["checkout", "{URL}/trunk", "wc"])
        .expect_stdout("Fetching external item into 'wc/ext.txt'");
    s.compare_wc("wc");
    s.both(&["status", "-u", "wc"]);
    s.both(&["info", "wc/ext.txt"]);
    s.both(&["update", "-r", "8", "wc"]);
    s.compare_wc("wc");
    s.both(&["checkout", "--ignore-externals", "{URL}/trunk", "no-ext"]);
    s.compare_wc("no-ext");
    // Root properties, a property-only change and copies with props.
    s.both(&["checkout", "-r", "3", "{URL}", "root"]);
    s.compare_wc("root");
    s.both(&["update", "root"]);
    s.compare_wc("root");
}

#[test]
fn update_of_single_files() {
    let pair = pair("basic");
    let s = pair.scope("update_of_single_files");
    s.both(&["checkout", "-r", "2", "{URL}/trunk", "wc"]);
    s.steps(
        "wc",
        &[
            &["update", "-r", "3", "wc/README.txt"],
            &["update", "-r", "7", "wc/README.txt", "wc/src/main.c"],
            // main.c is deleted in r9, doc in r5.
            &["update", "-r", "9", "wc/src/main.c"],
            &["update", "-r", "5", "wc/doc/guide.txt"],
            &["update", "-r", "6", "wc/empty.txt"],
            &["update", "-r", "2", "wc/README.txt"],
            &["update", "wc/README.txt"],
            &["update", "-r", "9", "wc/src"],
            &["update", "wc"],
            &["update", "-r", "11", "wc/src/new.c"],
        ],
    );
}

#[test]
fn switch_to_a_branch_and_back() {
    let pair = pair("copies");
    let s = pair.scope("switch_to_a_branch_and_back");
    s.both(&["checkout", "{URL}/trunk", "wc"]);
    s.steps(
        "wc",
        &[
            &["switch", "{URL}/branches/feature", "wc"],
            &["switch", "{URL}/tags/1.0", "wc"],
            &["switch", "-r", "7", "{URL}/branches/feature2", "wc"],
            &["switch", "{URL}/trunk", "wc"],
            &[
                "switch",
                "--ignore-ancestry",
                "{URL}/branches/feature/new",
                "wc/lib",
            ],
            &["switch", "--ignore-ancestry", "{URL}/trunk/lib", "wc/lib"],
            &[
                "switch",
                "{URL}/trunk/lib/a.c@2",
                "wc/main.c",
                "--ignore-ancestry",
            ],
            &[
                "switch",
                "{URL}/trunk/main.c",
                "wc/main.c",
                "--ignore-ancestry",
            ],
            &["switch", "--ignore-ancestry", "{URL}/trunk/snapshot", "wc"],
            &["switch", "--ignore-ancestry", "{URL}/trunk", "wc"],
        ],
    );
    // Not a branch of trunk: refused the same way.
    s.both_fails(&["switch", "{URL}/tags/mixed", "wc"]);
}

#[test]
fn switch_across_replaced_and_merged_branches() {
    for fixture in ["replace", "mergeinfo"] {
        let pair = pair(fixture);
        let s = pair.scope("switch_across_replaced_and_merged_branches");
        let branch = if fixture == "replace" {
            "{URL}/branches/b"
        } else {
            "{URL}/branches/feature"
        };
        s.both(&["checkout", "{URL}/trunk", "wc"]);
        s.steps(
            "wc",
            &[
                &["switch", "--ignore-ancestry", branch, "wc"],
                &["switch", "--ignore-ancestry", "{URL}/trunk@5", "wc"],
                &["switch", "--ignore-ancestry", "{URL}/trunk", "wc"],
            ],
        );
    }
}

#[test]
fn status_against_the_repository() {
    let pair = pair("basic");
    let s = pair.scope("status_against_the_repository");
    s.both(&["checkout", "-r", "3", "{URL}/trunk", "wc"]);
    s.both(&["status", "-u", "wc"]).expect_stdout("*");
    s.both(&["status", "-u", "-v", "wc"]);
    s.both(&["status", "-u", "--xml", "wc"]);
    s.both(&["status", "-u", "--depth", "immediates", "wc"]);
    s.both(&["status", "-u", "wc/src"]);
    s.both(&["status", "-u", "wc/README.txt"]);
    // Local changes next to incoming ones.
    s.write("wc/README.txt", b"local change\n");
    s.write("wc/unversioned.txt", b"new\n");
    s.remove("wc/doc/guide.txt");
    s.both(&["status", "-u", "-v", "wc"]).expect_stdout("?");
    // A mixed-revision working copy.
    s.both(&["update", "-r", "9", "wc/src"]);
    s.both(&["status", "-u", "-v", "wc"]);
    s.both(&["status", "--show-updates", "--quiet", "wc"]);
}
