//! The server log (`docs/formats/server-log.md`): one line per request and per server
//! event, to stderr or a file, never to stdout (which carries the protocol in tunnel mode).
//!
//! Two formats: svnserve's `--log-file` lines (`PID TIME CLIENT USER REPOS ACTION`, the
//! default) and JSON, one object per line. A file log can be reopened (after rotation, on
//! SIGHUP).

use std::fs::OpenOptions;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;
use svelto_core::svn_date_now;

/// How lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LogFormat {
    /// svnserve's: `PID TIME CLIENT USER REPOS ACTION`; errors as `... ERR - 0 CODE MSG`.
    #[default]
    Svnserve,
    /// One JSON object per line.
    Json,
}

/// One finished command, as the log and the metrics see it.
pub struct Request<'a> {
    /// The client's address (without the port), or `-`.
    pub client: &'a str,
    pub user: Option<&'a str>,
    /// The repository's name under the root (URI-encoded, as svnserve logs it).
    pub repos: &'a str,
    /// The protocol command (`get-file`, `update` ...).
    pub command: &'a str,
    /// svnserve's action lines (usually one; none for a command it does not log).
    pub actions: &'a [String],
    pub duration: Duration,
    pub bytes_in: u64,
    pub bytes_out: u64,
    /// The error chain sent to the client: (code, message) per link.
    pub error: &'a [(u64, String)],
}

pub struct Logger {
    out: Mutex<Option<Box<dyn Write + Send>>>,
    format: LogFormat,
    /// The file, for [`reopen`](Logger::reopen).
    path: Option<PathBuf>,
}

impl Logger {
    pub fn new(out: Box<dyn Write + Send>) -> Logger {
        Logger {
            out: Mutex::new(Some(out)),
            format: LogFormat::default(),
            path: None,
        }
    }

    /// A log appended to `path` (created when missing).
    pub fn to_file(path: &Path) -> io::Result<Logger> {
        let file = open_append(path)?;
        Ok(Logger {
            out: Mutex::new(Some(Box::new(file))),
            format: LogFormat::default(),
            path: Some(path.to_path_buf()),
        })
    }

    pub fn disabled() -> Logger {
        Logger {
            out: Mutex::new(None),
            format: LogFormat::default(),
            path: None,
        }
    }

    pub fn with_format(mut self, format: LogFormat) -> Logger {
        self.format = format;
        self
    }

    pub fn format(&self) -> LogFormat {
        self.format
    }

    /// Opens the log file again by its name (after `logrotate` moved it away); a log that
    /// is not a file is left as it is. On failure the old file stays in use.
    pub fn reopen(&self) -> io::Result<bool> {
        let Some(path) = &self.path else {
            return Ok(false);
        };
        let file = open_append(path)?;
        let mut guard = self.out.lock().unwrap_or_else(|e| e.into_inner());
        *guard = Some(Box::new(file));
        Ok(true)
    }

    fn write(&self, text: &str) {
        let mut guard = self.out.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(w) = guard.as_mut() {
            let _ = w.write_all(text.as_bytes());
            let _ = w.flush();
        }
    }

    /// Whether lines go anywhere (callers skip preparing them otherwise).
    pub fn is_enabled(&self) -> bool {
        self.enabled()
    }

    fn enabled(&self) -> bool {
        self.out.lock().unwrap_or_else(|e| e.into_inner()).is_some()
    }

    /// A server event (start, connection closed, configuration trouble).
    pub fn line(&self, msg: &str) {
        if !self.enabled() {
            return;
        }
        let time = svn_date_now();
        let pid = std::process::id();
        let text = match self.format {
            LogFormat::Svnserve => format!("{pid} {time} - - - INFO {}\n", one_line(msg)),
            LogFormat::Json => format!(
                "{{\"time\":\"{time}\",\"pid\":{pid},\"level\":\"info\",\"message\":{}}}\n",
                json_string(msg)
            ),
        };
        self.write(&text);
    }

