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

/// The first page of versions read (each later one twice as long, up to [`PAGE_MAX`]).
const PAGE_FIRST: u64 = 32;
const PAGE_MAX: u64 = 1024;

/// The versions (path, revision) of `path@rev`, youngest first, a page at a time: the
/// revisions that changed it (its history across copies, as `svn log` walks it, filtered by
/// authz), each with where the file was then (`svn blame`'s file-revs walks the same
/// history; its deltas, which this does not need, are not computed). A location the user
/// may not read ends the walk back, as it ends file-revs'. Paged because blame usually
/// stops long before the first version (when every line of the last one is attributed).
struct Versions<'a> {
    at: &'a At<'a>,
    /// Where the next page's log starts: the oldest version given so far (None: the page's
    /// own path and revision), or nothing when the history is done.
    from: Option<Option<(String, Revnum)>>,
    page: u64,
}

impl<'a> Versions<'a> {
    fn new(at: &'a At<'a>) -> Versions<'a> {
        Versions {
            at,
            from: Some(None),
            page: PAGE_FIRST,
        }
    }

    /// The next page of versions, youngest first (empty: the history is done).
    fn next_page(&mut self) -> Result<Vec<(String, Revnum)>> {
        let Some(from) = self.from.take() else {
            return Ok(Vec::new());
        };
        let (path, peg) = match &from {
            Some((p, r)) => (p.as_str(), *r),
            None => (self.at.path, self.at.rev),
        };
        // A later page starts at the oldest version given, which its log gives again first.
        let limit = self.page + u64::from(from.is_some());
        let opts = LogOptions {
            paths: vec![path.to_string()],
            start: peg,
            end: 0,
            limit,
            discover_changed_paths: false,
            strict_node_history: false,
            include_merged_revisions: false,
            revprops: Some(Vec::new()),
        };
        let mut revs = Vec::new();
        self.at.svc.log_ref(&opts, &mut |e| {
            revs.push(e.rev);
            Ok(())
        })?;
        let logged = revs.len() as u64;
        if from.is_some() {
            revs.retain(|&r| r < peg);
        }
        let mut located = self.at.svc.locations(path, peg, &revs)?;
        located.sort_by_key(|(r, _)| std::cmp::Reverse(*r));
        let page: Vec<(String, Revnum)> = located
            .into_iter()
            .map(|(r, p)| (p.trim_start_matches('/').to_string(), r))
            .collect();
        // More only when the log was cut by the limit and no location was refused.
        if logged == limit && page.len() == revs.len() {
            self.from = page.last().cloned().map(Some);
            self.page = (self.page * 2).min(PAGE_MAX);
        }
        Ok(page)
    }
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

/// How a version follows from the one before it, as blame compares them: the whole lines
/// both share at the start (`head`, `head_bytes` long) and at the end (`tail`), found by
/// comparing bytes; only the lines between are compared by their hashes. Consecutive
/// versions mostly share a head and a tail (a commit changes a few lines), so a long
/// history of small changes costs about what reading its texts costs.
struct Bounds {
    head: usize,
    head_bytes: usize,
    tail: usize,
    old_lines: usize,
    new_lines: usize,
}

impl Bounds {
    fn of(old: &[u8], new: &[u8]) -> Bounds {
        let (head, head_bytes) = common_head(old, new);
        let tail = common_tail(old, new, head_bytes);
        Bounds {
            head,
            head_bytes,
            tail,
            old_lines: line_count(old),
            new_lines: line_count(new),
        }
    }

    /// The hashes of `text`'s lines between the head and the tail (`lines` its line count).
    fn middle(&self, hasher: &foldhash::fast::RandomState, text: &[u8], lines: usize) -> Vec<u64> {
        line_hashes(hasher, &text[self.head_bytes..])
            .take(lines - self.head - self.tail)
            .collect()
    }
}

/// The differences of the lines between the head and the tail (Myers, with a deadline:
/// past it, what is left counts as replaced).
fn middle_ops(old_mid: &[u64], new_mid: &[u64]) -> Vec<similar::DiffOp> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_millis(500);
    similar::capture_diff_slices_deadline(
        similar::Algorithm::Myers,
        old_mid,
        new_mid,
        Some(deadline),
    )
}

/// Blame's attribution one version at a time, oldest first: the revision that brought each
/// line of the text given last. The reference [`Backward`] is checked against.
#[cfg(test)]
#[derive(Default)]
struct Forward {
    text: std::sync::Arc<Vec<u8>>,
    revs: Vec<Revnum>,
    /// Each line's hash of the last text (kept: the next version's comparison needs the
    /// ones between the common head and tail again).
    hashes: Vec<u64>,
    hasher: foldhash::fast::RandomState,
}

