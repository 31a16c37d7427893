//! A text arriving in an update drive (svndiff, in chunks): decoded window by window,
//! against a base text when it is a delta, and hashed (SHA-1 and MD5) as it goes, each
//! window's bytes handed to the caller's sink. Checkout (no base) and update (the base
//! pristine) receive texts through it.

use std::fs::File;
use std::os::unix::fs::FileExt;

use md5::Digest;
use svelto_delta::StreamDecoder;

use crate::error::{Error, Result};
use crate::ra_svn::protocol;

/// The buffers a decode works in, kept from text to text.
#[derive(Default)]
pub(crate) struct Buffers {
    /// The base text's bytes a window reads.
    view: Vec<u8>,
    /// A window's text.
    window: Vec<u8>,
}

pub(crate) struct Incoming {
    decoder: StreamDecoder,
    /// None for an export, which keeps no pristine (its SHA-1 is never used).
    sha1: Option<sha1::Sha1>,
    md5: md5::Md5,
    size: u64,
}

/// The text of a finished [`Incoming`]: SHA-1 and MD5 (hex) and size.
pub(crate) type Digests = (String, String, u64);

impl Incoming {
    /// A text to receive; `sha1`: whether its SHA-1 is wanted (a pristine's name).
    pub(crate) fn new(sha1: bool) -> Incoming {
        Incoming {
            decoder: StreamDecoder::new(svelto_delta::Limits::default()),
            sha1: sha1.then(sha1::Sha1::new),
            md5: md5::Md5::new(),
            size: 0,
        }
    }

    /// Decodes the windows `chunk` completes (`base`: the text a delta applies to) and
    /// hands each window's text to `sink`.
    pub(crate) fn push(
        &mut self,
        chunk: &[u8],
        relpath: &str,
        base: Option<&File>,
        bufs: &mut Buffers,
        sink: &mut dyn FnMut(&[u8]) -> Result<()>,
    ) -> Result<()> {
        self.decoder.push(chunk);
        let delta_err = |source| Error::Delta {
            path: relpath.to_string(),
            source,
        };
        while let Some(window) = self.decoder.next_window().map_err(delta_err)? {
            bufs.view.clear();
            if window.source_len > 0 {
                let Some(src) = base else {
                    return Err(protocol(
                        "in the update drive",
                        format!("a delta against no base text for '{relpath}'"),
                    ));
                };
                bufs.view.resize(window.source_len as usize, 0);
                src.read_exact_at(&mut bufs.view, window.source_offset)
                    .map_err(|e| {
                        protocol(
                            "in the update drive",
                            format!("a delta reads outside the base text of '{relpath}': {e}"),
                        )
                    })?;
            }
            bufs.window.clear();
            window
                .apply(&bufs.view, &mut bufs.window)
                .map_err(delta_err)?;
            if let Some(h) = &mut self.sha1 {
                h.update(&bufs.window);
            }
            self.md5.update(&bufs.window);
            self.size += bufs.window.len() as u64;
            sink(&bufs.window)?;
        }
        Ok(())
    }

    /// The end of the text: an error if the svndiff stopped inside a window. The SHA-1 is
    /// empty when it was not wanted.
    pub(crate) fn finish(&mut self, relpath: &str) -> Result<Digests> {
        self.decoder.finish().map_err(|source| Error::Delta {
            path: relpath.to_string(),
            source,
        })?;
        Ok((
            self.sha1
                .take()
                .map(|h| hex::encode(h.finalize()))
                .unwrap_or_default(),
            hex::encode(std::mem::take(&mut self.md5).finalize()),
            self.size,
        ))
    }
}
