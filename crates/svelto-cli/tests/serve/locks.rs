//! Locks against svnserve and Svelto with the same svnserve.conf and passwd: lock, steal,
//! break, commits with and without the token, `--no-unlock`, lock hooks; the same client
//! output on both (dates and lock tokens masked).

use svelto_testkit::{Pair, Run};

use crate::commit::{writable_pair, Script};

fn users_pair() -> Pair {
    let pair = writable_pair("basic");
    pair.set_svnserve_conf(
        "[general]\nanon-access = read\nauth-access = write\npassword-db = passwd\n",
    );
    for repo in [pair.reference_repo(), pair.subject_repo()] {
        std::fs::write(
            repo.join("conf/passwd"),
            "[users]\nalice = apw\nbob = bpw\n",
        )
        .expect("write passwd");
    }
    pair
}

fn hook(pair: &Pair, name: &str, body: &str) {
    for repo in [pair.reference_repo(), pair.subject_repo()] {
        let log = repo.with_extension("lockhooks.log");
        let p = repo.join("hooks").join(name);
        std::fs::write(
            &p,
            format!(
                "#!/bin/sh\n{}",
                body.replace("{LOG}", &log.to_string_lossy())
            ),
        )
        .expect("write hook");
        Run::new("chmod").arg("+x").arg(&p).success();
    }
}

#[test]
fn locking_workflows_match_svnserve() {
    let pair = users_pair();
    let mut s = Script::new(&pair);
    let _scope = pair.scope("locks");
    let w = "locks";
    let alice = ["--username", "alice", "--password", "apw"];
    let bob = ["--username", "bob", "--password", "bpw"];
    // Every step compares exit status and output; `ok` is what svnserve must do.
    let run = |s: &mut Script, who: &[&str], args: &[&str], ok: bool| {
        let mut all: Vec<&str> = who.to_vec();
        all.extend_from_slice(args);
        let out = s.run(w, "svn", &all);
        assert_eq!(out.success(), ok, "svn {}:\n{out}", all.join(" "));
    };
    hook(
        &pair,
        "post-lock",
        "{ echo post-lock \"$2\"; cat; } >> {LOG}\n",
    );
    hook(
        &pair,
        "post-unlock",
        "{ echo post-unlock \"$2\"; cat; } >> {LOG}\n",
    );
    s.write("locks/f.txt", "one\n");
    run(
        &mut s,
        &alice,
        &["import", "-m", "add", "f.txt", "{URL}/l/f.txt"],
        true,
    );
    run(&mut s, &alice, &["checkout", "{URL}/l", "wa"], true);
    run(&mut s, &bob, &["checkout", "{URL}/l", "wb"], true);
    // Anonymous users cannot lock.
    s.svn_fails(w, &["lock", "{URL}/l/f.txt"]);
    run(&mut s, &alice, &["lock", "-m", "editing", "wa/f.txt"], true);
    run(&mut s, &alice, &["info", "{URL}/l/f.txt"], true);
    run(&mut s, &bob, &["status", "-u", "wb"], true);
    // Bob cannot lock it, nor commit a change to it.
    run(&mut s, &bob, &["lock", "wb/f.txt"], false);
    s.append("locks/wb/f.txt", "bob\n");
    run(&mut s, &bob, &["commit", "-m", "bob", "wb"], false);
    run(&mut s, &bob, &["revert", "wb/f.txt"], true);
    // Alice commits with the token; the lock goes with the commit.
    s.append("locks/wa/f.txt", "alice\n");
    run(&mut s, &alice, &["commit", "-m", "alice", "wa"], true);
    run(&mut s, &alice, &["info", "{URL}/l/f.txt"], true);
    // --no-unlock keeps it.
    run(&mut s, &alice, &["lock", "wa/f.txt"], true);
    s.append("locks/wa/f.txt", "again\n");
    run(
        &mut s,
        &alice,
        &["commit", "--no-unlock", "-m", "keep", "wa"],
        true,
    );
    run(&mut s, &alice, &["status", "-u", "wa"], true);
    // Bob may not unlock it, but may break it; then steal it back and forth.
    run(&mut s, &bob, &["unlock", "{URL}/l/f.txt"], false);
    run(&mut s, &bob, &["unlock", "--force", "{URL}/l/f.txt"], true);
    run(&mut s, &alice, &["lock", "wa/f.txt"], true);
    run(&mut s, &bob, &["update", "wb"], true);
    run(
        &mut s,
        &bob,
        &["lock", "--force", "-m", "mine now", "wb/f.txt"],
        true,
    );
    run(&mut s, &alice, &["info", "{URL}/l/f.txt"], true);
    run(&mut s, &alice, &["status", "-u", "wa"], true);
    // What hook scripts see: svnlook lock vs svelto look lock.
    let looked = [
        Run::tool("svnlook")
            .args(["lock"])
            .arg(pair.reference_repo())
            .arg("/l/f.txt")
            .env("TZ", "UTC")
            .success(),
        Run::new(env!("CARGO_BIN_EXE_svelto"))
            .args(["look", "lock"])
            .arg(pair.subject_repo())
            .arg("/l/f.txt")
            .env("TZ", "UTC")
            .success(),
    ]
    .map(|o| {
        let masked = crate::commit::mask_lock_tokens(&crate::commit::mask_dates(&o.stdout));
        String::from_utf8_lossy(&masked).into_owned()
    });
    assert!(looked[0].contains("Owner: bob"), "{}", looked[0]);
    assert_eq!(
        looked[0], looked[1],
        "svnlook lock and svelto look lock differ"
    );
    // Directories and missing paths cannot be locked.
    run(&mut s, &alice, &["lock", "{URL}/l"], false);
    run(&mut s, &alice, &["lock", "{URL}/l/none.txt"], false);
    // svn:needs-lock: read-only until locked.
    run(&mut s, &bob, &["unlock", "wb/f.txt"], true);
    run(&mut s, &alice, &["update", "wa"], true);
    run(
        &mut s,
        &alice,
        &["propset", "svn:needs-lock", "*", "wa/f.txt"],
        true,
    );
    run(&mut s, &alice, &["commit", "-m", "needs-lock", "wa"], true);
    run(&mut s, &bob, &["update", "wb"], true);
    run(&mut s, &bob, &["lock", "wb/f.txt"], true);
    run(&mut s, &bob, &["unlock", "wb/f.txt"], true);
    // A pre-lock hook may refuse.
    hook(&pair, "pre-lock", "echo 'locks are frozen' >&2\nexit 1\n");
    run(&mut s, &alice, &["lock", "wa/f.txt"], false);
    let logs = [pair.reference_repo(), pair.subject_repo()]
        .map(|r| std::fs::read_to_string(r.with_extension("lockhooks.log")).unwrap_or_default());
    assert!(logs[0].contains("post-lock alice"), "{}", logs[0]);
    assert_eq!(logs[0], logs[1], "the lock hooks saw different things");
    s.assert_same_repositories();
}

