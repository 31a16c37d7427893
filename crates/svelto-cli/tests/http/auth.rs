//! Logins over HTTP against Apache with mod_authz_svn: the same htpasswd file (written by
//! Debian's `htpasswd`: bcrypt, `$apr1$` MD5, `{SHA}`, SHA-512 crypt) and the same authz
//! file for Apache (`AuthType Basic`, `AuthUserFile`, `AuthzSVNAccessFile`, with and
//! without `Satisfy Any`, `Require valid-user`) and for Svelto (`--http-auth-file`,
//! svnserve.conf's `anon-access` and `authz-db`); the stock client's commands as anonymous,
//! good, wrong and unknown users, and raw requests with malformed `Authorization` headers,
//! give the same output and statuses on both. Then the authz matrix of the svn:// suite
//! over HTTP.

use std::path::PathBuf;

use svelto_testkit::authz_matrix::{self, both_any, install, repo_name, USERS};
use svelto_testkit::Pair;

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_svelto"))
}

use crate::{addr_and_path, htpasswd, KeepAlive};

/// The users of the login tests, one per hash form.
const LOGINS: &[(&str, &str, &str)] = &[
    ("harry", "harryssecret", "-B"),
    ("sally", "sallyssecret", "-m"),
    ("joe", "joessecret", "-s"),
    ("kim", "kimssecret", "-5"),
];

/// Sends one request with `headers` (raw lines) and returns the status and the value of
/// `WWW-Authenticate`, if any.
fn request(addr: &str, method: &str, path: &str, headers: &[Vec<u8>]) -> (u16, Option<String>) {
    let headers: Vec<&[u8]> = headers.iter().map(Vec::as_slice).collect();
    let (status, text) = crate::raw_request(addr, method, path, &headers, b"");
    let challenge = text.lines().take_while(|l| !l.is_empty()).find_map(|l| {
        let (name, value) = l.split_once(':')?;
        name.eq_ignore_ascii_case("www-authenticate")
            .then(|| value.trim().to_string())
    });
    (status, challenge)
}

fn basic(credentials: &[u8]) -> Vec<u8> {
    use base64::Engine as _;
    let mut h = b"Authorization: Basic ".to_vec();
    h.extend_from_slice(
        base64::engine::general_purpose::STANDARD
            .encode(credentials)
            .as_bytes(),
    );
    h
}

const REALM: &str = "Svelto test realm";

/// svnserve.conf of the Svelto side for `Satisfy Any` (`anonymous`) or `Require
/// valid-user` alone.
fn conf(anonymous: bool) -> String {
    format!(
        "[general]\nanon-access = {}\nauth-access = write\nauthz-db = authz\nrealm = {REALM}\n",
        if anonymous { "read" } else { "none" }
    )
}

fn creds(user: &str, password: &str) -> Vec<String> {
    vec![
        "--username".into(),
        user.into(),
        "--password".into(),
        password.into(),
    ]
}

/// `svn ARGS` (credentials first) on both sides, whatever the outcome.
fn both_as(pair: &Pair, who: &[String], args: &[&str]) -> svelto_testkit::Same {
    let mut v: Vec<&str> = vec![args[0]];
    v.extend(who.iter().map(String::as_str));
    v.extend_from_slice(&args[1..]);
    pair.both_any(&v)
}

