//! HTTP Basic logins checked against an LDAP directory, as Apache's mod_authnz_ldap checks
//! them (svnserve.conf's `[ldap]`, `svelto_repos::conf::LdapConf`; docs/ldap.md):
//! search-then-bind. Svelto binds as `bind-dn` (its password read from `bind-password-file`
//! each time), searches the URL's base and scope for `(&(FILTER)(ATTR=USER))` with the user
//! name escaped as RFC 4515 says, takes the one entry found (none or several: refused), and
//! binds as that entry's DN with the password presented. An empty password is refused
//! before the directory is asked (a simple bind with no password is an anonymous bind,
//! which a directory answers with success). With `group-base`, the groups naming the
//! entry's DN (or the user name) in `group-attribute` are looked up as the bind DN; their
//! `group-name-attribute` values are the authz groups the user joins.
//!
//! A login that succeeded is remembered for `cache-ttl` seconds (LDAPCacheTTL) keyed by a
//! digest of the configuration, the user name and the password, so a changed password is
//! never taken from the cache; at most [`MAX_CACHED`] logins are kept.
//!
//! The directory is asked with ldap3's blocking client on the calling thread: the caller
//! is on the runtime's blocking pool (`lib.rs` moves a request whose login needs the
//! directory off the worker: there it would hold the worker's other connections, and the
//! client, which runs a runtime of its own, cannot start inside the worker's). Every step has `timeout` seconds: a directory that is down
//! or stops answering is [`Failure::Unavailable`] (a 503) within a few timeouts.

use crate::auth::LoginKeys;
use ldap3::{LdapConn, LdapConnSettings, LdapError, Scope, SearchEntry};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use svelto_repos::conf::{LdapConf, LdapScope, LdapTls};
use tokio_rustls::rustls;

/// Logins remembered at most (the expired ones are dropped first, then all).
pub(crate) const MAX_CACHED: usize = 10_000;

/// A login the directory accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Login {
    /// The user's entry.
    pub dn: String,
    /// The names of the groups the user is a member of (`group-name-attribute`).
    pub groups: Vec<String>,
}

/// Why a login was not accepted.
#[derive(Debug)]
pub(crate) enum Failure {
    /// The credentials are wrong (or the user is not in the directory, or matches more than
    /// one entry): a 401. Why, for the log.
    Refused(String),
    /// The directory cannot be reached or does not answer in time, or refuses Svelto's own
    /// bind: a 503. Why, for the log and the client.
    Unavailable(String),
}

/// A login accepted at a time.
type Remembered = (Instant, Arc<Login>);

/// The directory logins of the server, with the logins it accepted lately.
#[derive(Default)]
pub(crate) struct Directory {
    cache: Mutex<HashMap<[u8; 20], Remembered>>,
    keys: LoginKeys,
}

impl Directory {
    fn key(&self, conf: &LdapConf, user: &str, password: &[u8]) -> [u8; 20] {
        let conf = format!("{conf:?}");
        self.keys.key(&[conf.as_bytes(), user.as_bytes(), password])
    }

    /// The login remembered for these credentials, when it is fresh.
    pub fn cached(&self, conf: &LdapConf, user: &str, password: &[u8]) -> Option<Arc<Login>> {
        let ttl = Duration::from_secs(conf.cache_ttl_secs);
        let key = self.key(conf, user, password);
        let cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        cache
            .get(&key)
            .filter(|(at, _)| at.elapsed() < ttl)
            .map(|(_, login)| login.clone())
    }

    /// Checks the credentials with the directory (blocking: see the module's notes).
    pub fn check(
        &self,
        conf: &LdapConf,
        user: &str,
        password: &[u8],
    ) -> Result<Arc<Login>, Failure> {
        if password.is_empty() {
            return Err(Failure::Refused(format!(
                "user {user}: an empty password is refused (it would be an anonymous bind)"
            )));
        }
        let Ok(password_text) = std::str::from_utf8(password) else {
            return Err(Failure::Refused(format!(
                "user {user}: the password is not UTF-8"
            )));
        };
        let login = Arc::new(ask(conf, user, password_text)?);
        if conf.cache_ttl_secs > 0 {
            let ttl = Duration::from_secs(conf.cache_ttl_secs);
            let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
            if cache.len() >= MAX_CACHED {
                cache.retain(|_, (at, _)| at.elapsed() < ttl);
                if cache.len() >= MAX_CACHED {
                    cache.clear();
                }
            }
            cache.insert(
                self.key(conf, user, password),
                (Instant::now(), login.clone()),
            );
        }
        Ok(login)
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.cache.lock().map(|c| c.len()).unwrap_or(0)
    }
}

