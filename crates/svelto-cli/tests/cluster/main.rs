//! `svelto serve --cluster` front ends over the real components: three etcd members
//! (Debian's etcd-server) and SeaweedFS's S3 gateway (weed), started on 127.0.0.1 by
//! `svelto_testkit::cluster` (they fail loudly when missing), with the stock `svn`,
//! `svnmucc`, `svnrdump` and `etcdctl` clients.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use svelto_testkit::cluster::{EtcdCluster, S3Server, S3_ACCESS_KEY, S3_REGION, S3_SECRET_KEY};
use svelto_testkit::{tempdir, Run, Svelto};

mod backend;
mod balancer;
mod chunks;
mod differential;
mod faults;
mod fences;
mod front_end_dir;
mod gc;
mod https_balancer;
mod lifecycle;
mod many_locks;
mod post_commit;
mod probe;
mod relay;
mod restore;
#[allow(dead_code)]
#[path = "../serve/sessions.rs"]
mod sessions;
mod unavailable;

fn svelto_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_svelto"))
}

/// Writes front end `id`'s cluster file (its own cache directory) under `dir`.
/// `extra` are further lines of the file.
fn cluster_file(dir: &Path, etcd: &EtcdCluster, s3: &S3Server, id: &str, extra: &str) -> PathBuf {
    let credentials = dir.join("s3.credentials");
    std::fs::write(
        &credentials,
        format!(
            "[default]\naws_access_key_id = {S3_ACCESS_KEY}\naws_secret_access_key = {S3_SECRET_KEY}\n"
        ),
    )
    .expect("credentials");
    let file = dir.join(format!("{id}.cluster"));
    std::fs::write(
        &file,
        format!(
            "# front end {id}\netcd = {}\ncluster = test\ns3-endpoint = {}\ns3-bucket = {}\n\
             s3-region = {S3_REGION}\ns3-credentials = s3.credentials\ncache = cache-{id}\n\
             front-end = {id}\nrequest-timeout = 3\n{extra}",
            etcd.endpoints().join(", "),
            s3.endpoint(),
            s3.bucket()
        ),
    )
    .expect("cluster file");
    file
}

/// A front end's root: `ROOT/NAME/conf/svnserve.conf` lets anyone write.
fn root_with_conf(dir: &Path, id: &str, name: &str) -> PathBuf {
    let root = dir.join(format!("root-{id}"));
    let conf = root.join(name).join("conf");
    std::fs::create_dir_all(&conf).expect("conf dir");
    std::fs::create_dir_all(root.join(name).join("hooks")).expect("hooks dir");
    std::fs::write(
        conf.join("svnserve.conf"),
        "[general]\nanon-access = write\n",
    )
    .expect("svnserve.conf");
    root
}

