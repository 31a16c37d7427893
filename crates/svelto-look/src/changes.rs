//! What `svnlook changed`, `dirs-changed` and `diff` see of a revision: the tree of
//! changes Subversion's node editor (`svn_repos_node_editor`) builds from a replay of the
//! revision against its predecessor. Each node is an add (`A`, with its copy source), a
//! delete (`D`) or an open (`R`, with the text and property modification flags), in the
//! order the replay visits them; a replacement is a delete followed by an add of the same
//! name. The CLI prints the tree; this module holds no formatting.
//!
//! A transaction opened with a backend's `open_txn` is the youngest revision of
//! that view, so the same functions serve `-t TXN`.

use svelto_core::{join, parent_and_name, Md5, NodeKind, Revnum};
use svelto_fs::ReadRepo;
use svelto_repos::{replay, Editor, ReplayOptions, ReposError, Result, SvnErrorKind, Token};

/// One node of the change tree (Subversion's `svn_repos_node_t`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangeNode {
    /// The entry name ("" for the root).
    pub name: String,
    pub kind: NodeKind,
    /// `b'A'` added, `b'D'` deleted, `b'R'` opened (changed or on the way to a change).
    pub action: u8,
    pub text_mod: bool,
    pub prop_mod: bool,
    /// The copy source of an add with history: (revision, relpath).
    pub copyfrom: Option<(Revnum, String)>,
    pub children: Vec<ChangeNode>,
}

/// The change tree of `rev` against `rev - 1`; None for revision 0 and for a revision
/// that changes nothing.
pub fn change_tree(repo: &dyn ReadRepo, rev: Revnum) -> Result<Option<ChangeNode>> {
    if rev == 0 {
        repo.root(0)?;
        return Ok(None);
    }
    let mut b = TreeBuilder {
        repo,
        rev,
        base_rev: rev - 1,
        nodes: Vec::new(),
        root: None,
    };
    // svnlook replays with deltas, and the node editor marks a text change at every
    // apply_textdelta and a property change at every property the replay finds changed.
    // A replay without deltas calls apply_textdelta for the same files (those the changed
    // paths say were modified) without computing a delta; its property changes are the
    // changed paths' flags, which [`TreeBuilder::props_changed`] checks against the
    // properties themselves.
    let opts = ReplayOptions {
        base_dir: String::new(),
        low_water_mark: 0,
        send_deltas: false,
        text: Default::default(),
    };
    replay(repo, rev, &opts, &mut b)?;
    Ok(b.root.map(|r| b.build(r)))
}

/// The directories `svnlook dirs-changed` names, as relpaths in the tree's order: those
/// whose properties changed, that have a file child that changed, or that gained or lost
/// an entry.
pub fn dirs_changed(tree: &ChangeNode) -> Vec<String> {
    let mut out = Vec::new();
    walk_dirs(tree, "", &mut out);
    out
}

fn walk_dirs(node: &ChangeNode, path: &str, out: &mut Vec<String>) {
    if node.kind != NodeKind::Dir {
        return;
    }
    let listed = node.prop_mod
        || node
            .children
            .iter()
            .any(|c| c.kind == NodeKind::File || c.action == b'A' || c.action == b'D');
    if listed {
        out.push(path.to_string());
    }
    for c in &node.children {
        walk_dirs(c, &join(path, &c.name), out);
    }
}

struct Slot {
    node: ChangeNode,
    /// The relpath in the replayed revision.
    path: String,
    parent: Option<usize>,
    children: Vec<usize>,
}

/// Builds the tree from the replay's editor calls, as the node editor does.
struct TreeBuilder<'r> {
    repo: &'r dyn ReadRepo,
    rev: Revnum,
    base_rev: Revnum,
    nodes: Vec<Slot>,
    root: Option<usize>,
}

