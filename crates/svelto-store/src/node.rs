//! The records that make up a revision tree and its metadata, and their encodings.

use crate::enc::{put_bytes, put_props, put_varint, Cursor};
use crate::error::Corruption;
use std::sync::OnceLock;
use svelto_core::{ChangeKind, Md5, NodeKind, PropList, Revnum, Sha1};

/// Byte offset of a record in `db/data`; 0 means none.
pub type Offset = u64;

/// A file's contents as a node-revision knows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileText {
    /// Offset of the REP trailer; 0 for empty contents.
    pub rep: Offset,
    pub size: u64,
    pub md5: Md5,
    pub sha1: Sha1,
}

/// A node-revision: one version of a file or directory (Subversion's `node_revision_t`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeRev {
    pub kind: NodeKind,
    pub node_id: u64,
    pub copy_id: u64,
    pub predecessor: Offset,
    pub pred_count: u64,
    pub created_rev: Revnum,
    pub created_path: String,
    pub copyfrom: Option<(Revnum, String)>,
    pub copyroot: (Revnum, String),
    pub props: Offset,
    /// Identity of the last property change: a new key each time properties are set, kept
    /// by copies (FSFS's representation "uniquifier"); 0 = never set. Subversion's dump
    /// decides "properties changed" by this identity, not by content.
    pub props_key: u64,
    /// Files only.
    pub text: Option<FileText>,
    /// Identity of the last text change, as `props_key`.
    pub text_key: u64,
    /// Directories only: offset of the DIR listing, 0 when empty.
    pub entries: Offset,
}

fn put_copyfrom(out: &mut Vec<u8>, copyfrom: &Option<(Revnum, String)>) {
    match copyfrom {
        Some((rev, path)) => {
            out.push(1);
            put_varint(out, *rev);
            put_bytes(out, path.as_bytes());
        }
        None => out.push(0),
    }
}

fn get_copyfrom(c: &mut Cursor) -> Result<Option<(Revnum, String)>, Corruption> {
    match c.u8()? {
        0 => Ok(None),
        1 => Ok(Some((c.varint()?, c.string()?))),
        b => Err(Corruption::new(format!("bad copy flag {b}"))),
    }
}

fn kind_byte(k: NodeKind) -> u8 {
    match k {
        NodeKind::File => 1,
        NodeKind::Dir => 2,
    }
}

fn kind_from(b: u8, c: &Cursor) -> Result<NodeKind, Corruption> {
    let _ = c;
    match b {
        1 => Ok(NodeKind::File),
        2 => Ok(NodeKind::Dir),
        _ => Err(Corruption::new(format!("unknown node kind {b}"))),
    }
}

impl NodeRev {
    /// Revision 0's root: an empty directory with no properties.
    pub(crate) fn empty_root() -> NodeRev {
        NodeRev {
            kind: NodeKind::Dir,
            node_id: 0,
            copy_id: 0,
            predecessor: 0,
            pred_count: 0,
            created_rev: 0,
            created_path: String::new(),
            copyfrom: None,
            copyroot: (0, String::new()),
            props: 0,
            props_key: 0,
            text: None,
            text_key: 0,
            entries: 0,
        }
    }

    pub fn encode(&self, out: &mut Vec<u8>) {
        out.push(kind_byte(self.kind));
        put_varint(out, self.node_id);
        put_varint(out, self.copy_id);
        put_varint(out, self.predecessor);
        put_varint(out, self.pred_count);
        put_varint(out, self.created_rev);
        put_bytes(out, self.created_path.as_bytes());
        put_copyfrom(out, &self.copyfrom);
        put_varint(out, self.copyroot.0);
        put_bytes(out, self.copyroot.1.as_bytes());
        put_varint(out, self.props);
        put_varint(out, self.props_key);
        put_varint(out, self.text_key);
        match self.kind {
            NodeKind::File => {
                let t = self.text.unwrap_or(FileText::EMPTY);
                put_varint(out, t.rep);
                put_varint(out, t.size);
                out.extend_from_slice(&t.md5.0);
                out.extend_from_slice(&t.sha1.0);
            }
            NodeKind::Dir => put_varint(out, self.entries),
        }
    }

