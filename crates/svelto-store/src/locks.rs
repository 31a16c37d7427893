//! The lock table: every lock of a repository in `db/locks` (docs/formats/store.md), read
//! by any handle without locking, replaced whole by a writer that holds the write lock
//! ([`crate::Repo::set_locks`]), beside revision properties. Each handle keeps the table of
//! the last version of the file it parsed: a request checking one path (HTTP checks each
//! PUT, DELETE, PROPPATCH) does not parse every lock again. What a lock means (tokens,
//! owners, expiry, hooks) is `svelto-repos`'s.

use crate::error::{io_err, Corruption, Result, StoreError};
use crate::io::StoreIo;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use svelto_core::Lock;

/// The lock table's file in `db/`.
pub(crate) const FILE: &str = "locks";
const HEADER: &str = "svelto-locks 1\n";
/// The most bytes of `db/locks` read (a corrupt length never sizes an allocation).
const MAX_FILE: u64 = 256 << 20;

pub use svelto_fs::LockTable;

/// Which version of `db/locks` a table was parsed from: the file's device, inode, length
/// and modification time (every write replaces the file by a rename, so a new version is a
/// new inode); None when there is no file.
type Version = Option<(u64, u64, u64, i64, i64)>;

/// A handle's last parsed table and its version.
#[derive(Default)]
pub(crate) struct Cache(Mutex<Option<(Version, Arc<LockTable>)>>);

impl Cache {
    /// The table of `db`'s `db/locks` now: the kept one while the file is the same.
    pub(crate) fn get(&self, db: &Path) -> Result<Arc<LockTable>> {
        let at = version(db)?;
        let kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, table)) = kept.as_ref().filter(|(v, _)| *v == at) {
            return Ok(table.clone());
        }
        drop(kept);
        // Read after the version was taken: a file replaced in between is parsed again on
        // the next read, whose version differs.
        let table = Arc::new(match at {
            None => LockTable::default(),
            Some(_) => read(db)?,
        });
        self.put(at, table.clone());
        Ok(table)
    }

    fn put(&self, at: Version, table: Arc<LockTable>) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some((at, table));
    }

    /// Keeps `table`, just written to `db`, as its version now.
    pub(crate) fn written(&self, db: &Path, table: Arc<LockTable>) -> Result<()> {
        self.put(version(db)?, table);
        Ok(())
    }
}

