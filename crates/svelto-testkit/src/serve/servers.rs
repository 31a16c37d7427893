//! The servers under test: a watchdog that ends them with the test process, `svnserve`
//! over FSFS and `svelto serve`, each on a free port of 127.0.0.1.

use super::*;

/// How long a server may take to start listening.
pub(super) const START_TIMEOUT: Duration = Duration::from_secs(60);

/// How long one client command may run against a test server.
pub const CLIENT_TIMEOUT: Duration = Duration::from_secs(120);

/// The environment variable that makes comparisons print differences (to
/// standard error, each starting `=== DIFFERENCE:`) and go on, instead of
/// failing the test at the first one: `SVELTO_HARNESS_KEEP_GOING=1 cargo test
/// ... -- --nocapture` lists every comparison that fails.
pub const KEEP_GOING_ENV: &str = "SVELTO_HARNESS_KEEP_GOING";

pub(super) fn keep_going() -> bool {
    static KEEP_GOING: OnceLock<bool> = OnceLock::new();
    *KEEP_GOING
        .get_or_init(|| std::env::var(KEEP_GOING_ENV).is_ok_and(|v| !v.is_empty() && v != "0"))
}

/// The environment variable that makes [`Pair::new`] run svnserve on both
/// sides, to check the harness itself (`SVELTO_HARNESS_SELFTEST=1`).
pub const SELFTEST_ENV: &str = "SVELTO_HARNESS_SELFTEST";

/// The watchdog: runs the server (`"$@"`) in the background with its
/// standard output joined to its standard error, prints the server's pid on
/// its own standard output (so the pid never mixes with what the server
/// writes), and kills the server when its own standard input reaches end of
/// file (the test process closed the pipe, or died). Exits with the server's
/// status.
pub(super) const WATCHDOG: &str = r#"exec 3<&0
"$@" </dev/null 3<&- 1>&2 &
server=$!
echo "$server"
( read -r _ <&3; kill "$server" 2>/dev/null ) &
watcher=$!
wait "$server"
status=$?
kill "$watcher" 2>/dev/null
exit "$status"
"#;

/// Which program a [`Server`] runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerKind {
    Svnserve,
    Svelto,
    /// Apache httpd with mod_dav_svn (`http://`).
    Apache,
    /// nginx as a reverse proxy.
    Nginx,
    /// An etcd member (`cluster.rs`).
    Etcd,
    /// SeaweedFS's `weed` as the S3-compatible object store (`cluster.rs`).
    S3,
    /// Svelto's front ends run by the test process itself over the in-memory backend
    /// ([`ServeInProcess`]).
    SveltoInMemory,
}

impl ServerKind {
    pub fn name(self) -> &'static str {
        match self {
            ServerKind::Svnserve => "svnserve",
            ServerKind::Svelto => "svelto",
            ServerKind::Apache => "apache",
            ServerKind::Nginx => "nginx",
            ServerKind::Etcd => "etcd",
            ServerKind::S3 => "weed",
            ServerKind::SveltoInMemory => "svelto (in memory)",
        }
    }
}

/// A running svn:// server on 127.0.0.1, killed on drop: a process of its own, or one the
/// test process runs ([`ServeInProcess`], which has no process id, cannot be killed and
/// whose standard error is its log).
pub struct Server {
    pub(crate) kind: ServerKind,
    /// The watchdog (None: the server runs in this process).
    pub(crate) child: Option<Child>,
    /// An in-process server's handle: dropping it stops the server.
    pub(crate) in_process: Option<Box<dyn std::any::Any + Send + Sync>>,
    pub(crate) stdin: Option<ChildStdin>,
    pub(crate) pid: u32,
    pub(crate) port: u16,
    pub(crate) base_url: String,
    pub(crate) root: PathBuf,
    pub(crate) log: Arc<Mutex<Vec<u8>>>,
    pub(crate) log_file: Option<PathBuf>,
}

impl Server {
    pub fn kind(&self) -> ServerKind {
        self.kind
    }