#[test]
fn logins_and_refusals_match_apache() {
    let pair = Pair::http_auth("basic", &bin(), true);
    htpasswd(&pair.htpasswd(), LOGINS);
    let rules = "[/]\n* = r\n[basic:/trunk/a]\n* =\nharry = rw\nkim = r\n[basic:/trunk/doc]\n\
                 $anonymous =\n$authenticated = r\n";
    install(&pair, &conf(true), rules);

    let anon: Vec<String> = Vec::new();
    for who in [
        anon.clone(),
        creds("harry", "harryssecret"),
        creds("harry", "wrong"),
        creds("sally", "sallyssecret"),
        creds("joe", "joessecret"),
        creds("kim", "kimssecret"),
        creds("kim", "sallyssecret"),
        creds("nobody", "x"),
    ] {
        for args in [
            &["ls", "{URL}/trunk"][..],
            &["ls", "-R", "{URL}/trunk/a"],
            &["ls", "{URL}/trunk/doc"],
            &["cat", "{URL}/trunk/a/b/c/d/e/leaf.txt"],
            &["info", "{URL}/trunk/a"],
            &["log", "-v", "-q", "{URL}"],
        ] {
            both_as(&pair, &who, args);
        }
    }
    // A checkout as each: protected directories absent or present, the same on both.
    for (label, who) in [
        ("anon", anon.clone()),
        ("harry", creds("harry", "harryssecret")),
        ("sally", creds("sally", "sallyssecret")),
    ] {
        let scope = pair.scope(&format!("co-{label}"));
        let mut args: Vec<&str> = vec!["checkout"];
        args.extend(who.iter().map(String::as_str));
        args.extend(["{URL}/trunk", "wc"]);
        scope.both_any(&args);
        scope.compare_wc("wc");
        let mut up: Vec<&str> = vec!["update"];
        up.extend(who.iter().map(String::as_str));
        up.extend(["-r", "1", "wc"]);
        scope.both_any(&up);
        scope.compare_wc("wc");
    }

    // Raw requests: the status and whether a challenge comes, header by header.
    let long = {
        let mut h = b"Authorization: Basic ".to_vec();
        h.extend(std::iter::repeat_n(b'A', 9000));
        h
    };
    let cases: Vec<(&str, Vec<Vec<u8>>)> = vec![
        ("no credentials", vec![]),
        ("good", vec![basic(b"harry:harryssecret")]),
        ("wrong password", vec![basic(b"harry:nope")]),
        ("unknown user", vec![basic(b"nobody:nope")]),
        ("authenticated but refused", vec![basic(b"joe:joessecret")]),
        ("no colon", vec![basic(b"harry")]),
        ("empty", vec![b"Authorization: ".to_vec()]),
        (
            "bad base64",
            vec![b"Authorization: Basic !!!notbase64".to_vec()],
        ),
        (
            "other scheme",
            vec![b"Authorization: Bearer abc.def".to_vec()],
        ),
        ("non-UTF-8 name", vec![basic(b"\xffharry\xfe:harryssecret")]),
        ("too long", vec![long]),
    ];
    let (a_addr, a_path) = addr_and_path(&pair, 0);
    let (s_addr, s_path) = addr_and_path(&pair, 1);
    for (what, headers) in &cases {
        for (method, rel) in [
            ("GET", "/trunk/a/"),
            ("PROPFIND", "/trunk/a"),
            ("GET", "/trunk/"),
        ] {
            let mut headers = headers.clone();
            if method == "PROPFIND" {
                headers.push(b"Depth: 0".to_vec());
            }
            let a = request(&a_addr, method, &format!("{a_path}{rel}"), &headers);
            let s = request(&s_addr, method, &format!("{s_path}{rel}"), &headers);
            let too_long = *what == "too long";
            assert_eq!(
                a.0, s.0,
                "{what}: {method} {rel}: Apache answered {}, Svelto {}",
                a.0, s.0
            );
            if !too_long {
                assert_eq!(a.1, s.1, "{what}: {method} {rel}: the challenges differ");
            }
        }
    }
    let (status, challenge) = request(&s_addr, "GET", &format!("{s_path}/trunk/a/"), &[]);
    assert_eq!(status, 401);
    assert_eq!(
        challenge.as_deref(),
        Some("Basic realm=\"Svelto test realm\"")
    );
}

/// `Require valid-user` without `Satisfy Any` (svnserve.conf: `anon-access = none`):
/// nothing without a login, everything the rules give with one.
#[test]
fn require_valid_user_matches_apache() {
    let pair = Pair::http_auth("basic", &bin(), false);
    htpasswd(&pair.htpasswd(), LOGINS);
    install(
        &pair,
        &conf(false),
        "[/]\n* = r\n[basic:/trunk/a]\n* =\nharry = rw\n",
    );
    let anon: Vec<String> = Vec::new();
    for who in [
        anon,
        creds("harry", "harryssecret"),
        creds("sally", "sallyssecret"),
        creds("sally", "harryssecret"),
    ] {
        for args in [
            &["ls", "{URL}"][..],
            &["ls", "{URL}/trunk/a"],
            &["info", "{URL}/trunk"],
            &["log", "-q", "{URL}/trunk"],
        ] {
            both_as(&pair, &who, args);
        }
    }
    let (s_addr, s_path) = addr_and_path(&pair, 1);
    let (a_addr, a_path) = addr_and_path(&pair, 0);
    for method in ["OPTIONS", "GET"] {
        let a = request(&a_addr, method, &format!("{a_path}/trunk/"), &[]);
        let s = request(&s_addr, method, &format!("{s_path}/trunk/"), &[]);
        assert_eq!(a, s, "{method}");
        assert_eq!(s.0, 401, "{method}");
    }
}

