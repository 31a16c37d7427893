//! Which repository and resource a request path names, as Apache's `SVNParentPath` maps
//! them: `PREFIX/REPO/path` is `path` at HEAD, and `PREFIX/REPO/!svn/KIND/...` are
//! mod_dav_svn's special resources (protocol v2's `me`, `rev`, `rvr`, and v1's `vcc`, `bln`,
//! `bc`, `ver` that clients still use).

use crate::error::HttpError;
use crate::State;
use hyper::StatusCode;
use percent_encoding::{percent_decode_str, utf8_percent_encode, AsciiSet, CONTROLS};
use std::path::Path;
use std::sync::Arc;
use svelto_core::Revnum;

/// The operating system's "No such file or directory" as APR numbers it: the code
/// mod_dav_svn answers with for a repository whose files are not there.
const APR_ENOENT: u32 = 2;

/// Characters Apache's `ap_escape_uri` escapes in the hrefs of the resources mod_dav walks
/// (a PROPFIND's members, the requested resource).
const DAV_ESCAPE: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'[')
    .add(b'\\')
    .add(b']')
    .add(b'^')
    .add(b'`')
    .add(b'{')
    .add(b'|')
    .add(b'}');

/// Characters Subversion's `svn_path_uri_encode` escapes: Apache's and `;`.
const PATH_ESCAPE: &AsciiSet = &DAV_ESCAPE.add(b';');

/// A path as it appears in the URLs mod_dav_svn builds (`dav_svn__build_uri`: `!svn/ver`,
/// `!svn/rvr`, `!svn/bc` hrefs), escaped by `svn_path_uri_encode`.
pub fn encode(path: &str) -> String {
    utf8_percent_encode(path, PATH_ESCAPE).to_string()
}

/// Appends [`encode`]'s answer to `out`.
pub fn encode_to(out: &mut String, path: &str) {
    for piece in utf8_percent_encode(path, PATH_ESCAPE) {
        out.push_str(piece);
    }
}

/// A path as it appears in the href of a resource mod_dav names (a PROPFIND's members):
/// Apache's `ap_escape_uri`, which keeps `;` and writes its escapes in lower case.
pub fn encode_dav(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    let mut hex = 0u8;
    for c in utf8_percent_encode(path, DAV_ESCAPE).flat_map(str::chars) {
        out.push(if hex > 0 { c.to_ascii_lowercase() } else { c });
        hex = if c == '%' { 2 } else { hex.saturating_sub(1) };
    }
    out
}

/// `ROOT/!svn/KIND/REV/path` as `dav_svn__build_uri` writes it: the path after a slash (the
/// root's is the slash alone).
pub fn build_uri(root_href: &str, kind: &str, rev: Revnum, path: &str) -> String {
    let mut out = String::with_capacity(root_href.len() + kind.len() + path.len() + 16);
    build_uri_to(&mut out, root_href, kind, rev, path);
    out
}

/// Appends [`build_uri`]'s answer to `out`.
pub fn build_uri_to(out: &mut String, root_href: &str, kind: &str, rev: Revnum, path: &str) {
    use std::fmt::Write as _;
    out.push_str(root_href);
    out.push_str("/!svn/");
    out.push_str(kind);
    let _ = write!(out, "/{rev}/");
    encode_to(out, path);
}

/// What a request path names inside a repository.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `REPO/path`: the path in the youngest revision.
    Public,
    /// `!svn/me`: where reports and (later) commits go.
    Me,
    /// `!svn/rev/N`: revision N's properties.
    Rev(Revnum),
    /// `!svn/rvr/N/path` and `!svn/bc/N/path`: the path in revision N.
    RevRoot(Revnum),
    /// `!svn/ver/N/path`: the node-revision of `path` changed in N (read as the path in N).
    Version(Revnum),
    /// `!svn/vcc/default`: the version-controlled configuration (its baseline is HEAD's).
    Vcc,
    /// `!svn/bln/N`: revision N's baseline.
    Baseline(Revnum),
    /// `!svn/txn/NAME` (and `!svn/vtxn/NAME`): an open commit transaction (its properties
    /// are the new revision's; DELETE aborts it; MERGE names it as the source).
    Txn,
    /// `!svn/txr/NAME/path` (and `!svn/vtxr/...`): `path` in an open transaction.
    TxnRoot,
    /// `!svn/web/PAGE/REV/path`: a page of the web interface (`docs/web.md`) about `path`
    /// in `REV` (None: `HEAD`).
    Web(svelto_web::Page, Option<Revnum>),
}

