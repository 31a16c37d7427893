//! Micro-benchmarks of the storage engine's read paths: looking up a deep path (warm caches,
//! and on a freshly opened store), looking up one entry of a 5,000-entry directory, listing
//! that directory with the node of every entry (what `get-dir` and `ls` need), and reading
//! the metadata of 3,000 revisions (what `log` does).
//!
//! Run: `cargo bench -p svelto-store --bench store`. The store is built once in a temporary
//! directory before measuring (a few seconds). "Fresh" benchmarks open a new `Repo` each
//! iteration, so its caches are empty; the OS page cache stays warm.

use std::hint::black_box;
use std::path::Path;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use svelto_core::{NodeKind, PropList};
use svelto_store::{create_db, Repo, Txn, Writer};

const DEEP_DIR: &str = "trunk/src/server/protocol/commands/editor/report/tests/data";
const DEEP_FILE: &str = "trunk/src/server/protocol/commands/editor/report/tests/data/case.txt";
const BIG_DIR: &str = "trunk/generated";
const BIG_ENTRIES: usize = 5_000;
const BIG_PROBE: &str = "trunk/generated/file-02500.txt";
const REVISIONS: u64 = 3_000;
/// Files of a small directory that every later revision changes some of.
const HOT_FILES: usize = 50;

fn revprops(rev: u64) -> PropList {
    let mut p = PropList::new();
    p.insert(b"svn:author".to_vec(), b"developer".to_vec());
    p.insert(
        b"svn:date".to_vec(),
        format!("2026-01-01T00:{:02}:{:02}.000000Z", rev / 60 % 60, rev % 60).into_bytes(),
    );
    p.insert(
        b"svn:log".to_vec(),
        format!("Revision {rev}: fix the handling of empty reports in the editor.\n").into_bytes(),
    );
    p
}

/// Builds the repository: r1 adds the deep path, the big directory and the hot files; every
/// later revision changes three hot files (and every 100th the deep file), with the usual
/// revision properties, up to r3000.
fn build(dir: &Path) {
    create_db(dir, "00000000-0000-4000-8000-000000000000", &revprops(0)).expect("create");
    let mut w = Writer::open(dir).expect("open writer");
    let mut t = Txn::begin(&mut w).expect("begin");
    let mut path = String::new();
    for comp in DEEP_DIR.split('/') {
        if !path.is_empty() {
            path.push('/');
        }
        path.push_str(comp);
        t.make_node(&path, NodeKind::Dir).expect("mkdir");
    }
    t.make_node(DEEP_FILE, NodeKind::File)
        .expect("add deep file");
    t.set_text(DEEP_FILE, &mut &b"deep\n"[..]).expect("text");
    t.make_node(BIG_DIR, NodeKind::Dir).expect("mkdir big");
    for i in 0..BIG_ENTRIES {
        let p = format!("{BIG_DIR}/file-{i:05}.txt");
        t.make_node(&p, NodeKind::File).expect("add");
        t.set_text(&p, &mut format!("generated file {i}\n").as_bytes())
            .expect("text");
    }
    for i in 0..HOT_FILES {
        let p = format!("trunk/src/hot-{i:02}.rs");
        t.make_node(&p, NodeKind::File).expect("add");
        t.set_text(&p, &mut format!("// hot file {i}\n").as_bytes())
            .expect("text");
    }
    t.revprops = revprops(1);
    assert_eq!(t.commit().expect("commit r1"), 1);
    for rev in 2..=REVISIONS {
        let mut t = Txn::begin(&mut w).expect("begin");
        for k in 0..3 {
            let i = (rev as usize * 7 + k * 13) % HOT_FILES;
            let text = format!("// hot file {i}, changed in r{rev}\nfn f() {{}}\n");
            t.set_text(&format!("trunk/src/hot-{i:02}.rs"), &mut text.as_bytes())
                .expect("text");
        }
        if rev % 100 == 0 {
            t.set_text(DEEP_FILE, &mut format!("deep, r{rev}\n").as_bytes())
                .expect("text");
        }
        t.revprops = revprops(rev);
        assert_eq!(t.commit().expect("commit"), rev);
    }
    assert_eq!(w.sync().expect("sync"), REVISIONS);
}

