//! What one connection keeps between its requests (its admission to the repository for up
//! to a second, the directories it looked up) never hides a commit made meanwhile, nor a
//! repository put in the place of the one it read.

use std::path::Path;
use std::time::Duration;

use svelto_testkit::{Pair, Run};

use crate::{addr_and_path, head, KeepAlive};

/// The `svn://` URL of the Svelto side's repository (the HTTP pair's server serves both;
/// its log names the svn:// port).
fn svn_url(pair: &Pair, name: &str) -> String {
    let log = std::fs::read_to_string(pair.subject_repo().join("../../serve.log"))
        .expect("read serve.log");
    let port = log
        .lines()
        .find_map(|l| {
            let at = l.find("INFO listening on 127.0.0.1:")?;
            let rest = &l[at + "INFO listening on 127.0.0.1:".len()..];
            Some(rest.trim().to_string())
        })
        .unwrap_or_else(|| panic!("no svn:// port in serve.log:\n{log}"));
    format!("svn://127.0.0.1:{port}/{name}")
}

/// `svnmucc ACTIONS...` against `url` as an anonymous writer.
fn mucc(pair: &Pair, url: &str, actions: &[&str]) {
    Run::tool("svnmucc")
        .arg("--non-interactive")
        .arg("--config-dir")
        .arg(pair.client().config_dir())
        .args(["-U", url, "-m", "change"])
        .args(actions)
        .success();
}

/// A fresh HTTP pair of the basic fixture that anonymous users may write to: the pair, the
/// Svelto side's address and URL path, its repository's directory and name.
struct Writable {
    pair: Pair,
    addr: String,
    root: String,
    repo: std::path::PathBuf,
    name: String,
}

fn writable() -> Writable {
    let pair = Pair::http("basic", Path::new(env!("CARGO_BIN_EXE_svelto")));
    pair.set_svnserve_conf("[general]\nanon-access = write\n");
    let (addr, root) = addr_and_path(&pair, 1);
    let repo = pair.subject_repo().to_path_buf();
    let name = repo
        .file_name()
        .expect("a repository name")
        .to_string_lossy()
        .into_owned();
    Writable {
        pair,
        addr,
        root,
        repo,
        name,
    }
}

/// Commits `text` as the file `path` of the repository `repo_name` through svn://.
fn put(pair: &Pair, repo_name: &str, path: &str, text: &str) {
    let file = tempfile::NamedTempFile::new_in(pair.dir()).expect("a file to put");
    std::fs::write(file.path(), text).expect("write the file to put");
    let file = file.path().to_string_lossy().into_owned();
    mucc(pair, &svn_url(pair, repo_name), &["put", &file, path]);
}

