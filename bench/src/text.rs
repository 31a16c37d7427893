//! Source-like text files as lists of line tokens.
//!
//! A text file is held as a `Vec<u64>`, one token per line; a line's bytes are a pure
//! function of (language, file vocabulary, token). That keeps 20,000 files of 1-50 KB in
//! a few tens of MB while the dump carries their full texts, and makes edits cheap and
//! realistic: a change replaces a token, an insertion adds a block of tokens, a deletion
//! drops a run of them. Identical tokens render identically, so license headers and
//! boilerplate repeat across files the way they do in real code.
//!
//! Token layout (little end first): bits 0..4 indentation level, bits 4..9 line kind,
//! bits 9..64 a seed that picks the words (or a parameter for fixed kinds).

use rand::Rng;

use crate::words::{C_HEADERS, C_TYPES, ENGLISH, IDENT_PARTS, JAVA_TYPES, NAME_PARTS};

/// How a text file's lines look.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lang {
    /// C and C headers: braces, `/* */` comments, `#include`.
    C,
    /// Java: braces, `//` comments, camelCase, a class around the methods.
    Java,
    /// Python, shell, make: `#` comments, indentation instead of braces.
    Python,
    /// Documentation and data: paragraphs of prose.
    Text,
}

impl Lang {
    fn braces(self) -> bool {
        matches!(self, Lang::C | Lang::Java)
    }
}

/// The kind of a line, stored in the token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    Blank = 0,
    Close = 1,
    Else = 2,
    Comment = 3,
    Signature = 4,
    If = 5,
    For = 6,
    While = 7,
    Stmt = 8,
    Decl = 9,
    Return = 10,
    Include = 11,
    License = 12,
    Copyright = 13,
    KeywordId = 14,
    Prose = 15,
    Heading = 16,
    Class = 17,
}

const KINDS: [Kind; 18] = [
    Kind::Blank,
    Kind::Close,
    Kind::Else,
    Kind::Comment,
    Kind::Signature,
    Kind::If,
    Kind::For,
    Kind::While,
    Kind::Stmt,
    Kind::Decl,
    Kind::Return,
    Kind::Include,
    Kind::License,
    Kind::Copyright,
    Kind::KeywordId,
    Kind::Prose,
    Kind::Heading,
    Kind::Class,
];

/// Builds a token from its parts.
pub fn token(kind: Kind, indent: u8, seed: u64) -> u64 {
    (seed << 9) | ((kind as u64) << 4) | u64::from(indent & 15)
}

/// The kind stored in a token.
pub fn kind_of(tok: u64) -> Kind {
    KINDS
        .get(((tok >> 4) & 31) as usize)
        .copied()
        .unwrap_or(Kind::Blank)
}

fn indent_of(tok: u64) -> u8 {
    (tok & 15) as u8
}

fn seed_of(tok: u64) -> u64 {
    tok >> 9
}

/// Lines of the license header between its opening and closing comment lines.
const LICENSE: &[&str] = &[
    "",
    "Licensed to the Apache Software Foundation (ASF) under one",
    "or more contributor license agreements.  See the NOTICE file",
    "distributed with this work for additional information",
    "regarding copyright ownership.  The ASF licenses this file",
    "to you under the Apache License, Version 2.0 (the",
    "\"License\"); you may not use this file except in compliance",
    "with the License.  You may obtain a copy of the License at",
    "",
    "  http://www.apache.org/licenses/LICENSE-2.0",
    "",
    "Unless required by applicable law or agreed to in writing,",
    "software distributed under the License is distributed on an",
    "\"AS IS\" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY",
    "KIND, either express or implied.  See the License for the",
    "specific language governing permissions and limitations",
    "under the License.",
];

/// Seed values of `Kind::License` for the opening and closing comment lines.
const LICENSE_OPEN: u64 = 1000;
const LICENSE_CLOSE: u64 = 1001;

