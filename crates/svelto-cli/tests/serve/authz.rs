//! Path-based authorization (`authz-db`): the same svnserve.conf, passwd and authz file in
//! both repositories, the same commands by anonymous, two users and a group member, the
//! same outcome and output in every cell. Also: a malformed authz file refuses the
//! connection like svnserve, and an edited one applies to the next connection.

use std::path::Path;

use svelto_testkit::dumpfile::{assert_dumps_eq, with_uuid};
use svelto_testkit::{svnadmin_create, Pair, Run};

use svelto_testkit::authz_matrix::{authz, both_any, install, repo_name, with, CONF, USERS};

#[test]
fn reads_match_svnserve_for_every_user() {
    let pair = Pair::with_subject("copies", crate::common::subject());
    install(&pair, CONF, &authz(&repo_name(&pair)));
    svelto_testkit::authz_matrix::reads(&pair);
}

#[test]
fn writes_match_svnserve_for_every_user() {
    let mut pair = Pair::with_subject("copies", crate::common::subject());
    // The commits made here get their dates on each side a moment apart.
    pair.mask_dates();
    install(&pair, CONF, &authz(&repo_name(&pair)));
    // Locks by the users with write access somewhere: for the others the stock client
    // hangs after the refused auth slot of lock-many, with svnserve too.
    svelto_testkit::authz_matrix::writes(&pair, &["harry", "sally"]);
}

#[test]
fn malformed_authz_refuses_the_connection_like_svnserve() {
    let pair = Pair::with_subject("basic", crate::common::subject());
    install(&pair, CONF, "[/]\n* = r\n[/trunk]\n@nobody = rw\n");
    let same = pair.both_fails(&["ls", "{URL}"]);
    same.expect_stderr("E220003");
    install(&pair, CONF, "[/]\n  * = r\n");
    pair.both_fails(&["ls", "{URL}"]).expect_stderr("E220003");
    // A missing file too.
    install(&pair, "[general]\nauthz-db = no-such-file\n", "");
    pair.both_fails(&["ls", "{URL}"]).expect_stderr("E220003");
    // The details are in Svelto's log: file, line, reason.
    install(&pair, CONF, "[/]\n* = r\n[/x]\nharry = rx\n");
    pair.both_fails(&["ls", "{URL}"]);
    let log = std::fs::read_to_string(pair.subject_repo().join("../../serve.log"))
        .expect("read serve.log");
    assert!(
        log.contains("The access mode 'x' in access entry 'harry' of rule [/x] is not valid")
            && log.contains("conf/authz")
            && log.contains("line 4"),
        "{log}"
    );
}

#[test]
fn an_edited_authz_file_applies_to_the_next_connection() {
    let pair = Pair::with_subject("basic", crate::common::subject());
    install(&pair, CONF, "[/]\n* = r\n");
    pair.both(&["ls", "{URL}/trunk"]);
    install(&pair, CONF, "[/]\n* = r\n[/trunk]\n* =\n");
    pair.both_fails(&["ls", "{URL}/trunk"]);
    pair.both(&["ls", "{URL}"]);
    install(&pair, CONF, "[/]\n* = r\n");
    pair.both(&["ls", "{URL}/trunk"]);
}

#[test]
fn force_username_case_applies_to_the_name_authz_sees() {
    let pair = Pair::with_subject("basic", crate::common::subject());
    let conf = format!("{CONF}force-username-case = upper\n");
    install(&pair, &conf, "[/]\n* =\nHARRY = r\n");
    pair.both(&[
        "ls",
        "--username",
        "harry",
        "--password",
        "harryssecret",
        "{URL}",
    ]);
    pair.both_fails(&[
        "ls",
        "--username",
        "sally",
        "--password",
        "sallyssecret",
        "{URL}",
    ]);
}

/// A pre-revprop-change hook that allows every change.
fn allow_revprop_changes(repo: &Path) {
    let hook = repo.join("hooks/pre-revprop-change");
    std::fs::write(&hook, "#!/bin/sh\nexit 0\n").expect("write the hook");
    Run::new("chmod").arg("+x").arg(&hook).success();
}

