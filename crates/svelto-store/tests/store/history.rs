//! Node identity and history as Subversion defines them.

use crate::common::new_repo;
use svelto_core::{ChangeKind, NodeKind};
use svelto_store::Repo;
use svelto_store::Txn;

#[test]
fn copies_keep_history_and_cost_one_node() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut w = new_repo(dir.path());
    let mut t = Txn::begin(&mut w).expect("begin");
    t.make_node("trunk", NodeKind::Dir).expect("mkdir");
    for i in 0..200 {
        let p = format!("trunk/f{i}");
        t.make_node(&p, NodeKind::File).expect("add");
        t.set_text(&p, &mut format!("file {i}\n").as_bytes())
            .expect("text");
    }
    assert_eq!(t.commit().expect("commit"), 1);
    let before = w.view().expect("view").current().lens;

    let mut t = Txn::begin(&mut w).expect("begin");
    t.copy(1, "trunk", "branch").expect("copy");
    assert_eq!(t.commit().expect("commit"), 2);
    let after = w.view().expect("view").current().lens;
    // A copy of 200 files writes a root, one copied directory node and metadata.
    assert!(
        after[0] - before[0] < 400,
        "copy wrote {} bytes of data",
        after[0] - before[0]
    );

    let mut t = Txn::begin(&mut w).expect("begin");
    t.set_text("branch/f7", &mut &b"changed on the branch\n"[..])
        .expect("text");
    assert_eq!(t.commit().expect("commit"), 3);
    let mut t = Txn::begin(&mut w).expect("begin");
    t.delete("trunk/f7").expect("delete");
    t.make_node("trunk/f7", NodeKind::File).expect("re-add");
    assert_eq!(t.commit().expect("commit"), 4);
    w.sync().expect("sync");

    let repo = Repo::open(dir.path()).expect("open");
    let h = repo.history(3, "branch/f7").expect("history");
    let steps: Vec<(u64, &str)> = h.iter().map(|e| (e.rev, e.path.as_str())).collect();
    assert_eq!(steps, vec![(3, "branch/f7"), (1, "trunk/f7")]);
    let h = repo.history(2, "branch").expect("history");
    assert_eq!(h[0].copyfrom, Some((1, "trunk".to_string())));
    assert_eq!(h[1].path, "trunk");

    let (branch_f7, _) = repo.node_at(3, "branch/f7").expect("node");
    let (trunk_f7, _) = repo.node_at(1, "trunk/f7").expect("node");
    let (readded, _) = repo.node_at(4, "trunk/f7").expect("node");
    assert!(repo.related(branch_f7, trunk_f7).expect("related"));
    assert!(
        !repo.related(readded, trunk_f7).expect("related"),
        "a replaced node is a new line of history"
    );

    let (_, n) = repo.node_at(2, "branch/f3").expect("node");
    assert_eq!(
        (n.created_rev, n.created_path.as_str()),
        (1, "trunk/f3"),
        "unchanged nodes under a copy are shared"
    );

    let meta = repo.rev_meta(4).expect("meta");
    assert_eq!(meta.changes.len(), 1);
    assert_eq!(meta.changes[0].change, ChangeKind::Replace);
}

#[test]
fn identical_contents_are_stored_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut w = new_repo(dir.path());
    let body: Vec<u8> = (0..50_000u32).map(|i| (i % 200) as u8).collect();
    let mut t = Txn::begin(&mut w).expect("begin");
    t.make_node("a", NodeKind::File).expect("add");
    let a = t.set_text("a", &mut body.as_slice()).expect("text");
    t.commit().expect("commit");
    let before = w.view().expect("view").current().lens[0];
    let mut t = Txn::begin(&mut w).expect("begin");
    t.make_node("b", NodeKind::File).expect("add");
    let b = t.set_text("b", &mut body.as_slice()).expect("text");
    t.commit().expect("commit");
    w.sync().expect("sync");
    let after = w.view().expect("view").current().lens[0];
    assert_eq!(a, b);
    assert!(
        after - before < 300,
        "second copy of the contents cost {} bytes",
        after - before
    );
    // And across writer sessions (the dedup index is persistent).
    drop(w);
    let mut w = svelto_store::Writer::open(dir.path()).expect("reopen");
    let mut t = Txn::begin(&mut w).expect("begin");
    t.make_node("c", NodeKind::File).expect("add");
    assert_eq!(t.set_text("c", &mut body.as_slice()).expect("text"), a);
}