/// Where the directory is, for messages.
fn url_of(conf: &LdapConf) -> String {
    let scheme = if conf.url.ldaps { "ldaps" } else { "ldap" };
    let host = if conf.url.host.contains(':') {
        format!("[{}]", conf.url.host)
    } else {
        conf.url.host.clone()
    };
    format!("{scheme}://{host}:{}", conf.url.port)
}

/// Why the directory failed, for the log and a 503.
fn unavailable(conf: &LdapConf, what: &str, e: impl std::fmt::Display) -> Failure {
    Failure::Unavailable(format!(
        "The LDAP directory {} is unavailable ({what}: {e})",
        url_of(conf)
    ))
}

/// The TLS configuration for ldaps:// and StartTLS: `ca-file`'s certificates, else the
/// system's.
fn tls_config(conf: &LdapConf) -> Result<Arc<rustls::ClientConfig>, Failure> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::CertificateDer;
    let mut roots = rustls::RootCertStore::empty();
    match &conf.ca_file {
        Some(file) => {
            let pem = std::fs::read(file).map_err(|e| {
                unavailable(
                    conf,
                    &format!("cannot read ca-file '{}'", file.display()),
                    e,
                )
            })?;
            for cert in CertificateDer::pem_slice_iter(&pem) {
                let cert = cert
                    .map_err(|e| unavailable(conf, &format!("ca-file '{}'", file.display()), e))?;
                roots
                    .add(cert)
                    .map_err(|e| unavailable(conf, &format!("ca-file '{}'", file.display()), e))?;
            }
        }
        None => {
            for cert in rustls_native_certs::load_native_certs().certs {
                let _ = roots.add(cert);
            }
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| unavailable(conf, "TLS", e))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(config))
}

/// The bind password: the first line of `bind-password-file`.
fn bind_password(conf: &LdapConf) -> Result<Option<(String, String)>, Failure> {
    let (Some(dn), Some(file)) = (&conf.bind_dn, &conf.bind_password_file) else {
        return Ok(None);
    };
    let text = std::fs::read_to_string(file).map_err(|e| {
        unavailable(
            conf,
            &format!("cannot read bind-password-file '{}'", file.display()),
            e,
        )
    })?;
    let password = text.lines().next().unwrap_or("").to_string();
    Ok(Some((dn.clone(), password)))
}

/// Whether an error is the directory's answer (an LDAP result code) rather than a failure
/// to reach it.
fn result_code(e: &LdapError) -> Option<u32> {
    match e {
        LdapError::LdapResult { result } => Some(result.rc),
        _ => None,
    }
}

/// Search-then-bind with the directory.
fn ask(conf: &LdapConf, user: &str, password: &str) -> Result<Login, Failure> {
    let timeout = Duration::from_secs(conf.timeout_secs);
    let mut settings = LdapConnSettings::new()
        .set_conn_timeout(timeout)
        .set_starttls(conf.tls == LdapTls::StartTls);
    if conf.tls != LdapTls::None {
        settings = settings.set_config(tls_config(conf)?);
    }
    let bind = bind_password(conf)?;
    let mut ldap = LdapConn::with_settings(settings, &url_of(conf))
        .map_err(|e| unavailable(conf, "cannot connect", e))?;
    let outcome = search_then_bind(&mut ldap, conf, timeout, bind, user, password);
    let _ = ldap.unbind();
    outcome
}

