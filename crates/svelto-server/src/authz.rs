//! Path-based authorization in the server: loading `authz-db` (and `groups-db`) for each
//! connection, and the checks svnserve makes with it (`serve.c`: `lookup_access`,
//! `must_have_access`, the authz read function handed to the repository layer).

use crate::error::{code, CmdError};
use crate::Shared;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use svelto_repos::authz::{Authz, READ, WRITE};
use svelto_repos::conf::{AccessFile, SvnserveConf, UsernameCase};
use svelto_repos::report::ReadCheck;
use svelto_store::Repo;

/// A connection's authz rules, its repository's name for them, and the user name case.
#[derive(Debug, Clone)]
pub struct AuthzCtx {
    pub authz: Arc<Authz>,
    /// The repository's path below the server root (`[name:/path]` sections); None when the
    /// root is the repository itself (then only global sections apply, as in svnserve).
    pub repos: Option<String>,
    pub case: UsernameCase,
}

/// What a command needs from the session's user before it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Needs {
    Read,
    Write,
    /// Write, by a named user (locks belong to someone).
    WriteAsUser,
}

/// What a command's auth slot checks the rules against.
#[derive(Debug, Clone)]
pub enum Where {
    /// Nothing (svnserve's trivial auth request; the command filters by itself).
    Blanket,
    /// A repository relpath.
    Path(String),
    /// Anywhere in the repository (svnserve passes no path: commit, revprop changes, the
    /// lock and unlock of many paths).
    Anywhere,
}

/// The authz rules for a connection to the repository in `repo_dir`, read now (so that
/// edits apply to the next connection). A file that cannot be read or parsed refuses the
/// connection with svnserve's generic answer; the details go to the log.
pub fn load(
    shared: &Shared,
    conf: &SvnserveConf,
    repo: &Repo,
    repo_dir: &Path,
) -> Result<Option<AuthzCtx>, CmdError> {
    let Some(file) = &conf.authz_db else {
        return Ok(None);
    };
    let refuse = |why: String| {
        shared.log.line(&format!(
            "{}: refusing the connection: invalid authz configuration: {why}",
            repo_dir.display()
        ));
        CmdError::new(code::AUTHZ_INVALID_CONFIG, "")
    };
    let (data, name) = read_access_file(file, repo, repo_dir).map_err(&refuse)?;
    let groups = match &conf.groups_db {
        Some(g) => Some(read_access_file(g, repo, repo_dir).map_err(&refuse)?),
        None => None,
    };
    let authz = Authz::parse(
        &data,
        &name,
        groups.as_ref().map(|(d, n)| (d.as_slice(), n.as_path())),
    )
    .map_err(|e| {
        refuse(format!(
            "Error while parsing authz file: '{}': {}{}",
            e.file.display(),
            e.svn_message(),
            e.line.map(|l| format!(" (line {l})")).unwrap_or_default()
        ))
    })?;
    let repos = repo_dir
        .strip_prefix(&shared.config.root)
        .ok()
        .map(|p| p.to_string_lossy().into_owned())
        .filter(|p| !p.is_empty());
    Ok(Some(AuthzCtx {
        authz: Arc::new(authz),
        repos,
        case: conf.force_username_case,
    }))
}

/// The bytes of an authz or groups file and the name to give it in messages. `^/path` and
/// `file://` URLs into this repository are read from its youngest revision.
fn read_access_file(
    file: &AccessFile,
    repo: &Repo,
    repo_dir: &Path,
) -> Result<(Vec<u8>, PathBuf), String> {
    let in_repo = |path: &str| -> Result<(Vec<u8>, PathBuf), String> {
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

    /// Whether the rules let `user` do what a command's slot asks for.
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

    /// The read check handed to the repository layer.
    pub fn read_check(&self, user: Option<&str>) -> ReadCheck {
        let ctx = self.clone();
        let user = self.user(user);
        Box::new(move |path: &str| {
            ctx.authz
                .check(ctx.repos.as_deref(), path, user.as_deref(), READ)
        })
    }
}

/// The commit editor's refusal of a path: "Access denied" (not readable / not writable).
pub fn access_denied(write: bool) -> CmdError {
    let code = if write { 220004 } else { 220001 };
    CmdError::new(code, "Access denied")
}

/// A [`ReadCheck`] as the repository layer's history and replay functions take it.
pub fn readable(check: &Option<ReadCheck>) -> Option<svelto_repos::Readable<'_>> {
    check.as_ref().map(|c| c.as_ref() as &dyn Fn(&str) -> bool)
}
