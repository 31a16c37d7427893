//! Walking a list against a prototype (protocol doc 1.7).

use svelto_core::Revnum;

use crate::error::WireError;
use crate::item::Item;

/// Reads the elements of a tuple in order.
///
/// Required elements use `number()`, `string()`, ...; elements after a `?` in a prototype
/// use `opt_*()`, which give `None` once the tuple has ended. Optional tuples `[ x ]`
/// (written `( )` or `( x )`) use `opt_tuple()` and the `bracket_*()` helpers. Elements
/// after the last one read are ignored, as the protocol requires.
#[derive(Debug, Clone)]
pub struct TupleReader<'a> {
    items: &'a [Item],
    pos: usize,
}

const END: &str = "end of tuple";

impl<'a> TupleReader<'a> {
    pub fn new(items: &'a [Item]) -> Self {
        TupleReader { items, pos: 0 }
    }

    /// A reader over `item`, which must be a list.
    pub fn from_item(item: &'a Item) -> Result<Self, WireError> {
        match item {
            Item::List(items) => Ok(TupleReader::new(items)),
            other => Err(WireError::Tuple {
                position: 0,
                expected: "list",
                found: other.kind_name(),
            }),
        }
    }

    /// Index of the next element.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// The elements not read yet.
    pub fn rest(&self) -> &'a [Item] {
        self.items.get(self.pos..).unwrap_or(&[])
    }

    pub fn is_at_end(&self) -> bool {
        self.pos >= self.items.len()
    }

    fn mismatch(&self, expected: &'static str) -> WireError {
        WireError::Tuple {
            position: self.pos,
            expected,
            found: self.items.get(self.pos).map_or(END, Item::kind_name),
        }
    }

    /// Reads the next element with `f`, which returns `None` on a type mismatch.
    fn take<T>(
        &mut self,
        expected: &'static str,
        f: impl FnOnce(&'a Item) -> Option<T>,
    ) -> Result<T, WireError> {
        match self.items.get(self.pos).and_then(f) {
            Some(v) => {
                self.pos += 1;
                Ok(v)
            }
            None => Err(self.mismatch(expected)),
        }
    }

    /// Like [`take`](Self::take), but `None` when the tuple has ended.
    fn take_opt<T>(
        &mut self,
        expected: &'static str,
        f: impl FnOnce(&'a Item) -> Option<T>,
    ) -> Result<Option<T>, WireError> {
        if self.is_at_end() {
            Ok(None)
        } else {
            self.take(expected, f).map(Some)
        }
    }

    pub fn number(&mut self) -> Result<u64, WireError> {
        self.take("number", as_number)
    }

    /// A revision number: a number no larger than 2^63 − 1 (protocol doc 1.5).
    pub fn rev(&mut self) -> Result<Revnum, WireError> {
        self.take("revision number", as_rev)
    }

    pub fn string(&mut self) -> Result<&'a [u8], WireError> {
        self.take("string", as_string)
    }

    pub fn word(&mut self) -> Result<&'a str, WireError> {
        self.take("word", as_word)
    }

    /// The word `true` or `false`.
    pub fn bool(&mut self) -> Result<bool, WireError> {
        self.take("bool (true or false)", as_bool)
    }

    pub fn list(&mut self) -> Result<&'a [Item], WireError> {
        self.take("list", as_list)
    }

    /// A nested tuple, read with its own reader.
    pub fn tuple(&mut self) -> Result<TupleReader<'a>, WireError> {
        self.list().map(TupleReader::new)
    }

    pub fn opt_number(&mut self) -> Result<Option<u64>, WireError> {
        self.take_opt("number", as_number)
    }

    pub fn opt_rev(&mut self) -> Result<Option<Revnum>, WireError> {
        self.take_opt("revision number", as_rev)
    }

    pub fn opt_string(&mut self) -> Result<Option<&'a [u8]>, WireError> {
        self.take_opt("string", as_string)
    }

    pub fn opt_word(&mut self) -> Result<Option<&'a str>, WireError> {
        self.take_opt("word", as_word)
    }

    pub fn opt_bool(&mut self) -> Result<Option<bool>, WireError> {
        self.take_opt("bool (true or false)", as_bool)
    }

    pub fn opt_list(&mut self) -> Result<Option<&'a [Item]>, WireError> {
        self.take_opt("list", as_list)
    }

    /// An optional tuple `[ ... ]`: `None` for `( )`, a reader over its elements otherwise.
    pub fn opt_tuple(&mut self) -> Result<Option<TupleReader<'a>>, WireError> {
        let items = self.list()?;
        Ok((!items.is_empty()).then(|| TupleReader::new(items)))
    }

    /// `[ rev:number ]`, the usual way of sending "no revision".
    pub fn bracket_rev(&mut self) -> Result<Option<Revnum>, WireError> {
        self.bracket("optional revision ( ) or ( rev )", as_rev)
    }

    /// `[ n:number ]`.
    pub fn bracket_number(&mut self) -> Result<Option<u64>, WireError> {
        self.bracket("optional number ( ) or ( n )", as_number)
    }

    /// `[ s:string ]`.
    pub fn bracket_string(&mut self) -> Result<Option<&'a [u8]>, WireError> {
        self.bracket("optional string ( ) or ( s )", as_string)
    }

    /// `[ b:bool ]`.
    pub fn bracket_bool(&mut self) -> Result<Option<bool>, WireError> {
        self.bracket("optional bool ( ) or ( b )", as_bool)
    }

    fn bracket<T>(
        &mut self,
        expected: &'static str,
        f: impl Fn(&'a Item) -> Option<T>,
    ) -> Result<Option<T>, WireError> {
        // Elements of the inner tuple after the first are ignored, like any tuple's.
        self.take(expected, |item| match as_list(item)? {
            [] => Some(None),
            [first, ..] => f(first).map(Some),
        })
    }
}

