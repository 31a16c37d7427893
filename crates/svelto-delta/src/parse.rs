//! Reading svndiff: one window at a time ([`parse_window`]) or a whole stream pushed in pieces
//! ([`StreamDecoder`]). Running out of input is `Ok(None)`, never an error and never an
//! allocation; every length is checked against [`Limits`] as soon as it is read.

use crate::compress;
use crate::varint;
use crate::window::decode_instructions;
use crate::{DeltaError, Instruction, Section, Window, WINDOW_SIZE};

/// The largest instruction: one selector byte and two 10-byte integers.
const MAX_INSTRUCTION_LEN: u64 = 1 + 2 * varint::MAX_LEN as u64;

/// The largest window header: five 10-byte integers.
const MAX_WINDOW_HEADER_LEN: usize = 5 * varint::MAX_LEN;

/// Bounds on what a decoder accepts from one window.
///
/// The default is what a stock Subversion 1.14 client accepts: views of at most
/// [`WINDOW_SIZE`] bytes and an instructions section of at most `WINDOW_SIZE` maximal
/// (21-byte) instructions. The new data section is bounded by the window's own target view
/// length (plus the 10-byte original-length prefix in svndiff1/2), which is tighter than
/// Subversion's `WINDOW_SIZE + 10` and rejects only windows that could not be valid anyway.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest target view length.
    pub max_target_len: u64,
    /// Largest source view length.
    pub max_source_len: u64,
    /// Largest instructions section, both as stored and once decompressed.
    pub max_section_len: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_target_len: WINDOW_SIZE as u64,
            max_source_len: WINDOW_SIZE as u64,
            max_section_len: WINDOW_SIZE as u64 * MAX_INSTRUCTION_LEN,
        }
    }
}

/// The 4-byte header that starts an svndiff stream of `version`: `SVN` and the version byte.
pub fn stream_header(version: u8) -> [u8; 4] {
    [b'S', b'V', b'N', version]
}

/// The five integers that start a window, checked against the limits.
#[derive(Debug, Clone, Copy)]
struct WindowHeader {
    source_offset: u64,
    source_len: u64,
    target_len: u64,
    instructions_len: usize,
    new_data_len: usize,
    header_len: usize,
}

impl WindowHeader {
    fn total_len(&self) -> usize {
        self.header_len + self.instructions_len + self.new_data_len
    }
}

fn check_limit(field: &'static str, value: u64, limit: u64) -> Result<(), DeltaError> {
    if value > limit {
        return Err(DeltaError::LimitExceeded {
            field,
            value,
            limit,
        });
    }
    Ok(())
}

fn to_usize(field: &'static str, value: u64) -> Result<usize, DeltaError> {
    usize::try_from(value).map_err(|_| DeltaError::TooLargeForMemory { field, value })
}

/// Reads and checks a window header; `Ok(None)` if `input` ends inside it.
fn parse_header(
    input: &[u8],
    version: u8,
    limits: &Limits,
) -> Result<Option<WindowHeader>, DeltaError> {
    if version > 2 {
        return Err(DeltaError::UnsupportedVersion(version));
    }
    let mut at = 0;
    let mut next = |field: &'static str| -> Result<Option<u64>, DeltaError> {
        Ok(varint::decode(&input[at..], field)?.map(|(value, used)| {
            at += used;
            value
        }))
    };
    let Some(source_offset) = next("source view offset")? else {
        return Ok(None);
    };
    let Some(source_len) = next("source view length")? else {
        return Ok(None);
    };
    check_limit("source view length", source_len, limits.max_source_len)?;
    if source_offset > i64::MAX as u64
        || source_offset
            .checked_add(source_len)
            .is_none_or(|end| end > i64::MAX as u64)
    {
        return Err(DeltaError::SourceViewOverflow {
            offset: source_offset,
            len: source_len,
        });
    }
    let Some(target_len) = next("target view length")? else {
        return Ok(None);
    };
    check_limit("target view length", target_len, limits.max_target_len)?;
    let Some(instructions_len) = next("instructions section length")? else {
        return Ok(None);
    };
    check_limit(
        "instructions section length",
        instructions_len,
        limits.max_section_len,
    )?;
    let Some(new_data_len) = next("new data section length")? else {
        return Ok(None);
    };
    let new_data_limit = if version == 0 {
        target_len
    } else {
        target_len.saturating_add(varint::MAX_LEN as u64)
    };
    check_limit(
        "new data section length (bounded by the target view length)",
        new_data_len,
        new_data_limit,
    )?;
    Ok(Some(WindowHeader {
        source_offset,
        source_len,
        target_len,
        instructions_len: to_usize("instructions section length", instructions_len)?,
        new_data_len: to_usize("new data section length", new_data_len)?,
        header_len: at,
    }))
}

