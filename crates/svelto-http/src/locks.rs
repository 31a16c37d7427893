//! Locks over HTTP (`docs/formats/http.md`, "Locks"), as mod_dav with mod_dav_svn 1.14
//! answers ra_serf: `LOCK` (a `DAV:lockinfo` body whose `DAV:owner` is the lock comment;
//! `X-SVN-Options: lock-steal` for `svn lock --force`, `X-SVN-Version-Name` for the
//! out-of-date check; the answer's `DAV:lockdiscovery` and the `X-SVN-Creation-Date` and
//! `X-SVN-Lock-Owner` headers), `UNLOCK` (`Lock-Token:`; `X-SVN-Options: lock-break` for
//! `svn unlock --force`), the `DAV:lockdiscovery` property PROPFIND answers, and the lock
//! checks of a commit's requests: mod_dav's on the `If:` header of a `PUT`, `DELETE`,
//! `PROPPATCH`, `MKCOL` or `COPY` (a locked path needs its token), then the repository's
//! (the token's owner, locks below a deleted or replaced path).
//!
//! Who may lock, steal and break, the hooks, the tokens and the commit's lock rules are
//! `svelto_repos::service::Ctx`'s ([`Ctx::lock_many`](svelto_repos::service::Ctx::lock_many),
//! `unlock_many`, `check_locks`), as for svn:// clients: this module decodes the requests
//! and encodes mod_dav_svn's answers (its statuses, its error documents, and Apache's plain
//! pages where mod_dav answers with a status alone).

use crate::ctx::{Ctx, XML_HEADER};
use crate::error::HttpError;
use crate::uri::Kind;
use crate::xml::{self, quote, DAV};
use crate::{Reply, Req};
use hyper::StatusCode;
use svelto_core::{code, Env, Revnum};
use svelto_repos::action;
use svelto_repos::locks::{Lock, LockTarget, UnlockTarget};
use svelto_repos::ReposError;

/// `X-SVN-Options` words (mod_dav_svn looks for them anywhere in the header).
const LOCK_STEAL: &str = "lock-steal";
const LOCK_BREAK: &str = "lock-break";
const KEEP_LOCKS: &str = "keep-locks";

/// Whether the request's `X-SVN-Options` header names `option`.
pub(crate) fn has_option(req: &Req, option: &str) -> bool {
    req.header("x-svn-options")
        .is_some_and(|o| o.contains(option))
}

/// Whether a `DELETE` keeps the locks it would remove (`svn commit --no-unlock`).
pub(crate) fn keeps_locks(req: &Req) -> bool {
    has_option(req, KEEP_LOCKS)
}

/// Apache's page for a request it cannot understand.
pub(crate) fn bad_request() -> HttpError {
    HttpError::page(
        StatusCode::BAD_REQUEST,
        "Your browser sent a request that this server could not understand.<br />\n",
    )
}

/// The page mod_dav answers a write to a locked resource with, when the request does not
/// carry the lock's token.
fn locked() -> HttpError {
    HttpError::page(
        StatusCode::LOCKED,
        "The requested resource is currently locked.\nThe lock must be released or proper \
         identification\ngiven before the method can be applied.",
    )
}

/// A repository error as mod_dav_svn's `dav_svn__convert_err` answers it: its first error
/// (code and message) in the error document, the status its code calls for, else
/// `otherwise`.
pub(crate) fn convert(e: &ReposError, otherwise: StatusCode) -> HttpError {
    let (code, message) = e
        .chain()
        .into_iter()
        .next()
        .unwrap_or((code::FS_GENERAL, e.to_string()));
    let status = match code {
        code::FS_NOT_FOUND | code::FS_NO_SUCH_REVISION => StatusCode::NOT_FOUND,
        code::UNSUPPORTED_FEATURE => StatusCode::NOT_IMPLEMENTED,
        code::FS_LOCK_OWNER_MISMATCH | code::FS_PATH_ALREADY_LOCKED => StatusCode::LOCKED,
        code::FS_PROP_BASEVALUE_MISMATCH => StatusCode::PRECONDITION_FAILED,
        _ => otherwise,
    };
    HttpError::svn(status, code, message)
}

