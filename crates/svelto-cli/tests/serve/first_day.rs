//! An administrator's first day with the stock tools: one user list for both protocols
//! (`password-db` checked by HTTP Basic logins when no htpasswd file is given; one given
//! wins), the hook templates `svelto admin create` writes (they call `svelto look`), the
//! warnings `svelto serve` gives at start about configuration that does not say what it
//! seems to and files it cannot read, and `-r FILE` refused as svnserve refuses it.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use svelto_testkit::{tempdir, Run, Svelto, SvnClient};

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_svelto"))
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
}

/// A repository made by `svelto admin create` at ROOT/r, with these svnserve.conf and
/// passwd files.
fn repo_with(root: &Path, conf: &str, passwd: &str) -> PathBuf {
    let repo = root.join("r");
    Run::new(bin())
        .args(["admin", "create"])
        .arg(&repo)
        .success();
    write(&repo.join("conf/svnserve.conf"), conf);
    write(&repo.join("conf/passwd"), passwd);
    repo
}

/// The svn:// URL of repository `name` of a server started with `Svelto::start_http`.
fn svn_url(server: &Svelto, name: &str) -> String {
    let text = server.stderr_text();
    let addr = text
        .lines()
        .find_map(|l| l.strip_prefix("listening on "))
        .unwrap_or_else(|| panic!("no 'listening on' line: {text}"));
    format!("svn://{}/{name}", addr.trim())
}

const CONF: &str = "[general]\nanon-access = read\nauth-access = write\npassword-db = passwd\n";
const PASSWD: &str = "[users]\nharry = harryssecret\n";

#[test]
fn one_password_file_serves_both_protocols_and_an_htpasswd_file_wins() {
    let dir = tempdir();
    let root = dir.path().join("root");
    std::fs::create_dir(&root).expect("mkdir");
    // What `create` writes: the [http] options, commented out, one line each.
    Run::new(bin())
        .args(["admin", "create"])
        .arg(root.join("fresh"))
        .success();
    let fresh = std::fs::read_to_string(root.join("fresh/conf/svnserve.conf")).expect("conf");
    let http = &fresh[fresh.find("\n[http]\n").expect("an [http] section")..];
    assert!(http.contains("\n# password-db = "), "{http}");
    assert!(
        !http.lines().any(|l| l.starts_with("password-db")),
        "{http}"
    );

    repo_with(&root, CONF, PASSWD);
    let server = Svelto::start_http(&bin(), &root, &dir.path().join("serve.log"), "/svn", &[]);
    let client = SvnClient::new();
    let work = dir.path();
    let as_user = |user: &str, password: &str, args: &[&str]| {
        let mut all = vec![
            "--non-interactive",
            "--no-auth-cache",
            "--username",
            user,
            "--password",
            password,
        ];
        all.extend_from_slice(args);
        client.svn(&all, work)
    };
    let http_url = server.url("r");
    let svn_repo = svn_url(&server, "r");
    for (n, url) in [&http_url, &svn_repo].into_iter().enumerate() {
        let out = as_user(
            "harry",
            "harryssecret",
            &["mkdir", "-m", "m", &format!("{url}/d{n}")],
        );
        assert!(out.success(), "{url}: {}", out.stderr_text());
        let out = as_user(
            "harry",
            "wrong",
            &["mkdir", "-m", "m", &format!("{url}/x{n}")],
        );
        assert!(!out.success(), "{url}: a wrong password committed");
        let out = as_user(
            "sally",
            "harryssecret",
            &["mkdir", "-m", "m", &format!("{url}/y{n}")],
        );
        assert!(!out.success(), "{url}: an unknown user committed");
    }
    let log = client.svn(&["log", "-q", &svn_repo], work);
    assert_eq!(
        log.stdout_text().matches("| harry |").count(),
        2,
        "{}",
        log.stdout_text()
    );
    // Anonymous reads are untouched.
    let ls = client.svn(&["ls", "--non-interactive", &http_url], work);
    assert!(ls.success(), "{}", ls.stderr_text());
    assert_eq!(ls.stdout_text(), "d0/\nd1/\n");
    drop(server);

    // An htpasswd file given on the command line wins over password-db for HTTP logins.
    let htpasswd = dir.path().join("htpasswd");
    let made = Run::tool("htpasswd")
        .args(["-cbB"])
        .arg(&htpasswd)
        .args(["harry", "apachepass"])
        .output();
    assert!(made.success(), "{made}");
    let auth_file = htpasswd.to_str().expect("utf-8 path");
    let server = Svelto::start_http(
        &bin(),
        &root,
        &dir.path().join("serve2.log"),
        "/svn",
        &["--http-auth-file", auth_file],
    );
    let http_url = server.url("r");
    let out = as_user(
        "harry",
        "harryssecret",
        &["mkdir", "-m", "m", &format!("{http_url}/z")],
    );
    assert!(!out.success(), "password-db's password logged in over HTTP");
    let out = as_user(
        "harry",
        "apachepass",
        &["mkdir", "-m", "m", &format!("{http_url}/z")],
    );
    assert!(out.success(), "{}", out.stderr_text());
    let out = as_user(
        "harry",
        "apachepass",
        &["mkdir", "-m", "m", &format!("{}/w", svn_url(&server, "r"))],
    );
    assert!(
        !out.success(),
        "the htpasswd password logged in over svn://"
    );
}

