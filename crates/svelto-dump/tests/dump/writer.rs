//! The writer is byte-exact with svnadmin dump: re-writing its output from the parsed
//! records gives the same bytes, and a dump written from scratch survives
//! `svnadmin load` + `svnadmin dump` unchanged.

use std::io::Write;
use std::process::{Command, Stdio};

use md5::{Digest, Md5 as Md5Hasher};
use sha1::Sha1 as Sha1Hasher;
use svelto_core::{Md5, NodeKind, PropList, Sha1};
use svelto_dump::{
    props_bytes, write_format, write_node_headers, write_node_record, write_revision_record,
    write_uuid, Node, NodeAction, NodeHeaders, PropEntry, PropsBlock, Record,
};

use crate::common::{fixture, parse_all, require_tool, Parsed};

/// The property block bytes svnadmin would write for `block`: a full list, or for a
/// delta, the sets and the deletions (`svn_hash_write_incremental` against a base holding
/// the deleted names).
fn block_bytes(block: &PropsBlock, delta: bool) -> Vec<u8> {
    if !delta {
        return props_bytes(&block.to_prop_list(), None);
    }
    let mut old = PropList::new();
    let mut new = PropList::new();
    for entry in &block.0 {
        match entry {
            PropEntry::Set(k, v) => {
                new.insert(k.clone(), v.clone());
            }
            PropEntry::Delete(k) => {
                old.insert(k.clone(), Vec::new());
            }
        }
    }
    props_bytes(&new, Some(&old))
}

/// Writes `records` back with the writer functions, the way svnadmin dump lays them out.
fn rewrite(records: &[Parsed]) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, (rec, text)) in records.iter().enumerate() {
        match rec {
            Record::Format(v) => write_format(&mut out, *v).expect("vec write"),
            Record::Uuid(u) => write_uuid(&mut out, u).expect("vec write"),
            Record::Revision { number, props, .. } => {
                write_revision_record(&mut out, *number, &props.to_prop_list()).expect("vec write")
            }
            Record::Node(n) => {
                let headers = NodeHeaders::for_node(n);
                if n.props.is_none() && n.text_len.is_none() {
                    write_node_headers(&mut out, &headers).expect("vec write");
                    // The delete half of a replace-with-history ends at its blank line.
                    let replace_delete = n.action == NodeAction::Delete
                        && matches!(records.get(i + 1), Some((Record::Node(next), _))
                            if next.path == n.path
                                && next.action == NodeAction::Add
                                && next.copyfrom.is_some());
                    if !replace_delete {
                        out.push(b'\n');
                    }
                } else {
                    let props = n.props.as_ref().map(|b| block_bytes(b, n.props_delta));
                    write_node_record(&mut out, &headers, props.as_deref(), n.text_len)
                        .expect("vec write");
                    out.extend_from_slice(text);
                    out.extend_from_slice(b"\n\n");
                }
            }
        }
    }
    out
}

fn assert_same_bytes(name: &str, got: &[u8], want: &[u8]) {
    if got != want {
        let at = got
            .iter()
            .zip(want)
            .position(|(a, b)| a != b)
            .unwrap_or(got.len().min(want.len()));
        let from = at.saturating_sub(80);
        panic!(
            "{name}: output differs from byte {at}\n--- svnadmin:\n{}\n--- svelto:\n{}",
            String::from_utf8_lossy(&want[from..(at + 80).min(want.len())]),
            String::from_utf8_lossy(&got[from..(at + 80).min(got.len())]),
        );
    }
}

#[test]
fn format_2_dump_round_trips_byte_for_byte() {
    let input = fixture("full.dump");
    let records = parse_all(&input).expect("fixture parses");
    assert_same_bytes("full.dump", &rewrite(&records), &input);
}

#[test]
fn incremental_and_delta_dumps_round_trip_byte_for_byte() {
    for name in ["incremental.dump", "deltas.dump"] {
        let input = fixture(name);
        let records = parse_all(&input).expect("fixture parses");
        assert_same_bytes(name, &rewrite(&records), &input);
    }
}

fn props(pairs: &[(&str, &str)]) -> PropList {
    pairs
        .iter()
        .map(|(k, v)| (k.as_bytes().to_vec(), v.as_bytes().to_vec()))
        .collect()
}

fn file_node(path: &str, action: NodeAction, text: &[u8]) -> Node {
    let mut n = Node::new(path, action);
    n.kind = Some(NodeKind::File);
    n.text_md5 = Some(Md5(Md5Hasher::digest(text).into()));
    n.text_sha1 = Some(Sha1(Sha1Hasher::digest(text).into()));
    n
}

