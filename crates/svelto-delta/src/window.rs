//! One svndiff window: its instructions, checking them, applying them, writing them out.

use crate::compress;
use crate::varint;
use crate::{DeltaError, Section};

/// One instruction of a window. Offsets and lengths are in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Instruction {
    /// Copy `len` bytes starting at `offset` in the source view.
    CopySource { offset: u64, len: u64 },
    /// Copy `len` bytes starting at `offset` in the target view, which must lie before the
    /// current target position; the copy may run into the bytes it is producing, which then
    /// repeat (as when copying one byte at a time).
    CopyTarget { offset: u64, len: u64 },
    /// Take the next `len` bytes of the window's new data.
    NewData { len: u64 },
}

impl Instruction {
    /// How many target bytes this instruction produces.
    pub fn len(&self) -> u64 {
        match *self {
            Instruction::CopySource { len, .. }
            | Instruction::CopyTarget { len, .. }
            | Instruction::NewData { len } => len,
        }
    }

    /// Whether this instruction produces no bytes (which makes a window invalid).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The two selector bits of the instruction's first byte.
    fn selector(&self) -> u8 {
        match self {
            Instruction::CopySource { .. } => 0,
            Instruction::CopyTarget { .. } => 1,
            Instruction::NewData { .. } => 2,
        }
    }

    /// Appends the instruction's encoding (docs/formats/svndiff.md, "Instructions").
    pub(crate) fn encode(&self, out: &mut Vec<u8>) {
        let len = self.len();
        let first = self.selector() << 6;
        if len > 0 && len < 64 {
            out.push(first | len as u8);
        } else {
            out.push(first);
            varint::encode(out, len);
        }
        match *self {
            Instruction::CopySource { offset, .. } | Instruction::CopyTarget { offset, .. } => {
                varint::encode(out, offset)
            }
            Instruction::NewData { .. } => {}
        }
    }

    /// Reads one instruction from the front of `input`; `None` if `input` ends inside it.
    fn decode(input: &[u8], index: usize) -> Result<Option<(Instruction, usize)>, DeltaError> {
        let Some(&first) = input.first() else {
            return Ok(None);
        };
        let selector = first >> 6;
        if selector == 3 {
            return Err(DeltaError::BadInstruction { index, byte: first });
        }
        let mut used = 1;
        let mut len = u64::from(first & 0x3f);
        if len == 0 {
            match varint::decode(&input[used..], "instruction length")? {
                Some((value, n)) => {
                    len = value;
                    used += n;
                }
                None => return Ok(None),
            }
        }
        let instruction = if selector == 2 {
            Instruction::NewData { len }
        } else {
            let Some((offset, n)) = varint::decode(&input[used..], "instruction offset")? else {
                return Ok(None);
            };
            used += n;
            if selector == 0 {
                Instruction::CopySource { offset, len }
            } else {
                Instruction::CopyTarget { offset, len }
            }
        };
        Ok(Some((instruction, used)))
    }
}

/// One svndiff window: instructions that rebuild `target_len` bytes of target from the source
/// view `source_offset .. source_offset + source_len`, the target built so far within this
/// window, and `new_data`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Window {
    /// Where the source view starts in the whole source.
    pub source_offset: u64,
    /// How many source bytes the view holds.
    pub source_len: u64,
    /// How many target bytes the window produces.
    pub target_len: u64,
    /// The instructions, in order.
    pub instructions: Vec<Instruction>,
    /// The bytes that `NewData` instructions take, in order, each exactly once.
    pub new_data: Vec<u8>,
}

/// Walks a window's instructions in order and checks each against the window's lengths, with
/// the same rules as Subversion's decoder (docs/formats/svndiff.md, "Validity").
pub(crate) struct InstructionChecker {
    source_len: u64,
    target_len: u64,
    new_len: u64,
    position: u64,
    new_position: u64,
}

impl InstructionChecker {
    pub(crate) fn new(source_len: u64, target_len: u64, new_len: u64) -> Self {
        InstructionChecker {
            source_len,
            target_len,
            new_len,
            position: 0,
            new_position: 0,
        }
    }

