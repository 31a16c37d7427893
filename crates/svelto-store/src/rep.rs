//! Representations: a file's contents as svndiff windows plus a trailer (docs/formats/store.md).

use crate::enc::{put_varint, Cursor, FRAME_OVERHEAD};
use crate::error::{Corruption, Result};
use crate::files::Which;
use crate::node::Offset;
use crate::repo::Repo;
use crate::TAG_WINDOW;
use std::io::Read;
use svelto_core::{Md5, Sha1};
use svelto_delta::{parse_window, Limits, Window};

/// Deltas are computed only for contents up to this size; larger files are stored as
/// self-contained windows and streamed, never held whole in memory.
pub const DELTA_MAX: usize = 4 << 20;
/// Longest delta chain; beyond it a self-contained representation is written.
pub const MAX_CHAIN: u64 = 48;

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
    Repo::corrupt(Which::Data, off, Corruption::new(what))
}

/// Decodes the window record at `off`; returns it and the offset of the next record.
fn window_at(repo: &Repo, off: Offset, version: u8) -> Result<(Window, Offset)> {
    let payload = repo.record(Which::Data, off, TAG_WINDOW)?;
    let next = off + (payload.len() + FRAME_OVERHEAD) as u64;
    match parse_window(&payload, version, &limits()) {
        Ok(Some((w, used))) if used == payload.len() => Ok((w, next)),
        Ok(_) => Err(bad(off, "svndiff window does not fill its record".into())),
        Err(e) => Err(bad(off, format!("svndiff window: {e}"))),
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

/// Reconstructs the representation at `rep` (trailer `t`) given its base's contents.
pub fn apply_on(repo: &Repo, rep: Offset, t: &RepTrailer, base: &[u8]) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(usize::try_from(t.size).unwrap_or(0).min(DELTA_MAX * 4));
    let mut off = t.first_window;
    for _ in 0..t.windows {
        let (w, next) = window_at(repo, off, t.version)?;
        apply(&w, base, off, &mut out)?;
        off = next;
    }
    if out.len() as u64 != t.size {
        return Err(bad(
            rep,
            format!("contents are {} bytes, trailer says {}", out.len(), t.size),
        ));
    }
    Ok(out)
}

/// A streaming reader; self-contained representations are decoded window by window.
pub fn reader(repo: &Repo, rep: Offset) -> Result<Box<dyn Read + Send>> {
    if rep == 0 {
        return Ok(Box::new(std::io::empty()));
    }
    let t = repo.rep_trailer(rep)?;
    if t.base != 0 {
        return Ok(Box::new(std::io::Cursor::new(Shared(repo.fulltext(rep)?))));
    }
    Ok(Box::new(WindowStream {
        repo: repo.clone(),
        next: t.first_window,
        left: t.windows,
        version: t.version,
        buf: Vec::new(),
        pos: 0,
    }))
}

struct WindowStream {
    repo: Repo,
    next: Offset,
    left: u64,
    version: u8,
    buf: Vec<u8>,
    pos: usize,
}

impl Read for WindowStream {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        while self.pos == self.buf.len() {
            if self.left == 0 {
                return Ok(0);
            }
            let (w, next) = window_at(&self.repo, self.next, self.version)
                .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()))?;
            self.buf.clear();
            self.pos = 0;
            apply(&w, &[], self.next, &mut self.buf)
                .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()))?;
            self.next = next;
            self.left -= 1;
        }
        let n = out.len().min(self.buf.len() - self.pos);
        out[..n].copy_from_slice(&self.buf[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

/// Bytes shared with the fulltext cache, readable through `std::io::Cursor`.
struct Shared(std::sync::Arc<Vec<u8>>);

impl AsRef<[u8]> for Shared {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}
