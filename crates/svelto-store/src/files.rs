//! The append-only files of `db/` and the `current` commit point.

use crate::enc::{FRAME_OVERHEAD, MAX_PAYLOAD};
use crate::error::{io_err, Corruption, Result, StoreError};
use crate::io::{IoFile, OsIo, StoreIo};
use crate::node::Offset;
use std::fs::{self, File};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

pub const DATA_HEADER: [u8; 16] = header(b"SVELTO-DATA");
pub const REVS_HEADER: [u8; 16] = header(b"SVELTO-REVS");
pub const META_HEADER: [u8; 16] = header(b"SVELTO-META");
pub const DEDUP_HEADER: [u8; 16] = header(b"SVELTO-DDUP");
pub const REVPROPS_HEADER: [u8; 16] = header(b"SVELTO-RPRP");
pub const REVPROPS_RECORD: u64 = 24;
pub const REV_RECORD: u64 = 48;
pub const DEDUP_RECORD: u64 = 61;

const fn header(name: &[u8; 11]) -> [u8; 16] {
    let mut h = [0u8; 16];
    let mut i = 0;
    while i < 11 {
        h[i] = name[i];
        i += 1;
    }
    h[15] = 1;
    h
}

#[test]
fn const_header_matches() {
    assert_eq!(DATA_HEADER, crate::enc::file_header(b"SVELTO-DATA"));
}

/// The four append-only files, by role.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Which {
    Data,
    Revs,
    Meta,
    Dedup,
    Revprops,
}

impl Which {
    pub const ALL: [Which; 5] = [
        Which::Data,
        Which::Revs,
        Which::Meta,
        Which::Dedup,
        Which::Revprops,
    ];
    pub fn name(self) -> &'static str {
        match self {
            Which::Data => "data",
            Which::Revs => "revs",
            Which::Meta => "meta",
            Which::Dedup => "dedup",
            Which::Revprops => "revprops",
        }
    }
    pub fn header(self) -> [u8; 16] {
        match self {
            Which::Data => DATA_HEADER,
            Which::Revs => REVS_HEADER,
            Which::Meta => META_HEADER,
            Which::Dedup => DEDUP_HEADER,
            Which::Revprops => REVPROPS_HEADER,
        }
    }
}

/// What `db/current` says: the youngest revision and how much of each file is committed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Current {
    pub youngest: u64,
    pub lens: [u64; 5],
}

impl Current {
    pub fn len(&self, w: Which) -> u64 {
        self.lens[w as usize]
    }

    /// Parses `db/current` (or a `db/txns/NAME` file): six numbers separated by single
    /// spaces, then ` crc=` and the CRC-32 of the numbers' text as 8 hex digits, then a
    /// newline. The form without the checksum (written before it existed) is accepted too;
    /// the next commit writes the checked form.
    pub fn parse(text: &str) -> std::result::Result<Current, Corruption> {
        let bad = |why: String| Corruption::new(format!("db/current: {why}"));
        let numbers = crate::enc::checked_line(text, "the line").map_err(bad)?;
        let mut nums = [0u64; 6];
        let mut fields = numbers.split(' ');
        for (i, slot) in nums.iter_mut().enumerate() {
            let f = fields
                .next()
                .ok_or_else(|| bad("expected six numbers".into()))?;
            // Canonical decimal only: what `render` writes.
            let canonical = !f.is_empty()
                && f.bytes().all(|b| b.is_ascii_digit())
                && (f == "0" || !f.starts_with('0'));
            *slot = f.parse::<u64>().ok().filter(|_| canonical).ok_or_else(|| {
                bad(format!(
                    "field {} '{}' is not a number",
                    i + 1,
                    f.escape_debug()
                ))
            })?;
        }
        if fields.next().is_some() {
            return Err(bad("expected six numbers".into()));
        }
        Ok(Current {
            youngest: nums[0],
            lens: [nums[1], nums[2], nums[3], nums[4], nums[5]],
        })
    }

