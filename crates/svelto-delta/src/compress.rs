//! The secondary compression of svndiff1 (zlib) and svndiff2 (LZ4) sections.
//!
//! A compressed section is the original length as a variable-length integer, then either the
//! original bytes (when the rest of the section is exactly that long) or the compressed bytes
//! (docs/formats/svndiff.md, "Compressed sections").

use std::borrow::Cow;
use std::io::Write;

use flate2::{Compression, Decompress, FlushDecompress, Status};

use crate::varint;
use crate::{DeltaError, Section};

/// Below this many bytes svndiff1 stores a section without trying zlib, as Subversion does.
const ZLIB_MIN_LEN: usize = 512;

/// The bytes of `section` as written in a window of `version`.
pub(crate) fn pack<'a>(
    section: Section,
    data: &'a [u8],
    version: u8,
    zlib_level: u32,
) -> Result<Cow<'a, [u8]>, DeltaError> {
    let compressed = match version {
        0 => return Ok(Cow::Borrowed(data)),
        1 if data.len() >= ZLIB_MIN_LEN && zlib_level > 0 => {
            let mut encoder =
                flate2::write::ZlibEncoder::new(Vec::new(), Compression::new(zlib_level));
            encoder
                .write_all(data)
                .and_then(|()| encoder.finish())
                .map_err(|cause| DeltaError::Compress { section, cause })?
        }
        1 => Vec::new(),
        2 => lz4_flex::block::compress(data),
        _ => return Err(DeltaError::UnsupportedVersion(version)),
    };
    let mut out = Vec::with_capacity(varint::MAX_LEN + data.len().min(compressed.len().max(1)));
    varint::encode(&mut out, data.len() as u64);
    if !compressed.is_empty() && compressed.len() < data.len() {
        out.extend_from_slice(&compressed);
    } else {
        out.extend_from_slice(data);
    }
    Ok(Cow::Owned(out))
}

/// The original bytes of a section read from a window of `version`.
///
/// `limit` bounds the original length announced by a compressed section; it is checked before
/// anything is allocated.
pub(crate) fn unpack(
    section: Section,
    bytes: &[u8],
    version: u8,
    limit: u64,
) -> Result<Cow<'_, [u8]>, DeltaError> {
    if version == 0 {
        return Ok(Cow::Borrowed(bytes));
    }
    let (original, payload) = original_len(section, bytes, limit)?;
    if payload.len() as u64 == original {
        return Ok(Cow::Borrowed(payload));
    }
    let original = in_memory(section, original)?;
    let out = match version {
        1 => inflate(section, payload, original)?,
        2 => {
            let mut out = vec![0u8; original];
            lz4_into(section, payload, &mut out)?;
            out
        }
        _ => return Err(DeltaError::UnsupportedVersion(version)),
    };
    Ok(Cow::Owned(out))
}

/// The name of a section's original-length field, in errors.
fn field(section: Section) -> &'static str {
    match section {
        Section::Instructions => "original length of the instructions section",
        Section::NewData => "original length of the new data section",
    }
}

/// The original length a compressed section (svndiff1 or 2) starts with, checked against
/// `limit`, and the payload after it.
fn original_len(section: Section, bytes: &[u8], limit: u64) -> Result<(u64, &[u8]), DeltaError> {
    let field = field(section);
    let Some((original, used)) = varint::decode(bytes, field)? else {
        return Err(DeltaError::MissingOriginalLength { section });
    };
    if original > limit {
        return Err(DeltaError::LimitExceeded {
            field,
            value: original,
            limit,
        });
    }
    Ok((original, &bytes[used..]))
}

/// An original length as a size this machine can hold.
fn in_memory(section: Section, original: u64) -> Result<usize, DeltaError> {
    usize::try_from(original).map_err(|_| DeltaError::TooLargeForMemory {
        field: field(section),
        value: original,
    })
}

/// Decompresses LZ4 `payload` into the whole of `out`, which must be exactly filled.
fn lz4_into(section: Section, payload: &[u8], out: &mut [u8]) -> Result<(), DeltaError> {
    let got =
        lz4_flex::block::decompress_into(payload, out).map_err(|e| DeltaError::Decompress {
            section,
            codec: "LZ4",
            detail: e.to_string(),
            cause: Some(Box::new(e)),
        })?;
    if got != out.len() {
        return Err(DeltaError::DecompressedLengthMismatch {
            section,
            expected: out.len() as u64,
            actual: got as u64,
        });
    }
    Ok(())
}

/// The original length of a section read from a window of `version` (what [`unpack`] gives
/// the bytes of), checked against `limit`, without unpacking it.
pub(crate) fn unpacked_len(
    section: Section,
    bytes: &[u8],
    version: u8,
    limit: u64,
) -> Result<u64, DeltaError> {
    if version == 0 {
        return Ok(bytes.len() as u64);
    }
    Ok(original_len(section, bytes, limit)?.0)
}

