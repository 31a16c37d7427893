//! `svelto checkout` and `svelto export` against the stock client: the same checkout made
//! by stock `svn` and by Svelto, from svnserve and from `svelto serve` on the testkit's
//! fixtures, gives the same working files (bytes, modes, links), the same `svn status -v`,
//! `svn info -R`, `svn proplist -R -v` and wc.db rows; the stock client's `update`,
//! `commit`, `revert`, `cleanup` and `upgrade` then work on Svelto's working copy.

mod commit_times;
mod externals;
mod faults;
mod http;
mod interrupted;
mod logins;
mod ssh;
mod writers;

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use svelto_testkit::{shared_pair, tempdir, Outcome, Pair, Run};

fn binary() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_svelto"))
}

fn pair(fixture: &str) -> &'static Pair {
    shared_pair(fixture, binary())
}

/// Both servers of a pair: (label, repository URL).
fn servers(pair: &Pair) -> [(&'static str, String); 2] {
    [
        ("svnserve", pair.reference_url()),
        ("svelto serve", pair.subject_url()),
    ]
}

fn svn(pair: &Pair, args: &[&str], cwd: &Path) -> Outcome {
    let out = pair.client().svn(args, cwd);
    assert!(
        out.success(),
        "svn {args:?} in {cwd:?} failed: {}",
        out.stderr_text()
    );
    out
}

fn svelto(args: &[&str], cwd: &Path) -> Outcome {
    Run::new(binary()).args(args).current_dir(cwd).success()
}

/// Every path below `root` (but `.svn`) with what it is: a link's target, or a file's
/// mode and bytes, or a directory's mode.
fn tree(root: &Path) -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    let mut todo = vec![root.to_path_buf()];
    while let Some(dir) = todo.pop() {
        for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{dir:?}: {e}")) {
            let entry = entry.unwrap_or_else(|e| panic!("{dir:?}: {e}"));
            if entry.file_name() == ".svn" {
                continue;
            }
            let path = entry.path();
            let meta = path
                .symlink_metadata()
                .unwrap_or_else(|e| panic!("{path:?}: {e}"));
            let rel = path.strip_prefix(root).unwrap_or(&path).to_path_buf();
            let what = if meta.file_type().is_symlink() {
                let target = std::fs::read_link(&path).unwrap_or_else(|e| panic!("{e}"));
                format!("link -> {}", target.display())
            } else if meta.is_dir() {
                todo.push(path.clone());
                format!("dir {:o}", meta.mode())
            } else {
                let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
                format!(
                    "file {:o} {:?}",
                    meta.mode(),
                    String::from_utf8_lossy(&bytes)
                )
            };
            out.insert(rel, what);
        }
    }
    out
}

