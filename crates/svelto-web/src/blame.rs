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
/// are compared by, without building a string per line. foldhash, keyed per blame (a
/// committer cannot aim at a collision): a long history hashes millions of lines (the
/// medium history's ChangeLog, 11,558 versions of ~700 lines whose head and tail both
/// change), where SipHash took 80% of the page's time.
fn line_hashes<'t>(
    hasher: &'t foldhash::fast::RandomState,
    text: &'t [u8],
) -> impl Iterator<Item = u64> + 't {
    use std::hash::BuildHasher;
    // Lines found by memchr: `split_inclusive` looks at a byte at a time, which took most
    // of the time once the hash was fast.
    let mut start = 0;
    memchr::memchr_iter(b'\n', text)
        .map(|i| i + 1)
        .chain(std::iter::once(text.len()))
        .filter_map(move |end| {
            let line = text.get(start..end).filter(|l| !l.is_empty())?;
            start = end;
            Some(hasher.hash_one(line))
        })
}

/// The number of lines of a text (an unterminated last line counts).
fn line_count(text: &[u8]) -> usize {
    bytecount_lines(text) + usize::from(!text.is_empty() && !text.ends_with(b"\n"))
}

/// The number of whole lines (each ending in `\n`) that `a` and `b` both start with, and
/// the byte length of those lines.
fn common_head(a: &[u8], b: &[u8]) -> (usize, usize) {
    let n = a.len().min(b.len());
    // Compared a block at a time (memcmp), then byte by byte within the block that differs.
    let mut same = 0;
    while same + BLOCK <= n && a[same..same + BLOCK] == b[same..same + BLOCK] {
        same += BLOCK;
    }
    while same < n && a[same] == b[same] {
        same += 1;
    }
    // Back to the end of the last whole line inside the common bytes.
    let bytes = memchr::memrchr(b'\n', &a[..same]).map_or(0, |i| i + 1);
    (bytecount_lines(&a[..bytes]), bytes)
}

/// The bytes compared at once when looking for a common head or tail.
const BLOCK: usize = 256;

/// The number of bytes `a` and `b` both end with.
fn common_suffix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let mut same = 0;
    while same + BLOCK <= n
        && a[a.len() - same - BLOCK..a.len() - same] == b[b.len() - same - BLOCK..b.len() - same]
    {
        same += BLOCK;
    }
    while same < n && a[a.len() - same - 1] == b[b.len() - same - 1] {
        same += 1;
    }
    same
}

/// The number of whole lines that `a` and `b` both end with, within `a[from..]` and
/// `b[from..]` (so they never overlap the common head).
fn common_tail(a: &[u8], b: &[u8], from: usize) -> usize {
    let (a, b) = (&a[from..], &b[from..]);
    let same = common_suffix(a, b);
    if same == 0 {
        return 0;
    }
    // The common tail starts just after a line's end in both texts (or at their start).
    let start = a.len() - same;
    let at_line_start = |t: &[u8], i: usize| i == 0 || t.get(i - 1) == Some(&b'\n');
    let mut i = start;
    while i < a.len() && !(at_line_start(a, i) && at_line_start(b, b.len() - (a.len() - i))) {
        i += 1;
    }
    let tail = &a[i..];
    // A text without a final end of line has one more (unterminated) line.
    bytecount_lines(tail) + usize::from(!tail.is_empty() && !tail.ends_with(b"\n"))
}

fn bytecount_lines(t: &[u8]) -> usize {
    memchr::memchr_iter(b'\n', t).count()
}

/// Blame's attribution, one version at a time (oldest first): the revision that brought
/// each line of the text given last.
///
/// Consecutive versions mostly share a head and a tail (a commit changes a few lines):
/// those are found by comparing bytes, and only the new version's lines between are hashed
/// (the old version's hashes are kept from the step before) and compared (Myers, with a
/// deadline), so a long history of small changes costs about what reading its texts costs.
#[derive(Default)]
pub struct Attribution {
    text: std::sync::Arc<Vec<u8>>,
    revs: Vec<Revnum>,
    /// Each line's hash of the last text (kept: the next version's comparison needs the
    /// ones between the common head and tail again).
    hashes: Vec<u64>,
    hasher: foldhash::fast::RandomState,
}

