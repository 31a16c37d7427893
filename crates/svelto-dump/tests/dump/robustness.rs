//! Malformed input gives an error, never a panic; truncated input gives a truncation
//! error unless it was cut between records.

use std::io::Read;

use proptest::prelude::*;
use svelto_dump::{DumpError, DumpReader, Limits, Record};

use crate::common::{fixture, into_dump_error, parse_all, Parsed, FIXTURES};

/// Parses to the end or the first error; reads texts when `read_text`, else skips them.
fn drain(input: &[u8], limits: Limits, read_text: bool) -> Result<usize, DumpError> {
    let mut r = DumpReader::with_limits(input, limits);
    let mut n = 0;
    while r.next_record()?.is_some() {
        n += 1;
        if read_text {
            let mut sink = Vec::new();
            r.text().read_to_end(&mut sink).map_err(into_dump_error)?;
        }
        assert!(n <= input.len() + 1, "more records than bytes");
    }
    Ok(n)
}

fn small_limits() -> Limits {
    Limits {
        max_header_line: 40,
        max_headers: 6,
        max_props_len: 100,
    }
}

/// Offsets at which each record of a valid dump ends, and at which the next record's
/// first line starts (after the blank lines between them).
fn boundaries(input: &[u8]) -> Vec<(u64, u64)> {
    let mut r = DumpReader::new(input);
    let mut ends = Vec::new();
    while r.next_record().expect("valid fixture").is_some() {
        std::io::copy(&mut r.text(), &mut std::io::sink()).expect("valid fixture");
        ends.push(r.offset());
    }
    ends.iter()
        .map(|&end| {
            let mut start = end as usize;
            // Skip whole lines that are empty or start with whitespace.
            while start < input.len()
                && matches!(input[start], b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
            {
                match input[start..].iter().position(|&b| b == b'\n') {
                    Some(i) => start += i + 1,
                    None => start = input.len(),
                }
            }
            (end, start as u64)
        })
        .collect()
}

fn check_every_truncation(name: &str, input: &[u8], read_text: bool) {
    let full: Vec<Parsed> = parse_all(input).expect("valid fixture");
    let bounds = boundaries(input);
    for cut in 0..=input.len() {
        let prefix = &input[..cut];
        let clean = bounds
            .iter()
            .position(|&(end, start)| (end..=start).contains(&(cut as u64)));
        let mut r = DumpReader::new(prefix);
        let mut got: Vec<Record> = Vec::new();
        let outcome = loop {
            match r.next_record() {
                Ok(Some(rec)) => {
                    got.push(rec);
                    if read_text {
                        if let Err(e) = std::io::copy(&mut r.text(), &mut std::io::sink()) {
                            break Err(into_dump_error(e));
                        }
                    }
                }
                Ok(None) => break Ok(()),
                Err(e) => break Err(e),
            }
        };
        match (clean, outcome) {
            (Some(i), Ok(())) => {
                let want: Vec<&Record> = full[..=i].iter().map(|(rec, _)| rec).collect();
                let got: Vec<&Record> = got.iter().collect();
                assert_eq!(got, want, "{name}: cut at {cut}");
            }
            (None, Err(e)) if e.is_truncation() => {}
            // The one prefix svnadmin load takes as a whole dump without its final blank
            // line: the format, then a UUID record ending at the end of input (the dump
            // that sets a repository's UUID).
            (None, Ok(())) if prefix.ends_with(b"\n") && ends_with_uuid_line(prefix) => {
                let want: Vec<&Record> = full
                    .iter()
                    .map(|(rec, _)| rec)
                    .take_while(|rec| !matches!(rec, Record::Revision { .. }))
                    .collect();
                let got: Vec<&Record> = got.iter().collect();
                assert_eq!(got, want, "{name}: cut at {cut}");
                assert!(matches!(got.last(), Some(Record::Uuid(_))));
            }
            (clean, outcome) => {
                panic!("{name}: cut at {cut} (record boundary: {clean:?}) gave {outcome:?}")
            }
        }
    }
}

fn ends_with_uuid_line(prefix: &[u8]) -> bool {
    let body = &prefix[..prefix.len() - 1];
    let line = body.rsplit(|&b| b == b'\n').next().unwrap_or(body);
    line.starts_with(b"UUID: ")
}

#[test]
fn every_truncation_point_is_reported() {
    for name in FIXTURES {
        let input = fixture(name);
        check_every_truncation(name, &input, false);
        check_every_truncation(name, &input, true);
    }
}

/// An edit to a valid dump.
#[derive(Debug, Clone)]
enum Edit {
    Flip(usize, u8),
    Digit(usize, u8),
    Insert(usize, Vec<u8>),
    Remove(usize, usize),
    Duplicate(usize, usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Edit::Flip(i, b)),
        (any::<usize>(), b'0'..=b'9').prop_map(|(i, d)| Edit::Digit(i, d)),
        (any::<usize>(), prop::collection::vec(any::<u8>(), 1..8))
            .prop_map(|(i, v)| Edit::Insert(i, v)),
        (any::<usize>(), 1usize..64).prop_map(|(i, n)| Edit::Remove(i, n)),
        (any::<usize>(), 1usize..200).prop_map(|(i, n)| Edit::Duplicate(i, n)),
    ]
}

