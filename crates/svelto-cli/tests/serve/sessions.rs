//! The client sessions of the commit suites, run against any pair of servers: svn://
//! (`serve/commit.rs`: svnserve and Svelto) and http:// (`http/write.rs`: Apache with
//! mod_dav_svn and Svelto). Each takes a pair whose repositories anonymous clients may
//! write, replays the same commands on both sides, compares every output and, at the
//! end, the repositories' dumps.

use std::path::Path;

use svelto_testkit::{Outcome, Pair, Run};

pub use svelto_testkit::mask_dates;

/// Replaces the name in `transaction 'NAME'` (each server numbers its own) with `{TXN}`.
pub fn mask_txn_names(bytes: &[u8]) -> Vec<u8> {
    let key = b"transaction '";
    let mut out = Vec::with_capacity(bytes.len());
    let mut rest = bytes;
    while let Some(at) = rest.windows(key.len()).position(|w| w == key) {
        out.extend_from_slice(&rest[..at + key.len()]);
        rest = &rest[at + key.len()..];
        let end = rest.iter().position(|&b| b == b'\'').unwrap_or(rest.len());
        out.extend_from_slice(b"{TXN}");
        rest = &rest[end..];
    }
    out.extend_from_slice(rest);
    out
}

/// Replaces lock tokens (`opaquelocktoken:` and a UUID) with `{TOKEN}`.
pub fn mask_lock_tokens(bytes: &[u8]) -> Vec<u8> {
    let key = b"opaquelocktoken:";
    let mut out = Vec::with_capacity(bytes.len());
    let mut rest = bytes;
    while let Some(at) = rest.windows(key.len()).position(|w| w == key) {
        out.extend_from_slice(&rest[..at]);
        out.extend_from_slice(b"{TOKEN}");
        rest = &rest[at + key.len()..];
        let end = rest
            .iter()
            .position(|b| !(b.is_ascii_hexdigit() || *b == b'-'))
            .unwrap_or(rest.len());
        rest = &rest[end..];
    }
    out.extend_from_slice(rest);
    out
}

/// Scripted client sessions on both sides of a pair.
pub struct Script<'p> {
    pub pair: &'p Pair,
    steps: usize,
}

impl<'p> Script<'p> {
    pub fn new(pair: &'p Pair) -> Script<'p> {
        Script { pair, steps: 0 }
    }

    /// `tool ARGS` in `rel` (under each side's work directory) on both sides; exit status,
    /// stdout and stderr must be the same after normalizing. Returns the reference's
    /// outcome.
    pub fn run(&mut self, rel: &str, tool: &str, args: &[&str]) -> Outcome {
        self.compare(rel, tool, args, false)
    }

    /// As `run`, with standard output compared as a set of lines: for listings whose
    /// order is the server's hash order (Apache's `status -u` of several locks). Only the
    /// HTTP suite, which also includes this file, calls it.
    #[allow(dead_code)]
    pub fn run_any_order(&mut self, rel: &str, tool: &str, args: &[&str]) -> Outcome {
        self.compare(rel, tool, args, true)
    }

    fn compare(&mut self, rel: &str, tool: &str, args: &[&str], any_order: bool) -> Outcome {
        self.steps += 1;
        let outcomes = self.pair.run_both(Path::new(rel), tool, args);
        let norm = |i: usize, b: &[u8]| {
            mask_lock_tokens(&mask_txn_names(&mask_dates(&self.pair.normalize(i, b))))
        };
        let sorted = |b: Vec<u8>| {
            if !any_order {
                return b;
            }
            let mut lines: Vec<&[u8]> = b.split(|&c| c == b'\n').collect();
            lines.sort_unstable();
            lines.join(&b'\n')
        };
        let labels = self.pair.labels();
        let a = (
            outcomes[0].status.code(),
            sorted(norm(0, &outcomes[0].stdout)),
            norm(0, &outcomes[0].stderr),
        );
        let b = (
            outcomes[1].status.code(),
            sorted(norm(1, &outcomes[1].stdout)),
            norm(1, &outcomes[1].stderr),
        );
        assert!(
            a == b,
            "step {}: `{tool} {}` (in {rel}) differs:\n--- {}: exit {:?}\n{}\n{}\n--- {}: exit {:?}\n{}\n{}\n{}",
            self.steps,
            args.join(" "),
            labels[0],
            a.0,
            String::from_utf8_lossy(&a.1),
            String::from_utf8_lossy(&a.2),
            labels[1],
            b.0,
            String::from_utf8_lossy(&b.1),
            String::from_utf8_lossy(&b.2),
            self.pair.subject().diagnostics()
        );
        let [first, _] = outcomes;
        first
    }

    /// `svn ARGS` in `rel`, expected to succeed.
    pub fn svn(&mut self, rel: &str, args: &[&str]) -> Outcome {
        let out = self.run(rel, "svn", args);
        assert!(
            out.success(),
            "`svn {}` failed on both sides:\n{out}",
            args.join(" ")
        );
        out
    }

    /// `svn ARGS` in `rel`, expected to fail (the same way on both sides).
    pub fn svn_fails(&mut self, rel: &str, args: &[&str]) -> Outcome {
        let out = self.run(rel, "svn", args);
        assert!(
            !out.success(),
            "`svn {}` succeeded on both sides, expected a failure:\n{out}",
            args.join(" ")
        );
        out
    }

    /// The youngest revision (as the reference reports it; the sides agree or an earlier
    /// step failed).
    pub fn head(&mut self, rel: &str) -> u64 {
        let out = self.svn(rel, &["info", "--show-item", "revision", "{URL}"]);
        out.stdout_text()
            .trim()
            .parse()
            .unwrap_or_else(|e| panic!("svn info printed {:?}: {e}", out.stdout_text()))
    }

    /// Writes a file on both sides (`rel` under the work directories).
    pub fn write(&self, rel: &str, content: &str) {
        for i in 0..2 {
            let p = self.pair.work(i).join(rel);
            if let Some(dir) = p.parent() {
                std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("mkdir {dir:?}: {e}"));
            }
            std::fs::write(&p, content).unwrap_or_else(|e| panic!("write {p:?}: {e}"));
        }
    }

