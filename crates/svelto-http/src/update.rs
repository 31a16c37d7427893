//! The update report (`svn checkout`, `export`, `update`, `switch`, `status -u`, `diff`):
//! the client's `S:update-report` read into a [`svelto_repos::Report`], the drive of
//! svelto-repos' reporter written as mod_dav_svn's update-report XML by [`XmlEditor`]:
//! "send-all" (properties and base64 svndiff inline) when the client asks for it, else
//! the "skelta" (the tree, entry and changed properties inline when asked, the texts
//! fetched by the client with `GET`s of the `D:checked-in` hrefs).

use crate::ctx::{Ctx, XML_HEADER};
use crate::error::HttpError;
use crate::uri::Kind;
use crate::xml::{esc, esc_to, hex_to, Elem, SVN};
use crate::{Reply, Req};
use hyper::StatusCode;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::Write;
use svelto_core::{join, Depth, Md5, NodeKind, Revnum, Sha1};
use svelto_repos::{action, Editor, Report, ReportOptions, ReposError, TextOptions, Token};

use crate::table::ReportRequest;

fn depth_word(w: &str) -> Result<Depth, HttpError> {
    Ok(match w.trim() {
        "empty" => Depth::Empty,
        "files" => Depth::Files,
        "immediates" => Depth::Immediates,
        "infinity" => Depth::Infinity,
        "unknown" => Depth::Unknown,
        "exclude" => Depth::Exclude,
        other => return Err(HttpError::bad_request(format!("Invalid depth '{other}'"))),
    })
}

fn malformed(name: &str) -> HttpError {
    HttpError::bad_request(format!(
        "The request's '{name}' element is malformed; there is a problem with the client."
    ))
}

fn yes(e: &Elem) -> Result<bool, HttpError> {
    let t = e.text.trim();
    if t.is_empty() {
        return Err(malformed(&e.name));
    }
    Ok(t != "no")
}

/// `S:update-report` as the client sends it: the paths are URLs (or URL paths) still to
/// be resolved against the server's prefix, `target_rev` `None` for HEAD.
pub(crate) struct UpdateReport {
    send_all: bool,
    include_props: bool,
    target_rev: Option<Revnum>,
    src: Option<String>,
    dst: Option<String>,
    target: String,
    depth: Depth,
    ignore_ancestry: bool,
    send_copyfrom_args: bool,
    text_deltas: bool,
    /// The working copy's state, in the client's order.
    state: Vec<StateItem>,
}

/// One `S:entry` or `S:missing` of an update report.
enum StateItem {
    Entry {
        path: String,
        rev: Revnum,
        depth: Depth,
        start_empty: bool,
        lock: Option<String>,
        link: Option<String>,
    },
    Missing(String),
}

