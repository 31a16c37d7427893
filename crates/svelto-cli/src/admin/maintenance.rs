//! `svelto admin lstxns`, `rmtxns`, `recover`, `upgrade`, `pack`, `build-repcache`,
//! `deltify`, `rev-size`, `list-dblogs`, `crashtest`: svnadmin's maintenance subcommands'
//! options; what each does and prints is `svelto_admin::maintenance`'s.

use anyhow::Result;
use clap::Args;
use std::io::{self, Write};
use std::path::PathBuf;
use svelto_admin::maintenance as lib;
use svelto_core::code;

use super::{
    admin_error, arg_error, env, local, open, parse_rev_option, revision_range, revnum, RevArg,
};

#[derive(Args)]
pub struct LstxnsArgs {
    #[arg(value_name = "REPOS_PATH")]
    pub repo: PathBuf,
    /// Only transactions based on revision ARG or older.
    #[arg(short, long, value_name = "ARG")]
    pub revision: Option<String>,
}

#[derive(Args)]
pub struct RmtxnsArgs {
    #[arg(value_name = "REPOS_PATH")]
    pub repo: PathBuf,
    #[arg(value_name = "TXN_NAME")]
    pub names: Vec<String>,
    /// No progress (only errors to stderr).
    #[arg(short, long)]
    pub quiet: bool,
}

#[derive(Args)]
pub struct RecoverArgs {
    #[arg(value_name = "REPOS_PATH")]
    pub repo: PathBuf,
    /// Wait instead of exit if the repository is in use by another process.
    #[arg(long)]
    pub wait: bool,
}

#[derive(Args)]
pub struct UpgradeArgs {
    #[arg(value_name = "REPOS_PATH")]
    pub repo: PathBuf,
}

/// `-q` and `-M` (accepted; Svelto's caches are sized by the server, not per command).
#[derive(Args)]
pub struct QuietCache {
    /// No progress (only errors to stderr).
    #[arg(short, long)]
    pub quiet: bool,
    /// Accepted as svnadmin accepts it; no effect.
    #[arg(short = 'M', long = "memory-cache-size", value_name = "ARG")]
    pub memory_cache_size: Option<u64>,
}

#[derive(Args)]
pub struct PackArgs {
    #[arg(value_name = "REPOS_PATH")]
    pub repo: PathBuf,
    #[command(flatten)]
    pub opts: QuietCache,
}

/// `build-repcache`, `deltify` and `rev-size`.
#[derive(Args)]
pub struct RangeArgs {
    #[arg(value_name = "REPOS_PATH")]
    pub repo: PathBuf,
    /// Revision number ARG (or X:Y range).
    #[arg(short, long, value_name = "ARG")]
    pub revision: Option<String>,
    #[command(flatten)]
    pub opts: QuietCache,
}

fn out(text: &str) -> Result<()> {
    let mut o = io::stdout().lock();
    o.write_all(text.as_bytes())?;
    o.flush()?;
    Ok(())
}

pub fn lstxns(args: LstxnsArgs) -> Result<()> {
    let (limit, range) = match args.revision.as_deref().map(parse_rev_option).transpose()? {
        Some((lo, hi)) => (Some(lo), hi.is_some()),
        None => (None, false),
    };
    if range {
        return Err(arg_error(
            code::CL_ARG_PARSING_ERROR,
            "Revision range is not allowed",
        ));
    }
    let repo = open(&args.repo)?;
    let limit = limit.map(|r| revnum(r, repo.youngest())).transpose()?;
    lib::lstxns(&*repo, limit, &mut io::stdout().lock()).map_err(admin_error)
}

pub fn rmtxns(args: RmtxnsArgs) -> Result<()> {
    lib::rmtxns(
        local(),
        &env(),
        &args.repo,
        &args.names,
        args.quiet,
        &mut io::stdout().lock(),
        &mut |e| super::report(&admin_error(e)),
    )
    .map_err(admin_error)
}

pub fn recover(args: RecoverArgs) -> Result<()> {
    lib::recover(
        local(),
        &env(),
        &args.repo,
        args.wait,
        &mut io::stdout().lock(),
    )
    .map_err(admin_error)
}

pub fn upgrade(args: UpgradeArgs) -> Result<()> {
    lib::upgrade(local(), &env(), &args.repo, &mut io::stdout().lock()).map_err(admin_error)
}

pub fn pack(args: PackArgs) -> Result<()> {
    open(&args.repo)?;
    lib::pack(args.opts.quiet, &mut io::stdout().lock()).map_err(admin_error)
}

pub fn build_repcache(args: RangeArgs) -> Result<()> {
    let repo = open(&args.repo)?;
    let youngest = repo.youngest();
    // FSFS starts at revision 1 without -r: revision 0 has no contents.
    let (lo, hi) = revision_range(
        args.revision.as_deref(),
        youngest,
        (1.min(youngest), youngest),
    )?;
    lib::build_repcache(&*repo, lo, hi, args.opts.quiet, &mut io::stdout().lock())
        .map_err(admin_error)
}

pub fn deltify(args: RangeArgs) -> Result<()> {
    let repo = open(&args.repo)?;
    let youngest = repo.youngest();
    let (lo, hi) = revision_range(args.revision.as_deref(), youngest, (youngest, youngest))?;
    lib::deltify(&*repo, lo, hi, args.opts.quiet, &mut io::stdout().lock()).map_err(admin_error)
}

pub fn rev_size(args: RangeArgs) -> Result<()> {
    let rev = match args.revision.as_deref().map(parse_rev_option).transpose()? {
        Some((RevArg::Number(n), None)) => n,
        _ => {
            return Err(arg_error(
                code::CL_ARG_PARSING_ERROR,
                "Invalid revision specifier",
            ))
        }
    };
    let repo = open(&args.repo)?;
    lib::rev_size(&*repo, rev, args.opts.quiet, &mut io::stdout().lock()).map_err(admin_error)
}

#[derive(Args)]
pub struct RepoArgs {
    #[arg(value_name = "REPOS_PATH")]
    pub repo: PathBuf,
}

/// `list-dblogs`, `list-unused-dblogs`: Berkeley DB's log files; a Svelto repository,
/// like an FSFS one, has none, so the list is empty.
pub fn list_dblogs(args: RepoArgs) -> Result<()> {
    open(&args.repo)?;
    Ok(())
}

/// `crashtest`: opens the repository and aborts, as a server process that crashes with
/// the repository open (readers hold no lock, so nothing is left to recover).
pub fn crashtest(args: RepoArgs) -> Result<()> {
    open(&args.repo)?;
    out(&format!(
        "Successfully opened repository '{}'.\nWill now crash to simulate a crashing server process.\n",
        args.repo.display()
    ))?;
    std::process::abort();
}
