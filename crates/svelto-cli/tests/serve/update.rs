//! Working copies walked through whole histories, forward one revision at a
//! time and back, compared on disk and as svn sees them after every step.

use crate::common::{forward_and_back, head, pair};

fn walk(fixture: &str, url_path: &str) {
    let pair = pair(fixture);
    let s = pair.scope(&format!("walk{}", url_path.replace('/', "-")));
    // A subdirectory exists from r1 on; the root from r0.
    let first = u64::from(!url_path.is_empty());
    s.walk(url_path, "wc", &forward_and_back(first, head(pair)));
}

#[test]
fn updates_across_replaces() {
    walk("replace", "");
}

#[test]
fn updates_across_copies() {
    walk("copies", "");
}

#[test]
fn updates_across_deletes_and_readds() {
    walk("readd", "");
}

#[test]
fn updates_across_moves() {
    walk("moves", "");
}

#[test]
fn updates_of_symlinks() {
    walk("symlinks", "");
}

#[test]
fn updates_of_basic_changes() {
    walk("basic", "/trunk");
}

#[test]
fn updates_of_odd_names() {
    walk("names", "/trunk");
}

#[test]
fn updates_of_properties() {
    walk("props", "");
}

#[test]
fn updates_of_eol_and_keywords() {
    walk("eol-keywords", "/trunk");
}

#[test]
fn updates_of_mixed_history() {
    walk("mixed", "");
}

#[test]
fn updates_skipping_revisions() {
    let pair = pair("replace");
    let s = pair.scope("updates_skipping_revisions");
    // Big jumps across several replaces at once, both ways.
    s.walk("/trunk", "wc", &[1, 12, 3, 9, 2, 11, 1, 7]);
    let pair = crate::common::pair("copies");
    let s = pair.scope("updates_skipping_revisions");
    s.walk("", "wc", &[0, 12, 4, 10, 1]);
}