/// An authz file that cannot be used (a rule naming an undefined group, groups that
/// include each other) refuses every request as mod_authz_svn refuses it: 401 where a login
/// could help, 403 for a logged-in user, whatever the method and URL (`!svn/me` too), and
/// the client is not told where the file is; the same output from the stock client. A
/// usable file again, and reads work again.
#[test]
fn broken_authz_refuses_as_apache() {
    let pair = Pair::http_auth("basic", &bin(), true);
    htpasswd(&pair.htpasswd(), LOGINS);
    let (a_addr, a_path) = addr_and_path(&pair, 0);
    let (s_addr, s_path) = addr_and_path(&pair, 1);
    let anon: Vec<String> = Vec::new();
    let harry = creds("harry", "harryssecret");
    for rules in [
        "[/]\n* = r\n[/trunk/a]\n@undefined_group = rw\n",
        "[groups]\nadmins = a1, @devs\ndevs = @admins, d1\n[/]\n* = r\n",
    ] {
        install(&pair, &conf(true), rules);
        for who in [&anon, &harry] {
            both_as(&pair, who, &["ls", "{URL}/trunk"]);
            both_as(&pair, who, &["cat", "{URL}/trunk/README.txt"]);
            both_as(&pair, who, &["mkdir", "-m", "m", "{URL}/trunk/new"]);
        }
        for headers in [vec![], vec![basic(b"harry:harryssecret")]] {
            for (method, rel) in [
                ("GET", "/trunk/"),
                ("PROPFIND", "/trunk"),
                ("OPTIONS", "/"),
                ("POST", "/!svn/me"),
                ("MKCOL", "/trunk/x"),
            ] {
                let mut headers = headers.clone();
                if method == "PROPFIND" {
                    headers.push(b"Depth: 0".to_vec());
                }
                let a = request(&a_addr, method, &format!("{a_path}{rel}"), &headers);
                let s = request(&s_addr, method, &format!("{s_path}{rel}"), &headers);
                assert_eq!(a.0, s.0, "{rules:?}: {method} {rel}: Apache, Svelto");
                assert!(s.0 == 401 || s.0 == 403, "{method} {rel}: {}", s.0);
                let headers: Vec<&[u8]> = headers.iter().map(Vec::as_slice).collect();
                let (_, text) =
                    crate::raw_request(&s_addr, method, &format!("{s_path}{rel}"), &headers, b"");
                assert!(
                    !text.contains("conf/authz") && !text.contains("undefined"),
                    "{method} {rel}: {text}"
                );
            }
        }
    }
    let log = std::fs::read_to_string(pair.subject_repo().join("../../serve.log"))
        .expect("read serve.log");
    assert!(
        log.contains("Invalid authz configuration") && log.contains("undefined_group"),
        "{log}"
    );
    install(&pair, &conf(true), "[/]\n* = r\n");
    let out = both_as(&pair, &harry, &["ls", "{URL}/trunk"]);
    assert!(out.success());
}

