//! Large directories are stored as changes to their previous listing (DIRDELTA): every
//! revision must still read back exactly, chains stay bounded, and a one-entry change
//! costs about one entry on disk.

use crate::common::new_repo;
use std::collections::BTreeMap;
use svelto_core::NodeKind;
use svelto_store::Repo;
use svelto_store::Txn;

#[test]
fn big_directories_read_back_at_every_revision_and_stay_small() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut w = new_repo(dir.path());
    let mut model: Vec<BTreeMap<String, NodeKind>> = vec![BTreeMap::new()];
    let mut t = Txn::begin(&mut w).expect("begin");
    t.make_node("big", NodeKind::Dir).expect("mkdir");
    let mut cur = BTreeMap::new();
    for i in 0..500 {
        let name = format!("f{i:04}");
        t.make_node(&format!("big/{name}"), NodeKind::File)
            .expect("add");
        cur.insert(name, NodeKind::File);
    }
    t.commit().expect("commit");
    w.sync().expect("sync");
    model.push(cur.clone());
    let size_after_first = std::fs::metadata(dir.path().join("db/data"))
        .expect("stat")
        .len();
    // 60 revisions each adding one entry, removing one, and turning a file into a dir.
    for r in 0..60u32 {
        let mut t = Txn::begin(&mut w).expect("begin");
        let add = format!("n{r:03}");
        t.make_node(&format!("big/{add}"), NodeKind::File)
            .expect("add");
        cur.insert(add, NodeKind::File);
        let gone = format!("f{:04}", r * 7);
        t.delete(&format!("big/{gone}")).expect("delete");
        cur.remove(&gone);
        let swap = format!("f{:04}", r * 7 + 3);
        t.delete(&format!("big/{swap}")).expect("delete");
        t.make_node(&format!("big/{swap}"), NodeKind::Dir)
            .expect("replace");
        cur.insert(swap, NodeKind::Dir);
        t.commit().expect("commit");
        if r % 5 == 0 {
            w.sync().expect("sync");
        }
        model.push(cur.clone());
    }
    w.sync().expect("sync");
    let grown = std::fs::metadata(dir.path().join("db/data"))
        .expect("stat")
        .len()
        - size_after_first;
    // Whole listings of ~500 entries would cost over 60 x 500 x 10 bytes.
    assert!(
        grown < 60 * 500 * 4,
        "60 small changes grew db/data by {grown} bytes"
    );
    drop(w);
    let repo = Repo::open(dir.path()).expect("open");
    for (rev, want) in model.iter().enumerate().skip(1) {
        let (_, node) = repo.node_at(rev as u64, "big").expect("big exists");
        let listing = repo.dir(&node).expect("listing");
        let got: BTreeMap<String, NodeKind> =
            listing.iter().map(|e| (e.name.clone(), e.kind)).collect();
        assert_eq!(&got, want, "listing of big at r{rev}");
    }
}

/// A reader that reads an older `db/current` than it has already seen (a thread that lost
/// a race with another) keeps the newer view: a revision never disappears.
#[test]
fn refresh_never_moves_backwards() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut w = new_repo(dir.path());
    let repo = Repo::open(dir.path()).expect("open");
    let old = std::fs::read(dir.path().join("db/current")).expect("read current");
    let mut t = Txn::begin(&mut w).expect("begin");
    t.make_node("a", NodeKind::Dir).expect("mkdir");
    t.commit().expect("commit");
    w.sync().expect("sync");
    assert_eq!(repo.refresh().expect("refresh"), 1);
    std::fs::write(dir.path().join("db/current"), &old).expect("write stale current");
    assert_eq!(
        repo.refresh().expect("refresh"),
        1,
        "the view went back to r0"
    );
    assert!(repo.lookup(1, "a").expect("lookup").is_some());
}

