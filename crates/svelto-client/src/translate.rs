//! The working form of a text (what `svn:eol-style`, `svn:keywords` and `svn:special` make
//! of the pristine text), as the stock client writes it: line endings of every kind
//! repaired to the property's, keywords expanded with the file's last change.

use std::collections::HashMap;

use svelto_core::keywords::{self, Facts, Keywords};

/// What is done to a pristine text to make the working file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Translation {
    /// The line ending every line ending becomes, when `svn:eol-style` names one.
    pub eol: Option<&'static [u8]>,
    /// Keyword names and values, when `svn:keywords` names any known keyword.
    pub keywords: Option<Keywords>,
    /// `svn:special`: the text is `link TARGET`, a symbolic link.
    pub special: bool,
}

impl Translation {
    /// Whether the working file is the pristine text byte for byte.
    pub fn is_identity(&self) -> bool {
        self.eol.is_none() && self.keywords.is_none() && !self.special
    }
}

/// The line ending `svn:eol-style` asks for (`native` is LF here; `native_eol` overrides
/// it, as `svn export --native-eol` does). An unknown value asks for none, as with svn.
pub fn eol_of(style: &[u8], native_eol: Option<&'static [u8]>) -> Option<&'static [u8]> {
    match style.trim_ascii() {
        b"native" => Some(native_eol.unwrap_or(b"\n")),
        b"LF" => Some(b"\n"),
        b"CRLF" => Some(b"\r\n"),
        b"CR" => Some(b"\r"),
        _ => None,
    }
}

/// The facts keywords are made of, for one file.
pub struct FileFacts<'a> {
    pub rev: u64,
    pub url: &'a str,
    pub root_url: &'a str,
    pub date: Option<&'a str>,
    pub author: Option<&'a str>,
}

/// The keywords a `svn:keywords` value defines for a file (None when it names none).
pub fn keywords_of(
    prop: &[u8],
    f: &FileFacts,
    zone: &svelto_core::localtime::Zone,
) -> Option<Keywords> {
    let kw: HashMap<Vec<u8>, Vec<u8>> = keywords::build(
        prop,
        &Facts {
            rev: f.rev,
            url: f.url,
            root_url: f.root_url,
            date: f.date,
            author: f.author,
            zone,
        },
    );
    (!kw.is_empty()).then_some(kw)
}

/// Repairs line endings in a stream of chunks: `\r\n`, `\r` and `\n` all become `eol`. A
/// `\r` at the end of a chunk waits for the next one.
#[derive(Debug)]
pub struct EolWriter {
    eol: &'static [u8],
    pending_cr: bool,
}

impl EolWriter {
    pub fn new(eol: &'static [u8]) -> EolWriter {
        EolWriter {
            eol,
            pending_cr: false,
        }
    }

    /// Appends the translation of `chunk` to `out`.
    pub fn push(&mut self, chunk: &[u8], out: &mut Vec<u8>) {
        let mut i = 0;
        if self.pending_cr {
            self.pending_cr = false;
            out.extend_from_slice(self.eol);
            if chunk.first() == Some(&b'\n') {
                i = 1;
            }
        }
        // An LF stays an LF when LF is asked for: only a CR needs repairing.
        let lf = self.eol == b"\n";
        while i < chunk.len() {
            let rest = &chunk[i..];
            let found = if lf {
                memchr::memchr(b'\r', rest)
            } else {
                memchr::memchr2(b'\n', b'\r', rest)
            };
            let Some(at) = found else {
                out.extend_from_slice(rest);
                break;
            };
            out.extend_from_slice(&rest[..at]);
            if rest[at] == b'\n' {
                out.extend_from_slice(self.eol);
                i += at + 1;
            } else if at + 1 == rest.len() {
                self.pending_cr = true;
                i += at + 1;
            } else {
                out.extend_from_slice(self.eol);
                i += at + 1 + usize::from(rest[at + 1] == b'\n');
            }
        }
    }

