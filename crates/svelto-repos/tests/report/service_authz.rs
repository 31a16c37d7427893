//! The service's own authorization: every public method of `service::Ctx` that takes a
//! path, called on a path the client's rules hide, answers the one refusal (or, where
//! Subversion filters instead of refusing, leaves the path out). The front ends' suites
//! (svelto-cli's tests/serve/authz.rs and tests/http/auth.rs, over svn:// against
//! svnserve and over HTTP against Apache) check the same rules end to end; this checks
//! them where they live, so that a front end that forgets its own early check leaks
//! nothing.

use crate::Fixture;
use std::path::Path;
use std::sync::Arc;
use svelto_core::{Depth, Revnum};
use svelto_repos::authz::Authz;
use svelto_repos::locks::{LockTarget, UnlockTarget};
use svelto_repos::service::{AuthzCtx, Ctx, WriterSlot};
use svelto_repos::{FileRev, FileRevsHandler, FileRevsOptions, ReplayOptions, Result};

/// Everything readable but `trunk/src` (anonymous and harry alike), whom nobody may write.
const RULES: &str = "[/]\n* = r\n[/trunk/src]\n* =\n";

fn ctx(fx: &Fixture, user: Option<&str>, rules: Option<&str>) -> Ctx {
    let authz = rules.map(|r| AuthzCtx {
        authz: Arc::new(Authz::parse(r.as_bytes(), Path::new("authz"), None).expect("rules")),
        repos: None,
        case: Default::default(),
    });
    Ctx::new(
        crate::harness::shared(&fx.repo),
        Arc::new(WriterSlot::new(crate::harness::local(), &fx.svelto_path)),
        user.map(str::to_owned),
        authz,
        fx.svelto_path.join("conf/hooks-env"),
    )
}

/// Collects nothing; blame's handler for a drive that must not start.
struct NoVersions(usize);

impl FileRevsHandler for NoVersions {
    fn file_rev(&mut self, _: &FileRev<'_>) -> Result<()> {
        self.0 += 1;
        Ok(())
    }
    fn delta_chunk(&mut self, _: &[u8]) -> Result<()> {
        Ok(())
    }
    fn file_rev_end(&mut self) -> Result<()> {
        Ok(())
    }
}

/// Blame of every version.
fn opts() -> FileRevsOptions {
    FileRevsOptions {
        start: Some(0),
        end: None,
        include_merged: false,
        svndiff_version: 0,
    }
}

#[track_caller]
fn refused<T: std::fmt::Debug>(what: &str, r: Result<T>) {
    match r {
        Err(e) if e.is_unreadable() => {}
        other => panic!("{what}: expected the unreadable-path refusal, got {other:?}"),
    }
}

#[test]
fn every_method_refuses_or_filters_an_unreadable_path() {
    let fx = Fixture::load("basic");
    let head: Revnum = fx.head;
    let file = "trunk/src/new.c";
    let dir = "trunk/src";
    let open = ctx(&fx, None, None);
    // Without rules, the same calls read (so each refusal below is the rules' doing).
    let node = open.node(file, head).expect("node").expect("new.c exists");
    let created = node.created_rev();
    assert!(open.read_text(&node).is_ok());
    let mut versions = NoVersions(0);
    open.file_revs(file, &opts(), &mut versions)
        .expect("file_revs");
    assert!(versions.0 > 0, "new.c has versions");

    for user in [None, Some("harry")] {
        let c = ctx(&fx, user, Some(RULES));
        let who = user.unwrap_or("anonymous");
        refused("node", c.node(file, head));
        refused("node of the directory", c.node(dir, head));
        refused("node_at", c.node_at(file, head));
        refused("changed_node", c.changed_node(file, created));
        let trunk = c.node("trunk", head).expect("trunk").expect("trunk exists");
        refused("child", c.child(&trunk, "src"));
        let mut names = Vec::new();
        c.dir_entries(&trunk, &mut |name, _| {
            names.push(name.to_string());
            Ok(())
        })
        .expect("dir_entries");
        assert!(!names.contains(&"src".to_string()), "{who}: {names:?}");
        assert!(names.contains(&"a".to_string()), "{who}: {names:?}");
        refused(
            "list",
            c.list(dir, head, Depth::Infinity, None, &mut |_, _| Ok(())),
        );
        let mut listed = Vec::new();
        c.list("trunk", head, Depth::Infinity, None, &mut |p, _| {
            listed.push(p.to_string());
            Ok(())
        })
        .expect("list of trunk");
        assert!(
            listed.iter().all(|p| !p.starts_with(dir)),
            "{who}: {listed:?}"
        );
        refused("inherited_props", c.inherited_props(file, head));
        refused("deleted_rev", c.deleted_rev(file, created, head));
        let mut versions = NoVersions(0);
        refused("file_revs", c.file_revs(file, &opts(), &mut versions));
        assert_eq!(versions.0, 0, "{who}: file_revs sent a version first");
        refused("locations", c.locations(file, head, &[created]));
        refused(
            "location_segments",
            c.location_segments(file, head, head, 0, &mut |_| Ok(())),
        );
        refused("get_lock", c.get_lock(file));
        refused("get_locks", c.get_locks(dir, None));
        let mut counter = crate::shape::Counter::default();
        let opts = ReplayOptions {
            base_dir: dir.to_string(),
            low_water_mark: 0,
            send_deltas: true,
            text: Default::default(),
        };
        refused("replay", c.replay(created, &opts, &mut counter));
        assert!(
            c.mergeinfo(
                &[file.to_string()],
                head,
                svelto_repos::Inherit::Inherited,
                false
            )
            .expect("mergeinfo")
            .is_empty(),
            "{who}: mergeinfo of an unreadable path"
        );
        // Writes: each target refused on its own (svnserve's "Authorization failed").
        if user.is_some() {
            let locked = c
                .lock_many(
                    None,
                    false,
                    "2026-11-29T00:00:00.000000Z",
                    vec![LockTarget {
                        path: file.to_string(),
                        current_rev: None,
                    }],
                )
                .expect("lock_many");
            assert!(locked.results[0].is_err(), "{who}: locked {file}");
            let unlocked = c
                .unlock_many(
                    false,
                    vec![UnlockTarget {
                        path: file.to_string(),
                        token: None,
                    }],
                )
                .expect("unlock_many");
            assert!(unlocked.results[0].is_err(), "{who}: unlocked {file}");
        }
    }
}
