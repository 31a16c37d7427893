//! Working copies walked through whole histories over HTTP, forward one revision at a time
//! and back, switched and checked with `status -u`, compared with Apache after every step.

use crate::{head, pair};

fn forward_and_back(first: u64, head: u64) -> Vec<u64> {
    let mut revs: Vec<u64> = (first..=head).collect();
    revs.extend((first..head).rev());
    revs
}

#[test]
fn updates_across_every_fixture() {
    for fixture in [
        "copies", "replace", "readd", "moves", "props", "symlinks", "names",
    ] {
        let pair = pair(fixture);
        let s = pair.scope("walk");
        s.walk("", "wc", &forward_and_back(0, head(pair)));
    }
}

#[test]
fn switch_status_and_depth() {
    let pair = pair("basic");
    let s = pair.scope("switch_status_and_depth");
    s.both(&["checkout", "-r", "2", "{URL}/trunk", "wc"]);
    s.steps(
        "wc",
        &[
            &["status", "-u", "-v", "wc"],
            &["update", "--set-depth", "immediates", "wc"],
            &["update", "--set-depth", "infinity", "wc"],
            &["update", "wc"],
            &["status", "-u", "wc"],
            &["update", "-r", "1", "wc"],
        ],
    );
}

/// `svn switch` between a trunk and its branches (and back, to an older revision, at a
/// smaller depth), with `status -u` in between, compared with Apache after every step.
#[test]
fn switch_between_branches() {
    let pair = pair("mergeinfo");
    let s = pair.scope("switch_between_branches");
    s.both(&["checkout", "{URL}/trunk", "wc"]);
    s.steps(
        "wc",
        &[
            &["switch", "{URL}/branches/feature", "wc"],
            &["status", "-u", "-v", "wc"],
            &["switch", "{URL}/trunk/sub", "wc/sub"],
            &["status", "-u", "wc"],
            &["switch", "-r", "3", "{URL}/trunk", "wc"],
            &[
                "switch",
                "--set-depth",
                "files",
                "{URL}/branches/feature2",
                "wc",
            ],
            &["switch", "{URL}/trunk", "wc"],
            &["info", "wc"],
        ],
    );
}
