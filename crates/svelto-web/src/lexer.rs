//! A quick highlighter for the languages most files are in: one pass over the bytes, no
//! regex, the same classes as [`crate::highlight`]'s grammars give (comments, strings,
//! numbers and constants, keywords, types, defined names), so a first view of a 600-line
//! file costs about what reading it costs (syntect's grammars took ~0.12 ms a line:
//! `benches/highlight.rs`). Lexical only: it knows comments, strings (escapes, multi-line
//! kinds), numbers and each language's words, not its grammar (a call is not a
//! definition; a C function's name is marked where its definition starts a line).
//!
//! Linear in the text whatever it holds: each byte is looked at a bounded number of times,
//! and state carried from line to line is one of a few kinds (in a block comment, in a
//! multi-line string, in a markup tag).

use std::collections::HashSet;
use std::sync::OnceLock;

/// One language's lexical rules.
pub struct Lang {
    /// The name pages show (syntect's name for the same language).
    pub name: &'static str,
    exts: &'static [&'static str],
    /// Line comments, and whether one needs a space or a line start before it (`#` in
    /// shell: `$#`, `a#b` are not comments).
    line: &'static [&'static str],
    hash_needs_space: bool,
    block: &'static [(&'static str, &'static str)],
    /// String delimiters (open, close, multi-line); backslash escapes in all but raw ones.
    strings: &'static [(&'static str, &'static str, bool)],
    /// `'` is a char literal only when it closes at once (`'a'`, `'\n'`): Rust's lifetimes.
    rust_chars: bool,
    keywords: &'static [&'static str],
    types: &'static [&'static str],
    constants: &'static [&'static str],
    /// Words after which the next word is a defined name (`fn NAME`, `class NAME`).
    definers: &'static [&'static str],
    /// A word at a line's start followed by `(` is a defined name (C's definitions).
    c_definitions: bool,
    /// `#word` at a line's start (after blanks) is a preprocessor keyword.
    preprocessor: bool,
    /// Markup (XML, HTML, SVG): tags, attributes' values, comments, entities.
    markup: bool,
}

const C_LIKE_BLOCK: &[(&str, &str)] = &[("/*", "*/")];
const DQ: (&str, &str, bool) = ("\"", "\"", false);
const SQ: (&str, &str, bool) = ("'", "'", false);

