//! Representations: a file's contents as svndiff windows plus a trailer (docs/formats/store.md).

use crate::enc::{put_varint, Cursor, FRAME_OVERHEAD};
use crate::error::{Corruption, Result};
use crate::files::Which;
use crate::node::Offset;
use crate::TAG_WINDOW;
use std::io::Read;
use svelto_core::{Md5, Sha1};
use svelto_delta::{parse_window, parse_window_onto, Limits, Window};

/// Deltas are computed only for contents up to this size; larger files are stored as
/// self-contained windows and streamed, never held whole in memory (the seam's bound).
pub use svelto_fs::DELTA_MAX;
/// Longest delta chain; beyond it a self-contained representation is written.
pub const MAX_CHAIN: u64 = 48;
/// A file's version is stored as a delta against the version just before it unless its
/// predecessor count is a multiple of this; then against its skip-delta ancestor
/// (FSFS's `max-linear-deltification`, same default).
pub const LINEAR: u64 = 16;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RepTrailer {
    pub version: u8,
    pub first_window: Offset,
    pub windows: u64,
    pub base: Offset,
    pub chain: u64,
    pub size: u64,
    pub md5: Md5,
    pub sha1: Sha1,
}

impl RepTrailer {
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.push(self.version);
        put_varint(out, self.first_window);
        put_varint(out, self.windows);
        put_varint(out, self.base);
        put_varint(out, self.chain);
        put_varint(out, self.size);
        out.extend_from_slice(&self.md5.0);
        out.extend_from_slice(&self.sha1.0);
    }

    pub fn decode(payload: &[u8]) -> Result<RepTrailer, Corruption> {
        let mut c = Cursor::new(payload, "REP");
        let t = RepTrailer {
            version: c.u8()?,
            first_window: c.varint()?,
            windows: c.varint()?,
            base: c.varint()?,
            chain: c.varint()?,
            size: c.varint()?,
            md5: Md5(c.fixed()?),
            sha1: Sha1(c.fixed()?),
        };
        c.finish()?;
        if t.version > 2 {
            return Err(Corruption::new(format!(
                "REP record: svndiff version {}",
                t.version
            )));
        }
        Ok(t)
    }
}

fn limits() -> Limits {
    Limits::default()
}

fn bad(off: Offset, what: String) -> crate::StoreError {
    crate::StoreError::Corrupt {
        file: Which::Data.name(),
        offset: off,
        what: Corruption::new(what),
    }
}

/// Where window records are read from: `db/data` of a repository (implemented by
/// `Repo`; this module decodes and applies windows and knows nothing else of it).
pub trait DataFile {
    /// Fills `buf` with the bytes of `db/data` at `off`.
    fn read_data_into(&self, off: u64, buf: &mut [u8]) -> Result<()>;
}

/// The WINDOW records of one representation, read in large chunks (one read for most
/// representations) rather than one read per window.
struct Frames {
    pos: u64,
    end: u64,
    buf: Vec<u8>,
    at: usize,
    windows: u64,
    /// How much the next read asks for at least: [`FIRST_CHUNK`], doubling up to [`CHUNK`].
    chunk: usize,
}

/// The most of a representation's windows read at once.
const CHUNK: usize = 4 << 20;
/// What the first read of a representation's windows asks for: one window of 100 KB that
/// does not compress and its record. A reader that wants only the first window (an update
/// judging whether two large binaries share anything) then reads 128 KiB, not 4 MiB, and
/// further reads double.
const FIRST_CHUNK: usize = 128 << 10;

impl Frames {
    /// The records of `t`'s windows from `bytes[from..]`, read already with the REP record at
    /// `rep` (and reading on past them if they run further).
    fn read(t: &RepTrailer, rep: Offset, bytes: Vec<u8>, from: usize) -> Frames {
        Frames {
            pos: rep,
            end: rep,
            buf: bytes,
            at: from,
            chunk: FIRST_CHUNK,
            windows: t.windows,
        }
    }

    /// Every window of `t` is wanted: from `near` (bytes read with the REP record at `rep`,
    /// the first window's record at `near.1`) when given, else read from the first window
    /// on, all of them at once up to [`CHUNK`].
    fn all(t: &RepTrailer, rep: Offset, near: Option<(Vec<u8>, usize)>) -> Frames {
        match near {
            Some((bytes, from)) => Frames::read(t, rep, bytes, from),
            None => Frames {
                chunk: CHUNK,
                ..Frames::new(t, rep)
            },
        }
    }

