//! `svelto admin`: svnadmin's subcommands over a Svelto repository.
//!
//! This file holds the subcommand table, the helpers the subcommands share and the error
//! report: errors print as svnadmin prints them (`svnadmin: E<code>: <message>` on standard
//! error, outermost first, exit status 1), so that scripts and Subversion's own test suite
//! that match svnadmin's codes keep working. Each subcommand (or family of subcommands)
//! lives in its own file with its arguments and its `run`.

mod create;
mod dump;
mod front_end_dir;
mod gc;
mod hotcopy;
mod info;
mod load;
mod locks;
mod maintenance;
mod members;
mod progress;
mod revprop_dumps;
mod revprops;
mod setuuid;
mod verify;

use anyhow::{Context, Result};
use clap::{CommandFactory, Parser, Subcommand};
use std::error::Error as StdError;
use std::ffi::OsString;
use std::fmt;
use std::io::{self, Write};
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use svelto_admin::AdminError;
use svelto_core::{code, Env, Revnum};
use svelto_fs::{ReadRepo, StoreError};
use svelto_repos::ReposError;

#[derive(Subcommand)]
pub enum AdminCommand {
    /// Create a new, empty repository.
    Create(create::CreateArgs),
    /// List the front ends of a cluster (--cluster FILE) present now. Not in the
    /// subcommand list, which is svnadmin's.
    #[command(hide = true)]
    Members(members::MembersArgs),
    /// Delete the orphaned objects of failed commits in a cluster repository (--cluster
    /// FILE NAME): one pass of the collector. Not in the subcommand list, which is
    /// svnadmin's.
    #[command(hide = true)]
    Gc(gc::GcArgs),
    /// Load a dumpfile (formats 1-3) from standard input or -F FILE.
    Load(load::LoadArgs),
    /// Write a dumpfile to standard output or -F FILE.
    Dump(dump::DumpArgs),
    /// Check every revision's data and checksums.
    Verify(verify::VerifyArgs),
    /// Show the repository's UUID, youngest revision, format and size.
    Info(info::InfoArgs),
    /// Set the repository's UUID (a new random one without NEW_UUID).
    Setuuid(setuuid::SetuuidArgs),
    /// Set the log message of revision -r REVISION to the contents of FILE.
    Setlog(revprops::SetlogArgs),
    /// Set the property NAME of revision -r REVISION to the contents of FILE.
    Setrevprop(revprops::SetrevpropArgs),
    /// Delete the property NAME of revision -r REVISION.
    Delrevprop(revprops::DelrevpropArgs),
    /// Write the revision properties of revisions LOWER[:UPPER] as a dumpfile.
    DumpRevprops(revprop_dumps::DumpRevpropsArgs),
    /// Set revision properties from a dumpfile's revision records.
    LoadRevprops(revprop_dumps::LoadRevpropsArgs),
    /// Make a consistent copy of a repository while it is in use (--incremental: only
    /// what an earlier copy lacks).
    Hotcopy(hotcopy::HotcopyArgs),
    /// Run a program while the repositories' writes are held: `freeze REPO -- PROGRAM
    /// [ARG...]`, `freeze -F FILE -- PROGRAM [ARG...]`.
    Freeze(hotcopy::FreezeArgs),
    /// Lock PATH for USERNAME with the comment in COMMENT-FILE (and TOKEN if given).
    Lock(locks::LockArgs),
    /// Unlock LOCKED_PATH as USERNAME, given the lock's TOKEN.
    Unlock(locks::UnlockArgs),
    /// Describe the locks on or below PATH-IN-REPOS (default: the whole repository).
    Lslocks(locks::LslocksArgs),
    /// Remove the locks of each LOCKED_PATH, whoever holds them.
    Rmlocks(locks::RmlocksArgs),
    /// Print the names of the transactions a commit's hooks see now.
    Lstxns(maintenance::LstxnsArgs),
    /// Delete the named transactions left by a writer that is gone.
    Rmtxns(maintenance::RmtxnsArgs),
    /// Do what the next writer does on opening: check db/current, cut a crashed
    /// writer's leftovers, drop stale transactions.
    Recover(maintenance::RecoverArgs),
    /// Bring the repository to the current format (what recover does; one format exists).
    Upgrade(maintenance::UpgradeArgs),
    /// Nothing to pack: the store is not sharded.
    Pack(maintenance::PackArgs),
    /// Go over revisions LOWER[:UPPER]; the dedup index is written by every commit.
    BuildRepcache(maintenance::RangeArgs),
    /// Go over revisions LOWER[:UPPER]; texts are stored as deltas by every commit.
    Deltify(maintenance::RangeArgs),
    /// Print the bytes revision -r REVISION added to the store.
    RevSize(maintenance::RangeArgs),
    /// List Berkeley DB log files: none in a Svelto repository.
    ListDblogs(maintenance::RepoArgs),
    /// List unused Berkeley DB log files: none in a Svelto repository.
    ListUnusedDblogs(maintenance::RepoArgs),
    /// Open the repository, then abort, as a server process that crashes.
    Crashtest(maintenance::RepoArgs),
}