fn apply(mut data: Vec<u8>, edits: &[Edit]) -> Vec<u8> {
    for e in edits {
        if data.is_empty() {
            break;
        }
        let len = data.len();
        match e {
            Edit::Flip(i, b) => data[i % len] ^= b | 1,
            Edit::Digit(i, d) => {
                // Change a digit (most likely in a length) to another digit.
                let start = i % len;
                if let Some(p) = (start..len)
                    .chain(0..start)
                    .find(|&p| data[p].is_ascii_digit())
                {
                    data[p] = *d;
                }
            }
            Edit::Insert(i, v) => {
                let at = i % (len + 1);
                data.splice(at..at, v.iter().copied());
            }
            Edit::Remove(i, n) => {
                let at = i % len;
                let end = (at + n).min(len);
                data.drain(at..end);
            }
            Edit::Duplicate(i, n) => {
                let at = i % len;
                let end = (at + n).min(len);
                let copy = data[at..end].to_vec();
                data.splice(at..at, copy);
            }
        }
    }
    data
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(
        body in prop::collection::vec(any::<u8>(), 0..512),
        version in 0u8..5,
        read_text: bool,
    ) {
        let mut input = Vec::new();
        if version > 0 {
            input.extend_from_slice(format!("SVN-fs-dump-format-version: {version}\n\n").as_bytes());
        }
        input.extend_from_slice(&body);
        let _ = drain(&input, Limits::default(), read_text);
        let _ = drain(&input, small_limits(), read_text);
    }

    #[test]
    fn random_record_shaped_input_never_panics(
        lines in prop::collection::vec(
            prop_oneof![
                Just("Revision-number: 1".to_string()),
                Just("Node-path: a".to_string()),
                Just("Node-action: add".to_string()),
                Just("Node-kind: file".to_string()),
                Just("Prop-delta: true".to_string()),
                Just("PROPS-END".to_string()),
                Just(String::new()),
                (0u64..40).prop_map(|n| format!("Prop-content-length: {n}")),
                (0u64..40).prop_map(|n| format!("Text-content-length: {n}")),
                (0u64..80).prop_map(|n| format!("Content-length: {n}")),
                (0u64..12).prop_map(|n| format!("K {n}")),
                (0u64..12).prop_map(|n| format!("V {n}")),
                (0u64..12).prop_map(|n| format!("D {n}")),
                "[a-z:]{0,10}",
            ],
            0..40,
        ),
        version in 1u8..4,
        read_text: bool,
    ) {
        let mut input = format!("SVN-fs-dump-format-version: {version}\n\n").into_bytes();
        for l in &lines {
            input.extend_from_slice(l.as_bytes());
            input.push(b'\n');
        }
        let _ = drain(&input, Limits::default(), read_text);
        let _ = drain(&input, small_limits(), read_text);
    }

    #[test]
    fn corrupted_dumps_never_panic(
        which in 0usize..FIXTURES.len(),
        edits in prop::collection::vec(edit(), 1..6),
        read_text: bool,
    ) {
        let input = apply(fixture(FIXTURES[which]), &edits);
        let _ = drain(&input, Limits::default(), read_text);
        let _ = drain(&input, small_limits(), read_text);
    }

    #[test]
    fn truncated_corruptions_never_panic(
        which in 0usize..FIXTURES.len(),
        edits in prop::collection::vec(edit(), 0..3),
        cut in any::<usize>(),
    ) {
        let mut input = apply(fixture(FIXTURES[which]), &edits);
        let cut = cut % (input.len() + 1);
        input.truncate(cut);
        let _ = drain(&input, Limits::default(), true);
    }
}
