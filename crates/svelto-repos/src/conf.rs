//! A repository's server configuration: Subversion's ini syntax, `conf/svnserve.conf`'s
//! options with svnserve's defaults, and the password database (`[users]`).
//!
//! The syntax is the one Subversion's config parser accepts (the behaviour of
//! `libsvn_subr/config_file.c` and `config.c`, as svnserve reads these files):
//!
//! * A UTF-8 byte order mark at the start is skipped; a CR before a line end is ignored.
//! * `#` starts a comment only in the first column. An indented line after an option is a
//!   continuation of that option's value (joined with one space), even when it starts with
//!   `#`; anywhere else an indented line is an error.
//! * `[name]` starts a section; it must start in the first column; everything after the
//!   first `]` is ignored. Options before any section are an error.
//! * `name = value` or `name: value`: the separator is the first `:` before the first `=`,
//!   else the first `=`. Whitespace around the separator and around the value is dropped.
//! * Section and option names compare without regard to ASCII case (svnserve opens these
//!   files case-insensitively). A repeated option replaces the earlier value.
//! * An option missing from a section that exists is looked up in `[DEFAULT]`; a section
//!   that does not exist has no options at all, not even `[DEFAULT]`'s.
//! * `%(name)s` in a value expands to option `name` of the same section (or `[DEFAULT]`);
//!   an unknown name stays as written; a value that refers to itself, directly or not,
//!   reads as empty.
//!
//! Subversion also quirks `[DEFAULT]` on writes: an option set in an existing section that
//! lacks it, while `[DEFAULT]` has it, replaces `[DEFAULT]`'s value. That is reproduced, so
//! that lookups give what svnserve sees.

use crate::error::{ReposError, Result};
use std::path::{Path, PathBuf};

/// Largest configuration file read (they are a few KiB; a password file of many users stays
/// far below this).
const MAX_FILE: u64 = 64 << 20;
/// Largest value an expansion may produce (`%(a)s%(a)s` chains grow exponentially).
const MAX_EXPANSION: usize = 1 << 20;

const DEFAULT_SECTION: &str = "default";

#[derive(Debug, Clone)]
struct Opt {
    /// Lower-cased name.
    key: String,
    value: String,
}

#[derive(Debug, Clone)]
struct Section {
    /// Lower-cased name.
    key: String,
    options: Vec<Opt>,
}

/// A parsed configuration file.
#[derive(Debug, Clone, Default)]
pub struct Ini {
    sections: Vec<Section>,
}

pub(crate) fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

pub(crate) fn trim(s: &[u8]) -> &[u8] {
    let start = s.iter().position(|b| !is_space(*b)).unwrap_or(s.len());
    let end = s
        .iter()
        .rposition(|b| !is_space(*b))
        .map_or(start, |e| e + 1);
    &s[start..end.max(start)]
}

pub(crate) fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// One piece of a configuration file in Subversion's syntax (svnserve.conf, passwd,
/// authz, hooks-env), with its 1-based line number. Case is kept; nothing is expanded.
pub(crate) enum ConfEvent {
    Section(String, usize),
    Option(String, String, usize),
}

/// A syntax error: the line (1-based), the line as Subversion counts it (section header
/// lines not counted), and Subversion's wording.
pub(crate) struct SyntaxError {
    pub line: usize,
    pub svn_line: usize,
    pub reason: &'static str,
}

/// Splits `data` into sections and options with Subversion's configuration syntax:
/// headers and comments in the first column, `name = value` or `name: value`, indented
/// continuation lines joined with a space, a UTF-8 byte-order mark ignored.
pub(crate) fn conf_events(data: &[u8]) -> std::result::Result<Vec<ConfEvent>, SyntaxError> {
    // Subversion's parser does not count section header lines.
    let mut headers = 0;
    let err = |line: usize, headers: usize, reason: &'static str| SyntaxError {
        line,
        svn_line: line - headers,
        reason,
    };
    let data = data.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(data);
    let lines: Vec<&[u8]> = data
        .split(|b| *b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .collect();
    let mut out = Vec::new();
    let mut in_named_section = false;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let lineno = i + 1;
        i += 1;
        let indent = line.iter().take_while(|b| is_space(**b)).count();
        let rest = &line[indent..];
        match rest.first() {
            None => continue,
            Some(b'[') => {
                if indent != 0 {
                    return Err(err(
                        lineno,
                        headers,
                        "Section header must start in the first column",
                    ));
                }
                let Some(end) = rest.iter().position(|b| *b == b']') else {
                    return Err(err(lineno, headers, "Section header must end with ']'"));
                };
                let name = text(&rest[1..end]);
                in_named_section = !name.is_empty();
                headers += 1;
                out.push(ConfEvent::Section(name, lineno));
            }
            Some(b'#') => {
                if indent != 0 {
                    return Err(err(
                        lineno,
                        headers,
                        "Comment must start in the first column",
                    ));
                }
            }
            Some(_) => {
                if !in_named_section {
                    return Err(err(lineno, headers, "Section header expected"));
                }
                if indent != 0 {
                    return Err(err(lineno, headers, "Option expected"));
                }
                let eq = line.iter().position(|b| *b == b'=');
                let colon = line[..eq.unwrap_or(line.len())]
                    .iter()
                    .position(|b| *b == b':');
                let Some(sep) = colon.or(eq) else {
                    return Err(err(lineno, headers, "Option must end with ':' or '='"));
                };
                let name = trim(&line[..sep]);
                let mut value = trim(&line[sep + 1..]).to_vec();
                // Continuation lines: indented, non-empty lines that follow.
                while i < lines.len() {
                    let next = lines[i];
                    let ind = next.iter().take_while(|b| is_space(**b)).count();
                    if ind == 0 || ind == next.len() {
                        break;
                    }
                    value.push(b' ');
                    value.extend_from_slice(trim(next));
                    i += 1;
                }
                out.push(ConfEvent::Option(text(name), text(&value), lineno));
            }
        }
    }
    Ok(out)
}

