//! The host below both front ends: what `svelto serve` shares between svn:// and
//! http(s):// so that every server-wide rule lives once.
//!
//! Owns: the serve configuration both protocols read ([`HostConfig`]), the repositories
//! kept open (`service::Repos`: one handle, cache and writer per repository, whichever
//! protocol asked), the shutdown and the writes it waits for (`svelto_core::Drain`), the
//! memory budget both charge (`svelto_core::budget`), and the record of one answered
//! request ([`Request`]) that the request log ([`log`]) and the metrics ([`metrics`]) read.
//! Must not: speak a protocol (svelto-server and svelto-http decode and encode), decide a
//! Subversion rule (svelto-repos' `service` does).
//!
//! Both front ends take the same arguments: `svelto_server::run(host, listener, ...)` and
//! `svelto_http::spawn(host, listener, ...)` with their own protocol's options.

pub mod admission;
pub mod log;
pub mod metrics;

pub use admission::{find_repository, Admission};
pub use log::{json_string, LogFormat, Logger};
pub use metrics::{ErrorKind, Metrics, Protocol, OTHER};
pub use svelto_core::budget;

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::Duration;
use svelto_core::Env;
use svelto_fs::Backend;
use svelto_repos::service::Repos;

/// What both front ends are configured with (svnserve's flags that are not one
/// protocol's).
#[derive(Debug, Clone)]
pub struct HostConfig {
    /// `-r ROOT`: URLs name repositories under this directory.
    pub root: PathBuf,
    /// `-R`: refuse every write, over every protocol.
    pub read_only: bool,
    /// `--max-request-size` in bytes (svnserve's default 16 MiB): the largest svn://
    /// request, the largest HTTP request body.
    pub max_request: usize,
    /// A connection that sends nothing for this long while the server waits is closed.
    pub idle_timeout: Duration,
    /// Connections served at once (`--max-connections`), per protocol; the next client is
    /// told the server is busy.
    pub max_connections: usize,
    /// On shutdown, how long running writes (commits, revprop changes, locks) may take to
    /// finish.
    pub shutdown_grace: Duration,
    /// Memory for a repository's caches (reconstructed texts, directories, node-revisions,
    /// revision metadata), shared by every connection to it. 896 MiB, of which 72% texts:
    /// a checkout of a 25,000-file trunk (about 500 MB of text) then comes from memory; at
    /// 128 MiB the same export cost 2.3x the server CPU (bench/, medium history). svnserve's
    /// best configuration gives its cache a gigabyte (`-M 1024`); with its other memory
    /// that is about the resident size Svelto keeps under.
    pub cache_bytes: usize,
    /// `--config-file`: this svnserve.conf for every repository instead of each one's
    /// `conf/svnserve.conf` (relative paths in it resolve against its directory).
    pub config_file: Option<PathBuf>,
    /// `--memory-budget`: bytes all connections together may buffer for their clients
    /// (requests being read and decoded, update reports, HTTP request bodies) beyond a
    /// small free share each ([`budget::FREE_PER_CONNECTION`]); a request that would go
    /// over it is refused.
    pub memory_budget: usize,
    /// Repositories kept open while idle (each holds a few descriptors and its caches);
    /// the least recently used idle one is closed past it. `svelto serve` derives it from
    /// the open files limit.
    pub max_open_repos: usize,
    /// Gives back to the system what the allocator keeps free: `svelto serve` sets it to
    /// mimalloc's forced collection (mimalloc keeps an ended thread's free pages until
    /// another thread reuses them: after 900 HTTP connections closed, 142 MB of RSS stayed
    /// held). Run by the host's janitor thread at most once per
    /// [`RELEASE_INTERVAL`] after connection or handler threads ended, not by each ending
    /// thread: per thread it cost a short svn:// session 0.75 ms of server CPU (madvise
    /// and the page faults of the next thread; bench/results/2026-11-29/issue33-ab.md).
    pub release_thread_memory: Option<fn()>,
}

impl HostConfig {
    pub fn new(root: PathBuf) -> HostConfig {
        HostConfig {
            root,
            read_only: false,
            max_request: 16 * 1024 * 1024,
            idle_timeout: Duration::from_secs(15 * 60),
            max_connections: 1000,
            shutdown_grace: Duration::from_secs(30),
            cache_bytes: 896 << 20,
            config_file: None,
            memory_budget: 1 << 30,
            max_open_repos: svelto_repos::service::DEFAULT_MAX_OPEN,
            release_thread_memory: None,
        }
    }
}