/// Writes an executable hook script.
fn hook(root: &Path, name: &str, which: &str, script: &str) {
    use std::os::unix::fs::PermissionsExt;
    let path = root.join(name).join("hooks").join(which);
    std::fs::write(&path, script).expect("hook");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

fn svn(args: &[&str]) -> String {
    Run::tool("svn")
        .args(args)
        .args(["--non-interactive", "--no-auth-cache"])
        .success()
        .stdout_text()
}

fn svnmucc(message: &str, args: &[&str]) -> svelto_testkit::Outcome {
    Run::tool("svnmucc")
        .args(["--non-interactive", "--no-auth-cache", "-m", message])
        .args(args)
        .timeout(Duration::from_secs(60))
        .output()
}

/// Three etcd members, weed, repository `proj` created, and `n` front ends (a, b, c...).
struct Rig {
    dir: tempfile::TempDir,
    etcd: EtcdCluster,
    _s3: S3Server,
    files: Vec<PathBuf>,
    roots: Vec<PathBuf>,
}

const IDS: [&str; 3] = ["a", "b", "c"];

impl Rig {
    /// `a_extra`: further lines of front end A's cluster file.
    fn start(n: usize, a_extra: &str) -> (Rig, Vec<Svelto>) {
        Rig::start_with(n, &[a_extra])
    }

    /// `extra[i]`: further lines of front end `i`'s cluster file (none past its end).
    fn start_with(n: usize, extra: &[&str]) -> (Rig, Vec<Svelto>) {
        let rig = Rig::prepare(n, extra);
        let servers = (0..n).map(|i| rig.serve(i)).collect();
        (rig, servers)
    }

    /// [`Rig::start_with`] without starting the front ends.
    fn prepare(n: usize, extra: &[&str]) -> Rig {
        let mut dir = tempdir();
        if std::env::var_os("SVELTO_KEEP_RIG").is_some() {
            // For a post-mortem: the front ends' logs and caches stay.
            dir.disable_cleanup(true);
            eprintln!("rig kept in {}", dir.path().display());
        }
        let etcd = EtcdCluster::start(dir.path(), 3);
        let s3 = S3Server::start(dir.path(), "svelto");
        let files: Vec<PathBuf> = IDS[..n]
            .iter()
            .enumerate()
            .map(|(i, id)| {
                let extra = extra.get(i).copied().unwrap_or("");
                cluster_file(dir.path(), &etcd, &s3, id, extra)
            })
            .collect();
        let started = Instant::now();
        Run::new(svelto_bin())
            .args(["admin", "create", "--cluster"])
            .arg(&files[0])
            .arg("proj")
            .success();
        eprintln!("admin create --cluster: {:?}", started.elapsed());
        let roots: Vec<PathBuf> = IDS[..n]
            .iter()
            .map(|id| root_with_conf(dir.path(), id, "proj"))
            .collect();
        Rig {
            dir,
            etcd,
            _s3: s3,
            files,
            roots,
        }
    }

    /// Starts front end `i` serving HTTP too (its port the HTTP side's).
    fn serve_http(&self, i: usize) -> Svelto {
        let log = self.dir.path().join(format!("serve-{}.log", IDS[i]));
        let file = self.files[i].to_str().expect("a UTF-8 path");
        Svelto::start_http(
            &svelto_bin(),
            &self.roots[i],
            &log,
            "",
            &["--cluster", file],
        )
    }

    /// Starts front end `i` (again, on the same root and cache).
    fn serve(&self, i: usize) -> Svelto {
        self.serve_with(i, &[])
    }

    /// [`Rig::serve`] with more flags of `svelto serve`.
    fn serve_with(&self, i: usize, flags: &[&str]) -> Svelto {
        let log = self.dir.path().join(format!("serve-{}.log", IDS[i]));
        let mut all = vec!["--cluster", self.files[i].to_str().expect("a UTF-8 path")];
        all.extend_from_slice(flags);
        Svelto::start_with(&svelto_bin(), &self.roots[i], &log, &all)
    }

    /// Every front end's `proj` lets user alice (password apw) in, besides anonymous
    /// writers (locks need a user).
    fn let_alice_in(&self) {
        for root in &self.roots {
            let conf = root.join("proj").join("conf");
            std::fs::write(
                conf.join("svnserve.conf"),
                "[general]\nanon-access = write\nauth-access = write\npassword-db = passwd\n",
            )
            .expect("svnserve.conf");
            std::fs::write(conf.join("passwd"), "[users]\nalice = apw\n").expect("passwd");
        }
    }

    /// The front end holding the writer lease of `proj`, as etcd says.
    fn writer(&self) -> Option<String> {
        let out = Run::tool("etcdctl")
            .arg(format!("--endpoints={}", self.etcd.endpoints().join(",")))
            .args([
                "--command-timeout=3s",
                "get",
                "--print-value-only",
                "/svelto/test/repos/proj/writer",
            ])
            .output();
        let text = out.stdout_text();
        let text = text.trim();
        (out.success() && !text.is_empty()).then(|| text.to_owned())
    }
}

/// `svnrdump dump` of `url` with what differs between two repositories built by the same
/// commits at other times (the UUID, `svn:date` values) blanked.
fn dump_without_dates(url: &str) -> String {
    let out = Run::tool("svnrdump")
        .args(["dump", "-q", "--non-interactive", url])
        .success();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut lines = text.lines().peekable();
    let mut kept = Vec::new();
    while let Some(line) = lines.next() {
        if line.starts_with("UUID: ") {
            continue;
        }
        kept.push(line.to_owned());
        if line == "svn:date" {
            // V length, then the value: blanked.
            let len = lines.next().unwrap_or_default();
            let _ = lines.next();
            kept.push(len.to_owned());
            kept.push("(date)".to_owned());
        }
    }
    kept.join("\n")
}

#[test]
fn three_front_ends_commit_update_hooks_and_equal_one_machine() {
    let (rig, mut servers) = Rig::start(3, "");
    let dir = rig.dir.path();
    // A second create of the same name is refused, naming it.
    let again = Run::new(svelto_bin())
        .args(["admin", "create", "--cluster"])
        .arg(&rig.files[1])
        .arg("proj")
        .failure();
    assert!(
        again
            .stderr_text()
            .contains("'proj' already exists in the cluster"),
        "{}",
        again.stderr_text()
    );
    // One machine, given the same commits: the reference.
    let single_root = dir.join("single");
    std::fs::create_dir_all(&single_root).expect("single root");
    Run::new(svelto_bin())
        .args(["admin", "create"])
        .arg(single_root.join("proj"))
        .success();
    std::fs::write(
        single_root.join("proj/conf/svnserve.conf"),
        "[general]\nanon-access = write\n",
    )
    .expect("svnserve.conf");
    let single = Svelto::start_with(
        &svelto_bin(),
        &single_root,
        &dir.join("serve-single.log"),
        &[],
    );
    let url = |i: usize| servers[i].url("proj");
    let one = single.url("proj");

    // `svn commit` from a working copy of A; a working copy of B updates to it at once.
    let (wc_a, wc_b, wc_one) = (dir.join("wc-a"), dir.join("wc-b"), dir.join("wc-one"));
    svn(&["checkout", &url(0), wc_a.to_str().expect("a UTF-8 path")]);
    svn(&["checkout", &url(1), wc_b.to_str().expect("a UTF-8 path")]);
    svn(&["checkout", &one, wc_one.to_str().expect("a UTF-8 path")]);
    for wc in [&wc_a, &wc_one] {
        std::fs::create_dir_all(wc.join("trunk/src")).expect("trunk");
        std::fs::write(wc.join("trunk/README"), "a cluster repository\n").expect("README");
        std::fs::write(
            wc.join("trunk/src/main.c"),
            "int main(void) { return 0; }\n",
        )
        .expect("main.c");
        let wc = wc.to_str().expect("a UTF-8 path");
        svn(&["add", &format!("{wc}/trunk")]);
        svn(&[
            "propset",
            "svn:eol-style",
            "native",
            &format!("{wc}/trunk/README"),
        ]);
        let out = svn(&["commit", "-m", "the first files", wc]);
        assert!(out.contains("Committed revision 1."), "{out}");
    }
    let started = Instant::now();
    let up = svn(&["update", wc_b.to_str().expect("a UTF-8 path")]);
    eprintln!("update through B after A's commit: {:?}", started.elapsed());
    assert!(
        up.contains("At revision 1.") || up.contains("Updated to revision 1."),
        "{up}"
    );
    assert_eq!(
        std::fs::read_to_string(wc_b.join("trunk/src/main.c")).expect("main.c through B"),
        "int main(void) { return 0; }\n"
    );
    let log = svn(&["log", "-v", "-r", "HEAD", &url(1)]);
    assert!(
        log.contains("the first files") && log.contains("A /trunk/src/main.c"),
        "{log}"
    );
    assert_eq!(
        svn(&["cat", &format!("{}/trunk/README", url(2))]),
        "a cluster repository\n"
    );

    // svnmucc commits alternating between A and B (the lease moves each time), each
    // seen at once through the other; the same commits on the one machine.
    let text = dir.join("text");
    for round in 2..=7u64 {
        let (w, r) = if round % 2 == 0 { (0, 1) } else { (1, 0) };
        let body = format!("round {round} through front end {w}\n");
        std::fs::write(&text, &body).expect("text");
        let message = format!("round {round}");
        let mut ops: Vec<String> = vec![
            "put".into(),
            text.to_str().expect("a UTF-8 path").into(),
            "trunk/file.txt".into(),
        ];
        if round % 3 == 0 {
            ops.extend(["cp", "HEAD", "trunk", &format!("branches-{round}")].map(String::from));
        }
        if round == 5 {
            ops.extend(["propset", "owner", "b", "trunk/src"].map(String::from));
            ops.extend(["rm", "branches-3"].map(String::from));
        }
        for base in [url(w), one.clone()] {
            let mut args = vec!["-U".to_owned(), base];
            args.extend(ops.iter().cloned());
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let started = Instant::now();
            let out = svnmucc(&message, &args);
            assert!(out.success(), "{}", out.stderr_text());
            assert!(
                out.stdout_text().contains(&format!("r{round} committed")),
                "{}",
                out.stdout_text()
            );
            eprintln!("round {round}: {:?} ({})", started.elapsed(), args[1]);
        }
        assert_eq!(svn(&["cat", &format!("{}/trunk/file.txt", url(r))]), body);
        let log = svn(&["log", "-q", "-r", "HEAD", &url(r)]);
        assert!(log.contains(&format!("r{round} |")), "{log}");
        let info = svn(&["info", "--show-item", "revision", &url(2)]);
        assert_eq!(info.trim(), round.to_string());
    }
    let up = svn(&["update", wc_b.to_str().expect("a UTF-8 path")]);
    assert!(up.contains("Updated to revision 7."), "{up}");
    assert_eq!(
        std::fs::read_to_string(wc_b.join("trunk/file.txt")).expect("file.txt"),
        "round 7 through front end 1\n"
    );

    // Through C, the history equals the one machine's (svnrdump's dump, dates and UUID
    // aside: the commits were made twice), and so do checkouts.
    let (through_c, reference) = (dump_without_dates(&url(2)), dump_without_dates(&one));
    assert!(through_c.contains("Node-path: branches-6"), "{through_c}");
    assert_eq!(
        through_c, reference,
        "svnrdump dump through C vs one machine"
    );
    let (co_c, co_one) = (dir.join("co-c"), dir.join("co-one"));
    svn(&["export", &url(2), co_c.to_str().expect("a UTF-8 path")]);
    svn(&["export", &one, co_one.to_str().expect("a UTF-8 path")]);
    let diff = Run::tool("diff")
        .args(["-r"])
        .arg(&co_c)
        .arg(&co_one)
        .output();
    assert!(diff.success(), "{}", diff.stdout_text());

    // Hooks come from the front end's ROOT/NAME/hooks, REPOS being ROOT/NAME: C's
    // pre-commit refuses, nothing is published; B (without one) commits.
    let said = dir.join("pre-commit.args");
    hook(
        &rig.roots[2],
        "proj",
        "pre-commit",
        &format!(
            "#!/bin/sh\necho \"$1 $2\" > {}\n{} look log -t \"$2\" {} >> {}\n\
             echo 'C refuses: no commits today' >&2\nexit 1\n",
            said.display(),
            svelto_bin().display(),
            dir.join("cache-c/proj").display(),
            said.display()
        ),
    );
    std::fs::write(&text, "refused\n").expect("text");
    let refused = svnmucc(
        "refused",
        &[
            "put",
            text.to_str().expect("a UTF-8 path"),
            &format!("{}/trunk/no.txt", url(2)),
        ],
    );
    assert!(!refused.success(), "C's pre-commit refuses");
    assert!(
        refused
            .stderr_text()
            .contains("C refuses: no commits today"),
        "{}",
        refused.stderr_text()
    );
    let args = std::fs::read_to_string(&said).expect("the hook ran");
    assert!(
        args.starts_with(&format!("{} ", rig.roots[2].join("proj").display())),
        "REPOS is C's ROOT/NAME: {args}"
    );
    // The transaction is staged in C's cache, where `svelto look -t` reads it.
    assert!(
        args.ends_with("\nrefused\n"),
        "svelto look log -t TXN CACHE/proj: {args}"
    );
    assert_eq!(
        svn(&["info", "--show-item", "revision", &url(0)]).trim(),
        "7",
        "nothing published"
    );
    let out = svnmucc(
        "through B",
        &[
            "put",
            text.to_str().expect("a UTF-8 path"),
            &format!("{}/trunk/yes.txt", url(1)),
        ],
    );
    assert!(
        out.stdout_text().contains("r8 committed"),
        "{}",
        out.stderr_text()
    );

    // Revision property changes: B has no pre-revprop-change hook, so B refuses as
    // svnserve does; A's allows, and its post-revprop-change hook runs once, after the
    // change is published. B and C see it at once; it survives kill -9 of A right after
    // the answer.
    let refused = Run::tool("svn")
        .args([
            "propset",
            "--revprop",
            "-r",
            "1",
            "svn:log",
            "not through B",
        ])
        .arg(servers[1].url("proj"))
        .args(["--non-interactive"])
        .failure();
    assert!(
        refused
            .stderr_text()
            .contains("Repository has not been enabled to accept revision propchanges"),
        "{}",
        refused.stderr_text()
    );
    let post = dir.join("post-revprop-change.args");
    hook(
        &rig.roots[0],
        "proj",
        "pre-revprop-change",
        "#!/bin/sh
[ \"$4\" = svn:log ] || { echo \"only svn:log, not $4\" >&2; exit 1; }\n",
    );
    hook(
        &rig.roots[0],
        "proj",
        "post-revprop-change",
        &format!(
            "#!/bin/sh\necho \"$2 $3 $4 $5\" >> {}\ncat >> {}\necho >> {}\n",
            post.display(),
            post.display(),
            post.display()
        ),
    );
    let hooked = Run::tool("svn")
        .args(["propset", "--revprop", "-r", "1", "owner", "x"])
        .arg(servers[0].url("proj"))
        .args(["--non-interactive"])
        .failure();
    assert!(
        hooked.stderr_text().contains("only svn:log, not owner"),
        "{}",
        hooked.stderr_text()
    );
    for (i, message) in ["the first files, amended", "the first files, amended again"]
        .iter()
        .enumerate()
    {
        let started = Instant::now();
        let out = svn(&[
            "propset",
            "--revprop",
            "-r",
            "1",
            "svn:log",
            message,
            &servers[0].url("proj"),
        ]);
        assert!(
            out.contains("property 'svn:log' set on repository revision 1"),
            "{out}"
        );
        let set = started.elapsed();
        let log = svn(&["log", "-r", "1", &servers[1].url("proj")]);
        eprintln!(
            "svn:log of r1 changed through A in {set:?}, read through B {:?} after",
            started.elapsed() - set
        );
        assert!(log.contains(message), "B sees the change at once: {log}");
        assert_eq!(
            svn(&[
                "propget",
                "--revprop",
                "-r",
                "1",
                "svn:log",
                &servers[2].url("proj")
            ])
            .trim(),
            *message,
            "C too"
        );
        if i == 0 {
            // The change was answered: kill -9 of A loses nothing.
            servers[0].kill_hard();
            servers[0] = rig.serve(0);
            assert_eq!(
                svn(&[
                    "propget",
                    "--revprop",
                    "-r",
                    "1",
                    "svn:log",
                    &servers[0].url("proj")
                ])
                .trim(),
                *message,
                "A restarted on its cache"
            );
        }
    }
    let ran = std::fs::read_to_string(&post).expect("post-revprop-change ran");
    assert_eq!(
        ran, "1  svn:log M\nthe first files\n1  svn:log M\nthe first files, amended\n",
        "post-revprop-change: once per change, with the old value on stdin"
    );
    // The one machine given the same commit and change: the dumps are equal again.
    let out = svnmucc(
        "through B",
        &[
            "put",
            text.to_str().expect("a UTF-8 path"),
            &format!("{one}/trunk/yes.txt"),
        ],
    );
    assert!(
        out.stdout_text().contains("r8 committed"),
        "{}",
        out.stderr_text()
    );
    hook(
        &single_root,
        "proj",
        "pre-revprop-change",
        "#!/bin/sh\nexit 0\n",
    );
    svn(&[
        "propset",
        "--revprop",
        "-r",
        "1",
        "svn:log",
        "the first files, amended again",
        &one,
    ]);
    assert_eq!(
        dump_without_dates(&servers[1].url("proj")),
        dump_without_dates(&one),
        "svnrdump dump through B vs one machine after the revision property changes"
    );
    svn(&[
        "propset",
        "--revprop",
        "-r",
        "1",
        "svn:log",
        "\u{e9}t\u{e9}",
        &servers[0].url("proj"),
    ]);
    assert!(svn(&["log", "-r", "1", &servers[2].url("proj")]).contains("\u{e9}t\u{e9}"));
    drop(servers);
}

/// What the committers saw: each acknowledged commit's message, revision and time.
type Acks = Arc<Mutex<Vec<(String, u64, Instant)>>>;

/// Where a committer's or changer's attempt `n` goes: a repository URL.
type Route = Arc<dyn Fn(u64) -> String + Send + Sync>;

/// Every attempt through `url`.
fn fixed(url: &str) -> Route {
    let url = url.to_owned();
    Arc::new(move |_| url.clone())
}

/// Attempt `n` through `urls[(first + n) % len]`, read when it starts (a front end
/// restarted listens on another port: its entry is replaced).
fn rotating(urls: &Arc<Mutex<Vec<String>>>, first: usize) -> Route {
    let urls = urls.clone();
    Arc::new(move |n| {
        let urls = urls.lock().expect("the URLs");
        urls[(first + usize::try_from(n).unwrap_or(0)) % urls.len()].clone()
    })
}

/// Committers, `svnmucc put` in a loop, committer `i` through `routes[i]`, each commit's
/// message unique; acknowledged ones (the client printed `rN committed`) are recorded;
/// each committer answers the errors of the others.
fn committers(
    routes: Vec<Route>,
    dir: &Path,
    stop: &Arc<AtomicBool>,
    pause: &Arc<AtomicBool>,
    acks: &Acks,
    running: &Arc<AtomicUsize>,
) -> Vec<std::thread::JoinHandle<Vec<String>>> {
    routes
        .into_iter()
        .enumerate()
        .map(|(i, route)| {
            let (stop, pause, acks) = (stop.clone(), pause.clone(), acks.clone());
            let running = running.clone();
            let text = dir.join(format!("committer-{i}"));
            std::thread::spawn(move || {
                let mut failures = Vec::new();
                let mut n = 0;
                while !stop.load(Ordering::SeqCst) {
                    if pause.load(Ordering::SeqCst) {
                        std::thread::sleep(Duration::from_millis(20));
                        continue;
                    }
                    n += 1;
                    running.fetch_add(1, Ordering::SeqCst);
                    let url = route(n);
                    let message = format!("committer {i} commit {n}");
                    std::fs::write(&text, &message).expect("text");
                    let out = svnmucc(
                        &message,
                        &[
                            "put",
                            text.to_str().expect("a UTF-8 path"),
                            &format!("{url}/c{i}.txt"),
                        ],
                    );
                    running.fetch_sub(1, Ordering::SeqCst);
                    let said = out.stdout_text();
                    let rev = said
                        .trim()
                        .strip_prefix('r')
                        .and_then(|s| s.split(' ').next())
                        .and_then(|s| s.parse::<u64>().ok());
                    match (out.success(), rev) {
                        (true, Some(rev)) => acks.lock().expect("the acknowledgements").push((
                            message,
                            rev,
                            Instant::now(),
                        )),
                        _ => {
                            failures.push(out.stderr_text().trim().to_owned());
                            eprintln!("committer {i}: {}", out.stderr_text().trim());
                            std::thread::sleep(Duration::from_millis(100));
                        }
                    }
                }
                failures
            })
        })
        .collect()
}

/// [`committers`] through `routes`, never paused: the flag that stops them, their
/// acknowledgements and their threads.
fn committing(
    routes: Vec<Route>,
    dir: &Path,
) -> (
    Arc<AtomicBool>,
    Acks,
    Vec<std::thread::JoinHandle<Vec<String>>>,
) {
    let (stop, pause) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicBool::new(false)),
    );
    let (acks, running): (Acks, _) = (Arc::default(), Arc::new(AtomicUsize::new(0)));
    let threads = committers(routes, dir, &stop, &pause, &acks, &running);
    (stop, acks, threads)
}

