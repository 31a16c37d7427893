//! A front end's view of the cluster: its configuration file (`svelto serve --cluster
//! FILE`, docs/cluster.md "Front end configuration") and the storage seam's [`Backend`]
//! that maps the repositories under a server's root to the cluster's.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use svelto_core::Env;
use svelto_fs::{Backend, ReadRepo, Result, StoreError, WriteRepo};

use crate::backend::{Hold, LogSink};
use crate::post_commit::{PostCommitRunner, PostCommitStats, PostCommits};
use crate::{Cluster, ClusterConfig, ClusterError, ClusterRepo, ClusterWriter};

/// How long `is_repository`'s answer from etcd is reused.
const KNOWN_FOR: Duration = Duration::from_secs(1);
/// How long a front end keeps the writer lease after its last commit, by default.
const WRITER_IDLE: Duration = Duration::from_millis(200);

/// What a front end's cluster file says.
#[derive(Clone, Debug)]
pub struct FrontEndConfig {
    /// The clients' configuration.
    pub cluster: ClusterConfig,
    /// The directory holding one cache directory per repository (`CACHE/NAME`).
    pub cache_dir: PathBuf,
    /// This front end's writer id (`front-end`, default `HOST-PID`).
    pub front_end: String,
    /// How long a commit waits for another front end's writer lease.
    pub writer_wait: Duration,
    /// How long the writer lease is kept after a commit (`writer-idle-ms`, default 200).
    pub writer_idle: Duration,
    /// Whether each publication's round trips are logged (`log-timings = yes`).
    pub log_timings: bool,
    /// The orphan collector's ages (`gc-min-age`, `txn-max-age`; docs/cluster.md, "Orphans").
    pub gc: crate::GcSettings,
    /// How often the elected front end runs a collection pass (`gc-interval`, default
    /// 3600 s; 0: never).
    pub gc_interval: Duration,
    /// How long a post-commit record of a front end that is gone waits before another
    /// front end claims it and runs its hook (`hook-grace`, default 30 s; docs/cluster.md,
    /// "Hooks").
    pub hook_grace: Duration,
    /// The trust anchors (PEM certificates) a front end checks its peers' certificates
    /// against when it forwards a request of an HTTP transaction over `https://`
    /// (`http-forward-ca`, relative to the file's directory); None: the system's roots and
    /// the front end's own served certificates (docs/cluster.md, "HTTP transactions").
    pub http_forward_ca: Option<PathBuf>,
    /// The name peers' certificates are checked for instead of their advertised hosts
    /// (`http-forward-name`).
    pub http_forward_name: Option<String>,
    /// The cluster file this was read from, as given to [`FrontEndConfig::load`] (what
    /// the front end records in each repository directory it serves: [`FRONT_ENDS_FILE`]).
    pub source: PathBuf,
}

fn config_error(file: &Path, line: usize, what: impl std::fmt::Display) -> ClusterError {
    ClusterError::Config(format!("{}:{line}: {what}", file.display()))
}

/// `key = value` lines (`#` and `;` start comments, `[section]` lines are ignored), with
/// the line each key came from.
fn parse_pairs(
    file: &Path,
    text: &str,
) -> std::result::Result<Vec<(String, String, usize)>, ClusterError> {
    let mut pairs = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty()
            || line.starts_with('#')
            || line.starts_with(';')
            || line.starts_with('[')
        {
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            return Err(config_error(
                file,
                i + 1,
                format!("expected KEY = VALUE, found '{line}'"),
            ));
        };
        pairs.push((
            key.trim().to_ascii_lowercase(),
            value.trim().to_owned(),
            i + 1,
        ));
    }
    Ok(pairs)
}

