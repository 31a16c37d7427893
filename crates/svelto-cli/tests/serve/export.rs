//! `svn export` with eol-style and keywords, externals and symlinks; the
//! exported trees are compared on disk.

use crate::common::pair;

#[test]
fn export_with_eol_style_and_keywords() {
    let pair = pair("eol-keywords");
    let s = pair.scope("export_with_eol_style_and_keywords");
    for (args, dir) in [
        (&["export", "{URL}/trunk", "head"][..], "head"),
        (&["export", "-r", "3", "{URL}/trunk", "r3"], "r3"),
        (&["export", "-r", "2", "{URL}/trunk", "r2"], "r2"),
        (
            &["export", "--native-eol", "CRLF", "{URL}/trunk", "crlf"],
            "crlf",
        ),
        (
            &[
                "export",
                "--native-eol",
                "CR",
                "-r",
                "3",
                "{URL}/trunk",
                "cr",
            ],
            "cr",
        ),
        (
            &[
                "export",
                "--ignore-keywords",
                "-r",
                "3",
                "{URL}/trunk",
                "raw",
            ],
            "raw",
        ),
    ] {
        s.both(args).expect_stdout("Exported revision");
        s.compare_tree(dir);
    }
    // Keywords that name the server, expanded in the file.
    let expanded = std::fs::read(s.path(0).join("r3/keywords.txt")).expect("exported file");
    assert!(
        String::from_utf8_lossy(&expanded).contains("$HeadURL: svn://127.0.0.1:"),
        "{}",
        String::from_utf8_lossy(&expanded)
    );
    s.both(&[
        "export",
        "-r",
        "3",
        "{URL}/trunk/keywords.txt",
        "one-file.txt",
    ]);
    s.compare_tree("one-file.txt");
}

#[test]
fn export_of_externals_symlinks_and_names() {
    let props = pair("props");
    let s = props.scope("export_of_externals_symlinks_and_names");
    s.both(&["export", "{URL}/trunk", "with-ext"]);
    s.compare_tree("with-ext");
    s.both(&["export", "--ignore-externals", "{URL}/trunk", "no-ext"]);
    s.compare_tree("no-ext");
    s.both(&["export", "{URL}", "root"]);
    s.compare_tree("root");
    for fixture in ["symlinks", "names", "mixed", "basic"] {
        let pair = pair(fixture);
        let s = pair.scope("export_of_externals_symlinks_and_names");
        s.both(&["export", "{URL}", "head"]);
        s.compare_tree("head");
        s.both(&["export", "-r", "2", "{URL}/trunk", "r2"]);
        s.compare_tree("r2");
        s.both(&["export", "--depth", "files", "{URL}/trunk", "files"]);
        s.compare_tree("files");
    }
}
