//! One http(s):// session (Subversion's HTTP protocol, v2 as mod_dav_svn 1.14 speaks it):
//! OPTIONS for the repository's root, UUID, youngest revision, `!svn/me` and
//! `!svn/rvr` stubs and capabilities; PROPFIND for a path's kind; the
//! inherited-props-report; and the update-report asked with `send-all="true"`, so that
//! properties and texts (base64 svndiff) come inline in the one response, read as it
//! streams and handed on as svn://'s editor commands. (ra_serf asks for "skelta" reports
//! and fetches each text with its own GET over several connections; one streamed response
//! needs no second connection and no per-file round trip.)

use std::collections::VecDeque;
use std::io::{BufReader, Read};

use base64::Engine;
use quick_xml::events::{BytesStart, Event};
use svelto_wire::Item;

use crate::error::{Error, Result};
use crate::ra::{Iprops, Ra, ReportPath};
use crate::ra_svn::{lossy, protocol, Credentials};

/// The capability that says the server answers inherited-props-report.
const CAP_IPROPS: &str = "http://subversion.tigris.org/xmlns/dav/svn/inherited-props";

/// What the client announces in its `DAV:` header (as the 1.14 client does).
const CLIENT_DAV: &str = "http://subversion.tigris.org/xmlns/dav/svn/depth, \
    http://subversion.tigris.org/xmlns/dav/svn/mergeinfo, \
    http://subversion.tigris.org/xmlns/dav/svn/log-revprops";

/// The largest answer read whole (OPTIONS, PROPFIND, error bodies, inherited props).
const SMALL_BODY: u64 = 16 << 20;

/// How much base64 text is decoded at a time into one `textdelta-chunk`.
const TEXT_CHUNK: usize = 256 * 1024;

pub struct DavSession {
    agent: ureq::Agent,
    /// `scheme://authority`.
    origin: String,
    /// The session URL, without a trailing `/`.
    url: String,
    root_url: String,
    uuid: String,
    youngest: Option<u64>,
    /// Paths on the server (URL-encoded, absolute).
    me_resource: String,
    rev_root_stub: String,
    /// The session path below the root, URL-encoded ("" for the root).
    relpath_enc: String,
    caps: Vec<String>,
    authorization: std::cell::RefCell<Option<String>>,
    /// Finds or asks for a login on a 401; `asked`: it was asked once already.
    ask: Option<crate::ra_svn::Ask>,
    asked: std::cell::Cell<bool>,
    username: Option<String>,
    edits: Option<EditStream>,
}

fn bad_url(url: &str, reason: &str) -> Error {
    Error::Url {
        url: url.to_string(),
        reason: reason.to_string(),
    }
}

/// XML character data (and attribute values) escaped.
fn xml_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
    out
}

fn header<'a>(resp: &'a ureq::http::Response<ureq::Body>, name: &str) -> Option<&'a str> {
    resp.headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
}

/// The human-readable message of a mod_dav_svn error body, if it has one.
fn error_message(body: &[u8]) -> Option<String> {
    let mut reader = quick_xml::Reader::from_reader(body);
    let mut buf = Vec::new();
    let mut inside = false;
    let mut out = String::new();
    loop {
        match reader.read_event_into(&mut buf) {
            Ok(Event::Start(e)) if e.local_name().as_ref() == b"human-readable" => inside = true,
            Ok(Event::End(e)) if e.local_name().as_ref() == b"human-readable" => {
                return Some(out.trim().to_string())
            }
            Ok(Event::Text(t)) if inside => {
                out.push_str(&t.unescape().map(|s| s.into_owned()).unwrap_or_default())
            }
            Ok(Event::Eof) | Err(_) => return None,
            _ => {}
        }
        buf.clear();
    }
}

impl DavSession {
    /// An update-report asked with send-all (an update, or a switch to `dst`), its
    /// response then read as the drive.
    fn report(
        &mut self,
        rev: u64,
        target: &str,
        dst: Option<&str>,
        depth: &str,
        report: &[ReportPath],
    ) -> Result<()> {
        let src = self.url[self.origin.len()..].to_string();
        let mut body = format!(
            r#"<?xml version="1.0" encoding="utf-8"?><S:update-report xmlns:S="svn:" send-all="true"><S:src-path>{}</S:src-path><S:target-revision>{rev}</S:target-revision>"#,
            xml_escape(if src.is_empty() { "/" } else { &src })
        );
        if let Some(dst) = dst {
            body.push_str(&format!(
                "<S:dst-path>{}</S:dst-path><S:ignore-ancestry>yes</S:ignore-ancestry>",
                xml_escape(dst)
            ));
        }
        if !target.is_empty() {
            body.push_str(&format!(
                "<S:update-target>{}</S:update-target>",
                xml_escape(target)
            ));
        }
        if depth == "files" || depth == "empty" {
            body.push_str("<S:recursive>no</S:recursive>");
        }
        body.push_str(&format!("<S:depth>{}</S:depth>", xml_escape(depth)));
        for p in report {
            if p.missing && !p.path.is_empty() {
                body.push_str(&format!("<S:missing>{}</S:missing>", xml_escape(&p.path)));
                continue;
            }
            body.push_str(&format!(
                r#"<S:entry rev="{}" depth="{}"{}>{}</S:entry>"#,
                p.rev,
                xml_escape(&p.depth),
                if p.start_empty {
                    r#" start-empty="true""#
                } else {
                    ""
                },
                xml_escape(&p.path)
            ));
            if p.missing {
                body.push_str(&format!("<S:missing>{}</S:missing>", xml_escape(&p.path)));
            }
        }
        body.push_str("</S:update-report>");
        let me = self.me_resource.clone();
        let resp = self.request(
            "REPORT",
            &me,
            Some("0"),
            body.as_bytes(),
            "in update-report",
        )?;
        if resp.status().as_u16() == 404 {
            return Err(protocol("in update-report", format!("'{me}' not found")));
        }
        let reader = resp.into_body().into_reader();
        let mut edits = EditStream::new(Box::new(Prefetch::spawn(Box::new(reader))));
        edits.name = format!("the update-report of {}{me}", self.origin);
        self.edits = Some(edits);
        Ok(())
    }

