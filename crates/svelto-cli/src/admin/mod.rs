//! `svelto admin`: svnadmin's subcommands over a Svelto repository.
//!
//! This file holds the subcommand table, the helpers the subcommands share and the error
//! report: errors print as svnadmin prints them (`svnadmin: E<code>: <message>` on standard
//! error, outermost first, exit status 1), so that scripts and Subversion's own test suite
//! that match svnadmin's codes keep working. Each subcommand (or family of subcommands)
//! lives in its own file with its arguments and its `run`.

mod create;
mod dump;
mod info;
mod load;
mod setuuid;
mod verify;

use anyhow::Result;
use clap::{Parser, Subcommand};
use std::error::Error as StdError;
use std::ffi::OsString;
use std::fmt;
use std::io::{self, Write};
use std::path::Path;
use std::process::ExitCode;
use svelto_core::Revnum;
use svelto_repos::ReposError;
use svelto_store::{Repo, StoreError};

#[derive(Subcommand)]
pub enum AdminCommand {
    /// Create a new, empty repository.
    Create(create::CreateArgs),
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
}

pub fn run(cmd: AdminCommand) -> Result<()> {
    match cmd {
        AdminCommand::Create(args) => create::run(args),
        AdminCommand::Load(args) => load::run(args),
        AdminCommand::Dump(args) => dump::run(args),
        AdminCommand::Verify(args) => verify::run(args),
        AdminCommand::Info(args) => info::run(args),
        AdminCommand::Setuuid(args) => setuuid::run(args),
    }
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

/// `SVN_ERR_CL_ARG_PARSING_ERROR`.
pub const E_ARG_PARSING: u32 = 205000;
/// `SVN_ERR_CL_INSUFFICIENT_ARGS`.
pub const E_INSUFFICIENT_ARGS: u32 = 205001;
/// `SVN_ERR_BASE`: no more specific code.
const E_BASE: u32 = 200000;

/// Runs `svelto admin ARGS...` (the words after `admin`).
pub fn main(args: Vec<OsString>) -> ExitCode {
    let argv = std::iter::once(OsString::from("svelto admin")).chain(args.iter().cloned());
    let cmd = match AdminCli::try_parse_from(argv) {
        Ok(cli) => cli.command,
        Err(e) => return usage_error(e, &args),
    };
    let result = run(cmd);
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
    let links: Vec<&(dyn StdError + 'static)> = e.chain().collect();
    let codes: Vec<Option<u32>> = links.iter().map(|l| code_of(*l)).collect();
    let mut err = io::stderr().lock();
    let mut last = String::new();
    for (i, link) in links.iter().enumerate() {
        let message = link.to_string();
        // A wrapper whose text already ends with its source's text said it all.
        if !last.is_empty() && last.ends_with(&message) {
            continue;
        }
        let code = codes[i..]
            .iter()
            .flatten()
            .next()
            .copied()
            .unwrap_or(E_BASE);
        let _ = writeln!(err, "{PROG}: E{code:06}: {message}");
        last = message;
    }
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
        .unwrap_or(E_BASE)
}

pub fn repos_code(e: &ReposError) -> u32 {
    match e {
        ReposError::Store(s) => store_code(s),
        ReposError::Dump(_) => 140001,
        ReposError::AtPath { err, .. } | ReposError::AtRev { err, .. } => repos_code(err),
        ReposError::Invalid(_) => E_BASE,
        ReposError::Config { .. } => 200002,
        ReposError::NotFound { .. } | ReposError::PathNotFound { .. } => 160013,
        ReposError::NotDirectory { .. } => 160016,
        ReposError::NoSuchRevision(_) | ReposError::BadRevisionRange(_) => 160006,
        ReposError::NotFile { .. } => 160017,
        ReposError::Unsupported(_) => 200007,
        ReposError::Io { err, .. } => io_code(err),
        ReposError::Svn { kind, .. } | ReposError::Wrapped { kind, .. } => kind.code(),
    }
}

pub fn store_code(e: &StoreError) -> u32 {
    match e {
        StoreError::Corrupt { .. } => 160004,
        StoreError::Io { err, .. } => io_code(err),
        StoreError::NotARepository(_) => 2,
        StoreError::UnsupportedFormat { .. } | StoreError::ForeignRepository { .. } => 165005,
        StoreError::NoSuchRevision(_) => 160006,
        StoreError::PathNotFound { .. } | StoreError::TxnPathNotFound { .. } => 160013,
        StoreError::AlreadyExists(_) => 160020,
        StoreError::NotADirectory(_) => 160016,
        StoreError::NotAFile(_) => 160017,
        StoreError::ChecksumMismatch { .. } => 200014,
        StoreError::BadDelta { .. } => 185001,
        StoreError::NoSuchTxn(_) => 160007,
        StoreError::RootOperation(_) | StoreError::Conflict(_) | StoreError::TooLarge(_) => 160000,
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
                report(&arg_error(E_ARG_PARSING, "Too many arguments"));
            }
        }
        ErrorKind::MissingRequiredArgument
            if context(ContextKind::InvalidArg)
                .iter()
                .any(|a| a.contains("REPO")) =>
        {
            drop(err);
            report(&svn_error(E_ARG_PARSING, "Repository argument required"));
        }
        ErrorKind::MissingRequiredArgument => {
            drop(err);
            report(&arg_error(E_INSUFFICIENT_ARGS, "Not enough arguments"));
        }
        _ => {
            let text = e.render().to_string();
            let first = text.lines().next().unwrap_or("");
            let first = first.strip_prefix("error: ").unwrap_or(first).to_string();
            drop(err);
            report(&arg_error(E_ARG_PARSING, first));
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
fn open(path: &Path) -> Result<Repo> {
    let text = path.to_string_lossy();
    if text.contains("://") {
        return Err(svn_error(
            E_ARG_PARSING,
            format!("'{text}' is a URL when it should be a local path"),
        ));
    }
    match Repo::open(path) {
        Ok(r) => Ok(r),
        Err(StoreError::NotARepository(_)) if !path.join("format").exists() => Err(svn_error(
            2,
            format!(
                "Can't open file '{}': No such file or directory",
                path.join("format").display()
            ),
        )),
        Err(e) => Err(e.into()),
    }
}

fn parse_rev(s: &str, head: Revnum) -> Result<Revnum> {
    if s.eq_ignore_ascii_case("HEAD") {
        return Ok(head);
    }
    s.parse().map_err(|_| {
        arg_error(
            E_ARG_PARSING,
            format!("Syntax error in revision argument '{s}'"),
        )
    })
}

fn parse_range(s: &str, head: Revnum) -> Result<(Revnum, Option<Revnum>)> {
    match s.split_once(':') {
        Some((a, b)) => Ok((parse_rev(a, head)?, Some(parse_rev(b, head)?))),
        None => Ok((parse_rev(s, head)?, None)),
    }
}

/// `-r LOWER[:UPPER]` as an inclusive range; all revisions when absent.
fn revisions(arg: Option<&str>, youngest: Revnum) -> Result<(Revnum, Revnum)> {
    match arg {
        Some(s) => {
            let (lo, hi) = parse_range(s, youngest)?;
            Ok((lo, hi.unwrap_or(lo)))
        }
        None => Ok((0, youngest)),
    }
}
