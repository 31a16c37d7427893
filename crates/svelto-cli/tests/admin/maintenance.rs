//! `svelto admin lstxns`, `rmtxns`, `recover`, `upgrade`, `pack`, `build-repcache`,
//! `deltify`, `rev-size`: what svnadmin prints where the outputs are comparable, the
//! transactions a commit's hooks see, and the sizes of revisions.

use std::path::Path;

use svelto_testkit::serve::SvnClient;
use svelto_testkit::{require_tool, scenario_dump, tempdir};

use crate::common::{svelto, write_file, SveltoRepo};
use crate::hotcopy::Served;
use crate::pair::{Pair, REPO};

#[test]
fn maintenance_subcommands_print_as_svnadmin() {
    let pair = Pair::with_dump(&scenario_dump("basic"));
    let ok: &[&[&str]] = &[
        &["lstxns", REPO],
        &["lstxns", REPO, "-r", "1"],
        &["rmtxns", REPO],
        &["rmtxns", REPO, "1-1", "2-abc"],
        &["rmtxns", "-q", REPO, "1-1"],
        &["recover", REPO],
        &["recover", "--wait", REPO],
        &["upgrade", REPO],
        &["build-repcache", REPO],
        &["build-repcache", REPO, "-r", "1:2"],
        &["build-repcache", REPO, "-r", "0"],
        &["build-repcache", "-q", REPO],
        &["deltify", REPO],
        &["deltify", REPO, "-r", "0:2"],
        &["deltify", "-q", REPO, "-r", "1"],
        &["deltify", "-M", "64", REPO],
    ];
    for args in ok {
        let seen = pair.same(args);
        assert_eq!(seen.code, Some(0), "{args:?}");
    }
    let refused: &[&[&str]] = &[
        &["lstxns", REPO, "-r", "1:2"],
        &["lstxns", REPO, "-r", "99"],
        &["lstxns", REPO, "-r", "PREV"],
        &["build-repcache", REPO, "-r", "2:1"],
        &["build-repcache", REPO, "-r", "99"],
        &["deltify", REPO, "-r", "99"],
        &["deltify", REPO, "-r", "2:1"],
        &["rev-size", REPO],
        &["rev-size", REPO, "-r", "HEAD"],
        &["rev-size", REPO, "-r", "1:2"],
        &["rev-size", REPO, "-r", "99"],
        &["recover", "/nonexistent/repo"],
        &["upgrade", REPO, "-q"],
        &["pack", "/nonexistent/repo"],
    ];
    for args in refused {
        let seen = pair.same(args);
        assert_eq!(seen.code, Some(1), "{args:?}");
    }
    let seen = pair.same(&["recover", REPO]);
    assert!(
        seen.stdout.starts_with("Repository lock acquired.\n"),
        "{}",
        seen.stdout
    );
    pair.sv.verify();
}

/// Subversion's svnadmin_tests 13 (`fsfs_recover_db_current`), on a Svelto repository:
/// `db/current` moved aside, then written as one revision short, then as "fish": each time
/// `recover` rebuilds it from the files, byte for byte, and says what it found; stderr
/// stays empty. Bytes an unfinished commit left past it are named and cut.
#[test]
fn recover_rebuilds_a_missing_or_damaged_current() {
    let repo = SveltoRepo::create();
    repo.load(&scenario_dump("basic"), &[]);
    let youngest = repo.info().youngest;
    assert!(youngest >= 3, "the scenario has {youngest} revisions");
    let current = repo.path().join("db").join("current");
    let expected = std::fs::read_to_string(&current).expect("db/current");
    let recover = || {
        let out = svelto()
            .args(["admin", "recover"])
            .arg(repo.path())
            .success();
        assert_eq!(out.stderr_text(), "", "{out}");
        assert_eq!(
            std::fs::read_to_string(&current).expect("db/current"),
            expected,
            "{out}"
        );
        assert!(
            out.stdout_text()
                .ends_with(&format!("The latest repos revision is {youngest}.\n")),
            "{out}"
        );
        out.stdout_text()
    };

    std::fs::rename(&current, repo.path().join("db").join("was_current")).expect("rename");
    let said = recover();
    assert!(
        said.contains(&format!(
            "db/current was missing; rebuilt from the files: youngest revision {youngest}.\n"
        )),
        "{said}"
    );
    for bad in [format!("{}\n", youngest - 1), "1\n".into(), "fish\n".into()] {
        std::fs::write(&current, &bad).expect("write");
        let said = recover();
        assert!(
            said.contains("db/current did not hold up (repository corrupt: current"),
            "{said}"
        );
    }
    // Nothing found: svnadmin's words alone.
    let said = recover();
    assert!(!said.contains("db/current"), "{said}");

    // A commit cut short before its db/current: its bytes are named, then cut.
    let data = repo.path().join("db").join("data");
    let len = std::fs::metadata(&data).expect("data").len();
    std::fs::OpenOptions::new()
        .append(true)
        .open(&data)
        .and_then(|mut f| std::io::Write::write_all(&mut f, &[9; 77]))
        .expect("append");
    std::fs::remove_file(&current).expect("rm");
    let said = recover();
    assert!(
        said.contains(&format!(
            "db/data has 77 bytes past its committed length {len}"
        )),
        "{said}"
    );
    assert_eq!(std::fs::metadata(&data).expect("data").len(), len);
    repo.verify();
}

