//! What the subject side is in this suite: `svelto serve`, the binary under test (svnserve
//! under `SVELTO_HARNESS_SELFTEST`). The `memory` suite runs the same modules with its
//! own `backend`: the front ends over the in-memory backend.

use std::path::Path;

use svelto_testkit::{shared_pair, Pair, Subject};

/// The pair serving `fixture` (made on first use, shared by all tests).
pub fn pair(fixture: &str) -> &'static Pair {
    shared_pair(fixture, Path::new(env!("CARGO_BIN_EXE_svelto")))
}

/// What serves the subject side of a fresh pair.
pub fn subject() -> Subject {
    Subject::from_env(Path::new(env!("CARGO_BIN_EXE_svelto")))
}
