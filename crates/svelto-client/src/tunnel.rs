//! `svn+NAME://`: the tunnel agent the stock client runs (libsvn_ra_svn's
//! `find_tunnel_agent` and `make_tunnel`), whose stdin and stdout carry the session.
//!
//! The agent is the `[tunnels]` entry `NAME` of the stock client's configuration
//! (`/etc/subversion/config`, then `CONFIG_DIR/config`, the later winning); for `ssh` without
//! one, `$SVN_SSH ssh -q --`. An entry that starts with `$VAR` runs `$VAR`'s value when that
//! variable is set, else the rest of the entry. The command is split into words as the stock
//! client splits it (blanks, quotes, backslashes), and run as `AGENT... HOSTINFO svnserve
//! -t`, where HOSTINFO is the URL's authority as it is spelled (`[user@]host[:port]`, `%XX`
//! decoded): the port is not turned into an option, as the stock client does not (a
//! non-standard port is set in the agent, as `SVN_SSH="ssh -p 2222"`).

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use crate::error::{Error, Result};

/// How much of the agent's stderr is kept for an error message (its end).
const STDERR_KEPT: usize = 16 * 1024;

/// How long the agent may take to exit once its stdin is closed before it is killed.
const EXIT_GRACE: Duration = Duration::from_secs(2);

