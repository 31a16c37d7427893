//! The path-based authorization matrix both protocols are checked on: one authz file (groups,
//! aliases, a repository-specific section, `~` inversion, `$anonymous`/`$authenticated`,
//! a glob rule), anonymous and three users, and the read commands each runs. The svn://
//! suite (`tests/serve/authz.rs`) runs it against svnserve, the HTTP suite
//! (`tests/http/auth.rs`) against Apache with mod_authz_svn; the same output is required in
//! every cell.

use crate::serve::Pair;

/// svnserve.conf of the matrix: anonymous reads, authenticated writes, the authz file.
pub const CONF: &str = "[general]\nanon-access = read\nauth-access = write\npassword-db = passwd\n\
                        authz-db = authz\n";

/// The users and their passwords (svnserve's `passwd`; the HTTP suite writes them to an
/// htpasswd file).
pub const PASSWORDS: &[(&str, &str)] = &[
    ("harry", "harryssecret"),
    ("sally", "sallyssecret"),
    ("joe", "joessecret"),
];

/// svnserve's password file of [`PASSWORDS`].
pub fn passwd() -> String {
    let mut s = String::from("[users]\n");
    for (user, password) in PASSWORDS {
        s.push_str(&format!("{user} = {password}\n"));
    }
    s
}

/// (label, credentials) of the users in the matrix.
pub const USERS: &[(&str, &[&str])] = &[
    ("anon", &[]),
    (
        "harry",
        &["--username", "harry", "--password", "harryssecret"],
    ),
    (
        "sally",
        &["--username", "sally", "--password", "sallyssecret"],
    ),
    ("joe", &["--username", "joe", "--password", "joessecret"]),
];

/// `@devs` (harry, and sally through `@leads`) own trunk/lib; docs are hidden from
/// anonymous users in this repository only; main.c anywhere is hidden from harry; sally
/// alone writes branches; nobody writes elsewhere.
pub fn authz(repo: &str) -> String {
    format!(
        "[groups]\ndevs = &h, @leads\nleads = sally\n\
         [aliases]\nh = harry\n\
         [/]\n* = r\n\
         [/trunk/lib]\n* =\n@devs = rw\n\
         [{repo}:/trunk/docs]\n$anonymous =\n$authenticated = r\n&h = rw\n\
         [/branches]\n~sally = r\nsally = rw\n\
         [:glob:/**/main.c]\nharry =\nsally = rw\n$anonymous = r\n"
    )
}

/// Writes `svnserve.conf`, `passwd` and `authz` into both repositories' `conf/`.
pub fn install(pair: &Pair, conf: &str, authz_text: &str) {
    for repo in [pair.reference_repo(), pair.subject_repo()] {
        let dir = repo.join("conf");
        std::fs::write(dir.join("svnserve.conf"), conf).expect("write svnserve.conf");
        std::fs::write(dir.join("passwd"), passwd()).expect("write passwd");
        std::fs::write(dir.join("authz"), authz_text).expect("write authz");
    }
}

/// The repository's name (its directory's).
pub fn repo_name(pair: &Pair) -> String {
    pair.reference_repo()
        .file_name()
        .expect("repository name")
        .to_string_lossy()
        .into_owned()
}

/// `args` with the user's credentials after the subcommand.
pub fn with(user: &[&str], args: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let at = 1.min(v.len());
    for (i, a) in user.iter().enumerate() {
        v.insert(at + i, a.to_string());
    }
    v
}

/// `svn args...` as `user` on both sides, whatever the outcome, compared.
pub fn both_any(pair: &Pair, user: &[&str], args: &[&str]) {
    let v = with(user, args);
    let argv: Vec<&str> = v.iter().map(String::as_str).collect();
    pair.both_any(&argv);
}

/// The read commands of the matrix, as every user: listings, cat, info, inherited
/// properties, logs; checkouts of the root and of trunk at r3, updates, status, switch and
/// diff, working copies compared.
pub fn reads(pair: &Pair) {
    for (label, user) in USERS {
        for args in [
            &["ls", "-R", "-v", "{URL}"][..],
            &["ls", "{URL}/trunk/lib"],
            &["ls", "{URL}/trunk/docs"],
            &["cat", "{URL}/trunk/main.c"],
            &["cat", "{URL}/trunk/lib/a.c"],
            &["cat", "{URL}/branches/feature/main.c"],
            &["info", "{URL}/trunk/docs"],
            &["info", "{URL}/trunk/lib/a.c"],
            &[
                "proplist",
                "-v",
                "--show-inherited-props",
                "{URL}/trunk/lib/a.c",
            ],
            &["log", "-v", "{URL}"],
            &["log", "-v", "-r", "1:HEAD", "{URL}/trunk"],
            &["log", "-v", "{URL}/trunk/lib"],
            &["log", "-q", "{URL}/branches/feature"],
            &["log", "--xml", "--with-all-revprops", "-v", "{URL}/tags"],
        ] {
            both_any(pair, user, args);
        }
        let scope = pair.scope(&format!("read-{label}"));
        let run = |args: &[&str]| {
            let v = with(user, args);
            let argv: Vec<&str> = v.iter().map(String::as_str).collect();
            scope.both_any(&argv);
        };
        run(&["checkout", "{URL}", "wc"]);
        scope.compare_wc("wc");
        run(&["checkout", "-r", "3", "{URL}/trunk", "trunk"]);
        scope.compare_wc("trunk");
        for args in [
            &["update", "trunk"][..],
            &["update", "-r", "5", "trunk"],
            &["status", "-u", "trunk"],
            &["switch", "{URL}/branches/feature", "trunk"],
            &["diff", "-r", "2:HEAD", "{URL}"],
        ] {
            run(args);
        }
        scope.compare_wc("trunk");
    }
}

