//! What the differential suites against a cluster (`tests/cluster_suites`, the serve and
//! http suites' modules with `Pair::cluster` pairs) do not check: `svelto admin dump
//! --cluster` byte for byte against one machine's repository loaded from the same dump,
//! revision property changes through one front end read through the next, `svelto admin
//! lslocks --cluster` against `svnadmin lslocks`, and `svelto admin hotcopy --cluster`.
//! svnserve over FSFS is the reference; three `svelto serve --cluster` front ends behind a
//! round-robin balancer the subject (`Pair::cluster`).

use std::path::Path;

use svelto_testkit::{Pair, Run};

use crate::sessions;

fn bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_svelto"))
}

/// Each front end served at least `least` client connections: the clients were spread.
fn spread(pair: &Pair, least: usize) {
    let counts = pair.cluster_connections().expect("a cluster pair");
    eprintln!("client connections per front end: {counts:?}");
    assert_eq!(counts.len(), 3);
    assert!(counts.iter().all(|&n| n >= least), "{counts:?}");
}

/// `svelto admin hotcopy --cluster` makes a local repository that verifies and dumps (and
/// lists its locks) as the cluster does; an existing destination is refused.
fn hotcopy_is_the_cluster(pair: &Pair) -> std::path::PathBuf {
    let copy = pair.dir().join("hotcopy");
    let out = pair.subject_admin(bin(), &["hotcopy"]).arg(&copy).success();
    assert!(out.stdout_text().contains("* Copied revision 1."), "{out}");
    Run::new(bin())
        .args(["admin", "verify", "-q"])
        .arg(&copy)
        .success();
    for args in [
        &["dump", "-q"][..],
        &["dump", "-q", "--deltas"][..],
        &["lslocks"][..],
    ] {
        let cluster = pair.subject_admin(bin(), args).success().stdout;
        let local = Run::new(bin())
            .arg("admin")
            .args(args)
            .arg(&copy)
            .success()
            .stdout;
        assert!(cluster == local, "svelto admin {args:?} of the hotcopy");
    }
    let again = pair.subject_admin(bin(), &["hotcopy"]).arg(&copy).failure();
    assert!(again.stderr_text().contains("File exists"), "{again}");
    copy
}

fn youngest(repo: &Path) -> u64 {
    let out = Run::tool("svnlook").arg("youngest").arg(repo).success();
    out.stdout_text().trim().parse().expect("svnlook youngest")
}

#[test]
fn dumps_revision_property_changes_locks_and_hotcopies_match_one_machine() {
    let pair = Pair::cluster("copies", bin());
    let head = youngest(pair.reference_repo());
    assert!(head >= 10, "the fixture has history: r{head}");
    // `svelto admin dump --cluster` (whole, revision 0 included) is byte for byte the dump
    // of a repository on one machine loaded from the same dumpfile, given the cluster
    // repository's UUID; with --deltas too. And the cluster verifies.
    let uuid = Run::tool("svn")
        .args(["info", "--show-item", "repos-uuid", "--non-interactive"])
        .arg(pair.subject_url())
        .success()
        .stdout_text()
        .trim()
        .to_owned();
    let local = pair.dir().join("one-machine");
    Run::new(bin())
        .args(["admin", "create"])
        .arg(&local)
        .success();
    Run::new(bin())
        .args(["admin", "load", "-q", "-F"])
        .arg(svelto_testkit::scenario_dump("copies"))
        .arg(&local)
        .success();
    Run::new(bin())
        .args(["admin", "setuuid"])
        .arg(&local)
        .arg(&uuid)
        .success();
    for extra in [&[][..], &["--deltas"][..]] {
        let mut args = vec!["dump", "-q"];
        args.extend_from_slice(extra);
        let cluster = pair.subject_admin(bin(), &args).success().stdout;
        let one = Run::new(bin())
            .arg("admin")
            .args(&args)
            .arg(&local)
            .success()
            .stdout;
        assert!(cluster.len() > 1000, "the dump has the history");
        svelto_testkit::dumpfile::assert_dumps_eq(
            &one,
            &cluster,
            &format!("cluster-dump{extra:?}"),
        );
    }
    let verified = pair.subject_admin(bin(), &["verify"]).success();
    assert!(
        verified
            .stdout_text()
            .contains(&format!("* Verified revision {head}.")),
        "{}",
        verified.stdout_text()
    );
    // Revision property changes (anonymous writes), then locks by alice and bob.
    pair.set_svnserve_conf("[general]\nanon-access = write\n");
    revision_property_changes(&pair);
    pair.set_svnserve_conf(
        "[general]\nanon-access = read\nauth-access = write\npassword-db = passwd\n",
    );
    for repo in [pair.reference_repo(), pair.subject_repo()] {
        std::fs::write(
            repo.join("conf/passwd"),
            "[users]\nalice = apw\nbob = bpw\n",
        )
        .expect("write passwd");
    }
    // `svelto admin lslocks --cluster` lists what `svnadmin lslocks` lists (tokens and
    // dates aside), the locks just taken.
    let mask = |text: String| -> Vec<String> {
        let masked = text
            .lines()
            .map(|l| {
                if l.starts_with("UUID Token: ") || l.starts_with("Created: ") {
                    l.split(':').next().unwrap_or_default().to_owned()
                } else {
                    l.to_owned()
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
        // svnadmin lists them in its hash order: compared as sorted blocks.
        let mut blocks: Vec<String> = masked
            .split("\n\n")
            .map(|b| b.trim_end().to_owned())
            .collect();
        blocks.sort();
        blocks
    };
    for (user, path) in [("alice", "trunk/main.c"), ("bob", "trunk/lib2/a.c")] {
        let url = format!("{{URL}}/{path}");
        let password = if user == "alice" { "apw" } else { "bpw" };
        pair.both(&[
            "lock",
            "--username",
            user,
            "--password",
            password,
            "-m",
            "held\nover two lines",
            &url,
        ])
        .expect_stdout("locked by user");
    }
    let reference = Run::tool("svnadmin")
        .arg("lslocks")
        .arg(pair.reference_repo())
        .success()
        .stdout_text();
    let cluster = pair
        .subject_admin(bin(), &["lslocks"])
        .success()
        .stdout_text();
    assert!(
        reference.contains("Owner: "),
        "the locks were taken: {reference}"
    );
    assert_eq!(mask(cluster), mask(reference), "lslocks");
    let copy = hotcopy_is_the_cluster(&pair);
    let listed = Run::new(bin())
        .args(["admin", "lslocks"])
        .arg(&copy)
        .success();
    assert!(listed.stdout_text().contains("Owner: bob"), "{listed}");
    spread(&pair, 2);
}

/// Revision property changes after the commit (the pre-revprop-change hook in the front
/// ends' shared `ROOT/NAME/hooks` allows them): set and deleted through one front end,
/// read through the next, and the histories equal.
fn revision_property_changes(pair: &Pair) {
    sessions::allow_revprop_changes(pair);
    pair.both(&[
        "propset",
        "--revprop",
        "-r",
        "1",
        "svn:log",
        "changed later",
        "{URL}",
    ])
    .expect_stdout("set on repository revision 1");
    pair.both(&["propdel", "--revprop", "-r", "2", "svn:log", "{URL}"]);
    pair.both(&["propset", "--revprop", "-r", "HEAD", "team", "red", "{URL}"]);
    pair.both(&["log", "-r", "1:2", "{URL}"])
        .expect_stdout("changed later");
    pair.both(&["propget", "--revprop", "-r", "HEAD", "team", "{URL}"])
        .expect_stdout("red");
    sessions::Script::new(pair).assert_same_repositories();
}