/// Updates whose target or switch source became unreadable (Subversion's authz_tests 29
/// over HTTP: a file external `Z` of a file in `/trunk`, and a directory `/trunk/Z` copied in
/// later and then made unreadable) go through as through Apache: mod_dav_svn checks neither the update's
/// target nor a switch's source as a whole (the drive sends what is unreadable as absent),
/// where Svelto refused the REPORT 403. Also an update of a subdirectory made unreadable
/// (its parent the anchor) and a switch into one.
#[test]
fn updates_over_unreadable_targets_match_apache() {
    let mut pair = Pair::http_auth("basic", &bin(), true);
    // Commits on both sides in the same second or not: dates differ.
    pair.mask_dates();
    htpasswd(&pair.htpasswd(), LOGINS);
    // Anonymous users may not write on either side (Apache's `Satisfy Any` lets them write
    // where the rules do).
    install(&pair, &conf(true), "[/]\n* = r\nharry = rw\n");
    let harry = creds("harry", "harryssecret");
    let scope = pair.scope("unreadable-targets");
    let run = |args: &[&str]| {
        let mut v: Vec<&str> = vec![args[0]];
        v.extend(harry.iter().map(String::as_str));
        v.extend_from_slice(&args[1..]);
        scope.both_any(&v)
    };
    assert!(run(&["checkout", "{URL}", "wc"]).success());
    assert!(run(&["propset", "svn:externals", "Z {URL}/trunk/README.txt", "wc"]).success());
    assert!(run(&["update", "wc"]).success());
    scope.compare_wc("wc");
    // The external's switch names `trunk/Z` (the external's directory in the repository and
    // its name in the working copy).
    assert!(run(&["copy", "-m", "Add Z", "{URL}/trunk/a", "{URL}/trunk/Z"]).success());
    install(
        &pair,
        &conf(true),
        "[/]\n* = r\nharry = rw\n[/trunk/Z]\n* =\n[/trunk/a]\n* =\n",
    );
    let up = run(&["update", "wc"]);
    assert!(up.success(), "{}", String::from_utf8_lossy(&up.stderr));
    scope.compare_wc("wc");
    run(&["update", "wc/trunk/a"]);
    scope.compare_wc("wc");
    run(&["switch", "{URL}/trunk/a", "wc/branches"]);
    scope.compare_wc("wc");
}

/// Readable paths under a hidden root and hidden parents (Subversion's issue #3242,
/// authz_tests 15 and 16, merge_authz_tests 3 and 4): checkout, GET by revision, update to
/// a renamed file, diff and log of the readable subtree answer as through Apache. The
/// service refuses each hidden directory a lookup would pass through, so the front end's
/// walk from the root must give way to one lookup of the readable path itself.
#[test]
fn readable_paths_under_a_hidden_root_answer_as_through_apache() {
    let mut pair = Pair::http_auth("basic", &bin(), true);
    // Commits on both sides in the same second or not: dates differ.
    pair.mask_dates();
    htpasswd(&pair.htpasswd(), LOGINS);
    install(&pair, &conf(true), "[/]\nharry = rw\n");
    let harry = creds("harry", "harryssecret");
    let scope = pair.scope("hidden-root");
    let run = |args: &[&str]| {
        let mut v: Vec<&str> = vec![args[0]];
        v.extend(harry.iter().map(String::as_str));
        v.extend_from_slice(&args[1..]);
        scope.both_any(&v)
    };
    assert!(run(&["copy", "-m", "branch", "{URL}/trunk", "{URL}/branches/b"]).success());
    install(
        &pair,
        &conf(true),
        "[/]\n* =\n[/trunk/a]\nharry = rw\n[/branches/b/a]\nharry = r\n",
    );
    assert!(run(&["checkout", "{URL}/trunk/a", "wc"]).success());
    scope.compare_wc("wc");
    run(&["cat", "{URL}/trunk/a/b/all-bytes.bin@3"]);
    run(&["ls", "-R", "-v", "{URL}/trunk/a"]);
    run(&["log", "-v", "{URL}/trunk/a"]);
    run(&["diff", "{URL}/trunk/a", "{URL}/branches/b/a"]);
    run(&["diff", "-c", "2", "{URL}/trunk/a"]);
    assert!(run(&[
        "move",
        "-m",
        "rename",
        "{URL}/trunk/a/b/c/empty-in-deep.txt",
        "{URL}/trunk/a/b/c/moved.txt"
    ])
    .success());
    run(&["update", "wc"]);
    scope.compare_wc("wc");
    run(&["ls", "{URL}/trunk"]);
    run(&["ls", "{URL}"]);
}