impl FrontEndConfig {
    /// Reads the cluster file `file`; credentials come from `s3-credentials` (a file in the
    /// AWS shared-credentials format) or else from `AWS_ACCESS_KEY_ID` and
    /// `AWS_SECRET_ACCESS_KEY` (`env` looks a variable up).
    pub fn load(
        file: &Path,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> std::result::Result<FrontEndConfig, ClusterError> {
        let text = std::fs::read_to_string(file)
            .map_err(|e| ClusterError::Config(format!("reading {}: {e}", file.display())))?;
        let pairs = parse_pairs(file, &text)?;
        let get = |key: &str| {
            pairs
                .iter()
                .find(|(k, _, _)| k == key)
                .map(|(_, v, l)| (v.clone(), *l))
        };
        let need = |key: &str| {
            get(key).map(|(v, _)| v).ok_or_else(|| {
                ClusterError::Config(format!("{}: no '{key} = ...' line", file.display()))
            })
        };
        for (key, _, line) in &pairs {
            const KNOWN: [&str; 21] = [
                "etcd",
                "cluster",
                "s3-endpoint",
                "s3-bucket",
                "s3-prefix",
                "s3-region",
                "s3-credentials",
                "cache",
                "front-end",
                "writer-wait",
                "writer-idle-ms",
                "lease-ttl",
                "request-timeout",
                "chunk-bytes",
                "log-timings",
                "gc-interval",
                "gc-min-age",
                "txn-max-age",
                "hook-grace",
                "http-forward-ca",
                "http-forward-name",
            ];
            if !KNOWN.contains(&key.as_str()) {
                return Err(config_error(file, *line, format!("unknown key '{key}'")));
            }
        }
        let etcd: Vec<String> = need("etcd")?
            .split([',', ' '])
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect();
        if etcd.is_empty() {
            return Err(ClusterError::Config(format!(
                "{}: 'etcd' names no endpoint",
                file.display()
            )));
        }
        let name = need("cluster")?;
        if name.is_empty() || name.contains('/') {
            return Err(ClusterError::Config(format!(
                "{}: the cluster name '{name}' must be non-empty and have no '/'",
                file.display()
            )));
        }
        let mut cluster = ClusterConfig::new(
            etcd,
            &format!("/svelto/{name}"),
            &need("s3-endpoint")?,
            &need("s3-bucket")?,
        );
        if let Some((prefix, _)) = get("s3-prefix") {
            cluster.object_prefix = prefix;
        }
        if let Some((region, _)) = get("s3-region") {
            cluster.s3_region = region;
        }
        let seconds = |key: &str| -> std::result::Result<Option<u64>, ClusterError> {
            match get(key) {
                None => Ok(None),
                Some((v, line)) => v.parse::<u64>().map(Some).map_err(|_| {
                    config_error(
                        file,
                        line,
                        format!("'{key}' must be whole seconds, not '{v}'"),
                    )
                }),
            }
        };
        if let Some(ttl) = seconds("lease-ttl")? {
            cluster.lease_ttl_secs = i64::try_from(ttl.max(1)).unwrap_or(i64::MAX);
        }
        if let Some(t) = seconds("request-timeout")? {
            cluster.request_timeout = Duration::from_secs(t.max(1));
        }
        if let Some((v, line)) = get("chunk-bytes") {
            // The multipart upload's parts: S3 and weed refuse a part but the last below
            // 5 MiB (`EntityTooSmall`, at the completion).
            cluster.chunk_bytes =
                v.parse::<u64>()
                    .ok()
                    .filter(|n| *n >= 5 << 20)
                    .ok_or_else(|| {
                        config_error(
                            file,
                            line,
                            format!(
                                "'chunk-bytes' must be a number of bytes, at least 5242880 (5 \
                             MiB, the smallest part of a multipart upload), not '{v}'"
                            ),
                        )
                    })?;
        }
        let defaults = crate::GcSettings::default();
        let gc = crate::GcSettings {
            min_age: seconds("gc-min-age")?
                .map(Duration::from_secs)
                .unwrap_or(defaults.min_age),
            txn_max_age: seconds("txn-max-age")?
                .map(Duration::from_secs)
                .unwrap_or(defaults.txn_max_age),
        };
        // 0 turns the front ends' collector off (`svelto admin gc` still runs a pass).
        let gc_interval = Duration::from_secs(seconds("gc-interval")?.unwrap_or(3600));
        let hook_grace = Duration::from_secs(seconds("hook-grace")?.unwrap_or(30));
        let (access, secret) = match get("s3-credentials") {
            Some((path, line)) => {
                let path = file.parent().unwrap_or(Path::new(".")).join(path);
                let text = std::fs::read_to_string(&path).map_err(|e| {
                    config_error(file, line, format!("reading {}: {e}", path.display()))
                })?;
                let pairs = parse_pairs(&path, &text)?;
                let find = |key: &str| {
                    pairs
                        .iter()
                        .find(|(k, _, _)| k == key)
                        .map(|(_, v, _)| v.clone())
                        .ok_or_else(|| {
                            ClusterError::Config(format!(
                                "{}: no '{key} = ...' line",
                                path.display()
                            ))
                        })
                };
                (find("aws_access_key_id")?, find("aws_secret_access_key")?)
            }
            None => {
                let var = |name: &str| {
                    env(name).ok_or_else(|| {
                        ClusterError::Config(format!(
                            "{}: no 's3-credentials' file and ${name} is not set",
                            file.display()
                        ))
                    })
                };
                (var("AWS_ACCESS_KEY_ID")?, var("AWS_SECRET_ACCESS_KEY")?)
            }
        };
        cluster.s3_access_key = access;
        cluster.s3_secret_key = secret;
        let cache_dir = file.parent().unwrap_or(Path::new(".")).join(need("cache")?);
        let front_end = match get("front-end") {
            Some((id, _)) => id,
            None => format!(
                "{}-{}",
                std::fs::read_to_string("/etc/hostname")
                    .map(|h| h.trim().to_owned())
                    .unwrap_or_else(|_| "localhost".into()),
                std::process::id()
            ),
        };
        let http_forward_ca = get("http-forward-ca")
            .map(|(path, _)| file.parent().unwrap_or(Path::new(".")).join(path));
        let http_forward_name = get("http-forward-name").map(|(name, _)| name);
        let writer_wait = Duration::from_secs(seconds("writer-wait")?.unwrap_or(5));
        let writer_idle = match get("writer-idle-ms") {
            None => WRITER_IDLE,
            Some((v, line)) => Duration::from_millis(v.parse::<u64>().map_err(|_| {
                config_error(
                    file,
                    line,
                    format!("'writer-idle-ms' must be whole milliseconds, not '{v}'"),
                )
            })?),
        };
        let log_timings = match get("log-timings") {
            None => false,
            Some((v, line)) => match v.to_ascii_lowercase().as_str() {
                "yes" | "true" | "on" | "1" => true,
                "no" | "false" | "off" | "0" => false,
                _ => {
                    return Err(config_error(
                        file,
                        line,
                        format!("'log-timings' must be yes or no, not '{v}'"),
                    ))
                }
            },
        };
        Ok(FrontEndConfig {
            cluster,
            cache_dir,
            front_end,
            writer_wait,
            writer_idle,
            log_timings,
            gc,
            gc_interval,
            hook_grace,
            http_forward_ca,
            http_forward_name,
            source: file.to_path_buf(),
        })
    }
}

/// The file in a front end's directory of a repository (`ROOT/NAME`, the `REPOS` its hooks
/// are given) that names the cluster repository and the cluster file of each front end
/// serving it from that directory, one `NAME<TAB>FILE` line each (`#` lines are comments):
/// how `svelto look ROOT/NAME` finds the repository, and a transaction staged in one of
/// those front ends' caches (docs/cluster.md, "Hooks"; docs/formats/cluster.md). Each
/// front end adds its line when it first opens the repository.
pub const FRONT_ENDS_FILE: &str = "cluster-front-ends";

/// One line of [`FRONT_ENDS_FILE`]: a front end's cluster file, and the cluster repository
/// the directory is for that front end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServedBy {
    /// The cluster repository's name.
    pub name: String,
    /// The front end's cluster file (absolute).
    pub file: PathBuf,
}

