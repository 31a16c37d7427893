//! `svelto admin hotcopy` and `freeze`: the backup tools (svnadmin's contracts).

use anyhow::{Context, Result};
use clap::Args;
use std::ffi::OsString;
use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::Command;

use super::{admin_error, arg_error, env, local, svn_error};
use svelto_core::code;

#[derive(Args)]
pub struct HotcopyArgs {
    /// The repository's directory; with --cluster, its name in the cluster.
    pub repo: PathBuf,
    /// Copy repository REPO of this cluster (docs/cluster.md) into a new repository on
    /// this machine, at the head the cluster has now (with --incremental, bring an earlier
    /// copy in NEW_PATH up to it).
    #[arg(long, value_name = "FILE")]
    pub cluster: Option<PathBuf>,
    /// Where the copy goes (NEW_REPOS_PATH).
    #[arg(value_name = "NEW_PATH")]
    pub new_repo: Option<PathBuf>,
    /// Copy only what the destination (an earlier copy) lacks.
    #[arg(long)]
    pub incremental: bool,
    /// Accepted for svnadmin's scripts (Berkeley DB only: nothing to clean).
    #[arg(long)]
    pub clean_logs: bool,
    #[arg(short, long)]
    pub quiet: bool,
}

pub fn run(args: HotcopyArgs) -> Result<()> {
    let Some(new_repo) = &args.new_repo else {
        return Err(arg_error(
            code::CL_INSUFFICIENT_ARGS,
            "Not enough arguments",
        ));
    };
    if let Some(file) = &args.cluster {
        return hotcopy_cluster(file, &args.repo, new_repo, args.incremental, args.quiet);
    }
    let youngest = super::open(&args.repo)?.youngest();
    let bar = super::progress::Progress::revisions("hotcopy", 0, youngest, args.quiet);
    svelto_admin::hotcopy(
        local(),
        &env(),
        &args.repo,
        new_repo,
        args.incremental,
        args.quiet,
        &mut super::progress::Above(&bar, std::io::stdout().lock()),
        &mut |rev| bar.revision(rev),
    )
    .map_err(admin_error)?;
    bar.finish();
    Ok(())
}

/// Writes `bytes` as `dir/name` (temporary file, fsync, rename).
fn write_file(dir: &std::path::Path, name: &str, bytes: &[u8]) -> Result<()> {
    let (tmp, dst) = (dir.join(format!("{name}.hotcopy.tmp")), dir.join(name));
    let write = || -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, &dst)
    };
    write().with_context(|| format!("writing {}", dst.display()))
}

/// `hotcopy --cluster FILE NAME NEW_PATH`: a new local repository (conf/ and hooks/ as
/// `svelto admin create` makes them) whose `db/` holds the cluster repository's files as
/// this machine's cache has them at the head (the cache is the local format: the five
/// files below the head's lengths never change), its UUID, and its lock table from etcd.
fn hotcopy_cluster(
    file: &std::path::Path,
    repo: &std::path::Path,
    new_repo: &std::path::Path,
    incremental: bool,
    quiet: bool,
) -> Result<()> {
    if incremental && new_repo.exists() {
        return hotcopy_cluster_incremental(file, repo, new_repo, quiet);
    }
    if new_repo.exists() {
        // svnadmin's answer for an existing destination (APR's EEXIST).
        return Err(svn_error(
            17,
            format!(
                "Can't create directory '{}': File exists",
                new_repo.display()
            ),
        ));
    }
    let name = super::cluster_name(repo)?;
    let cluster = crate::cluster::open(file, name)?;
    let uuid = svelto_fs::ReadRepo::uuid(&cluster)?;
    let locks = svelto_fs::ReadRepo::locks(&cluster)?;
    // db/current as the cache has it now (at least the head read when it was opened).
    let cache_db = cluster.cache_dir().join("db");
    let cur = svelto_store::Repo::open(cluster.cache_dir())?.current();
    let svelto = std::env::current_exe()
        .ok()
        .and_then(|p| p.to_str().map(str::to_owned))
        .unwrap_or_else(|| svelto_repos::PACKAGED_SVELTO.to_owned());
    svelto_repos::create_for(
        crate::local_backend(),
        new_repo,
        &uuid,
        &svelto_core::svn_date_now(),
        &svelto,
    )
    .with_context(|| format!("creating repository '{}'", new_repo.display()))?;
    let db = new_repo.join("db");
    for (part, len) in ["data", "revs", "meta", "dedup", "revprops"]
        .iter()
        .zip(cur.lens)
    {
        let from = cache_db.join(part);
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(
            &mut std::io::Read::take(
                std::fs::File::open(&from)
                    .with_context(|| format!("opening {}", from.display()))?,
                len,
            ),
            &mut bytes,
        )
        .with_context(|| format!("reading {}", from.display()))?;
        if bytes.len() as u64 != len {
            anyhow::bail!(
                "{} has {} bytes, fewer than the {len} its db/current names",
                from.display(),
                bytes.len()
            );
        }
        write_file(&db, part, &bytes)?;
    }
    if !locks.locks().is_empty() {
        write_file(
            &db,
            "locks",
            svelto_store::encode_lock_table(locks.locks()).as_bytes(),
        )?;
    }
    write_file(&db, "current", cur.render().as_bytes())?;
    if !quiet {
        let mut out = std::io::stdout().lock();
        for rev in 0..=cur.youngest {
            writeln!(out, "* Copied revision {rev}.")?;
        }
    }
    Ok(())
}

