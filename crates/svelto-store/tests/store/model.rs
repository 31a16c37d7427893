//! Random sequences of Subversion FS operations, checked against a plain in-memory model.

use crate::common::new_repo;
use proptest::prelude::*;
use std::collections::BTreeMap;
use svelto_core::{join, NodeKind, PropList};
use svelto_store::{Repo, Txn};

#[derive(Debug, Clone, PartialEq)]
pub struct MNode {
    pub kind: NodeKind,
    pub props: PropList,
    pub text: Vec<u8>,
}

/// A revision tree: path -> node ("" is the root).
pub type Tree = BTreeMap<String, MNode>;

#[derive(Debug, Clone)]
pub enum Op {
    AddFile(usize, usize, Vec<u8>),
    AddDir(usize, usize),
    Delete(usize),
    Copy(usize, usize, usize, usize),
    SetText(usize, Vec<u8>),
    SetProp(usize, usize, Option<Vec<u8>>),
    Commit,
}

const NAMES: [&str; 5] = ["a", "b", "c d", "é", "a-b"];
const PROPS: [&str; 3] = ["svn:eol-style", "user:x", "svn:mergeinfo"];

fn content() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        Just(Vec::new()),
        proptest::collection::vec(any::<u8>(), 0..300),
        (0u8..4, 1usize..3000).prop_map(|(b, n)| {
            (0..n)
                .map(|i| {
                    if i % 61 == 60 {
                        b'\n'
                    } else {
                        b'a' + ((i as u8 ^ b) % 26)
                    }
                })
                .collect()
        }),
        // Larger than one svndiff window.
        (0u8..3).prop_map(|b| (0..150_000u32).map(|i| (i % 251) as u8 ^ b).collect()),
    ]
}

pub fn op() -> impl Strategy<Value = Op> {
    let i = any::<usize>();
    prop_oneof![
        3 => (i, 0..NAMES.len(), content()).prop_map(|(p, n, c)| Op::AddFile(p, n, c)),
        2 => (i, 0..NAMES.len()).prop_map(|(p, n)| Op::AddDir(p, n)),
        1 => i.prop_map(Op::Delete),
        2 => (i, i, i, 0..NAMES.len()).prop_map(|(r, f, t, n)| Op::Copy(r, f, t, n)),
        3 => (i, content()).prop_map(|(f, c)| Op::SetText(f, c)),
        2 => (i, 0..PROPS.len(), proptest::option::of(proptest::collection::vec(b'a'..=b'z', 0..20)))
            .prop_map(|(p, n, v)| Op::SetProp(p, n, v)),
        2 => Just(Op::Commit),
    ]
}

fn pick(tree: &Tree, i: usize, want: Option<NodeKind>) -> Option<&String> {
    let v: Vec<&String> = tree
        .iter()
        .filter(|(_, n)| want.is_none_or(|k| n.kind == k))
        .map(|(p, _)| p)
        .collect();
    if v.is_empty() {
        None
    } else {
        Some(v[i % v.len()])
    }
}

