//! Svelto's cluster (docs/cluster.md, issue 35): the storage seam's backend
//! ([`ClusterRepo`] reads through a front end's cache directory, [`ClusterWriter`]
//! commits), and the parts it is built on: a revision's bytes as one immutable segment object in an S3-compatible store
//! (put-if-absent under a key never rewritten, read back by ranged GETs); the head, the
//! etcd value that plays `db/current`'s role (its bytes: docs/formats/cluster.md),
//! published by one etcd transaction conditioned on the head the writer built on and on
//! the writer's election key, which lives on the writer's lease; writer election with
//! that lease kept alive; the resolution of a publication whose answer was lost; and the
//! linearizable head read that gives read-your-writes across front ends.
//!
//! The API blocks (the server is a thread per connection): a [`Cluster`] owns a small
//! tokio runtime for the etcd and S3 clients. Ids (commit ids, writer ids) come from the
//! caller: the library makes no ids and reads no clock for its results.
//!
//! Must not: acknowledge a publication etcd has not committed (only
//! [`Publish::Published`] means it was); rewrite an object key; hold the etcd and S3
//! clients' dependencies anywhere but in this crate.

mod backend;
mod frontend;
mod gc;
pub mod head;
mod members;
pub mod objects;
mod post_commit;
mod repo;
mod stats;

use std::sync::Arc;
use std::time::Duration;

use object_store::aws::AmazonS3Builder;
use object_store::{ClientOptions, RetryConfig};

pub use backend::{ClusterRepo, ClusterWriter, LogSink};
pub use frontend::{
    front_ends_of, record_front_end, ClusterBackend, FrontEndConfig, GcStats, ServedBy,
    FRONT_ENDS_FILE,
};
pub use gc::{Collected, GcSettings};
pub use head::{CommitId, Head, HeadError, IndexRef, SegmentRef, MAX_TAIL, PARTS};
pub use members::Membership;
pub use objects::{Index, PartSink, PartSource, Segment, SegmentHeader};
pub use post_commit::{PendingPostCommit, PostCommitRecord, PostCommitRunner, PostCommitStats};
pub use repo::{
    Campaign, HeadVersion, LeaseClock, LockKeyOp, LockSnapshot, Publish, Repository, WantedHook,
    WriterLease,
};
pub use stats::{Stats, Trip};

/// Where the cluster's components are and how long to wait for them.
#[derive(Clone, Debug)]
pub struct ClusterConfig {
    /// etcd client URLs (`http://HOST:PORT`), every member's.
    pub etcd_endpoints: Vec<String>,
    /// The etcd key prefix, the cluster's name: keys are `PREFIX/repos/NAME/...`.
    pub etcd_prefix: String,
    /// The S3 endpoint (`http://HOST:PORT`, path-style addressing).
    pub s3_endpoint: String,
    /// The bucket.
    pub s3_bucket: String,
    /// The region requests are signed for.
    pub s3_region: String,
    /// The access key id.
    pub s3_access_key: String,
    /// The secret key.
    pub s3_secret_key: String,
    /// The object key prefix (repositories' keys are `PREFIX/REPO/...`).
    pub object_prefix: String,
    /// The writer lease's time to live in whole seconds (etcd raises anything below its
    /// minimum, 2 s with its default election timeout).
    pub lease_ttl_secs: i64,
    /// The longest one etcd or object store request may take before it is given up (its
    /// outcome then unknown).
    pub request_timeout: Duration,
    /// The longest one attempt at the head's transaction may take before it is sent again
    /// (safe: its compare lets at most one copy apply). Shorter than `request_timeout` so
    /// that an attempt stuck on a killed etcd leader does not hold the commit for long.
    pub attempt_timeout: Duration,
    /// The longest a publication may go on resolving an unknown outcome before it answers
    /// [`ClusterError::OutcomeUnknown`].
    pub commit_timeout: Duration,
    /// A segment object larger than this is written by a multipart upload of parts of this
    /// size, read from the local files, and read back by ranged GETs of this size, never
    /// whole in memory (`chunk-bytes`, default 64 MiB; docs/cluster.md, "Large revisions").
    pub chunk_bytes: u64,
}