    /// The translation of `chunk`: `chunk` itself when it is its own translation (LF asked
    /// for, no CR in it and none pending), else what [`EolWriter::push`] appends to `out`
    /// (cleared first).
    pub fn translate<'a>(&mut self, chunk: &'a [u8], out: &'a mut Vec<u8>) -> &'a [u8] {
        if !self.pending_cr && self.eol == b"\n" && memchr::memchr(b'\r', chunk).is_none() {
            return chunk;
        }
        out.clear();
        self.push(chunk, out);
        out
    }

    /// Ends the stream.
    pub fn finish(&mut self, out: &mut Vec<u8>) {
        if self.pending_cr {
            self.pending_cr = false;
            out.extend_from_slice(self.eol);
        }
    }
}

/// The whole working form of `text` (keywords, then line endings).
pub fn translate(text: &[u8], t: &Translation) -> Vec<u8> {
    let expanded;
    let text = match &t.keywords {
        Some(kw) => {
            expanded = keywords::expand(text, kw);
            &expanded[..]
        }
        None => text,
    };
    match t.eol {
        Some(eol) => {
            let mut out = Vec::with_capacity(text.len() + text.len() / 16);
            let mut w = EolWriter::new(eol);
            w.push(text, &mut out);
            w.finish(&mut out);
            out
        }
        None => text.to_vec(),
    }
}

/// The target of a special file's text `link TARGET`, or None when it is not a link.
pub fn link_target(text: &[u8]) -> Option<&[u8]> {
    text.strip_prefix(b"link ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eol(text: &[u8], eol: &'static [u8], split: usize) -> Vec<u8> {
        let mut out = Vec::new();
        let mut w = EolWriter::new(eol);
        w.push(&text[..split], &mut out);
        w.push(&text[split..], &mut out);
        w.finish(&mut out);
        out
    }

    #[test]
    fn every_line_ending_is_repaired_across_chunk_boundaries() {
        let text = b"a\r\nb\rc\nd\r";
        for split in 0..=text.len() {
            assert_eq!(eol(text, b"\n", split), b"a\nb\nc\nd\n", "split {split}");
            assert_eq!(
                eol(text, b"\r\n", split),
                b"a\r\nb\r\nc\r\nd\r\n",
                "split {split}"
            );
            assert_eq!(eol(text, b"\r", split), b"a\rb\rc\rd\r", "split {split}");
        }
        assert_eq!(eol(b"x\r\r\ny", b"\n", 2), b"x\n\ny");
    }

    #[test]
    fn a_chunk_without_cr_is_its_own_translation_to_lf() {
        let mut out = b"stale".to_vec();
        let mut w = EolWriter::new(b"\n");
        let chunk = b"a\nb\n".as_slice();
        assert!(std::ptr::eq(w.translate(chunk, &mut out), chunk));
        assert_eq!(w.translate(b"c\r", &mut out), b"c");
        assert_eq!(w.translate(b"\nd\re", &mut out), b"\nd\ne");
        let mut crlf = EolWriter::new(b"\r\n");
        assert_eq!(crlf.translate(b"a\nb", &mut out), b"a\r\nb");
    }

    #[test]
    fn styles() {
        assert_eq!(eol_of(b"native", None), Some(&b"\n"[..]));
        assert_eq!(eol_of(b"native", Some(b"\r\n")), Some(&b"\r\n"[..]));
        assert_eq!(eol_of(b"CRLF", None), Some(&b"\r\n"[..]));
        assert_eq!(eol_of(b"bogus", None), None);
    }

    #[test]
    fn keywords_then_line_endings() {
        let zone = svelto_core::localtime::Zone::utc();
        let facts = FileFacts {
            rev: 4,
            url: "svn://h/r/trunk/k.txt",
            root_url: "svn://h/r",
            date: Some("2011-03-13T11:11:24.031677Z"),
            author: Some("alice"),
        };
        let t = Translation {
            eol: Some(b"\r\n"),
            keywords: keywords_of(b"Id Rev", &facts, &zone),
            special: false,
        };
        assert_eq!(
            translate(b"$Id$\n$Rev$\n$Author$\n", &t),
            b"$Id: k.txt 4 2011-03-13 11:11:24Z alice $\r\n$Rev: 4 $\r\n$Author$\r\n"
        );
        assert!(keywords_of(b"Nothing", &facts, &zone).is_none());
    }
}
