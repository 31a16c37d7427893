//! `REPORT`: the request body's root element names the report; each is answered as
//! mod_dav_svn 1.14 answers it (`subversion/mod_dav_svn/reports/`).

use crate::ctx::{body_xml, Ctx, XML_HEADER};
use crate::error::{HttpError, UNSUPPORTED_FEATURE};
use crate::table::ReportRequest;
use crate::uri::Kind;
use crate::xml::{esc, Elem, SVN};
use crate::{Reply, Req};
use hyper::StatusCode;
use std::borrow::Cow;
use std::fmt::Write as _;
use svelto_core::{join, ChangeKind, Depth, NodeKind, Revnum};
use svelto_repos::action;
use svelto_repos::list::DirentFields as Fields;
use svelto_repos::log::{LogEntryRef, LogOptions};

/// Answers a `REPORT`.
pub(crate) fn report(ctx: &Ctx<'_>, req: &Req) -> Result<Reply, HttpError> {
    let doc = body_xml(req)?;
    if doc.ns != SVN {
        return Err(HttpError::svn(
            StatusCode::NOT_IMPLEMENTED,
            UNSUPPORTED_FEATURE,
            "The requested report is unknown",
        ));
    }
    // As mod_dav: a report on a node URL needs the node to exist.
    if matches!(
        ctx.target.kind,
        Kind::Public | Kind::RevRoot(_) | Kind::Version(_)
    ) {
        ctx.target_node()?;
    }
    let Some(row) = crate::table::report(&doc.name) else {
        return Err(HttpError::svn(
            StatusCode::NOT_IMPLEMENTED,
            UNSUPPORTED_FEATURE,
            "The requested report is unknown",
        ));
    };
    // A known report is counted by its name.
    (row.handler)(ctx, req, &doc).map(|mut r| {
        r.note.command = Some(row.metric);
        r
    })
}

fn xml_reply(body: String) -> Reply {
    Reply::xml(StatusCode::OK, body.into_bytes())
}

/// A revision number element's text; `None` for Subversion's "invalid" (-1 or absent).
fn rev_of(e: Option<&Elem>) -> Result<Option<Revnum>, HttpError> {
    let Some(e) = e else { return Ok(None) };
    let t = e.text.trim();
    if t == "-1" || t.is_empty() {
        return Ok(None);
    }
    t.parse::<Revnum>()
        .map(Some)
        .map_err(|_| HttpError::bad_request(format!("Invalid revision '{t}' in '{}'", e.name)))
}

/// A relpath from a request element (relative to the resource's path: [`under`]).
pub(crate) fn relpath(text: &str) -> Result<String, HttpError> {
    svelto_core::validate_path(text.trim_start_matches('/'))
        .map_err(|e| HttpError::bad_request(format!("Invalid path '{text}': {e}")))
}

/// A request's relpath below the resource's path.
fn under(ctx: &Ctx<'_>, rel: &str) -> String {
    join(&ctx.target.path, rel)
}

/// The revision a report on a node resource reads: the `rvr`/`ver` revision, else HEAD.
fn resource_rev(ctx: &Ctx<'_>) -> Revnum {
    ctx.target.rev().unwrap_or(ctx.youngest)
}

/// `S:inherited-props-report`: a path's inherited properties.
pub(crate) struct InheritedProps {
    rev: Option<Revnum>,
    path: Option<String>,
}

impl ReportRequest for InheritedProps {
    fn parse(doc: &Elem) -> Result<Self, HttpError> {
        Ok(InheritedProps {
            rev: rev_of(doc.child(SVN, "revision"))?,
            path: doc
                .child(SVN, "path")
                .map(|p| relpath(&p.text))
                .transpose()?,
        })
    }

    fn answer(self, ctx: &Ctx<'_>, _: &Req) -> Result<Reply, HttpError> {
        inherited_props(ctx, self)
    }
}

