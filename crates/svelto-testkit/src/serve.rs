//! svn:// servers for differential tests: the real `svnserve` over FSFS and
//! `svelto serve` over Svelto's store, each on 127.0.0.1, the stock client
//! tools run against them, and [`Pair`], which runs the same client command
//! against both and asserts that the outputs are the same.
//!
//! Server processes run under a small shell watchdog whose standard input is
//! a pipe from the test process: when the test process ends, however it ends,
//! the pipe closes and the watchdog kills the server. So servers held in
//! statics (one [`Pair`] shared by the tests of a module) never outlive the
//! test binary.

use std::collections::{BTreeMap, HashMap};
use std::ffi::{OsStr, OsString};
use std::fmt::Write as _;
use std::io::{BufRead, BufReader};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use tempfile::TempDir;

use crate::run::{Outcome, Run};
use crate::svnadmin::tempdir;

/// How long a server may take to start listening.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// How long one client command may run against a test server.
pub const CLIENT_TIMEOUT: Duration = Duration::from_secs(120);

/// The environment variable that makes comparisons print differences (to
/// standard error, each starting `=== DIFFERENCE:`) and go on, instead of
/// failing the test at the first one: `SVELTO_HARNESS_KEEP_GOING=1 cargo test
/// ... -- --nocapture` lists every comparison that fails.
pub const KEEP_GOING_ENV: &str = "SVELTO_HARNESS_KEEP_GOING";

fn keep_going() -> bool {
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
const WATCHDOG: &str = r#"exec 3<&0
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
}

impl ServerKind {
    pub fn name(self) -> &'static str {
        match self {
            ServerKind::Svnserve => "svnserve",
            ServerKind::Svelto => "svelto",
            ServerKind::Apache => "apache",
        }
    }
}

/// A running svn:// server on 127.0.0.1, killed on drop.
pub struct Server {
    pub(crate) kind: ServerKind,
    pub(crate) child: Child,
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

    /// The pid of the server process itself (not of its watchdog).
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The `-r` root the server serves.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Whether the server process is still running.
    pub fn is_alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Whether the server process is still running, without `&mut`: looks at
    /// `/proc/PID`.
    pub fn is_running(&self) -> bool {
        std::fs::read_to_string(format!("/proc/{}/stat", self.pid))
            .map(|stat| {
                // The state follows the parenthesised command name.
                let state = stat.rsplit(')').next().unwrap_or("").trim_start();
                !state.starts_with('Z') && !state.starts_with('X')
            })
            .unwrap_or(false)
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
        crate::run::read_vm_hwm_kib(self.pid)
    }

