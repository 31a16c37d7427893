//! `svelto admin dump`: a dumpfile of a range of revisions.

use anyhow::{Context, Result};
use clap::Args;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use svelto_core::Revnum;
use svelto_repos::DumpOptions;

use super::{create_file, dump_range, open};

#[derive(Args)]
pub struct DumpArgs {
    pub repo: PathBuf,
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
}

pub fn run(args: DumpArgs) -> Result<()> {
    let DumpArgs {
        repo,
        file,
        quiet,
        revision,
        incremental,
        deltas,
    } = args;
    let r = open(&repo)?;
    let (start, end) = dump_range(revision.as_deref(), r.youngest())?;
    let sink: Box<dyn Write> = match &file {
        Some(f) => Box::new(create_file(f)?),
        None => Box::new(io::stdout().lock()),
    };
    let mut out = BufWriter::with_capacity(1 << 20, sink);
    let mut progress = |rev: Revnum| {
        if !quiet {
            eprintln!("* Dumped revision {rev}.");
        }
    };
    let opts = DumpOptions {
        start,
        end,
        incremental,
        deltas,
    };
    svelto_repos::dump(&r, &mut out, opts, &mut progress)?;
    out.flush().context("writing the dump")?;
    Ok(())
}
