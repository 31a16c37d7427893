//! Request XML (quick-xml's namespace-aware reader into a small tree, bounded in depth and
//! size) and the escaping the answers need.

use quick_xml::events::Event;
use quick_xml::name::ResolveResult;
use quick_xml::NsReader;
use std::borrow::Cow;

/// `DAV:`.
pub const DAV: &str = "DAV:";
/// Subversion's report namespace.
pub const SVN: &str = "svn:";
/// Subversion's own live properties (`V:`).
pub const SVN_DAV: &str = "http://subversion.tigris.org/xmlns/dav/";
/// Versioned properties named `svn:*` (the name after `svn:`).
pub const SVN_PROP: &str = "http://subversion.tigris.org/xmlns/svn/";
/// Other versioned properties (the whole name).
pub const CUSTOM_PROP: &str = "http://subversion.tigris.org/xmlns/custom/";

/// Elements deeper than this are refused (a request needs four levels).
const MAX_DEPTH: usize = 64;
/// Attributes of one element past this are refused (a request's have at most five):
/// quick-xml compares each with those before it, so their number must stay small.
const MAX_ATTRIBUTES: usize = 32;

/// What a document's tree may take, about, in bytes: [`TREE_PER_BYTE`] times its text,
/// and 1 MiB for any. An update report of many short entries takes 7 times its text (an
/// `S:entry` element with two attributes for 45 bytes); a document of empty elements
/// would take 40 (an element per 4 bytes: 16 MiB of them took 650 MB), and is refused
/// once it passes the bound instead.
fn tree_budget(text_len: usize) -> usize {
    text_len
        .saturating_mul(TREE_PER_BYTE)
        .saturating_add(1 << 20)
}
const TREE_PER_BYTE: usize = 12;
/// What an element takes besides its strings' bytes: the [`Elem`], its place in its
/// parent's `children` (which grows by doubling) and its strings' allocations.
const ELEM_COST: usize = 160;
/// What an attribute takes besides its bytes: the pair and its two allocations.
const ATTR_COST: usize = 64;

/// One element of a request document.
#[derive(Debug, Default, Clone)]
pub struct Elem {
    /// The namespace URI ("" for none).
    pub ns: String,
    pub name: String,
    /// Attributes by local name (their prefixes are not kept), values unescaped.
    pub attrs: Vec<(String, String)>,
    /// The element's own character data, unescaped, not trimmed.
    pub text: String,
    pub children: Vec<Elem>,
}

impl Elem {
    pub fn is(&self, ns: &str, name: &str) -> bool {
        self.ns == ns && self.name == name
    }

    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn child(&self, ns: &str, name: &str) -> Option<&Elem> {
        self.children.iter().find(|c| c.is(ns, name))
    }

    /// The trimmed text of the first `ns:name` child.
    pub fn child_text(&self, ns: &str, name: &str) -> Option<&str> {
        self.child(ns, name).map(|c| c.text.trim())
    }
}

/// Why a request body is not the XML it should be (answered 400 with Subversion's
/// `XML_MALFORMED`, `error.rs`).
#[derive(Debug)]
pub struct Malformed(pub String);

fn malformed(e: impl std::fmt::Display) -> Malformed {
    Malformed(format!("The request's XML body is malformed: {e}"))
}

