//! Window encoding and application over generated valid windows.

use proptest::prelude::*;
use svelto_delta::{parse_window, Instruction, Limits, Window};

/// Any valid window over a source view of up to 300 bytes producing up to 600 bytes.
pub fn valid_window() -> impl Strategy<Value = Window> {
    (
        0u64..1 << 40,
        0usize..300,
        prop::collection::vec((0u8..3, any::<u64>(), 1u64..90), 0..40),
    )
        .prop_map(|(source_offset, source_len, ops)| {
            let mut w = Window {
                source_offset,
                source_len: source_len as u64,
                ..Window::default()
            };
            for (kind, pick, len) in ops {
                let position = w.target_len;
                let instruction = match kind {
                    0 if source_len > 0 => {
                        let offset = pick % source_len as u64;
                        let len = len.min(source_len as u64 - offset);
                        Instruction::CopySource { offset, len }
                    }
                    1 if position > 0 => Instruction::CopyTarget {
                        offset: pick % position,
                        len,
                    },
                    _ => {
                        w.new_data
                            .extend((0..len).map(|i| (pick >> (i % 57)) as u8));
                        Instruction::NewData { len }
                    }
                };
                w.target_len += instruction.len();
                w.instructions.push(instruction);
            }
            w
        })
}

proptest! {
    #![proptest_config(crate::common::proptest_config(300))]

    #[test]
    fn encode_parse_round_trip(w in valid_window(), version in 0u8..3, level in 0u32..10) {
        w.validate().expect("generator makes valid windows");
        let mut bytes = vec![0xee];
        w.encode(version, level, &mut bytes).expect("valid window encodes");
        let limits = Limits { max_target_len: 1 << 20, ..Limits::default() };
        let (parsed, used) = parse_window(&bytes[1..], version, &limits)
            .expect("valid encoding")
            .expect("complete");
        prop_assert_eq!(used, bytes.len() - 1);
        prop_assert_eq!(&parsed, &w);
        // Every strict prefix asks for more input.
        for cut in 1..bytes.len() {
            prop_assert!(parse_window(&bytes[1..cut], version, &limits).expect("prefix").is_none());
        }
    }

    #[test]
    fn apply_matches_byte_by_byte_reference(w in valid_window()) {
        let source: Vec<u8> = (0..w.source_len).map(|i| (i * 7 + 3) as u8).collect();
        let mut out = b"earlier windows".to_vec();
        w.apply(&source, &mut out).expect("valid window applies");
        // The reference: one byte at a time, as the format describes.
        let mut reference: Vec<u8> = Vec::new();
        let mut new = w.new_data.iter();
        for instruction in &w.instructions {
            match *instruction {
                Instruction::CopySource { offset, len } => {
                    reference.extend(&source[offset as usize..(offset + len) as usize])
                }
                Instruction::CopyTarget { offset, len } => {
                    for k in 0..len {
                        let b = reference[(offset + k) as usize];
                        reference.push(b);
                    }
                }
                Instruction::NewData { len } => {
                    reference.extend(new.by_ref().take(len as usize))
                }
            }
        }
        prop_assert_eq!(&out[15..], &reference[..]);
    }
}
