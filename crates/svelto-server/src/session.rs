//! One connection's life: greeting, the client's response, which repository, the auth
//! exchange, repos-info, then commands until the client leaves (protocol doc 2, 3).

use crate::actions::{self, RunNote};
use crate::auth::Auth;
use crate::cmd;
use crate::cmd::Needs;
use crate::conn::{Conn, ConnError};
use crate::error::{code, CmdError, Failure};
use crate::metrics::ErrorKind;
use crate::url;
use crate::Shared;
use std::cell::Cell;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;
use svelto_core::{join, validate_path, Revnum};
use svelto_repos::conf::{Access, PasswdDb, SvnserveConf};
use svelto_repos::service::{self, Ctx, Where};
use svelto_repos::ReposError;
use svelto_store::Repo;
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

/// What the client announced.
#[derive(Debug, Clone, Copy, Default)]
pub struct ClientCaps {
    pub svndiff1: bool,
    pub svndiff2: bool,
    pub absent_entries: bool,
    /// `mergeinfo`: the one client capability svnserve passes to the start-commit hook.
    pub mergeinfo: bool,
}

pub struct Session {
    /// The client's view of the repository: handle, writer, user, authz rules.
    pub ctx: Ctx,
    pub uuid: String,
    /// The repository's root URL as the client spells it.
    pub root_url: String,
    /// The session path (relpath inside the repository).
    pub path: String,
    pub caps: ClientCaps,
    auth: Auth,
    /// The peer is on this machine: send deltas uncompressed.
    pub loopback: bool,
    /// The repository's name as the log gives it (its path under the root, URI-encoded).
    pub repos_name: String,
    /// What the running command's report and commit said, for the log line.
    pub note: Cell<RunNote>,
}

impl Session {
    /// The svndiff version to send: uncompressed to a peer on this machine, else the best
    /// the client accepts.
    pub fn svndiff_version(&self) -> u8 {
        if self.loopback {
            0
        } else if self.caps.svndiff2 {
            2
        } else if self.caps.svndiff1 {
            1
        } else {
            0
        }
    }

    /// A client path (relative to the session path) as a repository relpath.
    pub fn full_path(&self, p: &[u8]) -> Result<String, CmdError> {
        let s = std::str::from_utf8(p).map_err(|_| {
            CmdError::new(
                code::BAD_FILENAME,
                format!("Path '{}' is not UTF-8", String::from_utf8_lossy(p)),
            )
        })?;
        validate_path(&join(&self.path, s.trim_matches('/')))
            .map_err(|e| CmdError::new(code::BAD_FILENAME, format!("Invalid path: {e}")))
    }
}

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

fn fail_item(code: u64, msg: &str) -> Item {
    failure(&[svelto_wire::ErrorLink::new(code, msg)])
}

/// Runs a connection to its end, logging how it ended. True when it ended by refusing
/// what the client sent (the client may still be sending the rest of it).
pub fn run<R: Read, W: Write>(
    shared: &Shared,
    conn: &mut Conn<R, W>,
    id: usize,
    peer: &str,
    loopback: bool,
) -> bool {
    let started = Instant::now();
    let mut commands = 0u64;
    let client = client_host(peer);
    let result = handshake(shared, conn, loopback, &client).and_then(|session| match session {
        Some(mut s) => command_loop(shared, conn, &mut s, &mut commands, &client),
        None => Ok(()),
    });
    let _ = conn.flush();
    // What the commands did not count (the handshake, a last partial read).
    shared.metrics.bytes(
        conn.bytes_in.saturating_sub(conn.metered_in),
        conn.bytes_out.saturating_sub(conn.metered_out),
    );
    let refused = matches!(result, Err(ConnError::Wire(_) | ConnError::Budget(_)));
    let how = match result {
        Ok(()) => "closed".to_string(),
        Err(e) => {
            shared.metrics.error(fatal_kind(&e));
            // Tell the client why, when it can still hear it.
            let why = match &e {
                ConnError::Wire(w) => Some(w.svn_error_code()),
                ConnError::Budget(_) => Some(svelto_wire::ERR_REQUEST_SIZE),
                ConnError::Io(_) => None,
            };
            if let Some(code) = why {
                let _ = conn.write_item(&fail_item(code, &e.to_string()));
                let _ = conn.flush();
            }
            format!("ended: {e}")
        }
    };
    shared.log.line(&format!(
        "conn {id} {peer}: {how} after {commands} commands, {:.3} s, {} bytes in",
        started.elapsed().as_secs_f64(),
        conn.bytes_in
    ));
    refused
}

/// The client's address without the port (svnserve logs the host), or `-`.
fn client_host(peer: &str) -> String {
    match peer.parse::<std::net::SocketAddr>() {
        Ok(a) => a.ip().to_string(),
        Err(_) => "-".into(),
    }
}