/// A tiny, fast hash-based generator for rendering (SplitMix64).
struct Mix(u64);

impl Mix {
    fn new(seed: u64) -> Mix {
        Mix(seed ^ 0x5DEE_CE66_D1CE_4E5B)
    }
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, list: &[&'a str]) -> &'a str {
        list[self.below(list.len())]
    }
}

/// Renders one line (with its `\n`) for a file of language `lang` whose private
/// identifiers come from `vocab`.
pub fn render_line(out: &mut Vec<u8>, lang: Lang, vocab: u32, tok: u64) {
    let kind = kind_of(tok);
    let seed = seed_of(tok);
    let mut m = Mix::new(seed.wrapping_mul(31).wrapping_add(kind as u64));
    let r = Renderer { lang, vocab };
    if kind != Kind::Blank && (kind != Kind::Close || lang.braces()) {
        let width = if lang == Lang::Text {
            0
        } else {
            4 * usize::from(indent_of(tok))
        };
        out.extend(std::iter::repeat_n(b' ', width));
    }
    match kind {
        Kind::Blank => {}
        Kind::Close => {
            if lang.braces() {
                out.push(b'}');
            }
        }
        Kind::Else => match lang {
            Lang::Python => out.extend_from_slice(b"else:"),
            _ => out.extend_from_slice(b"} else {"),
        },
        Kind::Comment => r.comment(out, &mut m),
        Kind::Signature => r.signature(out, &mut m),
        Kind::If => r.if_line(out, &mut m),
        Kind::For => r.for_line(out, &mut m),
        Kind::While => r.while_line(out, &mut m),
        Kind::Stmt => r.stmt(out, &mut m),
        Kind::Decl => r.decl(out, &mut m),
        Kind::Return => r.ret(out, &mut m),
        Kind::Include => r.include(out, seed),
        Kind::License => r.license(out, seed),
        Kind::Copyright => r.copyright(out, seed),
        Kind::KeywordId => r.keyword_id(out),
        Kind::Prose => sentence(out, &mut m, 7, 13, true),
        Kind::Heading => {
            out.extend_from_slice(b"== ");
            sentence(out, &mut m, 2, 5, false);
            out.extend_from_slice(b" ==");
        }
        Kind::Class => r.class(out, &mut m),
    }
    out.push(b'\n');
}

/// Renders a whole text body.
pub fn render(out: &mut Vec<u8>, lang: Lang, vocab: u32, lines: &[u64]) {
    for &tok in lines {
        render_line(out, lang, vocab, tok);
    }
}

fn sentence(out: &mut Vec<u8>, m: &mut Mix, min: usize, max: usize, period: bool) {
    let n = min + m.below(max - min + 1);
    for i in 0..n {
        let w = m.pick(ENGLISH);
        if i == 0 {
            let mut b = w.bytes();
            if let Some(c) = b.next() {
                out.push(c.to_ascii_uppercase());
            }
            out.extend(b);
        } else {
            out.push(b' ');
            out.extend_from_slice(w.as_bytes());
        }
    }
    if period {
        out.push(b'.');
    }
}

struct Renderer {
    lang: Lang,
    vocab: u32,
}

impl Renderer {
    fn comment_open(&self) -> &'static [u8] {
        match self.lang {
            Lang::C => b"/* ",
            Lang::Java => b"// ",
            Lang::Python | Lang::Text => b"# ",
        }
    }

    fn comment(&self, out: &mut Vec<u8>, m: &mut Mix) {
        out.extend_from_slice(self.comment_open());
        sentence(out, m, 3, 10, true);
        if self.lang == Lang::C {
            out.extend_from_slice(b" */");
        }
    }

