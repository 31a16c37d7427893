//! Subversion's semantics over the in-memory backend (`svelto_testkit::memfs::MemRepo`,
//! written against the storage seam alone): every small fixture, loaded with the local
//! engine and copied into memory, keeps the seam's contract on both backends, and dump,
//! `log -v`, `list -R` and location segments give the same answers over both. And the
//! write side: the same edits, refused commits, locks and revision property changes,
//! made through svelto-repos on each backend, leave equal repositories.

use std::sync::Arc;
use svelto_core::{Depth, Revnum};
use svelto_core::{FixedEnv, NodeKind, PropList};
use svelto_delta::{encode_stream, Window};
use svelto_fs::{ReadRepo, WriteRepo};
use svelto_repos::list::list;
use svelto_repos::locks::{self, LockTarget, UnlockTarget};
use svelto_repos::revprops::{change_rev_prop_with, HookUse, RevpropChange};
use svelto_repos::CommitTxn;
use svelto_repos::{dump, location_segments, log, DumpOptions, LogOptions, Segment};
use svelto_testkit::memfs::{Backend, MemRepo, TestRepo, BACKENDS};

fn dumped(repo: &dyn ReadRepo) -> Vec<u8> {
    let mut out = Vec::new();
    let opts = DumpOptions {
        start: 0,
        end: repo.youngest(),
        incremental: false,
        deltas: false,
        filter: None,
    };
    dump(repo, &mut out, opts, &mut |_| {}).expect("dump");
    out
}

fn logged(repo: &dyn ReadRepo) -> Vec<svelto_repos::LogEntry> {
    let opts = LogOptions {
        paths: vec![String::new()],
        start: repo.youngest(),
        end: 0,
        discover_changed_paths: true,
        ..LogOptions::default()
    };
    let mut out = Vec::new();
    log(repo, &opts, &mut |e| {
        out.push(e);
        Ok(())
    })
    .expect("log");
    out
}

fn listed(repo: &dyn ReadRepo, rev: Revnum) -> Vec<String> {
    let mut out = Vec::new();
    list(repo, "", rev, Depth::Infinity, None, None, &mut |p, n| {
        // What `svn ls -v` shows (the listing's id is the backend's own).
        let (kind, rev, props, size) = (n.kind(), n.created_rev(), n.has_props(), n.size());
        out.push(format!("{p} {kind:?} r{rev} props={props} {size}"));
        Ok(())
    })
    .expect("list");
    out
}

fn segments(repo: &dyn ReadRepo, path: &str, rev: Revnum) -> Vec<Segment> {
    let mut out = Vec::new();
    location_segments(repo, path, rev, rev, 0, &mut |s| {
        out.push(s);
        Ok(())
    })
    .expect("segments");
    out
}

#[test]
fn every_fixture_reads_the_same_from_memory() {
    for name in svelto_testkit::SMALL_SCENARIOS {
        let (_dir, local) = crate::replay::load_fixture(name);
        let mem = MemRepo::copy_of(&*local).expect("copy into memory");
        let on_disk = svelto_fs::contract::check(&*local).unwrap_or_else(|e| panic!("{name}: {e}"));
        let in_memory =
            svelto_fs::contract::check(&mem).unwrap_or_else(|e| panic!("{name}: memory: {e}"));
        assert_eq!(on_disk, in_memory, "{name}");
        assert_eq!(mem.youngest(), local.youngest(), "{name}");
        assert_eq!(dumped(&mem), dumped(&*local), "{name}: dump");
        assert_eq!(logged(&mem), logged(&*local), "{name}: log -v");
        let y = local.youngest();
        assert_eq!(listed(&mem, y), listed(&*local, y), "{name}: list -R");
        // Every path of the youngest tree: where it came from.
        let mut paths = Vec::new();
        list(&*local, "", y, Depth::Infinity, None, None, &mut |p, _| {
            paths.push(p.to_string());
            Ok(())
        })
        .expect("list");
        for p in paths {
            assert_eq!(
                segments(&mem, &p, y),
                segments(&*local, &p, y),
                "{name}: {p}"
            );
        }
    }
}

const DATE: &str = "2026-03-01T00:00:00.000000Z";

