//! The assumptions the acceptance tests rest on, checked against the real
//! `svnadmin`: the fixtures are what svnadmin writes for their own history,
//! every variant describes the same history, and the helpers that stand in for
//! svnadmin (dump prefixes, generated dumps) write what it writes.

use svelto_testkit::dumpfile::{
    assert_dumps_eq, assert_dumps_eq_first_revision_unordered, dump_prefix, head_revision,
    mkdir_dump, uuid_of,
};
use svelto_testkit::generate::write_big_file_dump;
use svelto_testkit::{
    fixture_names, scenario_dump, svnadmin_create, svnadmin_create_load, svnadmin_load_dump,
    tempdir, variants, VariantKind,
};

/// Variants through which svnadmin itself loses something: a property list
/// that was set again to the same value (by `svnmucc propset` of an equal
/// value, or by `svn copy` re-setting equal `svn:mergeinfo`) is a change in
/// FSFS and so a node record in a format-2 dump, but an empty property delta
/// in format 3, from which `svnadmin load` makes no change at all.
const LOSSY_VARIANTS: &[&str] = &[
    "mergeinfo.deltas.dump",
    "mergeinfo.incr-7.deltas.dump",
    "mergeinfo.svnrdump.dump",
    "props.deltas.dump",
    "props.incr-5.deltas.dump",
    "props.svnrdump.dump",
];

#[test]
fn every_fixture_is_what_svnadmin_dumps_after_loading_it() {
    for name in fixture_names() {
        let dump = scenario_dump(&name);
        let expected = std::fs::read(&dump).expect("readable fixture");
        let repo = svnadmin_create_load(&dump);
        assert_dumps_eq(
            &expected,
            &repo.dump(&[]),
            &format!("svnadmin round trip of {name}"),
        );
        assert_eq!(Some(repo.uuid()), uuid_of(&expected), "{name}: UUID");
        assert_eq!(
            repo.youngest(),
            head_revision(&expected),
            "{name}: youngest"
        );
    }
}

#[test]
fn every_variant_describes_the_same_history() {
    for name in fixture_names() {
        let expected = std::fs::read(scenario_dump(&name)).expect("readable fixture");
        for variant in variants(&name) {
            let repo = svnadmin_create();
            if let VariantKind::Incremental { lower, .. } = variant.kind {
                repo.load(&scenario_dump(&name), &["-r", &format!("0:{}", lower - 1)]);
            }
            repo.load(&variant.path, &[]);
            let actual = repo.dump(&[]);
            let what = format!("svnadmin load of {}", variant.file_name);
            if LOSSY_VARIANTS.contains(&variant.file_name.as_str()) {
                assert_ne!(
                    expected, actual,
                    "{what}: expected svnadmin to lose the no-op property changes; \
                     update LOSSY_VARIANTS"
                );
            } else {
                assert_dumps_eq(&expected, &actual, &what);
            }
        }
    }
}

#[test]
fn a_prefix_of_a_full_dump_is_a_dump_of_fewer_revisions() {
    for (name, last) in [
        ("mixed", 0),
        ("mixed", 4),
        ("replace", 9),
        ("many-revs", 1234),
    ] {
        let dump = scenario_dump(name);
        let full = std::fs::read(&dump).expect("readable fixture");
        let repo = svnadmin_create_load(&dump);
        assert_dumps_eq(
            dump_prefix(&full, last),
            &repo.dump(&["-r", &format!("0:{last}")]),
            &format!("{name} -r 0:{last}"),
        );
    }
}

#[test]
fn loading_the_rest_of_a_full_dump_with_a_range_completes_the_history() {
    // What the crash test relies on after a killed load left revision K.
    for (name, k) in [("mixed", 4), ("mergeinfo", 9), ("many-revs", 1000)] {
        let dump = scenario_dump(name);
        let full = std::fs::read(&dump).expect("readable fixture");
        let repo = svnadmin_create();
        repo.load(&dump, &["-r", &format!("0:{k}")]);
        // `svnadmin load -r` takes numbers only ("HEAD" is refused).
        let head = head_revision(&full);
        repo.load(&dump, &["-r", &format!("{}:{head}", k + 1)]);
        assert_dumps_eq(
            &full,
            &repo.dump(&[]),
            &format!("{name} loaded in two parts"),
        );
    }
}

#[test]
fn svnadmin_range_dumps_differ_from_the_fixture_only_in_first_revision_order() {
    let dump = scenario_dump("copies");
    let repo = svnadmin_create_load(&dump);
    let a = repo.dump(&["-r", "6:12"]);
    let b = repo.dump(&["-r", "6:12"]);
    assert_dumps_eq_first_revision_unordered(&a, &b, "two svnadmin dumps of -r 6:12");
}

#[test]
fn the_generated_big_file_dump_is_what_svnadmin_dumps() {
    let dir = tempdir();
    let path = dir.path().join("big.dump");
    let info = write_big_file_dump(&path, 1 << 20).expect("writes");
    assert!(info.dump_size > 1 << 20);
    let expected = std::fs::read(&path).expect("readable");
    assert_dumps_eq(
        &expected,
        &svnadmin_load_dump(&path, &[], &[]),
        "svnadmin round trip of the generated big-file dump",
    );
}

#[test]
fn mkdir_dumps_load_after_existing_revisions() {
    let dir = tempdir();
    let path = dir.path().join("mkdir.dump");
    std::fs::write(&path, mkdir_dump(&["proj", "proj/sub dir"])).expect("writes");
    let repo = svnadmin_create_load(&scenario_dump("basic"));
    let before = repo.youngest();
    repo.load(&path, &[]);
    assert_eq!(repo.youngest(), before + 1);
}
