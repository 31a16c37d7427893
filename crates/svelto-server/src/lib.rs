//! The svn:// server (`docs/formats/svn-protocol.md`): listener, sessions, limits; maps wire
//! commands onto svelto-repos.
//!
//! Owns: accepting connections, one thread per connection (storage reads are blocking
//! `pread`s, and a thread per client is what svnserve `-T` does; connections are bounded by
//! `Config::max_connections`), the handshake, the per-command auth slot, command dispatch,
//! the wire editor for server drives, and mapping errors to Subversion's codes.
//! Must not: know the store's on-disk format, or parse configuration files (svelto-repos'
//! `conf` reads svnserve.conf and passwd; the server asks it, per connection).
//!
//! Repositories are opened once and shared by every connection (a cheap handle
//! onto shared caches), so the first checkout warms what the next one reads.

mod actions;
mod auth;
/// The memory budget both front ends charge (in `svelto-core`, shared with HTTP).
pub use svelto_core::budget;
mod cmd;
mod command;
mod commit;
mod conn;
mod connection;
mod editor;
mod error;
mod handshake;
mod history;
mod items;
mod listener;
mod locks;
mod log;
pub mod metrics;
mod node;
mod replay;
mod report;
mod revprops;
mod session;
mod url;

pub use auth::cram_md5_digest;

/// Reads one svn:// command item (`( NAME ( PARAMS ... ) )`) as a connection reads it
/// before running it: the command's name and parameter tuple, then the parameters decoded
/// into the command's typed request, which is dropped. Nothing is run, no repository is
/// needed. Err says why the item is no command the server would run (not a command tuple,
/// an unknown name, parameters the command refuses). For fuzzing the command parsers
/// (`fuzz/`: target `command`).
pub fn parse_command(item: &svelto_wire::Item) -> Result<&'static str, String> {
    let mut t = svelto_wire::TupleReader::from_item(item).map_err(|e| e.to_string())?;
    let name = t.word().map_err(|e| e.to_string())?;
    let params = t.list().map_err(|e| e.to_string())?;
    let unknown = || format!("{:?}", cmd::unknown(name));
    let (_, spec) = cmd::lookup(name).ok_or_else(unknown)?;
    match cmd::parse_only(name, params) {
        Some(Ok(())) => Ok(spec.name),
        Some(Err(e)) => Err(format!("{e:?}")),
        None => Err(unknown()),
    }
}

/// The names of the svn:// commands the server runs (outside a commit's or report's own
/// command set), in its table's order.
pub fn command_names() -> impl Iterator<Item = &'static str> {
    cmd::COMMANDS.iter().map(|c| c.name)
}
pub use conn::{Conn, ConnError};
pub use error::{code, CmdError};
pub use listener::{run_listener, serve_streams, serve_tcp, wake_listener};
pub use log::{HttpRequest, LogFormat, Logger, Request};
pub use metrics::{ErrorKind, Metrics};

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use svelto_repos::service::Repos;

/// How the server behaves; svnserve's flags map onto these.
#[derive(Debug, Clone)]
pub struct Config {
    /// `-r ROOT`: URLs name repositories under this directory.
    pub root: PathBuf,
    /// `-R`: refuse every write.
    pub read_only: bool,
    /// `--max-request-size` in bytes (0 = no limit is not offered; svnserve's default 16 MiB).
    pub max_request: usize,
    /// A connection that sends nothing for this long while the server waits is closed.
    pub idle_timeout: Duration,
    /// Connections served at once (`--max-connections`); the next client is told the
    /// server is busy and disconnected.
    pub max_connections: usize,
    /// `--max-response-size` in bytes: a command whose response grows past it ends the
    /// connection (0: no limit, svnserve's default).
    pub max_response: u64,
    /// `--virtual-host`: repositories live under `ROOT/HOST[:PORT]/` for the host part of
    /// the URL the client used.
    pub virtual_host: bool,
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
    /// Tunnel mode (`-t`): the user EXTERNAL authenticates as (`--tunnel-user`, else the
    /// account the server runs under). `None` outside tunnel mode: no EXTERNAL.
    pub tunnel_user: Option<String>,
    /// This machine's name, for CRAM-MD5 challenges.
    pub hostname: String,
    /// `--memory-budget`: bytes all connections together may buffer for their clients
    /// (requests being read and decoded, update reports) beyond a small free share each
    /// ([`budget::FREE_PER_CONNECTION`]); a request that would go over it is refused.
    pub memory_budget: usize,
    /// Repositories kept open while idle (each holds a few descriptors and its caches);
    /// the least recently used idle one is closed past it. `svelto serve` derives it from
    /// the open files limit.
    pub max_open_repos: usize,
}

