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

/// `SVN_ERR_RA_SVN_CONNECTION_CLOSED`: the peer went away in the middle of an item.
pub const ERR_CONNECTION_CLOSED: u64 = 210002;
/// `SVN_ERR_RA_SVN_MALFORMED_DATA`: malformed items or parameters.
pub const ERR_MALFORMED_DATA: u64 = 210004;
/// `SVN_ERR_RA_SVN_REQUEST_SIZE`: a request larger than the configured limit.
pub const ERR_REQUEST_SIZE: u64 = 210009;