fn md5_hex(b: &[u8]) -> String {
    use md5::Digest;
    md5::Md5::digest(b)
        .iter()
        .map(|x| format!("{x:02x}"))
        .collect()
}

/// Sends `text` as the client does (a delta against nothing) and closes the file.
fn send(txn: &mut CommitTxn, path: &str, base_md5: Option<&str>, text: &[u8]) {
    let stream = encode_stream(&[Window::fulltext(text)], 0, 0).expect("svndiff");
    let mut td = txn.start_text(path, base_md5).expect("start_text");
    txn.text_chunk(&mut td, &stream).expect("text_chunk");
    txn.end_text(td).expect("end_text");
    txn.close_file(path, Some(&md5_hex(text)))
        .expect("close_file");
}

fn begin(repo: &Arc<dyn ReadRepo>, name: &str) -> CommitTxn {
    let mut props = PropList::new();
    props.insert(b"svn:log".to_vec(), name.as_bytes().to_vec());
    props.insert(b"svn:author".to_vec(), b"alice".to_vec());
    CommitTxn::begin(repo.clone(), name, props).expect("begin")
}

fn publish(txn: CommitTxn, w: &mut dyn WriteRepo) -> svelto_repos::Result<u64> {
    txn.prepare(w, DATE)?.publish()
}

