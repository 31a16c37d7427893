//! Just enough of the dumpfile format to split a dump into records, take it
//! apart for bad-input tests, and compare two dumps with a useful message.
//! This is test tooling, deliberately independent of `svelto-dump`.

use std::fmt::Write as _;

/// What a record is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecordKind {
    /// `SVN-fs-dump-format-version: N`
    Format(u32),
    /// `UUID: ...`
    Uuid(String),
    /// `Revision-number: N`
    Revision(u64),
    /// `Node-path: ...` with its `Node-action`.
    Node { path: String, action: String },
    /// Anything else (tolerated, never written by Subversion).
    Other,
}

/// One record of a dump: its header block, its content, and the newlines
/// that follow it, as offsets into the dump.
#[derive(Debug, Clone)]
pub struct Record {
    pub kind: RecordKind,
    /// Offset of the first header byte.
    pub start: usize,
    /// Offset just past the blank line that ends the header block.
    pub headers_end: usize,
    /// `headers_end + Content-length` (or `headers_end` without content).
    pub content_end: usize,
    /// Offset just past the newlines that follow the content.
    pub end: usize,
    /// The headers in order, as written.
    pub headers: Vec<(String, String)>,
    /// The revision this record belongs to (its own number for a revision
    /// record; `None` before the first revision record).
    pub revision: Option<u64>,
}

impl Record {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn bytes<'a>(&self, dump: &'a [u8]) -> &'a [u8] {
        &dump[self.start..self.end]
    }

    pub fn content<'a>(&self, dump: &'a [u8]) -> &'a [u8] {
        &dump[self.headers_end..self.content_end]
    }

    /// The node path, for node records.
    pub fn node_path(&self) -> Option<&str> {
        match &self.kind {
            RecordKind::Node { path, .. } => Some(path),
            _ => None,
        }
    }

    /// Offset just past the header line `name: ...` (with its newline).
    pub fn header_line_end(&self, dump: &[u8], name: &str) -> Option<usize> {
        let block = &dump[self.start..self.headers_end];
        let needle = format!("{name}: ");
        let mut pos = 0;
        for line in block.split_inclusive(|&b| b == b'\n') {
            if line.starts_with(needle.as_bytes()) {
                return Some(self.start + pos + line.len());
            }
            pos += line.len();
        }
        None
    }

    /// A short description: `revision 5` or `revision 5, node 'trunk/a' (add)`.
    pub fn describe(&self) -> String {
        let rev = self.revision.map_or_else(
            || "before any revision".to_owned(),
            |r| format!("revision {r}"),
        );
        match &self.kind {
            RecordKind::Node { path, action } => format!("{rev}, node '{path}' ({action})"),
            RecordKind::Revision(_) => rev,
            RecordKind::Format(v) => format!("format header (version {v})"),
            RecordKind::Uuid(u) => format!("UUID record ({u})"),
            RecordKind::Other => format!("{rev}, unknown record"),
        }
    }
}

/// Split a dump into records. Fails (with the offset) on input that is not a
/// well-formed dump, e.g. a truncated one.
pub fn records(dump: &[u8]) -> Result<Vec<Record>, String> {
    let mut out = Vec::new();
    let mut pos = 0;
    let mut revision = None;
    while pos < dump.len() {
        let start = pos;
        let mut headers = Vec::new();
        loop {
            let Some(nl) = dump[pos..].iter().position(|&b| b == b'\n') else {
                return Err(format!("unterminated header line at offset {pos}"));
            };
            let line = &dump[pos..pos + nl];
            pos += nl + 1;
            if line.is_empty() {
                break;
            }
            let line = String::from_utf8_lossy(line);
            let Some((name, value)) = line.split_once(": ") else {
                return Err(format!(
                    "malformed header line {line:?} at offset {}",
                    pos - nl - 1
                ));
            };
            headers.push((name.to_owned(), value.to_owned()));
        }
        let headers_end = pos;
        let get = |name: &str| {
            headers
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.as_str())
        };
        let content_len: usize = match get("Content-length") {
            Some(v) => v
                .parse()
                .map_err(|e| format!("bad Content-length {v:?} at offset {start}: {e}"))?,
            None => 0,
        };
        let content_end = headers_end + content_len;
        if content_end > dump.len() {
            return Err(format!(
                "content of the record at offset {start} runs past the end of the dump"
            ));
        }
        pos = content_end;
        while pos < dump.len() && dump[pos] == b'\n' {
            pos += 1;
        }
        let kind = if let Some(v) = get("SVN-fs-dump-format-version") {
            RecordKind::Format(
                v.parse()
                    .map_err(|e| format!("bad format version {v:?}: {e}"))?,
            )
        } else if let Some(v) = get("Revision-number") {
            let n = v
                .parse()
                .map_err(|e| format!("bad Revision-number {v:?} at offset {start}: {e}"))?;
            revision = Some(n);
            RecordKind::Revision(n)
        } else if let Some(path) = get("Node-path") {
            RecordKind::Node {
                path: path.to_owned(),
                action: get("Node-action").unwrap_or("").to_owned(),
            }
        } else if let Some(v) = get("UUID") {
            RecordKind::Uuid(v.to_owned())
        } else {
            RecordKind::Other
        };
        out.push(Record {
            kind,
            start,
            headers_end,
            content_end,
            end: pos,
            headers,
            revision,
        });
    }
    Ok(out)
}

