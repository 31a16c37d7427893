//! `svelto admin SUBCOMMAND ROOT/NAME` where `ROOT/NAME` is a cluster front end's directory
//! of a repository (its `conf/` and `hooks/`, no `db/`: the `REPOS` its hooks are given;
//! docs/cluster.md, "Operations"): the front ends serving it recorded themselves in its
//! `cluster-front-ends` file, as `svelto look` finds them. The subcommands that work on a
//! cluster act on the cluster repository through the first listed front end's cluster
//! file and cache, as `--cluster FILE NAME` would (the revision property changes running
//! that directory's hooks, as the front end runs them); the others, which only make sense
//! on one machine, refuse, naming the cluster repository and the `--cluster` form.

use anyhow::Result;
use std::path::{Path, PathBuf};
use svelto_core::code;

use super::{svn_error, AdminCommand};

/// The cluster repository a front end's directory `dir` stands for: its name and the
/// cluster file of the first listed front end whose file is still there. None when `dir`
/// is a local repository or no front end's directory.
pub fn served(dir: &Path) -> Result<Option<(PathBuf, String)>> {
    if dir.join("db").join("format").exists() || !dir.is_dir() {
        return Ok(None);
    }
    let listed = svelto_cluster::front_ends_of(dir).map_err(|e| {
        svn_error(
            code::BASE,
            format!(
                "reading '{}': {}",
                dir.join(svelto_cluster::FRONT_ENDS_FILE).display(),
                super::os_message(&e)
            ),
        )
    })?;
    let Some(listed) = listed else {
        return Ok(None);
    };
    // A stale line of a removed front end is skipped when its cluster file is gone.
    match listed.iter().find(|one| one.file.is_file()) {
        Some(one) => Ok(Some((one.file.clone(), one.name.clone()))),
        None => Err(svn_error(
            code::BASE,
            format!(
                "'{}' is a cluster front end's directory, but its {} names no front end \
                 whose cluster file exists",
                dir.display(),
                svelto_cluster::FRONT_ENDS_FILE
            ),
        )),
    }
}

/// Turns `repo` (with `cluster` unset) into `--cluster FILE NAME` when it is a front end's
/// directory; the directory when it was one.
fn follow(repo: &mut PathBuf, cluster: &mut Option<PathBuf>) -> Result<Option<PathBuf>> {
    if cluster.is_some() {
        return Ok(None);
    }
    let Some((file, name)) = served(repo)? else {
        return Ok(None);
    };
    let dir = std::mem::replace(repo, PathBuf::from(name));
    *cluster = Some(file);
    Ok(Some(dir))
}

/// svnadmin's name of a subcommand that refuses a front end's directory.
fn refuses(cmd: &AdminCommand) -> Option<(&'static str, Vec<&Path>)> {
    use AdminCommand as C;
    fn one<'a>(name: &'static str, repo: &'a Path) -> Option<(&'static str, Vec<&'a Path>)> {
        Some((name, vec![repo]))
    }
    match cmd {
        C::Create(a) if a.cluster.is_none() => one("create", &a.repo),
        C::Setuuid(a) => one("setuuid", &a.repo),
        C::DumpRevprops(a) => one("dump-revprops", &a.repo),
        C::LoadRevprops(a) => one("load-revprops", &a.repo),
        C::Freeze(a) => Some(("freeze", a.repos.iter().map(PathBuf::as_path).collect())),
        C::Lstxns(a) => one("lstxns", &a.repo),
        C::Rmtxns(a) => one("rmtxns", &a.repo),
        C::Recover(a) => one("recover", &a.repo),
        C::Upgrade(a) => one("upgrade", &a.repo),
        C::Pack(a) => one("pack", &a.repo),
        C::BuildRepcache(a) => one("build-repcache", &a.repo),
        C::Deltify(a) => one("deltify", &a.repo),
        C::RevSize(a) => one("rev-size", &a.repo),
        C::ListDblogs(a) => one("list-dblogs", &a.repo),
        C::ListUnusedDblogs(a) => one("list-unused-dblogs", &a.repo),
        C::Crashtest(a) => one("crashtest", &a.repo),
        _ => None,
    }
}

/// Makes a subcommand given a front end's directory act on its cluster repository, or
/// refuses it (see the module's comment). Subcommands given a local repository, or
/// `--cluster`, are left as they are.
pub fn resolve(cmd: &mut AdminCommand) -> Result<()> {
    use AdminCommand as C;
    if let Some((sub, dirs)) = refuses(cmd) {
        for dir in dirs {
            if let Some((file, name)) = served(dir)? {
                return Err(svn_error(
                    code::UNSUPPORTED_FEATURE,
                    format!(
                        "'{}' is a front end's directory of cluster repository '{name}' \
                         (cluster file '{}'): 'svelto admin {sub}' works on one machine's \
                         repository only. On the cluster: dump, load, verify, info, lock, \
                         unlock, lslocks, rmlocks, setlog, setrevprop, delrevprop and \
                         hotcopy, given this directory or '--cluster {} {name}'",
                        dir.display(),
                        file.display(),
                        file.display()
                    ),
                ));
            }
        }
        return Ok(());
    }
    match cmd {
        C::Dump(a) => {
            follow(&mut a.repo, &mut a.cluster)?;
        }
        // A load asking for commit hooks refuses in load.rs: a cluster has none to run.
        C::Load(a) => {
            follow(&mut a.repo, &mut a.cluster)?;
        }
        C::Verify(a) => a.front_end_dir = follow(&mut a.repo, &mut a.cluster)?,
        C::Info(a) => {
            follow(&mut a.repo, &mut a.cluster)?;
        }
        C::Hotcopy(a) => {
            follow(&mut a.repo, &mut a.cluster)?;
        }
        C::Lslocks(a) => {
            follow(&mut a.repo, &mut a.cluster)?;
        }
        C::Rmlocks(a) => {
            follow(&mut a.repo, &mut a.cluster)?;
        }
        C::Lock(a) => a.front_end_dir = follow(&mut a.repo, &mut a.cluster)?,
        C::Unlock(a) => a.front_end_dir = follow(&mut a.repo, &mut a.cluster)?,
        C::Setlog(a) => a.front_end_dir = follow(&mut a.repo, &mut a.cluster)?,
        C::Setrevprop(a) => a.opts.front_end_dir = follow(&mut a.repo, &mut a.opts.cluster)?,
        C::Delrevprop(a) => a.opts.front_end_dir = follow(&mut a.repo, &mut a.opts.cluster)?,
        _ => {}
    }
    Ok(())
}
