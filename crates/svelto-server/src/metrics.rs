//! Prometheus metrics (`docs/formats/server-log.md` lists them): counters kept in relaxed
//! atomics by the command loop, rendered in the text exposition format ([`Metrics::render`])
//! for the scrapes svelto-http's responder answers (`--metrics-listen`).

use std::fmt::Write as _;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;
use svelto_core::code;

/// The commands counted by name (the command table's), then `other` for anything else.
fn command_names() -> impl Iterator<Item = &'static str> {
    crate::cmd::COMMANDS
        .iter()
        .map(|c| c.name)
        .chain(std::iter::once("other"))
}

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

/// The prefix of the names HTTP requests are counted under.
const HTTP: &str = "http-";

/// The server's counters.
pub struct Metrics {
    commands: Vec<CommandStats>,
    /// HTTP requests, by the name the HTTP side gives them (`http-get`,
    /// `http-update-report`: a finite set it names), in the order first seen.
    http: RwLock<Vec<(String, Arc<CommandStats>)>>,
    bytes_in: AtomicU64,
    bytes_out: AtomicU64,
    open_connections: AtomicI64,
    connections: AtomicU64,
    commits: AtomicU64,
    errors: [AtomicU64; ErrorKind::ALL.len()],
}

/// An open connection in the gauge, until dropped.
pub struct OpenConnection<'a>(&'a Metrics);

impl Drop for OpenConnection<'_> {
    fn drop(&mut self) {
        self.0.open_connections.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics {
            commands: command_names().map(|_| CommandStats::default()).collect(),
            http: RwLock::new(Vec::new()),
            bytes_in: AtomicU64::new(0),
            bytes_out: AtomicU64::new(0),
            open_connections: AtomicI64::new(0),
            connections: AtomicU64::new(0),
            commits: AtomicU64::new(0),
            errors: Default::default(),
        }
    }
}

fn index_of(command: &str) -> usize {
    crate::cmd::lookup(command).map_or(crate::cmd::COMMANDS.len(), |(i, _)| i)
}