/// `DAV:timeout`'s value for a lock expiring at `expires` (an svn:date; None: never), the
/// time now read from `env`.
fn timeout(expires: Option<&str>, env: &dyn Env) -> String {
    let left = expires
        .and_then(svelto_core::parse_svn_date)
        .and_then(|at| Some((at, svelto_core::parse_svn_date(&env.svn_date())?)))
        .map(|(at, now)| (at - now).div_euclid(1_000_000).max(0));
    match left {
        Some(secs) => format!("Second-{secs}"),
        None => "Infinite".into(),
    }
}

/// The `X-SVN-Creation-Date` and `X-SVN-Lock-Owner` headers mod_dav_svn adds to every
/// answer that looked up a lock.
pub(crate) fn lock_headers(reply: Reply, lock: Option<&Lock>) -> Reply {
    match lock {
        Some(l) => reply
            .header("x-svn-creation-date", l.created.clone())
            .header("x-svn-lock-owner", l.owner.clone()),
        None => reply,
    }
}

/// The value of `DAV:supportedlock`: exclusive write locks.
pub(crate) const SUPPORTEDLOCK: &str =
    "\n<D:lockentry>\n<D:lockscope><D:exclusive/></D:lockscope>\n\
                                        <D:locktype><D:write/></D:locktype>\n</D:lockentry>\n";

/// The value of `DAV:lockdiscovery` in a PROPFIND answer: the path's lock as mod_dav writes
/// it (its comment in `DAV:owner`), or nothing; the time left read from `env`.
pub(crate) fn lockdiscovery(lock: Option<&Lock>, env: &dyn Env) -> String {
    let Some(l) = lock else {
        return String::new();
    };
    activelock(l, &timeout(l.expires.as_deref(), env))
}

/// `DAV:activelock` of a lock, its `DAV:timeout` being `timeout`.
fn activelock(l: &Lock, timeout: &str) -> String {
    let owner = l
        .comment
        .as_deref()
        .map(|c| format!("<D:owner xmlns:D=\"DAV:\">{}</D:owner>", quote(c, true)))
        .unwrap_or_default();
    format!(
        "<D:activelock>\n<D:locktype><D:write/></D:locktype>\n\
         <D:lockscope><D:exclusive/></D:lockscope>\n<D:depth>0</D:depth>\n\
         {owner}<D:timeout>{timeout}</D:timeout>\n<D:locktoken>\n<D:href>{}</D:href>\n\
         </D:locktoken>\n</D:activelock>\n",
        quote(&l.token, false)
    )
}

/// `DAV:timeout` of a requested `Timeout:` (None: `Infinite`).
fn timeout_of(seconds: Option<u64>) -> String {
    match seconds {
        Some(s) => format!("Second-{s}"),
        None => "Infinite".into(),
    }
}

/// The state tokens of an `If:` header (`<URI> (<token>) ...`): every `<...>` inside
/// parentheses (resource tags, outside them, and entity tags `[...]` are not tokens).
pub(crate) fn if_tokens(req: &Req) -> Vec<String> {
    if_conditions(req).into_iter().map(|(_, t)| t).collect()
}

/// [`if_tokens`], each with whether a `Not` negates it.
fn if_conditions(req: &Req) -> Vec<(bool, String)> {
    let mut tokens = Vec::new();
    for value in req.headers.get_all("if") {
        let Ok(v) = value.to_str() else { continue };
        let mut depth = 0usize;
        let mut negated = false;
        let mut rest = v;
        while let Some(c) = rest.chars().next() {
            match c {
                '(' => depth += 1,
                ')' => depth = depth.saturating_sub(1),
                '<' => {
                    let Some(end) = rest.find('>') else { break };
                    if depth > 0 {
                        tokens.push((negated, rest[1..end].to_string()));
                    }
                    negated = false;
                    rest = &rest[end + 1..];
                    continue;
                }
                '[' => negated = false,
                'N' | 'n'
                    if depth > 0 && rest.len() >= 3 && rest[..3].eq_ignore_ascii_case("not") =>
                {
                    negated = true;
                    rest = &rest[3..];
                    continue;
                }
                _ => {}
            }
            rest = &rest[c.len_utf8()..];
        }
    }
    tokens
}

