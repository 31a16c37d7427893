//! Subversion's HTTP protocol (`docs/formats/http.md`): the read side of protocol v2 as
//! mod_dav_svn 1.14 speaks it to the stock client (ra_serf), over svelto-repos.
//!
//! Owns: the HTTP/1.1 listener (hyper, a thread per connection: keep-alive, pipelining,
//! chunked bodies, bounded request bodies, idle timeouts), mapping URLs onto repositories
//! and `!svn/` resources as Apache's `SVNParentPath` does (`uri.rs`), request XML (`xml.rs`,
//! quick-xml), and the answers: `OPTIONS`, `PROPFIND`, `GET` (`resource.rs`), the update
//! report (`update.rs`, an [`svelto_repos::Editor`] written as update-report XML) and the
//! other reports (`reports.rs`).
//! Must not: know the store's format, or the svn:// server's internals. Repositories come
//! from the host ([`svelto_host::Host`]), so one process serves both protocols from the same
//! `Repo` handles and caches.
//!
//! Storage reads are blocking `pread`s: each connection has its own thread (hyper on a
//! current-thread tokio runtime, the TLS handshake too), which handles its requests inline;
//! a response that streams (reports, large files) is written by a helper thread into a
//! bounded channel, so memory stays bounded whatever the response's size. A streamed `PUT`
//! runs on the runtime's blocking pool instead, while the connection's thread feeds it the
//! body.

mod access;
mod auth;
mod batch;
mod conns;
mod ctx;
mod error;
mod forward;
mod htpasswd;
mod ldap;
mod locks;
pub mod metrics;
mod replay;
mod reports;
mod resource;
mod skel;
mod table;
mod tls;
mod update;
mod uri;
mod web;
mod write;
mod xml;

pub use error::HttpError;
pub use forward::{address_in_member, advertised, tag_of, valid_id, Peers, FORWARDED};
pub use tls::TlsFiles;

use bytes::Bytes;
use http_body::{Body, Frame};
use hyper::body::Incoming;
use hyper::header::{HeaderName, HeaderValue};
use hyper::{Request, Response, StatusCode};
use std::cell::RefCell;
use std::convert::Infallible;
use std::future::Future;
use std::io::Write;
use std::path::PathBuf;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// What only the HTTP side is configured with (the rest is the host's:
/// [`svelto_host::HostConfig`]).
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// The URL path the repositories are under ("" or "/svn", as `<Location /svn>`).
    pub prefix: String,
    /// `--http-auth-file`: the htpasswd file for Basic logins to every repository (else
    /// each svnserve.conf's `[http] password-db`).
    pub auth_file: Option<PathBuf>,
    /// `--http-tls-cert`/`--http-tls-key`: serve `https://` instead of `http://`.
    pub tls: Option<TlsFiles>,
    /// `--http-user-header`: a request header carrying the user name a reverse proxy
    /// authenticated (e.g. `X-Remote-User`), believed only from [`HttpConfig::trusted_proxies`].
    pub user_header: Option<String>,
    /// `--http-trusted-proxy`: the addresses whose [`HttpConfig::user_header`] is believed.
    pub trusted_proxies: Vec<std::net::IpAddr>,
    /// The server's local time zone: the long date of a keyword expanded for `?kw=1`.
    pub zone: svelto_core::localtime::Zone,
    /// A cluster front end's peers: a request of a transaction another front end holds is
    /// forwarded to it (docs/cluster.md, "HTTP transactions"). None on one machine.
    pub peers: Option<Peers>,
}

impl Default for HttpConfig {
    fn default() -> HttpConfig {
        HttpConfig::new()
    }
}

impl HttpConfig {
    pub fn new() -> HttpConfig {
        HttpConfig {
            prefix: String::new(),
            auth_file: None,
            tls: None,
            user_header: None,
            trusted_proxies: Vec::new(),
            zone: svelto_core::localtime::Zone::utc(),
            peers: None,
        }
    }
}

/// What every request shares.
pub(crate) struct State {
    /// What both protocols share: configuration, repositories, shutdown, budget, log and
    /// metrics.
    pub host: Arc<svelto_host::Host>,
    pub config: HttpConfig,
    pub logins: auth::Logins,
    /// LDAP logins (svnserve.conf's `[ldap]`) and those accepted lately.
    pub directory: ldap::Directory,
    /// The commit transactions clients have open (they live across requests).
    pub txns: write::Txns,
    /// A cluster front end's forwarding of other front ends' transactions.
    hop: Option<forward::Hop>,
    tls: Option<Arc<tls::Tls>>,
    /// HTTP connections served now (at most `max_connections`).
    open_connections: AtomicUsize,
    /// Connections being answered 503 now (at most [`MAX_REFUSING`]).
    refusing: AtomicUsize,
    /// The connections served, busy or idle.
    conns: conns::Conns,
}

/// The running HTTP side.
pub struct HttpServer {
    tls: Option<Arc<tls::Tls>>,
    _thread: std::thread::JoinHandle<()>,
}

impl HttpServer {
    /// Reads the TLS certificate and key again (SIGHUP): new connections get them, open
    /// ones keep theirs. Ok(false) when the server does not serve TLS; an error (the files
    /// unreadable, or not a matching certificate and key) keeps the certificate in use.
    pub fn reload_tls(&self) -> Result<bool, String> {
        match &self.tls {
            None => Ok(false),
            Some(t) => t.reload().map(|()| true),
        }
    }
}

impl State {
    pub fn log(&self, line: &str) {
        self.host.log.line(line)
    }
}

/// Serves HTTP (HTTPS with [`HttpConfig::tls`]) on `listener`: a thread accepts
/// connections and deals them out to a few worker threads (two per core), each running a
/// single-threaded tokio runtime on which its connections' TLS handshakes and hyper run as
/// tasks. Reads are answered inline on the worker, writes and locks on its blocking pool,
/// so that a connection, idle or waiting, holds no thread: 1,000 kept-alive connections
/// cost what their buffers and tasks do (39-43 KB each), where a thread and a runtime each
/// cost 166-204 KB (measured 2026-11-28).
/// Streamed bodies are written by a helper thread. It runs until the process ends. Fails
/// when the TLS certificate or key cannot be used, or no worker thread can start.
///
/// The same arguments as `svelto_server::run`: the host both protocols share, the
/// listener, this protocol's options.
pub fn spawn(
    host: Arc<svelto_host::Host>,
    listener: std::net::TcpListener,
    mut config: HttpConfig,
) -> std::io::Result<HttpServer> {
    config.prefix = normalize_prefix(&config.prefix);
    let tls = match &config.tls {
        Some(files) => Some(Arc::new(
            tls::Tls::load(files.clone()).map_err(std::io::Error::other)?,
        )),
        None => None,
    };
    host.metrics
        .register(svelto_host::Protocol::Http, table::metric_names());
    let hop = match config.peers.clone() {
        Some(peers) => Some(
            forward::Hop::new(peers, config.tls.as_ref().map(|f| f.cert.as_path()))
                .map_err(std::io::Error::other)?,
        ),
        None => None,
    };
    let state = Arc::new(State {
        host,
        config,
        logins: auth::Logins::default(),
        directory: ldap::Directory::default(),
        txns: write::Txns::default(),
        hop,
        tls: tls.clone(),
        open_connections: AtomicUsize::new(0),
        refusing: AtomicUsize::new(0),
        conns: conns::Conns::default(),
    });
    let workers = start_workers(&state)?;
    let thread = std::thread::Builder::new()
        .name("svelto-http-listener".into())
        .spawn(move || accept_loop(listener, state, workers))?;
    Ok(HttpServer {
        tls,
        _thread: thread,
    })
}

