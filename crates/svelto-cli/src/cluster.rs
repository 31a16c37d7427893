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

/// `svelto admin create --cluster FILE NAME`: repository NAME in the cluster, with a fresh
/// UUID and revision 0, opened once through this machine's cache.
pub fn create(file: &Path, name: &str) -> Result<()> {
    let config = config(file)?;
    check_name(name)?;
    let cache = config.cache_dir.join(name);
    let front_end = config.front_end.clone();
    let cluster = svelto_cluster::Cluster::connect(config.cluster)
        .with_context(|| format!("connecting to the cluster of '{}'", file.display()))?;
    if let Ok(Some(uuid)) = cluster.repository(name).uuid() {
        anyhow::bail!("repository '{name}' already exists in the cluster (UUID {uuid})");
    }
    let uuid = uuid::Uuid::new_v4().to_string();
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
