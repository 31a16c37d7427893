//! The streaming pull parser. Grammar and tolerance rules: docs/formats/dumpfile.md.
//!
//! Headers and property blocks are read into memory, each bounded by [`Limits`]; node
//! text never is: the caller pulls it through [`DumpReader::text`], or it is skipped.

use std::io::{self, BufRead, Read};

use svelto_core::{Md5, NodeKind, Sha1};

use crate::error::{shown, DumpError, Location};
use crate::headers::{self as h, Headers};
use crate::props::{PropEntry, PropsBlock};

/// Bounds on what the parser holds in memory at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Longest header line (and property-block `K`/`V`/`D` line, and blank-ish line
    /// between records), newline excluded.
    pub max_header_line: usize,
    /// Most header lines in one record.
    pub max_headers: usize,
    /// Largest property block (`Prop-content-length`) accepted.
    pub max_props_len: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_header_line: 64 * 1024,
            max_headers: 256,
            max_props_len: 256 * 1024 * 1024,
        }
    }
}

/// The longest first line accepted, as `svnadmin load` (`parse_format_version`) does.
const MAX_FORMAT_LINE: usize = 80;

/// What a node record does to its path (`Node-action`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NodeAction {
    Change,
    Add,
    Delete,
    Replace,
}

impl NodeAction {
    /// The word used in the `Node-action` header.
    pub fn as_str(self) -> &'static str {
        match self {
            NodeAction::Change => "change",
            NodeAction::Add => "add",
            NodeAction::Delete => "delete",
            NodeAction::Replace => "replace",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "change" => NodeAction::Change,
            "add" => NodeAction::Add,
            "delete" => NodeAction::Delete,
            "replace" => NodeAction::Replace,
            _ => return None,
        })
    }
}

impl From<NodeAction> for svelto_core::ChangeKind {
    fn from(a: NodeAction) -> Self {
        match a {
            NodeAction::Change => svelto_core::ChangeKind::Modify,
            NodeAction::Add => svelto_core::ChangeKind::Add,
            NodeAction::Delete => svelto_core::ChangeKind::Delete,
            NodeAction::Replace => svelto_core::ChangeKind::Replace,
        }
    }
}

/// One record of a dumpfile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record {
    /// `SVN-fs-dump-format-version: N` (1, 2 or 3). Always the first record; a later
    /// one (as produced by concatenating dumps) switches the version for what follows.
    Format(u32),
    /// `UUID: …`
    Uuid(String),
    /// A revision record. `props` is empty when the record has no property section.
    Revision {
        number: u64,
        headers: Headers,
        props: PropsBlock,
    },
    /// A node record; its text, if any, is read next through [`DumpReader::text`].
    Node(Node),
}

/// A node record's headers, interpreted, and its property block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    /// `Node-path` as written (the caller validates and canonicalizes).
    pub path: String,
    /// `Node-kind`; usually absent on deletes.
    pub kind: Option<NodeKind>,
    pub action: NodeAction,
    /// `Node-copyfrom-rev` and `Node-copyfrom-path`.
    pub copyfrom: Option<(u64, String)>,
    pub copy_source_md5: Option<Md5>,
    pub copy_source_sha1: Option<Sha1>,
    /// The property section; `None` when the record has none (properties unchanged).
    pub props: Option<PropsBlock>,
    /// `Prop-delta: true`: `props` changes the previous properties rather than replacing them.
    pub props_delta: bool,
    /// Length of the text section; `None` when the record has none (text unchanged).
    pub text_len: Option<u64>,
    /// `Text-delta: true`: the text is an svndiff stream against the previous contents.
    pub text_delta: bool,
    pub text_md5: Option<Md5>,
    pub text_sha1: Option<Sha1>,
    pub text_delta_base_md5: Option<Md5>,
    pub text_delta_base_sha1: Option<Sha1>,
    /// All headers in input order, unknown ones included.
    pub headers: Headers,
}

impl Node {
    /// A node with nothing but a path and an action, for building records to write.
    pub fn new(path: impl Into<String>, action: NodeAction) -> Node {
        Node {
            path: path.into(),
            kind: None,
            action,
            copyfrom: None,
            copy_source_md5: None,
            copy_source_sha1: None,
            props: None,
            props_delta: false,
            text_len: None,
            text_delta: false,
            text_md5: None,
            text_sha1: None,
            text_delta_base_md5: None,
            text_delta_base_sha1: None,
            headers: Headers::default(),
        }
    }
}

/// Where the reader is, for error messages.
#[derive(Debug, Default)]
struct Context {
    offset: u64,
    revision: Option<u64>,
    node_path: Option<String>,
}

impl Context {
    fn at(&self) -> Location {
        self.at_offset(self.offset)
    }

    fn at_offset(&self, offset: u64) -> Location {
        Location {
            offset,
            revision: self.revision,
            node_path: self.node_path.clone(),
        }
    }
}

/// How a line read ended.
enum LineEnd {
    Newline,
    /// The input ended first; the bytes read so far are returned.
    Eof,
    /// More than the allowed number of bytes came without a newline.
    TooLong,
}

/// Where a record's content lies, from its length headers.
struct Layout {
    props: Option<u64>,
    text: Option<u64>,
    /// Bytes of `Content-length` beyond the props and text sections, skipped.
    extra: u64,
    /// A format 1 record with `Content-length` only: a property block then text.
    old_v1: Option<u64>,
}

/// A streaming pull parser of a dumpfile.
///
/// After an error the reader is finished: further calls to
/// [`next_record`](Self::next_record) return `Ok(None)`.
pub struct DumpReader<R: BufRead> {
    input: R,
    ctx: Context,
    limits: Limits,
    /// The format version in force; `None` until the first line has been read.
    version: Option<u32>,
    /// Unread bytes of the current node's text.
    text_remaining: u64,
    /// Content to skip once the text is done with.
    skip_after_text: u64,
    finished: bool,
}

impl<R: BufRead> DumpReader<R> {
    pub fn new(r: R) -> Self {
        Self::with_limits(r, Limits::default())
    }

    pub fn with_limits(r: R, limits: Limits) -> Self {
        DumpReader {
            input: r,
            ctx: Context::default(),
            limits,
            version: None,
            text_remaining: 0,
            skip_after_text: 0,
            finished: false,
        }
    }