    /// The line `parse` reads, with its checksum.
    pub fn render(&self) -> String {
        let l = self.lens;
        let numbers = format!(
            "{} {} {} {} {} {}",
            self.youngest, l[0], l[1], l[2], l[3], l[4]
        );
        let crc = crc32fast::hash(numbers.as_bytes());
        format!("{numbers} crc={crc:08x}\n")
    }
}

pub fn read_current(db: &Path) -> Result<Current> {
    let p = db.join("current");
    let text = fs::read_to_string(&p).map_err(io_err(format!("reading {}", p.display())))?;
    Current::parse(&text).map_err(|what| StoreError::Corrupt {
        file: "current",
        offset: 0,
        what,
    })
}

/// Atomically replaces `db/current`: write a temporary file, fsync it, rename, fsync the dir.
pub fn write_current(db: &Path, cur: &Current) -> Result<()> {
    write_atomically(db, "current", cur.render().as_bytes())
}

pub fn write_atomically(dir: &Path, name: &str, bytes: &[u8]) -> Result<()> {
    write_atomically_with(&OsIo, dir, name, bytes)
}

/// Replaces `dir/name` with `bytes`: a temporary file written and synced, renamed over it,
/// and the directory synced.
pub fn write_atomically_with(io: &dyn StoreIo, dir: &Path, name: &str, bytes: &[u8]) -> Result<()> {
    let tmp = dir.join(format!("{name}.tmp"));
    let dst = dir.join(name);
    let ctx = || format!("writing {}", dst.display());
    let mut f = io.create(&tmp).map_err(io_err(ctx()))?;
    f.write_all_at(bytes, 0).map_err(io_err(ctx()))?;
    f.sync_data().map_err(io_err(ctx()))?;
    drop(f);
    io.rename(&tmp, &dst).map_err(io_err(ctx()))?;
    io.sync_dir(dir)
        .map_err(io_err(format!("syncing {}", dir.display())))
}

pub fn sync_dir(dir: &Path) -> Result<()> {
    OsIo.sync_dir(dir)
        .map_err(io_err(format!("syncing {}", dir.display())))
}

pub fn open_read(db: &Path, w: Which) -> Result<File> {
    let p = db.join(w.name());
    File::open(&p).map_err(io_err(format!("opening {}", p.display())))
}

/// A file of `db/` as a reader sees it: the file itself and, for a staged transaction, the
/// transaction's continuation of it (`db/txns/NAME.txn/FILE`, docs/formats/store.md),
/// which holds the bytes from offset `at` on in place of the file's own.
pub struct StoreFile {
    file: File,
    ext: Option<(u64, File)>,
}

impl StoreFile {
    pub fn new(file: File) -> StoreFile {
        StoreFile { file, ext: None }
    }

    /// `file` up to `at`, then `ext`.
    pub fn continued(file: File, at: u64, ext: File) -> StoreFile {
        StoreFile {
            file,
            ext: Some((at, ext)),
        }
    }

    /// How many bytes can be read.
    pub fn size(&self) -> std::io::Result<u64> {
        match &self.ext {
            None => Ok(self.file.metadata()?.len()),
            Some((at, ext)) => {
                let own = self.file.metadata()?.len().min(*at);
                if own < *at {
                    return Ok(own);
                }
                Ok(at + ext.metadata()?.len())
            }
        }
    }

    /// The metadata of the file itself.
    pub fn metadata(&self) -> std::io::Result<fs::Metadata> {
        self.file.metadata()
    }

    fn read_exact_at(&self, buf: &mut [u8], off: u64) -> std::io::Result<()> {
        let Some((at, ext)) = &self.ext else {
            return read_windowed(&self.file, buf, off);
        };
        let own = (at.saturating_sub(off) as usize).min(buf.len());
        let (low, high) = buf.split_at_mut(own);
        if !low.is_empty() {
            read_windowed(&self.file, low, off)?;
        }
        if !high.is_empty() {
            read_windowed(ext, high, off + own as u64 - at)?;
        }
        Ok(())
    }
}

/// What the kernel is asked to read around a read that misses the page cache.
const COLD_WINDOW: u64 = 512 * 1024;

