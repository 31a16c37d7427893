//! Update reports (`svelto_repos::report`): drives checked against an in-memory working copy
//! model, against the real svnserve's drives for the same reports, and for the exact shape
//! of §5.7 of the protocol doc.

mod harness;
mod service_authz;
mod shape;
mod svnserve;
mod wc;

use harness::{
    error_code, first_difference, model_check, normalize, random_scenario, rounds, run_ours, seed,
    Cmd, Fixture, Op, Ours, Rng, Scenario,
};
use svnserve::Outcome;

/// Histories with copies, replacements, properties, renames and odd names.
const FIXTURES: [&str; 13] = [
    "basic",
    "copies",
    "replace",
    "props",
    "mergeinfo",
    "readd",
    "moves",
    "names",
    "symlinks",
    "mixed",
    "eol-keywords",
    "empty-revs",
    "revprops",
];

fn describe(fx: &Fixture, sc: &Scenario) -> String {
    format!("fixture {}: {sc:#?}", fx.name)
}

/// Every pair of revisions, forwards and backwards, as a plain update of the root and as a
/// checkout: the drive turns the tree at one revision into the tree at the other.
#[test]
fn model_updates_between_all_revision_pairs() {
    for name in FIXTURES {
        let fx = Fixture::load(name);
        for from in 0..=fx.head {
            for to in 0..=fx.head {
                let mut scenarios = vec![Scenario::update("", "", to, vec![Op::set("", from)])];
                if from == to {
                    scenarios.push(Scenario::update(
                        "",
                        "",
                        to,
                        vec![Op::Set {
                            path: String::new(),
                            rev: from,
                            depth: svelto_core::Depth::Infinity,
                            start_empty: true,
                            lock_token: None,
                        }],
                    ));
                }
                for sc in scenarios {
                    match model_check(&fx.repo, &sc) {
                        Ok((Ours::Drive(_), true)) => {}
                        Ok((other, _)) => panic!("{}\nfailed: {other:?}", describe(&fx, &sc)),
                        Err(e) => panic!("{}\n{e}", describe(&fx, &sc)),
                    }
                }
            }
        }
    }
}

/// Random reports (mixed revisions, deletions, switched and excluded subtrees, depths,
/// targets, switches) over every fixture: whenever the drive succeeds it applies cleanly to
/// the working copy the report describes, and (where the model can say) produces the target.
#[test]
fn model_random_reports() {
    let (mut drives, mut compared, mut total) = (0, 0, 0);
    for (i, name) in FIXTURES.iter().enumerate() {
        let fx = Fixture::load(name);
        let mut rng = Rng::new(1000 + i as u64 + seed());
        for _ in 0..rounds(400) {
            let sc = random_scenario(&fx.repo, fx.head, &mut rng);
            total += 1;
            match model_check(&fx.repo, &sc) {
                Ok((Ours::Drive(_), model)) => {
                    drives += 1;
                    compared += usize::from(model);
                }
                Ok(_) => {}
                Err(e) => panic!("{}\n{e}", describe(&fx, &sc)),
            }
        }
    }
    eprintln!("{total} random reports: {drives} drives, {compared} compared with the model");
    assert!(
        drives * 2 > total,
        "only {drives} of {total} random drives ran to the end"
    );
    assert!(
        compared * 3 > total,
        "only {compared} of {total} compared with the model"
    );
}

