//! Repository semantics over the store: create, load and dump with Subversion's dumpfile
//! contracts, verify; the editor drives the server sends (update reports, replay) and
//! the read queries it answers (log, locations, file revisions for blame, mergeinfo,
//! inherited properties). What `svelto look` shows (the change tree of a revision,
//! Subversion's line diff) is svelto-look's.
//!
//! Owns: what `svnadmin` promises (revision mapping, mergeinfo renumbering, the replay
//! order of dumps) and what svnserve's reporter sends for update, switch, status and diff.
//! Must not: print, read the environment or the clock (callers pass dates and UUIDs in),
//! or know about the wire protocol.

pub mod action;
pub mod authz;
pub mod commit;
pub mod conf;
pub mod conf_check;
mod create;
mod dump;
pub mod editor;
mod error;
mod file_revs;
mod fs;
pub mod hooks;
mod hotcopy;
/// Keyword expansion lives in svelto-core (the client uses it too); re-exported here.
pub use svelto_core::keywords;
pub mod list;
mod load;
pub mod locations;
pub mod locks;
pub mod log;
pub mod maintenance;
pub mod mergeinfo;
mod node;
mod query;
pub mod replay;
pub mod report;
pub mod revprops;
mod safe_cr;
pub mod service;
mod stream;
mod textdelta;
pub mod verify;

pub use commit::{CommitTxn, Prepared};
pub use create::{create, create_for, PACKAGED_SVELTO};
pub use dump::{dump, dump_revprops, DumpOptions, PathFilter, DUMP_CACHE_BYTES};
pub use editor::{send_text, Editor, TextOptions, Token};
pub use error::{ReposError, Result, SvnErrorKind};
pub use file_revs::{
    get_file_revs, get_file_revs_authz, FileRev, FileRevsHandler, FileRevsOptions, PropDiff,
};
pub use fs::{Inherit, NodeHistory};
pub use hooks::Hooks;
pub use hotcopy::{freeze, hotcopy};
pub use load::{
    load, load_revprops, LoadOptions, RevpropLoadOptions, UuidAction, LOAD_CACHE_BYTES,
};
pub use locations::{deleted_rev, get_locations, location_segments, Segment};
pub use log::{
    log, log_authz, log_authz_ref, revision_access, ChangedPath, ChangedPathRef, LogEntry,
    LogEntryRef, LogOptions, Readable, RevisionAccess,
};
pub use node::{ListedNode, Node};
pub use query::{get_mergeinfo, inherited_props, mergeinfo_for_path};
pub use replay::{replay, ReplayOptions};
pub use report::{drive, prepare, PreparedDrive, Report, ReportLimits, ReportOptions};
pub use safe_cr::SafeCr;
pub use textdelta::DeltaApplier;
pub use verify::verify;