    /// `svn://127.0.0.1:PORT`, without a trailing slash.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// `svn://127.0.0.1:PORT/NAME`: the URL of the repository `NAME` under
    /// the server's root.
    pub fn url(&self, repo_name: &str) -> String {
        format!("{}/{}", self.base_url, repo_name)
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.port))
    }

    /// The pid of the server process itself (not of its watchdog). Panics for a server
    /// running in the test process: what a test does to the process (kill it, read its
    /// memory) cannot be done to it.
    pub fn pid(&self) -> u32 {
        self.process_pid()
    }

    fn process_pid(&self) -> u32 {
        assert!(
            self.child.is_some(),
            "{} runs in the test process: it has no process of its own to kill or measure",
            self.kind.name()
        );
        self.pid
    }

    /// Whether the server runs in the test process ([`ServeInProcess`]).
    pub fn is_in_process(&self) -> bool {
        self.child.is_none()
    }

    /// The `-r` root the server serves.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Whether the server process is still running.
    pub fn is_alive(&mut self) -> bool {
        match &mut self.child {
            Some(child) => matches!(child.try_wait(), Ok(None)),
            None => true,
        }
    }

    /// Whether the server process is still running, without `&mut`: looks at
    /// `/proc/PID`.
    pub fn is_running(&self) -> bool {
        if self.child.is_none() {
            return true;
        }
        std::fs::read_to_string(format!("/proc/{}/stat", self.pid))
            .map(|stat| {
                // The state follows the parenthesised command name.
                let state = stat.rsplit(')').next().unwrap_or("").trim_start();
                !state.starts_with('Z') && !state.starts_with('X')
            })
            .unwrap_or(false)
    }

    /// Kills the server with SIGKILL (no shutdown of any kind, as a crash or the kernel's
    /// OOM killer would) and waits until it and its watchdog are gone.
    pub fn kill_hard(&mut self) {
        let pid = self.process_pid();
        let _ = Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .stderr(Stdio::null())
            .status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.is_running() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        drop(self.stdin.take());
        if let Some(child) = &mut self.child {
            let _ = child.wait();
        }
    }

    /// What the server wrote to standard error (and standard output) so far.
    pub fn stderr_text(&self) -> String {
        let log = self.log.lock().unwrap_or_else(|e| e.into_inner());
        String::from_utf8_lossy(&log).into_owned()
    }

    /// The `--log-file` the server writes, if it was given one.
    pub fn log_file(&self) -> Option<&Path> {
        self.log_file.as_deref()
    }

    /// The server's standard error and its log file, for failure messages.
    pub fn diagnostics(&self) -> String {
        let mut out = format!(
            "{} (pid {}, {}) stderr:\n{}",
            self.kind.name(),
            self.pid,
            self.base_url,
            tail_text(&self.stderr_text(), 4000)
        );
        if let Some(file) = &self.log_file {
            let text = std::fs::read(file)
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .unwrap_or_else(|e| format!("(cannot read {file:?}: {e})"));
            let _ = write!(out, "\nlog file {file:?}:\n{}", tail_text(&text, 4000));
        }
        out
    }

    /// Peak resident set size of the server process, in KiB.
    pub fn peak_rss_kib(&self) -> Option<u64> {
        crate::run::read_vm_hwm_kib(self.process_pid())
    }

    /// Current resident set size of the server process, in KiB.
    pub fn rss_kib(&self) -> Option<u64> {
        let status =
            std::fs::read_to_string(format!("/proc/{}/status", self.process_pid())).ok()?;
        status
            .lines()
            .find_map(|line| line.strip_prefix("VmRSS:"))
            .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // An in-process server stops when its handle goes.
        drop(self.in_process.take());
        let Some(child) = &mut self.child else {
            return;
        };
        // Closing the watchdog's standard input makes it kill the server.
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            match child.try_wait() {
                Ok(Some(_)) | Err(_) => return,
                Ok(None) if Instant::now() > deadline => break,
                Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            }
        }
        // The server ignored SIGTERM: kill it and its watchdog for good.
        let _ = Command::new("kill")
            .args(["-KILL", &self.pid.to_string()])
            .stderr(Stdio::null())
            .status();
        let _ = child.kill();
        let _ = child.wait();
    }
}

/// A started watchdog: the child, the pipe that keeps the server alive, the
/// server's pid, the lines of its standard error as they come, and all of it
/// collected.
pub(crate) struct Watched {
    pub(crate) child: Child,
    pub(crate) stdin: ChildStdin,
    pub(crate) pid: u32,
    pub(crate) lines: Receiver<String>,
    pub(crate) log: Arc<Mutex<Vec<u8>>>,
}