/// Parses a `REPORT` body as the server does before answering it: the XML, then the
/// report's typed request. The report's name when both succeed, else the error a client
/// would be answered with. For fuzzing: any bytes give an answer, never a panic.
pub fn parse_report(body: &[u8]) -> Result<&'static str, String> {
    let doc = xml::parse(body).map_err(|e| e.0)?;
    let row = (doc.ns == xml::SVN)
        .then(|| table::report(&doc.name))
        .flatten()
        .ok_or_else(|| format!("The requested report '{}' is unknown", doc.name))?;
    (row.parse)(&doc).map_err(|e| e.message)?;
    Ok(row.name)
}

/// "/svn/" and "svn" become "/svn"; "/" and "" become "".
fn normalize_prefix(p: &str) -> String {
    let t = p.trim_matches('/');
    if t.is_empty() {
        String::new()
    } else {
        format!("/{t}")
    }
}

/// Connections being told the server is busy, at most (as on svn://); past it a connection
/// is closed unanswered.
const MAX_REFUSING: usize = 64;

/// How long a connection past `--max-connections` may take to send its request (and finish
/// its TLS handshake) before it is closed.
const REFUSAL_WAIT: Duration = Duration::from_secs(5);

/// A place in one of the bounded counts (connections served, refusals being sent), given
/// back when dropped: when its connection's thread ends (or panics), or when that thread
/// could not be started.
type Permit = conns::Permit;

/// A connection handed to a worker.
type Job = (std::net::TcpStream, std::net::IpAddr, Slot);

/// The worker threads, each with the sending end of its queue of new connections.
fn start_workers(state: &Arc<State>) -> std::io::Result<Vec<mpsc::UnboundedSender<Job>>> {
    // Two per core, at least four: a read answered inline that waits on the disk holds up
    // only its worker's other connections.
    let n = std::thread::available_parallelism().map_or(4, |n| (n.get() * 2).clamp(4, 16));
    (0..n)
        .map(|i| {
            let (tx, rx) = mpsc::unbounded_channel();
            let state = state.clone();
            std::thread::Builder::new()
                .name(format!("svelto-http-{i}"))
                .spawn(move || worker(state, rx))?;
            Ok(tx)
        })
        .collect()
}

/// A worker: a single-threaded runtime serving the connections it is handed as local
/// tasks; handlers run on its blocking pool, whose threads give back what the allocator
/// kept for them when they end (idle for ten seconds).
fn worker(state: Arc<State>, mut jobs: mpsc::UnboundedReceiver<Job>) {
    let release = state.host.config.release_thread_memory;
    let host = state.host.clone();
    // As many handlers at once as connections may be served (and refused): the slots bound
    // them, not the pool.
    let handlers = state
        .host
        .config
        .max_connections
        .saturating_add(MAX_REFUSING)
        .max(1);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .max_blocking_threads(handlers)
        .on_thread_stop(move || host.thread_ended())
        .build();
    let runtime = match runtime {
        Ok(r) => r,
        Err(e) => {
            state.log(&format!("HTTP worker cannot start its runtime: {e}"));
            return;
        }
    };
    let local = tokio::task::LocalSet::new();
    // Connections live on this worker: a second after the last one ended (and none came
    // since), what the allocator kept for the worker's thread goes back (after 1,000
    // kept-alive connections closed, RSS stayed 25 MB above its start without it). Not at
    // each ending: for one short connection after another that cost each a collection.
    let live = Rc::new(Live::default());
    local.block_on(&runtime, async move {
        if let Some(release) = release {
            let live = live.clone();
            tokio::task::spawn_local(async move {
                loop {
                    live.idle.notified().await;
                    let begun = live.begun.get();
                    tokio::time::sleep(svelto_host::RELEASE_INTERVAL).await;
                    if live.count.get() == 0 && live.begun.get() == begun {
                        release();
                    }
                }
            });
        }
        while let Some((stream, peer, slot)) = jobs.recv().await {
            let state = state.clone();
            let live = live.clone();
            live.count.set(live.count.get() + 1);
            live.begun.set(live.begun.get() + 1);
            tokio::task::spawn_local(async move {
                let _ended = Ended(live);
                connection(state, stream, peer, slot).await;
            });
        }
    });
}

/// A worker's connections: how many are open, how many have begun (which tells a waiting
/// release whether another came since), and the signal that the last one ended.
#[derive(Default)]
struct Live {
    count: std::cell::Cell<usize>,
    begun: std::cell::Cell<u64>,
    idle: tokio::sync::Notify,
}

/// Counts a worker's connection out when its task ends (also by a panic); the last one's
/// ending wakes the worker's release, which gives the thread's free memory back
/// [`svelto_host::RELEASE_INTERVAL`] later if no connection came meanwhile.
struct Ended(Rc<Live>);

impl Drop for Ended {
    fn drop(&mut self) {
        let left = self.0.count.get().saturating_sub(1);
        self.0.count.set(left);
        if left == 0 {
            self.0.idle.notify_one();
        }
    }
}

