//! nginx (Debian's `nginx` package) as a reverse proxy in front of a server under test,
//! started on 127.0.0.1 on a free port with a generated configuration, in the foreground
//! under the same watchdog as the other servers, so it never outlives the test process.

use std::ffi::OsString;
use std::path::Path;

use crate::serve::{free_port, spawn_watched, Server, ServerKind};

/// Debian's nginx binary.
pub const NGINX_BINARY: &str = "/usr/sbin/nginx";

/// A running nginx, as a [`Server`] (its base URL is whatever the test makes of its port).
pub struct Nginx(Server);

impl Nginx {
    /// Runs nginx with `server` (the directives of one `server { }` block, `{PORT}` standing
    /// for the port it listens on) and its pid file, logs and temporary files in `dir`.
    /// Panics, saying what to install, when nginx is missing.
    pub fn start(dir: &Path, server: &str) -> Nginx {
        Nginx::start_with_http(dir, "", server)
    }

    /// [`Nginx::start`] with `http` (directives of the `http { }` block, e.g. an
    /// `upstream { }` of several servers) besides the `server { }` block.
    pub fn start_with_http(dir: &Path, http: &str, server: &str) -> Nginx {
        if !Path::new(NGINX_BINARY).is_file() {
            panic!(
                "\n\n*** nginx ({NGINX_BINARY}) is required: apt-get install nginx (or run scripts/setup) ***\n"
            );
        }
        let port = free_port();
        let tmp = dir.join("nginx-tmp");
        std::fs::create_dir_all(&tmp).unwrap_or_else(|e| panic!("cannot create {tmp:?}: {e}"));
        let d = dir.display();
        let t = tmp.display();
        let user = if std::fs::metadata("/proc/self")
            .is_ok_and(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0)
        {
            "user root;\n"
        } else {
            ""
        };
        let text = format!(
            "{user}daemon off;\npid {d}/nginx.pid;\nerror_log {d}/nginx-error.log warn;\n\
             worker_processes 1;\nevents {{ worker_connections 256; }}\n\
             http {{\n  access_log {d}/nginx-access.log;\n  client_body_temp_path {t}/body;\n  \
             proxy_temp_path {t}/proxy;\n  fastcgi_temp_path {t}/fastcgi;\n  \
             uwsgi_temp_path {t}/uwsgi;\n  scgi_temp_path {t}/scgi;\n{http}\n  \
             server {{\n{}\n  }}\n}}\n",
            server.replace("{PORT}", &port.to_string())
        );
        let conf = dir.join("nginx.conf");
        std::fs::write(&conf, text).unwrap_or_else(|e| panic!("cannot write {conf:?}: {e}"));
        let args: Vec<OsString> = vec![
            "-c".into(),
            conf.into(),
            "-p".into(),
            dir.as_os_str().to_owned(),
        ];
        let watched = spawn_watched(Path::new(NGINX_BINARY), &args);
        let mut server = Server {
            kind: ServerKind::Nginx,
            child: Some(watched.child),
            in_process: None,
            stdin: Some(watched.stdin),
            pid: watched.pid,
            port,
            base_url: format!("http://127.0.0.1:{port}"),
            root: dir.to_owned(),
            log: watched.log,
            log_file: Some(dir.join("nginx-error.log")),
        };
        server.wait_listening("nginx");
        Nginx(server)
    }

    pub fn port(&self) -> u16 {
        self.0.port()
    }

    pub fn server(&self) -> &Server {
        &self.0
    }
}
