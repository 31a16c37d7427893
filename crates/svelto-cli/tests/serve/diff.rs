//! `svn diff` between revisions and URLs, of working copies against the
//! repository, and `--summarize`, compared with svnserve.

use crate::common::{head, pair};

#[test]
fn diff_between_revisions() {
    let pair = pair("basic");
    pair.both(&["diff", "-r", "2:9", "{URL}/trunk"])
        .expect_stdout("Index: README.txt");
    pair.both(&["diff", "-r", "9:2", "{URL}/trunk"]);
    pair.both(&["diff", "-r", "1:12", "{URL}"]);
    pair.both(&["diff", "-r", "12:1", "{URL}"]);
    pair.both(&["diff", "-r", "3:7", "{URL}/trunk/README.txt"]);
    pair.both(&["diff", "--git", "-r", "1:12", "{URL}"]);
    pair.both(&["diff", "--show-copies-as-adds", "-r", "10:12", "{URL}"]);
    pair.both(&["diff", "--depth", "immediates", "-r", "2:9", "{URL}/trunk"]);
    pair.both(&[
        "diff",
        "--ignore-properties",
        "-x",
        "-w",
        "-r",
        "2:3",
        "{URL}",
    ]);
    for rev in 1..=head(pair) {
        pair.both(&["diff", "-c", &rev.to_string(), "{URL}"]);
    }
}

#[test]
fn diff_summarize() {
    for fixture in ["basic", "replace", "copies", "moves", "props"] {
        let pair = pair(fixture);
        let head = head(pair).to_string();
        pair.both(&["diff", "--summarize", "-r", &format!("0:{head}"), "{URL}"]);
        pair.both(&["diff", "--summarize", "-r", &format!("{head}:1"), "{URL}"]);
        pair.both(&[
            "diff",
            "--summarize",
            "--xml",
            "-r",
            &format!("1:{head}"),
            "{URL}",
        ]);
        for rev in 1..=head.parse::<u64>().expect("a number") {
            pair.both(&["diff", "--summarize", "-c", &rev.to_string(), "{URL}"]);
        }
    }
}

#[test]
fn diff_across_replaces_copies_and_props() {
    let replace = pair("replace");
    replace.both(&["diff", "-r", "1:12", "{URL}/trunk"]);
    replace.both(&["diff", "--notice-ancestry", "-r", "2:11", "{URL}"]);
    replace.both(&["diff", "-r", "3:9", "{URL}/trunk"]);
    let copies = pair("copies");
    copies.both(&["diff", "{URL}/trunk@3", "{URL}/branches/feature@6"]);
    copies.both(&["diff", "--summarize", "{URL}/trunk@9", "{URL}/trunk/lib2@9"]);
    copies.both(&["diff", "{URL}/trunk/lib/a.c@1", "{URL}/trunk/lib2/a.c@9"]);
    copies.both(&[
        "diff",
        "--notice-ancestry",
        "{URL}/tags/1.0",
        "{URL}/branches/post-delete",
    ]);
    let props = pair("props");
    props
        .both(&["diff", "-r", "0:10", "{URL}"])
        .expect_stdout("Added: svn:needs-lock");
    props.both(&["diff", "--git", "-r", "2:9", "{URL}"]);
    let mixed = pair("mixed");
    mixed.both(&["diff", "-r", "1:12", "{URL}"]);
    mixed.both(&["diff", "{URL}/trunk", "{URL}/branches/b"]);
}

#[test]
fn diff_of_paths_that_do_not_exist() {
    let pair = pair("basic");
    pair.both_fails(&["diff", "-r", "1:2", "{URL}/trunk/nope"]);
    pair.both_fails(&["diff", "-r", "1:99", "{URL}"]);
    pair.both(&["diff", "-r", "3:5", "{URL}/trunk/doc"]);
}

#[test]
fn diff_of_a_working_copy_against_the_repository() {
    let pair = pair("basic");
    let s = pair.scope("diff_of_a_working_copy_against_the_repository");
    s.both(&["checkout", "-r", "7", "{URL}/trunk", "wc"]);
    s.both(&["diff", "-r", "3", "wc"]);
    s.both(&["diff", "-r", "HEAD", "wc"]);
    s.both(&["diff", "--summarize", "-r", "12", "wc"]);
    s.write("wc/README.txt", b"local\n");
    s.both(&["diff", "-r", "9", "wc"]);
    s.both(&["diff", "wc"]);
}