    /// An identifier: mostly from the file's own small pool, sometimes a fresh one.
    fn ident(&self, out: &mut Vec<u8>, m: &mut Mix) {
        let r = m.next();
        let seed = if r % 10 < 7 {
            let mut pool = Mix::new(u64::from(self.vocab) * 64 + (r >> 8) % 24);
            pool.next()
        } else {
            r >> 4
        };
        let mut w = Mix::new(seed);
        let n = match w.below(10) {
            0..=2 => 1,
            3..=7 => 2,
            _ => 3,
        };
        for i in 0..n {
            let part = w.pick(IDENT_PARTS);
            if i > 0 {
                if self.lang == Lang::Java {
                    let mut b = part.bytes();
                    if let Some(c) = b.next() {
                        out.push(c.to_ascii_uppercase());
                    }
                    out.extend(b);
                    continue;
                }
                out.push(b'_');
            }
            out.extend_from_slice(part.as_bytes());
        }
    }

    fn prefix(&self, out: &mut Vec<u8>) {
        let mut m = Mix::new(u64::from(self.vocab));
        out.extend_from_slice(b"svn_");
        out.extend_from_slice(m.pick(NAME_PARTS).as_bytes());
        out.extend_from_slice(b"__");
    }

    fn ty(&self, out: &mut Vec<u8>, m: &mut Mix) {
        let list = if self.lang == Lang::Java {
            JAVA_TYPES
        } else {
            C_TYPES
        };
        out.extend_from_slice(m.pick(list).as_bytes());
    }

    fn number(&self, out: &mut Vec<u8>, m: &mut Mix) {
        let r = m.next();
        let v = match r % 8 {
            0..=3 => r % 10,
            4 => 1 << ((r >> 8) % 16),
            5 => 100,
            6 => (r >> 8) % 4096,
            _ => 0,
        };
        out.extend_from_slice(v.to_string().as_bytes());
    }

    fn expr(&self, out: &mut Vec<u8>, m: &mut Mix) {
        match m.below(8) {
            0 | 1 => self.ident(out, m),
            2 => self.number(out, m),
            3 => {
                self.ident(out, m);
                out.extend_from_slice(b" + ");
                self.number(out, m);
            }
            4 => {
                self.ident(out, m);
                out.extend_from_slice(if self.lang == Lang::C { b"->" } else { b"." });
                self.ident(out, m);
            }
            5 => out.extend_from_slice(match self.lang {
                Lang::C => b"NULL",
                Lang::Java => b"null",
                _ => b"None",
            }),
            _ => self.call(out, m),
        }
    }

    fn args(&self, out: &mut Vec<u8>, m: &mut Mix) {
        let n = m.below(4);
        for i in 0..n {
            if i > 0 {
                out.extend_from_slice(b", ");
            }
            if m.below(4) == 0 {
                self.number(out, m);
            } else {
                self.ident(out, m);
            }
        }
    }

    fn call(&self, out: &mut Vec<u8>, m: &mut Mix) {
        if self.lang == Lang::C && m.below(3) == 0 {
            self.prefix(out);
        }
        self.ident(out, m);
        out.push(b'(');
        self.args(out, m);
        out.push(b')');
    }

    fn end_stmt(&self, out: &mut Vec<u8>) {
        if self.lang != Lang::Python {
            out.push(b';');
        }
    }

    fn stmt(&self, out: &mut Vec<u8>, m: &mut Mix) {
        match m.below(6) {
            0 | 1 => {
                self.ident(out, m);
                out.extend_from_slice(b" = ");
                self.expr(out, m);
            }
            2 => {
                self.ident(out, m);
                out.extend_from_slice(if self.lang == Lang::C { b"->" } else { b"." });
                self.ident(out, m);
                out.extend_from_slice(b" = ");
                self.expr(out, m);
            }
            3 if self.lang == Lang::C => {
                out.extend_from_slice(b"SVN_ERR(");
                self.call(out, m);
                out.push(b')');
            }
            4 => {
                self.ident(out, m);
                out.extend_from_slice(b" += ");
                self.number(out, m);
            }
            _ => self.call(out, m),
        }
        self.end_stmt(out);
    }