    fn new(t: &RepTrailer, rep: Offset) -> Frames {
        Frames {
            pos: t.first_window,
            end: rep,
            buf: Vec::new(),
            at: 0,
            windows: t.windows,
            chunk: FIRST_CHUNK,
        }
    }

    /// Makes `need` bytes available from `self.at`.
    fn fill(&mut self, data: &impl DataFile, need: usize) -> Result<()> {
        let have = self.buf.len() - self.at;
        if have >= need {
            return Ok(());
        }
        let missing = (need - have) as u64;
        if missing > self.end - self.pos {
            return Err(bad(
                self.pos,
                "window records run past their representation".into(),
            ));
        }
        let len = (self.end - self.pos).min(missing.max(self.chunk as u64)) as usize;
        self.chunk = (self.chunk * 2).min(CHUNK);
        // What is left of the last read moves to the front; the new bytes are read in
        // place after it, in the buffer's own memory once it has grown.
        self.buf.drain(..self.at);
        self.at = 0;
        let kept = self.buf.len();
        self.buf.resize(kept + len, 0);
        data.read_data_into(self.pos, &mut self.buf[kept..])?;
        self.pos += len as u64;
        Ok(())
    }

    /// The next window record's payload (its range in `self.buf`, CRC checked) and offset;
    /// the record is consumed.
    fn frame(&mut self, data: &impl DataFile) -> Result<Option<(std::ops::Range<usize>, Offset)>> {
        if self.windows == 0 {
            return Ok(None);
        }
        self.windows -= 1;
        let off = self.pos - (self.buf.len() - self.at) as u64;
        self.fill(data, 5)?;
        let head = &self.buf[self.at..];
        let len = u32::from_le_bytes([head[1], head[2], head[3], head[4]]) as usize;
        if head[0] != TAG_WINDOW || len > crate::enc::MAX_PAYLOAD {
            return Err(bad(
                off,
                format!("expected a window record, found tag {}", head[0]),
            ));
        }
        self.fill(data, len + FRAME_OVERHEAD)?;
        let frame = &self.buf[self.at..self.at + len + FRAME_OVERHEAD];
        let crc = u32::from_le_bytes([
            frame[len + 5],
            frame[len + 6],
            frame[len + 7],
            frame[len + 8],
        ]);
        if crc32fast::hash(&frame[..len + 5]) != crc {
            return Err(bad(off, "CRC mismatch".into()));
        }
        let payload = self.at + 5..self.at + 5 + len;
        self.at += len + FRAME_OVERHEAD;
        Ok(Some((payload, off)))
    }

    /// The next window, decoded, and its record's offset.
    fn next(&mut self, data: &impl DataFile, version: u8) -> Result<Option<(Window, Offset)>> {
        let Some((payload, off)) = self.frame(data)? else {
            return Ok(None);
        };
        let payload = &self.buf[payload];
        let w = match parse_window(payload, version, &limits()) {
            Ok(Some((w, used))) if used == payload.len() => w,
            Ok(_) => return Err(bad(off, "svndiff window does not fill its record".into())),
            Err(e) => return Err(bad(off, format!("svndiff window: {e}"))),
        };
        Ok(Some((w, off)))
    }

    /// The next window applied onto `out` when it is new data alone (decompressed straight
    /// into it: `parse_window_onto`), else decoded and returned to be applied; and its
    /// record's offset.
    fn next_onto(
        &mut self,
        data: &impl DataFile,
        version: u8,
        out: &mut Vec<u8>,
    ) -> Result<Option<(Option<Window>, Offset)>> {
        let Some((payload, off)) = self.frame(data)? else {
            return Ok(None);
        };
        let payload = &self.buf[payload];
        let w = match parse_window_onto(payload, version, &limits(), out) {
            Ok(Some((w, used))) if used == payload.len() => w,
            Ok(_) => return Err(bad(off, "svndiff window does not fill its record".into())),
            Err(e) => return Err(bad(off, format!("svndiff window: {e}"))),
        };
        Ok(Some((w, off)))
    }
}

fn apply(w: &Window, base: &[u8], off: Offset, out: &mut Vec<u8>) -> Result<()> {
    let start = usize::try_from(w.source_offset).unwrap_or(usize::MAX);
    let end = start.saturating_add(usize::try_from(w.source_len).unwrap_or(usize::MAX));
    let view = base.get(start..end).ok_or_else(|| {
        bad(
            off,
            format!("window source view {start}..{end} outside its base"),
        )
    })?;
    w.apply(view, out)
        .map_err(|e| bad(off, format!("svndiff window: {e}")))
}

