//! The update-family commands and reports sent to the real `svnserve -i` exactly as the 1.14
//! client sends them (through `svelto_testkit::svnserve_client`), and the editor drive it
//! answers with, as the same `Call`s our drive records.

use svelto_testkit::svnserve_client::{is_success, SvnserveClient};
use svelto_wire::Item;

use crate::harness::{Cmd, Op, Scenario};

pub use svelto_testkit::svnserve_client::DriveOutcome as Outcome;

fn s(text: &str) -> Item {
    Item::string(text.as_bytes())
}

fn n(value: u64) -> Item {
    Item::Number(value)
}

fn w(word: &str) -> Item {
    Item::word(word)
}

fn l(items: Vec<Item>) -> Item {
    Item::list(items)
}

fn cmd(name: &str, params: Vec<Item>) -> Item {
    l(vec![w(name), l(params)])
}

/// Moves the session to `anchor`.
pub fn reparent(serve: &mut SvnserveClient, anchor: &str) {
    let url = serve.url(anchor);
    if let Err(e) = serve.call("reparent", vec![s(&url)]) {
        panic!("reparent {anchor}: {e:?}");
    }
}

/// Sends `sc`'s command and report, and records what svnserve answers.
pub fn run(serve: &mut SvnserveClient, sc: &Scenario) -> Outcome {
    reparent(serve, &sc.anchor);
    let rev = l(vec![n(sc.target_rev)]);
    let depth = w(sc.depth.as_str());
    let command = match sc.cmd {
        Cmd::Update => cmd(
            "update",
            vec![
                rev,
                s(&sc.target),
                Item::bool(true),
                depth,
                Item::bool(sc.send_copyfrom),
                Item::bool(sc.ignore_ancestry),
            ],
        ),
        Cmd::Switch => cmd(
            "switch",
            vec![
                rev,
                s(&sc.target),
                Item::bool(true),
                s(&serve.url(sc.switch_path.as_deref().unwrap_or_default())),
                depth,
                Item::bool(sc.send_copyfrom),
                Item::bool(sc.ignore_ancestry),
            ],
        ),
        Cmd::Status => cmd("status", vec![s(&sc.target), Item::bool(true), rev, depth]),
        Cmd::Diff => cmd(
            "diff",
            vec![
                rev,
                s(&sc.target),
                Item::bool(true),
                Item::bool(sc.ignore_ancestry),
                s(&serve.url(sc.switch_path.as_deref().unwrap_or_default())),
                Item::bool(sc.text_deltas),
                depth,
            ],
        ),
    };
    serve.send(&command);
    let slot = serve.read();
    assert!(is_success(&slot), "auth slot: {slot:?}");
    let mut report = Vec::new();
    for op in &sc.ops {
        let lock = |t: &Option<String>| l(t.iter().map(|t| s(t)).collect());
        report.push(match op {
            Op::Set {
                path,
                rev,
                depth,
                start_empty,
                lock_token,
            } => cmd(
                "set-path",
                vec![
                    s(path),
                    n(*rev),
                    Item::bool(*start_empty),
                    lock(lock_token),
                    w(depth.as_str()),
                ],
            ),
            Op::Link {
                path,
                url_path,
                rev,
                depth,
                start_empty,
            } => cmd(
                "link-path",
                vec![
                    s(path),
                    s(&serve.url(url_path)),
                    n(*rev),
                    Item::bool(*start_empty),
                    l(vec![]),
                    w(depth.as_str()),
                ],
            ),
            Op::Delete { path } => cmd("delete-path", vec![s(path)]),
        });
    }
    report.push(cmd("finish-report", vec![]));
    if !serve.try_send(&report) {
        return Outcome::Crashed;
    }
    match serve.try_read() {
        Some(slot) => assert!(is_success(&slot), "auth slot: {slot:?}"),
        None => return Outcome::Crashed,
    }
    serve.read_drive()
}