    fn decl(&self, out: &mut Vec<u8>, m: &mut Mix) {
        if self.lang == Lang::Python {
            self.stmt(out, m);
            return;
        }
        self.ty(out, m);
        out.push(b' ');
        self.ident(out, m);
        if m.below(2) == 0 {
            out.extend_from_slice(b" = ");
            self.expr(out, m);
        }
        out.push(b';');
    }

    fn ret(&self, out: &mut Vec<u8>, m: &mut Mix) {
        out.extend_from_slice(b"return");
        if m.below(5) != 0 {
            out.push(b' ');
            self.expr(out, m);
        }
        self.end_stmt(out);
    }

    fn cond(&self, out: &mut Vec<u8>, m: &mut Mix) {
        match m.below(4) {
            0 => {
                out.extend_from_slice(if self.lang == Lang::Python {
                    b"not "
                } else {
                    b"!"
                });
                self.ident(out, m);
            }
            1 => self.call(out, m),
            _ => {
                self.ident(out, m);
                out.extend_from_slice(
                    m.pick(&[" == ", " != ", " < ", " > ", " <= ", " >= "])
                        .as_bytes(),
                );
                self.expr(out, m);
            }
        }
    }

    fn if_line(&self, out: &mut Vec<u8>, m: &mut Mix) {
        if self.lang == Lang::Python {
            out.extend_from_slice(b"if ");
            self.cond(out, m);
            out.push(b':');
        } else {
            out.extend_from_slice(b"if (");
            self.cond(out, m);
            out.extend_from_slice(b") {");
        }
    }

    fn for_line(&self, out: &mut Vec<u8>, m: &mut Mix) {
        if self.lang == Lang::Python {
            out.extend_from_slice(b"for ");
            self.ident(out, m);
            out.extend_from_slice(b" in ");
            self.expr(out, m);
            out.push(b':');
            return;
        }
        let mut var = Vec::new();
        self.ident(&mut var, m);
        out.extend_from_slice(b"for (");
        out.extend_from_slice(&var);
        out.extend_from_slice(b" = 0; ");
        out.extend_from_slice(&var);
        out.extend_from_slice(b" < ");
        self.expr(out, m);
        out.extend_from_slice(b"; ");
        out.extend_from_slice(&var);
        out.extend_from_slice(b"++) {");
    }

    fn while_line(&self, out: &mut Vec<u8>, m: &mut Mix) {
        out.extend_from_slice(b"while ");
        if self.lang == Lang::Python {
            self.cond(out, m);
            out.push(b':');
        } else {
            out.push(b'(');
            self.cond(out, m);
            out.extend_from_slice(b") {");
        }
    }

    fn signature(&self, out: &mut Vec<u8>, m: &mut Mix) {
        match self.lang {
            Lang::Python => {
                out.extend_from_slice(b"def ");
                self.ident(out, m);
                out.push(b'(');
                self.args(out, m);
                out.extend_from_slice(b"):");
            }
            Lang::Java => {
                out.extend_from_slice(
                    m.pick(&["public ", "private ", "protected ", "public static "])
                        .as_bytes(),
                );
                self.ty(out, m);
                out.push(b' ');
                self.ident(out, m);
                out.push(b'(');
                self.params(out, m);
                out.extend_from_slice(b") {");
            }
            _ => {
                if m.below(2) == 0 {
                    out.extend_from_slice(b"static ");
                }
                self.ty(out, m);
                out.push(b'\n');
                self.prefix(out);
                self.ident(out, m);
                out.push(b'(');
                self.params(out, m);
                out.extend_from_slice(b")\n{");
            }
        }
    }

    fn params(&self, out: &mut Vec<u8>, m: &mut Mix) {
        let n = m.below(4);
        if n == 0 && self.lang == Lang::C {
            out.extend_from_slice(b"void");
        }
        for i in 0..n {
            if i > 0 {
                out.extend_from_slice(b", ");
            }
            self.ty(out, m);
            out.push(b' ');
            self.ident(out, m);
        }
    }