    /// Appends to a file on both sides.
    pub fn append(&self, rel: &str, content: &str) {
        for i in 0..2 {
            let p = self.pair.work(i).join(rel);
            let mut old = std::fs::read(&p).unwrap_or_else(|e| panic!("read {p:?}: {e}"));
            old.extend_from_slice(content.as_bytes());
            std::fs::write(&p, old).unwrap_or_else(|e| panic!("write {p:?}: {e}"));
        }
    }

    /// Both repositories dumped (svnadmin for FSFS, `svelto admin` for Svelto) must be
    /// the same but for dates and the UUID; and `svelto admin verify` must pass.
    pub fn assert_same_repositories(&self) {
        let fsfs = Run::tool("svnadmin")
            .args(["dump", "-q"])
            .arg(self.pair.reference_repo())
            .success();
        let bin = env!("CARGO_BIN_EXE_svelto");
        let ours = if self.pair.is_selftest() {
            Run::tool("svnadmin")
                .args(["dump", "-q"])
                .arg(self.pair.subject_repo())
                .success()
        } else {
            let bin = Path::new(bin);
            self.pair.subject_admin(bin, &["verify", "-q"]).success();
            self.pair.subject_admin(bin, &["dump", "-q"]).success()
        };
        let mask = |b: &[u8]| {
            let text = mask_dates(b);
            let mut out = Vec::new();
            for line in text.split_inclusive(|&c| c == b'\n') {
                if line.starts_with(b"UUID: ") {
                    out.extend_from_slice(b"UUID: {UUID}\n");
                } else {
                    out.extend_from_slice(line);
                }
            }
            out
        };
        let (a, b) = (mask(&fsfs.stdout), mask(&ours.stdout));
        if a != b {
            let d = svelto_testkit::serve::first_difference(self.pair.labels(), &a, &b)
                .unwrap_or_default();
            panic!("the repositories' dumps differ after the session:\n{d}");
        }
    }
}

