//! The seam's contract checked on a backend's repository: every backend's tests call
//! [`check`] on the histories they build, so the local engine and the in-memory one (and
//! the cluster's) are held to the same rules.

use crate::{ListingId, NodeRevId, ReadRepo, Stored, TextId};
use std::collections::HashMap;
use std::io::Read;
use svelto_core::{NodeKind, Revnum, Sha1};

/// What [`check`] looked at.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Checked {
    pub revisions: u64,
    pub nodes: u64,
    pub texts: u64,
}

/// Walks every revision's tree and checks the contract of docs/formats/store.md's
/// "Ids" and the provided methods' agreement with the required ones:
/// - a record names only ids smaller than its own (predecessor, properties, text,
///   listing, a listing's entries); a revision's root is greater than every earlier root;
/// - `NONE` exactly where nothing is stored (empty contents, no properties, an empty
///   listing); every entry's node is not `NONE`;
/// - equal text ids have equal checksums and sizes;
/// - `lookup` finds what the walk found, `changed_node` agrees with `lookup`, `listed`
///   with one `node` per entry, `text_reader` and `stored_stream_or_text` with `text`;
/// - `history` ends, each step's revision no later than the one before.
///
/// Returns what it checked, or the first violation, naming revision and path.
pub fn check(repo: &dyn ReadRepo) -> Result<Checked, String> {
    let mut c = Checker {
        repo,
        texts: HashMap::new(),
        seen: HashMap::new(),
        done: Checked::default(),
    };
    let mut last_root = NodeRevId::NONE;
    for rev in 0..=repo.youngest() {
        let root = repo.root(rev).map_err(|e| format!("r{rev}: root: {e}"))?;
        if root.is_none() {
            return Err(format!("r{rev}: the root is NONE"));
        }
        if rev > 0 && root < last_root {
            return Err(format!(
                "r{rev}: root {root:?} before r{}'s {last_root:?}",
                rev - 1
            ));
        }
        last_root = root;
        c.walk(rev, root, "")?;
        let meta = repo
            .rev_meta(rev)
            .map_err(|e| format!("r{rev}: rev_meta: {e}"))?;
        for ch in meta.changes.iter() {
            let changed = repo
                .changed_node(rev, &ch.path)
                .map_err(|e| format!("r{rev} {}: changed_node: {e}", ch.path))?;
            if let Some((id, _)) = changed {
                let found = repo
                    .lookup(rev, &ch.path)
                    .map_err(|e| format!("r{rev} {}: lookup: {e}", ch.path))?;
                if found.map(|(i, _)| i) != Some(id) {
                    return Err(format!(
                        "r{rev} {}: changed_node disagrees with lookup",
                        ch.path
                    ));
                }
            }
        }
        c.done.revisions += 1;
    }
    Ok(c.done)
}

struct Checker<'a> {
    repo: &'a dyn ReadRepo,
    texts: HashMap<TextId, (Sha1, u64)>,
    /// Node-revisions already checked (copies share subtrees).
    seen: HashMap<NodeRevId, ()>,
    done: Checked,
}

