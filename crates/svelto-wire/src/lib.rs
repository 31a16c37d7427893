//! The svn:// item codec (`docs/formats/svn-protocol.md`, sections 1 and 3).
//!
//! Owns: the [`Item`] syntax tree, the canonical encoder (the bytes svnserve and the stock
//! client write, 1.2), a sans-io [`Decoder`] that frames and parses one top-level item at a
//! time under [`Limits`] (1.3–1.6), a [`TupleReader`] for walking lists against a prototype
//! (1.7), and builders for `success` / `failure` responses (3.1, 3.2).
//!
//! Must not: do I/O, depend on tokio, use `unsafe`, or allocate from a length read off the
//! wire before the bytes behind it have arrived.

mod decode;
mod error;
mod item;
mod response;
mod tuple;

pub use decode::{decode, Decoder, Limits, ITEM_BYTES};
pub use error::{Malformed, WireError};
pub use item::{is_valid_word, Item, ItemWriter, MAX_WRITTEN_WORD_LEN};
pub use response::{command, failure, success, ErrorLink, Response};
pub use tuple::TupleReader;
