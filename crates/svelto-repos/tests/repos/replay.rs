//! `replay`: every revision of every fixture replayed into a mirror (a plain in-memory tree
//! that applies the drive the way `svnsync` commits it) must give the revision's tree, and
//! the drive must be the one svnserve sends ([`svnserve`]).

mod svnserve;

use md5::{Digest, Md5 as Md5Hasher};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use svelto_core::{
    is_ancestor, join, parent_and_name, skip_ancestor, Md5, NodeKind, PropList, Revnum,
};
use svelto_delta::{apply_windows, decode_stream, Limits};
use svelto_repos::editor::{Call, Recorder};
use svelto_repos::{replay, Editor, LoadOptions, ReplayOptions, Result, TextOptions, Token};
/// A repository as the seam's callers read it (the local engine, opened by the testkit).
pub type Repo = dyn svelto_fs::ReadRepo;

pub fn load_fixture(name: &str) -> (tempfile::TempDir, Arc<Repo>) {
    let dump = svelto_testkit::scenario_dump(name);
    let loaded = svelto_testkit::svelto_create_load(&dump, LoadOptions::default());
    (loaded.dir, Arc::new(loaded.repo))
}

fn md5_of(bytes: &[u8]) -> Md5 {
    Md5(Md5Hasher::digest(bytes).into())
}

#[derive(Debug, Clone, PartialEq)]
struct MNode {
    kind: NodeKind,
    props: PropList,
    /// Files: the text, None when the drive said it changed without sending it.
    text: Option<Arc<Vec<u8>>>,
    md5: Option<Md5>,
}

type Tree = BTreeMap<String, MNode>;

/// Revision trees read straight from the repository, cached.
struct Truth<'r> {
    repo: &'r Repo,
    trees: HashMap<Revnum, Arc<Tree>>,
}

impl Truth<'_> {
    fn tree(&mut self, rev: Revnum) -> Arc<Tree> {
        if let Some(t) = self.trees.get(&rev) {
            return t.clone();
        }
        let mut tree = Tree::new();
        let root = self.repo.root(rev).expect("root");
        self.walk(root, "", &mut tree);
        let t = Arc::new(tree);
        self.trees.insert(rev, t.clone());
        t
    }

    fn walk(&self, off: svelto_core::NodeRevId, path: &str, tree: &mut Tree) {
        let node = self.repo.node(off).expect("node");
        let props = self.repo.props(&node).expect("props");
        match node.kind {
            NodeKind::Dir => {
                tree.insert(
                    path.to_string(),
                    MNode {
                        kind: NodeKind::Dir,
                        props,
                        text: None,
                        md5: None,
                    },
                );
                for e in self.repo.dir(&node).expect("dir").iter() {
                    self.walk(e.node, &join(path, &e.name), tree);
                }
            }
            NodeKind::File => {
                let t = node.file_text();
                let text = self.repo.read_text(&t).expect("text");
                assert_eq!(md5_of(&text), t.md5, "stored MD5 of {path}");
                tree.insert(
                    path.to_string(),
                    MNode {
                        kind: NodeKind::File,
                        props,
                        text: Some(text),
                        md5: Some(t.md5),
                    },
                );
            }
        }
    }
}

fn subtree(tree: &Tree, from: &str, to: &str) -> Vec<(String, MNode)> {
    tree.iter()
        .filter_map(|(p, n)| skip_ancestor(from, p).map(|rest| (join(to, rest), n.clone())))
        .collect()
}

struct OpenFile {
    path: String,
    stream: Option<Vec<u8>>,
}

/// Applies a replay drive to a tree as a receiver would, checking every step.
struct Mirror<'t, 'r> {
    tree: Tree,
    truth: &'t mut Truth<'r>,
    send_deltas: bool,
    dirs: HashMap<Token, String>,
    files: HashMap<Token, OpenFile>,
    next: Token,
    /// Paths that got the "properties changed" signal of a drive without deltas.
    props_signalled: HashSet<String>,
    /// Every add: path and copy source.
    adds: Vec<(String, Option<(String, Revnum)>)>,
    target_rev: Option<Revnum>,
}

impl Mirror<'_, '_> {
    fn token(&mut self) -> Token {
        self.next += 1;
        self.next
    }

    fn dir_path(&self, t: Token) -> String {
        self.dirs
            .get(&t)
            .unwrap_or_else(|| panic!("dir token {t} is not open"))
            .clone()
    }

