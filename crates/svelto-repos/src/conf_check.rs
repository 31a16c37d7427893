//! What an administrator gets wrong in a configuration file without a syntax error:
//! options and sections nobody reads, values that mean something else than they say
//! (`anon-access = read  # comment` is not `read`: a comment starts only in the first
//! column, so it is part of the value, and svnserve reads the value as `none`), and indented
//! comments (continuations of the value above). The server warns about each at start
//! (`svelto serve`), and a test checks every block of the documentation with these checks.
//!
//! The files are read with the same parser the server uses (`conf::conf_events`, and
//! `authz::Authz::parse` for authz files), so what is reported is what the server sees.

use crate::authz::Authz;
use crate::conf::{conf_events, parse_bool, ConfEvent};
use std::path::Path;

/// One thing found, at a line of the file (1-based).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub line: usize,
    pub what: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.what)
    }
}

/// What values an option takes.
#[derive(Clone, Copy)]
enum Values {
    OneOf(&'static [&'static str]),
    Bool,
    Number,
    /// A file name or a text: anything, but a '#' in it is suspect.
    Text,
}

/// svnserve.conf's options (svnserve 1.14's, and Svelto's own `[http] password-db` and
/// `[ldap]`).
const SVNSERVE_OPTIONS: &[(&str, &str, Values)] = &[
    (
        "general",
        "anon-access",
        Values::OneOf(&["read", "write", "none"]),
    ),
    (
        "general",
        "auth-access",
        Values::OneOf(&["read", "write", "none"]),
    ),
    ("general", "password-db", Values::Text),
    ("general", "authz-db", Values::Text),
    ("general", "groups-db", Values::Text),
    ("general", "realm", Values::Text),
    (
        "general",
        "force-username-case",
        Values::OneOf(&["none", "upper", "lower"]),
    ),
    ("general", "hooks-env", Values::Text),
    ("sasl", "use-sasl", Values::Bool),
    ("sasl", "min-encryption", Values::Number),
    ("sasl", "max-encryption", Values::Number),
    ("http", "password-db", Values::Text),
    ("ldap", "url", Values::Text),
    ("ldap", "starttls", Values::Bool),
    ("ldap", "bind-dn", Values::Text),
    ("ldap", "bind-password-file", Values::Text),
    ("ldap", "ca-file", Values::Text),
    ("ldap", "group-base", Values::Text),
    ("ldap", "group-filter", Values::Text),
    ("ldap", "group-attribute", Values::Text),
    ("ldap", "group-attribute-is-dn", Values::Bool),
    ("ldap", "group-name-attribute", Values::Text),
    ("ldap", "timeout", Values::Number),
    ("ldap", "cache-ttl", Values::Number),
];

/// Where a value holds what was probably meant as a comment: a `#` after whitespace (or at
/// its start, from an indented comment line joined to it).
fn comment_in(value: &str) -> Option<usize> {
    let b = value.as_bytes();
    (0..b.len()).find(|&i| b[i] == b'#' && (i == 0 || b[i - 1].is_ascii_whitespace()))
}

fn comment_problem(line: usize, section: &str, option: &str, value: &str) -> Option<Problem> {
    let at = comment_in(value)?;
    Some(Problem {
        line,
        what: format!(
            "[{section}] {option} = '{value}': '{}' is part of the value, not a comment (in \
             Subversion's configuration files a comment starts only in the first column, and \
             an indented line continues the value above it); put the comment on a line of its \
             own starting with '#'",
            &value[at..]
        ),
    })
}

