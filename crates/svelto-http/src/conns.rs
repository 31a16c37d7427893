//! The connections being served, as the accept loop and each connection's watchdog see
//! them: whether a connection is answering a request or idle (in its TLS handshake,
//! waiting for its first request, or kept alive between requests).
//!
//! Idle connections must not keep new clients out (Apache's event MPM serves a new client
//! at once while keep-alive connections wait): when every `--max-connections` slot is
//! taken, the connection idle the longest hands its slot to the new client and closes
//! ([`Conns::evict`]). Each connection also closes itself when idle too long: [`KEEP_ALIVE`]
//! between requests (Apache's `KeepAliveTimeout`), [`FIRST_REQUEST`] for its TLS handshake
//! and first request's head (mod_reqtimeout's `header=20`), and the server's idle timeout
//! while a request moves no byte (a client that stopped reading its answer or sending its
//! body).

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

/// How long a connection may idle between requests (Apache's `KeepAliveTimeout` default).
pub(crate) const KEEP_ALIVE: Duration = Duration::from_secs(5);

/// How long a new connection has for its TLS handshake and its first request's head
/// (mod_reqtimeout's default `header=20`).
pub(crate) const FIRST_REQUEST: Duration = Duration::from_secs(20);

/// A place in the count of connections served (given back when dropped).
pub(crate) type Permit = svelto_core::Permit<crate::State>;

/// One connection being served.
pub(crate) struct Conn<P = Permit> {
    epoch: Instant,
    /// Requests being answered: from the handler's call to the end of its answer's body.
    busy: AtomicUsize,
    /// Milliseconds from the epoch to when it last became idle.
    idle_since: AtomicU64,
    /// Milliseconds from the epoch to when bytes last moved either way.
    io_at: AtomicU64,
    /// Whether a request has arrived on it.
    served: AtomicBool,
    /// Its place in the count, until the accept loop hands it to a new client.
    permit: Mutex<Option<P>>,
    /// Told when its place was handed over: it closes as soon as it is idle.
    evicted: tokio::sync::Notify,
    was_evicted: AtomicBool,
}

impl<P> Conn<P> {
    fn ms(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// A request begins: the connection is busy until the guard is dropped.
    pub fn begin(self: &Arc<Self>) -> Busy<P> {
        self.served.store(true, Ordering::Relaxed);
        self.busy.fetch_add(1, Ordering::AcqRel);
        Busy(self.clone())
    }

    /// Bytes moved.
    pub fn moved(&self) {
        self.io_at.store(self.ms(), Ordering::Relaxed);
    }

    fn is_idle(&self) -> bool {
        self.busy.load(Ordering::Acquire) == 0
    }

    /// How long it has been idle (zero while busy).
    fn idle_for(&self) -> Duration {
        if !self.is_idle() {
            return Duration::ZERO;
        }
        Duration::from_millis(
            self.ms()
                .saturating_sub(self.idle_since.load(Ordering::Relaxed)),
        )
    }

    /// Why the connection should close now, if it should: idle past its allowance, or
    /// silent past `stalled` while answering.
    pub fn expired(&self, stalled: Duration) -> Option<&'static str> {
        if self.was_evicted.load(Ordering::Acquire) && self.is_idle() {
            return Some("its slot went to a new client");
        }
        let idle = self.idle_for();
        if self.is_idle() {
            let (allowed, why) = if self.served.load(Ordering::Relaxed) {
                (KEEP_ALIVE, "idle between requests")
            } else {
                (FIRST_REQUEST, "no request")
            };
            return (idle >= allowed).then_some(why);
        }
        let silent = self.ms().saturating_sub(self.io_at.load(Ordering::Relaxed));
        (Duration::from_millis(silent) >= stalled).then_some("no byte moved")
    }

    /// Resolves when the accept loop took this connection's place.
    pub async fn evicted(&self) {
        if self.was_evicted.load(Ordering::Acquire) {
            return;
        }
        self.evicted.notified().await
    }
}

/// A request being answered (see [`Conn::begin`]).
pub(crate) struct Busy<P = Permit>(Arc<Conn<P>>);