pub fn two_working_copies_edit_commit_conflict_and_update(pair: &Pair) {
    let mut s = Script::new(pair);
    let _scope = pair.scope("two-wcs");
    let w = "two-wcs";
    s.svn(
        w,
        &[
            "mkdir",
            "-m",
            "layout",
            "{URL}/proj",
            "{URL}/proj/trunk",
            "{URL}/proj/branches",
            "{URL}/proj/tags",
            "--parents",
        ],
    );
    s.write(
        "two-wcs/src/README",
        "readme\nline 2\nline 3\nline 4\nline 5\n",
    );
    s.write("two-wcs/src/lib/a.c", "int a;\n");
    s.write("two-wcs/src/lib/b.c", "int b;\n");
    s.svn(w, &["import", "-m", "import", "src", "{URL}/proj/trunk"]);
    s.svn(w, &["checkout", "{URL}/proj/trunk", "wc1"]);
    s.svn(w, &["checkout", "{URL}/proj/trunk", "wc2"]);
    // A change in wc1; wc2 changes the same file elsewhere: out of date, update, commit.
    s.append("two-wcs/wc1/README", "from wc1\n");
    s.svn(w, &["commit", "-m", "wc1 appends", "wc1"]);
    s.write(
        "two-wcs/wc2/README",
        "readme changed\nline 2\nline 3\nline 4\nline 5\n",
    );
    s.svn_fails(w, &["commit", "-m", "wc2 edits", "wc2"]);
    s.svn(w, &["update", "wc2"]);
    s.svn(w, &["commit", "-m", "wc2 edits after update", "wc2"]);
    // A real conflict: both change line 3.
    s.svn(w, &["update", "wc1"]);
    s.svn(w, &["update", "wc2"]);
    s.write("two-wcs/wc1/lib/a.c", "int a = 1;\n");
    s.write("two-wcs/wc2/lib/a.c", "int a = 2;\n");
    s.svn(w, &["commit", "-m", "a=1", "wc1"]);
    s.svn_fails(w, &["commit", "-m", "a=2", "wc2"]);
    s.svn(w, &["update", "--accept", "postpone", "wc2"]);
    s.svn(w, &["status", "wc2"]);
    s.svn(w, &["resolve", "--accept", "theirs-full", "wc2/lib/a.c"]);
    // Properties on files and directories, adds and deletes, a rename.
    s.svn(w, &["propset", "svn:eol-style", "native", "wc2/lib/b.c"]);
    s.svn(w, &["propset", "svn:ignore", "*.o", "wc2/lib"]);
    s.write("two-wcs/wc2/lib/c.c", "int c;\n");
    s.svn(w, &["add", "wc2/lib/c.c"]);
    s.svn(w, &["mv", "wc2/README", "wc2/README.txt"]);
    s.svn(w, &["commit", "-m", "props, add, rename", "wc2"]);
    // wc1 changes the directory's properties while out of date: refused.
    s.svn(w, &["propset", "svn:ignore", "*.a", "wc1/lib"]);
    s.svn_fails(w, &["commit", "-m", "stale dir props", "wc1"]);
    s.svn(w, &["revert", "wc1/lib"]);
    s.svn(w, &["update", "wc1"]);
    s.svn(w, &["rm", "wc1/lib/b.c"]);
    s.svn(w, &["commit", "-m", "delete b", "wc1"]);
    // Replace: delete and add again in one commit.
    s.svn(w, &["update", "wc1"]);
    s.svn(w, &["rm", "wc1/lib/c.c"]);
    s.write("two-wcs/wc1/lib/c.c", "replaced\n");
    s.svn(w, &["add", "wc1/lib/c.c"]);
    s.svn(w, &["commit", "-m", "replace c", "wc1"]);
    s.svn(w, &["update", "wc2"]);
    s.svn(w, &["log", "-v", "{URL}/proj"]);
    let head = s.head(w).to_string();
    s.svn(w, &["diff", "-c", &head, "{URL}/proj"]);
    s.svn(w, &["status", "-u", "wc1"]);
    s.assert_same_repositories();
}

