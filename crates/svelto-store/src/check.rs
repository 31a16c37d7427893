//! Consistency of the commit point: `db/current` against the records it publishes.
//!
//! `db/current` carries its own checksum, and on top of it every length it gives must agree
//! with the records of the youngest revision (docs/formats/store.md, "db/current"). A
//! repository whose `db/current` fails these checks is refused by readers and writers alike:
//! a writer trusting a shortened length would truncate committed revisions.

use crate::enc::FRAME_OVERHEAD;
use crate::error::{Corruption, Result, StoreError};
use crate::files::{
    le_u32, le_u64, read_exact_at, read_record, Current, Which, DEDUP_RECORD, REVPROPS_RECORD,
    REV_RECORD,
};
use crate::repo::{Repo, RevRecord};
use crate::{TAG_NODE, TAG_REVISION};

/// A disagreement between `db/current` and the files, named as such.
fn mismatch(cur: &Current, what: String) -> StoreError {
    StoreError::Corrupt {
        file: "current",
        offset: 0,
        what: Corruption::new(format!(
            "{what} (db/current: youngest r{}, lengths data {} revs {} meta {} dedup {} \
             revprops {}); writers are refused until it is repaired",
            cur.youngest, cur.lens[0], cur.lens[1], cur.lens[2], cur.lens[3], cur.lens[4]
        )),
    }
}

/// Names `db/current` in a corruption found while following what it says.
fn following(cur: &Current, what: &str, e: StoreError) -> StoreError {
    match e {
        StoreError::Corrupt {
            file,
            offset,
            what: w,
        } => mismatch(cur, format!("{what}: db/{file} at offset {offset}: {w}")),
        e => e,
    }
}

impl Repo {
    /// Checks that `cur` agrees with the files: each file holds at least its committed
    /// length, `db/revs` holds exactly `youngest + 1` records, the fixed-size files hold whole
    /// records, the youngest revision's root node ends `db/data`, its META record (or the
    /// newest revision-property change's) ends `db/meta`, and the newest records of
    /// `db/revprops` and `db/dedup` are intact and point inside the committed files.
    pub(crate) fn check_current(&self, cur: &Current) -> Result<()> {
        for w in Which::ALL {
            let len = cur.len(w);
            if len < 16 {
                let what = format!("db/{} length {len} is shorter than its header", w.name());
                return Err(mismatch(cur, what));
            }
            let actual = self
                .file(w)
                .metadata()
                .map_err(crate::error::io_err(format!(
                    "reading the size of db/{}",
                    w.name()
                )))?
                .len();
            if actual < len {
                let what = format!(
                    "db/{} is {actual} bytes but {len} are said to be committed",
                    w.name()
                );
                return Err(mismatch(cur, what));
            }
        }
        let revs = cur.len(Which::Revs);
        let expected = cur
            .youngest
            .checked_add(1)
            .and_then(|n| n.checked_mul(REV_RECORD))
            .and_then(|n| n.checked_add(16));
        if expected != Some(revs) {
            let what = format!(
                "db/revs length {revs} holds {} revision records and {} odd bytes, not the {} \
                 of revisions 0 to {}",
                (revs - 16) / REV_RECORD,
                (revs - 16) % REV_RECORD,
                cur.youngest as u128 + 1,
                cur.youngest
            );
            return Err(mismatch(cur, what));
        }
        for (w, size) in [
            (Which::Dedup, DEDUP_RECORD),
            (Which::Revprops, REVPROPS_RECORD),
        ] {
            let len = cur.len(w);
            if !(len - 16).is_multiple_of(size) {
                let what = format!(
                    "db/{} length {len} is not a whole number of {size}-byte records",
                    w.name()
                );
                return Err(mismatch(cur, what));
            }
        }

        let y = cur.youngest;
        let off = revs - REV_RECORD;
        let b = read_exact_at(
            self.file(Which::Revs),
            Which::Revs,
            off,
            REV_RECORD as usize,
        )?;
        let rec = RevRecord::decode(&b).map_err(|what| {
            following(
                cur,
                &format!("r{y}'s record"),
                Repo::corrupt(Which::Revs, off, what),
            )
        })?;

        let data = cur.len(Which::Data);
        let (tag, payload) = read_record(self.file(Which::Data), Which::Data, rec.root, data)
            .map_err(|e| following(cur, &format!("r{y}'s root node"), e))?;
        if tag != TAG_NODE {
            let what = format!(
                "r{y}'s root at db/data offset {} is a record of tag {tag}",
                rec.root
            );
            return Err(mismatch(cur, what));
        }
        let root_end = rec.root + (payload.len() + FRAME_OVERHEAD) as u64;
        if root_end != data {
            let what = format!(
                "db/data's committed length {data} is not where r{y}'s root node ends ({root_end})"
            );
            return Err(mismatch(cur, what));
        }

        let meta = cur.len(Which::Meta);
        let meta_end = |off: u64, len: u32, whose: &str| -> Result<u64> {
            let (tag, payload) = read_record(self.file(Which::Meta), Which::Meta, off, meta)
                .map_err(|e| following(cur, whose, e))?;
            if tag != TAG_REVISION || payload.len() + FRAME_OVERHEAD != len as usize {
                let what =
                    format!("{whose} at db/meta offset {off} is not a {len}-byte REVISION record");
                return Err(mismatch(cur, what));
            }
            Ok(off + u64::from(len))
        };
        let mut end = meta_end(
            rec.meta_offset,
            rec.meta_len,
            &format!("r{y}'s META record"),
        )?;

        let rp = cur.len(Which::Revprops);
        if rp > 16 {
            let at = rp - REVPROPS_RECORD;
            let b = read_exact_at(self.file(Which::Revprops), Which::Revprops, at, 24)?;
            if crc32fast::hash(&b[..20]) != le_u32(&b[20..]) {
                let what = format!("the last db/revprops record (offset {at}) has a bad CRC");
                return Err(mismatch(cur, what));
            }
            let (rev, off, len) = (le_u64(&b), le_u64(&b[8..]), le_u32(&b[16..]));
            if rev > y {
                let what = format!("the last db/revprops record names r{rev}, after r{y}");
                return Err(mismatch(cur, what));
            }
            let whose = format!("r{rev}'s changed revision properties");
            end = end.max(meta_end(off, len, &whose)?);
        }
        if end != meta {
            let what = format!(
                "db/meta's committed length {meta} is not where its newest record ends ({end})"
            );
            return Err(mismatch(cur, what));
        }

        let dd = cur.len(Which::Dedup);
        if dd > 16 {
            let at = dd - DEDUP_RECORD;
            let b = read_exact_at(self.file(Which::Dedup), Which::Dedup, at, 61)?;
            if crc32fast::hash(&b[..53]) != le_u32(&b[53..]) {
                let what = format!("the last db/dedup record (offset {at}) has a bad CRC");
                return Err(mismatch(cur, what));
            }
            let target = le_u64(&b[45..]);
            if target < 16 || target >= data {
                let what = format!(
                    "the last db/dedup record points at db/data offset {target}, outside the \
                     committed {data} bytes"
                );
                return Err(mismatch(cur, what));
            }
        }
        Ok(())
    }
}
