//! The history queries (log, locations, location segments, deleted revision) against the
//! real Subversion: each fixture is loaded into FSFS by `svnadmin` and into Svelto by
//! `svelto_repos::load`, and the answers are compared with what `svnserve -t` sends for the
//! same requests and with what `svn log --xml` prints.

mod locations;
mod log;
mod svnserve;

use std::collections::BTreeSet;
use std::fs::File;
use std::io::BufReader;
use std::path::PathBuf;
use svelto_core::{ChangeKind, Revnum};
use svelto_repos::{LoadOptions, ReposError};
use svelto_store::Repo;
use svelto_testkit::{scenario_dump, svnadmin_create_load, tempdir, TempRepo};
use tempfile::TempDir;

/// One fixture loaded twice: FSFS (the reference) and Svelto.
pub struct Pair {
    pub name: String,
    pub fsfs: TempRepo,
    _dir: TempDir,
    pub svelto_path: PathBuf,
    pub repo: Repo,
}

impl Pair {
    pub fn load(name: &str) -> Pair {
        let dump = scenario_dump(name);
        let fsfs = svnadmin_create_load(&dump);
        let dir = tempdir();
        let svelto_path = dir.path().join("svelto");
        svelto_repos::create(
            &svelto_path,
            "00000000-0000-0000-0000-000000000000",
            "2000-01-01T00:00:00.000000Z",
        )
        .expect("create");
        let input = BufReader::new(File::open(&dump).expect("fixture opens"));
        svelto_repos::load(&svelto_path, input, LoadOptions::default(), &mut |_| {})
            .unwrap_or_else(|e| panic!("{name}: load: {e}"));
        let repo = Repo::open(&svelto_path).expect("opens");
        assert_eq!(repo.youngest(), fsfs.youngest(), "{name}: same youngest");
        Pair {
            name: name.to_string(),
            fsfs,
            _dir: dir,
            svelto_path,
            repo,
        }
    }

    pub fn youngest(&self) -> Revnum {
        self.repo.youngest()
    }

    /// Every (relpath, revision) that some revision added or changed, with the revision.
    pub fn changed_locations(&self) -> BTreeSet<(String, Revnum)> {
        let mut out = BTreeSet::new();
        for rev in 1..=self.youngest() {
            for c in self.repo.rev_meta(rev).expect("meta").changes {
                if c.change != ChangeKind::Delete {
                    out.insert((c.path.clone(), rev));
                }
            }
        }
        out
    }

    /// Every relpath some revision added, changed or deleted, with the revisions that
    /// touched it.
    pub fn touched_paths(&self) -> std::collections::BTreeMap<String, Vec<Revnum>> {
        let mut out: std::collections::BTreeMap<String, Vec<Revnum>> = Default::default();
        for rev in 1..=self.youngest() {
            for c in self.repo.rev_meta(rev).expect("meta").changes {
                out.entry(c.path.clone()).or_default().push(rev);
            }
        }
        out
    }
}

/// The scenarios whose histories the tests walk (many-revs has its own tests).
pub const SCENARIOS: &[&str] = &[
    "basic",
    "replace",
    "copies",
    "props",
    "revprops",
    "empty-revs",
    "symlinks",
    "mergeinfo",
    "names",
    "eol-keywords",
    "readd",
    "moves",
    "mixed",
];

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
