//! Test support for Svelto: dumpfile fixtures made with the real Subversion
//! tools, FSFS reference repositories made by the real `svnadmin`, a runner
//! for external commands with useful failure messages, and generators for
//! dumps too large to commit.
//!
//! Also: a minimal svn:// client driving the real `svnserve` over pipes
//! ([`svnserve_client`]) and fixtures loaded into Svelto beside FSFS
//! ([`LoadedPair`]), shared by the svelto-repos test suites.
//!
//! Owns: `fixtures/` (and `fixtures/make-fixtures.sh`, which makes them).
//! Must not: skip anything silently when a Subversion tool is missing (it
//! panics). The referee stays independent: only `svnserve_client` (which
//! decodes svnserve's answers with svelto-wire into svelto-repos' `Call`s)
//! and `svelto` (which loads dumps with svelto-repos) use Svelto crates, never
//! to produce the expected side of a comparison.

pub mod apache;
pub mod authz_matrix;
pub mod clock;
pub mod cluster;
pub mod dumpfile;
mod fixtures;
pub mod generate;
pub mod memfs;
mod metrics;
pub mod nginx;
mod run;
pub mod serve;
pub mod simio;
pub mod sshd;
mod svelto;
mod svnadmin;
pub mod svnserve_client;

pub use fixtures::{
    fixture, fixture_names, fixtures_dir, scenario_dump, variants, Variant, VariantKind,
    FILES_WITH_HISTORY, SMALL_SCENARIOS,
};
pub use metrics::metric_sum;
pub use run::{read_vm_hwm_kib, require_tool, Outcome, Run, Running, DEFAULT_TIMEOUT};
pub use serve::{
    free_port, mask_dates, shared_cluster_http_pair, shared_cluster_pair, shared_http_pair,
    shared_memory_http_pair, shared_memory_pair, shared_pair, svelto_binary, Expect,
    InProcessServer, InProcessSpec, Pair, Same, Scope, ServeInProcess, Server, ServerKind, Subject,
    Svelto, SvnClient, Svnserve, SvnserveConfig,
};
pub use svelto::{svelto_create_load, LoadedPair, SveltoRepo};
pub use svnadmin::{
    scratch_dir, svnadmin_create, svnadmin_create_load, svnadmin_load_dump, tempdir, TempRepo,
};
pub use svnserve_client::SvnserveClient;
