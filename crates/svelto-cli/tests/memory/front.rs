//! Svelto's front ends in the test process over the in-memory backend: what `svelto serve`
//! wires (a `Host` over a backend, the svn:// listener, the HTTP server) with
//! `svelto_testkit::memfs::MemBackend` as the backend, for the pairs of
//! `svelto_testkit::Subject::Memory`. Settings are `svelto serve`'s defaults.

use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use svelto_core::{Env, SystemEnv};
use svelto_host::{Host, HostConfig, Logger};
use svelto_testkit::{InProcessServer, InProcessSpec, ServeInProcess, Subject};

/// The front ends' starter, one per process.
pub fn start() -> &'static Arc<dyn ServeInProcess> {
    static START: OnceLock<Arc<dyn ServeInProcess>> = OnceLock::new();
    START.get_or_init(|| Arc::new(Front))
}

/// A fresh pair's subject: the front ends over memory.
pub fn subject() -> Subject {
    Subject::Memory(start().clone())
}

struct Front;

/// Stops an in-process svn:// server when the pair goes (the HTTP server has no stop of
/// its own, as `svelto serve` exits instead: it idles until the process ends).
struct Running {
    host: Arc<Host>,
    svn_port: Option<u16>,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.host.begin_shutdown();
        if let Some(port) = self.svn_port {
            // Wakes the accept loop, which then sees the shutdown.
            let _ = std::net::TcpStream::connect(("127.0.0.1", port));
        }
    }
}

impl ServeInProcess for Front {
    fn start(&self, spec: InProcessSpec<'_>) -> InProcessServer {
        let env: Arc<dyn Env> = Arc::new(SystemEnv);
        let log = Logger::new(spec.log, env.clone());
        let mut auth_file = None;
        let mut flags = spec.flags.iter();
        while let Some(flag) = flags.next() {
            match flag.as_str() {
                "--http-auth-file" => {
                    auth_file = Some(PathBuf::from(flags.next().expect("a file after the flag")))
                }
                other => panic!("`svelto serve {other}` is not wired for the in-memory pairs"),
            }
        }
        let host = Host::new(
            HostConfig::new(spec.root.to_path_buf()),
            log,
            spec.backend,
            env,
        );
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let port = listener.local_addr().expect("the bound address").port();
        let svn_port = match spec.http_prefix {
            None => {
                let config = svelto_server::Config {
                    hostname: hostname(),
                    ..Default::default()
                };
                let host = host.clone();
                std::thread::Builder::new()
                    .name("memory-svn-listener".into())
                    .spawn(move || svelto_server::run(host, listener, config))
                    .expect("start the svn:// listener");
                Some(port)
            }
            Some(prefix) => {
                let mut config = svelto_http::HttpConfig::new();
                config.prefix = prefix.to_string();
                config.auth_file = auth_file;
                config.zone = local_zone();
                let server = svelto_http::spawn(host.clone(), listener, config)
                    .expect("start the HTTP server");
                // Its threads serve until the process ends.
                std::mem::forget(server);
                None
            }
        };
        InProcessServer {
            port,
            handle: Box::new(Running { host, svn_port }),
        }
    }
}

/// The machine's name, as `svelto serve` gives it to the svn:// front end.
fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into())
}

/// The local time zone as `svelto serve` reads it for the HTTP server (`$TZ`, else
/// /etc/localtime; UTC when unreadable).
fn local_zone() -> svelto_core::localtime::Zone {
    use svelto_core::localtime::Zone;
    let file = match std::env::var("TZ") {
        Ok(tz) if tz.is_empty() => return Zone::utc(),
        Ok(tz) => {
            let name = tz.strip_prefix(':').unwrap_or(&tz).to_string();
            if name.starts_with('/') {
                PathBuf::from(name)
            } else {
                std::path::Path::new("/usr/share/zoneinfo").join(name)
            }
        }
        Err(_) => PathBuf::from("/etc/localtime"),
    };
    std::fs::read(file).map_or_else(|_| Zone::utc(), Zone::from_tzif)
}
