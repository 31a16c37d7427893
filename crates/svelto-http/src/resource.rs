//! The requests on resources: `OPTIONS` (capabilities and the v2 `SVN-*` headers),
//! `PROPFIND` (depth 0 and 1; DAV: and Subversion live properties, the node's own
//! properties), `GET`/`HEAD` (file texts, svndiff against a base the client names, HTML
//! listings of directories), and the dispatch of every request to its handler (`handle`:
//! one [`Ctx`] per request, built from the connection's admission).

use crate::ctx::{Ctx, Node, XML_HEADER};
use crate::error::HttpError;
use crate::table::Access;
use crate::uri::{build_uri, encode_dav, Kind, Located};
use crate::xml::{self, esc, CUSTOM_PROP, DAV, SVN_DAV, SVN_PROP};
use crate::{Reply, Req, State};
use hyper::{Method, StatusCode};
use std::fmt::Write as _;
use std::sync::Arc;
use svelto_core::{NodeKind, PropList, Revnum};
use svelto_repos::{action, SafeCr};

/// The `DAV:` headers of every `OPTIONS` answer, in mod_dav_svn 1.14's order.
const DAV_HEADERS: &[&str] = &[
    "1,2",
    "version-control,checkout,working-resource",
    "merge,baseline,activity,version-controlled-collection",
    "http://subversion.tigris.org/xmlns/dav/svn/depth",
    "http://subversion.tigris.org/xmlns/dav/svn/log-revprops",
    "http://subversion.tigris.org/xmlns/dav/svn/atomic-revprops",
    "http://subversion.tigris.org/xmlns/dav/svn/partial-replay",
    "http://subversion.tigris.org/xmlns/dav/svn/inherited-props",
    "http://subversion.tigris.org/xmlns/dav/svn/inline-props",
    "http://subversion.tigris.org/xmlns/dav/svn/reverse-file-revs",
    "http://subversion.tigris.org/xmlns/dav/svn/list",
    "http://subversion.tigris.org/xmlns/dav/svn/mergeinfo",
];

/// mod_dav's three states of a resource (RFC 2518's null and lock-null resources).
enum DavState {
    Exists,
    LockNull,
    Null,
}

/// See [`Ctx::shape`].
struct Shape {
    state: DavState,
    collection: bool,
    versioned: bool,
    working: bool,
}

impl Shape {
    fn existing(collection: bool, versioned: bool, working: bool) -> Shape {
        Shape {
            state: DavState::Exists,
            collection,
            versioned,
            working,
        }
    }
}

/// Answers one request.
pub(crate) fn handle(
    state: &State,
    cache: &mut crate::ConnCache,
    req: &Req,
    note: &mut crate::Note,
) -> Result<Reply, HttpError> {
    // A connection keeps its admission (repository handle, configuration, login) for a
    // moment: ra_serf's checkouts are a GET per file on a few connections. Keyed by the
    // credentials: the Authorization header and, when a reverse proxy may name the user,
    // its header (one proxy connection can carry several users' requests). Every value of
    // each, so that a request with one more header than the last is not taken for it.
    let reads = crate::table::url_check(req.method.as_str()) == crate::table::UrlCheck::Read;
    let proxy = state.config.user_header.as_deref();
    let names = || std::iter::once("authorization").chain(proxy);
    // Anonymous (no such header, as every request of an anonymous checkout): a NUL per name,
    // without building it.
    let who: std::borrow::Cow<'_, [u8]> = if names().any(|n| req.headers.contains_key(n)) {
        let mut who = Vec::new();
        for name in names() {
            for v in req.headers.get_all(name) {
                who.extend_from_slice(v.as_bytes());
                who.push(b'\n');
            }
            who.push(b'\0');
        }
        who.into()
    } else {
        (&b"\0\0"[..1 + usize::from(proxy.is_some())]).into()
    };
    // Outside the prefix nothing is served by DAV: an OPTIONS there is answered as Apache
    // answers it for a location without `DAV svn` (200, no DAV header), and the client
    // says the server does not support the HTTP/DAV protocol (E175003), not that a
    // repository is missing.
    if req.method == Method::OPTIONS && crate::uri::outside_prefix(state, req.path()) {
        return Ok(Reply::empty(StatusCode::OK).header("allow", "GET,HEAD,POST,OPTIONS"));
    }
    // A read taking the kept admission does not look for the repository again.
    let mut known = false;
    let located = crate::uri::locate_in(state, req.path(), |name| {
        let kept = if reads { cache.keeps(name, &who) } else { None };
        known = kept.is_some();
        kept
    })
    .map_err(|e| {
        if e.is_missing_repository() {
            crate::access::missing(state, req, e)
        } else {
            e
        }
    })?;
    let target = match located {
        Located::Repo(t) => t,
        // The web interface's list of repositories (docs/web.md); other methods as before.
        Located::Parent if matches!(req.method, Method::GET | Method::HEAD) => {
            note.command = Some(crate::table::WEB_REPOS);
            return Ok(crate::web::repository_list(state, req));
        }
        Located::Parent => {
            return Err(HttpError::new(
                StatusCode::FORBIDDEN,
                "Listing the repositories under the parent path is not allowed",
            ))
        }
    };
    // The kept admission is borrowed from the connection's cache; a new one is read (and
    // kept, for a read) here.
    let admitted;
    let (svc, gate) = if known {
        match cache.kept() {
            Some(k) => k,
            None => unreachable_admission()?,
        }
    } else {
        admitted = cache.admit(target.place(), &who, reads, || {
            crate::access::admit(
                state,
                &target,
                state
                    .host
                    .repos
                    .open(&target.repo_dir)
                    .map_err(svelto_repos::ReposError::from)?,
                req,
            )
        })?;
        (&admitted.0, &admitted.1)
    };
    // A GET or PROPFIND of a revision already known (ra_serf's GET of every file of a
    // checkout names its revision) needs no new look at `db/current`: revisions never go
    // away. Everything else sees the youngest revision on disk now.
    let fixed = match target.kind {
        Kind::RevRoot(r) | Kind::Version(r) | Kind::Rev(r) | Kind::Baseline(r) => Some(r),
        _ => None,
    };
    let known = svc.youngest();
    let plain_read =
        matches!(req.method, Method::GET | Method::HEAD) || req.method.as_str() == "PROPFIND";
    let youngest = match fixed {
        Some(r) if plain_read && r <= known => known,
        _ => svc.head()?,
    };
    note.user = svc.user().map(str::to_owned);
    if target.repo_name.contains('/') {
        // A nested repository: the log names all of its path, as svn://'s does.
        note.repos = Some(svelto_repos::action::uri_encode(&target.repo_name).into());
    }
    crate::access::check_url(svc, gate, &req.method, &target)?;
    if let Kind::Web(page, rev) = target.kind {
        // The web interface's pages: reads like a GET of their path (docs/web.md).
        note.command = Some(crate::table::web_metric(page));
        if !matches!(req.method, Method::GET | Method::HEAD) {
            return Err(HttpError::new(
                StatusCode::METHOD_NOT_ALLOWED,
                format!("{} is not served on the web interface's pages", req.method),
            ));
        }
        return crate::web::page(state, svc, &target, page, rev, req)
            .map_err(|e| refusal_form(gate, e));
    }
    let mut target = target;
    if let (Kind::Public, true, Some(query)) = (&target.kind, reads, &req.query) {
        if let Some(redirect) = public_query(state, svc, youngest, &mut target, query, req)? {
            return Ok(redirect);
        }
    }
    let ctx = Ctx {
        state,
        svc,
        gate,
        youngest,
        target,
        uri: req.path(),
        dirs: reads.then_some(&cache.dirs),
    };
    let row = crate::table::method(req.method.as_str());
    let named = row.map(|r| r.metric);
    let access = row.map(|r| r.access);
    if access == Some(Access::Write) {
        note.command = named;
        return crate::write::handle(ctx, req);
    }
    if access == Some(Access::Lock) {
        note.command = named;
        crate::write::refuse_in_shutdown(state)?;
        return crate::locks::handle(ctx, req).map_err(|e| refusal_form(gate, e));
    }
    if matches!(ctx.target.kind, Kind::Txn | Kind::TxnRoot) && req.method != Method::OPTIONS {
        return Err(HttpError::new(
            StatusCode::METHOD_NOT_ALLOWED,
            format!("{} is not served on a transaction's resources", req.method),
        ));
    }
    type Handler = fn(&Ctx<'_>, &Req) -> Result<Reply, HttpError>;
    let handler: Handler = match req.method {
        Method::OPTIONS => |c, r| c.options(r),
        Method::GET | Method::HEAD => |c, r| c.get(r),
        ref m if m.as_str() == "PROPFIND" => |c, r| c.propfind(r),
        ref m if m.as_str() == "REPORT" => crate::reports::report,
        _ => {
            return Err(HttpError::new(
                StatusCode::METHOD_NOT_ALLOWED,
                format!("{} is not served by Svelto", req.method),
            ))
        }
    };
    note.command = named;
    handler(&ctx, req).map_err(|e| refusal_form(gate, e))
}

