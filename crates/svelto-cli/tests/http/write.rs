//! Commits over HTTP compared with Apache: the client sessions of the svn:// commit suite
//! (`serve/sessions.rs`) replayed against Apache + mod_dav_svn over FSFS and against
//! Svelto over HTTP, every output compared, and the repositories' dumps at the end.

use std::path::Path;

use crate::sessions;
use svelto_testkit::Pair;

/// A fresh HTTP pair (Apache, Svelto) loaded from `fixture`, which anonymous clients may
/// write (Apache's test configuration has no authentication; Svelto's svnserve.conf says
/// `anon-access = write`).
pub fn writable_http_pair(fixture: &str) -> Pair {
    let pair = Pair::http(fixture, Path::new(env!("CARGO_BIN_EXE_svelto")));
    pair.set_svnserve_conf("[general]\nanon-access = write\n");
    pair
}

#[test]
fn two_working_copies_edit_commit_conflict_and_update() {
    sessions::two_working_copies_edit_commit_conflict_and_update(&writable_http_pair("basic"));
}

#[test]
fn branch_merge_tag_and_url_operations() {
    sessions::branch_merge_tag_and_url_operations(&writable_http_pair("basic"));
}

#[test]
fn revision_properties_of_commits() {
    sessions::revision_properties_of_commits(&writable_http_pair("basic"));
}

#[test]
fn changes_inside_a_copy_in_the_same_commit() {
    sessions::changes_inside_a_copy_in_the_same_commit(&writable_http_pair("copies"));
}

#[test]
fn large_files_are_committed_and_changed() {
    sessions::large_files_are_committed_and_changed(&writable_http_pair("basic"));
}

#[test]
fn bad_destinations_are_refused() {
    sessions::bad_destinations_are_refused_as_svnserve_refuses_them(&writable_http_pair("basic"));
}
