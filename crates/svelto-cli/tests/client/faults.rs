//! `svelto checkout`, `export` and `update` interrupted by the network (a relay between
//! client and server that cuts the connections part way, or goes silent) and by a full
//! disk (the working copy on a small tmpfs). Each fails with a clear error and a non-zero
//! status; then the same `svelto checkout` resumes the checkout, `svn cleanup` and an
//! update finish the update, an export again with `--force` completes the export, and the
//! result is the stock client's, file for file and row for row.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use svelto_testkit::Subject;

use super::interrupted::{many_files_dump, same_rows, same_trees};
use super::*;

/// What the network does once the relay has passed its budget of bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Fault {
    /// Every connection closed (and every later one, until disarmed).
    Cut,
    /// Nothing forwarded any more, the connections left open: a silent peer.
    Stall,
}

struct Shared {
    upstream: String,
    /// Bytes from the server to the client since the relay was last armed.
    sent: AtomicU64,
    /// How many of them pass before the fault.
    budget: AtomicU64,
    stall: AtomicBool,
    stop: AtomicBool,
    conns: Mutex<Vec<TcpStream>>,
}

/// A TCP relay on 127.0.0.1 in front of a server.
struct Relay {
    port: u16,
    shared: Arc<Shared>,
}

impl Relay {
    fn start(upstream: &str) -> Relay {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the relay");
        let port = listener.local_addr().expect("relay address").port();
        let shared = Arc::new(Shared {
            upstream: upstream.to_string(),
            sent: AtomicU64::new(0),
            budget: AtomicU64::new(u64::MAX),
            stall: AtomicBool::new(false),
            stop: AtomicBool::new(false),
            conns: Mutex::new(Vec::new()),
        });
        let s = shared.clone();
        std::thread::spawn(move || {
            for client in listener.incoming() {
                if s.stop.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(client) = client else { continue };
                let Ok(server) = TcpStream::connect(&s.upstream) else {
                    continue;
                };
                let (Ok(c2), Ok(s2)) = (client.try_clone(), server.try_clone()) else {
                    continue;
                };
                {
                    let mut conns = s.conns.lock().expect("relay connections");
                    for c in [&client, &server] {
                        if let Ok(c) = c.try_clone() {
                            conns.push(c);
                        }
                    }
                }
                // Client to server: as it comes.
                std::thread::spawn(move || {
                    let (mut from, mut to) = (c2, s2);
                    let _ = std::io::copy(&mut from, &mut to);
                    let _ = to.shutdown(Shutdown::Write);
                });
                let s = s.clone();
                std::thread::spawn(move || forward(&s, server, client));
            }
        });
        Relay { port, shared }
    }

    /// From now on, `budget` more bytes reach the client, then `fault`.
    fn arm(&self, fault: Fault, budget: u64) {
        self.shared
            .stall
            .store(fault == Fault::Stall, Ordering::SeqCst);
        self.shared.sent.store(0, Ordering::SeqCst);
        self.shared.budget.store(budget, Ordering::SeqCst);
    }

    /// The network back (and the count of bytes restarted).
    fn heal(&self) {
        self.arm(Fault::Cut, u64::MAX);
    }

    fn sent(&self) -> u64 {
        self.shared.sent.load(Ordering::SeqCst)
    }

    /// `base` (`scheme://host:port/path`) through the relay.
    fn url(&self, base: &str) -> String {
        let (scheme, rest) = base.split_once("://").expect("a URL");
        let path = rest.find('/').map_or("", |i| &rest[i..]);
        format!("{scheme}://127.0.0.1:{}{path}", self.port)
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        if let Ok(conns) = self.shared.conns.lock() {
            for c in conns.iter() {
                let _ = c.shutdown(Shutdown::Both);
            }
        }
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

/// Server to client, up to the budget, then the fault.
fn forward(s: &Shared, mut from: TcpStream, mut to: TcpStream) {
    let mut buf = vec![0; 16 * 1024];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => {
                let _ = to.shutdown(Shutdown::Write);
                return;
            }
            Ok(n) => n as u64,
        };
        let before = s.sent.fetch_add(n, Ordering::SeqCst);
        let budget = s.budget.load(Ordering::SeqCst);
        let pass = budget.saturating_sub(before).min(n);
        if to.write_all(&buf[..pass as usize]).is_err() {
            let _ = from.shutdown(Shutdown::Both);
            return;
        }
        if pass < n {
            if s.stall.load(Ordering::SeqCst) {
                while !s.stop.load(Ordering::SeqCst) {
                    std::thread::sleep(Duration::from_millis(50));
                }
            }
            let _ = to.shutdown(Shutdown::Both);
            let _ = from.shutdown(Shutdown::Both);
            return;
        }
    }
}

