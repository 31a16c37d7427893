//! `checkout` and `export`: one update drive from the server (a report that says "I have
//! nothing"), received straight into files. Each text is decoded window by window and
//! written to its pristine (hashed with SHA-1 and MD5 as it is written) and to its working
//! file at once; nothing is read back. The wc.db rows go in one transaction at the end of
//! the drive, after a first one that records the root as incomplete (as the stock client
//! does, so an interrupted checkout is one `svn cleanup` and `svn update` can finish).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use md5::Digest;

use crate::edit::{change_prop, Edit};
use crate::error::{file_err, Error, Result};
use crate::ra::{self, Ra, ReportPath};
use crate::ra_svn::{self, lossy, protocol, Credentials};
use crate::skel;
use crate::text::{Buffers, Incoming};
use crate::translate::{self, EolWriter, FileFacts, Translation};
use crate::url;
use crate::wc::{BaseNode, WcDb};
use crate::writer::{self, Writers};

/// `--depth`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Depth {
    Empty,
    Files,
    Immediates,
    Infinity,
}

impl Depth {
    pub fn word(self) -> &'static str {
        match self {
            Depth::Empty => "empty",
            Depth::Files => "files",
            Depth::Immediates => "immediates",
            Depth::Infinity => "infinity",
        }
    }

    pub fn parse(s: &str) -> Option<Depth> {
        Some(match s {
            "empty" => Depth::Empty,
            "files" => Depth::Files,
            "immediates" => Depth::Immediates,
            "infinity" => Depth::Infinity,
            _ => return None,
        })
    }
}

/// What to check out or export, and where.
#[derive(Debug, Clone)]
pub struct Options {
    pub url: String,
    pub path: PathBuf,
    /// None: HEAD (or `date`'s, or the peg's).
    pub revision: Option<u64>,
    /// `-r {DATE}`: the youngest revision at this `svn:date`.
    pub date: Option<String>,
    /// `URL@PEG`: the revision the URL names (None: HEAD); the operative revision is
    /// `revision` (or `date`'s), else the peg.
    pub peg: Option<u64>,
    /// None: infinity, not sticky (the update asks for depth `unknown`).
    pub depth: Option<Depth>,
    pub credentials: Credentials,
    /// `export --native-eol`: what `native` means.
    pub native_eol: Option<&'static [u8]>,
    /// The local time zone, for the long dates of keywords.
    pub zone: svelto_core::localtime::Zone,
    /// `--ignore-externals`: leave `svn:externals` unfetched.
    pub ignore_externals: bool,
    /// `--force`: a checkout takes unversioned files and directories in its way as they
    /// are (versioned, their contents kept: local changes where they differ), as svn does.
    pub force: bool,
    /// Threads that write the files while the session decodes (0: the session's thread
    /// writes them itself).
    pub writers: usize,
    /// `[miscellany] use-commit-times`: each working file's time is its last commit's
    /// date (an export's always is, as with svn export).
    pub use_commit_times: bool,
}

/// The writer threads a checkout or export uses unless told otherwise: none (the session's
/// thread writes). On two cores under a load of 6-14 one writer beat none on the medians,
/// but on the same machine nearly quiet it lost (more system time, at the same place in the
/// rounds): bench/results/2026-11-29/client-writers.md. SVELTO_WRITERS turns them on.
pub fn default_writers() -> usize {
    0
}

