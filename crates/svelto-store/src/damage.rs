//! Records damaged so that their CRCs still hold (what a bug, or an attacker with write
//! access, could leave): every walk over on-disk pointers ends in a `Corrupt` error naming
//! the record, never in a panic, a stack overflow or a loop.

use crate::files::Which;
use crate::node::{encode_dir, DirEntry, FileText, NodeRev, Offset, RevMeta};
use crate::rep::RepTrailer;
use crate::{create_db, Repo, StoreError, Writer, TAG_DIR, TAG_REP};
use svelto_core::{ListingId, Md5, NodeKind, NodeRevId, PropList, Sha1, TextId};

fn writer(dir: &std::path::Path) -> Writer {
    create_db(
        dir,
        "00000000-0000-4000-8000-000000000000",
        &PropList::new(),
    )
    .expect("create");
    Writer::open(dir).expect("writer")
}

fn data_len(w: &mut Writer) -> Offset {
    w.view().expect("view").current().len(Which::Data)
}

fn trailer(base: Offset, chain: u64) -> Vec<u8> {
    let mut p = Vec::new();
    RepTrailer {
        version: 2,
        first_window: 0,
        windows: 0,
        base,
        chain,
        size: 0,
        md5: Md5([0; 16]),
        sha1: Sha1([0; 20]),
    }
    .encode(&mut p);
    p
}

fn dir_node(entries: Offset) -> NodeRev {
    NodeRev {
        created_rev: 1,
        entries: ListingId::from_raw(entries),
        ..NodeRev::empty_root()
    }
}

/// Publishes revision 1 with the root node `root` (already written).
fn publish(w: &mut Writer, root: Offset) -> Repo {
    let meta = RevMeta::new(PropList::new(), Vec::new());
    w.finish_revision(NodeRevId::from_raw(root), &meta)
        .expect("revision");
    w.sync().expect("sync");
    Repo::open(w.repo().path()).expect("open")
}

fn assert_corrupt<T: std::fmt::Debug>(r: crate::Result<T>, at: Offset, words: &str) {
    match r {
        Err(StoreError::Corrupt { file, offset, what }) => {
            assert_eq!((file, offset), ("data", at), "{what}");
            assert!(what.0.contains(words), "{what}");
        }
        other => panic!("expected a corruption at db/data {at}, got {other:?}"),
    }
}

#[test]
fn an_absurd_delta_chain_is_refused_without_recursion() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut w = writer(dir.path());
    // 100,000 representations each built on the one before: the old recursive walk
    // overflowed the stack long before the end.
    let mut base = w.write_record(TAG_REP, &trailer(0, 0)).expect("rep");
    for i in 1..100_000 {
        base = w.write_record(TAG_REP, &trailer(base, i)).expect("rep");
    }
    let repo = w.view().expect("view").clone();
    assert_corrupt(
        repo.fulltext(TextId::from_raw(base)),
        base,
        "delta chain longer than 48",
    );
    // A chain as long as the writer makes them is fine.
    let mut base = w.write_record(TAG_REP, &trailer(0, 0)).expect("rep");
    for i in 1..=crate::rep::MAX_CHAIN {
        base = w.write_record(TAG_REP, &trailer(base, i)).expect("rep");
    }
    let repo = w.view().expect("view").clone();
    assert_eq!(
        repo.fulltext(TextId::from_raw(base))
            .expect("chain of 48")
            .len(),
        0
    );
}

#[test]
fn representations_that_point_forward_are_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut w = writer(dir.path());
    let at = data_len(&mut w);
    // Its base is itself; then windows said to lie after it.
    let rep = w.write_record(TAG_REP, &trailer(at, 1)).expect("rep");
    let repo = w.view().expect("view").clone();
    assert_corrupt(repo.fulltext(TextId::from_raw(rep)), rep, "not before it");
    let mut t = trailer(0, 0);
    t[1] = 0x7f; // first_window = 127 ...
    t[2] = 1; // ... with one window: before the header, outside any record.
    let rep = w.write_record(TAG_REP, &t).expect("rep");
    let mut far = Vec::new();
    RepTrailer {
        first_window: 1 << 40,
        windows: 1,
        ..RepTrailer::decode(&trailer(0, 0)).expect("decodes")
    }
    .encode(&mut far);
    let far_rep = w.write_record(TAG_REP, &far).expect("rep");
    let repo = w.view().expect("view").clone();
    for r in [rep, far_rep] {
        let text = FileText {
            rep: TextId::from_raw(r),
            size: 1,
            md5: Md5([0; 16]),
            sha1: Sha1([0; 20]),
        };
        assert_corrupt(repo.text_reader(&text).map(|_| ()), r, "not before it");
        assert_corrupt(repo.read_text(&text), r, "not before it");
        assert_corrupt(
            repo.stored_delta(&text, TextId::from_raw(16)),
            r,
            "not before it",
        );
        assert_corrupt(repo.stored_stream(&text), r, "not before it");
    }
}