fn inherited_props(ctx: &Ctx<'_>, q: InheritedProps) -> Result<Reply, HttpError> {
    let rev = ctx.check_rev(q.rev.unwrap_or_else(|| resource_rev(ctx)))?;
    let path = q
        .path
        .map_or_else(|| ctx.target.path.clone(), |p| under(ctx, &p));
    ctx.require_read(&path)?;
    let iprops = ctx.svc.inherited_props(&path, rev)?;
    let mut out =
        format!("{XML_HEADER}<S:inherited-props-report xmlns:S=\"svn:\" xmlns:D=\"DAV:\">\n");
    // mod_dav_svn's items: `S:iprop-item`, the parent's repository relpath (no slash).
    for (p, props) in iprops {
        let _ = write!(
            out,
            "<S:iprop-item>\n<S:iprop-path>{}</S:iprop-path>\n",
            crate::xml::esc_cdata(p.trim_start_matches('/'))
        );
        for (name, value) in &props {
            let _ = writeln!(
                out,
                "<S:iprop-propname>{}</S:iprop-propname>",
                esc(&String::from_utf8_lossy(name))
            );
            crate::xml::value_element(&mut out, "S:iprop-propval", "", "encoding", value);
        }
        out.push_str("</S:iprop-item>\n");
    }
    out.push_str("</S:inherited-props-report>\n");
    Ok(xml_reply(out).action(action::get_inherited_props(&action::fspath(&path), rev)))
}

/// `S:get-locks-report`: the locks at and below the resource, to a depth (`None`: all).
pub(crate) struct GetLocks {
    depth: Option<usize>,
}

impl ReportRequest for GetLocks {
    fn parse(doc: &Elem) -> Result<Self, HttpError> {
        let depth = match doc.attr("depth") {
            None | Some("infinity") => None,
            Some("immediates") | Some("files") => Some(1),
            Some("empty") => Some(0),
            // mod_dav_svn's "Invalid 'depth' specified in get-locks-report request.", which
            // Apache answers with its page.
            Some(_) => return Err(crate::locks::bad_request()),
        };
        Ok(GetLocks { depth })
    }

    fn answer(self, ctx: &Ctx<'_>, _: &Req) -> Result<Reply, HttpError> {
        get_locks(ctx, self)
    }
}

fn get_locks(ctx: &Ctx<'_>, q: GetLocks) -> Result<Reply, HttpError> {
    let locks = ctx.svc.get_locks(&ctx.target.path, q.depth)?;
    let mut out = format!("{XML_HEADER}<S:get-locks-report xmlns:S=\"svn:\" xmlns:D=\"DAV:\">\n");
    for l in locks {
        let _ = write!(
            out,
            "<S:lock>\n<S:path>/{}</S:path>\n<S:token>{}</S:token>\n<S:creationdate>{}</S:creationdate>\n",
            esc(&l.path),
            esc(&l.token),
            esc(&l.created)
        );
        if let Some(exp) = &l.expires {
            let _ = writeln!(out, "<S:expirationdate>{}</S:expirationdate>", esc(exp));
        }
        crate::xml::value_element(&mut out, "S:owner", "", "encoding", l.owner.as_bytes());
        if let Some(c) = &l.comment {
            crate::xml::value_element(&mut out, "S:comment", "", "encoding", c.as_bytes());
        }
        out.push_str("</S:lock>\n");
    }
    out.push_str("</S:get-locks-report>\n");
    Ok(xml_reply(out))
}

/// `S:list-report`: a directory's entries to a depth, with the fields asked for.
pub(crate) struct List {
    path: String,
    rev: Option<Revnum>,
    depth: Depth,
    fields: Fields,
    patterns: Option<Vec<Vec<u8>>>,
}

impl ReportRequest for List {
    fn parse(doc: &Elem) -> Result<Self, HttpError> {
        let path = doc
            .child(SVN, "path")
            .map(|p| relpath(&p.text))
            .transpose()?
            .ok_or_else(|| HttpError::bad_request("Request was missing the path argument"))?;
        let rev = rev_of(doc.child(SVN, "revision"))?;
        let depth = match doc.child_text(SVN, "depth") {
            Some(w) => Depth::from_word(w)
                .filter(|d| *d >= Depth::Empty)
                .ok_or_else(|| HttpError::bad_request(format!("Invalid depth '{w}' for list")))?,
            None => Depth::Infinity,
        };
        let mut fields = Fields::default();
        let mut patterns: Option<Vec<Vec<u8>>> = None;
        for c in doc.children.iter().filter(|c| c.ns == SVN) {
            match c.name.as_str() {
                "prop" => match c.text.as_str() {
                    "DAV:resourcetype" => fields.kind = true,
                    "DAV:getcontentlength" => fields.size = true,
                    "http://subversion.tigris.org/xmlns/dav/deadprop-count" => {
                        fields.has_props = true
                    }
                    "DAV:version-name" => fields.created_rev = true,
                    "DAV:creationdate" => fields.time = true,
                    "DAV:creator-displayname" => fields.author = true,
                    "DAV:allprop" => fields = Fields::ALL,
                    _ => {}
                },
                "no-patterns" => patterns = Some(Vec::new()),
                "pattern" => patterns
                    .get_or_insert_with(Vec::new)
                    .push(c.text.as_bytes().to_vec()),
                _ => {}
            }
        }
        Ok(List {
            path,
            rev,
            depth,
            fields,
            patterns,
        })
    }

