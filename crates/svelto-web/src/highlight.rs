//! Syntax highlighting of a file page: syntect's default syntaxes (Sublime Text grammars,
//! with pure-Rust regexes), rendered as spans with short classes that the pages' one inline
//! stylesheet colours (so the content security policy stays as it is: no style attribute,
//! no script).
//!
//! Bounded cost: a text over [`MAX_BYTES`] or [`MAX_LINES`], or with a line over
//! [`MAX_LINE`] bytes (minified code, where the grammars' regexes are slowest), is shown
//! plain; highlighting stops after [`BUDGET`] of one page's time and shows the lines after
//! that plain. The grammars are loaded once per process, each compiled when a file first
//! needs it. Highlighting costs far more than reading (about 0.1 ms a line: the grammars'
//! regexes, fancy-regex), so finished results are kept in a cache of [`CACHE_BYTES`],
//! keyed by a keyed hash of the text and the grammar (a text never changes under its
//! hash; the cache is emptied whole when full).

use std::collections::hash_map::RandomState;
use std::collections::HashMap;
use std::hash::BuildHasher;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};
use syntect::parsing::{ParseState, Scope, ScopeStack, SyntaxReference, SyntaxSet};

/// Texts larger than this are shown plain.
pub const MAX_BYTES: usize = 1 << 20;

/// Texts of more lines than this are shown plain.
pub const MAX_LINES: usize = 20_000;

/// A text with a line longer than this is shown plain.
pub const MAX_LINE: usize = 4096;

/// How long one page may spend highlighting (counted from its second line: the first
/// compiles most of a grammar's regexes the first time it is used); the lines after are
/// shown plain.
pub const BUDGET: Duration = Duration::from_millis(500);

/// The most the cache of highlighted texts holds (their HTML's bytes).
pub const CACHE_BYTES: usize = 16 << 20;

type Key = (u64, usize, &'static str);

/// The cache: the hash's keys, and the entries with their bytes in all.
type Cache = (RandomState, Mutex<(HashMap<Key, Arc<Vec<String>>>, usize)>);

/// Highlighted texts by (keyed hash of the text, its length, the grammar's name).
fn cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(|| (RandomState::new(), Mutex::new((HashMap::new(), 0))))
}

/// The grammars, loaded once (the first file page pays for it).
fn syntaxes() -> &'static SyntaxSet {
    static SET: OnceLock<SyntaxSet> = OnceLock::new();
    SET.get_or_init(SyntaxSet::load_defaults_newlines)
}

/// The scopes that get a colour, each with its class (the first that is a prefix of a
/// token's innermost matching scope wins), and the rule for each class in [`CSS`].
const CLASSES: [(&str, &str); 12] = [
    ("comment", "hc"),
    ("string", "hs"),
    ("constant.character.escape", "hk"),
    ("constant", "hn"),
    ("keyword.operator", ""),
    ("keyword", "hk"),
    ("storage.type", "ht"),
    ("storage", "hk"),
    ("entity.name", "hf"),
    ("support", "hb"),
    ("variable.parameter", "hv"),
    ("markup.heading", "hf"),
];

/// The colours of the classes above (in the pages' stylesheet).
pub const CSS: &str = ".hc{color:#6e7781;font-style:italic}.hs{color:#0a3069}.hk{color:#cf222e}\
.hn{color:#0550ae}.ht{color:#953800}.hf{color:#8250df}.hb{color:#0550ae}.hv{color:#953800}";

fn scope_classes() -> &'static [(Scope, &'static str)] {
    static SCOPES: OnceLock<Vec<(Scope, &'static str)>> = OnceLock::new();
    SCOPES.get_or_init(|| {
        CLASSES
            .iter()
            .filter_map(|(s, c)| Scope::new(s).ok().map(|s| (s, *c)))
            .collect()
    })
}

/// The class of a token under `stack`: that of its innermost scope with one.
fn class_of(stack: &ScopeStack) -> &'static str {
    let classes = scope_classes();
    for scope in stack.as_slice().iter().rev() {
        if let Some((_, class)) = classes.iter().find(|(p, _)| p.is_prefix_of(*scope)) {
            return class;
        }
    }
    ""
}

/// The grammar for a file, by its name's extension (or whole name: `Makefile`), else by
/// its first line (`#!/bin/sh`); None for plain text or no match.
pub fn syntax_for(name: &str, first_line: &str) -> Option<&'static SyntaxReference> {
    let set = syntaxes();
    let ext = name.rsplit_once('.').map_or(name, |(_, e)| e);
    set.find_syntax_by_extension(ext)
        .or_else(|| set.find_syntax_by_extension(name))
        .or_else(|| set.find_syntax_by_first_line(first_line))
        .filter(|s| s.name != "Plain Text")
}

/// What highlighting gave a text.
#[derive(Debug, PartialEq, Eq)]
pub struct Highlighted {
    /// Each line as HTML (escaped, every span closed at the line's end).
    pub lines: Arc<Vec<String>>,
    /// The grammar's name.
    pub syntax: &'static str,
    /// The number of lines highlighted (the rest are plain: the budget ran out or the
    /// grammar failed).
    pub done: usize,
}