    fn check_child(&self, path: &str, parent: Token) {
        let parent_path = self.dir_path(parent);
        assert_eq!(
            parent_and_name(path).0,
            parent_path,
            "{path} is not a child of its parent token"
        );
    }

    fn add(&mut self, path: &str, parent: Token, copyfrom: Option<(&str, Revnum)>, kind: NodeKind) {
        self.check_child(path, parent);
        assert!(!self.tree.contains_key(path), "add of existing {path}");
        let parent_path = parent_and_name(path).0;
        assert_eq!(
            self.tree.get(parent_path).map(|n| n.kind),
            Some(NodeKind::Dir),
            "parent of {path} is not a directory"
        );
        self.adds
            .push((path.to_string(), copyfrom.map(|(p, r)| (p.to_string(), r))));
        match copyfrom {
            Some((from, rev)) => {
                let from = from
                    .strip_prefix('/')
                    .unwrap_or_else(|| panic!("copy source {from} is not an fspath"));
                let source = self.truth.tree(rev);
                assert_eq!(
                    source.get(from).map(|n| n.kind),
                    Some(kind),
                    "copy source {from}@{rev} of {path}"
                );
                for (p, n) in subtree(&source, from, path) {
                    self.tree.insert(p, n);
                }
            }
            None => {
                let node = match kind {
                    NodeKind::Dir => MNode {
                        kind,
                        props: PropList::new(),
                        text: None,
                        md5: None,
                    },
                    NodeKind::File => MNode {
                        kind,
                        props: PropList::new(),
                        text: Some(Arc::new(Vec::new())),
                        md5: Some(md5_of(b"")),
                    },
                };
                self.tree.insert(path.to_string(), node);
            }
        }
    }

    fn change_prop(&mut self, path: &str, name: &[u8], value: Option<&[u8]>) {
        let node = self.tree.get_mut(path).expect("open node exists");
        if name.is_empty() {
            assert!(
                !self.send_deltas,
                "dummy property change with deltas on {path}"
            );
            assert!(value.is_none());
            self.props_signalled.insert(path.to_string());
            return;
        }
        match value {
            Some(v) => node.props.insert(name.to_vec(), v.to_vec()),
            None => node.props.remove(name),
        };
    }
}

