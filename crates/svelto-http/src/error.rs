//! Errors as mod_dav_svn sends them: an HTTP status and, for Subversion's errors, a
//! `D:error` body whose `m:human-readable` carries the Subversion error code and message the
//! client prints (`svn: E160013: ...`).

use crate::xml::esc;
use crate::Reply;
use hyper::StatusCode;
use svelto_core::code;
use svelto_repos::ReposError;

/// A request that cannot be answered as asked.
#[derive(Debug, Clone)]
pub struct HttpError {
    pub status: StatusCode,
    /// Subversion's error code, when there is one (0 otherwise, as mod_dav_svn writes).
    pub code: u32,
    pub message: String,
}

pub(crate) use svelto_core::code::{
    FS_NOT_FOUND, FS_NO_SUCH_REVISION, UNSUPPORTED_FEATURE, XML_MALFORMED,
};

impl HttpError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> HttpError {
        HttpError {
            status,
            code: 0,
            message: message.into(),
        }
    }

    pub fn svn(status: StatusCode, code: u32, message: impl Into<String>) -> HttpError {
        HttpError {
            status,
            code,
            message: message.into(),
        }
    }

    pub fn bad_request(message: impl Into<String>) -> HttpError {
        HttpError::new(StatusCode::BAD_REQUEST, message)
    }

    pub fn not_found(message: impl Into<String>) -> HttpError {
        HttpError::svn(StatusCode::NOT_FOUND, FS_NOT_FOUND, message)
    }

    pub fn malformed_xml(message: impl Into<String>) -> HttpError {
        HttpError::svn(StatusCode::BAD_REQUEST, XML_MALFORMED, message)
    }

    /// The response: mod_dav_svn's error document.
    pub(crate) fn reply(&self) -> Reply {
        let body = format!(
            "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n\
             <D:error xmlns:D=\"DAV:\" xmlns:m=\"http://apache.org/dav/xmlns\" xmlns:C=\"svn:\">\n\
             <C:error/>\n\
             <m:human-readable errcode=\"{}\">\n{}\n</m:human-readable>\n\
             </D:error>\n",
            self.code,
            esc(&self.message)
        );
        let reply = Reply::xml(self.status, body.into_bytes());
        if self.status == StatusCode::UNAUTHORIZED {
            // What mod_authz_svn's Basic setup asks; credentials are not checked over HTTP yet.
            return reply.header("www-authenticate", "Basic realm=\"Subversion repository\"");
        }
        reply
    }
}

impl std::fmt::Display for HttpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}): {}", self.status, self.code, self.message)
    }
}

impl std::error::Error for HttpError {}

impl From<std::io::Error> for HttpError {
    fn from(e: std::io::Error) -> Self {
        HttpError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string())
    }
}

impl From<svelto_store::StoreError> for HttpError {
    fn from(e: svelto_store::StoreError) -> Self {
        HttpError::from(ReposError::from(e))
    }
}

/// The Subversion error code of a repository error, as svnserve would send it.
pub(crate) fn repos_code(e: &ReposError) -> u32 {
    match e {
        ReposError::Svn { kind, .. } | ReposError::Wrapped { kind, .. } => kind.code(),
        ReposError::NotFound { .. } | ReposError::PathNotFound { .. } => FS_NOT_FOUND,
        ReposError::NotDirectory { .. } => code::FS_NOT_DIRECTORY,
        ReposError::NoSuchRevision(_) | ReposError::BadRevisionRange(_) => FS_NO_SUCH_REVISION,
        ReposError::NotFile { .. } => code::FS_NOT_FILE,
        ReposError::Unsupported(_) => UNSUPPORTED_FEATURE,
        ReposError::AtPath { err, .. } | ReposError::AtRev { err, .. } => repos_code(err),
        _ => code::FS_GENERAL,
    }
}

impl From<ReposError> for HttpError {
    fn from(e: ReposError) -> Self {
        let code = repos_code(&e);
        let status = match code {
            FS_NOT_FOUND => StatusCode::NOT_FOUND,
            // Bad arguments and bad reports are the client's.
            code::REPOS_BAD_ARGS | code::REPOS_BAD_REVISION_REPORT | code::FS_PATH_SYNTAX => {
                StatusCode::BAD_REQUEST
            }
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        HttpError::svn(status, code, e.to_string())
    }
}

/// A failed write of a response body, as the repository callbacks report it.
pub(crate) fn write_err(e: std::io::Error) -> ReposError {
    ReposError::Io {
        context: "writing the response".into(),
        err: e,
    }
}