/// On one keep-alive connection: a commit through svn:// is seen by the next request at
/// once (the youngest revision is read again for every request naming none; a revision
/// past the one known is looked for), and after a second a repository moved into the
/// place of the one read before is the one answered, though it holds other trees at the
/// same revision numbers: a path it deleted is a 404, not what the connection found in the
/// old one's directories.
#[test]
fn a_connection_sees_commits_and_replaced_repositories() {
    let Writable {
        pair,
        addr,
        root,
        repo,
        name,
    } = writable();
    let h = head(&pair);
    let (readme, main_c) = ("trunk/README.txt", "trunk/src/new.c");
    let mut conn = KeepAlive::open(&addr);
    let mut get = |path: &str| {
        let (status, open, body) = conn.fetch(&format!("{root}/{path}"), &[]);
        assert!(open, "the connection was closed after {path}");
        (status, String::from_utf8_lossy(&body).into_owned())
    };
    let (status, original) = get(readme);
    assert_eq!(status, 200);
    assert_eq!(
        get(&format!("!svn/rvr/{h}/{readme}")),
        (200, original.clone())
    );
    let (status, main_text) = get(&format!("!svn/rvr/{h}/{main_c}"));
    assert_eq!(status, 200);

    // A copy of the repository as it is, served beside it under another name.
    let copy = repo.with_file_name(format!("{name}-copy"));
    Run::tool("cp").arg("-a").arg(&repo).arg(&copy).success();

    // A commit through svn:// between two requests of the connection, well within its
    // second: the next requests see it.
    put(&pair, &name, readme, "one\n");
    let next = h + 1;
    assert_eq!(get(readme), (200, "one\n".to_string()));
    assert_eq!(
        get(&format!("!svn/rvr/{next}/{readme}")),
        (200, "one\n".to_string())
    );
    // A file the commit did not change, found through trunk/src in the new revision.
    assert_eq!(
        get(&format!("!svn/rvr/{next}/{main_c}")),
        (200, main_text.clone())
    );

    // The copy's revision `next` deletes trunk/src/main.c instead; then it takes the
    // repository's place.
    mucc(
        &pair,
        &svn_url(&pair, &format!("{name}-copy")),
        &["rm", main_c],
    );
    let old = repo.with_file_name(format!("{name}-old"));
    std::fs::rename(&repo, &old).expect("move the repository away");
    std::fs::rename(&copy, &repo).expect("move the copy into its place");
    std::thread::sleep(Duration::from_millis(1100));
    let (status, _) = get(&format!("!svn/rvr/{next}/{main_c}"));
    assert_eq!(
        status, 404,
        "{main_c} in r{next} of the repository now in place"
    );
    assert_eq!(get(readme), (200, original.clone()));
    assert_eq!(
        get(&format!("!svn/rvr/{next}/{readme}")),
        (200, original.clone())
    );
    assert_eq!(
        get(&format!("!svn/rvr/{h}/{main_c}")),
        (200, main_text.clone())
    );

    // The repository gone: a 404 naming it, once the second is over.
    std::fs::rename(&repo, repo.with_file_name(format!("{name}-gone")))
        .expect("move the repository away");
    std::thread::sleep(Duration::from_millis(1100));
    let (status, body) = get(readme);
    assert_eq!(status, 404, "{body}");
}

/// On one keep-alive connection, requests alternating between two repositories with the
/// same trees up to a revision each get their own repository's answer: the connection keeps
/// the last repository it was admitted to (its place, handle and configuration, borrowed by
/// each request that takes them), keyed by the repository's name, and a request for the
/// other one is admitted afresh. The copy has one commit more, changing a file: the file's
/// text and a revision only the copy has tell which one answered.
#[test]
fn alternating_repositories_on_one_connection_answer_each_its_own() {
    let Writable {
        pair,
        addr,
        root,
        repo,
        name,
    } = writable();
    let h = head(&pair);
    let readme = "trunk/README.txt";
    let copy = repo.with_file_name(format!("{name}-copy"));
    Run::tool("cp").arg("-a").arg(&repo).arg(&copy).success();
    put(&pair, &format!("{name}-copy"), readme, "the copy's\n");
    let copy_root = format!(
        "{}/{name}-copy",
        &root[..root.rfind('/').expect("a parent")]
    );
    let next = h + 1;
    let mut conn = KeepAlive::open(&addr);
    let (status, _, original) = conn.fetch(&format!("{root}/{readme}"), &[]);
    assert_eq!(status, 200);
    let original = String::from_utf8_lossy(&original).into_owned();
    assert_ne!(original, "the copy's\n");
    for round in 0..3 {
        for (base, text, newest) in [
            (&root, original.as_str(), 404),
            (&copy_root, "the copy's\n", 200),
        ] {
            let (status, open, body) = conn.fetch(&format!("{base}/{readme}"), &[]);
            assert!(open, "the connection was closed (round {round}, {base})");
            assert_eq!(
                (status, String::from_utf8_lossy(&body).as_ref()),
                (200, text),
                "{base}/{readme} in round {round}"
            );
            let (status, _, _) = conn.fetch(&format!("{base}/!svn/rvr/{next}/{readme}"), &[]);
            assert_eq!(status, newest, "r{next} of {base} in round {round}");
            let (status, _, body) = conn.fetch(&format!("{base}/!svn/rvr/{h}/{readme}"), &[]);
            assert_eq!(
                (status, String::from_utf8_lossy(&body).as_ref()),
                (200, original.as_str()),
                "r{h} of {base} in round {round}"
            );
        }
    }
}