fn accept_loop(
    listener: std::net::TcpListener,
    state: Arc<State>,
    workers: Vec<mpsc::UnboundedSender<Job>>,
) {
    let mut next = 0usize;
    loop {
        let (stream, peer) = match listener.accept() {
            Ok(s) => s,
            Err(_) => {
                // Out of descriptors and the like: wait a little rather than spin.
                std::thread::sleep(Duration::from_millis(50));
                continue;
            }
        };
        // Every slot taken: the connection idle the longest gives its slot and closes.
        let taken = Permit::take(
            &state,
            |s| &s.open_connections,
            state.host.config.max_connections,
        )
        .or_else(|| state.conns.evict());
        let slot = match taken {
            // In the table at once, so that the next client finds it idle there.
            Some(p) => Slot::Served(state.conns.register(p)),
            None => {
                state
                    .host
                    .metrics
                    .error(svelto_host::Protocol::Http, svelto_host::ErrorKind::Busy);
                state.log(&format!(
                    "{peer}: refused, {} HTTP connections already served (--max-connections)",
                    state.host.config.max_connections
                ));
                // Answered 503 on a short-lived thread of its own; beyond MAX_REFUSING of
                // those, the connection is just closed.
                match Permit::take(&state, |s| &s.refusing, MAX_REFUSING) {
                    Some(p) => Slot::Refused(p),
                    None => continue,
                }
            }
        };
        // The slot goes with the connection's task, and comes back when it ends, even by
        // a panic, or when its worker is gone (the job is then dropped, and the connection
        // closed with it).
        next = next.wrapping_add(1);
        if let Some(w) = workers.get(next % workers.len().max(1)) {
            let _ = w.send((stream, peer.ip(), slot));
        }
    }
}

/// What a connection's task holds: its entry in the connection table (and through it its
/// permit), or its place among the connections being refused.
enum Slot {
    Served(Arc<conns::Conn>),
    Refused(Permit),
}

/// One connection, a task on its worker: the TLS handshake (when serving https://) and
/// hyper's HTTP/1.1. A connection past `max_connections` gets a 503 to its request and is
/// closed; a served one is in the connection table ([`conns`]) while it lives, holding its
/// permit there.
async fn connection(
    state: Arc<State>,
    stream: std::net::TcpStream,
    peer: std::net::IpAddr,
    slot: Slot,
) {
    let (conn, busy, _refusal) = match slot {
        Slot::Served(c) => (Some(c), false, None),
        Slot::Refused(p) => (None, true, Some(p)),
    };
    // Counted open until the task ends (also by a panic's unwinding).
    let host = state.host.clone();
    let _open = (!busy).then(|| host.metrics.connection_opened(svelto_host::Protocol::Http));
    let _ = stream.set_nodelay(true);
    if stream.set_nonblocking(true).is_err() {
        return;
    }
    {
        let Ok(stream) = tokio::net::TcpStream::from_std(stream) else {
            return;
        };
        match state.tls.as_ref().map(|t| t.acceptor()) {
            None => serve_connection(state, peer, conn, stream).await,
            Some(acceptor) => {
                // A client that does not finish its handshake in time is dropped, and one
                // still in it gives its slot to a new client when every slot is taken.
                let wait = if busy {
                    REFUSAL_WAIT
                } else {
                    conns::FIRST_REQUEST
                };
                let mut handshake =
                    std::pin::pin!(tokio::time::timeout(wait, acceptor.accept(stream)));
                let watched = conn.clone();
                let mut evicted = std::pin::pin!(async move {
                    match &watched {
                        Some(c) => c.evicted().await,
                        None => std::future::pending().await,
                    }
                });
                let done = std::future::poll_fn(|cx| {
                    if let Poll::Ready(r) = handshake.as_mut().poll(cx) {
                        return Poll::Ready(r.ok());
                    }
                    if evicted.as_mut().poll(cx).is_ready() {
                        return Poll::Ready(None);
                    }
                    Poll::Pending
                })
                .await;
                if let Some(Ok(tls)) = done {
                    serve_connection(state, peer, conn, tls).await;
                }
            }
        }
    }
}

/// HTTP/1.1 on one connection (plain or TLS) until it closes or idles out (see
/// [`conns`]); every request answered with a 503 when the connection is one too many
/// (`conn` None).
async fn serve_connection<S>(
    state: Arc<State>,
    peer: std::net::IpAddr,
    conn: Option<Arc<conns::Conn>>,
    stream: S,
) where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + 'static,
{
    let busy = conn.is_none();
    let max = state.host.config.max_connections;
    let stalled = state.host.config.idle_timeout;
    let cache = Rc::new(RefCell::new(ConnCache::default()));
    let reaped = cache.clone();
    let stream = batch::Batched::new(stream, conn.clone());
    let urgent = stream.urgent();
    let watched = conn.clone();
    let service = hyper::service::service_fn(move |req: Request<Incoming>| {
        let state = state.clone();
        let cache = cache.clone();
        let urgent = urgent.clone();
        let answering = conn.as_ref().map(|c| c.begin());
        // A write is waited for by a shutdown until its answer is sent.
        let reads =
            table::method(req.method().as_str()).is_none_or(|m| m.access == table::Access::Read);
        let writing = (!reads).then(|| state.host.drain.write());
        async move {
            let seen = Some(Seen::new(
                state.host.clone(),
                &state.config.prefix,
                peer,
                &req,
            ));
            let answered = async {
                if busy {
                    let e = HttpError::new(
                        StatusCode::SERVICE_UNAVAILABLE,
                        format!(
                            "Server busy: it already serves {max} HTTP connections; try again later"
                        ),
                    );
                    to_response(e.reply()).await
                } else {
                    respond(state, &cache, peer, req, reads).await
                }
            };
            // While the handler answers, the answers before it go out.
            let mut answered = std::pin::pin!(answered);
            let resp = std::future::poll_fn(|cx| {
                let polled = answered.as_mut().poll(cx);
                if polled.is_pending() {
                    urgent.set(true);
                }
                polled
            })
            .await;
            Ok::<_, Infallible>(logged(resp, seen, urgent, (answering, writing)))
        }
    });
    // No `pipeline_flush`: hyper then copies every body byte into one buffer before it
    // writes (its "flatten" strategy); with `writev` a streamed report's 64 KiB chunks go
    // to the socket as they are (a send-all null-export of the medium trunk: 1.02 s of
    // server CPU against 2.15 s, medians of 3; a skelta one, a GET per file, 1.46 against
    // 1.50 s), and holds all it queues without a bound; `Batched` gathers the answers to
    // pipelined requests instead, holding back at most 64 KiB. hyper's header timeout stays
    // the idle timeout, as before the watchdog below: without it, hyper is not polled again
    // after an answer it buffered (an svnmucc commit then waited a second per request for
    // the watchdog's tick); the watchdog closes idle connections long before it.
    let conn = hyper::server::conn::http1::Builder::new()
        .keep_alive(!busy)
        .writev(true)
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(if busy { REFUSAL_WAIT } else { stalled })
        .serve_connection(hyper_util::rt::TokioIo::new(stream), service);
    // An admission older than CONF_TTL is never used again: let it go while the connection
    // idles, so that an idle keep-alive connection does not keep its repository open (the
    // server closes idle repositories past its bound, never one in use). Each tick also
    // closes the connection when it idled or stalled too long.
    let mut conn = std::pin::pin!(conn);
    let mut tick = tokio::time::interval(CONF_TTL);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut evicted = std::pin::pin!(async {
        match &watched {
            Some(c) => c.evicted().await,
            None => std::future::pending().await,
        }
    });
    let mut closing = false;
    std::future::poll_fn(|cx| {
        if !closing && evicted.as_mut().poll(cx).is_ready() {
            // Closes at once when idle; a request that just began is answered first.
            closing = true;
            conn.as_mut().graceful_shutdown();
        }
        if conn.as_mut().poll(cx).is_ready() {
            return std::task::Poll::Ready(());
        }
        while tick.poll_tick(cx).is_ready() {
            if let Ok(mut kept) = reaped.try_borrow_mut() {
                kept.forget_stale();
            }
            match watched.as_ref().and_then(|c| c.expired(stalled)) {
                Some("no byte moved") => return std::task::Poll::Ready(()),
                Some(_) if !closing => {
                    closing = true;
                    conn.as_mut().graceful_shutdown();
                    if conn.as_mut().poll(cx).is_ready() {
                        return std::task::Poll::Ready(());
                    }
                }
                _ => {}
            }
        }
        std::task::Poll::Pending
    })
    .await;
}

