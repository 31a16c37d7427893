//! The client's errors: each names what failed and where.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("bad URL '{url}': {reason}")]
    Url { url: String, reason: String },
    #[error("cannot connect to {addr}: {source}")]
    Connect {
        addr: String,
        source: std::io::Error,
    },
    #[error("connection to {addr}: {source}")]
    Io {
        addr: String,
        source: std::io::Error,
    },
    /// `svn+NAME://`: the tunnel agent could not be started, or the session through it
    /// failed (then `what` has the agent's exit status and stderr).
    #[error("tunnel agent `{command}`: {what}")]
    Tunnel { command: String, what: String },
    #[error("{addr} closed the connection {while_}")]
    Closed { addr: String, while_: String },
    #[error("the server sent something unexpected {while_}: {what}")]
    Protocol { while_: String, what: String },
    /// A failure the server reported: its error chain, outermost first.
    #[error("{}", .chain.iter().map(|(code, msg)| format!("E{code}: {msg}")).collect::<Vec<_>>().join("\n"))]
    Server { chain: Vec<(u64, String)> },
    #[error("{0}")]
    Usage(String),
    /// An HTTP answer that is a failure: its status, what was asked and the server's message.
    #[error("{0}")]
    Http(String),
    #[error("{path}: {source}")]
    File {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A file or directory the checkout would write stands there already, unversioned.
    #[error(
        "'{}' is in the way (it exists and is not versioned): move it away, or give --force \
         to take it as it is (a file where a file goes, a directory where a directory goes)",
        .path.display()
    )]
    Obstructed { path: PathBuf },
    #[error("text of '{path}': {source}")]
    Delta {
        path: String,
        source: svelto_delta::DeltaError,
    },
    #[error("checksum mismatch for '{path}': expected {expected}, actual {actual}")]
    Checksum {
        path: String,
        expected: String,
        actual: String,
    },
    #[error("working copy database {}: {}", .path.display(), db_message(.source))]
    Db {
        path: PathBuf,
        source: rusqlite::Error,
    },
}

pub type Result<T> = std::result::Result<T, Error>;

/// Wraps an I/O error with the path it happened on.
pub fn file_err(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> Error {
    let path = path.into();
    move |source| Error::File { path, source }
}

/// An I/O failure talking to `addr`; a read or write that timed out (the `http-timeout`
/// of the `servers` configuration: nothing came for that long) says so.
pub fn io_err(addr: impl Into<String>, source: std::io::Error) -> Error {
    let timed_out = matches!(
        source.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    ) || source.to_string().starts_with("timeout");
    let source = if timed_out {
        std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            "timed out: nothing came for the http-timeout of the servers configuration \
             (default 600 s; the network or the server stopped)",
        )
    } else {
        source
    };
    Error::Io {
        addr: addr.into(),
        source,
    }
}

/// SQLite's words, with the system's where the disk is full (SQLite says "database or disk
/// is full", whichever it was).
fn db_message(source: &rusqlite::Error) -> String {
    match source.sqlite_error_code() {
        Some(rusqlite::ErrorCode::DiskFull) => {
            format!("{source} (No space left on device)")
        }
        _ => source.to_string(),
    }
}
