//! Repositories are found under the root the same way over both protocols: the deepest
//! directory a URL's path names that is a repository, as svnserve finds it under `-r`.
//! `ROOT/projects/tools` is `svn://HOST/projects/tools` and `http://HOST/svn/projects/tools`
//! alike (Apache's `SVNParentPath` serves only the root's children; Svelto serves one
//! URL space for both protocols).

use std::path::Path;
use svelto_testkit::Run;

fn svn(args: &[&str]) -> String {
    let out = Run::new("svn")
        .args(["--non-interactive", "--no-auth-cache"])
        .args(args)
        .success();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_repository_below_a_plain_directory_is_served_over_http_as_over_svn() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("root");
    let bin = Path::new(env!("CARGO_BIN_EXE_svelto"));
    for repo in ["projects/tools", "top"] {
        std::fs::create_dir_all(root.join(repo).parent().expect("parent")).expect("mkdir");
        Run::new(bin)
            .args(["admin", "create"])
            .arg(root.join(repo))
            .success();
        std::fs::write(
            root.join(repo).join("conf/svnserve.conf"),
            "[general]\nanon-access = write\n",
        )
        .expect("svnserve.conf");
    }
    let http =
        svelto_testkit::Svelto::start_http(bin, &root, &dir.path().join("http.log"), "/svn", &[]);
    let base = format!("http://127.0.0.1:{}/svn", http.port());
    // A commit, a listing and a checkout into the nested repository over HTTP.
    svn(&[
        "mkdir",
        "-m",
        "over http",
        &format!("{base}/projects/tools/trunk"),
    ]);
    svn(&["mkdir", "-m", "over http", &format!("{base}/top/branches")]);
    assert_eq!(svn(&["ls", &format!("{base}/projects/tools")]), "trunk/\n");
    assert_eq!(svn(&["ls", &format!("{base}/top")]), "branches/\n");
    let wc = dir.path().join("wc");
    svn(&[
        "checkout",
        &format!("{base}/projects/tools/trunk"),
        wc.to_str().expect("utf-8"),
    ]);
    let info = svn(&[
        "info",
        "--show-item",
        "repos-root-url",
        wc.to_str().expect("utf-8"),
    ]);
    assert_eq!(info.trim(), format!("{base}/projects/tools"));
    // A plain directory is no repository, over HTTP as over svn://.
    let missing = Run::new("svn")
        .args(["ls", "--non-interactive", &format!("{base}/projects")])
        .failure();
    let text = String::from_utf8_lossy(&missing.stderr).into_owned();
    assert!(text.contains("E170013") || text.contains("404"), "{text}");
    // The request log names the nested repository by its path under the root, as svn://'s.
    let log = std::fs::read_to_string(dir.path().join("http.log")).expect("log");
    assert!(
        log.lines().any(|l| l.contains(" projects/tools commit r1")),
        "{log}"
    );
    drop(http);
    // The same revision over svn://, the same path under the root.
    let svn_server =
        svelto_testkit::Svelto::start_with(bin, &root, &dir.path().join("svn.log"), &[]);
    let url = svn_server.url("projects/tools");
    assert_eq!(svn(&["ls", &url]), "trunk/\n");
    let log = svn(&["log", "-q", &url]);
    assert!(log.contains("r1 |"), "{log}");
}