/// How many bytes below an earlier copy's end of each file `hotcopy --incremental
/// --cluster` compares with the cluster's: the local engine only appends, so a copy changed
/// since it was made (a commit, a revision property change) differs there.
const COMPARED_TAIL: u64 = 1 << 20;

/// `hotcopy --incremental --cluster FILE NAME PATH` where PATH holds an earlier copy: the
/// bytes the cluster's five files gained since (this machine's cache, caught up with the
/// head) are appended to the copy's, then its `db/current` replaced (the commit point, as
/// a local commit's), and its lock table made etcd's. The copy must be of this repository
/// (same UUID) and unchanged since (its files a prefix of the cluster's: their last MiB
/// below the copy's `db/current` compared); its write lock is held meanwhile.
fn hotcopy_cluster_incremental(
    file: &std::path::Path,
    repo: &std::path::Path,
    new_repo: &std::path::Path,
    quiet: bool,
) -> Result<()> {
    use std::os::unix::fs::FileExt;
    let name = super::cluster_name(repo)?;
    let copy = super::open(new_repo)?;
    let cluster = crate::cluster::open(file, name)?;
    let uuid = svelto_fs::ReadRepo::uuid(&cluster)?;
    let copy_uuid = copy.uuid()?;
    if copy_uuid != uuid {
        return Err(svn_error(
            code::RA_UUID_MISMATCH,
            format!(
                "'{}' is not a copy of cluster repository '{name}': its UUID is {copy_uuid}, \
                 the cluster repository's {uuid}",
                new_repo.display()
            ),
        ));
    }
    let locks = svelto_fs::ReadRepo::locks(&cluster)?;
    let cache_db = cluster.cache_dir().join("db");
    let cur = svelto_store::Repo::open(cluster.cache_dir())?.current();
    let db = new_repo.join("db");
    let (lock, lock_path) = svelto_store::Writer::lock_file(&db)?;
    match lock.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => anyhow::bail!(
            "'{}' is in use: a writer holds {}",
            new_repo.display(),
            lock_path.display()
        ),
        Err(std::fs::TryLockError::Error(e)) => {
            return Err(e).with_context(|| format!("locking {}", lock_path.display()))
        }
    }
    // Read again under the lock.
    let had = svelto_store::Repo::open(new_repo)?.current();
    let diverged = |what: String| {
        anyhow::anyhow!(
            "'{}' is not an unchanged earlier copy of cluster repository '{name}' ({what}): \
             copy into a new directory",
            new_repo.display()
        )
    };
    if had.youngest > cur.youngest {
        return Err(diverged(format!(
            "it has r{}, the cluster r{}",
            had.youngest, cur.youngest
        )));
    }
    let parts = ["data", "revs", "meta", "dedup", "revprops"];
    let mut files = Vec::with_capacity(parts.len());
    for (i, part) in parts.iter().enumerate() {
        let (from_path, to_path) = (cache_db.join(part), db.join(part));
        let (start, end) = (had.lens[i], cur.lens[i]);
        if start > end {
            return Err(diverged(format!(
                "its db/{part} has {start} bytes, the cluster's {end}"
            )));
        }
        let from = std::fs::File::open(&from_path)
            .with_context(|| format!("opening {}", from_path.display()))?;
        let to = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&to_path)
            .with_context(|| format!("opening {}", to_path.display()))?;
        let tail = start.min(COMPARED_TAIL);
        let (mut ours, mut theirs) = (vec![0u8; tail as usize], vec![0u8; tail as usize]);
        to.read_exact_at(&mut ours, start - tail)
            .with_context(|| format!("reading {}", to_path.display()))?;
        from.read_exact_at(&mut theirs, start - tail)
            .with_context(|| format!("reading {}", from_path.display()))?;
        if ours != theirs {
            return Err(diverged(format!(
                "its db/{part} differs from the cluster's below byte {start}"
            )));
        }
        files.push((from, from_path, to, to_path, start, end));
    }
    for (from, from_path, to, to_path, start, end) in &files {
        // Past db/current: what a local writer that died left, cut off first.
        to.set_len(*start)
            .with_context(|| format!("truncating {}", to_path.display()))?;
        let mut at = *start;
        let mut buf = vec![0u8; 1 << 20];
        while at < *end {
            let n = (*end - at).min(buf.len() as u64) as usize;
            from.read_exact_at(&mut buf[..n], at)
                .with_context(|| format!("reading {}", from_path.display()))?;
            to.write_all_at(&buf[..n], at)
                .with_context(|| format!("writing {}", to_path.display()))?;
            at += n as u64;
        }
        to.sync_data()
            .with_context(|| format!("syncing {}", to_path.display()))?;
    }
    if locks.locks().is_empty() {
        match std::fs::remove_file(db.join("locks")) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(e).with_context(|| format!("removing {}", db.join("locks").display()))
            }
            _ => {}
        }
    } else {
        write_file(
            &db,
            "locks",
            svelto_store::encode_lock_table(locks.locks()).as_bytes(),
        )?;
    }
    write_file(&db, "current", cur.render().as_bytes())?;
    std::fs::File::open(&db)
        .and_then(|d| d.sync_all())
        .with_context(|| format!("syncing {}", db.display()))?;
    drop(lock);
    if !quiet {
        let mut out = std::io::stdout().lock();
        for rev in had.youngest + 1..=cur.youngest {
            writeln!(out, "* Copied revision {rev}.")?;
        }
    }
    Ok(())
}