/// What a connection keeps between its requests: the repository it last used, with its
/// handle and access configuration, for [`CONF_TTL`]. ra_serf's checkouts and exports are
/// a `GET` (or `PROPFIND`) per file on a few connections, so this saves opening the
/// repository and reading its `svnserve.conf` (and authz file) thousands of times an
/// operation; the svn:// side reads them once per connection.
#[derive(Default)]
pub(crate) struct ConnCache {
    last: Option<Admitted>,
    /// Directories found through `last`'s repository handle (emptied with it).
    pub dirs: RefCell<ctx::Dirs>,
}

/// An admission a connection keeps.
struct Admitted {
    /// The repository.
    place: uri::Place,
    /// The request's credentials: every value of its `Authorization` header and of the
    /// trusted proxy's user header.
    who: Vec<u8>,
    /// When the configuration was read (just before).
    at: Instant,
    svc: svelto_repos::service::Ctx,
    gate: access::Gate,
}

/// How long a connection goes on using the configuration it read: edits to
/// `svnserve.conf`, the authz and password files apply to requests after that.
pub(crate) const CONF_TTL: Duration = Duration::from_secs(1);

impl ConnCache {
    /// This connection's last admission's repository, when it is the one named `name` with the very
    /// same credentials `who` and was read less than [`CONF_TTL`] ago (a reuse does not
    /// extend that): a request that only reads then takes it as it is ([`ConnCache::kept`]),
    /// without looking at the repository's directory or configuration again.
    pub fn keeps(&self, name: &str, who: &[u8]) -> Option<uri::Place> {
        self.last
            .as_ref()
            .filter(|a| &*a.place.name == name && a.who == who && a.at.elapsed() < CONF_TTL)
            .map(|a| a.place.clone())
    }

    /// The last admission, borrowed (no copy of its context per request), when one is kept.
    pub fn kept(&self) -> Option<(&svelto_repos::service::Ctx, &access::Gate)> {
        self.last.as_ref().map(|a| (&a.svc, &a.gate))
    }

    /// Drops the last admission once it is too old to be [`kept`](Self::keeps), with the
    /// directories found through it.
    fn forget_stale(&mut self) {
        if self
            .last
            .as_ref()
            .is_some_and(|a| a.at.elapsed() >= CONF_TTL)
        {
            self.last = None;
            self.dirs.get_mut().clear();
        }
    }

    /// A new admission of a request to the repository `place` with the credentials `who`,
    /// from `load`: kept (in place of the last) when it succeeds for a request that only
    /// `reads`; a refusal is never kept.
    pub fn admit(
        &mut self,
        place: uri::Place,
        who: &[u8],
        reads: bool,
        load: impl FnOnce() -> Result<(svelto_repos::service::Ctx, access::Gate), HttpError>,
    ) -> Result<(svelto_repos::service::Ctx, access::Gate), HttpError> {
        self.last = None;
        self.dirs.get_mut().clear();
        let at = Instant::now();
        let (svc, gate) = load()?;
        if reads {
            self.last = Some(Admitted {
                place,
                who: who.to_vec(),
                at,
                svc: svc.clone(),
                gate: gate.clone(),
            });
        }
        Ok((svc, gate))
    }
}

/// A request as the handlers see it: its head and its whole (bounded) body.
pub(crate) struct Req {
    pub method: hyper::Method,
    /// The request target as hyper parsed it ([`Req::path`] is its path, not copied).
    pub uri: hyper::Uri,
    /// The query of the request target (after `?`), if it has one: mod_dav_svn reads
    /// `p=PEG` and `r=REV` from a public URL's.
    pub query: Option<String>,
    /// The client's address (a reverse proxy's, behind one).
    pub peer: std::net::IpAddr,
    pub headers: hyper::HeaderMap,
    pub body: Bytes,
    /// The body of a `PUT` of an svndiff, as it arrives (`body` is then empty): a file's
    /// text is not bounded by `--max-request-size`, and not held in memory (it is applied
    /// to the transaction's spool file as it comes), as Apache takes any size.
    pub stream: std::sync::Mutex<Option<BodyStream>>,
}

/// A request body's chunks, in order; an error when the body broke off.
pub(crate) type BodyStream = mpsc::Receiver<Result<Bytes, String>>;

impl Req {
    /// The request's path, as sent.
    pub fn path(&self) -> &str {
        self.uri.path()
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The svndiff version of a `GET`'s delta or an update report's texts, if the client
    /// takes svndiff at all: uncompressed to a client on this machine (as the svn:// side
    /// sends it: compressing costs more than it saves over the loopback), else the best its
    /// `Accept-Encoding` offers. (file-revs and replay reports keep the best offered.)
    pub fn svndiff_version(&self) -> Option<u8> {
        let best = ctx::svndiff_version(self.header("accept-encoding"))?;
        if self.peer.is_loopback() {
            Some(0)
        } else {
            Some(best)
        }
    }
}

/// A response body written by a blocking task.
pub(crate) type Streamer = Box<dyn FnOnce(&mut dyn Write) -> Result<(), HttpError> + Send>;

/// What a handler answers.
pub(crate) struct Reply {
    pub status: StatusCode,
    /// Header values as bytes: a static one (a content type, `max-age`) costs no copy.
    pub headers: Vec<(&'static str, Bytes)>,
    pub body: ReplyBody,
    pub note: Note,
}

/// What the request log and metrics learn from a handler.
#[derive(Debug, Clone, Default)]
pub(crate) struct Note {
    /// The request's action in Subversion's operational-log words (mod_dav_svn's
    /// `SVN-ACTION`).
    pub action: Option<String>,
    /// The Subversion error answered.
    pub error: Option<(u32, String)>,
    /// The name the metrics count it under (the request table's: [`table`]).
    pub command: Option<&'static str>,
    /// The user the request was admitted as.
    pub user: Option<String>,
    /// The repository's name under the root, once the request found it (a nested one's
    /// is several segments: `projects/tools`).
    pub repos: Option<std::sync::Arc<str>>,
}

pub(crate) enum ReplyBody {
    Bytes(Vec<u8>),
    /// Bytes shared with a cache (a file's text), sent without a copy.
    Shared(Bytes),
    /// Pieces read one by one as the connection takes them, on its own thread (a large
    /// file's stored windows): no thread, channel or copy of its own.
    Pieces(Pieces),
    Stream(Streamer),
}

/// The pieces of a [`ReplyBody::Pieces`].
pub(crate) type Pieces = Box<dyn Iterator<Item = svelto_repos::Result<Vec<u8>>> + Send>;

impl Reply {
    pub fn new(status: StatusCode, content_type: &'static str, body: Vec<u8>) -> Reply {
        Reply {
            status,
            headers: vec![("content-type", Bytes::from_static(content_type.as_bytes()))],
            body: ReplyBody::Bytes(body),
            note: Note::default(),
        }
    }

