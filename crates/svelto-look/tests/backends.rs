//! svnlook's subcommands as a library, over both backends of the seam: the same dump
//! loaded into the local engine and into memory gives the same output for every
//! subcommand and revision, and the output is svnlook's (the binary's suite,
//! crates/svelto-cli/tests/look, compares it with the real svnlook).

use std::path::Path;
use std::sync::Arc;
use svelto_core::Revnum;
use svelto_fs::ReadRepo;
use svelto_look::{LookArgs, LookError};
use svelto_testkit::memfs::{Backend, TestRepo, BACKENDS};

fn loaded(backend: Backend, scenario: &str) -> TestRepo {
    let t = TestRepo::create(
        backend,
        "00000000-0000-4000-8000-000000000009",
        "2026-03-01T00:00:00.000000Z",
    );
    let dump = std::fs::read(svelto_testkit::scenario_dump(scenario)).expect("fixture");
    let mut w = t.writer();
    svelto_repos::load(&mut *w, &dump[..], Default::default(), &mut |_| {})
        .unwrap_or_else(|e| panic!("{backend:?}: load {scenario}: {e}"));
    drop(w);
    t.repo.refresh().expect("refresh");
    t
}

/// `svelto look NAME` with `args` on `repo`: what it printed, or its error lines.
fn look(repo: &Arc<dyn ReadRepo>, name: &str, args: &LookArgs) -> Result<Vec<u8>, Vec<String>> {
    let opener = |_: &Path, txn: Option<&str>| {
        assert!(txn.is_none(), "no transaction here");
        Ok((repo.clone(), None::<Revnum>))
    };
    let mut out = Vec::new();
    svelto_look::run(name, args, &opener, &mut out)
        .map(|()| out)
        .map_err(|LookError { chain }| {
            chain
                .into_iter()
                .map(|(code, m)| format!("E{code:06}: {m}"))
                .collect()
        })
}

#[test]
fn every_subcommand_prints_the_same_over_both_backends() {
    let mut compared = 0;
    for scenario in ["basic", "copies", "props", "mergeinfo", "replace"] {
        let repos = BACKENDS.map(|b| loaded(b, scenario));
        let youngest = repos[0].repo.youngest();
        assert_eq!(youngest, repos[1].repo.youngest(), "{scenario}");
        let mut paths = Vec::new();
        for rev in 0..=youngest {
            let base = LookArgs {
                rev: Some(rev),
                copy_info: true,
                ..LookArgs::default()
            };
            let mut asks: Vec<(&str, LookArgs)> = [
                "author",
                "changed",
                "date",
                "diff",
                "dirs-changed",
                "info",
                "log",
                "tree",
                "uuid",
                "youngest",
            ]
            .iter()
            .map(|n| (*n, base.clone()))
            .collect();
            asks.push((
                "tree",
                LookArgs {
                    full_paths: true,
                    ..base.clone()
                },
            ));
            asks.push((
                "proplist",
                LookArgs {
                    revprop: true,
                    verbose: true,
                    ..base.clone()
                },
            ));
            asks.push((
                "proplist",
                LookArgs {
                    revprop: true,
                    xml: true,
                    ..base.clone()
                },
            ));
            if rev == youngest {
                let tree = look(
                    &repos[0].repo,
                    "tree",
                    &LookArgs {
                        full_paths: true,
                        ..base.clone()
                    },
                )
                .expect("tree");
                paths = String::from_utf8(tree)
                    .expect("UTF-8 paths")
                    .lines()
                    .map(str::to_owned)
                    .collect();
                for p in &paths {
                    let one = |arg1: &str| LookArgs {
                        arg1: Some(arg1.to_owned()),
                        ..base.clone()
                    };
                    asks.push(("cat", one(p)));
                    asks.push(("filesize", one(p)));
                    asks.push(("history", one(p)));
                    asks.push((
                        "proplist",
                        LookArgs {
                            verbose: true,
                            show_inherited_props: true,
                            ..one(p)
                        },
                    ));
                    asks.push((
                        "propget",
                        LookArgs {
                            arg2: Some(p.clone()),
                            show_inherited_props: true,
                            ..one("svn:mergeinfo")
                        },
                    ));
                }
            }
            for (name, args) in &asks {
                let [local, mem] = [&repos[0], &repos[1]].map(|t| look(&t.repo, name, args));
                assert_eq!(
                    mem, local,
                    "{scenario} r{rev}: look {name} {:?} {:?}",
                    args.arg1, args.arg2
                );
                compared += 1;
            }
        }
        // What svnlook prints, checked on a few answers (the binary's suite compares the
        // rest with svnlook itself).
        let r = &repos[1].repo;
        let at = |rev| LookArgs {
            rev: Some(rev),
            ..LookArgs::default()
        };
        assert_eq!(
            look(r, "youngest", &at(youngest)).expect("youngest"),
            format!("{youngest}\n").into_bytes()
        );
        assert!(paths.iter().any(|p| p == "/"), "{scenario}: {paths:?}");
        let too_far = look(r, "author", &at(youngest + 1)).expect_err("no such revision");
        assert_eq!(
            too_far,
            vec![format!("E160006: No such revision {}", youngest + 1)],
            "{scenario}"
        );
    }
    assert!(compared > 200, "{compared} answers compared");
}

#[test]
fn arguments_are_checked_before_the_repository_is_opened() {
    let opener =
        |_: &Path, _: Option<&str>| -> svelto_fs::Result<(Arc<dyn ReadRepo>, Option<Revnum>)> {
            panic!("the repository is not opened")
        };
    let args = LookArgs {
        arg1: Some("extra".into()),
        ..LookArgs::default()
    };
    let err = svelto_look::run("author", &args, &opener, &mut Vec::new())
        .expect_err("too many arguments");
    assert_eq!(err.chain[1].1, "Too many arguments given");
    let missing = svelto_look::run("cat", &LookArgs::default(), &opener, &mut Vec::new())
        .expect_err("missing path");
    assert_eq!(missing.chain[1].1, "Missing repository path argument");
    let not_a_repo =
        |p: &Path, _: Option<&str>| -> svelto_fs::Result<(Arc<dyn ReadRepo>, Option<Revnum>)> {
            Err(svelto_fs::StoreError::NotARepository(
                p.display().to_string(),
            ))
        };
    let args = LookArgs {
        repos: Some("/nowhere".into()),
        ..LookArgs::default()
    };
    let err = svelto_look::run("uuid", &args, &not_a_repo, &mut Vec::new()).expect_err("no repo");
    assert_eq!(
        err.chain,
        vec![(
            2,
            "Can't open file '/nowhere/format': No such file or directory".into()
        )]
    );
}