/// Reads the listing of `BIG_DIR` and the node-revision of every entry.
fn list_big(repo: &Repo) -> usize {
    let (_, node) = repo.node_at(REVISIONS, BIG_DIR).expect("big dir");
    let entries = repo.dir(&node).expect("listing");
    for e in entries.iter() {
        black_box(repo.node(e.node).expect("entry node"));
    }
    entries.len()
}

/// Reads every revision's metadata, youngest first, as `log` on the root does.
fn scan_log(repo: &Repo) -> usize {
    let mut changes = 0;
    for rev in (1..=repo.youngest()).rev() {
        changes += repo.rev_meta(rev).expect("rev meta").changes.len();
    }
    changes
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("tempdir");
    build(dir.path());
    let root = dir.path();
    let repo = Repo::open(root).expect("open");
    assert!(repo.lookup(REVISIONS, DEEP_FILE).expect("lookup").is_some());
    assert!(repo.lookup(REVISIONS, BIG_PROBE).expect("lookup").is_some());
    assert_eq!(list_big(&repo), BIG_ENTRIES);
    assert!(scan_log(&repo) >= 3 * (REVISIONS as usize - 1));

    let mut g = c.benchmark_group("store");
    g.bench_function("lookup_deep/warm", |b| {
        b.iter(|| {
            repo.lookup(REVISIONS, black_box(DEEP_FILE))
                .expect("lookup")
        })
    });
    g.bench_function("lookup_deep/fresh", |b| {
        b.iter(|| {
            let fresh = Repo::open(root).expect("open");
            fresh
                .lookup(REVISIONS, black_box(DEEP_FILE))
                .expect("lookup")
        })
    });
    g.bench_function("lookup_in_5000/warm", |b| {
        b.iter(|| {
            repo.lookup(REVISIONS, black_box(BIG_PROBE))
                .expect("lookup")
        })
    });
    g.bench_function("lookup_in_5000/fresh", |b| {
        b.iter(|| {
            let fresh = Repo::open(root).expect("open");
            fresh
                .lookup(REVISIONS, black_box(BIG_PROBE))
                .expect("lookup")
        })
    });

    g.throughput(Throughput::Elements(BIG_ENTRIES as u64));
    g.bench_function("list_5000/warm", |b| b.iter(|| list_big(&repo)));
    g.bench_function("list_5000/fresh", |b| {
        b.iter(|| list_big(&Repo::open(root).expect("open")))
    });

    g.throughput(Throughput::Elements(REVISIONS));
    g.bench_function("log_scan_3000/warm", |b| b.iter(|| scan_log(&repo)));
    g.bench_function("log_scan_3000/fresh", |b| {
        b.iter(|| scan_log(&Repo::open(root).expect("open")))
    });
    g.finish();
    commit(c);
}

/// The write path: one revision changing three files, committed and synced, in a
/// repository on tmpfs where there is one (/dev/shm: fsync costs nothing there, so the
/// figure is the writer's own work).
fn commit(c: &mut Criterion) {
    let shm = Path::new("/dev/shm");
    let dir = if shm.is_dir() {
        tempfile::tempdir_in(shm)
    } else {
        tempfile::tempdir()
    }
    .expect("tempdir");
    create_db(
        dir.path(),
        "00000000-0000-4000-8000-000000000000",
        &revprops(0),
    )
    .expect("create");
    let mut w = Writer::open(dir.path()).expect("open writer");
    let mut t = Txn::begin(&mut w).expect("begin");
    for i in 0..3 {
        t.make_node(&format!("f{i}"), NodeKind::File).expect("add");
    }
    t.commit().expect("commit");
    let mut rev = 1u64;
    c.bench_function("store/commit_3_files_synced", |b| {
        b.iter(|| {
            rev += 1;
            let mut t = Txn::begin(&mut w).expect("begin");
            for i in 0..3 {
                let text = format!("file {i}, changed in r{rev}\n").repeat(20);
                t.set_text(&format!("f{i}"), &mut text.as_bytes())
                    .expect("text");
            }
            t.commit().expect("commit");
            w.sync().expect("sync")
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
