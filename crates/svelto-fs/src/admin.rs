//! The administrator's operations a backend does on whole repositories (`svnadmin`'s
//! hotcopy, freeze, recover, the transactions a hook sees): what each hands back. The
//! operations are [`crate::Backend`]'s and [`crate::ReadRepo`]'s optional methods; a
//! backend without them refuses (`StoreError::Unsupported`). What svnadmin prints around
//! them is `svelto-admin`'s.

use crate::error::StoreError;
use svelto_core::Revnum;

/// Why a hot copy could not be made.
#[derive(Debug, thiserror::Error)]
pub enum HotcopyError {
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Subversion's `SVN_ERR_RA_UUID_MISMATCH`, in svnadmin's words.
    #[error("The UUID of the hotcopy source does not match the UUID of the hotcopy destination")]
    UuidMismatch,
    /// Subversion's `SVN_ERR_UNSUPPORTED_FEATURE`, in svnadmin's words.
    #[error("The hotcopy destination already contains more revisions ({dst}) than the hotcopy source contains ({src}); are source and destination swapped?")]
    DestinationAhead { src: Revnum, dst: Revnum },
    /// The destination has the source's UUID but not a prefix of its history (it was
    /// committed to, or loaded separately): an incremental copy would corrupt it.
    #[error("The hotcopy destination's db/{file} is not a copy of the source's (the destination was changed since it was copied; make a new, non-incremental hotcopy)")]
    Diverged { file: &'static str },
}

/// What a hot copy did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DbCopy {
    /// The revisions copied (`None`: the destination already had them all).
    pub revisions: Option<(Revnum, Revnum)>,
    /// The copy's youngest revision.
    pub youngest: Revnum,
    /// Bytes of the stored data copied.
    pub bytes: u64,
    /// Revisions the destination already had whose revision properties changed since
    /// (an incremental copy brings the changes), sorted.
    pub revprop_changes: Vec<Revnum>,
}

/// What [`crate::Backend::remove_txn`] did with a transaction that exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxnRemoval {
    /// It is gone.
    Removed,
    /// It is a commit in progress (its hooks are running): it goes away when that ends.
    InProgress,
}

/// A repository's writes held until dropped ([`crate::Backend::freeze`]).
pub type Frozen = Box<dyn std::any::Any>;
