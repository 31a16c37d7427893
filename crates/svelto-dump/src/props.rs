//! Property blocks: the `K`/`V`/`D` … `PROPS-END` byte format of Subversion's
//! `svn_hash_write2` / `svn_hash_write_incremental` (libsvn_subr/hash.c).
//! See docs/formats/dumpfile.md, "Property blocks".

use svelto_core::PropList;

/// The terminator line of every property block, newline included.
pub const PROPS_END: &[u8] = b"PROPS-END\n";

/// One entry of a property block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PropEntry {
    /// `K <len>\n<name>\nV <len>\n<value>\n`
    Set(Vec<u8>, Vec<u8>),
    /// `D <len>\n<name>\n` (format 3 property deltas; only in node records)
    Delete(Vec<u8>),
}

/// A parsed property block, entries in input order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PropsBlock(pub Vec<PropEntry>);

impl PropsBlock {
    /// Applies the entries in order to `props`. For a full (non-delta) block the caller
    /// clears `props` first, as `svnadmin load` does (`remove_node_props`).
    pub fn apply_to(&self, props: &mut PropList) {
        for entry in &self.0 {
            match entry {
                PropEntry::Set(k, v) => {
                    props.insert(k.clone(), v.clone());
                }
                PropEntry::Delete(k) => {
                    props.remove(k);
                }
            }
        }
    }

    /// The property list this block describes on its own (deletions dropped).
    pub fn to_prop_list(&self) -> PropList {
        let mut props = PropList::new();
        self.apply_to(&mut props);
        props
    }

    /// The block's bytes with its entries in their own order, `PROPS-END` included.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for entry in &self.0 {
            match entry {
                PropEntry::Set(k, v) => push_set(&mut out, k, v),
                PropEntry::Delete(k) => push_delete(&mut out, k),
            }
        }
        out.extend_from_slice(PROPS_END);
        out
    }
}

fn push_set(out: &mut Vec<u8>, key: &[u8], value: &[u8]) {
    out.extend_from_slice(format!("K {}\n", key.len()).as_bytes());
    out.extend_from_slice(key);
    out.extend_from_slice(format!("\nV {}\n", value.len()).as_bytes());
    out.extend_from_slice(value);
    out.push(b'\n');
}

fn push_delete(out: &mut Vec<u8>, key: &[u8]) {
    out.extend_from_slice(format!("D {}\n", key.len()).as_bytes());
    out.extend_from_slice(key);
    out.push(b'\n');
}

/// The property block `svnadmin dump` writes, terminator included.
///
/// With `old == None` this is `svn_hash_write2`: every property, sorted bytewise by name.
/// With `Some(old)` it is `svn_hash_write_incremental`: first the properties of `props`
/// whose value differs from (or is absent in) `old`, sorted; then a `D` entry for every
/// name of `old` missing from `props`, sorted.
pub fn props_bytes(props: &PropList, old: Option<&PropList>) -> Vec<u8> {
    let mut out = Vec::new();
    for (k, v) in props {
        if old.and_then(|o| o.get(k)) == Some(v) {
            continue;
        }
        push_set(&mut out, k, v);
    }
    if let Some(old) = old {
        for k in old.keys() {
            if !props.contains_key(k) {
                push_delete(&mut out, k);
            }
        }
    }
    out.extend_from_slice(PROPS_END);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(pairs: &[(&str, &str)]) -> PropList {
        pairs
            .iter()
            .map(|(k, v)| (k.as_bytes().to_vec(), v.as_bytes().to_vec()))
            .collect()
    }

    #[test]
    fn full_block_is_sorted_bytewise() {
        let p = list(&[("svn:log", "x"), ("svn:author", "me"), ("Z", "")]);
        assert_eq!(
            props_bytes(&p, None),
            b"K 1\nZ\nV 0\n\nK 10\nsvn:author\nV 2\nme\nK 7\nsvn:log\nV 1\nx\nPROPS-END\n"
        );
        assert_eq!(props_bytes(&PropList::new(), None), b"PROPS-END\n");
    }

    #[test]
    fn incremental_block_skips_unchanged_and_deletes_after_sets() {
        let old = list(&[("a", "1"), ("b", "2"), ("c", "3")]);
        let new = list(&[("b", "2"), ("c", "4"), ("d", "5")]);
        assert_eq!(
            props_bytes(&new, Some(&old)),
            b"K 1\nc\nV 1\n4\nK 1\nd\nV 1\n5\nD 1\na\nPROPS-END\n"
        );
        assert_eq!(props_bytes(&old, Some(&old)), b"PROPS-END\n");
    }

    #[test]
    fn block_apply_and_bytes() {
        let block = PropsBlock(vec![
            PropEntry::Set(b"k".to_vec(), b"v".to_vec()),
            PropEntry::Delete(b"gone".to_vec()),
        ]);
        let mut props = list(&[("gone", "x"), ("k", "old")]);
        block.apply_to(&mut props);
        assert_eq!(props, list(&[("k", "v")]));
        assert_eq!(block.to_prop_list(), list(&[("k", "v")]));
        assert_eq!(block.to_bytes(), b"K 1\nk\nV 1\nv\nD 4\ngone\nPROPS-END\n");
    }
}
