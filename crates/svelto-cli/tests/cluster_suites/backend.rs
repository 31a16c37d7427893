//! The subject side of this suite's svn:// pairs: three `svelto serve --cluster` front ends
//! behind a round-robin balancer, over a cluster of their own on the process's shared rig
//! (`svelto_testkit::Subject::Cluster`), for the `serve` suite's modules
//! (`../serve/common.rs` names it).

use svelto_testkit::{Pair, Subject};

/// The svn:// pair serving `fixture` from a cluster (made on first use, shared by all
/// tests).
pub fn pair(fixture: &str) -> &'static Pair {
    svelto_testkit::shared_cluster_pair(fixture, &crate::bin())
}

/// What serves the subject side of a fresh pair: a cluster of three front ends.
pub fn subject() -> Subject {
    Subject::Cluster(crate::bin())
}
