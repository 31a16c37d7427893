//! svndiff 0/1/2: Subversion's binary delta format, and computing deltas.
//!
//! This crate owns the byte format described in `docs/formats/svndiff.md`: the stream header,
//! windows and their instructions, the zlib (svndiff1) and LZ4 (svndiff2) section compression,
//! the limits a decoder enforces, and the delta algorithm that produces windows
//! ([`compute_window`] for one window, [`delta_windows`] for a whole text).
//!
//! It is pure: no files, no network, no threads, no logging. Decoding is sans-io
//! ([`parse_window`], [`StreamDecoder`]): running out of input is `Ok(None)`, and every length
//! read from input is checked against [`Limits`] before it sizes an allocation. Nothing here
//! panics on bad input; every problem is a [`DeltaError`] that names the window, the
//! instruction and the offending values.
//!
//! ```
//! use svelto_delta::{apply_windows, decode_stream, delta_windows, encode_stream, Limits};
//!
//! let old = b"The quick brown fox jumps over the lazy dog.\n".repeat(1000);
//! let mut new = old.clone();
//! new.splice(450..450, b"A new line.\n".iter().copied());
//!
//! let windows = delta_windows(&old, &new);
//! let svndiff = encode_stream(&windows, 0, 0)?; // "SVN\0" and the windows
//! assert!(svndiff.len() < 60);
//! let decoded = decode_stream(&svndiff, &Limits::default())?;
//! assert_eq!(apply_windows(&decoded, &old)?, new);
//! # Ok::<(), svelto_delta::DeltaError>(())
//! ```

mod compress;
mod compute;
mod error;
mod parse;
mod sequence;
mod varint;
mod window;

pub use compute::compute_window;
pub use error::{DeltaError, Section};
pub use parse::{
    decode_stream, parse_window, parse_window_onto, stream_header, Limits, StreamDecoder,
};
pub use sequence::{apply_windows, delta_windows, encode_stream};
pub use window::{fulltext_v0_header, Instruction, Window};

/// The most target bytes Subversion puts in one window, and the most source and target bytes a
/// stock client accepts in one (`SVN_DELTA_WINDOW_SIZE`).
pub const WINDOW_SIZE: usize = 102_400;