/// The service's refusal of a path the user may not read (its SVN_ERR_AUTHZ_UNREADABLE,
/// answered before a response began) in HTTP's form: Apache's 401 where a login could
/// help, else its 403.
fn refusal_form(gate: &crate::access::Gate, e: HttpError) -> HttpError {
    if e.refusal.is_none() && e.code == svelto_repos::SvnErrorKind::AuthzUnreadable.code() {
        gate.refuse(false)
    } else {
        e
    }
}

/// A file's `ETag`, `"CR//PATH"` (mod_dav_svn's), made at its exact size: it becomes the
/// header's bytes without another allocation.
fn file_etag(cr: Revnum, path: &str) -> bytes::Bytes {
    use std::io::Write as _;
    let digits = cr.checked_ilog10().map_or(1, |d| d as usize + 1);
    let mut v = Vec::with_capacity(digits + path.len() + 4);
    let _ = write!(v, "\"{cr}//{path}\"");
    bytes::Bytes::from(v)
}

/// The kept admission [`crate::ConnCache::keeps`] just reported, which cannot be missing.
fn unreachable_admission<T>() -> Result<T, HttpError> {
    Err(HttpError::new(
        StatusCode::INTERNAL_SERVER_ERROR,
        "The connection's kept admission went away",
    ))
}