#[test]
fn locks_survive_a_restart() {
    let pair = users_pair();
    let mut s = Script::new(&pair);
    let _scope = pair.scope("relock");
    let alice = ["--username", "alice", "--password", "apw"];
    s.write("relock/f.txt", "one\n");
    let mut args: Vec<&str> = alice.to_vec();
    args.extend(["import", "-m", "add", "f.txt", "{URL}/f.txt"]);
    s.svn("relock", &args);
    let mut args: Vec<&str> = alice.to_vec();
    args.extend(["lock", "-m", "kept", "{URL}/f.txt"]);
    s.svn("relock", &args);
    // Another server process on the same repository (what a restart starts) sees it.
    let root = pair.subject_repo().parent().expect("root").to_path_buf();
    let name = pair
        .subject_repo()
        .file_name()
        .expect("name")
        .to_string_lossy()
        .into_owned();
    let log = pair.dir().join("second.log");
    let second = svelto_testkit::Svelto::start_with(
        std::path::Path::new(env!("CARGO_BIN_EXE_svelto")),
        &root,
        &log,
        &[],
    );
    let out = pair.client().svn(
        &["info", &format!("{}/f.txt", second.url(&name))],
        pair.dir(),
    );
    assert!(out.success(), "{out}");
    assert!(
        out.stdout_text().contains("Lock Owner: alice"),
        "{}",
        out.stdout_text()
    );
    assert!(out.stdout_text().contains("kept"), "{}", out.stdout_text());
}

