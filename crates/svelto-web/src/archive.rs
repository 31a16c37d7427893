//! A directory at a revision as a `.tar.gz`, written as it is read (a file's text at a
//! time), with the entries the user may read (`service::Ctx::list` leaves out the rest, as
//! `svn export` would not get them).

use crate::layout;
use crate::{At, Response};
use std::io::Write;
use svelto_core::{Depth, NodeKind, Revnum};
use svelto_repos::service::Ctx;
use svelto_repos::{ReposError, Result};

/// A `.tar.gz` to write: the tree of `path@rev`, under a top directory `name`.
pub struct Archive {
    svc: Ctx,
    path: String,
    rev: Revnum,
    /// The top directory, and the file name without `.tar.gz`.
    pub name: String,
    mtime: u64,
}

fn io(what: &str) -> impl FnOnce(std::io::Error) -> ReposError + '_ {
    move |err| ReposError::Io {
        context: format!("writing the archive: {what}"),
        err,
    }
}

/// A safe file name: letters, digits, `.`, `-`, `_` kept, anything else `_`.
pub fn file_name(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The archive of the page's directory, or a page saying why there is none.
pub fn archive(at: &At<'_>) -> Result<std::result::Result<Archive, Response>> {
    match at.svc.node(at.path, at.rev)? {
        Some(n) if n.kind() == NodeKind::Dir => {}
        _ => {
            return Ok(Err(layout::not_found(
                at.site,
                &format!("'/{}' is not a directory in revision {}", at.path, at.rev),
            )))
        }
    }
    let last = at.path.rsplit('/').next().filter(|s| !s.is_empty());
    let name = match last {
        Some(l) => format!("{}-{l}-r{}", at.site.repo_name, at.rev),
        None => format!("{}-r{}", at.site.repo_name, at.rev),
    };
    let mut infos = layout::RevInfos::default();
    let date = infos.get(at.svc, at.rev)?.date.clone();
    let mtime = date
        .as_deref()
        .and_then(svelto_core::parse_svn_date)
        .map_or(0, |m| (m / 1_000_000).max(0) as u64);
    Ok(Ok(Archive {
        svc: at.svc.clone(),
        path: at.path.to_string(),
        rev: at.rev,
        name: file_name(&name),
        mtime,
    }))
}

impl Archive {
    /// Writes the `.tar.gz` to `out`.
    pub fn write(self, out: &mut dyn Write) -> Result<()> {
        let gz = flate2::write::GzEncoder::new(out, flate2::Compression::fast());
        let mut tar = tar::Builder::new(gz);
        tar.mode(tar::HeaderMode::Deterministic);
        let mut entries = Vec::new();
        self.svc
            .list(&self.path, self.rev, Depth::Infinity, None, &mut |p, n| {
                entries.push((p.to_string(), n.kind()));
                Ok(())
            })?;
        for (path, kind) in entries {
            let rel = path
                .strip_prefix(self.path.as_str())
                .unwrap_or(&path)
                .trim_start_matches('/');
            let name = if rel.is_empty() {
                format!("{}/", self.name)
            } else {
                format!("{}/{rel}", self.name)
            };
            let mut header = tar::Header::new_gnu();
            header.set_mtime(self.mtime);
            if kind == NodeKind::Dir {
                header.set_entry_type(tar::EntryType::Directory);
                header.set_mode(0o755);
                header.set_size(0);
                tar.append_data(&mut header, &name, std::io::empty())
                    .map_err(io(&name))?;
                continue;
            }
            let Some(node) = self.svc.node(&path, self.rev)? else {
                continue;
            };
            let text = self.svc.read_text(&node)?;
            header.set_entry_type(tar::EntryType::Regular);
            header.set_mode(0o644);
            header.set_size(text.len() as u64);
            tar.append_data(&mut header, &name, &text[..])
                .map_err(io(&name))?;
        }
        let gz = tar.into_inner().map_err(io("the end"))?;
        gz.finish().map_err(io("the end"))?;
        Ok(())
    }
}
