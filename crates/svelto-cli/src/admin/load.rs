//! `svelto admin load`: a dumpfile into a repository.

use anyhow::{Context, Result};
use clap::Args;
use std::fs::File;
use std::io::{self, BufReader, IsTerminal, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use svelto_repos::{LoadOptions, UuidAction};

use super::parse_range;

#[derive(Args)]
pub struct LoadArgs {
    pub repo: PathBuf,
    /// Read the dumpfile from FILE instead of standard input.
    #[arg(short = 'F', long = "file")]
    pub file: Option<PathBuf>,
    /// No progress output.
    #[arg(short, long)]
    pub quiet: bool,
    /// Ignore the dumpfile's UUID.
    #[arg(long, conflicts_with = "force_uuid")]
    pub ignore_uuid: bool,
    /// Set the repository UUID to the dumpfile's even if the repository has revisions.
    #[arg(long)]
    pub force_uuid: bool,
    /// Load every path below DIR.
    #[arg(long, value_name = "DIR")]
    pub parent_dir: Option<String>,
    /// Load only dump revisions LOWER:UPPER (or a single revision).
    #[arg(short, long, value_name = "LOWER:UPPER")]
    pub revision: Option<String>,
    /// Skip the checks of svn:* property values.
    #[arg(long)]
    pub bypass_prop_validation: bool,
}

pub fn run(args: LoadArgs) -> Result<()> {
    let LoadArgs {
        repo,
        file,
        quiet,
        ignore_uuid,
        force_uuid,
        parent_dir,
        revision,
        bypass_prop_validation,
    } = args;
    let range = match revision {
        Some(r) => {
            let (lo, hi) = parse_range(&r, u64::MAX)?;
            Some((lo, hi.unwrap_or(lo)))
        }
        None => None,
    };
    let opts = LoadOptions {
        uuid: if ignore_uuid {
            UuidAction::Ignore
        } else if force_uuid {
            UuidAction::Force
        } else {
            UuidAction::Default
        },
        parent_dir,
        range,
        bypass_prop_validation,
    };
    let (input, total): (Box<dyn io::Read>, Option<u64>) = match &file {
        Some(f) => {
            let fh = File::open(f).with_context(|| format!("opening '{}'", f.display()))?;
            let len = fh.metadata().ok().map(|m| m.len());
            (Box::new(fh), len)
        }
        None => (Box::new(io::stdin().lock()), None),
    };
    let read = Arc::new(AtomicU64::new(0));
    let input = Counting {
        inner: input,
        read: read.clone(),
    };
    let input = BufReader::with_capacity(1 << 20, input);
    // A progress bar on stderr when it is a terminal and the lines are not shown there.
    let bar = io::stderr().is_terminal() && (quiet || !io::stdout().is_terminal());
    let mut stdout = io::stdout().lock();
    let mut progress = |text: &str| {
        if !quiet {
            let _ = stdout.write_all(text.as_bytes());
            let _ = stdout.flush();
        }
        if let (true, Some(rev)) = (bar, last_committed(text)) {
            let done = read.load(Ordering::Relaxed);
            let mb = done as f64 / 1e6;
            match total.filter(|&t| t > 0) {
                Some(t) => eprint!(
                    "\r[{:<30}] {:5.1}%  {mb:.0} MB  revision {rev} ",
                    "#".repeat((30 * done / t).min(30) as usize),
                    100.0 * done as f64 / t as f64
                ),
                None => eprint!("\r{mb:.0} MB read, revision {rev} loaded "),
            }
        }
    };
    let youngest = svelto_repos::load(&repo, input, opts, &mut progress)
        .with_context(|| format!("loading into '{}'", repo.display()));
    if bar {
        eprintln!();
    }
    youngest.map(|_| ())
}

/// Counts the bytes read through it, for the progress bar.
struct Counting<R> {
    inner: R,
    read: Arc<AtomicU64>,
}

impl<R: io::Read> io::Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

fn last_committed(text: &str) -> Option<&str> {
    let at = text.rfind("------- Committed ")?;
    text[at..].split_whitespace().nth(3)
}
