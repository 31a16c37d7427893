//! `svn:externals`: `svelto checkout` and `export` fetch them as the stock client does,
//! from svnserve, `svelto serve`, Apache and `svelto serve --http-listen`: every line
//! form (`URL DIR`, `-r N URL DIR`, `-rN`, `URL@PEG DIR`, the old `DIR [-r N] URL`), the
//! relative URLs (`^/`, `../`, `//`, `/`), a target of several components, file
//! externals (into the defining directory and below it), externals of externals, a definition that fails beside ones that work, and `--ignore-externals`:
//! the same output, working files, `svn status -v`, `svn info -R` and wc.db rows (the
//! `EXTERNALS` table) in the working copy and in each external's.

use std::path::Path;

use svelto_testkit::{tempdir, Outcome, Pair, Run};

use crate::{binary, in_wc, nodes, pristines, svn, tree, writable};

/// Sets `svn:externals` on the pair's repository at `base` (a writable pair): trunk/a
/// defines every form; tags defines one more (fetched as an external of trunk/a: an
/// external of an external); branches defines one that cannot be fetched beside one that
/// can.
fn define(base: &str) {
    let (scheme_host, server_path) = {
        let rest = base.split_once("://").map_or(base, |(_, r)| r);
        let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
        (format!("//{host}"), format!("/{path}"))
    };
    let trunk_a = format!(
        "^/trunk/a/b new-form\n\
         -r 3 ^/trunk/src pinned\n\
         -r4 ^/trunk/src pinned-short\n\
         ../src@5 pegged-relative\n\
         old-form -r 4 {base}/trunk/src\n\
         old-head {base}/trunk/a/b/c\n\
         {scheme_host}{server_path}/trunk/src scheme-relative\n\
         {server_path}/trunk/a/b/c server-relative\n\
         ^/trunk/src deep/er/target\n\
         ^/trunk/README.txt readme-file\n\
         -r 9 ^/trunk/README.txt b/readme-9\n\
         # a comment\n\
         ^/tags nested\n"
    );
    let config = tempdir();
    Run::new("svnmucc")
        .args([
            "--non-interactive",
            "--config-dir",
            &config.path().display().to_string(),
            "-m",
            "externals",
            "-U",
            base,
            "propset",
            "svn:externals",
            &trunk_a,
            "trunk/a",
            "propset",
            "svn:externals",
            "^/trunk/a/b/c inner",
            "tags",
            "propset",
            "svn:externals",
            "^/trunk/no-such-dir missing\n^/trunk/src present\n",
            "branches",
        ])
        .success();
}

/// The external working copies below a checkout of trunk.
const EXTERNALS: &[&str] = &[
    "a/new-form",
    "a/pinned",
    "a/pinned-short",
    "a/pegged-relative",
    "a/old-form",
    "a/old-head",
    "a/scheme-relative",
    "a/server-relative",
    "a/deep/er/target",
    "a/nested",
    "a/nested/inner",
];

fn run(program: &Path, args: &[&str], cwd: &Path, config: Option<&Path>) -> Outcome {
    let mut r = Run::new(program).args(args).current_dir(cwd);
    if let Some(c) = config {
        r = r.arg("--config-dir").arg(c);
    }
    r.output()
}

/// Runs `cmd` (checkout or export, with `args`) of `url` with the stock client in
/// `dir/stock` and with Svelto in `dir/svelto`, both into `wc`: the same exit status and
/// output (stdout; stderr's warnings name the same paths).
fn both(pair: &Pair, dir: &Path, cmd: &str, args: &[&str], url: &str) -> [Outcome; 2] {
    let mut a = vec![cmd];
    a.extend_from_slice(args);
    a.extend([url, "wc"]);
    let mut outs = Vec::new();
    for side in ["stock", "svelto"] {
        let cwd = dir.join(side);
        std::fs::create_dir_all(&cwd).unwrap_or_else(|e| panic!("{e}"));
        outs.push(if side == "stock" {
            pair.client().svn(&a, &cwd)
        } else {
            run(binary(), &a, &cwd, None)
        });
    }
    let [stock, ours]: [Outcome; 2] = outs.try_into().unwrap_or_else(|_| unreachable!());
    let what = format!("{cmd} {args:?} {url}");
    assert_eq!(
        (stock.success(), blocks_sorted(&stock.stdout_text())),
        (ours.success(), blocks_sorted(&ours.stdout_text())),
        "{what}: exit status and output (stock stderr: {}; svelto stderr: {})",
        stock.stderr_text(),
        ours.stderr_text()
    );
    [stock, ours]
}

