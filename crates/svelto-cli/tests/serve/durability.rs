//! Durability: `kill -9` of the server during a stream of commits, many times over, and a
//! client killed in the middle of a large commit. Every commit a client saw succeed must
//! survive with its content, `svelto admin verify` must pass after every crash, and the
//! youngest revision never goes backwards.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use svelto_testkit::{require_tool, tempdir, Run, Svelto, SvnClient};

pub fn binary() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_svelto"))
}

/// A small deterministic generator (xorshift), seeded from the clock; the seed is printed
/// so that a failing run can be repeated with `SVELTO_CRASH_SEED`.
pub struct Rng(u64);

impl Rng {
    pub fn from_env_or_clock(label: &str) -> Rng {
        let seed = std::env::var("SVELTO_CRASH_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_nanos() as u64)
                    .unwrap_or(1)
            });
        eprintln!("{label}: SVELTO_CRASH_SEED={seed}");
        Rng(seed | 1)
    }

    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// A fresh Svelto repository `NAME` under a new root that anonymous clients may write.
pub fn fresh_repo(dir: &Path, name: &str) -> PathBuf {
    let root = dir.join("repos");
    std::fs::create_dir_all(&root).expect("creating the server root");
    let repo = root.join(name);
    Run::new(binary())
        .args(["admin", "create"])
        .arg(&repo)
        .success();
    std::fs::write(
        repo.join("conf").join("svnserve.conf"),
        "[general]\nanon-access = write\n",
    )
    .expect("writing svnserve.conf");
    repo
}

pub fn start(root: &Path, log: &Path) -> Svelto {
    Svelto::start_with(binary(), root, log, &[])
}