/// `strtol` of a query value as C's `atol` reads it (mod_dav_svn's `SVN_STR_TO_REV`):
/// leading white space, a sign, the digits up to the first other character; none is 0.
fn atol(s: &str) -> i64 {
    let s = s.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let (negative, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let mut n: i64 = 0;
    for d in digits.bytes().take_while(u8::is_ascii_digit) {
        n = n.saturating_mul(10).saturating_add(i64::from(d - b'0'));
    }
    if negative {
        -n
    } else {
        n
    }
}

/// The revision a `p=` or `r=` value names (mod_dav_svn skips leading `r`s), if valid.
fn query_rev(value: &str) -> Option<Revnum> {
    Revnum::try_from(atol(value.trim_start_matches('r'))).ok()
}

/// `http(s)://HOST` + `path`: an absolute URL on this server as the request named it
/// (Apache's `ap_construct_url` under `UseCanonicalName Off`).
fn own_url(state: &State, req: &Req, path: &str) -> String {
    let host = req.header("host").unwrap_or("localhost");
    let scheme = if state.config.tls.is_some() {
        "https"
    } else {
        "http"
    };
    format!("{scheme}://{host}{path}")
}

/// mod_dav_svn's "universal" URL of a public path, `path?[p=PEG][&r=REV]`, read as its
/// `parse_querystring` reads it (pairs split at `&`, keys in any case, the last of a key
/// winning, values as `atol` reads them after leading `r`s): the path as it is in `PEG`
/// (default the youngest revision) seen in `REV` (default `PEG`). `REV` younger than `PEG`
/// is a 400; older, the path is traced back to `REV` and the client redirected to
/// `PATH@REV?p=REV` (301 when `p` was given, else 302), 404 where the node did not exist.
/// Sets the target's revision, whether it is pegged (`p=`) and whether a file's keywords
/// are to be expanded (`kw=1`, kept in a redirect); other keys are ignored. None: no
/// redirect.
fn public_query(
    state: &State,
    svc: &svelto_repos::service::Ctx,
    youngest: Revnum,
    target: &mut crate::uri::Target,
    query: &str,
    req: &Req,
) -> Result<Option<Reply>, HttpError> {
    let (mut peg, mut working, mut keywords) = (None, None, None);
    for pair in query.split('&') {
        let Some((key, value)) = pair.trim().split_once('=') else {
            continue;
        };
        if key.eq_ignore_ascii_case("p") {
            peg = Some(value.to_string());
        } else if key.eq_ignore_ascii_case("r") {
            working = Some(value.to_string());
        } else if key.eq_ignore_ascii_case("kw") {
            keywords = Some(value == "1");
        }
    }
    target.keywords = keywords == Some(true);
    let peg_rev = match &peg {
        Some(v) => query_rev(v)
            .ok_or_else(|| bad_query(state, target, "invalid peg rev in query string"))?,
        None => youngest,
    };
    let working_rev = match &working {
        Some(v) => query_rev(v)
            .ok_or_else(|| bad_query(state, target, "invalid working rev in query string"))?,
        None => peg_rev,
    };
    if working_rev > peg_rev {
        return Err(bad_query(
            state,
            target,
            "working rev greater than peg rev.",
        ));
    }
    if working_rev == peg_rev {
        if peg_rev > youngest {
            return Err(HttpError::svn(
                StatusCode::NOT_FOUND,
                crate::error::FS_NO_SUCH_REVISION,
                format!("No such revision {peg_rev}"),
            ));
        }
        target.peg = Some(peg_rev);
        target.pegged = peg.is_some();
        return Ok(None);
    }
    let locations = svc.locations(&target.path, peg_rev, &[working_rev])?;
    let Some((_, path)) = locations.into_iter().find(|(r, _)| *r == working_rev) else {
        // mod_dav_svn's "path doesn't exist in that revision." goes to its log; the client
        // gets Apache's page.
        return Err(HttpError::page(
            StatusCode::NOT_FOUND,
            "The requested URL was not found on this server.",
        ));
    };
    let path = path.trim_start_matches('/');
    let location = own_url(
        state,
        req,
        &format!(
            "{}/{}?p={working_rev}{}",
            target.root_href,
            crate::uri::encode_dav(path),
            if target.keywords { "&kw=1" } else { "" }
        ),
    );
    let status = if peg.is_some() {
        StatusCode::MOVED_PERMANENTLY
    } else {
        StatusCode::FOUND
    };
    Ok(Some(moved(status, location)))
}

/// What Apache escapes in a path it writes into a URL (`ap_escape_uri`): all but letters,
/// digits, `/` and `$-_.+!*'(),:@&=~`.
const URI_PATH: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'/')
    .remove(b'$')
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'+')
    .remove(b'!')
    .remove(b'*')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')')
    .remove(b',')
    .remove(b':')
    .remove(b'@')
    .remove(b'&')
    .remove(b'=')
    .remove(b'~');

/// A redirect (301, 302) to `location` with Apache's page.
fn moved(status: StatusCode, location: String) -> Reply {
    let page = format!(
        "<!DOCTYPE HTML PUBLIC \"-//W3C//DTD HTML 4.01//EN\" \"http://www.w3.org/TR/html4/strict.dtd\">\n\
         <html><head>\n<title>{code} {reason}</title>\n</head><body>\n<h1>{reason}</h1>\n\
         <p>The document has moved <a href=\"{href}\">here</a>.</p>\n</body></html>\n",
        code = status.as_u16(),
        reason = status.canonical_reason().unwrap_or(""),
        href = esc(&location),
    );
    Reply::new(status, "text/html; charset=iso-8859-1", page.into_bytes())
        .header("location", location)
}

/// A query mod_dav_svn refuses: 400 with Apache's page, mod_dav_svn's words in the log.
fn bad_query(state: &State, target: &crate::uri::Target, why: &str) -> HttpError {
    state.log(&format!("{}: {why}", target.repo_name));
    HttpError::page(
        StatusCode::BAD_REQUEST,
        "Your browser sent a request that this server could not understand.<br />\n",
    )
}

