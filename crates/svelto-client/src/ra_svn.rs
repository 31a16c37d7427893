//! One svn:// session (docs/formats/svn-protocol.md): the handshake as the 1.14 client
//! makes it, commands with their auth slots, and items read one at a time from a
//! buffered transport: a TCP socket (svn://) or a tunnel agent's pipes (svn+ssh://,
//! [`crate::tunnel`]).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;

use svelto_wire::{Decoder, Item, Limits, TupleReader};

use crate::error::{Error, Result};
use crate::tunnel::Tunnel;
use crate::url::SvnUrl;

/// What the client announces (those of the 1.14 client).
const CAPABILITIES: [&str; 7] = [
    "edit-pipeline",
    "svndiff1",
    "accepts-svndiff2",
    "absent-entries",
    "depth",
    "mergeinfo",
    "log-revprops",
];

/// How much is read from the socket at a time.
const READ_CHUNK: usize = 256 * 1024;

/// Credentials: for CRAM-MD5 (svn://) or Basic (http://), and whether to trust an https://
/// server's certificate whatever it is.
#[derive(Debug, Clone, Default)]
pub struct Credentials {
    pub username: Option<String>,
    pub password: Option<String>,
    /// https://: accept any certificate (`--trust-server-cert-failures`).
    pub trust_server_cert: bool,
    /// Asked for a user name and password when the server wants them and none were
    /// given: the realm string (`<svn://host:port> realm`), the user name given if any.
    pub ask: Option<Ask>,
    /// The stock client's configuration directory (`--config-dir`; None: ~/.subversion):
    /// svn+NAME://'s tunnel agent is looked up in its `config` file's `[tunnels]`.
    pub config_dir: Option<PathBuf>,
}

/// Finds or asks for a login: (realm string, user name given) to (user name, password).
#[derive(Clone)]
pub struct Ask(pub std::sync::Arc<AskFn>);

/// (realm string, user name given) to (user name, password), or None.
pub type AskFn = dyn Fn(&str, Option<&str>) -> Option<(String, String)> + Send + Sync;

impl std::fmt::Debug for Ask {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Ask(..)")
    }
}

/// What a session reads from and writes to.
pub trait Transport: Read + Write {
    /// The error a failure of the transport gives, made more telling where it can be (a
    /// tunnel adds what became of its agent).
    fn explain(&mut self, err: Error) -> Error {
        err
    }
}

impl Transport for TcpStream {}

impl Transport for Tunnel {
    fn explain(&mut self, err: Error) -> Error {
        match err {
            Error::Tunnel { .. } => err,
            err => Error::Tunnel {
                command: self.command.clone(),
                what: format!("{err}: {}", self.post_mortem()),
            },
        }
    }
}

pub struct Session<T: Transport = TcpStream> {
    stream: T,
    /// What the errors name: `host:port`, or `the tunnel`.
    addr: String,
    /// `<svn://host:port>`, `<svn+ssh://host:port>`: the start of the realm strings.
    realm_prefix: String,
    /// Through a tunnel: EXTERNAL authentication (the tunnel's user) is offered.
    tunneled: bool,
    /// Bytes read: `buf[start..end]` not decoded yet.
    buf: Vec<u8>,
    start: usize,
    end: usize,
    decoder: Decoder,
    out: Vec<u8>,
    /// The repository's UUID.
    pub uuid: String,
    /// The repository root URL, spelled as the session URL is.
    pub root_url: String,
    /// The session URL.
    pub url: String,
    /// The server's capabilities (greeting and repos-info).
    pub caps: Vec<String>,
    creds: Credentials,
}

impl Session<TcpStream> {
    /// Connects and opens a session on `url` (svn://).
    pub fn open(url: &SvnUrl, creds: &Credentials) -> Result<Session<TcpStream>> {
        let addr = url.addr();
        let stream = TcpStream::connect(&addr).map_err(|source| Error::Connect {
            addr: addr.clone(),
            source,
        })?;
        let _ = stream.set_nodelay(true);
        // A silent peer (the network gone quiet) ends the session after http-timeout.
        let timeout = crate::config::http_timeout(creds.config_dir.as_deref(), &url.host)?;
        let _ = stream.set_read_timeout(timeout);
        let _ = stream.set_write_timeout(timeout);
        // Errors past the connect name the URL.
        Session::handshake(stream, url.url.clone(), url, creds, false)
    }
}

impl Session<Tunnel> {
    /// Starts the tunnel agent of `url` (svn+NAME://) and opens a session through it.
    pub fn open_tunnel(url: &SvnUrl, creds: &Credentials) -> Result<Session<Tunnel>> {
        let name = url.tunnel.as_deref().unwrap_or("ssh");
        let config_dir = creds
            .config_dir
            .clone()
            .or_else(crate::auth::default_config_dir);
        let argv = crate::tunnel::agent_argv(name, &url.hostinfo, config_dir.as_deref(), &|v| {
            std::env::var(v).ok()
        })?;
        let tunnel = Tunnel::spawn(&argv)?;
        let addr = format!("the tunnel to {}", url.hostinfo);
        Session::handshake(tunnel, addr, url, creds, true)
    }
}

