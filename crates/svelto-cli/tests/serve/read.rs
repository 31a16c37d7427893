//! The read-only commands on URLs: `ls`, `cat`, `info`, `proplist`,
//! `propget --show-inherited-props`, `mergeinfo`, compared with svnserve.

use crate::common::{head, pair, ALL};

#[test]
fn ls_recursive_verbose() {
    for fixture in ALL {
        let pair = pair(fixture);
        pair.both(&["ls", "-R", "-v", "{URL}"]);
        pair.both(&["ls", "--xml", "-R", "{URL}"]);
        pair.both(&["ls", "-v", "{URL}@1"]);
    }
    let basic = pair("basic");
    basic
        .both(&["ls", "-R", "{URL}/trunk@8"])
        .expect_stdout("a/b/c/d/e/leaf.txt");
    basic.both(&["ls", "-v", "--depth", "immediates", "{URL}/trunk@3"]);
    basic.both(&["ls", "-v", "{URL}/trunk/README.txt"]);
    basic.both(&["ls", "{URL}/trunk/doc@4"]);
    basic.both_fails(&["ls", "{URL}/trunk/doc"]);
    basic.both_fails(&["ls", "-r", "99", "{URL}"]);
    pair("props").both(&["ls", "-R", "--include-externals", "{URL}/trunk"]);
    // `--search` patterns are matched by the server (the list command), as apr_fnmatch.
    basic
        .both(&["ls", "-R", "--search", "*.txt", "{URL}/trunk@8"])
        .expect_stdout("leaf.txt");
    basic.both(&[
        "ls",
        "-R",
        "--search",
        "[a-l]*",
        "--search",
        "?EADME*",
        "{URL}/trunk@8",
    ]);
    basic.both(&["ls", "-R", "--search", "[!a-z]*", "{URL}/trunk@8"]);
    // Names are compared case-folded.
    basic
        .both(&["ls", "-R", "--search", "readme*", "{URL}/trunk@8"])
        .expect_stdout("README.txt");
    basic.both(&["ls", "-R", "--search", "README*", "{URL}/trunk@8"]);
}

#[test]
fn cat_at_revisions() {
    let basic = pair("basic");
    for rev in 2..=head(basic) {
        basic.both_any(&["cat", "-r", &rev.to_string(), "{URL}/trunk/README.txt"]);
    }
    basic.both(&["cat", "{URL}/trunk/data.bin@6"]);
    basic.both(&["cat", "-r", "2", "{URL}/trunk/data.bin@6"]);
    basic.both(&["cat", "{URL}/trunk/a/b/all-bytes.bin"]);
    basic.both(&["cat", "-r", "8", "{URL}/trunk/a/b/c/empty-in-deep.txt"]);
    basic.both(&["cat", "{URL}/trunk/src/util.c@3"]);
    basic.both(&["cat", "-r", "2", "{URL}/trunk/src/main.c@8"]);
    basic.both_fails(&["cat", "{URL}/trunk/src"]);
    basic.both_fails(&["cat", "{URL}/trunk/src/util.c"]);
    let keywords = pair("eol-keywords");
    keywords
        .both(&["cat", "{URL}/trunk/keywords.txt"])
        .expect_stdout("$Id: keywords.txt 4");
    keywords
        .both(&["cat", "-r", "3", "{URL}/trunk/keywords.txt"])
        .expect_stdout("$HeadURL: svn://SERVER/");
    keywords.both(&[
        "cat",
        "--ignore-keywords",
        "-r",
        "3",
        "{URL}/trunk/keywords.txt",
    ]);
    keywords.both(&["cat", "{URL}/trunk/crlf.txt"]);
    let symlinks = pair("symlinks");
    symlinks
        .both(&["cat", "{URL}/trunk/link-to-file"])
        .expect_stdout("link ");
    let names = pair("names");
    names.both(&["cat", "{URL}/trunk/ÜNÏCÖDÉ/日本語.txt"]);
    names.both(&["cat", "{URL}/trunk/emoji%20😀.txt"]);
    names.both(&["cat", "{URL}/trunk/quote'and\"double.txt"]);
    names.both(&["cat", "{URL}/trunk/percent%2520sign.txt"]);
}

#[test]
fn info_recursive() {
    for fixture in ALL {
        let pair = pair(fixture);
        pair.both(&["info", "-R", "{URL}"])
            .expect_stdout("Repository UUID:");
        pair.both(&["info", "--xml", "-R", "{URL}@1"]);
    }
    let basic = pair("basic");
    basic.both(&["info", "-r", "5", "{URL}/trunk/README.txt"]);
    basic.both(&["info", "{URL}/trunk/doc/guide.txt@2"]);
    basic.both(&["info", "--depth", "immediates", "{URL}/trunk"]);
    basic.both(&[
        "info",
        "--show-item",
        "last-changed-revision",
        "{URL}/trunk/src",
    ]);
    basic.both_fails(&["info", "{URL}/trunk/doc"]);
    basic.both_fails(&["info", "{SERVER}/no-such-repository"]);
}

#[test]
fn proplist_recursive_verbose() {
    for fixture in ALL {
        let pair = pair(fixture);
        pair.both(&["proplist", "-v", "-R", "{URL}"]);
        pair.both(&["proplist", "-v", "-R", "--xml", "{URL}@1"]);
    }
    let props = pair("props");
    for rev in 1..=head(props) {
        props.both(&["proplist", "-v", "-R", "-r", &rev.to_string(), "{URL}"]);
    }
    props.both(&["propget", "-R", "svn:externals", "{URL}"]);
    props.both(&["propget", "-v", "binary", "{URL}/trunk/other.txt"]);
    props.both(&["propget", "--xml", "utf8", "{URL}/trunk"]);
    props.both_fails(&["propget", "nope", "{URL}/trunk/nothere"]);
}

