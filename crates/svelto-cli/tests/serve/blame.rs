//! `svn blame` with merge history, ranges and copies, compared with svnserve.

use crate::common::pair;

#[test]
fn blame_ranges() {
    let pair = pair("basic");
    pair.both(&["blame", "{URL}/trunk/README.txt"])
        .expect_stdout("carol");
    pair.both(&["blame", "-v", "{URL}/trunk/README.txt"]);
    pair.both(&["blame", "--xml", "{URL}/trunk/README.txt"]);
    pair.both(&["blame", "-r", "3:7", "{URL}/trunk/README.txt"]);
    pair.both(&["blame", "-r", "7:3", "{URL}/trunk/README.txt"]);
    pair.both(&["blame", "-r", "HEAD:1", "{URL}/trunk/README.txt"]);
    pair.both(&["blame", "-r", "5", "{URL}/trunk/README.txt"]);
    pair.both(&["blame", "{URL}/trunk/src/main.c@8"]);
    pair.both(&["blame", "{URL}/trunk/src/new-copy.c"]);
    pair.both(&["blame", "-x", "-w", "{URL}/trunk/README.txt"]);
    // Binary files are skipped the same way, unless forced.
    pair.both(&["blame", "{URL}/trunk/a/b/all-bytes.bin"])
        .expect_stderr("Skipping binary file");
    pair.both(&["blame", "--force", "{URL}/trunk/a/b/all-bytes.bin"]);
    pair.both_fails(&["blame", "{URL}/trunk/nope"]);
    pair.both_fails(&["blame", "{URL}/trunk/src"]);
}

#[test]
fn blame_with_merge_history() {
    let pair = pair("mergeinfo");
    for file in [
        "trunk/a.txt",
        "trunk/b.txt",
        "trunk/sub/c.txt",
        "branches/feature2/a.txt",
    ] {
        let url = format!("{{URL}}/{file}");
        pair.both(&["blame", &url]);
        pair.both(&["blame", "-g", &url]);
        pair.both(&["blame", "-g", "-v", &url]);
        pair.both(&["blame", "-g", "--xml", &url]);
    }
    pair.both(&["blame", "-g", "-r", "4:13", "{URL}/trunk/a.txt"]);
}

#[test]
fn blame_of_copied_files() {
    let copies = pair("copies");
    for file in [
        "trunk/main-copy.c",
        "trunk/lib2/a.c",
        "trunk/a-orig.c",
        "tags/mixed/a.c",
    ] {
        copies.both(&["blame", "-v", &format!("{{URL}}/{file}")]);
    }
    let moves = crate::common::pair("moves");
    moves.both(&["blame", "-v", "{URL}/main/file.txt"]);
    moves.both(&["blame", "{URL}/main/parent/new/inner/deep.txt"]);
    let replace = crate::common::pair("replace");
    replace.both(&["blame", "-v", "{URL}/trunk/f2@5"]);
    replace.both(&["blame", "-v", "{URL}/branches/b/f2"]);
    let keywords = crate::common::pair("eol-keywords");
    keywords.both(&["blame", "{URL}/trunk/keywords.txt"]);
    keywords.both(&["blame", "{URL}/trunk/crlf.txt"]);
}