/// Parses a request body into its root element.
pub fn parse(body: &[u8]) -> Result<Elem, Malformed> {
    let text = std::str::from_utf8(body).map_err(|e| malformed(format!("not UTF-8 ({e})")))?;
    let mut reader = NsReader::from_str(text);
    let mut stack: Vec<Elem> = Vec::new();
    let mut root: Option<Elem> = None;
    let budget = tree_budget(body.len());
    let mut charged = 0usize;
    let too_big = || malformed("too many elements and attributes for its size");
    loop {
        let (ns, event) = reader.read_resolved_event().map_err(malformed)?;
        match event {
            Event::Start(ref e) | Event::Empty(ref e) => {
                if root.is_some() {
                    return Err(malformed("content after the root element"));
                }
                if stack.len() >= MAX_DEPTH {
                    return Err(malformed("too deeply nested elements"));
                }
                let ns = match ns {
                    ResolveResult::Bound(n) => String::from_utf8_lossy(n.as_ref()).into_owned(),
                    ResolveResult::Unbound => String::new(),
                    ResolveResult::Unknown(p) => {
                        return Err(malformed(format!(
                            "unknown namespace prefix '{}'",
                            String::from_utf8_lossy(&p)
                        )))
                    }
                };
                let name = String::from_utf8_lossy(e.local_name().as_ref()).into_owned();
                let mut attrs = Vec::new();
                for (i, a) in e.attributes().enumerate() {
                    if i >= MAX_ATTRIBUTES {
                        return Err(malformed("too many attributes on one element"));
                    }
                    let a = a.map_err(malformed)?;
                    let key = a.key;
                    if key.as_ref().starts_with(b"xmlns") {
                        continue;
                    }
                    let local = String::from_utf8_lossy(key.local_name().as_ref()).into_owned();
                    let value = a.unescape_value().map_err(malformed)?.into_owned();
                    charged += ATTR_COST + local.len() + value.len();
                    if charged > budget {
                        return Err(too_big());
                    }
                    attrs.push((local, value));
                }
                charged += ELEM_COST + ns.len() + name.len();
                if charged > budget {
                    return Err(too_big());
                }
                let el = Elem {
                    ns,
                    name,
                    attrs,
                    ..Elem::default()
                };
                if matches!(event, Event::Start(_)) {
                    stack.push(el);
                } else {
                    close(&mut stack, &mut root, el);
                }
            }
            Event::End(_) => {
                let el = stack.pop().ok_or_else(|| malformed("unbalanced end tag"))?;
                close(&mut stack, &mut root, el);
            }
            Event::Text(t) => {
                if let Some(top) = stack.last_mut() {
                    top.text.push_str(&t.unescape().map_err(malformed)?);
                }
            }
            Event::CData(t) => {
                if let Some(top) = stack.last_mut() {
                    top.text.push_str(&String::from_utf8_lossy(&t));
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if !stack.is_empty() {
        return Err(malformed("the document ends inside an element"));
    }
    root.ok_or_else(|| malformed("no root element"))
}

fn close(stack: &mut [Elem], root: &mut Option<Elem>, el: Elem) {
    match stack.last_mut() {
        Some(parent) => parent.children.push(el),
        None => *root = Some(el),
    }
}

/// Appends `s` to `out` with `&`, `<`, `>` escaped, `"` too with `quot`, and `\r` as
/// `&#13;` with `cr`: runs without those are copied whole.
fn escape_to(out: &mut String, s: &str, quot: bool, cr: bool) {
    let bytes = s.as_bytes();
    // The fourth byte to escape, if any (`"` or `\r`; never both).
    let other = if quot {
        Some(b'"')
    } else if cr {
        Some(b'\r')
    } else {
        None
    };
    let mut from = 0;
    // Found with memchr (a log's paths and messages seldom hold any), not byte by byte.
    let mut next3 = memchr::memchr3(b'&', b'<', b'>', bytes);
    let mut next1 = other.and_then(|o| memchr::memchr(o, bytes));
    loop {
        let i = match (next3, next1) {
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) | (None, Some(a)) => a,
            (None, None) => break,
        };
        let e = match bytes[i] {
            b'&' => "&amp;",
            b'<' => "&lt;",
            b'>' => "&gt;",
            b'"' => "&quot;",
            _ => "&#13;",
        };
        // ASCII bytes never fall inside a UTF-8 sequence: both ends are char boundaries.
        out.push_str(&s[from..i]);
        out.push_str(e);
        from = i + 1;
        if next3 == Some(i) {
            next3 = memchr::memchr3(b'&', b'<', b'>', &bytes[from..]).map(|p| p + from);
        }
        if next1 == Some(i) {
            next1 = other.and_then(|o| memchr::memchr(o, &bytes[from..]).map(|p| p + from));
        }
    }
    out.push_str(&s[from..]);
}

/// Appends `s` escaped as [`esc`] escapes it.
pub fn esc_to(out: &mut String, s: &str) {
    escape_to(out, s, true, false)
}

/// Appends `s` escaped as [`esc_cdata`] escapes it.
pub fn esc_cdata_to(out: &mut String, s: &str) {
    escape_to(out, s, false, true)
}

/// Escapes text or an attribute value (`&`, `<`, `>`, `"`).
pub fn esc(s: &str) -> Cow<'_, str> {
    // `apr_xml_quote_string(..., 1)` as mod_dav_svn calls it: `<`, `>`, `&` and `"`, not `'`.
    match quick_xml::escape::partial_escape(s) {
        Cow::Borrowed(b) if !b.contains('"') => Cow::Borrowed(b),
        e => Cow::Owned(e.replace('"', "&quot;")),
    }
}

/// Text as `apr_xml_quote_string` quotes it (`&`, `<`, `>`; and `"` with `quotes`).
pub fn quote(s: &str, quotes: bool) -> String {
    escape_with(s, |c| match c {
        '"' if quotes => Some("&quot;"),
        _ => None,
    })
}

/// `&`, `<` and `>` escaped, and whatever `more` escapes.
fn escape_with(s: &str, more: impl Fn(char) -> Option<&'static str>) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => match more(c) {
                Some(e) => out.push_str(e),
                None => out.push(c),
            },
        }
    }
    out
}