impl Checker<'_> {
    fn walk(&mut self, rev: Revnum, id: NodeRevId, path: &str) -> Result<(), String> {
        let at = |what: &str| format!("r{rev} '{path}': {what}");
        let repo = self.repo;
        let n = repo.node(id).map_err(|e| at(&format!("node: {e}")))?;
        let found = repo
            .lookup(rev, path)
            .map_err(|e| at(&format!("lookup: {e}")))?;
        if found.as_ref().map(|(i, _)| *i) != Some(id) {
            return Err(at("lookup finds another node-revision"));
        }
        if self.seen.insert(id, ()).is_some() {
            return Ok(());
        }
        self.done.nodes += 1;
        let named = [
            ("predecessor", n.predecessor.raw()),
            ("properties", n.props.raw()),
            ("listing", n.entries.raw()),
            ("text", n.text.map_or(0, |t| t.rep.raw())),
        ];
        if let Some((what, _)) = named.iter().find(|(_, raw)| *raw >= id.raw()) {
            return Err(at(&format!("its {what} id is not smaller than its own")));
        }
        let props = repo.props(&n).map_err(|e| at(&format!("props: {e}")))?;
        if props.is_empty() != n.props.is_none() {
            return Err(at("properties NONE exactly when there are none: violated"));
        }
        let history = repo
            .history(rev, path)
            .map_err(|e| at(&format!("history: {e}")))?;
        if history.windows(2).any(|w| w[1].rev > w[0].rev) || history.is_empty() {
            return Err(at("history goes forward in revisions"));
        }
        match n.kind {
            NodeKind::File => self.file(&n, &at),
            NodeKind::Dir => {
                if n.text.is_some() {
                    return Err(at("a directory with a text"));
                }
                let entries = repo.dir(&n).map_err(|e| at(&format!("listing: {e}")))?;
                if entries.is_empty() != (n.entries == ListingId::NONE) {
                    return Err(at("listing NONE exactly when empty: violated"));
                }
                let (listed_entries, listed) = repo
                    .listed(n.entries)
                    .map_err(|e| at(&format!("listed: {e}")))?;
                if *listed_entries != *entries || listed.len() != entries.len() {
                    return Err(at("listed disagrees with the listing"));
                }
                for (e, l) in entries.iter().zip(listed.iter()) {
                    if e.node.is_none() || e.node >= id {
                        return Err(at(&format!(
                            "entry '{}': id not smaller than its parent's",
                            e.name
                        )));
                    }
                    let child = repo
                        .node(e.node)
                        .map_err(|err| at(&format!("{}: {err}", e.name)))?;
                    if crate::Listed::of(&child) != *l || child.kind != e.kind {
                        return Err(at(&format!("entry '{}': listed or kind disagrees", e.name)));
                    }
                }
                for e in entries.iter() {
                    let p = svelto_core::join(path, &e.name);
                    self.walk(rev, e.node, &p)?;
                }
                Ok(())
            }
        }
    }

    fn file(&mut self, n: &crate::NodeRev, at: &dyn Fn(&str) -> String) -> Result<(), String> {
        let repo = self.repo;
        let Some(t) = n.text else {
            return Err(at("a file without a text"));
        };
        if t.rep.is_none() != (t.size == 0) {
            return Err(at("text NONE exactly when empty: violated"));
        }
        if let Some(&(sha1, size)) = self.texts.get(&t.rep) {
            if (sha1, size) != (t.sha1, t.size) {
                return Err(at("equal text ids with unequal checksums"));
            }
            return Ok(());
        }
        self.texts.insert(t.rep, (t.sha1, t.size));
        self.done.texts += 1;
        let whole = repo.read_text(&t).map_err(|e| at(&format!("text: {e}")))?;
        if whole.len() as u64 != t.size {
            return Err(at("text's length is not its size"));
        }
        let mut streamed = Vec::new();
        repo.text_reader(&t)
            .and_then(|mut r| {
                r.read_to_end(&mut streamed)
                    .map_err(|err| crate::StoreError::Io {
                        context: "text_reader".into(),
                        err,
                    })
            })
            .map_err(|e| at(&format!("text_reader: {e}")))?;
        if streamed != *whole {
            return Err(at("text_reader disagrees with text"));
        }
        match repo
            .stored_stream_or_text(&t)
            .map_err(|e| at(&format!("stored_stream_or_text: {e}")))?
        {
            Stored::Text(x) if *x != *whole => return Err(at("stored text disagrees with text")),
            Stored::Stream(s) => {
                let limits = svelto_delta::Limits::default();
                let decoded = svelto_delta::decode_stream(&s, &limits)
                    .and_then(|w| svelto_delta::apply_windows(&w, &[]))
                    .map_err(|e| at(&format!("stored stream: {e}")))?;
                if decoded != *whole {
                    return Err(at("stored stream disagrees with text"));
                }
            }
            Stored::Text(_) => {}
        }
        Ok(())
    }
}
