//! `svelto admin create REPO`.

use anyhow::{Context, Result};
use clap::Args;
use std::path::{Path, PathBuf};

use super::{svn_error, SvnError};
use svelto_core::code;

#[derive(Args)]
pub struct CreateArgs {
    /// The repository's directory; with --cluster, its name in the cluster.
    pub repo: PathBuf,
    /// Create the repository in this cluster (docs/cluster.md) instead of on this machine.
    #[arg(long, value_name = "FILE")]
    pub cluster: Option<PathBuf>,
    /// With --cluster: the repository's UUID (a fresh one without it). A cluster
    /// repository's UUID is written at its creation (`setuuid` refuses on a cluster), so a
    /// repository moved into the cluster keeps its UUID by naming it here.
    #[arg(long, value_name = "UUID", requires = "cluster")]
    pub uuid: Option<String>,
}

pub fn run(args: CreateArgs) -> Result<()> {
    let CreateArgs {
        repo,
        cluster,
        uuid,
    } = args;
    if let Some(file) = cluster {
        let name = repo
            .to_str()
            .with_context(|| format!("the repository name '{}' is not UTF-8", repo.display()))?;
        return crate::cluster::create(&file, name, uuid.as_deref());
    }
    refuse_existing(&repo)?;
    let uuid = uuid::Uuid::new_v4().to_string();
    // Hook templates call the binary that made the repository (the packaged one when it
    // cannot say where it is).
    let svelto = std::env::current_exe()
        .ok()
        .and_then(|p| p.to_str().map(str::to_owned))
        .unwrap_or_else(|| svelto_repos::PACKAGED_SVELTO.to_owned());
    svelto_repos::create_for(
        crate::local_backend(),
        &repo,
        &uuid,
        &svelto_core::svn_date_now(),
        &svelto,
    )
    .with_context(|| format!("creating repository '{}'", repo.display()))
}

/// A repository as Subversion recognizes one when it looks for a repository's root
/// (`svn_repos_find_root_path`): a `format` file and a `db` directory, Svelto's or FSFS's.
fn is_repository(path: &Path) -> bool {
    path.join("format").is_file() && path.join("db").is_dir()
}

/// svnadmin's refusals: a repository, or a directory inside one (E165002, absolute
/// paths), or a directory that is not empty (E200011, the path as given).
fn refuse_existing(repo: &Path) -> Result<()> {
    let abs = std::path::absolute(repo).unwrap_or_else(|_| repo.to_path_buf());
    if is_repository(&abs) {
        return Err(svn_error(
            code::REPOS_BAD_ARGS,
            format!("'{}' is an existing repository", abs.display()),
        ));
    }
    if let Some(root) = abs.ancestors().skip(1).find(|a| is_repository(a)) {
        return Err(svn_error(
            code::REPOS_BAD_ARGS,
            format!(
                "'{}' is a subdirectory of an existing repository rooted at '{}'",
                abs.display(),
                root.display()
            ),
        ));
    }
    let non_empty = std::fs::read_dir(repo).is_ok_and(|mut d| d.next().is_some());
    if non_empty {
        let err = svn_error(
            code::DIR_NOT_EMPTY,
            format!("'{}' exists and is non-empty", repo.display()),
        );
        return Err(err
            .context(SvnError {
                code: code::DIR_NOT_EMPTY,
                message: "Could not create top-level directory".into(),
            })
            .context(SvnError {
                code: code::DIR_NOT_EMPTY,
                message: "Repository creation failed".into(),
            }));
    }
    Ok(())
}
