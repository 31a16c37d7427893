//! The request log and metrics over HTTP: for the same client commands Svelto's log names
//! the actions mod_dav_svn puts in Apache's `SVN-ACTION` note (the test's Apache writes
//! them with `CustomLog ... "%t %u %{SVN-ACTION}e" env=SVN-ACTION`), its combined format
//! lists the requests Apache's combined access log lists, and the metrics count them.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use svelto_testkit::{free_port, Pair};

use crate::BULK;

/// The lines of `file` past the first `from` (none when it does not exist yet).
fn lines_from(file: &Path, from: usize) -> Vec<String> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .skip(from)
        .map(str::to_string)
        .collect()
}

/// Waits until neither log grows for a moment (a server writes a request's line once its
/// answer is sent, which may be after the client is done), then returns their line counts.
fn settled(logs: &[&Path]) -> Vec<usize> {
    let count = |f: &&Path| lines_from(f, 0).len();
    let mut last: Vec<usize> = logs.iter().map(count).collect();
    let (mut still, start) = (Instant::now(), Instant::now());
    while still.elapsed() < Duration::from_millis(400) && start.elapsed() < Duration::from_secs(20)
    {
        std::thread::sleep(Duration::from_millis(50));
        let now: Vec<usize> = logs.iter().map(count).collect();
        if now != last {
            (last, still) = (now, Instant::now());
        }
    }
    last
}

/// The action of an Apache `SVN-ACTION` line: `[25/Nov/2026:15:15:47 +0000] USER ACTION`.
fn apache_action(line: &str) -> String {
    let after = line.split_once("] ").map_or(line, |(_, a)| a);
    after
        .split_once(' ')
        .map_or(String::new(), |(_, a)| a.to_string())
}

/// The action of a svnserve-format line: `PID TIME CLIENT USER REPOS ACTION`; None for
/// server events and error lines (Apache's note has no errors).
fn svelto_action(line: &str) -> Option<String> {
    let action = line.splitn(6, ' ').nth(5)?;
    (!action.starts_with("INFO ") && !action.starts_with("ERR")).then(|| action.to_string())
}

fn svelto_log(pair: &Pair) -> PathBuf {
    pair.subject()
        .log_file()
        .expect("Svelto's log file")
        .to_path_buf()
}

fn apache_dir(pair: &Pair) -> PathBuf {
    pair.reference()
        .log_file()
        .and_then(Path::parent)
        .expect("Apache's log directory")
        .to_path_buf()
}

