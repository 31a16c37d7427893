//! `svelto serve`: svnserve's command line over Svelto's server.

use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;
use svelto_host::{Host, HostConfig, LogFormat, Logger};

/// `--log-format`.
#[derive(Clone, Copy, Debug, ValueEnum)]
enum LogFormatArg {
    /// svnserve's --log-file lines: PID TIME CLIENT USER REPOS ACTION.
    Svnserve,
    /// One JSON object per line.
    Json,
    /// HTTP requests as Apache's combined access log (svn:// commands as svnserve's).
    Combined,
}

#[derive(Args)]
pub struct ServeArgs {
    /// Daemon mode: listen for connections (in the background unless --foreground).
    #[arg(short = 'd', long = "daemon")]
    daemon: bool,
    /// inetd mode: one connection on standard input and output.
    #[arg(short = 'i', long = "inetd")]
    inetd: bool,
    /// Tunnel mode: speak the protocol on standard input and output (svn+ssh://).
    #[arg(short = 't', long = "tunnel")]
    tunnel: bool,
    /// Serve one connection and exit.
    #[arg(short = 'X', long = "listen-once")]
    listen_once: bool,
    /// With -d: stay in the foreground.
    #[arg(long)]
    foreground: bool,
    /// Repositories are found under this directory: svn://HOST/NAME and
    /// http(s)://HOST[PREFIX]/NAME are ROOT/NAME.
    #[arg(short = 'r', long = "root", value_name = "ROOT")]
    root: Option<PathBuf>,
    /// Serve the repositories of a cluster (etcd and S3-compatible object storage; the
    /// file's format is in docs/cluster.md): ROOT/NAME is the cluster repository NAME,
    /// and ROOT/NAME holds only this front end's conf/ and hooks/ for it.
    #[arg(long, value_name = "FILE")]
    cluster: Option<PathBuf>,
    /// Refuse every write, over svn:// and http(s)://.
    #[arg(short = 'R', long = "read-only")]
    read_only: bool,
    /// svn:// port to listen on (3690; 0 picks a free port and prints it).
    #[arg(long, value_name = "PORT", default_value_t = 3690)]
    listen_port: u16,
    /// svn:// host or address to listen on (default: every address).
    #[arg(long, value_name = "HOST")]
    listen_host: Option<String>,
    /// Prefer IPv6 when resolving the listen host.
    #[arg(short = '6', long = "prefer-ipv6")]
    prefer_ipv6: bool,
    /// Write the log here instead of standard error.
    #[arg(long, value_name = "FILE")]
    log_file: Option<PathBuf>,
    /// How log lines look: svnserve's format, one JSON object per line, or Apache's
    /// combined access log for HTTP requests.
    #[arg(long, value_enum, value_name = "FORMAT", default_value = "svnserve")]
    log_format: LogFormatArg,
    /// Serve Prometheus metrics (GET /metrics over HTTP) on this address, e.g.
    /// 127.0.0.1:9190. Off unless given.
    #[arg(long, value_name = "ADDR:PORT")]
    metrics_listen: Option<String>,
    /// Also serve Subversion's HTTP protocol (what `http://` URLs and Apache's mod_dav_svn
    /// serve: reads, commits and locks) on this address, e.g. 127.0.0.1:8080 (port 0 picks one).
    /// URLs map as Apache's `SVNParentPath ROOT`: http://HOST:PORT[PREFIX]/REPO/path.
    #[arg(long, value_name = "ADDR:PORT")]
    http_listen: Option<String>,
    /// The URL path the repositories are under over HTTP, as Apache's `<Location /svn>`.
    #[arg(long, value_name = "PATH", default_value = "")]
    http_prefix: String,
    /// With --cluster: the address the other front ends reach this one's HTTP listener at,
    /// when it is not the listen address (0.0.0.0, NAT, a container): http://HOST:PORT,
    /// https://HOST:PORT, or HOST:PORT (in the scheme the listener serves). A request of an
    /// HTTP transaction another front end opened is forwarded there (docs/cluster.md,
    /// "HTTP transactions").
    #[arg(long, value_name = "HOST:PORT", requires = "cluster")]
    http_advertise: Option<String>,
    /// The password file for HTTP Basic logins to every repository (Apache's
    /// `AuthUserFile`: what `htpasswd` writes, bcrypt, `$apr1$` MD5, `{SHA}`, SHA-256/512
    /// crypt). Without it each repository's svnserve.conf `[http] password-db` is used;
    /// without either, nobody logs in over HTTP.
    #[arg(long, value_name = "FILE")]
    http_auth_file: Option<PathBuf>,
    /// Serve https:// instead of http:// on --http-listen with this certificate chain (PEM,
    /// the server's certificate first); needs --http-tls-key. Both are read again on SIGHUP.
    #[arg(long, value_name = "FILE", requires = "http_tls_key")]
    http_tls_cert: Option<PathBuf>,
    /// The private key of --http-tls-cert (PEM: PKCS#8, RSA or EC).
    #[arg(long, value_name = "FILE", requires = "http_tls_cert")]
    http_tls_key: Option<PathBuf>,
    /// A request header naming the user a reverse proxy in front of --http-listen
    /// authenticated (e.g. X-Remote-User); believed only from --http-trusted-proxy
    /// addresses, ignored from any other.
    #[arg(long, value_name = "NAME", requires = "http_trusted_proxy")]
    http_user_header: Option<String>,
    /// An address (e.g. 127.0.0.1) whose --http-user-header is believed; repeat or separate
    /// with commas for several.
    #[arg(
        long,
        value_name = "ADDR",
        value_delimiter = ',',
        requires = "http_user_header"
    )]
    http_trusted_proxy: Vec<std::net::IpAddr>,
    /// Connections served at once; the next client is told the server is busy.
    #[arg(long, value_name = "N", default_value_t = 1000)]
    max_connections: usize,
    /// Largest response to one command, in MiB; a larger one closes the connection
    /// (svnserve's flag; 0, the default, disables the check).
    #[arg(long, value_name = "MiB", default_value_t = 0)]
    max_response_size: u64,
    /// Look for repositories under ROOT/HOST, HOST being the host (and :port, when the URL
    /// has one) of the URL the client used.
    #[arg(long)]
    virtual_host: bool,
    /// On SIGTERM, how long running commits may take to finish before the server exits.
    #[arg(long, value_name = "SECONDS", default_value_t = 30)]
    shutdown_grace: u64,
    /// Write the server's process id here.
    #[arg(long, value_name = "FILE")]
    pid_file: Option<PathBuf>,
    /// Largest client request, in MiB (svnserve's default 16).
    #[arg(long, value_name = "MiB", default_value_t = 16)]
    max_request_size: u64,
    /// Memory all connections together may buffer for their clients (requests being read
    /// and decoded, update reports), in MiB, beyond 256 KiB free per connection; a request
    /// that would go over it is refused with an error.
    #[arg(long, value_name = "MiB", default_value_t = 1024)]
    memory_budget: u64,
    /// Close connections idle for this many seconds (svn:// and HTTP).
    #[arg(long, value_name = "SECONDS", default_value_t = 900)]
    idle_timeout: u64,
    /// svnserve's threads flag: Svelto always serves each connection in its own thread.
    #[arg(short = 'T', long = "threads")]
    threads: bool,
    /// svnserve's cache size; accepted and ignored (noted in the log): Svelto sizes its
    /// caches itself.
    #[arg(short = 'M', long = "memory-cache-size", value_name = "MB")]
    memory_cache_size: Option<String>,
    /// svnserve's compression level; accepted and ignored (noted in the log): Svelto sends
    /// what it stores.
    #[arg(short = 'c', long = "compression", value_name = "LEVEL")]
    compression: Option<String>,
    /// svnserve's cache switch; accepted and ignored (noted in the log).
    #[arg(long, value_name = "yes|no")]
    cache_txdeltas: Option<String>,
    /// svnserve's cache switch; accepted and ignored (noted in the log).
    #[arg(long, value_name = "yes|no")]
    cache_fulltexts: Option<String>,
    /// svnserve's cache switch; accepted and ignored (noted in the log).
    #[arg(long, value_name = "yes|no")]
    cache_revprops: Option<String>,
    /// svnserve's cache switch; accepted and ignored (noted in the log).
    #[arg(long, value_name = "yes|no")]
    cache_nodeprops: Option<String>,
    /// svnserve's FSFS read mode; accepted and ignored (noted in the log).
    #[arg(long, value_name = "yes|no")]
    block_read: Option<String>,
    /// svnserve's hint of the clients' bandwidth; accepted and ignored (noted in the log).
    #[arg(long, value_name = "MBPS")]
    client_speed: Option<String>,
    /// svnserve's thread pool size; accepted and ignored (noted in the log): one thread
    /// per connection.
    #[arg(long, value_name = "N")]
    min_threads: Option<String>,
    /// svnserve's thread pool size; accepted and ignored (noted in the log): one thread
    /// per connection, bounded by --max-connections.
    #[arg(long, value_name = "N")]
    max_threads: Option<String>,
    /// Use this svnserve.conf for every repository instead of each one's conf/svnserve.conf.
    #[arg(long, value_name = "FILE")]
    config_file: Option<PathBuf>,
    /// Tunnel mode: the user EXTERNAL authenticates as (default: this account's name).
    #[arg(long, value_name = "USER")]
    tunnel_user: Option<String>,
    /// svnserve's debugging mode (one connection at a time, in the main thread); accepted and
    /// ignored (noted in the log): each connection keeps its own thread.
    #[arg(long)]
    single_thread: bool,
    /// Print the version, the commit, the storage format and the protocols served, and
    /// exit (with -q: the version alone, as `svnserve --version --quiet`).
    #[arg(long)]
    version: bool,
    /// Quiet: svnserve prints nothing on startup either.
    #[arg(short = 'q', long = "quiet")]
    quiet: bool,
    /// Internal: the background child of `-d` reports readiness on standard error.
    #[arg(long, hide = true)]
    daemon_child: bool,
}

