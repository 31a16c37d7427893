//! The svn:// commands (protocol doc 4): one table that names every command with what it
//! needs, and the one path every command takes through it.
//!
//! Each command's parameters are decoded once, into a typed request (a type implementing
//! [`Command`] (`command.rs`), beside its handler: `node.rs`, `history.rs`, `report.rs`, `replay.rs`,
//! `revprops.rs`, `locks.rs`, `commit.rs`). The table below gives, for each wire name, that
//! type, the access its auth slot asks for and what the authz rules are checked against;
//! the type gives its decoding, its run and its log action. Dispatch, the auth slot, the
//! write count a shutdown waits for, the metrics and the request log all read this table.
//!
//! A new command is one row here plus its type (parse, run, action).

use crate::actions::{Ctx, Pending};
use crate::command::Command;
use crate::conn::Conn;
use crate::error::{code, CmdError, CmdResult};
use crate::session::{Needs, Session};
use std::io::{Read, Write};
use svelto_repos::action::word::*;
use svelto_repos::service::Where;
use svelto_wire::{success, Item, TupleReader};

/// What a command's auth slot checks the authz rules against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum At {
    /// Nothing (svnserve's trivial auth request; the command filters what it reads).
    Blanket,
    /// The path the request names ([`Command::authz_path`]).
    Path,
    /// Anywhere in the repository (svnserve passes no path).
    Anywhere,
}

/// One row of the table.
#[derive(Debug, Clone, Copy)]
pub struct Spec {
    /// The command's word on the wire (also its name in the metrics).
    pub name: &'static str,
    /// The access its auth slot asks for.
    pub needs: Needs,
    /// What the authz rules are checked against in that slot.
    pub at: At,
}

impl Spec {
    /// It changes the repository: a shutdown waits for it to finish.
    pub fn writes(&self) -> bool {
        self.needs != Needs::Read
    }
}

