//! Accepting connections, as the small servers that are easy to read do it (mini-redis's
//! listener): a thread per connection under a bounded number of permits, each given back
//! by a guard when its connection ends for any reason (a panic included), and a shutdown
//! flag ([`Shared::begin_shutdown`]) that the accept loop and every connection's command
//! loop observe. A thread whose connection ended waits a little for the next one
//! ([`Idle`]), as svnserve -T's pool does: a short session then costs no thread start and
//! no fresh allocator heap. The connection itself (handshake, then commands) is
//! `connection.rs`.

use crate::{code, connection, Conn, Shared};
use std::collections::VecDeque;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};
use svelto_host::{ErrorKind, Protocol};

/// Serves one connection over any pair of byte streams (a socket, or stdin/stdout in
/// tunnel mode) until the client leaves or the connection fails. True when it ended by
/// refusing what the client sent (a malformed or oversized request).
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
) -> bool {
    let id = shared.next_id.fetch_add(1, Ordering::Relaxed);
    let mut conn = Conn::new(reader, writer, shared.limits());
    conn.set_max_response(shared.config.max_response);
    conn.set_budget(shared.host.budget.clone());
    // Counted open until dropped, also when the connection's thread panics.
    let _open = shared.host.metrics.connection_opened(Protocol::Svn);
    connection::run(shared, &mut conn, id, peer, loopback)
}

/// What is read and dropped, at most, after a refused request.
const DRAIN_BYTES: usize = 64 << 20;
/// How long that may take.
const DRAIN_TIME: Duration = Duration::from_secs(5);

/// After a request was refused with an error, the client may still be sending the rest of
/// it (the stock client writes a whole request before it reads): closing with its bytes
/// unread would reset the connection and lose the error. The server's side is shut, then
/// what still comes is read and dropped, bounded in bytes and time.
fn drain_refused(stream: &TcpStream) {
    let _ = stream.shutdown(std::net::Shutdown::Write);
    let deadline = std::time::Instant::now() + DRAIN_TIME;
    let mut sink = vec![0u8; 64 * 1024];
    let mut drained = 0;
    while drained < DRAIN_BYTES {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() || stream.set_read_timeout(Some(left)).is_err() {
            return;
        }
        match (&*stream).read(&mut sink) {
            Ok(0) | Err(_) => return,
            Ok(n) => drained += n,
        }
    }
}

/// Serves one TCP connection (idle timeout applied).
pub fn serve_tcp(shared: &Shared, stream: TcpStream) {
    let _thread = shared.host.connection_thread();
    serve_socket(shared, stream);
}

/// [`serve_tcp`] on a thread that already holds its [`svelto_host::ConnectionThread`].
fn serve_socket(shared: &Shared, stream: TcpStream) {
    let addr = stream.peer_addr().ok();
    let peer = addr.map_or_else(|| "?".to_string(), |a| a.to_string());
    let loopback = addr.is_some_and(|a| a.ip().is_loopback());
    let _ = stream.set_read_timeout(Some(shared.host.config.idle_timeout));
    let _ = stream.set_write_timeout(Some(shared.host.config.idle_timeout));
    let _ = stream.set_nodelay(true);
    let reader = match stream.try_clone() {
        Ok(r) => r,
        Err(e) => {
            shared
                .host
                .log
                .line(&format!("{peer}: cannot use the socket: {e}"));
            return;
        }
    };
    let drain = stream.try_clone().ok();
    if serve_streams(shared, reader, stream, &peer, loopback) {
        if let Some(s) = drain {
            drain_refused(&s);
        }
    }
}

/// Wakes a listener blocked in `accept` (after [`Shared::begin_shutdown`]) by connecting
/// to it.
pub fn wake_listener(addr: std::net::SocketAddr) {
    let mut addr = addr;
    if addr.ip().is_unspecified() {
        let ip: std::net::IpAddr = if addr.is_ipv6() {
            std::net::Ipv6Addr::LOCALHOST.into()
        } else {
            std::net::Ipv4Addr::LOCALHOST.into()
        };
        addr.set_ip(ip);
    }
    let _ = TcpStream::connect_timeout(&addr, Duration::from_secs(1));
}

/// Refusals being sent at once, at most.
const MAX_REFUSING: usize = 64;

/// Tells a client over `--max-connections` that the server is busy, in place of the
/// greeting (the client prints the message), and closes the connection. The code is
/// `RA_SVN_CONNECTION_CLOSED` (the client skips `RA_SVN_CMD_ERR` links, so that code would
/// print as a malformed error list).
fn refuse_busy(shared: &Shared, mut stream: TcpStream) {
    shared.host.metrics.error(Protocol::Svn, ErrorKind::Busy);
    let _ = stream.set_write_timeout(Some(Duration::from_secs(5)));
    let msg = format!(
        "Server busy: it already serves {} connections (--max-connections); try again later",
        shared.host.config.max_connections
    );
    let item = svelto_wire::failure(&[svelto_wire::ErrorLink::new(
        u64::from(code::RA_SVN_CONNECTION_CLOSED),
        msg,
    )]);
    let _ = stream.write_all(&item.to_bytes());
    let _ = stream.flush();
    let _ = stream.shutdown(std::net::Shutdown::Write);
    // Let the client read the refusal before the socket goes away.
    let _ = stream.set_read_timeout(Some(Duration::from_millis(200)));
    let mut sink = [0u8; 256];
    let _ = stream.read(&mut sink);
}

