//! An in-memory working copy: what a report describes, what an editor drive does to it
//! (checked as strictly as the client checks: base and result MD5s, nesting, tokens), and
//! what it should look like after the drive.

use md5::{Digest, Md5 as Md5Hasher};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use svelto_core::{join, parent_and_name, Depth, Md5, NodeKind, PropList, Revnum};
use svelto_delta::{apply_windows, decode_stream, Limits};
use svelto_repos::editor::{Call, Token};
/// A repository as the seam's callers read it (the local engine, opened by the testkit).
type Repo = dyn svelto_fs::ReadRepo;

/// Stands for a text the drive changed without sending it (`status`, `diff --summarize`).
pub const UNKNOWN_TEXT: &[u8] = b"\0<text not sent>\0";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    pub kind: NodeKind,
    pub props: PropList,
    /// The `svn:entry:*` properties.
    pub entry: PropList,
    pub text: Vec<u8>,
    /// Repository relpath this node comes from (its URL).
    pub url: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Wc {
    /// Anchor-relative path -> node; "" is the anchor.
    pub nodes: BTreeMap<String, Node>,
    /// Paths the user excluded (depth exclude): not present, but known to the working copy.
    pub excluded: BTreeSet<String>,
}

pub fn md5_of(bytes: &[u8]) -> Md5 {
    let mut h = Md5Hasher::new();
    h.update(bytes);
    Md5(h.finalize().into())
}

fn is_below(path: &str, ancestor: &str) -> bool {
    ancestor.is_empty() && !path.is_empty()
        || path
            .strip_prefix(ancestor)
            .is_some_and(|rest| rest.starts_with('/'))
}

impl Wc {
    pub fn remove_tree(&mut self, path: &str) {
        self.nodes.retain(|p, _| p != path && !is_below(p, path));
        self.excluded.retain(|p| p != path && !is_below(p, path));
    }
}

/// The entry props a node of `repo` gets (only those that exist).
pub fn entry_props(repo: &Repo, created_rev: Revnum) -> PropList {
    let revprops = repo.revprops(created_rev).expect("revprops");
    let mut e = PropList::new();
    e.insert(
        b"svn:entry:committed-rev".to_vec(),
        created_rev.to_string().into_bytes(),
    );
    if let Some(d) = revprops.get(&b"svn:date"[..]) {
        e.insert(b"svn:entry:committed-date".to_vec(), d.clone());
    }
    if let Some(a) = revprops.get(&b"svn:author"[..]) {
        e.insert(b"svn:entry:last-author".to_vec(), a.clone());
    }
    e.insert(
        b"svn:entry:uuid".to_vec(),
        repo.uuid().expect("uuid").into_bytes(),
    );
    e
}

/// Depth for the children of a directory at `depth`.
pub fn below(depth: Depth) -> Depth {
    if depth == Depth::Immediates {
        Depth::Empty
    } else {
        depth
    }
}

/// How the depth of each directory is found while copying a tree.
pub trait DepthOf {
    /// The depth of the directory at `e_path`, given `inherited` from its parent.
    fn depth(&self, e_path: &str, inherited: Depth) -> Depth;
    /// The URL of `e_path` when it differs from its parent's URL joined with its name.
    fn url(&self, e_path: &str) -> Option<String>;
    /// Whether `e_path` is excluded.
    fn excluded(&self, e_path: &str) -> bool;
    /// Children of `e_path` switched to another URL (present even when the directory has no
    /// entry of that name).
    fn linked_children(&self, _e_path: &str) -> Vec<String> {
        Vec::new()
    }
    /// For a path the report names: whether the drive walks it whatever the parent's depth
    /// (a target of `kind` there). None when the report does not name it.
    fn reported(&self, _e_path: &str, _kind: NodeKind) -> Option<bool> {
        None
    }
}

/// Plain inheritance, no links, no exclusions.
pub struct Inherit;

