//! LDAP logins over `http://` (svnserve.conf's `[ldap]`, docs/ldap.md) against OpenLDAP's
//! `slapd`, started here on 127.0.0.1 with a configuration and an LDIF written here (an
//! mdb database in a temporary directory; plain ldap://, StartTLS and ldaps:// with a
//! certificate signed by a CA made here with openssl). The stock client checks out and
//! commits as a directory user; wrong passwords, empty passwords, users outside the URL's
//! filter and filter metacharacters in user names are refused (401); an LDAP group grants
//! a path in the authz file; with slapd killed, new logins get 503 (logged), those it
//! accepted lately go on, anonymous reads are served; slapd back, logins work again.
//! Fails, saying what to install, when slapd, ldap-utils or openssl is missing.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use svelto_testkit::serve::{free_port, Svelto};
use svelto_testkit::{require_tool, Run};

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_svelto"))
}

const SUFFIX: &str = "dc=example,dc=com";

/// The directory: people (harry and sally may use svn, mallory may not), Svelto's own
/// bind entry, and the group `developers` (harry) and `testers` (sally).
fn ldif() -> String {
    let person = |uid: &str, pw: &str, svn: bool| {
        format!(
            "dn: uid={uid},ou=people,{SUFFIX}\nobjectClass: inetOrgPerson\nuid: {uid}\n\
             cn: {uid}\nsn: {uid}\n{}userPassword: {pw}\n\n",
            if svn { "employeeType: svn\n" } else { "" }
        )
    };
    let mut text = format!(
        "dn: {SUFFIX}\nobjectClass: dcObject\nobjectClass: organization\no: Example\n\
         dc: example\n\n"
    );
    for ou in ["people", "services", "groups"] {
        text += &format!("dn: ou={ou},{SUFFIX}\nobjectClass: organizationalUnit\nou: {ou}\n\n");
    }
    text += &person("harry", "harryssecret", true);
    text += &person("sally", "sallyssecret", true);
    text += &person("kim", "kimssecret", true);
    text += &person("mallory", "mallorysecret", false);
    text += &format!(
        "dn: cn=svelto,ou=services,{SUFFIX}\nobjectClass: person\ncn: svelto\nsn: svelto\n\
         userPassword: bindsecret\n\n"
    );
    for (group, member) in [("developers", "harry"), ("testers", "sally")] {
        text += &format!(
            "dn: cn={group},ou=groups,{SUFFIX}\nobjectClass: groupOfNames\ncn: {group}\n\
             member: uid={member},ou=people,{SUFFIX}\n\n"
        );
    }
    text
}

/// A CA and a certificate for 127.0.0.1 signed by it: (ca.pem, cert.pem, key.pem).
fn certificates(dir: &Path, name: &str) -> (PathBuf, PathBuf, PathBuf) {
    require_tool("openssl");
    let p = |f: &str| dir.join(format!("{name}-{f}"));
    Run::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
        ])
        .arg("-keyout")
        .arg(p("ca.key"))
        .arg("-out")
        .arg(p("ca.pem"))
        .args(["-subj", &format!("/CN={name} test CA")])
        .success();
    Run::new("openssl")
        .args(["req", "-newkey", "rsa:2048", "-nodes"])
        .arg("-keyout")
        .arg(p("key.pem"))
        .arg("-out")
        .arg(p("csr.pem"))
        .args(["-subj", "/CN=127.0.0.1"])
        .success();
    std::fs::write(
        p("ext.cnf"),
        "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n",
    )
    .expect("ext");
    Run::new("openssl")
        .args(["x509", "-req", "-days", "2", "-CAcreateserial"])
        .arg("-in")
        .arg(p("csr.pem"))
        .arg("-CA")
        .arg(p("ca.pem"))
        .arg("-CAkey")
        .arg(p("ca.key"))
        .arg("-out")
        .arg(p("cert.pem"))
        .arg("-extfile")
        .arg(p("ext.cnf"))
        .success();
    (p("ca.pem"), p("cert.pem"), p("key.pem"))
}

