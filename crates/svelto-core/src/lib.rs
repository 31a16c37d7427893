//! Subversion's vocabulary, shared by every Svelto crate.
//!
//! Owns: revision numbers, repository paths and their ordering, node kinds,
//! property lists, keyword expansion (`keywords`), checksums, the storage backends' opaque
//! ids (`NodeRevId`, `TextId`, `PropsId`, `ListingId`), locks (`Lock`), the clock and fresh
//! names libraries are given
//! (`Env`), decimal numbers written without allocating, Subversion's error codes (`code`),
//! the guarded place in a bounded count that both front ends bound their connections with
//! (`Permit`), the shutdown both wait on with the writes it waits for (`Drain`), and the
//! memory budget both charge (`budget`). Must not: do I/O, depend on any other Svelto
//! crate.

pub mod budget;
mod checksum;
pub mod code;
mod date;
mod drain;
mod env;
mod ids;
pub mod keywords;
pub mod localtime;
mod lock;
mod path;
mod permit;
mod props;

pub use checksum::{Md5, Sha1, EMPTY_MD5};
pub use date::{civil_from_days, format_svn_date, parse_svn_date, svn_date_now};
pub use drain::{Drain, Writing};
pub use env::{Env, FixedEnv, SystemEnv};
pub use ids::{ListingId, NodeRevId, PropsId, TextId};
pub use lock::Lock;
pub use path::{
    compare_paths, fspath, is_ancestor, join, parent_and_name, relpath, skip_ancestor,
    validate_path, PathError,
};
pub use permit::Permit;
pub use props::{validate_svn_prop, PropList};

/// A revision number. Revision 0 is the empty root every repository starts with.
pub type Revnum = u64;

/// `n` in decimal, written into the end of `buf` (no allocation: for numbers written once
/// per file or per protocol item).
pub fn decimal(mut n: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return &buf[i..];
        }
    }
}

/// The kind of a node in a revision tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NodeKind {
    File,
    Dir,
}

impl NodeKind {
    /// The word Subversion uses for this kind in dumpfiles and on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            NodeKind::File => "file",
            NodeKind::Dir => "dir",
        }
    }
}

/// What a revision did to a path, after folding, as Subversion's `svn_fs_path_change_kind_t`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChangeKind {
    Modify,
    Add,
    Delete,
    Replace,
}

impl ChangeKind {
    /// The letter `svn log -v` prints.
    pub fn letter(self) -> char {
        match self {
            ChangeKind::Modify => 'M',
            ChangeKind::Add => 'A',
            ChangeKind::Delete => 'D',
            ChangeKind::Replace => 'R',
        }
    }
}

/// How far below a directory an operation reaches (Subversion's `svn_depth_t`).
///
/// Ordered as Subversion's numeric values: `Unknown < Exclude < Empty < Files < Immediates <
/// Infinity`. `Unknown` means "not given" (a working copy's ambient depth applies);
/// `Exclude` only appears in reports (the user excluded the path from the working copy).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Depth {
    Unknown,
    Exclude,
    Empty,
    Files,
    Immediates,
    Infinity,
}

impl Depth {
    /// The word used on the wire and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Depth::Unknown => "unknown",
            Depth::Exclude => "exclude",
            Depth::Empty => "empty",
            Depth::Files => "files",
            Depth::Immediates => "immediates",
            Depth::Infinity => "infinity",
        }
    }

    /// Parses a depth word; None for anything else.
    pub fn from_word(w: &str) -> Option<Depth> {
        Some(match w {
            "unknown" => Depth::Unknown,
            "exclude" => Depth::Exclude,
            "empty" => Depth::Empty,
            "files" => Depth::Files,
            "immediates" => Depth::Immediates,
            "infinity" => Depth::Infinity,
            _ => return None,
        })
    }

    /// The depth of the old `recurse` boolean.
    pub fn from_recurse(recurse: bool) -> Depth {
        if recurse {
            Depth::Infinity
        } else {
            Depth::Files
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn decimal_writes_every_number_as_display_does() {
        let mut buf = [0u8; 20];
        for n in [0, 7, 9, 10, 99, 100, 12_000, u32::MAX as u64, u64::MAX] {
            assert_eq!(super::decimal(n, &mut buf), n.to_string().as_bytes());
        }
    }
}
