//! Consistency of the commit point: `db/current` against the records it publishes.
//!
//! `db/current` carries its own checksum, and on top of it every length it gives must agree
//! with the records of the youngest revision (docs/formats/store.md, "db/current"). A
//! repository whose `db/current` fails these checks is refused by readers and writers alike:
//! a writer trusting a shortened length would truncate committed revisions.

use crate::enc::FRAME_OVERHEAD;
use crate::error::{Corruption, Result, StoreError};
use crate::files::{
    le_u32, le_u64, read_exact_at, read_record, Current, RevRecord, Which, DEDUP_RECORD,
    REVPROPS_RECORD, REV_RECORD,
};
use crate::repo::Repo;
use crate::uuid::parse_uuid;
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
            let actual = self.file(w).size().map_err(crate::error::io_err(format!(
                "reading the size of db/{}",
                w.name()
            )))?;
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

/// How much of `data` and `meta` is read at once by the record scan.
const SCAN_CHUNK: u64 = 8 << 20;

impl Repo {
    /// Checks every byte of the files of `db/` beside `data` and `meta`: `format`, `uuid`,
    /// `current` (checksum and agreement with the records), every record of `revs`,
    /// `dedup` and `revprops` (CRC, and what each points at). Errors name the file and
    /// offset. `verify_records` reads the rest.
    pub fn verify_files(&self) -> Result<()> {
        let db = self.db_path();
        let read = |name: &str| {
            let p = db.join(name);
            std::fs::read(&p).map_err(crate::error::io_err(format!("reading {}", p.display())))
        };
        let corrupt = |file: &'static str, offset: u64, what: String| StoreError::Corrupt {
            file,
            offset,
            what: Corruption::new(what),
        };
        if read("format")? != crate::repo::FORMAT.as_bytes() {
            let what = format!("db/format is not '{}'", crate::repo::FORMAT.trim_end());
            return Err(corrupt("format", 0, what));
        }
        let uuid = read("uuid")?;
        let uuid = String::from_utf8(uuid).map_err(|_| corrupt("uuid", 0, "not UTF-8".into()))?;
        parse_uuid(&uuid).map_err(|what| StoreError::Corrupt {
            file: "uuid",
            offset: 0,
            what,
        })?;
        let cur = self.current();
        let on_disk = crate::files::read_current(db)?;
        if on_disk.youngest < cur.youngest || on_disk.lens.iter().zip(cur.lens).any(|(a, b)| *a < b)
        {
            return Err(mismatch(
                &on_disk,
                "db/current went backwards while verifying".into(),
            ));
        }
        self.check_current(&cur)?;
        for w in Which::ALL {
            let head = read_exact_at(self.file(w), w, 0, 16)?;
            if head != w.header() {
                let what = "file header is not Svelto's (format 1)".to_string();
                return Err(corrupt(w.name(), 0, what));
            }
        }
        self.verify_revs(&cur)?;
        self.verify_revprops(&cur)?;
        self.verify_dedup(&cur, false)?;
        Ok(())
    }

    /// Reads every framed record of `data` and `meta` in file order (tag, length, CRC),
    /// whether a revision reaches it or not, and checks that each `dedup` record names
    /// the contents of the record it points at.
    pub fn verify_records(&self) -> Result<()> {
        let cur = self.current();
        self.verify_dedup(&cur, true)?;
        self.scan(Which::Data, &cur)?;
        self.scan(Which::Meta, &cur)
    }

    fn verify_revs(&self, cur: &Current) -> Result<()> {
        let len = cur.len(Which::Revs);
        let bytes = self.read_raw(Which::Revs, 16, (len - 16) as usize)?;
        let (mut last_root, mut last_meta) = (0, 0);
        for (i, b) in bytes.chunks_exact(REV_RECORD as usize).enumerate() {
            let at = 16 + i as u64 * REV_RECORD;
            let bad = |what: String| Repo::corrupt(Which::Revs, at, Corruption::new(what));
            let r = RevRecord::decode(b).map_err(|w| Repo::corrupt(Which::Revs, at, w))?;
            if b[20..24] != [0; 4] || b[40..44] != [0; 4] {
                return Err(bad(format!("r{i}: reserved bytes are not zero")));
            }
            if r.root <= last_root || r.root >= cur.len(Which::Data) {
                return Err(bad(format!(
                    "r{i}: root node offset {} out of order",
                    r.root
                )));
            }
            let meta_end = r.meta_offset.saturating_add(u64::from(r.meta_len));
            if r.meta_offset <= last_meta || meta_end > cur.len(Which::Meta) {
                let what = format!("r{i}: META record offset {} out of order", r.meta_offset);
                return Err(bad(what));
            }
            (last_root, last_meta) = (r.root, r.meta_offset);
        }
        Ok(())
    }

    fn verify_revprops(&self, cur: &Current) -> Result<()> {
        let len = cur.len(Which::Revprops);
        let bytes = self.read_raw(Which::Revprops, 16, (len - 16) as usize)?;
        for (at, rec) in
            crate::files::checked_records(Which::Revprops, 16, &bytes, REVPROPS_RECORD, 20)?
        {
            let (rev, off, n) = (le_u64(rec), le_u64(&rec[8..]), le_u32(&rec[16..]));
            let bad = |what: String| Repo::corrupt(Which::Revprops, at, Corruption::new(what));
            if rev > cur.youngest {
                return Err(bad(format!("names r{rev}, after the youngest")));
            }
            let (tag, payload) = read_record(
                self.file(Which::Meta),
                Which::Meta,
                off,
                cur.len(Which::Meta),
            )?;
            if tag != TAG_REVISION || payload.len() + FRAME_OVERHEAD != n as usize {
                return Err(bad(format!(
                    "db/meta offset {off} is not a {n}-byte REVISION record"
                )));
            }
            <crate::node::RevMeta as crate::node::Codec>::decode(&payload)
                .map_err(|w| Repo::corrupt(Which::Meta, off, w))?;
        }
        Ok(())
    }

    fn verify_dedup(&self, cur: &Current, targets: bool) -> Result<()> {
        let len = cur.len(Which::Dedup);
        let bytes = self.read_raw(Which::Dedup, 16, (len - 16) as usize)?;
        let data = cur.len(Which::Data);
        for (i, raw) in bytes.chunks_exact(DEDUP_RECORD as usize).enumerate() {
            let at = 16 + i as u64 * DEDUP_RECORD;
            let bad = |what: String| Repo::corrupt(Which::Dedup, at, Corruption::new(what));
            if crc32fast::hash(&raw[..53]) != le_u32(&raw[53..]) {
                return Err(bad("dedup record CRC mismatch".into()));
            }
            if raw[57..61] != [0; 4] {
                return Err(bad("reserved bytes are not zero".into()));
            }
            let (sha, md5) = (&raw[1..21], &raw[21..37]);
            let (size, off) = (le_u64(&raw[37..]), le_u64(&raw[45..]));
            if !matches!(raw[0], 1 | 2) || off < 16 || off >= data {
                return Err(bad(format!("kind {} offset {off}", raw[0])));
            }
            if !targets {
                continue;
            }
            match raw[0] {
                1 => {
                    let t = self.rep_trailer(off).map_err(|e| {
                        bad(format!(
                            "points at db/data offset {off}, not a representation: {e}"
                        ))
                    })?;
                    if t.sha1.0 != sha || t.md5.0 != md5 || t.size != size {
                        return Err(bad(format!(
                            "names other contents than the representation at {off}"
                        )));
                    }
                }
                2 => {
                    let (tag, payload) =
                        read_record(self.file(Which::Data), Which::Data, off, data)
                            .map_err(|e| bad(format!("points at db/data offset {off}: {e}")))?;
                    let digest: [u8; 20] = {
                        use sha1::Digest;
                        sha1::Sha1::digest(&payload).into()
                    };
                    if tag != crate::TAG_PROPS || payload.len() as u64 != size || digest != sha {
                        return Err(bad(format!(
                            "names another property list than the record at {off}"
                        )));
                    }
                }
                k => return Err(bad(format!("kind {k}"))),
            }
        }
        Ok(())
    }

    /// Reads `w` from its header to its committed length as consecutive framed records.
    fn scan(&self, w: Which, cur: &Current) -> Result<()> {
        let end = cur.len(w);
        let tags: &[u8] = match w {
            Which::Meta => &[TAG_REVISION],
            _ => &[
                crate::TAG_WINDOW,
                crate::TAG_REP,
                crate::TAG_PROPS,
                crate::TAG_DIR,
                TAG_NODE,
                crate::TAG_DIR_DELTA,
            ],
        };
        let (mut buf, mut buf_at) = (Vec::new(), 16u64);
        let mut pos = 16u64;
        while pos < end {
            let head = self.window(w, &mut buf, &mut buf_at, pos, 5, end)?;
            let (tag, len) = (head[0], u64::from(le_u32(&head[1..])));
            if !tags.contains(&tag) || len > crate::enc::MAX_PAYLOAD as u64 {
                let what = Corruption::new(format!("record tag {tag} length {len}"));
                return Err(Repo::corrupt(w, pos, what));
            }
            let need = len + FRAME_OVERHEAD as u64;
            let frame = self.window(w, &mut buf, &mut buf_at, pos, need, end)?;
            let body = frame.len() - 4;
            if crc32fast::hash(&frame[..body]) != le_u32(&frame[body..]) {
                return Err(Repo::corrupt(w, pos, Corruption::new("CRC mismatch")));
            }
            pos += need;
        }
        Ok(())
    }

    /// `need` bytes of `w` at `pos` (`pos` never moves back), read in large chunks into
    /// `buf`, which holds the file from `buf_at`.
    fn window<'b>(
        &self,
        w: Which,
        buf: &'b mut Vec<u8>,
        buf_at: &mut u64,
        pos: u64,
        need: u64,
        end: u64,
    ) -> Result<&'b [u8]> {
        if pos.saturating_add(need) > end {
            let what = Corruption::new(format!("record runs past the committed length {end}"));
            return Err(Repo::corrupt(w, pos, what));
        }
        if *buf_at + (buf.len() as u64) < pos + need {
            buf.drain(..((pos - *buf_at) as usize).min(buf.len()));
            *buf_at = pos;
            let from = pos + buf.len() as u64;
            let n = (end - from).min(SCAN_CHUNK.max(pos + need - from));
            buf.extend_from_slice(&self.read_raw(w, from, n as usize)?);
        }
        let at = (pos - *buf_at) as usize;
        Ok(&buf[at..at + need as usize])
    }
}
