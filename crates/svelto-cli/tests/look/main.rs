//! `svelto look` against the real `svnlook` (which must be installed: the tests fail
//! loudly without it). Every comparison is of standard output, standard error (with
//! "svnlook" read as "svelto look") and the exit code, byte for byte.
//!
//! - `revisions`: every fixture, loaded into FSFS and into Svelto, every revision (a
//!   sample of `many-revs`), every revision subcommand and the diff options;
//! - `paths`: `cat`, `filesize`, `propget`, `proplist`, `tree`, `history` for the paths
//!   each revision changed, their parents and missing paths;
//! - `diffs`: generated histories of random line edits (CR, CRLF, no final newline,
//!   repeated and unique lines, files of hundreds of lines) for Subversion's LCS;
//! - `usage`: argument errors, option checks, bad revisions and transactions;
//! - `txn`: `-t TXN` on a transaction a writer exposed, against svnlook in a
//!   pre-commit hook of the same commit on FSFS.

mod common;
mod diffs;
mod paths;
mod revisions;
mod txn;
mod usage;