    /// A command: its action lines (svnserve's format) or one JSON object.
    pub fn request(&self, r: &Request<'_>) {
        if !self.enabled() || (r.actions.is_empty() && r.error.is_empty()) {
            return;
        }
        let time = svn_date_now();
        let pid = std::process::id();
        let user = r.user.unwrap_or("-");
        let mut text = String::new();
        match self.format {
            LogFormat::Svnserve => {
                let head = format!("{pid} {time} {} {user} {}", r.client, r.repos);
                for a in r.actions {
                    text.push_str(&format!("{head} {a}\n"));
                }
                // svnserve's error lines: "ERR", then "ERR-" for each link of the chain.
                for (i, (code, msg)) in r.error.iter().enumerate() {
                    let cont = if i == 0 { "" } else { "-" };
                    text.push_str(&format!("{head} ERR{cont} - 0 {code} {}\n", one_line(msg)));
                }
            }
            LogFormat::Json => {
                let user = r.user.map_or_else(|| "null".into(), json_string);
                let error = match r.error.first() {
                    None => "null".to_string(),
                    Some((code, msg)) => {
                        format!("{{\"code\":{code},\"message\":{}}}", json_string(msg))
                    }
                };
                text = format!(
                    "{{\"time\":\"{time}\",\"pid\":{pid},\"client\":{},\"user\":{user},\
                     \"repos\":{},\"command\":{},\"action\":{},\"duration_ms\":{:.3},\
                     \"bytes_in\":{},\"bytes_out\":{},\"error\":{error}}}\n",
                    json_string(r.client),
                    json_string(r.repos),
                    json_string(r.command),
                    json_string(&r.actions.join("; ")),
                    r.duration.as_secs_f64() * 1000.0,
                    r.bytes_in,
                    r.bytes_out,
                );
            }
        }
        self.write(&text);
    }

    /// svnserve's `open` line, when a client has been let in.
    pub fn open(&self, client: &str, user: Option<&str>, repos: &str, action: &str) {
        let actions = [action.to_string()];
        self.request(&Request {
            client,
            user,
            repos,
            command: "open",
            actions: &actions,
            duration: Duration::ZERO,
            bytes_in: 0,
            bytes_out: 0,
            error: &[],
        });
    }
}

fn open_append(path: &Path) -> io::Result<std::fs::File> {
    OpenOptions::new().create(true).append(true).open(path)
}

/// Line breaks would split a record: escaped as svnserve escapes its error log.
fn one_line(msg: &str) -> String {
    msg.replace('\n', "\\n").replace('\r', "\\r")
}

/// `s` as a JSON string literal.
pub fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);
    impl Write for Shared {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.0.lock().expect("lock").extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn request(error: &[(u64, String)]) -> (String, String) {
        let mut out = Vec::new();
        for format in [LogFormat::Svnserve, LogFormat::Json] {
            let buf = Shared::default();
            let log = Logger::new(Box::new(buf.clone())).with_format(format);
            log.request(&Request {
                client: "127.0.0.1",
                user: Some("harry"),
                repos: "repo",
                command: "get-file",
                actions: &["get-file /a r2 text".into()],
                duration: Duration::from_micros(1500),
                bytes_in: 10,
                bytes_out: 20,
                error,
            });
            out.push(String::from_utf8(buf.0.lock().expect("lock").clone()).expect("utf-8"));
        }
        (out[0].clone(), out[1].clone())
    }

    #[test]
    fn svnserve_lines_and_json_objects() {
        let (text, json) = request(&[(160013, "Path \"x\" not found".into())]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        let f: Vec<&str> = lines[0].splitn(6, ' ').collect();
        assert_eq!(f[0], std::process::id().to_string());
        assert!(f[1].ends_with('Z') && f[1].contains('T'), "{}", f[1]);
        assert_eq!(
            &f[2..],
            ["127.0.0.1", "harry", "repo", "get-file /a r2 text"]
        );
        assert!(
            lines[1].ends_with(" repo ERR - 0 160013 Path \"x\" not found"),
            "{}",
            lines[1]
        );
        assert!(json.ends_with("}\n") && json.lines().count() == 1, "{json}");
        for part in [
            "\"client\":\"127.0.0.1\"",
            "\"user\":\"harry\"",
            "\"command\":\"get-file\"",
            "\"action\":\"get-file /a r2 text\"",
            "\"duration_ms\":1.500",
            "\"bytes_in\":10",
            "\"bytes_out\":20",
            "\"error\":{\"code\":160013,\"message\":\"Path \\\"x\\\" not found\"}",
        ] {
            assert!(json.contains(part), "{part} in {json}");
        }
    }
}