#[test]
fn file_history_is_stored_as_bounded_deltas() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut w = new_repo(dir.path());
    let mut text = String::new();
    let mut t = Txn::begin(&mut w).expect("begin");
    t.make_node("ChangeLog", NodeKind::File).expect("add");
    t.commit().expect("commit");
    for i in 0..300u64 {
        let word = |k: u64| (k.wrapping_mul(2_654_435_761) >> 7) % 100_000;
        text.push_str(&format!(
            "{i}: entry {} by {} about {}\n",
            word(i),
            word(i + 7),
            word(i * 3)
        ));
        let mut t = Txn::begin(&mut w).expect("begin");
        t.set_text("ChangeLog", &mut text.as_bytes()).expect("text");
        t.commit().expect("commit");
    }
    w.sync().expect("sync");
    let size = w.view().expect("view").current().lens[0];
    // 300 compressed fulltexts take ~1 MB; deltas keep the history near its last text.
    eprintln!(
        "data file: {size} bytes for {} bytes of final text",
        text.len()
    );
    assert!(size < 150_000, "data file is {size} bytes");
    let repo = Repo::open(dir.path()).expect("open");
    let (_, n) = repo.node_at(301, "ChangeLog").expect("node");
    assert_eq!(
        repo.read_text(&n.file_text()).expect("read").as_slice(),
        text.as_bytes()
    );
}

/// A repository at `dir` whose file `f` has `count` versions, r1 to r`count`, 200 lines each,
/// one line changed from each to the next; their texts.
fn versions_of_f(dir: &std::path::Path, count: u64) -> Vec<String> {
    let mut w = new_repo(dir);
    let mut texts = Vec::new();
    for i in 0..count {
        let text: String = (0..200)
            .map(|l| format!("line {l} of version {}\n", if l == 50 { i } else { 0 }))
            .collect();
        let mut t = Txn::begin(&mut w).expect("begin");
        if i == 0 {
            t.make_node("f", NodeKind::File).expect("add");
        }
        t.set_text("f", &mut text.as_bytes()).expect("text");
        t.commit().expect("commit");
        texts.push(text);
    }
    w.sync().expect("sync");
    texts
}

/// `stored_delta` and `text_over` hand out a version's stored windows only against the base
/// they were stored against (the version before, except every 16th predecessor count:
/// skip-delta), and those windows turn that base's text into the version's.
#[test]
fn stored_deltas_are_offered_against_their_own_base_only() {
    let dir = tempfile::tempdir().expect("tempdir");
    let texts = versions_of_f(dir.path(), 18);
    let repo = Repo::open(dir.path()).expect("open");
    // Revision r has the version with predecessor count r - 1.
    let ft = |rev: u64| repo.node_at(rev, "f").expect("node").1.file_text();
    let mut pairs: Vec<(u64, u64)> = (2..=18).filter(|&r| r != 17).map(|r| (r - 1, r)).collect();
    // Count 16: skip-delta, against count 0.
    pairs.push((1, 17));
    for (base, version) in pairs {
        let (b, v) = (ft(base), ft(version));
        let text = &texts[version as usize - 1];
        let windows = repo
            .stored_delta(&v, b.rep)
            .expect("read")
            .unwrap_or_else(|| panic!("r{version} stored against r{base}"));
        let source = repo.read_text(&b).expect("base text");
        let applied = svelto_delta::apply_windows(&windows, &source).expect("apply");
        assert_eq!(applied, text.as_bytes());
        let (over, contents) = repo
            .text_over(&v, b.rep, &source)
            .expect("read")
            .expect("stored against this base");
        assert_eq!(over, windows);
        assert_eq!(contents, text.as_bytes());
    }
    assert!(repo
        .stored_delta(&ft(17), ft(16).rep)
        .expect("read")
        .is_none());
    assert!(repo
        .text_over(&ft(17), ft(16).rep, texts[15].as_bytes())
        .expect("read")
        .is_none());
    assert!(repo
        .stored_delta(&ft(3), ft(1).rep)
        .expect("read")
        .is_none());
    assert!(repo
        .stored_delta(&ft(2), svelto_store::TextId::NONE)
        .expect("read")
        .is_none());
    assert!(repo
        .stored_delta(&ft(1), ft(1).rep)
        .expect("read")
        .is_none());
}

/// A stored delta once read stays in the handle's text cache: asked again, it is answered
/// without reading `db/data` (whose windows are damaged in between, which a fresh handle
/// reports), and asked against another base it is refused the same way.
#[test]
fn stored_deltas_once_read_are_answered_from_the_cache() {
    use std::os::unix::fs::FileExt;
    let dir = tempfile::tempdir().expect("tempdir");
    versions_of_f(dir.path(), 2);
    let repo = Repo::open(dir.path()).expect("open");
    let (v1, v2) = (
        repo.node_at(1, "f").expect("node").1.file_text(),
        repo.node_at(2, "f").expect("node").1.file_text(),
    );
    let windows = repo
        .stored_delta(&v2, v1.rep)
        .expect("read")
        .expect("stored against the version before");
    // The last bytes of the last window record, just before the REP record.
    let data = std::fs::OpenOptions::new()
        .write(true)
        .open(dir.path().join("db/data"))
        .expect("open db/data");
    data.write_all_at(&[0xA5; 6], v2.rep.raw() - 6)
        .expect("damage");
    let again = repo
        .stored_delta(&v2, v1.rep)
        .expect("answered from the cache");
    assert_eq!(again, Some(windows));
    assert!(repo.stored_delta(&v2, v2.rep).expect("cached").is_none());
    let fresh = Repo::open(dir.path()).expect("open");
    assert!(
        fresh.stored_delta(&v2, v1.rep).is_err(),
        "a fresh handle reads the damaged windows"
    );
}