const C_KEYWORDS: &[&str] = &[
    "break", "case", "continue", "default", "do", "else", "for", "goto", "if", "return", "sizeof",
    "switch", "while", "typedef", "extern", "static", "const", "volatile", "register", "inline",
    "restrict", "auto",
];
const C_TYPES: &[&str] = &[
    "char",
    "double",
    "float",
    "int",
    "long",
    "short",
    "signed",
    "unsigned",
    "void",
    "struct",
    "union",
    "enum",
    "size_t",
    "ssize_t",
    "bool",
    "int8_t",
    "int16_t",
    "int32_t",
    "int64_t",
    "uint8_t",
    "uint16_t",
    "uint32_t",
    "uint64_t",
    "apr_size_t",
    "apr_off_t",
    "svn_error_t",
    "svn_boolean_t",
    "svn_revnum_t",
    "apr_pool_t",
];
const CPP_KEYWORDS: &[&str] = &[
    "break",
    "case",
    "catch",
    "class",
    "const",
    "constexpr",
    "continue",
    "default",
    "delete",
    "do",
    "else",
    "explicit",
    "extern",
    "for",
    "friend",
    "goto",
    "if",
    "inline",
    "mutable",
    "namespace",
    "new",
    "noexcept",
    "operator",
    "private",
    "protected",
    "public",
    "return",
    "sizeof",
    "static",
    "switch",
    "template",
    "this",
    "throw",
    "try",
    "typedef",
    "typename",
    "using",
    "virtual",
    "volatile",
    "while",
    "override",
    "final",
];
const JAVA_KEYWORDS: &[&str] = &[
    "abstract",
    "assert",
    "break",
    "case",
    "catch",
    "class",
    "continue",
    "default",
    "do",
    "else",
    "enum",
    "extends",
    "final",
    "finally",
    "for",
    "if",
    "implements",
    "import",
    "instanceof",
    "interface",
    "native",
    "new",
    "package",
    "private",
    "protected",
    "public",
    "return",
    "static",
    "super",
    "switch",
    "synchronized",
    "this",
    "throw",
    "throws",
    "transient",
    "try",
    "volatile",
    "while",
    "var",
    "record",
    "yield",
];
const JAVA_TYPES: &[&str] = &[
    "boolean", "byte", "char", "double", "float", "int", "long", "short", "void", "String",
    "Object", "Integer", "Long", "List", "Map",
];
const CS_KEYWORDS: &[&str] = &[
    "abstract",
    "as",
    "base",
    "break",
    "case",
    "catch",
    "class",
    "const",
    "continue",
    "default",
    "delegate",
    "do",
    "else",
    "enum",
    "event",
    "explicit",
    "extern",
    "finally",
    "fixed",
    "for",
    "foreach",
    "goto",
    "if",
    "implicit",
    "in",
    "interface",
    "internal",
    "is",
    "lock",
    "namespace",
    "new",
    "operator",
    "out",
    "override",
    "params",
    "private",
    "protected",
    "public",
    "readonly",
    "ref",
    "return",
    "sealed",
    "sizeof",
    "static",
    "struct",
    "switch",
    "this",
    "throw",
    "try",
    "typeof",
    "using",
    "virtual",
    "volatile",
    "while",
    "var",
    "async",
    "await",
];
const CS_TYPES: &[&str] = &[
    "bool", "byte", "char", "decimal", "double", "float", "int", "long", "object", "sbyte",
    "short", "string", "uint", "ulong", "ushort", "void",
];
const JS_KEYWORDS: &[&str] = &[
    "async",
    "await",
    "break",
    "case",
    "catch",
    "class",
    "const",
    "continue",
    "debugger",
    "default",
    "delete",
    "do",
    "else",
    "export",
    "extends",
    "finally",
    "for",
    "from",
    "function",
    "if",
    "import",
    "in",
    "instanceof",
    "let",
    "new",
    "of",
    "return",
    "static",
    "super",
    "switch",
    "this",
    "throw",
    "try",
    "typeof",
    "var",
    "void",
    "while",
    "with",
    "yield",
    "interface",
    "type",
    "enum",
    "implements",
    "private",
    "protected",
    "public",
    "readonly",
    "declare",
    "namespace",
    "abstract",
    "as",
];
const JS_TYPES: &[&str] = &[
    "string", "number", "boolean", "any", "unknown", "never", "object", "symbol", "bigint",
];
const JS_CONSTANTS: &[&str] = &["true", "false", "null", "undefined", "NaN", "Infinity"];
const GO_KEYWORDS: &[&str] = &[
    "break",
    "case",
    "chan",
    "const",
    "continue",
    "default",
    "defer",
    "else",
    "fallthrough",
    "for",
    "func",
    "go",
    "goto",
    "if",
    "import",
    "interface",
    "map",
    "package",
    "range",
    "return",
    "select",
    "struct",
    "switch",
    "type",
    "var",
];
const GO_TYPES: &[&str] = &[
    "bool",
    "byte",
    "complex64",
    "complex128",
    "error",
    "float32",
    "float64",
    "int",
    "int8",
    "int16",
    "int32",
    "int64",
    "rune",
    "string",
    "uint",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "uintptr",
    "any",
];
const RUST_KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "continue", "crate", "dyn", "else", "extern", "for", "if",
    "impl", "in", "loop", "match", "move", "mut", "pub", "ref", "return", "self", "Self", "super",
    "unsafe", "use", "where", "while", "let", "const", "static", "mod",
];
const RUST_TYPES: &[&str] = &[
    "fn", "struct", "enum", "trait", "type", "union", "bool", "char", "str", "u8", "u16", "u32",
    "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128", "isize", "f32", "f64", "String",
    "Vec", "Option", "Result", "Box",
];
const PY_KEYWORDS: &[&str] = &[
    "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del", "elif",
    "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda",
    "nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with", "yield",
];
const PY_CONSTANTS: &[&str] = &["True", "False", "None"];
const SH_KEYWORDS: &[&str] = &[
    "if", "then", "else", "elif", "fi", "case", "esac", "for", "while", "until", "do", "done",
    "in", "function", "return", "local", "export", "readonly", "declare", "set", "unset", "shift",
    "exit", "break", "continue", "source", "trap", "eval", "exec",
];
const RUBY_KEYWORDS: &[&str] = &[
    "alias",
    "and",
    "begin",
    "break",
    "case",
    "class",
    "def",
    "defined?",
    "do",
    "else",
    "elsif",
    "end",
    "ensure",
    "for",
    "if",
    "in",
    "module",
    "next",
    "not",
    "or",
    "redo",
    "rescue",
    "retry",
    "return",
    "self",
    "super",
    "then",
    "undef",
    "unless",
    "until",
    "when",
    "while",
    "yield",
    "require",
    "attr_reader",
    "attr_accessor",
];
const PERL_KEYWORDS: &[&str] = &[
    "my", "our", "local", "sub", "if", "elsif", "else", "unless", "while", "until", "for",
    "foreach", "return", "last", "next", "redo", "use", "no", "package", "require", "and", "or",
    "not", "eq", "ne", "lt", "gt", "le", "ge", "die", "print",
];
const LUA_KEYWORDS: &[&str] = &[
    "and", "break", "do", "else", "elseif", "end", "for", "function", "goto", "if", "in", "local",
    "not", "or", "repeat", "return", "then", "until", "while",
];
const NO_WORDS: &[&str] = &[];
const C_CONSTANTS: &[&str] = &["NULL", "true", "false", "TRUE", "FALSE", "nullptr"];
const TRUE_FALSE_NULL: &[&str] = &["true", "false", "null"];
const FALSE_TRUE_NIL: &[&str] = &["true", "false", "nil"];