/// The default [`ClusterConfig::chunk_bytes`]: 64 MiB.
pub const DEFAULT_CHUNK_BYTES: u64 = 64 << 20;

impl ClusterConfig {
    /// A configuration with the default timeouts: a 2 s lease, 2 s requests, 500 ms
    /// attempts at the head's transaction, 10 s to resolve a publication.
    pub fn new(
        etcd_endpoints: Vec<String>,
        etcd_prefix: &str,
        s3_endpoint: &str,
        s3_bucket: &str,
    ) -> ClusterConfig {
        ClusterConfig {
            etcd_endpoints,
            etcd_prefix: etcd_prefix.to_owned(),
            s3_endpoint: s3_endpoint.to_owned(),
            s3_bucket: s3_bucket.to_owned(),
            s3_region: "us-east-1".to_owned(),
            s3_access_key: String::new(),
            s3_secret_key: String::new(),
            object_prefix: "svelto".to_owned(),
            lease_ttl_secs: 2,
            request_timeout: Duration::from_secs(2),
            attempt_timeout: Duration::from_millis(500),
            commit_timeout: Duration::from_secs(10),
            chunk_bytes: DEFAULT_CHUNK_BYTES,
        }
    }
}

/// What went wrong, naming the component, the operation and the key.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    /// The configuration cannot be used.
    #[error("bad cluster configuration: {0}")]
    Config(String),
    /// The object store refused or failed a request.
    #[error("the object store failed ({what} {key}): {source}")]
    ObjectStore {
        /// The operation.
        what: &'static str,
        /// The object key.
        key: String,
        /// The client's error.
        source: Box<object_store::Error>,
    },
    /// The object store did not answer in time.
    #[error("the object store did not answer ({what} {key}) within {after:?}")]
    ObjectStoreTimeout {
        /// The operation.
        what: &'static str,
        /// The object key.
        key: String,
        /// The timeout.
        after: Duration,
    },
    /// etcd refused or failed a request. Unreachable (no member answers, or none can
    /// without a majority), it says so: commits are refused until etcd returns
    /// (docs/cluster.md, "Failure behaviour").
    #[error("{}", etcd_failure(what, key, source))]
    Etcd {
        /// The operation.
        what: &'static str,
        /// The etcd key.
        key: String,
        /// The client's error.
        source: Box<etcd_client::Error>,
    },
    /// etcd did not answer in time (a member without a majority answers nothing).
    #[error(
        "the cluster's coordination service (etcd) has no quorum or is unreachable: it did \
         not answer ({what} {key}) within {after:?}; commits are refused until it returns"
    )]
    EtcdTimeout {
        /// The operation.
        what: &'static str,
        /// The etcd key.
        key: String,
        /// The timeout.
        after: Duration,
    },
    /// A stored value or object is not what it must be.
    #[error("corrupt {what} at {key}: {detail}")]
    Corrupt {
        /// What kind of value.
        what: &'static str,
        /// Its key.
        key: String,
        /// What is wrong.
        detail: String,
    },
    /// A publication whose answer never came: it may or may not be published, and the
    /// client must not be told it succeeded.
    #[error(
        "the outcome of publishing r{revision} (commit {commit}) is unknown: etcd gave no \
         definite answer within {after:?} (last: {last})"
    )]
    OutcomeUnknown {
        /// The revision it would have been.
        revision: u64,
        /// Its commit id.
        commit: CommitId,
        /// How long it was tried.
        after: Duration,
        /// The last error seen.
        last: String,
    },
    /// A local file (a segment's parts being written, or the cache being filled) failed.
    #[error("{what}: {source}")]
    Local {
        /// What was being done, naming the file.
        what: String,
        /// The error.
        source: std::io::Error,
    },
    /// The repository exists already (at creation).
    #[error("repository {0} exists already in the cluster")]
    Exists(String),
    /// The repository has no head.
    #[error("repository {name} is not in the cluster (no head at {key})")]
    NoSuchRepository {
        /// Its name.
        name: String,
        /// The head's key.
        key: String,
    },
}

