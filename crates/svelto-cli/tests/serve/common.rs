//! The shared pairs of servers, one per fixture, and what the modules share about them.

use std::path::Path;

use svelto_testkit::{Pair, Run};

/// The scenarios every command is compared on (all but `many-revs`).
pub use svelto_testkit::SMALL_SCENARIOS as ALL;

/// The shared pair serving a fixture, and a fresh pair's subject: `svelto serve` in the
/// `serve` suite (`main.rs`), the front ends over memory in the `memory` suite.
pub use crate::backend::{pair, subject};

/// The youngest revision of the pair's repository (from the FSFS side).
pub fn head(pair: &Pair) -> u64 {
    youngest(pair.reference_repo())
}

/// The youngest revision of the FSFS repository at `repo` (`svnlook youngest`).
pub fn youngest(repo: &Path) -> u64 {
    let out = Run::tool("svnlook").arg("youngest").arg(repo).success();
    out.stdout_text()
        .trim()
        .parse()
        .unwrap_or_else(|e| panic!("svnlook youngest printed {:?}: {e}", out.stdout_text()))
}

/// `first..=head`, then back down to `first` one revision at a time, so
/// that updates go both ways across every change.
pub fn forward_and_back(first: u64, head: u64) -> Vec<u64> {
    let mut revs: Vec<u64> = (first..=head).collect();
    revs.extend((first..head).rev());
    revs
}