fn records_or_panic(dump: &[u8], what: &str) -> Vec<Record> {
    records(dump).unwrap_or_else(|e| panic!("{what} is not a well-formed dump: {e}"))
}

/// The UUID a dump declares, if any.
pub fn uuid_of(dump: &[u8]) -> Option<String> {
    records_or_panic(dump, "dump")
        .into_iter()
        .find_map(|r| match r.kind {
            RecordKind::Uuid(u) => Some(u),
            _ => None,
        })
}

/// The revision numbers of a dump's revision records, in order.
pub fn revisions_in(dump: &[u8]) -> Vec<u64> {
    records_or_panic(dump, "dump")
        .into_iter()
        .filter_map(|r| match r.kind {
            RecordKind::Revision(n) => Some(n),
            _ => None,
        })
        .collect()
}

/// The highest revision number in a dump.
pub fn head_revision(dump: &[u8]) -> u64 {
    revisions_in(dump)
        .into_iter()
        .max()
        .expect("a dump with at least one revision")
}

/// The part of a full dump up to and including revision `last`: for a
/// non-incremental dump from r0, exactly what `svnadmin dump -r 0:last` writes.
pub fn dump_prefix(dump: &[u8], last: u64) -> &[u8] {
    let recs = records_or_panic(dump, "dump");
    let end = recs
        .iter()
        .find(|r| matches!(r.kind, RecordKind::Revision(n) if n > last))
        .map_or(dump.len(), |r| r.start);
    &dump[..end]
}

/// The dump with its `UUID:` line's value replaced.
pub fn with_uuid(dump: &[u8], uuid: &str) -> Vec<u8> {
    let recs = records_or_panic(dump, "dump");
    match recs.iter().find(|r| matches!(r.kind, RecordKind::Uuid(_))) {
        Some(r) => set_header(dump, r, "UUID", Some(uuid)),
        None => dump.to_vec(),
    }
}

/// The dump with the value of `svn:date` in revision `rev`'s properties
/// replaced by `#`s of the same length (for comparing repositories whose
/// revision 0 was made at different times).
pub fn mask_revision_date(dump: &[u8], rev: u64) -> Vec<u8> {
    let mut out = dump.to_vec();
    let recs = records_or_panic(dump, "dump");
    if let Some(r) = recs.iter().find(|r| r.kind == RecordKind::Revision(rev)) {
        let content = r.content(dump);
        let key = b"K 8\nsvn:date\nV ";
        if let Some(at) = find(content, key) {
            let len_start = at + key.len();
            let nl = content[len_start..]
                .iter()
                .position(|&b| b == b'\n')
                .expect("a property value length line");
            let len: usize = String::from_utf8_lossy(&content[len_start..len_start + nl])
                .parse()
                .expect("a numeric property value length");
            let value_start = r.headers_end + len_start + nl + 1;
            out[value_start..value_start + len].fill(b'#');
        }
    }
    out
}

