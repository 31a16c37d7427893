//! svnadmin's subcommands as a library over the storage seam: `verify`, the revision
//! property changes (`setlog`, `setrevprop`, `delrevprop`), `hotcopy`, and the
//! maintenance subcommands (`lstxns`, `rmtxns`, `recover`, `upgrade`, `pack`,
//! `build-repcache`, `deltify`, `rev-size`): what each writes to a [`Write`] (svnadmin's
//! lines, byte for byte), the errors it reports with Subversion's codes, and what it asks
//! of the backend ([`Backend`], [`ReadRepo`]: any backend serves, or refuses an operation
//! it has no meaning for with "not supported by this storage backend").
//!
//! Owns: svnadmin's output and messages around the operations, its checks after parsing.
//! Must not: parse the command line, print to the process's streams, read the clock or
//! environment (the caller passes the `Env`), or name a backend (the caller's
//! composition root chooses one).

pub mod maintenance;
pub mod revprops;
pub mod verify;

use std::io::{self, Write};
use std::path::Path;
use std::sync::Arc;
use svelto_core::{code, Env};
use svelto_fs::{Backend, ReadRepo, StoreError, WriteRepo};
use svelto_repos::ReposError;

/// The name svnadmin's errors carry (scripts and Subversion's tests match it).
pub const PROG: &str = "svnadmin";

/// An admin subcommand's failure.
#[derive(Debug, thiserror::Error)]
pub enum AdminError {
    /// An error svnadmin reports with its own code and words.
    #[error("{message}")]
    Svn { code: u32, message: String },
    #[error(transparent)]
    Repos(#[from] ReposError),
    /// Writing the output failed.
    #[error(transparent)]
    Io(#[from] io::Error),
}

impl From<StoreError> for AdminError {
    fn from(e: StoreError) -> Self {
        AdminError::Repos(ReposError::Store(e))
    }
}

pub type Result<T, E = AdminError> = std::result::Result<T, E>;

/// An error svnadmin reports with `code`.
pub fn svn_error(code: u32, message: impl Into<String>) -> AdminError {
    AdminError::Svn {
        code,
        message: message.into(),
    }
}

/// Writes `text` and flushes (svnadmin's lines appear as the work goes).
pub(crate) fn out(w: &mut dyn Write, text: &str) -> Result<()> {
    w.write_all(text.as_bytes())?;
    w.flush()?;
    Ok(())
}

/// Opens the repository at `path` on `backend`; a URL, or a directory that holds none,
/// is refused as svnadmin refuses it (the `format` file it looked for).
pub fn open(backend: &dyn Backend, path: &Path, env: &Arc<dyn Env>) -> Result<Arc<dyn ReadRepo>> {
    let text = path.to_string_lossy();
    if text.contains("://") {
        return Err(svn_error(
            code::CL_ARG_PARSING_ERROR,
            format!("'{text}' is a URL when it should be a local path"),
        ));
    }
    match backend.open(path, env) {
        Ok(r) => Ok(r),
        Err(StoreError::NotARepository(_)) if !path.join("format").exists() => Err(svn_error(
            2,
            format!(
                "Can't open file '{}': No such file or directory",
                path.join("format").display()
            ),
        )),
        Err(e) => Err(e.into()),
    }
}

/// svnadmin's refusal when another process holds the repository.
fn locked() -> AdminError {
    svn_error(
        code::REPOS_LOCKED,
        "Failed to get exclusive repository access; perhaps another process\n\
         such as httpd, svnserve or svn has it open?",
    )
}

/// The writer of the repository at `path`, taken as svnadmin takes the repository for
/// recover and upgrade: at once, or after saying it waits with `wait`.
pub fn exclusive(
    backend: &dyn Backend,
    env: &Arc<dyn Env>,
    path: &Path,
    wait: bool,
    w: &mut dyn Write,
) -> Result<Box<dyn WriteRepo>> {
    open(backend, path, env)?;
    if let Some(writer) = backend.try_open_writer(path)? {
        return Ok(writer);
    }
    if !wait {
        return Err(locked());
    }
    out(
        w,
        "Waiting on repository lock; perhaps another process has it open?\n",
    )?;
    Ok(backend.open_writer(path)?)
}

/// `hotcopy`: copies the repository at `src` to `dst` (see [`svelto_repos::hotcopy`]),
/// writing svnadmin's "* Copied revision N." for each revision copied unless `quiet`;
/// `progress` hears each revision copied.
#[allow(clippy::too_many_arguments)]
pub fn hotcopy(
    backend: &dyn Backend,
    env: &Arc<dyn Env>,
    src: &Path,
    dst: &Path,
    incremental: bool,
    quiet: bool,
    w: &mut dyn Write,
    progress: &mut dyn FnMut(svelto_core::Revnum),
) -> Result<()> {
    let mut copied = |first: svelto_core::Revnum, last: svelto_core::Revnum| {
        // svnadmin names each revision of a repository that is not packed; a reader that
        // went away does not stop the copy.
        for rev in first..=last {
            if !quiet {
                let _ = out(w, &format!("* Copied revision {rev}.\n"));
            }
            progress(rev);
        }
    };
    svelto_repos::hotcopy(backend, env, src, dst, incremental, &mut copied)?;
    Ok(())
}