    pub(crate) fn check(
        &mut self,
        index: usize,
        instruction: &Instruction,
    ) -> Result<(), DeltaError> {
        let len = instruction.len();
        if len == 0 {
            return Err(DeltaError::ZeroLengthInstruction { index });
        }
        if len > self.target_len - self.position {
            return Err(DeltaError::TargetOverflow {
                index,
                position: self.position,
                len,
                target_len: self.target_len,
            });
        }
        match *instruction {
            Instruction::CopySource { offset, len } => {
                if offset > self.source_len || len > self.source_len - offset {
                    return Err(DeltaError::SourceOutOfBounds {
                        index,
                        offset,
                        len,
                        source_len: self.source_len,
                    });
                }
            }
            Instruction::CopyTarget { offset, .. } => {
                if offset >= self.position {
                    return Err(DeltaError::TargetCopyNotBehind {
                        index,
                        offset,
                        position: self.position,
                    });
                }
            }
            Instruction::NewData { len } => {
                if len > self.new_len - self.new_position {
                    return Err(DeltaError::NewDataOutOfBounds {
                        index,
                        position: self.new_position,
                        len,
                        new_len: self.new_len,
                    });
                }
                self.new_position += len;
            }
        }
        self.position += len;
        Ok(())
    }

    pub(crate) fn finish(&self) -> Result<(), DeltaError> {
        if self.position != self.target_len {
            return Err(DeltaError::TargetNotFilled {
                produced: self.position,
                target_len: self.target_len,
            });
        }
        if self.new_position != self.new_len {
            return Err(DeltaError::NewDataNotExhausted {
                used: self.new_position,
                new_len: self.new_len,
            });
        }
        Ok(())
    }
}

/// Decodes and checks a whole (decompressed) instructions section.
pub(crate) fn decode_instructions(
    mut bytes: &[u8],
    source_len: u64,
    target_len: u64,
    new_len: u64,
) -> Result<Vec<Instruction>, DeltaError> {
    let mut checker = InstructionChecker::new(source_len, target_len, new_len);
    let mut instructions = Vec::new();
    while !bytes.is_empty() {
        let index = instructions.len();
        let Some((instruction, used)) = Instruction::decode(bytes, index)? else {
            return Err(DeltaError::TruncatedInstruction { index });
        };
        checker.check(index, &instruction)?;
        instructions.push(instruction);
        bytes = &bytes[used..];
    }
    checker.finish()?;
    Ok(instructions)
}

fn to_usize(field: &'static str, value: u64) -> Result<usize, DeltaError> {
    usize::try_from(value).map_err(|_| DeltaError::TooLargeForMemory { field, value })
}

/// The svndiff0 bytes that precede `len` bytes of new data in a window holding them
/// as-is (what [`Window::fulltext`] encodes to in version 0, without its data). Lets a sender
/// write a text's bytes straight from where they are, with no copy into a window.
pub fn fulltext_v0_header(len: u64) -> Vec<u8> {
    let mut ins = Vec::with_capacity(10);
    if len > 0 {
        Instruction::NewData { len }.encode(&mut ins);
    }
    let mut out = Vec::with_capacity(16 + ins.len());
    varint::encode(&mut out, 0);
    varint::encode(&mut out, 0);
    varint::encode(&mut out, len);
    varint::encode(&mut out, ins.len() as u64);
    varint::encode(&mut out, len);
    out.extend_from_slice(&ins);
    out
}

impl Window {
    /// A window without source view that holds all of `target` as new data: one `NewData`
    /// instruction, or none when `target` is empty.
    pub fn fulltext(target: &[u8]) -> Window {
        let len = target.len() as u64;
        Window {
            source_offset: 0,
            source_len: 0,
            target_len: len,
            instructions: if target.is_empty() {
                Vec::new()
            } else {
                vec![Instruction::NewData { len }]
            },
            new_data: target.to_vec(),
        }
    }

    /// Checks the window on its own: every instruction produces bytes, stays inside the target
    /// view, the source view and the new data; target copies start behind the current position;
    /// the instructions fill the target view exactly and use all new data.
    pub fn validate(&self) -> Result<(), DeltaError> {
        let mut checker =
            InstructionChecker::new(self.source_len, self.target_len, self.new_data.len() as u64);
        for (index, instruction) in self.instructions.iter().enumerate() {
            checker.check(index, instruction)?;
        }
        checker.finish()?;
        self.source_offset
            .checked_add(self.source_len)
            .ok_or(DeltaError::SourceViewOverflow {
                offset: self.source_offset,
                len: self.source_len,
            })?;
        Ok(())
    }