#[cfg(test)]
impl Forward {
    /// Takes the next version: lines it keeps keep their revision, the others get `rev`.
    fn push(&mut self, rev: Revnum, text: std::sync::Arc<Vec<u8>>) {
        let b = Bounds::of(&self.text, &text);
        let old_mid = &self.hashes[b.head..b.old_lines - b.tail];
        let new_mid = b.middle(&self.hasher, &text, b.new_lines);
        let mut revs = Vec::with_capacity(b.new_lines);
        revs.extend_from_slice(&self.revs[..b.head]);
        for op in middle_ops(old_mid, &new_mid) {
            match op {
                similar::DiffOp::Equal { old_index, len, .. } => {
                    revs.extend_from_slice(&self.revs[b.head + old_index..b.head + old_index + len])
                }
                similar::DiffOp::Insert { new_len, .. }
                | similar::DiffOp::Replace { new_len, .. } => {
                    revs.extend(std::iter::repeat_n(rev, new_len))
                }
                similar::DiffOp::Delete { .. } => {}
            }
        }
        revs.extend_from_slice(&self.revs[b.old_lines - b.tail..]);
        let mut hashes = Vec::with_capacity(b.new_lines);
        hashes.extend_from_slice(&self.hashes[..b.head]);
        hashes.extend_from_slice(&new_mid);
        hashes.extend_from_slice(&self.hashes[b.old_lines - b.tail..]);
        self.text = text;
        self.revs = revs;
        self.hashes = hashes;
    }
}

/// A line of a version that is no line of the last one.
const GONE: u32 = u32::MAX;

/// Blame's attribution walking back from the last version, youngest first: each version is
/// compared with the one before it exactly as [`Forward`] compares them (so the answer is
/// the same), and a line of the last version is attributed to the version that inserted it.
/// The walk ends once every line of the last version is attributed: a ChangeLog whose old
/// entries drop off the bottom needs the versions of its last ~140 entries, not its whole
/// history. A version whose changes touch no line still followed is not compared by lines.
struct Backward {
    hasher: foldhash::fast::RandomState,
    /// The version compared next with the one before it, and its revision.
    text: std::sync::Arc<Vec<u8>>,
    rev: Revnum,
    /// Its lines' hashes, when the comparison that led here computed them.
    hashes: Option<Vec<u64>>,
    /// For each of its lines, the line of the last version it is ([`GONE`]: none).
    track: Vec<u32>,
    /// The revision of each line of the last version, once found.
    revs: Vec<Option<Revnum>>,
    /// The lines of the last version not attributed yet.
    remaining: usize,
}

impl Backward {
    /// Starts from the last version. Its text has at most `u32::MAX - 1` lines (blame's
    /// texts are at most [`MAX_BLAMED`] bytes).
    fn new(rev: Revnum, text: std::sync::Arc<Vec<u8>>) -> Backward {
        let lines = line_count(&text);
        Backward {
            hasher: foldhash::fast::RandomState::default(),
            rev,
            hashes: None,
            track: (0..lines as u32).collect(),
            revs: vec![None; lines],
            remaining: lines,
            text,
        }
    }

    /// Whether every line of the last version is attributed (no older version matters).
    fn done(&self) -> bool {
        self.remaining == 0
    }

    /// Attributes the lines of the last version that `lines` are (if not yet) to `rev`.
    fn found(&mut self, lines: std::ops::Range<usize>, rev: Revnum) {
        for &line in &self.track[lines] {
            if let Some(slot @ None) = self.revs.get_mut(line as usize) {
                *slot = Some(rev);
                self.remaining -= 1;
            }
        }
    }

    /// Takes the version before the one taken last: the lines the later one inserted are
    /// attributed to the later one's revision.
    fn older(&mut self, rev: Revnum, text: std::sync::Arc<Vec<u8>>) {
        let b = Bounds::of(&text, &self.text);
        let mut track = vec![GONE; b.old_lines];
        track[..b.head].copy_from_slice(&self.track[..b.head]);
        track[b.old_lines - b.tail..].copy_from_slice(&self.track[b.new_lines - b.tail..]);
        let new_mid = b.head..b.new_lines - b.tail;
        let followed = self.track[new_mid.clone()].iter().any(|&t| t != GONE);
        let mut hashes = None;
        if followed {
            if self.hashes.is_none() {
                self.hashes = Some(line_hashes(&self.hasher, &self.text).collect());
            }
            let new_hashes = self.hashes.take().expect("computed just above");
            let old_mid = b.middle(&self.hasher, &text, b.old_lines);
            for op in middle_ops(&old_mid, &new_hashes[new_mid]) {
                match op {
                    similar::DiffOp::Equal {
                        old_index,
                        new_index,
                        len,
                    } => {
                        let (o, n) = (b.head + old_index, b.head + new_index);
                        track[o..o + len].copy_from_slice(&self.track[n..n + len]);
                    }
                    similar::DiffOp::Insert {
                        new_index, new_len, ..
                    }
                    | similar::DiffOp::Replace {
                        new_index, new_len, ..
                    } => {
                        let at = b.head + new_index;
                        self.found(at..at + new_len, self.rev);
                    }
                    similar::DiffOp::Delete { .. } => {}
                }
            }
            let mut h = Vec::with_capacity(b.old_lines);
            h.extend_from_slice(&new_hashes[..b.head]);
            h.extend_from_slice(&old_mid);
            h.extend_from_slice(&new_hashes[b.new_lines - b.tail..]);
            hashes = Some(h);
        }
        self.text = text;
        self.rev = rev;
        self.track = track;
        self.hashes = hashes;
    }

