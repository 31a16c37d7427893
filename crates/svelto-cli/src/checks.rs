//! What `svelto serve` warns about when it starts (on standard error and in its log):
//! configuration it will read that does not say what it seems to (unknown sections,
//! options and values, comments that are part of a value: `svelto_repos::conf_check`), and
//! configured password, htpasswd, authz and LDAP (bind password, CA) files that exist but
//! that the user the server runs as cannot read, an `[ldap]` section it cannot use, each with the file, that user and the fix. The server still
//! starts: svnserve.conf is read again for every connection, so a fix applies at once.

use std::collections::BTreeSet;
use std::io::Read;
use std::path::{Path, PathBuf};

use svelto_repos::conf::{AccessFile, SvnserveConf};
use svelto_repos::conf_check;

/// Repositories looked at under the root at most (their svnserve.conf and the files it
/// names); a root with more is checked for its first ones only.
const MAX_REPOSITORIES: usize = 1000;

/// The account the server runs as: its user and group names (numbers when unnamed).
fn account() -> (String, String) {
    let uid = rustix::process::geteuid().as_raw();
    let gid = rustix::process::getegid().as_raw();
    let name_of = |file: &str, id: u32| {
        std::fs::read_to_string(file)
            .ok()
            .and_then(|text| {
                text.lines().find_map(|l| {
                    let f: Vec<&str> = l.split(':').collect();
                    (f.len() > 2 && f[2].parse() == Ok(id) && !f[0].is_empty())
                        .then(|| f[0].to_string())
                })
            })
            .unwrap_or_else(|| id.to_string())
    };
    (name_of("/etc/passwd", uid), name_of("/etc/group", gid))
}

/// What a configured file is, for messages.
struct Named {
    file: PathBuf,
    /// e.g. "the password file (password-db in /srv/svelto/p/conf/svnserve.conf)".
    what: String,
    kind: Kind,
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Svnserve,
    Passwd,
    Htpasswd,
    Authz,
    Groups,
    /// `[ldap] bind-password-file` or `ca-file`.
    Ldap,
}

/// The warnings for a server serving `root` (`-r`), with `--config-file` `config_file`,
/// `--http-auth-file` `http_auth_file`, over HTTP too when `http`.
pub fn startup_warnings(
    root: &Path,
    config_file: Option<&Path>,
    http_auth_file: Option<&Path>,
    http: bool,
) -> Vec<String> {
    let mut confs = Vec::new();
    match config_file {
        Some(f) => confs.push((f.to_path_buf(), f.parent().unwrap_or(Path::new("/")).into())),
        None => {
            let mut dirs = vec![root.to_path_buf()];
            if let Ok(entries) = std::fs::read_dir(root) {
                let mut subs: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
                subs.sort();
                dirs.extend(subs);
            }
            for d in dirs
                .into_iter()
                .filter(|d| d.join("format").is_file() && d.join("db").is_dir())
                .take(MAX_REPOSITORIES)
            {
                let conf = d.join("conf");
                confs.push((conf.join("svnserve.conf"), conf));
            }
        }
    }
    let (user, group) = account();
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    let mut check = |n: Named, out: &mut Vec<String>| {
        if seen.insert(n.file.clone()) {
            check_file(&n, &user, &group, out);
        }
    };
    if let (Some(f), true) = (http_auth_file, http) {
        let what = "the HTTP password file (--http-auth-file)".to_string();
        check(
            Named {
                file: f.to_path_buf(),
                what,
                kind: Kind::Htpasswd,
            },
            &mut out,
        );
    }
    for (file, base) in confs {
        if !file.exists() {
            continue;
        }
        let what = "the server configuration".to_string();
        check(
            Named {
                file: file.clone(),
                what,
                kind: Kind::Svnserve,
            },
            &mut out,
        );
        let repos_conf = file.parent().unwrap_or(Path::new("/")).to_path_buf();
        let conf = match SvnserveConf::load(&file, false, &base, &repos_conf) {
            Ok(conf) => conf,
            // An [ldap] setting the server cannot use (conf_check knows only the names).
            Err(e) if e.to_string().contains("[ldap]") => {
                out.push(format!(
                    "warning: {e}: every request to the repository is refused (500) until it \
                     is fixed"
                ));
                continue;
            }
            Err(_) => continue, // unreadable or a syntax error: already said by check_file
        };
        let of = |option: &str| format!("{option} in {}", file.display());
        if let Some(p) = &conf.password_db {
            let what = format!("the password file ({})", of("password-db"));
            check(
                Named {
                    file: p.clone(),
                    what,
                    kind: Kind::Passwd,
                },
                &mut out,
            );
        }
        if let (Some(p), true, None) = (&conf.http_password_db, http, http_auth_file) {
            let what = format!("the HTTP password file ({})", of("[http] password-db"));
            check(
                Named {
                    file: p.clone(),
                    what,
                    kind: Kind::Htpasswd,
                },
                &mut out,
            );
        }
        if let Some(AccessFile::Path(p)) = &conf.authz_db {
            let what = format!("the authz file ({})", of("authz-db"));
            check(
                Named {
                    file: p.clone(),
                    what,
                    kind: Kind::Authz,
                },
                &mut out,
            );
        }
        if let (Some(l), true) = (&conf.ldap, http) {
            let files = [
                (&l.bind_password_file, "bind-password-file"),
                (&l.ca_file, "ca-file"),
            ];
            for (p, option) in files {
                if let Some(p) = p {
                    let what = format!("the LDAP {option} ({})", of(&format!("[ldap] {option}")));
                    check(
                        Named {
                            file: p.clone(),
                            what,
                            kind: Kind::Ldap,
                        },
                        &mut out,
                    );
                }
            }
        }
        if let Some(AccessFile::Path(p)) = &conf.groups_db {
            let what = format!("the groups file ({})", of("groups-db"));
            check(
                Named {
                    file: p.clone(),
                    what,
                    kind: Kind::Groups,
                },
                &mut out,
            );
        }
    }
    out
}