/// The languages, by extension (the first match wins).
pub static LANGS: &[Lang] = &[
    Lang {
        name: "C",
        exts: &["c", "h"],
        line: &["//"],
        hash_needs_space: false,
        block: C_LIKE_BLOCK,
        strings: &[DQ, SQ],
        rust_chars: false,
        keywords: C_KEYWORDS,
        types: C_TYPES,
        constants: C_CONSTANTS,
        definers: &["struct", "union", "enum"],
        c_definitions: true,
        preprocessor: true,
        markup: false,
    },
    Lang {
        name: "C++",
        exts: &["cc", "cpp", "cxx", "c++", "hh", "hpp", "hxx", "h++", "ino"],
        line: &["//"],
        hash_needs_space: false,
        block: C_LIKE_BLOCK,
        strings: &[DQ, SQ],
        rust_chars: false,
        keywords: CPP_KEYWORDS,
        types: C_TYPES,
        constants: C_CONSTANTS,
        definers: &["class", "struct", "union", "enum", "namespace"],
        c_definitions: true,
        preprocessor: true,
        markup: false,
    },
    Lang {
        name: "Java",
        exts: &["java"],
        line: &["//"],
        hash_needs_space: false,
        block: C_LIKE_BLOCK,
        strings: &[("\"\"\"", "\"\"\"", true), DQ, SQ],
        rust_chars: false,
        keywords: JAVA_KEYWORDS,
        types: JAVA_TYPES,
        constants: TRUE_FALSE_NULL,
        definers: &["class", "interface", "enum", "record"],
        c_definitions: false,
        preprocessor: false,
        markup: false,
    },
    Lang {
        name: "C#",
        exts: &["cs"],
        line: &["//"],
        hash_needs_space: false,
        block: C_LIKE_BLOCK,
        strings: &[DQ, SQ],
        rust_chars: false,
        keywords: CS_KEYWORDS,
        types: CS_TYPES,
        constants: TRUE_FALSE_NULL,
        definers: &["class", "interface", "enum", "struct"],
        c_definitions: false,
        preprocessor: true,
        markup: false,
    },
    Lang {
        name: "JavaScript",
        exts: &["js", "mjs", "cjs", "jsx", "ts", "tsx", "mts", "cts"],
        line: &["//"],
        hash_needs_space: false,
        block: C_LIKE_BLOCK,
        strings: &[DQ, SQ, ("`", "`", true)],
        rust_chars: false,
        keywords: JS_KEYWORDS,
        types: JS_TYPES,
        constants: JS_CONSTANTS,
        definers: &["function", "class", "interface"],
        c_definitions: false,
        preprocessor: false,
        markup: false,
    },
    Lang {
        name: "Go",
        exts: &["go"],
        line: &["//"],
        hash_needs_space: false,
        block: C_LIKE_BLOCK,
        strings: &[DQ, SQ, ("`", "`", true)],
        rust_chars: false,
        keywords: GO_KEYWORDS,
        types: GO_TYPES,
        constants: &["true", "false", "nil", "iota"],
        definers: &["func", "type"],
        c_definitions: false,
        preprocessor: false,
        markup: false,
    },
    Lang {
        name: "Rust",
        exts: &["rs"],
        line: &["//"],
        hash_needs_space: false,
        block: C_LIKE_BLOCK,
        strings: &[("\"", "\"", true), SQ],
        rust_chars: true,
        keywords: RUST_KEYWORDS,
        types: RUST_TYPES,
        constants: &["true", "false", "None", "Some", "Ok", "Err"],
        definers: &["fn", "struct", "enum", "trait", "type", "union", "mod"],
        c_definitions: false,
        preprocessor: false,
        markup: false,
    },
    Lang {
        name: "Python",
        exts: &["py", "pyw", "pyi"],
        line: &["#"],
        hash_needs_space: false,
        block: &[],
        strings: &[("\"\"\"", "\"\"\"", true), ("'''", "'''", true), DQ, SQ],
        rust_chars: false,
        keywords: PY_KEYWORDS,
        types: NO_WORDS,
        constants: PY_CONSTANTS,
        definers: &["def", "class"],
        c_definitions: false,
        preprocessor: false,
        markup: false,
    },
    Lang {
        name: "Bourne Again Shell (bash)",
        exts: &["sh", "bash", "zsh", "ksh"],
        line: &["#"],
        hash_needs_space: true,
        block: &[],
        strings: &[DQ, ("'", "'", true)],
        rust_chars: false,
        keywords: SH_KEYWORDS,
        types: NO_WORDS,
        constants: NO_WORDS,
        definers: &["function"],
        c_definitions: false,
        preprocessor: false,
        markup: false,
    },
    Lang {
        name: "Ruby",
        exts: &["rb", "rake", "gemspec"],
        line: &["#"],
        hash_needs_space: false,
        block: &[],
        strings: &[DQ, SQ],
        rust_chars: false,
        keywords: RUBY_KEYWORDS,
        types: NO_WORDS,
        constants: FALSE_TRUE_NIL,
        definers: &["def", "class", "module"],
        c_definitions: false,
        preprocessor: false,
        markup: false,
    },
    Lang {
        name: "Perl",
        exts: &["pl", "pm", "t"],
        line: &["#"],
        hash_needs_space: false,
        block: &[],
        strings: &[DQ, SQ],
        rust_chars: false,
        keywords: PERL_KEYWORDS,
        types: NO_WORDS,
        constants: NO_WORDS,
        definers: &["sub", "package"],
        c_definitions: false,
        preprocessor: false,
        markup: false,
    },
    Lang {
        name: "Lua",
        exts: &["lua"],
        line: &["--"],
        hash_needs_space: false,
        block: &[("--[[", "]]")],
        strings: &[DQ, SQ, ("[[", "]]", true)],
        rust_chars: false,
        keywords: LUA_KEYWORDS,
        types: NO_WORDS,
        constants: FALSE_TRUE_NIL,
        definers: &["function"],
        c_definitions: false,
        preprocessor: false,
        markup: false,
    },
    Lang {
        name: "XML",
        exts: &[
            "xml", "xsd", "xsl", "xslt", "svg", "html", "htm", "xhtml", "rss", "atom",
        ],
        line: &[],
        hash_needs_space: false,
        block: &[("<!--", "-->")],
        strings: &[],
        rust_chars: false,
        keywords: NO_WORDS,
        types: NO_WORDS,
        constants: NO_WORDS,
        definers: NO_WORDS,
        c_definitions: false,
        preprocessor: false,
        markup: true,
    },
];