    /// `scheme://host:port`, the port written even when it is the scheme's own (as in
    /// the stock client's realm strings).
    fn origin_with_port(&self) -> String {
        let (scheme, authority) = self.origin.split_once("://").unwrap_or(("http", ""));
        let has_port = match authority.rfind(']') {
            Some(i) => authority[i..].contains(':'),
            None => authority.contains(':'),
        };
        if has_port {
            self.origin.clone()
        } else {
            let port = if scheme == "https" { 443 } else { 80 };
            format!("{}:{port}", self.origin)
        }
    }

    pub fn open(url: &str, creds: &Credentials) -> Result<DavSession> {
        let (scheme, rest) = url
            .split_once("://")
            .ok_or_else(|| bad_url(url, "no scheme"))?;
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        if authority.is_empty() || authority.contains('@') {
            return Err(bad_url(
                url,
                "no host (or a user name in the URL: give --username)",
            ));
        }
        if path.contains(['?', '#']) {
            return Err(bad_url(url, "a query or fragment in a repository URL"));
        }
        let scheme = scheme.to_ascii_lowercase();
        let origin = format!("{scheme}://{authority}");
        let path = path.trim_end_matches('/');
        let session_url = format!("{origin}{path}");
        // A silent peer (the network gone quiet) fails a request after http-timeout
        // without a byte, as the stock client's does.
        let host = match authority.rfind(']') {
            Some(i) => authority[..i].trim_start_matches('['),
            None => authority.split(':').next().unwrap_or(authority),
        };
        let timeout = crate::config::http_timeout(creds.config_dir.as_deref(), host)?;
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_connect(timeout)
            .timeout_per_read(timeout)
            .timeout_per_write(timeout)
            .http_status_as_error(false)
            .allow_non_standard_methods(true)
            .max_redirects(0)
            .tls_config(
                ureq::tls::TlsConfig::builder()
                    .disable_verification(creds.trust_server_cert)
                    .build(),
            )
            .user_agent(format!(
                "SVN/1.14.2 (svelto {}) serf/1.3.9",
                env!("CARGO_PKG_VERSION")
            ))
            .build()
            .into();
        // A user name without a password is completed by the cache or a prompt.
        let authorization = match (&creds.username, &creds.password) {
            (Some(u), Some(p)) => Some(basic(u, p)),
            (Some(u), None) if creds.ask.is_none() => Some(basic(u, "")),
            _ => None,
        };
        let mut s = DavSession {
            agent,
            origin,
            url: session_url.clone(),
            root_url: String::new(),
            uuid: String::new(),
            youngest: None,
            me_resource: String::new(),
            rev_root_stub: String::new(),
            relpath_enc: String::new(),
            caps: Vec::new(),
            authorization: std::cell::RefCell::new(authorization),
            ask: creds.ask.clone(),
            asked: std::cell::Cell::new(false),
            username: creds.username.clone(),
            edits: None,
        };
        let body = r#"<?xml version="1.0" encoding="utf-8"?><D:options xmlns:D="DAV:"><D:activity-collection-set/></D:options>"#;
        let target = if path.is_empty() { "/" } else { path };
        let resp = s.request("OPTIONS", target, None, body.as_bytes(), "in OPTIONS")?;
        let need = |name: &str| {
            header(&resp, name).map(str::to_string).ok_or_else(|| {
                protocol(
                    "in the answer to OPTIONS",
                    format!(
                        "no {name} header: '{session_url}' is not a Subversion repository \
                         served over HTTP v2 (mod_dav_svn 1.7 or later)"
                    ),
                )
            })
        };
        let root_path = need("SVN-Repository-Root")?;
        s.uuid = need("SVN-Repository-UUID")?;
        s.me_resource = need("SVN-Me-Resource")?;
        s.rev_root_stub = need("SVN-Rev-Root-Stub")?;
        s.youngest = header(&resp, "SVN-Youngest-Rev").and_then(|v| v.parse().ok());
        for v in resp.headers().get_all("DAV") {
            if let Ok(v) = v.to_str() {
                s.caps.extend(
                    v.split(',')
                        .map(|c| c.trim().to_string())
                        .filter(|c| !c.is_empty()),
                );
            }
        }
        drop(resp);
        let root_path = root_path.trim_end_matches('/');
        s.root_url = format!("{}{root_path}", s.origin);
        let rel = if path == root_path {
            ""
        } else {
            path.strip_prefix(root_path)
                .and_then(|r| r.strip_prefix('/'))
                .ok_or_else(|| {
                    protocol(
                        "in the answer to OPTIONS",
                        format!("repository root '{root_path}' is not above '{path}'"),
                    )
                })?
        };
        s.relpath_enc = rel.to_string();
        Ok(s)
    }

    /// Sends a request; a status other than 2xx (or 404 when `ok_404`) is an error naming
    /// it and the server's message.
    fn request(
        &self,
        method: &str,
        path: &str,
        depth: Option<&str>,
        body: &[u8],
        while_: &str,
    ) -> Result<ureq::http::Response<ureq::Body>> {
        let uri = format!("{}{path}", self.origin);
        let mut req = ureq::http::Request::builder()
            .method(method)
            .uri(&uri)
            .header("DAV", CLIENT_DAV)
            .header("Content-Type", "text/xml");
        if let Some(d) = depth {
            req = req.header("Depth", d);
        }
        if let Some(a) = self.authorization.borrow().as_deref() {
            req = req.header("Authorization", a);
        }
        let retry = (method, path, depth, body);
        if method == "REPORT" {
            req = req.header(
                "Accept-Encoding",
                "svndiff2;q=0.9,svndiff1;q=0.8,svndiff;q=0.7",
            );
        }
        let req = req.body(body.to_vec()).map_err(|e| Error::Url {
            url: uri.clone(),
            reason: e.to_string(),
        })?;
        let resp = self.agent.run(req).map_err(|e| http_error(&uri, e))?;
        let status = resp.status().as_u16();
        if status == 401 && !self.asked.get() {
            // A login from the cache or a prompt, once, then the request again.
            self.asked.set(true);
            let realm = resp
                .headers()
                .get_all("WWW-Authenticate")
                .iter()
                .filter_map(|v| v.to_str().ok())
                .find_map(basic_realm);
            if let (Some(realm), Some(ask)) = (realm, self.ask.clone()) {
                let realmstring = format!("<{}> {realm}", self.origin_with_port());
                if let Some((u, p)) = (ask.0)(&realmstring, self.username.as_deref()) {
                    *self.authorization.borrow_mut() = Some(basic(&u, &p));
                    let (method, path, depth, body) = retry;
                    return self.request(method, path, depth, body, while_);
                }
            }
        }
        if (200..300).contains(&status) || status == 404 {
            return Ok(resp);
        }
        let mut text = Vec::new();
        let _ = resp
            .into_body()
            .into_with_config()
            .limit(SMALL_BODY)
            .reader()
            .take(SMALL_BODY)
            .read_to_end(&mut text);
        let msg = error_message(&text).unwrap_or_default();
        let what = match status {
            401 => format!("authorization failed for '{uri}' (give --username and --password)"),
            403 => format!("access to '{uri}' forbidden"),
            _ => format!("{method} '{uri}': HTTP status {status}"),
        };
        Err(Error::Http(if msg.is_empty() {
            format!("{what} {while_}")
        } else {
            format!("{what} {while_}: {msg}")
        }))
    }

