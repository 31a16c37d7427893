//! `svelto admin dump-revprops` and `load-revprops`: the revision properties of a range
//! of revisions as a dumpfile of revision records, and back (svnadmin 1.14's), e.g. to
//! carry log message edits from one copy of a repository to another.

use anyhow::Result;
use clap::Args;
use std::io::{self, BufReader, BufWriter, Write};
use std::path::PathBuf;
use svelto_core::Revnum;
use svelto_repos::RevpropLoadOptions;

use super::{create_file, dump_range, load_range, open, open_file, prop_hint};

#[derive(Args)]
pub struct DumpRevpropsArgs {
    #[arg(value_name = "REPOS_PATH")]
    pub repo: PathBuf,
    /// Dump revisions LOWER[:UPPER] (numbers or HEAD).
    #[arg(short, long, value_name = "LOWER[:UPPER]")]
    pub revision: Option<String>,
    /// No progress (only errors to stderr).
    #[arg(short, long)]
    pub quiet: bool,
    /// Write to FILE instead of stdout.
    #[arg(short = 'F', long = "file")]
    pub file: Option<PathBuf>,
}

#[derive(Args)]
pub struct LoadRevpropsArgs {
    #[arg(value_name = "REPOS_PATH")]
    pub repo: PathBuf,
    /// No progress (only errors to stderr).
    #[arg(short, long)]
    pub quiet: bool,
    /// Load only dump revisions LOWER[:UPPER].
    #[arg(short, long, value_name = "LOWER[:UPPER]")]
    pub revision: Option<String>,
    /// Accepted as svnadmin accepts it (load-revprops never changes the UUID).
    #[arg(long)]
    pub force_uuid: bool,
    /// Make the line endings of svn:* properties LF.
    #[arg(long)]
    pub normalize_props: bool,
    /// Skip the checks of svn:* property values.
    #[arg(long)]
    pub bypass_prop_validation: bool,
    /// Accepted: every change is made durable before it is reported.
    #[arg(long)]
    pub no_flush_to_disk: bool,
    /// Read from FILE instead of stdin.
    #[arg(short = 'F', long = "file")]
    pub file: Option<PathBuf>,
}

pub fn dump_revprops(args: DumpRevpropsArgs) -> Result<()> {
    let r = open(&args.repo)?;
    let (start, end) = dump_range(args.revision.as_deref(), r.youngest())?;
    let sink: Box<dyn Write> = match &args.file {
        Some(f) => Box::new(create_file(f)?),
        None => Box::new(io::stdout().lock()),
    };
    let mut out = BufWriter::new(sink);
    let quiet = args.quiet;
    let mut progress = |rev: Revnum| {
        if !quiet {
            eprintln!("* Dumped revision {rev}.");
        }
    };
    svelto_repos::dump_revprops(&*r, &mut out, start, end, &mut progress)?;
    out.flush()?;
    Ok(())
}

pub fn load_revprops(args: LoadRevpropsArgs) -> Result<()> {
    let range = load_range(args.revision.as_deref())?;
    open(&args.repo)?;
    let input: Box<dyn io::Read> = match &args.file {
        Some(f) => Box::new(open_file(f)?),
        None => Box::new(io::stdin().lock()),
    };
    let opts = RevpropLoadOptions {
        range,
        bypass_prop_validation: args.bypass_prop_validation,
        normalize_props: args.normalize_props,
    };
    let quiet = args.quiet;
    let mut stdout = io::stdout().lock();
    let mut progress = |text: &str| {
        if !quiet {
            let _ = stdout.write_all(text.as_bytes());
            let _ = stdout.flush();
        }
    };
    let mut w = super::open_writer(&args.repo)?;
    svelto_repos::load_revprops(&mut *w, BufReader::new(input), opts, &mut progress)
        .map_err(|e| prop_hint(e.into()))
}