/// The names of the markup kinds: an HTML file is shown as "HTML".
fn shown_name(lang: &'static Lang, ext: &str) -> &'static str {
    if lang.markup {
        match ext {
            "html" | "htm" | "xhtml" => "HTML",
            "svg" => "SVG",
            _ => lang.name,
        }
    } else if lang.name == "JavaScript" && matches!(ext, "ts" | "tsx" | "mts" | "cts") {
        "TypeScript"
    } else {
        lang.name
    }
}

/// The language of a file, by its name's extension (case-insensitive) or, for a name
/// without one, a `#!` first line naming sh, bash, python, perl or ruby; with the name to
/// show.
pub fn lang_for(name: &str, first_line: &str) -> Option<(&'static Lang, &'static str)> {
    if let Some((_, ext)) = name.rsplit_once('.') {
        let ext = ext.to_ascii_lowercase();
        return LANGS
            .iter()
            .find(|l| l.exts.contains(&ext.as_str()))
            .map(|l| (l, shown_name(l, &ext)));
    }
    let interp = first_line.strip_prefix("#!")?;
    let word = interp
        .split_whitespace()
        .find(|w| !w.ends_with("/env") && !w.starts_with('-'))?;
    let word = word.rsplit('/').next().unwrap_or(word);
    let ext = match word.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.') {
        "sh" | "bash" | "dash" | "zsh" | "ksh" => "sh",
        "python" => "py",
        "perl" => "pl",
        "ruby" => "rb",
        _ => return None,
    };
    LANGS
        .iter()
        .find(|l| l.exts.contains(&ext))
        .map(|l| (l, l.name))
}

