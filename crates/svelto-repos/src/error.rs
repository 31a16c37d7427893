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