/// Compares our outcome with svnserve's; returns which kind of outcome both had.
fn differential(
    fx: &Fixture,
    serve: &mut svelto_testkit::SvnserveClient,
    sc: &Scenario,
) -> Result<&'static str, String> {
    if std::env::var_os("REPORT_DEBUG").is_some() {
        eprintln!("{}", describe(fx, sc));
    }
    let theirs = svnserve::run(serve, sc);
    let ours = run_ours(&fx.repo, sc);
    let kind = match (&theirs, &ours) {
        (Outcome::Crashed, _) => return Ok("svnserve crashed"),
        (Outcome::Drive(_), _) => "drive",
        (Outcome::Refused(..), _) => "refused",
        (Outcome::Aborted(..), _) => "aborted",
    };
    match (&theirs, &ours) {
        (Outcome::Drive(a), Ours::Drive(b)) => {
            let (a, b) = (normalize(a), normalize(b));
            if a != b {
                return Err(first_difference(&a, &b));
            }
        }
        (Outcome::Refused(code, msg), Ours::Refused(e)) => {
            let ours_code = error_code(e);
            if ours_code != *code || *msg != e.to_string() {
                return Err(format!(
                    "svnserve refused with {code} '{msg}', svelto with {ours_code} '{e}'"
                ));
            }
        }
        (Outcome::Aborted(a, code, msg), Ours::Aborted(b, e)) => {
            let (a, b) = (normalize(a), normalize(b));
            if a != b {
                return Err(format!("before the error: {}", first_difference(&a, &b)));
            }
            let ours_code = error_code(e);
            if ours_code != *code || *msg != e.to_string() {
                return Err(format!(
                    "svnserve aborted with {code} '{msg}', svelto with {ours_code} '{e}'"
                ));
            }
        }
        _ => {
            let calls_theirs = match &theirs {
                Outcome::Drive(c) | Outcome::Aborted(c, ..) => normalize(c),
                Outcome::Refused(..) | Outcome::Crashed => Vec::new(),
            };
            let calls_ours = match &ours {
                Ours::Drive(c) | Ours::Aborted(c, _) => normalize(c),
                Ours::Refused(_) => Vec::new(),
            };
            return Err(format!(
                "outcomes differ:\nsvnserve: {}\nsvelto: {}\n{}",
                summary_theirs(&theirs),
                summary_ours(&ours),
                first_difference(&calls_theirs, &calls_ours)
            ));
        }
    }
    Ok(kind)
}

fn summary_theirs(o: &Outcome) -> String {
    match o {
        Outcome::Drive(c) => format!("drive of {} calls", c.len()),
        Outcome::Refused(code, m) => format!("refused {code} {m}"),
        Outcome::Aborted(c, code, m) => format!("aborted after {} calls: {code} {m}", c.len()),
        Outcome::Crashed => "crashed".into(),
    }
}

fn summary_ours(o: &Ours) -> String {
    match o {
        Ours::Drive(c) => format!("drive of {} calls", c.len()),
        Ours::Refused(e) => format!("refused {} {e}", error_code(e)),
        Ours::Aborted(c, e) => format!("aborted after {} calls: {} {e}", c.len(), error_code(e)),
    }
}

/// Reports svnserve refuses, before or at the start of its drive.
fn error_scenarios(head: u64) -> Vec<Scenario> {
    let set = |path: &str, rev| Op::set(path, rev);
    let mut v = vec![
        Scenario::update("", "", head, vec![set("trunk", 1)]),
        Scenario::update(
            "",
            "",
            head,
            vec![Op::Delete {
                path: String::new(),
            }],
        ),
        Scenario::update("", "", head, vec![set("", 1), set("", 1)]),
        Scenario::update("", "", head + 1, vec![set("", 1)]),
        Scenario::update("", "", head, vec![set("", head + 1)]),
        Scenario::update(
            "",
            "",
            head,
            vec![Op::Set {
                path: String::new(),
                rev: 1,
                depth: svelto_core::Depth::Unknown,
                start_empty: false,
                lock_token: None,
            }],
        ),
        Scenario::update("no-such-dir", "", head, vec![set("", 1)]),
    ];
    let mut sw = Scenario::update("", "", head, vec![set("", 1)]);
    sw.cmd = Cmd::Switch;
    sw.switch_path = Some("no/such/path".into());
    v.push(sw);
    v
}

