//! svnlook's subcommands (`author`, `cat`, `changed`, `diff`, `tree`, `propget`...) over
//! a repository read through the storage seam ([`ReadRepo`]): what each writes to a
//! [`Write`], byte-identical to svnlook 1.14's output for the same history, and its errors
//! with Subversion's codes ([`LookError`]). Any backend serves: the local engine, the
//! in-memory one, the cluster's.
//!
//! Owns: svnlook's output formats, its argument checks after parsing (too many or missing
//! arguments), its error messages, and the two pieces of Subversion svnlook is built on:
//! the change tree of a revision ([`changes`]: the node editor fed by a replay) and the
//! line diff with its unified output ([`diff`]). Must not: parse the command line, print to the
//! process's streams, read the environment (the caller passes the time zone) or open a
//! repository itself (the caller's [`Opener`] does).

pub mod changes;
mod commands;
pub mod diff;
mod diff_run;
mod error;
mod xml;

use commands::*;
use diff_run::*;
use xml::*;

pub use error::{LookError, Result, E_IO};

use changes::{change_tree, dirs_changed, ChangeNode};
use diff::DiffOptions;
use std::io::{self, Write};
use std::path::Path;
use std::sync::Arc;
use svelto_core::localtime::Zone;
use svelto_core::{code, fspath, join, relpath, NodeKind, PropList, Revnum};
use svelto_fs::{ReadRepo, StoreError};
use svelto_repos::{NodeHistory, ReposError};

/// The name the errors carry (`svelto look: E160013: ...`).
pub const PROG: &str = "svelto look";

/// A subcommand's arguments and options, as the command line gave them.
#[derive(Default, Clone, Debug)]
pub struct LookArgs {
    /// The repository's directory.
    pub repos: Option<String>,
    pub arg1: Option<String>,
    pub arg2: Option<String>,
    /// Whether a third argument was given.
    pub more_args: bool,
    pub rev: Option<Revnum>,
    pub txn: Option<String>,
    pub limit: i64,
    pub show_ids: bool,
    pub no_diff_deleted: bool,
    pub no_diff_added: bool,
    pub diff_copy_from: bool,
    pub verbose: bool,
    pub revprop: bool,
    pub full_paths: bool,
    pub copy_info: bool,
    pub non_recursive: bool,
    pub xml: bool,
    /// `-x`: the internal diff's options, or the words given to `--diff-cmd`.
    pub extensions: Option<String>,
    pub ignore_properties: bool,
    pub properties_only: bool,
    pub diff_cmd: Option<String>,
    pub show_inherited_props: bool,
    pub no_newline: bool,
    /// The time zone dates are shown in (`date`, `info`, `lock`).
    pub zone: Zone,
}

/// Opens the repository at a directory: with a transaction name, that transaction as the
/// youngest revision of the handle, and its number.
pub type Opener<'a> =
    &'a dyn Fn(&Path, Option<&str>) -> svelto_fs::Result<(Arc<dyn ReadRepo>, Option<Revnum>)>;

/// Runs subcommand `name` (its canonical name) with `args`, writing what svnlook prints
/// on standard output to `out`. The arguments are checked before the repository is
/// opened with `open`. What was written before an error stays written.
pub fn run(name: &str, args: &LookArgs, open: Opener<'_>, out: &mut dyn Write) -> Result<()> {
    dispatch(name, args, open, out)
}

/// Whether `s` is a URL (`scheme://...`), which svnlook refuses as a repository path.
pub fn is_url(s: &str) -> bool {
    match s.find("://") {
        Some(i) => {
            i > 0
                && s[..i]
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'-' || b == b'.')
        }
        None => false,
    }
}

fn check_args(st: &LookArgs, n: usize) -> Result<()> {
    if (n == 0 && st.arg1.is_some()) || (n == 1 && st.arg2.is_some()) {
        return Err(LookError::args(
            code::CL_ARG_PARSING_ERROR,
            "Too many arguments given",
        ));
    }
    if n == 1 && st.arg1.is_none() {
        return Err(LookError::args(
            code::CL_INSUFFICIENT_ARGS,
            "Missing repository path argument",
        ));
    }
    Ok(())
}
