//! The header block of a record: RFC 822-style `Name: value` lines, kept in input order.

/// `SVN-fs-dump-format-version`
pub const FORMAT_VERSION: &str = "SVN-fs-dump-format-version";
/// `UUID`
pub const UUID: &str = "UUID";
/// `Revision-number`
pub const REVISION_NUMBER: &str = "Revision-number";
/// `Node-path`
pub const NODE_PATH: &str = "Node-path";
/// `Node-kind`
pub const NODE_KIND: &str = "Node-kind";
/// `Node-action`
pub const NODE_ACTION: &str = "Node-action";
/// `Node-copyfrom-rev`
pub const NODE_COPYFROM_REV: &str = "Node-copyfrom-rev";
/// `Node-copyfrom-path`
pub const NODE_COPYFROM_PATH: &str = "Node-copyfrom-path";
/// `Text-copy-source-md5`
pub const TEXT_COPY_SOURCE_MD5: &str = "Text-copy-source-md5";
/// `Text-copy-source-sha1`
pub const TEXT_COPY_SOURCE_SHA1: &str = "Text-copy-source-sha1";
/// `Text-content-md5`
pub const TEXT_CONTENT_MD5: &str = "Text-content-md5";
/// `Text-content-sha1`
pub const TEXT_CONTENT_SHA1: &str = "Text-content-sha1";
/// `Text-delta`
pub const TEXT_DELTA: &str = "Text-delta";
/// `Text-delta-base-md5`
pub const TEXT_DELTA_BASE_MD5: &str = "Text-delta-base-md5";
/// `Text-delta-base-sha1`
pub const TEXT_DELTA_BASE_SHA1: &str = "Text-delta-base-sha1";
/// `Prop-delta`
pub const PROP_DELTA: &str = "Prop-delta";
/// `Prop-content-length`
pub const PROP_CONTENT_LENGTH: &str = "Prop-content-length";
/// `Text-content-length`
pub const TEXT_CONTENT_LENGTH: &str = "Text-content-length";
/// `Content-length`
pub const CONTENT_LENGTH: &str = "Content-length";

/// The headers of one record, every line in input order, unknown names included.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Headers(pub Vec<(String, String)>);

impl Headers {
    /// The value of the header `name` (case-sensitive). When a name occurs more than once
    /// the last occurrence wins, as in Subversion's loader, which stores headers in a hash.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// True if `name` occurs at all.
    pub fn contains(&self, name: &str) -> bool {
        self.0.iter().any(|(n, _)| n == name)
    }

    /// All `(name, value)` pairs in input order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(n, v)| (n.as_str(), v.as_str()))
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_occurrence_wins() {
        let h = Headers(vec![
            ("Node-path".into(), "a".into()),
            ("X".into(), "1".into()),
            ("Node-path".into(), "b".into()),
        ]);
        assert_eq!(h.get("Node-path"), Some("b"));
        assert_eq!(h.get("node-path"), None);
        assert!(h.contains("X"));
        assert_eq!(h.len(), 3);
        assert_eq!(h.iter().next(), Some(("Node-path", "a")));
    }
}
