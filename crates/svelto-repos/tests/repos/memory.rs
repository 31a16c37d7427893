//! Subversion's semantics over the in-memory backend (`svelto_testkit::memfs::MemRepo`,
//! written against the storage seam alone): every small fixture, loaded with the local
//! engine and copied into memory, keeps the seam's contract on both backends, and dump,
//! `log -v`, `list -R` and location segments give the same answers over both.

use svelto_core::{Depth, Revnum};
use svelto_repos::list::list;
use svelto_repos::{dump, location_segments, log, DumpOptions, LogOptions, Segment};
use svelto_store::ReadRepo;
use svelto_testkit::memfs::MemRepo;

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
        let mem = MemRepo::copy_of(&local).expect("copy into memory");
        let on_disk = svelto_fs::contract::check(&local).unwrap_or_else(|e| panic!("{name}: {e}"));
        let in_memory =
            svelto_fs::contract::check(&mem).unwrap_or_else(|e| panic!("{name}: memory: {e}"));
        assert_eq!(on_disk, in_memory, "{name}");
        assert_eq!(mem.youngest(), local.youngest(), "{name}");
        assert_eq!(dumped(&mem), dumped(&local), "{name}: dump");
        assert_eq!(logged(&mem), logged(&local), "{name}: log -v");
        let y = local.youngest();
        assert_eq!(listed(&mem, y), listed(&local, y), "{name}: list -R");
        // Every path of the youngest tree: where it came from.
        let mut paths = Vec::new();
        list(&local, "", y, Depth::Infinity, None, None, &mut |p, _| {
            paths.push(p.to_string());
            Ok(())
        })
        .expect("list");
        for p in paths {
            assert_eq!(
                segments(&mem, &p, y),
                segments(&local, &p, y),
                "{name}: {p}"
            );
        }
    }
}
