//! A fast Subversion client: `checkout`, `export` and `update` over svn://, svn+ssh://,
//! http:// and https:// into the stock 1.14 working copy (format 31: `.svn/wc.db`, the
//! pristine store), which every stock `svn` command then works on.
//!
//! Owns: the client side of the svn:// session ([`ra_svn`], over TCP or a tunnel agent's
//! pipes: [`tunnel`]), the receiving end of an update drive ([`checkout`], and [`update`]
//! for an existing working copy), the working copy's administrative area ([`wc`]) and the
//! working form of texts ([`translate`]).
//! Must not: print (progress goes through [`checkout::Notify`]), parse command lines, or
//! panic on what a server sends.

pub mod auth;
pub mod checkout;
pub mod config;
pub mod date;
mod edit;
pub mod error;
pub mod externals;
pub mod ra;
pub mod ra_dav;
pub mod ra_svn;
pub mod skel;
mod text;
pub mod translate;
pub mod tunnel;
pub mod update;
pub mod url;
pub mod wc;
mod writer;

pub use checkout::{checkout, export, Depth, Notify, Options, Summary};
pub use error::{Error, Result};
pub use update::{update, UpdateOptions};