impl Metrics {
    /// A command (or an HTTP request: a name starting with `http-`) ran for `took`;
    /// `failed` when the client got an error.
    pub fn command(&self, name: &str, took: Duration, failed: bool) {
        if name.starts_with(HTTP) {
            let found = self
                .http
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, c)| c.clone());
            let c = found.unwrap_or_else(|| {
                let mut all = self.http.write().unwrap_or_else(|e| e.into_inner());
                match all.iter().find(|(n, _)| n == name) {
                    Some((_, c)) => c.clone(),
                    None => {
                        let c = Arc::new(CommandStats::default());
                        all.push((name.to_string(), c.clone()));
                        c
                    }
                }
            });
            return c.record(took, failed);
        }
        self.commands[index_of(name)].record(took, failed);
    }

    pub fn bytes(&self, bytes_in: u64, bytes_out: u64) {
        self.bytes_in.fetch_add(bytes_in, Ordering::Relaxed);
        self.bytes_out.fetch_add(bytes_out, Ordering::Relaxed);
    }

    /// Counts a connection: open until the guard is dropped (also by a panic's unwinding).
    pub fn connection_opened(&self) -> OpenConnection<'_> {
        self.connections.fetch_add(1, Ordering::Relaxed);
        self.open_connections.fetch_add(1, Ordering::Relaxed);
        OpenConnection(self)
    }

    /// Connections being served now.
    pub fn open_connections(&self) -> i64 {
        self.open_connections.load(Ordering::Relaxed)
    }

    /// Connections accepted so far.
    pub fn connections_total(&self) -> u64 {
        self.connections.load(Ordering::Relaxed)
    }

    pub fn commit(&self) {
        self.commits.fetch_add(1, Ordering::Relaxed);
    }

    pub fn error(&self, kind: ErrorKind) {
        let i = ErrorKind::ALL
            .iter()
            .position(|k| *k == kind)
            .unwrap_or_default();
        self.errors[i].fetch_add(1, Ordering::Relaxed);
    }

    /// The Prometheus text exposition (format 0.0.4).
    pub fn render(&self) -> String {
        let mut o = String::new();
        let http = self.http.read().unwrap_or_else(|e| e.into_inner()).clone();
        let mut rows: Vec<(&str, &CommandStats)> = command_names().zip(&self.commands).collect();
        rows.extend(http.iter().map(|(n, c)| (n.as_str(), c.as_ref())));
        let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let _ = writeln!(
            o,
            "# HELP svelto_requests_total Commands served, by command.\n\
             # TYPE svelto_requests_total counter"
        );
        for &(name, c) in &rows {
            let _ = writeln!(
                o,
                "svelto_requests_total{{command=\"{name}\"}} {}",
                load(&c.count)
            );
        }
        let _ = writeln!(
            o,
            "# HELP svelto_request_errors_total Commands that answered with an error, by command.\n\
             # TYPE svelto_request_errors_total counter"
        );
        for &(name, c) in &rows {
            let n = load(&c.errors);
            if n > 0 {
                let _ = writeln!(o, "svelto_request_errors_total{{command=\"{name}\"}} {n}");
            }
        }
        let _ = writeln!(
            o,
            "# HELP svelto_request_duration_seconds Time to serve a command, by command.\n\
             # TYPE svelto_request_duration_seconds histogram"
        );
        for &(name, c) in &rows {
            let count = load(&c.count);
            if count == 0 {
                continue;
            }
            let mut cumulative = 0;
            for (i, bound) in BUCKETS.iter().enumerate() {
                cumulative += load(&c.buckets[i]);
                let _ = writeln!(
                    o,
                    "svelto_request_duration_seconds_bucket{{command=\"{name}\",le=\"{bound}\"}} {cumulative}"
                );
            }
            cumulative += load(&c.buckets[BUCKETS.len()]);
            let _ = writeln!(
                o,
                "svelto_request_duration_seconds_bucket{{command=\"{name}\",le=\"+Inf\"}} {cumulative}\n\
                 svelto_request_duration_seconds_sum{{command=\"{name}\"}} {:.6}\n\
                 svelto_request_duration_seconds_count{{command=\"{name}\"}} {cumulative}",
                load(&c.sum_micros) as f64 / 1e6
            );
        }
        let _ = writeln!(
            o,
            "# HELP svelto_received_bytes_total Bytes read from clients.\n\
             # TYPE svelto_received_bytes_total counter\n\
             svelto_received_bytes_total {}\n\
             # HELP svelto_sent_bytes_total Bytes sent to clients.\n\
             # TYPE svelto_sent_bytes_total counter\n\
             svelto_sent_bytes_total {}\n\
             # HELP svelto_open_connections Connections being served now.\n\
             # TYPE svelto_open_connections gauge\n\
             svelto_open_connections {}\n\
             # HELP svelto_connections_total Connections accepted.\n\
             # TYPE svelto_connections_total counter\n\
             svelto_connections_total {}\n\
             # HELP svelto_commits_total Revisions committed.\n\
             # TYPE svelto_commits_total counter\n\
             svelto_commits_total {}",
            load(&self.bytes_in),
            load(&self.bytes_out),
            self.open_connections.load(Ordering::Relaxed),
            load(&self.connections),
            load(&self.commits),
        );
        let _ = writeln!(
            o,
            "# HELP svelto_errors_total Failures, by kind.\n\
             # TYPE svelto_errors_total counter"
        );
        for (k, n) in ErrorKind::ALL.iter().zip(&self.errors) {
            let _ = writeln!(
                o,
                "svelto_errors_total{{kind=\"{}\"}} {}",
                k.name(),
                load(n)
            );
        }
        let _ = writeln!(
            o,
            "# HELP svelto_cache_hits_total Storage cache hits, by cache.\n\
             # TYPE svelto_cache_hits_total counter"
        );
        let caches = svelto_repos::service::cache_stats();
        for (name, hits, _) in &caches {
            let _ = writeln!(o, "svelto_cache_hits_total{{cache=\"{name}\"}} {hits}");
        }
        let _ = writeln!(
            o,
            "# HELP svelto_cache_misses_total Storage cache misses, by cache.\n\
             # TYPE svelto_cache_misses_total counter"
        );
        for (name, _, misses) in &caches {
            let _ = writeln!(o, "svelto_cache_misses_total{{cache=\"{name}\"}} {misses}");
        }
        o
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn render_counts_and_histograms() {
        let m = Metrics::default();
        m.command("get-file", Duration::from_millis(3), false);
        m.command("get-file", Duration::from_secs(2), true);
        m.command("bogus", Duration::ZERO, false);
        m.bytes(10, 20);
        m.error(ErrorKind::Busy);
        let t = m.render();
        for line in [
            "svelto_requests_total{command=\"get-file\"} 2",
            "svelto_requests_total{command=\"other\"} 1",
            "svelto_request_errors_total{command=\"get-file\"} 1",
            "svelto_request_duration_seconds_bucket{command=\"get-file\",le=\"0.005\"} 1",
            "svelto_request_duration_seconds_bucket{command=\"get-file\",le=\"5\"} 2",
            "svelto_request_duration_seconds_count{command=\"get-file\"} 2",
            "svelto_received_bytes_total 10",
            "svelto_sent_bytes_total 20",
            "svelto_errors_total{kind=\"busy\"} 1",
        ] {
            assert!(t.lines().any(|l| l == line), "{line} in\n{t}");
        }
    }
}