/// Applies `op` to both the transaction and the model; ops that make no sense here are
/// skipped (returns false).
pub fn apply(txn: &mut Txn, model: &mut Tree, history: &[Tree], op: &Op) -> bool {
    match op {
        Op::AddFile(p, n, _) | Op::AddDir(p, n) => {
            let Some(parent) = pick(model, *p, Some(NodeKind::Dir)).cloned() else {
                return false;
            };
            let path = join(&parent, NAMES[*n]);
            if model.contains_key(&path) {
                return false;
            }
            let (kind, text) = match op {
                Op::AddFile(..) => (NodeKind::File, c_of(op)),
                _ => (NodeKind::Dir, Vec::new()),
            };
            txn.make_node(&path, kind).expect("make_node");
            if kind == NodeKind::File && !text.is_empty() {
                txn.set_text(&path, &mut text.as_slice()).expect("set_text");
            }
            model.insert(
                path,
                MNode {
                    kind,
                    props: PropList::new(),
                    text,
                },
            );
            true
        }
        Op::Delete(p) => {
            let Some(path) = pick(model, *p, None).cloned() else {
                return false;
            };
            if path.is_empty() {
                return false;
            }
            txn.delete(&path).expect("delete");
            let prefix = format!("{path}/");
            model.retain(|k, _| k != &path && !k.starts_with(&prefix));
            true
        }
        Op::Copy(r, f, t, n) => {
            let from_rev = r % history.len();
            let src_tree = &history[from_rev];
            let Some(from) = pick(src_tree, *f, None).cloned() else {
                return false;
            };
            let Some(parent) = pick(model, *t, Some(NodeKind::Dir)).cloned() else {
                return false;
            };
            let to = join(&parent, NAMES[*n]);
            if from.is_empty() || model.contains_key(&to) {
                return false;
            }
            txn.copy(from_rev as u64, &from, &to).expect("copy");
            for (k, v) in src_tree.iter() {
                let rest = if *k == from {
                    Some(String::new())
                } else {
                    k.strip_prefix(&format!("{from}/")).map(str::to_string)
                };
                if let Some(rest) = rest {
                    model.insert(join(&to, &rest), v.clone());
                }
            }
            true
        }
        Op::SetText(f, c) => {
            let Some(path) = pick(model, *f, Some(NodeKind::File)).cloned() else {
                return false;
            };
            txn.set_text(&path, &mut c.as_slice()).expect("set_text");
            model.get_mut(&path).expect("exists").text = c.clone();
            true
        }
        Op::SetProp(p, n, v) => {
            let Some(path) = pick(model, *p, None).cloned() else {
                return false;
            };
            let name = PROPS[*n].as_bytes();
            txn.change_prop(&path, name, v.as_deref())
                .expect("change_prop");
            let props = &mut model.get_mut(&path).expect("exists").props;
            match v {
                Some(v) => props.insert(name.to_vec(), v.clone()),
                None => props.remove(name),
            };
            true
        }
        Op::Commit => false,
    }
}

fn c_of(op: &Op) -> Vec<u8> {
    match op {
        Op::AddFile(_, _, c) => c.clone(),
        _ => Vec::new(),
    }
}

pub fn empty_tree() -> Tree {
    let mut t = Tree::new();
    t.insert(
        String::new(),
        MNode {
            kind: NodeKind::Dir,
            props: PropList::new(),
            text: Vec::new(),
        },
    );
    t
}

/// Reads revision `rev` of `repo` into a model tree.
pub fn read_tree(repo: &Repo, rev: u64) -> Tree {
    let mut t = Tree::new();
    let root = repo.root(rev).expect("root");
    walk(repo, root, "", &mut t);
    t
}

fn walk(repo: &Repo, off: svelto_store::NodeRevId, path: &str, t: &mut Tree) {
    let n = repo.node(off).expect("node");
    let props = repo.props(&n).expect("props");
    let text = if n.kind == NodeKind::File {
        repo.read_text(&n.file_text()).expect("text").to_vec()
    } else {
        Vec::new()
    };
    t.insert(
        path.to_string(),
        MNode {
            kind: n.kind,
            props,
            text,
        },
    );
    if n.kind == NodeKind::Dir {
        for e in repo.dir(&n).expect("dir").iter() {
            walk(repo, e.node, &join(path, &e.name), t);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn transactions_match_the_model(ops in proptest::collection::vec(op(), 1..60)) {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut w = new_repo(dir.path());
        let mut history = vec![empty_tree()];
        let mut model = empty_tree();
        let mut txn = Txn::begin(&mut w).expect("begin");
        for op in &ops {
            if let Op::Commit = op {
                let rev = txn.commit().expect("commit");
                history.push(model.clone());
                prop_assert_eq!(rev as usize, history.len() - 1);
                txn = Txn::begin(&mut w).expect("begin");
            } else {
                apply(&mut txn, &mut model, &history, op);
            }
        }
        txn.commit().expect("commit");
        history.push(model.clone());
        w.sync().expect("sync");
        drop(w);
        let repo = Repo::open(dir.path()).expect("open");
        prop_assert_eq!(repo.youngest() as usize, history.len() - 1);
        for (rev, tree) in history.iter().enumerate() {
            prop_assert_eq!(&read_tree(&repo, rev as u64), tree, "revision {}", rev);
        }
        // The seam's contract, through the trait, on every history the model makes.
        let checked = svelto_fs::contract::check(&repo);
        prop_assert!(checked.is_ok(), "{:?}", checked);
    }
}