/// Blame follows a file's history until a version the user cannot read; revision
/// properties of a partly readable revision are only its author and date, of an unreadable
/// one none; a revision property can be changed only in a revision the user reads whole.
#[test]
fn blame_and_revprops_match_svnserve_for_every_user() {
    let pair = Pair::with_subject("copies", crate::common::subject());
    install(&pair, CONF, &authz(&repo_name(&pair)));
    for repo in [pair.reference_repo(), pair.subject_repo()] {
        allow_revprop_changes(repo);
    }
    for (label, user) in USERS {
        svelto_testkit::authz_matrix::history_reads(&pair, user);
        let r9 = format!("r9 by {label}");
        let r6 = format!("r6 by {label}");
        for args in [
            &["propget", "--revprop", "-r", "2", "svn:log", "{URL}"][..],
            &["propget", "--revprop", "-r", "6", "svn:author", "{URL}"],
            // r9 is readable by everyone, r6 partly (main.c, trunk/lib), r3 by @devs only.
            &["propset", "--revprop", "-r", "9", "svn:log", &r9, "{URL}"],
            &["propset", "--revprop", "-r", "6", "svn:log", &r6, "{URL}"],
            &["propset", "--revprop", "-r", "3", "note", label, "{URL}"],
            &["propdel", "--revprop", "-r", "3", "note", "{URL}"],
            &["proplist", "--revprop", "-v", "-r", "9", "{URL}"],
        ] {
            both_any(&pair, user, args);
        }
    }
}

/// `svnsync init` + `sync` of side `side` into a fresh FSFS mirror as `user`: whether it
/// succeeded, svnsync's normalized output, and the mirror's dump (UUID masked).
fn sync_as(pair: &Pair, side: usize, user: &[&str]) -> (bool, String, Vec<u8>) {
    let mirror = svnadmin_create();
    allow_revprop_changes(mirror.path());
    let source: Vec<&str> = user
        .iter()
        .map(|a| match *a {
            "--username" => "--source-username",
            "--password" => "--source-password",
            other => other,
        })
        .collect();
    let url = mirror.url();
    let mut text = String::new();
    let mut ok = true;
    for mut args in [
        vec!["init", url.as_str(), "{URL}"],
        vec!["sync", url.as_str()],
    ] {
        args.splice(1..1, source.iter().copied());
        let out = pair.run_on(side, Path::new(""), "svnsync", &args);
        text.push_str(&String::from_utf8_lossy(&pair.normalize(side, &out.stdout)));
        text.push_str(&String::from_utf8_lossy(&pair.normalize(side, &out.stderr)));
        if !out.success() {
            ok = false;
            break;
        }
    }
    let dump = mirror.dump(&["-r", "1:HEAD", "--incremental"]);
    (ok, text.replace(&url, "{MIRROR}"), with_uuid(&dump, "UUID"))
}

/// svnsync (replay-range) from both servers as each user gives the same mirror: unreadable
/// changes left out, copies from unreadable sources turned into adds, partly readable
/// revisions without their log message.
#[test]
fn svnsync_mirrors_match_svnserve_for_every_user() {
    let pair = Pair::with_subject("copies", crate::common::subject());
    // The matrix's rules (svnsync stops at a revision the mirror cannot take, on both),
    // then rules that hide trunk/docs (but from sally) and trunk/lib/b.c: their changes are
    // left out, and the copies made from them (r8, r12) arrive as adds with contents.
    let hidden = "[/]\n* = r\n[/trunk/docs]\n* =\nsally = r\n[/trunk/lib/b.c]\n* =\n";
    for (rules, expect_ok) in [
        (authz(&repo_name(&pair)), &[][..]),
        (hidden.to_string(), &["anon", "harry", "sally", "joe"][..]),
    ] {
        install(&pair, CONF, &rules);
        for (label, user) in USERS {
            let [a, b] = std::thread::scope(|scope| {
                let a = scope.spawn(|| sync_as(&pair, 0, user));
                let b = sync_as(&pair, 1, user);
                [a.join().expect("svnsync from svnserve"), b]
            });
            assert_eq!(
                a.0, b.0,
                "{label}: svnsync succeeded on one side only\n{}\n{}",
                a.1, b.1
            );
            assert_eq!(a.1, b.1, "{label}: svnsync printed different things");
            assert_dumps_eq(&a.2, &b.2, &format!("svnsync-as-{label}"));
            assert_eq!(a.0, expect_ok.contains(label), "{label}: {}", a.1);
            if a.0 && *label == "anon" {
                let dump = String::from_utf8_lossy(&b.2);
                assert!(!dump.contains("Node-path: trunk/docs"), "{dump}");
                assert!(dump.contains("Node-path: tags/mixed/docs/"), "{dump}");
                assert!(!dump.contains("Node-copyfrom-path: trunk/docs"), "{dump}");
            }
        }
    }
}