/// Reconstructs the representation at `rep` (trailer `t`) given its base's contents into
/// `out` (emptied first), its window records read from `near` when given (bytes read with
/// its REP record, the first window's at the index given: [`windows_in`]).
pub fn apply_into(
    data: &impl DataFile,
    rep: Offset,
    t: &RepTrailer,
    near: Option<(Vec<u8>, usize)>,
    base: &[u8],
    out: &mut Vec<u8>,
) -> Result<()> {
    out.clear();
    let mut frames = Frames::all(t, rep, near);
    while let Some((w, off)) = frames.next_onto(data, t.version, out)? {
        if let Some(w) = w {
            apply(&w, base, off, out)?;
        }
    }
    check_size(rep, t, out)
}

/// The contents of the representation at `rep` (trailer `t`) from its decoded `windows`
/// and its base's contents.
pub fn apply_all(rep: Offset, t: &RepTrailer, windows: &[Window], base: &[u8]) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(usize::try_from(t.size).unwrap_or(0).min(DELTA_MAX * 4));
    for w in windows {
        apply(w, base, rep, &mut out)?;
    }
    check_size(rep, t, &out)?;
    Ok(out)
}

fn check_size(rep: Offset, t: &RepTrailer, out: &[u8]) -> Result<()> {
    if out.len() as u64 != t.size {
        return Err(bad(
            rep,
            format!("contents are {} bytes, trailer says {}", out.len(), t.size),
        ));
    }
    Ok(())
}

/// The windows of the representation at `rep` (trailer `t`), decoded, in order.
pub fn windows(data: &impl DataFile, rep: Offset, t: &RepTrailer) -> Result<Vec<Window>> {
    windows_from(data, t, Frames::new(t, rep))
}

/// [`windows`] from their records' bytes already read (`bytes[from..]`: from the first
/// window's record on, up to the REP record at `rep` or past it).
pub fn windows_in(
    data: &impl DataFile,
    rep: Offset,
    t: &RepTrailer,
    bytes: Vec<u8>,
    from: usize,
) -> Result<Vec<Window>> {
    windows_from(data, t, Frames::read(t, rep, bytes, from))
}

/// The windows of the svndiff stream `stream` (header included) that the representation at
/// `rep` (trailer `t`) was stored as ([`delta_stream_into`]), decoded: exactly `t.windows`.
pub fn windows_of_stream(rep: Offset, t: &RepTrailer, stream: &[u8]) -> Result<Vec<Window>> {
    let mut out = Vec::with_capacity(usize::try_from(t.windows).unwrap_or(0).min(1024));
    let mut at = stream.len().min(4);
    while at < stream.len() {
        match parse_window(&stream[at..], t.version, &limits()) {
            Ok(Some((w, used))) if used > 0 => {
                out.push(w);
                at += used;
            }
            Ok(_) => return Err(bad(rep, "svndiff stream ends inside a window".into())),
            Err(e) => return Err(bad(rep, format!("svndiff window: {e}"))),
        }
    }
    if out.len() as u64 != t.windows {
        let what = format!(
            "{} windows kept, {} in the REP record",
            out.len(),
            t.windows
        );
        return Err(bad(rep, what));
    }
    Ok(out)
}

fn windows_from(data: &impl DataFile, t: &RepTrailer, mut frames: Frames) -> Result<Vec<Window>> {
    let mut out = Vec::with_capacity(usize::try_from(t.windows).unwrap_or(0).min(1024));
    while let Some((w, _)) = frames.next(data, t.version)? {
        out.push(w);
    }
    Ok(out)
}

/// The most bytes a stored window takes besides what it expands to: its header's five
/// varints and, compressed, two original-length prefixes. Instructions and new data
/// together stay under twice the expanded size.
const WINDOW_HEADER_MAX: u64 = 70;

