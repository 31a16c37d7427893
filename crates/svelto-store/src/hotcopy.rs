//! A consistent copy of a live repository's `db/` (docs/formats/store.md, "Hot copies"),
//! and holding a repository's writes (`freeze`).
//!
//! Readers never lock, and the bytes `db/current` names never change once published; so a
//! copy reads `db/current` once, copies each append-only file up to the length it names,
//! then the small files, and writes the copy's `db/current` last. A commit published while
//! the copy runs is past those lengths: it is not in the copy at all, never half.

use crate::error::{io_err, Corruption, Result, StoreError};
use crate::files::{self, Current, Which};
use crate::repo::{Repo, FORMAT};
use crate::writer::Writer;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Seek, SeekFrom};
use std::path::{Path, PathBuf};

pub use svelto_fs::{DbCopy, HotcopyError};

/// How many bytes at the end of each file an incremental copy compares between source and
/// destination before appending to the destination.
const TAIL_CHECK: u64 = 4096;

/// Copies the `db/` of the repository at `src` into `dst/db` while commits go on. With
/// `incremental`, `dst` must hold an earlier copy (see [`is_repository`]): only what the
/// source gained since is copied. The destination's write lock is held throughout.
pub fn hotcopy_db(
    src: &Path,
    dst: &Path,
    incremental: bool,
) -> std::result::Result<DbCopy, HotcopyError> {
    let source = Repo::open(src)?;
    let src_db = source.db_path().to_path_buf();
    let dst_db = dst.join("db");
    fs::create_dir_all(&dst_db).map_err(io_err(format!("creating {}", dst_db.display())))?;
    let _lock = lock_writes(&dst_db)?;
    // The commit point of the copy: everything below these lengths is immutable.
    let cur = source.current();
    let uuid = source.uuid()?;

    let mut base = Current {
        youngest: 0,
        lens: [0; 5],
    };
    if incremental {
        let copy = Repo::open(dst)?;
        base = files::read_current(&dst_db)?;
        if copy.uuid()? != uuid {
            return Err(HotcopyError::UuidMismatch);
        }
        if base.youngest > cur.youngest {
            return Err(HotcopyError::DestinationAhead {
                src: cur.youngest,
                dst: base.youngest,
            });
        }
        for w in Which::ALL {
            check_same_prefix(&src_db, &dst_db, w, base.len(w), cur.len(w))?;
        }
    }

    let mut bytes = 0;
    for w in Which::ALL {
        bytes += copy_range(&src_db, &dst_db, w, base.len(w), cur.len(w))?;
    }
    // The revision-property changes the copy brings: the db/revprops records it appended
    // that name revisions it had.
    let mut revprop_changes = Vec::new();
    let (from, to) = (base.len(Which::Revprops), cur.len(Which::Revprops));
    if incremental && to > from {
        let f = files::StoreFile::new(files::open_read(&dst_db, Which::Revprops)?);
        let added = files::read_exact_at(&f, Which::Revprops, from, (to - from) as usize)?;
        revprop_changes = added
            .chunks_exact(files::REVPROPS_RECORD as usize)
            .map(|r| files::le_u64(&r[..8]))
            .filter(|&r| r <= base.youngest)
            .collect();
        revprop_changes.sort_unstable();
        revprop_changes.dedup();
    }
    files::write_atomically(&dst_db, "uuid", crate::uuid::render_uuid(&uuid).as_bytes())?;
    copy_locks(&src_db, &dst_db)?;
    let txns = dst_db.join("txns");
    fs::create_dir_all(&txns).map_err(io_err(format!("creating {}", txns.display())))?;
    files::write_atomically(&dst_db, "format", FORMAT.as_bytes())?;
    // Last: from here on the copy is a repository at the source's commit point.
    files::write_current(&dst_db, &cur)?;

    let first = if incremental { base.youngest + 1 } else { 0 };
    Ok(DbCopy {
        revisions: (first <= cur.youngest).then_some((first, cur.youngest)),
        youngest: cur.youngest,
        bytes,
        revprop_changes,
    })
}

/// Whether `path` holds a Svelto repository's `db/` (its `db/format` exists).
pub fn is_repository(path: &Path) -> bool {
    path.join("db").join("format").exists()
}

