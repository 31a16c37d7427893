//! `svelto admin load`: a dumpfile into a repository.

use anyhow::{Context, Result};
use clap::Args;
use std::io::{self, BufReader, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use svelto_repos::{LoadOptions, UuidAction};

use super::{load_range, open, open_file, prop_hint};

#[derive(Args)]
pub struct LoadArgs {
    /// The repository's directory; with --cluster, its name in the cluster.
    pub repo: PathBuf,
    /// Load into repository REPO of this cluster (docs/cluster.md) instead of a directory
    /// on this machine. The repository keeps the UUID it was created with: the dump's is
    /// ignored (--force-uuid is refused).
    #[arg(long, value_name = "FILE")]
    pub cluster: Option<PathBuf>,
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
    /// Ignore the dump's revision dates: revisions are dated when loaded.
    #[arg(long)]
    pub ignore_dates: bool,
    /// Make the line endings of svn:* properties LF.
    #[arg(long)]
    pub normalize_props: bool,
    /// Run the pre-commit hook on each revision before it is committed.
    #[arg(long)]
    pub use_pre_commit_hook: bool,
    /// Run the post-commit hook after each revision is committed.
    #[arg(long)]
    pub use_post_commit_hook: bool,
    /// Accepted as svnadmin accepts it: revisions are still made durable in batches, each
    /// "Committed" line printed once its revision is.
    #[arg(long)]
    pub no_flush_to_disk: bool,
    /// Accepted as svnadmin accepts it; no effect.
    #[arg(short = 'M', long = "memory-cache-size", value_name = "ARG")]
    pub memory_cache_size: Option<u64>,
}

pub fn run(args: LoadArgs) -> Result<()> {
    let LoadArgs {
        repo,
        cluster,
        file,
        quiet,
        ignore_uuid,
        force_uuid,
        parent_dir,
        revision,
        bypass_prop_validation,
        ignore_dates,
        normalize_props,
        use_pre_commit_hook,
        use_post_commit_hook,
        no_flush_to_disk: _,
        memory_cache_size: _,
    } = args;
    let range = load_range(revision.as_deref())?;
    if let (Some(f), true) = (&cluster, use_pre_commit_hook || use_post_commit_hook) {
        // A cluster repository has no hooks directory: hooks are each front end's.
        return Err(super::svn_error(
            svelto_core::code::UNSUPPORTED_FEATURE,
            format!(
                "'{}' is a repository of cluster {}: a load into the cluster runs no commit \
                 hooks (the hooks are each front end's); load without --use-pre-commit-hook \
                 and --use-post-commit-hook, or commit through a front end, which runs them",
                repo.display(),
                f.display()
            ),
        ));
    }
    let mut writer = match &cluster {
        Some(f) => {
            let name = repo.to_str().with_context(|| {
                format!("the repository name '{}' is not UTF-8", repo.display())
            })?;
            Box::new(crate::cluster::writer(f, name)?) as Box<dyn svelto_fs::WriteRepo>
        }
        None => {
            open(&repo)?;
            super::open_writer(&repo)?
        }
    };
    let opts = LoadOptions {
        uuid: if ignore_uuid || (cluster.is_some() && !force_uuid) {
            UuidAction::Ignore
        } else if force_uuid {
            UuidAction::Force
        } else {
            UuidAction::Default
        },
        parent_dir,
        range,
        bypass_prop_validation,
        ignore_dates,
        normalize_props,
        use_pre_commit_hook,
        use_post_commit_hook,
    };
    let (input, total): (Box<dyn io::Read>, Option<u64>) = match &file {
        Some(f) => {
            let fh = open_file(f)?;
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
    let bar = super::progress::Progress::bytes("load", total, quiet);
    let mut stdout = io::stdout().lock();
    let mut progress = |text: &str| {
        if !quiet {
            bar.above(|| {
                let _ = stdout.write_all(text.as_bytes());
                let _ = stdout.flush();
            });
        }
        bar.bytes_at(read.load(Ordering::Relaxed), last_committed(text));
    };
    let youngest = svelto_repos::load(&mut *writer, input, opts, &mut progress);
    bar.finish();
    youngest.map(|_| ()).map_err(|e| prop_hint(e.into()))
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
