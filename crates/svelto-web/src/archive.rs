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
        let mut tar = tar::Builder::new(Gzip::new(out).map_err(io("the gzip header"))?);
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
                    // The entry (its header too) as stored blocks when it would not compress.
                    tar.get_mut()
                        .set_stored(incompressible(name, text))
                        .map_err(io(name))?;
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
            .compression_level(Some(i64::from(LEVEL)))
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
                let mut options = options.unix_permissions(0o644).large_file(large);
                if incompressible(name, text) {
                    // zip refuses a stored entry that names a compression level.
                    options = options
                        .compression_method(zip::CompressionMethod::Stored)
                        .compression_level(None);
                }
                zip.start_file(name, options).map_err(zerr(name))?;
                zip.write_all(text).map_err(io(name))
            }
        })?;
        zip.finish().map_err(zerr("the end"))?;
        Ok(())
    }
}

/// Whether deflating a file would be work for nothing: a format that is compressed already
/// (by its name), or bytes that look random (more than 7.5 bits of entropy a byte over
/// the first 8 KiB: compressed or encrypted data; text has 4-6, code and most binaries less).
/// An archive stores those as they are: on the medium history two such files were 6.4 of
/// a directory's 10.2 MB, and deflating them most of the archive's server CPU.
fn incompressible(name: &str, text: &[u8]) -> bool {
    let lower = name.to_ascii_lowercase();
    let packed = [
        ".png", ".jpg", ".jpeg", ".gif", ".webp", ".zip", ".gz", ".tgz", ".bz2", ".xz", ".zst",
        ".7z", ".jar", ".pdf", ".mp3", ".mp4", ".woff2",
    ];
    if packed.iter().any(|e| lower.ends_with(e)) {
        return true;
    }
    let sample = &text[..text.len().min(8192)];
    if sample.len() < 1024 {
        return false;
    }
    let mut counts = [0u32; 256];
    for &b in sample {
        counts[usize::from(b)] += 1;
    }
    let n = sample.len() as f64;
    let bits: f64 = counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = f64::from(c) / n;
            -p * p.log2()
        })
        .sum();
    bits > 7.5
}

/// The deflate level of the archives (as `gzip -1`): on text about 3x smaller than the
/// input at a fraction of the higher levels' CPU.
const LEVEL: u32 = 1;

/// A gzip stream (RFC 1952) written as it goes: deflated at [`LEVEL`], or, between
/// [`Gzip::set_stored`] calls, as deflate's stored blocks (RFC 1951 3.2.4), which cost no
/// compression for data that would not compress. A switch to stored blocks flushes the
/// compressor to a byte boundary and starts a fresh one after them (its window must not
/// reach back over bytes it did not see).
struct Gzip<W: Write> {
    out: W,
    z: flate2::Compress,
    crc: crc32fast::Hasher,
    len: u64,
    stored: bool,
    buf: Vec<u8>,
}

/// The most a stored block holds.
const STORED_MAX: usize = 65_535;

impl<W: Write> Gzip<W> {
    fn new(mut out: W) -> std::io::Result<Gzip<W>> {
        // Magic, deflate, no flags, no time, the fastest level (XFL 4), unknown system.
        out.write_all(&[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 4, 255])?;
        Ok(Gzip {
            out,
            z: flate2::Compress::new(flate2::Compression::new(LEVEL), false),
            crc: crc32fast::Hasher::new(),
            len: 0,
            stored: false,
            buf: vec![0; STORED_MAX + 5],
        })
    }

    /// Whether what is written next goes out as stored blocks.
    fn set_stored(&mut self, stored: bool) -> std::io::Result<()> {
        if stored && !self.stored {
            self.deflate(&[], flate2::FlushCompress::Sync)?;
            self.z.reset();
        }
        self.stored = stored;
        Ok(())
    }

