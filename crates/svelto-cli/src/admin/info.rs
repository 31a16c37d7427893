//! `svelto admin info`: the repository's UUID, youngest revision, format and size.

use anyhow::{Context, Result};
use clap::Args;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::open;

#[derive(Args)]
pub struct InfoArgs {
    /// The repository's directory; with --cluster, its name in the cluster.
    pub repo: PathBuf,
    /// Describe repository REPO of this cluster (docs/cluster.md), at the head it has now.
    #[arg(long, value_name = "FILE")]
    pub cluster: Option<PathBuf>,
}

pub fn run(args: InfoArgs) -> Result<()> {
    let InfoArgs { repo, cluster } = args;
    let text = match &cluster {
        Some(file) => {
            let name = super::cluster_name(&repo)?;
            let r = crate::cluster::open(file, name)?;
            let r: &dyn svelto_fs::ReadRepo = &r;
            // No size on disk: the bytes are the object store's; where they are instead.
            format!(
                "Path: {name}\nUUID: {}\nRevisions: {}\nRepository Format: 1\n\
                 Repository Capability: mergeinfo\nFilesystem Type: svelto-cluster\n\
                 Filesystem Format: 1\nCluster File: {}\n",
                r.uuid()?,
                r.youngest(),
                canonical(&std::path::absolute(file).unwrap_or_else(|_| file.clone()))
            )
        }
        None => {
            let r = open(&repo)?;
            // svnadmin's lines where they apply (no Subversion version reads this store,
            // so no "Compatible With Version"; no FSFS lines), then the size on disk.
            format!(
                "Path: {}\nUUID: {}\nRevisions: {}\nRepository Format: 1\n\
                 Repository Capability: mergeinfo\nFilesystem Type: svelto\n\
                 Filesystem Format: 1\nSize On Disk: {} bytes\n",
                canonical(&repo),
                r.uuid()?,
                r.youngest(),
                dir_size(&repo)?
            )
        }
    };
    // A reader that stops early (`| head`) is not an error.
    match io::stdout().lock().write_all(text.as_bytes()) {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
            Err(e).context("writing to standard output")
        }
        _ => Ok(()),
    }
}

/// The path as svnadmin prints it (`svn_dirent_canonicalize`): no `.` components, no
/// repeated or trailing '/'.
fn canonical(path: &Path) -> String {
    let text = path.to_string_lossy();
    let absolute = text.starts_with('/');
    let parts: Vec<&str> = text
        .split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .collect();
    match (absolute, parts.is_empty()) {
        (true, _) => format!("/{}", parts.join("/")),
        (false, true) => ".".to_string(),
        (false, false) => parts.join("/"),
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
