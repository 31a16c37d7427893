//! The stock client's credential cache: `CONFIG_DIR/auth/svn.simple/MD5(realmstring)`, a
//! hash dump (`K n`/`V n` pairs, `END`) with `svn:realmstring`, `username`, and, in the
//! plain form (`passtype simple`), `password`. Only that form is read: passwords kept by
//! a keyring (gnome-keyring, kwallet, gpg-agent) are not.

use std::path::{Path, PathBuf};

use md5::Digest;

/// `~/.subversion`, as the stock client finds it.
pub fn default_config_dir() -> Option<PathBuf> {
    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".subversion"))
}

/// Reads a hash dump; None when it is not one.
fn parse_hash(bytes: &[u8]) -> Option<Vec<(Vec<u8>, Vec<u8>)>> {
    let mut out = Vec::new();
    let mut rest = bytes;
    let field = |rest: &mut &[u8], tag: u8| -> Option<Vec<u8>> {
        let nl = rest.iter().position(|&b| b == b'\n')?;
        let head = std::str::from_utf8(&rest[..nl]).ok()?;
        let len: usize = head.strip_prefix(tag as char)?.trim_start().parse().ok()?;
        let start = nl + 1;
        let end = start.checked_add(len)?;
        if rest.len() < end + 1 || rest[end] != b'\n' {
            return None;
        }
        let v = rest[start..end].to_vec();
        *rest = &rest[end + 1..];
        Some(v)
    };
    loop {
        if rest.starts_with(b"END\n") || rest == b"END" {
            return Some(out);
        }
        let k = field(&mut rest, b'K')?;
        let v = field(&mut rest, b'V')?;
        out.push((k, v));
    }
}

/// The login cached in plain form for `realmstring` under `config_dir` (for `username`
/// when one is given): (user name, password).
pub fn cached_login(
    config_dir: &Path,
    realmstring: &str,
    username: Option<&str>,
) -> Option<(String, String)> {
    let name = hex::encode(md5::Md5::digest(realmstring.as_bytes()));
    let path = config_dir.join("auth/svn.simple").join(name);
    let bytes = std::fs::read(path).ok()?;
    let hash = parse_hash(&bytes)?;
    let get = |k: &str| {
        hash.iter()
            .find(|(n, _)| n == k.as_bytes())
            .map(|(_, v)| String::from_utf8_lossy(v).into_owned())
    };
    if get("svn:realmstring").as_deref() != Some(realmstring) {
        return None;
    }
    if get("passtype").as_deref().is_some_and(|t| t != "simple") {
        return None;
    }
    let user = get("username")?;
    if username.is_some_and(|u| u != user) {
        return None;
    }
    Some((user, get("password")?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_cache_entry_is_found_by_its_realm() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let realm = "<svn://127.0.0.1:3690> my realm";
        let name = hex::encode(md5::Md5::digest(realm.as_bytes()));
        let simple = dir.path().join("auth/svn.simple");
        std::fs::create_dir_all(&simple).unwrap_or_else(|e| panic!("{e}"));
        let body = format!(
            "K 8\npasstype\nV 6\nsimple\nK 8\npassword\nV 6\nsecret\nK 15\nsvn:realmstring\nV {}\n{realm}\nK 8\nusername\nV 5\nalice\nEND\n",
            realm.len()
        );
        std::fs::write(simple.join(name), body).unwrap_or_else(|e| panic!("{e}"));
        let want = Some(("alice".to_string(), "secret".to_string()));
        assert_eq!(cached_login(dir.path(), realm, None), want);
        assert_eq!(cached_login(dir.path(), realm, Some("alice")), want);
        assert_eq!(cached_login(dir.path(), realm, Some("bob")), None);
        assert_eq!(cached_login(dir.path(), "<svn://other:1> x", None), None);
        assert_eq!(parse_hash(b"K 99\nshort\n"), None);
    }
}