/// Checks an `svnserve.conf`: unknown sections and options, values outside what an option
/// takes, comments that are part of a value. A syntax error is the one problem reported.
pub fn check_svnserve_conf(data: &[u8]) -> Vec<Problem> {
    let events = match conf_events(data) {
        Ok(e) => e,
        Err(e) => {
            return vec![Problem {
                line: e.line,
                what: format!("syntax error: {}", e.reason),
            }]
        }
    };
    let mut out = Vec::new();
    let mut section = String::new();
    for ev in events {
        match ev {
            ConfEvent::Section(name, line) => {
                section = name.to_ascii_lowercase();
                let known =
                    section == "default" || SVNSERVE_OPTIONS.iter().any(|(s, _, _)| *s == section);
                if !known {
                    out.push(Problem {
                        line,
                        what: format!(
                            "unknown section [{name}] (svnserve.conf has [general], [sasl], \
                             and for Svelto [http]): its options are not read"
                        ),
                    });
                }
            }
            ConfEvent::Option(name, value, line) => {
                let option = name.to_ascii_lowercase();
                let spec = SVNSERVE_OPTIONS
                    .iter()
                    .find(|(s, o, _)| (*s == section || section == "default") && *o == option);
                let Some(&(_, _, values)) = spec else {
                    if SVNSERVE_OPTIONS.iter().any(|(s, _, _)| *s == section) {
                        let names: Vec<&str> = SVNSERVE_OPTIONS
                            .iter()
                            .filter(|(s, _, _)| *s == section)
                            .map(|(_, o, _)| *o)
                            .collect();
                        out.push(Problem {
                            line,
                            what: format!(
                                "unknown option '{name}' in [{section}] (known: {}): it is not read",
                                names.join(", ")
                            ),
                        });
                    }
                    continue;
                };
                if let Some(p) = comment_problem(line, &section, &option, &value) {
                    out.push(p);
                    continue;
                }
                let bad = match values {
                    Values::OneOf(allowed) if !allowed.contains(&value.as_str()) => Some(format!(
                        "is not one of {} (exactly, in lower case): svnserve and Svelto read it as {}",
                        allowed.join(", "),
                        if option.ends_with("-access") { "none (no access)" } else { "none" }
                    )),
                    Values::Bool if parse_bool(&value).is_none() => {
                        Some("is not a boolean (true/false, yes/no, on/off, 1/0)".into())
                    }
                    Values::Number if value.parse::<u32>().is_err() => {
                        Some("is not a number".into())
                    }
                    _ => None,
                };
                if let Some(why) = bad {
                    out.push(Problem {
                        line,
                        what: format!("[{section}] {option} = '{value}' {why}"),
                    });
                }
            }
        }
    }
    out
}

/// Checks a password file (`password-db`): `[users]` is the only section read, and a
/// comment after a password is part of the password.
pub fn check_passwd(data: &[u8]) -> Vec<Problem> {
    let events = match conf_events(data) {
        Ok(e) => e,
        Err(e) => {
            return vec![Problem {
                line: e.line,
                what: format!("syntax error: {}", e.reason),
            }]
        }
    };
    let mut out = Vec::new();
    for ev in events {
        match ev {
            ConfEvent::Section(name, line) => {
                let section = name.to_ascii_lowercase();
                if section != "users" && section != "default" {
                    out.push(Problem {
                        line,
                        what: format!(
                            "unknown section [{name}] in a password file: only [users] is read"
                        ),
                    });
                }
            }
            ConfEvent::Option(name, value, line) => {
                if let Some(at) = comment_in(&value) {
                    out.push(Problem {
                        line,
                        what: format!(
                            "the password of '{name}' contains '{}': a comment starts only in \
                             the first column, so it is part of the password",
                            &value[at..]
                        ),
                    });
                }
            }
        }
    }
    out
}

