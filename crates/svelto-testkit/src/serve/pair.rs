//! The differential runner: the same fixture in svnserve and in Svelto, the same
//! command against both, outputs and working copies compared.

use super::*;

mod cluster;
pub use cluster::{round_robin, CLUSTER_FRONT_ENDS};

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
#[derive(Clone)]
pub enum Subject {
    /// `svelto serve` (this binary) over a repository made by `svelto admin`.
    Svelto(PathBuf),
    /// svnserve again over a second FSFS repository: checks the harness.
    SelfTest,
    /// Svelto's front ends started in the test process ([`ServeInProcess`]) over the
    /// in-memory backend ([`crate::memfs::MemBackend`]), the dump loaded into it by
    /// `svelto_repos::load`: the same suites over the second backend.
    Memory(Arc<dyn ServeInProcess>),
    /// Three `svelto serve --cluster` front ends (this binary) behind a round-robin
    /// balancer, over a cluster of its own on the test process's shared rig (three etcd
    /// members and weed): see [`Pair::cluster`].
    Cluster(PathBuf),
}

impl std::fmt::Debug for Subject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Subject::Svelto(binary) => f.debug_tuple("Svelto").field(binary).finish(),
            Subject::SelfTest => f.write_str("SelfTest"),
            Subject::Memory(_) => f.write_str("Memory"),
            Subject::Cluster(binary) => f.debug_tuple("Cluster").field(binary).finish(),
        }
    }
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
pub(super) struct Side {
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
    subject: Subject,
    /// The subject's repositories when they are in memory.
    memory: Option<Arc<crate::memfs::MemBackend>>,
    /// A cluster pair's front ends besides the subject side's (they end with the pair).
    others: Vec<Server>,
}

/// Writes a certificate and its key (PEM) into a directory and returns their paths.
pub type MakeCert = dyn Fn(&Path) -> (PathBuf, PathBuf);

