//! Admission: what a repository's configuration lets clients do, decided once for both
//! protocols. svn:// asks it per connection, HTTP per request (configuration files are
//! read each time, so edits apply without a restart).
//!
//! The decision: which svnserve.conf applies (`--config-file`, else the repository's
//! `conf/svnserve.conf`), the realm (its `realm`, else the repository's UUID, as
//! svnserve's), the blanket levels (`anon-access`, `auth-access`, capped at read by
//! `-R`), and where the authz rules are and what they call the repository (its path
//! under the root). How a client proves who it is stays the front end's (CRAM-MD5 and
//! EXTERNAL over svn://, HTTP Basic or a trusted proxy's header over HTTP), and so does
//! the form of a refusal.

use crate::Host;
use std::path::Path;
use svelto_repos::conf::{Access, SvnserveConf};
use svelto_repos::service::AuthzSource;
use svelto_repos::ReposError;

/// What a repository's configuration lets its clients do.
pub struct Admission {
    /// The svnserve.conf that applies (the repository's, or `--config-file`).
    pub conf: SvnserveConf,
    /// The realm logins are asked for.
    pub realm: String,
    /// What anonymous clients may do (`anon-access`, capped by `-R`).
    pub anon_access: Access,
    /// What authenticated clients may do (`auth-access`, capped by `-R`).
    pub auth_access: Access,
    /// The repository's path below the root, as authz rules' `[NAME:/path]` sections name
    /// it (None when it is the root itself).
    pub repos_name: Option<String>,
}

impl Admission {
    /// The blanket level of a client, anonymous or authenticated.
    pub fn access(&self, authenticated: bool) -> Access {
        if authenticated {
            self.auth_access
        } else {
            self.anon_access
        }
    }

    /// Where the authz rules are (None without `authz-db`: no path-based rules).
    pub fn authz_source(&self) -> Option<AuthzSource<'_>> {
        let rules = self.conf.authz_db.as_ref()?;
        Some(AuthzSource {
            rules,
            groups: self.conf.groups_db.as_ref(),
            case: self.conf.force_username_case,
            repos: self.repos_name.clone(),
        })
    }
}

/// Where repositories are found under a root, for both protocols: how many of a URL's
/// leading path segments name the repository, the deepest directory they name that is
/// one (`is_repo`: `svelto_repos::service::Repos::is_repo`), as svnserve finds it under
/// `-r ROOT`; None when none is. `ROOT/projects/tools` is served as `.../projects/tools`
/// over svn:// and http:// alike. The segments are already decoded and free of `.` and
/// `..` (the front end refused a URL escaping the root).
pub fn find_repository<S: AsRef<str>>(
    root: &Path,
    segments: &[S],
    is_repo: &dyn Fn(&Path) -> bool,
) -> Option<usize> {
    (0..=segments.len()).rev().find(|&n| {
        let mut dir = root.to_path_buf();
        dir.extend(segments[..n].iter().map(AsRef::as_ref));
        is_repo(&dir)
    })
}

impl Host {
    /// The svnserve.conf that applies to the repository in `repo_dir`: `--config-file`
    /// (relative paths in it resolve against its directory) or the repository's own.
    pub fn svnserve_conf(&self, repo_dir: &Path) -> Result<SvnserveConf, ReposError> {
        match &self.config.config_file {
            Some(file) => {
                let base = file.parent().unwrap_or(Path::new("/"));
                SvnserveConf::load(file, true, base, &repo_dir.join("conf"))
            }
            None => SvnserveConf::for_repository(repo_dir),
        }
    }

    /// Admission to the repository in `repo_dir`; `uuid` is asked only when the
    /// configuration names no realm. Err: its svnserve.conf cannot be read or parsed (or
    /// the UUID cannot be read).
    pub fn admission(
        &self,
        repo_dir: &Path,
        uuid: impl FnOnce() -> Result<String, ReposError>,
    ) -> Result<Admission, ReposError> {
        let conf = self.svnserve_conf(repo_dir)?;
        let realm = match &conf.realm {
            Some(r) => r.clone(),
            None => uuid()?,
        };
        let cap = |a: Access| {
            if self.config.read_only && a == Access::Write {
                Access::Read
            } else {
                a
            }
        };
        Ok(Admission {
            realm,
            anon_access: cap(conf.anon_access),
            auth_access: cap(conf.auth_access),
            repos_name: self.repos_name(repo_dir),
            conf,
        })
    }

