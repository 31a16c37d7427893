//! The write side of protocol v2 (`docs/formats/http.md`, "Commits"), as ra_serf 1.14
//! drives it: `POST` of `( create-txn )` to `!svn/me` opens a transaction, `PUT` (svndiff),
//! `MKCOL`, `DELETE`, `COPY` and `PROPPATCH` on `!svn/txr/NAME/path` edit it, `PROPPATCH` on
//! `!svn/txn/NAME` sets its revision properties, `MERGE` commits it and `DELETE` of
//! `!svn/txn/NAME` aborts it.
//!
//! Every edit goes through the service layer's [`CommitEdit`] (authz of each call, the
//! commit's own rules, hooks, locks, the commit point): this module only maps requests onto
//! its calls and its errors onto mod_dav_svn's answers. Transactions live across requests
//! in [`Txns`], a bounded table; one idle past the idle timeout is dropped.

use crate::ctx::{Ctx, XML_HEADER};
use crate::error::HttpError;
use crate::skel::Skel;
use crate::uri::{Kind, Located};
use crate::xml::{self, esc, Elem, CUSTOM_PROP, DAV, SVN, SVN_DAV, SVN_PROP};
use crate::{Reply, Req};
use hyper::StatusCode;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;
use svelto_core::{parent_and_name, NodeKind, Revnum};
use svelto_repos::service::{CommitEdit, CommitRequest, Committed, WriteRule};
use svelto_repos::{ReposError, SvnErrorKind};

/// The most transactions open at once (over all repositories).
const MAX_TXNS: usize = 1024;

use svelto_core::code::{
    FS_NO_SUCH_TRANSACTION as NO_SUCH_TRANSACTION, INCORRECT_PARAMS, RA_DAV_MALFORMED_DATA,
    RA_OUT_OF_DATE,
};

type Edit = CommitEdit<Arc<svelto_repos::service::Ctx>>;

/// One open transaction.
struct Open {
    /// The repository it belongs to.
    repo_dir: std::path::PathBuf,
    edit: Edit,
    used: Instant,
    /// A shutdown waits for the transaction to be merged or aborted.
    _writing: svelto_core::Writing,
}

/// The open transactions, by name.
#[derive(Default)]
pub(crate) struct Txns {
    map: Mutex<HashMap<String, Arc<Mutex<Option<Open>>>>>,
}

impl Txns {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Mutex<Option<Open>>>>> {
        self.map.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds a transaction, first dropping those idle longer than `idle`; refuses when the
    /// table is full.
    fn insert(&self, open: Open, idle: std::time::Duration) -> Result<String, HttpError> {
        let name = open.edit.name().to_string();
        let mut map = self.lock();
        if map.len() >= MAX_TXNS {
            map.retain(|_, slot| match slot.try_lock() {
                Ok(g) => g.as_ref().is_some_and(|o| o.used.elapsed() < idle),
                Err(_) => true,
            });
        }
        if map.len() >= MAX_TXNS {
            return Err(HttpError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                format!("Too many open transactions ({MAX_TXNS}); try again later"),
            ));
        }
        map.insert(name.clone(), Arc::new(Mutex::new(Some(open))));
        Ok(name)
    }

    fn get(&self, name: &str) -> Option<Arc<Mutex<Option<Open>>>> {
        self.lock().get(name).cloned()
    }

    fn remove(&self, name: &str) -> Option<Arc<Mutex<Option<Open>>>> {
        self.lock().remove(name)
    }
}

/// A request by another authenticated user than the one who began the transaction:
/// mod_dav_svn's refusal. An anonymous request is not refused here (as in mod_dav_svn: the
/// URL's write access was checked for anonymous, and the edit checks each path again).
fn foreign(open: &Open, ctx: &Ctx<'_>) -> Option<HttpError> {
    let (Some(owner), Some(user)) = (open.edit.ctx().user(), ctx.svc.user()) else {
        return None;
    };
    (owner != user).then(|| {
        ctx.state.log(&format!(
            "user {user}: refused: transaction '{}' is {owner}'s",
            open.edit.name()
        ));
        HttpError::new(
            StatusCode::NOT_IMPLEMENTED,
            "Multi-author commits not supported.",
        )
    })
}

/// Once the server is shutting down, a write that would start something new (a
/// transaction, a revision property change, a lock) is refused; transactions already open
/// go on to their MERGE.
pub(crate) fn refuse_in_shutdown(state: &crate::State) -> Result<(), HttpError> {
    if state.host.drain.is_shutting_down() {
        return Err(HttpError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "The server is shutting down; try again later",
        ));
    }
    Ok(())
}

fn no_such_txn(name: &str) -> HttpError {
    HttpError::svn(
        StatusCode::NOT_FOUND,
        NO_SUCH_TRANSACTION,
        format!("No such transaction '{name}'"),
    )
}

