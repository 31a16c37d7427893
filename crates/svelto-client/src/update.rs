//! `update`: brings a working copy with a single base revision and nothing scheduled to
//! the target revision (or switches it to another URL of its repository, as svn switches
//! an external whose URL changed). The working copy is checked first (anything `svn
//! update` would have to merge, schedule or resolve is refused, naming why); the server's
//! drive is then received whole (new texts go to the pristine store, which a refusal
//! leaves harmless: unreferenced pristines are what `svn cleanup` removes); only then are
//! the working files changed and the wc.db rows written, in one transaction. A locally
//! modified file the update does not touch keeps its changes, as with `svn update`; one it
//! changes is refused before anything changes. Tree conflicts are recorded as svn records
//! them: an unversioned node where the update adds one ("local unversioned, incoming add
//! upon update") and a node with local changes the update deletes ("local edit, incoming
//! delete upon update": kept as a copy of its last base).

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use md5::Digest;

use crate::checkout::{
    bad_token, create_new, create_read_only, prop_value, relpath_depth, translation_of, Entry,
    Notify, Summary,
};
use crate::edit::{change_prop, Edit};
use crate::error::{file_err, Error, Result};
use crate::ra::{self, Ra, ReportPath};
use crate::ra_svn::{self, protocol, Credentials};
use crate::skel::{self, Props};
use crate::text::{Buffers, Incoming};
use crate::translate::{self, Translation};
use crate::url;
use crate::wc::{BaseNode, OwnedNode, WcDb};
use crate::writer::{self, Writers};

/// The URL of the working copy whose root is `root`, or None when `root` is not one.
pub fn wc_url(root: &Path) -> Result<Option<String>> {
    if !root.join(".svn/wc.db").is_file() {
        return Ok(None);
    }
    let db = WcDb::open(root)?;
    let (repos_root, _) = db.repository()?;
    let relpath = db.root_repos_path()?;
    Ok(Some(if relpath.is_empty() {
        repos_root
    } else {
        format!("{repos_root}/{}", url::encode(&relpath))
    }))
}

/// What to update.
#[derive(Debug, Clone)]
pub struct UpdateOptions {
    /// The working copy's root.
    pub path: PathBuf,
    /// None: HEAD (or `date`'s).
    pub revision: Option<u64>,
    /// `-r {DATE}`: the youngest revision at this `svn:date`.
    pub date: Option<String>,
    pub credentials: Credentials,
    pub zone: svelto_core::localtime::Zone,
    /// `--ignore-externals`: leave `svn:externals` as they are.
    pub ignore_externals: bool,
    /// Switch the working copy to this URL of the same repository (ancestry ignored), as
    /// svn switches an external whose URL changed.
    pub switch_url: Option<String>,
    /// Threads that write the working files (0: the update's thread writes them).
    pub writers: usize,
    /// `[miscellany] use-commit-times`: each file written gets its last commit's date.
    pub use_commit_times: bool,
}

fn refuse(root: &Path, why: impl std::fmt::Display) -> Error {
    Error::Usage(format!(
        "svelto update does not update '{}': {why}; use 'svn update'",
        root.display()
    ))
}

/// The entry facts of a node as recorded.
fn entry_of(n: &OwnedNode) -> Entry {
    Entry {
        committed_rev: n.changed_revision,
        committed_date: n.changed_date.map(|us| {
            let secs = us.div_euclid(1_000_000);
            let micros = us.rem_euclid(1_000_000);
            svelto_core::format_svn_date(secs.max(0) as u64, micros as u32)
        }),
        last_author: n.changed_author.clone(),
    }
}

fn props_of(n: &OwnedNode, root: &Path) -> Result<Props> {
    match &n.properties {
        None => Ok(Vec::new()),
        Some(s) => skel::parse_proplist(s).ok_or_else(|| {
            refuse(
                root,
                format!(
                    "the properties of '{}' in wc.db are not a skel",
                    n.local_relpath
                ),
            )
        }),
    }
}