#[derive(Args)]
pub struct FreezeArgs {
    /// The repository (svnadmin's form: then the program and its arguments).
    pub repos: Vec<PathBuf>,
    /// After `--`: the program and its arguments.
    #[arg(last = true)]
    pub program: Vec<OsString>,
    /// Read the repository paths from FILE, one a line.
    #[arg(short = 'F', long = "file", value_name = "FILE")]
    pub file: Option<PathBuf>,
}

/// `freeze REPO -- PROGRAM [ARG...]` or `freeze -F FILE -- PROGRAM [ARG...]`: runs the
/// program with the repositories' writes held and exits with its exit code (svnadmin).
/// Several repositories before `--` are all frozen when each is a repository; otherwise,
/// as with svnadmin, the words after the first are the program.
pub fn freeze(args: FreezeArgs) -> Result<()> {
    let FreezeArgs {
        repos,
        program,
        file,
    } = args;
    let words = |v: &[PathBuf]| -> Vec<OsString> { v.iter().map(|p| p.clone().into()).collect() };
    let (paths, program): (Vec<PathBuf>, Vec<OsString>) = match file {
        Some(f) => {
            let text = std::fs::read_to_string(&f)
                .with_context(|| format!("Can't open file '{}'", f.display()))?;
            let paths = text
                .split(['\r', '\n'])
                .filter(|l| !l.is_empty())
                .map(PathBuf::from)
                .collect();
            (paths, [words(&repos), program].concat())
        }
        // `freeze -- REPO PROGRAM [ARG...]`: svnadmin takes the first word after `--` as
        // the repository.
        None if repos.is_empty() && program.len() > 1 => {
            (vec![PathBuf::from(&program[0])], program[1..].to_vec())
        }
        None => {
            let Some(first) = repos.first() else {
                return Err(svn_error(
                    code::CL_ARG_PARSING_ERROR,
                    "Repository argument required",
                ));
            };
            if !program.is_empty()
                && repos.len() > 1
                && repos.iter().all(|r| local().is_repository(r))
            {
                (repos, program)
            } else {
                (vec![first.clone()], [words(&repos[1..]), program].concat())
            }
        }
    };
    let Some((name, rest)) = program.split_first() else {
        return Err(arg_error(code::CL_ARG_PARSING_ERROR, "No program provided"));
    };
    let status = svelto_repos::freeze(local(), &paths, || Command::new(name).args(rest).status())?;
    let code = match status {
        Ok(s) => match (s.code(), s.signal()) {
            (Some(code), _) => code,
            (None, sig) => {
                return Err(svn_error(
                    code::EXTERNAL_PROGRAM,
                    format!(
                        "Process '{}' failed (signal {})",
                        name.to_string_lossy(),
                        sig.unwrap_or(0)
                    ),
                ))
            }
        },
        Err(e) => {
            // svnadmin's child reports this itself (APR's words, no "svnadmin:" prefix).
            let text = e.to_string();
            let text = text.split(" (os error").next().unwrap_or(&text);
            let _ = write!(
                std::io::stderr(),
                "exec of '{}' failed: {text}",
                name.to_string_lossy()
            );
            255
        }
    };
    if code != 0 {
        let _ = std::io::stdout().flush();
        std::process::exit(code);
    }
    Ok(())
}