pub fn run(cmd: AdminCommand) -> Result<()> {
    match cmd {
        AdminCommand::Create(args) => create::run(args),
        AdminCommand::Members(args) => members::run(args),
        AdminCommand::Gc(args) => gc::run(args),
        AdminCommand::Load(args) => load::run(args),
        AdminCommand::Dump(args) => dump::run(args),
        AdminCommand::Verify(args) => verify::run(args),
        AdminCommand::Info(args) => info::run(args),
        AdminCommand::Setuuid(args) => setuuid::run(args),
        AdminCommand::Setlog(args) => revprops::setlog(args),
        AdminCommand::Setrevprop(args) => revprops::setrevprop(args),
        AdminCommand::Delrevprop(args) => revprops::delrevprop(args),
        AdminCommand::DumpRevprops(args) => revprop_dumps::dump_revprops(args),
        AdminCommand::LoadRevprops(args) => revprop_dumps::load_revprops(args),
        AdminCommand::Hotcopy(args) => hotcopy::run(args),
        AdminCommand::Freeze(args) => hotcopy::freeze(args),
        AdminCommand::Lock(args) => locks::lock(args),
        AdminCommand::Unlock(args) => locks::unlock(args),
        AdminCommand::Lslocks(args) => locks::lslocks(args),
        AdminCommand::Rmlocks(args) => locks::rmlocks(args),
        AdminCommand::Lstxns(args) => maintenance::lstxns(args),
        AdminCommand::Rmtxns(args) => maintenance::rmtxns(args),
        AdminCommand::Recover(args) => maintenance::recover(args),
        AdminCommand::Upgrade(args) => maintenance::upgrade(args),
        AdminCommand::Pack(args) => maintenance::pack(args),
        AdminCommand::BuildRepcache(args) => maintenance::build_repcache(args),
        AdminCommand::Deltify(args) => maintenance::deltify(args),
        AdminCommand::RevSize(args) => maintenance::rev_size(args),
        AdminCommand::ListDblogs(args) | AdminCommand::ListUnusedDblogs(args) => {
            maintenance::list_dblogs(args)
        }
        AdminCommand::Crashtest(args) => maintenance::crashtest(args),
    }
}

/// The clap definition of `svelto admin`, for the manual pages and completions.
pub fn command() -> clap::Command {
    AdminCli::command()
}

#[derive(Parser)]
#[command(
    name = "svelto admin",
    about = "Repository administration, with svnadmin's contracts"
)]
struct AdminCli {
    #[command(subcommand)]
    command: AdminCommand,
}

/// The name errors carry, as svnadmin's (scripts and Subversion's tests match it).
const PROG: &str = "svnadmin";

/// Runs `svelto admin ARGS...` (the words after `admin`).
pub fn main(args: Vec<OsString>) -> ExitCode {
    let words: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    match words.first().map(String::as_str) {
        Some("help" | "h" | "?") => return help(&words[1..]),
        Some("--help" | "-h") if words.len() == 1 => return help(&[]),
        _ => {}
    }
    let argv = std::iter::once(OsString::from("svelto admin")).chain(args.iter().cloned());
    let mut cmd = match AdminCli::try_parse_from(argv) {
        Ok(cli) => cli.command,
        Err(e) => return usage_error(e, &args),
    };
    let result = front_end_dir::resolve(&mut cmd).and_then(|()| run(cmd));
    let flushed = io::stdout().flush();
    match result.and_then(|()| match flushed {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            report(&e);
            ExitCode::FAILURE
        }
    }
}

