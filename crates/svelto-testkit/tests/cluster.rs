//! Smoke tests of the cluster rig (`svelto_testkit::cluster`, docs/cluster.md): the etcd
//! members and the object store are real, and the client crates the backend is meant to
//! use (`etcd-client`; `object_store`'s S3 client, signing with ring) work against them.
//! Timings are printed (`-- --nocapture`), never asserted tightly: speed targets live in
//! bench/. The object store test needs SeaweedFS's `weed`, which scripts/setup builds.

use std::time::{Duration, Instant};

use etcd_client::{Client, Compare, CompareOp, GetOptions, PutOptions, Txn, TxnOp};
use object_store::aws::{AmazonS3, AmazonS3Builder};
use object_store::path::Path as ObjectPath;
use object_store::{
    ClientOptions, ObjectStore, ObjectStoreExt, PutMode, PutOptions as ObjectPutOptions,
    PutPayload, RetryConfig,
};
use svelto_testkit::cluster::{EtcdCluster, S3Server, S3_ACCESS_KEY, S3_REGION, S3_SECRET_KEY};
use svelto_testkit::tempdir;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime for the clients")
}

/// An etcd client on every member's endpoint.
async fn connect(cluster: &EtcdCluster) -> Client {
    Client::connect(cluster.endpoints(), None)
        .await
        .unwrap_or_else(|e| panic!("cannot connect to etcd: {e}\n{}", cluster.diagnostics()))
}

/// The head's publication as docs/cluster.md writes it: replace `head` iff nobody replaced
/// it since `seen` (its mod revision) and the writer key still is the one this writer
/// created (`election`: its create revision; gone once the writer's lease ends).
fn publish(head: &str, seen: i64, writer: &str, election: i64, value: &str) -> Txn {
    Txn::new()
        .when(vec![
            Compare::mod_revision(head, CompareOp::Equal, seen),
            Compare::create_revision(writer, CompareOp::Equal, election),
        ])
        .and_then(vec![TxnOp::put(head, value, None)])
}

#[test]
fn an_etcd_compare_and_swap_succeeds_once_and_its_replay_fails() {
    let dir = tempdir();
    let cluster = EtcdCluster::start(dir.path(), 3);
    runtime().block_on(async {
        let mut client = connect(&cluster).await;
        let (head, writer) = ("/svelto/test/repos/r/head", "/svelto/test/repos/r/writer");
        let put = client
            .put(head, "r0", None)
            .await
            .expect("put the first head");
        let seen = put.header().expect("a response header").revision();
        let lease = client
            .lease_grant(5, None)
            .await
            .expect("grant a lease")
            .id();
        let created = client
            .put(
                writer,
                "front-end-a",
                Some(PutOptions::new().with_lease(lease)),
            )
            .await
            .expect("put the writer key on the lease");
        let election = created.header().expect("a response header").revision();

        let first = client
            .txn(publish(head, seen, writer, election, "r1"))
            .await
            .expect("the first publication");
        assert!(first.succeeded(), "the first compare-and-swap must succeed");
        let replay = client
            .txn(publish(head, seen, writer, election, "r1-again"))
            .await
            .expect("the replay");
        assert!(!replay.succeeded(), "the replay must fail: the head moved");
        let now = client.get(head, None).await.expect("get the head");
        assert_eq!(now.kvs()[0].value(), b"r1");

        // A writer whose lease ended cannot publish even on the head it saw last.
        let seen = now.kvs()[0].mod_revision();
        client.lease_revoke(lease).await.expect("revoke the lease");
        let late = client
            .txn(publish(head, seen, writer, election, "r2-late"))
            .await
            .expect("the late publication");
        assert!(
            !late.succeeded(),
            "a writer without its lease must not publish"
        );
        let now = client.get(head, None).await.expect("get the head");
        assert_eq!(now.kvs()[0].value(), b"r1");
    });
}

