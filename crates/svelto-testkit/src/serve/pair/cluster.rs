//! The differential pair with a cluster as the subject (issue 35): svnserve (or Apache)
//! over FSFS as the reference, and three `svelto serve --cluster` front ends over three
//! etcd members and weed (`crate::cluster`), behind a round-robin TCP balancer, so each
//! client connection (every command, and each of the sessions one command opens) goes to
//! the next front end in turn.
//!
//! All the cluster pairs of a test process share one rig (three etcd members and weed,
//! started by the first pair), each pair a cluster of its own on it (`cluster = pairN`,
//! `s3-prefix = pairN`): the same repository name in two pairs never meets.
//! [`Subject::Cluster`] makes a fresh pair ([`Pair::with_subject`], [`Pair::http_subject`],
//! [`Pair::http_auth_with`]) a cluster pair too.

use std::io::{Read, Write};
use std::net::Shutdown;

use super::*;
use crate::cluster::{EtcdCluster, S3Server, S3_ACCESS_KEY, S3_REGION, S3_SECRET_KEY};

/// The front ends of a cluster pair.
pub const CLUSTER_FRONT_ENDS: usize = 3;

/// The cluster file of each cluster pair's subject repository (the front ends' shared
/// `ROOT/NAME`), for [`Pair::subject_admin`].
fn cluster_files() -> &'static Mutex<HashMap<PathBuf, (PathBuf, Connections)>> {
    static FILES: OnceLock<Mutex<HashMap<PathBuf, (PathBuf, Connections)>>> = OnceLock::new();
    FILES.get_or_init(Mutex::default)
}

/// The connections a balancer gave each front end.
type Connections = Arc<Vec<std::sync::atomic::AtomicUsize>>;

/// The rig every cluster pair of a test process shares: three etcd members and weed,
/// started on first use and kept until the process ends (their watchdogs end them then,
/// and their directory is removed). Each pair is a cluster of its own on it (its own etcd
/// prefix and object prefix, `pairN`), so pairs never see each other's data.
struct SharedRig {
    etcd: EtcdCluster,
    s3: S3Server,
    pairs: std::sync::atomic::AtomicUsize,
}

fn shared_rig() -> &'static SharedRig {
    static RIG: OnceLock<SharedRig> = OnceLock::new();
    RIG.get_or_init(|| {
        let dir = tempdir();
        remove_at_exit(dir.path());
        let dir = dir.keep();
        let (etcd, s3) = std::thread::scope(|scope| {
            let etcd = scope.spawn(|| EtcdCluster::start(&dir, 3));
            let s3 = S3Server::start(&dir, "svelto");
            match etcd.join() {
                Ok(etcd) => (etcd, s3),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        });
        SharedRig {
            etcd,
            s3,
            pairs: std::sync::atomic::AtomicUsize::new(0),
        }
    })
}

/// A balancer on 127.0.0.1: each connection accepted is joined to the next of `ports` in
/// turn (bytes copied both ways, each direction's end passed on). Returns its port and
/// the count of connections per backend.
pub fn round_robin(ports: Vec<u16>) -> (u16, Connections) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind the balancer");
    let port = listener.local_addr().expect("its address").port();
    let counts: Arc<Vec<AtomicUsize>> =
        Arc::new(ports.iter().map(|_| AtomicUsize::new(0)).collect());
    let counted = counts.clone();
    std::thread::spawn(move || {
        let mut next = 0usize;
        for client in listener.incoming() {
            let Ok(client) = client else { continue };
            let i = next % ports.len();
            next += 1;
            counted[i].fetch_add(1, Ordering::SeqCst);
            let Ok(server) = TcpStream::connect(("127.0.0.1", ports[i])) else {
                let _ = client.shutdown(Shutdown::Both);
                continue;
            };
            let _ = client.set_nodelay(true);
            let _ = server.set_nodelay(true);
            for (from, to) in [(&client, &server), (&server, &client)] {
                let (Ok(mut from), Ok(mut to)) = (from.try_clone(), to.try_clone()) else {
                    continue;
                };
                std::thread::spawn(move || {
                    let mut buf = vec![0u8; 64 * 1024];
                    loop {
                        match from.read(&mut buf) {
                            Ok(0) | Err(_) => break,
                            Ok(n) => {
                                if to.write_all(&buf[..n]).is_err() {
                                    break;
                                }
                            }
                        }
                    }
                    let _ = to.shutdown(Shutdown::Write);
                });
            }
        }
    });
    (port, counts)
}