/// Updates the working copy at `opts.path`.
pub fn update(opts: &UpdateOptions, notify: &mut dyn FnMut(Notify)) -> Result<Summary> {
    let root = opts.path.clone();
    let mut db = WcDb::open(&root)?;
    for (sql, why) in [
        (
            "SELECT COUNT(*) FROM WORK_QUEUE",
            "it has unfinished work ('svn cleanup' finishes it)",
        ),
        (
            "SELECT COUNT(*) FROM WC_LOCK",
            "it is locked ('svn cleanup' removes stale locks)",
        ),
        (
            "SELECT COUNT(*) FROM NODES WHERE op_depth > 0",
            "it has scheduled additions, deletions, copies or moves",
        ),
        (
            "SELECT COUNT(*) FROM ACTUAL_NODE",
            "it has local property changes, conflicts or changelists",
        ),
    ] {
        if db.count(sql)? > 0 {
            return Err(refuse(&root, why));
        }
    }
    // wc.db's BASE rows, read once (apply writes the new ones from them). File externals
    // are updated with the other externals, after the tree.
    let mut all = db.base_nodes()?;
    let tree = |n: &&OwnedNode| !n.file_external;
    let Some(root_node) = all.iter().filter(tree).find(|n| n.local_relpath.is_empty()) else {
        return Err(refuse(&root, "wc.db has no root node"));
    };
    let base_rev = root_node.revision.unwrap_or(0);
    let root_repos = root_node.repos_path.clone().unwrap_or_default();
    let root_depth = root_node.depth.clone().unwrap_or_else(|| "infinity".into());
    let expected_path = |relpath: &str| match (root_repos.is_empty(), relpath.is_empty()) {
        (true, _) => relpath.to_string(),
        (false, true) => root_repos.clone(),
        (false, false) => format!("{root_repos}/{relpath}"),
    };
    for n in all.iter().filter(tree) {
        let rel = n.local_relpath.as_str();
        if n.other_repos || n.file_external {
            return Err(refuse(&root, format!("'{rel}' is an external")));
        }
        if n.moved {
            return Err(refuse(&root, format!("'{rel}' was moved")));
        }
        match n.presence.as_str() {
            "normal" => {
                if n.revision != Some(base_rev) {
                    return Err(refuse(
                        &root,
                        format!(
                            "it has mixed revisions ('{rel}' is at r{}, the root at r{base_rev})",
                            n.revision.unwrap_or(0)
                        ),
                    ));
                }
            }
            // A removed file external's marker: reported missing, gone after the update
            // unless the server adds a node there.
            "server-excluded" | "not-present" => {}
            other => {
                return Err(refuse(&root, format!("'{rel}' is {other}")));
            }
        }
        if n.repos_path.as_deref() != Some(expected_path(rel).as_str()) {
            return Err(refuse(&root, format!("'{rel}' is switched")));
        }
    }
    let (repos_root, uuid) = db.repository()?;
    let session_url = if root_repos.is_empty() {
        repos_root.clone()
    } else {
        format!("{repos_root}/{}", url::encode(&root_repos))
    };
    let mut session = ra::open(&session_url, &opts.credentials)?;
    if session.uuid() != uuid {
        return Err(refuse(
            &root,
            format!(
                "the repository at '{session_url}' has UUID {}, the working copy's is {uuid}",
                session.uuid()
            ),
        ));
    }
    let rev = match (opts.revision, &opts.date) {
        (Some(r), _) => r,
        (None, Some(date)) => session.dated_rev(date)?,
        (None, None) => session.latest_rev()?,
    };
    // What is there: one read of each versioned directory, not a stat of each file (a
    // missing directory is refused here).
    let present = on_disk(&root, all.iter().filter(tree))?;
    // Missing files are restored from their pristines first, their size and time
    // recorded, as svn's update restores them ("Restored").
    for n in all.iter_mut().filter(|n| !n.file_external) {
        if n.presence != "normal" || n.kind != "file" || present.contains(n.local_relpath.as_str())
        {
            continue;
        }
        let path = root.join(&n.local_relpath);
        let Some(sha1) = n.checksum.as_deref().and_then(|c| c.strip_prefix("$sha1$")) else {
            continue;
        };
        let pristine_path = db.pristine_path(sha1)?;
        let pristine = std::fs::read(&pristine_path).map_err(file_err(&pristine_path))?;
        let props = props_of(n, &root)?;
        let t = translation_of(
            &props,
            &entry_of(n),
            &repos_root,
            n.repos_path.as_deref().unwrap_or(""),
            None,
            &opts.zone,
        );
        let commit_time = n.changed_date.filter(|_| opts.use_commit_times);
        let mut reaper = Reaper::inline();
        if let Some((size, mtime)) = write_working(
            &root,
            &path,
            &pristine,
            &t,
            &props,
            commit_time,
            &mut reaper,
        )? {
            db.set_recorded_info(&n.local_relpath, size, mtime)?;
            n.translated_size = Some(size);
            n.last_mod_time = mtime;
        }
        notify(Notify::Restored {
            relpath: &n.local_relpath,
        });
    }
    let all = all;
    let nodes: Vec<&OwnedNode> = all.iter().filter(tree).collect();
    let by_path: HashMap<&str, &OwnedNode> = nodes
        .iter()
        .map(|n| (n.local_relpath.as_str(), *n))
        .collect();

    let mut report = vec![ReportPath {
        path: String::new(),
        rev: base_rev,
        start_empty: false,
        depth: root_depth.clone(),
        missing: false,
    }];
    for n in &nodes {
        if n.presence == "not-present" {
            report.push(ReportPath {
                path: n.local_relpath.clone(),
                rev: base_rev,
                start_empty: false,
                depth: "infinity".to_string(),
                missing: true,
            });
        }
        if n.kind == "dir" && !n.local_relpath.is_empty() && n.presence == "normal" {
            let depth = n.depth.as_deref().unwrap_or("infinity");
            if depth != "infinity" {
                report.push(ReportPath {
                    path: n.local_relpath.clone(),
                    rev: base_rev,
                    start_empty: false,
                    depth: depth.to_string(),
                    missing: false,
                });
            }
        }
    }
    // A switch: the drive takes the tree to the new URL; every BASE row's repository path
    // follows (in apply), the inherited properties are the new URL's.
    let (new_root_repos, switch_to) = match &opts.switch_url {
        Some(u) => {
            let rel = url::relpath_below(&repos_root, u).ok_or_else(|| {
                refuse(
                    &root,
                    format!("'{u}' is not in the repository at '{repos_root}'"),
                )
            })?;
            session.switch(rev, u, "infinity", &report)?;
            (rel, Some(u.clone()))
        }
        None => {
            session.update(rev, "", "unknown", &report)?;
            (root_repos.clone(), None)
        }
    };

    let mut r = Drive {
        root: root.clone(),
        db: &mut db,
        by_path: &by_path,
        target_rev: rev,
        dirs: HashMap::new(),
        files: HashMap::new(),
        plan: Plan::default(),
        tmp_counter: 0,
        bufs: Buffers::default(),
        pristines: HashSet::new(),
        held_room: HELD_TEXTS,
    };
    r.db.begin()?;
    let drove = r.drive(session.as_mut());
    // New pristines are harmless even when the update stops here (refcount 0).
    r.db.commit()?;
    drove?;
    let plan = std::mem::take(&mut r.plan);
    let target_rev = r.target_rev;

    // Local changes, of what the update touches alone (a file it changes, a node it
    // deletes or one below it): a modified file it leaves alone keeps its changes.
    let changed: HashSet<&str> = plan
        .files
        .iter()
        .filter(|f| !f.added && (f.text.is_some() || f.props_changed))
        .map(|f| f.relpath.as_str())
        .collect();
    let deleted: HashSet<&str> = plan.deletes.iter().map(String::as_str).collect();
    let in_deleted = |rel: &str| {
        deleted.contains(rel)
            || rel
                .match_indices('/')
                .any(|(i, _)| deleted.contains(&rel[..i]))
    };
    let touched = nodes
        .iter()
        .copied()
        .filter(|n| changed.contains(n.local_relpath.as_str()) || in_deleted(&n.local_relpath));
    let modified = local_changes(&root, &db, touched, &repos_root, &opts.zone)?;

    // Refuse what would need a merge, before anything changes.
    for f in &plan.files {
        if !f.added && modified.contains(&f.relpath) && (f.text.is_some() || f.props_changed) {
            return Err(refuse(
                &root,
                format!(
                    "'{}' has local changes and the update changes it too (svelto does not merge yet)",
                    f.relpath
                ),
            ));
        }
    }
    // A node the update deletes that has local changes (or has some below it) stays, as a
    // copy of what it was, in a tree conflict ("local edit, incoming delete upon
    // update"), as svn keeps it; one the update then adds again is refused.
    let mut edited_deleted = Vec::new();
    for d in &plan.deletes {
        let prefix = format!("{d}/");
        if let Some(m) = modified.iter().find(|m| *m == d || m.starts_with(&prefix)) {
            let readded = plan.dirs.iter().any(|x| x.added && x.relpath == *d)
                || plan.files.iter().any(|x| x.added && x.relpath == *d);
            if readded {
                return Err(refuse(
                    &root,
                    format!("'{m}' has local changes and the update replaces '{d}'"),
                ));
            }
            edited_deleted.push(d.clone());
        }
    }
    // An unversioned node where the update adds one: a tree conflict ("local unversioned,
    // incoming add upon update"), as svn records it; what the server adds below a
    // conflicted directory is recorded but not written.
    let mut added: Vec<(&str, &'static str)> = plan
        .dirs
        .iter()
        .filter(|d| d.added)
        .map(|d| (d.relpath.as_str(), "dir"))
        .chain(
            plan.files
                .iter()
                .filter(|f| f.added)
                .map(|f| (f.relpath.as_str(), "file")),
        )
        .collect();
    added.sort();
    let mut conflicts = Conflicts {
        added: HashMap::new(),
        edited_deleted,
    };
    let mut conflicted_dirs: Vec<&str> = Vec::new();
    for (rel, kind) in added {
        let below = conflicted_dirs.iter().rev().find(|d| {
            rel.strip_prefix(**d)
                .is_some_and(|rest| rest.starts_with('/'))
        });
        if let Some(d) = below {
            conflicts.added.insert(
                rel.to_string(),
                Conflict {
                    kind,
                    op_depth: relpath_depth(d),
                    own: false,
                },
            );
            continue;
        }
        let versioned = by_path.contains_key(rel) && in_deleted(rel);
        if !versioned && root.join(rel).symlink_metadata().is_ok() {
            conflicts.added.insert(
                rel.to_string(),
                Conflict {
                    kind,
                    op_depth: relpath_depth(rel),
                    own: true,
                },
            );
            if kind == "dir" {
                conflicted_dirs.push(rel);
            }
        }
    }

    let mut switched_session = match switch_to {
        Some(u) => Some(ra::open(&u, &opts.credentials)?),
        None => None,
    };
    let mut summary = apply(
        &root,
        &mut db,
        &all,
        plan,
        &conflicts,
        target_rev,
        &repos_root,
        &new_root_repos,
        match switched_session.as_mut() {
            Some(s) => s.as_mut(),
            None => session.as_mut(),
        },
        opts,
        notify,
    )?;
    drop(session);
    // Relative externals resolve against where the working copy now is.
    let wc_url_now = opts.switch_url.clone().unwrap_or(session_url);
    // Externals are updated only at depth infinity, as the stock client updates them.
    if root_depth == "infinity" {
        summary.externals.clear();
        if !opts.ignore_externals {
            summary.externals_failed =
                crate::externals::update_all(&root, db, opts, &repos_root, &wc_url_now, notify)?;
        }
    }
    Ok(summary)
}

/// The relpaths of what is in each versioned directory of `nodes` (read once each); a
/// versioned directory that is not one is refused.
fn on_disk<'a>(
    root: &Path,
    nodes: impl Iterator<Item = &'a OwnedNode> + Clone,
) -> Result<HashSet<String>> {
    let mut present = HashSet::new();
    let mut dirs = HashSet::new();
    for n in nodes.clone() {
        if n.kind != "dir" || n.presence != "normal" {
            continue;
        }
        let path = root.join(&n.local_relpath);
        let entries = match std::fs::read_dir(&path) {
            Ok(e) => e,
            // (refused below, as its parent does not list it as a directory)
            Err(e)
                if !n.local_relpath.is_empty()
                    && matches!(
                        e.kind(),
                        std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                    ) =>
            {
                continue
            }
            Err(_) if n.local_relpath.is_empty() => {
                return Err(refuse(root, "the directory '' is missing"));
            }
            Err(e) => return Err(file_err(&path)(e)),
        };
        for entry in entries {
            let entry = entry.map_err(file_err(&path))?;
            let Some(name) = entry.file_name().to_str().map(str::to_string) else {
                continue;
            };
            let rel = if n.local_relpath.is_empty() {
                name
            } else {
                format!("{}/{name}", n.local_relpath)
            };
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                dirs.insert(rel.clone());
            }
            present.insert(rel);
        }
    }
    for n in nodes {
        if n.kind == "dir"
            && n.presence == "normal"
            && !n.local_relpath.is_empty()
            && !dirs.contains(&n.local_relpath)
        {
            return Err(refuse(
                root,
                format!("the directory '{}' is missing", n.local_relpath),
            ));
        }
    }
    Ok(present)
}