/// Many repositories under a small soft limit on open files: each repository the server has
/// opened keeps its files open for the next request, so under a soft limit of 1,024 (a
/// login shell's usual one) Subversion's suite, whose files leave a hundred-odd
/// repositories behind, saw every answer from then on fail with "Too many open files",
/// where Apache opens a repository per request. The server raises its soft limit to the
/// hard one at startup (and says so in its log): with a soft limit of 64, sixty
/// repositories are all listed.
#[test]
fn many_repositories_under_a_small_open_files_limit() {
    let mut server = Limited::start(60, "64:4096", None, 0);
    let port = server.http_port;
    let up = server.up(0);
    let mut failed = Vec::new();
    if up {
        for i in 0..60 {
            let out = Run::tool("svn")
                .args(["ls", "--non-interactive"])
                .arg(format!("http://127.0.0.1:{port}/r{i}/"))
                .output();
            if !out.success() {
                failed.push(format!("r{i}: {out}"));
            }
        }
    }
    let text = server.stop();
    assert!(up, "the server did not start:\n{text}");
    assert!(
        failed.is_empty(),
        "{} failed:\n{}",
        failed.len(),
        failed.join("\n")
    );
    assert!(
        text.contains("open files limit raised from 64 to 4096"),
        "no line about the limit in the log:\n{text}"
    );
}

/// More repositories than the server keeps open, under a hard limit on open files it cannot
/// raise (64: a thirty-second of it, 2 repositories, are kept open while idle): forty
/// repositories each committed to once (over svn:// and HTTP in turn, so their writers are
/// open too) and then listed three times over both protocols all answer, the least
/// recently used idle repositories being closed as others open; the server never holds
/// more than the limit's descriptors. (Before the bound every repository kept its five
/// descriptors, sixteen once committed to, and the fourth ran out.)
#[test]
fn more_repositories_than_open_handles_are_served_in_turn() {
    let n = 40;
    let svn_port = free_port();
    let mut server = Limited::start(
        n,
        "64:64",
        Some("[general]\nanon-access = write\n"),
        svn_port,
    );
    let http_port = server.http_port;
    let up = server.up(svn_port);
    let url = |i: usize, http: bool| {
        if http {
            format!("http://127.0.0.1:{http_port}/r{i}")
        } else {
            format!("svn://127.0.0.1:{svn_port}/r{i}")
        }
    };
    let mut failed = Vec::new();
    let mut most_fds = 0;
    if up {
        let fds = || server.fds();
        for i in 0..n {
            let out = Run::tool("svn")
                .args(["mkdir", "--non-interactive", "-m", "d"])
                .arg(format!("{}/d{i}", url(i, i % 2 == 1)))
                .output();
            if !out.success() {
                failed.push(format!("mkdir r{i}: {out}"));
            }
            most_fds = most_fds.max(fds());
        }
        for round in 0..3 {
            for i in 0..n {
                for http in [false, true] {
                    let out = Run::tool("svn")
                        .args(["ls", "--non-interactive"])
                        .arg(url(i, http))
                        .output();
                    if !out.success() || out.stdout_text() != format!("d{i}/\n") {
                        failed.push(format!("round {round}: ls {}: {out}", url(i, http)));
                    }
                }
                most_fds = most_fds.max(fds());
            }
        }
    }
    let text = server.stop();
    assert!(up, "the server did not start:\n{text}");
    assert!(
        failed.is_empty(),
        "{} failed:\n{}\n{text}",
        failed.len(),
        failed.join("\n")
    );
    assert!(most_fds < 64, "{most_fds} descriptors open");
}