/// The agent's words for tunnel scheme `tunnel` to `hostinfo`, from the configuration
/// under `config_dir` (and `/etc/subversion`) and the environment `getenv` reads.
pub fn agent_argv(
    tunnel: &str,
    hostinfo: &str,
    config_dir: Option<&Path>,
    getenv: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<String>> {
    let definition = crate::config::option(config_dir, "tunnels", tunnel);
    argv_of(tunnel, definition.as_deref(), hostinfo, getenv)
}

/// [`agent_argv`] from the `[tunnels]` entry (None: there is none).
fn argv_of(
    tunnel: &str,
    definition: Option<&str>,
    hostinfo: &str,
    getenv: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<String>> {
    let bad = |reason: String| Error::Usage(reason);
    let val = match definition {
        Some(v) => v,
        None if tunnel == "ssh" => "$SVN_SSH ssh -q --",
        None => {
            return Err(bad(format!(
                "undefined tunnel scheme '{tunnel}': svn+{tunnel}:// needs a '{tunnel} = \
                 COMMAND' line in the [tunnels] section of the Subversion configuration \
                 (~/.subversion/config)"
            )))
        }
    };
    if val.is_empty() {
        return Err(bad(format!(
            "undefined tunnel scheme '{tunnel}': its [tunnels] entry is empty"
        )));
    }
    let cmd = match val.strip_prefix('$') {
        Some(rest) => {
            let len = rest.find(' ').unwrap_or(rest.len());
            let var = &rest[..len];
            match getenv(var) {
                Some(v) => v,
                None => {
                    let fallback = rest[len..].trim_start_matches(' ');
                    if fallback.is_empty() {
                        return Err(bad(format!(
                            "tunnel scheme {tunnel} requires environment variable {var} to be \
                             defined"
                        )));
                    }
                    fallback.to_string()
                }
            }
        }
        None => val.to_string(),
    };
    let mut argv = tokenize(&cmd);
    if argv.is_empty() {
        return Err(bad(format!(
            "tunnel scheme {tunnel}: the agent command '{cmd}' is empty"
        )));
    }
    argv.extend([hostinfo.to_string(), "svnserve".into(), "-t".into()]);
    Ok(argv)
}

/// A command split into words as APR's `apr_tokenize_to_argv` splits it: at blanks, with
/// `"..."` and `'...'` keeping blanks and a backslash taking the next character as it is.
pub fn tokenize(cmd: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut chars = cmd.chars().peekable();
    loop {
        while chars.next_if(|c| c.is_ascii_whitespace()).is_some() {}
        let Some(&first) = chars.peek() else {
            return words;
        };
        let mut word = String::new();
        let quote = matches!(first, '"' | '\'').then_some(first);
        if quote.is_some() {
            chars.next();
        }
        while let Some(c) = chars.next() {
            match c {
                '\\' => {
                    if let Some(n) = chars.next() {
                        word.push(n);
                    }
                }
                c if Some(c) == quote => break,
                c if quote.is_none() && c.is_ascii_whitespace() => break,
                c => word.push(c),
            }
        }
        words.push(word);
    }
}

/// The value of `option` in `[section]` of a Subversion configuration file (its INI form:
/// `name = value` or `name: value`, `#` comments, indented lines continuing a value), the
/// last one given; names compared without regard to case.
pub fn config_value(text: &str, section: &str, option: &str) -> Option<String> {
    let mut in_section = false;
    let mut found: Option<String> = None;
    let mut continuing = false;
    for line in text.lines() {
        if line.starts_with('#') {
            continuing = false;
            continue;
        }
        if line.starts_with([' ', '\t']) {
            let more = line.trim();
            if continuing && !more.is_empty() {
                if let Some(v) = found.as_mut() {
                    v.push(' ');
                    v.push_str(more);
                }
            }
            continue;
        }
        continuing = false;
        if let Some(name) = line.strip_prefix('[') {
            in_section = name
                .split_once(']')
                .is_some_and(|(n, _)| n.eq_ignore_ascii_case(section));
            continue;
        }
        if !in_section {
            continue;
        }
        let Some(sep) = line.find([':', '=']) else {
            continue;
        };
        if line[..sep].trim().eq_ignore_ascii_case(option) {
            found = Some(line[sep + 1..].trim().to_string());
            continuing = true;
        }
    }
    found
}

/// A running tunnel agent: the session reads its stdout and writes its stdin; its stderr is
/// kept (the end of it) for the error a failure gives. Reaped when dropped.
pub struct Tunnel {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: ChildStdout,
    stderr: Arc<Mutex<Vec<u8>>>,
    /// Says when the agent's stderr is closed (it has exited).
    stderr_done: mpsc::Receiver<()>,
    /// The command, as the errors show it.
    pub command: String,
}

impl Tunnel {
    /// Starts `argv`.
    pub fn spawn(argv: &[String]) -> Result<Tunnel> {
        let command = shown(argv);
        let Some((program, args)) = argv.split_first() else {
            return Err(Error::Usage("the tunnel agent command is empty".into()));
        };
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| Error::Tunnel {
                command: command.clone(),
                what: format!("cannot start it: {e}"),
            })?;
        let (Some(stdin), Some(stdout), Some(mut err)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(Error::Tunnel {
                command,
                what: "its pipes were not made".into(),
            });
        };
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let (tx, stderr_done) = mpsc::channel();
        let kept = Arc::clone(&stderr);
        std::thread::Builder::new()
            .name("tunnel-stderr".into())
            .spawn(move || {
                let mut chunk = [0u8; 4096];
                loop {
                    match err.read(&mut chunk) {
                        Ok(0) => break,
                        Ok(n) => {
                            let mut k = kept.lock().unwrap_or_else(|p| p.into_inner());
                            k.extend_from_slice(&chunk[..n]);
                            if k.len() > 2 * STDERR_KEPT {
                                let cut = k.len() - STDERR_KEPT;
                                k.drain(..cut);
                            }
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(_) => break,
                    }
                }
                let _ = tx.send(());
            })
            .map_err(|e| Error::Tunnel {
                command: command.clone(),
                what: format!("cannot start a thread to read its stderr: {e}"),
            })?;
        Ok(Tunnel {
            child,
            stdin: Some(stdin),
            stdout,
            stderr,
            stderr_done,
            command,
        })
    }

    /// What became of the agent after the session failed: its exit status (waiting a
    /// moment for it) and what it wrote to stderr.
    pub fn post_mortem(&mut self) -> String {
        // Closing its stdin lets an agent that still runs notice the end.
        self.stdin = None;
        let deadline = Instant::now() + EXIT_GRACE;
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(status)) => break Some(status),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10))
                }
                _ => break None,
            }
        };
        if status.is_some() {
            let _ = self.stderr_done.recv_timeout(Duration::from_millis(500));
        }
        let text = {
            let k = self.stderr.lock().unwrap_or_else(|p| p.into_inner());
            let start = k.len().saturating_sub(STDERR_KEPT);
            String::from_utf8_lossy(&k[start..]).trim_end().to_string()
        };
        let mut out = match status {
            Some(s) => match s.code() {
                Some(code) => format!("it exited with status {code}"),
                None => format!("it ended: {s}"),
            },
            None => "it is still running".to_string(),
        };
        if text.is_empty() {
            out.push_str(", printing nothing on stderr");
        } else {
            out.push_str("; its stderr:\n");
            out.push_str(&text);
        }
        out
    }
}