    /// Bytes consumed so far.
    pub fn offset(&self) -> u64 {
        self.ctx.offset
    }

    /// The format version in force, once the first line has been read.
    pub fn version(&self) -> Option<u32> {
        self.version
    }

    /// Next record, or `None` at the end of the input. For a node record with text
    /// (`text_len` is `Some`), the caller may then read the text through
    /// [`text`](Self::text); whatever it leaves unread is skipped by this call.
    pub fn next_record(&mut self) -> Result<Option<Record>, DumpError> {
        if self.finished {
            return Ok(None);
        }
        let result = self.read_record();
        if !matches!(result, Ok(Some(_))) {
            self.finished = true;
        }
        result
    }

    /// A reader of the current node's text: exactly the bytes of its text section not
    /// yet read (raw: a fulltext, or an svndiff stream when `text_delta` is true). Empty
    /// when the current record has no text. When the input ends early it fails with an
    /// [`io::ErrorKind::UnexpectedEof`] error wrapping a [`DumpError::Truncated`].
    pub fn text(&mut self) -> TextReader<'_, R> {
        TextReader { reader: self }
    }

    fn read_record(&mut self) -> Result<Option<Record>, DumpError> {
        if self.version.is_none() {
            let version = self.read_format_line()?;
            self.version = Some(version);
            return Ok(Some(Record::Format(version)));
        }
        let text = std::mem::take(&mut self.text_remaining);
        self.skip(text, "node text")?;
        let extra = std::mem::take(&mut self.skip_after_text);
        self.skip(extra, "record content")?;

        let Some((first, start)) = self.read_record_start()? else {
            return Ok(None);
        };
        let headers = self.read_headers(first, start)?;

        if let Some(value) = headers.get(h::REVISION_NUMBER) {
            let number = self.number(h::REVISION_NUMBER, value, start)?;
            self.ctx.revision = Some(number);
            self.ctx.node_path = None;
            let layout = self.layout(&headers, start)?;
            let props = match (layout.props, layout.old_v1) {
                (Some(len), _) => self.read_props(len, true, false)?.0,
                (None, Some(len)) => {
                    let (props, used) = self.read_props(len, false, false)?;
                    self.skip_after_text = len - used;
                    props
                }
                (None, None) => PropsBlock::default(),
            };
            // A text section on a revision record means nothing; it is skipped.
            self.skip_after_text = self
                .skip_after_text
                .saturating_add(layout.text.unwrap_or(0))
                .saturating_add(layout.extra);
            return Ok(Some(Record::Revision {
                number,
                headers,
                props,
            }));
        }

        if let Some(path) = headers.get(h::NODE_PATH) {
            self.ctx.node_path = Some(path.to_string());
            let node = self.read_node(headers, start)?;
            return Ok(Some(Record::Node(node)));
        }

        // An unrecognized record (often the leftovers of a wrong Content-length) keeps the
        // previous node in its error, which is where the damage is.
        let record = if let Some(uuid) = headers.get(h::UUID) {
            Record::Uuid(uuid.to_string())
        } else if let Some(value) = headers.get(h::FORMAT_VERSION) {
            let version = self.format_version(value, start)?;
            self.version = Some(version);
            Record::Format(version)
        } else {
            return Err(DumpError::UnrecognizedRecord {
                at: self.ctx.at_offset(start),
            });
        };
        self.ctx.node_path = None;
        // Content on these records means nothing; it is skipped.
        let layout = self.layout(&headers, start)?;
        self.skip_after_text = match layout.old_v1 {
            Some(len) => len,
            None => layout
                .props
                .unwrap_or(0)
                .saturating_add(layout.text.unwrap_or(0))
                .saturating_add(layout.extra),
        };
        Ok(Some(record))
    }

    fn read_node(&mut self, headers: Headers, start: u64) -> Result<Node, DumpError> {
        let path = self.ctx.node_path.clone().unwrap_or_default();
        let kind = match headers.get(h::NODE_KIND) {
            None => None,
            Some("file") => Some(NodeKind::File),
            Some("dir") => Some(NodeKind::Dir),
            Some(other) => return Err(self.bad_value(h::NODE_KIND, other, start)),
        };
        let action = match headers.get(h::NODE_ACTION) {
            None => {
                return Err(DumpError::MissingHeader {
                    header: h::NODE_ACTION,
                    at: self.ctx.at_offset(start),
                })
            }
            Some(v) => {
                NodeAction::parse(v).ok_or_else(|| self.bad_value(h::NODE_ACTION, v, start))?
            }
        };
        let copyfrom = match (
            headers.get(h::NODE_COPYFROM_REV),
            headers.get(h::NODE_COPYFROM_PATH),
        ) {
            (None, None) => None,
            (Some(rev), Some(path)) => Some((
                self.number(h::NODE_COPYFROM_REV, rev, start)?,
                path.to_string(),
            )),
            (Some(_), None) | (None, Some(_)) => {
                let header = if headers.contains(h::NODE_COPYFROM_REV) {
                    h::NODE_COPYFROM_PATH
                } else {
                    h::NODE_COPYFROM_REV
                };
                return Err(DumpError::MissingHeader {
                    header,
                    at: self.ctx.at_offset(start),
                });
            }
        };
        let md5 = |name: &'static str| -> Result<Option<Md5>, DumpError> {
            headers
                .get(name)
                .map(|v| Md5::from_hex(v).ok_or_else(|| self.bad_value(name, v, start)))
                .transpose()
        };
        let sha1 = |name: &'static str| -> Result<Option<Sha1>, DumpError> {
            headers
                .get(name)
                .map(|v| Sha1::from_hex(v).ok_or_else(|| self.bad_value(name, v, start)))
                .transpose()
        };
        let copy_source_md5 = md5(h::TEXT_COPY_SOURCE_MD5)?;
        let copy_source_sha1 = sha1(h::TEXT_COPY_SOURCE_SHA1)?;
        let text_md5 = md5(h::TEXT_CONTENT_MD5)?;
        let text_sha1 = sha1(h::TEXT_CONTENT_SHA1)?;
        let text_delta_base_md5 = md5(h::TEXT_DELTA_BASE_MD5)?;
        let text_delta_base_sha1 = sha1(h::TEXT_DELTA_BASE_SHA1)?;
        let props_delta = headers.get(h::PROP_DELTA) == Some("true");
        let text_delta = headers.get(h::TEXT_DELTA) == Some("true");

        let layout = self.layout(&headers, start)?;
        let (props, text_len) = match layout.old_v1 {
            Some(len) => {
                // svnadmin load's rule for old format 1 records: what follows the
                // property block is text; an empty remainder is an empty text for a
                // file and no text for anything else.
                let (props, used) = self.read_props(len, false, true)?;
                let rest = len - used;
                let text = (rest > 0 || kind == Some(NodeKind::File)).then_some(rest);
                (Some(props), text)
            }
            None => {
                let props = match layout.props {
                    Some(len) => Some(self.read_props(len, true, true)?.0),
                    None => None,
                };
                (props, layout.text)
            }
        };
        self.text_remaining = text_len.unwrap_or(0);
        self.skip_after_text = layout.extra;

        Ok(Node {
            path,
            kind,
            action,
            copyfrom,
            copy_source_md5,
            copy_source_sha1,
            props,
            props_delta,
            text_len,
            text_delta,
            text_md5,
            text_sha1,
            text_delta_base_md5,
            text_delta_base_sha1,
            headers,
        })
    }

    /// The first line: `SVN-fs-dump-format-version: N`, at most 80 bytes long.
    fn read_format_line(&mut self) -> Result<u32, DumpError> {
        let (line, end) = self.read_line(MAX_FORMAT_LINE)?;
        match end {
            LineEnd::Newline => {}
            LineEnd::Eof => {
                return Err(DumpError::Truncated {
                    what: "the format version line",
                    at: self.ctx.at(),
                })
            }
            LineEnd::TooLong => {
                return Err(DumpError::MalformedHeader {
                    line: shown(&line),
                    reason: "not a dumpfile: the first line is not SVN-fs-dump-format-version",
                    at: self.ctx.at_offset(0),
                })
            }
        }
        let value = line
            .strip_prefix(h::FORMAT_VERSION.as_bytes())
            .and_then(|rest| rest.strip_prefix(b":"))
            .and_then(|rest| std::str::from_utf8(rest).ok())
            .ok_or_else(|| DumpError::MalformedHeader {
                line: shown(&line),
                reason: "not a dumpfile: the first line is not SVN-fs-dump-format-version",
                at: self.ctx.at_offset(0),
            })?;
        self.format_version(value, 0)
    }

    /// A format version as `svnadmin load` reads it (`svn_cstring_atoi`: leading
    /// whitespace allowed), restricted to 1, 2 and 3.
    fn format_version(&self, value: &str, start: u64) -> Result<u32, DumpError> {
        let trimmed = value.trim_start_matches(|c: char| c.is_ascii() && is_svn_space(c as u8));
        let n = self.number(h::FORMAT_VERSION, trimmed, start)?;
        match n {
            1..=3 => Ok(n as u32),
            _ => Err(DumpError::UnsupportedVersion {
                version: value.to_string(),
                at: self.ctx.at_offset(start),
            }),
        }
    }

    /// Skips blank lines (and lines starting with whitespace) between records, as
    /// `svn_repos_parse_dumpstream3` does. Returns the record's first line and its offset,
    /// or `None` at a clean end of input.
    fn read_record_start(&mut self) -> Result<Option<(Vec<u8>, u64)>, DumpError> {
        loop {
            let start = self.ctx.offset;
            let (line, end) = self.read_line(self.limits.max_header_line)?;
            match end {
                LineEnd::Eof if line.is_empty() => return Ok(None),
                LineEnd::Eof => {
                    return Err(DumpError::Truncated {
                        what: "a header line",
                        at: self.ctx.at(),
                    })
                }
                LineEnd::TooLong => return Err(self.line_too_long(start)),
                LineEnd::Newline => {
                    if line.first().is_some_and(|&b| !is_svn_space(b)) {
                        return Ok(Some((line, start)));
                    }
                }
            }
        }
    }

    /// Reads a header block whose first line has been read, through its blank line.
    fn read_headers(&mut self, first: Vec<u8>, first_start: u64) -> Result<Headers, DumpError> {
        let mut headers = vec![self.parse_header(&first, first_start)?];
        loop {
            // Errors inside a header block name the record it belongs to, as far as known.
            let (name, value) = headers.last().expect("at least one header");
            if name == h::NODE_PATH {
                self.ctx.node_path = Some(value.clone());
            } else if name == h::REVISION_NUMBER {
                self.ctx.node_path = None;
            }
            let start = self.ctx.offset;
            let (line, end) = self.read_line(self.limits.max_header_line)?;
            match end {
                LineEnd::Newline => {}
                // svnadmin load takes the end of input as the end of a header block. We do
                // so only for a lone UUID record after its whole line (the dump that sets a
                // repository's UUID, `SVN-fs-dump-format-version: 2`, a blank line and
                // `UUID: ...`); anywhere else it means a truncated dump.
                LineEnd::Eof
                    if line.is_empty() && headers.len() == 1 && headers[0].0 == h::UUID =>
                {
                    return Ok(Headers(headers));
                }
                LineEnd::Eof => {
                    return Err(DumpError::Truncated {
                        what: "a header block",
                        at: self.ctx.at(),
                    })
                }
                LineEnd::TooLong => return Err(self.line_too_long(start)),
            }
            if line.is_empty() {
                return Ok(Headers(headers));
            }
            if headers.len() >= self.limits.max_headers {
                return Err(DumpError::LimitExceeded {
                    what: "the number of headers in one record",
                    limit: self.limits.max_headers as u64,
                    at: self.ctx.at_offset(start),
                });
            }
            headers.push(self.parse_header(&line, start)?);
        }
    }

    /// `Name: value`. Subversion splits at the first colon and skips one more byte; this
    /// parser requires that byte to be a space.
    fn parse_header(&self, line: &[u8], start: u64) -> Result<(String, String), DumpError> {
        let malformed = |reason| DumpError::MalformedHeader {
            line: shown(line),
            reason,
            at: self.ctx.at_offset(start),
        };
        let colon = line
            .iter()
            .position(|&b| b == b':')
            .ok_or_else(|| malformed("no ':'"))?;
        if line.get(colon + 1) != Some(&b' ') {
            return Err(malformed("no ': ' after the header name"));
        }
        let name = std::str::from_utf8(&line[..colon]).map_err(|_| malformed("not UTF-8"))?;
        let value = std::str::from_utf8(&line[colon + 2..]).map_err(|_| malformed("not UTF-8"))?;
        Ok((name.to_string(), value.to_string()))
    }

    fn layout(&self, headers: &Headers, start: u64) -> Result<Layout, DumpError> {
        let num = |name: &str| -> Result<Option<u64>, DumpError> {
            headers
                .get(name)
                .map(|v| self.number(name, v, start))
                .transpose()
        };
        let content = num(h::CONTENT_LENGTH)?;
        let props = num(h::PROP_CONTENT_LENGTH)?;
        let text = num(h::TEXT_CONTENT_LENGTH)?;
        if self.version == Some(1) && props.is_none() && text.is_none() && content.is_some() {
            return Ok(Layout {
                props: None,
                text: None,
                extra: 0,
                old_v1: content,
            });
        }
        let mismatch = |detail: String| DumpError::LengthMismatch {
            detail,
            at: self.ctx.at_offset(start),
        };
        let declared = props
            .unwrap_or(0)
            .checked_add(text.unwrap_or(0))
            .ok_or_else(|| {
                mismatch("Prop-content-length + Text-content-length overflows".into())
            })?;
        let extra = match content {
            None => 0,
            Some(content) => content.checked_sub(declared).ok_or_else(|| {
                mismatch(format!(
                    "Content-length {content} is smaller than Prop-content-length + \
                     Text-content-length ({declared})"
                ))
            })?,
        };
        Ok(Layout {
            props,
            text,
            extra,
            old_v1: None,
        })
    }

    /// Reads a property block whose declared length is `len`. With `exact` (a
    /// `Prop-content-length`), as svnadmin's `parse_property_block` reads one: entries up
    /// to `PROPS-END`, or until exactly `len` bytes are used, whichever comes first; a
    /// `PROPS-END` before or after the declared length is accepted as svnadmin accepts it
    /// (only the props limit bounds the block; a zero `len` is an empty block). Without
    /// (old format 1, `len` the whole `Content-length`), the block must end within `len`.
    /// Returns the bytes used. `D` entries are allowed only in node records.
    fn read_props(
        &mut self,
        len: u64,
        exact: bool,
        is_node: bool,
    ) -> Result<(PropsBlock, u64), DumpError> {
        let max = self.limits.max_props_len;
        if exact && len > max {
            return Err(DumpError::LimitExceeded {
                what: "Prop-content-length",
                limit: max,
                at: self.ctx.at(),
            });
        }
        let mut block = PropBudget {
            used: 0,
            len,
            cap: if exact { max } else { len.min(max) },
        };
        let mut entries = Vec::new();
        if len == 0 {
            return Ok((PropsBlock(entries), 0));
        }
        loop {
            if exact && block.used == len {
                break;
            }
            let line = self.prop_line(&mut block)?;
            if line == b"PROPS-END" {
                break;
            }
            match line.get(..2) {
                Some(b"K ") => {
                    let key = self.prop_data(&line, &mut block)?;
                    let vline = self.prop_line(&mut block)?;
                    if !vline.starts_with(b"V ") {
                        return Err(DumpError::MalformedProps {
                            detail: format!("expected a 'V' line, found {:?}", shown(&vline)),
                            at: self.ctx.at(),
                        });
                    }
                    let value = self.prop_data(&vline, &mut block)?;
                    entries.push(PropEntry::Set(key, value));
                }
                Some(b"D ") => {
                    if !is_node {
                        return Err(DumpError::MalformedProps {
                            detail: "a 'D' (deletion) entry in revision properties".into(),
                            at: self.ctx.at(),
                        });
                    }
                    let key = self.prop_data(&line, &mut block)?;
                    entries.push(PropEntry::Delete(key));
                }
                _ => {
                    return Err(DumpError::MalformedProps {
                        detail: format!(
                            "expected a 'K', 'D' or PROPS-END line, found {:?}",
                            shown(&line)
                        ),
                        at: self.ctx.at(),
                    })
                }
            }
        }
        Ok((PropsBlock(entries), block.used))
    }

    /// The error for a property block that would run past its length (or past the limit).
    fn props_overrun(&self, block: &PropBudget, need: u64) -> DumpError {
        if block.cap != block.len && block.used.saturating_add(need) > block.cap {
            DumpError::LimitExceeded {
                what: "property block length",
                limit: block.cap,
                at: self.ctx.at(),
            }
        } else {
            DumpError::LengthMismatch {
                detail: format!(
                    "property block runs past its declared length of {} bytes",
                    block.len
                ),
                at: self.ctx.at(),
            }
        }
    }

    /// One line of a property block, counted against its budget.
    fn prop_line(&mut self, block: &mut PropBudget) -> Result<Vec<u8>, DumpError> {
        let room = block.cap - block.used;
        if room == 0 {
            return Err(if block.cap == block.len {
                DumpError::LengthMismatch {
                    detail: format!(
                        "property block of {} bytes does not end with PROPS-END",
                        block.len
                    ),
                    at: self.ctx.at(),
                }
            } else {
                self.props_overrun(block, 1)
            });
        }
        // Room for the line's bytes, the newline excluded.
        let budget_limit = usize::try_from(room - 1).unwrap_or(usize::MAX);
        let limit = budget_limit.min(self.limits.max_header_line);
        let (line, end) = self.read_line(limit)?;
        match end {
            LineEnd::Newline => {
                block.used += line.len() as u64 + 1;
                Ok(line)
            }
            LineEnd::Eof => Err(DumpError::Truncated {
                what: "a property block",
                at: self.ctx.at(),
            }),
            LineEnd::TooLong if limit == budget_limit => {
                Err(self.props_overrun(block, room.saturating_add(1)))
            }
            LineEnd::TooLong => Err(DumpError::LimitExceeded {
                what: "property block line length",
                limit: self.limits.max_header_line as u64,
                at: self.ctx.at(),
            }),
        }
    }

    /// The data of a `K`, `V` or `D` entry whose length line is `line`, and its newline.
    fn prop_data(&mut self, line: &[u8], block: &mut PropBudget) -> Result<Vec<u8>, DumpError> {
        let digits = std::str::from_utf8(&line[2..]).map_err(|_| DumpError::BadNumber {
            field: "property block".into(),
            value: shown(&line[2..]),
            at: self.ctx.at(),
        })?;
        let len = self.number("property block", digits, self.ctx.offset)?;
        let need = len.saturating_add(1);
        if need > block.cap - block.used {
            return Err(self.props_overrun(block, need));
        }
        let data = self.read_vec(len, "a property block")?;
        if self.read_vec(1, "a property block")? != b"\n" {
            return Err(DumpError::MalformedProps {
                detail: "property name or value not followed by a newline".into(),
                at: self.ctx.at(),
            });
        }
        block.used += need;
        Ok(data)
    }

    fn number(&self, field: &str, value: &str, start: u64) -> Result<u64, DumpError> {
        parse_decimal(value).ok_or_else(|| DumpError::BadNumber {
            field: field.to_string(),
            value: shown(value.as_bytes()),
            at: self.ctx.at_offset(start),
        })
    }

    fn bad_value(&self, header: &'static str, value: &str, start: u64) -> DumpError {
        DumpError::BadHeaderValue {
            header,
            value: shown(value.as_bytes()),
            at: self.ctx.at_offset(start),
        }
    }

    fn line_too_long(&self, start: u64) -> DumpError {
        DumpError::LimitExceeded {
            what: "header line length",
            limit: self.limits.max_header_line as u64,
            at: self.ctx.at_offset(start),
        }
    }

    /// Runs `f` on the buffered input (empty at end of input) and consumes the number of
    /// bytes it returns.
    fn step<T>(&mut self, f: impl FnOnce(&[u8]) -> (usize, T)) -> Result<T, DumpError> {
        let buf = loop {
            match self.input.fill_buf() {
                Ok(buf) => break buf,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(source) => {
                    return Err(DumpError::Io {
                        source,
                        at: self.ctx.at(),
                    })
                }
            }
        };
        let (n, t) = f(buf);
        self.input.consume(n);
        self.ctx.offset += n as u64;
        Ok(t)
    }

    /// Reads up to a newline (consumed, not returned), holding at most `limit` bytes.
    fn read_line(&mut self, limit: usize) -> Result<(Vec<u8>, LineEnd), DumpError> {
        let mut line = Vec::new();
        loop {
            let room = limit - line.len();
            let end = self.step(|buf| {
                if buf.is_empty() {
                    return (0, Some(LineEnd::Eof));
                }
                let scan = &buf[..buf.len().min(room.saturating_add(1))];
                if let Some(i) = scan.iter().position(|&b| b == b'\n') {
                    line.extend_from_slice(&buf[..i]);
                    (i + 1, Some(LineEnd::Newline))
                } else if buf.len() > room {
                    (0, Some(LineEnd::TooLong))
                } else {
                    line.extend_from_slice(buf);
                    (buf.len(), None)
                }
            })?;
            if let Some(end) = end {
                return Ok((line, end));
            }
        }
    }

    /// Consumes exactly `n` bytes.
    fn skip(&mut self, mut n: u64, what: &'static str) -> Result<(), DumpError> {
        while n > 0 {
            let got = self.step(|buf| {
                let k = usize::try_from(n).unwrap_or(usize::MAX).min(buf.len());
                (k, k)
            })?;
            if got == 0 {
                return Err(DumpError::Truncated {
                    what,
                    at: self.ctx.at(),
                });
            }
            n -= got as u64;
        }
        Ok(())
    }

    /// Reads exactly `n` bytes, growing the buffer only as data arrives. The caller has
    /// checked `n` against a limit.
    fn read_vec(&mut self, n: u64, what: &'static str) -> Result<Vec<u8>, DumpError> {
        let mut out = Vec::new();
        while (out.len() as u64) < n {
            let want = n - out.len() as u64;
            let got = self.step(|buf| {
                let k = usize::try_from(want).unwrap_or(usize::MAX).min(buf.len());
                out.extend_from_slice(&buf[..k]);
                (k, k)
            })?;
            if got == 0 {
                return Err(DumpError::Truncated {
                    what,
                    at: self.ctx.at(),
                });
            }
        }
        Ok(out)
    }
}

