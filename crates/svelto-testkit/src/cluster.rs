//! The cluster's real components on 127.0.0.1 (docs/cluster.md, "Test rig"): three etcd
//! members (Debian's `etcd-server`) and an S3-compatible object store (SeaweedFS's `weed`,
//! built by `scripts/s3-server`), each with its data in the test's directory and on free
//! ports, each killable with SIGKILL and restartable on its data, under the same watchdog as
//! the other servers so none outlives the test process.
//!
//! The rig needs no client library: it asks etcd members for their status over etcd's JSON
//! gateway with a plain HTTP request, and creates the S3 bucket with `weed shell`. The tests
//! that use the rig bring their own clients (the ones the backend will use).
//!
//! Must not: skip when etcd or weed is missing (it panics, saying what to install).

use std::ffi::OsString;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::serve::{can_connect, free_ports, spawn_watched, Server, ServerKind};

/// Debian's etcd server binary (package `etcd-server`).
pub const ETCD_BINARY: &str = "/usr/bin/etcd";

/// How long a member or the object store may take to come up.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// Panics, saying what to install, unless Debian's etcd is there.
pub fn require_etcd() -> &'static Path {
    let path = Path::new(ETCD_BINARY);
    if !path.is_file() {
        panic!(
            "\n\n*** etcd ({ETCD_BINARY}) is required for the cluster tests: \
             apt-get install etcd-server (or run scripts/setup) ***\n"
        );
    }
    path
}

/// One etcd member: its name, ports and data directory stay the same across restarts.
struct Member {
    name: String,
    client_port: u16,
    peer_port: u16,
    data_dir: PathBuf,
    server: Option<Server>,
}

/// A cluster of etcd members on 127.0.0.1 (see the module doc).
pub struct EtcdCluster {
    members: Vec<Member>,
    initial_cluster: String,
}

/// What one member says of itself (etcd's `Maintenance/Status`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EtcdStatus {
    /// This member's id.
    pub member_id: u64,
    /// The id of the member it takes for the leader (0: none).
    pub leader: u64,
    /// The raft term it is in.
    pub raft_term: u64,
}

impl EtcdCluster {
    /// Starts `size` members with their data under `dir` and waits until they have
    /// elected a leader. Panics with the members' output if they do not within a minute.
    pub fn start(dir: &Path, size: usize) -> EtcdCluster {
        let mut cluster = EtcdCluster::members(dir, size);
        cluster.spawn_all();
        cluster
    }