    /// The revision of each line of the last version: the lines still followed came with
    /// the oldest version taken.
    fn finish(mut self) -> Vec<Revnum> {
        self.found(0..self.track.len(), self.rev);
        self.revs
            .into_iter()
            .map(|r| r.unwrap_or(self.rev))
            .collect()
    }
}

/// Each line of the last text with the revision that brought it, given the texts of the
/// versions oldest first: forward and backward, which must agree.
#[cfg(test)]
fn attribute<'t>(versions: impl IntoIterator<Item = (Revnum, &'t str)>) -> Vec<Revnum> {
    let versions: Vec<_> = versions
        .into_iter()
        .map(|(r, t)| (r, std::sync::Arc::new(t.as_bytes().to_vec())))
        .collect();
    let mut forward = Forward::default();
    for (rev, text) in &versions {
        forward.push(*rev, text.clone());
    }
    let mut youngest_first = versions.into_iter().rev();
    let backward = match youngest_first.next() {
        None => Vec::new(),
        Some((rev, text)) => {
            let mut b = Backward::new(rev, text);
            for (rev, text) in youngest_first {
                if b.done() {
                    break;
                }
                b.older(rev, text);
            }
            b.finish()
        }
    };
    assert_eq!(backward, forward.revs, "backward and forward differ");
    backward
}

/// The texts read at once, oldest first (each the delta over the one read before it, in
/// the store's text cache), before blame compares them youngest first: at most this many
/// versions, and [`CHUNK_BYTES`] of them.
const CHUNK: usize = 32;
const CHUNK_BYTES: u64 = 8 << 20;

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
    // The versions youngest first, a page of the history at a time, until every line of
    // the last one is attributed; a chunk's texts are read oldest first (each a delta over
    // the one before, which the store's text cache then holds), at most CHUNK_BYTES.
    let mut versions = Versions::new(at);
    let mut walk: Option<Backward> = None;
    let mut text_now = std::sync::Arc::new(Vec::new());
    'history: loop {
        let page = versions.next_page()?;
        if page.is_empty() {
            break;
        }
        let mut rest = &page[..];
        while !rest.is_empty() {
            let mut nodes = Vec::new();
            let mut bytes = 0;
            for (path, rev) in rest.iter().take(CHUNK) {
                let node = at.svc.node(path, *rev)?.filter(|n| n.size() <= MAX_BLAMED);
                bytes += node.as_ref().map_or(0, |n| n.size());
                nodes.push((*rev, node));
                if bytes >= CHUNK_BYTES {
                    break;
                }
            }
            rest = &rest[nodes.len()..];
            let mut texts = Vec::with_capacity(nodes.len());
            for (rev, node) in nodes.iter().rev() {
                let text = match node {
                    Some(n) => at.svc.read_text(n)?,
                    None => std::sync::Arc::new(Vec::new()),
                };
                texts.push((*rev, text));
            }
            for (rev, text) in texts.into_iter().rev() {
                match &mut walk {
                    None => {
                        text_now = text.clone();
                        walk = Some(Backward::new(rev, text));
                    }
                    Some(w) => w.older(rev, text),
                }
                if walk.as_ref().is_some_and(Backward::done) {
                    break 'history;
                }
            }
        }
    }
    let revs = walk.map(Backward::finish).unwrap_or_default();
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

    /// A ChangeLog (an entry added at the top, the oldest dropped at the bottom): walking
    /// back stops once the last version's entries are all found, long before the first.
    #[test]
    fn the_walk_back_stops_when_every_line_is_attributed() {
        let mut entries: Vec<String> = Vec::new();
        let mut versions = Vec::new();
        for rev in 1..=200u64 {
            entries.insert(0, format!("entry {rev}\n\tdetail {rev}\n"));
            entries.truncate(10);
            versions.push((rev, std::sync::Arc::new(entries.concat().into_bytes())));
        }
        let mut youngest_first = versions.iter().rev();
        let (rev, text) = youngest_first.next().expect("a version");
        let mut walk = Backward::new(*rev, text.clone());
        let mut taken = 1;
        for (rev, text) in youngest_first {
            if walk.done() {
                break;
            }
            walk.older(*rev, text.clone());
            taken += 1;
        }
        assert_eq!(taken, 11, "the last 10 versions and the one before them");
        let revs = walk.finish();
        let want: Vec<Revnum> = (191..=200).rev().flat_map(|r| [r, r]).collect();
        assert_eq!(revs, want);
        let texts = versions
            .iter()
            .map(|(r, t)| (*r, std::str::from_utf8(t).expect("utf-8")));
        assert_eq!(attribute(texts), want);
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