impl Ini {
    /// Parses `data`; `file` names the source in errors.
    pub fn parse(data: &[u8], file: &Path) -> Result<Ini> {
        let events = conf_events(data).map_err(|e| ReposError::Config {
            file: file.to_path_buf(),
            line: Some(e.line),
            svn_line: Some(e.svn_line),
            reason: e.reason.to_string(),
        })?;
        let mut ini = Ini::default();
        let mut section = String::new();
        for event in events {
            match event {
                ConfEvent::Section(name, _) => section = name,
                ConfEvent::Option(name, value, _) => ini.set(&section, &name, value),
            }
        }
        Ok(ini)
    }

    /// Reads and parses `path`. A missing file is an empty configuration unless
    /// `must_exist`.
    pub fn load(path: &Path, must_exist: bool) -> Result<Ini> {
        match read_limited(path) {
            Ok(data) => Ini::parse(&data, path),
            Err(e) if !must_exist && e.kind() == std::io::ErrorKind::NotFound => Ok(Ini::default()),
            Err(e) => Err(ReposError::Io {
                context: format!("Can't open file '{}'", path.display()),
                err: e,
            }),
        }
    }

    fn section_index(&self, name: &str) -> Option<usize> {
        let key = name.to_ascii_lowercase();
        self.sections.iter().position(|s| s.key == key)
    }

    /// (section index, option index) of `option` as seen from `section`.
    fn find(&self, section: &str, option: &str) -> Option<(usize, usize)> {
        let si = self.section_index(section)?;
        let key = option.to_ascii_lowercase();
        if let Some(oi) = self.sections[si].options.iter().position(|o| o.key == key) {
            return Some((si, oi));
        }
        if self.sections[si].key == DEFAULT_SECTION {
            return None;
        }
        let di = self.section_index(DEFAULT_SECTION)?;
        let oi = self.sections[di]
            .options
            .iter()
            .position(|o| o.key == key)?;
        Some((di, oi))
    }

    fn set(&mut self, section: &str, option: &str, value: String) {
        if let Some((si, oi)) = self.find(section, option) {
            self.sections[si].options[oi].value = value;
            return;
        }
        let si = match self.section_index(section) {
            Some(si) => si,
            None => {
                self.sections.push(Section {
                    key: section.to_ascii_lowercase(),
                    options: Vec::new(),
                });
                self.sections.len() - 1
            }
        };
        self.sections[si].options.push(Opt {
            key: option.to_ascii_lowercase(),
            value,
        });
    }

    /// The value of `option` in `section`, expanded; `None` when it is not set.
    pub fn get(&self, section: &str, option: &str) -> Option<String> {
        let (si, oi) = self.find(section, option)?;
        let mut stack = vec![(si, oi)];
        Some(
            self.expand(section, &self.sections[si].options[oi].value, &mut stack)
                .unwrap_or_default(),
        )
    }

    /// Names (as lower-cased keys) of the options set in `section` itself.
    pub fn options(&self, section: &str) -> Vec<&str> {
        self.section_index(section)
            .map(|si| {
                self.sections[si]
                    .options
                    .iter()
                    .map(|o| o.key.as_str())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Expands `%(name)s` references in `value`, seen from `section`. `None` means a cycle
    /// (the value reads as empty).
    fn expand(
        &self,
        section: &str,
        value: &str,
        stack: &mut Vec<(usize, usize)>,
    ) -> Option<String> {
        if !value.contains("%(") {
            return Some(value.to_string());
        }
        let mut out = String::new();
        let mut rest = value;
        while let Some(start) = rest.find("%(") {
            let after = &rest[start + 2..];
            if after.is_empty() {
                break;
            }
            let Some(end) = after.find(")s") else {
                break;
            };
            let name = &after[..end];
            match self.find(section, name) {
                Some(found) => {
                    if stack.contains(&found) || stack.len() > 64 {
                        return None;
                    }
                    stack.push(found);
                    let inner = self.expand(
                        section,
                        &self.sections[found.0].options[found.1].value,
                        stack,
                    );
                    stack.pop();
                    out.push_str(&rest[..start]);
                    out.push_str(&inner?);
                    if out.len() > MAX_EXPANSION {
                        return None;
                    }
                }
                None => out.push_str(&rest[..start + 2 + end + 2]),
            }
            rest = &after[end + 2..];
        }
        out.push_str(rest);
        Some(out)
    }
}

fn read_limited(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let file = std::fs::File::open(path)?;
    let mut data = Vec::new();
    file.take(MAX_FILE + 1).read_to_end(&mut data)?;
    if data.len() as u64 > MAX_FILE {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("larger than {MAX_FILE} bytes"),
        ));
    }
    Ok(data)
}

/// Blanket access for anonymous or authenticated users (`anon-access`, `auth-access`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Access {
    None,
    Read,
    Write,
}

