//! The service over any storage backend: `service::Repos` opens repositories with the
//! backend the composition root gives it, and `service::Ctx` reads and writes through the
//! storage seam alone. The same client's session (a commit through the commit editor, reads
//! of nodes, texts and listings, log, an update report, a lock, a refused revision property
//! change) answers the same over the local engine and the in-memory backend.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use svelto_core::{Depth, Env, FixedEnv, NodeKind, PropList};
use svelto_delta::{encode_stream, Window};
use svelto_fs::{Backend, ReadRepo, StoreError, WriteRepo};
use svelto_repos::editor::Recorder;
use svelto_repos::locks::LockTarget;
use svelto_repos::service::{CommitRequest, Ctx, Repos};
use svelto_repos::{LogOptions, Report, ReportOptions, TextOptions};
use svelto_testkit::memfs::MemRepo;

const UUID: &str = "00000000-0000-4000-8000-00000000abcd";
const DATE: &str = "2026-03-01T00:00:00.000000Z";

/// Repositories in memory, by the directory a server would find them in.
#[derive(Default)]
struct InMemory(Mutex<HashMap<PathBuf, MemRepo>>);

impl InMemory {
    fn get(&self, dir: &Path) -> svelto_fs::Result<MemRepo> {
        let repos = self.0.lock().expect("repositories");
        repos
            .get(dir)
            .cloned()
            .ok_or_else(|| StoreError::NotARepository(dir.display().to_string()))
    }
}

impl Backend for InMemory {
    fn open(&self, dir: &Path, env: &Arc<dyn Env>) -> svelto_fs::Result<Arc<dyn ReadRepo>> {
        let repo = self.get(dir)?;
        repo.set_env(env.clone());
        Ok(Arc::new(repo))
    }
    fn is_repository(&self, dir: &Path) -> bool {
        self.get(dir).is_ok()
    }
    fn open_writer(&self, dir: &Path) -> svelto_fs::Result<Box<dyn WriteRepo>> {
        Ok(Box::new(self.get(dir)?.writer()))
    }
}

fn md5_hex(b: &[u8]) -> String {
    use md5::Digest;
    md5::Md5::digest(b)
        .iter()
        .map(|x| format!("{x:02x}"))
        .collect()
}

/// A file's contents a client sends: `n` bytes no two windows of which repeat.
fn contents(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            b'a' + (x % 26) as u8
        })
        .collect()
}

