//! `svelto admin verify`: every revision's data and checksums.

use anyhow::{bail, Context, Result};
use clap::Args;
use std::path::PathBuf;
use svelto_core::Revnum;

use super::{open, revisions};

#[derive(Args)]
pub struct VerifyArgs {
    pub repo: PathBuf,
    #[arg(short, long)]
    pub quiet: bool,
    #[arg(short, long, value_name = "LOWER[:UPPER]")]
    pub revision: Option<String>,
}

pub fn run(args: VerifyArgs) -> Result<()> {
    let VerifyArgs {
        repo,
        quiet,
        revision,
    } = args;
    let r = open(&repo)?;
    let youngest = r.youngest();
    let (start, end) = revisions(revision.as_deref(), youngest)?;
    if end > youngest {
        bail!("No such revision {end}");
    }
    let mut progress = |rev: Revnum| {
        if !quiet {
            eprintln!("* Verified revision {rev}.");
        }
    };
    svelto_repos::verify(&r, start, end, &mut progress)
        .with_context(|| format!("verifying '{}'", repo.display()))
}