    /// An answer without a body or a `Content-Type`.
    pub fn empty(status: StatusCode) -> Reply {
        Reply {
            status,
            headers: Vec::new(),
            body: ReplyBody::Bytes(Vec::new()),
            note: Note::default(),
        }
    }

    pub fn xml(status: StatusCode, body: Vec<u8>) -> Reply {
        Reply::new(status, "text/xml; charset=\"utf-8\"", body)
    }

    pub fn stream(status: StatusCode, content_type: &'static str, f: Streamer) -> Reply {
        Reply {
            status,
            headers: vec![("content-type", Bytes::from_static(content_type.as_bytes()))],
            body: ReplyBody::Stream(f),
            note: Note::default(),
        }
    }

    /// A 200 XML answer written as it is made.
    pub fn xml_stream(f: Streamer) -> Reply {
        Reply::stream(StatusCode::OK, "text/xml; charset=\"utf-8\"", f)
    }

    pub fn header(mut self, name: &'static str, value: impl Into<Bytes>) -> Reply {
        self.headers.push((name, value.into()));
        self
    }

    /// The request's action, for the request log.
    pub fn action(mut self, action: String) -> Reply {
        self.note.action = Some(action);
        self
    }
}

/// Answers a request; `reads` when its method reads only (the request table's row, or no
/// row: an unknown method, refused at once), which is answered inline.
async fn respond(
    state: Arc<State>,
    cache: &RefCell<ConnCache>,
    peer: std::net::IpAddr,
    req: Request<Incoming>,
    reads: bool,
) -> Response<Noted> {
    let (parts, body) = req.into_parts();
    let max = state.host.config.max_request;
    // A cluster front end: a request of another front end's transaction goes there (a
    // MERGE names its transaction in its body, read first).
    if let Some(hop) = state.hop.as_ref() {
        let named = forward::txn_in(parts.uri.path()).or_else(|| {
            parts
                .headers
                .get("destination")
                .and_then(|v| v.to_str().ok())
                .and_then(forward::txn_in)
        });
        if let Some((name, owner)) = named.and_then(|n| Some((n, hop.owner(n, &parts.headers)?))) {
            let (name, owner) = (name.to_owned(), owner.to_owned());
            let body = forward::Pass::Streamed(body);
            return forward::forward(&state, hop, peer, parts, body, &name, &owner).await;
        }
        if parts.method.as_str() == "MERGE" {
            let mut charge = svelto_core::budget::Charge::new(
                Some(state.host.budget.clone()),
                FREE_PER_CONNECTION,
            );
            let read = match collect_charged(body, max, &mut charge).await {
                Ok(b) => b,
                Err(e) => return to_response(e.reply()).await,
            };
            let named = forward::txn_in_merge(&read)
                .and_then(|name| Some((name, hop.owner(name, &parts.headers)?)))
                .map(|(n, o)| (n.to_owned(), o.to_owned()));
            if let Some((name, owner)) = named {
                let body = forward::Pass::Read(read);
                return forward::forward(&state, hop, peer, parts, body, &name, &owner).await;
            }
            let req = collected(parts, peer, read);
            return answer_collected(state, cache, req, reads, charge).await;
        }
    }
    respond_local(state, cache, peer, parts, body, reads).await
}

/// [`respond`] for a request this front end answers itself.
async fn respond_local(
    state: Arc<State>,
    cache: &RefCell<ConnCache>,
    peer: std::net::IpAddr,
    parts: hyper::http::request::Parts,
    body: Incoming,
    reads: bool,
) -> Response<Noted> {
    let max = state.host.config.max_request;
    let streamed_put = parts.method == hyper::Method::PUT
        && parts
            .headers
            .get(hyper::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.trim().starts_with("application/vnd.svn-svndiff"));
    if streamed_put {
        let (tx, rx) = mpsc::channel(4);
        tokio::spawn(async move {
            let mut body = body;
            while let Some(frame) = http_body_util::BodyExt::frame(&mut body).await {
                let item = match frame {
                    Ok(f) => match f.into_data() {
                        Ok(d) => Ok(d),
                        Err(_) => continue,
                    },
                    Err(e) => Err(e.to_string()),
                };
                let failed = item.is_err();
                if tx.send(item).await.is_err() || failed {
                    break;
                }
            }
        });
        let req = Req {
            method: parts.method,
            query: parts.uri.query().map(str::to_string),
            uri: parts.uri,
            headers: parts.headers,
            body: Bytes::new(),
            peer,
            stream: std::sync::Mutex::new(Some(rx)),
        };
        // The body comes from the task above while the handler reads it.
        return run_blocking(state, req).await;
    }
    let declared = parts
        .headers
        .get(hyper::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.trim().parse::<u64>());
    match declared {
        Some(Ok(n)) if n > max as u64 => {
            return to_response(
                HttpError::new(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    format!("The request body of {n} bytes exceeds the limit of {max} bytes"),
                )
                .reply(),
            )
            .await
        }
        Some(Err(_)) => {
            return to_response(HttpError::bad_request("Malformed Content-Length").reply()).await
        }
        _ => {}
    }
    // A request without a body (a GET's, a PROPFIND's of no XML) has nothing to collect.
    // A body is charged against the memory budget as it arrives, until it is answered.
    let mut charge =
        svelto_core::budget::Charge::new(Some(state.host.budget.clone()), FREE_PER_CONNECTION);
    let body = if http_body::Body::is_end_stream(&body) {
        Bytes::new()
    } else {
        match collect_charged(body, max, &mut charge).await {
            Ok(b) => b,
            Err(e) => return to_response(e.reply()).await,
        }
    };
    answer_collected(state, cache, collected(parts, peer, body), reads, charge).await
}

/// A request whose body was read whole.
fn collected(parts: hyper::http::request::Parts, peer: std::net::IpAddr, body: Bytes) -> Req {
    Req {
        method: parts.method,
        query: parts.uri.query().map(str::to_string),
        uri: parts.uri,
        peer,
        headers: parts.headers,
        body,
        stream: std::sync::Mutex::new(None),
    }
}

/// [`respond`] for a request whose body is read (charged by `charge` until answered).
async fn answer_collected(
    state: Arc<State>,
    cache: &RefCell<ConnCache>,
    req: Req,
    reads: bool,
    charge: svelto_core::budget::Charge,
) -> Response<Noted> {
    let _charge = charge;
    // A read is answered inline, on the worker: it reads what the store has in memory or
    // in the page cache, and a long answer (a report, a large file) streams from a thread
    // of its own. Handing every request to the blocking pool doubled the server's CPU time
    // of a GET-per-file export (svnbench null-export of bench's small trunk over ra_serf:
    // 30-38 ticks against 14-18, 5 rounds, 2026-11-28). A write or a lock, which may wait
    // on the disk's flush or a hook, goes to the worker's blocking pool, so that the
    // worker's other connections are not held up meanwhile.
    // The web interface's pages (blame, search over every revision) may take far longer
    // than a protocol read, and come a few per visitor's click: they go to the pool too.
    // A read whose login must ask an LDAP directory (not one it accepted lately) would hold
    // the worker for as long as the directory takes: its admission asks for the pool
    // ([`needs_pool`]) and the request is answered there instead.
    if reads && !req.uri.path().contains("/!svn/web/") {
        INLINE.with(|i| i.set(true));
        let handled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let mut cache = cache.borrow_mut();
            answer(&state, &mut cache, &req)
        }));
        INLINE.with(|i| i.set(false));
        if !POOL_WANTED.with(|w| w.replace(false)) {
            return reply_or_failure(handled.ok()).await;
        }
    }
    // With what the connection keeps lent to the handler (and given back with the answer;
    // a handler that panicked loses it).
    let kept = std::mem::take(&mut *cache.borrow_mut());
    let handled = tokio::task::spawn_blocking(move || {
        let mut kept = kept;
        let reply = answer(&state, &mut kept, &req);
        (reply, kept)
    })
    .await;
    match handled {
        Ok((reply, kept)) => {
            *cache.borrow_mut() = kept;
            to_response(reply).await
        }
        Err(_) => reply_or_failure(None).await,
    }
}