/// The same reports sent to the real svnserve (`svnserve -i` over the FSFS copy of the
/// fixture): the drives are the same, call for call, up to svndiff bytes and the order of
/// hash-ordered runs (deletions in one directory, ordinary properties of one node).
#[test]
fn drives_match_svnserve() {
    let mut compared = 0;
    let mut outcomes = std::collections::BTreeMap::new();
    for (i, name) in FIXTURES.iter().enumerate() {
        let fx = Fixture::load(name);
        let mut serve = fx.svnserve();
        let mut scenarios = Vec::new();
        for from in 0..=fx.head {
            for to in 0..=fx.head {
                scenarios.push(Scenario::update("", "", to, vec![Op::set("", from)]));
            }
        }
        scenarios.extend(error_scenarios(fx.head));
        let mut rng = Rng::new(2000 + i as u64 + seed());
        for _ in 0..rounds(250) {
            scenarios.push(random_scenario(&fx.repo, fx.head, &mut rng));
        }
        for sc in &scenarios {
            match differential(&fx, &mut serve, sc) {
                Ok(kind) => {
                    *outcomes.entry(kind).or_insert(0usize) += 1;
                    if kind == "svnserve crashed" {
                        eprintln!("svnserve crashed on {}", describe(&fx, sc));
                        serve = fx.svnserve();
                    }
                }
                Err(e) => panic!("{}\n{e}", describe(&fx, sc)),
            }
            compared += 1;
        }
    }
    eprintln!("{compared} reports compared with svnserve: {outcomes:?}");
    assert!(compared > 3000);
    assert!(
        outcomes.get("drive").copied().unwrap_or(0) > 2500,
        "{outcomes:?}"
    );
    assert!(
        outcomes.get("refused").copied().unwrap_or(0) > 0,
        "{outcomes:?}"
    );
    assert!(
        outcomes.get("aborted").copied().unwrap_or(0) > 20,
        "{outcomes:?}"
    );
    assert!(
        outcomes.get("svnserve crashed").copied().unwrap_or(0) * 200 < compared,
        "{outcomes:?}"
    );
}

/// Status and diff shapes on one fixture, for each pair: no texts for status, the switch
/// semantics of diff.
#[test]
fn status_and_diff_match_svnserve() {
    let fx = Fixture::load("copies");
    let mut serve = fx.svnserve();
    for from in 0..=fx.head {
        for to in 0..=fx.head {
            for cmd in [Cmd::Status, Cmd::Diff] {
                let mut sc = Scenario::update("", "", to, vec![Op::set("", from)]);
                sc.cmd = cmd;
                if cmd == Cmd::Diff {
                    sc.switch_path = Some(String::new());
                    sc.text_deltas = from % 2 == 0;
                    sc.ignore_ancestry = to % 2 == 0;
                }
                if let Err(e) = differential(&fx, &mut serve, &sc) {
                    panic!("{}\n{e}", describe(&fx, &sc));
                }
            }
        }
    }
}

/// A long history (2000 revisions, branches and tags): updates across many revisions, where
/// the revision of each deletion comes from a search through the history.
#[test]
fn long_history_matches_svnserve() {
    let fx = Fixture::load("many-revs");
    let mut serve = fx.svnserve();
    let mut rng = Rng::new(3000 + seed());
    let mut outcomes = std::collections::BTreeMap::new();
    let mut scenarios = vec![
        Scenario::update("", "", fx.head, vec![Op::set("", 0)]),
        Scenario::update("", "", 0, vec![Op::set("", fx.head)]),
        Scenario::update("", "", fx.head, vec![Op::set("", fx.head / 2)]),
    ];
    for _ in 0..rounds(40) {
        scenarios.push(random_scenario(&fx.repo, fx.head, &mut rng));
    }
    for sc in &scenarios {
        match differential(&fx, &mut serve, sc) {
            Ok(kind) => {
                *outcomes.entry(kind).or_insert(0usize) += 1;
                if kind == "svnserve crashed" {
                    serve = fx.svnserve();
                }
            }
            Err(e) => panic!("{}\n{e}", describe(&fx, sc)),
        }
    }
    eprintln!("many-revs: {outcomes:?}");
    assert!(
        outcomes.get("drive").copied().unwrap_or(0) > 20,
        "{outcomes:?}"
    );
}

/// `svn switch` between trunk, branches and tags, for every pair of revisions where both
/// exist: the model says what the working copy becomes, svnserve says how the drive goes.
#[test]
fn switches_between_branches() {
    let mut checked = 0;
    for name in ["copies", "mergeinfo"] {
        let fx = Fixture::load(name);
        let mut serve = fx.svnserve();
        let mut lines: Vec<String> = Vec::new();
        for (path, kind) in harness::nodes_below(&fx.repo, fx.head, "") {
            let depth = path.matches('/').count();
            let line = path == "trunk"
                || (depth == 1 && (path.starts_with("branches/") || path.starts_with("tags/")));
            if line && kind == svelto_core::NodeKind::Dir {
                lines.push(path);
            }
        }
        for from_path in &lines {
            for to_path in &lines {
                for from in 0..=fx.head {
                    for to in (0..=fx.head).step_by(3) {
                        let exists = |p: &str, r| fx.repo.lookup(r, p).ok().flatten().is_some();
                        if !exists(from_path, from) || !exists(to_path, to) {
                            continue;
                        }
                        let mut sc = Scenario::update(from_path, "", to, vec![Op::set("", from)]);
                        sc.cmd = Cmd::Switch;
                        sc.switch_path = Some(to_path.clone());
                        sc.ignore_ancestry = from % 2 == 1;
                        match model_check(&fx.repo, &sc) {
                            Ok((Ours::Drive(_), true)) => {}
                            Ok((other, _)) => panic!("{}\nfailed: {other:?}", describe(&fx, &sc)),
                            Err(e) => panic!("{}\n{e}", describe(&fx, &sc)),
                        }
                        if let Err(e) = differential(&fx, &mut serve, &sc) {
                            panic!("{}\n{e}", describe(&fx, &sc));
                        }
                        checked += 1;
                    }
                }
            }
        }
    }
    eprintln!("{checked} switches checked");
    assert!(checked > 500, "{checked}");
}