/// What happened, as it happens (the command line prints it).
#[derive(Debug)]
pub enum Notify<'a> {
    /// A node was added: its path relative to the working copy root.
    Added { relpath: &'a str, is_dir: bool },
    /// Bytes of text received so far.
    Received { bytes: u64 },
    /// An update changed a node's text (`U`), properties (` U`) or both (`UU`).
    Updated {
        relpath: &'a str,
        text: bool,
        props: bool,
    },
    /// An update deleted a node (`D`).
    Deleted { relpath: &'a str },
    /// A checkout with `--force` took an unversioned node in its way (`E`).
    Existed { relpath: &'a str, is_dir: bool },
    /// An external is about to be fetched into `relpath` ("Fetching external item
    /// into ...").
    External { relpath: &'a str },
    /// The external begun last is complete at `revision` (None: an exported file).
    ExternalDone { revision: Option<u64> },
    /// An external definition of the directory `relpath` failed (the others go on).
    ExternalFailed { relpath: &'a str, message: String },
    /// An update removed the external at `relpath`, whose definition is gone ("Removed
    /// external ..."); `message`: why something of it was left in place.
    ExternalRemoved {
        relpath: &'a str,
        message: Option<String>,
    },
    /// A checkout found an unversioned node in the way of one it adds and recorded a tree
    /// conflict there (`   C`), as svn does: the node is in BASE, the one in the way is
    /// kept, and what the server sends below it is recorded but not written.
    TreeConflict { relpath: &'a str },
    /// A node added below a tree conflict's directory: recorded, not written (`   A`).
    ShadowedAdd { relpath: &'a str },
    /// An update restored a missing file from its pristine (`Restored 'PATH'`).
    Restored { relpath: &'a str },
}

/// What a checkout or export did.
#[derive(Debug, Default, Clone)]
pub struct Summary {
    pub revision: u64,
    pub dirs: u64,
    pub files: u64,
    /// Bytes of pristine text written.
    pub bytes: u64,
    /// Directories (relpaths) whose `svn:externals` were not fetched.
    pub externals: Vec<String>,
    /// Some external definition could not be fetched (each was notified).
    pub externals_failed: bool,
    /// Tree conflicts an update raised (svn's "Summary of conflicts").
    pub tree_conflicts: u64,
}

/// Checks `opts.url` out into a new working copy at `opts.path`.
pub fn checkout(opts: &Options, notify: &mut dyn FnMut(Notify)) -> Result<Summary> {
    // svn skips a working copy in the way ("Skipped '...' -- An obstructing working copy
    // was found", a not-present row in the new one); Svelto does not check out around
    // one: refused before anything is written.
    if let Some(nested) = nested_working_copy(&opts.path) {
        return Err(Error::Usage(format!(
            "'{}' is a working copy inside '{}': svelto does not check out over a working \
             copy (svn skips it); move it away, or use 'svn checkout'",
            nested.display(),
            opts.path.display()
        )));
    }
    let resume = unfinished_checkout(&opts.path)?;
    let (session, rev) = open_at(opts)?;
    if resume.is_some() {
        // Its wc.db holds nothing but the root's row, and its pristine store may hold a
        // text cut short: both are made again (once the server answers, so that a failed
        // start leaves the interrupted checkout as it was, still resumable).
        let adm = opts.path.join(".svn");
        std::fs::remove_dir_all(&adm).map_err(file_err(&adm))?;
    }
    run_in(session, rev, opts, notify, false, resume)
}

/// The moment a working copy's administrative area was made (the change time of its
/// `.svn/format`, which nothing writes again): what a resumed checkout wrote after it is
/// its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Since(i64, i64);

impl Since {
    fn of(meta: &std::fs::Metadata) -> Since {
        use std::os::unix::fs::MetadataExt;
        Since(meta.ctime(), meta.ctime_nsec())
    }
}

/// When the working copy at `root` is a Svelto checkout that was interrupted (killed, the
/// network lost, the disk full) before it recorded anything but its root
/// ([`WcDb::is_unfinished_checkout`]): the moment it began. The same checkout run again
/// resumes it: the files and links in its way changed since then are the ones it wrote,
/// and are written again; anything older stays in the way, as for any checkout.
pub fn unfinished_checkout(root: &Path) -> Result<Option<Since>> {
    if !root.join(".svn/wc.db").is_file() {
        return Ok(None);
    }
    if !WcDb::open(root)?.is_unfinished_checkout()? {
        return Ok(None);
    }
    let format = root.join(".svn/format");
    let meta = format.symlink_metadata().map_err(file_err(&format))?;
    Ok(Some(Since::of(&meta)))
}

/// A working copy (a directory with `.svn/wc.db`) below `root`, when `root` is a
/// directory that is not one itself (links are not followed).
fn nested_working_copy(root: &Path) -> Option<PathBuf> {
    if !root.is_dir() || root.join(".svn").exists() {
        return None;
    }
    let mut todo = vec![root.to_path_buf()];
    while let Some(dir) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                let path = entry.path();
                if path.join(".svn/wc.db").is_file() {
                    return Some(path);
                }
                todo.push(path);
            }
        }
    }
    None
}

/// Exports `opts.url` (working files only, keywords and line endings applied) to
/// `opts.path`.
pub fn export(opts: &Options, notify: &mut dyn FnMut(Notify)) -> Result<Summary> {
    // As svn: an existing directory only with --force (its files are overwritten, the
    // others stay); anything else in the way never.
    if let Ok(m) = opts.path.symlink_metadata() {
        if !m.is_dir() {
            return Err(Error::Usage(format!(
                "'{}' exists and is not a directory",
                opts.path.display()
            )));
        }
        if !opts.force {
            return Err(Error::Usage(format!(
                "Destination directory '{}' exists; please remove the directory or use \
                 --force to overwrite",
                opts.path.display()
            )));
        }
    }
    run(opts, notify, true)
}

pub(crate) fn run(opts: &Options, notify: &mut dyn FnMut(Notify), export: bool) -> Result<Summary> {
    let (session, rev) = open_at(opts)?;
    run_in(session, rev, opts, notify, export, None)
}

/// A session on `opts.url` and the operative revision.
fn open_at(opts: &Options) -> Result<(Box<dyn Ra>, u64)> {
    let mut session = ra::open(&opts.url, &opts.credentials)?;
    let rev = match (opts.revision, &opts.date, opts.peg) {
        (Some(r), _, _) => r,
        (None, Some(date), _) => session.dated_rev(date)?,
        (None, None, Some(peg)) => peg,
        (None, None, None) => session.latest_rev()?,
    };
    // The URL names a node at its peg revision (HEAD without one): it must be there. A
    // node moved between the peg and the operative revision is not followed.
    if opts.peg != Some(rev)
        && (opts.peg.is_some() || opts.revision.is_some() || opts.date.is_some())
    {
        let peg = match opts.peg {
            Some(p) => p,
            None => session.latest_rev()?,
        };
        if session.check_path(peg)? == "none" {
            return Err(Error::Usage(format!(
                "'{}' path not found at revision {peg}",
                session.url()
            )));
        }
    }
    Ok((session, rev))
}

/// Checks out (or exports) the session's URL at `rev`.
pub(crate) fn run_in(
    mut session: Box<dyn Ra>,
    rev: u64,
    opts: &Options,
    notify: &mut dyn FnMut(Notify),
    export: bool,
    resume: Option<Since>,
) -> Result<Summary> {
    match session.check_path(rev)?.as_str() {
        "dir" => {}
        "none" => {
            return Err(Error::Usage(format!(
                "URL '{}' doesn't exist at revision {rev}",
                session.url()
            )))
        }
        _ => {
            return Err(Error::Usage(format!(
                "URL '{}' refers to a file, not a directory",
                session.url()
            )))
        }
    }
    let repos_relpath = url::relpath_below(session.root_url(), session.url()).ok_or_else(|| {
        protocol(
            "in repos-info",
            format!("'{}' is not below '{}'", session.url(), session.root_url()),
        )
    })?;
    let root = &opts.path;
    std::fs::create_dir_all(root).map_err(file_err(root))?;
    let root_depth = opts.depth.unwrap_or(Depth::Infinity);
    let mut db = None;
    let mut iprops = None;
    if !export {
        if !repos_relpath.is_empty() {
            iprops = session.inherited_props(rev)?.map(|ip| skel::iprops(&ip));
        }
        let d = WcDb::create(root, session.root_url(), session.uuid())?;
        d.put_base(&BaseNode {
            local_relpath: "",
            repos_path: &repos_relpath,
            revision: rev,
            presence: "incomplete",
            kind: "dir",
            depth: Some(root_depth.word()),
            ..BaseNode::default()
        })?;
        db = Some(d);
    }
    let depth_word = opts.depth.map_or("unknown", Depth::word);
    session.update(
        rev,
        "",
        depth_word,
        &[ReportPath {
            path: String::new(),
            rev,
            start_empty: true,
            depth: root_depth.word().to_string(),
            missing: false,
        }],
    )?;
    let writers = match opts.writers {
        0 => None,
        n => Some(Writers::new(n, WRITER_QUEUE)?),
    };
    let mut r = Receiver {
        root: root.clone(),
        db,
        opts,
        repos_relpath,
        root_url: session.root_url().to_string(),
        root_depth,
        iprops,
        target_rev: rev,
        dirs: HashMap::new(),
        files: HashMap::new(),
        summary: Summary::default(),
        bufs: Buffers::default(),
        scratch: Vec::new(),
        spare: Vec::new(),
        deferred: Some(BTreeMap::new()),
        tmp_counter: 0,
        pristines: HashSet::new(),
        export,
        definitions: Vec::new(),
        file_external: None,
        resume,
        shadowed: HashSet::new(),
        conflicts: Vec::new(),
        writers: None,
        rows: HashMap::new(),
        next_tag: 0,
        finished: Vec::new(),
    };
    r.writers = writers;
    if let Some(db) = &r.db {
        db.begin()?;
    }
    r.drive(session.as_mut(), notify)?;
    r.write_conflicts()?;
    if let Some(db) = &r.db {
        if let Some(texts) = &r.deferred {
            db.put_pristines_counted(texts)?;
        }
        db.commit()?;
    }
    r.summary.revision = r.target_rev;
    // Externals are fetched only at depth infinity, as the stock client fetches them.
    if !opts.ignore_externals && root_depth == Depth::Infinity {
        let parent = crate::externals::Parent {
            root,
            db: r.db.take(),
            pristines: std::mem::take(&mut r.pristines),
            opts,
            root_url: session.root_url(),
            url: session.url(),
            export,
        };
        r.summary.externals_failed = crate::externals::fetch(parent, &r.definitions, notify)?;
    }
    Ok(r.summary)
}

/// The entry props of a node (`svn:entry:*`).
#[derive(Debug, Default, Clone)]
pub(crate) struct Entry {
    pub(crate) committed_rev: Option<u64>,
    pub(crate) committed_date: Option<String>,
    pub(crate) last_author: Option<String>,
}

impl Entry {
    /// Takes an entry prop; false when `name` is not one.
    pub(crate) fn take(&mut self, name: &[u8], value: Option<&[u8]>) -> bool {
        let Some(rest) = name.strip_prefix(b"svn:entry:") else {
            return false;
        };
        // A removed entry prop (a revision without an author) leaves the recorded value,
        // as with the stock client.
        let Some(v) = value.map(lossy) else {
            return true;
        };
        let v = Some(v);
        match rest {
            b"committed-rev" => self.committed_rev = v.and_then(|s| s.parse().ok()),
            b"committed-date" => self.committed_date = v,
            b"last-author" => self.last_author = v,
            _ => {}
        }
        true
    }
}

struct DirState {
    relpath: String,
    props: Vec<(Vec<u8>, Vec<u8>)>,
    entry: Entry,
}

/// Where a file's working text goes while it arrives.
enum Working {
    /// Straight to the working file, as is.
    Direct(File),
    /// To the working file, line endings repaired.
    Eol(File, EolWriter),
    /// Kept whole (keywords, special files), written at close.
    Buffer(Vec<u8>),
    /// Held until close-file (up to [`SMALL_TEXT`]) and then written by a writer thread:
    /// the text with its line endings repaired (`eol`), or as it is; `same`: the text is
    /// the pristine's buffer, not held twice.
    Held {
        eol: Option<EolWriter>,
        bytes: Vec<u8>,
        same: bool,
    },
    /// Nowhere: the file in the way is kept (`--force`).
    Discard,
}

/// Where a file's pristine text goes while it arrives.
enum Pristine {
    /// Export: nowhere.
    None,
    /// Kept in memory (a text up to [`SMALL_TEXT`]), written to its final name at the end:
    /// one create, one write, no temporary and no rename.
    Buffer(Vec<u8>),
    /// A larger text: streamed to a temporary in `.svn/tmp`, renamed at the end.
    Temp(File, PathBuf),
}

/// The largest pristine text kept in memory until its SHA-1 (its name) is known.
pub(crate) const SMALL_TEXT: usize = 1 << 20;

/// The jobs queued for the writer threads (each at most two texts of [`SMALL_TEXT`]).
const WRITER_QUEUE: usize = 32;

struct TextState {
    incoming: Incoming,
    pristine: Pristine,
    working: Working,
    translation: Translation,
    /// The pristine (a [`Pristine::Buffer`]) is new and left for a writer thread to write.
    write_pristine: bool,
}

/// A file's wc.db row, waiting for its working file's size and time from a writer.
struct FileRow {
    relpath: String,
    repos_path: String,
    props: Vec<u8>,
    checksum: String,
    entry: Entry,
    dav_cache: Option<Vec<u8>>,
}

struct FileState {
    relpath: String,
    props: Vec<(Vec<u8>, Vec<u8>)>,
    entry: Entry,
    /// `svn:wc:*` (http://'s version URL), kept as the node's dav_cache.
    wc_props: Vec<(Vec<u8>, Vec<u8>)>,
    text: Option<TextState>,
    /// (sha1 hex, md5 hex, size) once the text is complete.
    done: Option<(String, String, u64)>,
    /// `--force`: an unversioned file stood there; it is kept as the working file.
    existed: bool,
    /// An unversioned node stands there (a tree conflict) or the file is below a
    /// directory that does: nothing is written.
    conflicted: bool,
    shadowed: bool,
}

struct Receiver<'o> {
    root: PathBuf,
    db: Option<WcDb>,
    opts: &'o Options,
    repos_relpath: String,
    root_url: String,
    root_depth: Depth,
    iprops: Option<Vec<u8>>,
    target_rev: u64,
    dirs: HashMap<Vec<u8>, DirState>,
    files: HashMap<Vec<u8>, FileState>,
    summary: Summary,
    bufs: Buffers,
    scratch: Vec<u8>,
    /// A pristine's buffer kept for the next text (not grown again from nothing).
    spare: Vec<u8>,
    /// A new working copy's pristine texts (SHA-1 hex to MD5 hex and size), recorded in
    /// wc.db at the end of the drive (`WcDb::put_pristines_counted`); None: each is
    /// recorded as it comes (a file external's drive, into a working copy that has some).
    deferred: Option<BTreeMap<String, (String, u64)>>,
    tmp_counter: u64,
    /// The pristine texts written (SHA-1 hex): the store of a new working copy holds only
    /// these, so no lookup on disk is needed.
    pristines: HashSet<String>,
    export: bool,
    /// `svn:externals` (directory relpath, value), in the order the directories closed.
    definitions: Vec<(String, Vec<u8>)>,
    /// Receiving a file external (one file into an existing working copy).
    file_external: Option<FileExternal>,
    /// Resuming an interrupted checkout begun at this moment: a file, link or directory in
    /// the way that changed since is its own (`unfinished_checkout`).
    resume: Option<Since>,
    /// Added directories that an unversioned node was in the way of (tree conflicts).
    shadowed: HashSet<String>,
    /// What the tree conflicts record: (relpath, kind, op_depth, whether it is the
    /// conflict's own node).
    conflicts: Vec<(String, &'static str, i64, bool)>,
    /// The writer threads (None: this thread writes).
    writers: Option<Writers>,
    /// The rows of the files handed to the writers, by tag.
    rows: HashMap<usize, FileRow>,
    next_tag: usize,
    /// Jobs the writers finished, not yet recorded.
    finished: Vec<writer::Done>,
}

/// A file external: where it goes in the working copy and where it comes from.
pub(crate) struct FileExternal {
    /// Relative to the working copy's root.
    pub(crate) local_relpath: String,
    /// The file's repository relpath.
    pub(crate) repos_path: String,
}

/// Fetches the file `name` of the session's directory at `rev` into `root` (a working
/// copy, or an export when `db` is None) as the file external `fx`, with the inherited
/// properties `iprops` (a skel). The database and the set of pristines come back.
#[allow(clippy::too_many_arguments)]
pub(crate) fn fetch_file_external(
    mut session: Box<dyn Ra>,
    rev: u64,
    name: &str,
    fx: FileExternal,
    iprops: Vec<u8>,
    root: &Path,
    db: Option<WcDb>,
    pristines: HashSet<String>,
    opts: &Options,
    notify: &mut dyn FnMut(Notify),
) -> Result<(Option<WcDb>, HashSet<String>, u64)> {
    session.update(
        rev,
        name,
        "unknown",
        &[ReportPath {
            path: String::new(),
            rev: 0,
            start_empty: false,
            depth: "infinity".to_string(),
            missing: true,
        }],
    )?;
    let export = db.is_none();
    let mut r = Receiver {
        root: root.to_path_buf(),
        db,
        opts,
        repos_relpath: String::new(),
        root_url: session.root_url().to_string(),
        root_depth: Depth::Infinity,
        iprops: Some(iprops),
        target_rev: rev,
        dirs: HashMap::new(),
        files: HashMap::new(),
        summary: Summary::default(),
        bufs: Buffers::default(),
        scratch: Vec::new(),
        spare: Vec::new(),
        deferred: None,
        tmp_counter: 0,
        pristines,
        export,
        definitions: Vec::new(),
        file_external: Some(fx),
        resume: None,
        shadowed: HashSet::new(),
        conflicts: Vec::new(),
        writers: None,
        rows: HashMap::new(),
        next_tag: 0,
        finished: Vec::new(),
    };
    if let Some(db) = &r.db {
        db.begin()?;
    }
    r.drive(session.as_mut(), notify)?;
    if let Some(db) = &r.db {
        db.commit()?;
    }
    if r.summary.files != 1 {
        return Err(protocol(
            "in the update drive of a file external",
            format!("{} files sent, not one", r.summary.files),
        ));
    }
    Ok((r.db, r.pristines, r.target_rev))
}

pub(crate) fn prop_value<'a>(props: &'a [(Vec<u8>, Vec<u8>)], name: &[u8]) -> Option<&'a [u8]> {
    props
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_slice())
}

pub(crate) fn set_prop(props: &mut Vec<(Vec<u8>, Vec<u8>)>, name: &[u8], value: Option<&[u8]>) {
    props.retain(|(n, _)| n != name);
    if let Some(v) = value {
        props.push((name.to_vec(), v.to_vec()));
    }
}

impl Receiver<'_> {
    fn drive(&mut self, session: &mut dyn Ra, notify: &mut dyn FnMut(Notify)) -> Result<()> {
        loop {
            let item = session.next_edit()?;
            match Edit::parse(&item)? {
                Edit::TargetRev(r) => {
                    if let Some(r) = r {
                        self.target_rev = r;
                    }
                }
                Edit::OpenRoot { token } => {
                    if self.export && self.file_external.is_none() {
                        notify(Notify::Added {
                            relpath: "",
                            is_dir: true,
                        });
                    }
                    self.dirs.insert(
                        token.to_vec(),
                        DirState {
                            relpath: String::new(),
                            props: Vec::new(),
                            entry: Entry::default(),
                        },
                    );
                }
                Edit::Dir {
                    path: relpath,
                    token,
                    added: true,
                } => {
                    if self.file_external.is_some() {
                        return Err(protocol(
                            "in the update drive of a file external",
                            format!("a directory '{relpath}' added"),
                        ));
                    }
                    let path = self.root.join(&relpath);
                    let mut existed = false;
                    if let Some(op_depth) = self.shadowed_by(&relpath) {
                        self.conflicts
                            .push((relpath.clone(), "dir", op_depth, false));
                        notify(Notify::ShadowedAdd { relpath: &relpath });
                        self.dirs.insert(
                            token.to_vec(),
                            DirState {
                                relpath,
                                props: Vec::new(),
                                entry: Entry::default(),
                            },
                        );
                        continue;
                    }
                    match std::fs::create_dir(&path) {
                        Ok(()) => {}
                        // Resuming: the interrupted checkout made it (it changed since
                        // the checkout began; a directory in the way of one was left
                        // untouched, and is in the way again).
                        Err(e)
                            if e.kind() == std::io::ErrorKind::AlreadyExists
                                && self.resume.is_some_and(|since| {
                                    path.symlink_metadata()
                                        .is_ok_and(|m| m.is_dir() && Since::of(&m) >= since)
                                }) => {}
                        // svn records an unversioned directory in the way as a tree
                        // conflict, and takes it with --force (an export too).
                        Err(e)
                            if e.kind() == std::io::ErrorKind::AlreadyExists
                                && path.is_dir()
                                && (self.opts.force || self.export) =>
                        {
                            existed = !self.export;
                        }
                        // A checkout records what else is in the way as a tree conflict.
                        Err(e)
                            if e.kind() == std::io::ErrorKind::AlreadyExists
                                && self.db.is_some() =>
                        {
                            self.conflicts.push((
                                relpath.clone(),
                                "dir",
                                relpath_depth(&relpath),
                                true,
                            ));
                            self.shadowed.insert(relpath.clone());
                            notify(Notify::TreeConflict { relpath: &relpath });
                            self.dirs.insert(
                                token.to_vec(),
                                DirState {
                                    relpath,
                                    props: Vec::new(),
                                    entry: Entry::default(),
                                },
                            );
                            continue;
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                            return Err(Error::Obstructed { path })
                        }
                        Err(e) => return Err(file_err(&path)(e)),
                    }
                    if existed {
                        notify(Notify::Existed {
                            relpath: &relpath,
                            is_dir: true,
                        });
                    } else {
                        notify(Notify::Added {
                            relpath: &relpath,
                            is_dir: true,
                        });
                    }
                    self.dirs.insert(
                        token.to_vec(),
                        DirState {
                            relpath,
                            props: Vec::new(),
                            entry: Entry::default(),
                        },
                    );
                }
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
                    change_prop(&mut dir.props, &mut dir.entry, None, name, value);
                }
                Edit::CloseDir { token } => {
                    let dir = self
                        .dirs
                        .remove(token)
                        .ok_or_else(|| bad_token("close-dir"))?;
                    if self.file_external.is_some() {
                        continue;
                    }
                    // The root's properties show as a change to it (` U`), as with svn.
                    if dir.relpath.is_empty() && !self.export && !dir.props.is_empty() {
                        notify(Notify::Updated {
                            relpath: "",
                            text: false,
                            props: true,
                        });
                    }
                    self.close_dir(dir)?;
                }
                Edit::Absent { path, kind } => self.absent(&path, kind)?,
                Edit::File {
                    path: relpath,
                    token,
                    added: true,
                } => {
                    let relpath = match &self.file_external {
                        Some(fx) => fx.local_relpath.clone(),
                        None => relpath,
                    };
                    let mut in_way = if self.file_external.is_none() {
                        self.root.join(&relpath).symlink_metadata().ok()
                    } else {
                        None
                    };
                    // Resuming: a file or link the interrupted checkout wrote (changed
                    // since it began) is written again.
                    if let (Some(since), Some(m)) = (self.resume, &in_way) {
                        if !m.is_dir() && Since::of(m) >= since {
                            remove_in_way(&self.root.join(&relpath))?;
                            in_way = None;
                        }
                    }
                    let shadow = match self.file_external {
                        None => self.shadowed_by(&relpath),
                        Some(_) => None,
                    };
                    let existed = self.opts.force
                        && !self.export
                        && shadow.is_none()
                        && in_way.as_ref().is_some_and(|m| m.is_file());
                    let conflicted =
                        self.db.is_some() && shadow.is_none() && !existed && in_way.is_some();
                    if let Some(op_depth) = shadow {
                        self.conflicts
                            .push((relpath.clone(), "file", op_depth, false));
                    } else if conflicted {
                        self.conflicts.push((
                            relpath.clone(),
                            "file",
                            relpath_depth(&relpath),
                            true,
                        ));
                    }
                    self.files.insert(
                        token.to_vec(),
                        FileState {
                            relpath,
                            props: Vec::new(),
                            entry: Entry::default(),
                            wc_props: Vec::new(),
                            text: None,
                            done: None,
                            existed,
                            conflicted,
                            shadowed: shadow.is_some(),
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
                    change_prop(&mut file.props, &mut file.entry, wc, name, value);
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
                    notify(Notify::Received {
                        bytes: self.summary.bytes,
                    });
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
                    let file = self
                        .files
                        .remove(token)
                        .ok_or_else(|| bad_token("close-file"))?;
                    if file.conflicted {
                        notify(Notify::TreeConflict {
                            relpath: &file.relpath,
                        });
                    } else if file.shadowed {
                        notify(Notify::ShadowedAdd {
                            relpath: &file.relpath,
                        });
                    } else if file.existed {
                        notify(Notify::Existed {
                            relpath: &file.relpath,
                            is_dir: false,
                        });
                    } else {
                        notify(Notify::Added {
                            relpath: &file.relpath,
                            is_dir: false,
                        });
                    }
                    self.close_file(file, md5.as_deref())?;
                }
                Edit::Close => {
                    self.finish_writes()?;
                    return session.close_edit();
                }
                Edit::Abort => return Err(session.abort_edit()),
                Edit::Failure(p) => return Err(ra_svn::failure(p)),
                Edit::DeleteEntry { .. } | Edit::Dir { .. } | Edit::File { .. } => {
                    return Err(protocol(
                        "in the update drive",
                        "a deletion or an opened node in a checkout, which starts from nothing",
                    ));
                }
            }
        }
    }

    /// `export --force`: a file (or link) where the export writes one is replaced; a
    /// directory there stays and stops the export, as with svn.
    fn make_room(&self, path: &Path) -> Result<()> {
        if !(self.export && self.opts.force) {
            return Ok(());
        }
        remove_in_way(path)
    }

    /// The op_depth of the tree conflict whose directory `relpath` is below, if any.
    fn shadowed_by(&self, relpath: &str) -> Option<i64> {
        if self.shadowed.is_empty() {
            return None;
        }
        let mut p = relpath;
        while let Some(parent) = crate::wc::parent_relpath(p) {
            if self.shadowed.contains(parent) {
                return Some(relpath_depth(parent));
            }
            p = parent;
        }
        None
    }

    /// Records the tree conflicts (rows `svn` reads as "local ... unversioned, incoming
    /// ... add upon update") before the transaction ends.
    fn write_conflicts(&self) -> Result<()> {
        let Some(db) = &self.db else {
            return Ok(());
        };
        if self.conflicts.is_empty() {
            return Ok(());
        }
        let (root_url, uuid) = db.repository()?;
        for (relpath, kind, op_depth, own) in &self.conflicts {
            let data = own.then(|| {
                let new = skel::ConflictSide {
                    repos_path: &self.repos_path(relpath),
                    revision: self.target_rev,
                    kind,
                };
                skel::update_tree_conflict(&root_url, &uuid, None, &new, "unversioned", "added")
            });
            db.put_base_deleted(relpath, kind, *op_depth, data.as_deref())?;
        }
        Ok(())
    }

    fn repos_path(&self, relpath: &str) -> String {
        if let Some(fx) = &self.file_external {
            return fx.repos_path.clone();
        }
        match (self.repos_relpath.is_empty(), relpath.is_empty()) {
            (true, _) => relpath.to_string(),
            (false, true) => self.repos_relpath.clone(),
            (false, false) => format!("{}/{relpath}", self.repos_relpath),
        }
    }

    fn close_dir(&mut self, dir: DirState) -> Result<()> {
        if let Some(v) = prop_value(&dir.props, b"svn:externals") {
            self.definitions.push((dir.relpath.clone(), v.to_vec()));
        }
        if !dir.relpath.is_empty() {
            self.summary.dirs += 1;
        }
        let Some(db) = &self.db else {
            return Ok(());
        };
        let depth = if dir.relpath.is_empty() {
            self.root_depth
        } else if self.root_depth == Depth::Immediates {
            Depth::Empty
        } else {
            Depth::Infinity
        };
        let props = skel::proplist(dir.props.iter().map(|(n, v)| (n.as_slice(), v.as_slice())));
        let repos_path = self.repos_path(&dir.relpath);
        db.put_base(&BaseNode {
            local_relpath: &dir.relpath,
            repos_path: &repos_path,
            revision: self.target_rev,
            presence: "normal",
            kind: "dir",
            properties: Some(&props),
            depth: Some(depth.word()),
            changed_revision: dir.entry.committed_rev,
            changed_date: dir
                .entry
                .committed_date
                .as_deref()
                .and_then(svelto_core::parse_svn_date),
            changed_author: dir.entry.last_author.as_deref(),
            inherited_props: if dir.relpath.is_empty() {
                self.iprops.as_deref()
            } else {
                None
            },
            ..BaseNode::default()
        })
    }

    fn absent(&mut self, relpath: &str, kind: &str) -> Result<()> {
        let Some(db) = &self.db else {
            return Ok(());
        };
        let repos_path = self.repos_path(relpath);
        db.put_base(&BaseNode {
            local_relpath: relpath,
            repos_path: &repos_path,
            revision: self.target_rev,
            presence: "server-excluded",
            kind,
            ..BaseNode::default()
        })
    }

    /// The translation a file's properties ask for.
    fn translation(&self, file: &FileState) -> Translation {
        translation_of(
            &file.props,
            &file.entry,
            &self.root_url,
            &self.repos_path(&file.relpath),
            self.opts.native_eol,
            &self.opts.zone,
        )
    }

    fn start_text(&mut self, token: &[u8]) -> Result<()> {
        let file = self
            .files
            .get(token)
            .ok_or_else(|| bad_token("apply-textdelta"))?;
        let translation = self.translation(file);
        let working_path = self.root.join(&file.relpath);
        let working = if file.existed || file.conflicted || file.shadowed {
            Working::Discard
        } else if translation.keywords.is_some() || translation.special {
            Working::Buffer(Vec::new())
        } else if self.writers.is_some() {
            Working::Held {
                eol: translation.eol.map(EolWriter::new),
                bytes: Vec::new(),
                same: translation.eol.is_none() && self.db.is_some(),
            }
        } else {
            self.make_room(&working_path)?;
            let f = create_new(&working_path)?;
            match translation.eol {
                Some(eol) => Working::Eol(f, EolWriter::new(eol)),
                None => Working::Direct(f),
            }
        };
        let pristine = match &self.db {
            Some(_) => {
                let mut b = std::mem::take(&mut self.spare);
                b.clear();
                Pristine::Buffer(b)
            }
            None => Pristine::None,
        };
        let file = self
            .files
            .get_mut(token)
            .ok_or_else(|| bad_token("apply-textdelta"))?;
        file.text = Some(TextState {
            incoming: Incoming::new(self.db.is_some()),
            pristine,
            working,
            translation,
            write_pristine: false,
        });
        Ok(())
    }

    fn text_chunk(&mut self, file: &mut FileState, chunk: &[u8]) -> Result<()> {
        let Some(text) = file.text.as_mut() else {
            return Err(protocol(
                "in the update drive",
                format!("text for '{}' before apply-textdelta", file.relpath),
            ));
        };
        let (pristine, working) = (&mut text.pristine, &mut text.working);
        let (db, tmp_counter, scratch) = (&self.db, &mut self.tmp_counter, &mut self.scratch);
        let received = &mut self.summary.bytes;
        let working_path = || self.root.join(&file.relpath);
        let make_room = self.export && self.opts.force;
        text.incoming
            .push(chunk, &file.relpath, None, &mut self.bufs, &mut |bytes| {
                *received += bytes.len() as u64;
                // A held working text past SMALL_TEXT goes to its file from here on (one
                // held as the pristine's buffer before the pristine leaves it).
                let spill = match working {
                    Working::Held {
                        same: true,
                        ..
                    } => !matches!(pristine, Pristine::Buffer(b) if b.len() + bytes.len() <= SMALL_TEXT),
                    Working::Held {
                        eol, bytes: held, ..
                    } => {
                        match eol {
                            Some(e) => e.push(bytes, held),
                            None => held.extend_from_slice(bytes),
                        }
                        held.len() > SMALL_TEXT
                    }
                    _ => false,
                };
                if spill {
                    let path = working_path();
                    if make_room {
                        remove_in_way(&path)?;
                    }
                    let mut f = create_new(&path)?;
                    let held = std::mem::replace(working, Working::Discard);
                    if let Working::Held { eol, bytes: held, same } = held {
                        if same {
                            if let Pristine::Buffer(b) = pristine {
                                f.write_all(b).map_err(file_err(&path))?;
                            }
                            f.write_all(bytes).map_err(file_err(&path))?;
                        } else {
                            f.write_all(&held).map_err(file_err(&path))?;
                        }
                        *working = match eol {
                            Some(e) => Working::Eol(f, e),
                            None => Working::Direct(f),
                        };
                    }
                }
                match pristine {
                    Pristine::None => {}
                    Pristine::Temp(f, p) => f.write_all(bytes).map_err(file_err(p.as_path()))?,
                    Pristine::Buffer(b) if b.len() + bytes.len() <= SMALL_TEXT => {
                        b.extend_from_slice(bytes)
                    }
                    Pristine::Buffer(b) => {
                        // Too large to keep: from here on, a temporary renamed at the end.
                        if let Some(db) = db {
                            *tmp_counter += 1;
                            let p = db.tmp_dir.join(format!("svelto-{tmp_counter}.tmp"));
                            let mut f = create_read_only(&p)?;
                            f.write_all(b).map_err(file_err(&p))?;
                            f.write_all(bytes).map_err(file_err(&p))?;
                            *pristine = Pristine::Temp(f, p);
                        }
                    }
                }
                match working {
                    // (this window went to the file with the held text)
                    _ if spill => {}
                    Working::Direct(f) => f.write_all(bytes).map_err(file_err(working_path()))?,
                    Working::Eol(f, eol) => {
                        let out = eol.translate(bytes, scratch);
                        f.write_all(out).map_err(file_err(working_path()))?;
                    }
                    Working::Buffer(b) => b.extend_from_slice(bytes),
                    Working::Held { .. } | Working::Discard => {}
                }
                Ok(())
            })
    }

    fn end_text(&mut self, file: &mut FileState) -> Result<()> {
        let Some(mut text) = file.text.take() else {
            return Err(protocol(
                "in the update drive",
                format!(
                    "textdelta-end for '{}' before apply-textdelta",
                    file.relpath
                ),
            ));
        };
        let (sha1, md5, size) = text.incoming.finish(&file.relpath)?;
        match &mut text.working {
            Working::Eol(f, eol) => {
                self.scratch.clear();
                eol.finish(&mut self.scratch);
                let path = self.root.join(&file.relpath);
                f.write_all(&self.scratch).map_err(file_err(path))?;
            }
            Working::Held {
                eol: Some(eol),
                bytes,
                ..
            } => eol.finish(bytes),
            _ => {}
        }
        let pristine = std::mem::replace(&mut text.pristine, Pristine::None);
        if let Some(db) = self.db.as_mut() {
            let known = self.pristines.contains(&sha1);
            match pristine {
                Pristine::None => {}
                // Written with the working file by a writer thread at close-file.
                Pristine::Buffer(b) if self.writers.is_some() => {
                    text.write_pristine = !known;
                    text.pristine = Pristine::Buffer(b);
                }
                Pristine::Buffer(b) if !known => {
                    let dest = db.pristine_path(&sha1)?;
                    let mut f = create_read_only(&dest)?;
                    f.write_all(&b).map_err(file_err(&dest))?;
                    self.spare = b;
                }
                Pristine::Buffer(b) => self.spare = b,
                Pristine::Temp(f, tmp) => {
                    drop(f);
                    if known {
                        std::fs::remove_file(&tmp).map_err(file_err(&tmp))?;
                    } else {
                        let dest = db.pristine_path(&sha1)?;
                        std::fs::rename(&tmp, &dest).map_err(file_err(&dest))?;
                    }
                }
            }
            if !known {
                match self.deferred.as_mut() {
                    Some(d) => {
                        d.insert(sha1.clone(), (md5.clone(), size));
                    }
                    None => db.put_pristine(&sha1, &md5, size)?,
                }
                self.pristines.insert(sha1.clone());
            }
        }
        file.done = Some((sha1, md5, size));
        // The working file stays open in `text` until close-file: put it back.
        file.text = Some(text);
        Ok(())
    }

    fn close_file(&mut self, mut file: FileState, expected_md5: Option<&str>) -> Result<()> {
        self.summary.files += 1;
        let path = self.root.join(&file.relpath);
        let translation = self.translation(&file);
        let mut text = file.text.take();
        if text.is_none() && file.done.is_none() {
            // An empty file: no text was sent.
            let sha1 = hex::encode(sha1::Sha1::digest(b""));
            let md5 = hex::encode(md5::Md5::digest(b""));
            if let Some(db) = self.db.as_mut() {
                if !self.pristines.contains(&sha1) {
                    let dest = db.pristine_path(&sha1)?;
                    create_read_only(&dest)?;
                    match self.deferred.as_mut() {
                        Some(d) => {
                            d.insert(sha1.clone(), (md5.clone(), 0));
                        }
                        None => db.put_pristine(&sha1, &md5, 0)?,
                    }
                    self.pristines.insert(sha1.clone());
                }
            }
            file.done = Some((sha1, md5, 0));
        }
        let Some((sha1, md5, _)) = file.done.clone() else {
            return Err(protocol(
                "in the update drive",
                format!("close-file for '{}' inside its text", file.relpath),
            ));
        };
        if let Some(expected) = expected_md5 {
            if !expected.is_empty() && expected != md5 && expected.bytes().any(|b| b != b'0') {
                return Err(Error::Checksum {
                    path: file.relpath.clone(),
                    expected: expected.to_string(),
                    actual: md5,
                });
            }
        }
        // The pristine text held for a writer thread (since end_text), and whether it is
        // new (to be written).
        let mut held_pristine = None;
        let mut write_pristine = false;
        if let Some(t) = text.as_mut() {
            if let Pristine::Buffer(b) = std::mem::replace(&mut t.pristine, Pristine::None) {
                write_pristine = t.write_pristine;
                held_pristine = Some(b);
            }
        }
        let executable = prop_value(&file.props, b"svn:executable").is_some();
        // The working file's time: its last commit's date, when asked (svn export always).
        let commit_time = (self.export || self.opts.use_commit_times)
            .then(|| {
                file.entry
                    .committed_date
                    .as_deref()
                    .and_then(svelto_core::parse_svn_date)
            })
            .flatten();
        // (an export keeps svn:needs-lock files writable, as svn export does)
        let read_only = !self.export && prop_value(&file.props, b"svn:needs-lock").is_some();
        // The working file: finish what was streamed, or write it now (not over a file
        // kept with --force: its size and time are not recorded, as with svn), or leave it
        // to a writer thread (`later`).
        let mut later = None;
        let written = match text {
            _ if file.existed || file.conflicted || file.shadowed => None,
            Some(t) if t.translation == translation => match t.working {
                Working::Direct(f) | Working::Eol(f, _) => Some(f),
                Working::Buffer(b) => self.write_working(&path, &b, &translation)?,
                Working::Held { bytes, same, .. } => {
                    later = Some(writer::WorkingFile {
                        path: path.clone(),
                        content: if same {
                            writer::Content::Pristine
                        } else {
                            writer::Content::Bytes(bytes)
                        },
                        executable,
                        read_only,
                        make_room: self.export && self.opts.force,
                        replace: None,
                        mtime: commit_time,
                    });
                    None
                }
                Working::Discard => None,
            },
            other => {
                // The properties changed after the text began (or there was no text):
                // write the working file again from the pristine.
                drop(other);
                let from_disk;
                let pristine: &[u8] = match (&held_pristine, self.db.as_mut()) {
                    (Some(b), _) => b,
                    (None, Some(db)) => {
                        let p = db.pristine_path(&sha1)?;
                        // (a writer may be writing it)
                        if let Some(w) = self.writers.as_mut() {
                            w.wait(&mut self.finished)?;
                        }
                        from_disk = std::fs::read(&p).map_err(file_err(&p))?;
                        &from_disk
                    }
                    (None, None) => &[],
                };
                if path.symlink_metadata().is_ok() {
                    std::fs::remove_file(&path).map_err(file_err(&path))?;
                }
                self.write_working(&path, pristine, &translation)?
            }
        };
        let mut recorded = None;
        if let Some(f) = written {
            let meta = f.metadata().map_err(file_err(&path))?;
            if executable || read_only {
                let mut mode = meta.permissions().mode();
                if executable {
                    // Execute wherever read is allowed, as the stock client does.
                    mode |= (mode & 0o444) >> 2;
                }
                if read_only {
                    mode &= !0o222;
                }
                f.set_permissions(std::fs::Permissions::from_mode(mode))
                    .map_err(file_err(&path))?;
            }
            let mtime = match commit_time {
                Some(us) => {
                    set_mtime(&f, &path, us)?;
                    modified_us(&f.metadata().map_err(file_err(&path))?)
                }
                None => modified_us(&meta),
            };
            recorded = Some((meta.len(), mtime));
        }
        let row = self.db.as_ref().map(|_| FileRow {
            props: skel::proplist(file.props.iter().map(|(n, v)| (n.as_slice(), v.as_slice()))),
            dav_cache: (!file.wc_props.is_empty()).then(|| {
                skel::proplist(
                    file.wc_props
                        .iter()
                        .map(|(n, v)| (n.as_slice(), v.as_slice())),
                )
            }),
            checksum: format!("$sha1${sha1}"),
            repos_path: self.repos_path(&file.relpath),
            relpath: file.relpath,
            entry: file.entry,
        });
        // What a writer thread is to write: the working file, the new pristine, or both.
        let pristine_dest = match (&self.db, write_pristine) {
            (Some(_), true) => self.db.as_mut().map(|db| db.pristine_path(&sha1)),
            _ => None,
        }
        .transpose()?;
        let pooled = later.is_some() || pristine_dest.is_some();
        if let (true, Some(writers)) = (pooled, self.writers.as_mut()) {
            let tag = self.next_tag;
            self.next_tag += 1;
            let needs_text = matches!(
                later,
                Some(writer::WorkingFile {
                    content: writer::Content::Pristine,
                    ..
                })
            );
            let (pristine, text) = match (pristine_dest, held_pristine) {
                (Some(dest), Some(b)) => (Some((dest, b)), None),
                (None, Some(b)) if needs_text => (None, Some(b)),
                _ => (None, None),
            };
            let has_working = later.is_some();
            writers.send(
                writer::Job {
                    tag,
                    pristine,
                    text,
                    working: later,
                },
                &mut self.finished,
            )?;
            if has_working {
                if let Some(row) = row {
                    self.rows.insert(tag, row);
                }
                return self.record_finished();
            }
        }
        match row {
            Some(row) => self.put_file_row(&row, recorded),
            None => Ok(()),
        }
    }

    /// Records the rows of the files the writers finished.
    fn record_finished(&mut self) -> Result<()> {
        for (tag, recorded) in std::mem::take(&mut self.finished) {
            if let Some(row) = self.rows.remove(&tag) {
                self.put_file_row(&row, recorded)?;
            }
        }
        Ok(())
    }

    /// Waits for the writers' last files and records them (the end of the drive).
    fn finish_writes(&mut self) -> Result<()> {
        if let Some(w) = self.writers.as_mut() {
            w.wait(&mut self.finished)?;
        }
        self.record_finished()
    }

    /// A file's BASE row, with its working file's size and time (`recorded`).
    fn put_file_row(&self, row: &FileRow, recorded: Option<(u64, Option<i64>)>) -> Result<()> {
        let Some(db) = &self.db else {
            return Ok(());
        };
        db.put_base(&BaseNode {
            local_relpath: &row.relpath,
            repos_path: &row.repos_path,
            revision: self.target_rev,
            presence: "normal",
            kind: "file",
            properties: Some(&row.props),
            checksum: Some(&row.checksum),
            changed_revision: row.entry.committed_rev,
            changed_date: row
                .entry
                .committed_date
                .as_deref()
                .and_then(svelto_core::parse_svn_date),
            changed_author: row.entry.last_author.as_deref(),
            translated_size: recorded.map(|r| r.0),
            last_mod_time: recorded.and_then(|r| r.1),
            dav_cache: row.dav_cache.as_deref(),
            file_external: self.file_external.is_some(),
            inherited_props: match self.file_external {
                Some(_) => self.iprops.as_deref(),
                None => None,
            },
            ..BaseNode::default()
        })
    }

    /// Writes a whole working file (or makes the link); the open file, or None for a link.
    fn write_working(
        &self,
        path: &Path,
        text: &[u8],
        translation: &Translation,
    ) -> Result<Option<File>> {
        self.make_room(path)?;
        if translation.special {
            if let Some(target) = translate::link_target(text) {
                use std::os::unix::ffi::OsStrExt;
                let target = std::ffi::OsStr::from_bytes(target);
                std::os::unix::fs::symlink(target, path).map_err(file_err(path))?;
                return Ok(None);
            }
        }
        let mut f = create_new(path)?;
        let out = translate::translate(text, translation);
        f.write_all(&out).map_err(file_err(path))?;
        Ok(Some(f))
    }
}

/// The number of components of a local relpath (a tree conflict's op_depth).
pub(crate) fn relpath_depth(relpath: &str) -> i64 {
    if relpath.is_empty() {
        0
    } else {
        relpath.split('/').count() as i64
    }
}

/// Sets the modification time of the open file `f` (at `path`) to `us` microseconds since
/// the epoch (a commit's date: use-commit-times, export).
pub(crate) fn set_mtime(f: &File, path: &Path, us: i64) -> Result<()> {
    let offset = std::time::Duration::from_micros(us.unsigned_abs());
    let time = if us >= 0 {
        std::time::UNIX_EPOCH + offset
    } else {
        std::time::UNIX_EPOCH - offset
    };
    f.set_modified(time).map_err(file_err(path))
}

/// A file's modification time in microseconds since the epoch, as wc.db records it.
pub(crate) fn modified_us(meta: &std::fs::Metadata) -> Option<i64> {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_micros() as i64)
}

