//! What a storage backend's failures mean.

use std::io;
use svelto_core::Revnum;

/// Stored bytes that contradict the format: a bad CRC, a record that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Corruption(pub String);

impl Corruption {
    pub fn new(msg: impl Into<String>) -> Self {
        Corruption(msg.into())
    }
}

/// Errors of a storage backend. Each says whether it means corruption of the repository,
/// a failing environment (I/O), a remote backend out of reach (`Unavailable`), or a
/// request that does not fit the repository.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// `file` names the file (or object) and `offset` where in it.
    #[error("repository corrupt: {file} at offset {offset}: {what}")]
    Corrupt {
        file: &'static str,
        offset: u64,
        what: Corruption,
    },
    #[error("{context}: {err}")]
    Io { context: String, err: io::Error },
    /// A remote backend could not be reached or did not answer in time: the repository
    /// is intact, the request may be retried later.
    #[error("storage unavailable: {what}: {reason}")]
    Unavailable { what: String, reason: String },
    #[error("'{0}' is not a Svelto repository (no db/format)")]
    NotARepository(String),
    #[error("'{path}': unsupported repository format: {format}")]
    UnsupportedFormat { path: String, format: String },
    #[error("'{path}' is a Subversion {fs_type} repository, not a Svelto one: move it with `svnadmin dump` and `svelto admin load` (docs/migrating.md)")]
    ForeignRepository { path: String, fs_type: String },
    #[error("No such revision {0}")]
    NoSuchRevision(Revnum),
    #[error("path '{path}' not found in revision {rev}")]
    PathNotFound { rev: Revnum, path: String },
    #[error("path '{path}' not found in transaction")]
    TxnPathNotFound { path: String },
    #[error("path '{0}' already exists")]
    AlreadyExists(String),
    #[error("path '{0}' is not a directory")]
    NotADirectory(String),
    #[error("path '{0}' is not a file")]
    NotAFile(String),
    #[error("the root directory cannot be {0}")]
    RootOperation(&'static str),
    #[error("checksum mismatch for '{path}': expected {expected}, actual {actual}")]
    ChecksumMismatch {
        path: String,
        expected: String,
        actual: String,
    },
    #[error("text delta for '{path}' is invalid: {reason}")]
    BadDelta { path: String, reason: String },
    #[error("No such transaction '{0}'")]
    NoSuchTxn(String),
    /// The caller's view of the writer's state does not hold (a bug, or another writer).
    #[error("writer state: {0}")]
    Conflict(String),
    #[error("record too large ({0} bytes)")]
    TooLarge(usize),
    /// Not 36 characters of hex digits with '-' at offsets 8, 13, 18 and 23 (APR's syntax).
    #[error("Malformed UUID '{0}'")]
    BadUuid(String),
    /// An operation this backend has no meaning for (a local file's admin operation on a
    /// remote backend, say).
    #[error("not supported by this storage backend: {0}")]
    Unsupported(String),
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;