/// The history reads of the matrix, as `user`: blame through copies from hidden paths and
/// of a file hidden from some, log with revision properties, and every revision's
/// properties.
pub fn history_reads(pair: &Pair, user: &[&str]) {
    for args in [
        // Copied from trunk/lib (hidden from anonymous and joe) in r8.
        &["blame", "{URL}/trunk/a-orig.c"][..],
        &["blame", "-v", "{URL}/trunk/lib2/a.c"],
        &["blame", "{URL}/trunk/lib/a.c"],
        &["blame", "{URL}/tags/mixed/a.c"],
        // main.c is hidden from harry everywhere; main-copy.c is not.
        &["blame", "{URL}/branches/feature/main.c"],
        &["blame", "{URL}/trunk/main-copy.c"],
        &["blame", "-r", "9:1", "{URL}/trunk/lib2/a.c"],
        &[
            "log",
            "-q",
            "--with-all-revprops",
            "-r",
            "1:HEAD",
            "{URL}/trunk/lib2",
        ],
    ] {
        both_any(pair, user, args);
    }
    for rev in 0..=12 {
        let rev = rev.to_string();
        both_any(
            pair,
            user,
            &["proplist", "--revprop", "-v", "-r", &rev, "{URL}"],
        );
    }
}

/// The write commands of the matrix, as every user: mkdir, copy and rm by URL where the
/// rules allow and refuse them, a working-copy commit touching readable and hidden files,
/// and locks and unlocks by the users labelled in `lockers`. The pair should mask dates
/// (the commits get theirs on each side a moment apart).
pub fn writes(pair: &Pair, lockers: &[&str]) {
    for (label, user) in USERS {
        for args in [
            &[
                "mkdir",
                "-m",
                "m",
                &format!("{{URL}}/trunk/lib/new-{label}"),
            ][..],
            &["mkdir", "-m", "m", &format!("{{URL}}/tags/new-{label}")],
            &["mkdir", "-m", "m", &format!("{{URL}}/branches/new-{label}")],
            &[
                "copy",
                "-m",
                "c",
                "{URL}/trunk",
                &format!("{{URL}}/branches/b-{label}"),
            ],
            &[
                "copy",
                "-m",
                "c",
                "{URL}/trunk/lib",
                &format!("{{URL}}/branches/l-{label}"),
            ],
            &["rm", "-m", "r", &format!("{{URL}}/branches/new-{label}")],
        ] {
            let args: Vec<&str> = args.iter().map(|s| &**s).collect();
            both_any(pair, user, &args);
        }
        if lockers.contains(label) {
            for args in [
                &["lock", "-m", "l", "{URL}/trunk/lib/a.c"][..],
                &["unlock", "{URL}/trunk/lib/a.c"],
                &["lock", "-m", "l", "{URL}/trunk/docs/x.txt"],
                &["unlock", "--force", "{URL}/trunk/docs/x.txt"],
                &["lock", "-m", "l", "{URL}/tags/1.0/main.c"],
            ] {
                both_any(pair, user, args);
            }
        }
        // A working-copy commit touching a readable and a hidden file.
        let scope = pair.scope(&format!("write-{label}"));
        let run = |args: &[&str]| {
            let v = with(user, args);
            let argv: Vec<&str> = v.iter().map(String::as_str).collect();
            scope.both_any(&argv);
        };
        run(&["checkout", "{URL}/trunk", "wc"]);
        for file in ["wc/lib/a.c", "wc/docs/x.txt", "wc/main.c"] {
            if scope.path(0).join(file).exists() {
                scope.write(file, format!("edit by {label}\n").as_bytes());
            }
        }
        run(&["commit", "-m", "edit", "wc"]);
        scope.compare_wc("wc");
        both_any(pair, user, &["log", "-v", "-l", "3", "{URL}"]);
    }
}
