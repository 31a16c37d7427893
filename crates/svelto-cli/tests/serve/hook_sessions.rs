//! Hook sessions of the serve suite that any pair of servers runs (svn://: svnserve and
//! `svelto serve`, or a cluster's front ends, `tests/cluster`): hook scripts that read the
//! repository with `svnlook` / `svelto look` on the `REPOS` they are given.

use std::path::Path;

use svelto_testkit::{require_tool, Outcome, Pair};

use crate::sessions::{mask_dates, mask_txn_names};

fn write_hook(repo: &Path, name: &str, script: &str) {
    use std::os::unix::fs::PermissionsExt;
    let p = repo.join("hooks").join(name);
    std::fs::write(&p, script).expect("writing the hook");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// A pre-commit hook runs without the repository's writer held, on a transaction staged
/// apart from the revision files, as svnserve runs it before FSFS takes its write lock.
/// Against svnserve and Svelto alike: while one commit's hook is held (it reads its
/// transaction with `svnlook` / `svelto look` first), a commit to another path and a commit
/// to the held commit's own path both land at once. Released, the held commit lands when
/// nothing it changed changed meanwhile, and fails with the same `Conflict at 'PATH'` as
/// svnserve's when its file did.
pub fn a_held_pre_commit_hook_holds_up_no_other_commit(pair: &Pair) {
    require_tool("svnmucc");
    require_tool("svnlook");
    let _scope = pair.scope("held-hook");
    let looks = [
        String::from_utf8_lossy(
            &svelto_testkit::Run::new("sh")
                .arg("-c")
                .arg("command -v svnlook")
                .output()
                .stdout,
        )
        .trim()
        .to_string(),
        format!("{} look", env!("CARGO_BIN_EXE_svelto")),
    ];
    // What each side printed, by step.
    let mut seen: Vec<Vec<String>> = Vec::new();
    for (side, look) in looks.iter().enumerate() {
        let (url, repo) = if side == 0 {
            (pair.reference_url(), pair.reference_repo().to_path_buf())
        } else {
            (pair.subject_url(), pair.subject_repo().to_path_buf())
        };
        let work = pair.work(side).join("held-hook");
        std::fs::create_dir_all(&work).expect("work dir");
        let marks = work.join("marks");
        std::fs::create_dir_all(&marks).expect("marks dir");
        let m = |n: &str| marks.join(n).display().to_string();
        write_hook(
            &repo,
            "pre-commit",
            &format!(
                "#!/bin/sh\nif [ -e {hold} ]; then\n  rm -f {hold}\n  {look} changed -t \"$2\" \"$1\" > {out} 2>&1\n  touch {started}\n  i=0\n  while [ ! -e {release} ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done\n  rm -f {release}\nfi\nexit 0\n",
                hold = m("hold"),
                look = look,
                out = m("look"),
                started = m("started"),
                release = m("release"),
            ),
        );
        let put = |name: &str, text: &str, target: &str| -> Outcome {
            let f = work.join(name);
            std::fs::write(&f, text).expect("text");
            pair.client().run(
                "svnmucc",
                &[
                    "-m",
                    name,
                    "put",
                    &f.display().to_string(),
                    &format!("{url}/{target}"),
                ],
                &work,
            )
        };
        for (name, target) in [("g1", "held-g.txt"), ("f1", "held-f.txt")] {
            let out = put(name, "1\n", target);
            assert!(out.success(), "side {side}: {out}");
        }
        let mut steps = Vec::new();
        for (round, (held_path, same)) in [("held-g.txt", false), ("held-f.txt", true)]
            .into_iter()
            .enumerate()
        {
            std::fs::write(marks.join("hold"), "").expect("hold");
            let f = work.join(format!("held{round}"));
            std::fs::write(&f, "held\n").expect("text");
            let (f, target) = (f.display().to_string(), format!("{url}/{held_path}"));
            std::thread::scope(|sc| {
                let held = sc.spawn(|| {
                    pair.client()
                        .run("svnmucc", &["-m", "held", "put", &f, &target], &work)
                });
                let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
                while !marks.join("started").exists() {
                    assert!(
                        std::time::Instant::now() < deadline,
                        "side {side}: the hook never started"
                    );
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                std::fs::remove_file(marks.join("started")).expect("started");
                steps.push(std::fs::read_to_string(marks.join("look")).unwrap_or_default());
                // Commits while the hook is held: another path, then (second round) the
                // held commit's own path.
                let mut others = vec![format!("held-other{round}.txt")];
                if same {
                    others.push(held_path.to_string());
                }
                for other in others {
                    let t = std::time::Instant::now();
                    let out = put(&format!("o{round}"), "other\n", &other);
                    assert!(out.success(), "side {side}: commit to {other}:\n{out}");
                    assert!(
                        t.elapsed() < std::time::Duration::from_secs(10),
                        "side {side}: the commit to {other} took {:?} while a hook was held",
                        t.elapsed()
                    );
                    assert!(
                        !held.is_finished(),
                        "side {side}: the held commit ended early"
                    );
                }
                std::fs::write(marks.join("release"), "").expect("release");
                let out = held.join().expect("the held commit");
                steps.push(format!(
                    "held commit {}: {}",
                    if out.success() { "landed" } else { "failed" },
                    String::from_utf8_lossy(&mask_dates(&mask_txn_names(&out.stderr)))
                ));
            });
        }
        let _ = std::fs::remove_file(repo.join("hooks").join("pre-commit"));
        let cat = pair.client().svn(
            &[
                "cat",
                &format!("{url}/held-g.txt"),
                &format!("{url}/held-f.txt"),
            ],
            &work,
        );
        steps.push(cat.stdout_text());
        seen.push(steps);
    }
    assert!(
        seen[0][1].starts_with("held commit landed"),
        "svnserve: {:?}",
        seen[0]
    );
    assert!(
        seen[0][3].contains("E160024") && seen[0][3].contains("Conflict at '/held-f.txt'"),
        "svnserve: {:?}",
        seen[0]
    );
    assert_eq!(seen[1], seen[0], "Svelto differs from svnserve");
}

/// Hook scripts that read what they run for with `svnlook` (the reference's) or `svelto
/// look` (the subject's) on the `REPOS` they are given: pre-commit its transaction (`-t`:
/// log, author, changed, dirs-changed, cat, proplist), post-commit its revision (`-r`:
/// the same, and youngest), post-revprop-change the new value (`propget --revprop`). The
/// same output on both sides (dates masked) for a mkdir, a file put, a property change
/// and a revision property change; the pair's repositories anonymous clients may write.
pub fn hooks_read_the_repository_with_look(pair: &Pair) {
    require_tool("svnlook");
    let svnlook = String::from_utf8_lossy(
        &svelto_testkit::Run::new("sh")
            .arg("-c")
            .arg("command -v svnlook")
            .output()
            .stdout,
    )
    .trim()
    .to_string();
    let looks = [svnlook, format!("{} look", env!("CARGO_BIN_EXE_svelto"))];
    for (side, repo) in [pair.reference_repo(), pair.subject_repo()]
        .into_iter()
        .enumerate()
    {
        let log = repo.with_extension("look.log").display().to_string();
        let look = &looks[side];
        write_hook(
            repo,
            "pre-commit",
            &format!(
                "#!/bin/sh\nL=\"{look}\"\n{{\n  echo \"pre-commit\"\n  $L log -t \"$2\" \"$1\"\n  \
                 $L author -t \"$2\" \"$1\"\n  $L changed -t \"$2\" \"$1\"\n  \
                 $L dirs-changed -t \"$2\" \"$1\"\n  $L cat -t \"$2\" \"$1\" look/f.txt\n  \
                 $L proplist -v -t \"$2\" \"$1\" look/f.txt\n  echo \"exit $?\"\n}} >> {log} 2>&1\nexit 0\n"
            ),
        );
        write_hook(
            repo,
            "post-commit",
            &format!(
                "#!/bin/sh\nL=\"{look}\"\n{{\n  echo \"post-commit $2\"\n  $L youngest \"$1\"\n  \
                 $L log -r \"$2\" \"$1\"\n  $L info -r \"$2\" \"$1\"\n  $L changed -r \"$2\" \"$1\"\n  \
                 $L tree -r \"$2\" \"$1\" look\n  echo \"exit $?\"\n}} >> {log} 2>&1\n"
            ),
        );
        write_hook(repo, "pre-revprop-change", "#!/bin/sh\nexit 0\n");
        write_hook(
            repo,
            "post-revprop-change",
            &format!(
                "#!/bin/sh\nL=\"{look}\"\n{{\n  echo \"post-revprop-change $2 $4\"\n  \
                 $L propget --revprop -r \"$2\" \"$1\" \"$4\"\n  echo\n  echo \"exit $?\"\n}} >> {log} 2>&1\n"
            ),
        );
    }
    pair.both(&["mkdir", "-m", "a directory\nover two lines", "{URL}/look"]);
    let side_file = |side: usize| {
        let f = pair.work(side).join("look-f.txt");
        std::fs::write(&f, "one\ntwo\n").expect("text");
        f
    };
    for side in 0..2 {
        side_file(side);
    }
    // svnmucc prints the commit's date: run on both, not compared.
    for args in [
        &["-m", "a file", "put", "look-f.txt", "{URL}/look/f.txt"][..],
        &[
            "-m",
            "a property",
            "propset",
            "color",
            "blue",
            "{URL}/look/f.txt",
        ][..],
    ] {
        for out in pair.run_both(Path::new(""), "svnmucc", args) {
            assert!(out.success(), "svnmucc {args:?}:\n{out}");
        }
    }
    pair.both(&[
        "propset",
        "--revprop",
        "-r",
        "HEAD",
        "svn:log",
        "changed after",
        "{URL}",
    ]);
    // Errors name the program: "svnlook: E..." is "svelto look: E...".
    let logs: Vec<String> = [pair.reference_repo(), pair.subject_repo()]
        .iter()
        .map(|r| {
            let text = std::fs::read(r.with_extension("look.log")).unwrap_or_default();
            String::from_utf8_lossy(&mask_dates(&text)).replace("svnlook: E", "svelto look: E")
        })
        .collect();
    for h in [
        "pre-revprop-change",
        "post-revprop-change",
        "pre-commit",
        "post-commit",
    ] {
        for repo in [pair.reference_repo(), pair.subject_repo()] {
            let _ = std::fs::remove_file(repo.join("hooks").join(h));
        }
    }
    assert!(
        logs[0].contains("pre-commit\na file\n") && logs[0].contains("changed after"),
        "svnlook in the reference's hooks:\n{}",
        logs[0]
    );
    assert!(
        logs[0].contains("post-commit 14\n14\na file\n"),
        "svnlook -r in post-commit:\n{}",
        logs[0]
    );
    assert_eq!(
        logs[1], logs[0],
        "svelto look in the hooks differs from svnlook"
    );
}
