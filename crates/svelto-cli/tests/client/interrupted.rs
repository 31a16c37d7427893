//! Interrupted `svelto checkout` and `svelto update` (SIGKILL part way). A checkout is
//! resumed by the same command run again, and the working copy is then the stock client's
//! checkout, file for file and row for row; a file that was in the way before the checkout
//! began stays, as a tree conflict, as with svn. An update leaves the stock client's work
//! queue: svn refuses to work there until `svn cleanup`, which finishes the update.

use std::process::Command;
use std::time::{Duration, Instant};

use svelto_testkit::Subject;

use super::*;

/// A dump of one revision adding `trunk` with `dirs` directories of `per_dir` small files,
/// and a second changing every file.
pub(super) fn many_files_dump(dir: &Path, dirs: usize, per_dir: usize) -> PathBuf {
    let mut out = String::from(
        "SVN-fs-dump-format-version: 2\n\nUUID: 5a1d5b4e-3c1e-4e4b-9a0c-1b2c3d4e5f60\n\n\
         Revision-number: 0\nProp-content-length: 10\nContent-length: 10\n\nPROPS-END\n\n",
    );
    let props = "K 7\nsvn:log\nV 5\nmany.\nK 10\nsvn:author\nV 5\nalice\n\
                 K 8\nsvn:date\nV 27\n2026-11-30T07:00:00.000000Z\nPROPS-END\n";
    out.push_str(&format!(
        "Revision-number: 1\nProp-content-length: {0}\nContent-length: {0}\n\n{props}\n",
        props.len()
    ));
    let node_dir = |path: &str| format!("Node-path: {path}\nNode-kind: dir\nNode-action: add\n\n");
    out.push_str(&node_dir("trunk"));
    for d in 0..dirs {
        out.push_str(&node_dir(&format!("trunk/d{d:03}")));
        for f in 0..per_dir {
            let text = format!("file {f} of directory {d}\n");
            out.push_str(&format!(
                "Node-path: trunk/d{d:03}/f{f:04}.txt\nNode-kind: file\nNode-action: add\n\
                 Prop-content-length: 10\nText-content-length: {}\nContent-length: {}\n\n\
                 PROPS-END\n{text}\n",
                text.len(),
                text.len() + 10
            ));
        }
    }
    let props = props.replace("07:00:00", "07:10:00");
    out.push_str(&format!(
        "Revision-number: 2\nProp-content-length: {0}\nContent-length: {0}\n\n{props}\n",
        props.len()
    ));
    for d in 0..dirs {
        for f in 0..per_dir {
            let text = format!("file {f} of directory {d}, changed in r2\n");
            out.push_str(&format!(
                "Node-path: trunk/d{d:03}/f{f:04}.txt\nNode-kind: file\nNode-action: change\n\
                 Text-content-length: {0}\nContent-length: {0}\n\n{text}\n",
                text.len()
            ));
        }
    }
    let path = dir.join("many-files.dump");
    std::fs::write(&path, out).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    path
}

/// The same file, in the way of the checkout's `d039/f0099.txt`, in `wc` (made) before
/// a checkout begins there.
fn in_the_way(wc: &Path) -> PathBuf {
    let dir = wc.join("d039");
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{dir:?}: {e}"));
    let file = dir.join("f0099.txt");
    std::fs::write(&file, "mine\n").unwrap_or_else(|e| panic!("{file:?}: {e}"));
    file
}

/// Runs `svelto ARGS` in `cwd` and kills it (SIGKILL) as soon as `begun` holds, failing
/// if it ended first or `begun` never held within 60 s.
fn kill_part_way(args: &[&str], cwd: &Path, begun: &dyn Fn() -> bool, label: &str) {
    let mut child = Command::new(binary())
        .args(args)
        .current_dir(cwd)
        .spawn()
        .expect("start svelto");
    let started = Instant::now();
    while !begun() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "{label}: svelto {args:?} got nowhere in 60 s"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(
        child.try_wait().expect("poll svelto").is_none(),
        "{label}: svelto {args:?} ended before it could be killed"
    );
    child.kill().expect("kill -9 svelto");
    child.wait().expect("reap svelto");
}

/// The nodes of two trees that differ (not the trees: thousands of lines).
pub(super) fn same_trees(
    stock: &BTreeMap<PathBuf, String>,
    ours: &BTreeMap<PathBuf, String>,
    what: &str,
) {
    let differ: Vec<_> = stock
        .keys()
        .chain(ours.keys())
        .filter(|k| stock.get(*k) != ours.get(*k))
        .take(10)
        .map(|k| format!("{k:?}: svn {:?}, svelto {:?}", stock.get(k), ours.get(k)))
        .collect();
    assert!(
        differ.is_empty(),
        "{what}: working files differ:\n{}",
        differ.join("\n")
    );
}