pub fn branch_merge_tag_and_url_operations(pair: &Pair) {
    let mut s = Script::new(pair);
    let _scope = pair.scope("merge");
    let w = "merge";
    s.svn(
        w,
        &[
            "mkdir",
            "--parents",
            "-m",
            "layout",
            "{URL}/p/trunk/src",
            "{URL}/p/branches",
            "{URL}/p/tags",
        ],
    );
    s.write("merge/f.txt", "one\ntwo\nthree\nfour\nfive\nsix\n");
    s.svn(
        w,
        &["import", "-m", "file", "f.txt", "{URL}/p/trunk/src/f.txt"],
    );
    let imported = s.head(w);
    s.svn(
        w,
        &[
            "copy",
            "-m",
            "branch",
            "{URL}/p/trunk",
            "{URL}/p/branches/b1",
        ],
    );
    s.svn(w, &["checkout", "{URL}/p", "wc"]);
    s.write(
        "merge/wc/branches/b1/src/f.txt",
        "one\ntwo changed on b1\nthree\nfour\nfive\nsix\n",
    );
    s.svn(w, &["commit", "-m", "b1 work", "wc"]);
    s.write(
        "merge/wc/trunk/src/f.txt",
        "one\ntwo\nthree\nfour\nfive\nsix changed on trunk\n",
    );
    s.svn(w, &["commit", "-m", "trunk work", "wc"]);
    s.svn(w, &["update", "wc"]);
    s.svn(w, &["merge", "^/p/branches/b1", "wc/trunk"]);
    s.svn(w, &["propget", "svn:mergeinfo", "wc/trunk"]);
    s.svn(w, &["commit", "-m", "merge b1", "wc"]);
    s.svn(w, &["mergeinfo", "^/p/branches/b1", "wc/trunk"]);
    s.svn(
        w,
        &["copy", "-m", "tag", "{URL}/p/trunk", "{URL}/p/tags/1.0"],
    );
    s.svn(
        w,
        &[
            "move",
            "-m",
            "rename branch",
            "{URL}/p/branches/b1",
            "{URL}/p/branches/b1-done",
        ],
    );
    let old = format!("{{URL}}/p/trunk/src/f.txt@{imported}");
    s.svn(w, &["copy", "-m", "copy old rev", &old, "{URL}/p/f-r5.txt"]);
    s.svn(w, &["delete", "-m", "drop tag", "{URL}/p/tags/1.0"]);
    s.svn_fails(w, &["mkdir", "-m", "exists", "{URL}/p/trunk"]);
    s.svn_fails(
        w,
        &["copy", "-m", "bad source", "{URL}/p/nope", "{URL}/p/nope2"],
    );
    s.svn(w, &["update", "wc"]);
    s.svn(w, &["log", "-v", "-g", "{URL}/p/trunk"]);
    s.run(
        w,
        "svnmucc",
        &[
            "-m",
            "mucc",
            "-U",
            "{URL}",
            "mkdir",
            "p/m",
            "put",
            "/dev/null",
            "p/m/empty",
            "propset",
            "k",
            "v",
            "p/m",
            "cp",
            &imported.to_string(),
            "p/trunk",
            "p/m/old-trunk",
            "rm",
            "p/f-r5.txt",
        ],
    );
    s.svn(w, &["log", "-v", "-l", "1", "{URL}"]);
    s.assert_same_repositories();
}

pub fn revision_properties_of_commits(pair: &Pair) {
    let mut s = Script::new(pair);
    let _scope = pair.scope("revprops");
    let w = "revprops";
    s.svn(
        w,
        &[
            "mkdir",
            "-m",
            "with props",
            "--with-revprop",
            "team=blue",
            "{URL}/rp",
        ],
    );
    s.svn(w, &["mkdir", "-m", "", "{URL}/rp/empty-log"]);
    s.svn_fails(
        w,
        &[
            "mkdir",
            "-m",
            "bad",
            "--with-revprop",
            "svn:custom=x\r\ny",
            "{URL}/rp/bad",
        ],
    );
    let head = s.head(w).to_string();
    // No svn:txn-* property stays behind; the client cannot choose the author.
    s.svn(w, &["proplist", "-v", "--revprop", "-r", &head, "{URL}"]);
    let prev = (s.head(w) - 1).to_string();
    s.svn(w, &["proplist", "-v", "--revprop", "-r", &prev, "{URL}"]);
    s.svn(w, &["propget", "--revprop", "-r", &prev, "team", "{URL}"]);
    s.svn(w, &["log", "-v", "-r", &format!("{prev}:{head}"), "{URL}"]);
    s.assert_same_repositories();
}