/// `svn update` keeps the lock token of a lock the repository still holds (`At revision N.`,
/// the working copy still shows `K`), and removes the token of a lock another user broke
/// (`B`), as svnserve does: the update report checks each reported token against the
/// repository's locks.
#[test]
fn update_keeps_held_locks_and_drops_broken_ones() {
    let pair = users_pair();
    let mut s = Script::new(&pair);
    let _scope = pair.scope("uplocks");
    let w = "uplocks";
    let alice = ["--username", "alice", "--password", "apw"];
    let bob = ["--username", "bob", "--password", "bpw"];
    let run = |s: &mut Script, who: &[&str], args: &[&str]| {
        let mut all: Vec<&str> = who.to_vec();
        all.extend_from_slice(args);
        let out = s.run(w, "svn", &all);
        assert!(out.success(), "svn {}:\n{out}", all.join(" "));
        out
    };
    s.write("uplocks/f.txt", "one\n");
    s.write("uplocks/g.txt", "two\n");
    run(
        &mut s,
        &alice,
        &["import", "-m", "add", "f.txt", "{URL}/u/f.txt"],
    );
    run(
        &mut s,
        &alice,
        &["import", "-m", "add", "g.txt", "{URL}/u/g.txt"],
    );
    run(&mut s, &alice, &["checkout", "{URL}/u", "wa"]);
    run(
        &mut s,
        &alice,
        &["lock", "-m", "mine", "wa/f.txt", "wa/g.txt"],
    );
    // A plain update, and one after another commit: the locks stay in the working copy.
    let up = run(&mut s, &alice, &["update", "wa"]);
    assert!(up.stdout_text().contains("At revision"), "{up}");
    assert!(!up.stdout_text().contains("B "), "{up}");
    run(&mut s, &alice, &["mkdir", "-m", "more", "{URL}/u/d"]);
    run(&mut s, &alice, &["update", "wa"]);
    let st = run(&mut s, &alice, &["status", "wa"]);
    assert_eq!(st.stdout_text().matches("K ").count(), 2, "{st}");
    // Bob breaks one lock: alice's next update removes that token only.
    run(&mut s, &bob, &["unlock", "--force", "{URL}/u/g.txt"]);
    let up = run(&mut s, &alice, &["update", "wa"]);
    assert!(up.stdout_text().contains("B  "), "{up}");
    let st = run(&mut s, &alice, &["status", "wa"]);
    assert_eq!(st.stdout_text().matches("K ").count(), 1, "{st}");
    // The kept token still commits.
    s.append("uplocks/wa/f.txt", "alice\n");
    run(&mut s, &alice, &["commit", "-m", "with the lock", "wa"]);
    s.assert_same_repositories();
}

/// The pre-commit hook reads the commit's lock tokens on standard input with the paths as
/// svnserve writes them: as the client sent them, relative to its session URL.
#[test]
fn pre_commit_hook_sees_lock_tokens_as_svnserve() {
    let pair = users_pair();
    let mut s = Script::new(&pair);
    let _scope = pair.scope("hooktokens");
    let w = "hooktokens";
    let alice = ["--username", "alice", "--password", "apw"];
    let run = |s: &mut Script, args: &[&str]| {
        let mut all: Vec<&str> = alice.to_vec();
        all.extend_from_slice(args);
        let out = s.run(w, "svn", &all);
        assert!(out.success(), "svn {}:\n{out}", all.join(" "));
    };
    s.write("hooktokens/f.txt", "one\n");
    run(
        &mut s,
        &["import", "-m", "add", "f.txt", "{URL}/t/src/f.txt"],
    );
    run(&mut s, &["checkout", "{URL}/t/src", "wc"]);
    run(&mut s, &["lock", "wc/f.txt"]);
    hook(&pair, "pre-commit", "cat > {LOG}\n");
    s.append("hooktokens/wc/f.txt", "two\n");
    run(&mut s, &["commit", "-m", "locked", "wc"]);
    let seen = [pair.reference_repo(), pair.subject_repo()].map(|r| {
        let text = std::fs::read(r.with_extension("lockhooks.log")).unwrap_or_default();
        String::from_utf8_lossy(&crate::commit::mask_lock_tokens(&text)).into_owned()
    });
    assert!(seen[0].starts_with("LOCK-TOKENS:\nf.txt|"), "{}", seen[0]);
    assert_eq!(seen[0], seen[1], "the pre-commit hooks saw different input");
}