#[test]
fn actions_are_mod_dav_svns() {
    let pair = Pair::http("basic", Path::new(env!("CARGO_BIN_EXE_svelto")));
    // Both let anonymous users commit (Apache with no auth configured does).
    std::fs::write(
        pair.subject_repo().join("conf/svnserve.conf"),
        "[general]\nanon-access = write\n",
    )
    .expect("write svnserve.conf");
    // And revision property changes.
    for repo in [pair.reference_repo(), pair.subject_repo()] {
        let hook = repo.join("hooks/pre-revprop-change");
        std::fs::write(&hook, "#!/bin/sh\nexit 0\n").expect("write the hook");
        svelto_testkit::Run::new("chmod")
            .arg("755")
            .arg(&hook)
            .success();
    }
    let apache_log = apache_dir(&pair).join("svn-action.log");
    let svelto_log = svelto_log(&pair);
    let logs = [apache_log.as_path(), svelto_log.as_path()];
    let s = pair.scope("log");
    let steps: &[&[&str]] = &[
        &["checkout", "{URL}", "wc"],
        &["update", "-r", "2", "wc"],
        &["update", "wc"],
        &["export", "{URL}/trunk", "exported"],
        &[
            "checkout",
            "--depth",
            "immediates",
            "{URL}/trunk",
            "wc-immediates",
        ],
        &["status", "-u", "wc"],
        // Skelta switches and updates are a "diff" and a "status" to mod_dav_svn; with
        // send-all they are what they are.
        &["switch", "--ignore-ancestry", "{URL}/trunk", "wc/branches"],
        &[
            "--config-option",
            BULK,
            "switch",
            "--ignore-ancestry",
            "{URL}/branches",
            "wc/branches",
        ],
        &["--config-option", BULK, "update", "-r", "3", "wc"],
        &["diff", "-r", "1:2", "{URL}"],
        &["log", "-q", "{URL}"],
        &[
            "log",
            "--xml",
            "-v",
            "-g",
            "-l",
            "2",
            "--with-all-revprops",
            "{URL}/trunk",
        ],
        &["blame", "{URL}/trunk/README.txt"],
        &["blame", "-g", "{URL}/trunk/README.txt"],
        &["cat", "{URL}/trunk/README.txt"],
        &["ls", "-R", "-v", "{URL}"],
        &["info", "-R", "{URL}/trunk"],
        &["proplist", "-v", "-R", "{URL}/trunk"],
        &[
            "propget",
            "--show-inherited-props",
            "svn:ignore",
            "{URL}/trunk",
        ],
        &["copy", "-m", "branch", "{URL}/trunk", "{URL}/branches/b"],
        &["mergeinfo", "{URL}/trunk", "{URL}/branches/b"],
        &[
            "propset",
            "--revprop",
            "-r",
            "1",
            "svn:log",
            "changed",
            "{URL}",
        ],
        &["mkdir", "-m", "made", "{URL}/new-dir"],
        &["update", "wc"],
    ];
    let mut start = settled(&logs);
    let mut seen = 0;
    for args in steps {
        let [a, b] = s.run_both("svn", args);
        assert!(a.success() && b.success(), "svn {args:?}:\n{a}\n{b}");
        let end = settled(&logs);
        let mut apache: Vec<String> = lines_from(&apache_log, start[0])
            .iter()
            .take(end[0] - start[0])
            .map(|l| apache_action(l))
            .collect();
        let mut svelto: Vec<String> = lines_from(&svelto_log, start[1])
            .iter()
            .take(end[1] - start[1])
            .filter_map(|l| svelto_action(l))
            .collect();
        // Requests a client sends at once may finish in another order.
        apache.sort();
        svelto.sort();
        assert_eq!(
            apache, svelto,
            "svn {args:?}: Apache's SVN-ACTION lines, then Svelto's log"
        );
        seen += apache.len();
        start = end;
    }
    // Every kind of read and the writes were logged (not two empty logs).
    let all = lines_from(&svelto_log, 0).join("\n");
    for word in [
        "checkout-or-export /",
        "status /",
        "switch /trunk /branches@",
        "update / r3",
        "diff /",
        "log (/trunk)",
        "get-file-revs /trunk/README.txt",
        "list /",
        "get-inherited-props /trunk",
        "get-mergeinfo (/trunk)",
        "change-rev-prop r1 svn:log",
        "commit r",
    ] {
        assert!(all.contains(word), "no '{word}' in Svelto's log:\n{all}");
    }
    assert!(seen >= 20, "only {seen} actions logged");
}

/// A combined-format line's fields: client, user, time, request line, status, bytes,
/// referer, user agent.
fn combined_fields(line: &str) -> Option<[String; 8]> {
    let (client, rest) = line.split_once(" - ")?;
    let (user, rest) = rest.split_once(" [")?;
    let (time, rest) = rest.split_once("] \"")?;
    let (request, rest) = rest.split_once("\" ")?;
    let (status, rest) = rest.split_once(' ')?;
    let (bytes, rest) = rest.split_once(" \"")?;
    let (referer, rest) = rest.split_once("\" \"")?;
    let agent = rest.strip_suffix('"')?;
    Some([client, user, time, request, status, bytes, referer, agent].map(str::to_string))
}

fn scrape(addr: &str) -> String {
    let (status, text) = crate::raw_request(addr, "GET", "/metrics", &[], b"");
    assert_eq!(status, 200, "{text}");
    text
}

/// The value of the sample `name` (with its labels) in a scrape, 0 when absent.
fn metric(text: &str, name: &str) -> u64 {
    svelto_testkit::metric_sum(text, name).unwrap_or(0)
}

