//! Records the commit the binary is built from (`svelto --version`), or "unknown" outside a
//! git checkout (a source package).

use std::process::Command;

// The choice of files to watch, shared with the test that checks it
// (crates/svelto-cli/tests/scripts.rs).
include!("build_watch.rs");

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    Some(String::from_utf8(out.stdout).ok()?.trim().to_owned())
}

fn main() {
    let commit = git(&["rev-parse", "--short=10", "HEAD"]).unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=SVELTO_COMMIT={commit}");
    for p in watched(git) {
        println!("cargo:rerun-if-changed={p}");
    }
    // Without any of them (no git checkout), only this script's own changes rerun it.
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=build_watch.rs");
}
