use proptest::prelude::*;
use svelto_wire::{decode, Item, Limits};

use crate::common;

#[test]
fn list_spacing() {
    let l = Item::list(vec![
        Item::word("word"),
        Item::string("abc"),
        Item::Number(42),
        Item::empty_list(),
    ]);
    assert_eq!(l.to_bytes(), b"( word 3:abc 42 ( ) ) ");
}

proptest! {
    #[test]
    fn encode_then_decode_round_trips(item in common::item()) {
        let bytes = item.to_bytes();
        let (back, n) = decode(&bytes, &Limits::default()).unwrap().unwrap();
        prop_assert_eq!(n, bytes.len());
        prop_assert_eq!(back, item);
    }

    #[test]
    fn every_truncation_is_incomplete(item in common::item()) {
        let bytes = item.to_bytes();
        for cut in 0..bytes.len() {
            prop_assert_eq!(decode(&bytes[..cut], &Limits::default()), Ok(None), "cut {}", cut);
        }
    }

    #[test]
    fn chunked_stream_round_trips(
        items in prop::collection::vec(common::item(), 1..5),
        chunk in 1usize..64,
    ) {
        let stream: Vec<u8> = items.iter().flat_map(Item::to_bytes).collect();
        let got = common::decode_stream(&stream, chunk);
        let got_items: Vec<Item> = got.into_iter().map(|(i, _)| i).collect();
        prop_assert_eq!(got_items, items);
    }
}
