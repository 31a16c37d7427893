//! Cluster front ends (docs/cluster.md, "HTTP transactions"): a transaction opened over
//! HTTP lives in the memory of the front end that opened it, and its name says which one
//! (`BASE-CHARS_ID`, the front end's id after the first `_`). A request of a transaction
//! another front end holds (any balancer may send each request of a connection elsewhere)
//! is forwarded to that front end whole (method, path, headers with the client's
//! credentials, body streamed) by a kept-alive HTTP client, and its answer relayed as it
//! comes. The front end holding the transaction checks the credentials itself, as for any
//! request. A forwarded request is marked ([`FORWARDED`]) and never forwarded again.
//!
//! On one machine (no [`Peers`]) none of this runs: names carry no id, nothing is parsed.

use crate::error::HttpError;
use crate::{Note, Noted, RespBody, State};
use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::{Response, StatusCode};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// The header marking a forwarded request; its value is the forwarding front end's id.
pub const FORWARDED: &str = "x-svelto-forwarded-by";

/// How long an owner's address is used before it is asked of the registry again (a
/// failed connection forgets it at once).
const ADDRESS_TTL: Duration = Duration::from_secs(10);

/// How long a connection to the owner may take to open.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// What a cluster front end's HTTP side knows of its peers.
#[derive(Clone)]
pub struct Peers {
    /// This front end's tag ([`tag_of`] its id): in the names of the transactions it opens.
    pub id: String,
    /// The address (`HOST:PORT`) the HTTP listener of the front end with this tag can be
    /// reached at by its peers; None when it is not registered. May wait on the network.
    pub address_of: AddressOf,
}

/// [`Peers::address_of`]: a peer's HTTP address by its id.
pub type AddressOf = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

impl std::fmt::Debug for Peers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Peers").field("id", &self.id).finish()
    }
}

/// Whether `id` can tag transaction names: 1 to 32 letters, digits, `-` or `_` (what
/// URLs carry as they are and the store takes in a transaction's name, at most 64
/// characters in all).
pub fn valid_id(id: &str) -> bool {
    (1..=32).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_'))
}

/// The tag a front end with id `id` puts in its transactions' names: the id itself when it
/// can ([`valid_id`]), else `x` and 16 hex digits of a hash of it (FNV-1a, 64 bits), so
/// that any id works (a host name with dots, a long one). Peers find the owner of a tag by
/// computing the tags of the ids registered.
pub fn tag_of(id: &str) -> String {
    if valid_id(id) {
        return id.to_owned();
    }
    let hash = id.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    format!("x{hash:016x}")
}

/// The front end a transaction's name says holds it: the id after the first `_` of a name
/// `BASE-CHARS_ID` (BASE a revision number, CHARS base-36 digits). None for a name the
/// engine of one machine makes (no `_`) and for any malformed name.
pub(crate) fn owner_of(name: &str) -> Option<&str> {
    let (engine, id) = name.split_once('_')?;
    let (base, chars) = engine.split_once('-')?;
    let digits = |s: &str, ok: fn(u8) -> bool| !s.is_empty() && s.bytes().all(ok);
    (digits(base, |b| b.is_ascii_digit())
        && digits(chars, |b| b.is_ascii_digit() || b.is_ascii_lowercase())
        && valid_id(id))
    .then_some(id)
}

/// The transaction named in a path or URL: the segment after `!svn/txn/`, `!svn/txr/`,
/// `!svn/vtxn/` or `!svn/vtxr/`.
pub(crate) fn txn_in(path: &str) -> Option<&str> {
    let (_, rest) = path.split_once("/!svn/")?;
    let (kind, rest) = rest.split_once('/')?;
    if !matches!(kind, "txn" | "txr" | "vtxn" | "vtxr") {
        return None;
    }
    let name = rest.split(['/', '?', '#']).next()?;
    (!name.is_empty()).then_some(name)
}

/// The transaction a `MERGE` body names as its source (`<D:href>.../!svn/txn/NAME</D:href>`).
pub(crate) fn txn_in_merge(body: &[u8]) -> Option<&str> {
    let at = memchr::memmem::find(body, b"/!svn/")?;
    let rest = &body[at..];
    let end = rest
        .iter()
        .position(|&b| b == b'<' || b.is_ascii_whitespace())
        .unwrap_or(rest.len());
    txn_in(std::str::from_utf8(&rest[..end]).ok()?)
}

type ProxyBody = BoxBody<Bytes, Box<dyn std::error::Error + Send + Sync>>;

