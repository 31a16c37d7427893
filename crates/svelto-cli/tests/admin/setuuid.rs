//! `svelto admin setuuid` against `svnadmin setuuid`: the UUIDs accepted and refused,
//! the errors, and a fresh UUID without an argument.

use svelto_testkit::Run;

use crate::pair::{Pair, REPO};

fn fs_uuid(pair: &Pair) -> String {
    let out = Run::tool("svnlook")
        .arg("uuid")
        .arg(pair.fs.path())
        .success();
    out.stdout_text().trim().to_string()
}

#[test]
fn setuuid_sets_checks_and_reports_as_svnadmin() {
    let pair = Pair::new();
    for uuid in [
        "ABCDEF78-1234-1234-1234-123456789012",
        "12345678a1234b1234c1234d123456789012",
        "e63e4df0-24d0-4424-8fbb-001481502539",
    ] {
        let seen = pair.same(&["setuuid", REPO, uuid]);
        assert_eq!(seen.code, Some(0));
        assert_eq!(fs_uuid(&pair), uuid);
        assert_eq!(pair.sv.info().uuid, uuid);
    }
    for bad in [
        "bogus",
        "",
        "1234567812345678123456781234567X",
        "e63e4df0-24d0-4424-8fbb-0014815025399",
        "e63e4df0-24d0-4424-8fbb-00148150253-",
    ] {
        let seen = pair.same(&["setuuid", REPO, bad]);
        assert_eq!(
            seen.stderr,
            format!("svnadmin: E125008: Malformed UUID '{bad}'\n")
        );
    }
    // Still the last good one.
    assert_eq!(pair.sv.info().uuid, "e63e4df0-24d0-4424-8fbb-001481502539");
}

#[test]
fn setuuid_without_an_argument_makes_a_fresh_uuid() {
    let pair = Pair::new();
    let before = pair.sv.info().uuid;
    pair.same(&["setuuid", REPO]);
    let after = pair.sv.info().uuid;
    assert_ne!(after, before);
    svelto_repos_uuid_shape(&after);
    pair.sv.verify();
}

fn svelto_repos_uuid_shape(u: &str) {
    let parts: Vec<usize> = u.split('-').map(str::len).collect();
    assert_eq!(parts, [8, 4, 4, 4, 12], "{u}");
}

#[test]
fn setuuid_usage_errors_are_svnadmins() {
    let pair = Pair::new();
    for args in [
        &["setuuid"][..],
        &[
            "setuuid",
            REPO,
            "ABCDEF78-1234-1234-1234-123456789012",
            "extra",
        ],
        &["setuuid", REPO, "-q"],
        &["setuuid", "/nonexistent/repo"],
        &["setuuid", "svn://host/repo"],
        &["no-such-subcommand"],
    ] {
        let seen = pair.same(args);
        assert_eq!(seen.code, Some(1), "{args:?}");
    }
}

#[test]
fn a_served_repository_reports_the_new_uuid() {
    use svelto_testkit::serve::{Svelto, SvnClient};
    let pair = Pair::new();
    let uuid = "0badcafe-1234-1234-1234-123456789012";
    pair.same(&["setuuid", REPO, uuid]);
    let server = Svelto::start(env!("CARGO_BIN_EXE_svelto").as_ref(), pair.sv.dir()).into_server();
    let client = SvnClient::new();
    let out = client.svn(
        &["info", "--show-item", "repos-uuid", &server.url("repo")],
        pair.sv.dir(),
    );
    assert!(out.success(), "{out}");
    assert_eq!(out.stdout_text().trim(), uuid);
}
