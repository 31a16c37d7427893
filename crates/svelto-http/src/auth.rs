//! HTTP Basic authentication as Apache's mod_auth_basic with `AuthUserFile` does it: the
//! `Authorization: Basic base64(user:password)` header checked against an htpasswd file
//! (`htpasswd.rs`). What a request that presents no, bad or wrong credentials gets is
//! decided in `access.rs`; this module only reads the header and checks the password.

use crate::htpasswd::{HtpasswdCache, Verdict};
use base64::Engine as _;
use hyper::HeaderMap;
use sha1::Digest as _;
use std::collections::HashSet;
use std::hash::{BuildHasher, Hasher};
use std::path::Path;
use std::sync::Mutex;

/// Longest `Authorization` header taken (Apache's `LimitRequestFieldSize` is 8190 bytes
/// for a whole header line).
pub(crate) const MAX_AUTHORIZATION: usize = 8190;

/// What a request's `Authorization` header presents.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Presented {
    /// No header.
    Nothing,
    /// Basic credentials.
    Basic { user: String, password: Vec<u8> },
    /// A header that cannot be Basic credentials; why, for the log.
    Malformed(&'static str),
    /// A header longer than [`MAX_AUTHORIZATION`] (Apache: 400, "Size of a request header
    /// field exceeds server limit").
    TooLong,
}

/// Reads the `Authorization` header(s).
pub(crate) fn presented(headers: &HeaderMap) -> Presented {
    let mut all = headers.get_all(hyper::header::AUTHORIZATION).iter();
    let Some(value) = all.next() else {
        return Presented::Nothing;
    };
    if all.next().is_some() {
        return Presented::Malformed("more than one Authorization header");
    }
    parse_basic(value.as_bytes())
}

/// Parses the value of an `Authorization` header as Basic credentials.
pub(crate) fn parse_basic(value: &[u8]) -> Presented {
    if value.len() > MAX_AUTHORIZATION {
        return Presented::TooLong;
    }
    let value = value.trim_ascii();
    let Some(space) = value.iter().position(|&b| b == b' ') else {
        return Presented::Malformed("client used wrong authentication scheme");
    };
    if !value[..space].eq_ignore_ascii_case(b"basic") {
        return Presented::Malformed("client used wrong authentication scheme");
    }
    let encoded = value[space + 1..].trim_ascii();
    let Ok(decoded) = base64::engine::general_purpose::STANDARD.decode(encoded) else {
        return Presented::Malformed("the Basic credentials are not valid base64");
    };
    let Some(colon) = decoded.iter().position(|&b| b == b':') else {
        return Presented::Malformed("the Basic credentials have no ':' after the user name");
    };
    let Ok(user) = std::str::from_utf8(&decoded[..colon]) else {
        return Presented::Malformed("the user name is not UTF-8");
    };
    if user.is_empty() || user.chars().any(char::is_control) {
        return Presented::Malformed("the user name is empty or has control characters");
    }
    Presented::Basic {
        user: user.to_string(),
        password: decoded[colon + 1..].to_vec(),
    }
}

/// Why a login failed (for the log; the client gets a 401 whatever the reason, as from
/// Apache).
#[derive(Debug)]
pub(crate) enum LoginError {
    /// The password file cannot be read (a 500: the server is misconfigured).
    File(std::io::Error),
    Refused(String),
    /// The LDAP directory cannot be asked (a 503 with this message).
    Unavailable(String),
    /// The login must ask the directory, which a worker may not wait on: the request is
    /// answered again on the blocking pool (`crate::may_block`).
    Later,
}

/// The server's password checking: files read once per change, and the logins already
/// checked (bcrypt costs milliseconds per check; ra_serf sends the credentials with every
/// request of a session, so each is checked once, not once per request).
#[derive(Default)]
pub(crate) struct Logins {
    files: HtpasswdCache,
    /// Keyed digests of (user, stored hash, password) that were valid.
    verified: Mutex<HashSet<[u8; 20]>>,
    keys: LoginKeys,
}

/// The keys logins are remembered by: a digest of their parts under a secret of this
/// process, so that what is remembered holds nothing a password can be looked up by
/// outside it.
pub(crate) struct LoginKeys {
    secret: [u8; 16],
}

impl Default for LoginKeys {
    fn default() -> Self {
        let mut secret = [0u8; 16];
        for chunk in secret.chunks_mut(8) {
            let v = std::collections::hash_map::RandomState::new()
                .build_hasher()
                .finish();
            chunk.copy_from_slice(&v.to_le_bytes()[..chunk.len()]);
        }
        LoginKeys { secret }
    }
}

impl LoginKeys {
    /// The key of `parts` (each digested with its length, so no two lists share one).
    pub fn key(&self, parts: &[&[u8]]) -> [u8; 20] {
        let mut h = sha1::Sha1::new();
        h.update(self.secret);
        for part in parts {
            h.update((part.len() as u64).to_le_bytes());
            h.update(part);
        }
        h.finalize().into()
    }
}

/// Logins remembered at most (then forgotten all at once and checked again).
const MAX_VERIFIED: usize = 10_000;

impl Logins {
    /// Checks `user`'s `password` against the password file `file`.
    pub fn check(&self, file: &Path, user: &str, password: &[u8]) -> Result<(), LoginError> {
        let db = self.files.get(file).map_err(LoginError::File)?;
        let Some(hash) = db.hash_of(user) else {
            return Err(LoginError::Refused(format!("user {user} not found")));
        };
        let key = self.keys.key(&[user.as_bytes(), hash.as_bytes(), password]);
        let lock = || self.verified.lock().unwrap_or_else(|e| e.into_inner());
        if lock().contains(&key) {
            return Ok(());
        }
        match db.verify(user, password) {
            Verdict::Valid => {
                let mut set = lock();
                if set.len() >= MAX_VERIFIED {
                    set.clear();
                }
                set.insert(key);
                Ok(())
            }
            Verdict::Mismatch => Err(LoginError::Refused(format!(
                "user {user}: authentication failure: Password Mismatch"
            ))),
            Verdict::UnknownUser => Err(LoginError::Refused(format!("user {user} not found"))),
            Verdict::Unsupported(form) => Err(LoginError::Refused(format!(
                "user {user}: the password file '{}' stores the password as {form}, which \
                 Svelto cannot check (use htpasswd -B, -m, -s, -2 or -5)",
                file.display()
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b64(s: &[u8]) -> String {
        base64::engine::general_purpose::STANDARD.encode(s)
    }

    #[test]
    fn basic_headers() {
        let ok = format!("Basic {}", b64(b"harry:pw:with:colons"));
        assert_eq!(
            parse_basic(ok.as_bytes()),
            Presented::Basic {
                user: "harry".into(),
                password: b"pw:with:colons".to_vec()
            }
        );
        let lower = format!("basic   {} ", b64(b"h:"));
        assert!(matches!(
            parse_basic(lower.as_bytes()),
            Presented::Basic { .. }
        ));
        for bad in [
            "Bearer abc".to_string(),
            "Basic".to_string(),
            "Basic !!!notbase64".to_string(),
            format!("Basic {}", b64(b"nocolon")),
            format!("Basic {}", b64(b"\xff\xfe:pw")),
            format!("Basic {}", b64(b":pw")),
        ] {
            assert!(
                matches!(parse_basic(bad.as_bytes()), Presented::Malformed(_)),
                "{bad:.40}"
            );
        }
        let long = format!("Basic {}", "A".repeat(MAX_AUTHORIZATION));
        assert_eq!(parse_basic(long.as_bytes()), Presented::TooLong);
    }
}
