//! Progress bars: drawn on standard error when it is a terminal (a pseudo-terminal made by
//! util-linux's `script`), never with `-q`, and never when standard error is a pipe (the
//! other admin tests compare that output with svnadmin's byte for byte).

use std::path::Path;
use std::process::Command;
use svelto_testkit::{scenario_dump, tempdir};

/// `sh -c LINE` under a pseudo-terminal: what the terminal showed.
fn on_a_terminal(line: &str) -> String {
    let out = Command::new("script")
        .args(["-qec", line, "/dev/null"])
        .env("TERM", "xterm")
        .output()
        .expect("util-linux's script must be installed (Debian: bsdutils)");
    assert!(out.status.success(), "{line}: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn load_dump_verify_and_hotcopy_show_a_bar_on_a_terminal_only() {
    let dir = tempdir();
    let svelto = env!("CARGO_BIN_EXE_svelto");
    let repo = dir.path().join("repo");
    let copy = dir.path().join("copy");
    let dump = scenario_dump("basic");
    let q = |p: &Path| format!("'{}'", p.display());
    let create = Command::new(svelto)
        .args(["admin", "create"])
        .arg(&repo)
        .status()
        .expect("create");
    assert!(create.success());
    let load = on_a_terminal(&format!("{svelto} admin load -F {} {}", q(&dump), q(&repo)));
    assert!(
        load.contains("load [") && load.contains("revision 12"),
        "{load}"
    );
    assert!(load.contains("------- Committed revision 12 >>>"), "{load}");
    let verify = on_a_terminal(&format!("{svelto} admin verify {}", q(&repo)));
    assert!(
        verify.contains("verify [") && verify.contains("13/13 revisions"),
        "{verify}"
    );
    assert!(verify.contains("* Verified revision 12."), "{verify}");
    let dumped = on_a_terminal(&format!("{svelto} admin dump {} > /dev/null", q(&repo)));
    assert!(dumped.contains("dump [") && dumped.contains("* Dumped revision 12."));
    let hotcopy = on_a_terminal(&format!("{svelto} admin hotcopy {} {}", q(&repo), q(&copy)));
    assert!(hotcopy.contains("hotcopy [") && hotcopy.contains("* Copied revision 12."));
    // -q: no lines and no bar.
    for sub in ["verify -q", "dump -q"] {
        let shown = on_a_terminal(&format!("{svelto} admin {sub} {} > /dev/null", q(&repo)));
        assert!(!shown.contains("revisions"), "{sub}: {shown}");
    }
    // Standard error a pipe: svnadmin's lines only.
    let piped = Command::new(svelto)
        .args(["admin", "verify"])
        .arg(&repo)
        .output()
        .expect("verify");
    let all = [piped.stdout, piped.stderr].concat();
    assert!(!String::from_utf8_lossy(&all).contains("revisions,"));
}
