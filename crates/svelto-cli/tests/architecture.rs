//! The must-nots of docs/ARCHITECTURE.md that the crates' manifests decide, checked on the
//! manifests themselves: which crate may depend on which (normal dependencies; tests may
//! use more), and that the map stays a map (short, its links alive).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Each crate under `crates/` and the Svelto crates its `[dependencies]` name.
fn dependencies() -> BTreeMap<String, BTreeSet<String>> {
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
            } else if section == "[dependencies]" && line.starts_with("svelto-") {
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

#[test]
fn only_the_composition_root_the_cluster_and_the_testkit_name_the_local_engine() {
    let users: BTreeSet<String> = dependencies()
        .into_iter()
        .filter(|(_, deps)| deps.contains("svelto-store"))
        .map(|(name, _)| name)
        .collect();
    assert_eq!(
        users,
        set(&["svelto-cli", "svelto-cluster", "svelto-testkit"])
    );
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