/// Fills `buf` from `off` in `file`. A read the page cache answers whole is one system
/// call; where it misses, the kernel is first asked for the aligned window around the
/// miss (`POSIX_FADV_WILLNEED`), so that the next records, which a long read (an export,
/// a replay) usually wants next, arrive in one large I/O instead of one small I/O each:
/// the kernel's own readahead leaves small reads at scattered offsets to one I/O apiece.
fn read_windowed(file: &File, buf: &mut [u8], off: u64) -> std::io::Result<()> {
    use rustix::io::{preadv2, Errno, ReadWriteFlags};
    if buf.is_empty() {
        return Ok(());
    }
    let done = match preadv2(
        file,
        &mut [std::io::IoSliceMut::new(buf)],
        off,
        ReadWriteFlags::NOWAIT,
    ) {
        Ok(n) => n,
        // Not cached (AGAIN), or a kernel or file system without RWF_NOWAIT.
        Err(Errno::AGAIN | Errno::OPNOTSUPP | Errno::NOSYS | Errno::INVAL) => 0,
        Err(e) => return Err(e.into()),
    };
    if done == buf.len() {
        return Ok(());
    }
    let from = (off + done as u64) & !(COLD_WINDOW - 1);
    let len = COLD_WINDOW.max(off + buf.len() as u64 - from);
    // Advice only: a refusal changes nothing about the read below.
    let _ = rustix::fs::fadvise(
        file,
        from,
        std::num::NonZeroU64::new(len),
        rustix::fs::Advice::WillNeed,
    );
    file.read_exact_at(&mut buf[done..], off + done as u64)
}

pub fn read_exact_at(f: &StoreFile, which: Which, off: u64, len: usize) -> Result<Vec<u8>> {
    let mut buf = vec![0u8; len];
    read_exact_into(f, which, off, &mut buf)?;
    Ok(buf)
}

/// Fills `buf` from `off`.
pub fn read_exact_into(f: &StoreFile, which: Which, off: u64, buf: &mut [u8]) -> Result<()> {
    f.read_exact_at(buf, off).map_err(|e| match e.kind() {
        std::io::ErrorKind::UnexpectedEof => StoreError::Corrupt {
            file: which.name(),
            offset: off,
            what: Corruption::new(format!("{} bytes expected, file ends first", buf.len())),
        },
        _ => StoreError::Io {
            context: format!("reading db/{} at {off}", which.name()),
            err: e,
        },
    })
}

/// Reads one framed record at `off`, checking that it lies below `limit` and its CRC.
pub fn read_record(f: &StoreFile, which: Which, off: u64, limit: u64) -> Result<(u8, Vec<u8>)> {
    if off < 16 || off.saturating_add(FRAME_OVERHEAD as u64) > limit {
        return Err(StoreError::Corrupt {
            file: which.name(),
            offset: off,
            what: Corruption::new(format!(
                "record offset outside the committed file (< {limit})"
            )),
        });
    }
    // One read usually fetches the whole record; a second one when it is larger.
    let guess = (limit - off).min(512) as usize;
    let buf = read_exact_at(f, which, off, guess)?;
    if let Some((tag, payload)) = record_in(&buf, which, off, limit)? {
        return Ok((tag, payload.to_vec()));
    }
    let total = FRAME_OVERHEAD + u32::from_le_bytes([buf[1], buf[2], buf[3], buf[4]]) as usize;
    let buf = read_exact_at(f, which, off, total)?;
    let (tag, payload) = record_in(&buf, which, off, limit)?.expect("the whole record was read");
    Ok((tag, payload.to_vec()))
}

