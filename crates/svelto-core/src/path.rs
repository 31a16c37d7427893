//! Repository paths: canonical relpaths without a leading slash ("" is the root).

use std::cmp::Ordering;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("path '{0}' has an empty component, '.' or '..'")]
    BadComponent(String),
    #[error("path '{0}' contains a control character")]
    ControlChar(String),
    #[error("path is not valid UTF-8: {0:?}")]
    NotUtf8(Vec<u8>),
}

/// Canonicalizes a repository path as given in a dumpfile or by a client: strips leading and
/// trailing slashes, and rejects empty, `.` and `..` components and control characters
/// (Subversion's `svn_fs__path_valid`). Returns the relpath ("" for the root).
pub fn validate_path(path: &str) -> Result<String, PathError> {
    let trimmed = path.trim_matches('/');
    if trimmed.is_empty() {
        return Ok(String::new());
    }
    for comp in trimmed.split('/') {
        if comp.is_empty() || comp == "." || comp == ".." {
            return Err(PathError::BadComponent(path.to_string()));
        }
    }
    if trimmed.chars().any(|c| c.is_control()) {
        return Err(PathError::ControlChar(path.to_string()));
    }
    Ok(trimmed.to_string())
}

/// Orders paths the way Subversion's `svn_path_compare_paths` does: component by
/// component, so that "a/b" sorts before "a-b" (a separator sorts below every other byte).
pub fn compare_paths(a: &str, b: &str) -> Ordering {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let common = a.iter().zip(b.iter()).take_while(|(x, y)| x == y).count();
    match (a.get(common), b.get(common)) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (Some(b'/'), Some(_)) => Ordering::Less,
        (Some(_), Some(b'/')) => Ordering::Greater,
        (Some(x), Some(y)) => x.cmp(y),
    }
}

/// Joins two relpaths.
pub fn join(base: &str, rest: &str) -> String {
    match (base.is_empty(), rest.is_empty()) {
        (true, _) => rest.to_string(),
        (_, true) => base.to_string(),
        _ => format!("{base}/{rest}"),
    }
}

/// Splits a non-root relpath into its parent and its last component.
pub fn parent_and_name(path: &str) -> (&str, &str) {
    match path.rfind('/') {
        Some(i) => (&path[..i], &path[i + 1..]),
        None => ("", path),
    }
}

/// If `path` is `ancestor` or below it, the remainder (possibly ""); else None.
pub fn skip_ancestor<'a>(ancestor: &str, path: &'a str) -> Option<&'a str> {
    if ancestor.is_empty() {
        return Some(path);
    }
    let rest = path.strip_prefix(ancestor)?;
    if rest.is_empty() {
        Some("")
    } else {
        rest.strip_prefix('/')
    }
}

/// The fspath of a repository relpath (`trunk/a` -> `/trunk/a`, `` -> `/`); slashes
/// around `relpath` are dropped.
pub fn fspath(relpath: &str) -> String {
    let relpath = relpath.trim_matches('/');
    let mut p = String::with_capacity(relpath.len() + 1);
    p.push('/');
    p.push_str(relpath);
    p
}

/// A path a caller gives, as a repository relpath: the slashes around it dropped
/// (`/trunk/` -> `trunk`, `/` -> ``). Nothing else is checked ([`validate_path`] checks).
pub fn relpath(path: &str) -> String {
    path.trim_matches('/').to_string()
}

/// True if `path` is `ancestor` itself or lies below it.
pub fn is_ancestor(ancestor: &str, path: &str) -> bool {
    skip_ancestor(ancestor, path).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fspaths_and_relpaths() {
        assert_eq!(fspath(""), "/");
        assert_eq!(fspath("trunk/a"), "/trunk/a");
        assert_eq!(fspath("/trunk/a/"), "/trunk/a");
        assert_eq!(relpath("/"), "");
        assert_eq!(relpath("/trunk/a/"), "trunk/a");
        assert_eq!(relpath("trunk"), "trunk");
        assert_eq!(relpath(&fspath("a/b")), "a/b");
    }

    #[test]
    fn validation() {
        assert_eq!(validate_path("/trunk/a b/ü").as_deref(), Ok("trunk/a b/ü"));
        assert_eq!(validate_path("/").as_deref(), Ok(""));
        assert!(validate_path("a/../b").is_err());
        assert!(validate_path("a//b").is_err());
        assert!(validate_path("a/./b").is_err());
        assert!(validate_path("a/\x01").is_err());
    }

    #[test]
    fn ordering_is_component_wise() {
        assert_eq!(compare_paths("a/b", "a-b"), Ordering::Less);
        assert_eq!(compare_paths("a", "a/b"), Ordering::Less);
        assert_eq!(compare_paths("", "a"), Ordering::Less);
        assert_eq!(compare_paths("b", "a/z"), Ordering::Greater);
    }

    #[test]
    fn ancestry() {
        assert_eq!(skip_ancestor("a", "a/b/c"), Some("b/c"));
        assert_eq!(skip_ancestor("a", "ab"), None);
        assert_eq!(skip_ancestor("", "x"), Some("x"));
        assert_eq!(skip_ancestor("a", "a"), Some(""));
        assert_eq!(parent_and_name("a/b/c"), ("a/b", "c"));
        assert_eq!(parent_and_name("c"), ("", "c"));
    }
}
