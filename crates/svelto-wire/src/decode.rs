//! The sans-io decoder (protocol doc 1.3–1.6).
//!
//! Two phases. A framer scans the buffer for the end of the next top-level item, keeping its
//! state between calls so that each byte is looked at once and string payloads are skipped
//! by their length. Only when the frame is complete is it parsed into an [`Item`] tree.
//!
//! The doc's `Decoded::Incomplete { hint }` is `Ok(None)` here, with the hint available from
//! [`Decoder::hint`]. String payloads are copied into the tree (`Item::String(Vec<u8>)`).
//!
//! What the tree will cost is known before it is built: the framer counts every item
//! ([`ITEM_BYTES`] each), every string's and word's bytes and each list's length, and refuses
//! an item whose tree would exceed [`Limits::max_decoded`] (a 16 MiB request of `0 0 0 ...`
//! would otherwise be 8 million items, 256 MB). Lists are then allocated at their exact
//! length, so the tree takes what was counted.

use crate::error::{Malformed, WireError};
use crate::item::Item;

/// The bounds the decoder enforces (protocol doc 1.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Most bytes one top-level item may take, leading whitespace included. A string whose
    /// claimed length would cross it is refused as soon as its `:` is read.
    pub max_request: usize,
    /// Lists may nest at most `max_depth - 1` deep: opening a list that would make
    /// `max_depth` enclosing lists is refused, as in svnserve.
    pub max_depth: usize,
    /// Longest word accepted.
    pub max_word_len: usize,
    /// Most bytes the decoded tree of one top-level item may take: [`ITEM_BYTES`] per item
    /// plus the bytes of its strings and words and 4 per list. A request of tiny items
    /// (`0 0 0 ...`, `( ) ( ) ...`) is refused once its tree would cross it.
    pub max_decoded: usize,
}

/// What one item costs in a decoded tree, besides its string or word bytes.
pub const ITEM_BYTES: usize = std::mem::size_of::<Item>();
/// What the framer keeps per list (its length) while it frames an item.
const LIST_BYTES: usize = std::mem::size_of::<u32>();

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_request: 16 * 1024 * 1024,
            max_depth: 64,
            max_word_len: 31,
            max_decoded: 32 * 1024 * 1024,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Between items: whitespace, an item's first byte, or `)` inside a list.
    Between,
    Number {
        value: u64,
    },
    Word {
        len: usize,
    },
    Payload {
        remaining: usize,
    },
    /// After a string payload or a `)`: exactly one whitespace byte must follow.
    Terminator,
}

/// A sans-io decoder of top-level items.
///
/// Call [`decode`](Decoder::decode) with the unconsumed input; when it returns
/// `Ok(None)`, append more bytes and call it again with the whole unconsumed input (the same
/// first byte as before). When it returns `Ok(Some((item, consumed)))`, drop `consumed`
/// bytes from the front before the next call. Bytes already scanned are not scanned again.
#[derive(Debug, Clone)]
pub struct Decoder {
    limits: Limits,
    pos: usize,
    depth: usize,
    started: bool,
    state: State,
    /// Bytes the tree of the item being framed will take (see [`Limits::max_decoded`]).
    cost: usize,
    /// The item count of each list of the item being framed, in the order they open.
    lists: Vec<u32>,
    /// Indexes into `lists` of the lists open at `pos`.
    open: Vec<usize>,
    /// The cost of the last item returned.
    last_cost: usize,
}

/// Decodes one top-level item from the start of `buf` without keeping state.
pub fn decode(buf: &[u8], limits: &Limits) -> Result<Option<(Item, usize)>, WireError> {
    Decoder::new(*limits).decode(buf)
}

fn is_ws(b: u8) -> bool {
    b == b' ' || b == b'\n'
}

