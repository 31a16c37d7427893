//! Authentication as svnserve does it (protocol doc 2.6): the repository's svnserve.conf
//! decides what anonymous and authenticated users may do; ANONYMOUS, EXTERNAL (tunnel
//! mode) and CRAM-MD5 (with a password database) get a user name.

use crate::conn::{Conn, ConnError};
use crate::error::{code, CmdError};
use md5::{Digest, Md5};
use std::io::{Read, Write};
use std::sync::Arc;
use svelto_core::Env;
use svelto_repos::conf::{Access, PasswdDb};
use svelto_wire::{success, Item, TupleReader};

/// Failed attempts one exchange tolerates before the connection is closed (svnserve has no
/// bound; a client guessing passwords should not get unlimited tries per connection).
const MAX_ATTEMPTS: usize = 32;

/// What a connection's repository allows, and how users can prove who they are.
pub struct Auth {
    pub anon_access: Access,
    pub auth_access: Access,
    pub pwdb: Option<PasswdDb>,
    pub realm: String,
    /// The user EXTERNAL gives (tunnel mode only).
    pub tunnel_user: Option<String>,
    /// Host name in CRAM-MD5 challenges.
    pub hostname: String,
    /// Where a challenge's random number and time come from (the host's `Env`).
    pub env: Arc<dyn Env>,
}

impl Auth {
    /// The blanket access levels the host's admission decided (capped at read under
    /// `-R`), and the ways to authenticate.
    pub fn new(
        adm: &svelto_host::Admission,
        pwdb: Option<PasswdDb>,
        tunnel_user: Option<String>,
        hostname: String,
        env: Arc<dyn Env>,
    ) -> Auth {
        Auth {
            anon_access: adm.anon_access,
            auth_access: adm.auth_access,
            pwdb,
            realm: adm.realm.clone(),
            tunnel_user,
            hostname,
            env,
        }
    }

    pub fn current(&self, user: Option<&str>) -> Access {
        if user.is_some() {
            self.auth_access
        } else {
            self.anon_access
        }
    }

    /// Whether authenticating could give `required` to a user who has none yet.
    pub fn can_authenticate_for(&self, required: Access) -> bool {
        self.auth_access >= required && (self.tunnel_user.is_some() || self.pwdb.is_some())
    }

    fn mechs(&self, required: Access, needs_username: bool) -> Vec<Item> {
        let mut m = Vec::new();
        if !needs_username && self.anon_access >= required {
            m.push(Item::word("ANONYMOUS"));
        }
        if self.tunnel_user.is_some() && self.auth_access >= required {
            m.push(Item::word("EXTERNAL"));
        }
        if self.pwdb.is_some() && self.auth_access >= required {
            m.push(Item::word("CRAM-MD5"));
        }
        m
    }

    /// The auth request for `required` and the exchange, until one attempt succeeds. Sets
    /// `user` when a mechanism names one.
    pub fn request<R: Read, W: Write>(
        &self,
        conn: &mut Conn<R, W>,
        user: &mut Option<String>,
        required: Access,
        needs_username: bool,
    ) -> Result<(), ConnError> {
        conn.write_item(&success(vec![
            Item::list(self.mechs(required, needs_username)),
            Item::string(self.realm.clone()),
        ]))?;
        for _ in 0..MAX_ATTEMPTS {
            let item = conn.expect_item()?;
            let mut t = TupleReader::from_item(&item)?;
            let mech = t.word()?.to_string();
            let arg = match t.opt_list()? {
                Some(l) => {
                    let mut lt = TupleReader::new(l);
                    lt.opt_string()?.map(|s| s.to_vec())
                }
                None => None,
            };
            if self.attempt(conn, user, &mech, arg.as_deref(), required, needs_username)? {
                return Ok(());
            }
        }
        Err(ConnError::Io(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!("{MAX_ATTEMPTS} failed authentication attempts"),
        )))
    }

    fn attempt<R: Read, W: Write>(
        &self,
        conn: &mut Conn<R, W>,
        user: &mut Option<String>,
        mech: &str,
        arg: Option<&[u8]>,
        required: Access,
        needs_username: bool,
    ) -> Result<bool, ConnError> {
        if self.auth_access >= required && mech == "EXTERNAL" {
            if let Some(tunnel_user) = &self.tunnel_user {
                if let Some(a) = arg.filter(|a| !a.is_empty()) {
                    if a != tunnel_user.as_bytes() {
                        conn.write_item(&failure_msg("Requested username does not match"))?;
                        return Ok(false);
                    }
                }
                *user = Some(tunnel_user.clone());
                conn.write_item(&success(vec![]))?;
                return Ok(true);
            }
        }
        if self.anon_access >= required && mech == "ANONYMOUS" && !needs_username {
            conn.write_item(&success(vec![]))?;
            return Ok(true);
        }
        if self.auth_access >= required && mech == "CRAM-MD5" {
            if let Some(pwdb) = &self.pwdb {
                return self.cram_md5(conn, pwdb, user);
            }
        }
        conn.write_item(&failure_msg("Must authenticate with listed mechanism"))?;
        Ok(false)
    }

    fn cram_md5<R: Read, W: Write>(
        &self,
        conn: &mut Conn<R, W>,
        pwdb: &PasswdDb,
        user: &mut Option<String>,
    ) -> Result<bool, ConnError> {
        let challenge = challenge(&self.hostname, &*self.env);
        conn.write_item(&Item::list(vec![
            Item::word("step"),
            Item::list(vec![Item::string(challenge.clone())]),
        ]))?;
        let reply = conn.expect_item()?;
        // Not a string: svnserve answers nothing and waits for the next attempt.
        let Some(reply) = reply.as_string() else {
            return Ok(false);
        };
        let Some((name, digest)) = split_reply(reply) else {
            conn.write_item(&failure_msg("Malformed client response in authentication"))?;
            return Ok(false);
        };
        let name = String::from_utf8_lossy(name).into_owned();
        let Some(password) = pwdb.password(&name) else {
            conn.write_item(&failure_msg("Username not found"))?;
            return Ok(false);
        };
        if cram_md5_digest(challenge.as_bytes(), password.as_bytes()) != digest {
            conn.write_item(&failure_msg("Password incorrect"))?;
            return Ok(false);
        }
        *user = Some(name);
        conn.write_item(&success(vec![]))?;
        Ok(true)
    }
}