    /// A small answer read whole.
    fn read_small(resp: ureq::http::Response<ureq::Body>, uri: &str) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        resp.into_body()
            .into_with_config()
            .limit(SMALL_BODY)
            .reader()
            .read_to_end(&mut out)
            .map_err(|source| crate::error::io_err(uri, source))?;
        Ok(out)
    }

    /// The session path at `rev`, on the server (`!svn/rvr/REV/PATH`).
    fn stable_path(&self, rev: u64) -> String {
        if self.relpath_enc.is_empty() {
            format!("{}/{rev}", self.rev_root_stub)
        } else {
            format!("{}/{rev}/{}", self.rev_root_stub, self.relpath_enc)
        }
    }
}

fn http_error(uri: &str, e: ureq::Error) -> Error {
    match e {
        ureq::Error::Io(source) => crate::error::io_err(uri, source),
        e @ ureq::Error::Timeout(_) => crate::error::io_err(uri, std::io::Error::other(e)),
        e => Error::Connect {
            addr: uri.to_string(),
            source: std::io::Error::other(e.to_string()),
        },
    }
}

impl Ra for DavSession {
    fn uuid(&self) -> &str {
        &self.uuid
    }

    fn root_url(&self) -> &str {
        &self.root_url
    }

    fn url(&self) -> &str {
        &self.url
    }

    fn latest_rev(&mut self) -> Result<u64> {
        self.youngest
            .ok_or_else(|| protocol("in the answer to OPTIONS", "no SVN-Youngest-Rev header"))
    }

    fn dated_rev(&mut self, date: &str) -> Result<u64> {
        let body = format!(
            r#"<?xml version="1.0" encoding="utf-8"?><S:dated-rev-report xmlns:S="svn:" xmlns:D="DAV:"><D:creationdate>{}</D:creationdate></S:dated-rev-report>"#,
            xml_escape(date)
        );
        let me = self.me_resource.clone();
        let resp = self.request(
            "REPORT",
            &me,
            Some("0"),
            body.as_bytes(),
            "in dated-rev-report",
        )?;
        let text = Self::read_small(resp, &me)?;
        let text = String::from_utf8_lossy(&text);
        text.split_once("version-name>")
            .and_then(|(_, rest)| rest.split('<').next())
            .and_then(|n| n.trim().parse().ok())
            .ok_or_else(|| protocol("in dated-rev-report", "no version-name in the answer"))
    }

    fn check_path(&mut self, rev: u64) -> Result<String> {
        let body = r#"<?xml version="1.0" encoding="utf-8"?><propfind xmlns="DAV:"><prop><resourcetype/></prop></propfind>"#;
        let path = self.stable_path(rev);
        let resp = self.request("PROPFIND", &path, Some("0"), body.as_bytes(), "in PROPFIND")?;
        if resp.status().as_u16() == 404 {
            return Ok("none".into());
        }
        let text = Self::read_small(resp, &path)?;
        let mut reader = quick_xml::Reader::from_reader(text.as_slice());
        let mut buf = Vec::new();
        let mut in_type = false;
        loop {
            match reader.read_event_into(&mut buf) {
                Ok(Event::Start(e)) if e.local_name().as_ref() == b"resourcetype" => in_type = true,
                Ok(Event::End(e)) if e.local_name().as_ref() == b"resourcetype" => in_type = false,
                Ok(Event::Start(e) | Event::Empty(e))
                    if in_type && e.local_name().as_ref() == b"collection" =>
                {
                    return Ok("dir".into())
                }
                Ok(Event::Eof) => return Ok("file".into()),
                Err(e) => {
                    return Err(protocol(
                        "in the answer to PROPFIND",
                        format!("malformed XML: {e}"),
                    ))
                }
                _ => {}
            }
            buf.clear();
        }
    }

    fn inherited_props(&mut self, rev: u64) -> Result<Option<Iprops>> {
        if !self.caps.iter().any(|c| c == CAP_IPROPS) {
            return Ok(None);
        }
        let body = format!(
            r#"<?xml version="1.0" encoding="utf-8"?><S:inherited-props-report xmlns:S="svn:"><S:revision>{rev}</S:revision><S:path></S:path></S:inherited-props-report>"#
        );
        let path = self.stable_path(rev);
        let resp = self.request("REPORT", &path, Some("0"), body.as_bytes(), "in REPORT")?;
        if resp.status().as_u16() == 404 {
            return Err(protocol(
                "in inherited-props-report",
                format!("'{path}' not found"),
            ));
        }
        let text = Self::read_small(resp, &path)?;
        parse_iprops(&text).map(Some)
    }

    fn update(&mut self, rev: u64, target: &str, depth: &str, report: &[ReportPath]) -> Result<()> {
        self.report(rev, target, None, depth, report)
    }

    fn switch(&mut self, rev: u64, url: &str, depth: &str, report: &[ReportPath]) -> Result<()> {
        self.report(rev, "", Some(url), depth, report)
    }

    fn next_edit(&mut self) -> Result<Item> {
        match self.edits.as_mut() {
            Some(e) => e.next(),
            None => Err(protocol(
                "in the update drive",
                "no update-report asked for",
            )),
        }
    }
    fn close_edit(&mut self) -> Result<()> {
        self.edits = None;
        Ok(())
    }

    fn abort_edit(&mut self) -> Error {
        self.edits = None;
        protocol("in the update drive", "the server aborted the edit")
    }
}

