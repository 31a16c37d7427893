//! Who may read what over HTTP, from the same configuration the svn:// side reads: the
//! repository's `conf/svnserve.conf` (or `--config-file`), its `anon-access` and its
//! `authz-db` (and `groups-db`). Authentication over HTTP comes with the write path, so every
//! HTTP request is anonymous for now: a repository with `anon-access = none` answers 401
//! to everything, and with `authz-db` the anonymous user's rules decide, as
//! mod_authz_svn decides for an unauthenticated request (401 for a URL that cannot be read;
//! unreadable entries left out of listings and reports, as svnserve filters them).

use crate::error::HttpError;
use crate::uri::Target;
use crate::State;
use hyper::StatusCode;
use std::sync::Arc;
use svelto_repos::authz::{Authz, READ};
use svelto_repos::conf::{Access, AccessFile, SvnserveConf};

/// What anonymous HTTP requests may read in one repository.
#[derive(Clone)]
pub(crate) enum Gate {
    /// Everything (`anon-access = read` or `write`, no `authz-db`).
    Open,
    /// The anonymous user's rules of an authz file; the repository's name for its sections.
    Rules(Arc<Authz>, Option<String>),
}

/// The 401 an unauthenticated request for something protected gets.
pub(crate) fn unauthorized(what: &str) -> HttpError {
    HttpError::svn(
        StatusCode::UNAUTHORIZED,
        220001,
        format!("Authorization failed: anonymous access to '{what}' is not allowed"),
    )
}

fn read_file(file: &AccessFile) -> Result<(Vec<u8>, std::path::PathBuf), HttpError> {
    match file {
        AccessFile::Path(p) => std::fs::read(p).map(|d| (d, p.clone())).map_err(|e| {
            HttpError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("Can't open the authz file '{}': {e}", p.display()),
            )
        }),
        // Files inside a repository (^/ and file:// URLs) are read by the svn:// side only
        // for now; nothing is served rather than everything.
        other => Err(unauthorized(&format!(
            "this repository (its authz file '{other}' is not read over HTTP yet)"
        ))),
    }
}

impl Gate {
    /// The gate of the repository a request names, read for each request (so edits apply
    /// at once, as on svn:// for each connection). `anon-access = none` refuses here.
    pub fn load(state: &State, target: &Target) -> Result<Gate, HttpError> {
        let conf_dir = target.repo_dir.join("conf");
        let conf = match &state.config.config_file {
            Some(f) => {
                let base = f.parent().unwrap_or(std::path::Path::new("/"));
                SvnserveConf::load(f, true, base, &conf_dir)
            }
            None => SvnserveConf::for_repository(&target.repo_dir),
        }
        .map_err(|e| HttpError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
        if conf.anon_access == Access::None {
            return Err(unauthorized(&target.repo_name));
        }
        let Some(file) = &conf.authz_db else {
            return Ok(Gate::Open);
        };
        let (data, name) = read_file(file)?;
        let groups = conf.groups_db.as_ref().map(read_file).transpose()?;
        let authz = Authz::parse(
            &data,
            &name,
            groups.as_ref().map(|(d, n)| (d.as_slice(), n.as_path())),
        )
        .map_err(|e| {
            HttpError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!(
                    "Error while parsing authz file: '{}': {}",
                    e.file.display(),
                    e.svn_message()
                ),
            )
        })?;
        Ok(Gate::Rules(Arc::new(authz), Some(target.repo_name.clone())))
    }

    /// Whether anonymous requests may read the repository relpath `path`.
    pub fn can_read(&self, path: &str) -> bool {
        match self {
            Gate::Open => true,
            Gate::Rules(authz, repos) => authz.check(repos.as_deref(), path, None, READ),
        }
    }

    /// Refuses with 401 unless `path` may be read.
    pub fn require(&self, path: &str) -> Result<(), HttpError> {
        if self.can_read(path) {
            Ok(())
        } else {
            Err(unauthorized(&format!("/{path}")))
        }
    }

    /// The check handed to svelto-repos' drives and queries (None when everything is
    /// readable, so they skip the checks).
    pub fn read_check(&self) -> Option<svelto_repos::report::ReadCheck> {
        match self {
            Gate::Open => None,
            g => {
                let g = g.clone();
                Some(Box::new(move |p: &str| g.can_read(p)))
            }
        }
    }
}