impl Editor for Mirror<'_, '_> {
    fn target_rev(&mut self, rev: Revnum) -> Result<()> {
        assert!(self.target_rev.is_none());
        self.target_rev = Some(rev);
        Ok(())
    }
    fn open_root(&mut self, base_rev: Option<Revnum>) -> Result<Token> {
        assert_eq!(base_rev, None);
        assert!(
            self.dirs.is_empty() && self.files.is_empty(),
            "root opened twice"
        );
        let t = self.token();
        self.dirs.insert(t, String::new());
        Ok(t)
    }
    fn delete_entry(&mut self, path: &str, rev: Option<Revnum>, parent: Token) -> Result<()> {
        assert_eq!(rev, None);
        self.check_child(path, parent);
        assert!(self.tree.contains_key(path), "delete of missing {path}");
        self.tree.retain(|p, _| !is_ancestor(path, p));
        Ok(())
    }
    fn add_dir(
        &mut self,
        path: &str,
        parent: Token,
        copyfrom: Option<(&str, Revnum)>,
    ) -> Result<Token> {
        self.add(path, parent, copyfrom, NodeKind::Dir);
        let t = self.token();
        self.dirs.insert(t, path.to_string());
        Ok(t)
    }
    fn open_dir(&mut self, path: &str, parent: Token, base_rev: Option<Revnum>) -> Result<Token> {
        assert_eq!(base_rev, None);
        self.check_child(path, parent);
        assert_eq!(
            self.tree.get(path).map(|n| n.kind),
            Some(NodeKind::Dir),
            "open_dir {path}"
        );
        let t = self.token();
        self.dirs.insert(t, path.to_string());
        Ok(t)
    }
    fn change_dir_prop(&mut self, dir: Token, name: &[u8], value: Option<&[u8]>) -> Result<()> {
        let path = self.dir_path(dir);
        self.change_prop(&path, name, value);
        Ok(())
    }
    fn close_dir(&mut self, dir: Token) -> Result<()> {
        let path = self.dirs.remove(&dir).expect("close of an open dir");
        let below = |p: &str| p != path && is_ancestor(&path, p);
        assert!(
            !self.dirs.values().any(|p| below(p)) && !self.files.values().any(|f| below(&f.path)),
            "{path} closed before its children"
        );
        Ok(())
    }
    fn absent_dir(&mut self, path: &str, _parent: Token) -> Result<()> {
        panic!("absent_dir {path} in a replay without authz")
    }
    fn add_file(
        &mut self,
        path: &str,
        parent: Token,
        copyfrom: Option<(&str, Revnum)>,
    ) -> Result<Token> {
        self.add(path, parent, copyfrom, NodeKind::File);
        let t = self.token();
        self.files.insert(
            t,
            OpenFile {
                path: path.to_string(),
                stream: None,
            },
        );
        Ok(t)
    }
    fn open_file(&mut self, path: &str, parent: Token, base_rev: Option<Revnum>) -> Result<Token> {
        assert_eq!(base_rev, None);
        self.check_child(path, parent);
        assert_eq!(
            self.tree.get(path).map(|n| n.kind),
            Some(NodeKind::File),
            "open_file {path}"
        );
        let t = self.token();
        self.files.insert(
            t,
            OpenFile {
                path: path.to_string(),
                stream: None,
            },
        );
        Ok(t)
    }
    fn apply_textdelta(&mut self, file: Token, base_md5: Option<&Md5>) -> Result<()> {
        let f = self.files.get_mut(&file).expect("open file");
        assert!(f.stream.is_none(), "two text deltas on {}", f.path);
        f.stream = Some(Vec::new());
        let node = &self.tree[&f.path];
        if let Some(md5) = base_md5 {
            assert!(
                self.send_deltas,
                "base checksum without deltas on {}",
                f.path
            );
            assert_eq!(node.md5.as_ref(), Some(md5), "base checksum of {}", f.path);
        }
        Ok(())
    }
    fn textdelta_chunk(&mut self, file: Token, chunk: &[u8]) -> Result<()> {
        let f = self.files.get_mut(&file).expect("open file");
        f.stream
            .as_mut()
            .expect("chunk inside a text delta")
            .extend_from_slice(chunk);
        Ok(())
    }
    fn textdelta_end(&mut self, file: Token) -> Result<()> {
        let f = self.files.get_mut(&file).expect("open file");
        let stream = f.stream.as_ref().expect("end of a started text delta");
        let node = self.tree.get_mut(&f.path).expect("file exists");
        assert!(
            stream.len() >= 4 && &stream[..3] == b"SVN",
            "svndiff header of {}",
            f.path
        );
        if stream.len() == 4 && !self.send_deltas {
            node.text = None;
            return Ok(());
        }
        let windows = decode_stream(stream, &Limits::default()).expect("a valid svndiff stream");
        let base = node
            .text
            .clone()
            .unwrap_or_else(|| panic!("delta against an unknown text of {}", f.path));
        let text = apply_windows(&windows, &base).expect("delta applies");
        node.md5 = Some(md5_of(&text));
        node.text = Some(Arc::new(text));
        Ok(())
    }
    fn change_file_prop(&mut self, file: Token, name: &[u8], value: Option<&[u8]>) -> Result<()> {
        let path = self.files.get(&file).expect("open file").path.clone();
        self.change_prop(&path, name, value);
        Ok(())
    }
    fn close_file(&mut self, file: Token, text_md5: Option<&Md5>) -> Result<()> {
        let f = self.files.remove(&file).expect("close of an open file");
        let md5 = *text_md5.unwrap_or_else(|| panic!("close_file {} without MD5", f.path));
        let node = self.tree.get_mut(&f.path).expect("file exists");
        if node.text.is_some() {
            assert_eq!(node.md5, Some(md5), "MD5 at close_file of {}", f.path);
        }
        node.md5 = Some(md5);
        Ok(())
    }
    fn absent_file(&mut self, path: &str, _parent: Token) -> Result<()> {
        panic!("absent_file {path} in a replay without authz")
    }
    fn close_edit(&mut self) -> Result<()> {
        panic!("replay calls close_edit (svnserve sends finish-replay instead)")
    }
    fn abort_edit(&mut self) -> Result<()> {
        panic!("replay calls abort_edit")
    }
}