/// The framed record at the start of `buf` (read from `off`), its tag and payload, checked
/// as [`read_record`] does; None when `buf` ends before the record does.
pub fn record_in(buf: &[u8], which: Which, off: u64, limit: u64) -> Result<Option<(u8, &[u8])>> {
    let corrupt = |what: String| StoreError::Corrupt {
        file: which.name(),
        offset: off,
        what: Corruption::new(what),
    };
    if buf.len() < 5 {
        return Ok(None);
    }
    let len = u32::from_le_bytes([buf[1], buf[2], buf[3], buf[4]]) as usize;
    if len > MAX_PAYLOAD || off + (len + FRAME_OVERHEAD) as u64 > limit {
        return Err(corrupt(format!(
            "record length {len} runs past the committed file"
        )));
    }
    let total = len + FRAME_OVERHEAD;
    let Some(frame) = buf.get(..total) else {
        return Ok(None);
    };
    let crc = u32::from_le_bytes([
        frame[total - 4],
        frame[total - 3],
        frame[total - 2],
        frame[total - 1],
    ]);
    if crc32fast::hash(&frame[..total - 4]) != crc {
        return Err(corrupt("CRC mismatch".into()));
    }
    Ok(Some((frame[0], &frame[5..total - 4])))
}

/// An append-only file opened by the writer, with a write buffer. `len` counts buffered bytes.
///
/// After a failed write, truncation or fsync nothing is known of what reached the disk:
/// the appender refuses every later operation (an fsync is never retried; its failure may
/// have dropped the very pages a retry would report as clean). A new writer starts again
/// from what `db/current` publishes.
pub struct Appender {
    file: Box<dyn IoFile>,
    path: PathBuf,
    /// Bytes that reached the OS (counted from the start of the file this continues).
    written: u64,
    /// Where the file starts: 0, or for a staged transaction's continuation of a file of
    /// `db/`, that file's published length.
    origin: u64,
    buf: Vec<u8>,
    failed: Failure,
}

impl Appender {
    pub fn open(io: &dyn StoreIo, db: &Path, which: Which, committed: u64) -> Result<Appender> {
        let path = db.join(which.name());
        let ctx = || format!("opening {} for writing", path.display());
        let mut file = io.open_rw(&path).map_err(io_err(ctx()))?;
        let actual = file.size().map_err(io_err(ctx()))?;
        if actual < committed {
            return Err(StoreError::Corrupt {
                file: which.name(),
                offset: actual,
                what: Corruption::new(format!(
                    "file is shorter than its committed length {committed}"
                )),
            });
        }
        if actual > committed {
            // Left by a writer that died before its commit point: never visible, drop it.
            file.set_len(committed).map_err(io_err(ctx()))?;
        }
        Ok(Appender {
            file,
            path,
            written: committed,
            origin: 0,
            buf: Vec::with_capacity(1 << 20),
            failed: None,
        })
    }

    /// Creates `path` as the continuation of a file of `db/` whose published length is
    /// `at`: what is appended at offset `at + n` goes to byte `n` of `path`.
    pub fn continuation(io: &dyn StoreIo, path: &Path, at: u64) -> Result<Appender> {
        let file = io
            .create(path)
            .map_err(io_err(format!("creating {}", path.display())))?;
        Ok(Appender {
            file,
            path: path.to_path_buf(),
            written: at,
            origin: at,
            buf: Vec::new(),
            failed: None,
        })
    }

    pub fn len(&self) -> u64 {
        self.written + self.buf.len() as u64
    }

    /// The error of an earlier failed operation, if any.
    pub fn failed(&self) -> Result<()> {
        refuse_after(&self.failed)
    }

    /// Runs one operation on the file; its failure is remembered.
    fn op(
        &mut self,
        what: &str,
        f: impl FnOnce(&mut dyn IoFile) -> std::io::Result<()>,
    ) -> Result<()> {
        self.failed()?;
        f(&mut *self.file).map_err(|e| {
            let what = format!("{what} {}", self.path.display());
            self.failed = Some((e.kind(), what.clone()));
            StoreError::Io {
                context: what,
                err: e,
            }
        })
    }

    pub fn append(&mut self, bytes: &[u8]) -> Result<u64> {
        self.failed()?;
        let off = self.len();
        self.buf.extend_from_slice(bytes);
        if self.buf.len() >= 1 << 20 {
            self.flush()?;
        }
        Ok(off)
    }