/// Answers a write request (the URL's access is checked already, as mod_authz_svn
/// checks it; each edit is checked again by the commit editor).
pub(crate) fn handle(ctx: Ctx<'_>, req: &Req) -> Result<Reply, HttpError> {
    match (req.method.as_str(), ctx.target.kind) {
        ("POST", Kind::Me) => post(ctx, req),
        ("POST", _) => Err(HttpError::svn(
            StatusCode::BAD_REQUEST,
            INCORRECT_PARAMS,
            "POST requests are accepted only on the 'me' resource",
        )),
        ("DELETE", Kind::Txn) => abort(&ctx),
        ("MERGE", Kind::Public) => merge(&ctx, req),
        ("COPY", Kind::RevRoot(rev) | Kind::Version(rev)) => copy(&ctx, req, rev),
        ("PUT" | "MKCOL" | "DELETE" | "PROPPATCH", Kind::TxnRoot) => {
            with_txn(&ctx, &ctx.target, |edit| match req.method.as_str() {
                "PUT" => put(&ctx, req, edit),
                "MKCOL" => mkcol(&ctx, req, edit),
                "DELETE" => delete(&ctx, req, edit),
                _ => proppatch_node(&ctx, req, edit),
            })
        }
        ("PROPPATCH", Kind::Rev(rev) | Kind::Baseline(rev)) => proppatch_rev(ctx, req, rev),
        ("PROPPATCH", Kind::Txn) => {
            with_txn(&ctx, &ctx.target, |edit| proppatch_txn(&ctx, req, edit))
        }
        (m, _) => Err(HttpError::new(
            StatusCode::METHOD_NOT_ALLOWED,
            format!("{m} is not allowed on '{}'", ctx.uri),
        )),
    }
}

/// Runs `f` on the open transaction `target` names.
fn with_txn<T>(
    ctx: &Ctx<'_>,
    target: &crate::uri::Target,
    f: impl FnOnce(&mut Edit) -> Result<T, HttpError>,
) -> Result<T, HttpError> {
    let name = &target.txn;
    let slot = ctx.state.txns.get(name).ok_or_else(|| no_such_txn(name))?;
    let mut guard = slot.lock().unwrap_or_else(|e| e.into_inner());
    let open = guard.as_mut().ok_or_else(|| no_such_txn(name))?;
    if *open.repo_dir != *target.repo_dir {
        return Err(no_such_txn(name));
    }
    if let Some(e) = foreign(open, ctx) {
        return Err(e);
    }
    open.used = Instant::now();
    f(&mut open.edit)
}

/// The kind of `path` in the open transaction the target names (None: no such
/// transaction; Some(None): no such path in it).
pub(crate) fn txn_kind(ctx: &Ctx<'_>, path: &str) -> Result<Option<Option<NodeKind>>, HttpError> {
    match with_txn(ctx, &ctx.target, |edit| {
        Ok(edit.lookup(path).map_err(commit_error)?.map(|s| s.kind))
    }) {
        Ok(kind) => Ok(Some(kind)),
        Err(e) if e.code == NO_SUCH_TRANSACTION => Ok(None),
        Err(e) => Err(e),
    }
}

/// The client's capabilities as the start-commit hook sees them, as mod_dav_svn records
/// them: only for a Subversion client (a `User-Agent` beginning `SVN/`), and only the one
/// it keeps, `mergeinfo`, when a `DAV:` header names it (the stock client also announces
/// `depth` and `log-revprops`, which mod_dav_svn does not pass on).
fn capabilities(req: &Req) -> String {
    let svn_client = req
        .headers
        .get(hyper::header::USER_AGENT)
        .is_some_and(|v| v.as_bytes().starts_with(b"SVN/"));
    let mergeinfo = req
        .headers
        .get_all("dav")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|v| v.trim() == "http://subversion.tigris.org/xmlns/dav/svn/mergeinfo");
    if svn_client && mergeinfo {
        "mergeinfo".to_owned()
    } else {
        String::new()
    }
}

/// `POST` to `!svn/me`: `( create-txn )` or `( create-txn-with-props (NAME VALUE ...) )`.
/// The transaction begins on HEAD, start-commit runs, and the answer is 201 with its name
/// in `SVN-Txn-Name`.
fn post(ctx: Ctx<'_>, req: &Req) -> Result<Reply, HttpError> {
    let malformed = |why: String| {
        HttpError::svn(
            StatusCode::BAD_REQUEST,
            RA_DAV_MALFORMED_DATA,
            format!("Malformatted request skel: {why}"),
        )
    };
    let skel = crate::skel::parse(&req.body).map_err(malformed)?;
    let Skel::List(items) = skel else {
        return Err(malformed("not a list".into()));
    };
    let mut revprops = svelto_core::PropList::new();
    match items.as_slice() {
        [Skel::Atom(w)] if w == b"create-txn" => {}
        [Skel::Atom(w), Skel::List(props)] if w == b"create-txn-with-props" => {
            if props.len() % 2 != 0 {
                return Err(malformed("a property without a value".into()));
            }
            for pair in props.chunks(2) {
                match pair {
                    [Skel::Atom(n), Skel::Atom(v)] => {
                        revprops.insert(n.clone(), v.clone());
                    }
                    _ => return Err(malformed("a property that is not two atoms".into())),
                }
            }
        }
        [Skel::Atom(w), ..] => {
            return Err(HttpError::svn(
                StatusCode::BAD_REQUEST,
                crate::error::UNSUPPORTED_FEATURE,
                format!(
                    "Unsupported POST request type '{}'",
                    String::from_utf8_lossy(w)
                ),
            ))
        }
        _ => return Err(malformed("no request type".into())),
    }
    let request = CommitRequest {
        revprops,
        capabilities: capabilities(req),
        write_rule: WriteRule::PathOnly,
        // A cluster front end's id in the name tells the other front ends where it is.
        name_tag: ctx
            .state
            .config
            .peers
            .as_ref()
            .map(|p| p.id.clone())
            .unwrap_or_default(),
        ..CommitRequest::default()
    };
    refuse_in_shutdown(ctx.state)?;
    let (state, repo_dir) = (ctx.state, ctx.target.repo_dir.to_path_buf());
    let mut edit = CommitEdit::begin(Arc::new(ctx.svc.clone()), request).map_err(commit_error)?;
    edit.open_root(None).map_err(commit_error)?;
    let open = Open {
        repo_dir,
        edit,
        used: Instant::now(),
        _writing: state.host.drain.write(),
    };
    let name = state.txns.insert(open, state.host.config.idle_timeout)?;
    Ok(Reply::new(StatusCode::CREATED, "text/plain", Vec::new()).header("svn-txn-name", name))
}

