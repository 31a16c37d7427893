//! What a command can end with besides success: an error the client prints (the
//! connection goes on), or a fatal one that ends the connection.

use crate::conn::ConnError;
use svelto_repos::ReposError;
use svelto_store::StoreError;
use svelto_wire::{ErrorLink, WireError};

/// Subversion's error codes (protocol doc 3.3), from their one home.
pub use svelto_core::code;

/// An error the client is told about; the connection continues.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CmdError {
    /// Outermost first.
    pub chain: Vec<ErrorLink>,
}

impl CmdError {
    pub fn new(code: u32, message: impl Into<String>) -> Self {
        CmdError {
            chain: vec![ErrorLink::new(u64::from(code), message.into())],
        }
    }

    pub fn from_chain(chain: Vec<ErrorLink>) -> Self {
        CmdError { chain }
    }

    pub fn message(&self) -> String {
        self.chain
            .iter()
            .map(|l| String::from_utf8_lossy(&l.message).into_owned())
            .collect::<Vec<_>>()
            .join(": ")
    }
}

/// How a command failed.
#[derive(Debug)]
pub enum Failure {
    /// Sent as `( failure ... )`; the connection goes on.
    Cmd(CmdError),
    /// The connection ends (after a best-effort failure message when it is a protocol error).
    Fatal(ConnError),
}

pub type CmdResult<T> = Result<T, Failure>;

impl From<CmdError> for Failure {
    fn from(e: CmdError) -> Self {
        Failure::Cmd(e)
    }
}

impl From<ConnError> for Failure {
    fn from(e: ConnError) -> Self {
        Failure::Fatal(e)
    }
}

impl From<WireError> for Failure {
    fn from(e: WireError) -> Self {
        Failure::Fatal(ConnError::Wire(e))
    }
}

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Self {
        Failure::Fatal(ConnError::Io(e))
    }
}

impl From<StoreError> for Failure {
    fn from(e: StoreError) -> Self {
        Failure::Cmd(store_error(&e))
    }
}

impl From<ReposError> for Failure {
    fn from(e: ReposError) -> Self {
        Failure::Cmd(repos_error(&e))
    }
}

/// Subversion's code and message for a storage error, with the wording the stock client
/// prints for svnserve.
pub fn store_error(e: &StoreError) -> CmdError {
    match e {
        StoreError::NoSuchRevision(r) => {
            CmdError::new(code::FS_NO_SUCH_REVISION, format!("No such revision {r}"))
        }
        StoreError::PathNotFound { rev, path } => CmdError::new(
            code::FS_NOT_FOUND,
            format!("File not found: revision {rev}, path '/{path}'"),
        ),
        StoreError::NotADirectory(p) => CmdError::new(
            code::FS_NOT_DIRECTORY,
            format!("Path '/{p}' not a directory"),
        ),
        StoreError::NotAFile(p) => CmdError::new(
            code::FS_NOT_FILE,
            format!("Attempted to get textual contents of a *non*-file node '/{p}'"),
        ),
        StoreError::Corrupt { .. } => CmdError::new(code::FS_CORRUPT, e.to_string()),
        _ => CmdError::new(code::FS_GENERAL, e.to_string()),
    }
}

pub fn repos_error(e: &ReposError) -> CmdError {
    match e {
        ReposError::Store(s) => store_error(s),
        ReposError::AtPath { err, .. } | ReposError::AtRev { err, .. } => repos_error(err),
        ReposError::NotFound { rev, path } => CmdError::new(
            code::FS_NOT_FOUND,
            format!("File not found: revision {rev}, path '{path}'"),
        ),
        ReposError::NotDirectory { .. } => CmdError::new(code::FS_NOT_DIRECTORY, e.to_string()),
        ReposError::NoSuchRevision(r) => {
            CmdError::new(code::FS_NO_SUCH_REVISION, format!("No such revision {r}"))
        }
        ReposError::BadRevisionRange(m) => CmdError::new(code::FS_NO_SUCH_REVISION, m.clone()),
        ReposError::PathNotFound { path } => {
            CmdError::new(code::FS_NOT_FOUND, format!("'{path}' path not found"))
        }
        ReposError::NotFile { .. } => CmdError::new(code::FS_NOT_FILE, e.to_string()),
        ReposError::Unsupported(m) => CmdError::new(code::UNSUPPORTED_FEATURE, *m),
        ReposError::Svn { kind, message } => CmdError::new(kind.code(), message.clone()),
        ReposError::Wrapped {
            kind,
            message,
            source,
        } => {
            let mut chain = vec![svelto_wire::ErrorLink::new(
                u64::from(kind.code()),
                message.clone(),
            )];
            chain.extend(repos_error(source).chain);
            CmdError::from_chain(chain)
        }
        other => CmdError::new(code::FS_GENERAL, other.to_string()),
    }
}