/// Each language's words, looked up by a hash set (built once).
struct Words {
    keywords: HashSet<&'static str>,
    types: HashSet<&'static str>,
    constants: HashSet<&'static str>,
    definers: HashSet<&'static str>,
}

fn words(lang: &'static Lang) -> &'static Words {
    static ALL: OnceLock<Vec<Words>> = OnceLock::new();
    let all = ALL.get_or_init(|| {
        LANGS
            .iter()
            .map(|l| Words {
                keywords: l.keywords.iter().copied().collect(),
                types: l.types.iter().copied().collect(),
                constants: l.constants.iter().copied().collect(),
                definers: l.definers.iter().copied().collect(),
            })
            .collect()
    });
    let i = LANGS
        .iter()
        .position(|l| std::ptr::eq(l, lang))
        .unwrap_or_default();
    &all[i]
}

/// What a line ends inside of, carried to the next.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum State {
    Code,
    /// In the block comment of this index in `Lang::block`.
    Comment(usize),
    /// In the multi-line string of this index in `Lang::strings`.
    Str(usize),
    /// Markup: inside a tag (between its name and its `>`), or in one of its quoted values.
    Tag,
    TagStr(u8),
}

/// A line's HTML being built: runs of one class merged, every span closed at the end.
struct Out {
    s: String,
    open: &'static str,
}

impl Out {
    fn push(&mut self, class: &'static str, text: &str) {
        if text.is_empty() {
            return;
        }
        if class != self.open {
            if !self.open.is_empty() {
                self.s.push_str("</span>");
            }
            if !class.is_empty() {
                self.s.push_str("<span class=\"");
                self.s.push_str(class);
                self.s.push_str("\">");
            }
            self.open = class;
        }
        crate::highlight::escape_into(&mut self.s, text);
    }

    fn finish(mut self) -> String {
        if !self.open.is_empty() {
            self.s.push_str("</span>");
        }
        self.s
    }
}

