//! The differential suite over `http://`: each fixture loaded into FSFS served by Apache
//! httpd with mod_dav_svn (started here on 127.0.0.1 with a generated configuration) and
//! into Svelto served by `svelto serve --http-listen`, the stock client's commands run
//! against both, outputs and working copies compared. Fails, saying what to install,
//! when Apache or mod_dav_svn is missing.

mod auth;
mod bad;
mod bench_client;
mod commit;
mod conn;
mod idle;
mod ldap;
mod locks;
mod log;
mod nested;
mod options;
mod owners;
mod propfind;
mod proxy;
mod read;
mod tls;
mod tools;
mod update;
mod write;

#[path = "../serve/sessions.rs"]
mod sessions;

#[path = "../serve/lock_sessions.rs"]
mod lock_sessions;

mod support;
pub use support::*;

use std::path::{Path, PathBuf};

use svelto_testkit::{shared_http_pair, Pair, Subject};

/// The HTTP pair serving `fixture` (made on first use, shared by all tests).
pub fn pair(fixture: &str) -> &'static Pair {
    shared_http_pair(fixture, Path::new(env!("CARGO_BIN_EXE_svelto")))
}

/// What serves the subject side of a fresh pair: `svelto serve`.
pub fn subject() -> Subject {
    Subject::Svelto(bin())
}

/// The `svelto` binary under test.
pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_svelto"))
}
