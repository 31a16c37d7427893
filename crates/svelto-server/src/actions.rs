//! What each command did, in the words svnserve's `--log-file` uses (its "log action"
//! strings, `docs/formats/server-log.md`, written by `svelto_repos::action`, which HTTP's
//! request log shares): `checkout-or-export /trunk r5 depth=infinity`, `get-dir /trunk r5
//! props`, `commit r6`, `log (/trunk) r1:5 revprops=all` ...
//!
//! Each command's typed request gives its action (`Command::action`, beside the command),
//! computed once it ran (revisions the client left out are the HEAD it read, as svnserve
//! resolves them), and finished with what only the run knows (`RunNote`): whether an
//! update's report made it a checkout, a diff's base revision, a commit's new revision.

use svelto_core::{Depth, Revnum};
use svelto_repos::action;

/// What the command loop learns from a report and a commit, for the log.
#[derive(Debug, Clone, Copy, Default)]
pub struct RunNote {
    /// `set-path` and `link-path` entries in the report.
    pub report_entries: u32,
    /// Some entry did not start empty.
    pub report_not_empty: bool,
    /// The revision `set-path ""` reported (a diff's base).
    pub report_root_rev: Option<Revnum>,
    /// The revision a commit made.
    pub committed: Option<Revnum>,
    /// The range a `replay-range` found valid and began to replay.
    pub replayed: Option<(Revnum, Revnum)>,
}

impl RunNote {
    /// Called by the report reader for each `set-path` / `link-path`.
    pub fn report_entry(&mut self, path: &str, rev: Option<Revnum>, start_empty: bool, set: bool) {
        self.report_entries += 1;
        if !start_empty {
            self.report_not_empty = true;
        }
        if set && path.is_empty() {
            self.report_root_rev = rev;
        }
    }
}

/// An action, or what is needed to finish it once the command ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pending {
    /// Not logged (svnserve writes nothing for it, or the parameters did not parse).
    Nothing,
    Done(Vec<String>),
    /// `update`: a checkout when the report held one entry that started empty.
    Update {
        path: String,
        rev: Revnum,
        depth: Depth,
        copyfrom: bool,
    },
    /// `diff`: the base revision comes from the report.
    Diff {
        path: String,
        versus: String,
        rev: Revnum,
        depth: Depth,
        ignore_ancestry: bool,
    },
    /// `commit`: logged only when it made a revision.
    Commit,
    /// `replay-range`: one line for the range, once it was found valid (nothing for a
    /// range refused before any work).
    ReplayRange {
        path: String,
    },
}

impl Pending {
    /// The action lines, now that the command ran.
    pub fn finish(self, note: &RunNote) -> Vec<String> {
        match self {
            Pending::Nothing => Vec::new(),
            Pending::Done(v) => v,
            Pending::Update {
                path,
                rev,
                depth,
                copyfrom,
            } => {
                if note.report_entries == 1 && !note.report_not_empty {
                    vec![action::checkout(&path, rev, depth)]
                } else {
                    vec![action::update(&path, rev, depth, copyfrom)]
                }
            }
            Pending::Diff {
                path,
                versus,
                rev,
                depth,
                ignore_ancestry,
            } => vec![action::diff(
                &path,
                note.report_root_rev,
                &versus,
                rev,
                depth,
                ignore_ancestry,
            )],
            Pending::Commit => note.committed.map(action::commit).into_iter().collect(),
            Pending::ReplayRange { path } => note
                .replayed
                .map(|(start, end)| action::replay_range(&path, start, end))
                .into_iter()
                .collect(),
        }
    }
}

/// Where the session is, for turning the parameters into repository paths.
pub struct Ctx<'a> {
    /// The session path as an fspath (`/` or `/trunk`).
    pub fs_path: String,
    /// The repository root URL as the client spells it (for `reparent`, `switch`, `diff`).
    pub root_url: &'a str,
    /// HEAD, read when a command leaves its revision out.
    pub head: &'a dyn Fn() -> Revnum,
}

impl Ctx<'_> {
    /// `fs_path` joined with a client relpath.
    pub fn full(&self, rel: &[u8]) -> String {
        fspath_join(&self.fs_path, rel)
    }

    /// A revision, or HEAD when the client left it out.
    pub fn rev(&self, r: Option<Revnum>) -> Revnum {
        r.unwrap_or_else(|| (self.head)())
    }

    /// The fspath of a URL inside the repository.
    pub fn url_path(&self, url: &[u8]) -> Option<String> {
        let url = std::str::from_utf8(url).ok()?;
        let rel = crate::url::path_in_repo(self.root_url, url).ok()?;
        Some(action::fspath(&rel))
    }
}

/// `/a` + `b/c` → `/a/b/c`, without doubled or trailing slashes.
fn fspath_join(base: &str, rel: &[u8]) -> String {
    let rel = String::from_utf8_lossy(rel);
    let rel = rel.trim_matches('/');
    let base = base.trim_end_matches('/');
    if rel.is_empty() {
        if base.is_empty() {
            "/".into()
        } else {
            base.into()
        }
    } else {
        format!("{base}/{rel}")
    }
}

/// The depth a command's optional depth word (or its old `recurse` flag) gives.
pub fn command_depth(word: Option<&str>, recurse: bool, not_recursive: Depth) -> Depth {
    match word {
        Some(w) => Depth::from_word(w).unwrap_or(Depth::Unknown),
        None if recurse => Depth::Infinity,
        None => not_recursive,
    }
}

/// A finished action of one line.
pub fn one(s: String) -> Pending {
    Pending::Done(vec![s])
}

/// Client relpaths as fspaths.
pub fn full_paths<'a>(paths: impl IntoIterator<Item = &'a [u8]>, ctx: &Ctx<'_>) -> Vec<String> {
    paths.into_iter().map(|s| ctx.full(s)).collect()
}
