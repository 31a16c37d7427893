/// One item of the svn:// protocol (protocol doc 1.1).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Item {
    Number(u64),
    /// A byte string; any bytes at all, UTF-8 only by convention.
    String(Vec<u8>),
    /// An ASCII identifier: a letter, then letters, digits and `-`.
    Word(String),
    List(Vec<Item>),
}

/// The longest word the 1.14 item reader accepts inside an item; Svelto never writes a
/// longer one (protocol doc 1.5).
pub const MAX_WRITTEN_WORD_LEN: usize = 24;

/// Whether `w` can be written as a word: an ASCII letter, then ASCII letters, digits or `-`.
pub fn is_valid_word(w: &str) -> bool {
    let mut bytes = w.bytes();
    matches!(bytes.next(), Some(b) if b.is_ascii_alphabetic())
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

impl Item {
    /// A word item. The caller supplies fixed vocabulary; an invalid word, or one longer
    /// than the 24 bytes the 1.14 reader accepts, would be refused by the peer, which debug
    /// builds catch here.
    pub fn word(w: impl Into<String>) -> Item {
        let w = w.into();
        debug_assert!(is_valid_word(&w), "not a valid svn:// word: {w:?}");
        debug_assert!(
            w.len() <= MAX_WRITTEN_WORD_LEN,
            "word too long to send: {w:?}"
        );
        Item::Word(w)
    }

    pub fn string(s: impl Into<Vec<u8>>) -> Item {
        Item::String(s.into())
    }

    pub fn list(items: impl Into<Vec<Item>>) -> Item {
        Item::List(items.into())
    }

    /// The word `true` or `false`.
    pub fn bool(b: bool) -> Item {
        Item::Word(if b { "true" } else { "false" }.to_owned())
    }

    /// The empty list `( )`.
    pub fn empty_list() -> Item {
        Item::List(Vec::new())
    }

    /// An optional tuple of one element: `( x )` for `Some(x)`, `( )` for `None`.
    pub fn opt(item: Option<Item>) -> Item {
        Item::List(item.into_iter().collect())
    }

    pub fn as_number(&self) -> Option<u64> {
        match self {
            Item::Number(n) => Some(*n),
            _ => None,
        }
    }

    pub fn as_string(&self) -> Option<&[u8]> {
        match self {
            Item::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_word(&self) -> Option<&str> {
        match self {
            Item::Word(w) => Some(w),
            _ => None,
        }
    }

    pub fn as_list(&self) -> Option<&[Item]> {
        match self {
            Item::List(items) => Some(items),
            _ => None,
        }
    }

    /// The name of this item's type, as protocol prototypes write it.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Item::Number(_) => "number",
            Item::String(_) => "string",
            Item::Word(_) => "word",
            Item::List(_) => "list",
        }
    }

    /// Appends the canonical encoding (protocol doc 1.2): every item, including a list's
    /// closing `)`, followed by exactly one space.
    pub fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Item::Number(n) => {
                write_decimal(*n, out);
                out.push(b' ');
            }
            Item::String(s) => {
                write_decimal(s.len() as u64, out);
                out.push(b':');
                out.extend_from_slice(s);
                out.push(b' ');
            }
            Item::Word(w) => {
                out.extend_from_slice(w.as_bytes());
                out.push(b' ');
            }
            Item::List(items) => {
                out.extend_from_slice(b"( ");
                for item in items {
                    item.encode(out);
                }
                out.extend_from_slice(b") ");
            }
        }
    }

    /// The canonical encoding as a new buffer.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode(&mut out);
        out
    }
}

fn write_decimal(mut n: u64, out: &mut Vec<u8>) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a failing unwrap is a failing test
mod tests {
    use super::*;

    #[test]
    fn canonical_forms() {
        assert_eq!(Item::Number(42).to_bytes(), b"42 ");
        assert_eq!(Item::Number(0).to_bytes(), b"0 ");
        assert_eq!(Item::Number(u64::MAX).to_bytes(), b"18446744073709551615 ");
        assert_eq!(Item::string("hello").to_bytes(), b"5:hello ");
        assert_eq!(Item::string("").to_bytes(), b"0: ");
        assert_eq!(Item::word("true").to_bytes(), b"true ");
        assert_eq!(Item::empty_list().to_bytes(), b"( ) ");
        let l = Item::list(vec![
            Item::word("word"),
            Item::string("abc"),
            Item::Number(42),
            Item::empty_list(),
        ]);
        assert_eq!(l.to_bytes(), b"( word 3:abc 42 ( ) ) ");
    }

    #[test]
    fn words() {
        assert!(is_valid_word("edit-pipeline"));
        assert!(is_valid_word("a1"));
        assert!(!is_valid_word(""));
        assert!(!is_valid_word("1a"));
        assert!(!is_valid_word("-a"));
        assert!(!is_valid_word("a b"));
    }
}
