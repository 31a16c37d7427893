//! The stock `svn` client, run with its own configuration directory.

use super::*;

/// The stock client tools (`svn`, `svnbench`, `svnsync`, `svnrdump`,
/// `svnmucc`) with a private `--config-dir`, `--non-interactive`,
/// `--no-auth-cache`, untranslated messages (`LANG=C`, `LC_ALL=C.UTF-8`: the C
/// locale's messages with UTF-8 file names, which the `names` fixture needs)
/// and `TZ=UTC`.
pub struct SvnClient {
    config_dir: PathBuf,
    /// The temporary directory holding `config_dir`, when the client owns it.
    _owned: Option<TempDir>,
}

impl Default for SvnClient {
    fn default() -> Self {
        SvnClient::new()
    }
}

impl SvnClient {
    /// A client with its configuration in a fresh temporary directory.
    pub fn new() -> SvnClient {
        let owned = tempdir();
        let mut client = SvnClient::in_dir(&owned.path().join("svn-config"));
        client._owned = Some(owned);
        client
    }

    /// A client with its configuration in `config_dir` (made now; removed
    /// with whatever holds it).
    pub fn in_dir(config_dir: &Path) -> SvnClient {
        // Let svn write its default configuration once, now, rather than
        // from many concurrent commands later.
        Run::tool("svn")
            .arg("--config-dir")
            .arg(config_dir)
            .args(["--version", "--quiet"])
            .success();
        SvnClient {
            config_dir: config_dir.to_owned(),
            _owned: None,
        }
    }

    pub fn config_dir(&self) -> &Path {
        &self.config_dir
    }

    /// A command running `tool` (a client tool on `PATH`) in `cwd`, with the
    /// common options and environment; add the subcommand and its arguments.
    pub fn command(&self, tool: &str, cwd: &Path) -> Run {
        Run::tool(tool)
            .arg("--config-dir")
            .arg(&self.config_dir)
            .args(["--non-interactive", "--no-auth-cache"])
            .env("LANG", "C")
            .env("LC_ALL", "C.UTF-8")
            .env("TZ", "UTC")
            .current_dir(cwd)
            .timeout(CLIENT_TIMEOUT)
    }

    /// Run `tool args...` in `cwd` to completion, whatever the outcome.
    pub fn run<S: AsRef<OsStr>>(&self, tool: &str, args: &[S], cwd: &Path) -> Outcome {
        self.command(tool, cwd).args(args).output()
    }

    /// `svn args...` in `cwd`, whatever the outcome.
    pub fn svn<S: AsRef<OsStr>>(&self, args: &[S], cwd: &Path) -> Outcome {
        self.run("svn", args, cwd)
    }
}