/// What every connection of every protocol shares.
pub struct Host {
    pub config: HostConfig,
    pub log: Logger,
    pub metrics: Metrics,
    /// The repositories opened so far (one shared handle and writer each).
    pub repos: Repos,
    /// The shutdown and the writes it waits for: no new connections are taken once it
    /// began, and it waits for running writes of either protocol.
    pub drain: Arc<svelto_core::Drain>,
    /// What connections buffer for their clients, bounded by `HostConfig::memory_budget`.
    pub budget: Arc<budget::MemoryBudget>,
    /// Gives memory back after threads ended ([`HostConfig::release_thread_memory`]).
    janitor: Arc<Janitor>,
}

impl Host {
    /// The host of repositories opened by `backend` (the composition root's choice).
    /// The host of `config`'s repositories, opened by `backend`, whose users take the time
    /// and fresh names from `env` (the composition root's: the system's).
    pub fn new(
        config: HostConfig,
        log: Logger,
        backend: Arc<dyn Backend>,
        env: Arc<dyn Env>,
    ) -> Arc<Host> {
        Arc::new(Host {
            repos: Repos::new(backend, config.cache_bytes, config.max_open_repos, env),
            budget: budget::MemoryBudget::new(config.memory_budget),
            config,
            log,
            metrics: Metrics::default(),
            drain: Arc::new(svelto_core::Drain::default()),
            janitor: Arc::default(),
        })
    }

    /// A connection's or handler's thread ended: what the allocator kept for it is given
    /// back within [`RELEASE_INTERVAL`] (by the janitor thread, started on first use),
    /// once for all the threads that ended meanwhile.
    pub fn thread_ended(&self) {
        if let Some(release) = self.config.release_thread_memory {
            self.janitor.thread_ended(release);
        }
    }

    /// How many times the janitor gave memory back so far.
    pub fn memory_releases(&self) -> u64 {
        self.janitor.releases.load(Ordering::Relaxed)
    }

    /// The metrics' text exposition, with the storage caches' counters.
    pub fn render_metrics(&self) -> String {
        self.metrics.render_with(&self.repos.cache_stats())
    }

    /// Starts a graceful shutdown: the listeners take no new connection; running writes
    /// are waited for by [`Host::wait_for_writes`].
    pub fn begin_shutdown(&self) {
        self.drain.begin_shutdown();
    }

    pub fn is_shutting_down(&self) -> bool {
        self.drain.is_shutting_down()
    }

    /// Waits until no write runs (over either protocol), at most
    /// `HostConfig::shutdown_grace`. Returns the number still running when it gave up (0:
    /// all finished).
    pub fn wait_for_writes(&self) -> usize {
        self.drain.wait(self.config.shutdown_grace)
    }

    /// Writes running now (over either protocol).
    pub fn writes_in_flight(&self) -> usize {
        self.drain.writes()
    }

    /// Held by a connection's thread while it serves: when it is dropped (the thread
    /// ends, also by a panic's unwinding), what the thread's allocations kept is given
    /// back ([`HostConfig::release_thread_memory`]).
    pub fn connection_thread(&self) -> ConnectionThread<'_> {
        ConnectionThread(self)
    }

    /// An answered request, into the request log and the metrics: the one place both
    /// protocols' requests are counted and written.
    pub fn record(&self, r: &Request<'_>) {
        let failed = r.failed();
        self.metrics
            .command(r.protocol, r.command, r.duration, failed);
        self.metrics.bytes(r.protocol, r.bytes_in, r.bytes_out);
        if r.committed {
            self.metrics.commit(r.protocol);
        }
        if let Some(kind) = r.error_kind() {
            self.metrics.error(r.protocol, kind);
        }
        // The challenge's 401 is written as the ordinary request it is: no ERR line.
        let quiet;
        let logged = if r.challenge() {
            quiet = Request {
                error: &[],
                ..r.clone()
            };
            &quiet
        } else {
            r
        };
        match &logged.http {
            None => self.log.request(logged),
            Some(h) => self.log.http(logged, h),
        }
    }
}

