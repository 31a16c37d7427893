//! Running external programs (the real Subversion tools, the `svelto` binary)
//! with failure messages that say what was run, how it ended and what it said.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, ExitStatus, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long a command may run before it is killed and the test fails.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);

/// The path of a Subversion tool on `PATH`. Panics loudly when it is missing:
/// the suite never skips a test because the tools are not installed.
pub fn require_tool(name: &str) -> PathBuf {
    find_on_path(name).unwrap_or_else(|| {
        panic!(
            "\n\n*** Subversion's {name} is required: apt-get install subversion ***\n\
             (searched PATH={:?})\n",
            std::env::var_os("PATH").unwrap_or_default()
        )
    })
}

fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

enum Input {
    Null,
    Bytes(Vec<u8>),
    File(PathBuf),
}

enum Output {
    Capture,
    File(PathBuf),
    Sink(Box<dyn Write + Send>),
}

/// A command to run, built up like [`Command`], run to completion by
/// [`Run::output`], [`Run::success`] or [`Run::failure`], or in the
/// background by [`Run::spawn`].
pub struct Run {
    command: Command,
    line: Vec<OsString>,
    input: Input,
    output: Output,
    timeout: Duration,
    watch_memory: bool,
}

impl Run {
    /// A command running `program` (a path, or a name looked up on `PATH`).
    pub fn new(program: impl AsRef<OsStr>) -> Run {
        let program = program.as_ref();
        let mut command = Command::new(program);
        command.env("LC_ALL", "C.UTF-8");
        Run {
            command,
            line: vec![program.to_owned()],
            input: Input::Null,
            output: Output::Capture,
            timeout: DEFAULT_TIMEOUT,
            watch_memory: false,
        }
    }

    /// A command running one of Subversion's tools (see [`require_tool`]).
    pub fn tool(name: &str) -> Run {
        Run::new(require_tool(name))
    }

    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Run {
        self.command.arg(arg.as_ref());
        self.line.push(arg.as_ref().to_owned());
        self
    }

    pub fn args<I, S>(mut self, args: I) -> Run
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        for arg in args {
            self = self.arg(arg);
        }
        self
    }

    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Run {
        self.command.env(key, value);
        self
    }

    pub fn current_dir(mut self, dir: impl AsRef<Path>) -> Run {
        self.command.current_dir(dir);
        self
    }

    /// Feed these bytes to the command's standard input.
    pub fn stdin_bytes(mut self, bytes: impl Into<Vec<u8>>) -> Run {
        self.input = Input::Bytes(bytes.into());
        self
    }

    /// Connect the command's standard input to this file.
    pub fn stdin_file(mut self, path: impl AsRef<Path>) -> Run {
        self.input = Input::File(path.as_ref().to_owned());
        self
    }

    /// Write the command's standard output to this file instead of keeping it.
    pub fn stdout_file(mut self, path: impl AsRef<Path>) -> Run {
        self.output = Output::File(path.as_ref().to_owned());
        self
    }

    /// Stream the command's standard output into `sink` (a hasher, say)
    /// instead of keeping it.
    pub fn stdout_sink(mut self, sink: impl Write + Send + 'static) -> Run {
        self.output = Output::Sink(Box::new(sink));
        self
    }

    pub fn timeout(mut self, timeout: Duration) -> Run {
        self.timeout = timeout;
        self
    }

    /// Record the child's peak resident set size (`VmHWM` in
    /// `/proc/<pid>/status`, polled while it runs) in [`Outcome::peak_rss_kib`].
    pub fn watch_memory(mut self) -> Run {
        self.watch_memory = true;
        self
    }

    /// The command line, quoted for a shell, for messages.
    pub fn command_line(&self) -> String {
        shell_line(&self.line)
    }

    /// Start the command in the background.
    pub fn spawn(mut self) -> Running {
        let line = self.command_line();
        let stdin = match &self.input {
            Input::Null => Stdio::null(),
            Input::Bytes(_) => Stdio::piped(),
            Input::File(path) => Stdio::from(
                File::open(path).unwrap_or_else(|e| panic!("cannot open {path:?} for {line}: {e}")),
            ),
        };
        let stdout = match &self.output {
            Output::File(path) => Stdio::from(
                File::create(path)
                    .unwrap_or_else(|e| panic!("cannot create {path:?} for {line}: {e}")),
            ),
            Output::Capture | Output::Sink(_) => Stdio::piped(),
        };
        let mut child = self
            .command
            .stdin(stdin)
            .stdout(stdout)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {line}: {e}"));
        let stdin_writer = match std::mem::replace(&mut self.input, Input::Null) {
            Input::Bytes(bytes) => {
                let mut pipe = child.stdin.take().expect("stdin was piped");
                Some(std::thread::spawn(move || {
                    // A child that exits early closes the pipe; that is its
                    // business, and its exit status tells.
                    let _ = pipe.write_all(&bytes);
                }))
            }
            _ => None,
        };
        let stdout_reader = match std::mem::replace(&mut self.output, Output::Capture) {
            Output::Capture => {
                let pipe = child.stdout.take().expect("stdout was piped");
                Some(spawn_reader(pipe, None))
            }
            Output::Sink(sink) => {
                let pipe = child.stdout.take().expect("stdout was piped");
                Some(spawn_reader(pipe, Some(sink)))
            }
            Output::File(_) => None,
        };
        let stderr = child.stderr.take().expect("stderr was piped");
        let stderr_reader = std::thread::spawn(move || {
            let mut buf = Vec::new();
            let mut stderr = stderr;
            let _ = stderr.read_to_end(&mut buf);
            buf
        });
        Running {
            child,
            line,
            started: Instant::now(),
            timeout: self.timeout,
            watch_memory: self.watch_memory,
            peak_rss_kib: None,
            stdin_writer,
            stdout_reader,
            stderr_reader: Some(stderr_reader),
        }
    }

    /// Run to completion, whatever the exit status.
    pub fn output(self) -> Outcome {
        self.spawn().wait()
    }

    /// Run to completion; panic with the details unless it exits 0.
    pub fn success(self) -> Outcome {
        let outcome = self.output();
        if !outcome.status.success() {
            panic!("command failed:\n{outcome}");
        }
        outcome
    }

    /// Run to completion; panic with the details if it exits 0.
    pub fn failure(self) -> Outcome {
        let outcome = self.output();
        if outcome.status.success() {
            panic!("command succeeded but was expected to fail:\n{outcome}");
        }
        outcome
    }
}