impl<T: Transport> Session<T> {
    /// Opens a session on `url` over `stream`: the greeting, the client's answer, the login
    /// and repos-info.
    fn handshake(
        stream: T,
        addr: String,
        url: &SvnUrl,
        creds: &Credentials,
        tunneled: bool,
    ) -> Result<Session<T>> {
        let mut s = Session {
            stream,
            addr,
            realm_prefix: url.realm_prefix(),
            tunneled,
            buf: vec![0; READ_CHUNK * 2],
            start: 0,
            end: 0,
            decoder: Decoder::new(Limits {
                max_request: 1 << 30,
                max_depth: 64,
                max_word_len: 31,
                max_decoded: usize::MAX,
            }),
            out: Vec::with_capacity(4096),
            uuid: String::new(),
            root_url: String::new(),
            url: url.url.clone(),
            caps: Vec::new(),
            creds: creds.clone(),
        };
        if tunneled {
            s.skip_leading_garbage()?;
        }
        let greeting = s.read_item("reading the greeting")?;
        let results = success(&greeting, "in the greeting")?;
        let mut t = TupleReader::new(results);
        let (minver, maxver) = (t.number(), t.number());
        if !matches!((minver, maxver), (Ok(lo), Ok(hi)) if lo <= 2 && 2 <= hi) {
            return Err(protocol(
                "in the greeting",
                "no support for protocol version 2",
            ));
        }
        let _mechs = t.list();
        if let Ok(caps) = t.list() {
            s.caps = caps
                .iter()
                .filter_map(Item::as_word)
                .map(str::to_string)
                .collect();
        }
        if !s.caps.iter().any(|c| c == "edit-pipeline") {
            return Err(protocol(
                "in the greeting",
                "the server lacks edit-pipeline",
            ));
        }
        s.send(&Item::list(vec![
            Item::Number(2),
            Item::list(CAPABILITIES.map(Item::word).to_vec()),
            Item::string(url.url.as_bytes()),
            Item::string(format!("SVN/1.14.2 (svelto {})", env!("CARGO_PKG_VERSION"))),
            Item::empty_list(),
        ]))?;
        s.auth("at login")?;
        let info = s.read_item("reading repos-info")?;
        let results = success(&info, "in repos-info")?;
        let mut t = TupleReader::new(results);
        s.uuid = lossy(t.string().map_err(|e| protocol("in repos-info", e))?);
        s.root_url = lossy(t.string().map_err(|e| protocol("in repos-info", e))?);
        if let Ok(caps) = t.list() {
            s.caps
                .extend(caps.iter().filter_map(Item::as_word).map(str::to_string));
        }
        if s.root_url.len() > s.url.len() {
            return Err(protocol(
                "in repos-info",
                format!("root URL '{}' longer than '{}'", s.root_url, s.url),
            ));
        }
        Ok(s)
    }

    pub fn has_cap(&self, cap: &str) -> bool {
        self.caps.iter().any(|c| c == cap)
    }

    /// Reads an auth request and answers it (ANONYMOUS, else CRAM-MD5).
    fn auth(&mut self, while_: &str) -> Result<()> {
        let req = self.read_item(while_)?;
        let results = success(&req, while_)?;
        let mechs: Vec<&str> = results
            .first()
            .and_then(Item::as_list)
            .unwrap_or_default()
            .iter()
            .filter_map(Item::as_word)
            .collect();
        if mechs.is_empty() {
            return Ok(());
        }
        let has_user = self.creds.username.is_some() && self.creds.password.is_some();
        if self.tunneled && mechs.contains(&"EXTERNAL") {
            // The server takes the tunnel's user (on Unix, the account the agent logged
            // in to, or svnserve's --tunnel-user), as the stock client asks it to.
            self.send(&Item::list(vec![
                Item::word("EXTERNAL"),
                Item::list(vec![Item::string("")]),
            ]))?;
        } else if mechs.contains(&"ANONYMOUS") && !has_user {
            self.send(&Item::list(vec![
                Item::word("ANONYMOUS"),
                Item::list(vec![Item::string("")]),
            ]))?;
        } else if mechs.contains(&"CRAM-MD5") {
            let mut login = (self.creds.username.clone(), self.creds.password.clone());
            if login.1.is_none() {
                let realm = results
                    .get(1)
                    .and_then(Item::as_string)
                    .map(lossy)
                    .unwrap_or_default();
                let realmstring = format!("{} {realm}", self.realm_prefix);
                if let Some(ask) = &self.creds.ask {
                    if let Some((u, p)) = (ask.0)(&realmstring, login.0.as_deref()) {
                        login = (Some(u), Some(p));
                    }
                }
            }
            let (Some(user), Some(password)) = login else {
                return Err(Error::Usage(
                    "the server asks for a user name and password: give --username and --password"
                        .to_string(),
                ));
            };
            self.send(&Item::list(vec![
                Item::word("CRAM-MD5"),
                Item::empty_list(),
            ]))?;
            let step = self.read_item(while_)?;
            let challenge = match step.as_list() {
                Some([Item::Word(w), Item::List(l)]) if w == "step" => l
                    .first()
                    .and_then(Item::as_string)
                    .unwrap_or_default()
                    .to_vec(),
                _ => return Err(auth_failure(&step)),
            };
            let digest = hmac_md5(password.as_bytes(), &challenge);
            self.send(&Item::string(format!("{user} {}", hex::encode(digest))))?;
        } else if mechs.contains(&"ANONYMOUS") {
            self.send(&Item::list(vec![
                Item::word("ANONYMOUS"),
                Item::list(vec![Item::string("")]),
            ]))?;
        } else {
            return Err(Error::Server {
                chain: vec![(210007, "Cannot negotiate authentication mechanism".into())],
            });
        }
        let answer = self.read_item(while_)?;
        match answer.as_list() {
            Some([Item::Word(w), ..]) if w == "success" => Ok(()),
            _ => Err(auth_failure(&answer)),
        }
    }

