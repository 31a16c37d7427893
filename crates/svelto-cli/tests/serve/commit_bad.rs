//! Bad commits over raw svn://: the same malformed or lying editor drives sent to svnserve
//! and to Svelto. Both must refuse them with the same error codes, leave the repository as
//! it was, and go on serving.

use crate::commit::{mask_txn_names, writable_pair, Script};
use crate::raw::{string, Conn, Item};
use std::net::SocketAddr;

/// A short text as an svndiff0 stream of one window of new data (< 64 bytes).
fn fulltext_delta(text: &[u8]) -> Vec<u8> {
    assert!(text.len() < 64);
    let n = text.len() as u8;
    let mut d = b"SVN\0".to_vec();
    d.extend_from_slice(&[0, 0, n, 1, n, 0x80 | n]);
    d.extend_from_slice(text);
    d
}

fn md5_hex(text: &[u8]) -> String {
    let out = svelto_testkit::Run::tool("md5sum")
        .stdin_bytes(text)
        .success();
    out.stdout_text()[..32].to_string()
}

/// What one drive did: the items the server sent after `( success ( ) )` to the commit.
struct Answer {
    items: Vec<Item>,
}

/// Opens a session on `url`, sends `commit` with `log`, reads the slot and the commit's
/// acceptance, then sends `drive` (editor commands), `close-edit` unless the drive ends
/// itself, and reads the answer: a failure (then sends `abort-edit`) or the success chain.
fn commit(addr: SocketAddr, url: &str, revprops: &[(&str, &[u8])], drive: &[Vec<u8>]) -> Answer {
    let mut conn = Conn::session(addr, url);
    let mut cmd = b"( commit ( 0: ( ) false ( ".to_vec();
    for (k, v) in revprops {
        cmd.extend_from_slice(b"( ");
        cmd.extend_from_slice(&string(k.as_bytes()));
        cmd.extend_from_slice(&string(v));
        cmd.extend_from_slice(b") ");
    }
    cmd.extend_from_slice(b") ) ) ");
    conn.send(&cmd);
    let slot = conn.item();
    if slot.is_failure() {
        return Answer { items: vec![slot] };
    }
    let accepted = conn.item();
    if accepted.is_failure() {
        return Answer {
            items: vec![accepted],
        };
    }
    for c in drive {
        conn.send_lossy(c);
    }
    conn.send_lossy(b"( close-edit ( ) ) ");
    let Ok(first) = conn.read_item() else {
        // The server ended the connection (a broken drive).
        return Answer { items: vec![] };
    };
    let mut items = vec![first.clone()];
    if first.is_failure() {
        conn.send_lossy(b"( abort-edit ( ) ) ");
    } else {
        items.push(conn.item());
        items.push(conn.item());
    }
    Answer { items }
}

/// What a case is called, the revision properties its commit asks for, its editor commands.
type Case<'a> = (&'a str, Vec<(&'a str, &'a [u8])>, Vec<Vec<u8>>);

fn cmd(word: &str, params: &[&[u8]]) -> Vec<u8> {
    let mut c = format!("( {word} ( ").into_bytes();
    for p in params {
        c.extend_from_slice(p);
    }
    c.extend_from_slice(b") ) ");
    c
}

fn s(b: &[u8]) -> Vec<u8> {
    string(b)
}

