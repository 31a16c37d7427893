//! svn+ssh:// through a real OpenSSH `sshd` on 127.0.0.1 (svelto-testkit's [`Sshd`]): one
//! key whose `authorized_keys` line forces `svnserve -t -r ROOT`, one forcing `svelto serve
//! -t -r ROOT`. `svelto checkout`, `update` and `export` through `SVN_SSH` (and through a
//! `[tunnels]` entry of the configuration) give what the stock client gives through the
//! same agent; a tunnel that cannot be made fails with an error naming the agent's command
//! and what it printed, without hanging.
//!
//! Needs `sshd`, `ssh` and `ssh-keygen`: the test fails (never skips) without them.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use svelto_testkit::sshd::{forced, keygen, login_name, openssh, quoted, Sshd};
use svelto_testkit::{free_port, tempdir, Outcome, Pair, Run};

use crate::{binary, pair, same_wc, sorted_lines, tree};

/// One side: its label, the key that reaches its server, the agent for that key.
struct Side {
    label: &'static str,
    agent: String,
}

/// `svn ARGS` in `cwd` through `agent`; must succeed.
fn stock(pair: &Pair, agent: &str, args: &[&str], cwd: &Path) -> Outcome {
    let out = pair
        .client()
        .command("svn", cwd)
        .env("SVN_SSH", agent)
        .args(args)
        .output();
    assert!(
        out.success(),
        "svn {args:?} in {cwd:?} over svn+ssh failed:\n{out}"
    );
    out
}

/// `svelto ARGS` in `cwd` through `agent`, with the stock client's configuration directory.
fn ours(pair: &Pair, agent: &str, args: &[&str], cwd: &Path) -> Outcome {
    Run::new(binary())
        .args(args)
        .arg("--config-dir")
        .arg(pair.client().config_dir())
        .current_dir(cwd)
        .env("SVN_SSH", agent)
        .timeout(Duration::from_secs(120))
        .output()
}

/// sshd with a key to each server of `pair` (svnserve -t, svelto serve -t), each serving
/// the pair's repositories' parent directory.
fn sshd_for(pair: &Pair, dir: &Path) -> (Sshd, [Side; 2]) {
    let roots = [pair.reference_repo(), pair.subject_repo()].map(|repo| {
        repo.parent()
            .expect("a repository has a parent")
            .to_path_buf()
    });
    let subject = if pair.is_selftest() {
        "svnserve -t".to_string()
    } else {
        format!("{} serve -t", quoted(binary()))
    };
    let commands = ["svnserve -t".to_string(), subject];
    let mut authorized = String::new();
    let mut keys: Vec<PathBuf> = Vec::new();
    for (side, command) in commands.iter().enumerate() {
        let (private, public) = keygen(dir, &format!("key-{side}"));
        authorized.push_str(&forced(
            &format!("{command} -r {}", quoted(&roots[side])),
            &public,
        ));
        keys.push(private);
    }
    let sshd = Sshd::start(dir, &authorized);
    let sides = [
        Side {
            label: "svnserve -t",
            agent: sshd.ssh_command(&keys[0]),
        },
        Side {
            label: "svelto serve -t",
            agent: sshd.ssh_command(&keys[1]),
        },
    ];
    (sshd, sides)
}

#[test]
fn svn_ssh_checkouts_updates_and_exports_match_the_stock_clients() {
    let started = Instant::now();
    for tool in ["sshd", "ssh", "ssh-keygen"] {
        openssh(tool);
    }
    let user = login_name();
    for fixture in ["basic", "eol-keywords"] {
        let keys = tempdir();
        let pair = pair(fixture);
        let (sshd, sides) = sshd_for(pair, keys.path());
        let url = format!("svn+ssh://{user}@127.0.0.1/{}/trunk", pair.name());
        for side in &sides {
            // Checkouts, at HEAD and at an older revision.
            for args in [&[][..], &["-r", "3"]] {
                let dir = tempdir();
                let mut a = vec!["checkout", "-q"];
                a.extend_from_slice(args);
                a.extend([url.as_str(), "stock"]);
                stock(pair, &side.agent, &a, dir.path());
                a.pop();
                a.push("svelto");
                let out = ours(pair, &side.agent, &a, dir.path());
                assert!(
                    out.success(),
                    "{}: svelto {a:?} failed:\n{out}\nsshd.log:\n{}",
                    side.label,
                    sshd.log_text()
                );
                let what = format!("{}: checkout {args:?} {url}", side.label);
                same_wc(
                    pair,
                    &dir.path().join("stock"),
                    &dir.path().join("svelto"),
                    &what,
                );
            }
            // Updates across revisions, from the same checkout.
            let dir = tempdir();
            let (s, o) = (dir.path().join("stock"), dir.path().join("svelto"));
            for wc in ["stock", "svelto"] {
                stock(
                    pair,
                    &side.agent,
                    &["checkout", "-q", "-r", "1", &url, wc],
                    dir.path(),
                );
            }
            for to in ["HEAD", "2", "4"] {
                let what = format!("{}: update -r {to} of {url}", side.label);
                let a = stock(pair, &side.agent, &["update", "-r", to], &s).stdout_text();
                let b = ours(pair, &side.agent, &["update", "-r", to], &o);
                assert!(b.success(), "{what}: svelto failed:\n{b}");
                assert_eq!(sorted_lines(&a), sorted_lines(&b.stdout_text()), "{what}");
                same_wc(pair, &s, &o, &what);
            }
            // Exports.
            let dir = tempdir();
            stock(
                pair,
                &side.agent,
                &["export", "-q", &url, "stock"],
                dir.path(),
            );
            let out = ours(
                pair,
                &side.agent,
                &["export", "-q", &url, "svelto"],
                dir.path(),
            );
            assert!(
                out.success(),
                "{}: svelto export failed:\n{out}",
                side.label
            );
            assert_eq!(
                tree(&dir.path().join("stock")),
                tree(&dir.path().join("svelto")),
                "{}: export of {url}",
                side.label
            );
        }
        // Every session logged in through sshd (2 sides: 2 checkouts each way, 1 + 3
        // updates each way, an export each way; the stock client may open more).
        let accepted = sshd
            .log_text()
            .matches(&format!("Accepted publickey for {user} from 127.0.0.1"))
            .count();
        assert!(
            accepted >= 2 * 14,
            "{accepted} logins:\n{}",
            sshd.log_text()
        );
    }
    eprintln!("svn+ssh client differential: {:.1?}", started.elapsed());
}

