use proptest::prelude::*;
use svelto_wire::Item;

fn word() -> impl Strategy<Value = String> {
    "[A-Za-z][A-Za-z0-9-]{0,23}"
}

pub fn item() -> impl Strategy<Value = Item> {
    let leaf = prop_oneof![
        any::<u64>().prop_map(Item::Number),
        prop::collection::vec(any::<u8>(), 0..40).prop_map(Item::String),
        word().prop_map(Item::Word),
    ];
    leaf.prop_recursive(6, 64, 8, |inner| {
        prop::collection::vec(inner, 0..8).prop_map(Item::List)
    })
}

/// Splits `stream` into items with one decoder, feeding it `chunk` bytes at a time.
pub fn decode_stream(stream: &[u8], chunk: usize) -> Vec<(Item, usize)> {
    let mut d = svelto_wire::Decoder::new(svelto_wire::Limits::default());
    let mut out = Vec::new();
    let mut start = 0;
    let mut avail = 0;
    while start < stream.len() {
        if let Some((item, n)) = d.decode(&stream[start..avail]).expect("valid stream") {
            out.push((item, n));
            start += n;
        } else if avail == stream.len() {
            break;
        } else {
            avail = (avail + chunk).min(stream.len());
        }
        avail = avail.max(start);
    }
    d.finish().expect("clean end");
    out
}