    fn answer(self, ctx: &Ctx<'_>, _: &Req) -> Result<Reply, HttpError> {
        list(ctx, self)
    }
}

fn list(ctx: &Ctx<'_>, q: List) -> Result<Reply, HttpError> {
    let List {
        path,
        rev,
        depth,
        fields,
        patterns,
    } = q;
    let path = under(ctx, &path);
    let rev = ctx.check_rev(rev.unwrap_or(ctx.youngest))?;
    ctx.require_read(&path)?;
    let logged = patterns.as_ref().map(|l| {
        l.iter()
            .map(|p| String::from_utf8_lossy(p).into_owned())
            .collect::<Vec<_>>()
    });
    let logged = action::list(&action::fspath(&path), rev, depth, logged.as_deref());
    let svc = ctx.svc.clone();
    Ok(Reply::xml_stream(Box::new(move |w| {
        let mut header = false;
        let mut revinfo = svelto_repos::service::RevInfoMemo::default();
        let mut item = String::new();
        svc.list(&path, rev, depth, patterns.as_deref(), &mut |p, n| {
            if !header {
                header = true;
                w.write_all(
                    format!("{XML_HEADER}<S:list-report xmlns:S=\"svn:\" xmlns:D=\"DAV:\">\n")
                        .as_bytes(),
                )
                .map_err(crate::error::write_err)?;
            }
            item.clear();
            list_item(&mut item, &svc, &mut revinfo, &fields, p, n)?;
            w.write_all(item.as_bytes())
                .map_err(crate::error::write_err)
        })
        .map_err(HttpError::from)?;
        if !header {
            w.write_all(
                format!("{XML_HEADER}<S:list-report xmlns:S=\"svn:\" xmlns:D=\"DAV:\">\n")
                    .as_bytes(),
            )?;
        }
        w.write_all(b"</S:list-report>\n")?;
        Ok(())
    }))
    .action(logged))
}

/// Appends an entry's `S:item` to `s`.
fn list_item(
    s: &mut String,
    svc: &svelto_repos::service::Ctx,
    revinfo: &mut svelto_repos::service::RevInfoMemo,
    fields: &Fields,
    path: &str,
    n: &svelto_repos::ListedNode,
) -> svelto_repos::Result<()> {
    s.push_str("<S:item node-kind=\"");
    s.push_str(if fields.kind {
        kind_word(n.kind())
    } else {
        "unknown"
    });
    s.push('"');
    if fields.size {
        let size = match n.kind() {
            NodeKind::Dir => -1,
            NodeKind::File => n.size() as i64,
        };
        let _ = write!(s, " size=\"{size}\"");
    }
    if fields.has_props {
        let _ = write!(s, " has-props=\"{}\"", n.has_props());
    }
    if fields.created_rev {
        let _ = write!(s, " created-rev=\"{}\"", n.created_rev());
    }
    let (date, author) = if fields.time || fields.author {
        let (d, a) = revinfo.get(svc, n.created_rev())?;
        (
            d.as_deref().map(String::from_utf8_lossy),
            a.as_deref().map(String::from_utf8_lossy),
        )
    } else {
        (None, None)
    };
    if let (true, Some(d)) = (fields.time, date) {
        s.push_str(" date=\"");
        crate::xml::esc_to(s, &d);
        s.push('"');
    }
    s.push_str(">/");
    crate::xml::esc_cdata_to(s, path);
    if let (true, Some(a)) = (fields.author, author) {
        s.push_str("<D:creator-displayname>");
        crate::xml::esc_to(s, &crate::xml::displayable_author(&a));
        s.push_str("</D:creator-displayname>");
    }
    s.push_str("</S:item>\n");
    Ok(())
}

fn kind_word(k: NodeKind) -> &'static str {
    match k {
        NodeKind::File => "file",
        NodeKind::Dir => "dir",
        #[allow(unreachable_patterns)]
        _ => "none",
    }
}

