//! The server log: one line per event, to stderr or a file, never to stdout (which carries
//! the protocol in tunnel mode).

use std::io::Write;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

pub struct Logger {
    out: Mutex<Option<Box<dyn Write + Send>>>,
}

impl Logger {
    pub fn new(out: Box<dyn Write + Send>) -> Logger {
        Logger {
            out: Mutex::new(Some(out)),
        }
    }

    pub fn disabled() -> Logger {
        Logger {
            out: Mutex::new(None),
        }
    }

    /// Writes one line, prefixed with seconds since the epoch and the process id.
    pub fn line(&self, msg: &str) {
        let mut guard = self.out.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(w) = guard.as_mut() {
            let t = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default();
            let _ = writeln!(
                w,
                "{}.{:03} [{}] {}",
                t.as_secs(),
                t.subsec_millis(),
                std::process::id(),
                msg
            );
            let _ = w.flush();
        }
    }
}
