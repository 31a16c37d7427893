//! Cluster front ends (docs/cluster.md, "HTTP transactions"): a transaction opened over
//! HTTP lives in the memory of the front end that opened it, and its name says which one
//! (`BASE-CHARS_ID`, the front end's id after the first `_`). A request of a transaction
//! another front end holds (any balancer may send each request of a connection elsewhere)
//! is forwarded to that front end whole (method, path, headers with the client's
//! credentials, body streamed) by a kept-alive HTTP client, and its answer relayed as it
//! comes. The front end holding the transaction checks the credentials itself, as for any
//! request. A forwarded request is marked ([`FORWARDED`]) and never forwarded again.
//!
//! The owner is reached at the address its member entry gives, `http://HOST:PORT` or
//! `https://HOST:PORT` ([`address_in_member`], [`advertised`]). Over `https://` the client
//! verifies the owner's certificate for the advertised host (a DNS name, or an IP address
//! checked against the certificate's IP SANs) against [`Peers::trust`], or by default the
//! system's roots and the certificates this front end serves itself.
//!
//! On one machine (no [`Peers`]) none of this runs: names carry no id, nothing is parsed.

use crate::error::HttpError;
use crate::{Note, Noted, RespBody, State};
use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::{Response, StatusCode};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, ServerName};
use tokio_rustls::rustls::{ClientConfig, RootCertStore};

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
    /// Where the HTTP listener of the front end with this tag can be reached by its peers,
    /// `http://HOST:PORT` or `https://HOST:PORT` (what [`address_in_member`] reads); None
    /// when it is not registered. May wait on the network.
    pub address_of: AddressOf,
    /// The trust anchors (a PEM file of certificates) the owner's certificate is checked
    /// against over `https://` (`http-forward-ca`); None: the system's roots and the
    /// certificates of this front end's own `--http-tls-cert`.
    pub trust: Option<PathBuf>,
    /// The name every peer's certificate is checked for over `https://`, instead of the
    /// host each advertises (`http-forward-name`: one certificate for the service's name
    /// on every front end); None: the advertised host.
    pub tls_name: Option<String>,
}

/// [`Peers::address_of`]: a peer's HTTP address by its id.
pub type AddressOf = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// Checks an address as a URL base (`SCHEME://AUTHORITY`, no path): the authority when it
/// is one.
fn authority_of(scheme: &str, rest: &str) -> Result<String, String> {
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    if rest.is_empty() || rest.contains(['/', '?', '#', '@']) || rest.contains(char::is_whitespace)
    {
        return Err("expected HOST:PORT, with no path, user or spaces".into());
    }
    let port = match rest.strip_prefix('[') {
        Some(v6) => v6.split_once(']').map(|(_, after)| after).unwrap_or(""),
        None => rest.find(':').map_or("", |at| &rest[at..]),
    };
    if let Some(port) = port.strip_prefix(':') {
        if port.is_empty()
            || !port.bytes().all(|b| b.is_ascii_digit())
            || port.parse::<u16>().is_err()
        {
            return Err(format!("'{port}' is not a port number"));
        }
    } else if !port.is_empty() {
        return Err("expected HOST:PORT".into());
    }
    let uri = format!("{scheme}://{rest}/")
        .parse::<hyper::Uri>()
        .map_err(|e| e.to_string())?;
    match uri.host() {
        Some(h) if !h.is_empty() && h != "[]" => Ok(rest.to_owned()),
        _ => Err("no host".into()),
    }
}

/// What `--http-advertise ADDR` announces to the peers, as the URL base they forward to:
/// `http://HOST[:PORT]` and `https://HOST[:PORT]` as written (the port defaults to the
/// scheme's), and `HOST:PORT` (what the flag took before it knew schemes) in the scheme the
/// listener serves: `http://` unless it serves TLS (`tls`), where plain HTTP could never
/// reach it. An IPv6 host is written in brackets (`[::1]:8443`).
pub fn advertised(addr: &str, tls: bool) -> Result<String, String> {
    let addr = addr.trim();
    let bad = |why: String| format!("--http-advertise '{addr}': {why}");
    let (scheme, rest) = if let Some(rest) = addr.strip_prefix("https://") {
        ("https", rest)
    } else if let Some(rest) = addr.strip_prefix("http://") {
        ("http", rest)
    } else if let Some((scheme, _)) = addr.split_once("://") {
        return Err(bad(format!("the scheme '{scheme}' is not http or https")));
    } else {
        let scheme = if tls { "https" } else { "http" };
        let port = addr.rsplit_once(':').map(|(_, p)| p).unwrap_or("");
        if addr.ends_with(']') || port.is_empty() || !port.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad(
                "expected HOST:PORT, http://HOST:PORT or https://HOST:PORT".into(),
            ));
        }
        (scheme, addr)
    };
    let authority = authority_of(scheme, rest).map_err(bad)?;
    Ok(format!("{scheme}://{authority}"))
}