/// One script of edits, a refused and an aborted commit, locks and a revision property
/// change, through svelto-repos on `t`; returns what the checks of each step saw.
fn script(t: &TestRepo) -> Vec<String> {
    let repo = t.repo.clone();
    let mut w = t.writer();
    let w = &mut *w;
    let mut seen = Vec::new();
    // r1: a tree with a property.
    let mut c = begin(&repo, "r1");
    c.add("trunk", NodeKind::Dir, None, false).expect("add");
    c.add("trunk/a", NodeKind::File, None, false).expect("add");
    send(&mut c, "trunk/a", None, b"one\n");
    c.add("trunk/sub", NodeKind::Dir, None, false).expect("add");
    c.add("trunk/sub/b", NodeKind::File, None, false)
        .expect("add");
    send(&mut c, "trunk/sub/b", None, b"bee\n");
    c.change_prop("trunk", b"svn:ignore", Some(b"*.o\n"))
        .expect("prop");
    assert_eq!(publish(c, w).expect("r1"), 1);
    // r2: a text change and a copy of r1's tree.
    let mut c = begin(&repo, "r2");
    c.open_file("trunk/a", Some(1)).expect("open");
    send(&mut c, "trunk/a", Some(&md5_hex(b"one\n")), b"one\ntwo\n");
    c.add("branch", NodeKind::Dir, Some(("trunk".into(), 1)), false)
        .expect("copy");
    assert_eq!(publish(c, w).expect("r2"), 2);
    // An edit begun on r1 that changes trunk/a: out of date since r2.
    let mut stale = CommitTxn::begin(repo.clone(), "stale", PropList::new()).expect("begin");
    // (begun now, but claiming r1 as the file's base)
    let e = stale
        .open_file("trunk/a", Some(1))
        .map(|_| ())
        .and_then(|_| {
            send(&mut stale, "trunk/a", None, b"x\n");
            publish(stale, &mut *w).map(drop)
        });
    seen.push(format!(
        "stale: {}",
        e.map_or_else(|e| e.to_string(), |_| "ok".into())
    ));
    // A commit applied, then dropped (a pre-commit hook said no): nothing of it remains.
    let mut c = begin(&repo, "dropped");
    c.add("trunk/gone", NodeKind::File, None, false)
        .expect("add");
    send(&mut c, "trunk/gone", None, b"never\n");
    let prepared = c.prepare(&mut *w, DATE).expect("prepare");
    assert_eq!(prepared.rev(), 3);
    prepared.abort().expect("abort");
    assert_eq!(w.youngest(), 2);
    assert_eq!(repo.refresh().expect("refresh"), 2);
    // r3: a delete, a replace by a copy, a property removed, a new file.
    let mut c = begin(&repo, "r3");
    c.delete("branch/sub", Some(2)).expect("delete");
    c.delete("trunk/sub/b", Some(2)).expect("delete");
    c.add(
        "trunk/sub/b",
        NodeKind::File,
        Some(("trunk/a".into(), 2)),
        false,
    )
    .expect("replace");
    c.check_dir_current("trunk", 2).expect("current");
    c.change_prop("trunk", b"svn:ignore", None).expect("prop");
    c.add("trunk/empty", NodeKind::File, None, false)
        .expect("add");
    send(&mut c, "trunk/empty", None, b"");
    assert_eq!(publish(c, w).expect("r3"), 3);
    // Locks: alice locks trunk/a; a commit without the token is refused, with it accepted.
    let targets = [LockTarget {
        path: "trunk/a".into(),
        current_rev: None,
    }];
    let lock = locks::lock_many_with(
        &*repo,
        None,
        "alice",
        Some("mine"),
        false,
        DATE,
        None,
        &targets,
        &[None],
        |f| f(&mut *w),
    )
    .expect("lock")
    .single()
    .expect("locked");
    seen.push(format!(
        "lock: {} {} {}",
        lock.path, lock.token, lock.created
    ));
    let changed = [("trunk/a".to_string(), false)];
    let refused = locks::check_commit(&*repo, &changed, Some("alice"), &[]);
    seen.push(format!(
        "no token: {}",
        refused.map_or_else(|e| e.to_string(), |_| "ok".into())
    ));
    let tokens = [("trunk/a".to_string(), lock.token.clone())];
    locks::check_commit(&*repo, &changed, Some("alice"), &tokens).expect("with the token");
    seen.push(format!(
        "locks: {:?}",
        locks::get_locks(&*repo, "", None).expect("locks")
    ));
    let unlocked = locks::unlock_many_with(
        &*repo,
        None,
        Some("alice"),
        false,
        &[UnlockTarget {
            path: "trunk/a".into(),
            token: Some(lock.token.clone()),
        }],
        |f| f(&mut *w),
    )
    .expect("unlock");
    unlocked.single().expect("unlocked");
    assert!(locks::get_lock(&*repo, "trunk/a").expect("read").is_none());
    // A revision property changed, atomically: the second change expects the old value.
    let hooks_dir = tempfile::tempdir().expect("tempdir");
    let hooks = svelto_repos::Hooks::new(hooks_dir.path(), None).expect("hooks");
    let change = |value: &'static [u8], expected: Option<Option<&'static [u8]>>| RevpropChange {
        rev: 1,
        name: "svn:log",
        value: Some(value),
        expected,
        user: Some("alice"),
        readable: None,
    };
    change_rev_prop_with(
        &*repo,
        &hooks,
        &change(b"first", None),
        HookUse::NONE,
        |f| f(&mut *w),
    )
    .expect("revprop");
    let stale = change_rev_prop_with(
        &*repo,
        &hooks,
        &change(b"second", Some(Some(b"r1"))),
        HookUse::NONE,
        |f| f(&mut *w),
    );
    seen.push(format!(
        "stale revprop: {}",
        stale.map_or_else(|e| e.to_string(), |_| "ok".into())
    ));
    assert_eq!(
        repo.revprops(1)
            .expect("revprops")
            .get(&b"svn:log"[..])
            .map(Vec::as_slice),
        Some(&b"first"[..])
    );
    // The writer gives its lock back; another may take it.
    w.unlock().expect("unlock the writer");
    assert!(w.relock().expect("relock"), "nobody wrote meanwhile");
    seen
}

