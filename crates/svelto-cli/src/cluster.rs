//! `--cluster FILE`: the front end's cluster file (docs/cluster.md, "Front end
//! configuration") for `svelto serve` and `svelto admin create`.

use anyhow::{Context, Result};
use std::path::Path;
use std::time::{Duration, Instant};
use svelto_cluster::{ClusterBackend, ClusterRepo, ClusterWriter, FrontEndConfig};

/// Reads the cluster file `file`, taking credentials from the environment when it names
/// no credentials file.
pub fn config(file: &Path) -> Result<FrontEndConfig> {
    let file =
        std::path::absolute(file).with_context(|| format!("cluster file '{}'", file.display()))?;
    Ok(FrontEndConfig::load(&file, &|name| {
        std::env::var(name).ok()
    })?)
}

/// The storage backend of a server with root `root` serving the cluster `file` names.
pub fn backend(file: &Path, root: &Path) -> Result<ClusterBackend> {
    let config = config(file)?;
    ClusterBackend::connect(root, config)
        .with_context(|| format!("connecting to the cluster of '{}'", file.display()))
}

/// Repository NAME of the cluster `file` names, read through this machine's cache
/// (`CACHE/NAME`), for `svelto admin SUBCOMMAND --cluster FILE NAME`.
pub fn open(file: &Path, name: &str) -> Result<ClusterRepo> {
    let config = config(file)?;
    check_name(name)?;
    let cache = config.cache_dir.join(name);
    let cluster = svelto_cluster::Cluster::connect(config.cluster)
        .with_context(|| format!("connecting to the cluster of '{}'", file.display()))?;
    ClusterRepo::open(&cluster, name, &cache)
        .with_context(|| format!("opening repository '{name}' in the cluster"))
}

/// The writer of repository NAME of the cluster `file` names: waits for the writer's
/// lease as long as the file's `writer-wait` says, and keeps it until dropped.
pub fn writer(file: &Path, name: &str) -> Result<ClusterWriter> {
    let config = config(file)?;
    let reader = open(file, name)?;
    ClusterWriter::open(&reader, &config.front_end, config.writer_wait)
        .with_context(|| format!("taking the writer's lease of repository '{name}'"))
}

/// The repository a cluster front end's directory `dir` stands for (`ROOT/NAME`, the
/// `REPOS` its hooks are given; the front ends serving it recorded themselves in its
/// `svelto_cluster::FRONT_ENDS_FILE`), for `svelto look`: with `txn`, that transaction
/// read in the cache of the front end that staged it (a pre-commit hook's); without, the
/// cluster repository at its head (fenced, its locks etcd's) through the first front end's
/// cluster file and cache. None when `dir` is no such directory.
#[allow(clippy::type_complexity)]
pub fn open_served(
    dir: &Path,
    txn: Option<&str>,
    env: &std::sync::Arc<dyn svelto_core::Env>,
) -> Option<
    svelto_fs::Result<(
        std::sync::Arc<dyn svelto_fs::ReadRepo>,
        Option<svelto_core::Revnum>,
    )>,
> {
    let served = match svelto_cluster::front_ends_of(dir) {
        Ok(Some(served)) => served,
        Ok(None) => return None,
        Err(err) => {
            return Some(Err(svelto_fs::StoreError::Io {
                context: format!(
                    "reading {}",
                    dir.join(svelto_cluster::FRONT_ENDS_FILE).display()
                ),
                err,
            }))
        }
    };
    let unavailable = |reason: String| svelto_fs::StoreError::Unavailable {
        what: format!("the cluster repository of {}", dir.display()),
        reason,
    };
    if served.is_empty() {
        return Some(Err(unavailable(format!(
            "{} names no front end",
            svelto_cluster::FRONT_ENDS_FILE
        ))));
    }
    let mut failures = Vec::new();
    let mut caches = Vec::new();
    for one in &served {
        match config(&one.file) {
            Ok(c) => caches.push((one, c.cache_dir.join(&one.name))),
            Err(e) => failures.push(format!("{e:#}")),
        }
    }
    Some(match txn {
        Some(name) => {
            // Staged by the front end that received the commit, in its cache.
            let staged = caches.iter().find(|(_, cache)| {
                let txns = cache.join("db").join("txns");
                txns.join(format!("{name}.txn")).join("current").is_file()
                    || txns.join(name).is_file()
            });
            match (staged, caches.first()) {
                (Some((_, cache)), _) | (None, Some((_, cache))) => crate::local_backend()
                    .open_txn(cache, name, env)
                    .map(|(repo, rev)| (repo, Some(rev))),
                (None, None) => Err(unavailable(failures.join("; "))),
            }
        }
        None => {
            let mut opened = None;
            for (one, _) in &caches {
                match open(&one.file, &one.name) {
                    Ok(repo) => {
                        opened = Some(repo);
                        break;
                    }
                    Err(e) => failures.push(format!("{e:#}")),
                }
            }
            match opened {
                Some(repo) => {
                    let repo: std::sync::Arc<dyn svelto_fs::ReadRepo> = std::sync::Arc::new(repo);
                    Ok((repo, None))
                }
                None => Err(unavailable(failures.join("; "))),
            }
        }
    })
}

/// A cluster repository name: NAME or NAME/NAME..., without empty, '.' or '..' parts.
fn check_name(name: &str) -> Result<()> {
    if name.is_empty()
        || name
            .split('/')
            .any(|p| p.is_empty() || p == "." || p == "..")
    {
        anyhow::bail!(
            "'{name}' is not a repository name (NAME or NAME/NAME..., no empty, '.' or '..' parts)"
        );
    }
    Ok(())
}

/// `svelto admin create --cluster FILE NAME [--uuid UUID]`: repository NAME in the
/// cluster, with `uuid` (a fresh UUID when None) and revision 0, opened once through this
/// machine's cache.
pub fn create(file: &Path, name: &str, uuid: Option<&str>) -> Result<()> {
    let uuid = match uuid {
        Some(text) => uuid::Uuid::parse_str(text)
            .ok()
            .filter(|_| text.len() == 36)
            .with_context(|| format!("'{text}' is not a UUID (8-4-4-4-12 hexadecimal digits)"))?
            .hyphenated()
            .to_string(),
        None => uuid::Uuid::new_v4().to_string(),
    };
    let config = config(file)?;
    check_name(name)?;
    let cache = config.cache_dir.join(name);
    let front_end = config.front_end.clone();
    let cluster = svelto_cluster::Cluster::connect(config.cluster)
        .with_context(|| format!("connecting to the cluster of '{}'", file.display()))?;
    if let Ok(Some(uuid)) = cluster.repository(name).uuid() {
        anyhow::bail!("repository '{name}' already exists in the cluster (UUID {uuid})");
    }
    let mut r0 = svelto_core::PropList::new();
    r0.insert(
        b"svn:date".to_vec(),
        svelto_core::svn_date_now().into_bytes(),
    );
    let env = svelto_core::SystemEnv;
    // An object store that just started may refuse its first PUTs for a while (weed grows
    // its first volume): tried again for up to a minute.
    let started = Instant::now();
    loop {
        match ClusterRepo::create(&cluster, name, &cache, &uuid, &r0, &front_end, &env) {
            Ok(_) => return Ok(()),
            Err(svelto_fs::StoreError::Unavailable { .. })
                if started.elapsed() < Duration::from_secs(60) =>
            {
                std::thread::sleep(Duration::from_millis(500));
            }
            Err(e) => {
                return Err(e)
                    .with_context(|| format!("creating repository '{name}' in the cluster"))
            }
        }
    }
}