    /// Appends exactly `target_len` reconstructed bytes to `out`.
    ///
    /// `source_view` must be the window's source view, `source_len` bytes long. The window is
    /// validated in full before anything is written, so on error `out` is unchanged.
    pub fn apply(&self, source_view: &[u8], out: &mut Vec<u8>) -> Result<(), DeltaError> {
        if source_view.len() as u64 != self.source_len {
            return Err(DeltaError::SourceViewLength {
                expected: self.source_len,
                actual: source_view.len() as u64,
            });
        }
        self.validate()?;
        let target_len = to_usize("target view length", self.target_len)?;
        out.try_reserve(target_len)
            .map_err(|_| DeltaError::TooLargeForMemory {
                field: "target view length",
                value: self.target_len,
            })?;
        let base = out.len();
        let mut new_position = 0usize;
        // Lengths and offsets below were bounded by `validate` against lengths of slices held
        // in memory (source view, new data) or against `target_len`, which fits in usize.
        for instruction in &self.instructions {
            match *instruction {
                Instruction::CopySource { offset, len } => {
                    let start = offset as usize;
                    out.extend_from_slice(&source_view[start..start + len as usize]);
                }
                Instruction::CopyTarget { offset, len } => {
                    let mut from = base + offset as usize;
                    let mut remaining = len as usize;
                    while remaining > 0 {
                        let chunk = remaining.min(out.len() - from);
                        out.extend_from_within(from..from + chunk);
                        from += chunk;
                        remaining -= chunk;
                    }
                }
                Instruction::NewData { len } => {
                    let len = len as usize;
                    out.extend_from_slice(&self.new_data[new_position..new_position + len]);
                    new_position += len;
                }
            }
        }
        Ok(())
    }