impl DepthOf for Inherit {
    fn depth(&self, _: &str, inherited: Depth) -> Depth {
        inherited
    }
    fn url(&self, _: &str) -> Option<String> {
        None
    }
    fn excluded(&self, _: &str) -> bool {
        false
    }
}

/// Copies the tree at `url`@`rev` into `wc` at `e_path`, children filtered by depth.
/// Returns false when `url` does not exist.
pub fn copy_tree(
    repo: &Repo,
    rev: Revnum,
    url: &str,
    e_path: &str,
    depth: Depth,
    rules: &dyn DepthOf,
    wc: &mut Wc,
) -> bool {
    let Some((_, node)) = repo.lookup(rev, url).expect("lookup") else {
        return false;
    };
    let props = repo.props(&node).expect("props");
    let entry = entry_props(repo, node.created_rev);
    let text = if node.kind == NodeKind::File {
        repo.read_text(&node.file_text()).expect("text").to_vec()
    } else {
        Vec::new()
    };
    wc.nodes.insert(
        e_path.to_string(),
        Node {
            kind: node.kind,
            props,
            entry,
            text,
            url: url.to_string(),
        },
    );
    if node.kind == NodeKind::Dir {
        let depth = rules.depth(e_path, depth);
        for child in repo.dir(&node).expect("dir").iter() {
            let child_e = join(e_path, &child.name);
            if rules.excluded(&child_e) {
                continue;
            }
            let keep = rules
                .reported(&child_e, child.kind)
                .unwrap_or(match child.kind {
                    NodeKind::File => depth >= Depth::Files,
                    NodeKind::Dir => depth >= Depth::Immediates,
                });
            if !keep {
                continue;
            }
            let child_url = rules
                .url(&child_e)
                .unwrap_or_else(|| join(url, &child.name));
            copy_tree(repo, rev, &child_url, &child_e, below(depth), rules, wc);
        }
        for name in rules.linked_children(e_path) {
            let child_e = join(e_path, &name);
            if wc.nodes.contains_key(&child_e) {
                continue;
            }
            if let Some(child_url) = rules.url(&child_e) {
                copy_tree(repo, rev, &child_url, &child_e, below(depth), rules, wc);
            }
        }
    }
    true
}

/// What a drive did besides changing the tree.
#[derive(Debug, Default)]
pub struct Applied {
    /// Paths opened or added.
    pub touched: BTreeSet<String>,
    /// Files that got a text delta.
    pub texts: BTreeSet<String>,
}

struct Open {
    path: String,
    kind: NodeKind,
    parent: Option<Token>,
    delta: Option<(Option<Md5>, Vec<u8>)>,
}

/// How strictly [`apply`] checks.
#[derive(Debug, Clone, Copy)]
pub struct Strictness {
    /// Texts are sent (false: only stream headers, as for status).
    pub deltas: bool,
    /// A shallow working copy: a deletion may name a path the working copy lacks (an entry
    /// of a kind the depth left out), and an add may name a path it has (the reporter sends
    /// entries whole when the depth grows, whatever is there).
    pub absent_deletes: bool,
}

impl Strictness {
    pub const FULL: Strictness = Strictness {
        deltas: true,
        absent_deletes: false,
    };
}