/// Removes a file or link at `path` (`export --force`); a directory there stays.
pub(crate) fn remove_in_way(path: &Path) -> Result<()> {
    match path.symlink_metadata() {
        Ok(m) if !m.is_dir() => std::fs::remove_file(path).map_err(file_err(path)),
        _ => Ok(()),
    }
}

pub(crate) fn create_new(path: &Path) -> Result<File> {
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| {
            if e.kind() == std::io::ErrorKind::AlreadyExists {
                Error::Obstructed {
                    path: path.to_path_buf(),
                }
            } else {
                file_err(path)(e)
            }
        })
}

/// The translation a file's properties ask for, with its last change (`entry`) and where
/// it lives (`repos_path` below `root_url`).
pub(crate) fn translation_of(
    props: &[(Vec<u8>, Vec<u8>)],
    entry: &Entry,
    root_url: &str,
    repos_path: &str,
    native_eol: Option<&'static [u8]>,
    zone: &svelto_core::localtime::Zone,
) -> Translation {
    if prop_value(props, b"svn:special").is_some() {
        return Translation {
            special: true,
            ..Translation::default()
        };
    }
    let eol = prop_value(props, b"svn:eol-style").and_then(|s| translate::eol_of(s, native_eol));
    let keywords = prop_value(props, b"svn:keywords").and_then(|k| {
        let url = format!("{root_url}/{}", url::encode(repos_path));
        translate::keywords_of(
            k,
            &FileFacts {
                rev: entry.committed_rev.unwrap_or(0),
                url: &url,
                root_url,
                date: entry.committed_date.as_deref(),
                author: entry.last_author.as_deref(),
            },
            zone,
        )
    });
    Translation {
        eol,
        keywords,
        special: false,
    }
}

/// A new file, read-only from its creation (a pristine text: no chmod afterwards).
pub(crate) fn create_read_only(path: &Path) -> Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o444)
        .open(path)
        .map_err(file_err(path))
}

pub(crate) fn bad_token(cmd: &str) -> Error {
    protocol(
        "in the update drive",
        format!("{cmd}: a file or directory token that is not open"),
    )
}