    pub fn flush(&mut self) -> Result<()> {
        if !self.buf.is_empty() {
            let (buf, at) = (std::mem::take(&mut self.buf), self.written - self.origin);
            let r = self.op("writing", |f| f.write_all_at(&buf, at));
            self.buf = buf;
            r?;
            self.written += self.buf.len() as u64;
            self.buf.clear();
        }
        self.failed()
    }

    pub fn sync(&mut self) -> Result<()> {
        self.flush()?;
        self.op("syncing", |f| f.sync_data())
    }

    /// Drops everything from `len` on (uncommitted bytes only).
    pub fn truncate(&mut self, len: u64) -> Result<()> {
        self.failed()?;
        if len >= self.written {
            self.buf.truncate((len - self.written) as usize);
        } else {
            self.buf.clear();
            let at = len.checked_sub(self.origin).ok_or_else(|| {
                StoreError::Conflict(format!(
                    "truncating {} below where it starts",
                    self.path.display()
                ))
            })?;
            self.op("truncating", |f| f.set_len(at))?;
            self.written = len;
        }
        Ok(())
    }
}

/// What failed earlier in a writer: the kind of error and the operation.
pub type Failure = Option<(std::io::ErrorKind, String)>;

/// Refuses to go on after a failed write, truncation or fsync.
pub fn refuse_after(failed: &Failure) -> Result<()> {
    match failed {
        None => Ok(()),
        Some((kind, what)) => Err(StoreError::Io {
            context: format!(
                "{what} failed earlier; this writer stops (a new one starts from db/current)"
            ),
            err: std::io::Error::new(*kind, "earlier failure"),
        }),
    }
}

/// Splits `bytes` (read from `which` at `base`) into fixed-size records whose first
/// `body` bytes are followed by their CRC-32; returns each record's offset and body.
pub fn checked_records(
    which: Which,
    base: u64,
    bytes: &[u8],
    size: u64,
    body: usize,
) -> Result<Vec<(u64, &[u8])>> {
    let mut out = Vec::with_capacity(bytes.len() / size as usize);
    for (i, rec) in bytes.chunks_exact(size as usize).enumerate() {
        let at = base + i as u64 * size;
        if crc32fast::hash(&rec[..body]) != le_u32(&rec[body..]) {
            let what = Corruption::new(format!("{} record CRC mismatch", which.name()));
            return Err(StoreError::Corrupt {
                file: which.name(),
                offset: at,
                what,
            });
        }
        out.push((at, &rec[..body]));
    }
    Ok(out)
}

pub fn le_u64(b: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[..8]);
    u64::from_le_bytes(a)
}

pub fn le_u32(b: &[u8]) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[..4]);
    u32::from_le_bytes(a)
}

/// One revision's entry in `db/revs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RevRecord {
    pub root: Offset,
    pub meta_offset: u64,
    pub meta_len: u32,
    pub next_node_id: u64,
    pub next_copy_id: u64,
}

impl RevRecord {
    pub fn encode(&self) -> [u8; REV_RECORD as usize] {
        let mut b = [0u8; REV_RECORD as usize];
        b[0..8].copy_from_slice(&self.root.to_le_bytes());
        b[8..16].copy_from_slice(&self.meta_offset.to_le_bytes());
        b[16..20].copy_from_slice(&self.meta_len.to_le_bytes());
        b[24..32].copy_from_slice(&self.next_node_id.to_le_bytes());
        b[32..40].copy_from_slice(&self.next_copy_id.to_le_bytes());
        let crc = crc32fast::hash(&b[..44]);
        b[44..48].copy_from_slice(&crc.to_le_bytes());
        b
    }