/// See [`Host::connection_thread`].
pub struct ConnectionThread<'a>(&'a Host);

impl Drop for ConnectionThread<'_> {
    fn drop(&mut self) {
        self.0.thread_ended();
    }
}

/// The longest a thread's ending waits for its memory to be given back, and the shortest
/// time between two releases: a second of 40 short svn:// sessions costs one collection.
pub const RELEASE_INTERVAL: Duration = Duration::from_secs(1);

/// The thread that gives memory back for the threads that ended: woken by the first ending
/// after a release, it waits [`RELEASE_INTERVAL`] (more endings only mark it pending), then
/// runs the release once.
#[derive(Default)]
struct Janitor {
    pending: Mutex<bool>,
    wake: Condvar,
    started: OnceLock<()>,
    releases: AtomicU64,
}

impl Janitor {
    fn thread_ended(self: &Arc<Self>, release: fn()) {
        self.started.get_or_init(|| {
            let me = Arc::clone(self);
            // No thread (out of threads or memory): the memory stays kept, as before a
            // release existed; nothing else depends on it.
            let _ = std::thread::Builder::new()
                .name("svelto-janitor".into())
                .spawn(move || me.run(release));
        });
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        if !*pending {
            *pending = true;
            self.wake.notify_one();
        }
    }

    fn run(&self, release: fn()) {
        loop {
            let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
            while !*pending {
                pending = self.wake.wait(pending).unwrap_or_else(|e| e.into_inner());
            }
            drop(pending);
            std::thread::sleep(RELEASE_INTERVAL);
            *self.pending.lock().unwrap_or_else(|e| e.into_inner()) = false;
            release();
            self.releases.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// One answered request of either protocol, as the log and the metrics read it.
#[derive(Clone)]
pub struct Request<'a> {
    pub protocol: Protocol,
    /// The client's address (without the port), or `-`.
    pub client: &'a str,
    /// The user the request was admitted as (None: anonymous).
    pub user: Option<&'a str>,
    /// The repository's name under the root (as the URL spells it), or `-`.
    pub repos: &'a str,
    /// What the metrics count it under: the front end's name for it, from a finite set
    /// (the svn:// command, `http-get`, `http-update-report` ...; [`OTHER`]).
    pub command: &'static str,
    /// Subversion's operational-log action lines (svnserve's; mod_dav_svn's
    /// `SVN-ACTION`): usually one, none for a request neither logs.
    pub actions: &'a [String],
    pub duration: Duration,
    pub bytes_in: u64,
    pub bytes_out: u64,
    /// The error chain sent to the client: (code, message) per link.
    pub error: &'a [(u64, String)],
    /// Whether it ended the connection (a malformed or oversized request, a broken
    /// connection): its error is counted by the front end under the kind that ended it.
    pub fatal: bool,
    /// Whether it made a revision.
    pub committed: bool,
    /// What only an HTTP request has.
    pub http: Option<HttpRequest<'a>>,
}

/// The HTTP side of a [`Request`]: what Apache's access log shows.
#[derive(Clone)]
pub struct HttpRequest<'a> {
    pub method: &'a str,
    /// The path and query the client asked for.
    pub target: &'a str,
    /// `HTTP/1.1`.
    pub version: &'a str,
    pub status: u16,
    pub referer: Option<&'a str>,
    pub user_agent: Option<&'a str>,
}

impl Request<'_> {
    /// The 401 every HTTP client gets before it sends its credentials (a wrong password
    /// has a log line of its own): an ordinary request, not an error.
    fn challenge(&self) -> bool {
        self.http.as_ref().is_some_and(|h| h.status == 401)
    }

    /// Whether the client was answered with an error.
    pub fn failed(&self) -> bool {
        match &self.http {
            Some(h) => h.status >= 400 && h.status != 401,
            None => !self.error.is_empty() || self.fatal,
        }
    }

    /// The kind of failure the errors counter counts, if any.
    fn error_kind(&self) -> Option<ErrorKind> {
        if self.fatal || self.challenge() {
            return None;
        }
        if self.http.as_ref().is_some_and(|h| h.status == 403) {
            return Some(ErrorKind::Auth);
        }
        let code = self.error.first().map(|(c, _)| *c);
        match (&self.http, code) {
            (None, Some(code)) => Some(ErrorKind::of_code(code)),
            (Some(h), Some(code)) if code != 0 || h.status >= 400 => Some(ErrorKind::of_code(code)),
            _ => None,
        }
    }

