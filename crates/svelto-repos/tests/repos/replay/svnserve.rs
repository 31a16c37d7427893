//! The drive `replay` makes, compared with the one svnserve sends for `replay-range` over the
//! same history in FSFS (read off the wire of `svnserve -i`).
//!
//! Both drives are brought to one text form: the tree of opened and added nodes with their
//! copy sources, property changes (sorted, as svnserve sends them in hash order), the MD5 of
//! the text each delta produces from its base, and the MD5 at close. Siblings are sorted by
//! path, keeping their order otherwise, because svnserve lists a copied directory sent as a
//! plain add in hash order too.

use super::{load_fixture, md5_of};
use std::collections::HashMap;
use std::sync::Arc;
use svelto_core::{Md5, NodeKind, Revnum};
use svelto_delta::{apply_windows, decode_stream, Limits};
use svelto_repos::editor::{Call, Recorder};
use svelto_repos::{replay, ReplayOptions, TextOptions, Token};
/// A repository as the seam's callers read it (the local engine, opened by the testkit).
type Repo = dyn svelto_fs::ReadRepo;
use svelto_testkit::svnserve_client::{word_at, DriveOutcome, Mode, SvnserveClient};
use svelto_wire::Item;

/// svnserve's `replay-range start..=end` of the FSFS repository `repo`, session at `base`:
/// one recorded drive per revision.
fn svnserve_drives(
    repo: &std::path::Path,
    base: &str,
    range: (Revnum, Revnum),
    lwm: Revnum,
    send_deltas: bool,
) -> Vec<Vec<Call>> {
    let mut s = SvnserveClient::open_at(Mode::Inetd, repo, base);
    s.command(
        "replay-range",
        vec![
            Item::Number(range.0),
            Item::Number(range.1),
            Item::Number(lwm),
            Item::bool(send_deltas),
        ],
    );
    let mut drives = Vec::new();
    loop {
        let item = s.read();
        match word_at(&item, 0) {
            "revprops" => {}
            "success" => break,
            _ => panic!("svnserve: expected revprops, got {item:?}"),
        }
        match s.read_drive() {
            DriveOutcome::Drive(calls) => drives.push(calls),
            other => panic!(
                "svnserve {} lwm {lwm} send-deltas {send_deltas}: replay failed: {other:?}",
                s.url(base)
            ),
        }
    }
    drives
}

#[derive(Default)]
struct Node {
    head: String,
    path: String,
    lines: Vec<String>,
    children: Vec<usize>,
}

