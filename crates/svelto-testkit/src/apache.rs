//! Apache httpd with mod_dav_svn (Debian's `apache2` and `libapache2-mod-svn`): the
//! reference `http://` server, started on 127.0.0.1 on a free port with a generated
//! configuration (`SVNParentPath ROOT` under a `<Location PREFIX>`), in the foreground
//! under the same watchdog as svnserve, so it never outlives the test process.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::serve::{free_port, spawn_watched, Server, ServerKind};

/// Debian's httpd binary.
pub const APACHE_BINARY: &str = "/usr/sbin/apache2";
/// Where Debian puts Apache's modules.
pub const MODULE_DIR: &str = "/usr/lib/apache2/modules";

const INSTALL: &str = "apt-get install apache2 libapache2-mod-svn (or run scripts/setup)";

/// Panics, saying what to install, unless Apache and mod_dav_svn are there.
pub fn require_apache() {
    if !Path::new(APACHE_BINARY).is_file() {
        panic!("\n\n*** Apache httpd ({APACHE_BINARY}) is required: {INSTALL} ***\n");
    }
    for module in [
        "mod_dav.so",
        "mod_dav_svn.so",
        "mod_mpm_event.so",
        "mod_authz_core.so",
    ] {
        let path = Path::new(MODULE_DIR).join(module);
        if !path.is_file() {
            panic!(
                "\n\n*** Apache's {module} ({}) is required: {INSTALL} ***\n",
                path.display()
            );
        }
    }
}

/// The modules of HTTP Basic authentication and mod_authz_svn (and `Satisfy`).
const AUTH_MODULES: &[(&str, &str)] = &[
    ("authn_core_module", "mod_authn_core.so"),
    ("authn_file_module", "mod_authn_file.so"),
    ("auth_basic_module", "mod_auth_basic.so"),
    ("authz_user_module", "mod_authz_user.so"),
    ("access_compat_module", "mod_access_compat.so"),
    ("authz_svn_module", "mod_authz_svn.so"),
];

/// A running Apache, as a [`Server`] whose base URL is `http://127.0.0.1:PORT/PREFIX`.
pub struct Apache(Server);

fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// Lets the account Apache's children run as (when started as root) reach `path`: every
/// directory above it searchable, and it and everything below readable and writable.
fn open_up(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let mut p = path.to_path_buf();
    while let Some(parent) = p.parent() {
        if let Ok(m) = std::fs::metadata(parent) {
            let mode = m.permissions().mode();
            if mode & 0o001 == 0 {
                let _ =
                    std::fs::set_permissions(parent, std::fs::Permissions::from_mode(mode | 0o011));
            }
        }
        p = parent.to_path_buf();
    }
    let status = std::process::Command::new("chmod")
        .args(["-R", "a+rwX"])
        .arg(path)
        .status();
    assert!(
        status.is_ok_and(|s| s.success()),
        "chmod -R a+rwX {} failed",
        path.display()
    );
}

impl Apache {
    /// Serves the repositories under `parent` (`SVNParentPath`) at `PREFIX/NAME`, with its
    /// configuration, pid file and logs in `dir`.
    pub fn start(parent: &Path, dir: &Path, prefix: &str) -> Apache {
        Apache::start_with(parent, dir, prefix, "")
    }

    /// [`Apache::start`] with more directives in the `<Location>` block (e.g. `AuthType
    /// Basic`, `AuthUserFile`, `AuthzSVNAccessFile`, `Satisfy Any`, `Require valid-user`:
    /// the modules they need are loaded when there are any).
    pub fn start_with(parent: &Path, dir: &Path, prefix: &str, location: &str) -> Apache {
        Apache::start_full(parent, dir, prefix, location, None)
    }

