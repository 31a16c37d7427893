//! What opening a directory that is not (or cannot be read as) a repository reports.

use svelto_store::{Repo, StoreError};

/// A directory without `db/format` is "not a Svelto repository"; one whose `db/format`
/// cannot be read for another reason (here it is a directory; out of file descriptors
/// alike) reports that reason and the file, not that the repository is missing.
#[test]
fn only_a_missing_format_file_means_not_a_repository() {
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = dir.path().join("missing");
    std::fs::create_dir_all(missing.join("db")).expect("mkdir");
    assert!(matches!(
        Repo::open(&missing),
        Err(StoreError::NotARepository(_))
    ));
    let odd = dir.path().join("odd");
    std::fs::create_dir_all(odd.join("db/format")).expect("mkdir");
    match Repo::open(&odd) {
        Err(e @ StoreError::Io { .. }) => {
            let text = e.to_string();
            assert!(text.contains("db/format"), "{text}");
        }
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("opened a directory whose db/format is a directory"),
    }
}
