//! `svelto admin verify`: reads every revision and checks every checksum and invariant.

use crate::error::{ReposError, Result};
use md5::Digest;
use std::io::Read;
use svelto_core::{join, ChangeKind, Md5, NodeKind, Revnum, Sha1};
use svelto_fs::{NodeRev, NodeRevId, ReadRepo};

/// Verifies revisions `start..=end`; `progress` is called after each one. The error names
/// the first bad revision and path.
pub fn verify(
    repo: &dyn ReadRepo,
    start: Revnum,
    end: Revnum,
    progress: &mut dyn FnMut(Revnum),
) -> Result<()> {
    verify_files(repo)?;
    for rev in start..=end {
        verify_rev(repo, rev).map_err(|e| match e {
            e @ ReposError::AtPath { .. } => e,
            e => e.at_rev(rev),
        })?;
        progress(rev);
    }
    // After the revisions, so that damage they reach is named by revision and path.
    if start == 0 && end >= repo.youngest() {
        repo.verify_records()?;
    }
    Ok(())
}

/// The files outside revisions: the top-level `format`, the files of `db/` beside the
/// records (`ReadRepo::verify_storage`), and the syntax of `db/locks`. (Every record of
/// `db/data` and `db/meta` is read after the revisions when the whole history is verified.)
fn verify_files(repo: &dyn ReadRepo) -> Result<()> {
    if let Some(dir) = repo.local_dir() {
        let format = dir.join("format");
        let text = std::fs::read(&format)
            .map_err(crate::error::io(format!("reading {}", format.display())))?;
        if text != crate::create::FORMAT.as_bytes() {
            return Err(bad(format!(
                "{} is not '{}'",
                format.display(),
                crate::create::FORMAT.trim_end()
            )));
        }
    }
    repo.verify_storage()?;
    crate::locks::read_locks(repo)?;
    Ok(())
}

fn bad(msg: String) -> ReposError {
    ReposError::Corrupt(msg)
}

fn verify_rev(repo: &dyn ReadRepo, rev: Revnum) -> Result<()> {
    let meta = repo.rev_meta(rev)?;
    let root = repo.root(rev)?;
    let node = repo.node(root)?;
    if node.kind != NodeKind::Dir {
        return Err(bad("root is not a directory".into()));
    }
    if node.created_rev > rev {
        return Err(bad(format!(
            "root claims to be created in r{}",
            node.created_rev
        )));
    }
    verify_node(repo, rev, root, &node, "")?;
    for ch in &meta.changes {
        let found = repo
            .lookup(rev, &ch.path)
            .map_err(|e| ReposError::from(e).at_path(rev, &ch.path))?;
        match (ch.change, found) {
            (ChangeKind::Delete, None) => {}
            (ChangeKind::Delete, Some(_)) if rev > 0 => {
                // A path deleted and then re-added under another change kind is folded to
                // replace; a plain delete must leave nothing behind.
                return Err(
                    bad("changed path is deleted but still exists".into()).at_path(rev, &ch.path)
                );
            }
            (ChangeKind::Delete, Some(_)) => {}
            (_, None) => {
                return Err(bad("changed path does not exist".into()).at_path(rev, &ch.path))
            }
            (_, Some((off, n))) => {
                if ch.node.is_some() && ch.node != off {
                    return Err(
                        bad("changed path points at another node".into()).at_path(rev, &ch.path)
                    );
                }
                if ch.kind.is_some_and(|k| k != n.kind) {
                    return Err(
                        bad("changed path has the wrong kind".into()).at_path(rev, &ch.path)
                    );
                }
            }
        }
        if ch.change != ChangeKind::Delete {
            if let Some((from_rev, _)) = &ch.copyfrom {
                if *from_rev >= rev {
                    return Err(bad(format!("copied from a later revision r{from_rev}"))
                        .at_path(rev, &ch.path));
                }
            }
        }
    }
    Ok(())
}

/// Checks a node created in `rev` and, below it, every node also created in `rev`.
fn verify_node(
    repo: &dyn ReadRepo,
    rev: Revnum,
    off: NodeRevId,
    node: &NodeRev,
    path: &str,
) -> Result<()> {
    let at = |e: ReposError| e.at_path(rev, path);
    if node.created_rev != rev {
        return Ok(());
    }
    repo.props(node).map_err(|e| at(e.into()))?;
    match node.kind {
        NodeKind::File => verify_text(repo, node).map_err(at)?,
        NodeKind::Dir => {
            let entries = repo.dir(node).map_err(|e| at(e.into()))?;
            for e in entries.iter() {
                let child_path = join(path, &e.name);
                let child = repo
                    .node(e.node)
                    .map_err(|err| ReposError::from(err).at_path(rev, &child_path))?;
                if child.kind != e.kind {
                    return Err(bad("directory entry kind differs from its node".into())
                        .at_path(rev, &child_path));
                }
                if e.node >= off {
                    return Err(
                        bad("directory entry points forward".into()).at_path(rev, &child_path)
                    );
                }
                verify_node(repo, rev, e.node, &child, &child_path)?;
            }
        }
    }
    Ok(())
}

