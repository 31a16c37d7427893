//! Path-based authorization: the authz file format of Subversion 1.10+ (`authz-db`,
//! optionally with a separate `groups-db`) and the access decisions svnserve makes with it.
//!
//! Pure: callers hand in the file texts (read from disk or from the repository) and get a
//! parsed [`Authz`], which answers "may USER have ACCESS to PATH in REPOSITORY". The format
//! and the precedence rules are documented in `docs/formats/authz.md`; in short:
//!
//! * Rules are sections `[/path]`, `[repo:/path]`, `[:glob:/pattern]`,
//!   `[:glob:repo:/pattern]`; each entry grants `r`, `rw` or nothing to a user, `@group`,
//!   `&alias`, `$anonymous`, `$authenticated` or `*`, possibly inverted with `~`.
//! * A rule applies to a user when at least one of its entries matches them; its access is
//!   the union of the matching entries'. Rules that do not mention the user are ignored.
//! * For a path, the deepest level (root, first segment, ...) with an applying rule decides;
//!   among several applying rules at one level (globs) the one defined last in the file wins;
//!   for the same path, a repository-specific rule that applies beats a global one.
//! * The root has an implicit rule "nobody has access" that loses to any explicit rule.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use crate::conf::{conf_events, is_space, text, trim, ConfEvent};

/// Read access (listing, contents, properties).
pub const READ: u8 = 1;
/// Write access (always together with read: write-only entries are refused).
pub const WRITE: u8 = 2;

/// A malformed authz or groups file. `reason` is Subversion's wording (what `svnauthz
/// validate` prints); `svn_line` is set when Subversion names a line (syntax errors, counted
/// the way its parser counts: without section header lines); `line` is the physical line
/// where Svelto found the problem, for the log.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{}: {reason}", file.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct AuthzError {
    pub file: PathBuf,
    pub line: Option<usize>,
    pub svn_line: Option<usize>,
    pub reason: String,
}

impl AuthzError {
    /// The message svnauthz prints after "Error while parsing authz file: 'FILE':".
    pub fn svn_message(&self) -> String {
        match self.svn_line {
            Some(l) => format!("line {l}: {}", self.reason),
            None => self.reason.clone(),
        }
    }
}

/// One path segment of a rule.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Seg {
    Literal(String),
    /// `*`: any one segment.
    Any,
    /// `**`: any number of segments, none included.
    AnyRec,
    /// Any other glob (fnmatch syntax, within one segment).
    Glob(String),
}

#[derive(Debug, Clone)]
struct Ace {
    /// User name or `@group` (aliases are resolved).
    name: String,
    inverted: bool,
    access: u8,
}

#[derive(Debug, Clone)]
struct Acl {
    /// Definition order (1 for the first rule section; 0 is the implicit root rule).
    seq: usize,
    /// The repository, or "" for a rule of every repository.
    repos: String,
    path: Vec<Seg>,
    anon: Option<u8>,
    authn: Option<u8>,
    aces: Vec<Ace>,
}

/// A parsed authz file (with its groups file, if any).
#[derive(Debug, Clone)]
pub struct Authz {
    acls: Vec<Acl>,
    /// `@group` -> its members (user names), fully expanded.
    groups: HashMap<String, HashSet<String>>,
    /// The entries of empty groups, dropped from their rules (index into `acls`).
    dormant: Vec<(usize, Ace)>,
}

/// Splits `data` into sections and options with Subversion's config syntax
/// (`conf::conf_events`); `file` names the source in errors.
fn events(data: &[u8], file: &Path) -> Result<Vec<ConfEvent>, AuthzError> {
    conf_events(data).map_err(|e| AuthzError {
        file: file.to_path_buf(),
        line: Some(e.line),
        svn_line: Some(e.svn_line),
        reason: e.reason.to_string(),
    })
}

