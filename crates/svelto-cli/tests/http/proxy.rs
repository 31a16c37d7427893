//! nginx (Debian's package) in front of Svelto's plain HTTP, terminating TLS and doing the
//! logins itself (`auth_basic`), passing the user on in `X-Remote-User` from 127.0.0.2
//! (`proxy_bind`), which Svelto believes because it is started with `--http-user-header
//! X-Remote-User --http-trusted-proxy 127.0.0.2`: the stock client checks out, updates,
//! lists and reads logs through `https://` as it does from Apache, the user nginx names is
//! the authz user, and the same header sent straight to Svelto from another address is
//! ignored.

use std::path::{Path, PathBuf};

use svelto_testkit::nginx::Nginx;
use svelto_testkit::Pair;

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_svelto"))
}

const TRUST: &str = "--trust-server-cert-failures=unknown-ca,cn-mismatch";

#[test]
fn nginx_terminates_tls_and_names_the_user() {
    let pair = Pair::http_with(
        "basic",
        &bin(),
        "",
        &[
            "--http-user-header",
            "X-Remote-User",
            "--http-trusted-proxy",
            "127.0.0.2",
        ],
        None,
    );
    let dir = pair.dir().join("nginx");
    std::fs::create_dir_all(&dir).expect("nginx dir");
    let (cert, key) = crate::self_signed(&dir, "svelto-proxy-test");
    let htpasswd = dir.join("htpasswd");
    crate::htpasswd(
        &htpasswd,
        &[
            ("harry", "harryssecret", "-m"),
            ("sally", "sallyssecret", "-m"),
        ],
    );
    // Svelto: nobody anonymous, trunk/a hidden from harry.
    let conf = pair.subject_repo().join("conf");
    std::fs::write(
        conf.join("svnserve.conf"),
        "[general]\nanon-access = none\nauth-access = write\nauthz-db = authz\n",
    )
    .expect("svnserve.conf");
    std::fs::write(conf.join("authz"), "[/]\n* = r\n[/trunk/a]\nharry =\n").expect("authz");

    let svelto_port = pair.subject().port();
    let nginx = Nginx::start(
        &dir,
        &format!(
            "    listen 127.0.0.1:{{PORT}} ssl;\n    ssl_certificate {cert};\n    \
             ssl_certificate_key {key};\n    location /svn/ {{\n      \
             auth_basic \"Svelto behind nginx\";\n      auth_basic_user_file {htpasswd};\n      \
             proxy_pass http://127.0.0.1:{svelto_port};\n      proxy_bind 127.0.0.2;\n      \
             proxy_set_header X-Remote-User $remote_user;\n      \
             proxy_set_header Authorization \"\";\n      proxy_http_version 1.1;\n      \
             proxy_set_header Connection \"\";\n      client_max_body_size 0;\n      \
             proxy_request_buffering off;\n      proxy_buffering off;\n    }}",
            cert = cert.display(),
            key = key.display(),
            htpasswd = htpasswd.display(),
        ),
    );
    let proxied = format!("https://127.0.0.1:{}/svn/basic", nginx.port());
    let client = pair.client();
    let s = pair.scope("proxy");
    let svn = |side: usize, args: &[&str]| {
        let out = client.svn(args, &s.path(side));
        assert!(
            out.success(),
            "svn {args:?} failed:\n{}\n(nginx log: {})",
            out.stderr_text(),
            std::fs::read_to_string(dir.join("nginx-error.log")).unwrap_or_default()
        );
        out.stdout_text()
    };
    let as_sally = ["--username", "sally", "--password", "sallyssecret", TRUST];
    let as_harry = ["--username", "harry", "--password", "harryssecret", TRUST];

    // Through nginx as sally: the same working copy as from Apache directly.
    let apache = pair.reference_url();
    svn(
        0,
        &["checkout", "-r", "1", &format!("{apache}/trunk"), "wc"],
    );
    let mut co = vec!["checkout"];
    co.extend_from_slice(&as_sally);
    co.extend(["-r", "1"]);
    let trunk = format!("{proxied}/trunk");
    co.extend([trunk.as_str(), "wc"]);
    svn(1, &co);
    svn(0, &["update", "wc"]);
    let mut up = vec!["update"];
    up.extend_from_slice(&as_sally);
    up.push("wc");
    svn(1, &up);
    s.compare_tree("wc");
    let log_direct = svn(0, &["log", "-v", &apache]);
    let mut log = vec!["log"];
    log.extend_from_slice(&as_sally);
    log.extend(["-v", proxied.as_str()]);
    assert_eq!(svn(1, &log), log_direct);

    // The user nginx names is the authz user: harry does not see trunk/a, sally does.
    let ls = |who: &[&str]| {
        let mut args = vec!["ls"];
        args.extend_from_slice(who);
        args.push(&trunk);
        svn(1, &args)
    };
    assert!(ls(&as_sally).lines().any(|l| l == "a/"));
    assert!(!ls(&as_harry).lines().any(|l| l == "a/"));
    // Without credentials nginx refuses; a wrong password too.
    let out = client.svn(&["ls", TRUST, &trunk], &s.path(1));
    assert!(!out.success());
    let out = client.svn(
        &[
            "ls",
            "--username",
            "sally",
            "--password",
            "nope",
            TRUST,
            &trunk,
        ],
        &s.path(1),
    );
    assert!(!out.success());

    // Straight to Svelto from 127.0.0.1 (not a trusted proxy), the header is ignored:
    // anonymous, and anon-access = none.
    let (status, _) = crate::raw_request(
        &format!("127.0.0.1:{svelto_port}"),
        "PROPFIND",
        "/svn/basic/trunk",
        &[b"X-Remote-User: sally", b"Depth: 0"],
        b"",
    );
    assert_eq!(status, 403);
    assert!(Path::new(&dir.join("nginx-access.log")).is_file());
}

