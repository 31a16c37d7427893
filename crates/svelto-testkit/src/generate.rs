//! Dumps generated on the fly, too large to commit: a file of hundreds of
//! megabytes, written straight to disk and never held in memory.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use md5::{Digest as _, Md5};
use sha1::Sha1;

/// The UUID of every dump made by [`write_big_file_dump`].
pub const BIG_FILE_UUID: &str = "0b16f11e-5e17-4000-8000-000000000200";

/// Where the large file lives in the generated history.
pub const BIG_FILE_PATH: &str = "big/file.bin";

/// What [`write_big_file_dump`] wrote.
#[derive(Debug, Clone)]
pub struct BigFileDump {
    /// Size of the large file in bytes.
    pub file_size: u64,
    /// Size of the whole dump in bytes.
    pub dump_size: u64,
    /// SHA-1 of the whole dump (hex).
    pub dump_sha1: String,
    /// MD5 and SHA-1 of the large file (hex).
    pub file_md5: String,
    pub file_sha1: String,
}

/// Deterministic, incompressible-looking bytes (xorshift64*), the same for
/// the same seed, produced in chunks.
pub struct NoiseStream {
    state: u64,
}

impl NoiseStream {
    pub fn new(seed: u64) -> NoiseStream {
        NoiseStream {
            state: (seed ^ 0x9e37_79b9_7f4a_7c15) | 1,
        }
    }

    /// Fill `buf` with the next bytes of the stream.
    pub fn fill(&mut self, buf: &mut [u8]) {
        for chunk in buf.chunks_mut(8) {
            self.state ^= self.state >> 12;
            self.state ^= self.state << 25;
            self.state ^= self.state >> 27;
            let word = self.state.wrapping_mul(0x2545_f491_4f6c_dd1d).to_le_bytes();
            chunk.copy_from_slice(&word[..chunk.len()]);
        }
    }

    /// Feed `len` bytes of the stream, in chunks, to `sink`.
    pub fn feed(
        &mut self,
        len: u64,
        mut sink: impl FnMut(&[u8]) -> io::Result<()>,
    ) -> io::Result<()> {
        let mut buf = vec![0u8; 1 << 20];
        let mut left = len;
        while left > 0 {
            let n = left.min(buf.len() as u64) as usize;
            self.fill(&mut buf[..n]);
            sink(&buf[..n])?;
            left -= n as u64;
        }
        Ok(())
    }
}