    fn class(&self, out: &mut Vec<u8>, m: &mut Mix) {
        out.extend_from_slice(b"public class ");
        let mut name = Vec::new();
        self.ident(&mut name, m);
        if let Some(c) = name.first_mut() {
            *c = c.to_ascii_uppercase();
        }
        out.extend_from_slice(&name);
        out.extend_from_slice(b" {");
    }

    fn include(&self, out: &mut Vec<u8>, seed: u64) {
        let mut m = Mix::new(seed);
        match self.lang {
            Lang::C => {
                out.extend_from_slice(b"#include ");
                let h = m.pick(C_HEADERS);
                if h.starts_with("svn_") || h.starts_with("private") || h.starts_with("apr") {
                    out.push(b'"');
                    out.extend_from_slice(h.as_bytes());
                    out.push(b'"');
                } else {
                    out.push(b'<');
                    out.extend_from_slice(h.as_bytes());
                    out.push(b'>');
                }
            }
            Lang::Java => {
                out.extend_from_slice(b"import org.example.");
                out.extend_from_slice(m.pick(NAME_PARTS).as_bytes());
                out.push(b'.');
                let mut name = Vec::new();
                self.ident(&mut name, &mut m);
                if let Some(c) = name.first_mut() {
                    *c = c.to_ascii_uppercase();
                }
                out.extend_from_slice(&name);
                out.push(b';');
            }
            Lang::Python | Lang::Text => {
                out.extend_from_slice(b"import ");
                out.extend_from_slice(m.pick(NAME_PARTS).as_bytes());
            }
        }
    }

    fn license(&self, out: &mut Vec<u8>, seed: u64) {
        let (open, mid, close): (&[u8], &[u8], &[u8]) = match self.lang {
            Lang::C => (b"/*", b" *", b" */"),
            Lang::Java => (b"/*", b" *", b" */"),
            _ => (b"#", b"#", b"#"),
        };
        match seed {
            LICENSE_OPEN => out.extend_from_slice(open),
            LICENSE_CLOSE => out.extend_from_slice(close),
            i => {
                out.extend_from_slice(mid);
                if let Some(text) = LICENSE.get(i as usize).filter(|t| !t.is_empty()) {
                    out.push(b' ');
                    out.extend_from_slice(text.as_bytes());
                }
            }
        }
    }

    fn copyright(&self, out: &mut Vec<u8>, year: u64) {
        out.extend_from_slice(if self.lang.braces() { b" * " } else { b"# " });
        out.extend_from_slice(
            format!("Copyright (c) 2004-{year} The Example Project contributors.").as_bytes(),
        );
    }

    fn keyword_id(&self, out: &mut Vec<u8>) {
        match self.lang {
            Lang::C => out.extend_from_slice(b"/* $Id$ */"),
            Lang::Java => out.extend_from_slice(b"// $Id$"),
            _ => out.extend_from_slice(b"# $Id$"),
        }
    }
}

/// What goes on top of a new text file.
#[derive(Clone, Copy, Debug)]
pub struct Header {
    pub license: bool,
    pub keyword_id: bool,
    pub year: u16,
}

fn random_token<R: Rng>(rng: &mut R, kind: Kind, indent: u8) -> u64 {
    token(kind, indent, rng.gen::<u64>() >> 9)
}

/// Rough bytes a token renders to, to size new files without rendering them.
fn estimate(tok: u64) -> usize {
    let base = match kind_of(tok) {
        Kind::Blank => 1,
        Kind::Close | Kind::Else => 4,
        Kind::License => 50,
        Kind::Signature => 50,
        Kind::Prose => 70,
        _ => 30,
    };
    base + 4 * usize::from(indent_of(tok))
}