impl Ctx<'_> {
    fn options(&self, req: &Req) -> Result<Reply, HttpError> {
        let wants_activity = !req.body.is_empty()
            && xml::parse(&req.body)?
                .child(DAV, "activity-collection-set")
                .is_some();
        let mut body = String::from(XML_HEADER);
        body.push_str("<D:options-response xmlns:D=\"DAV:\">\n");
        if wants_activity {
            let _ = write!(
                body,
                "<D:activity-collection-set><D:href>{}/!svn/act/</D:href></D:activity-collection-set>",
                esc(self.root_href())
            );
        }
        body.push_str("</D:options-response>\n");
        let allow = self.allowed_methods()?;
        // mod_dav answers an OPTIONS without a body with none (no Content-Type either).
        let mut reply = if req.body.is_empty() {
            Reply::empty(StatusCode::OK)
        } else {
            Reply::xml(StatusCode::OK, body.into_bytes())
        };
        for d in DAV_HEADERS {
            reply = reply.header("dav", *d);
        }
        reply = reply.header("ms-author-via", "DAV").header("allow", allow);
        if wants_activity {
            let root = self.root_href();
            reply = reply
                .header("svn-youngest-rev", self.youngest.to_string())
                .header("svn-repository-uuid", self.svc.uuid()?)
                .header("svn-repository-mergeinfo", "yes")
                .header(
                    "dav",
                    "http://subversion.tigris.org/xmlns/dav/svn/replay-rev-resource",
                )
                .header("svn-repository-root", root.to_string())
                .header("svn-me-resource", format!("{root}/!svn/me"))
                .header("svn-rev-root-stub", format!("{root}/!svn/rvr"))
                .header("svn-rev-stub", format!("{root}/!svn/rev"))
                .header("svn-txn-root-stub", format!("{root}/!svn/txr"))
                .header("svn-txn-stub", format!("{root}/!svn/txn"))
                .header("svn-vtxn-root-stub", format!("{root}/!svn/vtxr"))
                .header("svn-vtxn-stub", format!("{root}/!svn/vtxn"))
                .header("svn-allow-bulk-updates", "On")
                .header("svn-supported-posts", "create-txn")
                .header("svn-supported-posts", "create-txn-with-props")
                .header(
                    "dav",
                    "http://subversion.tigris.org/xmlns/dav/svn/ephemeral-txnprops",
                )
                .header(
                    "dav",
                    "http://subversion.tigris.org/xmlns/dav/svn/put-result-checksum",
                )
                .header("dav", "http://subversion.tigris.org/xmlns/dav/svn/svndiff1")
                .header("dav", "http://subversion.tigris.org/xmlns/dav/svn/svndiff2");
        }
        Ok(reply)
    }

    /// What mod_dav knows of the target when it lists the methods an `OPTIONS` answer
    /// allows: whether it exists (else whether a lock holds its path: a lock-null
    /// resource), is a collection, is versioned (mod_dav_svn's regular, version and
    /// baseline resources, `me` and the VCC) or a working resource (a transaction's node).
    /// A revision or transaction that does not exist is mod_dav_svn's error.
    fn shape(&self) -> Result<Shape, HttpError> {
        let path = self.target.path.as_str();
        let in_rev = |rev: Revnum| -> Result<Shape, HttpError> {
            let rev = self.check_rev(rev)?;
            Ok(match self.svc.node(path, rev)? {
                Some(n) => Shape::existing(n.kind() == NodeKind::Dir, true, false),
                None => self.absent(path)?,
            })
        };
        match self.target.kind {
            Kind::Public => in_rev(self.target.peg.unwrap_or(self.youngest)),
            Kind::RevRoot(rev) => in_rev(rev),
            // A version resource exists once its revision does (mod_dav_svn's
            // prep_version looks no further), never a collection.
            Kind::Version(rev) | Kind::Rev(rev) | Kind::Baseline(rev) => {
                self.check_rev(rev)?;
                Ok(Shape::existing(false, true, false))
            }
            Kind::Me | Kind::Vcc => Ok(Shape::existing(false, true, false)),
            Kind::Txn => match crate::write::txn_kind(self, "")? {
                Some(_) => Ok(Shape::existing(false, false, false)),
                None => Err(HttpError::page(
                    StatusCode::NOT_FOUND,
                    "The requested URL was not found on this server.",
                )),
            },
            // Answered in `handle`, by the web interface.
            Kind::Web(..) => Err(HttpError::page(
                StatusCode::NOT_FOUND,
                "The requested URL was not found on this server.",
            )),
            Kind::TxnRoot => match crate::write::txn_kind(self, path)? {
                Some(Some(kind)) => Ok(Shape::existing(kind == NodeKind::Dir, true, true)),
                Some(None) => self.absent(path),
                None => Err(HttpError::page(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "The server encountered an internal error or\nmisconfiguration and was \
                     unable to complete\nyour request.",
                )),
            },
        }
    }

    /// A path its root does not have: lock-null when a lock holds it.
    fn absent(&self, path: &str) -> Result<Shape, HttpError> {
        let locked = self.svc.get_lock(path)?.is_some();
        Ok(Shape {
            state: if locked {
                DavState::LockNull
            } else {
                DavState::Null
            },
            collection: false,
            versioned: false,
            working: false,
        })
    }

    /// The `Allow:` header of an `OPTIONS` answer, as mod_dav lists the methods (in its
    /// order; mod_dav_svn has lock hooks and versioning hooks without labels, and no
    /// resource it serves is versionable, a workspace or, outside the v1 commit path
    /// Svelto does not serve, an activity).
    fn allowed_methods(&self) -> Result<String, HttpError> {
        let shape = self.shape()?;
        let mut methods = vec!["OPTIONS"];
        match shape.state {
            DavState::Exists => {
                methods.extend([
                    "GET",
                    "HEAD",
                    "POST",
                    "DELETE",
                    "TRACE",
                    "PROPFIND",
                    "PROPPATCH",
                    "COPY",
                    "MOVE",
                ]);
                if !shape.collection {
                    methods.push("PUT");
                }
                methods.extend(["LOCK", "UNLOCK"]);
                if shape.working {
                    methods.extend(["CHECKIN", "UNCHECKOUT"]);
                } else if shape.versioned {
                    methods.push("CHECKOUT");
                }
            }
            DavState::LockNull => methods.extend(["MKCOL", "PROPFIND", "PUT", "LOCK", "UNLOCK"]),
            DavState::Null => methods.extend(["MKCOL", "PUT", "LOCK"]),
        }
        Ok(methods.join(","))
    }

    fn propfind(&self, req: &Req) -> Result<Reply, HttpError> {
        let depth = match req.header("depth").map(str::trim) {
            Some("0") => 0,
            Some("1") => 1,
            None | Some("infinity") => {
                return Err(HttpError::new(
                    StatusCode::FORBIDDEN,
                    format!(
                        "PROPFIND requests with a Depth of \"infinity\" are not allowed for {}.",
                        req.path()
                    ),
                ))
            }
            Some(d) => {
                return Err(HttpError::bad_request(format!(
                    "Invalid Depth header '{d}'"
                )))
            }
        };
        let wanted = if req.body.iter().all(u8::is_ascii_whitespace) {
            Wanted::All
        } else {
            let doc = xml::parse(&req.body)?;
            if !doc.is(DAV, "propfind") {
                return Err(HttpError::bad_request(
                    "The PROPFIND request's body is not a DAV:propfind element",
                ));
            }
            if let Some(p) = doc.child(DAV, "prop") {
                Wanted::Some(
                    p.children
                        .iter()
                        .map(|c| (c.ns.clone(), c.name.clone()))
                        .collect(),
                )
            } else if doc.child(DAV, "propname").is_some() {
                Wanted::Names
            } else {
                Wanted::All
            }
        };
        let mut logged: Option<String> = None;
        let mut out = String::from(XML_HEADER);
        out.push_str(
            "<D:multistatus xmlns:D=\"DAV:\" xmlns:lp1=\"DAV:\" xmlns:lp2=\"http://subversion.tigris.org/xmlns/dav/\" xmlns:S=\"http://subversion.tigris.org/xmlns/svn/\" xmlns:C=\"http://subversion.tigris.org/xmlns/custom/\" xmlns:V=\"http://subversion.tigris.org/xmlns/dav/\">\n",
        );
        // The last lock a response showed, whose headers the answer carries (mod_dav_svn's).
        let mut shown_lock = None;
        match self.target.kind {
            Kind::Public | Kind::RevRoot(_) | Kind::Version(_) => {
                let node = match self.target_node() {
                    Ok(node) => node,
                    Err(e) if e.code == crate::error::FS_NOT_FOUND => {
                        // A path the revision does not have may still be locked (its file
                        // deleted by a commit that kept its lock): mod_dav answers for the
                        // lock (the client's `svn info` and `svn unlock` of the URL find it).
                        let Some(lock) = self.svc.get_lock(&self.target.path)? else {
                            return Err(e);
                        };
                        let path = &self.target.path;
                        let href = match self.target.kind {
                            Kind::RevRoot(r) => self.special_href(self.target.root_stub, r, path),
                            Kind::Version(r) => self.special_href("ver", r, path),
                            _ => format!("{}/{}", self.root_href(), encode_dav(path)),
                        };
                        let live = vec![
                            (DAV, "resourcetype", Some(String::new())),
                            (
                                DAV,
                                "supportedlock",
                                Some(crate::locks::SUPPORTEDLOCK.into()),
                            ),
                            (
                                DAV,
                                "lockdiscovery",
                                Some(crate::locks::lockdiscovery(Some(&lock), &*self.svc.env())),
                            ),
                        ];
                        response(&mut out, &href, &live, &PropList::new(), &wanted);
                        out.push_str("</D:multistatus>\n");
                        return Ok(crate::locks::lock_headers(
                            Reply::xml(StatusCode::MULTI_STATUS, out.into_bytes()),
                            Some(&lock),
                        ));
                    }
                    Err(e) => return Err(e),
                };
                let href = self.node_href(&node);
                let mut safe_cr = self.svc.safe_cr(node.rev);
                shown_lock = self.node_response(&mut out, &href, &node, &wanted, &mut safe_cr)?;
                // mod_dav_svn's action: the last node whose properties were listed, or the
                // directory walked.
                let listed = |n: &Node| {
                    let path = action::fspath(&n.path);
                    match n.node.kind() {
                        NodeKind::Dir => action::get_dir(&path, n.rev, false, true),
                        NodeKind::File => action::get_file(&path, n.rev, false, true),
                    }
                };
                let all = matches!(wanted, Wanted::All | Wanted::Names);
                logged = all.then(|| listed(&node));
                if depth == 1 && node.node.kind() == NodeKind::Dir {
                    // The walked directory's path with the slash mod_dav_svn's walk
                    // appends before it logs (the root's is "/" alone).
                    let mut walked = action::fspath(&node.path);
                    if !node.path.is_empty() {
                        walked.push('/');
                    }
                    logged = Some(action::get_dir(&walked, node.rev, true, false));
                    for (name, child) in self.entries(&node)? {
                        let mut href =
                            format!("{}/{}", href.trim_end_matches('/'), encode_dav(&name));
                        if child.kind() == NodeKind::Dir {
                            href.push('/');
                        }
                        let child = Node {
                            rev: node.rev,
                            path: svelto_core::join(&node.path, &name),
                            node: child,
                        };
                        if let Some(l) =
                            self.node_response(&mut out, &href, &child, &wanted, &mut safe_cr)?
                        {
                            shown_lock = Some(l);
                        }
                        if all {
                            logged = Some(listed(&child));
                        }
                    }
                }
            }
            Kind::Vcc => {
                let href = format!("{}/!svn/vcc/default", self.root_href());
                let bln = self.special_href("bln", self.youngest, "");
                let live = vec![
                    (
                        DAV,
                        "checked-in",
                        Some(format!("<D:href>{}</D:href>", esc(&bln))),
                    ),
                    (DAV, "resourcetype", Some(String::new())),
                    (SVN_DAV, "repository-uuid", Some(self.svc.uuid()?)),
                ];
                response(&mut out, &href, &live, &PropList::new(), &wanted);
            }
            Kind::Baseline(rev) => {
                let rev = self.check_rev(rev)?;
                let href = self.special_href("bln", rev, "");
                let bc = format!("{}/", self.special_href("bc", rev, ""));
                let live = vec![
                    (
                        DAV,
                        "baseline-collection",
                        Some(format!("<D:href>{}</D:href>", esc(&bc))),
                    ),
                    (DAV, "version-name", Some(rev.to_string())),
                    (DAV, "resourcetype", Some("<D:baseline/>".into())),
                    (SVN_DAV, "repository-uuid", Some(self.svc.uuid()?)),
                ];
                response(&mut out, &href, &live, &PropList::new(), &wanted);
                if matches!(wanted, Wanted::All | Wanted::Names) {
                    logged = Some(action::rev_proplist(rev));
                }
            }
            Kind::Rev(rev) => {
                let rev = self.check_rev(rev)?;
                if matches!(wanted, Wanted::All | Wanted::Names) {
                    logged = Some(action::rev_proplist(rev));
                }
                let href = self.special_href("rev", rev, "");
                let props = self.svc.readable_revprops(rev)?;
                let live = vec![(DAV, "version-name", Some(rev.to_string()))];
                response(&mut out, &href, &live, &props, &wanted);
            }
            Kind::Me => {
                let href = format!("{}/!svn/me", self.root_href());
                response(&mut out, &href, &[], &PropList::new(), &wanted);
            }
            // Refused or answered in `handle`.
            Kind::Txn | Kind::TxnRoot | Kind::Web(..) => {}
        }
        out.push_str("</D:multistatus>\n");
        let reply = crate::locks::lock_headers(
            Reply::xml(StatusCode::MULTI_STATUS, out.into_bytes()),
            shown_lock.as_ref(),
        );
        Ok(match logged {
            Some(a) => reply.action(a),
            None => reply,
        })
    }

    /// The href the client used for a node, a collection's with a trailing slash.
    fn node_href(&self, node: &Node) -> String {
        let mut href = match self.target.kind {
            Kind::RevRoot(r) => self.special_href(self.target.root_stub, r, &node.path),
            Kind::Version(r) => self.special_href("ver", r, &node.path),
            _ => {
                let mut h = self.root_href().to_string();
                if !node.path.is_empty() {
                    h.push('/');
                    h.push_str(&encode_dav(&node.path));
                }
                h
            }
        };
        if node.node.kind() == NodeKind::Dir && !href.ends_with('/') {
            href.push('/');
        }
        href
    }

    fn node_response(
        &self,
        out: &mut String,
        href: &str,
        node: &Node,
        wanted: &Wanted,
        safe_cr: &mut SafeCr,
    ) -> Result<Option<svelto_repos::locks::Lock>, HttpError> {
        let n = &node.node;
        // The path's lock, read only when asked for (mod_dav_svn's, whatever the revision).
        let lock = if wanted.shows(DAV, "lockdiscovery") {
            self.svc.get_lock(&node.path)?
        } else {
            None
        };
        let cr = n.created_rev();
        let (date, author) = self.date_author(cr)?;
        let props = self.svc.node_props(n)?;
        let is_dir = n.kind() == NodeKind::Dir;
        let file = (!is_dir).then_some(n);
        let fspath = format!("/{}", node.path);
        let mime = props
            .get(&b"svn:mime-type"[..])
            .map(|v| String::from_utf8_lossy(v).into_owned());
        let live: Vec<(&str, &str, Option<String>)> = vec![
            (
                DAV,
                "resourcetype",
                Some(if is_dir {
                    "<D:collection/>".into()
                } else {
                    String::new()
                }),
            ),
            (DAV, "getcontentlength", file.map(|f| f.size().to_string())),
            (
                DAV,
                "getcontenttype",
                Some(if is_dir {
                    "text/html; charset=UTF-8".into()
                } else {
                    esc(mime.as_deref().unwrap_or("text/plain")).into_owned()
                }),
            ),
            (
                DAV,
                "getetag",
                Some(
                    esc(&format!(
                        "{}\"{cr}/{}\"",
                        if is_dir { "W/" } else { "" },
                        fspath
                    ))
                    .into_owned(),
                ),
            ),
            (DAV, "creationdate", date.clone()),
            (DAV, "getlastmodified", date.as_deref().and_then(http_date)),
            (
                DAV,
                "checked-in",
                // Its history is looked up only when asked for.
                wanted.shows(DAV, "checked-in").then(|| {
                    format!(
                        "<D:href>{}</D:href>",
                        esc(&build_uri(
                            self.root_href(),
                            "ver",
                            safe_cr.get(&node.path, n),
                            &node.path
                        ))
                    )
                }),
            ),
            (
                DAV,
                "version-controlled-configuration",
                Some(format!(
                    "<D:href>{}/!svn/vcc/default</D:href>",
                    esc(self.root_href())
                )),
            ),
            (DAV, "version-name", Some(cr.to_string())),
            (
                DAV,
                "creator-displayname",
                author.map(|a| esc(&crate::xml::displayable_author(&a)).into_owned()),
            ),
            (
                SVN_DAV,
                "baseline-relative-path",
                Some(esc(&node.path).into_owned()),
            ),
            (SVN_DAV, "md5-checksum", file.map(|f| f.md5().to_hex())),
            (SVN_DAV, "repository-uuid", Some(self.svc.uuid()?)),
            // Whether it has properties, as mod_dav_svn 1.9 and later say it (clients
            // only compare it with 0).
            (
                SVN_DAV,
                "deadprop-count",
                Some(if props.is_empty() { "0" } else { "1" }.into()),
            ),
            (SVN_DAV, "sha1-checksum", file.map(|f| f.sha1().to_hex())),
            // mod_dav_svn locks files only: a collection has none to offer.
            (
                DAV,
                "supportedlock",
                file.map(|_| crate::locks::SUPPORTEDLOCK.into()),
            ),
            (
                DAV,
                "lockdiscovery",
                Some(crate::locks::lockdiscovery(lock.as_ref(), &*self.svc.env())),
            ),
        ];
        response(out, href, &live, &props, wanted);
        Ok(lock)
    }

    fn get(&self, req: &Req) -> Result<Reply, HttpError> {
        match self.target.kind {
            Kind::Public | Kind::RevRoot(_) | Kind::Version(_) => {}
            _ => {
                return Err(HttpError::new(
                    StatusCode::METHOD_NOT_ALLOWED,
                    "This resource has no content to GET",
                ))
            }
        }
        let node = match self.target_node() {
            // mod_dav answers a GET of a path its revision lacks with Apache's page.
            Err(e)
                if e.code == crate::error::FS_NOT_FOUND
                    && matches!(self.target.kind, Kind::Public | Kind::RevRoot(_)) =>
            {
                return Err(HttpError::page(
                    StatusCode::NOT_FOUND,
                    "The requested URL was not found on this server.",
                ))
            }
            r => r?,
        };
        // A versioned URL, or a public one pegged by `?p=`, always answers the same.
        let fixed = self.target.kind != Kind::Public || self.target.pegged;
        let cr = node.node.created_rev();
        if node.node.kind() == NodeKind::Dir {
            if !req.path().ends_with('/') {
                // Apache's redirect keeps the query (`?p=PEG`).
                let query = req
                    .query
                    .as_deref()
                    .map_or(String::new(), |q| format!("?{q}"));
                let location = own_url(self.state, req, &format!("{}/{query}", req.path()));
                return Ok(moved(StatusCode::MOVED_PERMANENTLY, location));
            }
            let reply = self
                .listing(&node)?
                .header("etag", format!("W/\"{cr}//{}\"", node.path))
                .header("cache-control", "max-age=0");
            return self.last_modified(reply, cr);
        }
        // The property list as cached (no copy); most files have no svn:mime-type.
        let props = self.svc.node_props_shared(&node.node)?;
        let mime = match props.get(&b"svn:mime-type"[..]) {
            Some(v) => bytes::Bytes::from(String::from_utf8_lossy(v).into_owned()),
            None => bytes::Bytes::from_static(b"text/plain"),
        };
        let etag = file_etag(cr, &node.path);
        // A delta against a base the client has, when it asks for one.
        let svndiff = req.svndiff_version();
        if let (Some(version), Some(base)) = (svndiff, req.header("x-svn-vr-base")) {
            if let Some(reply) = self.delta_get(base, &node, version)? {
                return Ok(reply.header("etag", etag));
            }
        }
        let keywords = props
            .get(&b"svn:keywords"[..])
            .filter(|_| self.target.keywords);
        let body = if let Some(prop) = keywords {
            // `?kw=1` on a file with `svn:keywords`: its text with their values put in.
            crate::ReplyBody::Shared(self.keywords_text(req, &node, prop)?.into())
        } else if let Some(pieces) = self.svc.large_text(&node.node)? {
            // A large file stored as it is goes out window by window as the connection
            // takes them.
            crate::ReplyBody::Pieces(Box::new(pieces))
        } else {
            // Any other is held whole (shared with the text cache), as the store
            // reconstructs it anyway.
            crate::ReplyBody::Shared(bytes::Bytes::from_owner(SharedText(
                self.svc.read_text(&node.node)?,
            )))
        };
        let mut headers = Vec::with_capacity(4);
        headers.push(("content-type", mime));
        let mut reply = Reply {
            status: StatusCode::OK,
            headers,
            body,
            note: crate::Note::default(),
        };
        reply = reply.header("etag", etag).header(
            "cache-control",
            if fixed { "max-age=604800" } else { "max-age=0" },
        );
        self.last_modified(reply, cr)
    }

    /// A `GET` of a public URL (not under `!svn/`) as mod_dav_svn answers it: with a
    /// `Last-Modified` of its created revision's date, for clients that use the server as a
    /// file server (wget's and curl's timestamps). Directories and the public URLs, whose
    /// answer changes with the youngest revision, have `Cache-Control: max-age=0`;
    /// versioned URLs a week. (Subversion's mod_dav_svn_tests 1 and 7.)
    fn last_modified(&self, reply: Reply, cr: Revnum) -> Result<Reply, HttpError> {
        if self.target.kind != Kind::Public {
            return Ok(reply);
        }
        let (date, _) = self.date_author(cr)?;
        Ok(match date.as_deref().and_then(http_date) {
            Some(d) => reply.header("last-modified", d),
            None => reply,
        })
    }

    /// A file's text with the keywords `prop` (its `svn:keywords`) names expanded as
    /// mod_dav_svn expands them for `?kw=1`: the file's last change (revision, date,
    /// author), the URL asked for (on the `Host` the client named) and the repository's
    /// root URL.
    fn keywords_text(&self, req: &Req, node: &Node, prop: &[u8]) -> Result<Vec<u8>, HttpError> {
        let cr = node.node.created_rev();
        let (date, author) = self.date_author(cr)?;
        let path = percent_encoding::percent_decode_str(req.path()).decode_utf8_lossy();
        let escaped = percent_encoding::utf8_percent_encode(&path, URI_PATH).to_string();
        let url = own_url(self.state, req, &escaped);
        let root_url = own_url(self.state, req, &self.target.root_href);
        let facts = svelto_repos::keywords::Facts {
            rev: cr,
            url: &url,
            root_url: &root_url,
            date: date.as_deref(),
            author: author.as_deref(),
            zone: &self.state.config.zone,
        };
        let keywords = svelto_repos::keywords::build(prop, &facts);
        let text = self.svc.read_text(&node.node)?;
        Ok(svelto_repos::keywords::expand(&text, &keywords))
    }

    /// `GET` with `X-SVN-VR-Base`: svndiff from the base's text to the node's, or None when
    /// the base is not a file this repository has.
    fn delta_get(&self, base: &str, node: &Node, version: u8) -> Result<Option<Reply>, HttpError> {
        let this = |name: &str| (name == &*self.target.repo_name).then(|| self.target.place());
        let Ok(Located::Repo(bt)) = crate::uri::locate_in(self.state, base.trim(), this) else {
            return Ok(None);
        };
        if bt.repo_name != self.target.repo_name {
            return Ok(None);
        }
        let Some(rev) = bt.rev() else { return Ok(None) };
        if !self.can_read(&bt.path) {
            return Ok(None);
        }
        let Ok(base_node) = self.node(rev, &bt.path) else {
            return Ok(None);
        };
        if base_node.node.kind() != NodeKind::File {
            return Ok(None);
        }
        let windows = self.svc.file_delta(&base_node.node, &node.node)?;
        let mut out = svelto_delta::stream_header(version).to_vec();
        for w in windows {
            w.encode(version, 1, &mut out).map_err(|e| {
                HttpError::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    format!("encoding a delta: {e}"),
                )
            })?;
        }
        let reply = Reply::new(StatusCode::OK, "application/vnd.svn-svndiff", out)
            .header("x-svn-base-fulltext-md5", base_node.node.md5().to_hex())
            .header("x-svn-result-fulltext-md5", node.node.md5().to_hex());
        Ok(Some(reply))
    }

    /// mod_dav_svn's HTML listing of a directory.
    fn listing(&self, node: &Node) -> Result<Reply, HttpError> {
        let title = format!(
            "{} - Revision {}: /{}",
            self.target.repo_name, node.rev, node.path
        );
        let mut out = format!(
            "<html><head><title>{t}</title></head>\n<body>\n <h2>{t}</h2>\n <ul>\n",
            t = esc(&title)
        );
        // A listing reached by `?p=PEG` gives its links the same peg (mod_dav_svn's).
        let peg = if self.target.pegged {
            format!("?p={}", node.rev)
        } else {
            String::new()
        };
        if !node.path.is_empty() {
            let _ = writeln!(out, "  <li><a href=\"../{peg}\">..</a></li>");
        }
        for (name, child) in self.entries(node)? {
            let slash = if child.kind() == NodeKind::Dir {
                "/"
            } else {
                ""
            };
            let _ = writeln!(
                out,
                "  <li><a href=\"{}{slash}{peg}\">{}{slash}</a></li>",
                esc(&encode_dav(&name)),
                esc(&name)
            );
        }
        out.push_str(" </ul>\n</body></html>");
        Ok(Reply::new(
            StatusCode::OK,
            "text/html; charset=UTF-8",
            out.into_bytes(),
        ))
    }
}

