//! The replay report (`svnsync`, `svnrdump dump`): one revision's changes as mod_dav_svn's
//! `S:editor-report`, from svelto-repos' replay drive. ra_serf sends one report per
//! revision to `!svn/rev/N` (replay-range is pipelined replays), or, in the older form, to a
//! public URL with `S:revision` in the body.

use crate::ctx::{svndiff_version, Ctx, XML_HEADER};
use crate::error::HttpError;
use crate::table::ReportRequest;
use crate::uri::Kind;
use crate::xml::{esc, Base64Stream, Elem, SVN};
use crate::{Reply, Req};
use std::io::Write;
use svelto_core::{Md5, Revnum};
use svelto_repos::{Editor, ReplayOptions, TextOptions, Token};

fn malformed(name: &str) -> HttpError {
    HttpError::bad_request(format!(
        "The request's '{name}' element is malformed; there is a problem with the client."
    ))
}

/// `S:replay-report`: a revision's changes below a path, as svnsync asks for them.
pub(crate) struct ReplayReport {
    rev: Option<Revnum>,
    low_water_mark: Option<Revnum>,
    send_deltas: bool,
    include_path: Option<String>,
}

impl ReportRequest for ReplayReport {
    fn parse(doc: &Elem) -> Result<Self, HttpError> {
        let mut q = ReplayReport {
            rev: None,
            low_water_mark: None,
            send_deltas: true,
            include_path: None,
        };
        for c in doc.children.iter().filter(|c| c.ns == SVN) {
            let t = c.text.trim();
            match c.name.as_str() {
                "revision" => {
                    if q.rev.is_some() {
                        return Err(malformed("revision"));
                    }
                    q.rev = Some(t.parse().map_err(|_| malformed("revision"))?);
                }
                "low-water-mark" => {
                    q.low_water_mark = Some(t.parse().map_err(|_| malformed("low-water-mark"))?)
                }
                "send-deltas" => {
                    q.send_deltas = t.parse::<i64>().map_err(|_| malformed("send-deltas"))? != 0
                }
                "include-path" => q.include_path = Some(crate::reports::relpath(t)?),
                _ => {}
            }
        }
        Ok(q)
    }

    fn answer(self, ctx: &Ctx<'_>, req: &Req) -> Result<Reply, HttpError> {
        replay_report(ctx, req, self)
    }
}

fn replay_report(ctx: &Ctx<'_>, req: &Req, q: ReplayReport) -> Result<Reply, HttpError> {
    // A revision resource names the revision (and an `S:revision` may not name it again);
    // any other names the base directory.
    let (rev, base_dir) = match ctx.target.kind {
        Kind::Rev(r) | Kind::Baseline(r) => {
            if q.rev.is_some() {
                return Err(malformed("revision"));
            }
            (Some(r), String::new())
        }
        _ => (q.rev, ctx.target.path.clone()),
    };
    let base_dir = q.include_path.unwrap_or(base_dir);
    let (low_water_mark, send_deltas) = (q.low_water_mark, q.send_deltas);
    let rev =
        rev.ok_or_else(|| HttpError::bad_request("Request was missing the revision argument"))?;
    let low_water_mark = low_water_mark
        .ok_or_else(|| HttpError::bad_request("Request was missing the low-water-mark argument"))?;
    let rev = ctx.check_rev(rev)?;
    ctx.require_read(&base_dir)?;
    let logged = svelto_repos::action::replay(&svelto_repos::action::fspath(&base_dir), rev);
    let svndiff = svndiff_version(req.header("accept-encoding")).unwrap_or(0);
    let opts = ReplayOptions {
        base_dir,
        low_water_mark,
        send_deltas,
        text: TextOptions {
            svndiff_version: svndiff,
            accepts: svndiff,
            send_deltas,
        },
    };
    let svc = ctx.svc.clone();
    Ok(Reply::xml_stream(Box::new(move |w| {
        let mut editor = ReplayXml {
            w,
            in_delta: false,
            b64: Base64Stream::default(),
        };
        editor.put(&format!("{XML_HEADER}<S:editor-report xmlns:S=\"svn:\">\n"))?;
        svc.replay(rev, &opts, &mut editor)?;
        editor.end_delta()?;
        editor.put("</S:editor-report>\n")?;
        Ok(())
    }))
    .action(logged))
}

/// Writes a replay drive as `S:editor-report` XML.
struct ReplayXml<'w> {
    w: &'w mut dyn Write,
    /// Inside `S:apply-textdelta` (closed by the next call).
    in_delta: bool,
    b64: Base64Stream,
}