impl Attribution {
    /// Takes the next version: lines it keeps keep their revision, the others get `rev`.
    pub fn push(&mut self, rev: Revnum, text: std::sync::Arc<Vec<u8>>) {
        let (head, head_bytes) = common_head(&self.text, &text);
        let tail = common_tail(&self.text, &text, head_bytes);
        let old_mid = &self.hashes[head..self.hashes.len() - tail];
        let new_lines = line_count(&text);
        let new_mid = line_hashes(&self.hasher, &text[head_bytes..])
            .take(new_lines - head - tail)
            .collect::<Vec<_>>();
        let mut revs = Vec::with_capacity(new_lines);
        revs.extend_from_slice(&self.revs[..head]);
        let deadline = std::time::Instant::now() + std::time::Duration::from_millis(500);
        let ops = similar::capture_diff_slices_deadline(
            similar::Algorithm::Myers,
            old_mid,
            &new_mid,
            Some(deadline),
        );
        for op in ops {
            match op {
                similar::DiffOp::Equal { old_index, len, .. } => {
                    revs.extend_from_slice(&self.revs[head + old_index..head + old_index + len])
                }
                similar::DiffOp::Insert { new_len, .. }
                | similar::DiffOp::Replace { new_len, .. } => {
                    revs.extend(std::iter::repeat_n(rev, new_len))
                }
                similar::DiffOp::Delete { .. } => {}
            }
        }
        revs.extend_from_slice(&self.revs[self.revs.len() - tail..]);
        let mut hashes = Vec::with_capacity(new_lines);
        hashes.extend_from_slice(&self.hashes[..head]);
        hashes.extend_from_slice(&new_mid);
        hashes.extend_from_slice(&self.hashes[self.hashes.len() - tail..]);
        self.text = text;
        self.revs = revs;
        self.hashes = hashes;
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
        a.push(rev, std::sync::Arc::new(text.as_bytes().to_vec()));
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
        attribution.push(rev, text_now.clone());
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
            a href=(at.href(Page::Log, Some(at.rev), at.path)) accesskey="h" { "History" }
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
        // Heads and tails shared, lines moved, repeated and unterminated.
        assert_eq!(attribute([(1, "a\nb"), (2, "a\nb\nc")]), vec![1, 2, 2]);
        assert_eq!(
            attribute([(1, "x\n"), (2, "x\nx\n"), (3, "x\nx\nx\n")]),
            vec![1, 2, 3]
        );
        assert_eq!(
            attribute([(1, "a\nb\nc\n"), (2, "c\na\nb\n")]),
            vec![2, 1, 1]
        );
        assert_eq!(
            attribute([(1, "a\nb\n"), (2, ""), (3, "a\nb\n")]),
            vec![3, 3]
        );
        assert_eq!(attribute([(1, "a\nb\n"), (2, "a\nb\n")]), vec![1, 1]);
    }

    /// The shortcut (shared head and tail by bytes) gives what comparing every line gives.
    #[test]
    fn the_shortcut_agrees_with_a_whole_comparison() {
        let mut seed = 7u64;
        let mut next = move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize
        };
        for _ in 0..200 {
            let mut lines: Vec<String> = (0..next() % 12).map(|i| format!("l{}", i % 4)).collect();
            let mut versions = Vec::new();
            for rev in 1..6 {
                match next() % 4 {
                    0 if !lines.is_empty() => {
                        let i = next() % lines.len();
                        lines.remove(i);
                    }
                    1 => {
                        let i = next() % (lines.len() + 1);
                        lines.insert(i, format!("l{}", next() % 4));
                    }
                    _ if !lines.is_empty() => {
                        let i = next() % lines.len();
                        lines[i] = format!("l{}", next() % 5);
                    }
                    _ => lines.push("n".into()),
                }
                let mut text = lines.join("\n");
                if next() % 3 != 0 && !text.is_empty() {
                    text.push('\n');
                }
                versions.push((rev, text));
            }
            let fast = attribute(versions.iter().map(|(r, t)| (*r, t.as_str())));
            // The whole comparison: Myers over every line's hash.
            let mut revs: Vec<Revnum> = Vec::new();
            let mut old: Vec<u64> = Vec::new();
            let hasher = foldhash::fast::RandomState::default();
            for (rev, text) in &versions {
                let new: Vec<u64> = line_hashes(&hasher, text.as_bytes()).collect();
                let mut next_revs = Vec::new();
                for op in similar::capture_diff_slices(similar::Algorithm::Myers, &old, &new) {
                    match op {
                        similar::DiffOp::Equal { old_index, len, .. } => {
                            next_revs.extend_from_slice(&revs[old_index..old_index + len])
                        }
                        similar::DiffOp::Insert { new_len, .. }
                        | similar::DiffOp::Replace { new_len, .. } => {
                            next_revs.extend(std::iter::repeat_n(*rev, new_len))
                        }
                        similar::DiffOp::Delete { .. } => {}
                    }
                }
                revs = next_revs;
                old = new;
            }
            assert_eq!(fast.len(), revs.len(), "{versions:?}");
            assert_eq!(
                fast.len(),
                line_count(versions[4].1.as_bytes()),
                "{versions:?}"
            );
        }
    }
}
