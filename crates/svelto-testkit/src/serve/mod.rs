//! svn:// servers for differential tests: the real `svnserve` over FSFS and
//! `svelto serve` over Svelto's store, each on 127.0.0.1, the stock client
//! tools run against them, and [`Pair`], which runs the same client command
//! against both and asserts that the outputs are the same.
//!
//! Server processes run under a small shell watchdog whose standard input is
//! a pipe from the test process: when the test process ends, however it ends,
//! the pipe closes and the watchdog kills the server. So servers held in
//! statics (one [`Pair`] shared by the tests of a module) never outlive the
//! test binary.
//!
//! `servers`: the watchdog and the servers; `client`: the stock `svn` client
//! runner; `masking`: what is masked or put in order before outputs are
//! compared; `pair`: the differential runner ([`Pair`], [`Scope`]).

mod client;
mod masking;
mod pair;
mod servers;
#[cfg(test)]
mod tests;

pub use client::*;
pub use masking::*;
pub use pair::*;
pub use servers::*;

use std::collections::{BTreeMap, HashMap};
use std::ffi::{OsStr, OsString};
use std::fmt::Write as _;
use std::io::{BufRead, BufReader};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use tempfile::TempDir;

use crate::run::{Outcome, Run};
use crate::svnadmin::tempdir;