/// The text of [`ClusterError::Etcd`]: an etcd that no member of a majority answers for
/// (connections refused or broken, the request timed out or found no leader) is named as
/// such, with what the client said; another refusal as it is.
fn etcd_failure(what: &str, key: &str, source: &etcd_client::Error) -> String {
    let unreachable = match source {
        etcd_client::Error::TransportError(_) | etcd_client::Error::IoError(_) => true,
        etcd_client::Error::GRpcStatus(status) => {
            let code = format!("{:?}", status.code());
            let message = status.message();
            ["Unavailable", "DeadlineExceeded", "Cancelled", "Unknown"].contains(&code.as_str())
                || message.contains("no leader")
                || message.contains("timed out")
        }
        _ => false,
    };
    if unreachable {
        format!(
            "the cluster's coordination service (etcd) has no quorum or is unreachable \
             ({what} {key}: {source}); commits are refused until it returns"
        )
    } else {
        format!("the coordination service (etcd) failed ({what} {key}): {source}")
    }
}

impl ClusterError {
    /// Whether this is a component that is down or slow rather than bad data or input (the
    /// store traits' "backend unavailable or timed out" kind).
    pub fn is_unavailable(&self) -> bool {
        matches!(
            self,
            ClusterError::ObjectStore { .. }
                | ClusterError::ObjectStoreTimeout { .. }
                | ClusterError::Etcd { .. }
                | ClusterError::EtcdTimeout { .. }
                | ClusterError::OutcomeUnknown { .. }
        )
    }
}

/// The clients of one cluster and the runtime that drives them.
pub struct Cluster {
    inner: Arc<repo::Inner>,
}

impl Cluster {
    /// Connects to etcd and configures the S3 client (which connects on first use).
    pub fn connect(config: ClusterConfig) -> Result<Cluster, ClusterError> {
        if config.etcd_endpoints.is_empty() {
            return Err(ClusterError::Config("no etcd endpoint".into()));
        }
        if config.lease_ttl_secs < 1 {
            return Err(ClusterError::Config(format!(
                "lease TTL of {} s (at least 1)",
                config.lease_ttl_secs
            )));
        }
        // reqwest is built without a TLS provider of its own: ring, as svelto-http uses.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("svelto-cluster")
            .enable_all()
            .build()
            .map_err(|e| ClusterError::Config(format!("cannot start a tokio runtime: {e}")))?;
        let store = AmazonS3Builder::new()
            .with_endpoint(&config.s3_endpoint)
            .with_bucket_name(&config.s3_bucket)
            .with_region(&config.s3_region)
            .with_access_key_id(&config.s3_access_key)
            .with_secret_access_key(&config.s3_secret_key)
            .with_allow_http(true)
            .with_virtual_hosted_style_request(false)
            .with_client_options(
                // Each call is timed by `Objects`, by the bytes it moves: one timeout for
                // the whole request would refuse every object larger than it carries.
                ClientOptions::new()
                    .with_allow_http(true)
                    .with_timeout_disabled()
                    .with_connect_timeout(Duration::from_secs(1)),
            )
            // The callers retry whole operations (a put-if-absent retried by the client
            // would find its own object and fail): no retries inside the client.
            .with_retry(RetryConfig {
                max_retries: 0,
                retry_timeout: config.request_timeout,
                ..RetryConfig::default()
            })
            .build()
            .map_err(|e| ClusterError::Config(format!("S3 client: {e}")))?;
        let options = etcd_client::ConnectOptions::new()
            .with_connect_timeout(Duration::from_secs(1))
            .with_timeout(config.request_timeout)
            .with_keep_alive(Duration::from_secs(1), Duration::from_secs(1));
        let endpoints = config.etcd_endpoints.clone();
        let etcd = runtime
            .block_on(async {
                tokio::time::timeout(
                    config.request_timeout * 5,
                    etcd_client::Client::connect(endpoints, Some(options)),
                )
                .await
            })
            .map_err(|_| ClusterError::EtcdTimeout {
                what: "connect to",
                key: config.etcd_endpoints.join(","),
                after: config.request_timeout * 5,
            })?
            .map_err(|e| ClusterError::Etcd {
                what: "connect to",
                key: config.etcd_endpoints.join(","),
                source: Box::new(e),
            })?;
        Ok(Cluster {
            inner: Arc::new(repo::Inner {
                runtime,
                etcd,
                store: Arc::new(store.clone()),
                multipart: Arc::new(store),
                config,
                counters: stats::Counters::default(),
            }),
        })
    }

