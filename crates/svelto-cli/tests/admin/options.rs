//! `svelto admin load` and `dump` options, each compared with what svnadmin
//! does given the same command: `-q`, `-F`, `-r`, `--parent-dir`,
//! `--ignore-uuid`, `--force-uuid`, and loads into non-empty repositories
//! (revision and `svn:mergeinfo` renumbering).

use svelto_testkit::dumpfile::{assert_dumps_eq, head_revision, mkdir_dump, uuid_of};
use svelto_testkit::{scenario_dump, svnadmin_create_load, tempdir};

use crate::common::{
    assert_lines_in_order, compare_load_sequence, read, svelto, write_file, SveltoRepo,
};

#[test]
fn quiet_load_and_dump_print_no_progress() {
    let path = scenario_dump("basic");
    let repo = SveltoRepo::create();
    let load = svelto()
        .args(["admin", "load", "-q"])
        .arg(repo.path())
        .stdin_file(&path)
        .success();
    assert!(load.stdout.is_empty(), "load -q printed:\n{load}");
    let dump = svelto()
        .args(["admin", "dump", "-q"])
        .arg(repo.path())
        .success();
    assert!(dump.stderr.is_empty(), "dump -q printed on stderr:\n{dump}");
    assert_dumps_eq(&read(&path), &dump.stdout, "basic: dump -q");
}

#[test]
fn load_from_a_file_and_dump_to_a_file() {
    let path = scenario_dump("mixed");
    let repo = SveltoRepo::create();
    repo.load(&path, &[]);
    let out = repo.dir().join("out.dump");
    let dump = svelto()
        .args(["admin", "dump", "-q", "-F"])
        .arg(&out)
        .arg(repo.path())
        .success();
    assert!(
        dump.stdout.is_empty(),
        "dump -F also wrote to stdout:\n{dump}"
    );
    assert_dumps_eq(&read(&path), &read(&out), "mixed: dump -F");

    let out = repo.dir().join("incremental.dump");
    svelto()
        .args(["admin", "dump", "-q", "--incremental", "-r", "3:7", "-F"])
        .arg(&out)
        .arg(repo.path())
        .success();
    let fs = svnadmin_create_load(&path);
    assert_dumps_eq(
        &fs.dump(&["--incremental", "-r", "3:7"]),
        &read(&out),
        "mixed: dump --incremental -r 3:7 -F",
    );
}

#[test]
fn dump_refuses_impossible_ranges() {
    let repo = SveltoRepo::create();
    repo.load(&scenario_dump("basic"), &[]);
    let head = repo.info().youngest;
    for range in [
        "5:3".to_owned(),
        format!("3:{}", head + 1),
        format!("{}", head + 5),
    ] {
        let out = svelto()
            .args(["admin", "dump", "-q", "-r", &range])
            .arg(repo.path())
            .failure();
        assert!(
            !out.stderr.is_empty(),
            "dump -r {range} failed without a message"
        );
    }
}

#[test]
fn load_in_two_ranges() {
    for (name, k) in [
        ("mergeinfo", 9),
        ("copies", 5),
        ("mixed", 4),
        ("replace", 6),
    ] {
        let path = scenario_dump(name);
        let head = head_revision(&read(&path));
        let first = format!("0:{k}");
        let second = format!("{}:{head}", k + 1);
        compare_load_sequence(
            &format!("{name} loaded as -r {first} then -r {second}"),
            &[(&path, &["-r", &first]), (&path, &["-r", &second])],
        );
    }
}

#[test]
fn load_ranges_that_skip_revisions() {
    // Revisions left out shift the later ones down; copy sources and
    // svn:mergeinfo are renumbered (or refused) exactly as svnadmin does.
    let mixed = scenario_dump("mixed");
    compare_load_sequence(
        "mixed -r 0:3 then -r 5:12",
        &[(&mixed, &["-r", "0:3"]), (&mixed, &["-r", "5:12"])],
    );
    let mergeinfo = scenario_dump("mergeinfo");
    compare_load_sequence(
        "mergeinfo -r 0:6 then -r 8:17",
        &[(&mergeinfo, &["-r", "0:6"]), (&mergeinfo, &["-r", "8:17"])],
    );
    let basic = scenario_dump("basic");
    compare_load_sequence("basic -r 1:4 (no revision 0)", &[(&basic, &["-r", "1:4"])]);
    compare_load_sequence(
        "basic -r 2:4 (an add of a missing parent)",
        &[(&basic, &["-r", "2:4"])],
    );
}