/// The output of a stock command run in the working copy, its absolute path masked, and
/// without `svn info`'s times of the working files (two checkouts are seconds apart).
fn in_wc(pair: &Pair, wc: &Path, args: &[&str]) -> String {
    let text = svn(pair, args, wc).stdout_text();
    text.replace(&wc.display().to_string(), "{WC}")
        .lines()
        .filter(|l| !l.starts_with("Text Last Updated: "))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// The rows of a wc.db, without what differs from one checkout to the next
/// (`last_mod_time`) or is written in hash order (the property skels and the inherited
/// properties, by length here, compared by `svn proplist -v --show-inherited-props`).
fn nodes(wc: &Path) -> Vec<String> {
    let conn = rusqlite::Connection::open(wc.join(".svn/wc.db")).unwrap_or_else(|e| panic!("{e}"));
    let mut stmt = conn
        .prepare(
            "SELECT local_relpath, op_depth, parent_relpath, repos_id, repos_path, revision,
               presence, moved_here, moved_to, kind, depth, checksum, symlink_target,
               changed_revision, changed_date, changed_author, translated_size, dav_cache,
               file_external, length(inherited_props), length(properties)
             FROM NODES ORDER BY local_relpath, op_depth",
        )
        .unwrap_or_else(|e| panic!("{e}"));
    let rows = stmt
        .query_map([], |row| {
            let mut cols = Vec::new();
            for i in 0..21 {
                let v: rusqlite::types::Value = row.get(i)?;
                cols.push(format!("{v:?}"));
            }
            Ok(cols.join("|"))
        })
        .unwrap_or_else(|e| panic!("{e}"));
    let mut out: Vec<String> = rows.map(|r| r.unwrap_or_else(|e| panic!("{e}"))).collect();
    let mut pristine = conn
        .prepare(
            "SELECT checksum, compression, size, refcount, md5_checksum FROM PRISTINE ORDER BY 1",
        )
        .unwrap_or_else(|e| panic!("{e}"));
    let rows = pristine
        .query_map([], |row| {
            let mut cols = Vec::new();
            for i in 0..5 {
                let v: rusqlite::types::Value = row.get(i)?;
                cols.push(format!("{v:?}"));
            }
            Ok(cols.join("|"))
        })
        .unwrap_or_else(|e| panic!("{e}"));
    out.extend(rows.map(|r| r.unwrap_or_else(|e| panic!("{e}"))));
    // The other tables whole, the schema (tables, indexes, triggers, views) and the
    // planner's statistics.
    for query in [
        "SELECT * FROM REPOSITORY ORDER BY 1",
        "SELECT * FROM WCROOT ORDER BY 1",
        "SELECT * FROM ACTUAL_NODE ORDER BY 1, 2",
        "SELECT * FROM LOCK ORDER BY 1, 2",
        "SELECT * FROM WC_LOCK ORDER BY 1, 2",
        "SELECT * FROM WORK_QUEUE ORDER BY 1",
        "SELECT * FROM EXTERNALS ORDER BY 1, 2",
        "SELECT type, name, tbl_name FROM sqlite_master ORDER BY 1, 2",
        "SELECT * FROM sqlite_stat1 ORDER BY 1, 2",
    ] {
        let mut stmt = conn
            .prepare(query)
            .unwrap_or_else(|e| panic!("{query}: {e}"));
        let width = stmt.column_count();
        let rows = stmt
            .query_map([], |row| {
                let mut cols = Vec::new();
                for i in 0..width {
                    let v: rusqlite::types::Value = row.get(i)?;
                    cols.push(format!("{v:?}"));
                }
                Ok(cols.join("|"))
            })
            .unwrap_or_else(|e| panic!("{query}: {e}"));
        for row in rows {
            out.push(format!(
                "{query}: {}",
                row.unwrap_or_else(|e| panic!("{e}"))
            ));
        }
    }
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap_or_else(|e| panic!("{e}"));
    out.push(format!("user_version {version}"));
    out
}

/// The pristine store: each file's name, mode and size.
fn pristines(wc: &Path) -> BTreeMap<PathBuf, String> {
    let root = wc.join(".svn/pristine");
    let mut out = BTreeMap::new();
    for fan in std::fs::read_dir(&root).unwrap_or_else(|e| panic!("{e}")) {
        let fan = fan.unwrap_or_else(|e| panic!("{e}")).path();
        for f in std::fs::read_dir(&fan).unwrap_or_else(|e| panic!("{e}")) {
            let f = f.unwrap_or_else(|e| panic!("{e}")).path();
            let meta = f.metadata().unwrap_or_else(|e| panic!("{e}"));
            out.insert(
                f.strip_prefix(&root).unwrap_or(&f).to_path_buf(),
                format!("{:o} {}", meta.mode(), meta.len()),
            );
        }
    }
    out
}

/// Checks `url` (with `args`) out with the stock client and with Svelto under `dir`, and
/// compares everything the stock client shows of the two.
fn compare_checkouts(pair: &Pair, dir: &Path, label: &str, url: &str, args: &[&str]) {
    let (stock, ours) = (dir.join("stock"), dir.join("svelto"));
    let mut a = vec!["checkout", "-q"];
    a.extend_from_slice(args);
    a.extend([url, "stock"]);
    svn(pair, &a, dir);
    let mut b = vec!["checkout", "-q"];
    b.extend_from_slice(args);
    b.extend([url, "svelto"]);
    svelto(&b, dir);
    let what = format!("{label}: checkout {args:?} {url}");
    assert_eq!(tree(&stock), tree(&ours), "{what}: working files");
    for cmd in [
        &["status", "-v"][..],
        &["info", "-R"],
        &["proplist", "-R", "-v"],
        &["proplist", "-R", "-v", "--show-inherited-props"],
        &["diff"],
    ] {
        assert_eq!(
            in_wc(pair, &stock, cmd),
            in_wc(pair, &ours, cmd),
            "{what}: svn {cmd:?}"
        );
    }
    assert_eq!(nodes(&stock), nodes(&ours), "{what}: wc.db rows");
    assert_eq!(
        pristines(&stock),
        pristines(&ours),
        "{what}: pristine store"
    );
}

#[test]
fn checkouts_match_the_stock_clients() {
    // eol-keywords: every eol-style and keywords; symlinks: svn:special; names:
    // non-ASCII names; basic: deep trees and older revisions; mixed: executables.
    for fixture in ["eol-keywords", "symlinks", "names", "basic", "mixed"] {
        let pair = pair(fixture);
        for (label, base) in servers(pair) {
            for args in [&[][..], &["-r", "3"], &["--depth", "immediates"]] {
                let dir = tempdir();
                compare_checkouts(pair, dir.path(), label, &format!("{base}/trunk"), args);
            }
        }
    }
    let pair = pair("basic");
    for (label, base) in servers(pair) {
        for args in [
            &["--depth", "files"][..],
            &["--depth", "empty"],
            &["-r", "5"],
        ] {
            let dir = tempdir();
            compare_checkouts(pair, dir.path(), label, &base, args);
        }
    }
}

#[test]
fn the_stock_client_updates_reverts_and_cleans_up_sveltos_working_copy() {
    let pair = pair("eol-keywords");
    for (label, base) in servers(pair) {
        let dir = tempdir();
        let url = format!("{base}/trunk");
        svn(
            pair,
            &["checkout", "-q", "-r", "2", &url, "stock"],
            dir.path(),
        );
        svelto(&["checkout", "-q", "-r", "2", &url, "svelto"], dir.path());
        let (stock, ours) = (dir.path().join("stock"), dir.path().join("svelto"));
        for step in [
            &["update"][..],
            &["update", "-r", "3"],
            &["cleanup"],
            &["update"],
            &["upgrade"],
        ] {
            assert_eq!(
                in_wc(pair, &stock, step),
                in_wc(pair, &ours, step),
                "{label}: svn {step:?}"
            );
            assert_eq!(tree(&stock), tree(&ours), "{label}: after svn {step:?}");
            assert_eq!(
                in_wc(pair, &stock, &["status", "-v"]),
                in_wc(pair, &ours, &["status", "-v"]),
                "{label}: status after svn {step:?}"
            );
        }
        for wc in [&stock, &ours] {
            std::fs::write(wc.join("native.txt"), "changed\n").unwrap_or_else(|e| panic!("{e}"));
        }
        assert_eq!(
            in_wc(pair, &stock, &["diff"]),
            in_wc(pair, &ours, &["diff"]),
            "{label}: svn diff of a change"
        );
        assert_eq!(
            in_wc(pair, &stock, &["revert", "-R", "."]),
            in_wc(pair, &ours, &["revert", "-R", "."]),
            "{label}: svn revert"
        );
        assert_eq!(tree(&stock), tree(&ours), "{label}: after svn revert");
    }
}

#[test]
fn the_stock_client_commits_from_sveltos_working_copy() {
    // A pair of its own: the commit changes both repositories.
    let mut pair = Pair::new("props", binary());
    pair.mask_dates();
    pair.set_svnserve_conf("[general]\nanon-access = write\n");
    for (label, base) in servers(&pair) {
        let dir = tempdir();
        let url = format!("{base}/trunk");
        svelto(&["checkout", "-q", &url, "wc"], dir.path());
        let wc = dir.path().join("wc");
        std::fs::write(wc.join("file.txt"), "new text\n").unwrap_or_else(|e| panic!("{e}"));
        svn(&pair, &["propset", "p", "v", "."], &wc);
        let out = svn(&pair, &["commit", "-m", "from svelto's wc"], &wc).stdout_text();
        assert!(out.contains("Committed revision"), "{label}: {out}");
        let status = svn(&pair, &["status"], &wc).stdout_text();
        // Clean but for trunk's file external (props: `^/trunk/other.txt ext.txt`),
        // which svn status always names.
        assert_eq!(
            status, "    X   ext.txt\n",
            "{label}: clean after the commit"
        );
        // A fresh stock checkout sees the commit.
        svn(&pair, &["checkout", "-q", &url, "check"], dir.path());
        let text = std::fs::read_to_string(dir.path().join("check/file.txt"))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(text, "new text\n", "{label}");
    }
}

/// A pair of its own on `mixed` (trunk, a branch copied from it, a tag) that the stock
/// client may commit to: the tests below change both repositories alike.
fn writable(mut pair: Pair) -> Pair {
    pair.mask_dates();
    pair.set_svnserve_conf("[general]\nanon-access = write\n");
    pair
}

/// Checks trunk@3 out with the stock client and with Svelto from `base`, then runs the
/// same stock commands in both working copies (update, switch to the branch and back,
/// cleanup, upgrade, diff and revert of a change), comparing after each what they print,
/// the working files, `svn status -v`, `svn info -R` and the wc.db rows; then commits a
/// change from Svelto's working copy and updates both to it.
fn compare_stock_commands(pair: &Pair, label: &str, base: &str) {
    let dir = tempdir();
    let url = format!("{base}/trunk");
    svn(
        pair,
        &["checkout", "-q", "-r", "3", &url, "stock"],
        dir.path(),
    );
    svelto(&["checkout", "-q", "-r", "3", &url, "svelto"], dir.path());
    let (stock, ours) = (dir.path().join("stock"), dir.path().join("svelto"));
    let alike = |what: &str| {
        assert_eq!(tree(&stock), tree(&ours), "{label}: working files {what}");
        for cmd in [
            &["status", "-v"][..],
            &["info", "-R"],
            &["proplist", "-R", "-v"],
        ] {
            assert_eq!(
                in_wc(pair, &stock, cmd),
                in_wc(pair, &ours, cmd),
                "{label}: svn {cmd:?} {what}"
            );
        }
        let (a, b) = (nodes(&stock), nodes(&ours));
        let only = |x: &[String], y: &[String]| -> Vec<String> {
            x.iter().filter(|r| !y.contains(r)).cloned().collect()
        };
        assert_eq!(
            (only(&a, &b), only(&b, &a)),
            (vec![], vec![]),
            "{label}: wc.db rows {what} (stock's alone, Svelto's alone)"
        );
        assert_eq!(a, b, "{label}: wc.db rows {what}");
    };
    let branch = format!("{base}/branches/b");
    let trunk10 = format!("{url}@10");
    for step in [
        &["update", "-r", "6"][..],
        &["switch", &branch],
        &["switch", &trunk10],
        &["cleanup"],
        &["upgrade"],
        &["update", "-r", "8"],
    ] {
        assert_eq!(
            in_wc(pair, &stock, step),
            in_wc(pair, &ours, step),
            "{label}: svn {step:?}"
        );
        alike(&format!("after svn {step:?}"));
    }
    for wc in [&stock, &ours] {
        let main = wc.join("src/main.c");
        let mut text = std::fs::read(&main).unwrap_or_else(|e| panic!("{main:?}: {e}"));
        text.extend_from_slice(b"/* changed */\n");
        std::fs::write(&main, text).unwrap_or_else(|e| panic!("{main:?}: {e}"));
        svn(pair, &["propset", "p", "v", "src"], wc);
    }
    for step in [
        &["diff"][..],
        &["status"],
        &["revert", "-R", "."],
        &["status"],
    ] {
        assert_eq!(
            in_wc(pair, &stock, step),
            in_wc(pair, &ours, step),
            "{label}: svn {step:?} of a change"
        );
    }
    alike("after svn revert");
    // A commit from Svelto's working copy lands; the stock one updates to it.
    svn(pair, &["update", "-q"], &ours);
    // (src/main.c became src/main2.c in r11.)
    std::fs::write(ours.join("src/main2.c"), "committed\n").unwrap_or_else(|e| panic!("{e}"));
    let out = in_wc(pair, &ours, &["commit", "-m", "from svelto's working copy"]);
    assert!(
        out.contains("Sending") && out.contains("Committed revision"),
        "{label}: {out}"
    );
    // The commit leaves the old text's pristine unreferenced in the working copy it was
    // made from (as from any stock one): cleanup removes it.
    for wc in [&stock, &ours] {
        svn(pair, &["update", "-q"], wc);
        svn(pair, &["cleanup"], wc);
    }
    alike("after the commit, updates and cleanup");
    let text = std::fs::read_to_string(stock.join("src/main2.c")).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        text, "committed\n",
        "{label}: the stock working copy got the commit"
    );
}

