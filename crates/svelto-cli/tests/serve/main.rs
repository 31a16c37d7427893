//! Differential tests of `svelto serve`: every fixture is loaded into FSFS
//! (served by the real `svnserve`) and into Svelto (served by `svelto serve`),
//! and the stock client tools run the same commands against both. Outputs,
//! exit statuses, error messages and the working copies on disk must be the
//! same (after replacing each side's server URL and work directory with
//! placeholders). See `svelto_testkit::serve`.
//!
//! `SVELTO_HARNESS_SELFTEST=1` runs svnserve on both sides instead: every
//! comparison must pass then, which checks the harness itself.
//! `SVELTO_HARNESS_KEEP_GOING=1 ... -- --nocapture` prints every differing
//! comparison (`=== DIFFERENCE:`) instead of stopping a test at the first.
//!
//! Where svnserve's own output order is not fixed (editor drives, listings
//! the client iterates through a hash table), output is compared as sorted
//! lines or blocks; XML attributes are compared sorted (see
//! `svelto_testkit::serve::output_order`).
//!
//! - `auth`: svnserve.conf and passwd, CRAM-MD5, the auth slot, EXTERNAL in tunnel mode;
//! - `checkout`: depths, `--set-depth`, externals, single-file updates,
//!   switch, `status -u`;
//! - `update`: working copies walked forward and backward through whole
//!   histories (adds, deletes, replaces, copies, moves, symlinks, names);
//! - `diff`: `diff -r N:M URL`, `-c`, `--summarize`, URL-to-URL, wc-to-repos;
//! - `export`: eol-style and keywords, externals, symlinks;
//! - `log`, `blame`: every option the issue lists;
//! - `read`: `ls`, `cat`, `info`, `proplist`, `propget --show-inherited-props`,
//!   `mergeinfo`;
//! - `tools`: `svnsync` into FSFS, `svnrdump dump`, `svnbench null-*`;
//! - `ssh`: `svn+ssh://` through a real OpenSSH `sshd` on 127.0.0.1 with forced
//!   commands in `authorized_keys` (checkout, commit, authors from `--tunnel-user`);
//! - `migrating`: docs/migrating.md's steps (FSFS -> Svelto, relocate, roll back);
//! - `robust`: malformed and hostile input over raw TCP, vanishing clients,
//!   100 concurrent checkouts.

mod auth;
mod authz;
mod backend;
mod blame;
mod bounds;
mod checkout;
mod cli;
mod commit;
mod commit_bad;
mod commit_tools;
mod common;
mod concurrency;
mod diff;
mod durability;
mod export;
mod first_day;
mod hook_sessions;
mod hooks;
mod lock_sessions;
mod locks;
mod log;
mod migrating;
mod ops;
mod raw;
mod read;
mod replaced;
mod robust;
mod sessions;
mod ssh;
mod tools;
mod update;
