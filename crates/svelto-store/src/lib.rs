//! Svelto's storage engine (format: docs/formats/store.md).
//!
//! Owns: the append-only files of a repository's `db/`, node-revisions, directory
//! listings, property lists, file representations, revision metadata, transactions and
//! the commit point. Must not: know about dumpfiles, the wire protocol, or hooks.
//!
//! Readers (`Repo`) take no locks and see only what `db/current` publishes. One `Writer`
//! at a time (an OS file lock) appends; `Txn` builds a revision; `Writer::sync` makes
//! committed revisions durable and visible in one atomic rename.

mod cache;
mod check;
#[cfg(test)]
mod damage;
mod enc;
mod error;
mod files;
mod hotcopy;
pub mod io;
mod locks;
mod node;
mod recover;
mod rep;
mod repo;
pub mod stats;
mod txn;
mod uuid;
mod writer;

pub use error::{Corruption, Result, StoreError};
pub use files::{Current, RevRecord};
pub use hotcopy::{freeze, hotcopy_db, is_repository, DbCopy, Frozen, HotcopyError};
pub use locks::LockTable;
pub use node::{Change, Codec, DirEntry, FileText, NodeRev, RevMeta};
pub use recover::{recover_current, Found, Recovered};
pub use rep::{WindowStream, DELTA_MAX};
pub use repo::{HistoryEntry, Listed, ListedDir, LocalBackend, Repo, RevInfo, Stored, FORMAT};
pub use svelto_core::{ListingId, NodeRevId, PropsId, TextId};
pub use svelto_fs::{ReadRepo, WriteRepo, WriteTxn};
pub use txn::{NodeInfo, Txn};
pub use writer::{create_db, Writer};

pub(crate) const TAG_WINDOW: u8 = 1;
pub(crate) const TAG_REP: u8 = 2;
pub(crate) const TAG_PROPS: u8 = 3;
pub(crate) const TAG_DIR: u8 = 4;
pub(crate) const TAG_NODE: u8 = 5;
pub(crate) const TAG_REVISION: u8 = 6;
pub(crate) const TAG_DIR_DELTA: u8 = 7;

/// The most DIRDELTA records between a listing and the whole DIR it builds on.
pub(crate) const MAX_DIR_CHAIN: u64 = 16;

/// Decodes `payload` as the reader decodes a record of tag `tag` once its frame's CRC has
/// held: NODE, DIR, DIRDELTA, PROPS, REP trailer, REVISION (META), WINDOW (svndiff2). For
/// fuzzing and tools; an unknown tag is itself corruption.
pub fn decode_record(tag: u8, payload: &[u8]) -> std::result::Result<(), Corruption> {
    match tag {
        TAG_NODE => NodeRev::decode(payload).map(drop),
        TAG_DIR => node::decode_dir(payload).map(drop),
        TAG_DIR_DELTA => node::decode_dir_delta(payload).map(drop),
        TAG_PROPS => node::decode_props(payload).map(drop),
        TAG_REP => rep::RepTrailer::decode(payload).map(drop),
        TAG_REVISION => RevMeta::decode(payload).map(drop),
        TAG_WINDOW => {
            match svelto_delta::parse_window(payload, 2, &svelto_delta::Limits::default()) {
                Ok(Some((_, used))) if used == payload.len() => Ok(()),
                Ok(_) => Err(Corruption::new("svndiff window does not fill its record")),
                Err(e) => Err(Corruption::new(format!("svndiff window: {e}"))),
            }
        }
        t => Err(Corruption::new(format!("unknown record tag {t}"))),
    }
}

/// The bytes of `db/locks` holding `locks` (docs/formats/store.md): what another backend
/// that keeps the table elsewhere (the cluster's, in etcd) stores too.
pub fn encode_lock_table(locks: &std::collections::BTreeMap<String, svelto_core::Lock>) -> String {
    locks::encode(locks)
}

/// Parses bytes [`encode_lock_table`] made; a failure names the byte offset and what is
/// wrong.
pub fn parse_lock_table(
    bytes: &[u8],
) -> std::result::Result<std::collections::BTreeMap<String, svelto_core::Lock>, (u64, Corruption)> {
    locks::parse(bytes)
}

/// Parses the contents of `db/uuid` as readers do.
pub fn parse_uuid_file(text: &str) -> std::result::Result<String, Corruption> {
    uuid::parse_uuid(text)
}
