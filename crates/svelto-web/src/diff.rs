//! The changes to a file between two revisions, unified or side by side, with the changed
//! words of a changed line marked (similar's inline diff), and its property changes.

use crate::layout;
use crate::{At, Page, Response};
use maud::{html, Markup};
use similar::{ChangeTag, TextDiff};
use svelto_core::{NodeKind, PropList, Revnum};
use svelto_repos::Result;

/// Texts larger than this are not compared in a page.
const MAX_DIFFED: u64 = 1 << 20;

/// How long one comparison may take before similar gives a coarser answer.
const DEADLINE: std::time::Duration = std::time::Duration::from_millis(500);

/// The diff page: `path@rev` against `?old=REV` (default: the revision before the one
/// that last changed it), where it was then (following copies).
pub fn diff(at: &At<'_>) -> Result<Response> {
    let Some(node) = at.svc.node(at.path, at.rev)? else {
        return Ok(layout::not_found(
            at.site,
            &format!("'/{}' does not exist in revision {}", at.path, at.rev),
        ));
    };
    if node.kind() != NodeKind::File {
        return Ok(layout::not_found(
            at.site,
            &format!("'/{}' is not a file in revision {}", at.path, at.rev),
        ));
    }
    let old_rev = crate::query_rev(at.query, "old")
        .unwrap_or_else(|| node.created_rev().saturating_sub(1))
        .min(at.rev);
    // Where the file was in the old revision (None: it did not exist, or not readably).
    let old_path = at
        .svc
        .locations(at.path, at.rev, &[old_rev])
        .ok()
        .and_then(|l| l.into_iter().find(|(r, _)| *r == old_rev))
        .map(|(_, p)| p.trim_start_matches('/').to_string());
    let split = crate::query_value(at.query, "view").as_deref() == Some("split");
    let old = old_path.as_deref().map(|p| (p, old_rev));
    let rendered = file_diff_view(at, old, (at.path, at.rev), split)?;
    let here = at.href(Page::Diff, Some(at.rev), at.path);
    let body = html! {
        h1 {
            "/" (at.path) ": r"
            (old_rev) " → r" (at.rev)
        }
        nav.links {
            a href=(format!("{here}?old={old_rev}")) { "Unified" }
            a href=(format!("{here}?old={old_rev}&view=split")) { "Side by side" }
            a href=(at.href(Page::Log, at.link_rev(), at.path)) accesskey="h" { "History" }
            a href=(at.href(Page::Browse, Some(at.rev), at.path)) { "File" }
        }
        (rendered)
    };
    let title = format!("Diff of {}/{}", at.site.repo_name, at.path);
    Ok(layout::page(at, Page::Diff, &title, body))
}

/// A file's text and properties at `(path, rev)`, if it is a readable file there.
fn version(
    at: &At<'_>,
    (path, rev): (&str, Revnum),
) -> Result<Option<(Option<Vec<u8>>, PropList)>> {
    if !at.svc.allowed(path, false) {
        return Ok(None);
    }
    match at.svc.node(path, rev)? {
        Some(n) if n.kind() == NodeKind::File => {
            let props = at.svc.node_props(&n)?;
            let text = if n.size() <= MAX_DIFFED {
                Some(at.svc.read_text(&n)?.to_vec())
            } else {
                None
            };
            Ok(Some((text, props)))
        }
        _ => Ok(None),
    }
}

/// The unified diff of a file between two versions (`old` None: it was added).
pub fn file_diff(at: &At<'_>, old: Option<(&str, Revnum)>, new: (&str, Revnum)) -> Result<Markup> {
    file_diff_view(at, old, new, false)
}

