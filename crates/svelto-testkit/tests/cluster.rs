//! Smoke tests of the cluster rig (`svelto_testkit::cluster`, docs/cluster.md): the etcd
//! members are real, and the client crate the backend is meant to use (`etcd-client`)
//! works against them. Timings are printed (`-- --nocapture`), never asserted tightly:
//! speed targets live in bench/.

use std::time::{Duration, Instant};

use etcd_client::{Client, Compare, CompareOp, GetOptions, PutOptions, Txn, TxnOp};
use svelto_testkit::cluster::EtcdCluster;
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