/// The paths a replay rooted at `base` is about: `base`, below it, and its parents.
fn in_scope(base: &str, path: &str) -> bool {
    is_ancestor(base, path) || is_ancestor(path, base)
}

/// The copy sources the drive must keep: each copy at or below `base` whose source is
/// below `base` and not older than `lwm`, unless it lies inside a copied directory sent as
/// a plain add (whose contents are all plain adds).
fn expected_copies(
    repo: &Repo,
    rev: Revnum,
    base: &str,
    lwm: Revnum,
) -> Vec<(String, Option<(String, Revnum)>)> {
    let meta = repo.rev_meta(rev).expect("meta");
    let mut downgraded: Vec<&str> = Vec::new();
    let mut out = Vec::new();
    for c in &meta.changes {
        let Some((r, from)) = &c.copyfrom else {
            continue;
        };
        if !in_scope(base, &c.path) || downgraded.iter().any(|d| is_ancestor(d, &c.path)) {
            continue;
        }
        if *r >= lwm && is_ancestor(base, from) {
            out.push((c.path.clone(), Some((format!("/{from}"), *r))));
        } else {
            downgraded.push(&c.path);
        }
    }
    out.sort();
    out
}

fn check_revision(
    repo: &Repo,
    truth: &mut Truth,
    rev: Revnum,
    base: &str,
    lwm: Revnum,
    send_deltas: bool,
) {
    let what = format!("r{rev} base '{base}' low-water-mark {lwm} send-deltas {send_deltas}");
    let before = truth.tree(rev - 1);
    let after = truth.tree(rev);
    let mut m = Mirror {
        tree: (*before).clone(),
        truth,
        send_deltas,
        dirs: HashMap::new(),
        files: HashMap::new(),
        next: 0,
        props_signalled: HashSet::new(),
        adds: Vec::new(),
        target_rev: None,
    };
    let opts = ReplayOptions {
        base_dir: base.to_string(),
        low_water_mark: lwm,
        send_deltas,
        text: TextOptions {
            svndiff_version: (rev % 3) as u8,
            accepts: (rev % 3) as u8,
            send_deltas: true,
        },
    };
    replay(repo, rev, &opts, &mut m).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(m.target_rev, Some(rev), "{what}");
    assert!(
        m.dirs.is_empty() && m.files.is_empty(),
        "{what}: nodes left open"
    );

    let mut copies: Vec<_> = m
        .adds
        .iter()
        .filter(|(_, c)| c.is_some())
        .cloned()
        .collect();
    copies.sort();
    assert_eq!(
        copies,
        expected_copies(repo, rev, base, lwm),
        "{what}: copies sent with history"
    );

    let keys: HashSet<&String> = m.tree.keys().chain(after.keys()).collect();
    for path in keys {
        let (mine, real) = (m.tree.get(path), after.get(path));
        if !in_scope(base, path) {
            // Outside the session nothing changes (except inside a parent of it that was
            // added as a plain copy, which brings its whole tree).
            assert!(
                mine == before.get(path) || mine == real,
                "{what}: {path} changed outside the session"
            );
            continue;
        }
        let (Some(mine), Some(real)) = (mine, real) else {
            panic!(
                "{what}: {path} is {:?} in the mirror and {:?} in the revision",
                mine.map(|n| n.kind),
                real.map(|n| n.kind)
            );
        };
        assert_eq!(mine.kind, real.kind, "{what}: kind of {path}");
        assert_eq!(mine.md5, real.md5, "{what}: MD5 of {path}");
        match &mine.text {
            Some(text) => assert_eq!(Some(text), real.text.as_ref(), "{what}: text of {path}"),
            None => assert!(
                !send_deltas || mine.kind == NodeKind::Dir,
                "{what}: text of {path} not sent"
            ),
        }
        if mine.props != real.props {
            assert!(
                m.props_signalled.contains(path),
                "{what}: properties of {path}: {:?} in the mirror, {:?} in the revision",
                mine.props,
                real.props
            );
        }
    }
}

/// The sessions to replay each fixture at: the root, `trunk`, and a directory two levels
/// down (the first of HEAD), so that parents of the session path matter too.
fn bases(truth: &mut Truth, head: Revnum) -> Vec<String> {
    let tree = truth.tree(head);
    let mut bases = vec![String::new(), "trunk".to_string()];
    if let Some(deep) = tree
        .iter()
        .find(|(p, n)| n.kind == NodeKind::Dir && p.matches('/').count() == 1)
        .map(|(p, _)| p.clone())
    {
        bases.push(deep);
    }
    bases
}

