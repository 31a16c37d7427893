//! Tools that write through the server: `svnsync` and `svnrdump load` INTO an empty
//! repository served by svnserve and by Svelto. Both copies must have the same history
//! (their dumps equal, but for revision 0's date and the UUID).

use svelto_testkit::Pair;

/// Two empty repositories that anonymous clients may write, with a pre-revprop-change hook
/// that allows every change (what svnsync and svnrdump need).
fn empty_writable_pair(name: &str) -> Pair {
    let dir = svelto_testkit::tempdir();
    let dump = dir.path().join("empty.dump");
    std::fs::write(&dump, "SVN-fs-dump-format-version: 2\n\n").expect("write the empty dump");
    let pair = Pair::from_dump(name, &dump, crate::common::subject());
    pair.set_svnserve_conf("[general]\nanon-access = write\n");
    crate::sessions::allow_revprop_changes(&pair);
    pair
}

#[test]
fn svnsync_into_the_server() {
    for name in ["copies", "mixed", "props"] {
        crate::sessions::svnsync_into(&empty_writable_pair(name), name);
    }
}

#[test]
fn svnrdump_load_into_the_server() {
    for name in ["copies", "mixed", "eol-keywords"] {
        crate::sessions::svnrdump_load_into(&empty_writable_pair(name), name);
    }
}
