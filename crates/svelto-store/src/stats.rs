//! Process-wide cache counters (hits and misses of the node, directory, fulltext, revision
//! record and revision metadata caches), for a server's metrics. Relaxed atomics: a count
//! may lag, never block.

use std::sync::atomic::{AtomicU64, Ordering};

/// Hits and misses of one cache.
pub struct CacheCounters {
    hits: AtomicU64,
    misses: AtomicU64,
}

impl CacheCounters {
    const fn new() -> Self {
        CacheCounters {
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        }
    }

    pub(crate) fn count(&self, hit: bool) {
        let c = if hit { &self.hits } else { &self.misses };
        c.fetch_add(1, Ordering::Relaxed);
    }

    pub fn hits(&self) -> u64 {
        self.hits.load(Ordering::Relaxed)
    }

    pub fn misses(&self) -> u64 {
        self.misses.load(Ordering::Relaxed)
    }
}

/// Decoded node-revisions.
pub static NODE_CACHE: CacheCounters = CacheCounters::new();
/// Decoded directory listings.
pub static DIR_CACHE: CacheCounters = CacheCounters::new();
/// Reconstructed file texts (delta bases and whole files).
pub static FULLTEXT_CACHE: CacheCounters = CacheCounters::new();

/// Revision records (`db/revs`).
pub static REV_CACHE: CacheCounters = CacheCounters::new();
/// Decoded revision metadata (revision properties and changed paths).
pub static META_CACHE: CacheCounters = CacheCounters::new();

/// Every cache by the name a metric labels it with.
pub fn caches() -> [(&'static str, &'static CacheCounters); 5] {
    [
        ("node", &NODE_CACHE),
        ("dir", &DIR_CACHE),
        ("fulltext", &FULLTEXT_CACHE),
        ("rev", &REV_CACHE),
        ("meta", &META_CACHE),
    ]
}
