use proptest::prelude::*;
use svelto_wire::{decode, Decoder, Item, Limits, Malformed, WireError};

use crate::common;

/// The greeting svnserve 1.14 sends (protocol doc 2.3), with its final space.
const GREETING: &[u8] = b"( success ( 2 2 ( ) ( edit-pipeline svndiff1 accepts-svndiff2 absent-entries commit-revprops depth log-revprops atomic-revprops partial-replay inherited-props ephemeral-txnprops file-revs-reverse list ) ) ) ";

#[test]
fn greeting_parses() {
    assert_eq!(GREETING.len(), 207);
    let (item, n) = decode(GREETING, &Limits::default()).unwrap().unwrap();
    assert_eq!(n, 207);
    let caps = [
        "edit-pipeline",
        "svndiff1",
        "accepts-svndiff2",
        "absent-entries",
        "commit-revprops",
        "depth",
        "log-revprops",
        "atomic-revprops",
        "partial-replay",
        "inherited-props",
        "ephemeral-txnprops",
        "file-revs-reverse",
        "list",
    ];
    let expected = svelto_wire::success(vec![
        Item::Number(2),
        Item::Number(2),
        Item::empty_list(),
        Item::List(caps.iter().map(|c| Item::word(*c)).collect()),
    ]);
    assert_eq!(item, expected);
    assert_eq!(expected.to_bytes(), GREETING);
}

/// The `svn ls` exchange of protocol doc 6.1, one direction at a time, with the lengths the
/// doc gives for each item.
#[test]
fn svn_ls_example_streams() {
    let server: &[(usize, &str)] = &[
        (207, std::str::from_utf8(GREETING).unwrap().trim_end()),
        (70, "( success ( ( ANONYMOUS ) 36:0b7d2c1e-5a3f-4c2d-9e8f-7a6b5c4d3e2f ) )"),
        (16, "( success ( ) )"),
        (94, "( success ( 36:0b7d2c1e-5a3f-4c2d-9e8f-7a6b5c4d3e2f 20:svn://localhost/repo ( mergeinfo ) ) )"),
        (23, "( success ( ( ) 0: ) )"),
        (18, "( success ( 1 ) )"),
        (23, "( success ( ( ) 0: ) )"),
        (12, "( 1:/ dir )"),
        (18, "( 6:/a.txt file )"),
        (18, "( 6:/b.txt file )"),
        (5, "done"),
        (16, "( success ( ) )"),
    ];
    let client: &[(usize, &str)] = &[
        (158, "( 2 ( edit-pipeline svndiff1 accepts-svndiff2 absent-entries depth mergeinfo log-revprops ) 20:svn://localhost/repo 32:SVN/1.14.2 (x86_64-pc-linux-gnu) ( ) )"),
        (21, "( ANONYMOUS ( 0: ) )"),
        (23, "( get-latest-rev ( ) )"),
        (42, "( list ( 0: ( 1 ) immediates ( kind ) ) )"),
    ];
    for (side, total) in [(server, 520), (client, 244)] {
        let stream: Vec<u8> = side
            .iter()
            .flat_map(|(_, s)| format!("{s} ").into_bytes())
            .collect();
        assert_eq!(stream.len(), total);
        for chunk in [1, 7, 4096] {
            let got = common::decode_stream(&stream, chunk);
            assert_eq!(got.len(), side.len());
            let mut reencoded = Vec::new();
            for ((item, n), (len, _)) in got.iter().zip(side) {
                assert_eq!(n, len);
                item.encode(&mut reencoded);
            }
            assert_eq!(reencoded, stream, "canonical re-encoding");
        }
    }
}

#[test]
fn reader_accepts_more_than_writers_send() {
    let (item, n) = decode(b"\n\n(a\n(\n)\n5:x y z\n)\n", &Limits::default())
        .unwrap()
        .unwrap();
    assert_eq!(n, 19);
    assert_eq!(
        item,
        Item::list(vec![
            Item::word("a"),
            Item::empty_list(),
            Item::string("x y z")
        ])
    );
}

#[test]
fn end_of_input() {
    let mut d = Decoder::new(Limits::default());
    assert_eq!(d.decode(b"  \n").unwrap(), None);
    assert_eq!(d.finish(), Ok(()));
    assert_eq!(d.decode(b"  \n( 1 ").unwrap(), None);
    let err = d.finish().unwrap_err();
    assert_eq!(err, WireError::ConnectionClosed { offset: 7 });
    assert_eq!(err.svn_error_code(), 210002);
}