/// `svelto admin help [SUBCOMMAND...]` as `svnadmin help`: without names, the general
/// usage and every subcommand, sorted; with names, each one's usage and options (an
/// unknown name said so), exit status 0.
fn help(names: &[String]) -> ExitCode {
    use clap::CommandFactory;
    let mut cli = AdminCli::command();
    let mut out = String::new();
    if names.is_empty() {
        out.push_str(
            "general usage: svelto admin SUBCOMMAND REPOS_PATH  [ARGS & OPTIONS ...]\n\
             Repository administration, with svnadmin's subcommands, options, output and \
             error codes.\n\
             Type 'svelto admin help <subcommand>' for help on a specific subcommand.\n\
             Type 'svelto --version' to see the program version and storage format.\n\n\
             Available subcommands:\n",
        );
        let mut subs: Vec<String> = cli
            .get_subcommands()
            .filter(|c| !c.is_hide_set())
            .map(|c| c.get_name().to_string())
            .filter(|n| n != "help")
            .chain(["help (?, h)".to_string()])
            .collect();
        subs.sort();
        for name in subs {
            out.push_str(&format!("   {name}\n"));
        }
        out.push('\n');
    }
    for name in names {
        match cli.find_subcommand_mut(name) {
            Some(sub) if name != "help" => {
                let sub = sub.clone().bin_name(format!("svelto admin {name}"));
                let mut sub = sub;
                out.push_str(&format!("{name}: {}\n", sub.render_help()));
            }
            _ => out.push_str(&format!("\"{name}\": unknown command.\n\n")),
        }
    }
    let _ = io::stdout().lock().write_all(out.as_bytes());
    ExitCode::SUCCESS
}

/// A Subversion error with its code, as svnadmin reports it.
#[derive(Debug)]
pub struct SvnError {
    pub code: u32,
    pub message: String,
}

impl fmt::Display for SvnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl StdError for SvnError {}

/// An error svnadmin reports with `code`.
pub fn svn_error(code: u32, message: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(SvnError {
        code,
        message: message.into(),
    })
}

/// An argument error as svnadmin reports one from a subcommand: the message under "Try
/// 'svnadmin help' for more info", both with `code`.
pub fn arg_error(code: u32, message: impl Into<String>) -> anyhow::Error {
    svn_error(code, message).context(SvnError {
        code,
        message: format!("Try '{PROG} help' for more info"),
    })
}

/// Prints `e` as svnadmin prints an error: one line per link of the chain, outermost
/// first, each with the code of that link (a link without one takes the code below it).
pub fn report(e: &anyhow::Error) {
    let mut err = io::stderr().lock();
    for (code, message) in error_lines(e) {
        let _ = writeln!(err, "{PROG}: E{code:06}: {message}");
    }
}

/// The lines of [`report`]: (code, message), outermost first.
pub fn error_lines(e: &anyhow::Error) -> Vec<(u32, String)> {
    chain_lines(&**e)
}

/// [`error_lines`] of a library's error (`svelto_admin`'s verify prints them).
pub fn repos_error_lines(e: &ReposError) -> Vec<(u32, String)> {
    chain_lines(e)
}