    pub fn decode(payload: &[u8]) -> Result<NodeRev, Corruption> {
        let mut c = Cursor::new(payload, "NODE");
        let kind = kind_from(c.u8()?, &c)?;
        let node_id = c.varint()?;
        let copy_id = c.varint()?;
        let predecessor = c.varint()?;
        let pred_count = c.varint()?;
        let created_rev = c.varint()?;
        let created_path = c.string()?;
        let copyfrom = get_copyfrom(&mut c)?;
        let copyroot = (c.varint()?, c.string()?);
        let props = c.varint()?;
        let props_key = c.varint()?;
        let text_key = c.varint()?;
        let (text, entries) = match kind {
            NodeKind::File => {
                let rep = c.varint()?;
                let size = c.varint()?;
                let md5 = Md5(c.fixed()?);
                let sha1 = Sha1(c.fixed()?);
                (
                    Some(FileText {
                        rep,
                        size,
                        md5,
                        sha1,
                    }),
                    0,
                )
            }
            NodeKind::Dir => (None, c.varint()?),
        };
        c.finish()?;
        Ok(NodeRev {
            kind,
            node_id,
            copy_id,
            predecessor,
            pred_count,
            created_rev,
            created_path,
            copyfrom,
            copyroot,
            props,
            props_key,
            text,
            text_key,
            entries,
        })
    }

    /// The contents of a file node (empty for a directory).
    pub fn file_text(&self) -> FileText {
        self.text.unwrap_or(FileText::EMPTY)
    }
}

impl FileText {
    pub const EMPTY: FileText = FileText {
        rep: 0,
        size: 0,
        md5: svelto_core::EMPTY_MD5,
        sha1: Sha1([
            0xda, 0x39, 0xa3, 0xee, 0x5e, 0x6b, 0x4b, 0x0d, 0x32, 0x55, 0xbf, 0xef, 0x95, 0x60,
            0x18, 0x90, 0xaf, 0xd8, 0x07, 0x09,
        ]),
    };
}

/// One entry of a directory listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirEntry {
    pub name: String,
    pub kind: NodeKind,
    pub node: Offset,
}

pub fn encode_dir(entries: &[DirEntry], out: &mut Vec<u8>) {
    put_varint(out, entries.len() as u64);
    for e in entries {
        put_bytes(out, e.name.as_bytes());
        out.push(kind_byte(e.kind));
        put_varint(out, e.node);
    }
}

pub fn decode_dir(payload: &[u8]) -> Result<Vec<DirEntry>, Corruption> {
    let mut c = Cursor::new(payload, "DIR");
    let n = c.varint()?;
    let mut entries: Vec<DirEntry> = Vec::with_capacity(n.min(65536) as usize);
    for _ in 0..n {
        let name = c.string()?;
        let kind = kind_from(c.u8()?, &c)?;
        let node = c.varint()?;
        if let Some(prev) = entries.last() {
            if prev.name.as_bytes() >= name.as_bytes() {
                return Err(Corruption::new(format!(
                    "DIR record: entries not sorted or duplicated at '{name}'"
                )));
            }
        }
        entries.push(DirEntry { name, kind, node });
    }
    c.finish()?;
    Ok(entries)
}

/// One change in a DIRDELTA record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DirChange {
    Remove(String),
    Set(DirEntry),
}

impl DirChange {
    fn name(&self) -> &str {
        match self {
            DirChange::Remove(n) => n,
            DirChange::Set(e) => &e.name,
        }
    }
}

/// A directory listing as changes to an earlier listing (`base`, a DIR or DIRDELTA record
/// before this one); `depth` counts the DIRDELTA records down to a whole DIR.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirDelta {
    pub base: Offset,
    pub depth: u64,
    /// Sorted bytewise by name, one per name.
    pub changes: Vec<DirChange>,
}

pub fn encode_dir_delta(d: &DirDelta, out: &mut Vec<u8>) {
    put_varint(out, d.base);
    put_varint(out, d.depth);
    put_varint(out, d.changes.len() as u64);
    for c in &d.changes {
        match c {
            DirChange::Remove(name) => {
                out.push(0);
                put_bytes(out, name.as_bytes());
            }
            DirChange::Set(e) => {
                out.push(1);
                put_bytes(out, e.name.as_bytes());
                out.push(kind_byte(e.kind));
                put_varint(out, e.node);
            }
        }
    }
}

