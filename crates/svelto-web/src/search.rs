//! Search: the paths below a directory whose names contain a text, and the revisions whose
//! log messages (or authors) contain it, both through `service::Ctx`'s filtered reads (a
//! path the user may not read is neither listed nor descended; a revision's hidden
//! message does not match).

use crate::layout;
use crate::{At, Page, Response};
use maud::html;
use svelto_core::{Depth, NodeKind, Revnum};
use svelto_repos::{LogOptions, ReposError, Result, SvnErrorKind};

/// Matches shown at most, of each kind.
pub const MAX_HITS: usize = 200;

/// Entries a path search walks at most, revisions a message search reads at most.
pub const MAX_WALKED: usize = 200_000;

/// The error a walk is stopped with once it has enough (never shown).
fn enough() -> ReposError {
    ReposError::svn(SvnErrorKind::LimitExceeded, "enough search results")
}

pub fn search(at: &At<'_>) -> Result<Response> {
    let q = crate::query_value(at.query, "q").unwrap_or_default();
    let needle = q.trim().to_lowercase();
    let mut paths: Vec<(String, NodeKind)> = Vec::new();
    let mut revs: Vec<(Revnum, layout::RevInfo)> = Vec::new();
    let mut cut = false;
    if !needle.is_empty() && at.svc.node(at.path, at.rev)?.is_some() {
        let mut walked = 0usize;
        let walk = at
            .svc
            .list(at.path, at.rev, Depth::Infinity, None, &mut |path, node| {
                walked += 1;
                let name = path.rsplit('/').next().unwrap_or(path);
                if path != at.path && name.to_lowercase().contains(&needle) {
                    paths.push((path.to_string(), node.kind()));
                }
                if paths.len() >= MAX_HITS || walked >= MAX_WALKED {
                    return Err(enough());
                }
                Ok(())
            });
        match walk {
            Ok(()) => {}
            Err(_) if paths.len() >= MAX_HITS || walked >= MAX_WALKED => cut = true,
            Err(e) => return Err(e),
        }
        let opts = LogOptions {
            paths: vec![at.path.to_string()],
            start: at.rev,
            end: 0,
            limit: MAX_WALKED as u64,
            discover_changed_paths: false,
            strict_node_history: false,
            include_merged_revisions: false,
            revprops: Some(vec![
                b"svn:author".to_vec(),
                b"svn:date".to_vec(),
                b"svn:log".to_vec(),
            ]),
        };
        at.svc.log(&opts, &mut |entry| {
            if revs.len() >= MAX_HITS {
                return Ok(());
            }
            let text = |name: &[u8]| {
                entry
                    .revprops
                    .get(name)
                    .map(|v| String::from_utf8_lossy(v).into_owned())
            };
            let info = layout::RevInfo {
                author: text(b"svn:author"),
                date: text(b"svn:date"),
                message: text(b"svn:log"),
            };
            let hit = info
                .message
                .as_deref()
                .is_some_and(|m| m.to_lowercase().contains(&needle))
                || info
                    .author
                    .as_deref()
                    .is_some_and(|a| a.to_lowercase() == needle);
            if hit {
                revs.push((entry.rev, info));
            }
            Ok(())
        })?;
    }
    let body = html! {
        h1 { "Search in /" (at.path) " @ r" (at.rev) }
        form method="get" action=(at.href(Page::Search, at.link_rev(), at.path)) {
            input type="text" name="q" value=(q) aria-label="Search text" autofocus;
            " " button type="submit" { "Search" }
        }
        @if !needle.is_empty() {
            h2 { "Paths (" (paths.len()) @if cut { "+" } ")" }
            ul {
                @for (p, kind) in &paths {
                    li { a href=(at.href(Page::Browse, at.link_rev(), p)) { "/" (p) @if *kind == NodeKind::Dir { "/" } } }
                }
            }
            h2 { "Revisions (" (revs.len()) ")" }
            ul {
                @for (rev, info) in &revs {
                    li {
                        a href=(at.href(Page::Rev, Some(*rev), "")) { "r" (rev) } " "
                        (info.author.as_deref().unwrap_or("")) " — " (info.summary())
                    }
                }
            }
        }
    };
    let title = format!("Search {}", at.site.repo_name);
    Ok(layout::page(at, Page::Search, &title, body))
}