/// The files (relpaths) among `nodes` whose working form differs from their pristine's, or
/// are missing.
pub(crate) fn local_changes<'a>(
    root: &Path,
    db: &WcDb,
    nodes: impl IntoIterator<Item = &'a OwnedNode>,
    repos_root: &str,
    zone: &svelto_core::localtime::Zone,
) -> Result<HashSet<String>> {
    let mut modified = HashSet::new();
    for n in nodes {
        if n.presence != "normal" {
            continue;
        }
        let path = root.join(&n.local_relpath);
        let meta = path.symlink_metadata();
        if n.kind == "dir" {
            if !meta.is_ok_and(|m| m.is_dir()) {
                return Err(refuse(
                    root,
                    format!("the directory '{}' is missing", n.local_relpath),
                ));
            }
            continue;
        }
        let Ok(meta) = meta else {
            return Err(refuse(
                root,
                format!(
                    "'{}' is missing ('svn update' restores it)",
                    n.local_relpath
                ),
            ));
        };
        let props = props_of(n, root)?;
        let special = prop_value(&props, b"svn:special").is_some();
        if !special && meta.is_file() {
            let mtime = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map(|d| d.as_micros() as i64);
            if n.translated_size == Some(meta.len())
                && n.last_mod_time.is_some()
                && mtime == n.last_mod_time
            {
                continue;
            }
        }
        // Compare the working file with the pristine's working form.
        let Some(sha1) = n.checksum.as_deref().and_then(|c| c.strip_prefix("$sha1$")) else {
            modified.insert(n.local_relpath.clone());
            continue;
        };
        let pristine_path = db
            .pristine_dir
            .join(&sha1[..2.min(sha1.len())])
            .join(format!("{sha1}.svn-base"));
        let pristine = std::fs::read(&pristine_path).map_err(file_err(&pristine_path))?;
        let same = if special {
            match (
                meta.file_type().is_symlink(),
                translate::link_target(&pristine),
            ) {
                (true, Some(target)) => {
                    use std::os::unix::ffi::OsStrExt;
                    std::fs::read_link(&path).is_ok_and(|l| l.as_os_str().as_bytes() == target)
                }
                _ => false,
            }
        } else if meta.is_file() {
            let t = translation_of(
                &props,
                &entry_of(n),
                repos_root,
                n.repos_path.as_deref().unwrap_or(""),
                None,
                zone,
            );
            let working = std::fs::read(&path).map_err(file_err(&path))?;
            working == translate::translate(&pristine, &t)
        } else {
            false
        };
        if !same {
            modified.insert(n.local_relpath.clone());
        }
    }
    Ok(modified)
}