/// A pre-lock hook's standard output is the lock's token, byte for byte, checked as
/// Subversion checks tokens (W160037 for a bad scheme or a trailing newline); a failing
/// post-lock or post-unlock hook leaves the paths locked (unlocked) and reaches the client
/// as a warning. The same output as svnserve's at every step.
#[test]
fn lock_hook_tokens_and_post_hook_failures_match_svnserve() {
    let pair = users_pair();
    let mut s = Script::new(&pair);
    let _scope = pair.scope("hooktoken");
    let w = "hooktoken";
    let alice = ["--username", "alice", "--password", "apw"];
    let run = |s: &mut Script, args: &[&str], ok: bool| {
        let mut all: Vec<&str> = alice.to_vec();
        all.extend_from_slice(args);
        let out = s.run(w, "svn", &all);
        assert_eq!(out.success(), ok, "svn {}:\n{out}", all.join(" "));
        out
    };
    s.write("hooktoken/f.txt", "one\n");
    run(
        &mut s,
        &["import", "-m", "add", "f.txt", "{URL}/h/f.txt"],
        true,
    );
    let lock_of = |which: usize| {
        let repo = [pair.reference_repo(), pair.subject_repo()][which].to_path_buf();
        let out = if which == 0 {
            Run::tool("svnlook")
                .arg("lock")
                .arg(&repo)
                .arg("/h/f.txt")
                .success()
        } else {
            Run::new(env!("CARGO_BIN_EXE_svelto"))
                .args(["look", "lock"])
                .arg(&repo)
                .arg("/h/f.txt")
                .success()
        };
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .find_map(|l| l.strip_prefix("UUID Token: ").map(str::to_string))
    };

    // The hook's token is the lock's token.
    hook(
        &pair,
        "pre-lock",
        "printf 'opaquelocktoken:from-the-hook'\n",
    );
    run(&mut s, &["lock", "{URL}/h/f.txt"], true);
    for side in 0..2 {
        assert_eq!(
            lock_of(side).as_deref(),
            Some("opaquelocktoken:from-the-hook"),
            "side {side}"
        );
    }
    run(&mut s, &["unlock", "--force", "{URL}/h/f.txt"], true);

    // A token that is no opaquelocktoken, or that ends with echo's newline, is refused.
    for body in [
        "printf 'not-a-token'\n",
        "echo 'opaquelocktoken:with-newline'\n",
    ] {
        hook(&pair, "pre-lock", body);
        let out = run(&mut s, &["lock", "{URL}/h/f.txt"], false);
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("W160037"),
            "{out}"
        );
        assert_eq!(lock_of(1), None);
    }
    std::fs::remove_file(pair.reference_repo().join("hooks/pre-lock")).expect("rm");
    std::fs::remove_file(pair.subject_repo().join("hooks/pre-lock")).expect("rm");

    // Failing post hooks: the lock is taken (released) all the same; the client reports
    // the hook's failure (E165008/E165009) and exits 1, as with svnserve.
    hook(&pair, "post-lock", "echo 'post-lock says no' >&2\nexit 3\n");
    hook(
        &pair,
        "post-unlock",
        "echo 'post-unlock says no' >&2\nexit 4\n",
    );
    let out = run(&mut s, &["lock", "-m", "mine", "{URL}/h/f.txt"], false);
    let text = format!("{out}");
    assert!(
        text.contains("E165008") && text.contains("post-lock says no"),
        "{text}"
    );
    assert!(lock_of(1).is_some(), "the lock must be held");
    let out = run(&mut s, &["unlock", "--force", "{URL}/h/f.txt"], false);
    let text = format!("{out}");
    assert!(
        text.contains("E165009") && text.contains("post-unlock says no"),
        "{text}"
    );
    assert_eq!(lock_of(1), None, "the lock must be gone");
    s.assert_same_repositories();
}
