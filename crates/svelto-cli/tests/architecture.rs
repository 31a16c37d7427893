//! The must-nots of docs/ARCHITECTURE.md that the crates' manifests decide, checked on the
//! manifests themselves: which crate may depend on which (normal dependencies), that no
//! crate's tests reach above it (dev-dependencies), and that the map stays a map (short,
//! its links alive).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Each crate under `crates/` and the Svelto crates its `[dependencies]` name.
fn dependencies() -> BTreeMap<String, BTreeSet<String>> {
    manifests("[dependencies]")
}

/// Each crate under `crates/` and the Svelto crates its `[dev-dependencies]` name.
fn dev_dependencies() -> BTreeMap<String, BTreeSet<String>> {
    manifests("[dev-dependencies]")
}

/// Each crate under `crates/` and the Svelto crates its manifest's `wanted` section names.
fn manifests(wanted: &str) -> BTreeMap<String, BTreeSet<String>> {
    let mut all = BTreeMap::new();
    let dir = workspace().join("crates");
    for entry in std::fs::read_dir(&dir).expect("crates/") {
        let path = entry.expect("an entry").path().join("Cargo.toml");
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let name = path
            .parent()
            .and_then(Path::file_name)
            .and_then(|n| n.to_str())
            .expect("a crate directory")
            .to_string();
        let mut deps = BTreeSet::new();
        let mut section = String::new();
        for line in text.lines().map(str::trim) {
            if line.starts_with('[') {
                section = line.to_string();
            } else if section == wanted && line.starts_with("svelto-") {
                let dep: String = line
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                    .collect();
                deps.insert(dep);
            }
        }
        all.insert(name, deps);
    }
    assert!(all.len() >= 15, "the crates were found: {all:?}");
    all
}

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|s| s.to_string()).collect()
}

/// The crates `name` depends on, directly or through others (normal dependencies).
fn below(deps: &BTreeMap<String, BTreeSet<String>>, name: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut todo = vec![name.to_string()];
    while let Some(n) = todo.pop() {
        for d in deps.get(&n).into_iter().flatten() {
            if out.insert(d.clone()) {
                todo.push(d.clone());
            }
        }
    }
    out
}

/// The testkit is the tests' own crate: it stands on the libraries (it loads repositories
/// with svelto-repos into the local engine and the in-memory backend) and every crate's
/// tests use it, so it is the one dev-dependency allowed to sit above its user.
const TESTKIT: &str = "svelto-testkit";

/// The local engine's users, tests included: the composition root (which picks it), the
/// cluster (whose segments are byte ranges of the local engine's files and whose cache is
/// a local repository: docs/ARCHITECTURE.md, "The storage seam") and the testkit (which
/// hands it to the tests above the seam as `local_backend()` and `open_local`).
#[test]
fn only_the_composition_root_the_cluster_and_the_testkit_name_the_local_engine() {
    let (deps, dev) = (dependencies(), dev_dependencies());
    let users: BTreeSet<String> = deps
        .keys()
        .filter(|name| deps[*name].contains("svelto-store") || dev[*name].contains("svelto-store"))
        .cloned()
        .collect();
    assert_eq!(
        users,
        set(&["svelto-cli", "svelto-cluster", "svelto-testkit"])
    );
}

/// A crate's tests use what it stands on, never a crate standing on it (which would build
/// the crate twice in its own tests and hide a layering the code forbids): a test that
/// needs the crates above goes up to the lowest crate that has them all (svelto-cli's
/// `tests/engine` holds the repository rules over the local engine's files and the fuzz
/// targets' bodies for that reason).
#[test]
fn no_crate_dev_depends_on_a_crate_above_it() {
    let (deps, dev) = (dependencies(), dev_dependencies());
    for (name, dev_deps) in &dev {
        for d in dev_deps.iter().filter(|d| d.as_str() != TESTKIT) {
            assert!(
                !below(&deps, d).contains(name),
                "{name} dev-depends on {d}, which depends on {name}"
            );
        }
    }
}

/// The backends stand below the seam in their tests too: neither the local engine nor the
/// cluster names Subversion's rules or anything built on them, but through the testkit
/// (the cluster's seam suite, which compares it with the local engine through svelto-repos,
/// lives in svelto-cli's tests/cluster/backend.rs).
#[test]
fn the_backends_tests_stand_below_the_seam() {
    let (deps, dev) = (dependencies(), dev_dependencies());
    let above_the_seam: BTreeSet<String> = deps
        .keys()
        .filter(|n| n.as_str() == "svelto-repos" || below(&deps, n).contains("svelto-repos"))
        .cloned()
        .collect();
    for backend in ["svelto-store", "svelto-cluster"] {
        for d in deps[backend].iter().chain(&dev[backend]) {
            if d == TESTKIT {
                continue;
            }
            assert!(
                !above_the_seam.contains(d),
                "{backend} depends on {d}, above the seam"
            );
        }
    }
}

#[test]
fn the_vocabulary_the_codecs_and_the_seam_stand_on_svelto_core_alone() {
    let deps = dependencies();
    let allowed = [
        ("svelto-core", set(&[])),
        ("svelto-delta", set(&["svelto-core"])),
        ("svelto-dump", set(&["svelto-core"])),
        ("svelto-wire", set(&["svelto-core"])),
        ("svelto-fs", set(&["svelto-core", "svelto-delta"])),
    ];
    for (name, allowed) in allowed {
        let has = &deps[name];
        assert!(has.is_subset(&allowed), "{name} depends on {has:?}");
    }
}

#[test]
fn the_service_knows_no_front_end_and_no_wire() {
    let deps = dependencies();
    for name in ["svelto-repos", "svelto-look", "svelto-admin"] {
        let above: Vec<&String> = deps[name]
            .iter()
            .filter(|d| {
                [
                    "svelto-wire",
                    "svelto-server",
                    "svelto-http",
                    "svelto-host",
                    "svelto-web",
                    "svelto-cli",
                ]
                .contains(&d.as_str())
            })
            .collect();
        assert!(above.is_empty(), "{name} depends on {above:?}");
    }
}

#[test]
fn the_architecture_page_is_a_map_whose_links_lead_somewhere() {
    let docs = workspace().join("docs");
    let map = std::fs::read_to_string(docs.join("ARCHITECTURE.md")).expect("the map");
    let lines = map.lines().count();
    assert!(lines <= 200, "docs/ARCHITECTURE.md has {lines} lines");
    for page in ["ARCHITECTURE.md", "internals.md"] {
        let text = std::fs::read_to_string(docs.join(page)).expect(page);
        let mut rest = text.as_str();
        let mut links = 0;
        while let Some(i) = rest.find("](") {
            rest = &rest[i + 2..];
            let end = rest.find(')').expect("a closed link");
            let target = rest[..end].split('#').next().unwrap_or("");
            if !target.is_empty() && !target.contains("://") {
                assert!(
                    docs.join(target).exists(),
                    "{page} links to {target}, which is missing"
                );
                links += 1;
            }
        }
        assert!(links > 0 || page == "internals.md", "{page} has links");
    }
}
