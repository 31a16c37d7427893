//! `svn+ssh://` through a real OpenSSH server (Debian's openssh-server) on 127.0.0.1, the
//! way an administrator sets it up: one `sshd`, one `authorized_keys` whose lines force
//! `svnserve -t` or `svelto serve -t` with `--tunnel-user` (or without it: then the
//! account ssh runs the command as is the author). The stock `svn` client checks out,
//! commits, updates, lists and reads the log through it with each key; both servers must
//! give the same outputs and record the same authors.
//!
//! Needs `sshd`, `ssh` and `ssh-keygen`: the test fails (never skips) without them.

use std::path::{Path, PathBuf};
use std::time::Instant;

use svelto_testkit::serve::mask_volatile;
use svelto_testkit::sshd::{forced, keygen, login_name, openssh, quoted, Sshd, INSTALL};
use svelto_testkit::{tempdir, Outcome, Pair, Run, Subject};

use crate::commit::mask_dates;

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_svelto"))
}

/// One server's keys: each logs in to the same account and runs that server in tunnel
/// mode, with `--tunnel-user=alice`, `--tunnel-user=bob`, or without `--tunnel-user`.
struct Keys {
    alice: PathBuf,
    bob: PathBuf,
    plain: PathBuf,
}

/// What one step printed, with the side's work directory and dates masked.
fn normalized(out: &Outcome, work: &Path) -> (bool, String, String) {
    let work = work.display().to_string();
    let text =
        |b: &[u8]| String::from_utf8_lossy(&mask_dates(&mask_volatile(b))).replace(&work, "{WORK}");
    (out.success(), text(&out.stdout), text(&out.stderr))
}

