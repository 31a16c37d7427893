//! Counters of the round trips a front end makes to etcd and the object store, by kind,
//! with the time spent in each (what a commit's latency is made of: docs/cluster.md,
//! "Commit latency"). Read with [`crate::Cluster::stats`]; a front end with
//! `log-timings = yes` logs the difference per publication.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// The kinds of round trip counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trip {
    /// A linearizable read of a head (the fence, a writer's head check).
    HeadRead,
    /// A linearizable read of the lock table (the head and the per-lock keys).
    LockRead,
    /// A campaign for the writer lease (lease grant + the election transaction).
    Campaign,
    /// A revocation of the writer lease (resign, idle release, shutdown).
    Resign,
    /// A request for the writer lease by a front end waiting for it (the `wanted` key).
    Ask,
    /// A revocation of the writer lease because another front end asked for it.
    Handover,
    /// A PUT of a segment or index object.
    Put,
    /// One attempt at the head's publishing transaction.
    PublishTxn,
    /// A GET of a segment (a catch-up).
    SegmentGet,
    /// The deletion of a post-commit record once its hook ran (docs/cluster.md, "Hooks").
    PostCommitDelete,
    /// One transaction of a lock change (per-lock keys and the head).
    LockWrite,
}

const KINDS: usize = 11;

impl Trip {
    fn index(self) -> usize {
        self as usize
    }

    /// Its name in log lines.
    pub fn name(self) -> &'static str {
        match self {
            Trip::HeadRead => "head reads",
            Trip::LockRead => "lock reads",
            Trip::Campaign => "campaigns",
            Trip::Resign => "resigns",
            Trip::Ask => "lease requests",
            Trip::Handover => "hand-overs",
            Trip::Put => "PUTs",
            Trip::PublishTxn => "head txns",
            Trip::SegmentGet => "segment GETs",
            Trip::PostCommitDelete => "post-commit deletes",
            Trip::LockWrite => "lock txns",
        }
    }

    /// Every kind, in log order.
    pub const ALL: [Trip; KINDS] = [
        Trip::HeadRead,
        Trip::LockRead,
        Trip::Campaign,
        Trip::Resign,
        Trip::Ask,
        Trip::Handover,
        Trip::Put,
        Trip::PublishTxn,
        Trip::SegmentGet,
        Trip::PostCommitDelete,
        Trip::LockWrite,
    ];
}

/// The live counters (shared by every handle of one [`crate::Cluster`]).
#[derive(Default)]
pub(crate) struct Counters {
    count: [AtomicU64; KINDS],
    nanos: [AtomicU64; KINDS],
}

impl Counters {
    pub(crate) fn add(&self, trip: Trip, took: Duration) {
        let i = trip.index();
        self.count[i].fetch_add(1, Ordering::Relaxed);
        self.nanos[i].fetch_add(
            u64::try_from(took.as_nanos()).unwrap_or(u64::MAX),
            Ordering::Relaxed,
        );
    }

    pub(crate) fn snapshot(&self) -> Stats {
        let mut s = Stats::default();
        for i in 0..KINDS {
            s.count[i] = self.count[i].load(Ordering::Relaxed);
            s.nanos[i] = self.nanos[i].load(Ordering::Relaxed);
        }
        s
    }
}

/// A snapshot of the counters; subtract two for what happened between them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    count: [u64; KINDS],
    nanos: [u64; KINDS],
}

impl Stats {
    /// How many round trips of `trip` were made.
    pub fn count(&self, trip: Trip) -> u64 {
        self.count[trip.index()]
    }

    /// The time spent in them.
    pub fn time(&self, trip: Trip) -> Duration {
        Duration::from_nanos(self.nanos[trip.index()])
    }

    /// What happened since `earlier`.
    pub fn since(&self, earlier: &Stats) -> Stats {
        let mut s = Stats::default();
        for i in 0..KINDS {
            s.count[i] = self.count[i].saturating_sub(earlier.count[i]);
            s.nanos[i] = self.nanos[i].saturating_sub(earlier.nanos[i]);
        }
        s
    }

    /// `3 head reads 2.1 ms, 1 PUTs 4.0 ms, ...` (kinds with no trip left out).
    pub fn describe(&self) -> String {
        let parts: Vec<String> = Trip::ALL
            .iter()
            .filter(|t| self.count(**t) > 0)
            .map(|t| {
                format!(
                    "{} {} {:.1} ms",
                    self.count(*t),
                    t.name(),
                    self.time(*t).as_secs_f64() * 1000.0
                )
            })
            .collect();
        if parts.is_empty() {
            "no round trips".into()
        } else {
            parts.join(", ")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_add_up_and_differences_name_what_happened() {
        let c = Counters::default();
        c.add(Trip::HeadRead, Duration::from_millis(2));
        let before = c.snapshot();
        c.add(Trip::HeadRead, Duration::from_millis(3));
        c.add(Trip::Put, Duration::from_micros(4500));
        let d = c.snapshot().since(&before);
        assert_eq!(d.count(Trip::HeadRead), 1);
        assert_eq!(d.time(Trip::HeadRead), Duration::from_millis(3));
        assert_eq!(d.count(Trip::Campaign), 0);
        assert_eq!(d.describe(), "1 head reads 3.0 ms, 1 PUTs 4.5 ms");
        assert_eq!(Stats::default().describe(), "no round trips");
    }
}