    /// A repository's path below the root (`projects/tools`), None for the root itself or
    /// a directory outside it.
    pub fn repos_name(&self, repo_dir: &Path) -> Option<String> {
        repo_dir
            .strip_prefix(&self.config.root)
            .ok()
            .map(|p| p.to_string_lossy().into_owned())
            .filter(|p| !p.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{HostConfig, Logger};

    fn repo_with(conf: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let repo = dir.path().join("projects/tools");
        std::fs::create_dir_all(repo.join("conf")).expect("conf");
        std::fs::write(repo.join("conf/svnserve.conf"), conf).expect("svnserve.conf");
        (dir, repo)
    }

    fn env() -> std::sync::Arc<dyn svelto_core::Env> {
        std::sync::Arc::new(svelto_core::SystemEnv)
    }

    fn local() -> std::sync::Arc<dyn svelto_fs::Backend> {
        svelto_testkit::memfs::local_backend()
    }

    #[test]
    fn the_deepest_directory_that_is_a_repository() {
        let root = Path::new("/srv");
        let repos = |p: &Path| p == Path::new("/srv/projects/tools") || p == Path::new("/srv/x");
        let segs = ["projects", "tools", "trunk", "a b"];
        assert_eq!(find_repository(root, &segs, &repos), Some(2));
        assert_eq!(find_repository(root, &["x"], &repos), Some(1));
        assert_eq!(find_repository(root, &["projects"], &repos), None);
        let at_root = |p: &Path| p == Path::new("/srv");
        assert_eq!(find_repository(root, &["trunk"], &at_root), Some(0));
    }

    #[test]
    fn levels_capped_by_read_only_realm_from_uuid_and_name_under_root() {
        let (dir, repo) =
            repo_with("[general]\nanon-access = write\nauth-access = write\nauthz-db = authz\n");
        let mut config = HostConfig::new(dir.path().to_path_buf());
        let host = Host::new(config.clone(), Logger::disabled(), local(), env());
        let adm = host
            .admission(&repo, || Ok("the-uuid".into()))
            .expect("admitted");
        assert_eq!(adm.realm, "the-uuid");
        assert_eq!(adm.access(false), Access::Write);
        assert_eq!(adm.repos_name.as_deref(), Some("projects/tools"));
        let src = adm.authz_source().expect("authz-db named");
        assert_eq!(src.repos.as_deref(), Some("projects/tools"));
        config.read_only = true;
        let host = Host::new(config, Logger::disabled(), local(), env());
        let adm = host
            .admission(&repo, || Ok("the-uuid".into()))
            .expect("admitted");
        assert_eq!(
            (adm.access(false), adm.access(true)),
            (Access::Read, Access::Read)
        );
    }

    #[test]
    fn a_realm_in_the_configuration_does_not_read_the_uuid_and_read_only_caps() {
        let (dir, repo) =
            repo_with("[general]\nanon-access = read\nauth-access = write\nrealm = Tools\n");
        let mut config = HostConfig::new(dir.path().to_path_buf());
        config.read_only = true;
        let host = Host::new(config, Logger::disabled(), local(), env());
        let adm = host
            .admission(&repo, || panic!("the realm is configured"))
            .expect("admitted");
        assert_eq!(adm.realm, "Tools");
        assert_eq!(adm.access(true), Access::Read, "-R caps auth-access");
        assert_eq!(adm.access(false), Access::Read);
        assert!(adm.authz_source().is_none());
    }

    #[test]
    fn config_file_wins_and_a_broken_one_is_an_error() {
        let (dir, repo) = repo_with("[general]\nanon-access = write\n");
        let file = dir.path().join("global.conf");
        std::fs::write(&file, "[general]\nanon-access = none\nrealm = Global\n").expect("conf");
        let mut config = HostConfig::new(dir.path().to_path_buf());
        config.config_file = Some(file.clone());
        let host = Host::new(config, Logger::disabled(), local(), env());
        let adm = host.admission(&repo, || Ok("u".into())).expect("admitted");
        assert_eq!(
            (adm.realm.as_str(), adm.access(false)),
            ("Global", Access::None)
        );
        std::fs::write(&file, "[general\nanon-access = none\n").expect("conf");
        assert!(host.admission(&repo, || Ok("u".into())).is_err());
    }
}
