//! Path-based authorization for a client of the repository: loading `authz-db` (and
//! `groups-db`) when the client connects, and the checks svnserve and mod_dav_svn make
//! with it (`serve.c`: `lookup_access`, the authz read function handed to the repository
//! layer; `mod_authz_svn`).

use crate::authz::{Authz, READ, WRITE};
use crate::conf::{AccessFile, UsernameCase};
use crate::report::ReadCheck;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use svelto_fs::ReadRepo;

/// A client's authz rules, its repository's name for them, and the user name case.
#[derive(Debug, Clone)]
pub struct AuthzCtx {
    pub authz: Arc<Authz>,
    /// The repository's path below the server root (`[name:/path]` sections); None when the
    /// root is the repository itself (then only global sections apply, as in svnserve).
    pub repos: Option<String>,
    pub case: UsernameCase,
}

/// What a request's access is checked against before it runs.
#[derive(Debug, Clone)]
pub enum Where {
    /// Nothing (the request filters what it reads by itself).
    Blanket,
    /// A repository relpath.
    Path(String),
    /// Anywhere in the repository (svnserve passes no path: commit, revprop changes, the
    /// lock and unlock of many paths).
    Anywhere,
}

/// Where a repository's authz rules come from.
#[derive(Debug, Clone)]
pub struct AuthzSource<'a> {
    /// `authz-db`.
    pub rules: &'a AccessFile,
    /// `groups-db`.
    pub groups: Option<&'a AccessFile>,
    /// `force-username-case`.
    pub case: UsernameCase,
    /// The repository's path below the server root (see [`AuthzCtx::repos`]).
    pub repos: Option<String>,
}

/// The authz rules for a client of the repository in `repo_dir`, read now (so that edits
/// apply to the next connection). `Err` says why the files cannot be used (for the log;
/// the client is refused without details, as svnserve does).
pub fn load(
    src: AuthzSource<'_>,
    repo: &dyn ReadRepo,
    repo_dir: &Path,
) -> Result<AuthzCtx, String> {
    load_from(src, Some(repo), repo_dir)
}

/// [`load`] for a repository that does not exist (a URL naming a missing one): rules in
/// files on disk apply as to any name; rules read from a repository cannot be read (Err).
pub fn load_without_repository(src: AuthzSource<'_>, repo_dir: &Path) -> Result<AuthzCtx, String> {
    load_from(src, None, repo_dir)
}

fn load_from(
    src: AuthzSource<'_>,
    repo: Option<&dyn ReadRepo>,
    repo_dir: &Path,
) -> Result<AuthzCtx, String> {
    let (data, name) = read_access_file(src.rules, repo, repo_dir)?;
    let groups = match src.groups {
        Some(g) => Some(read_access_file(g, repo, repo_dir)?),
        None => None,
    };
    let authz = Authz::parse(
        &data,
        &name,
        groups.as_ref().map(|(d, n)| (d.as_slice(), n.as_path())),
    )
    .map_err(|e| {
        format!(
            "Error while parsing authz file: '{}': {}{}",
            e.file.display(),
            e.svn_message(),
            e.line.map(|l| format!(" (line {l})")).unwrap_or_default()
        )
    })?;
    Ok(AuthzCtx {
        authz: Arc::new(authz),
        repos: src.repos,
        case: src.case,
    })
}

/// The bytes of an authz or groups file and the name to give it in messages. `^/path` and
/// `file://` URLs into this repository are read from its youngest revision.
fn read_access_file(
    file: &AccessFile,
    repo: Option<&dyn ReadRepo>,
    repo_dir: &Path,
) -> Result<(Vec<u8>, PathBuf), String> {
    let in_repo = |path: &str| -> Result<(Vec<u8>, PathBuf), String> {
        let Some(repo) = repo else {
            return Err(format!("'{file}': there is no repository to read it from"));
        };
        let path = path.trim_matches('/');
        let rev = repo.refresh().map_err(|e| e.to_string())?;
        let (_, node) = repo
            .node_at(rev, path)
            .map_err(|e| format!("'{file}': {e}"))?;
        if node.kind != svelto_core::NodeKind::File {
            return Err(format!("'{file}' is not a file in revision {rev}"));
        }
        let mut out = Vec::new();
        repo.write_text(&node.file_text(), &mut out)
            .map_err(|e| format!("'{file}': {e}"))?;
        Ok((out, PathBuf::from(file.to_string())))
    };
    match file {
        AccessFile::Path(p) => std::fs::read(p)
            .map(|d| (d, p.clone()))
            .map_err(|e| format!("Can't open file '{}': {e}", p.display())),
        AccessFile::ReposRelative(u) => in_repo(u.trim_start_matches('^')),
        AccessFile::Url(u) => {
            let Some(rest) = u.strip_prefix("file://") else {
                return Err(format!("'{u}': only file:// URLs can name an authz file"));
            };
            let abs = percent_decode(rest.strip_prefix("localhost").unwrap_or(rest));
            let dir = repo_dir.to_string_lossy();
            match abs.strip_prefix(dir.as_ref()) {
                Some(inside) if inside.is_empty() || inside.starts_with('/') => in_repo(inside),
                _ => Err(format!(
                    "'{u}': Svelto reads authz files from URLs only inside the repository \
                     being served ({dir})"
                )),
            }
        }
    }
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let Ok(v) = u8::from_str_radix(&s[i + 1..i + 3], 16) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn bits(write: bool) -> u8 {
    if write {
        READ | WRITE
    } else {
        READ
    }
}

impl AuthzCtx {
    /// The rules for `user` (force-username-case applied).
    fn user(&self, user: Option<&str>) -> Option<String> {
        user.map(|u| self.case.apply(u))
    }

    /// Whether the rules let `user` read (`write`: write) at `at`.
    pub fn allows(&self, user: Option<&str>, at: &Where, write: bool) -> bool {
        let user = self.user(user);
        let rules = self.authz.rules_for(self.repos.as_deref(), user.as_deref());
        match at {
            Where::Blanket => true,
            Where::Path(p) => rules.check(p, bits(write)),
            Where::Anywhere => rules.anywhere(bits(write)),
        }
    }

    /// Whether `user` may read (`write`: write) `path` and everything below it.
    pub fn allows_recursive(&self, user: Option<&str>, path: &str, write: bool) -> bool {
        let user = self.user(user);
        self.authz
            .rules_for(self.repos.as_deref(), user.as_deref())
            .check_recursive(path, bits(write))
    }

    /// The read check handed to the report, history and replay drives.
    pub fn read_check(&self, user: Option<&str>) -> ReadCheck {
        let ctx = self.clone();
        let user = self.user(user);
        Box::new(move |path: &str| {
            ctx.authz
                .check(ctx.repos.as_deref(), path, user.as_deref(), READ)
        })
    }
}