#[test]
fn the_stock_clients_commands_behave_alike_on_sveltos_working_copy() {
    let pair = writable(Pair::new("mixed", binary()));
    for (label, base) in servers(&pair) {
        compare_stock_commands(&pair, label, &base);
    }
}

#[test]
fn exports_match_the_stock_clients() {
    for fixture in ["eol-keywords", "symlinks", "mixed"] {
        let pair = pair(fixture);
        for (label, base) in servers(pair) {
            for args in [&[][..], &["--native-eol", "CRLF"], &["-r", "3"]] {
                compare_exports(pair, label, &format!("{base}/trunk"), args);
            }
        }
    }
}

/// Exports `url` (with `args`) with the stock client and with Svelto; the same files.
fn compare_exports(pair: &Pair, label: &str, url: &str, args: &[&str]) {
    let dir = tempdir();
    let mut a = vec!["export", "-q"];
    a.extend_from_slice(args);
    a.extend([url, "stock"]);
    svn(pair, &a, dir.path());
    let mut b = vec!["export", "-q"];
    b.extend_from_slice(args);
    b.extend([url, "svelto"]);
    svelto(&b, dir.path());
    assert_eq!(
        tree(&dir.path().join("stock")),
        tree(&dir.path().join("svelto")),
        "{label}: export {args:?} of {url}"
    );
}

#[test]
fn bad_input_gets_a_clear_error() {
    let pair = pair("basic");
    let dir = tempdir();
    let url = format!("{}/trunk/README.txt", pair.subject_url());
    let out = Run::new(binary())
        .args(["checkout", &url, "x"])
        .current_dir(dir.path())
        .failure();
    assert!(
        out.stderr_text()
            .contains("refers to a file, not a directory"),
        "{}",
        out.stderr_text()
    );
    let out = Run::new(binary())
        .args(["checkout", "svn://127.0.0.1:1/nothing", "x"])
        .current_dir(dir.path())
        .failure();
    assert!(
        out.stderr_text().contains("cannot connect to 127.0.0.1:1"),
        "{}",
        out.stderr_text()
    );
    let url = format!("{}/trunk", pair.subject_url());
    svelto(&["checkout", "-q", &url, "wc"], dir.path());
    let out = Run::new(binary())
        .args(["checkout", &format!("{url}/a"), "wc"])
        .current_dir(dir.path())
        .failure();
    assert!(
        out.stderr_text()
            .contains("wc' is already a working copy for a different URL"),
        "{}",
        out.stderr_text()
    );
    // A file where an export would make a directory (a checkout records a tree conflict
    // there, checkout_over_unversioned_nodes_records_tree_conflicts): named, once.
    let obstructed = dir.path().join("obstructed");
    std::fs::create_dir(&obstructed).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(obstructed.join("src"), "mine\n").unwrap_or_else(|e| panic!("{e}"));
    let out = Run::new(binary())
        .args(["export", "-q", "--force", &url, "obstructed"])
        .current_dir(dir.path())
        .failure();
    let err = out.stderr_text();
    assert!(
        err.contains("obstructed/src' is in the way") && err.lines().count() == 1,
        "{err}"
    );
    let out = Run::new(binary())
        .args(["checkout", "svn://127.0.0.1:1/nothing", "x"])
        .current_dir(dir.path())
        .failure();
    let err = out.stderr_text();
    assert_eq!(err.matches("refused").count(), 1, "said once: {err}");
}