    /// Current resident set size of the server process, in KiB.
    pub fn rss_kib(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid)).ok()?;
        status
            .lines()
            .find_map(|line| line.strip_prefix("VmRSS:"))
            .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // Closing the watchdog's standard input makes it kill the server.
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            match self.child.try_wait() {
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
        let _ = self.child.kill();
        let _ = self.child.wait();
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

fn shell_words(program: &Path, args: &[OsString]) -> String {
    std::iter::once(program.as_os_str())
        .chain(args.iter().map(OsString::as_os_str))
        .map(|w| w.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// A port that was free a moment ago (bound to 127.0.0.1:0, then released).
pub(crate) fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0")
        .unwrap_or_else(|e| panic!("cannot bind 127.0.0.1:0 to find a free port: {e}"));
    listener
        .local_addr()
        .unwrap_or_else(|e| panic!("no local address for a bound socket: {e}"))
        .port()
}

pub(crate) fn can_connect(port: u16) -> bool {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    TcpStream::connect_timeout(&addr, Duration::from_millis(500)).is_ok()
}

fn tail_text(text: &str, max: usize) -> String {
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
                child: watched.child,
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
    pub fn start_http(binary: &Path, root: &Path, log_file: &Path, prefix: &str) -> Svelto {
        let extra = ["--http-listen", "127.0.0.1:0", "--http-prefix", prefix];
        let mut s = Svelto::start_marked(
            binary,
            root,
            log_file,
            &extra,
            "http listening on 127.0.0.1:",
        );
        s.0.base_url = format!("http://127.0.0.1:{}{prefix}", s.0.port);
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
            child: watched.child,
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
fn listening_port(line: &str) -> Option<u16> {
    marked_port(line, "listening on 127.0.0.1:")
}

/// The port after `marker` (`... MARKER PORT ...`) in a line.
fn marked_port(line: &str, marker: &str) -> Option<u16> {
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

/// The stock client tools (`svn`, `svnbench`, `svnsync`, `svnrdump`,
/// `svnmucc`) with a private `--config-dir`, `--non-interactive`,
/// `--no-auth-cache`, untranslated messages (`LANG=C`, `LC_ALL=C.UTF-8`: the C
/// locale's messages with UTF-8 file names, which the `names` fixture needs)
/// and `TZ=UTC`.
pub struct SvnClient {
    config_dir: PathBuf,
    /// The temporary directory holding `config_dir`, when the client owns it.
    _owned: Option<TempDir>,
}

impl Default for SvnClient {
    fn default() -> Self {
        SvnClient::new()
    }
}

impl SvnClient {
    /// A client with its configuration in a fresh temporary directory.
    pub fn new() -> SvnClient {
        let owned = tempdir();
        let mut client = SvnClient::in_dir(&owned.path().join("svn-config"));
        client._owned = Some(owned);
        client
    }

    /// A client with its configuration in `config_dir` (made now; removed
    /// with whatever holds it).
    pub fn in_dir(config_dir: &Path) -> SvnClient {
        // Let svn write its default configuration once, now, rather than
        // from many concurrent commands later.
        Run::tool("svn")
            .arg("--config-dir")
            .arg(config_dir)
            .args(["--version", "--quiet"])
            .success();
        SvnClient {
            config_dir: config_dir.to_owned(),
            _owned: None,
        }
    }

    pub fn config_dir(&self) -> &Path {
        &self.config_dir
    }

    /// A command running `tool` (a client tool on `PATH`) in `cwd`, with the
    /// common options and environment; add the subcommand and its arguments.
    pub fn command(&self, tool: &str, cwd: &Path) -> Run {
        Run::tool(tool)
            .arg("--config-dir")
            .arg(&self.config_dir)
            .args(["--non-interactive", "--no-auth-cache"])
            .env("LANG", "C")
            .env("LC_ALL", "C.UTF-8")
            .env("TZ", "UTC")
            .current_dir(cwd)
            .timeout(CLIENT_TIMEOUT)
    }

    /// Run `tool args...` in `cwd` to completion, whatever the outcome.
    pub fn run<S: AsRef<OsStr>>(&self, tool: &str, args: &[S], cwd: &Path) -> Outcome {
        self.command(tool, cwd).args(args).output()
    }

    /// `svn args...` in `cwd`, whatever the outcome.
    pub fn svn<S: AsRef<OsStr>>(&self, args: &[S], cwd: &Path) -> Outcome {
        self.run("svn", args, cwd)
    }
}

/// Makes two sides' outputs comparable: replaces each side's own strings
/// (its server URL, its work directory) with placeholders, and masks values
/// that differ from run to run (working-file timestamps, timings).
#[derive(Debug, Clone, Default)]
pub struct Normalizer {
    replacements: Vec<(Vec<u8>, Vec<u8>)>,
    /// Mask every date too (outputs that show commits made during the test).
    dates: bool,
}

impl Normalizer {
    pub fn new() -> Normalizer {
        Normalizer::default()
    }

    /// Replace every occurrence of `from` by `to` (in the order added).
    pub fn replace(mut self, from: impl AsRef<[u8]>, to: impl AsRef<[u8]>) -> Normalizer {
        self.replacements
            .push((from.as_ref().to_vec(), to.as_ref().to_vec()));
        self
    }

    /// The replacements, then [`mask_volatile`] (and [`mask_dates`] when asked for).
    pub fn apply(&self, bytes: &[u8]) -> Vec<u8> {
        let out = mask_volatile(&self.replace_only(bytes));
        if self.dates {
            mask_dates(&out)
        } else {
            out
        }
    }

    /// The replacements alone (for file contents).
    pub fn replace_only(&self, bytes: &[u8]) -> Vec<u8> {
        let mut out = bytes.to_vec();
        for (from, to) in &self.replacements {
            out = replace_bytes(&out, from, to);
        }
        out
    }
}

/// Every occurrence of `from` in `haystack` replaced by `to`.
pub fn replace_bytes(haystack: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    if from.is_empty() {
        return haystack.to_vec();
    }
    let mut out = Vec::with_capacity(haystack.len());
    let mut rest = haystack;
    while let Some(at) = rest.windows(from.len()).position(|w| w == from) {
        out.extend_from_slice(&rest[..at]);
        out.extend_from_slice(to);
        rest = &rest[at + from.len()..];
    }
    out.extend_from_slice(rest);
    out
}

/// Values in client output that differ between two runs of the same command
/// on the same data, masked line by line: `Text Last Updated:` of `svn info`
/// (and `<text-updated>` of `--xml`), svnbench's `seconds taken`, its
/// `bytes in deltas` (the size of the deltas a server chose to send) and
/// `bytes transferred over network` (which counts the greeting's
/// capabilities, among others).
pub fn mask_volatile(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    for line in bytes.split_inclusive(|&b| b == b'\n') {
        let (body, newline) = match line.strip_suffix(b"\n") {
            Some(body) => (body, &b"\n"[..]),
            None => (line, &b""[..]),
        };
        if body.starts_with(b"Text Last Updated: ") {
            out.extend_from_slice(b"Text Last Updated: {TIME}");
        } else if let Some(masked) = mask_between(body, b"<text-updated>", b"</text-updated>") {
            out.extend_from_slice(&masked);
        } else if body.ends_with(b" seconds taken") {
            out.extend_from_slice(b"{SECONDS} seconds taken");
        } else if body.ends_with(b" bytes in deltas") {
            out.extend_from_slice(b"{N} bytes in deltas");
        } else if body.ends_with(b" bytes transferred over network") {
            out.extend_from_slice(b"{N} bytes transferred over network");
        } else {
            out.extend_from_slice(body);
        }
        out.extend_from_slice(newline);
    }
    out
}

/// Replaces Subversion dates (`2026-11-22T10:59:48.123456Z` and the client's
/// `2026-11-22 10:59:48 +0000 (Sun, 22 Nov 2026)`) with `{DATE}`.
pub fn mask_dates(bytes: &[u8]) -> Vec<u8> {
    let is_digit = |b: u8| b.is_ascii_digit();
    let shape = b"dddd-dd-dd?dd:dd:dd";
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let fits = i + shape.len() <= bytes.len()
            && shape.iter().enumerate().all(|(k, &c)| {
                let b = bytes[i + k];
                match c {
                    b'd' => is_digit(b),
                    b'?' => b == b'T' || b == b' ',
                    _ => b == c,
                }
            });
        if !fits {
            out.push(bytes[i]);
            i += 1;
            continue;
        }
        let mut j = i + shape.len();
        if bytes.get(j) == Some(&b'.') {
            j += 1;
            while j < bytes.len() && is_digit(bytes[j]) {
                j += 1;
            }
            if bytes.get(j) == Some(&b'Z') {
                j += 1;
            }
        } else if bytes[j..].starts_with(b" +0000 (") {
            if let Some(close) = bytes[j..].iter().position(|&b| b == b')') {
                j += close + 1;
            }
        }
        out.extend_from_slice(b"{DATE}");
        i = j;
    }
    out
}

fn mask_between(line: &[u8], open: &[u8], close: &[u8]) -> Option<Vec<u8>> {
    let start = line.windows(open.len()).position(|w| w == open)? + open.len();
    let len = line[start..]
        .windows(close.len())
        .position(|w| w == close)?;
    let mut out = line[..start].to_vec();
    out.extend_from_slice(b"{TIME}");
    out.extend_from_slice(&line[start + len..]);
    Some(out)
}

/// Where two texts first differ, line by line, with a little context, for
/// failure messages. `None` when they are equal.
pub fn first_difference(labels: [&str; 2], a: &[u8], b: &[u8]) -> Option<String> {
    if a == b {
        return None;
    }
    let (la, lb) = (text_lines(a), text_lines(b));
    let at = la
        .iter()
        .zip(&lb)
        .position(|(x, y)| x != y)
        .unwrap_or(la.len().min(lb.len()));
    let mut out = format!(
        "first difference at line {} ({} has {} lines, {} has {}):\n",
        at + 1,
        labels[0],
        la.len(),
        labels[1],
        lb.len()
    );
    for line in &la[at.saturating_sub(3)..at] {
        let _ = writeln!(out, "      {}", show(line));
    }
    let width = labels[0].len().max(labels[1].len());
    for (label, lines, mark) in [(labels[0], &la, '-'), (labels[1], &lb, '+')] {
        for line in lines.iter().skip(at).take(6) {
            let _ = writeln!(out, "    {mark} {label:>width$}: {}", show(line));
        }
        if lines.len() <= at {
            let _ = writeln!(out, "    {mark} {label:>width$}: (end)");
        }
    }
    Some(out)
}

/// The lines of a text, without the empty one after a final newline.
fn text_lines(text: &[u8]) -> Vec<&[u8]> {
    if text.is_empty() {
        return Vec::new();
    }
    let body = text.strip_suffix(b"\n").unwrap_or(text);
    body.split(|&c| c == b'\n').collect()
}

fn show(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(line);
    let text: String = text
        .chars()
        .map(|c| {
            if c.is_control() && c != '\t' {
                '\u{fffd}'
            } else {
                c
            }
        })
        .collect();
    if text.chars().count() > 300 {
        let cut: String = text.chars().take(300).collect();
        format!("{cut}[...]")
    } else {
        text
    }
}

/// Whether the order of a command's output means anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Compared as printed.
    Kept,
    /// The output comes in an order a correct server may change: the order
    /// of an editor drive (which svnserve takes from a hash table with a
    /// random seed, so two svnserves differ), or the order of a directory
    /// listing that the client iterates through its own hash table. The
    /// output is compared as a sorted list of blocks: each block starts at a
    /// line that begins with one of these prefixes (and runs to the next);
    /// with no such line, each line is a block. XML is compared line by line.
    Blocks(&'static [&'static str]),
}

/// Blocks of `svn diff`.
const DIFF_BLOCKS: &[&str] = &["Index: "];
/// Blocks of `svn info`.
const INFO_BLOCKS: &[&str] = &["Path: "];
/// Blocks of `svn proplist` and `svn propget`.
const PROP_BLOCKS: &[&str] = &[
    "Properties on '",
    "Inherited properties on '",
    "svn://SERVER/",
];

/// The [`Order`] of `tool args` (the subcommand first): checkout, update,
/// switch, status, export, merge and diff print in drive order; recursive
/// `info`, `proplist` and `propget` of URLs in the client's hash order of
/// the server's listings; the rest (log, blame, ls, cat, ...) in an order
/// the client fixes.
pub fn output_order(tool: &str, args: &[&str]) -> Order {
    const DRIVEN: &[&str] = &[
        "checkout", "co", "update", "up", "switch", "sw", "status", "stat", "st", "export", "merge",
    ];
    let recursive = args
        .iter()
        .any(|a| matches!(*a, "-R" | "--recursive" | "--depth") || a.starts_with("--depth="));
    match (tool, args.first().copied()) {
        ("svn", Some(sub)) if DRIVEN.contains(&sub) => Order::Blocks(&[]),
        ("svn", Some("diff" | "di")) => Order::Blocks(DIFF_BLOCKS),
        ("svn", Some("info")) if recursive => Order::Blocks(INFO_BLOCKS),
        ("svn", Some("proplist" | "plist" | "pl" | "propget" | "pget" | "pg")) if recursive => {
            Order::Blocks(PROP_BLOCKS)
        }
        _ => Order::Kept,
    }
}

/// Output made independent of what varies between two correct servers:
/// attributes of XML elements sorted (the client prints them from a hash
/// table), and for [`Order::Blocks`] the blocks sorted.
pub fn canonical_output(bytes: &[u8], order: Order) -> Vec<u8> {
    let xml = bytes.starts_with(b"<?xml");
    let bytes = if xml {
        canonical_xml(bytes)
    } else {
        bytes.to_vec()
    };
    match order {
        Order::Kept => bytes,
        Order::Blocks(_) if xml => sorted_blocks(&bytes, &[]),
        Order::Blocks(starts) => sorted_blocks(&bytes, starts),
    }
}

/// Every start tag `<name a="1" b="2">` rewritten on one line with its
/// attributes sorted by name.
pub fn canonical_xml(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        if text[i] == b'<' && text.get(i + 1).is_some_and(u8::is_ascii_alphabetic) {
            let mut j = i + 1;
            let mut quoted = false;
            while j < text.len() && (quoted || text[j] != b'>') {
                if text[j] == b'"' {
                    quoted = !quoted;
                }
                j += 1;
            }
            if let Some(tag) = (j < text.len())
                .then(|| sort_attributes(&text[i + 1..j]))
                .flatten()
            {
                out.extend_from_slice(&tag);
                i = j + 1;
                continue;
            }
        }
        out.push(text[i]);
        i += 1;
    }
    out
}

/// `name attr="v" ...[/]` (inside `<` `>`) as `<name a="v" ...[/]>` with
/// sorted attributes; `None` if it does not look like a start tag.
fn sort_attributes(tag: &[u8]) -> Option<Vec<u8>> {
    let (body, closing) = match tag.strip_suffix(b"/") {
        Some(body) => (body, &b"/"[..]),
        None => (tag, &b""[..]),
    };
    let name_end = body
        .iter()
        .position(|b| b.is_ascii_whitespace())
        .unwrap_or(body.len());
    let name = &body[..name_end];
    let mut rest = &body[name_end..];
    let mut attrs: Vec<&[u8]> = Vec::new();
    loop {
        let start = rest.iter().position(|b| !b.is_ascii_whitespace());
        let Some(start) = start else { break };
        rest = &rest[start..];
        let eq = rest.iter().position(|&b| b == b'=')?;
        if rest.get(eq + 1) != Some(&b'"') {
            return None;
        }
        let close = rest[eq + 2..].iter().position(|&b| b == b'"')? + eq + 2;
        attrs.push(&rest[..=close]);
        rest = &rest[close + 1..];
    }
    attrs.sort();
    let mut out = vec![b'<'];
    out.extend_from_slice(name);
    for attr in attrs {
        out.push(b' ');
        out.extend_from_slice(attr);
    }
    out.extend_from_slice(closing);
    out.push(b'>');
    Some(out)
}

/// The blocks of `bytes` sorted: a block starts at each line that begins
/// with one of `starts` (lines before the first such line form a block of
/// their own); with no such line, every line is a block.
pub fn sorted_blocks(bytes: &[u8], starts: &[&str]) -> Vec<u8> {
    let lines: Vec<&[u8]> = bytes.split_inclusive(|&b| b == b'\n').collect();
    let starts_block = |line: &[u8]| starts.iter().any(|s| line.starts_with(s.as_bytes()));
    let mut blocks: Vec<Vec<u8>> = Vec::new();
    if lines.iter().any(|l| starts_block(l)) {
        let mut current = Vec::new();
        for line in lines {
            if starts_block(line) && !current.is_empty() {
                blocks.push(std::mem::take(&mut current));
            }
            current.extend_from_slice(line);
        }
        blocks.push(current);
    } else {
        blocks = lines.into_iter().map(<[u8]>::to_vec).collect();
    }
    if let Some(last) = blocks.last_mut() {
        if !last.ends_with(b"\n") {
            last.push(b'\n');
        }
    }
    blocks.sort();
    blocks.concat()
}

/// What both sides printed, once normalized and found the same.
#[derive(Debug, Clone)]
pub struct Same {
    /// The exit code (`None`: killed by a signal).
    pub code: Option<i32>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

impl Same {
    pub fn success(&self) -> bool {
        self.code == Some(0)
    }

    pub fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }

    pub fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }

    /// Panics unless standard output contains `needle`: proof that the
    /// comparison compared something.
    pub fn expect_stdout(&self, needle: &str) -> &Same {
        assert!(
            self.stdout_text().contains(needle),
            "expected {needle:?} in the output:\n{}",
            tail_text(&self.stdout_text(), 4000)
        );
        self
    }

    /// Panics unless standard error contains `needle`.
    pub fn expect_stderr(&self, needle: &str) -> &Same {
        assert!(
            self.stderr_text().contains(needle),
            "expected {needle:?} in standard error:\n{}",
            tail_text(&self.stderr_text(), 4000)
        );
        self
    }
}