/// Whether a glob segment has wildcards (`*`, `?`, or a `[...]` class), as apr_fnmatch_test.
fn has_wildcards(p: &[u8]) -> bool {
    let mut i = 0;
    let mut open = false;
    while i < p.len() {
        match p[i] {
            b'\\' => i += 1,
            b'*' | b'?' => return true,
            b'[' => open = true,
            b']' if open => return true,
            _ => {}
        }
        i += 1;
    }
    false
}

/// Drops escaping backslashes (a trailing backslash stays).
fn unescape(p: &str) -> String {
    let mut out = String::with_capacity(p.len());
    let mut chars = p.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some(n) => out.push(n),
                None => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// fnmatch without flags against one segment: `*`, `?`, `[...]` (with `!`/`^`), `\x`.
pub fn fnmatch(pattern: &[u8], name: &[u8]) -> bool {
    fn class(p: &[u8], c: u8) -> Option<(bool, usize)> {
        let mut i = 0;
        let negate = matches!(p.first(), Some(b'!') | Some(b'^'));
        if negate {
            i += 1;
        }
        let mut matched = false;
        let mut first = true;
        while i < p.len() {
            if p[i] == b']' && !first {
                return Some((matched != negate, i + 1));
            }
            first = false;
            let (lo, used) = if p[i] == b'\\' && i + 1 < p.len() {
                (p[i + 1], 2)
            } else {
                (p[i], 1)
            };
            if i + used + 1 < p.len() && p[i + used] == b'-' && p[i + used + 1] != b']' {
                let hi = p[i + used + 1];
                if lo <= c && c <= hi {
                    matched = true;
                }
                i += used + 2;
            } else {
                if lo == c {
                    matched = true;
                }
                i += used;
            }
        }
        None
    }
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < name.len() {
        let step = match pattern.get(pi) {
            Some(b'*') => {
                star = Some((pi, ni));
                pi += 1;
                continue;
            }
            Some(b'?') => Some(1),
            Some(b'[') => match class(&pattern[pi + 1..], name[ni]) {
                Some((true, used)) => Some(used + 1),
                Some((false, _)) => None,
                None => (name[ni] == b'[').then_some(1),
            },
            Some(b'\\') if pi + 1 < pattern.len() => (pattern[pi + 1] == name[ni]).then_some(2),
            Some(&c) => (c == name[ni]).then_some(1),
            None => None,
        };
        match step {
            Some(n) => {
                pi += n;
                ni += 1;
            }
            None => match star {
                Some((sp, sn)) => {
                    pi = sp + 1;
                    ni = sn + 1;
                    star = Some((sp, sn + 1));
                }
                None => return false,
            },
        }
    }
    pattern[pi..].iter().all(|b| *b == b'*')
}

/// Whether rule segments `rule` match exactly the path segments `path`.
fn rule_matches(rule: &[Seg], path: &[&str]) -> bool {
    match rule.first() {
        None => path.is_empty(),
        Some(Seg::AnyRec) => (0..=path.len()).any(|k| rule_matches(&rule[1..], &path[k..])),
        Some(seg) => {
            let Some(first) = path.first() else {
                return false;
            };
            let ok = match seg {
                Seg::Literal(l) => l == first,
                // Also the empty segment: see `access`.
                Seg::Any => true,
                Seg::Glob(g) => fnmatch(g.as_bytes(), first.as_bytes()),
                Seg::AnyRec => false,
            };
            ok && rule_matches(&rule[1..], &path[1..])
        }
    }
}

/// Whether `rule` can match a path strictly below `path`.
fn could_match_below(rule: &[Seg], path: &[&str]) -> bool {
    let Some(first) = path.first() else {
        return !rule.is_empty();
    };
    match rule.first() {
        None => false,
        Some(Seg::AnyRec) => {
            could_match_below(&rule[1..], path) || could_match_below(rule, &path[1..])
        }
        Some(seg) => {
            rule_matches(std::slice::from_ref(seg), &[first])
                && could_match_below(&rule[1..], &path[1..])
        }
    }
}

struct Parser {
    file: PathBuf,
    sections: HashSet<String>,
    /// `@name` -> (members as written, line).
    groups: BTreeMap<String, (Vec<String>, usize)>,
    /// `&name` -> user.
    aliases: HashMap<String, String>,
    acls: Vec<Acl>,
    /// Per rule: (alias ACEs `(&name, inverted, access, line)`) resolved at the end.
    alias_aces: Vec<Vec<(String, bool, u8, usize)>>,
    /// Rule identity -> section name, for "describes the same rule".
    rules: HashMap<(String, Vec<Seg>), String>,
}

enum In {
    None,
    Groups,
    Aliases,
    Rule(usize, String),
}

impl Parser {
    fn err(&self, line: usize, reason: String) -> AuthzError {
        AuthzError {
            file: self.file.clone(),
            line: Some(line),
            svn_line: None,
            reason,
        }
    }

    fn open_section(&mut self, name: &str, line: usize) -> Result<In, AuthzError> {
        if !self.sections.insert(name.to_string()) {
            return Err(self.err(
                line,
                format!("Section appears more than once in the authz file: [{name}]"),
            ));
        }
        let mut rule = name;
        let mut glob = false;
        if let Some(r) = rule.strip_prefix(':') {
            let Some((token, after)) = r.split_once(':') else {
                return Err(self.err(
                    line,
                    format!("Empty repository name in authz rule [{name}]"),
                ));
            };
            if token != "glob" {
                return Err(self.err(
                    line,
                    format!("Invalid type token '{token}' in authz rule [{name}]"),
                ));
            }
            glob = true;
            rule = after;
        }
        let mut repos = String::new();
        if !rule.starts_with('/') {
            if let Some((r, after)) = rule.split_once(':') {
                if r.is_empty() {
                    return Err(self.err(
                        line,
                        format!("Empty repository name in authz rule [{name}]"),
                    ));
                }
                repos = r.to_string();
                rule = after;
            }
        }
        if rule.starts_with('/') {
            let path = self.rule_path(rule, glob, name, line)?;
            let key = (repos.clone(), path.clone());
            if let Some(prev) = self.rules.get(&key) {
                return Err(self.err(
                    line,
                    format!("Section [{name}] describes the same rule as section [{prev}]"),
                ));
            }
            self.rules.insert(key, name.to_string());
            self.acls.push(Acl {
                seq: self.acls.len() + 1,
                repos,
                path,
                anon: None,
                authn: None,
                aces: Vec::new(),
            });
            self.alias_aces.push(Vec::new());
            return Ok(In::Rule(self.acls.len() - 1, name.to_string()));
        }
        match name {
            "aliases" => Ok(In::Aliases),
            "groups" => Ok(In::Groups),
            _ => Err(self.err(
                line,
                format!("Section is not valid in the authz file: [{name}]"),
            )),
        }
    }

    fn rule_path(
        &self,
        path: &str,
        glob: bool,
        section: &str,
        line: usize,
    ) -> Result<Vec<Seg>, AuthzError> {
        let mut segs: Vec<Seg> = Vec::new();
        if path == "/" {
            return Ok(segs);
        }
        for (i, s) in path[1..].split('/').enumerate() {
            let non_canonical = |why: &str| {
                self.err(
                    line,
                    format!("Non-canonical path '{path}' in authz rule [{section}]: {why}"),
                )
            };
            if s.is_empty() {
                if i == 0 {
                    // "//...": Subversion reads this as the root.
                    return Ok(Vec::new());
                }
                return Err(non_canonical("Found empty name in authz rule path"));
            }
            if s == "." {
                return Err(non_canonical("Found '.' in authz rule path"));
            }
            if s == ".." {
                return Err(non_canonical("Found '..' in authz rule path"));
            }
            if !glob || !has_wildcards(s.as_bytes()) {
                segs.push(Seg::Literal(if glob { unescape(s) } else { s.to_string() }));
                continue;
            }
            match s {
                "*" => {
                    // Normalize "**/*" to "*/**".
                    if segs.last() == Some(&Seg::AnyRec) {
                        segs.pop();
                        segs.push(Seg::Any);
                        segs.push(Seg::AnyRec);
                    } else {
                        segs.push(Seg::Any);
                    }
                }
                "**" => {
                    if segs.last() != Some(&Seg::AnyRec) {
                        segs.push(Seg::AnyRec);
                    }
                }
                _ => segs.push(Seg::Glob(normalize_glob(s))),
            }
        }
        Ok(segs)
    }

    fn add_value(
        &mut self,
        state: &In,
        name: &str,
        value: &str,
        line: usize,
    ) -> Result<(), AuthzError> {
        match state {
            In::None => Ok(()),
            In::Groups => self.add_group(name, value, line, false),
            In::Aliases => {
                if let Some(c) = name.chars().next().filter(|c| "@$&*~".contains(*c)) {
                    return Err(self.err(
                        line,
                        format!("Alias name '{name}' may not begin with '{c}'"),
                    ));
                }
                let alias = format!("&{name}");
                if self.aliases.contains_key(&alias) {
                    return Err(self.err(
                        line,
                        format!("Can't override definition of alias '{alias}'"),
                    ));
                }
                self.aliases.insert(alias, value.to_string());
                Ok(())
            }
            In::Rule(idx, section) => self.add_access(*idx, section, name, value, line),
        }
    }

    fn add_group(
        &mut self,
        name: &str,
        value: &str,
        line: usize,
        global: bool,
    ) -> Result<(), AuthzError> {
        if let Some(c) = name.chars().next().filter(|c| "@$&*~".contains(*c)) {
            return Err(self.err(
                line,
                if global {
                    format!("Global group name '{name}' may not begin with '{c}'")
                } else {
                    format!("Group name '{name}' may not begin with '{c}'")
                },
            ));
        }
        let group = format!("@{name}");
        if self.groups.contains_key(&group) {
            return Err(self.err(
                line,
                if global {
                    format!("Can't override definition of global group '{group}'")
                } else {
                    format!("Can't override definition of group '{group}'")
                },
            ));
        }
        let members = value
            .split(',')
            .map(|m| text(trim(m.as_bytes())))
            .filter(|m| !m.is_empty())
            .collect();
        self.groups.insert(group, (members, line));
        Ok(())
    }

    fn add_access(
        &mut self,
        idx: usize,
        section: &str,
        option: &str,
        value: &str,
        line: usize,
    ) -> Result<(), AuthzError> {
        let inverted = option.starts_with('~');
        let name = if inverted { &option[1..] } else { option };
        let (mut anonymous, mut authenticated) = (false, false);
        match name.as_bytes().first() {
            Some(b'~') => {
                return Err(self.err(
                    line,
                    format!(
                        "Access entry '{option}' has more than one inversion; \
                         double negatives are not permitted"
                    ),
                ))
            }
            Some(b'*') => {
                if name.len() != 1 {
                    return Err(self.err(
                        line,
                        format!("Access entry '{option}' is not valid; it must be a single '*'"),
                    ));
                }
                if inverted {
                    return Err(self.err(line, "Access entry '~*' will never match".into()));
                }
                anonymous = true;
                authenticated = true;
            }
            Some(b'$') => match (name, inverted) {
                ("$anonymous", false) | ("$authenticated", true) => anonymous = true,
                ("$authenticated", false) | ("$anonymous", true) => authenticated = true,
                _ => {
                    return Err(self.err(
                        line,
                        format!(
                            "Access entry token '{option}' is not valid; \
                             should be '$anonymous' or '$authenticated'"
                        ),
                    ))
                }
            },
            _ => {}
        }
        let mut access = 0u8;
        for c in value.chars() {
            match c {
                'r' => access |= READ,
                'w' => access |= WRITE,
                c if c.is_ascii() && is_space(c as u8) => {}
                c => {
                    return Err(self.err(
                        line,
                        format!(
                            "The access mode '{c}' in access entry '{option}' \
                             of rule [{section}] is not valid"
                        ),
                    ))
                }
            }
        }
        if access & WRITE != 0 && access & READ == 0 {
            return Err(self.err(
                line,
                format!("Write-only access entry '{option}' of rule [{section}] is not valid"),
            ));
        }
        let acl = &mut self.acls[idx];
        if anonymous || authenticated {
            if anonymous {
                *acl.anon.get_or_insert(0) |= access;
            }
            if authenticated {
                *acl.authn.get_or_insert(0) |= access;
            }
        } else if name.starts_with('&') {
            self.alias_aces[idx].push((name.to_string(), inverted, access, line));
        } else {
            merge_ace(&mut acl.aces, name, inverted, access);
        }
        Ok(())
    }

    /// Expands groups and aliases and checks the references.
    fn finish(mut self) -> Result<Authz, AuthzError> {
        let mut expanded: HashMap<String, HashSet<String>> = HashMap::new();
        let names: Vec<String> = self.groups.keys().cloned().collect();
        for g in &names {
            let mut members = HashSet::new();
            let mut stack = vec![g.clone()];
            self.expand(g, &mut stack, &mut members)?;
            expanded.insert(g.clone(), members);
        }
        for (idx, aliased) in std::mem::take(&mut self.alias_aces).into_iter().enumerate() {
            for (alias, inverted, access, line) in aliased {
                let Some(user) = self.aliases.get(&alias).cloned() else {
                    return Err(self.err(line, format!("Alias '{alias}' was never defined")));
                };
                merge_ace(&mut self.acls[idx].aces, &user, inverted, access);
            }
        }
        for acl in &mut self.acls {
            for ace in &acl.aces {
                if ace.name.starts_with('@') && !expanded.contains_key(&ace.name) {
                    return Err(AuthzError {
                        file: self.file.clone(),
                        line: None,
                        svn_line: None,
                        reason: format!("Access entry refers to undefined group '{}'", ace.name),
                    });
                }
            }
        }
        // An entry for an empty group has no effect (Subversion warns and drops it); kept
        // aside for members a directory adds (`with_memberships`).
        let mut dormant = Vec::new();
        for (i, acl) in self.acls.iter_mut().enumerate() {
            let (keep, drop): (Vec<Ace>, Vec<Ace>) =
                std::mem::take(&mut acl.aces).into_iter().partition(|a| {
                    !a.name.starts_with('@') || expanded.get(&a.name).is_some_and(|m| !m.is_empty())
                });
            acl.aces = keep;
            dormant.extend(drop.into_iter().map(|a| (i, a)));
        }
        // The implicit root rule: nobody has access. A global [/] takes its place and then
        // applies to everybody.
        let mut acls = self.acls;
        if let Some(root) = acls
            .iter_mut()
            .find(|a| a.repos.is_empty() && a.path.is_empty())
        {
            root.anon.get_or_insert(0);
            root.authn.get_or_insert(0);
        } else {
            acls.push(Acl {
                seq: 0,
                repos: String::new(),
                path: Vec::new(),
                anon: Some(0),
                authn: Some(0),
                aces: Vec::new(),
            });
        }
        Ok(Authz {
            acls,
            groups: expanded,
            dormant,
        })
    }

    fn expand(
        &self,
        group: &str,
        stack: &mut Vec<String>,
        out: &mut HashSet<String>,
    ) -> Result<(), AuthzError> {
        let Some((members, line)) = self.groups.get(group) else {
            return Ok(());
        };
        for m in members {
            if m.starts_with('&') {
                let Some(user) = self.aliases.get(m) else {
                    return Err(self.err(*line, format!("Alias '{m}' was never defined")));
                };
                out.insert(user.clone());
            } else if m.starts_with('@') {
                if stack.contains(m) {
                    return Err(self.err(
                        *line,
                        format!("Recursive definition of group '{}'", stack[0]),
                    ));
                }
                if !self.groups.contains_key(m) {
                    return Err(self.err(*line, format!("Undefined group '{m}'")));
                }
                stack.push(m.clone());
                self.expand(m, stack, out)?;
                stack.pop();
            } else {
                out.insert(m.clone());
            }
        }
        Ok(())
    }
}

fn merge_ace(aces: &mut Vec<Ace>, name: &str, inverted: bool, access: u8) {
    match aces
        .iter_mut()
        .find(|a| a.name == name && a.inverted == inverted)
    {
        Some(a) => a.access |= access,
        None => aces.push(Ace {
            name: name.to_string(),
            inverted,
            access,
        }),
    }
}

/// A glob segment as Subversion keeps it: no-op escapes (of characters that are not
/// wildcards) are dropped.
fn normalize_glob(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some(n) if "*?[]\\".contains(n) => {
                    out.push('\\');
                    out.push(n);
                }
                Some(n) => out.push(n),
                None => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The path segments of `path` ("/a//b/" is a, b).
fn segments(path: &str) -> Vec<&str> {
    path.split('/').filter(|s| !s.is_empty()).collect()
}

impl Authz {
    /// Parses an authz file and, when given, a global groups file (then the authz file may
    /// not have a `[groups]` section). `file` and `groups_file` name them in errors.
    pub fn parse(
        data: &[u8],
        file: &Path,
        groups: Option<(&[u8], &Path)>,
    ) -> Result<Authz, AuthzError> {
        let mut p = Parser {
            file: file.to_path_buf(),
            sections: HashSet::new(),
            groups: BTreeMap::new(),
            aliases: HashMap::new(),
            acls: Vec::new(),
            alias_aces: Vec::new(),
            rules: HashMap::new(),
        };
        let mut state = In::None;
        for ev in events(data, file)? {
            match ev {
                ConfEvent::Section(name, line) => state = p.open_section(&name, line)?,
                ConfEvent::Option(name, value, line) => p.add_value(&state, &name, &value, line)?,
            }
        }
        if let Some((gdata, gfile)) = groups {
            if !p.groups.is_empty() {
                return Err(AuthzError {
                    file: file.to_path_buf(),
                    line: None,
                    svn_line: None,
                    reason:
                        "Authz file cannot contain any groups when global groups are being used."
                            .into(),
                });
            }
            p.file = gfile.to_path_buf();
            let mut seen = HashSet::new();
            let mut in_groups = false;
            for ev in events(gdata, gfile)? {
                match ev {
                    ConfEvent::Section(name, line) => {
                        if !seen.insert(name.clone()) {
                            return Err(p.err(
                                line,
                                format!(
                                    "Section appears more than once in the global groups file: [{name}]"
                                ),
                            ));
                        }
                        if name != "groups" {
                            return Err(p.err(
                                line,
                                format!("Section is not valid in the global group file: [{name}]"),
                            ));
                        }
                        in_groups = true;
                    }
                    ConfEvent::Option(name, value, line) if in_groups => {
                        p.add_group(&name, &value, line, true)?
                    }
                    _ => {}
                }
            }
        }
        p.finish()
    }

    /// The rule's access for `user` (None: anonymous), or None when it does not apply.
    fn acl_access(&self, acl: &Acl, user: Option<&str>) -> Option<u8> {
        let user = match user {
            None | Some("$anonymous") => return acl.anon,
            Some(u) => u,
        };
        let mut has = acl.authn.is_some();
        let mut access = acl.authn.unwrap_or(0);
        for ace in &acl.aces {
            let matched = if ace.name.starts_with('@') {
                self.groups.get(&ace.name).is_some_and(|m| m.contains(user))
            } else {
                ace.name == user
            };
            if matched != ace.inverted {
                access |= ace.access;
                has = true;
            }
        }
        has.then_some(access)
    }

    /// The rules that count for `user` in `repos` (None: only global rules), as
    /// (sequence number, path, access): for a path with both a global and a
    /// repository-specific rule, the repository's wins when it applies to the user.
    pub fn rules_for(&self, repos: Option<&str>, user: Option<&str>) -> UserRules<'_> {
        let repos = repos.unwrap_or("");
        let mut by_path: Vec<(&Acl, u8)> = Vec::new();
        let mut max = 0u8;
        for acl in &self.acls {
            if !(acl.repos.is_empty() || acl.repos == repos) {
                continue;
            }
            let Some(access) = self.acl_access(acl, user) else {
                continue;
            };
            max |= access;
            match by_path.iter_mut().find(|(a, _)| a.path == acl.path) {
                Some(slot) => {
                    // A repository-specific rule beats a global one for the same path.
                    if !acl.repos.is_empty() {
                        *slot = (acl, access);
                    }
                }
                None => by_path.push((acl, access)),
            }
        }
        UserRules {
            max,
            rules: by_path
                .into_iter()
                .map(|(a, access)| (a.seq, a.path.as_slice(), access))
                .collect(),
        }
    }

    /// These rules with `user` also a member of each group named in `groups` (without the
    /// `@`) that the files define; groups they do not define are left out. None when no
    /// group was added (then these rules apply as they are). Used for a directory's groups
    /// (an LDAP login's): the files stay what `svnauthz validate` accepts.
    pub fn with_memberships(&self, user: &str, groups: &[String]) -> Option<Authz> {
        let mut added = None::<Authz>;
        for g in groups {
            let key = format!("@{g}");
            if self.groups.get(&key).is_none_or(|m| m.contains(user)) {
                continue;
            }
            let copy = added.get_or_insert_with(|| self.clone());
            if let Some(m) = copy.groups.get_mut(&key) {
                m.insert(user.to_string());
            }
            // The group's entries come back into their rules now that it has a member.
            let (wake, keep): (Vec<_>, Vec<_>) = std::mem::take(&mut copy.dormant)
                .into_iter()
                .partition(|(_, a)| a.name == key);
            copy.dormant = keep;
            for (i, ace) in wake {
                if let Some(acl) = copy.acls.get_mut(i) {
                    acl.aces.push(ace);
                }
            }
        }
        added
    }

    /// Whether `user` has `required` (READ or READ|WRITE) on `path` in `repos`.
    pub fn check(&self, repos: Option<&str>, path: &str, user: Option<&str>, required: u8) -> bool {
        self.rules_for(repos, user).check(path, required)
    }
}

/// The rules of an [`Authz`] that apply to one user in one repository.
#[derive(Debug, Clone)]
pub struct UserRules<'a> {
    /// The union of the access of every rule that applies to the user (before a
    /// repository-specific rule hides a global one).
    max: u8,
    rules: Vec<(usize, &'a [Seg], u8)>,
}

impl UserRules<'_> {
    /// The access the user has on `path` (an fspath or relpath).
    pub fn access(&self, path: &str) -> u8 {
        let mut segs = segments(path);
        if segs.is_empty() {
            // Subversion walks the root path "/" as one empty segment after the root: rules
            // `[:glob:/*]` and `[:glob:/**]` match it there and beat `[/]` whatever their order.
            segs.push("");
        }
        let mut current = 0u8;
        for k in 0..=segs.len() {
            let best = self
                .rules
                .iter()
                .filter(|(_, rule, _)| rule_matches(rule, &segs[..k]))
                .max_by_key(|(seq, _, _)| *seq);
            if let Some((_, _, access)) = best {
                current = *access;
            }
        }
        current
    }

    /// Whether the user has `required` on `path`.
    pub fn check(&self, path: &str, required: u8) -> bool {
        self.access(path) & required == required
    }

    /// Whether the user has `required` on `path` and on every path below it (Subversion's
    /// recursive check: every rule that could apply below `path` grants it, whether or
    /// not such paths exist).
    pub fn check_recursive(&self, path: &str, required: u8) -> bool {
        if !self.check(path, required) {
            return false;
        }
        let segs = segments(path);
        self.rules
            .iter()
            .filter(|(_, rule, _)| could_match_below(rule, &segs))
            .all(|(_, _, a)| a & required == required)
    }

    /// Whether the user has `required` somewhere in the repository (svnserve's check with
    /// no path).
    pub fn anywhere(&self, required: u8) -> bool {
        self.max & required == required
    }

    /// Whether the user has `required` on every path of the repository (every rule that
    /// applies to them grants it): then filtering by path changes nothing.
    pub fn everywhere(&self, required: u8) -> bool {
        self.rules.iter().all(|(_, _, a)| a & required == required)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<Authz, AuthzError> {
        Authz::parse(s.as_bytes(), Path::new("authz"), None)
    }

    #[test]
    fn basic_precedence() {
        let a = parse(
            "[groups]\ndevs = harry, @ops\nops = sally\n[/]\n* = r\n[/secret]\n* =\n@devs = rw\n\
             [repo:/secret]\nharry =\n[:glob:/**/*.key]\n* =\n",
        )
        .expect("parse");
        assert!(a.check(None, "/", None, READ));
        assert!(!a.check(None, "/", None, READ | WRITE));
        assert!(!a.check(None, "/secret", None, READ));
        assert!(a.check(None, "/secret/x", Some("sally"), READ | WRITE));
        assert!(a.check(None, "/secret/x", Some("harry"), READ | WRITE));
        assert!(!a.check(Some("repo"), "/secret/x", Some("harry"), READ));
        assert!(a.check(Some("repo"), "/secret/x", Some("sally"), READ));
        assert!(!a.check(None, "/a/b.key", Some("sally"), READ));
        assert!(a.check(None, "/a/b.keys", Some("sally"), READ));
    }

    #[test]
    fn default_is_no_access() {
        let a = parse("[/trunk]\nharry = rw\n").expect("parse");
        assert!(!a.check(None, "/", Some("harry"), READ));
        assert!(a.check(None, "/trunk/x", Some("harry"), READ | WRITE));
        assert!(!a.check(None, "/trunk", Some("sally"), READ));
    }

    #[test]
    fn errors() {
        let e = parse("[/]\n* = rx\n").expect_err("bad mode");
        assert_eq!(
            e.svn_message(),
            "The access mode 'x' in access entry '*' of rule [/] is not valid"
        );
        let e = parse("[/]\n  * = r\n").expect_err("indent");
        assert_eq!(e.svn_message(), "line 1: Option expected");
        let e = parse("[groups]\na=@b\nb=@a\n[/]\n*=r\n").expect_err("cycle");
        assert!(e.reason.starts_with("Recursive definition of group"));
        assert!(parse("[/a/]\n*=r\n").is_err());
        assert!(parse("[:glob:/a]\n*=r\n[/a]\n*=r\n").is_err());
        assert!(parse("[/]\n~~harry=r\n").is_err());
        assert!(parse("[/]\nharry=w\n").is_err());
    }

    #[test]
    fn globs() {
        assert!(fnmatch(b"*.c", b"main.c"));
        assert!(fnmatch(b"[a-c]x", b"bx"));
        assert!(!fnmatch(b"[!a-c]x", b"bx"));
        let a = parse("[/]\n*=r\n[:glob:/a/**]\n*=\n").expect("parse");
        assert!(!a.check(None, "/a", None, READ));
        assert!(!a.check(None, "/a/b/c", None, READ));
        assert!(a.check(None, "/b", None, READ));
    }

    #[test]
    fn memberships_from_a_directory_join_defined_groups_only() {
        let a = parse(
            "[groups]\ndevelopers =\nops = sally\n[/]\n* = r\n[/secret]\n* =\n@developers = rw\n",
        )
        .expect("valid");
        assert!(!a.check(None, "/secret", Some("harry"), READ));
        assert!(a.with_memberships("harry", &["nobody".into()]).is_none());
        assert!(a.with_memberships("sally", &["ops".into()]).is_none());
        let b = a
            .with_memberships("harry", &["developers".into(), "undefined".into()])
            .expect("joined");
        assert!(b.check(None, "/secret", Some("harry"), READ | WRITE));
        assert!(!b.check(None, "/secret", Some("sally"), READ));
        assert!(
            !a.check(None, "/secret", Some("harry"), READ),
            "the original is unchanged"
        );
    }
}