impl ReportRequest for UpdateReport {
    fn parse(doc: &Elem) -> Result<Self, HttpError> {
        let send_all = doc.attr("send-all") == Some("true");
        let mut q = UpdateReport {
            send_all,
            include_props: send_all,
            target_rev: None,
            src: None,
            dst: None,
            target: String::new(),
            depth: Depth::Infinity,
            ignore_ancestry: false,
            send_copyfrom_args: false,
            text_deltas: true,
            state: Vec::new(),
        };
        let mut depth: Option<Depth> = None;
        let mut recursive: Option<Depth> = None;
        for c in doc.children.iter().filter(|c| c.ns == SVN) {
            match c.name.as_str() {
                "target-revision" => {
                    let t = c.text.trim();
                    if t.is_empty() {
                        return Err(malformed(&c.name));
                    }
                    // mod_dav_svn reads it with strtol: anything else means HEAD.
                    q.target_rev = t.parse::<Revnum>().ok();
                }
                "src-path" | "dst-path" => {
                    if c.text.is_empty() {
                        return Err(malformed(&c.name));
                    }
                    let url = Some(c.text.clone());
                    if c.name == "src-path" {
                        q.src = url;
                    } else {
                        q.dst = url;
                    }
                }
                "update-target" => q.target = c.text.clone(),
                "depth" => depth = Some(depth_word(&c.text)?),
                "recursive" => {
                    recursive = Some(if yes(c)? {
                        Depth::Infinity
                    } else {
                        Depth::Files
                    })
                }
                "ignore-ancestry" => q.ignore_ancestry = yes(c)?,
                "send-copyfrom-args" => q.send_copyfrom_args = yes(c)?,
                "text-deltas" => q.text_deltas = yes(c)?,
                "include-props" => q.include_props = q.include_props || yes(c)?,
                "entry" => {
                    let rev = c
                        .attr("rev")
                        .ok_or_else(|| HttpError::bad_request("Missing XML attribute: rev"))?;
                    let rev = rev
                        .trim()
                        .parse::<Revnum>()
                        .map_err(|_| HttpError::bad_request(format!("Invalid revision '{rev}'")))?;
                    let depth = c
                        .attr("depth")
                        .map(depth_word)
                        .transpose()?
                        .unwrap_or(Depth::Infinity);
                    q.state.push(StateItem::Entry {
                        path: c.text.clone(),
                        rev,
                        depth,
                        start_empty: c.attr("start-empty").is_some(),
                        lock: c.attr("lock-token").map(str::to_string),
                        link: c
                            .attr("linkpath")
                            .map(|l| l.trim_start_matches('/').to_string()),
                    });
                }
                "missing" => q.state.push(StateItem::Missing(c.text.clone())),
                _ => {}
            }
        }
        q.depth = depth.or(recursive).unwrap_or(Depth::Infinity);
        Ok(q)
    }

    fn answer(self, ctx: &Ctx<'_>, req: &Req) -> Result<Reply, HttpError> {
        update_report(ctx, req, self)
    }
}

