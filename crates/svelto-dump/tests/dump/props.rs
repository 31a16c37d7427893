//! Property blocks in the fixtures: the parser's entries serialize back to the same bytes.

use svelto_dump::{props_bytes, PropEntry, Record};

use crate::common::{fixture, parse_all, FIXTURES};

#[test]
fn blocks_reserialize_exactly() {
    for name in FIXTURES {
        let input = fixture(name);
        for (rec, _) in parse_all(&input).expect("fixture parses") {
            let (block, headers) = match &rec {
                Record::Revision { props, headers, .. } => (Some(props), headers),
                Record::Node(n) => (n.props.as_ref(), &n.headers),
                _ => continue,
            };
            let Some(block) = block else { continue };
            let declared: usize = headers
                .get("Prop-content-length")
                .expect("svn writes Prop-content-length with every block")
                .parse()
                .expect("a number");
            let bytes = block.to_bytes();
            assert_eq!(bytes.len(), declared, "{name}: {rec:?}");
            if !block.0.iter().any(|e| matches!(e, PropEntry::Delete(_))) {
                assert_eq!(props_bytes(&block.to_prop_list(), None), bytes, "{name}");
            }
        }
    }
}

#[test]
fn deltas_dump_has_deletions() {
    let input = fixture("deltas.dump");
    let deletions: Vec<Vec<u8>> = parse_all(&input)
        .expect("fixture parses")
        .into_iter()
        .filter_map(|(rec, _)| match rec {
            Record::Node(n) => n.props,
            _ => None,
        })
        .flat_map(|b| b.0)
        .filter_map(|e| match e {
            PropEntry::Delete(k) => Some(k),
            PropEntry::Set(..) => None,
        })
        .collect();
    assert_eq!(deletions, vec![b"svn:eol-style".to_vec()]);
}
