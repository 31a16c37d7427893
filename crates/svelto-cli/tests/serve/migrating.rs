//! docs/migrating.md, step by step, with the real tools: an FSFS repository served by
//! svnserve (svnserve.conf, passwd, authz, a hook) with a working copy checked out from it
//! is moved to Svelto by dump and load, verified, served, the working copy relocated and
//! committed from; then handed back to FSFS (the guide's roll back) with that commit.

use std::path::Path;

use svelto_testkit::{scenario_dump, tempdir, Run, Svelto, SvnClient, Svnserve};

use crate::common::youngest;

const CONF: &str = "[general]\nanon-access = none\nauth-access = write\n\
                    password-db = passwd\nauthz-db = authz\nrealm = project\n";
const PASSWD: &str = "[users]\nharry = harryssecret\n";
const AUTHZ: &str = "[/]\nharry = rw\n[/trunk/doc]\nharry = r\n";
/// A hook that uses only its arguments (the guide: such hooks need no change).
const START_COMMIT: &str = "#!/bin/sh\necho \"start-commit $2\" >> \"$1/../hook.log\"\n";

fn svelto() -> Run {
    Run::new(env!("CARGO_BIN_EXE_svelto"))
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
}

/// Copies every file of `from` into `to` (the guide's `cp -p OLD/conf/* NEW/conf/`).
fn copy_files(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read_dir") {
        let p = entry.expect("entry").path();
        if p.is_file() {
            Run::new("cp")
                .arg("-p")
                .arg(&p)
                .arg(to.join(p.file_name().expect("name")))
                .success();
        }
    }
}

fn uuid_fsfs(repo: &Path) -> String {
    Run::tool("svnlook")
        .arg("uuid")
        .arg(repo)
        .success()
        .stdout_text()
}