impl ServeArgs {
    fn ignored_flags(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut note = |flag: &str, v: &Option<String>| {
            if let Some(v) = v {
                out.push(format!("{flag} {v}"));
            }
        };
        note("--memory-cache-size", &self.memory_cache_size);
        note("--compression", &self.compression);
        note("--cache-txdeltas", &self.cache_txdeltas);
        note("--cache-fulltexts", &self.cache_fulltexts);
        note("--cache-revprops", &self.cache_revprops);
        note("--cache-nodeprops", &self.cache_nodeprops);
        note("--block-read", &self.block_read);
        note("--client-speed", &self.client_speed);
        note("--min-threads", &self.min_threads);
        note("--max-threads", &self.max_threads);
        if self.single_thread {
            out.push("--single-thread".into());
        }
        if self.threads {
            out.push("--threads".into());
        }
        out
    }
}

/// Raises the soft limit on open files to the hard limit, as a server that keeps files
/// open should: each repository the server has opened keeps its handle's files open (five
/// descriptors) for the next request, beside one per connection, so under the usual soft
/// limit of 1,024 a root of 150-odd repositories ran out ("Too many open files" in every
/// answer from then on) where Apache, which opens a repository per request, did not.
/// Returns the line to log, or None when the soft limit already is the hard one.
fn raise_open_files_limit() -> Option<String> {
    use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
    let now = getrlimit(Resource::Nofile);
    if now.current == now.maximum {
        return None;
    }
    let shown = |v: Option<u64>| v.map_or("unlimited".to_string(), |v| v.to_string());
    let raised = Rlimit {
        current: now.maximum,
        maximum: now.maximum,
    };
    Some(match setrlimit(Resource::Nofile, raised) {
        Ok(()) => format!(
            "open files limit raised from {} to {}",
            shown(now.current),
            shown(now.maximum)
        ),
        Err(e) => format!(
            "open files limit {} (could not raise it to {}: {e})",
            shown(now.current),
            shown(now.maximum)
        ),
    })
}

