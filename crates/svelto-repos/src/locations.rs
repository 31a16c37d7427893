//! Where a node was in other revisions: `get-locations`, `get-location-segments` and
//! `get-deleted-rev`, with the semantics of Subversion's `svn_repos_trace_node_locations`,
//! `svn_repos_node_location_segments` and `svn_repos_deleted_rev`
//! (docs/formats/svn-protocol.md §4.4).
//!
//! Paths given are relpaths (already joined with the session path; a leading slash is
//! tolerated); paths returned are fspaths.

use crate::error::{ReposError, Result};
use crate::fs::{self, check_rev, lookup, prev_location, History};
use svelto_core::{fspath, relpath, Revnum};
use svelto_fs::ReadRepo;

/// The path of the node `path@peg_rev` in each of `revs`. Revisions in which the node did
/// not exist (or was another line of history) are left out; the result is ordered youngest
/// first, one entry per revision.
///
/// Errors as Subversion's: `NoSuchRevision` for a revision past HEAD that must be read,
/// `NotFound` when `path` is missing at `peg_rev` (or at a younger requested revision).
pub fn get_locations(
    repo: &dyn ReadRepo,
    path: &str,
    peg_rev: Revnum,
    revs: &[Revnum],
) -> Result<Vec<(Revnum, String)>> {
    let path = relpath(path);
    let mut revs = revs.to_vec();
    revs.sort_unstable_by(|a, b| b.cmp(a));
    revs.dedup();
    let mut i = 0;
    // Younger revisions count only if the node there descends from path@peg_rev.
    let mut descends = false;
    while i < revs.len() && revs[i] > peg_rev {
        descends = descends_from_peg(repo, &path, peg_rev, revs[i])?;
        if descends {
            break;
        }
        i += 1;
    }
    let mut rev = if descends { revs[i] } else { peg_rev };
    let mut cur = path;
    let mut out = Vec::new();
    while i < revs.len() {
        let Some((appeared, prev_path, prev_rev)) = prev_location(repo, rev, &cur)? else {
            break;
        };
        while i < revs.len() && revs[i] >= appeared {
            out.push((revs[i], fspath(&cur)));
            i += 1;
        }
        while i < revs.len() && revs[i] > prev_rev {
            i += 1;
        }
        cur = prev_path;
        rev = prev_rev;
    }
    check_rev(repo, rev)?;
    if i < revs.len() {
        // No copy lies between: the rest are where the node sits at the same path.
        let node = fs::leaf_node(repo, rev, &cur)?;
        while i < revs.len() {
            match lookup(repo, revs[i], &cur)? {
                Some(n) if n.node_id == node.node_id => out.push((revs[i], fspath(&cur))),
                _ => break,
            }
            i += 1;
        }
    }
    Ok(out)
}

/// Does `path@future` lie on the line of history of `path@peg` (Subversion's
/// `check_ancestry_of_peg_path`)? It does if, following its history back to `peg` or
/// earlier, the node is still at the path it had in `future`.
fn descends_from_peg(repo: &dyn ReadRepo, path: &str, peg: Revnum, future: Revnum) -> Result<bool> {
    check_rev(repo, future)?;
    if lookup(repo, future, path)?.is_none() {
        return Err(ReposError::NotFound {
            rev: future,
            path: fspath(path),
        });
    }
    let mut history = History::new(path, future);
    let mut first: Option<String> = None;
    while history.prev(repo, true)? {
        let (p, r) = history.location();
        let first = first.get_or_insert_with(|| p.to_string());
        if r <= peg {
            return Ok(p == first.as_str());
        }
    }
    Ok(false)
}

/// One stretch of a node's history: revisions `start..=end` at `path` (an fspath), or a
/// gap in which the node did not exist (`path` None).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    pub start: Revnum,
    pub end: Revnum,
    pub path: Option<String>,
}