/// `REPORT` with `S:update-report`, on `!svn/me` or the VCC.
fn update_report(ctx: &Ctx<'_>, req: &Req, q: UpdateReport) -> Result<Reply, HttpError> {
    if !matches!(ctx.target.kind, Kind::Me | Kind::Vcc) {
        return Err(HttpError::new(
            StatusCode::CONFLICT,
            "This report can only be run against a VCC or root-stub URI",
        ));
    }
    let UpdateReport {
        send_all,
        include_props,
        target_rev,
        src,
        dst,
        target,
        depth,
        ignore_ancestry,
        send_copyfrom_args,
        text_deltas,
        state,
    } = q;
    let resolve = |url: &str| crate::uri::report_path(ctx.state, &ctx.target, url);
    let src = src.as_deref().map(resolve).transpose()?;
    let dst = dst.as_deref().map(resolve).transpose()?;
    let Some(anchor) = src else {
        return Err(HttpError::bad_request(
            "The request did not contain the '<src-path>' element.\nThis may indicate that your client is too old",
        ));
    };
    let target_rev = match target_rev {
        Some(r) => ctx.check_rev(r)?,
        None => ctx.youngest,
    };
    let mut report = Report::new();
    let mut links: Vec<(String, String)> = Vec::new();
    // For the log, as mod_dav_svn guesses the client's command from them: the entries,
    // whether one started empty, the revision of the anchor's.
    let (mut entries, mut some_empty, mut from_rev) = (0u32, false, None);
    for item in &state {
        match item {
            StateItem::Entry {
                path,
                rev,
                depth: d,
                start_empty,
                lock,
                link,
            } => {
                let (rev, d, start_empty) = (*rev, *d, *start_empty);
                ctx.check_rev(rev)?;
                entries += 1;
                some_empty |= start_empty;
                if path.is_empty() {
                    from_rev = Some(rev);
                }
                let lock = lock.as_deref();
                match link {
                    Some(link) => {
                        report.link_path(path, link, rev, d, start_empty, lock)?;
                        if dst.is_none() {
                            links.push((join(&join(&anchor, &target), path), link.clone()));
                        }
                    }
                    None => report.set_path(path, rev, d, start_empty, lock)?,
                }
            }
            StateItem::Missing(path) => report.delete_path(path)?,
        }
    }
    // Where the editor's paths lead in the target revision (mod_dav_svn's path map).
    let mut dst_base = anchor.clone();
    if let Some(d) = &dst {
        if target.is_empty() {
            dst_base = d.clone();
        } else {
            links.push((join(&anchor, &target), d.clone()));
        }
    }
    let svndiff = req.svndiff_version().unwrap_or(0);
    let opts = ReportOptions {
        anchor: anchor.clone(),
        target: target.clone(),
        target_rev,
        switch_path: dst.clone(),
        depth,
        send_copyfrom_args,
        ignore_ancestry,
        text: TextOptions {
            svndiff_version: svndiff,
            accepts: svndiff,
            send_deltas: send_all && text_deltas,
        },
    };
    // No check of the target or the switch destination as a whole: mod_dav_svn makes none
    // (the drive refuses an unreadable anchor and sends what is unreadable below it as
    // absent), so a file external switched over a node that became unreadable is updated.
    let logged = {
        let spath = action::fspath(&join(&anchor, &target));
        match &dst {
            // diff and merge ask for no inline texts; switch does.
            Some(d) if send_all => action::switch(&spath, &action::fspath(d), target_rev, depth),
            Some(d) => action::diff(
                &spath,
                from_rev,
                &action::fspath(d),
                target_rev,
                depth,
                ignore_ancestry,
            ),
            None if entries == 1 && some_empty => action::checkout(&spath, target_rev, depth),
            // A skelta (not send-all) carries no texts: mod_dav_svn calls it a status.
            None if send_all && text_deltas => {
                action::update(&spath, target_rev, depth, send_copyfrom_args)
            }
            None => action::status(&spath, target_rev, depth),
        }
    };
    let prepared = ctx.svc.prepare_report(&opts, report)?;
    let editor_state = XmlState {
        svc: ctx.svc.clone(),
        root_href: ctx.root_href().to_string(),
        target_rev,
        anchor,
        has_target: !target.is_empty(),
        dst_base,
        links,
        send_all,
        include_props,
        safe_cr: ctx.svc.safe_cr(target_rev),
        dirs: Vec::new(),
    };
    Ok(Reply::xml_stream(Box::new(move |w| {
        let mut editor = XmlEditor {
            s: editor_state,
            w,
            items: HashMap::new(),
            next: 0,
            b64: crate::xml::Base64Stream::default(),
            buf: String::with_capacity(FLUSH_AT + 4096),
            scratch: String::new(),
        };
        prepared.run(&mut editor).map_err(HttpError::from)?;
        editor.flush().map_err(HttpError::from)?;
        Ok(())
    }))
    .action(logged))
}

struct XmlState {
    svc: svelto_repos::service::Ctx,
    root_href: String,
    target_rev: Revnum,
    anchor: String,
    has_target: bool,
    dst_base: String,
    /// (anchor-side relpath, repository relpath) for switched subtrees.
    links: Vec<(String, String)>,
    send_all: bool,
    include_props: bool,
    safe_cr: svelto_repos::SafeCr,
    /// The directories above the last node [`XmlState::created`] looked up, root first
    /// (repository relpath and node in the target revision): the drive goes depth first,
    /// so a node is found from its parent in one step instead of a walk from the root.
    dirs: Vec<(String, svelto_repos::Node)>,
}

impl XmlState {
    /// The repository relpath an editor path (relative to the anchor) has in the target.
    fn real_path(&self, rel: &str) -> String {
        if self.links.is_empty() {
            return join(&self.dst_base, rel);
        }
        let src = join(&self.anchor, rel);
        let mut best: Option<(&str, &str)> = None;
        for (from, to) in &self.links {
            let under = svelto_core::skip_ancestor(from, &src);
            if under.is_some() && best.is_none_or(|(f, _)| f.len() < from.len()) {
                best = Some((from, to));
            }
        }
        if let Some((from, to)) = best {
            let rest = svelto_core::skip_ancestor(from, &src).unwrap_or_default();
            return join(to, rest);
        }
        join(&self.dst_base, rel)
    }

