//! svndiff's variable-length unsigned integers: 7 bits per byte, most significant group first,
//! high bit set on every byte but the last (docs/formats/svndiff.md, "Integers").

use crate::DeltaError;

/// The longest integer Subversion writes or reads: 10 bytes hold 70 bits.
pub(crate) const MAX_LEN: usize = 10;

/// Appends the encoding of `value`.
pub(crate) fn encode(out: &mut Vec<u8>, value: u64) {
    let mut groups = 1;
    while groups < MAX_LEN && value >> (7 * groups) != 0 {
        groups += 1;
    }
    for g in (1..groups).rev() {
        out.push(0x80 | ((value >> (7 * g)) & 0x7f) as u8);
    }
    out.push((value & 0x7f) as u8);
}

/// The number of bytes [`encode`] writes for `value`.
#[cfg(test)]
pub(crate) fn encoded_len(value: u64) -> usize {
    let bits = 64 - value.leading_zeros() as usize;
    bits.div_ceil(7).max(1)
}

/// Reads one integer from the front of `input`.
///
/// `Ok(None)` means `input` ends inside the integer. Integers longer than [`MAX_LEN`] bytes, or
/// whose value needs more than 64 bits, are errors naming `field`.
pub(crate) fn decode(
    input: &[u8],
    field: &'static str,
) -> Result<Option<(u64, usize)>, DeltaError> {
    let mut value: u64 = 0;
    for (i, &byte) in input.iter().enumerate() {
        if i == MAX_LEN {
            return Err(DeltaError::IntegerTooLong { field });
        }
        if value >> 57 != 0 {
            return Err(DeltaError::IntegerOverflow { field });
        }
        value = (value << 7) | u64::from(byte & 0x7f);
        if byte & 0x80 == 0 {
            return Ok(Some((value, i + 1)));
        }
    }
    if input.len() >= MAX_LEN {
        return Err(DeltaError::IntegerTooLong { field });
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(v: u64) -> Vec<u8> {
        let mut out = Vec::new();
        encode(&mut out, v);
        out
    }

    #[test]
    fn spec_examples() {
        assert_eq!(enc(0), [0x00]);
        assert_eq!(enc(127), [0x7f]);
        assert_eq!(enc(128), [0x81, 0x00]);
        assert_eq!(enc(130), [0x81, 0x02]);
        assert_eq!(enc(102_400), [0x86, 0xa0, 0x00]);
    }

    #[test]
    fn round_trip_edges() {
        for v in [
            0,
            1,
            63,
            64,
            127,
            128,
            16_383,
            16_384,
            u32::MAX as u64,
            u64::MAX - 1,
            u64::MAX,
        ] {
            let bytes = enc(v);
            assert_eq!(bytes.len(), encoded_len(v), "length of {v}");
            assert_eq!(decode(&bytes, "x").expect("valid"), Some((v, bytes.len())));
            for cut in 0..bytes.len() {
                assert_eq!(decode(&bytes[..cut], "x").expect("prefix"), None);
            }
        }
        assert_eq!(enc(u64::MAX).len(), 10);
    }

    #[test]
    fn rejects_long_and_overflowing() {
        let long = [0x80u8; 11];
        assert!(matches!(
            decode(&long, "x"),
            Err(DeltaError::IntegerTooLong { .. })
        ));
        let ten_open = [0x80u8; 10];
        assert!(matches!(
            decode(&ten_open, "x"),
            Err(DeltaError::IntegerTooLong { .. })
        ));
        // 10 bytes whose first group carries more than the single bit that fits.
        let mut big = vec![0xffu8; 9];
        big.push(0x7f);
        assert!(matches!(
            decode(&big, "x"),
            Err(DeltaError::IntegerOverflow { .. })
        ));
        // Redundant leading zero groups are accepted, as Subversion does.
        assert_eq!(
            decode(&[0x80, 0x80, 0x05], "x").expect("valid"),
            Some((5, 3))
        );
    }
}