/// What a comparison requires of the reference side's exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    Success,
    Failure,
    Any,
}

/// What is on the second side of a [`Pair`].
#[derive(Debug, Clone)]
pub enum Subject {
    /// `svelto serve` (this binary) over a repository made by `svelto admin`.
    Svelto(PathBuf),
    /// svnserve again over a second FSFS repository: checks the harness.
    SelfTest,
}

impl Subject {
    /// `Svelto(binary)`, or `SelfTest` when `$SVELTO_HARNESS_SELFTEST` is set
    /// to something other than `0` or nothing.
    pub fn from_env(binary: &Path) -> Subject {
        match std::env::var(SELFTEST_ENV) {
            Ok(v) if !v.is_empty() && v != "0" => Subject::SelfTest,
            _ => Subject::Svelto(binary.to_owned()),
        }
    }
}

/// One side of a [`Pair`]: a server, the repository it serves, and a work
/// directory where client commands run.
struct Side {
    label: &'static str,
    server: Server,
    repo: PathBuf,
    work: PathBuf,
    normalizer: Normalizer,
}

/// The same dump served by svnserve over FSFS (the reference, side 0) and by
/// the subject (side 1, `svelto serve` over Svelto's store), with one client
/// configuration for both. Commands run on both sides at once, in work
/// directories with the same relative names; their outputs are normalized
/// (server URL, work directory) and must be equal.
pub struct Pair {
    name: String,
    dir: TempDir,
    sides: [Side; 2],
    client: SvnClient,
    selftest: bool,
}