/// `svelto checkout URL PATH` where PATH is a working copy of URL updates it, as `svn
/// checkout` does (the same lines, in another order, and `Checked out revision N.`); of
/// another URL, it is refused as by svn.
#[test]
fn checkout_into_a_working_copy_of_the_same_url_updates_it() {
    let pair = pair("basic");
    for (label, base) in servers(pair) {
        let dir = tempdir();
        let url = format!("{base}/trunk");
        for wc in ["stock", "svelto"] {
            svn(pair, &["checkout", "-q", "-r", "2", &url, wc], dir.path());
        }
        let (stock, ours) = (dir.path().join("stock"), dir.path().join("svelto"));
        let a = svn(pair, &["checkout", &url, "stock"], dir.path()).stdout_text();
        let b = svelto(&["checkout", &url, "svelto"], dir.path()).stdout_text();
        assert_eq!(
            sorted_lines(&a.replace("stock", "WC")),
            sorted_lines(&b.replace("svelto", "WC")),
            "{label}: output"
        );
        assert!(b.ends_with("Checked out revision 12.\n"), "{label}: {b}");
        assert_eq!(tree(&stock), tree(&ours), "{label}: working files");
        for cmd in [&["status", "-v"][..], &["info", "-R"]] {
            assert_eq!(
                in_wc(pair, &stock, cmd),
                in_wc(pair, &ours, cmd),
                "{label}: svn {cmd:?}"
            );
        }
        assert_eq!(nodes(&stock), nodes(&ours), "{label}: wc.db rows");
        let other = format!("{base}/trunk/src");
        let out = pair
            .client()
            .svn(&["checkout", &other, "stock"], dir.path());
        let ours_out = Run::new(binary())
            .args(["checkout", &other, "svelto"])
            .current_dir(dir.path())
            .failure();
        assert!(!out.success(), "{label}");
        for err in [out.stderr_text(), ours_out.stderr_text()] {
            assert!(
                err.contains("is already a working copy for a different URL"),
                "{label}: {err}"
            );
        }
    }
}

/// What an update printed, its lines sorted (the stock client prints in the drive's order,
/// Svelto deletions, then additions, then changes).
fn sorted_lines(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    lines.sort();
    lines
}

/// Checks `url` out at `from` twice with the stock client, then takes one working copy
/// through `svn update` and the other through `svelto update` over the same revisions,
/// comparing after each step what the stock client shows of both.
fn compare_updates(pair: &Pair, label: &str, url: &str, from: &str, steps: &[&str]) {
    compare_sparse_updates(pair, label, url, from, steps, &[]);
}

/// [`compare_updates`] from a checkout made with `args` (`--depth`).
fn compare_sparse_updates(
    pair: &Pair,
    label: &str,
    url: &str,
    from: &str,
    steps: &[&str],
    args: &[&str],
) {
    let dir = tempdir();
    let (stock, ours) = (dir.path().join("stock"), dir.path().join("svelto"));
    for wc in ["stock", "svelto"] {
        let mut a = vec!["checkout", "-q", "-r", from];
        a.extend_from_slice(args);
        a.extend([url, wc]);
        svn(pair, &a, dir.path());
    }
    for to in steps {
        let what = format!("{label}: update {url} from r{from} -r {to}");
        let a = svn(pair, &["update", "-r", to], &stock).stdout_text();
        let b = svelto(&["update", "-r", to], &ours).stdout_text();
        assert_eq!(sorted_lines(&a), sorted_lines(&b), "{what}: output");
        same_wc(pair, &stock, &ours, &what);
    }
}

#[test]
fn updates_match_the_stock_clients() {
    // Forward across every change, back (deletions, replacements), forward in steps.
    for fixture in ["basic", "mixed", "eol-keywords", "symlinks", "replace"] {
        let pair = pair(fixture);
        for (label, base) in servers(pair) {
            compare_updates(
                pair,
                label,
                &format!("{base}/trunk"),
                "1",
                &["HEAD", "2", "3", "4", "HEAD"],
            );
        }
    }
    // Property changes on files and the root; r8 adds svn:externals (a file external is
    // fetched); back to r7 removes it (svn leaves a not-present BASE row for it), the
    // next update removes that row, HEAD fetches the external again.
    let props = pair("props");
    for (label, base) in servers(props) {
        let url = format!("{base}/trunk");
        let steps = ["7", "2", "5", "4", "7", "HEAD", "7", "6", "HEAD"];
        compare_updates(props, label, &url, "1", &steps);
    }
    // Sparse working copies: directories the update adds get the depth svn gives them.
    let basic = pair("basic");
    for (label, base) in servers(basic) {
        let url = format!("{base}/trunk");
        for depth in ["immediates", "files"] {
            compare_sparse_updates(basic, label, &url, "2", &["HEAD", "3"], &["--depth", depth]);
        }
    }
    // The repository root: branches and tags come and go.
    let pair = pair("basic");
    for (label, base) in servers(pair) {
        compare_updates(pair, label, &base, "0", &["5", "HEAD", "1"]);
    }
}