/// The cluster side of a pair: its front ends, the repository's UUID and the first
/// front end's cluster file.
struct ClusterSide {
    front_ends: Vec<Server>,
    uuid: String,
    file: PathBuf,
}

/// Creates `name` in a new cluster of its own on the shared rig (`pairN`), loads `dump`
/// into it (`svelto admin load --cluster`, revision 0's properties included) and starts the
/// front ends on `root` (each its own cache under `dir`; `root/NAME` holds the `conf/` and
/// `hooks/` a `svelto admin create` makes, shared by all).
fn start_cluster(
    binary: &Path,
    dir: &Path,
    root: &Path,
    name: &str,
    dump: &Path,
    http: bool,
    extra_flags: &[String],
) -> ClusterSide {
    let rig = shared_rig();
    let n = rig.pairs.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let cdir = dir.join("cluster");
    std::fs::create_dir_all(&cdir).unwrap_or_else(|e| panic!("cannot create {cdir:?}: {e}"));
    let credentials = cdir.join("s3.credentials");
    std::fs::write(
        &credentials,
        format!("[default]\naws_access_key_id = {S3_ACCESS_KEY}\naws_secret_access_key = {S3_SECRET_KEY}\n"),
    )
    .unwrap_or_else(|e| panic!("cannot write {credentials:?}: {e}"));
    let files: Vec<PathBuf> = (0..CLUSTER_FRONT_ENDS)
        .map(|i| {
            let file = cdir.join(format!("fe{i}.cluster"));
            let text = format!(
                "etcd = {}\ncluster = pair{n}\ns3-endpoint = {}\ns3-bucket = {}\n\
                 s3-prefix = pair{n}\ns3-region = {S3_REGION}\ns3-credentials = s3.credentials\n\
                 cache = cache-{i}\nfront-end = fe{i}\nrequest-timeout = 3\n",
                rig.etcd.endpoints().join(", "),
                rig.s3.endpoint(),
                rig.s3.bucket()
            );
            std::fs::write(&file, text).unwrap_or_else(|e| panic!("cannot write {file:?}: {e}"));
            file
        })
        .collect();
    // The dump's UUID, as a load into a new repository on one machine takes it.
    let mut create = Run::new(binary)
        .args(["admin", "create", "--cluster"])
        .arg(&files[0])
        .arg(name);
    if let Some(uuid) = dump_uuid(dump) {
        create = create.args(["--uuid", &uuid]);
    }
    create.success();
    Run::new(binary)
        .args(["admin", "load", "-q", "--cluster"])
        .arg(&files[0])
        .arg(name)
        .arg("-F")
        .arg(dump)
        .timeout(Duration::from_secs(600))
        .success();
    // conf/ and hooks/ as `svelto admin create` makes them for a local repository.
    let template = cdir.join("template");
    Run::new(binary)
        .args(["admin", "create"])
        .arg(&template)
        .success();
    let repo = root.join(name);
    std::fs::create_dir_all(&repo).unwrap_or_else(|e| panic!("cannot create {repo:?}: {e}"));
    Run::tool("cp")
        .arg("-r")
        .arg(template.join("conf"))
        .arg(template.join("hooks"))
        .arg(&repo)
        .success();
    let front_ends: Vec<Server> = files
        .iter()
        .map(|file| {
            // One log for the three (each appends its lines), where a one-machine pair's
            // server logs: `ROOT/../serve.log`.
            let log = root.parent().unwrap_or(root).join("serve.log");
            let mut flags = vec!["--cluster", file.to_str().expect("a UTF-8 path")];
            flags.extend(extra_flags.iter().map(String::as_str));
            if http {
                Svelto::start_http(binary, root, &log, "/svn", &flags).into_server()
            } else {
                Svelto::start_with(binary, root, &log, &flags).into_server()
            }
        })
        .collect();
    let info = Run::tool("svn")
        .args(["info", "--show-item", "repos-uuid", "--non-interactive"])
        .arg(front_ends[0].url(name))
        .output();
    assert!(
        info.success(),
        "svn info through the first front end:\n{info}\n{}",
        front_ends[0].diagnostics()
    );
    let uuid = info.stdout_text().trim().to_owned();
    ClusterSide {
        front_ends,
        uuid,
        file: files[0].clone(),
    }
}