/// Appends `s` as Subversion's `svn_xml_fuzzy_escape` makes it (control characters other
/// than tab, newline and carriage return become `?\NNN`) and then `esc` escapes it
/// (`?\NNN` has nothing `esc` escapes, so one pass does both).
fn fuzzy_esc_to(out: &mut String, s: &str) {
    let mut from = 0;
    for (i, b) in s.bytes().enumerate() {
        if b < 0x20 && b != b'\t' && b != b'\n' && b != b'\r' {
            crate::xml::esc_to(out, &s[from..i]);
            let _ = write!(out, "?\\{b:03}");
            from = i + 1;
        }
    }
    crate::xml::esc_to(out, &s[from..]);
}

/// `S:log-report`: the options as `svn log` gives them; paths relative to the resource,
/// start and end `None` for HEAD.
pub(crate) struct Log {
    opts: LogOptions,
    start: Option<Revnum>,
    end: Option<Revnum>,
    encode_binary: bool,
}

impl ReportRequest for Log {
    fn parse(doc: &Elem) -> Result<Self, HttpError> {
        let mut opts = LogOptions {
            start: 0,
            end: 0,
            revprops: Some(Vec::new()),
            ..LogOptions::default()
        };
        let (mut start, mut end) = (None, None);
        let mut encode_binary = false;
        for c in doc.children.iter().filter(|c| c.ns == SVN) {
            match c.name.as_str() {
                "start-revision" => start = rev_of(Some(c))?,
                "end-revision" => end = rev_of(Some(c))?,
                "limit" => opts.limit = c.text.trim().parse::<i64>().map_or(0, |l| l.max(0) as u64),
                "discover-changed-paths" => opts.discover_changed_paths = true,
                "strict-node-history" => opts.strict_node_history = true,
                "include-merged-revisions" => opts.include_merged_revisions = true,
                "encode-binary-props" => encode_binary = true,
                "all-revprops" => opts.revprops = None,
                "no-revprops" => opts.revprops = Some(Vec::new()),
                "revprop" => {
                    if let Some(list) = opts.revprops.as_mut() {
                        list.push(c.text.as_bytes().to_vec());
                    }
                }
                "path" => opts.paths.push(relpath(&c.text)?),
                _ => {}
            }
        }
        Ok(Log {
            opts,
            start,
            end,
            encode_binary,
        })
    }

    fn answer(self, ctx: &Ctx<'_>, _: &Req) -> Result<Reply, HttpError> {
        log(ctx, self)
    }
}

fn log(ctx: &Ctx<'_>, q: Log) -> Result<Reply, HttpError> {
    let Log {
        mut opts,
        start,
        end,
        encode_binary,
    } = q;
    for p in &mut opts.paths {
        *p = under(ctx, p);
    }
    opts.start = start.unwrap_or(ctx.youngest);
    opts.end = end.unwrap_or(ctx.youngest);
    if opts.paths.is_empty() {
        opts.paths.push(ctx.target.path.clone());
    }
    for p in &opts.paths {
        ctx.require_read(p)?;
    }
    let names: Option<Vec<String>> = opts.revprops.as_ref().map(|l| {
        l.iter()
            .map(|n| String::from_utf8_lossy(n).into_owned())
            .collect()
    });
    let paths: Vec<String> = opts.paths.iter().map(|p| action::fspath(p)).collect();
    let logged = action::log(&action::Log {
        paths: &paths,
        start,
        end,
        limit: opts.limit,
        changed_paths: opts.discover_changed_paths,
        strict: opts.strict_node_history,
        include_merged: opts.include_merged_revisions,
        revprops: names.as_deref(),
    });
    let svc = ctx.svc.clone();
    Ok(Reply::xml_stream(Box::new(move |w| {
        w.write_all(
            format!("{XML_HEADER}<S:log-report xmlns:S=\"svn:\" xmlns:D=\"DAV:\">\n").as_bytes(),
        )?;
        let mut depth = 0usize;
        let mut s = String::new();
        svc.log_ref(&opts, &mut |e: &LogEntryRef<'_>| {
            s.clear();
            log_item(&mut s, e, encode_binary, &mut depth);
            w.write_all(s.as_bytes()).map_err(crate::error::write_err)
        })
        .map_err(HttpError::from)?;
        w.write_all(b"</S:log-report>\n")?;
        Ok(())
    }))
    .action(logged))
}