impl Access {
    /// svnserve's reading: exactly `write` or `read`; anything else means no access.
    fn from_value(v: &str) -> Access {
        match v {
            "write" => Access::Write,
            "read" => Access::Read,
            _ => Access::None,
        }
    }
}

/// `force-username-case`: how user names are normalized before authz lookups.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UsernameCase {
    #[default]
    AsIs,
    Upper,
    Lower,
}

impl UsernameCase {
    /// `user` as the authz rules see it.
    pub fn apply(self, user: &str) -> String {
        match self {
            UsernameCase::AsIs => user.to_string(),
            UsernameCase::Upper => user.to_ascii_uppercase(),
            UsernameCase::Lower => user.to_ascii_lowercase(),
        }
    }
}

/// Where an authz or groups file is (`authz-db`, `groups-db`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AccessFile {
    /// A file on disk, resolved against the configuration's directory.
    Path(PathBuf),
    /// A URL (`file:///repo/conf/authz`, read from a repository).
    Url(String),
    /// A repository-relative URL (`^/conf/authz`), relative to this repository's root.
    ReposRelative(String),
}

impl std::fmt::Display for AccessFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AccessFile::Path(p) => write!(f, "{}", p.display()),
            AccessFile::Url(u) | AccessFile::ReposRelative(u) => f.write_str(u),
        }
    }
}

/// `svnserve.conf` as svnserve reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SvnserveConf {
    /// The file this came from (for messages).
    pub file: PathBuf,
    /// `[general] anon-access` (default `read`).
    pub anon_access: Access,
    /// `[general] auth-access` (default `write`).
    pub auth_access: Access,
    /// `[general] password-db`, resolved against the base directory.
    pub password_db: Option<PathBuf>,
    /// `[general] realm`; the repository UUID when unset.
    pub realm: Option<String>,
    /// `[http] password-db`: Svelto's own option, an Apache password file (`htpasswd`'s
    /// format, as `AuthUserFile`) for HTTP Basic logins, resolved against the base
    /// directory. svnserve ignores the section.
    pub http_password_db: Option<PathBuf>,
    /// `[general] force-username-case`. svnserve reads it only when `authz-db` is set (it
    /// changes only the name authz rules see); it is `AsIs` otherwise.
    pub force_username_case: UsernameCase,
    /// `[general] authz-db`.
    pub authz_db: Option<AccessFile>,
    /// `[general] groups-db` (read only with `authz-db`).
    pub groups_db: Option<AccessFile>,
    /// `[sasl] use-sasl` (default false).
    pub use_sasl: bool,
    /// `[ldap]`: Svelto's own section, HTTP Basic logins checked against an LDAP directory
    /// as Apache's mod_authnz_ldap checks them (None without `[ldap] url`).
    pub ldap: Option<LdapConf>,
    /// The hook environment file: `[general] hooks-env` resolved against the repository's
    /// `conf` directory (not the base: svnserve resolves it there even with
    /// `--config-file`), or `conf/hooks-env` when unset. It need not exist.
    pub hooks_env: PathBuf,
}

impl SvnserveConf {
    /// Why this configuration cannot be served, when it asks for SASL (Svelto has none).
    pub fn sasl_refusal(&self) -> Option<String> {
        self.use_sasl.then(|| {
            format!(
                "SASL is not supported by Svelto ('{}' sets use-sasl = true in [sasl]); \
                 set it to false and use CRAM-MD5 (password-db) or svn+ssh",
                self.file.display()
            )
        })
    }

    /// The options in `ini`. Relative `password-db`, `authz-db` and `groups-db` paths are
    /// resolved against `base` (the directory of the configuration file); `hooks-env`
    /// against `repos_conf_dir`. `file` names the source in errors.
    pub fn from_ini(
        ini: &Ini,
        file: &Path,
        base: &Path,
        repos_conf_dir: &Path,
    ) -> Result<SvnserveConf> {
        let general = |o: &str| ini.get("general", o);
        let access = |o: &str, def: Access| general(o).map_or(def, |v| Access::from_value(&v));
        let access_file = |v: String| {
            if is_url(&v) {
                AccessFile::Url(v)
            } else if v.starts_with("^/") {
                AccessFile::ReposRelative(v)
            } else {
                AccessFile::Path(base.join(v))
            }
        };
        let authz_db = general("authz-db").map(access_file);
        let groups_db = if authz_db.is_some() {
            general("groups-db").map(access_file)
        } else {
            None
        };
        let force_username_case = match (&authz_db, general("force-username-case").as_deref()) {
            (Some(_), Some("upper")) => UsernameCase::Upper,
            (Some(_), Some("lower")) => UsernameCase::Lower,
            _ => UsernameCase::AsIs,
        };
        let use_sasl = match ini.get("sasl", "use-sasl") {
            None => false,
            Some(v) => parse_bool(&v).ok_or_else(|| ReposError::Config {
                file: file.to_path_buf(),
                line: None,
                svn_line: None,
                reason: format!("Config error: invalid boolean value '{v}' for '[sasl] use-sasl'"),
            })?,
        };
        Ok(SvnserveConf {
            file: file.to_path_buf(),
            anon_access: access("anon-access", Access::Read),
            auth_access: access("auth-access", Access::Write),
            password_db: general("password-db").map(|p| base.join(p)),
            realm: general("realm"),
            http_password_db: ini.get("http", "password-db").map(|p| base.join(p)),
            force_username_case,
            authz_db,
            groups_db,
            use_sasl,
            ldap: LdapConf::from_ini(ini, file, base)?,
            hooks_env: repos_conf_dir
                .join(general("hooks-env").unwrap_or_else(|| "hooks-env".into())),
        })
    }