/// What a receiver without a version of a file is sent: a version stored self-contained
/// comes as its stored stream (a small one's windows read with its REP record, a large
/// one's read after it), which decodes to the version; a version stored as a delta comes as
/// its contents, rebuilt from the REP record read to learn that it is one; asked again, each
/// is answered from the text cache.
#[test]
fn stored_streams_or_texts_give_every_version() {
    use svelto_store::Stored;
    let dir = tempfile::tempdir().expect("tempdir");
    let mut w = new_repo(dir.path());
    let small = |v: u64| -> String {
        (0..30)
            .map(|l| format!("line {l} of version {}\n", if l == 20 { v } else { 0 }))
            .collect()
    };
    // Hardly compressible, several windows: stored whole each time it is unrelated.
    let large = |v: u64| -> Vec<u8> {
        let mut x = v.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        (0..300_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect()
    };
    let mut versions = Vec::new();
    for v in 0..4u64 {
        let mut t = Txn::begin(&mut w).expect("begin");
        if v == 0 {
            t.make_node("s", NodeKind::File).expect("add");
            t.make_node("l", NodeKind::File).expect("add");
        }
        let (s, l) = (small(v), large(v));
        t.set_text("s", &mut s.as_bytes()).expect("text");
        t.set_text("l", &mut l.as_slice()).expect("text");
        t.commit().expect("commit");
        versions.push((v + 1, "s", s.into_bytes()));
        versions.push((v + 1, "l", l));
    }
    w.sync().expect("sync");
    let repo = Repo::open(dir.path()).expect("open");
    let (mut streams, mut texts) = (0, 0);
    for (rev, path, contents) in &versions {
        let text = repo.node_at(*rev, path).expect("node").1.file_text();
        for _ in 0..2 {
            match repo.stored_stream_or_text(&text).expect("read") {
                Stored::Stream(stream) => {
                    streams += 1;
                    let windows = svelto_delta::decode_stream(&stream, &Default::default())
                        .expect("a valid stream");
                    let got = svelto_delta::apply_windows(&windows, &[]).expect("apply");
                    assert!(
                        got == *contents,
                        "{path}@{rev}: the stream decodes to another text"
                    );
                }
                Stored::Text(got) => {
                    texts += 1;
                    assert!(*got == *contents, "{path}@{rev}: another text");
                }
            }
        }
    }
    // s@1 and every l are stored whole; s@2..4 are deltas.
    assert_eq!((streams, texts), (10, 6));
}

/// Every version of a file reads back whatever was read before it: the newest first (its
/// whole chain rebuilt, no base kept), then the others from the oldest up (each chain cut
/// short at a cached version), from the newest down, and again through a handle whose
/// cache holds almost nothing. Versions span several windows, some with deltas too large to
/// come with their REP record in one read, some stored whole.
#[test]
fn every_version_reads_back_through_its_chain_in_any_order() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut w = new_repo(dir.path());
    let line = |l: u64, v: u64| format!("{l:06} {:x}\n", (l ^ v).wrapping_mul(0x9e37_79b9));
    let mut lines: Vec<String> = (0..12_000).map(|l| line(l, 0)).collect();
    let mut texts = Vec::new();
    for v in 0..70u64 {
        // A few lines changed in each version, a whole block every seventh (a delta of
        // several KB), and every twentieth something unrelated (stored whole).
        let k = (v * 2_654_435_761 % 12_000) as usize;
        let changed = if v % 7 == 3 { 400 } else { 3 };
        for l in k..(k + changed).min(lines.len()) {
            lines[l] = line(l as u64, v + 1);
        }
        let text: String = if v % 20 == 19 {
            (0..3_000).map(|l| line(l * 7 + v, v)).collect()
        } else {
            lines.concat()
        };
        let mut t = Txn::begin(&mut w).expect("begin");
        if v == 0 {
            t.make_node("f", NodeKind::File).expect("add");
        }
        t.set_text("f", &mut text.as_bytes()).expect("text");
        t.commit().expect("commit");
        texts.push(text);
    }
    w.sync().expect("sync");
    let check = |repo: &Repo, order: &mut dyn Iterator<Item = usize>| {
        for i in order {
            let (_, n) = repo.node_at(i as u64 + 1, "f").expect("node");
            let got = repo.read_text(&n.file_text()).expect("read");
            assert!(got.as_slice() == texts[i].as_bytes(), "version {i} differs");
        }
    };
    let repo = Repo::open(dir.path()).expect("open");
    let last = texts.len() - 1;
    check(&repo, &mut [last, last].into_iter());
    check(&repo, &mut (0..texts.len()));
    check(&repo, &mut (0..texts.len()).rev());
    let small = Repo::open(dir.path()).expect("open");
    small.set_cache_limit(64 << 10);
    check(&small, &mut (0..texts.len()).rev());
    check(&small, &mut (0..texts.len()).step_by(3));
}