/// Three front ends whose pre-revprop-change hooks allow every change, and r1..=r3
/// committed through A (`seed.txt` holding "seed N", log message "seed N"): the rig, the
/// front ends and their URLs.
fn seeded_rig() -> (Rig, Vec<Svelto>, Vec<String>) {
    seeded_rig_with("", false)
}

/// [`seeded_rig`] with `extra` lines in each front end's cluster file and, with
/// `post_commit`, post-commit hooks that log each run in `post-commit.log` of the rig's
/// directory ([`post_commit::logging_post_commit_hooks`]) from r1 on.
fn seeded_rig_with(extra: &str, post_commit: bool) -> (Rig, Vec<Svelto>, Vec<String>) {
    let (rig, servers) = Rig::start_with(3, &[extra, extra, extra]);
    for root in &rig.roots {
        hook(root, "proj", "pre-revprop-change", "#!/bin/sh\nexit 0\n");
    }
    if post_commit {
        let dir = rig.dir.path();
        post_commit::logging_post_commit_hooks(
            &rig,
            &dir.join("post-commit.log"),
            &dir.join("hold"),
        );
    }
    let urls: Vec<String> = servers.iter().map(|s| s.url("proj")).collect();
    for i in 1..=3u64 {
        let (rev, _) = put(rig.dir.path(), &urls[0], "seed.txt", &format!("seed {i}\n"));
        assert_eq!(rev, i);
    }
    (rig, servers, urls)
}

