//! Hook scripts, with Subversion's contract (`svn_repos.h`, the templates `svnadmin create`
//! writes): `REPO/hooks/NAME` runs with the documented arguments and standard input, an
//! empty environment unless the hooks-env file gives one, standard output discarded and
//! standard error captured. A pre-hook that exits non-zero blocks the operation with its
//! standard error in the message; a post-hook that fails only produces a warning.
//!
//! A hook's output is read with a bound: at most [`OUTPUT_MAX`] bytes of each stream are
//! kept (the rest is read and dropped), and once the hook has exited its pipes are read for
//! at most [`OUTPUT_GRACE`] more: a background child the hook left holding standard error
//! does not hold up the operation (Subversion reads to the end of the pipe, and waits for
//! the child).

use crate::error::{ReposError, Result, SvnErrorKind};
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use svelto_core::Revnum;

/// Most bytes of a hook's standard output, and of its standard error, kept.
pub const OUTPUT_MAX: usize = 1 << 20;
/// After a hook exits, how long its output pipes are read before what came is taken.
pub const OUTPUT_GRACE: Duration = Duration::from_millis(500);

/// A hook's output pipe, read on its own thread into a bounded buffer.
struct Collector {
    buf: Arc<Mutex<Vec<u8>>>,
    done: mpsc::Receiver<()>,
}

