//! `-t TXN`: svnlook runs in a pre-commit hook of a commit to FSFS (which the hook then
//! refuses) and saves what it prints; the same change is made in Svelto as a transaction
//! a writer exposes under the same name (with the same `svn:date`), and `svelto look -t`
//! must print the same.

use crate::common::{look, sort_prop_listing, svnlook, Pair};
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use svelto_core::{NodeKind, PropList};
use svelto_store::Txn;
use svelto_store::Writer;
use svelto_testkit::{require_tool, scenario_dump, tempdir, Run};

/// The commands the hook runs, `REPO` and `TXN` standing for its arguments.
const COMMANDS: &[&[&str]] = &[
    &["author", "REPO", "-t", "TXN"],
    &["date", "REPO", "-t", "TXN"],
    &["log", "REPO", "-t", "TXN"],
    &["info", "REPO", "-t", "TXN"],
    &["changed", "REPO", "-t", "TXN"],
    &["changed", "--copy-info", "REPO", "-t", "TXN"],
    &["dirs-changed", "REPO", "-t", "TXN"],
    &["diff", "REPO", "-t", "TXN"],
    &["diff", "--diff-copy-from", "REPO", "-t", "TXN"],
    &[
        "diff",
        "--no-diff-added",
        "--no-diff-deleted",
        "REPO",
        "-t",
        "TXN",
    ],
    &["propget", "--revprop", "REPO", "svn:log", "-t", "TXN"],
    &["propget", "--revprop", "REPO", "nosuch", "-t", "TXN"],
    &["propget", "REPO", "p", "/trunk", "-t", "TXN"],
    &["propget", "REPO", "nosuch", "/trunk", "-t", "TXN"],
    &["propget", "-v", "REPO", "p", "trunk", "-t", "TXN"],
    &["proplist", "-v", "REPO", "/trunk", "-t", "TXN"],
    &["cat", "REPO", "trunk/new.txt", "-t", "TXN"],
    &["cat", "REPO", "trunk/newdir/m.c", "-t", "TXN"],
    &["cat", "REPO", "trunk/docs/x.txt", "-t", "TXN"],
    &["filesize", "REPO", "trunk/main.c", "-t", "TXN"],
    &["tree", "REPO", "-t", "TXN"],
    &[
        "tree",
        "--full-paths",
        "REPO",
        "branches/txn-lib",
        "-t",
        "TXN",
    ],
    &["tree", "REPO", "/trunk/nope", "-t", "TXN"],
    &["tree", "REPO", "/trunk/main.c/x", "-t", "TXN"],
];

/// Revision properties are listed in hash order by svnlook: compared sorted.
const PROPLISTS: &[&[&str]] = &[
    &["proplist", "--revprop", "REPO", "-t", "TXN"],
    &["proplist", "--revprop", "-v", "REPO", "-t", "TXN"],
    &["proplist", "--revprop", "--xml", "REPO", "-t", "TXN"],
];

fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

fn hook_script(out: &Path) -> String {
    let svnlook = require_tool("svnlook");
    let mut s = String::from("#!/bin/sh\nREPOS=\"$1\"\nTXN=\"$2\"\nexport LC_ALL=C.UTF-8 TZ=UTC\n");
    s.push_str(&format!(
        "echo \"$TXN\" > {}\n",
        quote(&out.join("txn").to_string_lossy())
    ));
    for (i, cmd) in COMMANDS.iter().chain(PROPLISTS).enumerate() {
        s.push_str(&quote(&svnlook.to_string_lossy()));
        for a in *cmd {
            s.push(' ');
            s.push_str(match *a {
                "REPO" => "\"$REPOS\"",
                "TXN" => "\"$TXN\"",
                other => {
                    s.push_str(&quote(other));
                    continue;
                }
            });
        }
        let base = out.join(i.to_string()).to_string_lossy().into_owned();
        s.push_str(&format!(
            " > {} 2> {}; echo $? > {}\n",
            quote(&format!("{base}.out")),
            quote(&format!("{base}.err")),
            quote(&format!("{base}.rc"))
        ));
    }
    s.push_str("exit 1\n");
    s
}

fn modified(text: &[u8], tag: &str) -> Vec<u8> {
    let mut lines: Vec<Vec<u8>> = text
        .split_inclusive(|&b| b == b'\n')
        .map(|l| l.to_vec())
        .collect();
    if lines.len() > 3 {
        lines[2] = format!("line three, changed in {tag}\n").into_bytes();
    }
    lines.push(format!("appended in {tag}\n").into_bytes());
    lines.concat()
}