/// The highlighted lines of `text` (its lines without their ends, as HTML).
pub fn highlight(lang: &'static Lang, text: &str) -> Vec<String> {
    let w = words(lang);
    let mut state = State::Code;
    let mut lines = Vec::with_capacity(text.len() / 32 + 1);
    for line in text.lines() {
        let mut out = Out {
            s: String::with_capacity(line.len() + line.len() / 2 + 16),
            open: "",
        };
        state = if lang.markup {
            markup_line(lang, line, state, &mut out)
        } else {
            code_line(lang, w, line, state, &mut out)
        };
        lines.push(out.finish());
    }
    lines
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

/// The end of a string opened before `from` whose close is `close`: the index just after
/// the close, or None when the line ends first. Backslash escapes, except in raw strings
/// (shell's single quotes, Go's and JavaScript's backquotes keep escapes: harmless).
fn string_end(line: &str, from: usize, close: &str, escapes: bool) -> Option<usize> {
    let (b, close) = (line.as_bytes(), close.as_bytes());
    let mut i = from;
    while i < b.len() {
        let x = b[i];
        if escapes && x == b'\\' {
            i += 2;
            continue;
        }
        if x == close[0] && b[i..].starts_with(close) {
            return Some(i + close.len());
        }
        i += 1;
    }
    None
}

/// Shell's single quotes know no escapes.
fn raw(lang: &Lang, close: &str) -> bool {
    lang.hash_needs_space && close == "'"
}

fn code_line(lang: &Lang, w: &Words, line: &str, state: State, out: &mut Out) -> State {
    let b = line.as_bytes();
    let mut i = 0;
    // Carried over from the line before.
    match state {
        State::Comment(k) => {
            let close = lang.block[k].1;
            match line.find(close) {
                Some(e) => {
                    out.push("hc", &line[..e + close.len()]);
                    i = e + close.len();
                }
                None => {
                    out.push("hc", line);
                    return state;
                }
            }
        }
        State::Str(k) => {
            let (_, close, _) = lang.strings[k];
            match string_end(line, 0, close, !raw(lang, close)) {
                Some(e) => {
                    out.push("hs", &line[..e]);
                    i = e;
                }
                None => {
                    out.push("hs", line);
                    return state;
                }
            }
        }
        _ => {}
    }
    let mut plain_from = i;
    let mut define_next = false;
    let first_word = b[i..]
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .map(|p| p + i);
    'scan: while i < b.len() {
        let c = b[i];
        // Comments.
        for (k, (open, close)) in lang.block.iter().enumerate() {
            if c == open.as_bytes()[0] && line[i..].starts_with(open) {
                out.push("", &line[plain_from..i]);
                match line[i + open.len()..].find(close) {
                    Some(e) => {
                        let end = i + open.len() + e + close.len();
                        out.push("hc", &line[i..end]);
                        i = end;
                        plain_from = i;
                        continue 'scan;
                    }
                    None => {
                        out.push("hc", &line[i..]);
                        return State::Comment(k);
                    }
                }
            }
        }
        for open in lang.line {
            if c == open.as_bytes()[0]
                && line[i..].starts_with(open)
                && (!lang.hash_needs_space || i == 0 || b[i - 1].is_ascii_whitespace())
                && !(lang.preprocessor && Some(i) == first_word)
            {
                out.push("", &line[plain_from..i]);
                out.push("hc", &line[i..]);
                return State::Code;
            }
        }
        // Preprocessor directives: `#include`, `  #if`.
        if lang.preprocessor && c == b'#' && Some(i) == first_word {
            let mut e = i + 1;
            while e < b.len() && (b[e] == b' ' || b[e] == b'\t') {
                e += 1;
            }
            while e < b.len() && is_word_byte(b[e]) {
                e += 1;
            }
            out.push("", &line[plain_from..i]);
            out.push("hk", &line[i..e]);
            i = e;
            plain_from = i;
            continue;
        }
        // Strings.
        if c == b'\'' && lang.rust_chars {
            // 'a', '\n', 'é' are chars; 'a (a lifetime) is not.
            let end = if b.get(i + 1) == Some(&b'\\') {
                string_end(line, i + 1, "'", true)
            } else {
                line[i + 1..]
                    .chars()
                    .next()
                    .map(|ch| i + 1 + ch.len_utf8())
                    .filter(|&e| b.get(e) == Some(&b'\''))
                    .map(|e| e + 1)
            };
            if let Some(e) = end {
                out.push("", &line[plain_from..i]);
                out.push("hs", &line[i..e]);
                i = e;
                plain_from = i;
            } else {
                i += 1;
            }
            continue;
        }
        for (k, (open, close, multi)) in lang.strings.iter().enumerate() {
            if c == open.as_bytes()[0] && line[i..].starts_with(open) {
                out.push("", &line[plain_from..i]);
                match string_end(line, i + open.len(), close, !raw(lang, close)) {
                    Some(e) => {
                        out.push("hs", &line[i..e]);
                        i = e;
                        plain_from = i;
                        continue 'scan;
                    }
                    None => {
                        out.push("hs", &line[i..]);
                        return if *multi { State::Str(k) } else { State::Code };
                    }
                }
            }
        }
        // Words and numbers.
        if is_word_byte(c) {
            let mut e = i + 1;
            while e < b.len() && is_word_byte(b[e]) {
                e += 1;
            }
            if c.is_ascii_digit() {
                // 0x1F, 1.5e3, 10u32: the word, and a fraction after a dot.
                while e + 1 < b.len() && b[e] == b'.' && b[e + 1].is_ascii_digit() {
                    e += 1;
                    while e < b.len() && is_word_byte(b[e]) {
                        e += 1;
                    }
                }
                out.push("", &line[plain_from..i]);
                out.push("hn", &line[i..e]);
                plain_from = e;
                i = e;
                continue;
            }
            let word = &line[i..e];
            let class = if define_next {
                define_next = false;
                "hf"
            } else if w.keywords.contains(word) {
                "hk"
            } else if w.types.contains(word) {
                "ht"
            } else if w.constants.contains(word) {
                "hn"
            } else if lang.c_definitions && i == 0 && b.get(e) == Some(&b'(') {
                "hf"
            } else {
                ""
            };
            if w.definers.contains(word) {
                define_next = true;
            }
            if !class.is_empty() {
                out.push("", &line[plain_from..i]);
                out.push(class, word);
                plain_from = e;
            }
            i = e;
            continue;
        }
        if !c.is_ascii_whitespace() {
            define_next = false;
        }
        i += 1;
    }
    out.push("", &line[plain_from..]);
    State::Code
}

