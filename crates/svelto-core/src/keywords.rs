//! Keyword expansion: a file's `svn:keywords` names the `$Keyword$` markers whose values a
//! text carries (its last change's revision, date, author, URL...). Subversion's client
//! expands them in working copies; a server does so only when asked, as mod_dav_svn does
//! for a public URL with `?kw=1`. The rules are Subversion's (`svn help propset`, the
//! book's "Keyword Substitution"): what the property may name, what each value is, and how
//! `$Name$`, `$Name: old $` and the fixed-width `$Name:: old  $` are rewritten.

use std::collections::HashMap;

use crate::Revnum;

/// The longest keyword marker, `$` to `$`, that is recognised or written.
pub const MAX_LEN: usize = 255;

/// What a keyword's value is made of: the file's last change and where it lives.
pub struct Facts<'a> {
    /// The revision that last changed the file.
    pub rev: Revnum,
    /// The file's URL (escaped as in a request).
    pub url: &'a str,
    /// The repository's root URL.
    pub root_url: &'a str,
    /// That revision's `svn:date`, if it has one.
    pub date: Option<&'a str>,
    /// That revision's `svn:author`, if it has one.
    pub author: Option<&'a str>,
    /// The time zone of the long date (`%D`): the server's.
    pub zone: &'a crate::localtime::Zone,
}

/// Keyword names (as they appear between the `$`s) and their values.
pub type Keywords = HashMap<Vec<u8>, Vec<u8>>;

/// The keywords an `svn:keywords` value names, with their values. Names are separated by
/// white space; `Name=FORMAT` defines a keyword of one's own (`%a` author, `%b` the file's
/// name, `%d` short date, `%D` long date, `%P` path in the repository, `%r` revision, `%R`
/// root URL, `%u` URL, `%H` = `%P %r %d %a`, `%I` = `%b %r %d %a`, `%_` a space, `%%`).
/// The fixed ones: `LastChangedRevision`, `Revision`, `Rev` (the short name in any case);
/// `LastChangedDate`, `Date`; `LastChangedBy`, `Author`; `HeadURL`, `URL`; `Id` and
/// `Header` (in any case). Naming one of a family defines all its names.
pub fn build(prop: &[u8], facts: &Facts) -> Keywords {
    let mut kw = Keywords::new();
    let white = |b: &u8| matches!(b, b' ' | b'\t' | 0x0b | b'\n' | 0x08 | b'\r' | 0x0c);
    for token in prop.split(white).filter(|t| !t.is_empty()) {
        if let Some(eq) = token.iter().position(|&b| b == b'=') {
            kw.insert(token[..eq].to_vec(), printf(&token[eq + 1..], facts));
            continue;
        }
        let is = |name: &str| token == name.as_bytes();
        let is_any_case = |name: &str| token.eq_ignore_ascii_case(name.as_bytes());
        let family: (&[&str], &[u8]) =
            if is("LastChangedRevision") || is("Revision") || is_any_case("Rev") {
                (&["LastChangedRevision", "Revision", "Rev"], b"%r")
            } else if is("LastChangedDate") || is_any_case("Date") {
                (&["LastChangedDate", "Date"], b"%D")
            } else if is("LastChangedBy") || is_any_case("Author") {
                (&["LastChangedBy", "Author"], b"%a")
            } else if is("HeadURL") || is_any_case("URL") {
                (&["HeadURL", "URL"], b"%u")
            } else if is_any_case("Id") {
                (&["Id"], b"%b %r %d %a")
            } else if is_any_case("Header") {
                (&["Header"], b"%u %r %d %a")
            } else {
                continue;
            };
        let value = printf(family.1, facts);
        for name in family.0 {
            kw.insert(name.as_bytes().to_vec(), value.clone());
        }
    }
    kw
}

