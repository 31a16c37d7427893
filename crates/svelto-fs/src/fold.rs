//! A transaction's changed paths, folded as Subversion folds them (FSFS `fold_change`):
//! every backend's transaction records its operations here, so that `log -v`, replay and
//! dump see the same changed paths whatever stored the revision.

use std::collections::{BTreeMap, HashMap};
use svelto_core::{ChangeKind, NodeKind, Revnum};

/// One path's change so far in a transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathChange {
    pub change: ChangeKind,
    pub kind: Option<NodeKind>,
    pub text_mod: bool,
    pub prop_mod: bool,
    pub copyfrom: Option<(Revnum, String)>,
}

/// The changed paths of a transaction, folded as each operation is recorded.
#[derive(Debug, Default)]
pub struct FoldedChanges {
    map: BTreeMap<String, PathChange>,
    /// Deletions that a later add turned into a replace, restored if that is deleted again.
    deletions: HashMap<String, PathChange>,
}

impl FoldedChanges {
    /// Records `new` at `path`, folded into what the path already had: a delete of an add
    /// is nothing, an add over a delete is a replace, modifications accumulate, and a
    /// delete or replace drops what was recorded below the path.
    pub fn record(&mut self, path: &str, new: PathChange) {
        let kind = new.change;
        match self.map.get_mut(path) {
            None => {
                self.map.insert(path.to_string(), new);
            }
            Some(old) => match kind {
                ChangeKind::Delete => match old.change {
                    ChangeKind::Add => {
                        self.map.remove(path);
                    }
                    ChangeKind::Replace => match self.deletions.remove(path) {
                        Some(orig) => *old = orig,
                        None => *old = new,
                    },
                    _ => *old = new,
                },
                ChangeKind::Add | ChangeKind::Replace => {
                    let orig = std::mem::replace(
                        old,
                        PathChange {
                            change: ChangeKind::Replace,
                            ..new
                        },
                    );
                    self.deletions.insert(path.to_string(), orig);
                }
                ChangeKind::Modify => {
                    old.text_mod |= new.text_mod;
                    old.prop_mod |= new.prop_mod;
                }
            },
        }
        if matches!(kind, ChangeKind::Delete | ChangeKind::Replace) {
            let prefix = if path.is_empty() {
                String::new()
            } else {
                format!("{path}/")
            };
            let children: Vec<String> = self
                .map
                .range(prefix.clone()..)
                .take_while(|(k, _)| k.starts_with(&prefix))
                .filter(|(k, _)| !k.is_empty() && k.as_str() != path)
                .map(|(k, _)| k.clone())
                .collect();
            for c in children {
                self.map.remove(&c);
            }
        }
    }

    /// The folded changes by path.
    pub fn paths(&self) -> &BTreeMap<String, PathChange> {
        &self.map
    }

    /// Takes the folded changes, leaving none.
    pub fn take(&mut self) -> BTreeMap<String, PathChange> {
        self.deletions.clear();
        std::mem::take(&mut self.map)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ch(change: ChangeKind) -> PathChange {
        PathChange {
            change,
            kind: Some(NodeKind::File),
            text_mod: false,
            prop_mod: false,
            copyfrom: None,
        }
    }

    #[test]
    fn changes_fold_as_subversion_folds_them() {
        let mut f = FoldedChanges::default();
        f.record("a", ch(ChangeKind::Add));
        f.record("a", ch(ChangeKind::Delete));
        assert!(f.paths().is_empty(), "a delete of an add is nothing");
        f.record("d", ch(ChangeKind::Modify));
        f.record("d/x", ch(ChangeKind::Modify));
        f.record("d", ch(ChangeKind::Delete));
        f.record("d", ch(ChangeKind::Add));
        assert_eq!(f.paths().len(), 1, "a delete drops what lay below");
        assert_eq!(f.paths()["d"].change, ChangeKind::Replace);
        f.record("d", ch(ChangeKind::Delete));
        assert_eq!(
            f.paths()["d"].change,
            ChangeKind::Delete,
            "the delete is back"
        );
        let mut m = ch(ChangeKind::Modify);
        m.text_mod = true;
        f.record("e", m);
        let mut p = ch(ChangeKind::Modify);
        p.prop_mod = true;
        f.record("e", p);
        assert!(f.paths()["e"].text_mod && f.paths()["e"].prop_mod);
        assert_eq!(f.take().len(), 2);
        assert!(f.paths().is_empty());
    }
}
