//! The server log (`docs/formats/server-log.md`): one line per request and per server
//! event, to stderr or a file, never to stdout (which carries the protocol in tunnel mode).
//!
//! Two formats: svnserve's `--log-file` lines (`PID TIME CLIENT USER REPOS ACTION`, the
//! default) and JSON, one object per line. A file log can be reopened (after rotation, on
//! SIGHUP).

use crate::{HttpRequest, Request};
use std::fs::OpenOptions;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use svelto_core::Env;

/// How lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LogFormat {
    /// svnserve's: `PID TIME CLIENT USER REPOS ACTION`; errors as `... ERR - 0 CODE MSG`.
    #[default]
    Svnserve,
    /// One JSON object per line.
    Json,
    /// HTTP requests as Apache's combined access log writes them (`%h %l %u %t "%r" %>s %b
    /// "%{Referer}i" "%{User-agent}i"`), every request; svn:// commands and server events
    /// as in the svnserve format.
    Combined,
}

pub struct Logger {
    out: Mutex<Option<Box<dyn Write + Send>>>,
    format: LogFormat,
    /// The file, for [`reopen`](Logger::reopen).
    path: Option<PathBuf>,
    /// Where the lines' times come from (none for a disabled log, which writes none).
    env: Option<Arc<dyn Env>>,
}

impl Logger {
    /// A log written to `out`, its times read from `env` (the composition root's).
    pub fn new(out: Box<dyn Write + Send>, env: Arc<dyn Env>) -> Logger {
        Logger {
            out: Mutex::new(Some(out)),
            format: LogFormat::default(),
            path: None,
            env: Some(env),
        }
    }

    /// A log appended to `path` (created when missing), its times read from `env`.
    pub fn to_file(path: &Path, env: Arc<dyn Env>) -> io::Result<Logger> {
        let file = open_append(path)?;
        Ok(Logger {
            out: Mutex::new(Some(Box::new(file))),
            format: LogFormat::default(),
            path: Some(path.to_path_buf()),
            env: Some(env),
        })
    }

    pub fn disabled() -> Logger {
        Logger {
            out: Mutex::new(None),
            format: LogFormat::default(),
            path: None,
            env: None,
        }
    }