    /// Reads `file` (an absent file is the defaults unless `must_exist`, as with
    /// `--config-file`).
    pub fn load(
        file: &Path,
        must_exist: bool,
        base: &Path,
        repos_conf_dir: &Path,
    ) -> Result<SvnserveConf> {
        let ini = Ini::load(file, must_exist)?;
        SvnserveConf::from_ini(&ini, file, base, repos_conf_dir)
    }

    /// The repository's own `conf/svnserve.conf`, the way svnserve reads it without
    /// `--config-file`.
    pub fn for_repository(repos_dir: &Path) -> Result<SvnserveConf> {
        let conf = repos_dir.join("conf");
        SvnserveConf::load(&conf.join("svnserve.conf"), false, &conf, &conf)
    }
}

/// How an LDAP search reaches below its base (the URL's scope).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LdapScope {
    Base,
    One,
    Sub,
}

/// An `AuthLDAPURL`: `ldap[s]://host[:port]/basedn?attribute?scope?filter`, as Apache's
/// mod_authnz_ldap reads it (RFC 4516 without extensions): the attribute defaults to
/// `uid`, the scope to `sub`, the filter to `(objectClass=*)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LdapUrl {
    /// `ldaps://`: TLS from the first byte.
    pub ldaps: bool,
    pub host: String,
    /// 389 (ldap://) or 636 (ldaps://) unless given.
    pub port: u16,
    /// The search base (percent-decoded).
    pub base: String,
    /// The attribute the user name is matched against.
    pub attribute: String,
    pub scope: LdapScope,
    /// The filter combined with the attribute's match (always in parentheses).
    pub filter: String,
}

impl LdapUrl {
    /// Parses `url`; Err says what is wrong with it.
    pub fn parse(url: &str) -> std::result::Result<LdapUrl, String> {
        let (ldaps, rest) = if let Some(r) = strip_prefix_ci(url, "ldaps://") {
            (true, r)
        } else if let Some(r) = strip_prefix_ci(url, "ldap://") {
            (false, r)
        } else {
            return Err("it does not start with ldap:// or ldaps://".into());
        };
        let (hostport, rest) = rest.split_once('/').unwrap_or((rest, ""));
        if hostport.contains(' ') {
            return Err("Svelto takes one host in the URL (no space-separated list)".into());
        }
        let (host, port) = match hostport.rsplit_once(':') {
            Some((h, p)) if !h.ends_with(']') || hostport.starts_with('[') => {
                let port = p
                    .parse::<u16>()
                    .map_err(|_| format!("'{p}' is not a port number"))?;
                (h, port)
            }
            _ => (hostport, if ldaps { 636 } else { 389 }),
        };
        let host = host.trim_start_matches('[').trim_end_matches(']');
        if host.is_empty() {
            return Err("it names no host".into());
        }
        let mut parts = rest.splitn(5, '?');
        let base = percent_decode(parts.next().unwrap_or(""))?;
        let attribute = match percent_decode(parts.next().unwrap_or(""))? {
            a if a.is_empty() => "uid".to_string(),
            a if a.contains(',') => a.split(',').next().unwrap_or_default().trim().to_string(),
            a => a,
        };
        if !attribute
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.' || b == b';')
        {
            return Err(format!("'{attribute}' is not an attribute name"));
        }
        let scope = match percent_decode(parts.next().unwrap_or(""))?
            .to_ascii_lowercase()
            .as_str()
        {
            "" | "sub" => LdapScope::Sub,
            "one" => LdapScope::One,
            "base" => LdapScope::Base,
            other => return Err(format!("'{other}' is not a scope (base, one or sub)")),
        };
        let filter = match percent_decode(parts.next().unwrap_or(""))?.trim() {
            "" => "(objectClass=*)".to_string(),
            f if f.starts_with('(') => f.to_string(),
            f => format!("({f})"),
        };
        if parts.next().is_some_and(|e| !e.is_empty()) {
            return Err("Svelto takes no extensions in the URL".into());
        }
        Ok(LdapUrl {
            ldaps,
            host: host.to_string(),
            port,
            base,
            attribute,
            scope,
            filter,
        })
    }
}

fn strip_prefix_ci<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    (s.len() >= prefix.len() && s[..prefix.len()].eq_ignore_ascii_case(prefix))
        .then(|| &s[prefix.len()..])
}

fn percent_decode(s: &str) -> std::result::Result<String, String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = b
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| format!("a bad %-escape in '{s}'"))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| format!("'{s}' is not UTF-8 once decoded"))
}

/// How TLS protects the connection to the directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LdapTls {
    /// None (plain ldap://).
    None,
    /// `ldaps://`.
    Ldaps,
    /// ldap:// upgraded with StartTLS (Apache: `AuthLDAPURL "..." TLS` or `STARTTLS`).
    StartTls,
}