/// Applies a recorded drive to `wc`, checking it as the client would.
pub fn apply(
    wc: &mut Wc,
    calls: &[Call],
    repo: &Repo,
    strict: Strictness,
) -> Result<Applied, String> {
    let deltas = strict.deltas;
    let mut open: HashMap<Token, Open> = HashMap::new();
    let mut applied = Applied::default();
    let mut edit_open = false;
    let mut closed = false;
    let dir_of = |open: &HashMap<Token, Open>, t: Token| -> Result<String, String> {
        match open.get(&t) {
            Some(o) if o.kind == NodeKind::Dir => Ok(o.path.clone()),
            _ => Err(format!("token {t} is not an open directory")),
        }
    };
    let check_parent =
        |open: &HashMap<Token, Open>, path: &str, parent: Token| -> Result<(), String> {
            let p = dir_of(open, parent)?;
            if path.is_empty() || parent_and_name(path).0 != p {
                return Err(format!("'{path}' is not a child of '{p}'"));
            }
            Ok(())
        };
    for (i, call) in calls.iter().enumerate() {
        if closed {
            return Err(format!("call {i} after close_edit: {call:?}"));
        }
        let r: Result<(), String> = (|| {
            match call {
                Call::TargetRev(_) => {}
                Call::OpenRoot(_, t) => {
                    if edit_open {
                        return Err("open_root twice".into());
                    }
                    edit_open = true;
                    if !wc.nodes.contains_key("") {
                        return Err("no anchor".into());
                    }
                    open.insert(
                        *t,
                        Open {
                            path: String::new(),
                            kind: NodeKind::Dir,
                            parent: None,
                            delta: None,
                        },
                    );
                }
                Call::DeleteEntry(path, _, parent) => {
                    check_parent(&open, path, *parent)?;
                    if !wc.nodes.contains_key(path)
                        && !wc.excluded.contains(path)
                        && !strict.absent_deletes
                    {
                        return Err(format!("delete of '{path}', which is not there"));
                    }
                    if open
                        .values()
                        .any(|o| o.path == *path || is_below(&o.path, path))
                    {
                        return Err(format!("delete of '{path}' while open"));
                    }
                    wc.remove_tree(path);
                }
                Call::AddDir(path, parent, t, copyfrom)
                | Call::AddFile(path, parent, t, copyfrom) => {
                    check_parent(&open, path, *parent)?;
                    if wc.nodes.contains_key(path) {
                        if !strict.absent_deletes {
                            return Err(format!("add of '{path}', which is there"));
                        }
                        // Making a shallow working copy deeper sends entries as new whatever
                        // the working copy has there.
                        wc.remove_tree(path);
                    }
                    let kind = if matches!(call, Call::AddDir(..)) {
                        NodeKind::Dir
                    } else {
                        NodeKind::File
                    };
                    let mut node = Node {
                        kind,
                        props: PropList::new(),
                        entry: PropList::new(),
                        text: Vec::new(),
                        url: String::new(),
                    };
                    if let Some((from, rev)) = copyfrom {
                        if kind == NodeKind::Dir {
                            return Err("add_dir with copyfrom".into());
                        }
                        let from = from
                            .strip_prefix('/')
                            .ok_or_else(|| format!("copyfrom '{from}' is not an fspath"))?;
                        let (_, n) = repo
                            .lookup(*rev, from)
                            .map_err(|e| e.to_string())?
                            .ok_or_else(|| format!("copyfrom {from}@{rev} does not exist"))?;
                        node.props = repo.props(&n).map_err(|e| e.to_string())?;
                        node.text = repo
                            .read_text(&n.file_text())
                            .map_err(|e| e.to_string())?
                            .to_vec();
                    }
                    wc.excluded.remove(path);
                    wc.nodes.insert(path.clone(), node);
                    applied.touched.insert(path.clone());
                    open.insert(
                        *t,
                        Open {
                            path: path.clone(),
                            kind,
                            parent: Some(*parent),
                            delta: None,
                        },
                    );
                }
                Call::OpenDir(path, parent, t, _) | Call::OpenFile(path, parent, t, _) => {
                    check_parent(&open, path, *parent)?;
                    let kind = if matches!(call, Call::OpenDir(..)) {
                        NodeKind::Dir
                    } else {
                        NodeKind::File
                    };
                    match wc.nodes.get(path) {
                        Some(n) if n.kind == kind => {}
                        other => {
                            return Err(format!("open of '{path}' as {kind:?}, found {other:?}"))
                        }
                    }
                    applied.touched.insert(path.clone());
                    open.insert(
                        *t,
                        Open {
                            path: path.clone(),
                            kind,
                            parent: Some(*parent),
                            delta: None,
                        },
                    );
                }
                Call::ChangeDirProp(t, name, value) | Call::ChangeFileProp(t, name, value) => {
                    let kind = if matches!(call, Call::ChangeDirProp(..)) {
                        NodeKind::Dir
                    } else {
                        NodeKind::File
                    };
                    let o = open
                        .get(t)
                        .filter(|o| o.kind == kind)
                        .ok_or_else(|| format!("prop change on token {t}, not an open {kind:?}"))?;
                    let node = wc.nodes.get_mut(&o.path).ok_or("open node vanished")?;
                    let map = if name.starts_with(b"svn:entry:") {
                        &mut node.entry
                    } else {
                        &mut node.props
                    };
                    match value {
                        Some(v) => {
                            map.insert(name.clone(), v.clone());
                        }
                        None => {
                            map.remove(name);
                        }
                    }
                }
                Call::CloseDir(t) | Call::CloseFile(t, _) => {
                    let o = open
                        .get(t)
                        .ok_or_else(|| format!("close of unknown token {t}"))?;
                    if open.values().any(|c| c.parent == Some(*t)) {
                        return Err(format!("close of '{}' with children open", o.path));
                    }
                    if let Call::CloseFile(_, md5) = call {
                        if o.kind != NodeKind::File || o.delta.is_some() {
                            return Err(format!("bad close_file of '{}'", o.path));
                        }
                        if let Some(md5) = md5 {
                            let text = &wc.nodes[&o.path].text;
                            if deltas && md5_of(text) != *md5 {
                                return Err(format!("close_file MD5 mismatch on '{}'", o.path));
                            }
                        }
                    } else if o.kind != NodeKind::Dir {
                        return Err("close_dir of a file".into());
                    }
                    open.remove(t);
                }
                Call::ApplyTextdelta(t, base) => {
                    let o = open
                        .get_mut(t)
                        .filter(|o| o.kind == NodeKind::File)
                        .ok_or("apply_textdelta on a non-file")?;
                    if o.delta.is_some() || applied.texts.contains(&o.path) {
                        return Err(format!("second text delta on '{}'", o.path));
                    }
                    if let Some(base) = base {
                        let text = &wc.nodes[&o.path].text;
                        if deltas && md5_of(text) != *base {
                            return Err(format!("base MD5 mismatch on '{}'", o.path));
                        }
                    }
                    o.delta = Some((*base, Vec::new()));
                }
                Call::TextdeltaChunk(t, bytes) => {
                    let o = open.get_mut(t).ok_or("chunk on unknown token")?;
                    let d = o.delta.as_mut().ok_or("chunk outside a delta")?;
                    d.1.extend_from_slice(bytes);
                }
                Call::TextdeltaEnd(t) => {
                    let o = open.get_mut(t).ok_or("end on unknown token")?;
                    let (_, stream) = o.delta.take().ok_or("end outside a delta")?;
                    let node = wc.nodes.get_mut(&o.path).ok_or("vanished")?;
                    if deltas {
                        let windows = decode_stream(&stream, &Limits::default())
                            .map_err(|e| format!("svndiff of '{}': {e}", o.path))?;
                        node.text = apply_windows(&windows, &node.text)
                            .map_err(|e| format!("applying the delta to '{}': {e}", o.path))?;
                    } else {
                        if stream.len() != 4 || &stream[..3] != b"SVN" {
                            return Err(format!("text of '{}' sent without deltas", o.path));
                        }
                        node.text = UNKNOWN_TEXT.to_vec();
                    }
                    applied.texts.insert(o.path.clone());
                }
                Call::AbsentDir(..) | Call::AbsentFile(..) => {
                    return Err("absent entries without authz".into())
                }
                Call::CloseEdit => {
                    if !open.is_empty() {
                        return Err(format!("close_edit with {} nodes open", open.len()));
                    }
                    closed = true;
                }
                Call::AbortEdit => return Err("abort_edit".into()),
            }
            Ok(())
        })();
        r.map_err(|e| format!("call {i} ({call:?}): {e}"))?;
    }
    if !closed {
        return Err("the drive did not end with close_edit".into());
    }
    Ok(applied)
}
