//! `bench/httpcommit.py`, the benchmark's raw HTTP committer (POST create-txn, PUT of an
//! svndiff0 text with its checksums, MERGE, as ra_serf sends a one-file commit), run
//! briefly against Apache with mod_dav_svn and against Svelto with Basic logins: every
//! commit it counts is in each repository (youngest revision, author, the files' last
//! texts through the stock client) and both repositories verify. No timing is checked.
//! Needs python3.

use std::path::{Path, PathBuf};

use svelto_testkit::{Pair, Run};

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_svelto"))
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/httpcommit.py")
}

/// The number after `"key": ` in the script's one-line JSON.
fn field(json: &str, key: &str) -> String {
    let at = json
        .find(&format!("\"{key}\": "))
        .unwrap_or_else(|| panic!("no {key} in {json}"));
    let rest = &json[at + key.len() + 4..];
    let end = rest.find([',', '}']).expect("a value ends");
    rest[..end].trim().to_string()
}

/// The text committer `writer` writes in its commit number `commit` (the script's
/// `file_text` with its default size, 100 bytes).
fn text(writer: u32, commit: u32) -> String {
    let mut s = String::new();
    let mut k = 0;
    while s.len() < 100 {
        s.push_str(&format!(
            "line {k} of committer {writer}, commit {commit}\n"
        ));
        k += 1;
    }
    s
}

fn youngest(side: usize, pair: &Pair) -> u64 {
    let out = if side == 0 {
        Run::tool("svnlook")
            .arg("youngest")
            .arg(pair.reference_repo())
            .success()
    } else {
        Run::new(bin())
            .args(["look", "youngest"])
            .arg(pair.subject_repo())
            .success()
    };
    out.stdout_text().trim().parse().expect("a revision number")
}

fn raw(url: &str, more: &[&str]) -> String {
    let out = Run::new("python3")
        .arg(script())
        .args([
            "--url",
            url,
            "--user",
            "harry",
            "--password",
            "harryssecret",
        ])
        .args(more)
        .success();
    out.stdout_text()
}

#[test]
fn the_raw_http_committer_lands_every_commit_it_counts() {
    assert!(
        std::process::Command::new("python3")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success()),
        "\n\n*** python3 is required (bench/httpcommit.py): apt-get install python3 ***\n"
    );
    let pair = Pair::http_auth("basic", &bin(), false);
    crate::htpasswd(&pair.htpasswd(), &[("harry", "harryssecret", "-m")]);
    for repo in [pair.reference_repo(), pair.subject_repo()] {
        let conf = repo.join("conf");
        std::fs::write(
            conf.join("svnserve.conf"),
            "[general]\nanon-access = none\nauth-access = write\nauthz-db = authz\n\
             realm = Svelto test realm\n",
        )
        .expect("write svnserve.conf");
        std::fs::write(conf.join("authz"), "[/]\n* = rw\n").expect("write authz");
    }
    let creds = ["--username", "harry", "--password", "harryssecret"];
    for (side, url) in [(0, pair.reference_url()), (1, pair.subject_url())] {
        let before = youngest(side, &pair);
        // Three committers, four commits each: the directory (MKCOL), three adds, twelve
        // changes with base revision and checksums.
        let json = raw(&url, &["--writers", "3", "--commits", "4"]);
        assert_eq!(field(&json, "check"), "\"ok\"", "side {side}: {json}");
        assert_eq!(field(&json, "commits"), "12", "side {side}: {json}");
        assert_eq!(field(&json, "failures"), "0", "side {side}: {json}");
        assert_eq!(field(&json, "setup_commits"), "4", "side {side}: {json}");
        assert_eq!(youngest(side, &pair), before + 16, "side {side}: {json}");
        let svn = |args: &[&str]| {
            let mut v = args.to_vec();
            v.extend(creds);
            pair.client()
                .command("svn", pair.dir())
                .args(v)
                .success()
                .stdout_text()
        };
        for w in 1..=3 {
            let out = svn(&["cat", &format!("{url}/raw/w{w}.txt")]);
            assert_eq!(out, text(w, 5), "side {side}: raw/w{w}.txt");
        }
        let log = svn(&["log", "-l", "1", "-q", &url]);
        assert!(log.contains(" | harry | "), "side {side}: {log}");
        // The timed mode: a second run finds the directory and the files there.
        let mid = youngest(side, &pair);
        let json = raw(&url, &["--writers", "2", "--duration", "0.5"]);
        assert_eq!(field(&json, "check"), "\"ok\"", "side {side}: {json}");
        assert_eq!(field(&json, "setup_commits"), "2", "side {side}: {json}");
        let commits: u64 = field(&json, "commits").parse().expect("a count");
        assert!(commits > 0, "side {side}: {json}");
        assert_eq!(
            youngest(side, &pair),
            mid + 2 + commits,
            "side {side}: {json}"
        );
    }
    Run::tool("svnadmin")
        .args(["verify", "-q"])
        .arg(pair.reference_repo())
        .success();
    Run::new(bin())
        .args(["admin", "verify", "-q"])
        .arg(pair.subject_repo())
        .success();
}