/// Records in `dir`'s [`FRONT_ENDS_FILE`] that the front end of cluster file `file` serves
/// cluster repository `name` from `dir`, unless it says so already. True when the line
/// was added.
pub fn record_front_end(dir: &Path, name: &str, file: &Path) -> std::io::Result<bool> {
    use std::io::Write;
    let bad = |what: String| std::io::Error::new(std::io::ErrorKind::InvalidInput, what);
    let text = file
        .to_str()
        .ok_or_else(|| bad(format!("{} is not UTF-8", file.display())))?;
    if [name, text].iter().any(|s| s.contains(['\t', '\n', '\r'])) {
        return Err(bad(format!(
            "'{name}' or '{text}' holds a tab or a line break"
        )));
    }
    let path = dir.join(FRONT_ENDS_FILE);
    let wanted = ServedBy {
        name: name.to_owned(),
        file: file.to_path_buf(),
    };
    if let Ok(old) = std::fs::read_to_string(&path) {
        if parse_front_ends(&old).contains(&wanted) {
            return Ok(false);
        }
    }
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)?;
    let mut line = String::new();
    if f.metadata()?.len() == 0 {
        line.push_str(
            "# Written by svelto serve --cluster: the cluster repository this directory is, and\n\
             # the cluster file of each front end serving it from here (NAME<TAB>FILE), for\n\
             # `svelto look` in hook scripts (docs/cluster.md, \"Hooks\").\n",
        );
    }
    line.push_str(&format!("{name}\t{text}\n"));
    // One write of a short line in append mode: lines of processes adding theirs at once
    // do not interleave.
    f.write_all(line.as_bytes())?;
    Ok(true)
}