/// slapd serving the directory, ldap:// and ldaps:// on two ports; killed when dropped.
struct Slapd {
    dir: PathBuf,
    ldap: u16,
    ldaps: u16,
    child: Option<std::process::Child>,
}

impl Slapd {
    fn new(dir: &Path) -> Slapd {
        which("slapd", "/usr/sbin/slapd");
        which("slapadd", "/usr/sbin/slapadd");
        which("ldapwhoami", "/usr/bin/ldapwhoami");
        let dir = dir.join("slapd");
        std::fs::create_dir_all(dir.join("db")).expect("slapd dir");
        let (_, cert, key) = certificates(&dir, "ldap");
        let conf = format!(
            "include /etc/ldap/schema/core.schema\ninclude /etc/ldap/schema/cosine.schema\n\
             include /etc/ldap/schema/inetorgperson.schema\ninclude /etc/ldap/schema/nis.schema\n\
             pidfile {d}/slapd.pid\nmodulepath /usr/lib/ldap\nmoduleload back_mdb\n\
             TLSCertificateFile {cert}\nTLSCertificateKeyFile {key}\n\
             database mdb\nsuffix \"{SUFFIX}\"\nrootdn \"cn=admin,{SUFFIX}\"\n\
             rootpw adminsecret\ndirectory {d}/db\nmaxsize 10485760\n",
            d = dir.display(),
            cert = cert.display(),
            key = key.display()
        );
        std::fs::write(dir.join("slapd.conf"), conf).expect("slapd.conf");
        std::fs::write(dir.join("data.ldif"), ldif()).expect("ldif");
        Run::new(which("slapadd", "/usr/sbin/slapadd"))
            .arg("-f")
            .arg(dir.join("slapd.conf"))
            .arg("-l")
            .arg(dir.join("data.ldif"))
            .success();
        let mut s = Slapd {
            dir,
            ldap: free_port(),
            ldaps: free_port(),
            child: None,
        };
        s.start();
        s
    }