impl Config {
    pub fn new(root: PathBuf) -> Config {
        Config {
            root,
            read_only: false,
            max_request: 16 * 1024 * 1024,
            idle_timeout: Duration::from_secs(15 * 60),
            max_connections: 1000,
            max_response: 0,
            virtual_host: false,
            shutdown_grace: Duration::from_secs(30),
            cache_bytes: 896 << 20,
            config_file: None,
            tunnel_user: None,
            hostname: "localhost".into(),
            memory_budget: 1 << 30,
            max_open_repos: svelto_repos::service::DEFAULT_MAX_OPEN,
        }
    }
}

/// What every connection shares.
pub struct Shared {
    pub config: Config,
    pub log: Logger,
    pub metrics: Arc<Metrics>,
    /// The repositories opened so far (one shared handle and writer each).
    pub repos: Repos,
    active: AtomicUsize,
    next_id: AtomicUsize,
    /// The shutdown and the writes it waits for, shared with the HTTP front end: no new
    /// connections are taken once it began, and it waits for running write commands.
    pub drain: Arc<svelto_core::Drain>,
    /// Threads telling clients the server is busy (bounded: a flood is just dropped).
    refusing: AtomicUsize,
    /// What connections buffer for their clients, bounded by `Config::memory_budget`.
    pub budget: Arc<budget::MemoryBudget>,
}

impl Shared {
    pub fn new(config: Config, log: Logger) -> Arc<Shared> {
        let repos = Repos::new(config.cache_bytes, config.max_open_repos);
        let budget = budget::MemoryBudget::new(config.memory_budget);
        Arc::new(Shared {
            budget,
            config,
            log,
            metrics: Arc::new(Metrics::default()),
            repos,
            active: AtomicUsize::new(0),
            next_id: AtomicUsize::new(1),
            drain: Arc::new(svelto_core::Drain::default()),
            refusing: AtomicUsize::new(0),
        })
    }

    /// Starts a graceful shutdown: the listener takes no new connection (wake it with
    /// [`wake_listener`]); running writes are waited for by [`Shared::drain`].
    pub fn begin_shutdown(&self) {
        self.drain.begin_shutdown();
    }

    pub fn is_shutting_down(&self) -> bool {
        self.drain.is_shutting_down()
    }

    /// Waits until no write runs (over either protocol), at most
    /// `Config::shutdown_grace`. Returns the number still running when it gave up (0: all
    /// finished).
    pub fn drain(&self) -> usize {
        self.drain.wait(self.config.shutdown_grace)
    }

    /// Writes running now (over either protocol).
    pub fn writes_in_flight(&self) -> usize {
        self.drain.writes()
    }

    /// Connections being served now.
    pub fn active_connections(&self) -> usize {
        self.active.load(Ordering::Acquire)
    }

    /// The decoder's bounds: `--max-request-size`, and a decoded tree of at most twice that
    /// (32 MiB at the least): a request of tiny items is refused rather than decoded into
    /// 16 times its size.
    fn limits(&self) -> svelto_wire::Limits {
        let base = svelto_wire::Limits::default();
        svelto_wire::Limits {
            max_request: self.config.max_request,
            max_decoded: self
                .config
                .max_request
                .saturating_mul(2)
                .max(base.max_decoded),
            ..base
        }
    }
}