    /// mod_dav_svn's "safe created revision" of the node at `path` in the target revision
    /// (see [`SafeCr`]), and the file's SHA-1.
    fn created(&mut self, path: &str) -> (Revnum, Option<Sha1>) {
        let Some(n) = self.node(path) else {
            return (self.target_rev, None);
        };
        let sha1 = (n.kind() == NodeKind::File).then(|| n.sha1());
        (self.safe_cr.get(path, &n), sha1)
    }

    /// The node at the repository relpath `path` in the target revision, found from the
    /// directories kept in [`XmlState::dirs`]; where a directory on the way is hidden from
    /// the user (authz is per path), by one lookup of the path itself.
    fn node(&mut self, path: &str) -> Option<svelto_repos::Node> {
        match self.node_below(path) {
            Some(n) => Some(n),
            None if !path.is_empty() => self.svc.node(path, self.target_rev).ok().flatten(),
            None => None,
        }
    }

    /// [`XmlState::node`] through the kept directories (None also when one is hidden).
    fn node_below(&mut self, path: &str) -> Option<svelto_repos::Node> {
        if path.is_empty() {
            return self.svc.node("", self.target_rev).ok().flatten();
        }
        let (parent, name) = path.rsplit_once('/').unwrap_or(("", path));
        // Keep only the directories above `parent` (or `parent` itself).
        while let Some((p, _)) = self.dirs.last() {
            let above = p.is_empty()
                || p == parent
                || (parent.starts_with(p.as_str())
                    && parent.as_bytes().get(p.len()) == Some(&b'/'));
            if above {
                break;
            }
            self.dirs.pop();
        }
        if self.dirs.is_empty() {
            let root = self.svc.node("", self.target_rev).ok().flatten()?;
            self.dirs.push((String::new(), root));
        }
        // Down from the deepest kept directory to `parent`.
        loop {
            let (p, dir) = self.dirs.last()?;
            if p == parent {
                break;
            }
            let rest = if p.is_empty() {
                parent
            } else {
                &parent[p.len() + 1..]
            };
            let step = rest.split('/').next().unwrap_or(rest);
            let child = self.svc.child(dir, step).ok().flatten()?;
            let at = join(p, step);
            self.dirs.push((at, child));
        }
        let (_, dir) = self.dirs.last()?;
        self.svc.child(dir, name).ok().flatten()
    }

    /// Appends the href `ROOT/!svn/KIND/REV/path`, escaped for XML, to `out` (`scratch`
    /// holds it unescaped on the way).
    fn href_to(&self, out: &mut String, scratch: &mut String, kind: &str, rev: Revnum, path: &str) {
        scratch.clear();
        crate::uri::build_uri_to(scratch, &self.root_href, kind, rev, path);
        esc_to(out, scratch);
    }
}

struct Item {
    rel: String,
    added: bool,
    copied: bool,
    is_dir: bool,
    text_changed: bool,
    base_checksum: Option<String>,
    removed_props: Vec<String>,
}

/// Writes a drive as update-report XML.
struct XmlEditor<'w> {
    s: XmlState,
    w: &'w mut dyn Write,
    /// What is written, before it goes to `w` (at [`FLUSH_AT`] bytes, before a text's
    /// base64 and at the end): each element is appended piece by piece, not formatted
    /// into strings of its own.
    buf: String,
    /// An href on its way into `buf`.
    scratch: String,
    items: HashMap<Token, Item>,
    next: Token,
    /// The current svndiff stream's base64.
    b64: crate::xml::Base64Stream,
}