#[test]
fn load_into_a_non_empty_repository_with_parent_dir() {
    let dir = tempdir();
    let proj = write_file(dir.path(), "proj.dump", &mkdir_dump(&["proj"]));
    let nested = write_file(
        dir.path(),
        "nested.dump",
        &mkdir_dump(&["a", "a/b c", "a/b c/ü"]),
    );
    let basic = scenario_dump("basic");
    let mergeinfo = scenario_dump("mergeinfo");
    let mixed = scenario_dump("mixed");
    let names = scenario_dump("names");
    compare_load_sequence(
        "basic, then mergeinfo under proj/",
        &[
            (&basic, &[]),
            (&proj, &[]),
            (&mergeinfo, &["--parent-dir", "proj"]),
        ],
    );
    compare_load_sequence(
        "mixed under a nested parent with spaces and non-ASCII",
        &[(&nested, &[]), (&mixed, &["--parent-dir", "a/b c/ü"])],
    );
    compare_load_sequence(
        "names under /proj (leading slash)",
        &[(&proj, &[]), (&names, &["--parent-dir", "/proj"])],
    );
    compare_load_sequence(
        "mergeinfo under proj/ in two ranges",
        &[
            (&proj, &[]),
            (&mergeinfo, &["--parent-dir", "proj", "-r", "0:9"]),
            (&mergeinfo, &["--parent-dir", "proj", "-r", "10:17"]),
        ],
    );
    compare_load_sequence(
        "a parent dir that does not exist",
        &[(&mergeinfo, &["--parent-dir", "missing"])],
    );
    compare_load_sequence(
        "the same history twice, side by side",
        &[
            (
                &write_file(dir.path(), "two.dump", &mkdir_dump(&["one", "two"])),
                &[],
            ),
            (&mixed, &["--parent-dir", "one"]),
            (&mixed, &["--parent-dir", "two"]),
        ],
    );
}

#[test]
fn progress_names_the_new_revision_when_it_differs() {
    let dir = tempdir();
    let proj = write_file(dir.path(), "proj.dump", &mkdir_dump(&["proj"]));
    let repo = SveltoRepo::create();
    repo.load(&scenario_dump("basic"), &[]);
    let base = repo.info().youngest;
    let out = svelto()
        .args(["admin", "load", "--parent-dir", "proj", "-F"])
        .arg(scenario_dump("readd"))
        .arg(repo.path())
        .output();
    assert!(
        !out.success(),
        "--parent-dir proj before proj exists must fail"
    );
    repo.load(&proj, &[]);
    let out = svelto()
        .args(["admin", "load", "--parent-dir", "proj", "-F"])
        .arg(scenario_dump("readd"))
        .arg(repo.path())
        .success();
    let mut lines = Vec::new();
    for orig in 1..=7u64 {
        lines.push(format!(
            "<<< Started new transaction, based on original revision {orig}"
        ));
        lines.push(format!(
            "------- Committed new rev {} (loaded from original rev {orig}) >>>",
            base + 1 + orig
        ));
    }
    assert_lines_in_order(&out.stdout_text(), &lines, "load progress with renumbering");
}

#[test]
fn uuid_options() {
    let dir = tempdir();
    let other = write_file(dir.path(), "other.dump", &mkdir_dump(&["other"]));
    let basic = scenario_dump("basic");
    let replace = scenario_dump("replace");
    compare_load_sequence(
        "--ignore-uuid into an empty repository",
        &[(&basic, &["--ignore-uuid"])],
    );
    compare_load_sequence(
        "a second dump into a non-empty repository keeps the UUID",
        &[
            (&basic, &[]),
            (&other, &[]),
            (&replace, &["--parent-dir", "other"]),
        ],
    );
    compare_load_sequence(
        "--force-uuid into a non-empty repository takes the dump's UUID",
        &[
            (&basic, &[]),
            (&other, &[]),
            (&replace, &["--parent-dir", "other", "--force-uuid"]),
        ],
    );
    compare_load_sequence(
        "a dump without a UUID into an empty repository",
        &[(&other, &[]), (&replace, &["--parent-dir", "other"])],
    );

    // And the UUID that info reports is the one the dump says.
    let repo = SveltoRepo::create();
    let before = repo.info().uuid;
    repo.load(&basic, &["--ignore-uuid"]);
    assert_eq!(repo.info().uuid, before, "--ignore-uuid changed the UUID");
    repo.load(&other, &[]);
    repo.load(&replace, &["--parent-dir", "other", "--force-uuid"]);
    assert_eq!(Some(repo.info().uuid), uuid_of(&read(&replace)));
}
