//! The committed dumpfile fixtures (see `fixtures/README.md` and
//! `fixtures/make-fixtures.sh`).

use std::path::{Path, PathBuf};

/// The directory holding the fixtures and the script that makes them.
pub fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

/// The path of one fixture file, by file name (`"basic.dump"`,
/// `"mixed.incr-5.deltas.dump"`). Panics when it does not exist.
pub fn fixture(file_name: &str) -> PathBuf {
    let path = fixtures_dir().join(file_name);
    assert!(
        path.is_file(),
        "fixture {path:?} does not exist; regenerate with fixtures/make-fixtures.sh"
    );
    path
}

/// The canonical dump of a scenario: `<name>.dump`, written by `svnadmin dump`
/// (format 2, full, from r0).
pub fn scenario_dump(name: &str) -> PathBuf {
    fixture(&format!("{name}.dump"))
}

/// Every scenario but the long history of `many-revs`: the ones tests walk through whole.
pub const SMALL_SCENARIOS: &[&str] = &[
    "basic",
    "replace",
    "copies",
    "props",
    "revprops",
    "empty-revs",
    "symlinks",
    "mergeinfo",
    "names",
    "eol-keywords",
    "readd",
    "moves",
    "mixed",
];

/// A file with several revisions in some scenarios (scenario, path): what blame-like
/// commands (`svnbench null-blame`) are compared on.
pub const FILES_WITH_HISTORY: &[(&str, &str)] = &[
    ("basic", "trunk/README.txt"),
    ("mergeinfo", "trunk/a.txt"),
    ("copies", "trunk/lib2/a.c"),
    ("mixed", "trunk/src/main2.c"),
    ("names", "trunk/ÜNÏCÖDÉ/日本語.txt"),
];

/// The names of all scenarios, sorted: every `<name>.dump` whose name has no
/// further dot (variants are `<name>.<variant>.dump`).
pub fn fixture_names() -> Vec<String> {
    let mut names: Vec<String> = dump_files()
        .into_iter()
        .filter_map(|file| {
            let stem = file.strip_suffix(".dump")?;
            (!stem.contains('.')).then(|| stem.to_owned())
        })
        .collect();
    names.sort();
    names
}

/// What a variant fixture of a scenario is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VariantKind {
    /// `svnadmin dump --deltas` (format 3), full from r0.
    Deltas,
    /// `svnrdump dump` (format 3), full from r0.
    Svnrdump,
    /// `svnadmin dump --incremental -r LOWER:HEAD`, with `deltas` when made
    /// with `--deltas` too. Load it into a repository holding `0..LOWER-1`.
    Incremental { lower: u64, deltas: bool },
}

/// A variant dump of a scenario's history: the same history written another way.
#[derive(Debug, Clone)]
pub struct Variant {
    pub scenario: String,
    pub file_name: String,
    pub path: PathBuf,
    pub kind: VariantKind,
}

/// The variant fixtures of one scenario, sorted by file name.
pub fn variants(scenario: &str) -> Vec<Variant> {
    let prefix = format!("{scenario}.");
    let mut out: Vec<Variant> = dump_files()
        .into_iter()
        .filter_map(|file| {
            let middle = file.strip_prefix(&prefix)?.strip_suffix(".dump")?;
            let kind = match middle {
                "deltas" => VariantKind::Deltas,
                "svnrdump" => VariantKind::Svnrdump,
                _ => {
                    let rest = middle.strip_prefix("incr-")?;
                    let (lower, deltas) = match rest.strip_suffix(".deltas") {
                        Some(lower) => (lower, true),
                        None => (rest, false),
                    };
                    VariantKind::Incremental {
                        lower: lower.parse().ok()?,
                        deltas,
                    }
                }
            };
            Some(Variant {
                scenario: scenario.to_owned(),
                path: fixtures_dir().join(&file),
                file_name: file,
                kind,
            })
        })
        .collect();
    out.sort_by(|a, b| a.file_name.cmp(&b.file_name));
    out
}

fn dump_files() -> Vec<String> {
    let dir = fixtures_dir();
    std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot list fixtures in {dir:?}: {e}"))
        .map(|entry| {
            entry
                .expect("readable fixtures directory entry")
                .file_name()
                .into_string()
                .expect("fixture file names are UTF-8")
        })
        .filter(|name| name.ends_with(".dump"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_scenarios_are_all_but_many_revs() {
        let mut small: Vec<&str> = SMALL_SCENARIOS.to_vec();
        small.push("many-revs");
        small.sort();
        assert_eq!(small, fixture_names());
    }

    #[test]
    fn lists_scenarios_and_variants() {
        let names = fixture_names();
        for expected in ["basic", "many-revs", "mixed", "replace"] {
            assert!(names.iter().any(|n| n == expected), "{names:?}");
        }
        let mixed = variants("mixed");
        let kinds: Vec<_> = mixed.iter().map(|v| v.kind.clone()).collect();
        assert!(kinds.contains(&VariantKind::Deltas), "{kinds:?}");
        assert!(kinds.contains(&VariantKind::Svnrdump), "{kinds:?}");
        assert!(kinds.contains(&VariantKind::Incremental {
            lower: 5,
            deltas: true
        }));
        assert!(kinds.contains(&VariantKind::Incremental {
            lower: 5,
            deltas: false
        }));
        assert!(mixed.iter().all(|v| v.path.is_file()));
    }

    #[test]
    fn every_scenario_dump_is_format_2_with_a_uuid() {
        for name in fixture_names() {
            let bytes = std::fs::read(scenario_dump(&name)).expect("readable fixture");
            assert!(
                bytes.starts_with(b"SVN-fs-dump-format-version: 2\n\nUUID: "),
                "{name}.dump must be a format-2 dump with a UUID"
            );
        }
    }
}