#[test]
fn update_keeps_local_changes_it_does_not_touch_and_refuses_the_others() {
    let pair = pair("basic");
    let base = pair.subject_url();
    let url = format!("{base}/trunk");
    let dir = tempdir();
    let (stock, ours) = (dir.path().join("stock"), dir.path().join("svelto"));
    for wc in ["stock", "svelto"] {
        svn(pair, &["checkout", "-q", "-r", "5", &url, wc], dir.path());
    }
    // Which files does the update from r5 to r6 change, and which does it leave alone?
    let changed = svn(
        pair,
        &["diff", "--summarize", "-r", "5:6", &url],
        dir.path(),
    )
    .stdout_text();
    let touches = |name: &str| {
        changed
            .lines()
            .any(|l| l.ends_with(&format!("/trunk/{name}")))
    };
    let files: Vec<String> = tree(&stock)
        .into_iter()
        .filter(|(_, what)| what.starts_with("file"))
        .map(|(p, _)| p.to_string_lossy().into_owned())
        .collect();
    let untouched = files.iter().find(|f| !touches(f)).cloned();
    let touched = files.iter().find(|f| touches(f)).cloned();
    let touched = touched.unwrap_or_else(|| panic!("no file of trunk@5 changes by r6: {changed}"));
    assert!(
        untouched.is_some(),
        "every file of trunk@5 changes by r6: {changed}"
    );
    if let Some(name) = &untouched {
        for wc in [&stock, &ours] {
            std::fs::write(wc.join(name), "local change\n").unwrap_or_else(|e| panic!("{e}"));
        }
        svn(pair, &["update", "-r", "6"], &stock);
        svelto(&["update", "-r", "6"], &ours);
        assert_eq!(
            tree(&stock),
            tree(&ours),
            "a change the update does not touch stays"
        );
        assert_eq!(
            in_wc(pair, &stock, &["status", "-v"]),
            in_wc(pair, &ours, &["status", "-v"]),
            "status after updating past a local change"
        );
        assert_eq!(nodes(&stock), nodes(&ours), "wc.db rows");
    }
    // A change to a file the update changes: refused, nothing changed.
    let wc = dir.path().join("refused");
    svn(
        pair,
        &["checkout", "-q", "-r", "5", &url, "refused"],
        dir.path(),
    );
    std::fs::write(wc.join(&touched), "local change\n").unwrap_or_else(|e| panic!("{e}"));
    let before = (tree(&wc), nodes(&wc));
    let out = Run::new(binary())
        .args(["update", "-r", "6"])
        .current_dir(&wc)
        .failure();
    let err = out.stderr_text();
    assert!(
        err.contains(&format!("'{touched}' has local changes")) && err.contains("use 'svn update'"),
        "{err}"
    );
    assert_eq!(before.0, tree(&wc), "a refused update changes no file");
    let after = nodes(&wc);
    let no_pristines = |rows: &[String]| -> Vec<String> {
        rows.iter()
            .filter(|r| !r.starts_with("Text(\"$sha1$"))
            .cloned()
            .collect()
    };
    assert_eq!(
        no_pristines(&before.1),
        no_pristines(&after),
        "a refused update changes no node"
    );
    // Local property changes and scheduled additions: refused, with the reason.
    for (change, why) in [
        (&["propset", "p", "v", "."][..], "local property changes"),
        (&["mkdir", "new-dir"], "scheduled additions"),
    ] {
        let wc = dir.path().join(why);
        svn(pair, &["checkout", "-q", "-r", "5", &url, why], dir.path());
        svn(pair, change, &wc);
        let out = Run::new(binary())
            .args(["update"])
            .current_dir(&wc)
            .failure();
        assert!(
            out.stderr_text().contains(why),
            "{why}: {}",
            out.stderr_text()
        );
    }
    // Not a working copy.
    let out = Run::new(binary())
        .args(["update"])
        .current_dir(dir.path())
        .failure();
    assert!(
        out.stderr_text().contains("not the root of a working copy"),
        "{}",
        out.stderr_text()
    );
}

#[test]
fn on_a_terminal_checkout_draws_progress_below_its_lines() {
    // `script` gives the command a terminal; what it wrote comes back on its stdout.
    let pair = pair("basic");
    let dir = tempdir();
    let url = format!("{}/trunk", pair.subject_url());
    let cmd = format!("{} checkout {url} wc", binary().display());
    let out = std::process::Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .current_dir(dir.path())
        .output()
        .unwrap_or_else(|e| panic!("script (util-linux) is needed: {e}"));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("A    wc/README.txt"), "{text}");
    assert!(text.contains("Checked out revision"), "{text}");
    assert!(
        text.contains("files and directories"),
        "no progress line: {text}"
    );
    // Not on a terminal: the stock client's lines only.
    let out = svelto(&["checkout", &url, "plain"], dir.path()).stdout_text();
    assert!(!out.contains("files and directories"), "{out}");
    assert!(out.contains("A    plain/README.txt"), "{out}");
}

/// Peg revisions and dates as the stock client resolves them: `URL@REV`, `-r N URL@PEG`,
/// `-r {DATE}` (UTC, with an offset, and local time) for checkout, export and update, from
/// all four servers; a URL that is not at its peg revision is refused by both.
#[test]
fn pegs_and_dates_resolve_as_with_the_stock_client() {
    let dates = [
        "{2011-03-13T12:30:00Z}",
        "{2011-03-13T14:30:00+02:00}",
        "{2011-03-13 16:00}",
        "{2011-03-13}",
    ];
    let http = svelto_testkit::shared_http_pair("basic", binary());
    let mut all: Vec<(&Pair, &str, String)> = Vec::new();
    let svn_pair = pair("basic");
    for (label, base) in servers(svn_pair) {
        all.push((svn_pair, label, base));
    }
    all.push((http, "apache", http.reference_url()));
    all.push((http, "svelto serve --http-listen", http.subject_url()));
    for (pair, label, base) in all {
        let trunk = format!("{base}/trunk");
        let at5 = format!("{trunk}@5");
        for (url, args) in [
            (at5.as_str(), &[][..]),
            (at5.as_str(), &["-r", "3"][..]),
            (trunk.as_str(), &["-r", dates[0]][..]),
            (trunk.as_str(), &["-r", dates[1]][..]),
            (trunk.as_str(), &["-r", dates[2]][..]),
        ] {
            let dir = tempdir();
            compare_checkouts(pair, dir.path(), label, url, args);
        }
        compare_exports(pair, label, &format!("{trunk}@3"), &[]);
        compare_exports(pair, label, &trunk, &["-r", dates[0]]);
        compare_updates(pair, label, &trunk, "1", &[dates[0], "HEAD", dates[2]]);
        let dir = tempdir();
        compare_checkouts(pair, dir.path(), label, &base, &["-r", dates[3]]);
        // A URL that is not there at its peg revision: refused by both.
        let dir = tempdir();
        let gone = format!("{trunk}/nothere@5");
        let out = pair
            .client()
            .svn(&["checkout", "-r", "3", &gone, "s"], dir.path());
        assert!(!out.success(), "{label}: svn checked out {gone}");
        let out = Run::new(binary())
            .args(["checkout", "-r", "3", &gone, "x"])
            .current_dir(dir.path())
            .failure();
        let err = out.stderr_text();
        assert!(
            err.contains("path not found at revision 5"),
            "{label}: {err}"
        );
    }
}

