//! Apache's password files (`AuthUserFile`, written by `htpasswd`): one `name:hash` a line,
//! the hash in one of the forms Apache's `apr_password_validate` takes: bcrypt (`$2y$`,
//! `htpasswd -B`), Apache's MD5 crypt (`$apr1$`, `htpasswd -m`, the default), `{SHA}`
//! (`htpasswd -s`), SHA-256 and SHA-512 crypt (`$5$`, `$6$`, `htpasswd -2`/`-5`).
//! Plain `crypt(3)` DES hashes (`htpasswd -d`) are not accepted: such a user's login fails
//! and the log says why.

use md5::{Digest, Md5};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// A password file as read.
#[derive(Debug, Default)]
pub(crate) struct Htpasswd {
    /// user name -> stored hash.
    users: HashMap<String, String>,
}

/// What checking a user's password found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    Valid,
    /// Apache's "Password Mismatch".
    Mismatch,
    /// Apache's "user not found".
    UnknownUser,
    /// The stored hash is in a form this server cannot check (named for the log).
    Unsupported(&'static str),
}

impl Htpasswd {
    /// Parses a password file's text: `name:hash` lines; blank lines and lines starting
    /// with `#` are skipped, as Apache's `ap_pcfg` reader skips them; a line without `:` is
    /// skipped too (Apache never matches it). The first entry for a name wins, as Apache
    /// stops at the first match.
    pub fn parse(text: &[u8]) -> Htpasswd {
        let mut users = HashMap::new();
        for line in text.split(|&b| b == b'\n') {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if line.is_empty() || line[0] == b'#' {
                continue;
            }
            let Some(colon) = line.iter().position(|&b| b == b':') else {
                continue;
            };
            let (Ok(name), Ok(hash)) = (
                std::str::from_utf8(&line[..colon]),
                std::str::from_utf8(&line[colon + 1..]),
            ) else {
                continue;
            };
            users
                .entry(name.to_string())
                .or_insert_with(|| hash.trim_end().to_string());
        }
        Htpasswd { users }
    }

    /// Reads and parses a password file.
    pub fn load(path: &Path) -> std::io::Result<Htpasswd> {
        Ok(Htpasswd::parse(&std::fs::read(path)?))
    }

    /// The stored hash of `user`.
    pub fn hash_of(&self, user: &str) -> Option<&str> {
        self.users.get(user).map(String::as_str)
    }

    /// Checks `user`'s password.
    pub fn verify(&self, user: &str, password: &[u8]) -> Verdict {
        match self.hash_of(user) {
            None => Verdict::UnknownUser,
            Some(hash) => verify_hash(hash, password),
        }
    }
}

/// Checks `password` against a stored hash.
pub(crate) fn verify_hash(hash: &str, password: &[u8]) -> Verdict {
    let ok = if hash.starts_with("$2y$")
        || hash.starts_with("$2a$")
        || hash.starts_with("$2b$")
        || hash.starts_with("$2x$")
    {
        // bcrypt looks at the first 72 bytes, as Apache's (and OpenBSD's) does.
        bcrypt::verify(password, hash).unwrap_or(false)
    } else if let Some(rest) = hash.strip_prefix("$apr1$") {
        let Some((salt, _)) = rest.split_once('$') else {
            return Verdict::Mismatch;
        };
        constant_eq(apr1(password, salt.as_bytes()).as_bytes(), hash.as_bytes())
    } else if let Some(b64) = hash.strip_prefix("{SHA}") {
        use base64::Engine as _;
        let digest = sha1::Sha1::digest(password);
        let mine = base64::engine::general_purpose::STANDARD.encode(digest);
        constant_eq(mine.as_bytes(), b64.as_bytes())
    } else if hash.starts_with("$5$") || hash.starts_with("$6$") {
        let Ok(pw) = std::str::from_utf8(password) else {
            return Verdict::Mismatch;
        };
        if hash.starts_with("$5$") {
            sha_crypt::sha256_check(pw, hash).is_ok()
        } else {
            sha_crypt::sha512_check(pw, hash).is_ok()
        }
    } else {
        return Verdict::Unsupported(if hash.starts_with('$') {
            "an unknown $-prefixed hash"
        } else {
            "crypt(3) DES or plain text"
        });
    };
    if ok {
        Verdict::Valid
    } else {
        Verdict::Mismatch
    }
}

/// Whether two byte strings are equal, in time that depends only on their lengths.
fn constant_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The alphabet of crypt's base-64 encoding.
const ITOA64: &[u8; 64] = b"./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// `n` characters of crypt's base-64 from the low bits of `v`, least significant first.
fn to64(out: &mut String, mut v: u32, n: usize) {
    for _ in 0..n {
        out.push(ITOA64[(v & 0x3f) as usize] as char);
        v >>= 6;
    }
}

