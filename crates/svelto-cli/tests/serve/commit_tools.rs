//! Tools that write through the server: `svnsync` and `svnrdump load` INTO an empty
//! repository served by svnserve and by Svelto. Both copies must have the same history
//! (their dumps equal, but for revision 0's date and the UUID).

use std::path::Path;

use svelto_testkit::{fixture, svnadmin_create_load, Pair, Run, Subject};

use crate::commit::{mask_dates, Script};

/// Two empty repositories that anonymous clients may write, with a pre-revprop-change hook
/// that allows every change (what svnsync and svnrdump need).
fn empty_writable_pair(name: &str) -> Pair {
    let dir = svelto_testkit::tempdir();
    let dump = dir.path().join("empty.dump");
    std::fs::write(&dump, "SVN-fs-dump-format-version: 2\n\n").expect("write the empty dump");
    let pair = Pair::from_dump(
        name,
        &dump,
        Subject::from_env(Path::new(env!("CARGO_BIN_EXE_svelto"))),
    );
    pair.set_svnserve_conf("[general]\nanon-access = write\n");
    for repo in [pair.reference_repo(), pair.subject_repo()] {
        let hooks = repo.join("hooks");
        std::fs::create_dir_all(&hooks).expect("hooks dir");
        let hook = hooks.join("pre-revprop-change");
        std::fs::write(&hook, "#!/bin/sh\nexit 0\n").expect("write the hook");
        Run::new("chmod").arg("+x").arg(&hook).success();
    }
    pair
}

/// Dumps of both sides, equal but for dates in revision 0 and the UUID.
fn assert_same_histories(pair: &Pair) {
    let fsfs = Run::tool("svnadmin")
        .args(["dump", "-q"])
        .arg(pair.reference_repo())
        .success()
        .stdout;
    let ours = Run::new(env!("CARGO_BIN_EXE_svelto"))
        .args(["admin", "dump", "-q"])
        .arg(pair.subject_repo())
        .success()
        .stdout;
    Run::new(env!("CARGO_BIN_EXE_svelto"))
        .args(["admin", "verify", "-q"])
        .arg(pair.subject_repo())
        .success();
    // Revision 0 (up to the first "Revision-number: 1") holds the creation date, the UUID
    // and svnsync's bookkeeping (which names the server's URL): compared masked.
    let split = |d: &[u8]| -> (Vec<u8>, Vec<u8>) {
        let key = b"Revision-number: 1\n";
        match d.windows(key.len()).position(|w| w == key) {
            Some(at) => (d[..at].to_vec(), d[at..].to_vec()),
            None => (d.to_vec(), Vec::new()),
        }
    };
    let (a0, a) = split(&fsfs);
    let (b0, b) = split(&ours);
    let mask0 = |i: usize, x: &[u8]| {
        let text = mask_dates(&pair.normalize(i, x));
        String::from_utf8_lossy(&text)
            .lines()
            .filter(|l| !l.starts_with("UUID: "))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(mask0(0, &a0), mask0(1, &b0), "revision 0 differs");
    if a != b {
        let d = svelto_testkit::serve::first_difference(pair.labels(), &a, &b).unwrap_or_default();
        panic!("the copies differ:\n{d}");
    }
}

#[test]
fn svnsync_into_the_server() {
    for name in ["copies", "mixed", "props"] {
        let source = svnadmin_create_load(&fixture(&format!("{name}.dump")));
        let pair = empty_writable_pair(name);
        let mut s = Script::new(&pair);
        let _scope = pair.scope("sync");
        let src = source.url();
        s.run("sync", "svnsync", &["init", "{URL}", &src]);
        s.run("sync", "svnsync", &["sync", "{URL}"]);
        s.svn("sync", &["log", "-v", "{URL}"]);
        assert_same_histories(&pair);
    }
}

#[test]
fn svnrdump_load_into_the_server() {
    for name in ["copies", "mixed", "eol-keywords"] {
        let pair = empty_writable_pair(name);
        let mut s = Script::new(&pair);
        let _scope = pair.scope("rdump");
        let dump = fixture(&format!("{name}.dump"));
        for i in 0..2 {
            let url = pair.substitute(i, Path::new("/"), "{URL}");
            let o = Run::tool("svnrdump")
                .args(["load", "-q", "--non-interactive", "--no-auth-cache"])
                .arg("--config-dir")
                .arg(pair.client().config_dir())
                .arg(&url)
                .stdin_file(&dump)
                .output();
            assert!(
                o.success(),
                "{}: svnrdump load failed:\n{o}",
                pair.labels()[i]
            );
        }
        s.svn("rdump", &["log", "-v", "{URL}"]);
        assert_same_histories(&pair);
    }
}