pub fn changes_inside_a_copy_in_the_same_commit(pair: &Pair) {
    let mut s = Script::new(pair);
    let _scope = pair.scope("cpmod");
    let w = "cpmod";
    s.svn(w, &["mkdir", "--parents", "-m", "tree", "{URL}/cm/a/b"]);
    s.write("cpmod/f", "one\n");
    s.svn(w, &["import", "-m", "add f", "f", "{URL}/cm/a/b/f"]);
    s.svn(w, &["import", "-m", "add g", "f", "{URL}/cm/a/b/g"]);
    s.svn(w, &["checkout", "{URL}/cm", "wc"]);
    s.svn(w, &["copy", "wc/a", "wc/a2"]);
    s.append("cpmod/wc/a2/b/f", "two\n");
    s.svn(w, &["propset", "p", "v", "wc/a2/b/f"]);
    s.svn(w, &["propset", "q", "w", "wc/a2/b"]);
    s.svn(w, &["rm", "wc/a2/b/g"]);
    s.write("cpmod/wc/a2/b/g", "replaced in copy\n");
    s.svn(w, &["add", "wc/a2/b/g"]);
    s.write("cpmod/wc/a2/new", "new in copy\n");
    s.svn(w, &["add", "wc/a2/new"]);
    s.svn(w, &["commit", "-m", "copy and change inside", "wc"]);
    s.svn(w, &["update", "wc"]);
    s.run(
        w,
        "svnmucc",
        &[
            "-m",
            "mucc in copy",
            "-U",
            "{URL}",
            "cp",
            "HEAD",
            "cm/a",
            "cm/a3",
            "put",
            "wc/a2/new",
            "cm/a3/b/f",
            "propset",
            "r",
            "s",
            "cm/a3/b/f",
            "rm",
            "cm/a3/b",
            "mkdir",
            "cm/a3/b",
        ],
    );
    s.svn(w, &["log", "-v", "-l", "2", "{URL}/cm"]);
    s.svn(w, &["ls", "-R", "-v", "{URL}/cm"]);
    s.assert_same_repositories();
}

/// Bytes that do not compress or repeat (a fixed linear congruential sequence).
pub fn noise(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed;
    (0..len)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 56) as u8
        })
        .collect()
}

pub fn large_files_are_committed_and_changed(pair: &Pair) {
    let mut s = Script::new(pair);
    let _scope = pair.scope("large");
    let w = "large";
    let big = noise(9 << 20, 7);
    for i in 0..2 {
        std::fs::write(pair.work(i).join("large/big.bin"), &big).expect("write big.bin");
    }
    s.svn(w, &["import", "-m", "big", "big.bin", "{URL}/big.bin"]);
    s.svn(w, &["checkout", "{URL}", "wc"]);
    let mut changed = big.clone();
    changed[5 << 20..(5 << 20) + 4096].copy_from_slice(&noise(4096, 9));
    changed.extend_from_slice(&noise(1 << 20, 11));
    for i in 0..2 {
        std::fs::write(pair.work(i).join("large/wc/big.bin"), &changed).expect("write big.bin");
    }
    s.svn(w, &["commit", "-m", "change big", "wc"]);
    s.svn(w, &["checkout", "{URL}", "wc2"]);
    for i in 0..2 {
        let got = std::fs::read(pair.work(i).join("large/wc2/big.bin")).expect("read");
        assert!(
            got == changed,
            "{}: the checked-out file differs",
            pair.labels()[i]
        );
    }
    s.assert_same_repositories();
}

/// Bad destinations refused with svnserve's errors: a control character in a new path
/// (E160005, the path escaped), a copy into a parent that does not exist (E160013 naming the
/// transaction and path).
pub fn bad_destinations_are_refused_as_svnserve_refuses_them(pair: &Pair) {
    let mut s = Script::new(pair);
    let _scope = pair.scope("baddest");
    let w = "baddest";
    s.svn(
        w,
        &["mkdir", "--parents", "-m", "src", "{URL}/bd/source_dir"],
    );
    let out = s.svn_fails(w, &["mkdir", "-m", "tab", "{URL}/bd/tab%09dir"]);
    assert!(
        out.stderr_text()
            .contains("E160005: Invalid control character '0x09' in path 'tab\\011dir'"),
        "{out}"
    );
    s.svn_fails(
        w,
        &[
            "copy",
            "-m",
            "tab",
            "{URL}/bd/source_dir",
            "{URL}/bd/tab%09dir",
        ],
    );
    s.svn_fails(
        w,
        &[
            "mv",
            "-m",
            "tab",
            "{URL}/bd/source_dir",
            "{URL}/bd/tab%09dir",
        ],
    );
    let out = s.svn_fails(
        w,
        &[
            "copy",
            "-m",
            "deep",
            "{URL}/bd/source_dir",
            "{URL}/bd/G/C/E/I",
        ],
    );
    assert!(
        out.stderr_text()
            .contains("E160013: File not found: transaction"),
        "{out}"
    );
    s.assert_same_repositories();
}