/// svnserve.conf's `[ldap]` section: mod_authnz_ldap's directives for HTTP Basic logins
/// (`docs/ldap.md` maps each).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LdapConf {
    /// `url` (AuthLDAPURL, without the trailing TLS word).
    pub url: LdapUrl,
    /// `url`'s trailing `TLS`/`STARTTLS`/`SSL`/`NONE` word, or `starttls = yes`.
    pub tls: LdapTls,
    /// `bind-dn` (AuthLDAPBindDN); None: an anonymous bind for the search.
    pub bind_dn: Option<String>,
    /// `bind-password-file` (AuthLDAPBindPassword, kept in a file: its first line).
    pub bind_password_file: Option<PathBuf>,
    /// `ca-file` (LDAPTrustedGlobalCert CA_BASE64): the PEM certificates trusted for
    /// ldaps:// and StartTLS, else the system's.
    pub ca_file: Option<PathBuf>,
    /// `group-base`: where the groups a user belongs to are searched (subtree); None: no
    /// groups.
    pub group_base: Option<String>,
    /// `group-filter`: which entries under `group-base` are groups.
    pub group_filter: String,
    /// `group-attribute` (AuthLDAPGroupAttribute, comma-separated; default `member,
    /// uniqueMember`).
    pub group_attributes: Vec<String>,
    /// `group-attribute-is-dn` (AuthLDAPGroupAttributeIsDN, default yes): the group names
    /// its members by DN, else by user name.
    pub group_attribute_is_dn: bool,
    /// `group-name-attribute` (default `cn`): the group's attribute that names the authz
    /// group (`@NAME`) its members join.
    pub group_name_attribute: String,
    /// `timeout` in seconds (LDAPConnectionTimeout and LDAPTimeout; default 5).
    pub timeout_secs: u64,
    /// `cache-ttl` in seconds (LDAPCacheTTL; default 60, 0: no cache).
    pub cache_ttl_secs: u64,
}

impl LdapConf {
    /// The `[ldap]` section of `ini` (None without `url`).
    pub fn from_ini(ini: &Ini, file: &Path, base: &Path) -> Result<Option<LdapConf>> {
        let get = |o: &str| ini.get("ldap", o).map(|v| v.trim().to_string());
        let Some(url) = get("url") else {
            return Ok(None);
        };
        let bad = |option: &str, why: String| ReposError::Config {
            file: file.to_path_buf(),
            line: None,
            svn_line: None,
            reason: format!("Config error: '[ldap] {option}': {why}"),
        };
        let bool_of = |option: &str, def: bool| match get(option) {
            None => Ok(def),
            Some(v) => {
                parse_bool(&v).ok_or_else(|| bad(option, format!("invalid boolean value '{v}'")))
            }
        };
        let secs = |option: &str, def: u64| match get(option) {
            None => Ok(def),
            Some(v) => v
                .parse::<u64>()
                .ok()
                .filter(|&n| n <= 86_400)
                .ok_or_else(|| bad(option, format!("'{v}' is not a number of seconds"))),
        };
        let (url_text, word) = match url.rsplit_once(char::is_whitespace) {
            Some((u, w)) if !w.contains("://") && !w.contains('?') => (u.trim(), Some(w)),
            _ => (url.as_str(), None),
        };
        let parsed = LdapUrl::parse(url_text).map_err(|why| bad("url", why))?;
        let starttls = bool_of("starttls", false)?;
        let tls = match (word.map(str::to_ascii_uppercase).as_deref(), parsed.ldaps) {
            (Some("TLS" | "STARTTLS"), false) => LdapTls::StartTls,
            (Some("TLS" | "STARTTLS"), true) => {
                return Err(bad("url", "StartTLS on an ldaps:// URL".into()))
            }
            (Some("SSL") | None, true) => LdapTls::Ldaps,
            (Some("SSL"), false) => return Err(bad("url", "SSL needs an ldaps:// URL".into())),
            (Some("NONE") | None, false) if starttls => LdapTls::StartTls,
            (Some("NONE") | None, false) => LdapTls::None,
            (Some("NONE"), true) => LdapTls::Ldaps,
            (Some(w), _) => {
                return Err(bad(
                    "url",
                    format!("'{w}' after the URL is none of TLS, STARTTLS, SSL, NONE"),
                ))
            }
        };
        let path = |o: &str| get(o).filter(|v| !v.is_empty()).map(|v| base.join(v));
        let group_attributes: Vec<String> = get("group-attribute")
            .unwrap_or_else(|| "member, uniqueMember".into())
            .split(',')
            .map(|a| a.trim().to_string())
            .filter(|a| !a.is_empty())
            .collect();
        let bind_dn = get("bind-dn").filter(|v| !v.is_empty());
        let bind_password_file = path("bind-password-file");
        if bind_dn.is_some() != bind_password_file.is_some() {
            return Err(bad(
                if bind_dn.is_some() {
                    "bind-password-file"
                } else {
                    "bind-dn"
                },
                "bind-dn and bind-password-file go together".into(),
            ));
        }
        let group_filter = match get("group-filter").unwrap_or_default().as_str() {
            "" => "(|(objectClass=groupOfNames)(objectClass=groupOfUniqueNames)(objectClass=posixGroup))"
                .to_string(),
            f if f.starts_with('(') => f.to_string(),
            f => format!("({f})"),
        };
        Ok(Some(LdapConf {
            url: parsed,
            tls,
            bind_dn,
            bind_password_file,
            ca_file: path("ca-file"),
            group_base: get("group-base").filter(|v| !v.is_empty()),
            group_filter,
            group_attributes,
            group_attribute_is_dn: bool_of("group-attribute-is-dn", true)?,
            group_name_attribute: get("group-name-attribute")
                .filter(|v| !v.is_empty())
                .unwrap_or_else(|| "cn".into()),
            timeout_secs: secs("timeout", 5)?.max(1),
            cache_ttl_secs: secs("cache-ttl", 60)?,
        }))
    }
}

