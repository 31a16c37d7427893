//! What every page shares: the frame (title, breadcrumbs, the stylesheet), error pages,
//! ages, and revisions' author, date and message.

use crate::{At, Page, Response, Site};
use maud::{html, Markup, PreEscaped, DOCTYPE};
use std::collections::HashMap;
use svelto_core::Revnum;
use svelto_repos::service::Ctx;

/// The pages' one stylesheet (readable on a phone: the tables scroll, the text wraps, the
/// search form takes a line of its own, a directory's ages are left out; the keyboard's
/// focus is always outlined, the skip link shows when focused).
const CSS: &str = "body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1b1f24;background:#fff}\
header{padding:.6em 1em;background:#f3f4f6;border-bottom:1px solid #d0d7de}\
header a{color:#0550ae}main{padding:1em;overflow-x:auto}\
a{color:#0550ae;text-decoration:none}a:hover,a:focus{text-decoration:underline}\
table{border-collapse:collapse}td,th{padding:.2em .6em;text-align:left;vertical-align:top}\
table.list tr:nth-child(even){background:#f6f8fa}\
.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\
.msg{white-space:pre-wrap;max-width:60em}\
table.code{font:12px/1.4 ui-monospace,monospace;width:100%}\
table.code td{padding:0 .6em;white-space:pre}table.code td.n{color:#6e7781;text-align:right;user-select:none}\
table.code tr:target,table.code tr.hl{background:#fff8c5}\
.add{background:#e6ffec}.del{background:#ffebe9}.hunk{color:#6e7781;background:#ddf4ff}\
ins{background:#abf2bc;text-decoration:none}del{background:#ff818266;text-decoration:none}\
nav.links a{margin-right:1em;display:inline-block}.muted{color:#6e7781}\
.readme{border-top:1px solid #d0d7de;margin-top:1.5em;padding-top:.5em;max-width:60em}\
form.search{display:inline;margin-left:2em}form.search input[type=text]{width:20em;max-width:90%}\
:focus-visible{outline:2px solid #0969da;outline-offset:1px}\
.skip{position:absolute;left:-999em;top:.3em;background:#fff;padding:.3em .8em;border:1px solid #0969da}\
.skip:focus{left:.5em}\
@media (max-width:640px){header{padding:.5em}main{padding:.5em}\
form.search{display:block;margin:.4em 0 0}form.search input[type=text]{width:65%}\
table.list .age{display:none}td,th{padding:.2em .35em}}";

/// A whole page: the header (repositories, the repository, the path's crumbs at the page's
/// revision), the title, the body.
pub fn page(at: &At<'_>, page_kind: Page, title: &str, body: Markup) -> Response {
    let site = at.site;
    let crumbs = crumbs(at, page_kind);
    let search = at.href(Page::Search, at.link_rev(), at.path);
    let markup = frame(
        site.prefix,
        title,
        html! {
            " / " a href=(at.href(Page::Browse, at.link_rev(), "")) { (site.repo_name) }
            (crumbs)
            " @ " a href=(at.href(Page::Rev, Some(at.rev), "")) { "r" (at.rev) }
            form.search method="get" action=(search) role="search" {
                input type="text" name="q" accesskey="s" aria-label="Search paths and log messages (access key S)" placeholder="Search";
                " " button type="submit" { "Search" }
            }
        },
        body,
    );
    Response::html(200, markup.into_string())
}

/// The path's segments, each linking to its directory at the page's revision.
fn crumbs(at: &At<'_>, page_kind: Page) -> Markup {
    let segs: Vec<&str> = at.path.split('/').filter(|s| !s.is_empty()).collect();
    let mut links = Vec::with_capacity(segs.len());
    let mut so_far = String::new();
    for seg in &segs {
        if !so_far.is_empty() {
            so_far.push('/');
        }
        so_far.push_str(seg);
        links.push((seg, at.href(Page::Browse, at.link_rev(), &so_far)));
    }
    html! {
        @for (i, (seg, link)) in links.iter().enumerate() {
            " / "
            @if i + 1 == links.len() && page_kind == Page::Browse {
                strong { (seg) }
            } @else {
                a href=(link) { (seg) }
            }
        }
    }
}

/// The HTML around every page's body.
fn frame(prefix: &str, title: &str, header: Markup, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta name="referrer" content="same-origin";
                title { (title) }
                style { (PreEscaped(CSS)) (PreEscaped(crate::highlight::CSS)) }
            }
            body {
                a.skip href="#main" { "Skip to content" }
                header {
                    a href=(format!("{prefix}/")) accesskey="0" { "Repositories" }
                    (header)
                }
                main #main tabindex="-1" { (body) }
            }
        }
    }
}

/// What a renderer answers for an archive it cannot stream: a link to it.
pub fn archive_link(at: &At<'_>, name: &str) -> Response {
    let href = at.href(Page::Archive, Some(at.rev), at.path);
    let href = match crate::Format::from_query(at.query) {
        crate::Format::Zip => format!("{href}?format=zip"),
        crate::Format::TarGz => href,
    };
    let body = html! { p { a href=(href) { (name) } } };
    page(at, Page::Archive, name, body)
}