pub(crate) fn spawn_watched(program: &Path, args: &[OsString]) -> Watched {
    let line = shell_words(program, args);
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(WATCHDOG)
        .arg("svelto-testkit-watchdog")
        .arg(program)
        .args(args)
        .env("LC_ALL", "C.UTF-8")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {line}: {e}"));
    let stdin = child.stdin.take().expect("stdin was piped");
    let stdout = child.stdout.take().expect("stdout was piped");
    let (pid_sender, pid_line) = mpsc::channel();
    std::thread::spawn(move || {
        let mut first = String::new();
        let _ = BufReader::new(stdout).read_line(&mut first);
        let _ = pid_sender.send(first);
    });
    let stderr = child.stderr.take().expect("stderr was piped");
    let log = Arc::new(Mutex::new(Vec::new()));
    let (sender, lines) = mpsc::channel();
    let sink = Arc::clone(&log);
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stderr);
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match reader.read_until(b'\n', &mut buf) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    sink.lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .extend_from_slice(&buf);
                    // Nobody listens once the server has started.
                    let _ = sender.send(String::from_utf8_lossy(&buf).trim_end().to_owned());
                }
            }
        }
    });
    let pid_line = pid_line.recv_timeout(START_TIMEOUT);
    let pid = match pid_line.as_deref().map(|l| l.trim().parse::<u32>()) {
        Ok(Ok(pid)) => pid,
        other => {
            let _ = child.kill();
            let _ = child.wait();
            let said = String::from_utf8_lossy(&log.lock().unwrap_or_else(|e| e.into_inner()))
                .into_owned();
            panic!("the watchdog of {line} printed no pid ({other:?}); it said:\n{said}");
        }
    };
    Watched {
        child,
        stdin,
        pid,
        lines,
        log,
    }
}