#[test]
fn the_migration_guide_moves_a_repository_and_back() {
    let work = tempdir();
    let client = SvnClient::new();
    let svn = |args: &[&str]| {
        let mut all = vec!["--username", "harry", "--password", "harryssecret"];
        all.extend_from_slice(args);
        client.svn(&all, work.path())
    };

    // The old server: FSFS with its configuration and a hook, served by svnserve, and a
    // working copy of it with a local change.
    let old_root = work.path().join("srv-svn");
    let old = old_root.join("project");
    std::fs::create_dir_all(&old_root).expect("mkdir");
    Run::tool("svnadmin").arg("create").arg(&old).success();
    Run::tool("svnadmin")
        .args(["load", "-q"])
        .arg(&old)
        .stdin_file(scenario_dump("basic"))
        .success();
    write(&old.join("conf/svnserve.conf"), CONF);
    write(&old.join("conf/passwd"), PASSWD);
    write(&old.join("conf/authz"), AUTHZ);
    let hook = old.join("hooks/start-commit");
    write(&hook, START_COMMIT);
    Run::new("chmod").arg("+x").arg(&hook).success();
    let svnserve = Svnserve::start(&old_root);
    let wc = work.path().join("wc");
    let out = svn(&[
        "checkout",
        "-q",
        &format!("{}/trunk", svnserve.url("project")),
        "wc",
    ]);
    assert!(out.success(), "checkout from svnserve:\n{out}");
    write(&wc.join("README.txt"), "edited before the move\n");

    // 1. Before the move.
    Run::tool("svnadmin")
        .args(["verify", "-q"])
        .arg(&old)
        .success();
    let head = youngest(&old);
    let uuid = uuid_fsfs(&old);

    // 2. Dump and load.
    let new_root = work.path().join("srv-svelto");
    let new = new_root.join("project");
    std::fs::create_dir_all(&new_root).expect("mkdir");
    svelto().args(["admin", "create"]).arg(&new).success();
    let old_dump = Run::tool("svnadmin")
        .args(["dump", "-q"])
        .arg(&old)
        .success()
        .stdout;
    svelto()
        .args(["admin", "load", "-q"])
        .arg(&new)
        .stdin_bytes(old_dump.clone())
        .success();

    // 3 and 4. Configuration and hooks, copied as they are.
    copy_files(&old.join("conf"), &new.join("conf"));
    copy_files(&old.join("hooks"), &new.join("hooks"));

    // 5. Verify: UUID and youngest as before, dumps byte-identical.
    svelto().args(["admin", "verify"]).arg(&new).success();
    let info = svelto()
        .args(["admin", "info"])
        .arg(&new)
        .success()
        .stdout_text();
    assert!(
        info.contains(&format!("UUID: {}", uuid.trim()))
            && info.contains(&format!("Revisions: {head}")),
        "svelto admin info after the load:\n{info}\n(old: uuid {uuid}, youngest {head})"
    );
    let new_dump = svelto()
        .args(["admin", "dump", "-q"])
        .arg(&new)
        .success()
        .stdout;
    assert!(
        old_dump == new_dump,
        "svelto admin dump differs from svnadmin dump"
    );

    // Served by Svelto with the copied configuration: anonymous access is refused, harry
    // reads, and the authz rule keeps trunk/doc read-only.
    let server = Svelto::start(Path::new(env!("CARGO_BIN_EXE_svelto")), &new_root);
    let new_trunk = format!("{}/trunk", server.url("project"));
    let anon = client.svn(&["ls", &new_trunk], work.path());
    assert!(
        !anon.success(),
        "anonymous ls of the moved repository succeeded:\n{anon}"
    );
    let out = svn(&["mkdir", "-m", "no", &format!("{new_trunk}/doc/new")]);
    assert!(
        !out.success() && out.stderr_text().contains("Access denied"),
        "mkdir under read-only trunk/doc:\n{out}"
    );

    // 6. Switch clients: relocate the working copy, commit its change through Svelto.
    let wc_arg = wc.to_str().expect("utf-8 path");
    let out = svn(&["relocate", &new_trunk, wc_arg]);
    assert!(out.success(), "svn relocate to Svelto:\n{out}");
    let out = svn(&["commit", "-m", "first commit on Svelto", wc_arg]);
    assert!(out.success(), "commit through Svelto:\n{out}");
    let moved_head = head + 1;
    assert!(
        out.stdout_text()
            .contains(&format!("Committed revision {moved_head}.")),
        "commit output:\n{out}"
    );
    let hook_log = std::fs::read_to_string(new_root.join("hook.log")).unwrap_or_default();
    assert!(
        hook_log.contains("start-commit harry"),
        "the copied start-commit hook did not run under Svelto: {hook_log:?}"
    );

    // 7. Roll back: the Svelto repository, with the new commit, back into FSFS.
    let back_root = work.path().join("srv-svn-back");
    let back = back_root.join("project");
    std::fs::create_dir_all(&back_root).expect("mkdir");
    Run::tool("svnadmin").arg("create").arg(&back).success();
    let dump = svelto()
        .args(["admin", "dump", "-q"])
        .arg(&new)
        .success()
        .stdout;
    Run::tool("svnadmin")
        .args(["load", "-q"])
        .arg(&back)
        .stdin_bytes(dump)
        .success();
    Run::tool("svnadmin")
        .args(["verify", "-q"])
        .arg(&back)
        .success();
    copy_files(&new.join("conf"), &back.join("conf"));
    copy_files(&new.join("hooks"), &back.join("hooks"));
    assert_eq!(uuid_fsfs(&back), uuid, "UUID after the roll back");
    assert_eq!(youngest(&back), moved_head);
    let svnserve_back = Svnserve::start(&back_root);
    let back_trunk = format!("{}/trunk", svnserve_back.url("project"));
    let out = svn(&["relocate", &back_trunk, wc_arg]);
    assert!(out.success(), "svn relocate back to svnserve:\n{out}");
    let out = svn(&["update", "-q", wc_arg]);
    assert!(
        out.success(),
        "update from the rolled-back repository:\n{out}"
    );
    let out = svn(&["cat", &format!("{back_trunk}/README.txt")]);
    assert_eq!(out.stdout_text(), "edited before the move\n", "{out}");
    let log = svn(&["log", "-q", "-l", "1", &back_trunk]);
    assert!(
        log.stdout_text()
            .contains(&format!("r{moved_head} | harry")),
        "the commit made on Svelto, after the roll back:\n{log}"
    );
}
