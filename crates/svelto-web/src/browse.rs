//! A directory (entries with kind, size, last change, author, age and message; its README
//! below), a file (its text with line numbers and line anchors, an image's preview,
//! "binary" for the rest, its properties) and a file's raw text.

use crate::layout::{self, RevInfos};
use crate::{At, Page, Response};
use maud::{html, Markup, PreEscaped};
use svelto_core::{Depth, NodeKind, PropList, Revnum};
use svelto_repos::Result;

/// Files larger than this are not shown in a page (the raw download still serves them).
pub const MAX_SHOWN: u64 = 2 << 20;

/// Files larger than this are not served raw by the interface (the repository URL, which
/// streams, serves any size).
pub const MAX_RAW: u64 = 64 << 20;

/// A README larger than this is not rendered.
const MAX_README: u64 = 256 << 10;

pub fn browse(at: &At<'_>) -> Result<Response> {
    let Some(node) = at.svc.node(at.path, at.rev)? else {
        return Ok(layout::not_found(
            at.site,
            &format!("'/{}' does not exist in revision {}", at.path, at.rev),
        ));
    };
    if node.kind() == NodeKind::Dir {
        directory(at)
    } else {
        file(at, &node)
    }
}

/// One entry of a directory.
struct Entry {
    name: String,
    kind: NodeKind,
    size: u64,
    created: Revnum,
}

fn directory(at: &At<'_>) -> Result<Response> {
    let mut entries = Vec::new();
    at.svc.list(
        at.path,
        at.rev,
        Depth::Immediates,
        None,
        &mut |path, listed| {
            if path != at.path {
                let name = path.rsplit('/').next().unwrap_or(path).to_string();
                entries.push(Entry {
                    name,
                    kind: listed.kind(),
                    size: listed.size(),
                    created: listed.created_rev(),
                });
            }
            Ok(())
        },
    )?;
    // Directories first, then files, each by name.
    entries.sort_by(|a, b| {
        (a.kind != NodeKind::Dir, &a.name).cmp(&(b.kind != NodeKind::Dir, &b.name))
    });
    let mut infos = RevInfos::default();
    let mut rows = Vec::with_capacity(entries.len());
    for e in &entries {
        let info = infos.get(at.svc, e.created)?.clone();
        rows.push((e, info));
    }
    let child = |name: &str| svelto_core::join(at.path, name);
    let readme = readme(at, &entries)?;
    let parent = at.path.rsplit_once('/').map_or("", |(p, _)| p);
    let body = html! {
        nav.links {
            a href=(at.href(Page::Log, at.link_rev(), at.path)) accesskey="h" { "History" }
            a href=(at.href(Page::Rev, Some(at.rev), "")) { "Revision " (at.rev) }
            a href=(at.href(Page::Archive, Some(at.rev), at.path)) { "Download .tar.gz" }
            a href=(format!("{}?format=zip", at.href(Page::Archive, Some(at.rev), at.path))) { "Download .zip" }
        }
        table.list {
            thead { tr { th { "Name" } th.num { "Size" } th.num { "Rev" } th { "Author" } th.age { "Age" } th { "Message" } } }
            tbody {
                @if !at.path.is_empty() {
                    tr { td { a href=(at.href(Page::Browse, at.link_rev(), parent)) { ".." } } td{} td{} td{} td{} td{} }
                }
                @for (e, info) in &rows {
                    tr {
                        td {
                            a href=(at.href(Page::Browse, at.link_rev(), &child(&e.name))) {
                                (e.name) @if e.kind == NodeKind::Dir { "/" }
                            }
                        }
                        td.num { @if e.kind == NodeKind::File { (layout::size(e.size)) } }
                        td.num { a href=(at.href(Page::Rev, Some(e.created), "")) { (e.created) } }
                        td { (info.author.as_deref().unwrap_or("")) }
                        td.age title=(layout::short_date(info.date.as_deref())) { (layout::age(info.date.as_deref(), at.site.now_micros)) }
                        td { (info.summary()) }
                    }
                }
            }
        }
        @if let Some((name, html)) = readme {
            section.readme { h2 { (name) } (html) }
        }
    };
    let title = format!("{}/{} @ r{}", at.site.repo_name, at.path, at.rev);
    Ok(layout::page(at, Page::Browse, &title, body))
}

