//! `svelto admin lock`, `unlock`, `lslocks`, `rmlocks` against svnadmin's: output, errors,
//! hooks, and the locks as the server then shows them to a client.

use svelto_testkit::scenario_dump;
use svelto_testkit::serve::{Svelto, SvnClient};

use crate::common::write_file;
use crate::pair::{Pair, Seen, REPO};

const TOKEN: &str = "opaquelocktoken:01234567-89ab-cdef-89ab-cdef01234567";

/// `lslocks` output with what differs between runs (creation date, new tokens) masked, and
/// the locks sorted by path (svnadmin lists them in hash order).
fn masked(seen: &Seen) -> String {
    let text = seen
        .stdout
        .lines()
        .map(|l| {
            if l.starts_with("Created: ") {
                "Created: (date)".to_string()
            } else if l.starts_with("UUID Token: ") && !l.contains(TOKEN) {
                "UUID Token: (new)".to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    let mut locks: Vec<&str> = text.split("Path: ").map(|l| l.trim_end()).collect();
    locks.sort();
    locks.join("\n--\nPath: ")
}

fn hook(pair: &Pair, name: &str, body: &str) {
    for repo in [pair.fs.path(), pair.sv.path()] {
        crate::common::install_hook(repo, name, body);
    }
}

#[test]
fn lock_unlock_lslocks_rmlocks_as_svnadmin() {
    let pair = Pair::with_dump(&scenario_dump("basic"));
    let dir = pair.sv.dir().to_path_buf();
    let c1 = write_file(&dir, "c1", b"a comment\n");
    let c1 = c1.to_str().expect("utf-8");
    let c2 = write_file(&dir, "c2", b"line1\nline2");
    let c2 = c2.to_str().expect("utf-8");
    let bad = write_file(&dir, "bad", b"character \x01 is invalid");
    let bad = bad.to_str().expect("utf-8");
    let files = svelto_testkit::Run::tool("svnlook")
        .args(["tree", "--full-paths"])
        .arg(pair.fs.path())
        .success()
        .stdout_text();
    let mut files = files.lines().filter(|l| !l.ends_with('/'));
    let (f1, f2) = (
        files.next().expect("a file in the fixture"),
        files.next().expect("a second file"),
    );
    let dir_path = "trunk";
    let slashed = format!("/{f1}");
    let steps: Vec<Vec<&str>> = vec![
        vec!["lock", REPO, f1, "alice", bad],
        vec!["lock", REPO, f1, "alice", c1],
        vec!["lock", REPO, f1, "bob", c1],
        vec!["lock", REPO, &slashed, "bob", c1],
        vec!["lock", REPO, dir_path, "alice", c1],
        vec!["lock", REPO, "no/such/file", "alice", c1],
        vec!["lock", REPO, f2, "alice", c2, "not-a-token"],
        vec!["lock", REPO, f2, "carol", c2, TOKEN, "--bypass-hooks"],
        vec!["lock", REPO, f2, "carol", "/nonexistent/comment"],
        vec!["lslocks", REPO, f1, f2],
        vec!["unlock", REPO, f2, "carol", "opaquelocktoken:wrong"],
        vec!["unlock", REPO, f2, "dave", TOKEN],
        vec!["unlock", REPO, f2, "carol"],
        vec!["rmlocks", REPO],
        vec!["rmlocks", REPO, f1, "no/lock/here"],
        vec!["lock", REPO, "-q", f1, "alice", c1],
        vec!["unlock", REPO, f2, "carol", TOKEN],
        vec!["unlock", REPO, f2, "carol", TOKEN],
        vec!["rmlocks", REPO, "-q", f1],
    ];
    for step in &steps {
        pair.same(step);
        let a = pair.run_with(&["lslocks", REPO], |r| r);
        let (fs, sv) = (
            crate::pair::seen(&a.0, pair.fs.path()),
            crate::pair::seen(&a.1, pair.sv.path()),
        );
        assert_eq!(masked(&sv), masked(&fs), "lslocks after {step:?}");
    }
}

#[test]
fn lock_hooks_run_unless_bypassed() {
    let pair = Pair::with_dump(&scenario_dump("basic"));
    let c = write_file(pair.sv.dir(), "c", b"comment");
    let c = c.to_str().expect("utf-8");
    hook(&pair, "pre-lock", "echo no locks today >&2; exit 1\n");
    hook(&pair, "pre-unlock", "echo no unlocks today >&2; exit 1\n");
    let file = "trunk/README.txt";
    let seen = pair.same(&["lock", REPO, file, "alice", c, TOKEN]);
    if seen.code == Some(1) && seen.stderr.contains("E160013") {
        panic!("the fixture has no {file}: {seen:?}");
    }
    assert!(seen.stderr.contains("E165001"), "{seen:?}");
    pair.same(&["lock", REPO, file, "alice", c, TOKEN, "--bypass-hooks"]);
    let seen = pair.same(&["unlock", REPO, file, "alice", TOKEN]);
    assert!(seen.stderr.contains("no unlocks today"), "{seen:?}");
    pair.same(&["unlock", REPO, "--bypass-hooks", file, "alice", TOKEN]);
    // A pre-lock hook's output is the lock's token.
    hook(&pair, "pre-lock", "printf opaquelocktoken:from-the-hook\n");
    pair.same(&["lock", REPO, file, "alice", c]);
    let seen = pair.same(&["lslocks", REPO]);
    assert!(
        seen.stdout.contains("opaquelocktoken:from-the-hook"),
        "{seen:?}"
    );
}

#[test]
fn a_lock_made_by_admin_is_the_servers_lock() {
    let pair = Pair::with_dump(&scenario_dump("basic"));
    let c = write_file(pair.sv.dir(), "c", b"held by the admin");
    let c = c.to_str().expect("utf-8");
    let file = "trunk/README.txt";
    pair.same(&["lock", REPO, file, "admin", c, TOKEN]);
    let server = Svelto::start(env!("CARGO_BIN_EXE_svelto").as_ref(), pair.sv.dir()).into_server();
    let client = SvnClient::new();
    let url = format!("{}/{file}", server.url("repo"));
    let out = client.svn(&["info", &url], pair.sv.dir());
    assert!(out.success(), "{out}");
    assert!(
        out.stdout_text().contains(&format!("Lock Token: {TOKEN}")),
        "{out}"
    );
    assert!(out.stdout_text().contains("Lock Owner: admin"), "{out}");
    // rmlocks removes it for the clients too.
    let seen = pair.same(&["rmlocks", REPO, file]);
    assert_eq!(seen.stdout, format!("Removed lock on '/{file}'.\n"));
    let out = client.svn(&["info", &url], pair.sv.dir());
    assert!(!out.stdout_text().contains("Lock Token"), "{out}");
}
