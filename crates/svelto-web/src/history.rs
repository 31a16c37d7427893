//! The history of a path (paged, following copies, each revision's changed paths, filters
//! by author and message) and a revision's page (its message, changed paths and diff).
//! Both read `service::Ctx::log`, which leaves out what the user may not read, as
//! `svn log -v` gets it.

use crate::layout::{self, RevInfo};
use crate::{At, Page, Response};
use maud::{html, Markup};
use svelto_core::{ChangeKind, NodeKind, Revnum};
use svelto_repos::{LogEntry, LogOptions, Result};

/// Revisions a history page shows.
pub const PER_PAGE: u64 = 50;

/// Revisions a filtered history page looks through at most (the next page goes on from
/// there).
pub const SCANNED: u64 = 2000;

fn info_of(entry: &LogEntry) -> RevInfo {
    let text = |name: &[u8]| {
        entry
            .revprops
            .get(name)
            .map(|v| String::from_utf8_lossy(v).into_owned())
    };
    RevInfo {
        author: text(b"svn:author"),
        date: text(b"svn:date"),
        message: text(b"svn:log"),
    }
}

fn options(path: &str, start: Revnum, end: Revnum, limit: u64) -> LogOptions {
    LogOptions {
        paths: vec![path.to_string()],
        start,
        end,
        limit,
        discover_changed_paths: true,
        strict_node_history: false,
        include_merged_revisions: false,
        revprops: Some(vec![
            b"svn:author".to_vec(),
            b"svn:date".to_vec(),
            b"svn:log".to_vec(),
        ]),
    }
}

fn letter(action: ChangeKind) -> char {
    action.letter()
}

/// Changed paths a history page lists for each revision (the rest are on its revision
/// page): the medium history's import has 22,603, and a history page rendering every
/// changed path of each of its revisions made megabytes of HTML (3.2 MB and 50 ms of
/// server CPU for a file's history where `svn log -v` took 12 ms).
pub const PATHS_PER_ENTRY: usize = 20;

/// Changed paths a revision page lists (ViewVC's default cut is 100).
pub const PATHS_PER_REV: usize = 1000;

/// The changed paths of a revision (at most `max`, then how many more, linking to the
/// revision's page), each linking to the path (as it was before, for a deletion) and to
/// its diff.
fn changed_paths(at: &At<'_>, entry: &LogEntry, max: usize) -> Markup {
    let more = entry.changed_paths.len().saturating_sub(max);
    html! {
        ul.changed {
            @for c in entry.changed_paths.iter().take(max) {
                @let rel = c.path.trim_start_matches('/');
                @let shown_rev = if c.action == ChangeKind::Delete { entry.rev.saturating_sub(1) } else { entry.rev };
                li {
                    code { (letter(c.action)) } " "
                    a href=(at.href(Page::Browse, Some(shown_rev), rel)) { (c.path) }
                    @if let Some((from, from_rev)) = &c.copyfrom {
                        " (from " a href=(at.href(Page::Browse, Some(*from_rev), from.trim_start_matches('/'))) { (from) "@" (from_rev) } ")"
                    }
                    @if c.action == ChangeKind::Modify && c.kind != Some(NodeKind::Dir) && c.text_mods != Some(false) {
                        " " a href=(at.href(Page::Diff, Some(entry.rev), rel)) { "diff" }
                    }
                }
            }
            @if more > 0 {
                li.muted {
                    "… and " (more) " more changed paths"
                    @if max < PATHS_PER_REV {
                        " (" a href=(at.href(Page::Rev, Some(entry.rev), "")) { "r" (entry.rev) } ")"
                    }
                }
            }
        }
    }
}

