//! The repository's build and test scripts: the build script watches only files that
//! exist (cargo reruns a build script, and relinks the binary, on every build while a file
//! it watches is missing); `scripts/suite-http.sh`'s nginx starts where Debian's nginx has
//! never run.

use std::path::Path;
use std::process::Command;

include!("../build_watch.rs");

fn git_in(dir: &Path) -> impl Fn(&[&str]) -> Option<String> + '_ {
    move |args: &[&str]| {
        let out = Command::new("git")
            .current_dir(dir)
            .args(args)
            .output()
            .ok()?;
        if !out.status.success() {
            return None;
        }
        let text = String::from_utf8(out.stdout).ok()?.trim().to_owned();
        // The build script runs in its package's directory: `--git-path`'s answers are
        // relative to it.
        if args.contains(&"--git-path") {
            Some(dir.join(text).display().to_string())
        } else {
            Some(text)
        }
    }
}

fn run(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@localhost"])
        .args(args)
        .output()
        .expect("git (scripts/setup installs it)");
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

#[test]
fn only_existing_ref_files_are_watched() {
    let d = tempfile::tempdir().expect("tempdir");
    let dir = d.path();
    run(dir, &["init", "-q", "-b", "main"]);
    run(dir, &["commit", "-q", "--allow-empty", "-m", "one"]);
    assert!(!dir.join(".git/packed-refs").exists());
    let git = git_in(dir);
    let seen = |paths: Vec<String>| -> Vec<String> {
        paths
            .iter()
            .map(|p| {
                p.strip_prefix(&format!("{}/", dir.display()))
                    .unwrap_or(p)
                    .to_owned()
            })
            .collect()
    };
    // No packed-refs yet: HEAD and the branch's own file.
    let w = watched(&git);
    assert!(w.iter().all(|p| Path::new(p).exists()), "{w:?}");
    assert_eq!(seen(w), [".git/HEAD", ".git/refs/heads/main"]);
    // Packed: the branch lives only in packed-refs.
    run(dir, &["pack-refs", "--all"]);
    assert!(!dir.join(".git/refs/heads/main").exists());
    assert_eq!(seen(watched(&git)), [".git/HEAD", ".git/packed-refs"]);
    // Outside a checkout: nothing.
    let none = tempfile::tempdir().expect("tempdir");
    assert!(watched(git_in(none.path())).is_empty());
}

/// The nginx configuration `scripts/suite-http.sh` writes, as the script expands it, is
/// accepted by the real nginx (`nginx -t`) run as the user the script runs it as (`daemon`
/// when root) on a machine whose nginx has never run: every temporary path nginx has
/// compiled in (`/var/lib/nginx/*`, which that user cannot create) is set in the file.
#[test]
fn suite_http_nginx_sets_every_temporary_path() {
    let nginx = svelto_testkit::require_tool("nginx");
    let script = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scripts/suite-http.sh"
    ))
    .expect("scripts/suite-http.sh");
    let start = script
        .find("cat > \"$cfg/nginx.conf\" <<EOF\n")
        .expect("the script writes nginx.conf with a here-document");
    let body = &script[start..];
    let end = body.find("\nEOF\n").expect("the here-document ends");
    let heredoc = &body[..end + 5];

    let d = tempfile::tempdir().expect("tempdir");
    let cfg = d.path().join("cfg");
    std::fs::create_dir(&cfg).expect("mkdir");
    use std::os::unix::fs::PermissionsExt;
    for p in [d.path(), &cfg] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    }
    // The script's variables, then its here-document as it wrote it.
    // nginx -t binds the ports it is to listen on: a free one.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let expand = format!(
        "cfg={}; port={port}; pa={port}; pb={port}\n{heredoc}",
        cfg.display()
    );
    let out = Command::new("bash")
        .arg("-c")
        .arg(&expand)
        .output()
        .expect("bash");
    assert!(out.status.success(), "{out:?}");
    let conf = std::fs::read_to_string(cfg.join("nginx.conf")).expect("nginx.conf");
    let defaults = Command::new(&nginx).arg("-V").output().expect("nginx -V");
    let built = String::from_utf8_lossy(&defaults.stderr).into_owned();
    let compiled: Vec<&str> = built
        .split_whitespace()
        .filter_map(|o| o.strip_prefix("--http-")?.split_once("-temp-path="))
        .map(|(what, _)| what)
        .collect();
    assert!(compiled.len() >= 5, "nginx -V names {compiled:?}");
    for what in compiled {
        let directive = format!("{}_temp_path {}/", what.replace('-', "_"), cfg.display());
        assert!(conf.contains(&directive), "no `{directive}` in:\n{conf}");
    }
    let mut check = if rustix::process::geteuid().is_root() {
        let mut c = Command::new("runuser");
        c.args(["-u", "daemon", "--"]).arg(&nginx);
        c
    } else {
        Command::new(&nginx)
    };
    let out = check
        .args(["-t", "-e", "stderr", "-c"])
        .arg(cfg.join("nginx.conf"))
        .output()
        .expect("nginx -t");
    assert!(
        out.status.success(),
        "nginx -t refused the configuration:\n{}\n{conf}",
        String::from_utf8_lossy(&out.stderr)
    );
}