/// The placeholder for the server's `svn://127.0.0.1:PORT` in normalized
/// output.
pub const SERVER_PLACEHOLDER: &str = "svn://SERVER";
/// The placeholder for a side's work directory in normalized output.
pub const WORK_PLACEHOLDER: &str = "{WORK}";

impl Pair {
    /// The scenario `fixture` (`fixtures/<fixture>.dump`) on both sides; the
    /// subject is `svelto serve` from `svelto_binary` unless
    /// `$SVELTO_HARNESS_SELFTEST` is set.
    pub fn new(fixture: &str, svelto_binary: &Path) -> Pair {
        Pair::with_subject(fixture, Subject::from_env(svelto_binary))
    }

    /// The scenario with svnserve on both sides.
    pub fn selftest(fixture: &str) -> Pair {
        Pair::with_subject(fixture, Subject::SelfTest)
    }

    pub fn with_subject(fixture: &str, subject: Subject) -> Pair {
        Pair::from_dump(fixture, &crate::scenario_dump(fixture), subject)
    }

    /// Any dump, served as repository `name` on both sides.
    pub fn from_dump(name: &str, dump: &Path, subject: Subject) -> Pair {
        let (dir, roots, repos) = pair_dirs(name);
        let selftest = matches!(subject, Subject::SelfTest);
        load_sides(&repos, dump, &subject);
        let (reference, subject_server) = std::thread::scope(|scope| {
            let reference = scope.spawn(|| Svnserve::start(&roots[0].join("repos")).into_server());
            let subject_server = match &subject {
                Subject::SelfTest => Svnserve::start(&roots[1].join("repos")).into_server(),
                Subject::Svelto(binary) => Svelto::start_with(
                    binary,
                    &roots[1].join("repos"),
                    &roots[1].join("serve.log"),
                    &[],
                )
                .into_server(),
            };
            let reference = match reference.join() {
                Ok(server) => server,
                Err(panic) => std::panic::resume_unwind(panic),
            };
            (reference, subject_server)
        });
        let labels = ["svnserve", if selftest { "svnserve-2" } else { "svelto" }];
        Pair::assemble(
            name,
            dir,
            [reference, subject_server],
            repos,
            roots,
            labels,
            selftest,
        )
    }

