//! Parsing the real tools' output.

use md5::{Digest, Md5 as Md5Hasher};
use sha1::Sha1 as Sha1Hasher;
use svelto_core::NodeKind;
use svelto_dump::{DumpReader, Node, NodeAction, Record};

use crate::common::{fixture, parse_all, Parsed, FIXTURES};

fn nodes(records: &[Parsed]) -> Vec<(&Node, &[u8])> {
    records
        .iter()
        .filter_map(|(rec, text)| match rec {
            Record::Node(n) => Some((n, text.as_slice())),
            _ => None,
        })
        .collect()
}

fn revisions(records: &[Parsed]) -> Vec<u64> {
    records
        .iter()
        .filter_map(|(rec, _)| match rec {
            Record::Revision { number, .. } => Some(*number),
            _ => None,
        })
        .collect()
}

/// (path, action, copyfrom) of every node record.
type Outline = Vec<(String, NodeAction, Option<(u64, String)>)>;

fn outline(records: &[Parsed]) -> Outline {
    nodes(records)
        .into_iter()
        .map(|(n, _)| (n.path.clone(), n.action, n.copyfrom.clone()))
        .collect()
}

#[test]
fn every_fixture_parses_to_the_end() {
    for name in FIXTURES {
        let input = fixture(name);
        let records = parse_all(&input).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(records.len() > 10, "{name}");
        // Skipping the texts instead of reading them ends at the same place.
        let mut r = DumpReader::new(&input[..]);
        let mut skipped = Vec::new();
        while let Some(rec) = r.next_record().unwrap_or_else(|e| panic!("{name}: {e}")) {
            skipped.push(rec);
        }
        assert_eq!(r.offset(), input.len() as u64, "{name}");
        let read: Vec<Record> = records.into_iter().map(|(rec, _)| rec).collect();
        assert_eq!(read, skipped, "{name}");
    }
}

#[test]
fn full_dump() {
    let input = fixture("full.dump");
    let records = parse_all(&input).expect("fixture parses");
    assert_eq!(records[0].0, Record::Format(2));
    assert_eq!(
        records[1].0,
        Record::Uuid("3f1b5e7a-9c2d-4e8f-a1b0-5d6c7e8f9a0b".into())
    );
    assert_eq!(revisions(&records), [0, 1, 2, 3, 4, 5, 6]);

    use NodeAction::*;
    let copy = |rev: u64, path: &str| Some((rev, path.to_string()));
    let expected = vec![
        ("branches", Add, None),
        ("tags", Add, None),
        ("trunk", Add, None),
        ("trunk/blob.bin", Add, None),
        ("trunk/empty.txt", Add, None),
        ("trunk/hello.txt", Add, None),
        ("trunk/lines.txt", Add, None),
        ("trunk/sp ace ü.txt", Add, None),
        ("trunk/hello.txt", Change, None),
        ("trunk/lines.txt", Change, None),
        ("branches/b1", Add, copy(2, "trunk")),
        ("trunk/hello-copy.txt", Add, copy(2, "trunk/hello.txt")),
        ("trunk/empty.txt", Delete, None),
        ("tags", Delete, None),
        ("branches/b1/blob.bin", Replace, None),
        ("trunk/hello.txt", Delete, None),
        ("trunk/hello.txt", Add, copy(1, "trunk/lines.txt")),
        ("branches/b1", Change, None),
    ];
    let expected: Vec<_> = expected
        .into_iter()
        .map(|(p, a, c)| (p.to_string(), a, c))
        .collect();
    assert_eq!(outline(&records), expected);

    for (n, text) in nodes(&records) {
        match n.action {
            Delete => {
                assert_eq!((n.kind, n.props.as_ref(), n.text_len), (None, None, None));
                continue;
            }
            _ => assert!(n.kind.is_some(), "{}", n.path),
        }
        assert!(!n.props_delta && !n.text_delta);
        if let Some(len) = n.text_len {
            assert_eq!(text.len() as u64, len);
            let md5 = n.text_md5.expect("svnadmin writes Text-content-md5");
            let sha1 = n.text_sha1.expect("svnadmin writes Text-content-sha1");
            assert_eq!(
                md5.0,
                <[u8; 16]>::from(Md5Hasher::digest(text)),
                "{}",
                n.path
            );
            assert_eq!(
                sha1.0,
                <[u8; 20]>::from(Sha1Hasher::digest(text)),
                "{}",
                n.path
            );
        }
    }

    let find = |path: &str| {
        nodes(&records)
            .into_iter()
            .find(|(n, _)| n.path == path)
            .unwrap_or_else(|| panic!("no node {path}"))
    };
    let (blob, blob_text) = find("trunk/blob.bin");
    assert_eq!(blob.kind, Some(NodeKind::File));
    let every_byte: Vec<u8> = (0..=255u8).chain(0..=255u8).collect();
    assert_eq!(blob_text, every_byte);
    let mime = blob.props.as_ref().expect("props").to_prop_list();
    assert_eq!(
        mime.get(&b"svn:mime-type"[..]).map(Vec::as_slice),
        Some(&b"application/octet-stream"[..])
    );
    let (empty, empty_text) = find("trunk/empty.txt");
    assert_eq!(empty.text_len, Some(0));
    assert!(empty_text.is_empty());
    let (hello, hello_text) = find("trunk/hello.txt");
    assert_eq!(hello_text, b"hello\nworld\n");
    let props = hello.props.as_ref().expect("props").to_prop_list();
    assert_eq!(
        props.get(&b"user:note"[..]).map(Vec::as_slice),
        Some(&b"multi\nline value"[..])
    );
    let (copy_node, _) = find("trunk/hello-copy.txt");
    assert!(copy_node.copy_source_md5.is_some() && copy_node.copy_source_sha1.is_some());

    // r6 has an empty log message.
    let r6 = records
        .iter()
        .find_map(|(rec, _)| match rec {
            Record::Revision {
                number: 6, props, ..
            } => Some(props.to_prop_list()),
            _ => None,
        })
        .expect("r6");
    assert_eq!(r6.get(&b"svn:log"[..]).map(Vec::as_slice), Some(&b""[..]));
}