/// The text form of a drive (see the module comment). `texts` maps MD5s to the texts a
/// delta may have as its base.
fn render(calls: &[Call], texts: &HashMap<Md5, Arc<Vec<u8>>>) -> String {
    let mut nodes: Vec<Node> = vec![Node::default()];
    let mut at: HashMap<Token, usize> = HashMap::new();
    let mut streams: HashMap<Token, (Option<Md5>, Vec<u8>)> = HashMap::new();
    let mut top = Vec::new();
    let mut push = |nodes: &mut Vec<Node>, parent: Option<usize>, head: String, path: &str| {
        nodes.push(Node {
            head,
            path: path.to_string(),
            ..Node::default()
        });
        let i = nodes.len() - 1;
        match parent {
            Some(p) => nodes[p].children.push(i),
            None => top.push(i),
        }
        i
    };
    let copy = |c: &Option<(String, Revnum)>| match c {
        Some((p, r)) => format!(" from {p}@{r}"),
        None => String::new(),
    };
    let prop = |n: &[u8], v: &Option<Vec<u8>>| {
        format!(
            "prop {:?} = {:?}",
            String::from_utf8_lossy(n),
            v.as_ref().map(|v| String::from_utf8_lossy(v).into_owned())
        )
    };
    for c in calls {
        match c {
            Call::TargetRev(r) => {
                push(&mut nodes, None, format!("target-rev {r}"), "");
            }
            Call::OpenRoot(rev, t) => {
                let i = push(&mut nodes, None, format!("open-root {rev:?}"), "");
                at.insert(*t, i);
            }
            Call::DeleteEntry(path, rev, parent) => {
                push(
                    &mut nodes,
                    Some(at[parent]),
                    format!("delete {path} {rev:?}"),
                    path,
                );
            }
            Call::AddDir(path, parent, t, from) | Call::AddFile(path, parent, t, from) => {
                let kind = if matches!(c, Call::AddDir(..)) {
                    "add-dir"
                } else {
                    "add-file"
                };
                let head = format!("{kind} {path}{}", copy(from));
                let i = push(&mut nodes, Some(at[parent]), head, path);
                at.insert(*t, i);
            }
            Call::OpenDir(path, parent, t, rev) | Call::OpenFile(path, parent, t, rev) => {
                let i = push(
                    &mut nodes,
                    Some(at[parent]),
                    format!("open {path} {rev:?}"),
                    path,
                );
                at.insert(*t, i);
            }
            Call::ChangeDirProp(t, n, v) | Call::ChangeFileProp(t, n, v) => {
                nodes[at[t]].lines.push(prop(n, v));
            }
            Call::CloseDir(t) => nodes[at[t]].lines.push("close".into()),
            Call::ApplyTextdelta(t, base) => {
                streams.insert(*t, (*base, Vec::new()));
            }
            Call::TextdeltaChunk(t, bytes) => streams
                .get_mut(t)
                .expect("stream")
                .1
                .extend_from_slice(bytes),
            Call::TextdeltaEnd(t) => {
                let (base, stream) = streams.remove(t).expect("stream");
                let source = match &base {
                    Some(md5) => texts
                        .get(md5)
                        .cloned()
                        .unwrap_or_else(|| panic!("unknown base {}", md5.to_hex())),
                    None => Arc::new(Vec::new()),
                };
                let windows = decode_stream(&stream, &Limits::default()).expect("svndiff");
                let result = apply_windows(&windows, &source).expect("applies");
                let base = base.map_or("-".to_string(), |m| m.to_hex());
                let line = format!(
                    "text base {base} gives {} (header only: {})",
                    md5_of(&result).to_hex(),
                    stream.len() == 4 && result.is_empty()
                );
                nodes[at[t]].lines.push(line);
            }
            Call::CloseFile(t, md5) => {
                let md5 = md5.map_or("-".to_string(), |m| m.to_hex());
                nodes[at[t]].lines.push(format!("close {md5}"));
            }
            other => panic!("unexpected call in a replay: {other:?}"),
        }
    }
    let mut out = String::new();
    fn write(nodes: &[Node], i: usize, depth: usize, out: &mut String) {
        let n = &nodes[i];
        out.push_str(&format!("{}{}\n", "  ".repeat(depth), n.head));
        let mut lines = n.lines.clone();
        lines.sort();
        for l in &lines {
            out.push_str(&format!("{}  . {l}\n", "  ".repeat(depth)));
        }
        let mut children = n.children.clone();
        children.sort_by(|a, b| svelto_core::compare_paths(&nodes[*a].path, &nodes[*b].path));
        for c in children {
            write(nodes, c, depth + 1, out);
        }
    }
    for i in top {
        write(&nodes, i, 0, &mut out);
    }
    out
}

/// Every text the repository ever held, by MD5.
pub(super) fn all_texts(repo: &Repo) -> HashMap<Md5, Arc<Vec<u8>>> {
    let mut texts = HashMap::new();
    for rev in 1..=repo.youngest() {
        for c in &repo.rev_meta(rev).expect("meta").changes {
            if c.node.is_none() {
                continue;
            }
            let node = repo.node(c.node).expect("node");
            if node.kind == NodeKind::File {
                let t = node.file_text();
                texts.insert(t.md5, repo.read_text(&t).expect("text"));
            }
        }
    }
    texts
}