/// Parses one window of an svndiff stream of `version` from the front of `input` (which
/// starts after the stream header, or after the previous window).
///
/// Returns the window and the number of bytes it took, or `Ok(None)` when `input` ends inside
/// the window. Every length is checked against `limits` as soon as it is read, before anything
/// is allocated; the instructions are checked as Subversion checks them.
pub fn parse_window(
    input: &[u8],
    version: u8,
    limits: &Limits,
) -> Result<Option<(Window, usize)>, DeltaError> {
    let Some(parts) = window_parts(input, version, limits)? else {
        return Ok(None);
    };
    let total = parts.header.total_len();
    Ok(Some((parts.into_window(version)?, total)))
}

/// [`parse_window`] for a reader that applies each window onto `out` as it parses it: a
/// window that is its new data alone (no source view, one instruction taking all of its
/// target from the new data: a text stored whole) is not returned; its new data is appended
/// to `out`, decompressed straight into it, as applying it would append it. Any other window
/// is returned as [`parse_window`] returns it (`Some`), for the caller to apply. The same
/// checks as [`parse_window`]; on an error `out` is left as it was.
pub fn parse_window_onto(
    input: &[u8],
    version: u8,
    limits: &Limits,
    out: &mut Vec<u8>,
) -> Result<Option<(Option<Window>, usize)>, DeltaError> {
    let Some(parts) = window_parts(input, version, limits)? else {
        return Ok(None);
    };
    let (header, total) = (parts.header, parts.header.total_len());
    if header.source_len == 0
        && matches!(parts.instructions[..], [Instruction::NewData { len }] if len == header.target_len)
    {
        compress::unpack_onto(
            Section::NewData,
            parts.new_data,
            version,
            header.target_len,
            out,
        )?;
        return Ok(Some((None, total)));
    }
    Ok(Some((Some(parts.into_window(version)?), total)))
}

/// A window as far as parsing goes before its new data is unpacked: its header, its
/// instructions decoded and checked (against the new data's original length), and its new
/// data section as stored.
struct WindowParts<'a> {
    header: WindowHeader,
    instructions: Vec<Instruction>,
    new_data: &'a [u8],
    new_len: u64,
}

/// The window at the front of `input`, up to its new data; `Ok(None)` when `input` ends
/// inside it.
fn window_parts<'a>(
    input: &'a [u8],
    version: u8,
    limits: &Limits,
) -> Result<Option<WindowParts<'a>>, DeltaError> {
    let Some(header) = parse_header(input, version, limits)? else {
        return Ok(None);
    };
    if input.len() < header.total_len() {
        return Ok(None);
    }
    let body = &input[header.header_len..header.total_len()];
    let (instructions, new_data) = body.split_at(header.instructions_len);
    let instructions = compress::unpack(
        Section::Instructions,
        instructions,
        version,
        limits.max_section_len,
    )?;
    let new_len = compress::unpacked_len(Section::NewData, new_data, version, header.target_len)?;
    let instructions =
        decode_instructions(&instructions, header.source_len, header.target_len, new_len)?;
    Ok(Some(WindowParts {
        header,
        instructions,
        new_data,
        new_len,
    }))
}

