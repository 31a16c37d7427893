//! Commands and responses (protocol doc 3.1, 3.2).

use crate::error::WireError;
use crate::item::Item;
use crate::tuple::TupleReader;

/// `( name ( params ... ) )`.
pub fn command(name: &str, params: Vec<Item>) -> Item {
    Item::list(vec![Item::word(name), Item::List(params)])
}

/// `( success ( results ... ) )`.
pub fn success(results: Vec<Item>) -> Item {
    Item::list(vec![Item::word("success"), Item::List(results)])
}

/// `( failure ( ( apr-err message file line ) ... ) )`, outermost error first.
pub fn failure(chain: &[ErrorLink]) -> Item {
    Item::list(vec![
        Item::word("failure"),
        Item::List(chain.iter().map(ErrorLink::to_item).collect()),
    ])
}

/// One link of an error chain: `( apr-err:number message:string file:string line:number )`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorLink {
    pub apr_err: u64,
    /// Empty means "the standard text for this code".
    pub message: Vec<u8>,
    pub file: Vec<u8>,
    pub line: u64,
}

impl ErrorLink {
    /// A link with no source location (`0: 0`), as Svelto always sends.
    pub fn new(apr_err: u64, message: impl Into<Vec<u8>>) -> Self {
        ErrorLink {
            apr_err,
            message: message.into(),
            file: Vec::new(),
            line: 0,
        }
    }

    pub fn to_item(&self) -> Item {
        Item::list(vec![
            Item::Number(self.apr_err),
            Item::String(self.message.clone()),
            Item::String(self.file.clone()),
            Item::Number(self.line),
        ])
    }

    pub fn from_tuple(mut t: TupleReader<'_>) -> Result<Self, WireError> {
        Ok(ErrorLink {
            apr_err: t.number()?,
            message: t.string()?.to_vec(),
            file: t.string()?.to_vec(),
            line: t.number()?,
        })
    }
}

/// A parsed response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Response<'a> {
    /// The results list of `( success ( ... ) )`.
    Success(&'a [Item]),
    /// The error chain of `( failure ( ... ) )`; never empty.
    Failure(Vec<ErrorLink>),
}

impl<'a> Response<'a> {
    pub fn from_item(item: &'a Item) -> Result<Self, WireError> {
        let mut t = TupleReader::from_item(item)?;
        let position = t.position();
        match t.word()? {
            "success" => Ok(Response::Success(t.list()?)),
            "failure" => {
                let mut chain = t.tuple()?;
                let mut links = Vec::new();
                while !chain.is_at_end() {
                    links.push(ErrorLink::from_tuple(chain.tuple()?)?);
                }
                if links.is_empty() {
                    return Err(WireError::Tuple {
                        position: 1,
                        expected: "a non-empty error list",
                        found: "empty list",
                    });
                }
                Ok(Response::Failure(links))
            }
            _ => Err(WireError::Tuple {
                position,
                expected: "success or failure",
                found: "other word",
            }),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a failing unwrap is a failing test
mod tests {
    use super::*;

    #[test]
    fn builders_write_canonical_bytes() {
        assert_eq!(success(vec![]).to_bytes(), b"( success ( ) ) ");
        assert_eq!(
            success(vec![Item::Number(7)]).to_bytes(),
            b"( success ( 7 ) ) "
        );
        let f = failure(&[ErrorLink::new(160006, "No such revision 9")]);
        assert_eq!(
            f.to_bytes(),
            b"( failure ( ( 160006 18:No such revision 9 0: 0 ) ) ) ".as_slice()
        );
        assert_eq!(
            command("get-latest-rev", vec![]).to_bytes(),
            b"( get-latest-rev ( ) ) "
        );
    }

    #[test]
    fn responses_parse_back() {
        let chain = vec![ErrorLink::new(1, "outer"), ErrorLink::new(2, "")];
        let f = failure(&chain);
        assert_eq!(Response::from_item(&f).unwrap(), Response::Failure(chain));
        let s = success(vec![Item::Number(1)]);
        assert_eq!(
            Response::from_item(&s).unwrap(),
            Response::Success(&[Item::Number(1)][..])
        );
        assert!(Response::from_item(&failure(&[])).is_err());
        assert!(Response::from_item(&command("done", vec![])).is_err());
    }
}