#[test]
fn combined_format_lists_apaches_requests_and_metrics_count_them() {
    let metrics = format!("127.0.0.1:{}", free_port());
    let pair = Pair::http_with(
        "basic",
        Path::new(env!("CARGO_BIN_EXE_svelto")),
        "",
        &["--log-format", "combined", "--metrics-listen", &metrics],
        None,
    );
    let access = apache_dir(&pair).join("access.log");
    let svelto_log = svelto_log(&pair);
    let logs = [access.as_path(), svelto_log.as_path()];
    let before = scrape(&metrics);
    let start = settled(&logs);
    let s = pair.scope("combined");
    s.both(&["checkout", "{URL}/trunk", "wc"]);
    s.both(&["log", "-v", "{URL}"]);
    s.both_fails(&["cat", "{URL}/trunk/no-such-file"]);
    let end = settled(&logs);
    let parsed = |file: &Path, i: usize| -> Vec<[String; 8]> {
        lines_from(file, start[i])
            .iter()
            .take(end[i] - start[i])
            .filter(|l| !l.contains(" INFO "))
            .map(|l| combined_fields(l).unwrap_or_else(|| panic!("not a combined line: {l}")))
            .collect()
    };
    let (apache, svelto) = (parsed(&access, 0), parsed(&svelto_log, 1));
    for f in &svelto {
        assert_eq!(f[0], "127.0.0.1", "{f:?}");
        assert_eq!(f[1], "-", "{f:?}");
        // 25/Nov/2026:16:01:33 +0000
        let t = f[2].as_bytes();
        assert!(
            t.len() == 26
                && t[2] == b'/'
                && t[6] == b'/'
                && t[11] == b':'
                && f[2].ends_with(" +0000"),
            "{f:?}"
        );
        assert!(f[3].ends_with(" HTTP/1.1"), "{f:?}");
        assert!(f[5] == "-" || f[5].parse::<u64>().is_ok(), "{f:?}");
        assert!(f[7].starts_with("SVN/1.14"), "{f:?}");
    }
    // The same requests with the same answers: method, target and status (sizes differ:
    // the servers' XML is not byte for byte the same).
    let requests = |v: &[[String; 8]]| {
        let mut r: Vec<String> = v.iter().map(|f| format!("{} {}", f[3], f[4])).collect();
        r.sort();
        r
    };
    assert_eq!(
        requests(&apache),
        requests(&svelto),
        "Apache's access log, then Svelto's"
    );
    assert!(svelto
        .iter()
        .any(|f| f[3].starts_with("REPORT ") && f[4] == "200"));
    assert!(svelto.iter().any(|f| f[4] == "404"));
    let after = scrape(&metrics);
    for (name, at_least) in [
        (
            "svelto_requests_total{protocol=\"http\",command=\"http-update-report\"}",
            1,
        ),
        ("svelto_connections_total{protocol=\"http\"}", 1),
        ("svelto_requests_total{command=\"http-log-report\"}", 1),
        ("svelto_requests_total{command=\"http-propfind\"}", 1),
        ("svelto_requests_total{command=\"http-options\"}", 3),
        ("svelto_request_errors_total{command=\"http-get\"}", 0),
    ] {
        let moved = metric(&after, name) - metric(&before, name);
        assert!(moved >= at_least, "{name} went up by {moved}:\n{after}");
    }
    let gets = |t: &str| metric(t, "svelto_requests_total{command=\"http-get\"}");
    let get_errors = |t: &str| {
        metric(t, "svelto_request_errors_total{command=\"http-get\"}")
            + metric(t, "svelto_request_errors_total{command=\"http-propfind\"}")
    };
    assert!(gets(&after) > gets(&before), "{after}");
    assert!(
        get_errors(&after) > get_errors(&before),
        "the 404 is counted:\n{after}"
    );
    assert!(metric(&after, "svelto_sent_bytes_total") > metric(&before, "svelto_sent_bytes_total"));
}
