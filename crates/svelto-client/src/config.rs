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
}
