//! The history queries (log, locations, location segments, deleted revision) against the
//! real Subversion: each fixture is loaded into FSFS by `svnadmin` and into Svelto by
//! `svelto_repos::load`, and the answers are compared with what `svnserve -t` sends for the
//! same requests and with what `svn log --xml` prints.

mod locations;
mod log;

use std::collections::{BTreeMap, BTreeSet};
use svelto_core::{ChangeKind, Revnum};
use svelto_repos::ReposError;
/// A repository as the seam's callers read it (the local engine, opened by the testkit).
type Repo = dyn svelto_fs::ReadRepo;
pub use svelto_testkit::LoadedPair as Pair;

/// Every (relpath, revision) that some revision added or changed, with the revision.
pub fn changed_locations(repo: &Repo) -> BTreeSet<(String, Revnum)> {
    let mut out = BTreeSet::new();
    for rev in 1..=repo.youngest() {
        for c in &repo.rev_meta(rev).expect("meta").changes {
            if c.change != ChangeKind::Delete {
                out.insert((c.path.clone(), rev));
            }
        }
    }
    out
}

/// Every relpath some revision added, changed or deleted, with the revisions that touched it.
pub fn touched_paths(repo: &Repo) -> BTreeMap<String, Vec<Revnum>> {
    let mut out: BTreeMap<String, Vec<Revnum>> = BTreeMap::new();
    for rev in 1..=repo.youngest() {
        for c in &repo.rev_meta(rev).expect("meta").changes {
            out.entry(c.path.clone()).or_default().push(rev);
        }
    }
    out
}

/// The scenarios whose histories the tests walk (many-revs has its own tests).
pub const SCENARIOS: &[&str] = svelto_testkit::SMALL_SCENARIOS;

/// The error code and message svnserve would send for an error of ours.
pub fn wire_error(e: &ReposError) -> (u64, String) {
    let code = match e {
        ReposError::NotFound { .. } => 160013,
        ReposError::NotDirectory { .. } => 160016,
        ReposError::NoSuchRevision(_) | ReposError::BadRevisionRange(_) => 160006,
        other => panic!("unexpected error {other:?}"),
    };
    (code, e.to_string())
}
