//! `svelto admin info`: the repository's UUID, youngest revision, format and size.

use anyhow::{Context, Result};
use clap::Args;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::open;

#[derive(Args)]
pub struct InfoArgs {
    pub repo: PathBuf,
}

pub fn run(args: InfoArgs) -> Result<()> {
    let InfoArgs { repo } = args;
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