/// `checkout --force` over unversioned files and directories in the way (one with the
/// repository's text, one with other text, a directory): svn's `E` lines, the files kept
/// (a local change where they differ), the same status, rows and pristines.
#[test]
fn checkout_with_force_takes_what_is_in_the_way() {
    let pair = pair("basic");
    for (label, base) in servers(pair) {
        let dir = tempdir();
        let url = format!("{base}/trunk");
        let new_c = svn(pair, &["cat", &format!("{url}/src/new.c")], dir.path()).stdout;
        let mut outs = Vec::new();
        for wc in ["stock", "svelto"] {
            let root = dir.path().join(wc);
            std::fs::create_dir_all(root.join("src")).unwrap_or_else(|e| panic!("{e}"));
            std::fs::write(root.join("README.txt"), "mine\n").unwrap_or_else(|e| panic!("{e}"));
            std::fs::write(root.join("src/new.c"), &new_c).unwrap_or_else(|e| panic!("{e}"));
            let out = if wc == "stock" {
                svn(pair, &["checkout", "--force", &url, wc], dir.path())
            } else {
                svelto(&["checkout", "--force", &url, wc], dir.path())
            };
            outs.push(out.stdout_text().replace(wc, "WC"));
        }
        assert_eq!(outs[0], outs[1], "{label}: output");
        assert!(
            outs[1].contains("E    WC/README.txt"),
            "{label}: {}",
            outs[1]
        );
        let (stock, ours) = (dir.path().join("stock"), dir.path().join("svelto"));
        assert_eq!(tree(&stock), tree(&ours), "{label}: working files");
        for cmd in [&["status", "-v"][..], &["info", "-R"], &["diff"]] {
            assert_eq!(
                in_wc(pair, &stock, cmd),
                in_wc(pair, &ours, cmd),
                "{label}: svn {cmd:?}"
            );
        }
        assert_eq!(nodes(&stock), nodes(&ours), "{label}: wc.db rows");
        assert_eq!(pristines(&stock), pristines(&ours), "{label}: pristines");
    }
}

/// The suite's known exceptions (checkout_tests 7 and 13, basic_tests 1), where svn merges
/// into or skips what is in the way: `svelto checkout` refuses, names why and points to
/// svn, and changes nothing. A working copy inside the target (svn skips it, with or
/// without --force); a checkout into a working copy of the same URL (an update) with a
/// path scheduled for addition, or with a local change to a file the update changes.
#[test]
fn checkouts_svn_would_merge_or_skip_are_refused_with_a_pointer_to_svn() {
    let pair = pair("basic");
    let base = pair.subject_url();
    let url = format!("{base}/trunk");
    let dir = tempdir();
    let refused = |args: &[&str]| {
        let out = Run::new(binary())
            .args(args)
            .current_dir(dir.path())
            .failure();
        out.stderr_text()
    };
    // A working copy in the way.
    let target = dir.path().join("target");
    svn(
        pair,
        &["checkout", "-q", &format!("{url}/src"), "target/src"],
        dir.path(),
    );
    let before = (tree(&target), nodes(&target.join("src")));
    for force in [true, false] {
        let mut args = vec!["checkout", &url, "target"];
        if force {
            args.push("--force");
        }
        let err = refused(&args);
        assert!(
            err.contains("target/src' is a working copy inside")
                && err.contains("use 'svn checkout'"),
            "{err}"
        );
        assert!(!target.join(".svn").exists(), "no working copy made");
        assert_eq!(
            before,
            (tree(&target), nodes(&target.join("src"))),
            "nothing changed"
        );
    }
    // A working copy of the same URL with a path scheduled for addition.
    svn(
        pair,
        &["checkout", "-q", "-r", "5", &url, "added"],
        dir.path(),
    );
    let added = dir.path().join("added");
    std::fs::write(added.join("new-file"), "new\n").unwrap_or_else(|e| panic!("{e}"));
    svn(pair, &["add", "-q", "new-file"], &added);
    let before = (tree(&added), nodes(&added));
    let err = refused(&["checkout", &url, "added"]);
    assert!(
        err.contains("scheduled additions") && err.contains("use 'svn update'"),
        "{err}"
    );
    assert_eq!(before, (tree(&added), nodes(&added)), "nothing changed");
    // ... and with a local change to a file the update changes.
    let changed = svn(
        pair,
        &["diff", "--summarize", "-r", "5:6", &url],
        dir.path(),
    )
    .stdout_text();
    svn(
        pair,
        &["checkout", "-q", "-r", "5", &url, "edited"],
        dir.path(),
    );
    let edited = dir.path().join("edited");
    let touched = tree(&edited)
        .into_iter()
        .filter(|(_, what)| what.starts_with("file"))
        .map(|(p, _)| p.to_string_lossy().into_owned())
        .find(|f| changed.lines().any(|l| l.ends_with(&format!("/trunk/{f}"))))
        .unwrap_or_else(|| panic!("no file of trunk@5 changes by r6: {changed}"));
    std::fs::write(edited.join(&touched), "local change\n").unwrap_or_else(|e| panic!("{e}"));
    // (the new texts received before the refusal stay in the pristine store, unreferenced,
    // as `svn cleanup` finds them)
    let rows = |wc: &Path| -> Vec<String> {
        nodes(wc)
            .into_iter()
            .filter(|r| !r.starts_with("Text(\"$sha1$"))
            .collect()
    };
    let before = (tree(&edited), rows(&edited));
    let err = refused(&["checkout", "-r", "6", &url, "edited"]);
    assert!(
        err.contains(&format!("'{touched}' has local changes")) && err.contains("use 'svn update'"),
        "{err}"
    );
    assert_eq!(before, (tree(&edited), rows(&edited)), "no node changed");
}

