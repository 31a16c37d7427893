//! The differential suite over `http://`: each fixture loaded into FSFS served by Apache
//! httpd with mod_dav_svn (started here on 127.0.0.1 with a generated configuration) and
//! into Svelto served by `svelto serve --http-listen`, the stock client's commands run
//! against both, outputs and working copies compared. Fails, saying what to install,
//! when Apache or mod_dav_svn is missing.

mod bad;
mod read;
mod tools;
mod update;

use std::path::Path;

use svelto_testkit::{shared_http_pair, Pair, Run};

/// The scenarios every command is compared on.
pub use svelto_testkit::SMALL_SCENARIOS as ALL;

/// The HTTP pair serving `fixture` (made on first use, shared by all tests).
pub fn pair(fixture: &str) -> &'static Pair {
    shared_http_pair(fixture, Path::new(env!("CARGO_BIN_EXE_svelto")))
}

/// The youngest revision of the pair's repository (from the FSFS side).
pub fn head(pair: &Pair) -> u64 {
    let out = Run::tool("svnlook")
        .arg("youngest")
        .arg(pair.reference_repo())
        .success();
    out.stdout_text()
        .trim()
        .parse()
        .unwrap_or_else(|e| panic!("svnlook youngest printed {:?}: {e}", out.stdout_text()))
}
