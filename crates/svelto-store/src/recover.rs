//! Rebuilding the commit point: `db/current` from the files it publishes
//! (`svelto admin recover`, as `svnadmin recover` rebuilds FSFS's `db/current`).
//!
//! Every length `db/current` gives follows from the records themselves
//! (docs/formats/store.md, "db/current"): the youngest revision is the last intact
//! `db/revs` record, `db/data` ends where its root NODE record ends, `db/meta` where the
//! later of its META record and the newest revision-property change's ends, and
//! `db/revprops` and `db/dedup` hold the intact records that point inside those. A line
//! rebuilt so is checked as any `db/current` is (`Repo::check_current`); where the newest
//! revision record does not hold up (a commit cut short), the one before it is tried.

use std::fs::File;
use std::path::Path;

use crate::enc::FRAME_OVERHEAD;
use crate::error::{io_err, Result, StoreError};
use crate::files::{
    self, le_u32, le_u64, read_exact_at, read_record, Current, RevRecord, StoreFile, Which,
    DEDUP_RECORD, REVPROPS_RECORD, REV_RECORD,
};
use crate::repo::Repo;
use crate::writer::Writer;
use crate::{TAG_NODE, TAG_REVISION};

/// What `db/current` was when recovery looked at it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// It agreed with the files: left as it was.
    Agrees,
    /// There was none.
    Missing,
    /// It did not parse, or disagreed with the files: why.
    Damaged(String),
}

/// What [`recover_current`] found and what `db/current` now says.
#[derive(Debug, Clone)]
pub struct Recovered {
    pub found: Found,
    pub current: Current,
    /// Each file of `db/` (its name, in `Current::lens`' order) and how many bytes it holds
    /// past its committed length: what an unfinished commit left, which the next writer cuts.
    pub past: [(&'static str, u64); 5],
}

impl Recovered {
    /// What recovery found beyond "all agreed", one line each (none when `db/current`
    /// agreed with the files and nothing lay past it).
    pub fn report(&self) -> Vec<String> {
        let c = &self.current;
        let mut lines = match &self.found {
            Found::Agrees => Vec::new(),
            Found::Missing => vec![format!(
                "db/current was missing; rebuilt from the files: youngest revision {}.",
                c.youngest
            )],
            Found::Damaged(why) => vec![
                format!("db/current did not hold up ({why});"),
                format!("rebuilt from the files: youngest revision {}.", c.youngest),
            ],
        };
        for (&(name, past), committed) in self.past.iter().zip(c.lens) {
            if past > 0 {
                lines.push(format!(
                    "db/{name} has {past} bytes past its committed length {committed} (left by a \
                     commit that did not finish): cut now."
                ));
            }
        }
        lines
    }
}

/// Takes the write lock of the repository at `path` (waiting for it when `wait`, else
/// `Ok(None)` while another writer holds it), and rebuilds `db/current` from the files
/// when it is missing or does not agree with them. The lock is released on return: the
/// next writer (`Writer::open`) cuts what lies past the committed lengths.
pub fn recover_current(path: &Path, wait: bool) -> Result<Option<Recovered>> {
    let db = path.join("db");
    let (lock, lock_path) = Writer::lock_file(&db)?;
    if wait {
        lock.lock()
            .map_err(io_err(format!("locking {}", lock_path.display())))?;
    } else {
        match lock.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => return Ok(None),
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(io_err(format!("locking {}", lock_path.display()))(e))
            }
        }
    }
    let found = match files::read_current(&db) {
        Ok(_) => match Repo::open(path) {
            Ok(repo) => {
                let current = repo.current();
                let past = past(&db, &current)?;
                return Ok(Some(Recovered {
                    found: Found::Agrees,
                    current,
                    past,
                }));
            }
            Err(e @ StoreError::Corrupt { .. }) => Found::Damaged(e.to_string()),
            Err(e) => return Err(e),
        },
        Err(StoreError::Io { err, .. }) if err.kind() == std::io::ErrorKind::NotFound => {
            Found::Missing
        }
        Err(e @ StoreError::Corrupt { .. }) => Found::Damaged(e.to_string()),
        Err(e) => return Err(e),
    };
    let current = rebuild(path)?;
    files::write_current(&db, &current)?;
    let past = past(&db, &current)?;
    drop(lock);
    Ok(Some(Recovered {
        found,
        current,
        past,
    }))
}