/// `DELETE` of `!svn/txn/NAME`: the client aborts its commit.
fn abort(ctx: &Ctx<'_>) -> Result<Reply, HttpError> {
    let name = &ctx.target.txn;
    let slot = ctx.state.txns.get(name).ok_or_else(|| no_such_txn(name))?;
    {
        let guard = slot.lock().unwrap_or_else(|e| e.into_inner());
        let Some(open) = guard
            .as_ref()
            .filter(|o| *o.repo_dir == *ctx.target.repo_dir)
        else {
            return Err(no_such_txn(name));
        };
        if let Some(e) = foreign(open, ctx) {
            return Err(e);
        }
    }
    if let Some(slot) = ctx.state.txns.remove(name) {
        // Dropping the edit drops its spool file.
        slot.lock().unwrap_or_else(|e| e.into_inner()).take();
    }
    Ok(no_content())
}

fn no_content() -> Reply {
    Reply::new(StatusCode::NO_CONTENT, "text/plain", Vec::new())
}

fn created() -> Reply {
    Reply::new(StatusCode::CREATED, "text/plain", Vec::new())
}

/// The `X-SVN-Version-Name` header: the client's base revision of what it changes.
fn version_name(req: &Req) -> Result<Option<Revnum>, HttpError> {
    match req.header("x-svn-version-name").map(str::trim) {
        None | Some("") => Ok(None),
        // SVN_INVALID_REVNUM: no base revision.
        Some("-1") => Ok(None),
        Some(v) => v.parse::<Revnum>().map(Some).map_err(|_| {
            HttpError::bad_request(format!("Invalid X-SVN-Version-Name header '{v}'"))
        }),
    }
}

/// A `PUT` or `PROPPATCH` naming the version it changes (`X-SVN-Version-Name`) of a path
/// the transaction lacks (deleted since): mod_dav_svn's out-of-date check asks for the
/// path's created revision in the transaction and answers FSFS's "File not found:
/// transaction 'NAME', path '/p'" with 500, the error the repository's open_file gives.
fn not_in_txn(edit: &mut Edit, path: &str) -> HttpError {
    let mut err = match edit.open_file(path, None) {
        Err(e) => commit_error(e),
        Ok(()) => HttpError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("'/{path}' is in the transaction after all"),
        ),
    };
    err.status = StatusCode::INTERNAL_SERVER_ERROR;
    err
}

/// A commit error as mod_dav_svn answers it: out-of-date refusals are 409 with
/// `SVN_ERR_RA_OUT_OF_DATE`, the rest as the error's own code says.
fn commit_error(e: ReposError) -> HttpError {
    let kind = match &e {
        ReposError::Svn { kind, .. } | ReposError::Wrapped { kind, .. } => Some(*kind),
        _ => None,
    };
    let status = match kind {
        Some(SvnErrorKind::TxnOutOfDate) => {
            return HttpError::svn(StatusCode::CONFLICT, RA_OUT_OF_DATE, e.to_string())
        }
        Some(SvnErrorKind::AlreadyExists) => Some(StatusCode::METHOD_NOT_ALLOWED),
        Some(SvnErrorKind::Conflict) => Some(StatusCode::CONFLICT),
        Some(
            SvnErrorKind::AuthzUnwritable
            | SvnErrorKind::AuthzUnreadable
            | SvnErrorKind::NotAuthorized,
        ) => Some(StatusCode::FORBIDDEN),
        Some(SvnErrorKind::ChecksumMismatch | SvnErrorKind::BadDelta(_)) => {
            Some(StatusCode::BAD_REQUEST)
        }
        _ => None,
    };
    let mut err = HttpError::from(e);
    if let Some(s) = status {
        err.status = s;
    }
    err
}

