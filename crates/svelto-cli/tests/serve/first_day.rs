//! An administrator's first day with the stock tools: one user list for both protocols
//! (`password-db` checked by HTTP Basic logins when no htpasswd file is given; one given
//! wins), the hook templates `svelto admin create` writes (they call `svelto look`), the
//! warnings `svelto serve` gives at start about configuration that does not say what it
//! seems to and files it cannot read, and `-r FILE` refused as svnserve refuses it.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use svelto_testkit::{tempdir, Run, Svelto, SvnClient};

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_svelto"))
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
}

/// A repository made by `svelto admin create` at ROOT/r, with these svnserve.conf and
/// passwd files.
fn repo_with(root: &Path, conf: &str, passwd: &str) -> PathBuf {
    let repo = root.join("r");
    Run::new(bin())
        .args(["admin", "create"])
        .arg(&repo)
        .success();
    write(&repo.join("conf/svnserve.conf"), conf);
    write(&repo.join("conf/passwd"), passwd);
    repo
}

const CONF: &str = "[general]\nanon-access = read\nauth-access = write\npassword-db = passwd\n";
const PASSWD: &str = "[users]\nharry = harryssecret\n";

/// The pre-commit template `svelto admin create` writes, enabled as its text says, refuses
/// a commit without a log message and lets one with a message through: it runs `svelto
/// look` (svnlook cannot read the repository). The others name `svelto look`, never
/// svnlook's path.
#[test]
fn hook_templates_call_svelto_look() {
    let dir = tempdir();
    let root = dir.path().join("root");
    std::fs::create_dir(&root).expect("mkdir");
    let repo = repo_with(&root, CONF, PASSWD);
    for entry in std::fs::read_dir(repo.join("hooks")).expect("hooks") {
        let p = entry.expect("entry").path();
        let text = std::fs::read_to_string(&p).expect("template");
        assert!(
            !text.contains("/usr/bin/svnlook"),
            "{}: {text}",
            p.display()
        );
        assert!(
            text.contains(&format!("SVELTO='{}'", bin().display())),
            "{}",
            p.display()
        );
    }
    let hook = repo.join("hooks/pre-commit");
    std::fs::copy(repo.join("hooks/pre-commit.tmpl"), &hook).expect("cp");
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let server = Svelto::start_with(&bin(), &root, &dir.path().join("serve.log"), &[]);
    let client = SvnClient::new();
    let commit = |msg: &str, name: &str| {
        client.svn(
            &[
                "mkdir",
                "--non-interactive",
                "--username",
                "harry",
                "--password",
                "harryssecret",
                "-m",
                msg,
                &format!("{}/{name}", server.url("r")),
            ],
            dir.path(),
        )
    };
    let refused = commit("  ", "a");
    assert!(!refused.success(), "an empty log message was committed");
    assert!(
        refused
            .stderr_text()
            .contains("Please describe the change in the log message."),
        "{}",
        refused.stderr_text()
    );
    let out = commit("adds b", "b");
    assert!(out.success(), "{}", out.stderr_text());
}