/// [`unpack`], the original bytes appended to `out`: an LZ4 section is decompressed straight
/// into it. On an error `out` is left as it was.
pub(crate) fn unpack_onto(
    section: Section,
    bytes: &[u8],
    version: u8,
    limit: u64,
    out: &mut Vec<u8>,
) -> Result<(), DeltaError> {
    if version != 2 {
        out.extend_from_slice(&unpack(section, bytes, version, limit)?);
        return Ok(());
    }
    let (original, payload) = original_len(section, bytes, limit)?;
    if payload.len() as u64 == original {
        out.extend_from_slice(payload);
        return Ok(());
    }
    let original = in_memory(section, original)?;
    let start = out.len();
    out.try_reserve(original)
        .map_err(|_| DeltaError::TooLargeForMemory {
            field: field(section),
            value: original as u64,
        })?;
    out.resize(start + original, 0);
    lz4_into(section, payload, &mut out[start..]).inspect_err(|_| out.truncate(start))
}

/// Inflates a zlib stream that must produce exactly `original` bytes. Bytes after the end of
/// the zlib stream are ignored, as zlib's `uncompress` ignores them.
fn inflate(section: Section, payload: &[u8], original: usize) -> Result<Vec<u8>, DeltaError> {
    let corrupt = |detail: String, cause: Option<Box<dyn std::error::Error + Send + Sync>>| {
        DeltaError::Decompress {
            section,
            codec: "zlib",
            detail,
            cause,
        }
    };
    // One spare byte of room tells "exactly `original`" from "more than announced".
    let mut out = Vec::with_capacity(original + 1);
    let mut inflater = Decompress::new(true);
    loop {
        let before = (inflater.total_in(), out.len());
        let consumed = inflater.total_in() as usize;
        let status = inflater
            .decompress_vec(&payload[consumed..], &mut out, FlushDecompress::Finish)
            .map_err(|e| corrupt(e.to_string(), Some(Box::new(e))))?;
        if out.len() > original {
            return Err(DeltaError::DecompressedLengthMismatch {
                section,
                expected: original as u64,
                actual: inflater.total_out(),
            });
        }
        match status {
            Status::StreamEnd => break,
            Status::Ok | Status::BufError => {
                if (inflater.total_in(), out.len()) == before {
                    return Err(corrupt("the zlib stream is truncated".to_owned(), None));
                }
            }
        }
    }
    if out.len() != original {
        return Err(DeltaError::DecompressedLengthMismatch {
            section,
            expected: original as u64,
            actual: out.len() as u64,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(data: &[u8], version: u8, level: u32) -> Vec<u8> {
        let packed = pack(Section::NewData, data, version, level)
            .expect("pack")
            .into_owned();
        let unpacked = unpack(Section::NewData, &packed, version, data.len() as u64)
            .expect("unpack")
            .into_owned();
        assert_eq!(unpacked, data);
        packed
    }

    #[test]
    fn small_and_incompressible_sections_are_stored() {
        let packed = round_trip(b"abc", 1, 9);
        assert_eq!(packed, b"\x03abc");
        let packed = round_trip(b"abc", 2, 0);
        assert_eq!(packed, b"\x03abc");
        assert_eq!(round_trip(b"", 1, 9), b"\x00");
        assert_eq!(round_trip(b"", 2, 0), b"\x00");
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let noise: Vec<u8> = (0..2000)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 24) as u8
            })
            .collect();
        let packed = round_trip(&noise, 1, 9);
        assert_eq!(packed.len(), 2 + noise.len());
    }

    #[test]
    fn compressible_sections_shrink() {
        let text = b"line of text\n".repeat(400);
        for (version, level) in [(1, 1), (1, 9), (2, 0)] {
            let packed = round_trip(&text, version, level);
            assert!(
                packed.len() < text.len() / 4,
                "version {version}: {}",
                packed.len()
            );
        }
        // Level 0 stores.
        assert_eq!(round_trip(&text, 1, 0).len(), text.len() + 2);
    }

    #[test]
    fn announced_length_is_checked_before_decompressing() {
        let text = b"line of text\n".repeat(400);
        let packed = pack(Section::Instructions, &text, 1, 6).expect("pack");
        let err = unpack(Section::Instructions, &packed, 1, 100).expect_err("too long");
        assert!(matches!(
            err,
            DeltaError::LimitExceeded {
                value: 5200,
                limit: 100,
                ..
            }
        ));
        assert!(matches!(
            unpack(Section::Instructions, b"", 2, 100),
            Err(DeltaError::MissingOriginalLength { .. })
        ));
    }

    #[test]
    fn wrong_announced_length_is_an_error() {
        let text = b"line of text\n".repeat(400);
        for version in [1, 2] {
            let packed = pack(Section::NewData, &text, version, 6).expect("pack");
            let (_, used) = varint::decode(&packed, "x")
                .expect("int")
                .expect("complete");
            for claimed in [5199u64, 5201, 9000] {
                let mut bad = Vec::new();
                varint::encode(&mut bad, claimed);
                bad.extend_from_slice(&packed[used..]);
                let err = unpack(Section::NewData, &bad, version, 100_000).expect_err("mismatch");
                assert!(
                    matches!(
                        err,
                        DeltaError::DecompressedLengthMismatch { .. }
                            | DeltaError::Decompress { .. }
                    ),
                    "version {version} claimed {claimed}: {err:?}"
                );
            }
        }
    }
}