/// A checkout over unversioned nodes in the way, without `--force`: a file where a file
/// goes (other text), a directory where a directory goes (with an unversioned file of its
/// own), a file where a directory goes. svn records each as a tree conflict ("local ...
/// unversioned, incoming ... add upon update"), keeps what is in the way and writes
/// nothing below it; Svelto the same: output, files, `svn status -v`, `svn info` of the
/// conflicted paths, wc.db rows (the `base-deleted` rows and the conflict skels), and
/// `svn resolve` then `svn revert` behave alike.
#[test]
fn checkout_over_unversioned_nodes_records_tree_conflicts() {
    let pair = pair("basic");
    for (label, base) in servers(pair) {
        let dir = tempdir();
        let url = format!("{base}/trunk");
        let mut outs = Vec::new();
        for wc in ["stock", "svelto"] {
            let root = dir.path().join(wc);
            std::fs::create_dir_all(root.join("src")).unwrap_or_else(|e| panic!("{e}"));
            std::fs::write(root.join("README.txt"), "mine\n").unwrap_or_else(|e| panic!("{e}"));
            std::fs::write(root.join("src/mine.c"), "int mine;\n")
                .unwrap_or_else(|e| panic!("{e}"));
            std::fs::write(root.join("a"), "a file\n").unwrap_or_else(|e| panic!("{e}"));
            let out = if wc == "stock" {
                pair.client().svn(&["checkout", &url, wc], dir.path())
            } else {
                Run::new(binary())
                    .args(["checkout", &url, wc])
                    .current_dir(dir.path())
                    .output()
            };
            assert!(out.success(), "{label} {wc}: {}", out.stderr_text());
            outs.push(sorted_lines(&out.stdout_text().replace(wc, "WC")));
        }
        assert_eq!(outs[0], outs[1], "{label}: output");
        assert!(
            outs[1].iter().any(|l| l == "   C WC/README.txt"),
            "{label}: {:?}",
            outs[1]
        );
        let (stock, ours) = (dir.path().join("stock"), dir.path().join("svelto"));
        assert_eq!(tree(&stock), tree(&ours), "{label}: working files");
        for cmd in [
            &["status", "-v"][..],
            &["info", "-R"],
            &["info", "README.txt", "src", "a", "a/b/c/empty-in-deep.txt"],
        ] {
            assert_eq!(
                in_wc(pair, &stock, cmd),
                in_wc(pair, &ours, cmd),
                "{label}: svn {cmd:?}"
            );
        }
        assert_eq!(nodes(&stock), nodes(&ours), "{label}: wc.db rows");
        assert_eq!(pristines(&stock), pristines(&ours), "{label}: pristines");
        for cmd in [
            &["resolve", "--accept", "working", "README.txt"][..],
            &["revert", "-R", "."],
            &["status", "-v"],
        ] {
            // (revert walks the rows in their insertion order: compared sorted)
            assert_eq!(
                sorted_lines(&in_wc(pair, &stock, cmd)),
                sorted_lines(&in_wc(pair, &ours, cmd)),
                "{label}: then svn {cmd:?}"
            );
        }
        assert_eq!(nodes(&stock), nodes(&ours), "{label}: wc.db rows after");
    }
}

/// `export` into an existing directory: refused without `--force` (as svn refuses it);
/// with it, the files there are overwritten, the others kept, the same output.
#[test]
fn export_with_force_writes_into_an_existing_directory() {
    let pair = pair("basic");
    for (label, base) in servers(pair) {
        let dir = tempdir();
        let url = format!("{base}/trunk");
        let mut outs = Vec::new();
        for wc in ["stock", "svelto"] {
            let root = dir.path().join(wc);
            std::fs::create_dir_all(root.join("src")).unwrap_or_else(|e| panic!("{e}"));
            std::fs::write(root.join("README.txt"), "mine\n").unwrap_or_else(|e| panic!("{e}"));
            std::fs::write(root.join("src/mine.c"), "int mine;\n")
                .unwrap_or_else(|e| panic!("{e}"));
            let run = |args: &[&str]| {
                if wc == "stock" {
                    pair.client().svn(args, dir.path())
                } else {
                    Run::new(binary())
                        .args(args)
                        .current_dir(dir.path())
                        .output()
                }
            };
            let refused = run(&["export", &url, wc]);
            assert!(!refused.success(), "{label} {wc}: export over a directory");
            assert!(
                refused.stderr_text().contains("use --force to overwrite"),
                "{label} {wc}: {}",
                refused.stderr_text()
            );
            let out = run(&["export", "--force", &url, wc]);
            assert!(out.success(), "{label} {wc}: {}", out.stderr_text());
            outs.push(out.stdout_text().replace(wc, "WC"));
        }
        assert_eq!(outs[0], outs[1], "{label}: output");
        let (stock, ours) = (dir.path().join("stock"), dir.path().join("svelto"));
        assert_eq!(tree(&stock), tree(&ours), "{label}: files");
        assert!(ours.join("src/mine.c").is_file(), "{label}");
        assert_ne!(
            std::fs::read(ours.join("README.txt")).unwrap_or_default(),
            b"mine\n",
            "{label}"
        );
        // A file where the directory would go: refused by both.
        let file = dir.path().join("file");
        std::fs::write(&file, "x").unwrap_or_else(|e| panic!("{e}"));
        let stock = pair
            .client()
            .svn(&["export", "--force", &url, "file"], dir.path());
        let ours = Run::new(binary())
            .args(["export", "--force", &url, "file"])
            .current_dir(dir.path())
            .output();
        assert!(
            !stock.success() && !ours.success(),
            "{label}: {}",
            ours.stderr_text()
        );
        assert!(ours.stderr_text().contains("is not a directory"), "{label}");
    }
}

