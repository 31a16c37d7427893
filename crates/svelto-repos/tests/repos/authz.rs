//! The authz evaluator against the stock `svnauthz` (Subversion's own implementation): the
//! same access for every (file, repository, user, path), and the same files refused with the
//! same message.

use std::path::Path;
use std::process::Command;
use svelto_repos::authz::{Authz, READ, WRITE};

const BASIC: &str = "\
[groups]
devs = harry, @ops, &jd
ops = sally
empty =
[aliases]
jd = john.doe
[/]
* = r
$anonymous =
[/trunk]
@devs = rw
~@devs = r
[repo:/trunk]
harry = r
[/trunk/secret]
* =
sally = rw
&jd = r
[repo:/trunk/secret]
@ops =
[/branches]
$authenticated = rw
$anonymous = r
[/tags]
~sally = r
@empty = rw
";

const GLOBS: &str = "\
[/]
* = r
[:glob:/**/secret]
* =
harry = rw
[:glob:/trunk/*/x]
sally = rw
[:glob:repo:/b*]
* =
[:glob:/**/*.key]
$authenticated =
[:glob:/a/**/c.key]
sally = r
[/a/b]
* = rw
[:glob:/t?gs/[a-c]*]
harry =
[:glob:/esc/\\*lit]
* =
";

const NO_ROOT: &str = "\
[/trunk]
harry = rw
[other:/]
* = rw
[repo:/tags]
* = r
";