/// Appends a log entry's `S:log-item` to `s` (nothing for the end of merged revisions at
/// the top level).
fn log_item(s: &mut String, e: &LogEntryRef<'_>, encode_binary: bool, depth: &mut usize) {
    use crate::xml::{esc_cdata_to, esc_to};
    if e.invalid_rev {
        if *depth == 0 {
            return;
        }
        *depth -= 1;
    }
    s.push_str("<S:log-item>\n");
    for c in e.changed_paths.iter() {
        let el = match c.action {
            ChangeKind::Add => "S:added-path",
            ChangeKind::Replace => "S:replaced-path",
            ChangeKind::Delete => "S:deleted-path",
            _ => "S:modified-path",
        };
        s.push('<');
        s.push_str(el);
        if let Some((p, r)) = c.copyfrom {
            if matches!(c.action, ChangeKind::Add | ChangeKind::Replace) {
                s.push_str(" copyfrom-path=\"/");
                esc_to(s, p.trim_matches('/'));
                let _ = write!(s, "\" copyfrom-rev=\"{r}\"");
            }
        }
        let kind = match c.kind {
            Some(NodeKind::File) => "file",
            Some(NodeKind::Dir) => "dir",
            _ => "unknown",
        };
        let yes = |b: bool| if b { "true" } else { "false" };
        // Pieces pushed, not formatted: r2 of the medium history changes 22,603 paths.
        s.push_str(" node-kind=\"");
        s.push_str(kind);
        s.push_str("\" text-mods=\"");
        s.push_str(yes(c.text_mods));
        s.push_str("\" prop-mods=\"");
        s.push_str(yes(c.prop_mods));
        s.push_str("\">/");
        esc_cdata_to(s, c.relpath.trim_matches('/'));
        s.push_str("</");
        s.push_str(el);
        s.push_str(">\n");
    }
    let rev = if e.invalid_rev { -1 } else { e.rev as i64 };
    let _ = writeln!(s, "<D:version-name>{rev}</D:version-name>");
    for (name, value) in e.revprops.iter() {
        let b64 = encode_binary && !crate::xml::is_xml_safe(value);
        let v = if b64 {
            Cow::Owned(crate::xml::base64_lines(value))
        } else {
            String::from_utf8_lossy(value)
        };
        let enc = if b64 { " encoding=\"base64\"" } else { "" };
        let (open, close) = match name {
            b"svn:author" => ("<D:creator-displayname", "</D:creator-displayname>\n"),
            b"svn:date" => ("<S:date", "</S:date>\n"),
            b"svn:log" => ("<D:comment", "</D:comment>\n"),
            _ => ("<S:revprop name=\"", "</S:revprop>\n"),
        };
        s.push_str(open);
        if close.starts_with("</S:revprop") {
            esc_to(s, &String::from_utf8_lossy(name));
            s.push('"');
        }
        s.push_str(enc);
        s.push('>');
        if name == b"svn:log" && !b64 {
            fuzzy_esc_to(s, &v);
        } else {
            esc_to(s, &v);
        }
        s.push_str(close);
    }
    if e.has_children {
        s.push_str("<S:has-children/>");
        *depth += 1;
    }
    if e.subtractive_merge {
        s.push_str("<S:subtractive-merge/>");
    }
    s.push_str("</S:log-item>\n");
}

/// The `S:path` element of a report, relative to the resource's path.
/// The request's `S:path`, a relpath (relative to the resource's path).
fn path_arg(doc: &Elem) -> Result<String, HttpError> {
    match doc.child(SVN, "path") {
        Some(p) => relpath(&p.text),
        None => Err(HttpError::bad_request(
            "Not all parameters passed (the request has no 'path' element)",
        )),
    }
}

/// `S:file-revs-report`: a file's versions between two revisions.
pub(crate) struct FileRevs {
    path: String,
    start: Option<Revnum>,
    end: Option<Revnum>,
    include_merged: bool,
}

impl ReportRequest for FileRevs {
    fn parse(doc: &Elem) -> Result<Self, HttpError> {
        Ok(FileRevs {
            path: path_arg(doc)?,
            start: rev_of(doc.child(SVN, "start-revision"))?,
            end: rev_of(doc.child(SVN, "end-revision"))?,
            include_merged: doc.child(SVN, "include-merged-revisions").is_some(),
        })
    }

    fn answer(self, ctx: &Ctx<'_>, req: &Req) -> Result<Reply, HttpError> {
        file_revs(ctx, req, self)
    }
}