/// Accepts connections (or one, with `once`), a thread per connection, until
/// [`Shared::begin_shutdown`] (then it returns once woken by [`wake_listener`]).
pub fn run_listener(shared: Arc<Shared>, listener: TcpListener, once: bool) -> std::io::Result<()> {
    let idle = Arc::new(Idle::default());
    for stream in listener.incoming() {
        if shared.is_shutting_down() {
            return Ok(());
        }
        let stream = match stream {
            Ok(s) => s,
            Err(e) => {
                shared.host.log.line(&format!("accept failed: {e}"));
                std::thread::sleep(Duration::from_millis(50));
                continue;
            }
        };
        if once {
            serve_tcp(&shared, stream);
            return Ok(());
        }
        let Some(permit) = Slot::Connection.take(&shared) else {
            let peer = stream
                .peer_addr()
                .map_or_else(|_| "?".to_string(), |a| a.to_string());
            shared.host.log.line(&format!(
                "{peer}: refused, {} connections already served (--max-connections)",
                shared.host.config.max_connections
            ));
            // Its own short-lived thread, so that a client that does not read cannot
            // hold up the accept loop; beyond 64 of those, the connection is just closed.
            let Some(refusal) = Slot::Refusal.take(&shared) else {
                shared.host.metrics.error(Protocol::Svn, ErrorKind::Busy);
                continue;
            };
            let _ = std::thread::Builder::new()
                .name("svelto-busy".into())
                .spawn(move || refuse_busy(refusal.owner(), stream));
            continue;
        };
        // The permit goes with the connection (and comes back when it ends, even by a
        // panic, or when no thread can start).
        let Some((permit, stream)) = idle.hand_over(permit, stream) else {
            continue;
        };
        let pool = Arc::clone(&idle);
        let spawned = std::thread::Builder::new()
            .name("svelto-conn".into())
            .stack_size(2 * 1024 * 1024)
            .spawn(move || pool.work(permit, stream));
        if let Err(e) = spawned {
            shared
                .host
                .log
                .line(&format!("cannot start a connection thread: {e}"));
        }
    }
    Ok(())
}

/// How many threads at most wait for a next connection once theirs ended.
const MAX_IDLE: usize = 8;
/// How long such a thread waits before it ends (and its memory goes back).
const IDLE_KEEP: Duration = Duration::from_secs(2);

/// Connection threads waiting for their next connection.
#[derive(Default)]
struct Idle {
    state: Mutex<IdleState>,
    wake: Condvar,
}

#[derive(Default)]
struct IdleState {
    /// Threads waiting now.
    waiting: usize,
    /// Connections handed over, not yet taken by a waiting thread.
    queued: VecDeque<(Permit, TcpStream)>,
}

impl Idle {
    /// Gives the connection to a waiting thread; back when none waits (start one).
    fn hand_over(&self, permit: Permit, stream: TcpStream) -> Option<(Permit, TcpStream)> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.waiting > state.queued.len() {
            state.queued.push_back((permit, stream));
            self.wake.notify_one();
            return None;
        }
        Some((permit, stream))
    }

    /// A connection thread's life: its first connection, then each one handed over while it
    /// waited, until none comes within [`IDLE_KEEP`], enough others wait, or the server
    /// shuts down.
    fn work(&self, permit: Permit, stream: TcpStream) {
        let shared = Arc::clone(permit.owner());
        // Held for the thread's whole life: its memory goes back when it ends.
        let _thread = shared.host.connection_thread();
        let mut next = Some((permit, stream));
        while let Some((permit, stream)) = next.take() {
            serve_socket(permit.owner(), stream);
            drop(permit);
            if shared.is_shutting_down() {
                return;
            }
            next = self.wait();
        }
    }

    /// The next connection handed over, or None when none came in time.
    fn wait(&self) -> Option<(Permit, TcpStream)> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.waiting >= MAX_IDLE {
            return None;
        }
        state.waiting += 1;
        let deadline = Instant::now() + IDLE_KEEP;
        let job = loop {
            if let Some(job) = state.queued.pop_front() {
                break Some(job);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break None;
            }
            state = self
                .wake
                .wait_timeout(state, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        };
        state.waiting -= 1;
        job
    }
}

/// Which bounded count a [`Permit`] holds a place in.
#[derive(Debug, Clone, Copy)]
enum Slot {
    /// Connections served (`--max-connections`).
    Connection,
    /// Threads telling clients the server is busy ([`MAX_REFUSING`]).
    Refusal,
}

/// A place in one of the server's bounded counts.
type Permit = svelto_core::Permit<Shared>;