/// A self-contained representation's windows are sent as stored (`Repo::stored_stream`):
/// a trailer that says they are more than its size allows (a window record longer than
/// the text, or more windows than bytes) is refused before anything is held for them.
#[test]
fn stored_windows_longer_than_their_text_are_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut w = writer(dir.path());
    let window = w
        .write_record(crate::TAG_WINDOW, &[7u8; 1000])
        .expect("window");
    let rep_of = |windows: u64, size: u64| {
        let mut p = Vec::new();
        RepTrailer {
            first_window: window,
            windows,
            size,
            ..RepTrailer::decode(&trailer(0, 0)).expect("decodes")
        }
        .encode(&mut p);
        p
    };
    let long = w.write_record(TAG_REP, &rep_of(1, 10)).expect("rep");
    let many = w.write_record(TAG_REP, &rep_of(1000, 10)).expect("rep");
    let repo = w.view().expect("view").clone();
    let text = |rep| FileText {
        rep: TextId::from_raw(rep),
        size: 10,
        md5: Md5([0; 16]),
        sha1: Sha1([0; 20]),
    };
    assert_corrupt(
        repo.stored_stream(&text(long)),
        window,
        "window records longer than their text",
    );
    assert_corrupt(
        repo.stored_stream(&text(many)),
        many,
        "1000 windows for 10 bytes",
    );
}

/// A root whose listing names the root itself: a directory cycle.
#[test]
fn a_directory_cycle_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut w = writer(dir.path());
    let listing_at = data_len(&mut w);
    // The root will follow its listing; find the offset that the listing's own size gives.
    let mut root_at = listing_at;
    let payload = loop {
        let mut p = Vec::new();
        let entry = DirEntry {
            name: "loop".into(),
            kind: NodeKind::Dir,
            node: NodeRevId::from_raw(root_at),
        };
        encode_dir(&[entry], &mut p);
        let next = listing_at + (p.len() + crate::enc::FRAME_OVERHEAD) as u64;
        if next == root_at {
            break p;
        }
        root_at = next;
    };
    assert_eq!(w.write_record(TAG_DIR, &payload).expect("dir"), listing_at);
    assert_eq!(
        w.write_node(&dir_node(listing_at)).expect("root").raw(),
        root_at
    );
    let repo = publish(&mut w, root_at);
    assert_corrupt(repo.lookup(1, "loop/loop/loop"), listing_at, "lies after");
    assert_corrupt(
        repo.dir_at(ListingId::from_raw(listing_at)),
        listing_at,
        "lies after",
    );
}

#[test]
fn a_node_that_names_itself_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut w = writer(dir.path());
    let r0_root = w.repo().root(0).expect("r0");
    let at = data_len(&mut w);
    // Its own offset as the listing (the varint's size does not depend on this value).
    let node_at = w.write_node(&dir_node(at)).expect("node");
    assert_eq!(node_at.raw(), at);
    let mut pred = dir_node(0);
    pred.predecessor = NodeRevId::from_raw(u64::MAX);
    let pred_at = w.write_node(&pred).expect("node");
    let mut root = dir_node(0);
    root.predecessor = r0_root;
    let root_at = w.write_node(&root).expect("root");
    let repo = publish(&mut w, root_at.raw());
    assert_corrupt(repo.node(node_at), node_at.raw(), "directory listing at");
    assert_corrupt(repo.node(pred_at), pred_at.raw(), "predecessor at");
    assert_eq!(repo.history(1, "").expect("history").len(), 2);
}