pub fn decode_dir_delta(payload: &[u8]) -> Result<DirDelta, Corruption> {
    let mut c = Cursor::new(payload, "DIRDELTA");
    let base = c.varint()?;
    let depth = c.varint()?;
    let n = c.varint()?;
    let mut changes: Vec<DirChange> = Vec::with_capacity(n.min(65536) as usize);
    for _ in 0..n {
        let op = c.u8()?;
        let name = c.string()?;
        let change = match op {
            0 => DirChange::Remove(name),
            1 => {
                let kind = kind_from(c.u8()?, &c)?;
                let node = c.varint()?;
                DirChange::Set(DirEntry { name, kind, node })
            }
            k => return Err(Corruption::new(format!("DIRDELTA record: change kind {k}"))),
        };
        if let Some(prev) = changes.last() {
            if prev.name().as_bytes() >= change.name().as_bytes() {
                return Err(Corruption::new(format!(
                    "DIRDELTA record: changes not sorted or duplicated at '{}'",
                    change.name()
                )));
            }
        }
        changes.push(change);
    }
    c.finish()?;
    Ok(DirDelta {
        base,
        depth,
        changes,
    })
}

/// The changes that turn listing `old` into `new` (both sorted by name).
pub fn diff_dirs(old: &[DirEntry], new: &[DirEntry]) -> Vec<DirChange> {
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    while i < old.len() || j < new.len() {
        let ord = match (old.get(i), new.get(j)) {
            (Some(a), Some(b)) => a.name.as_bytes().cmp(b.name.as_bytes()),
            (Some(_), None) => std::cmp::Ordering::Less,
            _ => std::cmp::Ordering::Greater,
        };
        match ord {
            std::cmp::Ordering::Less => {
                out.push(DirChange::Remove(old[i].name.clone()));
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                out.push(DirChange::Set(new[j].clone()));
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                if old[i] != new[j] {
                    out.push(DirChange::Set(new[j].clone()));
                }
                i += 1;
                j += 1;
            }
        }
    }
    out
}

/// Applies sorted `changes` to the sorted listing `base`.
pub fn apply_dir_delta(
    base: &[DirEntry],
    changes: &[DirChange],
) -> Result<Vec<DirEntry>, Corruption> {
    let mut out = Vec::with_capacity(base.len() + changes.len());
    let mut i = 0;
    for c in changes {
        while i < base.len() && base[i].name.as_bytes() < c.name().as_bytes() {
            out.push(base[i].clone());
            i += 1;
        }
        let present = i < base.len() && base[i].name == c.name();
        match c {
            DirChange::Remove(name) => {
                if !present {
                    return Err(Corruption::new(format!(
                        "DIRDELTA record removes '{name}', which its base does not have"
                    )));
                }
                i += 1;
            }
            DirChange::Set(e) => {
                if present {
                    i += 1;
                }
                out.push(e.clone());
            }
        }
    }
    out.extend_from_slice(&base[i..]);
    Ok(out)
}

pub fn decode_props(payload: &[u8]) -> Result<PropList, Corruption> {
    let mut c = Cursor::new(payload, "PROPS");
    let p = c.props()?;
    c.finish()?;
    Ok(p)
}

pub fn encode_props(props: &PropList) -> Vec<u8> {
    let mut out = Vec::new();
    put_props(&mut out, props);
    out
}

/// One changed path of a revision, after folding (Subversion's `svn_fs_path_change3_t`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub path: String,
    pub change: ChangeKind,
    pub kind: Option<NodeKind>,
    pub text_mod: bool,
    pub prop_mod: bool,
    pub copyfrom: Option<(Revnum, String)>,
    /// The node-revision at `path` in this revision; 0 for deletes.
    pub node: Offset,
}

/// A revision's metadata: what `log` reads.
#[derive(Debug, Clone, Default)]
pub struct RevMeta {
    pub revprops: PropList,
    /// In Subversion's path order (`compare_paths`: a separator sorts first).
    pub changes: Vec<Change>,
    /// See [`RevMeta::byte_order`]; computed on first use.
    byte_order: OnceLock<Option<Box<[u32]>>>,
}

