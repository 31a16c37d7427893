use svelto_core::{code, Revnum};
use svelto_dump::DumpError;
use svelto_fs::StoreError;

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
    /// A dumpstream that loads into no valid revision (svnadmin load's refusals: paths,
    /// checksums, node records out of place, a malformed UUID or mergeinfo value), in
    /// svnadmin's words.
    #[error("{0}")]
    BadDump(String),
    /// The repository's data contradicts itself (a changed-path list out of order, a replay
    /// that does not nest, a search that does not end, a file verify refuses).
    #[error("{0}")]
    Corrupt(String),
    /// A receiver (a front end's callback) stopped a walk, query or drive: it keeps its own
    /// error (a write to the client that failed) and decides what the client hears.
    #[error("{0}")]
    Stopped(String),
    /// A request the repository refuses as asked (creating a repository over one).
    #[error("{0}")]
    Refused(String),
    /// A failure Subversion has no code for: an internal inconsistency (a bug), encoding a
    /// text delta, starting a hook program.
    #[error("{0}")]
    Internal(String),
    /// A configuration file (svnserve.conf, passwd) that Subversion would refuse, or
    /// an option value Svelto cannot honour; `line` when the syntax is at fault.
    #[error("{}{}: {reason}", file.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
    Config {
        file: std::path::PathBuf,
        line: Option<usize>,
        /// The number Subversion's parser gives the same line (it does not count section
        /// header lines); what svnserve tells clients.
        svn_line: Option<usize>,
        reason: String,
    },
    /// Subversion's `SVN_ERR_FS_NOT_FOUND` (160013); `path` is an fspath.
    #[error("File not found: revision {rev}, path '{path}'")]
    NotFound { rev: Revnum, path: String },
    /// Subversion's `SVN_ERR_FS_NOT_DIRECTORY` (160016): a file where a directory was
    /// needed on the way to a path; `path` is the fspath of that file. (svnserve chains a
    /// second link, "'PATH' is not a directory in filesystem 'UUID'".)
    #[error("Failure opening '{path}' in revision {rev}")]
    NotDirectory { rev: Revnum, path: String },
    /// Subversion's `SVN_ERR_FS_NO_SUCH_REVISION` (160006): "No such revision N".
    #[error("No such revision {0}")]
    NoSuchRevision(Revnum),
    /// Also `SVN_ERR_FS_NO_SUCH_REVISION` (160006): a revision range the command refuses,
    /// with svnserve's message.
    #[error("{0}")]
    BadRevisionRange(String),
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
    /// A failure Subversion reports with its own error code ([`SvnErrorKind::code`]); the
    /// message is Subversion's wording, which clients print.
    #[error("{message}")]
    Svn { kind: SvnErrorKind, message: String },
    /// A Subversion error with the error that caused it (clients print both, outer first).
    #[error("{message}: {source}")]
    Wrapped {
        kind: SvnErrorKind,
        message: String,
        source: Box<ReposError>,
    },
}