fn file_revs(ctx: &Ctx<'_>, req: &Req, q: FileRevs) -> Result<Reply, HttpError> {
    let path = under(ctx, &q.path);
    let opts = svelto_repos::FileRevsOptions {
        start: q.start,
        end: q.end,
        include_merged: q.include_merged,
        svndiff_version: crate::ctx::svndiff_version(req.header("accept-encoding")).unwrap_or(0),
    };
    ctx.require_read(&path)?;
    let logged = action::get_file_revs(
        &action::fspath(&path),
        opts.start,
        opts.end,
        opts.include_merged,
    );
    let svc = ctx.svc.clone();
    Ok(Reply::xml_stream(Box::new(move |w| {
        let mut h = FileRevsXml {
            w,
            header: false,
            b64: crate::xml::Base64Stream::default(),
            in_delta: false,
        };
        svc.file_revs(&path, &opts, &mut h)
            .map_err(HttpError::from)?;
        h.header()?;
        h.w.write_all(b"</S:file-revs-report>\n")?;
        Ok(())
    }))
    .action(logged))
}

/// Writes the versions of a file as `S:file-rev` elements.
struct FileRevsXml<'w> {
    w: &'w mut dyn std::io::Write,
    header: bool,
    b64: crate::xml::Base64Stream,
    /// Inside an `S:txdelta` (the version changed the text); `file_rev_end` comes for
    /// every version, with or without one.
    in_delta: bool,
}

impl FileRevsXml<'_> {
    fn header(&mut self) -> std::io::Result<()> {
        if !self.header {
            self.header = true;
            self.w.write_all(
                format!("{XML_HEADER}<S:file-revs-report xmlns:S=\"svn:\" xmlns:D=\"DAV:\">\n")
                    .as_bytes(),
            )?;
        }
        Ok(())
    }
}

fn prop_element(out: &mut String, el: &str, name: &[u8], value: &[u8]) {
    let attrs = format!(" name=\"{}\"", esc(&String::from_utf8_lossy(name)));
    crate::xml::value_element(out, &format!("S:{el}"), &attrs, "encoding", value);
}

impl svelto_repos::FileRevsHandler for FileRevsXml<'_> {
    fn file_rev(&mut self, rev: &svelto_repos::FileRev<'_>) -> svelto_repos::Result<()> {
        self.header().map_err(crate::error::write_err)?;
        let mut s = format!(
            "<S:file-rev path=\"{}\" rev=\"{}\">\n",
            esc(rev.path),
            rev.rev
        );
        for (name, value) in rev.revprops {
            prop_element(&mut s, "rev-prop", name, value);
        }
        for (name, value) in rev.prop_diffs {
            match value {
                Some(v) => prop_element(&mut s, "set-prop", name, v),
                None => {
                    let _ = writeln!(
                        s,
                        "<S:remove-prop name=\"{}\"/>",
                        esc(&String::from_utf8_lossy(name))
                    );
                }
            }
        }
        if rev.merged {
            s.push_str("<S:merged-revision/>");
        }
        self.in_delta = rev.text_delta;
        if rev.text_delta {
            s.push_str("<S:txdelta>");
            self.b64.start();
        } else {
            s.push_str("</S:file-rev>\n");
        }
        self.w
            .write_all(s.as_bytes())
            .map_err(crate::error::write_err)
    }

    fn delta_chunk(&mut self, chunk: &[u8]) -> svelto_repos::Result<()> {
        self.b64
            .push(chunk, self.w)
            .map_err(crate::error::write_err)
    }

    fn file_rev_end(&mut self) -> svelto_repos::Result<()> {
        if !std::mem::take(&mut self.in_delta) {
            return Ok(());
        }
        self.b64.finish(self.w).map_err(crate::error::write_err)?;
        self.w
            .write_all(b"</S:txdelta></S:file-rev>\n")
            .map_err(crate::error::write_err)
    }
}

/// `S:get-locations`: where a path at a peg revision was in other revisions.
pub(crate) struct GetLocations {
    path: String,
    peg: Revnum,
    revs: Vec<Revnum>,
}

