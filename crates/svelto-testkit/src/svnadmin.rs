//! FSFS repositories made by the real `svnadmin`: the reference that Svelto's
//! behaviour is compared with.

use std::path::{Path, PathBuf};

use tempfile::TempDir;

use crate::run::{Outcome, Run};

/// Free space that `/dev/shm` must have to be used: the big-file test keeps
/// a 200 MB dump and a repository holding the file there at once.
const SHM_MIN_FREE_KIB: u64 = 2 << 20;

/// Where tests put their repositories and scratch files: `$SVELTO_TEST_TMPDIR`
/// when set, else `/dev/shm` when it is a writable directory with at least
/// 2 GiB free (FSFS loads are dominated by file system overhead, which tmpfs
/// removes; containers often have a tiny `/dev/shm`), else the system
/// temporary directory.
pub fn scratch_dir() -> PathBuf {
    static CHOICE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    CHOICE
        .get_or_init(|| {
            if let Some(dir) = std::env::var_os("SVELTO_TEST_TMPDIR") {
                return PathBuf::from(dir);
            }
            let shm = Path::new("/dev/shm");
            if shm.is_dir()
                && tempfile::tempdir_in(shm).is_ok()
                && available_kib(shm).is_some_and(|kib| kib >= SHM_MIN_FREE_KIB)
            {
                return shm.to_owned();
            }
            std::env::temp_dir()
        })
        .clone()
}

/// Free space of the file system holding `path`, from `df -Pk`.
fn available_kib(path: &Path) -> Option<u64> {
    let out = std::process::Command::new("df")
        .arg("-Pk")
        .arg(path)
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines().nth(1)?.split_whitespace().nth(3)?.parse().ok()
}

/// A fresh temporary directory under [`scratch_dir`], removed on drop.
pub fn tempdir() -> TempDir {
    let base = scratch_dir();
    tempfile::Builder::new()
        .prefix("svelto-test-")
        .tempdir_in(&base)
        .unwrap_or_else(|e| panic!("cannot make a temporary directory in {base:?}: {e}"))
}

/// An FSFS repository in a temporary directory, removed on drop.
pub struct TempRepo {
    dir: TempDir,
    path: PathBuf,
}

/// `svnadmin create` in a fresh temporary directory.
pub fn svnadmin_create() -> TempRepo {
    let dir = tempdir();
    let path = dir.path().join("repo");
    Run::tool("svnadmin").arg("create").arg(&path).success();
    TempRepo { dir, path }
}

/// A fresh FSFS repository with `dump` loaded into it (`svnadmin load`, no
/// options).
pub fn svnadmin_create_load(dump: &Path) -> TempRepo {
    let repo = svnadmin_create();
    repo.load(dump, &[]);
    repo
}

/// Load `dump` into a fresh FSFS repository with `load_args`, then return
/// what `svnadmin dump` with `dump_args` writes.
pub fn svnadmin_load_dump(dump: &Path, load_args: &[&str], dump_args: &[&str]) -> Vec<u8> {
    let repo = svnadmin_create();
    repo.load(dump, load_args);
    repo.dump(dump_args)
}

impl TempRepo {
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The temporary directory holding the repository (free for other files).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The repository's `file://` URL.
    pub fn url(&self) -> String {
        format!("file://{}", self.path.display())
    }

    /// `svnadmin load -q [args] REPO < dump`; panics unless it succeeds.
    pub fn load(&self, dump: &Path, args: &[&str]) -> Outcome {
        let outcome = self.try_load(dump, args);
        if !outcome.success() {
            panic!("svnadmin load failed:\n{outcome}");
        }
        outcome
    }

    /// `svnadmin load -q [args] REPO < dump`, whatever the outcome. Loads
    /// without flushing to disk, which changes nothing but speed.
    pub fn try_load(&self, dump: &Path, args: &[&str]) -> Outcome {
        self.load_command(args).stdin_file(dump).output()
    }

    /// Like [`TempRepo::try_load`] from bytes in memory.
    pub fn try_load_bytes(&self, dump: &[u8], args: &[&str]) -> Outcome {
        self.load_command(args).stdin_bytes(dump.to_vec()).output()
    }

    /// `svnadmin load` with progress output (no `-q` unless `args` has it).
    pub fn load_verbose(&self, dump: &Path, args: &[&str]) -> Outcome {
        Run::tool("svnadmin")
            .args(["load", "--no-flush-to-disk"])
            .args(args)
            .arg(&self.path)
            .stdin_file(dump)
            .success()
    }

    fn load_command(&self, args: &[&str]) -> Run {
        let mut run = Run::tool("svnadmin").args(["load", "--no-flush-to-disk"]);
        if !args.iter().any(|a| *a == "-q" || *a == "--quiet") {
            run = run.arg("-q");
        }
        run.args(args).arg(&self.path)
    }

    /// `svnadmin dump -q [args] REPO`, the bytes it writes.
    pub fn dump(&self, args: &[&str]) -> Vec<u8> {
        Run::tool("svnadmin")
            .args(["dump", "-q"])
            .args(args)
            .arg(&self.path)
            .success()
            .stdout
    }

    /// `svnadmin dump -q [args] REPO > file`.
    pub fn dump_to_file(&self, args: &[&str], file: &Path) {
        Run::tool("svnadmin")
            .args(["dump", "-q"])
            .args(args)
            .arg(&self.path)
            .stdout_file(file)
            .success();
    }

    /// `svnlook youngest`.
    pub fn youngest(&self) -> u64 {
        let out = Run::tool("svnlook")
            .arg("youngest")
            .arg(&self.path)
            .success();
        out.stdout_text()
            .trim()
            .parse()
            .unwrap_or_else(|e| panic!("svnlook youngest printed {:?}: {e}", out.stdout_text()))
    }

    /// `svnlook uuid`.
    pub fn uuid(&self) -> String {
        Run::tool("svnlook")
            .arg("uuid")
            .arg(&self.path)
            .success()
            .stdout_text()
            .trim()
            .to_owned()
    }

    /// `svnadmin verify -q`; panics unless it passes.
    pub fn verify(&self) {
        Run::tool("svnadmin")
            .args(["verify", "-q"])
            .arg(&self.path)
            .success();
    }
}