impl WindowParts<'_> {
    /// The whole window, its new data unpacked.
    fn into_window(self, version: u8) -> Result<Window, DeltaError> {
        let h = self.header;
        let new_data = compress::unpack(Section::NewData, self.new_data, version, h.target_len)?;
        if new_data.len() as u64 != self.new_len {
            return Err(DeltaError::DecompressedLengthMismatch {
                section: Section::NewData,
                expected: self.new_len,
                actual: new_data.len() as u64,
            });
        }
        Ok(Window {
            source_offset: h.source_offset,
            source_len: h.source_len,
            target_len: h.target_len,
            instructions: self.instructions,
            new_data: new_data.into_owned(),
        })
    }
}

/// A sans-io decoder for a whole svndiff stream: the 4-byte header, then windows.
///
/// Push bytes in as they arrive with [`push`](Self::push) and pull complete windows out with
/// [`next_window`](Self::next_window) until it returns `Ok(None)`; at the end of the input call
/// [`finish`](Self::finish). The decoder holds the bytes pushed but not yet consumed and never
/// allocates on account of a length read from the stream before checking it against its
/// [`Limits`]; so if the caller pulls all windows after each push, memory stays below one
/// pushed chunk plus one maximal window. Source views that slide backwards are rejected as
/// Subversion rejects them. After an error the stream should be abandoned.
#[derive(Debug, Clone)]
pub struct StreamDecoder {
    limits: Limits,
    buffer: Vec<u8>,
    /// Bytes of `buffer` already consumed.
    start: usize,
    /// Bytes of the stream consumed before `buffer[start]`.
    stream_offset: u64,
    version: Option<u8>,
    windows: u64,
    /// Bytes of the current window, once its header has been read.
    window_len: Option<usize>,
    previous_view: (u64, u64),
}

impl StreamDecoder {
    /// A decoder that enforces `limits` on every window.
    pub fn new(limits: Limits) -> Self {
        StreamDecoder {
            limits,
            buffer: Vec::new(),
            start: 0,
            stream_offset: 0,
            version: None,
            windows: 0,
            window_len: None,
            previous_view: (0, 0),
        }
    }

    /// Adds the next bytes of the stream.
    pub fn push(&mut self, data: &[u8]) {
        if self.start == self.buffer.len() {
            self.buffer.clear();
            self.start = 0;
        } else if self.start > 0 && self.start >= self.buffer.len() / 2 {
            self.buffer.drain(..self.start);
            self.start = 0;
        }
        self.buffer.extend_from_slice(data);
    }

    /// The stream's svndiff version, once its header has been read.
    pub fn version(&self) -> Option<u8> {
        self.version
    }

    /// How many windows have been returned so far.
    pub fn windows_decoded(&self) -> u64 {
        self.windows
    }

    /// Bytes pushed but not yet consumed.
    pub fn buffered_len(&self) -> usize {
        self.buffer.len() - self.start
    }

    fn consume(&mut self, n: usize) {
        self.start += n;
        self.stream_offset += n as u64;
    }

    /// Reads the stream header if it is not read yet; `Ok(None)` if more bytes are needed.
    fn read_stream_header(&mut self) -> Result<Option<u8>, DeltaError> {
        if let Some(version) = self.version {
            return Ok(Some(version));
        }
        let available = &self.buffer[self.start..];
        for (position, &found) in available.iter().take(4).enumerate() {
            let ok = match position {
                0..=2 => found == b"SVN"[position],
                _ => found <= 2,
            };
            if !ok {
                return Err(DeltaError::BadHeader {
                    position,
                    found,
                    expected: match position {
                        0 => "'S'",
                        1 => "'V'",
                        2 => "'N'",
                        _ => "a version byte of 0, 1 or 2",
                    },
                });
            }
        }
        if available.len() < 4 {
            return Ok(None);
        }
        let version = available[3];
        self.version = Some(version);
        self.consume(4);
        Ok(Some(version))
    }