impl ReportRequest for GetLocations {
    fn parse(doc: &Elem) -> Result<Self, HttpError> {
        let path = path_arg(doc)?;
        let peg = rev_of(doc.child(SVN, "peg-revision"))?
            .ok_or_else(|| HttpError::bad_request("Not all parameters passed (no peg revision)"))?;
        let mut revs = Vec::new();
        for c in doc
            .children
            .iter()
            .filter(|c| c.is(SVN, "location-revision"))
        {
            if let Some(r) = rev_of(Some(c))? {
                revs.push(r);
            }
        }
        Ok(GetLocations { path, peg, revs })
    }

    fn answer(self, ctx: &Ctx<'_>, _: &Req) -> Result<Reply, HttpError> {
        get_locations(ctx, self)
    }
}

fn get_locations(ctx: &Ctx<'_>, q: GetLocations) -> Result<Reply, HttpError> {
    let path = under(ctx, &q.path);
    ctx.require_read(&path)?;
    let locations = ctx.svc.locations(&path, q.peg, &q.revs)?;
    let mut out =
        format!("{XML_HEADER}<S:get-locations-report xmlns:S=\"svn:\" xmlns:D=\"DAV:\">\n");
    for (rev, p) in locations {
        let p = if p.starts_with('/') {
            p
        } else {
            format!("/{p}")
        };
        let _ = writeln!(out, "<S:location rev=\"{rev}\" path=\"{}\"/>", esc(&p));
    }
    out.push_str("</S:get-locations-report>\n");
    // (mod_dav_svn logs no action for get-locations or get-location-segments.)
    Ok(xml_reply(out))
}

/// `S:get-location-segments`: a path's history as segments (`None`: HEAD, the peg
/// revision, 0).
pub(crate) struct LocationSegments {
    path: String,
    peg: Option<Revnum>,
    start: Option<Revnum>,
    end: Option<Revnum>,
}

impl ReportRequest for LocationSegments {
    fn parse(doc: &Elem) -> Result<Self, HttpError> {
        Ok(LocationSegments {
            path: path_arg(doc)?,
            peg: rev_of(doc.child(SVN, "peg-revision"))?,
            start: rev_of(doc.child(SVN, "start-revision"))?,
            end: rev_of(doc.child(SVN, "end-revision"))?,
        })
    }

    fn answer(self, ctx: &Ctx<'_>, _: &Req) -> Result<Reply, HttpError> {
        location_segments(ctx, self)
    }
}

fn location_segments(ctx: &Ctx<'_>, q: LocationSegments) -> Result<Reply, HttpError> {
    let path = under(ctx, &q.path);
    let peg = q.peg.unwrap_or(ctx.youngest);
    let start = q.start.unwrap_or(peg);
    let end = q.end.unwrap_or(0);
    if end > start {
        return Err(HttpError::bad_request(
            "End revision must not be younger than start revision",
        ));
    }
    if start > peg {
        return Err(HttpError::bad_request(
            "Start revision must not be younger than peg revision",
        ));
    }
    let mut out =
        format!("{XML_HEADER}<S:get-location-segments-report xmlns:S=\"svn:\" xmlns:D=\"DAV:\">\n");
    ctx.require_read(&path)?;
    ctx.svc
        .location_segments(&path, peg, start, end, &mut |seg| {
            match &seg.path {
                Some(p) => {
                    let p = p.trim_start_matches('/');
                    let _ = writeln!(
                        out,
                        "<S:location-segment path=\"{}\" range-start=\"{}\" range-end=\"{}\"/>",
                        esc(p),
                        seg.start,
                        seg.end
                    );
                }
                None => {
                    let _ = writeln!(
                        out,
                        "<S:location-segment range-start=\"{}\" range-end=\"{}\"/>",
                        seg.start, seg.end
                    );
                }
            }
            Ok(())
        })?;
    out.push_str("</S:get-location-segments-report>\n");
    Ok(xml_reply(out))
}

/// `S:mergeinfo-report`: the mergeinfo of paths (relative to the resource) at a revision.
pub(crate) struct Mergeinfo {
    rev: Option<Revnum>,
    inherit: svelto_repos::Inherit,
    paths: Vec<String>,
    include_descendants: bool,
}

impl ReportRequest for Mergeinfo {
    fn parse(doc: &Elem) -> Result<Self, HttpError> {
        let rev = rev_of(doc.child(SVN, "revision"))?;
        let inherit =
            svelto_repos::Inherit::from_word(doc.child_text(SVN, "inherit").unwrap_or(""));
        let mut paths = Vec::new();
        for c in doc.children.iter().filter(|c| c.is(SVN, "path")) {
            paths.push(relpath(&c.text)?);
        }
        let include_descendants = doc.child_text(SVN, "include-descendants") == Some("yes");
        Ok(Mergeinfo {
            rev,
            inherit,
            paths,
            include_descendants,
        })
    }