/// The inherited-props-report's answer.
fn parse_iprops(text: &[u8]) -> Result<Iprops> {
    let bad = |what: String| protocol("in the answer to inherited-props-report", what);
    let mut reader = quick_xml::Reader::from_reader(text);
    let mut buf = Vec::new();
    let mut out: Iprops = Vec::new();
    let mut field: Option<&'static str> = None;
    let mut base64 = false;
    let mut acc = Vec::new();
    let mut name = Vec::new();
    loop {
        let ev = reader
            .read_event_into(&mut buf)
            .map_err(|e| bad(format!("malformed XML: {e}")))?;
        match ev {
            Event::Start(e) => {
                if e.local_name().as_ref() == b"iprop-item" {
                    out.push((Vec::new(), Vec::new()));
                }
                field = field_of(e.local_name().as_ref());
                if field == Some("value") {
                    base64 = attr(&e, b"encoding").as_deref() == Some("base64");
                }
            }
            Event::Text(t) if field.is_some() => {
                let s = t
                    .unescape()
                    .map_err(|e| bad(format!("malformed XML: {e}")))?;
                acc.extend_from_slice(s.as_bytes());
            }
            Event::CData(t) if field.is_some() => acc.extend_from_slice(&t),
            Event::End(_) | Event::Empty(_) => {
                let closed = match &ev {
                    Event::Empty(e) => {
                        let f = field_of(e.local_name().as_ref());
                        if f == Some("value") {
                            base64 = attr(e, b"encoding").as_deref() == Some("base64");
                        }
                        f
                    }
                    _ => field.take(),
                };
                if let Some(f) = closed {
                    let value = std::mem::take(&mut acc);
                    let item = out
                        .last_mut()
                        .ok_or_else(|| bad(format!("{f} outside an iprop-item")))?;
                    match f {
                        "path" => item.0 = value.strip_prefix(b"/").unwrap_or(&value).to_vec(),
                        "name" => name = value,
                        _ => {
                            let v = if base64 {
                                decode_base64(&value)
                                    .map_err(|e| bad(format!("property '{}': {e}", lossy(&name))))?
                            } else {
                                value
                            };
                            item.1.push((std::mem::take(&mut name), v));
                        }
                    }
                }
            }
            Event::Eof => break,
            _ => {}
        }
        buf.clear();
    }
    Ok(out)
}

/// The field of an inherited-props-report element.
fn field_of(local: &[u8]) -> Option<&'static str> {
    match local {
        b"iprop-path" => Some("path"),
        b"iprop-propname" => Some("name"),
        b"iprop-propval" => Some("value"),
        _ => None,
    }
}

fn decode_base64(text: &[u8]) -> std::result::Result<Vec<u8>, String> {
    let clean: Vec<u8> = text
        .iter()
        .copied()
        .filter(|b| !b.is_ascii_whitespace())
        .collect();
    base64::engine::general_purpose::STANDARD
        .decode(clean)
        .map_err(|e| format!("bad base64: {e}"))
}

