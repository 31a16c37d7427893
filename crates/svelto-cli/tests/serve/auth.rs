//! Authentication: the same `conf/svnserve.conf` and `conf/passwd` in both repositories,
//! the same client commands, the same outcomes (anon-access, auth-access, CRAM-MD5 with
//! right and wrong credentials, the auth slot asking for a user name before a write,
//! configuration errors), and EXTERNAL in tunnel mode with `--tunnel-user`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use svelto_testkit::{tempdir, Outcome, Pair, Run};

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_svelto"))
}

/// A fresh pair on the `basic` fixture with this svnserve.conf (and passwd) in both
/// repositories. Both servers read them per connection.
fn pair_with(conf: &str, passwd: Option<&str>) -> Pair {
    let pair = Pair::new("basic", &bin());
    configure(&pair, conf, passwd);
    pair
}

fn configure(pair: &Pair, conf: &str, passwd: Option<&str>) {
    for repo in [pair.reference_repo(), pair.subject_repo()] {
        let dir = repo.join("conf");
        std::fs::write(dir.join("svnserve.conf"), conf).expect("write svnserve.conf");
        match passwd {
            Some(p) => std::fs::write(dir.join("passwd"), p).expect("write passwd"),
            None => {
                let _ = std::fs::remove_file(dir.join("passwd"));
            }
        }
    }
}

const PASSWD: &str = "[users]\nharry = harryssecret\nsally = sallyssecret\n";

fn stderr_of(out: &Outcome) -> String {
    out.stderr_text()
}

#[test]
fn anon_none_auth_read_cram_md5_like_svnserve() {
    let pair = pair_with(
        "[general]\nanon-access = none\nauth-access = read\npassword-db = passwd\n\
         realm = Svelto Test\nforce-username-case = upper\n",
        Some(PASSWD),
    );
    // No credentials: the client cannot answer CRAM-MD5.
    pair.both_fails(&["ls", "{URL}"]);
    let [reference, _] = pair.run_both(Path::new(""), "svn", &["ls", "{URL}"]);
    assert!(
        stderr_of(&reference).contains("E170001"),
        "{}",
        stderr_of(&reference)
    );
    let user = ["--username", "harry", "--password", "harryssecret"];
    pair.both(&[&["ls", "-v"][..], &user, &["{URL}/trunk"]].concat());
    pair.both(&[&["log", "-v"][..], &user, &["{URL}"]].concat());
    // User names match the passwd file without regard to case.
    pair.both(&[
        "ls",
        "--username",
        "HARRY",
        "--password",
        "harryssecret",
        "{URL}",
    ]);
    // Wrong password, unknown user: svnserve's messages.
    pair.both_fails(&["ls", "--username", "harry", "--password", "nope", "{URL}"]);
    let [reference, _] = pair.run_both(
        Path::new(""),
        "svn",
        &["ls", "--username", "harry", "--password", "nope", "{URL}"],
    );
    assert!(
        stderr_of(&reference).contains("Password incorrect"),
        "{}",
        stderr_of(&reference)
    );
    pair.both_fails(&["ls", "--username", "nobody", "--password", "x", "{URL}"]);
    // auth-access = read: an authenticated write is refused in the auth slot.
    pair.both_fails(&[&["mkdir", "-m", "x"][..], &user, &["{URL}/newdir"]].concat());
    let [reference, subject] = pair.run_both(
        Path::new(""),
        "svn",
        &[&["mkdir", "-m", "x"][..], &user, &["{URL}/newdir"]].concat(),
    );
    for out in [&reference, &subject] {
        assert!(
            stderr_of(out).contains("E170001: Authorization failed"),
            "{}",
            stderr_of(out)
        );
    }
}

#[test]
fn writes_ask_for_a_user_name_in_the_auth_slot() {
    let pair = pair_with(
        "[general]\nanon-access = read\nauth-access = write\npassword-db = passwd\n",
        Some(PASSWD),
    );
    pair.both(&["ls", "{URL}"]);
    // Anonymous write: the slot asks for CRAM-MD5, which a client without credentials
    // cannot answer.
    pair.both_fails(&["mkdir", "-m", "x", "{URL}/newdir"]);
    pair.both_fails(&[
        "mkdir",
        "--username",
        "harry",
        "--password",
        "wrong",
        "-m",
        "x",
        "{URL}/newdir",
    ]);
    // Right credentials get past the slot: svnserve commits, Svelto (no commits yet)
    // fails with 200007, not with an authorization error.
    let args = [
        "mkdir",
        "--username",
        "harry",
        "--password",
        "harryssecret",
        "-m",
        "x",
        "{URL}/newdir",
    ];
    // The commit goes through on both, by harry.
    pair.both(&args);
    pair.both(&["propget", "--revprop", "-r", "HEAD", "svn:author", "{URL}"]);
}

