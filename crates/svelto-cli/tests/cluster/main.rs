//! `svelto serve --cluster` front ends over the real components: three etcd members
//! (Debian's etcd-server) and SeaweedFS's S3 gateway (weed), started on 127.0.0.1 by
//! `svelto_testkit::cluster` (they fail loudly when missing), with the stock `svn` and
//! `svnmucc` clients.

use std::path::{Path, PathBuf};
use std::time::Instant;

use svelto_testkit::cluster::{EtcdCluster, S3Server, S3_ACCESS_KEY, S3_REGION, S3_SECRET_KEY};
use svelto_testkit::{tempdir, Run, Svelto};

fn svelto_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_svelto"))
}

/// Writes front end `id`'s cluster file (its own cache directory) under `dir`.
fn cluster_file(dir: &Path, etcd: &EtcdCluster, s3: &S3Server, id: &str) -> PathBuf {
    let credentials = dir.join("s3.credentials");
    std::fs::write(
        &credentials,
        format!(
            "[default]\naws_access_key_id = {S3_ACCESS_KEY}\naws_secret_access_key = {S3_SECRET_KEY}\n"
        ),
    )
    .expect("credentials");
    let file = dir.join(format!("{id}.cluster"));
    std::fs::write(
        &file,
        format!(
            "# front end {id}\netcd = {}\ncluster = test\ns3-endpoint = {}\ns3-bucket = {}\n\
             s3-region = {S3_REGION}\ns3-credentials = s3.credentials\ncache = cache-{id}\n\
             front-end = {id}\nrequest-timeout = 3\n",
            etcd.endpoints().join(", "),
            s3.endpoint(),
            s3.bucket()
        ),
    )
    .expect("cluster file");
    file
}

/// A front end's root: `ROOT/NAME/conf/svnserve.conf` lets anyone write.
fn root_with_conf(dir: &Path, id: &str, name: &str) -> PathBuf {
    let root = dir.join(format!("root-{id}"));
    let conf = root.join(name).join("conf");
    std::fs::create_dir_all(&conf).expect("conf dir");
    std::fs::write(
        conf.join("svnserve.conf"),
        "[general]\nanon-access = write\n",
    )
    .expect("svnserve.conf");
    root
}

fn svn(args: &[&str]) -> String {
    Run::tool("svn")
        .args(args)
        .args(["--non-interactive", "--no-auth-cache"])
        .success()
        .stdout_text()
}

#[test]
fn a_commit_through_one_front_end_is_seen_at_once_through_another() {
    let dir = tempdir();
    let etcd = EtcdCluster::start(dir.path(), 3);
    let s3 = S3Server::start(dir.path(), "svelto");
    let files: Vec<PathBuf> = ["a", "b"]
        .iter()
        .map(|id| cluster_file(dir.path(), &etcd, &s3, id))
        .collect();
    let started = Instant::now();
    Run::new(svelto_bin())
        .args(["admin", "create", "--cluster"])
        .arg(&files[0])
        .arg("proj")
        .success();
    eprintln!("admin create --cluster: {:?}", started.elapsed());
    // A second create of the same name is refused, naming it.
    let again = Run::new(svelto_bin())
        .args(["admin", "create", "--cluster"])
        .arg(&files[1])
        .arg("proj")
        .failure();
    assert!(
        again
            .stderr_text()
            .contains("'proj' already exists in the cluster"),
        "{}",
        again.stderr_text()
    );
    let servers: Vec<Svelto> = ["a", "b"]
        .iter()
        .zip(&files)
        .map(|(id, file)| {
            let root = root_with_conf(dir.path(), id, "proj");
            let log = dir.path().join(format!("serve-{id}.log"));
            Svelto::start_with(
                &svelto_bin(),
                &root,
                &log,
                &["--cluster", file.to_str().unwrap()],
            )
        })
        .collect();
    let url = |i: usize| servers[i].url("proj");
    let text = dir.path().join("text");
    for round in 1..=6u64 {
        // Alternate the committing front end: the lease moves between them.
        let (w, r) = if round % 2 == 1 { (0, 1) } else { (1, 0) };
        let body = format!("round {round} through front end {w}\n");
        std::fs::write(&text, &body).expect("text");
        let started = Instant::now();
        let out = Run::tool("svnmucc")
            .args(["--non-interactive", "-m"])
            .arg(format!("round {round}"))
            .arg("put")
            .arg(&text)
            .arg(format!("{}/file.txt", url(w)))
            .success()
            .stdout_text();
        eprintln!(
            "round {round}: commit through {w} in {:?}: {}",
            started.elapsed(),
            out.trim()
        );
        assert!(out.contains(&format!("r{round} committed")), "{out}");
        // At once through the other front end: cat, log and info.
        assert_eq!(svn(&["cat", &format!("{}/file.txt", url(r))]), body);
        let log = svn(&["log", "-q", "-r", "HEAD", &url(r)]);
        assert!(log.contains(&format!("r{round} |")), "{log}");
        let info = svn(&["info", "--show-item", "revision", &url(r)]);
        assert_eq!(info.trim(), round.to_string());
    }
    // A checkout through B holds what A committed last.
    let wc = dir.path().join("wc");
    svn(&["checkout", &url(1), wc.to_str().unwrap()]);
    assert_eq!(
        std::fs::read_to_string(wc.join("file.txt")).expect("file.txt"),
        "round 6 through front end 1\n"
    );
    // Revision property changes are refused clearly, nothing lost silently.
    let hook = dir.path().join("root-a/proj/hooks");
    std::fs::create_dir_all(&hook).expect("hooks");
    let refused = Run::tool("svn")
        .args([
            "propset",
            "--revprop",
            "-r",
            "1",
            "svn:log",
            "changed",
            &url(0),
        ])
        .args(["--non-interactive"])
        .failure();
    eprintln!("revprop change: {}", refused.stderr_text().trim());
    assert_eq!(
        svn(&["propget", "--revprop", "-r", "1", "svn:log", &url(1)]).trim(),
        "round 1"
    );
    drop(servers);
}
