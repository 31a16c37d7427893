//! Subversion's repository rules over the local engine's files, where a test needs both
//! the rules (svelto-repos) and the engine's own files or I/O (svelto-store): crashes and
//! failing disks during commits and loads (`crash_io`), damaged files (`damage`), and the
//! fuzz targets' bodies over their seeds (`fuzz_seeds`, whose targets reach from the
//! svn:// parsers down to the store's records). Here in the composition root's crate, the
//! one above both, so that neither dev-depends on a crate above it.

mod crash_io;
mod damage;
mod fuzz_seeds;