/// The same script through svelto-repos leaves the same repository on both backends:
/// equal dumps, `log -v`, listings and contract reports, and the same refusals.
#[test]
fn commits_locks_and_revprops_give_the_same_repository_on_both_backends() {
    let uuid = "00000000-0000-4000-8000-00000000abcd";
    let mut results = Vec::new();
    for backend in BACKENDS {
        let t = TestRepo::create(backend, uuid, DATE);
        t.set_env(Arc::new(FixedEnv::new("2026-03-02T00:00:00.000000Z")));
        let seen = script(&t);
        let repo = &*t.repo;
        repo.refresh().expect("refresh");
        assert_eq!(repo.youngest(), 3, "{backend:?}");
        let report =
            svelto_fs::contract::check(repo).unwrap_or_else(|e| panic!("{backend:?}: {e}"));
        results.push((seen, report, dumped(repo), logged(repo), listed(repo, 3)));
    }
    let (local, memory) = (&results[0], &results[1]);
    assert!(local.0[0].contains("out of date"), "{:?}", local.0);
    assert!(
        local.0[2].contains("no matching lock-token"),
        "{:?}",
        local.0
    );
    assert!(local.0[4].contains("unexpected value"), "{:?}", local.0);
    assert_eq!(local.0, memory.0, "what the checks saw");
    assert_eq!(local.1, memory.1, "contract report");
    assert_eq!(
        String::from_utf8_lossy(&local.2),
        String::from_utf8_lossy(&memory.2),
        "dump"
    );
    assert_eq!(local.3, memory.3, "log -v");
    assert_eq!(local.4, memory.4, "list -R");
    assert!(
        local.4.iter().any(|l| l.starts_with("trunk/sub/b File r3")),
        "{:?}",
        local.4
    );
}

/// The in-memory backend's writer keeps the seam's rules itself: one writer at a time,
/// nothing published before `sync`, a dropped transaction leaves nothing, and a lock table
/// is changed only through a handle of the same repository.
#[test]
fn the_memory_writer_keeps_the_write_rules() {
    let t = TestRepo::create(
        Backend::Memory,
        "00000000-0000-4000-8000-000000000001",
        DATE,
    );
    let Some(mem) = t.repo.as_any().downcast_ref::<MemRepo>() else {
        panic!("a memory repository");
    };
    let mut w = mem.writer();
    assert!(mem.try_writer().is_none(), "one writer at a time");
    let mut txn = w.begin().expect("begin");
    txn.make_node("f", NodeKind::File).expect("add");
    txn.set_text("f", &mut &b"text"[..]).expect("text");
    drop(txn);
    assert_eq!(w.youngest(), 0, "a dropped transaction commits nothing");
    let mut txn = w.begin().expect("begin");
    txn.make_node("d", NodeKind::Dir).expect("add");
    assert!(matches!(
        txn.make_node("d", NodeKind::File),
        Err(svelto_fs::StoreError::AlreadyExists(_))
    ));
    assert!(matches!(
        txn.make_node("nope/x", NodeKind::File),
        Err(svelto_fs::StoreError::TxnPathNotFound { .. })
    ));
    assert_eq!(txn.commit().expect("commit"), 1);
    assert_eq!(mem.refresh().expect("refresh"), 0, "unpublished until sync");
    assert!(w.unlock().is_err(), "unpublished revisions keep the lock");
    assert_eq!(w.sync().expect("sync"), 1);
    assert_eq!(mem.refresh().expect("refresh"), 1);
    let other = MemRepo::create("00000000-0000-4000-8000-000000000002", PropList::new());
    assert!(
        w.set_locks(Default::default(), &other).is_err(),
        "another repository's handle"
    );
    w.unlock().expect("unlock");
    let mut second = mem.try_writer().expect("free once unlocked");
    let mut txn = second.begin().expect("begin");
    txn.make_node("e", NodeKind::Dir).expect("add");
    txn.commit().expect("commit");
    second.sync().expect("sync");
    drop(second);
    assert!(
        !w.relock().expect("relock"),
        "another writer published meanwhile: stale"
    );
    svelto_fs::contract::check(mem).expect("contract");
}

/// `svelto_repos::load` of `dump` into a new repository on `backend`, once per options
/// of `loads`: what it printed, and the repository.
fn loaded(
    backend: Backend,
    dump: &[u8],
    loads: &[svelto_repos::LoadOptions],
) -> (String, TestRepo) {
    let t = TestRepo::create(backend, "00000000-0000-4000-8000-000000000009", DATE);
    let mut printed = String::new();
    for opts in loads {
        let mut w = t.writer();
        let youngest = svelto_repos::load(&mut *w, dump, opts.clone(), &mut |text| {
            printed.push_str(text)
        })
        .unwrap_or_else(|e| panic!("{backend:?}: load: {e}"));
        drop(w);
        t.repo.refresh().expect("refresh");
        assert_eq!(t.repo.youngest(), youngest, "{backend:?}");
    }
    (printed, t)
}