/// A writer that counts and hashes what passes through it.
struct Hashing<W> {
    inner: W,
    sha1: Sha1,
    len: u64,
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.sha1.update(&buf[..n]);
        self.len += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

fn props(pairs: &[(&str, &str)]) -> String {
    let mut s = String::new();
    for (k, v) in pairs {
        s.push_str(&format!("K {}\n{k}\nV {}\n{v}\n", k.len(), v.len()));
    }
    s.push_str("PROPS-END\n");
    s
}

fn revision_record(rev: u64, pairs: &[(&str, &str)]) -> String {
    let p = props(pairs);
    format!(
        "Revision-number: {rev}\nProp-content-length: {len}\nContent-length: {len}\n\n{p}\n",
        len = p.len()
    )
}

/// Write, to `path`, a format-2 dump exactly as `svnadmin dump` would write
/// it for this history:
///
/// * r1 adds `big/` (with a property), `big/file.bin` (`file_size` bytes of
///   [`NoiseStream`] noise, with `svn:mime-type`) and a small `big/small.txt`;
/// * r2 copies `big/file.bin` to `big/copy.bin` (a copy without changes).
///
/// The content is generated twice (once for its checksums, which come before
/// it in the dump, once to write it), so memory use stays small whatever the
/// size.
pub fn write_big_file_dump(path: &Path, file_size: u64) -> io::Result<BigFileDump> {
    const SEED: u64 = 200;
    let mut md5 = Md5::new();
    let mut sha1 = Sha1::new();
    NoiseStream::new(SEED).feed(file_size, |chunk| {
        md5.update(chunk);
        sha1.update(chunk);
        Ok(())
    })?;
    let file_md5 = hex::encode(md5.finalize());
    let file_sha1 = hex::encode(sha1.finalize());

    let file = File::create(path)?;
    let mut out = Hashing {
        inner: BufWriter::with_capacity(1 << 20, file),
        sha1: Sha1::new(),
        len: 0,
    };
    write!(
        out,
        "SVN-fs-dump-format-version: 2\n\nUUID: {BIG_FILE_UUID}\n\n{}",
        revision_record(0, &[("svn:date", "2016-01-02T03:04:05.060708Z")])
    )?;
    write!(
        out,
        "{}",
        revision_record(
            1,
            &[
                ("svn:author", "big"),
                ("svn:date", "2016-01-02T04:05:06.070809Z"),
                ("svn:log", "A large file"),
            ],
        )
    )?;
    let dir_props = props(&[("purpose", "large file test")]);
    write!(
        out,
        "Node-path: big\nNode-kind: dir\nNode-action: add\nProp-content-length: {len}\nContent-length: {len}\n\n{dir_props}\n\n",
        len = dir_props.len()
    )?;
    let file_props = props(&[("svn:mime-type", "application/octet-stream")]);
    write!(
        out,
        "Node-path: {BIG_FILE_PATH}\nNode-kind: file\nNode-action: add\n\
         Text-content-md5: {file_md5}\nText-content-sha1: {file_sha1}\n\
         Prop-content-length: {plen}\nText-content-length: {file_size}\nContent-length: {total}\n\n{file_props}",
        plen = file_props.len(),
        total = file_props.len() as u64 + file_size,
    )?;
    NoiseStream::new(SEED).feed(file_size, |chunk| out.write_all(chunk))?;
    out.write_all(b"\n\n")?;
    let small = "a small file next to a large one\n";
    let small_md5 = hex::encode(Md5::digest(small.as_bytes()));
    let small_sha1 = hex::encode(Sha1::digest(small.as_bytes()));
    write!(
        out,
        "Node-path: big/small.txt\nNode-kind: file\nNode-action: add\n\
         Text-content-md5: {small_md5}\nText-content-sha1: {small_sha1}\n\
         Prop-content-length: 10\nText-content-length: {slen}\nContent-length: {total}\n\nPROPS-END\n{small}\n\n",
        slen = small.len(),
        total = 10 + small.len(),
    )?;
    write!(
        out,
        "{}",
        revision_record(
            2,
            &[
                ("svn:author", "big"),
                ("svn:date", "2016-01-02T05:06:07.080910Z"),
                ("svn:log", "Copy the large file"),
            ],
        )
    )?;
    write!(
        out,
        "Node-path: big/copy.bin\nNode-kind: file\nNode-action: add\n\
         Node-copyfrom-rev: 1\nNode-copyfrom-path: {BIG_FILE_PATH}\n\
         Text-copy-source-md5: {file_md5}\nText-copy-source-sha1: {file_sha1}\n\n\n"
    )?;
    out.flush()?;
    Ok(BigFileDump {
        file_size,
        dump_size: out.len,
        dump_sha1: hex::encode(out.sha1.finalize()),
        file_md5,
        file_sha1,
    })
}

/// A writer that keeps only the SHA-1 and length of what it is given (for
/// comparing hundreds of megabytes of output without holding them).
#[derive(Clone, Default)]
pub struct Sha1Sink {
    state: std::sync::Arc<std::sync::Mutex<(Sha1, u64)>>,
}

impl Sha1Sink {
    pub fn new() -> Sha1Sink {
        Sha1Sink::default()
    }

    /// The hex SHA-1 and length of everything written so far.
    pub fn result(&self) -> (String, u64) {
        let state = self.state.lock().expect("Sha1Sink lock");
        (hex::encode(state.0.clone().finalize()), state.1)
    }
}

impl Write for Sha1Sink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut state = self.state.lock().expect("Sha1Sink lock");
        state.0.update(buf);
        state.1 += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// SHA-1 (hex) and length of a file, read in chunks.
pub fn sha1_of_file(path: &Path) -> io::Result<(String, u64)> {
    let mut sink = Sha1Sink::new();
    io::copy(&mut File::open(path)?, &mut sink)?;
    Ok(sink.result())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn noise_is_deterministic_and_chunking_does_not_matter() {
        let mut a = vec![0u8; 1000];
        NoiseStream::new(7).fill(&mut a);
        let mut b = Vec::new();
        NoiseStream::new(7)
            .feed(1000, |c| {
                b.extend_from_slice(c);
                Ok(())
            })
            .expect("feeds");
        assert_eq!(a, b);
        assert_ne!(a[..8], a[8..16]);
    }

    #[test]
    fn writes_what_it_reports() {
        let dir = crate::svnadmin::tempdir();
        let path = dir.path().join("big.dump");
        let info = write_big_file_dump(&path, 3 << 20).expect("writes");
        let (sha1, len) = sha1_of_file(&path).expect("reads");
        assert_eq!(len, info.dump_size);
        assert_eq!(sha1, info.dump_sha1);
        assert!(crate::dumpfile::records(&std::fs::read(&path).expect("reads")).is_ok());
    }
}