/// A session's answers on the repository in `dir` opened by `backend`; also whether the
/// large file came as stored pieces (the backend's fast path) or whole.
fn session(backend: Arc<dyn Backend>, dir: &Path) -> (Vec<String>, bool) {
    let env: Arc<dyn Env> = Arc::new(FixedEnv::new(DATE));
    let repos = Repos::new(backend, 1 << 20, 4, env);
    assert!(repos.is_repo(dir), "the backend's repository");
    assert!(!repos.is_repo(&dir.join("trunk")), "not a repository");
    let (repo, writer) = repos.open(dir).expect("open");
    let again = repos.open(dir).expect("open again");
    assert!(
        Arc::ptr_eq(&writer, &again.1),
        "one writer slot per repository"
    );
    drop(again);
    let ctx = Ctx::new(
        repo,
        writer,
        Some("alice".into()),
        None,
        dir.join("conf/hooks-env"),
    );
    let mut seen = Vec::new();

    // A commit through the commit editor, as a client drives it.
    let small = b"small\n".to_vec();
    let large = contents(svelto_fs::DELTA_MAX + 100_000, 7);
    let mut revprops = PropList::new();
    revprops.insert(b"svn:log".to_vec(), b"first".to_vec());
    let mut edit = ctx
        .begin_commit(CommitRequest {
            revprops,
            ..CommitRequest::default()
        })
        .expect("begin");
    edit.open_root(Some(0)).expect("open_root");
    edit.add("trunk", NodeKind::Dir, None, "", false)
        .expect("add trunk");
    for (path, text) in [("trunk/a.txt", &small), ("trunk/big.bin", &large)] {
        edit.add(path, NodeKind::File, None, "trunk", false)
            .expect("add file");
        let windows: Vec<Window> = text.chunks(100 << 10).map(Window::fulltext).collect();
        let stream = encode_stream(&windows, 0, 0).expect("svndiff");
        let mut td = edit.start_text(path, None).expect("start_text");
        edit.text_chunk(&mut td, &stream).expect("text_chunk");
        edit.end_text(td).expect("end_text");
        edit.close_file(path, Some(&md5_hex(text)))
            .expect("close_file");
    }
    let done = edit.finish(DATE).expect("commit");
    seen.push(format!(
        "r{} by {:?} at {}",
        done.rev, done.author, done.date
    ));
    seen.push(format!("head {}", ctx.head().expect("head")));

    // Reads of nodes, texts and a listing.
    let a = ctx.node_at("trunk/a.txt", 1).expect("a.txt");
    seen.push(format!(
        "a.txt {:?}",
        String::from_utf8_lossy(&ctx.read_text(&a).expect("read"))
    ));
    assert!(ctx.large_text(&a).expect("small").is_none(), "held whole");
    let big = ctx.node_at("trunk/big.bin", 1).expect("big.bin");
    let (whole, pieces) = match ctx.large_text(&big).expect("large") {
        Some(chunks) => (
            chunks
                .collect::<svelto_repos::Result<Vec<_>>>()
                .expect("chunks")
                .concat(),
            true,
        ),
        None => {
            let mut out = Vec::new();
            ctx.write_text(&big, &mut out).expect("streamed");
            (out, false)
        }
    };
    seen.push(format!("big.bin equal {}", whole == large));
    let trunk = ctx.node_at("trunk", 1).expect("trunk");
    let mut names = Vec::new();
    ctx.dir_entries(&trunk, &mut |name, _| {
        names.push(name.to_string());
        Ok(())
    })
    .expect("entries");
    seen.push(format!("trunk: {names:?}"));

    // Log.
    let opts = LogOptions {
        paths: vec![String::new()],
        start: 1,
        end: 0,
        discover_changed_paths: true,
        ..LogOptions::default()
    };
    ctx.log(&opts, &mut |e| {
        let paths: Vec<String> = e.changed_paths.iter().map(|c| format!("{c:?}")).collect();
        seen.push(format!("log r{} {:?} {paths:?}", e.rev, e.revprops));
        Ok(())
    })
    .expect("log");

    // An update of a checkout at r0 to r1 (texts as their sizes: the stored delta's bytes
    // are the backend's).
    let mut report = Report::new();
    report
        .set_path("", 0, Depth::Infinity, false, None)
        .expect("set_path");
    let ro = ReportOptions {
        anchor: String::new(),
        target: String::new(),
        target_rev: 1,
        switch_path: None,
        depth: Depth::Infinity,
        send_copyfrom_args: false,
        ignore_ancestry: false,
        text: TextOptions {
            svndiff_version: 0,
            accepts: 0,
            send_deltas: false,
        },
    };
    let mut rec = Recorder::default();
    ctx.prepare_report(&ro, report)
        .expect("prepare")
        .run(&mut rec)
        .expect("drive");
    seen.extend(rec.calls.iter().map(|c| format!("{c:?}")));

    // A lock, and a revision property change no hook allows.
    let locked = ctx
        .lock_many(
            Some("mine"),
            false,
            DATE,
            vec![LockTarget {
                path: "trunk/a.txt".into(),
                current_rev: Some(1),
            }],
        )
        .expect("lock");
    let lock = locked
        .results
        .into_iter()
        .next()
        .expect("one")
        .expect("locked");
    seen.push(format!("locked {} by {}", lock.path, lock.owner));
    let got = ctx
        .get_lock("trunk/a.txt")
        .expect("get_lock")
        .expect("held");
    seen.push(format!("lock token equal {}", got.token == lock.token));
    let refused = ctx
        .clone()
        .change_rev_prop(
            1,
            "svn:log",
            Some(b"changed"),
            None as Option<Option<&[u8]>>,
        )
        .expect_err("no pre-revprop-change hook");
    seen.push(format!("revprop change: {refused}"));
    seen.push(format!("head {}", ctx.head().expect("head")));
    (seen, pieces)
}

/// The same session over the local engine (a repository directory, hooks/ and all, with no
/// hook programs) and over repositories in memory (no directory: no hooks) answers the
/// same; the local engine's large file comes as its stored pieces, the memory backend's
/// through the plain stream.
#[test]
fn the_service_answers_the_same_over_the_local_and_the_memory_backend() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("repo");
    svelto_repos::create(&*svelto_testkit::memfs::local_backend(), &dir, UUID, DATE)
        .expect("create");
    let (local, local_pieces) = session(svelto_testkit::memfs::local_backend(), &dir);

    let memory = InMemory::default();
    let mut r0 = PropList::new();
    r0.insert(b"svn:date".to_vec(), DATE.as_bytes().to_vec());
    let virtual_dir = PathBuf::from("/nowhere/repo");
    memory
        .0
        .lock()
        .expect("repositories")
        .insert(virtual_dir.clone(), MemRepo::create(UUID, r0));
    let (mem, mem_pieces) = session(Arc::new(memory), &virtual_dir);

    assert_eq!(local, mem);
    assert!(
        local.iter().any(|l| l == "big.bin equal true"),
        "{local:#?}"
    );
    assert!(local
        .iter()
        .any(|l| l.starts_with("locked trunk/a.txt by alice")));
    assert!(local_pieces, "the local engine streams its stored windows");
    assert!(!mem_pieces, "the memory backend has no such fast path");
}