/// Every acknowledged commit is in the log through `url` at its revision, each message
/// once, the revisions 1..=youngest without a gap.
fn check_log(url: &str, acks: &Acks) -> u64 {
    let log = svn(&["log", "--xml", "-r", "1:HEAD", url]);
    let mut by_message: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    let mut revs = Vec::new();
    for entry in log.split("<logentry").skip(1) {
        let rev: u64 = entry
            .split("revision=\"")
            .nth(1)
            .and_then(|s| s.split('"').next())
            .and_then(|s| s.parse().ok())
            .expect("a revision");
        let msg = entry
            .split("<msg>")
            .nth(1)
            .and_then(|s| s.split("</msg>").next())
            .unwrap_or_default()
            .to_owned();
        revs.push(rev);
        by_message.entry(msg).or_default().push(rev);
    }
    let youngest = *revs.last().expect("revisions");
    assert_eq!(revs, (1..=youngest).collect::<Vec<_>>(), "no revision lost");
    for (message, revs) in &by_message {
        assert_eq!(revs.len(), 1, "{message} published once: {revs:?}");
    }
    for (message, rev, _) in acks.lock().expect("the acknowledgements").iter() {
        assert_eq!(
            by_message.get(message),
            Some(&vec![*rev]),
            "acknowledged '{message}' as r{rev}"
        );
    }
    youngest
}