pub fn log(at: &At<'_>) -> Result<Response> {
    if at.svc.node(at.path, at.rev)?.is_none() {
        return Ok(layout::not_found(
            at.site,
            &format!("'/{}' does not exist in revision {}", at.path, at.rev),
        ));
    }
    let from = crate::query_rev(at.query, "from")
        .unwrap_or(at.rev)
        .min(at.rev);
    let author = crate::query_value(at.query, "author").filter(|a| !a.is_empty());
    let words = crate::query_value(at.query, "q")
        .filter(|q| !q.is_empty())
        .map(|q| q.to_lowercase());
    let filtered = author.is_some() || words.is_some();
    let limit = if filtered { SCANNED } else { PER_PAGE + 1 };
    let mut shown: Vec<LogEntry> = Vec::new();
    let mut scanned = 0u64;
    let mut last_scanned = None;
    let mut more = false;
    at.svc
        .log(&options(at.path, from, 0, limit), &mut |entry| {
            scanned += 1;
            if shown.len() as u64 >= PER_PAGE {
                more = true;
                return Ok(());
            }
            last_scanned = Some(entry.rev);
            let info = info_of(&entry);
            let keep = author
                .as_deref()
                .is_none_or(|a| info.author.as_deref() == Some(a))
                && words.as_deref().is_none_or(|w| {
                    info.message
                        .as_deref()
                        .is_some_and(|m| m.to_lowercase().contains(w))
                });
            if keep {
                shown.push(entry);
            }
            Ok(())
        })?;
    if filtered && scanned >= SCANNED {
        more = true;
    }
    let next_from = if more {
        let last = if filtered {
            last_scanned
        } else {
            shown.last().map(|e| e.rev)
        };
        last.and_then(|r| r.checked_sub(1))
    } else {
        None
    };
    let mut next_query = String::new();
    if let Some(n) = next_from {
        next_query = format!("?from={n}");
        if let Some(a) = &author {
            next_query.push_str(&format!("&author={}", crate::encode_query(a)));
        }
        if let Some(q) = crate::query_value(at.query, "q").filter(|q| !q.is_empty()) {
            next_query.push_str(&format!("&q={}", crate::encode_query(&q)));
        }
    }
    let here = at.href(Page::Log, at.link_rev(), at.path);
    let body = html! {
        h1 { "History of /" (at.path) }
        form method="get" action=(here) {
            label { "Author " input type="text" name="author" value=[author.as_deref()]; }
            " "
            label { "Message " input type="text" name="q" value=[crate::query_value(at.query, "q").as_deref()]; }
            " " button type="submit" { "Filter" }
        }
        @if shown.is_empty() {
            p.muted { "No revision found." }
        }
        @for entry in &shown {
            @let info = info_of(entry);
            section.entry {
                h3 {
                    a href=(at.href(Page::Rev, Some(entry.rev), "")) { "r" (entry.rev) }
                    " " span { (info.author.as_deref().unwrap_or("(no author)")) }
                    " " span.muted title=(layout::short_date(info.date.as_deref())) { (layout::short_date(info.date.as_deref())) }
                }
                div.msg { (info.message.as_deref().unwrap_or("")) }
                (changed_paths(at, entry, PATHS_PER_ENTRY))
            }
        }
        @if let Some(n) = next_from {
            p { a rel="next" href=(format!("{here}{next_query}")) { "Older (from r" (n) ")" } }
        }
    };
    let title = format!("History of {}/{}", at.site.repo_name, at.path);
    Ok(layout::page(at, Page::Log, &title, body))
}

/// Files whose diffs a revision page shows at most.
const MAX_DIFFS: usize = 50;

pub fn revision(at: &At<'_>) -> Result<Response> {
    let mut found = None;
    at.svc.log(&options("", at.rev, at.rev, 1), &mut |e| {
        found = Some(e);
        Ok(())
    })?;
    let Some(entry) = found else {
        return Ok(layout::not_found(
            at.site,
            &format!("Revision {} shows nothing you may read", at.rev),
        ));
    };
    let info = info_of(&entry);
    let mut diffs = Vec::new();
    for c in &entry.changed_paths {
        if diffs.len() >= MAX_DIFFS {
            break;
        }
        let rel = c.path.trim_start_matches('/');
        if c.kind == Some(NodeKind::Dir) || c.action == ChangeKind::Delete {
            continue;
        }
        if c.action == ChangeKind::Modify && c.text_mods == Some(false) {
            continue;
        }
        let old = match (&c.copyfrom, c.action) {
            (Some((p, r)), _) => Some((p.trim_start_matches('/').to_string(), *r)),
            (None, ChangeKind::Modify) => Some((rel.to_string(), at.rev.saturating_sub(1))),
            _ => None,
        };
        let rendered = crate::diff::file_diff(
            at,
            old.as_ref().map(|(p, r)| (p.as_str(), *r)),
            (rel, at.rev),
        )?;
        diffs.push((c.path.clone(), rendered));
    }
    let body = html! {
        h1 { "Revision " (at.rev) }
        p {
            (info.author.as_deref().unwrap_or("(no author)")) " · "
            (layout::short_date(info.date.as_deref())) " · "
            span.muted { (layout::age(info.date.as_deref(), at.site.now_micros)) }
        }
        nav.links {
            @if at.rev > 0 { a rel="prev" href=(at.href(Page::Rev, Some(at.rev - 1), "")) { "← r" (at.rev - 1) } }
            a href=(at.href(Page::Rev, Some(at.rev + 1), "")) { "r" (at.rev + 1) " →" }
            a href=(at.href(Page::Browse, Some(at.rev), "")) { "Browse r" (at.rev) }
        }
        div.msg { (info.message.as_deref().unwrap_or("")) }
        h2 { "Changed paths" }
        (changed_paths(at, &entry, PATHS_PER_REV))
        @for (path, d) in &diffs {
            h3 { (path) }
            (d)
        }
    };
    let title = format!("{} r{}", at.site.repo_name, at.rev);
    Ok(layout::page(at, Page::Rev, &title, body))
}