    /// The request's log lines as svnserve writes them: its actions, or its error chain.
    pub fn is_logged(&self) -> bool {
        !(self.actions.is_empty() && self.error.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::sync::Mutex;

    #[derive(Clone, Default)]
    struct Buf(Arc<Mutex<Vec<u8>>>);
    impl Write for Buf {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().expect("lock").extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn http(status: u16, error: &[(u64, String)], host: &Host) {
        host.record(&Request {
            protocol: Protocol::Http,
            client: "10.0.0.7",
            user: None,
            repos: "repo",
            command: "http-propfind",
            actions: &[],
            duration: Duration::from_millis(1),
            bytes_in: 0,
            bytes_out: 10,
            error,
            fatal: false,
            committed: false,
            http: Some(HttpRequest {
                method: "PROPFIND",
                target: "/repo",
                version: "HTTP/1.1",
                status,
                referer: None,
                user_agent: None,
            }),
        });
    }

    #[test]
    fn a_challenge_is_an_ordinary_request_and_a_refusal_an_auth_error() {
        let buf = Buf::default();
        let dir = tempfile::tempdir().expect("tempdir");
        let host = Host::new(
            HostConfig::new(dir.path().to_path_buf()),
            Logger::new(Box::new(buf.clone()), Arc::new(svelto_core::SystemEnv)),
            svelto_testkit::memfs::local_backend(),
            Arc::new(svelto_core::SystemEnv),
        );
        let why = [(0u64, "This server could not verify".to_string())];
        http(401, &why, &host);
        assert_eq!(buf.0.lock().expect("lock").len(), 0, "no ERR line");
        let text = host.metrics.render();
        assert!(
            text.contains("svelto_requests_total{protocol=\"http\",command=\"http-propfind\"} 1"),
            "{text}"
        );
        assert!(
            !text.contains("svelto_request_errors_total{protocol=\"http\""),
            "{text}"
        );
        http(403, &why, &host);
        let logged = String::from_utf8(buf.0.lock().expect("lock").clone()).expect("utf-8");
        assert!(
            logged.contains(" repo ERR - 0 0 This server could not verify"),
            "{logged}"
        );
        let text = host.metrics.render();
        assert!(
            text.contains("svelto_errors_total{protocol=\"http\",kind=\"auth\"} 1"),
            "{text}"
        );
        assert!(
            text.contains(
                "svelto_request_errors_total{protocol=\"http\",command=\"http-propfind\"} 1"
            ),
            "{text}"
        );
    }
}

#[cfg(test)]
mod janitor_tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::Instant;

    static RELEASED: AtomicU64 = AtomicU64::new(0);

    fn count_release() {
        RELEASED.fetch_add(1, Ordering::SeqCst);
    }

    /// Forty connection threads ending within a moment cost one release, run within about
    /// a second of the first ending; a later ending runs another.
    #[test]
    fn endings_in_a_burst_share_one_release_that_comes_soon() {
        let mut config = HostConfig::new(std::env::temp_dir());
        config.release_thread_memory = Some(count_release);
        let host = Host::new(
            config,
            Logger::disabled(),
            svelto_testkit::memfs::local_backend(),
            Arc::new(svelto_core::SystemEnv),
        );
        let start = Instant::now();
        std::thread::scope(|s| {
            for _ in 0..40 {
                s.spawn(|| drop(host.connection_thread()));
            }
        });
        if start.elapsed() < RELEASE_INTERVAL / 2 {
            assert_eq!(host.memory_releases(), 0, "released at an ending");
        }
        while host.memory_releases() == 0 {
            assert!(
                start.elapsed() < RELEASE_INTERVAL * 5,
                "no release after 5 s"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(start.elapsed() >= RELEASE_INTERVAL);
        std::thread::sleep(RELEASE_INTERVAL / 2);
        assert_eq!(host.memory_releases(), 1);
        assert_eq!(RELEASED.load(Ordering::SeqCst), 1);
        drop(host.connection_thread());
        while host.memory_releases() == 1 {
            assert!(start.elapsed() < RELEASE_INTERVAL * 10, "no second release");
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(RELEASED.load(Ordering::SeqCst), 2);
    }
}
