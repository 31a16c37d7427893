//! The etcd calls a read-only svn:// command makes on a front end that does not hold the
//! writer lease (issue 35: one fence, a linearizable read of the head, at each request's
//! start gives read-your-writes; more cost a round trip each). Front end B reaches etcd
//! through the relay of tests/cluster/relay.rs, which records each call's first key.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::relay::HoldingRelay;
use crate::{put, svn, Rig};

/// Each svn command's etcd calls through B, by key, printed: exactly one fence (a read of
/// `repos/proj/head`) per svn:// command of its connection after `open` (B's log says how
/// many: `closed after K commands`), none at `open`, and nothing else read from etcd but
/// a deepest-first probe's existence check (B's post-commit scans aside). On 2026-11-30 (svn 1.14.2, one connection per
/// command): info 4 (get-latest-rev, stat, get-latest-rev, get-lock), log -l1 4
/// (get-latest-rev x3, log), cat 3 (get-latest-rev, get-file x2), ls 2, checkout 3
/// (get-latest-rev, check-path, checkout-or-export), update 2. Every command fences, even
/// one given a revision (`rev_or_head`): each is a request that must see every commit
/// acknowledged before it began; one fence per connection would let a long-lived
/// connection miss them.
#[test]
fn fences_per_svn_command_on_a_front_end_without_the_writer_lease() {
    let rig = Rig::prepare(2, &["", "hook-grace = 600\n"]);
    let dir = rig.dir.path().to_owned();
    let member = rig.etcd.endpoint(0);
    let relay = HoldingRelay::start(member.trim_start_matches("http://"), b"\0never\0");
    super::relay::through_relay(&rig.files[1], &relay);
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
        // B's post-commit scans (every 5 s) are no command's.
        let calls: Vec<String> = relay
            .recorded()
            .into_iter()
            .filter(|k| !k.starts_with("/svelto/test/post-commit"))
            .collect();
        let mut by_key: BTreeMap<String, usize> = BTreeMap::new();
        for key in &calls {
            *by_key.entry(key.clone()).or_default() += 1;
        }
        let fences = by_key
            .get("/svelto/test/repos/proj/head")
            .copied()
            .unwrap_or(0);
        let log = std::fs::read_to_string(dir.join("serve-b.log")).expect("B's log");
        let commands: usize = log
            .lines()
            .rev()
            .find_map(|l| l.split_once(": closed after "))
            .and_then(|(_, rest)| rest.split(' ').next()?.parse().ok())
            .unwrap_or_else(|| panic!("no connection closed in B's log:\n{log}"));
        report.push(format!(
            "svn {name}: {fences} fences, {commands} svn:// commands after open; all calls \
             {by_key:?}"
        ));
        assert_eq!(
            fences, commands,
            "svn {name} through B: one fence per svn:// command: {by_key:?}"
        );
        assert!(
            calls
                .iter()
                .all(|k| k == "/svelto/test/repos/proj/head" || k.ends_with("/uuid")),
            "svn {name} through B: {by_key:?}"
        );
    }
    eprintln!("fences through B (no writer lease):\n{}", report.join("\n"));
    drop(servers);
}
