//! Errors as mod_dav_svn sends them: an HTTP status and, for Subversion's errors, a
//! `D:error` body whose `m:human-readable` carries the Subversion error code and message the
//! client prints (`svn: E160013: ...`).

use crate::xml::esc;
use crate::Reply;
use hyper::StatusCode;
use svelto_repos::ReposError;

/// A request that cannot be answered as asked.
#[derive(Debug, Clone)]
pub struct HttpError {
    pub status: StatusCode,
    /// Subversion's error code, when there is one (0 otherwise, as mod_dav_svn writes).
    pub code: u32,
    pub message: String,
}

/// `SVN_ERR_FS_NOT_FOUND`.
pub(crate) const FS_NOT_FOUND: u32 = 160013;
/// `SVN_ERR_FS_NO_SUCH_REVISION`.
pub(crate) const FS_NO_SUCH_REVISION: u32 = 160006;
/// `SVN_ERR_UNSUPPORTED_FEATURE`.
pub(crate) const UNSUPPORTED_FEATURE: u32 = 200007;
/// `SVN_ERR_XML_MALFORMED`.
pub(crate) const XML_MALFORMED: u32 = 130003;

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
        ReposError::NotDirectory { .. } => 160016,
        ReposError::NoSuchRevision(_) | ReposError::BadRevisionRange(_) => FS_NO_SUCH_REVISION,
        ReposError::NotFile { .. } => 160017,
        ReposError::Unsupported(_) => UNSUPPORTED_FEATURE,
        ReposError::AtPath { err, .. } | ReposError::AtRev { err, .. } => repos_code(err),
        _ => 160000,
    }
}

impl From<ReposError> for HttpError {
    fn from(e: ReposError) -> Self {
        let code = repos_code(&e);
        let status = match code {
            FS_NOT_FOUND => StatusCode::NOT_FOUND,
            // Bad arguments and bad reports are the client's.
            165002 | 165004 | 160005 => StatusCode::BAD_REQUEST,
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
