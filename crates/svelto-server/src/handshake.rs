//! The start of a connection (protocol doc 2, 3): greeting, the client's response, which
//! repository, its svnserve.conf and authz rules, the auth exchange, repos-info.

use crate::actions::RunNote;
use crate::auth::Auth;
use crate::conn::{Conn, ConnError};
use crate::error::{code, CmdError};
use crate::session::{ClientCaps, Session};
use crate::url;
use crate::Shared;
use std::cell::Cell;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use svelto_host::{Admission, ErrorKind, Protocol};
use svelto_repos::conf::{Access, PasswdDb};
use svelto_repos::service::{self, Ctx};
use svelto_repos::ReposError;
use svelto_wire::{failure, success, Item, TupleReader, WireError};

/// What the server announces in the greeting; each word only once it really works.
pub const CAPABILITIES: &[&str] = &[
    "edit-pipeline",
    "svndiff1",
    "accepts-svndiff2",
    "absent-entries",
    "depth",
    "log-revprops",
    "partial-replay",
    "inherited-props",
    "file-revs-reverse",
    "list",
    "commit-revprops",
    "atomic-revprops",
    "ephemeral-txnprops",
];

fn greeting() -> Item {
    success(vec![
        Item::Number(2),
        Item::Number(2),
        Item::empty_list(),
        Item::list(
            CAPABILITIES
                .iter()
                .map(|c| Item::word(*c))
                .collect::<Vec<_>>(),
        ),
    ])
}

pub fn fail_item(code: u32, msg: &str) -> Item {
    failure(&[svelto_wire::ErrorLink::new(u64::from(code), msg)])
}

/// `--virtual-host`: the root for the URL's host part (`ROOT/HOST[:PORT]`), as svnserve
/// joins it; `None` when the host part could escape the root.
fn virtual_root(root: &Path, url: &str) -> Option<PathBuf> {
    let rest = url.split_once("://")?.1;
    let host = rest.split('/').next()?;
    let bad = host.is_empty() || host == "." || host == ".." || host.contains('\\');
    (!bad).then(|| root.join(host))
}