/// `svelto admin info`'s youngest revision.
pub fn youngest(repo: &Path) -> u64 {
    let out = Run::new(binary())
        .args(["admin", "info"])
        .arg(repo)
        .success();
    let text = out.stdout_text();
    text.lines()
        .find_map(|l| l.strip_prefix("Revisions: "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no youngest revision in `svelto admin info`:\n{text}"))
}

pub fn verify(repo: &Path, context: &str) {
    let out = Run::new(binary())
        .args(["admin", "verify", "-q"])
        .arg(repo)
        .output();
    assert!(
        out.success(),
        "{context}: `svelto admin verify` failed:\n{out}"
    );
}

/// The revision in svnmucc's `rN committed by ...` line.
pub fn committed_rev(stdout: &str) -> Option<u64> {
    stdout.lines().find_map(|l| {
        let rest = l.strip_prefix('r')?;
        let (n, tail) = rest.split_once(' ')?;
        tail.starts_with("committed")
            .then(|| n.parse().ok())
            .flatten()
    })
}

/// `svn log -v -q URL`: revision -> the paths it changed (with their action letter).
pub fn changed_paths(client: &SvnClient, url: &str, cwd: &Path) -> BTreeMap<u64, Vec<String>> {
    let out = client.svn(&["log", "-v", "-q", url], cwd);
    assert!(out.success(), "svn log failed:\n{out}");
    let mut revs: BTreeMap<u64, Vec<String>> = BTreeMap::new();
    let mut current = None;
    for line in out.stdout_text().lines() {
        if let Some(rest) = line.strip_prefix('r') {
            if let Some((n, _)) = rest.split_once(" |") {
                let n: u64 = n.parse().expect("a revision number");
                current = Some(n);
                revs.entry(n).or_default();
                continue;
            }
        }
        if let (Some(n), Some(p)) = (current, line.strip_prefix("   ")) {
            revs.entry(n).or_default().push(p.to_string());
        }
    }
    revs
}

/// One commit a client saw succeed: the revision it printed, the path it added, the
/// content of the file under it.
#[derive(Debug, Clone)]
struct Landed {
    rev: u64,
    dir: String,
    content: String,
}

#[test]
fn kill_9_during_commits_loses_nothing_acknowledged() {
    kill_9_during_commits(false);
}

/// The same over HTTP: concurrent svnmucc commits over `http://` (POST, MKCOL, PUT,
/// MERGE), the server killed at a random moment, every acknowledged commit there.
#[test]
fn kill_9_during_http_commits_loses_nothing_acknowledged() {
    kill_9_during_commits(true);
}

/// `svelto serve` on `root`, over HTTP (under `/svn`) when `http`.
fn start_on(root: &Path, log: &Path, http: bool) -> Svelto {
    if http {
        Svelto::start_http(binary(), root, log, "/svn", &[])
    } else {
        start(root, log)
    }
}

fn kill_9_during_commits(http: bool) {
    require_tool("svn");
    require_tool("svnmucc");
    let dir = tempdir();
    let repo = fresh_repo(dir.path(), "crash");
    let root = repo.parent().expect("root").to_owned();
    let log = dir.path().join("serve.log");
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).expect("work dir");
    let client = Arc::new(SvnClient::new());
    let mut rng = Rng::from_env_or_clock(if http {
        "kill_9_during_http_commits"
    } else {
        "kill_9_during_commits"
    });
    let landed: Arc<Mutex<Vec<Landed>>> = Arc::new(Mutex::new(Vec::new()));
    let mut last_youngest = 0;
    let rounds = 15;
    let started = Instant::now();
    for round in 0..rounds {
        let server = start_on(&root, &log, http);
        let url = server.url("crash");
        let stop = Arc::new(AtomicBool::new(false));
        let threads: Vec<_> = (0..3)
            .map(|t| {
                let (client, url, stop, landed, work) = (
                    Arc::clone(&client),
                    url.clone(),
                    Arc::clone(&stop),
                    Arc::clone(&landed),
                    work.clone(),
                );
                std::thread::spawn(move || {
                    for n in 0.. {
                        if stop.load(Ordering::SeqCst) {
                            break;
                        }
                        let dir = format!("r{round}-t{t}-c{n}");
                        let content = format!("round {round} thread {t} commit {n}\n");
                        let file = work.join(format!("{dir}.txt"));
                        std::fs::write(&file, &content).expect("writing a client file");
                        let out = client.run(
                            "svnmucc",
                            &[
                                "-m".to_string(),
                                format!("commit {dir}"),
                                "mkdir".to_string(),
                                format!("{url}/{dir}"),
                                "put".to_string(),
                                file.display().to_string(),
                                format!("{url}/{dir}/f.txt"),
                            ],
                            &work,
                        );
                        if !out.success() {
                            // The server died (or is dying): this commit may or may not
                            // have landed; nothing is promised about it.
                            break;
                        }
                        let rev = committed_rev(&out.stdout_text())
                            .unwrap_or_else(|| panic!("svnmucc printed no revision:\n{out}"));
                        landed
                            .lock()
                            .expect("lock")
                            .push(Landed { rev, dir, content });
                    }
                })
            })
            .collect();
        // Let a few commits through, then kill the server at a random moment.
        std::thread::sleep(Duration::from_millis(150 + rng.below(600)));
        let pid = server.pid();
        Run::tool("kill").args(["-9", &pid.to_string()]).success();
        stop.store(true, Ordering::SeqCst);
        for t in threads {
            t.join().expect("a client thread panicked");
        }
        drop(server);
        verify(&repo, &format!("round {round}"));
        let y = youngest(&repo);
        assert!(
            y >= last_youngest,
            "round {round}: youngest went back from r{last_youngest} to r{y}"
        );
        let acked = landed
            .lock()
            .expect("lock")
            .iter()
            .map(|l| l.rev)
            .max()
            .unwrap_or(0);
        assert!(
            y >= acked,
            "round {round}: youngest r{y} below the acknowledged r{acked}"
        );
        last_youngest = y;
    }
    // Every acknowledged commit is there, in the revision the client was told, with its
    // content; and no revision was given out twice.
    let server = start_on(&root, &log, http);
    let url = server.url("crash");
    let landed = landed.lock().expect("lock").clone();
    assert!(
        landed.len() >= rounds,
        "too few commits landed ({}) to test anything",
        landed.len()
    );
    let revs = changed_paths(&client, &url, &work);
    let mut seen_revs = std::collections::BTreeSet::new();
    for l in &landed {
        assert!(seen_revs.insert(l.rev), "r{} acknowledged twice", l.rev);
        let paths = revs
            .get(&l.rev)
            .unwrap_or_else(|| panic!("acknowledged r{} missing from the log", l.rev));
        let want = [format!("A /{}", l.dir), format!("A /{}/f.txt", l.dir)];
        let mut got = paths.clone();
        got.sort();
        assert_eq!(got, want, "r{}: changed paths", l.rev);
    }
    let export = work.join("export");
    let out = client.svn(
        &["export", "-q", &url, &export.display().to_string()],
        &work,
    );
    assert!(out.success(), "svn export failed:\n{out}");
    for l in &landed {
        let f = export.join(&l.dir).join("f.txt");
        let got = std::fs::read_to_string(&f).unwrap_or_else(|e| panic!("{f:?}: {e}"));
        assert_eq!(got, l.content, "content of /{}/f.txt (r{})", l.dir, l.rev);
    }
    // Revisions are contiguous and every one is a whole commit.
    let y = youngest(&repo);
    assert_eq!(
        revs.keys().copied().collect::<Vec<_>>(),
        (1..=y).collect::<Vec<_>>(),
        "revisions are not 1..=r{y}"
    );
    eprintln!(
        "kill_9_during_commits: {} rounds, {} acknowledged commits, r{y}, {:?}",
        rounds,
        landed.len(),
        started.elapsed()
    );
}

fn txns_left(repo: &Path) -> Vec<String> {
    std::fs::read_dir(repo.join("db").join("txns"))
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// The youngest revision once it has not changed for a while and `db/txns` is empty.
fn settle(repo: &Path) -> u64 {
    let mut last = youngest(repo);
    let mut stable_since = Instant::now();
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
        let now = youngest(repo);
        if now != last || !txns_left(repo).is_empty() {
            last = now;
            stable_since = Instant::now();
        } else if stable_since.elapsed() > Duration::from_millis(1500) {
            break;
        }
    }
    last
}

#[test]
fn client_killed_mid_commit_leaves_no_trace() {
    require_tool("svn");
    let dir = tempdir();
    let repo = fresh_repo(dir.path(), "half");
    let root = repo.parent().expect("root").to_owned();
    let server = start(&root, &dir.path().join("serve.log"));
    let url = server.url("half");
    let client = SvnClient::new();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).expect("work dir");
    let out = client.svn(&["mkdir", "-m", "first", &format!("{url}/first")], &work);
    assert!(out.success(), "{out}");
    // A large import: many files of incompressible bytes.
    let big = work.join("big");
    std::fs::create_dir_all(&big).expect("big dir");
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for i in 0..40 {
        let bytes: Vec<u8> = (0..(1 << 20) / 8)
            .flat_map(|_| rng.next().to_le_bytes())
            .collect();
        std::fs::write(big.join(format!("f{i}.bin")), bytes).expect("writing a big file");
    }
    // Kill the client after a delay, shorter each time until the kill lands while the
    // commit is still being sent (when the client got its commit through first, the
    // revision is there, as with svnserve: try again on the next path).
    let mut before = youngest(&repo);
    let mut killed_mid_commit = None;
    for (attempt, delay_ms) in [120u64, 60, 30, 15, 120, 60, 30, 15]
        .into_iter()
        .enumerate()
    {
        let mut running = client
            .command("svn", &work)
            .args(["import", "-m", "a big import"])
            .arg(&big)
            .arg(format!("{url}/big{attempt}"))
            .spawn();
        std::thread::sleep(Duration::from_millis(delay_ms));
        let exited = running.has_exited();
        let out = running.kill();
        // The client may have sent the whole edit before it died; the server then
        // commits it, as svnserve does. Wait until the server is done with it.
        let now = settle(&repo);
        if exited || now != before {
            assert!(
                now == before + 1,
                "a killed or finished import left r{now} after r{before}:\n{out}"
            );
            before = now;
            continue;
        }
        assert!(!out.success(), "the killed import succeeded:\n{out}");
        killed_mid_commit = Some(attempt);
        break;
    }
    let Some(killed) = killed_mid_commit else {
        panic!("never managed to kill the import mid-commit");
    };
    // The server notices the closed connection and drops the edit.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !txns_left(&repo).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        txns_left(&repo),
        Vec::<String>::new(),
        "files left in db/txns"
    );
    assert_eq!(youngest(&repo), before, "the killed commit left a revision");
    verify(&repo, "after the killed import");
    let out = client.svn(&["ls", &url], &work);
    assert!(out.success(), "{out}");
    let listing = out.stdout_text();
    assert!(listing.lines().any(|l| l == "first/"), "{listing}");
    assert!(
        !listing.lines().any(|l| l == format!("big{killed}/")),
        "the killed import is visible:\n{listing}"
    );
    let out = client.svn(&["mkdir", "-m", "after", &format!("{url}/after")], &work);
    assert!(
        out.success(),
        "a commit after the killed one failed:\n{out}"
    );
    assert_eq!(youngest(&repo), before + 1);
    verify(&repo, "after the following commit");
    assert!(server.is_running(), "{}", server.diagnostics());
}
