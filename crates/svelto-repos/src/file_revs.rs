//! `get-file-revs`: the versions of a file that `svn blame` needs, each with its revision
//! properties, its property changes and the text delta from the version sent before it
//! (Subversion's `svn_repos_get_file_revs2`).
//!
//! Which versions: the file's history (across copies, [`NodeHistory`]) from `end` back to
//! the first version at or before `start`; with `include_merged`, also the versions of
//! merge sources that `svn:mergeinfo` changes on the way brought in (and their own merges,
//! transitively), marked as merged. They are sent oldest first; with `start > end` the
//! mainline alone is sent youngest first. The first version's delta is against the empty
//! text, each later one against the version sent just before it.

use crate::fs::{find, NodeHistory};
use crate::log::Readable;
use crate::mergeinfo::{self, Mergeinfo};
use crate::query::mergeinfo_for_path;
use crate::Inherit;
use crate::{ReposError, Result};
use std::collections::HashSet;
use std::sync::Arc;
use svelto_core::{is_ancestor, NodeKind, PropList, Revnum};
use svelto_delta::{delta_windows, stream_header, Window};
use svelto_fs::{NodeRev, NodeRevId, ReadRepo};

/// A property change: the name and the new value, None when the property was deleted.
pub type PropDiff = (Vec<u8>, Option<Vec<u8>>);

/// What `get-file-revs` was asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileRevsOptions {
    /// None means HEAD.
    pub start: Option<Revnum>,
    /// None means HEAD. `start > end` sends the youngest version first.
    pub end: Option<Revnum>,
    /// `-g`: include versions merged in through `svn:mergeinfo` (not with `start > end`).
    pub include_merged: bool,
    /// The svndiff version (0, 1 or 2) the deltas are written in.
    pub svndiff_version: u8,
}

/// One version of the file, as the handler receives it.
#[derive(Debug, Clone, Copy)]
pub struct FileRev<'a> {
    /// The file's path in that revision, an fspath ("/trunk/a.txt").
    pub path: &'a str,
    pub rev: Revnum,
    /// All revision properties of `rev`.
    pub revprops: &'a PropList,
    /// The file's property changes since the version sent before (since none, for the
    /// first), by name.
    pub prop_diffs: &'a [PropDiff],
    /// A version brought in by a merge (only with `include_merged`).
    pub merged: bool,
    /// Whether a text delta follows (`delta_chunk` calls before `file_rev_end`).
    pub text_delta: bool,
}

/// Receives the versions in order. For each: `file_rev`, then, when `text_delta` is set,
/// the svndiff stream in pieces (the 4-byte header first, then one piece per window; the
/// wire sends each as a string), then `file_rev_end` (the wire's empty string).
pub trait FileRevsHandler {
    fn file_rev(&mut self, rev: &FileRev<'_>) -> Result<()>;
    fn delta_chunk(&mut self, chunk: &[u8]) -> Result<()>;
    fn file_rev_end(&mut self) -> Result<()>;
}

/// A version to send: where and when, and (with `include_merged`) the ranges whose merge
/// state changed in that revision.
struct PathRev {
    path: String,
    rev: Revnum,
    /// The node-revision at `path@rev`, when the history walk read it.
    node: Option<NodeRevId>,
    merged: bool,
    merged_mergeinfo: Option<Mergeinfo>,
}

/// Sends the versions of `path` (a relpath) as `opts` asks. Errors: a path that is not a
/// file (or missing) in the youngest revision of the range is [`ReposError::NotFile`],
/// a revision above HEAD is `StoreError::NoSuchRevision`, reverse order with
/// `include_merged` is [`ReposError::Unsupported`].
pub fn get_file_revs(
    repo: &dyn ReadRepo,
    path: &str,
    opts: &FileRevsOptions,
    handler: &mut dyn FileRevsHandler,
) -> Result<()> {
    get_file_revs_authz(repo, path, opts, None, handler)
}

/// [`get_file_revs`] for a user who may not read every path: each history walk (the
/// mainline's and each merge source's) stops at the first version whose path `readable`
/// refuses, as `svn_repos_get_file_revs2` does with an authz function. A file unreadable
/// in the youngest revision of the range is [`crate::SvnErrorKind::AuthzUnreadable`].
pub fn get_file_revs_authz(
    repo: &dyn ReadRepo,
    path: &str,
    opts: &FileRevsOptions,
    readable: Option<Readable<'_>>,
    handler: &mut dyn FileRevsHandler,
) -> Result<()> {
    let youngest = repo.youngest();
    let start = opts.start.unwrap_or(youngest);
    let end = opts.end.unwrap_or(youngest);
    let mut sender = Sender {
        repo,
        handler,
        include_merged: opts.include_merged && start <= end,
        svndiff_version: opts.svndiff_version,
        last: None,
    };
    if end < start {
        if opts.include_merged {
            return Err(ReposError::Unsupported(
                "Trying to use an unsupported feature",
            ));
        }
        check_file(repo, start, path)?;
        let mut history = NodeHistory::new(repo, start, path)?;
        while let Some((p, rev, node)) = history.prev_node()? {
            // As Subversion: an unreadable youngest version ends the walk with nothing sent.
            if readable.is_some_and(|r| !r(&p)) {
                break;
            }
            sender.send(&PathRev {
                path: p,
                rev,
                node,
                merged: false,
                merged_mergeinfo: None,
            })?;
            if rev <= end {
                break;
            }
        }
        return Ok(());
    }

    let mut seen = HashSet::new();
    let mut mainline = Vec::new();
    let search = Search {
        repo,
        include_merged: opts.include_merged,
        readable,
    };
    search.interesting(path, start, end, false, &mut seen, &mut mainline)?;
    if mainline.is_empty() {
        return Err(unreadable());
    }
    let merged = if opts.include_merged {
        search.merged(start, &mainline, &mut seen)?
    } else {
        Vec::new()
    };
    // Both lists are youngest first: send from their ends, the mainline first on a tie.
    let (mut i, mut j) = (mainline.len(), merged.len());
    while i > 0 || j > 0 {
        let take_main = match (i.checked_sub(1), j.checked_sub(1)) {
            (Some(a), Some(b)) => mainline[a].rev <= merged[b].rev,
            (Some(_), None) => true,
            _ => false,
        };
        if take_main {
            i -= 1;
            sender.send(&mainline[i])?;
        } else {
            j -= 1;
            sender.send(&merged[j])?;
        }
    }
    Ok(())
}

/// Fails unless `path` is a file in `rev`.
fn check_file(repo: &dyn ReadRepo, rev: Revnum, path: &str) -> Result<()> {
    match find(repo, rev, path)? {
        Some(node) if node.kind == NodeKind::File => Ok(()),
        _ => Err(ReposError::NotFile {
            rev,
            path: format!("/{path}"),
        }),
    }
}

/// Subversion's answer for a file the user cannot read (svnserve asserts there).
fn unreadable() -> ReposError {
    ReposError::svn(
        crate::SvnErrorKind::AuthzUnreadable,
        "Unreadable path encountered; access denied",
    )
}

struct Search<'r> {
    repo: &'r dyn ReadRepo,
    include_merged: bool,
    /// The user's read check: a history walk stops at the first unreadable version.
    readable: Option<Readable<'r>>,
}

