//! The local engine behind the storage seam (`svelto_fs::ReadRepo`): the contract holds
//! through the trait, and the provided methods, computed from the required ones alone,
//! agree with the engine's tuned ones.

use crate::common::new_repo;
use std::io::Read;
use std::sync::Arc;
use svelto_core::{Env, NodeKind, PropList, Revnum};
use svelto_fs::{
    contract, DirEntry, FileText, ListingId, NodeRev, NodeRevId, PropsId, ReadRepo, RevInfo,
    RevMeta, Stored, TextId,
};
use svelto_store::{Repo, Txn};

/// The engine through its required methods only: every provided method and fast path
/// falls back to the plain computation a second backend gets.
struct Plain(Repo);

impl ReadRepo for Plain {
    fn youngest(&self) -> Revnum {
        self.0.youngest()
    }
    fn refresh(&self) -> svelto_fs::Result<Revnum> {
        self.0.refresh()
    }
    fn uuid(&self) -> svelto_fs::Result<String> {
        self.0.uuid()
    }
    fn env(&self) -> Arc<dyn Env> {
        self.0.env()
    }
    fn rev_info(&self, rev: Revnum) -> svelto_fs::Result<RevInfo> {
        self.0.rev_info(rev)
    }
    fn rev_meta(&self, rev: Revnum) -> svelto_fs::Result<Arc<RevMeta>> {
        self.0.rev_meta(rev)
    }
    fn node(&self, id: NodeRevId) -> svelto_fs::Result<Arc<NodeRev>> {
        self.0.node(id)
    }
    fn listing(&self, id: ListingId) -> svelto_fs::Result<Arc<Vec<DirEntry>>> {
        self.0.dir_at(id)
    }
    fn props_shared(&self, id: PropsId) -> svelto_fs::Result<Arc<PropList>> {
        self.0.props_shared(id)
    }
    fn text(&self, id: TextId) -> svelto_fs::Result<Arc<Vec<u8>>> {
        self.0.fulltext(id)
    }
    fn text_reader(&self, text: &FileText) -> svelto_fs::Result<Box<dyn Read + Send>> {
        self.0.text_reader(text)
    }
    fn locks(&self) -> svelto_fs::Result<Arc<svelto_fs::LockTable>> {
        self.0.locks()
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// A history with what the contract speaks of: nested directories, properties, a copy
/// that shares its subtree, a replace, a delete, identical contents in two files, a
/// file's versions stored as deltas, and a file too large to be held whole.
fn history(dir: &std::path::Path) -> Repo {
    let mut w = new_repo(dir);
    let mut t = Txn::begin(&mut w).expect("begin");
    t.make_node("trunk", NodeKind::Dir).expect("mkdir");
    t.make_node("trunk/src", NodeKind::Dir).expect("mkdir");
    for (p, text) in [
        ("trunk/src/a.c", "int a;\n"),
        ("trunk/b", "same\n"),
        ("trunk/c", "same\n"),
    ] {
        t.make_node(p, NodeKind::File).expect("add");
        t.set_text(p, &mut text.as_bytes()).expect("text");
    }
    t.change_prop("trunk", b"svn:ignore", Some(b"*.o\n"))
        .expect("prop");
    t.commit().expect("r1");
    for i in 0..20 {
        let mut t = Txn::begin(&mut w).expect("begin");
        let text = (0..=i).map(|j| format!("line {j}\n")).collect::<String>();
        t.set_text("trunk/src/a.c", &mut text.as_bytes())
            .expect("text");
        t.commit().expect("commit");
    }
    let mut t = Txn::begin(&mut w).expect("begin");
    t.copy(21, "trunk", "tag").expect("copy");
    t.delete("trunk/b").expect("delete");
    t.make_node("big", NodeKind::File).expect("add");
    let big: Vec<u8> = (0..(3u32 << 20)).map(|i| (i * 7 % 251) as u8).collect();
    t.set_text("big", &mut big.as_slice()).expect("big");
    t.commit().expect("r22");
    let mut t = Txn::begin(&mut w).expect("begin");
    t.delete("tag/src").expect("delete");
    t.copy(1, "trunk/src", "tag/src").expect("replace");
    t.commit().expect("r23");
    w.sync().expect("sync");
    drop(w);
    Repo::open(dir).expect("open")
}

#[test]
fn the_contract_holds_through_the_trait_tuned_and_plain() {
    let dir = tempfile::tempdir().expect("tempdir");
    let repo = history(dir.path());
    let tuned = contract::check(&repo).expect("the local engine keeps the contract");
    let plain = contract::check(&Plain(repo.clone())).expect("so do the plain fallbacks");
    assert_eq!(tuned, plain);
    assert_eq!(tuned.revisions, 24);
    // The copy shares its subtree: fewer node-revisions than paths over all revisions.
    assert!(tuned.nodes < 24 * 6, "{tuned:?}");
    assert!(tuned.texts >= 22, "{tuned:?}");
}

#[test]
fn provided_methods_agree_with_the_engines_own() {
    let dir = tempfile::tempdir().expect("tempdir");
    let repo = history(dir.path());
    let plain = Plain(repo.clone());
    let (tuned, plain): (&dyn ReadRepo, &dyn ReadRepo) = (&repo, &plain);
    for rev in 0..=repo.youngest() {
        for path in [
            "",
            "trunk",
            "trunk/src/a.c",
            "tag/src/a.c",
            "trunk/b",
            "big",
            "nope",
        ] {
            let a = tuned.lookup(rev, path).expect("lookup");
            let b = plain.lookup(rev, path).expect("lookup");
            assert_eq!(
                a.as_ref().map(|x| x.0),
                b.as_ref().map(|x| x.0),
                "r{rev} {path}"
            );
            assert_eq!(
                tuned.changed_node(rev, path).expect("changed").map(|x| x.0),
                plain.changed_node(rev, path).expect("changed").map(|x| x.0),
                "r{rev} {path}"
            );
            if a.is_some() {
                assert_eq!(
                    tuned.history(rev, path).expect("history"),
                    plain.history(rev, path).expect("history")
                );
            }
        }
    }
    // Equal contents stored once: one text id for two files.
    let b = tuned.node_at(1, "trunk/b").expect("b").1.file_text();
    let c = tuned.node_at(1, "trunk/c").expect("c").1.file_text();
    assert_eq!(b.rep, c.rep);
    assert!(b.rep.is_some());
    // The fast paths answer where the plain ones decline, and mean the same contents.
    let a20 = tuned.node_at(20, "trunk/src/a.c").expect("a").1;
    let a19 = tuned.node_at(19, "trunk/src/a.c").expect("a").1;
    let base = a19.file_text().rep;
    let text = a20.file_text();
    assert!(plain.stored_delta(&text, base).expect("plain").is_none());
    let windows = tuned
        .stored_delta(&text, base)
        .expect("tuned")
        .expect("r20's text is a delta against r19's");
    let base_text = tuned.read_text(&a19.file_text()).expect("r19");
    assert_eq!(
        svelto_delta::apply_windows(&windows, &base_text).expect("apply"),
        *tuned.read_text(&text).expect("r20")
    );
    let big = tuned.node_at(22, "big").expect("big").1.file_text();
    assert!(matches!(
        plain.stored_stream_or_text(&big).expect("plain"),
        Stored::Text(_)
    ));
    assert!(matches!(
        tuned.stored_stream_or_text(&big).expect("tuned"),
        Stored::Stream(_)
    ));
    // Related: one line of history across the copy; a file and its neighbour are not.
    let trunk_a = tuned.node_at(21, "trunk/src/a.c").expect("a").0;
    let tag_a = tuned.node_at(22, "tag/src/a.c").expect("a").0;
    let c = tuned.node_at(21, "trunk/c").expect("c").0;
    assert!(plain.related(trunk_a, tag_a).expect("related"));
    assert!(!plain.related(trunk_a, c).expect("related"));
}
