//! Errors as svnlook prints them, and Subversion's codes for what the store reports.

use crate::*;

/// An error as svnlook prints it: each line `svelto look: E<code>: <message>`.
#[derive(Debug)]
pub struct LookError {
    /// Outermost first.
    pub chain: Vec<(u32, String)>,
}

impl LookError {
    pub fn new(code: u32, msg: impl Into<String>) -> Self {
        LookError {
            chain: vec![(code, msg.into())],
        }
    }
    /// An argument error: the message under "Try 'svelto look help' for more info".
    pub fn args(code: u32, msg: &str) -> Self {
        LookError {
            chain: vec![
                (code, format!("Try '{PROG} help' for more info")),
                (code, msg.to_string()),
            ],
        }
    }
}

/// An operating-system error number (APR passes errno through), not one of Subversion's.
pub const E_IO: u32 = 2;

impl From<StoreError> for LookError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::NoSuchRevision(r) => {
                LookError::new(code::FS_NO_SUCH_REVISION, format!("No such revision {r}"))
            }
            StoreError::NoSuchTxn(t) if !fsfs_txn_id(&t) => {
                LookError::new(code::FS_MALFORMED_TXN_ID, format!("malformed txn id '{t}'"))
            }
            StoreError::NoSuchTxn(t) => LookError::new(
                code::FS_NO_SUCH_TRANSACTION,
                format!("No such transaction '{t}'"),
            ),
            other => LookError::new(code::FS_CORRUPT, other.to_string()),
        }
    }
}

/// A transaction name FSFS could have made (`REV-SEQ`, the sequence in base 36): other
/// names are "malformed" to svnlook rather than missing.
pub(crate) fn fsfs_txn_id(name: &str) -> bool {
    match name.split_once('-') {
        Some((rev, seq)) => {
            !rev.is_empty()
                && rev.bytes().all(|b| b.is_ascii_digit())
                && !seq.is_empty()
                && seq
                    .bytes()
                    .all(|b| b.is_ascii_digit() || b.is_ascii_lowercase())
        }
        None => false,
    }
}

impl From<ReposError> for LookError {
    fn from(e: ReposError) -> Self {
        match e {
            ReposError::Store(s) => s.into(),
            ReposError::NoSuchRevision(r) => {
                LookError::new(code::FS_NO_SUCH_REVISION, format!("No such revision {r}"))
            }
            ReposError::NotFound { .. } | ReposError::NotDirectory { .. } => {
                LookError::new(code::FS_NOT_FOUND, e.to_string())
            }
            ReposError::Svn { kind, message } => LookError::new(kind.code(), message),
            other => LookError::new(code::FS_CORRUPT, other.to_string()),
        }
    }
}

impl From<io::Error> for LookError {
    fn from(e: io::Error) -> Self {
        LookError::new(E_IO, format!("Write error: {e}"))
    }
}

pub type Result<T, E = LookError> = std::result::Result<T, E>;
