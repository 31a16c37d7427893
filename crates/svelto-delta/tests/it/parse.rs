//! Decoding: incremental input, truncation, corruption, absurd lengths.

use proptest::prelude::*;
use svelto_delta::{
    decode_stream, encode_stream, parse_window, stream_header, DeltaError, Limits, StreamDecoder,
    Window,
};

use crate::window::valid_window;

fn monotonic(mut windows: Vec<Window>) -> Vec<Window> {
    // Views that never slide backwards, as a stream requires.
    let mut offset = 0;
    for w in &mut windows {
        w.source_offset = offset;
        offset += w.source_len;
    }
    windows
}

fn decode_in_chunks(bytes: &[u8], chunks: &[usize]) -> Result<Vec<Window>, DeltaError> {
    let mut decoder = StreamDecoder::new(Limits::default());
    let mut windows = Vec::new();
    let mut rest = bytes;
    let mut sizes = chunks.iter().cycle();
    while !rest.is_empty() {
        let n = (*sizes.next().unwrap_or(&1)).clamp(1, rest.len());
        decoder.push(&rest[..n]);
        rest = &rest[n..];
        while let Some(w) = decoder.next_window()? {
            windows.push(w);
        }
        if !rest.is_empty() {
            assert!(decoder.buffered_len() <= bytes.len());
        }
    }
    decoder.finish()?;
    Ok(windows)
}

proptest! {
    #![proptest_config(crate::common::proptest_config(200))]

    #[test]
    fn stream_decoder_takes_any_chunking(
        windows in prop::collection::vec(valid_window(), 0..6),
        version in 0u8..3,
        chunks in prop::collection::vec(1usize..50, 1..8),
    ) {
        let windows = monotonic(windows);
        let bytes = encode_stream(&windows, version, 6).expect("valid");
        prop_assert_eq!(&decode_in_chunks(&bytes, &chunks).expect("valid stream"), &windows);
        prop_assert_eq!(&decode_in_chunks(&bytes, &[1]).expect("valid stream"), &windows);
        // Cut anywhere: the decoder waits for more, and `finish` reports the cut.
        for cut in 0..bytes.len() {
            let mut decoder = StreamDecoder::new(Limits::default());
            decoder.push(&bytes[..cut]);
            while decoder.next_window().expect("a prefix is not an error").is_some() {}
            if cut < 4 || decoder.buffered_len() > 0 {
                prop_assert!(decoder.finish().is_err());
            }
        }
    }

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..400), version in 0u8..3) {
        let _ = parse_window(&bytes, version, &Limits::default());
        let mut stream = stream_header(version).to_vec();
        stream.extend_from_slice(&bytes);
        let _ = decode_stream(&stream, &Limits::default());
    }

    #[test]
    fn corrupted_streams_fail_cleanly_or_stay_valid(
        windows in prop::collection::vec(valid_window(), 1..4),
        version in 0u8..3,
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
    ) {
        let windows = monotonic(windows);
        let mut bytes = encode_stream(&windows, version, 6).expect("valid");
        for (at, value) in flips {
            let at = at.index(bytes.len());
            bytes[at] = value;
        }
        if let Ok(decoded) = decode_stream(&bytes, &Limits::default()) {
            for w in &decoded {
                prop_assert!(w.validate().is_ok());
                let source = vec![0u8; w.source_len as usize];
                let mut out = Vec::new();
                prop_assert!(w.apply(&source, &mut out).is_ok());
                prop_assert_eq!(out.len() as u64, w.target_len);
            }
        }
    }
}

fn header(fields: [u64; 5]) -> Vec<u8> {
    let mut out = Vec::new();
    for value in fields {
        // The varint encoding, written out here so the test does not depend on the crate's.
        let mut groups = vec![(value & 0x7f) as u8];
        let mut v = value >> 7;
        while v > 0 {
            groups.push(0x80 | (v & 0x7f) as u8);
            v >>= 7;
        }
        out.extend(groups.iter().rev());
    }
    out
}