#[test]
fn deltas_dump() {
    let input = fixture("deltas.dump");
    let records = parse_all(&input).expect("fixture parses");
    assert_eq!(records[0].0, Record::Format(3));
    assert_eq!(
        outline(&records),
        outline(&parse_all(&fixture("full.dump")).expect("parses"))
    );
    let mut deltas = 0;
    for (n, text) in nodes(&records) {
        if let Some(len) = n.text_len {
            assert!(n.text_delta, "{}", n.path);
            assert_eq!(text.len() as u64, len);
            assert!(text.starts_with(b"SVN\0"), "{}: svndiff0 stream", n.path);
            assert!(n.text_md5.is_some());
            deltas += 1;
        }
    }
    assert!(deltas >= 6);
    // A change against a previous version names its base.
    let lines = nodes(&records)
        .into_iter()
        .find(|(n, _)| n.path == "trunk/lines.txt" && n.action == NodeAction::Change)
        .expect("r2 change")
        .0;
    assert!(lines.text_delta_base_md5.is_some() && lines.text_delta_base_sha1.is_some());
}

#[test]
fn incremental_dump_starts_at_r2() {
    let records = parse_all(&fixture("incremental.dump")).expect("fixture parses");
    assert_eq!(records[0].0, Record::Format(2));
    assert_eq!(revisions(&records), [2, 3, 4, 5, 6]);
}

#[test]
fn svnrdump_dump() {
    let records = parse_all(&fixture("rdump.dump")).expect("fixture parses");
    assert_eq!(records[0].0, Record::Format(3));
    assert_eq!(revisions(&records), [0, 1, 2, 3, 4, 5, 6]);
    assert_eq!(
        outline(&records),
        outline(&parse_all(&fixture("deltas.dump")).expect("parses"))
    );
    // svnrdump marks full property blocks of plain adds as deltas too.
    let (trunk, _) = nodes(&records)
        .into_iter()
        .find(|(n, _)| n.path == "trunk")
        .expect("trunk");
    assert!(trunk.props_delta);
}