/// A text from the repository's cache, as the body of a response.
struct SharedText(Arc<Vec<u8>>);

impl AsRef<[u8]> for SharedText {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

/// Which properties a PROPFIND asks for.
pub(crate) enum Wanted {
    All,
    Names,
    Some(Vec<(String, String)>),
}

impl Wanted {
    /// Whether the answer shows the property `ns` `name` (its value or its name).
    fn shows(&self, ns: &str, name: &str) -> bool {
        match self {
            Wanted::All | Wanted::Names => true,
            Wanted::Some(list) => list.iter().any(|(n, m)| n == ns && m == name),
        }
    }
}

/// The element name a versioned property travels under.
fn dead_prop_element(name: &[u8]) -> Option<String> {
    let name = std::str::from_utf8(name).ok()?;
    match name.strip_prefix("svn:") {
        Some(rest) => Some(format!("S:{rest}")),
        None => Some(format!("C:{name}")),
    }
}

/// A versioned property named by a PROPFIND's (namespace, name).
fn dead_prop_name(ns: &str, name: &str) -> Option<Vec<u8>> {
    match ns {
        SVN_PROP => Some(format!("svn:{name}").into_bytes()),
        CUSTOM_PROP => Some(name.as_bytes().to_vec()),
        _ => None,
    }
}

fn live_prefix(ns: &str) -> &'static str {
    if ns == DAV {
        "lp1"
    } else {
        "lp2"
    }
}