#[test]
fn without_a_password_db_writes_are_not_authorized() {
    // svnserve's defaults: anon-access = read, nothing to authenticate with.
    let pair = pair_with("[general]\n", None);
    pair.both(&["ls", "{URL}"]);
    pair.both_fails(&["mkdir", "-m", "x", "{URL}/newdir"]);
    let [reference, _] = pair.run_both(Path::new(""), "svn", &["mkdir", "-m", "x", "{URL}/newdir"]);
    assert!(
        stderr_of(&reference).contains("E170001: Authorization failed"),
        "{}",
        stderr_of(&reference)
    );
    // anon-access = write (what write tests use): the anonymous session may write.
    configure(&pair, "[general]\nanon-access = write\n", None);
    pair.both(&["mkdir", "-m", "x", "{URL}/newdir"]);
}

#[test]
fn configuration_errors_like_svnserve() {
    let pair = pair_with("[general]\nanon-access = none\n", None);
    // Nothing allowed at all.
    pair.both_fails(&["ls", "{URL}"]);
    // A syntax error: the file and line, in svnserve's words (paths differ: each side's
    // repository is in its own directory, so compare the line's reason only). svnserve
    // numbers lines without counting section headers: the stray line 4 is its "line 3".
    configure(&pair, "[general]\nanon-access = read\n\n  stray\n", None);
    let [reference, subject] = pair.run_both(Path::new(""), "svn", &["ls", "{URL}"]);
    for out in [&reference, &subject] {
        assert!(!out.success());
        assert!(
            stderr_of(out).contains("Error while parsing config file: ")
                && stderr_of(out).contains("svnserve.conf:")
                && stderr_of(out).contains("E200002: line 3: Option expected"),
            "{}",
            stderr_of(out)
        );
    }
    // A password-db that does not exist: svnserve's bare "Authentication failed".
    configure(
        &pair,
        "[general]\nanon-access = read\npassword-db = missing-passwd\n",
        None,
    );
    pair.both_fails(&["ls", "{URL}"]);
    // Changes apply to new connections without a restart.
    configure(&pair, "[general]\nanon-access = read\n", None);
    pair.both(&["ls", "{URL}"]);
}

#[test]
fn sasl_is_refused_clearly() {
    // (authz-db is served: see the `authz` tests.)
    let pair = pair_with("[general]\n[sasl]\nuse-sasl = true\n", None);
    let out = pair.run_on(1, Path::new(""), "svn", &["ls", "{URL}"]);
    let err = stderr_of(&out);
    assert!(
        !out.success() && err.contains("SASL is not supported") && err.contains("CRAM-MD5"),
        "{err}"
    );
}

/// With `--config-file`, the configuration is known at startup: SASL there stops the server
/// before it listens, with the same message.
#[test]
fn sasl_in_the_config_file_stops_the_server_at_startup() {
    let dir = tempdir();
    let root = dir.path().join("root");
    std::fs::create_dir(&root).expect("mkdir root");
    let conf = dir.path().join("svnserve.conf");
    std::fs::write(
        &conf,
        "[general]\nanon-access = read\n[sasl]\nuse-sasl = true\n",
    )
    .expect("write conf");
    let out = Run::new(bin())
        .args(["serve", "-d", "--foreground", "--listen-host", "127.0.0.1"])
        .args(["--listen-port", "0", "-r"])
        .arg(&root)
        .arg("--config-file")
        .arg(&conf)
        .timeout(Duration::from_secs(20))
        .output();
    let err = out.stderr_text();
    assert!(
        !out.success()
            && err.contains("SASL is not supported")
            && err.contains("CRAM-MD5")
            && err.contains("svnserve.conf")
            && !err.contains("listening"),
        "{out}"
    );
}

