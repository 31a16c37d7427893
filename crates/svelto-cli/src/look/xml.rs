//! XML and base64 output (`propget`/`proplist --xml`).

use super::*;

pub(super) fn xml_attr(s: &str) -> String {
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

pub(super) fn xml_cdata(v: &[u8]) -> String {
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
pub(super) fn xml_safe(v: &[u8]) -> bool {
    std::str::from_utf8(v).is_ok()
        && v.iter()
            .all(|&b| b >= 0x20 || b == b'\t' || b == b'\n' || b == b'\r')
}

pub(super) fn base64_lines(v: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::new();
    let mut col = 0;
    for chunk in v.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        let chars = [
            T[(n >> 18) as usize & 63],
            T[(n >> 12) as usize & 63],
            if chunk.len() > 1 {
                T[(n >> 6) as usize & 63]
            } else {
                b'='
            },
            if chunk.len() > 2 {
                T[n as usize & 63]
            } else {
                b'='
            },
        ];
        for c in chars {
            s.push(c as char);
        }
        col += 4;
        if col == 76 {
            s.push('\n');
            col = 0;
        }
    }
    if col > 0 {
        s.push('\n');
    }
    s
}

pub(super) fn xml_props(x: &mut String, props: &PropList, names_only: bool, inherited: bool) {
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
