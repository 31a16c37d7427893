//! The web interface (`docs/web.md`): server-rendered pages over svelto-repos's reads, at
//! URLs of their own below a repository's reserved `!svn/web/` segment, and the list of
//! repositories at the parent path.
//!
//! Owns: the pages' URL space below `!svn/web/` ([`Page`], [`href`]), their HTML (maud:
//! every value from the repository is escaped by the template), the content security
//! policy every page carries ([`CSP`]), raw downloads that are never active content in the
//! interface's origin, diffs (similar), syntax highlighting (syntect, bounded and cached),
//! archives (`.tar.gz`, `.zip`) and README rendering (pulldown-cmark, raw HTML escaped).
//! Must not: decode HTTP or know about connections (svelto-http routes a request here with
//! the request's [`svelto_repos::service::Ctx`], after its authz, login and URL checks, and
//! turns the [`Response`] into its reply), or read the store other than through
//! `service::Ctx`, whose reads filter what the user may not see, as for `svn` clients.

mod archive;
mod blame;
mod browse;
mod diff;
pub mod highlight;
mod history;
mod layout;
mod lexer;
mod search;

use svelto_core::Revnum;
use svelto_repos::service::Ctx;
use svelto_repos::Result;

/// The content security policy of every page: nothing runs (no script source at all), no
/// plugin, no frame, forms and images only from the server itself. Inline styles are
/// allowed (the pages' one stylesheet is inline); no repository content reaches a page
/// unescaped, so no one can add a style either.
pub const CSP: &str = "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/// The policy of a raw file: a document opened from it is sandboxed (no script, its own
/// opaque origin), whatever a browser makes of its type.
pub const RAW_CSP: &str = "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; sandbox";

/// The pages, each a row of svelto-http's request table (`http-web-SLUG`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Page {
    /// A directory (its entries, its README) or a file (its text, its properties).
    Browse,
    /// A file's text as it is, as `text/plain`, an image, or an attachment.
    Raw,
    /// The history of a path, paged.
    Log,
    /// A revision: its message, its changed paths, its diff.
    Rev,
    /// Who changed each line of a file last.
    Blame,
    /// The changes to a path between two revisions.
    Diff,
    /// Paths and log messages matching a text.
    Search,
    /// A directory as a `.tar.gz`, or a `.zip` with `?format=zip`, streamed ([`archive`]).
    Archive,
}

impl Page {
    /// Every page, in the order of the request table.
    pub const ALL: [Page; 8] = [
        Page::Browse,
        Page::Raw,
        Page::Log,
        Page::Rev,
        Page::Blame,
        Page::Diff,
        Page::Search,
        Page::Archive,
    ];

    /// The URL segment naming the page.
    pub fn slug(self) -> &'static str {
        match self {
            Page::Browse => "browse",
            Page::Raw => "raw",
            Page::Log => "log",
            Page::Rev => "rev",
            Page::Blame => "blame",
            Page::Diff => "diff",
            Page::Search => "search",
            Page::Archive => "archive",
        }
    }

    pub fn from_slug(slug: &str) -> Option<Page> {
        Page::ALL.into_iter().find(|p| p.slug() == slug)
    }
}

/// The segment below a repository's `!svn/` that the pages live under.
pub const WEB_SEGMENT: &str = "web";

/// Where the pages are: what links are built from.
#[derive(Debug, Clone, Copy)]
pub struct Site<'a> {
    /// The URL path the repositories are under ("" or "/svn").
    pub prefix: &'a str,
    /// `PREFIX/REPO`, URL-encoded.
    pub root_href: &'a str,
    /// The repository's name under the root.
    pub repo_name: &'a str,
    /// Now, in microseconds since the epoch (what ages are counted from).
    pub now_micros: i64,
}

/// One page asked for.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    pub page: Page,
    /// The revision in the URL (None: `HEAD`, the youngest).
    pub rev: Option<Revnum>,
    /// The repository relpath ("" for the root), decoded.
    pub path: &'a str,
    /// The URL's query, still encoded.
    pub query: Option<&'a str>,
}

/// A page's answer.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub content_type: &'static str,
    /// More headers (`Content-Disposition`, ...); `Content-Security-Policy` and
    /// `X-Content-Type-Options` are among them.
    pub headers: Vec<(&'static str, String)>,
    pub body: Vec<u8>,
}

impl Response {
    /// An HTML page with the interface's policy.
    pub fn html(status: u16, body: String) -> Response {
        Response {
            status,
            content_type: "text/html; charset=utf-8",
            headers: vec![
                ("content-security-policy", CSP.to_string()),
                ("x-content-type-options", "nosniff".to_string()),
                ("referrer-policy", "same-origin".to_string()),
                ("cache-control", "no-cache".to_string()),
            ],
            body: body.into_bytes(),
        }
    }
}

/// The link to `page` of `path` at `rev` (None: HEAD) in the repository at `root_href`.
pub fn href(root_href: &str, page: Page, rev: Option<Revnum>, path: &str) -> String {
    let mut out = String::with_capacity(root_href.len() + path.len() + 32);
    out.push_str(root_href);
    out.push_str("/!svn/");
    out.push_str(WEB_SEGMENT);
    out.push('/');
    out.push_str(page.slug());
    out.push('/');
    match rev {
        Some(r) => out.push_str(&r.to_string()),
        None => out.push_str("HEAD"),
    }
    out.push('/');
    out.push_str(&encode_path(path));
    out
}