/// The `UUID:` record of the dumpfile at `path` (it comes before the first revision).
fn dump_uuid(path: &Path) -> Option<String> {
    let mut head = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(4096).read_to_end(&mut head))
        .unwrap_or_else(|e| panic!("cannot read {path:?}: {e}"));
    let text = String::from_utf8_lossy(&head);
    let before = text.split("Revision-number:").next().unwrap_or("");
    before
        .lines()
        .find_map(|l| l.strip_prefix("UUID: "))
        .map(|u| u.trim().to_owned())
}

impl Pair {
    /// `svelto admin ARGS` (the binary `binary`) on the subject's repository: its
    /// directory, or for a cluster pair `--cluster FILE NAME` (through a cache of the first
    /// front end's cluster file, caught up with the head).
    pub fn subject_admin(&self, binary: &Path, args: &[&str]) -> Run {
        let run = Run::new(binary).arg("admin").args(args);
        let file = cluster_files()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(self.subject_repo())
            .map(|(file, _)| file.clone());
        match file {
            Some(file) => run.arg("--cluster").arg(file).arg(self.name()),
            None => run.arg(self.subject_repo()),
        }
    }

    /// The flags another `svelto serve -r ROOT` of the subject's root needs to serve the
    /// same repository (what a restart starts): `--cluster FILE` (the first front end's
    /// file, sharing its cache as an svn+ssh tunnel process does) for a cluster pair, none
    /// otherwise.
    pub fn subject_serve_flags(&self) -> Vec<String> {
        cluster_files()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(self.subject_repo())
            .map(|(file, _)| vec!["--cluster".to_owned(), file.to_string_lossy().into_owned()])
            .unwrap_or_default()
    }

    /// For a cluster pair, how many client connections the balancer gave each front end
    /// so far.
    pub fn cluster_connections(&self) -> Option<Vec<usize>> {
        let files = cluster_files().lock().unwrap_or_else(|e| e.into_inner());
        let (_, counts) = files.get(self.subject_repo())?;
        Some(
            counts
                .iter()
                .map(|c| c.load(std::sync::atomic::Ordering::SeqCst))
                .collect(),
        )
    }

    /// The scenario `fixture` served by svnserve over FSFS (the reference) and by a
    /// cluster of three `svelto serve --cluster` front ends behind a round-robin balancer
    /// (the subject: `{URL}` is the balancer's). The cluster repository is created with the
    /// dump's UUID (`svelto admin create --cluster --uuid`: a cluster load ignores the
    /// dump's), as `svnadmin load` gives it to the reference; for a dump without one the
    /// subject's output is normalized with the reference's UUID in place of its own.
    pub fn cluster(fixture: &str, svelto_binary: &Path) -> Pair {
        Pair::cluster_of(fixture, &crate::scenario_dump(fixture), svelto_binary, None)
    }

    /// The same over HTTP: Apache with mod_dav_svn as the reference, the front ends'
    /// `--http-listen` behind the balancer (`/svn` prefix on both).
    pub fn http_cluster(fixture: &str, svelto_binary: &Path) -> Pair {
        Pair::cluster_of(
            fixture,
            &crate::scenario_dump(fixture),
            svelto_binary,
            Some(("", &[])),
        )
    }