/// How many idle repositories the server keeps open: a thirty-second of the open files
/// limit (an open repository holds 5 descriptors, 16 once its writer has committed: the
/// store's five files read, the same five appended to, and the write lock's), at least 2
/// and at most 1,024. Past it the least recently used idle repository is closed, and
/// reopened on its next request (a few small reads).
fn open_repos_bound() -> usize {
    let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile).current;
    limit.map_or(1024, |n| {
        usize::try_from(n / 32).unwrap_or(usize::MAX).clamp(2, 1024)
    })
}

pub fn run(args: ServeArgs) -> Result<()> {
    if args.version {
        let mut out = std::io::stdout();
        if args.quiet {
            writeln!(out, "{}", env!("CARGO_PKG_VERSION"))?;
        } else {
            writeln!(out, "svelto serve, version {}", crate::version_text())?;
        }
        return Ok(());
    }
    let modes = [args.daemon, args.inetd, args.tunnel, args.listen_once]
        .iter()
        .filter(|m| **m)
        .count();
    if modes != 1 {
        bail!("You must specify exactly one of -d, -i, -t or -X.");
    }
    let root = match &args.root {
        Some(r) => crate::checks::root_dir(r)?,
        None => PathBuf::from("/"),
    };
    if args.tunnel_user.is_some() && !args.tunnel {
        bail!("Option --tunnel-user is only valid in tunnel mode");
    }
    if args.http_listen.is_some() && (args.inetd || args.tunnel) {
        bail!(
            "Option --http-listen is only valid with -d or -X: in -i and -t modes the server \
             serves the one connection on its standard input and output"
        );
    }
    let config_file = match &args.config_file {
        Some(f) => {
            let f =
                std::path::absolute(f).with_context(|| format!("config file '{}'", f.display()))?;
            // svnserve reads it at startup and refuses to start when it is missing or bad.
            let conf =
                svelto_repos::conf::SvnserveConf::load(&f, true, Path::new("/"), Path::new("/"))
                    .with_context(|| format!("reading config file '{}'", f.display()))?;
            // A configuration known at startup that asks for SASL is refused now, not at
            // every connection (a repository's own svnserve.conf is refused per connection).
            if let Some(refusal) = conf.sasl_refusal() {
                bail!(refusal);
            }
            Some(f)
        }
        None => None,
    };
    // Configuration that does not say what it seems to, said before the server detaches.
    let warnings = crate::checks::startup_warnings(
        &root,
        config_file.as_deref(),
        args.http_auth_file.as_deref(),
        args.http_listen.is_some(),
    );
    if !(args.daemon_child || args.inetd || args.tunnel) {
        crate::checks::print(&warnings);
    }
    if args.daemon && !args.foreground && !args.daemon_child {
        return background();
    }
    let stdio_mode = args.inetd || args.tunnel;
    let env = crate::system_env();
    let log = match &args.log_file {
        Some(f) => Logger::to_file(f, env.clone())
            .with_context(|| format!("opening log file '{}'", f.display()))?,
        // stdout carries the protocol in -i/-t; stderr reaches the ssh user there.
        None if stdio_mode || args.daemon_child => Logger::disabled(),
        None => Logger::new(Box::new(std::io::stderr()), env.clone()),
    };
    let log = log.with_format(match args.log_format {
        LogFormatArg::Svnserve => LogFormat::Svnserve,
        LogFormatArg::Json => LogFormat::Json,
        LogFormatArg::Combined => LogFormat::Combined,
    });
    if args.log_file.is_some() {
        warnings.iter().for_each(|w| log.line(w));
    }
    let ignored = args.ignored_flags();
    if !ignored.is_empty() {
        log.line(&format!(
            "ignoring svnserve tuning flags (Svelto has no such knobs): {}",
            ignored.join(", ")
        ));
    }
    // Raised before the repository table is sized from it.
    let limit_line = if stdio_mode {
        None
    } else {
        raise_open_files_limit()
    };
    let mut config = HostConfig::new(root.clone());
    config.max_open_repos = open_repos_bound();
    config.read_only = args.read_only;
    config.max_request =
        usize::try_from(args.max_request_size.saturating_mul(1 << 20)).unwrap_or(usize::MAX);
    if args.max_request_size == 0 {
        config.max_request = usize::MAX;
    }
    config.idle_timeout = std::time::Duration::from_secs(args.idle_timeout.max(1));
    config.config_file = config_file;
    config.max_connections = args.max_connections.max(1);
    config.memory_budget =
        usize::try_from(args.memory_budget.saturating_mul(1 << 20)).unwrap_or(usize::MAX);
    config.shutdown_grace = Duration::from_secs(args.shutdown_grace);
    config.release_thread_memory = Some(crate::release_thread_memory);
    let cluster = match &args.cluster {
        None => None,
        Some(file) => Some(Arc::new(crate::cluster::backend(file, &root)?)),
    };
    let backend: Arc<dyn svelto_fs::Backend> = match &cluster {
        None => Arc::new(svelto_store::LocalBackend),
        Some(c) => c.clone(),
    };
    let host = Host::new(config, log, backend, env);
    if let Some(cluster) = &cluster {
        // The backend's lines (etcd unreachable, reads unfenced) go to the server's log.
        let host = Arc::downgrade(&host);
        cluster.set_log(Arc::new(move |line: &str| {
            if let Some(host) = host.upgrade() {
                host.log.line(line);
            }
        }));
    }
    let mut svn = svelto_server::Config {
        max_response: args.max_response_size.saturating_mul(1 << 20),
        virtual_host: args.virtual_host,
        hostname: hostname(),
        listen_once: args.listen_once,
        ..Default::default()
    };
    if args.tunnel {
        svn.tunnel_user = Some(match &args.tunnel_user {
            Some(u) => u.clone(),
            None => login_name().context("finding this account's user name for EXTERNAL")?,
        });
    }
    if stdio_mode {
        let shared = svelto_server::Shared::new(host, svn);
        let stdin = std::io::stdin().lock();
        let stdout = std::io::stdout().lock();
        svelto_server::serve_streams(&shared, stdin, stdout, "stdio", false);
        if let Some(cluster) = &cluster {
            // The connection ended: the next front end need not wait out the lease's TTL.
            cluster.resign_writers();
        }
        return Ok(());
    }
    let listen_host = args.listen_host.clone().unwrap_or_else(|| {
        if args.prefer_ipv6 {
            "::".into()
        } else {
            "0.0.0.0".into()
        }
    });
    let mut addrs: Vec<_> = (listen_host.as_str(), args.listen_port)
        .to_socket_addrs()
        .with_context(|| format!("resolving listen host '{listen_host}'"))?
        .collect();
    addrs.sort_by_key(|a| a.is_ipv6() != args.prefer_ipv6);
    let listener = TcpListener::bind(&addrs[..]).with_context(|| {
        format!(
            "can't bind server socket on {listen_host}:{}",
            args.listen_port
        )
    })?;
    let local = listener.local_addr()?;
    let metrics_addr = match &args.metrics_listen {
        Some(addr) => {
            let l = TcpListener::bind(addr.as_str())
                .with_context(|| format!("can't bind the metrics socket on {addr}"))?;
            let a = l.local_addr()?;
            let metrics = host.clone();
            // A cluster front end's page adds its orphan collector's and post-commit
            // counters.
            let gc = cluster.as_ref().map(Arc::downgrade);
            let render = Arc::new(move || {
                let mut text = metrics.render_metrics();
                if let Some(cluster) = gc.as_ref().and_then(std::sync::Weak::upgrade) {
                    text.push_str(&cluster.gc_stats().render());
                    text.push_str(&cluster.post_commit_stats().render());
                }
                text
            });
            svelto_http::metrics::serve_metrics(l, render)
                .context("starting the metrics thread")?;
            Some(a)
        }
        None => None,
    };
    let mut http_server = None;
    // What the member registry entry says peers reach the HTTP listener at.
    let mut http_advertised = None;
    let http_addr = match &args.http_listen {
        Some(addr) => {
            let l = TcpListener::bind(addr.as_str())
                .with_context(|| format!("can't bind the HTTP socket on {addr}"))?;
            let a = l.local_addr()?;
            let mut config = svelto_http::HttpConfig::new();
            config.prefix = args.http_prefix.clone();
            config.auth_file = args
                .http_auth_file
                .as_ref()
                .map(|f| std::path::absolute(f).unwrap_or_else(|_| f.clone()));
            if let Some(f) = config.auth_file.as_ref().filter(|f| !f.is_file()) {
                // Read for each login (as Apache reads AuthUserFile), so it may come later.
                host.log.line(&format!(
                    "warning: the HTTP password file '{}' does not exist (yet): logins fail until it does",
                    f.display()
                ));
            }
            if let (Some(cert), Some(key)) = (&args.http_tls_cert, &args.http_tls_key) {
                let abs = |f: &PathBuf| std::path::absolute(f).unwrap_or_else(|_| f.clone());
                config.tls = Some(svelto_http::TlsFiles {
                    cert: abs(cert),
                    key: abs(key),
                });
            }
            config.user_header = args.http_user_header.clone();
            config.trusted_proxies = args.http_trusted_proxy.clone();
            config.zone = crate::localtime::zone();
            let tls = config.tls.is_some();
            if let Some(cluster) = &cluster {
                let scheme = if tls { "https" } else { "http" };
                let advertise = match &args.http_advertise {
                    Some(adv) => svelto_http::advertised(adv, tls).map_err(anyhow::Error::msg)?,
                    None => format!("{scheme}://{a}"),
                };
                config.peers = Some(peers(cluster, &host, a, args.http_advertise.is_some())?);
                http_advertised = Some(advertise);
            }
            // The same host as svn://: one shutdown, one memory budget, the same
            // repository handles and caches, one request log and metrics.
            let server =
                svelto_http::spawn(host.clone(), l, config).context("starting the HTTP server")?;
            if tls {
                host.log.line("http: serving https:// (TLS)");
            }
            http_server = Some(server);
            Some(a)
        }
        None => None,
    };
    if let Some(p) = &args.pid_file {
        std::fs::write(p, format!("{}\n", std::process::id()))
            .with_context(|| format!("writing pid file '{}'", p.display()))?;
    }
    if let Some(line) = limit_line {
        host.log.line(&line);
    }
    host.log.line(&format!("listening on {local}"));
    if let Some(a) = metrics_addr {
        host.log.line(&format!("metrics on http://{a}/metrics"));
    }
    if let Some(a) = http_addr {
        host.log.line(&format!("http listening on {a}"));
    }
    if let Some(cluster) = &cluster {
        // Listed by `svelto admin members --cluster FILE` while it runs.
        let mut value = format!("svn://{local}");
        if let Some(adv) = &http_advertised {
            value.push_str(&format!(" {adv}"));
        }
        value.push_str(&format!(" pid={}", std::process::id()));
        if let Err(e) = cluster.join(&value) {
            host.log.line(&format!(
                "cluster: not in the member registry (serving anyway): {e}"
            ));
        }
        start_collector(cluster, &host);
        start_post_commit_claims(cluster, &host, &root);
    }
    handle_signals(&host, local, args.config_file.clone(), http_server)?;
    if args.log_file.is_some() || args.daemon_child {
        // Tell whoever started us (the -d parent, a test harness) where we listen.
        let mut err = std::io::stderr();
        let _ = writeln!(err, "listening on {local}");
        if let Some(a) = http_addr {
            let _ = writeln!(err, "http listening on {a}");
        }
        let _ = err.flush();
    }
    svelto_server::run(host.clone(), listener, svn)?;
    if host.is_shutting_down() {
        let left = host.wait_for_writes();
        if left > 0 {
            host.log.line(&format!(
                "shutdown: {left} writes (svn:// commands, HTTP requests and open transactions) still running after {} s; exiting anyway",
                host.config.shutdown_grace.as_secs()
            ));
        } else {
            host.log.line("shutdown: no write running; exiting");
        }
    }
    if let Some(cluster) = &cluster {
        // After the running commits: another front end takes the writer lease at once
        // instead of after its TTL (a kill -9 still leaves it to the TTL).
        let resigned = cluster.resign_writers();
        if !resigned.is_empty() {
            host.log.line(&format!(
                "shutdown: writer lease of {} resigned",
                resigned.join(", ")
            ));
        }
        if let Err(e) = cluster.leave() {
            host.log
                .line(&format!("shutdown: leaving the member registry: {e}"));
        }
    }
    Ok(())
}

