//! The records a backend hands out: node-revisions, listings, revision metadata.

use std::sync::{Arc, OnceLock};
use svelto_core::{
    ChangeKind, ListingId, Md5, NodeKind, NodeRevId, PropList, PropsId, Revnum, Sha1, TextId,
};

/// A file's contents as a node-revision knows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileText {
    /// The stored contents; `NONE` for empty contents.
    pub rep: TextId,
    pub size: u64,
    pub md5: Md5,
    pub sha1: Sha1,
}

impl FileText {
    pub const EMPTY: FileText = FileText {
        rep: TextId::NONE,
        size: 0,
        md5: svelto_core::EMPTY_MD5,
        sha1: Sha1([
            0xda, 0x39, 0xa3, 0xee, 0x5e, 0x6b, 0x4b, 0x0d, 0x32, 0x55, 0xbf, 0xef, 0x95, 0x60,
            0x18, 0x90, 0xaf, 0xd8, 0x07, 0x09,
        ]),
    };
}

/// A node-revision: one version of a file or directory (Subversion's `node_revision_t`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeRev {
    pub kind: NodeKind,
    /// Identity of the line of history ("related" means equal node ids): not an id.
    pub node_id: u64,
    /// 0 = no copy; each copy gets a fresh one.
    pub copy_id: u64,
    pub predecessor: NodeRevId,
    pub pred_count: u64,
    pub created_rev: Revnum,
    pub created_path: String,
    pub copyfrom: Option<(Revnum, String)>,
    pub copyroot: (Revnum, String),
    pub props: PropsId,
    /// Identity of the last property change: a new key each time properties are set, kept
    /// by copies (FSFS's representation "uniquifier"); 0 = never set. Subversion's dump
    /// decides "properties changed" by this identity, not by content.
    pub props_key: u64,
    /// Files only.
    pub text: Option<FileText>,
    /// Identity of the last text change, as `props_key`.
    pub text_key: u64,
    /// Directories only: the listing, `NONE` when empty.
    pub entries: ListingId,
}

impl NodeRev {
    /// Revision 0's root: an empty directory with no properties.
    pub fn empty_root() -> NodeRev {
        NodeRev {
            kind: NodeKind::Dir,
            node_id: 0,
            copy_id: 0,
            predecessor: NodeRevId::NONE,
            pred_count: 0,
            created_rev: 0,
            created_path: String::new(),
            copyfrom: None,
            copyroot: (0, String::new()),
            props: PropsId::NONE,
            props_key: 0,
            text: None,
            text_key: 0,
            entries: ListingId::NONE,
        }
    }

    /// The node opened for change at `path` in a transaction (this one is `id`'s): its
    /// successor, not yet copied from anywhere; reached through a copy of a parent
    /// (`created_path` differs), it lives on that parent's copy. Both backends' transaction
    /// trees open nodes by this rule.
    pub fn successor(&self, id: NodeRevId, path: &str, parent: &NodeRev) -> NodeRev {
        let mut node = self.clone();
        node.predecessor = id;
        node.pred_count += 1;
        node.copyfrom = None;
        if self.created_path != path {
            node.copy_id = parent.copy_id;
            node.copyroot = parent.copyroot.clone();
        }
        node.created_path = path.to_string();
        node
    }

    /// The contents of a file node (empty for a directory).
    pub fn file_text(&self) -> FileText {
        self.text.unwrap_or(FileText::EMPTY)
    }
}

/// One entry of a directory listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirEntry {
    pub name: String,
    pub kind: NodeKind,
    pub node: NodeRevId,
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
    /// The node-revision at `path` in this revision; `NONE` for deletes.
    pub node: NodeRevId,
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
}

/// A revision's root and the node and copy identities it left unused (Subversion's
/// "related" is equal node ids; `svn_fs_node_origin_rev` searches by them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RevInfo {
    pub root: NodeRevId,
    pub next_node_id: u64,
    pub next_copy_id: u64,
}

/// What a directory entry is, as `svn ls` shows it: from its node-revision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Listed {
    pub kind: NodeKind,
    /// The revision that last changed it.
    pub created_rev: Revnum,
    /// A file's size (0 for a directory).
    pub size: u64,
    pub has_props: bool,
    /// A directory's own listing (`NONE` for a file or an empty directory).
    pub entries: ListingId,
}

impl Listed {
    pub fn of(n: &NodeRev) -> Listed {
        Listed {
            kind: n.kind,
            created_rev: n.created_rev,
            size: n.file_text().size,
            has_props: n.props.is_some(),
            entries: n.entries,
        }
    }
}

/// A directory's listing and, entry by entry, what each entry is.
pub type ListedDir = (Arc<Vec<DirEntry>>, Arc<Vec<Listed>>);

/// What [`crate::ReadRepo::stored_stream_or_text`] gives.
pub enum Stored {
    /// The svndiff stream a self-contained text is stored as, header included.
    Stream(Arc<Vec<u8>>),
    /// The contents of a text stored as a delta, or of an empty one.
    Text(Arc<Vec<u8>>),
}

/// One step of a node's history: where and when a node-revision was created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistoryEntry {
    pub rev: Revnum,
    pub path: String,
    /// Set when this node-revision was made by a copy.
    pub copyfrom: Option<(Revnum, String)>,
}