impl Slot {
    /// A place, unless the count is at its bound.
    fn take(self, shared: &Arc<Shared>) -> Option<Permit> {
        match self {
            Slot::Connection => {
                Permit::take(shared, |s| &s.active, shared.host.config.max_connections)
            }
            Slot::Refusal => Permit::take(shared, |s| &s.refusing, MAX_REFUSING),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Config;
    use svelto_host::{Host, HostConfig, Logger};

    /// A client whose first read panics (as a bug in a command would).
    struct PanickingReader;

    impl Read for PanickingReader {
        fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
            panic!("a bug in the connection's code")
        }
    }

    #[test]
    fn a_panicking_connection_gives_back_its_slot_and_gauge() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let mut config = HostConfig::new(dir.path().to_path_buf());
        config.max_connections = 1;
        let shared = Shared::new(
            Host::new(
                config,
                Logger::disabled(),
                svelto_testkit::memfs::local_backend(),
                Arc::new(svelto_core::SystemEnv),
            ),
            Config::default(),
        );
        let permit = Slot::Connection.take(&shared).expect("a free slot");
        assert!(Slot::Connection.take(&shared).is_none(), "one slot only");
        // What a connection thread of `run_listener` does, with a client that panics it.
        let joined = std::thread::spawn(move || {
            serve_streams(permit.owner(), PanickingReader, Vec::new(), "test", true)
        })
        .join();
        assert!(joined.is_err(), "the connection thread panicked");
        assert_eq!(shared.active_connections(), 0);
        assert_eq!(shared.host.metrics.open_connections(Protocol::Svn), 0);
        assert_eq!(shared.host.metrics.connections_total(Protocol::Svn), 1);
        assert!(
            Slot::Connection.take(&shared).is_some(),
            "the slot is free again"
        );
    }

    /// A server's shared state over an empty root (kept while the directory lives).
    fn served() -> (tempfile::TempDir, Arc<Shared>) {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let host = Host::new(
            HostConfig::new(dir.path().to_path_buf()),
            Logger::disabled(),
            svelto_testkit::memfs::local_backend(),
            Arc::new(svelto_core::SystemEnv),
        );
        (dir, Shared::new(host, Config::default()))
    }

    #[test]
    fn refusals_are_bounded() {
        let (_dir, shared) = served();
        let held: Vec<Permit> = (0..MAX_REFUSING)
            .map(|_| Slot::Refusal.take(&shared).expect("below the bound"))
            .collect();
        assert!(Slot::Refusal.take(&shared).is_none());
        drop(held);
        assert_eq!(shared.refusing.load(Ordering::Acquire), 0);
    }

    /// A connection whose client connects and leaves at once (after the greeting).
    fn short_connection(listener: &TcpListener) -> TcpStream {
        let client = TcpStream::connect(listener.local_addr().expect("address")).expect("connect");
        drop(client);
        listener.accept().expect("accept").0
    }

    fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !done() {
            assert!(Instant::now() < deadline, "waited 10 s for {what}");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    #[test]
    fn a_connection_thread_serves_the_next_connection_then_ends_when_none_comes() {
        let (_dir, shared) = served();
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let idle = Arc::new(Idle::default());
        let waiting = |idle: &Idle| idle.state.lock().expect("state").waiting;

        let permit = Slot::Connection.take(&shared).expect("a slot");
        let (permit, stream) = idle
            .hand_over(permit, short_connection(&listener))
            .expect("no thread waits yet: start one");
        let pool = Arc::clone(&idle);
        let worker = std::thread::spawn(move || pool.work(permit, stream));
        wait_until("the thread to wait for a next connection", || {
            waiting(&idle) == 1
        });
        assert_eq!(shared.active_connections(), 0, "its permit went back");

        let permit = Slot::Connection.take(&shared).expect("a slot");
        assert!(
            idle.hand_over(permit, short_connection(&listener))
                .is_none(),
            "the waiting thread takes the connection"
        );
        wait_until("the second connection served", || {
            shared.host.metrics.connections_total(Protocol::Svn) == 2
                && shared.active_connections() == 0
                && waiting(&idle) == 1
        });
        assert!(!worker.is_finished(), "the same thread waits again");

        // None comes: it ends, and a new connection needs a new thread.
        wait_until("the idle thread to end", || worker.is_finished());
        worker.join().expect("the thread");
        assert_eq!(waiting(&idle), 0);
        let permit = Slot::Connection.take(&shared).expect("a slot");
        assert!(idle
            .hand_over(permit, short_connection(&listener))
            .is_some());
    }

    #[test]
    fn idle_threads_are_bounded() {
        let idle = Idle::default();
        idle.state.lock().expect("state").waiting = MAX_IDLE;
        let started = Instant::now();
        assert!(idle.wait().is_none(), "no place to wait");
        assert!(started.elapsed() < IDLE_KEEP, "it did not wait");
        assert_eq!(idle.state.lock().expect("state").waiting, MAX_IDLE);
    }
}
