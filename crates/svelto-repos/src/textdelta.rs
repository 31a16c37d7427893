//! Applying an svndiff stream (a format-3 dump's text, later a client's) against a base
//! read as a stream: source views only move forward, so a sliding buffer is enough and
//! memory stays bounded whatever the file size.

use std::io::{self, Read};
use svelto_delta::{Limits, StreamDecoder};

/// Reads a base sequentially and serves forward-moving views of it.
pub(crate) struct SlidingSource<R: Read> {
    inner: R,
    start: u64,
    buf: Vec<u8>,
    eof: bool,
}

impl<R: Read> SlidingSource<R> {
    /// Bytes of the source it holds.
    pub(crate) fn held(&self) -> usize {
        self.buf.capacity()
    }

    pub(crate) fn new(inner: R) -> Self {
        SlidingSource {
            inner,
            start: 0,
            buf: Vec::new(),
            eof: false,
        }
    }

    pub(crate) fn view(&mut self, offset: u64, len: u64) -> io::Result<&[u8]> {
        if offset < self.start {
            return Err(invalid(format!(
                "delta source view at {offset} moves backwards (before {})",
                self.start
            )));
        }
        let drop = ((offset - self.start) as usize).min(self.buf.len());
        self.buf.drain(..drop);
        self.start += drop as u64;
        // Skip a gap between the old buffer's end and the new view.
        while self.start < offset && !self.eof {
            let mut tmp = vec![0u8; ((offset - self.start) as usize).min(1 << 16)];
            let n = self.inner.read(&mut tmp)?;
            if n == 0 {
                self.eof = true;
            }
            self.start += n as u64;
        }
        let want = len as usize;
        while self.buf.len() < want && !self.eof {
            let old = self.buf.len();
            self.buf.resize(want, 0);
            let n = self.inner.read(&mut self.buf[old..])?;
            self.buf.truncate(old + n);
            if n == 0 {
                self.eof = true;
            }
        }
        if self.start != offset || self.buf.len() < want {
            return Err(invalid(format!(
                "delta source view {offset}+{len} runs past the base"
            )));
        }
        Ok(&self.buf[..want])
    }
}

fn invalid(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg)
}

/// A reader of the target contents produced by applying `delta` (an svndiff stream) to
/// `base`.
pub struct DeltaApplier<D: Read, B: Read> {
    delta: D,
    source: SlidingSource<B>,
    decoder: StreamDecoder,
    out: Vec<u8>,
    pos: usize,
    done: bool,
}

impl<D: Read, B: Read> DeltaApplier<D, B> {
    pub fn new(delta: D, base: B) -> Self {
        DeltaApplier {
            delta,
            source: SlidingSource::new(base),
            decoder: StreamDecoder::new(Limits::default()),
            out: Vec::new(),
            pos: 0,
            done: false,
        }
    }

    fn fill(&mut self) -> io::Result<()> {
        loop {
            match self
                .decoder
                .next_window()
                .map_err(|e| invalid(e.to_string()))?
            {
                Some(w) => {
                    self.out.clear();
                    self.pos = 0;
                    let view = self.source.view(w.source_offset, w.source_len)?;
                    w.apply(view, &mut self.out)
                        .map_err(|e| invalid(e.to_string()))?;
                    if !self.out.is_empty() {
                        return Ok(());
                    }
                }
                None => {
                    let mut chunk = [0u8; 64 * 1024];
                    let n = self.delta.read(&mut chunk)?;
                    if n == 0 {
                        self.decoder.finish().map_err(|e| invalid(e.to_string()))?;
                        self.done = true;
                        return Ok(());
                    }
                    self.decoder.push(&chunk[..n]);
                }
            }
        }
    }
}

impl<D: Read, B: Read> Read for DeltaApplier<D, B> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.pos == self.out.len() {
            if self.done {
                return Ok(0);
            }
            self.fill()?;
            if self.done && self.pos == self.out.len() {
                return Ok(0);
            }
        }
        let n = buf.len().min(self.out.len() - self.pos);
        buf[..n].copy_from_slice(&self.out[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}
