//! The one error type of this crate.

use std::error::Error as StdError;
use svelto_core::code;

/// Which of a window's two data sections an error is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    /// The instructions section.
    Instructions,
    /// The new data section.
    NewData,
}

impl std::fmt::Display for Section {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Section::Instructions => "instructions section",
            Section::NewData => "new data section",
        })
    }
}

/// Everything that can be wrong with an svndiff stream, a window, or a request to this crate.
///
/// Errors about one instruction carry its index inside the window; errors found while decoding a
/// stream are wrapped in [`DeltaError::InWindow`], which says which window and where it starts.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DeltaError {
    /// The stream does not start with `SVN` followed by version byte 0, 1 or 2.
    #[error("invalid svndiff header: byte {position} is {found:#04x}, expected {expected}")]
    BadHeader {
        position: usize,
        found: u8,
        expected: &'static str,
    },

    /// A version number other than 0, 1 or 2 was asked for.
    #[error("unsupported svndiff version {0} (supported: 0, 1, 2)")]
    UnsupportedVersion(u8),

    /// A zlib level outside 0..=9 was asked for.
    #[error("invalid zlib compression level {0} (valid: 0 to 9)")]
    InvalidCompressionLevel(u32),

    /// A variable-length integer has more than 10 bytes.
    #[error("{field}: variable-length integer longer than 10 bytes")]
    IntegerTooLong { field: &'static str },

    /// A variable-length integer does not fit in 64 bits.
    #[error("{field}: variable-length integer does not fit in 64 bits")]
    IntegerOverflow { field: &'static str },

    /// A length in a window header is larger than the configured [`crate::Limits`].
    #[error("{field} is {value}, larger than the limit of {limit}")]
    LimitExceeded {
        field: &'static str,
        value: u64,
        limit: u64,
    },

    /// The source view's offset is negative when read as Subversion's signed file size, or its
    /// end does not fit in 64 bits.
    #[error("source view at offset {offset} with length {len} lies outside any possible file")]
    SourceViewOverflow { offset: u64, len: u64 },

    /// A window's source view starts before, or ends before, the previous window's view.
    #[error(
        "source view {offset}+{len} slides backwards from the previous view {prev_offset}+{prev_len}"
    )]
    BackwardSourceView {
        offset: u64,
        len: u64,
        prev_offset: u64,
        prev_len: u64,
    },

    /// A compressed section (svndiff1/2) is empty, so it lacks its original-length prefix.
    #[error("{section}: compressed section lacks its original-length integer")]
    MissingOriginalLength { section: Section },

    /// A compressed section could not be decompressed.
    #[error("{section}: {codec} data is corrupt ({detail})")]
    Decompress {
        section: Section,
        codec: &'static str,
        detail: String,
        #[source]
        cause: Option<Box<dyn StdError + Send + Sync>>,
    },

    /// A compressed section decompressed to a length other than the one it announced.
    #[error("{section}: decompressed to {actual} bytes but announced {expected}")]
    DecompressedLengthMismatch {
        section: Section,
        expected: u64,
        actual: u64,
    },

    /// Compressing a section failed (should not happen with in-memory buffers).
    #[error("{section}: compression failed: {cause}")]
    Compress {
        section: Section,
        #[source]
        cause: std::io::Error,
    },

    /// An instruction's selector bits are `11`.
    #[error("instruction {index}: invalid selector in byte {byte:#04x}")]
    BadInstruction { index: usize, byte: u8 },

    /// The instructions section ends in the middle of an instruction.
    #[error("instruction {index}: truncated at the end of the instructions section")]
    TruncatedInstruction { index: usize },

    /// An instruction copies zero bytes.
    #[error("instruction {index}: length is zero")]
    ZeroLengthInstruction { index: usize },

    /// An instruction would write past the end of the target view.
    #[error(
        "instruction {index}: writes {len} bytes at target position {position}, \
         past the target view length {target_len}"
    )]
    TargetOverflow {
        index: usize,
        position: u64,
        len: u64,
        target_len: u64,
    },

    /// A copy from the source reads past the end of the source view.
    #[error(
        "instruction {index}: copies source bytes {offset}+{len}, \
         past the source view length {source_len}"
    )]
    SourceOutOfBounds {
        index: usize,
        offset: u64,
        len: u64,
        source_len: u64,
    },

    /// A copy from the target does not start before the current target position.
    #[error(
        "instruction {index}: copies from target offset {offset}, \
         not before the current target position {position}"
    )]
    TargetCopyNotBehind {
        index: usize,
        offset: u64,
        position: u64,
    },

    /// A copy from new data reads past the end of the new data section.
    #[error(
        "instruction {index}: takes {len} bytes of new data at {position}, \
         but the new data section has {new_len} bytes"
    )]
    NewDataOutOfBounds {
        index: usize,
        position: u64,
        len: u64,
        new_len: u64,
    },

    /// The instructions produce fewer bytes than the target view length.
    #[error("instructions produce {produced} bytes, but the target view length is {target_len}")]
    TargetNotFilled { produced: u64, target_len: u64 },

    /// The instructions leave new data unused.
    #[error("instructions use {used} bytes of new data, but the new data section has {new_len}")]
    NewDataNotExhausted { used: u64, new_len: u64 },

    /// [`crate::Window::apply`] was given a source view of the wrong length.
    #[error(
        "source view given has {actual} bytes, but the window's source view length is {expected}"
    )]
    SourceViewLength { expected: u64, actual: u64 },

    /// A window's source view does not lie inside the source it is applied to.
    #[error("source view {offset}+{len} lies outside the source of {source_len} bytes")]
    SourceViewOutside {
        offset: u64,
        len: u64,
        source_len: u64,
    },

    /// A length does not fit in this machine's address space.
    #[error("{field} {value} does not fit in memory on this machine")]
    TooLargeForMemory { field: &'static str, value: u64 },

    /// The stream ended before its 4-byte header was complete.
    #[error("svndiff stream ended after {got} of its 4 header bytes")]
    TruncatedHeader { got: usize },

    /// The stream ended in the middle of a window.
    #[error("svndiff stream ended inside window {window}: {buffered} bytes of it are left over")]
    TruncatedWindow { window: u64, buffered: usize },

    /// An error inside one window of an svndiff stream being decoded.
    #[error("window {window} (at stream offset {stream_offset}): {cause}")]
    InStreamWindow {
        window: u64,
        stream_offset: u64,
        cause: Box<DeltaError>,
    },

    /// An error inside one window of a sequence being applied or encoded.
    #[error("window {window} (target offset {target_offset}): {cause}")]
    InWindow {
        window: u64,
        target_offset: u64,
        cause: Box<DeltaError>,
    },
}