/// Serves a request of one command: decode, the auth slot, run, response; the log action
/// when `log` is set (after the run: a revision the client left out is the HEAD it read).
type Serve<R, W> = fn(&Spec, &mut Session, &mut Conn<R, W>, &[Item], Option<&Ctx<'_>>) -> Served;

/// How a request went.
pub struct Served {
    pub result: CmdResult<()>,
    /// The log action (`Pending::Nothing` when not asked for or the request did not decode).
    pub action: Pending,
}

macro_rules! command_table {
    ($( $name:expr => $ty:ty, $needs:ident, $at:ident; )*) => {
        /// Every command: wire name, access, authz target (the handler: [`handlers`]).
        pub const COMMANDS: &[Spec] = &[
            $( Spec { name: $name, needs: Needs::$needs, at: At::$at }, )*
        ];

        /// The handler of each row of [`COMMANDS`], in the same order.
        fn handlers<R: Read, W: Write>() -> [Serve<R, W>; COMMANDS.len()] {
            [ $( serve::<$ty, R, W>, )* ]
        }

        /// The parameter decoder of each row of [`COMMANDS`], in the same order.
        fn parsers() -> [fn(&[Item]) -> CmdResult<()>; COMMANDS.len()] {
            [ $( parse_as::<$ty>, )* ]
        }

        /// The log action of command `name` with `params`, without running it.
        #[cfg(test)]
        pub fn describe(name: &str, params: &[Item], ctx: &Ctx<'_>) -> Pending {
            let describers: [fn(&[Item], &Ctx<'_>) -> Pending; COMMANDS.len()] =
                [ $( describe_as::<$ty>, )* ];
            match lookup(name) {
                Some((i, _)) => describers[i](params, ctx),
                None => Pending::Nothing,
            }
        }
    };
}

command_table! {
    // wire name: svnserve's log names a command by it, so where the log's action word is
    // the same it is spelled once, in svelto_repos::action::word
    // wire name                  request                                 access     authz target
    REPARENT                => crate::node::Reparent,                    Read,        Blanket;
    GET_LATEST_REV          => crate::node::GetLatestRev,                Read,        Blanket;
    GET_DATED_REV           => crate::node::GetDatedRev,                 Read,        Blanket;
    CHANGE_REV_PROP         => crate::revprops::ChangeRevProp,           Write,       Anywhere;
    "change-rev-prop2"      => crate::revprops::ChangeRevProp2,          Write,       Anywhere;
    REV_PROPLIST            => crate::revprops::RevProplist,             Read,        Blanket;
    REV_PROP                => crate::revprops::RevProp,                 Read,        Blanket;
    COMMIT                  => crate::commit::Commit,                    Write,       Anywhere;
    GET_FILE                => crate::node::GetFile,                     Read,        Path;
    GET_DIR                 => crate::node::GetDir,                      Read,        Path;
    LIST                    => crate::node::List,                        Read,        Path;
    CHECK_PATH              => crate::node::CheckPath,                   Read,        Path;
    STAT                    => crate::node::Stat,                        Read,        Path;
    "get-iprops"            => crate::node::GetIprops,                   Read,        Path;
    UPDATE                  => crate::report::Update,                    Read,        Path;
    SWITCH                  => crate::report::Switch,                    Read,        Blanket;
    STATUS                  => crate::report::Status,                    Read,        Blanket;
    DIFF                    => crate::report::Diff,                      Read,        Blanket;
    LOG                     => crate::history::Log,                      Read,        Blanket;
    GET_LOCATIONS           => crate::history::GetLocations,             Read,        Blanket;
    GET_LOCATION_SEGMENTS   => crate::history::GetLocationSegments,      Read,        Blanket;
    GET_FILE_REVS           => crate::history::GetFileRevs,              Read,        Blanket;
    GET_DELETED_REV         => crate::history::GetDeletedRev,            Read,        Blanket;
    GET_MERGEINFO           => crate::history::GetMergeinfo,             Read,        Blanket;
    LOCK                    => crate::locks::LockOne,                    WriteAsUser, Path;
    "lock-many"             => crate::locks::LockMany,                   WriteAsUser, Anywhere;
    UNLOCK                  => crate::locks::UnlockOne,                  WriteAsUser, Path;
    "unlock-many"           => crate::locks::UnlockMany,                 WriteAsUser, Anywhere;
    GET_LOCK                => crate::locks::GetLock,                    Read,        Path;
    GET_LOCKS               => crate::locks::GetLocks,                   Read,        Blanket;
    REPLAY                  => crate::replay::Replay,                    Read,        Blanket;
    REPLAY_RANGE            => crate::replay::ReplayRange,               Read,        Blanket;
}

/// The row of command `name`, and its index in [`COMMANDS`].
pub fn lookup(name: &str) -> Option<(usize, &'static Spec)> {
    COMMANDS.iter().enumerate().find(|(_, c)| c.name == name)
}

/// Runs command `index` of [`COMMANDS`] with its parameter tuple.
pub fn dispatch<R: Read, W: Write>(
    index: usize,
    s: &mut Session,
    conn: &mut Conn<R, W>,
    params: &[Item],
    log: Option<&Ctx<'_>>,
) -> Served {
    handlers::<R, W>()[index](&COMMANDS[index], s, conn, params, log)
}

/// Decodes the parameter tuple of command `name` into its typed request as [`dispatch`]
/// does before it checks or runs anything, and drops it: None for a command the table does
/// not name. For fuzzing (`svelto_server::parse_command`).
pub fn parse_only(name: &str, params: &[Item]) -> Option<CmdResult<()>> {
    lookup(name).map(|(i, _)| parsers()[i](params))
}

fn parse_as<C: Command>(params: &[Item]) -> CmdResult<()> {
    C::parse(&mut TupleReader::new(params)).map(drop)
}

/// A command the table does not name.
pub fn unknown(name: &str) -> CmdError {
    CmdError::new(
        code::RA_SVN_UNKNOWN_CMD,
        format!("Unknown editor command '{name}'"),
    )
}

#[cfg(test)]
fn describe_as<C: Command>(params: &[Item], ctx: &Ctx<'_>) -> Pending {
    C::parse(&mut TupleReader::new(params)).map_or(Pending::Nothing, |c| c.action(ctx))
}

fn serve<C: Command, R: Read, W: Write>(
    spec: &Spec,
    s: &mut Session,
    conn: &mut Conn<R, W>,
    params: &[Item],
    log: Option<&Ctx<'_>>,
) -> Served {
    let req = match C::parse(&mut TupleReader::new(params)) {
        Ok(r) => r,
        Err(e) => {
            return Served {
                result: Err(e),
                action: Pending::Nothing,
            }
        }
    };
    let result = serve_request(spec, &req, s, conn);
    let action = log.map_or(Pending::Nothing, |ctx| req.action(ctx));
    Served { result, action }
}

fn serve_request<C: Command, R: Read, W: Write>(
    spec: &Spec,
    req: &C,
    s: &mut Session,
    conn: &mut Conn<R, W>,
) -> CmdResult<()> {
    if let Some(e) = req.refuse_before_slot() {
        return Err(e.into());
    }
    let at = match spec.at {
        _ if !s.ctx.has_authz() => Where::Blanket,
        At::Blanket => Where::Blanket,
        At::Anywhere => Where::Anywhere,
        At::Path => req
            .authz_path()
            .and_then(|raw| s.full_path(raw).ok())
            .map_or(Where::Blanket, Where::Path),
    };
    s.authorize(conn, req.needs(spec.needs), at)?;
    if let Some(results) = req.run(s, conn)? {
        conn.write_item(&success(results))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_command_is_named_once() {
        let mut names: Vec<&str> = COMMANDS.iter().map(|c| c.name).collect();
        names.sort_unstable();
        let n = names.len();
        names.dedup();
        assert_eq!(names.len(), n);
        assert_eq!(handlers::<&[u8], Vec<u8>>().len(), n);
    }

    #[test]
    fn writes_are_the_commands_that_need_write_access() {
        let writes: Vec<&str> = COMMANDS
            .iter()
            .filter(|c| c.writes())
            .map(|c| c.name)
            .collect();
        assert_eq!(
            writes,
            [
                "change-rev-prop",
                "change-rev-prop2",
                "commit",
                "lock",
                "lock-many",
                "unlock",
                "unlock-many"
            ]
        );
    }
}

/// Each command's log action, from its typed request (`actions.rs` holds the words).
#[cfg(test)]
mod action_tests {
    use super::*;
    use crate::actions::RunNote;

    fn ctx_at(path: &str) -> Ctx<'static> {
        Ctx {
            fs_path: path.into(),
            root_url: "svn://h/repo",
            head: &|| 7,
        }
    }

    fn items(text: &[u8]) -> Vec<Item> {
        let (item, _) = svelto_wire::decode(text, &svelto_wire::Limits::default())
            .expect("decodes")
            .expect("whole");
        item.as_list().expect("list").to_vec()
    }

    fn done(name: &str, params: &[u8], path: &str) -> Vec<String> {
        describe(name, &items(params), &ctx_at(path)).finish(&RunNote::default())
    }

    #[test]
    fn actions_read_like_svnserves() {
        assert_eq!(
            done("get-file", b"( 1:a ( ) false true ) ", "/trunk"),
            ["get-file /trunk/a r7 text"]
        );
        assert_eq!(
            done("check-path", b"( 0: ( 2 ) ) ", "/"),
            ["check-path /@2"]
        );
        assert_eq!(
            done("stat", b"( 5:a b%c ( ) ) ", "/t"),
            ["stat /t/a%20b%25c@7"]
        );
        assert_eq!(
            done(
                "log",
                b"( ( 0: ) ( 2 ) ( 0 ) false false 0 false revprops ( 10:svn:author 8:svn:date ) ) ",
                "/trunk"
            ),
            ["log (/trunk) r2:0 revprops=(svn:author svn:date)"]
        );
        assert_eq!(
            done("list", b"( 0: ( 2 ) immediates ( kind ) ) ", "/"),
            ["list / r2 depth=immediates <ANY>"]
        );
        assert_eq!(
            done("reparent", b"( 12:svn://h/repo ) ", "/trunk"),
            ["reparent /"]
        );
        assert_eq!(done("commit", b"( 1:m ) ", "/"), Vec::<String>::new());
    }

    #[test]
    fn update_is_a_checkout_when_the_report_starts_empty() {
        let p = items(b"( ( 2 ) 0: true infinity false ) ");
        let mut note = RunNote::default();
        note.report_entry("", Some(2), true, true);
        assert_eq!(
            describe("update", &p, &ctx_at("/trunk")).finish(&note),
            ["checkout-or-export /trunk r2 depth=infinity"]
        );
        let mut note = RunNote::default();
        note.report_entry("", Some(1), false, true);
        assert_eq!(
            describe("update", &p, &ctx_at("/trunk")).finish(&note),
            ["update /trunk r2 depth=infinity"]
        );
    }
}
