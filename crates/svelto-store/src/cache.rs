//! The read caches of a `Repo`: everything keyed by what never changes once published
//! (offsets in `db/data` and `db/meta`, revision numbers), bounded by bytes.
//!
//! The policy is quick_cache's S3-FIFO: a new entry waits in a small probation queue and
//! stays only if it is read again before it leaves it; entries read repeatedly live in
//! the main part, which evicts the least recently referenced first. So a request that
//! reads many things once (a blame's versions of one file, a replay's or a dump's texts)
//! cannot push out what every export reads.

use crate::files::RevRecord;
use crate::node::{DirEntry, NodeRev, Offset, RevMeta};
use quick_cache::sync::Cache;
use quick_cache::Weighter;
use std::mem::size_of;
use std::sync::Arc;

/// What an entry costs in memory, roughly: its heap bytes plus the map's own per entry.
pub(crate) trait Weigh {
    fn weigh(&self) -> u64;
}

/// The cache's bookkeeping per entry (key, links, hash slot), roughly.
const ENTRY_OVERHEAD: u64 = 48;

fn string_bytes(s: &str) -> u64 {
    s.len() as u64
}

impl Weigh for Arc<Vec<u8>> {
    fn weigh(&self) -> u64 {
        self.len() as u64 + ENTRY_OVERHEAD
    }
}

impl Weigh for Arc<NodeRev> {
    fn weigh(&self) -> u64 {
        let n: &NodeRev = self;
        size_of::<NodeRev>() as u64
            + string_bytes(&n.created_path)
            + n.copyfrom.as_ref().map_or(0, |(_, p)| string_bytes(p))
            + string_bytes(&n.copyroot.1)
            + ENTRY_OVERHEAD
    }
}

impl Weigh for Arc<Vec<DirEntry>> {
    fn weigh(&self) -> u64 {
        self.iter()
            .map(|e| size_of::<DirEntry>() as u64 + string_bytes(&e.name))
            .sum::<u64>()
            + ENTRY_OVERHEAD
    }
}

impl Weigh for Arc<svelto_core::PropList> {
    fn weigh(&self) -> u64 {
        // A B-tree node's share and each name's and value's heap block, roughly.
        self.iter()
            .map(|(k, v)| (k.len() + v.len() + 64) as u64)
            .sum::<u64>()
            + ENTRY_OVERHEAD
    }
}

impl Weigh for Arc<Vec<crate::repo::Listed>> {
    fn weigh(&self) -> u64 {
        (self.len() * size_of::<crate::repo::Listed>()) as u64 + ENTRY_OVERHEAD
    }
}

impl Weigh for RevRecord {
    fn weigh(&self) -> u64 {
        size_of::<RevRecord>() as u64 + ENTRY_OVERHEAD
    }
}

/// A revision's metadata as the cache holds it, by revision number.
#[derive(Clone)]
pub(crate) struct CachedMeta {
    /// The META record of the revision property change it comes from, if not the
    /// revision's own: a newer change makes it stale.
    pub(crate) changed_at: Option<u64>,
    pub(crate) meta: Arc<RevMeta>,
}

impl Weigh for CachedMeta {
    fn weigh(&self) -> u64 {
        let props: u64 = self
            .meta
            .revprops
            .iter()
            .map(|(k, v)| (k.len() + v.len() + 64) as u64)
            .sum();
        // Each change's 4 bytes are for its place in byte order, which log may keep.
        let changes: u64 = self
            .meta
            .changes
            .iter()
            .map(|c| {
                4 + size_of::<crate::node::Change>() as u64
                    + string_bytes(&c.path)
                    + c.copyfrom.as_ref().map_or(0, |(_, p)| string_bytes(p))
            })
            .sum();
        size_of::<RevMeta>() as u64 + props + changes + ENTRY_OVERHEAD
    }
}

#[derive(Clone, Copy)]
pub(crate) struct ByWeight;

impl<V: Weigh> Weighter<u64, V> for ByWeight {
    fn weight(&self, _key: &u64, v: &V) -> u64 {
        v.weigh()
    }
}

/// A concurrent cache bounded by the summed weight of its entries.
pub(crate) struct Bounded<V: Weigh + Clone> {
    map: Cache<u64, V, ByWeight>,
}

impl<V: Weigh + Clone> Bounded<V> {
    /// A cache of at most `bytes`, expecting entries of about `typical` bytes.
    pub(crate) fn new(bytes: u64, typical: u64) -> Self {
        let items = usize::try_from(bytes / typical.max(1))
            .unwrap_or(usize::MAX)
            .max(64);
        Bounded {
            map: Cache::with_weighter(items, bytes, ByWeight),
        }
    }

    /// The entry for `k`, counted as a use (it earns its place).
    pub(crate) fn get(&self, k: Offset) -> Option<V> {
        self.map.get(&k)
    }

    /// The entry for `k`, without counting a use: a base found on the way to another text.
    pub(crate) fn peek(&self, k: Offset) -> Option<V> {
        self.map.peek(&k)
    }

    pub(crate) fn put(&self, k: Offset, v: V) {
        self.map.insert(k, v);
    }

    pub(crate) fn clear(&self) {
        self.map.clear();
    }

    /// Changes the bound, evicting what no longer fits.
    pub(crate) fn set_capacity(&self, bytes: u64) {
        self.map.set_capacity(bytes);
    }

    /// The summed weight of what is held now.
    #[cfg(test)]
    pub(crate) fn weight(&self) -> u64 {
        self.map.weight()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(n: usize) -> Arc<Vec<u8>> {
        Arc::new(vec![7; n])
    }

    /// Texts read by every export stay while ten times the cache's size of texts read
    /// once (a blame's versions) goes through it between two exports: first-in first-out
    /// kept none of them.
    #[test]
    fn one_use_texts_do_not_evict_the_hot_ones() {
        let cap = 64 << 20;
        let c: Bounded<Arc<Vec<u8>>> = Bounded::new(cap, 16 << 10);
        let hot: Vec<u64> = (0..2_000).collect();
        let mut misses = 0;
        for round in 0..10u64 {
            // An export: every hot text, read again or rebuilt and kept.
            for &k in &hot {
                if c.get(k).is_none() {
                    misses += 1;
                    c.put(k, text(16 << 10));
                }
            }
            // A blame: 40,000 versions, each read once.
            for k in 0..40_000u64 {
                c.put(1_000_000 + round * 40_000 + k, text(16 << 10));
            }
            assert!(c.weight() <= cap, "over its bound: {}", c.weight());
        }
        // The first export fills the cache; later ones find what it kept.
        assert!(misses <= hot.len() + hot.len() / 50, "{misses} misses");
    }

    #[test]
    fn weights_are_bytes() {
        let c: Bounded<Arc<Vec<u8>>> = Bounded::new(1 << 20, 1024);
        c.put(1, text(1000));
        assert_eq!(c.weight(), 1000 + ENTRY_OVERHEAD);
        c.set_capacity(1 << 10);
        assert!(c.weight() <= 1 << 10);
    }
}
