//! The same history in an FSFS repository (the real `svnadmin`) and in a Svelto one
//! (`svelto admin`), and the same subcommand run on both, outputs compared.

use std::path::Path;

use svelto_testkit::{svnadmin_create, Outcome, Run, TempRepo};

use crate::common::{svelto, SveltoRepo};

/// Stands for the repository's path in the arguments given to [`Pair::run`].
pub const REPO: &str = "{REPO}";

pub struct Pair {
    pub fs: TempRepo,
    pub sv: SveltoRepo,
}

/// What one tool did, with the repository's path replaced by `{REPO}`.
#[derive(Debug, PartialEq, Eq)]
pub struct Seen {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Pair {
    /// Two empty repositories.
    pub fn new() -> Pair {
        Pair {
            fs: svnadmin_create(),
            sv: SveltoRepo::create(),
        }
    }

    /// Two repositories with `dump` loaded (and the same UUID, the dump's).
    pub fn with_dump(dump: &Path) -> Pair {
        let pair = Pair::new();
        pair.fs.load(dump, &[]);
        pair.sv.load(dump, &[]);
        pair
    }

    fn args(path: &Path, args: &[&str]) -> Vec<String> {
        let p = path.display().to_string();
        args.iter().map(|a| a.replace(REPO, &p)).collect()
    }

    /// `svnadmin ARGS` and `svelto admin ARGS` (each with its repository for `{REPO}`),
    /// each command adjusted by `f` (standard input...).
    pub fn run_with(&self, args: &[&str], f: impl Fn(Run) -> Run) -> (Outcome, Outcome) {
        let fs = f(Run::tool("svnadmin").args(Self::args(self.fs.path(), args))).output();
        let sv = f(svelto().arg("admin").args(Self::args(self.sv.path(), args))).output();
        (fs, sv)
    }

    /// Runs `args` on both and asserts that exit status, standard output and standard
    /// error are the same (paths of the repositories replaced by `{REPO}`).
    pub fn same(&self, args: &[&str]) -> Seen {
        self.same_with(args, |r| r)
    }

    pub fn same_with(&self, args: &[&str], f: impl Fn(Run) -> Run) -> Seen {
        let (fs, sv) = self.run_with(args, f);
        let a = seen(&fs, self.fs.path());
        let b = seen(&sv, self.sv.path());
        assert_eq!(
            b, a,
            "svelto admin {args:?} (left) differs from svnadmin (right):\n{sv}\n{fs}"
        );
        b
    }
}

pub fn seen(out: &Outcome, repo: &Path) -> Seen {
    let p = repo.display().to_string();
    Seen {
        code: out.status.code(),
        stdout: out.stdout_text().replace(&p, REPO),
        stderr: out.stderr_text().replace(&p, REPO),
    }
}
