//! A property-based test of commits built through `CommitTxn` against a simple in-memory
//! model: random edits (adds, deletes, copies, text and property changes), several of them
//! begun on an old base before others are published. Every published revision's tree must
//! equal the model's; a commit must be refused with `Conflict at` exactly when the model
//! says it overlaps a commit that landed since its base; `verify` must pass. Every test
//! runs over both storage backends (the local engine's files and the testkit's memory).
//!
//! The model's conflict rule is Subversion's merge of a transaction into a newer HEAD
//! (FSFS `merge`): with `ours` the paths the edit touched and `theirs` the paths the
//! commits since its base touched, they conflict when one path is in both; when one side
//! added, deleted, replaced or copied a path and the other touched it or anything below it;
//! or when the edit changed a directory's properties and the commits since added, deleted or
//! replaced an entry of that directory (FSFS merges a property change of ours only into a
//! directory whose entries are structurally the same; a property change of theirs merges
//! into a directory whose entries ours changed).

use std::collections::BTreeMap;

use md5::{Digest, Md5};
use proptest::prelude::*;
use svelto_core::{is_ancestor, parent_and_name, NodeKind, PropList, Revnum};
use svelto_delta::{encode_stream, Window};
use svelto_fs::{ReadRepo, WriteRepo};
use svelto_repos::CommitTxn;
use svelto_testkit::memfs::{Backend, TestRepo, BACKENDS};

#[derive(Debug, Clone, PartialEq, Eq)]
enum MNode {
    Dir(PropList),
    File(PropList, Vec<u8>),
}

type Tree = BTreeMap<String, MNode>;

#[derive(Debug, Clone)]
enum MOp {
    AddDir(String),
    AddFile(String, Vec<u8>),
    Delete(String),
    SetText(String, Vec<u8>),
    SetProp(String, Vec<u8>, Option<Vec<u8>>),
    Copy(Revnum, String, String),
}

/// What an edit did to one path: structurally (add, delete, copy) or not, and whether it
/// changed a directory's properties.
#[derive(Debug, Clone, Copy, Default)]
struct Touch {
    structural: bool,
    dir_props: bool,
}

fn touches(ops: &[MOp], base: &Tree) -> BTreeMap<String, Touch> {
    let mut t: BTreeMap<String, Touch> = BTreeMap::new();
    for op in ops {
        match op {
            MOp::AddDir(p) | MOp::AddFile(p, _) | MOp::Delete(p) | MOp::Copy(_, _, p) => {
                t.entry(p.clone()).or_default().structural = true;
            }
            MOp::SetText(p, _) => {
                t.entry(p.clone()).or_default();
            }
            MOp::SetProp(p, _, _) => {
                let e = t.entry(p.clone()).or_default();
                if matches!(base.get(p), Some(MNode::Dir(_))) {
                    e.dir_props = true;
                }
            }
        }
    }
    t
}

fn conflicts(ours: &BTreeMap<String, Touch>, theirs: &BTreeMap<String, Touch>) -> bool {
    ours.iter().any(|(p, o)| {
        theirs.iter().any(|(c, t)| {
            p == c
                || (o.structural && is_ancestor(p, c))
                || (t.structural && is_ancestor(c, p))
                || (o.dir_props && t.structural && !c.is_empty() && parent_and_name(c).0 == p)
        })
    })
}