/// `host:port` of a URL.
fn host_port(url: &str) -> String {
    let rest = url.split_once("://").expect("a URL").1;
    rest.split('/').next().unwrap_or(rest).to_string()
}

/// Runs `svelto ARGS` in `cwd`, expecting it to fail within `limit`: its stderr.
fn fails(args: &[&str], cwd: &Path, limit: Duration, what: &str) -> String {
    let out = Run::new(binary())
        .args(args)
        .current_dir(cwd)
        .timeout(Duration::from_secs(300))
        .output();
    let err = out.stderr_text();
    assert!(!out.success(), "{what}: svelto {args:?} succeeded: {out}");
    assert!(
        out.elapsed < limit,
        "{what}: svelto {args:?} took {:?} to fail: {out}",
        out.elapsed
    );
    assert!(
        !err.contains("panicked") && out.status.code().is_some(),
        "{what}: svelto {args:?}: {out}"
    );
    err
}

/// Everything the stock client shows of two working copies, and their wc.db rows.
fn same_working_copies(pair: &Pair, stock: &Path, ours: &Path, what: &str) {
    same_trees(&tree(stock), &tree(ours), what);
    for cmd in [&["status", "-v"][..], &["info", "-R"], &["diff"]] {
        assert_eq!(
            in_wc(pair, stock, cmd),
            in_wc(pair, ours, cmd),
            "{what}: svn {cmd:?}"
        );
    }
    same_rows(&nodes(stock), &nodes(ours), what);
}

/// The four servers of the two pairs: (label, pair, repository URL).
fn all_servers<'a>(svn: &'a Pair, http: &'a Pair) -> Vec<(&'static str, &'a Pair, String)> {
    vec![
        ("svnserve", svn, svn.reference_url()),
        ("svelto serve", svn, svn.subject_url()),
        ("apache", http, http.reference_url()),
        ("svelto serve --http-listen", http, http.subject_url()),
    ]
}