/// The output with each run of `A` lines sorted: over http:// the stock client prints
/// them in the order of its own requests, Svelto in the order of the update report.
fn blocks_sorted(text: &str) -> String {
    let mut out = Vec::new();
    let mut run: Vec<&str> = Vec::new();
    for line in text.lines() {
        if line.starts_with("A    ") {
            run.push(line);
            continue;
        }
        run.sort_unstable();
        out.append(&mut run);
        out.push(line);
    }
    run.sort_unstable();
    out.append(&mut run);
    out.join("\n")
}

/// Compares what the stock client shows of the two working copies `dir/*/wc` and of the
/// externals below them.
fn compare_wcs(pair: &Pair, dir: &Path, label: &str, externals: &[&str]) {
    let (stock, ours) = (dir.join("stock/wc"), dir.join("svelto/wc"));
    assert_eq!(tree(&stock), tree(&ours), "{label}: working files");
    for cmd in [
        &["status", "-v"][..],
        &["info", "-R"],
        &["proplist", "-R", "-v"],
    ] {
        assert_eq!(
            in_wc(pair, &stock, cmd),
            in_wc(pair, &ours, cmd),
            "{label}: svn {cmd:?}"
        );
    }
    for ext in std::iter::once(&"").chain(externals) {
        let (a, b) = match *ext {
            "" => (stock.clone(), ours.clone()),
            e => (stock.join(e), ours.join(e)),
        };
        assert_eq!(nodes(&a), nodes(&b), "{label}: wc.db rows of '{ext}'");
        assert_eq!(
            pristines(&a),
            pristines(&b),
            "{label}: pristines of '{ext}'"
        );
        assert_eq!(
            in_wc(pair, &a, &["info"]),
            in_wc(pair, &b, &["info"]),
            "{label}: svn info of '{ext}'"
        );
    }
}

fn compare_externals(pair: &Pair, label: &str, base: &str) {
    define(base);
    let trunk = format!("{base}/trunk");
    let dir = tempdir();
    both(pair, dir.path(), "checkout", &[], &trunk);
    compare_wcs(pair, dir.path(), &format!("{label}: checkout"), EXTERNALS);
    // The stock client updates Svelto's externals as its own.
    for wc in ["stock/wc", "svelto/wc"] {
        let out = svn(pair, &["update"], &dir.path().join(wc)).stdout_text();
        assert!(out.contains("External at revision"), "{label}: {out}");
    }
    compare_wcs(pair, dir.path(), &format!("{label}: svn update"), EXTERNALS);

    let dir = tempdir();
    both(
        pair,
        dir.path(),
        "checkout",
        &["--ignore-externals"],
        &trunk,
    );
    compare_wcs(
        pair,
        dir.path(),
        &format!("{label}: --ignore-externals"),
        &[],
    );
    assert!(!dir.path().join("svelto/wc/a/pinned").exists());

    let dir = tempdir();
    both(
        pair,
        dir.path(),
        "checkout",
        &["--depth", "immediates"],
        &trunk,
    );
    compare_wcs(
        pair,
        dir.path(),
        &format!("{label}: --depth immediates"),
        &[],
    );

    // A definition that fails: the others are fetched, the exit status says so.
    let dir = tempdir();
    let [stock, ours] = both(
        pair,
        dir.path(),
        "checkout",
        &[],
        &format!("{base}/branches"),
    );
    assert!(!stock.success(), "{label}: {}", stock.stdout_text());
    for err in [stock.stderr_text(), ours.stderr_text()] {
        assert!(
            err.contains("wc/missing") && err.contains("Failure occurred processing"),
            "{label}: {err}"
        );
    }
    compare_wcs(
        pair,
        dir.path(),
        &format!("{label}: a failing definition"),
        &["present"],
    );

    let dir = tempdir();
    both(pair, dir.path(), "export", &[], &trunk);
    assert_eq!(
        tree(&dir.path().join("stock/wc")),
        tree(&dir.path().join("svelto/wc")),
        "{label}: export"
    );
    let dir = tempdir();
    both(
        pair,
        dir.path(),
        "export",
        &["--ignore-externals", "-r", "11"],
        &trunk,
    );
    assert_eq!(
        tree(&dir.path().join("stock/wc")),
        tree(&dir.path().join("svelto/wc")),
        "{label}: export --ignore-externals"
    );
}