/// Writes under a read-only parent (Subversion's authz_tests 5 over HTTP): mod_authz_svn
/// checks each request's own path (a `DELETE` needs recursive write access to what it
/// deletes, a `MKCOL`, `PUT` or `COPY` destination write access to itself), and mod_dav_svn
/// adds and deletes without the commit editor's check of the parent. So `svn rm` and `svn
/// mv` of a writable directory under a read-only parent go through Apache, while additions
/// and deletions of read-only paths are refused; the same on Svelto over HTTP (svn:// keeps
/// svnserve's rule, which also asks for the parent: `tests/serve/authz.rs`).
#[test]
fn writes_under_a_read_only_parent_are_authorized_as_mod_authz_svn_does() {
    let mut pair = Pair::http_auth("basic", &bin(), true);
    pair.mask_dates();
    htpasswd(&pair.htpasswd(), LOGINS);
    install(
        &pair,
        &conf(true),
        "[/]\n* = r\n[/trunk/a]\nharry = rw\n[/branches]\nharry = rw\n",
    );
    let harry = creds("harry", "harryssecret");
    let scope = pair.scope("read-only-parent");
    let run = |args: &[&str]| {
        let mut v: Vec<&str> = vec![args[0]];
        v.extend(harry.iter().map(String::as_str));
        v.extend_from_slice(&args[1..]);
        scope.both_any(&v)
    };
    assert!(!run(&["mkdir", "-m", "new", "{URL}/trunk/new"]).success());
    assert!(!run(&["rm", "-m", "rm", "{URL}/trunk/README.txt"]).success());
    assert!(!run(&[
        "mv",
        "-m",
        "mv",
        "{URL}/trunk/README.txt",
        "{URL}/branches/R"
    ])
    .success());
    assert!(run(&["cp", "-m", "cp", "{URL}/trunk/a", "{URL}/branches/a"]).success());
    // The parent of trunk/a is read-only; trunk/a itself is writable.
    assert!(run(&["mv", "-m", "mv", "{URL}/trunk/a/b", "{URL}/branches/b"]).success());
    assert!(run(&["rm", "-m", "rm", "{URL}/trunk/a"]).success());
    assert!(run(&["mv", "-m", "mv", "{URL}/branches/a", "{URL}/trunk/a"]).success());
    run(&["log", "-v", "-l", "5", "{URL}"]);
    run(&["ls", "-R", "{URL}"]);
}

/// The HTTP pair of the authz matrix (`Satisfy Any`): the matrix's users in the password
/// file (bcrypt, `$apr1$`, `{SHA}`), its rules and svnserve.conf.
fn matrix_pair() -> Pair {
    let pair = Pair::http_auth("copies", &bin(), true);
    let users: Vec<(&str, &str, &str)> = authz_matrix::PASSWORDS
        .iter()
        .zip(["-B", "-m", "-s"])
        .map(|((u, p), flag)| (*u, *p, flag))
        .collect();
    htpasswd(&pair.htpasswd(), &users);
    install(
        &pair,
        &format!("{}realm = {REALM}\n", authz_matrix::CONF),
        &authz_matrix::authz(&repo_name(&pair)),
    );
    pair
}

/// The authz matrix of the svn:// suite (`tests/serve/authz.rs`) over HTTP: the same rules,
/// users and read commands, Apache with mod_authz_svn against Svelto.
#[test]
fn authz_matrix_reads_match_apache() {
    let pair = matrix_pair();
    authz_matrix::reads(&pair);
    for (_, user) in USERS {
        authz_matrix::history_reads(&pair, user);
        both_any(
            &pair,
            user,
            &["propget", "--revprop", "-r", "6", "svn:author", "{URL}"],
        );
    }
}

/// The write side of the matrix (`authz_matrix::writes`): mkdir, copy and rm by URL, a
/// working-copy commit, and locks and unlocks (with `--force` too) as each user, anonymous
/// and joe included (mod_authz_svn asks a write of the URL's path for LOCK and UNLOCK),
/// refused and allowed as Apache with mod_authz_svn refuses and allows them, the same
/// output.
#[test]
fn authz_matrix_writes_match_apache() {
    let mut pair = matrix_pair();
    pair.mask_dates();
    authz_matrix::writes(&pair, &["anon", "harry", "sally", "joe"]);
    // The locks left (tags/1.0/main.c, which harry may not read and sally may lock) are
    // the same.
    let locks = crate::locks::assert_same_locks(&pair);
    assert!(locks.contains("Owner: sally"), "{locks}");
}