#[test]
fn pack_says_that_nothing_is_packed() {
    let repo = SveltoRepo::create();
    let out = svelto().args(["admin", "pack"]).arg(repo.path()).success();
    assert_eq!(
        out.stdout_text(),
        "svnadmin: Warning - this repository is not sharded. Packing has no effect.\n"
    );
    let out = svelto()
        .args(["admin", "pack", "-q"])
        .arg(repo.path())
        .success();
    assert_eq!(out.stdout_text(), "");
}

/// A dump of revision 1 alone, adding `name` with `bytes`.
fn one_file_dump(name: &str, bytes: &[u8]) -> Vec<u8> {
    let mut d = b"SVN-fs-dump-format-version: 2\n\n".to_vec();
    d.extend_from_slice(
        b"Revision-number: 1\nProp-content-length: 10\nContent-length: 10\n\nPROPS-END\n\n",
    );
    d.extend_from_slice(
        format!(
            "Node-path: {name}\nNode-kind: file\nNode-action: add\nText-content-length: {len}\n\
             Content-length: {len}\n\n",
            len = bytes.len()
        )
        .as_bytes(),
    );
    d.extend_from_slice(bytes);
    d.extend_from_slice(b"\n\n");
    d
}

fn rev_size(repo: &Path, rev: u64) -> u64 {
    let out = svelto()
        .args(["admin", "rev-size", "-q", "-r", &rev.to_string()])
        .arg(repo)
        .success();
    out.stdout_text().trim().parse().expect("a number")
}

#[test]
fn rev_size_is_what_the_commit_added() {
    let repo = SveltoRepo::create();
    // 200,000 bytes that do not compress.
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let bytes: Vec<u8> = (0..200_000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    let db = repo.path().join("db");
    let len = |f: &str| std::fs::metadata(db.join(f)).expect(f).len();
    let store = || len("data") + len("revs") + len("meta");
    let before = store();
    let dump = write_file(repo.dir(), "one.dump", &one_file_dump("big", &bytes));
    repo.load(&dump, &[]);
    let r0 = rev_size(repo.path(), 0);
    let r1 = rev_size(repo.path(), 1);
    assert!((1..1_000).contains(&r0), "r0: {r0}");
    assert!((200_000..202_000).contains(&r1), "r1: {r1}");
    // Revision 0 is all of a new repository's store but the headers; revision 1 what
    // its commit added (the dedup index aside).
    assert_eq!(r0 + 3 * 16, before);
    assert_eq!(r1, store() - before);
    let out = svelto()
        .args(["admin", "rev-size", "-r", "1"])
        .arg(repo.path())
        .success();
    assert_eq!(out.stdout_text(), format!("{r1:>12} bytes in revision 1\n"));
}

/// A pre-commit hook that runs `svelto admin` on its transaction and records what it
/// printed in `REPO/hook.out`.
fn recording_hook(repo: &Path) {
    let sv = env!("CARGO_BIN_EXE_svelto");
    let script = format!(
        "REPOS=\"$1\"; TXN=\"$2\"; OUT=\"$REPOS/hook.out\"\n\
         echo \"txn $TXN\" > \"$OUT\"\n\
         echo lstxns >> \"$OUT\"; '{sv}' admin lstxns \"$REPOS\" >> \"$OUT\" 2>&1\n\
         echo lstxns-r0 >> \"$OUT\"; '{sv}' admin lstxns -r 0 \"$REPOS\" >> \"$OUT\" 2>&1\n\
         echo rmtxns >> \"$OUT\"; '{sv}' admin rmtxns \"$REPOS\" \"$TXN\" >> \"$OUT\" 2>&1\n\
         echo recover >> \"$OUT\"; '{sv}' admin recover \"$REPOS\" >> \"$OUT\" 2>&1; echo \"rc=$?\" >> \"$OUT\"\n\
         exit 0\n"
    );
    crate::common::install_hook(repo, "pre-commit", &script);
}

/// The pre-commit hook's transaction is staged apart from the revision files and the
/// writer is not held while the hook runs: `lstxns` lists it, `rmtxns` removes it (as
/// svnadmin removes an FSFS transaction; the commit, which applies its recorded edit, still
/// lands), and `recover` gets the write lock.
#[test]
fn a_commit_in_its_hooks_is_a_transaction() {
    require_tool("svnmucc");
    let served = Served::new();
    let work = tempdir();
    let client = SvnClient::new();
    let mkdir = |name: &str| {
        let out = client
            .command("svnmucc", work.path())
            .args(["-m", "m", "mkdir", &format!("{}/{name}", served.url())])
            .output();
        assert!(out.success(), "{out}");
    };
    mkdir("a");
    recording_hook(&served.repo);
    mkdir("b");
    let text = std::fs::read_to_string(served.repo.join("hook.out")).expect("hook ran");
    let txn = text
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("txn "))
        .expect("txn line")
        .to_string();
    assert!(txn.starts_with("1-"), "{text}");
    let expected = format!(
        "txn {txn}\nlstxns\n{txn}\nlstxns-r0\nrmtxns\nTransaction '{txn}' removed.\n\
         recover\nRepository lock acquired.\n\
         Please wait; recovering the repository may take some time...\n\n\
         Recovery completed.\nThe latest repos revision is 1.\nrc=0\n"
    );
    assert_eq!(text, expected);
    // The commit went through, and its transaction is gone.
    let out = svelto()
        .args(["admin", "lstxns"])
        .arg(&served.repo)
        .success();
    assert_eq!(out.stdout_text(), "");
    let out = svelto()
        .args(["admin", "recover"])
        .arg(&served.repo)
        .success();
    assert!(
        out.stdout_text()
            .ends_with("The latest repos revision is 2.\n"),
        "{out}"
    );
}
