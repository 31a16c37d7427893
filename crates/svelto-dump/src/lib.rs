//! Subversion dumpfiles: a streaming pull parser (formats 1, 2, 3; the output of
//! `svnadmin dump`, `svnadmin dump --deltas` and `svnrdump dump`) and a writer that is
//! byte-exact with `svnadmin dump`. The format, byte by byte, and the parser's tolerance
//! rules are in docs/formats/dumpfile.md.
//!
//! Owns: the record syntax (headers, lengths, property blocks), never the semantics.
//! Paths are returned as written; svndiff text stays raw bytes. Must not: do any I/O
//! beyond the reader and writer it is given, hold node text in memory, or allocate by an
//! unchecked length read from its input.

mod error;
pub mod headers;
mod props;
mod reader;
mod writer;

pub use error::{DumpError, Location};
pub use headers::Headers;
pub use props::{props_bytes, PropEntry, PropsBlock, PROPS_END};
pub use reader::{DumpReader, Limits, Node, NodeAction, Record, TextReader};
pub use writer::{
    write_format, write_node_headers, write_node_record, write_revision_record, write_uuid,
    NodeHeaders,
};
