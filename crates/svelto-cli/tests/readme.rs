//! README.md's "First steps" as a newcomer pastes them: its first three shell blocks
//! (create a repository and serve it; allow commits by adding a user to `conf/passwd`;
//! serve over HTTP, first with that same password file, then with an htpasswd file) run
//! with bash as written, then the stock svn commits as the README's user over svn:// and
//! http://. What the test changes, and only through the environment the blocks run in:
//! `/srv/svelto` and `/etc/svelto` become directories of its own (the text substituted);
//! `sudo` runs its command; `svelto` is the binary under test, and each `svelto serve`
//! first stops the server the block before started (as the README says to) and listens on
//! free ports in place of 3690 and 8080; `svn` is the stock client, non-interactive, with
//! those ports put in its URLs; `htpasswd` is Apache's, given the password on its command
//! line in place of the prompt.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use svelto_testkit::{free_port, tempdir};

/// The `sh` blocks of README.md's "## First steps" section, in order.
fn first_steps_blocks() -> Vec<String> {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md"))
        .expect("README.md");
    let start = readme
        .find("\n## First steps\n")
        .expect("README.md has a '## First steps' section");
    let section = &readme[start + 1..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |e| e + 3)];
    let mut blocks = Vec::new();
    let mut rest = section;
    while let Some(open) = rest.find("```sh\n") {
        let body = &rest[open + 6..];
        let close = body.find("\n```").expect("a closed ```sh block");
        blocks.push(body[..close + 1].to_owned());
        rest = &body[close + 4..];
    }
    blocks
}

struct Steps {
    dir: tempfile::TempDir,
    prelude: String,
}

impl Steps {
    fn new() -> Steps {
        let dir = tempdir();
        let t = dir.path().display().to_string();
        let bin = PathBuf::from(env!("CARGO_BIN_EXE_svelto"));
        let (svn_port, http_port) = (free_port(), free_port());
        let prelude = format!(
            r#"set -euo pipefail
export HOME='{t}/home' T='{t}'
mkdir -p "$HOME"
sudo() {{ "$@"; }}
htpasswd() {{ command htpasswd -b "$@" apache-secret; }}
stop_server() {{
    if [ -f "$T/pid" ]; then
        pid=$(cat "$T/pid"); rm -f "$T/pid"; kill "$pid" 2>/dev/null || true
        for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    fi
}}
svelto() {{
    if [ "$1" != serve ]; then '{bin}' "$@"; return; fi
    shift; stop_server
    local a args=()
    for a in "$@"; do
        case $a in 0.0.0.0:8080|0.0.0.0:8443) a=127.0.0.1:{http_port};; esac
        args+=("$a")
    done
    '{bin}' serve "${{args[@]}}" --listen-host 127.0.0.1 --listen-port {svn_port} \
        --pid-file "$T/pid" --log-file "$T/serve.log" 2>>"$T/serve.err"
    for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/{svn_port}) 2>/dev/null && return; sleep 0.1; done
    echo "svelto serve did not listen" >&2; return 1
}}
svn() {{
    local a args=()
    for a in "$@"; do
        a=${{a//svn:\/\/localhost\//svn://localhost:{svn_port}/}}
        a=${{a//http:\/\/localhost:8080\//http://localhost:{http_port}/}}
        args+=("$a")
    done
    command svn --non-interactive --no-auth-cache --config-dir "$T/svn-config" "${{args[@]}}"
}}
"#,
            bin = bin.display()
        );
        Steps { dir, prelude }
    }

    fn t(&self) -> &Path {
        self.dir.path()
    }

    /// Runs `script` (README text) with bash after the prelude, in the test's directory.
    fn bash(&self, script: &str) -> Output {
        let script = script
            .replace("/srv/svelto", &format!("{}/srv", self.t().display()))
            .replace("/etc/svelto", &format!("{}/etc", self.t().display()));
        Command::new("bash")
            .current_dir(self.t())
            .arg("-c")
            .arg(format!("{}{script}", self.prelude))
            .output()
            .expect("bash")
    }

    fn ok(&self, what: &str, script: &str) -> String {
        let out = self.bash(script);
        let err = std::fs::read_to_string(self.t().join("serve.err")).unwrap_or_default();
        assert!(
            out.status.success(),
            "{what}: {script}\nstdout: {}\nstderr: {}\nserver: {err}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn fails(&self, what: &str, script: &str) {
        let out = self.bash(script);
        assert!(!out.status.success(), "{what} succeeded: {script}");
    }
}

impl Drop for Steps {
    fn drop(&mut self) {
        let _ = self.bash("stop_server");
    }
}

#[test]
fn readme_first_steps_work_as_written() {
    let blocks = first_steps_blocks();
    assert!(blocks.len() >= 3, "README's First steps: {blocks:?}");
    let (create, users, http) = (&blocks[0], &blocks[1], &blocks[2]);
    assert!(create.contains("svelto admin create"), "{create}");
    assert!(users.contains("passwd"), "{users}");
    assert!(http.contains("--http-listen"), "{http}");
    let steps = Steps::new();

    // Create and serve: anyone reads, nobody writes yet.
    steps.ok("create a repository and serve it", create);
    steps.fails(
        "an anonymous commit",
        "svn mkdir -m m svn://localhost/project/anon",
    );
    // Add a user: the README's svn mkdir commits as alice.
    steps.ok("allow commits: add users", users);
    let log = steps.ok("svn log", "svn log -q svn://localhost/project");
    assert!(log.contains("r1 | alice |"), "{log}");

    // Serve over HTTP: the same passwd line logs in over http://, then an htpasswd file
    // wins over it.
    let (same_users, htpasswd) = http
        .split_once("\nhtpasswd ")
        .map(|(a, b)| (a.to_owned(), format!("htpasswd {b}")))
        .expect("the HTTP block adds an htpasswd user");
    steps.ok("serve over HTTP with passwd", &same_users);
    let commit = |password: &str, name: &str| {
        format!(
            "cd wc && svn revert -q -R . && echo {name} > {name} && svn add -q {name} && \
             svn commit -q -m \"add {name}\" --username alice --password {password}"
        )
    };
    steps.ok("alice commits over http://", &commit("secret", "one"));
    steps.ok(
        "alice commits over svn://",
        "svn mkdir -m two --username alice --password secret svn://localhost/project/two",
    );
    steps.ok("serve over HTTP with an htpasswd file", &htpasswd);
    steps.fails(
        "passwd's password over http:// with an htpasswd file",
        &commit("secret", "three"),
    );
    steps.ok(
        "alice commits over http:// with the htpasswd password",
        &commit("apache-secret", "four"),
    );
    let log = steps.ok("svn log", "svn log -q http://localhost:8080/project");
    assert_eq!(log.matches("| alice |").count(), 4, "{log}");
}