/// A cluster front end's peers for its HTTP side (docs/cluster.md, "HTTP transactions"):
/// its id tags the names of the transactions it opens; a peer's HTTP address is the
/// `http://` or `https://` one its member registry entry gives.
fn peers(
    cluster: &Arc<svelto_cluster::ClusterBackend>,
    host: &Arc<Host>,
    listening: std::net::SocketAddr,
    advertised: bool,
) -> Result<svelto_http::Peers> {
    let id = svelto_http::tag_of(cluster.front_end_id());
    let trust = cluster.http_forward_ca().map(Path::to_path_buf);
    if !advertised && listening.ip().is_unspecified() {
        host.log.line(&format!(
            "warning: HTTP listens on {listening} and no --http-advertise names the address the other front ends reach it at: requests of its transactions that reach them cannot be forwarded"
        ));
    }
    let registry = Arc::downgrade(cluster);
    let log = host.clone();
    let address_of = Arc::new(move |owner: &str| {
        let cluster = registry.upgrade()?;
        let members = match cluster.cluster().members() {
            Ok(m) => m,
            Err(e) => {
                log.log
                    .line(&format!("cluster: looking up front end '{owner}': {e}"));
                return None;
            }
        };
        let (_, value) = members
            .into_iter()
            .find(|(id, _)| svelto_http::tag_of(id) == owner)?;
        svelto_http::address_in_member(&value)
    });
    Ok(svelto_http::Peers {
        id,
        address_of,
        trust,
        tls_name: cluster.http_forward_name().map(str::to_owned),
    })
}