fn spawn_reader(
    mut pipe: ChildStdout,
    sink: Option<Box<dyn Write + Send>>,
) -> JoinHandle<io::Result<Vec<u8>>> {
    std::thread::spawn(move || match sink {
        None => {
            let mut buf = Vec::new();
            pipe.read_to_end(&mut buf)?;
            Ok(buf)
        }
        Some(mut sink) => {
            io::copy(&mut pipe, &mut sink)?;
            sink.flush()?;
            Ok(Vec::new())
        }
    })
}

/// A command running in the background (see [`Run::spawn`]).
pub struct Running {
    child: Child,
    line: String,
    started: Instant,
    timeout: Duration,
    watch_memory: bool,
    peak_rss_kib: Option<u64>,
    stdin_writer: Option<JoinHandle<()>>,
    stdout_reader: Option<JoinHandle<io::Result<Vec<u8>>>>,
    stderr_reader: Option<JoinHandle<Vec<u8>>>,
}

impl Running {
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// Whether the process has exited (without reaping it for good: a later
    /// [`Running::wait`] still reports how it ended).
    pub fn has_exited(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(Some(_)))
    }

    /// SIGKILL the process (`kill -9`), then wait for it.
    pub fn kill(mut self) -> Outcome {
        // Fails only when the process has already exited, which is fine.
        let _ = self.child.kill();
        self.wait()
    }

    /// Wait for the process to end (killing it after the timeout).
    pub fn wait(mut self) -> Outcome {
        let status = loop {
            if self.watch_memory {
                if let Some(kib) = read_vm_hwm_kib(self.child.id()) {
                    self.peak_rss_kib = Some(self.peak_rss_kib.map_or(kib, |p| p.max(kib)));
                }
            }
            match self.child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) => {}
                Err(e) => panic!("cannot wait for {}: {e}", self.line),
            }
            if self.started.elapsed() > self.timeout {
                let _ = self.child.kill();
                let _ = self.child.wait();
                let stderr = self.collect_stderr();
                panic!(
                    "command timed out after {:?} and was killed:\n  {}\nstderr:\n{}",
                    self.timeout,
                    self.line,
                    excerpt(&stderr, 4000)
                );
            }
            std::thread::sleep(Duration::from_millis(if self.watch_memory { 2 } else { 5 }));
        };
        if let Some(writer) = self.stdin_writer.take() {
            let _ = writer.join();
        }
        let stdout = match self.stdout_reader.take() {
            Some(reader) => reader
                .join()
                .expect("stdout reader thread panicked")
                .unwrap_or_else(|e| panic!("reading the output of {} failed: {e}", self.line)),
            None => Vec::new(),
        };
        let stderr = self.collect_stderr();
        Outcome {
            command_line: std::mem::take(&mut self.line),
            status,
            stdout,
            stderr,
            elapsed: self.started.elapsed(),
            peak_rss_kib: self.peak_rss_kib,
        }
    }

    fn collect_stderr(&mut self) -> Vec<u8> {
        self.stderr_reader
            .take()
            .map(|r| r.join().expect("stderr reader thread panicked"))
            .unwrap_or_default()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        // A Running dropped while its test unwinds must not outlive the test.
        if self.stderr_reader.is_some() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// `VmHWM` (peak resident set size) of a live process, in KiB.
pub fn read_vm_hwm_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
}

