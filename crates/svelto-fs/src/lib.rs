//! The storage seam (docs/formats/store.md, "Above the store"): what Subversion's
//! semantics (`svelto-repos`) need from a storage backend, and nothing of how a backend
//! keeps it. A backend is one crate that depends on this one: the local engine
//! (`svelto-store`: append-only files), the in-memory one of the testkit, the cluster's.
//!
//! Owns: the opaque ids (from `svelto-core`), the records a backend hands out
//! (node-revisions, listings, revision metadata), its errors (with `Unavailable` for a
//! remote backend out of reach), the reading handle's trait ([`ReadRepo`]) and the
//! writer's ([`WriteRepo`], building a revision: [`WriteTxn`]). Must not:
//! do I/O, know a file layout, or depend on a backend.

mod admin;
pub mod contract;
mod error;
mod fold;
mod read;
mod types;
mod write;

pub use admin::{DbCopy, Frozen, HotcopyError, TxnRemoval};
pub use error::{Corruption, Result, StoreError};
pub use fold::{FoldedChanges, PathChange};
pub use read::{Backend, ReadRepo, TextChunks};
pub use svelto_core::{ListingId, NodeRevId, PropsId, TextId};
pub use types::{
    Change, DirEntry, FileText, HistoryEntry, Listed, ListedDir, NodeRev, RevInfo, RevMeta, Stored,
};
pub use write::{LockTable, NodeInfo, WriteRepo, WriteTxn};

/// The largest contents a caller or backend holds whole in memory (and computes deltas
/// of); larger files are streamed.
pub const DELTA_MAX: usize = 4 << 20;
