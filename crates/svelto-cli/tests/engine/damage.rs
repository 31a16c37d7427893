//! Damaged repository files: every flipped bit of `db/current` is noticed before anything
//! is served or written, and no committed revision is lost to it.

use std::fs;
use std::path::{Path, PathBuf};
use svelto_repos::{DumpOptions, LoadOptions};
use svelto_store::{Repo, Writer};

const FILES: [&str; 5] = ["data", "revs", "meta", "dedup", "revprops"];

/// A repository with history, a revision property changed after its commit (so that
/// `db/revprops` has a record) and its dump, to compare with after the damage.
pub fn loaded_repo(dir: &Path) -> (PathBuf, Vec<u8>) {
    let repo = dir.join("repo");
    svelto_repos::create(
        &svelto_store::LocalBackend,
        &repo,
        "00000000-0000-4000-8000-000000000000",
        "2026-01-01T00:00:00.000000Z",
    )
    .expect("create");
    let dump = fs::read(svelto_testkit::scenario_dump("mixed")).expect("fixture");
    let mut w = Writer::open(&repo).expect("writer");
    svelto_repos::load(&mut w, &dump[..], LoadOptions::default(), &mut |_| {}).expect("load");
    let mut props = w.repo().revprops(1).expect("revprops");
    props.insert(b"svn:log".to_vec(), b"changed later".to_vec());
    w.set_revprops(1, props).expect("set revprops");
    w.sync().expect("sync");
    drop(w);
    let out = dump_of(&repo);
    (repo, out)
}

pub fn dump_of(path: &Path) -> Vec<u8> {
    let repo = Repo::open(path).expect("open");
    let opts = DumpOptions {
        start: 0,
        end: repo.youngest(),
        incremental: false,
        deltas: false,
        filter: None,
    };
    let mut out = Vec::new();
    svelto_repos::dump(&repo, &mut out, opts, &mut |_| {}).expect("dump");
    svelto_repos::verify(&repo, 0, repo.youngest(), &mut |_| {}).expect("verify");
    out
}

fn files_of(repo: &Path) -> Vec<Vec<u8>> {
    FILES
        .iter()
        .map(|f| fs::read(repo.join("db").join(f)).expect("read"))
        .collect()
}

/// Flips every bit of `db/current` in turn: opening for reading (what `verify`, `dump` and
/// the server do) fails naming db/current, opening a writer fails the same way, and the
/// other files are left exactly as they were.
fn every_flip_is_refused(repo: &Path, current: &[u8]) -> usize {
    let path = repo.join("db/current");
    let before = files_of(repo);
    let mut flips = 0;
    for i in 0..current.len() {
        for bit in 0..8 {
            let mut damaged = current.to_vec();
            damaged[i] ^= 1 << bit;
            fs::write(&path, &damaged).expect("write");
            let what = format!(
                "bit {bit} of byte {i} flipped: {:?}",
                String::from_utf8_lossy(&damaged)
            );
            let err = match Repo::open(repo) {
                Ok(_) => panic!("{what}: the repository opened"),
                Err(e) => e.to_string(),
            };
            assert!(err.contains("current"), "{what}: {err}");
            let err = match Writer::open(repo) {
                Ok(_) => panic!("{what}: a writer opened"),
                Err(e) => e.to_string(),
            };
            assert!(err.contains("current"), "{what}: {err}");
            assert!(files_of(repo) == before, "{what}: a file changed");
            flips += 1;
        }
    }
    fs::write(&path, current).expect("restore");
    flips
}

#[test]
fn every_flipped_bit_of_current_is_refused_and_loses_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (repo, dump) = loaded_repo(dir.path());
    let current = fs::read(repo.join("db/current")).expect("current");
    assert!(
        String::from_utf8_lossy(&current).contains(" crc="),
        "db/current carries its checksum"
    );
    let flips = every_flip_is_refused(&repo, &current);
    assert_eq!(
        dump_of(&repo),
        dump,
        "the restored repository has every revision"
    );

    // The form written before the checksum existed: still read, and every flip of it is
    // caught by the lengths' agreement with the records alone.
    let text = String::from_utf8(current.clone()).expect("ascii");
    let legacy = format!("{}\n", text.split(" crc=").next().expect("numbers"));
    fs::write(repo.join("db/current"), &legacy).expect("write");
    assert_eq!(dump_of(&repo), dump, "the old form opens");
    let flips = flips + every_flip_is_refused(&repo, legacy.as_bytes());
    assert!(flips > 500, "{flips} flips");

    // The next commit writes the checked form and keeps every revision.
    let mut w = Writer::open(&repo).expect("writer");
    let youngest = w.youngest();
    let mut props = w.repo().revprops(youngest).expect("revprops");
    props.insert(b"svn:log".to_vec(), b"again".to_vec());
    w.set_revprops(youngest, props).expect("set");
    w.sync().expect("sync");
    drop(w);
    let now = fs::read_to_string(repo.join("db/current")).expect("current");
    assert!(now.contains(" crc="), "{now}");
    let r = Repo::open(&repo).expect("open");
    assert_eq!(r.youngest(), youngest);
    svelto_repos::verify(&r, 0, youngest, &mut |_| {}).expect("verify");
}

