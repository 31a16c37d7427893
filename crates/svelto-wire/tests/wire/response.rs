use svelto_wire::{decode, failure, success, ErrorLink, Item, Limits, Response};

#[test]
fn auth_slot_is_23_bytes() {
    let slot = success(vec![Item::empty_list(), Item::string("")]);
    assert_eq!(slot.to_bytes(), b"( success ( ( ) 0: ) ) ");
}

#[test]
fn failure_round_trips_through_bytes() {
    let chain = vec![
        ErrorLink::new(160013, "File not found: revision 7, path '/x'"),
        ErrorLink {
            apr_err: 210004,
            message: b"inner\nwith ( parens )".to_vec(),
            file: b"serve.c".to_vec(),
            line: 42,
        },
    ];
    let bytes = failure(&chain).to_bytes();
    assert!(bytes.starts_with(b"( failure ( ( 160013 37:File not found"));
    let (item, _) = decode(&bytes, &Limits::default()).unwrap().unwrap();
    assert_eq!(
        Response::from_item(&item).unwrap(),
        Response::Failure(chain)
    );
}