/// The files of `fx` in revision `to` that are files at the same path in revision `from`,
/// each with its two texts.
fn files_in_both(
    fx: &Fixture,
    from: u64,
    to: u64,
) -> Vec<(String, svelto_fs::FileText, svelto_fs::FileText)> {
    use svelto_core::NodeKind::File;
    harness::nodes_below(&fx.repo, to, "")
        .into_iter()
        .filter(|(_, kind)| *kind == File)
        .filter_map(|(path, _)| {
            let (_, a) = fx.repo.lookup(from, &path).ok()??;
            let (_, b) = fx.repo.lookup(to, &path).ok()??;
            (a.kind == File).then(|| (path, a.file_text(), b.file_text()))
        })
        .collect()
}

/// Updates across versions stored as a delta against the version the working copy has (one
/// step forward: an edit, a copy's first edit, a replacement's successor) send those stored
/// windows instead of computing a delta; the working copy still comes out as the target.
#[test]
fn stored_deltas_update_working_copies() {
    let mut stored = 0;
    for name in ["basic", "copies", "replace", "mixed", "moves"] {
        let fx = Fixture::load(name);
        for from in 0..fx.head {
            for to in from + 1..=fx.head {
                for (_, a, b) in files_in_both(&fx, from, to) {
                    if a.rep != b.rep {
                        let windows = fx.repo.stored_delta(&b, a.rep).expect("stored delta");
                        stored += usize::from(windows.is_some());
                    }
                }
                let sc = Scenario::update("", "", to, vec![Op::set("", from)]);
                match model_check(&fx.repo, &sc) {
                    Ok((Ours::Drive(_), true)) => {}
                    Ok((other, _)) => panic!("{}\nfailed: {other:?}", describe(&fx, &sc)),
                    Err(e) => panic!("{}\n{e}", describe(&fx, &sc)),
                }
            }
        }
    }
    assert!(
        stored > 20,
        "only {stored} updated files stored as deltas against their base"
    );
}

/// `Ctx::file_delta` (what an HTTP `GET` with a base answers) takes a version stored as a
/// delta against the base as it is stored and computes the others; either way the delta
/// applied to the base's contents gives the target's, for every pair of a file's versions.
#[test]
fn file_delta_turns_any_version_into_any_other() {
    let (mut stored, mut computed) = (0, 0);
    for name in ["basic", "copies", "replace", "mixed", "moves"] {
        let fx = Fixture::load(name);
        let writer = std::sync::Arc::new(svelto_repos::service::WriterSlot::new(
            harness::local(),
            &fx.svelto_path,
        ));
        let ctx = svelto_repos::service::Ctx::new(
            harness::shared(&fx.repo),
            writer,
            None,
            None,
            fx.svelto_path.join("conf/hooks-env"),
        );
        for from in 0..fx.head {
            for to in from + 1..=fx.head {
                for (path, ta, tb) in files_in_both(&fx, from, to) {
                    if fx.repo.stored_delta(&tb, ta.rep).expect("stored").is_some() {
                        stored += 1;
                    } else {
                        computed += 1;
                    }
                    let node = |rev| ctx.node(&path, rev).expect("node").expect("a file");
                    let (a, b) = (node(from), node(to));
                    let windows = ctx.file_delta(&a, &b).expect("file_delta");
                    let base = ctx.read_text(&a).expect("base text");
                    let got = svelto_delta::apply_windows(&windows, &base).expect("apply");
                    assert_eq!(
                        got,
                        *ctx.read_text(&b).expect("target text"),
                        "{name}: {path} r{from} -> r{to}"
                    );
                }
            }
        }
    }
    assert!(
        stored > 20 && computed > 20,
        "stored {stored}, computed {computed}"
    );
}