/// A writer kept open between commits (the server's) notices a damaged `db/current` when it
/// takes the lock again, and neither publishes over it nor truncates to it.
#[test]
fn a_kept_writer_refuses_a_damaged_current() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (repo, dump) = loaded_repo(dir.path());
    let path = repo.join("db/current");
    let current = fs::read_to_string(&path).expect("current");
    let mut w = Writer::open(&repo).expect("writer");
    w.unlock().expect("unlock");
    // A shortened data length with a checksum that matches it: only the agreement with the
    // records can tell.
    let mut fields: Vec<u64> = current
        .split(" crc=")
        .next()
        .expect("numbers")
        .split(' ')
        .map(|f| f.parse().expect("number"))
        .collect();
    fields[1] -= 100;
    let cur = svelto_store::Current {
        youngest: fields[0],
        lens: [fields[1], fields[2], fields[3], fields[4], fields[5]],
    };
    fs::write(&path, cur.render()).expect("write");
    let before = files_of(&repo);
    assert!(!w.relock().expect("relock"), "the kept writer is stale");
    let err = w
        .discard_unpublished()
        .expect_err("discard refused")
        .to_string();
    assert!(err.contains("db/current"), "{err}");
    drop(w);
    let err = match Writer::open(&repo) {
        Ok(_) => panic!("a writer opened"),
        Err(e) => e.to_string(),
    };
    assert!(
        err.contains("current") && err.contains("root node"),
        "{err}"
    );
    let err = match Repo::open(&repo) {
        Ok(_) => panic!("the repository opened"),
        Err(e) => e.to_string(),
    };
    assert!(err.contains("current"), "{err}");
    assert!(files_of(&repo) == before, "a file changed");
    fs::write(&path, current).expect("restore");
    assert_eq!(dump_of(&repo), dump);
}

/// What `svelto admin verify` runs: open, then verify the whole history.
fn verify_all(repo: &Path) -> Result<(), String> {
    let r = Repo::open(repo).map_err(|e| e.to_string())?;
    svelto_repos::verify(&r, 0, r.youngest(), &mut |_| {}).map_err(|e| e.to_string())
}

/// Damages every byte of `file` in turn (one bit of each, the bit moving along), and
/// checks that verify reports each one, naming `names` in its error.
fn every_damaged_byte_is_reported(repo: &Path, file: &str, names: &str, stride: usize) -> usize {
    let path = repo.join(file);
    let original = fs::read(&path).expect("read");
    for i in (0..original.len()).step_by(stride) {
        let mut damaged = original.clone();
        damaged[i] ^= 1 << (i % 8);
        fs::write(&path, &damaged).expect("write");
        let result = verify_all(repo);
        fs::write(&path, &original).expect("restore");
        let err = result.err().unwrap_or_else(|| {
            panic!("bit {} of byte {i} of {file} flipped: verify passed", i % 8)
        });
        assert!(
            err.contains(names),
            "byte {i} of {file}: the error does not name {names}: {err}"
        );
    }
    original.len() / stride
}

/// Every byte of the files outside the revision records is checked by verify: the
/// deduplication index (whose damage would otherwise fail every later commit), the UUID,
/// both format files and the revision-property index; `db/locks` is checked for syntax.
#[test]
fn verify_reads_every_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (repo, dump) = loaded_repo(dir.path());
    let uuid = fs::read_to_string(repo.join("db/uuid")).expect("uuid");
    assert!(uuid.contains(" crc="), "{uuid}");
    let mut checked = 0;
    for (file, names, stride) in [
        ("db/dedup", "dedup", 1),
        ("db/uuid", "uuid", 1),
        ("format", "format", 1),
        ("db/format", "format", 1),
        ("db/revprops", "revprops", 1),
        ("db/revs", "revs", 1),
        // Every record of these is read by the scan; a sample of bytes keeps the test short.
        ("db/data", "data", 23),
        ("db/meta", "meta", 7),
    ] {
        checked += every_damaged_byte_is_reported(&repo, file, names, stride);
    }
    assert!(checked > 1000, "{checked} bytes");

    // Locks: a file that does not parse is reported.
    let locks = repo.join("db/locks");
    let entry = |len: &str| {
        format!("svelto-locks 1\n3:a/b\n{len}:opaquelocktoken:1\n7:jrandom\n-\n27:2026-01-01T00:00:00.000000Z\n-\n")
    };
    fs::write(&locks, entry("17")).expect("locks");
    verify_all(&repo).expect("a valid lock file verifies");
    for bad in [
        entry("18"),
        entry("17").replace("svelto-locks 1", "svelto-locks 2"),
        entry("17")[..40].to_string(),
    ] {
        fs::write(&locks, &bad).expect("locks");
        let err = verify_all(&repo).expect_err("verify passed");
        assert!(err.contains("lock"), "{err}");
    }
    fs::remove_file(&locks).expect("rm");

    // Everything restored: a commit still works and every revision is there.
    assert_eq!(dump_of(&repo), dump);
    let mut w = Writer::open(&repo).expect("writer");
    let mut props = w.repo().revprops(2).expect("revprops");
    props.insert(b"svn:log".to_vec(), b"after".to_vec());
    w.set_revprops(2, props).expect("set");
    w.sync().expect("sync");
    drop(w);
    verify_all(&repo).expect("verify");
}

