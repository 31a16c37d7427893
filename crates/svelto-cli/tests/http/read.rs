//! Reads over HTTP compared with Apache: checkout and export (skelta and send-all),
//! `ls`, `cat`, `info`, `log`, `blame`, properties, `mergeinfo`, dated revisions.

use crate::{head, pair, ALL, BULK};

#[test]
fn checkout_and_export_of_every_fixture() {
    for fixture in ALL {
        let pair = pair(fixture);
        let s = pair.scope("checkout_and_export");
        s.both(&["checkout", "{URL}", "wc"]);
        s.compare_wc("wc");
        s.both(&["--config-option", BULK, "checkout", "{URL}", "wc-bulk"]);
        s.compare_wc("wc-bulk");
        s.both(&["export", "{URL}", "exported"]);
        s.compare_tree("exported");
        s.both(&["--config-option", BULK, "export", "{URL}", "exported-bulk"]);
        s.compare_tree("exported-bulk");
    }
}

#[test]
fn checkout_at_every_depth_and_revision() {
    let pair = pair("basic");
    let s = pair.scope("checkout_at_every_depth");
    for depth in ["empty", "files", "immediates", "infinity"] {
        let wc = format!("wc-{depth}");
        s.both(&["checkout", "--depth", depth, "{URL}/trunk", &wc]);
        s.compare_wc(&wc);
    }
    for rev in 0..=head(pair) {
        let wc = format!("wc-r{rev}");
        s.both(&["checkout", "-r", &rev.to_string(), "{URL}", &wc]);
        s.compare_wc(&wc);
    }
    s.both_fails(&["checkout", "{URL}/no-such-dir", "missing"]);
    s.both_fails(&["checkout", "-r", "99", "{URL}", "future"]);
}

#[test]
fn ls_cat_info() {
    for fixture in ALL {
        let pair = pair(fixture);
        pair.both(&["ls", "-R", "-v", "{URL}"]);
        pair.both(&["ls", "--xml", "-R", "{URL}"]);
        pair.both(&["info", "-R", "{URL}"]);
        pair.both(&["info", "--xml", "{URL}"]);
    }
    let basic = pair("basic");
    basic.both(&["ls", "-v", "{URL}/trunk@3"]);
    basic.both(&["ls", "-R", "--search", "*.txt", "{URL}/trunk@8"]);
    basic.both(&["cat", "{URL}/trunk/README.txt"]);
    basic.both(&["cat", "-r", "2", "{URL}/trunk/README.txt"]);
    basic.both_fails(&["cat", "{URL}/trunk"]);
    basic.both_fails(&["cat", "{URL}/trunk/no-such-file"]);
    basic.both_fails(&["ls", "{URL}/trunk/no-such-dir"]);
    basic.both(&["info", "{URL}/trunk@1"]);
    basic.both(&["ls", "{URL}@{2000-01-01}"]);
}

#[test]
fn log_blame_and_properties() {
    for fixture in ALL {
        let pair = pair(fixture);
        pair.both(&["log", "-v", "{URL}"]);
        pair.both(&["log", "-v", "-g", "--xml", "--with-all-revprops", "{URL}"]);
        pair.both(&["proplist", "-v", "-R", "{URL}"]);
        pair.both(&["proplist", "-v", "--show-inherited-props", "{URL}"]);
        pair.both(&["proplist", "--revprop", "-v", "-r", "1", "{URL}"]);
    }
    let basic = pair("basic");
    basic.both(&["log", "-q", "-l", "3", "{URL}/trunk/README.txt"]);
    basic.both(&["log", "--stop-on-copy", "-v", "{URL}/trunk"]);
    basic.both(&["blame", "{URL}/trunk/README.txt"]);
    basic.both(&["blame", "-r", "HEAD:1", "{URL}/trunk/README.txt"]);
    let props = pair("props");
    props.both(&[
        "propget",
        "--show-inherited-props",
        "-v",
        "dirprop",
        "{URL}/trunk/file.txt",
    ]);
    props.both(&[
        "propget",
        "--show-inherited-props",
        "--xml",
        "custom:two",
        "{URL}/trunk",
    ]);
    let merges = pair("mergeinfo");
    merges.both(&["log", "-g", "-v", "{URL}/trunk"]);
    merges.both(&["blame", "-g", "{URL}/trunk/a.txt"]);
    merges.both(&["blame", "-g", "-v", "{URL}/trunk/b.txt"]);
    merges.both(&[
        "blame",
        "-g",
        "-r",
        "2:HEAD",
        "{URL}/branches/feature/a.txt",
    ]);
    merges.both(&["mergeinfo", "{URL}/branches/feature", "{URL}/trunk"]);
    merges.both(&["propget", "-R", "svn:mergeinfo", "{URL}"]);
}

#[test]
fn diffs_between_revisions_and_urls() {
    let pair = pair("basic");
    let h = head(pair).to_string();
    pair.both(&["diff", "-r", &format!("1:{h}"), "{URL}"]);
    pair.both(&["diff", "--summarize", "-r", &format!("2:{h}"), "{URL}"]);
    pair.both(&["diff", "{URL}/trunk@2", "{URL}/trunk@HEAD"]);
}