fn is_url(v: &str) -> bool {
    // svn_path_is_url: a scheme of letters, digits, '+', '-', '.' followed by "://".
    match v.find("://") {
        Some(0) | None => false,
        Some(i) => v[..i]
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.')),
    }
}

/// Subversion's booleans: true/yes/on/1, false/no/off/0 (words in any case).
pub fn parse_bool(v: &str) -> Option<bool> {
    let l = v.to_ascii_lowercase();
    match l.as_str() {
        "true" | "yes" | "on" => Some(true),
        "false" | "no" | "off" => Some(false),
        _ if v == "1" => Some(true),
        _ if v == "0" => Some(false),
        _ => None,
    }
}

/// A password database: `[users]` with `name = password`. User names match without regard
/// to ASCII case, as svnserve looks them up.
#[derive(Debug, Clone, Default)]
pub struct PasswdDb {
    ini: Ini,
}

impl PasswdDb {
    pub fn parse(data: &[u8], file: &Path) -> Result<PasswdDb> {
        Ok(PasswdDb {
            ini: Ini::parse(data, file)?,
        })
    }

    /// Reads `file`, which must exist.
    pub fn load(file: &Path) -> Result<PasswdDb> {
        Ok(PasswdDb {
            ini: Ini::load(file, true)?,
        })
    }