fn file_diff_view(
    at: &At<'_>,
    old: Option<(&str, Revnum)>,
    new: (&str, Revnum),
    split: bool,
) -> Result<Markup> {
    let before = match old {
        Some(o) => version(at, o)?,
        None => None,
    };
    let after = version(at, new)?;
    let (old_text, old_props) = before.unwrap_or((Some(Vec::new()), PropList::new()));
    let (new_text, new_props) = after.unwrap_or((Some(Vec::new()), PropList::new()));
    let props = prop_changes(&old_props, &new_props);
    let name = new.0.rsplit('/').next().unwrap_or(new.0);
    let text = match (old_text, new_text) {
        (Some(a), Some(b)) => {
            let binary = |t: &[u8], p: &PropList| {
                crate::browse::classify(name, p, t) != crate::browse::Shown::Text
            };
            if binary(&a, &old_props) || binary(&b, &new_props) {
                html! { p.muted { "Binary files differ" } }
            } else {
                render(
                    &String::from_utf8_lossy(&a),
                    &String::from_utf8_lossy(&b),
                    split,
                )
            }
        }
        _ => html! { p.muted { "Too large to compare here" } },
    };
    Ok(html! {
        (text)
        @if !props.is_empty() {
            table.list {
                caption { "Property changes" }
                @for (name, old, new) in &props {
                    tr {
                        th { (name) }
                        td.del.msg { (old.as_deref().unwrap_or("")) }
                        td.add.msg { (new.as_deref().unwrap_or("")) }
                    }
                }
            }
        }
    })
}

/// The properties that differ: name, old value, new value.
type PropChange = (String, Option<String>, Option<String>);

fn prop_changes(old: &PropList, new: &PropList) -> Vec<PropChange> {
    let text = |v: &Vec<u8>| String::from_utf8_lossy(v).into_owned();
    let mut out = Vec::new();
    for (k, v) in old {
        if new.get(k) != Some(v) {
            out.push((text(k), Some(text(v)), new.get(k).map(text)));
        }
    }
    for (k, v) in new {
        if !old.contains_key(k) {
            out.push((text(k), None, Some(text(v))));
        }
    }
    out
}

/// One side of a line in a rendered diff: its number and its pieces (emphasized or not).
type Side = Option<(usize, Vec<(bool, String)>)>;