#[test]
fn externals_are_fetched_as_by_the_stock_client() {
    let pair = writable(Pair::new("basic", binary()));
    for (label, base) in crate::servers(&pair) {
        compare_externals(&pair, label, &base);
    }
}

#[test]
fn http_externals_are_fetched_as_by_the_stock_client() {
    let pair = writable(Pair::http("basic", binary()));
    for (label, base) in [
        ("apache", pair.reference_url()),
        ("svelto serve --http-listen", pair.subject_url()),
    ] {
        compare_externals(&pair, label, &base);
    }
}

/// The props fixture's trunk has a file external (`^/trunk/other.txt ext.txt`) below
/// directories with properties: its row carries the inherited properties, as svn's does.
#[test]
fn a_file_external_records_what_it_inherits() {
    let pair = crate::pair("props");
    for (label, base) in crate::servers(pair) {
        let dir = tempdir();
        crate::compare_checkouts(pair, dir.path(), label, &format!("{base}/trunk"), &[]);
    }
    let pair = svelto_testkit::shared_http_pair("props", binary());
    for (label, base) in [
        ("apache", pair.reference_url()),
        ("svelto serve --http-listen", pair.subject_url()),
    ] {
        let dir = tempdir();
        crate::compare_checkouts(pair, dir.path(), label, &format!("{base}/trunk"), &[]);
    }
}

/// The externals of trunk/a after [`change`]: `old-head` gone, `added-now` new,
/// `server-relative` switched to another URL.
const EXTERNALS_CHANGED: &[&str] = &[
    "a/new-form",
    "a/pinned",
    "a/pinned-short",
    "a/pegged-relative",
    "a/old-form",
    "a/scheme-relative",
    "a/server-relative",
    "a/deep/er/target",
    "a/nested",
    "a/nested/inner",
    "a/added-now",
];

/// Two revisions after [`define`]: one changes files the externals at HEAD fetch
/// (trunk/src/main.c, trunk/README.txt: a directory and a file external) and the tree's
/// own; the next changes trunk/a's definitions (one gone, one new, a pinned directory
/// external and a pinned file external at other revisions, a directory external to
/// another URL: svn switches it).
fn change(base: &str) {
    let (scheme_host, server_path) = {
        let rest = base.split_once("://").map_or(base, |(_, r)| r);
        let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
        (format!("//{host}"), format!("/{path}"))
    };
    let config = tempdir();
    let scratch = tempdir();
    let text = scratch.path().join("text");
    std::fs::write(&text, "changed by the externals test\n").unwrap_or_else(|e| panic!("{e}"));
    let text = text.display().to_string();
    let mucc = |args: &[&str]| {
        Run::new("svnmucc")
            .args([
                "--non-interactive",
                "--config-dir",
                &config.path().display().to_string(),
                "-m",
                "externals change",
                "-U",
                base,
            ])
            .args(args)
            .success();
    };
    mucc(&[
        "put",
        &text,
        "trunk/src/main.c",
        "put",
        &text,
        "trunk/README.txt",
    ]);
    let trunk_a = format!(
        "^/trunk/a/b new-form\n\
         -r 5 ^/trunk/src pinned\n\
         -r4 ^/trunk/src pinned-short\n\
         ../src@5 pegged-relative\n\
         old-form -r 4 {base}/trunk/src\n\
         {scheme_host}{server_path}/trunk/src scheme-relative\n\
         {server_path}/trunk/a/b server-relative\n\
         ^/trunk/src deep/er/target\n\
         ^/trunk/README.txt readme-file\n\
         -r 3 ^/trunk/README.txt b/readme-9\n\
         ^/tags nested\n\
         ^/trunk/a/b/c added-now\n"
    );
    mucc(&["propset", "svn:externals", &trunk_a, "trunk/a"]);
}