/// A copy of `dump` in which one header of `record` has a new value
/// (`None` removes the header line).
pub fn set_header(dump: &[u8], record: &Record, name: &str, value: Option<&str>) -> Vec<u8> {
    let mut out = dump[..record.start].to_vec();
    let mut found = false;
    for (n, v) in &record.headers {
        if n == name {
            found = true;
            if let Some(value) = value {
                out.extend_from_slice(format!("{n}: {value}\n").as_bytes());
            }
        } else {
            out.extend_from_slice(format!("{n}: {v}\n").as_bytes());
        }
    }
    assert!(found, "{} has no header {name}", record.describe());
    out.push(b'\n');
    out.extend_from_slice(&dump[record.headers_end..]);
    out
}

/// A copy of `dump` in which the first occurrence of `from` inside the content
/// of `record` is replaced by `to`, which must have the same length (so that
/// all length headers stay right).
pub fn replace_in_content(dump: &[u8], record: &Record, from: &[u8], to: &[u8]) -> Vec<u8> {
    assert_eq!(from.len(), to.len(), "replacement must keep the length");
    let content = record.content(dump);
    let at = find(content, from).unwrap_or_else(|| {
        panic!(
            "{} does not contain {:?}",
            record.describe(),
            String::from_utf8_lossy(from)
        )
    });
    let mut out = dump.to_vec();
    let abs = record.headers_end + at;
    out[abs..abs + to.len()].copy_from_slice(to);
    out
}

pub fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() {
        return Some(0);
    }
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// A small format-2 dump with no UUID and no revision 0: one revision,
/// numbered 1, that adds the given directories (parents first). Loading it
/// into a non-empty repository makes the next revision; it is how tests make
/// the parent directory that `load --parent-dir` needs.
pub fn mkdir_dump(dirs: &[&str]) -> Vec<u8> {
    let props = "K 10\nsvn:author\nV 7\ntestkit\nK 8\nsvn:date\nV 27\n2015-06-07T08:09:10.111213Z\nK 7\nsvn:log\nV 5\nmkdir\nPROPS-END\n";
    let mut out = format!(
        "SVN-fs-dump-format-version: 2\n\nRevision-number: 1\nProp-content-length: {len}\nContent-length: {len}\n\n{props}\n",
        len = props.len()
    );
    for dir in dirs {
        out.push_str(&format!(
            "Node-path: {dir}\nNode-kind: dir\nNode-action: add\nProp-content-length: 10\nContent-length: 10\n\nPROPS-END\n\n\n"
        ));
    }
    out.into_bytes()
}

/// Panics, with the first differing record of each and the path of copies
/// saved for inspection, unless the two dumps are byte for byte the same.
pub fn assert_dumps_eq(expected: &[u8], actual: &[u8], what: &str) {
    if expected == actual {
        return;
    }
    let saved = save_failure(what, expected, actual);
    panic!(
        "{what}: dumps differ ({} bytes expected, {} bytes actual)\n{}\n{saved}",
        expected.len(),
        actual.len(),
        describe_difference(expected, actual)
    );
}

/// Like [`assert_dumps_eq`], except that the node records of the first
/// revision may come in any order. For non-incremental `svnadmin dump -r N:M`
/// with N > 0, whose first revision is a full-tree add whose order comes from
/// an APR hash.
pub fn assert_dumps_eq_first_revision_unordered(expected: &[u8], actual: &[u8], what: &str) {
    if expected == actual {
        return;
    }
    let canonical = |dump: &[u8], side: &str| -> Vec<u8> {
        let recs = records(dump).unwrap_or_else(|e| {
            let saved = save_failure(what, expected, actual);
            panic!("{what}: the {side} dump is not well-formed: {e}\n{saved}")
        });
        let first_rev = recs.iter().find_map(|r| match r.kind {
            RecordKind::Revision(n) => Some(n),
            _ => None,
        });
        let mut out = Vec::new();
        let mut first_nodes: Vec<&[u8]> = Vec::new();
        for r in &recs {
            let in_first = first_rev.is_some() && r.revision == first_rev;
            if in_first && matches!(r.kind, RecordKind::Node { .. }) {
                first_nodes.push(r.bytes(dump));
            } else {
                if !first_nodes.is_empty() {
                    first_nodes.sort();
                    first_nodes.iter().for_each(|b| out.extend_from_slice(b));
                    first_nodes.clear();
                }
                out.extend_from_slice(r.bytes(dump));
            }
        }
        first_nodes.sort();
        first_nodes.iter().for_each(|b| out.extend_from_slice(b));
        out
    };
    let e = canonical(expected, "expected");
    let a = canonical(actual, "actual");
    if e != a {
        let saved = save_failure(what, expected, actual);
        panic!(
            "{what}: dumps differ (even with the first revision's nodes in any order)\n\
             (compared with the first revision's node records sorted)\n{}\n{saved}",
            describe_difference(&e, &a)
        );
    }
}