/// Two texts' differences as HTML: hunks of 3 lines of context, unified (one table, a
/// `-`/`+` column) or side by side (two halves per row), the changed words of changed lines
/// in `<del>`/`<ins>`.
pub fn render(old: &str, new: &str, split: bool) -> Markup {
    let diff = TextDiff::configure().timeout(DEADLINE).diff_lines(old, new);
    let groups = diff.grouped_ops(3);
    if groups.is_empty() {
        return html! { p.muted { "No changes to the text" } };
    }
    let line = |pieces: &[(bool, String)]| {
        html! {
            @for (em, s) in pieces {
                @let s = s.trim_end_matches(['\n', '\r']);
                @if *em { @if !s.is_empty() { span.em { (s) } } } @else { (s) }
            }
        }
    };
    let mark = |tag: ChangeTag, pieces: &[(bool, String)]| match tag {
        ChangeTag::Delete => {
            html! { @for (em, s) in pieces { @let s = s.trim_end_matches(['\n', '\r']); @if *em { del { (s) } } @else { (s) } } }
        }
        ChangeTag::Insert => {
            html! { @for (em, s) in pieces { @let s = s.trim_end_matches(['\n', '\r']); @if *em { ins { (s) } } @else { (s) } } }
        }
        ChangeTag::Equal => line(pieces),
    };
    html! {
        table.code.diff {
            @for group in &groups {
                @let first = &group[0];
                @let last = &group[group.len() - 1];
                @let (o, n) = (first.old_range().start, first.new_range().start);
                @let (ol, nl) = (last.old_range().end - o, last.new_range().end - n);
                tr.hunk { td.n {} @if split { td.n {} td {} } td colspan="2" { "@@ -" (o + 1) "," (ol) " +" (n + 1) "," (nl) " @@" } }
                @for op in group {
                    @if split {
                        @let (left, right) = halves(&diff, op);
                        @for i in 0..left.len().max(right.len()) {
                            @let l: &Side = left.get(i).unwrap_or(&None);
                            @let r: &Side = right.get(i).unwrap_or(&None);
                            @let changed = l.as_ref().map(|x| &x.1) != r.as_ref().map(|x| &x.1);
                            tr {
                                @match l {
                                    Some((k, p)) => { td.n { (k + 1) } td class=[changed.then_some("del")] { (if changed { mark(ChangeTag::Delete, p) } else { line(p) }) } }
                                    None => { td.n {} td {} }
                                }
                                @match r {
                                    Some((k, p)) => { td.n { (k + 1) } td class=[changed.then_some("add")] { (if changed { mark(ChangeTag::Insert, p) } else { line(p) }) } }
                                    None => { td.n {} td {} }
                                }
                            }
                        }
                    } @else {
                        @for change in diff.iter_inline_changes(op) {
                            @let pieces: Vec<(bool, String)> = change.iter_strings_lossy().map(|(e, s)| (e, s.into_owned())).collect();
                            @let (class, sign) = match change.tag() {
                                ChangeTag::Delete => (Some("del"), "-"),
                                ChangeTag::Insert => (Some("add"), "+"),
                                ChangeTag::Equal => (None, " "),
                            };
                            tr class=[class] {
                                td.n { @if let Some(i) = change.old_index() { (i + 1) } }
                                td.n { @if let Some(i) = change.new_index() { (i + 1) } }
                                td { (sign) (mark(change.tag(), &pieces)) }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The old and new lines of one operation, row by row.
fn halves<'a>(diff: &'a TextDiff<'a, 'a, 'a, str>, op: &similar::DiffOp) -> (Vec<Side>, Vec<Side>) {
    let (mut left, mut right) = (Vec::new(), Vec::new());
    for change in diff.iter_inline_changes(op) {
        let pieces: Vec<(bool, String)> = change
            .iter_strings_lossy()
            .map(|(e, s)| (e, s.into_owned()))
            .collect();
        match change.tag() {
            ChangeTag::Equal => {
                left.push(change.old_index().map(|i| (i, pieces.clone())));
                right.push(change.new_index().map(|i| (i, pieces)));
            }
            ChangeTag::Delete => left.push(change.old_index().map(|i| (i, pieces))),
            ChangeTag::Insert => right.push(change.new_index().map(|i| (i, pieces))),
        }
    }
    (left, right)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unified_marks_changed_words_and_escapes() {
        let old = "one\ntwo <b>\nthree\n";
        let new = "one\ntwo <i>\nthree\nfour\n";
        let out = render(old, new, false).into_string();
        assert!(out.contains("@@ -1,3 +1,4 @@"), "{out}");
        assert!(
            out.contains("<del>&lt;b&gt;</del>") || out.contains("<del>b</del>"),
            "{out}"
        );
        assert!(out.contains("<ins>"), "{out}");
        assert!(!out.contains("<b>") && !out.contains("<i>"), "{out}");
        assert!(out.contains("four"));
    }

    #[test]
    fn side_by_side_pairs_old_and_new_lines() {
        let out = render("a\nb\nc\n", "a\nB\nc\n", true).into_string();
        assert!(out.contains("class=\"del\""), "{out}");
        assert!(out.contains("class=\"add\""), "{out}");
        assert_eq!(
            render("same\n", "same\n", true).into_string(),
            "<p class=\"muted\">No changes to the text</p>"
        );
    }

    #[test]
    fn property_changes_list_added_removed_and_changed() {
        let mut a = PropList::new();
        a.insert(b"x".to_vec(), b"1".to_vec());
        a.insert(b"gone".to_vec(), b"g".to_vec());
        let mut b = PropList::new();
        b.insert(b"x".to_vec(), b"2".to_vec());
        b.insert(b"new".to_vec(), b"n".to_vec());
        let c = prop_changes(&a, &b);
        assert_eq!(c.len(), 3, "{c:?}");
        assert!(c.contains(&("gone".into(), Some("g".into()), None)));
        assert!(c.contains(&("new".into(), None, Some("n".into()))));
    }
}
