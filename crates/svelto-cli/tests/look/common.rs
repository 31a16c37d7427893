//! Running `svnlook` and `svelto look` on the same history and comparing what they print.

use std::path::{Path, PathBuf};
use std::process::Command;

use svelto_testkit::{require_tool, svnadmin_create_load, tempdir, TempRepo};
use tempfile::TempDir;

pub fn svelto_bin() -> &'static str {
    env!("CARGO_BIN_EXE_svelto")
}

/// One run of either program.
#[derive(Debug, PartialEq, Eq)]
pub struct Out {
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub code: Option<i32>,
}

impl std::fmt::Display for Out {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "exit {:?}\n--- stdout\n{}--- stderr\n{}",
            self.code,
            String::from_utf8_lossy(&self.stdout),
            String::from_utf8_lossy(&self.stderr)
        )
    }
}

fn run(mut cmd: Command) -> Out {
    cmd.env("LC_ALL", "C.UTF-8").env("TZ", "UTC");
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    Out {
        stdout: out.stdout,
        stderr: out.stderr,
        code: out.status.code(),
    }
}

/// `svnlook ARGS` with the repository path in place of every "REPO".
pub fn svnlook(repo: &Path, args: &[&str]) -> Out {
    let mut cmd = Command::new(require_tool("svnlook"));
    for a in args {
        if *a == "REPO" {
            cmd.arg(repo);
        } else {
            cmd.arg(a);
        }
    }
    let mut out = run(cmd);
    // Our program's name where svnlook names itself.
    let text = String::from_utf8_lossy(&out.stderr).into_owned();
    let text = text
        .lines()
        .map(|l| {
            let l = l
                .strip_prefix("svnlook: ")
                .map_or(l.to_string(), |r| format!("svelto look: {r}"));
            l.replace("'svnlook help", "'svelto look help")
        })
        .map(|l| l + "\n")
        .collect::<String>();
    out.stderr = text.into_bytes();
    out
}

/// `svelto look ARGS`, "REPO" replaced as for [`svnlook`].
pub fn look(repo: &Path, args: &[&str]) -> Out {
    let mut cmd = Command::new(svelto_bin());
    cmd.arg("look");
    for a in args {
        if *a == "REPO" {
            cmd.arg(repo);
        } else {
            cmd.arg(a);
        }
    }
    run(cmd)
}

/// A fixture loaded into FSFS (by svnadmin) and into Svelto (by `svelto admin load`).
pub struct Pair {
    pub fsfs: TempRepo,
    _dir: TempDir,
    pub svelto: PathBuf,
}

impl Pair {
    pub fn load(dump: &Path) -> Pair {
        let fsfs = svnadmin_create_load(dump);
        let dir = tempdir();
        let svelto = dir.path().join("repo");
        let created = run({
            let mut c = Command::new(svelto_bin());
            c.args(["admin", "create"]).arg(&svelto);
            c
        });
        assert_eq!(created.code, Some(0), "svelto admin create: {created}");
        let loaded = run({
            let mut c = Command::new(svelto_bin());
            c.args(["admin", "load", "-q", "-F"]).arg(dump).arg(&svelto);
            c
        });
        assert_eq!(loaded.code, Some(0), "svelto admin load: {loaded}");
        Pair {
            fsfs,
            _dir: dir,
            svelto,
        }
    }

    pub fn youngest(&self) -> u64 {
        self.fsfs.youngest()
    }

    /// Runs both; panics with both outputs unless they are the same.
    pub fn same(&self, args: &[&str]) -> Out {
        let want = svnlook(self.fsfs.path(), args);
        let got = look(&self.svelto, args);
        self.assert_same(args, want, got)
    }

    /// Like [`Pair::same`], with property listings compared whatever their order
    /// (svnlook lists properties in an APR hash order that changes from run to run).
    pub fn same_props(&self, args: &[&str]) -> Out {
        let mut want = svnlook(self.fsfs.path(), args);
        let got = look(&self.svelto, args);
        if want.code == Some(0) && got.code == Some(0) {
            let xml = args.contains(&"--xml");
            want.stdout = sort_prop_listing(&want.stdout, xml);
            let sorted_got = sort_prop_listing(&got.stdout, xml);
            assert_eq!(
                sorted_got, got.stdout,
                "svelto look should list properties sorted: {args:?}\n{got}"
            );
        }
        self.assert_same(args, want, got)
    }

    fn assert_same(&self, args: &[&str], want: Out, got: Out) -> Out {
        if want != got {
            panic!(
                "svelto look {args:?} differs from svnlook\n=== svnlook\n{want}\n=== svelto look\n{got}"
            );
        }
        got
    }
}

/// A property listing with its entries in name order: an entry is a line starting with
/// exactly two spaces and the lines indented deeper under it (`-v`), or an XML
/// `<property` element.
pub fn sort_prop_listing(text: &[u8], xml: bool) -> Vec<u8> {
    let text = String::from_utf8_lossy(text).into_owned();
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut out = String::new();
    let mut i = 0;
    while i < lines.len() {
        let starts = |l: &str| {
            if xml {
                l.starts_with("<property")
            } else {
                l.starts_with("  ") && !l.starts_with("   ")
            }
        };
        if !starts(lines[i]) {
            out.push_str(lines[i]);
            i += 1;
            continue;
        }
        let mut entries: Vec<String> = Vec::new();
        while i < lines.len() && starts(lines[i]) {
            let mut e = lines[i].to_string();
            i += 1;
            if xml {
                while !(e.trim_end().ends_with("/>") || e.trim_end().ends_with("</property>"))
                    && i < lines.len()
                {
                    e.push_str(lines[i]);
                    i += 1;
                }
            } else {
                while i < lines.len() && lines[i].starts_with("    ") {
                    e.push_str(lines[i]);
                    i += 1;
                }
            }
            if xml {
                e = attributes_in_our_order(&e);
            }
            entries.push(e);
        }
        entries.sort();
        out.extend(entries);
    }
    out.into_bytes()
}

/// svnlook writes an element's attributes in hash order (`encoding` before or after
/// `name`); svelto look writes `name` first.
fn attributes_in_our_order(e: &str) -> String {
    for tag in ["<property\n", "<inherited_property\n"] {
        let Some(rest) = e.strip_prefix(tag) else {
            continue;
        };
        let Some(rest) = rest.strip_prefix("   encoding=\"base64\"\n   name=\"") else {
            continue;
        };
        if let Some((name, tail)) = rest.split_once("\">") {
            return format!("{tag}   name=\"{name}\"\n   encoding=\"base64\">{tail}");
        }
    }
    e.to_string()
}

/// The revisions a test walks: all of them, or for long histories the first 12, every
/// 151st and the last.
pub fn revisions(youngest: u64) -> Vec<u64> {
    if youngest <= 40 {
        return (0..=youngest).collect();
    }
    let mut revs: Vec<u64> = (0..12).chain((12..youngest).step_by(151)).collect();
    revs.push(youngest);
    revs
}

/// The scenario dumps every comparison walks.
pub fn scenarios() -> Vec<String> {
    svelto_testkit::fixture_names()
}
