//! `svelto admin lock`, `unlock`, `lslocks`, `rmlocks`: the locks of `db/locks` with
//! svnadmin's arguments and output. The rules (token checks, ownership, hooks, the writer
//! that serializes lock changes with the server's commits and locks) are
//! `svelto_repos::locks`'.

use anyhow::Result;
use clap::Args;
use std::io::Write;
use std::path::{Path, PathBuf};
use svelto_repos::locks::{self, LockTarget, UnlockTarget};
use svelto_repos::Hooks;

use super::{arg_error, open, read_file, svn_error, with_writer};
use svelto_core::code;

#[derive(Args)]
pub struct LockArgs {
    /// The repository's directory; with --cluster, its name in the cluster.
    #[arg(value_name = "REPOS_PATH")]
    pub repo: PathBuf,
    /// Lock in repository REPOS_PATH of this cluster (docs/cluster.md), through its writer
    /// lease; its hooks are the front ends', so --bypass-hooks is required.
    #[arg(long, value_name = "CLUSTER_FILE")]
    pub cluster: Option<PathBuf>,
    #[arg(value_name = "PATH")]
    pub path: String,
    #[arg(value_name = "USERNAME")]
    pub user: String,
    #[arg(value_name = "COMMENT-FILE")]
    pub comment_file: PathBuf,
    #[arg(value_name = "TOKEN")]
    pub token: Option<String>,
    /// Run neither the pre-lock nor the post-lock hook.
    #[arg(long)]
    pub bypass_hooks: bool,
    #[arg(short, long)]
    pub quiet: bool,
    /// The front end's directory REPOS_PATH was, when it named one: its hooks run.
    #[arg(skip)]
    pub front_end_dir: Option<PathBuf>,
}

#[derive(Args)]
pub struct UnlockArgs {
    /// The repository's directory; with --cluster, its name in the cluster.
    #[arg(value_name = "REPOS_PATH")]
    pub repo: PathBuf,
    /// Unlock in repository REPOS_PATH of this cluster (docs/cluster.md), through its
    /// writer lease; its hooks are the front ends', so --bypass-hooks is required.
    #[arg(long, value_name = "CLUSTER_FILE")]
    pub cluster: Option<PathBuf>,
    #[arg(value_name = "LOCKED_PATH")]
    pub path: String,
    #[arg(value_name = "USERNAME")]
    pub user: String,
    #[arg(value_name = "TOKEN")]
    pub token: String,
    /// Run neither the pre-unlock nor the post-unlock hook.
    #[arg(long)]
    pub bypass_hooks: bool,
    #[arg(short, long)]
    pub quiet: bool,
    /// The front end's directory REPOS_PATH was, when it named one: its hooks run.
    #[arg(skip)]
    pub front_end_dir: Option<PathBuf>,
}

#[derive(Args)]
pub struct LslocksArgs {
    /// The repository's directory; with --cluster, its name in the cluster.
    #[arg(value_name = "REPOS_PATH")]
    pub repo: PathBuf,
    /// List the locks of repository REPOS_PATH of this cluster (docs/cluster.md), as
    /// etcd holds them now.
    #[arg(long, value_name = "FILE")]
    pub cluster: Option<PathBuf>,
    #[arg(value_name = "PATH-IN-REPOS")]
    pub paths: Vec<String>,
}

#[derive(Args)]
pub struct RmlocksArgs {
    /// The repository's directory; with --cluster, its name in the cluster.
    #[arg(value_name = "REPOS_PATH")]
    pub repo: PathBuf,
    /// Remove locks of repository REPOS_PATH of this cluster (docs/cluster.md), through
    /// its writer lease.
    #[arg(long, value_name = "CLUSTER_FILE")]
    pub cluster: Option<PathBuf>,
    #[arg(value_name = "LOCKED_PATH")]
    pub paths: Vec<String>,
    #[arg(short, long)]
    pub quiet: bool,
}

/// A path argument as a repository relpath (`svn_fspath__canonicalize`, without the
/// leading '/').
fn relpath(arg: &str) -> String {
    arg.split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .collect::<Vec<_>>()
        .join("/")
}

fn out(text: &str) -> Result<()> {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(text.as_bytes()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}

fn hooks(path: &Path, bypass: bool) -> Result<Option<Hooks>> {
    Ok(if bypass {
        None
    } else {
        Some(Hooks::new(path, None)?)
    })
}

/// The repository a `lock` or `unlock` changes, its hooks (None: bypassed) and, in a
/// cluster, its writer (the lease taken once).
type LockSide = (
    std::sync::Arc<dyn svelto_fs::ReadRepo>,
    Option<Hooks>,
    Option<svelto_cluster::ClusterWriter>,
);

/// What `lock`/`unlock` act on: the local repository `repo`, or with `cluster` the cluster
/// repository named `repo` (its hooks those of the front end's directory it was given as,
/// else refused without --bypass-hooks, as `setlog --cluster` is).
fn lock_side(
    repo: &Path,
    cluster: Option<&Path>,
    front_end_dir: Option<&Path>,
    bypass_hooks: bool,
) -> Result<LockSide> {
    let Some(file) = cluster else {
        return Ok((open(repo)?, hooks(repo, bypass_hooks)?, None));
    };
    let hooks = match front_end_dir {
        _ if bypass_hooks => None,
        Some(dir) => hooks(dir, false)?,
        None => {
            return Err(arg_error(
                code::CL_ARG_PARSING_ERROR,
                "a cluster repository's hooks are its front ends' (ROOT/NAME/hooks on each): \
                 give --bypass-hooks, or give a front end's directory ROOT/NAME, whose hooks \
                 then run",
            ))
        }
    };
    let name = super::cluster_name(repo)?;
    let opened = std::sync::Arc::new(crate::cluster::open(file, name)?);
    Ok((opened, hooks, Some(crate::cluster::writer(file, name)?)))
}

pub fn lock(args: LockArgs) -> Result<()> {
    let (repo, hooks, cluster_writer) = lock_side(
        &args.repo,
        args.cluster.as_deref(),
        args.front_end_dir.as_deref(),
        args.bypass_hooks,
    )?;
    let comment = String::from_utf8(read_file(&args.comment_file)?).map_err(|_| {
        svn_error(
            code::XML_UNESCAPABLE_DATA,
            "Lock comment contains illegal characters",
        )
    })?;
    let path = relpath(&args.path);
    let targets = [LockTarget {
        path: path.clone(),
        current_rev: None,
    }];
    let date = svelto_core::svn_date_now();
    locks::lock_many_with(
        &*repo,
        hooks.as_ref(),
        &args.user,
        Some(&comment),
        false,
        &date,
        None,
        &targets,
        std::slice::from_ref(&args.token),
        |f: super::WriterBody<'_>| match cluster_writer {
            Some(mut writer) => f(&mut writer),
            None => with_writer(&args.repo)(f),
        },
    )?
    .single()?;
    if !args.quiet {
        out(&format!("'/{path}' locked by user '{}'.\n", args.user))?;
    }
    Ok(())
}