/// A node the update adds where an unversioned one is in the way (`own`), or below such a
/// directory: recorded in BASE, shadowed by a `base-deleted` row at `op_depth`, not written.
struct Conflict {
    kind: &'static str,
    op_depth: i64,
    own: bool,
}

/// The tree conflicts an update raises.
struct Conflicts {
    /// Additions where an unversioned node is in the way, and what is below them.
    added: HashMap<String, Conflict>,
    /// Deletions of nodes with local changes: kept as copies.
    edited_deleted: Vec<String>,
}

#[derive(Default)]
struct Plan {
    /// Relpaths deleted (each with what is below it).
    deletes: Vec<String>,
    /// Directories added or opened, as they closed.
    dirs: Vec<DirEdit>,
    /// Files added or opened, as they closed.
    files: Vec<FileEdit>,
    /// Paths the server leaves out: (relpath, kind).
    absent: Vec<(String, &'static str)>,
}

struct DirEdit {
    relpath: String,
    added: bool,
    props: Props,
    props_changed: bool,
    entry: Entry,
}

struct NewText {
    incoming: Incoming,
    /// The base pristine, read window by window.
    source: Option<File>,
    tmp: (File, PathBuf),
    /// The text, kept for the working file while it fits (see [`HELD_TEXT`]).
    held: Option<Vec<u8>>,
}

/// The largest new text kept in memory from the drive to the writing of its working file
/// (which then does not read its pristine back), and the most kept in all.
const HELD_TEXT: usize = 1 << 20;
const HELD_TEXTS: usize = 128 << 20;

struct FileEdit {
    relpath: String,
    added: bool,
    props: Props,
    props_changed: bool,
    entry: Entry,
    /// `svn:wc:*` (http://'s version URL): the node's new dav_cache.
    wc_props: Props,
    /// The base text's SHA-1 (hex), for an opened file.
    base_sha1: Option<String>,
    receiving: Option<NewText>,
    /// The new text: (sha1 hex, md5 hex, size).
    text: Option<(String, String, u64)>,
    /// The new text itself, when it was kept (its pristine is not read back).
    held: Option<Vec<u8>>,
}

struct Drive<'a> {
    root: PathBuf,
    db: &'a mut WcDb,
    by_path: &'a HashMap<&'a str, &'a OwnedNode>,
    target_rev: u64,
    dirs: HashMap<Vec<u8>, DirEdit>,
    files: HashMap<Vec<u8>, FileEdit>,
    plan: Plan,
    tmp_counter: u64,
    bufs: Buffers,
    pristines: HashSet<String>,
    /// What more the new texts kept in memory may take (bytes).
    held_room: usize,
}

