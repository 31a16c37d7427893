//! What differs between two correct outputs (dates, UUIDs, ports, order) masked or put
//! in order before they are compared, and the first difference shown.

use super::*;

/// Makes two sides' outputs comparable: replaces each side's own strings
/// (its server URL, its work directory) with placeholders, and masks values
/// that differ from run to run (working-file timestamps, timings).
#[derive(Debug, Clone, Default)]
pub struct Normalizer {
    replacements: Vec<(Vec<u8>, Vec<u8>)>,
    /// Mask every date too (outputs that show commits made during the test).
    pub(super) dates: bool,
}

impl Normalizer {
    pub fn new() -> Normalizer {
        Normalizer::default()
    }

    /// Replace every occurrence of `from` by `to` (in the order added).
    pub fn replace(mut self, from: impl AsRef<[u8]>, to: impl AsRef<[u8]>) -> Normalizer {
        self.replacements
            .push((from.as_ref().to_vec(), to.as_ref().to_vec()));
        self
    }

    /// The replacements, then [`mask_volatile`] (and [`mask_dates`] when asked for).
    pub fn apply(&self, bytes: &[u8]) -> Vec<u8> {
        let out = mask_volatile(&self.replace_only(bytes));
        if self.dates {
            mask_dates(&out)
        } else {
            out
        }
    }

    /// The replacements alone (for file contents).
    pub fn replace_only(&self, bytes: &[u8]) -> Vec<u8> {
        let mut out = bytes.to_vec();
        for (from, to) in &self.replacements {
            out = replace_bytes(&out, from, to);
        }
        out
    }
}

/// Every occurrence of `from` in `haystack` replaced by `to`.
pub fn replace_bytes(haystack: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    if from.is_empty() {
        return haystack.to_vec();
    }
    let mut out = Vec::with_capacity(haystack.len());
    let mut rest = haystack;
    while let Some(at) = rest.windows(from.len()).position(|w| w == from) {
        out.extend_from_slice(&rest[..at]);
        out.extend_from_slice(to);
        rest = &rest[at + from.len()..];
    }
    out.extend_from_slice(rest);
    out
}

/// Values in client output that differ between two runs of the same command
/// on the same data, masked line by line: `Text Last Updated:` of `svn info`
/// (and `<text-updated>` of `--xml`), svnbench's `seconds taken`, its
/// `bytes in deltas` (the size of the deltas a server chose to send) and
/// `bytes transferred over network` (which counts the greeting's
/// capabilities, among others).
pub fn mask_volatile(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    for line in bytes.split_inclusive(|&b| b == b'\n') {
        let (body, newline) = match line.strip_suffix(b"\n") {
            Some(body) => (body, &b"\n"[..]),
            None => (line, &b""[..]),
        };
        if body.starts_with(b"Text Last Updated: ") {
            out.extend_from_slice(b"Text Last Updated: {TIME}");
        } else if let Some(masked) = mask_between(body, b"<text-updated>", b"</text-updated>") {
            out.extend_from_slice(&masked);
        } else if body.ends_with(b" seconds taken") {
            out.extend_from_slice(b"{SECONDS} seconds taken");
        } else if body.ends_with(b" bytes in deltas") {
            out.extend_from_slice(b"{N} bytes in deltas");
        } else if body.ends_with(b" bytes transferred over network") {
            out.extend_from_slice(b"{N} bytes transferred over network");
        } else {
            out.extend_from_slice(&mask_txn_names(body));
        }
        out.extend_from_slice(newline);
    }
    out
}

/// Transaction names in `!svn/txr/NAME/...` and `!svn/txn/NAME` URLs (in the client's
/// messages about a refused commit request) as `{TXN}`: each server names its
/// transactions its own way (FSFS: the base revision and a base-36 counter).
fn mask_txn_names(line: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(line.len());
    let mut rest = line;
    loop {
        let at = [&b"!svn/txr/"[..], b"!svn/txn/"]
            .iter()
            .filter_map(|m| rest.windows(m.len()).position(|w| w == *m))
            .min();
        let Some(at) = at else {
            out.extend_from_slice(rest);
            return out;
        };
        out.extend_from_slice(&rest[..at + 9]);
        rest = &rest[at + 9..];
        let end = rest
            .iter()
            .position(|b| matches!(b, b'/' | b'\'' | b'"' | b' ' | b'<'))
            .unwrap_or(rest.len());
        out.extend_from_slice(b"{TXN}");
        rest = &rest[end..];
    }
}