#[test]
fn svn_ssh_through_openssh_checkout_commit_authors_like_svnserve() {
    let started = Instant::now();
    // Fail loudly up front when OpenSSH is missing.
    for tool in ["sshd", "ssh", "ssh-keygen"] {
        openssh(tool);
    }
    let pair = Pair::from_dump(
        "basic",
        &svelto_testkit::scenario_dump("basic"),
        Subject::from_env(&bin()),
    );
    // Only EXTERNAL (the tunnel user) gives access: an anonymous session could not commit.
    pair.set_svnserve_conf("[general]\nanon-access = none\nauth-access = write\n");
    let dir = tempdir();
    let user = login_name();
    let roots = [pair.reference_repo(), pair.subject_repo()].map(|repo| {
        repo.parent()
            .expect("repository has a parent")
            .to_path_buf()
    });
    // With SVELTO_HARNESS_SELFTEST both sides are svnserve over FSFS.
    let subject = if pair.is_selftest() {
        "svnserve -t".to_string()
    } else {
        format!("{} serve -t", quoted(&bin()))
    };
    let servers = ["svnserve -t".to_string(), subject];
    let mut authorized = String::new();
    let keys: Vec<Keys> = (0..2)
        .map(|side| {
            let command = format!("{} -r {}", servers[side], quoted(&roots[side]));
            let mut key = |name: &str, extra: &str| {
                let (private, public) = keygen(dir.path(), &format!("{name}-{side}"));
                authorized.push_str(&forced(&format!("{command}{extra}"), &public));
                private
            };
            Keys {
                alice: key("alice", " --tunnel-user=alice"),
                bob: key("bob", " --tunnel-user=bob"),
                plain: key("plain", ""),
            }
        })
        .collect();
    let (stranger, _) = keygen(dir.path(), "stranger");
    let sshd = Sshd::start(dir.path(), &authorized);

    let url = format!("svn+ssh://{user}@127.0.0.1/{}", pair.name());
    let trunk = format!("{url}/trunk");
    // The two sides run at once (each ssh login takes a moment).
    let runs: Vec<Vec<Step>> = std::thread::scope(|scope| {
        let threads: Vec<_> = (0..2)
            .map(|side| {
                let (sshd, keys, work) =
                    (&sshd, &keys[side], dir.path().join(format!("work-{side}")));
                let (url, trunk) = (&url, &trunk);
                scope.spawn(move || session(sshd, keys, &work, url, trunk, side))
            })
            .collect();
        threads
            .into_iter()
            .map(|t| {
                t.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    });
    for ((what, reference), (_, subject)) in runs[0].iter().zip(&runs[1]) {
        assert_eq!(
            reference, subject,
            "svn {what} over svn+ssh: svnserve -t (left) and svelto serve -t (right) differ"
        );
    }
    // The authors come from the tunnel user, else from the account ssh ran the server as.
    let (_, (_, log, _)) = runs[1]
        .iter()
        .find(|(what, _)| what == "log")
        .expect("a log step");
    let authors: Vec<&str> = log
        .lines()
        .filter(|l| l.starts_with('r') && l.contains(" | "))
        .filter_map(|l| l.split(" | ").nth(1))
        .collect();
    assert_eq!(authors, [user.as_str(), "bob", "alice"], "{log}");
    assert!(log.contains("M /trunk/ssh.txt"), "{log}");
    assert!(log.contains("A /trunk/ssh.txt"), "{log}");
    let look = if pair.is_selftest() {
        Run::tool("svnlook").arg("author")
    } else {
        Run::new(bin()).args(["look", "author"])
    };
    let stored = look.arg(pair.subject_repo()).success().stdout_text();
    assert_eq!(stored.trim(), user);
    let reference = Run::tool("svnlook")
        .arg("author")
        .arg(pair.reference_repo())
        .success()
        .stdout_text();
    assert_eq!(reference.trim(), user);
    // Everything went through sshd's public key authentication.
    let text = sshd.log_text();
    let accepted = text
        .matches(&format!("Accepted publickey for {user} from 127.0.0.1"))
        .count();
    assert!(accepted >= 16, "{accepted} logins in sshd.log:\n{text}");
    // A key that is not in authorized_keys gets nothing (last: newer sshds penalize the
    // address after a failed login).
    let work = dir.path().join("stranger-work");
    std::fs::create_dir_all(&work).expect("create the work directory");
    let out = sshd.svn(&stranger, &work, &["ls", &url]);
    assert!(
        !out.success(),
        "a stranger's key listed the repository:\n{out}"
    );
    eprintln!("svn+ssh through sshd: {:.1?}", started.elapsed());
}

/// A step's name and what it printed (see [`normalized`]).
type Step = (String, (bool, String, String));

/// One side's client session: checkout, commits as alice and bob, a commit through the key
/// without `--tunnel-user`, update, and reads; every step must succeed.
fn session(sshd: &Sshd, k: &Keys, work: &Path, url: &str, trunk: &str, side: usize) -> Vec<Step> {
    std::fs::create_dir_all(work).expect("create the work directory");
    let mut steps = Vec::new();
    let mut step = |what: &str, key: &Path, args: &[&str]| {
        let out = sshd.svn(key, work, args);
        assert!(
            out.success(),
            "{what} over svn+ssh failed on side {side}:\n{out}\nsshd.log:\n{}",
            sshd.log_text()
        );
        steps.push((what.to_string(), normalized(&out, work)));
    };
    step("checkout", &k.alice, &["checkout", trunk, "wc"]);
    append(&work.join("wc/README.txt"), "alice was here, over ssh\n");
    std::fs::write(work.join("wc/ssh.txt"), "added over svn+ssh\n").expect("write");
    step("add", &k.alice, &["add", "wc/ssh.txt"]);
    step(
        "commit as alice",
        &k.alice,
        &["commit", "-m", "alice over ssh", "wc"],
    );
    append(&work.join("wc/ssh.txt"), "bob was here too\n");
    step(
        "commit as bob",
        &k.bob,
        &["commit", "-m", "bob over ssh", "wc"],
    );
    step(
        "mkdir without --tunnel-user",
        &k.plain,
        &["mkdir", "-m", "no tunnel user", &format!("{trunk}/plain")],
    );
    step("update", &k.alice, &["update", "wc"]);
    step("ls", &k.alice, &["ls", "-R", trunk]);
    step("log", &k.bob, &["log", "-v", "-l", "3", url]);
    step("info", &k.plain, &["info", "wc"]);
    step("cat", &k.alice, &["cat", &format!("{trunk}/ssh.txt")]);
    steps
}

fn append(path: &Path, text: &str) {
    use std::io::Write;
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .unwrap_or_else(|e| panic!("cannot open {path:?}: {e}"));
    file.write_all(text.as_bytes())
        .unwrap_or_else(|e| panic!("cannot append to {path:?}: {e}"));
}

#[test]
fn missing_openssh_fails_with_the_install_command() {
    let message = std::panic::catch_unwind(|| openssh("sshd-that-is-not-installed"))
        .expect_err("a missing program must fail the test")
        .downcast::<String>()
        .expect("a formatted panic message");
    assert!(message.contains(INSTALL), "{message}");
}
