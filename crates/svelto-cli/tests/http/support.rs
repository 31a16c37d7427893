//! What the HTTP suite's modules share, whichever backend the subject serves from (the
//! `http` suite's `svelto serve`, the `memory` suite's front ends in memory): raw requests,
//! keep-alive connections, certificates, password files, the reference's youngest revision.

use std::path::Path;

use svelto_testkit::{Pair, Run};

/// `--config-option` that makes ra_serf ask for send-all (bulk) update reports.
pub const BULK: &str = "servers:global:http-bulk-updates=yes";

/// The scenarios every command is compared on.
pub use svelto_testkit::SMALL_SCENARIOS as ALL;

/// The youngest revision of the pair's repository (from the FSFS side).
pub fn head(pair: &Pair) -> u64 {
    let out = Run::tool("svnlook")
        .arg("youngest")
        .arg(pair.reference_repo())
        .success();
    out.stdout_text()
        .trim()
        .parse()
        .unwrap_or_else(|e| panic!("svnlook youngest printed {:?}: {e}", out.stdout_text()))
}

/// `ADDR` and `/svn/REPO` of side `i`'s URL.
pub fn addr_and_path(pair: &Pair, i: usize) -> (String, String) {
    let url = if i == 0 {
        pair.reference_url()
    } else {
        pair.subject_url()
    };
    let rest = url.strip_prefix("http://").expect("an http URL");
    let (addr, path) = rest.split_at(rest.find('/').expect("a path"));
    (addr.to_string(), path.to_string())
}

/// Sends one request (header lines as raw bytes) on a new connection and returns the
/// status and the whole response.
pub fn raw_request(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[&[u8]],
    body: &[u8],
) -> (u16, String) {
    use std::io::{Read, Write};
    let mut stream =
        std::net::TcpStream::connect(addr).unwrap_or_else(|e| panic!("connect {addr}: {e}"));
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .expect("read timeout");
    let mut head =
        format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n").into_bytes();
    let mut has_length = false;
    for h in headers {
        has_length |= h.to_ascii_lowercase().starts_with(b"content-length");
        head.extend_from_slice(h);
        head.extend_from_slice(b"\r\n");
    }
    if !has_length {
        head.extend_from_slice(format!("Content-Length: {}\r\n", body.len()).as_bytes());
    }
    head.extend_from_slice(b"\r\n");
    stream.write_all(&head).expect("write head");
    let _ = stream.write_all(body);
    let mut out = Vec::new();
    let _ = stream.read_to_end(&mut out);
    let text = String::from_utf8_lossy(&out).into_owned();
    (status_of(&text), text)
}

/// A chunked body's data.
/// A raw response's head and its body as text, dechunked when it came in chunks.
pub fn head_and_body(text: &str) -> (&str, String) {
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((text, ""));
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        String::from_utf8_lossy(&dechunk(body.as_bytes())).into_owned()
    } else {
        body.to_string()
    };
    (head, body)
}

pub fn dechunk(mut rest: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let eol = rest
            .windows(2)
            .position(|w| w == b"\r\n")
            .expect("a chunk's size line");
        let size = std::str::from_utf8(&rest[..eol])
            .ok()
            .and_then(|s| usize::from_str_radix(s.split(';').next()?.trim(), 16).ok())
            .expect("a chunk size");
        rest = &rest[eol + 2..];
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&rest[..size]);
        rest = &rest[size + 2..];
    }
}

/// The status code of a response (its status line first in `text`).
pub fn status_of(text: &str) -> u16 {
    text.split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {text:?}"))
}

/// One keep-alive connection: requests sent one after the other on it, answered in turn.
pub struct KeepAlive {
    stream: std::net::TcpStream,
    pub addr: String,
}

impl KeepAlive {
    pub fn open(addr: &str) -> KeepAlive {
        let stream = std::net::TcpStream::connect(addr).unwrap_or_else(|e| panic!("{addr}: {e}"));
        stream
            .set_read_timeout(Some(std::time::Duration::from_secs(30)))
            .expect("read timeout");
        KeepAlive {
            stream,
            addr: addr.to_string(),
        }
    }

