//! Integration tests of svelto-repos; modules mirror `src/`.

mod authz;
mod commit_model;
mod crash_io;
mod damage;
mod fuzz_seeds;
mod memory;
mod replay;
mod served;