fn write_dead(out: &mut String, name: &[u8], value: &[u8]) {
    let Some(el) = dead_prop_element(name) else {
        return;
    };
    let (b64, v) = xml::prop_value(value);
    if value.is_empty() {
        // An empty value as mod_dav_svn writes it.
        let _ = writeln!(out, "<{el}/>");
    } else if b64 {
        let _ = writeln!(out, "<{el} V:encoding=\"base64\">{v}</{el}>");
    } else {
        let _ = writeln!(out, "<{el}>{v}</{el}>");
    }
}

/// One `D:response`: the properties found (200) and those asked for but absent (404).
fn response(
    out: &mut String,
    href: &str,
    live: &[(&str, &str, Option<String>)],
    props: &PropList,
    wanted: &Wanted,
) {
    let _ = write!(out, "<D:response>\n<D:href>{}</D:href>\n", esc(href));
    let found_at = out.len();
    out.push_str("<D:propstat>\n<D:prop>\n");
    let none_found = out.len();
    let mut missing: Vec<(String, String)> = Vec::new();
    let write_live = |out: &mut String, ns: &str, name: &str, v: &str| {
        let p = live_prefix(ns);
        if v.is_empty() {
            let _ = writeln!(out, "<{p}:{name}/>");
        } else {
            let _ = writeln!(out, "<{p}:{name}>{v}</{p}:{name}>");
        }
    };
    match wanted {
        Wanted::All => {
            for (name, value) in props {
                write_dead(out, name, value);
            }
            for (ns, name, v) in live {
                if let Some(v) = v {
                    write_live(out, ns, name, v);
                }
            }
        }
        Wanted::Names => {
            for name in props.keys() {
                if let Some(el) = dead_prop_element(name) {
                    let _ = writeln!(out, "<{el}/>");
                }
            }
            for (ns, name, v) in live {
                if v.is_some() {
                    let _ = writeln!(out, "<{}:{name}/>", live_prefix(ns));
                }
            }
        }
        Wanted::Some(list) => {
            for (ns, name) in list {
                if let Some((_, _, v)) = live.iter().find(|(n, m, _)| n == ns && m == name) {
                    match v {
                        Some(v) => write_live(out, ns, name, v),
                        None => missing.push((ns.clone(), name.clone())),
                    }
                    continue;
                }
                match dead_prop_name(ns, name).and_then(|n| props.get(&n).map(|v| (n, v))) {
                    Some((n, v)) => write_dead(out, &n, v),
                    None => missing.push((ns.clone(), name.clone())),
                }
            }
        }
    }
    if out.len() == none_found && !missing.is_empty() {
        // Only properties it lacks: mod_dav answers their 404 propstat alone (no empty
        // 200 one; Subversion's mod_dav_svn_tests 4 checks the response as a whole).
        out.truncate(found_at);
    } else {
        out.push_str("</D:prop>\n<D:status>HTTP/1.1 200 OK</D:status>\n</D:propstat>\n");
    }
    if !missing.is_empty() {
        out.push_str("<D:propstat>\n<D:prop>\n");
        for (i, (ns, name)) in missing.iter().enumerate() {
            let _ = writeln!(out, "<g{i}:{} xmlns:g{i}=\"{}\"/>", esc(name), esc(ns));
        }
        out.push_str("</D:prop>\n<D:status>HTTP/1.1 404 Not Found</D:status>\n</D:propstat>\n");
    }
    out.push_str("</D:response>\n");
}