/// `svn+ssh://localhost/NAME` through a fake ssh that runs `server ARGS -t` on `root`.
fn through_tunnel(server: &[String], root: &Path, args: &[&str], url_tail: &str) -> Outcome {
    let dir = tempdir();
    let ssh = dir.path().join("fake-ssh");
    let quoted: Vec<String> = server.iter().map(|a| format!("'{a}'")).collect();
    std::fs::write(
        &ssh,
        format!(
            "#!/bin/sh\nexec {} -r '{}'\n",
            quoted.join(" "),
            root.display()
        ),
    )
    .expect("write fake ssh");
    Run::new("chmod").arg("+x").arg(&ssh).success();
    let config = tempdir();
    Run::tool("svn")
        .arg("--config-dir")
        .arg(config.path())
        .args(["--non-interactive", "--no-auth-cache"])
        .args(args)
        .arg(format!("svn+ssh://localhost/{url_tail}"))
        .env("SVN_SSH", &ssh)
        .env("LC_ALL", "C.UTF-8")
        .env("TZ", "UTC")
        .timeout(Duration::from_secs(60))
        .output()
}

#[test]
fn tunnel_mode_external_uses_the_tunnel_user() {
    // Only EXTERNAL can give access: anonymous users get none.
    let pair = pair_with("[general]\nanon-access = none\nauth-access = write\n", None);
    let name = |repo: &Path| {
        repo.file_name()
            .and_then(|n| n.to_str())
            .expect("name")
            .to_string()
    };
    let svnserve: Vec<String> = ["svnserve", "-t", "--tunnel-user", "alice"]
        .map(String::from)
        .to_vec();
    let svelto: Vec<String> = vec![
        bin().display().to_string(),
        "serve".into(),
        "-t".into(),
        "--tunnel-user".into(),
        "alice".into(),
    ];
    let sides = [
        (svnserve, pair.reference_repo().to_path_buf()),
        (svelto, pair.subject_repo().to_path_buf()),
    ];
    let logs = sides.clone().map(|(server, repo)| {
        let root = repo.parent().expect("root").to_path_buf();
        through_tunnel(&server, &root, &["log", "-v"], &name(&repo))
    });
    for out in &logs {
        assert!(out.success(), "{}", stderr_of(out));
    }
    assert_eq!(logs[0].stdout_text(), logs[1].stdout_text());
    let mkdirs = sides.map(|(server, repo)| {
        let root = repo.parent().expect("root").to_path_buf();
        through_tunnel(
            &server,
            &root,
            &["mkdir", "-m", "x"],
            &format!("{}/newdir", name(&repo)),
        )
    });
    assert!(mkdirs[0].success(), "{}", stderr_of(&mkdirs[0]));
    assert!(mkdirs[1].success(), "{}", stderr_of(&mkdirs[1]));
    // Both committed as the tunnel user.
    let author = Run::tool("svnlook")
        .arg("author")
        .arg(pair.reference_repo())
        .success()
        .stdout_text();
    assert_eq!(author.trim(), "alice");
    let ours = Run::new(bin())
        .args(["look", "author"])
        .arg(pair.subject_repo())
        .success()
        .stdout_text();
    assert_eq!(ours.trim(), "alice");
}

