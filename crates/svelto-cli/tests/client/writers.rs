//! The writer threads of `svelto checkout`, `export` and `update` (SVELTO_WRITERS; none by
//! default):
//! what they write is what the session's thread writes alone (SVELTO_WRITERS=0) and what
//! the stock client writes, for texts held until close-file and texts past 1 MiB (streamed),
//! with and without line-ending repair, executables, read-only files and texts that share
//! a pristine; a file the kernel refuses stops the checkout with its path, the root left
//! incomplete (nothing recorded of the drive).

use std::path::Path;

use svelto_testkit::{tempdir, Pair, Run};

use crate::{binary, compare_checkouts, nodes, pristines, servers, svn, tree, writable};

/// Runs svnmucc against `base` with `args`.
fn svnmucc(base: &str, args: &[&str]) {
    let config = tempdir();
    let config = config.path().display().to_string();
    let mut a = vec!["--non-interactive", "--config-dir", &config, "-U", base];
    a.extend_from_slice(args);
    Run::new("svnmucc").args(a).success();
}

fn with_writers(writers: &str, args: &[&str], cwd: &Path) -> svelto_testkit::Outcome {
    Run::new(binary())
        .env("SVELTO_WRITERS", writers)
        .args(args)
        .current_dir(cwd)
        .output()
}

/// Lines of text, `n` bytes or a little more, with mixed line endings (`mixed`) or LF.
fn lines(n: usize, seed: u32, mixed: bool) -> Vec<u8> {
    let mut out = Vec::new();
    let mut i = 0u32;
    while out.len() < n {
        let end: &[u8] = match i % 3 {
            1 if mixed => b"\r\n",
            2 if mixed => b"\r",
            _ => b"\n",
        };
        out.extend_from_slice(format!("line {i} of text {seed}").as_bytes());
        out.extend_from_slice(end);
        i += 1;
    }
    out
}

