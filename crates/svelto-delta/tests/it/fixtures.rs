//! svndiff made by stock Subversion 1.14 (`tests/data/make.sh`): decode it, apply it, and check
//! the result against the checksums Subversion wrote beside it.

use std::collections::HashMap;
use std::path::PathBuf;

use svelto_delta::{apply_windows, decode_stream, parse_window, Limits, StreamDecoder, Window};

use crate::common::sha1_hex;

fn data(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("fixture {}: {e}", path.display()))
}

/// One record of a dump file: its headers and its text content.
pub struct Record<'a> {
    pub headers: HashMap<String, String>,
    pub text: Option<&'a [u8]>,
}

/// Splits a dump file into records (enough of the dump format for these tests).
pub fn dump_records(dump: &[u8]) -> Vec<Record<'_>> {
    let mut records = Vec::new();
    let mut pos = 0;
    while pos < dump.len() {
        if dump[pos] == b'\n' {
            pos += 1;
            continue;
        }
        let mut headers = HashMap::new();
        loop {
            let end = pos
                + dump[pos..]
                    .iter()
                    .position(|&b| b == b'\n')
                    .expect("header line ends");
            let line = std::str::from_utf8(&dump[pos..end]).expect("headers are UTF-8");
            pos = end + 1;
            if line.is_empty() {
                break;
            }
            let (key, value) = line.split_once(": ").expect("header is key: value");
            headers.insert(key.to_owned(), value.to_owned());
        }
        let number = |key: &str| {
            headers
                .get(key)
                .map_or(0, |v| v.parse::<usize>().expect("number"))
        };
        let (props, text, content) = (
            number("Prop-content-length"),
            headers
                .get("Text-content-length")
                .map(|v| v.parse::<usize>().expect("number")),
            number("Content-length"),
        );
        let text_bytes = text.map(|len| &dump[pos + props..pos + props + len]);
        pos += content;
        records.push(Record {
            headers,
            text: text_bytes,
        });
    }
    records
}

#[test]
fn svnadmin_dump_deltas_svndiff0() {
    let dump = data("dump-deltas.dump");
    let mut files: HashMap<String, Vec<u8>> = HashMap::new();
    let mut checked = 0;
    let mut most_windows = 0;
    for record in dump_records(&dump) {
        let Some(path) = record.headers.get("Node-path") else {
            continue;
        };
        assert_eq!(
            record.headers.get("Text-delta").map(String::as_str),
            Some("true")
        );
        let text = record.text.expect("every node here has text");
        let base = match record.headers["Node-action"].as_str() {
            "add" => Vec::new(),
            _ => files[path].clone(),
        };
        if let Some(sha1) = record.headers.get("Text-delta-base-sha1") {
            assert_eq!(&sha1_hex(&base), sha1, "{path}: delta base");
        }
        assert_eq!(&text[..4], b"SVN\0", "dumps hold svndiff0");
        let windows =
            decode_stream(text, &Limits::default()).unwrap_or_else(|e| panic!("{path}: {e}"));
        most_windows = most_windows.max(windows.len());
        let full = apply_windows(&windows, &base).unwrap_or_else(|e| panic!("{path}: {e}"));
        assert_eq!(
            &sha1_hex(&full),
            &record.headers["Text-content-sha1"],
            "{path}"
        );
        // Decoding byte by byte gives the same windows.
        let mut decoder = StreamDecoder::new(Limits::default());
        let mut again = Vec::new();
        for byte in text {
            decoder.push(std::slice::from_ref(byte));
            while let Some(w) = decoder.next_window().expect("valid") {
                again.push(w);
            }
        }
        decoder.finish().expect("complete");
        assert_eq!(again, windows);
        files.insert(path.clone(), full);
        checked += 1;
    }
    assert_eq!(checked, 9, "nodes in the dump");
    assert!(most_windows >= 3, "big.txt spans several windows");
}

/// The `DELTA` representations of an FSFS revision file, each decoded and applied.
struct Rep {
    stored_len: usize,
    content: Vec<u8>,
}

fn fsfs_reps(rev_file: &[u8], version: u8, reps: &HashMap<(u64, u64), Vec<u8>>) -> Vec<Rep> {
    let mut found = Vec::new();
    let mut pos = 0;
    while let Some(at) = find(&rev_file[pos..], b"DELTA") {
        let start = pos + at;
        if start > 0 && rev_file[start - 1] != b'\n' {
            pos = start + 5;
            continue;
        }
        let line_end = start + find(&rev_file[start..], b"\n").expect("DELTA line ends");
        let line = std::str::from_utf8(&rev_file[start..line_end]).expect("DELTA line is text");
        let base: &[u8] = match line.split(' ').collect::<Vec<_>>()[..] {
            ["DELTA"] => &[],
            ["DELTA", rev, item, _len] => {
                &reps[&(rev.parse().expect("rev"), item.parse().expect("item"))]
            }
            _ => panic!("unexpected rep header {line:?}"),
        };
        let stream = &rev_file[line_end + 1..];
        assert_eq!(&stream[..4], [b'S', b'V', b'N', version]);
        let mut windows: Vec<Window> = Vec::new();
        let mut used = 4;
        while !stream[used..].starts_with(b"ENDREP\n") {
            let (window, n) = parse_window(&stream[used..], version, &Limits::default())
                .unwrap_or_else(|e| panic!("rep {line:?}, window {}: {e}", windows.len()))
                .expect("window complete before ENDREP");
            windows.push(window);
            used += n;
        }
        let content = apply_windows(&windows, base).expect("rep applies");
        found.push(Rep {
            stored_len: used,
            content,
        });
        pos = line_end + 1 + used + 7;
    }
    found
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn check_fsfs(dir: &str, version: u8) {
    let mut reps: HashMap<(u64, u64), Vec<u8>> = HashMap::new();
    let mut files_checked = 0;
    for rev in 1..=3u64 {
        let file = data(&format!("{dir}/revs/{rev}"));
        let decoded = fsfs_reps(&file, version, &reps);
        // Node-revisions say which rep is which: "text: REV ITEM SIZE EXPANDED MD5 SHA1 UNIQ".
        let text = String::from_utf8_lossy(&file);
        for line in text
            .lines()
            .filter(|l| l.starts_with("text: ") || l.starts_with("props: "))
        {
            let fields: Vec<&str> = line.split(' ').collect();
            let (r, item): (u64, u64) = (
                fields[1].parse().expect("rev"),
                fields[2].parse().expect("item"),
            );
            if r != rev {
                continue;
            }
            let (size, expanded): (usize, usize) = (
                fields[3].parse().expect("size"),
                fields[4].parse().expect("expanded"),
            );
            let rep = decoded
                .iter()
                .find(|rep| rep.stored_len == size && rep.content.len() == expanded)
                .unwrap_or_else(|| panic!("{dir} r{rev}: no decoded rep for {line:?}"));
            if let Some(&sha1) = fields.get(6).filter(|s| **s != "-") {
                assert_eq!(sha1_hex(&rep.content), sha1, "{dir} r{rev}: {line}");
                files_checked += 1;
            }
            reps.insert((r, item), rep.content.clone());
        }
    }
    assert_eq!(files_checked, 9, "{dir}: file representations checked");
}

#[test]
fn fsfs7_rev_files_svndiff1_zlib() {
    check_fsfs("fsfs7", 1);
}

#[test]
fn fsfs8_rev_files_svndiff2_lz4() {
    check_fsfs("fsfs8", 2);
}