/// Checks an authz file as the server parses it (Subversion's authz rules: every error the
/// server would refuse the file for), and comments that are part of a rule's value.
pub fn check_authz(data: &[u8], file: &Path) -> Vec<Problem> {
    if let Err(e) = Authz::parse(data, file, None) {
        return vec![Problem {
            line: 0,
            what: e.to_string(),
        }];
    }
    let mut out = Vec::new();
    if let Ok(events) = conf_events(data) {
        for ev in events {
            if let ConfEvent::Option(name, value, line) = ev {
                if let Some(at) = comment_in(&value) {
                    out.push(Problem {
                        line,
                        what: format!(
                            "'{name} = {value}': '{}' is part of the value, not a comment",
                            &value[at..]
                        ),
                    });
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_after_values_and_indented_comments_are_found() {
        let conf = b"[general]\nanon-access = read   # anyone\n    # an indented comment\n\
                     auth-access = write\nrealm = Example  # AuthName\n[http]\n\
                     password-db = /etc/p   # here\n";
        let found = check_svnserve_conf(conf);
        let lines: Vec<usize> = found.iter().map(|p| p.line).collect();
        assert_eq!(lines, [2, 5, 7], "{found:?}");
        assert!(found[0]
            .what
            .contains("'# anyone # an indented comment' is part of the value"));
    }

    #[test]
    fn unknown_sections_options_and_values_are_named() {
        let conf = b"[general]\nanon-access = Read\nauth-acess = write\nforce-username-case = \
                     upper\n[sasl]\nuse-sasl = maybe\nmin-encryption = 0\n[sals]\nx = 1\n";
        let found = check_svnserve_conf(conf);
        let text: Vec<String> = found.iter().map(ToString::to_string).collect();
        assert_eq!(found.len(), 4, "{text:#?}");
        assert!(text[0].starts_with("line 2: [general] anon-access = 'Read' is not one of"));
        assert!(text[1].starts_with("line 3: unknown option 'auth-acess' in [general]"));
        assert!(text[2].starts_with("line 6: [sasl] use-sasl = 'maybe' is not a boolean"));
        assert!(text[3].starts_with("line 8: unknown section [sals]"));
        assert!(
            check_svnserve_conf(b"[general]\nanon-access = none\n[DEFAULT]\nrealm = x\n")
                .is_empty()
        );
    }

    #[test]
    fn passwd_and_authz_problems_are_named() {
        let p = check_passwd(b"[users]\nharry = secret  # harry's\n[user]\nsally = s\n");
        assert_eq!(
            p.iter().map(|p| p.line).collect::<Vec<_>>(),
            [2, 3],
            "{p:?}"
        );
        let a = check_authz(b"[/]\n* = r   # everyone\n", Path::new("authz"));
        assert_eq!(a.len(), 1, "{a:?}");
        let a = check_authz(b"[/]\n@nobody = r\n", Path::new("authz"));
        assert_eq!(a.len(), 1, "{a:?}");
        assert!(check_authz(b"[groups]\nd = harry\n[/]\n@d = rw\n", Path::new("authz")).is_empty());
    }
}

/// Every svnserve.conf, passwd and authz block of the documentation (docs/*.md and
/// docs/formats/*.md: fenced blocks, and here-documents in shell blocks that write such a
/// file; docs/examples/: whole files) says what its text intends: the server's own parser
/// finds nothing to warn about in it.
#[cfg(test)]
mod docs {
    use super::*;
    use std::path::PathBuf;

    #[derive(Debug, Clone, Copy, PartialEq)]
    enum Kind {
        Svnserve,
        Passwd,
        Authz,
    }

    fn kind_of_name(name: &str) -> Option<Kind> {
        let base = name
            .rsplit('/')
            .next()
            .unwrap_or(name)
            .trim_matches(['"', '\'']);
        if base.ends_with("svnserve.conf") {
            Some(Kind::Svnserve)
        } else if base == "passwd" || (base.ends_with(".passwd") && !base.contains("dav_svn")) {
            Some(Kind::Passwd)
        } else if base == "authz" || base.ends_with(".authz") {
            Some(Kind::Authz)
        } else {
            None
        }
    }

    /// What a block holds, from its section headers.
    fn kind_of_text(text: &str) -> Option<Kind> {
        let headers: Vec<String> = text
            .lines()
            .filter(|l| l.starts_with('['))
            .filter_map(|l| Some(l[1..l.find(']')?].to_ascii_lowercase()))
            .collect();
        if headers
            .iter()
            .any(|h| ["general", "sasl", "http", "ldap"].contains(&h.as_str()))
        {
            Some(Kind::Svnserve)
        } else if headers.iter().any(|h| h == "users") {
            Some(Kind::Passwd)
        } else if headers
            .iter()
            .any(|h| h == "groups" || h == "aliases" || h.contains('/'))
        {
            Some(Kind::Authz)
        } else {
            None
        }
    }

    /// (where, kind, text) of every configuration block of one Markdown file.
    fn blocks(file: &str, md: &str) -> Vec<(String, Kind, String)> {
        let lines: Vec<&str> = md.lines().collect();
        let mut out = Vec::new();
        let mut i = 0;
        while i < lines.len() {
            let Some(info) = lines[i].trim_start().strip_prefix("```") else {
                i += 1;
                continue;
            };
            let start = i + 1;
            let end = (start..lines.len())
                .find(|&j| lines[j].trim_start().starts_with("```"))
                .unwrap_or(lines.len());
            let body = &lines[start..end];
            let text = body.join("\n") + "\n";
            if matches!(info.trim(), "" | "ini" | "conf" | "text") {
                if let Some(k) = kind_of_text(&text) {
                    out.push((format!("{file}:{}", start + 1), k, text.clone()));
                }
            }
            // Here-documents: `... > FILE <<'EOF'` up to the line `EOF`.
            let mut j = 0;
            while j < body.len() {
                let l = body[j];
                if let (Some(gt), Some(lt)) = (l.find('>'), l.find("<<")) {
                    let target = l[gt + 1..lt].trim();
                    let delim = l[lt + 2..].trim().trim_start_matches('-');
                    let delim = delim.trim_matches(['\'', '"']);
                    if let (Some(k), false) = (kind_of_name(target), delim.is_empty()) {
                        let from = j + 1;
                        let to = (from..body.len()).find(|&x| body[x].trim() == delim);
                        if let Some(to) = to {
                            let text = body[from..to].join("\n") + "\n";
                            out.push((format!("{file}:{}", start + from + 1), k, text));
                            j = to;
                        }
                    }
                }
                j += 1;
            }
            i = end + 1;
        }
        out
    }

    fn problems(kind: Kind, text: &str, name: &str) -> Vec<Problem> {
        match kind {
            Kind::Svnserve => check_svnserve_conf(text.as_bytes()),
            Kind::Passwd => check_passwd(text.as_bytes()),
            Kind::Authz => check_authz(text.as_bytes(), Path::new(name)),
        }
    }

    #[test]
    fn every_configuration_block_of_the_docs_says_what_it_means() {
        let docs = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs");
        let mut found = Vec::new();
        let mut markdown: Vec<PathBuf> = Vec::new();
        for dir in [docs.clone(), docs.join("formats")] {
            for e in std::fs::read_dir(&dir).expect("docs/") {
                let p = e.expect("entry").path();
                if p.extension().is_some_and(|x| x == "md") {
                    markdown.push(p);
                }
            }
        }
        markdown.sort();
        for p in &markdown {
            let md = std::fs::read_to_string(p).expect("markdown");
            let name = p.strip_prefix(&docs).unwrap_or(p).display().to_string();
            found.extend(blocks(&format!("docs/{name}"), &md));
        }
        for (name, kind) in [
            ("svnserve.conf", Kind::Svnserve),
            ("passwd", Kind::Passwd),
            ("authz", Kind::Authz),
        ] {
            let text = std::fs::read_to_string(docs.join("examples").join(name)).expect("example");
            found.push((format!("docs/examples/{name}:1"), kind, text));
        }
        let kinds = |k: Kind| found.iter().filter(|b| b.1 == k).count();
        // The guide's own blocks are among them (the extraction works).
        assert!(kinds(Kind::Svnserve) >= 2 && kinds(Kind::Passwd) >= 1 && kinds(Kind::Authz) >= 1);
        let mut bad = Vec::new();
        for (at, kind, text) in &found {
            for p in problems(*kind, text, at) {
                bad.push(format!(
                    "{at} (+{} lines): {}",
                    p.line.saturating_sub(1),
                    p.what
                ));
            }
        }
        assert!(bad.is_empty(), "{}", bad.join("\n"));
    }

    #[test]
    fn the_extraction_finds_fenced_blocks_and_here_documents() {
        let md = "x\n```ini\n[general]\nanon-access = read # no\n```\n\n```sh\n\
                  cat > \"$NEW\"/conf/passwd <<'EOF'\n[users]\nh = s\nEOF\n```\n";
        let b = blocks("t.md", md);
        assert_eq!(b.len(), 2, "{b:?}");
        assert_eq!((b[0].0.as_str(), b[0].1), ("t.md:3", Kind::Svnserve));
        assert_eq!(problems(b[0].1, &b[0].2, "t").len(), 1);
        assert_eq!((b[1].0.as_str(), b[1].1), ("t.md:9", Kind::Passwd));
        assert_eq!(b[1].2, "[users]\nh = s\n");
    }
}