    pub fn password(&self, user: &str) -> Option<String> {
        self.ini.get("users", user)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Ini {
        Ini::parse(s.as_bytes(), Path::new("t.conf")).expect("parses")
    }

    fn parse_err(s: &str) -> (Option<usize>, String) {
        match Ini::parse(s.as_bytes(), Path::new("t.conf")) {
            Err(ReposError::Config {
                line,
                reason,
                file,
                svn_line,
            }) => {
                assert_eq!(file, Path::new("t.conf"));
                assert!(svn_line <= line);
                (line, reason)
            }
            other => panic!("expected a config error, got {other:?}"),
        }
    }

    #[test]
    fn options_separators_and_whitespace() {
        let ini = parse(
            "\u{feff}# comment\n[general]\r\nanon-access = none\r\nauth-access:write\nrealm =  My Realm  \n\
             url = http://x:80/a=b\nempty =\n",
        );
        assert_eq!(ini.get("general", "anon-access").as_deref(), Some("none"));
        assert_eq!(ini.get("general", "auth-access").as_deref(), Some("write"));
        assert_eq!(ini.get("general", "realm").as_deref(), Some("My Realm"));
        // The first ':' before the first '=' separates: name "url", value "//x:80/a=b"? No:
        // "url = http" has '=' first, and the colon after it belongs to the value.
        assert_eq!(
            ini.get("general", "url").as_deref(),
            Some("http://x:80/a=b")
        );
        assert_eq!(ini.get("general", "empty").as_deref(), Some(""));
        assert_eq!(ini.get("general", "missing"), None);
        let ini = parse("[s]\na:b=c\n");
        assert_eq!(ini.get("s", "a").as_deref(), Some("b=c"));
    }

    #[test]
    fn case_insensitive_names_and_last_value_wins() {
        let ini = parse("[General]\nAnon-Access = read\nanon-access = write\n");
        assert_eq!(ini.get("general", "ANON-ACCESS").as_deref(), Some("write"));
        assert_eq!(ini.options("GENERAL"), vec!["anon-access"]);
    }

    #[test]
    fn continuation_lines() {
        let ini = parse("[s]\na = one\n  two  \n\t# three\nb = x\n");
        assert_eq!(ini.get("s", "a").as_deref(), Some("one two # three"));
        // After an empty line an indented line is no continuation: an error.
        assert_eq!(
            parse_err("[s]\nb = x\n\n  c\n"),
            (Some(4), "Option expected".into())
        );
    }

    #[test]
    fn syntax_errors_name_the_line() {
        assert_eq!(
            parse_err("a = b\n"),
            (Some(1), "Section header expected".into())
        );
        assert_eq!(
            parse_err("[]\na = b\n"),
            (Some(2), "Section header expected".into())
        );
        assert_eq!(
            parse_err("[s]\n  [t]\n"),
            (
                Some(2),
                "Section header must start in the first column".into()
            )
        );
        assert_eq!(
            parse_err("[s\n"),
            (Some(1), "Section header must end with ']'".into())
        );
        assert_eq!(
            parse_err("[s]\n\n   # x\n"),
            (Some(3), "Comment must start in the first column".into())
        );
        assert_eq!(
            parse_err("[s]\nnovalue\n"),
            (Some(2), "Option must end with ':' or '='".into())
        );
        let e = Ini::parse(b"[s]\nx\n", Path::new("/r/conf/svnserve.conf"))
            .expect_err("bad")
            .to_string();
        assert_eq!(
            e,
            "/r/conf/svnserve.conf:2: Option must end with ':' or '='"
        );
    }

    #[test]
    fn subversion_numbers_lines_without_section_headers() {
        // svnserve says "line 3" for this stray line 4 (checked against svnserve in the
        // serve tests); the true line is kept for the log.
        match Ini::parse(
            b"[general]\nanon-access = read\n\n  stray\n",
            Path::new("c"),
        ) {
            Err(ReposError::Config { line, svn_line, .. }) => {
                assert_eq!((line, svn_line), (Some(4), Some(3)));
            }
            other => panic!("expected a config error, got {other:?}"),
        }
    }

    #[test]
    fn section_header_ignores_the_rest_of_its_line() {
        let ini = parse("[general] trailing ] junk\na = 1\n");
        assert_eq!(ini.get("general", "a").as_deref(), Some("1"));
    }

    #[test]
    fn default_section_and_its_quirks() {
        let ini = parse("[DEFAULT]\nrealm = d\n[general]\nanon-access = none\n");
        assert_eq!(ini.get("general", "realm").as_deref(), Some("d"));
        // A section that does not exist sees nothing, not even [DEFAULT].
        assert_eq!(ini.get("nosuch", "realm"), None);
        // Setting, in an existing section, an option [DEFAULT] has replaces [DEFAULT]'s.
        let ini = parse("[DEFAULT]\nrealm = d\n[general]\nx = 1\nrealm = g\n[other]\ny = 2\n");
        assert_eq!(ini.get("other", "realm").as_deref(), Some("g"));
        // ... but not when the section is new (its first option creates it).
        let ini = parse("[DEFAULT]\nrealm = d\n[general]\nrealm = g\n[other]\ny = 2\n");
        assert_eq!(ini.get("other", "realm").as_deref(), Some("d"));
        assert_eq!(ini.get("general", "realm").as_deref(), Some("g"));
    }

    #[test]
    fn expansion() {
        let ini = parse(
            "[DEFAULT]\nroot = /srv\n[general]\ndir = %(root)s/conf\npassword-db = %(dir)s/passwd\n\
             unknown = %(nope)s/x\nopen = a%(b\ncyc1 = %(cyc2)s\ncyc2 = x%(cyc1)s\nself = %(self)s!\n\
             upper = %(ROOT)s\n",
        );
        assert_eq!(
            ini.get("general", "password-db").as_deref(),
            Some("/srv/conf/passwd")
        );
        assert_eq!(ini.get("general", "unknown").as_deref(), Some("%(nope)s/x"));
        assert_eq!(ini.get("general", "open").as_deref(), Some("a%(b"));
        assert_eq!(ini.get("general", "cyc1").as_deref(), Some(""));
        assert_eq!(ini.get("general", "self").as_deref(), Some(""));
        assert_eq!(ini.get("general", "upper").as_deref(), Some("/srv"));
        // Exponential chains are cut off, not expanded forever.
        let mut s = String::from("[s]\na0 = xxxxxxxxxxxxxxxx\n");
        for i in 1..40 {
            s.push_str(&format!("a{i} = %(a{p})s%(a{p})s\n", p = i - 1));
        }
        assert_eq!(parse(&s).get("s", "a39").as_deref(), Some(""));
    }

    fn conf(s: &str) -> Result<SvnserveConf> {
        let ini = parse(s);
        SvnserveConf::from_ini(
            &ini,
            Path::new("/r/conf/svnserve.conf"),
            Path::new("/r/conf"),
            Path::new("/r/conf"),
        )
    }

    #[test]
    fn svnserve_defaults() {
        let c = conf("").expect("conf");
        assert_eq!(c.anon_access, Access::Read);
        assert_eq!(c.auth_access, Access::Write);
        assert_eq!(c.password_db, None);
        assert_eq!(c.realm, None);
        assert!(!c.use_sasl);
        assert_eq!(c.hooks_env, Path::new("/r/conf/hooks-env"));
        assert_eq!(c.force_username_case, UsernameCase::AsIs);
    }

    #[test]
    fn svnserve_options() {
        let c = conf(
            "[general]\nanon-access = none\nauth-access = Read\npassword-db = passwd\nrealm = R\n\
             force-username-case = lower\nhooks-env = /etc/env\n[sasl]\nuse-sasl = Yes\n",
        )
        .expect("conf");
        assert_eq!(c.anon_access, Access::None);
        // Only the exact words count: "Read" is no access.
        assert_eq!(c.auth_access, Access::None);
        assert_eq!(c.password_db.as_deref(), Some(Path::new("/r/conf/passwd")));
        assert_eq!(c.realm.as_deref(), Some("R"));
        // Without authz-db svnserve ignores force-username-case.
        assert_eq!(c.force_username_case, UsernameCase::AsIs);
        assert!(c.use_sasl);
        assert_eq!(c.hooks_env, Path::new("/etc/env"));
        let c = conf(
            "[general]\nauthz-db = authz\ngroups-db = ^/groups\nforce-username-case = upper\n\
             password-db = /etc/passwd-svn\nhooks-env = env\n",
        )
        .expect("conf");
        assert_eq!(c.authz_db, Some(AccessFile::Path("/r/conf/authz".into())));
        assert_eq!(
            c.groups_db,
            Some(AccessFile::ReposRelative("^/groups".into()))
        );
        assert_eq!(c.force_username_case, UsernameCase::Upper);
        assert_eq!(c.password_db.as_deref(), Some(Path::new("/etc/passwd-svn")));
        assert_eq!(c.hooks_env, Path::new("/r/conf/env"));
        let c = conf("[general]\nauthz-db = file:///r/authz\n").expect("conf");
        assert_eq!(c.authz_db, Some(AccessFile::Url("file:///r/authz".into())));
        let e = conf("[sasl]\nuse-sasl = maybe\n")
            .expect_err("bad bool")
            .to_string();
        assert!(
            e.contains("invalid boolean value 'maybe' for '[sasl] use-sasl'"),
            "{e}"
        );
    }

    #[test]
    fn passwd_lookup_ignores_case_of_names_not_passwords() {
        let db = PasswdDb::parse(
            b"[users]\nHarry = Secret\nsally = s p\n",
            Path::new("passwd"),
        )
        .expect("passwd");
        assert_eq!(db.password("harry").as_deref(), Some("Secret"));
        assert_eq!(db.password("HARRY").as_deref(), Some("Secret"));
        assert_eq!(db.password("sally").as_deref(), Some("s p"));
        assert_eq!(db.password("nobody"), None);
    }

    #[test]
    fn missing_files() {
        let dir = tempfile::tempdir().expect("tempdir");
        let c = SvnserveConf::for_repository(dir.path()).expect("absent conf = defaults");
        assert_eq!(c.anon_access, Access::Read);
        let missing = dir.path().join("nope.conf");
        assert!(SvnserveConf::load(&missing, true, dir.path(), dir.path()).is_err());
        assert!(PasswdDb::load(&missing).is_err());
    }

    #[test]
    fn ldap_urls_and_the_ldap_section() {
        let u = LdapUrl::parse(
            "ldap://127.0.0.1:3890/ou=people,dc=example%2Cx?cn?one?objectClass=person",
        )
        .expect("parses");
        assert_eq!(
            (u.ldaps, u.host.as_str(), u.port, u.base.as_str()),
            (false, "127.0.0.1", 3890, "ou=people,dc=example,x")
        );
        assert_eq!(
            (u.attribute.as_str(), u.scope, u.filter.as_str()),
            ("cn", LdapScope::One, "(objectClass=person)")
        );
        let d = LdapUrl::parse("LDAPS://ldap.example.com/dc=example").expect("parses");
        assert_eq!((d.ldaps, d.port, d.attribute.as_str()), (true, 636, "uid"));
        assert_eq!(
            (d.scope, d.filter.as_str()),
            (LdapScope::Sub, "(objectClass=*)")
        );
        for bad in [
            "http://x/dc=a",
            "ldap://x:99999/dc=a",
            "ldap:///dc=a",
            "ldap://x/dc=a?uid?deep",
            "ldap://a b/dc=a",
            "ldap://x/dc=a?u)id",
            "ldap://x/dc=%zz",
        ] {
            assert!(LdapUrl::parse(bad).is_err(), "{bad}");
        }
        let conf = |text: &str| {
            let ini = Ini::parse(text.as_bytes(), Path::new("/c/svnserve.conf")).expect("ini");
            LdapConf::from_ini(&ini, Path::new("/c/svnserve.conf"), Path::new("/c"))
        };
        assert_eq!(conf("[general]\nanon-access = read\n").expect("ok"), None);
        let l = conf(
            "[ldap]\nurl = ldap://h/dc=e?uid??(objectClass=inetOrgPerson) TLS\n\
             bind-dn = cn=svelto,dc=e\nbind-password-file = ldap.secret\n\
             group-base = ou=groups,dc=e\ngroup-attribute = memberUid\n\
             group-attribute-is-dn = no\ntimeout = 2\n",
        )
        .expect("ok")
        .expect("configured");
        assert_eq!(l.tls, LdapTls::StartTls);
        assert_eq!(l.url.filter, "(objectClass=inetOrgPerson)");
        assert_eq!(
            l.bind_password_file.as_deref(),
            Some(Path::new("/c/ldap.secret"))
        );
        assert_eq!(l.group_attributes, ["memberUid"]);
        assert!(!l.group_attribute_is_dn);
        assert_eq!((l.timeout_secs, l.cache_ttl_secs), (2, 60));
        let s = conf("[ldap]\nurl = ldap://h/dc=e\nstarttls = yes\n")
            .expect("ok")
            .expect("on");
        assert_eq!((s.tls, s.bind_dn), (LdapTls::StartTls, None));
        for bad in [
            "[ldap]\nurl = ldaps://h/dc=e TLS\n",
            "[ldap]\nurl = ldap://h/dc=e BOGUS\n",
            "[ldap]\nurl = ldap://h/dc=e\nbind-dn = cn=x\n",
            "[ldap]\nurl = ldap://h/dc=e\ntimeout = soon\n",
            "[ldap]\nurl = ldap://h/dc=e\nstarttls = maybe\n",
        ] {
            let e = conf(bad).expect_err(bad).to_string();
            assert!(e.contains("[ldap]"), "{e}");
        }
    }
}