pub fn unlock(args: UnlockArgs) -> Result<()> {
    let (repo, hooks, cluster_writer) = lock_side(
        &args.repo,
        args.cluster.as_deref(),
        args.front_end_dir.as_deref(),
        args.bypass_hooks,
    )?;
    let path = relpath(&args.path);
    let targets = [UnlockTarget {
        path: path.clone(),
        token: Some(args.token.clone()),
    }];
    locks::unlock_many_with(
        &*repo,
        hooks.as_ref(),
        Some(&args.user),
        false,
        &targets,
        |f: super::WriterBody<'_>| match cluster_writer {
            Some(mut writer) => f(&mut writer),
            None => with_writer(&args.repo)(f),
        },
    )?
    .single()?;
    if !args.quiet {
        out(&format!("'/{path}' unlocked by user '{}'.\n", args.user))?;
    }
    Ok(())
}

pub fn lslocks(args: LslocksArgs) -> Result<()> {
    if args.paths.len() > 1 {
        return Err(arg_error(
            code::CL_ARG_PARSING_ERROR,
            "Too many arguments given",
        ));
    }
    let path = relpath(args.paths.first().map(String::as_str).unwrap_or("/"));
    let repo = match &args.cluster {
        Some(file) => {
            let name = super::cluster_name(&args.repo)?;
            std::sync::Arc::new(crate::cluster::open(file, name)?)
                as std::sync::Arc<dyn svelto_fs::ReadRepo>
        }
        None => open(&args.repo)?,
    };
    let mut text = String::new();
    for lock in locks::get_locks(&*repo, &path, None)? {
        let human = |d: &str| crate::localtime::human_date(d).unwrap_or_else(|| d.to_string());
        let comment = lock.comment.as_deref().unwrap_or("");
        let lines = lock
            .comment
            .as_ref()
            .map_or(0, |c| c.matches('\n').count() + 1);
        text.push_str(&format!(
            "Path: /{}\nUUID Token: {}\nOwner: {}\nCreated: {}\nExpires: {}\nComment ({lines} {}):\n{comment}\n\n",
            lock.path,
            lock.token,
            lock.owner,
            human(&lock.created),
            lock.expires.as_deref().map(human).unwrap_or_default(),
            if lines == 1 { "line" } else { "lines" },
        ));
    }
    out(&text)
}

pub fn rmlocks(args: RmlocksArgs) -> Result<()> {
    if args.paths.is_empty() {
        return Err(arg_error(
            code::CL_ARG_PARSING_ERROR,
            "No paths to unlock provided",
        ));
    }
    // In a cluster: the repository read through this machine's cache, and one writer
    // (the lease taken once) for every path.
    let (repo, cluster_writer) = match &args.cluster {
        Some(file) => {
            let name = super::cluster_name(&args.repo)?;
            let repo = std::sync::Arc::new(crate::cluster::open(file, name)?)
                as std::sync::Arc<dyn svelto_fs::ReadRepo>;
            let writer = crate::cluster::writer(file, name)?;
            (repo, Some(std::cell::RefCell::new(writer)))
        }
        None => (open(&args.repo)?, None),
    };
    // svnadmin removes the locks as the user running it.
    let user = std::env::var("USER")
        .ok()
        .filter(|u| !u.is_empty())
        .unwrap_or_else(|| "administrator".to_string());
    for arg in &args.paths {
        let path = relpath(arg);
        let result = (|| -> Result<bool> {
            if locks::get_lock(&*repo, &path)?.is_none() {
                return Ok(false);
            }
            let targets = [UnlockTarget {
                path: path.clone(),
                token: None,
            }];
            let done = match &cluster_writer {
                Some(writer) => locks::unlock_many_with(
                    &*repo,
                    None,
                    Some(&user),
                    true,
                    &targets,
                    |f: super::WriterBody<'_>| f(&mut *writer.borrow_mut()),
                )?,
                None => locks::unlock_many_with(
                    &*repo,
                    None,
                    Some(&user),
                    true,
                    &targets,
                    with_writer(&args.repo),
                )?,
            };
            done.single()?;
            Ok(true)
        })();
        match result {
            Ok(true) if !args.quiet => out(&format!("Removed lock on '/{path}'.\n"))?,
            Ok(false) if !args.quiet => out(&format!("Path '/{path}' isn't locked.\n"))?,
            Ok(_) => {}
            // Reported, and on to the next path, as svnadmin does.
            Err(e) => super::report(&e),
        }
    }
    Ok(())
}