thread_local! {
    /// Whether this thread answers a request on a worker (inline), where nothing may wait
    /// on the network.
    static INLINE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Whether the request answered inline asked to be answered on the blocking pool.
    static POOL_WANTED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether the request being answered may wait on the network (an LDAP directory): true on
/// the blocking pool. On a worker, false, and the request is answered again on the pool
/// (before that, the handler's answer is dropped: it must have changed nothing).
pub(crate) fn may_block() -> bool {
    if INLINE.with(std::cell::Cell::get) {
        POOL_WANTED.with(|w| w.set(true));
        false
    } else {
        true
    }
}

/// A request's answer, an error's too, with what the handler noted of it for the log.
fn answer(state: &State, cache: &mut ConnCache, req: &Req) -> Reply {
    let mut note = Note::default();
    let mut reply = resource::handle(state, cache, req, &mut note).unwrap_or_else(|e| e.reply());
    reply.note.user = note.user;
    reply.note.repos = note.repos;
    reply.note.command = reply.note.command.or(note.command);
    reply.note.action = reply.note.action.or(note.action);
    reply
}

/// What a connection buffers without a charge against the memory budget (as on svn://).
const FREE_PER_CONNECTION: usize = svelto_core::budget::FREE_PER_CONNECTION;

/// A request's whole body, at most `max` bytes (413 past it), charged against the memory
/// budget as it arrives (503 when the budget has no room: the connection then closes
/// rather than read the rest).
async fn collect_charged(
    mut body: Incoming,
    max: usize,
    charge: &mut svelto_core::budget::Charge,
) -> Result<Bytes, HttpError> {
    let mut parts: Vec<Bytes> = Vec::new();
    let mut total = 0usize;
    while let Some(frame) = http_body_util::BodyExt::frame(&mut body).await {
        let frame = frame.map_err(|e| {
            HttpError::bad_request(format!("The request body could not be read: {e}"))
        })?;
        let Ok(data) = frame.into_data() else {
            continue;
        };
        total = total.saturating_add(data.len());
        if total > max {
            return Err(HttpError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("The request body exceeds the limit of {max} bytes"),
            ));
        }
        if let Err(e) = charge.set(total) {
            // Refused: what is kept goes back, and the rest of the body is read and
            // dropped (up to the request bound) so that the client reads the answer
            // rather than a reset connection.
            drop(parts);
            let mut seen = total;
            while let Some(Ok(frame)) = http_body_util::BodyExt::frame(&mut body).await {
                seen = seen.saturating_add(frame.data_ref().map_or(0, |d| d.len()));
                if seen > max {
                    break;
                }
            }
            return Err(HttpError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                e.to_string(),
            ));
        }
        parts.push(data);
    }
    Ok(match parts.len() {
        0 => Bytes::new(),
        1 => parts.pop().unwrap_or_default(),
        _ => {
            let mut all = Vec::with_capacity(total);
            for p in &parts {
                all.extend_from_slice(p);
            }
            Bytes::from(all)
        }
    })
}

/// Reads what is left of a streamed body the handler did not take (a refused PUT), up to
/// `max` bytes, so the client, still sending it, reads the refusal rather than a reset
/// connection.
fn drain(req: &Req, max: usize) {
    let stream = req.stream.lock().unwrap_or_else(|e| e.into_inner()).take();
    if let Some(mut stream) = stream {
        let mut seen = 0;
        while let Some(Ok(chunk)) = stream.blocking_recv() {
            seen += chunk.len();
            if seen > max {
                break;
            }
        }
    }
}

/// Answers a request on the runtime's blocking pool without the connection's cache (a
/// streamed `PUT`: its handler waits for body chunks that a task of the worker receives).
async fn run_blocking(state: Arc<State>, req: Req) -> Response<Noted> {
    let handled = tokio::task::spawn_blocking(move || {
        // A write: nothing of the connection's cached admission is used.
        let mut cache = ConnCache::default();
        let reply = answer(&state, &mut cache, &req);
        drain(&req, state.host.config.max_request);
        reply
    })
    .await;
    reply_or_failure(handled.ok()).await
}