impl DeltaError {
    /// Wraps `self` with the number of the stream window it belongs to and the stream offset
    /// where that window starts.
    pub(crate) fn in_stream_window(self, window: u64, stream_offset: u64) -> DeltaError {
        DeltaError::InStreamWindow {
            window,
            stream_offset,
            cause: Box::new(self),
        }
    }

    /// Wraps `self` with the number of the window it belongs to and the offset in the target
    /// where that window's bytes start.
    pub(crate) fn in_window(self, window: u64, target_offset: u64) -> DeltaError {
        DeltaError::InWindow {
            window,
            target_offset,
            cause: Box::new(self),
        }
    }

    /// The innermost error, looking through the window wrappers.
    pub fn root(&self) -> &DeltaError {
        match self {
            DeltaError::InStreamWindow { cause, .. } | DeltaError::InWindow { cause, .. } => {
                cause.root()
            }
            other => other,
        }
    }

    /// The Subversion error code for this problem (`SVN_ERR_SVNDIFF_*`, 185000-185005), as
    /// Subversion reports a delta that does not decode.
    pub fn svn_code(&self) -> u32 {
        match self.root() {
            DeltaError::BadHeader { .. }
            | DeltaError::UnsupportedVersion(_)
            | DeltaError::TruncatedHeader { .. } => code::SVNDIFF_INVALID_HEADER,
            DeltaError::BackwardSourceView { .. } => code::SVNDIFF_BACKWARD_VIEW,
            DeltaError::BadInstruction { .. }
            | DeltaError::TruncatedInstruction { .. }
            | DeltaError::ZeroLengthInstruction { .. }
            | DeltaError::TargetOverflow { .. }
            | DeltaError::SourceOutOfBounds { .. }
            | DeltaError::TargetCopyNotBehind { .. }
            | DeltaError::NewDataOutOfBounds { .. }
            | DeltaError::TargetNotFilled { .. }
            | DeltaError::NewDataNotExhausted { .. } => code::SVNDIFF_INVALID_OPS,
            DeltaError::TruncatedWindow { .. } => code::SVNDIFF_UNEXPECTED_END,
            DeltaError::MissingOriginalLength { .. }
            | DeltaError::Decompress { .. }
            | DeltaError::DecompressedLengthMismatch { .. } => {
                code::SVNDIFF_INVALID_COMPRESSED_DATA
            }
            _ => code::SVNDIFF_CORRUPT_WINDOW,
        }
    }
}