const ROOT_ORDER: &str = "\
[:glob:/**]
harry = rw
[/]
sally = r
[:glob:/x/**]
* = r
[/x/y]
harry =
";

const GROUPS_FILE: &str = "\
[groups]
devs = harry, @ops
ops = sally
";

const WITH_GROUPS_FILE: &str = "\
[/]
@devs = rw
* = r
[/trunk/ops]
@ops = rw
* =
";

const USERS: &[Option<&str>] = &[
    None,
    Some("harry"),
    Some("sally"),
    Some("john.doe"),
    Some("joe"),
    Some("Harry"),
];

const PATHS: &[Option<&str>] = &[
    None,
    Some("/"),
    Some("/trunk"),
    Some("/trunk/a"),
    Some("/trunk/secret"),
    Some("/trunk/secret/x"),
    Some("/trunk/q/x"),
    Some("/branches/b1"),
    Some("/tags"),
    Some("/tags/b1"),
    Some("/tags/d1"),
    Some("/b"),
    Some("/bx/y"),
    Some("/a/b"),
    Some("/a/b/c.key"),
    Some("/a/c.key"),
    Some("/x"),
    Some("/x/y"),
    Some("/x/y/z"),
    Some("/esc/*lit"),
    Some("/esc/xlit"),
];

const REPOS: &[Option<&str>] = &[None, Some("repo"), Some("other")];

fn words(access: u8) -> &'static str {
    if access & WRITE != 0 {
        "rw"
    } else if access & READ != 0 {
        "r"
    } else {
        "no"
    }
}

fn ours(a: &Authz, repos: Option<&str>, user: Option<&str>, path: Option<&str>) -> u8 {
    let rules = a.rules_for(repos, user);
    match path {
        Some(p) => rules.access(p),
        None if rules.anywhere(READ | WRITE) => READ | WRITE,
        None if rules.anywhere(READ) => READ,
        None => 0,
    }
}

fn svnauthz(args: &[&str]) -> std::process::Output {
    Command::new("svnauthz")
        .args(args)
        .output()
        .expect("run svnauthz (Subversion's tools must be installed)")
}

fn compare(name: &str, text: &str, groups: Option<&str>) {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join(name);
    std::fs::write(&file, text).expect("write authz");
    let gfile = dir.path().join("groups");
    if let Some(g) = groups {
        std::fs::write(&gfile, g).expect("write groups");
    }
    let authz = Authz::parse(
        text.as_bytes(),
        &file,
        groups.map(|g| (g.as_bytes(), gfile.as_path())),
    )
    .unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut checked = 0;
    for repos in REPOS {
        for user in USERS {
            for path in PATHS {
                let mut args: Vec<String> = vec!["accessof".into()];
                if let Some(r) = repos {
                    args.extend(["--repository".into(), r.to_string()]);
                }
                if let Some(u) = user {
                    args.extend(["--username".into(), u.to_string()]);
                }
                if let Some(p) = path {
                    args.extend(["--path".into(), p.to_string()]);
                }
                if groups.is_some() {
                    args.extend(["--groups-file".into(), gfile.display().to_string()]);
                }
                let want = ours(&authz, *repos, *user, *path);
                // Every other cell is checked with --is (exit 0 when equal, 3 when not).
                checked += 1;
                let is_mode = checked % 2 == 0;
                if is_mode {
                    args.extend(["--is".into(), words(want).into()]);
                }
                args.push(file.display().to_string());
                let argv: Vec<&str> = args.iter().map(String::as_str).collect();
                let out = svnauthz(&argv);
                if is_mode {
                    assert_eq!(
                        out.status.code(),
                        Some(0),
                        "{name}: repos {repos:?} user {user:?} path {path:?}: svnauthz says it \
                         is not '{}': {}",
                        words(want),
                        String::from_utf8_lossy(&out.stderr)
                    );
                } else {
                    assert!(out.status.success(), "{name}: svnauthz {argv:?} failed");
                    let theirs = String::from_utf8_lossy(&out.stdout).trim().to_string();
                    assert_eq!(
                        words(want),
                        theirs,
                        "{name}: repos {repos:?} user {user:?} path {path:?}"
                    );
                }
            }
        }
    }
}

#[test]
fn access_matches_svnauthz() {
    compare("basic", BASIC, None);
    compare("globs", GLOBS, None);
    compare("no-root", NO_ROOT, None);
    compare("root-order", ROOT_ORDER, None);
    compare("with-groups-file", WITH_GROUPS_FILE, Some(GROUPS_FILE));
}

/// svnauthz's error links after "Error while parsing authz file", joined with ": ".
fn svnauthz_reason(stderr: &str) -> String {
    stderr
        .lines()
        .skip(1)
        .map(|l| {
            let l = l.strip_prefix("svnauthz: ").unwrap_or(l);
            // Drop "E220003: ".
            match l.split_once(": ") {
                Some((code, rest)) if code.starts_with('E') => rest.to_string(),
                _ => l.to_string(),
            }
        })
        .collect::<Vec<_>>()
        .join(": ")
}

#[test]
fn malformed_files_are_refused_like_svnauthz() {
    let cases: &[(&str, Option<&str>)] = &[
        (
            "[groups]\ng1 = harry\n[/]\n* = r\n[/x]\n@nogroup = r\n",
            None,
        ),
        ("[/]\n* = rx\n", None),
        ("[/]\n  * = r\n", None),
        ("[/]\nharry = r\n[/x]\n  harry\n", None),
        ("[groups]\na = @b\nb = @a\n[/]\n* = r\n", None),
        ("[/a/]\n* = r\n", None),
        ("[/a/./b]\n* = r\n", None),
        ("[/a/../b]\n* = r\n", None),
        ("[/]\n* = r\n[/]\n* = r\n", None),
        ("[/]\nharry\n", None),
        ("harry = r\n", None),
        (" [/]\n", None),
        ("[/\n", None),
        ("[/]\n  # comment\n", None),
        ("[/]\n~~harry = r\n", None),
        ("[/]\n~* = r\n", None),
        ("[/]\n** = r\n", None),
        ("[/]\n$nobody = r\n", None),
        ("[/]\nharry = w\n", None),
        ("[/]\n&nobody = r\n", None),
        ("[aliases]\n@x = harry\n", None),
        ("[aliases]\nx = harry\nx = sally\n", None),
        ("[groups]\n@x = harry\n", None),
        ("[groups]\nx = harry\nx = sally\n", None),
        ("[groups]\nx = @y\n", None),
        ("[groups]\nx = &y\n", None),
        ("[users]\nharry = r\n", None),
        ("[:glob:/a]\n* = r\n[/a]\n* = r\n", None),
        ("[:blob:/a]\n* = r\n", None),
        ("[:glob]\n* = r\n", None),
        ("[:/a]\n* = r\n", None),
        (
            "[groups]\nx = harry\n[/]\n@x = r\n",
            Some("[groups]\ny = sally\n"),
        ),
        ("[/]\n@x = r\n", Some("[groups]\nx = sally\n[/]\n* = r\n")),
        (
            "[/]\n@x = r\n",
            Some("[groups]\nx = sally\n[groups]\ny = a\n"),
        ),
        ("[/]\n@x = r\n", Some("[groups]\n$x = sally\n")),
        // Valid files, for contrast.
        ("[/]\n* = r\n[:glob:/**/x]\n* =\n", None),
        ("[/]\n@x = r\n", Some("[groups]\nx = sally\n")),
        ("[groups]\nx = \n[/]\n@x = rw\n", None),
        ("[/]\n* = r w\n", None),
        ("# only a comment\n", None),
    ];
    let dir = tempfile::tempdir().expect("tempdir");
    for (i, (text, groups)) in cases.iter().enumerate() {
        let file = dir.path().join(format!("authz{i}"));
        std::fs::write(&file, text).expect("write");
        let gfile = dir.path().join(format!("groups{i}"));
        // `validate` takes no groups file; `accessof` parses the same way and does.
        let mut args = vec!["validate".to_string()];
        if let Some(g) = groups {
            std::fs::write(&gfile, g).expect("write");
            args = vec![
                "accessof".into(),
                "--groups-file".into(),
                gfile.display().to_string(),
            ];
        }
        args.push(file.display().to_string());
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = svnauthz(&argv);
        let ours = Authz::parse(
            text.as_bytes(),
            &file,
            groups.map(|g| (g.as_bytes(), gfile.as_path())),
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        match (out.status.code(), ours) {
            (Some(0), Ok(_)) => {}
            (Some(1), Err(e)) => {
                let theirs = svnauthz_reason(&stderr);
                if text.contains("a = @b") {
                    // Which group of a cycle Subversion names depends on its hash order.
                    assert!(
                        theirs.starts_with("Recursive definition of group"),
                        "{theirs}"
                    );
                    assert!(e.reason.starts_with("Recursive definition of group"));
                } else {
                    assert_eq!(e.svn_message(), theirs, "case {i}: {text:?}");
                }
                assert!(
                    stderr.contains(&format!(
                        "Error while parsing authz file: '{}':",
                        file.display()
                    )) || groups.is_some(),
                    "case {i}: {stderr}"
                );
            }
            (code, ours) => panic!(
                "case {i} {text:?}: svnauthz exit {code:?} ({stderr}), Svelto {:?}",
                ours.map(|_| "valid")
            ),
        }
    }
}

#[test]
fn force_username_case_is_the_callers_job() {
    // The evaluator compares names exactly; svnserve upper/lower-cases before asking.
    let a = Authz::parse(b"[/]\nHARRY = rw\n", Path::new("authz"), None).expect("parse");
    assert!(a.check(None, "/x", Some("HARRY"), READ | WRITE));
    assert!(!a.check(None, "/x", Some("harry"), READ));
}
