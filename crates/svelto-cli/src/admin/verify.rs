//! `svelto admin verify`: svnadmin's options; what it checks and prints (progress on
//! standard output, errors on standard error, the `--keep-going` summary) is
//! `svelto_admin::verify`'s.

use anyhow::Result;
use clap::Args;
use std::io;
use std::path::PathBuf;
use svelto_admin::verify::VerifyOptions;
use svelto_core::code;
use svelto_repos::verify as check;

use super::progress::{Above, Progress};
use super::{
    admin_error, arg_error, env, local, open, parse_rev_option, repos_error_lines, revnum,
    svn_error,
};

#[derive(Args)]
pub struct VerifyArgs {
    /// The repository's directory; with --cluster, its name in the cluster.
    pub repo: PathBuf,
    /// Verify repository REPO of this cluster (docs/cluster.md): every published
    /// revision, read through this machine's cache (caught up with the head first).
    #[arg(long, value_name = "FILE")]
    pub cluster: Option<PathBuf>,
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
    /// The front end's directory REPO was, when it named one: `-t` is a transaction staged
    /// in one of its front ends' caches (a pre-commit hook's).
    #[arg(skip)]
    pub front_end_dir: Option<std::path::PathBuf>,
}

pub fn run(args: VerifyArgs) -> Result<()> {
    if args.txn.is_some() && args.revision.is_some() {
        return Err(arg_error(
            code::CL_ARG_PARSING_ERROR,
            "--revision (-r) and --transaction (-t) are mutually exclusive",
        ));
    }
    if let (Some(dir), Some(txn)) = (&args.front_end_dir, &args.txn) {
        // As `svelto look -t` finds it: in the cache of the front end that staged it.
        let opened = crate::cluster::open_served(dir, Some(txn), &env());
        let (view, rev) = match opened {
            Some(Ok((view, Some(rev)))) => (view, rev),
            Some(Err(e)) => return Err(e.into()),
            _ => {
                return Err(svn_error(
                    code::FS_NO_SUCH_TRANSACTION,
                    format!("no transaction '{txn}' staged for '{}'", dir.display()),
                ))
            }
        };
        return Ok(check::verify_revision(&*view, rev)?);
    }
    let r = match &args.cluster {
        Some(file) => {
            if args.txn.is_some() {
                return Err(arg_error(
                    code::CL_ARG_PARSING_ERROR,
                    "--transaction (-t) names a transaction on one machine; a cluster's \
                     staged transactions live in each front end's cache",
                ));
            }
            let name = super::cluster_name(&args.repo)?;
            std::sync::Arc::new(crate::cluster::open(file, name)?)
                as std::sync::Arc<dyn svelto_fs::ReadRepo>
        }
        None => open(&args.repo)?,
    };
    if let Some(txn) = &args.txn {
        let (view, rev) = local().open_txn(&args.repo, txn, &env())?;
        return Ok(check::verify_revision(&*view, rev)?);
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
    let opts = VerifyOptions {
        start,
        end,
        quiet: args.quiet,
        keep_going: args.keep_going,
        metadata_only: args.metadata_only,
        check_normalization: args.check_normalization,
    };
    let bar = Progress::revisions("verify", start, end, args.quiet || args.metadata_only);
    let verified = svelto_admin::verify::verify(
        &*r,
        &opts,
        &mut Above(&bar, io::stdout().lock()),
        &mut Above(&bar, io::stderr().lock()),
        &mut |rev| bar.revision(rev),
        &repos_error_lines,
    )
    .map_err(admin_error)?;
    bar.finish();
    if verified {
        return Ok(());
    }
    Err(svn_error(
        code::CL_REPOS_VERIFY_FAILED,
        format!("Failed to verify repository '{}'", args.repo.display()),
    ))
}