/// The kind of error that ended a connection, for the metrics.
fn fatal_kind(e: &ConnError) -> ErrorKind {
    match e {
        ConnError::Wire(WireError::RequestTooLarge { .. } | WireError::DecodedTooLarge { .. }) => {
            ErrorKind::Limit
        }
        ConnError::Wire(_) => ErrorKind::Protocol,
        ConnError::Budget(_) => ErrorKind::Limit,
        ConnError::Io(io) => match io.kind() {
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => ErrorKind::Timeout,
            _ if io
                .get_ref()
                .is_some_and(|i| i.is::<crate::conn::ResponseTooLarge>()) =>
            {
                ErrorKind::Limit
            }
            _ => ErrorKind::Io,
        },
    }
}

/// `--virtual-host`: the root for the URL's host part (`ROOT/HOST[:PORT]`), as svnserve
/// joins it; `None` when the host part could escape the root.
fn virtual_root(root: &Path, url: &str) -> Option<PathBuf> {
    let rest = url.split_once("://")?.1;
    let host = rest.split('/').next()?;
    let bad = host.is_empty() || host == "." || host == ".." || host.contains('\\');
    (!bad).then(|| root.join(host))
}

fn handshake<R: Read, W: Write>(
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
            code::BAD_VERSION,
            &format!("Client requested protocol version {version}; this server speaks version 2"),
        ))?;
        return Ok(None);
    }
    if !caps.contains(&"edit-pipeline") {
        conn.write_item(&fail_item(
            code::BAD_VERSION,
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
        match virtual_root(&shared.config.root, &url) {
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
        shared.config.root.clone()
    };
    let located = match url::locate(&root, &url, &service::Repos::is_repo) {
        Ok(l) => l,
        Err(e) => {
            conn.write_item(&failure(&e.chain))?;
            return Ok(None);
        }
    };
    let opened = shared
        .repos
        .open(&located.repo_dir)
        .and_then(|r| Ok((r.0.uuid()?, r)));
    let (uuid, (repo, writer)) = match opened {
        Ok(v) => v,
        Err(e) => {
            shared
                .log
                .line(&format!("{}: {e}", located.repo_dir.display()));
            let e = crate::error::store_error(&e);
            conn.write_item(&failure(&e.chain))?;
            return Ok(None);
        }
    };
    // svnserve.conf, reread for every connection (changes apply without a restart).
    let loaded = load_auth(shared, &located.repo_dir, &uuid).and_then(|(auth, conf)| {
        let authz = load_authz(shared, &conf, &repo, &located.repo_dir)?;
        Ok((auth, conf, authz))
    });
    let (auth, conf, authz) = match loaded {
        Ok(v) => v,
        Err(e) => {
            shared.log.line(&format!(
                "{}: refusing the connection: {}",
                located.repo_dir.display(),
                e.message()
            ));
            conn.write_item(&failure(&e.chain))?;
            return Ok(None);
        }
    };
    if auth.anon_access == Access::None && !auth.can_authenticate_for(Access::Read) {
        shared.metrics.error(ErrorKind::Auth);
        conn.write_item(&fail_item(
            code::RA_NOT_AUTHORIZED,
            "No access allowed to this repository",
        ))?;
        return Ok(None);
    }
    let mut user = None;
    auth.request(conn, &mut user, Access::Read, false)?;
    if auth.current(&user) == Access::None {
        shared.metrics.error(ErrorKind::Auth);
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
    let repos_name = located
        .repo_dir
        .strip_prefix(&shared.config.root)
        .ok()
        .map(|p| p.to_string_lossy().into_owned())
        .filter(|p| !p.is_empty())
        .or_else(|| {
            located
                .repo_dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "-".into());
    let repos_name = actions::uri_encode(&repos_name);
    let dash_or_encoded = |s: Option<String>| match s.filter(|s| !s.is_empty()) {
        Some(s) => actions::uri_encode(&s),
        None => "-".into(),
    };
    shared.log.open(
        client,
        user.as_deref(),
        &repos_name,
        &format!(
            "open 2 cap=({cap_log}) {} {} {}",
            actions::uri_encode(&format!("/{}", located.session_path)),
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

impl Session {
    /// For the log: a report entry (`set-path` when `set`, else `link-path`).
    pub fn note_report_entry(&self, path: &str, rev: Option<Revnum>, start_empty: bool, set: bool) {
        let mut n = self.note.get();
        n.report_entry(path, rev, start_empty, set);
        self.note.set(n);
    }

    /// For the log and the metrics: the command committed revision `rev`.
    pub fn note_commit(&self, rev: Revnum) {
        let mut n = self.note.get();
        n.committed = Some(rev);
        self.note.set(n);
    }

    /// Sends the auth slot for a command that needs `needs`: empty when the session has
    /// it, else the exchange that gets it; fails (in the slot's place) when it cannot.
    pub fn authorize<R: Read, W: Write>(
        &mut self,
        conn: &mut Conn<R, W>,
        needs: Needs,
        at: Where,
    ) -> Result<(), Failure> {
        let (required, needs_user) = match needs {
            Needs::Read => (Access::Read, false),
            Needs::Write => (Access::Write, false),
            Needs::WriteAsUser => (Access::Write, true),
        };
        // svnserve's lookup_access: blanket access, the authz rules for the path, a user name.
        let enough = |s: &Session| {
            s.auth.current(&s.ctx.user) >= required
                && (!needs_user || s.ctx.user.is_some())
                && s.ctx.allows(&at, required == Access::Write)
        };
        if enough(self) {
            conn.write_item(&empty_slot())?;
            return Ok(());
        }
        // A user name is what could bring more: ask for one (no ANONYMOUS), as svnserve's
        // must_have_access does; the exchange's final answer stands in for the slot.
        if self.ctx.user.is_none() && self.auth.can_authenticate_for(required) {
            self.auth
                .request(conn, &mut self.ctx.user, required, true)?;
        }
        if enough(self) {
            Ok(())
        } else {
            Err(crate::auth::not_authorized().into())
        }
    }
}

/// The auth slot before a command's response when nothing more is needed.
pub fn empty_slot() -> Item {
    success(vec![Item::empty_list(), Item::string("")])
}

/// Counts a write command as running until dropped.
struct WriteGuard<'a>(&'a Shared);

impl<'a> WriteGuard<'a> {
    fn new(shared: &'a Shared) -> Self {
        shared
            .writes_in_flight
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        WriteGuard(shared)
    }
}

impl Drop for WriteGuard<'_> {
    fn drop(&mut self) {
        self.0
            .writes_in_flight
            .fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

fn command_loop<R: Read, W: Write>(
    shared: &Shared,
    conn: &mut Conn<R, W>,
    s: &mut Session,
    count: &mut u64,
    client: &str,
) -> Result<(), ConnError> {
    loop {
        let in_before = conn.bytes_in;
        let Some(item) = conn.read_item()? else {
            return Ok(());
        };
        *count += 1;
        let started = Instant::now();
        conn.start_command();
        let out_before = conn.bytes_out;
        let mut t = TupleReader::from_item(&item)?;
        let name = t.word()?.to_string();
        let params = t.list()?;
        let row = cmd::lookup(&name);
        // `reparent` moves the session; its action names the new path from its parameter.
        let fs_path = format!("/{}", s.path);
        s.note.set(RunNote::default());
        let guard = row
            .is_some_and(|(_, spec)| spec.writes())
            .then(|| WriteGuard::new(shared));
        let mut error: Vec<(u64, String)> = Vec::new();
        let mut fatal = None;
        // What the log says, from the request: a revision the client left out is the HEAD
        // the command just read (no file read here; `youngest` is in memory).
        let repo = s.ctx.repo.clone();
        let head = move || repo.youngest();
        let root_url = s.root_url.clone();
        let ctx = actions::Ctx {
            fs_path,
            root_url: &root_url,
            head: &head,
        };
        let log = shared.log.is_enabled().then_some(&ctx);
        let served = match row {
            Some((index, _)) => cmd::dispatch(index, s, conn, params, log),
            None => cmd::Served {
                result: Err(cmd::unknown(&name).into()),
                action: actions::Pending::Nothing,
            },
        };
        match served.result {
            Ok(()) => {}
            Err(Failure::Cmd(e)) => {
                conn.write_item(&failure(&e.chain))?;
            }
            Err(Failure::Fatal(e)) => fatal = Some(e),
        }
        if let Some(g) = guard {
            // The client hears the outcome before a shutdown may end the process.
            let _ = conn.flush();
            drop(g);
        }
        if let Some(chain) = conn.take_failure() {
            error = chain;
        }
        let note = s.note.get();
        if note.committed.is_some() {
            shared.metrics.commit();
        }
        let took = started.elapsed();
        let (bytes_in, bytes_out) = (conn.bytes_in - in_before, conn.bytes_out - out_before);
        if let Some(e) = fatal.as_ref() {
            // The connection ends: the log gets svnserve's kind of ERR line for why.
            let code = match e {
                ConnError::Wire(w) => w.svn_error_code(),
                ConnError::Budget(_) => svelto_wire::ERR_REQUEST_SIZE,
                ConnError::Io(io)
                    if io
                        .get_ref()
                        .is_some_and(|i| i.is::<crate::conn::ResponseTooLarge>()) =>
                {
                    crate::RA_SVN_RESPONSE_SIZE
                }
                // SVN_ERR_RA_SVN_CONNECTION_CLOSED
                ConnError::Io(_) => 210002,
            };
            error = vec![(code, e.to_string())];
        }
        let failed = !error.is_empty() || fatal.is_some();
        if let Some((code, _)) = error.first() {
            if fatal.is_none() {
                shared.metrics.error(ErrorKind::of_code(*code));
            }
        }
        shared.metrics.command(&name, took, failed);
        shared.metrics.bytes(bytes_in, bytes_out);
        conn.metered_in += bytes_in;
        conn.metered_out += bytes_out;
        // svnserve checks access before it logs a command: a refused one has no action.
        let refused = error
            .first()
            .is_some_and(|(code, _)| ErrorKind::of_code(*code) == ErrorKind::Auth);
        let actions = if !refused && fatal.is_none() {
            served.action.finish(&note)
        } else {
            Vec::new()
        };
        shared.log.request(&crate::log::Request {
            client,
            user: s.ctx.user.as_deref(),
            repos: &s.repos_name,
            command: &name,
            actions: &actions,
            duration: took,
            bytes_in,
            bytes_out,
            error: &error,
        });
        if let Some(e) = fatal {
            return Err(e);
        }
    }
}

/// The repository's svnserve.conf (or `--config-file`) and what it allows. Errors are what
/// the client is told before the connection closes.
fn load_auth(
    shared: &Shared,
    repo_dir: &Path,
    uuid: &str,
) -> Result<(Auth, SvnserveConf), CmdError> {
    let repos_conf = repo_dir.join("conf");
    let conf = match &shared.config.config_file {
        Some(file) => {
            let base = file.parent().unwrap_or(Path::new("/"));
            SvnserveConf::load(file, true, base, &repos_conf)
        }
        None => SvnserveConf::for_repository(repo_dir),
    }
    .map_err(|e| conf_error(&e))?;
    let pwdb = match &conf.password_db {
        None => None,
        Some(path) => match PasswdDb::load(path) {
            Ok(db) => Some(db),
            // svnserve goes on without CRAM-MD5 when the file is unreadable to it.
            Err(ReposError::Io { err, .. })
                if err.kind() == std::io::ErrorKind::PermissionDenied =>
            {
                shared.log.line(&format!(
                    "{}: password-db '{}' is not readable: offering no CRAM-MD5",
                    conf.file.display(),
                    path.display()
                ));
                None
            }
            Err(e) => {
                // The details go to the log; the client gets svnserve's bare message.
                shared
                    .log
                    .line(&format!("{}: password-db: {e}", conf.file.display()));
                return Err(CmdError::new(code::AUTHN_FAILED, "Authentication failed"));
            }
        },
    };
    if let Some(refusal) = conf.sasl_refusal() {
        return Err(CmdError::new(code::BAD_CONFIG_VALUE, refusal));
    }
    let realm = conf.realm.clone().unwrap_or_else(|| uuid.to_string());
    let auth = Auth::new(
        &conf,
        shared.config.read_only,
        pwdb,
        realm,
        shared.config.tunnel_user.clone(),
        shared.config.hostname.clone(),
    );
    Ok((auth, conf))
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
                code::MALFORMED_FILE,
                format!("Error while parsing config file: {}:", file.display()),
            ),
            svelto_wire::ErrorLink::new(code::MALFORMED_FILE, format!("line {line}: {reason}")),
        ]),
        ReposError::Config { reason, .. } => CmdError::new(code::BAD_CONFIG_VALUE, reason.clone()),
        other => CmdError::new(code::FS_GENERAL, other.to_string()),
    }
}

/// The authz rules svnserve.conf names for a connection to the repository in `repo_dir`
/// (None without `authz-db`). A file that cannot be read or parsed refuses the connection
/// with svnserve's generic answer; the details go to the log.
fn load_authz(
    shared: &Shared,
    conf: &SvnserveConf,
    repo: &Repo,
    repo_dir: &Path,
) -> Result<Option<service::AuthzCtx>, CmdError> {
    let Some(rules) = &conf.authz_db else {
        return Ok(None);
    };
    let src = service::AuthzSource {
        rules,
        groups: conf.groups_db.as_ref(),
        case: conf.force_username_case,
        repos: repo_dir
            .strip_prefix(&shared.config.root)
            .ok()
            .map(|p| p.to_string_lossy().into_owned())
            .filter(|p| !p.is_empty()),
    };
    service::authz::load(src, repo, repo_dir)
        .map(Some)
        .map_err(|why| {
            shared.log.line(&format!(
                "{}: refusing the connection: invalid authz configuration: {why}",
                repo_dir.display()
            ));
            CmdError::new(code::AUTHZ_INVALID_CONFIG, "")
        })
}
