//! Simulated crashes and failing disks during commits: the writer's file
//! operations go through svelto-testkit's `SimIo`, which fails or tears the Nth write,
//! truncation, fsync, rename or directory fsync, forgets the pending writes of a failed
//! fsync, and gives what a crash at any operation leaves on disk (each unsynced write kept,
//! torn or lost). Over thousands of seeded cases: no acknowledged revision (one whose
//! `sync` returned) is ever lost or changed, the image always opens, `verify` accepts it,
//! and a new writer commits on it. A writer whose write or fsync failed refuses everything
//! after (never retries), and a new writer carries on. The same for `load`: every revision
//! it reported as committed survives, and each image is a prefix of the fault-free load.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::sync::Arc;
use svelto_core::{NodeKind, Revnum};
use svelto_store::{Repo, Txn, Writer};
use svelto_testkit::simio::{Fault, Rng, SimIo};

type Tree = BTreeMap<String, Vec<u8>>;

const FILES: [&str; 6] = ["a", "b", "d/c", "d/e", "d/f/g", "h"];

fn copy_dir(src: &Path, dst: &Path) {
    fs::create_dir_all(dst).expect("mkdir");
    for e in fs::read_dir(src).expect("read_dir") {
        let e = e.expect("entry");
        let to = dst.join(e.file_name());
        if e.file_type().expect("type").is_dir() {
            copy_dir(&e.path(), &to);
        } else {
            fs::copy(e.path(), to).expect("copy");
        }
    }
}

/// Contents that share most bytes with the last version (so that deltas are stored).
fn contents(rng: &mut Rng, old: Option<&Vec<u8>>) -> Vec<u8> {
    let mut v = old.cloned().unwrap_or_default();
    match rng.below(4) {
        0 => v = (0..rng.below(3000)).map(|_| rng.next_u64() as u8).collect(),
        1 => v.extend((0..rng.below(200)).map(|_| b'a' + (rng.below(26) as u8))),
        _ => {
            let n = rng.below(64) as usize;
            v.truncate(v.len().saturating_sub(n));
            v.extend_from_slice(format!("line {}\n", rng.next_u64()).as_bytes());
        }
    }
    v
}

/// One commit of random edits against `tree`; the tree it makes when it succeeds.
fn commit(w: &mut Writer, tree: &Tree, rng: &mut Rng) -> svelto_store::Result<(Revnum, Tree)> {
    let mut next = tree.clone();
    let mut txn = Txn::begin(w)?;
    for _ in 0..=rng.below(3) {
        let path = FILES[rng.below(FILES.len() as u64) as usize];
        if next.contains_key(path) && rng.below(4) == 0 {
            txn.delete(path)?;
            next.remove(path);
            continue;
        }
        let mut dir = String::new();
        for comp in path
            .split('/')
            .collect::<Vec<_>>()
            .split_last()
            .map_or(&[][..], |s| s.1)
        {
            dir = if dir.is_empty() {
                comp.to_string()
            } else {
                format!("{dir}/{comp}")
            };
            if txn.kind(&dir)?.is_none() {
                txn.make_node(&dir, NodeKind::Dir)?;
            }
        }
        if !next.contains_key(path) {
            txn.make_node(path, NodeKind::File)?;
        }
        let text = contents(rng, next.get(path));
        txn.set_text(path, &mut &text[..])?;
        next.insert(path.to_string(), text);
    }
    let rev = txn.commit()?;
    Ok((rev, next))
}

fn tree_of(repo: &Repo, rev: Revnum) -> Tree {
    let mut out = Tree::new();
    for path in FILES {
        if let Some((_, node)) = repo.lookup(rev, path).expect("lookup") {
            let text = node.text.expect("a file");
            out.insert(
                path.to_string(),
                repo.read_text(&text).expect("text").to_vec(),
            );
        }
    }
    out
}

/// What one case did: the trees of the revisions the writers made, and each revision
/// acknowledged (its `sync` returned) with the number of operations done by then.
struct Run {
    trees: Vec<Tree>,
    acks: Vec<(u64, Revnum)>,
    faults_seen: usize,
}

impl Run {
    /// The youngest revision acknowledged before the crash at operation `at`.
    fn acked_before(&self, at: u64) -> Revnum {
        self.acks
            .iter()
            .filter(|(ops, _)| *ops <= at)
            .map(|(_, rev)| *rev)
            .max()
            .unwrap_or(0)
    }
}

