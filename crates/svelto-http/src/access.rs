//! Who a request is and what it may do, from the same configuration the svn:// side reads:
//! the repository's `conf/svnserve.conf` (or `--config-file`) with its `anon-access`,
//! `auth-access`, `realm`, `authz-db` and `groups-db`, and the password file for HTTP
//! Basic logins: an LDAP directory when svnserve.conf's `[ldap]` names one (`ldap.rs`),
//! else an Apache password file (`--http-auth-file`, else svnserve.conf's `[http]
//! password-db`) when one is given, else svnserve.conf's own `password-db`, the file
//! svn:// logins check: one user list for both protocols.
//!
//! The answers are Apache's with mod_authz_svn under `AuthType Basic`, `AuthUserFile`,
//! `AuthzSVNAccessFile`, `Satisfy Any` and `Require valid-user`:
//! - a request without credentials is anonymous; it gets what `anon-access` and the authz
//!   rules give anonymous users, and `401` with `WWW-Authenticate: Basic realm="REALM"`
//!   where a login could give more (so ra_serf asks for a password and caches it);
//! - a request with credentials has them checked, wherever it goes: a wrong password, an
//!   unknown user or a malformed header is a `401` (ra_serf asks again);
//! - a logged-in user refused by `auth-access` or the rules gets `403`;
//! - without a password file nobody can log in: what anonymous users may not do is `403`
//!   (mod_authz_svn without `AuthType`).
//!
//! The authz rules themselves, and the filtering of what a request reads, are
//! `svelto_repos::service`'s, as for svn:// clients: this module builds the request's
//! [`service::Ctx`] (the user, the rules) and refuses what the URL alone rules out.

use crate::auth::{LoginError, Presented};
use crate::error::HttpError;
use crate::uri::{Kind, Target};
use crate::State;
use hyper::{Method, StatusCode};
use std::path::{Path, PathBuf};
use svelto_repos::conf::{Access, LdapConf, PasswdDb};
use svelto_repos::service::{self, Opened, Where};

/// What the configuration lets the request's user do, beyond the authz rules.
#[derive(Clone)]
pub(crate) struct Gate {
    /// The realm of the challenge (svnserve.conf's `realm`, else the repository's UUID, as
    /// svnserve's).
    pub realm: String,
    /// What the user may do anywhere: `anon-access` or `auth-access` (capped at read by
    /// `-R`).
    pub level: Access,
    /// What a login would give (`auth-access`); None when nobody can log in (no password
    /// file).
    pub login: Option<Access>,
    /// Whether the request is anonymous.
    pub anonymous: bool,
}

impl Gate {
    /// The refusal of something the request's user may not do (`write`: a write).
    pub fn refuse(&self, write: bool) -> HttpError {
        let required = if write { Access::Write } else { Access::Read };
        let status = if self.anonymous && self.login.is_some_and(|l| l >= required) {
            StatusCode::UNAUTHORIZED
        } else {
            StatusCode::FORBIDDEN
        };
        HttpError::refused(status, self.login.map(|_| self.realm.clone()))
    }

    /// Refuses unless the blanket level allows the access.
    pub fn require_level(&self, write: bool) -> Result<(), HttpError> {
        let required = if write { Access::Write } else { Access::Read };
        if self.level >= required {
            Ok(())
        } else {
            Err(self.refuse(write))
        }
    }
}