#[test]
fn a_write_is_accepted_again_after_kill_9_of_the_etcd_leader() {
    let dir = tempdir();
    let mut cluster = EtcdCluster::start(dir.path(), 3);
    let rt = runtime();
    let mut client = rt.block_on(connect(&cluster));
    for round in 0..3 {
        let key = format!("/svelto/test/after-kill-{round}");
        let leader = cluster.wait_leader(Duration::from_secs(30));
        // The client balances over every endpoint and may first try one whose member was
        // just restarted: a write is "accepted" when one attempt succeeds.
        let (_, before) = put_until_accepted(&rt, &mut client, "/svelto/test/before", &cluster);
        if before > 1 {
            eprintln!("round {round}: the write before the kill took {before} attempts");
        }
        let killed = Instant::now();
        cluster.kill(leader);
        let (accepted, attempts) = put_until_accepted(&rt, &mut client, &key, &cluster);
        let accepted = accepted.duration_since(killed);
        let new_leader = cluster.wait_leader(Duration::from_secs(10));
        assert_ne!(new_leader, leader, "the killed member cannot still lead");
        eprintln!(
            "round {round}: kill -9 of etcd leader m{leader} -> write accepted after {} ms \
             ({attempts} attempts); new leader m{new_leader}",
            accepted.as_millis()
        );

        // The killed member comes back on its data and catches up: a serializable read
        // (answered from its own copy) finds the write made while it was down.
        cluster.restart(leader);
        let mut alone = rt
            .block_on(Client::connect([cluster.endpoint(leader)], None))
            .expect("connect to the restarted member");
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let got =
                rt.block_on(alone.get(key.as_str(), Some(GetOptions::new().with_serializable())));
            if got
                .as_ref()
                .is_ok_and(|g| g.kvs().first().is_some_and(|kv| kv.value() == b"y"))
            {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "restarted member m{leader} did not catch up ({got:?}):\n{}",
                cluster.diagnostics()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// Puts `key` (attempts of at most 300 ms each) until one succeeds; returns when it did and
/// how many attempts it took. Panics after 20 s with the members' output.
fn put_until_accepted(
    rt: &tokio::runtime::Runtime,
    client: &mut Client,
    key: &str,
    cluster: &EtcdCluster,
) -> (Instant, u32) {
    let start = Instant::now();
    let mut attempts = 0;
    loop {
        attempts += 1;
        let put = rt.block_on(async {
            tokio::time::timeout(Duration::from_millis(300), client.put(key, "y", None)).await
        });
        if let Ok(Ok(_)) = put {
            return (Instant::now(), attempts);
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "no write of {key} accepted in 20 s ({put:?}):\n{}",
            cluster.diagnostics()
        );
    }
}

fn object_store(s3: &S3Server) -> AmazonS3 {
    // reqwest is built without a TLS provider of its own: ring, as svelto-http uses.
    let _ = rustls::crypto::ring::default_provider().install_default();
    AmazonS3Builder::new()
        .with_endpoint(s3.endpoint())
        .with_bucket_name(s3.bucket())
        .with_region(S3_REGION)
        .with_access_key_id(S3_ACCESS_KEY)
        .with_secret_access_key(S3_SECRET_KEY)
        .with_allow_http(true)
        .with_virtual_hosted_style_request(false)
        .with_client_options(
            ClientOptions::new()
                .with_allow_http(true)
                .with_timeout(Duration::from_secs(30))
                .with_connect_timeout(Duration::from_secs(1)),
        )
        .with_retry(RetryConfig {
            max_retries: 1,
            retry_timeout: Duration::from_secs(3),
            ..RetryConfig::default()
        })
        .build()
        .unwrap_or_else(|e| panic!("cannot configure the S3 client: {e}"))
}

/// Bytes that differ at every offset, so a GET of the wrong range or object shows.
fn segment(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u32).wrapping_mul(2654435761).to_le_bytes()[3] ^ seed)
        .collect()
}

async fn listed(store: &AmazonS3, prefix: &str) -> Vec<String> {
    let listing = store
        .list_with_delimiter(Some(&ObjectPath::from(prefix)))
        .await
        .unwrap_or_else(|e| panic!("list {prefix}: {e}"));
    let mut keys: Vec<String> = listing
        .objects
        .iter()
        .map(|o| o.location.to_string())
        .collect();
    keys.sort();
    keys
}

#[test]
fn objects_put_get_list_and_survive_kill_9_of_the_object_store() {
    let dir = tempdir();
    let started = Instant::now();
    let mut s3 = S3Server::start(dir.path(), "svelto");
    let server = s3.server().expect("weed runs");
    eprintln!(
        "weed server: serving and bucket made in {} ms, RSS {} KiB",
        started.elapsed().as_millis(),
        server.rss_kib().unwrap_or(0)
    );
    let rt = runtime();
    let store = object_store(&s3);
    let segments = [
        ("repo/seg/000000000001-aaaa", segment(1000, 1)),
        ("repo/seg/000000000002-bbbb", segment(6 << 20, 2)),
        ("repo/seg/000000000003-cccc", segment(0, 3)),
    ];
    rt.block_on(async {
        for (key, bytes) in &segments {
            let t = Instant::now();
            store
                .put_opts(
                    &ObjectPath::from(*key),
                    PutPayload::from(bytes.clone()),
                    ObjectPutOptions::from(PutMode::Create),
                )
                .await
                .unwrap_or_else(|e| panic!("put {key}: {e}\n{}", s3.diagnostics()));
            eprintln!(
                "put {key} ({} bytes): {} ms",
                bytes.len(),
                t.elapsed().as_millis()
            );
        }
        // Keys are never rewritten: a second create of the same key is refused.
        let again = store
            .put_opts(
                &ObjectPath::from(segments[0].0),
                PutPayload::from(segment(10, 9)),
                ObjectPutOptions::from(PutMode::Create),
            )
            .await;
        assert!(
            matches!(again, Err(object_store::Error::AlreadyExists { .. })),
            "a put-if-absent over an existing key must fail: {again:?}"
        );
        for (key, bytes) in &segments {
            let got = store
                .get(&ObjectPath::from(*key))
                .await
                .unwrap_or_else(|e| panic!("get {key}: {e}"))
                .bytes()
                .await
                .unwrap_or_else(|e| panic!("read {key}: {e}"));
            assert!(got == bytes[..], "{key} reads back as it was written");
        }
        let range = store
            .get_range(&ObjectPath::from(segments[1].0), 4_000_000..4_000_100)
            .await
            .expect("a ranged get");
        assert!(range == segments[1].1[4_000_000..4_000_100]);
        let keys: Vec<&str> = segments.iter().map(|(k, _)| *k).collect();
        assert_eq!(listed(&store, "repo/seg").await, keys);
    });

    s3.kill();
    let refused = rt.block_on(store.get(&ObjectPath::from(segments[0].0)));
    assert!(
        refused.is_err(),
        "a get from a killed object store must fail"
    );
    let restarted = Instant::now();
    s3.restart();
    eprintln!(
        "weed restart: serving in {} ms",
        restarted.elapsed().as_millis()
    );
    rt.block_on(async {
        let keys: Vec<&str> = segments.iter().map(|(k, _)| *k).collect();
        assert_eq!(listed(&store, "repo/seg").await, keys);
        for (key, bytes) in &segments {
            let got = store
                .get(&ObjectPath::from(*key))
                .await
                .unwrap_or_else(|e| {
                    panic!("get {key} after the restart: {e}\n{}", s3.diagnostics())
                })
                .bytes()
                .await
                .unwrap_or_else(|e| panic!("read {key} after the restart: {e}"));
            assert!(
                got == bytes[..],
                "{key} survives kill -9 of the object store"
            );
        }
    });
}
