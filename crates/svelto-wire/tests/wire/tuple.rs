use svelto_wire::{decode, Item, Limits, TupleReader, WireError};

fn parse(bytes: &[u8]) -> Item {
    decode(bytes, &Limits::default()).unwrap().unwrap().0
}

/// `( list ( path:string [ rev:number ] depth:word ( field:word ... ) ? ( pattern ... ) ) )`
#[test]
fn list_command_from_the_doc() {
    let cmd = parse(b"( list ( 0: ( 1 ) immediates ( kind ) ) ) ");
    let mut t = TupleReader::from_item(&cmd).unwrap();
    assert_eq!(t.word().unwrap(), "list");
    let mut p = t.tuple().unwrap();
    assert_eq!(p.string().unwrap(), b"");
    assert_eq!(p.bracket_rev().unwrap(), Some(1));
    assert_eq!(p.word().unwrap(), "immediates");
    let fields: Vec<&str> = p
        .tuple()
        .unwrap()
        .rest()
        .iter()
        .map(|i| match i {
            Item::Word(w) => w.as_str(),
            _ => "?",
        })
        .collect();
    assert_eq!(fields, ["kind"]);
    assert_eq!(p.opt_list().unwrap(), None);
}

#[test]
fn type_mismatch_names_position() {
    let cmd = parse(b"( get-dir ( 0: ( ) true 1 ) ) ");
    let mut t = TupleReader::from_item(&cmd).unwrap();
    t.word().unwrap();
    let mut p = t.tuple().unwrap();
    p.string().unwrap();
    assert_eq!(p.bracket_rev().unwrap(), None);
    p.bool().unwrap();
    assert_eq!(
        p.bool(),
        Err(WireError::Tuple {
            position: 3,
            expected: "bool (true or false)",
            found: "number"
        })
    );
}

#[test]
fn not_a_list() {
    let err = TupleReader::from_item(&Item::Number(3)).unwrap_err();
    assert_eq!(err.svn_error_code(), 210004);
}