#[test]
fn writer_threads_write_what_one_thread_writes() {
    let pair = writable(Pair::new("mixed", binary()));
    let files = tempdir();
    let put = |name: &str, bytes: &[u8]| {
        let p = files.path().join(name);
        std::fs::write(&p, bytes).unwrap_or_else(|e| panic!("{p:?}: {e}"));
        p.display().to_string()
    };
    // (the server refuses mixed line endings in a file with svn:eol-style)
    let big = put("big", &lines(1_500_000, 1, true));
    let big_lf = put("big-lf", &lines(1_500_000, 1, false));
    let big2 = put("big2", &lines(1_048_000, 2, false));
    let small = put("small", &lines(5_000, 3, true));
    let small_lf = put("small-lf", &lines(5_000, 3, false));
    let edge = put("edge", &lines(1 << 20, 4, true)[..1 << 20]);
    let edge_lf = put("edge-lf", &lines(1 << 20, 4, false)[..1 << 20]);
    for (label, base) in servers(&pair) {
        #[rustfmt::skip]
        svnmucc(&base, &[
            "-m", "texts for the writers",
            "mkdir", "trunk/w",
            "put", &big, "trunk/w/big.txt",
            "put", &big_lf, "trunk/w/big-crlf.txt",
            "propset", "svn:eol-style", "CRLF", "trunk/w/big-crlf.txt",
            "put", &big2, "trunk/w/big2-crlf.txt",
            "propset", "svn:eol-style", "CRLF", "trunk/w/big2-crlf.txt",
            "put", &small_lf, "trunk/w/small-native.txt",
            "propset", "svn:eol-style", "native", "trunk/w/small-native.txt",
            "put", &big, "trunk/w/big-exe",
            "propset", "svn:executable", "*", "trunk/w/big-exe",
            "put", &edge, "trunk/w/edge.txt",
            "put", &edge_lf, "trunk/w/edge-lf.txt",
            "propset", "svn:eol-style", "LF", "trunk/w/edge-lf.txt",
            "put", &small, "trunk/w/small-1.txt",
            "put", &small, "trunk/w/small-2.txt",
            "put", &small_lf, "trunk/w/small-cr.txt",
            "propset", "svn:eol-style", "CR", "trunk/w/small-cr.txt",
            "put", &small, "trunk/w/locked.txt",
            "propset", "svn:needs-lock", "*", "trunk/w/locked.txt",
            "put", &small, "trunk/w/tool",
            "propset", "svn:executable", "*", "trunk/w/tool",
        ]);
        let url = format!("{base}/trunk");
        // The default against the stock client, everything it shows.
        let dir = tempdir();
        compare_checkouts(&pair, dir.path(), label, &url, &[]);
        let stock = dir.path().join("stock");
        svn(&pair, &["export", "-q", &url, "stock-export"], dir.path());
        for writers in ["0", "2", "3"] {
            let co = format!("co-{writers}");
            let out = with_writers(writers, &["checkout", "-q", &url, &co], dir.path());
            assert!(out.success(), "{label}: {}", out.stderr_text());
            let co = dir.path().join(co);
            let what = format!("{label}: checkout with {writers} writers");
            assert_eq!(tree(&stock), tree(&co), "{what}: working files");
            assert_eq!(nodes(&stock), nodes(&co), "{what}: wc.db rows");
            assert_eq!(pristines(&stock), pristines(&co), "{what}: pristines");
            assert_eq!(
                svn(&pair, &["status", "-v"], &stock)
                    .stdout_text()
                    .replace(&stock.display().to_string(), "WC"),
                svn(&pair, &["status", "-v"], &co)
                    .stdout_text()
                    .replace(&co.display().to_string(), "WC"),
                "{what}: svn status -v"
            );
            let ex = format!("ex-{writers}");
            let out = with_writers(writers, &["export", "-q", &url, &ex], dir.path());
            assert!(out.success(), "{label}: {}", out.stderr_text());
            let (want, got) = (
                tree(&dir.path().join("stock-export")),
                tree(&dir.path().join(&ex)),
            );
            let differ: Vec<String> = want
                .keys()
                .chain(got.keys())
                .filter(|k| want.get(*k) != got.get(*k))
                .map(|k| {
                    let short = |v: Option<&String>| {
                        v.map_or("none".to_string(), |v| v.chars().take(60).collect())
                    };
                    format!("{k:?}: {} / {}", short(want.get(k)), short(got.get(k)))
                })
                .collect();
            assert!(
                differ.is_empty(),
                "{label}: export with {writers} writers: {differ:?}"
            );
        }
        // An update that adds the texts (written by the writers, or not: SVELTO_WRITERS
        // for an update too) gives the same files and status as the stock checkout.
        let head: u64 = svn(
            &pair,
            &["info", "--show-item", "revision", &url],
            dir.path(),
        )
        .stdout_text()
        .trim()
        .parse()
        .unwrap_or_else(|e| panic!("{e}"));
        for writers in ["0", "2"] {
            let up = format!("up-{writers}");
            let prev = (head - 1).to_string();
            let out = with_writers(
                writers,
                &["checkout", "-q", "-r", &prev, &url, &up],
                dir.path(),
            );
            assert!(out.success(), "{label}: {}", out.stderr_text());
            let out = with_writers(writers, &["update", "-q", &up], dir.path());
            assert!(out.success(), "{label}: {}", out.stderr_text());
            let up = dir.path().join(up);
            let what = format!("{label}: update with {writers} writers");
            assert_eq!(tree(&stock), tree(&up), "{what}: working files");
            assert_eq!(
                svn(&pair, &["status", "-v"], &stock)
                    .stdout_text()
                    .replace(&stock.display().to_string(), "WC"),
                svn(&pair, &["status", "-v"], &up)
                    .stdout_text()
                    .replace(&up.display().to_string(), "WC"),
                "{what}: svn status -v"
            );
        }
        // A name the kernel refuses (longer than 255 bytes): the checkout stops with the
        // path and records nothing of the drive (the root stays incomplete).
        let long = "n".repeat(300);
        #[rustfmt::skip]
        svnmucc(&base, &[
            "-m", "a name too long",
            "mkdir", "long",
            "put", &small, "long/a.txt",
            "put", &small, &format!("long/{long}.txt"),
            "put", &small, "long/z.txt",
        ]);
        for writers in ["0", "2"] {
            let wc = format!("long-{writers}");
            let out = with_writers(
                writers,
                &["checkout", "-q", &format!("{base}/long"), &wc],
                dir.path(),
            );
            let err = out.stderr_text();
            assert!(!out.success(), "{label}, {writers} writers: {err}");
            assert!(
                err.contains(&format!("{wc}/{long}.txt: ")) && err.contains("too long"),
                "{label}, {writers} writers: {err}"
            );
            let db = rusqlite::Connection::open(dir.path().join(&wc).join(".svn/wc.db"))
                .unwrap_or_else(|e| panic!("{e}"));
            let mut stmt = db
                .prepare("SELECT local_relpath, presence FROM NODES ORDER BY 1")
                .unwrap_or_else(|e| panic!("{e}"));
            let rows: Vec<(String, String)> = stmt
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
                .unwrap_or_else(|e| panic!("{e}"))
                .map(|r| r.unwrap_or_else(|e| panic!("{e}")))
                .collect();
            assert_eq!(
                rows,
                [(String::new(), "incomplete".to_string())],
                "{label}, {writers} writers: the root alone, incomplete"
            );
        }
    }
}
