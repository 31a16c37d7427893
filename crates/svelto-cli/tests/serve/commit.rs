//! Commits: the same client sessions against svnserve over FSFS and against Svelto, every
//! command's output compared (dates masked), and the repositories' dumps compared at the
//! end (dates and UUID masked).

use svelto_testkit::{scenario_dump, Pair};

/// A pair of fresh repositories (loaded from `fixture`) that anonymous clients may write.
pub fn writable_pair(fixture: &str) -> Pair {
    let pair = Pair::from_dump(fixture, &scenario_dump(fixture), crate::common::subject());
    pair.set_svnserve_conf("[general]\nanon-access = write\n");
    pair
}

pub use crate::sessions::{mask_dates, mask_txn_names, Script};

#[test]
fn dates_are_masked() {
    assert_eq!(
        mask_dates(b"r3 | (no author) | 2026-11-22 10:59:48 +0000 (Sun, 22 Nov 2026) | 1 line"),
        b"r3 | (no author) | {DATE} | 1 line".to_vec()
    );
    assert_eq!(
        mask_dates(b"V 27\n2026-11-22T10:59:48.123456Z\n"),
        b"V 27\n{DATE}\n".to_vec()
    );
    assert_eq!(mask_dates(b"2026-11-22"), b"2026-11-22".to_vec());
}

#[test]
fn two_working_copies_edit_commit_conflict_and_update() {
    crate::sessions::two_working_copies_edit_commit_conflict_and_update(&writable_pair("basic"));
}

#[test]
fn branch_merge_tag_and_url_operations() {
    crate::sessions::branch_merge_tag_and_url_operations(&writable_pair("basic"));
}

#[test]
fn revision_properties_of_commits() {
    crate::sessions::revision_properties_of_commits(&writable_pair("basic"));
}

#[test]
fn changes_inside_a_copy_in_the_same_commit() {
    crate::sessions::changes_inside_a_copy_in_the_same_commit(&writable_pair("copies"));
}

#[test]
fn large_files_are_committed_and_changed() {
    crate::sessions::large_files_are_committed_and_changed(&writable_pair("basic"));
}

#[test]
fn bad_destinations_are_refused_as_svnserve_refuses_them() {
    crate::sessions::bad_destinations_are_refused_as_svnserve_refuses_them(&writable_pair("basic"));
}
