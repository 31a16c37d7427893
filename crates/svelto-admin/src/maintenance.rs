//! svnadmin's maintenance subcommands: each does on a Svelto repository what corresponds,
//! through the backend, or says in svnadmin's words that nothing is needed.
//!
//! - A transaction exists only while a commit's pre-commit hook runs (or a load with
//!   `--use-pre-commit-hook` runs it): `lstxns` lists those the backend shows, with what
//!   a process that died left behind; `rmtxns` removes them as svnadmin removes FSFS's,
//!   a commit in progress only once its writer is gone.
//! - `recover` and `upgrade` take the write lock and do what the next writer does when it
//!   opens (the backend's repair, said in its words). There is one store format, so
//!   nothing else to upgrade.
//! - The store is not sharded: `pack` has nothing to pack. Texts are stored as deltas and
//!   indexed as each commit writes them: `deltify` and `build-repcache` read each
//!   revision (a damaged one is reported) and find nothing to do.
//! - `rev-size` is what the revision's commit added to the store.

use crate::{exclusive, locked, open, out, svn_error, Result};
use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use svelto_core::{code, Env, Revnum};
use svelto_fs::{Backend, ReadRepo, StoreError, TxnRemoval};

/// `lstxns`: the transactions' names, one a line; with `limit`, only those based on that
/// revision or an older one.
pub fn lstxns(repo: &dyn ReadRepo, limit: Option<Revnum>, w: &mut dyn Write) -> Result<()> {
    let mut text = String::new();
    for (name, base) in repo.txns()? {
        if limit.is_none_or(|l| base <= l) {
            text.push_str(&name);
            text.push('\n');
        }
    }
    out(w, &text)
}

/// `rmtxns`: removes each named transaction, saying so unless `quiet`. As svnadmin, each
/// failure goes to `report` and the others are still removed.
pub fn rmtxns(
    backend: &dyn Backend,
    env: &Arc<dyn Env>,
    path: &Path,
    names: &[String],
    quiet: bool,
    w: &mut dyn Write,
    report: &mut dyn FnMut(crate::AdminError),
) -> Result<()> {
    open(backend, path, env)?;
    for name in names {
        let result = match backend.remove_txn(path, name) {
            Ok(TxnRemoval::Removed) => Ok(()),
            Ok(TxnRemoval::InProgress) => Err(svn_error(
                code::FS_GENERAL,
                format!(
                    "Transaction '{name}' is a commit in progress (its hooks are running); \
                     it goes away when the commit ends"
                ),
            )),
            Err(StoreError::NoSuchTxn(_)) => Err(svn_error(
                code::FS_NO_SUCH_TRANSACTION,
                format!("No such transaction '{name}'"),
            )),
            Err(e) => Err(e.into()),
        };
        match result {
            Ok(()) if !quiet => out(w, &format!("Transaction '{name}' removed.\n"))?,
            Ok(()) => {}
            Err(e) => report(e),
        }
    }
    Ok(())
}

/// `recover`: the backend's repair under the write lock (waiting for it with `wait`),
/// with svnadmin's lines around what it found.
pub fn recover(
    backend: &dyn Backend,
    env: &Arc<dyn Env>,
    path: &Path,
    wait: bool,
    w: &mut dyn Write,
) -> Result<()> {
    if !backend.is_repository(path) || path.to_string_lossy().contains("://") {
        open(backend, path, env)?; // the error svnadmin gives for a path that holds none
    }
    let found = match backend.recover(path, false)? {
        Some(found) => found,
        None if !wait => return Err(locked()),
        None => {
            out(
                w,
                "Waiting on repository lock; perhaps another process has it open?\n",
            )?;
            backend
                .recover(path, true)?
                .ok_or_else(|| StoreError::Conflict("the write lock was not taken".into()))?
        }
    };
    out(
        w,
        "Repository lock acquired.\nPlease wait; recovering the repository may take some time...\n",
    )?;
    let mut text = String::new();
    for line in found {
        text.push_str(&line);
        text.push('\n');
    }
    out(w, &text)?;
    // The writer cuts what lies past the commit point and drops stale transactions.
    drop(exclusive(backend, env, path, wait, w)?);
    out(w, "\nRecovery completed.\n")?;
    let youngest = open(backend, path, env)?.youngest();
    out(w, &format!("The latest repos revision is {youngest}.\n"))
}

/// `upgrade`: what `recover` does when the writer opens; one format exists.
pub fn upgrade(
    backend: &dyn Backend,
    env: &Arc<dyn Env>,
    path: &Path,
    w: &mut dyn Write,
) -> Result<()> {
    let writer = exclusive(backend, env, path, false, w)?;
    out(
        w,
        "Repository lock acquired.\nPlease wait; upgrading the repository may take some time...\n",
    )?;
    drop(writer);
    out(w, "\nUpgrade completed.\n")
}

/// `pack`: nothing to pack (the store is not sharded).
pub fn pack(quiet: bool, w: &mut dyn Write) -> Result<()> {
    if !quiet {
        out(
            w,
            "svnadmin: Warning - this repository is not sharded. Packing has no effect.\n",
        )?;
    }
    Ok(())
}

/// `build-repcache`: reads each revision of `lo..=hi`; nothing to add to the index.
pub fn build_repcache(
    repo: &dyn ReadRepo,
    lo: Revnum,
    hi: Revnum,
    quiet: bool,
    w: &mut dyn Write,
) -> Result<()> {
    each_revision(repo, lo, hi, quiet, w, |rev| {
        format!("* Processed revision {rev}.\n")
    })
}

/// `deltify`: reads each revision of `lo..=hi`; their texts are deltas already.
pub fn deltify(
    repo: &dyn ReadRepo,
    lo: Revnum,
    hi: Revnum,
    quiet: bool,
    w: &mut dyn Write,
) -> Result<()> {
    each_revision(repo, lo, hi, quiet, w, |rev| {
        format!("Deltifying revision {rev}...done.\n")
    })
}

/// Reads each revision of `lo..=hi` (its record and changed paths: a damaged one is
/// reported) and writes `line` for it unless quiet.
fn each_revision(
    repo: &dyn ReadRepo,
    lo: Revnum,
    hi: Revnum,
    quiet: bool,
    w: &mut dyn Write,
    line: impl Fn(Revnum) -> String,
) -> Result<()> {
    for rev in lo..=hi {
        repo.rev_meta(rev)?;
        if !quiet {
            out(w, &line(rev))?;
        }
    }
    Ok(())
}

/// `rev-size`: the bytes revision `rev` added to the store.
pub fn rev_size(repo: &dyn ReadRepo, rev: Revnum, quiet: bool, w: &mut dyn Write) -> Result<()> {
    let size = repo.rev_size(rev)?;
    if quiet {
        out(w, &format!("{size}\n"))
    } else {
        out(w, &format!("{size:>12} bytes in revision {rev}\n"))
    }
}