fn check_fixture(name: &str) {
    let (_dir, repo) = load_fixture(name);
    let head = repo.youngest();
    let mut truth = Truth {
        repo: &*repo,
        trees: HashMap::new(),
    };
    let bases = bases(&mut truth, head);
    let revs: Vec<Revnum> = if head > 100 {
        // Every revision with a copy, and a sample of the others.
        (1..=head)
            .filter(|r| {
                r % 97 == 0
                    || head - r < 5
                    || repo
                        .rev_meta(*r)
                        .expect("meta")
                        .changes
                        .iter()
                        .any(|c| c.copyfrom.is_some())
            })
            .collect()
    } else {
        (1..=head).collect()
    };
    for &rev in &revs {
        for base in &bases {
            for lwm in [0, rev] {
                for send_deltas in [true, false] {
                    check_revision(&*repo, &mut truth, rev, base, lwm, send_deltas);
                }
            }
        }
        if head > 100 {
            // Keep the cache small on long histories.
            truth.trees.retain(|r, _| *r == head);
        }
    }
}

macro_rules! fixture_tests {
    ($($test:ident => $name:expr,)*) => {
        $(
            #[test]
            fn $test() {
                check_fixture($name);
            }
        )*

        #[test]
        fn every_fixture_has_a_mirror_test() {
            let mut covered = vec![$($name),*];
            covered.sort();
            assert_eq!(covered, svelto_testkit::fixture_names());
        }
    };
}

fixture_tests! {
    mirror_basic => "basic",
    mirror_copies => "copies",
    mirror_empty_revs => "empty-revs",
    mirror_eol_keywords => "eol-keywords",
    mirror_many_revs => "many-revs",
    mirror_mergeinfo => "mergeinfo",
    mirror_mixed => "mixed",
    mirror_moves => "moves",
    mirror_names => "names",
    mirror_props => "props",
    mirror_readd => "readd",
    mirror_replace => "replace",
    mirror_revprops => "revprops",
    mirror_symlinks => "symlinks",
}

#[test]
fn revision_zero_is_only_the_target_revision() {
    let (_dir, repo) = load_fixture("basic");
    let mut rec = Recorder::default();
    let opts = ReplayOptions {
        base_dir: String::new(),
        low_water_mark: 0,
        send_deltas: true,
        text: TextOptions::default(),
    };
    replay(&*repo, 0, &opts, &mut rec).expect("replay r0");
    assert_eq!(rec.calls, vec![Call::TargetRev(0)]);
}

#[test]
fn a_revision_past_head_fails_before_any_call() {
    let (_dir, repo) = load_fixture("basic");
    let mut rec = Recorder::default();
    let opts = ReplayOptions {
        base_dir: String::new(),
        low_water_mark: 0,
        send_deltas: true,
        text: TextOptions::default(),
    };
    let err = replay(&*repo, repo.youngest() + 1, &opts, &mut rec).expect_err("past head");
    assert!(err.to_string().contains("No such revision"), "{err}");
    assert!(rec.calls.is_empty());
}

/// A dump of two revisions: a file larger than a delta's in-memory limit added, then
/// changed in the middle and copied.
fn big_file_dump(size: usize) -> Vec<u8> {
    let mut text: Vec<u8> = (0..size as u64)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let mut out = b"SVN-fs-dump-format-version: 2\n\n".to_vec();
    let rev = |out: &mut Vec<u8>, n: u32| {
        out.extend_from_slice(
            format!("Revision-number: {n}\nProp-content-length: 10\nContent-length: 10\n\nPROPS-END\n\n")
                .as_bytes(),
        );
    };
    let node = |out: &mut Vec<u8>, headers: &str, text: &[u8]| {
        out.extend_from_slice(
            format!(
                "{headers}Text-content-length: {0}\nContent-length: {0}\n\n",
                text.len()
            )
            .as_bytes(),
        );
        out.extend_from_slice(text);
        out.extend_from_slice(b"\n\n");
    };
    rev(&mut out, 0);
    rev(&mut out, 1);
    node(
        &mut out,
        "Node-path: big\nNode-kind: file\nNode-action: add\n",
        &text,
    );
    rev(&mut out, 2);
    text[size / 2..size / 2 + 10].copy_from_slice(b"0123456789");
    node(
        &mut out,
        "Node-path: big\nNode-kind: file\nNode-action: change\n",
        &text,
    );
    text.extend_from_slice(b"tail");
    node(
        &mut out,
        "Node-path: copy\nNode-kind: file\nNode-action: add\nNode-copyfrom-rev: 1\nNode-copyfrom-path: big\n",
        &text,
    );
    out
}

