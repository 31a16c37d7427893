//! Transactions staged apart from the repository's files (`Writer::stage`,
//! `db/txns/NAME.txn/`): readable as a revision by hooks while other commits land, never
//! touching the repository's own files, and harmless when a crash leaves one behind.

use crate::common::new_repo;
use std::fs;
use std::path::Path;
use svelto_core::NodeKind;
use svelto_store::{Repo, Txn, Writer};

fn text(repo: &Repo, rev: u64, path: &str) -> Vec<u8> {
    let (_, n) = repo.node_at(rev, path).expect("node");
    repo.read_text(&n.file_text()).expect("text").to_vec()
}

fn sizes(dir: &Path) -> Vec<u64> {
    ["data", "revs", "meta", "dedup", "revprops"]
        .iter()
        .map(|f| fs::metadata(dir.join("db").join(f)).expect("size").len())
        .collect()
}

fn commit(w: &mut Writer, f: impl FnOnce(&mut svelto_store::Txn<'_>)) -> u64 {
    let mut t = Txn::begin(w).expect("begin");
    f(&mut t);
    let rev = t.commit().expect("commit");
    w.sync().expect("sync");
    rev
}

#[test]
fn a_staged_transaction_reads_as_a_revision_and_leaves_the_repository_alone() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path();
    let mut w = new_repo(path);
    commit(&mut w, |t| {
        t.make_node("a", NodeKind::File).expect("add");
        t.set_text("a", &mut &b"one\n"[..]).expect("text");
    });
    w.unlock().expect("unlock");
    let before = sizes(path);

    let mut staged = Writer::stage(path, "1-x").expect("stage");
    let rev = commit(&mut staged, |t| {
        t.set_text("a", &mut &b"one\ntwo\n"[..]).expect("text");
        t.make_node("b", NodeKind::File).expect("add");
        t.set_text("b", &mut &b"bee\n"[..]).expect("text");
    });
    assert_eq!(rev, 2);
    assert_eq!(
        sizes(path),
        before,
        "staging wrote to the repository's files"
    );
    assert_eq!(Repo::open(path).expect("open").youngest(), 1);

    // Another commit lands meanwhile, at the offsets the transaction continues from.
    assert!(w.relock().expect("relock"));
    commit(&mut w, |t| {
        t.set_text("a", &mut &b"landed\n"[..]).expect("text");
    });
    w.unlock().expect("unlock");

    let (view, youngest) = Repo::open_txn(path, "1-x").expect("open txn");
    assert_eq!(youngest, 2);
    assert_eq!(text(&view, 2, "a"), b"one\ntwo\n");
    assert_eq!(text(&view, 2, "b"), b"bee\n");
    let main = Repo::open(path).expect("open");
    assert_eq!(text(&main, 2, "a"), b"landed\n");
    assert!(main.lookup(2, "b").expect("lookup").is_none());
    assert_eq!(main.txns().expect("txns"), vec![("1-x".to_string(), 1)]);

    drop(staged);
    assert!(!path.join("db/txns/1-x.txn").exists(), "not removed");
    assert!(main.txns().expect("txns").is_empty());
    assert!(matches!(
        Repo::open_txn(path, "1-x"),
        Err(svelto_store::StoreError::NoSuchTxn(_))
    ));
}

/// A process that dies while a transaction is staged (or halfway through staging it)
/// leaves `db/txns/NAME.txn/`: the repository opens and verifies, writers go on, the
/// leftover is listed (for `rmtxns`), and a damaged one is refused when read, not followed.
#[test]
fn a_staged_transaction_left_by_a_crash_breaks_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path();
    let mut w = new_repo(path);
    commit(&mut w, |t| {
        t.make_node("a", NodeKind::File).expect("add");
        t.set_text("a", &mut &b"one\n"[..]).expect("text");
    });
    w.unlock().expect("unlock");
    drop(w);

    // One staged and never cleaned up, one cut short before its `current`.
    let mut done = Writer::stage(path, "1-done").expect("stage");
    commit(&mut done, |t| {
        t.set_text("a", &mut &b"staged\n"[..]).expect("text");
    });
    std::mem::forget(done);
    let mut cut = Writer::stage(path, "1-cut").expect("stage");
    {
        let mut t = Txn::begin(&mut cut).expect("begin");
        t.set_text("a", &mut &b"never\n"[..]).expect("text");
        t.commit().expect("commit");
    }
    std::mem::forget(cut);

    let repo = Repo::open(path).expect("open");
    repo.verify_files().expect("verify files");
    repo.verify_records().expect("verify records");
    assert_eq!(
        repo.txns().expect("txns"),
        vec![("1-cut".to_string(), 1), ("1-done".to_string(), 1)]
    );
    assert!(matches!(
        Repo::open_txn(path, "1-cut"),
        Err(svelto_store::StoreError::NoSuchTxn(_))
    ));
    let (view, _) = Repo::open_txn(path, "1-done").expect("open txn");
    assert_eq!(text(&view, 2, "a"), b"staged\n");

    // A writer opening keeps them (they may belong to live commits) and commits past them.
    let mut w = Writer::open(path).expect("writer");
    commit(&mut w, |t| {
        t.set_text("a", &mut &b"two\n"[..]).expect("text");
    });
    drop(w);
    assert_eq!(repo.txns().expect("txns").len(), 2);

    // Damage in a leftover is the leftover's: reading it fails cleanly.
    let data = path.join("db/txns/1-done.txn/data");
    let mut bytes = fs::read(&data).expect("read");
    for b in bytes.iter_mut() {
        *b ^= 0x5a;
    }
    fs::write(&data, bytes).expect("write");
    match Repo::open_txn(path, "1-done") {
        Err(e) => assert!(e.to_string().contains("corrupt"), "{e}"),
        Ok((view, _)) => assert!(view.node_at(2, "a").is_err()),
    }
    let repo = Repo::open(path).expect("open");
    repo.verify_files().expect("verify files");
    repo.verify_records().expect("verify records");
    assert_eq!(text(&repo, 2, "a"), b"two\n");
}