/// The lock checks of a request changing `path` in a commit (`recurse`: everything below
/// it too, as a `DELETE`, `MKCOL` or `COPY`): mod_dav's first, then the repository's with
/// the tokens of the request's `If:` header. Returns the path's lock, whose headers the
/// answer carries.
pub(crate) fn check_change(
    ctx: &Ctx<'_>,
    req: &Req,
    path: &str,
    recurse: bool,
) -> Result<Option<Lock>, HttpError> {
    check_change_with(ctx, req, path, recurse, Vec::new())
}

/// [`check_change`] with `more` tokens than the `If:` header's (a `DELETE` body's
/// `S:lock-token-list`).
pub(crate) fn check_change_with(
    ctx: &Ctx<'_>,
    req: &Req,
    path: &str,
    recurse: bool,
    more: Vec<String>,
) -> Result<Option<Lock>, HttpError> {
    let lock = ctx.svc.get_lock(path)?;
    let mut tokens = if_tokens(req);
    tokens.extend(more);
    if let Some(l) = &lock {
        if !tokens.iter().any(|t| t == &l.token) {
            return Err(locked());
        }
    }
    if lock.is_some() || recurse {
        ctx.svc
            .check_locks(path, recurse, &tokens)
            .map_err(|e| convert(&e, StatusCode::INTERNAL_SERVER_ERROR))?;
    }
    Ok(lock)
}

/// After a `DELETE` in a commit: mod_dav removes the deleted path's lock at once (its owner
/// unlocking it, hooks included), unless the client keeps its locks.
pub(crate) fn release_deleted(
    ctx: &Ctx<'_>,
    req: &Req,
    lock: Option<&Lock>,
) -> Result<(), HttpError> {
    let Some(l) = lock else { return Ok(()) };
    if keeps_locks(req) {
        return Ok(());
    }
    let target = UnlockTarget {
        path: l.path.clone(),
        token: Some(l.token.clone()),
    };
    match ctx.svc.unlock_many(false, vec![target])?.results.pop() {
        Some(Err(e)) => {
            ctx.state.log(&format!(
                "{}: removing the lock of deleted '/{}': {e}",
                ctx.target.repo_name, l.path
            ));
            Err(HttpError::page(
                StatusCode::INTERNAL_SERVER_ERROR,
                "The server encountered an internal error or\nmisconfiguration and was unable \
                 to complete\nyour request.",
            ))
        }
        _ => Ok(()),
    }
}

/// Answers `LOCK` and `UNLOCK` (the URL's write access is checked already, as
/// mod_authz_svn checks it).
pub(crate) fn handle(ctx: Ctx<'_>, req: &Req) -> Result<Reply, HttpError> {
    let method = req.method.as_str();
    if ctx.target.kind != Kind::Public {
        return Err(HttpError::not_allowed(
            StatusCode::METHOD_NOT_ALLOWED,
            method,
        ));
    }
    if method == "LOCK" {
        lock(&ctx, req)
    } else {
        unlock(&ctx, req)
    }
}

/// What a `DAV:lockinfo` body asks for.
struct LockInfo {
    /// The text of `DAV:owner` (None: no owner element).
    comment: Option<String>,
}

fn lockinfo(req: &Req) -> Result<LockInfo, HttpError> {
    let doc = xml::parse(&req.body).map_err(|_| bad_request())?;
    if !doc.is(DAV, "lockinfo") {
        return Err(bad_request());
    }
    let has = |parent: &str, child: &str| {
        doc.child(DAV, parent)
            .is_some_and(|p| p.child(DAV, child).is_some())
    };
    // mod_dav_svn takes exclusive write locks only.
    if !has("lockscope", "exclusive") || !has("locktype", "write") {
        return Err(bad_request());
    }
    Ok(LockInfo {
        comment: doc.child(DAV, "owner").map(|o| o.text.clone()),
    })
}

