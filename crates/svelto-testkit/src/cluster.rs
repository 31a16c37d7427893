//! The cluster's real components on 127.0.0.1 (docs/cluster.md, "Test rig"): three etcd
//! members (Debian's `etcd-server`), each with its data in the test's directory and on free
//! ports, each killable with SIGKILL and restartable on its data, under the same watchdog as
//! the other servers so none outlives the test process.
//!
//! The rig needs no client library: it asks etcd members for their status over etcd's JSON
//! gateway with a plain HTTP request. The tests that use the rig bring their own clients
//! (the ones the backend will use).
//!
//! Must not: skip when etcd is missing (it panics, saying what to install).

use std::ffi::OsString;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::serve::{free_port, spawn_watched, Server, ServerKind};

/// Debian's etcd server binary (package `etcd-server`).
pub const ETCD_BINARY: &str = "/usr/bin/etcd";

/// How long a member may take to come up.
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
        require_etcd();
        assert!(size >= 1, "an etcd cluster has at least one member");
        let mut members = Vec::with_capacity(size);
        for i in 0..size {
            let name = format!("m{i}");
            let data_dir = dir.join(format!("etcd-{name}"));
            members.push(Member {
                name,
                client_port: free_port(),
                peer_port: free_port(),
                data_dir,
                server: None,
            });
        }
        let initial_cluster = members
            .iter()
            .map(|m| format!("{}=http://127.0.0.1:{}", m.name, m.peer_port))
            .collect::<Vec<_>>()
            .join(",");
        let mut cluster = EtcdCluster {
            members,
            initial_cluster,
        };
        // All members first: each waits for the others' peer ports.
        for i in 0..size {
            cluster.spawn(i);
        }
        for i in 0..size {
            cluster.wait_serving(i);
        }
        cluster.wait_leader(START_TIMEOUT);
        cluster
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
            child: watched.child,
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
