//! Prometheus metrics (`docs/formats/server-log.md` lists them): counters by protocol, kept
//! in relaxed atomics by both front ends, rendered in the text exposition format ([`Metrics::render`])
//! for the scrapes svelto-http's responder answers (`--metrics-listen`).

use std::fmt::Write as _;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;
use svelto_core::code;

/// The front end a request or connection came through, as the `protocol` label says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// svn:// (and svn+ssh://, which is svn:// over a tunnel).
    Svn,
    /// http:// and https://.
    Http,
}

impl Protocol {
    pub const ALL: [Protocol; 2] = [Protocol::Svn, Protocol::Http];

    pub fn name(self) -> &'static str {
        match self {
            Protocol::Svn => "svn",
            Protocol::Http => "http",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// The name a request the front end could not name is counted under, so that clients
/// cannot make up counters.
pub const OTHER: &str = "other";

/// Latency bucket bounds, in seconds.
const BUCKETS: [f64; 12] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0, 5.0, 30.0, 300.0,
];

/// Why something failed, as the `errors` counter labels it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// A command failed and the client was told (missing path, out-of-date commit ...).
    Command,
    /// Authentication or authorization refused.
    Auth,
    /// Malformed input or a protocol violation; the connection was closed.
    Protocol,
    /// The connection failed (reset, broken pipe).
    Io,
    /// A read or write timed out (idle or stalled client).
    Timeout,
    /// A request or response went over its size limit.
    Limit,
    /// Refused for `--max-connections`.
    Busy,
}

impl ErrorKind {
    const ALL: [ErrorKind; 7] = [
        ErrorKind::Command,
        ErrorKind::Auth,
        ErrorKind::Protocol,
        ErrorKind::Io,
        ErrorKind::Timeout,
        ErrorKind::Limit,
        ErrorKind::Busy,
    ];

    fn name(self) -> &'static str {
        match self {
            ErrorKind::Command => "command",
            ErrorKind::Auth => "auth",
            ErrorKind::Protocol => "protocol",
            ErrorKind::Io => "io",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Limit => "limit",
            ErrorKind::Busy => "busy",
        }
    }

    /// The kind of a Subversion error code sent to a client.
    pub fn of_code(code: u64) -> ErrorKind {
        let auth = u32::try_from(code).is_ok_and(|c| {
            c == code::RA_NOT_AUTHORIZED
                || code::in_category(c, code::AUTHN_CATEGORY_START)
                || code::in_category(c, code::AUTHZ_CATEGORY_START)
        });
        if auth {
            ErrorKind::Auth
        } else {
            ErrorKind::Command
        }
    }
}

#[derive(Default)]
struct CommandStats {
    count: AtomicU64,
    errors: AtomicU64,
    /// Cumulative per bucket is computed when rendering; each slot counts its own range,
    /// the last one everything slower than the last bound.
    buckets: [AtomicU64; BUCKETS.len() + 1],
    sum_micros: AtomicU64,
}

impl CommandStats {
    fn record(&self, took: Duration, failed: bool) {
        let c = self;
        c.count.fetch_add(1, Ordering::Relaxed);
        if failed {
            c.errors.fetch_add(1, Ordering::Relaxed);
        }
        let secs = took.as_secs_f64();
        let slot = BUCKETS
            .iter()
            .position(|b| secs <= *b)
            .unwrap_or(BUCKETS.len());
        c.buckets[slot].fetch_add(1, Ordering::Relaxed);
        let micros = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
        c.sum_micros.fetch_add(micros, Ordering::Relaxed);
    }
}

