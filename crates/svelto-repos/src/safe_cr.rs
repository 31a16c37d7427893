//! mod_dav_svn's "safe created revision" (`dav_svn__get_safe_cr`): the revision its
//! `checked-in` and `bc-url` hrefs name for a node, so that the href reaches the same node
//! in that revision as at its path in the revision asked about. A rule of the repository's
//! history, not of a wire: the HTTP front end names these revisions in its hrefs.

use std::collections::HashMap;

use crate::Node;
use std::sync::Arc;
use svelto_core::Revnum;
use svelto_fs::ReadRepo;

/// Safe created revisions of nodes in one revision, remembering for each directory asked
/// about the youngest copy at or above it.
pub struct SafeCr {
    repo: Arc<dyn ReadRepo>,
    rev: Revnum,
    copies: HashMap<String, Revnum>,
}

impl SafeCr {
    pub(crate) fn new(repo: Arc<dyn ReadRepo>, rev: Revnum) -> SafeCr {
        SafeCr {
            repo,
            rev,
            copies: HashMap::new(),
        }
    }

    /// The revision of the last history entry of `node` at `path` (its last change, or the
    /// copy that brought it or a directory above it here) when the same node-revision is
    /// at `path` there, else the revision asked about.
    pub fn get(&mut self, path: &str, node: &Node) -> Revnum {
        let node = &node.0;
        // Created here and no directory above copied since: its creation is its last entry.
        if node.created_path.trim_start_matches('/') == path
            && self.youngest_copy(parent(path)) <= node.created_rev
        {
            return node.created_rev;
        }
        let Ok(Some((off, _))) = self.repo.lookup(self.rev, path) else {
            return self.rev;
        };
        crate::NodeHistory::new(&*self.repo, self.rev, path)
            .and_then(|mut h| h.prev())
            .ok()
            .flatten()
            .map(|(_, r)| r)
            .filter(|&r| matches!(self.repo.lookup(r, path), Ok(Some((o, _))) if o == off))
            .unwrap_or(self.rev)
    }

    /// The youngest revision that copied `dir` or a directory above it to where it is (0
    /// when none did).
    fn youngest_copy(&mut self, dir: &str) -> Revnum {
        if dir.is_empty() {
            return 0;
        }
        if let Some(&r) = self.copies.get(dir) {
            return r;
        }
        let above = self.youngest_copy(parent(dir));
        let own = match self.repo.lookup(self.rev, dir) {
            Ok(Some((_, n))) if n.copyfrom.is_some() => n.created_rev,
            _ => 0,
        };
        let r = above.max(own);
        self.copies.insert(dir.to_string(), r);
        r
    }
}

fn parent(path: &str) -> &str {
    path.rfind('/').map_or("", |i| &path[..i])
}
