//! Integration tests of svelto-repos; modules mirror `src/`.

mod commit_model;
mod replay;