    /// [`Pair::http_cluster`] with logins as [`Pair::http_auth_with`] sets them up
    /// (anonymous reads allowed): Apache's Basic authentication and authz file, the front
    /// ends' `--http-auth-file` ([`Pair::htpasswd`], which the test writes).
    pub fn http_cluster_auth(fixture: &str, svelto_binary: &Path) -> Pair {
        let location = format!(
            "  AuthType Basic\n  AuthName \"Svelto test realm\"\n  \
             AuthUserFile {PAIR_DIR_MARK}/htpasswd\n  \
             AuthzSVNAccessFile {{REFERENCE_REPO}}/conf/authz\n  Satisfy Any\n  \
             Require valid-user\n"
        );
        let file = format!("{PAIR_DIR_MARK}/htpasswd");
        Pair::cluster_of(
            fixture,
            &crate::scenario_dump(fixture),
            svelto_binary,
            Some((&location, &["--http-auth-file", file.as_str()])),
        )
    }

    /// The cluster pair: over svn:// when `http` is None, else over HTTP with Apache's
    /// `<Location>` directives and the front ends' flags it gives (`{PAIR_DIR}` at the
    /// start of a path is the pair's directory, `{REFERENCE_REPO}` the reference).
    pub(super) fn cluster_of(
        name: &str,
        dump: &Path,
        binary: &Path,
        http: Option<(&str, &[&str])>,
    ) -> Pair {
        let (dir, roots, repos) = pair_dirs(name);
        let fix = |s: &str| {
            s.replace(PAIR_DIR_MARK, &dir.path().to_string_lossy())
                .replace("{REFERENCE_REPO}", &repos[0].to_string_lossy())
        };
        let (location, flags) = match http {
            Some((location, flags)) => (fix(location), flags.iter().map(|f| fix(f)).collect()),
            None => (String::new(), Vec::new()),
        };
        let http = http.is_some();
        let root = roots[1].join("repos");
        let (reference, cluster) = std::thread::scope(|scope| {
            let reference = scope.spawn(|| {
                make_fsfs(&repos[0], dump);
                if http {
                    crate::apache::Apache::start_full(
                        &roots[0].join("repos"),
                        &roots[0],
                        "/svn",
                        &location,
                        None,
                    )
                    .into_server()
                } else {
                    Svnserve::start(&roots[0].join("repos")).into_server()
                }
            });
            let cluster = start_cluster(binary, dir.path(), &root, name, dump, http, &flags);
            match reference.join() {
                Ok(server) => (server, cluster),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        });
        let ports: Vec<u16> = cluster.front_ends.iter().map(Server::port).collect();
        let (port, counts) = round_robin(ports);
        cluster_files()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(repos[1].clone(), (cluster.file.clone(), counts));
        let mut front_ends = cluster.front_ends.into_iter();
        let first = front_ends.next().expect("front ends");
        let labels = ["svnserve", "svelto-cluster"];
        let labels = if http {
            ["apache", "svelto-cluster-http"]
        } else {
            labels
        };
        let subject = (Subject::Cluster(binary.to_owned()), None);
        let mut pair = Pair::assemble(name, dir, [reference, first], repos, roots, labels, subject);
        // The other front ends end with the pair.
        pair.others = front_ends.collect();
        let base = if http {
            format!("http://127.0.0.1:{port}/svn")
        } else {
            format!("svn://127.0.0.1:{port}")
        };
        pair.route_through(1, &base);
        let reference_uuid = Run::tool("svnlook")
            .arg("uuid")
            .arg(&pair.sides[0].repo)
            .success()
            .stdout_text()
            .trim()
            .to_owned();
        let side = &mut pair.sides[1];
        side.normalizer =
            std::mem::take(&mut side.normalizer).replace(&cluster.uuid, &reference_uuid);
        pair
    }
}