#[test]
fn network_loss_mid_checkout_export_and_update() {
    let dir = tempdir();
    let dump = many_files_dump(dir.path(), 10, 100);
    let svn_pair = Pair::from_dump("netloss", &dump, Subject::Svelto(binary().to_path_buf()));
    let http_pair = Pair::http_from_dump("netloss", &dump, binary());
    // A silent peer is given up on after the configured http-timeout.
    let config = dir.path().join("config");
    std::fs::create_dir_all(&config).expect("config dir");
    std::fs::write(config.join("servers"), "[global]\nhttp-timeout = 2\n").expect("servers");
    let config = config.to_str().expect("UTF-8 path").to_string();
    let limit = Duration::from_secs(60);
    for (label, pair, base) in all_servers(&svn_pair, &http_pair) {
        let relay = Relay::start(&host_port(&base));
        let url = format!("{}/trunk", relay.url(&base));
        // The errors name the URL (the request's, over http://).
        let named = relay.url(&base);
        let named = &named[..named.find(&host_port(&named)).unwrap_or(0) + host_port(&named).len()];
        let work = dir.path().join(label.replace([' ', '-'], "_"));
        std::fs::create_dir_all(&work).unwrap_or_else(|e| panic!("{work:?}: {e}"));
        svn(pair, &["checkout", "-q", &url, "stock"], &work);
        svn(pair, &["export", "-q", &url, "stock-export"], &work);
        svn(
            pair,
            &["checkout", "-q", "-r", "1", &url, "stock-up"],
            &work,
        );
        svn(pair, &["update", "-q"], &work.join("stock-up"));

        // How many bytes each command receives whole.
        relay.heal();
        svelto(&["checkout", "-q", &url, "whole"], &work);
        let checkout_bytes = relay.sent();
        relay.heal();
        svelto(&["export", "-q", &url, "whole-export"], &work);
        let export_bytes = relay.sent();
        svelto(&["checkout", "-q", "-r", "1", &url, "whole-up"], &work);
        relay.heal();
        svelto(&["update", "-q", "whole-up"], &work);
        let update_bytes = relay.sent();
        assert!(
            checkout_bytes > 50_000 && export_bytes > 50_000 && update_bytes > 50_000,
            "{label}: {checkout_bytes} / {export_bytes} / {update_bytes} bytes"
        );

        let faults = [
            (Fault::Cut, 10),
            (Fault::Cut, 50),
            (Fault::Cut, 90),
            (Fault::Stall, 50),
        ];
        for (fault, percent) in faults {
            let what = format!("{label}: {fault:?} at {percent}%");
            let opts: Vec<&str> = match fault {
                Fault::Cut => vec![],
                Fault::Stall => vec!["--config-dir", &config],
            };
            let with = |args: &[&'static str], tail: &[&str]| -> Vec<String> {
                args.iter()
                    .chain(opts.iter())
                    .chain(tail.iter())
                    .map(|s| s.to_string())
                    .collect()
            };
            let expect_err = |err: &str, cmd: &str| {
                eprintln!("{what}: {cmd}: {}", err.trim_end());
                assert!(
                    err.contains(named),
                    "{what}: {cmd}: the error names no URL ({named}): {err}"
                );
                if fault == Fault::Stall {
                    assert!(err.contains("timed out"), "{what}: {cmd}: {err}");
                }
            };

            // Checkout: resumed by the same command.
            let co = format!("co-{fault:?}-{percent}");
            let args = with(&["checkout", "-q"], &[&url, &co]);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            relay.arm(fault, checkout_bytes * percent / 100);
            let err = fails(&args, &work, limit, &format!("{what}: checkout"));
            expect_err(&err, "checkout");
            relay.heal();
            let out = svelto(&args, &work);
            assert!(out.stderr_text().is_empty(), "{what}: resumed: {out}");
            same_working_copies(
                pair,
                &work.join("stock"),
                &work.join(&co),
                &format!("{what}: a checkout resumed"),
            );

            // Export: again with --force.
            let ex = format!("ex-{fault:?}-{percent}");
            let args = with(&["export", "-q"], &[&url, &ex]);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            relay.arm(fault, export_bytes * percent / 100);
            let err = fails(&args, &work, limit, &format!("{what}: export"));
            expect_err(&err, "export");
            relay.heal();
            let mut again = args.clone();
            again.insert(1, "--force");
            svelto(&again, &work);
            same_trees(
                &tree(&work.join("stock-export")),
                &tree(&work.join(&ex)),
                &format!("{what}: an export done again"),
            );

            // Update: `svn cleanup`, then the update again.
            let up = format!("up-{fault:?}-{percent}");
            svelto(&["checkout", "-q", "-r", "1", &url, &up], &work);
            let args = with(&["update", "-q"], &[&up]);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            relay.arm(fault, update_bytes * percent / 100);
            let err = fails(&args, &work, limit, &format!("{what}: update"));
            expect_err(&err, "update");
            relay.heal();
            let ours = work.join(&up);
            svn(pair, &["cleanup"], &ours);
            // The stock client's update or Svelto's, in turn.
            if percent == 50 {
                svn(pair, &["update", "-q"], &ours);
            } else {
                svelto(&["update", "-q", &up], &work);
            }
            // (cleanup drops the pristines no node uses: the same on the stock side)
            svn(pair, &["cleanup"], &ours);
            let stock = work.join("stock-up");
            svn(pair, &["cleanup"], &stock);
            same_working_copies(pair, &stock, &ours, &format!("{what}: an update finished"));
        }
    }
}

/// A tmpfs mounted for a test, unmounted when dropped (even by a panic).
struct Tmpfs {
    dir: PathBuf,
}

impl Tmpfs {
    fn mount(dir: &Path, size_mib: u64) -> Tmpfs {
        let uid = Command::new("id").arg("-u").output().expect("id -u");
        assert_eq!(
            String::from_utf8_lossy(&uid.stdout).trim(),
            "0",
            "the disk-full tests mount a small tmpfs and need root (as on the test \
             machines and CI): run them as root"
        );
        std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("{dir:?}: {e}"));
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size_mib}M"), "tmpfs"])
            .arg(dir)
            .output()
            .expect("mount");
        assert!(
            out.status.success(),
            "mount -t tmpfs on {dir:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Tmpfs {
            dir: dir.to_path_buf(),
        }
    }

    /// Bytes used on it.
    fn used(&self) -> u64 {
        self.df("used")
    }

    fn avail(&self) -> u64 {
        self.df("avail")
    }

    fn df(&self, field: &str) -> u64 {
        let out = Command::new("df")
            .args([&format!("--output={field}"), "-B1"])
            .arg(&self.dir)
            .output()
            .expect("df");
        let text = String::from_utf8_lossy(&out.stdout);
        text.lines()
            .nth(1)
            .and_then(|l| l.trim().parse().ok())
            .unwrap_or_else(|| panic!("df {:?}: {text}", self.dir))
    }

    /// Fills it but for `free` bytes, with a file of its own.
    fn fill_but(&self, free: u64) -> PathBuf {
        let filler = self.dir.join("filler");
        let size = self.avail().saturating_sub(free);
        let out = Command::new("fallocate")
            .args(["-l", &size.to_string()])
            .arg(&filler)
            .output()
            .expect("fallocate");
        assert!(
            out.status.success(),
            "fallocate: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        filler
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.dir).status();
    }
}