impl Decoder {
    pub fn new(limits: Limits) -> Self {
        Decoder {
            limits,
            pos: 0,
            depth: 0,
            started: false,
            state: State::Between,
            cost: 0,
            lists: Vec::new(),
            open: Vec::new(),
            last_cost: 0,
        }
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Forgets any partly scanned item (keeping small scratch space).
    pub fn reset(&mut self) {
        let mut lists = std::mem::take(&mut self.lists);
        let mut open = std::mem::take(&mut self.open);
        let last_cost = self.last_cost;
        lists.clear();
        open.clear();
        if lists.capacity() > 1024 {
            lists = Vec::new();
        }
        *self = Decoder {
            lists,
            open,
            last_cost,
            ..Decoder::new(self.limits)
        };
    }

    /// What the tree of the last item [`decode`](Decoder::decode) returned takes, by the
    /// accounting of [`Limits::max_decoded`].
    pub fn last_cost(&self) -> usize {
        self.last_cost
    }

    /// What the tree of the item being framed will take, so far.
    pub fn pending_cost(&self) -> usize {
        self.cost
    }

    /// Bytes certainly still missing, when known: inside a string payload, the payload bytes
    /// still to come plus one for the terminator.
    pub fn hint(&self) -> Option<usize> {
        match self.state {
            State::Payload { remaining } => remaining.checked_add(1),
            _ => None,
        }
    }

    /// Whether the decoder is in the middle of an item (not just leading whitespace).
    pub fn is_mid_item(&self) -> bool {
        self.started
    }

    /// Call at end of input. Only whitespace pending is a clean close; anything else means
    /// the peer went away in the middle of an item.
    pub fn finish(&self) -> Result<(), WireError> {
        if self.started {
            Err(WireError::ConnectionClosed { offset: self.pos })
        } else {
            Ok(())
        }
    }

    /// Decodes the next top-level item from `buf`; see the type's documentation for the
    /// calling convention. After an error the decoder must be [`reset`](Decoder::reset)
    /// (the connection is normally closed instead).
    pub fn decode(&mut self, buf: &[u8]) -> Result<Option<(Item, usize)>, WireError> {
        if buf.len() < self.pos {
            // The caller broke the convention; start over rather than index out of range.
            self.reset();
        }
        match self.frame(buf)? {
            None => Ok(None),
            Some(end) => {
                let lists = std::mem::take(&mut self.lists);
                self.last_cost = self.cost;
                let frame = &buf[..end];
                let mut parser = Parser {
                    buf: frame,
                    pos: 0,
                    lists: &lists,
                    next_list: 0,
                };
                let item = parser.item();
                self.lists = lists;
                self.reset();
                Ok(Some((item?, end)))
            }
        }
    }

    fn malformed(&self, offset: usize, reason: Malformed) -> WireError {
        WireError::Malformed { offset, reason }
    }

    /// Counts `bytes` more of the tree, refusing the item once it is over its bound.
    fn charge(&mut self, at: usize, bytes: usize) -> Result<(), WireError> {
        self.cost = self.cost.saturating_add(bytes);
        if self.cost > self.limits.max_decoded {
            return Err(WireError::DecodedTooLarge {
                offset: at,
                limit: self.limits.max_decoded,
            });
        }
        Ok(())
    }

    /// An item begins at `at`: it costs its slot, and counts in its enclosing list.
    fn item_starts(&mut self, at: usize) -> Result<(), WireError> {
        self.started = true;
        if let Some(&i) = self.open.last() {
            if let Some(n) = self.lists.get_mut(i) {
                *n = n.saturating_add(1);
            }
        }
        self.charge(at, ITEM_BYTES)
    }

    /// Scans on from `self.pos`; returns the length of the complete top-level item.
    fn frame(&mut self, buf: &[u8]) -> Result<Option<usize>, WireError> {
        let limit = self.limits.max_request;
        let end = buf.len().min(limit);
        while self.pos < end {
            let at = self.pos;
            let b = buf[at];
            let mut item_ended = false;
            match self.state {
                State::Between => {
                    if is_ws(b) {
                    } else if b.is_ascii_digit() {
                        self.item_starts(at)?;
                        self.state = State::Number {
                            value: u64::from(b - b'0'),
                        };
                    } else if b.is_ascii_alphabetic() {
                        self.item_starts(at)?;
                        self.charge(at, 1)?;
                        self.state = State::Word { len: 1 };
                    } else if b == b'(' {
                        if self.depth + 1 >= self.limits.max_depth {
                            return Err(self
                                .malformed(at, Malformed::NestedTooDeeply(self.limits.max_depth)));
                        }
                        self.item_starts(at)?;
                        self.charge(at, LIST_BYTES)?;
                        self.open.push(self.lists.len());
                        self.lists.push(0);
                        self.depth += 1;
                    } else if b == b')' && self.depth > 0 {
                        self.open.pop();
                        self.depth -= 1;
                        self.state = State::Terminator;
                    } else {
                        return Err(self.malformed(at, Malformed::UnexpectedByte(b)));
                    }
                    self.pos += 1;
                }
                State::Number { value } => {
                    if b.is_ascii_digit() {
                        let value = value
                            .checked_mul(10)
                            .and_then(|v| v.checked_add(u64::from(b - b'0')))
                            .ok_or_else(|| self.malformed(at, Malformed::NumberOverflow))?;
                        self.state = State::Number { value };
                    } else if b == b':' {
                        // The payload, then one terminator, must fit in the request.
                        let fits = usize::try_from(value)
                            .ok()
                            .and_then(|n| (at + 1).checked_add(n))
                            .and_then(|e| e.checked_add(1))
                            .filter(|&e| e <= limit);
                        if fits.is_none() {
                            return Err(WireError::RequestTooLarge { offset: at, limit });
                        }
                        let remaining = usize::try_from(value).expect("checked just above");
                        self.charge(at, remaining)?;
                        self.state = if remaining == 0 {
                            State::Terminator
                        } else {
                            State::Payload { remaining }
                        };
                    } else if is_ws(b) {
                        item_ended = true;
                    } else {
                        return Err(self.malformed(at, Malformed::UnexpectedByte(b)));
                    }
                    self.pos += 1;
                }
                State::Word { len } => {
                    if b.is_ascii_alphanumeric() || b == b'-' {
                        if len + 1 > self.limits.max_word_len {
                            return Err(self
                                .malformed(at, Malformed::WordTooLong(self.limits.max_word_len)));
                        }
                        self.charge(at, 1)?;
                        self.state = State::Word { len: len + 1 };
                    } else if is_ws(b) {
                        item_ended = true;
                    } else {
                        return Err(self.malformed(at, Malformed::UnexpectedByte(b)));
                    }
                    self.pos += 1;
                }
                State::Payload { remaining } => {
                    let skip = remaining.min(end - at);
                    self.pos += skip;
                    self.state = if skip == remaining {
                        State::Terminator
                    } else {
                        State::Payload {
                            remaining: remaining - skip,
                        }
                    };
                }
                State::Terminator => {
                    if !is_ws(b) {
                        return Err(self.malformed(at, Malformed::UnexpectedByte(b)));
                    }
                    item_ended = true;
                    self.pos += 1;
                }
            }
            if item_ended {
                self.state = State::Between;
                if self.depth == 0 {
                    return Ok(Some(self.pos));
                }
            }
        }
        if self.pos >= limit && buf.len() > limit {
            return Err(WireError::RequestTooLarge {
                offset: limit,
                limit,
            });
        }
        Ok(None)
    }
}

/// Parses a frame the framer has already validated. Errors here mean a framer bug; they are
/// reported rather than panicking.
struct Parser<'a> {
    buf: &'a [u8],
    pos: usize,
    /// Each list's length, as the framer counted them, in the order lists open.
    lists: &'a [u32],
    next_list: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.buf.get(self.pos).copied()
    }

    fn bad(&self) -> WireError {
        match self.peek() {
            Some(b) => WireError::Malformed {
                offset: self.pos,
                reason: Malformed::UnexpectedByte(b),
            },
            None => WireError::ConnectionClosed { offset: self.pos },
        }
    }

    fn skip_ws(&mut self) {
        while self.peek().is_some_and(is_ws) {
            self.pos += 1;
        }
    }

    fn terminator(&mut self) -> Result<(), WireError> {
        if self.peek().is_some_and(is_ws) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.bad())
        }
    }

    fn item(&mut self) -> Result<Item, WireError> {
        self.skip_ws();
        let first = self.peek().ok_or_else(|| self.bad())?;
        if first.is_ascii_digit() {
            let mut value: u64 = 0;
            while let Some(d) = self.peek().filter(u8::is_ascii_digit) {
                value = value
                    .checked_mul(10)
                    .and_then(|v| v.checked_add(u64::from(d - b'0')))
                    .ok_or_else(|| self.bad())?;
                self.pos += 1;
            }
            if self.peek() == Some(b':') {
                self.pos += 1;
                let start = self.pos;
                let payload = usize::try_from(value)
                    .ok()
                    .and_then(|n| start.checked_add(n))
                    .and_then(|end| self.buf.get(start..end))
                    .ok_or_else(|| self.bad())?;
                self.pos += payload.len();
                let item = Item::String(payload.to_vec());
                self.terminator()?;
                Ok(item)
            } else {
                self.terminator()?;
                Ok(Item::Number(value))
            }
        } else if first.is_ascii_alphabetic() {
            let start = self.pos;
            while self
                .peek()
                .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'-')
            {
                self.pos += 1;
            }
            let word = std::str::from_utf8(&self.buf[start..self.pos])
                .map_err(|_| self.bad())?
                .to_owned();
            self.terminator()?;
            Ok(Item::Word(word))
        } else if first == b'(' {
            self.pos += 1;
            let len = self.lists.get(self.next_list).copied().unwrap_or(0);
            self.next_list += 1;
            let mut items = Vec::with_capacity(len as usize);
            loop {
                self.skip_ws();
                match self.peek() {
                    Some(b')') => {
                        self.pos += 1;
                        self.terminator()?;
                        return Ok(Item::List(items));
                    }
                    Some(_) => items.push(self.item()?),
                    None => return Err(self.bad()),
                }
            }
        } else {
            Err(self.bad())
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a failing unwrap is a failing test
mod tests {
    use super::*;

    fn one(buf: &[u8]) -> Result<Option<(Item, usize)>, WireError> {
        decode(buf, &Limits::default())
    }

    fn reason(buf: &[u8]) -> (usize, Malformed) {
        match one(buf) {
            Err(WireError::Malformed { offset, reason }) => (offset, reason),
            other => panic!("expected malformed for {buf:?}, got {other:?}"),
        }
    }

    #[test]
    fn basic_items() {
        assert_eq!(one(b"42 ").unwrap(), Some((Item::Number(42), 3)));
        assert_eq!(one(b"007\n").unwrap(), Some((Item::Number(7), 4)));
        assert_eq!(one(b"5:h( )o ").unwrap(), Some((Item::string("h( )o"), 8)));
        assert_eq!(one(b"0: ").unwrap(), Some((Item::string(""), 3)));
        assert_eq!(one(b"  \nabc-1 x").unwrap(), Some((Item::word("abc-1"), 9)));
        assert_eq!(one(b"() ").unwrap(), Some((Item::empty_list(), 3)));
        assert_eq!(
            one(b"(a ) rest").unwrap(),
            Some((Item::list(vec![Item::word("a")]), 5))
        );
    }

    #[test]
    fn incomplete_is_not_an_error() {
        for buf in [
            &b""[..],
            b"  ",
            b"123",
            b"abc",
            b"3:ab",
            b"3:abc",
            b"( 1 )",
            b"( ( ) ",
        ] {
            assert_eq!(one(buf).unwrap(), None, "{buf:?}");
        }
    }

    #[test]
    fn malformed_inputs() {
        assert_eq!(reason(b"12)"), (2, Malformed::UnexpectedByte(b')')));
        assert_eq!(reason(b"( foo) "), (5, Malformed::UnexpectedByte(b')')));
        assert_eq!(reason(b"( 5:hello) "), (9, Malformed::UnexpectedByte(b')')));
        assert_eq!(reason(b"( ( )) "), (5, Malformed::UnexpectedByte(b')')));
        assert_eq!(reason(b") "), (0, Malformed::UnexpectedByte(b')')));
        assert_eq!(reason(b"\tx "), (0, Malformed::UnexpectedByte(b'\t')));
        assert_eq!(reason(b"1\r"), (1, Malformed::UnexpectedByte(b'\r')));
        assert_eq!(reason(b"-1 "), (0, Malformed::UnexpectedByte(b'-')));
        assert_eq!(reason(b"\xc3 "), (0, Malformed::UnexpectedByte(0xc3)));
        assert_eq!(reason(b"ab_c "), (2, Malformed::UnexpectedByte(b'_')));
        assert_eq!(
            reason(b"18446744073709551616 "),
            (19, Malformed::NumberOverflow)
        );
        assert_eq!(reason(&[b'a'; 32]), (31, Malformed::WordTooLong(31)));
    }

    #[test]
    fn limits_are_checked_early() {
        assert_eq!(one(&[b'a'; 31]).unwrap(), None);
        assert_eq!(
            one(b"18446744073709551615 ").unwrap(),
            Some((Item::Number(u64::MAX), 21))
        );
        let limits = Limits {
            max_request: 10,
            ..Limits::default()
        };
        // 3:abc + terminator = 6 bytes fits; 7:... would need 10 bytes with its header+1.
        assert!(decode(b"3:abc ", &limits).unwrap().is_some());
        assert_eq!(decode(b"7:", &limits), Ok(None));
        assert_eq!(
            decode(b"8:", &limits),
            Err(WireError::RequestTooLarge {
                offset: 1,
                limit: 10
            })
        );
        assert_eq!(
            one(b"99999999999999999:"),
            Err(WireError::RequestTooLarge {
                offset: 17,
                limit: 16 * 1024 * 1024
            })
        );
        assert_eq!(decode(b"          ", &limits), Ok(None));
        assert_eq!(
            decode(b"           ", &limits),
            Err(WireError::RequestTooLarge {
                offset: 10,
                limit: 10
            })
        );
    }

    #[test]
    fn nesting() {
        let ok = [b"( ".repeat(63), b") ".repeat(63)].concat();
        assert!(one(&ok).unwrap().is_some());
        let deep = b"( ".repeat(64);
        assert_eq!(reason(&deep), (126, Malformed::NestedTooDeeply(64)));
    }

    #[test]
    fn the_decoded_tree_is_counted_and_bounded() {
        let mut d = Decoder::new(Limits::default());
        let (_, n) = d.decode(b"( word 3:abc ( 1 ) ) ").unwrap().unwrap();
        assert_eq!(n, 21);
        // Five items; "word" and "abc"; two lists.
        assert_eq!(d.last_cost(), 5 * ITEM_BYTES + 4 + 3 + 2 * LIST_BYTES);

        let limits = Limits {
            max_decoded: 1000,
            ..Limits::default()
        };
        // A list of tiny items: refused at the item that crosses the bound.
        let zeros = [&b"( "[..], &b"0 ".repeat(100), b") "].concat();
        let crossing = (1000 - ITEM_BYTES - LIST_BYTES) / ITEM_BYTES;
        assert_eq!(
            decode(&zeros, &limits),
            Err(WireError::DecodedTooLarge {
                offset: 2 + 2 * crossing,
                limit: 1000
            })
        );
        let empties = [&b"( "[..], &b"( ) ".repeat(100), b") "].concat();
        assert!(matches!(
            decode(&empties, &limits),
            Err(WireError::DecodedTooLarge { limit: 1000, .. })
        ));
        // Refused on the length, before the string's bytes have arrived.
        assert!(matches!(
            decode(b"( 2000:", &limits),
            Err(WireError::DecodedTooLarge { offset: 6, .. })
        ));
        // Under the bound: decoded, each list at its exact length.
        let few = [&b"( "[..], &b"0 ".repeat(20), b"( 1 2 ) ) "].concat();
        let (item, _) = decode(&few, &limits).unwrap().unwrap();
        let items = item.as_list().unwrap();
        assert_eq!(items.len(), 21);
        if let Item::List(v) = &item {
            assert_eq!(v.capacity(), 21);
        }
        assert_eq!(items[20].as_list().map(<[Item]>::len), Some(2));
    }

    #[test]
    fn a_tiny_item_request_of_max_size_is_refused() {
        let zeros = [&b"( "[..], &b"0 ".repeat(8 << 20), b") "].concat();
        assert!(matches!(
            one(&zeros),
            Err(WireError::DecodedTooLarge { .. })
        ));
    }

    #[test]
    fn resumes_without_rescanning() {
        let mut d = Decoder::new(Limits::default());
        let full = b"( 10:0123456789 word ) next";
        assert_eq!(d.decode(&full[..7]).unwrap(), None);
        assert_eq!(d.hint(), Some(9));
        assert!(d.is_mid_item());
        assert!(d.finish().is_err());
        assert_eq!(d.decode(&full[..15]).unwrap(), None);
        let (item, n) = d.decode(full).unwrap().unwrap();
        assert_eq!(n, 23);
        assert_eq!(
            item,
            Item::list(vec![Item::string("0123456789"), Item::word("word")])
        );
        assert!(!d.is_mid_item());
        assert_eq!(d.finish(), Ok(()));
    }
}