/// `PUT` of a file's new text into the transaction: an svndiff against its text there
/// (`Content-Type: application/vnd.svn-svndiff`), or the whole text. A path the
/// transaction does not have is added (201), else the file is changed (204).
fn put(ctx: &Ctx<'_>, req: &Req, edit: &mut Edit) -> Result<Reply, HttpError> {
    let path = node_path(ctx)?;
    let lock = crate::locks::check_change(ctx, req, path, false)?;
    let version = version_name(req)?;
    let added = match edit.lookup(path).map_err(commit_error)? {
        // The client changes the version it names of a path the transaction lacks (deleted
        // since): mod_dav_svn's out-of-date check asks for the path's created revision and
        // fails with FSFS's "File not found" (500), as the repository's open_file does.
        None if version.is_some() => return Err(not_in_txn(edit, path)),
        None => {
            let (parent, _) = parent_and_name(path);
            edit.add(path, NodeKind::File, None, parent, false)
                .map_err(commit_error)?;
            true
        }
        Some(seen) if seen.kind == NodeKind::Dir => {
            return Err(HttpError::new(
                StatusCode::METHOD_NOT_ALLOWED,
                format!("Cannot PUT to a directory: '/{path}'"),
            ))
        }
        Some(_) => {
            edit.open_file(path, version).map_err(commit_error)?;
            false
        }
    };
    let svndiff = req
        .header("content-type")
        .is_some_and(|t| t.trim().starts_with("application/vnd.svn-svndiff"));
    let base = req.header("x-svn-base-fulltext-md5").map(str::trim);
    let stream = req.stream.lock().unwrap_or_else(|e| e.into_inner()).take();
    if let Some(mut stream) = stream {
        let mut td = edit.start_text(path, base).map_err(commit_error)?;
        while let Some(chunk) = stream.blocking_recv() {
            let chunk = chunk.map_err(|why| {
                HttpError::bad_request(format!("The PUT request's body broke off: {why}"))
            })?;
            edit.text_chunk(&mut td, &chunk).map_err(commit_error)?;
        }
        edit.end_text(td).map_err(commit_error)?;
    } else if svndiff || !req.body.is_empty() {
        let delta;
        let bytes: &[u8] = if svndiff {
            &req.body
        } else {
            // A whole text: as a delta from nothing.
            delta = fulltext_delta(&req.body)?;
            &delta
        };
        let mut td = edit.start_text(path, base).map_err(commit_error)?;
        edit.text_chunk(&mut td, bytes).map_err(commit_error)?;
        edit.end_text(td).map_err(commit_error)?;
    }
    edit.close_file(path, req.header("x-svn-result-fulltext-md5").map(str::trim))
        .map_err(commit_error)?;
    // What mod_dav_svn's `put-result-checksum` capability promises: the client checks it.
    let md5 = edit.text_md5(path).map_err(commit_error)?;
    let reply = if added { created() } else { no_content() };
    Ok(crate::locks::lock_headers(reply, lock.as_ref()).header("x-svn-result-fulltext-md5", md5))
}

/// A MERGE body's `lock-path`: a relpath as it is, not a URI (ra_serf writes the path
/// itself, so a file named `a %( ) .txt` comes as that), refused (400) unless canonical as
/// mod_dav_svn refuses it, and with a `..` or NUL.
fn lock_relpath(path: &str) -> Result<&str, HttpError> {
    let canonical = path.is_empty()
        || path
            .split('/')
            .all(|s| !s.is_empty() && s != "." && s != ".." && !s.contains('\0'));
    if canonical {
        Ok(path)
    } else {
        Err(HttpError::bad_request(format!(
            "Path '{path}' is not canonical"
        )))
    }
}

/// An svndiff that builds `text` from nothing.
fn fulltext_delta(text: &[u8]) -> Result<Vec<u8>, HttpError> {
    let mut out = svelto_delta::stream_header(0).to_vec();
    for w in svelto_delta::delta_windows(&[], text) {
        w.encode(0, 0, &mut out).map_err(|e| {
            HttpError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("encoding a text: {e}"),
            )
        })?;
    }
    Ok(out)
}

/// The transaction path a `!svn/txr` request names; its root cannot be replaced.
fn node_path<'c>(ctx: &'c Ctx<'_>) -> Result<&'c str, HttpError> {
    let path = ctx.target.path.as_str();
    if path.is_empty() {
        return Err(HttpError::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "The root directory of a transaction cannot be replaced",
        ));
    }
    Ok(path)
}

/// `MKCOL`: a new directory in the transaction.
fn mkcol(ctx: &Ctx<'_>, req: &Req, edit: &mut Edit) -> Result<Reply, HttpError> {
    if !req.body.is_empty() {
        return Err(HttpError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "MKCOL with a request body is not supported",
        ));
    }
    let path = node_path(ctx)?;
    crate::locks::check_change(ctx, req, path, true)?;
    if edit.lookup(path).map_err(commit_error)?.is_some() {
        // mod_dav_svn's own refusal (mod_dav would say only "405 Method Not Allowed").
        return Err(HttpError::svn(
            StatusCode::METHOD_NOT_ALLOWED,
            svelto_core::code::FS_ALREADY_EXISTS,
            format!("Path already exists, path '/{path}'"),
        ));
    }
    let (parent, _) = parent_and_name(path);
    edit.add(path, NodeKind::Dir, None, parent, false)
        .map_err(commit_error)?;
    Ok(created())
}

