//! Writing dumpfiles byte for byte as `svnadmin dump` does (libsvn_repos/dump.c).
//! The exact bytes are in docs/formats/dumpfile.md, "What svnadmin dump writes".
//!
//! Nothing here buffers the output or counts on the caller's: wrap the writer in a
//! `BufWriter`.

use std::io::{self, Write};

use svelto_core::PropList;

use crate::headers as h;
use crate::props::props_bytes;
use crate::reader::Node;

/// `SVN-fs-dump-format-version: N\n\n`
pub fn write_format(w: &mut impl Write, version: u32) -> io::Result<()> {
    write!(w, "{}: {version}\n\n", h::FORMAT_VERSION)
}

/// `UUID: <uuid>\n\n`
pub fn write_uuid(w: &mut impl Write, uuid: &str) -> io::Result<()> {
    check_value(uuid)?;
    write!(w, "{}: {uuid}\n\n", h::UUID)
}

/// A revision record as `svnadmin dump` writes it (`svn_repos__dump_revision_record` with
/// the property section always present):
///
/// ```text
/// Revision-number: <rev>\nProp-content-length: <P>\nContent-length: <P>\n\n<props>\n
/// ```
pub fn write_revision_record(w: &mut impl Write, rev: u64, revprops: &PropList) -> io::Result<()> {
    let props = props_bytes(revprops, None);
    let mut out = format!(
        "{}: {rev}\n{}: {len}\n{}: {len}\n\n",
        h::REVISION_NUMBER,
        h::PROP_CONTENT_LENGTH,
        h::CONTENT_LENGTH,
        len = props.len()
    )
    .into_bytes();
    out.extend_from_slice(&props);
    out.push(b'\n');
    w.write_all(&out)
}

/// A node record's headers before the length headers, in the order they are pushed
/// (`svn_repos__dumpfile_headers_t`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeHeaders(Vec<(String, String)>);

impl NodeHeaders {
    pub fn new() -> Self {
        NodeHeaders(Vec::new())
    }

    /// Appends a header.
    pub fn push(&mut self, name: &str, value: impl Into<String>) -> &mut Self {
        self.0.push((name.to_string(), value.into()));
        self
    }

    pub fn as_slice(&self) -> &[(String, String)] {
        &self.0
    }

    /// The headers `svnadmin dump` (dump.c `dump_node`) writes for `node`, from its typed
    /// fields and in its order: `Node-path`, `Node-kind`, `Node-action`,
    /// `Node-copyfrom-rev`, `Node-copyfrom-path`, `Text-copy-source-md5`,
    /// `Text-copy-source-sha1`, `Prop-delta`, `Text-delta`, `Text-delta-base-md5`,
    /// `Text-delta-base-sha1`, `Text-content-md5`, `Text-content-sha1`; each only when
    /// set (the two deltas only when true). `node.headers`, `props` and `text_len` are not
    /// consulted: the length headers come from [`write_node_record`].
    pub fn for_node(node: &Node) -> Self {
        let mut hs = NodeHeaders::new();
        hs.push(h::NODE_PATH, node.path.clone());
        if let Some(kind) = node.kind {
            hs.push(h::NODE_KIND, kind.as_str());
        }
        hs.push(h::NODE_ACTION, node.action.as_str());
        if let Some((rev, path)) = &node.copyfrom {
            hs.push(h::NODE_COPYFROM_REV, rev.to_string());
            hs.push(h::NODE_COPYFROM_PATH, path.clone());
        }
        if let Some(md5) = node.copy_source_md5 {
            hs.push(h::TEXT_COPY_SOURCE_MD5, md5.to_hex());
        }
        if let Some(sha1) = node.copy_source_sha1 {
            hs.push(h::TEXT_COPY_SOURCE_SHA1, sha1.to_hex());
        }
        if node.props_delta {
            hs.push(h::PROP_DELTA, "true");
        }
        if node.text_delta {
            hs.push(h::TEXT_DELTA, "true");
        }
        if let Some(md5) = node.text_delta_base_md5 {
            hs.push(h::TEXT_DELTA_BASE_MD5, md5.to_hex());
        }
        if let Some(sha1) = node.text_delta_base_sha1 {
            hs.push(h::TEXT_DELTA_BASE_SHA1, sha1.to_hex());
        }
        if let Some(md5) = node.text_md5 {
            hs.push(h::TEXT_CONTENT_MD5, md5.to_hex());
        }
        if let Some(sha1) = node.text_sha1 {
            hs.push(h::TEXT_CONTENT_SHA1, sha1.to_hex());
        }
        hs
    }
}