fn name_of(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// How much XML the editor gathers before it hands it to the response.
const FLUSH_AT: usize = 32 * 1024;

impl XmlEditor<'_> {
    fn put(&mut self, s: &str) -> svelto_repos::Result<()> {
        self.buf.push_str(s);
        self.wrote()
    }

    /// Hands what is gathered to the response once there is enough of it.
    fn wrote(&mut self) -> svelto_repos::Result<()> {
        if self.buf.len() >= FLUSH_AT {
            self.flush()?;
        }
        Ok(())
    }

    /// Hands everything gathered to the response.
    fn flush(&mut self) -> svelto_repos::Result<()> {
        if !self.buf.is_empty() {
            self.w
                .write_all(self.buf.as_bytes())
                .map_err(crate::error::write_err)?;
            self.buf.clear();
        }
        Ok(())
    }

    fn token(&mut self, item: Item) -> Token {
        let t = self.next;
        self.next += 1;
        self.items.insert(t, item);
        t
    }

    fn item(&mut self, t: Token) -> svelto_repos::Result<&mut Item> {
        self.items
            .get_mut(&t)
            .ok_or_else(|| ReposError::Internal(format!("unknown editor token {t}")))
    }

    fn checked_in(&mut self, rel: &str) -> svelto_repos::Result<()> {
        let real = self.s.real_path(rel);
        let (cr, _) = self.s.created(&real);
        self.checked_in_at(&real, cr)
    }

    /// `D:checked-in` of the node at the repository relpath `real`, created in `cr`.
    fn checked_in_at(&mut self, real: &str, cr: Revnum) -> svelto_repos::Result<()> {
        self.buf.push_str("<D:checked-in><D:href>");
        self.s
            .href_to(&mut self.buf, &mut self.scratch, "rvr", cr, real);
        self.buf.push_str("</D:href></D:checked-in>\n");
        self.wrote()
    }

    fn add(
        &mut self,
        is_dir: bool,
        path: &str,
        copyfrom: Option<(&str, Revnum)>,
    ) -> svelto_repos::Result<Token> {
        let real = self.s.real_path(path);
        let (cr, sha1) = self.s.created(&real);
        let b = &mut self.buf;
        b.push_str(if is_dir {
            "<S:add-directory name=\""
        } else {
            "<S:add-file name=\""
        });
        esc_to(b, name_of(path));
        b.push('"');
        if is_dir {
            b.push_str(" bc-url=\"");
            self.s.href_to(b, &mut self.scratch, "bc", cr, &real);
            b.push('"');
        } else if let Some(sha1) = sha1 {
            b.push_str(" sha1-checksum=\"");
            hex_to(b, &sha1.0);
            b.push('"');
        }
        if let Some((p, r)) = copyfrom {
            b.push_str(" copyfrom-path=\"");
            esc_to(b, p);
            let _ = write!(b, "\" copyfrom-rev=\"{r}\"");
        }
        b.push_str(">\n");
        self.checked_in_at(&real, cr)?;
        Ok(self.token(Item {
            // Only an opened file's close looks at it.
            rel: String::new(),
            added: true,
            copied: copyfrom.is_some(),
            is_dir,
            text_changed: false,
            base_checksum: None,
            removed_props: Vec::new(),
        }))
    }

    fn open(
        &mut self,
        is_dir: bool,
        path: &str,
        base: Option<Revnum>,
    ) -> svelto_repos::Result<Token> {
        let b = &mut self.buf;
        b.push_str(if is_dir {
            "<S:open-directory name=\""
        } else {
            "<S:open-file name=\""
        });
        esc_to(b, name_of(path));
        b.push_str("\" rev=\"");
        rev_to(b, base);
        b.push_str("\">\n");
        self.checked_in(path)?;
        Ok(self.token(Item {
            rel: path.to_string(),
            added: false,
            copied: false,
            is_dir,
            text_changed: false,
            base_checksum: None,
            removed_props: Vec::new(),
        }))
    }

    fn prop(&mut self, t: Token, name: &[u8], value: Option<&[u8]>) -> svelto_repos::Result<()> {
        let (send_all, include_props) = (self.s.send_all, self.s.include_props);
        let item = self.item(t)?;
        let name = String::from_utf8_lossy(name);
        let send = if send_all || !item.added {
            true
        } else {
            if item.copied && value.is_none() {
                item.removed_props.push(name.clone().into_owned());
            }
            value.is_some() && include_props
        };
        if !send {
            return Ok(());
        }
        let b = &mut self.buf;
        match value {
            Some(v) => {
                b.push_str("<S:set-prop name=\"");
                esc_to(b, &name);
                b.push('"');
                crate::xml::value_rest(b, "S:set-prop", "encoding", v);
            }
            None => {
                b.push_str("<S:remove-prop name=\"");
                esc_to(b, &name);
                b.push_str("\"/>\n");
            }
        }
        self.wrote()
    }

    fn close(&mut self, t: Token) -> svelto_repos::Result<()> {
        let item = self
            .items
            .remove(&t)
            .ok_or_else(|| ReposError::Internal(format!("unknown editor token {t}")))?;
        let b = &mut self.buf;
        if item.copied {
            for p in &item.removed_props {
                b.push_str("<S:remove-prop name=\"");
                esc_to(b, p);
                b.push_str("\"/>\n");
            }
        }
        b.push_str(match (item.added, item.is_dir) {
            (true, true) => "</S:add-directory>\n",
            (true, false) => "</S:add-file>\n",
            (false, true) => "</S:open-directory>\n",
            (false, false) => "</S:open-file>\n",
        });
        self.wrote()
    }
}