/// An svn:date ("2011-03-13T08:07:51.007920Z") as an HTTP date
/// ("Sun, 13 Mar 2011 08:07:51 GMT").
pub(crate) fn http_date(svn_date: &str) -> Option<String> {
    let secs = svelto_core::parse_svn_date(svn_date)?.div_euclid(1_000_000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = svelto_core::civil_from_days(days);
    const WEEKDAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    Some(format!(
        "{}, {d:02} {} {y} {:02}:{:02}:{:02} GMT",
        WEEKDAYS[days.rem_euclid(7) as usize],
        MONTHS.get(m.checked_sub(1)? as usize)?,
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_etags_are_mod_dav_svns() {
        for (cr, path) in [
            (0, ""),
            (9, "trunk/a"),
            (10, "trunk/ü b"),
            (12000, "x"),
            (Revnum::MAX, "deep/er/path.c"),
        ] {
            let tag = file_etag(cr, path);
            assert_eq!(&tag[..], format!("\"{cr}//{path}\"").as_bytes());
        }
    }

    #[test]
    fn http_dates() {
        assert_eq!(
            http_date("2011-03-13T08:07:51.007920Z").as_deref(),
            Some("Sun, 13 Mar 2011 08:07:51 GMT")
        );
        assert_eq!(
            http_date("2000-02-29T23:59:59.000000Z").as_deref(),
            Some("Tue, 29 Feb 2000 23:59:59 GMT")
        );
        assert_eq!(http_date("garbage"), None);
    }
}