/// The HTTP address a member registry entry (`members/ID`: `svn://HOST:PORT
/// http[s]://HOST:PORT pid=N`) gives, as a URL base (`http://HOST:PORT`,
/// `https://HOST:PORT`): the first word that is one. Entries of front ends of every
/// version read the same (before schemes, the entry named `http://` only).
pub fn address_in_member(value: &str) -> Option<String> {
    value.split_whitespace().find_map(|word| {
        let (scheme, rest) = word.split_once("://")?;
        if !matches!(scheme, "http" | "https") {
            return None;
        }
        let authority = authority_of(scheme, rest).ok()?;
        Some(format!("{scheme}://{authority}"))
    })
}

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
    client: Client<HttpsConnector<HttpConnector>, ProxyBody>,
    known: Mutex<HashMap<String, (String, Instant)>>,
}

/// The certificates of a PEM file.
fn pem_certificates(file: &std::path::Path) -> Result<Vec<CertificateDer<'static>>, String> {
    let pem = std::fs::read(file).map_err(|e| format!("cannot read '{}': {e}", file.display()))?;
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<_, _>>()
        .map_err(|e| format!("'{}' is not a PEM certificate: {e}", file.display()))?;
    if certs.is_empty() {
        return Err(format!(
            "'{}' holds no PEM certificate (-----BEGIN CERTIFICATE-----)",
            file.display()
        ));
    }
    Ok(certs)
}

/// The forwarding client's TLS configuration: the anchors of `trust` (a PEM file), else the
/// system's roots and the certificates of `served` (this front end's own chain: one
/// certificate on every front end, or one internal CA's chain, is trusted as it is).
fn client_tls(
    trust: Option<&std::path::Path>,
    served: Option<&std::path::Path>,
) -> Result<ClientConfig, String> {
    let mut roots = RootCertStore::empty();
    let mut add = |certs: Vec<CertificateDer<'static>>, file: &std::path::Path, strict: bool| {
        for cert in certs {
            if let Err(e) = roots.add(cert) {
                if strict {
                    return Err(format!(
                        "http-forward-ca '{}': a certificate is not usable as a trust anchor: {e}",
                        file.display()
                    ));
                }
            }
        }
        Ok(())
    };
    match trust {
        Some(file) => add(
            pem_certificates(file).map_err(|e| format!("http-forward-ca: {e}"))?,
            file,
            true,
        )?,
        None => {
            add(
                rustls_native_certs::load_native_certs().certs,
                std::path::Path::new("(system roots)"),
                false,
            )?;
            if let Some(file) = served {
                add(pem_certificates(file)?, file, false)?;
            }
        }
    }
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    Ok(ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth())
}

