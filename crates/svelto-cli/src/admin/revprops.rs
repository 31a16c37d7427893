//! `svelto admin setlog`, `setrevprop`, `delrevprop`: revision property changes with
//! svnadmin's options. The rules (validation, hooks, the writer) are
//! `svelto_repos::revprops`'; svnadmin runs the revision property hooks only when asked
//! (`setlog` unless `--bypass-hooks`).

use anyhow::Result;
use clap::Args;
use std::path::{Path, PathBuf};
use svelto_repos::revprops::{change_rev_prop_with, value_from_file, HookUse, RevpropChange};
use svelto_repos::Hooks;
use svelto_store::Repo;

use super::{arg_error, open, read_file, single_revision, svn_error, with_writer};
use svelto_core::code;

#[derive(Args)]
pub struct SetlogArgs {
    #[arg(value_name = "REPOS_PATH")]
    pub repo: PathBuf,
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    #[arg(short = 'r', long = "revision", value_name = "REVISION")]
    pub revision: Option<String>,
    /// Run neither the pre- nor the post-revprop-change hook.
    #[arg(long)]
    pub bypass_hooks: bool,
}

/// The options of `setrevprop` and `delrevprop`.
#[derive(Args)]
pub struct RevpropOptions {
    #[arg(short = 'r', long = "revision", value_name = "REVISION")]
    pub revision: Option<String>,
    /// A transaction instead of a revision.
    #[arg(short = 't', long = "transaction", value_name = "TXN")]
    pub txn: Option<String>,
    /// Run the pre-revprop-change hook first.
    #[arg(long)]
    pub use_pre_revprop_change_hook: bool,
    /// Run the post-revprop-change hook after.
    #[arg(long)]
    pub use_post_revprop_change_hook: bool,
}

#[derive(Args)]
pub struct SetrevpropArgs {
    #[arg(value_name = "REPOS_PATH")]
    pub repo: PathBuf,
    #[arg(value_name = "NAME")]
    pub name: String,
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    #[command(flatten)]
    pub opts: RevpropOptions,
}

#[derive(Args)]
pub struct DelrevpropArgs {
    #[arg(value_name = "REPOS_PATH")]
    pub repo: PathBuf,
    #[arg(value_name = "NAME")]
    pub name: String,
    #[command(flatten)]
    pub opts: RevpropOptions,
}

pub fn setlog(args: SetlogArgs) -> Result<()> {
    let rev = single_revision(args.revision.as_deref())?;
    let hooks = if args.bypass_hooks {
        HookUse::NONE
    } else {
        HookUse::BOTH
    };
    let value = value_from_file(&read_file(&args.file)?)?;
    change(&args.repo, rev, "svn:log", Some(&value), hooks)
}

pub fn setrevprop(args: SetrevpropArgs) -> Result<()> {
    let target = target(&args.opts)?;
    let value = value_from_file(&read_file(&args.file)?)?;
    match target {
        Target::Rev(rev, hooks) => change(&args.repo, rev, &args.name, Some(&value), hooks),
        Target::Txn(txn) => txn_prop(&args.repo, &txn),
    }
}

pub fn delrevprop(args: DelrevpropArgs) -> Result<()> {
    match target(&args.opts)? {
        Target::Rev(rev, hooks) => change(&args.repo, rev, &args.name, None, hooks),
        Target::Txn(txn) => txn_prop(&args.repo, &txn),
    }
}

enum Target {
    Rev(svelto_core::Revnum, HookUse),
    Txn(String),
}

/// What `-r`/`-t` and the hook options ask for, checked as svnadmin checks them.
fn target(opts: &RevpropOptions) -> Result<Target> {
    let hooks = HookUse {
        pre: opts.use_pre_revprop_change_hook,
        post: opts.use_post_revprop_change_hook,
    };
    if let Some(txn) = &opts.txn {
        if opts.revision.is_some() {
            return Err(arg_error(
                code::CL_ARG_PARSING_ERROR,
                "--revision (-r) and --transaction (-t) are mutually exclusive",
            ));
        }
        if hooks != HookUse::NONE {
            return Err(arg_error(
                code::CL_ARG_PARSING_ERROR,
                "Calling hooks is incompatible with --transaction (-t)",
            ));
        }
        return Ok(Target::Txn(txn.clone()));
    }
    Ok(Target::Rev(
        single_revision(opts.revision.as_deref())?,
        hooks,
    ))
}

fn change(
    path: &Path,
    rev: svelto_core::Revnum,
    name: &str,
    value: Option<&[u8]>,
    hooks: HookUse,
) -> Result<()> {
    let repo = open(path)?;
    let change = RevpropChange {
        rev,
        name,
        value,
        expected: None,
        user: None,
        readable: None,
    };
    let hook_runner = Hooks::new(path, None)?;
    change_rev_prop_with(&repo, &hook_runner, &change, hooks, with_writer(path))?;
    Ok(())
}

/// A Svelto transaction exists only while a hook examines it, and its properties are the
/// ones the commit brought: `-t` names one that cannot be changed.
fn txn_prop(path: &Path, txn: &str) -> Result<()> {
    open(path)?;
    match Repo::open_txn(path, txn) {
        Err(e) => Err(e.into()),
        Ok(_) => Err(svn_error(
            code::UNSUPPORTED_FEATURE,
            format!(
                "Svelto cannot change the properties of transaction '{txn}' while its \
                 commit runs; change them in the revision after the commit"
            ),
        )),
    }
}