pub(super) fn shell_words(program: &Path, args: &[OsString]) -> String {
    std::iter::once(program.as_os_str())
        .chain(args.iter().map(OsString::as_os_str))
        .map(|w| w.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

impl Server {
    /// Waits (up to a minute) until the server accepts connections on its port; panics with
    /// its diagnostics and its log file (`log_file`, when it has one) if it dies or never
    /// does. `what` names it in the message.
    pub(crate) fn wait_listening(&mut self, what: &str) {
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while !can_connect(self.port) {
            if !self.is_alive() || std::time::Instant::now() > deadline {
                let log = self
                    .log_file
                    .as_ref()
                    .and_then(|f| std::fs::read_to_string(f).ok())
                    .unwrap_or_default();
                panic!(
                    "{what} did not listen on 127.0.0.1:{}:\n{}\n{log}",
                    self.port,
                    self.diagnostics()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// A port that was free a moment ago (see [`free_ports`]).
pub fn free_port() -> u16 {
    free_ports(1)[0]
}

/// `n` different ports of 127.0.0.1 that were free a moment ago, all below the kernel's
/// ephemeral range, so that no outgoing connection takes one before the server started
/// on it binds it (weed's gRPC clients once took the port its S3 gateway was about to
/// bind: "address already in use"). Each is held bound until all are chosen; a
/// process-wide counter keeps concurrent tests of one process apart, the process id
/// spreads the processes.
pub fn free_ports(n: usize) -> Vec<u16> {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(u32::MAX);
    const LOW: u32 = 20_000;
    let high = ephemeral_low().clamp(LOW + 1_000, 65_535);
    let span = high - LOW;
    let _ = NEXT.compare_exchange(
        u32::MAX,
        std::process::id().wrapping_mul(997) % span,
        Ordering::Relaxed,
        Ordering::Relaxed,
    );
    let mut held = Vec::with_capacity(n);
    for _ in 0..span {
        if held.len() == n {
            break;
        }
        let port = (LOW + NEXT.fetch_add(1, Ordering::Relaxed) % span) as u16;
        if let Ok(listener) = TcpListener::bind(("127.0.0.1", port)) {
            held.push(listener);
        }
    }
    assert_eq!(
        held.len(),
        n,
        "fewer than {n} free ports in 127.0.0.1:{LOW}-{high}"
    );
    held.iter()
        .map(|l| {
            l.local_addr()
                .unwrap_or_else(|e| panic!("no local address for a bound socket: {e}"))
                .port()
        })
        .collect()
}

/// The first port of the kernel's ephemeral range (`net.ipv4.ip_local_port_range`).
fn ephemeral_low() -> u32 {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(32_768)
}

pub(crate) fn can_connect(port: u16) -> bool {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    TcpStream::connect_timeout(&addr, Duration::from_millis(500)).is_ok()
}

pub(super) fn tail_text(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    format!("[...]\n{}", &text[start..])
}

/// How svnserve runs: its default settings, or extra options.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SvnserveConfig {
    /// Options added after `-d --foreground -r ROOT --listen-host ... --listen-port ...`.
    pub args: Vec<String>,
}

impl SvnserveConfig {
    /// svnserve's default settings.
    pub fn default_settings() -> SvnserveConfig {
        SvnserveConfig::default()
    }

    /// svnserve's best configuration for speed, the one the benchmark
    /// compares with: threads, a 1 GB cache, no compression, cached revision
    /// properties, block reads.
    pub fn best() -> SvnserveConfig {
        SvnserveConfig {
            args: [
                "-T",
                "-M",
                "1024",
                "-c",
                "0",
                "--cache-revprops",
                "yes",
                "--block-read",
                "yes",
            ]
            .map(String::from)
            .to_vec(),
        }
    }
}

/// The real `svnserve -d --foreground` on a free port of 127.0.0.1.
pub struct Svnserve(Server);

impl Svnserve {
    /// `svnserve` with its default settings serving `root`.
    pub fn start(root: &Path) -> Svnserve {
        Svnserve::start_with(root, &SvnserveConfig::default())
    }

    /// `svnserve` with `config`'s options serving `root`. Picks a free port,
    /// retries when another process takes it first, and returns once a TCP
    /// connection succeeds.
    pub fn start_with(root: &Path, config: &SvnserveConfig) -> Svnserve {
        let program = crate::run::require_tool("svnserve");
        let mut last_failure = String::new();
        for _attempt in 0..10 {
            let port = free_port();
            let mut args: Vec<OsString> = vec![
                "-d".into(),
                "--foreground".into(),
                "-r".into(),
                root.as_os_str().to_owned(),
                "--listen-host".into(),
                "127.0.0.1".into(),
                "--listen-port".into(),
                port.to_string().into(),
            ];
            args.extend(config.args.iter().map(OsString::from));
            let watched = spawn_watched(&program, &args);
            let mut server = Server {
                kind: ServerKind::Svnserve,
                child: Some(watched.child),
                in_process: None,
                stdin: Some(watched.stdin),
                pid: watched.pid,
                port,
                base_url: format!("svn://127.0.0.1:{port}"),
                root: root.to_owned(),
                log: watched.log,
                log_file: None,
            };
            let deadline = Instant::now() + START_TIMEOUT;
            loop {
                if !server.is_alive() {
                    last_failure = server.stderr_text();
                    break;
                }
                if can_connect(port) {
                    return Svnserve(server);
                }
                if Instant::now() > deadline {
                    panic!(
                        "svnserve did not listen on port {port} within {START_TIMEOUT:?}\n{}",
                        server.diagnostics()
                    );
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            if !last_failure.contains("Address already in use") {
                break;
            }
        }
        panic!("svnserve could not start serving {root:?}:\n{last_failure}");
    }

    pub fn into_server(self) -> Server {
        self.0
    }
}

impl std::ops::Deref for Svnserve {
    type Target = Server;
    fn deref(&self) -> &Server {
        &self.0
    }
}

impl std::ops::DerefMut for Svnserve {
    fn deref_mut(&mut self) -> &mut Server {
        &mut self.0
    }
}

/// `svelto serve -d --foreground` on an ephemeral port of 127.0.0.1.
///
/// The contract with the server: given `--listen-port 0`, it binds an
/// ephemeral port and writes a line containing `listening on 127.0.0.1:PORT`
/// to standard error (and to its log file).
pub struct Svelto(Server);

impl Svelto {
    /// `svelto serve` (the binary at `binary`) serving `root`, logging to
    /// `<root>.serve.log`.
    pub fn start(binary: &Path, root: &Path) -> Svelto {
        let mut log_file = root.as_os_str().to_owned();
        log_file.push(".serve.log");
        Svelto::start_with(binary, root, Path::new(&log_file), &[])
    }

    /// `svelto serve` with a log file and extra options.
    pub fn start_with(binary: &Path, root: &Path, log_file: &Path, extra: &[&str]) -> Svelto {
        Svelto::start_marked(binary, root, log_file, extra, "listening on 127.0.0.1:")
    }

    /// `svelto serve` serving HTTP too (`--http-listen 127.0.0.1:0 --http-prefix PREFIX`):
    /// the server's port and base URL are the HTTP side's, `http://127.0.0.1:PORT/PREFIX`.
    /// `more` are further flags of `svelto serve`.
    pub fn start_http(
        binary: &Path,
        root: &Path,
        log_file: &Path,
        prefix: &str,
        more: &[&str],
    ) -> Svelto {
        let mut extra = vec!["--http-listen", "127.0.0.1:0", "--http-prefix", prefix];
        extra.extend_from_slice(more);
        let mut s = Svelto::start_marked(
            binary,
            root,
            log_file,
            &extra,
            "http listening on 127.0.0.1:",
        );
        let scheme = if more.contains(&"--http-tls-cert") {
            "https"
        } else {
            "http"
        };
        s.0.base_url = format!("{scheme}://127.0.0.1:{}{prefix}", s.0.port);
        s
    }

    fn start_marked(
        binary: &Path,
        root: &Path,
        log_file: &Path,
        extra: &[&str],
        marker: &str,
    ) -> Svelto {
        let mut args: Vec<OsString> = vec![
            "serve".into(),
            "-d".into(),
            "--foreground".into(),
            "-r".into(),
            root.as_os_str().to_owned(),
            "--listen-host".into(),
            "127.0.0.1".into(),
            "--listen-port".into(),
            "0".into(),
            "--log-file".into(),
            log_file.as_os_str().to_owned(),
        ];
        args.extend(extra.iter().map(OsString::from));
        let watched = spawn_watched(binary, &args);
        let mut server = Server {
            kind: ServerKind::Svelto,
            child: Some(watched.child),
            in_process: None,
            stdin: Some(watched.stdin),
            pid: watched.pid,
            port: 0,
            base_url: String::new(),
            root: root.to_owned(),
            log: watched.log,
            log_file: Some(log_file.to_owned()),
        };
        let deadline = Instant::now() + START_TIMEOUT;
        let port = loop {
            match watched
                .lines
                .recv_timeout(Duration::from_millis(100).min(deadline - Instant::now()))
            {
                Ok(line) => {
                    if let Some(port) = marked_port(&line, marker) {
                        break port;
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    // Standard error closed: give the process a moment to end.
                    std::thread::sleep(Duration::from_millis(100));
                }
            }
            if !server.is_alive() {
                panic!(
                    "svelto serve exited before it listened:\n{}",
                    server.diagnostics()
                );
            }
            if Instant::now() + Duration::from_millis(100) > deadline {
                panic!(
                    "svelto serve printed no 'listening on 127.0.0.1:PORT' line within \
                     {START_TIMEOUT:?}:\n{}",
                    server.diagnostics()
                );
            }
        };
        server.port = port;
        server.base_url = format!("svn://127.0.0.1:{port}");
        if !can_connect(port) {
            panic!(
                "svelto serve said it listens on port {port}, but a connection failed:\n{}",
                server.diagnostics()
            );
        }
        Svelto(server)
    }

    pub fn into_server(self) -> Server {
        self.0
    }
}

impl std::ops::Deref for Svelto {
    type Target = Server;
    fn deref(&self) -> &Server {
        &self.0
    }
}

impl std::ops::DerefMut for Svelto {
    fn deref_mut(&mut self) -> &mut Server {
        &mut self.0
    }
}

/// The port in a `... listening on 127.0.0.1:PORT ...` line.
#[cfg(test)]
pub(super) fn listening_port(line: &str) -> Option<u16> {
    marked_port(line, "listening on 127.0.0.1:")
}

/// The port after `marker` (`... MARKER PORT ...`) in a line.
pub(super) fn marked_port(line: &str, marker: &str) -> Option<u16> {
    let rest = &line[line.find(marker)? + marker.len()..];
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok().filter(|&p| p != 0)
}

/// The `svelto` binary to test when the caller has no
/// `env!("CARGO_BIN_EXE_svelto")`: `$SVELTO_BIN`, else `debug/svelto` under
/// `$CARGO_TARGET_DIR` or the workspace's `target/`. Panics when none exists.
pub fn svelto_binary() -> PathBuf {
    if let Some(bin) = std::env::var_os("SVELTO_BIN") {
        return PathBuf::from(bin);
    }
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut candidates = Vec::new();
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
        candidates.push(PathBuf::from(dir).join("debug/svelto"));
    }
    candidates.push(workspace.join("target/debug/svelto"));
    candidates
        .iter()
        .find(|p| p.is_file())
        .cloned()
        .unwrap_or_else(|| {
            panic!("no svelto binary among {candidates:?}: cargo build -p svelto-cli, or set SVELTO_BIN")
        })
}

/// Starts Svelto's front ends in the test process over a backend the testkit made (the
/// in-memory one: [`crate::memfs::MemBackend`]). The test crate implements it, as the one
/// that links the front ends (the testkit does not: it sits below them); [`Pair`]s built
/// with [`Subject::Memory`] call it instead of starting `svelto serve`.
pub trait ServeInProcess: Send + Sync {
    /// Serves the repositories `spec.backend` holds under `spec.root` on 127.0.0.1:
    /// svn://, or HTTP under `spec.http_prefix`.
    fn start(&self, spec: InProcessSpec<'_>) -> InProcessServer;
}

/// What an in-process server is to serve, and how.
pub struct InProcessSpec<'a> {
    pub backend: Arc<dyn svelto_fs::Backend>,
    /// As `svelto serve -r ROOT`.
    pub root: &'a Path,
    /// None: svn://; Some: HTTP with this `--http-prefix`.
    pub http_prefix: Option<&'a str>,
    /// Further `svelto serve` flags; a starter refuses (panics on) those it does not know.
    pub flags: &'a [String],
    /// Where the server writes its log (what [`Server::stderr_text`] shows).
    pub log: Box<dyn std::io::Write + Send>,
}

/// A server [`ServeInProcess::start`] started.
pub struct InProcessServer {
    /// The port it listens on (127.0.0.1).
    pub port: u16,
    /// Dropped when the server is: stops it (or, when it cannot stop, lets it idle until
    /// the process ends).
    pub handle: Box<dyn std::any::Any + Send + Sync>,
}

/// Appends what is written to a shared buffer and to the log file (an in-process
/// server's log, where `svelto serve --log-file` would write it).
struct SharedLog(Arc<Mutex<Vec<u8>>>, std::fs::File);

impl std::io::Write for SharedLog {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend_from_slice(buf);
        self.1.write_all(buf)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.1.flush()
    }
}

impl Server {
    /// `start`'s server over `backend` serving `root`: svn://127.0.0.1:PORT, or with
    /// `http_prefix` http://127.0.0.1:PORT/PREFIX; its log also in `log_file`.
    pub(crate) fn in_process(
        start: &dyn ServeInProcess,
        backend: Arc<dyn svelto_fs::Backend>,
        root: &Path,
        log_file: &Path,
        http_prefix: Option<&str>,
        flags: &[String],
    ) -> Server {
        let log = Arc::new(Mutex::new(Vec::new()));
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log_file)
            .unwrap_or_else(|e| panic!("cannot open {log_file:?}: {e}"));
        let started = start.start(InProcessSpec {
            backend,
            root,
            http_prefix,
            flags,
            log: Box::new(SharedLog(log.clone(), file)),
        });
        let port = started.port;
        let base_url = match http_prefix {
            None => format!("svn://127.0.0.1:{port}"),
            Some(prefix) => format!("http://127.0.0.1:{port}{prefix}"),
        };
        let server = Server {
            kind: ServerKind::SveltoInMemory,
            child: None,
            in_process: Some(started.handle),
            stdin: None,
            pid: 0,
            port,
            base_url,
            root: root.to_owned(),
            log,
            log_file: Some(log_file.to_owned()),
        };
        assert!(
            can_connect(port),
            "the in-process server says it listens on port {port}, but a connection failed:\n{}",
            server.diagnostics()
        );
        server
    }
}
