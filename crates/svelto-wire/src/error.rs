use svelto_core::code;

/// Why a run of bytes is not a well-formed item (protocol doc 1.3, 1.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Malformed {
    /// A byte that cannot appear where it was found (`)` at top level, TAB, CR, ≥ 0x80, a
    /// missing terminator, ...).
    #[error("unexpected byte 0x{0:02x}")]
    UnexpectedByte(u8),
    /// A word longer than [`Limits::max_word_len`](crate::Limits::max_word_len).
    #[error("word is too long (limit {0} bytes)")]
    WordTooLong(usize),
    /// A number that does not fit in 64 bits.
    #[error("number does not fit in 64 bits")]
    NumberOverflow,
    /// A list opened inside too many enclosing lists.
    #[error("items are nested too deeply (limit {0})")]
    NestedTooDeeply(usize),
}

/// An error from decoding items or reading a tuple against a prototype.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// The input is not a well-formed item. `offset` counts from the start of the buffer
    /// given to the decoder (the first byte of this top-level item's leading whitespace).
    #[error("malformed item at byte {offset}: {reason}")]
    Malformed { offset: usize, reason: Malformed },
    /// The item (or a string length it claims) would exceed `limit` bytes.
    #[error(
        "the client request size exceeds the configured limit of {limit} bytes (at byte {offset})"
    )]
    RequestTooLarge { offset: usize, limit: usize },
    /// The item's decoded tree would take more than `limit` bytes
    /// ([`Limits::max_decoded`](crate::Limits::max_decoded)): too many items for its size.
    #[error(
        "the client request holds too many items: decoded, it would take more than {limit} bytes of memory (at byte {offset})"
    )]
    DecodedTooLarge { offset: usize, limit: usize },
    /// Input ended in the middle of an item.
    #[error("connection closed unexpectedly after {offset} bytes of an item")]
    ConnectionClosed { offset: usize },
    /// A tuple element is missing or has the wrong type. `position` is the element's
    /// index within its tuple, counting from 0.
    #[error("malformed tuple: element {position}: expected {expected}, found {found}")]
    Tuple {
        position: usize,
        expected: &'static str,
        found: &'static str,
    },
}

impl WireError {
    /// The Subversion error code a server sends for this error (protocol doc 1.5, 3.3).
    pub fn svn_error_code(&self) -> u64 {
        u64::from(match self {
            // Malformed items or parameters.
            WireError::Malformed { .. } | WireError::Tuple { .. } => code::RA_SVN_MALFORMED_DATA,
            // A request or its decoded tree larger than the configured limit.
            WireError::RequestTooLarge { .. } | WireError::DecodedTooLarge { .. } => {
                code::RA_SVN_REQUEST_SIZE
            }
            // The peer went away in the middle of an item.
            WireError::ConnectionClosed { .. } => code::RA_SVN_CONNECTION_CLOSED,
        })
    }
}
