//! The cluster's member registry (docs/cluster.md, "Where everything lives": `members/ID`):
//! each `svelto serve --cluster` front end keeps one etcd key on a lease of its own while it
//! runs, so that `svelto admin members --cluster FILE` lists the front ends present. The
//! key goes when the front end leaves (at shutdown) or, after a crash, when its lease ends.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use etcd_client::{Client, Compare, CompareOp, GetOptions, PutOptions, Txn, TxnOp, TxnOpResponse};

use crate::repo::{keep_alive, Inner};
use crate::{Cluster, ClusterError};

/// This front end's entry in the registry, kept alive (and made again after its lease was
/// lost, e.g. while etcd had no majority) until [`Membership::leave`] or drop.
pub struct Membership {
    key: String,
    lease: Arc<AtomicI64>,
    task: tokio::task::JoinHandle<()>,
    inner: Arc<Inner>,
}

/// Grants a lease and puts `key` = `value` on it: the lease id.
async fn register(etcd: &mut Client, key: &str, value: &str, ttl: i64) -> Result<i64, String> {
    let lease = etcd
        .lease_grant(ttl, None)
        .await
        .map_err(|e| e.to_string())?
        .id();
    etcd.put(key, value, Some(PutOptions::new().with_lease(lease)))
        .await
        .map_err(|e| e.to_string())?;
    Ok(lease)
}

