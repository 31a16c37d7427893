//! Commits driven by a client: the editor calls of a commit are checked as they arrive
//! (against the youngest revision when the edit began, with Subversion's out-of-date
//! rules) and recorded; texts are rebuilt from their deltas into a spool file. For the
//! pre-commit hook the recorded edit is staged as a transaction apart from the
//! repository's files (`CommitTxn::stage`), without the writer. Only at the end does the
//! commit take the repository's writer, and then only for as long as it takes to apply
//! the recorded edit to the youngest revision and publish. Commits therefore overlap while
//! clients send them and while their hooks run, and a slow client or hook never holds up
//! another.
//!
//! When other commits landed between the edit's start and its end, the edit is applied to
//! the newer youngest revision if it touches nothing they touched, as Subversion's merge of
//! a transaction into a newer HEAD does, and fails with `Conflict at 'PATH'` otherwise.

use crate::error::{io, ReposError, Result, SvnErrorKind};
use crate::textdelta::SlidingSource;
use md5::{Digest, Md5 as Md5Hasher};
use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::sync::Arc;
use svelto_core::{parent_and_name, Md5, NodeKind, PropList, Revnum, EMPTY_MD5};
use svelto_delta::{Limits, StreamDecoder};
use svelto_fs::{ReadRepo, WriteRepo};

/// Revision properties with this prefix are for the hooks only (e.g. the client's
/// `svn:txn-user-agent`); they are never stored in a revision.
pub const EPHEMERAL_PREFIX: &[u8] = b"svn:txn-";

/// Bounds on what one commit may hold in memory (its texts go to a spool file).
#[derive(Debug, Clone, Copy)]
pub struct CommitLimits {
    /// Recorded operations (adds, deletes, property and text changes).
    pub max_ops: usize,
    /// Bytes of paths and property values held for the edit.
    pub max_bytes: usize,
}

impl Default for CommitLimits {
    fn default() -> Self {
        CommitLimits {
            max_ops: 4_000_000,
            max_bytes: 512 << 20,
        }
    }
}

/// What the edit did to a path, as far as later calls of the same edit need to know.
#[derive(Debug, Clone)]
enum State {
    Deleted,
    /// Added (or replaced), maybe as a copy of (rev, path).
    Added {
        kind: NodeKind,
        copy: Option<(Revnum, String)>,
    },
    /// Changed in place (text or properties): its created revision is now the new one.
    Changed,
}

#[derive(Debug, Clone)]
enum Op {
    Delete(String),
    Add {
        path: String,
        kind: NodeKind,
        copy: Option<(Revnum, String)>,
    },
    Prop {
        path: String,
        name: Vec<u8>,
        value: Option<Vec<u8>>,
    },
    Text {
        path: String,
        offset: u64,
        len: u64,
    },
}

/// A node as the edit sees it: its kind, and the revision that last changed it (None when
/// this edit did).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    pub kind: NodeKind,
    pub created: Option<Revnum>,
}

/// The text a delta applies to: small ones whole (from the shared text cache), large ones
/// streamed (a client's source views only move forward), so memory stays bounded.
enum Base {
    Whole(Arc<Vec<u8>>),
    Stream(SlidingSource<Box<dyn Read + Send>>),
}

impl Base {
    fn view(&mut self, path: &str, offset: u64, len: u64) -> Result<&[u8]> {
        let outside = |source_len: u64| {
            bad_delta(
                path,
                svelto_delta::DeltaError::SourceViewOutside {
                    offset,
                    len,
                    source_len,
                },
            )
        };
        match self {
            Base::Whole(b) => {
                let end = offset.saturating_add(len);
                let total = b.len() as u64;
                if end > total {
                    return Err(outside(total));
                }
                Ok(&b[offset as usize..end as usize])
            }
            Base::Stream(s) => s.view(offset, len).map_err(|e| {
                ReposError::svn(
                    SvnErrorKind::BadDelta(svelto_core::code::SVNDIFF_CORRUPT_WINDOW),
                    format!("Invalid text delta for '/{path}': {e}"),
                )
            }),
        }
    }
}

/// A text delta being applied to one file.
pub struct TextDelta {
    path: String,
    base: Base,
    decoder: StreamDecoder,
    md5: Md5Hasher,
    offset: u64,
    len: u64,
    out: Vec<u8>,
}

