//! Hot copies of `db/` while a writer commits: every copy opens at a whole revision,
//! holds every revision published before it began, and reads back every file.

use crate::common::new_repo;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use svelto_core::NodeKind;
use svelto_store::{hotcopy_db, HotcopyError, Repo, Txn};

/// The text the committer writes to `f{rev}` in revision `rev`.
fn text_of(rev: u64) -> Vec<u8> {
    format!("revision {rev}\n")
        .repeat(1 + (rev as usize * 37) % 500)
        .into_bytes()
}

#[test]
fn copies_made_during_commits_are_whole_revisions() {
    let dir = tempfile::tempdir().expect("tempdir");
    let src = dir.path().join("src");
    let mut w = new_repo(&src);
    let mut t = Txn::begin(&mut w).expect("begin");
    t.make_node("d", NodeKind::Dir).expect("mkdir");
    t.commit().expect("commit");
    w.sync().expect("sync");
    // Revision 1 made d; from now on revision r adds d/f{r}.
    let published = Arc::new(AtomicU64::new(1));
    let stop = Arc::new(AtomicBool::new(false));
    let committer = {
        let (published, stop) = (published.clone(), stop.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let rev = w.youngest() + 1;
                let mut t = Txn::begin(&mut w).expect("begin");
                let p = format!("d/f{rev}");
                t.make_node(&p, NodeKind::File).expect("add");
                t.set_text(&p, &mut &text_of(rev)[..]).expect("text");
                assert_eq!(t.commit().expect("commit"), rev);
                w.sync().expect("sync");
                published.store(rev, Ordering::SeqCst);
                if rev >= 2000 {
                    break;
                }
            }
        })
    };
    let mut last = 0;
    let mut copies = 0;
    while copies < 15 || last < 20 {
        let before = published.load(Ordering::SeqCst);
        let dst = dir.path().join(format!("copy{copies}"));
        let copy = hotcopy_db(&src, &dst, false).expect("hotcopy");
        assert!(
            copy.youngest >= before,
            "copy {copies} lacks revision {before}"
        );
        let youngest = check_copy_from(&dst, 2);
        assert_eq!(youngest, copy.youngest);
        // The same destination, incrementally: only what was added since.
        let again = hotcopy_db(&src, &dst, true).expect("incremental hotcopy");
        assert!(again.youngest >= copy.youngest);
        assert_eq!(
            again.revisions.map(|r| r.0),
            (again.youngest > copy.youngest).then_some(copy.youngest + 1)
        );
        check_copy_from(&dst, 2);
        last = copy.youngest;
        copies += 1;
        if copies > 200 {
            break;
        }
    }
    stop.store(true, Ordering::Relaxed);
    committer.join().expect("committer");
    assert!(last >= 20, "the committer made only {last} revisions");
}

fn check_copy_from(path: &std::path::Path, first: u64) -> u64 {
    let repo = Repo::open(path).expect("open the copy");
    let youngest = repo.youngest();
    for rev in first..=youngest {
        let (_, node) = repo
            .node_at(rev, &format!("d/f{rev}"))
            .expect("file of rev");
        let text = repo.read_text(&node.file_text()).expect("read text");
        assert_eq!(*text, text_of(rev), "text of f{rev} in the copy");
    }
    youngest
}

#[test]
fn incremental_copies_refuse_another_history() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let mut wa = new_repo(&a);
    let mut wb = new_repo(&b);
    for (w, name) in [(&mut wa, "x"), (&mut wb, "y")] {
        let mut t = Txn::begin(w).expect("begin");
        t.make_node(name, NodeKind::Dir).expect("mkdir");
        t.commit().expect("commit");
        w.sync().expect("sync");
    }
    // The destination's writer would hold its write lock, which a copy waits for.
    drop(wb);
    // Same UUID (new_repo's), different revision 1.
    let err = hotcopy_db(&a, &b, true).expect_err("diverged histories");
    assert!(matches!(err, HotcopyError::Diverged { .. }), "{err}");
    let copy = dir.path().join("copy");
    hotcopy_db(&a, &copy, false).expect("hotcopy");
    let mut t = Txn::begin(&mut wa).expect("begin");
    t.make_node("z", NodeKind::Dir).expect("mkdir");
    t.commit().expect("commit");
    wa.sync().expect("sync");
    drop(wa);
    // The copy is behind the source: swapped arguments are refused.
    let err = hotcopy_db(&copy, &a, true).expect_err("swapped");
    assert!(
        matches!(err, HotcopyError::DestinationAhead { src: 1, dst: 2 }),
        "{err}"
    );
    let again = hotcopy_db(&a, &copy, true).expect("incremental");
    assert_eq!(again.revisions, Some((2, 2)));
    let none = hotcopy_db(&a, &copy, true).expect("incremental, nothing new");
    assert_eq!(none.revisions, None);
    assert_eq!(Repo::open(&copy).expect("open").youngest(), 2);
}