/// The lock's `Timeout:` as seconds (None: `Infinite`, or no header): the first value of
/// the list mod_dav can use.
fn requested_timeout(req: &Req) -> Option<u64> {
    let v = req.header("timeout")?;
    for item in v.split(',') {
        let item = item.trim();
        if item.eq_ignore_ascii_case("infinite") {
            return None;
        }
        if let Some(n) = item.strip_prefix("Second-") {
            if let Ok(n) = n.parse::<u64>() {
                return Some(n);
            }
        }
    }
    None
}

/// `LOCK` of a file at HEAD.
fn lock(ctx: &Ctx<'_>, req: &Req) -> Result<Reply, HttpError> {
    let path = ctx.target.path.clone();
    if req.body.is_empty() {
        return refresh(ctx, req, &path);
    }
    let info = lockinfo(req)?;
    let depth = match req.header("depth").map(str::trim) {
        None => "infinity",
        Some(d) if d.eq_ignore_ascii_case("infinity") => "infinity",
        Some("0") => "0",
        Some(_) => return Err(bad_request()),
    };
    let Some(user) = ctx.svc.user().map(str::to_owned) else {
        return Err(HttpError::not_allowed(StatusCode::NOT_IMPLEMENTED, "LOCK"));
    };
    if ctx.svc.node(&path, ctx.youngest)?.is_none() {
        // "Subversion clients may not lock nonexistent paths."
        return Err(HttpError::not_allowed(
            StatusCode::METHOD_NOT_ALLOWED,
            "LOCK",
        ));
    }
    let current_rev = req
        .header("x-svn-version-name")
        .and_then(|v| v.trim().parse::<Revnum>().ok());
    let seconds = requested_timeout(req);
    let logged = action::lock(&[action::fspath(&path)], has_option(req, LOCK_STEAL));
    let target = LockTarget { path, current_rev };
    let many = ctx.svc.lock_many_expiring(
        info.comment.as_deref(),
        has_option(req, LOCK_STEAL),
        &ctx.svc.env().svn_date(),
        seconds,
        vec![target],
    )?;
    let lock = the_lock(ctx, many)?;
    debug_assert_eq!(lock.owner, user);
    // The owner element as mod_dav writes back what the request sent.
    let owner = info
        .comment
        .as_deref()
        .map(|c| {
            format!(
                "<ns0:owner xmlns:ns0=\"DAV:\">{}</ns0:owner>",
                quote(c, false)
            )
        })
        .unwrap_or_default();
    let timeout = timeout_of(seconds);
    let body = format!(
        "{XML_HEADER}<D:prop xmlns:D=\"DAV:\">\n<D:lockdiscovery>\n<D:activelock>\n\
         <D:locktype><D:write/></D:locktype>\n<D:lockscope><D:exclusive/></D:lockscope>\n\
         <D:depth>{depth}</D:depth>\n{owner}<D:timeout>{timeout}</D:timeout>\n<D:locktoken>\n\
         <D:href>{}</D:href>\n</D:locktoken>\n</D:activelock>\n\n</D:lockdiscovery>\n</D:prop>",
        quote(&lock.token, false)
    );
    let token = format!("<{}>", lock.token);
    Ok(
        lock_headers(Reply::xml(StatusCode::OK, body.into_bytes()), Some(&lock))
            .header("lock-token", token)
            .action(logged),
    )
}

