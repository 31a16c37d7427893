//! Integration tests of svelto-dump against dumps made by the real Subversion tools
//! (tests/data/make.sh) and against `svnadmin` itself. Modules mirror src/.

mod common;
mod props;
mod reader;
mod robustness;
mod writer;