/// A new text body of about `target` bytes.
pub fn new_body<R: Rng>(rng: &mut R, lang: Lang, target: usize, header: Header) -> Vec<u64> {
    let mut lines = Vec::with_capacity(target / 28 + 8);
    if header.license && lang != Lang::Text {
        lines.push(token(Kind::License, 0, LICENSE_OPEN));
        lines.push(token(Kind::Copyright, 0, u64::from(header.year)));
        for i in 0..LICENSE.len() {
            lines.push(token(Kind::License, 0, i as u64));
        }
        lines.push(token(Kind::License, 0, LICENSE_CLOSE));
        lines.push(token(Kind::Blank, 0, 0));
    }
    if header.keyword_id {
        lines.push(token(Kind::KeywordId, 0, 0));
        lines.push(token(Kind::Blank, 0, 0));
    }
    let mut size: usize = lines.iter().map(|&t| estimate(t)).sum();
    match lang {
        Lang::Text => {
            while size < target {
                let start = lines.len();
                lines.push(random_token(rng, Kind::Heading, 0));
                lines.push(token(Kind::Blank, 0, 0));
                for _ in 0..rng.gen_range(2..9) {
                    lines.push(random_token(rng, Kind::Prose, 0));
                }
                lines.push(token(Kind::Blank, 0, 0));
                size += lines[start..].iter().map(|&t| estimate(t)).sum::<usize>();
            }
        }
        _ => {
            for _ in 0..rng.gen_range(2..9) {
                lines.push(token(Kind::Include, 0, rng.gen_range(0..1 << 20)));
            }
            lines.push(token(Kind::Blank, 0, 0));
            let base = if lang == Lang::Java {
                lines.push(random_token(rng, Kind::Class, 0));
                1
            } else {
                0
            };
            while size < target {
                let start = lines.len();
                for _ in 0..rng.gen_range(0..4) {
                    lines.push(random_token(rng, Kind::Comment, base));
                }
                lines.push(random_token(rng, Kind::Signature, base));
                let n = rng.gen_range(3..20);
                block(rng, lang, &mut lines, base + 1, 0, n);
                lines.push(random_token(rng, Kind::Return, base + 1));
                if lang.braces() {
                    lines.push(token(Kind::Close, base, 0));
                }
                lines.push(token(Kind::Blank, 0, 0));
                size += lines[start..].iter().map(|&t| estimate(t)).sum::<usize>();
            }
            if lang == Lang::Java {
                lines.push(token(Kind::Close, 0, 0));
            }
        }
    }
    lines
}

/// Appends a block of `n` statements at `indent`, nesting up to three levels.
fn block<R: Rng>(rng: &mut R, lang: Lang, lines: &mut Vec<u64>, indent: u8, depth: u8, n: usize) {
    if lang == Lang::Text {
        for _ in 0..n {
            lines.push(random_token(rng, Kind::Prose, 0));
        }
        return;
    }
    for _ in 0..n {
        let r = rng.gen_range(0..100);
        if r < 8 {
            lines.push(random_token(rng, Kind::Comment, indent));
        } else if r < 22 && depth < 3 {
            let kind = match rng.gen_range(0..10) {
                0..=5 => Kind::If,
                6..=8 => Kind::For,
                _ => Kind::While,
            };
            lines.push(random_token(rng, kind, indent));
            let inner = rng.gen_range(1..6);
            block(rng, lang, lines, indent + 1, depth + 1, inner);
            if kind == Kind::If && rng.gen_range(0..5) == 0 {
                lines.push(token(Kind::Else, indent, 0));
                let inner = rng.gen_range(1..4);
                block(rng, lang, lines, indent + 1, depth + 1, inner);
            }
            if lang.braces() {
                lines.push(token(Kind::Close, indent, 0));
            }
        } else if r < 32 {
            lines.push(random_token(rng, Kind::Decl, indent));
        } else if r < 35 {
            lines.push(token(Kind::Blank, 0, 0));
        } else {
            lines.push(random_token(rng, Kind::Stmt, indent));
        }
    }
}