/// Where the two dumps of a failed comparison are kept, for `diff -a`.
fn save_failure(what: &str, expected: &[u8], actual: &[u8]) -> String {
    let dir = crate::svnadmin::scratch_dir().join("svelto-test-failures");
    let name: String = what
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(100)
        .collect();
    let e = dir.join(format!("{name}.expected.dump"));
    let a = dir.join(format!("{name}.actual.dump"));
    let ok = std::fs::create_dir_all(&dir).is_ok()
        && std::fs::write(&e, expected).is_ok()
        && std::fs::write(&a, actual).is_ok();
    if ok {
        format!("both dumps saved: diff -a {} {}", e.display(), a.display())
    } else {
        format!("(could not save the dumps under {})", dir.display())
    }
}

/// A description of where two dumps first differ: by record when both parse,
/// by bytes otherwise.
pub fn describe_difference(expected: &[u8], actual: &[u8]) -> String {
    let at = expected
        .iter()
        .zip(actual)
        .position(|(a, b)| a != b)
        .unwrap_or(expected.len().min(actual.len()));
    let mut msg = format!("first difference at byte {at}\n");
    match (records(expected), records(actual)) {
        (Ok(er), Ok(ar)) => {
            let i = er
                .iter()
                .zip(&ar)
                .position(|(e, a)| e.bytes(expected) != a.bytes(actual))
                .unwrap_or(er.len().min(ar.len()));
            let show = |recs: &[Record], dump: &[u8]| match recs.get(i) {
                Some(r) => format!("{}:\n{}", r.describe(), printable(r.bytes(dump), 1500)),
                None => "(no more records)".to_owned(),
            };
            let _ = write!(
                msg,
                "first differing record is #{i}\n--- expected {}\n--- actual {}",
                show(&er, expected),
                show(&ar, actual)
            );
        }
        (e, a) => {
            if let Err(err) = &e {
                let _ = writeln!(msg, "(expected dump does not parse: {err})");
            }
            if let Err(err) = &a {
                let _ = writeln!(msg, "(actual dump does not parse: {err})");
            }
            let from = at.saturating_sub(300);
            let _ = write!(
                msg,
                "--- expected from byte {from}:\n{}\n--- actual from byte {from}:\n{}",
                printable(&expected[from.min(expected.len())..], 800),
                printable(&actual[from.min(actual.len())..], 800)
            );
        }
    }
    msg
}