impl Search<'_> {
    /// Appends the history of `path` from `end` back to the first version at or before
    /// `start` to `out`, youngest first. With `include_merged`, stops at a version already
    /// found (its older history has been found too) and notes each version's merges.
    fn interesting(
        &self,
        path: &str,
        start: Revnum,
        end: Revnum,
        mark_merged: bool,
        seen: &mut HashSet<(String, Revnum)>,
        out: &mut Vec<PathRev>,
    ) -> Result<()> {
        check_file(self.repo, end, path)?;
        let mut history = NodeHistory::new(self.repo, end, path)?;
        while let Some((p, rev, node)) = history.prev_node()? {
            let key = (p, rev);
            if self.include_merged && seen.contains(&key) {
                break;
            }
            if self.readable.is_some_and(|r| !r(&key.0)) {
                break;
            }
            let (p, rev) = key;
            let merged_mergeinfo = if self.include_merged {
                merged_mergeinfo(self.repo, &p, rev)?
            } else {
                None
            };
            seen.insert((p.clone(), rev));
            out.push(PathRev {
                path: p,
                rev,
                node,
                merged: mark_merged,
                merged_mergeinfo,
            });
            if rev <= start {
                break;
            }
        }
        Ok(())
    }

    /// The versions merged in by the merges of `mainline`, and by theirs, youngest first.
    fn merged(
        &self,
        start: Revnum,
        mainline: &[PathRev],
        seen: &mut HashSet<(String, Revnum)>,
    ) -> Result<Vec<PathRev>> {
        let mut all: Vec<PathRev> = Vec::new();
        let mut new = self.merged_by(start, mainline, seen)?;
        while !new.is_empty() {
            let newer = self.merged_by(start, &new, seen)?;
            all.append(&mut new);
            new = newer;
        }
        all.sort_by_key(|pr| std::cmp::Reverse(pr.rev));
        Ok(all)
    }

    /// One round: the merge sources' versions for the merges noted in `old`.
    fn merged_by(
        &self,
        start: Revnum,
        old: &[PathRev],
        seen: &mut HashSet<(String, Revnum)>,
    ) -> Result<Vec<PathRev>> {
        let mut new = Vec::new();
        for pr in old {
            let Some(mi) = &pr.merged_mergeinfo else {
                continue;
            };
            for (source, ranges) in mi {
                let source = source.trim_start_matches('/');
                for range in ranges {
                    if range.end < start {
                        continue;
                    }
                    match find(self.repo, range.end, source)? {
                        Some(node) if node.kind == NodeKind::File => {}
                        _ => continue,
                    }
                    self.interesting(source, range.start, range.end, true, seen, &mut new)?;
                }
            }
        }
        Ok(new)
    }
}

