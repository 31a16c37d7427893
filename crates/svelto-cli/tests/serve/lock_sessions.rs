//! The lock sessions of the commit suites, run against any pair of servers with users
//! `alice` (password `apw`) and `bob` (`bpw`) who may write and anonymous users who may
//! only read: svn:// (`serve/locks.rs`: svnserve and Svelto) and http:// (`http/locks.rs`:
//! Apache with mod_dav_svn and Svelto). Every command's output is compared (dates and lock
//! tokens masked), and the repositories' dumps at the end.

use svelto_testkit::{Pair, Run};

use crate::sessions::Script;

/// Installs hook `name` in both repositories (runnable by whoever Apache's children run
/// as); `{LOG}` in `body` names a log file beside each repository.
pub fn hook(pair: &Pair, name: &str, body: &str) {
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
        Run::new("chmod").arg("a+rx").arg(&p).success();
    }
}

/// Lock, comments, a refused lock and commit by another user, commit with the token (the
/// lock released), `--no-unlock`, unlock refused and `--force` break, steal, what
/// `svnlook lock` shows, directories and missing paths refused, `svn:needs-lock`, a refusing
/// pre-lock hook; the post-lock and post-unlock hooks see the same on both sides.
pub fn locking_workflows(pair: &Pair) {
    let mut s = Script::new(pair);
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
        pair,
        "post-lock",
        "{ echo post-lock \"$2\"; cat; } >> {LOG}\n",
    );
    hook(
        pair,
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
        let masked = crate::sessions::mask_lock_tokens(&crate::sessions::mask_dates(&o.stdout));
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
    hook(pair, "pre-lock", "echo 'locks are frozen' >&2\nexit 1\n");
    run(&mut s, &alice, &["lock", "wa/f.txt"], false);
    let logs = [pair.reference_repo(), pair.subject_repo()]
        .map(|r| std::fs::read_to_string(r.with_extension("lockhooks.log")).unwrap_or_default());
    assert!(logs[0].contains("post-lock alice"), "{}", logs[0]);
    assert_eq!(logs[0], logs[1], "the lock hooks saw different things");
    s.assert_same_repositories();
}

/// `svn update` keeps the lock token of a lock the repository still holds (`At revision N.`,
/// the working copy still shows `K`), and removes the token of a lock another user broke
/// (`B`), as svnserve does: the update report checks each reported token against the
/// repository's locks.
pub fn update_keeps_held_locks_and_drops_broken_ones(pair: &Pair) {
    let mut s = Script::new(pair);
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
    if pair.reference_url().starts_with("http") {
        // ra_serf sends one LOCK per path at once: the order it reports them in varies.
        run(&mut s, &alice, &["lock", "-m", "mine", "wa/f.txt"]);
        run(&mut s, &alice, &["lock", "-m", "mine", "wa/g.txt"]);
    } else {
        run(
            &mut s,
            &alice,
            &["lock", "-m", "mine", "wa/f.txt", "wa/g.txt"],
        );
    }
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
/// the reference server writes them (svnserve: as the client sent them, relative to its
/// session URL).
pub fn pre_commit_hook_sees_lock_tokens(pair: &Pair) {
    let mut s = Script::new(pair);
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
    hook(pair, "pre-commit", "cat > {LOG}\n");
    s.append("hooktokens/wc/f.txt", "two\n");
    run(&mut s, &["commit", "-m", "locked", "wc"]);
    let seen = [pair.reference_repo(), pair.subject_repo()].map(|r| {
        let text = std::fs::read(r.with_extension("lockhooks.log")).unwrap_or_default();
        String::from_utf8_lossy(&crate::sessions::mask_lock_tokens(&text)).into_owned()
    });
    assert!(seen[0].starts_with("LOCK-TOKENS:\n"), "{}", seen[0]);
    assert!(seen[0].contains("f.txt|{TOKEN}"), "{}", seen[0]);
    assert_eq!(seen[0], seen[1], "the pre-commit hooks saw different input");
}

/// A pre-lock hook's standard output is the lock's token, byte for byte, checked as
/// Subversion checks tokens (W160037 for a bad scheme or a trailing newline); a failing
/// post-lock or post-unlock hook leaves the paths locked (unlocked). svnserve reports both
/// failures to the client (which exits 1); mod_dav_svn (`http`) only logs the post-lock
/// hook's and answers the post-unlock hook's failure without its output. The same output as
/// the reference server's at every step.
pub fn lock_hook_tokens_and_post_hook_failures(pair: &Pair, http: bool) {
    let mut s = Script::new(pair);
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
    hook(pair, "pre-lock", "printf 'opaquelocktoken:from-the-hook'\n");
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
        hook(pair, "pre-lock", body);
        let out = run(&mut s, &["lock", "{URL}/h/f.txt"], false);
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("W160037"),
            "{out}"
        );
        assert_eq!(lock_of(1), None);
    }
    std::fs::remove_file(pair.reference_repo().join("hooks/pre-lock")).expect("rm");
    std::fs::remove_file(pair.subject_repo().join("hooks/pre-lock")).expect("rm");

    // Failing post hooks: the lock is taken (released) all the same.
    hook(pair, "post-lock", "echo 'post-lock says no' >&2\nexit 3\n");
    hook(
        pair,
        "post-unlock",
        "echo 'post-unlock says no' >&2\nexit 4\n",
    );
    let out = run(&mut s, &["lock", "-m", "mine", "{URL}/h/f.txt"], http);
    let text = format!("{out}");
    assert_eq!(
        text.contains("E165008") && text.contains("post-lock says no"),
        !http,
        "{text}"
    );
    assert!(lock_of(1).is_some(), "the lock must be held");
    let out = run(&mut s, &["unlock", "--force", "{URL}/h/f.txt"], false);
    let text = format!("{out}");
    assert!(text.contains("E165009"), "{text}");
    assert_eq!(text.contains("post-unlock says no"), !http, "{text}");
    assert_eq!(lock_of(1), None, "the lock must be gone");
    s.assert_same_repositories();
}