/// A request name and its counters.
type Named = (&'static str, Arc<CommandStats>);

/// What one protocol's requests and connections counted.
#[derive(Default)]
struct PerProtocol {
    /// By the name the front end gives a request (a finite set each front end names: its
    /// command table's, then [`OTHER`]), in the order first seen (the table's order, for
    /// names registered up front).
    commands: RwLock<Vec<Named>>,
    bytes_in: AtomicU64,
    bytes_out: AtomicU64,
    open_connections: AtomicI64,
    connections: AtomicU64,
    commits: AtomicU64,
    errors: [AtomicU64; ErrorKind::ALL.len()],
}

impl PerProtocol {
    fn stats(&self, name: &'static str) -> Arc<CommandStats> {
        let found = self
            .commands
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, c)| c.clone());
        found.unwrap_or_else(|| {
            let mut all = self.commands.write().unwrap_or_else(|e| e.into_inner());
            match all.iter().find(|(n, _)| *n == name) {
                Some((_, c)) => c.clone(),
                None => {
                    let c = Arc::new(CommandStats::default());
                    all.push((name, c.clone()));
                    c
                }
            }
        })
    }
}

/// The server's counters, by protocol.
pub struct Metrics {
    protocols: [PerProtocol; Protocol::ALL.len()],
    started: std::time::Instant,
}

/// An open connection in the gauge, until dropped.
pub struct OpenConnection<'a>(&'a AtomicI64);

impl Drop for OpenConnection<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics {
            protocols: Default::default(),
            started: std::time::Instant::now(),
        }
    }
}

impl Metrics {
    fn of(&self, p: Protocol) -> &PerProtocol {
        &self.protocols[p.index()]
    }

    /// Lists a protocol's request names up front (its command table), so that the text
    /// shows them in that order, at zero until they run.
    pub fn register(&self, p: Protocol, names: impl IntoIterator<Item = &'static str>) {
        for n in names {
            self.of(p).stats(n);
        }
    }

    /// A request ran for `took`; `failed` when the client got an error. `name` comes from
    /// the front end's finite set of names ([`OTHER`] for what it could not name).
    pub fn command(&self, p: Protocol, name: &'static str, took: Duration, failed: bool) {
        self.of(p).stats(name).record(took, failed);
    }

    pub fn bytes(&self, p: Protocol, bytes_in: u64, bytes_out: u64) {
        let c = self.of(p);
        c.bytes_in.fetch_add(bytes_in, Ordering::Relaxed);
        c.bytes_out.fetch_add(bytes_out, Ordering::Relaxed);
    }