    /// Starts slapd (again) and waits until it answers.
    fn start(&mut self) {
        let child = std::process::Command::new(which("slapd", "/usr/sbin/slapd"))
            .arg("-f")
            .arg(self.dir.join("slapd.conf"))
            .arg("-h")
            .arg(format!(
                "ldap://127.0.0.1:{}/ ldaps://127.0.0.1:{}/",
                self.ldap, self.ldaps
            ))
            .args(["-d", "0"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("slapd starts");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let who = Run::tool("ldapwhoami")
                .args(["-x", "-H", &format!("ldap://127.0.0.1:{}", self.ldap)])
                .args([
                    "-D",
                    &format!("uid=harry,ou=people,{SUFFIX}"),
                    "-w",
                    "harryssecret",
                ])
                .output();
            if who.success() {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "slapd did not answer on port {} within 20 s: {}",
                self.ldap,
                who.stderr_text()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Slapd {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The program `name`, or a failure saying which Debian packages to install.
fn which(name: &str, usual: &str) -> PathBuf {
    if Path::new(usual).exists() {
        return usual.into();
    }
    match std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|d| d.join(name))
        .find(|p| p.exists())
    {
        Some(p) => p,
        None => panic!(
            "{name} is missing: install OpenLDAP's server and tools \
             (apt-get install -y slapd ldap-utils; scripts/setup does)"
        ),
    }
}

fn basic(user: &str, password: &str) -> Vec<u8> {
    use base64::Engine as _;
    let mut h = b"Authorization: Basic ".to_vec();
    h.extend_from_slice(
        base64::engine::general_purpose::STANDARD
            .encode(format!("{user}:{password}"))
            .as_bytes(),
    );
    h
}

/// The status of a PROPFIND of `path` on the server at `addr` as `user`.
fn status(addr: &str, path: &str, user: Option<(&str, &str)>) -> (u16, String) {
    let auth = user.map(|(u, p)| basic(u, p));
    let mut headers: Vec<&[u8]> = vec![b"Depth: 0"];
    if let Some(a) = &auth {
        headers.push(a);
    }
    crate::raw_request(addr, "PROPFIND", path, &headers, b"")
}

/// The stock client as `user` (None: anonymous), without a cache of credentials.
fn svn(
    config: &Path,
    cwd: &Path,
    user: Option<(&str, &str)>,
    args: &[&str],
) -> svelto_testkit::Outcome {
    let mut run = Run::tool("svn")
        .args(["--non-interactive", "--no-auth-cache", "--config-dir"])
        .arg(config)
        .current_dir(cwd);
    if let Some((u, p)) = user {
        run = run.args(["--username", u, "--password", p]);
    }
    run.args(args).output()
}

fn svnserve_conf(slapd: &Slapd, url_tail: &str, tls_port: Option<u16>, extra: &str) -> String {
    let port = tls_port.unwrap_or(slapd.ldap);
    let scheme = if url_tail == "ldaps" { "ldaps" } else { "ldap" };
    let word = if url_tail == "TLS" { " TLS" } else { "" };
    format!(
        "[general]\nanon-access = read\nauth-access = write\nauthz-db = authz\n\
         realm = LDAP test\n\
         [ldap]\n\
         url = {scheme}://127.0.0.1:{port}/ou=people,{SUFFIX}?uid?sub?(&(objectClass=inetOrgPerson)(employeeType=svn)){word}\n\
         bind-dn = cn=svelto,ou=services,{SUFFIX}\n\
         bind-password-file = ldap-bind-password\n\
         group-base = ou=groups,{SUFFIX}\n\
         timeout = 2\n\
         {extra}"
    )
}

#[test]
fn ldap_logins_groups_tls_and_an_outage_against_slapd() {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path();
    let mut slapd = Slapd::new(dir);
    let root = dir.join("root");
    std::fs::create_dir_all(&root).expect("root");
    let repo = root.join("repo");
    Run::new(bin())
        .args(["admin", "create"])
        .arg(&repo)
        .success();
    let conf_dir = repo.join("conf");
    std::fs::write(conf_dir.join("ldap-bind-password"), "bindsecret\n").expect("pw");
    std::fs::write(
        conf_dir.join("authz"),
        "[groups]\ndevelopers =\ntesters =\n[/]\n* = r\n@developers = rw\n\
         [/secret]\n* =\n@developers = rw\n",
    )
    .expect("authz");
    std::fs::write(
        conf_dir.join("svnserve.conf"),
        svnserve_conf(&slapd, "plain", None, ""),
    )
    .expect("conf");
    let log = dir.join("serve.log");
    let server = Svelto::start_http(&bin(), &root, &log, "/svn", &[]);
    let url = server.url("repo");
    let addr = format!("127.0.0.1:{}", server.port());
    let config = dir.join("svn-config");
    let harry = Some(("harry", "harryssecret"));
    let sally = Some(("sally", "sallyssecret"));

    // harry (a developer) makes /secret and /trunk, checks out /secret (a checkout of / would
    // be anonymous, as against Apache with Satisfy Any: nothing asks for a login) and
    // commits; sally reads / only.
    let out = svn(
        &config,
        dir,
        harry,
        &[
            "mkdir",
            "-m",
            "dirs",
            &format!("{url}/secret"),
            &format!("{url}/trunk"),
        ],
    );
    assert!(out.success(), "{}", out.stderr_text());
    let wc = dir.join("wc");
    let out = svn(
        &config,
        dir,
        harry,
        &[
            "checkout",
            &format!("{url}/secret"),
            wc.to_str().expect("utf-8"),
        ],
    );
    assert!(out.success(), "{}", out.stderr_text());
    std::fs::write(wc.join("plan.txt"), "the plan\n").expect("file");
    let out = svn(&config, &wc, harry, &["add", "plan.txt"]);
    assert!(out.success(), "{}", out.stderr_text());
    let out = svn(&config, &wc, harry, &["commit", "-m", "plan"]);
    assert!(out.success(), "{}", out.stderr_text());
    let out = svn(&config, dir, None, &["log", "-q", &url]);
    assert!(
        out.stdout_text().contains("| harry |"),
        "{}",
        out.stdout_text()
    );
    let out = svn(
        &config,
        dir,
        sally,
        &["cat", &format!("{url}/secret/plan.txt")],
    );
    assert!(
        !out.success(),
        "sally is no developer: {}",
        out.stdout_text()
    );
    let out = svn(
        &config,
        dir,
        harry,
        &["cat", &format!("{url}/secret/plan.txt")],
    );
    assert_eq!(out.stdout_text(), "the plan\n", "{}", out.stderr_text());
    let out = svn(
        &config,
        dir,
        sally,
        &["mkdir", "-m", "x", &format!("{url}/trunk/x")],
    );
    assert!(!out.success(), "sally may not write");
    let out = svn(&config, dir, sally, &["ls", &url]);
    assert_eq!(out.stdout_text(), "trunk/\n", "{}", out.stderr_text());

    // Refused: a wrong password, an empty one, a user outside the filter, an unknown
    // user, filter metacharacters.
    let secret = "/svn/repo/secret";
    assert_eq!(status(&addr, secret, harry).0, 207);
    for (user, pw) in [
        ("harry", "wrong"),
        ("harry", ""),
        ("mallory", "mallorysecret"),
        ("nobody", "harryssecret"),
        ("*", "harryssecret"),
        ("harry)(uid=*", "harryssecret"),
    ] {
        let (code, text) = status(&addr, secret, Some((user, pw)));
        assert_eq!(code, 401, "{user}:{pw}: {text}");
    }
    let out = svn(
        &config,
        dir,
        Some(("harry", "wrong")),
        &["ls", &format!("{url}/secret")],
    );
    assert!(!out.success());
    assert!(
        out.stderr_text().contains("E215004"),
        "{}",
        out.stderr_text()
    );
    let logged = std::fs::read_to_string(&log).expect("log");
    assert!(
        logged.contains("user mallory not found in the directory"),
        "{logged}"
    );
    assert!(logged.contains("empty password is refused"), "{logged}");

    // The directory down: new logins 503 with a log line, the lately accepted and
    // anonymous reads go on; a wrong password of a cached user is not taken from the
    // cache.
    slapd.kill();
    let (code, text) = status(&addr, "/svn/repo/trunk", Some(("kim", "kimssecret")));
    assert_eq!(code, 503, "{text}");
    assert!(text.contains("LDAP directory ldap://127.0.0.1:"), "{text}");
    assert_eq!(status(&addr, secret, Some(("harry", "changed"))).0, 503);
    assert_eq!(
        status(&addr, secret, harry).0,
        207,
        "harry was accepted lately"
    );
    let out = svn(&config, dir, None, &["ls", &url]);
    assert_eq!(out.stdout_text(), "trunk/\n", "{}", out.stderr_text());
    let out = svn(
        &config,
        dir,
        None,
        &["checkout", &url, dir.join("anon").to_str().expect("utf-8")],
    );
    assert!(out.success(), "{}", out.stderr_text());
    let out = svn(
        &config,
        dir,
        Some(("kim", "kimssecret")),
        &["ls", &format!("{url}/secret")],
    );
    assert!(!out.success());
    assert!(
        out.stderr_text()
            .contains("E175002: The LDAP directory ldap://127.0.0.1:"),
        "{}",
        out.stderr_text()
    );
    let logged = std::fs::read_to_string(&log).expect("log");
    assert!(
        logged.contains("repo: The LDAP directory ldap://127.0.0.1:"),
        "{logged}"
    );
    slapd.start();
    let kim = Some(("kim", "kimssecret"));
    assert_eq!(status(&addr, "/svn/repo/trunk", kim).0, 207);
    assert_eq!(
        status(&addr, "/svn/repo/secret", kim).0,
        403,
        "kim is no developer"
    );
    assert_eq!(status(&addr, secret, Some(("harry", "changed"))).0, 401);

    // StartTLS and ldaps://, trusting the CA of slapd's certificate; another CA: 503.
    let ca = slapd.dir.join("ldap-ca.pem");
    let (other_ca, _, _) = certificates(dir, "other");
    let tls_ports = [("TLS", None), ("ldaps", Some(slapd.ldaps))];
    for (kind, port) in tls_ports {
        let trusting = |ca: &Path| format!("ca-file = {}\ncache-ttl = 0\n", ca.display());
        std::fs::write(
            conf_dir.join("svnserve.conf"),
            svnserve_conf(&slapd, kind, port, &trusting(&ca)),
        )
        .expect("conf");
        std::thread::sleep(Duration::from_millis(1100));
        let out = svn(
            &config,
            dir,
            harry,
            &["cat", &format!("{url}/secret/plan.txt")],
        );
        assert_eq!(
            out.stdout_text(),
            "the plan\n",
            "{kind}: {}",
            out.stderr_text()
        );
        assert_eq!(status(&addr, "/svn/repo/trunk", sally).0, 207, "{kind}");
        assert_eq!(status(&addr, secret, harry).0, 207, "{kind}");
        assert_eq!(
            status(&addr, secret, Some(("harry", "wrong"))).0,
            401,
            "{kind}"
        );
        std::fs::write(
            conf_dir.join("svnserve.conf"),
            svnserve_conf(&slapd, kind, port, &trusting(&other_ca)),
        )
        .expect("conf");
        std::thread::sleep(Duration::from_millis(1100));
        let (code, text) = status(&addr, secret, harry);
        assert_eq!(code, 503, "{kind} with an untrusted certificate: {text}");
    }

    // A directory that takes connections and never answers: each login is a 503 within the
    // timeouts, and meanwhile (more logins waiting than the server has workers) anonymous
    // reads of the other repository are answered at once: the logins wait on the blocking
    // pool, not on a worker.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let silent_port = silent.local_addr().expect("addr").port();
    let hang = root.join("hang");
    Run::new(bin())
        .args(["admin", "create"])
        .arg(&hang)
        .success();
    std::fs::write(hang.join("conf/ldap-bind-password"), "bindsecret\n").expect("pw");
    std::fs::write(
        hang.join("conf/svnserve.conf"),
        format!(
            "[general]\nanon-access = read\nauth-access = write\n[ldap]\n\
             url = ldap://127.0.0.1:{silent_port}/{SUFFIX}\n\
             bind-dn = cn=svelto,ou=services,{SUFFIX}\n\
             bind-password-file = ldap-bind-password\ntimeout = 2\n"
        ),
    )
    .expect("conf");
    let waiting: Vec<_> = (0..12)
        .map(|i| {
            let addr = addr.clone();
            std::thread::spawn(move || {
                let started = Instant::now();
                let user = format!("user{i}");
                let (code, text) = status(&addr, "/svn/hang", Some((&user, "pw")));
                (code, text, started.elapsed())
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    for _ in 0..8 {
        let started = Instant::now();
        assert_eq!(status(&addr, "/svn/repo/trunk", None).0, 207);
        let took = started.elapsed();
        assert!(
            took < Duration::from_millis(1500),
            "an anonymous read took {took:?}"
        );
    }
    for w in waiting {
        let (code, text, took) = w.join().expect("thread");
        assert_eq!(code, 503, "{text}");
        assert!(text.contains("timeout"), "{text}");
        assert!(took < Duration::from_secs(8), "a login waited {took:?}");
    }
    drop(silent);
    drop(server);
}