impl std::ops::Deref for NodeHeaders {
    type Target = [(String, String)];
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

/// Header lines then the blank line (`svn_repos__dump_headers`). This alone is how
/// `svnadmin dump` writes the `delete` half of a replace-with-history; a node with neither
/// properties nor text (a plain delete, a copy without changes) gets one more `"\n"`
/// from the caller.
pub fn write_node_headers<K: AsRef<str>, V: AsRef<str>>(
    w: &mut impl Write,
    headers: &[(K, V)],
) -> io::Result<()> {
    let mut out = Vec::new();
    push_headers(&mut out, headers)?;
    out.push(b'\n');
    w.write_all(&out)
}

/// A node record with content, as `svn_repos__dump_node_record` with
/// `content_length_always` writes it: `headers`, then `Prop-content-length` (if `props`),
/// `Text-content-length` (if `text_len`), `Content-length` (always: their sum), the blank
/// line, and the property block. The caller then writes the `text_len` bytes of text and
/// the closing `"\n\n"`.
pub fn write_node_record<K: AsRef<str>, V: AsRef<str>>(
    w: &mut impl Write,
    headers: &[(K, V)],
    props: Option<&[u8]>,
    text_len: Option<u64>,
) -> io::Result<()> {
    let mut out = Vec::new();
    push_headers(&mut out, headers)?;
    let mut content_len = 0u64;
    if let Some(props) = props {
        out.extend_from_slice(format!("{}: {}\n", h::PROP_CONTENT_LENGTH, props.len()).as_bytes());
        content_len += props.len() as u64;
    }
    if let Some(text_len) = text_len {
        out.extend_from_slice(format!("{}: {text_len}\n", h::TEXT_CONTENT_LENGTH).as_bytes());
        content_len = content_len.checked_add(text_len).ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidInput, "content length overflows")
        })?;
    }
    out.extend_from_slice(format!("{}: {content_len}\n\n", h::CONTENT_LENGTH).as_bytes());
    if let Some(props) = props {
        out.extend_from_slice(props);
    }
    w.write_all(&out)
}

fn push_headers<K: AsRef<str>, V: AsRef<str>>(
    out: &mut Vec<u8>,
    headers: &[(K, V)],
) -> io::Result<()> {
    for (name, value) in headers {
        let (name, value) = (name.as_ref(), value.as_ref());
        if name.is_empty() || name.contains(':') {
            return Err(invalid(format!("bad header name {name:?}")));
        }
        check_value(name)?;
        check_value(value)?;
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.as_bytes());
        out.push(b'\n');
    }
    Ok(())
}

/// A newline inside a header would end it early and corrupt the stream.
fn check_value(s: &str) -> io::Result<()> {
    if s.contains('\n') {
        return Err(invalid(format!("header text {s:?} contains a newline")));
    }
    Ok(())
}

fn invalid(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, msg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reader::NodeAction;

    #[test]
    fn format_and_uuid() {
        let mut out = Vec::new();
        write_format(&mut out, 2).expect("vec write");
        write_uuid(&mut out, "abc").expect("vec write");
        assert_eq!(out, b"SVN-fs-dump-format-version: 2\n\nUUID: abc\n\n");
        assert!(write_uuid(&mut out, "a\nb").is_err());
    }

    #[test]
    fn revision_record() {
        let mut props = PropList::new();
        props.insert(b"svn:log".to_vec(), b"hi".to_vec());
        let mut out = Vec::new();
        write_revision_record(&mut out, 7, &props).expect("vec write");
        assert_eq!(
            out,
            b"Revision-number: 7\nProp-content-length: 29\nContent-length: 29\n\n\
              K 7\nsvn:log\nV 2\nhi\nPROPS-END\n\n"
        );
        let mut out = Vec::new();
        write_revision_record(&mut out, 0, &PropList::new()).expect("vec write");
        assert_eq!(
            out,
            b"Revision-number: 0\nProp-content-length: 10\nContent-length: 10\n\nPROPS-END\n\n"
        );
    }

    #[test]
    fn node_records() {
        let mut node = Node::new("a/b", NodeAction::Add);
        node.kind = Some(svelto_core::NodeKind::File);
        let hs = NodeHeaders::for_node(&node);
        let mut out = Vec::new();
        write_node_record(&mut out, &hs, Some(b"PROPS-END\n"), Some(3)).expect("vec write");
        assert_eq!(
            out,
            b"Node-path: a/b\nNode-kind: file\nNode-action: add\nProp-content-length: 10\n\
              Text-content-length: 3\nContent-length: 13\n\nPROPS-END\n"
        );
        let mut out = Vec::new();
        write_node_record(&mut out, &[("Node-path", "x".to_string())], None, None)
            .expect("vec write");
        assert_eq!(out, b"Node-path: x\nContent-length: 0\n\n");
        let mut out = Vec::new();
        write_node_headers(&mut out, &[("Node-path", "x"), ("Node-action", "delete")])
            .expect("vec write");
        assert_eq!(out, b"Node-path: x\nNode-action: delete\n\n");
        assert!(write_node_headers(&mut out, &[("Bad:name", "x")]).is_err());
    }
}