/// Reads the file `n` names and adds what is wrong with it to `out`.
fn check_file(n: &Named, user: &str, group: &str, out: &mut Vec<String>) {
    let file = n.file.display();
    let mut data = Vec::new();
    let read = std::fs::File::open(&n.file).and_then(|f| f.take(64 << 20).read_to_end(&mut data));
    match read {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            // A missing --http-auth-file is said where it is configured (it may come later).
            if n.kind != Kind::Htpasswd || !n.what.contains("--http-auth-file") {
                let effect = match n.kind {
                    Kind::Passwd | Kind::Htpasswd => "logins fail until it exists",
                    Kind::Authz | Kind::Groups => "every request is refused until it exists",
                    Kind::Ldap => "LDAP logins get 503 until it exists",
                    Kind::Svnserve => "the defaults apply",
                };
                out.push(format!(
                    "warning: {} '{file}' does not exist: {effect}",
                    n.what
                ));
            }
            return;
        }
        Err(e) => {
            let effect = match n.kind {
                Kind::Passwd | Kind::Htpasswd => {
                    "every login fails (E175002: The server's password file cannot be read)"
                }
                Kind::Authz | Kind::Groups | Kind::Svnserve => {
                    "every request is refused (E170001: No access allowed)"
                }
                Kind::Ldap => "LDAP logins get 503 (The LDAP directory ... is unavailable)",
            };
            out.push(format!(
                "warning: {} '{file}' exists but user '{user}', whom the server runs as, \
                 cannot read it ({e}): {effect}; fix: chgrp {group} '{file}' && chmod g+r \
                 '{file}' (and let group {group} enter the directories above it), or run the \
                 server as a user who can read it",
                n.what
            ));
            return;
        }
    }
    let problems = match n.kind {
        Kind::Svnserve => conf_check::check_svnserve_conf(&data),
        Kind::Passwd => conf_check::check_passwd(&data),
        Kind::Authz => conf_check::check_authz(&data, &n.file),
        Kind::Htpasswd | Kind::Groups | Kind::Ldap => Vec::new(),
    };
    for p in problems {
        let at = if p.line > 0 {
            format!("{file}:{}", p.line)
        } else {
            file.to_string()
        };
        out.push(format!("warning: {at}: {}", p.what));
    }
}

/// Says `warnings` on standard error.
pub fn print(warnings: &[String]) {
    use std::io::Write;
    let mut err = std::io::stderr().lock();
    for w in warnings {
        let _ = writeln!(err, "{w}");
    }
}

/// The repositories' root as `-r` names it, made absolute and resolved; refused as svnserve
/// refuses it (E200009, naming the path as it was given) when it is not a directory: a
/// file, or nothing.
pub fn root_dir(r: &Path) -> anyhow::Result<PathBuf> {
    match r.canonicalize() {
        Ok(p) if p.is_dir() => Ok(p),
        _ => anyhow::bail!(
            "E200009: Root path '{}' does not exist or is not a directory",
            r.display()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ldap_files_and_settings_are_checked_at_start() {
        let dir = tempfile::tempdir().expect("tmp");
        let repo = dir.path().join("repo");
        std::fs::create_dir_all(repo.join("db")).expect("db");
        std::fs::create_dir_all(repo.join("conf")).expect("conf");
        std::fs::write(repo.join("format"), "5\n").expect("format");
        let conf = repo.join("conf/svnserve.conf");
        std::fs::write(
            &conf,
            "[ldap]\nurl = ldap://127.0.0.1/dc=e\nbind-dn = cn=s\nbind-password-file = gone\n",
        )
        .expect("conf");
        let w = startup_warnings(dir.path(), None, None, true);
        assert!(
            w.iter().any(|w| w.contains("LDAP bind-password-file")
                && w.contains("does not exist: LDAP logins get 503")),
            "{w:?}"
        );
        assert!(startup_warnings(dir.path(), None, None, false).is_empty());
        std::fs::write(&conf, "[ldap]\nurl = ldap://127.0.0.1/dc=e?uid?deep\n").expect("conf");
        let w = startup_warnings(dir.path(), None, None, false);
        assert!(
            w.iter()
                .any(|w| w.contains("'[ldap] url'") && w.contains("refused (500)")),
            "{w:?}"
        );
    }
}