/// `DELETE` of a path in the transaction, as of the client's `X-SVN-Version-Name`.
/// The client sends the tokens of the locks below the path in an `S:lock-token-list` body
/// instead of the `If:` header when a server or proxy refused that header as too long (400:
/// Apache's and nginx's 8 KB limits), as mod_dav_svn reads them.
fn delete(ctx: &Ctx<'_>, req: &Req, edit: &mut Edit) -> Result<Reply, HttpError> {
    let path = node_path(ctx)?;
    let mut body_tokens = Vec::new();
    if !req.body.iter().all(u8::is_ascii_whitespace) {
        let doc = xml::parse(&req.body)?;
        if doc.is(SVN, "lock-token-list") {
            body_tokens = lock_token_list(&doc, "DELETE")?
                .into_iter()
                .map(|(_, token)| token)
                .collect();
        }
    }
    let lock = crate::locks::check_change_with(ctx, req, path, true, body_tokens)?;
    let version = version_name(req)?;
    let (parent, _) = parent_and_name(path);
    edit.delete(path, version, parent).map_err(commit_error)?;
    crate::locks::release_deleted(ctx, req, lock.as_ref())?;
    Ok(crate::locks::lock_headers(no_content(), lock.as_ref()))
}

/// `COPY` of `!svn/rvr/REV/path` to the `Destination:` in a transaction.
fn copy(ctx: &Ctx<'_>, req: &Req, rev: Revnum) -> Result<Reply, HttpError> {
    let dest = req
        .header("destination")
        .ok_or_else(|| HttpError::bad_request("COPY needs a Destination header"))?;
    let dst = match crate::uri::locate(ctx.state, crate::uri::url_path(dest))? {
        Located::Repo(t) if t.kind == Kind::TxnRoot && t.repo_dir == ctx.target.repo_dir => t,
        _ => {
            return Err(HttpError::new(
                StatusCode::BAD_REQUEST,
                format!("The COPY destination '{dest}' is not in a transaction of this repository"),
            ))
        }
    };
    if dst.path.is_empty() {
        return Err(HttpError::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "The root directory of a transaction cannot be replaced",
        ));
    }
    // mod_authz_svn checks the Destination before the copy runs, as a write of its whole
    // subtree: 403 ("Access to '...' forbidden"), not the commit's "Access denied"
    // (Subversion's authz_tests 5).
    if !ctx.svc.allowed_recursive(&dst.path, true) {
        return Err(ctx.gate.refuse(true));
    }
    let src = ctx.target.path.clone();
    let kind = ctx.node(rev, &src)?.node.kind();
    crate::locks::check_change(ctx, req, &dst.path, true)?;
    with_txn(ctx, &dst, |edit| {
        let (parent, _) = parent_and_name(&dst.path);
        edit.add(&dst.path, kind, Some((src, Some(rev))), parent, false)
            .map_err(commit_error)?;
        Ok(created())
    })
}

/// One property change of a `PROPPATCH` body.
struct PropChange {
    name: Vec<u8>,
    /// The new value (None: delete).
    value: Option<Vec<u8>>,
    /// The value the client expects the property to have now (`V:old-value`, for atomic
    /// revision property changes): `Some(None)` when it expects none.
    expected: Option<Option<Vec<u8>>>,
}

/// The property changes of a `PROPPATCH` body, in document order.
type PropChanges = Vec<PropChange>;

fn prop_changes(req: &Req) -> Result<PropChanges, HttpError> {
    let doc = xml::parse(&req.body)?;
    if !doc.is(DAV, "propertyupdate") {
        return Err(HttpError::malformed_xml(
            "The PROPPATCH request's body is not a DAV:propertyupdate element",
        ));
    }
    let mut out = Vec::new();
    for op in &doc.children {
        let set = if op.is(DAV, "set") {
            true
        } else if op.is(DAV, "remove") {
            false
        } else {
            continue;
        };
        for prop in op.children.iter().filter(|c| c.is(DAV, "prop")) {
            for p in &prop.children {
                let name = prop_name(p)?;
                let value = if set && p.attr("absent").is_none() {
                    Some(prop_value(p)?)
                } else {
                    None
                };
                let expected = match p.child(SVN_DAV, "old-value") {
                    None => None,
                    Some(old) if old.attr("absent").is_some() => Some(None),
                    Some(old) => Some(Some(prop_value(old)?)),
                };
                out.push(PropChange {
                    name,
                    value,
                    expected,
                });
            }
        }
    }
    Ok(out)
}

/// A property's name from its element: `svn:NAME` in Subversion's namespace, the whole
/// name in the custom one.
fn prop_name(e: &Elem) -> Result<Vec<u8>, HttpError> {
    match e.ns.as_str() {
        SVN_PROP => Ok(format!("svn:{}", e.name).into_bytes()),
        CUSTOM_PROP => Ok(e.name.clone().into_bytes()),
        ns => Err(HttpError::new(
            StatusCode::FORBIDDEN,
            format!(
                "Properties may only be set in Subversion's namespaces, not '{ns}' ('{}')",
                e.name
            ),
        )),
    }
}