/// Replaces Subversion dates (`2026-11-22T10:59:48.123456Z` and the client's
/// `2026-11-22 10:59:48 +0000 (Sun, 22 Nov 2026)`) with `{DATE}`.
pub fn mask_dates(bytes: &[u8]) -> Vec<u8> {
    let is_digit = |b: u8| b.is_ascii_digit();
    let shape = b"dddd-dd-dd?dd:dd:dd";
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let fits = i + shape.len() <= bytes.len()
            && shape.iter().enumerate().all(|(k, &c)| {
                let b = bytes[i + k];
                match c {
                    b'd' => is_digit(b),
                    b'?' => b == b'T' || b == b' ',
                    _ => b == c,
                }
            });
        if !fits {
            out.push(bytes[i]);
            i += 1;
            continue;
        }
        let mut j = i + shape.len();
        if bytes.get(j) == Some(&b'.') {
            j += 1;
            while j < bytes.len() && is_digit(bytes[j]) {
                j += 1;
            }
            if bytes.get(j) == Some(&b'Z') {
                j += 1;
            }
        } else if bytes[j..].starts_with(b" +0000 (") {
            if let Some(close) = bytes[j..].iter().position(|&b| b == b')') {
                j += close + 1;
            }
        }
        out.extend_from_slice(b"{DATE}");
        i = j;
    }
    out
}

pub(super) fn mask_between(line: &[u8], open: &[u8], close: &[u8]) -> Option<Vec<u8>> {
    let start = line.windows(open.len()).position(|w| w == open)? + open.len();
    let len = line[start..]
        .windows(close.len())
        .position(|w| w == close)?;
    let mut out = line[..start].to_vec();
    out.extend_from_slice(b"{TIME}");
    out.extend_from_slice(&line[start + len..]);
    Some(out)
}

/// Where two texts first differ, line by line, with a little context, for
/// failure messages. `None` when they are equal.
pub fn first_difference(labels: [&str; 2], a: &[u8], b: &[u8]) -> Option<String> {
    if a == b {
        return None;
    }
    let (la, lb) = (text_lines(a), text_lines(b));
    let at = la
        .iter()
        .zip(&lb)
        .position(|(x, y)| x != y)
        .unwrap_or(la.len().min(lb.len()));
    let mut out = format!(
        "first difference at line {} ({} has {} lines, {} has {}):\n",
        at + 1,
        labels[0],
        la.len(),
        labels[1],
        lb.len()
    );
    for line in &la[at.saturating_sub(3)..at] {
        let _ = writeln!(out, "      {}", show(line));
    }
    let width = labels[0].len().max(labels[1].len());
    for (label, lines, mark) in [(labels[0], &la, '-'), (labels[1], &lb, '+')] {
        for line in lines.iter().skip(at).take(6) {
            let _ = writeln!(out, "    {mark} {label:>width$}: {}", show(line));
        }
        if lines.len() <= at {
            let _ = writeln!(out, "    {mark} {label:>width$}: (end)");
        }
    }
    Some(out)
}

/// The lines of a text, without the empty one after a final newline.
pub(super) fn text_lines(text: &[u8]) -> Vec<&[u8]> {
    if text.is_empty() {
        return Vec::new();
    }
    let body = text.strip_suffix(b"\n").unwrap_or(text);
    body.split(|&c| c == b'\n').collect()
}

pub(super) fn show(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(line);
    let text: String = text
        .chars()
        .map(|c| {
            if c.is_control() && c != '\t' {
                '\u{fffd}'
            } else {
                c
            }
        })
        .collect();
    if text.chars().count() > 300 {
        let cut: String = text.chars().take(300).collect();
        format!("{cut}[...]")
    } else {
        text
    }
}

/// Whether the order of a command's output means anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Compared as printed.
    Kept,
    /// The output comes in an order a correct server may change: the order
    /// of an editor drive (which svnserve takes from a hash table with a
    /// random seed, so two svnserves differ), or the order of a directory
    /// listing that the client iterates through its own hash table. The
    /// output is compared as a sorted list of blocks: each block starts at a
    /// line that begins with one of these prefixes (and runs to the next);
    /// with no such line, each line is a block. XML is compared line by line.
    Blocks(&'static [&'static str]),
}

/// Blocks of `svn diff`.
pub(super) const DIFF_BLOCKS: &[&str] = &["Index: "];
/// Blocks of `svn info`.
pub(super) const INFO_BLOCKS: &[&str] = &["Path: "];
/// Blocks of `svn proplist` and `svn propget`.
pub(super) const PROP_BLOCKS: &[&str] = &[
    "Properties on '",
    "Inherited properties on '",
    "svn://SERVER/",
];