/// The history of `path@peg_rev` between `start` and `end` (`end <= start <= peg_rev`) as
/// segments, youngest first, each cropped to the range. The caller resolves missing
/// revisions as svnserve does (peg and start: HEAD; end: 0).
///
/// Errors: `BadRevisionRange` for `end > start` or `start > peg_rev` (svnserve's
/// messages), `NoSuchRevision` for a peg past HEAD, `NotFound` if `path@peg_rev` is
/// missing.
pub fn location_segments(
    repo: &dyn ReadRepo,
    path: &str,
    peg_rev: Revnum,
    start: Revnum,
    end: Revnum,
    receiver: &mut dyn FnMut(Segment) -> Result<()>,
) -> Result<()> {
    if end > start {
        return Err(ReposError::BadRevisionRange(
            "Get-location-segments end revision must not be younger than start revision".into(),
        ));
    }
    if start > peg_rev {
        return Err(ReposError::BadRevisionRange(
            "Get-location-segments start revision must not be younger than peg revision".into(),
        ));
    }
    check_rev(repo, peg_rev)?;
    let mut send = |seg_start: Revnum, seg_end: Revnum, path: Option<&str>| -> Result<()> {
        if seg_start > start || seg_end < end {
            return Ok(());
        }
        receiver(Segment {
            start: seg_start.max(end),
            end: seg_end.min(start),
            path: path.map(fspath),
        })
    };
    let mut cur_rev = peg_rev;
    let mut cur_path = relpath(path);
    loop {
        match prev_location(repo, cur_rev, &cur_path)? {
            None => {
                let origin = fs::node_origin_rev(repo, cur_rev, &cur_path)?;
                return send(origin.max(end), cur_rev, Some(&cur_path));
            }
            Some((appeared, prev_path, prev_rev)) => {
                send(appeared, cur_rev, Some(&cur_path))?;
                if appeared > prev_rev + 1 {
                    send(prev_rev + 1, appeared - 1, None)?;
                }
                if prev_rev < end {
                    return Ok(());
                }
                cur_rev = prev_rev;
                cur_path = prev_path;
            }
        }
    }
}

/// The revision in which `path`, existing at `start`, was first deleted (or replaced by
/// another node, or by a copy of itself) up to `end`; None if it was not. The two bounds
/// may come in either order.
pub fn deleted_rev(
    repo: &dyn ReadRepo,
    path: &str,
    start: Revnum,
    end: Revnum,
) -> Result<Option<Revnum>> {
    let path = relpath(path);
    let (mut start, mut end) = (start.min(end), start.max(end));
    check_rev(repo, start)?;
    let Some(start_node) = lookup(repo, start, &path)? else {
        return Ok(None);
    };
    check_rev(repo, end)?;
    // A copy made after `start` that (re)created the node means it was deleted first.
    let copied_after_start = |rev: Revnum| -> Result<bool> {
        Ok(fs::closest_copy(repo, rev, &path)?.is_some_and(|(r, _)| r > start))
    };
    if let Some(n) = lookup(repo, end, &path)? {
        if n.node_id == start_node.node_id && !copied_after_start(end)? {
            return Ok(None);
        }
    }
    let start_node_id = start_node.node_id;
    let mut mid = start + (end - start) / 2;
    // A binary search takes at most 64 steps over 64-bit revisions.
    for _ in 0..128 {
        let look_lower = match lookup(repo, mid, &path)? {
            None => true,
            Some(n) => {
                let copied = if n.node_id == start_node_id {
                    fs::closest_copy(repo, mid, &path)?.is_some_and(|(r, _)| r > start)
                } else {
                    false
                };
                n.node_id != start_node_id || copied
            }
        };
        if look_lower {
            end = mid;
            mid = start + (mid - start) / 2;
        } else if end - mid == 1 {
            return Ok(Some(end));
        } else {
            start = mid;
            mid = start + (end - start) / 2;
        }
    }
    Err(ReposError::Corrupt(format!(
        "searching for the deletion of '{}' did not converge",
        fspath(&path)
    )))
}