/// Why a text was not highlighted.
#[derive(Debug, PartialEq, Eq)]
pub enum Plain {
    /// No grammar for it.
    NoSyntax,
    /// Over a limit (its words say which).
    TooLarge(String),
}

/// `text` (the file `name`'s) as highlighted lines, or why not.
pub fn highlight(name: &str, text: &str) -> Result<Highlighted, Plain> {
    highlight_within(name, text, BUDGET)
}

/// `text` highlighted without the cache's help and without a time budget: what a first
/// view costs (`benches/highlight.rs`); `grammar` skips the quick lexer (syntect's
/// grammar for a language both know, as before the lexer).
#[doc(hidden)]
pub fn highlight_uncached(name: &str, text: &str, grammar: bool) -> Result<Highlighted, Plain> {
    highlight_inner(name, text, Duration::MAX, false, !grammar)
}

fn highlight_within(name: &str, text: &str, budget: Duration) -> Result<Highlighted, Plain> {
    highlight_inner(name, text, budget, true, true)
}

fn highlight_inner(
    name: &str,
    text: &str,
    budget: Duration,
    use_cache: bool,
    quick: bool,
) -> Result<Highlighted, Plain> {
    if text.len() > MAX_BYTES {
        return Err(Plain::TooLarge(format!("over {} KiB", MAX_BYTES / 1024)));
    }
    let line_count = text.lines().count();
    if line_count > MAX_LINES {
        return Err(Plain::TooLarge(format!("over {MAX_LINES} lines")));
    }
    if text.lines().any(|l| l.len() > MAX_LINE) {
        return Err(Plain::TooLarge(format!("a line over {MAX_LINE} bytes")));
    }
    let first = text.lines().next().unwrap_or("");
    if let Some((lang, shown)) = crate::lexer::lang_for(name, first).filter(|_| quick) {
        let lines = crate::lexer::highlight(lang, text);
        return Ok(Highlighted {
            done: lines.len(),
            lines: Arc::new(lines),
            syntax: shown,
        });
    }
    let syntax = syntax_for(name, first).ok_or(Plain::NoSyntax)?;
    let (hasher, cached) = cache();
    let key = (
        hasher.hash_one(text.as_bytes()),
        text.len(),
        syntax.name.as_str(),
    );
    if let Some(lines) = cached
        .lock()
        .ok()
        .filter(|_| use_cache)
        .and_then(|c| c.0.get(&key).cloned())
    {
        return Ok(Highlighted {
            done: lines.len(),
            lines,
            syntax: &syntax.name,
        });
    }
    let set = syntaxes();
    let mut started = Instant::now();
    let mut state = ParseState::new(syntax);
    let mut stack = ScopeStack::new();
    let mut lines = Vec::with_capacity(line_count);
    let mut done = 0;
    let mut rest = text;
    while !rest.is_empty() {
        let end = rest.find('\n').map_or(rest.len(), |i| i + 1);
        let (line, after) = rest.split_at(end);
        rest = after;
        if done == lines.len() && (done == 0 || started.elapsed() < budget) {
            // The grammars expect each line with its end of line.
            let owned;
            let parsed: &str = if line.ends_with('\n') {
                line
            } else {
                owned = format!("{line}\n");
                &owned
            };
            if let Ok(ops) = state.parse_line(parsed, set) {
                lines.push(render_line(line, &ops, &mut stack));
                done += 1;
                if done == 1 {
                    started = Instant::now();
                }
                continue;
            }
        }
        let mut plain = String::with_capacity(line.len());
        escape_into(&mut plain, strip_eol(line));
        lines.push(plain);
    }
    let lines = Arc::new(lines);
    if use_cache && done == lines.len() {
        let bytes: usize = lines.iter().map(|l| l.len() + 24).sum();
        if let Ok(mut c) = cached.lock() {
            if c.1 + bytes > CACHE_BYTES {
                c.0.clear();
                c.1 = 0;
            }
            if bytes <= CACHE_BYTES {
                c.0.insert(key, Arc::clone(&lines));
                c.1 += bytes;
            }
        }
    }
    Ok(Highlighted {
        lines,
        syntax: &syntax.name,
        done,
    })
}

fn strip_eol(line: &str) -> &str {
    let line = line.strip_suffix('\n').unwrap_or(line);
    line.strip_suffix('\r').unwrap_or(line)
}

/// One line as HTML: its text between the parser's scope changes, each run in the span of
/// its class (runs of one class merged), without its end of line.
fn render_line(
    line: &str,
    ops: &[(usize, syntect::parsing::ScopeStackOp)],
    stack: &mut ScopeStack,
) -> String {
    let text = strip_eol(line);
    let mut out = String::with_capacity(text.len() + 32);
    let mut open = "";
    let mut at = 0;
    let emit = |out: &mut String, open: &mut &'static str, class: &'static str, s: &str| {
        if s.is_empty() {
            return;
        }
        if class != *open {
            if !open.is_empty() {
                out.push_str("</span>");
            }
            if !class.is_empty() {
                out.push_str("<span class=\"");
                out.push_str(class);
                out.push_str("\">");
            }
            *open = class;
        }
        escape_into(out, s);
    };
    for (pos, op) in ops {
        let pos = (*pos).min(text.len());
        if pos > at {
            if let Some(s) = text.get(at..pos) {
                emit(&mut out, &mut open, class_of(stack), s);
                at = pos;
            }
        }
        // A stack the grammar cannot apply is left as it was (the colours may be off, the
        // text is not).
        let _ = stack.apply(op);
    }
    if let Some(s) = text.get(at..) {
        emit(&mut out, &mut open, class_of(stack), s);
    }
    if !open.is_empty() {
        out.push_str("</span>");
    }
    out
}

