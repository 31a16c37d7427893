//! The file operations the writer makes, behind a trait: the operating system's in
//! production ([`OsIo`]), and in tests a backend that fails, tears or forgets them as a
//! failing disk or a crash would (svelto-testkit's `SimIo`). Readers (`Repo`) read the
//! files directly: whatever a backend keeps, it keeps in the real files too.
//!
//! What the writer needs of a backend: positioned writes to existing files, their length,
//! truncation, fsync of a file's data, creating a file, rename, and fsync of a directory.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// How the writer reaches the files of `db/`.
pub trait StoreIo: Send + Sync {
    /// Opens an existing file for reading and writing.
    fn open_rw(&self, path: &Path) -> io::Result<Box<dyn IoFile>>;
    /// Creates (or empties) a file for writing.
    fn create(&self, path: &Path) -> io::Result<Box<dyn IoFile>>;
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Makes the directory's entries (creations, renames) durable.
    fn sync_dir(&self, dir: &Path) -> io::Result<()>;
}

/// One file opened by a [`StoreIo`].
pub trait IoFile: Send {
    fn size(&self) -> io::Result<u64>;
    fn write_all_at(&mut self, buf: &[u8], offset: u64) -> io::Result<()>;
    fn set_len(&mut self, len: u64) -> io::Result<()>;
    /// Makes the file's contents durable (fdatasync).
    fn sync_data(&mut self) -> io::Result<()>;
}

/// The operating system's files.
#[derive(Debug, Clone, Copy, Default)]
pub struct OsIo;

impl StoreIo for OsIo {
    fn open_rw(&self, path: &Path) -> io::Result<Box<dyn IoFile>> {
        let f = OpenOptions::new().read(true).write(true).open(path)?;
        Ok(Box::new(f))
    }
    fn create(&self, path: &Path) -> io::Result<Box<dyn IoFile>> {
        Ok(Box::new(File::create(path)?))
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        std::fs::rename(from, to)
    }
    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        File::open(dir)?.sync_all()
    }
}

impl IoFile for File {
    fn size(&self) -> io::Result<u64> {
        Ok(self.metadata()?.len())
    }
    fn write_all_at(&mut self, buf: &[u8], offset: u64) -> io::Result<()> {
        FileExt::write_all_at(self, buf, offset)
    }
    fn set_len(&mut self, len: u64) -> io::Result<()> {
        File::set_len(self, len)
    }
    fn sync_data(&mut self) -> io::Result<()> {
        File::sync_data(self)
    }
}
