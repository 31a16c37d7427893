//! Blame: the revision, author and date that last changed each line of a file, from the
//! versions `service::Ctx::file_revs` gives (what `svn blame` asks for, filtered by the
//! same authz), each compared with the one before by lines.

use crate::layout::{self, RevInfos};
use crate::{At, Page, Response};
use maud::html;
use similar::{ChangeTag, TextDiff};
use svelto_core::{NodeKind, Revnum};
use svelto_repos::{FileRev, FileRevsHandler, FileRevsOptions, Result};

/// Files larger than this (in any version) are not blamed in a page.
const MAX_BLAMED: u64 = 1 << 20;

/// The versions (path, revision) of a file, oldest first.
#[derive(Default)]
struct Versions(Vec<(String, Revnum)>);

impl FileRevsHandler for Versions {
    fn file_rev(&mut self, rev: &FileRev<'_>) -> Result<()> {
        if !rev.merged {
            self.0
                .push((rev.path.trim_start_matches('/').to_string(), rev.rev));
        }
        Ok(())
    }
    fn delta_chunk(&mut self, _chunk: &[u8]) -> Result<()> {
        Ok(())
    }
    fn file_rev_end(&mut self) -> Result<()> {
        Ok(())
    }
}

/// Each line of the last text with the revision that brought it, given the texts of the
/// versions oldest first.
pub fn attribute<'t>(versions: impl IntoIterator<Item = (Revnum, &'t str)>) -> Vec<Revnum> {
    let mut revs: Vec<Revnum> = Vec::new();
    let mut last = "";
    for (rev, text) in versions {
        let diff = TextDiff::configure()
            .timeout(std::time::Duration::from_millis(500))
            .diff_lines(last, text);
        let mut next = Vec::with_capacity(revs.len() + 8);
        for change in diff.iter_all_changes() {
            match change.tag() {
                ChangeTag::Equal => next.push(
                    change
                        .old_index()
                        .and_then(|i| revs.get(i).copied())
                        .unwrap_or(rev),
                ),
                ChangeTag::Insert => next.push(rev),
                ChangeTag::Delete => {}
            }
        }
        revs = next;
        last = text;
    }
    revs
}

pub fn blame(at: &At<'_>) -> Result<Response> {
    let node = match at.svc.node(at.path, at.rev)? {
        Some(n) if n.kind() == NodeKind::File => n,
        _ => {
            return Ok(layout::not_found(
                at.site,
                &format!("'/{}' is not a file in revision {}", at.path, at.rev),
            ))
        }
    };
    let name = at.path.rsplit('/').next().unwrap_or(at.path);
    let props = at.svc.node_props(&node)?;
    let last_text = if node.size() <= MAX_BLAMED {
        Some(at.svc.read_text(&node)?)
    } else {
        None
    };
    let text_ok = last_text
        .as_ref()
        .is_some_and(|t| crate::browse::classify(name, &props, t) == crate::browse::Shown::Text);
    if !text_ok {
        let body = html! { p.muted { "Only text files of at most " (layout::size(MAX_BLAMED)) " are blamed here." } };
        return Ok(layout::page(at, Page::Blame, "Blame", body));
    }
    let mut versions = Versions::default();
    let opts = FileRevsOptions {
        start: Some(0),
        end: Some(at.rev),
        include_merged: false,
        svndiff_version: 0,
    };
    at.svc.file_revs(at.path, &opts, &mut versions)?;
    let mut texts = Vec::with_capacity(versions.0.len());
    for (path, rev) in &versions.0 {
        let text = match at.svc.node(path, *rev)? {
            Some(n) if n.size() <= MAX_BLAMED => at.svc.read_text(&n)?,
            _ => std::sync::Arc::new(Vec::new()),
        };
        texts.push((*rev, String::from_utf8_lossy(&text).into_owned()));
    }
    let revs = attribute(texts.iter().map(|(r, t)| (*r, t.as_str())));
    let last = texts.last().map(|(_, t)| t.as_str()).unwrap_or("");
    let mut infos = RevInfos::default();
    let mut rows = Vec::with_capacity(revs.len());
    for (i, line) in last.lines().enumerate() {
        let rev = revs.get(i).copied().unwrap_or(at.rev);
        let info = infos.get(at.svc, rev)?.clone();
        rows.push((rev, info, line));
    }
    let body = html! {
        h1 { "Blame of /" (at.path) " @ r" (at.rev) }
        nav.links {
            a href=(at.href(Page::Browse, Some(at.rev), at.path)) { "File" }
            a href=(at.href(Page::Log, Some(at.rev), at.path)) { "History" }
        }
        table.code.blame {
            @for (i, (rev, info, line)) in rows.iter().enumerate() {
                @let n = i + 1;
                tr id=(format!("L{n}")) {
                    td.n { a href=(at.href(Page::Rev, Some(*rev), "")) title=(info.summary()) { (rev) } }
                    td.n { (info.author.as_deref().unwrap_or("")) }
                    td.n { (layout::short_date(info.date.as_deref()).get(..10).unwrap_or("")) }
                    td.n { a href=(format!("#L{n}")) { (n) } }
                    td { (line) }
                }
            }
        }
    };
    let title = format!("Blame of {}/{}", at.site.repo_name, at.path);
    Ok(layout::page(at, Page::Blame, &title, body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_keep_the_revision_that_brought_them() {
        let revs = attribute([
            (1, "a\nb\nc\n"),
            (3, "a\nB\nc\n"),
            (5, "zero\na\nB\nc\nd\n"),
        ]);
        assert_eq!(revs, vec![5, 1, 3, 1, 5]);
        assert!(attribute([]).is_empty());
    }
}