fn run_case(repo: &Path, sim: &SimIo, rng: &mut Rng, commits: usize) -> Run {
    let io: Arc<dyn svelto_store::io::StoreIo> = Arc::new(sim.clone());
    let mut run = Run {
        trees: vec![Tree::new()],
        acks: Vec::new(),
        faults_seen: 0,
    };
    let mut writer: Option<Writer> = None;
    for _ in 0..commits {
        let w = match writer.as_mut() {
            Some(w) => w,
            None => match Writer::open_with(repo, io.clone()) {
                Ok(w) => {
                    // A new writer starts from what db/current publishes.
                    run.trees.truncate(w.youngest() as usize + 1);
                    writer.insert(w)
                }
                Err(_) => {
                    run.faults_seen += 1;
                    continue;
                }
            },
        };
        let base = run.trees.last().expect("r0").clone();
        let outcome = commit(w, &base, rng).and_then(|(rev, tree)| {
            run.trees.push(tree);
            w.sync().map(|published| (rev, published))
        });
        match outcome {
            Ok((rev, published)) => {
                assert_eq!(rev, published);
                run.acks.push((sim.ops(), rev));
            }
            Err(e) => {
                run.faults_seen += 1;
                // Failed once, the writer refuses everything after: no retried fsync.
                assert!(w.sync().is_err(), "a failed writer synced again after: {e}");
                assert!(
                    Txn::begin(w).is_err(),
                    "a failed writer began a commit: {e}"
                );
                // What the server's writer slot asks before reusing a kept writer.
                assert!(
                    !w.relock().expect("relock"),
                    "a failed writer is reused: {e}"
                );
                writer = None;
            }
        }
    }
    run
}

/// Copies the repository at `live` to `dst` as the crash left it: `db/`'s files from the
/// crash image, the rest as they are.
fn write_image(live: &Path, dst: &Path, sim: &SimIo) {
    copy_dir(live, dst);
    let image = sim.crash_image();
    for e in fs::read_dir(dst.join("db")).expect("read_dir").flatten() {
        let name = live.join("db").join(e.file_name());
        if e.file_type().expect("type").is_file() && e.file_name() != "write.lock" {
            match image.get(&name) {
                Some(bytes) => fs::write(e.path(), bytes).expect("write"),
                None => fs::remove_file(e.path()).expect("remove"),
            }
        }
    }
}

fn check_image(live: &Path, dst: &Path, sim: &SimIo, run: &Run, crash_at: u64, reopen: bool) {
    write_image(live, dst, sim);
    let repo = Repo::open(dst).unwrap_or_else(|e| panic!("crash image does not open: {e}"));
    let y = repo.youngest();
    let acked = run.acked_before(crash_at);
    assert!(y >= acked, "acknowledged r{acked} lost: image has r{y}");
    for rev in 0..=y {
        let tree = run
            .trees
            .get(rev as usize)
            .expect("a revision nobody committed");
        assert_eq!(
            &tree_of(&repo, rev),
            tree,
            "r{rev} differs from what was committed"
        );
    }
    svelto_repos::verify(&repo, 0, y, &mut |_| {})
        .unwrap_or_else(|e| panic!("verify refuses the crash image: {e}"));
    if reopen {
        let mut w = Writer::open(dst).expect("writer on the crash image");
        let mut rng = Rng::new(y);
        let (rev, _) = commit(&mut w, &run.trees[y as usize], &mut rng).expect("commit");
        assert_eq!(w.sync().expect("sync"), rev);
        assert_eq!(rev, y + 1);
    }
}

fn random_fault(rng: &mut Rng) -> Fault {
    match rng.below(2) {
        0 => Fault::Fail,
        _ => Fault::Tear,
    }
}

