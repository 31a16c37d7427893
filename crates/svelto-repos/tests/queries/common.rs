//! A fixture loaded twice (FSFS by `svnadmin`, Svelto by `svelto_repos::load`), with the
//! helpers the query tests use on it; svnserve is reached through
//! `svelto_testkit::svnserve_client`.

use std::ops::Deref;
use std::path::Path;
use svelto_core::NodeKind;
use svelto_testkit::svnserve_client::Mode;
use svelto_testkit::{require_tool, LoadedPair, Run};

pub use svelto_testkit::svnserve_client::{proplist, response, SvnserveClient as Svnserve};

pub struct Pair(LoadedPair);

impl Deref for Pair {
    type Target = LoadedPair;

    fn deref(&self) -> &LoadedPair {
        &self.0
    }
}

/// Loads the scenario `name` into FSFS and into Svelto.
pub fn pair(name: &str) -> Pair {
    Pair(LoadedPair::scenario(name))
}

/// Loads a dump into FSFS and into Svelto, optionally without validating `svn:*`
/// properties (to store mergeinfo that does not parse).
pub fn pair_from(dump: &Path, bypass_prop_validation: bool) -> Pair {
    Pair(LoadedPair::from_dump(dump, bypass_prop_validation))
}

impl Pair {
    /// Every path (relpath) of a kind in `rev`, in depth-first order, from Svelto's tree.
    pub fn paths(&self, rev: u64, kind: NodeKind) -> Vec<String> {
        let mut out = Vec::new();
        let mut stack = vec![(String::new(), self.repo.root(rev).expect("root"))];
        while let Some((path, off)) = stack.pop() {
            let node = self.repo.node(off).expect("node");
            if node.kind == kind {
                out.push(path.clone());
            }
            if node.kind == NodeKind::Dir {
                for e in self.repo.dir(&node).expect("dir").iter() {
                    stack.push((svelto_core::join(&path, &e.name), e.node));
                }
            }
        }
        out.sort();
        out
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}/{path}", self.fsfs.url())
    }

    /// `svn ARGS` over file:// (an isolated config dir), its standard output.
    pub fn svn(&self, args: &[&str]) -> String {
        let config = self.fsfs.dir().join("svn-config");
        Run::tool("svn")
            .arg("--config-dir")
            .arg(&config)
            .arg("--non-interactive")
            .args(args)
            .env("LANG", "C")
            .success()
            .stdout_text()
    }

    /// A session with `svnserve -t` on the FSFS copy.
    pub fn svnserve(&self) -> Svnserve {
        self.0.svnserve(Mode::Tunnel)
    }
}

/// The tools these tests run; panics loudly when one is missing.
pub fn require_svn_tools() {
    for tool in ["svn", "svnadmin", "svnserve"] {
        require_tool(tool);
    }
}