impl ReplayXml<'_> {
    fn put(&mut self, s: &str) -> svelto_repos::Result<()> {
        self.w
            .write_all(s.as_bytes())
            .map_err(crate::error::write_err)
    }

    fn end_delta(&mut self) -> svelto_repos::Result<()> {
        if self.in_delta {
            self.in_delta = false;
            self.b64.finish(self.w).map_err(crate::error::write_err)?;
            self.put("</S:apply-textdelta>\n")?;
        }
        Ok(())
    }

    /// Writes `s` after closing an open text delta.
    fn event(&mut self, s: &str) -> svelto_repos::Result<()> {
        self.end_delta()?;
        self.put(s)
    }

    fn add(
        &mut self,
        kind: &str,
        path: &str,
        copyfrom: Option<(&str, Revnum)>,
    ) -> svelto_repos::Result<Token> {
        let s = match copyfrom {
            Some((p, r)) => format!(
                "<S:add-{kind} name=\"{}\" copyfrom-path=\"{}\" copyfrom-rev=\"{r}\"/>\n",
                esc(path),
                esc(p)
            ),
            None => format!("<S:add-{kind} name=\"{}\"/>\n", esc(path)),
        };
        self.event(&s)?;
        Ok(0)
    }

    fn prop(&mut self, kind: &str, name: &[u8], value: Option<&[u8]>) -> svelto_repos::Result<()> {
        let qname = esc(&String::from_utf8_lossy(name)).into_owned();
        let s = match value {
            Some(v) => format!(
                "<S:change-{kind}-prop name=\"{qname}\">{}</S:change-{kind}-prop>\n",
                crate::xml::base64_lines(v)
            ),
            None => format!("<S:change-{kind}-prop name=\"{qname}\" del=\"true\"/>\n"),
        };
        self.event(&s)
    }
}

fn rev_text(r: Option<Revnum>) -> i64 {
    r.map_or(-1, |r| r as i64)
}

impl Editor for ReplayXml<'_> {
    fn target_rev(&mut self, rev: Revnum) -> svelto_repos::Result<()> {
        self.event(&format!("<S:target-revision rev=\"{rev}\"/>\n"))
    }
    fn open_root(&mut self, base_rev: Option<Revnum>) -> svelto_repos::Result<Token> {
        self.event(&format!("<S:open-root rev=\"{}\"/>\n", rev_text(base_rev)))?;
        Ok(0)
    }
    fn delete_entry(
        &mut self,
        path: &str,
        rev: Option<Revnum>,
        _: Token,
    ) -> svelto_repos::Result<()> {
        self.event(&format!(
            "<S:delete-entry name=\"{}\" rev=\"{}\"/>\n",
            esc(path),
            rev_text(rev)
        ))
    }
    fn add_dir(
        &mut self,
        path: &str,
        _: Token,
        copyfrom: Option<(&str, Revnum)>,
    ) -> svelto_repos::Result<Token> {
        self.add("directory", path, copyfrom)
    }
    fn open_dir(
        &mut self,
        path: &str,
        _: Token,
        base_rev: Option<Revnum>,
    ) -> svelto_repos::Result<Token> {
        self.event(&format!(
            "<S:open-directory name=\"{}\" rev=\"{}\"/>\n",
            esc(path),
            rev_text(base_rev)
        ))?;
        Ok(0)
    }
    fn change_dir_prop(
        &mut self,
        _: Token,
        name: &[u8],
        value: Option<&[u8]>,
    ) -> svelto_repos::Result<()> {
        self.prop("dir", name, value)
    }
    fn close_dir(&mut self, _: Token) -> svelto_repos::Result<()> {
        self.event("<S:close-directory/>\n")
    }
    fn absent_dir(&mut self, _: &str, _: Token) -> svelto_repos::Result<()> {
        Ok(())
    }
    fn add_file(
        &mut self,
        path: &str,
        _: Token,
        copyfrom: Option<(&str, Revnum)>,
    ) -> svelto_repos::Result<Token> {
        self.add("file", path, copyfrom)
    }
    fn open_file(
        &mut self,
        path: &str,
        _: Token,
        base_rev: Option<Revnum>,
    ) -> svelto_repos::Result<Token> {
        self.event(&format!(
            "<S:open-file name=\"{}\" rev=\"{}\"/>\n",
            esc(path),
            rev_text(base_rev)
        ))?;
        Ok(0)
    }
    fn apply_textdelta(&mut self, _: Token, base_md5: Option<&Md5>) -> svelto_repos::Result<()> {
        let s = match base_md5 {
            Some(m) => format!("<S:apply-textdelta checksum=\"{}\">", m.to_hex()),
            None => "<S:apply-textdelta>".to_string(),
        };
        self.event(&s)?;
        self.in_delta = true;
        self.b64.start();
        Ok(())
    }
    fn textdelta_chunk(&mut self, _: Token, chunk: &[u8]) -> svelto_repos::Result<()> {
        self.b64
            .push(chunk, self.w)
            .map_err(crate::error::write_err)
    }
    fn textdelta_end(&mut self, _: Token) -> svelto_repos::Result<()> {
        self.end_delta()
    }
    fn change_file_prop(
        &mut self,
        _: Token,
        name: &[u8],
        value: Option<&[u8]>,
    ) -> svelto_repos::Result<()> {
        self.prop("file", name, value)
    }
    fn close_file(&mut self, _: Token, text_md5: Option<&Md5>) -> svelto_repos::Result<()> {
        match text_md5 {
            Some(m) => self.event(&format!("<S:close-file checksum=\"{}\"/>\n", m.to_hex())),
            None => self.event("<S:close-file/>\n"),
        }
    }
    fn absent_file(&mut self, _: &str, _: Token) -> svelto_repos::Result<()> {
        Ok(())
    }
    fn close_edit(&mut self) -> svelto_repos::Result<()> {
        Ok(())
    }
    fn abort_edit(&mut self) -> svelto_repos::Result<()> {
        Ok(())
    }
}