/// An attribute's value by its local name, unescaped.
fn attr(e: &BytesStart, local: &[u8]) -> Option<String> {
    e.attributes().flatten().find_map(|a| {
        (a.key.local_name().as_ref() == local).then(|| {
            a.unescape_value()
                .map(|v| v.into_owned())
                .unwrap_or_else(|_| lossy(&a.value))
        })
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Dir,
    File,
}

struct Frame {
    kind: Kind,
    token: Vec<u8>,
    /// Relative to the session ("" for its root).
    path: String,
    /// The MD5 of the file's text (`<V:md5-checksum>`).
    md5: Option<String>,
}

/// What character data is being collected for.
enum Collect {
    None,
    /// `<S:set-prop name=...>`: the name, base64 or not, the text so far.
    Prop(Vec<u8>, bool, Vec<u8>),
    /// `<S:txdelta>`: base64 left over from the last piece (fewer than 4 characters).
    Text(Vec<u8>),
    /// `<V:md5-checksum>`.
    Md5(Vec<u8>),
    /// `<D:checked-in><D:href>`: a node's version URL.
    Href(Vec<u8>),
}

/// `Authorization: Basic` for a login.
fn basic(user: &str, password: &str) -> String {
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"))
    )
}

/// The realm of a `WWW-Authenticate: Basic realm="..."` header.
fn basic_realm(header: &str) -> Option<String> {
    let rest = header.trim();
    if !rest.get(..5)?.eq_ignore_ascii_case("basic") {
        return None;
    }
    let at = rest.find("realm=")? + 6;
    let v = &rest[at..];
    Some(match v.strip_prefix('"') {
        Some(q) => q.split('"').next().unwrap_or("").to_string(),
        None => v.split([',', ' ']).next().unwrap_or("").to_string(),
    })
}

/// The update-report's XML read as it arrives, made into svn://'s editor commands.
struct EditStream {
    reader: quick_xml::Reader<BufReader<Box<dyn Read + Send>>>,
    buf: Vec<u8>,
    out: VecDeque<Item>,
    stack: Vec<Frame>,
    collect: Collect,
    next_token: u64,
    started: bool,
    done: bool,
    /// Inside `<S:txdelta>`: its base64 is read straight from the stream, a buffer at a
    /// time (a text node whole would hold a large file's text in memory).
    raw_text: bool,
    /// What the errors of reading name: the report's URL.
    name: String,
}

/// Appends `text` to `out` without its ASCII whitespace. mod_dav_svn breaks its base64
/// into lines of 76 characters: the runs between line feeds (found with memchr) are
/// copied whole, and the bytes are filtered one by one only when other whitespace shows
/// up among them (a byte by byte filter of every text was the export's largest cost in
/// user space, 12% of its CPU profile against Apache).
fn strip_whitespace(text: &[u8], out: &mut Vec<u8>) {
    let start = out.len();
    out.reserve(text.len());
    let mut at = 0;
    for nl in memchr::memchr_iter(b'\n', text) {
        out.extend_from_slice(&text[at..nl]);
        at = nl + 1;
    }
    out.extend_from_slice(&text[at..]);
    let copied = &out[start..];
    if memchr::memchr3(b'\r', b' ', b'\t', copied).is_some()
        || memchr::memchr(0x0c, copied).is_some()
    {
        let mut i = start;
        for j in start..out.len() {
            let b = out[j];
            if !b.is_ascii_whitespace() {
                out[i] = b;
                i += 1;
            }
        }
        out.truncate(i);
    }
}

/// How many pieces of a response [`Prefetch`] reads ahead (of up to [`TEXT_CHUNK`] bytes
/// each: 16 MiB at most in memory).
const PREFETCH_PIECES: usize = 64;

/// A response body read by a thread of its own, up to [`PREFETCH_PIECES`] pieces ahead of
/// the reader: the server keeps sending while the drive decodes and writes files (read in
/// the same thread, the two took turns: an export from Apache waited for the report's
/// bytes, then the report waited for the export).
struct Prefetch {
    pieces: std::sync::mpsc::Receiver<std::io::Result<Vec<u8>>>,
    piece: Vec<u8>,
    at: usize,
    done: bool,
}

impl Prefetch {
    fn spawn(mut body: Box<dyn Read + Send>) -> Prefetch {
        let (tx, rx) = std::sync::mpsc::sync_channel(PREFETCH_PIECES);
        std::thread::spawn(move || loop {
            let mut piece = vec![0; TEXT_CHUNK];
            let r = loop {
                match body.read(&mut piece) {
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    r => break r,
                }
            };
            let end = !matches!(r, Ok(n) if n > 0);
            let r = r.map(|n| {
                piece.truncate(n);
                piece
            });
            // A closed channel: the reader is gone (an error, or the drive ended).
            if tx.send(r).is_err() || end {
                return;
            }
        });
        Prefetch {
            pieces: rx,
            piece: Vec::new(),
            at: 0,
            done: false,
        }
    }
}

impl Read for Prefetch {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.at == self.piece.len() {
            if self.done {
                return Ok(0);
            }
            match self.pieces.recv() {
                Ok(Ok(piece)) => {
                    self.done = piece.is_empty();
                    self.piece = piece;
                    self.at = 0;
                }
                Ok(Err(e)) => {
                    self.done = true;
                    return Err(e);
                }
                Err(_) => {
                    self.done = true;
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::UnexpectedEof,
                        "the thread reading the response stopped",
                    ));
                }
            }
        }
        let n = buf.len().min(self.piece.len() - self.at);
        buf[..n].copy_from_slice(&self.piece[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

fn bad_report(what: impl std::fmt::Display) -> Error {
    protocol("in the update-report", what)
}

fn cmd(name: &str, params: Vec<Item>) -> Item {
    Item::list(vec![Item::word(name), Item::list(params)])
}

impl EditStream {
    fn new(body: Box<dyn Read + Send>) -> EditStream {
        EditStream::with_capacity(body, 256 * 1024)
    }

    /// Reading `capacity` bytes at a time.
    fn with_capacity(body: Box<dyn Read + Send>, capacity: usize) -> EditStream {
        let mut reader = quick_xml::Reader::from_reader(BufReader::with_capacity(capacity, body));
        reader.config_mut().check_end_names = true;
        EditStream {
            reader,
            buf: Vec::with_capacity(256 * 1024),
            out: VecDeque::new(),
            stack: Vec::new(),
            collect: Collect::None,
            next_token: 0,
            started: false,
            done: false,
            raw_text: false,
            name: "the update-report".into(),
        }
    }

    fn next(&mut self) -> Result<Item> {
        loop {
            if let Some(item) = self.out.pop_front() {
                return Ok(item);
            }
            if self.done {
                return Err(bad_report("read past its end"));
            }
            self.step()?;
        }
    }

    fn token(&mut self, prefix: char) -> Vec<u8> {
        self.next_token += 1;
        format!("{prefix}{}", self.next_token).into_bytes()
    }

    fn top(&self, what: &str) -> Result<&Frame> {
        self.stack
            .last()
            .ok_or_else(|| bad_report(format!("{what} outside a directory or file")))
    }

    fn child_path(&self, e: &BytesStart, what: &str) -> Result<(String, Vec<u8>)> {
        let name = attr(e, b"name").ok_or_else(|| bad_report(format!("{what} without a name")))?;
        if name.is_empty() || name.contains('/') || name == "." || name == ".." {
            return Err(bad_report(format!("{what} with the name '{name}'")));
        }
        let parent = self.top(what)?;
        if parent.kind != Kind::Dir {
            return Err(bad_report(format!("{what} '{name}' inside a file")));
        }
        let path = if parent.path.is_empty() {
            name
        } else {
            format!("{}/{name}", parent.path)
        };
        Ok((path, parent.token.clone()))
    }

    fn rev_attr(e: &BytesStart, what: &str) -> Result<Option<u64>> {
        match attr(e, b"rev") {
            None => Ok(None),
            // -1: no revision (SVN_INVALID_REVNUM).
            Some(r) if r == "-1" => Ok(None),
            Some(r) => r
                .parse()
                .map(Some)
                .map_err(|_| bad_report(format!("{what}: revision '{r}' is not a number"))),
        }
    }

    /// One XML event: its editor commands queued.
    fn step(&mut self) -> Result<()> {
        if self.raw_text {
            return self.raw_step();
        }
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        let result = self.step_in(&mut buf);
        self.buf = buf;
        result
    }

    fn step_in(&mut self, buf: &mut Vec<u8>) -> Result<()> {
        let ev = self.reader.read_event_into(buf).map_err(|e| match e {
            quick_xml::Error::Io(io) => crate::error::io_err(
                self.name.clone(),
                std::io::Error::new(io.kind(), io.to_string()),
            ),
            e => bad_report(format!(
                "malformed XML at byte {}: {e}",
                self.reader.buffer_position()
            )),
        })?;
        match ev {
            Event::Start(e) => {
                let e = e.into_owned();
                self.start(&e)?;
            }
            Event::Empty(e) => {
                let e = e.into_owned();
                let local = e.local_name().as_ref().to_vec();
                self.start(&e)?;
                self.end(&local)?;
            }
            Event::End(e) => {
                let local = e.local_name().as_ref().to_vec();
                self.end(&local)?;
            }
            Event::Text(t) => {
                let raw = t.into_inner();
                self.text(&raw, true)?;
            }
            Event::CData(t) => {
                let raw = t.into_inner();
                self.text(&raw, false)?;
            }
            Event::Eof => {
                return Err(bad_report(if self.started {
                    "the answer ended before </S:update-report> (the server stopped sending)"
                } else {
                    "the answer is not an update-report"
                }));
            }
            _ => {}
        }
        Ok(())
    }

    /// The next piece of a txdelta's base64, up to the `<` that ends it.
    fn raw_step(&mut self) -> Result<()> {
        use std::io::BufRead;
        let mut stream = self.reader.stream();
        let avail = stream
            .fill_buf()
            .map_err(|source| crate::error::io_err(self.name.clone(), source))?;
        if avail.is_empty() {
            return Err(bad_report(
                "the answer ended inside a text (the server stopped sending)",
            ));
        }
        let (len, end) = match avail.iter().position(|&b| b == b'<') {
            Some(i) => (i, true),
            None => (avail.len(), false),
        };
        let piece = avail[..len].to_vec();
        stream.consume(len);
        if end {
            self.raw_text = false;
        }
        self.text(&piece, false)
    }

    fn text(&mut self, raw: &[u8], escaped: bool) -> Result<()> {
        match &mut self.collect {
            Collect::None => Ok(()),
            Collect::Prop(_, _, acc) | Collect::Md5(acc) | Collect::Href(acc) => {
                if escaped {
                    let s = std::str::from_utf8(raw)
                        .map_err(|_| bad_report("a property value that is not UTF-8"))?;
                    let s = quick_xml::escape::unescape(s)
                        .map_err(|e| bad_report(format!("malformed XML: {e}")))?;
                    acc.extend_from_slice(s.as_bytes());
                } else {
                    acc.extend_from_slice(raw);
                }
                if acc.len() > 1 << 30 {
                    return Err(bad_report("a property value over 1 GiB"));
                }
                Ok(())
            }
            Collect::Text(left) => {
                let token = self
                    .stack
                    .last()
                    .map(|f| f.token.clone())
                    .ok_or_else(|| bad_report("txdelta outside a file"))?;
                for piece in raw.chunks(TEXT_CHUNK) {
                    let mut clean = std::mem::take(left);
                    strip_whitespace(piece, &mut clean);
                    let whole = clean.len() / 4 * 4;
                    let rest = clean.split_off(whole);
                    *left = rest;
                    if clean.is_empty() {
                        continue;
                    }
                    let bytes = base64::engine::general_purpose::STANDARD
                        .decode(&clean)
                        .map_err(|e| bad_report(format!("txdelta: bad base64: {e}")))?;
                    self.out.push_back(cmd(
                        "textdelta-chunk",
                        vec![Item::string(token.clone()), Item::string(bytes)],
                    ));
                }
                Ok(())
            }
        }
    }

    fn start(&mut self, e: &BytesStart) -> Result<()> {
        let local = e.local_name().as_ref().to_vec();
        if !self.started {
            if local != b"update-report" {
                return Err(bad_report(format!(
                    "the answer is <{}>, not an update-report",
                    lossy(&local)
                )));
            }
            if attr(e, b"send-all").as_deref() != Some("true") {
                return Err(bad_report(
                    "the server did not send texts inline (send-all): it is configured \
                     with 'SVNAllowBulkUpdates Off', which svelto does not support; use 'svn'",
                ));
            }
            self.started = true;
            return Ok(());
        }
        match local.as_slice() {
            b"target-revision" => {
                let rev = Self::rev_attr(e, "target-revision")?
                    .ok_or_else(|| bad_report("target-revision without a rev"))?;
                self.out
                    .push_back(cmd("target-rev", vec![Item::Number(rev)]));
            }
            b"open-directory" if self.stack.is_empty() => {
                let rev = Self::rev_attr(e, "open-directory")?;
                let token = self.token('d');
                self.out.push_back(cmd(
                    "open-root",
                    vec![
                        Item::list(rev.map(Item::Number).into_iter().collect::<Vec<_>>()),
                        Item::string(token.clone()),
                    ],
                ));
                self.stack.push(Frame {
                    kind: Kind::Dir,
                    token,
                    path: String::new(),
                    md5: None,
                });
            }
            b"open-directory" | b"add-directory" | b"open-file" | b"add-file" => {
                let what = lossy(&local);
                let (path, parent) = self.child_path(e, &what)?;
                let rev = Self::rev_attr(e, &what)?;
                let is_dir = local.ends_with(b"directory");
                let token = self.token(if is_dir { 'd' } else { 'f' });
                let name = match local.as_slice() {
                    b"open-directory" => "open-dir",
                    b"add-directory" => "add-dir",
                    b"open-file" => "open-file",
                    _ => "add-file",
                };
                let last = if local.starts_with(b"open") {
                    Item::list(rev.map(Item::Number).into_iter().collect::<Vec<_>>())
                } else {
                    Item::empty_list()
                };
                self.out.push_back(cmd(
                    name,
                    vec![
                        Item::string(path.as_bytes()),
                        Item::string(parent),
                        Item::string(token.clone()),
                        last,
                    ],
                ));
                self.stack.push(Frame {
                    kind: if is_dir { Kind::Dir } else { Kind::File },
                    token,
                    path,
                    md5: None,
                });
            }
            b"delete-entry" => {
                let (path, parent) = self.child_path(e, "delete-entry")?;
                let rev = Self::rev_attr(e, "delete-entry")?;
                self.out.push_back(cmd(
                    "delete-entry",
                    vec![
                        Item::string(path.as_bytes()),
                        Item::list(rev.map(Item::Number).into_iter().collect::<Vec<_>>()),
                        Item::string(parent),
                    ],
                ));
            }
            b"absent-directory" | b"absent-file" => {
                let what = lossy(&local);
                let (path, parent) = self.child_path(e, &what)?;
                let name = if local == b"absent-directory" {
                    "absent-dir"
                } else {
                    "absent-file"
                };
                self.out.push_back(cmd(
                    name,
                    vec![Item::string(path.as_bytes()), Item::string(parent)],
                ));
            }
            b"set-prop" | b"remove-prop" => {
                let name = attr(e, b"name")
                    .ok_or_else(|| bad_report(format!("{} without a name", lossy(&local))))?;
                self.top("a property")?;
                let base64 = attr(e, b"encoding").as_deref() == Some("base64");
                self.collect = if local == b"set-prop" {
                    Collect::Prop(name.into_bytes(), base64, Vec::new())
                } else {
                    // Queued at once: a remove-prop is always empty.
                    self.prop(name.into_bytes(), None)?;
                    Collect::None
                };
            }
            b"txdelta" => {
                let top = self.top("txdelta")?;
                if top.kind != Kind::File {
                    return Err(bad_report("txdelta inside a directory"));
                }
                let token = top.token.clone();
                let base = attr(e, b"base-checksum");
                self.out.push_back(cmd(
                    "apply-textdelta",
                    vec![
                        Item::string(token),
                        Item::list(base.map(Item::string).into_iter().collect::<Vec<_>>()),
                    ],
                ));
                self.collect = Collect::Text(Vec::new());
                self.raw_text = true;
            }
            b"md5-checksum" => self.collect = Collect::Md5(Vec::new()),
            b"href" if !self.stack.is_empty() => self.collect = Collect::Href(Vec::new()),
            b"fetch-file" | b"fetch-props" | b"resource-walk" => {
                return Err(bad_report(format!(
                    "<{}> asks for a fetch that a send-all report never needs",
                    lossy(&local)
                )));
            }
            _ => {}
        }
        Ok(())
    }

    /// Queues the change of a property of the innermost directory or file.
    fn prop(&mut self, name: Vec<u8>, value: Option<Vec<u8>>) -> Result<()> {
        let top = self.top("a property")?;
        let c = if top.kind == Kind::Dir {
            "change-dir-prop"
        } else {
            "change-file-prop"
        };
        let token = top.token.clone();
        self.out.push_back(cmd(
            c,
            vec![
                Item::string(token),
                Item::string(name),
                Item::list(value.map(Item::string).into_iter().collect::<Vec<_>>()),
            ],
        ));
        Ok(())
    }

    fn end(&mut self, local: &[u8]) -> Result<()> {
        match local {
            b"update-report" => {
                if !self.stack.is_empty() {
                    return Err(bad_report("the report ended inside a directory"));
                }
                self.out.push_back(cmd("close-edit", vec![]));
                self.done = true;
            }
            b"open-directory" | b"add-directory" | b"open-file" | b"add-file" => {
                let frame = self
                    .stack
                    .pop()
                    .ok_or_else(|| bad_report(format!("</{}> not open", lossy(local))))?;
                if frame.kind == Kind::Dir {
                    self.out
                        .push_back(cmd("close-dir", vec![Item::string(frame.token)]));
                } else {
                    self.out.push_back(cmd(
                        "close-file",
                        vec![
                            Item::string(frame.token),
                            Item::list(frame.md5.map(Item::string).into_iter().collect::<Vec<_>>()),
                        ],
                    ));
                }
            }
            b"set-prop" => {
                let Collect::Prop(name, base64, value) =
                    std::mem::replace(&mut self.collect, Collect::None)
                else {
                    return Ok(());
                };
                let value = if base64 {
                    decode_base64(&value)
                        .map_err(|e| bad_report(format!("property '{}': {e}", lossy(&name))))?
                } else {
                    value
                };
                self.prop(name, Some(value))?;
            }
            b"txdelta" => {
                self.raw_text = false;
                let Collect::Text(left) = std::mem::replace(&mut self.collect, Collect::None)
                else {
                    return Ok(());
                };
                if !left.is_empty() {
                    return Err(bad_report("txdelta: base64 cut short"));
                }
                let token = self.top("txdelta")?.token.clone();
                self.out
                    .push_back(cmd("textdelta-end", vec![Item::string(token)]));
            }
            b"href" => {
                let Collect::Href(v) = std::mem::replace(&mut self.collect, Collect::None) else {
                    return Ok(());
                };
                // ra_serf keeps a file's version URL as its wc prop (the node's dav_cache
                // in wc.db); a directory's it only fetches with.
                if self.top("href")?.kind == Kind::File {
                    self.prop(b"svn:wc:ra_dav:version-url".to_vec(), Some(v))?;
                }
            }
            b"md5-checksum" => {
                let Collect::Md5(v) = std::mem::replace(&mut self.collect, Collect::None) else {
                    return Ok(());
                };
                let v = lossy(&v).trim().to_string();
                if let Some(top) = self.stack.last_mut() {
                    top.md5 = Some(v);
                }
            }
            _ => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edits(xml: &str) -> Result<Vec<String>> {
        let mut s = EditStream::new(Box::new(std::io::Cursor::new(xml.as_bytes().to_vec())));
        let mut out = Vec::new();
        loop {
            let item = s.next()?;
            let text = crate::ra_svn::short(&item);
            let end = text.contains("close-edit");
            out.push(text);
            if end {
                return Ok(out);
            }
        }
    }

    const HEAD: &str = r#"<?xml version="1.0" encoding="utf-8"?>
<S:update-report xmlns:S="svn:" xmlns:V="http://subversion.tigris.org/xmlns/dav/" xmlns:D="DAV:" send-all="true" inline-props="true">
<S:target-revision rev="3"/>
<S:open-directory rev="0">
<D:checked-in><D:href>/r/!svn/rvr/3/</D:href></D:checked-in>
"#;

    #[test]
    fn a_send_all_report_becomes_editor_commands() {
        // "hi\n" as an svndiff0 stream: header, one window of new data.
        let delta = base64::engine::general_purpose::STANDARD
            .encode([b'S', b'V', b'N', 0, 0, 0, 3, 1, 1, 0x83, b'h', b'i', b'\n']);
        let xml = format!(
            "{HEAD}<S:set-prop name=\"svn:entry:committed-rev\">3</S:set-prop>\n\
             <S:add-directory name=\"a &amp; b\"><S:set-prop name=\"p\" encoding=\"base64\">AAE=\n</S:set-prop>\n\
             <S:add-file name=\"f\"><S:txdelta>{}\n{}</S:txdelta><S:prop><V:md5-checksum>abc</V:md5-checksum></S:prop></S:add-file>\n\
             <S:absent-file name=\"secret\"/><S:remove-prop name=\"q\"/></S:add-directory>\n\
             <S:delete-entry name=\"old\" rev=\"2\"/></S:open-directory></S:update-report>",
            &delta[..8],
            &delta[8..]
        );
        let got = edits(&xml).expect("parses");
        let joined = got.join("\n");
        for want in [
            "target-rev",
            "open-root",
            "add-dir",
            "a & b",
            "add-file",
            "a & b/f",
            "apply-textdelta",
            "textdelta-chunk",
            "textdelta-end",
            "close-file",
            "abc",
            "absent-file",
            "a & b/secret",
            "change-dir-prop",
            "delete-entry",
            "close-edit",
        ] {
            assert!(joined.contains(want), "{want} missing from:\n{joined}");
        }
    }

    #[test]
    fn a_text_is_read_a_buffer_at_a_time() {
        let delta: Vec<u8> = (0..3000u32).map(|i| (i * 7 % 251) as u8).collect();
        let b64 = base64::engine::general_purpose::STANDARD.encode(&delta);
        // Broken into lines, as mod_dav_svn sends it.
        let lines: Vec<&str> = b64
            .as_bytes()
            .chunks(76)
            .map(|c| std::str::from_utf8(c).unwrap_or_default())
            .collect();
        let xml = format!(
            "{HEAD}<S:add-file name=\"f\"><S:txdelta>{}\n</S:txdelta></S:add-file></S:open-directory></S:update-report>",
            lines.join("\n")
        );
        for capacity in [7, 64, 1 << 20] {
            let body: Box<dyn Read + Send> =
                Box::new(std::io::Cursor::new(xml.clone().into_bytes()));
            // Through the reading thread, as a session reads it.
            let body = if capacity == 64 {
                Box::new(Prefetch::spawn(body))
            } else {
                body
            };
            let mut s = EditStream::with_capacity(body, capacity);
            let mut got = Vec::new();
            let mut chunks = 0;
            loop {
                let item = s.next().expect("parses");
                let (name, p) = match item.as_list() {
                    Some([Item::Word(w), Item::List(p)]) => (w.clone(), p.clone()),
                    _ => panic!("not a command"),
                };
                if name == "textdelta-chunk" {
                    chunks += 1;
                    got.extend_from_slice(p[1].as_string().unwrap_or_default());
                }
                if name == "close-edit" {
                    break;
                }
            }
            assert_eq!(got, delta, "capacity {capacity}");
            if capacity == 7 {
                assert!(chunks > 100, "{chunks} chunks");
            }
        }
    }

    #[test]
    fn whitespace_is_stripped_from_base64_of_any_layout() {
        let b64 = base64::engine::general_purpose::STANDARD.encode((0..=255u8).collect::<Vec<_>>());
        let plain = b64.as_bytes();
        let cases: Vec<Vec<u8>> = vec![
            plain.to_vec(),
            plain.chunks(76).collect::<Vec<_>>().join(&b"\n"[..]),
            plain.chunks(76).collect::<Vec<_>>().join(&b"\r\n"[..]),
            plain.chunks(5).collect::<Vec<_>>().join(&b" \t\x0c"[..]),
            [&b"\n\n"[..], plain, b"\n \n"].concat(),
        ];
        for case in cases {
            let mut out = b"kept".to_vec();
            strip_whitespace(&case, &mut out);
            assert_eq!(&out[..4], b"kept");
            assert_eq!(&out[4..], plain, "{:?}", String::from_utf8_lossy(&case));
        }
    }

    /// A body whose reads hand out `pieces` and then fail, or end.
    struct Pieces(VecDeque<std::io::Result<Vec<u8>>>);

    impl Read for Pieces {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            match self.0.pop_front() {
                None => Ok(0),
                Some(Err(e)) => Err(e),
                Some(Ok(p)) => {
                    buf[..p.len()].copy_from_slice(&p);
                    Ok(p.len())
                }
            }
        }
    }

    #[test]
    fn a_prefetched_body_reads_as_the_body() {
        let data: Vec<u8> = (0..3 * TEXT_CHUNK as u32 + 17)
            .map(|i| (i % 253) as u8)
            .collect();
        let mut all = Vec::new();
        Prefetch::spawn(Box::new(std::io::Cursor::new(data.clone())))
            .read_to_end(&mut all)
            .expect("reads");
        assert_eq!(all, data);
        // Small reads across piece boundaries, then the body's error, then its end.
        let body = Pieces(VecDeque::from([
            Ok(b"abc".to_vec()),
            Err(std::io::Error::new(
                std::io::ErrorKind::Interrupted,
                "again",
            )),
            Ok(b"de".to_vec()),
            Err(std::io::Error::new(
                std::io::ErrorKind::ConnectionReset,
                "reset by peer",
            )),
            Ok(b"never".to_vec()),
        ]));
        let mut p = Prefetch::spawn(Box::new(body));
        let mut got = Vec::new();
        let mut two = [0; 2];
        let err = loop {
            match p.read(&mut two) {
                Ok(0) => panic!("ended before the error"),
                Ok(n) => got.extend_from_slice(&two[..n]),
                Err(e) => break e,
            }
        };
        assert_eq!(got, b"abcde");
        assert_eq!(err.kind(), std::io::ErrorKind::ConnectionReset);
        assert_eq!(p.read(&mut two).expect("ended"), 0);
    }

    #[test]
    fn bad_reports_are_clear_errors() {
        for (xml, want) in [
            ("<S:update-report xmlns:S=\"svn:\">", "SVNAllowBulkUpdates"),
            ("<html>", "not an update-report"),
            (
                &format!("{HEAD}<S:add-file name=\"f\">") as &str,
                "ended before",
            ),
            (
                &format!("{HEAD}<S:add-file name=\"../x\"></S:add-file>"),
                "the name '../x'",
            ),
            (
                &format!("{HEAD}<S:add-file name=\"f\"><S:txdelta>@@@@</S:txdelta>"),
                "bad base64",
            ),
            (
                &format!("{HEAD}<S:add-file name=\"f\"></S:add-directory>"),
                "malformed XML",
            ),
            (
                &format!("{HEAD}<S:target-revision rev=\"x\"/>"),
                "not a number",
            ),
        ] {
            let err = edits(xml).expect_err(xml).to_string();
            assert!(err.contains(want), "{xml}: {err}");
        }
    }

    #[test]
    fn inherited_props_are_read() {
        let xml = br#"<?xml version="1.0"?><S:inherited-props-report xmlns:S="svn:" xmlns:V="http://subversion.tigris.org/xmlns/dav/"><S:iprop-item><S:iprop-path>/</S:iprop-path><S:iprop-propname>a</S:iprop-propname><S:iprop-propval>x &amp; y</S:iprop-propval></S:iprop-item><S:iprop-item><S:iprop-path>trunk</S:iprop-path><S:iprop-propname>b</S:iprop-propname><S:iprop-propval V:encoding="base64">AAE=</S:iprop-propval></S:iprop-item></S:inherited-props-report>"#;
        let got = parse_iprops(xml).expect("parses");
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].0, b"");
        assert_eq!(got[0].1, vec![(b"a".to_vec(), b"x & y".to_vec())]);
        assert_eq!(got[1].0, b"trunk");
        assert_eq!(got[1].1, vec![(b"b".to_vec(), vec![0, 1])]);
    }
}