/// A resource in a repository.
#[derive(Debug, Clone)]
pub struct Target {
    /// The repository's directory name under the root.
    pub repo_name: Arc<str>,
    pub repo_dir: Arc<Path>,
    /// `PREFIX/REPO`, encoded: what `SVN-Repository-Root` says.
    pub root_href: Arc<str>,
    pub kind: Kind,
    /// The repository relpath ("" for the root).
    pub path: String,
    /// The transaction a `Txn` or `TxnRoot` resource names.
    pub txn: String,
    /// The `!svn/` name a `RevRoot` was reached by, `rvr` or v1's `bc`: its hrefs keep it
    /// (mod_dav_svn answers with the URI it was asked).
    pub root_stub: &'static str,
    /// The revision a `Public` URL's query names (`?p=PEG`, `?r=REV`; None: the youngest).
    pub peg: Option<Revnum>,
    /// Whether that query named a peg revision (`p=`): the answer never changes then
    /// (a file's `GET` may be cached a week), and a listing's links carry it.
    pub pegged: bool,
    /// Whether a `Public` URL's query asked for keywords expanded (`?kw=1`): a file's `GET`
    /// then carries the values its `svn:keywords` names, as mod_dav_svn's does.
    pub keywords: bool,
}

/// Where a repository is: what a request path's first segment leads to, shared (a
/// connection keeps the last one, so that its requests make none of it again).
#[derive(Debug, Clone)]
pub struct Place {
    pub name: Arc<str>,
    pub dir: Arc<Path>,
    pub root_href: Arc<str>,
}

impl Target {
    /// The repository the target is in.
    pub fn place(&self) -> Place {
        Place {
            name: self.repo_name.clone(),
            dir: self.repo_dir.clone(),
            root_href: self.root_href.clone(),
        }
    }

    /// The revision a node resource reads (None: the youngest).
    pub fn rev(&self) -> Option<Revnum> {
        match self.kind {
            Kind::RevRoot(r) | Kind::Version(r) => Some(r),
            Kind::Public => self.peg,
            _ => None,
        }
    }
}

/// What the request path leads to.
pub enum Located {
    /// A resource in a repository.
    Repo(Target),
    /// The parent path itself (Apache lists repositories only with `SVNListParentPath on`).
    Parent,
}

fn bad_path(what: &str) -> HttpError {
    HttpError::new(
        StatusCode::BAD_REQUEST,
        format!("Invalid request path: {what}"),
    )
}

/// The decoded segments of a request path ([`decoded`] and [`split`]), owned.
#[cfg(test)]
pub fn segments(path: &str) -> Result<Vec<String>, HttpError> {
    let decoded = decoded(path)?;
    let segments = split(&decoded)?.iter().map(|s| s.to_string()).collect();
    Ok(segments)
}

/// A request path with its escapes decoded, refusing escapes that do not decode to UTF-8
/// and a `%` that is no escape (400, as Apache), and an escaped slash (404, as Apache's
/// `AllowEncodedSlashes Off`: no path the client sends has one). Other control characters
/// pass, as through mod_dav_svn: no stored path has them (a read finds nothing), and a
/// commit's own rules refuse new names with them in Subversion's words (E160005).
fn decoded(path: &str) -> Result<std::borrow::Cow<'_, str>, HttpError> {
    for (i, _) in path.match_indices('%') {
        match path.as_bytes().get(i + 1..i + 3) {
            Some(h) if h.eq_ignore_ascii_case(b"2f") => {
                return Err(HttpError::page(
                    StatusCode::NOT_FOUND,
                    "The requested URL was not found on this server.",
                ))
            }
            Some(h) if h.iter().all(u8::is_ascii_hexdigit) => {}
            _ => return Err(bad_path("a '%' that begins no escape")),
        }
    }
    percent_decode_str(path)
        .decode_utf8()
        .map_err(|_| bad_path("it does not decode to UTF-8"))
}

/// The segments of a decoded path (borrowed from it), refusing `..` and NUL (400).
fn split(decoded: &str) -> Result<smallvec::SmallVec<[&str; 24]>, HttpError> {
    let mut out = smallvec::SmallVec::new();
    for seg in decoded.split('/') {
        match seg {
            "" | "." => {}
            ".." => return Err(bad_path("'..' is not allowed")),
            s if s.contains('\0') => return Err(bad_path("NUL is not allowed")),
            s => out.push(s),
        }
    }
    Ok(out)
}

