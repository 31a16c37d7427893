//! Crash recovery: whatever happened to the bytes written after the last sync (lost, torn,
//! garbage), reopening gives the last synced revision, intact, and writing resumes.

use crate::common::new_repo;
use crate::model::{apply, empty_tree, op, read_tree, Op, Tree};
use proptest::prelude::*;
use std::fs;
use std::path::Path;
use svelto_store::{Repo, Txn, Writer};

const FILES: [&str; 5] = ["data", "revs", "meta", "dedup", "revprops"];

#[derive(Debug, Clone, Copy)]
enum Tail {
    Lost,
    Kept,
    Torn(u16),
    Garbage(u8),
}

fn tail() -> impl Strategy<Value = Tail> {
    prop_oneof![
        Just(Tail::Lost),
        Just(Tail::Kept),
        any::<u16>().prop_map(Tail::Torn),
        any::<u8>().prop_map(Tail::Garbage)
    ]
}

/// Copies the repository as a crash would leave it: the synced prefix of every file, and
/// the unsynced tail treated as `tail` says.
fn crash_copy(src: &Path, dst: &Path, tails: &[Tail]) {
    fs::create_dir_all(dst.join("db")).expect("mkdir");
    let cur = fs::read_to_string(src.join("db/current")).expect("current");
    let lens = svelto_store::Current::parse(&cur).expect("current").lens;
    for name in ["current", "format", "uuid"] {
        fs::copy(src.join("db").join(name), dst.join("db").join(name)).expect("copy");
    }
    for (i, name) in FILES.iter().enumerate() {
        let bytes = fs::read(src.join("db").join(name)).expect("read");
        let synced = lens[i] as usize;
        let mut out = bytes[..synced].to_vec();
        let rest = &bytes[synced..];
        match tails[i % tails.len()] {
            Tail::Lost => {}
            Tail::Kept => out.extend_from_slice(rest),
            Tail::Torn(n) => out.extend_from_slice(&rest[..(n as usize).min(rest.len())]),
            Tail::Garbage(b) => out.extend(std::iter::repeat_n(b, rest.len().max(17))),
        }
        fs::write(dst.join("db").join(name), out).expect("write");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn recovers_the_last_synced_revision(
        ops in proptest::collection::vec(op(), 1..40),
        syncs in proptest::collection::vec(any::<bool>(), 40),
        tails in proptest::collection::vec(tail(), 5),
        crash_mid_txn in any::<bool>(),
    ) {
        let dir = tempfile::tempdir().expect("tempdir");
        let src = dir.path().join("live");
        let dst = dir.path().join("crashed");
        let mut w = new_repo(&src);
        let mut history: Vec<Tree> = vec![empty_tree()];
        let mut model = empty_tree();
        let mut synced = 0usize;
        let mut txn = Txn::begin(&mut w).expect("begin");
        for (i, op) in ops.iter().enumerate() {
            if let Op::Commit = op {
                txn.commit().expect("commit");
                history.push(model.clone());
                if syncs[i % syncs.len()] {
                    synced = w.sync().expect("sync") as usize;
                }
                txn = Txn::begin(&mut w).expect("begin");
            } else {
                apply(&mut txn, &mut model, &history, op);
            }
        }
        if crash_mid_txn {
            // Push what the transaction appended so far to the OS, then crash.
            txn.repo().expect("flush");
            crash_copy(&src, &dst, &tails);
            drop(txn);
        } else {
            txn.commit().expect("commit");
            history.push(model.clone());
            w.view().expect("flush");
            crash_copy(&src, &dst, &tails);
        }

        let repo = Repo::open(&dst).expect("open after crash");
        prop_assert_eq!(repo.youngest() as usize, synced);
        for (rev, tree) in history.iter().enumerate().take(synced + 1) {
            prop_assert_eq!(&read_tree(&repo, rev as u64), tree, "revision {}", rev);
        }
        drop(repo);
        // A new writer drops the tail and carries on from the synced revision.
        let mut w2 = Writer::open(&dst).expect("writer after crash");
        let mut t = Txn::begin(&mut w2).expect("begin");
        let mut m = history[synced].clone();
        apply(&mut t, &mut m, &history[..=synced], &Op::AddDir(0, 0));
        apply(&mut t, &mut m, &history[..=synced], &Op::AddFile(0, 1, b"after the crash\n".to_vec()));
        prop_assert_eq!(t.commit().expect("commit") as usize, synced + 1);
        w2.sync().expect("sync");
        let repo = Repo::open(&dst).expect("reopen");
        prop_assert_eq!(&read_tree(&repo, synced as u64 + 1), &m);
    }
}
