//! The generated dumpfile is well formed (lengths and checksums agree with the bytes),
//! and `svnadmin load` followed by `svnadmin dump` gives back the same bytes.
//!
//! The second test needs Subversion's `svnadmin` and fails, loudly, without it.

use std::io::Write;
use std::process::{Command, Stdio};

use md5::{Digest, Md5};
use sha1::Sha1;
use svelto_bench::gen::{generate, Config};

fn tiny() -> Vec<u8> {
    let cfg = Config::new(11, 160, 220);
    let (_, dump) = generate(&cfg, Vec::new()).expect("writing to memory cannot fail");
    dump
}

fn line(buf: &[u8], pos: &mut usize) -> String {
    let end = buf[*pos..]
        .iter()
        .position(|&b| b == b'\n')
        .map(|i| *pos + i)
        .expect("a line ends with a newline");
    let s = String::from_utf8(buf[*pos..end].to_vec()).expect("headers are UTF-8");
    *pos = end + 1;
    s
}

/// Walks every record, checking lengths, the property block terminator and the text
/// checksums. Returns (revision records, node records).
fn check_records(buf: &[u8]) -> (usize, usize) {
    let mut pos = 0;
    assert_eq!(line(buf, &mut pos), "SVN-fs-dump-format-version: 2");
    assert_eq!(line(buf, &mut pos), "");
    assert!(line(buf, &mut pos).starts_with("UUID: "));
    assert_eq!(line(buf, &mut pos), "");
    let (mut revs, mut nodes) = (0, 0);
    while pos < buf.len() {
        let mut headers = Vec::new();
        loop {
            let l = line(buf, &mut pos);
            if l.is_empty() {
                break;
            }
            let (k, v) = l.split_once(": ").expect("a header is 'Key: value'");
            headers.push((k.to_owned(), v.to_owned()));
        }
        let get = |k: &str| headers.iter().find(|(h, _)| h == k).map(|(_, v)| v.clone());
        let num = |k: &str| get(k).map(|v| v.parse::<usize>().expect("a length"));
        let prop_len = num("Prop-content-length").unwrap_or(0);
        let text_len = num("Text-content-length");
        let content = num("Content-length");
        assert_eq!(
            content.unwrap_or(0),
            prop_len + text_len.unwrap_or(0),
            "{headers:?}"
        );
        if prop_len > 0 {
            assert!(buf[pos..pos + prop_len].ends_with(b"PROPS-END\n"));
        }
        if let Some(t) = text_len {
            let text = &buf[pos + prop_len..pos + prop_len + t];
            assert_eq!(
                get("Text-content-md5"),
                Some(hex::encode(Md5::digest(text)))
            );
            assert_eq!(
                get("Text-content-sha1"),
                Some(hex::encode(Sha1::digest(text)))
            );
        }
        pos += content.unwrap_or(0);
        if headers[0].0 == "Revision-number" {
            revs += 1;
            assert_eq!(buf[pos], b'\n');
            pos += 1;
        } else {
            assert_eq!(headers[0].0, "Node-path");
            nodes += 1;
            // One blank line after a node record, two after one with content; a
            // delete that starts a replace has none.
            while pos < buf.len() && buf[pos] == b'\n' {
                pos += 1;
            }
        }
    }
    (revs, nodes)
}

#[test]
fn records_agree_with_their_lengths_and_checksums() {
    let (revs, nodes) = check_records(&tiny());
    assert_eq!(revs, 161);
    assert!(nodes > 300, "{nodes} node records");
}

fn count(hay: &[u8], needle: &str) -> usize {
    hay.windows(needle.len())
        .filter(|w| *w == needle.as_bytes())
        .count()
}

#[test]
fn even_a_tiny_history_has_every_kind_of_change() {
    let dump = tiny();
    for needle in [
        "Node-action: replace\n",
        "Node-action: delete\n\nNode-path: ",
        "Node-action: delete\n\n\n",
        "Node-kind: dir\nNode-action: add\nNode-copyfrom-rev: ",
        "Node-kind: file\nNode-action: add\nNode-copyfrom-rev: ",
        "Text-copy-source-sha1: ",
        "Node-kind: dir\nNode-action: change\n",
        "K 13\nsvn:mergeinfo\n",
        "K 12\nsvn:keywords\n",
        "K 13\nsvn:eol-style\n",
        "K 13\nsvn:mime-type\n",
        "K 10\nsvn:ignore\n",
        "Node-path: tags/",
        "Node-path: branches/",
        "Node-path: trunk/ChangeLog\n",
        " Guide.txt\n",
        "résumé.txt\n",
    ] {
        assert!(count(&dump, needle) > 0, "no {needle:?} in the dump");
    }
}

fn svnadmin(args: &[&str], input: Option<&[u8]>) -> Vec<u8> {
    let mut child = Command::new("svnadmin")
        .args(args)
        .env("LANG", "C")
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("svnadmin is required for this test (apt-get install subversion)");
    let writer = input.map(|bytes| {
        let mut stdin = child.stdin.take().expect("stdin is piped");
        let bytes = bytes.to_vec();
        std::thread::spawn(move || stdin.write_all(&bytes))
    });
    let out = child.wait_with_output().expect("svnadmin runs");
    if let Some(w) = writer {
        w.join()
            .expect("the writer thread does not panic")
            .expect("svnadmin reads its input");
    }
    assert!(
        out.status.success(),
        "svnadmin {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

#[test]
fn svnadmin_load_then_dump_gives_back_the_same_bytes() {
    let dump = tiny();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let repo = dir.path().join("repo");
    let repo = repo.to_str().expect("temporary paths are UTF-8");
    svnadmin(&["create", "--compatible-version", "1.14", repo], None);
    svnadmin(&["load", "-q", "--no-flush-to-disk", repo], Some(&dump));
    svnadmin(&["verify", "-q", repo], None);
    let again = svnadmin(&["dump", "-q", repo], None);
    if again != dump {
        let at = again
            .iter()
            .zip(&dump)
            .position(|(a, b)| a != b)
            .unwrap_or(again.len().min(dump.len()));
        let from = at.saturating_sub(200);
        panic!(
            "dumps differ at byte {at}\n--- generated:\n{}\n--- svnadmin dump:\n{}",
            String::from_utf8_lossy(&dump[from..(at + 200).min(dump.len())]),
            String::from_utf8_lossy(&again[from..(at + 200).min(again.len())])
        );
    }
}
