//! One connection's life (mini-redis's `Handler`): the handshake, then commands until the
//! client leaves, the connection fails, or the server shuts down (checked after each
//! command); each command through the table (`cmd.rs`), measured and logged.

use crate::actions::{self, RunNote};
use crate::cmd;
use crate::conn::{Conn, ConnError};
use crate::error::{code, Failure};
use crate::handshake;
use crate::session::Session;
use crate::Shared;
use std::io::{Read, Write};
use std::time::Instant;
use svelto_host::{ErrorKind, Protocol};
use svelto_wire::{failure, TupleReader, WireError};

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
    let result =
        handshake::handshake(shared, conn, loopback, &client).and_then(|session| match session {
            Some(mut s) => command_loop(shared, conn, &mut s, &mut commands, &client),
            None => Ok(()),
        });
    let _ = conn.flush();
    // What the commands did not count (the handshake, a last partial read).
    shared.host.metrics.bytes(
        Protocol::Svn,
        conn.bytes_in.saturating_sub(conn.metered_in),
        conn.bytes_out.saturating_sub(conn.metered_out),
    );
    let refused = matches!(result, Err(ConnError::Wire(_) | ConnError::Budget(_)));
    let how = match result {
        Ok(()) => "closed".to_string(),
        Err(e) => {
            shared.host.metrics.error(Protocol::Svn, fatal_kind(&e));
            // Tell the client why, when it can still hear it.
            let why = match &e {
                ConnError::Wire(w) => Some(w.svn_error_code()),
                ConnError::Budget(_) => Some(u64::from(code::RA_SVN_REQUEST_SIZE)),
                ConnError::Io(_) => None,
            };
            if let Some(code) = why {
                let _ = conn.write_item(&failure(&[svelto_wire::ErrorLink::new(
                    code,
                    e.to_string(),
                )]));
                let _ = conn.flush();
            }
            format!("ended: {e}")
        }
    };
    shared.host.log.line(&format!(
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
            .then(|| shared.host.drain.write());
        let mut error: Vec<(u64, String)> = Vec::new();
        let mut fatal = None;
        // What the log says, from the request: a revision the client left out is the HEAD
        // the command just read (no file read here; `youngest` is in memory).
        let head = s.ctx.youngest_fn();
        let root_url = s.root_url.clone();
        let ctx = actions::Ctx {
            fs_path,
            root_url: &root_url,
            head: &head,
        };
        let log = shared.host.log.is_enabled().then_some(&ctx);
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
        let took = started.elapsed();
        let (bytes_in, bytes_out) = (conn.bytes_in - in_before, conn.bytes_out - out_before);
        if let Some(e) = fatal.as_ref() {
            // The connection ends: the log gets svnserve's kind of ERR line for why.
            let code = match e {
                ConnError::Wire(w) => w.svn_error_code(),
                ConnError::Budget(_) => u64::from(code::RA_SVN_REQUEST_SIZE),
                ConnError::Io(io)
                    if io
                        .get_ref()
                        .is_some_and(|i| i.is::<crate::conn::ResponseTooLarge>()) =>
                {
                    u64::from(code::RA_SVN_RESPONSE_SIZE)
                }
                ConnError::Io(_) => u64::from(code::RA_SVN_CONNECTION_CLOSED),
            };
            error = vec![(code, e.to_string())];
        }
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
        shared.host.record(&svelto_host::Request {
            protocol: Protocol::Svn,
            client,
            user: s.ctx.user(),
            repos: &s.repos_name,
            command: row.map_or(svelto_host::OTHER, |(_, spec)| spec.name),
            actions: &actions,
            duration: took,
            bytes_in,
            bytes_out,
            error: &error,
            fatal: fatal.is_some(),
            committed: note.committed.is_some(),
            http: None,
        });
        if let Some(e) = fatal {
            return Err(e);
        }
        // A shutdown lets the running command finish and answer, then ends the connection.
        if shared.is_shutting_down() {
            return Ok(());
        }
    }
}
