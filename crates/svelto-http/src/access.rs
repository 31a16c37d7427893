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
use svelto_repos::conf::{Access, SvnserveConf};
use svelto_repos::service::{AuthzCtx, AuthzSource, Where};
use svelto_store::Repo;

/// What anonymous HTTP requests may read in one repository.
#[derive(Clone)]
pub(crate) enum Gate {
    /// Everything (`anon-access = read` or `write`, no `authz-db`).
    Open,
    /// The authz rules (read by svelto-repos' service layer, as for svn:// clients: files on
    /// disk, or `^/` and `file://` URLs into the repository), applied to the anonymous user.
    Rules(Arc<AuthzCtx>),
}

/// The 401 an unauthenticated request for something protected gets.
pub(crate) fn unauthorized(what: &str) -> HttpError {
    HttpError::svn(
        StatusCode::UNAUTHORIZED,
        220001,
        format!("Authorization failed: anonymous access to '{what}' is not allowed"),
    )
}

impl Gate {
    /// The gate of the repository a request names, read for each request (so edits apply
    /// at once, as on svn:// for each connection). `anon-access = none` refuses here; an
    /// authz file that cannot be read or parsed is a 500 naming it (svnserve refuses the
    /// connection and logs the same words).
    pub fn load(state: &State, target: &Target, repo: &Repo) -> Result<Gate, HttpError> {
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
        let Some(rules) = &conf.authz_db else {
            return Ok(Gate::Open);
        };
        let src = AuthzSource {
            rules,
            groups: conf.groups_db.as_ref(),
            case: conf.force_username_case,
            repos: Some(target.repo_name.clone()),
        };
        let ctx =
            svelto_repos::service::authz::load(src, repo, &target.repo_dir).map_err(|why| {
                HttpError::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    format!("Invalid authz configuration: {why}"),
                )
            })?;
        Ok(Gate::Rules(Arc::new(ctx)))
    }

    /// Whether anonymous requests may read the repository relpath `path`.
    pub fn can_read(&self, path: &str) -> bool {
        match self {
            Gate::Open => true,
            Gate::Rules(ctx) => ctx.allows(None, &Where::Path(path.to_string()), false),
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