#[test]
fn absurd_lengths_are_refused_before_the_data_arrives() {
    let limits = Limits::default();
    let cases: [([u64; 5], &str); 5] = [
        ([0, 102_401, 10, 1, 0], "source view length is 102401, larger than the limit of 102400"),
        ([0, 0, 1 << 50, 1, 0], "target view length is 1125899906842624, larger than the limit of 102400"),
        ([0, 0, 100, 2_150_401, 0], "instructions section length is 2150401, larger than the limit of 2150400"),
        ([0, 0, 100, 1, 101], "new data section length (bounded by the target view length) is 101, larger than the limit of 100"),
        ([u64::MAX >> 1, 5, 100, 1, 1], "source view at offset 9223372036854775807 with length 5 lies outside any possible file"),
    ];
    for (fields, message) in cases {
        let bytes = header(fields);
        let err = parse_window(&bytes, 0, &limits).expect_err(message);
        assert_eq!(err.to_string(), message);
    }
    // svndiff1/2 allow the 10-byte original-length prefix on top of the target length.
    assert!(parse_window(&header([0, 0, 100, 1, 110]), 1, &limits)
        .expect("fits")
        .is_none());
    assert!(parse_window(&header([0, 0, 100, 1, 111]), 2, &limits).is_err());
}

#[test]
fn absurd_original_lengths_in_compressed_sections() {
    // A 3-byte instructions section announcing 2^40 original bytes.
    let mut bytes = header([0, 0, 10, 7, 1]);
    bytes.extend_from_slice(&[0x81, 0x80, 0x80, 0x80, 0x80, 0x00, 0x01]);
    bytes.push(0x00);
    let err = parse_window(&bytes, 1, &Limits::default()).expect_err("too long");
    assert_eq!(
        err.to_string(),
        "original length of the instructions section is 34359738368, larger than the limit of 2150400"
    );
    // New data announcing more than the target view holds.
    let mut bytes = header([0, 0, 10, 2, 3]);
    bytes.extend_from_slice(&[0x01, 0x8a]); // instructions: 1 byte, "new data, 10 bytes"
    bytes.extend_from_slice(&[0x0b, 0x00, 0x00]);
    let err = parse_window(&bytes, 2, &Limits::default()).expect_err("too long");
    assert_eq!(
        err.to_string(),
        "original length of the new data section is 11, larger than the limit of 10"
    );
}

#[test]
fn instruction_errors_name_the_instruction() {
    let cases: [(&[u8], &[u8], &str); 6] = [
        (&[0xc1], b"", "instruction 0: invalid selector in byte 0xc1"),
        (
            &[0x81, 0x41, 0x01],
            b"a",
            "instruction 1: copies from target offset 1, not before the current target position 1",
        ),
        (
            &[0x81, 0x05, 0x00],
            b"a",
            "instruction 1: copies source bytes 0+5, past the source view length 4",
        ),
        (&[0x80, 0x00], b"", "instruction 0: length is zero"),
        (
            &[0x80],
            b"",
            "instruction 0: truncated at the end of the instructions section",
        ),
        (
            &[0x81],
            b"ab",
            "instructions produce 1 bytes, but the target view length is 10",
        ),
    ];
    for (instructions, new_data, message) in cases {
        let mut bytes = header([0, 4, 10, instructions.len() as u64, new_data.len() as u64]);
        bytes.extend_from_slice(instructions);
        bytes.extend_from_slice(new_data);
        let err = parse_window(&bytes, 0, &Limits::default()).expect_err(message);
        assert_eq!(err.to_string(), message);
    }
}

#[test]
fn stream_errors_say_which_window() {
    let good = Window::fulltext(b"abc");
    let mut bytes = encode_stream(&[good.clone(), good], 0, 0).expect("valid");
    let second = 4 + (bytes.len() - 4) / 2;
    bytes[second + 5] = 0xc3; // the second window's only instruction byte
    let err = decode_stream(&bytes, &Limits::default()).expect_err("corrupt");
    assert_eq!(
        err.to_string(),
        format!(
            "window 1 (at stream offset {second}): instruction 0: invalid selector in byte 0xc3"
        )
    );
    assert!(matches!(
        err.root(),
        DeltaError::BadInstruction {
            index: 0,
            byte: 0xc3
        }
    ));
}

#[test]
fn empty_stream_is_just_a_header() {
    assert_eq!(
        decode_stream(b"SVN\x02", &Limits::default()).expect("valid"),
        []
    );
    assert!(matches!(
        decode_stream(b"", &Limits::default()),
        Err(DeltaError::TruncatedHeader { got: 0 })
    ));
}

