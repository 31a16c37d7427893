//! `svelto admin`: svnadmin's subcommands over a Svelto repository.
//!
//! This file holds the subcommand table and the helpers they share; each subcommand (or
//! family of subcommands) lives in its own file with its arguments and its `run`.

mod create;
mod dump;
mod info;
mod load;
mod verify;

use anyhow::{Context, Result};
use clap::Subcommand;
use std::path::Path;
use svelto_core::Revnum;
use svelto_store::Repo;

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
}

pub fn run(cmd: AdminCommand) -> Result<()> {
    match cmd {
        AdminCommand::Create(args) => create::run(args),
        AdminCommand::Load(args) => load::run(args),
        AdminCommand::Dump(args) => dump::run(args),
        AdminCommand::Verify(args) => verify::run(args),
        AdminCommand::Info(args) => info::run(args),
    }
}

fn open(path: &Path) -> Result<Repo> {
    Repo::open(path).with_context(|| format!("opening repository '{}'", path.display()))
}

fn parse_rev(s: &str, head: Revnum) -> Result<Revnum> {
    if s.eq_ignore_ascii_case("HEAD") {
        return Ok(head);
    }
    s.parse()
        .with_context(|| format!("Syntax error in revision argument '{s}'"))
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