/// The Subversion error a [`ReposError::Svn`] stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SvnErrorKind {
    /// `SVN_ERR_FS_PATH_SYNTAX`: a report's target does not exist, or the anchor would have
    /// to be replaced.
    PathSyntax,
    /// `SVN_ERR_FS_NO_SUCH_REVISION`: a revision above the youngest.
    NoSuchRevision,
    /// `SVN_ERR_FS_NOT_FOUND`: a path does not exist.
    NotFound,
    /// `SVN_ERR_REPOS_BAD_ARGS`: an unsupported depth in a report or request.
    BadArgs,
    /// `SVN_ERR_REPOS_BAD_REVISION_REPORT`: a report that does not describe a working copy.
    BadRevisionReport,
    /// `SVN_ERR_RA_SVN_REQUEST_SIZE`: a client's request beyond one of Svelto's limits.
    LimitExceeded,
    /// `SVN_ERR_FS_TXN_OUT_OF_DATE`: a commit based on an older node than the youngest.
    TxnOutOfDate,
    /// `SVN_ERR_FS_CONFLICT`: a commit and a newer revision changed the same path.
    Conflict,
    /// `SVN_ERR_FS_ALREADY_EXISTS`: adding what exists.
    AlreadyExists,
    /// `SVN_ERR_FS_NOT_DIRECTORY`.
    NotDirectory,
    /// `SVN_ERR_CHECKSUM_MISMATCH`.
    ChecksumMismatch,
    /// `SVN_ERR_BAD_PROPERTY_VALUE`.
    BadPropertyValue,
    /// `SVN_ERR_BAD_PROPERTY_VALUE_EOL`.
    BadPropertyValueEol,
    /// `SVN_ERR_SVNDIFF_*` (the code given): a client's text delta that does not decode or
    /// apply.
    BadDelta(u32),
    /// `SVN_ERR_FS_GENERAL`.
    FsGeneral,
    /// `SVN_ERR_BAD_DATE`.
    BadDate,
    /// `SVN_ERR_FS_NOT_FILE`.
    NotFile,
    /// `SVN_ERR_FS_OUT_OF_DATE` (locks).
    OutOfDate,
    /// `SVN_ERR_FS_PATH_ALREADY_LOCKED`.
    PathAlreadyLocked,
    /// `SVN_ERR_FS_NO_SUCH_LOCK`.
    NoSuchLock,
    /// `SVN_ERR_FS_NO_USER`.
    NoUser,
    /// `SVN_ERR_FS_LOCK_OWNER_MISMATCH`.
    LockOwnerMismatch,
    /// `SVN_ERR_FS_BAD_LOCK_TOKEN`.
    BadLockToken,
    /// `SVN_ERR_REPOS_HOOK_FAILURE`: a hook blocked the operation or could not run.
    HookFailure,
    /// `SVN_ERR_REPOS_POST_COMMIT_HOOK_FAILED`: the commit stands, its post-commit hook
    /// failed.
    PostCommitHookFailed,
    /// `SVN_ERR_REPOS_DISABLED_FEATURE`: no pre-revprop-change hook.
    DisabledFeature,
    /// `SVN_ERR_REPOS_POST_LOCK_HOOK_FAILED`: the paths were locked, the post-lock hook
    /// failed.
    PostLockHookFailed,
    /// `SVN_ERR_REPOS_POST_UNLOCK_HOOK_FAILED`.
    PostUnlockHookFailed,
    /// `SVN_ERR_MALFORMED_FILE`: a configuration file that does not parse.
    BadConfig,
    /// `SVN_ERR_FS_PROP_BASEVALUE_MISMATCH`: an atomic revision property change whose
    /// expected old value is not the current one.
    PropBaseValueMismatch,
    /// `SVN_ERR_AUTHZ_ROOT_UNREADABLE`: path-based authorization hides the root of an edit.
    AuthzRootUnreadable,
    /// `SVN_ERR_AUTHZ_UNREADABLE`: path-based authorization hides a path.
    AuthzUnreadable,
    /// `SVN_ERR_AUTHZ_UNWRITABLE`: path-based authorization forbids writing a path.
    AuthzUnwritable,
    /// `SVN_ERR_BAD_UUID`: a malformed repository UUID.
    BadUuid,
    /// `SVN_ERR_IO_INCONSISTENT_EOL`: a text that mixes line ending styles.
    InconsistentEol,
    /// `SVN_ERR_INCORRECT_PARAMS`.
    IncorrectParams,
    /// `SVN_ERR_NODE_UNEXPECTED_KIND`: a file where a directory was expected.
    NodeUnexpectedKind,
    /// `SVN_ERR_DIR_NOT_EMPTY`.
    DirNotEmpty,
    /// `SVN_ERR_RA_UUID_MISMATCH`.
    UuidMismatch,
    /// `SVN_ERR_UNSUPPORTED_FEATURE`.
    UnsupportedFeature,
    /// `SVN_ERR_ILLEGAL_TARGET`.
    IllegalTarget,
    /// `SVN_ERR_XML_UNESCAPABLE_DATA`: a lock comment with control characters.
    XmlUnescapableData,
    /// `SVN_ERR_RA_NOT_AUTHORIZED`: the user may not do this.
    NotAuthorized,
}

