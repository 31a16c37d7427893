//! The subject side of this suite's svn:// pairs: the front ends over memory
//! (`front.rs`), for the `serve` suite's modules (`../serve/common.rs` names it).

use svelto_testkit::{Pair, Subject};

/// The svn:// pair serving `fixture` from memory (made on first use, shared by all tests).
pub fn pair(fixture: &str) -> &'static Pair {
    svelto_testkit::shared_memory_pair(fixture, crate::front::start())
}

/// What serves the subject side of a fresh pair.
pub fn subject() -> Subject {
    crate::front::subject()
}