/// The one lock a `LOCK` made, or its error; a failing post-lock hook logged (mod_dav_svn
/// logs it and answers with the lock all the same).
fn the_lock(ctx: &Ctx<'_>, many: svelto_repos::locks::Many<Lock>) -> Result<Lock, HttpError> {
    if let Some(e) = &many.post_hook_failure {
        ctx.state.log(&format!(
            "{}: post-lock hook failure: {e}",
            ctx.target.repo_name
        ));
    }
    match many.results.into_iter().next() {
        Some(Ok(l)) => Ok(l),
        Some(Err(e)) => Err(convert(&e, StatusCode::INTERNAL_SERVER_ERROR)),
        None => Err(HttpError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "The lock was not attempted",
        )),
    }
}

/// `LOCK` without a body: a refresh of the lock the `If:` header names (WebDAV clients;
/// the stock client never refreshes), as mod_dav with mod_dav_svn answers it. The Subversion
/// client's requests (`User-Agent: SVN/...`) see no lock on a `LOCK` (mod_dav_svn hides
/// locks from them so that `svn lock` reaches the repository's checks): a refresh is
/// refused. Otherwise the lock the tokens name is made again with its token and comment
/// for the requested `Timeout:` (none: never expiring), through the lock hooks as a steal.
fn refresh(ctx: &Ctx<'_>, req: &Req, path: &str) -> Result<Reply, HttpError> {
    if let Some(d) = req.header("depth").map(str::trim) {
        if d != "0" && !d.eq_ignore_ascii_case("infinity") {
            return Err(bad_request());
        }
    }
    let conditions = if_conditions(req);
    let svn_client = req
        .header("user-agent")
        .is_some_and(|ua| ua.starts_with("SVN/"));
    let lock = if svn_client {
        None
    } else {
        ctx.svc.get_lock(path)?
    };
    let precondition_failed = || {
        HttpError::page(
            StatusCode::PRECONDITION_FAILED,
            "The precondition on the request for this URL evaluated to false.",
        )
    };
    if conditions.is_empty() {
        // mod_dav: a locked resource needs its token; with none, a refresh of nothing.
        return Err(if lock.is_some() {
            locked()
        } else {
            bad_request()
        });
    }
    let Some(l) = lock.filter(|l| conditions.iter().any(|(not, t)| !not && t == &l.token)) else {
        return Err(precondition_failed());
    };
    if ctx.svc.user() != Some(l.owner.as_str()) {
        // mod_dav: the lock is someone else's.
        return Err(HttpError::refused(StatusCode::FORBIDDEN, None));
    }
    let seconds = requested_timeout(req);
    let refreshed = the_lock(
        ctx,
        ctx.svc
            .refresh_lock(&l, &ctx.svc.env().svn_date(), seconds)?,
    )?;
    let body = format!(
        "{XML_HEADER}<D:prop xmlns:D=\"DAV:\">\n<D:lockdiscovery>\n{}\n</D:lockdiscovery>\n</D:prop>",
        activelock(&refreshed, &timeout_of(seconds))
    );
    // The headers are those of the lock mod_dav found before refreshing it; mod_dav_svn
    // logs no action for a refresh.
    Ok(lock_headers(
        Reply::xml(StatusCode::OK, body.into_bytes()),
        Some(&l),
    ))
}