    /// The sides of a pair from their servers, repositories and roots.
    fn assemble(
        name: &str,
        dir: TempDir,
        servers: [Server; 2],
        repos: [PathBuf; 2],
        roots: [PathBuf; 2],
        labels: [&'static str; 2],
        selftest: bool,
    ) -> Pair {
        let side = |label, server: Server, repo: PathBuf, root: &Path| {
            let work = root.join("work");
            let normalizer = Normalizer::new()
                .replace(server.base_url(), SERVER_PLACEHOLDER)
                .replace(work.as_os_str().as_encoded_bytes(), WORK_PLACEHOLDER);
            Side {
                label,
                server,
                repo,
                work,
                normalizer,
            }
        };
        let [repo_a, repo_b] = repos;
        let [server_a, server_b] = servers;
        let sides = [
            side(labels[0], server_a, repo_a, &roots[0]),
            side(labels[1], server_b, repo_b, &roots[1]),
        ];
        let client = SvnClient::in_dir(&dir.path().join("svn-config"));
        Pair {
            name: name.to_owned(),
            dir,
            sides,
            client,
            selftest,
        }
    }

    /// The scenario `fixture` over HTTP: FSFS served by Apache httpd with mod_dav_svn
    /// (the reference, `SVNParentPath` under `/svn`) and Svelto's store served by
    /// `svelto serve --http-listen ... --http-prefix /svn`. Panics, saying what to install,
    /// when Apache or mod_dav_svn is missing.
    pub fn http(fixture: &str, svelto_binary: &Path) -> Pair {
        let name = fixture;
        let dump = crate::scenario_dump(fixture);
        let (dir, roots, repos) = pair_dirs(name);
        load_sides(&repos, &dump, &Subject::Svelto(svelto_binary.to_owned()));
        let apache = crate::apache::Apache::start(&roots[0].join("repos"), &roots[0], "/svn");
        let svelto = Svelto::start_http(
            svelto_binary,
            &roots[1].join("repos"),
            &roots[1].join("serve.log"),
            "/svn",
        )
        .into_server();
        Pair::assemble(
            name,
            dir,
            [apache.into_server(), svelto],
            repos,
            roots,
            ["apache", "svelto-http"],
            false,
        )
    }

    /// Keep this pair for the rest of the process (for a `static`): it is
    /// never dropped; its servers die with the process (see the module
    /// documentation) and its directory is removed then.
    pub fn share(self) -> &'static Pair {
        remove_at_exit(self.dir.path());
        Box::leak(Box::new(self))
    }

    /// The repository name (the fixture's).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether the subject is svnserve too.
    pub fn is_selftest(&self) -> bool {
        self.selftest
    }

    /// The reference: svnserve over FSFS.
    pub fn reference(&self) -> &Server {
        &self.sides[0].server
    }

    /// The server under test.
    pub fn subject(&self) -> &Server {
        &self.sides[1].server
    }

    /// The reference's FSFS repository.
    pub fn reference_repo(&self) -> &Path {
        &self.sides[0].repo
    }

    /// The subject's repository.
    pub fn subject_repo(&self) -> &Path {
        &self.sides[1].repo
    }

    /// The repository URL on the reference side.
    pub fn reference_url(&self) -> String {
        self.sides[0].server.url(&self.name)
    }

    /// The repository URL on the subject side.
    pub fn subject_url(&self) -> String {
        self.sides[1].server.url(&self.name)
    }

    /// Side `i`'s work directory (0 = reference, 1 = subject).
    pub fn work(&self, i: usize) -> &Path {
        &self.sides[i].work
    }

    /// From now on, compare output with every date masked: commits made on both sides
    /// during a test get their dates a moment apart, sometimes across a second.
    pub fn mask_dates(&mut self) {
        for side in &mut self.sides {
            side.normalizer.dates = true;
        }
    }

    /// Writes `text` as `conf/svnserve.conf` of both repositories (svnserve and Svelto
    /// read it on every connection).
    pub fn set_svnserve_conf(&self, text: &str) {
        for side in &self.sides {
            let conf = side.repo.join("conf");
            std::fs::create_dir_all(&conf)
                .unwrap_or_else(|e| panic!("cannot create {conf:?}: {e}"));
            let file = conf.join("svnserve.conf");
            std::fs::write(&file, text).unwrap_or_else(|e| panic!("cannot write {file:?}: {e}"));
        }
    }