    /// Appends the svndiff encoding of this window (without the 4-byte stream header) for
    /// `version` 0, 1 (zlib at `zlib_level`, 0 meaning stored) or 2 (LZ4).
    ///
    /// The window is validated first; an invalid window is never written.
    pub fn encode(
        &self,
        version: u8,
        zlib_level: u32,
        out: &mut Vec<u8>,
    ) -> Result<(), DeltaError> {
        if version > 2 {
            return Err(DeltaError::UnsupportedVersion(version));
        }
        if zlib_level > 9 {
            return Err(DeltaError::InvalidCompressionLevel(zlib_level));
        }
        self.validate()?;
        let mut instructions = Vec::with_capacity(self.instructions.len() * 4);
        for instruction in &self.instructions {
            instruction.encode(&mut instructions);
        }
        let instructions =
            compress::pack(Section::Instructions, &instructions, version, zlib_level)?;
        let new_data = compress::pack(Section::NewData, &self.new_data, version, zlib_level)?;
        varint::encode(out, self.source_offset);
        varint::encode(out, self.source_len);
        varint::encode(out, self.target_len);
        varint::encode(out, instructions.len() as u64);
        varint::encode(out, new_data.len() as u64);
        out.extend_from_slice(&instructions);
        out.extend_from_slice(&new_data);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(source_len: u64, target_len: u64, ins: Vec<Instruction>, new: &[u8]) -> Window {
        Window {
            source_offset: 0,
            source_len,
            target_len,
            instructions: ins,
            new_data: new.to_vec(),
        }
    }

    #[test]
    fn fulltext_v0_header_matches_the_window_encoding() {
        for len in [0usize, 1, 63, 64, 1000, 102_400] {
            let data: Vec<u8> = (0..len).map(|i| (i * 7) as u8).collect();
            let mut whole = Vec::new();
            Window::fulltext(&data)
                .encode(0, 0, &mut whole)
                .expect("encode");
            let mut split = fulltext_v0_header(len as u64);
            split.extend_from_slice(&data);
            assert_eq!(whole, split, "len {len}");
        }
    }

    #[test]
    fn spec_example_applies() {
        // notes/svndiff: "aaaabbbbcccc" -> "aaaaccccdddddddd".
        let w = window(
            12,
            16,
            vec![
                Instruction::CopySource { offset: 0, len: 4 },
                Instruction::CopySource { offset: 8, len: 4 },
                Instruction::NewData { len: 1 },
                Instruction::CopyTarget { offset: 8, len: 7 },
            ],
            b"d",
        );
        let mut out = b"prefix".to_vec();
        w.apply(b"aaaabbbbcccc", &mut out).expect("valid window");
        assert_eq!(out, b"prefixaaaaccccdddddddd");
        let mut bytes = Vec::new();
        w.encode(0, 0, &mut bytes).expect("valid window");
        assert_eq!(
            bytes,
            [0x00, 0x0c, 0x10, 0x07, 0x01, 0x04, 0x00, 0x04, 0x08, 0x81, 0x47, 0x08, b'd']
        );
    }

    #[test]
    fn long_lengths_use_a_separate_integer() {
        let mut out = Vec::new();
        Instruction::CopyTarget {
            offset: 128,
            len: 64,
        }
        .encode(&mut out);
        assert_eq!(out, [0x40, 0x40, 0x81, 0x00]);
        out.clear();
        Instruction::NewData { len: 63 }.encode(&mut out);
        assert_eq!(out, [0xbf]);
    }

    #[test]
    fn overlapping_target_copy_repeats() {
        let w = window(
            0,
            10,
            vec![
                Instruction::NewData { len: 3 },
                Instruction::CopyTarget { offset: 1, len: 7 },
            ],
            b"xab",
        );
        let mut out = Vec::new();
        w.apply(&[], &mut out).expect("valid window");
        assert_eq!(out, b"xababababa");
    }

    #[test]
    fn invalid_windows_are_refused_and_leave_output_alone() {
        type Expect = fn(&DeltaError) -> bool;
        let cases: Vec<(Window, Expect)> = vec![
            (
                window(
                    4,
                    4,
                    vec![Instruction::CopySource { offset: 2, len: 4 }],
                    b"",
                ),
                |e| {
                    matches!(
                        e,
                        DeltaError::SourceOutOfBounds {
                            index: 0,
                            offset: 2,
                            len: 4,
                            source_len: 4
                        }
                    )
                },
            ),
            (
                window(
                    0,
                    4,
                    vec![
                        Instruction::NewData { len: 1 },
                        Instruction::CopyTarget { offset: 1, len: 3 },
                    ],
                    b"a",
                ),
                |e| {
                    matches!(
                        e,
                        DeltaError::TargetCopyNotBehind {
                            index: 1,
                            offset: 1,
                            position: 1
                        }
                    )
                },
            ),
            (
                window(0, 2, vec![Instruction::NewData { len: 1 }], b"ab"),
                |e| {
                    matches!(
                        e,
                        DeltaError::TargetNotFilled {
                            produced: 1,
                            target_len: 2
                        }
                    )
                },
            ),
            (
                window(0, 1, vec![Instruction::NewData { len: 1 }], b"ab"),
                |e| {
                    matches!(
                        e,
                        DeltaError::NewDataNotExhausted {
                            used: 1,
                            new_len: 2
                        }
                    )
                },
            ),
            (
                window(0, 1, vec![Instruction::NewData { len: 2 }], b"ab"),
                |e| matches!(e, DeltaError::TargetOverflow { index: 0, .. }),
            ),
            (
                window(0, 3, vec![Instruction::NewData { len: 3 }], b"ab"),
                |e| matches!(e, DeltaError::NewDataOutOfBounds { index: 0, .. }),
            ),
            (
                window(0, 0, vec![Instruction::NewData { len: 0 }], b""),
                |e| matches!(e, DeltaError::ZeroLengthInstruction { index: 0 }),
            ),
        ];
        for (w, expected) in cases {
            let source = vec![b's'; w.source_len as usize];
            let mut out = b"keep".to_vec();
            let err = w.apply(&source, &mut out).expect_err("invalid window");
            assert!(expected(&err), "unexpected error {err:?} for {w:?}");
            assert_eq!(out, b"keep");
            let mut bytes = Vec::new();
            assert!(w.encode(0, 0, &mut bytes).is_err());
            assert!(bytes.is_empty());
        }
    }

    #[test]
    fn wrong_source_view_length() {
        let w = window(3, 0, vec![], b"");
        let err = w.apply(b"ab", &mut Vec::new()).expect_err("wrong length");
        assert!(matches!(
            err,
            DeltaError::SourceViewLength {
                expected: 3,
                actual: 2
            }
        ));
    }

    #[test]
    fn fulltext() {
        let w = Window::fulltext(b"hello");
        let mut out = Vec::new();
        w.apply(&[], &mut out).expect("valid");
        assert_eq!(out, b"hello");
        assert!(Window::fulltext(b"").instructions.is_empty());
    }
}
