//! Writing a repository: the commit point and write lock ([`WriteRepo`]), building a
//! revision ([`WriteTxn`]), and the lock table beside revision properties.
//!
//! Subversion's rules (out of date, copy sources, property validation, lock semantics)
//! stay above, in `svelto-repos`; a backend only stores what it is told, refusing what
//! its tree does not allow (a path that exists, a parent that does not).

use crate::error::Result;
use crate::read::ReadRepo;
use crate::types::FileText;
use std::collections::BTreeMap;
use std::io::Read;
use std::sync::Arc;
use svelto_core::{Lock, NodeKind, PropList, Revnum};

/// What a transaction knows about a node, for callers that inspect before they change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeInfo {
    pub kind: NodeKind,
    pub props: PropList,
    pub text: FileText,
}

/// Every lock of a repository, by path, as one version of the backend's table holds
/// them: a shared snapshot a reading handle keeps ([`ReadRepo::locks`]) and a writer
/// replaces whole ([`WriteRepo::set_locks`]).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct LockTable {
    locks: BTreeMap<String, Lock>,
    expiring: bool,
}

impl LockTable {
    pub fn new(locks: BTreeMap<String, Lock>) -> LockTable {
        let expiring = locks.values().any(|l| l.expires.is_some());
        LockTable { locks, expiring }
    }

    /// The locks by path (expired ones included: what expiry means is the caller's).
    pub fn locks(&self) -> &BTreeMap<String, Lock> {
        &self.locks
    }

    pub fn into_locks(self) -> BTreeMap<String, Lock> {
        self.locks
    }

    /// Whether any lock has an expiry date (almost never: only WebDAV clients ask for one).
    pub fn any_expiring(&self) -> bool {
        self.expiring
    }
}

/// A revision being built on a writer's youngest revision: Subversion's FS operations
/// (make, copy, delete, property and text changes), then `commit`. Dropping it without
/// committing forgets everything it did.
pub trait WriteTxn {
    /// The revision it builds on.
    fn base_rev(&self) -> Revnum;
    /// The number the revision gets when this transaction commits.
    fn rev(&self) -> Revnum {
        self.base_rev() + 1
    }
    /// The revision properties the new revision will have.
    fn set_revprops(&mut self, revprops: PropList);
    /// A reader of the writer's revisions, published or not.
    fn view(&mut self) -> Result<&dyn ReadRepo>;
    /// The node at `path` in the transaction, or None.
    fn info(&mut self, path: &str) -> Result<Option<NodeInfo>>;
    fn kind(&mut self, path: &str) -> Result<Option<NodeKind>> {
        Ok(self.info(path)?.map(|i| i.kind))
    }
    /// Adds an empty file or directory at `path` (whose parent is a directory and which
    /// must not exist).
    fn make_node(&mut self, path: &str, kind: NodeKind) -> Result<()>;
    /// Removes `path` and everything below it.
    fn delete(&mut self, path: &str) -> Result<()>;
    /// Copies `from_path` as it was in `from_rev` (at most the base revision) to
    /// `to_path`, which must not exist.
    fn copy(&mut self, from_rev: Revnum, from_path: &str, to_path: &str) -> Result<()>;
    /// Sets (Some) or removes (None) one property of the node at `path`.
    fn change_prop(&mut self, path: &str, name: &[u8], value: Option<&[u8]>) -> Result<()>;
    /// Replaces the contents of the file at `path` with what `src` yields (streamed:
    /// memory stays bounded); returns the stored contents' size and checksums.
    fn set_text(&mut self, path: &str, src: &mut dyn Read) -> Result<FileText>;
    /// The full contents of the file at `path` in this transaction.
    fn read_text(&mut self, path: &str) -> Result<Arc<Vec<u8>>>;
    /// Writes the revision: the writer sees it at once, readers after
    /// [`WriteRepo::sync`].
    fn commit(self: Box<Self>) -> Result<Revnum>;
}

/// The commit point and the write lock of one repository: one writer at a time (local:
/// an OS file lock; a cluster: a lease), kept open between commits.
pub trait WriteRepo: Send {
    /// The youngest revision, including committed ones not yet published by `sync`.
    fn youngest(&self) -> Revnum;
    /// The youngest revision `sync` has made durable and visible.
    fn published(&self) -> Revnum;
    /// The writer's own reading handle: everything it has committed, published or not.
    fn view(&mut self) -> Result<&dyn ReadRepo>;
    /// Starts building a revision on the youngest one.
    fn begin(&mut self) -> Result<Box<dyn WriteTxn + '_>>;
    /// Makes every committed revision durable, then visible to readers, in one step.
    /// A failure is final for this writer.
    fn sync(&mut self) -> Result<Revnum>;
    /// Forgets every revision committed since the last `sync` (a hook said no).
    fn discard_unpublished(&mut self) -> Result<()>;
    /// The revision the next `sync` publishes will have its post-commit hook run by this
    /// process, as transaction `txn`: a backend shared by several machines records that
    /// with the publication itself, so that another machine runs the hook if this process
    /// dies before it ran ([`ReadRepo::post_commit_ran`] forgets the record). The request
    /// lasts until that `sync` or `discard_unpublished`; others ignore it.
    fn record_post_commit(&mut self, txn: &str) {
        let _ = txn;
    }
    /// Lets other writers in until `relock`; everything committed must be published.
    fn unlock(&mut self) -> Result<()>;
    /// Takes the write lock again; false when this writer is stale (another published
    /// meanwhile, or a write of this one failed): open a new one.
    fn relock(&mut self) -> Result<bool>;
    /// Shows the unpublished revisions as transaction `name` to other readers (a hook
    /// reads it while the writer waits).
    fn expose_txn(&mut self, name: &str) -> Result<()>;
    /// Forgets what `expose_txn` showed (unknown names are fine).
    fn forget_txn(&self, name: &str);
    /// Replaces the revision properties of `rev`; durable and visible after `sync`.
    fn set_revprops(&mut self, rev: Revnum, revprops: PropList) -> Result<()>;
    /// Replaces the repository's UUID.
    fn set_uuid(&mut self, uuid: &str) -> Result<()>;
    /// Replaces the lock table with `locks`, durably, serialized with commits. `reader`
    /// (a handle of this repository, the one the caller read the table through) and the
    /// writer's own view see the new table at once; a handle of another repository is
    /// refused (`Conflict`).
    fn set_locks(&mut self, locks: BTreeMap<String, Lock>, reader: &dyn ReadRepo) -> Result<()>;
}