/// The error of a full disk: the path and the system's words (also for wc.db, after
/// SQLite's).
fn says_disk_full(err: &str, what: &str) {
    eprintln!("{what}: {}", err.trim_end());
    assert!(err.contains("No space left on device"), "{what}: {err}");
    assert!(
        err.contains("/small/"),
        "{what}: the error names no path: {err}"
    );
}

#[test]
fn a_full_disk_mid_checkout_export_and_update() {
    let dir = tempdir();
    let dump = many_files_dump(dir.path(), 10, 100);
    let pair = Pair::from_dump("diskfull", &dump, Subject::Svelto(binary().to_path_buf()));
    let small = Tmpfs::mount(&dir.path().join("small"), 64);
    let disk = small.dir.clone();
    for (label, base) in servers(&pair) {
        let url = format!("{base}/trunk");
        let work = dir.path().join(label.replace(' ', "_"));
        std::fs::create_dir_all(&work).unwrap_or_else(|e| panic!("{work:?}: {e}"));
        svn(&pair, &["checkout", "-q", &url, "stock"], &work);
        svn(&pair, &["export", "-q", &url, "stock-export"], &work);
        svn(
            &pair,
            &["checkout", "-q", "-r", "1", &url, "stock-up"],
            &work,
        );
        svn(&pair, &["update", "-q"], &work.join("stock-up"));
        svn(&pair, &["cleanup"], &work.join("stock-up"));

        // What a checkout takes on the small disk.
        let before = small.used();
        svelto(&["checkout", "-q", &url, "whole"], &disk);
        let needs = small.used() - before;
        std::fs::remove_dir_all(disk.join("whole")).expect("remove");

        // Little room (files fail), half the room, and all but the last 64 KiB (wc.db and
        // the pristine store fail).
        let frees = [needs / 10, needs / 2, needs.saturating_sub(64 * 1024)];
        // An update needs less: new pristines, a file at a time.
        let update_frees = [needs / 10, needs / 4, needs / 3];
        // An export, less again: no pristines, no wc.db.
        let export_frees = [needs / 20, needs / 5, needs / 3];
        for ((free, update_free), export_free) in
            frees.into_iter().zip(update_frees).zip(export_frees)
        {
            let what = format!("{label}: {free} of {needs} bytes free");
            let co = disk.join(format!("co-{free}"));
            let co_arg = co.to_str().expect("UTF-8");
            let filler = small.fill_but(free);
            let err = fails(
                &["checkout", "-q", &url, co_arg],
                &work,
                Duration::from_secs(120),
                &format!("{what}: checkout"),
            );
            says_disk_full(&err, &format!("{what}: checkout"));
            std::fs::remove_file(&filler).expect("remove the filler");
            let out = svelto(&["checkout", "-q", &url, co_arg], &work);
            assert!(out.stderr_text().is_empty(), "{what}: resumed: {out}");
            same_working_copies(
                &pair,
                &work.join("stock"),
                &co,
                &format!("{what}: a checkout resumed"),
            );
            std::fs::remove_dir_all(&co).expect("remove");

            let ex = disk.join(format!("ex-{free}"));
            let ex_arg = ex.to_str().expect("UTF-8");
            let filler = small.fill_but(export_free);
            let err = fails(
                &["export", "-q", &url, ex_arg],
                &work,
                Duration::from_secs(120),
                &format!("{what}: export"),
            );
            says_disk_full(&err, &format!("{what}: export"));
            std::fs::remove_file(&filler).expect("remove the filler");
            svelto(&["export", "-q", "--force", &url, ex_arg], &work);
            same_trees(
                &tree(&work.join("stock-export")),
                &tree(&ex),
                &format!("{what}: an export done again"),
            );
            std::fs::remove_dir_all(&ex).expect("remove");

            let up = disk.join(format!("up-{free}"));
            let up_arg = up.to_str().expect("UTF-8");
            svelto(&["checkout", "-q", "-r", "1", &url, up_arg], &work);
            let filler = small.fill_but(update_free);
            let err = fails(
                &["update", "-q", up_arg],
                &work,
                Duration::from_secs(120),
                &format!("{what}: update"),
            );
            says_disk_full(&err, &format!("{what}: update"));
            std::fs::remove_file(&filler).expect("remove the filler");
            svn(&pair, &["cleanup"], &up);
            svelto(&["update", "-q", up_arg], &work);
            svn(&pair, &["cleanup"], &up);
            same_working_copies(
                &pair,
                &work.join("stock-up"),
                &up,
                &format!("{what}: an update finished"),
            );
            std::fs::remove_dir_all(&up).expect("remove");
        }
    }
}