/// A property value from its element (`V:encoding="base64"` decoded).
fn prop_value(e: &Elem) -> Result<Vec<u8>, HttpError> {
    match e.attr("encoding") {
        None => Ok(e.text.clone().into_bytes()),
        Some("base64") => {
            use base64::Engine as _;
            let clean: Vec<u8> = e
                .text
                .bytes()
                .filter(|b| !b.is_ascii_whitespace())
                .collect();
            base64::engine::general_purpose::STANDARD
                .decode(clean)
                .map_err(|err| {
                    HttpError::malformed_xml(format!(
                        "The value of property '{}' is not valid base64: {err}",
                        e.name
                    ))
                })
        }
        Some(other) => Err(HttpError::malformed_xml(format!(
            "Unknown encoding '{other}' of property '{}'",
            e.name
        ))),
    }
}

/// One `D:propstat` naming `changes` with `status` (and a description).
fn propstat(out: &mut String, changes: &[PropChange], status: &str, description: Option<&str>) {
    out.push_str("<D:propstat>\n<D:prop>\n");
    for c in changes {
        let name = String::from_utf8_lossy(&c.name);
        let (ns, local) = match name.strip_prefix("svn:") {
            Some(rest) => (SVN_PROP, rest),
            None => (CUSTOM_PROP, name.as_ref()),
        };
        out.push_str(&format!("<g:{} xmlns:g=\"{ns}\"/>\n", esc(local)));
    }
    out.push_str(&format!(
        "</D:prop>\n<D:status>HTTP/1.1 {status}</D:status>\n"
    ));
    if let Some(d) = description {
        out.push_str(&format!(
            "<D:responsedescription>{}</D:responsedescription>\n",
            esc(d)
        ));
    }
    out.push_str("</D:propstat>\n");
}

/// The 207 answer to a PROPPATCH that changed everything it asked for.
fn proppatch_ok(href: &str, changes: &PropChanges) -> Reply {
    let mut out = String::from(XML_HEADER);
    out.push_str("<D:multistatus xmlns:D=\"DAV:\">\n<D:response>\n");
    out.push_str(&format!("<D:href>{}</D:href>\n", esc(href)));
    propstat(&mut out, changes, "200 OK", None);
    out.push_str("</D:response>\n</D:multistatus>\n");
    Reply::xml(StatusCode::MULTI_STATUS, out.into_bytes())
}

/// `PROPPATCH` of a node in the transaction (checked against the client's
/// `X-SVN-Version-Name` first, as mod_dav_svn checks it).
fn proppatch_node(ctx: &Ctx<'_>, req: &Req, edit: &mut Edit) -> Result<Reply, HttpError> {
    let path = ctx.target.path.as_str();
    let lock = crate::locks::check_change(ctx, req, path, false)?;
    let changes = prop_changes(req)?;
    if let Some(version) = version_name(req)? {
        match edit.lookup(path).map_err(commit_error)? {
            Some(seen) if seen.kind == NodeKind::Dir => edit
                .check_dir_current(path, version)
                .map_err(commit_error)?,
            Some(_) => edit.open_file(path, Some(version)).map_err(commit_error)?,
            None => return Err(not_in_txn(edit, path)),
        }
    }
    if let Some(refused) = refused_change(ctx, &changes, |_| true) {
        return Ok(proppatch_failed(ctx.uri, &changes, refused));
    }
    for c in &changes {
        edit.change_prop(path, &c.name, c.value.as_deref())
            .map_err(commit_error)?;
    }
    Ok(crate::locks::lock_headers(
        proppatch_ok(ctx.uri, &changes),
        lock.as_ref(),
    ))
}

/// The first change of a PROPPATCH on a transaction that the repository refuses to
/// store (`svelto_repos::commit::validate_prop`: `svn:entry:` and `svn:wc:` names,
/// `svn:` values that are not UTF-8 or have CRLF, a malformed `svn:date`), among those
/// `checked`; the repository's reason goes to the log, as Apache's error log gets it.
fn refused_change(
    ctx: &Ctx<'_>,
    changes: &PropChanges,
    checked: impl Fn(&PropChange) -> bool,
) -> Option<usize> {
    changes.iter().position(|c| {
        if !checked(c) {
            return false;
        }
        match svelto_repos::commit::validate_prop(&c.name, c.value.as_deref()) {
            Ok(()) => false,
            Err(e) => {
                ctx.state.log(&format!(
                    "{}: PROPPATCH {}: {e}",
                    ctx.target.repo_name, ctx.uri
                ));
                true
            }
        }
    })
}

/// The 207 answer to a PROPPATCH on a transaction whose change `failed` the repository
/// refused, as mod_dav answers it: nothing is changed; every change is listed in
/// document order, the refused one `500` with mod_dav's "Could not execute PROPPATCH."
/// (the reason is in the server's log), the others `424 Failed Dependency`.
fn proppatch_failed(href: &str, changes: &PropChanges, failed: usize) -> Reply {
    proppatch_refused(
        href,
        changes,
        failed,
        "500 Internal Server Error",
        "Could not execute PROPPATCH.",
    )
}