    /// Counts a connection: open until the guard is dropped (also by a panic's unwinding).
    pub fn connection_opened(&self, p: Protocol) -> OpenConnection<'_> {
        let c = self.of(p);
        c.connections.fetch_add(1, Ordering::Relaxed);
        c.open_connections.fetch_add(1, Ordering::Relaxed);
        OpenConnection(&c.open_connections)
    }

    /// Connections being served now.
    pub fn open_connections(&self, p: Protocol) -> i64 {
        self.of(p).open_connections.load(Ordering::Relaxed)
    }

    /// Connections accepted so far.
    pub fn connections_total(&self, p: Protocol) -> u64 {
        self.of(p).connections.load(Ordering::Relaxed)
    }

    pub fn commit(&self, p: Protocol) {
        self.of(p).commits.fetch_add(1, Ordering::Relaxed);
    }

    pub fn error(&self, p: Protocol, kind: ErrorKind) {
        let i = ErrorKind::ALL
            .iter()
            .position(|k| *k == kind)
            .unwrap_or_default();
        self.of(p).errors[i].fetch_add(1, Ordering::Relaxed);
    }

    /// The Prometheus text exposition (format 0.0.4), without the storage caches' counters
    /// (`Host::render_metrics` has them).
    pub fn render(&self) -> String {
        self.render_with(&[])
    }

    /// [`Metrics::render`] with the storage caches' counters `caches`: (the name a metric
    /// labels the cache with, hits, misses).
    pub fn render_with(&self, caches: &[(&'static str, u64, u64)]) -> String {
        let mut o = String::new();
        let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let rows: Vec<(&str, Vec<Named>)> = Protocol::ALL
            .iter()
            .map(|p| {
                let all = self
                    .of(*p)
                    .commands
                    .read()
                    .unwrap_or_else(|e| e.into_inner());
                (p.name(), all.clone())
            })
            .collect();
        let _ = writeln!(
            o,
            "# HELP svelto_build_info The version serving, always 1.\n\
             # TYPE svelto_build_info gauge\n\
             svelto_build_info{{version=\"{}\"}} 1\n\
             # HELP svelto_uptime_seconds Seconds since the server started.\n\
             # TYPE svelto_uptime_seconds gauge\n\
             svelto_uptime_seconds {:.3}",
            env!("CARGO_PKG_VERSION"),
            self.started.elapsed().as_secs_f64()
        );
        let _ = writeln!(
            o,
            "# HELP svelto_requests_total Requests served, by protocol and command.\n\
             # TYPE svelto_requests_total counter"
        );
        for (p, all) in &rows {
            for (name, c) in all {
                let _ = writeln!(
                    o,
                    "svelto_requests_total{{protocol=\"{p}\",command=\"{name}\"}} {}",
                    load(&c.count)
                );
            }
        }
        let _ = writeln!(
            o,
            "# HELP svelto_request_errors_total Requests answered with an error, by protocol and command.\n\
             # TYPE svelto_request_errors_total counter"
        );
        for (p, all) in &rows {
            for (name, c) in all {
                let n = load(&c.errors);
                if n > 0 {
                    let _ = writeln!(
                        o,
                        "svelto_request_errors_total{{protocol=\"{p}\",command=\"{name}\"}} {n}"
                    );
                }
            }
        }
        let _ = writeln!(
            o,
            "# HELP svelto_request_duration_seconds Time to serve a request, by protocol and command.\n\
             # TYPE svelto_request_duration_seconds histogram"
        );
        for (p, all) in &rows {
            for (name, c) in all {
                let count = load(&c.count);
                if count == 0 {
                    continue;
                }
                let labels = format!("protocol=\"{p}\",command=\"{name}\"");
                let mut cumulative = 0;
                for (i, bound) in BUCKETS.iter().enumerate() {
                    cumulative += load(&c.buckets[i]);
                    let _ = writeln!(
                        o,
                        "svelto_request_duration_seconds_bucket{{{labels},le=\"{bound}\"}} {cumulative}"
                    );
                }
                cumulative += load(&c.buckets[BUCKETS.len()]);
                let _ = writeln!(
                    o,
                    "svelto_request_duration_seconds_bucket{{{labels},le=\"+Inf\"}} {cumulative}\n\
                     svelto_request_duration_seconds_sum{{{labels}}} {:.6}\n\
                     svelto_request_duration_seconds_count{{{labels}}} {cumulative}",
                    load(&c.sum_micros) as f64 / 1e6
                );
            }
        }
        type Field = fn(&PerProtocol) -> i64;
        let gauges: [(&str, &str, &str, Field); 5] = [
            (
                "svelto_received_bytes_total",
                "counter",
                "Bytes read from clients.",
                |c| c.bytes_in.load(Ordering::Relaxed) as i64,
            ),
            (
                "svelto_sent_bytes_total",
                "counter",
                "Bytes sent to clients.",
                |c| c.bytes_out.load(Ordering::Relaxed) as i64,
            ),
            (
                "svelto_open_connections",
                "gauge",
                "Connections being served now.",
                |c| c.open_connections.load(Ordering::Relaxed),
            ),
            (
                "svelto_connections_total",
                "counter",
                "Connections accepted.",
                |c| c.connections.load(Ordering::Relaxed) as i64,
            ),
            (
                "svelto_commits_total",
                "counter",
                "Revisions committed.",
                |c| c.commits.load(Ordering::Relaxed) as i64,
            ),
        ];
        for (name, kind, help, field) in gauges {
            let _ = writeln!(o, "# HELP {name} {help}\n# TYPE {name} {kind}");
            for p in Protocol::ALL {
                let _ = writeln!(
                    o,
                    "{name}{{protocol=\"{}\"}} {}",
                    p.name(),
                    field(self.of(p))
                );
            }
        }
        let _ = writeln!(
            o,
            "# HELP svelto_errors_total Failures, by protocol and kind.\n\
             # TYPE svelto_errors_total counter"
        );
        for p in Protocol::ALL {
            for (k, n) in ErrorKind::ALL.iter().zip(&self.of(p).errors) {
                let _ = writeln!(
                    o,
                    "svelto_errors_total{{protocol=\"{}\",kind=\"{}\"}} {}",
                    p.name(),
                    k.name(),
                    load(n)
                );
            }
        }
        let _ = writeln!(
            o,
            "# HELP svelto_cache_hits_total Storage cache hits, by cache.\n\
             # TYPE svelto_cache_hits_total counter"
        );
        for (name, hits, _) in caches {
            let _ = writeln!(o, "svelto_cache_hits_total{{cache=\"{name}\"}} {hits}");
        }
        let _ = writeln!(
            o,
            "# HELP svelto_cache_misses_total Storage cache misses, by cache.\n\
             # TYPE svelto_cache_misses_total counter"
        );
        for (name, _, misses) in caches {
            let _ = writeln!(o, "svelto_cache_misses_total{{cache=\"{name}\"}} {misses}");
        }
        o
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn render_counts_and_histograms_by_protocol() {
        let m = Metrics::default();
        m.register(Protocol::Svn, ["get-file", "update"]);
        m.command(Protocol::Svn, "get-file", Duration::from_millis(3), false);
        m.command(Protocol::Svn, "get-file", Duration::from_secs(2), true);
        m.command(Protocol::Svn, OTHER, Duration::ZERO, false);
        m.command(Protocol::Http, "http-get", Duration::ZERO, false);
        m.bytes(Protocol::Svn, 10, 20);
        m.error(Protocol::Http, ErrorKind::Busy);
        m.commit(Protocol::Http);
        let open = m.connection_opened(Protocol::Http);
        let t = m.render();
        for line in [
            "svelto_requests_total{protocol=\"svn\",command=\"get-file\"} 2",
            "svelto_requests_total{protocol=\"svn\",command=\"update\"} 0",
            "svelto_requests_total{protocol=\"svn\",command=\"other\"} 1",
            "svelto_requests_total{protocol=\"http\",command=\"http-get\"} 1",
            "svelto_request_errors_total{protocol=\"svn\",command=\"get-file\"} 1",
            "svelto_request_duration_seconds_bucket{protocol=\"svn\",command=\"get-file\",le=\"0.005\"} 1",
            "svelto_request_duration_seconds_bucket{protocol=\"svn\",command=\"get-file\",le=\"5\"} 2",
            "svelto_request_duration_seconds_count{protocol=\"svn\",command=\"get-file\"} 2",
            "svelto_received_bytes_total{protocol=\"svn\"} 10",
            "svelto_sent_bytes_total{protocol=\"svn\"} 20",
            "svelto_errors_total{protocol=\"http\",kind=\"busy\"} 1",
            "svelto_errors_total{protocol=\"svn\",kind=\"busy\"} 0",
            "svelto_commits_total{protocol=\"http\"} 1",
            "svelto_open_connections{protocol=\"http\"} 1",
            "svelto_connections_total{protocol=\"svn\"} 0",
            concat!("svelto_build_info{version=\"", env!("CARGO_PKG_VERSION"), "\"} 1"),
        ] {
            assert!(t.lines().any(|l| l == line), "{line} in\n{t}");
        }
        assert!(t.contains("\nsvelto_uptime_seconds "), "{t}");
        drop(open);
        assert_eq!(m.open_connections(Protocol::Http), 0);
        assert_eq!(m.connections_total(Protocol::Http), 1);
    }
}
