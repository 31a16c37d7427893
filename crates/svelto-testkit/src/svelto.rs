//! Fixtures loaded into Svelto (by `svelto_repos::load`), alone or beside the FSFS
//! reference loaded by the real `svnadmin` from the same dump.

use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use svelto_repos::LoadOptions;
use svelto_store::Repo;
use tempfile::TempDir;

use crate::fixtures::scenario_dump;
use crate::svnadmin::{svnadmin_create, tempdir, TempRepo};
use crate::svnserve_client::{Mode, SvnserveClient};

/// A Svelto repository in a temporary directory, removed on drop.
pub struct SveltoRepo {
    /// The temporary directory holding the repository.
    pub dir: TempDir,
    pub path: PathBuf,
    pub repo: Repo,
}

/// `svelto_repos::create` in a fresh temporary directory, then `svelto_repos::load` of
/// `dump` with `opts`; panics unless both succeed.
pub fn svelto_create_load(dump: &Path, opts: LoadOptions) -> SveltoRepo {
    let dir = tempdir();
    let path = dir.path().join("svelto");
    svelto_repos::create(
        &svelto_store::LocalBackend,
        &path,
        "00000000-0000-0000-0000-000000000000",
        "2000-01-01T00:00:00.000000Z",
    )
    .expect("svelto create");
    let input = BufReader::new(File::open(dump).expect("the dump opens"));
    let mut w = svelto_store::Writer::open(&path).expect("the created repository's writer");
    svelto_repos::load(&mut w, input, opts, &mut |_| {})
        .unwrap_or_else(|e| panic!("{dump:?}: svelto load: {e}"));
    let repo = Repo::open(&path).expect("the loaded repository opens");
    SveltoRepo { dir, path, repo }
}

/// One dump loaded twice: into FSFS by `svnadmin load` (the reference) and into Svelto.
pub struct LoadedPair {
    /// The scenario's name, or the dump's file name.
    pub name: String,
    pub fsfs: TempRepo,
    /// Svelto's copy.
    pub repo: Repo,
    /// Where Svelto's copy is.
    pub svelto_path: PathBuf,
    _dir: TempDir,
}

impl LoadedPair {
    /// The scenario `name` (`fixtures/<name>.dump`).
    pub fn scenario(name: &str) -> LoadedPair {
        let mut pair = LoadedPair::from_dump(&scenario_dump(name), false);
        pair.name = name.to_string();
        pair
    }

    /// Any dump; with `bypass_prop_validation`, both loads skip the checks of `svn:*`
    /// property values (`--bypass-prop-validation`). Both must hold the same revisions.
    pub fn from_dump(dump: &Path, bypass_prop_validation: bool) -> LoadedPair {
        let fsfs = svnadmin_create();
        let args: &[&str] = if bypass_prop_validation {
            &["--bypass-prop-validation"]
        } else {
            &[]
        };
        fsfs.load(dump, args);
        let opts = LoadOptions {
            bypass_prop_validation,
            ..LoadOptions::default()
        };
        let SveltoRepo { dir, path, repo } = svelto_create_load(dump, opts);
        let name = dump
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        assert_eq!(
            repo.youngest(),
            fsfs.youngest(),
            "{name}: both hold the same revisions"
        );
        LoadedPair {
            name,
            fsfs,
            repo,
            svelto_path: path,
            _dir: dir,
        }
    }

    pub fn youngest(&self) -> u64 {
        self.repo.youngest()
    }

    /// A session with svnserve on the FSFS copy, at its root.
    pub fn svnserve(&self, mode: Mode) -> SvnserveClient {
        SvnserveClient::open(mode, self.fsfs.path())
    }
}
