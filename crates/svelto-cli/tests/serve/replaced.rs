//! A repository deleted and created again, or replaced with `mv`, under a running server is
//! served as the new one (reads, commits, and the commit read back), as svnserve serves it.

use std::path::Path;

use svelto_testkit::{tempdir, Run, Svelto, SvnClient};

fn create(repo: &Path) {
    Run::new(env!("CARGO_BIN_EXE_svelto"))
        .args(["admin", "create"])
        .arg(repo)
        .success();
    std::fs::write(
        repo.join("conf/svnserve.conf"),
        "[general]\nanon-access = write\n",
    )
    .expect("write svnserve.conf");
}

#[test]
fn a_replaced_repository_is_served_as_the_new_one() {
    let work = tempdir();
    let root = work.path().join("root");
    std::fs::create_dir(&root).expect("mkdir root");
    let repo = root.join("r");
    create(&repo);
    let server = Svelto::start_with(
        Path::new(env!("CARGO_BIN_EXE_svelto")),
        &root,
        &work.path().join("serve.log"),
        &[],
    );
    let url = server.url("r");
    let client = SvnClient::new();
    let svn = |args: &[&str]| {
        let out = client.svn(args, work.path());
        assert!(out.success(), "svn {}:\n{out}", args.join(" "));
        out.stdout_text()
    };
    svn(&[
        "mkdir",
        "-m",
        "old",
        &format!("{url}/old-a"),
        &format!("{url}/old-b"),
    ]);
    assert_eq!(svn(&["ls", &url]), "old-a/\nold-b/\n");

    // Deleted and created again at the same path: an empty repository at revision 0.
    std::fs::remove_dir_all(&repo).expect("rm -rf");
    create(&repo);
    assert_eq!(svn(&["ls", &url]), "");
    svn(&["checkout", &url, "wc"]);
    assert!(!work.path().join("wc/old-a").exists());
    // A commit lands in the new repository and reads back from it.
    svn(&["mkdir", "-m", "new", &format!("{url}/new")]);
    assert_eq!(svn(&["ls", &url]), "new/\n");
    assert!(svn(&["log", "-q", &url]).contains("r1 |"));
    let youngest = Run::new(env!("CARGO_BIN_EXE_svelto"))
        .args(["look", "youngest"])
        .arg(&repo)
        .success()
        .stdout_text();
    assert_eq!(youngest.trim(), "1");

    // Another repository moved into its place.
    let other = root.join("other");
    create(&other);
    let other_url = server.url("other");
    svn(&[
        "mkdir",
        "-m",
        "x",
        &format!("{other_url}/x"),
        &format!("{other_url}/y"),
    ]);
    std::fs::rename(&repo, root.join("r.old")).expect("mv r r.old");
    std::fs::rename(&other, &repo).expect("mv other r");
    assert_eq!(svn(&["ls", &url]), "x/\ny/\n");
    // (A working copy of the replaced one is refused by the client: another UUID.)
    let out = client.svn(&["update", "wc"], work.path());
    assert!(out.stderr_text().contains("E170009"), "{out}");
    svn(&["checkout", &url, "wc2"]);
    assert!(work.path().join("wc2/x").is_dir());
    assert!(!work.path().join("wc2/new").exists());
    // And the moved-away repository is served from its new path.
    assert_eq!(svn(&["ls", &server.url("r.old")]), "new/\n");
}