/// The 207 answer to a PROPPATCH whose change `failed` failed with `status` and `why`, as
/// mod_dav answers it: every change in document order, the failed one with its status and
/// `why` as its `D:responsedescription`, each other one `424 Failed Dependency` with
/// mod_dav's words for a set or a remove.
fn proppatch_refused(
    href: &str,
    changes: &PropChanges,
    failed: usize,
    status: &str,
    why: &str,
) -> Reply {
    let mut out = String::from(XML_HEADER);
    out.push_str("<D:multistatus xmlns:D=\"DAV:\">\n<D:response>\n");
    out.push_str(&format!("<D:href>{}</D:href>\n", esc(href)));
    for (i, c) in changes.iter().enumerate() {
        let (status, why) = if i == failed {
            (status, why)
        } else if c.value.is_some() {
            (
                "424 Failed Dependency",
                "Attempted DAV:set operation could not be completed due to other errors.",
            )
        } else {
            (
                "424 Failed Dependency",
                "Attempted DAV:remove operation could not be completed due to other errors.",
            )
        };
        propstat(&mut out, &changes[i..=i], status, Some(why));
    }
    out.push_str("</D:response>\n</D:multistatus>\n");
    Reply::xml(StatusCode::MULTI_STATUS, out.into_bytes())
}

/// `PROPPATCH` of `!svn/txn/NAME`: the revision properties the commit will have.
fn proppatch_txn(ctx: &Ctx<'_>, req: &Req, edit: &mut Edit) -> Result<Reply, HttpError> {
    let changes = prop_changes(req)?;
    // svn:author is the server's to set: a change of it is ignored, never refused.
    if let Some(refused) = refused_change(ctx, &changes, |c| c.name != b"svn:author") {
        return Ok(proppatch_failed(ctx.uri, &changes, refused));
    }
    for c in &changes {
        edit.set_revprop(&c.name, c.value.as_deref())
            .map_err(commit_error)?;
    }
    Ok(proppatch_ok(ctx.uri, &changes))
}

/// `PROPPATCH` of `!svn/rev/N` (or v1's `!svn/bln/N`, which `svn propset --revprop`
/// uses): revision property changes (`svn propset --revprop`, svnsync, `svnrdump load`),
/// each through the service layer's rules and the pre- and post-revprop-change hooks,
/// atomic when the client sends the old value. A refused change is answered as mod_dav
/// answers a failed PROPPATCH: 207, the property's `D:propstat` with the failure's status
/// (412 for an old value that does not match, else 500) and the error's first message as
/// its `D:responsedescription` (mod_dav_svn's best message: Subversion's text for the code
/// when the error has none, "Wrong or unexpected property value" for a bogus `svn:date`),
/// every other property `424 Failed Dependency` (those changed before it stay changed, as
/// through Apache).
fn proppatch_rev(ctx: Ctx<'_>, req: &Req, rev: Revnum) -> Result<Reply, HttpError> {
    refuse_in_shutdown(ctx.state)?;
    let changes = prop_changes(req)?;
    ctx.check_rev(rev)?;
    // mod_dav_svn names the revision's baseline in its answer, whichever URL was used.
    let uri = ctx.special_href("bln", rev, "");
    let mut svc = ctx.svc.clone();
    let mut logged = None;
    for (i, c) in changes.iter().enumerate() {
        let name = std::str::from_utf8(&c.name)
            .map_err(|_| HttpError::malformed_xml("A revision property name is not UTF-8"))?;
        // mod_dav_svn's action: the last property it set.
        logged = Some(svelto_repos::action::change_rev_prop(rev, name));
        let expected = c.expected.as_ref().map(|e| e.as_deref());
        if let Err(e) = svc.change_rev_prop(rev, name, c.value.as_deref(), expected) {
            // Each link's best message: Subversion's text for its code when it has none.
            let chain: Vec<String> = e
                .chain()
                .into_iter()
                .map(|(code, m)| match m.is_empty() {
                    true => svelto_core::code::default_message(code).to_string(),
                    false => m,
                })
                .collect();
            let err = HttpError::from(e);
            let status = if err.code == svelto_core::code::FS_PROP_BASEVALUE_MISMATCH {
                "412 Precondition Failed"
            } else if err.status == StatusCode::NOT_FOUND {
                return Err(err);
            } else {
                "500 Internal Server Error"
            };
            ctx.state.log(&format!(
                "{}: PROPPATCH {uri}: {}",
                ctx.target.repo_name,
                chain.join(": ")
            ));
            let why = chain.first().map_or("", String::as_str);
            let reply = proppatch_refused(&uri, &changes, i, status, why);
            return Ok(reply.action(svelto_repos::action::change_rev_prop(rev, name)));
        }
    }
    let reply = proppatch_ok(&uri, &changes);
    Ok(match logged {
        Some(a) => reply.action(a),
        None => reply,
    })
}