/// The forwarding side of a cluster front end: its peers, the kept-alive client, the
/// owners' addresses lately looked up.
pub(crate) struct Hop {
    pub peers: Peers,
    client: Client<HttpConnector, ProxyBody>,
    known: Mutex<HashMap<String, (String, Instant)>>,
}

impl Hop {
    pub fn new(peers: Peers) -> Hop {
        let mut connector = HttpConnector::new();
        connector.set_connect_timeout(Some(CONNECT_TIMEOUT));
        connector.set_nodelay(true);
        let client = Client::builder(hyper_util::rt::TokioExecutor::new())
            .pool_idle_timeout(Duration::from_secs(30))
            .pool_timer(hyper_util::rt::TokioTimer::new())
            .build(connector);
        Hop {
            peers,
            client,
            known: Mutex::new(HashMap::new()),
        }
    }

    /// The front end to forward a request of transaction `name` to: its owner, when that is
    /// another front end and the request was not forwarded already.
    pub fn owner<'n>(&self, name: &'n str, headers: &hyper::HeaderMap) -> Option<&'n str> {
        let owner = owner_of(name)?;
        (owner != self.peers.id && !headers.contains_key(FORWARDED)).then_some(owner)
    }

    fn known(&self) -> std::sync::MutexGuard<'_, HashMap<String, (String, Instant)>> {
        self.known.lock().unwrap_or_else(|e| e.into_inner())
    }

    async fn address(&self, owner: &str) -> Option<String> {
        if let Some((addr, at)) = self.known().get(owner) {
            if at.elapsed() < ADDRESS_TTL {
                return Some(addr.clone());
            }
        }
        let (ask, id) = (self.peers.address_of.clone(), owner.to_owned());
        let addr = tokio::task::spawn_blocking(move || ask(&id))
            .await
            .ok()
            .flatten()?;
        self.known()
            .insert(owner.to_owned(), (addr.clone(), Instant::now()));
        Some(addr)
    }
}

/// The answer for a transaction whose front end cannot be reached: mod_dav_svn's for a
/// transaction that is gone, saying why (the client reports its commit failed).
fn vanished(name: &str, owner: &str, why: &str) -> HttpError {
    HttpError::svn(
        StatusCode::NOT_FOUND,
        svelto_core::code::FS_NO_SUCH_TRANSACTION,
        format!(
            "No such transaction '{name}': front end '{owner}', which holds it, cannot be reached ({why})"
        ),
    )
}

/// Headers that concern one hop only, not passed on either way.
fn hop_by_hop(name: &hyper::header::HeaderName) -> bool {
    matches!(
        name.as_str(),
        "connection"
            | "keep-alive"
            | "proxy-connection"
            | "transfer-encoding"
            | "te"
            | "trailer"
            | "upgrade"
    )
}

/// The request body to pass on: the client's as it arrives, or one already read.
pub(crate) enum Pass {
    Streamed(Incoming),
    Read(Bytes),
}