fn first_difference(a: &str, b: &str) -> String {
    let (al, bl): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    let i = al.iter().zip(&bl).take_while(|(x, y)| x == y).count();
    let from = i.saturating_sub(8);
    format!(
        "first difference at line {i}\n--- svnserve\n{}\n--- svelto\n{}",
        al[from..(i + 8).min(al.len())].join("\n"),
        bl[from..(i + 8).min(bl.len())].join("\n")
    )
}

pub(super) fn compare(
    name: &str,
    repo: &Repo,
    fsfs: &svelto_testkit::TempRepo,
    texts: &HashMap<Md5, Arc<Vec<u8>>>,
    base: &str,
    lwm: Revnum,
    send_deltas: bool,
) {
    let head = repo.youngest();
    let theirs = svnserve_drives(fsfs.path(), base, (0, head), lwm, send_deltas);
    assert_eq!(theirs.len() as u64, head + 1);
    for (rev, calls) in theirs.iter().enumerate() {
        let rev = rev as Revnum;
        let what =
            format!("{name} r{rev} base '{base}' low-water-mark {lwm} send-deltas {send_deltas}");
        let mut rec = Recorder::default();
        let opts = ReplayOptions {
            base_dir: base.to_string(),
            low_water_mark: lwm,
            send_deltas,
            text: TextOptions {
                svndiff_version: 2,
                accepts: 2,
                send_deltas: true,
            },
        };
        replay(repo, rev, &opts, &mut rec).unwrap_or_else(|e| panic!("{what}: {e}"));
        let (a, b) = (render(calls, texts), render(&rec.calls, texts));
        assert!(a == b, "{what}: {}", first_difference(&a, &b));
    }
}

fn compare_fixture(name: &str) {
    let (_dir, repo) = load_fixture(name);
    let fsfs = svelto_testkit::svnadmin_create_load(&svelto_testkit::scenario_dump(name));
    let texts = all_texts(&*repo);
    let head = repo.youngest();
    let mut truth = super::Truth {
        repo: &*repo,
        trees: HashMap::new(),
    };
    for base in super::bases(&mut truth, head) {
        for lwm in [0, head / 2, head] {
            for send_deltas in [true, false] {
                compare(name, &*repo, &fsfs, &texts, &base, lwm, send_deltas);
            }
        }
    }
}

#[test]
fn same_as_svnserve_many_revs() {
    let name = "many-revs";
    let (_dir, repo) = load_fixture(name);
    let fsfs = svelto_testkit::svnadmin_create_load(&svelto_testkit::scenario_dump(name));
    let texts = all_texts(&*repo);
    let head = repo.youngest();
    compare(name, &*repo, &fsfs, &texts, "", head / 2, true);
    compare(name, &*repo, &fsfs, &texts, "trunk", 0, false);
}

macro_rules! svnserve_tests {
    ($($test:ident => $name:expr,)*) => {
        $(
            #[test]
            fn $test() {
                compare_fixture($name);
            }
        )*

        #[test]
        fn every_small_fixture_is_compared_with_svnserve() {
            let mut covered = vec![$($name),*, "many-revs"];
            covered.sort();
            assert_eq!(covered, svelto_testkit::fixture_names());
        }
    };
}

svnserve_tests! {
    same_as_svnserve_basic => "basic",
    same_as_svnserve_copies => "copies",
    same_as_svnserve_empty_revs => "empty-revs",
    same_as_svnserve_eol_keywords => "eol-keywords",
    same_as_svnserve_mergeinfo => "mergeinfo",
    same_as_svnserve_mixed => "mixed",
    same_as_svnserve_moves => "moves",
    same_as_svnserve_names => "names",
    same_as_svnserve_props => "props",
    same_as_svnserve_readd => "readd",
    same_as_svnserve_replace => "replace",
    same_as_svnserve_revprops => "revprops",
    same_as_svnserve_symlinks => "symlinks",
}
