//! `svelto admin hotcopy` and `freeze`: copies of a repository that a server commits to
//! while they are made, and what svnadmin prints and refuses.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use svelto_testkit::dumpfile::assert_dumps_eq;
use svelto_testkit::serve::{Svelto, SvnClient};
use svelto_testkit::{require_tool, scenario_dump, tempdir, Run};

use crate::common::{parse_info, svelto, SveltoRepo};
use crate::pair::{seen, Pair, REPO};

/// A repository under a running `svelto serve` that anyone may commit to.
pub(crate) struct Served {
    _dir: tempfile::TempDir,
    pub(crate) repo: PathBuf,
    server: Svelto,
}

impl Served {
    pub(crate) fn new() -> Served {
        let dir = tempdir();
        let root = dir.path().join("root");
        let repo = root.join("repo");
        svelto().args(["admin", "create"]).arg(&repo).success();
        std::fs::write(
            repo.join("conf/svnserve.conf"),
            "[general]\nanon-access = write\n",
        )
        .expect("write svnserve.conf");
        let server = Svelto::start(Path::new(env!("CARGO_BIN_EXE_svelto")), &root);
        Served {
            _dir: dir,
            repo,
            server,
        }
    }

    pub(crate) fn url(&self) -> String {
        self.server.url("repo")
    }
}

/// Commits through the server from another thread, one file a revision, until stopped;
/// `acknowledged` is the last revision the server acknowledged.
struct Committer {
    acknowledged: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Committer {
    fn start(url: String, cwd: PathBuf) -> Committer {
        require_tool("svnmucc");
        let acknowledged = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (acknowledged, stop) = (acknowledged.clone(), stop.clone());
            std::thread::spawn(move || {
                let client = SvnClient::new();
                let text = cwd.join("text");
                let mut i = 0u64;
                while !stop.load(Ordering::SeqCst) {
                    i += 1;
                    std::fs::write(&text, format!("commit {i}\n").repeat(i as usize % 300 + 1))
                        .expect("write text");
                    let out = client.run(
                        "svnmucc",
                        &[
                            "-m".to_string(),
                            format!("commit {i}"),
                            "put".to_string(),
                            text.display().to_string(),
                            format!("{url}/f{}", i % 7),
                        ],
                        &cwd,
                    );
                    assert!(out.success(), "svnmucc put:\n{out}");
                    let rev: u64 = out
                        .stdout_text()
                        .split_whitespace()
                        .next()
                        .and_then(|w| w.strip_prefix('r'))
                        .and_then(|n| n.parse().ok())
                        .unwrap_or_else(|| panic!("svnmucc printed no revision:\n{out}"));
                    acknowledged.store(rev, Ordering::SeqCst);
                }
            })
        };
        Committer {
            acknowledged,
            stop,
            thread: Some(thread),
        }
    }