fn past(db: &Path, cur: &Current) -> Result<[(&'static str, u64); 5]> {
    let mut past = [("", 0); 5];
    for (i, w) in Which::ALL.into_iter().enumerate() {
        let p = db.join(w.name());
        let size = std::fs::metadata(&p)
            .map_err(io_err(format!("reading the size of {}", p.display())))?
            .len();
        past[i] = (w.name(), size.saturating_sub(cur.len(w)));
    }
    Ok(past)
}

/// The newest `db/current` line the files support, checked as `Repo::open` checks one.
fn rebuild(path: &Path) -> Result<Current> {
    let db = path.join("db");
    let open = |w: Which| -> Result<(StoreFile, u64)> {
        let f: File = files::open_read(&db, w)?;
        let size = f
            .metadata()
            .map_err(io_err(format!("reading the size of db/{}", w.name())))?
            .len();
        Ok((StoreFile::new(f), size))
    };
    let files = [
        open(Which::Data)?,
        open(Which::Revs)?,
        open(Which::Meta)?,
        open(Which::Dedup)?,
        open(Which::Revprops)?,
    ];
    let revs_size = files[Which::Revs as usize].1;
    let records = revs_size.saturating_sub(16) / REV_RECORD;
    let mut last_error = None;
    for youngest in (0..records).rev() {
        let Some(cur) = candidate(&files, youngest)? else {
            continue;
        };
        match Repo::open_as(path, cur) {
            Ok(_) => return Ok(cur),
            Err(e @ StoreError::Corrupt { .. }) => last_error = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last_error.unwrap_or_else(|| StoreError::Corrupt {
        file: "revs",
        offset: 16,
        what: crate::Corruption::new(
            "no intact revision record whose root node and META record hold up: \
             db/current cannot be rebuilt",
        ),
    }))
}

/// The `db/current` line that would make `youngest` the youngest revision, or None when
/// its records are not intact.
fn candidate(files: &[(StoreFile, u64); 5], youngest: u64) -> Result<Option<Current>> {
    let file = |w: Which| &files[w as usize].0;
    let size = |w: Which| files[w as usize].1;
    let at = 16 + REV_RECORD * youngest;
    let b = read_exact_at(file(Which::Revs), Which::Revs, at, REV_RECORD as usize)?;
    let Ok(rec) = RevRecord::decode(&b) else {
        return Ok(None);
    };
    let Some(data_len) = record_end(file(Which::Data), Which::Data, rec.root, TAG_NODE)? else {
        return Ok(None);
    };
    if data_len > size(Which::Data) {
        return Ok(None);
    }
    let meta_record = |off: u64, len: u32| -> Result<bool> {
        let end = record_end(file(Which::Meta), Which::Meta, off, TAG_REVISION)?;
        Ok(end == Some(off + u64::from(len)))
    };
    if !meta_record(rec.meta_offset, rec.meta_len)? {
        return Ok(None);
    }
    let mut meta_len = rec.meta_offset + u64::from(rec.meta_len);

    // Revision-property changes: every intact record naming a revision up to `youngest`
    // whose META record holds up, up to the first that does not.
    let mut revprops_len = 16;
    while revprops_len + REVPROPS_RECORD <= size(Which::Revprops) {
        let b = read_exact_at(file(Which::Revprops), Which::Revprops, revprops_len, 24)?;
        if crc32fast::hash(&b[..20]) != le_u32(&b[20..]) {
            break;
        }
        let (rev, off, len) = (le_u64(&b), le_u64(&b[8..]), le_u32(&b[16..]));
        if rev > youngest || !meta_record(off, len)? {
            break;
        }
        meta_len = meta_len.max(off + u64::from(len));
        revprops_len += REVPROPS_RECORD;
    }

    // Known texts and property lists: the intact records pointing inside the data.
    let mut dedup_len = 16;
    const CHUNK: u64 = DEDUP_RECORD * 4096;
    'scan: while dedup_len + DEDUP_RECORD <= size(Which::Dedup) {
        let n = (size(Which::Dedup) - dedup_len).min(CHUNK) / DEDUP_RECORD * DEDUP_RECORD;
        let b = read_exact_at(file(Which::Dedup), Which::Dedup, dedup_len, n as usize)?;
        for r in b.chunks_exact(DEDUP_RECORD as usize) {
            let target = le_u64(&r[45..]);
            if crc32fast::hash(&r[..53]) != le_u32(&r[53..]) || target < 16 || target >= data_len {
                break 'scan;
            }
            dedup_len += DEDUP_RECORD;
        }
    }
    Ok(Some(Current {
        youngest,
        lens: [data_len, at + REV_RECORD, meta_len, dedup_len, revprops_len],
    }))
}

/// Where the record of tag `tag` at `off` ends, or None when there is no intact one.
fn record_end(f: &StoreFile, w: Which, off: u64, tag: u8) -> Result<Option<u64>> {
    let limit = f
        .size()
        .map_err(io_err(format!("reading the size of db/{}", w.name())))?;
    match read_record(f, w, off, limit) {
        Ok((t, payload)) if t == tag => Ok(Some(off + (payload.len() + FRAME_OVERHEAD) as u64)),
        Ok(_) | Err(StoreError::Corrupt { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

// The tests wait for the write lock (`wait`): a process another test of this binary forks
// (fincore, files.rs) holds a copy of a just-closed writer's locked descriptor until it
// execs, and a try would then find the lock taken (seen once under load).
#[cfg(test)]
mod tests {
    use super::*;
    use crate::{create_db, Txn};
    use svelto_core::{NodeKind, PropList};

    /// A repository with `revs` revisions, each adding a file, all published.
    fn committed(dir: &Path, revs: u64) -> Current {
        create_db(
            dir,
            "c0ffee00-0000-4000-8000-000000000000",
            &PropList::new(),
        )
        .expect("create");
        let mut w = Writer::open(dir).expect("writer");
        for i in 0..revs {
            let mut t = Txn::begin(&mut w).expect("begin");
            let path = format!("f{i}");
            t.make_node(&path, NodeKind::File).expect("add");
            t.set_text(&path, &mut format!("text {i}\n").as_bytes())
                .expect("text");
            t.commit().expect("commit");
        }
        w.sync().expect("sync");
        Repo::open(dir).expect("open").current()
    }

    fn append(path: &Path, bytes: &[u8]) {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .expect("open");
        f.write_all(bytes).expect("append");
    }

    #[test]
    fn a_missing_or_damaged_current_is_rebuilt_from_the_files() {
        let d = tempfile::tempdir().expect("tempdir");
        let expected = committed(d.path(), 3);
        let db = d.path().join("db");
        let current = db.join("current");
        std::fs::remove_file(&current).expect("rm");
        let r = recover_current(d.path(), true)
            .expect("recover")
            .expect("lock");
        assert_eq!(r.found, Found::Missing);
        assert_eq!(r.current, expected);
        assert!(r.past.iter().all(|(_, n)| *n == 0), "{:?}", r.past);
        assert_eq!(Repo::open(d.path()).expect("open").youngest(), 3);

        // What svnadmin_tests 13 writes over FSFS's db/current, and a checked line one
        // revision short.
        let mut short = expected;
        short.youngest = 2;
        short.lens[Which::Revs as usize] -= REV_RECORD;
        for bad in [
            "2\n".to_string(),
            "fish\n".into(),
            String::new(),
            short.render(),
        ] {
            std::fs::write(&current, &bad).expect("write");
            let r = recover_current(d.path(), true)
                .expect("recover")
                .expect("lock");
            assert!(
                matches!(r.found, Found::Damaged(_)),
                "{bad:?}: {:?}",
                r.found
            );
            assert_eq!(r.current, expected, "{bad:?}");
        }
        let r = recover_current(d.path(), true)
            .expect("recover")
            .expect("lock");
        assert_eq!(r.found, Found::Agrees);
    }

    #[test]
    fn a_torn_tail_is_left_past_the_rebuilt_current() {
        let d = tempfile::tempdir().expect("tempdir");
        let expected = committed(d.path(), 2);
        let db = d.path().join("db");
        // A commit cut short: half a revision record, a partial record in data and dedup.
        append(&db.join("revs"), &[7; 30]);
        append(&db.join("data"), &[1; 100]);
        append(&db.join("dedup"), &[2; 61]);
        std::fs::remove_file(db.join("current")).expect("rm");
        let r = recover_current(d.path(), true)
            .expect("recover")
            .expect("lock");
        assert_eq!(r.current, expected);
        let past: Vec<u64> = r.past.iter().map(|(_, n)| *n).collect();
        assert_eq!(past, [100, 30, 0, 61, 0]);
        // The next writer cuts the tail and carries on.
        let mut w = Writer::open(d.path()).expect("writer");
        let mut t = Txn::begin(&mut w).expect("begin");
        t.make_node("after", NodeKind::Dir).expect("add");
        assert_eq!(t.commit().expect("commit"), 3);
        w.sync().expect("sync");
        assert_eq!(Repo::open(d.path()).expect("open").youngest(), 3);
    }

    #[test]
    fn a_repository_without_records_is_refused_by_name() {
        let d = tempfile::tempdir().expect("tempdir");
        committed(d.path(), 1);
        let db = d.path().join("db");
        std::fs::write(db.join("revs"), crate::files::REVS_HEADER).expect("truncate");
        std::fs::remove_file(db.join("current")).expect("rm");
        let e = recover_current(d.path(), true).expect_err("refused");
        assert!(e.to_string().contains("cannot be rebuilt"), "{e}");
        assert!(!db.join("current").exists());
    }
}