impl TreeBuilder<'_> {
    fn slot(&mut self, t: Token) -> Result<&mut Slot> {
        self.nodes
            .get_mut(t as usize)
            .ok_or_else(|| ReposError::Corrupt(format!("replay named unknown node {t}")))
    }

    fn new_child(
        &mut self,
        parent: Token,
        name: &str,
        kind: NodeKind,
        action: u8,
    ) -> Result<Token> {
        let idx = self.nodes.len();
        let parent_slot = self.slot(parent)?;
        parent_slot.children.push(idx);
        let path = join(&parent_slot.path, name);
        self.nodes.push(Slot {
            path,
            node: ChangeNode {
                name: name.to_string(),
                kind,
                action,
                text_mod: false,
                prop_mod: false,
                copyfrom: None,
                children: Vec::new(),
            },
            parent: Some(parent as usize),
            children: Vec::new(),
        });
        token(idx)
    }

    fn add_open(
        &mut self,
        path: &str,
        parent: Token,
        kind: NodeKind,
        action: u8,
        copyfrom: Option<(&str, Revnum)>,
    ) -> Result<Token> {
        let t = self.new_child(parent, parent_and_name(path).1, kind, action)?;
        self.slot(t)?.node.copyfrom =
            copyfrom.map(|(p, r)| (r, p.trim_start_matches('/').to_string()));
        Ok(t)
    }

    /// Where the node was before this revision: the copy source of the nearest added
    /// ancestor with history, else the same path in the base revision.
    fn base_location(&self, idx: usize) -> (String, Option<Revnum>) {
        let mut names: Vec<String> = Vec::new();
        let mut at = Some(idx);
        while let Some(i) = at {
            let slot = &self.nodes[i];
            if slot.node.action == b'A' {
                if let Some((r, p)) = &slot.node.copyfrom {
                    let mut path = p.clone();
                    for n in names.iter().rev() {
                        path = join(&path, n);
                    }
                    return (path, Some(*r));
                }
            }
            if slot.parent.is_some() {
                names.push(slot.node.name.clone());
            }
            at = slot.parent;
        }
        let mut path = String::new();
        for n in names.iter().rev() {
            path = join(&path, n);
        }
        (path, None)
    }

    /// Where a replay with deltas takes a node's old properties from: the copy source of
    /// an add with history (and of the nodes inside it), nothing for an add without
    /// history (or a node inside one that is inside a copy), else the same path in the
    /// base revision.
    fn prop_base(&self, idx: usize) -> Option<(String, Revnum)> {
        let mut names: Vec<&str> = Vec::new();
        let mut at = Some(idx);
        let mut plain_add_below = false;
        while let Some(i) = at {
            let slot = &self.nodes[i];
            if slot.node.action == b'A' {
                match &slot.node.copyfrom {
                    Some((r, p)) if !plain_add_below => {
                        let mut path = p.clone();
                        for n in names.iter().rev() {
                            path = join(&path, n);
                        }
                        return Some((path, *r));
                    }
                    Some(_) => return None,
                    None if i == idx => return None,
                    None => plain_add_below = true,
                }
            }
            names.push(&slot.node.name);
            at = slot.parent;
        }
        Some((self.nodes[idx].path.clone(), self.base_rev))
    }

    /// Whether the node's properties differ from its replay source's.
    fn props_changed(&self, idx: usize) -> Result<bool> {
        let path = &self.nodes[idx].path;
        let new = match self.repo.lookup(self.rev, path)? {
            Some((_, n)) => self.repo.props(&n)?,
            None => return Ok(false),
        };
        let old = match self.prop_base(idx) {
            Some((p, r)) => match self.repo.lookup(r, &p)? {
                Some((_, n)) => self.repo.props(&n)?,
                None => Default::default(),
            },
            None => Default::default(),
        };
        Ok(old != new)
    }

    fn mark_props(&mut self, t: Token) -> Result<()> {
        let idx = t as usize;
        if self.slot(t)?.node.prop_mod {
            return Ok(());
        }
        if self.props_changed(idx)? {
            self.nodes[idx].node.prop_mod = true;
        }
        Ok(())
    }

    fn build(&mut self, idx: usize) -> ChangeNode {
        let children = std::mem::take(&mut self.nodes[idx].children);
        let mut node = self.nodes[idx].node.clone();
        node.children = children.into_iter().map(|c| self.build(c)).collect();
        node
    }
}

