//! The read queries (`get-file-revs`, `get-mergeinfo`, `get-iprops`) against the real
//! Subversion: each fixture is loaded into FSFS with `svnadmin` and into Svelto, and the
//! answers are compared with what svnserve sends (over `svnserve -t`) and with what `svn`
//! prints over `file://`.

mod common;
mod file_revs;
mod iprops;
mod mergeinfo;