/// The README of a directory, rendered: Markdown (raw HTML in it escaped, as text) or
/// plain text.
fn readme(at: &At<'_>, entries: &[Entry]) -> Result<Option<(String, Markup)>> {
    let Some(e) = entries.iter().find(|e| {
        e.kind == NodeKind::File
            && e.size <= MAX_README
            && matches!(
                e.name.to_ascii_lowercase().as_str(),
                "readme" | "readme.md" | "readme.markdown" | "readme.txt"
            )
    }) else {
        return Ok(None);
    };
    let path = svelto_core::join(at.path, &e.name);
    let Some(node) = at.svc.node(&path, at.rev)? else {
        return Ok(None);
    };
    let text = at.svc.read_text(&node)?;
    let text = String::from_utf8_lossy(&text);
    let lower = e.name.to_ascii_lowercase();
    let html = if lower.ends_with(".md") || lower.ends_with(".markdown") {
        PreEscaped(markdown(&text))
    } else {
        html! { pre.msg { (text) } }
    };
    Ok(Some((e.name.clone(), html)))
}

/// Markdown as HTML, with any raw HTML in it shown as text (escaped), and links only to
/// web URLs or relative ones (no `javascript:`).
pub fn markdown(text: &str) -> String {
    use pulldown_cmark::{Event, Options, Parser, Tag};
    let parser =
        Parser::new_ext(text, Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH).map(|ev| {
            match ev {
                Event::Html(h) | Event::InlineHtml(h) => Event::Text(h),
                Event::Start(Tag::Link {
                    link_type,
                    dest_url,
                    title,
                    id,
                }) => Event::Start(Tag::Link {
                    link_type,
                    dest_url: safe_url(dest_url),
                    title,
                    id,
                }),
                Event::Start(Tag::Image {
                    link_type,
                    dest_url,
                    title,
                    id,
                }) => Event::Start(Tag::Image {
                    link_type,
                    dest_url: safe_url(dest_url),
                    title,
                    id,
                }),
                other => other,
            }
        });
    let mut out = String::new();
    pulldown_cmark::html::push_html(&mut out, parser);
    out
}