impl Hop {
    /// The forwarding side; `served`: the certificate chain this front end serves, if any
    /// (trusted by default). Fails when `http-forward-ca` cannot be read.
    pub fn new(peers: Peers, served: Option<&std::path::Path>) -> Result<Hop, String> {
        let tls = client_tls(peers.trust.as_deref(), served)?;
        let name = match &peers.tls_name {
            Some(n) => {
                let bare = n.trim_start_matches('[').trim_end_matches(']').to_owned();
                Some(ServerName::try_from(bare).map_err(|e| {
                    format!("http-forward-name '{n}': not a DNS name or IP address: {e}")
                })?)
            }
            None => None,
        };
        let mut connector = HttpConnector::new();
        connector.set_connect_timeout(Some(CONNECT_TIMEOUT));
        connector.set_nodelay(true);
        connector.enforce_http(false);
        let builder = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_or_http();
        let builder = match name {
            Some(name) => {
                builder.with_server_name_resolver(hyper_rustls::FixedServerNameResolver::new(name))
            }
            None => builder,
        };
        let connector = builder.enable_http1().wrap_connector(connector);
        let client = Client::builder(hyper_util::rt::TokioExecutor::new())
            .pool_idle_timeout(Duration::from_secs(30))
            .pool_timer(hyper_util::rt::TokioTimer::new())
            .build(connector);
        Ok(Hop {
            peers,
            client,
            known: Mutex::new(HashMap::new()),
        })
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
    let uri = match format!("{addr}{path}").parse::<hyper::Uri>() {
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
            let mut why = format!("{addr}: {e}");
            let mut source = std::error::Error::source(&e);
            while let Some(s) = source {
                why.push_str(&format!(": {s}"));
                source = s.source();
            }
            if why.contains("invalid peer certificate") {
                why.push_str(
                    " (its certificate does not verify, for its advertised host or \
                     http-forward-name, against this front end's trust anchors: \
                     http-forward-ca, docs/cluster.md)",
                );
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
    fn advertised_addresses_name_their_scheme() {
        // HOST:PORT: the listener's scheme (http as before; https on a TLS listener).
        assert_eq!(
            advertised("fe1:8080", false).as_deref(),
            Ok("http://fe1:8080")
        );
        assert_eq!(
            advertised("fe1:8443", true).as_deref(),
            Ok("https://fe1:8443")
        );
        assert_eq!(
            advertised("[::1]:8443", true).as_deref(),
            Ok("https://[::1]:8443")
        );
        assert_eq!(
            advertised(" 10.0.0.7:80 ", false).as_deref(),
            Ok("http://10.0.0.7:80")
        );
        // A scheme written is the scheme meant, whatever the listener serves.
        assert_eq!(
            advertised("https://fe1.example.com:8443/", false).as_deref(),
            Ok("https://fe1.example.com:8443")
        );
        assert_eq!(
            advertised("http://10.0.0.7:8080", true).as_deref(),
            Ok("http://10.0.0.7:8080")
        );
        assert_eq!(
            advertised("https://fe1.example.com", false).as_deref(),
            Ok("https://fe1.example.com")
        );
        for bad in [
            "",
            "fe1",
            "fe1:",
            "fe1:http",
            ":8080",
            "[::1]",
            "ftp://fe1:21",
            "https://",
            "https://fe1:8443/svn",
            "https://user@fe1:8443",
            "https://fe1:port",
            "fe1 :8080",
        ] {
            let err = advertised(bad, true).expect_err(bad);
            assert!(err.starts_with("--http-advertise '"), "{bad:?}: {err}");
        }
    }

    #[test]
    fn member_entries_of_every_version_give_the_address() {
        // Before schemes: http:// only; the same now for a plain listener.
        assert_eq!(
            address_in_member("svn://127.0.0.1:3690 http://127.0.0.1:8080 pid=12").as_deref(),
            Some("http://127.0.0.1:8080")
        );
        assert_eq!(
            address_in_member("svn://10.0.0.7:3690 https://fe1.example.com:8443/ pid=3").as_deref(),
            Some("https://fe1.example.com:8443")
        );
        assert_eq!(
            address_in_member("svn://[::1]:3690 https://[::1]:8443 pid=3").as_deref(),
            Some("https://[::1]:8443")
        );
        // No HTTP listener, or nothing usable.
        assert_eq!(address_in_member("svn://127.0.0.1:3690 pid=12"), None);
        assert_eq!(address_in_member(""), None);
        assert_eq!(
            address_in_member("svn://h:1 https:// http:///x pid=1"),
            None
        );
    }

    #[test]
    fn a_trust_file_that_cannot_serve_is_a_clear_error() {
        let dir = tempfile::tempdir().expect("tempdir");
        let missing = dir.path().join("missing.pem");
        let err = client_tls(Some(&missing), None).expect_err("missing");
        assert!(
            err.starts_with("http-forward-ca: cannot read '") && err.contains("missing.pem"),
            "{err}"
        );
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "not a certificate\n").expect("write");
        let err = client_tls(Some(&empty), None).expect_err("empty");
        assert!(err.contains("holds no PEM certificate"), "{err}");
        // By default: the system's roots (none is fine), and a served file that is gone
        // was refused when the listener started, so is an error here too.
        client_tls(None, None).expect("system roots");
        assert!(client_tls(None, Some(&missing)).is_err());
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