impl Drive<'_> {
    fn node(&self, relpath: &str, cmd: &str) -> Result<&OwnedNode> {
        self.by_path.get(relpath).copied().ok_or_else(|| {
            protocol(
                "in the update drive",
                format!("{cmd} '{relpath}', which the working copy does not have"),
            )
        })
    }

    fn drive(&mut self, session: &mut dyn Ra) -> Result<()> {
        loop {
            let item = session.next_edit()?;
            match Edit::parse(&item)? {
                Edit::TargetRev(r) => {
                    if let Some(r) = r {
                        self.target_rev = r;
                    }
                }
                Edit::OpenRoot { token } => self.open_dir(String::new(), token, false)?,
                Edit::Dir { path, token, added } => self.open_dir(path, token, added)?,
                Edit::Prop {
                    dir: true,
                    token,
                    name,
                    value,
                } => {
                    let dir = self
                        .dirs
                        .get_mut(token)
                        .ok_or_else(|| bad_token("change-dir-prop"))?;
                    if change_prop(&mut dir.props, &mut dir.entry, None, name, value) {
                        dir.props_changed = true;
                    }
                }
                Edit::CloseDir { token } => {
                    let dir = self
                        .dirs
                        .remove(token)
                        .ok_or_else(|| bad_token("close-dir"))?;
                    self.plan.dirs.push(dir);
                }
                Edit::DeleteEntry { path } => {
                    self.node(&path, "delete-entry")?;
                    self.plan.deletes.push(path);
                }
                Edit::Absent { path, kind } => self.plan.absent.push((path, kind)),
                Edit::File {
                    path: relpath,
                    token,
                    added,
                } => {
                    let (props, entry, base_sha1) = if added {
                        (Vec::new(), Entry::default(), None)
                    } else {
                        let node = self.node(&relpath, "open-file")?;
                        let sha1 = node
                            .checksum
                            .as_deref()
                            .and_then(|c| c.strip_prefix("$sha1$"))
                            .map(str::to_string);
                        (props_of(node, &self.root)?, entry_of(node), sha1)
                    };
                    self.files.insert(
                        token.to_vec(),
                        FileEdit {
                            relpath,
                            added,
                            props,
                            props_changed: false,
                            entry,
                            wc_props: Vec::new(),
                            base_sha1,
                            receiving: None,
                            text: None,
                            held: None,
                        },
                    );
                }
                Edit::Prop {
                    dir: false,
                    token,
                    name,
                    value,
                } => {
                    let file = self
                        .files
                        .get_mut(token)
                        .ok_or_else(|| bad_token("change-file-prop"))?;
                    let wc = Some(&mut file.wc_props);
                    if change_prop(&mut file.props, &mut file.entry, wc, name, value) {
                        file.props_changed = true;
                    }
                }
                Edit::ApplyTextdelta { token } => self.start_text(token)?,
                Edit::TextdeltaChunk { token, chunk } => {
                    let mut file = self
                        .files
                        .remove(token)
                        .ok_or_else(|| bad_token("textdelta-chunk"))?;
                    let result = self.text_chunk(&mut file, chunk);
                    self.files.insert(token.to_vec(), file);
                    result?;
                }
                Edit::TextdeltaEnd { token } => {
                    let mut file = self
                        .files
                        .remove(token)
                        .ok_or_else(|| bad_token("textdelta-end"))?;
                    let result = self.end_text(&mut file);
                    self.files.insert(token.to_vec(), file);
                    result?;
                }
                Edit::CloseFile { token, md5 } => {
                    let mut file = self
                        .files
                        .remove(token)
                        .ok_or_else(|| bad_token("close-file"))?;
                    if file.receiving.is_some() {
                        return Err(protocol(
                            "in the update drive",
                            format!("close-file for '{}' inside its text", file.relpath),
                        ));
                    }
                    if file.added && file.text.is_none() {
                        // An empty file: no text was sent.
                        let sha1 = hex::encode(sha1::Sha1::digest(b""));
                        let md5 = hex::encode(md5::Md5::digest(b""));
                        self.store_pristine(None, &sha1, &md5, 0)?;
                        file.text = Some((sha1, md5, 0));
                    }
                    if let (Some(expected), Some((_, actual, _))) = (md5.as_deref(), &file.text) {
                        if !expected.is_empty() && expected != actual {
                            return Err(Error::Checksum {
                                path: file.relpath.clone(),
                                expected: expected.to_string(),
                                actual: actual.clone(),
                            });
                        }
                    }
                    self.plan.files.push(file);
                }
                Edit::Close => return session.close_edit(),
                Edit::Abort => return Err(session.abort_edit()),
                Edit::Failure(p) => return Err(ra_svn::failure(p)),
            }
        }
    }

    /// open-root, open-dir and add-dir: an opened directory starts from what wc.db has.
    fn open_dir(&mut self, relpath: String, token: &[u8], added: bool) -> Result<()> {
        let (props, entry) = if added {
            (Vec::new(), Entry::default())
        } else {
            let node = self.node(&relpath, "open-dir")?;
            (props_of(node, &self.root)?, entry_of(node))
        };
        self.dirs.insert(
            token.to_vec(),
            DirEdit {
                relpath,
                added,
                props,
                props_changed: false,
                entry,
            },
        );
        Ok(())
    }

    fn start_text(&mut self, token: &[u8]) -> Result<()> {
        let file = self
            .files
            .get(token)
            .ok_or_else(|| bad_token("apply-textdelta"))?;
        let source = match &file.base_sha1 {
            Some(sha1) if !file.added => {
                let p = self.db.pristine_path(sha1)?;
                Some(File::open(&p).map_err(file_err(&p))?)
            }
            _ => None,
        };
        self.tmp_counter += 1;
        let tmp = self
            .db
            .tmp_dir
            .join(format!("svelto-update-{}.tmp", self.tmp_counter));
        let f = create_read_only(&tmp)?;
        let file = self
            .files
            .get_mut(token)
            .ok_or_else(|| bad_token("apply-textdelta"))?;
        file.receiving = Some(NewText {
            incoming: Incoming::new(true),
            source,
            tmp: (f, tmp),
            held: (self.held_room > 0).then(Vec::new),
        });
        Ok(())
    }

    fn text_chunk(&mut self, file: &mut FileEdit, chunk: &[u8]) -> Result<()> {
        let Some(text) = file.receiving.as_mut() else {
            return Err(protocol(
                "in the update drive",
                format!("text for '{}' before apply-textdelta", file.relpath),
            ));
        };
        let (tmp, tmp_path) = (&mut text.tmp.0, text.tmp.1.as_path());
        let held = &mut text.held;
        let room = HELD_TEXT.min(self.held_room);
        text.incoming.push(
            chunk,
            &file.relpath,
            text.source.as_ref(),
            &mut self.bufs,
            &mut |bytes| {
                match held {
                    Some(h) if h.len() + bytes.len() <= room => h.extend_from_slice(bytes),
                    _ => *held = None,
                }
                tmp.write_all(bytes).map_err(file_err(tmp_path))
            },
        )
    }

    fn end_text(&mut self, file: &mut FileEdit) -> Result<()> {
        let Some(mut text) = file.receiving.take() else {
            return Err(protocol(
                "in the update drive",
                format!(
                    "textdelta-end for '{}' before apply-textdelta",
                    file.relpath
                ),
            ));
        };
        let (sha1, md5, size) = text.incoming.finish(&file.relpath)?;
        drop(text.tmp.0);
        if let Some(h) = &text.held {
            self.held_room = self.held_room.saturating_sub(h.len());
        }
        file.held = text.held;
        self.store_pristine(Some(&text.tmp.1), &sha1, &md5, size)?;
        file.text = Some((sha1, md5, size));
        Ok(())
    }

    /// Puts a text into the pristine store (from `tmp`, or empty), once.
    fn store_pristine(
        &mut self,
        tmp: Option<&Path>,
        sha1: &str,
        md5: &str,
        size: u64,
    ) -> Result<()> {
        let dest = self.db.pristine_path(sha1)?;
        let have = self.pristines.contains(sha1) || dest.exists();
        match (tmp, have) {
            (Some(tmp), true) => std::fs::remove_file(tmp).map_err(file_err(tmp))?,
            (Some(tmp), false) => std::fs::rename(tmp, &dest).map_err(file_err(&dest))?,
            (None, true) => {}
            (None, false) => {
                create_read_only(&dest)?;
            }
        }
        self.db.put_pristine(sha1, md5, size)?;
        self.pristines.insert(sha1.to_string());
        Ok(())
    }
}

