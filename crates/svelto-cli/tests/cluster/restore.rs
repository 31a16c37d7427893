//! The backup and restore of docs/cluster.md ("Backups", "Restore") done as an
//! administrator would: an etcd snapshot (`etcdctl snapshot save`) while commits run, then a
//! copy of the bucket (here with the object_store client, as `aws s3 sync` would), more
//! commits after each; then a new etcd cluster restored from the snapshot (`etcdctl snapshot
//! restore`), a new object store holding the copy, and front ends with empty caches.

use std::path::Path;

use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use svelto_testkit::cluster::{EtcdCluster, S3Server};
use svelto_testkit::{Run, Svelto};

use super::{bucket_client, cluster_file, put, root_with_conf, svelto_bin, Rig};

/// `svnrdump dump` of `url`, every byte (UUID and dates included).
fn dump(url: &str) -> Vec<u8> {
    Run::tool("svnrdump")
        .args(["dump", "-q", "--non-interactive", url])
        .success()
        .stdout
}

/// Copies every object of `from`'s bucket into `to`'s; returns how many.
fn copy_bucket(from: &S3Server, to: &S3Server) -> usize {
    let (source, target) = (bucket_client(from), bucket_client(to));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    runtime.block_on(async {
        let mut copied = 0;
        let mut prefixes: Vec<Option<ObjectPath>> = vec![None];
        while let Some(prefix) = prefixes.pop() {
            let listed = source
                .list_with_delimiter(prefix.as_ref())
                .await
                .expect("list the bucket");
            prefixes.extend(listed.common_prefixes.into_iter().map(Some));
            for object in listed.objects {
                let bytes = source
                    .get(&object.location)
                    .await
                    .expect("get an object")
                    .bytes()
                    .await
                    .expect("read an object");
                target
                    .put(&object.location, PutPayload::from(bytes))
                    .await
                    .expect("put an object");
                copied += 1;
            }
        }
        copied
    })
}

/// Front end `id` of a cluster on `etcd` and `s3`, its files under `dir`.
fn front_end(dir: &Path, etcd: &EtcdCluster, s3: &S3Server, id: &str) -> Svelto {
    let file = cluster_file(dir, etcd, s3, id, "");
    let root = root_with_conf(dir, id, "proj");
    Svelto::start_with(
        &svelto_bin(),
        &root,
        &dir.join(format!("serve-{id}.log")),
        &["--cluster", file.to_str().expect("a UTF-8 path")],
    )
}

#[test]
fn a_snapshot_and_a_bucket_copy_restore_the_repository_at_the_snapshot() {
    let (mut rig, servers) = Rig::start(2, "");
    let dir = rig.dir.path().to_owned();
    let (a, b) = (servers[0].url("proj"), servers[1].url("proj"));
    // Revisions 1-40, then the snapshot (its head: r40).
    for n in 1..=40 {
        let url = if n % 2 == 0 { &a } else { &b };
        put(&dir, url, &format!("f{}", n % 7), &format!("kept {n}\n"));
    }
    let at_snapshot = dump(&b);
    let snapshot = dir.join("svelto-etcd.db");
    Run::tool("etcdctl")
        .arg(format!("--endpoints={}", rig.etcd.endpoint(0)))
        .arg("snapshot")
        .arg("save")
        .arg(&snapshot)
        .success();
    // Commits between the snapshot and the copy: in the copy, but not in the snapshot's
    // heads. Past r64, where the writer moves the oldest revisions to an index object.
    for n in 41..=70 {
        put(&dir, &a, &format!("f{}", n % 7), &format!("lost {n}\n"));
    }
    let restored = dir.join("restored");
    std::fs::create_dir_all(&restored).expect("restored dir");
    let s3 = S3Server::start(&restored, "svelto");
    let copied = copy_bucket(&rig._s3, &s3);
    assert!(copied >= 70, "{copied} objects copied");
    // A commit after the copy: lost with the old cluster.
    put(&dir, &a, "f0", "after the copy\n");
    // The old cluster is gone.
    drop(servers);
    for i in 0..rig.etcd.size() {
        rig.etcd.kill(i);
    }
    rig._s3.kill();

    let etcd = EtcdCluster::restore(&restored, 3, &snapshot);
    let x = front_end(&restored, &etcd, &s3, "x");
    let x_url = x.url("proj");
    assert!(
        dump(&x_url) == at_snapshot,
        "the restored repository dumps otherwise than at the snapshot"
    );
    // The restored cluster commits on from r40: past r64 again, over the orphans of the
    // commits the backup lost (segments, and an index object of the same name).
    for n in 41..=66 {
        let (rev, _) = put(&dir, &x_url, &format!("f{}", n % 7), &format!("new {n}\n"));
        assert_eq!(
            rev, n,
            "the restored cluster numbers on from the snapshot's head"
        );
    }
    let warm = dump(&x_url);
    let text = String::from_utf8_lossy(&warm);
    assert!(text.contains("new 50\n") && !text.contains("lost 50\n"));
    // A front end with an empty cache reads the index objects and segments: the same bytes.
    let y = front_end(&restored, &etcd, &s3, "y");
    let cold = dump(&y.url("proj"));
    assert!(
        cold == warm,
        "a cold front end dumps otherwise than the one that committed (first difference at \
         byte {:?})",
        cold.iter().zip(&warm).position(|(c, w)| c != w)
    );
    // The collector (docs/cluster.md, "Orphans"): the lost commits' segments of r41-r65
    // (below the restored cluster's youngest, r66) are orphans and go; r66's and beyond
    // stay; a front end with an empty cache still dumps every byte the same.
    let out = Run::new(svelto_bin())
        .args(["admin", "gc", "--min-age", "0", "--cluster"])
        .arg(restored.join("x.cluster"))
        .arg("proj")
        .success()
        .stdout_text();
    let lost: Vec<u64> = out
        .lines()
        .filter_map(|l| l.strip_prefix("deleted "))
        .filter_map(|l| l.split("/seg/").nth(1)?.get(..12)?.parse().ok())
        .collect();
    for r in 41..=65 {
        assert!(
            lost.contains(&r),
            "the lost r{r}'s segment was not collected: {out}"
        );
    }
    assert!(lost.iter().all(|&r| r < 66), "{out}");
    let z = front_end(&restored, &etcd, &s3, "z");
    assert!(
        dump(&z.url("proj")) == warm,
        "a cold front end dumps otherwise after the collector's pass"
    );
}