/// Subversion's `svn_xml_is_xml_safe`: UTF-8 without control characters other than tab,
/// newline and carriage return.
pub fn is_xml_safe(v: &[u8]) -> bool {
    // The control characters are single bytes (every byte of a longer UTF-8 sequence is
    // 0x80 or above): tested byte by byte, not char by char.
    v.iter()
        .all(|&b| b >= 0x20 || b == b'\t' || b == b'\n' || b == b'\r')
        && std::str::from_utf8(v).is_ok()
}

/// An author as mod_dav_svn writes it in `D:creator-displayname` for `PROPFIND` and the
/// `list` report (`dav_svn__fuzzy_escape_author`): one that XML cannot carry (a control
/// character other than tab, line feed and carriage return) loses every control
/// character, so that `svn ls --xml` and `svn info` parse the answer (mod_dav_svn does
/// this for Subversion clients and sends other clients the raw bytes, which no XML
/// parser takes: Svelto filters for every client).
pub fn displayable_author(a: &str) -> Cow<'_, str> {
    if is_xml_safe(a.as_bytes()) {
        Cow::Borrowed(a)
    } else {
        Cow::Owned(a.chars().filter(|c| !c.is_ascii_control()).collect())
    }
}

/// Subversion's `svn_xml_escape_cdata`: `&`, `<`, `>`, and `\r` as `&#13;`.
pub fn esc_cdata(s: &str) -> String {
    escape_with(s, |c| (c == '\r').then_some("&#13;"))
}

/// Base64 with line breaks every 76 characters, as Subversion's encoder writes it.
pub fn base64_lines(v: &[u8]) -> String {
    let mut out = Vec::with_capacity(v.len().div_ceil(57) * 77);
    encode_lines(v, &mut out);
    String::from_utf8(out).expect("base64 is ASCII")
}

/// Appends the base64 of `v` to `out`, 76 characters (57 bytes) a line, each line ended
/// by a newline.
fn encode_lines(v: &[u8], out: &mut Vec<u8>) {
    use base64::Engine;
    for chunk in v.chunks(57) {
        let at = out.len();
        out.resize(at + chunk.len().div_ceil(3) * 4, 0);
        let n = base64::engine::general_purpose::STANDARD
            .encode_slice(chunk, &mut out[at..])
            .expect("sized for the chunk");
        out.truncate(at + n);
        out.push(b'\n');
    }
}

/// Base64 of a stream written in pieces (an svndiff stream inside `S:txdelta`,
/// `S:apply-textdelta`), in one line, as mod_dav_svn 1.14 writes it (its base64 output
/// stream does not break lines; the client's decoder takes any length). One long run
/// costs the client's XML parser one character-data callback per buffer instead of two a
/// line, and the encoder one call per piece.
#[derive(Default)]
pub struct Base64Stream {
    /// The bytes (fewer than 3) waiting for the rest of their group.
    carry: [u8; 3],
    carried: usize,
    /// The encoded text, reused from piece to piece and stream to stream (it only grows,
    /// so it is zeroed once, not on every piece).
    buf: Vec<u8>,
}

impl Base64Stream {
    /// Begins a new stream.
    pub fn start(&mut self) {
        self.carried = 0;
    }