/// Bytes that do not compress (an archive's, an image's).
fn noise(seed: u64, len: usize) -> Vec<u8> {
    let mut rng = Rng::new(seed);
    (0..len).map(|_| rng.next() as u8).collect()
}

/// A dump (format 2, full texts) of `revisions`, each a list of (action, kind, path,
/// copy source, text).
#[allow(clippy::type_complexity)]
fn dump_of(revisions: &[Vec<(&str, &str, &str, Option<(&str, u64)>, Option<Vec<u8>>)>]) -> Vec<u8> {
    let mut out =
        b"SVN-fs-dump-format-version: 2\n\nUUID: 0b5c1f9e-1e64-4a2b-9d7e-3c51c7d0a001\n\n".to_vec();
    let props = |pairs: &[(&str, &str)]| {
        let mut p = String::new();
        for (k, v) in pairs {
            p += &format!("K {}\n{k}\nV {}\n{v}\n", k.len(), v.len());
        }
        p + "PROPS-END\n"
    };
    let rev0 = props(&[("svn:date", "2026-01-01T00:00:00.000000Z")]);
    out.extend(
        format!(
            "Revision-number: 0\nProp-content-length: {0}\nContent-length: {0}\n\n{rev0}\n",
            rev0.len()
        )
        .bytes(),
    );
    for (i, changes) in revisions.iter().enumerate() {
        let rp = props(&[
            ("svn:author", "harry"),
            ("svn:date", &format!("2026-01-0{}T00:00:00.000000Z", i + 2)),
            ("svn:log", "r"),
        ]);
        out.extend(
            format!(
                "Revision-number: {}\nProp-content-length: {1}\nContent-length: {1}\n\n{rp}\n",
                i + 1,
                rp.len()
            )
            .bytes(),
        );
        for (action, kind, path, copy, text) in changes {
            out.extend(format!("Node-path: {path}\n").bytes());
            if *action != "delete" {
                out.extend(format!("Node-kind: {kind}\n").bytes());
            }
            out.extend(format!("Node-action: {action}\n").bytes());
            if let Some((from, rev)) = copy {
                out.extend(
                    format!("Node-copyfrom-rev: {rev}\nNode-copyfrom-path: {from}\n").bytes(),
                );
            }
            if *action == "delete" {
                out.extend(b"\n\n");
                continue;
            }
            let pr = if *action == "change" {
                String::new()
            } else {
                props(&[])
            };
            let body = text.clone().unwrap_or_default();
            if text.is_some() {
                out.extend(format!("Text-content-length: {}\n", body.len()).bytes());
            }
            out.extend(
                format!(
                    "Prop-content-length: {}\nContent-length: {}\n\n",
                    pr.len(),
                    pr.len() + body.len()
                )
                .bytes(),
            );
            out.extend(pr.bytes());
            out.extend(&body);
            out.extend(b"\n\n");
        }
    }
    out
}

