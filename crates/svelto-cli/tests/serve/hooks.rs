//! Hook scripts under svnserve and under Svelto: the same scripts in both repositories
//! record their arguments, standard input and environment; the records and what the client
//! prints must be the same.

use svelto_testkit::Run;

use crate::commit::{writable_pair, Script};

/// Installs hook `name` (a shell script body) in both repositories; `{LOG}` in the body is
/// a log file beside each repository.
fn install(pair: &svelto_testkit::Pair, name: &str, body: &str) {
    for repo in [pair.reference_repo(), pair.subject_repo()] {
        let log = repo.with_extension("hooks.log");
        let hooks = repo.join("hooks");
        std::fs::create_dir_all(&hooks).expect("hooks dir");
        let p = hooks.join(name);
        let script = format!(
            "#!/bin/sh\n{}",
            body.replace("{LOG}", &log.to_string_lossy())
        );
        std::fs::write(&p, script).expect("write hook");
        Run::new("chmod").arg("+x").arg(&p).success();
    }
}

fn remove(pair: &svelto_testkit::Pair, name: &str) {
    for repo in [pair.reference_repo(), pair.subject_repo()] {
        let _ = std::fs::remove_file(repo.join("hooks").join(name));
    }
}

fn logs(pair: &svelto_testkit::Pair) -> [String; 2] {
    [pair.reference_repo(), pair.subject_repo()]
        .map(|r| std::fs::read_to_string(r.with_extension("hooks.log")).unwrap_or_default())
}

/// Records a hook's name, its arguments after the repository (transaction names reduced
/// to their base revision), standard input and environment.
const RECORD: &str = r#"{
  printf '%s' "$(basename "$0")"
  shift
  for a in "$@"; do printf ' [%s]' "$(echo "$a" | sed 's/^\([0-9]*\)-[0-9a-z]*$/\1-TXN/')"; done
  printf '\nstdin: '; cat
  printf '\nenv: %s\n' "$(env | grep -v '^PWD=\|^SHLVL=\|^_=' | sort | tr '\n' ' ')"
} >> {LOG}
"#;

#[test]
fn hooks_see_the_same_arguments_input_and_environment() {
    let pair = writable_pair("basic");
    let mut s = Script::new(&pair);
    let _scope = pair.scope("hooks");
    let w = "hooks";
    for h in [
        "start-commit",
        "pre-commit",
        "post-commit",
        "pre-revprop-change",
        "post-revprop-change",
    ] {
        install(&pair, h, RECORD);
    }
    for repo in [pair.reference_repo(), pair.subject_repo()] {
        std::fs::write(
            repo.join("conf/hooks-env"),
            // `%(name)s` expands from the same section, else from [DEFAULT] (not the
            // [default] hook section); unknown names stay; cycles give empty values.
            "[DEFAULT]\nTOOLS = /opt/tools\n[default]\nLANG = C\nP = %(TOOLS)s/bin\n\
             [post-commit]\nFROM = hooks-env\nWHERE = %(FROM)s in %(TOOLS)s\n\
             ODD = %(LANG)s %(nope)s\nC1 = %(C2)s\nC2 = %(C1)s\n",
        )
        .expect("hooks-env");
    }
    s.svn(w, &["mkdir", "-m", "first", "{URL}/h"]);
    s.write("hooks/f", "text\n");
    s.svn(w, &["import", "-m", "second", "f", "{URL}/h/f"]);
    let head = s.head(w).to_string();
    s.svn(
        w,
        &[
            "propset",
            "--revprop",
            "-r",
            &head,
            "svn:log",
            "changed log",
            "{URL}",
        ],
    );
    s.svn(
        w,
        &["propset", "--revprop", "-r", &head, "team", "blue", "{URL}"],
    );
    s.svn(w, &["propdel", "--revprop", "-r", &head, "team", "{URL}"]);
    let [a, b] = logs(&pair);
    assert!(a.contains("start-commit"), "svnserve ran no hooks:\n{a}");
    assert_eq!(a, b, "the hooks saw different things");
    // A pre-commit hook that says no: same message, nothing committed.
    install(&pair, "pre-commit", "echo 'no commits today' >&2\nexit 1\n");
    s.svn_fails(w, &["mkdir", "-m", "refused", "{URL}/h/refused"]);
    assert_eq!(s.head(w).to_string(), head);
    remove(&pair, "pre-commit");
    // A failing post-commit hook: the commit stands, the client warns.
    install(
        &pair,
        "post-commit",
        "echo 'mail server down' >&2\nexit 2\n",
    );
    s.svn(w, &["mkdir", "-m", "warned", "{URL}/h/warned"]);
    // start-commit and pre-revprop-change refusals; no pre-revprop-change hook at all.
    install(&pair, "start-commit", "echo 'not you' >&2\nexit 1\n");
    s.svn_fails(w, &["mkdir", "-m", "refused", "{URL}/h/refused2"]);
    install(&pair, "pre-revprop-change", "exit 1\n");
    s.svn_fails(
        w,
        &["propset", "--revprop", "-r", "1", "svn:log", "x", "{URL}"],
    );
    remove(&pair, "pre-revprop-change");
    s.svn_fails(
        w,
        &["propset", "--revprop", "-r", "1", "svn:log", "x", "{URL}"],
    );
    s.assert_same_repositories();
}

#[test]
fn revision_property_values_are_checked() {
    let pair = writable_pair("basic");
    let mut s = Script::new(&pair);
    let _scope = pair.scope("rpv");
    install(&pair, "pre-revprop-change", "exit 0\n");
    let w = "rpv";
    s.svn(
        w,
        &[
            "propset",
            "--revprop",
            "-r",
            "1",
            "svn:date",
            "2020-02-02T02:02:02.000002Z",
            "{URL}",
        ],
    );
    s.svn_fails(
        w,
        &[
            "propset",
            "--revprop",
            "-r",
            "1",
            "svn:date",
            "yesterday",
            "{URL}",
        ],
    );
    s.svn_fails(
        w,
        &["propset", "--revprop", "-r", "99", "svn:log", "x", "{URL}"],
    );
    s.svn(
        w,
        &[
            "propset",
            "--revprop",
            "-r",
            "1",
            "svn:author",
            "someone else",
            "{URL}",
        ],
    );
    s.svn(w, &["log", "-r", "1", "{URL}"]);
    s.assert_same_repositories();
}

/// Hook scripts reading their transaction and revision with `svelto look` print what
/// svnlook prints under svnserve (`hook_sessions`).
#[test]
fn hooks_read_the_repository_with_svelto_look_as_with_svnlook() {
    let pair = writable_pair("basic");
    crate::hook_sessions::hooks_read_the_repository_with_look(&pair);
}