#[test]
fn large_texts_are_streamed_and_apply() {
    let size = svelto_fs::DELTA_MAX + 300_000;
    let dir = svelto_testkit::tempdir();
    let dump_path = dir.path().join("big.dump");
    std::fs::write(&dump_path, big_file_dump(size)).expect("write dump");
    let loaded = svelto_testkit::svelto_create_load(&dump_path, LoadOptions::default());
    let repo = loaded.repo;
    assert_eq!(repo.youngest(), 2);
    let mut truth = Truth {
        repo: &repo,
        trees: HashMap::new(),
    };
    for rev in 1..=2 {
        for lwm in [0, rev] {
            check_revision(&repo, &mut truth, rev, "", lwm, true);
        }
    }
    let fsfs = svelto_testkit::svnadmin_create_load(&dump_path);
    let texts = svnserve::all_texts(&repo);
    svnserve::compare("big", &repo, &fsfs, &texts, "", 0, true);
}

fn xml_unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

fn xml_attr(tag: &str, name: &str) -> Option<String> {
    let start = tag.find(&format!("{name}=\""))? + name.len() + 2;
    let len = tag[start..].find('"')?;
    Some(xml_unescape(&tag[start..start + len]))
}

/// Every copy of the history as `svn log -v` of the FSFS repository lists it:
/// (revision, fspath, copy source fspath, copy source revision).
fn copies_in_svn_log(fsfs: &svelto_testkit::TempRepo) -> Vec<(Revnum, String, String, Revnum)> {
    let log = svelto_testkit::Run::tool("svn")
        .args(["log", "-v", "--xml", "-r", "1:HEAD"])
        .arg(fsfs.url())
        .env("LANG", "C")
        .success()
        .stdout_text();
    let mut out = Vec::new();
    for entry in log.split("<logentry").skip(1) {
        let rev: Revnum = xml_attr(entry, "revision")
            .and_then(|r| r.parse().ok())
            .expect("revision");
        for path in entry.split("<path\n").skip(1) {
            let Some(from) = xml_attr(path, "copyfrom-path") else {
                continue;
            };
            let from_rev = xml_attr(path, "copyfrom-rev")
                .and_then(|r| r.parse().ok())
                .expect("copyfrom-rev");
            let start = path.find('>').expect("tag end") + 1;
            let end = path.find("</path>").expect("path end");
            out.push((rev, xml_unescape(&path[start..end]), from, from_rev));
        }
    }
    out.sort();
    out
}

/// svnsync replays with low-water-mark 0 from the root: every copy of the history must
/// reach it with its copy source, so that the mirror keeps the history `svn log` shows.
#[test]
fn copies_keep_the_history_svn_log_shows() {
    let mut total = 0;
    for name in svelto_testkit::fixture_names() {
        if name == "many-revs" {
            continue;
        }
        let (_dir, repo) = load_fixture(&name);
        let fsfs = svelto_testkit::svnadmin_create_load(&svelto_testkit::scenario_dump(&name));
        let expected = copies_in_svn_log(&fsfs);
        let opts = ReplayOptions {
            base_dir: String::new(),
            low_water_mark: 0,
            send_deltas: true,
            text: TextOptions::default(),
        };
        let mut sent = Vec::new();
        for rev in 1..=repo.youngest() {
            let mut rec = Recorder::default();
            replay(&*repo, rev, &opts, &mut rec).expect("replay");
            for call in rec.calls {
                if let Call::AddDir(path, _, _, Some((from, r)))
                | Call::AddFile(path, _, _, Some((from, r))) = call
                {
                    sent.push((rev, format!("/{path}"), from, r));
                }
            }
        }
        sent.sort();
        assert_eq!(sent, expected, "{name}: copies sent with history");
        total += sent.len();
    }
    assert!(total > 40, "the fixtures hold {total} copies");
}