/// Forwards the request (`parts`, `body`) of transaction `name` to its owner `owner` and
/// relays the answer; logs it as forwarded.
pub(crate) async fn forward(
    state: &State,
    hop: &Hop,
    peer: std::net::IpAddr,
    parts: hyper::http::request::Parts,
    body: Pass,
    name: &str,
    owner: &str,
) -> Response<Noted> {
    let what = format!("{peer}: {} {}", parts.method, parts.uri.path());
    let failed = |why: String| {
        state.log(&format!(
            "{what}: transaction '{name}' is front end '{owner}''s, not forwarded: {why}"
        ));
        vanished(name, owner, &why)
    };
    let Some(addr) = hop.address(owner).await else {
        return crate::to_response(failed("not in the member registry".into()).reply()).await;
    };
    let path = parts.uri.path_and_query().map_or("/", |p| p.as_str());
    let uri = match format!("http://{addr}{path}").parse::<hyper::Uri>() {
        Ok(u) => u,
        Err(e) => {
            return crate::to_response(failed(format!("address '{addr}': {e}")).reply()).await
        }
    };
    let body: ProxyBody = match body {
        Pass::Streamed(b) => b.map_err(|e| Box::new(e) as _).boxed(),
        Pass::Read(b) => http_body_util::Full::new(b)
            .map_err(|never| match never {})
            .boxed(),
    };
    let mut out = hyper::Request::new(body);
    *out.method_mut() = parts.method.clone();
    *out.uri_mut() = uri;
    for (k, v) in &parts.headers {
        if !hop_by_hop(k) {
            out.headers_mut().append(k.clone(), v.clone());
        }
    }
    if let Ok(v) = hyper::header::HeaderValue::from_str(&hop.peers.id) {
        out.headers_mut().insert(FORWARDED, v);
    }
    let answer = match hop.client.request(out).await {
        Ok(a) => a,
        Err(e) => {
            hop.known().remove(owner);
            let mut why = e.to_string();
            let mut source = std::error::Error::source(&e);
            while let Some(s) = source {
                why.push_str(&format!(": {s}"));
                source = s.source();
            }
            return crate::to_response(failed(why).reply()).await;
        }
    };
    let (head, mut incoming) = answer.into_parts();
    state.log(&format!(
        "{what}: transaction '{name}' is front end '{owner}''s: forwarded to {addr}, answered {}",
        head.status.as_u16()
    ));
    let (tx, rx) = mpsc::channel(8);
    tokio::spawn(async move {
        while let Some(frame) = incoming.frame().await {
            let item = match frame {
                Ok(f) => match f.into_data() {
                    Ok(d) => Ok(d),
                    Err(_) => continue,
                },
                Err(e) => Err(HttpError::new(
                    StatusCode::BAD_GATEWAY,
                    format!("the answer of front end '{addr}' broke off: {e}"),
                )),
            };
            let failed = item.is_err();
            if tx.send(item).await.is_err() || failed {
                break;
            }
        }
    });
    let note = Note {
        action: Some(format!("forwarded to {owner}")),
        ..Note::default()
    };
    let mut resp = Response::new(Noted {
        body: RespBody::Chan(None, rx),
        note,
    });
    *resp.status_mut() = head.status;
    for (k, v) in &head.headers {
        if !hop_by_hop(k) {
            resp.headers_mut().append(k.clone(), v.clone());
        }
    }
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_id_has_a_tag_that_names_can_carry() {
        assert_eq!(tag_of("fe-1"), "fe-1");
        for id in ["fe1.example.com", "", &"a".repeat(40), "été"] {
            let tag = tag_of(id);
            assert!(valid_id(&tag), "{id:?} -> {tag}");
            assert_eq!(tag, tag_of(id), "stable");
            assert_eq!(owner_of(&format!("12-abc_{tag}")), Some(tag.as_str()));
        }
        assert_ne!(tag_of("a.b"), tag_of("a.c"));
    }

    #[test]
    fn owners_come_from_tagged_names_only() {
        assert_eq!(owner_of("12-0abcd0123456789abcd_fe-a"), Some("fe-a"));
        assert_eq!(
            owner_of("0-00001zzzzzzzzzzzzz_host_1-77"),
            Some("host_1-77")
        );
        // One machine's engine: no tag.
        assert_eq!(owner_of("12-0abcd0123456789abcd"), None);
        // Malformed.
        for bad in [
            "",
            "_",
            "fe-a",
            "_fe-a",
            "12-_fe-a",
            "-abc_fe-a",
            "x1-abc_fe-a",
            "12-ABC_fe-a",
            "12-abc_",
            "12-abc_fe/a",
            "12-abc_fe a",
            "12-abc_fe.a",
            "12-abc_f\u{e9}",
            "12abc_fe-a",
        ] {
            assert_eq!(owner_of(bad), None, "{bad:?}");
        }
        let long = format!("1-a_{}", "x".repeat(33));
        assert_eq!(owner_of(&long), None);
        assert!(valid_id("fe-1_x") && !valid_id("") && !valid_id("a b") && !valid_id("a.b"));
    }

    #[test]
    fn transactions_are_found_in_paths_urls_and_merge_bodies() {
        assert_eq!(
            txn_in("/svn/repo/!svn/txr/3-abc_fe-b/trunk/a"),
            Some("3-abc_fe-b")
        );
        assert_eq!(txn_in("/repo/!svn/txn/3-abc_fe-b"), Some("3-abc_fe-b"));
        assert_eq!(txn_in("/repo/!svn/vtxr/3-abc_fe-b/x"), Some("3-abc_fe-b"));
        assert_eq!(
            txn_in("http://h:1/repo/!svn/txr/3-abc_fe-b/dst?x"),
            Some("3-abc_fe-b")
        );
        assert_eq!(txn_in("/repo/!svn/rvr/3/trunk"), None);
        assert_eq!(txn_in("/repo/!svn/txn/"), None);
        assert_eq!(txn_in("/repo/trunk"), None);
        let merge = b"<?xml version=\"1.0\"?><D:merge xmlns:D=\"DAV:\"><D:source>\
            <D:href>/svn/repo/!svn/txn/7-q1w2_fe-c</D:href></D:source></D:merge>";
        assert_eq!(txn_in_merge(merge), Some("7-q1w2_fe-c"));
        assert_eq!(txn_in_merge(b"<D:merge/>"), None);
    }
}