/// The pre-commit template `svelto admin create` writes, enabled as its text says, refuses
/// a commit without a log message and lets one with a message through: it runs `svelto
/// look` (svnlook cannot read the repository). The others name `svelto look`, never
/// svnlook's path.
#[test]
fn hook_templates_call_svelto_look() {
    let dir = tempdir();
    let root = dir.path().join("root");
    std::fs::create_dir(&root).expect("mkdir");
    let repo = repo_with(&root, CONF, PASSWD);
    for entry in std::fs::read_dir(repo.join("hooks")).expect("hooks") {
        let p = entry.expect("entry").path();
        let text = std::fs::read_to_string(&p).expect("template");
        assert!(
            !text.contains("/usr/bin/svnlook"),
            "{}: {text}",
            p.display()
        );
        assert!(
            text.contains(&format!("SVELTO='{}'", bin().display())),
            "{}",
            p.display()
        );
    }
    let hook = repo.join("hooks/pre-commit");
    std::fs::copy(repo.join("hooks/pre-commit.tmpl"), &hook).expect("cp");
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let server = Svelto::start_with(&bin(), &root, &dir.path().join("serve.log"), &[]);
    let client = SvnClient::new();
    let commit = |msg: &str, name: &str| {
        client.svn(
            &[
                "mkdir",
                "--non-interactive",
                "--username",
                "harry",
                "--password",
                "harryssecret",
                "-m",
                msg,
                &format!("{}/{name}", server.url("r")),
            ],
            dir.path(),
        )
    };
    let refused = commit("  ", "a");
    assert!(!refused.success(), "an empty log message was committed");
    assert!(
        refused
            .stderr_text()
            .contains("Please describe the change in the log message."),
        "{}",
        refused.stderr_text()
    );
    let out = commit("adds b", "b");
    assert!(out.success(), "{}", out.stderr_text());
}

/// `svelto serve -r FILE` and `-r MISSING` are refused with svnserve's words, the path as
/// it was given (relative, with `.`, `..` or a doubled slash).
#[test]
fn a_root_that_is_not_a_directory_is_refused_as_svnserve_refuses_it() {
    let dir = tempdir();
    let file = dir.path().join("a-file");
    write(&file, "not a directory\n");
    let given = [
        file.display().to_string(),
        dir.path().join("missing").display().to_string(),
        "a-file/".to_string(),
        "./sub//missing".to_string(),
        format!(
            "../{}/missing",
            dir.path()
                .file_name()
                .expect("a temporary directory's name")
                .to_string_lossy()
        ),
    ];
    for root in given {
        let theirs = Run::tool("svnserve")
            .current_dir(dir.path())
            .args(["-d", "--foreground", "--listen-port", "0", "-r"])
            .arg(&root)
            .timeout(Duration::from_secs(20))
            .output();
        let ours = Run::new(bin())
            .current_dir(dir.path())
            .args(["serve", "-d", "--foreground", "--listen-port", "0", "-r"])
            .arg(&root)
            .timeout(Duration::from_secs(20))
            .output();
        assert_eq!(theirs.status.code(), Some(1), "{theirs}");
        assert_eq!(ours.status.code(), Some(1), "{ours}");
        let words = theirs
            .stderr_text()
            .trim()
            .strip_prefix("svnserve: ")
            .expect("svnserve's prefix")
            .to_string();
        assert!(words.starts_with("E200009: Root path '"), "{theirs}");
        assert_eq!(ours.stderr_text().trim(), format!("svelto: {words}"));
    }
}

