//! Errors as mod_dav_svn sends them: an HTTP status and, for Subversion's errors, a
//! `D:error` body whose `m:human-readable` carries the Subversion error code and message the
//! client prints (`svn: E160013: ...`).

use crate::xml::{esc, quote};
use crate::Reply;
use hyper::StatusCode;
use svelto_core::code;
use svelto_repos::ReposError;

/// APR's ENOENT, the code mod_dav_svn gives a missing repository.
const APR_ENOENT: u32 = 2;

/// A request that cannot be answered as asked.
#[derive(Debug, Clone)]
pub struct HttpError {
    pub status: StatusCode,
    /// Subversion's error code, when there is one (0 otherwise, as mod_dav_svn writes).
    pub code: u32,
    pub message: String,
    /// An access refusal (401 or 403) answered as Apache answers it: its HTML page rather
    /// than an error document, so ra_serf prompts for credentials (401) or prints its own
    /// "Access to '...' forbidden" (403); with the realm of the `WWW-Authenticate: Basic`
    /// challenge when logins are possible.
    pub refusal: Option<Refusal>,
}

/// See [`HttpError::refusal`]: Apache's own HTML page for a status (a refusal, or a
/// failure mod_dav answers with its status alone).
#[derive(Debug, Clone)]
pub struct Refusal {
    /// The realm of a `WWW-Authenticate: Basic` challenge.
    pub realm: Option<String>,
    /// The page's text is HTML already (Apache's `<br />`), not to be escaped.
    pub html: bool,
    /// The `Allow` header Apache sends with a 405 or 501 page.
    pub allow: Option<&'static str>,
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
            refusal: None,
        }
    }

    pub fn svn(status: StatusCode, code: u32, message: impl Into<String>) -> HttpError {
        HttpError {
            status,
            code,
            message: message.into(),
            refusal: None,
        }
    }

    /// mod_dav_svn's answer to a URL naming no repository under the parent path (the
    /// cause, ENOENT, as the code), naming neither the name nor a path.
    pub fn missing_repository() -> HttpError {
        HttpError::svn(
            StatusCode::NOT_FOUND,
            APR_ENOENT,
            "Could not find the requested SVN filesystem",
        )
    }

    /// Whether this is [`HttpError::missing_repository`].
    pub fn is_missing_repository(&self) -> bool {
        self.status == StatusCode::NOT_FOUND
            && self.code == APR_ENOENT
            && self.refusal.is_none()
            && self.message == "Could not find the requested SVN filesystem"
    }

    /// A 401 or 403 of the access checks (see [`HttpError::refusal`]).
    pub fn refused(status: StatusCode, realm: Option<String>) -> HttpError {
        let message = if status == StatusCode::UNAUTHORIZED {
            "This server could not verify that you\nare authorized to access the document\n\
             requested.  Either you supplied the wrong\ncredentials (e.g., bad password), or your\n\
             browser doesn't understand how to supply\nthe credentials required."
        } else {
            "You don't have permission to access this resource."
        };
        HttpError {
            status,
            code: 0,
            message: message.into(),
            refusal: Some(Refusal {
                realm,
                html: false,
                allow: None,
            }),
        }
    }

    /// Apache's page for `status` with `html` as its text (mod_dav answering a failure
    /// with its status alone: `Locked`, `Bad Request`, `Method Not Allowed`...).
    pub fn page(status: StatusCode, html: &str) -> HttpError {
        HttpError {
            status,
            code: 0,
            message: html.into(),
            refusal: Some(Refusal {
                realm: None,
                html: true,
                allow: None,
            }),
        }
    }

    /// [`HttpError::page`] of a 405 or 501 for `method`, with the `Allow: TRACE` Apache
    /// sends for a resource mod_dav will not serve it on.
    pub fn not_allowed(status: StatusCode, method: &str) -> HttpError {
        let text = if status == StatusCode::NOT_IMPLEMENTED {
            format!("{method} not supported for current URL.<br />\n")
        } else {
            format!("The requested method {method} is not allowed for this URL.")
        };
        let mut e = HttpError::page(status, &text);
        if let Some(r) = e.refusal.as_mut() {
            r.allow = Some("TRACE");
        }
        e
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

    /// The response: mod_dav_svn's error document, or Apache's page for a refusal.
    /// The response as Apache writes it: mod_dav_svn's error document, or Apache's page
    /// for a refusal.
    fn document(&self) -> Reply {
        if let Some(r) = &self.refusal {
            let title = format!(
                "{} {}",
                self.status.as_u16(),
                self.status.canonical_reason().unwrap_or("")
            );
            let body = format!(
                "<!DOCTYPE HTML PUBLIC \"-//W3C//DTD HTML 4.01//EN\" \"http://www.w3.org/TR/html4/strict.dtd\">\n\
                 <html><head>\n<title>{title}</title>\n</head><body>\n<h1>{}</h1>\n<p>{}</p>\n</body></html>\n",
                self.status.canonical_reason().unwrap_or(""),
                if r.html {
                    std::borrow::Cow::Borrowed(self.message.as_str())
                } else {
                    esc(&self.message)
                }
            );
            let reply = Reply::new(
                self.status,
                "text/html; charset=iso-8859-1",
                body.into_bytes(),
            );
            let reply = match r.allow {
                Some(allow) => reply.header("allow", allow),
                None => reply,
            };
            return match &r.realm {
                Some(realm) => reply.header(
                    "www-authenticate",
                    format!("Basic realm=\"{}\"", realm.replace(['"', '\\'], "")),
                ),
                None => reply,
            };
        }
        let body = format!(
            "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n\
             <D:error xmlns:D=\"DAV:\" xmlns:m=\"http://apache.org/dav/xmlns\" xmlns:C=\"svn:\">\n\
             <C:error/>\n\
             <m:human-readable errcode=\"{}\">\n{}\n</m:human-readable>\n\
             </D:error>\n",
            self.code,
            quote(&self.message, false)
        );
        Reply::xml(self.status, body.into_bytes())
    }

    /// The response, with the error noted for the request log.
    pub(crate) fn reply(&self) -> Reply {
        let mut reply = self.document();
        reply.note.error = Some((self.code, self.message.clone()));
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

impl From<crate::xml::Malformed> for HttpError {
    fn from(e: crate::xml::Malformed) -> Self {
        HttpError::malformed_xml(e.0)
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
        // The store's (a revision or path it does not have...), as svnserve's chain says.
        ReposError::Store(_) => e.chain().first().map_or(code::FS_GENERAL, |link| link.0),
        _ => code::FS_GENERAL,
    }
}

impl From<ReposError> for HttpError {
    fn from(e: ReposError) -> Self {
        let code = repos_code(&e);
        // mod_dav_svn's `dav_svn__convert_err`, then the client's own mistakes.
        let status = match code {
            FS_NOT_FOUND | FS_NO_SUCH_REVISION => StatusCode::NOT_FOUND,
            UNSUPPORTED_FEATURE => StatusCode::NOT_IMPLEMENTED,
            code::FS_LOCK_OWNER_MISMATCH | code::FS_PATH_ALREADY_LOCKED => StatusCode::LOCKED,
            code::FS_PROP_BASEVALUE_MISMATCH => StatusCode::PRECONDITION_FAILED,
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
