//! The storage seam (docs/formats/store.md, "Above the store"): what Subversion's
//! semantics (`svelto-repos`) need from a storage backend, and nothing of how a backend
//! keeps it. A backend is one crate that depends on this one: the local engine
//! (`svelto-store`: append-only files), the in-memory one of the testkit, the cluster's.
//!
//! Owns: the opaque ids (from `svelto-core`), the records a backend hands out
//! (node-revisions, listings, revision metadata), its errors (with `Unavailable` for a
//! remote backend out of reach) and the reading handle's trait ([`ReadRepo`]). Must not:
//! do I/O, know a file layout, or depend on a backend.

pub mod contract;
mod error;
mod read;
mod types;

pub use error::{Corruption, Result, StoreError};
pub use read::ReadRepo;
pub use svelto_core::{ListingId, NodeRevId, PropsId, TextId};
pub use types::{
    Change, DirEntry, FileText, HistoryEntry, Listed, ListedDir, NodeRev, RevInfo, RevMeta, Stored,
};