#[test]
fn huge_claimed_string_allocates_nothing_and_fails_at_colon() {
    let err = decode(b"( 16777216:", &Limits::default()).unwrap_err();
    assert_eq!(
        err,
        WireError::RequestTooLarge {
            offset: 10,
            limit: 16 * 1024 * 1024
        }
    );
    assert_eq!(err.svn_error_code(), 210009);
    // The largest string that still fits: header 9 bytes + payload + terminator.
    let n = 16 * 1024 * 1024 - 9 - 1;
    let header = format!("{n}:");
    assert_eq!(header.len(), 9);
    assert_eq!(decode(header.as_bytes(), &Limits::default()), Ok(None));
}

#[test]
fn large_string_arrives_in_pieces() {
    let payload = vec![b')'; 1 << 20];
    let bytes = Item::String(payload.clone()).to_bytes();
    let mut d = Decoder::new(Limits::default());
    let mut end = 0;
    let result = loop {
        end = (end + 4096).min(bytes.len());
        if let Some(r) = d.decode(&bytes[..end]).unwrap() {
            break r;
        }
        assert!(d.hint().is_some());
    };
    assert_eq!(result, (Item::String(payload), bytes.len()));
}

#[test]
fn word_limit_is_configurable() {
    let limits = Limits {
        max_word_len: 24,
        ..Limits::default()
    };
    let ok = "a".repeat(24) + " ";
    assert!(decode(ok.as_bytes(), &limits).unwrap().is_some());
    let long = "a".repeat(25) + " ";
    assert_eq!(
        decode(long.as_bytes(), &limits),
        Err(WireError::Malformed {
            offset: 24,
            reason: Malformed::WordTooLong(24)
        })
    );
}

fn small_limits() -> Limits {
    Limits {
        max_request: 64,
        max_depth: 4,
        max_word_len: 8,
        max_decoded: 1 << 20,
    }
}

fn longest_word(item: &Item) -> usize {
    match item {
        Item::Word(w) => w.len(),
        Item::List(items) => items.iter().map(longest_word).max().unwrap_or(0),
        _ => 0,
    }
}

fn depth(item: &Item) -> usize {
    match item {
        Item::List(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn random_bytes_never_panic_or_exceed_limits(
        bytes in prop::collection::vec(
            prop_oneof![
                Just(b' '), Just(b'('), Just(b')'), Just(b':'), Just(b'\n'),
                b'0'..=b'9', b'a'..=b'e', any::<u8>(),
            ],
            0..200,
        )
    ) {
        let limits = small_limits();
        match decode(&bytes, &limits) {
            Ok(None) => prop_assert!(bytes.len() <= limits.max_request),
            Ok(Some((item, n))) => {
                prop_assert!(n <= bytes.len() && n <= limits.max_request);
                prop_assert!(depth(&item) < limits.max_depth);
                prop_assert!(longest_word(&item) <= limits.max_word_len);
                // The consumed prefix alone decodes to the same item.
                prop_assert_eq!(decode(&bytes[..n], &limits), Ok(Some((item, n))));
            }
            Err(WireError::Malformed { offset, .. }) => prop_assert!(offset < bytes.len()),
            Err(WireError::RequestTooLarge { offset, .. }) => {
                prop_assert!(offset <= limits.max_request)
            }
            Err(e) => prop_assert!(false, "unexpected error {:?}", e),
        }
    }

    #[test]
    fn byte_at_a_time_matches_one_shot(
        bytes in prop::collection::vec(
            prop_oneof![Just(b' '), Just(b'('), Just(b')'), Just(b':'), b'0'..=b'3', b'a'..=b'c'],
            0..120,
        )
    ) {
        let limits = small_limits();
        let whole = decode(&bytes, &limits);
        let mut d = Decoder::new(limits);
        let mut incremental = Ok(None);
        for end in 0..=bytes.len() {
            incremental = d.decode(&bytes[..end]);
            if !matches!(incremental, Ok(None)) {
                break;
            }
        }
        prop_assert_eq!(incremental, whole);
    }
}