    /// The handle of repository `name` (nothing is read yet).
    pub fn repository(&self, name: &str) -> Repository {
        Repository::new(self.inner.clone(), name)
    }

    /// The configuration it was made with.
    pub fn config(&self) -> &ClusterConfig {
        &self.inner.config
    }

    /// The round trips made so far through this cluster's clients, by kind.
    pub fn stats(&self) -> Stats {
        self.inner.counters.snapshot()
    }
}

/// Runs `f`, which owns what it needs, to completion on `runtime` from synchronous code:
/// on this thread when it is no runtime's; else (an HTTP handler on its runtime's blocking
/// pool, where `block_on` is not allowed) as a task of `runtime`, waiting here for its
/// answer. The per-request reads (the fence, the lock table) go this way: spawning a thread
/// for each cost an HTTP front end about 0.7 ms of CPU per read.
pub(crate) fn block_on_owned<T: Send + 'static>(
    runtime: &tokio::runtime::Runtime,
    f: impl std::future::Future<Output = T> + Send + 'static,
) -> T {
    if tokio::runtime::Handle::try_current().is_err() {
        return runtime.block_on(f);
    }
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    runtime.spawn(async move {
        let _ = tx.send(f.await);
    });
    match rx.recv() {
        Ok(value) => value,
        // The task panicked (its sender dropped unsent), or the runtime is shutting down.
        Err(_) => panic!(
            "a cluster call ended without an answer (its task panicked or the runtime stopped)"
        ),
    }
}

/// Runs `f` to completion on `runtime` from synchronous code. Called from a thread that
/// drives a Tokio runtime of its own (svelto-http's workers), where `block_on` would
/// panic, it runs on a short-lived thread of its own instead. A future that owns what it
/// needs goes through [`block_on_owned`] instead, which makes no thread.
pub(crate) fn block_on<T: Send>(
    runtime: &tokio::runtime::Runtime,
    f: impl std::future::Future<Output = T> + Send,
) -> T {
    if tokio::runtime::Handle::try_current().is_err() {
        return runtime.block_on(f);
    }
    std::thread::scope(|scope| match scope.spawn(|| runtime.block_on(f)).join() {
        Ok(value) => value,
        Err(panic) => std::panic::resume_unwind(panic),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cluster_runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("svelto-cluster")
            .enable_all()
            .build()
            .expect("a runtime")
    }

    /// The name of the thread a future ran on, through `block_on_owned`.
    fn ran_on(runtime: &tokio::runtime::Runtime) -> String {
        block_on_owned(runtime, async {
            tokio::time::sleep(Duration::from_millis(1)).await;
            std::thread::current().name().unwrap_or("").to_owned()
        })
    }

    #[test]
    fn an_owned_call_runs_on_the_calling_thread_outside_any_runtime() {
        let runtime = cluster_runtime();
        let here = std::thread::current().name().unwrap_or("").to_owned();
        assert_eq!(ran_on(&runtime), here);
    }

    /// From an HTTP handler (the blocking pool of a worker's current-thread runtime), where
    /// `block_on` would panic: the cluster runtime's own thread answers, no thread is made.
    #[test]
    fn an_owned_call_from_another_runtimes_blocking_pool_runs_on_the_cluster_runtime() {
        let runtime = std::sync::Arc::new(cluster_runtime());
        let worker = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a worker runtime");
        let cluster = runtime.clone();
        let names = worker.block_on(async move {
            tokio::task::spawn_blocking(move || {
                let a = ran_on(&cluster);
                let b = block_on(&cluster, async {
                    std::thread::current().name().unwrap_or("").to_owned()
                });
                (a, b)
            })
            .await
            .expect("the handler")
        });
        assert_eq!(names.0, "svelto-cluster");
        // The borrowed form still works there, on a thread of its own.
        assert_ne!(names.1, "svelto-cluster");
        drop(worker);
        if let Ok(runtime) = std::sync::Arc::try_unwrap(runtime) {
            runtime.shutdown_background();
        }
    }
}