    /// Runs the compressor over `input`, writing what it makes; with a flush, until it has
    /// made everything (`Finish`: the final block).
    fn deflate(&mut self, mut input: &[u8], flush: flate2::FlushCompress) -> std::io::Result<()> {
        loop {
            let (in0, out0) = (self.z.total_in(), self.z.total_out());
            let status = self
                .z
                .compress(input, &mut self.buf, flush)
                .map_err(std::io::Error::other)?;
            let used = (self.z.total_in() - in0) as usize;
            let made = (self.z.total_out() - out0) as usize;
            input = &input[used..];
            self.out.write_all(&self.buf[..made])?;
            let room_left = made < self.buf.len();
            let done = match flush {
                flate2::FlushCompress::Finish => status == flate2::Status::StreamEnd,
                _ => input.is_empty() && room_left,
            };
            if done {
                return Ok(());
            }
            if used == 0 && made == 0 && status != flate2::Status::Ok {
                return Err(std::io::Error::other("deflate made no progress"));
            }
        }
    }

    /// Ends the stream: the final block, the CRC-32 and the length.
    fn finish(mut self) -> std::io::Result<W> {
        self.deflate(&[], flate2::FlushCompress::Finish)?;
        let mut trailer = [0u8; 8];
        trailer[..4].copy_from_slice(&self.crc.clone().finalize().to_le_bytes());
        trailer[4..].copy_from_slice(&(self.len as u32).to_le_bytes());
        self.out.write_all(&trailer)?;
        self.out.flush()?;
        Ok(self.out)
    }
}

impl<W: Write> Write for Gzip<W> {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.crc.update(data);
        self.len += data.len() as u64;
        if !self.stored {
            self.deflate(data, flate2::FlushCompress::None)?;
            return Ok(data.len());
        }
        for block in data.chunks(STORED_MAX) {
            // Not final, type 00 (the rest of the header byte is the padding to a byte).
            let n = block.len() as u16;
            self.buf[0] = 0;
            self.buf[1..3].copy_from_slice(&n.to_le_bytes());
            self.buf[3..5].copy_from_slice(&(!n).to_le_bytes());
            self.buf[5..5 + block.len()].copy_from_slice(block);
            self.out.write_all(&self.buf[..5 + block.len()])?;
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
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
    use std::io::Read;

    #[test]
    fn packed_formats_and_random_bytes_are_stored() {
        let mut seed = 1u64;
        let random: Vec<u8> = (0..20_000)
            .map(|_| {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
                (seed >> 56) as u8
            })
            .collect();
        assert!(incompressible("a/blob.bin", &random));
        assert!(incompressible("a/logo.PNG", b"\x89PNG"));
        assert!(!incompressible("a/zeros.bin", &[0; 20_000]));
        let text = "int main(void) { return 0; } /* some words */\n".repeat(200);
        assert!(!incompressible("a/main.c", text.as_bytes()));
        // Too short to judge: deflated.
        assert!(!incompressible("a/r.bin", &random[..500]));
    }

    /// A gzip stream mixing deflated and stored parts (stored ones longer than a block,
    /// switches back and forth, empty parts) reads back as what was written.
    #[test]
    fn gzip_with_stored_parts_reads_back() {
        let text = b"some text that compresses well, again and again\n".repeat(3000);
        let binary: Vec<u8> = (0..150_000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
            .collect();
        let parts: [(&[u8], bool); 6] = [
            (&text, false),
            (&binary, true),
            (b"", true),
            (&text[..100], false),
            (&binary[..10], true),
            (b"", false),
        ];
        for last_stored in [false, true] {
            let mut gz = Gzip::new(Vec::new()).expect("header");
            let mut want = Vec::new();
            for (part, stored) in parts {
                gz.set_stored(stored).expect("switch");
                gz.write_all(part).expect("write");
                want.extend_from_slice(part);
            }
            gz.set_stored(last_stored).expect("switch");
            let bytes = gz.finish().expect("finish");
            assert!(
                bytes.len() < want.len(),
                "{} of {}",
                bytes.len(),
                want.len()
            );
            let mut got = Vec::new();
            flate2::read::GzDecoder::new(&bytes[..])
                .read_to_end(&mut got)
                .expect("a valid gzip stream");
            assert!(got == want);
        }
    }

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