/// The ranges whose merge state `rev` changed for `path`: the difference between its
/// inherited mergeinfo in `rev - 1` and in `rev`, both directions joined. None when `rev`
/// changed no properties on the path or its parents, when the path did not exist before,
/// or when nothing differs.
fn merged_mergeinfo(repo: &dyn ReadRepo, path: &str, rev: Revnum) -> Result<Option<Mergeinfo>> {
    let Some(prev_rev) = rev.checked_sub(1) else {
        return Ok(None);
    };
    let meta = repo.rev_meta(rev)?;
    if !meta
        .changes
        .iter()
        .any(|c| c.prop_mod && is_ancestor(&c.path, path))
    {
        return Ok(None);
    }
    let current = mergeinfo_for_path(repo, rev, path, Inherit::Inherited)?;
    let previous = match mergeinfo_for_path(repo, prev_rev, path, Inherit::Inherited) {
        Ok(m) => m,
        Err(ReposError::NotFound { .. }) => return Ok(None),
        Err(e) => return Err(e),
    };
    let changed =
        mergeinfo::changed_ranges(&previous.unwrap_or_default(), &current.unwrap_or_default());
    Ok((!changed.is_empty()).then_some(changed))
}

/// The version sent last: what the next one's differences are computed against.
struct Last {
    path: String,
    node: Arc<NodeRev>,
    props: PropList,
    text: Arc<Vec<u8>>,
}

struct Sender<'a> {
    repo: &'a dyn ReadRepo,
    handler: &'a mut dyn FileRevsHandler,
    include_merged: bool,
    svndiff_version: u8,
    last: Option<Last>,
}

impl Sender<'_> {
    fn send(&mut self, pr: &PathRev) -> Result<()> {
        let repo = self.repo;
        let meta = repo.rev_meta(pr.rev)?;
        let node = match pr.node.map(|off| repo.node(off)).transpose()? {
            Some(n) if n.created_rev == pr.rev => n,
            _ => find(repo, pr.rev, &pr.path)?.ok_or_else(|| ReposError::NotFound {
                rev: pr.rev,
                path: format!("/{}", pr.path),
            })?,
        };
        let last = self.last.take();
        let (props, prop_diffs) = match &last {
            Some(l) if l.node.props == node.props => (l.props.clone(), Vec::new()),
            _ => {
                let props = repo.props(&node)?;
                let empty = PropList::new();
                let diffs = prop_diffs(last.as_ref().map_or(&empty, |l| &l.props), &props);
                (props, diffs)
            }
        };
        let text_delta = match &last {
            None => true,
            Some(l) if self.include_merged && l.path != pr.path => true,
            Some(l) => {
                let (a, b) = (l.node.file_text(), node.file_text());
                a.sha1 != b.sha1 || a.size != b.size
            }
        };
        let mut fspath = String::with_capacity(pr.path.len() + 1);
        fspath.push('/');
        fspath.push_str(&pr.path);
        self.handler.file_rev(&FileRev {
            path: &fspath,
            rev: pr.rev,
            revprops: &meta.revprops,
            prop_diffs: &prop_diffs,
            merged: pr.merged,
            text_delta,
        })?;
        let text = match (&last, text_delta) {
            (Some(l), false) => l.text.clone(),
            _ => {
                let ft = node.file_text();
                // Most versions are stored as a delta against the version before (all but
                // every 16th, docs/formats/store.md): those are sent as stored and applied
                // to the text sent last; the others are read whole and a delta computed.
                let over = match &last {
                    Some(l) => repo.text_over(&ft, l.node.file_text().rep, &l.text)?,
                    None => None,
                };
                let (windows, text) = match over {
                    Some((windows, text)) => (windows, Arc::new(text)),
                    None => {
                        let text = repo.read_text(&ft)?;
                        let base = last.as_ref().map_or(&[][..], |l| &l.text[..]);
                        (delta_windows(base, &text), text)
                    }
                };
                self.send_delta(&windows, &fspath, pr.rev)?;
                text
            }
        };
        self.handler.file_rev_end()?;
        self.last = Some(Last {
            path: pr.path.clone(),
            node,
            props,
            text,
        });
        Ok(())
    }

    fn send_delta(&mut self, windows: &[Window], path: &str, rev: Revnum) -> Result<()> {
        self.handler
            .delta_chunk(&stream_header(self.svndiff_version))?;
        let mut chunk = Vec::new();
        for window in windows {
            chunk.clear();
            window
                .encode(self.svndiff_version, 1, &mut chunk)
                .map_err(|e| {
                    ReposError::Internal(format!("encoding a text delta: {e}")).at_path(rev, path)
                })?;
            self.handler.delta_chunk(&chunk)?;
        }
        Ok(())
    }
}

/// The changes that turn `old` into `new`, by name.
fn prop_diffs(old: &PropList, new: &PropList) -> Vec<PropDiff> {
    let mut out = Vec::new();
    for (name, value) in new {
        if old.get(name) != Some(value) {
            out.push((name.clone(), Some(value.clone())));
        }
    }
    for name in old.keys() {
        if !new.contains_key(name) {
            out.push((name.clone(), None));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}