/// Bytes shown as text: control bytes other than newline and invalid UTF-8
/// escaped, cut after `max` bytes.
fn printable(bytes: &[u8], max: usize) -> String {
    let cut = &bytes[..bytes.len().min(max)];
    let mut s = String::new();
    for chunk in cut.utf8_chunks() {
        for c in chunk.valid().chars() {
            if c == '\n' || !c.is_control() {
                s.push(c);
            } else {
                let _ = write!(s, "\\x{:02x}", c as u32);
            }
        }
        for b in chunk.invalid() {
            let _ = write!(s, "\\x{b:02x}");
        }
    }
    if bytes.len() > max {
        let _ = write!(s, "\n[... {} more bytes]", bytes.len() - max);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: &[u8] = b"SVN-fs-dump-format-version: 2\n\nUUID: u-1\n\nRevision-number: 0\nProp-content-length: 56\nContent-length: 56\n\nK 8\nsvn:date\nV 27\n2011-03-13T08:08:08.000001Z\nPROPS-END\n\nRevision-number: 1\nProp-content-length: 10\nContent-length: 10\n\nPROPS-END\n\nNode-path: a\nNode-kind: file\nNode-action: add\nProp-content-length: 10\nText-content-length: 3\nContent-length: 13\n\nPROPS-END\nhi\n\n\nNode-path: b\nNode-action: delete\n\n\nRevision-number: 2\nProp-content-length: 10\nContent-length: 10\n\nPROPS-END\n\n";

    #[test]
    fn splits_records() {
        let recs = records(SMALL).expect("parses");
        let kinds: Vec<_> = recs.iter().map(|r| r.kind.clone()).collect();
        assert_eq!(
            kinds,
            vec![
                RecordKind::Format(2),
                RecordKind::Uuid("u-1".into()),
                RecordKind::Revision(0),
                RecordKind::Revision(1),
                RecordKind::Node {
                    path: "a".into(),
                    action: "add".into()
                },
                RecordKind::Node {
                    path: "b".into(),
                    action: "delete".into()
                },
                RecordKind::Revision(2),
            ]
        );
        assert_eq!(recs[4].content(SMALL), b"PROPS-END\nhi\n");
        assert_eq!(recs[4].revision, Some(1));
        let total: usize = recs.iter().map(|r| r.end - r.start).sum();
        assert_eq!(total, SMALL.len());
        assert!(records(&SMALL[..SMALL.len() - 30]).is_err());
    }

    #[test]
    fn prefix_uuid_and_masks() {
        assert!(dump_prefix(SMALL, 1).ends_with(b"Node-action: delete\n\n\n"));
        assert_eq!(dump_prefix(SMALL, 2), SMALL);
        assert_eq!(uuid_of(SMALL).as_deref(), Some("u-1"));
        assert_eq!(uuid_of(&with_uuid(SMALL, "u-2")).as_deref(), Some("u-2"));
        let masked = mask_revision_date(SMALL, 0);
        assert_eq!(masked.len(), SMALL.len());
        assert!(find(&masked, b"V 27\n###########################\n").is_some());
        assert_eq!(head_revision(SMALL), 2);
        assert_eq!(revisions_in(SMALL), vec![0, 1, 2]);
    }

    #[test]
    fn edits_records() {
        let recs = records(SMALL).expect("parses");
        let edited = set_header(SMALL, &recs[4], "Node-kind", Some("dir"));
        assert!(find(&edited, b"Node-kind: dir\nNode-action: add").is_some());
        let edited = replace_in_content(SMALL, &recs[4], b"hi", b"ho");
        assert!(find(&edited, b"ho\n").is_some());
        assert_eq!(edited.len(), SMALL.len());
        assert!(records(&mkdir_dump(&["x", "x/y z"])).is_ok());
    }

    #[test]
    fn unordered_first_revision() {
        let a = b"SVN-fs-dump-format-version: 2\n\nRevision-number: 3\nContent-length: 0\n\nNode-path: a\nNode-action: add\n\nNode-path: b\nNode-action: add\n\nRevision-number: 4\nContent-length: 0\n\nNode-path: a\nNode-action: delete\n\nNode-path: b\nNode-action: delete\n\n";
        let b = b"SVN-fs-dump-format-version: 2\n\nRevision-number: 3\nContent-length: 0\n\nNode-path: b\nNode-action: add\n\nNode-path: a\nNode-action: add\n\nRevision-number: 4\nContent-length: 0\n\nNode-path: a\nNode-action: delete\n\nNode-path: b\nNode-action: delete\n\n";
        assert_dumps_eq_first_revision_unordered(a, b, "unit");
        let c = String::from_utf8_lossy(b).replace(
            "a\nNode-action: delete\n\nNode-path: b\nNode-action: delete",
            "b\nNode-action: delete\n\nNode-path: a\nNode-action: delete",
        );
        let result = std::panic::catch_unwind(|| {
            assert_dumps_eq_first_revision_unordered(a, c.as_bytes(), "unit-order-later")
        });
        assert!(result.is_err(), "order after the first revision matters");
    }

    #[test]
    fn describes_differences_by_record() {
        let other = String::from_utf8_lossy(SMALL).replace("hi\n", "ho\n");
        let text = describe_difference(SMALL, other.as_bytes());
        assert!(text.contains("revision 1, node 'a' (add)"), "{text}");
    }
}