#[test]
fn bad_drives_are_refused_alike_and_change_nothing() {
    let pair = writable_pair("basic");
    let mut script = Script::new(&pair);
    let _scope = pair.scope("bad");
    script.svn("bad", &["mkdir", "-m", "dir", "{URL}/d"]);
    script.write("bad/f", "base\n");
    script.svn("bad", &["import", "-m", "file", "f", "{URL}/d/f"]);
    let head = script.head("bad");
    let base_md5 = md5_hex(b"base\n");
    let h = format!("( {head} ) ");
    let text = b"new text\n";
    let delta = s(&fulltext_delta(text));
    let good_md5 = md5_hex(text);
    let open = |extra: Vec<Vec<u8>>| -> Vec<Vec<u8>> {
        let mut v = vec![
            cmd("open-root", &[h.as_bytes(), &s(b"d0")]),
            cmd("open-dir", &[&s(b"d"), &s(b"d0"), &s(b"d1"), h.as_bytes()]),
        ];
        v.extend(extra);
        v
    };
    let cases: Vec<Case> = vec![
        (
            "result checksum mismatch",
            vec![],
            open(vec![
                cmd("add-file", &[&s(b"d/new"), &s(b"d1"), &s(b"c2"), b"( ) "]),
                cmd("apply-textdelta", &[&s(b"c2"), b"( ) "]),
                cmd("textdelta-chunk", &[&s(b"c2"), &delta]),
                cmd("textdelta-end", &[&s(b"c2")]),
                cmd(
                    "close-file",
                    &[&s(b"c2"), b"( 32:0123456789abcdef0123456789abcdef ) "],
                ),
            ]),
        ),
        (
            "base checksum mismatch",
            vec![],
            open(vec![
                cmd(
                    "open-file",
                    &[&s(b"d/f"), &s(b"d1"), &s(b"c2"), h.as_bytes()],
                ),
                cmd(
                    "apply-textdelta",
                    &[&s(b"c2"), b"( 32:ffffffffffffffffffffffffffffffff ) "],
                ),
                cmd("textdelta-chunk", &[&s(b"c2"), &delta]),
                cmd("textdelta-end", &[&s(b"c2")]),
                cmd(
                    "close-file",
                    &[&s(b"c2"), format!("( 32:{good_md5} ) ").as_bytes()],
                ),
            ]),
        ),
        (
            "garbage delta",
            vec![],
            open(vec![
                cmd(
                    "open-file",
                    &[&s(b"d/f"), &s(b"d1"), &s(b"c2"), h.as_bytes()],
                ),
                cmd(
                    "apply-textdelta",
                    &[&s(b"c2"), format!("( 32:{base_md5} ) ").as_bytes()],
                ),
                cmd(
                    "textdelta-chunk",
                    &[&s(b"c2"), &s(b"SVN\0\x00\x00\x7f\x7f\x7f")],
                ),
                cmd("textdelta-chunk", &[&s(b"c2"), &s(b"not a window at all")]),
                cmd("textdelta-end", &[&s(b"c2")]),
                cmd("close-file", &[&s(b"c2"), b"( ) "]),
            ]),
        ),
        (
            "copy from a path that does not exist",
            vec![],
            open(vec![cmd(
                "add-dir",
                &[
                    &s(b"d/copy"),
                    &s(b"d1"),
                    &s(b"d2"),
                    format!("( {} {head} ) ", String::from_utf8_lossy(&s(b"{URL}/nope")))
                        .as_bytes(),
                ],
            )]),
        ),
        (
            "delete of a path that is not there",
            vec![],
            open(vec![cmd(
                "delete-entry",
                &[&s(b"d/ghost"), h.as_bytes(), &s(b"d1")],
            )]),
        ),
        (
            "open-root above the youngest revision",
            vec![],
            vec![cmd(
                "open-root",
                &[format!("( {} ) ", head + 5).as_bytes(), &s(b"d0")],
            )],
        ),
        (
            "a control character in a name",
            vec![],
            open(vec![cmd(
                "add-dir",
                &[&s(b"d/bad\x01name"), &s(b"d1"), &s(b"d2"), b"( ) "],
            )]),
        ),
        (
            "a non-LF svn:log",
            vec![("svn:log", b"line one\r\nline two")],
            open(vec![]),
        ),
        (
            "a non-UTF-8 svn:eol-style",
            vec![],
            open(vec![
                cmd(
                    "open-file",
                    &[&s(b"d/f"), &s(b"d1"), &s(b"c2"), h.as_bytes()],
                ),
                cmd(
                    "change-file-prop",
                    &[
                        &s(b"c2"),
                        &s(b"svn:eol-style"),
                        b"( ",
                        &s(b"\xff\xfe"),
                        b") ",
                    ],
                ),
                cmd("close-file", &[&s(b"c2"), b"( ) "]),
            ]),
        ),
        (
            "an out-of-date file",
            vec![],
            open(vec![cmd(
                "open-file",
                &[&s(b"d/f"), &s(b"d1"), &s(b"c2"), b"( 1 ) "],
            )]),
        ),
        ("close-edit without open-root", vec![], vec![]),
        (
            "an unknown token",
            vec![],
            open(vec![cmd(
                "open-file",
                &[&s(b"d/f"), &s(b"zz"), &s(b"c2"), h.as_bytes()],
            )]),
        ),
    ];
    let servers = [pair.reference(), pair.subject()];
    let labels = pair.labels();
    for (what, revprops, drive) in &cases {
        let answers = [0, 1].map(|i| {
            let url = pair.substitute(i, std::path::Path::new("/"), "{URL}");
            let drive: Vec<Vec<u8>> = drive
                .iter()
                .map(|c| {
                    let t = String::from_utf8_lossy(c).into_owned();
                    if t.contains("{URL}/nope") {
                        let with = format!("{url}/nope");
                        let old = String::from_utf8_lossy(&s(b"{URL}/nope")).into_owned();
                        t.replace(&old, &String::from_utf8_lossy(&s(with.as_bytes())))
                            .into_bytes()
                    } else {
                        c.clone()
                    }
                })
                .collect();
            commit(servers[i].addr(), &url, revprops, &drive)
        });
        let codes = answers
            .each_ref()
            .map(|a| a.items.first().map(Item::error_codes).unwrap_or_default());
        let closed = answers.each_ref().map(|a| a.items.is_empty());
        assert_eq!(
            closed[0], closed[1],
            "{what}: one server closed the connection, the other did not: {:?} / {:?}",
            answers[0].items, answers[1].items
        );
        assert!(
            closed[0] || !codes[0].is_empty(),
            "{what}: svnserve accepted the commit: {:?}",
            answers[0].items
        );
        let firsts = answers.each_ref().map(|a| {
            let text = format!("{:?}", a.items.first());
            String::from_utf8_lossy(&mask_txn_names(text.as_bytes())).into_owned()
        });
        eprintln!(
            "{what}:\n  {}: {}\n  {}: {}",
            labels[0], firsts[0], labels[1], firsts[1]
        );
        assert_eq!(
            codes[0].first(),
            codes[1].first(),
            "{what}: {} answered {}\n{} answered {}",
            labels[0],
            firsts[0],
            labels[1],
            firsts[1]
        );
        // The same words too, but for the delta decoder's (ours says where it broke).
        if *what != "garbage delta" {
            assert_eq!(firsts[0], firsts[1], "{what}: the messages differ");
        }
        // Both still serve, and nothing was committed.
        assert_eq!(script.head("bad"), head, "{what}: a revision appeared");
    }
    // A good commit still works afterwards, on both.
    for i in 0..2 {
        let url = pair.substitute(i, std::path::Path::new("/"), "{URL}");
        let drive = open(vec![
            cmd("add-file", &[&s(b"d/new"), &s(b"d1"), &s(b"c2"), b"( ) "]),
            cmd("apply-textdelta", &[&s(b"c2"), b"( ) "]),
            cmd("textdelta-chunk", &[&s(b"c2"), &delta]),
            cmd("textdelta-end", &[&s(b"c2")]),
            cmd(
                "close-file",
                &[&s(b"c2"), format!("( 32:{good_md5} ) ").as_bytes()],
            ),
            cmd("close-dir", &[&s(b"d1")]),
            cmd("close-dir", &[&s(b"d0")]),
        ]);
        let a = commit(
            servers[i].addr(),
            &url,
            &[("svn:log", b"good"), ("svn:author", b"mallory")],
            &drive,
        );
        assert!(a.items[0].is_success(), "{}: {:?}", labels[i], a.items);
    }
    script.svn("bad", &["cat", "{URL}/d/new"]);
    script.assert_same_repositories();
    let txns = pair.subject_repo().join("db").join("txns");
    let left: Vec<_> = std::fs::read_dir(&txns)
        .map(|d| d.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "files left in {txns:?}: {left:?}");
}