/// Appends to `out` the windows of the self-contained representation at `rep` (trailer
/// `t`) as stored: their records' payloads one after another (each CRC checked), which is
/// the svndiff stream of version `t.version` after its 4-byte header. Nothing is decoded.
/// From `near` (bytes read with the REP record, its windows' records from `near.1` on) when
/// given.
pub fn stored_stream_into(
    data: &impl DataFile,
    rep: Offset,
    t: &RepTrailer,
    near: Option<(Vec<u8>, usize)>,
    out: &mut Vec<u8>,
) -> Result<()> {
    if t.base != 0 {
        return Err(bad(rep, "a delta has no stored stream of its own".into()));
    }
    let frames = Frames::all(t, rep, near);
    // Windows as stored are bounded by what they expand to (`WINDOW_HEADER_MAX`): a trailer
    // that says otherwise is damaged, and is not let to make this read the data file into
    // memory.
    let most = t
        .windows
        .checked_mul(WINDOW_HEADER_MAX)
        .and_then(|h| h.checked_add(t.size.checked_mul(2)?))
        .filter(|_| t.windows <= t.size.max(1));
    let Some(most) = most.and_then(|m| usize::try_from(m).ok()) else {
        return Err(bad(
            rep,
            format!("{} windows for {} bytes", t.windows, t.size),
        ));
    };
    let framing = usize::try_from(t.windows)
        .unwrap_or(usize::MAX)
        .saturating_mul(FRAME_OVERHEAD);
    let stored = usize::try_from(rep.saturating_sub(t.first_window)).unwrap_or(0);
    out.reserve(stored.saturating_sub(framing).min(most));
    payloads_into(data, frames, most, out)
}

/// Appends to `out` the windows of the delta at `rep` (trailer `t`) as stored, as
/// [`stored_stream_into`] does for a self-contained text; from `near` (bytes read with the
/// REP record, its windows' records from `near.1` on) when given. What is appended is bounded
/// by the records' own bytes in `db/data`.
pub fn delta_stream_into(
    data: &impl DataFile,
    rep: Offset,
    t: &RepTrailer,
    near: Option<(Vec<u8>, usize)>,
    out: &mut Vec<u8>,
) -> Result<()> {
    let frames = Frames::all(t, rep, near);
    let most = usize::try_from(rep.saturating_sub(t.first_window)).unwrap_or(usize::MAX);
    payloads_into(data, frames, most, out)
}

/// Appends the payloads of the records `frames` yields (each CRC checked), at most `most`
/// bytes of them.
fn payloads_into(
    data: &impl DataFile,
    mut frames: Frames,
    most: usize,
    out: &mut Vec<u8>,
) -> Result<()> {
    let start = out.len();
    while let Some((payload, off)) = frames.frame(data)? {
        if out.len() - start + payload.len() > most {
            return Err(bad(off, "window records longer than their text".into()));
        }
        out.extend_from_slice(&frames.buf[payload]);
    }
    Ok(())
}

/// A self-contained representation (trailer `t`, at `rep`) decoded window by window as
/// it is read: memory stays one window whatever the file's size.
pub struct WindowStream<D> {
    data: D,
    frames: Frames,
    version: u8,
    buf: Vec<u8>,
    pos: usize,
}

impl<D: DataFile> WindowStream<D> {
    pub fn new(data: D, rep: Offset, t: &RepTrailer) -> WindowStream<D> {
        WindowStream {
            data,
            frames: Frames::new(t, rep),
            version: t.version,
            buf: Vec::new(),
            pos: 0,
        }
    }
}

fn io_error(e: crate::StoreError) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string())
}

impl<D: DataFile> WindowStream<D> {
    /// The contents of the next window (None after the last), owned: a window that is
    /// new data alone (a file stored as it is, which does not compress) gives its new data
    /// without a copy. For a reader that passes each window on as it is (an HTTP answer's
    /// body), instead of copying it through a buffer of its own. Not to be mixed with
    /// `read`.
    pub fn next_chunk(&mut self) -> Result<Option<Vec<u8>>> {
        let Some((w, off)) = self.frames.next(&self.data, self.version)? else {
            return Ok(None);
        };
        let whole_new = w.source_len == 0
            && w.new_data.len() as u64 == w.target_len
            && matches!(w.instructions[..], [svelto_delta::Instruction::NewData { len }] if len == w.target_len);
        if whole_new {
            return Ok(Some(w.new_data));
        }
        let mut out = Vec::new();
        apply(&w, &[], off, &mut out)?;
        Ok(Some(out))
    }
}

impl<D: DataFile> Read for WindowStream<D> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        while self.pos == self.buf.len() {
            let Some((w, off)) = self
                .frames
                .next(&self.data, self.version)
                .map_err(io_error)?
            else {
                return Ok(0);
            };
            self.buf.clear();
            self.pos = 0;
            apply(&w, &[], off, &mut self.buf).map_err(io_error)?;
        }
        let n = out.len().min(self.buf.len() - self.pos);
        out[..n].copy_from_slice(&self.buf[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}
