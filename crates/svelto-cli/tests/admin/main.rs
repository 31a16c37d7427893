//! Acceptance tests of `svelto admin`, run against the real binary and
//! compared with the real Subversion tools (which must be installed: the
//! tests fail loudly without them).
//!
//! - `create`: repository layout and revision 0;
//! - `roundtrip`: every fixture loads and dumps back byte for byte, in every
//!   format and range;
//! - `options`: `-q`, `-F`, `-r`, `--parent-dir`, `--ignore-uuid`,
//!   `--force-uuid`, compared with svnadmin given the same commands;
//! - `bad_input`: truncated and corrupted dumps;
//! - `big_file`: a 200 MB file, streamed;
//! - `memory`: load and dump of many texts within twice svnadmin's memory;
//! - `crash`: `kill -9` during a load;
//! - `hotcopy`: copies of a repository a server commits to meanwhile, incremental
//!   copies, a server on the copy; `freeze` holding a server's commits; both against
//!   svnadmin's output;
//! - `setuuid`: against `svnadmin setuuid` (`pair`: the same subcommand run by
//!   svnadmin on FSFS and by `svelto admin` on Svelto, outputs compared).

mod bad_input;
mod big_file;
mod common;
mod corrupt;
mod crash;
mod create;
mod dump_filter;
mod hotcopy;
mod load_options;
mod locks;
mod maintenance;
mod memory;
mod options;
mod pair;
mod progress;
mod revprop_dumps;
mod revprops;
mod roundtrip;
mod setuuid;
mod verify;