fn rev_text(r: Option<Revnum>) -> String {
    r.map_or_else(|| "-1".to_string(), |r| r.to_string())
}

/// Appends a base revision as the report writes it (`-1` for none).
fn rev_to(out: &mut String, r: Option<Revnum>) {
    match r {
        Some(r) => {
            let _ = write!(out, "{r}");
        }
        None => out.push_str("-1"),
    }
}

impl Editor for XmlEditor<'_> {
    fn target_rev(&mut self, rev: Revnum) -> svelto_repos::Result<()> {
        let attrs = match (self.s.send_all, self.s.include_props) {
            (true, true) => "send-all=\"true\" inline-props=\"true\"",
            (true, false) => "send-all=\"true\" ",
            (false, true) => " inline-props=\"true\"",
            (false, false) => " ",
        };
        self.put(&format!(
            "{XML_HEADER}<S:update-report xmlns:S=\"svn:\" xmlns:V=\"http://subversion.tigris.org/xmlns/dav/\" xmlns:D=\"DAV:\" {attrs}>\n<S:target-revision rev=\"{rev}\"/>\n"
        ))
    }

    fn open_root(&mut self, base_rev: Option<Revnum>) -> svelto_repos::Result<Token> {
        self.put(&format!(
            "<S:open-directory rev=\"{}\">\n",
            rev_text(base_rev)
        ))?;
        if !self.s.has_target {
            self.checked_in("")?;
        }
        Ok(self.token(Item {
            rel: String::new(),
            added: false,
            copied: false,
            is_dir: true,
            text_changed: false,
            base_checksum: None,
            removed_props: Vec::new(),
        }))
    }

    fn delete_entry(
        &mut self,
        path: &str,
        rev: Option<Revnum>,
        _: Token,
    ) -> svelto_repos::Result<()> {
        self.put(&format!(
            "<S:delete-entry name=\"{}\" rev=\"{}\"/>\n",
            esc(name_of(path)),
            rev_text(rev)
        ))
    }

    fn add_dir(
        &mut self,
        path: &str,
        _: Token,
        copyfrom: Option<(&str, Revnum)>,
    ) -> svelto_repos::Result<Token> {
        self.add(true, path, copyfrom)
    }

    fn open_dir(
        &mut self,
        path: &str,
        _: Token,
        base_rev: Option<Revnum>,
    ) -> svelto_repos::Result<Token> {
        self.open(true, path, base_rev)
    }

    fn change_dir_prop(
        &mut self,
        dir: Token,
        name: &[u8],
        value: Option<&[u8]>,
    ) -> svelto_repos::Result<()> {
        self.prop(dir, name, value)
    }

    fn close_dir(&mut self, dir: Token) -> svelto_repos::Result<()> {
        self.close(dir)
    }

    fn absent_dir(&mut self, path: &str, _: Token) -> svelto_repos::Result<()> {
        self.put(&format!(
            "<S:absent-directory name=\"{}\"/>\n",
            esc(name_of(path))
        ))
    }

    fn add_file(
        &mut self,
        path: &str,
        _: Token,
        copyfrom: Option<(&str, Revnum)>,
    ) -> svelto_repos::Result<Token> {
        self.add(false, path, copyfrom)
    }

    fn open_file(
        &mut self,
        path: &str,
        _: Token,
        base_rev: Option<Revnum>,
    ) -> svelto_repos::Result<Token> {
        self.open(false, path, base_rev)
    }

    fn apply_textdelta(&mut self, file: Token, base_md5: Option<&Md5>) -> svelto_repos::Result<()> {
        let send_all = self.s.send_all;
        let item = self.item(file)?;
        item.text_changed = true;
        item.base_checksum = base_md5.map(Md5::to_hex);
        if !send_all {
            return Ok(());
        }
        match base_md5 {
            Some(m) => {
                self.buf.push_str("<S:txdelta base-checksum=\"");
                hex_to(&mut self.buf, &m.0);
                self.buf.push_str("\">");
            }
            None => self.buf.push_str("<S:txdelta>"),
        }
        self.b64.start();
        // The base64 goes to the response directly: what is gathered goes first.
        self.flush()
    }

    fn textdelta_chunk(&mut self, _: Token, chunk: &[u8]) -> svelto_repos::Result<()> {
        if self.s.send_all {
            self.b64
                .push(chunk, self.w)
                .map_err(crate::error::write_err)?;
        }
        Ok(())
    }

    fn textdelta_end(&mut self, _: Token) -> svelto_repos::Result<()> {
        if self.s.send_all {
            self.b64.finish(self.w).map_err(crate::error::write_err)?;
            self.put("</S:txdelta>")?;
        }
        Ok(())
    }

    fn change_file_prop(
        &mut self,
        file: Token,
        name: &[u8],
        value: Option<&[u8]>,
    ) -> svelto_repos::Result<()> {
        self.prop(file, name, value)
    }

    fn close_file(&mut self, file: Token, text_md5: Option<&Md5>) -> svelto_repos::Result<()> {
        let send_all = self.s.send_all;
        let item = self.item(file)?;
        if !send_all && !item.added && item.text_changed {
            let base = item.base_checksum.clone();
            let rel = item.rel.clone();
            let real = self.s.real_path(&rel);
            let (_, sha1) = self.s.created(&real);
            let b = &mut self.buf;
            b.push_str("<S:fetch-file");
            if let Some(c) = base {
                b.push_str(" base-checksum=\"");
                b.push_str(&c);
                b.push('"');
            }
            if let Some(s) = sha1 {
                b.push_str(" sha1-checksum=\"");
                hex_to(b, &s.0);
                b.push('"');
            }
            b.push_str("/>\n");
        }
        if let Some(m) = text_md5 {
            self.buf.push_str("<S:prop><V:md5-checksum>");
            hex_to(&mut self.buf, &m.0);
            self.buf.push_str("</V:md5-checksum></S:prop>");
        }
        self.close(file)
    }

    fn absent_file(&mut self, path: &str, _: Token) -> svelto_repos::Result<()> {
        self.put(&format!(
            "<S:absent-file name=\"{}\"/>\n",
            esc(name_of(path))
        ))
    }

    fn close_edit(&mut self) -> svelto_repos::Result<()> {
        self.put("</S:update-report>\n")?;
        self.flush()
    }

    fn abort_edit(&mut self) -> svelto_repos::Result<()> {
        Ok(())
    }
}
