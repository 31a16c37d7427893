//! `svelto admin dump`: a dumpfile of a range of revisions.

use anyhow::{Context, Result};
use clap::Args;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use svelto_core::{code, Revnum};
use svelto_repos::{DumpOptions, PathFilter};

use super::{arg_error, create_file, dump_range, open};

#[derive(Args)]
pub struct DumpArgs {
    /// The repository's directory; with --cluster, its name in the cluster.
    pub repo: PathBuf,
    /// Dump repository REPO of this cluster (docs/cluster.md), read through this
    /// machine's cache.
    #[arg(long, value_name = "FILE")]
    pub cluster: Option<PathBuf>,
    #[arg(short = 'F', long = "file")]
    pub file: Option<PathBuf>,
    #[arg(short, long)]
    pub quiet: bool,
    /// Dump revisions LOWER[:UPPER] (numbers or HEAD).
    #[arg(short, long, value_name = "LOWER[:UPPER]")]
    pub revision: Option<String>,
    /// The first revision as changes against the previous one, not a full tree.
    #[arg(long)]
    pub incremental: bool,
    /// Format 3: property and text deltas.
    #[arg(long)]
    pub deltas: bool,
    /// Leave out PATH and what is below it (repeatable).
    #[arg(long, value_name = "PATH")]
    pub exclude: Vec<String>,
    /// Dump only PATH and what is below it (repeatable).
    #[arg(long, value_name = "PATH")]
    pub include: Vec<String>,
    /// The --include/--exclude PATHs are glob patterns matched against whole paths.
    #[arg(long)]
    pub pattern: bool,
    /// Accepted as svnadmin accepts it; no effect.
    #[arg(short = 'M', long = "memory-cache-size", value_name = "ARG")]
    pub memory_cache_size: Option<u64>,
}

pub fn run(args: DumpArgs) -> Result<()> {
    let DumpArgs {
        repo,
        cluster,
        file,
        quiet,
        revision,
        incremental,
        deltas,
        exclude,
        include,
        pattern,
        memory_cache_size: _,
    } = args;
    let filter = match (include.is_empty(), exclude.is_empty()) {
        (true, true) => None,
        (false, false) => {
            return Err(arg_error(
                code::CL_ARG_PARSING_ERROR,
                "'--exclude' and '--include' options cannot be used simultaneously",
            ))
        }
        (false, true) => Some(PathFilter {
            paths: include,
            glob: pattern,
            exclude: false,
        }),
        (true, false) => Some(PathFilter {
            paths: exclude,
            glob: pattern,
            exclude: true,
        }),
    };
    let r: std::sync::Arc<dyn svelto_fs::ReadRepo> = match &cluster {
        Some(f) => {
            let name = repo.to_str().with_context(|| {
                format!("the repository name '{}' is not UTF-8", repo.display())
            })?;
            std::sync::Arc::new(crate::cluster::open(f, name)?)
        }
        None => open(&repo)?,
    };
    r.set_cache_limit(svelto_repos::DUMP_CACHE_BYTES);
    let (start, end) = dump_range(revision.as_deref(), r.youngest())?;
    let sink: Box<dyn Write> = match &file {
        Some(f) => Box::new(create_file(f)?),
        None => Box::new(io::stdout().lock()),
    };
    let mut out = BufWriter::with_capacity(1 << 20, sink);
    let bar = super::progress::Progress::revisions("dump", start, end, quiet);
    let mut progress = |rev: Revnum| {
        if !quiet {
            bar.above(|| eprintln!("* Dumped revision {rev}."));
        }
        bar.revision(rev);
    };
    let opts = DumpOptions {
        start,
        end,
        incremental,
        deltas,
        filter,
    };
    svelto_repos::dump(&*r, &mut out, opts, &mut progress)?;
    out.flush().context("writing the dump")?;
    bar.finish();
    Ok(())
}