    /// The next complete window, or `Ok(None)` when more bytes are needed.
    pub fn next_window(&mut self) -> Result<Option<Window>, DeltaError> {
        let Some(version) = self.read_stream_header()? else {
            return Ok(None);
        };
        let (window_number, window_offset) = (self.windows, self.stream_offset);
        let in_window = |e: DeltaError| e.in_stream_window(window_number, window_offset);
        let available = self.buffer.len() - self.start;
        if self.window_len.is_none() {
            let input = &self.buffer[self.start..];
            let Some(header) = parse_header(input, version, &self.limits).map_err(in_window)?
            else {
                return Ok(None);
            };
            let (prev_offset, prev_len) = self.previous_view;
            if header.source_len > 0
                && (header.source_offset < prev_offset
                    || header.source_offset + header.source_len < prev_offset + prev_len)
            {
                return Err(in_window(DeltaError::BackwardSourceView {
                    offset: header.source_offset,
                    len: header.source_len,
                    prev_offset,
                    prev_len,
                }));
            }
            self.window_len = Some(header.total_len());
        }
        match self.window_len {
            Some(needed) if needed <= available => {}
            _ => return Ok(None),
        }
        let input = &self.buffer[self.start..];
        let Some((window, used)) = parse_window(input, version, &self.limits).map_err(in_window)?
        else {
            return Ok(None);
        };
        self.consume(used);
        self.window_len = None;
        self.windows += 1;
        // Subversion remembers every window's view, empty ones included.
        self.previous_view = (window.source_offset, window.source_len);
        Ok(Some(window))
    }

    /// Declares the end of the input: an error if the header is incomplete or bytes of a
    /// window are left over (call [`next_window`](Self::next_window) until it returns
    /// `Ok(None)` first).
    pub fn finish(&self) -> Result<(), DeltaError> {
        if self.version.is_none() {
            return Err(DeltaError::TruncatedHeader {
                got: self.buffered_len(),
            });
        }
        if self.buffered_len() > 0 {
            return Err(DeltaError::TruncatedWindow {
                window: self.windows,
                buffered: self.buffered_len(),
            });
        }
        Ok(())
    }
}

/// Decodes a complete svndiff stream held in memory.
pub fn decode_stream(bytes: &[u8], limits: &Limits) -> Result<Vec<Window>, DeltaError> {
    let mut decoder = StreamDecoder::new(*limits);
    decoder.push(bytes);
    let mut windows = Vec::new();
    while let Some(window) = decoder.next_window()? {
        windows.push(window);
    }
    decoder.finish()?;
    Ok(windows)
}