/// The rows of two wc.db (`nodes`) that differ (not all of them: thousands).
pub(super) fn same_rows(stock: &[String], ours: &[String], what: &str) {
    let only = |a: &[String], b: &[String]| -> Vec<String> {
        a.iter()
            .filter(|r| !b.contains(r))
            .take(5)
            .cloned()
            .collect()
    };
    let (svn_only, svelto_only) = (only(stock, ours), only(ours, stock));
    if let Some(i) = (0..stock.len().min(ours.len())).find(|&i| stock[i] != ours[i]) {
        panic!(
            "{what}: wc.db rows differ at {i} of {} and {}:\nsvn's {:?}\nsvelto's {:?}",
            stock.len(),
            ours.len(),
            stock[i],
            ours[i]
        );
    }
    assert!(
        svn_only.is_empty() && svelto_only.is_empty(),
        "{what}: wc.db rows differ:\nonly svn's: {svn_only:#?}\nonly svelto's: {svelto_only:#?}"
    );
}

#[test]
fn a_killed_checkout_is_resumed_by_the_same_command() {
    let dir = tempdir();
    let dump = many_files_dump(dir.path(), 40, 100);
    let pair = Pair::from_dump("many-files", &dump, Subject::Svelto(binary().to_path_buf()));
    for (label, base) in servers(&pair) {
        let url = format!("{base}/trunk");
        let work = dir.path().join(label.replace(' ', "-"));
        std::fs::create_dir_all(&work).unwrap_or_else(|e| panic!("{work:?}: {e}"));
        in_the_way(&work.join("stock"));
        svn(&pair, &["checkout", "-q", "-r", "1", &url, "stock"], &work);

        let ours = work.join("svelto");
        let mine = in_the_way(&ours);
        // Older than the checkout by more than a clock tick of the file system's times.
        std::thread::sleep(Duration::from_millis(50));
        // Killed once it has written files of the first directory.
        kill_part_way(
            &["checkout", "-q", "-r", "1", &url, "svelto"],
            &work,
            &|| ours.join("d001").is_dir(),
            label,
        );
        let written = tree(&ours).len();
        assert!(
            written < 4000,
            "{label}: the killed checkout had written {written} nodes"
        );

        let out = svelto(&["checkout", "-q", "-r", "1", &url, "svelto"], &work);
        assert!(out.stderr_text().is_empty(), "{label}: {out}");
        let what = format!("{label}: a killed checkout resumed");
        assert_eq!(
            std::fs::read_to_string(&mine).expect("the file that was in the way"),
            "mine\n",
            "{what}: the file in the way before it began"
        );
        let stock = work.join("stock");
        same_trees(&tree(&stock), &tree(&ours), &what);
        for cmd in [&["status", "-v"][..], &["info", "-R"], &["diff"]] {
            assert_eq!(
                in_wc(&pair, &stock, cmd),
                in_wc(&pair, &ours, cmd),
                "{what}: svn {cmd:?}"
            );
        }
        same_rows(&nodes(&stock), &nodes(&ours), &what);
        assert_eq!(
            pristines(&stock),
            pristines(&ours),
            "{what}: pristine store"
        );
    }
}

#[test]
fn a_killed_update_is_finished_by_svn_cleanup() {
    let dir = tempdir();
    let dump = many_files_dump(dir.path(), 40, 100);
    let pair = Pair::from_dump("many-files", &dump, Subject::Svelto(binary().to_path_buf()));
    for (label, base) in servers(&pair) {
        let url = format!("{base}/trunk");
        let work = dir
            .path()
            .join(format!("update-{}", label.replace(' ', "-")));
        std::fs::create_dir_all(&work).unwrap_or_else(|e| panic!("{work:?}: {e}"));
        svn(&pair, &["checkout", "-q", "-r", "1", &url, "stock"], &work);
        svn(&pair, &["update", "-q"], &work.join("stock"));
        svelto(&["checkout", "-q", "-r", "1", &url, "svelto"], &work);
        let ours = work.join("svelto");
        // Killed once it has replaced a file of the second directory (of 40).
        let probe = ours.join("d001/f0000.txt");
        kill_part_way(
            &["update", "-q", "svelto"],
            &work,
            &|| std::fs::read_to_string(&probe).is_ok_and(|t| t.contains("r2")),
            label,
        );
        let what = format!("{label}: a killed update");

        // The stock client will not work on it before `svn cleanup`; nor will svelto.
        let refused = pair.client().svn(&["update"], &ours);
        assert!(
            !refused.success() && refused.stderr_text().contains("E155037"),
            "{what}: svn update before cleanup: {refused}"
        );
        let refused = Run::new(binary())
            .args(["update", "-q", "svelto"])
            .current_dir(&work)
            .failure();
        assert!(
            refused.stderr_text().contains("'svn cleanup' finishes it"),
            "{what}: svelto update before cleanup: {refused}"
        );

        svn(&pair, &["cleanup"], &ours);
        // (cleanup also drops the pristines no node uses: the same on the stock side)
        let stock = work.join("stock");
        svn(&pair, &["cleanup"], &stock);
        same_trees(&tree(&stock), &tree(&ours), &what);
        for cmd in [&["status", "-v"][..], &["info", "-R"], &["diff"]] {
            assert_eq!(
                in_wc(&pair, &stock, cmd),
                in_wc(&pair, &ours, cmd),
                "{what}: svn {cmd:?}"
            );
        }
        same_rows(&nodes(&stock), &nodes(&ours), &what);
        let left = std::fs::read_dir(ours.join(".svn/tmp")).map_or(0, |d| d.count());
        assert_eq!(left, 0, "{what}: temporaries left in .svn/tmp");
    }
}