#[test]
fn the_writer_killed_or_etcd_majority_lost_loses_no_acknowledged_commit() {
    // A keeps the writer lease 3 s after a commit: killed in that time, it holds it (no
    // other front end asks for it meanwhile: the committers pause).
    let (mut rig, mut servers) = Rig::start(3, "writer-idle-ms = 3000\n");
    let dir = rig.dir.path().to_path_buf();
    let url = |servers: &[Svelto], i: usize| servers[i].url("proj");
    let text = dir.join("text");
    std::fs::write(&text, "first\n").expect("text");
    let out = svnmucc(
        "first",
        &[
            "put",
            text.to_str().expect("a UTF-8 path"),
            &format!("{}/first.txt", url(&servers, 1)),
        ],
    );
    assert!(out.success(), "{}", out.stderr_text());

    // kill -9 of the front end holding the writer lease while four committers run
    // through the other two, twice.
    let acks: Acks = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let others = vec![
        fixed(&url(&servers, 1)),
        fixed(&url(&servers, 2)),
        fixed(&url(&servers, 1)),
        fixed(&url(&servers, 2)),
    ];
    let pause = Arc::new(AtomicBool::new(false));
    let running = Arc::new(AtomicUsize::new(0));
    let workers = committers(others, &dir, &stop, &pause, &acks, &running);
    let mut takeovers = Vec::new();
    for kill in 1..=2 {
        std::thread::sleep(Duration::from_millis(1500));
        // A commit through A makes it the writer (the committers paused, so that B or C
        // give the lease back); A keeps it 3 s, and is killed while it holds it, then the
        // committers resume and wait for its lease to end.
        pause.store(true, Ordering::SeqCst);
        // The committers' commits under way end first: one waiting for the lease would ask
        // A for it, and A, idle, would give it back before the kill.
        let paused = Instant::now();
        while running.load(Ordering::SeqCst) > 0 {
            assert!(
                paused.elapsed() < Duration::from_secs(60),
                "the committers' commits did not end"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        let held = (0..5).find_map(|attempt| {
            // Each attempt's message its own: several may be acknowledged.
            let message = format!("through A before kill {kill}, attempt {attempt}");
            std::fs::write(&text, format!("through A {kill}\n")).expect("text");
            let out = svnmucc(
                &message,
                &[
                    "put",
                    text.to_str().expect("a UTF-8 path"),
                    &format!("{}/a.txt", url(&servers, 0)),
                ],
            );
            let said = out.stdout_text();
            if let Some(rev) = said
                .trim()
                .strip_prefix('r')
                .and_then(|s| s.split(' ').next())
                .and_then(|s| s.parse::<u64>().ok())
            {
                acks.lock()
                    .expect("the acknowledgements")
                    .push((message, rev, Instant::now()));
                if rig.writer().as_deref() == Some("a") {
                    return Some(rev);
                }
            }
            None
        });
        let rev = held.expect("A held the writer lease after its commit");
        let before = acks.lock().expect("the acknowledgements").len();
        // Killed before the committers resume: they would ask A for the lease, and A,
        // idle, would give it back at once (an idle writer hands over on request).
        let killed = Instant::now();
        servers[0].kill_hard();
        pause.store(false, Ordering::SeqCst);
        let next = loop {
            if let Some((_, r, at)) = acks.lock().expect("the acknowledgements")[before..]
                .iter()
                .find(|(_, _, at)| *at > killed)
            {
                break (*r, at.duration_since(killed));
            }
            assert!(
                killed.elapsed() < Duration::from_secs(30),
                "no commit accepted 30 s after the writer's kill"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        eprintln!(
            "kill {kill}: A killed holding the lease after r{rev}; r{} accepted {:?} later",
            next.0, next.1
        );
        takeovers.push(next.1);
        assert!(
            next.1 < Duration::from_secs(8),
            "the next commit within seconds: {:?}",
            next.1
        );
        servers[0] = rig.serve(0);
    }
    std::thread::sleep(Duration::from_millis(500));
    stop.store(true, Ordering::SeqCst);
    let failures: usize = workers
        .into_iter()
        .map(|w| w.join().expect("committer").len())
        .sum();
    let youngest = check_log(&url(&servers, 0), &acks);
    eprintln!(
        "writer kills: {} acknowledged commits, {failures} refused or broken, r{youngest}; takeovers {takeovers:?}",
        acks.lock().expect("the acknowledgements").len()
    );
    assert!(
        acks.lock().expect("the acknowledgements").len() >= 10,
        "the committers got commits through"
    );

    // The etcd majority lost: commits refused naming etcd, reads of what exists go on
    // (at the newest head each front end had: C reads once before, so it has r{youngest}).
    assert_eq!(
        svn(&["info", "--show-item", "revision", &url(&servers, 2)]).trim(),
        youngest.to_string()
    );
    rig.etcd.kill(0);
    rig.etcd.kill(1);
    std::fs::write(&text, "no majority\n").expect("text");
    let started = Instant::now();
    let refused = svnmucc(
        "no majority",
        &[
            "put",
            text.to_str().expect("a UTF-8 path"),
            &format!("{}/first.txt", url(&servers, 1)),
        ],
    );
    eprintln!(
        "without etcd's majority, after {:?}: {}",
        started.elapsed(),
        refused.stderr_text().trim()
    );
    assert!(!refused.success());
    assert!(
        refused.stderr_text().contains("etcd"),
        "{}",
        refused.stderr_text()
    );
    let started = Instant::now();
    assert_eq!(
        svn(&["cat", "-r", "1", &format!("{}/first.txt", url(&servers, 2))]),
        "first\n"
    );
    let log = svn(&["log", "-q", &url(&servers, 2)]);
    assert!(log.contains(&format!("r{youngest} |")), "{log}");
    eprintln!(
        "reads without etcd's majority: cat and log in {:?}",
        started.elapsed()
    );
    let server_log = std::fs::read_to_string(dir.join("serve-c.log")).expect("C's log");
    assert!(
        server_log.contains("reads are served unfenced"),
        "{server_log}"
    );
    // Back: commits resume.
    rig.etcd.restart(0);
    rig.etcd.restart(1);
    let back = Instant::now();
    let rev = loop {
        std::fs::write(&text, "majority back\n").expect("text");
        let out = svnmucc(
            "majority back",
            &[
                "put",
                text.to_str().expect("a UTF-8 path"),
                &format!("{}/first.txt", url(&servers, 1)),
            ],
        );
        if out.success() {
            break out.stdout_text();
        }
        assert!(
            back.elapsed() < Duration::from_secs(60),
            "{}",
            out.stderr_text()
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    eprintln!(
        "etcd majority back: '{}' after {:?}",
        rev.trim(),
        back.elapsed()
    );
    check_log(&url(&servers, 2), &acks);
    drop(servers);
}

/// The acknowledged revision of an `svnmucc put` of `body` to `url`/`path`, and how long
/// the client took; panics with its error when refused.
fn put(dir: &Path, url: &str, path: &str, body: &str) -> (u64, Duration) {
    let text = dir.join("put.txt");
    std::fs::write(&text, body).expect("text");
    let started = Instant::now();
    let out = svnmucc(
        body,
        &[
            "put",
            text.to_str().expect("a UTF-8 path"),
            &format!("{url}/{path}"),
        ],
    );
    let took = started.elapsed();
    assert!(out.success(), "{body} through {url}: {}", out.stderr_text());
    let rev = out
        .stdout_text()
        .trim()
        .strip_prefix('r')
        .and_then(|s| s.split(' ').next())
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or_else(|| panic!("no revision in '{}'", out.stdout_text()));
    (rev, took)
}

/// The milliseconds in the last log line of `log` that contains `what` after `count`
/// such lines (`... N.N ms ...`), waiting a moment for it to be written.
fn logged_ms(log: &Path, what: &str, count: usize) -> f64 {
    let started = Instant::now();
    loop {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().filter(|l| l.contains(what)).collect();
        if lines.len() > count {
            let line = lines[count];
            let ms = line
                .split(" ms")
                .next()
                .and_then(|s| s.rsplit(' ').next())
                .and_then(|s| s.trim_start_matches('(').parse::<f64>().ok());
            return ms.unwrap_or_else(|| panic!("no time in '{line}'"));
        }
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "no line {} with '{what}' in {}:\n{text}",
            count + 1,
            log.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn an_idle_writer_hands_the_lease_over_on_request_and_resigns_at_sigterm() {
    // A keeps the writer lease a minute after each commit, and its lease lives 10 s
    // without renewal: before this, B's commits waited `writer-wait` (30 s here) for it,
    // and after A's SIGTERM or kill -9 its TTL.
    let (rig, mut servers) = Rig::start_with(
        2,
        &[
            "writer-idle-ms = 60000\nlease-ttl = 10\n",
            "writer-wait = 30\n",
        ],
    );
    let dir = rig.dir.path().to_path_buf();
    let (log_a, log_b) = (dir.join("serve-a.log"), dir.join("serve-b.log"));
    let url = |servers: &[Svelto], i: usize| servers[i].url("proj");

    // Release on demand, three times: a commit through A (which then holds the lease,
    // idle), then one through B, which asks A for the lease through etcd.
    let mut handovers = Vec::new();
    for round in 0..3 {
        let (rev_a, _) = put(
            &dir,
            &url(&servers, 0),
            "a.txt",
            &format!("A, round {round}\n"),
        );
        assert_eq!(
            rig.writer().as_deref(),
            Some("a"),
            "A holds the lease after r{rev_a}"
        );
        let (rev_b, took) = put(
            &dir,
            &url(&servers, 1),
            "b.txt",
            &format!("B, round {round}\n"),
        );
        assert_eq!(rev_b, rev_a + 1);
        let asked = logged_ms(&log_b, "writer lease taken over from front end 'a'", round);
        let given = logged_ms(&log_a, "writer lease given back to front end 'b'", round);
        eprintln!(
            "round {round}: B's commit r{rev_b} took {took:?} (svnmucc); B had the lease \
             {asked:.1} ms after asking A (A's revoke {given:.1} ms)"
        );
        assert!(
            asked < 1000.0 && took < Duration::from_secs(5),
            "B waited {asked} ms for the lease; its commit took {took:?}"
        );
        handovers.push(asked);
    }
    assert_eq!(
        svn(&["cat", &format!("{}/b.txt", url(&servers, 0))]),
        "B, round 2\n"
    );
    // The member registry lists both front ends with their addresses.
    let members = || {
        Run::new(svelto_bin())
            .args(["admin", "members", "--cluster"])
            .arg(&rig.files[1])
            .success()
            .stdout_text()
    };
    let listed = members();
    for (i, id) in ["a", "b"].iter().enumerate() {
        let line = format!("{id} {} pid={}", servers[i].url(""), servers[i].pid());
        let line = line.replace("/ pid", " pid");
        assert!(listed.contains(&line), "'{line}' in:\n{listed}");
    }

    // SIGTERM of A holding the lease: it resigns once its running commits are done, and
    // B commits at once (before this, after A's 10 s lease ran out).
    let (rev_a, _) = put(&dir, &url(&servers, 0), "a.txt", "A before SIGTERM\n");
    assert_eq!(
        rig.writer().as_deref(),
        Some("a"),
        "A holds the lease after r{rev_a}"
    );
    let signalled = Instant::now();
    Run::tool("kill")
        .args(["-TERM", &servers[0].pid().to_string()])
        .success();
    while servers[0].is_running() {
        assert!(
            signalled.elapsed() < Duration::from_secs(10),
            "A did not exit after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let exited = signalled.elapsed();
    // A is gone: only its resignation lets B in before the TTL (nobody is left to ask).
    assert_eq!(rig.writer(), None, "A resigned the lease before exiting");
    let (rev_b, took) = put(&dir, &url(&servers, 1), "b.txt", "B after A's SIGTERM\n");
    let after_sigterm = signalled.elapsed();
    assert_eq!(rev_b, rev_a + 1);
    let server_log = std::fs::read_to_string(&log_a).expect("A's log");
    assert!(
        server_log.contains("shutdown: writer lease of proj resigned"),
        "{server_log}"
    );
    // A left the member registry at shutdown.
    let listed = members();
    assert!(
        !listed.contains("a svn://") && listed.contains("b svn://"),
        "{listed}"
    );
    eprintln!(
        "SIGTERM of A holding the lease: A exited after {exited:?}; B's commit r{rev_b} \
         acknowledged {after_sigterm:?} after the signal (svnmucc {took:?})"
    );
    assert!(
        after_sigterm < Duration::from_secs(4),
        "B's commit came {after_sigterm:?} after A's SIGTERM (the lease lives 10 s)"
    );

    // kill -9 of A holding the lease still falls back to the TTL: B asks, nobody answers.
    servers[0] = rig.serve(0);
    let (rev_a, _) = put(&dir, &url(&servers, 0), "a.txt", "A before kill -9\n");
    assert_eq!(
        rig.writer().as_deref(),
        Some("a"),
        "A holds the lease after r{rev_a}"
    );
    let killed = Instant::now();
    servers[0].kill_hard();
    let (rev_b, _) = put(&dir, &url(&servers, 1), "b.txt", "B after A's kill -9\n");
    let after_kill = killed.elapsed();
    assert_eq!(rev_b, rev_a + 1);
    eprintln!("kill -9 of A holding the lease: B's commit r{rev_b} {after_kill:?} later");
    assert!(
        after_kill > Duration::from_secs(5),
        "B committed {after_kill:?} after A's kill -9: the 10 s lease cannot have ended"
    );
    eprintln!("hand-overs on request (ms): {handovers:?}");
    drop(servers);
}

/// `svelto admin ARGS...`, which must succeed.
fn admin(args: &[&std::ffi::OsStr]) -> svelto_testkit::Outcome {
    Run::new(svelto_bin())
        .arg("admin")
        .args(args)
        .timeout(Duration::from_secs(120))
        .success()
}

#[test]
fn admin_load_into_the_cluster_dumps_as_a_local_load() {
    use std::ffi::OsStr;
    let dir = tempdir();
    let etcd = EtcdCluster::start(dir.path(), 1);
    let s3 = S3Server::start(dir.path(), "svelto");
    let file = cluster_file(dir.path(), &etcd, &s3, "a", "");
    let file = file.as_os_str();
    let local = dir.path().join("local");
    let local = local.as_os_str();
    let dump = svelto_testkit::scenario_dump("mixed");
    let dump_uuid = String::from_utf8_lossy(&std::fs::read(&dump).expect("fixture"))
        .lines()
        .find_map(|l| l.strip_prefix("UUID: ").map(str::to_owned))
        .expect("the fixture has a UUID");
    let o = |s: &'static str| OsStr::new(s);

    admin(&[o("create"), o("--cluster"), file, o("proj")]);
    // Revision 0's properties cannot change in a cluster yet: revisions 1 and up.
    let cluster_load = admin(&[
        o("load"),
        o("-r"),
        o("1:1000000"),
        o("--cluster"),
        file,
        o("proj"),
        o("-F"),
        dump.as_os_str(),
    ]);
    let cluster_dump = admin(&[
        o("dump"),
        o("-q"),
        o("-r"),
        o("1:HEAD"),
        o("--cluster"),
        file,
        o("proj"),
    ])
    .stdout;
    // The cluster verifies (every revision, through this machine's cache); a staged
    // transaction of one machine is refused by name.
    let verified = admin(&[o("verify"), o("--cluster"), file, o("proj")]);
    assert!(
        verified.stdout_text().contains("* Verified revision 1."),
        "{}",
        verified.stdout_text()
    );
    let txn = Run::new(svelto_bin())
        .args([
            o("admin"),
            o("verify"),
            o("-t"),
            o("1-1"),
            o("--cluster"),
            file,
            o("proj"),
        ])
        .failure();
    assert!(
        txn.stderr_text()
            .contains("staged transactions live in each front end's cache"),
        "{}",
        txn.stderr_text()
    );
    let cluster_uuid = String::from_utf8_lossy(&cluster_dump)
        .lines()
        .find_map(|l| l.strip_prefix("UUID: ").map(str::to_owned))
        .expect("the dump has a UUID");
    assert_ne!(
        cluster_uuid, dump_uuid,
        "the cluster repository keeps its own UUID"
    );

    // The same dump loaded on this machine, under the cluster repository's UUID.
    admin(&[o("create"), local]);
    let local_load = admin(&[
        o("load"),
        o("--ignore-uuid"),
        o("-r"),
        o("1:1000000"),
        local,
        o("-F"),
        dump.as_os_str(),
    ]);
    admin(&[o("setuuid"), local, OsStr::new(&cluster_uuid)]);
    assert_eq!(
        cluster_load.stdout_text(),
        local_load.stdout_text(),
        "the loads report the same revisions"
    );
    assert!(cluster_load
        .stdout_text()
        .contains("------- Committed revision 1 >>>"));
    let local_dump = admin(&[o("dump"), o("-q"), o("-r"), o("1:HEAD"), local]).stdout;
    assert!(local_dump.len() > 1000, "the fixture has history");
    assert!(cluster_dump == local_dump, "the dumps differ");
    let deltas = |repo: &[&OsStr]| {
        let mut args = vec![o("dump"), o("-q"), o("--deltas"), o("-r"), o("1:HEAD")];
        args.extend_from_slice(repo);
        admin(&args).stdout
    };
    assert!(
        deltas(&[o("--cluster"), file, o("proj")]) == deltas(&[local]),
        "the dumps with deltas differ"
    );

    // setlog --cluster changes r1's log (the hooks being the front ends', only with
    // --bypass-hooks); the one machine's setlog the same: the dumps are equal again.
    let message = dir.path().join("message");
    std::fs::write(&message, "changed by setlog\n").expect("message");
    let hooked = Run::new(svelto_bin())
        .args([
            o("admin"),
            o("setlog"),
            o("-r"),
            o("1"),
            o("--cluster"),
            file,
            o("proj"),
        ])
        .arg(&message)
        .failure();
    assert!(
        hooked.stderr_text().contains("give --bypass-hooks"),
        "{}",
        hooked.stderr_text()
    );
    let m = message.as_os_str();
    admin(&[
        o("setlog"),
        o("-r"),
        o("1"),
        o("--bypass-hooks"),
        o("--cluster"),
        file,
        o("proj"),
        m,
    ]);
    admin(&[o("setlog"), o("-r"), o("1"), o("--bypass-hooks"), local, m]);
    let cluster_dump = admin(&[
        o("dump"),
        o("-q"),
        o("-r"),
        o("1:HEAD"),
        o("--cluster"),
        file,
        o("proj"),
    ])
    .stdout;
    assert!(
        String::from_utf8_lossy(&cluster_dump).contains("changed by setlog"),
        "the new log is in the dump"
    );
    let local_dump = admin(&[o("dump"), o("-q"), o("-r"), o("1:HEAD"), local]).stdout;
    assert!(cluster_dump == local_dump, "the dumps differ after setlog");

    // A load into the cluster that asks for the dump's UUID is refused, clearly.
    let refused = Run::new(svelto_bin())
        .args([
            o("admin"),
            o("load"),
            o("--force-uuid"),
            o("--cluster"),
            file,
            o("proj"),
        ])
        .arg("-F")
        .arg(&dump)
        .timeout(Duration::from_secs(120))
        .failure();
    assert!(
        refused.stderr_text().contains("UUID"),
        "{}",
        refused.stderr_text()
    );
}

/// What one changer of revision properties tried, in order: (revision, value, the
/// client's error when it was not acknowledged).
type Changes = Vec<(u64, String, Option<String>)>;

/// Stops the committers and changers and waits for them: the committers' refusals and each
/// changer's changes.
fn stopped(
    stop: &AtomicBool,
    committing: Vec<std::thread::JoinHandle<Vec<String>>>,
    changing: Vec<(usize, std::thread::JoinHandle<Changes>)>,
) -> (Vec<String>, Vec<(usize, Changes)>) {
    stop.store(true, Ordering::SeqCst);
    let refused = committing
        .into_iter()
        .flat_map(|t| t.join().expect("committer"))
        .collect();
    let changes = changing
        .into_iter()
        .map(|(k, t)| (k, t.join().expect("changer")))
        .collect();
    (refused, changes)
}

/// Changers of revision properties, `svn propset --revprop` in a loop until `stop`: changer
/// `k` sets `test:changer-k` of r1..=r3 in turn (each front end's pre-revprop-change hook
/// must allow it) through its route, each value unique.
fn changers(
    which: &[(usize, Route)],
    stop: &Arc<AtomicBool>,
) -> Vec<(usize, std::thread::JoinHandle<Changes>)> {
    which
        .iter()
        .map(|(k, route)| {
            let (k, route, stop) = (*k, route.clone(), stop.clone());
            let changer = std::thread::spawn(move || {
                let mut tried = Vec::new();
                let mut n = 0u64;
                while !stop.load(Ordering::SeqCst) {
                    n += 1;
                    let rev = 1 + n % 3;
                    let value = format!("changer {k} change {n}");
                    let url = route(n);
                    let out = Run::tool("svn")
                        .args(["propset", "--revprop", "-r", &rev.to_string()])
                        .arg(format!("test:changer-{k}"))
                        .arg(&value)
                        .arg(&url)
                        .args(["--non-interactive", "--no-auth-cache"])
                        .timeout(Duration::from_secs(60))
                        .output();
                    let error = (!out.success()).then(|| out.stderr_text().trim().to_owned());
                    if let Some(e) = &error {
                        eprintln!("changer {k}: {e}");
                        std::thread::sleep(Duration::from_millis(100));
                    }
                    tried.push((rev, value, error));
                }
                tried
            });
            (k, changer)
        })
        .collect()
}

/// Every property a changer set holds, through each of `urls` alike, the value of its last
/// acknowledged attempt or of a later one whose client saw an error (applied,
/// unacknowledged); (acknowledged, refused) changes.
fn check_changes(urls: &[String], changes: &[(usize, Changes)]) -> (usize, usize) {
    let (mut acked, mut failed) = (0, 0);
    for (k, tried) in changes {
        acked += tried.iter().filter(|t| t.2.is_none()).count();
        failed += tried.iter().filter(|t| t.2.is_some()).count();
        for rev in 1..=3u64 {
            let of_rev: Vec<&(u64, String, Option<String>)> =
                tried.iter().filter(|t| t.0 == rev).collect();
            let Some(last) = of_rev.iter().rposition(|t| t.2.is_none()) else {
                continue;
            };
            let allowed: Vec<&str> = of_rev[last..].iter().map(|t| t.1.as_str()).collect();
            let name = format!("test:changer-{k}");
            let mut seen = Vec::new();
            for url in urls {
                let got = svn(&["propget", "--revprop", "-r", &rev.to_string(), &name, url]);
                assert!(
                    allowed.contains(&got.trim()),
                    "{name} of r{rev} through {url}: '{}', acknowledged last: '{}'",
                    got.trim(),
                    allowed[0]
                );
                seen.push(got);
            }
            assert!(
                seen.windows(2).all(|w| w[0] == w[1]),
                "{name} of r{rev} differs between the front ends: {seen:?}"
            );
        }
    }
    (acked, failed)
}

#[test]
fn revision_property_changes_and_commits_at_once_lose_neither() {
    let (rig, servers, urls) = seeded_rig();
    let dir = rig.dir.path().to_path_buf();
    // Two committers (through A and B) and two changers of revision properties (through
    // B and C, each its own property of r1..=r3, so every change reads and rewrites the
    // list the other changes too), all at once.
    let (stop, acks, committing) = committing(vec![fixed(&urls[0]), fixed(&urls[1])], &dir);
    let changing = changers(&[(1, fixed(&urls[1])), (2, fixed(&urls[2]))], &stop);
    std::thread::sleep(Duration::from_secs(20));
    let (refused, changes) = stopped(&stop, committing, changing);
    let commit_failures = refused.len();

    // Every acknowledged commit is in the log at its revision, through each front end.
    let mut youngest = 0;
    for url in &urls {
        youngest = check_log(url, &acks);
    }
    // Every property holds its last acknowledged value through each front end; the seed
    // commits' messages are untouched.
    let (acked, failed) = check_changes(&urls, &changes);
    for rev in 1..=3u64 {
        let log = svn(&[
            "propget",
            "--revprop",
            "-r",
            &rev.to_string(),
            "svn:log",
            &urls[2],
        ]);
        assert_eq!(log.trim(), format!("seed {rev}"));
    }
    eprintln!(
        "at once for 20 s: {} commits acknowledged ({commit_failures} refused), {acked} \
         revision property changes acknowledged ({failed} refused); youngest r{youngest}",
        acks.lock().expect("acks").len()
    );
    assert!(acks.lock().expect("acks").len() >= 4, "commits were made");
    assert!(acked >= 4, "revision property changes were made");
    assert_eq!(
        commit_failures + failed,
        0,
        "nothing refused (the lease is handed over)"
    );
    // The three front ends dump the same history.
    let a = dump_without_dates(&urls[0]);
    assert!(a.contains("test:changer-2"), "the changes are in the dump");
    for url in &urls[1..] {
        assert!(dump_without_dates(url) == a, "{url} dumps what A dumps");
    }
    drop(servers);
}

/// `svelto admin setrevprop`, `delrevprop`, `rmlocks` and `hotcopy --incremental` with
/// `--cluster FILE NAME` (an administrator's own cluster file and cache), against three
/// etcd members, weed and two front ends, each checked through the front ends; the hook
/// forms of the revision property changes and `-t` refused, saying why.
#[test]
fn admin_revision_properties_locks_and_incremental_hotcopy_in_the_cluster() {
    let (rig, fe) = Rig::start(2, "");
    let admin_file = cluster_file(rig.dir.path(), &rig.etcd, &rig._s3, "admin", "");
    rig.let_alice_in();
    let (a, b) = (fe[0].url("proj"), fe[1].url("proj"));
    let work = rig.dir.path().join("work");
    std::fs::create_dir_all(&work).expect("work");
    for (i, url) in [&a, &b, &a].into_iter().enumerate() {
        let (rev, _) = put(&work, url, &format!("f{i}.txt"), &format!("text {i}\n"));
        assert_eq!(rev, i as u64 + 1);
    }
    let admin_run = |args: &[&str]| {
        Run::new(svelto_bin())
            .arg("admin")
            .args(args)
            .timeout(Duration::from_secs(120))
    };
    let in_cluster = |sub: &str, rest: &[&str]| {
        let mut args = vec![
            sub,
            "--cluster",
            admin_file.to_str().expect("UTF-8"),
            "proj",
        ];
        args.extend_from_slice(rest);
        admin_run(&args)
    };
    // A first copy: --incremental into a new directory copies everything.
    let copy = rig.dir.path().join("copy");
    let copy_s = copy.to_str().expect("UTF-8");
    let out = in_cluster("hotcopy", &["--incremental", copy_s]).success();
    assert!(
        out.stdout_text().ends_with("* Copied revision 3.\n"),
        "{out}"
    );

    // Revision properties.
    let value = rig.dir.path().join("value");
    std::fs::write(&value, "red\n").expect("value");
    let value_s = value.to_str().expect("UTF-8");
    let started = Instant::now();
    in_cluster("setrevprop", &["-r", "2", "team", value_s]).success();
    eprintln!("admin setrevprop --cluster: {:?}", started.elapsed());
    for url in [&a, &b] {
        assert_eq!(
            svn(&["propget", "--revprop", "-r", "2", "team", url]),
            "red\n\n",
            "the value and propget's newline"
        );
    }
    in_cluster("delrevprop", &["-r", "1", "svn:log"]).success();
    let listed = svn(&["proplist", "--revprop", "-r", "1", &b]);
    assert!(
        listed.contains("svn:date") && !listed.contains("svn:log"),
        "{listed}"
    );
    assert!(svn(&["log", "-r", "1", &a]).contains("r1 |"));
    for (args, says) in [
        (
            &[
                "setrevprop",
                "-r",
                "2",
                "--use-pre-revprop-change-hook",
                "team",
            ][..],
            "drop --use-pre-revprop-change-hook",
        ),
        (
            &[
                "delrevprop",
                "-r",
                "2",
                "--use-post-revprop-change-hook",
                "team",
            ][..],
            "drop --use-pre-revprop-change-hook",
        ),
        (
            &["delrevprop", "-t", "1-1", "team"][..],
            "staged on one machine",
        ),
    ] {
        let mut all = args.to_vec();
        all.extend(["--cluster", admin_file.to_str().expect("UTF-8"), "proj"]);
        if all[0] == "setrevprop" {
            all.push(value_s);
        }
        let refused = admin_run(&all).failure();
        assert!(refused.stderr_text().contains(says), "{args:?}: {refused}");
    }
    assert_eq!(
        svn(&["propget", "--revprop", "-r", "2", "team", &b]),
        "red\n\n"
    );

    // Locks taken through the front ends, removed by rmlocks.
    let who = ["--username", "alice", "--password", "apw"];
    for (url, file) in [(&a, "f0.txt"), (&b, "f1.txt")] {
        let mut args = vec!["lock", "-m", "mine"];
        args.extend(who);
        let target = format!("{url}/{file}");
        args.push(&target);
        assert!(svn(&args).contains("locked by user 'alice'"));
    }
    let out = in_cluster("rmlocks", &["/f0.txt", "f2.txt"]).success();
    assert_eq!(
        out.stdout_text(),
        "Removed lock on '/f0.txt'.\nPath '/f2.txt' isn't locked.\n",
        "{out}"
    );
    for url in [&a, &b] {
        let f0 = svn(&["info", &format!("{url}/f0.txt")]);
        assert!(!f0.contains("Lock Owner"), "{f0}");
        let f1 = svn(&["info", &format!("{url}/f1.txt")]);
        assert!(f1.contains("Lock Owner: alice"), "{f1}");
    }
    let listed = in_cluster("lslocks", &[]).success().stdout_text();
    assert!(
        listed.contains("Path: /f1.txt") && !listed.contains("/f0.txt"),
        "{listed}"
    );

    // More commits, then the copy brought up to date: the cluster's dump and locks.
    for (i, url) in [(3, &b), (4, &a)] {
        put(&work, url, &format!("f{i}.txt"), "more\n");
    }
    let started = Instant::now();
    let out = in_cluster("hotcopy", &["--incremental", copy_s]).success();
    eprintln!(
        "admin hotcopy --incremental --cluster: {:?}",
        started.elapsed()
    );
    assert_eq!(
        out.stdout_text(),
        "* Copied revision 4.\n* Copied revision 5.\n",
        "{out}"
    );
    let same_as_the_cluster = || {
        admin_run(&["verify", "-q", copy_s]).success();
        for args in [
            &["dump", "-q"][..],
            &["dump", "-q", "--deltas"][..],
            &["lslocks"][..],
        ] {
            let cluster = in_cluster(args[0], &args[1..]).success().stdout;
            let mut local = args.to_vec();
            local.push(copy_s);
            let copied = admin_run(&local).success().stdout;
            assert!(cluster.len() > 100, "{args:?}");
            assert!(cluster == copied, "svelto admin {args:?} of the copy");
        }
    };
    same_as_the_cluster();
    let dump = String::from_utf8(in_cluster("dump", &["-q"]).success().stdout).expect("UTF-8");
    assert!(
        dump.contains("team") && dump.contains("red"),
        "r2's property"
    );
    // Nothing new: nothing copied, the same still.
    let out = in_cluster("hotcopy", &["--incremental", copy_s]).success();
    assert_eq!(out.stdout_text(), "", "{out}");
    same_as_the_cluster();
    // A revision property change in the cluster alone (appended, as a commit is).
    in_cluster("setrevprop", &["-r", "5", "team", value_s]).success();
    in_cluster("hotcopy", &["--incremental", copy_s]).success();
    same_as_the_cluster();

    // A copy changed since (a local setlog appends to it) is refused, and so is another
    // repository.
    let message = rig.dir.path().join("message");
    std::fs::write(&message, "changed in the copy\n").expect("message");
    admin_run(&["setlog", "-r", "1", "--bypass-hooks", copy_s])
        .arg(&message)
        .success();
    put(&work, &b, "f5.txt", "more\n");
    let refused = in_cluster("hotcopy", &["--incremental", copy_s]).failure();
    assert!(
        refused
            .stderr_text()
            .contains("is not an unchanged earlier copy"),
        "{refused}"
    );
    let other = rig.dir.path().join("other");
    admin_run(&["create", other.to_str().expect("UTF-8")]).success();
    let refused = in_cluster(
        "hotcopy",
        &["--incremental", other.to_str().expect("UTF-8")],
    )
    .failure();
    assert!(
        refused
            .stderr_text()
            .contains("is not a copy of cluster repository"),
        "{refused}"
    );
}

/// A runtime for the tests' own S3 calls (the bucket client's).
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

/// Every object of the rig's bucket: key and size.
fn objects(s3: &S3Server) -> BTreeMap<String, u64> {
    use object_store::{path::Path as ObjectPath, ObjectStore};
    let store = bucket_client(s3);
    runtime().block_on(async {
        let mut all = BTreeMap::new();
        let mut prefixes: Vec<Option<ObjectPath>> = vec![None];
        while let Some(prefix) = prefixes.pop() {
            let listed = store
                .list_with_delimiter(prefix.as_ref())
                .await
                .expect("list the bucket");
            prefixes.extend(listed.common_prefixes.into_iter().map(Some));
            for o in listed.objects {
                all.insert(o.location.to_string(), o.size);
            }
        }
        all
    })
}

/// An S3 client of the rig's bucket, as an administrator's tool would have (`aws s3`): the
/// object_store client's defaults (the restore drill and the collector's tests).
fn bucket_client(s3: &S3Server) -> object_store::aws::AmazonS3 {
    // reqwest is built without a TLS provider of its own: ring, as svelto-http uses.
    let _ = rustls::crypto::ring::default_provider().install_default();
    object_store::aws::AmazonS3Builder::new()
        .with_endpoint(s3.endpoint())
        .with_bucket_name(s3.bucket())
        .with_region(S3_REGION)
        .with_access_key_id(S3_ACCESS_KEY)
        .with_secret_access_key(S3_SECRET_KEY)
        .with_allow_http(true)
        .with_virtual_hosted_style_request(false)
        .build()
        .expect("an S3 client")
}