impl PartialEq for RevMeta {
    fn eq(&self, other: &Self) -> bool {
        self.revprops == other.revprops && self.changes == other.changes
    }
}

impl Eq for RevMeta {}

impl RevMeta {
    pub fn new(revprops: PropList, changes: Vec<Change>) -> RevMeta {
        RevMeta {
            revprops,
            changes,
            byte_order: OnceLock::new(),
        }
    }

    /// The indices of `changes` in byte order of their paths (the order `log` reports
    /// them in), or None where that is the order they are in. Sorted on the first call
    /// and kept with the metadata (a cached revision of 20,000 changed paths is not
    /// sorted again by every log that reports it).
    pub fn byte_order(&self) -> Option<&[u32]> {
        self.byte_order
            .get_or_init(|| {
                let path = |i: u32| self.changes[i as usize].path.as_bytes();
                let n = u32::try_from(self.changes.len()).unwrap_or(u32::MAX);
                if (1..n).all(|i| path(i - 1) <= path(i)) {
                    return None;
                }
                let mut order: Vec<u32> = (0..n).collect();
                // Nearly sorted already: the stable sort merges the few runs.
                order.sort_by(|&a, &b| path(a).cmp(path(b)));
                Some(order.into_boxed_slice())
            })
            .as_deref()
    }

    pub fn encode(&self, out: &mut Vec<u8>) {
        put_props(out, &self.revprops);
        put_varint(out, self.changes.len() as u64);
        for ch in &self.changes {
            put_bytes(out, ch.path.as_bytes());
            out.push(match ch.change {
                ChangeKind::Modify => 1,
                ChangeKind::Add => 2,
                ChangeKind::Delete => 3,
                ChangeKind::Replace => 4,
            });
            out.push(ch.kind.map_or(0, kind_byte));
            out.push(u8::from(ch.text_mod) | (u8::from(ch.prop_mod) << 1));
            put_copyfrom(out, &ch.copyfrom);
            put_varint(out, ch.node);
        }
    }

    pub fn decode(payload: &[u8]) -> Result<RevMeta, Corruption> {
        let mut c = Cursor::new(payload, "REVISION");
        let revprops = c.props()?;
        let n = c.varint()?;
        let mut changes = Vec::with_capacity(n.min(65536) as usize);
        for _ in 0..n {
            let path = c.string()?;
            let change = match c.u8()? {
                1 => ChangeKind::Modify,
                2 => ChangeKind::Add,
                3 => ChangeKind::Delete,
                4 => ChangeKind::Replace,
                b => return Err(Corruption::new(format!("REVISION record: change kind {b}"))),
            };
            let kind = match c.u8()? {
                0 => None,
                b => Some(kind_from(b, &c)?),
            };
            let flags = c.u8()?;
            let copyfrom = get_copyfrom(&mut c)?;
            let node = c.varint()?;
            changes.push(Change {
                path,
                change,
                kind,
                text_mod: flags & 1 != 0,
                prop_mod: flags & 2 != 0,
                copyfrom,
                node,
            });
        }
        c.finish()?;
        Ok(RevMeta::new(revprops, changes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn noderev_round_trip() {
        let n = NodeRev {
            kind: NodeKind::File,
            node_id: 7,
            copy_id: 2,
            predecessor: 1234,
            pred_count: 3,
            created_rev: 9,
            created_path: "trunk/ü x".into(),
            copyfrom: Some((4, "branches/b".into())),
            copyroot: (9, "trunk".into()),
            props: 99,
            props_key: 5 << 32 | 1,
            text_key: 5 << 32 | 2,
            text: Some(FileText {
                rep: 5,
                size: 6,
                md5: Md5([1; 16]),
                sha1: Sha1([2; 20]),
            }),
            entries: 0,
        };
        let mut b = Vec::new();
        n.encode(&mut b);
        assert_eq!(NodeRev::decode(&b).expect("decodes"), n);
        assert!(NodeRev::decode(&b[..b.len() - 1]).is_err());
    }

    #[test]
    fn unsorted_dir_is_corruption() {
        let mut b = Vec::new();
        let e = |n: &str| DirEntry {
            name: n.into(),
            kind: NodeKind::File,
            node: 1,
        };
        encode_dir(&[e("b"), e("a")], &mut b);
        assert!(decode_dir(&b).is_err());
    }
}