/// The refusal when nothing more can be had (in a command's auth slot).
pub fn not_authorized() -> CmdError {
    CmdError::new(code::RA_NOT_AUTHORIZED, "Authorization failed")
}

fn failure_msg(msg: &str) -> Item {
    Item::list(vec![
        Item::word("failure"),
        Item::list(vec![Item::string(msg)]),
    ])
}

/// `<random.microseconds@host>`, svnserve's challenge format: the number from a fresh
/// UUID of `env` (its 128 bits folded to 64), the time from its clock.
fn challenge(hostname: &str, env: &dyn Env) -> String {
    let hex: String = env.uuid().chars().filter(char::is_ascii_hexdigit).collect();
    let bits = u128::from_str_radix(&hex, 16).unwrap_or(0);
    // Truncation intended: the two halves folded into one.
    let nonce = (bits >> 64) as u64 ^ bits as u64;
    let micros = svelto_core::parse_svn_date(&env.svn_date()).unwrap_or(0);
    format!("<{nonce}.{micros}@{hostname}>")
}

/// `user digest`, split at the last space; the digest is 32 lower-case hex digits.
fn split_reply(reply: &[u8]) -> Option<(&[u8], [u8; 16])> {
    let sep = reply.iter().rposition(|b| *b == b' ')?;
    let hex = &reply[sep + 1..];
    if hex.len() != 32 {
        return None;
    }
    let nibble = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    let mut out = [0u8; 16];
    for (i, pair) in hex.chunks(2).enumerate() {
        out[i] = (nibble(pair[0])? << 4) | nibble(pair[1])?;
    }
    Some((&reply[..sep], out))
}

/// HMAC-MD5 (RFC 2104) of `challenge` keyed with `password`, as CRAM-MD5 uses it.
pub fn cram_md5_digest(challenge: &[u8], password: &[u8]) -> [u8; 16] {
    let mut key = [0u8; 64];
    if password.len() <= 64 {
        key[..password.len()].copy_from_slice(password);
    } else {
        key[..16].copy_from_slice(&Md5::digest(password));
    }
    let pad = |byte: u8| key.map(|k| k ^ byte);
    let mut inner = Md5::new();
    inner.update(pad(0x36));
    inner.update(challenge);
    let inner = inner.finalize();
    let mut outer = Md5::new();
    outer.update(pad(0x5c));
    outer.update(inner);
    outer.finalize().into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(d: [u8; 16]) -> String {
        d.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn rfc_2195_example() {
        let d = cram_md5_digest(
            b"<1896.697170952@postoffice.reston.mci.net>",
            b"tanstaaftanstaaf",
        );
        assert_eq!(hex(d), "b913a602c7eda7a495b4e6e7334d3890");
    }

    #[test]
    fn rfc_2104_long_key_is_hashed_first() {
        // RFC 2202 test case 6: an 80-byte key.
        let d = cram_md5_digest(
            b"Test Using Larger Than Block-Size Key - Hash Key First",
            &[0xaa; 80],
        );
        assert_eq!(hex(d), "6b1ab7fe4bd7bf8f0b62e6ce61b9d0cd");
    }

    #[test]
    fn replies_split_at_the_last_space() {
        let (u, d) = split_reply(b"john doe 0123456789abcdef0123456789abcdef").expect("ok");
        assert_eq!(u, b"john doe");
        assert_eq!(d[0], 0x01);
        assert!(split_reply(b"tim 0123456789ABCDEF0123456789abcdef").is_none());
        assert!(split_reply(b"tim 0123").is_none());
        assert!(split_reply(b"nospace").is_none());
    }

    #[test]
    fn challenges_differ() {
        let system = svelto_core::SystemEnv;
        let a = challenge("host", &system);
        assert!(a.starts_with('<') && a.ends_with("@host>"), "{a}");
        assert_ne!(a, challenge("host", &system));
        // Both parts come from the Env: a fixed one gives its time and counted numbers.
        let fixed = svelto_core::FixedEnv::new("2001-09-09T01:46:40.000000Z");
        assert_eq!(
            challenge("h", &fixed),
            format!("<{}.1000000000000000@h>", 0x8000_0000_0000_4001_u64)
        );
        assert_eq!(
            challenge("h", &fixed),
            format!("<{}.1000000000000000@h>", 0x8000_0000_0000_4002_u64)
        );
    }
}