fn revnum(s: Option<&&str>, what: &str) -> Result<Revnum, HttpError> {
    s.and_then(|s| s.parse::<Revnum>().ok())
        .ok_or_else(|| HttpError::bad_request(format!("Invalid revision in the {what} URL")))
}

/// Maps a request path (still encoded) onto a repository resource.
pub fn locate(state: &State, path: &str) -> Result<Located, HttpError> {
    locate_in(state, path, |_| None)
}

/// [`locate`], taking the repository `known` returns for a name (a connection's
/// repository of a moment ago) as it is, without looking at its directory again.
pub fn locate_in(
    state: &State,
    path: &str,
    mut known: impl FnMut(&str) -> Option<Place>,
) -> Result<Located, HttpError> {
    let prefix = &state.config.prefix;
    let rest = match path.strip_prefix(prefix.as_str()) {
        Some(r) if r.is_empty() || r.starts_with('/') => r,
        _ => {
            return Err(HttpError::new(
                StatusCode::NOT_FOUND,
                "The requested URL was not found",
            ))
        }
    };
    let decoded = decoded(rest)?;
    let segs = split(&decoded)?;
    if segs.is_empty() {
        return Ok(Located::Parent);
    }
    // The repository is named by the segments before `!svn` (all of them for a public
    // URL): the deepest directory under the root they name that is a repository, as
    // svn:// finds it (`svelto_host::find_repository`), first among those the connection
    // already knows (no look at the disk).
    let named = segs
        .iter()
        .position(|s| s.starts_with('!'))
        .unwrap_or(segs.len());
    if named == 0 {
        return Err(HttpError::new(
            StatusCode::NOT_FOUND,
            "No repository is named by the URL",
        ));
    }
    let candidates = &segs[..named];
    // The connection keeps one place: at most one of these names can be it, so the order
    // does not matter; the first segment (a repository right under the root, the common
    // case) is asked without building a name.
    let mut kept = known(candidates[0]).map(|p| (1, p));
    if kept.is_none() && named > 1 {
        let mut name = candidates[0].to_string();
        for (i, seg) in candidates.iter().enumerate().skip(1) {
            name.push('/');
            name.push_str(seg);
            if let Some(p) = known(&name) {
                kept = Some((i + 1, p));
                break;
            }
        }
    }
    let (n, place) = match kept {
        Some(found) => found,
        None => {
            let root = &state.host.config.root;
            let is_repo = |d: &Path| state.host.repos.is_repo(d);
            let n = svelto_host::find_repository(root, candidates, &is_repo)
                .filter(|&n| n > 0)
                .ok_or_else(|| {
                    // mod_dav_svn's answer when the repository's files are not there (the
                    // cause, ENOENT, as the code), naming neither the name nor a path.
                    HttpError::svn(
                        StatusCode::NOT_FOUND,
                        APR_ENOENT,
                        "Could not find the requested SVN filesystem",
                    )
                })?;
            let name = candidates[..n].join("/");
            let mut dir = root.to_path_buf();
            dir.extend(&candidates[..n]);
            let root_href = format!("{prefix}/{}", encode(&name));
            (
                n,
                Place {
                    name: name.into(),
                    dir: dir.into(),
                    root_href: root_href.into(),
                },
            )
        }
    };
    let rest = &segs[n..];
    let mut txn = String::new();
    let mut root_stub = "rvr";
    let (kind, path) = if rest.first() == Some(&"!svn") {
        let kind = rest.get(1).copied().unwrap_or("");
        let after = rest.get(3..).unwrap_or_default().join("/");
        match kind {
            "me" if rest.len() == 2 => (Kind::Me, String::new()),
            "rev" if rest.len() == 3 => (Kind::Rev(revnum(rest.get(2), "revision")?), String::new()),
            "rvr" | "bc" => {
                if kind == "bc" {
                    root_stub = "bc";
                }
                (Kind::RevRoot(revnum(rest.get(2), "revision root")?), after)
            }
            "ver" => (Kind::Version(revnum(rest.get(2), "version")?), after),
            "vcc" if rest.len() == 3 && rest[2] == "default" => (Kind::Vcc, String::new()),
            "bln" if rest.len() == 3 => (Kind::Baseline(revnum(rest.get(2), "baseline")?), String::new()),
            "txn" | "vtxn" if rest.len() == 3 => {
                txn = rest[2].to_string();
                (Kind::Txn, String::new())
            }
            "txr" | "vtxr" if rest.len() >= 3 => {
                txn = rest[2].to_string();
                (Kind::TxnRoot, after)
            }
            "web" => {
                let page = rest.get(2).and_then(|s| svelto_web::Page::from_slug(s));
                let rev = match rest.get(3).copied() {
                    Some("HEAD") => Some(None),
                    Some(r) => r.parse::<Revnum>().ok().map(Some),
                    None => None,
                };
                match (page, rev) {
                    (Some(page), Some(rev)) => (Kind::Web(page, rev), rest.get(4..).unwrap_or_default().join("/")),
                    _ => {
                        return Err(HttpError::new(
                            StatusCode::NOT_FOUND,
                            format!("No web page at '!svn/{}' (see docs/web.md)", rest[1..].join("/")),
                        ))
                    }
                }
            }
            "act" | "wrk" | "wbl" => {
                return Err(HttpError::svn(
                    StatusCode::NOT_FOUND,
                    crate::error::UNSUPPORTED_FEATURE,
                    format!("'!svn/{kind}' resources belong to HTTP protocol v1's commits; Svelto takes v2's (POST to '!svn/me')"),
                ))
            }
            _ => {
                return Err(HttpError::new(
                    StatusCode::NOT_FOUND,
                    format!("Unknown special resource '!svn/{}'", rest[1..].join("/")),
                ))
            }
        }
    } else {
        (Kind::Public, rest.join("/"))
    };
    Ok(Located::Repo(Target {
        repo_name: place.name,
        repo_dir: place.dir,
        root_href: place.root_href,
        kind,
        path,
        txn,
        root_stub,
        peg: None,
        pegged: false,
        keywords: false,
    }))
}