    pub fn decode(b: &[u8]) -> std::result::Result<RevRecord, Corruption> {
        if b.len() != REV_RECORD as usize {
            return Err(Corruption::new("revision record has the wrong size"));
        }
        let crc = u32::from_le_bytes([b[44], b[45], b[46], b[47]]);
        if crc32fast::hash(&b[..44]) != crc {
            return Err(Corruption::new("revision record CRC mismatch"));
        }
        Ok(RevRecord {
            root: le_u64(&b[0..]),
            meta_offset: le_u64(&b[8..]),
            meta_len: u32::from_le_bytes([b[16], b[17], b[18], b[19]]),
            next_node_id: le_u64(&b[24..]),
            next_copy_id: le_u64(&b[32..]),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustix::fs::{fadvise, Advice};
    use std::io::Write;
    use std::time::{Duration, Instant};

    /// How many bytes of `path` the page cache holds, as util-linux's fincore counts them
    /// (mincore: looking does not read anything in, as a read that may not wait would).
    fn resident(path: &Path) -> u64 {
        let out = std::process::Command::new("fincore")
            .args(["--bytes", "--noheadings", "--raw", "--output", "RES"])
            .arg(path)
            .output()
            .expect("running fincore (Debian's util-linux-extra; scripts/setup installs it)");
        assert!(out.status.success(), "fincore failed: {out:?}");
        let text = String::from_utf8_lossy(&out.stdout);
        text.trim()
            .parse()
            .unwrap_or_else(|_| panic!("fincore printed {text:?}"))
    }

    fn byte(i: u64) -> u8 {
        (i.wrapping_mul(2_654_435_761) >> 13) as u8
    }

    #[test]
    fn a_read_that_misses_the_page_cache_brings_in_its_window() {
        // Beside the sources, on disk (/tmp may be tmpfs): the test drops the file's pages.
        let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).expect("a scratch directory");
        let path = dir.path().join("data");
        let size = 4u64 << 20;
        let mut f = File::create(&path).expect("creating the file");
        let bytes: Vec<u8> = (0..size).map(byte).collect();
        f.write_all(&bytes).expect("writing the file");
        f.sync_all().expect("syncing the file");
        drop(f);
        // The window is read asynchronously, and readahead is the kernel's to drop when the
        // disk is busy (a loaded machine did, once): the cold read is tried up to three
        // times, and fails only if the window never arrives. Without the advice the kernel
        // reads the one page asked for, every time.
        let mut seen = Vec::new();
        for (attempt, at) in [(1u64 << 20) + 10, (2u64 << 20) + 10, (3u64 << 20) + 10]
            .into_iter()
            .enumerate()
        {
            let f = File::open(&path).expect("opening the file");
            fadvise(&f, 0, None, Advice::DontNeed).expect("POSIX_FADV_DONTNEED");
            assert_eq!(
                resident(&path),
                0,
                "the page cache kept {} after POSIX_FADV_DONTNEED: this test needs a disk-backed file system",
                path.display()
            );
            let got = read_exact_at(&StoreFile::new(f), Which::Data, at, 100).expect("the read");
            assert_eq!(got, bytes[at as usize..at as usize + 100]);
            let deadline = Instant::now() + Duration::from_secs(5);
            let mut have = resident(&path);
            while have < COLD_WINDOW && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(10));
                have = resident(&path);
            }
            if have >= COLD_WINDOW {
                return;
            }
            seen.push(format!("attempt {}: {have} bytes", attempt + 1));
        }
        panic!("a cold read's {COLD_WINDOW}-byte window was never read: {seen:?}");
    }

    #[test]
    fn reads_cross_into_the_continuation_and_stop_at_its_end() {
        let dir = tempfile::tempdir().expect("a scratch directory");
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        fs::write(&a, (0..1000).map(byte).collect::<Vec<_>>()).expect("writing a");
        fs::write(&b, (600..900).map(byte).collect::<Vec<_>>()).expect("writing b");
        let open = |p: &Path| File::open(p).expect("opening");
        // `a` up to 600, then `b` (which holds what follows 600).
        let sf = StoreFile::continued(open(&a), 600, open(&b));
        let got = read_exact_at(&sf, Which::Data, 550, 300).expect("a read across both");
        assert_eq!(got, (550..850).map(byte).collect::<Vec<_>>());
        match read_exact_at(&sf, Which::Data, 850, 100) {
            Err(StoreError::Corrupt { offset: 850, .. }) => {}
            other => panic!("a read past the end gave {other:?}"),
        }
    }
}