impl TextDelta {
    /// What it holds in memory: the svndiff not yet decoded, the last window's output and
    /// a streamed base's window (a small base is shared with the repository's text cache).
    pub fn memory(&self) -> usize {
        let base = match &self.base {
            Base::Whole(_) => 0,
            Base::Stream(s) => s.held(),
        };
        self.decoder.buffered_len() + self.out.capacity() + base
    }
}

/// Bookkeeping per path an edit touched (map entries, the path's own copy) beside what
/// `CommitTxn::bytes` counts.
const PER_PATH: usize = 128;

/// An edit in progress.
pub struct CommitTxn {
    repo: Arc<dyn ReadRepo>,
    base: Revnum,
    name: String,
    /// The revision properties the commit will have (and the hooks see).
    pub revprops: PropList,
    overlay: BTreeMap<String, State>,
    ops: Vec<Op>,
    /// Result checksums of the files whose text this edit set.
    texts: BTreeMap<String, Md5>,
    spool: Option<File>,
    spool_len: u64,
    spool_dir: std::path::PathBuf,
    bytes: usize,
    limits: CommitLimits,
}

fn out_of_date(path: &str, kind: Option<NodeKind>) -> ReposError {
    let fs = format!("/{path}");
    let msg = match kind {
        Some(NodeKind::Dir) => format!("Directory '{fs}' is out of date"),
        Some(NodeKind::File) => format!("File '{fs}' is out of date"),
        None => format!("'{fs}' is out of date"),
    };
    ReposError::svn(SvnErrorKind::TxnOutOfDate, msg)
}

/// Subversion's wording for two checksums that differ (`svn_checksum_mismatch_err`).
pub fn checksum_mismatch(what: &str, expected: &str, actual: &str) -> ReposError {
    ReposError::svn(
        SvnErrorKind::ChecksumMismatch,
        format!("{what}:\n   expected:  {expected}\n     actual:  {actual}\n"),
    )
}

/// Checks a property a client wants to store, as Subversion's repository layer does.
pub fn validate_prop(name: &[u8], value: Option<&[u8]>) -> Result<()> {
    let Some(value) = value else {
        return Ok(());
    };
    let n = String::from_utf8_lossy(name);
    if name.starts_with(b"svn:entry:") || name.starts_with(b"svn:wc:") {
        return Err(ReposError::svn(
            SvnErrorKind::BadArgs,
            format!(
                "Storage of non-regular property '{n}' is disallowed through the repository \
                 interface, and could indicate a bug in your client"
            ),
        ));
    }
    if name.starts_with(b"svn:") {
        if std::str::from_utf8(value).is_err() {
            return Err(ReposError::svn(
                SvnErrorKind::BadPropertyValue,
                format!("Cannot accept '{n}' property because it is not encoded in UTF-8"),
            ));
        }
        if value.contains(&b'\r') {
            return Err(ReposError::Wrapped {
                kind: SvnErrorKind::BadPropertyValue,
                message: "Invalid property value".to_string(),
                source: Box::new(ReposError::svn(
                    SvnErrorKind::BadPropertyValueEol,
                    format!("Cannot accept non-LF line endings in '{n}' property"),
                )),
            });
        }
        if name == b"svn:date" && !is_svn_date(value) {
            // Subversion sends both errors without text; clients print their standard
            // wording ("Bad property value", "Bad date").
            return Err(ReposError::Wrapped {
                kind: SvnErrorKind::BadPropertyValue,
                message: String::new(),
                source: Box::new(ReposError::svn(SvnErrorKind::BadDate, "")),
            });
        }
    }
    Ok(())
}

/// Whether `v` is a date as Subversion writes `svn:date` (`YYYY-MM-DDTHH:MM:SS.uuuuuuZ`,
/// 1 to 6 fraction digits), with plausible field values.
fn is_svn_date(v: &[u8]) -> bool {
    let num = |r: std::ops::Range<usize>| -> Option<u32> {
        let s = std::str::from_utf8(v.get(r)?).ok()?;
        s.bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| s.parse().ok())?
    };
    let fixed = v.len() >= 21
        && v[4] == b'-'
        && v[7] == b'-'
        && v[10] == b'T'
        && v[13] == b':'
        && v[16] == b':'
        && v[19] == b'.'
        && v.last() == Some(&b'Z');
    if !fixed {
        return false;
    }
    let frac = &v[20..v.len() - 1];
    let ok_frac = (1..=6).contains(&frac.len()) && frac.iter().all(u8::is_ascii_digit);
    matches!(
        (
            num(0..4),
            num(5..7),
            num(8..10),
            num(11..13),
            num(14..16),
            num(17..19)
        ),
        (
            Some(_),
            Some(1..=12),
            Some(1..=31),
            Some(0..=23),
            Some(0..=59),
            Some(0..=60)
        )
    ) && ok_frac
}