/// The lines of the error chain that starts at `first`.
fn chain_lines(first: &(dyn StdError + 'static)) -> Vec<(u32, String)> {
    let mut links: Vec<(Option<u32>, String)> = Vec::new();
    let mut skip = 0;
    let mut next = Some(first);
    while let Some(link) = next {
        next = link.source();
        if skip > 0 {
            // The source of a wrapped error, already expanded below.
            skip -= 1;
            continue;
        }
        if let Some(r) = link.downcast_ref::<ReposError>() {
            // A wrapped Subversion error is two errors to svnadmin, each on its line; the
            // revision and path it happened at go before the first.
            let mut r = r;
            let mut at = String::new();
            loop {
                match r {
                    ReposError::AtRev { rev, err } => {
                        at.push_str(&format!("revision {rev}: "));
                        r = err;
                    }
                    ReposError::AtPath { rev, path, err } => {
                        at.push_str(&format!("revision {rev}, path '{path}': "));
                        r = err;
                    }
                    _ => break,
                }
            }
            // What AtRev and AtPath hold is not a link of the chain; a Wrapped's source is.
            let in_chain = at.is_empty();
            while let ReposError::Wrapped {
                kind,
                message,
                source,
            } = r
            {
                links.push((
                    Some(kind.code()),
                    format!("{}{message}", std::mem::take(&mut at)),
                ));
                r = source;
                if in_chain {
                    skip += 1;
                }
            }
            links.push((Some(repos_code(r)), format!("{at}{r}")));
            continue;
        }
        links.push((code_of(link), link.to_string()));
    }
    let mut out: Vec<(u32, String)> = Vec::new();
    for (i, (_, message)) in links.iter().enumerate() {
        // A wrapper whose text already ends with its source's text said it all.
        if out
            .last()
            .is_some_and(|(_, last)| !message.is_empty() && last.ends_with(message.as_str()))
        {
            continue;
        }
        let code = links[i..]
            .iter()
            .find_map(|(c, _)| *c)
            .unwrap_or(code::BASE);
        let message = if message.is_empty() {
            code::default_message(code).to_string()
        } else {
            message.clone()
        };
        out.push((code, message));
    }
    out
}

/// The Subversion error code of one link of an error chain, if it has its own.
fn code_of(e: &(dyn StdError + 'static)) -> Option<u32> {
    if let Some(e) = e.downcast_ref::<SvnError>() {
        return Some(e.code);
    }
    if let Some(e) = e.downcast_ref::<ReposError>() {
        return Some(repos_code(e));
    }
    if let Some(e) = e.downcast_ref::<StoreError>() {
        return Some(store_code(e));
    }
    if let Some(e) = e.downcast_ref::<io::Error>() {
        return Some(io_code(e));
    }
    None
}

/// APR reports a system error with its errno as the code.
fn io_code(e: &io::Error) -> u32 {
    e.raw_os_error()
        .and_then(|c| u32::try_from(c).ok())
        .unwrap_or(code::BASE)
}

pub fn repos_code(e: &ReposError) -> u32 {
    match e {
        ReposError::Store(s) => store_code(s),
        ReposError::Dump(_) => code::STREAM_MALFORMED_DATA,
        ReposError::AtPath { err, .. } | ReposError::AtRev { err, .. } => repos_code(err),
        ReposError::BadDump(_)
        | ReposError::Corrupt(_)
        | ReposError::Stopped(_)
        | ReposError::Refused(_)
        | ReposError::Internal(_) => code::BASE,
        ReposError::Config { .. } => code::MALFORMED_FILE,
        ReposError::NotFound { .. } | ReposError::PathNotFound { .. } => code::FS_NOT_FOUND,
        ReposError::NotDirectory { .. } => code::FS_NOT_DIRECTORY,
        ReposError::NoSuchRevision(_) | ReposError::BadRevisionRange(_) => {
            code::FS_NO_SUCH_REVISION
        }
        ReposError::NotFile { .. } => code::FS_NOT_FILE,
        ReposError::Unsupported(_) => code::UNSUPPORTED_FEATURE,
        ReposError::Io { err, .. } => io_code(err),
        ReposError::Svn { kind, .. } | ReposError::Wrapped { kind, .. } => kind.code(),
    }
}

pub fn store_code(e: &StoreError) -> u32 {
    match e {
        StoreError::Corrupt { .. } => code::FS_CORRUPT,
        StoreError::Io { err, .. } => io_code(err),
        StoreError::NotARepository(_) => 2,
        StoreError::UnsupportedFormat { .. } | StoreError::ForeignRepository { .. } => {
            code::REPOS_UNSUPPORTED_VERSION
        }
        StoreError::NoSuchRevision(_) => code::FS_NO_SUCH_REVISION,
        StoreError::PathNotFound { .. } | StoreError::TxnPathNotFound { .. } => code::FS_NOT_FOUND,
        StoreError::AlreadyExists(_) => code::FS_ALREADY_EXISTS,
        StoreError::NotADirectory(_) => code::FS_NOT_DIRECTORY,
        StoreError::NotAFile(_) => code::FS_NOT_FILE,
        StoreError::ChecksumMismatch { .. } => code::CHECKSUM_MISMATCH,
        StoreError::BadDelta { .. } => code::SVNDIFF_CORRUPT_WINDOW,
        StoreError::NoSuchTxn(_) => code::FS_NO_SUCH_TRANSACTION,
        StoreError::BadUuid(_) => code::BAD_UUID,
        StoreError::RootOperation(_)
        | StoreError::Conflict(_)
        | StoreError::TooLarge(_)
        | StoreError::Unavailable { .. } => code::FS_GENERAL,
        StoreError::Unsupported(_) => code::UNSUPPORTED_FEATURE,
    }
}

/// Reports a command line clap refused in svnadmin's words; svnadmin exits 1 for every
/// usage error.
fn usage_error(e: clap::Error, args: &[OsString]) -> ExitCode {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let context = |kind: ContextKind| -> Vec<String> {
        match e.get(kind) {
            Some(ContextValue::String(s)) => vec![s.clone()],
            Some(ContextValue::Strings(v)) => v.clone(),
            _ => Vec::new(),
        }
    };
    let subcommand = args
        .iter()
        .map(|a| a.to_string_lossy())
        .find(|a| !a.starts_with('-'))
        .map(|a| a.into_owned())
        .unwrap_or_default();
    let mut err = io::stderr().lock();
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            // svnadmin without a subcommand prints its help on standard output, exit 1.
            let _ = write!(io::stdout(), "{}", e.render());
        }
        ErrorKind::InvalidSubcommand => {
            let name = context(ContextKind::InvalidSubcommand).concat();
            let _ = writeln!(err, "Unknown subcommand: '{name}'");
            let _ = writeln!(err, "Type '{PROG} help' for usage.");
        }
        ErrorKind::UnknownArgument => {
            let arg = context(ContextKind::InvalidArg).concat();
            if arg.starts_with('-') {
                let opt = option_name(arg.split('=').next().unwrap_or(&arg));
                let _ = writeln!(
                    err,
                    "Subcommand '{subcommand}' doesn't accept option '{opt}'"
                );
                let _ = writeln!(err, "Type '{PROG} help {subcommand}' for usage.");
            } else {
                drop(err);
                report(&arg_error(code::CL_ARG_PARSING_ERROR, "Too many arguments"));
            }
        }
        ErrorKind::MissingRequiredArgument
            if context(ContextKind::InvalidArg)
                .iter()
                .any(|a| a.contains("REPO")) =>
        {
            drop(err);
            report(&svn_error(
                code::CL_ARG_PARSING_ERROR,
                "Repository argument required",
            ));
        }
        ErrorKind::MissingRequiredArgument => {
            drop(err);
            report(&arg_error(
                code::CL_INSUFFICIENT_ARGS,
                "Not enough arguments",
            ));
        }
        _ => {
            let text = e.render().to_string();
            let first = text.lines().next().unwrap_or("");
            let first = first.strip_prefix("error: ").unwrap_or(first).to_string();
            drop(err);
            report(&arg_error(code::CL_ARG_PARSING_ERROR, first));
        }
    }
    ExitCode::FAILURE
}

