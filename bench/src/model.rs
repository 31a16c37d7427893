//! The generator's model of the repository: nodes, file bodies, their checksums.

use std::collections::BTreeMap;
use std::rc::Rc;

use md5::{Digest as _, Md5};
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use sha1::Sha1;

use crate::text::{self, Lang};

/// Node properties, sorted by name as `svnadmin dump` writes them.
pub type Props = BTreeMap<String, String>;

/// What a file contains, in a compact form that renders to its bytes.
#[derive(Clone, Debug)]
pub enum Body {
    /// Source-like text: one token per line (see `text`).
    Text {
        lang: Lang,
        vocab: u32,
        lines: Vec<u64>,
    },
    /// Incompressible bytes from a seed, with regions overwritten by later versions.
    Binary {
        seed: u64,
        len: usize,
        patches: Vec<Patch>,
    },
    /// Literal bytes (the ChangeLog, VERSION).
    Raw(Vec<u8>),
}

/// A region of a binary file overwritten by a later version.
#[derive(Clone, Copy, Debug)]
pub struct Patch {
    pub offset: usize,
    pub len: usize,
    pub seed: u64,
}

impl Body {
    /// Appends the file's bytes to `out`.
    pub fn render(&self, out: &mut Vec<u8>) {
        match self {
            Body::Text { lang, vocab, lines } => text::render(out, *lang, *vocab, lines),
            Body::Binary { seed, len, patches } => {
                let start = out.len();
                out.resize(start + len, 0);
                ChaCha8Rng::seed_from_u64(*seed).fill_bytes(&mut out[start..]);
                for p in patches {
                    let from = start + p.offset.min(*len);
                    let to = start + (p.offset + p.len).min(*len);
                    ChaCha8Rng::seed_from_u64(p.seed).fill_bytes(&mut out[from..to]);
                }
            }
            Body::Raw(bytes) => out.extend_from_slice(bytes),
        }
    }

    pub fn is_text(&self) -> bool {
        matches!(self, Body::Text { .. })
    }
}

/// MD5, SHA-1 and length of a file's bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Checksums {
    pub md5: [u8; 16],
    pub sha1: [u8; 20],
    pub len: u64,
}

impl Checksums {
    pub fn of(bytes: &[u8]) -> Checksums {
        Checksums {
            md5: Md5::digest(bytes).into(),
            sha1: Sha1::digest(bytes).into(),
            len: bytes.len() as u64,
        }
    }
}

/// One version of a file: contents, properties and their checksums. Immutable and
/// shared (`Rc`) between every path and revision that holds the same version.
#[derive(Debug)]
pub struct FileData {
    pub body: Body,
    pub props: Props,
    pub sums: Checksums,
}

impl FileData {
    /// Renders the body into `scratch` once to checksum it.
    pub fn new(body: Body, props: Props, scratch: &mut Vec<u8>) -> Rc<FileData> {
        scratch.clear();
        body.render(scratch);
        let sums = Checksums::of(scratch);
        Rc::new(FileData { body, props, sums })
    }

    /// The same contents with other properties.
    pub fn with_props(&self, props: Props) -> Rc<FileData> {
        Rc::new(FileData {
            body: self.body.clone(),
            props,
            sums: self.sums,
        })
    }
}

/// A node in the tree.
#[derive(Clone, Debug)]
pub enum Node {
    Dir(Rc<Props>),
    File(Rc<FileData>),
}

impl Node {
    pub fn props(&self) -> &Props {
        match self {
            Node::Dir(p) => p,
            Node::File(f) => &f.props,
        }
    }

    pub fn is_dir(&self) -> bool {
        matches!(self, Node::Dir(_))
    }

    pub fn file(&self) -> Option<&Rc<FileData>> {
        match self {
            Node::File(f) => Some(f),
            Node::Dir(_) => None,
        }
    }
}

/// What a node record does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Add,
    Change,
    Delete,
    Replace,
}

/// One changed path of a revision, the unit of a node record.
#[derive(Clone, Debug)]
pub struct Change {
    pub path: String,
    pub action: Action,
    /// The node after the change (absent for deletes).
    pub node: Option<Node>,
    /// Copy source (revision, path).
    pub copyfrom: Option<(u32, String)>,
    /// What the dump compares against to decide whether text and properties are
    /// written: the copy source for copies, the previous version for changes.
    pub base: Option<Node>,
}

/// `svn:mergeinfo` as sorted paths with sorted, merged, inclusive revision ranges.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Mergeinfo(BTreeMap<String, Vec<(u32, u32)>>);

impl Mergeinfo {
    pub fn parse(value: Option<&String>) -> Mergeinfo {
        let mut m = Mergeinfo::default();
        let Some(value) = value else { return m };
        for line in value.lines() {
            let Some((path, ranges)) = line.rsplit_once(':') else {
                continue;
            };
            for r in ranges.split(',') {
                let (a, b) = r.split_once('-').unwrap_or((r, r));
                if let (Ok(a), Ok(b)) = (a.parse(), b.parse()) {
                    m.add(path, a, b);
                }
            }
        }
        m
    }

    /// Adds revisions `start..=end` merged from `path`.
    pub fn add(&mut self, path: &str, start: u32, end: u32) {
        if start > end {
            return;
        }
        let ranges = self.0.entry(path.to_owned()).or_default();
        ranges.push((start, end));
        ranges.sort_unstable();
        let mut merged: Vec<(u32, u32)> = Vec::with_capacity(ranges.len());
        for &(a, b) in ranges.iter() {
            match merged.last_mut() {
                Some(last) if a <= last.1.saturating_add(1) => last.1 = last.1.max(b),
                _ => merged.push((a, b)),
            }
        }
        *ranges = merged;
    }

    /// The canonical property value (as `svn_mergeinfo_to_string` writes it).
    pub fn to_value(&self) -> String {
        let mut s = String::new();
        for (path, ranges) in &self.0 {
            if !s.is_empty() {
                s.push('\n');
            }
            s.push_str(path);
            s.push(':');
            for (i, &(a, b)) in ranges.iter().enumerate() {
                if i > 0 {
                    s.push(',');
                }
                if a == b {
                    s.push_str(&a.to_string());
                } else {
                    s.push_str(&format!("{a}-{b}"));
                }
            }
        }
        s
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mergeinfo_is_canonical() {
        let mut m = Mergeinfo::default();
        m.add("/trunk", 10, 12);
        m.add("/trunk", 13, 15);
        m.add("/trunk", 3, 3);
        m.add("/branches/a", 20, 30);
        assert_eq!(m.to_value(), "/branches/a:20-30\n/trunk:3,10-15");
        assert_eq!(Mergeinfo::parse(Some(&m.to_value())), m);
    }
}
