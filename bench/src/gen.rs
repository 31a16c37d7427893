//! The history generator: a seeded random walk over a modelled repository, written
//! out revision by revision as a format-2 dumpfile.
//!
//! Determinism: one `ChaCha8Rng` seeded from the configuration drives every choice;
//! the model lives in `BTreeMap`s and `Vec`s only; dates come from the generator, not
//! the clock. Same configuration, same bytes.
//!
//! Memory: the model holds the live trees (trunk, live branches) as line tokens, not
//! bytes (see `text`); a revision's node records are rendered one at a time.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::io::{self, Write};
use std::ops::Bound;
use std::rc::Rc;

use rand::seq::SliceRandom;
use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::date;
use crate::dump::DumpWriter;
use crate::model::{Action, Body, Change, FileData, Mergeinfo, Node, Patch, Props};
use crate::text::{self, Header, Lang};
use crate::words::{
    AUTHORS, BINARY_TYPES, ENGLISH, IDENT_PARTS, LOG_OBJECTS, LOG_VERBS, NAME_PARTS, ODD_NAMES,
};

/// The named sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Size {
    Small,
    Medium,
    Large,
}

impl Size {
    pub fn parse(s: &str) -> Option<Size> {
        match s {
            "small" => Some(Size::Small),
            "medium" => Some(Size::Medium),
            "large" => Some(Size::Large),
            _ => None,
        }
    }
}

/// What to generate. `Config::new` derives everything from seed, revisions and files.
#[derive(Clone, Debug)]
pub struct Config {
    pub seed: u64,
    /// Youngest revision of the dump (r1 lays out trunk/branches/tags, r2 imports).
    pub revisions: u32,
    /// Files in the initial import of trunk.
    pub files: u32,
    /// The ChangeLog drops its oldest entries beyond this many bytes. (Format 2 carries
    /// the full text of every version; an unbounded append-only file would make the dump
    /// grow with the square of the history.)
    pub changelog_cap: usize,
    /// Binaries of `big_binary_bytes` in the import.
    pub big_binaries: u32,
    pub big_binary_bytes: (usize, usize),
    /// About one revision in this many touches `big_rev_files` files.
    pub big_rev_every: u32,
    pub big_rev_files: (usize, usize),
    /// About one revision in this many makes a release branch or tag.
    pub tag_every: u32,
    /// Feature branches alive at the same time.
    pub max_live_branches: usize,
}

impl Config {
    pub fn new(seed: u64, revisions: u32, files: u32) -> Config {
        let files = files.max(1);
        let big = files >= 5_000;
        Config {
            seed,
            revisions: revisions.max(2),
            files,
            changelog_cap: if revisions <= 2_000 {
                16 << 10
            } else {
                32 << 10
            },
            big_binaries: (files / 400).max(1),
            big_binary_bytes: if big {
                (1 << 20, 6 << 20)
            } else {
                (64 << 10, 1 << 20)
            },
            big_rev_every: (revisions / 12).clamp(40, 1_000),
            big_rev_files: ((files / 20).max(10) as usize, (files / 5).max(20) as usize),
            tag_every: (revisions / 30).clamp(40, 400),
            max_live_branches: 4,
        }
    }

    pub fn preset(size: Size, seed: u64) -> Config {
        match size {
            Size::Small => Config::new(seed, 500, 1_000),
            Size::Medium => Config::new(seed, 12_000, 20_000),
            Size::Large => Config::new(seed, 75_000, 40_000),
        }
    }
}

/// What was generated.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    pub revisions: u32,
    pub bytes: u64,
    pub node_records: u64,
    pub max_records_in_revision: usize,
    pub trunk_files: usize,
    pub trunk_dirs: usize,
    pub changelog_revisions: u32,
    pub branches: u32,
    pub tags: u32,
    pub copies: u64,
    pub deletes: u64,
    pub replaces: u64,
    pub big_revisions: u32,
}

/// Writes the dump for `cfg` to `out`.
pub fn generate<W: Write>(cfg: &Config, out: W) -> io::Result<(Stats, W)> {
    let gen = Gen::new(cfg, out);
    gen.run()
}

/// A set of paths that can be picked from at random in O(1).
#[derive(Default)]
struct PathSet {
    items: Vec<String>,
    pos: BTreeMap<String, usize>,
}

impl PathSet {
    fn insert(&mut self, p: &str) {
        if !self.pos.contains_key(p) {
            self.pos.insert(p.to_owned(), self.items.len());
            self.items.push(p.to_owned());
        }
    }

    fn remove(&mut self, p: &str) {
        if let Some(i) = self.pos.remove(p) {
            self.items.swap_remove(i);
            if let Some(moved) = self.items.get(i) {
                self.pos.insert(moved.clone(), i);
            }
        }
    }

    /// A path, skewed towards the front: some files are edited far more than others.
    fn pick<R: Rng>(&self, rng: &mut R) -> Option<String> {
        if self.items.is_empty() {
            return None;
        }
        let u: f64 = rng.gen();
        let i = ((u * u * u) * self.items.len() as f64) as usize;
        self.items.get(i.min(self.items.len() - 1)).cloned()
    }
}

/// The revisions right after the import, in order: one of every kind of change.
#[derive(Clone, Copy, Debug)]
enum Tour {
    AddFiles,
    AddDir,
    RenameFile,
    RenameDir,
    ReplaceFresh,
    ReplaceCopy,
    DeleteFiles,
    DeleteDir,
    Props,
    Binary,
    Edit,
    ReleaseBranch,
    BranchCreate,
    BranchCommit,
    BranchSync,
    Backport,
    ReleaseTag,
    RcTag,
    BranchReset,
    BranchReintegrate,
    BranchDelete,
    RcTagsDelete,
    Big,
}

const TOUR: &[Tour] = &[
    Tour::AddFiles,
    Tour::AddDir,
    Tour::RenameFile,
    Tour::RenameDir,
    Tour::ReplaceFresh,
    Tour::ReplaceCopy,
    Tour::DeleteFiles,
    Tour::DeleteDir,
    Tour::Props,
    Tour::Binary,
    Tour::ReleaseBranch,
    Tour::BranchCreate,
    Tour::BranchCommit,
    Tour::Edit,
    Tour::BranchSync,
    Tour::Edit,
    Tour::Backport,
    Tour::ReleaseTag,
    Tour::RcTag,
    Tour::BranchReset,
    Tour::BranchCommit,
    Tour::BranchReintegrate,
    Tour::BranchDelete,
    Tour::RcTagsDelete,
    Tour::Big,
];

struct Feature {
    path: String,
    created: u32,
    last_sync: u32,
    commits_left: u32,
    modified: BTreeSet<String>,
    added: BTreeSet<String>,
    reintegrated: Option<u32>,
}

struct Release {
    path: String,
    major: u32,
    minor: u32,
    next_patch: u32,
    created: u32,
}

/// What kind of file a new path gets.
#[derive(Clone, Copy)]
enum FileKind {
    Text(Lang),
    SmallBinary,
    BigBinary,
}

/// A top-level directory of trunk: its share of directories and the extensions of its
/// files (extension, weight).
struct Top {
    name: &'static str,
    weight: u32,
    exts: &'static [(&'static str, u32)],
}

const TOPS: &[Top] = &[
    Top {
        name: "src",
        weight: 30,
        exts: &[("c", 65), ("h", 35)],
    },
    Top {
        name: "include",
        weight: 5,
        exts: &[("h", 1)],
    },
    Top {
        name: "bindings",
        weight: 10,
        exts: &[("java", 50), ("py", 50)],
    },
    Top {
        name: "tests",
        weight: 18,
        exts: &[("c", 40), ("py", 60)],
    },
    Top {
        name: "docs",
        weight: 8,
        exts: &[("txt", 40), ("md", 20), ("html", 25), ("png", 15)],
    },
    Top {
        name: "tools",
        weight: 5,
        exts: &[("py", 60), ("sh", 40)],
    },
    Top {
        name: "build",
        weight: 3,
        exts: &[("mk", 50), ("m4", 30), ("cmake", 20)],
    },
    Top {
        name: "contrib",
        weight: 11,
        exts: &[("c", 50), ("h", 20), ("java", 15), ("js", 15)],
    },
    Top {
        name: "examples",
        weight: 5,
        exts: &[("c", 50), ("py", 50)],
    },
    Top {
        name: "data",
        weight: 5,
        exts: &[("xml", 40), ("json", 30), ("dat", 20), ("gif", 10)],
    },
];

fn kind_for_ext(ext: &str) -> FileKind {
    match ext {
        "c" | "h" => FileKind::Text(Lang::C),
        "java" | "js" => FileKind::Text(Lang::Java),
        "py" | "sh" | "mk" | "m4" | "cmake" | "am" | "ac" => FileKind::Text(Lang::Python),
        "png" | "gif" | "jpg" | "dat" => FileKind::SmallBinary,
        "jar" | "zip" | "pdf" | "bin" => FileKind::BigBinary,
        _ => FileKind::Text(Lang::Text),
    }
}

fn ext_of(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.rsplit_once('.').map_or("", |(_, e)| e)
}

fn stem_of(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.rsplit_once('.').map_or(name, |(s, _)| s)
}

fn parent_of(path: &str) -> &str {
    path.rfind('/').map_or("", |i| &path[..i])
}

fn depth_of(path: &str) -> usize {
    path.bytes().filter(|&b| b == b'/').count()
}

