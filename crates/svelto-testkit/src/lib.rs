//! Test support for Svelto: dumpfile fixtures made with the real Subversion
//! tools, FSFS reference repositories made by the real `svnadmin`, a runner
//! for external commands with useful failure messages, and generators for
//! dumps too large to commit.
//!
//! Owns: `fixtures/` (and `fixtures/make-fixtures.sh`, which makes them).
//! Must not: depend on any Svelto crate (it is the independent referee), or
//! skip anything silently when a Subversion tool is missing (it panics).

pub mod dumpfile;
mod fixtures;
pub mod generate;
mod run;
pub mod serve;
mod svnadmin;

pub use fixtures::{
    fixture, fixture_names, fixtures_dir, scenario_dump, variants, Variant, VariantKind,
};
pub use run::{read_vm_hwm_kib, require_tool, Outcome, Run, Running, DEFAULT_TIMEOUT};
pub use serve::{
    shared_pair, svelto_binary, Expect, Pair, Same, Scope, Server, ServerKind, Subject, Svelto,
    SvnClient, Svnserve, SvnserveConfig,
};
pub use svnadmin::{
    scratch_dir, svnadmin_create, svnadmin_create_load, svnadmin_load_dump, tempdir, TempRepo,
};