impl Collector {
    fn start(mut pipe: impl Read + Send + 'static) -> Collector {
        let buf = Arc::new(Mutex::new(Vec::new()));
        let (tx, done) = mpsc::channel();
        let shared = Arc::clone(&buf);
        // The thread ends when every holder of the pipe's write end has closed it.
        std::thread::spawn(move || {
            let mut chunk = [0u8; 8192];
            loop {
                match pipe.read(&mut chunk) {
                    Ok(0) => break,
                    Ok(n) => {
                        let mut b = shared.lock().unwrap_or_else(|e| e.into_inner());
                        let room = OUTPUT_MAX.saturating_sub(b.len()).min(n);
                        b.extend_from_slice(&chunk[..room]);
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
            let _ = tx.send(());
        });
        Collector { buf, done }
    }

    /// What came, once the pipe closed or `OUTPUT_GRACE` after the hook exited.
    fn take(self) -> Vec<u8> {
        let _ = self.done.recv_timeout(OUTPUT_GRACE);
        std::mem::take(&mut *self.buf.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// The section of a hooks-env file that applies to hooks without their own.
const DEFAULT_SECTION: &str = "default";

/// The hooks of one repository.
#[derive(Debug, Clone)]
pub struct Hooks {
    /// The repository's directory (None: a repository without one runs no hooks).
    repo: Option<PathBuf>,
    /// Hooks-env sections: hook name (or "default") -> variables.
    env: BTreeMap<String, BTreeMap<String, String>>,
}

fn hook_failure(message: String) -> ReposError {
    ReposError::svn(SvnErrorKind::HookFailure, message)
}

/// Parses a hooks-env file: Subversion's configuration syntax (`[section]`, `name = value`
/// or `name: value`, `#` comments, continuation lines that start with white space).
pub fn parse_hooks_env(
    text: &str,
    file: &Path,
) -> Result<BTreeMap<String, BTreeMap<String, String>>> {
    let mut out: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    let mut section: Option<String> = None;
    let mut last: Option<String> = None;
    for (i, line) in text.lines().enumerate() {
        let bad = |why: &str| {
            ReposError::svn(
                SvnErrorKind::BadConfig,
                format!("{}:{}: {why}", file.display(), i + 1),
            )
        };
        if line.trim().is_empty() || line.starts_with('#') {
            last = None;
            continue;
        }
        if line.starts_with([' ', '\t']) {
            // A continuation of the previous value.
            let (Some(sec), Some(key)) = (&section, &last) else {
                return Err(bad("continuation line without an option before it"));
            };
            if let Some(v) = out.get_mut(sec).and_then(|m| m.get_mut(key)) {
                v.push(' ');
                v.push_str(line.trim());
            }
            continue;
        }
        if let Some(rest) = line.strip_prefix('[') {
            let name = rest
                .trim_end()
                .strip_suffix(']')
                .ok_or_else(|| bad("section header without ']'"))?;
            section = Some(name.to_string());
            out.entry(name.to_string()).or_default();
            last = None;
            continue;
        }
        let Some(sec) = &section else {
            return Err(bad("option outside any section"));
        };
        let at = line
            .find([':', '='])
            .ok_or_else(|| bad("expected 'name = value'"))?;
        let key = line[..at].trim().to_string();
        let value = line[at + 1..].trim().to_string();
        out.entry(sec.clone())
            .or_default()
            .insert(key.clone(), value);
        last = Some(key);
    }
    Ok(expand_all(&out))
}

/// The section `%(name)s` also looks in when the option's own section lacks `name`
/// (Subversion's `SVN_CONFIG__DEFAULT_SECTION`; section names in hooks-env are case
/// sensitive, so this is not the `[default]` hook section).
const EXPANSION_DEFAULTS: &str = "DEFAULT";

/// Subversion's `%(name)s` expansion of every value: `name` from the same section, else
/// from `[DEFAULT]`; an unknown name stays as written; a value caught in a cycle is empty.
fn expand_all(
    raw: &BTreeMap<String, BTreeMap<String, String>>,
) -> BTreeMap<String, BTreeMap<String, String>> {
    raw.iter()
        .map(|(sec, opts)| {
            let expanded = opts
                .keys()
                .map(|k| {
                    let mut stack = Vec::new();
                    let v = expand_option(raw, sec, k, &mut stack).unwrap_or_default();
                    (k.clone(), v)
                })
                .collect();
            (sec.clone(), expanded)
        })
        .collect()
}

/// Whether names missing from `section` are looked up in `[DEFAULT]`: not from a section
/// whose name is `default` in any case (Subversion compares that one without case, so the
/// `[default]` hook section gets no fallback, as svnserve shows).
fn looks_in_defaults(section: &str) -> bool {
    !section.eq_ignore_ascii_case(EXPANSION_DEFAULTS)
}

/// The expanded value of option `name` as seen from `section` (`None`: a cycle).
fn expand_option(
    raw: &BTreeMap<String, BTreeMap<String, String>>,
    section: &str,
    name: &str,
    stack: &mut Vec<(String, String)>,
) -> Option<String> {
    let (found_in, value) = match raw.get(section).and_then(|o| o.get(name)) {
        Some(v) => (section, v),
        None if !looks_in_defaults(section) => return None,
        None => (
            EXPANSION_DEFAULTS,
            raw.get(EXPANSION_DEFAULTS).and_then(|o| o.get(name))?,
        ),
    };
    let key = (found_in.to_string(), name.to_string());
    if stack.contains(&key) {
        return None;
    }
    if !value.contains("%(") {
        return Some(value.clone());
    }
    stack.push(key);
    let mut out = String::new();
    let mut rest = value.as_str();
    while let Some(start) = rest.find("%(") {
        let after = &rest[start + 2..];
        let Some(end) = after.find(")s") else {
            break;
        };
        let inner = &after[..end];
        // Names resolve from the section the expansion started in, as Subversion does.
        let exists = raw.get(section).is_some_and(|o| o.contains_key(inner))
            || (looks_in_defaults(section)
                && raw
                    .get(EXPANSION_DEFAULTS)
                    .is_some_and(|o| o.contains_key(inner)));
        if exists {
            let sub = expand_option(raw, section, inner, stack)?;
            out.push_str(&rest[..start]);
            out.push_str(&sub);
        } else {
            out.push_str(&rest[..start + 2 + end + 2]);
        }
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    stack.pop();
    Some(out)
}

impl Hooks {
    /// The hooks of the repository at `repo`; `hooks_env` is the hooks-env file (default
    /// `REPO/conf/hooks-env`; a missing file means an empty environment).
    pub fn new(repo: &Path, hooks_env: Option<&Path>) -> Result<Hooks> {
        let file = match hooks_env {
            Some(p) => p.to_path_buf(),
            None => repo.join("conf").join("hooks-env"),
        };
        let env = match std::fs::read_to_string(&file) {
            Ok(text) => parse_hooks_env(&text, &file)?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => BTreeMap::new(),
            Err(e) => {
                return Err(ReposError::Io {
                    context: format!("reading {}", file.display()),
                    err: e,
                })
            }
        };
        Ok(Hooks {
            repo: Some(repo.to_path_buf()),
            env,
        })
    }

    /// The hooks of a repository kept where no hook program can be (a backend without a
    /// local directory): none runs.
    pub fn none() -> Hooks {
        Hooks {
            repo: None,
            env: BTreeMap::new(),
        }
    }

    /// The hook program, when the repository has one.
    fn program(&self, name: &str) -> Result<Option<PathBuf>> {
        let Some(repo) = &self.repo else {
            return Ok(None);
        };
        let p = repo.join("hooks").join(name);
        match std::fs::symlink_metadata(&p) {
            Err(_) => Ok(None),
            Ok(m) if m.file_type().is_symlink() && std::fs::metadata(&p).is_err() => {
                Err(hook_failure(format!(
                    "Failed to run '{}' hook; broken symlink",
                    p.display()
                )))
            }
            Ok(_) if std::fs::metadata(&p).is_ok_and(|m| m.is_file()) => Ok(Some(p)),
            Ok(_) => Ok(None),
        }
    }

    /// Whether the repository has hook `name`; an error where running it would fail to
    /// start it (a broken symlink).
    pub fn exists(&self, name: &str) -> Result<bool> {
        Ok(self.program(name)?.is_some())
    }

    /// Runs hook `name` if it exists: Ok(None) when there is none, else its standard output
    /// (when `want_stdout`) after a clean exit. `blocks` names what a failure blocks
    /// ("Commit", "Lock", ...), or None for post-hooks.
    fn run(
        &self,
        name: &str,
        args: &[&str],
        stdin: Option<&[u8]>,
        want_stdout: bool,
        blocks: Option<&str>,
    ) -> Result<Option<Vec<u8>>> {
        let Some(program) = self.program(name)? else {
            return Ok(None);
        };
        let vars = self
            .env
            .get(name)
            .or_else(|| self.env.get(DEFAULT_SECTION))
            .cloned()
            .unwrap_or_default();
        let mut cmd = Command::new(&program);
        cmd.arg(self.repo.as_deref().unwrap_or(Path::new("")))
            .args(args)
            .env_clear()
            .envs(vars)
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(if want_stdout {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().map_err(|e| ReposError::Wrapped {
            kind: SvnErrorKind::BadArgs,
            message: format!("Failed to start '{}' hook", program.display()),
            source: Box::new(ReposError::Internal(e.to_string())),
        })?;
        // Feed standard input from a thread: a hook may write before it reads.
        let feeder = match (stdin, child.stdin.take()) {
            (Some(bytes), Some(mut pipe)) => {
                let bytes = bytes.to_vec();
                Some(std::thread::spawn(move || {
                    let _ = pipe.write_all(&bytes);
                }))
            }
            _ => None,
        };
        let out_reader = child.stdout.take().map(Collector::start);
        let err_reader = child.stderr.take().map(Collector::start);
        let status = child.wait().map_err(|e| ReposError::Io {
            context: format!("waiting for the '{name}' hook"),
            err: e,
        })?;
        let stdout = out_reader.map(Collector::take).unwrap_or_default();
        let stderr = err_reader.map(Collector::take).unwrap_or_default();
        // A hook that exited without reading all its input: the feeder ends on the closed
        // pipe (or with the background child that holds it); it is not waited for.
        drop(feeder);
        if status.success() {
            return Ok(Some(stdout));
        }
        let mut message = match status.code() {
            None => format!("'{name}' hook failed (did not exit cleanly: killed by a signal).  "),
            Some(code) => match blocks {
                Some(action) => format!("{action} blocked by {name} hook (exit code {code})"),
                None => format!("{name} hook failed (exit code {code})"),
            },
        };
        let text = String::from_utf8_lossy(&stderr);
        if text.is_empty() {
            message.push_str(" with no output.");
        } else {
            message.push_str(" with output:\n");
            message.push_str(&text);
        }
        Err(hook_failure(message))
    }

    /// `start-commit REPOS USER CAPABILITIES TXN-NAME`.
    pub fn start_commit(&self, user: Option<&str>, capabilities: &str, txn: &str) -> Result<()> {
        self.run(
            "start-commit",
            &[user.unwrap_or(""), capabilities, txn],
            None,
            false,
            Some("Commit"),
        )?;
        Ok(())
    }

    /// `pre-commit REPOS TXN-NAME`, the lock tokens on standard input (`LOCK-TOKENS:`
    /// then `path|token` lines and an empty line) when the commit carries any. The paths
    /// are written URI-escaped as the front end registered them (svn://: as the client sent
    /// them, relative to its session URL).
    pub fn pre_commit(&self, txn: &str, lock_tokens: &[(String, String)]) -> Result<()> {
        let stdin = if lock_tokens.is_empty() {
            Vec::new()
        } else {
            let mut s = String::from("LOCK-TOKENS:\n");
            for (path, token) in lock_tokens {
                s.push_str(&format!("{}|{token}\n", uri_autoescape(path)));
            }
            s.push('\n');
            s.into_bytes()
        };
        self.run("pre-commit", &[txn], Some(&stdin), false, Some("Commit"))?;
        Ok(())
    }

    /// `post-commit REPOS REV TXN-NAME`: a failure is returned as the warning the client
    /// shows (the commit stands).
    pub fn post_commit(&self, rev: Revnum, txn: &str) -> Option<String> {
        match self.run("post-commit", &[&rev.to_string(), txn], None, false, None) {
            Ok(_) => None,
            Err(e) => Some(e.to_string()),
        }
    }

    /// `pre-revprop-change REPOS REV USER PROPNAME ACTION`, the new value on standard
    /// input. Without the hook, revision properties cannot change at all.
    pub fn pre_revprop_change(
        &self,
        rev: Revnum,
        user: Option<&str>,
        name: &str,
        action: char,
        new_value: Option<&[u8]>,
    ) -> Result<()> {
        let ran = self.run(
            "pre-revprop-change",
            &[
                &rev.to_string(),
                user.unwrap_or(""),
                name,
                &action.to_string(),
            ],
            Some(new_value.unwrap_or(b"")),
            false,
            Some("Revprop change"),
        )?;
        if ran.is_none() {
            return Err(ReposError::svn(
                SvnErrorKind::DisabledFeature,
                "Repository has not been enabled to accept revision propchanges;\nask the \
                 administrator to create a pre-revprop-change hook",
            ));
        }
        Ok(())
    }

    /// `post-revprop-change REPOS REV USER PROPNAME ACTION`, the old value on standard
    /// input.
    pub fn post_revprop_change(
        &self,
        rev: Revnum,
        user: Option<&str>,
        name: &str,
        action: char,
        old_value: Option<&[u8]>,
    ) -> Result<()> {
        self.run(
            "post-revprop-change",
            &[
                &rev.to_string(),
                user.unwrap_or(""),
                name,
                &action.to_string(),
            ],
            Some(old_value.unwrap_or(b"")),
            false,
            None,
        )?;
        Ok(())
    }

    /// `pre-lock REPOS PATH USER COMMENT STEAL-LOCK-FLAG`; its standard output, if any, is
    /// the token the lock must get, byte for byte as Subversion takes it (a trailing newline
    /// is part of it, and makes the token fail [`crate::locks::check_token`]).
    pub fn pre_lock(
        &self,
        path: &str,
        user: &str,
        comment: &str,
        steal: bool,
    ) -> Result<Option<String>> {
        let out = self.run(
            "pre-lock",
            &[
                &format!("/{path}"),
                user,
                comment,
                if steal { "1" } else { "0" },
            ],
            None,
            true,
            Some("Lock"),
        )?;
        Ok(out
            .map(|o| String::from_utf8_lossy(&o).into_owned())
            .filter(|t| !t.is_empty()))
    }

    /// `post-lock REPOS USER`, the locked paths on standard input, one per line.
    pub fn post_lock(&self, user: &str, paths: &[String]) -> Result<()> {
        let stdin: String = paths.iter().map(|p| format!("/{p}\n")).collect();
        self.run("post-lock", &[user], Some(stdin.as_bytes()), false, None)?;
        Ok(())
    }

    /// `pre-unlock REPOS PATH USER TOKEN BREAK-UNLOCK-FLAG`.
    pub fn pre_unlock(&self, path: &str, user: &str, token: &str, brk: bool) -> Result<()> {
        self.run(
            "pre-unlock",
            &[
                &format!("/{path}"),
                user,
                token,
                if brk { "1" } else { "0" },
            ],
            None,
            false,
            Some("Unlock"),
        )?;
        Ok(())
    }

    /// `post-unlock REPOS USER`, the unlocked paths on standard input.
    pub fn post_unlock(&self, user: &str, paths: &[String]) -> Result<()> {
        let stdin: String = paths.iter().map(|p| format!("/{p}\n")).collect();
        self.run("post-unlock", &[user], Some(stdin.as_bytes()), false, None)?;
        Ok(())
    }
}

/// Escapes what a URI path may not hold (Subversion's `svn_path_uri_autoescape`: spaces,
/// control characters, and the few characters URIs reserve).
fn uri_autoescape(path: &str) -> String {
    let mut out = Vec::with_capacity(path.len());
    for &b in path.as_bytes() {
        let escape = b <= b' '
            || b == 0x7f
            || matches!(
                b,
                b'"' | b'<' | b'>' | b'\\' | b'^' | b'`' | b'{' | b'|' | b'}'
            );
        if escape {
            out.extend_from_slice(format!("%{b:02X}").as_bytes());
        } else {
            out.push(b);
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo_with_hook(name: &str, script: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join("hooks")).expect("hooks");
        let p = dir.path().join("hooks").join(name);
        std::fs::write(&p, script).expect("write");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        dir
    }

    #[test]
    fn hooks_get_arguments_stdin_and_an_empty_environment() {
        let dir = repo_with_hook(
            "pre-revprop-change",
            "#!/bin/sh\necho \"$# $2 $3 $4 $5 [$(cat)] [$(env | grep -v '^PWD=\\|^SHLVL=\\|^_=' | tr '\\n' ' ')]\" >&2\nexit 1\n",
        );
        let hooks = Hooks::new(dir.path(), None).expect("hooks");
        let err = hooks
            .pre_revprop_change(7, Some("alice"), "svn:log", 'M', Some(b"new log"))
            .expect_err("the hook exits 1");
        assert_eq!(
            err.to_string(),
            "Revprop change blocked by pre-revprop-change hook (exit code 1) with output:\n\
             5 7 alice svn:log M [new log] []\n"
        );
    }

    #[test]
    fn hooks_env_gives_variables_per_hook_or_by_default() {
        let dir = repo_with_hook("post-commit", "#!/bin/sh\necho \"A=$A B=$B\" >&2\nexit 3\n");
        std::fs::create_dir_all(dir.path().join("conf")).expect("conf");
        std::fs::write(
            dir.path().join("conf/hooks-env"),
            "# comment\n[default]\nA = from default\n[post-commit]\nB: for\n  post-commit\n",
        )
        .expect("write");
        let hooks = Hooks::new(dir.path(), None).expect("hooks");
        assert_eq!(
            hooks.post_commit(3, "2-1").as_deref(),
            Some("post-commit hook failed (exit code 3) with output:\nA= B=for post-commit\n")
        );
    }

    #[test]
    fn hooks_env_expands_names_like_subversions_config() {
        let text = "[DEFAULT]\nROOT = /opt/tools\n\
                    [default]\nPATH = %(ROOT)s/bin:/usr/bin\nLANG = C\n\
                    [pre-commit]\nBASE = /srv\nPATH = %(BASE)s/bin:%(ROOT)s/bin\n\
                    KEEP = %(nope)s and 100%\nA = %(B)s\nB = x%(A)s\n";
        let env = parse_hooks_env(text, Path::new("hooks-env")).expect("parses");
        let pc = &env["pre-commit"];
        assert_eq!(pc["PATH"], "/srv/bin:/opt/tools/bin");
        assert_eq!(pc["KEEP"], "%(nope)s and 100%");
        assert_eq!(pc["A"], "");
        assert_eq!(pc["B"], "");
        // From `[default]` (any case), names are not looked up in `[DEFAULT]`.
        assert_eq!(env["default"]["PATH"], "%(ROOT)s/bin:/usr/bin");
        // `[default]` is a hook section, not where expansions look.
        let env = parse_hooks_env(
            "[default]\nX = 1\n[post-commit]\nY = %(X)s\n",
            Path::new("f"),
        )
        .expect("parses");
        assert_eq!(env["post-commit"]["Y"], "%(X)s");
    }

    #[test]
    fn a_background_child_holding_stderr_does_not_hold_up_the_hook() {
        // The hook exits at once; the child it leaves keeps its standard error open.
        for (exit, want_err) in [(0, false), (1, true)] {
            let dir = repo_with_hook(
                "pre-commit",
                &format!("#!/bin/sh\necho refused >&2\nsleep 5 &\nexit {exit}\n"),
            );
            let hooks = Hooks::new(dir.path(), None).expect("hooks");
            let started = std::time::Instant::now();
            let result = hooks.pre_commit("1-1", &[]);
            let took = started.elapsed();
            assert!(took < Duration::from_secs(3), "the hook took {took:?}");
            match result {
                Err(e) if want_err => assert_eq!(
                    e.to_string(),
                    "Commit blocked by pre-commit hook (exit code 1) with output:\nrefused\n"
                ),
                Ok(()) if !want_err => {}
                other => panic!("exit {exit}: {other:?}"),
            }
        }
    }

    #[test]
    fn hook_output_is_kept_up_to_a_bound() {
        let dir = repo_with_hook(
            "pre-commit",
            "#!/bin/sh\nhead -c 3000000 /dev/zero | tr '\\0' x >&2\nexit 1\n",
        );
        let hooks = Hooks::new(dir.path(), None).expect("hooks");
        let err = hooks.pre_commit("1-1", &[]).expect_err("exit 1");
        let text = err.to_string();
        assert!(text.len() < OUTPUT_MAX + 200, "{} bytes", text.len());
        assert!(text.ends_with(&"x".repeat(1000)));
    }

    #[test]
    fn a_missing_pre_revprop_change_hook_refuses_and_silent_failures_say_so() {
        let dir = tempfile::tempdir().expect("tempdir");
        let hooks = Hooks::new(dir.path(), None).expect("hooks");
        let err = hooks
            .pre_revprop_change(1, None, "svn:log", 'M', None)
            .expect_err("no hook");
        assert!(err
            .to_string()
            .starts_with("Repository has not been enabled"));
        assert!(hooks.start_commit(None, "", "1-1").is_ok());
        let dir = repo_with_hook("start-commit", "#!/bin/sh\nexit 2\n");
        let hooks = Hooks::new(dir.path(), None).expect("hooks");
        let err = hooks
            .start_commit(Some("bob"), "mergeinfo", "1-1")
            .expect_err("exit 2");
        assert_eq!(
            err.to_string(),
            "Commit blocked by start-commit hook (exit code 2) with no output."
        );
    }

    #[test]
    fn pre_lock_output_is_the_token() {
        let dir = repo_with_hook("pre-lock", "#!/bin/sh\nprintf opaquelocktoken:custom\n");
        let hooks = Hooks::new(dir.path(), None).expect("hooks");
        assert_eq!(
            hooks
                .pre_lock("a b", "alice", "", false)
                .expect("runs")
                .as_deref(),
            Some("opaquelocktoken:custom")
        );
        assert_eq!(uri_autoescape("/a b|c"), "/a%20b%7Cc");
    }
}
