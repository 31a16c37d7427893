//! A directory at a revision as a `.tar.gz` or a `.zip` (`?format=zip`), written as it is
//! read (a file's text at a time), with the entries the user may read
//! (`service::Ctx::list` leaves out the rest, as `svn export` would not get them).
//!
//! Memory: the list of entries' paths, one file's text, and for a `.zip` its central
//! directory (a record of each entry, written at the end); the output streams (a `.zip`
//! through zip's stream writer: local headers with data descriptors, no seeking back).

use crate::layout;
use crate::{At, Response};
use std::io::Write;
use svelto_core::{Depth, NodeKind, Revnum};
use svelto_repos::service::Ctx;
use svelto_repos::{ReposError, Result};

/// The archive formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    TarGz,
    Zip,
}

impl Format {
    /// The format a query asks for (`?format=zip`; `.tar.gz` by default).
    pub fn from_query(query: Option<&str>) -> Format {
        match crate::query_value(query, "format").as_deref() {
            Some("zip") => Format::Zip,
            _ => Format::TarGz,
        }
    }

    pub fn extension(self) -> &'static str {
        match self {
            Format::TarGz => ".tar.gz",
            Format::Zip => ".zip",
        }
    }

    pub fn content_type(self) -> &'static str {
        match self {
            Format::TarGz => "application/gzip",
            Format::Zip => "application/zip",
        }
    }
}

/// What [`Archive::entries`] calls with each entry: its name, a file's text.
type EachEntry<'a> = dyn FnMut(&str, Option<&[u8]>) -> Result<()> + 'a;

/// An archive to write: the tree of `path@rev`, under a top directory `name`.
pub struct Archive {
    svc: Ctx,
    path: String,
    rev: Revnum,
    /// The top directory, and the file name without its extension.
    pub name: String,
    pub format: Format,
    mtime: u64,
    /// The revision's `svn:date` (a `.zip`'s entries' time, in UTC).
    date: Option<String>,
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
        format: Format::from_query(at.query),
        mtime,
        date,
    }))
}

impl Archive {
    /// The file name offered for the download.
    pub fn file_name(&self) -> String {
        format!("{}{}", self.name, self.format.extension())
    }

    /// Writes the archive to `out`.
    pub fn write(self, out: &mut dyn Write) -> Result<()> {
        match self.format {
            Format::TarGz => self.write_tar_gz(out),
            Format::Zip => self.write_zip(out),
        }
    }

    /// Calls `each` with every entry below the directory, parents first: its name in the
    /// archive (directories end in `/`) and a file's text.
    fn entries(&self, each: &mut EachEntry<'_>) -> Result<()> {
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
            } else if kind == NodeKind::Dir {
                format!("{}/{rel}/", self.name)
            } else {
                format!("{}/{rel}", self.name)
            };
            if kind == NodeKind::Dir {
                each(&name, None)?;
                continue;
            }
            let Some(node) = self.svc.node(&path, self.rev)? else {
                continue;
            };
            let text = self.svc.read_text(&node)?;
            each(&name, Some(&text[..]))?;
        }
        Ok(())
    }

    fn write_tar_gz(self, out: &mut dyn Write) -> Result<()> {
        let gz = flate2::write::GzEncoder::new(out, flate2::Compression::fast());
        let mut tar = tar::Builder::new(gz);
        tar.mode(tar::HeaderMode::Deterministic);
        let mtime = self.mtime;
        self.entries(&mut |name, text| {
            let mut header = tar::Header::new_gnu();
            header.set_mtime(mtime);
            match text {
                None => {
                    header.set_entry_type(tar::EntryType::Directory);
                    header.set_mode(0o755);
                    header.set_size(0);
                    tar.append_data(&mut header, name, std::io::empty())
                        .map_err(io(name))
                }
                Some(text) => {
                    header.set_entry_type(tar::EntryType::Regular);
                    header.set_mode(0o644);
                    header.set_size(text.len() as u64);
                    tar.append_data(&mut header, name, text).map_err(io(name))
                }
            }
        })?;
        let gz = tar.into_inner().map_err(io("the end"))?;
        gz.finish().map_err(io("the end"))?;
        Ok(())
    }

    fn write_zip(self, out: &mut dyn Write) -> Result<()> {
        use zip::write::SimpleFileOptions;
        let mut zip = zip::ZipWriter::new_stream(out);
        let time = zip_time(self.date.as_deref());
        let options = SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
            .compression_level(Some(1))
            .last_modified_time(time);
        let zerr = |what: &str| {
            let what = what.to_string();
            move |err: zip::result::ZipError| ReposError::Io {
                context: format!("writing the archive: {what}"),
                err: std::io::Error::other(err),
            }
        };
        self.entries(&mut |name, text| match text {
            None => zip
                .add_directory(name, options.unix_permissions(0o755))
                .map_err(zerr(name)),
            Some(text) => {
                let large = text.len() as u64 >= u64::from(u32::MAX);
                zip.start_file(name, options.unix_permissions(0o644).large_file(large))
                    .map_err(zerr(name))?;
                zip.write_all(text).map_err(io(name))
            }
        })?;
        zip.finish().map_err(zerr("the end"))?;
        Ok(())
    }
}

/// An `svn:date` (`2026-11-28T11:59:30.123456Z`) as a zip entry's time (UTC; zip keeps
/// even seconds from 1980 to 2107; the earliest outside that or unreadable).
fn zip_time(date: Option<&str>) -> zip::DateTime {
    let field = |a: usize, b: usize| date.and_then(|d| d.get(a..b));
    let byte = |a: usize, b: usize| field(a, b).and_then(|s| s.parse::<u8>().ok());
    match (
        field(0, 4).and_then(|s| s.parse::<u16>().ok()),
        byte(5, 7),
        byte(8, 10),
        byte(11, 13),
        byte(14, 16),
        byte(17, 19),
    ) {
        (Some(y), Some(mo), Some(d), Some(h), Some(mi), Some(s)) => {
            zip::DateTime::from_date_and_time(y, mo, d, h, mi, s).unwrap_or_default()
        }
        _ => zip::DateTime::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_come_from_the_query_and_dates_become_zip_times() {
        assert_eq!(Format::from_query(Some("format=zip")), Format::Zip);
        assert_eq!(Format::from_query(Some("format=tar")), Format::TarGz);
        assert_eq!(Format::from_query(None), Format::TarGz);
        let t = zip_time(Some("2026-11-28T11:59:31.123456Z"));
        assert_eq!(
            (
                t.year(),
                t.month(),
                t.day(),
                t.hour(),
                t.minute(),
                t.second()
            ),
            (2026, 11, 28, 11, 59, 30)
        );
        assert_eq!(
            zip_time(Some("1970-01-01T00:00:00.000000Z")),
            zip::DateTime::default()
        );
        assert_eq!(zip_time(Some("garbage")), zip::DateTime::default());
        assert_eq!(zip_time(None), zip::DateTime::default());
    }
}
