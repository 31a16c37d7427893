//! OpenSSH's `sshd` on 127.0.0.1 for the svn+ssh:// tests, set up the way an administrator
//! sets it up: its own host key and configuration, one `authorized_keys` whose lines force
//! `svnserve -t` or `svelto serve -t` (see [`forced`]); clients log in with a key through
//! the agent [`Sshd::ssh_command`] gives (what `SVN_SSH` is set to).
//!
//! Needs `sshd`, `ssh` and `ssh-keygen`: a test using this fails (never skips) without them.

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::serve::free_port;
use crate::{Outcome, Run, Running};

pub const INSTALL: &str = "apt-get install -y openssh-server";

/// An OpenSSH program, by absolute path (`sshd` refuses to start otherwise: it re-executes
/// itself). Panics with the install command when it is missing.
pub fn openssh(name: &str) -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/usr/local/sbin", "/sbin"].map(PathBuf::from))
        .map(|dir| dir.join(name))
        .find(|p| p.is_file() && p.is_absolute())
        .unwrap_or_else(|| {
            panic!(
                "\n\n*** OpenSSH's {name} is required for the svn+ssh:// tests: {INSTALL} ***\n\
                 (searched PATH={path:?}, /usr/sbin, /usr/local/sbin, /sbin)\n"
            )
        })
}

/// The name of the account this test runs as (what ssh logs in as, and the author
/// `svnserve -t` records without `--tunnel-user`).
pub fn login_name() -> String {
    let name = Run::new("id").arg("-un").success().stdout_text();
    let name = name.trim().to_string();
    assert!(!name.is_empty(), "id -un printed nothing");
    name
}

/// A fresh ed25519 key pair `dir/name` (no passphrase); returns the private key's path
/// and the public key line.
pub fn keygen(dir: &Path, name: &str) -> (PathBuf, String) {
    let key = dir.join(name);
    Run::new(openssh("ssh-keygen"))
        .args(["-q", "-t", "ed25519", "-N", "", "-C", name, "-f"])
        .arg(&key)
        .success();
    let public = key.with_extension("pub");
    let line =
        std::fs::read_to_string(&public).unwrap_or_else(|e| panic!("cannot read {public:?}: {e}"));
    (key, line.trim().to_string())
}

/// `path` quoted for the shell that runs an `authorized_keys` forced command.
pub fn quoted(path: &Path) -> String {
    let text = path.display().to_string();
    assert!(
        !text.contains(['\'', '"', '\\']),
        "cannot quote {text:?} in authorized_keys"
    );
    format!("'{text}'")
}

/// The `authorized_keys` line that lets `key` run only `command`.
pub fn forced(command: &str, public_key: &str) -> String {
    format!("command=\"{command}\",restrict {public_key}\n")
}

/// `sshd -D` on 127.0.0.1 with its own host key, configuration and `authorized_keys`,
/// logging to a file; killed when dropped.
pub struct Sshd {
    _process: Running,
    pub port: u16,
    log: PathBuf,
}

impl Sshd {
    pub fn start(dir: &Path, authorized_keys: &str) -> Sshd {
        let sshd = openssh("sshd");
        if is_root() {
            // Debian's sshd refuses to start as root without its privilege separation
            // directory (systemd's tmpfiles would make it; there is no systemd here).
            std::fs::create_dir_all("/run/sshd")
                .unwrap_or_else(|e| panic!("cannot create /run/sshd for sshd: {e}"));
        }
        let (host_key, _) = keygen(dir, "host_key");
        let keys_file = dir.join("authorized_keys");
        std::fs::write(&keys_file, authorized_keys)
            .unwrap_or_else(|e| panic!("cannot write {keys_file:?}: {e}"));
        let log = dir.join("sshd.log");
        let config = dir.join("sshd_config");
        let mut failures = Vec::new();
        // Another process may take the free port before sshd binds it: try a few.
        for _ in 0..5 {
            let port = free_port();
            std::fs::write(
                &config,
                format!(
                    "ListenAddress 127.0.0.1\n\
                     Port {port}\n\
                     HostKey {host}\n\
                     AuthorizedKeysFile {keys}\n\
                     PidFile {pid}\n\
                     StrictModes no\n\
                     UsePAM no\n\
                     PasswordAuthentication no\n\
                     KbdInteractiveAuthentication no\n\
                     PermitRootLogin prohibit-password\n\
                     PrintMotd no\n\
                     LogLevel INFO\n",
                    host = host_key.display(),
                    keys = keys_file.display(),
                    pid = dir.join("sshd.pid").display(),
                ),
            )
            .unwrap_or_else(|e| panic!("cannot write {config:?}: {e}"));
            let _ = std::fs::remove_file(&log);
            let mut process = Run::new(&sshd)
                .arg("-D")
                .arg("-f")
                .arg(&config)
                .arg("-E")
                .arg(&log)
                .timeout(Duration::from_secs(300))
                .spawn();
            let deadline = Instant::now() + Duration::from_secs(10);
            loop {
                if TcpStream::connect(("127.0.0.1", port)).is_ok() && !process.has_exited() {
                    return Sshd {
                        _process: process,
                        port,
                        log,
                    };
                }
                if process.has_exited() || Instant::now() > deadline {
                    let outcome = process.kill();
                    let text = std::fs::read_to_string(&log).unwrap_or_default();
                    failures.push(format!("{outcome}\n  sshd.log:\n{text}"));
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        panic!(
            "sshd did not start listening on 127.0.0.1 (is openssh-server installed? \
             {INSTALL}):\n{}",
            failures.join("\n")
        );
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The tunnel agent that logs in to this sshd with `key` (what `SVN_SSH` is set to):
    /// no configuration, no questions, no known hosts.
    pub fn ssh_command(&self, key: &Path) -> String {
        format!(
            "{} -p {} -i {} -F none -o IdentitiesOnly=yes -o BatchMode=yes \
             -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR",
            openssh("ssh").display(),
            self.port,
            key.display()
        )
    }

    /// `svn ARGS` in `cwd` with `SVN_SSH` set to log in to this sshd with `key`.
    pub fn svn(&self, key: &Path, cwd: &Path, args: &[&str]) -> Outcome {
        let ssh = self.ssh_command(key);
        Run::tool("svn")
            .arg("--config-dir")
            .arg(cwd.join(".svn-config"))
            .args(["--non-interactive", "--no-auth-cache"])
            .args(args)
            .current_dir(cwd)
            .env("SVN_SSH", ssh)
            .env("LC_ALL", "C.UTF-8")
            .env("TZ", "UTC")
            .timeout(Duration::from_secs(60))
            .output()
    }
}

pub fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self")
        .map(|m| m.uid() == 0)
        .unwrap_or(false)
}