/// Whether a line may be rewritten in place (keeps the block structure intact).
fn rewritable(tok: u64) -> bool {
    matches!(
        kind_of(tok),
        Kind::Comment
            | Kind::Stmt
            | Kind::Decl
            | Kind::Return
            | Kind::If
            | Kind::For
            | Kind::While
            | Kind::Prose
            | Kind::Heading
            | Kind::Signature
    )
}

/// Whether a line may be deleted without unbalancing braces.
fn deletable(tok: u64) -> bool {
    matches!(
        kind_of(tok),
        Kind::Comment | Kind::Stmt | Kind::Decl | Kind::Blank | Kind::Prose
    )
}

fn rendered(lang: Lang, vocab: u32, tok: u64) -> Vec<u8> {
    let mut v = Vec::with_capacity(64);
    render_line(&mut v, lang, vocab, tok);
    v
}

/// Rewrites the line at `i` with a new one of the same kind and indentation whose text
/// differs.
fn rewrite<R: Rng>(rng: &mut R, lang: Lang, vocab: u32, lines: &mut [u64], i: usize) {
    let old = lines[i];
    let before = rendered(lang, vocab, old);
    for _ in 0..16 {
        let new = random_token(rng, kind_of(old), indent_of(old));
        if rendered(lang, vocab, new) != before {
            lines[i] = new;
            return;
        }
    }
    // Pathologically unlucky: fall back to a statement, which always has text.
    lines[i] = random_token(rng, Kind::Comment, indent_of(old));
}

/// A small edit like a real commit makes: one to three hunks, each rewriting a few
/// lines, inserting a block, or deleting a run of simple lines.
pub fn edit<R: Rng>(rng: &mut R, lang: Lang, vocab: u32, lines: &mut Vec<u64>) {
    let hunks = match rng.gen_range(0..20) {
        0..=11 => 1,
        12..=16 => 2,
        _ => 3,
    };
    // Positions from the bottom up so that earlier hunks do not shift later ones.
    let mut positions: Vec<usize> = (0..hunks).map(|_| rng.gen_range(0..=lines.len())).collect();
    positions.sort_unstable_by(|a, b| b.cmp(a));
    let mut limit = lines.len();
    for pos in positions {
        let pos = pos.min(limit);
        let r = rng.gen_range(0..10);
        if r < 5 || lines.is_empty() {
            if !modify_at(rng, lang, vocab, lines, pos, limit) {
                insert_at(rng, lang, lines, pos);
            }
        } else if r < 8 || lines.len() < 30 || !delete_at(rng, lines, pos, limit) {
            insert_at(rng, lang, lines, pos);
        }
        limit = pos;
    }
}

/// Rewrites 1-4 lines from around `pos` (not past `limit`). False when none qualify.
fn modify_at<R: Rng>(
    rng: &mut R,
    lang: Lang,
    vocab: u32,
    lines: &mut [u64],
    pos: usize,
    limit: usize,
) -> bool {
    let end = limit.min(lines.len());
    let Some(start) = (pos..end).find(|&i| rewritable(lines[i])) else {
        return false;
    };
    let want = rng.gen_range(1..5);
    let mut done = 0;
    for i in start..end {
        if done == want {
            break;
        }
        if rewritable(lines[i]) {
            rewrite(rng, lang, vocab, lines, i);
            done += 1;
        }
    }
    true
}