/// How a command ended and what it printed.
pub struct Outcome {
    pub command_line: String,
    pub status: ExitStatus,
    /// Empty when standard output went to a file or a sink.
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub elapsed: Duration,
    /// Set when the command ran with [`Run::watch_memory`].
    pub peak_rss_kib: Option<u64>,
}

impl Outcome {
    pub fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }

    pub fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }

    pub fn success(&self) -> bool {
        self.status.success()
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "  command: {}", self.command_line)?;
        writeln!(f, "  status:  {} (after {:.2?})", self.status, self.elapsed)?;
        writeln!(f, "  stderr:\n{}", indent(&excerpt(&self.stderr, 6000)))?;
        if !self.stdout.is_empty() {
            writeln!(
                f,
                "  stdout (last part):\n{}",
                indent(&tail(&self.stdout, 2000))
            )?;
        }
        Ok(())
    }
}

impl fmt::Debug for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("    {l}\n")).collect()
}

fn excerpt(bytes: &[u8], max: usize) -> String {
    let text = String::from_utf8_lossy(bytes);
    if text.len() <= max {
        text.into_owned()
    } else {
        let cut = (0..=max)
            .rev()
            .find(|&i| text.is_char_boundary(i))
            .unwrap_or(0);
        format!("{}\n[... {} more bytes]", &text[..cut], text.len() - cut)
    }
}

fn tail(bytes: &[u8], max: usize) -> String {
    let start = bytes.len().saturating_sub(max);
    let text = String::from_utf8_lossy(&bytes[start..]);
    if start > 0 {
        format!("[... {start} bytes before]\n{text}")
    } else {
        text.into_owned()
    }
}

fn shell_line(words: &[OsString]) -> String {
    words
        .iter()
        .map(|w| {
            let w = w.to_string_lossy();
            if !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./:=@,+%".contains(c))
            {
                w.into_owned()
            } else {
                format!("'{}'", w.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_words_for_a_shell() {
        let words: Vec<OsString> = ["svnadmin", "load", "a b", "it's", ""]
            .iter()
            .map(OsString::from)
            .collect();
        assert_eq!(shell_line(&words), r"svnadmin load 'a b' 'it'\''s' ''");
    }

    #[test]
    fn runs_and_reports() {
        let out = Run::new("sh")
            .args(["-c", "cat; echo oops >&2"])
            .stdin_bytes("hi")
            .success();
        assert_eq!(out.stdout, b"hi");
        assert_eq!(out.stderr_text(), "oops\n");
        let failed = Run::new("sh")
            .args(["-c", "echo bad >&2; exit 3"])
            .failure();
        assert_eq!(failed.status.code(), Some(3));
        let message = failed.to_string();
        assert!(
            message.contains("sh -c 'echo bad >&2; exit 3'"),
            "{message}"
        );
        assert!(message.contains("bad"), "{message}");
    }

    #[test]
    #[should_panic(expected = "command failed")]
    fn success_panics_on_failure() {
        Run::new("false").success();
    }

    #[test]
    #[should_panic(expected = "apt-get install subversion")]
    fn missing_tool_is_loud() {
        require_tool("svnadmin-that-does-not-exist");
    }

    #[test]
    fn watches_memory_and_kills() {
        let out = Run::new("sh")
            .args(["-c", "sleep 0.1"])
            .watch_memory()
            .success();
        assert!(
            out.peak_rss_kib.is_some_and(|k| k > 0),
            "{:?}",
            out.peak_rss_kib
        );
        let running = Run::new("sleep").arg("30").spawn();
        let killed = running.kill();
        assert!(!killed.success());
        assert!(killed.elapsed < Duration::from_secs(10));
    }
}