/// Subversion refuses paths with control characters (`svn_path_check_valid`).
fn check_valid_path(path: &str) -> Result<()> {
    if let Some(c) = path.bytes().find(|b| b.is_ascii_control()) {
        return Err(ReposError::svn(
            SvnErrorKind::PathSyntax,
            format!("Invalid control character '0x{c:02x}' in path '{path}'"),
        ));
    }
    Ok(())
}

impl CommitTxn {
    /// Starts an edit on the youngest revision. `name` is the transaction's name (hooks
    /// see it); `spool_dir` is where texts wait for the commit (the repository's
    /// `db/txns`).
    pub fn begin(repo: Arc<dyn ReadRepo>, name: &str, revprops: PropList) -> Result<CommitTxn> {
        let base = repo.refresh()?;
        for (k, v) in &revprops {
            validate_prop(k, Some(v))?;
        }
        let spool_dir = repo.scratch_dir().unwrap_or_else(std::env::temp_dir);
        Ok(CommitTxn {
            repo,
            base,
            name: name.to_string(),
            revprops,
            overlay: BTreeMap::new(),
            ops: Vec::new(),
            texts: BTreeMap::new(),
            spool: None,
            spool_len: 0,
            spool_dir,
            bytes: 0,
            limits: CommitLimits::default(),
        })
    }

    /// What the edit holds in memory (its texts wait on disk): its operations with their
    /// paths and property values, and what it knows of each path it touched.
    pub fn memory(&self) -> usize {
        self.bytes
            + self.ops.len() * std::mem::size_of::<Op>()
            + (self.overlay.len() + self.texts.len()) * PER_PATH
    }

    pub fn set_limits(&mut self, limits: CommitLimits) {
        self.limits = limits;
    }

