//! `svelto admin load`: a dumpfile (formats 1-3) into a repository, with `svnadmin load`'s
//! semantics (revision mapping, copy sources, property validation, mergeinfo renumbering)
//! and its progress lines. Revisions are made durable in batches; a revision's
//! "Committed" line is printed only once it is durable.

use crate::commit::validate_prop;
use crate::error::{ReposError, Result, SvnErrorKind};
use crate::hooks::Hooks;
use crate::mergeinfo::{self, Renumber};
use crate::revprops::normalize_prop;
use crate::textdelta::DeltaApplier;
use std::collections::BTreeMap;
use std::io::BufRead;
use std::time::{Duration, Instant};
use svelto_core::{join, validate_path, validate_svn_prop, PropList, Revnum};
use svelto_dump::{DumpReader, Node, NodeAction, PropEntry, PropsBlock, Record};
use svelto_fs::{WriteRepo, WriteTxn};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UuidAction {
    /// Take the dump's UUID only when loading into a repository at revision 0.
    #[default]
    Default,
    Ignore,
    Force,
}

#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    pub uuid: UuidAction,
    /// Load every path below this directory (which must exist).
    pub parent_dir: Option<String>,
    /// Only dump revisions in this inclusive range are loaded.
    pub range: Option<(Revnum, Revnum)>,
    /// Skip Subversion's checks of `svn:*` property values.
    pub bypass_prop_validation: bool,
    /// Give loaded revisions the time of their load as `svn:date` (`--ignore-dates`).
    pub ignore_dates: bool,
    /// Make the line endings of `svn:*` properties LF before they are checked.
    pub normalize_props: bool,
    /// Run the pre-commit hook on each loaded revision, as a transaction (its name shown
    /// to readers by `WriteRepo::expose_txn`), and refuse what it refuses. Hooks run
    /// only in a repository with a directory on this machine (`ReadRepo::local_dir`).
    pub use_pre_commit_hook: bool,
    /// Run the post-commit hook after each loaded revision.
    pub use_post_commit_hook: bool,
}

/// A batch of loaded revisions is made durable after this much time or this many
/// revisions, whichever comes first (svnadmin syncs every revision; batching is most of
/// why loading is faster, and a crash loses at most one unacknowledged batch).
const SYNC_INTERVAL: Duration = Duration::from_millis(500);
const SYNC_REVISIONS: u64 = 1000;

/// The load's read caches (the writer's handle), instead of the 64 MiB an admin handle
/// gets. A load reads back what it wrote a moment ago (the previous version of a file it
/// deltas against, the listings it changes), so a small cache holds its working set:
/// measured on a 12,000-revision history (2026-11-25), 4 and 16 MiB loaded it in the same
/// CPU time as 64 MiB (9.5 s and 9.0 s against 12.3 s: noise) in 78-81 MB of resident
/// memory instead of 133 MB.
pub const LOAD_CACHE_BYTES: usize = 8 << 20;

struct State<'p> {
    opts: LoadOptions,
    parent_dir: Option<String>,
    rev_map: BTreeMap<Revnum, Revnum>,
    oldest_dumpstream_rev: Option<Revnum>,
    last_rev_mapped: Option<Revnum>,
    out: String,
    progress: &'p mut dyn FnMut(&str),
    last_sync: Instant,
    unsynced: u64,
    /// The repository's hooks, when the load runs any.
    hooks: Option<Hooks>,
}

impl State<'_> {
    fn publish(&mut self, w: &mut dyn WriteRepo) -> Result<()> {
        w.sync()?;
        if !self.out.is_empty() {
            (self.progress)(&self.out);
            self.out.clear();
        }
        self.last_sync = Instant::now();
        self.unsynced = 0;
        Ok(())
    }
}

