//! Files' modification times: `svn export` gives every file its last commit's date, and
//! checkout and update do when the configuration says `use-commit-times = yes`
//! (`[miscellany]`); otherwise a written file has the time it was written. Svelto's
//! against the stock client's, file by file and in wc.db (`last_mod_time`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use svelto_testkit::{tempdir, Run, SvnClient};

use super::{binary, pair, servers};

/// Every regular file below `root` (but `.svn`) with its modification time (ns).
fn mtimes(root: &Path) -> BTreeMap<PathBuf, u128> {
    let mut out = BTreeMap::new();
    let mut todo = vec![root.to_path_buf()];
    while let Some(dir) = todo.pop() {
        for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{dir:?}: {e}")) {
            let entry = entry.unwrap_or_else(|e| panic!("{dir:?}: {e}"));
            let path = entry.path();
            let meta = path
                .symlink_metadata()
                .unwrap_or_else(|e| panic!("{path:?}: {e}"));
            if entry.file_name() == ".svn" {
                continue;
            } else if meta.is_dir() {
                todo.push(path);
            } else if meta.is_file() {
                let t = meta.modified().expect("mtime");
                let ns = t
                    .duration_since(SystemTime::UNIX_EPOCH)
                    .expect("after 1970");
                out.insert(
                    path.strip_prefix(root).expect("below").to_owned(),
                    ns.as_nanos(),
                );
            }
        }
    }
    out
}

/// wc.db's recorded time of each file (µs).
fn recorded(wc: &Path) -> BTreeMap<String, Option<i64>> {
    let conn = rusqlite::Connection::open(wc.join(".svn/wc.db")).expect("wc.db");
    let mut stmt = conn
        .prepare(
            "SELECT local_relpath, last_mod_time FROM NODES WHERE kind = 'file' AND op_depth = 0",
        )
        .expect("select");
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("query")
        .map(|r| r.expect("row"))
        .collect()
}

/// A client whose configuration sets `use-commit-times`.
fn commit_times_client(dir: &Path) -> SvnClient {
    let client = SvnClient::in_dir(&dir.join("config"));
    std::fs::write(
        client.config_dir().join("config"),
        "[auth]\npassword-stores =\n\n[miscellany]\nuse-commit-times = yes\n",
    )
    .expect("config");
    client
}

fn svelto(client: &SvnClient, args: &[&str], cwd: &Path) {
    let out = Run::new(binary())
        .args(args)
        .arg("--config-dir")
        .arg(client.config_dir())
        .current_dir(cwd)
        .output();
    assert!(out.success(), "svelto {args:?}: {}", out.stderr_text());
}

fn stock(client: &SvnClient, args: &[&str], cwd: &Path) {
    let out = client.svn(args, cwd);
    assert!(out.success(), "svn {args:?}: {}", out.stderr_text());
}

/// The same times on disk and in wc.db, and each a commit's (before the test began).
fn same_times(label: &str, a: &Path, b: &Path, started: SystemTime) {
    let (ta, tb) = (mtimes(a), mtimes(b));
    assert!(!ta.is_empty(), "{label}: no files");
    assert_eq!(ta, tb, "{label}: files' times");
    let started = started
        .duration_since(SystemTime::UNIX_EPOCH)
        .expect("now")
        .as_nanos();
    assert!(
        ta.values().all(|&t| t < started),
        "{label}: a file has a time after the test began: {ta:?}"
    );
    if a.join(".svn").exists() {
        assert_eq!(recorded(a), recorded(b), "{label}: wc.db's last_mod_time");
    }
}

#[test]
fn export_gives_each_file_its_commit_date_as_svn_export_does() {
    let started = SystemTime::now() - Duration::from_secs(1);
    for fixture in ["mixed", "eol-keywords"] {
        let pair = pair(fixture);
        for (label, base) in servers(pair) {
            let dir = tempdir();
            let client = SvnClient::in_dir(&dir.path().join("config"));
            let url = format!("{base}/trunk");
            stock(&client, &["export", "-q", &url, "stock"], dir.path());
            svelto(&client, &["export", "-q", &url, "svelto"], dir.path());
            same_times(
                &format!("{fixture}, {label}: export"),
                &dir.path().join("stock"),
                &dir.path().join("svelto"),
                started,
            );
        }
    }
}

#[test]
fn use_commit_times_sets_checkout_and_update_times_as_svn_does() {
    let started = SystemTime::now() - Duration::from_secs(1);
    let pair = pair("mixed");
    let (label, base) = servers(pair)[1].clone();
    let dir = tempdir();
    let client = commit_times_client(dir.path());
    let url = format!("{base}/trunk");
    let (a, b) = (dir.path().join("stock"), dir.path().join("svelto"));
    let (a_s, b_s) = (a.to_str().expect("utf-8"), b.to_str().expect("utf-8"));
    stock(
        &client,
        &["checkout", "-q", "-r", "2", &url, a_s],
        dir.path(),
    );
    svelto(
        &client,
        &["checkout", "-q", "-r", "2", &url, b_s],
        dir.path(),
    );
    same_times(&format!("{label}: checkout -r 2"), &a, &b, started);
    // An update across revisions, then one that restores a missing file.
    stock(&client, &["update", "-q", a_s], dir.path());
    svelto(&client, &["update", "-q", b_s], dir.path());
    same_times(&format!("{label}: update to HEAD"), &a, &b, started);
    let file = mtimes(&a).keys().next().cloned().expect("a file");
    std::fs::remove_file(a.join(&file)).expect("rm");
    std::fs::remove_file(b.join(&file)).expect("rm");
    stock(&client, &["update", "-q", a_s], dir.path());
    svelto(&client, &["update", "-q", b_s], dir.path());
    same_times(
        &format!("{label}: update restoring {file:?}"),
        &a,
        &b,
        started,
    );

    // Without the option: the time of writing, recorded as it is on disk.
    let plain = SvnClient::in_dir(&dir.path().join("plain-config"));
    let c = dir.path().join("plain");
    let before = SystemTime::now() - Duration::from_secs(1);
    svelto(
        &plain,
        &["checkout", "-q", &url, c.to_str().expect("utf-8")],
        dir.path(),
    );
    let times = mtimes(&c);
    assert!(times.values().all(|&t| t
        >= before
            .duration_since(SystemTime::UNIX_EPOCH)
            .expect("now")
            .as_nanos()));
    let db = recorded(&c);
    for (path, ns) in times {
        let relpath = path.to_str().expect("utf-8");
        assert_eq!(
            db[relpath],
            Some((ns / 1000) as i64),
            "{relpath}: recorded time"
        );
    }
}