/// Holds the write lock of each repository in `paths`, taken in that order (waiting for
/// a commit in progress to finish), until dropped: commits, lock changes and revision
/// property changes wait; readers go on. What `svnadmin freeze` does.
pub struct Frozen {
    _locks: Vec<File>,
}

/// Takes the write locks of the repositories at `paths` (see [`Frozen`]).
pub fn freeze(paths: &[PathBuf]) -> Result<Frozen> {
    let mut locks = Vec::with_capacity(paths.len());
    for p in paths {
        let repo = Repo::open(p)?;
        locks.push(lock_writes(repo.db_path())?);
    }
    Ok(Frozen { _locks: locks })
}

/// Takes `db/write.lock`, as `Writer::open` does.
fn lock_writes(db: &Path) -> Result<File> {
    let (f, p) = Writer::lock_file(db)?;
    f.lock()
        .map_err(io_err(format!("locking {}", p.display())))?;
    Ok(f)
}

/// Refuses an incremental copy onto a destination whose file is not a prefix of the
/// source's: longer, or different in its last bytes.
fn check_same_prefix(
    src_db: &Path,
    dst_db: &Path,
    w: Which,
    dst_len: u64,
    src_len: u64,
) -> std::result::Result<(), HotcopyError> {
    let diverged = HotcopyError::Diverged { file: w.name() };
    if dst_len > src_len {
        return Err(diverged);
    }
    let from = dst_len.saturating_sub(TAIL_CHECK);
    let len = (dst_len - from) as usize;
    let a = files::read_exact_at(
        &files::StoreFile::new(files::open_read(src_db, w)?),
        w,
        from,
        len,
    )?;
    let b = files::read_exact_at(
        &files::StoreFile::new(files::open_read(dst_db, w)?),
        w,
        from,
        len,
    )?;
    if a != b {
        return Err(diverged);
    }
    Ok(())
}

/// Makes `dst_db/NAME` hold the first `to` bytes of `src_db/NAME`, of which its first
/// `from` bytes are already there (0 for a new file), and syncs it. Returns bytes copied.
fn copy_range(src_db: &Path, dst_db: &Path, w: Which, from: u64, to: u64) -> Result<u64> {
    let src = files::open_read(src_db, w)?;
    let have = src
        .metadata()
        .map_err(io_err(format!("reading db/{}", w.name())))?
        .len();
    if have < to {
        return Err(StoreError::Corrupt {
            file: w.name(),
            offset: have,
            what: Corruption::new(format!("file is shorter than its committed length {to}")),
        });
    }
    let path = dst_db.join(w.name());
    let ctx = || format!("writing {}", path.display());
    let mut dst = OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(from == 0)
        .open(&path)
        .map_err(io_err(ctx()))?;
    // Whatever lies past the copied length (an interrupted copy) goes.
    dst.set_len(from).map_err(io_err(ctx()))?;
    dst.seek(SeekFrom::Start(from)).map_err(io_err(ctx()))?;
    let mut src = src;
    src.seek(SeekFrom::Start(from))
        .map_err(io_err(format!("reading db/{}", w.name())))?;
    // A `File` limited by `take` lets the kernel copy (copy_file_range) where it can.
    let n = io::copy(&mut io::Read::take(&mut src, to - from), &mut dst).map_err(io_err(ctx()))?;
    if n != to - from {
        return Err(StoreError::Corrupt {
            file: w.name(),
            offset: from + n,
            what: Corruption::new(format!("file ends before its committed length {to}")),
        });
    }
    dst.sync_all().map_err(io_err(ctx()))?;
    Ok(n)
}

/// `db/locks` as the source has it now (replaced whole by its writers, so any moment's
/// version is complete), or none.
fn copy_locks(src_db: &Path, dst_db: &Path) -> Result<()> {
    let src = src_db.join("locks");
    match fs::read(&src) {
        Ok(bytes) => files::write_atomically(dst_db, "locks", &bytes),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            let dst = dst_db.join("locks");
            match fs::remove_file(&dst) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => {
                    Err(io_err(format!("removing {}", dst.display()))(e))
                }
                _ => files::sync_dir(dst_db),
            }
        }
        Err(e) => Err(io_err(format!("reading {}", src.display()))(e)),
    }
}
