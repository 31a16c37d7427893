//! Repository semantics over the store: create, load and dump with Subversion's dumpfile
//! contracts, verify, and the editor drives the server sends (replay).
//!
//! Owns: what `svnadmin` promises (revision mapping, mergeinfo renumbering, the replay
//! order of dumps). Must not: print, read the environment or the clock (callers pass
//! dates and UUIDs in), or know about the wire protocol.

mod create;
mod dump;
pub mod editor;
mod error;
mod load;
pub mod mergeinfo;
pub mod replay;
mod textdelta;
mod verify;

pub use create::create;
pub use dump::{dump, DumpOptions};
pub use editor::{send_text, Editor, TextOptions, Token};
pub use error::{ReposError, Result};
pub use load::{load, LoadOptions, UuidAction};
pub use replay::{replay, ReplayOptions};
pub use textdelta::DeltaApplier;
pub use verify::verify;