/// A keyword format with its `%` codes replaced (an unknown code stays as it is).
fn printf(fmt: &[u8], f: &Facts) -> Vec<u8> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < fmt.len() {
        if fmt[i] != b'%' {
            out.push(fmt[i]);
            i += 1;
            continue;
        }
        let Some(&code) = fmt.get(i + 1) else {
            out.push(b'%');
            break;
        };
        match code {
            b'a' => out.extend_from_slice(f.author.unwrap_or("").as_bytes()),
            b'b' => out.extend_from_slice(&basename(f.url)),
            b'd' => out.extend_from_slice(short_date(f.date).as_bytes()),
            b'D' => {
                let long = f.date.and_then(|d| crate::localtime::human_date(d, f.zone));
                out.extend_from_slice(long.unwrap_or_default().as_bytes());
            }
            b'P' => out.extend_from_slice(&relpath(f.root_url, f.url)),
            b'R' => out.extend_from_slice(f.root_url.as_bytes()),
            b'r' => out.extend_from_slice(f.rev.to_string().as_bytes()),
            b'u' => out.extend_from_slice(f.url.as_bytes()),
            b'_' => out.push(b' '),
            b'%' => out.push(b'%'),
            b'H' => out.extend_from_slice(&printf(b"%P%_%r%_%d%_%a", f)),
            b'I' => out.extend_from_slice(&printf(b"%b%_%r%_%d%_%a", f)),
            _ => out.extend_from_slice(&fmt[i..i + 2]),
        }
        i += 2;
    }
    out
}

/// `2026-11-27 20:49:11Z`: the date in UTC, to the second; empty without a date.
fn short_date(date: Option<&str>) -> String {
    let Some(micros) = date.and_then(crate::parse_svn_date) else {
        return String::new();
    };
    let secs = micros.div_euclid(1_000_000);
    let (y, m, d) = crate::civil_from_days(secs.div_euclid(86_400));
    let s = secs.rem_euclid(86_400);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}Z",
        s / 3600,
        (s % 3600) / 60,
        s % 60
    )
}

/// The last segment of a URL, unescaped.
fn basename(url: &str) -> Vec<u8> {
    let path = url.split_once("://").map_or(url, |(_, rest)| rest);
    match path.find('/') {
        Some(_) => unescape(path.rsplit('/').next().unwrap_or("")),
        None => Vec::new(),
    }
}

/// `url` below `root`, unescaped; empty when it is not below.
fn relpath(root: &str, url: &str) -> Vec<u8> {
    if root.is_empty() {
        return Vec::new();
    }
    match url.strip_prefix(root) {
        Some("") => Vec::new(),
        Some(rest) if rest.starts_with('/') || root.ends_with('/') => {
            unescape(rest.trim_start_matches('/'))
        }
        _ => Vec::new(),
    }
}