/// SIGTERM and SIGINT: stop taking connections, let running commits finish (bounded by
/// `--shutdown-grace`), exit 0. SIGHUP: reopen the log file (after rotation) and check
/// `--config-file` again (it, like each repository's svnserve.conf, is read afresh for every
/// connection; a broken one is reported in the log), and read the HTTPS certificate and key
/// again (a failure keeps the old ones, and says why in the log).
fn handle_signals(
    host: &Arc<Host>,
    local: std::net::SocketAddr,
    config_file: Option<PathBuf>,
    http: Option<svelto_http::HttpServer>,
) -> Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGTERM, SIGINT, SIGHUP])
        .context("signal handlers")?;
    let host = host.clone();
    std::thread::Builder::new()
        .name("svelto-signals".into())
        .spawn(move || {
            for sig in signals.forever() {
                if sig == SIGHUP {
                    let reopened = match host.log.reopen() {
                        Ok(true) => "log file reopened".to_string(),
                        Ok(false) => "no log file to reopen".to_string(),
                        Err(e) => format!("could not reopen the log file: {e}"),
                    };
                    let conf = match &config_file {
                        None => String::new(),
                        Some(f) => match std::path::absolute(f).map(|f| {
                            svelto_repos::conf::SvnserveConf::load(
                                &f,
                                true,
                                Path::new("/"),
                                Path::new("/"),
                            )
                        }) {
                            Ok(Ok(_)) => format!("; '{}' reads fine", f.display()),
                            Ok(Err(e)) => format!("; '{}' is broken: {e}", f.display()),
                            Err(e) => format!("; '{}': {e}", f.display()),
                        },
                    };
                    let tls = match http.as_ref().map(|h| h.reload_tls()) {
                        None | Some(Ok(false)) => String::new(),
                        Some(Ok(true)) => "; TLS certificate reloaded".to_string(),
                        Some(Err(e)) => format!("; TLS certificate kept: {e}"),
                    };
                    host.log.line(&format!("SIGHUP: {reopened}{conf}{tls}"));
                    continue;
                }
                host.log.line(&format!(
                    "{}: shutting down (no new connections; waiting up to {} s for {} running write commands; {} svn:// and {} HTTP connections open)",
                    if sig == SIGTERM { "SIGTERM" } else { "SIGINT" },
                    host.config.shutdown_grace.as_secs(),
                    host.writes_in_flight(),
                    host.metrics.open_connections(svelto_host::Protocol::Svn),
                    host.metrics.open_connections(svelto_host::Protocol::Http)
                ));
                host.begin_shutdown();
                svelto_server::wake_listener(local);
                break;
            }
        })
        .context("starting the signal thread")?;
    Ok(())
}

