//! What can go wrong reading a dumpfile, and where.

use std::fmt;
use std::io;

/// Where in the dumpfile a problem was found: a byte offset, and the revision and node
/// path being read when they are known.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Location {
    /// Bytes of input consumed before the problem (for a bad header line: the offset of
    /// the line's first byte).
    pub offset: u64,
    /// The revision whose record (or whose node records) was being read.
    pub revision: Option<u64>,
    /// The `Node-path` of the node record being read.
    pub node_path: Option<String>,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at byte {}", self.offset)?;
        if let Some(rev) = self.revision {
            write!(f, ", in revision {rev}")?;
        }
        if let Some(path) = &self.node_path {
            write!(f, ", node '{path}'")?;
        }
        Ok(())
    }
}

/// A dumpfile could not be read. Every kind says what was wrong and where (see
/// [`Location`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DumpError {
    /// The input ended inside a record (or before the format line).
    #[error("dumpfile ends early, inside {what} ({at})")]
    Truncated { what: &'static str, at: Location },

    /// A header line without `": "`, not UTF-8, or a first line that is not the
    /// `SVN-fs-dump-format-version` line.
    #[error("malformed header line {line:?}: {reason} ({at})")]
    MalformedHeader {
        line: String,
        reason: &'static str,
        at: Location,
    },

    /// A length or revision number that is not plain decimal digits fitting in 64 bits.
    #[error("bad number {value:?} in {field} ({at})")]
    BadNumber {
        field: String,
        value: String,
        at: Location,
    },

    /// A known header with a value outside its vocabulary (`Node-kind: link`,
    /// `Node-action: move`, a checksum that is not hex of the right length).
    #[error("bad value {value:?} for header {header} ({at})")]
    BadHeaderValue {
        header: &'static str,
        value: String,
        at: Location,
    },

    /// A record lacks a header it must have (`Node-action`, or one half of the
    /// `Node-copyfrom-rev` / `Node-copyfrom-path` pair).
    #[error("record lacks the required header {header} ({at})")]
    MissingHeader { header: &'static str, at: Location },

    /// A header block with none of `Revision-number`, `Node-path`, `UUID`,
    /// `SVN-fs-dump-format-version`.
    #[error("unrecognized record type: no Revision-number, Node-path, UUID or SVN-fs-dump-format-version header ({at})")]
    UnrecognizedRecord { at: Location },

    /// Declared lengths that disagree with each other or with the content:
    /// `Content-length` smaller than `Prop-content-length` + `Text-content-length`, or a
    /// property block whose `PROPS-END` line does not end exactly at its declared length.
    #[error("{detail} ({at})")]
    LengthMismatch { detail: String, at: Location },

    /// A property block that is not a sequence of `K`/`V`, `D` entries and `PROPS-END`.
    #[error("malformed property block: {detail} ({at})")]
    MalformedProps { detail: String, at: Location },

    /// A `SVN-fs-dump-format-version` other than 1, 2 or 3.
    #[error("unsupported dumpfile format version {version:?} ({at})")]
    UnsupportedVersion { version: String, at: Location },

    /// Input larger than a configured [`crate::Limits`] bound.
    #[error("{what} exceeds the limit of {limit} ({at})")]
    LimitExceeded {
        what: &'static str,
        limit: u64,
        at: Location,
    },

    /// The underlying reader failed.
    #[error("I/O error reading the dumpfile ({at})")]
    Io {
        #[source]
        source: io::Error,
        at: Location,
    },
}

impl DumpError {
    /// Where the problem was found.
    pub fn location(&self) -> &Location {
        match self {
            DumpError::Truncated { at, .. }
            | DumpError::MalformedHeader { at, .. }
            | DumpError::BadNumber { at, .. }
            | DumpError::BadHeaderValue { at, .. }
            | DumpError::MissingHeader { at, .. }
            | DumpError::UnrecognizedRecord { at }
            | DumpError::LengthMismatch { at, .. }
            | DumpError::MalformedProps { at, .. }
            | DumpError::UnsupportedVersion { at, .. }
            | DumpError::LimitExceeded { at, .. }
            | DumpError::Io { at, .. } => at,
        }
    }

    /// True if the input simply ran out (a truncated dumpfile), as opposed to being wrong.
    pub fn is_truncation(&self) -> bool {
        matches!(self, DumpError::Truncated { .. })
    }
}

/// Shows at most 80 bytes of an offending line, lossily decoded.
pub(crate) fn shown(bytes: &[u8]) -> String {
    let cut = &bytes[..bytes.len().min(80)];
    let mut s = String::from_utf8_lossy(cut).into_owned();
    if bytes.len() > 80 {
        s.push('…');
    }
    s
}