    /// Now, as the lines write it (an `svn:date`).
    fn now(&self) -> String {
        self.env.as_ref().map(|e| e.svn_date()).unwrap_or_default()
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
        let time = self.now();
        let pid = std::process::id();
        let text = match self.format {
            LogFormat::Svnserve | LogFormat::Combined => {
                format!("{pid} {time} - - - INFO {}\n", one_line(msg))
            }
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
        let time = self.now();
        let pid = std::process::id();
        let user = r.user.unwrap_or("-");
        let mut text = String::new();
        match self.format {
            LogFormat::Svnserve | LogFormat::Combined => {
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

    /// An HTTP request: svnserve's lines for its action and error (as an svn:// command's,
    /// none when it has neither, as mod_dav_svn's `SVN-ACTION`), or a JSON object or a
    /// combined access-log line for every request.
    pub fn http(&self, r: &Request<'_>, h: &HttpRequest<'_>) {
        if !self.enabled() {
            return;
        }
        let text = match self.format {
            LogFormat::Svnserve => return self.request(r),
            LogFormat::Json => {
                let error = match r.error.first() {
                    None => "null".to_string(),
                    Some((code, msg)) => {
                        format!("{{\"code\":{code},\"message\":{}}}", json_string(msg))
                    }
                };
                let action = match r.actions.is_empty() {
                    true => "null".to_string(),
                    false => json_string(&r.actions.join("; ")),
                };
                format!(
                    "{{\"time\":\"{}\",\"pid\":{},\"client\":{},\"user\":{},\
                     \"repos\":{},\"command\":{},\"action\":{action},\"method\":{},\
                     \"target\":{},\"status\":{},\"duration_ms\":{:.3},\"bytes_in\":{},\
                     \"bytes_out\":{},\"error\":{error}}}\n",
                    self.now(),
                    std::process::id(),
                    json_string(r.client),
                    r.user.map_or_else(|| "null".into(), json_string),
                    json_string(r.repos),
                    json_string(r.command),
                    json_string(h.method),
                    json_string(h.target),
                    h.status,
                    r.duration.as_secs_f64() * 1000.0,
                    r.bytes_in,
                    r.bytes_out,
                )
            }
            LogFormat::Combined => {
                let quoted = |s: Option<&str>| s.map_or_else(|| "-".to_string(), apache_escape);
                format!(
                    "{} - {} [{}] \"{} {} {}\" {} {} \"{}\" \"{}\"\n",
                    r.client,
                    r.user.map_or_else(|| "-".to_string(), apache_escape),
                    apache_time(&self.now()),
                    apache_escape(h.method),
                    apache_escape(h.target),
                    h.version,
                    h.status,
                    if r.bytes_out == 0 {
                        "-".to_string()
                    } else {
                        r.bytes_out.to_string()
                    },
                    quoted(h.referer),
                    quoted(h.user_agent),
                )
            }
        };
        self.write(&text);
    }

    /// svnserve's `open` line, when a client has been let in.
    pub fn open(&self, client: &str, user: Option<&str>, repos: &str, action: &str) {
        let actions = [action.to_string()];
        self.request(&Request {
            protocol: crate::Protocol::Svn,
            client,
            user,
            repos,
            command: "open",
            actions: &actions,
            duration: Duration::ZERO,
            bytes_in: 0,
            bytes_out: 0,
            error: &[],
            fatal: false,
            committed: false,
            http: None,
        });
    }
}

/// An `svn:date` (`2026-11-25T16:01:33.123456Z`) as Apache's `%t` writes a time:
/// `25/Nov/2026:16:01:33 +0000`.
fn apache_time(date: &str) -> String {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let field = |a: usize, b: usize| date.get(a..b).unwrap_or("00");
    let month = field(5, 7)
        .parse::<usize>()
        .ok()
        .and_then(|m| MONTHS.get(m.wrapping_sub(1)))
        .unwrap_or(&"Jan");
    format!(
        "{}/{month}/{}:{} +0000",
        field(8, 10),
        field(0, 4),
        field(11, 19)
    )
}

/// A field of a combined log line as Apache escapes it: `"` and `\` with a backslash,
/// control and non-ASCII bytes as `\xhh`.
fn apache_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'"' | b'\\' => {
                out.push('\\');
                out.push(b as char);
            }
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out
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

    const NOW: &str = "2026-11-25T16:01:33.123456Z";

    /// A log into `buf` whose clock says [`NOW`].
    fn fixed(buf: &Shared, format: LogFormat) -> Logger {
        Logger::new(
            Box::new(buf.clone()),
            Arc::new(svelto_core::FixedEnv::new(NOW)),
        )
        .with_format(format)
    }

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
            let log = fixed(&buf, format);
            log.request(&Request {
                protocol: crate::Protocol::Svn,
                client: "127.0.0.1",
                user: Some("harry"),
                repos: "repo",
                command: "get-file",
                actions: &["get-file /a r2 text".into()],
                duration: Duration::from_micros(1500),
                bytes_in: 10,
                bytes_out: 20,
                error,
                fatal: false,
                committed: false,
                http: None,
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
        assert_eq!(f[1], NOW, "the time the log's Env says");
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
            "\"time\":\"2026-11-25T16:01:33.123456Z\"",
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

    #[test]
    fn http_requests_in_each_format() {
        let out = |format| {
            let buf = Shared::default();
            let log = fixed(&buf, format);
            let http = HttpRequest {
                method: "GET",
                target: "/svn/repo/a \"b\"",
                version: "HTTP/1.1",
                status: 200,
                referer: None,
                user_agent: Some("SVN/1.14.2 (x86_64-pc-linux-gnu) serf/1.3.9"),
            };
            log.http(
                &Request {
                    protocol: crate::Protocol::Http,
                    client: "10.0.0.7",
                    user: None,
                    repos: "repo",
                    command: "http-get",
                    actions: &[],
                    duration: Duration::from_millis(2),
                    bytes_in: 0,
                    bytes_out: 1234,
                    error: &[],
                    fatal: false,
                    committed: false,
                    http: None,
                },
                &http,
            );
            let text = buf.0.lock().expect("lock").clone();
            String::from_utf8(text).expect("utf-8")
        };
        // mod_dav_svn notes no action for a file's GET: svnserve's format has no line.
        assert_eq!(out(LogFormat::Svnserve), "");
        let line = out(LogFormat::Combined);
        let (head, rest) = line.split_once(" [").expect("time");
        assert_eq!(head, "10.0.0.7 - -");
        let (time, rest) = rest.split_once("] ").expect("time's end");
        assert_eq!(
            time, "25/Nov/2026:16:01:33 +0000",
            "the time the log's Env says"
        );
        assert_eq!(
            rest,
            "\"GET /svn/repo/a \\\"b\\\" HTTP/1.1\" 200 1234 \"-\" \"SVN/1.14.2 (x86_64-pc-linux-gnu) serf/1.3.9\"\n"
        );
        let json = out(LogFormat::Json);
        for part in [
            "\"time\":\"2026-11-25T16:01:33.123456Z\"",
            "\"command\":\"http-get\"",
            "\"action\":null",
            "\"method\":\"GET\"",
            "\"status\":200",
            "\"bytes_out\":1234",
        ] {
            assert!(json.contains(part), "{part} in {json}");
        }
        assert_eq!(
            apache_time("2026-11-25T16:01:33.123456Z"),
            "25/Nov/2026:16:01:33 +0000"
        );
    }
}