/// `UNLOCK` with the token in `Lock-Token: <...>`.
fn unlock(ctx: &Ctx<'_>, req: &Req) -> Result<Reply, HttpError> {
    let token = req
        .header("lock-token")
        .map(str::trim)
        .and_then(|t| t.strip_prefix('<'))
        .and_then(|t| t.strip_suffix('>'))
        .ok_or_else(bad_request)?
        .to_string();
    let path = ctx.target.path.clone();
    let brk = has_option(req, LOCK_BREAK);
    // mod_dav first matches the token with the path's lock.
    let lock = ctx.svc.get_lock(&path)?;
    let Some(existing) = lock.filter(|l| l.token == token) else {
        return Err(bad_request());
    };
    if ctx.svc.user().is_none() {
        if !brk {
            // mod_dav: the lock's owner is not the request's (nobody's) user.
            return Err(HttpError::refused(StatusCode::FORBIDDEN, None));
        }
        let body = format!(
            "{XML_HEADER}<D:error xmlns:D=\"DAV:\" xmlns:m=\"http://apache.org/dav/xmlns\">\n\
             <m:human-readable errcode=\"405\">\nAnonymous lock removal is not allowed.\n\
             </m:human-readable>\n</D:error>\n"
        );
        return Ok(lock_headers(
            Reply::xml(StatusCode::NOT_IMPLEMENTED, body.into_bytes()),
            Some(&existing),
        ));
    }
    let logged = action::unlock(&[action::fspath(&path)], brk);
    let target = UnlockTarget {
        path,
        token: Some(token),
    };
    let many = ctx.svc.unlock_many(brk, vec![target])?;
    let failure = match many.results.into_iter().next() {
        Some(Err(e)) => Some(e),
        _ => many.post_hook_failure,
    };
    let reply = match failure {
        None => Reply::new(StatusCode::NO_CONTENT, "text/plain", Vec::new()).action(logged),
        Some(e) => convert(&e, StatusCode::INTERNAL_SERVER_ERROR).reply(),
    };
    Ok(lock_headers(reply, Some(&existing)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req_with(headers: &[(&str, &str)]) -> Req {
        let mut map = hyper::HeaderMap::new();
        for (k, v) in headers {
            map.append(
                hyper::header::HeaderName::from_bytes(k.as_bytes()).expect("name"),
                hyper::header::HeaderValue::from_str(v).expect("value"),
            );
        }
        Req {
            method: hyper::Method::PUT,
            uri: hyper::Uri::from_static("/"),
            query: None,
            peer: std::net::IpAddr::from([127, 0, 0, 1]),
            headers: map,
            body: bytes::Bytes::new(),
            stream: std::sync::Mutex::new(None),
        }
    }

    #[test]
    fn if_headers_give_their_state_tokens() {
        let r = req_with(&[(
            "if",
            "<http://h/svn/r/a.txt> (<opaquelocktoken:1>) <http://h/svn/r/b> (<opaquelocktoken:2> [\"etag\"]) (Not <opaquelocktoken:3>)",
        )]);
        assert_eq!(
            if_tokens(&r),
            [
                "opaquelocktoken:1",
                "opaquelocktoken:2",
                "opaquelocktoken:3"
            ]
        );
        assert_eq!(
            if_conditions(&req_with(&[(
                "if",
                "(Not <opaquelocktoken:1> <opaquelocktoken:2>) (not [\"e\"] <opaquelocktoken:3>)"
            )])),
            [
                (true, "opaquelocktoken:1".to_string()),
                (false, "opaquelocktoken:2".to_string()),
                // `Not` negates the entity tag after it, not the token.
                (false, "opaquelocktoken:3".to_string())
            ]
        );
        assert!(if_tokens(&req_with(&[("if", "<http://h/x>")])).is_empty());
        assert!(if_tokens(&req_with(&[("if", "(<broken")])).is_empty());
        assert!(if_tokens(&req_with(&[])).is_empty());
    }

    #[test]
    fn timeouts_and_options() {
        let r = req_with(&[
            ("timeout", "Extended, Second-3600"),
            ("x-svn-options", "release-locks lock-steal"),
        ]);
        assert_eq!(requested_timeout(&r), Some(3600));
        assert!(has_option(&r, LOCK_STEAL) && !has_option(&r, LOCK_BREAK));
        assert_eq!(
            requested_timeout(&req_with(&[("timeout", "Infinite, Second-5")])),
            None
        );
        let env = svelto_core::FixedEnv::new("2026-01-01T00:00:00.000000Z");
        assert_eq!(timeout(None, &env), "Infinite");
        assert_eq!(
            timeout(Some("2026-01-01T00:01:30.000000Z"), &env),
            "Second-90"
        );
        assert_eq!(
            timeout(Some("2025-12-31T00:00:00.000000Z"), &env),
            "Second-0"
        );
        assert_eq!(quote("a<b>&\"c\"", false), "a&lt;b&gt;&amp;\"c\"");
        assert_eq!(quote("\"", true), "&quot;");
    }
}