    /// Writes one item.
    pub fn send(&mut self, item: &Item) -> Result<()> {
        self.out.clear();
        item.encode(&mut self.out);
        match self.stream.write_all(&self.out) {
            Ok(()) => Ok(()),
            Err(source) => {
                let err = crate::error::io_err(self.addr.clone(), source);
                Err(self.stream.explain(err))
            }
        }
    }

    /// Through a tunnel: drops what the agent or the remote shell printed before the
    /// greeting (a login banner, a dotfile's output), up to a `(` followed by a blank, as
    /// the stock client does.
    fn skip_leading_garbage(&mut self) -> Result<()> {
        let mut scanned: usize = 0;
        loop {
            let bytes = &self.buf[self.start..self.end];
            if let Some(at) = bytes[scanned.saturating_sub(1)..]
                .windows(2)
                .position(|w| w[0] == b'(' && w[1].is_ascii_whitespace())
            {
                self.start += scanned.saturating_sub(1) + at;
                return Ok(());
            }
            scanned = bytes.len();
            if scanned > 1 << 20 {
                let err = protocol(
                    "before the greeting",
                    "over 1 MiB of output that is no greeting (is svnserve -t run at the \
                     other end?)",
                );
                return Err(self.stream.explain(err));
            }
            self.fill("reading the greeting", READ_CHUNK)?;
        }
    }