/// `%XX` escapes decoded (a malformed one kept as it is).
fn unescape(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match (b[i], b.get(i + 1).copied(), b.get(i + 2).copied()) {
            (b'%', Some(h), Some(l)) if hex(h).is_some() && hex(l).is_some() => {
                out.push((hex(h).unwrap_or(0) * 16 + hex(l).unwrap_or(0)) as u8);
                i += 3;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

/// `text` with every marker of a keyword in `kw` expanded. A marker runs from a `$` to the
/// next `$` on the same line, at most [`MAX_LEN`] bytes; its name is what follows the
/// first `$` up to a `:` or the closing `$`. `$Name$` and `$Name: old $` (or `$Name:$`)
/// become `$Name: value $` (the value cut so the marker stays within [`MAX_LEN`]); the
/// fixed-width `$Name:: old $` keeps its width, the value padded with spaces or cut and
/// ended by `#`. A `$` that closes no marker of a known keyword may open the next one.
pub fn expand(text: &[u8], kw: &Keywords) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    if kw.is_empty() {
        out.extend_from_slice(text);
        return out;
    }
    let mut i = 0;
    while i < text.len() {
        let Some(start) = memchr::memchr(b'$', &text[i..]).map(|at| i + at) else {
            out.extend_from_slice(&text[i..]);
            break;
        };
        out.extend_from_slice(&text[i..start]);
        match marker_at(text, start, kw) {
            Marker::Expanded { end, bytes } => {
                out.extend_from_slice(&bytes);
                i = end;
            }
            Marker::None { upto } => {
                // Not a keyword: everything before `upto` as it is, and look again there
                // (a `$` at `upto` may open the next marker).
                out.extend_from_slice(&text[start..upto]);
                i = upto;
            }
        }
    }
    out
}

/// What a `$` at `start` opens.
enum Marker {
    /// A keyword marker ending before `end`, rewritten as `bytes`.
    Expanded { end: usize, bytes: Vec<u8> },
    /// No keyword: go on from `upto` (past `start`).
    None { upto: usize },
}

/// Reads the marker opened by the `$` at `start`: on to each following `$` of the line
/// while the text so far names a keyword whose marker form does not fit yet.
fn marker_at(text: &[u8], start: usize, kw: &Keywords) -> Marker {
    // The first `$` seen after a name matched but its form did not: where to go on from
    // when the marker never closes.
    let mut retry = None;
    let mut j = start + 1;
    loop {
        let len = j - start;
        let Some(&c) = text.get(j) else {
            // The text ends inside the marker: it stays as it is.
            return Marker::None { upto: text.len() };
        };
        if c == b'$' {
            let buf = &text[start..=j];
            let name_end = buf[1..buf.len() - 1]
                .iter()
                .position(|&b| b == b':')
                .map_or(buf.len() - 1, |p| p + 1);
            let name = &buf[1..name_end];
            let Some(value) = kw.get(name) else {
                // Not a keyword: this `$` may open the next marker.
                return Marker::None { upto: j };
            };
            if let Some(bytes) = substitute(buf, name, value) {
                return Marker::Expanded { end: j + 1, bytes };
            }
            if buf.len() >= MAX_LEN {
                return Marker::None { upto: j + 1 };
            }
            retry.get_or_insert(j);
            j += 1;
            continue;
        }
        if len == MAX_LEN - 1 || c == b'\n' || c == b'\r' {
            // No closing `$` within the line or the length: as it is, up to the `$` where
            // a name first matched (then on from there), or up to here.
            return Marker::None {
                upto: retry.unwrap_or(j),
            };
        }
        j += 1;
    }
}

/// The marker `buf` (from `$` to `$`, naming `name`) with `value` put in, or None when its
/// form is none of the three.
fn substitute(buf: &[u8], name: &[u8], value: &[u8]) -> Option<Vec<u8>> {
    let len = buf.len();
    if name.len() > MAX_LEN - 5 {
        return None;
    }
    let rest = &buf[1 + name.len()..];
    let at = |k: usize| rest.get(k).copied();
    // "$Name:: old $" and "$Name:: cut#$": the width stays.
    if at(0) == Some(b':')
        && at(1) == Some(b':')
        && at(2) == Some(b' ')
        && matches!(buf[len - 2], b' ' | b'#')
        && 6 + name.len() < len
    {
        let room = len - (6 + name.len());
        let mut out = buf.to_vec();
        let from = 1 + name.len() + 3;
        if value.len() <= room {
            out[from..from + value.len()].copy_from_slice(value);
            let mut k = from + value.len();
            while out[k] != b'$' {
                out[k] = b' ';
                k += 1;
            }
        } else {
            out[from..from + room].copy_from_slice(&value[..room]);
            out[len - 2] = b'#';
            out[len - 1] = b'$';
        }
        return Some(out);
    }
    let plain = at(0) == Some(b'$');
    let expanded = (len >= 4 + name.len()
        && at(0) == Some(b':')
        && at(1) == Some(b' ')
        && buf[len - 2] == b' ')
        || (len >= 3 + name.len() && at(0) == Some(b':') && at(1) == Some(b'$'));
    if !plain && !expanded {
        return None;
    }
    let mut out = Vec::with_capacity(name.len() + value.len() + 5);
    out.push(b'$');
    out.extend_from_slice(name);
    out.extend_from_slice(b": ");
    if !value.is_empty() {
        let keep = value.len().min(MAX_LEN - 5 - name.len());
        out.extend_from_slice(&value[..keep]);
        out.push(b' ');
    }
    out.push(b'$');
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    static UTC: std::sync::LazyLock<crate::localtime::Zone> =
        std::sync::LazyLock::new(crate::localtime::Zone::utc);

    fn facts() -> Facts<'static> {
        Facts {
            zone: &UTC,
            rev: 7,
            url: "http://h:1/svn/r/trunk/a%20b.c",
            root_url: "http://h:1/svn/r",
            date: Some("2026-11-18T11:06:40.123456Z"),
            author: Some("jrandom"),
        }
    }

    fn kw(prop: &str) -> Keywords {
        build(prop.as_bytes(), &facts())
    }

    fn exp(prop: &str, text: &str) -> String {
        String::from_utf8(expand(text.as_bytes(), &kw(prop))).expect("utf-8")
    }

    #[test]
    fn families_and_custom_keywords() {
        let k = kw("rev Id\tURL  mine=%P@%r%_%b%%%x");
        assert_eq!(k[&b"LastChangedRevision"[..]], b"7");
        assert_eq!(k[&b"Rev"[..]], b"7");
        assert_eq!(k[&b"HeadURL"[..]], b"http://h:1/svn/r/trunk/a%20b.c");
        assert_eq!(k[&b"Id"[..]], b"a b.c 7 2026-11-18 11:06:40Z jrandom");
        assert_eq!(
            kw("Date")[&b"LastChangedDate"[..]],
            b"2026-11-18 11:06:40 +0000 (Wed, 18 Nov 2026)"
        );
        assert_eq!(k[&b"mine"[..]], b"trunk/a b.c@7 a b.c%%x");
        assert!(!k.contains_key(&b"rev"[..]), "names are the canonical ones");
        assert!(kw("revision").is_empty(), "the medium name only as written");
    }

    #[test]
    fn marker_forms() {
        assert_eq!(exp("Rev", "a $Rev$ b"), "a $Rev: 7 $ b");
        assert_eq!(exp("Rev", "$Rev: 123 $"), "$Rev: 7 $");
        assert_eq!(exp("Rev", "$Rev:$"), "$Rev: 7 $");
        assert_eq!(exp("Rev", "$Rev::    $"), "$Rev:: 7  $");
        assert_eq!(exp("Author", "$Author:: ab$"), "$Author:: ab$");
        assert_eq!(exp("Author", "$Author:: $x"), "$Author:: $x");
        assert_eq!(exp("Author", "$Author::    $"), "$Author:: jr#$");
        assert_eq!(exp("Rev", "$Rev"), "$Rev");
        assert_eq!(exp("Rev", "$Rev\n$Rev$"), "$Rev\n$Rev: 7 $");
        assert_eq!(exp("Rev", "$x$Rev$"), "$x$Rev: 7 $");
        assert_eq!(exp("Rev", "$Revision$"), "$Revision: 7 $", "the family");
        assert_eq!(exp("Rev", "$Date$"), "$Date$", "not named");
        // A name that matched in a form that did not: on to the next `$` of the line; at
        // the end of the line, back to that `$`; at the end of the text, as it is.
        assert_eq!(exp("Rev", "$Rev:x$ $Rev$\n"), "$Rev:x$ $Rev: 7 $\n");
        assert_eq!(exp("Rev", "$Rev:x$ $Rev$"), "$Rev:x$ $Rev$");
        assert_eq!(exp("", "$Rev$"), "$Rev$");
    }

    #[test]
    fn long_values_are_cut_to_the_marker_limit() {
        let long = format!("x={}", "y".repeat(400));
        let out = exp(&long, "$x$");
        assert_eq!(out.len(), MAX_LEN);
        assert!(out.starts_with("$x: yyy") && out.ends_with("y $"), "{out}");
    }
}
