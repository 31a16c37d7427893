//! `svelto admin dump --include/--exclude/--pattern` against svnadmin's: the same
//! filtered history (excluded paths left out, copies from excluded sources made adds,
//! revision properties of partly excluded revisions reduced to author and date).

use svelto_testkit::{scenario_dump, svnadmin_create, Run};

use crate::common::write_file;
use crate::pair::{Pair, REPO};

/// Filters and whether svnadmin's dump is byte for byte Svelto's (svnadmin adds the
/// contents of a copy from an excluded source in APR hash order, Svelto in path order).
const FILTERS: &[(&[&str], bool)] = &[
    (&["--include", "/trunk"], true),
    (&["--include", "trunk"], true),
    (&["--include", "/trunk/"], true),
    (&["--include", "/branches"], false),
    (&["--exclude", "/trunk"], false),
    (&["--include", "/trunk/lib", "--include", "/tags"], false),
    (&["--exclude", "/tags", "--exclude", "/branches/old"], false),
    (&["--pattern", "--exclude", "*[ab].c"], true),
    (&["--pattern", "--include", "/trunk*"], true),
];

#[test]
fn filtered_dumps_hold_what_svnadmin_s_hold() {
    for scenario in ["copies", "mixed"] {
        let pair = Pair::with_dump(&scenario_dump(scenario));
        for (filter, identical) in FILTERS {
            let mut args = vec!["dump", "-q", REPO];
            args.extend_from_slice(filter);
            let what = format!("{scenario}: dump {filter:?}");
            let (fs, sv) = pair.run_with(&args, |r| r);
            assert!(fs.success(), "{what}: svnadmin failed:\n{fs}");
            assert!(sv.success(), "{what}:\n{sv}");
            if *identical {
                assert!(sv.stdout == fs.stdout, "{what}: the dumps differ");
            }
            // Loaded into FSFS, both make the same repository (or fail at the same place:
            // an included path whose parent is excluded cannot be loaded alone).
            let loaded: Vec<(Option<i32>, Vec<u8>)> = [&fs.stdout, &sv.stdout]
                .iter()
                .enumerate()
                .map(|(i, d)| {
                    let file = write_file(pair.sv.dir(), &format!("filtered-{i}.dump"), d);
                    let repo = svnadmin_create();
                    let out = Run::tool("svnadmin")
                        .args(["load", "-q"])
                        .arg(repo.path())
                        .stdin_file(&file)
                        .output();
                    (out.status.code(), repo.dump(&[]))
                })
                .collect();
            assert!(
                loaded[0] == loaded[1],
                "{what}: the loaded repositories differ"
            );
        }
        let seen = pair.same(&["dump", "-q", REPO, "--include", "/a", "--exclude", "/b"]);
        assert_eq!(seen.code, Some(1));
    }
}
