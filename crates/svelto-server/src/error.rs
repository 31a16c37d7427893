//! What a command can end with besides success: an error the client prints (the
//! connection goes on), or a fatal one that ends the connection.

use crate::conn::ConnError;
use svelto_repos::ReposError;
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
        Failure::Fatal(ConnError::from(e))
    }
}

impl From<ReposError> for Failure {
    fn from(e: ReposError) -> Self {
        Failure::Cmd(repos_error(&e))
    }
}

/// What the client is told of a repository error: its Subversion error chain.
pub fn repos_error(e: &ReposError) -> CmdError {
    CmdError::from_chain(
        e.chain()
            .into_iter()
            .map(|(code, message)| ErrorLink::new(u64::from(code), message))
            .collect(),
    )
}