/// Lets every revision property change through (what svnsync and svnrdump need): a
/// pre-revprop-change hook that exits 0 in both repositories.
pub fn allow_revprop_changes(pair: &Pair) {
    for repo in [pair.reference_repo(), pair.subject_repo()] {
        let hooks = repo.join("hooks");
        std::fs::create_dir_all(&hooks).expect("hooks dir");
        let hook = hooks.join("pre-revprop-change");
        std::fs::write(&hook, "#!/bin/sh\nexit 0\n").expect("write the hook");
        Run::new("chmod").arg("a+rx").arg(&hook).success();
    }
}

/// Dumps of both sides, equal but for dates in revision 0 and the UUID.
pub fn assert_same_histories(pair: &Pair) {
    let fsfs = Run::tool("svnadmin")
        .args(["dump", "-q"])
        .arg(pair.reference_repo())
        .success()
        .stdout;
    let bin = Path::new(env!("CARGO_BIN_EXE_svelto"));
    let ours = pair.subject_admin(bin, &["dump", "-q"]).success().stdout;
    pair.subject_admin(bin, &["verify", "-q"]).success();
    // Revision 0 (up to the first "Revision-number: 1") holds the creation date, the UUID
    // and svnsync's bookkeeping (which names the server's URL): compared masked.
    let split = |d: &[u8]| -> (Vec<u8>, Vec<u8>) {
        let key = b"Revision-number: 1\n";
        match d.windows(key.len()).position(|w| w == key) {
            Some(at) => (d[..at].to_vec(), d[at..].to_vec()),
            None => (d.to_vec(), Vec::new()),
        }
    };
    let (a0, a) = split(&fsfs);
    let (b0, b) = split(&ours);
    let mask0 = |i: usize, x: &[u8]| {
        let text = mask_dates(&pair.normalize(i, x));
        String::from_utf8_lossy(&text)
            .lines()
            .filter(|l| !l.starts_with("UUID: "))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(mask0(0, &a0), mask0(1, &b0), "revision 0 differs");
    if a != b {
        let d = svelto_testkit::serve::first_difference(pair.labels(), &a, &b).unwrap_or_default();
        panic!("the copies differ:\n{d}");
    }
}

/// svnsync of fixture `name` (from a file:// FSFS copy) into both (empty) servers.
pub fn svnsync_into(pair: &Pair, name: &str) {
    let source =
        svelto_testkit::svnadmin_create_load(&svelto_testkit::fixture(&format!("{name}.dump")));
    let mut s = Script::new(pair);
    let _scope = pair.scope("sync");
    let src = source.url();
    s.run("sync", "svnsync", &["init", "{URL}", &src]);
    s.run("sync", "svnsync", &["sync", "{URL}"]);
    s.svn("sync", &["log", "-v", "{URL}"]);
    assert_same_histories(pair);
}

/// `svnrdump load` of fixture `name` into both (empty) servers.
pub fn svnrdump_load_into(pair: &Pair, name: &str) {
    let mut s = Script::new(pair);
    let _scope = pair.scope("rdump");
    let dump = svelto_testkit::fixture(&format!("{name}.dump"));
    for i in 0..2 {
        let url = pair.substitute(i, Path::new("/"), "{URL}");
        let o = Run::tool("svnrdump")
            .args(["load", "-q", "--non-interactive", "--no-auth-cache"])
            .arg("--config-dir")
            .arg(pair.client().config_dir())
            .arg(&url)
            .stdin_file(&dump)
            .output();
        assert!(
            o.success(),
            "{}: svnrdump load failed:\n{o}",
            pair.labels()[i]
        );
    }
    s.svn("rdump", &["log", "-v", "{URL}"]);
    assert_same_histories(pair);
}