fn subtree(tree: &Tree, root: &str) -> Vec<(String, MNode)> {
    tree.iter()
        .filter(|(k, _)| is_ancestor(root, k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn apply(tree: &mut Tree, trees: &[Tree], op: &MOp) {
    match op {
        MOp::AddDir(p) => {
            tree.insert(p.clone(), MNode::Dir(PropList::new()));
        }
        MOp::AddFile(p, text) => {
            tree.insert(p.clone(), MNode::File(PropList::new(), text.clone()));
        }
        MOp::Delete(p) => {
            let gone: Vec<String> = tree.keys().filter(|k| is_ancestor(p, k)).cloned().collect();
            for k in gone {
                tree.remove(&k);
            }
        }
        MOp::SetText(p, text) => {
            if let Some(MNode::File(_, t)) = tree.get_mut(p) {
                *t = text.clone();
            }
        }
        MOp::SetProp(p, name, value) => {
            let props = match tree.get_mut(p) {
                Some(MNode::Dir(props)) | Some(MNode::File(props, _)) => props,
                None => return,
            };
            match value {
                Some(v) => props.insert(name.clone(), v.clone()),
                None => props.remove(name),
            };
        }
        MOp::Copy(rev, from, to) => {
            for (k, v) in subtree(&trees[*rev as usize], from) {
                let rest = k[from.len()..].trim_start_matches('/');
                tree.insert(svelto_core::join(to, rest), v);
            }
        }
    }
}

/// Deterministic choices from the generated numbers.
struct Choices<'a> {
    nums: &'a [u64],
    at: usize,
}

impl Choices<'_> {
    fn next(&mut self) -> u64 {
        let n = self.nums.get(self.at).copied().unwrap_or(7);
        self.at += 1;
        n
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn done(&self) -> bool {
        self.at >= self.nums.len()
    }
}

struct Pending {
    txn: CommitTxn,
    base: Revnum,
    ops: Vec<MOp>,
    touched: BTreeMap<String, Touch>,
}

fn md5_hex(b: &[u8]) -> String {
    Md5::digest(b).iter().map(|x| format!("{x:02x}")).collect()
}

fn send_text(txn: &mut CommitTxn, path: &str, base_md5: Option<&str>, text: &[u8], split: usize) {
    let stream = encode_stream(&[Window::fulltext(text)], 0, 0).expect("encoding svndiff");
    let mut td = txn.start_text(path, base_md5).expect("start_text");
    let split = split % (stream.len() + 1);
    txn.text_chunk(&mut td, &stream[..split])
        .expect("text_chunk");
    txn.text_chunk(&mut td, &stream[split..])
        .expect("text_chunk");
    txn.end_text(td).expect("end_text");
    txn.close_file(path, Some(&md5_hex(text)))
        .expect("close_file");
}

/// One random operation on `pending`, chosen against its base tree; false when nothing
/// fitted.
fn random_op(ch: &mut Choices, pending: &mut Pending, trees: &[Tree], serial: &mut u64) -> bool {
    let base = &trees[pending.base as usize];
    let blocked = |p: &str, structural: bool| {
        pending.touched.iter().any(|(t, how)| {
            t == p || (how.structural && is_ancestor(t, p)) || (structural && is_ancestor(p, t))
        })
    };
    let dirs: Vec<&String> = base
        .iter()
        .filter(|(k, v)| matches!(v, MNode::Dir(_)) && !blocked(k, false))
        .map(|(k, _)| k)
        .collect();
    let files: Vec<&String> = base
        .iter()
        .filter(|(k, v)| matches!(v, MNode::File(..)) && !blocked(k, false))
        .map(|(k, _)| k)
        .collect();
    *serial += 1;
    let names = ["a", "b", "c", "d"];
    let fresh = |ch: &mut Choices, dirs: &[&String]| -> Option<String> {
        if dirs.is_empty() {
            return None;
        }
        let parent = dirs[ch.below(dirs.len())];
        let p = svelto_core::join(parent, names[ch.below(names.len())]);
        (!base.contains_key(&p) && !blocked(&p, true)).then_some(p)
    };
    let txn = &mut pending.txn;
    let b = pending.base;
    let op = match ch.below(10) {
        0 | 1 => {
            let Some(p) = fresh(ch, &dirs) else {
                return false;
            };
            txn.add(&p, NodeKind::Dir, None, false).expect("add dir");
            MOp::AddDir(p)
        }
        2 | 3 => {
            let Some(p) = fresh(ch, &dirs) else {
                return false;
            };
            let text = format!("file {p} #{serial}\n")
                .repeat(ch.below(4))
                .into_bytes();
            txn.add(&p, NodeKind::File, None, false).expect("add file");
            send_text(txn, &p, None, &text, ch.below(64));
            MOp::AddFile(p, text)
        }
        4 => {
            let cands: Vec<&String> = base
                .keys()
                .filter(|k| !k.is_empty() && !blocked(k, true))
                .collect();
            if cands.is_empty() {
                return false;
            }
            let p = cands[ch.below(cands.len())].clone();
            txn.delete(&p, Some(b)).expect("delete");
            MOp::Delete(p)
        }
        5 | 6 => {
            if files.is_empty() {
                return false;
            }
            let p = files[ch.below(files.len())].clone();
            let Some(MNode::File(_, old)) = base.get(&p) else {
                return false;
            };
            let text = format!("changed {p} #{serial}\n").into_bytes();
            txn.open_file(&p, Some(b)).expect("open_file");
            send_text(txn, &p, Some(&md5_hex(old)), &text, ch.below(64));
            MOp::SetText(p, text)
        }
        7 | 8 => {
            let all: Vec<&String> = dirs.iter().chain(files.iter()).copied().collect();
            // The root's properties rarely: a change there conflicts with everything.
            let all: Vec<&String> = if ch.below(4) == 0 {
                all
            } else {
                all.into_iter().filter(|p| !p.is_empty()).collect()
            };
            if all.is_empty() {
                return false;
            }
            let p = all[ch.below(all.len())].clone();
            let name = format!("user:p{}", ch.below(2)).into_bytes();
            let value = (ch.below(3) != 0).then(|| format!("v{serial}").into_bytes());
            match base.get(&p) {
                Some(MNode::Dir(_)) => txn.check_dir_current(&p, b).expect("dir current"),
                _ => txn.open_file(&p, Some(b)).expect("open_file"),
            }
            txn.change_prop(&p, &name, value.as_deref())
                .expect("change_prop");
            MOp::SetProp(p, name, value)
        }
        _ => {
            let rev = ch.below(pending.base as usize + 1) as Revnum;
            let from_tree = &trees[rev as usize];
            let sources: Vec<&String> = from_tree.keys().filter(|k| !k.is_empty()).collect();
            if sources.is_empty() {
                return false;
            }
            let from = sources[ch.below(sources.len())].clone();
            let Some(to) = fresh(ch, &dirs) else {
                return false;
            };
            let kind = match from_tree[&from] {
                MNode::Dir(_) => NodeKind::Dir,
                MNode::File(..) => NodeKind::File,
            };
            txn.add(&to, kind, Some((from.clone(), rev)), false)
                .expect("copy");
            MOp::Copy(rev, from, to)
        }
    };
    pending.ops.push(op);
    pending.touched = touches(&pending.ops, base);
    true
}

fn stored_tree(repo: &dyn ReadRepo, rev: Revnum) -> Tree {
    let mut out = Tree::new();
    let mut stack = vec![String::new()];
    while let Some(path) = stack.pop() {
        let (_, node) = repo.node_at(rev, &path).expect("node_at");
        let props = repo.props(&node).expect("props");
        match node.kind {
            NodeKind::Dir => {
                for e in repo.dir(&node).expect("dir").iter() {
                    stack.push(svelto_core::join(&path, &e.name));
                }
                out.insert(path, MNode::Dir(props));
            }
            _ => {
                let text = repo.read_text(&node.file_text()).expect("text");
                out.insert(path, MNode::File(props, text.to_vec()));
            }
        }
    }
    out
}

/// Runs one sequence; returns how many commits were refused as conflicts and how many
/// merged into a newer HEAD than their base.
fn run_model(backend: Backend, nums: &[u64]) -> (usize, usize) {
    let t = TestRepo::create(
        backend,
        "00000000-0000-0000-0000-000000000001",
        "2026-01-01T00:00:00.000000Z",
    );
    let repo = t.repo.clone();
    let mut writer = t.writer();
    let mut trees: Vec<Tree> = vec![BTreeMap::from([(
        String::new(),
        MNode::Dir(PropList::new()),
    )])];
    let mut landed: Vec<BTreeMap<String, Touch>> = vec![BTreeMap::new()];
    let mut open: Vec<Pending> = Vec::new();
    let mut ch = Choices { nums, at: 0 };
    let mut serial = 0u64;
    let (mut refused, mut merged_late) = (0, 0);
    let mut finish = |p: Pending,
                      trees: &mut Vec<Tree>,
                      landed: &mut Vec<BTreeMap<String, Touch>>,
                      writer: &mut dyn WriteRepo| {
        let head = trees.len() as Revnum - 1;
        let theirs: BTreeMap<String, Touch> = landed[p.base as usize + 1..]
            .iter()
            .flat_map(|t| t.iter().map(|(k, v)| (k.clone(), *v)))
            .fold(BTreeMap::new(), |mut acc, (k, v)| {
                let e: &mut Touch = acc.entry(k).or_default();
                e.structural |= v.structural;
                e.dir_props |= v.dir_props;
                acc
            });
        let expect_conflict = conflicts(&p.touched, &theirs);
        let result = p.txn.prepare(writer, "2026-01-02T00:00:00.000000Z");
        match (expect_conflict, result) {
            (true, Err(e)) => {
                assert!(
                    e.to_string().contains("Conflict at '/"),
                    "refused, but not as a conflict: {e}"
                );
                refused += 1;
            }
            (true, Ok(_)) => panic!(
                "a commit on r{} touching {:?} was accepted over {:?}",
                p.base, p.touched, theirs
            ),
            (false, Err(e)) => panic!(
                "a commit on r{} (HEAD r{head}) touching {:?} was refused ({e}); since: {:?}",
                p.base, p.touched, theirs
            ),
            (false, Ok(prepared)) => {
                let rev = prepared.publish().expect("publish");
                assert_eq!(rev, head + 1);
                if p.base < head {
                    merged_late += 1;
                }
                let mut tree = trees[head as usize].clone();
                for op in &p.ops {
                    apply(&mut tree, trees, op);
                }
                trees.push(tree);
                landed.push(p.touched);
            }
        }
    };
    while !ch.done() {
        match ch.below(10) {
            0 | 1 if open.len() < 3 => {
                let txn = CommitTxn::begin(repo.clone(), &format!("t{serial}"), PropList::new())
                    .expect("begin");
                serial += 1;
                open.push(Pending {
                    base: txn.base(),
                    txn,
                    ops: Vec::new(),
                    touched: BTreeMap::new(),
                });
            }
            0..=6 => {
                if open.is_empty() {
                    continue;
                }
                let i = ch.below(open.len());
                random_op(&mut ch, &mut open[i], &trees, &mut serial);
            }
            _ => {
                if open.is_empty() {
                    continue;
                }
                let i = ch.below(open.len());
                let p = open.remove(i);
                finish(p, &mut trees, &mut landed, &mut *writer);
            }
        }
    }
    for p in open.drain(..) {
        finish(p, &mut trees, &mut landed, &mut *writer);
    }
    repo.refresh().expect("refresh");
    let head = repo.youngest();
    assert_eq!(head as usize + 1, trees.len());
    for rev in 0..=head {
        assert_eq!(
            stored_tree(&*repo, rev),
            trees[rev as usize],
            "tree of r{rev}"
        );
    }
    svelto_fs::contract::check(&*repo).expect("the seam's contract");
    if let Some(path) = t.path() {
        let local = svelto_testkit::memfs::open_local(path);
        svelto_repos::verify(&*local, 0, head, &mut |_| {}).expect("verify");
        assert!(
            std::fs::read_dir(path.join("db").join("txns"))
                .map(|d| d.count())
                .unwrap_or(0)
                == 0,
            "files left in db/txns"
        );
    }
    (refused, merged_late)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn random_commit_sequences_match_the_model(nums in prop::collection::vec(any::<u64>(), 20..160)) {
        for backend in BACKENDS {
            run_model(backend, &nums);
        }
    }
}

/// A long fixed sequence: the model test does exercise both refusals and late merges.
#[test]
fn long_sequence_refuses_and_merges() {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let nums: Vec<u64> = (0..3000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        })
        .collect();
    let mut counts = Vec::new();
    for backend in BACKENDS {
        let (refused, merged_late) = run_model(backend, &nums);
        assert!(refused >= 5, "{backend:?}: only {refused} commits refused");
        assert!(
            merged_late >= 5,
            "{backend:?}: only {merged_late} commits merged into a newer HEAD"
        );
        counts.push((refused, merged_late));
    }
    assert_eq!(
        counts[0], counts[1],
        "both backends refuse and merge the same commits"
    );
}

/// A directory's properties changed by one commit and an entry added to it by another, both
/// begun on the same revision: as in FSFS, the property change is refused when it comes
/// second (`Conflict at '/d'`), and the add merges when it comes second.
#[test]
fn directory_property_change_conflicts_with_changes_below() {
    for (backend, props_first) in BACKENDS.into_iter().flat_map(|b| [(b, true), (b, false)]) {
        let tr = TestRepo::create(
            backend,
            "00000000-0000-0000-0000-000000000001",
            "2026-01-01T00:00:00.000000Z",
        );
        let repo = tr.repo.clone();
        let mut w = tr.writer();
        let w = &mut *w;
        let mut t = CommitTxn::begin(repo.clone(), "setup", PropList::new()).expect("begin");
        t.add("d", NodeKind::Dir, None, false).expect("add");
        t.prepare(&mut *w, "2026-01-02T00:00:00.000000Z")
            .expect("prepare")
            .publish()
            .expect("publish");
        let mut props = CommitTxn::begin(repo.clone(), "props", PropList::new()).expect("begin");
        props.check_dir_current("d", 1).expect("current");
        props.change_prop("d", b"user:x", Some(b"1")).expect("prop");
        let mut below = CommitTxn::begin(repo.clone(), "below", PropList::new()).expect("begin");
        below.add("d/new", NodeKind::Dir, None, false).expect("add");
        let (first, second) = if props_first {
            (props, below)
        } else {
            (below, props)
        };
        first
            .prepare(&mut *w, "2026-01-02T00:00:00.000000Z")
            .expect("prepare")
            .publish()
            .expect("publish");
        let second = second.prepare(&mut *w, "2026-01-02T00:00:00.000000Z");
        if props_first {
            // Theirs changed d's properties, ours adds an entry to d: merged.
            let rev = second.expect("merging an add below a directory whose props changed");
            assert_eq!(rev.publish().expect("publish"), 3);
            repo.refresh().expect("refresh");
            let (_, d) = repo.node_at(3, "d").expect("d");
            assert_eq!(repo.props(&d).expect("props").len(), 1);
            assert!(repo.lookup(3, "d/new").expect("lookup").is_some());
        } else {
            // Ours changes d's properties, theirs added an entry to d: refused.
            let err = match second {
                Ok(_) => panic!("a property change merged into a directory with a new entry"),
                Err(e) => e.to_string(),
            };
            assert!(err.contains("Conflict at '/d'"), "{backend:?}: {err}");
        }
    }
}