    fn answer(self, ctx: &Ctx<'_>, _: &Req) -> Result<Reply, HttpError> {
        mergeinfo(ctx, self)
    }
}

fn mergeinfo(ctx: &Ctx<'_>, q: Mergeinfo) -> Result<Reply, HttpError> {
    let Mergeinfo {
        rev,
        inherit,
        paths,
        include_descendants,
    } = q;
    if let Some(r) = rev {
        ctx.check_rev(r)?;
    }
    let paths: Vec<String> = paths.iter().map(|p| under(ctx, p)).collect();
    let rev = rev.unwrap_or(ctx.youngest);
    let found = ctx
        .svc
        .mergeinfo(&paths, rev, inherit, include_descendants)?;
    let mut out = format!("{XML_HEADER}<S:mergeinfo-report xmlns:S=\"svn:\" xmlns:D=\"DAV:\">\n");
    for (path, info) in found {
        let rel = svelto_core::skip_ancestor(&ctx.target.path, &path).unwrap_or(&path);
        let _ = write!(
            out,
            "<S:mergeinfo-item>\n<S:mergeinfo-path>{}</S:mergeinfo-path>\n<S:mergeinfo-info>{}</S:mergeinfo-info>\n</S:mergeinfo-item>",
            crate::xml::esc_cdata(rel),
            crate::xml::esc_cdata(&info)
        );
    }
    out.push_str("</S:mergeinfo-report>\n");
    let paths: Vec<String> = paths.iter().map(|p| action::fspath(p)).collect();
    Ok(xml_reply(out).action(action::get_mergeinfo(
        &paths,
        inherit.as_word(),
        include_descendants,
    )))
}

/// `S:get-deleted-rev-report`: the revision a path at a peg revision was deleted in.
pub(crate) struct DeletedRev {
    path: String,
    peg: Revnum,
    end: Revnum,
}

impl ReportRequest for DeletedRev {
    fn parse(doc: &Elem) -> Result<Self, HttpError> {
        let path = path_arg(doc)?;
        let (Some(peg), Some(end)) = (
            rev_of(doc.child(SVN, "peg-revision"))?,
            rev_of(doc.child(SVN, "end-revision"))?,
        ) else {
            return Err(HttpError::bad_request(
                "Not all parameters passed (peg and end revisions are needed)",
            ));
        };
        Ok(DeletedRev { path, peg, end })
    }

    fn answer(self, ctx: &Ctx<'_>, _: &Req) -> Result<Reply, HttpError> {
        let path = under(ctx, &self.path);
        ctx.require_read(&path)?;
        deleted_rev(ctx, &path, self.peg, self.end)
    }
}

fn deleted_rev(ctx: &Ctx<'_>, path: &str, peg: Revnum, end: Revnum) -> Result<Reply, HttpError> {
    let rev = ctx.svc.deleted_rev(path, peg, end)?;
    let rev = rev.map_or(-1, |r| r as i64);
    Ok(xml_reply(format!(
        "{XML_HEADER}<S:get-deleted-rev-report xmlns:S=\"svn:\" xmlns:D=\"DAV:\">\n<D:version-name>{rev}</D:version-name></S:get-deleted-rev-report>"
    )))
}

/// `S:dated-rev-report`: the youngest revision at a date.
pub(crate) struct DatedRev {
    when: i64,
}

impl ReportRequest for DatedRev {
    fn parse(doc: &Elem) -> Result<Self, HttpError> {
        let when = doc
            .child(crate::xml::DAV, "creationdate")
            .and_then(|c| svelto_core::parse_svn_date(c.text.trim()))
            .ok_or_else(|| {
                HttpError::bad_request(
                    "The request does not contain a valid 'DAV:creationdate' element.",
                )
            })?;
        Ok(DatedRev { when })
    }

    fn answer(self, ctx: &Ctx<'_>, _: &Req) -> Result<Reply, HttpError> {
        let rev = ctx.svc.dated_rev(self.when)?;
        Ok(xml_reply(format!(
            "{XML_HEADER}<S:dated-rev-report xmlns:S=\"svn:\" xmlns:D=\"DAV:\">\n<D:version-name>{rev}</D:version-name></S:dated-rev-report>"
        )))
    }
}