/// `-d` without `--foreground`: start the same command in the background, in its own
/// process group, wait until it listens, and return.
fn background() -> Result<()> {
    use std::os::unix::process::CommandExt;
    let exe = std::env::current_exe().context("finding the svelto binary")?;
    let mut child = Command::new(exe)
        .args(std::env::args_os().skip(1))
        .arg("--daemon-child")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .context("starting the background server")?;
    let stderr = child
        .stderr
        .take()
        .context("no pipe to the background server")?;
    let mut first = String::new();
    BufReader::new(stderr).read_line(&mut first)?;
    if first.starts_with("listening on ") {
        return Ok(());
    }
    let status = child.wait()?;
    bail!(
        "the background server did not start ({status}): {}",
        first.trim()
    )
}

/// This machine's host name (for CRAM-MD5 challenges).
fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into())
}

/// The name of the account this process runs as: its uid looked up in /etc/passwd, else
/// `$USER` / `$LOGNAME`.
fn login_name() -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let uid = std::fs::metadata("/proc/self").ok().map(|m| m.uid());
    if let (Some(uid), Ok(passwd)) = (uid, std::fs::read_to_string("/etc/passwd")) {
        for line in passwd.lines() {
            let f: Vec<&str> = line.split(':').collect();
            if f.len() > 2 && f[2].parse::<u32>().ok() == Some(uid) && !f[0].is_empty() {
                return Some(f[0].to_string());
            }
        }
    }
    std::env::var("USER")
        .or_else(|_| std::env::var("LOGNAME"))
        .ok()
        .filter(|u| !u.is_empty())
}

