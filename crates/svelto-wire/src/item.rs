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
        let mut w = ItemWriter(out);
        match self {
            Item::Number(n) => {
                w.number(*n);
            }
            Item::String(s) => {
                w.string(s);
            }
            // As it is: tests build malformed words on purpose.
            Item::Word(word) => {
                w.0.extend_from_slice(word.as_bytes());
                w.0.push(b' ');
            }
            Item::List(items) => {
                w.open();
                for item in items {
                    item.encode(w.0);
                }
                w.close();
            }
        }
    }

    /// The length of what [`Item::encode`] writes, without writing it.
    pub fn encoded_len(&self) -> usize {
        fn digits(mut n: u64) -> usize {
            let mut d = 1;
            while n >= 10 {
                n /= 10;
                d += 1;
            }
            d
        }
        match self {
            Item::Number(n) => digits(*n) + 1,
            Item::String(s) => digits(s.len() as u64) + 1 + s.len() + 1,
            Item::Word(w) => w.len() + 1,
            Item::List(items) => 4 + items.iter().map(Item::encoded_len).sum::<usize>(),
        }
    }

    /// The canonical encoding as a new buffer.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode(&mut out);
        out
    }
}

/// Writes items in the canonical encoding straight into a buffer: a response built piece
/// by piece (a log entry per revision) without an [`Item`] tree and its allocations. The
/// bytes are those [`Item::encode`] writes for the same items.
pub struct ItemWriter<'a>(pub &'a mut Vec<u8>);

impl ItemWriter<'_> {
    /// `( `: a list begins.
    pub fn open(&mut self) -> &mut Self {
        self.0.extend_from_slice(b"( ");
        self
    }

    /// `) `: the list ends.
    pub fn close(&mut self) -> &mut Self {
        self.0.extend_from_slice(b") ");
        self
    }

    pub fn number(&mut self, n: u64) -> &mut Self {
        write_decimal(n, self.0);
        self.0.push(b' ');
        self
    }

    pub fn string(&mut self, s: &[u8]) -> &mut Self {
        write_decimal(s.len() as u64, self.0);
        self.0.push(b':');
        self.0.extend_from_slice(s);
        self.0.push(b' ');
        self
    }

    /// The string `/` + `relpath`: an fspath written from a relpath without building it.
    pub fn fspath(&mut self, relpath: &[u8]) -> &mut Self {
        write_decimal(relpath.len() as u64 + 1, self.0);
        self.0.extend_from_slice(b":/");
        self.0.extend_from_slice(relpath);
        self.0.push(b' ');
        self
    }

    /// A word from the caller's fixed vocabulary (see [`Item::word`]).
    pub fn word(&mut self, w: &str) -> &mut Self {
        debug_assert!(is_valid_word(w) && w.len() <= MAX_WRITTEN_WORD_LEN, "{w:?}");
        self.0.extend_from_slice(w.as_bytes());
        self.0.push(b' ');
        self
    }

    /// The word `true` or `false`.
    pub fn bool(&mut self, b: bool) -> &mut Self {
        self.word(if b { "true" } else { "false" })
    }

    /// `( 3:abc )` for `Some`, `( )` for `None` (see [`Item::opt`]).
    pub fn opt_string(&mut self, s: Option<&[u8]>) -> &mut Self {
        self.open();
        if let Some(s) = s {
            self.string(s);
        }
        self.close()
    }
}

fn write_decimal(n: u64, out: &mut Vec<u8>) {
    let mut digits = [0u8; 20];
    out.extend_from_slice(svelto_core::decimal(n, &mut digits));
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a failing unwrap is a failing test
mod tests {

    #[test]
    fn encoded_len_is_the_length_of_the_encoding() {
        let items = [
            Item::Number(0),
            Item::Number(9),
            Item::Number(10),
            Item::Number(u64::MAX),
            Item::string(""),
            Item::string(vec![b'x'; 1234]),
            Item::word("success"),
            Item::list(vec![]),
            Item::list(vec![
                Item::word("a"),
                Item::list(vec![Item::Number(42), Item::string("b c")]),
            ]),
        ];
        for item in items {
            assert_eq!(item.encoded_len(), item.to_bytes().len(), "{item:?}");
        }
    }

    use super::*;

    #[test]
    fn the_writer_writes_what_items_encode_to() {
        let item = Item::list(vec![
            Item::Number(7),
            Item::string("a b"),
            Item::word("add"),
            Item::bool(true),
            Item::opt(Some(Item::string(""))),
            Item::opt(None),
            Item::empty_list(),
            Item::string("/trunk/a"),
            Item::string("/"),
        ]);
        let mut out = Vec::new();
        ItemWriter(&mut out)
            .open()
            .number(7)
            .string(b"a b")
            .word("add")
            .bool(true)
            .opt_string(Some(b""))
            .opt_string(None)
            .open()
            .close()
            .fspath(b"trunk/a")
            .fspath(b"")
            .close();
        assert_eq!(out, item.to_bytes());
    }

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
