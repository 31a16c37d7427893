//! What the stock `svn` client sees of a front end served with a fixed clock: the dates of
//! commits and locks. Shared by the svn:// and http:// front ends' tests that prove the
//! time comes from the injected `Env`, never from the system clock.

use std::path::Path;
use std::process::Command;

/// The injected clock's time (after [`R0_DATE`]).
pub const FIXED_NOW: &str = "2001-02-03T04:05:06.000007Z";
/// Revision 0's date for a repository served with the fixed clock.
pub const R0_DATE: &str = "2001-01-01T00:00:00.000000Z";

/// `svn ARGS` as `joe` (password `joepw`), with the configuration directory `config`;
/// its standard output. Panics with svn's error when it fails.
fn svn_as_joe(config: &Path, args: &[&str]) -> String {
    let out = Command::new("svn")
        .args(["--non-interactive", "--no-auth-cache", "--config-dir"])
        .arg(config)
        .args(["--username", "joe", "--password", "joepw"])
        .args(args)
        .output()
        .expect("run svn (Subversion's client must be installed)");
    assert!(
        out.status.success(),
        "svn {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

/// Through the stock client, as `joe`, against the empty repository at `url` served with
/// a clock fixed at [`FIXED_NOW`]: an import's `svn:date`, a lock's creation date (taken in
/// a working copy under `dir`, read back by `svn info`) and the date of the commit that
/// hands the lock's token back are all [`FIXED_NOW`].
pub fn assert_commit_and_lock_dates_are_fixed(url: &str, dir: &Path) {
    let cfg = dir.join("svn-config");
    let file = dir.join("f.txt");
    std::fs::write(&file, "text\n").expect("file");
    let target = format!("{url}/f.txt");
    svn_as_joe(
        &cfg,
        &[
            "import",
            "-m",
            "add",
            file.to_str().expect("utf-8"),
            &target,
        ],
    );
    let date = svn_as_joe(&cfg, &["propget", "--revprop", "-r", "1", "svn:date", url]);
    assert_eq!(date.trim(), FIXED_NOW, "the commit's date");

    let wc = dir.join("wc");
    let wc_file = wc.join("f.txt");
    svn_as_joe(&cfg, &["checkout", url, wc.to_str().expect("utf-8")]);
    svn_as_joe(
        &cfg,
        &["lock", "-m", "mine", wc_file.to_str().expect("utf-8")],
    );
    let info = svn_as_joe(&cfg, &["info", "--xml", &target]);
    assert!(
        info.contains(&format!("<created>{FIXED_NOW}</created>")),
        "the lock's creation date: {info}"
    );
    std::fs::write(&wc_file, "more\n").expect("edit");
    svn_as_joe(&cfg, &["commit", "-m", "edit", wc.to_str().expect("utf-8")]);
    let date = svn_as_joe(&cfg, &["propget", "--revprop", "-r", "2", "svn:date", url]);
    assert_eq!(date.trim(), FIXED_NOW, "the second commit's date");
}