/// The [`Order`] of `tool args` (the subcommand first): checkout, update,
/// switch, status, export, merge and diff print in drive order; recursive
/// `info`, `proplist` and `propget` of URLs in the client's hash order of
/// the server's listings; the rest (log, blame, ls, cat, ...) in an order
/// the client fixes.
pub fn output_order(tool: &str, args: &[&str]) -> Order {
    const DRIVEN: &[&str] = &[
        "checkout", "co", "update", "up", "switch", "sw", "status", "stat", "st", "export", "merge",
    ];
    let recursive = args
        .iter()
        .any(|a| matches!(*a, "-R" | "--recursive" | "--depth") || a.starts_with("--depth="));
    match (tool, args.first().copied()) {
        ("svn", Some(sub)) if DRIVEN.contains(&sub) => Order::Blocks(&[]),
        ("svn", Some("diff" | "di")) => Order::Blocks(DIFF_BLOCKS),
        ("svn", Some("info")) if recursive => Order::Blocks(INFO_BLOCKS),
        ("svn", Some("proplist" | "plist" | "pl" | "propget" | "pget" | "pg")) if recursive => {
            Order::Blocks(PROP_BLOCKS)
        }
        _ => Order::Kept,
    }
}

/// Output made independent of what varies between two correct servers:
/// attributes of XML elements sorted (the client prints them from a hash
/// table), and for [`Order::Blocks`] the blocks sorted.
pub fn canonical_output(bytes: &[u8], order: Order) -> Vec<u8> {
    let xml = bytes.starts_with(b"<?xml");
    let bytes = if xml {
        canonical_xml(bytes)
    } else {
        bytes.to_vec()
    };
    match order {
        Order::Kept => bytes,
        Order::Blocks(_) if xml => sorted_blocks(&bytes, &[]),
        Order::Blocks(starts) => sorted_blocks(&bytes, starts),
    }
}

/// Every start tag `<name a="1" b="2">` rewritten on one line with its
/// attributes sorted by name.
pub fn canonical_xml(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        if text[i] == b'<' && text.get(i + 1).is_some_and(u8::is_ascii_alphabetic) {
            let mut j = i + 1;
            let mut quoted = false;
            while j < text.len() && (quoted || text[j] != b'>') {
                if text[j] == b'"' {
                    quoted = !quoted;
                }
                j += 1;
            }
            if let Some(tag) = (j < text.len())
                .then(|| sort_attributes(&text[i + 1..j]))
                .flatten()
            {
                out.extend_from_slice(&tag);
                i = j + 1;
                continue;
            }
        }
        out.push(text[i]);
        i += 1;
    }
    out
}

/// `name attr="v" ...[/]` (inside `<` `>`) as `<name a="v" ...[/]>` with
/// sorted attributes; `None` if it does not look like a start tag.
pub(super) fn sort_attributes(tag: &[u8]) -> Option<Vec<u8>> {
    let (body, closing) = match tag.strip_suffix(b"/") {
        Some(body) => (body, &b"/"[..]),
        None => (tag, &b""[..]),
    };
    let name_end = body
        .iter()
        .position(|b| b.is_ascii_whitespace())
        .unwrap_or(body.len());
    let name = &body[..name_end];
    let mut rest = &body[name_end..];
    let mut attrs: Vec<&[u8]> = Vec::new();
    loop {
        let start = rest.iter().position(|b| !b.is_ascii_whitespace());
        let Some(start) = start else { break };
        rest = &rest[start..];
        let eq = rest.iter().position(|&b| b == b'=')?;
        if rest.get(eq + 1) != Some(&b'"') {
            return None;
        }
        let close = rest[eq + 2..].iter().position(|&b| b == b'"')? + eq + 2;
        attrs.push(&rest[..=close]);
        rest = &rest[close + 1..];
    }
    attrs.sort();
    let mut out = vec![b'<'];
    out.extend_from_slice(name);
    for attr in attrs {
        out.push(b' ');
        out.extend_from_slice(attr);
    }
    out.extend_from_slice(closing);
    out.push(b'>');
    Some(out)
}

/// The blocks of `bytes` sorted: a block starts at each line that begins
/// with one of `starts` (lines before the first such line form a block of
/// their own); with no such line, every line is a block.
pub fn sorted_blocks(bytes: &[u8], starts: &[&str]) -> Vec<u8> {
    let lines: Vec<&[u8]> = bytes.split_inclusive(|&b| b == b'\n').collect();
    let starts_block = |line: &[u8]| starts.iter().any(|s| line.starts_with(s.as_bytes()));
    let mut blocks: Vec<Vec<u8>> = Vec::new();
    if lines.iter().any(|l| starts_block(l)) {
        let mut current = Vec::new();
        for line in lines {
            if starts_block(line) && !current.is_empty() {
                blocks.push(std::mem::take(&mut current));
            }
            current.extend_from_slice(line);
        }
        blocks.push(current);
    } else {
        blocks = lines.into_iter().map(<[u8]>::to_vec).collect();
    }
    if let Some(last) = blocks.last_mut() {
        if !last.ends_with(b"\n") {
            last.push(b'\n');
        }
    }
    blocks.sort();
    blocks.concat()
}