/// Reads the configuration of the repository a request names, authenticates the request
/// and returns its service context (the user, the authz rules) and gate. Configuration
/// files are read for each request, so edits apply at once (as on svn:// for each
/// connection). An `svnserve.conf` or password file that cannot be read or parsed is a
/// `500` naming it (svnserve refuses the connection and logs the same words); an authz file
/// that cannot be read or parsed refuses every request as mod_authz_svn does (401 or 403),
/// its error in the log only.
pub(crate) fn admit(
    state: &State,
    target: &Target,
    (repo, writer): Opened,
    req: &crate::Req,
) -> Result<(service::Ctx, Gate), HttpError> {
    // Anonymous and without rules until admission has decided who the client is.
    // No look at the head here: the request's own (resource.rs) is the one it needs, and
    // on a cluster each look is a fence (an etcd round trip).
    let svc = service::Ctx::new(repo, writer, None, None, Default::default());
    let adm = state
        .host
        .admission(&target.repo_dir, || svc.uuid())
        .map_err(|e| HttpError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
    let conf = &adm.conf;
    let (user, ldap_groups, gate) = login(state, &adm, &target.repo_name, req)?;
    let authz = match adm.authz_source() {
        None => None,
        Some(src) => {
            match svc.load_authz(src, &target.repo_dir) {
                Ok(ctx) => Some(with_ldap_groups(ctx, user.as_deref(), &ldap_groups)),
                Err(why) => {
                    // mod_authz_svn logs "Failed to load the mod_authz_svn config" and
                    // declines, which refuses the request as rules that allow nothing
                    // would (401 where a login could help, else 403); the client is not
                    // told why, nor where the file is.
                    state.log(&format!(
                        "{}: Invalid authz configuration: {why}",
                        target.repo_name
                    ));
                    return Err(gate.refuse(crate::table::url_check(req.method.as_str()).writes()));
                }
            }
        }
    };
    let svc = svc.admitted(user, authz, conf.hooks_env.clone());
    Ok((svc, gate))
}

/// Who the request is, under `adm` (its repository's admission): the user a proxy named or
/// a login checked, the LDAP groups the login joins, and the gate. Err: a refused login
/// (401), a directory that cannot answer now (503), a password file that cannot be read.
fn login(
    state: &State,
    adm: &svelto_host::Admission,
    repo_name: &str,
    req: &crate::Req,
) -> Result<(Option<String>, Vec<String>, Gate), HttpError> {
    let conf = &adm.conf;
    let headers = &req.headers;
    // An LDAP directory, when `[ldap]` names one, wins; then an htpasswd file, when one is
    // given; then svnserve's password file.
    let password_file: Option<Passwords> = match (&conf.ldap, &state.config.auth_file) {
        (Some(l), _) => Some(Passwords::Ldap(Box::new(l.clone()))),
        (None, Some(f)) => Some(Passwords::Htpasswd(f.clone())),
        (None, None) => match &conf.http_password_db {
            Some(f) => Some(Passwords::Htpasswd(f.clone())),
            None => conf.password_db.clone().map(Passwords::Svnserve),
        },
    };
    // The groups an LDAP login joins in the authz rules.
    let mut ldap_groups = Vec::new();
    let mut gate = Gate {
        realm: adm.realm.clone(),
        level: adm.access(false),
        login: password_file.as_ref().map(|_| adm.access(true)),
        anonymous: true,
    };
    let presented = crate::auth::presented(headers);
    if presented == Presented::TooLong {
        return Err(HttpError::bad_request(
            "Size of a request header field exceeds server limit (Authorization)",
        ));
    }
    let mut user = proxied_user(state, req)?;
    if user.is_some() {
        // The proxy logged the user in.
    } else if let Some(passwords) = &password_file {
        let refused = |why: String| {
            state.log(&format!("{}: {why}", repo_name));
            HttpError::refused(StatusCode::UNAUTHORIZED, Some(gate.realm.clone()))
        };
        match presented {
            Presented::Nothing | Presented::TooLong => {}
            Presented::Malformed(why) => return Err(refused(why.to_string())),
            Presented::Basic {
                user: name,
                password,
            } => match passwords.check(state, &name, &password) {
                Ok(groups) => {
                    user = Some(name);
                    ldap_groups = groups;
                }
                Err(LoginError::Refused(why)) => return Err(refused(why)),
                Err(LoginError::Later) => {
                    return Err(HttpError::new(
                        StatusCode::SERVICE_UNAVAILABLE,
                        "The login is being checked",
                    ))
                }
                Err(LoginError::Unavailable(why)) => {
                    // Once per request asking the directory (those it accepted lately
                    // still log in meanwhile; anonymous requests never ask it).
                    state.log(&format!("{}: {why}", repo_name));
                    return Err(HttpError::new(StatusCode::SERVICE_UNAVAILABLE, why));
                }
                Err(LoginError::File(e)) => {
                    state.log(&format!(
                        "{}: cannot read the password file '{}': {e}",
                        repo_name,
                        passwords.file().display()
                    ));
                    return Err(HttpError::new(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        "The server's password file cannot be read",
                    ));
                }
            },
        }
    }
    if user.is_some() {
        gate.anonymous = false;
        gate.level = adm.access(true);
    }
    Ok((user, ldap_groups, gate))
}

/// The answer to a URL under the prefix that names no repository (`not_found`: mod_dav_svn's
/// 404), as Apache gives it under `SVNParentPath` with one `AuthzSVNAccessFile`:
/// mod_authz_svn asks the rules first, for the path in the repository the URL's first
/// segment names, so a client they refuse there gets the refusal of a forbidden path (401
/// where a login could help, else 403) and learns nothing of which names exist; a client
/// they allow gets the 404. With `--config-file` only: without it the rules live in each
/// repository's own `conf/`, and a missing repository has none.
pub(crate) fn missing(state: &State, req: &crate::Req, not_found: HttpError) -> HttpError {
    if state.host.config.config_file.is_none() {
        return not_found;
    }
    let Some((name, path)) = crate::uri::missing_repository(state, req.path()) else {
        return not_found;
    };
    let dir = state.host.config.root.join(&name);
    // The realm: the configuration's, else (no repository, so no UUID) the name.
    let Ok(adm) = state.host.admission(&dir, || Ok(name.clone())) else {
        return not_found;
    };
    let (user, ldap_groups, gate) = match login(state, &adm, &name, req) {
        Ok(who) => who,
        Err(e) => return e,
    };
    let check = crate::table::url_check(req.method.as_str());
    if let Err(refused) = gate.require_level(check.needs_write_level()) {
        return refused;
    }
    let write = check.writes();
    let Some(src) = adm.authz_source() else {
        return not_found;
    };
    let rules = match service::authz::load_without_repository(src, &dir) {
        Ok(rules) => with_ldap_groups(rules, user.as_deref(), &ldap_groups),
        // Rules that cannot be read refuse, as in a repository (see `admit`).
        Err(_) => return gate.refuse(write),
    };
    let at = if check == crate::table::UrlCheck::WriteAnywhere {
        Where::Anywhere
    } else {
        Where::Path(path)
    };
    if rules.allows(user.as_deref(), &at, write) {
        not_found
    } else {
        gate.refuse(write)
    }
}

/// The rules with the LDAP groups `user`'s login joined (`groups`) as members of the authz
/// groups of those names.
fn with_ldap_groups(
    mut rules: service::AuthzCtx,
    user: Option<&str>,
    groups: &[String],
) -> service::AuthzCtx {
    if let (Some(u), false) = (user, groups.is_empty()) {
        let u = rules.case.apply(u);
        if let Some(joined) = rules.authz.with_memberships(&u, groups) {
            rules.authz = std::sync::Arc::new(joined);
        }
    }
    rules
}

/// Where HTTP Basic logins are checked.
enum Passwords {
    /// An Apache password file (`htpasswd`'s hashes).
    Htpasswd(PathBuf),
    /// svnserve.conf's `password-db`: `[users]` with `name = password`, as svn:// reads it
    /// for CRAM-MD5 (read for each login, as for each svn:// connection).
    Svnserve(PathBuf),
    /// An LDAP directory (svnserve.conf's `[ldap]`, `ldap.rs`).
    Ldap(Box<LdapConf>),
}

impl Passwords {
    fn file(&self) -> &Path {
        match self {
            Passwords::Htpasswd(f) | Passwords::Svnserve(f) => f,
            Passwords::Ldap(l) => l.bind_password_file.as_deref().unwrap_or(Path::new("")),
        }
    }

    /// Checks a login; Ok: the LDAP groups the user joins (none for the files).
    fn check(&self, state: &State, user: &str, password: &[u8]) -> Result<Vec<String>, LoginError> {
        let file = match self {
            Passwords::Htpasswd(f) => {
                return state.logins.check(f, user, password).map(|()| vec![])
            }
            Passwords::Svnserve(f) => f,
            Passwords::Ldap(conf) => {
                if let Some(login) = state.directory.cached(conf, user, password) {
                    return Ok(login.groups.clone());
                }
                if !crate::may_block() {
                    return Err(LoginError::Later);
                }
                return match state.directory.check(conf, user, password) {
                    Ok(login) => Ok(login.groups.clone()),
                    Err(crate::ldap::Failure::Refused(why)) => Err(LoginError::Refused(why)),
                    Err(crate::ldap::Failure::Unavailable(why)) => {
                        Err(LoginError::Unavailable(why))
                    }
                };
            }
        };
        let db = PasswdDb::load(file)
            .map_err(|e| LoginError::File(std::io::Error::other(e.to_string())))?;
        let Some(stored) = db.password(user) else {
            return Err(LoginError::Refused(format!("user {user} not found")));
        };
        // Compared in time that depends on the lengths only.
        let same = stored.len() == password.len()
            && stored
                .bytes()
                .zip(password)
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                == 0;
        if same {
            Ok(vec![])
        } else {
            Err(LoginError::Refused(format!(
                "user {user}: authentication failure: Password Mismatch"
            )))
        }
    }
}

/// The user a trusted reverse proxy names in `--http-user-header` (None: no such header,
/// or not from a `--http-trusted-proxy` address, whose headers are not believed).
fn proxied_user(state: &State, req: &crate::Req) -> Result<Option<String>, HttpError> {
    let Some(name) = &state.config.user_header else {
        return Ok(None);
    };
    if !state.config.trusted_proxies.contains(&req.peer) {
        return Ok(None);
    }
    let mut values = req.headers.get_all(name.as_str()).iter();
    let Some(value) = values.next() else {
        return Ok(None);
    };
    let user = std::str::from_utf8(value.as_bytes())
        .ok()
        .map(str::trim)
        .filter(|u| !u.is_empty() && !u.chars().any(char::is_control));
    match (user, values.next()) {
        (Some(u), None) => Ok(Some(u.to_string())),
        _ => Err(HttpError::bad_request(format!(
            "The proxy's {name} header is not one UTF-8 user name"
        ))),
    }
}

/// The repository path mod_authz_svn checks for a request's URL (None for the `!svn/`
/// resources that name no path: `me`, `rev`, `vcc`, `bln`, as `dav_svn_split_uri` leaves
/// them; a write to one of those is checked as a write anywhere in the repository).
fn url_path(target: &Target) -> Option<&str> {
    match target.kind {
        Kind::Public | Kind::RevRoot(_) | Kind::Version(_) | Kind::TxnRoot | Kind::Web(..) => {
            Some(&target.path)
        }
        Kind::Me | Kind::Rev(_) | Kind::Vcc | Kind::Baseline(_) | Kind::Txn => None,
    }
}

/// The checks mod_authz_svn makes on the request's URL before anything is read or
/// written: the blanket level, then the authz rules on the URL's path for what the
/// method's row in the request table says (`table::UrlCheck`); `!svn/` resources that
/// name no path are checked as a write anywhere for a write. What a request reads below
/// its URL is filtered later by the service layer.
pub(crate) fn check_url(
    svc: &service::Ctx,
    gate: &Gate,
    method: &Method,
    target: &Target,
) -> Result<(), HttpError> {
    use crate::table::UrlCheck;
    let check = crate::table::url_check(method.as_str());
    gate.require_level(check.needs_write_level())?;
    let write = check.writes();
    let recursive = matches!(check, UrlCheck::ReadTree | UrlCheck::WriteTree);
    let path = if check == UrlCheck::WriteAnywhere {
        None
    } else {
        url_path(target)
    };
    let allowed = match path {
        Some(p) if recursive => svc.allowed_recursive(p, write),
        Some(p) => svc.allowed(p, write),
        None if write => svc.allows(&Where::Anywhere, true),
        None => true,
    };
    if allowed {
        Ok(())
    } else {
        Err(gate.refuse(write))
    }
}