/// svnserve.conf's `[http] password-db` names the password file when `--http-auth-file`
/// is not given. A stored hash Svelto cannot check (crypt's
/// DES, `htpasswd -d`) refuses that user's login and says why in the log.
#[test]
fn password_db_in_svnserve_conf() {
    let pair = Pair::http("basic", &bin());
    let conf_dir = pair.subject_repo().join("conf");
    htpasswd(
        &conf_dir.join("htpasswd"),
        &[("harry", "harryssecret", "-B"), ("old", "oldsecret", "-d")],
    );
    std::fs::write(
        conf_dir.join("svnserve.conf"),
        "[general]\nanon-access = none\n[http]\npassword-db = htpasswd\n",
    )
    .expect("svnserve.conf");
    let client = pair.client();
    let s = pair.scope("pwdb");
    let url = format!("{}/trunk", pair.subject_url());
    let ls = |who: &[&str]| {
        let mut args = vec!["ls"];
        args.extend_from_slice(who);
        args.push(&url);
        client.svn(&args, &s.path(1))
    };
    let out = ls(&["--username", "harry", "--password", "harryssecret"]);
    assert!(out.success(), "{}", out.stderr_text());
    assert!(out.stdout_text().contains("README.txt"));
    let out = ls(&[]);
    assert!(!out.success());
    assert!(
        out.stderr_text().contains("E215004"),
        "{}",
        out.stderr_text()
    );
    let out = ls(&["--username", "old", "--password", "oldsecret"]);
    assert!(!out.success());
    let log = std::fs::read_to_string(pair.subject_repo().join("../../serve.log"))
        .expect("read serve.log");
    assert!(
        log.contains("user old: the password file") && log.contains("crypt(3) DES"),
        "{log}"
    );
}

/// A keep-alive connection to each side, both asking for the same file.
struct Sides {
    apache: KeepAlive,
    svelto: KeepAlive,
    a_url: String,
    s_url: String,
}

impl Sides {
    /// The request with `headers` on both connections: `want` from both; Svelto's
    /// connection stays open (the point is that the requests share one).
    fn both(&mut self, headers: &[Vec<u8>], want: u16, what: &str) {
        let (a, a_open) = self.apache.get(&self.a_url, headers);
        if !a_open {
            self.apache = KeepAlive::open(&self.apache.addr.clone());
        }
        let (s, s_open) = self.svelto.get(&self.s_url, headers);
        assert!(s_open, "{what}: Svelto closed the connection");
        assert_eq!((a, s), (want, want), "{what}: Apache, Svelto");
    }