/// Stands for the pair's directory in [`Pair::http_with`]'s arguments.
const PAIR_DIR_MARK: &str = "{PAIR_DIR}";

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
        if let Subject::Cluster(binary) = &subject {
            return Pair::cluster_of(name, dump, binary, None);
        }
        let (dir, roots, repos) = pair_dirs(name);
        let memory = load_sides(&repos, dump, &subject);
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
                Subject::Memory(start) => Server::in_process(
                    &**start,
                    in_memory(&memory),
                    &roots[1].join("repos"),
                    &roots[1].join("serve.log"),
                    None,
                    &[],
                ),
                Subject::Cluster(_) => unreachable!("a cluster pair is made above"),
            };
            let reference = match reference.join() {
                Ok(server) => server,
                Err(panic) => std::panic::resume_unwind(panic),
            };
            (reference, subject_server)
        });
        let labels = [
            "svnserve",
            match subject {
                Subject::SelfTest => "svnserve-2",
                Subject::Svelto(_) => "svelto",
                Subject::Memory(_) => "svelto-memory",
                Subject::Cluster(_) => unreachable!("a cluster pair is made above"),
            },
        ];
        Pair::assemble(
            name,
            dir,
            [reference, subject_server],
            repos,
            roots,
            labels,
            (subject, memory),
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
        (subject, memory): (Subject, Option<Arc<crate::memfs::MemBackend>>),
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
            subject,
            memory,
            others: Vec::new(),
        }
    }

    /// The scenario `fixture` over HTTP: FSFS served by Apache httpd with mod_dav_svn
    /// (the reference, `SVNParentPath` under `/svn`) and Svelto's store served by
    /// `svelto serve --http-listen ... --http-prefix /svn`. Panics, saying what to install,
    /// when Apache or mod_dav_svn is missing.
    pub fn http(fixture: &str, svelto_binary: &Path) -> Pair {
        Pair::http_with(fixture, svelto_binary, "", &[], None)
    }

    /// The HTTP pair over `https://`: Apache with mod_ssl and Svelto with
    /// `--http-tls-cert`/`--http-tls-key`, both with the certificate and key (PEM) that
    /// `make_cert(DIR)` writes into the pair's directory and returns. Clients must be told
    /// to trust it (`--trust-server-cert-failures=unknown-ca,cn-mismatch`).
    pub fn https(fixture: &str, svelto_binary: &Path, make_cert: &MakeCert) -> Pair {
        Pair::http_with(fixture, svelto_binary, "", &[], Some(make_cert))
    }

    /// The HTTP pair with logins, as an Apache administrator sets them up: Apache with
    /// `AuthType Basic`, `AuthName "Svelto test realm"`, `AuthUserFile DIR/htpasswd`,
    /// `AuthzSVNAccessFile` of the reference repository's `conf/authz`, `Satisfy Any` when
    /// `anonymous`, and `Require valid-user`; Svelto with `--http-auth-file DIR/htpasswd`
    /// (the same file: see [`Pair::htpasswd`]). The test writes the password file, the
    /// authz file of each side and the Svelto side's svnserve.conf (`anon-access = read`
    /// for `Satisfy Any`, `none` for `Require valid-user` alone; `authz-db = authz`).
    pub fn http_auth(fixture: &str, svelto_binary: &Path, anonymous: bool) -> Pair {
        Pair::http_auth_with(
            fixture,
            Subject::Svelto(svelto_binary.to_owned()),
            anonymous,
        )
    }

    /// [`Pair::http_auth`] with `subject` on the Svelto side (`svelto serve`, or the front
    /// ends over memory).
    pub fn http_auth_with(fixture: &str, subject: Subject, anonymous: bool) -> Pair {
        let location = format!(
            "  AuthType Basic\n  AuthName \"Svelto test realm\"\n  \
             AuthUserFile {PAIR_DIR_MARK}/htpasswd\n  \
             AuthzSVNAccessFile {{REFERENCE_REPO}}/conf/authz\n{}  Require valid-user\n",
            if anonymous { "  Satisfy Any\n" } else { "" }
        );
        let file = format!("{PAIR_DIR_MARK}/htpasswd");
        let dump = crate::scenario_dump(fixture);
        let flags = ["--http-auth-file", file.as_str()];
        Pair::http_subject(fixture, &dump, subject, &location, &flags)
    }

    /// The password file of an [`Pair::http_auth`] pair (absent until the test writes it).
    pub fn htpasswd(&self) -> PathBuf {
        self.dir().join("htpasswd")
    }

    /// The HTTP pair with more directives in Apache's `<Location>` (`{REFERENCE_REPO}` in
    /// them names the reference repository) and more flags of `svelto serve`; a
    /// `{PAIR_DIR}` at the start of a path is the pair's directory.
    pub fn http_with(
        fixture: &str,
        svelto_binary: &Path,
        location: &str,
        flags: &[&str],
        make_cert: Option<&MakeCert>,
    ) -> Pair {
        let dump = crate::scenario_dump(fixture);
        let subject = Subject::Svelto(svelto_binary.to_owned());
        Pair::http_with_dump(fixture, &dump, subject, location, flags, make_cert)
    }

    /// Any dump over HTTP, served as repository `name` by Apache and by Svelto.
    pub fn http_from_dump(name: &str, dump: &Path, svelto_binary: &Path) -> Pair {
        let subject = Subject::Svelto(svelto_binary.to_owned());
        Pair::http_with_dump(name, dump, subject, "", &[], None)
    }

    /// Any dump over HTTP, served as repository `name` by Apache and by `subject`
    /// (`svelto serve`, or the front ends in memory; not svnserve), with more directives
    /// in Apache's `<Location>` and more flags of `svelto serve` as [`Pair::http_with`].
    pub fn http_subject(
        name: &str,
        dump: &Path,
        subject: Subject,
        location: &str,
        flags: &[&str],
    ) -> Pair {
        Pair::http_with_dump(name, dump, subject, location, flags, None)
    }

    fn http_with_dump(
        name: &str,
        dump: &Path,
        subject: Subject,
        location: &str,
        flags: &[&str],
        make_cert: Option<&MakeCert>,
    ) -> Pair {
        assert!(
            !matches!(subject, Subject::SelfTest),
            "the HTTP pair's subject is Svelto"
        );
        if let Subject::Cluster(binary) = &subject {
            assert!(make_cert.is_none(), "no https:// for a cluster pair");
            return Pair::cluster_of(name, dump, binary, Some((location, flags)));
        }
        let dump = dump.to_path_buf();
        let (dir, roots, repos) = pair_dirs(name);
        let tls = make_cert.map(|make| make(dir.path()));
        let memory = load_sides(&repos, &dump, &subject);
        let fix = |s: &str| {
            s.replace(PAIR_DIR_MARK, &dir.path().to_string_lossy())
                .replace("{REFERENCE_REPO}", &repos[0].to_string_lossy())
        };
        let apache = crate::apache::Apache::start_full(
            &roots[0].join("repos"),
            &roots[0],
            "/svn",
            &fix(location),
            tls.as_ref().map(|(c, k)| (c.as_path(), k.as_path())),
        );
        let mut flags: Vec<String> = flags.iter().map(|f| fix(f)).collect();
        if let Some((cert, key)) = &tls {
            for (flag, file) in [("--http-tls-cert", cert), ("--http-tls-key", key)] {
                flags.push(flag.to_string());
                flags.push(file.to_string_lossy().into_owned());
            }
        }
        let (svelto, label) = match &subject {
            Subject::Memory(start) => (
                Server::in_process(
                    &**start,
                    in_memory(&memory),
                    &roots[1].join("repos"),
                    &roots[1].join("serve.log"),
                    Some("/svn"),
                    &flags,
                ),
                "svelto-http-memory",
            ),
            Subject::Svelto(binary) => {
                let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
                let server = Svelto::start_http(
                    binary,
                    &roots[1].join("repos"),
                    &roots[1].join("serve.log"),
                    "/svn",
                    &flags,
                );
                (server.into_server(), "svelto-http")
            }
            Subject::SelfTest | Subject::Cluster(_) => unreachable!("refused above"),
        };
        Pair::assemble(
            name,
            dir,
            [apache.into_server(), svelto],
            repos,
            roots,
            ["apache", label],
            (subject, memory),
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
        matches!(self.subject, Subject::SelfTest)
    }

    /// What serves the subject side.
    pub fn subject_kind(&self) -> &Subject {
        &self.subject
    }

    /// The subject's repository as a dumpfile (`svnadmin dump` for svnserve, `svelto admin
    /// dump` for `svelto serve`, `svelto_repos::dump` in memory), after checking it (`svelto
    /// admin verify`, `svelto_repos::verify` in memory): what a session's end compares
    /// with the reference's dump.
    pub fn subject_dump(&self) -> Vec<u8> {
        let repo = self.subject_repo();
        match &self.subject {
            Subject::SelfTest => {
                Run::tool("svnadmin")
                    .args(["dump", "-q"])
                    .arg(repo)
                    .success()
                    .stdout
            }
            Subject::Svelto(binary) | Subject::Cluster(binary) => {
                // (`--cluster FILE NAME` for a cluster pair)
                self.subject_admin(binary, &["verify", "-q"]).success();
                self.subject_admin(binary, &["dump", "-q"]).success().stdout
            }
            Subject::Memory(_) => {
                let mem = self
                    .memory
                    .as_ref()
                    .and_then(|m| m.repo(repo))
                    .unwrap_or_else(|| panic!("no repository in memory at {repo:?}"));
                let youngest = svelto_fs::ReadRepo::youngest(&mem);
                svelto_repos::verify(&mem, 0, youngest, &mut |_| {})
                    .unwrap_or_else(|e| panic!("{repo:?} in memory does not verify: {e}"));
                let mut out = Vec::new();
                let opts = svelto_repos::DumpOptions {
                    start: 0,
                    end: youngest,
                    ..Default::default()
                };
                svelto_repos::dump(&mem, &mut out, opts, &mut |_| {})
                    .unwrap_or_else(|e| panic!("{repo:?} in memory: dump: {e}"));
                out
            }
        }
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

    /// From now on, side `i`'s clients reach its server at `base_url` (a reverse proxy in
    /// front of it, `SCHEME://HOST:PORT/PREFIX` without a trailing slash): `{URL}` and
    /// `{SERVER}` name the proxy, and output that names the proxy is normalized as the
    /// server's.
    pub fn route_through(&mut self, i: usize, base_url: &str) {
        let side = &mut self.sides[i];
        side.server.base_url = base_url.to_owned();
        let dates = side.normalizer.dates;
        side.normalizer = Normalizer::new()
            .replace(base_url, SERVER_PLACEHOLDER)
            .replace(side.work.as_os_str().as_encoded_bytes(), WORK_PLACEHOLDER);
        side.normalizer.dates = dates;
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
pub(super) fn remove_at_exit(dir: &Path) {
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
pub(super) fn pair_dirs(name: &str) -> (TempDir, [PathBuf; 2], [PathBuf; 2]) {
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

/// Loads `dump` into FSFS on side 0 and into the subject's store on side 1, at once; the
/// in-memory backend holding side 1 when the subject serves from memory.
pub(super) fn load_sides(
    repos: &[PathBuf; 2],
    dump: &Path,
    subject: &Subject,
) -> Option<Arc<crate::memfs::MemBackend>> {
    std::thread::scope(|scope| {
        let reference = scope.spawn(|| make_fsfs(&repos[0], dump));
        let memory = match subject {
            Subject::SelfTest => {
                make_fsfs(&repos[1], dump);
                None
            }
            Subject::Svelto(binary) => {
                make_svelto(binary, &repos[1], dump);
                None
            }
            Subject::Memory(_) => Some(make_memory(&repos[1], dump)),
            Subject::Cluster(_) => unreachable!("a cluster pair loads its own"),
        };
        if let Err(panic) = reference.join() {
            std::panic::resume_unwind(panic);
        }
        memory
    })
}

/// `svelto_repos::create` of `repo` through a new in-memory backend (its `conf/` and
/// `hooks/` on disk, its revisions in memory), then `svelto_repos::load` of `dump` into it
/// as `svelto admin load` does (the dump's UUID taken).
pub(super) fn make_memory(repo: &Path, dump: &Path) -> Arc<crate::memfs::MemBackend> {
    let backend = Arc::new(crate::memfs::MemBackend::new());
    svelto_repos::create(
        &*backend,
        repo,
        "00000000-0000-4000-8000-000000000000",
        "2000-01-01T00:00:00.000000Z",
    )
    .unwrap_or_else(|e| panic!("create {repo:?} in memory: {e}"));
    let input = std::io::BufReader::new(
        std::fs::File::open(dump).unwrap_or_else(|e| panic!("open {dump:?}: {e}")),
    );
    let mut writer = svelto_fs::Backend::open_writer(&*backend, repo)
        .unwrap_or_else(|e| panic!("the writer of {repo:?} in memory: {e}"));
    svelto_repos::load(
        &mut *writer,
        input,
        svelto_repos::LoadOptions::default(),
        &mut |_| {},
    )
    .unwrap_or_else(|e| panic!("{dump:?}: load into memory: {e}"));
    backend
}

/// The in-memory backend `load_sides` made, as the servers take it.
fn in_memory(memory: &Option<Arc<crate::memfs::MemBackend>>) -> Arc<dyn svelto_fs::Backend> {
    memory.clone().expect("the subject was loaded into memory")
}

pub(super) fn make_fsfs(repo: &Path, dump: &Path) {
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

pub(super) fn make_svelto(binary: &Path, repo: &Path, dump: &Path) {
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

pub(super) fn indent_text(text: &str) -> String {
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

pub(super) fn describe_entry(entry: Option<&TreeEntry>) -> String {
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

/// The svn:// pair serving `fixture` from memory ([`Subject::Memory`] with `start`'s
/// front ends), made on first use and shared by every test of the process.
pub fn shared_memory_pair(fixture: &str, start: &Arc<dyn ServeInProcess>) -> &'static Pair {
    static CELLS: OnceLock<PairCells> = OnceLock::new();
    shared_cell(&CELLS, fixture)
        .get_or_init(|| Pair::with_subject(fixture, Subject::Memory(start.clone())).share())
}

/// The HTTP pair (Apache, and Svelto's HTTP front end in this process over memory) serving
/// `fixture`, made on first use and shared by every test of the process.
pub fn shared_memory_http_pair(fixture: &str, start: &Arc<dyn ServeInProcess>) -> &'static Pair {
    static CELLS: OnceLock<PairCells> = OnceLock::new();
    shared_cell(&CELLS, fixture).get_or_init(|| {
        let dump = crate::scenario_dump(fixture);
        Pair::http_subject(fixture, &dump, Subject::Memory(start.clone()), "", &[]).share()
    })
}

/// The svn:// pair serving `fixture` from a cluster of three front ends
/// ([`Subject::Cluster`], [`Pair::cluster`]), made on first use and shared by every test of
/// the process.
pub fn shared_cluster_pair(fixture: &str, svelto_binary: &Path) -> &'static Pair {
    static CELLS: OnceLock<PairCells> = OnceLock::new();
    shared_cell(&CELLS, fixture).get_or_init(|| Pair::cluster(fixture, svelto_binary).share())
}

/// The HTTP pair (Apache, and three front ends' `--http-listen` behind the balancer)
/// serving `fixture` from a cluster, made on first use and shared by every test of the
/// process.
pub fn shared_cluster_http_pair(fixture: &str, svelto_binary: &Path) -> &'static Pair {
    static CELLS: OnceLock<PairCells> = OnceLock::new();
    shared_cell(&CELLS, fixture).get_or_init(|| Pair::http_cluster(fixture, svelto_binary).share())
}

/// One cell per fixture, each filled once.
pub(super) type PairCells = Mutex<HashMap<String, &'static OnceLock<&'static Pair>>>;

pub(super) fn shared_cell(
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
