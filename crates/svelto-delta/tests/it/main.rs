//! The integration tests of svelto-delta, one module per part of the crate, plus interop with
//! the stock Subversion tools (fixtures made by `tests/data/make.sh`, and live runs).

mod common;
mod compute;
mod fixtures;
mod parse;
mod sequence;
mod stock;
mod window;