/// Changes the working files and writes the rows (`nodes`: wc.db's BASE rows before the
/// update, file externals included).
#[allow(clippy::too_many_arguments)]
fn apply(
    root: &Path,
    db: &mut WcDb,
    nodes: &[OwnedNode],
    mut plan: Plan,
    conflicts: &Conflicts,
    rev: u64,
    repos_root: &str,
    root_repos: &str,
    session: &mut dyn Ra,
    opts: &UpdateOptions,
    notify: &mut dyn FnMut(Notify),
) -> Result<Summary> {
    let repos_path = |relpath: &str| match (root_repos.is_empty(), relpath.is_empty()) {
        (true, _) => relpath.to_string(),
        (false, true) => root_repos.to_string(),
        (false, false) => format!("{root_repos}/{relpath}"),
    };
    let mut summary = Summary {
        revision: rev,
        ..Summary::default()
    };
    // Inherited properties, cached at the root (as checkout does).
    let iprops = if !root_repos.is_empty() {
        session.inherited_props(rev)?.map(|ip| skel::iprops(&ip))
    } else {
        None
    };

    // Decided first: which working files the update writes. The rows, and a work queue
    // that finishes the update from the pristine store as the stock client's does, are
    // committed before any working file changes; then the files are written, and the
    // queue emptied with their sizes and times recorded. Interrupted in between (killed,
    // the disk full), `svn cleanup` finishes it; the stock client refuses anything else
    // until then, so it never takes a file this update wrote for a local change.
    let mut dirs = plan.dirs;
    dirs.sort_by(|a, b| a.relpath.cmp(&b.relpath));
    let translation_props = [
        b"svn:eol-style".as_slice(),
        b"svn:keywords",
        b"svn:special",
        b"svn:executable",
        b"svn:needs-lock",
    ];
    let old: HashMap<&str, &OwnedNode> = nodes
        .iter()
        .map(|n| (n.local_relpath.as_str(), n))
        .collect();
    let mut to_write: HashSet<String> = HashSet::new();
    for f in &plan.files {
        if conflicts.added.contains_key(&f.relpath) {
            continue;
        }
        let old_props = match old.get(f.relpath.as_str()) {
            Some(n) if n.kind == "file" && n.presence == "normal" => Some(props_of(n, root)?),
            _ => None,
        };
        let translation_changed = match &old_props {
            None => true,
            Some(old) => translation_props
                .iter()
                .any(|name| prop_value(old, name) != prop_value(&f.props, name)),
        };
        let keywords = prop_value(&f.props, b"svn:keywords").is_some();
        if !(f.added || f.text.is_some() || translation_changed || (keywords && f.props_changed)) {
            continue;
        }
        to_write.insert(f.relpath.clone());
    }
    /// A notification of the rows' phase, given after the files' (in the order svn
    /// gives them).
    enum Later {
        TreeConflict(String),
        ShadowedAdd(String),
        AddedDir(String),
        Updated(String, bool, bool),
    }
    let mut later: Vec<Later> = Vec::new();
    let db_uuid = db.repository()?.1;
    db.begin()?;
    for d in &plan.deletes {
        if conflicts.edited_deleted.contains(d) {
            let was = nodes.iter().find(|n| n.local_relpath == *d);
            let kind = was.map_or("file", |n| n.kind.as_str());
            let was_rev = was.and_then(|n| n.revision).unwrap_or(0);
            db.copy_base_to_working(d, relpath_depth(d))?;
            let rp = repos_path(d);
            let was = skel::ConflictSide {
                repos_path: &rp,
                revision: was_rev,
                kind,
            };
            let gone = skel::ConflictSide {
                repos_path: &rp,
                revision: rev,
                kind: "none",
            };
            let data = skel::update_tree_conflict(
                repos_root,
                &db_uuid,
                Some(&was),
                &gone,
                "edited",
                "deleted",
            );
            db.put_actual_conflict(d, &data)?;
            summary.tree_conflicts += 1;
        }
        db.delete_base_tree(d)?;
    }
    db.delete_not_present()?;
    db.bump_revisions(rev)?;
    // A switch: every BASE row below the root now names the new URL's paths.
    let old_root = nodes
        .iter()
        .find(|n| n.local_relpath.is_empty())
        .and_then(|n| n.repos_path.as_deref());
    if old_root != Some(root_repos) {
        db.rebase_repos_paths(root_repos)?;
    }
    for (relpath, kind) in &plan.absent {
        let rp = repos_path(relpath);
        db.put_base(&BaseNode {
            local_relpath: relpath,
            repos_path: &rp,
            revision: rev,
            presence: "server-excluded",
            kind,
            ..BaseNode::default()
        })?;
    }
    for d in &dirs {
        let rp = repos_path(&d.relpath);
        let props = skel::proplist(d.props.iter().map(|(n, v)| (n.as_slice(), v.as_slice())));
        let prev = old.get(d.relpath.as_str()).filter(|_| !d.added);
        let depth = match prev {
            Some(n) => n.depth.clone(),
            // A new directory below one checked out with immediates is empty, as svn
            // records it; below any other, infinity.
            None => {
                let parent = crate::wc::parent_relpath(&d.relpath).unwrap_or("");
                let parent_depth = old.get(parent).and_then(|n| n.depth.as_deref());
                Some(
                    if parent_depth == Some("immediates") {
                        "empty"
                    } else {
                        "infinity"
                    }
                    .to_string(),
                )
            }
        };
        if d.added {
            summary.dirs += 1;
            later.push(match conflicts.added.get(&d.relpath) {
                Some(c) if c.own => Later::TreeConflict(d.relpath.clone()),
                Some(_) => Later::ShadowedAdd(d.relpath.clone()),
                None => Later::AddedDir(d.relpath.clone()),
            });
        } else if d.props_changed {
            later.push(Later::Updated(d.relpath.clone(), false, true));
        }
        if prop_value(&d.props, b"svn:externals").is_some() {
            summary.externals.push(d.relpath.clone());
        }
        db.put_base(&BaseNode {
            local_relpath: &d.relpath,
            repos_path: &rp,
            revision: rev,
            presence: "normal",
            kind: "dir",
            properties: Some(&props),
            depth: depth.as_deref(),
            changed_revision: d.entry.committed_rev,
            changed_date: d
                .entry
                .committed_date
                .as_deref()
                .and_then(svelto_core::parse_svn_date),
            changed_author: d.entry.last_author.as_deref(),
            inherited_props: if d.relpath.is_empty() {
                iprops
                    .as_deref()
                    .or(prev.and_then(|n| n.inherited_props.as_deref()))
            } else {
                None
            },
            ..BaseNode::default()
        })?;
    }
    if !dirs.iter().any(|d| d.relpath.is_empty()) {
        if let Some(ip) = &iprops {
            db.set_root_iprops(ip)?;
        }
    }
    for f in &plan.files {
        let rp = repos_path(&f.relpath);
        let props = skel::proplist(f.props.iter().map(|(n, v)| (n.as_slice(), v.as_slice())));
        let prev = old.get(f.relpath.as_str()).filter(|_| !f.added);
        let checksum = match (&f.text, prev) {
            (Some((sha1, _, _)), _) => Some(format!("$sha1${sha1}")),
            (None, Some(n)) => n.checksum.clone(),
            (None, None) => None,
        };
        // A file written below has its size and time recorded once it is written.
        let (size, mtime) = match prev {
            Some(n) if !to_write.contains(&f.relpath) => (n.translated_size, n.last_mod_time),
            _ => (None, None),
        };
        let dav_cache = (!f.wc_props.is_empty())
            .then(|| skel::proplist(f.wc_props.iter().map(|(n, v)| (n.as_slice(), v.as_slice()))));
        summary.files += 1;
        if !f.added && (f.text.is_some() || f.props_changed) {
            later.push(Later::Updated(
                f.relpath.clone(),
                f.text.is_some(),
                f.props_changed,
            ));
        }
        db.put_base(&BaseNode {
            local_relpath: &f.relpath,
            repos_path: &rp,
            revision: rev,
            presence: "normal",
            kind: "file",
            properties: Some(&props),
            checksum: checksum.as_deref(),
            changed_revision: f.entry.committed_rev,
            changed_date: f
                .entry
                .committed_date
                .as_deref()
                .and_then(svelto_core::parse_svn_date),
            changed_author: f.entry.last_author.as_deref(),
            translated_size: size,
            last_mod_time: mtime,
            dav_cache: dav_cache.as_deref(),
            ..BaseNode::default()
        })?;
    }
    // The tree conflicts, in path order (their rows as svn writes them).
    let mut shadowed: Vec<(&String, &Conflict)> = conflicts.added.iter().collect();
    shadowed.sort_by(|a, b| a.0.cmp(b.0));
    for (relpath, c) in shadowed {
        let data = c.own.then(|| {
            let new = skel::ConflictSide {
                repos_path: &repos_path(relpath),
                revision: rev,
                kind: c.kind,
            };
            skel::update_tree_conflict(repos_root, &db_uuid, None, &new, "unversioned", "added")
        });
        if c.own {
            summary.tree_conflicts += 1;
        }
        db.put_base_deleted(relpath, c.kind, c.op_depth, data.as_deref())?;
    }
    // The work queue, in the order `svn cleanup` runs it: removals (deepest first), the
    // added directories (parents first), then each file to write, from its pristine.
    let mut queue: Vec<Vec<u8>> = Vec::new();
    for d in &plan.deletes {
        if conflicts.edited_deleted.contains(d) {
            continue;
        }
        let prefix = format!("{d}/");
        let mut below: Vec<&OwnedNode> = nodes
            .iter()
            .filter(|n| n.local_relpath == *d || n.local_relpath.starts_with(&prefix))
            .filter(|n| n.presence == "normal")
            .collect();
        below.sort_by(|a, b| b.local_relpath.cmp(&a.local_relpath));
        for n in below {
            let op: &[u8] = if n.kind == "dir" {
                b"dir-remove"
            } else {
                b"file-remove"
            };
            queue.push(skel::list(&[op, n.local_relpath.as_bytes()]));
        }
    }
    for d in dirs
        .iter()
        .filter(|d| d.added && !conflicts.added.contains_key(&d.relpath))
    {
        queue.push(skel::list(&[b"dir-install", d.relpath.as_bytes()]));
    }
    let commit_times: &[u8] = if opts.use_commit_times { b"1" } else { b"0" };
    for f in plan.files.iter().filter(|f| to_write.contains(&f.relpath)) {
        queue.push(skel::list(&[
            b"file-install",
            f.relpath.as_bytes(),
            commit_times,
            b"1",
        ]));
    }
    db.put_work_queue(&queue)?;
    db.commit()?;
    // The files replaced and deleted are closed by this thread's twin.
    let mut reaper = Reaper::new();
    // Deletions: the versioned files and directories below, deepest first; unversioned
    // files stay, with their directories.
    for d in &plan.deletes {
        if conflicts.edited_deleted.contains(d) {
            notify(Notify::TreeConflict {
                relpath: d.as_str(),
            });
            continue;
        }
        let prefix = format!("{d}/");
        let mut below: Vec<&OwnedNode> = nodes
            .iter()
            .filter(|n| n.local_relpath == *d || n.local_relpath.starts_with(&prefix))
            .collect();
        below.sort_by(|a, b| b.local_relpath.cmp(&a.local_relpath));
        for n in below {
            if n.presence != "normal" {
                continue;
            }
            let path = root.join(&n.local_relpath);
            let result = if n.kind == "dir" {
                std::fs::remove_dir(&path)
            } else {
                let old = path
                    .symlink_metadata()
                    .ok()
                    .and_then(|m| reaper.hold(&path, &m));
                let result = std::fs::remove_file(&path);
                reaper.close(old);
                result
            };
            match result {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                // A directory that keeps unversioned files stays, unversioned.
                Err(_) if n.kind == "dir" => {}
                Err(e) => return Err(file_err(&path)(e)),
            }
        }
        notify(Notify::Deleted { relpath: d });
    }
    for d in dirs
        .iter()
        .filter(|d| d.added && !conflicts.added.contains_key(&d.relpath))
    {
        let path = root.join(&d.relpath);
        std::fs::create_dir(&path).map_err(file_err(&path))?;
    }

    // Working files.
    struct Written {
        size: Option<u64>,
        mtime: Option<i64>,
    }
    let mut written: HashMap<String, Written> = HashMap::new();
    let mut writers = match opts.writers {
        0 => None,
        n => Some(Writers::new(n, 32)?),
    };
    // The files handed to the writers (by tag), and those they finished.
    let mut tags: Vec<&str> = Vec::new();
    let mut finished = Vec::new();
    for f in plan.files.iter_mut() {
        if let Some(c) = conflicts.added.get(&f.relpath) {
            let relpath = f.relpath.as_str();
            notify(if c.own {
                Notify::TreeConflict { relpath }
            } else {
                Notify::ShadowedAdd { relpath }
            });
            continue;
        }
        if !to_write.contains(&f.relpath) {
            continue;
        }
        let sha1 = match (&f.text, old.get(f.relpath.as_str())) {
            (Some((s, _, _)), _) => s.clone(),
            (None, Some(n)) => n
                .checksum
                .as_deref()
                .and_then(|c| c.strip_prefix("$sha1$"))
                .unwrap_or("")
                .to_string(),
            (None, None) => String::new(),
        };
        let pristine = match f.held.take() {
            Some(text) => text,
            None => {
                let pristine_path = db.pristine_path(&sha1)?;
                std::fs::read(&pristine_path).map_err(file_err(&pristine_path))?
            }
        };
        let t: Translation = translation_of(
            &f.props,
            &f.entry,
            repos_root,
            &repos_path(&f.relpath),
            None,
            &opts.zone,
        );
        let path = root.join(&f.relpath);
        let commit_time = f
            .entry
            .committed_date
            .as_deref()
            .and_then(svelto_core::parse_svn_date)
            .filter(|_| opts.use_commit_times);
        match writers.as_mut() {
            // Written by a writer thread (a link here).
            Some(w) if !t.special => {
                tags.push(f.relpath.as_str());
                let (content, text) = if t.is_identity() {
                    (writer::Content::Pristine, Some(pristine))
                } else {
                    (
                        writer::Content::Bytes(translate::translate(&pristine, &t)),
                        None,
                    )
                };
                let job = writer::Job {
                    tag: tags.len() - 1,
                    pristine: None,
                    text,
                    working: Some(writer::WorkingFile {
                        path,
                        content,
                        executable: prop_value(&f.props, b"svn:executable").is_some(),
                        read_only: prop_value(&f.props, b"svn:needs-lock").is_some(),
                        make_room: false,
                        replace: Some(temporary(root)),
                        mtime: commit_time,
                    }),
                };
                w.send(job, &mut finished)?;
            }
            _ => {
                let w = write_working(
                    root,
                    &path,
                    &pristine,
                    &t,
                    &f.props,
                    commit_time,
                    &mut reaper,
                )?;
                written.insert(f.relpath.clone(), w_into(w));
            }
        }
        if f.added {
            notify(Notify::Added {
                relpath: &f.relpath,
                is_dir: false,
            });
        }
    }
    if let Some(w) = writers.as_mut() {
        w.wait(&mut finished)?;
    }
    for (tag, w) in finished {
        if let Some(relpath) = tags.get(tag) {
            written.insert(relpath.to_string(), w_into(w));
        }
    }
    fn w_into(w: Option<(u64, Option<i64>)>) -> Written {
        match w {
            Some((size, mtime)) => Written {
                size: Some(size),
                mtime,
            },
            None => Written {
                size: None,
                mtime: None,
            },
        }
    }

    // The files are written: their sizes and times recorded, the queue emptied.
    db.begin()?;
    for (relpath, w) in &written {
        if let Some(size) = w.size {
            db.set_recorded_info(relpath, size, w.mtime)?;
        }
    }
    db.clear_work_queue()?;
    db.commit()?;
    for n in later {
        notify(match &n {
            Later::TreeConflict(relpath) => Notify::TreeConflict { relpath },
            Later::ShadowedAdd(relpath) => Notify::ShadowedAdd { relpath },
            Later::AddedDir(relpath) => Notify::Added {
                relpath,
                is_dir: true,
            },
            Later::Updated(relpath, text, props) => Notify::Updated {
                relpath,
                text: *text,
                props: *props,
            },
        });
    }
    Ok(summary)
}

