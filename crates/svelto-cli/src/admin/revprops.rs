//! `svelto admin setlog`, `setrevprop`, `delrevprop`: svnadmin's options; the changes,
//! their hooks and errors are `svelto_admin::revprops`'.

use anyhow::Result;
use clap::Args;
use std::path::{Path, PathBuf};
use svelto_repos::revprops::{value_from_file, HookUse};
use svelto_repos::Hooks;

use super::{admin_error, arg_error, env, local, open, read_file, single_revision, with_writer};
use svelto_core::code;

#[derive(Args)]
pub struct SetlogArgs {
    /// The repository's directory; with --cluster, its name in the cluster.
    #[arg(value_name = "REPOS_PATH")]
    pub repo: PathBuf,
    /// Change the log of repository REPOS_PATH of this cluster (docs/cluster.md); its
    /// hooks are the front ends', so --bypass-hooks is required.
    #[arg(long, value_name = "CLUSTER_FILE")]
    pub cluster: Option<PathBuf>,
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    #[arg(short = 'r', long = "revision", value_name = "REVISION")]
    pub revision: Option<String>,
    /// Run neither the pre- nor the post-revprop-change hook.
    #[arg(long)]
    pub bypass_hooks: bool,
    /// The front end's directory REPOS_PATH was, when it named one: its hooks run.
    #[arg(skip)]
    pub front_end_dir: Option<PathBuf>,
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
    /// Change the property of repository REPOS_PATH of this cluster (docs/cluster.md);
    /// its hooks are the front ends', so neither hook option is taken.
    #[arg(long, value_name = "CLUSTER_FILE")]
    pub cluster: Option<PathBuf>,
    /// The front end's directory REPOS_PATH was, when it named one: its hooks run.
    #[arg(skip)]
    pub front_end_dir: Option<PathBuf>,
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
    let value = value_from_file(&read_file(&args.file)?)?;
    if let Some(file) = &args.cluster {
        if !args.bypass_hooks && args.front_end_dir.is_none() {
            return Err(arg_error(
                code::CL_ARG_PARSING_ERROR,
                "a cluster repository's hooks are its front ends' (ROOT/NAME/hooks on each): \
                 give --bypass-hooks, or change the log through a front end (svn propset \
                 --revprop), which runs them",
            ));
        }
        let name = super::cluster_name(&args.repo)?;
        let repo = crate::cluster::open(file, name)?;
        let mut writer = crate::cluster::writer(file, name)?;
        // Given a front end's directory, its hooks run as the front end runs them.
        let hooks = Hooks::new(
            args.front_end_dir.as_deref().unwrap_or(repo.cache_dir()),
            None,
        )?;
        return svelto_admin::revprops::setlog(
            &repo,
            &hooks,
            rev,
            &value,
            args.bypass_hooks || args.front_end_dir.is_none(),
            Box::new(move |f| f(&mut writer)),
        )
        .map_err(admin_error);
    }
    let repo = open(&args.repo)?;
    let hooks = Hooks::new(&args.repo, None)?;
    svelto_admin::revprops::setlog(
        &*repo,
        &hooks,
        rev,
        &value,
        args.bypass_hooks,
        Box::new(with_writer(&args.repo)),
    )
    .map_err(admin_error)
}

pub fn setrevprop(args: SetrevpropArgs) -> Result<()> {
    let target = target(&args.opts)?;
    let value = value_from_file(&read_file(&args.file)?)?;
    if let Some(file) = &args.opts.cluster {
        let dir = args.opts.front_end_dir.as_deref();
        return change_in_cluster(file, dir, &args.repo, target, &args.name, Some(&value));
    }
    match target {
        Target::Rev(rev, hooks) => change(&args.repo, rev, &args.name, Some(&value), hooks),
        Target::Txn(txn) => txn_prop(&args.repo, &txn),
    }
}

pub fn delrevprop(args: DelrevpropArgs) -> Result<()> {
    let target = target(&args.opts)?;
    if let Some(file) = &args.opts.cluster {
        let dir = args.opts.front_end_dir.as_deref();
        return change_in_cluster(file, dir, &args.repo, target, &args.name, None);
    }
    match target {
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
    let hook_runner = Hooks::new(path, None)?;
    svelto_admin::revprops::change(
        &*repo,
        &hook_runner,
        rev,
        name,
        value,
        hooks,
        Box::new(with_writer(path)),
    )
    .map_err(admin_error)
}

/// `setrevprop`/`delrevprop --cluster FILE NAME`: the change through the writer lease (a
/// revision property change of the cluster, docs/cluster.md), without hooks; the hook
/// options and `-t` are refused, saying why. Given a front end's directory `dir`
/// instead, the hook options run its hooks, as the front end runs them.
fn change_in_cluster(
    file: &Path,
    dir: Option<&Path>,
    repo: &Path,
    target: Target,
    name: &str,
    value: Option<&[u8]>,
) -> Result<()> {
    let (rev, hook_use) = match target {
        Target::Rev(rev, hooks) if hooks == HookUse::NONE || dir.is_some() => (rev, hooks),
        Target::Rev(..) => {
            return Err(arg_error(
                code::CL_ARG_PARSING_ERROR,
                "a cluster repository's hooks are its front ends' (ROOT/NAME/hooks on each): \
                 drop --use-pre-revprop-change-hook and --use-post-revprop-change-hook, or \
                 change the property through a front end (svn propset --revprop), which runs \
                 them",
            ))
        }
        Target::Txn(_) => {
            return Err(arg_error(
                code::CL_ARG_PARSING_ERROR,
                "--transaction (-t) names a transaction staged on one machine: a cluster \
                 repository's are in its front ends' caches, and only their hooks see them",
            ))
        }
    };
    let repo_name = super::cluster_name(repo)?;
    let cluster = crate::cluster::open(file, repo_name)?;
    let mut writer = crate::cluster::writer(file, repo_name)?;
    let hooks = Hooks::new(dir.unwrap_or(cluster.cache_dir()), None)?;
    svelto_admin::revprops::change(
        &cluster,
        &hooks,
        rev,
        name,
        value,
        hook_use,
        Box::new(move |f| f(&mut writer)),
    )
    .map_err(admin_error)
}

fn txn_prop(path: &Path, txn: &str) -> Result<()> {
    svelto_admin::revprops::txn_prop(local(), &env(), path, txn).map_err(admin_error)
}
