//! `svelto admin lstxns`, `rmtxns`, `recover`, `upgrade`, `pack`, `build-repcache`,
//! `deltify`, `rev-size`: svnadmin's maintenance subcommands, each doing on a Svelto
//! repository what corresponds, or saying in svnadmin's words that nothing is needed.
//!
//! - A Svelto transaction exists only while a commit's pre-commit hook runs, staged apart
//!   from the revision files (`db/txns/NAME.txn/`, see docs/formats/store.md), or while
//!   `load --use-pre-commit-hook` runs it (`db/txns/NAME`): `lstxns` lists those, with
//!   what a process that died left behind; `rmtxns` removes staged ones as svnadmin
//!   removes FSFS's (a commit whose hook is running then goes on without it), and the
//!   others only once their writer is gone.
//! - `recover` and `upgrade` take the write lock and do what the next writer does when it
//!   opens: check `db/current` against the files, cut bytes past it that a crashed writer
//!   left, drop stale transactions, bring `db/uuid` and `db/current` to their checked
//!   forms. There is one store format, so nothing else to upgrade.
//! - The store is a set of append-only files, not shards: `pack` has nothing to pack.
//!   Texts are stored as deltas and indexed by SHA-1 (`db/dedup`) as each commit writes
//!   them: `deltify` and `build-repcache` go over the revisions and find nothing to do.
//! - `rev-size` is what the revision's commit added to the store (`Repo::rev_size`).

use anyhow::Result;
use clap::Args;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use svelto_core::{code, Revnum};
use svelto_store::Writer;

use super::{arg_error, open, parse_rev_option, revision_range, revnum, svn_error, RevArg};

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
    let txns = repo.txns()?;
    let limit = limit.map(|r| revnum(r, repo.youngest())).transpose()?;
    let mut text = String::new();
    for (name, base) in txns {
        if limit.is_none_or(|l| base <= l) {
            text.push_str(&name);
            text.push('\n');
        }
    }
    out(&text)
}

pub fn rmtxns(args: RmtxnsArgs) -> Result<()> {
    let repo = open(&args.repo)?;
    for name in &args.names {
        let exists = repo.txns()?.iter().any(|(n, _)| n == name);
        let staged = args
            .repo
            .join("db")
            .join("txns")
            .join(format!("{name}.txn"));
        let result = if !exists {
            Err(svn_error(
                code::FS_NO_SUCH_TRANSACTION,
                format!("No such transaction '{name}'"),
            ))
        } else if staged.is_dir() {
            std::fs::remove_dir_all(&staged)
                .map_err(|e| anyhow::anyhow!("removing {}: {e}", staged.display()))
        } else {
            match Writer::try_open(&args.repo)? {
                // Opening a writer removed what a writer that is gone left behind.
                Some(_) => Ok(()),
                None => Err(svn_error(
                    code::FS_GENERAL,
                    format!(
                        "Transaction '{name}' is a commit in progress (its hooks are \
                         running); it goes away when the commit ends"
                    ),
                )),
            }
        };
        // As svnadmin: each failure reported, the others still removed, exit status 0.
        match result {
            Ok(()) if !args.quiet => out(&format!("Transaction '{name}' removed.\n"))?,
            Ok(()) => {}
            Err(e) => super::report(&e),
        }
    }
    Ok(())
}

/// The writer of `path`, taken as svnadmin takes the repository for recover and upgrade:
/// at once, or after saying it waits with `--wait`.
fn exclusive(path: &Path, wait: bool) -> Result<Writer> {
    open(path)?;
    if let Some(w) = Writer::try_open(path)? {
        return Ok(w);
    }
    if !wait {
        return Err(svn_error(
            code::REPOS_LOCKED,
            "Failed to get exclusive repository access; perhaps another process\n\
             such as httpd, svnserve or svn has it open?",
        ));
    }
    out("Waiting on repository lock; perhaps another process has it open?\n")?;
    Ok(Writer::open(path)?)
}

