//! `svelto admin verify`: every revision's data and checksums, with svnadmin's options,
//! output (progress on standard output, errors on standard error) and `--keep-going`
//! summary.

use anyhow::Result;
use clap::Args;
use std::io::{self, Write};
use std::path::PathBuf;
use svelto_core::{code, Revnum};
use svelto_repos::verify::{self as check, NormalizationIssue};
use svelto_store::Repo;

use super::{arg_error, error_lines, open, parse_rev_option, report, revnum, svn_error};

#[derive(Args)]
pub struct VerifyArgs {
    pub repo: PathBuf,
    /// No progress (only errors to stderr).
    #[arg(short, long)]
    pub quiet: bool,
    /// Revision number ARG (or X:Y range).
    #[arg(short, long, value_name = "LOWER[:UPPER]")]
    pub revision: Option<String>,
    /// Verify the transaction TXN (a commit whose hooks are running).
    #[arg(short = 't', long = "transaction", value_name = "TXN")]
    pub txn: Option<String>,
    /// Go on after a damaged revision; list them all at the end.
    #[arg(long)]
    pub keep_going: bool,
    /// Only the repository's files and records, not each revision's tree.
    #[arg(long)]
    pub metadata_only: bool,
    /// Also report names that differ only in their Unicode normalization.
    #[arg(long)]
    pub check_normalization: bool,
    /// Accepted as svnadmin accepts it; no effect.
    #[arg(short = 'M', long = "memory-cache-size", value_name = "ARG")]
    pub memory_cache_size: Option<u64>,
}

/// FSFS verifies its index of each shard of 1,000 revisions and says so at the first
/// revision of each; Svelto reads each revision's records in the same pass and says it at
/// the same revisions, so that the output is svnadmin's.
const SHARD: Revnum = 1000;

fn say(text: &str) {
    let mut o = io::stdout().lock();
    let _ = o.write_all(text.as_bytes());
    let _ = o.flush();
}

pub fn run(args: VerifyArgs) -> Result<()> {
    if args.txn.is_some() && args.revision.is_some() {
        return Err(arg_error(
            code::CL_ARG_PARSING_ERROR,
            "--revision (-r) and --transaction (-t) are mutually exclusive",
        ));
    }
    let r = open(&args.repo)?;
    if let Some(txn) = &args.txn {
        let (view, rev) = Repo::open_txn(&args.repo, txn)?;
        return Ok(check::verify_revision(&view, rev)?);
    }
    let youngest = r.youngest();
    let (start, end) = match args.revision.as_deref().map(parse_rev_option).transpose()? {
        Some((lo, hi)) => {
            let lo = revnum(lo, youngest)?;
            (
                lo,
                hi.map(|h| revnum(h, youngest)).transpose()?.unwrap_or(lo),
            )
        }
        None => (0, youngest),
    };
    if start > end {
        return Err(svn_error(
            code::REPOS_BAD_ARGS,
            format!("Start revision {start} is greater than end revision {end}"),
        ));
    }
    let quiet = args.quiet;
    let mut failed: Vec<(Revnum, anyhow::Error)> = Vec::new();
    let mut metadata_failed = false;
    // A damaged revision (or the metadata), as svnadmin's verify callback reports it.
    let mut fail = |rev: Option<Revnum>, e: anyhow::Error| -> Result<()> {
        match rev {
            Some(rev) => eprintln!("* Error verifying revision {rev}."),
            None => eprintln!("* Error verifying repository metadata."),
        }
        if !args.keep_going {
            return Err(e);
        }
        report(&e);
        match rev {
            Some(rev) => failed.push((rev, e)),
            None => metadata_failed = true,
        }
        Ok(())
    };
    if !quiet {
        for rev in (start..=end).filter(|r| r % SHARD == 0) {
            say(&format!("* Verifying metadata at revision {rev} ..."));
            say("\n");
        }
        say("* Verifying repository metadata ...\n");
    }
    if let Err(e) = check::verify_metadata(&r) {
        fail(None, e.into())?;
    }
    if !args.metadata_only {
        let bar = super::progress::Progress::revisions("verify", start, end, quiet);
        for rev in start..=end {
            let result = check::verify_revision(&r, rev).and_then(|()| {
                if args.check_normalization {
                    check::normalization(&r, rev)
                } else {
                    Ok(Vec::new())
                }
            });
            match result {
                Ok(issues) => {
                    if !quiet {
                        bar.above(|| {
                            for issue in issues {
                                say(&warning(&issue));
                            }
                            say(&format!("* Verified revision {rev}.\n"));
                        });
                    }
                }
                Err(e) => bar.above(|| fail(Some(rev), e.into()))?,
            }
            bar.revision(rev);
        }
        bar.finish();
    }
    // Every record in file order, on whole-history runs; damage the revisions reached
    // was reported above by revision and path.
    if start == 0 && end >= youngest {
        if let Err(e) = r.verify_records() {
            fail(None, svelto_repos::ReposError::from(e).into())?;
        }
    }
    if failed.is_empty() && !metadata_failed {
        return Ok(());
    }
    if !failed.is_empty() {
        let width = 6.max(format!("r{}", failed[failed.len() - 1].0).len());
        let mut text = String::from("\n-----Summary of corrupt revisions-----\n");
        for (rev, e) in &failed {
            for (code, message) in error_lines(e) {
                text.push_str(&format!(
                    "{:>width$}: E{code:06}: {message}\n",
                    format!("r{rev}")
                ));
            }
        }
        say(&text);
    }
    Err(svn_error(
        code::CL_REPOS_VERIFY_FAILED,
        format!("Failed to verify repository '{}'", args.repo.display()),
    ))
}

/// svnadmin's warning for a name that collides with another once normalized.
fn warning(issue: &NormalizationIssue) -> String {
    format!("WARNING 0x{:04x}: {}\n", issue.warning, issue.message)
}
