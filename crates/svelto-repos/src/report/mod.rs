//! The server side of update reports: what `svn update`, `switch`, `status` and `diff` receive
//! (`docs/formats/svn-protocol.md` §5.3 "What a report means", §5.7 "What the server's drive
//! contains"). The behaviour is svnserve's (Subversion's `libsvn_repos/reporter.c`), so that
//! the stock client prints the same lines and stores the same working copy.
//!
//! A [`Report`] collects the client's `set-path`, `link-path` and `delete-path` entries under
//! [`ReportLimits`]. [`prepare`] checks everything that can fail before the first editor call
//! (a bad report, a revision that does not exist, a missing target); [`PreparedDrive::run`]
//! then drives an [`Editor`] from `target_rev` to `close_edit`. An error from `run` leaves the
//! edit open: the caller aborts it (svnserve sends `abort-edit`).
//!
//! The walk compares the working copy's tree (the source: each reported path at its reported
//! revision) with the target tree, directory by directory. Subtrees whose node-revision is the
//! same on both sides are skipped without being read, so an update costs what changed.

mod driver;
mod entries;

use driver::Driver;
pub use entries::Report;
use entries::{bad_args, bad_report, no_such_revision, walk_order};

use crate::editor::{Editor, TextOptions};
use crate::error::Result;
use std::collections::HashMap;
use std::sync::Arc;
use svelto_core::{join, validate_path, Depth, Revnum};
use svelto_fs::{NodeRevId, ReadRepo};

/// What the drive compares the report against, and how it sends the difference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportOptions {
    /// Repository relpath of the session URL, the drive's anchor ("" = the root).
    pub anchor: String,
    /// The update target: "" or one path component below `anchor`.
    pub target: String,
    /// The revision the working copy is brought to (HEAD already resolved by the caller).
    pub target_rev: Revnum,
    /// Switch and diff: the repository relpath `anchor/target` is compared against (the full
    /// path of the other URL). None for update and status.
    pub switch_path: Option<String>,
    /// The requested depth; [`Depth::Unknown`] keeps each directory's ambient depth.
    pub depth: Depth,
    /// Add files copied in the repository with their copy source (and a delta against it).
    pub send_copyfrom_args: bool,
    /// Treat any two nodes of the same kind as related (open instead of delete and add).
    pub ignore_ancestry: bool,
    /// svndiff version, and whether texts are sent at all (false for `status`,
    /// `diff --summarize`: each changed file gets only the 4-byte stream header).
    pub text: TextOptions,
}

/// Bounds on what a client's report may hold in memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReportLimits {
    /// Most entries (`set-path`, `link-path`, `delete-path`) in one report.
    pub max_entries: usize,
    /// Most bytes of paths, link paths and lock tokens in one report (at most 4 GiB).
    pub max_bytes: usize,
}

impl Default for ReportLimits {
    fn default() -> Self {
        ReportLimits {
            max_entries: 2_000_000,
            max_bytes: 256 << 20,
        }
    }
}

/// Path-based authorization: whether a repository relpath may be read.
pub type ReadCheck = Box<dyn Fn(&str) -> bool + Send>;

/// A report checked against the repository, ready to drive an editor.
pub struct PreparedDrive {
    repo: Arc<dyn ReadRepo>,
    opts: ReportOptions,
    report: Report,
    /// Walk order of the entries below the target (None: arrival order from `first`).
    order: Option<Vec<u32>>,
    first: usize,
    /// The entry describing the target (the first, or a second one for "").
    top: u32,
    /// The revision of the report's first entry: the anchor's, sent with `open_root`.
    s_rev: Revnum,
    t_root: NodeRevId,
    t_path: String,
    uuid: Vec<u8>,
    /// The repository's locks (path to token), read from `db/locks` when the first reported
    /// lock token is checked: most reports carry none, and then the file is not read.
    locks: std::sync::OnceLock<HashMap<String, String>>,
    readable: Option<ReadCheck>,
}

impl std::fmt::Debug for PreparedDrive {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreparedDrive")
            .field("opts", &self.opts)
            .field("entries", &self.report.len())
            .field("s_rev", &self.s_rev)
            .field("t_path", &self.t_path)
            .finish_non_exhaustive()
    }
}