    /// A directory for the test's own files (beside the two sides).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    pub fn client(&self) -> &SvnClient {
        &self.client
    }

    /// The labels of the two sides, reference first.
    pub fn labels(&self) -> [&'static str; 2] {
        [self.sides[0].label, self.sides[1].label]
    }

    /// A fresh directory `name` in each side's work directory, where commands
    /// with relative paths (working copies, exports) run. `name` must be
    /// unique in the pair (one per test): it panics if it exists.
    pub fn scope(&self, name: &str) -> Scope<'_> {
        for side in &self.sides {
            let path = side.work.join(name);
            std::fs::create_dir(&path).unwrap_or_else(|e| {
                panic!("cannot create work directory {path:?} (name used twice?): {e}")
            });
        }
        Scope {
            pair: self,
            rel: PathBuf::from(name),
        }
    }

    /// `svn ARGS` on both sides (in the work directories), compared; the
    /// reference must succeed. `{URL}` in an argument is the side's
    /// repository URL, `{SERVER}` its `svn://127.0.0.1:PORT`, `{WORK}` the
    /// absolute path of the directory the command runs in.
    pub fn both(&self, args: &[&str]) -> Same {
        self.compare_in(Path::new(""), "svn", args, Expect::Success)
    }

    /// Like [`Pair::both`], but the reference must fail.
    pub fn both_fails(&self, args: &[&str]) -> Same {
        self.compare_in(Path::new(""), "svn", args, Expect::Failure)
    }

    /// Like [`Pair::both`], whatever the exit status (which must be the same).
    pub fn both_any(&self, args: &[&str]) -> Same {
        self.compare_in(Path::new(""), "svn", args, Expect::Any)
    }

    /// Any client tool (`svnbench`, `svnrdump`, ...) on both sides.
    pub fn both_tool(&self, tool: &str, args: &[&str], expect: Expect) -> Same {
        self.compare_in(Path::new(""), tool, args, expect)
    }

    /// Run `tool args` on both sides at once (in `rel` under each work
    /// directory), without comparing: `[reference, subject]`, raw.
    pub fn run_both(&self, rel: &Path, tool: &str, args: &[&str]) -> [Outcome; 2] {
        let running = [0, 1].map(|i| {
            let side = &self.sides[i];
            let cwd = side.work.join(rel);
            let args: Vec<String> = args.iter().map(|a| self.substitute(i, &cwd, a)).collect();
            self.client.command(tool, &cwd).args(&args).spawn()
        });
        running.map(|r| r.wait())
    }

    /// Run `tool args` on one side only (0 = reference, 1 = subject), raw.
    pub fn run_on(&self, side: usize, rel: &Path, tool: &str, args: &[&str]) -> Outcome {
        let cwd = self.sides[side].work.join(rel);
        let args: Vec<String> = args
            .iter()
            .map(|a| self.substitute(side, &cwd, a))
            .collect();
        self.client.command(tool, &cwd).args(&args).output()
    }

    /// `{URL}`, `{SERVER}` and `{WORK}` in `arg` for side `i`.
    pub fn substitute(&self, i: usize, cwd: &Path, arg: &str) -> String {
        let server = &self.sides[i].server;
        arg.replace("{URL}", &server.url(&self.name))
            .replace("{SERVER}", server.base_url())
            .replace("{WORK}", &cwd.to_string_lossy())
    }

    /// Output of side `i` made comparable.
    pub fn normalize(&self, i: usize, bytes: &[u8]) -> Vec<u8> {
        self.sides[i].normalizer.apply(bytes)
    }

    fn compare_in(&self, rel: &Path, tool: &str, args: &[&str], expect: Expect) -> Same {
        let outcomes = self.run_both(rel, tool, args);
        self.assert_same_outcomes(rel, tool, args, &outcomes, expect)
    }

    /// Compare two outcomes of the same command (normalized); panics with
    /// the first difference.
    pub fn assert_same_outcomes(
        &self,
        rel: &Path,
        tool: &str,
        args: &[&str],
        outcomes: &[Outcome; 2],
        expect: Expect,
    ) -> Same {
        let order = output_order(tool, args);
        let normalized = [0, 1].map(|i| {
            (
                outcomes[i].status.code(),
                canonical_output(&self.normalize(i, &outcomes[i].stdout), order),
                self.normalize(i, &outcomes[i].stderr),
            )
        });
        let labels = self.labels();
        let mut problems = String::new();
        if normalized[0].0 != normalized[1].0 {
            let _ = writeln!(
                problems,
                "  exit status: {} {:?}, {} {:?}",
                labels[0], normalized[0].0, labels[1], normalized[1].0
            );
        }
        if let Some(d) = first_difference(labels, &normalized[0].1, &normalized[1].1) {
            let _ = write!(problems, "  stdout: {d}");
        }
        if let Some(d) = first_difference(labels, &normalized[0].2, &normalized[1].2) {
            let _ = write!(problems, "  stderr: {d}");
        }
        let line = format!(
            "{tool} {}{}",
            args.join(" "),
            if rel.as_os_str().is_empty() {
                String::new()
            } else {
                format!("  (in {})", rel.display())
            }
        );
        if !problems.is_empty() && keep_going() {
            eprintln!(
                "=== DIFFERENCE: {} and {} differ on `{line}` (repository {}):\n{problems}",
                labels[0], labels[1], self.name
            );
        } else if !problems.is_empty() {
            panic!(
                "\n{} and {} differ on `{line}` (repository {}):\n{problems}\n\
                 {} said:\n{}\n{}",
                labels[0],
                labels[1],
                self.name,
                labels[1],
                indent_text(&outcomes[1].to_string()),
                self.sides[1].server.diagnostics()
            );
        }
        let ok = normalized[0].0 == Some(0);
        match expect {
            _ if !problems.is_empty() => {}
            Expect::Success if !ok => panic!(
                "`{line}` failed on both sides (the same way), but the test expects success:\n{}",
                outcomes[0]
            ),
            Expect::Failure if ok => panic!(
                "`{line}` succeeded on both sides, but the test expects a failure:\n{}",
                outcomes[0]
            ),
            _ => {}
        }
        let (code, stdout, stderr) = normalized.into_iter().next().expect("two sides");
        Same {
            code,
            stdout,
            stderr,
        }
    }

    /// Compare the trees under `rel` (relative to the work directories) on
    /// disk: names, kinds, file contents (normalized), executable bits and
    /// symlink targets; `.svn` is left out.
    pub fn compare_trees(&self, rel: &Path) {
        let trees =
            [0, 1].map(|i| snapshot_tree(&self.sides[i].work.join(rel), &self.sides[i].normalizer));
        if trees[0] == trees[1] {
            return;
        }
        let labels = self.labels();
        let mut message = format!(
            "\nthe trees {} differ between {} and {} (repository {}):\n",
            rel.display(),
            labels[0],
            labels[1],
            self.name
        );
        let keys: std::collections::BTreeSet<&String> =
            trees[0].keys().chain(trees[1].keys()).collect();
        let mut shown = 0;
        for key in keys {
            let (a, b) = (trees[0].get(key), trees[1].get(key));
            if a != b && shown < 10 {
                shown += 1;
                let _ = writeln!(
                    message,
                    "  {key}:\n    {}: {}\n    {}: {}",
                    labels[0],
                    describe_entry(a),
                    labels[1],
                    describe_entry(b)
                );
                if let (
                    Some(TreeEntry::File { content: ca, .. }),
                    Some(TreeEntry::File { content: cb, .. }),
                ) = (a, b)
                {
                    if let Some(d) = first_difference(labels, ca, cb) {
                        let _ = write!(message, "    {d}");
                    }
                }
            }
        }
        if keep_going() {
            eprintln!("=== DIFFERENCE: {message}");
        } else {
            panic!("{message}");
        }
    }
}

