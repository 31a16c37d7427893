//! Commits over HTTP compared with Apache: the client sessions of the svn:// commit suite
//! (`serve/sessions.rs`) replayed against Apache + mod_dav_svn over FSFS and against
//! Svelto over HTTP (`svelto serve`, or in the `memory` suite the front end over the
//! in-memory backend: `crate::subject()`), every output compared, and the repositories'
//! dumps at the end.

use crate::sessions;
use svelto_testkit::{scenario_dump, Pair};

/// A fresh HTTP pair (Apache, Svelto) loaded from `fixture`, which anonymous clients may
/// write (Apache's test configuration has no authentication; Svelto's svnserve.conf says
/// `anon-access = write`).
pub fn writable_http_pair(fixture: &str) -> Pair {
    let pair = Pair::http_subject(fixture, &scenario_dump(fixture), crate::subject(), "", &[]);
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

/// Two empty repositories over HTTP that anonymous clients may write, with a
/// pre-revprop-change hook that allows every change.
fn empty_writable_http_pair(name: &str) -> Pair {
    let dir = svelto_testkit::tempdir();
    let dump = dir.path().join("empty.dump");
    std::fs::write(&dump, "SVN-fs-dump-format-version: 2\n\n").expect("write the empty dump");
    let pair = Pair::http_subject(name, &dump, crate::subject(), "", &[]);
    pair.set_svnserve_conf("[general]\nanon-access = write\n");
    sessions::allow_revprop_changes(&pair);
    pair
}

#[test]
fn svnsync_from_fsfs_into_the_server_over_http() {
    for name in ["copies", "mixed", "props"] {
        sessions::svnsync_into(&empty_writable_http_pair(name), name);
    }
}

#[test]
fn svnrdump_load_into_the_server_over_http() {
    for name in ["copies", "eol-keywords"] {
        sessions::svnrdump_load_into(&empty_writable_http_pair(name), name);
    }
}