proptest! {
    #![proptest_config(crate::common::proptest_config(500))]

    /// Compressed sections with any announced length and any payload: an error or a valid
    /// window, never a panic, and never a section larger than the announced length.
    #[test]
    fn random_compressed_sections_never_panic(
        announced in prop_oneof![0u64..200, 200u64..3_000_000, any::<u64>()],
        payload in prop::collection::vec(any::<u8>(), 0..300),
        in_new_data in any::<bool>(),
        version in 1u8..3,
    ) {
        let mut section = Vec::new();
        let mut groups = vec![(announced & 0x7f) as u8];
        let mut v = announced >> 7;
        while v > 0 {
            groups.push(0x80 | (v & 0x7f) as u8);
            v >>= 7;
        }
        section.extend(groups.iter().rev());
        section.extend_from_slice(&payload);
        let (instructions, new_data) = if in_new_data {
            (vec![0x00], section)
        } else {
            (section, vec![0x00])
        };
        let mut bytes = header([0, 0, 100, instructions.len() as u64, new_data.len() as u64]);
        bytes.extend_from_slice(&instructions);
        bytes.extend_from_slice(&new_data);
        if let Ok(Some((w, used))) = parse_window(&bytes, version, &Limits::default()) {
            prop_assert_eq!(used, bytes.len());
            prop_assert!(w.validate().is_ok());
        }
    }
}

#[test]
fn custom_limits_are_enforced_by_the_stream_decoder() {
    let window = Window::fulltext(&[7u8; 5000]);
    let bytes = encode_stream(&[window], 2, 0).expect("valid");
    let tight = Limits {
        max_target_len: 4096,
        ..Limits::default()
    };
    let err = decode_stream(&bytes, &tight).expect_err("too large");
    assert_eq!(
        err.to_string(),
        "window 0 (at stream offset 4): target view length is 5000, larger than the limit of 4096"
    );
    assert_eq!(
        decode_stream(&bytes, &Limits::default())
            .expect("fits")
            .len(),
        1
    );
}

/// What `parse_window_onto` leaves in `out` and returns for `bytes` (one window of `version`),
/// the window applied to a source view of zeros.
fn onto(bytes: &[u8], version: u8, out: &mut Vec<u8>) -> Result<bool, DeltaError> {
    let before = out.clone();
    match svelto_delta::parse_window_onto(bytes, version, &Limits::default(), out) {
        Ok(Some((Some(w), used))) => {
            assert_eq!(used, bytes.len());
            assert_eq!(out, &before, "a returned window is not applied");
            w.apply(&vec![0u8; w.source_len as usize], out)
                .expect("a parsed window applies");
            Ok(true)
        }
        Ok(Some((None, used))) => {
            assert_eq!(used, bytes.len());
            Ok(false)
        }
        Ok(None) => panic!("a whole window"),
        Err(e) => {
            assert_eq!(out, &before, "a failed window leaves `out` as it was");
            Err(e)
        }
    }
}

proptest! {
    #![proptest_config(crate::common::proptest_config(200))]

    /// Parsing onto `out` gives what parsing and applying give; a window of new data alone
    /// (compressible or not) is appended, not returned; a corrupted one fails as
    /// `parse_window` fails and leaves `out` alone.
    #[test]
    fn parse_window_onto_appends_what_applying_appends(
        w in valid_window(),
        whole in prop::collection::vec(any::<u8>(), 0..3000),
        repeat in 1usize..40,
        version in 0u8..3,
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..3),
    ) {
        let text: Vec<u8> = whole.iter().copied().cycle().take(whole.len() * repeat).collect();
        let text = &text[..text.len().min(100_000)];
        for (window, alone) in [(w, None), (Window::fulltext(&whole), Some(&whole[..])), (Window::fulltext(text), Some(text))] {
            let mut bytes = Vec::new();
            window.encode(version, 6, &mut bytes).expect("valid");
            let mut want = b"before".to_vec();
            window.apply(&vec![0u8; window.source_len as usize], &mut want).expect("valid");
            let mut out = b"before".to_vec();
            let returned = onto(&bytes, version, &mut out).expect("valid");
            prop_assert_eq!(&out, &want);
            if let Some(alone) = alone {
                prop_assert_eq!(returned, alone.is_empty(), "new data alone is appended");
            }
            if flips.is_empty() {
                continue;
            }
            for &(at, value) in &flips {
                let at = at.index(bytes.len());
                bytes[at] = value;
            }
            let parsed = parse_window(&bytes, version, &Limits::default());
            let mut out = b"before".to_vec();
            if let Ok(Some((w, used))) = &parsed {
                if *used == bytes.len() {
                    let mut want = out.clone();
                    w.apply(&vec![0u8; w.source_len as usize], &mut want).expect("valid");
                    onto(&bytes, version, &mut out).expect("parse_window took it");
                    prop_assert_eq!(&out, &want);
                }
            } else if parsed.is_err() {
                prop_assert!(onto(&bytes, version, &mut out).is_err());
            }
        }
    }
}