/// docs/migrating.md's "From Apache" block as it was (comments after values, an indented
/// comment) and files the server's user cannot read: each is named at start on standard
/// error and in the log, with the user and the fix; the server still starts.
#[test]
fn the_server_warns_at_start_about_what_it_would_misread() {
    let dir = tempdir();
    let root = dir.path().join("root");
    std::fs::create_dir(&root).expect("mkdir");
    let conf = "[general]\n\
        anon-access = read          # \"Satisfy Any\": anonymous users get what the authz file gives *\n\
        \x20                           # (anon-access = none for \"Require valid-user\" alone)\n\
        auth-access = write\n\
        realm = Example Subversion  # AuthName: ra_serf caches passwords under the realm\n\
        password-db = passwd\n\
        authz-db = authz\n\
        [http]\n\
        password-db = htpasswd   # instead of --http-auth-file, per repository\n\
        [sals]\n";
    let repo = repo_with(&root, conf, PASSWD);
    write(&repo.join("conf/authz"), "[/]\n* = r\n");
    write(&repo.join("conf/htpasswd"), "");
    // The account the server runs as: `daemon` when the tests run as root (who reads
    // everything), else this one; either way it cannot read a 0600 file owned by root
    // (as root) or a 0000 file (as anyone else).
    let as_root = Run::new("id").arg("-u").success().stdout_text().trim() == "0";
    let (user, binary) = if as_root {
        let wrapper = dir.path().join("svelto-as-daemon");
        write(
            &wrapper,
            &format!(
                "#!/bin/sh\nexec setpriv --reuid=daemon --regid=daemon --clear-groups {} \"$@\"\n",
                bin().display()
            ),
        );
        std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        for d in [dir.path(), &root, &repo, &repo.join("conf")] {
            std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o777)).expect("chmod");
        }
        for f in ["svnserve.conf", "authz", "htpasswd"] {
            let p = repo.join("conf").join(f);
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        }
        let passwd = repo.join("conf/passwd");
        std::fs::set_permissions(&passwd, std::fs::Permissions::from_mode(0o600)).expect("chmod");
        Run::new("chmod")
            .args(["-R", "a+rX"])
            .arg(repo.join("db"))
            .success();
        ("daemon".to_string(), wrapper)
    } else {
        let passwd = repo.join("conf/passwd");
        std::fs::set_permissions(&passwd, std::fs::Permissions::from_mode(0o000)).expect("chmod");
        let me = Run::new("id")
            .arg("-un")
            .success()
            .stdout_text()
            .trim()
            .to_string();
        (me, bin())
    };
    let log = dir.path().join("serve.log");
    let server = Svelto::start_http(&binary, &root, &log, "/svn", &[]);
    let stderr = server.stderr_text();
    let logged = std::fs::read_to_string(&log).expect("log");
    let conf_file = repo.join("conf/svnserve.conf");
    let passwd = repo.join("conf/passwd");
    let expected = [
        format!(
            "{}:2: [general] anon-access = 'read          # \"Satisfy Any\"",
            conf_file.display()
        ),
        format!(
            "{}:5: [general] realm = 'Example Subversion  # AuthName",
            conf_file.display()
        ),
        format!(
            "{}:9: [http] password-db = 'htpasswd   # instead",
            conf_file.display()
        ),
        format!("{}:10: unknown section [sals]", conf_file.display()),
        format!(
            "the password file (password-db in {}) '{}' exists but user '{user}', whom the \
             server runs as, cannot read it (Permission denied",
            conf_file.display(),
            passwd.display()
        ),
        format!("chmod g+r '{}'", passwd.display()),
    ];
    for want in &expected {
        assert!(
            stderr.contains(want.as_str()),
            "stderr lacks {want:?}:\n{stderr}"
        );
        assert!(
            logged.contains(want.as_str()),
            "the log lacks {want:?}:\n{logged}"
        );
    }
    drop(server);

    // Fixed as the warnings say: nothing to say.
    let fixed = "[general]\n\
        ### \"Satisfy Any\": anonymous users get what the authz file gives\n\
        anon-access = read\nauth-access = write\nrealm = Example Subversion\n\
        password-db = passwd\nauthz-db = authz\n";
    write(&conf_file, fixed);
    std::fs::set_permissions(&passwd, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let server = Svelto::start_http(&binary, &root, &dir.path().join("serve2.log"), "/svn", &[]);
    let stderr = server.stderr_text();
    assert!(!stderr.contains("warning"), "{stderr}");
}