/// nginx in `dir` terminating TLS in front of the plain HTTP server on `backend` and
/// passing every request on as it came (logins included). With `rewrite_destination`,
/// COPY's and MOVE's `Destination:` (the proxy's `https://` URL, as the client sends it)
/// is rewritten to the backend's `http://` URL, nginx's form of the `RequestHeader edit
/// Destination ^https: http: early` that Apache behind a TLS proxy needs.
fn tls_proxy(
    dir: &Path,
    cert: &Path,
    key: &Path,
    backend: u16,
    rewrite_destination: bool,
) -> Nginx {
    std::fs::create_dir_all(dir).expect("nginx dir");
    let rewrite = if rewrite_destination {
        format!(
            "      set $dest $http_destination;\n      \
             if ($http_destination ~ \"^https://[^/]+(/.*)$\") {{ set $dest \"http://127.0.0.1:{backend}$1\"; }}\n      \
             proxy_set_header Destination $dest;\n"
        )
    } else {
        String::new()
    };
    Nginx::start(
        dir,
        &format!(
            "    listen 127.0.0.1:{{PORT}} ssl;\n    ssl_certificate {cert};\n    \
             ssl_certificate_key {key};\n    location /svn/ {{\n      \
             proxy_pass http://127.0.0.1:{backend};\n{rewrite}      \
             proxy_http_version 1.1;\n      proxy_set_header Connection \"\";\n      \
             client_max_body_size 0;\n      proxy_request_buffering off;\n      \
             proxy_buffering off;\n    }}",
            cert = cert.display(),
            key = key.display(),
        ),
    )
}

/// Commits through nginx terminating TLS, against Apache behind the same nginx: the
/// branch, merge, tag and URL-to-URL copy and move session of the commit suite, every
/// output compared and the dumps at the end. `svn cp`/`mv` URL to URL send COPY with a
/// `Destination:` naming the proxy's `https://` URL: Svelto takes the path from it and
/// commits; Apache needs the header rewritten to its own scheme (without it mod_dav
/// answers 502 "Destination URI refers to different scheme or port", checked here too).
/// (The client trusts the certificate through its `servers` file: the sessions pass no
/// flags.)
#[test]
fn commits_and_url_copies_through_nginx() {
    let mut pair = crate::commit::writable_http_pair("basic");
    let dir = pair.dir().join("nginx-commits");
    std::fs::create_dir_all(&dir).expect("nginx dir");
    // For 127.0.0.1 (CN and subjectAltName), so a client given it as an authority trusts
    // it without flags (the commit sessions pass none).
    let (cert, key) = crate::self_signed_with(
        &dir,
        "127.0.0.1",
        &["-addext", "subjectAltName=IP:127.0.0.1"],
    );
    std::fs::write(
        pair.client().config_dir().join("servers"),
        format!("[global]\nssl-authority-files = {}\n", cert.display()),
    )
    .expect("the client's servers file");
    let (apache_port, svelto_port) = (pair.reference().port(), pair.subject().port());
    let to_apache = tls_proxy(&dir.join("apache"), &cert, &key, apache_port, true);
    let to_svelto = tls_proxy(&dir.join("svelto"), &cert, &key, svelto_port, false);
    let plain_to_apache = tls_proxy(&dir.join("apache-plain"), &cert, &key, apache_port, false);
    let proxied = |port: u16| format!("https://127.0.0.1:{port}/svn");
    pair.route_through(0, &proxied(to_apache.port()));
    pair.route_through(1, &proxied(to_svelto.port()));
    crate::sessions::branch_merge_tag_and_url_operations(&pair);

    // The same copy through the proxy that leaves Destination alone: Apache refuses it
    // (the reason admins add the rewrite), Svelto commits it.
    let s = pair.scope("nginx-plain");
    let copy = |base: String| {
        let url = format!("{base}/{}", pair.name());
        pair.client().svn(
            &[
                "copy",
                "-m",
                "copy",
                &format!("{url}/p/trunk"),
                &format!("{url}/p/tags/plain"),
            ],
            &s.path(0),
        )
    };
    let apache = copy(proxied(plain_to_apache.port()));
    assert!(
        !apache.success(),
        "Apache took a Destination naming another scheme"
    );
    // mod_dav's "Destination URI refers to different scheme or port" is a 502, which the
    // client reports by its status alone.
    assert!(
        apache
            .stderr_text()
            .contains("Unexpected HTTP status 502 'Bad Gateway'"),
        "Apache's refusal: {}",
        apache.stderr_text()
    );
    let svelto = copy(proxied(to_svelto.port()));
    assert!(
        svelto.success(),
        "svn copy through nginx failed: {}",
        svelto.stderr_text()
    );
}