#[test]
fn transaction_matches_svnlook_in_pre_commit() {
    let pair = Pair::load(&scenario_dump("copies"));
    let saved = tempdir();
    let hook = pair.fsfs.path().join("hooks").join("pre-commit");
    fs::write(&hook, hook_script(saved.path())).expect("write the hook");
    fs::set_permissions(&hook, fs::Permissions::from_mode(0o755)).expect("chmod the hook");

    let main_c = svnlook(pair.fsfs.path(), &["cat", "REPO", "trunk/main.c"]).stdout;
    let new_main = modified(&main_c, "txn");
    let new_copy = modified(&main_c, "copy");
    let files = tempdir();
    let f = |name: &str, data: &[u8]| {
        let p = files.path().join(name);
        fs::write(&p, data).expect("write");
        p
    };
    let new_txt = f("new.txt", b"hello\nworld\n");
    let main_path = f("main.c", &new_main);
    let copy_path = f("m.c", &new_copy);
    let log = "A transaction\nseen by hooks";
    let commit = Run::tool("svnmucc")
        .args(["-U", &pair.fsfs.url(), "-m", log, "--username", "bob"])
        .arg("put")
        .arg(&new_txt)
        .arg("trunk/new.txt")
        .arg("put")
        .arg(&main_path)
        .arg("trunk/main.c")
        .args(["cp", "3", "trunk/lib", "branches/txn-lib"])
        .args(["rm", "trunk/docs"])
        .args(["propset", "p", "v", "trunk"])
        .args(["mkdir", "trunk/newdir"])
        .args(["cp", "12", "trunk/main.c", "trunk/newdir/m.c"])
        .arg("put")
        .arg(&copy_path)
        .arg("trunk/newdir/m.c")
        .output();
    assert!(!commit.success(), "the hook refuses the commit:\n{commit}");
    let txn_name = fs::read_to_string(saved.path().join("txn")).expect("the hook ran");
    let txn_name = txn_name.trim();
    let mut w = Writer::open(&pair.svelto).expect("open the writer");
    let mut t = Txn::begin(&mut w).expect("begin");
    t.make_node("trunk/new.txt", NodeKind::File).expect("add");
    t.set_text("trunk/new.txt", &mut &b"hello\nworld\n"[..])
        .expect("text");
    t.set_text("trunk/main.c", &mut &new_main[..])
        .expect("text");
    t.copy(3, "trunk/lib", "branches/txn-lib").expect("copy");
    t.delete("trunk/docs").expect("delete");
    t.change_prop("trunk", b"p", Some(b"v")).expect("prop");
    t.make_node("trunk/newdir", NodeKind::Dir).expect("mkdir");
    t.copy(12, "trunk/main.c", "trunk/newdir/m.c")
        .expect("copy");
    t.set_text("trunk/newdir/m.c", &mut &new_copy[..])
        .expect("text");
    let mut revprops = PropList::new();
    revprops.insert(b"svn:author".to_vec(), b"bob".to_vec());
    revprops.insert(b"svn:log".to_vec(), log.as_bytes().to_vec());
    // FSFS's transaction's svn:date (its creation time), and the client's ephemeral
    // transaction properties, which it holds during pre-commit
    // (svn:txn-client-compat-version, svn:txn-user-agent).
    let verbose = fs::read(saved.path().join(format!("{}.out", COMMANDS.len() + 1)))
        .expect("proplist -v saved");
    for (name, value) in parse_verbose_props(&verbose) {
        if name.starts_with("svn:txn-") || name == "svn:date" {
            revprops.insert(name.into_bytes(), value.into_bytes());
        }
    }
    t.revprops = revprops;
    t.commit().expect("commit");
    w.expose_txn(txn_name).expect("expose");

    for (i, cmd) in COMMANDS.iter().chain(PROPLISTS).enumerate() {
        let base = saved.path().join(i.to_string());
        let read = |ext: &str| fs::read(base.with_extension(ext)).unwrap_or_default();
        let args: Vec<&str> = cmd
            .iter()
            .map(|a| if *a == "TXN" { txn_name } else { a })
            .collect();
        let got = look(&pair.svelto, &args);
        let mut want_out = read("out");
        let want_err = String::from_utf8_lossy(&read("err"))
            .replace("svnlook: ", "svelto look: ")
            .replace("'svnlook help", "'svelto look help");
        let want_rc: i32 = String::from_utf8_lossy(&read("rc"))
            .trim()
            .parse()
            .unwrap_or(-1);
        let mut got_out = got.stdout.clone();
        if i >= COMMANDS.len() {
            let xml = cmd.contains(&"--xml");
            want_out = sort_prop_listing(&want_out, xml);
            got_out = sort_prop_listing(&got_out, xml);
        }
        assert_eq!(
            (
                String::from_utf8_lossy(&got_out),
                String::from_utf8_lossy(&got.stderr),
                got.code
            ),
            (
                String::from_utf8_lossy(&want_out),
                want_err.into(),
                Some(want_rc)
            ),
            "svelto look {args:?}"
        );
    }
    // Readers without -t do not see the transaction.
    let youngest = look(&pair.svelto, &["youngest", "REPO"]);
    assert_eq!(youngest.stdout, b"12\n");
    drop(w);
}