/// A repository whose `db/uuid` predates its checksum is read, and the next writer adds it.
#[test]
fn an_old_uuid_gets_its_checksum() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (repo, _) = loaded_repo(dir.path());
    let path = repo.join("db/uuid");
    fs::write(&path, "00000000-0000-4000-8000-000000000000\n").expect("write");
    verify_all(&repo).expect("verify");
    drop(Writer::open(&repo).expect("writer"));
    let now = fs::read_to_string(&path).expect("read");
    assert!(
        now.starts_with("00000000-0000-4000-8000-000000000000 crc="),
        "{now}"
    );
    fs::write(&path, "not a uuid\n").expect("write");
    let err = verify_all(&repo).expect_err("verify passed");
    assert!(err.contains("uuid"), "{err}");
}

/// Appends a CRC-framed record (docs/formats/store.md) to `db/NAME`; returns its offset.
fn append_record(repo: &Path, name: &str, tag: u8, payload: &[u8]) -> u64 {
    let mut rec = vec![tag];
    rec.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    rec.extend_from_slice(payload);
    let crc = crc32fast::hash(&rec);
    rec.extend_from_slice(&crc.to_le_bytes());
    append(repo, name, &rec)
}

fn append(repo: &Path, name: &str, bytes: &[u8]) -> u64 {
    let path = repo.join("db").join(name);
    let mut all = fs::read(&path).expect("read");
    let at = all.len() as u64;
    all.extend_from_slice(bytes);
    fs::write(&path, all).expect("write");
    at
}

/// Commits a revision by hand whose tree is the youngest one's and whose change list is
/// `changes`, with every checksum right: damage only the format's rules can see.
fn commit_changes(repo: &Path, changes: Vec<svelto_store::Change>) {
    let r = Repo::open(repo).expect("open");
    let y = r.youngest();
    let last = r.rev_record(y).expect("record");
    let cur = r.current();
    drop(r);
    // The root node record ends db/data: a copy of it is the new revision's root.
    let data = fs::read(repo.join("db/data")).expect("data");
    let root = append(repo, "data", &data[last.root as usize..]);
    let mut meta = Vec::new();
    svelto_store::Codec::encode(
        &svelto_store::RevMeta::new(Default::default(), changes),
        &mut meta,
    );
    let meta_len = (meta.len() + 9) as u32;
    let meta_offset = append_record(repo, "meta", 6, &meta);
    let rec = svelto_store::RevRecord {
        root,
        meta_offset,
        meta_len,
        ..last
    };
    append(repo, "revs", &rec.encode());
    let mut lens = cur.lens;
    for (i, name) in FILES.iter().enumerate() {
        lens[i] = fs::metadata(repo.join("db").join(name))
            .expect("stat")
            .len();
    }
    let next = svelto_store::Current {
        youngest: y + 1,
        lens,
    };
    fs::write(repo.join("db/current"), next.render()).expect("current");
}

/// A change list out of order (a directory changed twice, a child before its parent, a
/// path with an empty component) makes `dump` fail naming the revision, never panic or loop.
#[test]
fn a_damaged_change_list_fails_the_dump_cleanly() {
    let change = |path: &str, change, kind| svelto_store::Change {
        path: path.into(),
        change,
        kind: Some(kind),
        text_mod: false,
        prop_mod: true,
        copyfrom: None,
        node: svelto_store::NodeRevId::NONE,
    };
    use svelto_core::{ChangeKind::*, NodeKind::*};
    let lists = [
        vec![change("trunk", Modify, Dir), change("trunk", Modify, Dir)],
        vec![change("trunk/a", Add, Dir), change("trunk", Modify, Dir)],
        vec![change("trunk//x", Modify, File)],
        vec![
            change("trunk/", Modify, Dir),
            change("trunk/x", Modify, File),
        ],
    ];
    for changes in lists {
        let dir = tempfile::tempdir().expect("tempdir");
        let (repo, _) = loaded_repo(dir.path());
        commit_changes(&repo, changes.clone());
        let r = Repo::open(&repo).expect("open");
        let opts = DumpOptions {
            start: r.youngest(),
            end: r.youngest(),
            incremental: true,
            deltas: false,
            filter: None,
        };
        let err = svelto_repos::dump(&r, &mut std::io::sink(), opts, &mut |_| {})
            .expect_err("damaged change list dumped");
        let msg = err.to_string();
        assert!(
            msg.contains(&format!("revision {}", r.youngest())),
            "{changes:?}: {msg}"
        );
    }
}