pub fn handshake<R: Read, W: Write>(
    shared: &Shared,
    conn: &mut Conn<R, W>,
    loopback: bool,
    client: &str,
) -> Result<Option<Session>, ConnError> {
    conn.write_item(&greeting())?;
    let Some(resp) = conn.read_item()? else {
        return Ok(None);
    };
    let mut t = TupleReader::from_item(&resp)?;
    let version = t.number()?;
    let caps: Vec<&str> = t
        .list()?
        .iter()
        .map(|i| {
            i.as_word().ok_or(WireError::Tuple {
                position: 1,
                expected: "capability word",
                found: i.kind_name(),
            })
        })
        .collect::<Result<_, _>>()?;
    let url = String::from_utf8_lossy(t.string()?).into_owned();
    // Optional: the RA library's and the client program's names (for the log).
    let ra_client = t
        .opt_string()
        .ok()
        .flatten()
        .map(|s| String::from_utf8_lossy(s).into_owned());
    let client_string = t.opt_tuple().ok().flatten().and_then(|mut c| {
        c.string()
            .ok()
            .map(|s| String::from_utf8_lossy(s).into_owned())
    });
    let cap_log = caps.join(" ");
    if version != 2 {
        conn.write_item(&fail_item(
            code::RA_SVN_BAD_VERSION,
            &format!("Client requested protocol version {version}; this server speaks version 2"),
        ))?;
        return Ok(None);
    }
    if !caps.contains(&"edit-pipeline") {
        conn.write_item(&fail_item(
            code::RA_SVN_BAD_VERSION,
            "Client does not support editor pipelining (edit-pipeline); upgrade the client",
        ))?;
        return Ok(None);
    }
    let client_caps = ClientCaps {
        svndiff1: caps.contains(&"svndiff1"),
        svndiff2: caps.contains(&"accepts-svndiff2"),
        absent_entries: caps.contains(&"absent-entries"),
        mergeinfo: caps.contains(&"mergeinfo"),
    };
    let root = if shared.config.virtual_host {
        match virtual_root(&shared.host.config.root, &url) {
            Some(r) => r,
            None => {
                conn.write_item(&fail_item(
                    code::BAD_FILENAME,
                    "Couldn't determine repository path",
                ))?;
                return Ok(None);
            }
        }
    } else {
        shared.host.config.root.clone()
    };
    let located = match url::locate(&root, &url, &|d: &std::path::Path| {
        shared.host.repos.is_repo(d)
    }) {
        Ok(l) => l,
        Err(e) => {
            conn.write_item(&failure(&e.chain))?;
            return Ok(None);
        }
    };
    let opened = shared
        .host
        .repos
        .open(&located.repo_dir)
        .and_then(|r| Ok((r.0.uuid()?, r)));
    let (uuid, (repo, writer)) = match opened {
        Ok(v) => v,
        Err(e) => {
            shared
                .host
                .log
                .line(&format!("{}: {e}", located.repo_dir.display()));
            let e = crate::error::repos_error(&ReposError::from(e));
            conn.write_item(&failure(&e.chain))?;
            return Ok(None);
        }
    };
    // svnserve.conf, reread for every connection (changes apply without a restart).
    let loaded = load_auth(shared, &located.repo_dir, &uuid).and_then(|(auth, adm)| {
        let authz = adm
            .authz_source()
            .map(|src| {
                service::authz::load(src, &*repo, &located.repo_dir)
                    .map_err(|why| authz_refused(shared, &located.repo_dir, &why))
            })
            .transpose()?;
        Ok((auth, adm.conf, authz))
    });
    let (auth, conf, authz) = match loaded {
        Ok(v) => v,
        Err(e) => {
            shared.host.log.line(&format!(
                "{}: refusing the connection: {}",
                located.repo_dir.display(),
                e.message()
            ));
            conn.write_item(&failure(&e.chain))?;
            return Ok(None);
        }
    };
    if auth.anon_access == Access::None && !auth.can_authenticate_for(Access::Read) {
        shared.host.metrics.error(Protocol::Svn, ErrorKind::Auth);
        conn.write_item(&fail_item(
            code::RA_NOT_AUTHORIZED,
            "No access allowed to this repository",
        ))?;
        return Ok(None);
    }
    let mut user = None;
    auth.request(conn, &mut user, Access::Read, false)?;
    if auth.current(user.as_deref()) == Access::None {
        shared.host.metrics.error(Protocol::Svn, ErrorKind::Auth);
        conn.write_item(&fail_item(
            code::RA_NOT_AUTHORIZED,
            "Not authorized for access",
        ))?;
        return Ok(None);
    }
    conn.write_item(&success(vec![
        Item::string(uuid.clone()),
        Item::string(located.root_url.clone()),
        Item::list(vec![Item::word("mergeinfo")]),
    ]))?;
    // svnserve's name for the repository: its path under the root, else its basename.
    let repos_name = shared
        .host
        .repos_name(&located.repo_dir)
        .or_else(|| {
            located
                .repo_dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "-".into());
    let repos_name = svelto_repos::action::uri_encode(&repos_name);
    let dash_or_encoded = |s: Option<String>| match s.filter(|s| !s.is_empty()) {
        Some(s) => svelto_repos::action::uri_encode(&s),
        None => "-".into(),
    };
    shared.host.log.open(
        client,
        user.as_deref(),
        &repos_name,
        &format!(
            "open 2 cap=({cap_log}) {} {} {}",
            svelto_repos::action::uri_encode(&format!("/{}", located.session_path)),
            dash_or_encoded(ra_client),
            dash_or_encoded(client_string)
        ),
    );
    Ok(Some(Session {
        ctx: Ctx::new(repo, writer, user, authz, conf.hooks_env.clone()),
        uuid,
        root_url: located.root_url,
        path: located.session_path,
        caps: client_caps,
        auth,
        loopback,
        repos_name,
        note: Cell::new(RunNote::default()),
    }))
}

/// The repository's admission (svnserve.conf or `--config-file`, realm, levels) and how
/// its clients authenticate over svn://. Errors are what the client is told before the
/// connection closes.
fn load_auth(shared: &Shared, repo_dir: &Path, uuid: &str) -> Result<(Auth, Admission), CmdError> {
    let adm = shared
        .host
        .admission(repo_dir, || Ok(uuid.to_string()))
        .map_err(|e| conf_error(&e))?;
    let conf = &adm.conf;
    let pwdb = match &conf.password_db {
        None => None,
        Some(path) => match PasswdDb::load(path) {
            Ok(db) => Some(db),
            // svnserve goes on without CRAM-MD5 when the file is unreadable to it.
            Err(ReposError::Io { err, .. })
                if err.kind() == std::io::ErrorKind::PermissionDenied =>
            {
                shared.host.log.line(&format!(
                    "{}: password-db '{}' is not readable: offering no CRAM-MD5",
                    conf.file.display(),
                    path.display()
                ));
                None
            }
            Err(e) => {
                // The details go to the log; the client gets svnserve's bare message.
                shared
                    .host
                    .log
                    .line(&format!("{}: password-db: {e}", conf.file.display()));
                return Err(CmdError::new(code::AUTHN_FAILED, "Authentication failed"));
            }
        },
    };
    if let Some(refusal) = conf.sasl_refusal() {
        return Err(CmdError::new(code::BAD_CONFIG_VALUE, refusal));
    }
    let auth = Auth::new(
        &adm,
        pwdb,
        shared.config.tunnel_user.clone(),
        shared.config.hostname.clone(),
        shared.host.repos.env().clone(),
    );
    Ok((auth, adm))
}

/// A configuration file error as svnserve reports it to the client.
fn conf_error(e: &ReposError) -> CmdError {
    match e {
        ReposError::Config {
            file,
            svn_line: Some(line),
            reason,
            ..
        } => CmdError::from_chain(vec![
            svelto_wire::ErrorLink::new(
                u64::from(code::MALFORMED_FILE),
                format!("Error while parsing config file: {}:", file.display()),
            ),
            svelto_wire::ErrorLink::new(
                u64::from(code::MALFORMED_FILE),
                format!("line {line}: {reason}"),
            ),
        ]),
        ReposError::Config { reason, .. } => CmdError::new(code::BAD_CONFIG_VALUE, reason.clone()),
        other => CmdError::new(code::FS_GENERAL, other.to_string()),
    }
}

/// An authz file that cannot be read or parsed refuses the connection with svnserve's
/// generic answer; the details go to the log.
fn authz_refused(shared: &Shared, repo_dir: &Path, why: &str) -> CmdError {
    shared.host.log.line(&format!(
        "{}: refusing the connection: invalid authz configuration: {why}",
        repo_dir.display()
    ));
    CmdError::new(code::AUTHZ_INVALID_CONFIG, "")
}
