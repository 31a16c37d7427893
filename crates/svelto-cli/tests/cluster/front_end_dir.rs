//! `svelto admin SUBCOMMAND ROOT/NAME` on a front end's directory of a repository (the
//! `REPOS` its hooks see, with its `cluster-front-ends` file): the cluster-capable
//! subcommands act on the cluster repository as `--cluster FILE NAME` does, the
//! revision property changes with that directory's hooks; the others refuse, naming the
//! cluster repository and the `--cluster` form.

use std::ffi::OsStr;
use std::time::Duration;

use svelto_testkit::Run;

use crate::{admin, hook, put, svelto_bin, svn, Rig};

#[test]
fn admin_on_a_front_end_directory_acts_on_the_cluster_repository() {
    let (rig, servers) = Rig::start(2, "");
    let dir = rig.dir.path().to_path_buf();
    rig.let_alice_in();
    let (a, b) = (servers[0].url("proj"), servers[1].url("proj"));
    for i in 1..=3 {
        put(&dir, &a, "f.txt", &format!("text {i}\n"));
    }
    let fe_dir = rig.roots[0].join("proj");
    assert!(
        fe_dir.join("cluster-front-ends").is_file(),
        "A recorded itself in {}",
        fe_dir.display()
    );
    let arg = |p: &std::path::Path| p.as_os_str().to_owned();

    // dump: byte for byte what `--cluster FILE NAME` gives (with and without --deltas).
    for deltas in [false, true] {
        let flags: &[&str] = if deltas { &["-q", "--deltas"] } else { &["-q"] };
        let mut through_dir: Vec<&OsStr> = vec![OsStr::new("dump")];
        through_dir.extend(flags.iter().map(OsStr::new));
        let fe = arg(&fe_dir);
        through_dir.push(&fe);
        let by_dir = admin(&through_dir);
        assert!(by_dir.success(), "{by_dir}");
        let file = arg(&rig.files[1]);
        let mut with_cluster: Vec<&OsStr> = vec![OsStr::new("dump")];
        with_cluster.extend(flags.iter().map(OsStr::new));
        with_cluster.extend([OsStr::new("--cluster"), &file, OsStr::new("proj")]);
        let by_file = admin(&with_cluster);
        assert!(by_file.success(), "{by_file}");
        assert!(by_dir.stdout.len() > 100, "a dump: {by_dir}");
        assert!(
            by_dir.stdout == by_file.stdout,
            "the dump through {} differs from --cluster's (deltas: {deltas})",
            fe_dir.display()
        );
    }

    // info, verify, lslocks.
    let info = admin(&[OsStr::new("info"), fe_dir.as_os_str()]);
    assert!(info.success(), "{info}");
    let uuid = svn(&["info", "--show-item", "repos-uuid", &b]);
    let text = info.stdout_text();
    assert!(text.contains(&format!("UUID: {}", uuid.trim())), "{text}");
    assert!(text.contains("Revisions: 3\n"), "{text}");
    assert!(text.contains("Path: proj\n"), "{text}");
    let verified = admin(&[OsStr::new("verify"), fe_dir.as_os_str()]);
    assert!(verified.success(), "{verified}");
    assert!(
        format!("{}{}", verified.stdout_text(), verified.stderr_text())
            .contains("* Verified revision 3."),
        "{verified}"
    );
    let locked = svn(&[
        "lock",
        "-m",
        "mine",
        "--username",
        "alice",
        "--password",
        "apw",
        &format!("{b}/f.txt"),
    ]);
    assert!(locked.contains("locked by user 'alice'"), "{locked}");
    let locks = admin(&[OsStr::new("lslocks"), fe_dir.as_os_str()]);
    assert!(locks.success(), "{locks}");
    assert!(
        locks.stdout_text().contains("Path: /f.txt"),
        "the lock taken through B: {locks}"
    );

    // setlog through A's directory runs A's hooks there (REPOS is the directory), and B
    // serves the new message.
    let marker = dir.join("post-revprop-change.out");
    hook(
        &rig.roots[0],
        "proj",
        "pre-revprop-change",
        "#!/bin/sh\nexit 0\n",
    );
    hook(
        &rig.roots[0],
        "proj",
        "post-revprop-change",
        &format!(
            "#!/bin/sh\necho \"$1 $2 $4 $5\" >> {}\n",
            svelto_testkit::sshd::quoted(&marker)
        ),
    );
    let message = dir.join("message");
    std::fs::write(&message, "set through the front end's directory\n").expect("message");
    let setlog = admin(&[
        OsStr::new("setlog"),
        fe_dir.as_os_str(),
        OsStr::new("-r"),
        OsStr::new("2"),
        message.as_os_str(),
    ]);
    assert!(setlog.success(), "{setlog}");
    let log = svn(&["propget", "--revprop", "-r", "2", "svn:log", &b]);
    assert_eq!(log.trim(), "set through the front end's directory");
    let ran = std::fs::read_to_string(&marker).expect("the post-revprop-change hook ran");
    assert_eq!(ran, format!("{} 2 svn:log M\n", fe_dir.display()));
    // setrevprop and delrevprop likewise, with the hook options.
    let value = dir.join("value");
    std::fs::write(&value, "v1").expect("value");
    let set = admin(&[
        OsStr::new("setrevprop"),
        fe_dir.as_os_str(),
        OsStr::new("-r"),
        OsStr::new("1"),
        OsStr::new("test:admin"),
        value.as_os_str(),
        OsStr::new("--use-pre-revprop-change-hook"),
    ]);
    assert!(set.success(), "{set}");
    assert_eq!(
        svn(&["propget", "--revprop", "-r", "1", "test:admin", &b]).trim(),
        "v1"
    );
    let del = admin(&[
        OsStr::new("delrevprop"),
        fe_dir.as_os_str(),
        OsStr::new("-r"),
        OsStr::new("1"),
        OsStr::new("test:admin"),
    ]);
    assert!(del.success(), "{del}");
    let props = svn(&["proplist", "--revprop", "-r", "1", &b]);
    assert!(!props.contains("test:admin"), "{props}");

    // rmlocks and hotcopy to a local directory.
    let rm = admin(&[
        OsStr::new("rmlocks"),
        fe_dir.as_os_str(),
        OsStr::new("f.txt"),
    ]);
    assert!(rm.success(), "{rm}");
    let info_b = svn(&["info", &format!("{b}/f.txt")]);
    assert!(!info_b.contains("Lock Token"), "{info_b}");
    let copy = dir.join("copy");
    let hot = admin(&[OsStr::new("hotcopy"), fe_dir.as_os_str(), copy.as_os_str()]);
    assert!(hot.success(), "{hot}");
    let local = admin(&[OsStr::new("dump"), OsStr::new("-q"), copy.as_os_str()]);
    let cluster = admin(&[OsStr::new("dump"), OsStr::new("-q"), fe_dir.as_os_str()]);
    assert!(local.success() && cluster.success(), "{local}\n{cluster}");
    assert!(
        local.stdout == cluster.stdout,
        "the hot copy dumps as the cluster"
    );

    // A command of one machine refuses, naming the cluster repository and --cluster.
    for sub in ["pack", "recover", "lstxns", "setuuid"] {
        let refused = Run::new(svelto_bin())
            .args(["admin", sub])
            .arg(&fe_dir)
            .timeout(Duration::from_secs(60))
            .output();
        assert!(!refused.success(), "{sub}: {refused}");
        let said = refused.stderr_text();
        assert!(
            said.contains("cluster repository 'proj'")
                && said.contains(&format!("--cluster {} proj", rig.files[0].display()))
                && said.contains(&format!("'svelto admin {sub}' works on one machine")),
            "{sub}: {said}"
        );
    }
    // A pre-commit hook verifies its transaction through its REPOS (`verify -t`): staged
    // in the cache of the front end that received the commit.
    let verified_txn = dir.join("verify-t.out");
    hook(
        &rig.roots[0],
        "proj",
        "pre-commit",
        &format!(
            "#!/bin/sh\n{} admin verify -t \"$2\" \"$1\" > {} 2>&1 || exit 1\necho ok >> {}\n",
            svelto_testkit::sshd::quoted(&svelto_bin()),
            svelto_testkit::sshd::quoted(&verified_txn),
            svelto_testkit::sshd::quoted(&verified_txn)
        ),
    );
    let (rev, _) = put(&dir, &a, "g.txt", "verified in pre-commit\n");
    assert_eq!(
        std::fs::read_to_string(&verified_txn).expect("the hook ran"),
        "ok\n",
        "r{rev}"
    );
    std::fs::remove_file(rig.roots[0].join("proj").join("hooks").join("pre-commit"))
        .expect("the hook removed");
    // A load into the cluster asking for commit hooks (which would not run) refuses.
    let hooked = Run::new(svelto_bin())
        .args(["admin", "load", "--use-pre-commit-hook"])
        .arg(&fe_dir)
        .timeout(Duration::from_secs(60))
        .output();
    assert!(!hooked.success(), "{hooked}");
    assert!(
        hooked
            .stderr_text()
            .contains("a load into the cluster runs no commit hooks"),
        "{hooked}"
    );
    // So does one through --cluster: a cluster repository has no hooks directory.
    let hooked = Run::new(svelto_bin())
        .args(["admin", "load", "--use-post-commit-hook", "--cluster"])
        .arg(&rig.files[0])
        .arg("proj")
        .timeout(Duration::from_secs(60))
        .output();
    assert!(!hooked.success(), "{hooked}");
    assert!(
        hooked.stderr_text().contains("runs no commit hooks"),
        "{hooked}"
    );
    // A local repository is as before.
    let plain = admin(&[OsStr::new("pack"), copy.as_os_str()]);
    assert!(plain.success(), "{plain}");
    drop(servers);
}