fn version(db: &Path) -> Result<Version> {
    use std::os::unix::fs::MetadataExt;
    let file = db.join(FILE);
    match std::fs::metadata(&file) {
        Ok(m) => Ok(Some((m.dev(), m.ino(), m.len(), m.mtime(), m.mtime_nsec()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_err(format!("reading {}", file.display()))(e)),
    }
}

/// Reads and parses `db/locks` (an empty table when the file does not exist).
pub(crate) fn read(db: &Path) -> Result<LockTable> {
    use std::io::Read;
    let file = db.join(FILE);
    let bytes = match std::fs::File::open(&file) {
        Ok(f) => {
            let mut b = Vec::new();
            f.take(MAX_FILE)
                .read_to_end(&mut b)
                .map_err(io_err(format!("reading {}", file.display())))?;
            b
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(LockTable::default()),
        Err(e) => return Err(io_err(format!("reading {}", file.display()))(e)),
    };
    parse(&bytes)
        .map(LockTable::new)
        .map_err(|(offset, what)| StoreError::Corrupt {
            file: FILE,
            offset,
            what,
        })
}

/// Parses the bytes of `db/locks`; a failure names the offset where the file stops making
/// sense.
pub(crate) fn parse(
    bytes: &[u8],
) -> std::result::Result<BTreeMap<String, Lock>, (u64, Corruption)> {
    let bad = |at: usize, why: &str| (at as u64, Corruption::new(format!("lock table: {why}")));
    let text = std::str::from_utf8(bytes).map_err(|e| bad(e.valid_up_to(), "not UTF-8"))?;
    let mut rest = text
        .strip_prefix(HEADER)
        .ok_or_else(|| bad(0, "no 'svelto-locks 1' header"))?;
    let at = |rest: &str| text.len() - rest.len();
    let field = |rest: &mut &str| -> std::result::Result<Option<String>, (u64, Corruption)> {
        if let Some(r) = rest.strip_prefix("-\n") {
            *rest = r;
            return Ok(None);
        }
        let colon = rest
            .find(':')
            .ok_or_else(|| bad(at(rest), "a field without a length"))?;
        let len: usize = rest[..colon]
            .parse()
            .map_err(|_| bad(at(rest), "a field with a bad length"))?;
        let body = rest
            .get(colon + 1..colon + 1 + len)
            .ok_or_else(|| bad(at(rest), "a field longer than the file"))?;
        let after = &rest[colon + 1 + len..];
        *rest = after
            .strip_prefix('\n')
            .ok_or_else(|| bad(at(after), "a field not ended by a newline"))?;
        Ok(Some(body.to_string()))
    };
    let mut out = BTreeMap::new();
    while !rest.is_empty() {
        let start = at(rest);
        let need = |f: Option<String>| f.ok_or_else(|| bad(start, "a required field is missing"));
        let path = need(field(&mut rest)?)?;
        let lock = Lock {
            path: path.clone(),
            token: need(field(&mut rest)?)?,
            owner: need(field(&mut rest)?)?,
            comment: field(&mut rest)?,
            created: need(field(&mut rest)?)?,
            expires: field(&mut rest)?,
        };
        out.insert(path, lock);
    }
    Ok(out)
}

fn put(out: &mut String, field: Option<&str>) {
    match field {
        None => out.push_str("-\n"),
        Some(f) => {
            out.push_str(&f.len().to_string());
            out.push(':');
            out.push_str(f);
            out.push('\n');
        }
    }
}

/// `db/locks` holding `locks`.
pub(crate) fn encode(locks: &BTreeMap<String, Lock>) -> String {
    let mut s = String::from(HEADER);
    for l in locks.values() {
        put(&mut s, Some(&l.path));
        put(&mut s, Some(&l.token));
        put(&mut s, Some(&l.owner));
        put(&mut s, l.comment.as_deref());
        put(&mut s, Some(&l.created));
        put(&mut s, l.expires.as_deref());
    }
    s
}

/// Replaces `db/locks` whole (temporary file, fsync, rename, fsync of `db/`) through `io`.
pub(crate) fn write(io: &dyn StoreIo, db: &Path, locks: &BTreeMap<String, Lock>) -> Result<()> {
    crate::files::write_atomically_with(io, db, FILE, encode(locks).as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lock(p: &str, comment: Option<&str>) -> Lock {
        Lock {
            path: p.to_string(),
            token: format!("opaquelocktoken:{p}"),
            owner: "alice".into(),
            comment: comment.map(str::to_string),
            created: "2026-01-01T00:00:00.000000Z".into(),
            expires: None,
        }
    }

    #[test]
    fn the_table_round_trips_and_garbage_is_refused_where_it_starts() {
        let mut m = BTreeMap::new();
        for (p, c) in [("a b/c", Some("multi\nline: comment")), ("d", None)] {
            m.insert(p.to_string(), lock(p, c));
        }
        let text = encode(&m);
        assert_eq!(parse(text.as_bytes()), Ok(m.clone()));
        assert_eq!(parse(HEADER.as_bytes()), Ok(BTreeMap::new()));
        let (at, what) = parse(b"svelto-locks 1\n99999:x\n").expect_err("garbage");
        assert_eq!(at, 15);
        assert!(what.0.contains("longer than the file"), "{what}");
        let (at, _) = parse(b"svelto-locks 2\n").expect_err("version");
        assert_eq!(at, 0);
        let cut = &text.as_bytes()[..text.len() - 2];
        assert!(parse(cut).is_err());
        assert!(!LockTable::new(m.clone()).any_expiring());
        m.get_mut("d").expect("d").expires = Some("2030-01-01T00:00:00.000000Z".into());
        assert!(LockTable::new(m).any_expiring());
    }
}