/// Spawn `sh` that removes `dir` once this process's end closes its
/// standard input.
fn remove_at_exit(dir: &Path) {
    static KEEP: OnceLock<Mutex<Vec<ChildStdin>>> = OnceLock::new();
    let mut child = match Command::new("sh")
        .arg("-c")
        .arg(r#"read -r _; rm -rf -- "$1""#)
        .arg("svelto-testkit-cleanup")
        .arg(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
    {
        Ok(child) => child,
        // Leaving the directory behind is all that is lost.
        Err(_) => return,
    };
    if let Some(stdin) = child.stdin.take() {
        KEEP.get_or_init(|| Mutex::new(Vec::new()))
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(stdin);
    }
    // The child is reaped by init once this process is gone.
    std::mem::forget(child);
}

/// A pair's directory: roots `a` and `b`, each with `repos/` and `work/`, and the path of
/// the repository `name` under each.
fn pair_dirs(name: &str) -> (TempDir, [PathBuf; 2], [PathBuf; 2]) {
    let dir = tempdir();
    let roots = [dir.path().join("a"), dir.path().join("b")];
    for root in &roots {
        for sub in ["repos", "work"] {
            let path = root.join(sub);
            std::fs::create_dir_all(&path)
                .unwrap_or_else(|e| panic!("cannot create {path:?}: {e}"));
        }
    }
    let repos = roots.clone().map(|r| r.join("repos").join(name));
    (dir, roots, repos)
}

/// Loads `dump` into FSFS on side 0 and into the subject's store on side 1, at once.
fn load_sides(repos: &[PathBuf; 2], dump: &Path, subject: &Subject) {
    std::thread::scope(|scope| {
        let reference = scope.spawn(|| make_fsfs(&repos[0], dump));
        match subject {
            Subject::SelfTest => make_fsfs(&repos[1], dump),
            Subject::Svelto(binary) => make_svelto(binary, &repos[1], dump),
        }
        if let Err(panic) = reference.join() {
            std::panic::resume_unwind(panic);
        }
    });
}

fn make_fsfs(repo: &Path, dump: &Path) {
    Run::tool("svnadmin").arg("create").arg(repo).success();
    Run::tool("svnadmin")
        .args(["load", "-q", "--no-flush-to-disk"])
        .arg(repo)
        .stdin_file(dump)
        .success();
    Run::tool("svnadmin")
        .args(["pack", "-q"])
        .arg(repo)
        .success();
}

fn make_svelto(binary: &Path, repo: &Path, dump: &Path) {
    Run::new(binary)
        .args(["admin", "create"])
        .arg(repo)
        .success();
    Run::new(binary)
        .args(["admin", "load", "-q", "-F"])
        .arg(dump)
        .arg(repo)
        .success();
}

fn indent_text(text: &str) -> String {
    text.lines().map(|l| format!("    {l}\n")).collect()
}

/// One entry of a tree on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TreeEntry {
    Dir,
    File {
        content: Vec<u8>,
        executable: bool,
    },
    Symlink(PathBuf),
    Other,
    /// The root of the tree does not exist.
    Missing,
}

fn describe_entry(entry: Option<&TreeEntry>) -> String {
    match entry {
        None => "(missing)".to_owned(),
        Some(TreeEntry::Dir) => "directory".to_owned(),
        Some(TreeEntry::File {
            content,
            executable,
        }) => format!(
            "file, {} bytes{}",
            content.len(),
            if *executable { ", executable" } else { "" }
        ),
        Some(TreeEntry::Symlink(target)) => format!("symlink to {target:?}"),
        Some(TreeEntry::Other) => "special file".to_owned(),
        Some(TreeEntry::Missing) => "(does not exist)".to_owned(),
    }
}

/// The tree under `root` (without `.svn` directories): relative path →
/// entry, file contents normalized by `normalizer` (expanded `$URL$`
/// keywords name the server).
pub fn snapshot_tree(root: &Path, normalizer: &Normalizer) -> BTreeMap<String, TreeEntry> {
    use std::os::unix::fs::PermissionsExt;
    let mut out = BTreeMap::new();
    if std::fs::symlink_metadata(root).is_err() {
        out.insert(String::new(), TreeEntry::Missing);
        return out;
    }
    if !root.is_dir() {
        let meta =
            std::fs::symlink_metadata(root).unwrap_or_else(|e| panic!("cannot stat {root:?}: {e}"));
        let kind = if meta.file_type().is_symlink() {
            TreeEntry::Symlink(
                std::fs::read_link(root)
                    .unwrap_or_else(|e| panic!("cannot read link {root:?}: {e}")),
            )
        } else {
            let content =
                std::fs::read(root).unwrap_or_else(|e| panic!("cannot read {root:?}: {e}"));
            TreeEntry::File {
                content: normalizer.replace_only(&content),
                executable: meta.permissions().mode() & 0o111 != 0,
            }
        };
        out.insert(String::new(), kind);
        return out;
    }
    let mut stack = vec![root.to_owned()];
    while let Some(dir) = stack.pop() {
        let entries =
            std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("cannot list {dir:?}: {e}"));
        for entry in entries {
            let entry = entry.unwrap_or_else(|e| panic!("cannot list {dir:?}: {e}"));
            if entry.file_name() == ".svn" {
                continue;
            }
            let path = entry.path();
            let rel = path
                .strip_prefix(root)
                .expect("entries are under the root")
                .to_string_lossy()
                .into_owned();
            let meta = std::fs::symlink_metadata(&path)
                .unwrap_or_else(|e| panic!("cannot stat {path:?}: {e}"));
            let kind = if meta.file_type().is_symlink() {
                TreeEntry::Symlink(
                    std::fs::read_link(&path)
                        .unwrap_or_else(|e| panic!("cannot read link {path:?}: {e}")),
                )
            } else if meta.is_dir() {
                stack.push(path.clone());
                TreeEntry::Dir
            } else if meta.is_file() {
                let content =
                    std::fs::read(&path).unwrap_or_else(|e| panic!("cannot read {path:?}: {e}"));
                TreeEntry::File {
                    content: normalizer.replace_only(&content),
                    executable: meta.permissions().mode() & 0o111 != 0,
                }
            } else {
                TreeEntry::Other
            };
            out.insert(rel, kind);
        }
    }
    out
}

/// A directory of the same relative name in both sides' work directories;
/// commands run there, so working copies and exports have the same relative
/// paths on both sides.
pub struct Scope<'p> {
    pair: &'p Pair,
    rel: PathBuf,
}

impl Scope<'_> {
    pub fn pair(&self) -> &Pair {
        self.pair
    }

    /// The scope's directory on side `i` (0 = reference, 1 = subject).
    pub fn path(&self, i: usize) -> PathBuf {
        self.pair.sides[i].work.join(&self.rel)
    }

    /// `svn ARGS` on both sides in this scope, compared; the reference must
    /// succeed.
    pub fn both(&self, args: &[&str]) -> Same {
        self.pair
            .compare_in(&self.rel, "svn", args, Expect::Success)
    }

    /// Like [`Scope::both`], but the reference must fail.
    pub fn both_fails(&self, args: &[&str]) -> Same {
        self.pair
            .compare_in(&self.rel, "svn", args, Expect::Failure)
    }

    /// Like [`Scope::both`], whatever the exit status.
    pub fn both_any(&self, args: &[&str]) -> Same {
        self.pair.compare_in(&self.rel, "svn", args, Expect::Any)
    }

    /// Any client tool on both sides in this scope.
    pub fn both_tool(&self, tool: &str, args: &[&str], expect: Expect) -> Same {
        self.pair.compare_in(&self.rel, tool, args, expect)
    }

    /// Run on both sides without comparing: `[reference, subject]`.
    pub fn run_both(&self, tool: &str, args: &[&str]) -> [Outcome; 2] {
        self.pair.run_both(&self.rel, tool, args)
    }

    /// Each step (`svn` arguments) on both sides, compared, then
    /// [`Scope::compare_wc`] of `wc` after it. Returns the steps' outputs.
    pub fn steps(&self, wc: &str, steps: &[&[&str]]) -> Vec<Same> {
        steps
            .iter()
            .map(|step| {
                let same = self.both(step);
                self.compare_wc(wc);
                same
            })
            .collect()
    }

    /// `checkout -r FIRST {URL}/url_path wc`, then `update -r R wc` for each
    /// later revision, comparing the output and the working copy each time.
    pub fn walk(&self, url_path: &str, wc: &str, revisions: &[u64]) {
        let url = format!("{{URL}}{url_path}");
        let Some((first, rest)) = revisions.split_first() else {
            return;
        };
        let first = first.to_string();
        self.both(&["checkout", "-r", &first, &url, wc]);
        self.compare_wc(wc);
        for rev in rest {
            let rev = rev.to_string();
            self.both(&["update", "-r", &rev, wc]);
            self.compare_wc(wc);
        }
    }

    /// The working copy `wc` (relative to the scope) on disk and as svn sees
    /// it: the trees (see [`Pair::compare_trees`]), then `svn info -R`,
    /// `svn status -v` and `svn proplist -v -R` of it.
    pub fn compare_wc(&self, wc: &str) {
        self.compare_tree(wc);
        self.both(&["info", "-R", wc]);
        self.both(&["status", "-v", wc]);
        self.both(&["proplist", "-v", "-R", wc]);
    }

    /// The trees `rel` (relative to the scope) on disk, without `.svn`.
    pub fn compare_tree(&self, rel: &str) {
        self.pair.compare_trees(&self.rel.join(rel));
    }

    /// Write the same file on both sides (relative to the scope).
    pub fn write(&self, rel: &str, contents: &[u8]) {
        for i in 0..2 {
            let path = self.path(i).join(rel);
            std::fs::write(&path, contents)
                .unwrap_or_else(|e| panic!("cannot write {path:?}: {e}"));
        }
    }

    /// Remove the same file or directory on both sides.
    pub fn remove(&self, rel: &str) {
        for i in 0..2 {
            let path = self.path(i).join(rel);
            let result = if path.is_dir() {
                std::fs::remove_dir_all(&path)
            } else {
                std::fs::remove_file(&path)
            };
            result.unwrap_or_else(|e| panic!("cannot remove {path:?}: {e}"));
        }
    }
}