fn relpath(what: &str, path: &str) -> Result<String> {
    validate_path(path).map_err(|e| bad_args(format!("{what}: {e}")))
}

/// Checks what svnserve checks before it starts a drive, and answers with a plain failure:
/// the depths, the target revision, and the shape of the report (it must start with
/// `set-path ""`; a second entry for "" only when there is a target).
///
/// Other errors come from [`PreparedDrive::run`], some before its first editor call (the
/// revision of the first entry does not exist, the target path does not exist, the anchor
/// would be replaced); svnserve answers all of those with `abort-edit` and then the failure.
pub fn prepare(
    repo: &Arc<dyn ReadRepo>,
    opts: &ReportOptions,
    mut report: Report,
) -> Result<PreparedDrive> {
    if opts.depth == Depth::Exclude {
        return Err(bad_args("Request depth 'exclude' not supported"));
    }
    let anchor = relpath("anchor", &opts.anchor)?;
    let target = relpath("update target", &opts.target)?;
    if target.contains('/') {
        return Err(bad_args(format!(
            "The update target '{target}' is not a single path component"
        )));
    }
    let switch_path = opts
        .switch_path
        .as_deref()
        .map(|p| relpath("switch path", p))
        .transpose()?;
    let youngest = repo.youngest();
    if opts.target_rev > youngest {
        return Err(no_such_revision(opts.target_rev));
    }
    let first = match report.entries.first() {
        Some(e) if report.str(e.path).is_empty() && e.link.is_none() && e.rev.is_some() => *e,
        _ => return Err(bad_report("Invalid report for top level of working copy")),
    };
    let mut top = 0u32;
    if report.entries.len() > 1 && report.path(1).is_empty() {
        if target.is_empty() {
            return Err(bad_report("Two top-level reports with no target"));
        }
        // A delete of the target keeps the depth its set-path gave.
        if report.entries[1].rev.is_none() {
            report.entries[1].depth = first.depth;
        }
        top = 1;
    }
    let start = top as usize + 1;
    let order = walk_order(&report, start);
    let s_rev = first.rev.unwrap_or_default();
    let t_root = repo.root(opts.target_rev)?;
    let t_path = switch_path.unwrap_or_else(|| join(&anchor, &target));
    let uuid = repo.uuid()?.into_bytes();
    let mut opts = opts.clone();
    opts.anchor = anchor;
    opts.target = target;
    Ok(PreparedDrive {
        repo: repo.clone(),
        opts,
        report,
        order,
        first: start,
        top,
        s_rev,
        t_root,
        t_path,
        uuid,
        locks: std::sync::OnceLock::new(),
        readable: None,
    })
}

/// Prepares and runs the drive of `report` (see [`prepare`] and [`PreparedDrive::run`]).
pub fn drive(
    repo: &Arc<dyn ReadRepo>,
    opts: &ReportOptions,
    report: Report,
    editor: &mut dyn Editor,
) -> Result<()> {
    prepare(repo, opts, report)?.run(editor)
}

impl PreparedDrive {
    /// Path-based authorization (svnserve's authz read function): unreadable target
    /// entries are sent as absent and not descended, unreadable copy sources are not named,
    /// and an unreadable anchor fails the drive before it starts.
    pub fn with_read_check(mut self, readable: ReadCheck) -> Self {
        self.readable = Some(readable);
        self
    }

    fn can_read(&self, path: &str) -> bool {
        self.readable.as_ref().is_none_or(|f| f(path))
    }

    /// Drives `editor` from `target_rev` to `close_edit`. On error the edit is left open for
    /// the caller to abort (svnserve sends `abort-edit`, also when the error came before the
    /// first editor call).
    pub fn run(self, editor: &mut dyn Editor) -> Result<()> {
        let mut d = Driver {
            p: &self,
            editor,
            pos: 0,
            roots: HashMap::new(),
            revinfo: HashMap::new(),
            first_windows: (Vec::new(), Vec::new()),
        };
        d.drive()
    }
}