    fn wait_for(&self, rev: u64) {
        let deadline = Instant::now() + Duration::from_secs(120);
        while self.acknowledged.load(Ordering::SeqCst) < rev {
            assert!(
                Instant::now() < deadline,
                "no revision {rev} committed in time"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn stop(mut self) -> u64 {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            t.join().expect("committer thread");
        }
        self.acknowledged.load(Ordering::SeqCst)
    }
}

fn youngest(repo: &Path) -> u64 {
    parse_info(&svelto().args(["admin", "info"]).arg(repo).success()).youngest
}

fn dump(repo: &Path, range: &str) -> Vec<u8> {
    svelto()
        .args(["admin", "dump", "-q", "-r", range])
        .arg(repo)
        .success()
        .stdout
}

#[test]
fn hotcopy_of_a_repository_under_concurrent_commits() {
    let served = Served::new();
    let work = tempdir();
    let committer = Committer::start(served.url(), work.path().to_owned());
    committer.wait_for(3);
    let mut copies = Vec::new();
    for i in 0..4 {
        let before = committer.acknowledged.load(Ordering::SeqCst);
        let dst = work.path().join(format!("copy{i}"));
        let out = svelto()
            .args(["admin", "hotcopy"])
            .arg(&served.repo)
            .arg(&dst)
            .success();
        let copied = youngest(&dst);
        assert!(
            copied >= before,
            "copy {i} has r{copied}, but r{before} was acknowledged before it began"
        );
        let expected: String = (0..=copied)
            .map(|r| format!("* Copied revision {r}.\n"))
            .collect();
        assert_eq!(out.stdout_text(), expected, "hotcopy's progress lines");
        copies.push((dst, copied));
    }
    let last = committer.stop();
    assert!(
        copies.iter().any(|(_, c)| *c < last),
        "no commit happened after a copy began (last r{last}): the race was not exercised"
    );
    for (dst, copied) in &copies {
        svelto().args(["admin", "verify", "-q"]).arg(dst).success();
        assert_dumps_eq(
            &dump(&served.repo, &format!("0:{copied}")),
            &dump(dst, &format!("0:{copied}")),
            "the copy holds the source's revisions",
        );
    }

    // Incremental: the first copy gets what it lacks, and nothing twice.
    let (first, copied) = &copies[0];
    let head = youngest(&served.repo);
    let out = svelto()
        .args(["admin", "hotcopy", "--incremental"])
        .arg(&served.repo)
        .arg(first)
        .success();
    let expected: String = (copied + 1..=head)
        .map(|r| format!("* Copied revision {r}.\n"))
        .collect();
    assert_eq!(out.stdout_text(), expected, "incremental hotcopy's lines");
    assert_eq!(youngest(first), head);
    svelto()
        .args(["admin", "verify", "-q"])
        .arg(first)
        .success();
    assert_dumps_eq(
        &dump(&served.repo, &format!("0:{head}")),
        &dump(first, &format!("0:{head}")),
        "after the incremental copy",
    );
    let again = svelto()
        .args(["admin", "hotcopy", "--incremental"])
        .arg(&served.repo)
        .arg(first)
        .success();
    assert_eq!(again.stdout_text(), "", "nothing left to copy");

    // The copy is servable: a checkout from a server on it has the last commit's files.
    let copy_root = work.path().join("served-copy");
    std::fs::create_dir(&copy_root).expect("mkdir");
    std::fs::rename(first, copy_root.join("repo")).expect("move the copy");
    let server = Svelto::start(Path::new(env!("CARGO_BIN_EXE_svelto")), &copy_root);
    let client = SvnClient::new();
    let out = client.svn(&["checkout", &server.url("repo"), "wc"], work.path());
    assert!(out.success(), "svn checkout from the copy:\n{out}");
    let orig = client.svn(&["checkout", &served.url(), "wc-orig"], work.path());
    assert!(orig.success(), "svn checkout from the source:\n{orig}");
    for k in 0..7 {
        let name = format!("f{k}");
        let a = std::fs::read(work.path().join("wc").join(&name));
        let b = std::fs::read(work.path().join("wc-orig").join(&name));
        assert_eq!(
            a.ok(),
            b.ok(),
            "{name} in checkouts of the copy and the source"
        );
    }
    drop(served);
}

#[test]
fn hotcopy_prints_and_refuses_as_svnadmin() {
    let pair = Pair::new();
    let dump = scenario_dump("basic");
    pair.fs.load(&dump, &[]);
    pair.sv.load(&dump, &[]);
    let copy = format!("{REPO}-copy");
    pair.same(&["hotcopy", REPO, &copy]);
    // A non-incremental copy onto an existing one.
    pair.same(&["hotcopy", REPO, &copy]);
    pair.same(&["hotcopy", "--incremental", REPO, &copy]);
    pair.same(&["hotcopy", "-q", REPO, &format!("{REPO}-quiet")]);
    pair.same(&["hotcopy", "--clean-logs", REPO, &format!("{REPO}-clean")]);
    pair.same(&["hotcopy", REPO, REPO]);
    pair.same(&["hotcopy", REPO]);
    // An incremental copy into an empty directory is a whole copy.
    for repo in [pair.fs.path(), pair.sv.path()] {
        let mut empty = repo.as_os_str().to_owned();
        empty.push("-empty");
        std::fs::create_dir(&empty).expect("mkdir");
    }
    pair.same(&["hotcopy", "--incremental", REPO, &format!("{REPO}-empty")]);
}

/// An incremental copy names the revisions whose properties it brings, as svnadmin
/// (Subversion's fsfs_hotcopy_progress_with_revprop_changes).
#[test]
fn incremental_hotcopy_names_changed_revision_properties() {
    let pair = Pair::with_dump(&scenario_dump("basic"));
    let copy = format!("{REPO}-copy");
    pair.same(&["hotcopy", REPO, &copy]);
    let log = crate::common::write_file(pair.sv.dir(), "log", b"Modified log message.");
    let log = log.to_str().expect("utf-8");
    for rev in ["3", "1"] {
        pair.same(&["setrevprop", REPO, "-r", rev, "svn:log", log]);
    }
    let seen = pair.same(&["hotcopy", "--incremental", REPO, &copy]);
    assert_eq!(seen.stdout, "* Copied revision 1.\n* Copied revision 3.\n");
    let seen = pair.same(&["hotcopy", "--incremental", REPO, &copy]);
    assert_eq!(seen.stdout, "");
}

#[test]
fn hotcopy_refuses_another_repository_and_a_newer_destination() {
    let a = SveltoRepo::create();
    let b = SveltoRepo::create();
    let out = svelto()
        .args(["admin", "hotcopy", "--incremental"])
        .arg(a.path())
        .arg(b.path())
        .failure();
    assert_eq!(
        out.stderr_text(),
        "svnadmin: E170009: The UUID of the hotcopy source does not match the UUID of the hotcopy destination\n"
    );
    let copy = a.dir().join("copy");
    svelto()
        .args(["admin", "hotcopy", "-q"])
        .arg(a.path())
        .arg(&copy)
        .success();
    a.load(&scenario_dump("basic"), &["--ignore-uuid"]);
    let out = svelto()
        .args(["admin", "hotcopy", "--incremental"])
        .arg(&copy)
        .arg(a.path())
        .failure();
    let head = a.info().youngest;
    assert_eq!(
        out.stderr_text(),
        format!(
            "svnadmin: E200007: The hotcopy destination already contains more revisions ({head}) than the hotcopy source contains (0); are source and destination swapped?\n"
        )
    );
    // A file where the copy should go.
    let file = a.dir().join("file");
    std::fs::write(&file, "x").expect("write");
    let out = svelto()
        .args(["admin", "hotcopy"])
        .arg(a.path())
        .arg(&file)
        .failure();
    assert!(out.stderr_text().contains("E145001"), "{out}");
    // Into the source itself.
    let out = svelto()
        .args(["admin", "hotcopy"])
        .arg(a.path())
        .arg(a.path().join("inside"))
        .failure();
    assert!(out.stderr_text().contains("into itself"), "{out}");
    assert!(!a.path().join("inside").exists());
}

#[test]
fn freeze_holds_commits_through_a_running_server() {
    let served = Served::new();
    let work = tempdir();
    let client = SvnClient::new();
    require_tool("svnmucc");
    let marker = work.path().join("frozen");
    let release = work.path().join("release");
    // The frozen program: says it runs, waits for the test's word, exits 7.
    let script = format!(
        "touch '{}'; while [ ! -e '{}' ]; do sleep 0.05; done; exit 7",
        marker.display(),
        release.display()
    );
    let freeze = svelto()
        .args(["admin", "freeze"])
        .arg(&served.repo)
        .args(["--", "sh", "-c", &script])
        .timeout(Duration::from_secs(120))
        .spawn();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !marker.exists() {
        assert!(Instant::now() < deadline, "the frozen program never ran");
        std::thread::sleep(Duration::from_millis(20));
    }
    // Reads go on while frozen.
    let out = client.svn(&["ls", &served.url()], work.path());
    assert!(out.success(), "svn ls while frozen:\n{out}");
    // A commit waits.
    let commit = client
        .command("svnmucc", work.path())
        .args([
            "-m",
            "during freeze",
            "mkdir",
            &format!("{}/d", served.url()),
        ])
        .spawn();
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(youngest(&served.repo), 0, "a commit went in while frozen");
    let mut commit = commit;
    assert!(
        !commit.has_exited(),
        "the commit did not wait for the freeze"
    );
    std::fs::write(&release, "").expect("release");
    let frozen = freeze.wait();
    assert_eq!(
        frozen.status.code(),
        Some(7),
        "freeze exits with the program's code:\n{frozen}"
    );
    let committed = commit.wait();
    assert!(
        committed.success(),
        "the commit after the freeze:\n{committed}"
    );
    assert_eq!(youngest(&served.repo), 1);
}

#[test]
fn freeze_runs_the_program_as_svnadmin() {
    let pair = Pair::new();
    pair.same(&[
        "freeze",
        REPO,
        "--",
        "sh",
        "-c",
        "echo out; echo err >&2; exit 3",
    ]);
    pair.same(&["freeze", REPO, "echo", "no", "dashes"]);
    // The repository after `--` (Subversion's freeze_freeze test), nested freezes.
    pair.same(&[
        "freeze",
        "--",
        REPO,
        "sh",
        "-c",
        "echo after dashes; exit 5",
    ]);
    let other = SveltoRepo::create();
    let out = svelto()
        .args(["admin", "freeze", "--"])
        .arg(pair.sv.path())
        .arg(env!("CARGO_BIN_EXE_svelto"))
        .args(["admin", "freeze", "--"])
        .arg(other.path())
        .args(["sh", "-c", "exit 6"])
        .output();
    assert_eq!(out.status.code(), Some(6), "nested freezes:\n{out}");
    pair.same(&["freeze", REPO]);
    pair.same(&["freeze"]);
    pair.same(&["freeze", REPO, "--", "sh", "-c", "kill -9 $$"]);
    // -F: a list of repositories (an empty line is skipped).
    let list_fs = pair.fs.dir().join("list");
    let list_sv = pair.sv.dir().join("list");
    std::fs::write(&list_fs, format!("{}\n\n", pair.fs.path().display())).expect("list");
    std::fs::write(&list_sv, format!("{}\n\n", pair.sv.path().display())).expect("list");
    let fs = Run::tool("svnadmin")
        .args(["freeze", "-F"])
        .arg(&list_fs)
        .args(["--", "sh", "-c", "echo listed; exit 4"])
        .output();
    let sv = svelto()
        .args(["admin", "freeze", "-F"])
        .arg(&list_sv)
        .args(["--", "sh", "-c", "echo listed; exit 4"])
        .output();
    assert_eq!(seen(&sv, pair.sv.path()), seen(&fs, pair.fs.path()));
}

/// Several repositories before `--` are all frozen (svnadmin takes one).
#[test]
fn freeze_several_repositories() {
    let a = SveltoRepo::create();
    let b = SveltoRepo::create();
    let out = svelto()
        .args(["admin", "freeze"])
        .arg(a.path())
        .arg(b.path())
        .args(["--", "echo", "both"])
        .success();
    assert_eq!(out.stdout_text(), "both\n");
}
