//! `svn://` and `svn+TUNNEL://` URLs: where to connect (or what to tunnel to) and which
//! path they name.

use crate::error::{Error, Result};

/// A parsed `svn://host[:port]/path` or `svn+TUNNEL://[user@]host[:port]/path` URL, kept
/// as the user spelled it (the server derives the repository root URL from that spelling).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SvnUrl {
    /// The URL without a trailing `/`.
    pub url: String,
    pub host: String,
    /// The port given, else 3690 for svn:// and 0 for a tunnel (as the stock client's
    /// realm strings show it).
    pub port: u16,
    /// `svn+ssh://`: `ssh`, the tunnel scheme's name.
    pub tunnel: Option<String>,
    /// What the stock client hands its tunnel agent: the URL's authority (`[user@]host
    /// [:port]`) with its `%XX` escapes decoded.
    pub hostinfo: String,
}

impl SvnUrl {
    pub fn parse(url: &str) -> Result<SvnUrl> {
        let bad = |reason: &str| Error::Url {
            url: url.to_string(),
            reason: reason.to_string(),
        };
        let Some((scheme, rest)) = url.split_once("://") else {
            return Err(bad("no scheme (svn://HOST/PATH)"));
        };
        let tunnel = match scheme.split_once('+') {
            None if scheme.eq_ignore_ascii_case("svn") => None,
            Some((svn, name)) if svn.eq_ignore_ascii_case("svn") && !name.is_empty() => {
                Some(name.to_string())
            }
            _ => {
                return Err(bad(&format!(
                    "scheme '{scheme}' is not one of svn://, svn+ssh:// (svn+NAME://), \
                     http://, https://"
                )))
            }
        };
        let (authority, _) = rest.split_once('/').unwrap_or((rest, ""));
        let hostport = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
        let (host, port) = if let Some(inner) = hostport.strip_prefix('[') {
            let (h, after) = inner
                .split_once(']')
                .ok_or_else(|| bad("unclosed '[' in the host"))?;
            (h.to_string(), after.strip_prefix(':'))
        } else {
            match hostport.split_once(':') {
                Some((h, p)) => (h.to_string(), Some(p)),
                None => (hostport.to_string(), None),
            }
        };
        if host.is_empty() {
            return Err(bad("no host"));
        }
        let port = match port {
            None | Some("") if tunnel.is_some() => 0,
            None | Some("") => 3690,
            Some(p) => p
                .parse()
                .map_err(|_| bad(&format!("port '{p}' is not a number from 1 to 65535")))?,
        };
        let trimmed = url.trim_end_matches('/');
        let url = if trimmed.len() < scheme.len() + 3 + authority.len() {
            url.to_string()
        } else {
            trimmed.to_string()
        };
        let hostinfo = String::from_utf8_lossy(&decode(authority)).into_owned();
        // As the stock client checks it before handing it to the agent: an argument that
        // could be taken for an option, or carry anything but a host, is refused.
        if tunnel.is_some()
            && (hostinfo.starts_with('-')
                || !hostinfo
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || ":.-_[]@".contains(c)))
        {
            return Err(bad(&format!("invalid host '{authority}'")));
        }
        Ok(SvnUrl {
            url,
            host,
            port,
            tunnel,
            hostinfo,
        })
    }

    /// The prefix of the realm strings the stock client files logins under:
    /// `<svn://host:port>`, `<svn+ssh://host:port>`.
    pub fn realm_prefix(&self) -> String {
        match &self.tunnel {
            Some(t) => format!("<svn+{t}://{}:{}>", self.host, self.port),
            None => format!("<svn://{}>", self.addr()),
        }
    }

    /// `host:port` to connect to.
    pub fn addr(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

/// The repository path of `url` below `root` (both as the server spells them), decoded.
pub fn relpath_below(root: &str, url: &str) -> Option<String> {
    let rest = url.strip_prefix(root)?;
    let rest = match rest.strip_prefix('/') {
        Some(r) => r,
        None if rest.is_empty() => rest,
        None => return None,
    };
    String::from_utf8(decode(rest)).ok()
}

/// `%XX` escapes decoded.
pub fn decode(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%' && i + 2 < b.len() {
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

/// A repository relpath percent-encoded for a URL, as the stock client encodes it.
pub fn encode(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for &b in path.as_bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/!$&'()*+,;=:@".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_port_and_path() {
        let u = SvnUrl::parse("svn://127.0.0.1:3691/repo/trunk/").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(u.url, "svn://127.0.0.1:3691/repo/trunk");
        assert_eq!(u.addr(), "127.0.0.1:3691");
        let u = SvnUrl::parse("svn://[::1]/r").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(u.addr(), "[::1]:3690");
        assert!(SvnUrl::parse("http://h/r").is_err());
        assert!(SvnUrl::parse("svn://h:99999/r").is_err());
        assert!(SvnUrl::parse("svn:///r").is_err());
        assert_eq!(u.tunnel, None);
    }

    #[test]
    fn tunnel_urls_keep_their_hostinfo() {
        let u = SvnUrl::parse("svn+ssh://alice@example.org:2222/srv/repo/")
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(u.tunnel.as_deref(), Some("ssh"));
        assert_eq!(u.hostinfo, "alice@example.org:2222");
        assert_eq!(u.url, "svn+ssh://alice@example.org:2222/srv/repo");
        assert_eq!(u.realm_prefix(), "<svn+ssh://example.org:2222>");
        let u = SvnUrl::parse("SVN+mine://h%2Dx/r").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(u.tunnel.as_deref(), Some("mine"));
        assert_eq!(u.hostinfo, "h-x");
        assert_eq!(u.realm_prefix(), "<svn+mine://h%2Dx:0>");
        // Nothing the agent could take for an option or a second argument.
        for bad in [
            "svn+ssh://-oProxyCommand=x/r",
            "svn+ssh://%2DoProxyCommand=x/r",
            "svn+ssh://a%20b/r",
            "svn+ssh://h;rm/r",
            "svn+://h/r",
            "svnx://h/r",
        ] {
            assert!(SvnUrl::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn relpaths_are_decoded() {
        assert_eq!(
            relpath_below("svn://h/r", "svn://h/r/a%20b/%C3%9C").as_deref(),
            Some("a b/Ü")
        );
        assert_eq!(relpath_below("svn://h/r", "svn://h/r").as_deref(), Some(""));
        assert_eq!(relpath_below("svn://h/r", "svn://h/rx"), None);
        assert_eq!(encode("a b/Ü"), "a%20b/%C3%9C");
        assert_eq!(decode("100%"), b"100%");
    }
}
