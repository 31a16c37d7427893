//! Fixtures loaded into Svelto and FSFS, report scenarios, our drive, the expected working
//! copy, and the normal form two drives are compared in.

use std::collections::{BTreeSet, HashMap};
use std::ops::Deref;
use svelto_core::{compare_paths, join, parent_and_name, Depth, NodeKind, Revnum};
use svelto_repos::editor::{Call, Recorder};
use svelto_repos::{Report, ReportOptions, ReposError, TextOptions};
/// A repository as the seam's callers read it (the local engine, opened by the testkit).
type Repo = dyn svelto_fs::ReadRepo;

/// `repo` as the service and the report drive hold a repository: a shared handle of the
/// same (local) repository.
pub fn shared(repo: &Repo) -> std::sync::Arc<dyn svelto_fs::ReadRepo> {
    let dir = repo.local_dir().expect("a local repository");
    svelto_testkit::memfs::open_local(dir)
}

/// The local engine, as the composition root gives it.
pub fn local() -> std::sync::Arc<dyn svelto_fs::Backend> {
    svelto_testkit::memfs::local_backend()
}
use svelto_testkit::svnserve_client::{Mode, SvnserveClient};
use svelto_testkit::LoadedPair;

use crate::wc::{self, copy_tree, DepthOf, Inherit, Wc};

/// One fixture history, in Svelto and in FSFS.
pub struct Fixture {
    loaded: LoadedPair,
    pub head: Revnum,
}

impl Deref for Fixture {
    type Target = LoadedPair;

    fn deref(&self) -> &LoadedPair {
        &self.loaded
    }
}

impl Fixture {
    pub fn load(name: &str) -> Fixture {
        let loaded = LoadedPair::scenario(name);
        let head = loaded.youngest();
        Fixture { loaded, head }
    }

    /// Any dump, loaded into both servers.
    pub fn from_dump(dump: &std::path::Path) -> Fixture {
        let loaded = LoadedPair::from_dump(dump, false);
        let head = loaded.youngest();
        Fixture { loaded, head }
    }