/// Large files that do not compress, changed into unrelated contents (edited, copied and
/// edited, replaced) are sent as new data without reading the version the working copy has;
/// one keeping its first window (an appended archive) still gets a delta. Every update
/// between the revisions gives svnserve's working copy.
#[test]
fn unrelated_binaries_are_sent_as_new_data() {
    let text = |salt: &str| -> Vec<u8> {
        (0..9000)
            .flat_map(|i| format!("{salt} line {i}\n").into_bytes())
            .collect()
    };
    let kept = noise(2, 200_000);
    let dump = dump_of(&[
        vec![
            ("add", "dir", "bin", None, None),
            ("add", "file", "bin/a.pdf", None, Some(noise(1, 300_000))),
            ("add", "file", "bin/b.zip", None, Some(kept.clone())),
            ("add", "file", "bin/c.txt", None, Some(text("one"))),
        ],
        vec![
            ("change", "file", "bin/a.pdf", None, Some(noise(3, 280_000))),
            (
                "change",
                "file",
                "bin/b.zip",
                None,
                Some([&kept[..], &noise(4, 90_000)].concat()),
            ),
            (
                "change",
                "file",
                "bin/c.txt",
                None,
                Some(
                    [
                        &text("one")[..50_000],
                        b"inserted\n",
                        &text("one")[50_000..],
                    ]
                    .concat(),
                ),
            ),
        ],
        vec![
            (
                "add",
                "file",
                "bin/a2.pdf",
                Some(("bin/a.pdf", 2)),
                Some(noise(5, 250_000)),
            ),
            ("delete", "", "bin/b.zip", None, None),
            ("add", "file", "bin/b.zip", None, Some(noise(6, 210_000))),
        ],
        vec![("change", "file", "bin/a.pdf", None, Some(noise(7, 330_000)))],
    ]);
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("binaries.dump");
    std::fs::write(&path, dump).expect("write dump");
    let fx = Fixture::from_dump(&path);
    assert_eq!(fx.head, 4);
    let mut serve = fx.svnserve();
    for from in 0..=fx.head {
        for to in 0..=fx.head {
            let mut sc = Scenario::update("", "", to, vec![Op::set("", from)]);
            for copyfrom in [false, true] {
                sc.send_copyfrom = copyfrom;
                match model_check(&fx.repo, &sc) {
                    Ok((Ours::Drive(_), true)) => {}
                    Ok((other, _)) => panic!("{}\nfailed: {other:?}", describe(&fx, &sc)),
                    Err(e) => panic!("{}\n{e}", describe(&fx, &sc)),
                }
                if let Err(e) = differential(&fx, &mut serve, &sc) {
                    panic!("{}\n{e}", describe(&fx, &sc));
                }
            }
        }
    }
    // What r1 -> r2 sends for each file: how many bytes come from the old version.
    let sc = Scenario::update("", "", 2, vec![Op::set("", 1)]);
    let Ours::Drive(calls) = run_ours(&fx.repo, &sc) else {
        panic!("no drive")
    };
    let mut names = std::collections::HashMap::new();
    let mut streams: std::collections::BTreeMap<String, Vec<u8>> = Default::default();
    for call in &calls {
        match call {
            svelto_repos::editor::Call::OpenFile(path, _, token, _) => {
                names.insert(*token, path.clone());
            }
            svelto_repos::editor::Call::TextdeltaChunk(token, bytes) => {
                streams
                    .entry(names[token].clone())
                    .or_default()
                    .extend(bytes);
            }
            _ => {}
        }
    }
    let copied = |path: &str| -> u64 {
        let windows = svelto_delta::decode_stream(&streams[path], &svelto_delta::Limits::default())
            .expect("svndiff");
        windows
            .iter()
            .flat_map(|w| &w.instructions)
            .map(|i| match i {
                svelto_delta::Instruction::CopySource { len, .. } => *len,
                _ => 0,
            })
            .sum()
    };
    assert_eq!(copied("bin/a.pdf"), 0);
    assert!(copied("bin/b.zip") >= 199_000, "{}", copied("bin/b.zip"));
    assert!(copied("bin/c.txt") > 50_000, "{}", copied("bin/c.txt"));
    assert_eq!(&streams["bin/a.pdf"][..4], b"SVN\x01");

    // A receiver of svndiff2 gets a.pdf's new version as it is stored, LZ4 windows that copy
    // nothing: they give the new version over the one it has.
    let mut options = sc.options();
    options.text.accepts = 2;
    let prepared = svelto_repos::prepare(
        &harness::shared(&fx.repo),
        &options,
        sc.report().expect("report"),
    )
    .expect("prepare");
    let mut rec = svelto_repos::editor::Recorder::default();
    prepared.run(&mut rec).expect("drive");
    let (mut token, mut stream) = (None, Vec::new());
    for call in &rec.calls {
        match call {
            svelto_repos::editor::Call::OpenFile(path, _, t, _) if path == "bin/a.pdf" => {
                token = Some(*t)
            }
            svelto_repos::editor::Call::TextdeltaChunk(t, bytes) if Some(*t) == token => {
                stream.extend(bytes)
            }
            _ => {}
        }
    }
    assert_eq!(&stream[..4], b"SVN\x02", "sent as stored");
    let windows =
        svelto_delta::decode_stream(&stream, &svelto_delta::Limits::default()).expect("svndiff2");
    let old = noise(1, 300_000);
    assert_eq!(
        svelto_delta::apply_windows(&windows, &old).expect("applies"),
        noise(3, 280_000)
    );
}