    /// [`Apache::start_with`], serving `https://` with `tls` = (certificate, key) in PEM
    /// when given (mod_ssl).
    pub fn start_full(
        parent: &Path,
        dir: &Path,
        prefix: &str,
        location: &str,
        tls: Option<(&Path, &Path)>,
    ) -> Apache {
        require_apache();
        let auth_modules = if location.is_empty() {
            String::new()
        } else {
            let mut lines = String::new();
            for (name, file) in AUTH_MODULES {
                let path = Path::new(MODULE_DIR).join(file);
                if !path.is_file() {
                    panic!(
                        "\n\n*** Apache's {file} ({}) is required: {INSTALL} ***\n",
                        path.display()
                    );
                }
                lines.push_str(&format!("LoadModule {name} {}\n", path.display()));
            }
            lines
        };
        let port = free_port();
        let conf = dir.join("httpd.conf");
        let run = dir.join("httpd-run");
        std::fs::create_dir_all(&run).unwrap_or_else(|e| panic!("cannot create {run:?}: {e}"));
        let user = if is_root() {
            // Apache refuses to serve as root: its children run as `daemon`, who must read
            // (and for FSFS's lock files, write) the repositories.
            open_up(parent);
            open_up(&run);
            "User daemon\nGroup daemon\n"
        } else {
            ""
        };
        let ssl = match tls {
            None => String::new(),
            Some((cert, key)) => {
                for file in ["mod_ssl.so", "mod_socache_shmcb.so"] {
                    let path = Path::new(MODULE_DIR).join(file);
                    if !path.is_file() {
                        panic!(
                            "\n\n*** Apache's {file} ({}) is required: {INSTALL} ***\n",
                            path.display()
                        );
                    }
                }
                format!(
                    "LoadModule socache_shmcb_module {MODULE_DIR}/mod_socache_shmcb.so\n\
                     LoadModule ssl_module {MODULE_DIR}/mod_ssl.so\n\
                     SSLEngine on\nSSLCertificateFile {}\nSSLCertificateKeyFile {}\n",
                    cert.display(),
                    key.display()
                )
            }
        };
        let text = format!(
            "ServerName 127.0.0.1\n\
             Listen 127.0.0.1:{port}\n\
             PidFile {run}/httpd.pid\n\
             DefaultRuntimeDir {run}\n\
             ErrorLog {dir}/error.log\n\
             LogLevel warn\n\
             LogFormat \"%h %l %u %t \\\"%r\\\" %>s %b \\\"%{{Referer}}i\\\" \\\"%{{User-agent}}i\\\"\" combined\n\
             CustomLog {dir}/access.log combined\n\
             CustomLog {dir}/svn-action.log \"%t %u %{{SVN-ACTION}}e\" env=SVN-ACTION\n\
             {user}\
             LoadModule mpm_event_module {MODULE_DIR}/mod_mpm_event.so\n\
             LoadModule authz_core_module {MODULE_DIR}/mod_authz_core.so\n\
             LoadModule dav_module {MODULE_DIR}/mod_dav.so\n\
             LoadModule dav_svn_module {MODULE_DIR}/mod_dav_svn.so\n\
             {auth_modules}\
             {ssl}\
             <Location {prefix}>\n  DAV svn\n  SVNParentPath {parent}\n{location}</Location>\n",
            run = run.display(),
            dir = dir.display(),
            parent = parent.display(),
        );
        std::fs::write(&conf, text).unwrap_or_else(|e| panic!("cannot write {conf:?}: {e}"));
        let args: Vec<OsString> = vec!["-f".into(), conf.clone().into(), "-DFOREGROUND".into()];
        let watched = spawn_watched(Path::new(APACHE_BINARY), &args);
        let mut server = Server {
            kind: ServerKind::Apache,
            child: Some(watched.child),
            in_process: None,
            stdin: Some(watched.stdin),
            pid: watched.pid,
            port,
            base_url: format!(
                "{}://127.0.0.1:{port}{prefix}",
                if tls.is_some() { "https" } else { "http" }
            ),
            root: parent.to_owned(),
            log: watched.log,
            log_file: Some(dir.join("error.log")),
        };
        server.wait_listening("Apache");
        Apache(server)
    }

    pub fn into_server(self) -> Server {
        self.0
    }

    /// The generated configuration's path.
    pub fn config_path(dir: &Path) -> PathBuf {
        dir.join("httpd.conf")
    }
}