/// A dump written from scratch, in the layout svnadmin dump gives the same history.
fn scratch_dump() -> Vec<u8> {
    let mut out = Vec::new();
    let w = &mut out;
    let rev = |w: &mut Vec<u8>, n: u64, log: &str| {
        let date = format!("2021-02-0{}T10:20:30.123456Z", n + 1);
        let mut p = props(&[("svn:date", &date)]);
        if n > 0 {
            p.extend(props(&[("svn:author", "alice"), ("svn:log", log)]));
        }
        write_revision_record(w, n, &p).expect("vec write");
    };
    let with_text = |w: &mut Vec<u8>, node: &Node, p: Option<&PropList>, text: &[u8]| {
        let pb = p.map(|p| props_bytes(p, None));
        write_node_record(
            w,
            &NodeHeaders::for_node(node),
            pb.as_deref(),
            Some(text.len() as u64),
        )
        .expect("vec write");
        w.extend_from_slice(text);
        w.extend_from_slice(b"\n\n");
    };

    write_format(w, 2).expect("vec write");
    write_uuid(w, "0d6c36e1-7d25-4a4b-9d6e-52c0f0a1b2c3").expect("vec write");
    rev(w, 0, "");
    rev(w, 1, "Add trunk");
    let mut trunk = Node::new("trunk", NodeAction::Add);
    trunk.kind = Some(NodeKind::Dir);
    let pb = props_bytes(&props(&[("svn:ignore", "*.o\n")]), None);
    write_node_record(w, &NodeHeaders::for_node(&trunk), Some(&pb), None).expect("vec write");
    w.extend_from_slice(b"\n\n");
    let a = file_node("trunk/a.txt", NodeAction::Add, b"alpha\n");
    with_text(
        w,
        &a,
        Some(&props(&[("user:x", "1"), ("svn:eol-style", "LF")])),
        b"alpha\n",
    );
    let e = file_node("trunk/e.txt", NodeAction::Add, b"");
    with_text(w, &e, Some(&PropList::new()), b"");

    rev(w, 2, "Branch and edit");
    let mut branch = Node::new("branch", NodeAction::Add);
    branch.kind = Some(NodeKind::Dir);
    branch.copyfrom = Some((1, "trunk".into()));
    write_node_headers(w, &NodeHeaders::for_node(&branch)).expect("vec write");
    w.push(b'\n');
    let a2 = file_node("trunk/a.txt", NodeAction::Change, b"alpha\nbeta\n");
    with_text(w, &a2, None, b"alpha\nbeta\n");

    rev(w, 3, "Delete");
    write_node_headers(
        w,
        &NodeHeaders::for_node(&Node::new("trunk/e.txt", NodeAction::Delete)),
    )
    .expect("vec write");
    w.push(b'\n');
    out
}

#[test]
fn scratch_dump_survives_svnadmin_load_and_dump() {
    let svnadmin = require_tool("svnadmin");
    let written = scratch_dump();
    // Our own parser reads what our writer wrote.
    let records = parse_all(&written).expect("the writer's output parses");
    assert_eq!(records.len(), 12);

    let dir = tempfile::tempdir().expect("temp dir");
    let repo = dir.path().join("repo");
    let status = Command::new(&svnadmin)
        .arg("create")
        .arg(&repo)
        .status()
        .expect("run svnadmin create");
    assert!(status.success(), "svnadmin create failed");

    let mut load = Command::new(&svnadmin)
        .args(["load", "-q"])
        .arg(&repo)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run svnadmin load");
    load.stdin
        .take()
        .expect("piped stdin")
        .write_all(&written)
        .expect("feed svnadmin load");
    let loaded = load.wait_with_output().expect("svnadmin load");
    assert!(
        loaded.status.success(),
        "svnadmin load rejected the writer's output: {}",
        String::from_utf8_lossy(&loaded.stderr)
    );

    let dumped = Command::new(&svnadmin)
        .args(["dump", "-q"])
        .arg(&repo)
        .env("LANG", "C")
        .output()
        .expect("run svnadmin dump");
    assert!(
        dumped.status.success(),
        "svnadmin dump: {}",
        String::from_utf8_lossy(&dumped.stderr)
    );
    assert_same_bytes("svnadmin load + dump", &written, &dumped.stdout);
}