/// Pairs shared by the tests of a binary, one per fixture, made on first use
/// (tests of different fixtures do not wait for each other) and kept until
/// the process ends.
pub fn shared_pair(fixture: &str, svelto_binary: &Path) -> &'static Pair {
    static CELLS: OnceLock<PairCells> = OnceLock::new();
    shared_cell(&CELLS, fixture).get_or_init(|| Pair::new(fixture, svelto_binary).share())
}

/// The HTTP pair (Apache with mod_dav_svn, and `svelto serve --http-listen`) serving
/// `fixture`, made on first use and shared by every test of the process.
pub fn shared_http_pair(fixture: &str, svelto_binary: &Path) -> &'static Pair {
    static CELLS: OnceLock<PairCells> = OnceLock::new();
    shared_cell(&CELLS, fixture).get_or_init(|| Pair::http(fixture, svelto_binary).share())
}

/// One cell per fixture, each filled once.
type PairCells = Mutex<HashMap<String, &'static OnceLock<&'static Pair>>>;

fn shared_cell(
    cells: &'static OnceLock<PairCells>,
    fixture: &str,
) -> &'static OnceLock<&'static Pair> {
    let mut cells = cells
        .get_or_init(|| Mutex::new(HashMap::new()))
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    cells
        .entry(fixture.to_owned())
        .or_insert_with(|| Box::leak(Box::new(OnceLock::new())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_listening_port() {
        assert_eq!(listening_port("listening on 127.0.0.1:4567"), Some(4567));
        assert_eq!(
            listening_port("2026-01-01T00:00:00Z INFO svelto: listening on 127.0.0.1:80 (2 repos)"),
            Some(80)
        );
        assert_eq!(listening_port("listening on 127.0.0.1:0"), None);
        assert_eq!(listening_port("listening on [::1]:4567"), None);
    }

    #[test]
    fn normalizes_and_masks() {
        let n = Normalizer::new()
            .replace("svn://127.0.0.1:4567", SERVER_PLACEHOLDER)
            .replace("/tmp/a/work", WORK_PLACEHOLDER);
        let out = n.apply(
            b"URL: svn://127.0.0.1:4567/r/trunk\nWorking Copy Root Path: /tmp/a/work/s/wc\n\
              Text Last Updated: 2026-01-01 10:00:00 +0000 (Thu, 01 Jan 2026)\n\
              <text-updated>2026-01-01T10:00:00.000000Z</text-updated>\n\
              0.001 seconds taken\n",
        );
        assert_eq!(
            String::from_utf8(out).expect("utf-8"),
            "URL: svn://SERVER/r/trunk\nWorking Copy Root Path: {WORK}/s/wc\n\
             Text Last Updated: {TIME}\n<text-updated>{TIME}</text-updated>\n\
             {SECONDS} seconds taken\n"
        );
    }

    #[test]
    fn canonicalizes_xml_and_order() {
        let xml = b"<?xml version=\"1.0\"?>\n<path\n   b=\"2\"\n   a=\"x>y\">p</path>\n<x/>\n";
        assert_eq!(
            String::from_utf8(canonical_output(xml, Order::Kept)).expect("utf-8"),
            "<?xml version=\"1.0\"?>\n<path a=\"x>y\" b=\"2\">p</path>\n<x/>\n"
        );
        assert_eq!(sorted_blocks(b"b\na\nc", DIFF_BLOCKS), b"a\nb\nc\n");
        assert_eq!(
            sorted_blocks(b"Index: z\n-1\nIndex: a\n+2\n", DIFF_BLOCKS),
            b"Index: a\n+2\nIndex: z\n-1\n"
        );
        assert_eq!(
            output_order("svn", &["update", "--depth", "x"]),
            Order::Blocks(&[])
        );
        assert_eq!(
            output_order("svn", &["info", "-R", "x"]),
            Order::Blocks(INFO_BLOCKS)
        );
        assert_eq!(output_order("svn", &["info", "x"]), Order::Kept);
        assert_eq!(output_order("svn", &["log", "-v"]), Order::Kept);
    }

    #[test]
    fn shows_the_first_difference() {
        assert_eq!(first_difference(["a", "b"], b"x\ny", b"x\ny"), None);
        let d = first_difference(["a", "b"], b"1\n2\n3\n", b"1\n2\nX\n").expect("differ");
        assert!(d.contains("line 3"), "{d}");
        assert!(d.contains("- a: 3"), "{d}");
        assert!(d.contains("+ b: X"), "{d}");
        let d = first_difference(["a", "b"], b"1\n", b"1\n2\n").expect("differ");
        assert!(d.contains("(end)"), "{d}");
    }
}
