//! Blame: the revision, author and date that last changed each line of a file, from the
//! versions of its history (`service::Ctx::log` and `locations`, filtered by the same
//! authz as `svn blame`'s file-revs), each compared with the one before by lines.

use crate::layout::{self, RevInfos};
use crate::{At, Page, Response};
use maud::html;
use svelto_core::{NodeKind, Revnum};
use svelto_repos::{LogOptions, Result};

/// Files larger than this (in any version) are not blamed in a page.
const MAX_BLAMED: u64 = 1 << 20;

/// The versions (path, revision) of `path@rev`, oldest first: the revisions that changed
/// it (its history across copies, as `svn log` walks it, filtered by authz), each with
/// where the file was then (`svn blame`'s file-revs walks the same history; its deltas,
/// which this does not need, are not computed). A location the user may not read ends the
/// walk back, as it ends file-revs'.
fn versions(at: &At<'_>) -> Result<Vec<(String, Revnum)>> {
    let mut revs = Vec::new();
    let opts = LogOptions {
        paths: vec![at.path.to_string()],
        start: at.rev,
        end: 0,
        limit: 0,
        discover_changed_paths: false,
        strict_node_history: false,
        include_merged_revisions: false,
        revprops: Some(Vec::new()),
    };
    at.svc.log(&opts, &mut |e| {
        revs.push(e.rev);
        Ok(())
    })?;
    let mut located = at.svc.locations(at.path, at.rev, &revs)?;
    located.sort_by_key(|(r, _)| *r);
    Ok(located
        .into_iter()
        .map(|(r, p)| (p.trim_start_matches('/').to_string(), r))
        .collect())
}

/// A text's lines, each as a hash of its bytes (its end of line included): what versions
/// are compared by, without building a string per line.
fn line_hashes(text: &[u8]) -> Vec<u64> {
    use std::hash::{BuildHasher, BuildHasherDefault};
    let hasher = BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default();
    text.split_inclusive(|&b| b == b'\n')
        .map(|line| hasher.hash_one(line))
        .collect()
}

/// Blame's attribution, one version at a time (oldest first): the revision that brought
/// each line of the text given last.
#[derive(Default)]
pub struct Attribution {
    lines: Vec<u64>,
    revs: Vec<Revnum>,
}

impl Attribution {
    /// Takes the next version: lines it keeps keep their revision, the others get `rev`.
    pub fn push(&mut self, rev: Revnum, text: &[u8]) {
        let lines = line_hashes(text);
        let deadline = std::time::Instant::now() + std::time::Duration::from_millis(500);
        let ops = similar::capture_diff_slices_deadline(
            similar::Algorithm::Myers,
            &self.lines,
            &lines,
            Some(deadline),
        );
        let mut revs = Vec::with_capacity(lines.len());
        for op in ops {
            match op {
                similar::DiffOp::Equal { old_index, len, .. } => {
                    revs.extend_from_slice(&self.revs[old_index..old_index + len])
                }
                similar::DiffOp::Insert { new_len, .. } => {
                    revs.extend(std::iter::repeat_n(rev, new_len))
                }
                similar::DiffOp::Replace { new_len, .. } => {
                    revs.extend(std::iter::repeat_n(rev, new_len))
                }
                similar::DiffOp::Delete { .. } => {}
            }
        }
        self.lines = lines;
        self.revs = revs;
    }

    /// The revision of each line of the last text.
    pub fn revs(&self) -> &[Revnum] {
        &self.revs
    }
}

/// Each line of the last text with the revision that brought it, given the texts of the
/// versions oldest first.
#[cfg(test)]
fn attribute<'t>(versions: impl IntoIterator<Item = (Revnum, &'t str)>) -> Vec<Revnum> {
    let mut a = Attribution::default();
    for (rev, text) in versions {
        a.push(rev, text.as_bytes());
    }
    a.revs
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
    // One version's text at a time (each at most MAX_BLAMED).
    let mut attribution = Attribution::default();
    let mut text_now = std::sync::Arc::new(Vec::new());
    for (path, rev) in versions(at)? {
        text_now = match at.svc.node(&path, rev)? {
            Some(n) if n.size() <= MAX_BLAMED => at.svc.read_text(&n)?,
            _ => std::sync::Arc::new(Vec::new()),
        };
        attribution.push(rev, &text_now);
    }
    let revs = attribution.revs();
    let last = String::from_utf8_lossy(&text_now);
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