/// `svnlook proplist -v` output: a name indented by two spaces, then its value's lines
/// indented by four (the value's last newline is the listing's).
fn parse_verbose_props(out: &[u8]) -> Vec<(String, String)> {
    let text = String::from_utf8_lossy(out);
    let mut props: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        if let Some(v) = line.strip_prefix("    ") {
            if let Some(last) = props.last_mut() {
                if !last.1.is_empty() {
                    last.1.push('\n');
                }
                last.1.push_str(v);
            }
        } else if let Some(name) = line.strip_prefix("  ") {
            props.push((name.to_string(), String::new()));
        }
    }
    props
}

/// The real thing: a pre-commit hook running `svnlook` under svnserve (FSFS) and one
/// running `svelto look` under `svelto serve`, for the same commit by svnmucc over
/// svn://. Their outputs match but for the transaction names and creation dates.
#[test]
fn pre_commit_hooks_under_both_servers() {
    let pair = Pair::load(&scenario_dump("copies"));
    let outs = tempdir();
    let svelto = crate::common::svelto_bin();
    let cmds = [
        "changed",
        "changed --copy-info",
        "dirs-changed",
        "diff",
        "diff --diff-copy-from",
        "author",
        "log",
        "info",
        "tree --full-paths",
        "cat trunk/new.txt",
        "propget p /trunk",
    ];
    for (repo, tool, name) in [
        (
            pair.fsfs.path(),
            quote(&require_tool("svnlook").to_string_lossy()),
            "fsfs",
        ),
        (
            pair.svelto.as_path(),
            format!("{} look", quote(svelto)),
            "svelto",
        ),
    ] {
        fs::write(
            repo.join("conf").join("svnserve.conf"),
            "[general]\nanon-access = write\n",
        )
        .expect("svnserve.conf");
        let out = outs.path().join(name);
        let mut s = String::from("#!/bin/sh\nexport LC_ALL=C.UTF-8 TZ=UTC\n");
        for c in cmds {
            let (sub, rest) = c.split_once(' ').unwrap_or((c, ""));
            s.push_str(&format!(
                "{tool} {sub} \"$1\" {rest} -t \"$2\" >> {o} 2>&1; echo \"rc=$?\" >> {o}\n",
                o = quote(&out.to_string_lossy())
            ));
        }
        s.push_str("exit 0\n");
        let hook = repo.join("hooks").join("pre-commit");
        fs::write(&hook, s).expect("hook");
        fs::set_permissions(&hook, fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let new_txt = outs.path().join("new.txt");
    fs::write(&new_txt, "new text\n").expect("write");
    let svnserve = svelto_testkit::Svnserve::start(pair.fsfs.dir());
    let serve =
        svelto_testkit::Svelto::start(Path::new(svelto), pair.svelto.parent().expect("dir"));
    for url in [svnserve.url("repo"), serve.url("repo")] {
        Run::tool("svnmucc")
            .args([
                "--non-interactive",
                "--no-auth-cache",
                "-U",
                &url,
                "-m",
                "e2e",
            ])
            .arg("put")
            .arg(&new_txt)
            .arg("trunk/new.txt")
            .args(["cp", "3", "trunk/lib", "branches/e2e"])
            .args(["rm", "trunk/docs"])
            .args(["propset", "p", "v", "trunk"])
            .success();
    }
    let normalize = |name: &str| -> String {
        let text = fs::read_to_string(outs.path().join(name)).expect("the hook ran");
        text.lines()
            .map(|l| {
                // "(txn NAME)" labels carry the transaction's name and creation time.
                match l.find("\t") {
                    Some(i) if l.ends_with(')') && l.contains("(txn ") => {
                        format!("{}\t<txn>", &l[..i])
                    }
                    _ if l.len() >= 19 && l.as_bytes()[4] == b'-' && l.contains(" +0000 (") => {
                        "<date>".to_string()
                    }
                    _ => l.to_string(),
                }
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    let (want, got) = (normalize("fsfs"), normalize("svelto"));
    assert!(want.contains("A + branches/e2e/"), "{want}");
    assert_eq!(got, want);
}