/// The (relative lock path, token) pairs of an `S:lock-token-list` element (a `MERGE`'s or
/// a `DELETE`'s, `method`).
fn lock_token_list(list: &Elem, method: &str) -> Result<Vec<(String, String)>, HttpError> {
    let mut out = Vec::new();
    for lock in list.children.iter().filter(|c| c.is(SVN, "lock")) {
        let (Some(path), Some(token)) = (
            lock.child_text("", "lock-path"),
            lock.child_text("", "lock-token"),
        ) else {
            return Err(HttpError::malformed_xml(format!(
                "A lock in the {method} request lacks its lock-path or lock-token"
            )));
        };
        out.push((lock_relpath(path)?.to_string(), token.to_string()));
    }
    Ok(out)
}

/// `MERGE` on the commit's anchor: the transaction named by `D:source` is committed, with
/// the lock tokens of `S:lock-token-list` (paths relative to the anchor), releasing them
/// unless `X-SVN-Options` lacks `release-locks`.
fn merge(ctx: &Ctx<'_>, req: &Req) -> Result<Reply, HttpError> {
    let doc = xml::parse(&req.body)?;
    if !doc.is(DAV, "merge") {
        return Err(HttpError::malformed_xml(
            "The MERGE request's body is not a DAV:merge element",
        ));
    }
    let source = doc
        .child(DAV, "source")
        .and_then(|s| s.child_text(DAV, "href"))
        .ok_or_else(|| HttpError::malformed_xml("The MERGE request names no DAV:source"))?;
    let txn = match crate::uri::locate(ctx.state, crate::uri::url_path(source))? {
        Located::Repo(t) if t.kind == Kind::Txn && t.repo_dir == ctx.target.repo_dir => t.txn,
        _ => return Err(HttpError::svn(
            StatusCode::METHOD_NOT_ALLOWED,
            INCORRECT_PARAMS,
            "MERGE can only be performed using an activity or transaction resource as the source",
        )),
    };
    let mut tokens = Vec::new();
    if let Some(list) = doc.child(SVN, "lock-token-list") {
        for (rel, token) in lock_token_list(list, "MERGE")? {
            tokens.push((svelto_core::join(&ctx.target.path, &rel), token));
        }
    }
    let options = req.header("x-svn-options").unwrap_or("");
    let keep = !options.split_whitespace().any(|o| o == "release-locks");
    let gone = || {
        HttpError::svn(
            StatusCode::METHOD_NOT_ALLOWED,
            INCORRECT_PARAMS,
            "MERGE activity or transaction resource does not exist",
        )
    };
    // Another user's MERGE leaves the transaction open for its owner.
    if let Some(slot) = ctx.state.txns.get(&txn) {
        let guard = slot.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(e) = guard.as_ref().and_then(|o| foreign(o, ctx)) {
            return Err(e);
        }
    }
    let slot = ctx.state.txns.remove(&txn).ok_or_else(gone)?;
    let open = slot
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take()
        .ok_or_else(|| no_such_txn(&txn))?;
    let mut edit = open.edit;
    let hook_tokens = tokens
        .iter()
        .map(|(p, t)| (format!("/{p}"), t.clone()))
        .collect();
    edit.hand_over_locks(tokens, hook_tokens, keep)
        .map_err(commit_error)?;
    let done = edit
        .finish(&ctx.svc.env().svn_date())
        .map_err(merge_error)?;
    Ok(
        Reply::xml(StatusCode::OK, merge_response(ctx, &done).into_bytes())
            .action(svelto_repos::action::commit(done.rev)),
    )
}

/// A failed commit, as mod_dav_svn answers MERGE: a conflict is 409, anything else 500.
fn merge_error(e: ReposError) -> HttpError {
    let mut err = commit_error(e);
    if err.code != RA_OUT_OF_DATE && err.status != StatusCode::CONFLICT {
        err.status = StatusCode::INTERNAL_SERVER_ERROR;
    }
    err
}

/// mod_dav_svn's MERGE answer when the client asks for no list of changed resources (the
/// v2 client always does): the new revision, its date and author, and a failing
/// post-commit hook's message.
fn merge_response(ctx: &Ctx<'_>, done: &Committed) -> String {
    let mut out = String::from(XML_HEADER);
    let (ns, err) = match &done.post_commit_warning {
        Some(w) => (
            " xmlns:S=\"svn:\"",
            format!("<S:post-commit-err>{}</S:post-commit-err>", esc(w)),
        ),
        None => ("", String::new()),
    };
    out.push_str(&format!(
        "<D:merge-response xmlns:D=\"DAV:\"{ns}>\n<D:updated-set>\n<D:response>\n\
         <D:href>{}/!svn/vcc/default</D:href>\n<D:propstat><D:prop>\n\
         <D:resourcetype><D:baseline/></D:resourcetype>\n{err}\n\
         <D:version-name>{}</D:version-name>\n<D:creationdate>{}</D:creationdate>\n",
        esc(ctx.root_href()),
        done.rev,
        esc(&done.date)
    ));
    if let Some(a) = &done.author {
        out.push_str(&format!(
            "<D:creator-displayname>{}</D:creator-displayname>\n",
            esc(a)
        ));
    }
    out.push_str(
        "</D:prop>\n<D:status>HTTP/1.1 200 OK</D:status>\n</D:propstat>\n</D:response>\n\
         </D:updated-set>\n</D:merge-response>\n",
    );
    out
}
