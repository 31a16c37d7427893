//! `svn log` in every form the issue lists, compared with svnserve.

use crate::common::{pair, ALL};

#[test]
fn log_of_every_fixture() {
    for fixture in ALL {
        let pair = pair(fixture);
        pair.both(&["log", "-v", "{URL}"]).expect_stdout("r1 |");
        pair.both(&["log", "-q", "{URL}"]);
        pair.both(&["log", "--xml", "-v", "--with-all-revprops", "{URL}"]);
    }
}

#[test]
fn log_ranges_both_ways_and_limits() {
    let pair = pair("basic");
    pair.both(&["log", "-r", "1:HEAD", "{URL}"]);
    pair.both(&["log", "-r", "HEAD:1", "{URL}"]);
    pair.both(&["log", "-v", "-r", "3:9", "{URL}/trunk"]);
    pair.both(&["log", "-v", "-r", "9:3", "{URL}/trunk"]);
    pair.both(&["log", "-r", "5", "{URL}"]);
    pair.both(&["log", "-c", "9", "-v", "{URL}"]);
    pair.both(&["log", "-r", "0", "{URL}"]);
    pair.both(&["log", "--limit", "3", "{URL}"])
        .expect_stdout("r10");
    pair.both(&["log", "--limit", "2", "-r", "1:HEAD", "-v", "{URL}"]);
    pair.both(&["log", "-l", "1", "{URL}/trunk/README.txt"]);
    pair.both(&["log", "-r", "2:9", "{URL}/trunk/README.txt"]);
    pair.both(&["log", "-r", "12:1", "--limit", "4", "{URL}/trunk/src"]);
    pair.both(&[
        "log",
        "-q",
        "-r",
        "1:HEAD",
        "{URL}/trunk",
        "README.txt",
        "src",
        "a",
    ]);
    pair.both(&["log", "--xml", "--with-no-revprops", "{URL}"]);
    pair.both(&["log", "--xml", "--with-revprop", "svn:author", "{URL}"]);
    pair.both(&["log", "--diff", "-r", "3", "{URL}"]);
    pair.both(&[
        "log",
        "--diff",
        "--depth",
        "empty",
        "-r",
        "3",
        "{URL}/trunk",
    ]);
    pair.both_fails(&["log", "-r", "1:99", "{URL}"]);
}

#[test]
fn log_stop_on_copy_and_copied_paths() {
    let pair = pair("copies");
    pair.both(&["log", "--stop-on-copy", "-v", "{URL}/branches/feature2"])
        .expect_stdout("r7");
    pair.both(&["log", "-v", "{URL}/branches/feature2"]);
    pair.both(&["log", "--stop-on-copy", "{URL}/trunk/lib2/a.c"]);
    pair.both(&["log", "-v", "{URL}/trunk/lib2/a.c"]);
    pair.both(&["log", "-v", "{URL}/trunk/b-resurrected.c"]);
    pair.both(&["log", "-v", "{URL}/tags/root-at-10/trunk/main.c"]);
    pair.both(&["log", "-v", "-r", "1:HEAD", "{URL}/trunk/main-copy.c"]);
    pair.both(&["log", "-v", "{URL}/tags/mixed/a.c"]);
}

#[test]
fn log_of_a_file_copied_and_renamed() {
    let pair = pair("moves");
    // main/file.txt was trunk/file.txt (r6), trunk/parent/renamed.txt (r5),
    // trunk/renamed.txt (r3), trunk/file.txt (r2).
    pair.both(&["log", "-v", "{URL}/main/file.txt"])
        .expect_stdout("r2 |");
    pair.both(&["log", "-v", "-r", "1:HEAD", "{URL}/main/file.txt"]);
    pair.both(&["log", "--stop-on-copy", "{URL}/main/file.txt"]);
    pair.both(&["log", "-v", "{URL}/main/parent/new/inner/deep.txt"]);
    pair.both(&["log", "-v", "--xml", "{URL}/main"]);
}

#[test]
fn log_with_a_peg_revision_on_a_deleted_path() {
    let pair = pair("basic");
    // util.c was deleted in r4, doc in r5, main.c in r9.
    pair.both(&["log", "-v", "{URL}/trunk/src/util.c@3"])
        .expect_stdout("r2 |");
    pair.both(&["log", "{URL}/trunk/doc@4"]);
    pair.both(&["log", "-r", "2:4", "{URL}/trunk/doc/api@4"]);
    pair.both(&["log", "-v", "{URL}/trunk/src/main.c@8", "-r", "8:1"]);
    pair.both_fails(&["log", "{URL}/trunk/src/util.c"]);
    pair.both_fails(&["log", "{URL}/trunk/src/util.c@5"]);
    let readd = crate::common::pair("readd");
    readd.both(&["log", "-v", "{URL}/trunk/dir@4"]);
    readd.both(&["log", "-v", "{URL}/trunk/dir/one"]);
    readd.both(&["log", "-v", "{URL}/trunk/file@2"]);
}

#[test]
fn log_with_merge_history() {
    let pair = pair("mergeinfo");
    pair.both(&["log", "-g", "{URL}/trunk"])
        .expect_stdout("Merged via:");
    pair.both(&["log", "-g", "-v", "{URL}/trunk"]);
    pair.both(&["log", "-g", "--xml", "{URL}/trunk"]);
    pair.both(&["log", "-g", "-r", "13", "{URL}/trunk"]);
    pair.both(&["log", "-g", "-r", "1:HEAD", "{URL}/branches/feature"]);
    pair.both(&["log", "-g", "-q", "{URL}/branches/feature2"]);
    pair.both(&["log", "-g", "--limit", "2", "{URL}/trunk/b.txt"]);
    pair.both(&["log", "-g", "{URL}/branches/feature/sub/c.txt"]);
    let mixed = crate::common::pair("mixed");
    mixed.both(&["log", "-g", "-v", "{URL}/trunk"]);
}

#[test]
fn log_search() {
    let pair = pair("basic");
    pair.both(&["log", "--search", "bob", "{URL}"])
        .expect_stdout("r3 | bob");
    pair.both(&["log", "--search", "nothing-matches-this", "{URL}"]);
    pair.both(&["log", "-v", "--search", "*.c", "{URL}"]);
    pair.both(&["log", "--search", "alice", "--search-and", "r1*", "{URL}"]);
    let revprops = crate::common::pair("revprops");
    revprops.both(&["log", "--search", "line", "{URL}"]);
    revprops.both(&[
        "log",
        "-v",
        "--xml",
        "--with-all-revprops",
        "-r",
        "0:HEAD",
        "{URL}",
    ]);
    revprops.both(&["proplist", "--revprop", "-v", "-r", "0", "{URL}"]);
}
