//! The shared pairs of servers, one per fixture.

use std::path::Path;

use svelto_testkit::{shared_pair, Pair, Run};

/// The scenarios every command is compared on (all but `many-revs`).
pub use svelto_testkit::SMALL_SCENARIOS as ALL;

/// The pair serving `fixture` (made on first use, shared by all tests).
pub fn pair(fixture: &str) -> &'static Pair {
    shared_pair(fixture, Path::new(env!("CARGO_BIN_EXE_svelto")))
}

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