/// Closes, on a thread of its own, the files replaced or deleted by an update. On an ext4
/// mounted with `discard` (and no journal), the last close of a removed file frees its
/// blocks and waits for the device to discard them: about 0.1 ms per file, paid inside the
/// `rename` that replaces a working file. A working file about to be replaced is opened
/// first and its handle sent here, so that the rename only drops a name and the freeing
/// waits here, beside the update's thread. The renames (and what a crash leaves) are as
/// before.
struct Reaper {
    tx: Option<std::sync::mpsc::Sender<Vec<File>>>,
    thread: Option<std::thread::JoinHandle<()>>,
    /// Sent 64 at a time (one wake-up of the thread each).
    batch: Vec<File>,
}

impl Reaper {
    fn new() -> Reaper {
        let (tx, rx) = std::sync::mpsc::channel::<Vec<File>>();
        // Without the thread, the files are closed where they are replaced.
        match std::thread::Builder::new()
            .name("svelto-reaper".into())
            .spawn(move || rx.into_iter().for_each(drop))
        {
            Ok(thread) => Reaper {
                tx: Some(tx),
                thread: Some(thread),
                batch: Vec::new(),
            },
            Err(_) => Reaper::inline(),
        }
    }

    /// No thread: what `hold` is asked for is not held.
    fn inline() -> Reaper {
        Reaper {
            tx: None,
            thread: None,
            batch: Vec::new(),
        }
    }