#[test]
fn a_client_that_vanishes_mid_commit_leaves_no_trace() {
    let pair = writable_pair("basic");
    let mut script = Script::new(&pair);
    let _scope = pair.scope("vanish");
    let head = script.head("vanish");
    let h = format!("( {head} ) ");
    for i in 0..2 {
        let server = [pair.reference(), pair.subject()][i];
        let url = pair.substitute(i, std::path::Path::new("/"), "{URL}");
        let mut conn = Conn::session(server.addr(), &url);
        conn.send(b"( commit ( 0: ( ) false ( ( 7:svn:log 1:x ) ) ) ) ");
        assert!(conn.item().is_success());
        assert!(conn.item().is_success());
        conn.send(&cmd("open-root", &[h.as_bytes(), &s(b"d0")]));
        conn.send(&cmd(
            "add-dir",
            &[&s(b"half"), &s(b"d0"), &s(b"d1"), b"( ) "],
        ));
        conn.send(&cmd(
            "add-file",
            &[&s(b"half/f"), &s(b"d1"), &s(b"c2"), b"( ) "],
        ));
        conn.send(&cmd("apply-textdelta", &[&s(b"c2"), b"( ) "]));
        drop(conn);
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert_eq!(script.head("vanish"), head);
    script.svn("vanish", &["mkdir", "-m", "after", "{URL}/after"]);
    script.assert_same_repositories();
}