/// Every path of every revision: the node-revision `changed_node` finds is the one a walk
/// from the root finds, and it finds one exactly for the paths the revision added,
/// modified or replaced (through a copy too; not a copied directory's children, nor a
/// deleted path, nor an unchanged one).
#[test]
fn changed_node_is_the_walk_for_the_changed_paths() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut w = new_repo(dir.path());
    let commits: Vec<Vec<(&str, &str)>> = vec![
        vec![
            ("mkdir", "trunk"),
            ("mkdir", "trunk/a"),
            ("file", "trunk/a/x"),
            ("file", "trunk/a/y"),
            ("mkdir", "trunk/a b"),
            ("file", "trunk/a b/z"),
            ("file", "trunk/a-1"),
            ("mkdir", "branches"),
        ],
        vec![("text", "trunk/a/x"), ("prop", "trunk/a")],
        vec![("copy", "branches/b"), ("delete", "trunk/a/y")],
        vec![("text", "branches/b/a/y"), ("replace", "trunk/a-1")],
    ];
    for ops in &commits {
        let mut t = Txn::begin(&mut w).expect("begin");
        let base = t.base_rev();
        for &(op, path) in ops {
            match op {
                "mkdir" => t.make_node(path, NodeKind::Dir).expect("mkdir"),
                "file" => t.make_node(path, NodeKind::File).expect("add"),
                "text" => {
                    t.set_text(path, &mut &b"changed\n"[..]).expect("text");
                }
                "prop" => t.change_prop(path, b"p", Some(b"v")).expect("prop"),
                "copy" => t.copy(base, "trunk", path).expect("copy"),
                "delete" => t.delete(path).expect("delete"),
                "replace" => {
                    t.delete(path).expect("delete");
                    t.make_node(path, NodeKind::Dir).expect("replace");
                }
                _ => unreachable!(),
            }
        }
        t.commit().expect("commit");
    }
    w.sync().expect("sync");
    drop(w);
    let repo = Repo::open(dir.path()).expect("open");
    let mut found = 0;
    for rev in 1..=commits.len() as u64 {
        let changed: Vec<(String, bool)> = repo
            .rev_meta(rev)
            .expect("meta")
            .changes
            .iter()
            .map(|c| (c.path.clone(), c.change != svelto_core::ChangeKind::Delete))
            .collect();
        let mut paths = vec![String::new()];
        let mut all = Vec::new();
        while let Some(p) = paths.pop() {
            let (_, node) = repo.node_at(rev, &p).expect("walk");
            if node.kind == NodeKind::Dir {
                for e in repo.dir(&node).expect("listing").iter() {
                    paths.push(svelto_core::join(&p, &e.name));
                }
            }
            all.push(p);
        }
        all.extend(changed.iter().map(|(p, _)| p.clone()));
        all.push("trunk/none".into());
        for p in all.iter().filter(|p| !p.is_empty()) {
            let walked = repo.lookup(rev, p).expect("lookup").map(|(o, _)| o);
            let direct = repo.changed_node(rev, p).expect("changed_node");
            let is_changed = changed.iter().any(|(c, live)| c == p && *live);
            match &direct {
                Some((off, node)) => {
                    let off = *off;
                    assert_eq!(Some(off), walked, "r{rev} {p}");
                    assert_eq!(node.created_rev, rev, "r{rev} {p}");
                    found += 1;
                }
                None => assert!(!is_changed, "r{rev} {p}: changed but not found"),
            }
            assert_eq!(direct.is_some(), is_changed, "r{rev} {p}");
        }
    }
    assert!(found >= 14, "{found} paths found through their changes");
}

/// What a listing's entries are (`Repo::listed_at`, for `svn ls`): each entry's kind,
/// last-changed revision, size, whether it has properties and its own listing, as its
/// node-revision says, at every revision; asked again, the same.
#[test]
fn listed_entries_are_what_their_nodes_say() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut w = new_repo(dir.path());
    let mut t = Txn::begin(&mut w).expect("begin");
    t.make_node("d", NodeKind::Dir).expect("mkdir");
    t.make_node("d/a", NodeKind::File).expect("add");
    t.set_text("d/a", &mut &b"hello"[..]).expect("text");
    t.make_node("d/s", NodeKind::Dir).expect("mkdir");
    t.make_node("d/s/b", NodeKind::File).expect("add");
    t.commit().expect("commit");
    let mut t = Txn::begin(&mut w).expect("begin");
    t.change_prop("d/a", b"p", Some(b"v")).expect("prop");
    t.set_text("d/s/b", &mut &b"more bytes"[..]).expect("text");
    t.commit().expect("commit");
    w.sync().expect("sync");
    let repo = Repo::open(dir.path()).expect("open");
    // (revision, name) -> (kind, created rev, size, has props)
    let want = [
        ((1, "a"), (NodeKind::File, 1, 5, false)),
        ((1, "s"), (NodeKind::Dir, 1, 0, false)),
        ((2, "a"), (NodeKind::File, 2, 5, true)),
        ((2, "s"), (NodeKind::Dir, 2, 0, false)),
    ];
    for _ in 0..2 {
        for rev in 1..=2 {
            let (_, d) = repo.node_at(rev, "d").expect("d");
            let (entries, listed) = repo.listed_at(d.entries).expect("listed");
            assert_eq!(entries.len(), listed.len());
            for (e, l) in entries.iter().zip(listed.iter()) {
                let n = repo.node(e.node).expect("node");
                assert_eq!(*l, svelto_store::Listed::of(&n), "{} at r{rev}", e.name);
                let (_, w) = want
                    .iter()
                    .find(|((r, name), _)| *r == rev && *name == e.name)
                    .expect("a known entry");
                assert_eq!((l.kind, l.created_rev, l.size, l.has_props), *w);
                assert_eq!(l.entries.is_some(), e.name == "s", "{}", e.name);
            }
            let s = entries.iter().position(|e| e.name == "s").expect("s");
            let (inner, inner_listed) = repo.listed_at(listed[s].entries).expect("s listed");
            assert_eq!(inner.len(), 1);
            assert_eq!(inner_listed[0].size, if rev == 1 { 0 } else { 10 });
        }
    }
}