/// `authz-db` naming a file inside the repository (`^/path`, and a file:// URL), read
/// from the youngest revision: a committed edit applies to the next connection.
#[test]
fn authz_file_stored_in_the_repository() {
    let pair = Pair::with_subject("basic", crate::common::subject());
    let put = |i: usize, rules: &str, what: &str| {
        let repo = [pair.reference_repo(), pair.subject_repo()][i];
        let conf = repo.join("conf/svnserve.conf");
        let before = std::fs::read_to_string(&conf).unwrap_or_default();
        // Committed with an open configuration for a moment.
        std::fs::write(&conf, "[general]\nanon-access = write\n").expect("write svnserve.conf");
        let file = pair.dir().join(format!("{what}-{i}"));
        std::fs::write(&file, rules).expect("write rules");
        let out = pair.run_on(
            i,
            Path::new(""),
            "svnmucc",
            &["-m", what, "put", &file.to_string_lossy(), "{URL}/authz"],
        );
        assert!(out.success(), "{out}");
        std::fs::write(&conf, before).expect("write svnserve.conf");
    };
    for i in 0..2 {
        put(i, "[/]\n* = r\n[/trunk]\n* =\nharry = rw\n", "closed");
        let repo = [pair.reference_repo(), pair.subject_repo()][i];
        std::fs::write(
            repo.join("conf/passwd"),
            svelto_testkit::authz_matrix::passwd(),
        )
        .expect("write passwd");
    }
    let harry = with(
        &["--username", "harry", "--password", "harryssecret"],
        &["ls", "{URL}/trunk"],
    );
    let harry: Vec<&str> = harry.iter().map(String::as_str).collect();
    for db in ["^/authz", "file://{REPO}/authz"] {
        for repo in [pair.reference_repo(), pair.subject_repo()] {
            let db = db.replace("{REPO}", &repo.to_string_lossy());
            std::fs::write(
                repo.join("conf/svnserve.conf"),
                format!(
                    "[general]\nanon-access = read\nauth-access = write\n\
                     password-db = passwd\nauthz-db = {db}\n"
                ),
            )
            .expect("write svnserve.conf");
        }
        pair.both(&["ls", "{URL}"]);
        pair.both_fails(&["ls", "{URL}/trunk"]);
        pair.both(&harry);
    }
    for i in 0..2 {
        put(i, "[/]\n* = r\n", "open");
    }
    pair.both(&["ls", "{URL}/trunk"]);
}

/// A commit that hands over the lock token of a path the user may no longer write is
/// refused as svnserve refuses it; allowed again, it goes through and releases the lock.
#[test]
fn lock_tokens_need_write_access_on_their_paths() {
    let mut pair = Pair::with_subject("copies", crate::common::subject());
    // The log at the end shows a commit made on each side a moment apart.
    pair.mask_dates();
    let rules = authz(&repo_name(&pair));
    // Everyone authenticates (with anonymous read access the checkout would be anonymous
    // and leave out trunk/lib).
    let conf = CONF.replace("anon-access = read", "anon-access = none");
    install(&pair, &conf, &rules);
    let scope = pair.scope("tokens");
    let harry = ["--username", "harry", "--password", "harryssecret"];
    let run = |args: &[&str]| {
        let v = with(&harry, args);
        let argv: Vec<&str> = v.iter().map(String::as_str).collect();
        scope.both_any(&argv)
    };
    run(&["checkout", "{URL}/trunk", "wc"]);
    assert!(run(&["lock", "-m", "mine", "wc/lib/a.c"]).success());
    // Now a.c is read-only for harry; docs he still writes.
    install(
        &pair,
        &conf,
        &format!("{rules}[/trunk/lib/a.c]\nharry = r\n"),
    );
    scope.write("wc/docs/x.txt", b"edited by harry\n");
    scope.write("wc/lib/a.c", b"edited by harry\n");
    // Refused with svnserve's error. (Svelto checks the token's path before the edit, as
    // svnserve does; the edit of a.c would be refused anyway, so the client cannot tell.)
    let refused = run(&["commit", "-m", "edit", "wc"]);
    assert!(!refused.success(), "the commit should be refused");
    refused.expect_stderr("Authorization failed");
    run(&["status", "-u", "wc"]);
    // Allowed again, the same commit goes through and releases the lock.
    install(&pair, &conf, &rules);
    assert!(run(&["commit", "-m", "edit", "wc"]).success());
    run(&["status", "-u", "wc"]);
    both_any(&pair, &harry, &["log", "-v", "-l", "1", "{URL}"]);
}