    /// The youngest revision when the edit began: what the edit is checked against.
    pub fn base(&self) -> Revnum {
        self.base
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// `open-root`: the client's base revision may not be above the youngest.
    pub fn open_root(&self, base_rev: Option<Revnum>) -> Result<()> {
        match base_rev {
            Some(r) if r > self.base => Err(ReposError::svn(
                SvnErrorKind::NoSuchRevision,
                format!("No such revision {r} (HEAD is {})", self.base),
            )),
            _ => Ok(()),
        }
    }

    fn account(&mut self, bytes: usize) -> Result<()> {
        self.bytes += bytes;
        if self.ops.len() >= self.limits.max_ops || self.bytes > self.limits.max_bytes {
            return Err(ReposError::svn(
                SvnErrorKind::LimitExceeded,
                format!(
                    "Commit too large for this server: more than {} changes or {} bytes of \
                     paths and properties",
                    self.limits.max_ops, self.limits.max_bytes
                ),
            ));
        }
        Ok(())
    }

    /// Where the node at `path` comes from in the edit so far: None when it does not
    /// exist, `Some(None)` for a node this edit created empty, `Some(Some((rev, path)))`
    /// for a node as it is in a stored revision (maybe changed in place since).
    fn source(&self, path: &str) -> Option<Option<(Revnum, String)>> {
        // The nearest path at or above `path` that the edit added or deleted decides;
        // changes in place do not move anything.
        let mut probe = path;
        loop {
            match self.overlay.get(probe) {
                Some(State::Deleted) => return None,
                Some(State::Added { copy, .. }) => {
                    let rest = path[probe.len()..].trim_start_matches('/');
                    return match copy {
                        Some((rev, from)) => Some(Some((*rev, svelto_core::join(from, rest)))),
                        // A new empty node: what is below it is in the overlay itself.
                        None if rest.is_empty() => Some(None),
                        None => None,
                    };
                }
                Some(State::Changed) | None => {}
            }
            if probe.is_empty() {
                return Some(Some((self.base, path.to_string())));
            }
            probe = parent_and_name(probe).0;
        }
    }

    /// What is at `path` in the edit so far, or None.
    pub fn lookup(&self, path: &str) -> Result<Option<Seen>> {
        let touched = self.overlay.contains_key(path);
        let seen = match self.source(path) {
            None => None,
            Some(None) => match self.overlay.get(path) {
                Some(State::Added { kind, .. }) => Some(Seen {
                    kind: *kind,
                    created: None,
                }),
                _ => None,
            },
            Some(Some((rev, p))) => self.stored(rev, &p)?,
        };
        Ok(seen.map(|s| Seen {
            created: if touched { None } else { s.created },
            ..s
        }))
    }

    fn stored(&self, rev: Revnum, path: &str) -> Result<Option<Seen>> {
        Ok(self.repo.lookup(rev, path)?.map(|(_, n)| Seen {
            kind: n.kind,
            created: Some(n.created_rev),
        }))
    }

    /// Where the text of `path` in the edit comes from: (revision, path), or None for a
    /// new empty file.
    fn text_source(&self, path: &str) -> Option<(Revnum, String)> {
        self.source(path).flatten()
    }

    /// The out-of-date rule: the client's base revision must not be older than the
    /// revision that last changed the node.
    fn check_base(&self, path: &str, kind: NodeKind, base_rev: Revnum, seen: &Seen) -> Result<()> {
        match seen.created {
            Some(created) if base_rev < created => Err(out_of_date(path, Some(kind))),
            _ if base_rev > self.base => Err(ReposError::svn(
                SvnErrorKind::NoSuchRevision,
                format!("No such revision {base_rev}"),
            )),
            _ => Ok(()),
        }
    }

    /// `delete-entry`.
    pub fn delete(&mut self, path: &str, base_rev: Option<Revnum>) -> Result<()> {
        let Some(seen) = self.lookup(path)? else {
            return Err(out_of_date(path, None));
        };
        if let Some(rev) = base_rev {
            self.check_base(path, seen.kind, rev, &seen)?;
        }
        self.account(path.len())?;
        let prefix = format!("{path}/");
        let below: Vec<String> = self
            .overlay
            .range(prefix.clone()..)
            .take_while(|(k, _)| k.starts_with(&prefix))
            .map(|(k, _)| k.clone())
            .collect();
        for k in below {
            self.overlay.remove(&k);
        }
        self.texts
            .retain(|k, _| !(k == path || k.starts_with(&prefix)));
        self.overlay.insert(path.to_string(), State::Deleted);
        self.ops.push(Op::Delete(path.to_string()));
        Ok(())
    }

    /// `add-dir` / `add-file`, maybe as a copy of `copy` = (path, revision).
    /// `parent_copied`: the parent directory came from a copy in this edit (a copy may
    /// then land on a path the copied parent already holds).
    pub fn add(
        &mut self,
        path: &str,
        kind: NodeKind,
        copy: Option<(String, Revnum)>,
        parent_copied: bool,
    ) -> Result<()> {
        check_valid_path(path)?;
        if path.is_empty() {
            return Err(ReposError::svn(
                SvnErrorKind::AlreadyExists,
                "The root directory cannot be added".to_string(),
            ));
        }
        let (parent, _) = parent_and_name(path);
        match self.lookup(parent)? {
            Some(Seen {
                kind: NodeKind::Dir,
                ..
            }) => {}
            // FSFS's answer when the new node's parent does not exist (`svn cp URL
            // URL/missing/dir`).
            None => {
                return Err(ReposError::svn(
                    SvnErrorKind::NotFound,
                    format!(
                        "File not found: transaction '{}', path '/{path}'",
                        self.name
                    ),
                ))
            }
            Some(_) => {
                return Err(ReposError::svn(
                    SvnErrorKind::NotDirectory,
                    format!("Path '/{parent}' not present"),
                ))
            }
        }
        let existing = self.lookup(path)?;
        let copy = match copy {
            Some((from, rev)) => {
                if let Some(seen) = &existing {
                    if !parent_copied {
                        return Err(out_of_date(path, Some(seen.kind)));
                    }
                }
                if rev > self.base {
                    return Err(ReposError::svn(
                        SvnErrorKind::NoSuchRevision,
                        format!("No such revision {rev}"),
                    ));
                }
                match self.repo.lookup(rev, &from)? {
                    Some((_, n)) if n.kind == kind => {}
                    Some(_) | None => {
                        return Err(ReposError::NotFound {
                            rev,
                            path: format!("/{from}"),
                        })
                    }
                }
                Some((rev, from))
            }
            None => {
                if existing.is_some() {
                    return Err(ReposError::svn(
                        SvnErrorKind::AlreadyExists,
                        format!(
                            "File already exists: filesystem '{}', transaction '{}', path \
                             '/{path}'",
                            self.repo.uuid()?,
                            self.name
                        ),
                    ));
                }
                None
            }
        };
        self.account(path.len() + copy.as_ref().map_or(0, |c| c.1.len()))?;
        if existing.is_some() {
            // A copy onto what a copied parent brought in: replace it.
            self.ops.push(Op::Delete(path.to_string()));
        }
        self.overlay.insert(
            path.to_string(),
            State::Added {
                kind,
                copy: copy.clone(),
            },
        );
        self.ops.push(Op::Add {
            path: path.to_string(),
            kind,
            copy,
        });
        Ok(())
    }

    /// `open-dir`: the directory must exist in the edit. `client_path` is the path as the
    /// client sent it (Subversion's message quotes that).
    pub fn open_dir(&self, path: &str, client_path: &str) -> Result<()> {
        match self.lookup(path)? {
            Some(_) => Ok(()),
            None => Err(ReposError::svn(
                SvnErrorKind::NotDirectory,
                format!("Path '{client_path}' not present"),
            )),
        }
    }

    /// `open-file`: the file must exist, and not have changed since `base_rev`.
    pub fn open_file(&self, path: &str, base_rev: Option<Revnum>) -> Result<()> {
        let Some(seen) = self.lookup(path)? else {
            return Err(ReposError::svn(
                SvnErrorKind::NotFound,
                format!(
                    "File not found: transaction '{}', path '/{path}'",
                    self.name
                ),
            ));
        };
        if let Some(rev) = base_rev {
            self.check_base(path, NodeKind::File, rev, &seen)?;
        }
        Ok(())
    }

    /// The first property change of a directory opened at `base_rev`: a directory's
    /// properties may only change when it is up to date.
    pub fn check_dir_current(&self, path: &str, base_rev: Revnum) -> Result<()> {
        if let Some(seen) = self.lookup(path)? {
            self.check_base(path, NodeKind::Dir, base_rev, &seen)?;
        }
        Ok(())
    }

    /// `change-dir-prop` / `change-file-prop`.
    pub fn change_prop(&mut self, path: &str, name: &[u8], value: Option<&[u8]>) -> Result<()> {
        validate_prop(name, value)?;
        if self.lookup(path)?.is_none() {
            return Err(ReposError::NotFound {
                rev: self.base,
                path: format!("/{path}"),
            });
        }
        self.account(path.len() + name.len() + value.map_or(0, <[u8]>::len))?;
        self.mark_changed(path);
        self.ops.push(Op::Prop {
            path: path.to_string(),
            name: name.to_vec(),
            value: value.map(<[u8]>::to_vec),
        });
        Ok(())
    }

    fn mark_changed(&mut self, path: &str) {
        if !self.overlay.contains_key(path) {
            self.overlay.insert(path.to_string(), State::Changed);
        }
    }

    /// `apply-textdelta`: checks the client's idea of the current text and starts
    /// rebuilding the new one.
    pub fn start_text(&mut self, path: &str, base_md5: Option<&str>) -> Result<TextDelta> {
        let text = match self.text_source(path) {
            None => None,
            Some((rev, p)) => match self.repo.lookup(rev, &p)? {
                Some((_, n)) if n.kind == NodeKind::File => Some(n.file_text()),
                Some(_) => {
                    return Err(ReposError::NotFile {
                        rev,
                        path: format!("/{p}"),
                    })
                }
                None => None,
            },
        };
        if let Some(expected) = base_md5.filter(|m| !no_checksum(m)) {
            let actual = text.map_or(EMPTY_MD5, |t| t.md5).to_hex();
            if expected != actual {
                return Err(checksum_mismatch(
                    &format!("Base checksum mismatch on '/{path}'"),
                    expected,
                    &actual,
                ));
            }
        }
        let base = match text {
            None => Base::Whole(Arc::new(Vec::new())),
            Some(t) if t.size <= svelto_fs::DELTA_MAX as u64 => {
                Base::Whole(self.repo.read_text(&t)?)
            }
            Some(t) => Base::Stream(SlidingSource::new(self.repo.text_reader(&t)?)),
        };
        Ok(TextDelta {
            path: path.to_string(),
            base,
            decoder: StreamDecoder::new(Limits::default()),
            md5: Md5Hasher::new(),
            offset: self.spool_len,
            len: 0,
            out: Vec::new(),
        })
    }

    fn spool(&mut self) -> Result<&mut File> {
        if self.spool.is_none() {
            std::fs::create_dir_all(&self.spool_dir)
                .map_err(io(format!("creating {}", self.spool_dir.display())))?;
            let p = self
                .spool_dir
                .join(format!("{}.{}.spool", self.name, std::process::id()));
            let f = File::options()
                .read(true)
                .write(true)
                .create_new(true)
                .open(&p)
                .map_err(io(format!("creating {}", p.display())))?;
            // Nobody else needs the name: the open handle keeps the bytes.
            let _ = std::fs::remove_file(&p);
            self.spool = Some(f);
        }
        Ok(self.spool.as_mut().expect("created above"))
    }

    /// `textdelta-chunk`: more svndiff bytes.
    pub fn text_chunk(&mut self, td: &mut TextDelta, bytes: &[u8]) -> Result<()> {
        td.decoder.push(bytes);
        while let Some(w) = td
            .decoder
            .next_window()
            .map_err(|e| bad_delta(&td.path, e))?
        {
            let view = td.base.view(&td.path, w.source_offset, w.source_len)?;
            td.out.clear();
            w.apply(view, &mut td.out)
                .map_err(|e| bad_delta(&td.path, e))?;
            td.md5.update(&td.out);
            td.len += td.out.len() as u64;
            let out = std::mem::take(&mut td.out);
            self.spool()?
                .write_all(&out)
                .map_err(io("writing the commit's spool file"))?;
            td.out = out;
        }
        Ok(())
    }

    /// `textdelta-end`: the new text is complete.
    pub fn end_text(&mut self, td: TextDelta) -> Result<()> {
        td.decoder.finish().map_err(|e| bad_delta(&td.path, e))?;
        let md5 = Md5(td.md5.finalize().into());
        self.spool_len += td.len;
        self.account(td.path.len())?;
        self.mark_changed(&td.path);
        self.texts.insert(td.path.clone(), md5);
        self.ops.push(Op::Text {
            path: td.path,
            offset: td.offset,
            len: td.len,
        });
        Ok(())
    }

    /// The MD5 (hex) of file `path`'s text in the edit so far.
    pub fn text_md5(&self, path: &str) -> Result<String> {
        Ok(match self.texts.get(path) {
            Some(m) => m.to_hex(),
            None => match self.text_source(path) {
                None => EMPTY_MD5.to_hex(),
                Some((rev, p)) => match self.repo.lookup(rev, &p)? {
                    Some((_, n)) => n.file_text().md5.to_hex(),
                    None => EMPTY_MD5.to_hex(),
                },
            },
        })
    }

    /// `close-file`: the client's checksum of the file's text must match ours.
    pub fn close_file(&self, path: &str, text_md5: Option<&str>) -> Result<()> {
        let Some(expected) = text_md5.filter(|m| !no_checksum(m)) else {
            return Ok(());
        };
        let actual = self.text_md5(path)?;
        if expected != actual {
            return Err(checksum_mismatch(
                &format!("Checksum mismatch for resulting fulltext\n(/{path})"),
                expected,
                &actual,
            ));
        }
        Ok(())
    }

    /// The paths this edit changes, each with whether everything below it changes too (an
    /// add, delete or replace): what a commit's lock check looks at.
    pub fn changed_paths(&self) -> Vec<(String, bool)> {
        self.touched()
            .into_iter()
            .map(|(p, structural)| (p.to_string(), structural))
            .collect()
    }

    /// The paths this edit changes, each with whether the change is structural (an add,
    /// delete or replace) rather than a change in place.
    fn touched(&self) -> BTreeMap<&str, bool> {
        let mut t: BTreeMap<&str, bool> = BTreeMap::new();
        for op in &self.ops {
            match op {
                Op::Delete(p) | Op::Add { path: p, .. } => {
                    t.insert(p, true);
                }
                Op::Prop { path, .. } | Op::Text { path, .. } => {
                    t.entry(path).or_insert(false);
                }
            }
        }
        t
    }

    /// The directories whose properties this edit changes.
    fn dir_props(&self) -> Result<BTreeSet<&str>> {
        let mut dirs = BTreeSet::new();
        for op in &self.ops {
            if let Op::Prop { path, .. } = op {
                if let Some(Seen {
                    kind: NodeKind::Dir,
                    ..
                }) = self.lookup(path)?
                {
                    dirs.insert(path.as_str());
                }
            }
        }
        Ok(dirs)
    }

    /// Whether commits since the edit began touched what this edit touches; the path of the
    /// first conflict. Their path and ours conflict when they are the same, or when one lies
    /// below the other and the upper one was added, deleted or replaced. A change in place
    /// of a directory is a property change, and changes below it do not conflict with it,
    /// but for one case: a directory whose properties this edit changes conflicts with an
    /// entry added,
    /// deleted or replaced in it since (Subversion merges a directory's property change
    /// only into a directory whose entries are the same); a property change of theirs on a
    /// directory where ours only changed entries merges.
    fn conflict(&self, youngest: Revnum) -> Result<Option<String>> {
        let ours = self.touched();
        let ours_dir_props = self.dir_props()?;
        for rev in self.base + 1..=youngest {
            for c in &self.repo.rev_meta(rev)?.changes {
                let theirs_structural = c.change != svelto_core::ChangeKind::Modify;
                if theirs_structural && !c.path.is_empty() {
                    let parent = parent_and_name(&c.path).0;
                    if ours_dir_props.contains(parent) {
                        return Ok(Some(parent.to_string()));
                    }
                }
                if ours.contains_key(c.path.as_str()) {
                    return Ok(Some(c.path.clone()));
                }
                // Ours above theirs.
                let mut up = c.path.as_str();
                while !up.is_empty() {
                    up = parent_and_name(up).0;
                    if ours.get(up) == Some(&true) {
                        return Ok(Some(up.to_string()));
                    }
                }
                // Theirs above ours.
                if theirs_structural {
                    let prefix = if c.path.is_empty() {
                        String::new()
                    } else {
                        format!("{}/", c.path)
                    };
                    if ours
                        .range(prefix.as_str()..)
                        .next()
                        .is_some_and(|(p, _)| p.starts_with(&prefix))
                    {
                        return Ok(Some(c.path.clone()));
                    }
                }
            }
        }
        Ok(None)
    }

    /// Fails with `Conflict at 'PATH'` when commits since the edit began, up to
    /// `youngest`, touched what this edit touches.
    fn check_conflicts(&self, youngest: Revnum) -> Result<()> {
        self.repo.refresh()?;
        if youngest > self.base {
            if let Some(at) = self.conflict(youngest)? {
                return Err(ReposError::svn(
                    SvnErrorKind::Conflict,
                    format!("Conflict at '/{at}'"),
                ));
            }
        }
        Ok(())
    }

    /// The revision properties with `svn:date` set to `date`, or to the youngest
    /// revision's date when that is later.
    fn revprops_dated(&self, youngest: Revnum, date: &str) -> Result<(PropList, String)> {
        let date = not_before_youngest(&*self.repo, youngest, date)?;
        let mut revprops = self.revprops.clone();
        revprops.insert(b"svn:date".to_vec(), date.clone().into_bytes());
        Ok((revprops, date))
    }

    /// Applies the recorded edit to a new transaction of `w` on its youngest revision and
    /// commits it there with `revprops`.
    fn apply(&mut self, w: &mut dyn WriteRepo, revprops: PropList) -> Result<Revnum> {
        let CommitTxn { ops, spool, .. } = self;
        let mut t = w.begin()?;
        for op in ops.iter() {
            match op {
                Op::Delete(p) => t.delete(p)?,
                Op::Add {
                    path,
                    kind,
                    copy: None,
                } => t.make_node(path, *kind)?,
                Op::Add {
                    path,
                    copy: Some((rev, from)),
                    ..
                } => t.copy(*rev, from, path)?,
                Op::Prop { path, name, value } => t.change_prop(path, name, value.as_deref())?,
                Op::Text { path, len: 0, .. } => {
                    t.set_text(path, &mut std::io::empty())?;
                }
                Op::Text { path, offset, len } => {
                    let f = spool.as_mut().ok_or_else(|| {
                        ReposError::Internal("a text without a spool file".to_string())
                    })?;
                    f.seek(SeekFrom::Start(*offset))
                        .map_err(io("reading the commit's spool file"))?;
                    let mut r = f.take(*len);
                    t.set_text(path, &mut r)?;
                }
            }
        }
        t.set_revprops(revprops);
        Ok(t.commit()?)
    }

    /// Stages the edit as transaction `NAME` apart from the repository's files
    /// (`db/txns/NAME.txn/`, `Writer::stage`), without the writer, for the pre-commit hook
    /// to read (`svelto look -t NAME`): the edit applied to the youngest revision (after
    /// checking for conflicts with commits since the edit began), with every revision
    /// property the client sent (the ephemeral `svn:txn-*` ones too) and `svn:date`
    /// `date` (or the youngest revision's, when later), as FSFS's transaction holds its
    /// creation date until the commit stamps its own. The transaction lasts as long as
    /// the returned writer.
    pub fn stage(&mut self, date: &str) -> Result<Box<dyn WriteRepo>> {
        let mut w = self.repo.stage(&self.name)?;
        let youngest = w.youngest();
        self.check_conflicts(youngest)?;
        let (revprops, _) = self.revprops_dated(youngest, date)?;
        self.apply(&mut *w, revprops)?;
        w.sync()?;
        Ok(w)
    }

    /// Takes the edit to the writer: applies it to the youngest revision (after checking
    /// for conflicts with commits since it began) and commits it, unpublished. `date`
    /// becomes `svn:date`, or the youngest revision's date when that is later: dates never
    /// go backwards as revisions go up (`-r {DATE}` searches them in order), even when the
    /// clock does. The ephemeral revision properties (`svn:txn-*`) are not stored.
    pub fn prepare<'w>(mut self, w: &'w mut dyn WriteRepo, date: &str) -> Result<Prepared<'w>> {
        let youngest = w.youngest();
        self.check_conflicts(youngest)?;
        let (revprops, date) = self.revprops_dated(youngest, date)?;
        let stored: PropList = revprops
            .into_iter()
            .filter(|(k, _)| !k.starts_with(EPHEMERAL_PREFIX))
            .collect();
        let rev = self.apply(w, stored)?;
        Ok(Prepared { w, rev, date })
    }
}

