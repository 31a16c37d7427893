//! Every fixture: `svelto admin load` then `svelto admin dump` gives back the
//! fixture byte for byte; `--deltas`, `--incremental` and `-r` dumps agree with
//! svnadmin's; every variant of the fixture (format 3, svnrdump, incremental)
//! loads into the same repository as svnadmin makes from it.

use svelto_testkit::dumpfile::{
    assert_dumps_eq, assert_dumps_eq_first_revision_unordered, head_revision, revisions_in, uuid_of,
};
use svelto_testkit::{
    fixture_names, scenario_dump, svnadmin_create, svnadmin_create_load, svnadmin_load_dump,
    variants, TempRepo, VariantKind,
};

use crate::common::{assert_lines_in_order, read, svelto, write_file, SveltoRepo};

macro_rules! fixture_tests {
    ($($test:ident => $name:literal),* $(,)?) => {
        $(
            #[test]
            fn $test() {
                check_fixture($name);
            }
        )*

        #[test]
        fn every_fixture_has_a_test() {
            let mut tested = vec![$($name.to_owned()),*];
            tested.sort();
            assert_eq!(
                fixture_names(),
                tested,
                "add a line to fixture_tests! in tests/admin/roundtrip.rs for each new fixture"
            );
        }
    };
}

fixture_tests! {
    basic => "basic",
    copies => "copies",
    empty_revs => "empty-revs",
    eol_keywords => "eol-keywords",
    many_revs => "many-revs",
    mergeinfo => "mergeinfo",
    mixed => "mixed",
    moves => "moves",
    names => "names",
    props => "props",
    readd => "readd",
    replace => "replace",
    revprops => "revprops",
    symlinks => "symlinks",
}

fn check_fixture(name: &str) {
    let path = scenario_dump(name);
    let expected = read(&path);
    let head = head_revision(&expected);

    // Load from standard input with progress, as in `svnadmin dump | svelto admin load`.
    let repo = SveltoRepo::create();
    let load = svelto()
        .args(["admin", "load"])
        .arg(repo.path())
        .stdin_file(&path)
        .success();
    let mut progress = Vec::new();
    for rev in revisions_in(&expected).into_iter().filter(|&r| r > 0) {
        progress.push(format!(
            "<<< Started new transaction, based on original revision {rev}"
        ));
        progress.push(format!("------- Committed revision {rev} >>>"));
    }
    assert_lines_in_order(
        &load.stdout_text(),
        &progress,
        &format!("{name}: load progress"),
    );

    // Dump to standard output with progress.
    let dump = svelto().args(["admin", "dump"]).arg(repo.path()).success();
    assert_dumps_eq(
        &expected,
        &dump.stdout,
        &format!("{name}: svelto load + dump"),
    );
    let dumped: Vec<String> = (0..=head)
        .map(|r| format!("* Dumped revision {r}."))
        .collect();
    assert_lines_in_order(
        &dump.stderr_text(),
        &dumped,
        &format!("{name}: dump progress"),
    );

    let info = repo.info();
    assert_eq!(
        Some(info.uuid.clone()),
        uuid_of(&expected),
        "{name}: UUID\n{}",
        info.text
    );
    assert_eq!(info.youngest, head, "{name}: youngest\n{}", info.text);
    repo.verify();

    // Format 3 from Svelto must load with svnadmin into the same history.
    let deltas = repo.dump(&["--deltas"]);
    assert!(
        deltas.starts_with(b"SVN-fs-dump-format-version: 3\n"),
        "{name}: dump --deltas must write format 3"
    );
    let deltas_path = write_file(repo.dir(), "svelto.deltas.dump", &deltas);
    assert_dumps_eq(
        &expected,
        &svnadmin_load_dump(&deltas_path, &[], &[]),
        &format!(
            "{name}: svelto dump --deltas, loaded by svnadmin (hint: a node whose properties were \
             set again to equal values needs a non-empty property delta, or svnadmin loses it)"
        ),
    );

    // An incremental format-3 dump from Svelto completes, in svnadmin, a
    // repository holding the revisions before it.
    let lower = (head / 2).max(1);
    let incremental = repo.dump(&[
        "--deltas",
        "--incremental",
        "-r",
        &format!("{lower}:{head}"),
    ]);
    let incremental_path = write_file(repo.dir(), "svelto.incr.deltas.dump", &incremental);
    let fs = svnadmin_create();
    fs.load(&path, &["-r", &format!("0:{}", lower - 1)]);
    fs.load(&incremental_path, &[]);
    assert_dumps_eq(
        &expected,
        &fs.dump(&[]),
        &format!(
            "{name}: svelto dump --deltas --incremental -r {lower}:{head}, loaded by svnadmin"
        ),
    );

    // Range dumps, against svnadmin's of the same history.
    let fs = svnadmin_create_load(&path);
    compare_range_dumps(name, &repo, &fs, head);

    // Every variant of the fixture loads into the repository svnadmin makes of it.
    for variant in variants(name) {
        let sv = SveltoRepo::create();
        let fs = svnadmin_create();
        if let VariantKind::Incremental { lower, .. } = variant.kind {
            let earlier = format!("0:{}", lower - 1);
            sv.load(&path, &["-r", &earlier]);
            fs.load(&path, &["-r", &earlier]);
        }
        sv.load(&variant.path, &[]);
        fs.load(&variant.path, &[]);
        assert_dumps_eq(
            &fs.dump(&[]),
            &sv.dump(&[]),
            &format!("{name}: load of {}", variant.file_name),
        );
    }
}

fn compare_range_dumps(name: &str, repo: &SveltoRepo, fs: &TempRepo, head: u64) {
    let mut ranges = vec![(head / 2, head), (1, head), (head, head), (1, 1)];
    if head >= 3 {
        ranges.push((head / 2, head / 2 + 1));
    }
    ranges.retain(|&(lo, hi)| lo >= 1 && lo <= hi && hi <= head);
    ranges.sort();
    ranges.dedup();
    for (lo, hi) in ranges {
        let r = format!("{lo}:{hi}");
        assert_dumps_eq(
            &fs.dump(&["--incremental", "-r", &r]),
            &repo.dump(&["--incremental", "-r", &r]),
            &format!("{name}: dump --incremental -r {r}"),
        );
        assert_dumps_eq_first_revision_unordered(
            &fs.dump(&["-r", &r]),
            &repo.dump(&["-r", &r]),
            &format!("{name}: dump -r {r}"),
        );
    }
    // A single revision, `-r N`.
    let n = (head / 2).max(1).min(head).to_string();
    assert_dumps_eq_first_revision_unordered(
        &fs.dump(&["-r", &n]),
        &repo.dump(&["-r", &n]),
        &format!("{name}: dump -r {n}"),
    );
    // And `-r 0:N`, which is a prefix of the full dump.
    let r = format!("0:{}", head / 2);
    assert_dumps_eq(
        &fs.dump(&["-r", &r]),
        &repo.dump(&["-r", &r]),
        &format!("{name}: dump -r {r}"),
    );
}