/// What a path segment keeps unescaped in the links: RFC 3986's unreserved characters.
const SEGMENT: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// A relpath as a URL path: each segment percent-encoded, `/` kept.
pub fn encode_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for (i, seg) in path.split('/').enumerate() {
        if i > 0 {
            out.push('/');
        }
        out.extend(percent_encoding::utf8_percent_encode(seg, SEGMENT));
    }
    out
}

/// A query value, encoded.
pub fn encode_query(value: &str) -> String {
    percent_encoding::utf8_percent_encode(value, SEGMENT).to_string()
}

/// The value of `key` in a query (`+` as a space, escapes decoded; the last one wins).
pub fn query_value(query: Option<&str>, key: &str) -> Option<String> {
    let mut found = None;
    for pair in query?.split('&') {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        if k == key {
            let v = v.replace('+', " ");
            found = Some(
                percent_encoding::percent_decode_str(&v)
                    .decode_utf8_lossy()
                    .into_owned(),
            );
        }
    }
    found
}

/// A revision number from a query value.
fn query_rev(query: Option<&str>, key: &str) -> Option<Revnum> {
    query_value(query, key).and_then(|v| v.trim().trim_start_matches('r').parse().ok())
}

/// Answers one page. The request's URL was checked by svelto-http (the path readable by
/// the user); what the page reads below it goes through `svc`'s filtered reads. Errors
/// are the repository's (svelto-http answers them as it answers a `GET`'s).
pub fn render(svc: &Ctx, site: &Site<'_>, req: &Request<'_>) -> Result<Response> {
    let at = match At::new(svc, site, req)? {
        Ok(at) => at,
        Err(page) => return Ok(page),
    };
    match req.page {
        Page::Browse => browse::browse(&at),
        Page::Raw => browse::raw(&at),
        Page::Log => history::log(&at),
        Page::Rev => history::revision(&at),
        Page::Blame => blame::blame(&at),
        Page::Diff => diff::diff(&at),
        Page::Search => search::search(&at),
        Page::Archive => match archive::archive(&at)? {
            Ok(a) => Ok(layout::archive_link(&at, &a.file_name())),
            Err(page) => Ok(page),
        },
    }
}

pub use archive::{Archive, Format};

/// The archive a [`Page::Archive`] request asks for (written by [`Archive::write`] as the
/// response streams), or the page saying why there is none.
pub fn archive(
    svc: &Ctx,
    site: &Site<'_>,
    req: &Request<'_>,
) -> Result<std::result::Result<Archive, Response>> {
    match At::new(svc, site, req)? {
        Ok(at) => archive::archive(&at),
        Err(page) => Ok(Err(page)),
    }
}

/// What a page works from.
pub(crate) struct At<'a> {
    pub svc: &'a Ctx,
    pub site: &'a Site<'a>,
    /// The revision asked for (the youngest for `HEAD`).
    pub rev: Revnum,
    /// Whether the URL named the revision (links then keep it; else they say `HEAD`).
    pub pinned: bool,
    pub path: &'a str,
    pub query: Option<&'a str>,
}

impl<'a> At<'a> {
    /// What `req` works from: its revision (HEAD when it names none), or the "no such
    /// revision" page.
    fn new(
        svc: &'a Ctx,
        site: &'a Site<'a>,
        req: &Request<'a>,
    ) -> Result<std::result::Result<At<'a>, Response>> {
        let youngest = svc.head()?;
        let rev = match req.rev {
            Some(r) if r > youngest => {
                return Ok(Err(layout::not_found(
                    site,
                    &format!("No such revision {r} (the youngest is {youngest})"),
                )))
            }
            Some(r) => r,
            None => youngest,
        };
        Ok(Ok(At {
            svc,
            site,
            rev,
            pinned: req.rev.is_some(),
            path: req.path,
            query: req.query,
        }))
    }
}

impl At<'_> {
    /// The revision links from this page name: the one asked for, or HEAD.
    pub fn link_rev(&self) -> Option<Revnum> {
        self.pinned.then_some(self.rev)
    }

    pub fn href(&self, page: Page, rev: Option<Revnum>, path: &str) -> String {
        href(self.site.root_href, page, rev, path)
    }
}

/// The list of repositories at the parent path: `names` are those the visitor may read.
pub fn repository_list(prefix: &str, names: &[String]) -> Response {
    layout::repository_list(prefix, names)
}

/// A page saying that nothing is at the URL asked (404), with the interface's policy.
pub fn not_found_page(prefix: &str, message: &str) -> Response {
    layout::plain_error(prefix, 404, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hrefs_encode_every_segment() {
        assert_eq!(
            href("/svn/r", Page::Browse, None, "a b/<c>\"/é"),
            "/svn/r/!svn/web/browse/HEAD/a%20b/%3Cc%3E%22/%C3%A9"
        );
        assert_eq!(href("/r", Page::Log, Some(7), ""), "/r/!svn/web/log/7/");
        assert_eq!(encode_path("x?y#z&'"), "x%3Fy%23z%26%27");
        for p in Page::ALL {
            assert_eq!(Page::from_slug(p.slug()), Some(p));
        }
        assert_eq!(Page::from_slug("nope"), None);
    }

    #[test]
    fn queries_decode_and_the_last_value_wins() {
        let q = Some("q=a+b%26c&from=12&q=%3Cx%3E&empty");
        assert_eq!(query_value(q, "q").as_deref(), Some("<x>"));
        assert_eq!(query_value(q, "empty").as_deref(), Some(""));
        assert_eq!(query_value(q, "none"), None);
        assert_eq!(query_rev(q, "from"), Some(12));
        assert_eq!(query_rev(Some("from=r5"), "from"), Some(5));
        assert_eq!(query_rev(Some("from=x"), "from"), None);
    }
}