/// The path of an absolute URL (`Destination:`, a MERGE source) or of a path as it is.
pub fn url_path(value: &str) -> &str {
    let v = value.trim();
    match v.split_once("://") {
        Some((_, rest)) => rest.find('/').map_or("/", |i| &rest[i..]),
        None => v,
    }
}

/// The repository relpath a report's `src-path`/`dst-path` names: a URL or an absolute
/// path of the same repository.
pub fn report_path(state: &State, target: &Target, value: &str) -> Result<String, HttpError> {
    let same = |name: &str| (name == &*target.repo_name).then(|| target.place());
    match locate_in(state, url_path(value), same)? {
        Located::Repo(t) if t.repo_name == target.repo_name && t.kind == Kind::Public => Ok(t.path),
        _ => Err(HttpError::bad_request(format!(
            "'{value}' is not a path in repository '{}'",
            target.repo_name
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_refuse_escapes_out_of_the_tree() {
        assert_eq!(segments("/a/./b//c").expect("plain"), ["a", "b", "c"]);
        assert_eq!(segments("/a%20b/c%3bd").expect("escapes"), ["a b", "c;d"]);
        for slash in ["/a/c%2Fd", "/a/c%2fd", "/a/..%2f..%2fetc"] {
            assert_eq!(segments(slash).err().map(|e| e.status.as_u16()), Some(404));
        }
        for bad in ["/a/%zz", "/a/%", "/a/%2"] {
            assert_eq!(segments(bad).err().map(|e| e.status.as_u16()), Some(400));
        }
        assert!(segments("/a/../b").is_err());
        assert!(segments("/a/%2e%2e/b").is_err());
        assert!(segments("/a/%00").is_err());
        assert_eq!(segments("/a/tab%09dir").expect("tab"), ["a", "tab\tdir"]);
        assert!(segments("/a/%ff").is_err());
    }

    #[test]
    fn encode_keeps_what_subversion_keeps() {
        assert_eq!(encode("/a b/c%d/é"), "/a%20b/c%25d/%C3%A9");
        assert_eq!(encode("x@y:z"), "x@y:z");
        assert_eq!(encode("semi;colon"), "semi%3Bcolon");
        assert_eq!(
            encode_dav("semi;colon/é [1]"),
            "semi;colon/%c3%a9%20%5b1%5d"
        );
        assert_eq!(build_uri("/svn/r", "rvr", 5, ""), "/svn/r/!svn/rvr/5/");
        assert_eq!(
            build_uri("/svn/r", "ver", 2, "a;b"),
            "/svn/r/!svn/ver/2/a%3Bb"
        );
    }
}