    /// Svelto's connection asks with `headers` every 50 ms while `change` is made: `before`
    /// until then, `after` for every request sent more than a second later.
    fn keeps_asking(
        &mut self,
        change: impl FnOnce(),
        headers: &[Vec<u8>],
        before: u16,
        after: u16,
    ) {
        use std::time::{Duration, Instant};
        let (s, _) = self.svelto.get(&self.s_url, headers);
        assert_eq!(s, before, "before the change");
        change();
        let changed = Instant::now();
        while changed.elapsed() < Duration::from_millis(1500) {
            let sent = changed.elapsed();
            let (s, open) = self.svelto.get(&self.s_url, headers);
            assert!(open, "Svelto closed the connection");
            if sent > Duration::from_millis(1050) {
                assert_eq!(s, after, "{sent:?} after the change");
            }
            assert!(s == before || s == after, "{s} {sent:?} after the change");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// A connection reuses its admission (repository handle, configuration, login) for up to
/// a second, but never for other credentials and never longer: on one keep-alive connection
/// each change of the `Authorization` header gets its own answer at once, and edits of the
/// password and authz files apply to requests more than a second later, even while the
/// connection keeps asking. Apache answers the same on its own connection (it reads the
/// password file for each request; mod_authz_svn keeps the authz rules for the connection's
/// life, a second here).
#[test]
fn a_connection_reuses_no_login_for_other_credentials_or_past_a_second() {
    let pair = Pair::http_auth("basic", &bin(), true);
    htpasswd(
        &pair.htpasswd(),
        &[
            ("harry", "harryssecret", "-B"),
            ("sally", "sallyssecret", "-m"),
        ],
    );
    install(
        &pair,
        &conf(true),
        "[/]\n* = r\n[basic:/trunk/a]\n* =\nharry = r\n",
    );
    let (a_addr, a_path) = addr_and_path(&pair, 0);
    let (s_addr, s_path) = addr_and_path(&pair, 1);
    let leaf = "/trunk/a/b/all-bytes.bin";
    let mut sides = Sides {
        apache: KeepAlive::open(&a_addr),
        svelto: KeepAlive::open(&s_addr),
        a_url: format!("{a_path}{leaf}"),
        s_url: format!("{s_path}{leaf}"),
    };
    let harry = basic(b"harry:harryssecret");
    let sally = basic(b"sally:sallyssecret");
    sides.both(std::slice::from_ref(&harry), 200, "harry");
    sides.both(std::slice::from_ref(&sally), 403, "sally right after harry");
    sides.both(&[basic(b"harry:wrong")], 401, "harry's wrong password");
    sides.both(&[], 401, "no credentials");
    sides.both(std::slice::from_ref(&harry), 200, "harry again");
    // Two Authorization headers, harry's first: Svelto refuses the ambiguity (Apache merges
    // them and reads the first), as on a new connection, not what it answered harry alone.
    let (s, _) = sides
        .svelto
        .get(&sides.s_url, &[harry.clone(), sally.clone()]);
    assert_eq!(s, 401, "two Authorization headers");
    let (s, _) = KeepAlive::open(&s_addr).get(&sides.s_url, &[harry.clone(), sally.clone()]);
    assert_eq!(s, 401, "two Authorization headers on a new connection");
    sides.both(std::slice::from_ref(&harry), 200, "harry once more");

    // harry's password changes (the new file renamed into place): the old one is refused,
    // the new one taken.
    let new_file = pair.htpasswd().with_extension("new");
    htpasswd(
        &new_file,
        &[
            ("harry", "newsecret", "-B"),
            ("sally", "sallyssecret", "-m"),
        ],
    );
    sides.keeps_asking(
        || std::fs::rename(&new_file, pair.htpasswd()).expect("rename the password file"),
        std::slice::from_ref(&harry),
        200,
        401,
    );
    sides.both(std::slice::from_ref(&harry), 401, "harry's old password");
    let harry = basic(b"harry:newsecret");
    sides.both(std::slice::from_ref(&harry), 200, "harry's new password");
    // The rules change: harry may no longer read /trunk/a.
    sides.keeps_asking(
        || {
            for repo in [pair.reference_repo(), pair.subject_repo()] {
                let new = repo.join("conf/authz.new");
                std::fs::write(&new, "[/]\n* = r\n[basic:/trunk/a]\n* =\n").expect("authz");
                std::fs::rename(&new, repo.join("conf/authz")).expect("rename authz");
            }
        },
        std::slice::from_ref(&harry),
        200,
        403,
    );
    // mod_authz_svn keeps the rules it read for the connection's life: Apache is asked on
    // a new one.
    sides.apache = KeepAlive::open(&a_addr);
    sides.both(
        std::slice::from_ref(&harry),
        403,
        "harry after the rules changed",
    );
}

/// A repository that does not exist under the parent path, asked for by a logged-in user
/// and by an anonymous one, under rules for every repository (`[/]`): the same answers as
/// through Apache with mod_authz_svn (404, "Could not find the requested SVN filesystem",
/// neither the name nor a server path in it). Not yet alike: rules for named repositories
/// only, where mod_authz_svn refuses a missing name 403 before mod_dav_svn looks for it.
#[test]
fn a_missing_repository_answers_as_through_apache() {
    let pair = Pair::http_auth("basic", &bin(), true);
    htpasswd(&pair.htpasswd(), LOGINS);
    let harry = creds("harry", "harryssecret");
    install(&pair, &conf(true), "[/]\n* = r\nharry = rw\n");
    for who in [&harry[..], &[]] {
        for args in [
            &["ls", "{SERVER}/missing"][..],
            &["info", "{SERVER}/missing/trunk"],
            &["mkdir", "-m", "m", "{SERVER}/missing/x"],
        ] {
            assert!(!both_as(&pair, who, args).success());
        }
    }
}