/// A link target kept when it is a web URL, a mail address or relative; else `#`.
fn safe_url(url: pulldown_cmark::CowStr<'_>) -> pulldown_cmark::CowStr<'_> {
    let lower = url.trim().to_ascii_lowercase();
    let scheme = lower
        .split_once(':')
        .map(|(s, _)| s)
        .filter(|s| !s.contains('/') && !s.contains('?') && !s.contains('#'));
    match scheme {
        None | Some("http" | "https" | "mailto") => url,
        Some(_) => "#".into(),
    }
}

/// What a file is, for showing and for raw downloads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown {
    Text,
    /// An image a page may show with `<img>` (its raw download has this type).
    Image(&'static str),
    Binary,
}

/// What the file is, from `svn:mime-type` and the name, then its first bytes.
pub fn classify(name: &str, props: &PropList, head: &[u8]) -> Shown {
    let lower = name.to_ascii_lowercase();
    let image = [
        (".png", "image/png"),
        (".jpg", "image/jpeg"),
        (".jpeg", "image/jpeg"),
        (".gif", "image/gif"),
        (".webp", "image/webp"),
    ]
    .into_iter()
    .find(|(ext, _)| lower.ends_with(ext))
    .map(|(_, t)| t);
    let mime = props
        .get(&b"svn:mime-type"[..])
        .map(|v| String::from_utf8_lossy(v).to_ascii_lowercase());
    if let Some(t) = image {
        if mime.as_deref().is_none_or(|m| m.starts_with("image/")) {
            return Shown::Image(t);
        }
    }
    // Subversion's rule: a mime type that is not text/* (nor a few text-like ones) is binary.
    if let Some(m) = &mime {
        let texty = m.starts_with("text/")
            || m.ends_with("+xml")
            || m.ends_with("/xml")
            || m.ends_with("/json")
            || m == "image/x-xbitmap"
            || m == "image/x-xpixmap";
        if !texty {
            return Shown::Binary;
        }
    }
    if head.iter().take(8192).any(|&b| b == 0) {
        Shown::Binary
    } else {
        Shown::Text
    }
}

/// The lines to mark from `?hl=N` or `?hl=N-M`.
pub fn marked(query: Option<&str>) -> Option<(usize, usize)> {
    let v = crate::query_value(query, "hl")?;
    let (a, b) = v.split_once('-').unwrap_or((&v, &v));
    let a: usize = a.trim().trim_start_matches('L').parse().ok()?;
    let b: usize = b.trim().trim_start_matches('L').parse().ok()?;
    Some((a.min(b), a.max(b)))
}

fn file(at: &At<'_>, node: &svelto_repos::Node) -> Result<Response> {
    let props = at.svc.node_props(node)?;
    let name = at.path.rsplit('/').next().unwrap_or(at.path);
    let size = node.size();
    let text = if size <= MAX_SHOWN {
        Some(at.svc.read_text(node)?)
    } else {
        None
    };
    let head: &[u8] = text.as_deref().map_or(&[], |t| &t[..]);
    let shown = classify(name, &props, head);
    let raw = at.href(Page::Raw, Some(at.rev), at.path);
    let marks = marked(at.query);
    let content = match (shown, &text) {
        (Shown::Image(_), _) => html! { p { img src=(raw) alt=(name) style="max-width:100%"; } },
        (Shown::Binary, _) => {
            html! { p.muted { "Binary file (" (layout::size(size)) "): " a href=(raw) { "download" } } }
        }
        (Shown::Text, None) => {
            html! { p.muted { "This file is too large to show (" (layout::size(size)) "): " a href=(raw) { "raw" } } }
        }
        (Shown::Text, Some(t)) => {
            let t = String::from_utf8_lossy(t);
            let (lines, note) = match crate::highlight::highlight(name, &t) {
                Ok(h) => {
                    let note = if h.done < h.lines.len() {
                        format!("{}, highlighted to line {} (time budget)", h.syntax, h.done)
                    } else {
                        h.syntax.to_string()
                    };
                    (h.lines, note)
                }
                Err(why) => {
                    let lines = t
                        .lines()
                        .map(|l| {
                            let mut s = String::with_capacity(l.len());
                            crate::highlight::escape_into(&mut s, l);
                            s
                        })
                        .collect();
                    let note = match why {
                        crate::highlight::Plain::NoSyntax => String::new(),
                        crate::highlight::Plain::TooLarge(w) => format!("not highlighted: {w}"),
                    };
                    (std::sync::Arc::new(lines), note)
                }
            };
            html! {
                @if !note.is_empty() { p.muted.syntax { (note) } }
                table.code {
                    @for (i, line) in lines.iter().enumerate() {
                        @let n = i + 1;
                        @let hl = marks.is_some_and(|(a, b)| a <= n && n <= b);
                        tr id=(format!("L{n}")) class=[hl.then_some("hl")] {
                            td.n { a href=(format!("?hl={n}#L{n}")) { (n) } }
                            td { (PreEscaped(line)) }
                        }
                    }
                }
            }
        }
    };
    let body = html! {
        nav.links {
            a href=(raw) accesskey="r" { "Raw" }
            a href=(at.href(Page::Log, at.link_rev(), at.path)) accesskey="h" { "History" }
            a href=(at.href(Page::Blame, Some(at.rev), at.path)) accesskey="b" { "Blame" }
            a href=(at.href(Page::Diff, Some(at.rev), at.path)) accesskey="d" { "Diff with previous" }
            span.muted { (layout::size(size)) ", last changed in " a href=(at.href(Page::Rev, Some(node.created_rev()), "")) { "r" (node.created_rev()) } }
        }
        (content)
        @if !props.is_empty() {
            h2 { "Properties" }
            table.list {
                @for (k, v) in &props {
                    tr { th { (String::from_utf8_lossy(k)) } td.msg { (String::from_utf8_lossy(v)) } }
                }
            }
        }
    };
    let title = format!("{}/{} @ r{}", at.site.repo_name, at.path, at.rev);
    Ok(layout::page(at, Page::Browse, &title, body))
}

/// A file's text as it is: `text/plain` for text, the image's type for the images a page
/// previews, an attachment for anything else (HTML, SVG and scripts are text here), all
/// with `nosniff` and a sandboxing policy.
pub fn raw(at: &At<'_>) -> Result<Response> {
    let node = match at.svc.node(at.path, at.rev)? {
        Some(n) if n.kind() == NodeKind::File => n,
        _ => {
            return Ok(layout::not_found(
                at.site,
                &format!("'/{}' is not a file in revision {}", at.path, at.rev),
            ))
        }
    };
    if node.size() > MAX_RAW {
        let url = format!(
            "{}/{}?p={}",
            at.site.root_href,
            crate::encode_path(at.path),
            at.rev
        );
        return Ok(layout::not_found(
            at.site,
            &format!(
                "This file is too large for the interface ({}): its repository URL {url} serves it",
                layout::size(node.size())
            ),
        ));
    }
    let props = at.svc.node_props(&node)?;
    let text = at.svc.read_text(&node)?;
    let name = at.path.rsplit('/').next().unwrap_or(at.path);
    let (content_type, attachment) = match classify(name, &props, &text) {
        Shown::Text => ("text/plain; charset=utf-8", false),
        Shown::Image(t) => (t, false),
        Shown::Binary => ("application/octet-stream", true),
    };
    let mut headers = vec![
        ("content-security-policy", crate::RAW_CSP.to_string()),
        ("x-content-type-options", "nosniff".to_string()),
    ];
    let ascii: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let disposition = if attachment { "attachment" } else { "inline" };
    headers.push((
        "content-disposition",
        format!(
            "{disposition}; filename=\"{ascii}\"; filename*=UTF-8''{}",
            crate::encode_query(name)
        ),
    ));
    Ok(Response {
        status: 200,
        content_type,
        headers,
        body: text.to_vec(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_classified_by_type_name_and_content() {
        let none = PropList::new();
        let mut svg = PropList::new();
        svg.insert(b"svn:mime-type".to_vec(), b"image/svg+xml".to_vec());
        let mut html = PropList::new();
        html.insert(b"svn:mime-type".to_vec(), b"text/html".to_vec());
        let mut octets = PropList::new();
        octets.insert(
            b"svn:mime-type".to_vec(),
            b"application/octet-stream".to_vec(),
        );
        assert_eq!(classify("a.c", &none, b"int x;"), Shown::Text);
        assert_eq!(classify("a.bin", &none, b"a\0b"), Shown::Binary);
        assert_eq!(
            classify("a.PNG", &none, b"\x89PNG"),
            Shown::Image("image/png")
        );
        assert_eq!(classify("a.png", &octets, b"x"), Shown::Binary);
        // SVG and HTML are never served as their types: text (or an attachment).
        assert_eq!(
            classify("x.svg", &svg, b"<svg onload=alert(1)>"),
            Shown::Text
        );
        assert_eq!(classify("x.html", &html, b"<script>"), Shown::Text);
        assert_eq!(classify("x.txt", &octets, b"plain"), Shown::Binary);
    }

    #[test]
    fn markdown_escapes_raw_html_and_script_links() {
        let out = markdown("# T\n\n<script>alert(1)</script>\n\n[x](javascript:alert(1)) [y](https://e.org/) <img src=x onerror=alert(1)>");
        assert!(!out.contains("<script"), "{out}");
        assert!(out.contains("&lt;script&gt;"), "{out}");
        assert!(!out.contains("javascript:"), "{out}");
        assert!(out.contains("href=\"https://e.org/\""), "{out}");
        assert!(!out.contains("<img src=x"), "{out}");
        assert!(out.contains("<h1>T</h1>"));
    }

    #[test]
    fn line_marks_read_single_lines_and_ranges() {
        assert_eq!(marked(Some("hl=5")), Some((5, 5)));
        assert_eq!(marked(Some("hl=9-3")), Some((3, 9)));
        assert_eq!(marked(Some("hl=L2-L4")), Some((2, 4)));
        assert_eq!(marked(Some("hl=x")), None);
        assert_eq!(marked(None), None);
    }
}