/// Apache's MD5 crypt (`$apr1$SALT$HASH`): Poul-Henning Kamp's FreeBSD MD5 crypt with the
/// magic string `$apr1$` (APR's `apr_md5_encode`): an MD5 of password, magic and salt
/// mixed with an MD5 of password, salt, password; 1,000 rounds of re-hashing that alternate
/// the password, the salt and the previous digest; the 16 bytes written in crypt's base-64
/// in the fixed byte order below. The salt is at most 8 characters.
pub(crate) fn apr1(password: &[u8], salt: &[u8]) -> String {
    const MAGIC: &[u8] = b"$apr1$";
    let salt = &salt[..salt.len().min(8)];
    let alternate = {
        let mut h = Md5::new();
        h.update(password);
        h.update(salt);
        h.update(password);
        h.finalize()
    };
    let mut ctx = Md5::new();
    ctx.update(password);
    ctx.update(MAGIC);
    ctx.update(salt);
    let mut left = password.len();
    while left > 0 {
        let n = left.min(16);
        ctx.update(&alternate[..n]);
        left -= n;
    }
    // For each bit of the password's length, lowest first: a zero byte for a one bit, the
    // password's first byte for a zero bit.
    let mut i = password.len();
    while i > 0 {
        if i & 1 == 1 {
            ctx.update([0u8]);
        } else {
            ctx.update(&password[..1]);
        }
        i >>= 1;
    }
    let mut digest = ctx.finalize();
    for round in 0..1000 {
        let mut h = Md5::new();
        if round & 1 == 1 {
            h.update(password);
        } else {
            h.update(digest);
        }
        if round % 3 != 0 {
            h.update(salt);
        }
        if round % 7 != 0 {
            h.update(password);
        }
        if round & 1 == 1 {
            h.update(digest);
        } else {
            h.update(password);
        }
        digest = h.finalize();
    }
    let mut out = String::with_capacity(37);
    out.push_str("$apr1$");
    out.push_str(&String::from_utf8_lossy(salt));
    out.push('$');
    let d = |i: usize| u32::from(digest[i]);
    for (a, b, c) in [(0, 6, 12), (1, 7, 13), (2, 8, 14), (3, 9, 15), (4, 10, 5)] {
        to64(&mut out, (d(a) << 16) | (d(b) << 8) | d(c), 4);
    }
    to64(&mut out, d(11), 2);
    out
}

/// Password files read before, kept while the file's size and modification time stay the
/// same (an edit with `htpasswd` applies to the next request).
#[derive(Default)]
pub(crate) struct HtpasswdCache {
    files: std::sync::Mutex<HashMap<PathBuf, (FileStamp, std::sync::Arc<Htpasswd>)>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileStamp {
    len: u64,
    modified: Option<std::time::SystemTime>,
    inode: u64,
}

impl HtpasswdCache {
    pub fn get(&self, path: &Path) -> std::io::Result<std::sync::Arc<Htpasswd>> {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::metadata(path)?;
        let stamp = FileStamp {
            len: meta.len(),
            modified: meta.modified().ok(),
            inode: meta.ino(),
        };
        let mut files = self.files.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((s, f)) = files.get(path) {
            if *s == stamp {
                return Ok(f.clone());
            }
        }
        let parsed = std::sync::Arc::new(Htpasswd::load(path)?);
        if files.len() > 64 {
            files.clear();
        }
        files.insert(path.to_path_buf(), (stamp, parsed.clone()));
        Ok(parsed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apr1_matches_known_hashes() {
        // Written by Debian's `htpasswd -nbm`.
        assert_eq!(
            apr1(b"sallypw", b"0fr19.la"),
            "$apr1$0fr19.la$Uh0cok1q/uJkfpu11nXxM."
        );
        assert_eq!(
            verify_hash("$apr1$0fr19.la$Uh0cok1q/uJkfpu11nXxM.", b"sallypw"),
            Verdict::Valid
        );
        assert_eq!(
            verify_hash("$apr1$0fr19.la$Uh0cok1q/uJkfpu11nXxM.", b"sallyp"),
            Verdict::Mismatch
        );
    }

    #[test]
    fn sha_and_bcrypt() {
        assert_eq!(
            verify_hash("{SHA}tqd/EnzxT9cLHeUnWSAYDUgdFQs=", b"joepw"),
            Verdict::Valid
        );
        assert_eq!(
            verify_hash("{SHA}tqd/EnzxT9cLHeUnWSAYDUgdFQs=", b"joepx"),
            Verdict::Mismatch
        );
        let h = "$2y$05$c0ncPf6F2Vqo9PAMyxHmCe5K85.HHBlZ7YZE5ThnI61usoRe.TECS";
        assert_eq!(verify_hash(h, b"harrypw"), Verdict::Valid);
        assert_eq!(verify_hash(h, b"harry"), Verdict::Mismatch);
        assert_eq!(verify_hash("$2y$05$short", b"x"), Verdict::Mismatch);
        assert!(matches!(
            verify_hash("abJnggxhB/yWI", b"x"),
            Verdict::Unsupported(_)
        ));
    }

    #[test]
    fn parse_skips_comments_and_keeps_first() {
        let f = Htpasswd::parse(b"# c\n\nharry:{SHA}a\r\nharry:{SHA}b\nnocolon\n\xff:x\nsally:\n");
        assert_eq!(f.hash_of("harry"), Some("{SHA}a"));
        assert_eq!(f.hash_of("sally"), Some(""));
        assert_eq!(f.verify("nobody", b""), Verdict::UnknownUser);
        assert_eq!(
            f.verify("sally", b""),
            Verdict::Unsupported("crypt(3) DES or plain text")
        );
    }
}
