//! The other client tools against the server: `svnsync` mirrors into FSFS,
//! `svnrdump dump`, and the `svnbench null-*` commands.

use std::path::Path;

use svelto_testkit::dumpfile::{assert_dumps_eq, uuid_of, with_uuid};
use svelto_testkit::{
    fixture, svnadmin_create, svnadmin_create_load, Expect, Pair, Run, TempRepo, FILES_WITH_HISTORY,
};

use crate::common::{pair, ALL};

/// Scenarios with property lists set again to equal values: a change in
/// FSFS, but an empty property delta on the wire, so no change at all in a
/// copy made through the network (svnsync, svnrdump), as with svnadmin's own
/// format-3 dumps (see fixtures/README.md). Their reference is the history
/// loaded from `<name>.deltas.dump`.
const LOSSY_OVER_THE_WIRE: &[&str] = &["props", "mergeinfo"];

/// The repository whose `svnadmin dump` a copy made over the wire must
/// equal: the reference FSFS repository, or for the lossy scenarios a fresh
/// one loaded from the format-3 dump.
fn expected_dump(pair: &Pair, args: &[&str]) -> Vec<u8> {
    if LOSSY_OVER_THE_WIRE.contains(&pair.name()) {
        svnadmin_create_load(&fixture(&format!("{}.deltas.dump", pair.name()))).dump(args)
    } else {
        Run::tool("svnadmin")
            .args(["dump", "-q"])
            .args(args)
            .arg(pair.reference_repo())
            .success()
            .stdout
    }
}

/// `svnsync init` + `svnsync sync` from side `side` of the pair into a fresh
/// FSFS repository.
fn mirror(pair: &Pair, side: usize) -> (TempRepo, [String; 2]) {
    let mirror = svnadmin_create();
    let hook = mirror.path().join("hooks/pre-revprop-change");
    std::fs::write(&hook, "#!/bin/sh\nexit 0\n").expect("write the hook");
    Run::new("chmod").arg("+x").arg(&hook).success();
    let mut outputs = [String::new(), String::new()];
    for (i, args) in [
        ["init", &mirror.url(), "{URL}"].as_slice(),
        &["sync", &mirror.url()],
    ]
    .iter()
    .enumerate()
    {
        let out = pair.run_on(side, Path::new(""), "svnsync", args);
        assert!(
            out.success(),
            "svnsync from {} failed:\n{out}\n{}",
            pair.labels()[side],
            if side == 1 {
                pair.subject().diagnostics()
            } else {
                String::new()
            }
        );
        outputs[i] = String::from_utf8_lossy(&pair.normalize(side, &out.stdout)).into_owned();
    }
    (mirror, outputs)
}

#[test]
fn svnsync_mirrors_equal_the_original() {
    for name in ALL {
        let pair = pair(name);
        let (mirrors, outputs): (Vec<_>, Vec<_>) = std::thread::scope(|scope| {
            let a = scope.spawn(|| mirror(pair, 0));
            let b = mirror(pair, 1);
            vec![a.join().expect("svnsync from the reference"), b]
        })
        .into_iter()
        .unzip();
        let labels = pair.labels();
        assert_eq!(
            outputs[0], outputs[1],
            "{name}: svnsync printed different things syncing from {} and {}",
            labels[0], labels[1]
        );
        let expected = expected_dump(pair, &["-r", "1:HEAD", "--incremental"]);
        let uuid = uuid_of(&expected).expect("the dump has a UUID");
        for (mirror, label) in mirrors.iter().zip(labels) {
            let actual = with_uuid(&mirror.dump(&["-r", "1:HEAD", "--incremental"]), &uuid);
            assert_dumps_eq(&expected, &actual, &format!("svnsync-{name}-from-{label}"));
        }
        // Revision 0's properties (the original's, and svnsync's own).
        let r0 = mirrors
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let out = pair.client().svn(
                    &["proplist", "--revprop", "-v", "-r", "0", &m.url()],
                    m.dir(),
                );
                assert!(out.success(), "{out}");
                String::from_utf8_lossy(&pair.normalize(i, &out.stdout))
                    .replace(&m.url(), "{MIRROR}")
            })
            .collect::<Vec<_>>();
        assert_eq!(r0[0], r0[1], "{name}: revision 0 of the mirrors differs");
        assert!(r0[1].contains("svn:sync-from-url"), "{}", r0[1]);
    }
}

#[test]
fn svnrdump_dump_loads_into_the_original() {
    for name in ALL {
        let pair = pair(name);
        let expected = expected_dump(pair, &[]);
        for side in [1, 0] {
            let out = pair.run_on(side, Path::new(""), "svnrdump", &["dump", "-q", "{URL}"]);
            assert!(
                out.success(),
                "svnrdump dump {name} from {}:\n{out}",
                pair.labels()[side]
            );
            let loaded = svnadmin_create();
            loaded.try_load_bytes(&out.stdout, &[]);
            let actual = loaded.dump(&[]);
            assert_dumps_eq(
                &expected,
                &actual,
                &format!("svnrdump-{name}-from-{}", pair.labels()[side]),
            );
        }
    }
    // An incremental range, loaded on top of the revisions before it.
    let pair = pair("basic");
    let out = pair.run_on(
        1,
        Path::new(""),
        "svnrdump",
        &["dump", "-q", "--incremental", "-r", "5:HEAD", "{URL}"],
    );
    assert!(out.success(), "{out}");
    let repo = svnadmin_create();
    let prefix = Run::tool("svnadmin")
        .args(["dump", "-q", "-r", "0:4"])
        .arg(pair.reference_repo())
        .success()
        .stdout;
    let loaded = repo.try_load_bytes(&prefix, &[]);
    assert!(loaded.success(), "{loaded}");
    let loaded = repo.try_load_bytes(&out.stdout, &[]);
    assert!(loaded.success(), "{loaded}");
    assert_dumps_eq(
        &expected_dump(pair, &[]),
        &repo.dump(&[]),
        "svnrdump-basic-incremental",
    );
}

#[test]
fn svnbench_null_commands() {
    for &(name, file) in FILES_WITH_HISTORY {
        let pair = pair(name);
        let bench = |args: &[&str]| pair.both_tool("svnbench", args, Expect::Success);
        bench(&["null-export", "{URL}"]).expect_stdout("files");
        bench(&["null-export", "-r", "2", "{URL}/trunk"]);
        bench(&["null-log", "{URL}"]).expect_stdout("revisions");
        bench(&["null-log", "-v", "-g", "{URL}"]);
        bench(&["null-log", "-v", "--limit", "3", "{URL}/trunk"]);
        let url = format!("{{URL}}/{file}");
        bench(&["null-blame", &url]).expect_stdout("revisions");
        bench(&["null-blame", "-g", &url]);
        bench(&["null-list", "-R", "{URL}"]).expect_stdout("directories");
        bench(&["null-list", "-R", "-v", "{URL}@1"]);
    }
}