/// Takes two stock checkouts of `url` at `from` through `prepare` (local changes), then
/// one through `svn update -r to` and the other through `svelto update -r to`: the same
/// output (which must contain each of `expect`), files, `svn status -v`, `svn info` (also
/// of `paths`), wc.db rows and pristines; then the stock client's `then` commands behave
/// alike on both, and Svelto's own update refuses the working copy in conflict.
#[allow(clippy::too_many_arguments)]
fn compare_conflicted_updates(
    pair: &Pair,
    label: &str,
    url: &str,
    from: &str,
    to: &str,
    prepare: &dyn Fn(&Path),
    expect: &[&str],
    paths: &[&str],
    then: &[&[&str]],
) {
    let dir = tempdir();
    let mut outs = Vec::new();
    for wc in ["stock", "svelto"] {
        svn(pair, &["checkout", "-q", "-r", from, url, wc], dir.path());
        let root = dir.path().join(wc);
        prepare(&root);
        let out = if wc == "stock" {
            pair.client().svn(&["update", "-r", to], &root)
        } else {
            Run::new(binary())
                .args(["update", "-r", to])
                .current_dir(&root)
                .output()
        };
        assert!(out.success(), "{label} {wc}: {}", out.stderr_text());
        outs.push(out.stdout_text());
    }
    let what = format!("{label}: update {url} from r{from} to r{to}");
    // svn's conflict walker (even with --non-interactive) searches the repository's
    // history for each tree conflict's details (a move?) and shows its progress; Svelto
    // does not search (docs/client.md).
    let walker = |l: &String| {
        !l.starts_with("Searching tree conflict details for") && !l.starts_with("\rChecking r")
    };
    let stock_lines: Vec<String> = sorted_lines(&outs[0]).into_iter().filter(walker).collect();
    assert_eq!(stock_lines, sorted_lines(&outs[1]), "{what}: output");
    for line in expect {
        assert!(outs[1].contains(line), "{what}: no {line:?} in {}", outs[1]);
    }
    let (stock, ours) = (dir.path().join("stock"), dir.path().join("svelto"));
    let compare = |when: &str| {
        assert_eq!(tree(&stock), tree(&ours), "{what} {when}: working files");
        for cmd in [&["status", "-v"][..], &["info", "-R"]] {
            assert_eq!(
                in_wc(pair, &stock, cmd),
                in_wc(pair, &ours, cmd),
                "{what} {when}: svn {cmd:?}"
            );
        }
        // (some of the paths may be gone after a revert: errors compared too)
        let mut info = vec!["info"];
        info.extend_from_slice(paths);
        let shown = |wc: &Path| {
            let out = pair.client().svn(&info, wc);
            let mask = |t: String| t.replace(&wc.display().to_string(), "{WC}");
            (
                out.success(),
                mask(out.stdout_text())
                    .lines()
                    .filter(|l| !l.starts_with("Text Last Updated: "))
                    .collect::<Vec<_>>()
                    .join("\n"),
                mask(out.stderr_text()),
            )
        };
        assert_eq!(shown(&stock), shown(&ours), "{what} {when}: svn {info:?}");
        assert_eq!(nodes(&stock), nodes(&ours), "{what} {when}: wc.db rows");
        assert_eq!(
            pristines(&stock),
            pristines(&ours),
            "{what} {when}: pristines"
        );
    };
    compare("");
    // Svelto's own update refuses a working copy in conflict (svn's works on it).
    let refused = Run::new(binary())
        .args(["update"])
        .current_dir(&ours)
        .failure();
    assert!(
        refused.stderr_text().contains("use 'svn update'"),
        "{what}: {}",
        refused.stderr_text()
    );
    for cmd in then {
        // (revert walks the rows in their insertion order: compared sorted)
        assert_eq!(
            sorted_lines(&in_wc(pair, &stock, cmd)),
            sorted_lines(&in_wc(pair, &ours, cmd)),
            "{what}: then svn {cmd:?}"
        );
        compare(&format!("then svn {cmd:?}"));
    }
}

/// `svelto update` over unversioned nodes where the update adds some (trunk from r1, empty,
/// to r2): a file with other text where a file goes, a directory with an unversioned file
/// of its own where a directory goes, a file where a directory goes. svn records each as a
/// tree conflict ("local ... unversioned, incoming ... add upon update"), keeps what is in
/// the way and writes nothing below it, and ends with "Summary of conflicts"; Svelto the
/// same, and the stock `svn update`, `svn resolve` and `svn revert` then behave alike.
#[test]
fn update_over_unversioned_nodes_records_tree_conflicts() {
    let pair = pair("basic");
    let prepare = |root: &Path| {
        std::fs::create_dir_all(root.join("doc")).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(root.join("README.txt"), "mine\n").unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(root.join("doc/mine.txt"), "my notes\n").unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(root.join("src"), "a file\n").unwrap_or_else(|e| panic!("{e}"));
    };
    for (label, base) in servers(pair) {
        compare_conflicted_updates(
            pair,
            label,
            &format!("{base}/trunk"),
            "1",
            "2",
            &prepare,
            &[
                "   C README.txt",
                "   A doc/api/index.txt",
                "  Tree conflicts: 3",
            ],
            &["README.txt", "doc", "src", "doc/api/index.txt"],
            &[
                &["update", "-r", "3"],
                &["resolve", "--accept", "working", "README.txt"],
                &["revert", "-R", "."],
                &["update"],
                &["status", "-v"],
            ],
        );
    }
}

/// `svelto update` deleting nodes with local changes (trunk from r3 to r5: r4 deletes
/// src/util.c, changed here; r5 deletes doc, whose doc/api/index.txt is changed here and
/// which holds an unversioned file): svn keeps each as a copy of its last base (`A  +`)
/// in a tree conflict ("local edit, incoming delete upon update"); Svelto the same, and
/// the stock `svn update`, `svn resolve`, `svn revert` then behave alike. README.txt,
/// removed from disk, is restored first by both.
#[test]
fn update_deleting_changed_nodes_records_tree_conflicts() {
    let pair = pair("basic");
    let prepare = |root: &Path| {
        std::fs::write(root.join("src/util.c"), "changed here\n").unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(root.join("doc/api/index.txt"), "changed too\n")
            .unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(root.join("doc/notes.txt"), "unversioned\n")
            .unwrap_or_else(|e| panic!("{e}"));
        // A missing file: restored first.
        std::fs::remove_file(root.join("README.txt")).unwrap_or_else(|e| panic!("{e}"));
    };
    for (label, base) in servers(pair) {
        compare_conflicted_updates(
            pair,
            label,
            &format!("{base}/trunk"),
            "3",
            "5",
            &prepare,
            &[
                "   C src/util.c",
                "   C doc",
                "  Tree conflicts: 2",
                "Restored 'README.txt'",
            ],
            &["src/util.c", "doc", "doc/api/index.txt"],
            &[
                &["update"],
                &["resolve", "--accept", "working", "src/util.c"],
                &["revert", "-R", "."],
                &["status", "-v"],
            ],
        );
    }
}

/// Everything the stock client shows of two working copies, compared.
pub(crate) fn same_wc(pair: &Pair, stock: &Path, ours: &Path, what: &str) {
    assert_eq!(tree(stock), tree(ours), "{what}: working files");
    for cmd in [
        &["status", "-v"][..],
        &["info", "-R"],
        &["proplist", "-R", "-v"],
        &["diff"],
    ] {
        assert_eq!(
            in_wc(pair, stock, cmd),
            in_wc(pair, ours, cmd),
            "{what}: svn {cmd:?}"
        );
    }
    assert_eq!(nodes(stock), nodes(ours), "{what}: wc.db rows");
    assert_eq!(pristines(stock), pristines(ours), "{what}: pristine store");
}