/// Keep-alive connections that went idle after a request do not keep their repositories
/// open: under a limit of 64 open files (2 idle repositories kept open), four connections
/// each read one repository and stay open; two seconds later a fifth repository is read,
/// and the server then holds files of at most three repositories (before, an idle
/// connection's kept admission counted its repository as in use, and all five stayed open;
/// a sixth or seventh then failed with "Too many open files").
#[test]
fn idle_keep_alive_connections_do_not_keep_their_repositories_open() {
    let n = 5;
    let mut server = Limited::start(n, "64:64", None, 0);
    let root = server.root();
    let port = server.http_port;
    let addr = format!("127.0.0.1:{port}");
    let up = server.up(0);
    // The repositories the server holds a file of, by their directory names.
    let open_repos = |pid: u32| {
        let mut names = std::collections::BTreeSet::new();
        for e in std::fs::read_dir(format!("/proc/{pid}/fd"))
            .into_iter()
            .flatten()
        {
            let Ok(target) = std::fs::read_link(e.expect("fd entry").path()) else {
                continue;
            };
            if let Ok(rest) = target.strip_prefix(&root) {
                if let Some(first) = rest.components().next() {
                    names.insert(first.as_os_str().to_string_lossy().into_owned());
                }
            }
        }
        names
    };
    let mut statuses = Vec::new();
    let mut held = Vec::new();
    let (mut before, mut after) = Default::default();
    if up {
        for i in 0..n - 1 {
            let mut c = KeepAlive::open(&addr);
            let (status, open) = c.get(&format!("/r{i}/"), &[]);
            statuses.push((i, status, open));
            held.push(c);
        }
        before = open_repos(server.child.id());
        std::thread::sleep(Duration::from_millis(2500));
        let mut c = KeepAlive::open(&addr);
        statuses.push((n - 1, c.get(&format!("/r{}/", n - 1), &[]).0, true));
        after = open_repos(server.child.id());
    }
    let text = server.stop();
    assert!(up, "the server did not start:\n{text}");
    assert!(
        statuses.iter().all(|&(_, s, open)| s == 200 && open),
        "{statuses:?}\n{text}"
    );
    assert!(
        after.len() <= 3,
        "still open: {after:?} (after the first four requests: {before:?})"
    );
    assert!(after.contains(&format!("r{}", n - 1)), "{after:?}");
    drop(held);
}

/// A `svelto serve` of `n` new repositories `r0`, `r1`... under `prlimit --nofile=LIMITS`,
/// over svn:// on `svn_port` (0: any) and HTTP on a free port, each repository with
/// `conf` as its svnserve.conf when given; killed when dropped (a failed request panics).
struct Limited {
    child: std::process::Child,
    dir: tempfile::TempDir,
    http_port: u16,
}

impl Limited {
    fn start(n: usize, limits: &str, conf: Option<&str>, svn_port: u16) -> Limited {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("root");
        std::fs::create_dir(&root).expect("mkdir root");
        let bin = env!("CARGO_BIN_EXE_svelto");
        for i in 0..n {
            let repo = root.join(format!("r{i}"));
            Run::new(bin).args(["admin", "create"]).arg(&repo).success();
            if let Some(conf) = conf {
                std::fs::write(repo.join("conf/svnserve.conf"), conf).expect("svnserve.conf");
            }
        }
        let http_port = free_port();
        let child = std::process::Command::new("prlimit")
            .arg(format!("--nofile={limits}"))
            .arg("--")
            .arg(bin)
            .args(["serve", "-d", "--foreground", "--listen-host", "127.0.0.1"])
            .args(["--listen-port", &svn_port.to_string(), "--log-file"])
            .arg(dir.path().join("serve.log"))
            .arg("-r")
            .arg(&root)
            .arg("--http-listen")
            .arg(format!("127.0.0.1:{http_port}"))
            .spawn()
            .expect("start prlimit svelto serve (prlimit is util-linux's)");
        Limited {
            child,
            dir,
            http_port,
        }
    }

    /// Whether both ports answer within ten seconds.
    fn up(&self, svn_port: u16) -> bool {
        (0..100).any(|_| {
            std::thread::sleep(Duration::from_millis(100));
            std::net::TcpStream::connect(("127.0.0.1", self.http_port)).is_ok()
                && (svn_port == 0 || std::net::TcpStream::connect(("127.0.0.1", svn_port)).is_ok())
        })
    }

    fn root(&self) -> std::path::PathBuf {
        self.dir.path().join("root")
    }

    /// The number of descriptors the server holds.
    fn fds(&self) -> usize {
        std::fs::read_dir(format!("/proc/{}/fd", self.child.id()))
            .map(|d| d.count())
            .unwrap_or(0)
    }

    /// Stops the server; its log.
    fn stop(&mut self) -> String {
        let _ = self.child.kill();
        let _ = self.child.wait();
        std::fs::read_to_string(self.dir.path().join("serve.log")).unwrap_or_default()
    }
}

impl Drop for Limited {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A port nothing listens on now.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port()
}