#[test]
fn a_dump_loads_the_same_into_every_backend() {
    let mut files = Vec::new();
    for name in svelto_testkit::SMALL_SCENARIOS {
        files.push(format!("{name}.dump"));
        let deltas = format!("{name}.deltas.dump");
        if svelto_testkit::fixtures_dir().join(&deltas).is_file() {
            files.push(deltas);
        }
    }
    let range = |lo, hi| svelto_repos::LoadOptions {
        range: Some((lo, hi)),
        ..svelto_repos::LoadOptions::default()
    };
    // The whole history at once; in two parts (the second skips what the first loaded
    // and keeps the UUID the first took).
    let ways = [
        vec![svelto_repos::LoadOptions::default()],
        vec![range(0, 2), range(3, Revnum::MAX)],
    ];
    for file in &files {
        let dump = std::fs::read(svelto_testkit::fixture(file)).expect("fixture");
        let mut by_way = Vec::new();
        for loads in &ways {
            let [(local_out, local), (mem_out, mem)] = BACKENDS.map(|b| loaded(b, &dump, loads));
            assert_eq!(mem_out, local_out, "{file}: what the load printed");
            assert!(
                local_out.contains("------- Committed revision 1 >>>"),
                "{file}"
            );
            {
                assert_eq!(
                    local.repo.uuid().expect("uuid"),
                    mem.repo.uuid().expect("uuid"),
                    "{file}"
                );
                assert_ne!(
                    local.repo.uuid().expect("uuid"),
                    "00000000-0000-4000-8000-000000000009",
                    "{file}: a load into revision 0 takes the dump's UUID"
                );
            }
            let on_disk = svelto_fs::contract::check(&*local.repo)
                .unwrap_or_else(|e| panic!("{file}: local: {e}"));
            let in_memory = svelto_fs::contract::check(&*mem.repo)
                .unwrap_or_else(|e| panic!("{file}: memory: {e}"));
            // The texts: the local engine keeps equal contents once (its dedup index), the
            // in-memory writer once per write; both are within the contract.
            assert_eq!(
                (on_disk.revisions, on_disk.nodes),
                (in_memory.revisions, in_memory.nodes),
                "{file}"
            );
            let out = dumped(&*local.repo);
            assert_eq!(dumped(&*mem.repo), out, "{file}: dump");
            by_way.push(out);
            assert_eq!(logged(&*mem.repo), logged(&*local.repo), "{file}: log -v");
        }
        assert_eq!(by_way[0], by_way[1], "{file}: in one load or two");
    }
}

#[test]
fn a_load_refused_midway_leaves_the_same_revisions_on_every_backend() {
    // Revision 3 of the dump names a copy source that does not exist: revisions 1 and 2
    // stay loaded (and durable), nothing of 3 does, on either backend.
    let dump = std::fs::read(svelto_testkit::scenario_dump("copies")).expect("fixture");
    let text = String::from_utf8_lossy(&dump);
    let at = text
        .find("Node-copyfrom-path: ")
        .expect("the copies fixture has a copy");
    let mut bad = dump.clone();
    let path_at = at + "Node-copyfrom-path: ".len();
    bad[path_at] = b'Z';
    let rev_at = text[..at]
        .rfind("Revision-number: ")
        .expect("a revision before the copy");
    let rev_of_copy: Revnum = text[rev_at + "Revision-number: ".len()..]
        .lines()
        .next()
        .and_then(|n| n.parse().ok())
        .expect("a revision number");
    let mut dumps = Vec::new();
    for backend in BACKENDS {
        let t = TestRepo::create(backend, "00000000-0000-4000-8000-000000000009", DATE);
        let mut w = t.writer();
        let err = svelto_repos::load(&mut *w, &bad[..], Default::default(), &mut |_| {})
            .expect_err("a copy from nowhere is refused");
        drop(w);
        assert!(
            err.to_string().contains(&format!("{rev_of_copy}")),
            "{backend:?}: the error names the revision: {err}"
        );
        t.repo.refresh().expect("refresh");
        assert_eq!(t.repo.youngest(), rev_of_copy - 1, "{backend:?}");
        dumps.push(dumped(&*t.repo));
    }
    assert_eq!(dumps[0], dumps[1]);
}