impl<P> Drop for Busy<P> {
    fn drop(&mut self) {
        let conn = &self.0;
        conn.idle_since.store(conn.ms(), Ordering::Relaxed);
        conn.busy.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The connections being served.
pub(crate) struct Conns<P = Permit> {
    epoch: Instant,
    list: Mutex<Vec<Weak<Conn<P>>>>,
}

impl<P> Default for Conns<P> {
    fn default() -> Self {
        Conns {
            epoch: Instant::now(),
            list: Mutex::new(Vec::new()),
        }
    }
}

impl<P> Conns<P> {
    fn list(&self) -> std::sync::MutexGuard<'_, Vec<Weak<Conn<P>>>> {
        self.list.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A new connection, holding `permit` (idle, waiting for its first request).
    pub fn register(&self, permit: P) -> Arc<Conn<P>> {
        let conn = Arc::new(Conn {
            epoch: self.epoch,
            busy: AtomicUsize::new(0),
            idle_since: AtomicU64::new(0),
            io_at: AtomicU64::new(0),
            served: AtomicBool::new(false),
            permit: Mutex::new(Some(permit)),
            evicted: tokio::sync::Notify::new(),
            was_evicted: AtomicBool::new(false),
        });
        let now = conn.ms();
        conn.idle_since.store(now, Ordering::Relaxed);
        conn.io_at.store(now, Ordering::Relaxed);
        let mut list = self.list();
        list.retain(|w| w.strong_count() > 0);
        list.push(Arc::downgrade(&conn));
        conn
    }

    /// The place of the connection idle the longest, which is told to close; None when
    /// every connection is answering a request.
    pub fn evict(&self) -> Option<P> {
        let list = self.list();
        let victim = list
            .iter()
            .filter_map(Weak::upgrade)
            .filter(|c| c.is_idle() && !c.was_evicted.load(Ordering::Acquire))
            .max_by_key(|c| c.idle_for())?;
        let permit = victim
            .permit
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()?;
        victim.was_evicted.store(true, Ordering::Release);
        victim.evicted.notify_one();
        Some(permit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A connection holding a place in a count of its own (these tests look at the
    /// table only).
    fn conn(conns: &Conns<u32>) -> Arc<Conn<u32>> {
        conns.register(1)
    }

    #[test]
    fn the_longest_idle_connection_gives_its_place_and_busy_ones_never() {
        let conns = Conns::default();
        let busy = conn(&conns);
        let _answering = busy.begin();
        assert!(conns.evict().is_none(), "a busy connection gave its place");
        let idle = conn(&conns);
        drop(idle.begin());
        std::thread::sleep(Duration::from_millis(20));
        let newer = conn(&conns);
        drop(newer.begin());
        let permit = conns.evict().expect("an idle connection's place");
        assert!(idle.was_evicted.load(Ordering::Acquire));
        assert!(!newer.was_evicted.load(Ordering::Acquire));
        assert_eq!(
            idle.expired(Duration::from_secs(900)),
            Some("its slot went to a new client")
        );
        let _ = permit;
        let _ = conns.evict().expect("the next idle one");
        assert!(newer.was_evicted.load(Ordering::Acquire));
        assert!(conns.evict().is_none(), "only the busy one is left");
    }

    #[test]
    fn a_request_ends_the_first_request_allowance_and_starts_keep_alive() {
        // A table a minute old, so that times can be moved back.
        let conns = Conns {
            epoch: Instant::now()
                .checked_sub(Duration::from_secs(60))
                .expect("a minute ago"),
            list: Mutex::new(Vec::new()),
        };
        let c = conn(&conns);
        assert_eq!(c.expired(Duration::from_secs(900)), None);
        let later = u64::try_from(FIRST_REQUEST.as_millis()).expect("ms") + 10;
        // Pretend the connection is older than it is by moving its idle start back.
        let as_if = |c: &Conn<u32>, ago: u64| {
            c.idle_since
                .store(c.ms().saturating_sub(ago), Ordering::Relaxed)
        };
        as_if(&c, later);
        assert_eq!(c.expired(Duration::from_secs(900)), Some("no request"));
        drop(c.begin());
        as_if(&c, 1000);
        assert_eq!(c.expired(Duration::from_secs(900)), None);
        as_if(&c, u64::try_from(KEEP_ALIVE.as_millis()).expect("ms") + 10);
        assert_eq!(
            c.expired(Duration::from_secs(900)),
            Some("idle between requests")
        );
        let _answering = c.begin();
        assert_eq!(c.expired(Duration::from_secs(900)), None);
        c.io_at.store(0, Ordering::Relaxed);
        assert_eq!(c.expired(Duration::ZERO), Some("no byte moved"));
    }
}