    /// Whether the server has closed the connection (a read finds its end within two
    /// seconds).
    pub fn closed_by_server(&mut self) -> bool {
        use std::io::Read;
        self.stream
            .set_read_timeout(Some(std::time::Duration::from_secs(2)))
            .expect("read timeout");
        let mut byte = [0u8; 1];
        match self.stream.read(&mut byte) {
            Ok(0) => true,
            Ok(_) => false,
            Err(e) => !matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ),
        }
    }

    /// `GET path` with `headers` (raw lines): the status, and whether the server keeps the
    /// connection open.
    pub fn get(&mut self, path: &str, headers: &[Vec<u8>]) -> (u16, bool) {
        let (status, open, _) = self.fetch(path, headers);
        (status, open)
    }

    /// `GET path` with `headers`: the status, whether the server keeps the connection open,
    /// and the body.
    pub fn fetch(&mut self, path: &str, headers: &[Vec<u8>]) -> (u16, bool, Vec<u8>) {
        use std::io::{Read, Write};
        let mut head = format!("GET {path} HTTP/1.1\r\nHost: {}\r\n", self.addr).into_bytes();
        for h in headers {
            head.extend_from_slice(h);
            head.extend_from_slice(b"\r\n");
        }
        head.extend_from_slice(b"\r\n");
        self.stream.write_all(&head).expect("write the request");
        let mut buf = Vec::new();
        let mut byte = [0u8; 1];
        while !buf.ends_with(b"\r\n\r\n") {
            let n = self.stream.read(&mut byte).expect("read the response");
            assert_eq!(n, 1, "the connection closed in a response head: {buf:?}");
            buf.push(byte[0]);
        }
        let text = String::from_utf8_lossy(&buf).to_ascii_lowercase();
        let status = status_of(&text);
        let header = |name: &str| {
            text.lines().find_map(|l| {
                let (n, v) = l.split_once(':')?;
                (n.trim() == name).then(|| v.trim().to_string())
            })
        };
        let mut body = Vec::new();
        if header("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
            loop {
                let mut line = Vec::new();
                while !line.ends_with(b"\r\n") {
                    self.stream
                        .read_exact(&mut byte)
                        .expect("read a chunk size");
                    line.push(byte[0]);
                }
                let size = usize::from_str_radix(
                    String::from_utf8_lossy(&line)
                        .trim()
                        .split(';')
                        .next()
                        .unwrap_or(""),
                    16,
                )
                .expect("a chunk size");
                let mut chunk = vec![0u8; size + 2];
                self.stream.read_exact(&mut chunk).expect("read a chunk");
                if size == 0 {
                    break;
                }
                body.extend_from_slice(&chunk[..size]);
            }
        } else {
            let len: usize = header("content-length").map_or(0, |v| v.parse().expect("length"));
            body = vec![0u8; len];
            self.stream.read_exact(&mut body).expect("read the body");
        }
        let open = !header("connection").is_some_and(|v| v.contains("close"));
        (status, open, body)
    }
}

/// A self-signed certificate for `cn` and its key, `DIR/cert.pem` and `DIR/key.pem`, made
/// by openssl.
pub fn self_signed(dir: &Path, cn: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    self_signed_with(dir, cn, &[])
}

/// [`self_signed`] with more arguments to `openssl req` (`-addext ...`).
pub fn self_signed_with(
    dir: &Path,
    cn: &str,
    more: &[&str],
) -> (std::path::PathBuf, std::path::PathBuf) {
    svelto_testkit::require_tool("openssl");
    let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    Run::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
        ])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .arg("-subj")
        .arg(format!("/CN={cn}"))
        .args(more)
        .success();
    (cert, key)
}

/// Writes `file` with Debian's `htpasswd`: each (user, password, hash flag: -B, -m, -s...).
pub fn htpasswd(file: &Path, users: &[(&str, &str, &str)]) {
    svelto_testkit::require_tool("htpasswd");
    let _ = std::fs::remove_file(file);
    for (i, (user, password, flag)) in users.iter().enumerate() {
        let mut run = Run::new("htpasswd");
        if i == 0 {
            run = run.arg("-c");
        }
        run.args(["-b", flag])
            .arg(file)
            .args([*user, *password])
            .success();
    }
}

/// An HTTP pair where `alice` (`apw`) and `bob` (`bpw`) log in and write, and anonymous
/// users only read (Apache: `Satisfy Any` with an authz file giving writes to the two;
/// Svelto: the same authz file, `anon-access = read`, `auth-access = write`).
pub fn users_pair() -> Pair {
    let pair = Pair::http_auth_with("basic", crate::subject(), true);
    crate::htpasswd(
        &pair.htpasswd(),
        &[("alice", "apw", "-B"), ("bob", "bpw", "-m")],
    );
    for repo in [pair.reference_repo(), pair.subject_repo()] {
        let conf = repo.join("conf");
        std::fs::write(
            conf.join("svnserve.conf"),
            "[general]\nanon-access = read\nauth-access = write\nauthz-db = authz\n\
             realm = Svelto test realm\n",
        )
        .expect("write svnserve.conf");
        std::fs::write(conf.join("authz"), "[/]\n* = r\nalice = rw\nbob = rw\n")
            .expect("write authz");
    }
    pair
}

/// The `Authorization:` header line of HTTP Basic for `user`.
pub fn basic(user: &str, password: &str) -> String {
    use base64::Engine as _;
    format!(
        "Authorization: Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"))
    )
}