#[test]
fn a_tunnel_scheme_of_the_configuration_is_used_as_by_the_stock_client() {
    let keys = tempdir();
    let user = login_name();
    let pair = pair("basic");
    let (_sshd, sides) = sshd_for(pair, keys.path());
    let side = &sides[1];
    // svn+mine:// through `mine = $MINE_AGENT AGENT` in [tunnels] of a configuration
    // directory of its own; MINE_AGENT is not set, so the rest of the entry is the agent.
    let dir = tempdir();
    let config = dir.path().join("config-dir");
    std::fs::create_dir_all(&config).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(
        config.join("config"),
        format!(
            "[tunnels]\n### ssh = nothing\nmine = $MINE_AGENT {}\n",
            side.agent
        ),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let url = format!("svn+mine://{user}@127.0.0.1/{}/trunk", pair.name());
    let cfg = config.display().to_string();
    Run::tool("svn")
        .args([
            "--config-dir",
            &cfg,
            "--non-interactive",
            "checkout",
            "-q",
            &url,
            "stock",
        ])
        .current_dir(dir.path())
        .success();
    Run::new(binary())
        .args(["checkout", "-q", "--config-dir", &cfg, &url, "svelto"])
        .current_dir(dir.path())
        .success();
    same_wc(
        pair,
        &dir.path().join("stock"),
        &dir.path().join("svelto"),
        "svn+mine://",
    );
    // An undefined scheme: named, as by the stock client.
    let out = Run::new(binary())
        .args(["checkout", "--config-dir", &cfg])
        .arg(url.replace("svn+mine", "svn+other"))
        .arg("other")
        .current_dir(dir.path())
        .output();
    assert!(!out.success(), "an undefined tunnel scheme checked out");
    assert!(
        out.stderr_text()
            .contains("undefined tunnel scheme 'other'"),
        "{out}"
    );
}

#[test]
fn a_tunnel_that_cannot_be_made_is_a_clear_error_not_a_hang() {
    let dir = tempdir();
    let cwd = dir.path();
    let empty = cwd.join("no-config").display().to_string();
    let run = |agent: &str, url: &str| {
        let started = Instant::now();
        let out = Run::new(binary())
            .args([
                "checkout",
                "--non-interactive",
                "--config-dir",
                &empty,
                url,
                "wc",
            ])
            .current_dir(cwd)
            .env("SVN_SSH", agent)
            .timeout(Duration::from_secs(60))
            .output();
        assert!(!out.success(), "{agent}: checked out:\n{out}");
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{agent}: took {:?}",
            started.elapsed()
        );
        let text = out.stderr_text();
        assert!(!text.contains("panicked"), "{agent}: {text}");
        assert!(
            !cwd.join("wc/.svn").exists(),
            "{agent}: left a working copy"
        );
        text
    };
    // Nothing listens on the port: ssh's own message, with its command and status.
    let closed = free_port();
    let ssh = format!(
        "{} -p {closed} -F none -o BatchMode=yes -o StrictHostKeyChecking=no \
         -o UserKnownHostsFile=/dev/null",
        openssh("ssh").display()
    );
    let text = run(&ssh, "svn+ssh://127.0.0.1/repo/trunk");
    assert!(text.contains("tunnel agent `"), "{text}");
    assert!(
        text.contains(&format!("-p {closed}")) && text.contains("127.0.0.1 svnserve -t"),
        "{text}"
    );
    assert!(text.contains("exited with status 255"), "{text}");
    assert!(text.contains("Connection refused"), "{text}");
    // An agent that is not there.
    let text = run("/nonexistent/ssh-agent-x -q", "svn+ssh://host/repo");
    assert!(
        text.contains(
            "tunnel agent `/nonexistent/ssh-agent-x -q host svnserve -t`: cannot start it"
        ),
        "{text}"
    );
    // An agent that logs in but finds no svnserve there (what the shell says, its status).
    let text = run(
        "sh -c 'echo \"bash: svnserve: command not found\" >&2; exit 127' --",
        "svn+ssh://host/repo",
    );
    assert!(text.contains("status 127"), "{text}");
    assert!(text.contains("svnserve: command not found"), "{text}");
    // An agent that prints something other than a greeting and hangs on: the garbage
    // is skipped, then the end of its output is an error, not a wait.
    let text = run(
        "sh -c 'echo Welcome to the host; exit 0' --",
        "svn+ssh://host/repo",
    );
    assert!(text.contains("closed the connection"), "{text}");
    assert!(text.contains("status 0"), "{text}");
    // A host that could be taken for an option is refused before anything runs.
    let text = run("/bin/false", "svn+ssh://-oProxyCommand=x/repo");
    assert!(text.contains("invalid host"), "{text}");
}
