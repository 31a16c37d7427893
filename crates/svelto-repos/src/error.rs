use svelto_core::Revnum;
use svelto_dump::DumpError;
use svelto_store::StoreError;

/// Errors of repository operations, each naming the revision and path involved.
#[derive(Debug, thiserror::Error)]
pub enum ReposError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("malformed dumpfile: {0}")]
    Dump(DumpError),
    #[error("revision {rev}, path '{path}': {err}")]
    AtPath {
        rev: Revnum,
        path: String,
        err: Box<ReposError>,
    },
    #[error("revision {rev}: {err}")]
    AtRev { rev: Revnum, err: Box<ReposError> },
    #[error("{0}")]
    Invalid(String),
    /// A path missing from a revision (Subversion's `SVN_ERR_FS_NOT_FOUND`, 160013);
    /// `path` is an fspath.
    #[error("File not found: revision {rev}, path '{path}'")]
    NotFound { rev: Revnum, path: String },
    /// A path goes through a file (`SVN_ERR_FS_NOT_DIRECTORY`, 160016, as FSFS opens
    /// paths); `path` is the fspath of the file.
    #[error("Failure opening '{path}' in revision {rev}")]
    NotDirectory { rev: Revnum, path: String },
    /// A missing path, in `get-iprops`' words (also 160013); `path` is an fspath.
    #[error("'{path}' path not found")]
    PathNotFound { path: String },
    /// A file was needed (`SVN_ERR_FS_NOT_FILE`, 160017); `path` is an fspath.
    #[error("'{path}' is not a file in revision {rev}")]
    NotFile { rev: Revnum, path: String },
    /// A combination of options Subversion does not support (`SVN_ERR_UNSUPPORTED_FEATURE`,
    /// 200007).
    #[error("{0}")]
    Unsupported(&'static str),
    #[error("{context}: {err}")]
    Io {
        context: String,
        err: std::io::Error,
    },
}

pub type Result<T, E = ReposError> = std::result::Result<T, E>;

impl ReposError {
    pub fn at_path(self, rev: Revnum, path: &str) -> ReposError {
        ReposError::AtPath {
            rev,
            path: path.to_string(),
            err: Box::new(self),
        }
    }
    pub fn at_rev(self, rev: Revnum) -> ReposError {
        ReposError::AtRev {
            rev,
            err: Box::new(self),
        }
    }
}

pub(crate) fn io(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> ReposError {
    let context = context.into();
    move |err| ReposError::Io { context, err }
}

impl From<DumpError> for ReposError {
    fn from(e: DumpError) -> Self {
        ReposError::Dump(e)
    }
}