fn as_number(item: &Item) -> Option<u64> {
    item.as_number()
}

fn as_rev(item: &Item) -> Option<Revnum> {
    item.as_number().filter(|&n| i64::try_from(n).is_ok())
}

fn as_string(item: &Item) -> Option<&[u8]> {
    item.as_string()
}

fn as_word(item: &Item) -> Option<&str> {
    item.as_word()
}

fn as_bool(item: &Item) -> Option<bool> {
    match item.as_word()? {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

fn as_list(item: &Item) -> Option<&[Item]> {
    item.as_list()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a failing unwrap is a failing test
mod tests {
    use super::*;

    #[test]
    fn required_then_optional() {
        let items = vec![
            Item::word("list"),
            Item::string("a"),
            Item::Number(3),
            Item::bool(true),
        ];
        let mut t = TupleReader::new(&items);
        assert_eq!(t.word().unwrap(), "list");
        assert_eq!(t.string().unwrap(), b"a");
        assert_eq!(t.opt_rev().unwrap(), Some(3));
        assert_eq!(t.opt_bool().unwrap(), Some(true));
        assert_eq!(t.opt_string().unwrap(), None);
        assert!(t.is_at_end());
        assert_eq!(
            t.number(),
            Err(WireError::Tuple {
                position: 4,
                expected: "number",
                found: "end of tuple"
            })
        );
    }

    #[test]
    fn mismatch_names_position_and_does_not_advance() {
        let items = vec![Item::Number(1), Item::word("maybe")];
        let mut t = TupleReader::new(&items);
        assert_eq!(
            t.string(),
            Err(WireError::Tuple {
                position: 0,
                expected: "string",
                found: "number"
            })
        );
        assert_eq!(t.position(), 0);
        t.number().unwrap();
        let err = t.bool().unwrap_err();
        assert_eq!(err.svn_error_code(), 210004);
        assert!(err.to_string().contains("element 1"), "{err}");
    }

    #[test]
    fn revisions_above_i64_are_malformed() {
        let items = vec![Item::Number(1 << 63), Item::Number((1 << 63) - 1)];
        let mut t = TupleReader::new(&items);
        assert!(t.rev().is_err());
        assert_eq!(t.number().unwrap(), 1 << 63);
        assert_eq!(t.rev().unwrap(), (1 << 63) - 1);
    }

    #[test]
    fn optional_tuples() {
        let items = vec![
            Item::opt(None),
            Item::opt(Some(Item::Number(5))),
            Item::list(vec![Item::string("x"), Item::word("extra")]),
            Item::opt(Some(Item::word("five"))),
        ];
        let mut t = TupleReader::new(&items);
        assert_eq!(t.bracket_rev().unwrap(), None);
        assert_eq!(t.bracket_rev().unwrap(), Some(5));
        assert_eq!(t.bracket_string().unwrap(), Some(&b"x"[..]));
        assert!(t.bracket_number().is_err());
        assert_eq!(t.opt_tuple().unwrap().unwrap().word().unwrap(), "five");
    }
}
