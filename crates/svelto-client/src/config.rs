//! The stock client's runtime configuration, as far as Svelto reads it: the `config` file
//! of `/etc/subversion`, then of the configuration directory (`--config-dir`, else
//! `~/.subversion`), the later file's value winning, as svn reads them.

use std::path::Path;

/// The value of `option` in `[section]` of the configuration (None: set nowhere).
pub fn option(config_dir: Option<&Path>, section: &str, option: &str) -> Option<String> {
    let user = config_dir
        .map(Path::to_path_buf)
        .or_else(crate::auth::default_config_dir);
    let mut value = None;
    for dir in [Some(Path::new("/etc/subversion").to_path_buf()), user]
        .into_iter()
        .flatten()
    {
        if let Ok(text) = std::fs::read(dir.join("config")) {
            if let Some(v) =
                crate::tunnel::config_value(&String::from_utf8_lossy(&text), section, option)
            {
                value = Some(v);
            }
        }
    }
    value
}

/// Whether a boolean option's value is true (svn's words: yes, true, on, 1; any case).
pub fn is_true(value: &str) -> bool {
    ["yes", "true", "on", "1"]
        .iter()
        .any(|w| value.trim().eq_ignore_ascii_case(w))
}

/// `[miscellany] use-commit-times`: checkout and update set each working file's time to
/// its last commit's date (export always does).
pub fn use_commit_times(config_dir: Option<&Path>) -> bool {
    option(config_dir, "miscellany", "use-commit-times").is_some_and(|v| is_true(&v))
}

/// The stock client's default `http-timeout`, in seconds (libsvn_ra_serf's).
pub const DEFAULT_HTTP_TIMEOUT: u64 = 600;

/// The value of `option` for `host` in the `servers` files (`/etc/subversion`, then the
/// configuration directory): `[global]`, overridden by the first `[groups]` entry whose
/// patterns (comma-separated, `*` and `?` wildcards, no case) match the host, as svn reads
/// it.
pub fn server_option(config_dir: Option<&Path>, host: &str, option: &str) -> Option<String> {
    let user = config_dir
        .map(Path::to_path_buf)
        .or_else(crate::auth::default_config_dir);
    let mut text = String::new();
    for dir in [Some(Path::new("/etc/subversion").to_path_buf()), user]
        .into_iter()
        .flatten()
    {
        if let Ok(t) = std::fs::read(dir.join("servers")) {
            text.push_str(&String::from_utf8_lossy(&t));
            text.push('\n');
        }
    }
    let group = section_entries(&text, "groups")
        .into_iter()
        .find_map(|(g, patterns)| {
            patterns
                .split(',')
                .any(|p| glob(&p.trim().to_ascii_lowercase(), &host.to_ascii_lowercase()))
                .then_some(g)
        });
    group
        .and_then(|g| crate::tunnel::config_value(&text, &g, option))
        .or_else(|| crate::tunnel::config_value(&text, "global", option))
}

/// The (name, value) pairs of `[section]`, in order (continuation lines not joined: a
/// `[groups]` entry is one line).
fn section_entries(text: &str, section: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        if line.starts_with(['#', ' ', '\t']) {
            continue;
        }
        if let Some(name) = line.strip_prefix('[') {
            inside = name
                .split_once(']')
                .is_some_and(|(n, _)| n.eq_ignore_ascii_case(section));
        } else if let (true, Some(sep)) = (inside, line.find([':', '='])) {
            out.push((
                line[..sep].trim().to_string(),
                line[sep + 1..].trim().to_string(),
            ));
        }
    }
    out
}

/// Whether `name` matches `pattern` (`*`: any run of characters, `?`: one).
fn glob(pattern: &str, name: &str) -> bool {
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    let (mut pi, mut ni, mut star, mut mark) = (0, 0, None, 0);
    while ni < n.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == n[ni]) {
            pi += 1;
            ni += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ni;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ni = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// How long a connection to `host` may stay silent before the client gives up: the
/// `servers` file's `http-timeout` (seconds; default 600, as svn's), applied by Svelto
/// over svn:// as over http:// (the stock client waits forever over svn://). `0`: no limit.
pub fn http_timeout(
    config_dir: Option<&Path>,
    host: &str,
) -> crate::error::Result<Option<std::time::Duration>> {
    let secs = match server_option(config_dir, host, "http-timeout") {
        None => DEFAULT_HTTP_TIMEOUT,
        Some(v) => v.trim().parse::<u64>().map_err(|_| {
            crate::error::Error::Usage(format!(
                "invalid http-timeout '{v}' in the servers configuration (a number of \
                 seconds)"
            ))
        })?,
    };
    Ok((secs > 0).then(|| std::time::Duration::from_secs(secs)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn use_commit_times_is_read_from_the_config_dir() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert!(!use_commit_times(Some(dir.path())));
        std::fs::write(
            dir.path().join("config"),
            "[auth]\npassword-stores =\n\n[miscellany]\nuse-commit-times = yes\n",
        )
        .expect("config");
        assert!(use_commit_times(Some(dir.path())));
        std::fs::write(
            dir.path().join("config"),
            "[miscellany]\n# use-commit-times = yes\nuse-commit-times = no\n",
        )
        .expect("config");
        assert!(!use_commit_times(Some(dir.path())));
        assert!(is_true("On") && is_true("TRUE") && !is_true("off"));
    }

    #[test]
    fn http_timeout_is_read_from_global_and_groups() {
        let dir = tempfile::tempdir().expect("tempdir");
        let secs = |host: &str| {
            http_timeout(Some(dir.path()), host)
                .expect("valid")
                .map(|d| d.as_secs())
        };
        assert_eq!(secs("example.com"), Some(DEFAULT_HTTP_TIMEOUT));
        std::fs::write(
            dir.path().join("servers"),
            "[groups]\nslow = *.example.com, 10.0.0.?\n\n[global]\nhttp-timeout = 7\n\n\
             [slow]\nhttp-timeout = 0\n",
        )
        .expect("servers");
        assert_eq!(secs("example.org"), Some(7));
        assert_eq!(secs("svn.EXAMPLE.com"), None);
        assert_eq!(secs("10.0.0.5"), None);
        assert_eq!(secs("10.0.0.55"), Some(7));
        std::fs::write(
            dir.path().join("servers"),
            "[global]\nhttp-timeout = soon\n",
        )
        .expect("servers");
        let err = http_timeout(Some(dir.path()), "h").expect_err("invalid");
        assert!(err.to_string().contains("http-timeout 'soon'"), "{err}");
    }
}