/// An option as svnadmin names it in usage errors: `-q [--quiet]`, `--bypass-hooks`.
fn option_name(arg: &str) -> String {
    const SHORT: [(char, &str); 7] = [
        ('h', "help"),
        ('r', "revision"),
        ('t', "transaction"),
        ('q', "quiet"),
        ('M', "memory-cache-size"),
        ('F', "file"),
        ('?', "help"),
    ];
    let found = if let Some(long) = arg.strip_prefix("--") {
        SHORT.iter().find(|(_, l)| *l == long)
    } else {
        let c = arg.chars().nth(1);
        SHORT.iter().find(|(s, _)| Some(*s) == c)
    };
    match found {
        Some((s, l)) => format!("-{s} [--{l}]"),
        None => arg.to_string(),
    }
}

/// Opens the repository at `path`; a directory that holds none is reported as svnadmin
/// reports it (the `format` file it looked for).
/// A repository argument given with `--cluster`: its name in the cluster (UTF-8).
pub(crate) fn cluster_name(repo: &Path) -> Result<&str> {
    repo.to_str()
        .with_context(|| format!("the repository name '{}' is not UTF-8", repo.display()))
}

fn open(path: &Path) -> Result<Arc<dyn ReadRepo>> {
    svelto_admin::open(local(), path, &env()).map_err(admin_error)
}