impl SvnErrorKind {
    /// Subversion's numeric error code.
    pub fn code(self) -> u32 {
        match self {
            SvnErrorKind::PathSyntax => code::FS_PATH_SYNTAX,
            SvnErrorKind::NoSuchRevision => code::FS_NO_SUCH_REVISION,
            SvnErrorKind::NotFound => code::FS_NOT_FOUND,
            SvnErrorKind::BadArgs => code::REPOS_BAD_ARGS,
            SvnErrorKind::BadRevisionReport => code::REPOS_BAD_REVISION_REPORT,
            SvnErrorKind::LimitExceeded => code::RA_SVN_REQUEST_SIZE,
            SvnErrorKind::TxnOutOfDate => code::FS_TXN_OUT_OF_DATE,
            SvnErrorKind::Conflict => code::FS_CONFLICT,
            SvnErrorKind::AlreadyExists => code::FS_ALREADY_EXISTS,
            SvnErrorKind::NotDirectory => code::FS_NOT_DIRECTORY,
            SvnErrorKind::ChecksumMismatch => code::CHECKSUM_MISMATCH,
            SvnErrorKind::BadPropertyValue => code::BAD_PROPERTY_VALUE,
            SvnErrorKind::BadPropertyValueEol => code::BAD_PROPERTY_VALUE_EOL,
            SvnErrorKind::BadDelta(code) => code,
            SvnErrorKind::FsGeneral => code::FS_GENERAL,
            SvnErrorKind::BadDate => code::BAD_DATE,
            SvnErrorKind::NotFile => code::FS_NOT_FILE,
            SvnErrorKind::OutOfDate => code::FS_OUT_OF_DATE,
            SvnErrorKind::PathAlreadyLocked => code::FS_PATH_ALREADY_LOCKED,
            SvnErrorKind::NoSuchLock => code::FS_NO_SUCH_LOCK,
            SvnErrorKind::NoUser => code::FS_NO_USER,
            SvnErrorKind::LockOwnerMismatch => code::FS_LOCK_OWNER_MISMATCH,
            SvnErrorKind::BadLockToken => code::FS_BAD_LOCK_TOKEN,
            SvnErrorKind::HookFailure => code::REPOS_HOOK_FAILURE,
            SvnErrorKind::PostCommitHookFailed => code::REPOS_POST_COMMIT_HOOK_FAILED,
            SvnErrorKind::DisabledFeature => code::REPOS_DISABLED_FEATURE,
            SvnErrorKind::PostLockHookFailed => code::REPOS_POST_LOCK_HOOK_FAILED,
            SvnErrorKind::PostUnlockHookFailed => code::REPOS_POST_UNLOCK_HOOK_FAILED,
            SvnErrorKind::BadConfig => code::MALFORMED_FILE,
            SvnErrorKind::PropBaseValueMismatch => code::FS_PROP_BASEVALUE_MISMATCH,
            SvnErrorKind::AuthzRootUnreadable => code::AUTHZ_ROOT_UNREADABLE,
            SvnErrorKind::AuthzUnreadable => code::AUTHZ_UNREADABLE,
            SvnErrorKind::AuthzUnwritable => code::AUTHZ_UNWRITABLE,
            SvnErrorKind::BadUuid => code::BAD_UUID,
            SvnErrorKind::InconsistentEol => code::IO_INCONSISTENT_EOL,
            SvnErrorKind::IncorrectParams => code::INCORRECT_PARAMS,
            SvnErrorKind::NodeUnexpectedKind => code::NODE_UNEXPECTED_KIND,
            SvnErrorKind::DirNotEmpty => code::DIR_NOT_EMPTY,
            SvnErrorKind::UuidMismatch => code::RA_UUID_MISMATCH,
            SvnErrorKind::UnsupportedFeature => code::UNSUPPORTED_FEATURE,
            SvnErrorKind::IllegalTarget => code::ILLEGAL_TARGET,
            SvnErrorKind::XmlUnescapableData => code::XML_UNESCAPABLE_DATA,
            SvnErrorKind::NotAuthorized => code::RA_NOT_AUTHORIZED,
        }
    }
}