/// `date`, or the `svn:date` of `youngest` when that is a later date.
fn not_before_youngest(repo: &dyn ReadRepo, youngest: Revnum, date: &str) -> Result<String> {
    let props = repo.revprops(youngest)?;
    Ok(match props.get(&b"svn:date"[..]) {
        // The fixed-width form sorts as the dates do.
        Some(last) if is_svn_date(last) && last.as_slice() > date.as_bytes() => {
            String::from_utf8_lossy(last).into_owned()
        }
        _ => date.to_string(),
    })
}

/// An empty or all-zero checksum means "not given" to Subversion: it matches anything.
fn no_checksum(hex: &str) -> bool {
    hex.bytes().all(|b| b == b'0')
}

fn bad_delta(path: &str, e: svelto_delta::DeltaError) -> ReposError {
    ReposError::svn(
        SvnErrorKind::BadDelta(e.svn_code()),
        format!("Invalid text delta for '/{path}': {e}"),
    )
}

/// A commit applied under the writer, not yet published.
pub struct Prepared<'w> {
    w: &'w mut dyn WriteRepo,
    rev: Revnum,
    /// Its `svn:date`.
    date: String,
}

impl Prepared<'_> {
    /// The revision this commit becomes.
    pub fn rev(&self) -> Revnum {
        self.rev
    }

    /// The `svn:date` it was stamped with.
    pub fn date(&self) -> &str {
        &self.date
    }

    /// Makes the revision durable and visible; returns it.
    pub fn publish(self) -> Result<Revnum> {
        self.w.sync()?;
        Ok(self.rev)
    }

    /// [`Prepared::publish`], recording with the publication that this process runs the
    /// revision's post-commit hook as transaction `txn` ([`WriteRepo::record_post_commit`]).
    pub fn publish_running_post_commit(self, txn: &str) -> Result<Revnum> {
        self.w.record_post_commit(txn);
        self.publish()
    }

    /// Drops the revision.
    pub fn abort(self) -> Result<()> {
        self.w.discard_unpublished()?;
        Ok(())
    }
}
