//! Checks `svelto serve` makes when it starts.

use std::path::{Path, PathBuf};

/// The repositories' root as `-r` names it, made absolute and resolved; refused as svnserve
/// refuses it (E200009) when it is not a directory: a file, or nothing.
pub fn root_dir(r: &Path) -> anyhow::Result<PathBuf> {
    let abs = std::path::absolute(r).unwrap_or_else(|_| r.to_path_buf());
    match r.canonicalize() {
        Ok(p) if p.is_dir() => Ok(p),
        _ => anyhow::bail!(
            "E200009: Root path '{}' does not exist or is not a directory",
            abs.display()
        ),
    }
}