/// Cases run by default (the test profile); SVELTO_CRASH_CASES asks for more.
fn cases() -> u64 {
    std::env::var("SVELTO_CRASH_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5000)
}

#[test]
fn no_acknowledged_revision_is_lost_to_crashes_or_failing_io() {
    // Only the new writers on crash images fsync for real: on tmpfs where there is one.
    let dir = svelto_testkit::tempdir();
    let template = dir.path().join("template");
    svelto_repos::create(
        &svelto_store::LocalBackend,
        &template,
        "00000000-0000-4000-8000-000000000000",
        "2026-01-01T00:00:00.000000Z",
    )
    .expect("create");
    let (mut faults, mut lost_writers, mut crash_revs) = (0u64, 0usize, 0u64);
    let n = cases();
    for case in 0..n {
        let mut rng = Rng::new(case);
        let live = dir.path().join(format!("live{case}"));
        let dst = dir.path().join(format!("crashed{case}"));
        copy_dir(&template, &live);
        let sim = SimIo::new(&live.join("db"), case).expect("sim");
        // About 13 operations per commit: crash and fault anywhere in six commits.
        let crash_at = rng.below(90);
        sim.crash_at(crash_at);
        if rng.below(4) != 0 {
            sim.fail_at(rng.below(90), random_fault(&mut rng));
            faults += 1;
        }
        let run = run_case(&live, &sim, &mut rng, 6);
        lost_writers += run.faults_seen;
        check_image(&live, &dst, &sim, &run, crash_at, case % 16 == 0);
        crash_revs += run.acked_before(crash_at);
        fs::remove_dir_all(&live).expect("rm");
        fs::remove_dir_all(&dst).expect("rm");
    }
    eprintln!(
        "{n} crash images checked; {faults} with an injected fault, {lost_writers} failed \
         writers reopened, {crash_revs} acknowledged revisions in all"
    );
    assert!(faults > n / 2 && lost_writers as u64 > n / 4);
}

/// `svelto admin load` under crashes and failing I/O: the revisions whose progress line
/// ("committed new rev N", printed once they are durable) was given survive, every image
/// is a prefix of the history (its dump equals the fault-free load's), and verifies.
#[test]
fn loads_keep_every_reported_revision_through_crashes_and_failing_io() {
    let dir = svelto_testkit::tempdir();
    let dump = fs::read(svelto_testkit::scenario_dump("mixed")).expect("fixture");
    let create = |path: &Path| {
        svelto_repos::create(
            &svelto_store::LocalBackend,
            path,
            "00000000-0000-4000-8000-000000000000",
            "2026-01-01T00:00:00.000000Z",
        )
        .expect("create")
    };
    let template = dir.path().join("template");
    create(&template);
    let reference = dir.path().join("reference");
    copy_dir(&template, &reference);
    let opts = svelto_repos::LoadOptions::default();
    let mut w = svelto_store::Writer::open(&reference).expect("writer");
    svelto_repos::load(&mut w, &dump[..], opts.clone(), &mut |_| {}).expect("load");
    drop(w);
    let reference = Repo::open(&reference).expect("open");
    let dump_to = |repo: &Repo, end: Revnum| {
        let mut out = Vec::new();
        let o = svelto_repos::DumpOptions {
            start: 0,
            end,
            incremental: false,
            deltas: false,
            filter: None,
        };
        svelto_repos::dump(repo, &mut out, o, &mut |_| {}).expect("dump");
        out
    };
    // How many file operations a whole load makes: crashes and faults fall anywhere in it.
    let ops = {
        let live = dir.path().join("count");
        copy_dir(&template, &live);
        let sim = SimIo::new(&live.join("db"), 0).expect("sim");
        let io: Arc<dyn svelto_store::io::StoreIo> = Arc::new(sim.clone());
        let mut w = svelto_store::Writer::open_with(&live, io).expect("writer");
        svelto_repos::load(&mut w, &dump[..], opts.clone(), &mut |_| {}).expect("load");
        sim.ops()
    };
    let cases = (cases() / 5).max(50);
    let (mut faults, mut reported, mut kept) = (0, 0, 0);
    for case in 0..cases {
        let mut rng = Rng::new(case ^ 0x10ad);
        let live = dir.path().join(format!("live{case}"));
        let dst = dir.path().join(format!("crashed{case}"));
        copy_dir(&template, &live);
        let sim = SimIo::new(&live.join("db"), case).expect("sim");
        // A small load is one batch: a third of the crashes fall in its final sync, a
        // third after it, a third anywhere.
        let crash_at = match rng.below(3) {
            0 => ops.saturating_sub(12) + rng.below(12),
            1 => ops,
            _ => rng.below(ops),
        };
        sim.crash_at(crash_at);
        if rng.below(2) != 0 {
            sim.fail_at(rng.below(ops), random_fault(&mut rng));
            faults += 1;
        }
        let mut acks = Vec::new();
        let io: Arc<dyn svelto_store::io::StoreIo> = Arc::new(sim.clone());
        let mut progress = |text: &str| {
            for line in text.lines() {
                if let Some(n) = line
                    .strip_prefix("------- Committed revision ")
                    .or_else(|| line.strip_prefix("------- Committed new rev "))
                    .and_then(|r| r.split_whitespace().next())
                    .and_then(|n| n.parse::<Revnum>().ok())
                {
                    acks.push((sim.ops(), n));
                }
            }
        };
        // Opening the writer makes file operations too: a fault may fall in it.
        let loaded = svelto_store::Writer::open_with(&live, io)
            .map_err(svelto_repos::ReposError::from)
            .and_then(|mut w| svelto_repos::load(&mut w, &dump[..], opts.clone(), &mut progress));
        if loaded.is_ok() {
            assert_eq!(
                acks.last().map(|a| a.1),
                Some(reference.youngest()),
                "a load that succeeded reported every revision"
            );
        }
        let acked = acks
            .iter()
            .filter(|(ops, _)| *ops <= crash_at)
            .map(|a| a.1)
            .max();
        reported += acks.len();
        write_image(&live, &dst, &sim);
        let repo = Repo::open(&dst).unwrap_or_else(|e| panic!("crash image does not open: {e}"));
        let y = repo.youngest();
        kept += usize::from(y > 0);
        assert!(
            y >= acked.unwrap_or(0),
            "reported r{acked:?} lost: image has r{y}"
        );
        // Before r1 is durable, r0 may or may not have the dump's UUID and revision
        // properties yet (they become durable with r1, or before it).
        if y > 0 {
            assert!(
                dump_to(&repo, y) == dump_to(&reference, y),
                "image is not a prefix"
            );
        }
        svelto_repos::verify(&repo, 0, y, &mut |_| {})
            .unwrap_or_else(|e| panic!("verify refuses the crash image: {e}"));
        fs::remove_dir_all(&live).expect("rm");
        fs::remove_dir_all(&dst).expect("rm");
    }
    eprintln!(
        "{cases} crashed loads of {ops} file operations checked; {faults} with an injected fault, {reported} \
         revisions reported, {kept} images holding loaded revisions"
    );
    assert!(reported > 0 && kept > 0 && kept < cases as usize);
}