    /// Reads more into `buf[end..]`, making room for `want` bytes first.
    fn fill(&mut self, while_: &str, want: usize) -> Result<()> {
        if self.buf.len() - self.end < want {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
            if self.buf.len() - self.end < want {
                self.buf.resize(self.end + want, 0);
            }
        }
        let n = loop {
            match self.stream.read(&mut self.buf[self.end..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(source) => {
                    let err = crate::error::io_err(self.addr.clone(), source);
                    return Err(self.stream.explain(err));
                }
            }
        };
        self.end += n;
        if n == 0 {
            let err = Error::Closed {
                addr: self.addr.clone(),
                while_: while_.to_string(),
            };
            return Err(self.stream.explain(err));
        }
        Ok(())
    }

    /// Sends a command and reads its auth slot.
    pub fn command(&mut self, name: &str, params: Vec<Item>) -> Result<()> {
        self.send(&svelto_wire::command(name, params))?;
        self.auth(&format!("in the auth slot of {name}"))
    }

    /// Sends a command and reads its response's results.
    pub fn call(&mut self, name: &str, params: Vec<Item>) -> Result<Vec<Item>> {
        self.command(name, params)?;
        let resp = self.read_item(&format!("reading the response to {name}"))?;
        success(&resp, &format!("in the response to {name}")).map(<[Item]>::to_vec)
    }

    /// The youngest revision.
    pub fn latest_rev(&mut self) -> Result<u64> {
        let r = self.call("get-latest-rev", vec![])?;
        r.first()
            .and_then(Item::as_number)
            .ok_or_else(|| protocol("in get-latest-rev", "no revision number"))
    }

    /// The kind of the session path at `rev`: `none`, `file` or `dir`.
    pub fn check_path(&mut self, path: &str, rev: u64) -> Result<String> {
        let r = self.call(
            "check-path",
            vec![Item::string(path), Item::list(vec![Item::Number(rev)])],
        )?;
        r.first()
            .and_then(Item::as_word)
            .map(str::to_string)
            .ok_or_else(|| protocol("in check-path", "no node kind"))
    }

    /// The properties the session path inherits at `rev`: `(repository relpath, props)`,
    /// the root first.
    #[allow(clippy::type_complexity)]
    pub fn inherited_props(&mut self, rev: u64) -> Result<Vec<(Vec<u8>, Vec<(Vec<u8>, Vec<u8>)>)>> {
        let r = self.call(
            "get-iprops",
            vec![Item::string(""), Item::list(vec![Item::Number(rev)])],
        )?;
        let mut out = Vec::new();
        for entry in r.first().and_then(Item::as_list).unwrap_or_default() {
            let mut t = TupleReader::from_item(entry).map_err(|e| protocol("in get-iprops", e))?;
            let path = t.string().map_err(|e| protocol("in get-iprops", e))?;
            let path = path.strip_prefix(b"/").unwrap_or(path).to_vec();
            let mut props = Vec::new();
            for p in t.list().map_err(|e| protocol("in get-iprops", e))? {
                let mut pt = TupleReader::from_item(p).map_err(|e| protocol("in get-iprops", e))?;
                let name = pt.string().map_err(|e| protocol("in get-iprops", e))?;
                let value = pt.string().map_err(|e| protocol("in get-iprops", e))?;
                props.push((name.to_vec(), value.to_vec()));
            }
            out.push((path, props));
        }
        Ok(out)
    }

    /// The next item from the server.
    pub fn read_item(&mut self, while_: &str) -> Result<Item> {
        loop {
            match self.decoder.decode(&self.buf[self.start..self.end]) {
                Ok(Some((item, used))) => {
                    self.start += used;
                    if self.start == self.end {
                        self.start = 0;
                        self.end = 0;
                    }
                    return Ok(item);
                }
                Ok(None) => {}
                Err(e) => return Err(protocol(while_, e)),
            }
            // Room for the rest of a long string at once, else a chunk; the unread bytes
            // moved to the front first when that makes the room.
            let want = self.decoder.hint().unwrap_or(0).clamp(READ_CHUNK, 64 << 20);
            self.fill(while_, want)?;
        }
    }
}

/// The results of `( success ( ... ) )`, or the server's failure as an error.
pub fn success<'a>(item: &'a Item, while_: &str) -> Result<&'a [Item]> {
    match item.as_list() {
        Some([Item::Word(w), Item::List(results), ..]) if w == "success" => Ok(results),
        Some([Item::Word(w)]) if w == "success" => Ok(&[]),
        Some([Item::Word(w), Item::List(chain), ..]) if w == "failure" => Err(failure(chain)),
        _ => Err(protocol(while_, format!("not a response: {}", short(item)))),
    }
}

/// A failure's error chain as an error.
pub fn failure(chain: &[Item]) -> Error {
    let chain = chain
        .iter()
        .filter_map(|link| {
            let l = link.as_list()?;
            Some((l.first()?.as_number()?, lossy(l.get(1)?.as_string()?)))
        })
        .collect();
    Error::Server { chain }
}

fn auth_failure(item: &Item) -> Error {
    let msg = item
        .as_list()
        .and_then(|l| l.get(1))
        .and_then(Item::as_list)
        .and_then(|l| l.first())
        .and_then(Item::as_string)
        .map(lossy)
        .unwrap_or_else(|| short(item));
    Error::Server {
        chain: vec![(170001, format!("Authentication error from server: {msg}"))],
    }
}

pub fn protocol(while_: &str, what: impl std::fmt::Display) -> Error {
    Error::Protocol {
        while_: while_.to_string(),
        what: what.to_string(),
    }
}

/// An item shown in an error message, cut to a readable length.
pub fn short(item: &Item) -> String {
    let bytes = item.to_bytes();
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(200)]).into_owned();
    if bytes.len() > 200 {
        format!("{text}...")
    } else {
        text
    }
}

pub fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// HMAC-MD5 (RFC 2104).
fn hmac_md5(key: &[u8], message: &[u8]) -> [u8; 16] {
    use md5::{Digest, Md5};
    let mut k = [0u8; 64];
    if key.len() > 64 {
        k[..16].copy_from_slice(&Md5::digest(key));
    } else {
        k[..key.len()].copy_from_slice(key);
    }
    let mut inner = Md5::new();
    inner.update(k.map(|b| b ^ 0x36));
    inner.update(message);
    let mut outer = Md5::new();
    outer.update(k.map(|b| b ^ 0x5c));
    outer.update(inner.finalize());
    outer.finalize().into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_md5_is_rfc_2104s() {
        // RFC 2104's second test vector.
        assert_eq!(
            hex::encode(hmac_md5(b"Jefe", b"what do ya want for nothing?")),
            "750c783e6ab0b503eaa86e310a5db738"
        );
    }
}
