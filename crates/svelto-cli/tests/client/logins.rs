//! Logins: a repository that refuses anonymous access (svnserve.conf `anon-access = none`,
//! a password-db) served by svnserve and by `svelto serve`. The stock client caches a login
//! in plain form under a temporary `--config-dir`; `svelto checkout` and `update` then log
//! in with it and no `--username`/`--password`; without a cached login `--non-interactive`
//! refuses with a clear message, and on a terminal Svelto prompts as svn does.

use std::path::Path;

use svelto_testkit::{tempdir, Pair, Run};

use crate::{binary, servers};

fn svelto_in(args: &[&str], cwd: &Path) -> svelto_testkit::Outcome {
    Run::new(binary()).args(args).current_dir(cwd).output()
}

#[test]
fn logins_come_from_the_stock_clients_cache_or_a_prompt() {
    let pair = Pair::new("basic", binary());
    pair.set_svnserve_conf(
        "[general]\nanon-access = none\nauth-access = write\npassword-db = passwd\n\
         realm = Svelto login test\n",
    );
    for repo in [pair.reference_repo(), pair.subject_repo()] {
        std::fs::write(repo.join("conf/passwd"), "[users]\nalice = secret\n")
            .unwrap_or_else(|e| panic!("{e}"));
    }
    for (label, base) in servers(&pair) {
        let dir = tempdir();
        let cwd = dir.path();
        let url = format!("{base}/trunk");
        let config = cwd.join("config");
        std::fs::create_dir_all(&config).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(
            config.join("servers"),
            "[global]\nstore-plaintext-passwords = yes\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(config.join("config"), "[auth]\npassword-stores =\n")
            .unwrap_or_else(|e| panic!("{e}"));
        let cfg = config.display().to_string();
        let empty = cwd.join("empty").display().to_string();

        // No login: refused, named.
        let out = svelto_in(
            &[
                "checkout",
                "--config-dir",
                &empty,
                "--non-interactive",
                &url,
                "none",
            ],
            cwd,
        );
        assert!(!out.success(), "{label}: checked out without a login");
        assert!(
            out.stderr_text().contains("--username and --password"),
            "{label}: {}",
            out.stderr_text()
        );

        // The stock client caches alice's login.
        Run::new("svn")
            .args([
                "--config-dir",
                &cfg,
                "--non-interactive",
                "--username",
                "alice",
                "--password",
                "secret",
                "info",
                &url,
            ])
            .success();
        let cached = std::fs::read_dir(config.join("auth/svn.simple"))
            .unwrap_or_else(|e| panic!("{label}: no cache: {e}"))
            .count();
        assert_eq!(cached, 1, "{label}: one cached login");

        // Svelto logs in with it: checkout, a checkout naming the user, update.
        let out = svelto_in(&["checkout", "-q", "--config-dir", &cfg, &url, "wc"], cwd);
        assert!(out.success(), "{label}: {}", out.stderr_text());
        assert!(cwd.join("wc/README.txt").is_file(), "{label}");
        let args = [
            "checkout",
            "-q",
            "--config-dir",
            &cfg,
            "--username",
            "alice",
        ];
        let out = svelto_in(&[&args[..], &[&url, "named"]].concat(), cwd);
        assert!(out.success(), "{label}: {}", out.stderr_text());
        let out = svelto_in(
            &["update", "-q", "--config-dir", &cfg, "-r", "3", "wc"],
            cwd,
        );
        assert!(out.success(), "{label}: {}", out.stderr_text());
        let status = pair
            .client()
            .svn(&["--config-dir", &cfg, "status", "-v", "wc"], cwd)
            .stdout_text();
        assert!(status.contains("                3"), "{label}: {status}");
        // A cached login is for its user only.
        let out = svelto_in(
            &[
                "checkout",
                "--config-dir",
                &cfg,
                "--non-interactive",
                "--username",
                "bob",
                &url,
                "bob",
            ],
            cwd,
        );
        assert!(!out.success(), "{label}: bob used alice's login");

        // On a terminal, with no cached login: svn's prompts.
        let cmd = format!(
            "{} checkout --config-dir {empty} {url} prompted",
            binary().display()
        );
        let out = std::process::Command::new("script")
            .args(["-qec", &cmd, "/dev/null"])
            .current_dir(cwd)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .and_then(|mut child| {
                use std::io::Write;
                if let Some(mut stdin) = child.stdin.take() {
                    stdin.write_all(b"alice\nsecret\n")?;
                }
                child.wait_with_output()
            })
            .unwrap_or_else(|e| panic!("script (util-linux) is needed: {e}"));
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{label}: {text}");
        for want in [
            "Authentication realm: <svn://",
            "> Svelto login test",
            "Username: ",
            "Password for 'alice': ",
            "Checked out revision",
        ] {
            assert!(text.contains(want), "{label}: no {want:?} in {text}");
        }
        assert!(cwd.join("prompted/README.txt").is_file(), "{label}");
    }
}