// Subversion's decoder gives up on a partial window header longer than this; ours cannot
// exceed it because each of its five integers is at most 10 bytes.
const _: () = assert!(MAX_WINDOW_HEADER_LEN == 50);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Instruction;

    fn spec_window() -> Window {
        Window {
            source_offset: 0,
            source_len: 12,
            target_len: 16,
            instructions: vec![
                Instruction::CopySource { offset: 0, len: 4 },
                Instruction::CopySource { offset: 8, len: 4 },
                Instruction::NewData { len: 1 },
                Instruction::CopyTarget { offset: 8, len: 7 },
            ],
            new_data: b"d".to_vec(),
        }
    }

    #[test]
    fn parses_the_spec_example() {
        let bytes = [
            b'S', b'V', b'N', 0, 0x00, 0x0c, 0x10, 0x07, 0x01, 0x04, 0x00, 0x04, 0x08, 0x81, 0x47,
            0x08, b'd',
        ];
        let windows = decode_stream(&bytes, &Limits::default()).expect("valid");
        assert_eq!(windows, [spec_window()]);
    }

    #[test]
    fn every_cut_of_a_window_is_incomplete() {
        for version in 0..=2 {
            let mut bytes = Vec::new();
            spec_window().encode(version, 9, &mut bytes).expect("valid");
            for cut in 0..bytes.len() {
                assert!(
                    parse_window(&bytes[..cut], version, &Limits::default())
                        .expect("prefix is not an error")
                        .is_none(),
                    "version {version} cut {cut}"
                );
            }
            let (window, used) = parse_window(&bytes, version, &Limits::default())
                .expect("valid")
                .expect("complete");
            assert_eq!(used, bytes.len());
            assert_eq!(window, spec_window());
        }
    }

    #[test]
    fn limits_are_checked_field_by_field() {
        // A target view length of 2^40 is refused before the rest of the header arrives.
        let mut bytes = vec![0x00, 0x00];
        varint::encode(&mut bytes, 1 << 40);
        let err = parse_window(&bytes, 0, &Limits::default()).expect_err("too large");
        assert!(matches!(
            err,
            DeltaError::LimitExceeded {
                field: "target view length",
                value: 1_099_511_627_776,
                limit: 102_400
            }
        ));
        let mut bytes = vec![0x00];
        varint::encode(&mut bytes, 102_401);
        assert!(matches!(
            parse_window(&bytes, 1, &Limits::default()),
            Err(DeltaError::LimitExceeded {
                field: "source view length",
                ..
            })
        ));
        // Source offset that Subversion reads as negative.
        let mut bytes = Vec::new();
        varint::encode(&mut bytes, 1 << 63);
        bytes.push(0);
        assert!(matches!(
            parse_window(&bytes, 2, &Limits::default()),
            Err(DeltaError::SourceViewOverflow { .. })
        ));
    }

    #[test]
    fn stream_header_errors_come_early() {
        let mut decoder = StreamDecoder::new(Limits::default());
        decoder.push(b"SV");
        assert!(decoder.next_window().expect("prefix").is_none());
        assert!(matches!(
            decoder.finish(),
            Err(DeltaError::TruncatedHeader { got: 2 })
        ));
        decoder.push(b"X");
        assert!(matches!(
            decoder.next_window(),
            Err(DeltaError::BadHeader {
                position: 2,
                found: b'X',
                ..
            })
        ));
        let mut decoder = StreamDecoder::new(Limits::default());
        decoder.push(b"SVN\x03");
        assert!(matches!(
            decoder.next_window(),
            Err(DeltaError::BadHeader {
                position: 3,
                found: 3,
                ..
            })
        ));
    }

    #[test]
    fn backward_views_are_rejected_with_the_window_number() {
        let mut first = spec_window();
        first.source_offset = 100;
        let second = spec_window();
        let mut bytes = stream_header(0).to_vec();
        first.encode(0, 0, &mut bytes).expect("valid");
        let second_at = bytes.len() as u64;
        second.encode(0, 0, &mut bytes).expect("valid");
        let err = decode_stream(&bytes, &Limits::default()).expect_err("backwards");
        match err {
            DeltaError::InStreamWindow {
                window: 1,
                stream_offset: offset,
                ref cause,
            } => {
                assert_eq!(offset, second_at);
                assert!(matches!(
                    **cause,
                    DeltaError::BackwardSourceView {
                        offset: 0,
                        prev_offset: 100,
                        ..
                    }
                ));
            }
            other => panic!("unexpected {other:?}"),
        }
        assert_eq!(
            err.to_string(),
            format!("window 1 (at stream offset {second_at}): source view 0+12 slides backwards from the previous view 100+12")
        );
    }

    #[test]
    fn finish_reports_leftovers() {
        let mut bytes = stream_header(1).to_vec();
        spec_window().encode(1, 5, &mut bytes).expect("valid");
        let mut decoder = StreamDecoder::new(Limits::default());
        decoder.push(&bytes[..bytes.len() - 1]);
        assert!(decoder.next_window().expect("partial").is_none());
        assert!(matches!(
            decoder.finish(),
            Err(DeltaError::TruncatedWindow { window: 0, .. })
        ));
        decoder.push(&bytes[bytes.len() - 1..]);
        assert_eq!(
            decoder.next_window().expect("complete"),
            Some(spec_window())
        );
        assert_eq!(decoder.version(), Some(1));
        decoder.finish().expect("clean end");
    }
}