/// A command line as an error message shows it.
fn shown(argv: &[String]) -> String {
    argv.iter()
        .map(|w| {
            if w.is_empty() || w.contains(|c: char| c.is_whitespace() || "'\"\\".contains(c)) {
                format!("'{}'", w.replace('\'', "'\\''"))
            } else {
                w.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

impl Read for Tunnel {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.stdout.read(buf)
    }
}

impl Write for Tunnel {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self.stdin.as_mut() {
            Some(s) => s.write(buf),
            None => Err(std::io::ErrorKind::BrokenPipe.into()),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        match self.stdin.as_mut() {
            Some(s) => s.write_all(buf),
            None => Err(std::io::ErrorKind::BrokenPipe.into()),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self.stdin.as_mut() {
            Some(s) => s.flush(),
            None => Ok(()),
        }
    }
}

impl Drop for Tunnel {
    /// Ends the session as the server sees a client leave (its input closed), gives the
    /// agent a moment to exit, kills it otherwise, and reaps it.
    fn drop(&mut self) {
        self.stdin = None;
        let deadline = Instant::now() + EXIT_GRACE;
        loop {
            match self.child.try_wait() {
                Ok(Some(_)) => return,
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(5))
                }
                _ => break,
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn the_default_ssh_agent_and_svn_ssh() {
        let argv =
            argv_of("ssh", None, "alice@h:2222", &env(&[])).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(argv, ["ssh", "-q", "--", "alice@h:2222", "svnserve", "-t"]);
        let argv = argv_of(
            "ssh",
            None,
            "h",
            &env(&[("SVN_SSH", "ssh -p 2222 -i '/a b/key'")]),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            argv,
            ["ssh", "-p", "2222", "-i", "/a b/key", "h", "svnserve", "-t"]
        );
    }

    #[test]
    fn tunnels_from_the_configuration() {
        let config = "# comment\n[auth]\nrsh = no\n[tunnels]\n### ssh = x\n\
                      rsh = $RSH rsh -l\n  me\nplain: /usr/bin/agent \"x y\" z\\ w\n[other]\nrsh=q\n";
        let rsh = config_value(config, "tunnels", "rsh");
        assert_eq!(rsh.as_deref(), Some("$RSH rsh -l me"));
        assert_eq!(config_value(config, "tunnels", "ssh"), None);
        let argv = argv_of("rsh", rsh.as_deref(), "h", &env(&[])).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(argv, ["rsh", "-l", "me", "h", "svnserve", "-t"]);
        let argv = argv_of("rsh", rsh.as_deref(), "h", &env(&[("RSH", "my-rsh")]))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(argv, ["my-rsh", "h", "svnserve", "-t"]);
        let plain = config_value(config, "tunnels", "PLAIN");
        let argv =
            argv_of("plain", plain.as_deref(), "h", &env(&[])).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            argv,
            ["/usr/bin/agent", "x y", "z w", "h", "svnserve", "-t"]
        );
    }

    #[test]
    fn undefined_tunnels_are_clear_errors() {
        let e = argv_of("foo", None, "h", &env(&[])).expect_err("undefined");
        assert!(
            e.to_string().contains("undefined tunnel scheme 'foo'"),
            "{e}"
        );
        let e = argv_of("foo", Some("$FOO"), "h", &env(&[])).expect_err("no FOO");
        assert!(e.to_string().contains("environment variable FOO"), "{e}");
        let e = argv_of("ssh", None, "h", &env(&[("SVN_SSH", " ")])).expect_err("blank");
        assert!(e.to_string().contains("empty"), "{e}");
    }

    #[test]
    fn an_agent_that_cannot_start_or_fails_is_named() {
        let e = Tunnel::spawn(&["/nonexistent/agent".into(), "h".into()])
            .err()
            .expect("no such program");
        assert!(e.to_string().contains("/nonexistent/agent h"), "{e}");
        let mut t = Tunnel::spawn(&[
            "sh".into(),
            "-c".into(),
            "echo 'no route to host' >&2; exit 255".into(),
        ])
        .unwrap_or_else(|e| panic!("{e}"));
        let mut buf = [0u8; 16];
        assert_eq!(t.read(&mut buf).unwrap_or_else(|e| panic!("{e}")), 0);
        let what = t.post_mortem();
        assert!(what.contains("status 255"), "{what}");
        assert!(what.contains("no route to host"), "{what}");
    }

    /// Whether process `pid` is still there (a zombie included).
    fn exists(pid: u32) -> bool {
        Path::new(&format!("/proc/{pid}")).exists()
    }

    #[test]
    fn agents_are_reaped_when_the_session_ends() {
        // One that exits when its input closes (as ssh does when the session ends).
        let mut t = Tunnel::spawn(&["cat".into()]).unwrap_or_else(|e| panic!("{e}"));
        t.write_all(b"( success ) ")
            .unwrap_or_else(|e| panic!("{e}"));
        let mut buf = [0u8; 12];
        t.read_exact(&mut buf).unwrap_or_else(|e| panic!("{e}"));
        let pid = t.child.id();
        let started = Instant::now();
        drop(t);
        assert!(!exists(pid), "cat {pid} left behind");
        assert!(started.elapsed() < EXIT_GRACE, "{:?}", started.elapsed());
        // One that does not: killed after the grace time, and reaped.
        let t = Tunnel::spawn(&["sleep".into(), "30".into()]).unwrap_or_else(|e| panic!("{e}"));
        let pid = t.child.id();
        drop(t);
        assert!(!exists(pid), "sleep {pid} left behind");
    }
}