/// How much of a property block has been read, of how much it may hold.
struct PropBudget {
    used: u64,
    /// The declared length.
    len: u64,
    /// `len`, or the props limit if smaller (old format 1 blocks, whose length is the
    /// whole `Content-length`).
    cap: u64,
}

/// Subversion's `svn_ctype_isspace`: space, \t, \n, \v, \f, \r.
fn is_svn_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// Plain decimal digits fitting in a u64.
fn parse_decimal(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// The text section of the current node record; see [`DumpReader::text`].
pub struct TextReader<'a, R: BufRead> {
    reader: &'a mut DumpReader<R>,
}

impl<R: BufRead> TextReader<'_, R> {
    /// Bytes of the text not yet read.
    pub fn remaining(&self) -> u64 {
        self.reader.text_remaining
    }
}

impl<R: BufRead> Read for TextReader<'_, R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let n = {
            let buf = self.fill_buf()?;
            let n = buf.len().min(out.len());
            out[..n].copy_from_slice(&buf[..n]);
            n
        };
        self.consume(n);
        Ok(n)
    }
}

impl<R: BufRead> BufRead for TextReader<'_, R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        let r = &mut *self.reader;
        if r.text_remaining == 0 {
            return Ok(&[]);
        }
        // Retry interruptions without holding the buffer, then take it.
        loop {
            match r.input.fill_buf() {
                Ok(_) => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
        let buf = r.input.fill_buf()?;
        if buf.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                DumpError::Truncated {
                    what: "node text",
                    at: r.ctx.at(),
                },
            ));
        }
        let n = usize::try_from(r.text_remaining)
            .unwrap_or(usize::MAX)
            .min(buf.len());
        Ok(&buf[..n])
    }

    fn consume(&mut self, amt: usize) {
        let r = &mut *self.reader;
        let amt = usize::try_from(r.text_remaining)
            .unwrap_or(usize::MAX)
            .min(amt);
        r.input.consume(amt);
        r.ctx.offset += amt as u64;
        r.text_remaining -= amt as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reader(input: &[u8]) -> DumpReader<&[u8]> {
        DumpReader::new(input)
    }

    /// All records, texts read in full.
    fn parse(input: &[u8]) -> Result<Vec<(Record, Vec<u8>)>, DumpError> {
        let mut r = reader(input);
        let mut out = Vec::new();
        while let Some(rec) = r.next_record()? {
            let mut text = Vec::new();
            if let Err(e) = r.text().read_to_end(&mut text) {
                let inner = e.into_inner().expect("text errors wrap a DumpError");
                return Err(*inner.downcast::<DumpError>().expect("a DumpError"));
            }
            out.push((rec, text));
        }
        Ok(out)
    }

    fn node(rec: &Record) -> &Node {
        match rec {
            Record::Node(n) => n,
            other => panic!("expected a node, got {other:?}"),
        }
    }

    fn err(input: &[u8]) -> DumpError {
        parse(input).expect_err("input is invalid")
    }

    const HEAD: &str = "SVN-fs-dump-format-version: 2\n\n";

    fn dump(body: &str) -> Vec<u8> {
        format!("{HEAD}{body}").into_bytes()
    }

    #[test]
    fn minimal_dump() {
        let input = dump(
            "UUID: u-1\n\nRevision-number: 0\nProp-content-length: 10\nContent-length: 10\n\n\
             PROPS-END\n\nRevision-number: 1\nProp-content-length: 29\nContent-length: 29\n\n\
             K 7\nsvn:log\nV 2\nhi\nPROPS-END\n\n\
             Node-path: f\nNode-kind: file\nNode-action: add\nText-content-length: 3\n\
             Content-length: 3\nX-Unknown: kept\n\nabc\n\n",
        );
        let recs = parse(&input).expect("valid");
        assert_eq!(recs.len(), 5);
        assert_eq!(recs[0].0, Record::Format(2));
        assert_eq!(recs[1].0, Record::Uuid("u-1".into()));
        match &recs[3].0 {
            Record::Revision { number, props, .. } => {
                assert_eq!(*number, 1);
                assert_eq!(
                    props.0,
                    vec![PropEntry::Set(b"svn:log".to_vec(), b"hi".to_vec())]
                );
            }
            other => panic!("{other:?}"),
        }
        let n = node(&recs[4].0);
        assert_eq!(n.path, "f");
        assert_eq!(n.kind, Some(NodeKind::File));
        assert_eq!(n.action, NodeAction::Add);
        assert_eq!(n.props, None);
        assert_eq!(n.text_len, Some(3));
        assert_eq!(n.headers.get("X-Unknown"), Some("kept"));
        assert_eq!(recs[4].1, b"abc");
    }

    #[test]
    fn blank_and_whitespace_lines_between_records_are_skipped() {
        let input = dump(
            "\n\n   junk after spaces\n\t\n\r\nRevision-number: 1\n\n\n\n\
             Node-path: a\nNode-action: delete\n\n",
        );
        let recs = parse(&input).expect("valid");
        assert_eq!(recs.len(), 3);
        assert_eq!(node(&recs[2].0).action, NodeAction::Delete);
    }

    #[test]
    fn unread_text_and_extra_content_are_skipped() {
        let input = dump(
            "Revision-number: 1\n\n\
             Node-path: f\nNode-kind: file\nNode-action: change\nText-content-length: 4\n\
             Content-length: 9\n\nabcdEXTRA\n\n\
             Node-path: g\nNode-kind: dir\nNode-action: add\nContent-length: 5\n\nxxxxx\n\n\
             Node-path: h\nNode-action: delete\n\n",
        );
        let mut r = reader(&input);
        let mut paths = Vec::new();
        while let Some(rec) = r.next_record().expect("valid") {
            if let Record::Node(n) = rec {
                if n.path == "f" {
                    let mut two = [0u8; 2];
                    r.text().read_exact(&mut two).expect("text");
                    assert_eq!(&two, b"ab");
                    assert_eq!(r.text().remaining(), 2);
                }
                if n.path == "g" {
                    assert_eq!((n.props.as_ref(), n.text_len), (None, None));
                }
                paths.push(n.path);
            }
        }
        assert_eq!(paths, ["f", "g", "h"]);
        assert_eq!(r.offset(), input.len() as u64);
    }

    #[test]
    fn props_blocks() {
        let input = dump(
            "Revision-number: 1\n\n\
             Node-path: d\nNode-kind: dir\nNode-action: change\nProp-delta: true\n\
             Prop-content-length: 30\nContent-length: 30\n\n\
             K 1\na\nV 3\nx\ny\nD 1\nb\nPROPS-END\n\n\n\
             Node-path: e\nNode-kind: dir\nNode-action: change\nProp-content-length: 0\n\n",
        );
        let recs = parse(&input).expect("valid");
        let d = node(&recs[2].0);
        assert!(d.props_delta);
        assert_eq!(
            d.props.as_ref().expect("props").0,
            vec![
                PropEntry::Set(b"a".to_vec(), b"x\ny".to_vec()),
                PropEntry::Delete(b"b".to_vec())
            ]
        );
        assert_eq!(node(&recs[3].0).props, Some(PropsBlock::default()));
    }

    #[test]
    fn length_disagreements() {
        let e = err(&dump(
            "Revision-number: 1\nProp-content-length: 10\nContent-length: 9\n\nPROPS-END\n",
        ));
        assert!(matches!(e, DumpError::LengthMismatch { .. }), "{e}");
        // A value running past the end of the stream.
        let e = err(&dump(
            "Revision-number: 1\nProp-content-length: 20\n\nK 1\na\nV 99\nb\nPROPS-END\n",
        ));
        assert!(matches!(e, DumpError::Truncated { .. }), "{e}");
        let e = err(&dump(
            "Revision-number: 1\n\nNode-path: a\nNode-action: add\n\
             Prop-content-length: 18446744073709551615\nText-content-length: 5\n\n",
        ));
        assert!(matches!(e, DumpError::LengthMismatch { .. }), "{e}");
    }

    /// svnadmin's `parse_property_block` reads to PROPS-END or to the declared length,
    /// whichever comes first: a wrong Prop-content-length is tolerated.
    #[test]
    fn props_end_where_svnadmin_finds_it() {
        let props = |text: &str| match &parse(&dump(text)).expect("svnadmin accepts it")[1].0 {
            Record::Revision { props, .. } => props.clone(),
            other => panic!("{other:?}"),
        };
        let ab = PropsBlock(vec![PropEntry::Set(b"a".to_vec(), b"b".to_vec())]);
        // PROPS-END before the declared end (Subversion's load_normalize_node_props).
        let text = "Revision-number: 1\nProp-content-length: 99\nContent-length: 99\n\n\
                    K 1\na\nV 1\nb\nPROPS-END\n\n";
        assert_eq!(props(text), ab);
        // PROPS-END after it.
        let text = "Revision-number: 1\nProp-content-length: 14\nContent-length: 14\n\n\
                    K 1\na\nV 1\nb\nPROPS-END\n\n";
        assert_eq!(props(text), ab);
        // The declared length reached at the end of an entry: the block ends there.
        let text = "Revision-number: 1\nProp-content-length: 12\nContent-length: 12\n\n\
                    K 1\na\nV 1\nb\n\n";
        assert_eq!(props(text), ab);
    }

    #[test]
    fn malformed_props() {
        let e = err(&dump(
            "Revision-number: 1\nProp-content-length: 18\n\nD 1\na\nPROPS-END\n",
        ));
        assert!(matches!(e, DumpError::MalformedProps { .. }), "{e}");
        let e = err(&dump(
            "Revision-number: 1\nProp-content-length: 16\n\nX 1\nPROPS-END\n",
        ));
        assert!(matches!(e, DumpError::MalformedProps { .. }), "{e}");
        let e = err(&dump(
            "Revision-number: 1\nProp-content-length: 22\n\nK 1\naXV 1\nbPROPS-END\n",
        ));
        assert!(matches!(e, DumpError::MalformedProps { .. }), "{e}");
        let e = err(&dump(
            "Revision-number: 1\nProp-content-length: 22\n\nK x\na\nV 1\nb\nPROPS-END\n",
        ));
        assert!(matches!(e, DumpError::BadNumber { .. }), "{e}");
    }

    #[test]
    fn old_format_1_content_length_only() {
        let input = b"SVN-fs-dump-format-version: 1\n\n\
            Revision-number: 1\nContent-length: 29\n\nK 7\nsvn:log\nV 2\nhi\nPROPS-END\n\n\
            Node-path: f\nNode-kind: file\nNode-action: add\nContent-length: 13\n\nPROPS-END\nabc\n\n\
            Node-path: e\nNode-kind: file\nNode-action: add\nContent-length: 10\n\nPROPS-END\n\n\
            Node-path: d\nNode-kind: dir\nNode-action: add\nContent-length: 10\n\nPROPS-END\n\n";
        let recs = parse(input).expect("valid");
        match &recs[1].0 {
            Record::Revision { props, .. } => assert_eq!(props.0.len(), 1),
            other => panic!("{other:?}"),
        }
        let f = node(&recs[2].0);
        assert_eq!((f.props.is_some(), f.text_len), (true, Some(3)));
        assert_eq!(recs[2].1, b"abc");
        assert_eq!(node(&recs[3].0).text_len, Some(0));
        assert_eq!(node(&recs[4].0).text_len, None);
        // In format 2 the same record's content is skipped.
        let v2 =
            dump("Revision-number: 1\nContent-length: 29\n\nK 7\nsvn:log\nV 2\nhi\nPROPS-END\n\n");
        match &parse(&v2).expect("valid")[1].0 {
            Record::Revision { props, .. } => assert!(props.0.is_empty()),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn format_line() {
        assert!(matches!(err(b""), DumpError::Truncated { .. }));
        assert!(matches!(
            err(b"SVN-fs-dump-format-version: 2"),
            DumpError::Truncated { .. }
        ));
        assert!(matches!(
            err(b"SVN-fs-dump-format-version: 4\n\n"),
            DumpError::UnsupportedVersion { .. }
        ));
        assert!(matches!(
            err(b"SVN-fs-dump-format-version: 0\n\n"),
            DumpError::UnsupportedVersion { .. }
        ));
        assert!(matches!(err(b"hello\n"), DumpError::MalformedHeader { .. }));
        assert!(matches!(
            err(&[b'x'; 1000]),
            DumpError::MalformedHeader { .. }
        ));
        assert_eq!(
            parse(b"SVN-fs-dump-format-version:3\n").expect("valid")[0].0,
            Record::Format(3)
        );
        // A later format record (concatenated dumps) switches the version.
        let recs = parse(&dump("SVN-fs-dump-format-version: 3\n\n")).expect("valid");
        assert_eq!(recs[1].0, Record::Format(3));
    }

    #[test]
    fn header_errors() {
        let e = err(&dump("Revision-number: 1\nNo colon here\n\n"));
        assert!(matches!(e, DumpError::MalformedHeader { .. }), "{e}");
        let e = err(&dump("Revision-number:1\n\n"));
        assert!(matches!(e, DumpError::MalformedHeader { .. }), "{e}");
        let e = err(&dump("Revision-number: 1x\n\n"));
        assert!(matches!(e, DumpError::BadNumber { .. }), "{e}");
        let e = err(&dump("Revision-number: 99999999999999999999\n\n"));
        assert!(matches!(e, DumpError::BadNumber { .. }), "{e}");
        let e = err(&dump("Something: else\n\n"));
        assert!(matches!(e, DumpError::UnrecognizedRecord { .. }), "{e}");
        let e = err(&dump(
            "Revision-number: 1\n\nNode-path: a\nNode-kind: file\n\n",
        ));
        assert!(
            matches!(
                e,
                DumpError::MissingHeader {
                    header: "Node-action",
                    ..
                }
            ),
            "{e}"
        );
        let e = err(&dump(
            "Revision-number: 1\n\nNode-path: a\nNode-action: move\n\n",
        ));
        assert!(matches!(e, DumpError::BadHeaderValue { .. }), "{e}");
        let e = err(&dump(
            "Revision-number: 1\n\nNode-path: a\nNode-kind: link\nNode-action: add\n\n",
        ));
        assert!(matches!(e, DumpError::BadHeaderValue { .. }), "{e}");
        let e = err(&dump(
            "Revision-number: 1\n\nNode-path: a\nNode-action: add\nNode-copyfrom-rev: 1\n\n",
        ));
        assert!(
            matches!(
                e,
                DumpError::MissingHeader {
                    header: "Node-copyfrom-path",
                    ..
                }
            ),
            "{e}"
        );
        let e = err(&dump(
            "Revision-number: 1\n\nNode-path: a\nNode-action: add\nText-content-md5: xyz\n\n",
        ));
        assert!(matches!(e, DumpError::BadHeaderValue { .. }), "{e}");
        let mut input = dump("Revision-number: 1\n");
        input.extend_from_slice(b"\xff: x\n\n");
        let e = err(&input);
        assert!(matches!(e, DumpError::MalformedHeader { .. }), "{e}");
    }

    #[test]
    fn errors_say_where() {
        let input = dump("Revision-number: 5\n\nNode-path: trunk/a\nNode-action: add\nText-content-length: 9\n\nab");
        let mut r = reader(&input);
        let mut last = None;
        for _ in 0..10 {
            match r.next_record() {
                Ok(Some(_)) => {}
                Ok(None) => break,
                Err(e) => {
                    last = Some(e);
                    break;
                }
            }
        }
        let e = last.expect("truncated");
        assert!(e.is_truncation());
        let at = e.location();
        assert_eq!(at.offset, input.len() as u64);
        assert_eq!(at.revision, Some(5));
        assert_eq!(at.node_path.as_deref(), Some("trunk/a"));
        let msg = e.to_string();
        assert!(
            msg.contains("revision 5") && msg.contains("trunk/a"),
            "{msg}"
        );
        // The reader is finished after an error.
        assert!(matches!(r.next_record(), Ok(None)));
    }

    #[test]
    fn truncations() {
        // Inside a header block: svnadmin load takes EOF as the end of the block; we do only
        // for a lone UUID record (below).
        let e = err(&dump(
            "Revision-number: 1\n\nNode-path: a\nNode-action: delete\n",
        ));
        assert!(e.is_truncation(), "{e}");
        let e = err(&dump(
            "Revision-number: 1\nProp-content-length: 10\n\nPROPS-",
        ));
        assert!(e.is_truncation(), "{e}");
        let e = err(&dump("Revision-numb"));
        assert!(e.is_truncation(), "{e}");
        // A lone UUID record may end at the end of input, as svnadmin takes it; not
        // without its line's newline, and not after another header.
        let input = dump("UUID: 01234567-89ab-cdef-89ab-cdef01234567\n");
        let mut r = reader(&input);
        assert_eq!(r.next_record().expect("format"), Some(Record::Format(2)));
        assert_eq!(
            r.next_record().expect("a UUID record"),
            Some(Record::Uuid("01234567-89ab-cdef-89ab-cdef01234567".into()))
        );
        assert!(matches!(r.next_record(), Ok(None)));
        assert!(err(&dump("UUID: 0123")).is_truncation());
        assert!(err(&dump("UUID: 0123\nRevision-number: 1\n")).is_truncation());
        // Text read through text(): an io::Error wrapping the DumpError.
        let input = dump(
            "Revision-number: 1\n\nNode-path: a\nNode-action: add\nText-content-length: 9\n\nab",
        );
        let mut r = reader(&input);
        while let Some(rec) = r.next_record().expect("headers are whole") {
            if matches!(rec, Record::Node(_)) {
                let mut buf = Vec::new();
                let e = r.text().read_to_end(&mut buf).expect_err("truncated text");
                assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);
                assert_eq!(buf, b"ab");
                break;
            }
        }
    }

    #[test]
    fn limits() {
        let tiny = Limits {
            max_header_line: 16,
            max_headers: 2,
            max_props_len: 12,
        };
        let run = |body: &str| {
            let input = dump(body);
            let mut r = DumpReader::with_limits(&input[..], tiny);
            loop {
                match r.next_record() {
                    Ok(Some(_)) => {}
                    Ok(None) => return None,
                    Err(e) => return Some(e),
                }
            }
        };
        assert!(run("Revision-number: 1\n\n")
            .is_some_and(|e| matches!(e, DumpError::LimitExceeded { .. })));
        assert!(run("Revision-nu: 1\nA: b\nC: d\n\n")
            .is_some_and(|e| matches!(e, DumpError::LimitExceeded { .. })));
        let props_limit = |body: &str| {
            let limits = Limits {
                max_header_line: 64,
                ..tiny
            };
            let input = dump(body);
            let mut r = DumpReader::with_limits(&input[..], limits);
            r.next_record().expect("format line");
            r.next_record().expect_err("over the limit")
        };
        let e = props_limit("Revision-number: 1\nProp-content-length: 13\n\n");
        assert!(
            matches!(
                e,
                DumpError::LimitExceeded {
                    what: "Prop-content-length",
                    ..
                }
            ),
            "{e}"
        );
        // Format 1: the property block's length is not declared; the limit still holds.
        let input = b"SVN-fs-dump-format-version: 1\n\nRevision-number: 1\nContent-length: 99\n\n\
            K 7\nsvn:log\nV 2\nhi\nPROPS-END\n";
        let mut r = DumpReader::with_limits(
            &input[..],
            Limits {
                max_props_len: 12,
                ..Limits::default()
            },
        );
        r.next_record().expect("format line");
        let e = r.next_record().expect_err("over the limit");
        assert!(matches!(e, DumpError::LimitExceeded { .. }), "{e}");
        assert!(run("Revision-nu: 1\n\n")
            .is_some_and(|e| matches!(e, DumpError::UnrecognizedRecord { .. })));
        // A huge declared length is refused before anything is allocated.
        let e = err(&dump(
            "Revision-number: 1\nProp-content-length: 999999999999\n\n",
        ));
        assert!(matches!(e, DumpError::LimitExceeded { .. }), "{e}");
        let e = err(&dump(
            "Revision-number: 1\nProp-content-length: 100\n\nK 99999999999999\n",
        ));
        assert!(matches!(e, DumpError::LimitExceeded { .. }), "{e}");
    }

    #[test]
    fn duplicate_headers_last_wins() {
        let recs = parse(&dump(
            "Revision-number: 1\n\nNode-path: a\nNode-path: b\nNode-action: add\nNode-action: delete\n\n",
        ))
        .expect("valid");
        let n = node(&recs[2].0);
        assert_eq!((n.path.as_str(), n.action), ("b", NodeAction::Delete));
        assert_eq!(n.headers.len(), 4);
    }
}
