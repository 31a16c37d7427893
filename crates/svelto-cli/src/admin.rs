//! `svelto admin`: create, load, dump, verify, info.

use anyhow::{bail, Context, Result};
use clap::Subcommand;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use svelto_core::Revnum;
use svelto_repos::{DumpOptions, LoadOptions, UuidAction};
use svelto_store::Repo;

#[derive(Subcommand)]
pub enum AdminCommand {
    /// Create a new, empty repository.
    Create { repo: PathBuf },
    /// Load a dumpfile (formats 1-3) from standard input or -F FILE.
    Load {
        repo: PathBuf,
        /// Read the dumpfile from FILE instead of standard input.
        #[arg(short = 'F', long = "file")]
        file: Option<PathBuf>,
        /// No progress output.
        #[arg(short, long)]
        quiet: bool,
        /// Ignore the dumpfile's UUID.
        #[arg(long, conflicts_with = "force_uuid")]
        ignore_uuid: bool,
        /// Set the repository UUID to the dumpfile's even if the repository has revisions.
        #[arg(long)]
        force_uuid: bool,
        /// Load every path below DIR.
        #[arg(long, value_name = "DIR")]
        parent_dir: Option<String>,
        /// Load only dump revisions LOWER:UPPER (or a single revision).
        #[arg(short, long, value_name = "LOWER:UPPER")]
        revision: Option<String>,
        /// Skip the checks of svn:* property values.
        #[arg(long)]
        bypass_prop_validation: bool,
    },
    /// Write a dumpfile to standard output or -F FILE.
    Dump {
        repo: PathBuf,
        #[arg(short = 'F', long = "file")]
        file: Option<PathBuf>,
        #[arg(short, long)]
        quiet: bool,
        /// Dump revisions LOWER[:UPPER] (numbers or HEAD).
        #[arg(short, long, value_name = "LOWER[:UPPER]")]
        revision: Option<String>,
        /// The first revision as changes against the previous one, not a full tree.
        #[arg(long)]
        incremental: bool,
        /// Format 3: property and text deltas.
        #[arg(long)]
        deltas: bool,
    },
    /// Check every revision's data and checksums.
    Verify {
        repo: PathBuf,
        #[arg(short, long)]
        quiet: bool,
        #[arg(short, long, value_name = "LOWER[:UPPER]")]
        revision: Option<String>,
    },
    /// Show the repository's UUID, youngest revision, format and size.
    Info { repo: PathBuf },
}

pub fn run(cmd: AdminCommand) -> Result<()> {
    match cmd {
        AdminCommand::Create { repo } => {
            let uuid = uuid::Uuid::new_v4().to_string();
            svelto_repos::create(&repo, &uuid, &svelto_core::svn_date_now())
                .with_context(|| format!("creating repository '{}'", repo.display()))
        }
        AdminCommand::Load {
            repo,
            file,
            quiet,
            ignore_uuid,
            force_uuid,
            parent_dir,
            revision,
            bypass_prop_validation,
        } => {
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
        AdminCommand::Dump {
            repo,
            file,
            quiet,
            revision,
            incremental,
            deltas,
        } => {
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
                Some(f) => Box::new(
                    File::create(f).with_context(|| format!("creating '{}'", f.display()))?,
                ),
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
        AdminCommand::Verify {
            repo,
            quiet,
            revision,
        } => {
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
        AdminCommand::Info { repo } => {
            let r = open(&repo)?;
            let text = format!(
                "Path: {}\nUUID: {}\nRepository Format: 1\nFilesystem Type: svelto\n\
                 Filesystem Format: 1\nYoungest Revision: {}\nSize On Disk: {} bytes\n",
                repo.display(),
                r.uuid()?,
                r.youngest(),
                dir_size(&repo)?
            );
            // A reader that stops early (`| head`) is not an error.
            match io::stdout().lock().write_all(text.as_bytes()) {
                Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
                    Err(e).context("writing to standard output")
                }
                _ => Ok(()),
            }
        }
    }
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

fn open(path: &Path) -> Result<Repo> {
    Repo::open(path).with_context(|| format!("opening repository '{}'", path.display()))
}

fn last_committed(text: &str) -> Option<&str> {
    let at = text.rfind("------- Committed ")?;
    text[at..].split_whitespace().nth(3)
}

fn parse_rev(s: &str, head: Revnum) -> Result<Revnum> {
    if s.eq_ignore_ascii_case("HEAD") {
        return Ok(head);
    }
    s.parse()
        .with_context(|| format!("Syntax error in revision argument '{s}'"))
}

fn parse_range(s: &str, head: Revnum) -> Result<(Revnum, Option<Revnum>)> {
    match s.split_once(':') {
        Some((a, b)) => Ok((parse_rev(a, head)?, Some(parse_rev(b, head)?))),
        None => Ok((parse_rev(s, head)?, None)),
    }
}

/// `-r LOWER[:UPPER]` as an inclusive range; all revisions when absent.
fn revisions(arg: Option<&str>, youngest: Revnum) -> Result<(Revnum, Revnum)> {
    match arg {
        Some(s) => {
            let (lo, hi) = parse_range(s, youngest)?;
            Ok((lo, hi.unwrap_or(lo)))
        }
        None => Ok((0, youngest)),
    }
}

fn dir_size(path: &Path) -> Result<u64> {
    let mut total = 0;
    for entry in std::fs::read_dir(path).with_context(|| format!("reading '{}'", path.display()))? {
        let entry = entry?;
        let meta = entry.metadata()?;
        total += if meta.is_dir() {
            dir_size(&entry.path())?
        } else {
            meta.len()
        };
    }
    Ok(total)
}