/// A handler's reply, or a 500 when the handler panicked.
async fn reply_or_failure(handled: Option<Reply>) -> Response<Noted> {
    match handled {
        Some(reply) => to_response(reply).await,
        None => {
            to_response(
                HttpError::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "The request's handler failed",
                )
                .reply(),
            )
            .await
        }
    }
}

/// Turns a handler's reply into a response. A streamed body is started first: an error
/// before its first 64 KiB (a report that fails before it writes much) still becomes a
/// proper error response; a later one can only break the body off.
async fn to_response(reply: Reply) -> Response<Noted> {
    let note = reply.note;
    let body = match reply.body {
        ReplyBody::Bytes(b) => RespBody::Full(Some(Bytes::from(b))),
        ReplyBody::Shared(b) => RespBody::Full(Some(b)),
        ReplyBody::Pieces(pieces) => match next_piece(pieces).await {
            (None, _) => RespBody::Full(None),
            (Some(Err(e)), _) => {
                // Failed before its first bytes: an error answer, as a streamed one.
                let mut r = HttpError::from(e).reply();
                r.note = Note {
                    error: r.note.error,
                    ..note
                };
                return Box::pin(to_response(r)).await;
            }
            (Some(Ok(first)), Some(pieces)) => {
                RespBody::Pull(Some(Bytes::from(first)), PullState::Idle(pieces))
            }
            (Some(Ok(first)), None) => RespBody::Full(Some(Bytes::from(first))),
        },
        ReplyBody::Stream(f) => {
            let (tx, mut rx) = mpsc::channel(8);
            let producer = std::thread::Builder::new()
                .name("svelto-http-body".into())
                .spawn(move || {
                    let mut w = ChanWriter {
                        tx,
                        buf: Vec::with_capacity(CHUNK),
                    };
                    let result = f(&mut w).and_then(|()| w.flush().map_err(HttpError::from));
                    if let Err(e) = result {
                        let _ = w.tx.blocking_send(Err(e));
                    }
                });
            if producer.is_err() {
                let e = HttpError::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "The server cannot start a thread for this response; try again later",
                );
                return Box::pin(to_response(e.reply())).await;
            }
            match rx.recv().await {
                None => RespBody::Full(None),
                Some(Err(e)) => {
                    // Failed before its first bytes: an error answer, still logged as the
                    // action it was.
                    let mut r = e.reply();
                    r.note = Note {
                        error: r.note.error,
                        ..note
                    };
                    return Box::pin(to_response(r)).await;
                }
                Some(Ok(first)) => RespBody::Chan(Some(first), rx),
            }
        }
    };
    let mut resp = Response::new(Noted { body, note });
    *resp.status_mut() = reply.status;
    let headers = resp.headers_mut();
    headers.insert("server", HeaderValue::from_static("Svelto SVN/1.14.2"));
    for (name, value) in reply.headers {
        // The value's bytes become the header's, without a copy.
        if let Ok(v) = HeaderValue::from_maybe_shared(value) {
            headers.append(HeaderName::from_static(name), v);
        }
    }
    resp
}

const CHUNK: usize = 64 * 1024;

/// A request being answered, until its answer's body is done with: then it is reported to
/// the observer.
///
/// It holds the request's URI, method and headers as hyper parsed them (shared with the
/// request, no copies made) and reads them as text when it reports.
struct Seen {
    host: Arc<svelto_host::Host>,
    start: Instant,
    client: std::net::IpAddr,
    /// Where the repository's name lies in the URI's path (empty: `-`).
    repos: std::ops::Range<usize>,
    method: hyper::Method,
    uri: hyper::Uri,
    version: &'static str,
    referer: Option<HeaderValue>,
    user_agent: Option<HeaderValue>,
    bytes_in: u64,
    status: u16,
    note: Note,
    bytes_out: u64,
}

impl Seen {
    fn new(
        host: Arc<svelto_host::Host>,
        prefix: &str,
        client: std::net::IpAddr,
        req: &Request<Incoming>,
    ) -> Seen {
        let header = |n: hyper::header::HeaderName| req.headers().get(n).cloned();
        let path = req.uri().path();
        let repos = match repos_segment(prefix, path) {
            "-" => 0..0,
            // A slice of the path: its place in it.
            r => {
                let at = r.as_ptr() as usize - path.as_ptr() as usize;
                at..at + r.len()
            }
        };
        Seen {
            host,
            start: Instant::now(),
            client,
            repos,
            method: req.method().clone(),
            uri: req.uri().clone(),
            version: match req.version() {
                hyper::Version::HTTP_10 => "HTTP/1.0",
                _ => "HTTP/1.1",
            },
            referer: header(hyper::header::REFERER),
            user_agent: header(hyper::header::USER_AGENT),
            bytes_in: req
                .headers()
                .get(hyper::header::CONTENT_LENGTH)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0),
            status: 0,
            note: Note::default(),
            bytes_out: 0,
        }
    }
}

impl Drop for Seen {
    fn drop(&mut self) {
        // Named by a handler; refused before one saw it (busy, too large, an unknown
        // method): `http-other`, so that clients cannot make up counters.
        let command = self.note.command.unwrap_or(table::OTHER);
        let path = self.uri.path();
        let found = self.note.repos.take();
        let repos = found
            .as_deref()
            .or_else(|| path.get(self.repos.clone()))
            .filter(|r| !r.is_empty());
        fn text(v: &Option<HeaderValue>) -> Option<&str> {
            v.as_ref().and_then(|v| v.to_str().ok())
        }
        let actions: Vec<String> = self.note.action.take().into_iter().collect();
        let error: Vec<(u64, String)> = self
            .note
            .error
            .take()
            .map(|(code, msg)| (u64::from(code), msg))
            .into_iter()
            .collect();
        // The address as text, written once per thread while it stays the same (a
        // connection's thread answers one client), not once per request.
        thread_local! {
            static CLIENT: RefCell<Option<(std::net::IpAddr, String)>> =
                const { RefCell::new(None) };
        }
        CLIENT.with_borrow_mut(|last| {
            if last.as_ref().is_none_or(|(ip, _)| *ip != self.client) {
                *last = Some((self.client, self.client.to_string()));
            }
            let client = last.as_ref().map_or("-", |(_, text)| text.as_str());
            self.host.record(&svelto_host::Request {
                protocol: svelto_host::Protocol::Http,
                client,
                user: self.note.user.as_deref(),
                repos: repos.unwrap_or("-"),
                command,
                actions: &actions,
                duration: self.start.elapsed(),
                bytes_in: self.bytes_in,
                bytes_out: self.bytes_out,
                error: &error,
                fatal: false,
                committed: self.method.as_str() == "MERGE" && self.status == 200,
                http: Some(svelto_host::HttpRequest {
                    method: self.method.as_str(),
                    target: self.uri.path_and_query().map_or(path, |p| p.as_str()),
                    version: self.version,
                    status: self.status,
                    referer: text(&self.referer),
                    user_agent: text(&self.user_agent),
                }),
            });
        });
    }
}

