//! `svelto admin dump`: a dumpfile of a range of revisions.

use anyhow::{bail, Context, Result};
use clap::Args;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use svelto_core::Revnum;
use svelto_repos::DumpOptions;

use super::{open, revisions};

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
    let youngest = r.youngest();
    let (start, end) = revisions(revision.as_deref(), youngest)?;
    if start > end {
        bail!("First revision cannot be higher than second");
    }
    if end > youngest {
        bail!("Revisions must not be greater than the youngest revision ({youngest})");
    }
    let sink: Box<dyn Write> = match &file {
        Some(f) => {
            Box::new(File::create(f).with_context(|| format!("creating '{}'", f.display()))?)
        }
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
