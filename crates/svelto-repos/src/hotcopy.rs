//! `svelto admin hotcopy`: a consistent copy of a live repository (svnadmin's
//! `svn_repos_hotcopy3` contract), and `freeze`.
//!
//! The repository's own files (conf/, hooks/, locks/, README.txt) are copied as they are;
//! `db/` by the store, up to the commit point it read when it began (a commit racing the
//! copy is not in it, never half); the repository's `format` file last, as svnadmin
//! stamps its copy when it is complete.

use crate::error::{io, ReposError, Result, SvnErrorKind};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use svelto_core::{Env, Revnum};
use svelto_fs::{Backend, DbCopy, HotcopyError};

/// Copies the repository at `src` to `dst` (both of `backend`, which copies what it
/// stores; `env` is what the source is opened with). With `incremental`, a destination that holds
/// an earlier copy receives only what the source gained since; without, `dst` must not
/// exist or be empty. `progress` gets the revisions copied (first, last) once they are:
/// first each revision whose properties an incremental copy brought, then the new ones.
pub fn hotcopy(
    backend: &dyn Backend,
    env: &Arc<dyn Env>,
    src: &Path,
    dst: &Path,
    incremental: bool,
    progress: &mut dyn FnMut(Revnum, Revnum),
) -> Result<DbCopy> {
    let src_abs = absolute(src)?;
    let dst_abs = absolute(dst)?;
    if src_abs == dst_abs {
        return Err(ReposError::svn(
            SvnErrorKind::IncorrectParams,
            "Hotcopy source and destination are equal",
        ));
    }
    // Refuse before anything is written (svnadmin recurses until the path is too long).
    backend.open(src, env)?;
    if dst_abs.starts_with(&src_abs) {
        return Err(ReposError::svn(
            SvnErrorKind::IncorrectParams,
            format!(
                "Cannot hotcopy '{}' into itself ('{}' is inside it)",
                src.display(),
                dst.display()
            ),
        ));
    }
    match fs::metadata(dst) {
        Ok(m) if m.is_file() => {
            return Err(ReposError::svn(
                SvnErrorKind::NodeUnexpectedKind,
                format!("'{}' already exists and is a file", dst_abs.display()),
            ))
        }
        Ok(m) if !m.is_dir() => {
            return Err(ReposError::svn(
                SvnErrorKind::NodeUnexpectedKind,
                format!(
                    "'{}' already exists and has an unknown node kind",
                    dst_abs.display()
                ),
            ))
        }
        Ok(_) if !incremental => {
            let mut entries =
                fs::read_dir(dst).map_err(io(format!("reading '{}'", dst.display())))?;
            if entries.next().is_some() {
                return Err(ReposError::svn(
                    SvnErrorKind::DirNotEmpty,
                    format!("'{}' exists and is non-empty", dst_abs.display()),
                ));
            }
        }
        _ => {}
    }
    // An incremental copy to where there is no repository yet is a whole copy.
    let incremental = incremental && backend.is_repository(dst);
    copy_structure(&src_abs, &dst_abs, true)?;
    let copy = backend
        .hotcopy(src, dst, incremental)
        .map_err(|e| match e {
            HotcopyError::Store(e) => ReposError::Store(e),
            e @ HotcopyError::UuidMismatch => {
                ReposError::svn(SvnErrorKind::UuidMismatch, e.to_string())
            }
            e @ HotcopyError::DestinationAhead { .. } => {
                ReposError::svn(SvnErrorKind::UnsupportedFeature, e.to_string())
            }
            e @ HotcopyError::Diverged { .. } => {
                ReposError::svn(SvnErrorKind::IllegalTarget, e.to_string())
            }
        })?;
    let format = fs::read(src.join("format")).map_err(io("reading the repository's format"))?;
    let tmp = dst.join("format.tmp");
    fs::write(&tmp, &format).map_err(io(format!("writing '{}'", tmp.display())))?;
    fs::rename(&tmp, dst.join("format"))
        .map_err(io(format!("writing '{}'", dst.join("format").display())))?;
    // As svnadmin: the revisions whose properties changed, then the new ones.
    for &rev in &copy.revprop_changes {
        progress(rev, rev);
    }
    if let Some((first, last)) = copy.revisions {
        progress(first, last);
    }
    Ok(copy)
}

fn absolute(p: &Path) -> Result<PathBuf> {
    let abs = std::path::absolute(p).map_err(io(format!("resolving '{}'", p.display())))?;
    // Resolve symbolic links where the path exists, so that two names of one directory
    // compare equal; a missing destination keeps its lexical form under its parent's.
    if let Ok(c) = fs::canonicalize(&abs) {
        return Ok(c);
    }
    match (abs.parent(), abs.file_name()) {
        (Some(parent), Some(name)) => match fs::canonicalize(parent) {
            Ok(c) => Ok(c.join(name)),
            Err(_) => Ok(abs),
        },
        _ => Ok(abs),
    }
}

/// Copies everything of the repository directory `src` but `db/` and `format` into `dst`,
/// replacing files that exist there (conf/ and hooks/ as they are now).
fn copy_structure(src: &Path, dst: &Path, top: bool) -> Result<()> {
    fs::create_dir_all(dst).map_err(io(format!("creating '{}'", dst.display())))?;
    let entries = fs::read_dir(src).map_err(io(format!("reading '{}'", src.display())))?;
    for entry in entries {
        let entry = entry.map_err(io(format!("reading '{}'", src.display())))?;
        let name = entry.file_name();
        if top && (name == "db" || name == "format") {
            continue;
        }
        let (from, to) = (entry.path(), dst.join(&name));
        let kind = entry
            .file_type()
            .map_err(io(format!("reading '{}'", from.display())))?;
        if kind.is_dir() {
            copy_structure(&from, &to, false)?;
        } else if kind.is_symlink() {
            let target =
                fs::read_link(&from).map_err(io(format!("reading '{}'", from.display())))?;
            let _ = fs::remove_file(&to);
            std::os::unix::fs::symlink(&target, &to)
                .map_err(io(format!("creating '{}'", to.display())))?;
        } else if kind.is_file() {
            fs::copy(&from, &to).map_err(io(format!(
                "copying '{}' to '{}'",
                from.display(),
                to.display()
            )))?;
        }
    }
    Ok(())
}

/// Holds the writes of the repositories at `paths` (in that order) while `body` runs:
/// commits and lock or revision property changes wait, reads go on.
pub fn freeze<T>(backend: &dyn Backend, paths: &[PathBuf], body: impl FnOnce() -> T) -> Result<T> {
    let frozen = backend.freeze(paths)?;
    let out = body();
    drop(frozen);
    Ok(out)
}
