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
//! Repositories are opened once and shared by every connection (`Repo` is a cheap handle
//! onto shared caches), so the first checkout warms what the next one reads.

mod auth;
mod authz;
mod commands;
mod commit;
mod conn;
mod editor;
mod error;
mod history;
mod locks;
mod log;
mod replay;
mod report;
mod revprops;
mod session;
mod url;

pub use auth::cram_md5_digest;
pub use conn::{Conn, ConnError};
pub use error::{code, CmdError};
pub use log::Logger;

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use svelto_store::Repo;

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
    /// Connections served at once; more wait in the listen backlog.
    pub max_connections: usize,
    /// Memory for reconstructed file texts, shared by every connection to a repository.
    /// 1 GiB: a checkout of a 21,000-file trunk (440 MB of text) then comes from memory;
    /// at 128 MiB the same export cost 2.3x the server CPU (issue 3's note). svnserve's
    /// best configuration gives its cache the same gigabyte (`-M 1024`).
    pub text_cache_bytes: usize,
    /// `--config-file`: this svnserve.conf for every repository instead of each one's
    /// `conf/svnserve.conf` (relative paths in it resolve against its directory).
    pub config_file: Option<PathBuf>,
    /// Tunnel mode (`-t`): the user EXTERNAL authenticates as (`--tunnel-user`, else the
    /// account the server runs under). `None` outside tunnel mode: no EXTERNAL.
    pub tunnel_user: Option<String>,
    /// This machine's name, for CRAM-MD5 challenges.
    pub hostname: String,
}

impl Config {
    pub fn new(root: PathBuf) -> Config {
        Config {
            root,
            read_only: false,
            max_request: 16 * 1024 * 1024,
            idle_timeout: Duration::from_secs(15 * 60),
            max_connections: 1024,
            text_cache_bytes: 1 << 30,
            config_file: None,
            tunnel_user: None,
            hostname: "localhost".into(),
        }
    }
}

/// What every connection shares.
pub struct Shared {
    pub config: Config,
    pub log: Logger,
    repos: Mutex<HashMap<PathBuf, (Repo, Arc<WriterSlot>)>>,
    active: AtomicUsize,
    next_id: AtomicUsize,
}

impl Shared {
    pub fn new(config: Config, log: Logger) -> Arc<Shared> {
        Arc::new(Shared {
            config,
            log,
            repos: Mutex::new(HashMap::new()),
            active: AtomicUsize::new(0),
            next_id: AtomicUsize::new(1),
        })
    }

    /// Whether `dir` holds a Svelto repository.
    fn is_repo(dir: &Path) -> bool {
        dir.join("db").join("format").is_file()
    }

    /// The shared handle of the repository in `dir` and its writer slot, opened on first
    /// use.
    fn repo(&self, dir: &Path) -> svelto_store::Result<(Repo, Arc<WriterSlot>)> {
        let mut map = self.repos.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((r, w)) = map.get(dir) {
            return Ok((r.clone(), w.clone()));
        }
        let r = Repo::open(dir)?;
        r.set_text_cache_limit(self.config.text_cache_bytes);
        let w = Arc::new(WriterSlot {
            path: dir.to_path_buf(),
            writer: Mutex::new(None),
        });
        map.insert(dir.to_path_buf(), (r.clone(), w.clone()));
        Ok((r, w))
    }

    fn limits(&self) -> svelto_wire::Limits {
        svelto_wire::Limits {
            max_request: self.config.max_request,
            ..svelto_wire::Limits::default()
        }
    }
}

/// The repository's writer, kept open between commits (opening one reads the dedup index)
/// but holding the repository's write lock only while a commit runs, so that `svelto
/// admin` and other servers can write between commits.
pub struct WriterSlot {
    path: PathBuf,
    writer: Mutex<Option<svelto_store::Writer>>,
}

impl WriterSlot {
    /// Runs `f` with the writer, holding the write lock: commits of one repository are
    /// applied one at a time.
    pub fn with<T, E: From<svelto_store::StoreError>>(
        &self,
        f: impl FnOnce(&mut svelto_store::Writer) -> Result<T, E>,
    ) -> Result<T, E> {
        let mut slot = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        let fresh = match slot.as_mut() {
            Some(w) => w.relock()?,
            None => false,
        };
        if !fresh {
            *slot = None;
            *slot = Some(svelto_store::Writer::open(&self.path)?);
        }
        let w = slot.as_mut().expect("opened above");
        let result = f(w);
        // Anything left unpublished (a failure after the commit point) is dropped, and a
        // writer that cannot unlock is not kept.
        let clean = (w.youngest() == w.published() || w.discard_unpublished().is_ok())
            && w.unlock().is_ok();
        if !clean {
            *slot = None;
        }
        result
    }
}

/// Serves one connection over any pair of byte streams (a socket, or stdin/stdout in
/// tunnel mode) until the client leaves or the connection fails.
///
/// `loopback` says the peer is on this machine: deltas then go uncompressed (svndiff0),
/// since compressing costs more CPU than the bytes it saves cost to copy. Remote peers
/// (and tunnels, which usually cross a network) get svndiff2 (LZ4) when they accept it.
pub fn serve_streams<R: Read, W: Write>(
    shared: &Shared,
    reader: R,
    writer: W,
    peer: &str,
    loopback: bool,
) {
    let id = shared.next_id.fetch_add(1, Ordering::Relaxed);
    let mut conn = Conn::new(reader, writer, shared.limits());
    session::run(shared, &mut conn, id, peer, loopback);
}

/// Serves one TCP connection (idle timeout applied).
pub fn serve_tcp(shared: &Shared, stream: TcpStream) {
    let addr = stream.peer_addr().ok();
    let peer = addr.map_or_else(|| "?".to_string(), |a| a.to_string());
    let loopback = addr.is_some_and(|a| a.ip().is_loopback());
    let _ = stream.set_read_timeout(Some(shared.config.idle_timeout));
    let _ = stream.set_write_timeout(Some(shared.config.idle_timeout));
    let _ = stream.set_nodelay(true);
    let reader = match stream.try_clone() {
        Ok(r) => r,
        Err(e) => {
            shared
                .log
                .line(&format!("{peer}: cannot use the socket: {e}"));
            return;
        }
    };
    serve_streams(shared, reader, stream, &peer, loopback);
}

/// Accepts connections forever (or one, with `once`), a thread per connection.
pub fn run_listener(shared: Arc<Shared>, listener: TcpListener, once: bool) -> std::io::Result<()> {
    for stream in listener.incoming() {
        let stream = match stream {
            Ok(s) => s,
            Err(e) => {
                shared.log.line(&format!("accept failed: {e}"));
                std::thread::sleep(Duration::from_millis(50));
                continue;
            }
        };
        if once {
            serve_tcp(&shared, stream);
            return Ok(());
        }
        while shared.active.load(Ordering::Acquire) >= shared.config.max_connections {
            std::thread::sleep(Duration::from_millis(5));
        }
        shared.active.fetch_add(1, Ordering::AcqRel);
        let sh = shared.clone();
        let spawned = std::thread::Builder::new()
            .name("svelto-conn".into())
            .stack_size(2 * 1024 * 1024)
            .spawn(move || {
                serve_tcp(&sh, stream);
                sh.active.fetch_sub(1, Ordering::AcqRel);
            });
        if let Err(e) = spawned {
            shared.active.fetch_sub(1, Ordering::AcqRel);
            shared
                .log
                .line(&format!("cannot start a connection thread: {e}"));
        }
    }
    Ok(())
}
