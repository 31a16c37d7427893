//! svn:// URLs: which repository under the root a URL means, and the session path inside it
//! (protocol doc 2.5, svnserve's rules).

use crate::error::{code, CmdError};
use std::path::{Path, PathBuf};

/// The path part of an `svn://` or `svn+NAME://` URL (after the host), still encoded.
pub fn url_path(url: &str) -> Result<&str, CmdError> {
    let bad = || CmdError::new(code::BAD_URL, format!("Illegal svn repository URL '{url}'"));
    let (scheme, rest) = url.split_once("://").ok_or_else(bad)?;
    let ok_scheme = scheme == "svn"
        || scheme
            .strip_prefix("svn+")
            .is_some_and(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric()));
    if !ok_scheme {
        return Err(bad());
    }
    Ok(rest.find('/').map_or("", |i| &rest[i..]))
}

/// Percent-decodes a URL path. Invalid escapes are kept as they are, as Subversion does.
pub fn uri_decode(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            let hex = |c: u8| (c as char).to_digit(16);
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    out
}

/// The decoded, canonical segments of a URL path; `..` is refused.
pub fn segments(encoded_path: &str) -> Result<Vec<String>, CmdError> {
    let decoded = String::from_utf8(uri_decode(encoded_path)).map_err(|_| {
        CmdError::new(
            code::BAD_FILENAME,
            format!("Couldn't determine repository path: '{encoded_path}' is not UTF-8"),
        )
    })?;
    let mut out = Vec::new();
    for seg in decoded.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                return Err(CmdError::new(
                    code::BAD_FILENAME,
                    "Couldn't determine repository path",
                ))
            }
            s if s.chars().any(char::is_control) => {
                return Err(CmdError::new(
                    code::BAD_FILENAME,
                    "Couldn't determine repository path",
                ))
            }
            s => out.push(s.to_string()),
        }
    }
    Ok(out)
}

/// Where a URL leads under `root`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    pub repo_dir: PathBuf,
    /// The session path inside the repository (a relpath, "" for its root).
    pub session_path: String,
    /// The client's URL with the session path's segments removed, spelled as the client did.
    pub root_url: String,
}

/// Finds the repository a client URL names: the nearest directory, walking up from the
/// URL's path joined to `root`, that holds a repository (`is_repo`).
pub fn locate(
    root: &Path,
    url: &str,
    is_repo: &dyn Fn(&Path) -> bool,
) -> Result<Located, CmdError> {
    let segs = segments(url_path(url)?)?;
    if let Some(n) = svelto_host::find_repository(root, &segs, is_repo) {
        let rest = &segs[n..];
        let mut repo_dir = root.to_path_buf();
        repo_dir.extend(&segs[..n]);
        return Ok(Located {
            repo_dir,
            session_path: rest.join("/"),
            root_url: strip_segments(url, rest.len()),
        });
    }
    Err(CmdError::new(
        code::RA_SVN_REPOS_NOT_FOUND,
        format!("No repository found in '{url}'"),
    ))
}

/// `url` without its last `n` path segments (a trailing slash is dropped first).
fn strip_segments(url: &str, n: usize) -> String {
    let mut s = url.trim_end_matches('/');
    for _ in 0..n {
        match s.rfind('/') {
            Some(i) => s = s[..i].trim_end_matches('/'),
            None => break,
        }
    }
    s.to_string()
}

/// The session path a URL names inside the repository whose root URL is `root_url`, or
/// 170000 when the URL lies outside it (reparent, switch, diff, link-path).
pub fn path_in_repo(root_url: &str, url: &str) -> Result<String, CmdError> {
    let outside = || {
        CmdError::new(
            code::RA_ILLEGAL_URL,
            format!("'{url}' is not the same repository as '{root_url}'"),
        )
    };
    let root = String::from_utf8(uri_decode(root_url)).map_err(|_| outside())?;
    let full = String::from_utf8(uri_decode(url)).map_err(|_| outside())?;
    let root = root.trim_end_matches('/');
    let rest = full.strip_prefix(root).ok_or_else(outside)?;
    if !rest.is_empty() && !rest.starts_with('/') {
        return Err(outside());
    }
    let mut out = Vec::new();
    for seg in rest.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                return Err(CmdError::new(
                    code::BAD_FILENAME,
                    format!("Path '{url}' contains '..'"),
                ))
            }
            s => out.push(s),
        }
    }
    Ok(out.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locate_finds_the_nearest_repository() {
        let root = Path::new("/srv");
        let is_repo = |p: &Path| p == Path::new("/srv/projects/repo");
        let l = locate(root, "svn://host:3690/projects/repo/trunk/a%20b", &is_repo).expect("found");
        assert_eq!(l.repo_dir, PathBuf::from("/srv/projects/repo"));
        assert_eq!(l.session_path, "trunk/a b");
        assert_eq!(l.root_url, "svn://host:3690/projects/repo");
        let l = locate(root, "svn://host/projects/repo", &is_repo).expect("found");
        assert_eq!(l.session_path, "");
        assert_eq!(l.root_url, "svn://host/projects/repo");
    }

    #[test]
    fn locate_refuses_dotdot_and_bad_schemes() {
        let is_repo = |_: &Path| true;
        let e = locate(Path::new("/srv"), "svn://h/../etc", &is_repo).expect_err("..");
        assert_eq!(e.chain[0].apr_err, u64::from(code::BAD_FILENAME));
        let e = locate(Path::new("/srv"), "svn://h/a/%2e%2e/b", &is_repo).expect_err("..");
        assert_eq!(e.chain[0].apr_err, u64::from(code::BAD_FILENAME));
        let e = locate(Path::new("/srv"), "http://h/repo", &is_repo).expect_err("scheme");
        assert_eq!(e.chain[0].apr_err, u64::from(code::BAD_URL));
        let none = |_: &Path| false;
        let e = locate(Path::new("/srv"), "svn://h/x", &none).expect_err("none");
        assert_eq!(e.chain[0].apr_err, u64::from(code::RA_SVN_REPOS_NOT_FOUND));
    }

    #[test]
    fn paths_inside_the_repository() {
        let root = "svn://h:1/repo";
        assert_eq!(path_in_repo(root, "svn://h:1/repo").expect("in"), "");
        assert_eq!(
            path_in_repo(root, "svn://h:1/repo/branches/b%20c").expect("in"),
            "branches/b c"
        );
        assert!(path_in_repo(root, "svn://h:1/repository").is_err());
        assert!(path_in_repo(root, "svn://h:1/other/x").is_err());
        assert!(uri_decode("%zz%4").len() == 5);
    }
}