#[test]
fn config_file_overrides_every_repository() {
    // The repositories' own files would let anyone read; --config-file says otherwise, and
    // its password-db is relative to its own directory.
    let pair = pair_with("[general]\nanon-access = read\n", None);
    let dir = tempdir();
    let conf = dir.path().join("server.conf");
    std::fs::write(
        &conf,
        "[general]\nanon-access = none\nauth-access = read\npassword-db = users\n",
    )
    .expect("write conf");
    std::fs::write(dir.path().join("users"), "[users]\nsally = sallyssecret\n").expect("users");
    let conf_arg = conf.display().to_string();
    let root = |repo: &Path| repo.parent().expect("root").to_path_buf();
    let svnserve = svelto_testkit::Svnserve::start_with(
        &root(pair.reference_repo()),
        &svelto_testkit::SvnserveConfig {
            args: vec!["--config-file".into(), conf_arg.clone()],
        },
    );
    let svelto = svelto_testkit::Svelto::start_with(
        &bin(),
        &root(pair.subject_repo()),
        &dir.path().join("svelto.log"),
        &["--config-file", &conf_arg],
    );
    let run = |url: String, creds: &[&str]| {
        let mut args: Vec<String> = vec!["ls".into()];
        args.extend(creds.iter().map(|s| s.to_string()));
        args.push(url);
        pair.client().svn(&args, dir.path())
    };
    let urls = [svnserve.url("basic"), svelto.url("basic")];
    let plain = urls.clone().map(|u| run(u, &[]));
    let sally = urls.map(|u| run(u, &["--username", "sally", "--password", "sallyssecret"]));
    for out in &plain {
        assert!(!out.success());
        assert!(
            stderr_of(out).contains("E170001: Can't get username or password"),
            "{}",
            stderr_of(out)
        );
    }
    for out in &sally {
        assert!(out.success(), "{}", stderr_of(out));
    }
    assert_eq!(sally[0].stdout_text(), sally[1].stdout_text());
    // svnserve refuses to start on a config file that does not exist; so does Svelto.
    let missing = dir.path().join("missing.conf");
    let out = Run::new(bin())
        .args(["serve", "-X", "--listen-port", "0", "--config-file"])
        .arg(&missing)
        .timeout(Duration::from_secs(20))
        .output();
    assert!(!out.success());
    assert!(
        stderr_of(&out).contains("missing.conf"),
        "{}",
        stderr_of(&out)
    );
}

/// The auth requests on the wire: mechanisms and realm at setup, the slot of a write
/// command without ANONYMOUS, a wrong then a right CRAM-MD5 answer; byte for byte what
/// svnserve sends (challenges aside).
#[test]
fn auth_requests_on_the_wire_match_svnserve() {
    use crate::raw::{Conn, Item};
    let pair = pair_with(
        "[general]\nanon-access = read\nauth-access = write\npassword-db = passwd\n\
         realm = My Realm\n",
        Some(PASSWD),
    );
    let word = |w: &str| Item::Word(w.into());
    let text = |s: &str| Item::String(s.as_bytes().to_vec());
    let list = |v: Vec<Item>| Item::List(v);
    let request = |mechs: &[&str]| {
        list(vec![
            word("success"),
            list(vec![
                list(mechs.iter().map(|m| word(m)).collect()),
                text("My Realm"),
            ]),
        ])
    };
    let failure = |msg: &str| list(vec![word("failure"), list(vec![text(msg)])]);
    for server in [pair.reference(), pair.subject()] {
        let url = server.url("basic");
        let (mut conn, _) = Conn::open(server.addr());
        conn.send_client_response(&url);
        assert_eq!(conn.item(), request(&["ANONYMOUS", "CRAM-MD5"]), "{url}");
        conn.send(b"( ANONYMOUS ( 0: ) ) ");
        assert!(conn.item().is_success());
        assert!(conn.item().is_success(), "repos-info");
        // A write command: the slot asks for a user name.
        conn.send(b"( change-rev-prop ( 1 7:svn:log 1:x ) ) ");
        assert_eq!(conn.item(), request(&["CRAM-MD5"]), "{url}");
        let mut answer = |password: &str| {
            conn.send(b"( CRAM-MD5 ( ) ) ");
            let step = conn.item();
            let challenge = match &step {
                Item::List(i) if i.first() == Some(&word("step")) => match i.get(1) {
                    Some(Item::List(c)) => match c.first() {
                        Some(Item::String(c)) => c.clone(),
                        _ => panic!("{step:?}"),
                    },
                    _ => panic!("{step:?}"),
                },
                _ => panic!("step expected: {step:?}"),
            };
            let digest = svelto_server::cram_md5_digest(&challenge, password.as_bytes());
            let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
            let reply = format!("harry {hex}");
            conn.send(format!("{}:{reply} ", reply.len()).as_bytes());
            conn.item()
        };
        assert_eq!(answer("wrong"), failure("Password incorrect"), "{url}");
        assert_eq!(
            answer("harryssecret"),
            list(vec![word("success"), list(vec![])]),
            "{url}"
        );
        // Then the command's own response (svnserve: no pre-revprop-change hook; Svelto:
        // not supported yet): a failure, but not an authorization one.
        let response = conn.item();
        assert!(response.is_failure(), "{response:?}");
        assert!(!response.error_codes().contains(&170001), "{response:?}");
    }
}