    /// A handle on the regular file at `path` (None for anything else, or if it cannot be
    /// opened), to be closed by `close` after `path` is replaced or removed.
    fn hold(&self, path: &Path, meta: &std::fs::Metadata) -> Option<File> {
        (self.tx.is_some() && meta.is_file())
            .then(|| File::open(path).ok())
            .flatten()
    }

    fn close(&mut self, f: Option<File>) {
        if let (Some(f), Some(tx)) = (f, &self.tx) {
            self.batch.push(f);
            if self.batch.len() == 64 {
                // (a closed channel hands the files back: dropped here)
                let _ = tx.send(std::mem::take(&mut self.batch));
            }
        }
    }
}

impl Drop for Reaper {
    fn drop(&mut self) {
        if let Some(tx) = self.tx.take() {
            let _ = tx.send(std::mem::take(&mut self.batch));
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Writes a working file from its pristine text (next to it, then renamed over the old
/// one); its recorded (size, mtime), or None for a link. The old file is closed by
/// `reaper`.
#[allow(clippy::too_many_arguments)]
fn write_working(
    root: &Path,
    path: &Path,
    pristine: &[u8],
    t: &Translation,
    props: &Props,
    commit_time: Option<i64>,
    reaper: &mut Reaper,
) -> Result<Option<(u64, Option<i64>)>> {
    let mut old = None;
    if let Ok(m) = path.symlink_metadata() {
        if m.is_dir() {
            return Err(Error::Usage(format!(
                "'{}' is a directory where the update puts a file; use 'svn update'",
                path.display()
            )));
        }
        old = reaper.hold(path, &m);
    }
    let tmp = temporary(root);
    if t.special {
        if let Some(target) = translate::link_target(pristine) {
            use std::os::unix::ffi::OsStrExt;
            let _ = std::fs::remove_file(&tmp);
            std::os::unix::fs::symlink(std::ffi::OsStr::from_bytes(target), &tmp)
                .map_err(file_err(&tmp))?;
            std::fs::rename(&tmp, path).map_err(file_err(path))?;
            reaper.close(old);
            return Ok(None);
        }
    }
    // (one left by an interrupted update is replaced)
    let mut f = match create_new(&tmp) {
        Err(Error::Obstructed { .. }) => {
            std::fs::remove_file(&tmp).map_err(file_err(&tmp))?;
            create_new(&tmp)?
        }
        r => r?,
    };
    let out = translate::translate(pristine, t);
    f.write_all(&out).map_err(file_err(&tmp))?;
    let executable = prop_value(props, b"svn:executable").is_some();
    let read_only = prop_value(props, b"svn:needs-lock").is_some();
    if executable || read_only {
        let mut mode = f.metadata().map_err(file_err(&tmp))?.permissions().mode();
        if executable {
            mode |= (mode & 0o444) >> 2;
        }
        if read_only {
            mode &= !0o222;
        }
        f.set_permissions(std::fs::Permissions::from_mode(mode))
            .map_err(file_err(&tmp))?;
    }
    if let Some(us) = commit_time {
        crate::checkout::set_mtime(&f, &tmp, us)?;
    }
    // (a rename keeps the size and the modification time)
    let meta = f.metadata().map_err(file_err(&tmp))?;
    drop(f);
    std::fs::rename(&tmp, path).map_err(file_err(path))?;
    reaper.close(old);
    Ok(Some((meta.len(), crate::checkout::modified_us(&meta))))
}

/// A new temporary's path in the working copy's `.svn/tmp` (what an interrupted update
/// leaves there, `svn cleanup` removes).
fn temporary(root: &Path) -> PathBuf {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    root.join(".svn")
        .join("tmp")
        .join(format!("svelto-{}-{n}", std::process::id()))
}