/// A 404 page inside a repository.
pub fn not_found(site: &Site<'_>, message: &str) -> Response {
    let markup = frame(
        site.prefix,
        "Not found",
        html! { " / " a href=(crate::href(site.root_href, Page::Browse, None, "")) { (site.repo_name) } },
        html! { h1 { "Not found" } p { (message) } },
    );
    Response::html(404, markup.into_string())
}

/// An error page outside any repository.
pub fn plain_error(prefix: &str, status: u16, message: &str) -> Response {
    let markup = frame(
        prefix,
        "Not found",
        html! {},
        html! { h1 { "Not found" } p { (message) } },
    );
    Response::html(status, markup.into_string())
}

/// The parent path's page.
pub fn repository_list(prefix: &str, names: &[String]) -> Response {
    let markup = frame(
        prefix,
        "Repositories",
        html! {},
        html! {
            h1 { "Repositories" }
            @if names.is_empty() {
                p.muted { "No repository you may read is served here." }
            } @else {
                ul {
                    @for name in names {
                        li { a href=(crate::href(&format!("{prefix}/{}", crate::encode_path(name)), Page::Browse, None, "")) { (name) } }
                    }
                }
            }
        },
    );
    Response::html(200, markup.into_string())
}

/// A revision's author, date and message, as the user may see them (an unreadable
/// revision's are hidden by the service layer).
#[derive(Debug, Clone, Default)]
pub struct RevInfo {
    pub author: Option<String>,
    pub date: Option<String>,
    pub message: Option<String>,
}

impl RevInfo {
    /// The first line of the message.
    pub fn summary(&self) -> &str {
        self.message
            .as_deref()
            .and_then(|m| m.lines().find(|l| !l.trim().is_empty()))
            .unwrap_or("")
    }
}

/// Revisions' [`RevInfo`], each read once per page.
#[derive(Default)]
pub struct RevInfos(HashMap<Revnum, RevInfo>);

impl RevInfos {
    pub fn get(&mut self, svc: &Ctx, rev: Revnum) -> svelto_repos::Result<&RevInfo> {
        if let std::collections::hash_map::Entry::Vacant(slot) = self.0.entry(rev) {
            let props = svc.readable_revprops(rev)?;
            let text = |name: &[u8]| {
                props
                    .get(name)
                    .map(|v| String::from_utf8_lossy(v).into_owned())
            };
            let info = RevInfo {
                author: text(b"svn:author"),
                date: text(b"svn:date"),
                message: text(b"svn:log"),
            };
            slot.insert(info);
        }
        Ok(&self.0[&rev])
    }
}

/// How long ago an `svn:date` was, in the largest unit that fits ("3 days").
pub fn age(date: Option<&str>, now_micros: i64) -> String {
    let Some(then) = date.and_then(svelto_core::parse_svn_date) else {
        return String::new();
    };
    let secs = (now_micros - then).max(0) / 1_000_000;
    let (n, unit) = match secs {
        s if s < 60 => (s, "second"),
        s if s < 3600 => (s / 60, "minute"),
        s if s < 86_400 => (s / 3600, "hour"),
        s if s < 86_400 * 60 => (s / 86_400, "day"),
        s if s < 86_400 * 730 => (s / (86_400 * 30), "month"),
        s => (s / (86_400 * 365), "year"),
    };
    format!("{n} {unit}{} ago", if n == 1 { "" } else { "s" })
}

/// An `svn:date` as `YYYY-MM-DD HH:MM:SS` (UTC).
pub fn short_date(date: Option<&str>) -> String {
    match date {
        Some(d) if d.len() >= 19 => format!("{} {}", &d[..10], &d[11..19]),
        Some(d) => d.to_string(),
        None => String::new(),
    }
}

/// A size in bytes, short ("12.3 KiB").
pub fn size(n: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut v = n as f64 / 1024.0;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    format!("{v:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_sizes_and_dates() {
        let now = svelto_core::parse_svn_date("2026-11-28T12:00:00.000000Z").expect("date");
        assert_eq!(
            age(Some("2026-11-28T11:59:30.000000Z"), now),
            "30 seconds ago"
        );
        assert_eq!(age(Some("2026-11-27T12:00:00.000000Z"), now), "1 day ago");
        assert_eq!(age(Some("2020-11-28T12:00:00.000000Z"), now), "6 years ago");
        assert_eq!(age(Some("garbage"), now), "");
        assert_eq!(size(10), "10 B");
        assert_eq!(size(2048), "2.0 KiB");
        assert_eq!(size(5 << 20), "5.0 MiB");
        assert_eq!(
            short_date(Some("2026-11-28T11:59:30.123456Z")),
            "2026-11-28 11:59:30"
        );
    }

    #[test]
    fn the_repository_list_escapes_names_and_carries_the_policy() {
        let r = repository_list("/svn", &["a<b>".to_string(), "x y".to_string()]);
        let body = String::from_utf8(r.body).expect("utf-8");
        assert!(body.contains("a&lt;b&gt;"), "{body}");
        assert!(!body.contains("a<b>"));
        assert!(
            body.contains("href=\"/svn/a%3Cb%3E/!svn/web/browse/HEAD/\""),
            "{body}"
        );
        assert!(body.contains("href=\"/svn/x%20y/!svn/web/browse/HEAD/\""));
        assert!(!body.contains("<script"));
        assert!(r
            .headers
            .iter()
            .any(|(k, v)| *k == "content-security-policy" && v.contains("default-src 'none'")));
    }
}
