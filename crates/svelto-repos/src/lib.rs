//! Repository semantics over the store: create, load and dump with Subversion's dumpfile
//! contracts, verify; the read queries a server answers (file revisions for blame,
//! mergeinfo, inherited properties).
//!
//! Owns: what `svnadmin` promises (revision mapping, mergeinfo renumbering, the replay
//! order of dumps). Must not: print, read the environment or the clock (callers pass
//! dates and UUIDs in), or know about the wire protocol.

mod create;
mod dump;
pub mod editor;
mod error;
mod file_revs;
mod history;
mod load;
pub mod mergeinfo;
mod query;
mod textdelta;
mod verify;

pub use create::create;
pub use dump::{dump, DumpOptions};
pub use editor::{send_text, Editor, TextOptions, Token};
pub use error::{ReposError, Result};
pub use file_revs::{get_file_revs, FileRev, FileRevsHandler, FileRevsOptions, PropDiff};
pub use history::NodeHistory;
pub use load::{load, LoadOptions, UuidAction};
pub use query::{get_mergeinfo, inherited_props, mergeinfo_for_path, Inherit};
pub use textdelta::DeltaApplier;
pub use verify::verify;