/// Lines of an update's output as compared: each run of `A`/`D`/`U` lines sorted (svn
/// prints a directory's property change when the directory closes, Svelto before its
/// files).
fn update_output(text: &str) -> String {
    let change = |l: &str| {
        l.len() > 5
            && l.as_bytes()[4] == b' '
            && l.as_bytes()[..4]
                .iter()
                .all(|b| matches!(b, b' ' | b'A' | b'D' | b'U' | b'C' | b'G' | b'E'))
    };
    let mut sorted = Vec::new();
    let mut run: Vec<&str> = Vec::new();
    for line in text.lines() {
        if change(line) {
            run.push(line);
            continue;
        }
        run.sort_unstable();
        sorted.append(&mut run);
        sorted.push(line);
    }
    run.sort_unstable();
    sorted.append(&mut run);
    sorted.join("\n")
}

/// `svelto update` against `svn update` on working copies with externals, forward over
/// [`change`]'s two revisions and back: the same output, files, status, rows.
fn compare_external_updates(pair: &Pair, label: &str, base: &str) {
    define(base);
    let trunk = format!("{base}/trunk");
    let dir = tempdir();
    let defined = svn(
        pair,
        &["info", "--show-item", "revision", &trunk],
        dir.path(),
    )
    .stdout_text()
    .trim()
    .to_string();
    for side in ["stock", "svelto"] {
        let cwd = dir.path().join(side);
        std::fs::create_dir_all(&cwd).unwrap_or_else(|e| panic!("{e}"));
        svn(pair, &["checkout", "-q", &trunk, "wc"], &cwd);
    }
    change(base);
    let changed_once = (defined.parse::<u64>().unwrap_or(0) + 1).to_string();
    for (to, externals) in [
        (changed_once.as_str(), EXTERNALS),
        ("HEAD", EXTERNALS_CHANGED),
        (defined.as_str(), EXTERNALS),
        ("HEAD", EXTERNALS_CHANGED),
    ] {
        let what = format!("{label}: update -r {to}");
        let stock = svn(pair, &["update", "-r", to, "wc"], &dir.path().join("stock"));
        let ours = run(
            binary(),
            &["update", "-r", to, "wc"],
            &dir.path().join("svelto"),
            None,
        );
        assert!(ours.success(), "{what}: {}", ours.stderr_text());
        assert_eq!(
            update_output(&stock.stdout_text()),
            update_output(&ours.stdout_text()),
            "{what}: output (svelto stderr: {})",
            ours.stderr_text()
        );
        compare_wcs(pair, dir.path(), &what, externals);
    }
    // --ignore-externals leaves them as they are.
    let ours = run(
        binary(),
        &["update", "--ignore-externals", "-r", &defined, "wc"],
        &dir.path().join("svelto"),
        None,
    );
    assert!(ours.success(), "{label}: {}", ours.stderr_text());
    assert!(
        !ours.stdout_text().contains("external"),
        "{label}: {}",
        ours.stdout_text()
    );
    assert!(dir.path().join("svelto/wc/a/added-now").is_dir());
}

#[test]
fn svelto_update_updates_externals_as_svn_update() {
    let pair = writable(Pair::new("basic", binary()));
    for (label, base) in crate::servers(&pair) {
        compare_external_updates(&pair, label, &base);
    }
}

#[test]
fn http_svelto_update_updates_externals_as_svn_update() {
    let pair = writable(Pair::http("basic", binary()));
    for (label, base) in [
        ("apache", pair.reference_url()),
        ("svelto serve --http-listen", pair.subject_url()),
    ] {
        compare_external_updates(&pair, label, &base);
    }
}