    /// Starts `size` new members (new names' data directories under `dir`, new ports) on
    /// the keys of `snapshot` (`etcdctl snapshot save`), as an administrator restores a
    /// backup: `etcdctl snapshot restore` into each member's data directory, then the
    /// members. Panics with etcdctl's output if a restore fails.
    pub fn restore(dir: &Path, size: usize, snapshot: &Path) -> EtcdCluster {
        let mut cluster = EtcdCluster::members(dir, size);
        for m in &cluster.members {
            let out = Command::new("etcdctl")
                .env("ETCDCTL_API", "3")
                .arg("snapshot")
                .arg("restore")
                .arg(snapshot)
                .args([
                    "--name",
                    &m.name,
                    "--initial-cluster",
                    &cluster.initial_cluster,
                ])
                .args(["--initial-cluster-token", "svelto-test"])
                .arg("--initial-advertise-peer-urls")
                .arg(format!("http://127.0.0.1:{}", m.peer_port))
                .arg("--data-dir")
                .arg(&m.data_dir)
                .output()
                .unwrap_or_else(|e| {
                    panic!("cannot run etcdctl (apt-get install etcd-client): {e}")
                });
            assert!(
                out.status.success(),
                "etcdctl snapshot restore {snapshot:?} for member {}: {}\n{}",
                m.name,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        cluster.spawn_all();
        cluster
    }

    /// The members' names, ports and data directories, none started.
    fn members(dir: &Path, size: usize) -> EtcdCluster {
        require_etcd();
        assert!(size >= 1, "an etcd cluster has at least one member");
        let mut members = Vec::with_capacity(size);
        let ports = free_ports(2 * size);
        for i in 0..size {
            let name = format!("m{i}");
            let data_dir = dir.join(format!("etcd-{name}"));
            members.push(Member {
                name,
                client_port: ports[2 * i],
                peer_port: ports[2 * i + 1],
                data_dir,
                server: None,
            });
        }
        let initial_cluster = members
            .iter()
            .map(|m| format!("{}=http://127.0.0.1:{}", m.name, m.peer_port))
            .collect::<Vec<_>>()
            .join(",");
        EtcdCluster {
            members,
            initial_cluster,
        }
    }

    /// Starts every member, then waits until they serve and have elected a leader.
    fn spawn_all(&mut self) {
        // All members first: each waits for the others' peer ports.
        for i in 0..self.members.len() {
            self.spawn(i);
        }
        for i in 0..self.members.len() {
            self.wait_serving(i);
        }
        self.wait_leader(START_TIMEOUT);
    }

    fn spawn(&mut self, i: usize) {
        let m = &self.members[i];
        let client = format!("http://127.0.0.1:{}", m.client_port);
        let peer = format!("http://127.0.0.1:{}", m.peer_port);
        // etcd's own defaults for heartbeat (100 ms) and election timeout (1000 ms): the
        // figures the tests measure are those an installation gets.
        let args: Vec<OsString> = [
            "--name",
            &m.name,
            "--data-dir",
            &m.data_dir.to_string_lossy(),
            "--listen-client-urls",
            &client,
            "--advertise-client-urls",
            &client,
            "--listen-peer-urls",
            &peer,
            "--initial-advertise-peer-urls",
            &peer,
            "--initial-cluster",
            &self.initial_cluster,
            // Ignored by a member that restarts on its data directory.
            "--initial-cluster-state",
            "new",
            "--initial-cluster-token",
            "svelto-test",
            "--logger",
            "zap",
            "--log-outputs",
            "stderr",
        ]
        .iter()
        .map(OsString::from)
        .collect();
        let watched = spawn_watched(Path::new(ETCD_BINARY), &args);
        let m = &mut self.members[i];
        m.server = Some(Server {
            kind: ServerKind::Etcd,
            child: Some(watched.child),
            in_process: None,
            stdin: Some(watched.stdin),
            pid: watched.pid,
            port: m.client_port,
            base_url: client,
            root: m.data_dir.clone(),
            log: watched.log,
            log_file: None,
        });
    }

    fn wait_serving(&mut self, i: usize) {
        let name = self.members[i].name.clone();
        if let Some(server) = self.members[i].server.as_mut() {
            server.wait_listening(&format!("etcd member {name}"));
        }
    }

    /// How many members the cluster was started with.
    pub fn size(&self) -> usize {
        self.members.len()
    }

    /// The client URLs of every member (`http://127.0.0.1:PORT`), killed ones included.
    pub fn endpoints(&self) -> Vec<String> {
        (0..self.members.len()).map(|i| self.endpoint(i)).collect()
    }

    /// The client URL of member `i`.
    pub fn endpoint(&self, i: usize) -> String {
        format!("http://127.0.0.1:{}", self.members[i].client_port)
    }

    /// Whether member `i` runs (it was not killed, or was restarted).
    pub fn is_running(&self, i: usize) -> bool {
        self.members[i]
            .server
            .as_ref()
            .is_some_and(Server::is_running)
    }

    /// The pid of member `i`'s etcd process, if it runs.
    pub fn pid(&self, i: usize) -> Option<u32> {
        self.members[i].server.as_ref().map(Server::pid)
    }

    /// Member `i`'s status, or why it could not be had (killed, not answering).
    pub fn status(&self, i: usize) -> Result<EtcdStatus, String> {
        let port = self.members[i].client_port;
        let body = post_json(port, "/v3/maintenance/status", "{}")?;
        let field = |name: &str| -> Result<u64, String> {
            json_number(&body, name)
                .ok_or_else(|| format!("member {i}'s status has no {name}: {body}"))
        };
        Ok(EtcdStatus {
            member_id: field("member_id")?,
            leader: field("leader")?,
            raft_term: field("raft_term")?,
        })
    }

    /// The index of the member that running members agree is the leader, if any.
    pub fn leader(&self) -> Option<usize> {
        let statuses: Vec<(usize, EtcdStatus)> = (0..self.members.len())
            .filter(|&i| self.is_running(i))
            .filter_map(|i| self.status(i).ok().map(|s| (i, s)))
            .collect();
        let (_, newest) = statuses.iter().max_by_key(|(_, s)| s.raft_term)?;
        if newest.leader == 0 {
            return None;
        }
        statuses
            .iter()
            .find(|(_, s)| s.member_id == newest.leader)
            .map(|(i, _)| *i)
    }

    /// Waits until a running member is leader, up to `timeout`; returns its index. Panics
    /// with the members' output if none is.
    pub fn wait_leader(&self, timeout: Duration) -> usize {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(leader) = self.leader() {
                return leader;
            }
            if Instant::now() > deadline {
                panic!("no etcd leader after {timeout:?}:\n{}", self.diagnostics());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Kills member `i` with SIGKILL (no shutdown of any kind) and waits until it is gone.
    pub fn kill(&mut self, i: usize) {
        if let Some(mut server) = self.members[i].server.take() {
            server.kill_hard();
        }
    }

    /// Restarts member `i` (killed before) on its data directory and ports, and waits
    /// until it listens.
    pub fn restart(&mut self, i: usize) {
        assert!(
            self.members[i].server.is_none(),
            "etcd member {i} is still running"
        );
        self.spawn(i);
        self.wait_serving(i);
    }

    /// Every member's recent output, for failure messages.
    pub fn diagnostics(&self) -> String {
        self.members
            .iter()
            .map(|m| match &m.server {
                Some(server) => server.diagnostics(),
                None => format!("etcd member {}: killed", m.name),
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// The environment variable naming a `weed` binary to use instead of the one
/// `scripts/s3-server` builds and caches.
pub const WEED_ENV: &str = "SVELTO_WEED";

/// The `weed` binary: `$SVELTO_WEED`, else the one `scripts/s3-server --installed` names.
/// Panics, saying how to get it, when neither is there.
pub fn require_weed() -> PathBuf {
    if let Some(path) = std::env::var_os(WEED_ENV) {
        let path = PathBuf::from(path);
        if path.is_file() {
            return path;
        }
        panic!("\n\n*** {WEED_ENV}={path:?} is not a file ***\n");
    }
    let script = repository_root().join("scripts/s3-server");
    let output = Command::new(&script)
        .arg("--installed")
        .stderr(Stdio::piped())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {script:?}: {e}"));
    let path = PathBuf::from(String::from_utf8_lossy(&output.stdout).trim());
    if !output.status.success() || !path.is_file() {
        panic!(
            "\n\n*** SeaweedFS's weed (the S3-compatible server) is required for the cluster \
             tests: run scripts/setup (or scripts/s3-server, which builds it once), or set \
             {WEED_ENV}; {script:?} said: {} ***\n",
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    path
}

fn repository_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("the testkit lives at crates/svelto-testkit")
        .to_owned()
}

/// SeaweedFS's S3 gateway, master, volume server and filer in one `weed server` process,
/// with one bucket and one set of credentials (see the module doc).
pub struct S3Server {
    weed: PathBuf,
    dir: PathBuf,
    ports: WeedPorts,
    bucket: String,
    server: Option<Server>,
}

/// Every port `weed server` listens on: it would otherwise pick gRPC ports at its HTTP
/// ports plus 10000, which may be taken or out of range.
#[derive(Debug, Clone, Copy)]
struct WeedPorts {
    master: u16,
    master_grpc: u16,
    volume: u16,
    volume_grpc: u16,
    filer: u16,
    filer_grpc: u16,
    s3: u16,
    s3_grpc: u16,
}

/// The access key of the rig's S3 identity.
pub const S3_ACCESS_KEY: &str = "svelto-test-access";
/// Its secret key.
pub const S3_SECRET_KEY: &str = "svelto-test-secret-0123456789";
/// The region S3 clients should sign for.
pub const S3_REGION: &str = "us-east-1";

impl S3Server {
    /// Starts `weed server` with its data under `dir` and creates `bucket`. Panics with its
    /// output if it does not serve within a minute.
    pub fn start(dir: &Path, bucket: &str) -> S3Server {
        let weed = require_weed();
        let dir = dir.join("weed");
        for sub in ["data", "master"] {
            let path = dir.join(sub);
            std::fs::create_dir_all(&path)
                .unwrap_or_else(|e| panic!("cannot create {path:?}: {e}"));
        }
        let identities = format!(
            r#"{{"identities":[{{"name":"svelto","credentials":[{{"accessKey":"{S3_ACCESS_KEY}","secretKey":"{S3_SECRET_KEY}"}}],"actions":["Admin","Read","List","Tagging","Write"]}}]}}"#
        );
        let config = dir.join("s3.json");
        std::fs::write(&config, identities)
            .unwrap_or_else(|e| panic!("cannot write {config:?}: {e}"));
        let p = free_ports(8);
        let ports = WeedPorts {
            master: p[0],
            master_grpc: p[1],
            volume: p[2],
            volume_grpc: p[3],
            filer: p[4],
            filer_grpc: p[5],
            s3: p[6],
            s3_grpc: p[7],
        };
        let mut s3 = S3Server {
            weed,
            dir,
            ports,
            bucket: bucket.to_owned(),
            server: None,
        };
        s3.spawn();
        s3.wait_serving();
        s3.create_bucket();
        s3
    }

    fn spawn(&mut self) {
        let p = self.ports;
        let config = self.dir.join("s3.json");
        let args: Vec<OsString> = [
            "server".to_owned(),
            format!("-dir={}", self.dir.join("data").display()),
            "-ip=127.0.0.1".to_owned(),
            "-ip.bind=127.0.0.1".to_owned(),
            format!("-master.port={}", p.master),
            format!("-master.port.grpc={}", p.master_grpc),
            // Small volumes: the default (30 GB each) is meant for production disks.
            "-master.volumeSizeLimitMB=64".to_owned(),
            format!("-master.dir={}", self.dir.join("master").display()),
            // The single master's raft election after a restart on its data: with the
            // default 10 s, weed refused PUTs for 27-35 s after a restart ("raft.Server:
            // Not current leader" while it re-elected itself), though it served GETs.
            "-master.electionTimeout=1s".to_owned(),
            format!("-volume.port={}", p.volume),
            format!("-volume.port.grpc={}", p.volume_grpc),
            "-volume.max=16".to_owned(),
            // Stop at once on SIGTERM (the default waits 10 s for the master to notice).
            "-volume.preStopSeconds=0".to_owned(),
            "-filer".to_owned(),
            format!("-filer.port={}", p.filer),
            format!("-filer.port.grpc={}", p.filer_grpc),
            "-s3".to_owned(),
            format!("-s3.port={}", p.s3),
            format!("-s3.port.grpc={}", p.s3_grpc),
            // Off: fixed default ports that concurrent tests would fight over.
            "-s3.port.iceberg=0".to_owned(),
            "-s3.port.lance=0".to_owned(),
            format!("-s3.config={}", config.display()),
        ]
        .into_iter()
        .map(OsString::from)
        .collect();
        let watched = spawn_watched(&self.weed, &args);
        self.server = Some(Server {
            kind: ServerKind::S3,
            child: Some(watched.child),
            in_process: None,
            stdin: Some(watched.stdin),
            pid: watched.pid,
            port: p.s3,
            base_url: format!("http://127.0.0.1:{}", p.s3),
            root: self.dir.clone(),
            log: watched.log,
            log_file: None,
        });
    }

    /// Waits until every part listens and the S3 gateway answers a request.
    fn wait_serving(&mut self) {
        let ports = self.ports;
        let server = self.server.as_mut().expect("started");
        for (what, port) in [
            ("weed master", ports.master),
            ("weed volume server", ports.volume),
            ("weed filer", ports.filer),
            ("weed S3 gateway", ports.s3),
        ] {
            let deadline = Instant::now() + START_TIMEOUT;
            while !can_connect(port) {
                if !server.is_alive() || Instant::now() > deadline {
                    panic!(
                        "{what} did not listen on 127.0.0.1:{port}:\n{}",
                        server.diagnostics()
                    );
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        // The gateway listens before it has found the filer: wait for an answer to an
        // (unsigned, so refused) request that says it serves.
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            match http_request(ports.s3, "GET", "/", "") {
                Ok(reply) if reply.starts_with("HTTP/1.") && !reply.contains(" 503 ") => break,
                other if Instant::now() > deadline => panic!(
                    "weed's S3 gateway does not answer ({other:?}):\n{}",
                    server.diagnostics()
                ),
                _ => std::thread::sleep(Duration::from_millis(50)),
            }
        }
    }

    /// Creates the bucket with `weed shell` (the rig has no S3 client of its own).
    fn create_bucket(&self) {
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            let mut shell = Command::new(&self.weed)
                .arg("shell")
                .arg(format!(
                    "-master=127.0.0.1:{}.{}",
                    self.ports.master, self.ports.master_grpc
                ))
                .arg(format!(
                    "-filer=127.0.0.1:{}.{}",
                    self.ports.filer, self.ports.filer_grpc
                ))
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap_or_else(|e| panic!("cannot run {:?} shell: {e}", self.weed));
            let script = format!(
                "s3.bucket.create -name {} -owner svelto\nexit\n",
                self.bucket
            );
            if let Some(mut stdin) = shell.stdin.take() {
                let _ = stdin.write_all(script.as_bytes());
            }
            let output = shell
                .wait_with_output()
                .unwrap_or_else(|e| panic!("weed shell failed to run: {e}"));
            let said = format!(
                "{}{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            );
            if self.bucket_exists() {
                return;
            }
            if Instant::now() > deadline {
                panic!(
                    "weed shell could not create bucket {}: {said}\n{}",
                    self.bucket,
                    self.diagnostics()
                );
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Whether the bucket's directory exists in the filer.
    fn bucket_exists(&self) -> bool {
        http_request(
            self.ports.filer,
            "GET",
            &format!("/buckets/{}/?limit=1", self.bucket),
            "",
        )
        .is_ok_and(|reply| reply.starts_with("HTTP/1.1 200") || reply.starts_with("HTTP/1.0 200"))
    }

    /// The S3 endpoint, `http://127.0.0.1:PORT` (path-style addressing).
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.ports.s3)
    }

    /// The bucket the rig created.
    pub fn bucket(&self) -> &str {
        &self.bucket
    }

    /// Whether the process runs (it was not killed, or was restarted).
    pub fn is_running(&self) -> bool {
        self.server.as_ref().is_some_and(Server::is_running)
    }

    /// The `weed` process, while it runs (pid, memory, output).
    pub fn server(&self) -> Option<&Server> {
        self.server.as_ref()
    }

    /// Kills `weed` with SIGKILL and waits until it is gone.
    pub fn kill(&mut self) {
        if let Some(mut server) = self.server.take() {
            server.kill_hard();
        }
    }

    /// Restarts `weed` (killed before) on its data and ports, and waits until it serves.
    pub fn restart(&mut self) {
        assert!(self.server.is_none(), "weed is still running");
        self.spawn();
        self.wait_serving();
    }

    /// The process's recent output, for failure messages.
    pub fn diagnostics(&self) -> String {
        match &self.server {
            Some(server) => server.diagnostics(),
            None => "weed: killed".to_owned(),
        }
    }
}

/// POSTs `body` to `path` on 127.0.0.1:`port` and returns the response body, or why not.
fn post_json(port: u16, path: &str, body: &str) -> Result<String, String> {
    let reply = http_request(port, "POST", path, body)?;
    let (head, body) = reply
        .split_once("\r\n\r\n")
        .ok_or_else(|| format!("no end of headers in {reply:?}"))?;
    if !head.starts_with("HTTP/1.0 200") && !head.starts_with("HTTP/1.1 200") {
        return Err(format!("{path}: {head}"));
    }
    Ok(body.to_owned())
}

/// One HTTP/1.0 request (so the answer comes unchunked, ending with the connection), with
/// short timeouts: the rig asks components that may just have been killed.
fn http_request(port: u16, method: &str, path: &str, body: &str) -> Result<String, String> {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_millis(500))
        .map_err(|e| format!("connect to {addr}: {e}"))?;
    let timeout = Some(Duration::from_secs(2));
    stream
        .set_read_timeout(timeout)
        .and_then(|()| stream.set_write_timeout(timeout))
        .map_err(|e| format!("timeouts on {addr}: {e}"))?;
    let request = format!(
        "{method} {path} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream
        .write_all(request.as_bytes())
        .map_err(|e| format!("write to {addr}: {e}"))?;
    let mut reply = Vec::new();
    stream
        .take(1 << 20)
        .read_to_end(&mut reply)
        .map_err(|e| format!("read from {addr}: {e}"))?;
    Ok(String::from_utf8_lossy(&reply).into_owned())
}

/// The number in `"name":"123"` or `"name":123` of a flat JSON text (etcd's gateway quotes
/// 64-bit numbers).
fn json_number(json: &str, name: &str) -> Option<u64> {
    let key = format!("\"{name}\":");
    let rest = &json[json.find(&key)? + key.len()..];
    let rest = rest.trim_start().trim_start_matches('"');
    let end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    rest[..end].parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_numbers_quoted_or_not() {
        let status = r#"{"header":{"cluster_id":"1","member_id":"8645782499530242234","raft_term":"2"},"leader":"11539305337000706507","n":7}"#;
        assert_eq!(json_number(status, "member_id"), Some(8645782499530242234));
        assert_eq!(json_number(status, "leader"), Some(11539305337000706507));
        assert_eq!(json_number(status, "n"), Some(7));
        assert_eq!(json_number(status, "missing"), None);
    }
}