    /// A session with `svnserve -i` on the FSFS copy.
    pub fn svnserve(&self) -> SvnserveClient {
        self.loaded.svnserve(Mode::Inetd)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmd {
    Update,
    Switch,
    Status,
    Diff,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    Set {
        path: String,
        rev: Revnum,
        depth: Depth,
        start_empty: bool,
        lock_token: Option<String>,
    },
    Link {
        path: String,
        url_path: String,
        rev: Revnum,
        depth: Depth,
        start_empty: bool,
    },
    Delete {
        path: String,
    },
}

impl Op {
    pub fn set(path: &str, rev: Revnum) -> Op {
        Op::Set {
            path: path.into(),
            rev,
            depth: Depth::Infinity,
            start_empty: false,
            lock_token: None,
        }
    }

    pub fn path(&self) -> &str {
        match self {
            Op::Set { path, .. } | Op::Link { path, .. } | Op::Delete { path } => path,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Scenario {
    pub cmd: Cmd,
    pub anchor: String,
    pub target: String,
    pub target_rev: Revnum,
    pub switch_path: Option<String>,
    pub depth: Depth,
    pub send_copyfrom: bool,
    pub ignore_ancestry: bool,
    pub text_deltas: bool,
    pub ops: Vec<Op>,
}

impl Scenario {
    pub fn update(anchor: &str, target: &str, target_rev: Revnum, ops: Vec<Op>) -> Scenario {
        Scenario {
            cmd: Cmd::Update,
            anchor: anchor.into(),
            target: target.into(),
            target_rev,
            switch_path: None,
            depth: Depth::Unknown,
            send_copyfrom: false,
            ignore_ancestry: false,
            text_deltas: true,
            ops,
        }
    }

    pub fn options(&self) -> ReportOptions {
        let send_deltas = match self.cmd {
            Cmd::Status => false,
            Cmd::Diff => self.text_deltas,
            _ => true,
        };
        let (copyfrom, ignore) = match self.cmd {
            Cmd::Update | Cmd::Switch => (self.send_copyfrom, self.ignore_ancestry),
            Cmd::Status => (false, false),
            Cmd::Diff => (false, self.ignore_ancestry),
        };
        ReportOptions {
            anchor: self.anchor.clone(),
            target: self.target.clone(),
            target_rev: self.target_rev,
            switch_path: self.switch_path.clone(),
            depth: self.depth,
            send_copyfrom_args: copyfrom,
            ignore_ancestry: ignore,
            text: TextOptions {
                svndiff_version: 1,
                accepts: 1,
                send_deltas,
            },
        }
    }

    pub fn report(&self) -> Result<Report, ReposError> {
        let mut r = Report::new();
        for op in &self.ops {
            match op {
                Op::Set {
                    path,
                    rev,
                    depth,
                    start_empty,
                    lock_token,
                } => r.set_path(path, *rev, *depth, *start_empty, lock_token.as_deref())?,
                Op::Link {
                    path,
                    url_path,
                    rev,
                    depth,
                    start_empty,
                } => r.link_path(path, url_path, *rev, *depth, *start_empty, None)?,
                Op::Delete { path } => r.delete_path(path)?,
            }
        }
        Ok(r)
    }

    fn sends_text(&self) -> bool {
        self.options().text.send_deltas
    }
}

/// What our drive did.
#[derive(Debug)]
pub enum Ours {
    Drive(Vec<Call>),
    /// Failed before any editor call.
    Refused(ReposError),
    /// Failed after these calls.
    Aborted(Vec<Call>, ReposError),
}

pub fn run_ours(repo: &Repo, sc: &Scenario) -> Ours {
    let report = match sc.report() {
        Ok(r) => r,
        Err(e) => return Ours::Refused(e),
    };
    let prepared = match svelto_repos::prepare(&shared(repo), &sc.options(), report) {
        Ok(p) => p,
        Err(e) => return Ours::Refused(e),
    };
    let mut rec = Recorder::default();
    match prepared.run(&mut rec) {
        Ok(()) => Ours::Drive(rec.calls),
        Err(e) => Ours::Aborted(rec.calls, e),
    }
}

pub fn error_code(e: &ReposError) -> u64 {
    match e {
        ReposError::Svn { kind, .. } => u64::from(kind.code()),
        _ => 0,
    }
}

/// A drive in a form where what may legitimately differ between svnserve and Svelto does
/// not: the svndiff bytes (kept: whether the stream is only the header), the order of a run
/// of deletions in one directory, the order of ordinary property changes on one node.
pub fn normalize(calls: &[Call]) -> Vec<Call> {
    let mut out: Vec<Call> = Vec::new();
    let mut in_delta: HashMap<u32, usize> = HashMap::new();
    for call in calls {
        match call {
            Call::TextdeltaChunk(t, bytes) => {
                *in_delta.entry(*t).or_default() += bytes.len();
            }
            Call::TextdeltaEnd(t) => {
                let len = in_delta.remove(t).unwrap_or_default();
                let marker = if len == 4 {
                    b"header".to_vec()
                } else {
                    b"windows".to_vec()
                };
                out.push(Call::TextdeltaChunk(*t, marker));
                out.push(call.clone());
            }
            _ => out.push(call.clone()),
        }
    }
    // Sort runs.
    let key = |c: &Call| -> Option<(u8, u32)> {
        match c {
            Call::DeleteEntry(_, _, parent) => Some((0, *parent)),
            Call::ChangeDirProp(t, name, _) | Call::ChangeFileProp(t, name, _)
                if !name.starts_with(b"svn:entry:") =>
            {
                Some((1, *t))
            }
            _ => None,
        }
    };
    let mut i = 0;
    while i < out.len() {
        let Some(k) = key(&out[i]) else {
            i += 1;
            continue;
        };
        let mut j = i + 1;
        while j < out.len() && key(&out[j]) == Some(k) {
            j += 1;
        }
        out[i..j].sort_by(|a, b| format!("{a:?}").cmp(&format!("{b:?}")));
        i = j;
    }
    out
}

/// Shows the first difference of two normalized drives.
pub fn first_difference(a: &[Call], b: &[Call]) -> String {
    let at = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let from = if std::env::var_os("REPORT_DEBUG").is_some() {
        0
    } else {
        at.saturating_sub(5)
    };
    let show = |c: &[Call]| {
        c.iter()
            .enumerate()
            .skip(from)
            .take(at + 7 - from)
            .filter(|(_, c)| !matches!(c, Call::ChangeDirProp(_, n, _) | Call::ChangeFileProp(_, n, _) if n.starts_with(b"svn:entry:")))
            .map(|(i, c)| format!("  {i}: {c:?}"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    format!(
        "first difference at call {at} (svnserve {} calls, svelto {} calls)\nsvnserve:\n{}\nsvelto:\n{}",
        a.len(),
        b.len(),
        show(a),
        show(b)
    )
}

// --- The working copy a report describes, and the one the drive must produce. ---

/// The path (anchor-relative) of a report path.
fn e_path(sc: &Scenario, path: &str) -> String {
    join(&sc.target, path)
}

/// The entry describing the target, and the ops after the top-level ones.
fn split_ops(sc: &Scenario) -> (&Op, &[Op]) {
    match sc.ops.get(1) {
        Some(op) if op.path().is_empty() => (op, &sc.ops[2..]),
        _ => (&sc.ops[0], &sc.ops[1..]),
    }
}

fn op_depth(op: &Op) -> Option<Depth> {
    match op {
        Op::Set { depth, .. } | Op::Link { depth, .. } => Some(*depth),
        Op::Delete { .. } => None,
    }
}

/// The working copy the report describes, or None when it describes something the model does
/// not build (a path missing at its revision, a path below one the working copy lacks).
pub fn initial(repo: &Repo, sc: &Scenario) -> Option<Wc> {
    let mut wc = Wc::default();
    let Op::Set {
        rev: r0,
        depth: d0,
        start_empty: se0,
        ..
    } = &sc.ops[0]
    else {
        return None;
    };
    let (top, rest) = split_ops(sc);
    if sc.target.is_empty() {
        if *se0 {
            copy_tree(repo, *r0, &sc.anchor, "", Depth::Empty, &Inherit, &mut wc).then_some(())?;
            let root = wc.nodes.get_mut("")?;
            root.props.clear();
            root.entry.clear();
        } else {
            copy_tree(repo, *r0, &sc.anchor, "", *d0, &Inherit, &mut wc).then_some(())?;
        }
    } else {
        copy_tree(repo, *r0, &sc.anchor, "", Depth::Empty, &Inherit, &mut wc).then_some(())?;
        let t = sc.target.as_str();
        match top {
            Op::Set {
                rev,
                depth,
                start_empty,
                ..
            } => {
                let url = join(&sc.anchor, t);
                if repo.lookup(*rev, &url).ok()?.is_none() {
                    // Locally added: not in the repository at that revision.
                } else if *start_empty && repo.lookup(*rev, &url).ok()??.1.kind == NodeKind::Dir {
                    copy_tree(repo, *rev, &url, t, Depth::Empty, &Inherit, &mut wc);
                    let n = wc.nodes.get_mut(t)?;
                    n.props.clear();
                    n.entry.clear();
                } else {
                    copy_tree(repo, *rev, &url, t, *depth, &Inherit, &mut wc);
                }
            }
            Op::Link {
                url_path,
                rev,
                depth,
                ..
            } => {
                copy_tree(repo, *rev, url_path, t, *depth, &Inherit, &mut wc).then_some(())?;
            }
            Op::Delete { .. } => {}
        }
    }
    for op in rest {
        let e = e_path(sc, op.path());
        let (parent, name) = parent_and_name(&e);
        let parent_node = wc.nodes.get(parent)?;
        if parent_node.kind != NodeKind::Dir {
            return None;
        }
        let parent_url = parent_node.url.clone();
        if !wc.nodes.contains_key(&e) {
            // Not in the working copy (below its depth): the client would not report it.
            return None;
        }
        wc.remove_tree(&e);
        match op {
            Op::Delete { .. } => {}
            Op::Set {
                depth: Depth::Exclude,
                ..
            } => {
                wc.excluded.insert(e);
            }
            Op::Set {
                rev,
                depth,
                start_empty,
                ..
            }
            | Op::Link {
                rev,
                depth,
                start_empty,
                ..
            } => {
                let url = match op {
                    Op::Link { url_path, .. } => url_path.clone(),
                    _ => join(&parent_url, name),
                };
                let d = if *start_empty { Depth::Empty } else { *depth };
                copy_tree(repo, *rev, &url, &e, d, &Inherit, &mut wc).then_some(())?;
                if *start_empty {
                    let n = wc.nodes.get_mut(&e)?;
                    if n.kind != NodeKind::Dir {
                        return None;
                    }
                    n.props.clear();
                    n.entry.clear();
                }
            }
        }
    }
    Some(wc)
}

struct Expected {
    depths: HashMap<String, Depth>,
    urls: HashMap<String, String>,
    excluded: BTreeSet<String>,
    /// Paths the report names (not excluded or deleted), with their kind in the working copy.
    reported: HashMap<String, Option<NodeKind>>,
    requested: Depth,
}

impl DepthOf for Expected {
    fn depth(&self, e: &str, inherited: Depth) -> Depth {
        self.depths.get(e).copied().unwrap_or(inherited)
    }
    fn url(&self, e: &str) -> Option<String> {
        self.urls.get(e).cloned()
    }
    fn excluded(&self, e: &str) -> bool {
        self.excluded.contains(e)
    }
    fn reported(&self, e: &str, kind: NodeKind) -> Option<bool> {
        let wc_kind = self.reported.get(e)?;
        let dirs = kind == NodeKind::Dir || *wc_kind == Some(NodeKind::Dir);
        Some(!(self.requested == Depth::Files && dirs))
    }
    fn linked_children(&self, e: &str) -> Vec<String> {
        self.urls
            .keys()
            .filter(|p| !p.is_empty() && parent_and_name(p).0 == e)
            .map(|p| parent_and_name(p).1.to_string())
            .collect()
    }
}

/// Whether the model can say what the drive must produce: the drive sends texts, and the
/// requested depth keeps or widens every reported depth (narrowing is the client's job).
pub fn model_applies(sc: &Scenario) -> bool {
    if !sc.sends_text() {
        return false;
    }
    if sc.depth == Depth::Unknown {
        return true;
    }
    // Requested depths per level: R for the top, then R again, except that immediates
    // means empty below the top. Each reported depth must be at most that (widening only).
    let below_top = below_top(sc.depth);
    let (top, rest) = split_ops(sc);
    let top_ok = op_depth(top)
        .or(op_depth(&sc.ops[0]))
        .is_none_or(|d| d <= sc.depth && (sc.depth != Depth::Immediates || d <= Depth::Immediates));
    top_ok
        && rest
            .iter()
            .filter_map(op_depth)
            .filter(|d| *d != Depth::Exclude)
            .all(|d| d <= below_top)
}

/// The requested depth below the top of the drive.
fn below_top(requested: Depth) -> Depth {
    if requested == Depth::Immediates {
        Depth::Empty
    } else {
        requested
    }
}

/// Whether any depth in the scenario is shallow.
pub fn is_shallow(sc: &Scenario) -> bool {
    sc.ops
        .iter()
        .filter_map(op_depth)
        .chain([sc.depth])
        .any(|d| d != Depth::Infinity && d != Depth::Unknown)
}

/// The working copy after the drive: the target tree (following the report's switched
/// subtrees, unless this is a switch), cut to the working copy's depths.
pub fn expected(repo: &Repo, sc: &Scenario, initial: &Wc) -> Wc {
    let (top, rest) = split_ops(sc);
    let is_switch = sc.switch_path.is_some();
    let mut rules = Expected {
        depths: HashMap::new(),
        urls: HashMap::new(),
        excluded: BTreeSet::new(),
        reported: HashMap::new(),
        requested: below_top(sc.depth),
    };
    for op in rest {
        let e = e_path(sc, op.path());
        if !matches!(
            op,
            Op::Delete { .. }
                | Op::Set {
                    depth: Depth::Exclude,
                    ..
                }
        ) {
            // Only direct children of the top get the requested depth of the top's level;
            // deeper ones get the same (below() is idempotent past the first level).
            rules
                .reported
                .insert(e.clone(), initial.nodes.get(&e).map(|n| n.kind));
        }
        match op {
            Op::Set {
                depth: Depth::Exclude,
                ..
            } => {
                rules.excluded.insert(e);
            }
            Op::Set { depth, .. } => {
                if sc.depth == Depth::Unknown {
                    rules.depths.insert(e, *depth);
                }
            }
            Op::Link {
                depth, url_path, ..
            } => {
                if sc.depth == Depth::Unknown {
                    rules.depths.insert(e.clone(), *depth);
                }
                if !is_switch {
                    rules.urls.insert(e, url_path.clone());
                }
            }
            Op::Delete { .. } => {}
        }
    }
    let mut t_path = sc
        .switch_path
        .clone()
        .unwrap_or_else(|| join(&sc.anchor, &sc.target));
    if let (Op::Link { url_path, .. }, false) = (top, is_switch) {
        t_path = url_path.clone();
    }
    let top_depth = match (sc.depth, op_depth(top)) {
        (Depth::Unknown, Some(d)) => d,
        (Depth::Unknown, None) => op_depth(&sc.ops[0]).unwrap_or(Depth::Infinity),
        (requested, _) => requested,
    };
    let mut wc = Wc::default();
    if sc.target.is_empty() {
        copy_tree(repo, sc.target_rev, &t_path, "", top_depth, &rules, &mut wc);
    } else {
        if let Some(anchor) = initial.nodes.get("") {
            wc.nodes.insert(String::new(), anchor.clone());
        }
        copy_tree(
            repo,
            sc.target_rev,
            &t_path,
            &sc.target,
            top_depth,
            &rules,
            &mut wc,
        );
    }
    wc
}

/// Compares the working copy after the drive with the expected one (below the target; the
/// anchor itself is not updated when there is a target). Entry props are checked on the
/// nodes the drive opened or added; others keep theirs.
pub fn compare(
    actual: &Wc,
    expected: &Wc,
    initial: &Wc,
    sc: &Scenario,
    repo: &Repo,
    touched: &BTreeSet<String>,
) -> Result<(), String> {
    let inside = |p: &str| {
        sc.target.is_empty() || p == sc.target || p.starts_with(&format!("{}/", sc.target))
    };
    // In a shallow working copy, a node whose target has another kind that the depth leaves
    // out is not deleted (the reporter only deletes names missing from the target): it
    // stays as it was, with what is below it.
    let left_behind = |p: &str| -> bool {
        if !is_shallow(sc) {
            return false;
        }
        let mut at = p;
        loop {
            let (parent, name) = parent_and_name(at);
            let stays = !touched.contains(at) && initial.nodes.get(at) == actual.nodes.get(at);
            if !stays {
                return false;
            }
            if let (Some(pn), Some(node)) = (expected.nodes.get(parent), actual.nodes.get(at)) {
                let t = repo
                    .lookup(sc.target_rev, &join(&pn.url, name))
                    .ok()
                    .flatten();
                return t.is_some_and(|(_, t)| t.kind != node.kind);
            }
            if parent.is_empty() || at.is_empty() {
                return false;
            }
            at = parent;
        }
    };
    let a: Vec<&String> = actual
        .nodes
        .keys()
        .filter(|p| inside(p) && (expected.nodes.contains_key(*p) || !left_behind(p)))
        .collect();
    let e: Vec<&String> = expected.nodes.keys().filter(|p| inside(p)).collect();
    if a != e {
        let missing: Vec<_> = e.iter().filter(|p| !a.contains(p)).collect();
        let extra: Vec<_> = a.iter().filter(|p| !e.contains(p)).collect();
        return Err(format!(
            "paths differ: missing {missing:?}, extra {extra:?}"
        ));
    }
    for p in a {
        let (x, y) = (&actual.nodes[p], &expected.nodes[p]);
        if x.kind != y.kind {
            return Err(format!("'{p}': kind {:?}, expected {:?}", x.kind, y.kind));
        }
        if x.props != y.props {
            return Err(format!(
                "'{p}': props {:?}, expected {:?}",
                x.props, y.props
            ));
        }
        if x.text != y.text {
            return Err(format!(
                "'{p}': text of {} bytes, expected {} bytes",
                x.text.len(),
                y.text.len()
            ));
        }
        if touched.contains(p) && x.entry != y.entry {
            return Err(format!(
                "'{p}': entry props {:?}, expected {:?}",
                x.entry, y.entry
            ));
        }
    }
    for x in &actual.excluded {
        if actual.nodes.contains_key(x) {
            return Err(format!("excluded '{x}' is present"));
        }
    }
    Ok(())
}

// --- Scenarios. ---

/// xorshift64*: deterministic and dependency-free.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> Option<&'a T> {
        if items.is_empty() {
            None
        } else {
            items.get(self.below(items.len() as u64) as usize)
        }
    }
}

/// Every node below `root` at `rev` (relative to `root`, without "" itself).
pub fn nodes_below(repo: &Repo, rev: Revnum, root: &str) -> Vec<(String, NodeKind)> {
    let mut out = Vec::new();
    let Ok(Some((_, node))) = repo.lookup(rev, root) else {
        return out;
    };
    let mut stack = vec![(String::new(), node)];
    while let Some((path, node)) = stack.pop() {
        if node.kind != NodeKind::Dir {
            continue;
        }
        for e in repo.dir(&node).expect("dir").iter() {
            let p = join(&path, &e.name);
            out.push((p.clone(), e.kind));
            stack.push((p, repo.node(e.node).expect("node")));
        }
    }
    out.sort_by(|a, b| compare_paths(&a.0, &b.0));
    out
}

fn dirs(nodes: &[(String, NodeKind)]) -> Vec<String> {
    let mut d: Vec<String> = nodes
        .iter()
        .filter(|(_, k)| *k == NodeKind::Dir)
        .map(|(p, _)| p.clone())
        .collect();
    d.push(String::new());
    d
}

fn random_depth(rng: &mut Rng) -> Depth {
    *rng.pick(&[
        Depth::Empty,
        Depth::Files,
        Depth::Immediates,
        Depth::Infinity,
    ])
    .unwrap_or(&Depth::Infinity)
}

/// A random scenario over `repo` (revisions up to `head`).
pub fn random_scenario(repo: &Repo, head: Revnum, rng: &mut Rng) -> Scenario {
    let cmd = match rng.below(20) {
        0..=10 => Cmd::Update,
        11..=14 => Cmd::Switch,
        15..=16 => Cmd::Status,
        _ => Cmd::Diff,
    };
    let r0 = rng.below(head + 1);
    let to = rng.below(head + 1);
    let at_r0 = nodes_below(repo, r0, "");
    let at_to = nodes_below(repo, to, "");
    let anchor = if rng.chance(40) {
        String::new()
    } else {
        rng.pick(&dirs(&at_r0)).cloned().unwrap_or_default()
    };
    let children: Vec<String> = at_r0
        .iter()
        .chain(at_to.iter())
        .filter(|(p, _)| parent_and_name(p).0 == anchor && !p.is_empty())
        .map(|(p, _)| parent_and_name(p).1.to_string())
        .collect();
    let target = if rng.chance(30) {
        rng.pick(&children).cloned().unwrap_or_default()
    } else {
        String::new()
    };
    let switch_path = match cmd {
        Cmd::Switch | Cmd::Diff => {
            let mut candidates = dirs(&at_to);
            if !target.is_empty() || rng.chance(10) {
                candidates.extend(at_to.iter().map(|(p, _)| p.clone()));
            }
            if cmd == Cmd::Diff && rng.chance(50) {
                Some(join(&anchor, &target))
            } else {
                Some(rng.pick(&candidates).cloned().unwrap_or_default())
            }
        }
        _ => None,
    };
    let d0 = if rng.chance(25) {
        random_depth(rng)
    } else {
        Depth::Infinity
    };
    let depth = if rng.chance(60) {
        Depth::Unknown
    } else {
        random_depth(rng)
    };
    let mut ops = vec![Op::Set {
        path: String::new(),
        rev: r0,
        depth: d0,
        start_empty: rng.chance(8),
        lock_token: None,
    }];
    if !target.is_empty() && rng.chance(20) {
        ops.push(if rng.chance(50) {
            Op::Delete {
                path: String::new(),
            }
        } else {
            let candidates = nodes_below(repo, r0, "");
            let url = rng
                .pick(&candidates)
                .map(|c| c.0.clone())
                .unwrap_or_default();
            Op::Link {
                path: String::new(),
                url_path: url,
                rev: r0,
                depth: Depth::Infinity,
                start_empty: false,
            }
        });
    }
    let wc_root = join(&anchor, &target);
    // What the client reports: paths its working copy has (within the ambient depth), and
    // no deeper than the requested depth lets its crawler go.
    let visible = |depth: Depth, p: &str, k: NodeKind| match depth {
        Depth::Infinity | Depth::Unknown => true,
        Depth::Immediates => !p.contains('/'),
        Depth::Files => !p.contains('/') && k == NodeKind::File,
        _ => false,
    };
    let below_root: Vec<(String, NodeKind)> = nodes_below(repo, r0, &wc_root)
        .into_iter()
        .filter(|(p, k)| visible(d0, p, *k) && visible(depth, p, *k))
        .collect();
    let mut extra: Vec<Op> = Vec::new();
    for _ in 0..rng.below(5) {
        let Some((path, kind)) = rng.pick(&below_root).cloned() else {
            break;
        };
        let rev = if rng.chance(60) {
            rng.below(head + 1)
        } else {
            r0
        };
        let op = match rng.below(10) {
            0..=3 => Op::Set {
                path,
                rev,
                depth: if kind == NodeKind::Dir && rng.chance(40) {
                    random_depth(rng)
                } else {
                    Depth::Infinity
                },
                start_empty: kind == NodeKind::Dir && rng.chance(15),
                lock_token: (kind == NodeKind::File && rng.chance(20))
                    .then(|| "opaquelocktoken:1234".to_string()),
            },
            4..=5 => Op::Delete { path },
            6 => Op::Set {
                path,
                rev: r0,
                depth: Depth::Exclude,
                start_empty: false,
                lock_token: None,
            },
            _ => {
                let lrev = rng.below(head + 1);
                let at = nodes_below(repo, lrev, "");
                let same_kind: Vec<String> = at
                    .iter()
                    .filter(|(_, k)| *k == kind)
                    .map(|(p, _)| p.clone())
                    .collect();
                match rng.pick(&same_kind) {
                    Some(url) => Op::Link {
                        path,
                        url_path: url.clone(),
                        rev: lrev,
                        depth: Depth::Infinity,
                        start_empty: false,
                    },
                    None => Op::set(&path, rev),
                }
            }
        };
        extra.push(op);
    }
    if ops.len() > 1 {
        // svnserve frees a top-level link's path with the first entry after it and may then
        // crash (an assertion on the garbage) when that entry is an exclusion.
        extra.retain(|op| {
            !matches!(
                op,
                Op::Set {
                    depth: Depth::Exclude,
                    ..
                }
            )
        });
    }
    extra.sort_by(|a, b| compare_paths(a.path(), b.path()));
    extra.dedup_by(|a, b| a.path() == b.path());
    // Nothing below a deleted or excluded path: the client does not report there.
    let mut kept: Vec<Op> = Vec::new();
    for op in extra {
        let hidden = kept.iter().any(|k| {
            matches!(
                k,
                Op::Delete { .. }
                    | Op::Set {
                        depth: Depth::Exclude,
                        ..
                    }
            ) && op.path().starts_with(&format!("{}/", k.path()))
        });
        if !hidden {
            kept.push(op);
        }
    }
    ops.extend(kept);
    Scenario {
        cmd,
        anchor,
        target,
        target_rev: to,
        switch_path,
        depth,
        send_copyfrom: matches!(cmd, Cmd::Update | Cmd::Switch) && rng.chance(30),
        ignore_ancestry: matches!(cmd, Cmd::Update | Cmd::Switch | Cmd::Diff) && rng.chance(30),
        text_deltas: cmd != Cmd::Diff || rng.chance(70),
        ops,
    }
}

/// Runs `sc` through our drive and the model: the drive applies cleanly to the working copy
/// the report describes and produces the expected one. Returns our outcome.
pub fn model_check(repo: &Repo, sc: &Scenario) -> Result<(Ours, bool), String> {
    let ours = run_ours(repo, sc);
    let mut compared = false;
    if let Ours::Drive(calls) = &ours {
        if let Some(start) = initial(repo, sc) {
            let mut wc = start.clone();
            let strict = wc::Strictness {
                deltas: sc.sends_text(),
                absent_deletes: is_shallow(sc),
            };
            let applied = wc::apply(&mut wc, calls, repo, strict)?;
            if model_applies(sc) {
                let want = expected(repo, sc, &start);
                compare(&wc, &want, &start, sc, repo, &applied.touched)?;
                compared = true;
            }
        }
    }
    Ok((ours, compared))
}

/// How many random scenarios a test runs per fixture: `base`, times `REPORT_ROUNDS` when set
/// (for longer local runs).
pub fn rounds(base: usize) -> usize {
    let times = std::env::var("REPORT_ROUNDS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(1);
    base * times
}

/// The seed offset for random scenarios (`REPORT_SEED`, default 0).
pub fn seed() -> u64 {
    std::env::var("REPORT_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}