/// Runs the post-commit hooks a cluster front end claims (docs/cluster.md, "Hooks") as
/// its own commits run them: `ROOT/NAME/hooks/post-commit REPOS REV TXN-NAME`, `REPOS` =
/// `ROOT/NAME`, the environment of the repository's `hooks-env`.
struct ClaimedHooks {
    root: PathBuf,
    host: std::sync::Weak<Host>,
}

impl svelto_cluster::PostCommitRunner for ClaimedHooks {
    fn has_hook(&self, name: &str) -> bool {
        // The program's presence only: a broken hooks-env is the run's failure, logged.
        let program = self.root.join(name).join("hooks").join("post-commit");
        std::fs::metadata(program).is_ok_and(|m| m.is_file())
    }

    fn run(&self, name: &str, rev: u64, txn: &str) -> Option<String> {
        let dir = self.root.join(name);
        let Some(host) = self.host.upgrade() else {
            return Some("the server is shutting down".into());
        };
        let hooks = host
            .svnserve_conf(&dir)
            .and_then(|conf| svelto_repos::Hooks::new(&dir, Some(&conf.hooks_env)));
        match hooks {
            Ok(hooks) => hooks.post_commit(rev, txn),
            Err(e) => Some(format!(
                "the hook's configuration in {}: {e}",
                dir.display()
            )),
        }
    }
}