fn markup_line(lang: &Lang, line: &str, mut state: State, out: &mut Out) -> State {
    let b = line.as_bytes();
    let (open, close) = lang.block[0];
    let mut i = 0;
    let mut plain_from = 0;
    while i < b.len() {
        match state {
            State::Comment(_) => match line[i..].find(close) {
                Some(e) => {
                    out.push("hc", &line[i..i + e + close.len()]);
                    i += e + close.len();
                    plain_from = i;
                    state = State::Code;
                }
                None => {
                    out.push("hc", &line[i..]);
                    return state;
                }
            },
            State::TagStr(q) => {
                let e = memchr::memchr(q, &b[i..]).map(|e| i + e + 1);
                let end = e.unwrap_or(b.len());
                out.push("hs", &line[i..end]);
                i = end;
                plain_from = i;
                if e.is_some() {
                    state = State::Tag;
                }
            }
            State::Tag => {
                let c = b[i];
                if c == b'"' || c == b'\'' {
                    out.push("", &line[plain_from..i]);
                    match memchr::memchr(c, &b[i + 1..]) {
                        Some(e) => {
                            out.push("hs", &line[i..i + e + 2]);
                            i += e + 2;
                            plain_from = i;
                        }
                        None => {
                            out.push("hs", &line[i..]);
                            return State::TagStr(c);
                        }
                    }
                } else if c == b'>' {
                    state = State::Code;
                    i += 1;
                } else {
                    i += 1;
                }
            }
            State::Code | State::Str(_) => {
                let c = b[i];
                if c == b'<' && line[i..].starts_with(open) {
                    out.push("", &line[plain_from..i]);
                    plain_from = i;
                    state = State::Comment(0);
                } else if c == b'<'
                    && b.get(i + 1)
                        .is_some_and(|&n| is_word_byte(n) || matches!(n, b'/' | b'?' | b'!'))
                {
                    // `<name`, `</name`, `<?xml`, `<!DOCTYPE`: the name marked.
                    let mut s = i + 1;
                    if matches!(b.get(s), Some(b'/' | b'?' | b'!')) {
                        s += 1;
                    }
                    let mut e = s;
                    while e < b.len() && (is_word_byte(b[e]) || matches!(b[e], b':' | b'-' | b'.'))
                    {
                        e += 1;
                    }
                    out.push("", &line[plain_from..s]);
                    out.push("hf", &line[s..e]);
                    i = e;
                    plain_from = e;
                    state = State::Tag;
                } else if c == b'&' {
                    let e = b[i..]
                        .iter()
                        .take(12)
                        .position(|&x| x == b';')
                        .map(|p| i + p + 1);
                    if let Some(e) = e {
                        out.push("", &line[plain_from..i]);
                        out.push("hn", &line[i..e]);
                        i = e;
                        plain_from = e;
                    } else {
                        i += 1;
                    }
                } else {
                    i += 1;
                }
            }
        }
    }
    out.push("", &line[plain_from..]);
    state
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hl(name: &str, text: &str) -> Vec<String> {
        let (lang, _) = lang_for(name, text.lines().next().unwrap_or("")).expect("a language");
        highlight(lang, text)
    }

    #[test]
    fn c_comments_strings_numbers_keywords_and_definitions() {
        let text = "/* Licensed\n * to you */\n#include <stdio.h>\nstatic int\nwindow_1(void *b, int n)\n{\n  if (n > 0x1f) /* x */\n    return printf(\"a \\\"%d\\\"\\n\", 'c'); // done\n}\n";
        let h = hl("w.c", text);
        assert_eq!(h[0], "<span class=\"hc\">/* Licensed</span>");
        assert_eq!(h[1], "<span class=\"hc\"> * to you */</span>");
        assert_eq!(h[2], "<span class=\"hk\">#include</span> &lt;stdio.h&gt;");
        assert_eq!(
            h[3],
            "<span class=\"hk\">static</span> <span class=\"ht\">int</span>"
        );
        assert!(
            h[4].starts_with("<span class=\"hf\">window_1</span>(<span class=\"ht\">void</span>"),
            "{}",
            h[4]
        );
        assert_eq!(
            h[6],
            "  <span class=\"hk\">if</span> (n &gt; <span class=\"hn\">0x1f</span>) <span class=\"hc\">/* x */</span>"
        );
        assert_eq!(
            h[7],
            "    <span class=\"hk\">return</span> printf(<span class=\"hs\">&quot;a \\&quot;%d\\&quot;\\n&quot;</span>, <span class=\"hs\">&#39;c&#39;</span>); <span class=\"hc\">// done</span>"
        );
    }

    #[test]
    fn multi_line_strings_and_shell_comments() {
        let h = hl(
            "a.py",
            "def f():\n    '''doc\n    \"more\"'''\n    return 1 # one\n",
        );
        assert_eq!(
            h[0],
            "<span class=\"hk\">def</span> <span class=\"hf\">f</span>():"
        );
        assert_eq!(h[1], "    <span class=\"hs\">&#39;&#39;&#39;doc</span>");
        assert_eq!(
            h[2],
            "<span class=\"hs\">    &quot;more&quot;&#39;&#39;&#39;</span>"
        );
        assert_eq!(
            h[3],
            "    <span class=\"hk\">return</span> <span class=\"hn\">1</span> <span class=\"hc\"># one</span>"
        );
        let h = hl("run", "#!/bin/sh\necho $# a#b 'x\\' # c\n");
        assert_eq!(h[0], "<span class=\"hc\">#!/bin/sh</span>");
        assert_eq!(
            h[1],
            "echo $# a#b <span class=\"hs\">&#39;x\\&#39;</span> <span class=\"hc\"># c</span>"
        );
    }

    #[test]
    fn rust_lifetimes_are_not_strings() {
        let h = hl("a.rs", "fn f<'a>(x: &'a str) -> char { '\\'' }\n");
        assert_eq!(
            h[0],
            "<span class=\"ht\">fn</span> <span class=\"hf\">f</span>&lt;&#39;a&gt;(x: &amp;&#39;a <span class=\"ht\">str</span>) -&gt; <span class=\"ht\">char</span> { <span class=\"hs\">&#39;\\&#39;&#39;</span> }"
        );
    }

    #[test]
    fn markup_tags_values_comments_and_entities() {
        let h = hl(
            "a.html",
            "<p class=\"x\">a &amp; b <!-- c\nd --> <img\n src='y'></p>\n",
        );
        assert_eq!(
            h[0],
            "&lt;<span class=\"hf\">p</span> class=<span class=\"hs\">&quot;x&quot;</span>&gt;a <span class=\"hn\">&amp;amp;</span> b <span class=\"hc\">&lt;!-- c</span>"
        );
        assert_eq!(
            h[1],
            "<span class=\"hc\">d --&gt;</span> &lt;<span class=\"hf\">img</span>"
        );
        assert_eq!(
            h[2],
            " src=<span class=\"hs\">&#39;y&#39;</span>&gt;&lt;/<span class=\"hf\">p</span>&gt;"
        );
    }

    #[test]
    fn unterminated_and_odd_input_stays_text() {
        for (name, text) in [
            ("a.c", "\"open\n/* open\n'\n\\"),
            ("a.rs", "'\n'é'\n'\\"),
            ("a.html", "<\n<!--\n&\n\"'<a b='"),
            ("a.py", "'''\n\\"),
        ] {
            let h = hl(name, text);
            assert_eq!(h.len(), text.lines().count(), "{name}");
            let all = h.concat();
            assert_eq!(all.matches("<span").count(), all.matches("</span>").count());
            let mut bare = all.replace("</span>", "");
            for class in ["hc", "hs", "hn", "hk", "ht", "hf"] {
                bare = bare.replace(&format!("<span class=\"{class}\">"), "");
            }
            assert!(!bare.contains('<') && !bare.contains('"'), "{all}");
        }
    }
}