/// Keeps the registration alive; registers again a second after it was lost.
async fn stay(mut etcd: Client, key: String, value: String, ttl: i64, lease: Arc<AtomicI64>) {
    loop {
        let id = lease.load(Ordering::SeqCst);
        if id != 0 {
            let ttl = Duration::from_secs(u64::try_from(ttl).unwrap_or(1));
            let (lost, until) = (
                Arc::new(AtomicBool::new(false)),
                Arc::new(AtomicU64::new(0)),
            );
            keep_alive(etcd.clone(), id, ttl, lost, until).await;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
        let again = tokio::time::timeout(
            Duration::from_secs(2),
            register(&mut etcd, &key, &value, ttl),
        )
        .await;
        lease.store(
            match again {
                Ok(Ok(id)) => id,
                _ => 0,
            },
            Ordering::SeqCst,
        );
    }
}

impl Cluster {
    /// Registers this front end as `id` (its key `PREFIX/members/ID`, value `value`: what
    /// `svelto admin members` prints, e.g. its addresses) on a lease of its own.
    pub fn join(&self, id: &str, value: &str) -> Result<Membership, ClusterError> {
        let inner = self.inner.clone();
        let key = format!("{}/members/{id}", inner.config.etcd_prefix);
        let ttl = inner.config.lease_ttl_secs;
        let after = inner.config.request_timeout;
        let mut etcd = inner.etcd.clone();
        let first = inner.runtime.block_on(async {
            tokio::time::timeout(after, register(&mut etcd, &key, value, ttl)).await
        });
        let id = match first {
            Ok(Ok(id)) => id,
            Ok(Err(e)) => {
                return Err(ClusterError::Config(format!(
                    "registering front end '{id}' at {key} in etcd: {e}"
                )))
            }
            Err(_) => {
                return Err(ClusterError::EtcdTimeout {
                    what: "register member",
                    key,
                    after,
                })
            }
        };
        let lease = Arc::new(AtomicI64::new(id));
        let task = inner.runtime.spawn(stay(
            inner.etcd.clone(),
            key.clone(),
            value.to_owned(),
            ttl,
            lease.clone(),
        ));
        Ok(Membership {
            key,
            lease,
            task,
            inner,
        })
    }

    /// The front ends registered now: (id, value), by id.
    pub fn members(&self) -> Result<Vec<(String, String)>, ClusterError> {
        let prefix = format!("{}/members/", self.inner.config.etcd_prefix);
        let after = self.inner.config.request_timeout;
        let mut etcd = self.inner.etcd.clone();
        let answer = crate::block_on(&self.inner.runtime, async {
            tokio::time::timeout(
                after,
                etcd.get(prefix.as_str(), Some(GetOptions::new().with_prefix())),
            )
            .await
        });
        let resp = answer
            .map_err(|_| ClusterError::EtcdTimeout {
                what: "list members",
                key: prefix.clone(),
                after,
            })?
            .map_err(|e| ClusterError::Etcd {
                what: "list members",
                key: prefix.clone(),
                source: Box::new(e),
            })?;
        Ok(resp
            .kvs()
            .iter()
            .map(|kv| {
                let key = String::from_utf8_lossy(kv.key());
                (
                    key.strip_prefix(&prefix).unwrap_or(&key).to_owned(),
                    String::from_utf8_lossy(kv.value()).into_owned(),
                )
            })
            .collect())
    }
}

impl Membership {
    /// The registry key.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The lease of the registry key, kept current as it is registered again (0 while
    /// it is not registered).
    pub(crate) fn lease_handle(&self) -> Arc<AtomicI64> {
        self.lease.clone()
    }

    /// Leaves the registry: the key goes at once (its lease revoked).
    pub fn leave(self) -> Result<(), ClusterError> {
        self.task.abort();
        let id = self.lease.load(Ordering::SeqCst);
        if id == 0 {
            return Ok(());
        }
        let mut etcd = self.inner.etcd.clone();
        let after = self.inner.config.request_timeout;
        crate::block_on(&self.inner.runtime, async {
            tokio::time::timeout(after, etcd.lease_revoke(id)).await
        })
        .map_err(|_| ClusterError::EtcdTimeout {
            what: "leave members",
            key: self.key.clone(),
            after,
        })?
        .map_err(|e| ClusterError::Etcd {
            what: "leave members",
            key: self.key.clone(),
            source: Box::new(e),
        })?;
        Ok(())
    }
}

impl Drop for Membership {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Cluster {
    /// Whether this front end (`id`, registered as `membership`) is the cluster's collector
    /// (docs/cluster.md, "Orphans"): elected like a writer, by creating the key
    /// `PREFIX/collector` iff absent, on the member registry's lease, so that it goes with
    /// the front end. True when the key holds `id` after the attempt.
    pub fn elect_collector(&self, membership: &Membership, id: &str) -> Result<bool, ClusterError> {
        let lease = membership.lease.load(Ordering::SeqCst);
        if lease == 0 {
            return Ok(false);
        }
        let key = format!("{}/collector", self.inner.config.etcd_prefix);
        let after = self.inner.config.request_timeout;
        let mut etcd = self.inner.etcd.clone();
        let txn = Txn::new()
            .when([Compare::create_revision(key.as_str(), CompareOp::Equal, 0)])
            .and_then([TxnOp::put(
                key.as_str(),
                id,
                Some(PutOptions::new().with_lease(lease)),
            )])
            .or_else([TxnOp::get(key.as_str(), None)]);
        let answer = crate::block_on(&self.inner.runtime, async {
            tokio::time::timeout(after, etcd.txn(txn)).await
        });
        let resp = answer
            .map_err(|_| ClusterError::EtcdTimeout {
                what: "elect collector",
                key: key.clone(),
                after,
            })?
            .map_err(|e| ClusterError::Etcd {
                what: "elect collector",
                key: key.clone(),
                source: Box::new(e),
            })?;
        if resp.succeeded() {
            return Ok(true);
        }
        Ok(resp.op_responses().into_iter().any(|op| match op {
            TxnOpResponse::Get(get) => get.kvs().iter().any(|kv| kv.value() == id.as_bytes()),
            _ => false,
        }))
    }

    /// The names of the cluster's repositories (those with a head).
    pub fn repositories(&self) -> Result<Vec<String>, ClusterError> {
        let prefix = format!("{}/repos/", self.inner.config.etcd_prefix);
        let after = self.inner.config.request_timeout;
        let mut etcd = self.inner.etcd.clone();
        let answer = crate::block_on(&self.inner.runtime, async {
            tokio::time::timeout(
                after,
                etcd.get(
                    prefix.as_str(),
                    Some(GetOptions::new().with_prefix().with_keys_only()),
                ),
            )
            .await
        });
        let resp = answer
            .map_err(|_| ClusterError::EtcdTimeout {
                what: "list repositories",
                key: prefix.clone(),
                after,
            })?
            .map_err(|e| ClusterError::Etcd {
                what: "list repositories",
                key: prefix.clone(),
                source: Box::new(e),
            })?;
        Ok(resp
            .kvs()
            .iter()
            .filter_map(|kv| {
                let key = String::from_utf8_lossy(kv.key());
                key.strip_prefix(&prefix)?
                    .strip_suffix("/head")
                    .map(str::to_owned)
            })
            .collect())
    }
}
