//! The etcd calls a read-only svn:// command makes on a front end that does not hold the
//! writer lease (issue 35: one fence, a linearizable read of the head, at each request's
//! start gives read-your-writes; more cost a round trip each). Front end B reaches etcd
//! through the relay of tests/cluster/relay.rs, which records each call's first key.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::relay::HoldingRelay;
use crate::{put, svn, Rig};

/// Each svn command's etcd calls through B, by key: at least one fence (a read of
/// `repos/proj/head`) per command, the counts printed. On 2026-11-30 (svn 1.14.2, one
/// connection per command): info 4, log -l1 4, cat 3, ls 2, checkout 3, update 2: one at
/// `open`, one per `get-latest-rev`, one for `get-lock`'s lock table, one in checkout's
/// `check-path`/`checkout-or-export` and in cat's `get-file`s; commands given a revision
/// (`stat /@3`, `log r3:0`, `list r3`, `update r3`) make none. Not yet cut to one per
/// connection: whether a later svn:// command of a connection may skip its fence is the
/// guarantee's question (docs/cluster.md: "each request").
#[test]
fn fences_per_svn_command_on_a_front_end_without_the_writer_lease() {
    let rig = Rig::prepare(2, &["", "hook-grace = 600\n"]);
    let dir = rig.dir.path().to_owned();
    let member = rig.etcd.endpoint(0);
    let relay = HoldingRelay::start(member.trim_start_matches("http://"), b"\0never\0");
    let file = std::fs::read_to_string(&rig.files[1]).expect("B's cluster file");
    let file: String = file
        .lines()
        .map(|l| {
            if l.starts_with("etcd = ") {
                format!("etcd = {}\n", relay.endpoint())
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    std::fs::write(&rig.files[1], file).expect("B's cluster file");
    let servers = vec![rig.serve(0), rig.serve(1)];
    for n in 1..=3 {
        put(&dir, &servers[0].url("proj"), "f.txt", &format!("{n}\n"));
    }
    let url = servers[1].url("proj");
    // Warm: B's cache holds r3.
    svn(&["info", &url]);
    let wc = dir.join("wc");
    let wc = wc.to_str().expect("UTF-8");
    let commands: Vec<(&str, Vec<String>)> = vec![
        ("info", vec!["info".into(), url.clone()]),
        ("log -l1", vec!["log".into(), "-l1".into(), url.clone()]),
        ("cat", vec!["cat".into(), format!("{url}/f.txt")]),
        ("ls", vec!["ls".into(), url.clone()]),
        ("checkout", vec!["checkout".into(), url.clone(), wc.into()]),
        ("update", vec!["update".into(), wc.into()]),
    ];
    let mut report = Vec::new();
    for (name, args) in &commands {
        relay.record();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        svn(&args);
        std::thread::sleep(Duration::from_millis(100));
        let calls = relay.recorded();
        let mut by_key: BTreeMap<String, usize> = BTreeMap::new();
        for key in &calls {
            *by_key.entry(key.clone()).or_default() += 1;
        }
        let fences = by_key
            .get("/svelto/test/repos/proj/head")
            .copied()
            .unwrap_or(0);
        report.push(format!("svn {name}: {fences} fences; all calls {by_key:?}"));
        assert!(fences >= 1, "svn {name} through B read no head: {by_key:?}");
    }
    eprintln!("fences through B (no writer lease):\n{}", report.join("\n"));
    drop(servers);
}