/// A library's error as svnadmin reports it (its code kept, a wrapped Subversion error
/// unwrapped as [`error_lines`] expects it).
pub fn admin_error(e: AdminError) -> anyhow::Error {
    match e {
        AdminError::Svn { code, message } => svn_error(code, message),
        AdminError::Repos(e) => e.into(),
        AdminError::Io(e) => e.into(),
    }
}

/// One side of a `-r` argument as svnadmin's option parser reads it
/// (`svn_opt_parse_revision`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RevArg {
    Number(Revnum),
    Head,
    /// BASE, COMMITTED, PREV or a `{DATE}`: valid syntax that svnadmin's subcommands
    /// mostly refuse.
    Other,
}

fn rev_arg(s: &str) -> Option<RevArg> {
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        return s.parse().ok().map(RevArg::Number);
    }
    if s.eq_ignore_ascii_case("HEAD") {
        return Some(RevArg::Head);
    }
    let keyword = ["BASE", "COMMITTED", "PREV"]
        .iter()
        .any(|k| s.eq_ignore_ascii_case(k));
    (keyword || (s.starts_with('{') && s.ends_with('}') && s.len() > 2)).then_some(RevArg::Other)
}

/// `-r X[:Y]`, or svnadmin's syntax error.
pub fn parse_rev_option(s: &str) -> Result<(RevArg, Option<RevArg>)> {
    let syntax = || {
        svn_error(
            code::CL_ARG_PARSING_ERROR,
            format!("Syntax error in revision argument '{s}'"),
        )
    };
    match s.split_once(':') {
        Some((a, b)) => Ok((
            rev_arg(a).ok_or_else(syntax)?,
            Some(rev_arg(b).ok_or_else(syntax)?),
        )),
        None => Ok((rev_arg(s).ok_or_else(syntax)?, None)),
    }
}

/// The one revision number `-r` must give (setlog, setrevprop, delrevprop): "Missing
/// revision" and "Only one revision allowed" as svnadmin says them.
pub fn single_revision(arg: Option<&str>) -> Result<Revnum> {
    let parsed = arg.map(parse_rev_option).transpose()?;
    match parsed {
        Some((RevArg::Number(n), None)) => Ok(n),
        Some((RevArg::Number(_), Some(_))) => Err(arg_error(
            code::CL_ARG_PARSING_ERROR,
            "Only one revision allowed",
        )),
        _ => Err(arg_error(code::CL_ARG_PARSING_ERROR, "Missing revision")),
    }
}

/// The text of an OS error without Rust's " (os error N)".
pub fn os_message(e: &io::Error) -> String {
    let text = e.to_string();
    match text.rfind(" (os error ") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

/// A file's bytes, or svnadmin's "Can't open file" error.
pub fn read_file(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| can_not_open(path, &e))
}

/// The storage backend of the repositories `svelto admin` names by their directory
/// (`--cluster` opens the cluster's).
fn local() -> &'static dyn svelto_fs::Backend {
    crate::local_backend()
}

/// Where the libraries take the time and fresh names from.
fn env() -> Arc<dyn Env> {
    crate::system_env()
}

/// The writer of the repository at `path` (waiting for a commit in progress).
pub fn open_writer(path: &Path) -> svelto_repos::Result<Box<dyn svelto_fs::WriteRepo>> {
    Ok(local().open_writer(path)?)
}

/// What runs with the repository's writer held.
pub type WriterBody<'a> =
    &'a mut dyn FnMut(&mut dyn svelto_fs::WriteRepo) -> svelto_repos::Result<()>;