/// Inserts a new block (or paragraph) before `pos`.
pub fn insert_at<R: Rng>(rng: &mut R, lang: Lang, lines: &mut Vec<u64>, pos: usize) {
    let pos = pos.min(lines.len());
    let indent = if lang == Lang::Text {
        0
    } else {
        // Indent like the line below, at least one level inside a function.
        lines
            .get(pos)
            .or_else(|| pos.checked_sub(1).and_then(|p| lines.get(p)))
            .map(|&t| indent_of(t))
            .unwrap_or(1)
            .clamp(1, 4)
    };
    let mut new = Vec::new();
    let n = if rng.gen_range(0..4) == 0 {
        rng.gen_range(4..12)
    } else {
        rng.gen_range(1..4)
    };
    block(rng, lang, &mut new, indent, 1, n);
    if new.iter().all(|&t| kind_of(t) == Kind::Blank) {
        new.push(random_token(rng, Kind::Comment, indent));
    }
    lines.splice(pos..pos, new);
}

/// Deletes a run of 1-12 simple lines starting at or after `pos`.
fn delete_at<R: Rng>(rng: &mut R, lines: &mut Vec<u64>, pos: usize, limit: usize) -> bool {
    let end = limit.min(lines.len());
    let Some(start) = (pos..end).find(|&i| deletable(lines[i])) else {
        return false;
    };
    let want = rng.gen_range(1..13);
    let mut stop = start;
    while stop < end && stop - start < want && deletable(lines[stop]) {
        stop += 1;
    }
    lines.drain(start..stop);
    true
}

/// Sets the copyright line's year. False when the file has none or it already says so.
pub fn set_copyright_year(lines: &mut [u64], year: u16) -> bool {
    for t in lines.iter_mut() {
        if kind_of(*t) == Kind::Copyright {
            if seed_of(*t) == u64::from(year) {
                return false;
            }
            *t = token(Kind::Copyright, indent_of(*t), u64::from(year));
            return true;
        }
    }
    false
}

/// Rewrites 1-3 statements spread over the file (a mechanical API rename).
pub fn touch_statements<R: Rng>(rng: &mut R, lang: Lang, vocab: u32, lines: &mut [u64]) -> bool {
    let candidates: Vec<usize> = (0..lines.len()).filter(|&i| rewritable(lines[i])).collect();
    if candidates.is_empty() {
        return false;
    }
    for _ in 0..rng.gen_range(1..4) {
        let i = candidates[rng.gen_range(0..candidates.len())];
        rewrite(rng, lang, vocab, lines, i);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn text(lang: Lang, lines: &[u64]) -> String {
        let mut out = Vec::new();
        render(&mut out, lang, 7, lines);
        String::from_utf8(out).expect("rendered text is ASCII")
    }

    #[test]
    fn bodies_have_about_the_requested_size() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        for lang in [Lang::C, Lang::Java, Lang::Python, Lang::Text] {
            for target in [1_000, 10_000, 50_000] {
                let header = Header {
                    license: true,
                    keyword_id: true,
                    year: 2010,
                };
                let lines = new_body(&mut rng, lang, target, header);
                let len = text(lang, &lines).len();
                assert!(
                    len > target / 2 && len < target * 2 + 2_000,
                    "{lang:?} {target} -> {len}"
                );
            }
        }
    }

    #[test]
    fn edits_always_change_the_text() {
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        for lang in [Lang::C, Lang::Python, Lang::Text] {
            let header = Header {
                license: false,
                keyword_id: false,
                year: 2010,
            };
            let mut lines = new_body(&mut rng, lang, 2_000, header);
            for _ in 0..200 {
                let before = lines.clone();
                edit(&mut rng, lang, 7, &mut lines);
                assert_ne!(before, lines);
            }
        }
    }

    #[test]
    fn copyright_year_is_updated_once() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let header = Header {
            license: true,
            keyword_id: false,
            year: 2010,
        };
        let mut lines = new_body(&mut rng, Lang::C, 2_000, header);
        assert!(text(Lang::C, &lines).contains("2004-2010"));
        assert!(set_copyright_year(&mut lines, 2011));
        assert!(!set_copyright_year(&mut lines, 2011));
        assert!(text(Lang::C, &lines).contains("2004-2011"));
    }
}