fn search_then_bind(
    ldap: &mut LdapConn,
    conf: &LdapConf,
    timeout: Duration,
    bind: Option<(String, String)>,
    user: &str,
    password: &str,
) -> Result<Login, Failure> {
    if let Some((dn, pw)) = &bind {
        ldap.with_timeout(timeout)
            .simple_bind(dn, pw)
            .and_then(|r| r.success())
            .map_err(|e| match result_code(&e) {
                Some(_) => unavailable(conf, &format!("it refused the bind as '{dn}'"), e),
                None => unavailable(conf, "bind", e),
            })?;
    }
    let scope = match conf.url.scope {
        LdapScope::Base => Scope::Base,
        LdapScope::One => Scope::OneLevel,
        LdapScope::Sub => Scope::Subtree,
    };
    let filter = format!(
        "(&{}({}={}))",
        conf.url.filter,
        conf.url.attribute,
        ldap3::ldap_escape(user)
    );
    let (entries, _) = ldap
        .with_timeout(timeout)
        .search(&conf.url.base, scope, &filter, vec!["1.1"])
        .and_then(|r| r.success())
        .map_err(|e| match result_code(&e) {
            // noSuchObject: the base is not there.
            Some(32) => Failure::Refused(format!(
                "user {user}: the search base '{}' does not exist",
                conf.url.base
            )),
            _ => unavailable(conf, "search", e),
        })?;
    let dn = match entries.len() {
        1 => SearchEntry::construct(entries.into_iter().next().expect("one entry")).dn,
        0 => {
            return Err(Failure::Refused(format!(
                "user {user} not found in the directory (filter {filter})"
            )))
        }
        n => {
            return Err(Failure::Refused(format!(
                "user {user}: the filter {filter} matches {n} entries, not one"
            )))
        }
    };
    let groups = match &conf.group_base {
        None => Vec::new(),
        Some(base) => {
            let member = ldap3::ldap_escape(if conf.group_attribute_is_dn {
                dn.as_str()
            } else {
                user
            });
            let any: String = conf
                .group_attributes
                .iter()
                .map(|a| format!("({a}={member})"))
                .collect();
            let filter = format!("(&{}(|{any}))", conf.group_filter);
            let (entries, _) = ldap
                .with_timeout(timeout)
                .search(
                    base,
                    Scope::Subtree,
                    &filter,
                    vec![conf.group_name_attribute.as_str()],
                )
                .and_then(|r| r.success())
                .map_err(|e| unavailable(conf, "group search", e))?;
            let mut groups: Vec<String> = entries
                .into_iter()
                .filter_map(|e| {
                    SearchEntry::construct(e)
                        .attrs
                        .into_iter()
                        .find(|(k, _)| k.eq_ignore_ascii_case(&conf.group_name_attribute))
                        .and_then(|(_, values)| values.into_iter().next())
                })
                .collect();
            groups.sort();
            groups.dedup();
            groups
        }
    };
    ldap.with_timeout(timeout)
        .simple_bind(&dn, password)
        .and_then(|r| r.success())
        .map_err(|e| match result_code(&e) {
            Some(_) => Failure::Refused(format!(
                "user {user}: authentication failure: the directory refused the bind as '{dn}' ({e})"
            )),
            None => unavailable(conf, "bind", e),
        })?;
    Ok(Login { dn, groups })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;
    use svelto_repos::conf::Ini;

    fn conf(port: u16) -> LdapConf {
        let text = format!("[ldap]\nurl = ldap://127.0.0.1:{port}/dc=example\ntimeout = 1\n");
        let ini = Ini::parse(text.as_bytes(), Path::new("c")).expect("ini");
        LdapConf::from_ini(&ini, Path::new("c"), Path::new("/"))
            .expect("valid")
            .expect("configured")
    }

    #[test]
    fn an_empty_password_is_refused_without_asking_and_a_closed_port_is_unavailable() {
        let dir = Directory::default();
        // A port nothing listens on: bound, then closed.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let c = conf(port);
        assert!(matches!(
            dir.check(&c, "harry", b""),
            Err(Failure::Refused(_))
        ));
        let started = Instant::now();
        match dir.check(&c, "harry", b"secret") {
            Err(Failure::Unavailable(why)) => {
                assert!(why.contains(&format!("127.0.0.1:{port}")), "{why}")
            }
            other => panic!("{other:?}"),
        }
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_eq!(dir.len(), 0);
        assert!(dir.cached(&c, "harry", b"secret").is_none());
    }

    #[test]
    fn a_directory_that_never_answers_times_out() {
        // Accepts the connection and says nothing.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let mut text = String::from("[ldap]\n");
        text += &format!("url = ldap://127.0.0.1:{port}/dc=example\ntimeout = 1\n");
        text += "bind-dn = cn=svelto\nbind-password-file = /dev/null\n";
        let ini = Ini::parse(text.as_bytes(), Path::new("c")).expect("ini");
        let c = LdapConf::from_ini(&ini, Path::new("c"), Path::new("/"))
            .expect("valid")
            .expect("configured");
        let started = Instant::now();
        let r = Directory::default().check(&c, "harry", b"secret");
        assert!(matches!(r, Err(Failure::Unavailable(_))), "{r:?}");
        assert!(
            started.elapsed() < Duration::from_secs(4),
            "{:?}",
            started.elapsed()
        );
        drop(listener);
    }

    #[test]
    fn the_cache_key_takes_the_password() {
        let dir = Directory::default();
        let c = conf(1);
        let login = Arc::new(Login {
            dn: "uid=harry".into(),
            groups: vec![],
        });
        dir.cache
            .lock()
            .expect("lock")
            .insert(dir.key(&c, "harry", b"old"), (Instant::now(), login));
        assert!(dir.cached(&c, "harry", b"old").is_some());
        assert!(dir.cached(&c, "harry", b"new").is_none());
        assert!(dir.cached(&c, "sally", b"old").is_none());
        let mut short = c.clone();
        short.cache_ttl_secs = 0;
        assert!(dir.cached(&short, "harry", b"old").is_none());
    }
}