pub fn recover(args: RecoverArgs) -> Result<()> {
    if !svelto_store::is_repository(&args.repo) || args.repo.to_string_lossy().contains("://") {
        open(&args.repo)?; // the error svnadmin gives for a path that holds no repository
    }
    // db/current is looked at (and rebuilt from the files when missing or damaged) under
    // the write lock, before anything opens the repository through it.
    let recovered = match svelto_store::recover_current(&args.repo, false)? {
        Some(r) => r,
        None if !args.wait => {
            return Err(svn_error(
                code::REPOS_LOCKED,
                "Failed to get exclusive repository access; perhaps another process\n\
                 such as httpd, svnserve or svn has it open?",
            ))
        }
        None => {
            out("Waiting on repository lock; perhaps another process has it open?\n")?;
            svelto_store::recover_current(&args.repo, true)?
                .ok_or_else(|| anyhow::anyhow!("the write lock was not taken"))?
        }
    };
    out(
        "Repository lock acquired.\nPlease wait; recovering the repository may take some time...\n",
    )?;
    out(&recovery_report(&recovered))?;
    // The writer cuts what lies past the committed lengths and drops stale transactions.
    let writer = exclusive(&args.repo, args.wait)?;
    drop(writer);
    out("\nRecovery completed.\n")?;
    let youngest = open(&args.repo)?.youngest();
    out(&format!("The latest repos revision is {youngest}.\n"))
}

/// What `recover` found beyond what svnadmin says: nothing when `db/current` agreed with
/// the files and nothing lay past it.
fn recovery_report(r: &svelto_store::Recovered) -> String {
    use svelto_store::Found;
    let c = &r.current;
    let mut text = match &r.found {
        Found::Agrees => String::new(),
        Found::Missing => format!(
            "db/current was missing; rebuilt from the files: youngest revision {}.\n",
            c.youngest
        ),
        Found::Damaged(why) => format!(
            "db/current did not hold up ({why});\nrebuilt from the files: youngest revision {}.\n",
            c.youngest
        ),
    };
    for (&(name, past), committed) in r.past.iter().zip(c.lens) {
        if past > 0 {
            text += &format!(
                "db/{name} has {past} bytes past its committed length {committed} (left by a \
                 commit that did not finish): cut now.\n"
            );
        }
    }
    text
}

pub fn upgrade(args: UpgradeArgs) -> Result<()> {
    let writer = exclusive(&args.repo, false)?;
    out(
        "Repository lock acquired.\nPlease wait; upgrading the repository may take some time...\n",
    )?;
    drop(writer);
    out("\nUpgrade completed.\n")
}

pub fn pack(args: PackArgs) -> Result<()> {
    open(&args.repo)?;
    if !args.opts.quiet {
        out("svnadmin: Warning - this repository is not sharded. Packing has no effect.\n")?;
    }
    Ok(())
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
    progress(&repo, lo, hi, args.opts.quiet, |rev| {
        format!("* Processed revision {rev}.\n")
    })
}

pub fn deltify(args: RangeArgs) -> Result<()> {
    let repo = open(&args.repo)?;
    let youngest = repo.youngest();
    let (lo, hi) = revision_range(args.revision.as_deref(), youngest, (youngest, youngest))?;
    progress(&repo, lo, hi, args.opts.quiet, |rev| {
        format!("Deltifying revision {rev}...done.\n")
    })
}

/// Reads each revision of `lo..=hi` (its record and changed paths: a damaged one is
/// reported) and prints `line` for it unless quiet.
fn progress(
    repo: &svelto_store::Repo,
    lo: Revnum,
    hi: Revnum,
    quiet: bool,
    line: impl Fn(Revnum) -> String,
) -> Result<()> {
    for rev in lo..=hi {
        repo.rev_meta(rev)?;
        if !quiet {
            out(&line(rev))?;
        }
    }
    Ok(())
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
    let size = repo.rev_size(rev)?;
    if args.opts.quiet {
        out(&format!("{size}\n"))
    } else {
        out(&format!("{size:>12} bytes in revision {rev}\n"))
    }
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