/// The repository name a request path names (as the URL spells it: a slice of `path`), or
/// `-`.
fn repos_segment<'p>(prefix: &str, path: &'p str) -> &'p str {
    path.strip_prefix(prefix)
        .and_then(|r| r.strip_prefix('/'))
        .and_then(|r| r.split('/').next())
        .filter(|n| !n.is_empty() && !n.starts_with('!'))
        .unwrap_or("-")
}

/// The response with its body counted and reported (when there is an observer) once it
/// has been sent or the connection dropped it.
fn logged(
    resp: Response<Noted>,
    seen: Option<Seen>,
    urgent: Rc<std::cell::Cell<bool>>,
    answering: (Option<conns::Busy>, Option<svelto_core::Writing>),
) -> Response<Answer> {
    let (parts, Noted { body, note }) = resp.into_parts();
    let seen = seen.map(|mut s| {
        s.status = parts.status.as_u16();
        s.note = note;
        s
    });
    Response::from_parts(
        parts,
        Answer {
            body,
            seen,
            urgent,
            _answering: answering,
        },
    )
}

/// A response body and what the handler noted of the request, until [`logged`] hands the
/// note to the request log (not in the response's extensions: a map allocated per
/// request).
pub(crate) struct Noted {
    body: RespBody,
    note: Note,
}

/// A response body and the request it answers, for the request log.
pub(crate) struct Answer {
    body: RespBody,
    seen: Option<Seen>,
    /// Set while the body waits for its next piece: what the connection holds back goes
    /// out meanwhile ([`batch::Batched`]).
    urgent: Rc<std::cell::Cell<bool>>,
    /// The connection is busy, and a write counted as running, until the body is done
    /// with.
    _answering: (Option<conns::Busy>, Option<svelto_core::Writing>),
}

impl Body for Answer {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        let this = self.get_mut();
        let polled = match &mut this.body {
            RespBody::Full(b) => Poll::Ready(b.take().map(|b| Ok(Frame::data(b)))),
            RespBody::Chan(first @ Some(_), _) | RespBody::Pull(first @ Some(_), _) => {
                Poll::Ready(first.take().map(|b| Ok(Frame::data(b))))
            }
            RespBody::Pull(None, state) => state.poll_next(cx).map(|o| {
                o.map(|r| {
                    r.map(|v| Frame::data(Bytes::from(v))).map_err(|e| {
                        // Broken off after its first bytes: the error is still logged.
                        if let Some(s) = &mut this.seen {
                            s.note.error = Some((e.code, e.message.clone()));
                        }
                        std::io::Error::other(e.message)
                    })
                })
            }),
            RespBody::Chan(None, rx) => rx.poll_recv(cx).map(|o| {
                o.map(|r| {
                    r.map(Frame::data).map_err(|e| {
                        // Broken off after its first bytes: the error is still logged.
                        if let Some(s) = &mut this.seen {
                            s.note.error = Some((e.code, e.message.clone()));
                        }
                        std::io::Error::other(e.message)
                    })
                })
            }),
        };
        if polled.is_pending() {
            this.urgent.set(true);
        }
        if let (Poll::Ready(Some(Ok(frame))), Some(s)) = (&polled, &mut this.seen) {
            if let Some(d) = frame.data_ref() {
                s.bytes_out += d.len() as u64;
            }
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        matches!(self.body, RespBody::Full(None))
    }

    fn size_hint(&self) -> http_body::SizeHint {
        match &self.body {
            RespBody::Full(Some(b)) => http_body::SizeHint::with_exact(b.len() as u64),
            RespBody::Full(None) => http_body::SizeHint::with_exact(0),
            RespBody::Chan(..) | RespBody::Pull(..) => http_body::SizeHint::default(),
        }
    }
}

/// The blocking side of a streamed body: 64 KiB chunks into a channel of eight.
struct ChanWriter {
    tx: mpsc::Sender<Result<Bytes, HttpError>>,
    buf: Vec<u8>,
}

impl Write for ChanWriter {
    fn write(&mut self, mut data: &[u8]) -> std::io::Result<usize> {
        let n = data.len();
        // Chunks of exactly CHUNK bytes: the buffer never grows past its capacity.
        while self.buf.len() + data.len() >= CHUNK {
            let take = CHUNK - self.buf.len();
            self.buf.extend_from_slice(&data[..take]);
            data = &data[take..];
            self.flush()?;
        }
        self.buf.extend_from_slice(data);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let chunk = Bytes::from(std::mem::replace(&mut self.buf, Vec::with_capacity(CHUNK)));
        self.tx
            .blocking_send(Ok(chunk))
            .map_err(|_| std::io::Error::new(std::io::ErrorKind::BrokenPipe, "client gone"))
    }
}

/// A response body: whole, or chunks from a blocking writer.
pub(crate) enum RespBody {
    Full(Option<Bytes>),
    /// The first chunk (already received), then the rest.
    Chan(Option<Bytes>, mpsc::Receiver<Result<Bytes, HttpError>>),
    /// The first piece (already read), then the rest, each read when hyper asks for it.
    Pull(Option<Bytes>, PullState),
}

/// A piece read on the blocking pool (a read of the store may wait on the disk; the worker
/// serves other connections meanwhile), with the pieces back when there may be more.
type Piece = (Option<svelto_repos::Result<Vec<u8>>>, Option<Pieces>);

async fn next_piece(mut pieces: Pieces) -> Piece {
    tokio::task::spawn_blocking(move || {
        let next = pieces.next();
        let more = next.is_some().then_some(pieces);
        (next, more)
    })
    .await
    .unwrap_or_else(|_| {
        let failed =
            svelto_repos::ReposError::Internal("reading the file's next piece failed".into());
        (Some(Err(failed)), None)
    })
}

/// Where a [`RespBody::Pull`] is: waiting for hyper to ask, reading a piece, or done.
pub(crate) enum PullState {
    Idle(Pieces),
    Reading(Pin<Box<dyn Future<Output = Piece>>>),
    Done,
}

impl PullState {
    fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<Vec<u8>, HttpError>>> {
        loop {
            match self {
                PullState::Done => return Poll::Ready(None),
                PullState::Idle(_) => {
                    if let PullState::Idle(pieces) = std::mem::replace(self, PullState::Done) {
                        *self = PullState::Reading(Box::pin(next_piece(pieces)));
                    }
                }
                PullState::Reading(f) => {
                    let (next, more) = std::task::ready!(f.as_mut().poll(cx));
                    *self = more.map_or(PullState::Done, PullState::Idle);
                    return Poll::Ready(next.map(|r| r.map_err(HttpError::from)));
                }
            }
        }
    }
}