fn token(idx: usize) -> Result<Token> {
    Token::try_from(idx).map_err(|_| ReposError::Internal("too many changed nodes".into()))
}

impl Editor for TreeBuilder<'_> {
    fn target_rev(&mut self, _rev: Revnum) -> Result<()> {
        Ok(())
    }

    fn open_root(&mut self, _base_rev: Option<Revnum>) -> Result<Token> {
        let idx = self.nodes.len();
        self.nodes.push(Slot {
            node: ChangeNode {
                name: String::new(),
                kind: NodeKind::Dir,
                action: b'R',
                text_mod: false,
                prop_mod: false,
                copyfrom: None,
                children: Vec::new(),
            },
            path: String::new(),
            parent: None,
            children: Vec::new(),
        });
        self.root = Some(idx);
        token(idx)
    }

    fn delete_entry(&mut self, path: &str, _rev: Option<Revnum>, parent: Token) -> Result<()> {
        let name = parent_and_name(path).1;
        let existing = self
            .slot(parent)?
            .children
            .clone()
            .into_iter()
            .find(|&c| self.nodes[c].node.name == name);
        let idx = match existing {
            Some(i) => i,
            None => self.new_child(parent, name, NodeKind::File, b'D')? as usize,
        };
        self.nodes[idx].node.action = b'D';
        let (base_path, base_rev) = self.base_location(idx);
        let rev = base_rev.unwrap_or(self.base_rev);
        match self.repo.lookup(rev, &base_path)? {
            Some((_, n)) => self.nodes[idx].node.kind = n.kind,
            None => {
                return Err(ReposError::svn(
                    SvnErrorKind::NotFound,
                    format!("'{path}' not found in filesystem"),
                ))
            }
        }
        Ok(())
    }

    fn add_dir(
        &mut self,
        path: &str,
        parent: Token,
        copyfrom: Option<(&str, Revnum)>,
    ) -> Result<Token> {
        self.add_open(path, parent, NodeKind::Dir, b'A', copyfrom)
    }

    fn open_dir(&mut self, path: &str, parent: Token, _base_rev: Option<Revnum>) -> Result<Token> {
        self.add_open(path, parent, NodeKind::Dir, b'R', None)
    }

    fn change_dir_prop(&mut self, dir: Token, _name: &[u8], _value: Option<&[u8]>) -> Result<()> {
        self.mark_props(dir)
    }

    fn close_dir(&mut self, _dir: Token) -> Result<()> {
        Ok(())
    }

    fn absent_dir(&mut self, _path: &str, _parent: Token) -> Result<()> {
        Ok(())
    }

    fn add_file(
        &mut self,
        path: &str,
        parent: Token,
        copyfrom: Option<(&str, Revnum)>,
    ) -> Result<Token> {
        self.add_open(path, parent, NodeKind::File, b'A', copyfrom)
    }

    fn open_file(&mut self, path: &str, parent: Token, _base_rev: Option<Revnum>) -> Result<Token> {
        self.add_open(path, parent, NodeKind::File, b'R', None)
    }

    fn apply_textdelta(&mut self, file: Token, _base_md5: Option<&Md5>) -> Result<()> {
        self.slot(file)?.node.text_mod = true;
        Ok(())
    }

    fn textdelta_chunk(&mut self, _file: Token, _chunk: &[u8]) -> Result<()> {
        Ok(())
    }

    fn textdelta_end(&mut self, _file: Token) -> Result<()> {
        Ok(())
    }

    fn change_file_prop(&mut self, file: Token, _name: &[u8], _value: Option<&[u8]>) -> Result<()> {
        self.mark_props(file)
    }

    fn close_file(&mut self, _file: Token, _text_md5: Option<&Md5>) -> Result<()> {
        Ok(())
    }

    fn absent_file(&mut self, _path: &str, _parent: Token) -> Result<()> {
        Ok(())
    }

    fn close_edit(&mut self) -> Result<()> {
        Ok(())
    }

    fn abort_edit(&mut self) -> Result<()> {
        Ok(())
    }
}