/// The scan of a cluster front end for post-commit hooks recorded by front ends that went
/// away before they ran them (docs/cluster.md, "Hooks"): every quarter of `hook-grace`
/// (250 ms to 5 s), on a thread of its own that ends with the backend.
fn start_post_commit_claims(
    cluster: &Arc<svelto_cluster::ClusterBackend>,
    host: &Arc<Host>,
    root: &Path,
) {
    let runner = ClaimedHooks {
        root: root.to_path_buf(),
        host: Arc::downgrade(host),
    };
    every(
        cluster.post_commit_scan_interval(),
        "cluster-post-commit",
        "cluster: no post-commit scan thread",
        cluster,
        host,
        move |cluster, host| {
            if host.is_shutting_down() {
                return false;
            }
            cluster.claim_post_commits(&runner);
            true
        },
    );
}

/// The orphan collector of a cluster front end (docs/cluster.md, "Orphans"): every
/// `gc-interval`, if this front end is (or becomes) the elected collector, one pass over
/// each repository, logged. A thread of its own that ends with the backend.
fn start_collector(cluster: &Arc<svelto_cluster::ClusterBackend>, host: &Arc<Host>) {
    let interval = cluster.gc_interval();
    if interval.is_zero() {
        return;
    }
    every(
        interval,
        "cluster-gc",
        "cluster gc: no collector thread",
        cluster,
        host,
        |cluster, host| {
            let date = crate::system_env().svn_date();
            match svelto_core::parse_svn_date(&date) {
                Some(now) => {
                    cluster.collect_if_elected(now);
                }
                None => host.log.line(&format!(
                    "cluster gc: the clock's date '{date}' is unreadable"
                )),
            }
            true
        },
    );
}

/// Runs `tick` every `interval` on a thread named `name`, while the backend and the host
/// live and `tick` says go on; `failed` is logged if the thread cannot start.
fn every(
    interval: std::time::Duration,
    name: &str,
    failed: &str,
    cluster: &Arc<svelto_cluster::ClusterBackend>,
    host: &Arc<Host>,
    mut tick: impl FnMut(&svelto_cluster::ClusterBackend, &Host) -> bool + Send + 'static,
) {
    let cluster = Arc::downgrade(cluster);
    let weak_host = Arc::downgrade(host);
    let started = std::thread::Builder::new()
        .name(name.into())
        .spawn(move || loop {
            std::thread::sleep(interval);
            let (Some(cluster), Some(host)) = (cluster.upgrade(), weak_host.upgrade()) else {
                return;
            };
            if !tick(&cluster, &host) {
                return;
            }
        });
    if let Err(e) = started {
        host.log.line(&format!("{failed}: {e}"));
    }
}