/// Runs a body with the repository's writer held (waiting for a commit in progress), for
/// the library calls that take a `with_writer`.
pub fn with_writer(path: &Path) -> impl FnOnce(WriterBody<'_>) -> svelto_repos::Result<()> + '_ {
    move |f| {
        let mut w = open_writer(path)?;
        f(&mut *w)
    }
}

/// `-r LOWER[:UPPER]` of the subcommands that read revisions (svnadmin's
/// `get_dump_range`): numbers, HEAD; all revisions when absent, LOWER alone when UPPER is.
pub fn dump_range(arg: Option<&str>, youngest: Revnum) -> Result<(Revnum, Revnum)> {
    revision_range(arg, youngest, (0, youngest))
}

/// `-r LOWER[:UPPER]` checked as svnadmin's `get_revnum` checks each side, `default`
/// when absent.
pub fn revision_range(
    arg: Option<&str>,
    youngest: Revnum,
    default: (Revnum, Revnum),
) -> Result<(Revnum, Revnum)> {
    let Some(arg) = arg else {
        return Ok(default);
    };
    let (lo, hi) = parse_rev_option(arg)?;
    ordered(
        revnum(lo, youngest)?,
        hi.map(|h| revnum(h, youngest)).transpose()?,
    )
}

/// One side of `-r` as a revision of a repository whose youngest is `youngest`
/// (svnadmin's `get_revnum`).
pub fn revnum(r: RevArg, youngest: Revnum) -> Result<Revnum> {
    match r {
        RevArg::Number(n) if n > youngest => Err(arg_error(
            code::CL_ARG_PARSING_ERROR,
            format!("Revisions must not be greater than the youngest revision ({youngest})"),
        )),
        RevArg::Number(n) => Ok(n),
        RevArg::Head => Ok(youngest),
        RevArg::Other => Err(arg_error(
            code::CL_ARG_PARSING_ERROR,
            "Invalid revision specifier",
        )),
    }
}

/// LOWER and UPPER (LOWER when absent), or svnadmin's error when LOWER is higher.
fn ordered(lo: Revnum, hi: Option<Revnum>) -> Result<(Revnum, Revnum)> {
    let hi = hi.unwrap_or(lo);
    if lo > hi {
        return Err(arg_error(
            code::CL_ARG_PARSING_ERROR,
            "First revision cannot be higher than second",
        ));
    }
    Ok((lo, hi))
}

/// `-r LOWER[:UPPER]` of the subcommands that load (svnadmin's `get_load_range`): dump
/// revision numbers only; None when absent.
pub fn load_range(arg: Option<&str>) -> Result<Option<(Revnum, Revnum)>> {
    let Some(arg) = arg else {
        return Ok(None);
    };
    let (lo, hi) = parse_rev_option(arg)?;
    let num = |r: RevArg| match r {
        RevArg::Number(n) => Ok(n),
        _ => Err(arg_error(
            code::CL_ARG_PARSING_ERROR,
            "Non-numeric revision specified",
        )),
    };
    ordered(num(lo)?, hi.map(num).transpose()?).map(Some)
}

/// A load's error with svnadmin's advice on top when a property value was refused
/// (`subcommand_load`): `--normalize-props` for line endings, `--bypass-prop-validation`
/// for other invalid values.
pub fn prop_hint(e: anyhow::Error) -> anyhow::Error {
    let lines = error_lines(&e);
    let advice = if lines
        .iter()
        .any(|(c, _)| *c == code::BAD_PROPERTY_VALUE_EOL)
    {
        "A property with invalid line ending found in dumpstream; consider using \
         --normalize-props while loading."
    } else if lines
        .first()
        .is_some_and(|(c, _)| *c == code::BAD_PROPERTY_VALUE)
    {
        "Invalid property value found in dumpstream; consider repairing the source or \
         using --bypass-prop-validation while loading."
    } else {
        return e;
    };
    e.context(SvnError {
        code: code::BAD_PROPERTY_VALUE,
        message: advice.to_string(),
    })
}

/// A file opened for reading, or svnadmin's "Can't open file" error.
pub fn open_file(path: &Path) -> Result<std::fs::File> {
    std::fs::File::open(path).map_err(|e| can_not_open(path, &e))
}

/// A file created (or truncated) for writing, or svnadmin's "Can't open file" error.
pub fn create_file(path: &Path) -> Result<std::fs::File> {
    std::fs::File::create(path).map_err(|e| can_not_open(path, &e))
}

fn can_not_open(path: &Path, e: &io::Error) -> anyhow::Error {
    svn_error(
        io_code(e),
        format!("Can't open file '{}': {}", path.display(), os_message(e)),
    )
}