    /// Encodes the whole groups of 3 bytes `data` completes; the rest waits for more.
    pub fn push(&mut self, mut data: &[u8], out: &mut dyn std::io::Write) -> std::io::Result<()> {
        use base64::Engine;
        let mut head = [0u8; 4];
        let mut head_len = 0;
        if self.carried > 0 {
            let take = (3 - self.carried).min(data.len());
            self.carry[self.carried..self.carried + take].copy_from_slice(&data[..take]);
            self.carried += take;
            data = &data[take..];
            if self.carried < 3 {
                return Ok(());
            }
            head_len = base64::engine::general_purpose::STANDARD
                .encode_slice(self.carry, &mut head)
                .expect("4 bytes for 3");
            self.carried = 0;
        }
        let whole = data.len() / 3 * 3;
        let rest = &data[whole..];
        self.carry[..rest.len()].copy_from_slice(rest);
        self.carried = rest.len();
        if head_len > 0 {
            out.write_all(&head[..head_len])?;
        }
        if whole == 0 {
            return Ok(());
        }
        let need = whole / 3 * 4;
        if self.buf.len() < need {
            self.buf.resize(need, 0);
        }
        let n = base64::engine::general_purpose::STANDARD
            .encode_slice(&data[..whole], &mut self.buf[..need])
            .expect("sized for the groups");
        out.write_all(&self.buf[..n])
    }

    /// Encodes what is left (with its padding).
    pub fn finish(&mut self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        use base64::Engine;
        let mut tail = [0u8; 4];
        let n = base64::engine::general_purpose::STANDARD
            .encode_slice(&self.carry[..self.carried], &mut tail)
            .expect("4 bytes for 2");
        self.carried = 0;
        out.write_all(&tail[..n])
    }
}

/// A property value for an element's content: `(attribute, text)`, the attribute being
/// ` encoding="base64"` (with the caller's prefix) when the value is not XML-safe.
pub fn prop_value(v: &[u8]) -> (bool, String) {
    if is_xml_safe(v) {
        (false, esc_cdata(&String::from_utf8_lossy(v)))
    } else {
        (true, base64_lines(v))
    }
}

/// Writes `<TAG ATTRS>value</TAG>` and a newline: the value escaped, or base64-encoded with
/// `ENC_ATTR="base64"` added when it is not XML-safe (`ENC_ATTR` is `encoding` in reports,
/// `V:encoding` in PROPFIND answers).
pub fn value_element(out: &mut String, tag: &str, attrs: &str, enc_attr: &str, value: &[u8]) {
    out.push('<');
    out.push_str(tag);
    out.push_str(attrs);
    value_rest(out, tag, enc_attr, value);
}

/// The rest of [`value_element`] once `<TAG ATTRS` is written: the encoding attribute if
/// any, `>`, the value, `</TAG>` and a newline, appended to `out` without a copy of the
/// value in between.
pub fn value_rest(out: &mut String, tag: &str, enc_attr: &str, value: &[u8]) {
    match std::str::from_utf8(value)
        .ok()
        .filter(|_| is_xml_safe(value))
    {
        Some(v) => {
            out.push('>');
            esc_cdata_to(out, v);
        }
        None => {
            out.push(' ');
            out.push_str(enc_attr);
            out.push_str("=\"base64\">");
            out.push_str(&base64_lines(value));
        }
    }
    out.push_str("</");
    out.push_str(tag);
    out.push_str(">\n");
}