pub type Result<T, E = ReposError> = std::result::Result<T, E>;

impl ReposError {
    pub fn svn(kind: SvnErrorKind, message: impl Into<String>) -> ReposError {
        ReposError::Svn {
            kind,
            message: message.into(),
        }
    }
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

    /// Whether this is the service's refusal of a path the user may not read
    /// ([`crate::service::unreadable_path`]): a front end answers it in its own form.
    pub fn is_unreadable(&self) -> bool {
        match self {
            ReposError::Svn { kind, .. } => *kind == SvnErrorKind::AuthzUnreadable,
            ReposError::AtPath { err, .. } | ReposError::AtRev { err, .. } => err.is_unreadable(),
            _ => false,
        }
    }
}

impl ReposError {
    /// What a client is told of this error: Subversion's error chain, outermost first, each
    /// link an error code and the message the stock client prints (svnserve's wording).
    pub fn chain(&self) -> Vec<(u32, String)> {
        let mut chain = Vec::new();
        self.push_chain(&mut chain);
        chain
    }

    fn push_chain(&self, chain: &mut Vec<(u32, String)>) {
        let link = match self {
            ReposError::Store(s) => store_link(s),
            ReposError::AtPath { err, .. } | ReposError::AtRev { err, .. } => {
                return err.push_chain(chain)
            }
            ReposError::NotFound { rev, path } => (
                code::FS_NOT_FOUND,
                format!("File not found: revision {rev}, path '{path}'"),
            ),
            ReposError::NotDirectory { .. } => (code::FS_NOT_DIRECTORY, self.to_string()),
            ReposError::NoSuchRevision(r) => {
                (code::FS_NO_SUCH_REVISION, format!("No such revision {r}"))
            }
            ReposError::BadRevisionRange(m) => (code::FS_NO_SUCH_REVISION, m.clone()),
            ReposError::PathNotFound { path } => {
                (code::FS_NOT_FOUND, format!("'{path}' path not found"))
            }
            ReposError::NotFile { .. } => (code::FS_NOT_FILE, self.to_string()),
            ReposError::Unsupported(m) => (code::UNSUPPORTED_FEATURE, m.to_string()),
            ReposError::Svn { kind, message } => (kind.code(), message.clone()),
            ReposError::Wrapped {
                kind,
                message,
                source,
            } => {
                chain.push((kind.code(), message.clone()));
                return source.push_chain(chain);
            }
            other => (code::FS_GENERAL, other.to_string()),
        };
        chain.push(link);
    }
}

/// Subversion's code and message for a storage error, in the words the stock client prints
/// for svnserve.
fn store_link(e: &StoreError) -> (u32, String) {
    match e {
        StoreError::NoSuchRevision(r) => {
            (code::FS_NO_SUCH_REVISION, format!("No such revision {r}"))
        }
        StoreError::PathNotFound { rev, path } => (
            code::FS_NOT_FOUND,
            format!("File not found: revision {rev}, path '/{path}'"),
        ),
        StoreError::NotADirectory(p) => (
            code::FS_NOT_DIRECTORY,
            format!("Path '/{p}' not a directory"),
        ),
        StoreError::NotAFile(p) => (
            code::FS_NOT_FILE,
            format!("Attempted to get textual contents of a *non*-file node '/{p}'"),
        ),
        StoreError::Corrupt { .. } => (code::FS_CORRUPT, e.to_string()),
        StoreError::Unsupported(_) => (code::UNSUPPORTED_FEATURE, e.to_string()),
        _ => (code::FS_GENERAL, e.to_string()),
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
