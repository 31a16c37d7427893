//! `svelto-gen`: writes a deterministic Subversion dumpfile (format 2).
//!
//! ```text
//! svelto-gen --size small|medium|large [--seed N] [--revisions R] [--files F] -o FILE
//! ```
//! `-o -` writes to standard output. A summary goes to standard error.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::process::ExitCode;
use std::time::Instant;

use svelto_bench::gen::{generate, Config, Size};

const USAGE: &str = "usage: svelto-gen --size small|medium|large [--seed N] \
                     [--revisions R] [--files F] -o FILE|-";

struct Args {
    size: Size,
    seed: u64,
    revisions: Option<u32>,
    files: Option<u32>,
    output: String,
}

fn parse_args() -> Result<Args, String> {
    let mut size = None;
    let mut seed = 1;
    let mut revisions = None;
    let mut files = None;
    let mut output = None;
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = |name: &str| it.next().ok_or_else(|| format!("{name} needs a value"));
        match arg.as_str() {
            "--size" => {
                let v = value("--size")?;
                size = Some(Size::parse(&v).ok_or_else(|| format!("unknown size '{v}'"))?);
            }
            "--seed" => {
                seed = value("--seed")?
                    .parse()
                    .map_err(|e| format!("--seed: {e}"))?;
            }
            "--revisions" => {
                revisions = Some(
                    value("--revisions")?
                        .parse()
                        .map_err(|e| format!("--revisions: {e}"))?,
                );
            }
            "--files" => {
                files = Some(
                    value("--files")?
                        .parse()
                        .map_err(|e| format!("--files: {e}"))?,
                );
            }
            "-o" | "--output" => output = Some(value("-o")?),
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument '{other}'")),
        }
    }
    Ok(Args {
        size: size.ok_or("--size is required")?,
        seed,
        revisions,
        files,
        output: output.ok_or("-o FILE is required")?,
    })
}

fn run(args: &Args) -> io::Result<()> {
    let preset = Config::preset(args.size, args.seed);
    let cfg = Config::new(
        args.seed,
        args.revisions.unwrap_or(preset.revisions),
        args.files.unwrap_or(preset.files),
    );
    let start = Instant::now();
    let sink: Box<dyn Write> = if args.output == "-" {
        Box::new(io::stdout().lock())
    } else {
        Box::new(File::create(&args.output)?)
    };
    let (stats, mut out) = generate(&cfg, BufWriter::with_capacity(1 << 20, sink))?;
    out.flush()?;
    let secs = start.elapsed().as_secs_f64();
    eprintln!(
        "svelto-gen: seed {} -> {} ({:.1} MB) in {secs:.1} s",
        cfg.seed,
        args.output,
        stats.bytes as f64 / 1e6
    );
    eprintln!(
        "  revisions {}, node records {} (max {} in one revision), big revisions {}",
        stats.revisions, stats.node_records, stats.max_records_in_revision, stats.big_revisions
    );
    eprintln!(
        "  trunk at the end: {} files in {} directories; ChangeLog changed in {} revisions",
        stats.trunk_files, stats.trunk_dirs, stats.changelog_revisions
    );
    eprintln!(
        "  branches {}, tags {}, copies {}, deletes {}, replaces {}",
        stats.branches, stats.tags, stats.copies, stats.deletes, stats.replaces
    );
    Ok(())
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            if !e.is_empty() {
                eprintln!("svelto-gen: {e}");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("svelto-gen: {e}");
            ExitCode::FAILURE
        }
    }
}