fn verify_text(repo: &dyn ReadRepo, node: &NodeRev) -> Result<()> {
    let t = node.file_text();
    let mut r = repo.text_reader(&t)?;
    let (mut md5, mut sha) = (md5::Md5::new(), sha1::Sha1::new());
    let mut buf = vec![0u8; 256 * 1024];
    let mut size = 0u64;
    loop {
        let n = r
            .read(&mut buf)
            .map_err(|e| bad(format!("reading contents: {e}")))?;
        if n == 0 {
            break;
        }
        md5.update(&buf[..n]);
        sha.update(&buf[..n]);
        size += n as u64;
    }
    let (md5, sha) = (Md5(md5.finalize().into()), Sha1(sha.finalize().into()));
    if size != t.size {
        return Err(bad(format!(
            "contents are {size} bytes, node says {}",
            t.size
        )));
    }
    if md5 != t.md5 {
        return Err(bad(format!(
            "MD5 checksum mismatch: expected {}, actual {md5}",
            t.md5
        )));
    }
    if sha != t.sha1 {
        return Err(bad(format!(
            "SHA1 checksum mismatch: expected {}, actual {sha}",
            t.sha1
        )));
    }
    Ok(())
}

/// The repository's files outside revisions (`svnadmin verify`'s "repository metadata"):
/// the top-level `format`, the files of `db/` beside the records, `db/locks`.
pub fn verify_metadata(repo: &dyn ReadRepo) -> Result<()> {
    verify_files(repo)
}

/// One revision: its record, root, changed paths and every node, property list and text
/// it created. Errors name the revision (and path).
pub fn verify_revision(repo: &dyn ReadRepo, rev: Revnum) -> Result<()> {
    verify_rev(repo, rev).map_err(|e| match e {
        e @ ReposError::AtPath { .. } => e,
        e => e.at_rev(rev),
    })
}

/// What `--check-normalization` reports: two names in one directory, or two paths in one
/// `svn:mergeinfo`, that are the same once normalized to Unicode NFC.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NormalizationIssue {
    /// svnadmin's warning number: 3 for names, 4 for mergeinfo paths.
    pub warning: u32,
    /// svnadmin's text: "Duplicate representation of path 'P'" (P normalized), and
    /// " in svn:mergeinfo property of 'PATH'" for mergeinfo.
    pub message: String,
}

/// The names that collide once normalized in the directories where revision `rev` added
/// a name, as svnadmin's verify reports them when it closes such a directory; and the
/// paths that collide in the `svn:mergeinfo` of nodes whose properties it changed.
pub fn normalization(repo: &dyn ReadRepo, rev: Revnum) -> Result<Vec<NormalizationIssue>> {
    use unicode_normalization::UnicodeNormalization;
    let nfc = |s: &str| s.nfc().collect::<String>();
    let meta = repo.rev_meta(rev)?;
    let mut dirs: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
    let mut props_of: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
    for ch in &meta.changes {
        // As svnadmin: a directory is checked when a new name appeared in it (an add, not
        // a replacement), mergeinfo when a node's properties changed.
        if ch.change == ChangeKind::Add && !ch.path.is_empty() {
            dirs.insert(svelto_core::parent_and_name(&ch.path).0.to_string());
        }
        if ch.change != ChangeKind::Delete && ch.prop_mod {
            props_of.insert(ch.path.clone());
        }
    }
    let mut issues = Vec::new();
    let report = |issues: &mut Vec<NormalizationIssue>, warning: u32, message: String| {
        issues.push(NormalizationIssue { warning, message })
    };
    for dir in &dirs {
        let Some((_, node)) = repo.lookup(rev, dir)? else {
            continue;
        };
        if node.kind != NodeKind::Dir {
            continue;
        }
        let mut seen: std::collections::BTreeMap<String, bool> = Default::default();
        for e in repo.dir(&node)?.iter() {
            let name = nfc(&e.name);
            match seen.get_mut(&name) {
                None => {
                    seen.insert(name, false);
                }
                Some(reported) if !*reported => {
                    *reported = true;
                    let path = nfc(&join(dir, &e.name));
                    report(
                        &mut issues,
                        3,
                        format!("Duplicate representation of path '{path}'"),
                    );
                }
                Some(_) => {}
            }
        }
    }
    // As svnadmin's check_mergeinfo_normalization: the paths the new mergeinfo adds (not
    // in the node's mergeinfo before) that equal, once normalized, a path of the old
    // mergeinfo or another added one.
    let mergeinfo_paths = |r: Revnum, path: &str| -> Result<Vec<String>> {
        let Some((_, node)) = repo.lookup(r, path)? else {
            return Ok(Vec::new());
        };
        let props = repo.props(&node)?;
        Ok(props
            .get(b"svn:mergeinfo".as_slice())
            .map(|mi| {
                String::from_utf8_lossy(mi)
                    .lines()
                    .filter_map(|l| l.rsplit_once(':').map(|(p, _)| p.to_string()))
                    .collect()
            })
            .unwrap_or_default())
    };
    for path in &props_of {
        let new = mergeinfo_paths(rev, path)?;
        if new.is_empty() {
            continue;
        }
        let old = match rev.checked_sub(1) {
            Some(prev) => mergeinfo_paths(prev, path)?,
            None => Vec::new(),
        };
        let mut seen: std::collections::BTreeMap<String, bool> =
            old.iter().map(|p| (nfc(p), false)).collect();
        for p in new.iter().filter(|p| !old.contains(p)) {
            let n = nfc(p);
            match seen.get_mut(&n) {
                None => {
                    seen.insert(n, false);
                }
                Some(reported) if !*reported => {
                    *reported = true;
                    report(
                        &mut issues,
                        4,
                        format!(
                            "Duplicate representation of path '{n}' in svn:mergeinfo \
                             property of '{path}'"
                        ),
                    );
                }
                Some(_) => {}
            }
        }
    }
    Ok(issues)
}
