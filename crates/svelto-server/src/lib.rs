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
pub use svelto_host::{budget, Host, HostConfig};

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use svelto_host::Protocol;

/// What only svn:// is configured with (the rest is the host's: [`HostConfig`]).
#[derive(Debug, Clone)]
pub struct Config {
    /// `--max-response-size` in bytes: a command whose response grows past it ends the
    /// connection (0: no limit, svnserve's default).
    pub max_response: u64,
    /// `--virtual-host`: repositories live under `ROOT/HOST[:PORT]/` for the host part of
    /// the URL the client used.
    pub virtual_host: bool,
    /// Tunnel mode (`-t`): the user EXTERNAL authenticates as (`--tunnel-user`, else the
    /// account the server runs under). `None` outside tunnel mode: no EXTERNAL.
    pub tunnel_user: Option<String>,
    /// This machine's name, for CRAM-MD5 challenges.
    pub hostname: String,
    /// `-X`: serve one connection, then return.
    pub listen_once: bool,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            max_response: 0,
            virtual_host: false,
            tunnel_user: None,
            hostname: "localhost".into(),
            listen_once: false,
        }
    }
}

/// What every svn:// connection shares: the host, and what only svn:// counts.
pub struct Shared {
    pub host: Arc<Host>,
    pub config: Config,
    active: AtomicUsize,
    next_id: AtomicUsize,
    /// Threads telling clients the server is busy (bounded: a flood is just dropped).
    refusing: AtomicUsize,
}

impl Shared {
    pub fn new(host: Arc<Host>, config: Config) -> Arc<Shared> {
        host.metrics.register(Protocol::Svn, command_names());
        host.metrics.register(Protocol::Svn, [svelto_host::OTHER]);
        Arc::new(Shared {
            host,
            config,
            active: AtomicUsize::new(0),
            next_id: AtomicUsize::new(1),
            refusing: AtomicUsize::new(0),
        })
    }

    pub fn is_shutting_down(&self) -> bool {
        self.host.is_shutting_down()
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
        let max = self.host.config.max_request;
        svelto_wire::Limits {
            max_request: max,
            max_decoded: max.saturating_mul(2).max(base.max_decoded),
            ..base
        }
    }
}

/// Serves svn:// on `listener` until a shutdown (or, with `Config::listen_once`, one
/// connection): the same arguments as `svelto_http::spawn`, the host and this protocol's
/// options.
pub fn run(
    host: Arc<Host>,
    listener: std::net::TcpListener,
    config: Config,
) -> std::io::Result<Arc<Shared>> {
    let once = config.listen_once;
    let shared = Shared::new(host, config);
    run_listener(shared.clone(), listener, once)?;
    Ok(shared)
}