/// Appends the lowercase hex of `bytes` (a checksum) to `out`.
pub fn hex_to(out: &mut String, bytes: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for &b in bytes {
        out.push(HEX[(b >> 4) as usize] as char);
        out.push(HEX[(b & 15) as usize] as char);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_lines_break_every_76_characters() {
        let data: Vec<u8> = (0..1000u32).map(|i| (i * 7 + i / 13) as u8).collect();
        let lines = base64_lines(&data);
        assert!(lines.lines().all(|l| l.len() <= 76));
        assert_eq!(lines.lines().count(), 1000usize.div_ceil(57));
    }

    #[test]
    fn base64_in_pieces_is_base64_of_the_whole() {
        use base64::Engine;
        let data: Vec<u8> = (0..1000u32).map(|i| (i * 7 + i / 13) as u8).collect();
        let b = &mut Base64Stream::default();
        for len in [0, 1, 2, 3, 4, 998, 999, 1000] {
            let data = &data[..len];
            let whole = base64::engine::general_purpose::STANDARD.encode(data);
            for sizes in [&[1usize][..], &[2], &[56, 1, 57, 200], &[3, 500], &[1000]] {
                // One encoder for every stream, as an editor keeps it.
                b.start();
                let mut out = Vec::new();
                let (mut at, mut i) = (0, 0);
                while at < data.len() {
                    let n = sizes[i % sizes.len()].min(data.len() - at);
                    b.push(&data[at..at + n], &mut out).expect("to a Vec");
                    at += n;
                    i += 1;
                }
                b.finish(&mut out).expect("to a Vec");
                assert_eq!(
                    String::from_utf8(out).expect("ASCII"),
                    whole,
                    "{len} {sizes:?}"
                );
            }
        }
    }

    #[test]
    fn parses_namespaces_attributes_and_text() {
        let doc = parse(
            br#"<?xml version="1.0"?><S:update-report xmlns:S="svn:" send-all="true"><S:entry rev="3" start-empty="true">a&amp;b</S:entry></S:update-report>"#,
        )
        .expect("well-formed");
        assert!(doc.is(SVN, "update-report"));
        assert_eq!(doc.attr("send-all"), Some("true"));
        let e = doc.child(SVN, "entry").expect("entry");
        assert_eq!(e.attr("rev"), Some("3"));
        assert_eq!(e.text, "a&b");
    }

    #[test]
    fn refuses_malformed_documents() {
        for bad in [
            &b"<a><b></a>"[..],
            b"<a>",
            b"",
            b"<x:a/>",
            b"<a/><b/>",
            b"\xff\xfe",
        ] {
            let e = crate::HttpError::from(parse(bad).expect_err("malformed"));
            assert_eq!(e.status, hyper::StatusCode::BAD_REQUEST, "{bad:?}");
        }
        let deep = "<a>".repeat(100) + &"</a>".repeat(100);
        assert!(parse(deep.as_bytes()).is_err());
    }

    #[test]
    fn trees_are_bounded_by_the_text() {
        // Many entries, as an update report of a large mixed-revision working copy sends.
        let entry = "<S:entry rev=\"1\" depth=\"infinity\">a</S:entry>";
        let report = format!(
            "<S:update-report xmlns:S=\"svn:\">{}</S:update-report>",
            entry.repeat(200_000)
        );
        let doc = parse(report.as_bytes()).expect("an update report");
        assert_eq!(doc.children.len(), 200_000);
        // Empty elements, attributes: refused once the tree passes its bound.
        let empty = format!("<r>{}</r>", "<a/>".repeat(1_000_000));
        let e = parse(empty.as_bytes()).expect_err("too many elements");
        assert!(e.0.contains("too many elements"), "{e:?}");
        let attrs: String = (0..20_000).map(|i| format!(" a{i}=''")).collect();
        let e = parse(format!("<r{attrs}/>").as_bytes()).expect_err("too many attributes");
        assert!(e.0.contains("too many attributes"), "{e:?}");
        let started = std::time::Instant::now();
        let many: String = (0..MAX_ATTRIBUTES).map(|i| format!(" a{i}=''")).collect();
        let doc = format!("<r>{}</r>", format!("<e{many}/>").repeat(5_000));
        assert!(parse(doc.as_bytes()).is_ok());
        assert!(started.elapsed() < std::time::Duration::from_secs(10));
    }

    #[test]
    fn xml_safety() {
        assert!(is_xml_safe(b"plain\ttext\r\n"));
        assert!(!is_xml_safe(b"bell\x07"));
        assert!(!is_xml_safe(b"\xff"));
        assert_eq!(esc_cdata("a<b>&\r"), "a&lt;b&gt;&amp;&#13;");
        let long = "path/é/".repeat(40) + "a\"b\r<c>&d" + &"x".repeat(100) + "\"";
        for text in [
            "",
            "plain",
            "é<\"ü\">&\r\n'",
            "&&",
            "<<a>>\"",
            "\r",
            "\"\r\"\r&\"",
            "x\"y&z\"<",
            &long,
        ] {
            let mut out = String::from("x");
            esc_to(&mut out, text);
            assert_eq!(out, format!("x{}", esc(text)), "{text:?}");
            let mut out = String::from("y");
            esc_cdata_to(&mut out, text);
            assert_eq!(out, format!("y{}", esc_cdata(text)), "{text:?}");
        }
    }
}
