//! A node of a revision's tree as the front ends read it (`stat`, `get-file`, `get-dir`,
//! `check-path`, `list` over svn://; `svn ls` over HTTP): its kind, the revision that last
//! changed it, its size and checksum, whether it has properties. The store's node-revision
//! stays inside svelto-repos; reading a node's properties, text or entries goes through
//! [`crate::service::Ctx`].
//!
//! Only svelto-repos makes a [`Node`], and the service makes one only by a lookup that
//! checked the path against the client's authz rules: holding a node is the proof that its
//! path may be read, so reading its properties or text needs no second check.

use std::sync::Arc;
use svelto_core::{Md5, NodeKind, Revnum, Sha1};
use svelto_fs::NodeRev;

/// One node-revision and the repository relpath it was found at (a cheap handle: cloning
/// it copies two pointers). Outside svelto-repos a node cannot be made, only found through
/// the service's checked lookups:
///
/// ```compile_fail
/// fn forge(n: std::sync::Arc<svelto_fs::NodeRev>) -> svelto_repos::Node {
///     svelto_repos::Node(n, "trunk/secret".into())
/// }
/// ```
#[derive(Debug, Clone)]
pub struct Node(pub(crate) Arc<NodeRev>, pub(crate) Arc<str>);

impl Node {
    /// The repository relpath the node was looked up at ("" for the root).
    pub fn path(&self) -> &str {
        &self.1
    }

    pub fn kind(&self) -> NodeKind {
        self.0.kind
    }

    /// The revision that last changed the node (Subversion's `created-rev`).
    pub fn created_rev(&self) -> Revnum {
        self.0.created_rev
    }

    /// Whether the node has any properties: the store never writes an empty property
    /// list, so a node has properties exactly when it points at one (no read needed).
    pub fn has_props(&self) -> bool {
        self.0.props.is_some()
    }

    /// A file's size in bytes (0 for a directory).
    pub fn size(&self) -> u64 {
        self.0.file_text().size
    }

    /// A file's MD5 checksum (that of empty contents for a directory).
    pub fn md5(&self) -> Md5 {
        self.0.file_text().md5
    }

    /// A file's SHA-1 checksum (that of empty contents for a directory).
    pub fn sha1(&self) -> Sha1 {
        self.0.file_text().sha1
    }
}

/// An entry of a listing as `svn ls` shows it (over svn:// and HTTP): its kind, the revision
/// that last changed it, its size, whether it has properties. Read from the node-revision
/// once and kept with the directory's listing.
#[derive(Debug, Clone, Copy)]
pub struct ListedNode(pub(crate) svelto_fs::Listed);

impl ListedNode {
    pub fn kind(&self) -> NodeKind {
        self.0.kind
    }

    /// The revision that last changed the node (Subversion's `created-rev`).
    pub fn created_rev(&self) -> Revnum {
        self.0.created_rev
    }

    /// Whether the node has any properties.
    pub fn has_props(&self) -> bool {
        self.0.has_props
    }

    /// A file's size in bytes (0 for a directory).
    pub fn size(&self) -> u64 {
        self.0.size
    }
}

impl From<&Node> for ListedNode {
    fn from(n: &Node) -> ListedNode {
        ListedNode(svelto_fs::Listed::of(&n.0))
    }
}
