//! Integration tests of svelto-repos; modules mirror `src/`.

mod authz;
mod commit_model;
mod memory;
mod replay;
mod served;