/// Loads the dumpfile read from `input` into the repository `w` writes (any backend:
/// the caller opens the writer and holds its lock). `progress` receives svnadmin-style
/// progress text, each piece after the revisions it reports on are durable. Returns the
/// youngest revision.
pub fn load(
    w: &mut dyn WriteRepo,
    input: impl BufRead,
    opts: LoadOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<Revnum> {
    w.view()?.set_cache_limit(LOAD_CACHE_BYTES);
    let parent_dir = match &opts.parent_dir {
        Some(p) => Some(validate_path(p).map_err(|e| ReposError::BadDump(e.to_string()))?),
        None => None,
    };
    let hooks = if opts.use_pre_commit_hook || opts.use_post_commit_hook {
        let view = w.view()?;
        let dir = view.local_dir().ok_or(ReposError::Unsupported(
            "hooks run only in a repository with a directory on this machine",
        ))?;
        Some(Hooks::new(dir, None)?)
    } else {
        None
    };
    let mut st = State {
        hooks,
        opts,
        parent_dir,
        rev_map: BTreeMap::new(),
        oldest_dumpstream_rev: None,
        last_rev_mapped: None,
        out: String::new(),
        progress,
        last_sync: Instant::now(),
        unsynced: 0,
    };
    let mut reader = DumpReader::new(input);
    let result = run(w, &mut reader, &mut st);
    // Whatever happened, revisions that were committed are complete: make them durable.
    let synced = st.publish(w);
    result?;
    synced?;
    Ok(w.youngest())
}

fn run<R: BufRead>(
    w: &mut dyn WriteRepo,
    reader: &mut DumpReader<R>,
    st: &mut State,
) -> Result<()> {
    let mut next = reader.next_record()?;
    while let Some(rec) = next {
        next = match rec {
            Record::Format(v) => {
                check_format(v)?;
                reader.next_record()?
            }
            Record::Uuid(uuid) => {
                let take = match st.opts.uuid {
                    UuidAction::Ignore => false,
                    UuidAction::Force => true,
                    UuidAction::Default => w.youngest() == 0,
                };
                if take {
                    if uuid::Uuid::parse_str(&uuid).is_err() {
                        return Err(ReposError::BadDump(format!(
                            "malformed UUID '{uuid}' in dumpfile"
                        )));
                    }
                    w.set_uuid(&uuid)?;
                }
                reader.next_record()?
            }
            Record::Revision { number, props, .. } => {
                let next = load_revision(w, reader, number, &props, st).map_err(|e| match e {
                    e @ (ReposError::AtPath { .. } | ReposError::AtRev { .. }) => e,
                    e @ ReposError::Dump(_) => e,
                    e => e.at_rev(number),
                })?;
                st.unsynced += 1;
                if st.unsynced >= SYNC_REVISIONS || st.last_sync.elapsed() >= SYNC_INTERVAL {
                    st.publish(w)?;
                }
                next
            }
            Record::Node(n) => return Err(node_before_revision(&n)),
        };
    }
    Ok(())
}

/// What `svnadmin load-revprops` is asked to do.
#[derive(Debug, Clone, Copy, Default)]
pub struct RevpropLoadOptions {
    /// Only dump revisions in this inclusive range are loaded.
    pub range: Option<(Revnum, Revnum)>,
    /// Skip Subversion's checks of `svn:*` property values.
    pub bypass_prop_validation: bool,
    /// Make the line endings of `svn:*` properties LF first.
    pub normalize_props: bool,
}

/// Sets the revision properties of existing revisions to those of the revision records
/// of the dumpfile read from `input` (`svn_repos_load_fs_revprops`): each revision ends
/// with exactly the dump's properties (one without `svn:date` loses its date), node
/// records and the UUID are ignored, and no hook runs. `progress` receives svnadmin's
/// lines ("Properties set on revision N.", "<<< Skipped original revision N") once the
/// change is durable. A revision the repository does not have is an error (160006).
pub fn load_revprops(
    w: &mut dyn WriteRepo,
    input: impl BufRead,
    opts: RevpropLoadOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<()> {
    let mut reader = DumpReader::new(input);
    let mut next = reader.next_record()?;
    while let Some(rec) = next {
        next = match rec {
            Record::Format(v) => {
                check_format(v)?;
                reader.next_record()?
            }
            Record::Uuid(_) => reader.next_record()?,
            Record::Revision { number, props, .. } => {
                let next = skip_nodes(&mut reader, number)?;
                if opts
                    .range
                    .is_some_and(|(lo, hi)| number < lo || number > hi)
                {
                    progress(&format!("<<< Skipped original revision {number}\n"));
                } else {
                    set_revprops(w, number, &props, opts)?;
                    progress(&format!("Properties set on revision {number}.\n"));
                }
                next
            }
            Record::Node(n) => return Err(node_before_revision(&n)),
        };
    }
    Ok(())
}

/// Gives revision `rev` the properties of `block`, validated (unless bypassed) as
/// `svn_repos_fs_change_rev_prop4` validates each changed one, and publishes them.
fn set_revprops(
    w: &mut dyn WriteRepo,
    rev: Revnum,
    block: &PropsBlock,
    opts: RevpropLoadOptions,
) -> Result<()> {
    if rev > w.youngest() {
        return Err(ReposError::NoSuchRevision(rev));
    }
    let mut props = PropList::new();
    block.apply_to(&mut props);
    if opts.normalize_props {
        for (k, v) in props.iter_mut() {
            *v = normalize_prop(k, v);
        }
    }
    let old = w.view()?.revprops(rev)?;
    if !opts.bypass_prop_validation {
        for (k, v) in &props {
            if old.get(k) != Some(v) {
                validate_prop(k, Some(v))?;
            }
        }
    }
    if old != props {
        w.set_revprops(rev, props)?;
        w.sync()?;
    }
    Ok(())
}

fn check_format(v: u32) -> Result<()> {
    if (1..=3).contains(&v) {
        Ok(())
    } else {
        Err(ReposError::BadDump(format!(
            "unsupported dumpfile version {v}"
        )))
    }
}

fn node_before_revision(n: &Node) -> ReposError {
    ReposError::BadDump(format!(
        "node record for '{}' before any revision record",
        n.path
    ))
}

/// Node records up to the next non-node record, which is returned.
fn skip_nodes<R: BufRead>(reader: &mut DumpReader<R>, rev: Revnum) -> Result<Option<Record>> {
    loop {
        match reader.next_record()? {
            Some(Record::Node(n)) if rev == 0 => {
                return Err(ReposError::BadDump(format!(
                    "Malformed dumpstream: Revision 0 must not contain node records ('{}')",
                    n.path
                )))
            }
            Some(Record::Node(_)) => continue,
            other => return Ok(other),
        }
    }
}

/// A revision record's properties as svnadmin loads them: normalized when asked, without
/// the dump's date under `--ignore-dates`, each checked unless validation is bypassed.
fn revprops_of(block: &PropsBlock, opts: &LoadOptions, rev: Revnum) -> Result<PropList> {
    let mut props = PropList::new();
    block.apply_to(&mut props);
    if opts.ignore_dates {
        props.remove(b"svn:date".as_slice());
    }
    for (k, v) in props.iter_mut() {
        *v = checked_prop(k, v, opts).map_err(|e| e.at_rev(rev))?;
    }
    Ok(props)
}

/// A property value normalized (`--normalize-props`) and checked as
/// `svn_repos_fs_change_*_prop` check it (E125005, E125017...) unless bypassed.
fn checked_prop(name: &[u8], value: &[u8], opts: &LoadOptions) -> Result<Vec<u8>> {
    let value = if opts.normalize_props {
        normalize_prop(name, value)
    } else {
        value.to_vec()
    };
    if !opts.bypass_prop_validation {
        validate_prop(name, Some(&value))?;
        validate_svn_prop(name, &value).map_err(ReposError::BadDump)?;
    }
    Ok(value)
}

fn load_revision<R: BufRead>(
    w: &mut dyn WriteRepo,
    reader: &mut DumpReader<R>,
    number: Revnum,
    props: &PropsBlock,
    st: &mut State,
) -> Result<Option<Record>> {
    let skipped = st
        .opts
        .range
        .is_some_and(|(lo, hi)| number < lo || number > hi);
    let mut revprops = revprops_of(props, &st.opts, number)?;
    if number == 0 {
        let next = skip_nodes(reader, 0)?;
        if !skipped && w.youngest() == 0 && w.view()?.revprops(0)? != revprops {
            w.set_revprops(0, revprops)?;
        }
        return Ok(next);
    }
    if skipped {
        st.out
            .push_str(&format!("<<< Skipped original revision {number}\n"));
        return skip_nodes(reader, number);
    }
    let head = w.youngest();
    let rev_offset = number as i64 - (head as i64 + 1);
    st.out.push_str(&format!(
        "<<< Started new transaction, based on original revision {number}\n"
    ));
    st.oldest_dumpstream_rev.get_or_insert(number);
    if st.hooks.is_some() {
        // The hooks see one revision at a time: everything before it is published.
        st.publish(w)?;
    }
    let env = w.view()?.env();
    let mut txn = w.begin()?;
    let next = loop {
        let rec = match reader.next_record() {
            Ok(rec) => rec,
            Err(e) => {
                // svnadmin commits a revision once the next revision record's headers
                // have been read; an error after that point leaves this one loaded.
                if e.location().revision.is_some_and(|r| r != number) {
                    txn.set_revprops(revprops);
                    let new_rev = txn.commit()?;
                    committed(st, number, new_rev);
                }
                return Err(e.into());
            }
        };
        match rec {
            Some(Record::Node(n)) => {
                let shown = n.path.clone();
                load_node(&mut *txn, reader, n, rev_offset, st).map_err(|e| match e {
                    e @ ReposError::Dump(_) => e,
                    e => e.at_path(number, &shown),
                })?;
            }
            other => break other,
        }
    };
    if st.opts.ignore_dates {
        revprops.insert(b"svn:date".to_vec(), env.svn_date().into_bytes());
    }
    txn.set_revprops(revprops);
    let new_rev = txn.commit()?;
    if let Some(hooks) = &st.hooks {
        run_commit_hooks(w, hooks, &st.opts, head, new_rev)?;
    }
    committed(st, number, new_rev);
    if st.hooks.is_some() {
        st.publish(w)?;
    }
    Ok(next)
}

/// Runs the hooks on revision `new_rev`, just committed and not yet published, as
/// svnadmin load does with `--use-pre-commit-hook` / `--use-post-commit-hook`: the
/// pre-commit hook examines it as a transaction (`HEAD-load` in `db/txns`) and may refuse
/// it, which drops it; it is then published and the post-commit hook runs (its failure
/// stops the load, as svnadmin's). The caller published what came before, so only this
/// revision is unpublished.
fn run_commit_hooks(
    w: &mut dyn WriteRepo,
    hooks: &Hooks,
    opts: &LoadOptions,
    head: Revnum,
    new_rev: Revnum,
) -> Result<()> {
    let name = format!("{head}-load");
    if opts.use_pre_commit_hook {
        w.expose_txn(&name)?;
        let verdict = hooks.pre_commit(&name, &[]);
        w.forget_txn(&name);
        if let Err(e) = verdict {
            w.discard_unpublished()?;
            return Err(e);
        }
    }
    w.sync()?;
    if opts.use_post_commit_hook {
        if let Some(failure) = hooks.post_commit(new_rev, &name) {
            return Err(ReposError::Wrapped {
                kind: SvnErrorKind::PostCommitHookFailed,
                message: "Commit succeeded, but post-commit hook failed".into(),
                source: Box::new(ReposError::svn(SvnErrorKind::HookFailure, failure)),
            });
        }
    }
    Ok(())
}

/// Records a committed revision in the revision map and the progress output.
fn committed(st: &mut State, number: Revnum, new_rev: Revnum) {
    st.rev_map.insert(number, new_rev);
    if let Some(last) = st.last_rev_mapped {
        if number != last + 1 {
            for i in last + 1..number {
                st.rev_map.insert(i, last);
            }
        }
    }
    st.last_rev_mapped = Some(number);
    if new_rev == number {
        st.out
            .push_str(&format!("\n------- Committed revision {new_rev} >>>\n\n"));
    } else {
        st.out.push_str(&format!(
            "\n------- Committed new rev {new_rev} (loaded from original rev {number}) >>>\n\n"
        ));
    }
}

fn fs_path(path: &str, parent: Option<&str>) -> Result<String> {
    let p = validate_path(path).map_err(|e| ReposError::BadDump(e.to_string()))?;
    Ok(match parent {
        Some(parent) => join(parent, &p),
        None => p,
    })
}

fn load_node<R: BufRead>(
    txn: &mut dyn WriteTxn,
    reader: &mut DumpReader<R>,
    n: Node,
    rev_offset: i64,
    st: &mut State,
) -> Result<()> {
    let path = fs_path(&n.path, st.parent_dir.as_deref())?;
    if path.is_empty() && n.action != NodeAction::Change {
        return Err(ReposError::BadDump(
            "the root directory cannot be added, replaced or deleted".into(),
        ));
    }
    // svnadmin 1.14 says "editing" whatever the action (its notification leaves the
    // action unset); scripts that parse the output expect exactly that.
    st.out
        .push_str(&format!("     * editing path : {path} ..."));
    match n.action {
        NodeAction::Change => {}
        NodeAction::Delete => txn.delete(&path)?,
        NodeAction::Add => add_node(txn, &n, &path, rev_offset, st)?,
        NodeAction::Replace => {
            txn.delete(&path)?;
            add_node(txn, &n, &path, rev_offset, st)?;
        }
    }
    if let Some(block) = &n.props {
        if !n.props_delta {
            let existing = txn.info(&path)?.map(|i| i.props).unwrap_or_default();
            for name in existing.keys() {
                txn.change_prop(&path, name, None)?;
            }
        }
        for entry in &block.0 {
            match entry {
                PropEntry::Set(name, value) => {
                    let value = adjust_prop(name, value, st, rev_offset)?;
                    txn.change_prop(&path, name, Some(&value))?;
                }
                PropEntry::Delete(name) => txn.change_prop(&path, name, None)?,
            }
        }
    }
    if n.text_len.is_some() {
        let stored = if n.text_delta {
            let base = txn.info(&path)?.ok_or_else(|| {
                ReposError::BadDump(format!("no file '{path}' to apply a text delta to"))
            })?;
            if let Some(expected) = n.text_delta_base_md5 {
                if expected != base.text.md5 {
                    return Err(ReposError::BadDump(format!(
                        "Base checksum mismatch on '{path}': expected {expected}, actual {}",
                        base.text.md5
                    )));
                }
            }
            let base_reader = txn.view()?.text_reader(&base.text)?;
            let mut applier = DeltaApplier::new(reader.text(), base_reader);
            txn.set_text(&path, &mut applier)?
        } else {
            txn.set_text(&path, &mut reader.text())?
        };
        if let Some(expected) = n.text_md5 {
            if expected != stored.md5 {
                return Err(ReposError::BadDump(format!(
                    "Checksum mismatch for '{path}': expected {expected}, actual {}",
                    stored.md5
                )));
            }
        }
        if let Some(expected) = n.text_sha1 {
            if expected != stored.sha1 {
                return Err(ReposError::BadDump(format!(
                    "SHA1 checksum mismatch for '{path}': expected {expected}, actual {}",
                    stored.sha1
                )));
            }
        }
    }
    st.out.push_str(" done.\n");
    Ok(())
}

fn add_node(
    txn: &mut dyn WriteTxn,
    n: &Node,
    path: &str,
    rev_offset: i64,
    st: &mut State,
) -> Result<()> {
    match &n.copyfrom {
        None => {
            let kind = n.kind.ok_or_else(|| {
                ReposError::BadDump(format!("Node-kind missing for added '{path}'"))
            })?;
            txn.make_node(path, kind)?;
        }
        Some((from_rev, from_path)) => {
            let src_rev = match st.rev_map.get(from_rev) {
                Some(&r) => r,
                None => {
                    let r = *from_rev as i64 - rev_offset;
                    if r < 0 {
                        return Err(ReposError::BadDump(format!(
                            "Relative source revision {r} is not available in current repository"
                        )));
                    }
                    r as Revnum
                }
            };
            let src_path = fs_path(from_path, st.parent_dir.as_deref())?;
            if n.copy_source_md5.is_some() || n.copy_source_sha1.is_some() {
                let repo = txn.view()?;
                let (_, node) = repo.node_at(src_rev, &src_path)?;
                let actual = node.file_text();
                let mismatch = |expected: String, actual: String| {
                    ReposError::BadDump(format!(
                        "Copy source checksum mismatch on copy from '{src_path}'@{src_rev} to '{path}': expected {expected}, actual {actual}"
                    ))
                };
                if let Some(expected) = n.copy_source_md5.filter(|e| *e != actual.md5) {
                    return Err(mismatch(expected.to_hex(), actual.md5.to_hex()));
                }
                if let Some(expected) = n.copy_source_sha1.filter(|e| *e != actual.sha1) {
                    return Err(mismatch(expected.to_hex(), actual.sha1.to_hex()));
                }
            }
            txn.copy(src_rev, &src_path, path)?;
            st.out.push_str("COPIED...");
        }
    }
    Ok(())
}

fn adjust_prop(name: &[u8], value: &[u8], st: &State, rev_offset: i64) -> Result<Vec<u8>> {
    let validate = !st.opts.bypass_prop_validation;
    if name == b"svn:mergeinfo" {
        let text = std::str::from_utf8(value)
            .map_err(|_| ReposError::BadDump("Invalid svn:mergeinfo value: not UTF-8".into()))?;
        let ren = Renumber {
            rev_map: &st.rev_map,
            oldest_dumpstream_rev: st.oldest_dumpstream_rev,
            rev_offset,
        };
        match mergeinfo::adjust(text, &ren, st.parent_dir.as_deref()) {
            Ok(v) => return Ok(v.into_bytes()),
            Err(e) if validate => {
                return Err(ReposError::BadDump(format!(
                    "Invalid svn:mergeinfo value: {e}"
                )))
            }
            Err(_) => {}
        }
    }
    checked_prop(name, value, &st.opts)
}
