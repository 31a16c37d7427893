//! XML and base64 output (`propget`/`proplist --xml`).

use crate::*;

pub(crate) fn xml_attr(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&apos;"),
            '\r' => o.push_str("&#13;"),
            '\n' => o.push_str("&#10;"),
            '\t' => o.push_str("&#9;"),
            c => o.push(c),
        }
    }
    o
}

pub(crate) fn xml_cdata(v: &[u8]) -> String {
    let mut o = String::with_capacity(v.len());
    for ch in String::from_utf8_lossy(v).chars() {
        match ch {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '\r' => o.push_str("&#13;"),
            c => o.push(c),
        }
    }
    o
}

/// `svn_xml_is_xml_safe`: valid UTF-8 without control characters other than tab, LF, CR.
pub(crate) fn xml_safe(v: &[u8]) -> bool {
    std::str::from_utf8(v).is_ok()
        && v.iter()
            .all(|&b| b >= 0x20 || b == b'\t' || b == b'\n' || b == b'\r')
}

/// `v` in base64 as Subversion's XML output writes it: lines of 76 characters, each ended
/// by a newline.
pub(crate) fn base64_lines(v: &[u8]) -> String {
    use base64::Engine as _;
    let encoded = base64::engine::general_purpose::STANDARD.encode(v);
    let mut s = String::with_capacity(encoded.len() + encoded.len() / 76 + 1);
    let mut rest = encoded.as_str();
    while !rest.is_empty() {
        let (line, after) = rest.split_at(rest.len().min(76));
        s.push_str(line);
        s.push('\n');
        rest = after;
    }
    s
}

pub(crate) fn xml_props(x: &mut String, props: &PropList, names_only: bool, inherited: bool) {
    let tag = if inherited {
        "inherited_property"
    } else {
        "property"
    };
    for (name, value) in props {
        let name = xml_attr(&String::from_utf8_lossy(name));
        if names_only {
            x.push_str(&format!("<{tag}\n   name=\"{name}\"/>\n"));
        } else if xml_safe(value) {
            x.push_str(&format!(
                "<{tag}\n   name=\"{name}\">{}</{tag}>\n",
                xml_cdata(value)
            ));
        } else {
            x.push_str(&format!(
                "<{tag}\n   name=\"{name}\"\n   encoding=\"base64\">{}</{tag}>\n",
                base64_lines(value)
            ));
        }
    }
}
