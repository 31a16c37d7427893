//! The records that make up a revision tree and its metadata, and their encodings.

use crate::enc::{put_bytes, put_props, put_varint, Cursor};
use crate::error::Corruption;
use svelto_core::{
    ChangeKind, ListingId, Md5, NodeKind, NodeRevId, PropList, PropsId, Revnum, Sha1, TextId,
};

pub use svelto_fs::{Change, DirEntry, FileText, NodeRev, RevMeta};

/// A record's encoding in the local engine's files (docs/formats/store.md): node-revisions
/// (NODE) and revision metadata (REVISION).
pub trait Codec: Sized {
    fn encode(&self, out: &mut Vec<u8>);
    fn decode(payload: &[u8]) -> Result<Self, Corruption>;
}

/// Byte offset of a record in `db/data`; 0 means none. Inside the store only: above it,
/// records are named by the opaque ids of `svelto_core` (whose raw value is the offset).
pub(crate) type Offset = u64;

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

impl Codec for NodeRev {
    fn encode(&self, out: &mut Vec<u8>) {
        out.push(kind_byte(self.kind));
        put_varint(out, self.node_id);
        put_varint(out, self.copy_id);
        put_varint(out, self.predecessor.raw());
        put_varint(out, self.pred_count);
        put_varint(out, self.created_rev);
        put_bytes(out, self.created_path.as_bytes());
        put_copyfrom(out, &self.copyfrom);
        put_varint(out, self.copyroot.0);
        put_bytes(out, self.copyroot.1.as_bytes());
        put_varint(out, self.props.raw());
        put_varint(out, self.props_key);
        put_varint(out, self.text_key);
        match self.kind {
            NodeKind::File => {
                let t = self.text.unwrap_or(FileText::EMPTY);
                put_varint(out, t.rep.raw());
                put_varint(out, t.size);
                out.extend_from_slice(&t.md5.0);
                out.extend_from_slice(&t.sha1.0);
            }
            NodeKind::Dir => put_varint(out, self.entries.raw()),
        }
    }

    fn decode(payload: &[u8]) -> Result<NodeRev, Corruption> {
        let mut c = Cursor::new(payload, "NODE");
        let kind = kind_from(c.u8()?, &c)?;
        let node_id = c.varint()?;
        let copy_id = c.varint()?;
        let predecessor = NodeRevId::from_raw(c.varint()?);
        let pred_count = c.varint()?;
        let created_rev = c.varint()?;
        let created_path = c.string()?;
        let copyfrom = get_copyfrom(&mut c)?;
        let copyroot = (c.varint()?, c.string()?);
        let props = PropsId::from_raw(c.varint()?);
        let props_key = c.varint()?;
        let text_key = c.varint()?;
        let (text, entries) = match kind {
            NodeKind::File => {
                let rep = TextId::from_raw(c.varint()?);
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
                    ListingId::NONE,
                )
            }
            NodeKind::Dir => (None, ListingId::from_raw(c.varint()?)),
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
}

pub fn encode_dir(entries: &[DirEntry], out: &mut Vec<u8>) {
    put_varint(out, entries.len() as u64);
    for e in entries {
        put_bytes(out, e.name.as_bytes());
        out.push(kind_byte(e.kind));
        put_varint(out, e.node.raw());
    }
}

pub fn decode_dir(payload: &[u8]) -> Result<Vec<DirEntry>, Corruption> {
    let mut c = Cursor::new(payload, "DIR");
    let n = c.varint()?;
    let mut entries: Vec<DirEntry> = Vec::with_capacity(n.min(65536) as usize);
    for _ in 0..n {
        let name = c.string()?;
        let kind = kind_from(c.u8()?, &c)?;
        let node = NodeRevId::from_raw(c.varint()?);
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
                put_varint(out, e.node.raw());
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
                let node = NodeRevId::from_raw(c.varint()?);
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

impl Codec for RevMeta {
    fn encode(&self, out: &mut Vec<u8>) {
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
            put_varint(out, ch.node.raw());
        }
    }

    fn decode(payload: &[u8]) -> Result<RevMeta, Corruption> {
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
            let node = NodeRevId::from_raw(c.varint()?);
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
            predecessor: NodeRevId::from_raw(1234),
            pred_count: 3,
            created_rev: 9,
            created_path: "trunk/ü x".into(),
            copyfrom: Some((4, "branches/b".into())),
            copyroot: (9, "trunk".into()),
            props: PropsId::from_raw(99),
            props_key: 5 << 32 | 1,
            text_key: 5 << 32 | 2,
            text: Some(FileText {
                rep: TextId::from_raw(5),
                size: 6,
                md5: Md5([1; 16]),
                sha1: Sha1([2; 20]),
            }),
            entries: ListingId::NONE,
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
            node: NodeRevId::from_raw(1),
        };
        encode_dir(&[e("b"), e("a")], &mut b);
        assert!(decode_dir(&b).is_err());
    }
}