/// `s` escaped for HTML text and attribute values.
pub fn escape_into(out: &mut String, s: &str) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A budget no test reaches: the first use of a grammar compiles its regexes, which
    /// can take longer than [`BUDGET`] on a busy machine.
    const LONG: Duration = Duration::from_secs(60);

    #[test]
    fn rust_gets_classes_and_every_line_closes_its_spans() {
        let text =
            "// a <comment>\nfn main() {\n    let s = \"x & y\";\n    /* two\n lines */ 42\n}\n";
        let h = highlight_within("main.rs", text, LONG).expect("highlighted");
        assert_eq!(h.syntax, "Rust");
        assert_eq!(h.lines.len(), 6);
        assert_eq!(h.done, 6);
        assert_eq!(h.lines[0], "<span class=\"hc\">// a &lt;comment&gt;</span>");
        assert_eq!(
            h.lines[1],
            "<span class=\"ht\">fn</span> <span class=\"hf\">main</span>() {"
        );
        assert!(
            h.lines[2].contains("<span class=\"hs\">&quot;x &amp; y&quot;</span>"),
            "{:?}",
            h.lines[2]
        );
        // A comment over two lines: each line's span is its own.
        assert_eq!(h.lines[3], "    <span class=\"hc\">/* two</span>");
        assert!(
            h.lines[4].starts_with("<span class=\"hc\"> lines */</span>"),
            "{:?}",
            h.lines[4]
        );
        assert!(
            h.lines[4].contains("<span class=\"hn\">42</span>"),
            "{:?}",
            h.lines[4]
        );
        for l in h.lines.iter() {
            assert_eq!(
                l.matches("<span").count(),
                l.matches("</span>").count(),
                "{l}"
            );
        }
    }

    #[test]
    fn hostile_text_stays_text() {
        let text = "<script>alert(1)</script>\n<img src=x onerror=alert(1)>\n";
        let h = highlight_within("x.html", text, LONG).expect("HTML has a grammar");
        let all = h.lines.concat();
        assert!(!all.contains("<script"), "{all}");
        assert!(!all.contains("<img"), "{all}");
        assert!(
            all.starts_with("&lt;<span class=\"hf\">script</span>&gt;"),
            "{all}"
        );
    }

    #[test]
    fn a_shebang_names_the_grammar_and_unknown_files_stay_plain() {
        assert!(syntax_for("run", "#!/bin/sh").is_some());
        assert!(syntax_for("Makefile", "all:").is_some());
        assert_eq!(
            highlight("notes.unknownext", "just words\n"),
            Err(Plain::NoSyntax)
        );
    }

    #[test]
    fn limits_leave_large_or_minified_texts_plain() {
        let long = format!("var x = \"{}\";\n", "a".repeat(MAX_LINE));
        assert!(matches!(highlight("a.js", &long), Err(Plain::TooLarge(_))));
        let many = "x = 1\n".repeat(MAX_LINES + 1);
        assert!(matches!(highlight("a.py", &many), Err(Plain::TooLarge(_))));
        let big = "#".repeat(MAX_BYTES + 1);
        assert!(matches!(highlight("a.py", &big), Err(Plain::TooLarge(_))));
    }

    #[test]
    fn a_text_highlighted_again_comes_from_the_cache() {
        // Haskell and Scala: syntect's grammars (the quick lexer knows neither).
        let text = "cached x = 'once'\n  where y = 1\n";
        let a = highlight_within("c.hs", text, LONG).expect("Haskell");
        let b = highlight_within("c.hs", text, LONG).expect("Haskell");
        assert!(Arc::ptr_eq(&a.lines, &b.lines));
        assert_eq!(b.done, 2);
        // Another grammar for the same text is another entry.
        let c = highlight_within("c.scala", text, LONG).expect("Scala");
        assert!(!Arc::ptr_eq(&a.lines, &c.lines));
    }

    #[test]
    fn the_time_budget_leaves_the_rest_plain() {
        let text = "let a = \"<b>\";\n".repeat(50);
        let h = highlight_within("a.scala", &text, Duration::ZERO).expect("a grammar");
        assert_eq!(h.done, 1, "the first line is always highlighted");
        assert_eq!(h.lines.len(), 50);
        assert_eq!(h.lines[49], "let a = &quot;&lt;b&gt;&quot;;");
        let h = highlight_within("a.scala", &text, Duration::from_secs(60)).expect("a grammar");
        assert_eq!(h.done, 50);
    }
}
