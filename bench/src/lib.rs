//! Svelto's benchmark tooling: a deterministic generator of Subversion histories,
//! written as dumpfiles (`svelto-gen`), used by the scripts in `bench/` that measure
//! Svelto side by side with Subversion's own tools.
//!
//! The generator models a repository (trunk, branches, tags) and writes every revision
//! as `svnadmin dump` would, so that a generated dump, loaded with `svnadmin load` and
//! dumped again, comes back byte for byte.

pub mod date;
pub mod dump;
pub mod floor;
pub mod gen;
pub mod model;
pub mod text;
pub mod words;