#[test]
fn propget_with_inherited_props() {
    let props = pair("props");
    props
        .both(&[
            "propget",
            "--show-inherited-props",
            "-v",
            "dirprop",
            "{URL}/trunk/file.txt",
        ])
        .expect_stdout("Inherited properties");
    props.both(&[
        "proplist",
        "--show-inherited-props",
        "-v",
        "{URL}/trunk/other.txt",
    ]);
    props.both(&[
        "proplist",
        "--show-inherited-props",
        "-v",
        "-r",
        "3",
        "{URL}/trunk/file.txt",
    ]);
    props.both(&[
        "propget",
        "--show-inherited-props",
        "--xml",
        "dirprop",
        "{URL}/trunk-old/file.txt",
    ]);
    let mixed = pair("mixed");
    mixed.both(&[
        "propget",
        "--show-inherited-props",
        "p",
        "{URL}/trunk/src/main2.c",
    ]);
    mixed.both(&[
        "proplist",
        "--show-inherited-props",
        "-v",
        "{URL}/trunk/src",
    ]);
    let mergeinfo = pair("mergeinfo");
    mergeinfo.both(&[
        "propget",
        "--show-inherited-props",
        "svn:mergeinfo",
        "{URL}/branches/feature/sub/c.txt",
    ]);
    // Inherited props cached in a working copy at checkout.
    let s = props.scope("propget_with_inherited_props");
    s.both(&["checkout", "{URL}/trunk", "wc"]);
    s.both(&["proplist", "--show-inherited-props", "-v", "wc/file.txt"]);
    s.both(&[
        "propget",
        "--show-inherited-props",
        "dirprop",
        "wc/other.txt",
    ]);
}

#[test]
fn mergeinfo_between_branches() {
    let pair = pair("mergeinfo");
    pair.both(&["mergeinfo", "{URL}/branches/feature", "{URL}/trunk"]);
    pair.both(&["mergeinfo", "{URL}/trunk", "{URL}/branches/feature"]);
    pair.both(&[
        "mergeinfo",
        "--show-revs",
        "merged",
        "{URL}/branches/feature",
        "{URL}/trunk",
    ])
    .expect_stdout("r");
    pair.both(&[
        "mergeinfo",
        "--show-revs",
        "eligible",
        "{URL}/branches/feature",
        "{URL}/trunk",
    ]);
    pair.both(&[
        "mergeinfo",
        "--show-revs",
        "merged",
        "-R",
        "{URL}/trunk",
        "{URL}/branches/feature",
    ]);
    pair.both(&[
        "mergeinfo",
        "--show-revs",
        "eligible",
        "--log",
        "{URL}/trunk",
        "{URL}/branches/feature",
    ]);
    pair.both(&[
        "mergeinfo",
        "--show-revs",
        "merged",
        "--log",
        "-v",
        "{URL}/trunk/sub",
        "{URL}/branches/feature/sub",
    ]);
    pair.both(&["mergeinfo", "{URL}/trunk", "{URL}/branches/feature2"]);
    pair.both(&["mergeinfo", "{URL}/trunk@10", "{URL}/branches/feature@12"]);
    pair.both(&["propget", "-R", "-v", "svn:mergeinfo", "{URL}"]);
    let s = pair.scope("mergeinfo_between_branches");
    s.both(&["checkout", "{URL}/branches/feature", "wc"]);
    s.both(&["mergeinfo", "{URL}/trunk", "wc"]);
    s.both(&["mergeinfo", "--show-revs", "eligible", "{URL}/trunk", "wc"]);
    let mixed = crate::common::pair("mixed");
    mixed.both(&["mergeinfo", "{URL}/branches/b", "{URL}/trunk"]);
    mixed.both(&[
        "mergeinfo",
        "--show-revs",
        "merged",
        "{URL}/trunk",
        "{URL}/branches/b",
    ]);
}

/// Dated revisions (`get-dated-rev`) and revision properties (`rev-prop`, `rev-proplist`).
#[test]
fn dates_and_revision_properties() {
    let pair = pair("basic");
    // Dates before r0's, between revisions, exactly on one, and after HEAD's.
    for date in [
        "{1999-01-01}",
        "{2011-03-13T09:30:00Z}",
        "{2011-03-13T10:10:13.023758Z}",
        "{2011-03-13T18:00:00Z}",
        "{2030-01-01}",
    ] {
        pair.both(&["info", "-r", date, "{URL}"]);
        pair.both(&["log", "-q", "-r", &format!("{date}:1"), "{URL}"]);
    }
    pair.both_fails(&["info", "-r", "{garbage}", "{URL}"]);
    let revprops = pair_revprops();
    for rev in ["0", "1", "3", "HEAD"] {
        revprops.both(&["proplist", "--revprop", "-v", "-r", rev, "{URL}"]);
        // Some revisions lack the property: then both must fail alike.
        revprops.both_any(&["propget", "--revprop", "-r", rev, "svn:log", "{URL}"]);
        revprops.both_any(&["propget", "--revprop", "-r", rev, "svn:author", "{URL}"]);
    }
    revprops.both_fails(&["proplist", "--revprop", "-r", "999", "{URL}"]);
}

fn pair_revprops() -> &'static svelto_testkit::Pair {
    pair("revprops")
}