fn mime_for_ext(ext: &str) -> &'static str {
    BINARY_TYPES
        .iter()
        .find(|(e, _)| *e == ext)
        .map_or("application/octet-stream", |(_, m)| m)
}

fn weighted<'a, R: Rng>(rng: &mut R, items: &'a [(&'a str, u32)]) -> &'a str {
    let total: u32 = items.iter().map(|(_, w)| w).sum();
    let mut r = rng.gen_range(0..total.max(1));
    for (item, w) in items {
        if r < *w {
            return item;
        }
        r -= w;
    }
    items.first().map_or("", |(i, _)| i)
}

struct Gen<'c, W: Write> {
    cfg: &'c Config,
    rng: ChaCha8Rng,
    w: DumpWriter<W>,
    tree: BTreeMap<String, Node>,
    trunk_text: PathSet,
    trunk_bin: PathSet,
    /// The revision being built.
    rev: u32,
    /// Date of the last revision, in microseconds since the epoch.
    now: i64,
    mean_gap: f64,
    changes: Vec<Change>,
    touched: BTreeMap<String, usize>,
    /// Paths (tags) dropped from the model once the revision is written.
    forget: Vec<String>,
    changelog: VecDeque<Vec<u8>>,
    changelog_len: usize,
    features: Vec<Feature>,
    releases: Vec<Release>,
    rc_tags: Vec<String>,
    vendors: Vec<String>,
    /// Trunk text files changed lately, for merges to pick from.
    recent: VecDeque<String>,
    version: (u32, u32),
    next_id: u32,
    scratch: Vec<u8>,
    stats: Stats,
}

impl<'c, W: Write> Gen<'c, W> {
    fn new(cfg: &'c Config, out: W) -> Gen<'c, W> {
        let span = 9.0 * 365.25 * 86_400.0 * 1e6;
        Gen {
            cfg,
            rng: ChaCha8Rng::seed_from_u64(cfg.seed),
            w: DumpWriter::new(out),
            tree: BTreeMap::new(),
            trunk_text: PathSet::default(),
            trunk_bin: PathSet::default(),
            rev: 0,
            now: (date::days_from_civil(2004, 3, 1) * 86_400 + 9 * 3600) * 1_000_000,
            mean_gap: span / f64::from(cfg.revisions.max(1)),
            changes: Vec::new(),
            touched: BTreeMap::new(),
            forget: Vec::new(),
            changelog: VecDeque::new(),
            changelog_len: 0,
            features: Vec::new(),
            releases: Vec::new(),
            rc_tags: Vec::new(),
            vendors: Vec::new(),
            recent: VecDeque::new(),
            version: (1, 0),
            next_id: 1,
            scratch: Vec::with_capacity(1 << 20),
            stats: Stats::default(),
        }
    }

    fn run(mut self) -> io::Result<(Stats, W)> {
        let mut b = [0u8; 16];
        self.rng.fill_bytes(&mut b);
        b[6] = (b[6] & 0x0f) | 0x40;
        b[8] = (b[8] & 0x3f) | 0x80;
        let h = hex::encode(b);
        let uuid = format!(
            "{}-{}-{}-{}-{}",
            &h[..8],
            &h[8..12],
            &h[12..16],
            &h[16..20],
            &h[20..]
        );
        self.w.start(&uuid)?;
        let mut r0 = Props::new();
        r0.insert("svn:date".into(), date::svn_date(self.now));
        self.w.revision(0, &r0)?;
        self.rev = 1;
        self.layout()?;
        if self.cfg.revisions >= 2 {
            self.import()?;
        }
        while self.rev <= self.cfg.revisions {
            self.step()?;
        }
        self.stats.revisions = self.rev - 1;
        self.stats.bytes = self.w.bytes();
        let trunk = self.subtree_keys("trunk");
        self.stats.trunk_files = trunk
            .iter()
            .filter(|p| matches!(self.tree.get(*p), Some(Node::File(_))))
            .count();
        self.stats.trunk_dirs = trunk.len() - self.stats.trunk_files;
        let stats = self.stats.clone();
        Ok((stats, self.w.into_inner()))
    }

    // ----- revisions -------------------------------------------------------------

    fn author(&mut self) -> usize {
        let u: f64 = self.rng.gen();
        ((u * u) * AUTHORS.len() as f64) as usize % AUTHORS.len()
    }

    fn advance_clock(&mut self) {
        let u: f64 = self.rng.gen();
        let gap = (-(1.0 - u).ln() * self.mean_gap) as i64;
        self.now += gap.max(1_000_000) + self.rng.gen_range(0..1_000_000);
    }

    /// Writes the revision built in `self.changes`. With `changelog`, the revision also
    /// appends an entry with these lines to trunk/ChangeLog.
    fn commit(&mut self, log: String, changelog: Option<Vec<String>>) -> io::Result<()> {
        let author = self.author();
        self.advance_clock();
        if let Some(lines) = changelog {
            self.append_changelog(author, &lines);
        }
        let mut props = Props::new();
        props.insert("svn:author".into(), AUTHORS[author].0.into());
        props.insert("svn:date".into(), date::svn_date(self.now));
        props.insert("svn:log".into(), log);
        self.w.revision(self.rev, &props)?;
        let mut changes = std::mem::take(&mut self.changes);
        for c in &changes {
            match (c.action, &c.copyfrom) {
                (Action::Delete, _) => self.stats.deletes += 1,
                (Action::Replace, Some(_)) => {
                    self.stats.replaces += 1;
                    self.stats.copies += 1
                }
                (Action::Replace, None) => self.stats.replaces += 1,
                (_, Some(_)) => self.stats.copies += 1,
                _ => {}
            }
        }
        self.stats.node_records += changes.len() as u64;
        for c in &changes {
            if c.action == Action::Change && self.trunk_text.pos.contains_key(&c.path) {
                if self.recent.len() == 64 {
                    self.recent.pop_front();
                }
                self.recent.push_back(c.path.clone());
            }
        }
        self.stats.max_records_in_revision = self.stats.max_records_in_revision.max(changes.len());
        self.w.nodes(&mut changes)?;
        changes.clear();
        self.changes = changes;
        self.touched.clear();
        for p in std::mem::take(&mut self.forget) {
            self.remove_subtree(&p);
        }
        self.rev += 1;
        Ok(())
    }

    fn append_changelog(&mut self, author: usize, lines: &[String]) {
        const PATH: &str = "trunk/ChangeLog";
        let Some(Node::File(old)) = self.tree.get(PATH).cloned() else {
            return;
        };
        let (user, name) = AUTHORS[author];
        let mut entry = format!("{}  {name}  <{user}@example.org>\n\n", date::day(self.now));
        for l in lines {
            entry.push_str("\t* ");
            entry.push_str(l);
            entry.push('\n');
        }
        entry.push('\n');
        self.changelog_len += entry.len();
        self.changelog.push_back(entry.into_bytes());
        while self.changelog_len > self.cfg.changelog_cap && self.changelog.len() > 1 {
            if let Some(e) = self.changelog.pop_front() {
                self.changelog_len -= e.len();
            }
        }
        let mut body = Vec::with_capacity(self.changelog_len);
        for e in &self.changelog {
            body.extend_from_slice(e);
        }
        let f = FileData::new(Body::Raw(body), old.props.clone(), &mut self.scratch);
        self.op_modify(PATH, Node::File(f));
        self.stats.changelog_revisions += 1;
    }

    fn sentence(&mut self, min: usize, max: usize) -> String {
        let n = self.rng.gen_range(min..=max);
        let mut s = String::new();
        for i in 0..n {
            let w = ENGLISH[self.rng.gen_range(0..ENGLISH.len())];
            if i == 0 {
                let mut c = w.chars();
                if let Some(f) = c.next() {
                    s.extend(f.to_uppercase());
                }
                s.push_str(c.as_str());
            } else {
                s.push(' ');
                s.push_str(w);
            }
        }
        s.push('.');
        s
    }

    fn func_name(&mut self) -> String {
        let n = self.rng.gen_range(1..=3);
        (0..n)
            .map(|_| IDENT_PARTS[self.rng.gen_range(0..IDENT_PARTS.len())])
            .collect::<Vec<_>>()
            .join("_")
    }

    /// A log message: a summary line, often a body listing the changed paths in the
    /// Subversion project's style, sometimes a trailer.
    fn log_message(&mut self, summary: &str, paths: &[String]) -> String {
        let mut s = summary.to_owned();
        if !paths.is_empty() && self.rng.gen_ratio(3, 5) {
            s.push_str("\n\n");
            for p in paths.iter().take(6) {
                let f = self.func_name();
                let why = self.sentence(4, 12);
                s.push_str(&format!("* {p}\n  ({f}): {why}\n"));
            }
            if paths.len() > 6 {
                s.push_str(&format!(
                    "* (and {} more files): Likewise.\n",
                    paths.len() - 6
                ));
            }
        }
        match self.rng.gen_range(0..12) {
            0 => {
                let (u, n) = AUTHORS[self.rng.gen_range(0..AUTHORS.len())];
                s.push_str(&format!("\nPatch by: {n} <{u}@example.org>\n"));
            }
            1 => {
                let (u, _) = AUTHORS[self.rng.gen_range(0..AUTHORS.len())];
                s.push_str(&format!("\nReview by: {u}\n"));
            }
            2 => {
                let issue = self.rng.gen_range(1000..5000);
                s.push_str(&format!("\nFixes issue #{issue}.\n"));
            }
            _ => {}
        }
        s
    }

    /// ChangeLog lines for a set of trunk paths.
    fn changelog_lines(&mut self, summary: &str, paths: &[String]) -> Vec<String> {
        let mut lines = Vec::new();
        for p in paths.iter().take(4) {
            let rel = p.strip_prefix("trunk/").unwrap_or(p);
            let f = self.func_name();
            let why = self.sentence(3, 9);
            lines.push(format!("{rel} ({f}): {why}"));
        }
        if paths.len() > 4 || paths.is_empty() {
            lines.push(format!("Many files: {summary}"));
        }
        lines
    }

    /// Commits a revision that changes trunk: log message and ChangeLog entry.
    fn commit_trunk(&mut self, summary: String, paths: &[String]) -> io::Result<()> {
        let log = self.log_message(&summary, paths);
        let lines = self.changelog_lines(&summary, paths);
        self.commit(log, Some(lines))
    }

    /// Commits a revision outside trunk (branches, tags): no ChangeLog entry.
    fn commit_other(&mut self, summary: String, paths: &[String]) -> io::Result<()> {
        let log = self.log_message(&summary, paths);
        self.commit(log, None)
    }

    // ----- model operations, each recorded as a change of the current revision ----

    fn index_insert(&mut self, path: &str, node: &Node) {
        if !path.starts_with("trunk/") {
            return;
        }
        if let Node::File(f) = node {
            match f.body {
                Body::Text { .. } => self.trunk_text.insert(path),
                Body::Binary { .. } => self.trunk_bin.insert(path),
                Body::Raw(_) => {}
            }
        }
    }

    fn index_remove(&mut self, path: &str) {
        if path.starts_with("trunk/") {
            self.trunk_text.remove(path);
            self.trunk_bin.remove(path);
        }
    }

    /// Keys of `path` and everything below it.
    fn subtree_keys(&self, path: &str) -> Vec<String> {
        let prefix = format!("{path}/");
        let mut keys: Vec<String> = Vec::new();
        if self.tree.contains_key(path) {
            keys.push(path.to_owned());
        }
        keys.extend(
            self.tree
                .range::<str, _>((Bound::Included(prefix.as_str()), Bound::Unbounded))
                .take_while(|(k, _)| k.starts_with(&prefix))
                .map(|(k, _)| k.clone()),
        );
        keys
    }

    /// Files below `dir` (at any depth).
    fn files_under(&self, dir: &str) -> Vec<String> {
        let prefix = format!("{dir}/");
        self.tree
            .range::<str, _>((Bound::Included(prefix.as_str()), Bound::Unbounded))
            .take_while(|(k, _)| k.starts_with(&prefix))
            .filter(|(_, n)| !n.is_dir())
            .map(|(k, _)| k.clone())
            .collect()
    }

    /// Direct children of `dir`: (path, is_dir).
    fn children(&self, dir: &str) -> Vec<(String, bool)> {
        let prefix = format!("{dir}/");
        self.tree
            .range::<str, _>((Bound::Included(prefix.as_str()), Bound::Unbounded))
            .take_while(|(k, _)| k.starts_with(&prefix))
            .filter(|(k, _)| !k[prefix.len()..].contains('/'))
            .map(|(k, n)| (k.clone(), n.is_dir()))
            .collect()
    }

    fn remove_subtree(&mut self, path: &str) {
        for k in self.subtree_keys(path) {
            self.tree.remove(&k);
            self.index_remove(&k);
        }
    }

    fn record(&mut self, change: Change) {
        self.touched.insert(change.path.clone(), self.changes.len());
        self.changes.push(change);
    }

    fn op_add(&mut self, path: &str, node: Node) {
        debug_assert!(!self.tree.contains_key(path), "add of existing {path}");
        self.index_insert(path, &node);
        self.tree.insert(path.to_owned(), node.clone());
        self.record(Change {
            path: path.to_owned(),
            action: Action::Add,
            node: Some(node),
            copyfrom: None,
            base: None,
        });
    }

    fn op_add_dir(&mut self, path: &str, props: Props) {
        self.op_add(path, Node::Dir(Rc::new(props)));
    }

    /// Replaces a file with new, unrelated contents (a replace without history).
    fn op_replace(&mut self, path: &str, node: Node) {
        self.remove_subtree(path);
        self.index_insert(path, &node);
        self.tree.insert(path.to_owned(), node.clone());
        self.record(Change {
            path: path.to_owned(),
            action: Action::Replace,
            node: Some(node),
            copyfrom: None,
            base: None,
        });
    }

    /// Changes text and/or properties of an existing node. A path added or copied in
    /// this revision keeps its one record.
    fn op_modify(&mut self, path: &str, node: Node) {
        let old = self.tree.insert(path.to_owned(), node.clone());
        // Keep the pick order (hot files stay hot) unless the kind of file changed.
        let same_kind = match (&old, &node) {
            (Some(Node::File(a)), Node::File(b)) => {
                std::mem::discriminant(&a.body) == std::mem::discriminant(&b.body)
            }
            (Some(Node::Dir(_)), Node::Dir(_)) => true,
            _ => false,
        };
        if !same_kind {
            self.index_remove(path);
            self.index_insert(path, &node);
        }
        if let Some(&i) = self.touched.get(path) {
            self.changes[i].node = Some(node);
            return;
        }
        self.record(Change {
            path: path.to_owned(),
            action: Action::Change,
            node: Some(node),
            copyfrom: None,
            base: old,
        });
    }

    fn op_delete(&mut self, path: &str) {
        self.remove_subtree(path);
        self.record(Change {
            path: path.to_owned(),
            action: Action::Delete,
            node: None,
            copyfrom: None,
            base: None,
        });
    }

    /// Copies `src` as of the previous revision to `dst` (which must not have been
    /// changed in this revision yet), replacing `dst` if `replace`.
    fn op_copy(&mut self, src: &str, dst: &str, replace: bool) {
        let Some(src_node) = self.tree.get(src).cloned() else {
            debug_assert!(false, "copy from missing {src}");
            return;
        };
        let below: Vec<(String, Node)> = self
            .subtree_keys(src)
            .into_iter()
            .skip(1)
            .filter_map(|k| self.tree.get(&k).cloned().map(|n| (k, n)))
            .collect();
        if replace {
            self.remove_subtree(dst);
        }
        self.index_insert(dst, &src_node);
        self.tree.insert(dst.to_owned(), src_node.clone());
        for (k, n) in below {
            let p = format!("{dst}{}", &k[src.len()..]);
            self.index_insert(&p, &n);
            self.tree.insert(p, n);
        }
        self.record(Change {
            path: dst.to_owned(),
            action: if replace {
                Action::Replace
            } else {
                Action::Add
            },
            node: Some(src_node.clone()),
            copyfrom: Some((self.rev - 1, src.to_owned())),
            base: Some(src_node),
        });
    }

    /// Copies a directory from an older revision without modelling the copy (for tags
    /// nobody reads again). The caller knows `src` existed at `rev`.
    fn op_copy_untracked(&mut self, src: &str, rev: u32, dst: &str) {
        let node = Node::Dir(Rc::new(Props::new()));
        self.record(Change {
            path: dst.to_owned(),
            action: Action::Add,
            node: Some(node.clone()),
            copyfrom: Some((rev, src.to_owned())),
            base: Some(node),
        });
    }

    fn file(&self, path: &str) -> Option<Rc<FileData>> {
        self.tree.get(path).and_then(|n| n.file().cloned())
    }

    /// Edits a text file like a small commit does. False for non-text files.
    fn edit_file(&mut self, path: &str) -> bool {
        let Some(f) = self.file(path) else {
            return false;
        };
        let Body::Text { lang, vocab, lines } = &f.body else {
            return false;
        };
        for _ in 0..8 {
            let mut new = lines.clone();
            text::edit(&mut self.rng, *lang, *vocab, &mut new);
            let body = Body::Text {
                lang: *lang,
                vocab: *vocab,
                lines: new,
            };
            let nf = FileData::new(body, f.props.clone(), &mut self.scratch);
            if nf.sums != f.sums {
                self.op_modify(path, Node::File(nf));
                return true;
            }
        }
        false
    }

    /// Sets a text file's lines through `change`; false when it changes nothing.
    fn rewrite_file(
        &mut self,
        path: &str,
        change: impl FnOnce(&mut ChaCha8Rng, Lang, u32, &mut Vec<u64>) -> bool,
    ) -> bool {
        let Some(f) = self.file(path) else {
            return false;
        };
        let Body::Text { lang, vocab, lines } = &f.body else {
            return false;
        };
        let mut new = lines.clone();
        if !change(&mut self.rng, *lang, *vocab, &mut new) {
            return false;
        }
        let body = Body::Text {
            lang: *lang,
            vocab: *vocab,
            lines: new,
        };
        let nf = FileData::new(body, f.props.clone(), &mut self.scratch);
        if nf.sums == f.sums {
            return false;
        }
        self.op_modify(path, Node::File(nf));
        true
    }

    fn set_file_props(&mut self, path: &str, props: Props) -> bool {
        let Some(f) = self.file(path) else {
            return false;
        };
        if f.props == props {
            return false;
        }
        let nf = f.with_props(props);
        self.op_modify(path, Node::File(nf));
        true
    }

    fn set_dir_props(&mut self, path: &str, props: Props) {
        self.op_modify(path, Node::Dir(Rc::new(props)));
    }

    // ----- new content -----------------------------------------------------------

    fn new_file(&mut self, path: &str, kind: FileKind) -> Rc<FileData> {
        let ext = ext_of(path).to_owned();
        let mut props = Props::new();
        let body = match kind {
            FileKind::Text(lang) => {
                let u: f64 = self.rng.gen();
                let target = if self.rng.gen_ratio(1, 30) {
                    self.rng.gen_range(100..1_000)
                } else {
                    (1_000.0 * 50f64.powf(u)) as usize
                };
                let code = lang != Lang::Text;
                let keywords = code && self.rng.gen_ratio(1, 4);
                let header = Header {
                    license: code
                        && self
                            .rng
                            .gen_ratio(if lang == Lang::Python { 1 } else { 4 }, 5),
                    keyword_id: keywords,
                    year: date::year(self.now),
                };
                if self.rng.gen_ratio(17, 20) {
                    props.insert("svn:eol-style".into(), "native".into());
                }
                if keywords {
                    let kw = if self.rng.gen_ratio(3, 5) {
                        "Id"
                    } else {
                        "Author Date Id Revision"
                    };
                    props.insert("svn:keywords".into(), kw.into());
                }
                if ext == "sh" || (ext == "py" && path.contains("/tools/") && self.rng.gen()) {
                    props.insert("svn:executable".into(), "*".into());
                }
                if ext == "html" && self.rng.gen() {
                    props.insert("svn:mime-type".into(), "text/html".into());
                }
                let lines = text::new_body(&mut self.rng, lang, target, header);
                Body::Text {
                    lang,
                    vocab: self.rng.gen(),
                    lines,
                }
            }
            FileKind::SmallBinary | FileKind::BigBinary => {
                let len = if let FileKind::BigBinary = kind {
                    let (lo, hi) = self.cfg.big_binary_bytes;
                    self.rng.gen_range(lo..=hi.max(lo))
                } else {
                    let u: f64 = self.rng.gen();
                    (1_000.0 * 40f64.powf(u)) as usize
                };
                props.insert("svn:mime-type".into(), mime_for_ext(&ext).into());
                Body::Binary {
                    seed: self.rng.gen(),
                    len,
                    patches: Vec::new(),
                }
            }
        };
        FileData::new(body, props, &mut self.scratch)
    }

    fn name_part(&mut self) -> &'static str {
        NAME_PARTS[self.rng.gen_range(0..NAME_PARTS.len())]
    }

    /// A file name not yet used in `dir`, with extension `ext`.
    fn fresh_file_name(&mut self, dir: &str, ext: &str) -> String {
        let mut attempt = 0u32;
        loop {
            let mut stem = self.name_part().to_owned();
            if attempt > 3 || self.rng.gen_ratio(1, 2) {
                stem.push('_');
                stem.push_str(self.name_part());
            }
            if attempt > 10 {
                stem.push_str(&attempt.to_string());
            }
            let path = if ext.is_empty() {
                format!("{dir}/{stem}")
            } else {
                format!("{dir}/{stem}.{ext}")
            };
            if !self.tree.contains_key(&path) && !self.touched.contains_key(&path) {
                return path;
            }
            attempt += 1;
        }
    }

    fn fresh_dir_name(&mut self, parent: &str) -> String {
        let mut attempt = 0u32;
        loop {
            let mut name = self.name_part().to_owned();
            if attempt > 2 {
                name.push('_');
                name.push_str(self.name_part());
            }
            if attempt > 8 {
                name.push_str(&attempt.to_string());
            }
            let path = format!("{parent}/{name}");
            if !self.tree.contains_key(&path) && !self.touched.contains_key(&path) {
                return path;
            }
            attempt += 1;
        }
    }

    /// Lays out a tree of about `files` files below `root` (which exists), as adds.
    /// Returns the files added.
    fn grow_tree(&mut self, root: &str, files: usize, top_level: bool) -> Vec<String> {
        let dirs_target = (files * 10 / 77).max(1);
        // (path, index into TOPS, weight for files)
        let mut dirs: Vec<(String, usize, u32)> = Vec::new();
        let tops: Vec<usize> = if top_level {
            (0..TOPS.len()).collect()
        } else {
            // A vendor drop: C sources, headers and tests.
            vec![0, 1, 3]
        };
        for &t in &tops {
            let path = format!("{root}/{}", TOPS[t].name);
            if !self.tree.contains_key(&path) {
                self.op_add_dir(&path, Props::new());
            }
            dirs.push((path, t, 1));
        }
        let top_weights: Vec<(usize, u32)> = tops.iter().map(|&t| (t, TOPS[t].weight)).collect();
        let total_top: u32 = top_weights.iter().map(|(_, w)| w).sum();
        while dirs.len() < dirs_target {
            // Pick a top-level area by weight, then a directory inside it.
            let mut r = self.rng.gen_range(0..total_top);
            let mut top = tops[0];
            for &(t, w) in &top_weights {
                if r < w {
                    top = t;
                    break;
                }
                r -= w;
            }
            let in_top: Vec<usize> = (0..dirs.len()).filter(|&i| dirs[i].1 == top).collect();
            // The shallower of two random directories: trees are bushy, not deep.
            let a = &dirs[in_top[self.rng.gen_range(0..in_top.len())]].0;
            let b = &dirs[in_top[self.rng.gen_range(0..in_top.len())]].0;
            let parent = if depth_of(a) <= depth_of(b) { a } else { b }.clone();
            if depth_of(&parent) - depth_of(root) >= 5 {
                continue;
            }
            let path = self.fresh_dir_name(&parent);
            let mut props = Props::new();
            if TOPS[top].name == "src" && self.rng.gen_ratio(1, 10) {
                props.insert("svn:ignore".into(), "*.o\n*.lo\n.libs\n.deps\n".into());
            }
            self.op_add_dir(&path, props);
            dirs.push((path, top, 0));
        }
        for d in dirs.iter_mut() {
            let u: f64 = self.rng.gen();
            d.2 = 1 + (30.0 * u * u * u) as u32;
        }
        let total: u32 = dirs.iter().map(|d| d.2).sum();
        let mut added = Vec::with_capacity(files);
        for _ in 0..files {
            let mut r = self.rng.gen_range(0..total);
            let mut di = 0;
            for (i, d) in dirs.iter().enumerate() {
                if r < d.2 {
                    di = i;
                    break;
                }
                r -= d.2;
            }
            let (dir, top) = (dirs[di].0.clone(), dirs[di].1);
            let ext = weighted(&mut self.rng, TOPS[top].exts).to_owned();
            let mut kind = kind_for_ext(&ext);
            let mut path = self.fresh_file_name(&dir, &ext);
            if top_level
                && self
                    .rng
                    .gen_ratio(self.cfg.big_binaries, self.cfg.files.max(1))
            {
                let ext = ["jar", "zip", "pdf", "bin"][self.rng.gen_range(0..4)];
                path = self.fresh_file_name(&dir, ext);
                kind = FileKind::BigBinary;
            }
            let f = self.new_file(&path, kind);
            self.op_add(&path, Node::File(f));
            added.push(path);
        }
        added
    }

    // ----- the first revisions ---------------------------------------------------

    fn layout(&mut self) -> io::Result<()> {
        for d in ["trunk", "branches", "tags"] {
            self.op_add_dir(d, Props::new());
        }
        self.commit("Create the standard repository layout.".into(), None)
    }

    fn import(&mut self) -> io::Result<()> {
        let mut props = Props::new();
        props.insert(
            "svn:ignore".into(),
            "configure\nMakefile.in\nautom4te.cache\nconfig.log\nconfig.status\n".into(),
        );
        self.set_dir_props("trunk", props);
        let files = self.cfg.files as usize;
        let specials = [
            ("README", 3_000),
            ("NEWS", 6_000),
            ("COPYING", 11_000),
            ("INSTALL", 8_000),
        ];
        for (name, size) in specials {
            let header = Header {
                license: false,
                keyword_id: false,
                year: date::year(self.now),
            };
            let lines = text::new_body(&mut self.rng, Lang::Text, size, header);
            let body = Body::Text {
                lang: Lang::Text,
                vocab: self.rng.gen(),
                lines,
            };
            let mut p = Props::new();
            p.insert("svn:eol-style".into(), "native".into());
            let f = FileData::new(body, p, &mut self.scratch);
            self.op_add(&format!("trunk/{name}"), Node::File(f));
        }
        for name in ["Makefile.am", "configure.ac"] {
            let f = self.new_file(&format!("trunk/{name}"), FileKind::Text(Lang::Python));
            self.op_add(&format!("trunk/{name}"), Node::File(f));
        }
        let mut p = Props::new();
        p.insert("svn:eol-style".into(), "native".into());
        let version = FileData::new(
            Body::Raw(b"1.0.0-dev\n".to_vec()),
            p.clone(),
            &mut self.scratch,
        );
        self.op_add("trunk/VERSION", Node::File(version));
        let changelog = FileData::new(Body::Raw(Vec::new()), p, &mut self.scratch);
        self.op_add("trunk/ChangeLog", Node::File(changelog));
        let mut added = self.grow_tree("trunk", files.saturating_sub(8), true);
        // A few documents whose names have spaces and non-ASCII characters.
        let docs: Vec<String> = self
            .subtree_keys("trunk/docs")
            .into_iter()
            .filter(|p| self.tree.get(p).is_some_and(Node::is_dir))
            .collect();
        for name in ODD_NAMES
            .iter()
            .take((files / 3_000).clamp(3, ODD_NAMES.len()))
        {
            if docs.is_empty() {
                break;
            }
            let path = format!("{}/{name}", docs[self.rng.gen_range(0..docs.len())]);
            if !self.tree.contains_key(&path) {
                let f = self.new_file(&path, FileKind::Text(Lang::Text));
                self.op_add(&path, Node::File(f));
                added.push(path);
            }
        }
        // Shuffle the pick order so that hot files are spread over the tree.
        let mut order = added;
        order.shuffle(&mut self.rng);
        self.trunk_text = PathSet::default();
        self.trunk_bin = PathSet::default();
        for p in order {
            if let Some(n) = self.tree.get(&p).cloned() {
                self.index_insert(&p, &n);
            }
        }
        for name in [
            "README",
            "NEWS",
            "COPYING",
            "INSTALL",
            "Makefile.am",
            "configure.ac",
        ] {
            self.trunk_text.insert(&format!("trunk/{name}"));
        }
        self.commit(
            "Initial import of the Example Project sources.".into(),
            Some(vec!["Initial import.".into()]),
        )
    }

    // ----- one revision of the history -------------------------------------------

    fn step(&mut self) -> io::Result<()> {
        let scripted = (self.rev as usize)
            .checked_sub(3)
            .and_then(|i| TOUR.get(i))
            .copied();
        let done = if let Some(op) = scripted {
            self.tour(op)?
        } else if self.rng.gen_ratio(1, self.cfg.big_rev_every.max(1)) {
            self.rev_big()?
        } else if self.rng.gen_ratio(1, self.cfg.tag_every.max(1)) {
            self.rev_release()?
        } else {
            match self.rng.gen_range(0..1000) {
                0..=34 => self.rev_branch()?,
                35..=37 => self.rev_backport()?,
                38..=62 => self.rev_add_files()?,
                63..=70 => self.rev_add_dir()?,
                71..=90 => self.rev_delete_files()?,
                91..=93 => self.rev_delete_dir()?,
                94..=105 => self.rev_rename_file()?,
                106..=108 => self.rev_rename_dir()?,
                109..=112 => self.rev_replace_file()?,
                113..=124 => self.rev_props()?,
                125..=127 => self.rev_binary_update()?,
                _ => false,
            }
        };
        if !done {
            debug_assert!(self.changes.is_empty(), "a failed operation left changes");
            self.changes.clear();
            self.touched.clear();
            self.rev_edit()?;
        }
        Ok(())
    }

    /// One revision of the opening tour, which makes every size show every kind of
    /// change early on.
    fn tour(&mut self, op: Tour) -> io::Result<bool> {
        let last = self.features.len().checked_sub(1);
        match (op, last) {
            (Tour::AddFiles, _) => self.rev_add_files(),
            (Tour::AddDir, _) => self.rev_add_dir(),
            (Tour::RenameFile, _) => self.rev_rename_file(),
            (Tour::RenameDir, _) => self.rev_rename_dir(),
            (Tour::ReplaceFresh, _) => self.replace_file(true),
            (Tour::ReplaceCopy, _) => self.replace_file(false),
            (Tour::DeleteFiles, _) => self.rev_delete_files(),
            (Tour::DeleteDir, _) => self.rev_delete_dir(),
            (Tour::Props, _) => self.rev_props(),
            (Tour::Binary, _) => self.rev_binary_update(),
            (Tour::Edit, _) => {
                self.rev_edit()?;
                Ok(true)
            }
            (Tour::ReleaseBranch, _) => self.release_branch(),
            (Tour::ReleaseTag, _) => self.release_tag(),
            (Tour::RcTag, _) => self.rc_tag(),
            (Tour::RcTagsDelete, _) if !self.rc_tags.is_empty() => self.rc_tags_delete(),
            (Tour::Backport, _) => self.rev_backport(),
            (Tour::BranchCreate, _) => self.branch_create(),
            (Tour::BranchCommit, Some(i)) => self.branch_commit(i),
            (Tour::BranchSync, Some(i)) => self.branch_sync(i),
            (Tour::BranchReset, Some(i)) => self.branch_reset(i),
            (Tour::BranchReintegrate, Some(i)) => self.branch_reintegrate(i),
            (Tour::BranchDelete, Some(i)) => self.branch_delete(i),
            (Tour::Big, _) => self.rev_big(),
            _ => Ok(false),
        }
    }

    fn component(path: &str) -> String {
        let stem = stem_of(path);
        if stem.is_empty() {
            "the build".into()
        } else {
            stem.to_owned()
        }
    }

    fn rev_edit(&mut self) -> io::Result<()> {
        let mut paths: Vec<String> = Vec::new();
        if let Some(first) = self.trunk_text.pick(&mut self.rng) {
            let mut n = 1;
            while n < 12 && self.rng.gen_ratio(11, 20) {
                n += 1;
            }
            let siblings: Vec<String> = self
                .children(parent_of(&first))
                .into_iter()
                .filter(|(p, d)| !d && *p != first && self.trunk_text.pos.contains_key(p))
                .map(|(p, _)| p)
                .collect();
            paths.push(first);
            for _ in 1..n {
                let p = if !siblings.is_empty() && self.rng.gen_ratio(3, 5) {
                    siblings[self.rng.gen_range(0..siblings.len())].clone()
                } else if let Some(p) = self.trunk_text.pick(&mut self.rng) {
                    p
                } else {
                    continue;
                };
                if !paths.contains(&p) {
                    paths.push(p);
                }
            }
        }
        paths.retain(|p| self.edit_file(p));
        if let Some(first) = paths.first().cloned() {
            if self.rng.gen_ratio(1, 12) {
                let dir = parent_of(&first).to_owned();
                let ext = ext_of(&first).to_owned();
                let path = self.fresh_file_name(&dir, &ext);
                let f = self.new_file(&path, kind_for_ext(&ext));
                self.op_add(&path, Node::File(f));
                paths.push(path);
            }
        }
        let verb = LOG_VERBS[self.rng.gen_range(0..LOG_VERBS.len())];
        let object = LOG_OBJECTS[self.rng.gen_range(0..LOG_OBJECTS.len())];
        let comp = paths
            .first()
            .map_or("the ChangeLog".into(), |p| Self::component(p));
        self.commit_trunk(format!("{verb} {object} in {comp}."), &paths)
    }

    fn rev_add_files(&mut self) -> io::Result<bool> {
        let Some(anchor) = self.trunk_text.pick(&mut self.rng) else {
            return Ok(false);
        };
        let dir = parent_of(&anchor).to_owned();
        let ext = ext_of(&anchor).to_owned();
        let mut paths = Vec::new();
        for _ in 0..self.rng.gen_range(1..=4) {
            let path = self.fresh_file_name(&dir, &ext);
            let f = self.new_file(&path, kind_for_ext(&ext));
            self.op_add(&path, Node::File(f));
            paths.push(path);
        }
        let what = self.sentence(2, 5).to_lowercase();
        let summary = format!("Add {} for {}", Self::component(&paths[0]), what);
        self.commit_trunk(summary, &paths)?;
        Ok(true)
    }

    fn rev_add_dir(&mut self) -> io::Result<bool> {
        let Some(anchor) = self.trunk_text.pick(&mut self.rng) else {
            return Ok(false);
        };
        let parent = parent_of(&anchor).to_owned();
        let ext = ext_of(&anchor).to_owned();
        let dir = self.fresh_dir_name(&parent);
        self.op_add_dir(&dir, Props::new());
        let mut paths = Vec::new();
        for _ in 0..self.rng.gen_range(2..=10) {
            let path = self.fresh_file_name(&dir, &ext);
            let f = self.new_file(&path, kind_for_ext(&ext));
            self.op_add(&path, Node::File(f));
            paths.push(path);
        }
        let summary = format!("Add the {} module.", Self::component(&dir));
        self.commit_trunk(summary, &paths)?;
        Ok(true)
    }

    fn rev_delete_files(&mut self) -> io::Result<bool> {
        let mut paths = Vec::new();
        for _ in 0..self.rng.gen_range(1..=3) {
            if let Some(p) = self.trunk_text.pick(&mut self.rng) {
                if !p.starts_with("trunk/") || depth_of(&p) < 2 || paths.contains(&p) {
                    continue;
                }
                self.op_delete(&p);
                paths.push(p);
            }
        }
        if paths.is_empty() {
            return Ok(false);
        }
        let summary = format!("Remove unused {}.", Self::component(&paths[0]));
        self.commit_trunk(summary, &paths)?;
        Ok(true)
    }

    /// A directory of at least depth `min_depth` above a random file, with at most
    /// `max_files` files below it.
    fn small_dir(&mut self, min_depth: usize, max_files: usize) -> Option<String> {
        for _ in 0..8 {
            let anchor = self.trunk_text.pick(&mut self.rng)?;
            let mut dir = parent_of(&anchor).to_owned();
            let mut best = None;
            while depth_of(&dir) >= min_depth {
                if self.files_under(&dir).len() > max_files {
                    break;
                }
                best = Some(dir.clone());
                dir = parent_of(&dir).to_owned();
            }
            if best.is_some() {
                return best;
            }
        }
        None
    }

    fn rev_delete_dir(&mut self) -> io::Result<bool> {
        let Some(dir) = self.small_dir(2, 40) else {
            return Ok(false);
        };
        self.op_delete(&dir);
        let summary = format!("Remove the obsolete {} directory.", Self::component(&dir));
        self.commit_trunk(summary, std::slice::from_ref(&dir))?;
        Ok(true)
    }

    fn rev_rename_file(&mut self) -> io::Result<bool> {
        let Some(src) = self.trunk_text.pick(&mut self.rng) else {
            return Ok(false);
        };
        if depth_of(&src) < 2 {
            return Ok(false);
        }
        let dir = if self.rng.gen_ratio(7, 10) {
            parent_of(&src).to_owned()
        } else {
            match self.trunk_text.pick(&mut self.rng) {
                Some(p) if depth_of(&p) >= 2 => parent_of(&p).to_owned(),
                _ => parent_of(&src).to_owned(),
            }
        };
        let dst = self.fresh_file_name(&dir, ext_of(&src));
        self.op_copy(&src, &dst, false);
        let modified = self.rng.gen_ratio(3, 10) && self.edit_file(&dst);
        self.op_delete(&src);
        let summary = format!(
            "Rename {} to {}{}.",
            src.strip_prefix("trunk/").unwrap_or(&src),
            dst.strip_prefix("trunk/").unwrap_or(&dst),
            if modified { " and adjust it" } else { "" }
        );
        self.commit_trunk(summary, &[dst, src])?;
        Ok(true)
    }

    fn rev_rename_dir(&mut self) -> io::Result<bool> {
        let Some(src) = self.small_dir(2, 60) else {
            return Ok(false);
        };
        let dst = self.fresh_dir_name(parent_of(&src));
        self.op_copy(&src, &dst, false);
        self.op_delete(&src);
        let summary = format!(
            "Move {} to {}.",
            src.strip_prefix("trunk/").unwrap_or(&src),
            dst.strip_prefix("trunk/").unwrap_or(&dst)
        );
        self.commit_trunk(summary, &[dst, src])?;
        Ok(true)
    }

    fn rev_replace_file(&mut self) -> io::Result<bool> {
        let fresh = self.rng.gen_ratio(1, 2);
        self.replace_file(fresh)
    }

    /// Replaces a file with new contents (`fresh`) or with a copy of another file.
    fn replace_file(&mut self, fresh: bool) -> io::Result<bool> {
        let Some(target) = self.trunk_text.pick(&mut self.rng) else {
            return Ok(false);
        };
        if fresh {
            let f = self.new_file(&target, kind_for_ext(ext_of(&target)));
            self.op_replace(&target, Node::File(f));
            let summary = format!("Rewrite {} from scratch.", Self::component(&target));
            self.commit_trunk(summary, std::slice::from_ref(&target))?;
            return Ok(true);
        }
        let mut src = None;
        for _ in 0..20 {
            match self.trunk_text.pick(&mut self.rng) {
                Some(p) if p != target && ext_of(&p) == ext_of(&target) => {
                    src = Some(p);
                    break;
                }
                _ => {}
            }
        }
        let Some(src) = src else {
            return Ok(false);
        };
        self.op_copy(&src, &target, true);
        let summary = format!(
            "Replace {} with a copy of {}.",
            target.strip_prefix("trunk/").unwrap_or(&target),
            src.strip_prefix("trunk/").unwrap_or(&src)
        );
        self.commit_trunk(summary, &[target, src])?;
        Ok(true)
    }

    fn rev_props(&mut self) -> io::Result<bool> {
        let mut paths = Vec::new();
        let summary = match self.rng.gen_range(0..4) {
            0 => {
                for _ in 0..self.rng.gen_range(1..=4) {
                    let Some(p) = self.trunk_text.pick(&mut self.rng) else {
                        break;
                    };
                    let Some(f) = self.file(&p) else { continue };
                    let mut props = f.props.clone();
                    if props.contains_key("svn:keywords") || paths.contains(&p) {
                        continue;
                    }
                    props.insert("svn:keywords".into(), "Id".into());
                    if self.set_file_props(&p, props) {
                        paths.push(p);
                    }
                }
                "Set svn:keywords on a few files."
            }
            1 => {
                for _ in 0..self.rng.gen_range(1..=6) {
                    let Some(p) = self.trunk_text.pick(&mut self.rng) else {
                        break;
                    };
                    let Some(f) = self.file(&p) else { continue };
                    let mut props = f.props.clone();
                    if paths.contains(&p) {
                        continue;
                    }
                    if props.remove("svn:eol-style").is_none() {
                        props.insert("svn:eol-style".into(), "native".into());
                    }
                    if self.set_file_props(&p, props) {
                        paths.push(p);
                    }
                }
                "Fix svn:eol-style on some files."
            }
            2 => {
                let Some(p) = self.trunk_text.pick(&mut self.rng) else {
                    return Ok(false);
                };
                let dir = parent_of(&p).to_owned();
                let Some(Node::Dir(old)) = self.tree.get(&dir).cloned() else {
                    return Ok(false);
                };
                let mut props = (*old).clone();
                let mut ignore = props.get("svn:ignore").cloned().unwrap_or_default();
                ignore.push_str(&format!("{}.tmp\n", self.name_part()));
                props.insert("svn:ignore".into(), ignore);
                self.set_dir_props(&dir, props);
                paths.push(dir);
                "Ignore generated files."
            }
            _ => {
                let Some(p) = self.trunk_text.pick(&mut self.rng) else {
                    return Ok(false);
                };
                let Some(f) = self.file(&p) else {
                    return Ok(false);
                };
                let mut props = f.props.clone();
                if props.remove("svn:keywords").is_none() {
                    props.insert("svn:keywords".into(), "Author Date Id Revision".into());
                }
                if self.set_file_props(&p, props) {
                    paths.push(p);
                }
                "Adjust svn:keywords."
            }
        };
        if paths.is_empty() {
            return Ok(false);
        }
        self.commit_trunk(summary.to_owned(), &paths)?;
        Ok(true)
    }

    fn rev_binary_update(&mut self) -> io::Result<bool> {
        let Some(p) = self.trunk_bin.pick(&mut self.rng) else {
            return Ok(false);
        };
        let Some(f) = self.file(&p) else {
            return Ok(false);
        };
        let Body::Binary { seed, len, patches } = &f.body else {
            return Ok(false);
        };
        let body = if self.rng.gen_ratio(1, 2) {
            let mut patches = patches.clone();
            for _ in 0..self.rng.gen_range(1..=4) {
                let plen = self.rng.gen_range(1..=(64 << 10)).min(*len);
                patches.push(Patch {
                    offset: self.rng.gen_range(0..=len - plen),
                    len: plen,
                    seed: self.rng.gen(),
                });
            }
            Body::Binary {
                seed: *seed,
                len: *len,
                patches,
            }
        } else {
            let scale = self.rng.gen_range(0.8..1.25);
            Body::Binary {
                seed: self.rng.gen(),
                len: ((*len as f64) * scale) as usize + 1,
                patches: Vec::new(),
            }
        };
        let nf = FileData::new(body, f.props.clone(), &mut self.scratch);
        if nf.sums == f.sums {
            return Ok(false);
        }
        self.op_modify(&p, Node::File(nf));
        let summary = format!("Update {}.", p.rsplit('/').next().unwrap_or(&p));
        self.commit_trunk(summary, &[p])?;
        Ok(true)
    }

    // ----- revisions that touch thousands of files --------------------------------

    /// A trunk directory with between `min` and `max` text files below it (or the
    /// closest to that).
    fn subtree_with(&mut self, min: usize, max: usize) -> String {
        let mut counts: BTreeMap<String, usize> = BTreeMap::new();
        for p in &self.trunk_text.items {
            let mut d = parent_of(p);
            while !d.is_empty() {
                *counts.entry(d.to_owned()).or_default() += 1;
                d = parent_of(d);
            }
        }
        let fitting: Vec<&String> = counts
            .iter()
            .filter(|(_, &c)| c >= min && c <= max)
            .map(|(d, _)| d)
            .collect();
        if !fitting.is_empty() {
            return fitting[self.rng.gen_range(0..fitting.len())].clone();
        }
        counts
            .iter()
            .filter(|(_, &c)| c >= min)
            .min_by_key(|(_, &c)| c)
            .map_or_else(|| "trunk".to_owned(), |(d, _)| d.clone())
    }

    fn rev_big(&mut self) -> io::Result<bool> {
        let (min, max) = self.cfg.big_rev_files;
        self.stats.big_revisions += 1;
        let choice = self.rng.gen_range(0..20);
        if choice >= 16 {
            if !self.vendors.is_empty() && self.rng.gen_ratio(1, 2) {
                let i = self.rng.gen_range(0..self.vendors.len());
                let dir = self.vendors.remove(i);
                self.op_delete(&dir);
                let summary = format!("Remove the bundled {}.", Self::component(&dir));
                self.commit_trunk(summary, std::slice::from_ref(&dir))?;
                return Ok(true);
            }
            let (ma, mi) = (self.rng.gen_range(1..4), self.rng.gen_range(0..10));
            let name = format!("lib{}-{ma}.{mi}", self.name_part());
            let root = format!("trunk/contrib/{name}");
            if self.tree.contains_key(&root) {
                self.stats.big_revisions -= 1;
                return Ok(false);
            }
            if !self.tree.contains_key("trunk/contrib") {
                self.op_add_dir("trunk/contrib", Props::new());
            }
            self.op_add_dir(&root, Props::new());
            let n = self.rng.gen_range(min..=(min + max) / 2);
            self.grow_tree(&root, n, false);
            self.vendors.push(root.clone());
            let summary = format!("Import {name} into contrib/ ({n} files).");
            self.commit_trunk(summary, std::slice::from_ref(&root))?;
            return Ok(true);
        }
        let dir = self.subtree_with(min, max);
        let files: Vec<String> = self
            .files_under(&dir)
            .into_iter()
            .filter(|p| self.trunk_text.pos.contains_key(p))
            .collect();
        let mut paths = Vec::new();
        let summary;
        if choice < 8 {
            let year = date::year(self.now) + 1;
            for p in &files {
                let ok = self.rewrite_file(p, |rng, lang, vocab, lines| {
                    if lang == Lang::Text {
                        return false;
                    }
                    text::set_copyright_year(lines, year)
                        || text::touch_statements(rng, lang, vocab, lines)
                });
                if ok {
                    paths.push(p.clone());
                }
            }
            summary = format!(
                "Update the copyright notices in {} for {year}.",
                dir.strip_prefix("trunk/").unwrap_or(&dir)
            );
        } else if choice < 13 {
            let from = self.func_name();
            let to = self.func_name();
            for p in &files {
                if self.rewrite_file(p, |rng, lang, vocab, lines| {
                    text::touch_statements(rng, lang, vocab, lines)
                }) {
                    paths.push(p.clone());
                }
            }
            summary = format!(
                "Rename {from}() to {to}() throughout {}.",
                dir.strip_prefix("trunk/").unwrap_or(&dir)
            );
        } else {
            for p in &files {
                let Some(f) = self.file(p) else { continue };
                let mut props = f.props.clone();
                if props.contains_key("svn:eol-style") {
                    continue;
                }
                props.insert("svn:eol-style".into(), "native".into());
                if self.set_file_props(p, props) {
                    paths.push(p.clone());
                }
            }
            if paths.len() < files.len() / 20 {
                for p in &files {
                    let Some(f) = self.file(p) else { continue };
                    if paths.contains(p) {
                        continue;
                    }
                    let mut props = f.props.clone();
                    if props.contains_key("svn:keywords") {
                        continue;
                    }
                    props.insert("svn:keywords".into(), "Id".into());
                    if self.set_file_props(p, props) {
                        paths.push(p.clone());
                    }
                }
            }
            summary = format!(
                "Set svn:eol-style and svn:keywords consistently in {}.",
                dir.strip_prefix("trunk/").unwrap_or(&dir)
            );
        }
        if paths.is_empty() {
            self.stats.big_revisions -= 1;
            return Ok(false);
        }
        self.commit_trunk(summary, &paths)?;
        Ok(true)
    }

    // ----- branches, merges, tags ------------------------------------------------

    fn rev_branch(&mut self) -> io::Result<bool> {
        let live = self.features.len();
        if live == 0 || (live < self.cfg.max_live_branches && self.rng.gen_ratio(1, 6)) {
            return self.branch_create();
        }
        let i = self.rng.gen_range(0..live);
        if self.features[i].reintegrated.is_some() {
            return self.branch_delete(i);
        }
        if self.features[i].commits_left == 0 {
            return self.branch_reintegrate(i);
        }
        match self.rng.gen_range(0..30) {
            0..=4 => self.branch_sync(i),
            5 => self.branch_reset(i),
            _ => self.branch_commit(i),
        }
    }

    fn branch_create(&mut self) -> io::Result<bool> {
        let id = self.next_id;
        self.next_id += 1;
        let part = self.name_part();
        let name = match self.rng.gen_range(0..3) {
            0 => format!("{part}-rework"),
            1 => format!("fix-{part}-{id}"),
            _ => format!("{part}-{id}"),
        };
        let path = format!("branches/{name}");
        if self.tree.contains_key(&path) {
            return Ok(false);
        }
        self.op_copy("trunk", &path, false);
        let mut modified = BTreeSet::new();
        if self.rng.gen_ratio(3, 10) {
            if let Some(p) = self.trunk_text.pick(&mut self.rng) {
                let rel = p["trunk/".len()..].to_owned();
                if self.edit_file(&format!("{path}/{rel}")) {
                    modified.insert(rel);
                }
            }
        }
        self.features.push(Feature {
            path: path.clone(),
            created: self.rev,
            last_sync: self.rev - 1,
            commits_left: self.rng.gen_range(2..=15),
            modified,
            added: BTreeSet::new(),
            reintegrated: None,
        });
        self.stats.branches += 1;
        let why = self.sentence(3, 8).to_lowercase();
        self.commit_other(format!("Create the '{name}' branch: {why}"), &[])?;
        Ok(true)
    }

    /// A trunk text file to merge somewhere: often one changed lately.
    fn merge_candidate(&mut self) -> Option<String> {
        if !self.recent.is_empty() && self.rng.gen_ratio(1, 2) {
            let i = self.rng.gen_range(0..self.recent.len());
            let p = self.recent[i].clone();
            if self.trunk_text.pos.contains_key(&p) {
                return Some(p);
            }
        }
        self.trunk_text.pick(&mut self.rng)
    }

    fn branch_commit(&mut self, i: usize) -> io::Result<bool> {
        let branch = self.features[i].path.clone();
        let mut paths = Vec::new();
        for _ in 0..self.rng.gen_range(1..=4) {
            let Some(p) = self.trunk_text.pick(&mut self.rng) else {
                break;
            };
            let rel = p["trunk/".len()..].to_owned();
            let bp = format!("{branch}/{rel}");
            if paths.contains(&bp) || self.touched.contains_key(&bp) {
                continue;
            }
            if self.edit_file(&bp) {
                self.features[i].modified.insert(rel);
                paths.push(bp);
            }
        }
        if paths.is_empty() || self.rng.gen_ratio(1, 8) {
            if let Some(anchor) = self.trunk_text.pick(&mut self.rng) {
                let rel_dir = parent_of(&anchor["trunk/".len()..]).to_owned();
                let dir = format!("{branch}/{rel_dir}");
                if matches!(self.tree.get(&dir), Some(Node::Dir(_))) {
                    let ext = ext_of(&anchor).to_owned();
                    let p = self.fresh_file_name(&dir, &ext);
                    let f = self.new_file(&p, kind_for_ext(&ext));
                    self.op_add(&p, Node::File(f));
                    self.features[i]
                        .added
                        .insert(p[branch.len() + 1..].to_owned());
                    paths.push(p);
                }
            }
        }
        if paths.is_empty() {
            return Ok(false);
        }
        self.features[i].commits_left -= 1;
        let name = branch.rsplit('/').next().unwrap_or(&branch).to_owned();
        let verb = LOG_VERBS[self.rng.gen_range(0..LOG_VERBS.len())];
        let object = LOG_OBJECTS[self.rng.gen_range(0..LOG_OBJECTS.len())];
        self.commit_other(format!("On the '{name}' branch: {verb} {object}."), &paths)?;
        Ok(true)
    }

    fn branch_sync(&mut self, i: usize) -> io::Result<bool> {
        let branch = self.features[i].path.clone();
        let from = self.features[i].last_sync + 1;
        let to = self.rev - 1;
        if from > to {
            return Ok(false);
        }
        let Some(Node::Dir(old)) = self.tree.get(&branch).cloned() else {
            return Ok(false);
        };
        let mut paths = Vec::new();
        let want = self.rng.gen_range(0..=6);
        for _ in 0..8 * want {
            if paths.len() == want {
                break;
            }
            let Some(p) = self.merge_candidate() else {
                break;
            };
            let rel = p["trunk/".len()..].to_owned();
            let bp = format!("{branch}/{rel}");
            if self.features[i].modified.contains(&rel) || self.touched.contains_key(&bp) {
                continue;
            }
            let (Some(tf), Some(bf)) = (self.file(&p), self.file(&bp)) else {
                continue;
            };
            if tf.sums != bf.sums || tf.props != bf.props {
                self.op_modify(&bp, Node::File(tf));
                paths.push(bp);
            }
        }
        let mut props = (*old).clone();
        let mut mi = Mergeinfo::parse(props.get("svn:mergeinfo"));
        mi.add("/trunk", from, to);
        props.insert("svn:mergeinfo".into(), mi.to_value());
        self.set_dir_props(&branch, props);
        self.features[i].last_sync = to;
        let name = branch.rsplit('/').next().unwrap_or(&branch).to_owned();
        self.commit_other(
            format!("On the '{name}' branch: Sync with ^/trunk through r{to}."),
            &[],
        )?;
        Ok(true)
    }

    fn branch_reset(&mut self, i: usize) -> io::Result<bool> {
        let branch = self.features[i].path.clone();
        self.op_copy("trunk", &branch, true);
        let f = &mut self.features[i];
        f.modified.clear();
        f.added.clear();
        f.created = self.rev;
        f.last_sync = self.rev - 1;
        let name = branch.rsplit('/').next().unwrap_or(&branch).to_owned();
        let from = self.rev - 1;
        self.commit_other(
            format!("Recreate the '{name}' branch from trunk@{from}, dropping the old attempt."),
            &[],
        )?;
        Ok(true)
    }

    fn branch_reintegrate(&mut self, i: usize) -> io::Result<bool> {
        let branch = self.features[i].path.clone();
        let Some(Node::Dir(old)) = self.tree.get("trunk").cloned() else {
            return Ok(false);
        };
        let mut paths = Vec::new();
        let modified: Vec<String> = self.features[i].modified.iter().cloned().collect();
        for rel in modified {
            let (tp, bp) = (format!("trunk/{rel}"), format!("{branch}/{rel}"));
            let (Some(tf), Some(bf)) = (self.file(&tp), self.file(&bp)) else {
                continue;
            };
            if tf.sums != bf.sums || tf.props != bf.props {
                self.op_modify(&tp, Node::File(bf));
                paths.push(tp);
            }
        }
        let added: Vec<String> = self.features[i].added.iter().cloned().collect();
        for rel in added {
            let (tp, bp) = (format!("trunk/{rel}"), format!("{branch}/{rel}"));
            let parent_ok = matches!(self.tree.get(parent_of(&tp)), Some(Node::Dir(_)));
            if parent_ok && !self.tree.contains_key(&tp) && self.tree.contains_key(&bp) {
                self.op_copy(&bp, &tp, false);
                paths.push(tp);
            }
        }
        let mut props = (*old).clone();
        let mut mi = Mergeinfo::parse(props.get("svn:mergeinfo"));
        mi.add(
            &format!("/{branch}"),
            self.features[i].created,
            self.rev - 1,
        );
        props.insert("svn:mergeinfo".into(), mi.to_value());
        self.set_dir_props("trunk", props);
        self.features[i].reintegrated = Some(self.rev);
        let name = branch.rsplit('/').next().unwrap_or(&branch).to_owned();
        self.commit_trunk(
            format!("Reintegrate the '{name}' branch into trunk."),
            &paths,
        )?;
        Ok(true)
    }

    fn branch_delete(&mut self, i: usize) -> io::Result<bool> {
        let f = self.features.remove(i);
        self.op_delete(&f.path);
        let name = f.path.rsplit('/').next().unwrap_or(&f.path).to_owned();
        let merged = f.reintegrated.unwrap_or(self.rev);
        self.commit_other(
            format!("Remove the '{name}' branch, reintegrated in r{merged}."),
            &[],
        )?;
        Ok(true)
    }

    fn set_version(&mut self, path: &str, version: &str) {
        let Some(f) = self.file(path) else { return };
        let nf = FileData::new(
            Body::Raw(format!("{version}\n").into_bytes()),
            f.props.clone(),
            &mut self.scratch,
        );
        if nf.sums != f.sums {
            self.op_modify(path, Node::File(nf));
        }
    }

    fn rev_release(&mut self) -> io::Result<bool> {
        if self.releases.is_empty() || self.rng.gen_ratio(1, 4) {
            return self.release_branch();
        }
        match self.rng.gen_range(0..10) {
            0 => self.rc_tag(),
            1 if !self.rc_tags.is_empty() => self.rc_tags_delete(),
            _ => self.release_tag(),
        }
    }

    fn release_branch(&mut self) -> io::Result<bool> {
        // Keep two release branches in the model; older ones stay in the repository.
        while self.releases.len() >= 2 {
            let old = self.releases.remove(0);
            self.remove_subtree(&old.path);
        }
        let (major, minor) = self.version;
        let path = format!("branches/{major}.{minor}.x");
        if self.tree.contains_key(&path) {
            return Ok(false);
        }
        self.op_copy("trunk", &path, false);
        self.set_version(&format!("{path}/VERSION"), &format!("{major}.{minor}.0"));
        self.version = if minor >= 4 {
            (major + 1, 0)
        } else {
            (major, minor + 1)
        };
        let (nmaj, nmin) = self.version;
        self.set_version("trunk/VERSION", &format!("{nmaj}.{nmin}.0-dev"));
        self.releases.push(Release {
            path,
            major,
            minor,
            next_patch: 0,
            created: self.rev,
        });
        self.stats.branches += 1;
        self.commit_trunk(
            format!("Create the {major}.{minor}.x release branch; trunk is now {nmaj}.{nmin}."),
            &["trunk/VERSION".to_owned()],
        )?;
        Ok(true)
    }

    fn release_tag(&mut self) -> io::Result<bool> {
        let Some(r) = self.releases.last() else {
            return Ok(false);
        };
        let (path, major, minor, patch, created) =
            (r.path.clone(), r.major, r.minor, r.next_patch, r.created);
        let tag = format!("tags/{major}.{minor}.{patch}");
        let older = self.rev - 1 - created;
        if older > 0 && self.rng.gen_ratio(1, 4) {
            // Tag an older revision of the release branch, as it was.
            let from = self.rev - 1 - self.rng.gen_range(0..older.min(20));
            self.op_copy_untracked(&path, from, &tag);
        } else {
            self.op_copy(&path, &tag, false);
            if self.rng.gen_ratio(1, 2) {
                self.set_version(
                    &format!("{tag}/VERSION"),
                    &format!("{major}.{minor}.{patch}"),
                );
            }
            self.forget.push(tag.clone());
        }
        if let Some(r) = self.releases.last_mut() {
            r.next_patch += 1;
        }
        self.stats.tags += 1;
        self.commit_other(format!("Tag {major}.{minor}.{patch}."), &[])?;
        Ok(true)
    }

    fn rc_tag(&mut self) -> io::Result<bool> {
        let (major, minor) = self.version;
        let n = self.rc_tags.len() + 1;
        let tag = format!("tags/{major}.{minor}.0-rc{n}-{}", self.rev);
        self.op_copy("trunk", &tag, false);
        if self.tree.contains_key(&format!("{tag}/tests")) {
            self.op_delete(&format!("{tag}/tests"));
        }
        self.forget.push(tag.clone());
        self.rc_tags.push(tag.clone());
        self.stats.tags += 1;
        self.commit_other(
            format!("Tag {major}.{minor}.0 release candidate {n} (without the test suite)."),
            &[],
        )?;
        Ok(true)
    }

    fn rc_tags_delete(&mut self) -> io::Result<bool> {
        let n = self.rng.gen_range(1..=self.rc_tags.len().min(3));
        let gone: Vec<String> = self.rc_tags.drain(..n).collect();
        for t in &gone {
            self.op_delete(t);
        }
        self.commit_other("Remove obsolete release candidate tags.".into(), &[])?;
        Ok(true)
    }

    fn rev_backport(&mut self) -> io::Result<bool> {
        let Some(r) = self.releases.last() else {
            return Ok(false);
        };
        let (branch, created) = (r.path.clone(), r.created);
        if created + 1 >= self.rev {
            return Ok(false);
        }
        let Some(Node::Dir(old)) = self.tree.get(&branch).cloned() else {
            return Ok(false);
        };
        let mut paths = Vec::new();
        let want = self.rng.gen_range(1..=3);
        for _ in 0..10 * want {
            if paths.len() == want {
                break;
            }
            let Some(p) = self.merge_candidate() else {
                break;
            };
            let bp = format!("{branch}/{}", &p["trunk/".len()..]);
            if self.touched.contains_key(&bp) {
                continue;
            }
            let (Some(tf), Some(bf)) = (self.file(&p), self.file(&bp)) else {
                continue;
            };
            if tf.sums != bf.sums || tf.props != bf.props {
                self.op_modify(&bp, Node::File(tf));
                paths.push(bp);
            }
        }
        if paths.is_empty() {
            return Ok(false);
        }
        let merged = self.rng.gen_range(created + 1..self.rev);
        let mut props = (*old).clone();
        let mut mi = Mergeinfo::parse(props.get("svn:mergeinfo"));
        mi.add("/trunk", merged, merged);
        props.insert("svn:mergeinfo".into(), mi.to_value());
        self.set_dir_props(&branch, props);
        let name = branch.rsplit('/').next().unwrap_or(&branch).to_owned();
        let why = self.sentence(5, 12);
        let (a, _) = AUTHORS[self.rng.gen_range(0..AUTHORS.len())];
        let (b, _) = AUTHORS[self.rng.gen_range(0..AUTHORS.len())];
        let log = format!(
            "Merge r{merged} from trunk to the {name} branch:\n\n * r{merged}\n   {why}\n   Votes:\n     +1: {a}, {b}\n"
        );
        self.commit(log, None)?;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny(seed: u64) -> Vec<u8> {
        let cfg = Config::new(seed, 120, 150);
        let (_, out) = generate(&cfg, Vec::new()).expect("writing to memory cannot fail");
        out
    }

    #[test]
    fn same_seed_same_bytes() {
        let a = tiny(7);
        let b = tiny(7);
        assert!(a.len() > 10_000);
        assert!(a == b, "two runs with the same seed differ");
    }

    #[test]
    fn other_seed_other_bytes() {
        assert!(tiny(7) != tiny(8));
    }

    #[test]
    fn stats_add_up() {
        let cfg = Config::new(3, 300, 400);
        let (stats, out) = generate(&cfg, Vec::new()).expect("in memory");
        assert_eq!(stats.revisions, 300);
        assert_eq!(stats.bytes, out.len() as u64);
        assert!(stats.changelog_revisions > 200, "{stats:?}");
        assert!(stats.trunk_files > 300, "{stats:?}");
    }
}
