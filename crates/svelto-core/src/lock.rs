//! A lock on a path (`svn lock`): what the storage keeps of it and the server reports.

/// One lock. `path` is a repository relpath; dates are in `svn:date` format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lock {
    pub path: String,
    pub token: String,
    pub owner: String,
    pub comment: Option<String>,
    pub created: String,
    /// None: the lock never expires.
    pub expires: Option<String>,
}