fn parse_front_ends(text: &str) -> Vec<ServedBy> {
    let mut all: Vec<ServedBy> = Vec::new();
    for line in text.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let Some((name, file)) = line.split_once('\t') else {
            continue;
        };
        let one = ServedBy {
            name: name.to_owned(),
            file: PathBuf::from(file),
        };
        if !all.contains(&one) {
            all.push(one);
        }
    }
    all
}

/// The front ends `dir`'s [`FRONT_ENDS_FILE`] names, in the order they recorded
/// themselves (None when `dir` has no such file).
pub fn front_ends_of(dir: &Path) -> std::io::Result<Option<Vec<ServedBy>>> {
    match std::fs::read_to_string(dir.join(FRONT_ENDS_FILE)) {
        Ok(text) => Ok(Some(parse_front_ends(&text))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// The storage seam's backend over a cluster: the repository in `ROOT/NAME` (what a server
/// with root ROOT serves as NAME) is the cluster repository NAME, read through the cache
/// directory `CACHE/NAME`. `ROOT/NAME` itself holds only what stays per front end: its
/// `conf/` (svnserve.conf, authz, passwd) and `hooks/`.
pub struct ClusterBackend {
    cluster: Arc<Cluster>,
    root: PathBuf,
    config: FrontEndConfig,
    /// `is_repository`'s answers from etcd, by name, and when they were read.
    known: Mutex<HashMap<String, (Instant, bool)>>,
    /// The reading handles opened, by name (a writer catches up through the same one).
    readers: Mutex<HashMap<String, ClusterRepo>>,
    /// Where the front end's log lines go (standard error until `set_log`).
    log: Arc<Mutex<LogSink>>,
    /// The leases of the writers opened, to resign at shutdown.
    holds: Mutex<Vec<(String, Weak<Hold>)>>,
    /// This front end's entry in the member registry, once it joined.
    membership: Mutex<Option<crate::Membership>>,
    /// What the collector's passes on this front end did, for the metrics page.
    gc_stats: Mutex<GcStats>,
    /// Its post-commit records: what its commits record, what its scans claim.
    post_commits: Arc<PostCommits>,
}

/// The orphan collector's counters on one front end (its passes while it was the elected
/// collector), for `svelto serve --metrics-listen` (docs/cluster.md, "Operations").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GcStats {
    /// Passes over a repository that ended.
    pub passes: u64,
    /// Passes over a repository that failed (each logged).
    pub failed_passes: u64,
    /// Objects deleted (`seg/` and `txn/`).
    pub objects_deleted: u64,
    /// Their bytes.
    pub bytes_deleted: u64,
    /// When the last round of passes ended, in microseconds since the epoch (the caller's
    /// clock); None before the first.
    pub last_round_micros: Option<i64>,
}

impl GcStats {
    /// The counters in Prometheus' text exposition format.
    pub fn render(&self) -> String {
        let last = self.last_round_micros.map_or(0, |m| m / 1_000_000);
        format!(
            "# HELP svelto_cluster_gc_passes_total Passes of the orphan collector over a \
             repository on this front end, by outcome.\n\
             # TYPE svelto_cluster_gc_passes_total counter\n\
             svelto_cluster_gc_passes_total{{result=\"ok\"}} {}\n\
             svelto_cluster_gc_passes_total{{result=\"failed\"}} {}\n\
             # HELP svelto_cluster_gc_deleted_objects_total Orphaned objects the collector \
             deleted.\n\
             # TYPE svelto_cluster_gc_deleted_objects_total counter\n\
             svelto_cluster_gc_deleted_objects_total {}\n\
             # HELP svelto_cluster_gc_deleted_bytes_total Bytes of the orphaned objects the \
             collector deleted.\n\
             # TYPE svelto_cluster_gc_deleted_bytes_total counter\n\
             svelto_cluster_gc_deleted_bytes_total {}\n\
             # HELP svelto_cluster_gc_last_round_timestamp_seconds When the collector's last \
             round on this front end ended (0: none yet).\n\
             # TYPE svelto_cluster_gc_last_round_timestamp_seconds gauge\n\
             svelto_cluster_gc_last_round_timestamp_seconds {last}\n",
            self.passes, self.failed_passes, self.objects_deleted, self.bytes_deleted
        )
    }
}

impl ClusterBackend {
    /// The backend of a server whose root is `root`, connected with `config`.
    pub fn connect(root: &Path, config: FrontEndConfig) -> std::result::Result<Self, ClusterError> {
        let cluster = Cluster::connect(config.cluster.clone())?;
        let post_commits = Arc::new(PostCommits::new(&config.front_end, config.hook_grace));
        Ok(ClusterBackend {
            cluster: Arc::new(cluster),
            root: root.to_path_buf(),
            config,
            known: Mutex::default(),
            readers: Mutex::default(),
            log: Arc::new(Mutex::new(Arc::new(|line: &str| eprintln!("{line}")))),
            holds: Mutex::default(),
            membership: Mutex::default(),
            gc_stats: Mutex::default(),
            post_commits,
        })
    }

    /// The orphan collector's counters on this front end.
    pub fn gc_stats(&self) -> GcStats {
        *self.gc_stats.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Registers this front end (its `front-end` id) in the cluster's member registry with
    /// `value` (its addresses), until [`ClusterBackend::leave`] or the process ends (then
    /// after the lease's TTL).
    pub fn join(&self, value: &str) -> std::result::Result<(), ClusterError> {
        let membership = self.cluster.join(&self.config.front_end, value)?;
        self.post_commits.set_lease(membership.lease_handle());
        *self.membership.lock().unwrap_or_else(|e| e.into_inner()) = Some(membership);
        Ok(())
    }

    /// Leaves the member registry (at shutdown).
    pub fn leave(&self) -> std::result::Result<(), ClusterError> {
        let membership = self
            .membership
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        membership.map_or(Ok(()), crate::Membership::leave)
    }

    /// Resigns every writer lease this front end holds (at shutdown, once its running
    /// commits finished: `svelto serve` calls it after the drain), so that another front
    /// end commits at once instead of after the lease's TTL. A commit still running loses
    /// its lease: its publication is refused (never acknowledged). Answers the names of the
    /// repositories whose lease was resigned.
    pub fn resign_writers(&self) -> Vec<String> {
        let holds = std::mem::take(&mut *self.holds.lock().unwrap_or_else(|e| e.into_inner()));
        holds
            .into_iter()
            .filter_map(|(name, hold)| {
                let hold = hold.upgrade()?;
                hold.shut_down().then_some(name)
            })
            .collect()
    }

    /// Sends the backend's log lines (etcd unreachable, reads unfenced) to `log`.
    pub fn set_log(&self, log: LogSink) {
        *self.log.lock().unwrap_or_else(|e| e.into_inner()) = log;
    }

    /// The cluster repository name of `dir`: its path below the root, `/`-separated.
    pub fn name_of(&self, dir: &Path) -> Result<String> {
        let relative = dir.strip_prefix(&self.root).map_err(|_| {
            StoreError::NotARepository(format!(
                "{} (not under the server's root {})",
                dir.display(),
                self.root.display()
            ))
        })?;
        let parts: Option<Vec<&str>> = relative
            .components()
            .map(|c| match c {
                std::path::Component::Normal(s) => s.to_str(),
                _ => None,
            })
            .collect();
        match parts {
            Some(parts) if !parts.is_empty() => Ok(parts.join("/")),
            _ => Err(StoreError::NotARepository(format!(
                "{} (no repository name under {})",
                dir.display(),
                self.root.display()
            ))),
        }
    }

    fn reader(&self, name: &str) -> Result<ClusterRepo> {
        if let Some(r) = self
            .readers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(name)
        {
            return Ok(r.clone());
        }
        let cache = self.config.cache_dir.join(name);
        let dir = self.root.join(name);
        let log = self.log.clone();
        let log_writers = self.log.clone();
        // Hooks run from `dir` with it as REPOS: `svelto look REPOS` finds this front end
        // (and a transaction staged in its cache) through the file.
        if dir.is_dir() {
            if let Err(e) = record_front_end(&dir, name, &self.config.source) {
                let sink = self.log.lock().unwrap_or_else(|e| e.into_inner()).clone();
                sink(&format!(
                    "cluster: {name}: cannot record this front end in {}: {e}; `svelto look` \
                     on that directory will not find it",
                    dir.join(FRONT_ENDS_FILE).display()
                ));
            }
        }
        let repo = ClusterRepo::open(&self.cluster, name, &cache)?
            .with_local_dir(&dir)
            .with_post_commits(self.post_commits.clone())
            .with_log(Arc::new(move |line: &str| {
                let sink = log_writers
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .clone();
                sink(line)
            }))
            .with_unfenced_reads(Arc::new(move |line: &str| {
                let sink = log.lock().unwrap_or_else(|e| e.into_inner()).clone();
                sink(line)
            }));
        self.readers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(name.to_owned(), repo.clone());
        Ok(repo)
    }

    /// How often [`ClusterBackend::collect_if_elected`] is to be called (`gc-interval`;
    /// zero: never).
    pub fn gc_interval(&self) -> Duration {
        self.config.gc_interval
    }

    /// One round of the orphan collector (docs/cluster.md, "Orphans"), at `now_micros`
    /// (microseconds since the epoch, the caller's clock): if this front end is in the
    /// member registry and is (or now becomes) the elected collector, one pass over each
    /// repository of the cluster, each logged (`cluster gc: NAME: ...`, the objects and bytes
    /// deleted). Answers whether it was the collector.
    pub fn collect_if_elected(&self, now_micros: i64) -> bool {
        let sink = self.log.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let elected = {
            let membership = self.membership.lock().unwrap_or_else(|e| e.into_inner());
            let Some(membership) = membership.as_ref() else {
                return false;
            };
            self.cluster
                .elect_collector(membership, &self.config.front_end)
        };
        match elected {
            Ok(true) => {}
            Ok(false) => return false,
            Err(e) => {
                sink(&format!("cluster gc: no collector election: {e}"));
                return false;
            }
        }
        let names = match self.cluster.repositories() {
            Ok(names) => names,
            Err(e) => {
                sink(&format!("cluster gc: listing the repositories: {e}"));
                return true;
            }
        };
        for name in names {
            let repo = self.cluster.repository(&name);
            let result = repo.collect(now_micros, self.config.gc);
            {
                let mut stats = self.gc_stats.lock().unwrap_or_else(|e| e.into_inner());
                match &result {
                    Ok(done) => {
                        let (objects, bytes) = done.totals();
                        stats.passes += 1;
                        stats.objects_deleted += objects as u64;
                        stats.bytes_deleted += bytes;
                    }
                    Err(_) => stats.failed_passes += 1,
                }
            }
            match result {
                Ok(done) => {
                    let (objects, bytes) = done.totals();
                    sink(&format!(
                        "cluster gc: {name}: r{}: {} segments listed; deleted {objects} \
                         objects, {bytes} bytes; kept {} younger than the minimum age, {} of \
                         the youngest revision or beyond",
                        done.youngest, done.segments_listed, done.kept_young, done.kept_unsettled
                    ));
                    for (key, size) in done.deleted.iter().chain(&done.txn_deleted) {
                        sink(&format!("cluster gc: {name}: deleted {key} {size}"));
                    }
                    for key in &done.uploads_ended {
                        sink(&format!("cluster gc: {name}: ended upload {key}"));
                    }
                    for key in &done.unrecognised {
                        sink(&format!(
                            "cluster gc: {name}: left alone (not a name the cluster writes): {key}"
                        ));
                    }
                }
                Err(e) => sink(&format!("cluster gc: {name}: pass failed: {e}")),
            }
        }
        self.gc_stats
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .last_round_micros = Some(now_micros);
        true
    }

    /// How often [`ClusterBackend::claim_post_commits`] is to be called: a quarter of
    /// `hook-grace`, between 250 ms and 5 s.
    pub fn post_commit_scan_interval(&self) -> Duration {
        (self.config.hook_grace / 4).clamp(Duration::from_millis(250), Duration::from_secs(5))
    }

    /// One scan of the cluster's post-commit records (docs/cluster.md, "Hooks"): deletes
    /// those of hooks run here whose deletion failed before; then, if this front end is in
    /// the member registry, claims each record older than `hook-grace` (as this front end
    /// saw it) whose front end is gone and unclaimed, for a repository `runner` has a
    /// post-commit hook for, runs the hook through `runner` and deletes the record, each
    /// logged. Answers how many hooks ran.
    pub fn claim_post_commits(&self, runner: &dyn PostCommitRunner) -> usize {
        let sink = self.log.lock().unwrap_or_else(|e| e.into_inner()).clone();
        self.post_commits
            .scan(&self.cluster, runner, &|line: &str| sink(line))
    }

    /// This front end's post-commit counters, for the metrics page.
    pub fn post_commit_stats(&self) -> PostCommitStats {
        self.post_commits.stats()
    }

    /// The cluster.
    pub fn cluster(&self) -> &Cluster {
        &self.cluster
    }

    /// The `http-forward-ca` of its cluster file.
    pub fn http_forward_ca(&self) -> Option<&Path> {
        self.config.http_forward_ca.as_deref()
    }

    /// The `http-forward-name` of its cluster file.
    pub fn http_forward_name(&self) -> Option<&str> {
        self.config.http_forward_name.as_deref()
    }

    /// This front end's id (its `front-end`).
    pub fn front_end_id(&self) -> &str {
        &self.config.front_end
    }
}

impl Backend for ClusterBackend {
    fn open(&self, dir: &Path, env: &Arc<dyn Env>) -> Result<Arc<dyn ReadRepo>> {
        let _ = env;
        let name = self.name_of(dir)?;
        Ok(Arc::new(self.reader(&name)?))
    }
    fn is_repository(&self, dir: &Path) -> bool {
        let Ok(name) = self.name_of(dir) else {
            return false;
        };
        let cached = |name: &str| {
            self.config
                .cache_dir
                .join(name)
                .join("db")
                .join("format")
                .is_file()
        };
        if cached(&name) {
            return true;
        }
        if let Some((at, known)) = self
            .known
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&name)
        {
            if at.elapsed() < KNOWN_FOR {
                return *known;
            }
        }
        let repository = self.cluster.repository(&name);
        let known = match crate::backend::read_tried_again(|| repository.uuid()) {
            Ok(uuid) => uuid.is_some(),
            // etcd does not answer: whether it is one is not known. Not one when a
            // repository above it is in the cache (the search goes deepest first: that one
            // serves the request, its reads unfenced at its last head) or was known to be
            // one (however long ago). Else what was last known of it, and when nothing
            // was: taken for one (not remembered) if it is the shallowest name the search
            // tries, so that opening it tells the client why ("no repository", http's 404
            // "Could not find the requested SVN filesystem", would mislead) and names
            // `proj`, not `proj/trunk/file`.
            Err(_) => {
                let known = self.known.lock().unwrap_or_else(|e| e.into_inner());
                let above = name.match_indices('/').any(|(at, _)| {
                    cached(&name[..at]) || known.get(&name[..at]).is_some_and(|(_, k)| *k)
                });
                if above {
                    return false;
                }
                return match known.get(&name) {
                    Some((_, was)) => *was,
                    None => !name.contains('/'),
                };
            }
        };
        self.known
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(name, (Instant::now(), known));
        known
    }
    fn open_writer(&self, dir: &Path) -> Result<Box<dyn WriteRepo>> {
        let name = self.name_of(dir)?;
        let reader = self.reader(&name)?;
        let mut writer =
            ClusterWriter::open(&reader, &self.config.front_end, self.config.writer_wait)?;
        // The server's writer slot keeps the writer between commits: the lease goes back
        // after a moment without one, so that any front end can commit.
        writer.set_idle_release(self.config.writer_idle);
        {
            let mut holds = self.holds.lock().unwrap_or_else(|e| e.into_inner());
            holds.retain(|(_, hold)| hold.strong_count() > 0);
            holds.push((name.clone(), writer.hold()));
        }
        if self.config.log_timings {
            let log = self.log.clone();
            writer.log_timings(Arc::new(move |line: &str| {
                let sink = log.lock().unwrap_or_else(|e| e.into_inner()).clone();
                sink(line)
            }));
        }
        Ok(Box::new(writer))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(extra: &str) -> std::result::Result<FrontEndConfig, ClusterError> {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("fe.cluster");
        std::fs::write(
            &file,
            format!(
                "etcd = http://127.0.0.1:2379\ncluster = c\ns3-endpoint = http://127.0.0.1:9000\n\
                 s3-bucket = b\ncache = cache\n{extra}"
            ),
        )
        .expect("write");
        FrontEndConfig::load(&file, &|name| Some(format!("{name}-value")))
    }

    #[test]
    fn timings_and_a_one_second_lease_are_read_and_bad_values_named() {
        let c = load("log-timings = yes\nlease-ttl = 1\n").expect("loads");
        assert!(c.log_timings);
        assert_eq!(c.cluster.lease_ttl_secs, 1);
        let c = load("").expect("loads");
        assert!(!c.log_timings);
        assert_eq!(c.cluster.lease_ttl_secs, 2);
        assert_eq!(c.cluster.s3_access_key, "AWS_ACCESS_KEY_ID-value");
        let e = load("log-timings = maybe\n")
            .expect_err("refused")
            .to_string();
        assert!(
            e.contains("fe.cluster:6") && e.contains("'log-timings' must be yes or no"),
            "{e}"
        );
        assert_eq!(
            load("lease-ttl = 0\n")
                .expect("loads")
                .cluster
                .lease_ttl_secs,
            1
        );
    }

    #[test]
    fn the_collectors_settings_are_read_with_their_defaults() {
        let c = load("").expect("loads");
        assert_eq!(c.gc_interval, Duration::from_secs(3600));
        assert_eq!(c.gc, crate::GcSettings::default());
        assert_eq!(c.gc.min_age, Duration::from_secs(3600));
        assert_eq!(c.gc.txn_max_age, Duration::from_secs(86400));
        let c = load("gc-interval = 0\ngc-min-age = 60\ntxn-max-age = 7200\n").expect("loads");
        assert_eq!(c.gc_interval, Duration::ZERO);
        assert_eq!(c.gc.min_age, Duration::from_secs(60));
        assert_eq!(c.gc.txn_max_age, Duration::from_secs(7200));
        let e = load("gc-min-age = 1h\n").expect_err("refused").to_string();
        assert!(e.contains("'gc-min-age' must be whole seconds"), "{e}");
    }

    #[test]
    fn the_hook_grace_is_read_with_its_default_and_sets_the_scan_interval() {
        assert_eq!(load("").expect("loads").hook_grace, Duration::from_secs(30));
        assert_eq!(
            load("hook-grace = 2\n").expect("loads").hook_grace,
            Duration::from_secs(2)
        );
        let e = load("hook-grace = 2s\n").expect_err("refused").to_string();
        assert!(
            e.contains("fe.cluster:6") && e.contains("'hook-grace' must be whole seconds"),
            "{e}"
        );
    }

    #[test]
    fn the_forwarding_trust_is_read_relative_to_the_file() {
        let c = load("").expect("loads");
        assert_eq!((c.http_forward_ca, c.http_forward_name), (None, None));
        let c = load("http-forward-ca = tls/peers.pem\nhttp-forward-name = svn.example.com\n")
            .expect("loads");
        let ca = c.http_forward_ca.expect("a file");
        assert!(ca.ends_with("tls/peers.pem") && ca.is_absolute(), "{ca:?}");
        assert_eq!(c.http_forward_name.as_deref(), Some("svn.example.com"));
    }

    #[test]
    fn the_chunk_size_is_read_with_its_default_and_a_bad_one_named() {
        assert_eq!(load("").expect("loads").cluster.chunk_bytes, 64 << 20);
        let c = load("chunk-bytes = 5242880\n").expect("loads");
        assert_eq!(c.cluster.chunk_bytes, 5 << 20);
        for bad in ["chunk-bytes = 64M\n", "chunk-bytes = 1048576\n"] {
            let e = load(bad).expect_err("refused").to_string();
            assert!(
                e.contains("fe.cluster:6") && e.contains("'chunk-bytes' must be a number"),
                "{e}"
            );
        }
    }

    #[test]
    fn front_ends_record_themselves_once_each_in_a_repository_directory() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert_eq!(front_ends_of(dir.path()).expect("reads"), None);
        let (a, b) = (
            Path::new("/etc/svelto/a.cluster"),
            Path::new("/srv/b.cluster"),
        );
        assert!(record_front_end(dir.path(), "proj", a).expect("records"));
        assert!(!record_front_end(dir.path(), "proj", a).expect("records"));
        assert!(record_front_end(dir.path(), "proj", b).expect("records"));
        let text = std::fs::read_to_string(dir.path().join(FRONT_ENDS_FILE)).expect("file");
        assert!(
            text.starts_with("# Written by svelto serve --cluster"),
            "{text}"
        );
        assert!(text.ends_with("proj\t/etc/svelto/a.cluster\nproj\t/srv/b.cluster\n"));
        let served = front_ends_of(dir.path()).expect("reads").expect("some");
        assert_eq!(
            served,
            vec![
                ServedBy {
                    name: "proj".into(),
                    file: a.into()
                },
                ServedBy {
                    name: "proj".into(),
                    file: b.into()
                }
            ]
        );
        let e = record_front_end(dir.path(), "a\tb", a).expect_err("refused");
        assert!(e.to_string().contains("holds a tab"), "{e}");
    }
}
