//! `SimIo`: a backend for the store's writer ([`svelto_store::io::StoreIo`]) that behaves
//! as a disk under a crash and as a failing disk, after redb's fuzzer backend and SQLite's
//! crash tests.
//!
//! Every write goes through to the real file (so readers see what the writer wrote, as
//! they would see the page cache), and is also kept as *pending* until the file's fsync.
//! A crash image ([`SimIo::crash_image`]) holds, for each name the directory made durable,
//! the synced contents plus each pending write kept whole, torn (a prefix) or lost, at
//! random. Renames and creations are durable only after the directory's fsync.
//!
//! One write, truncation, fsync, rename or directory fsync (the `n`th operation) can be
//! made to fail ([`Fault`]). A failed fsync also forgets the pending writes, as Linux does
//! with the dirty pages of a failed writeback (PostgreSQL's "fsyncgate"): a writer that
//! retried the fsync would get success for data that is not on disk, and lose it.

use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use svelto_store::io::{IoFile, StoreIo};

/// What the faulty operation does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Fails without doing anything (EIO).
    Fail,
    /// A write stores a prefix of its bytes, then fails (other operations: as `Fail`).
    Tear,
}

#[derive(Debug, Clone)]
enum Pending {
    Write(u64, Vec<u8>),
    SetLen(u64),
}

#[derive(Default)]
struct Inode {
    synced: Vec<u8>,
    pending: Vec<Pending>,
}

#[derive(Default)]
struct State {
    ops: u64,
    fault: Option<(u64, Fault)>,
    inodes: Vec<Inode>,
    names: HashMap<PathBuf, usize>,
    durable: HashMap<PathBuf, usize>,
    /// A crash image taken when `ops` reached a given count.
    crash_at: Option<u64>,
    image: Option<HashMap<PathBuf, Vec<u8>>>,
    rng: u64,
}

/// A deterministic xorshift generator (tests pass seeds, never the clock).
pub struct Rng(pub u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    /// A number below `n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

fn write_at(bytes: &mut Vec<u8>, at: u64, b: &[u8]) {
    let end = at as usize + b.len();
    if bytes.len() < end {
        bytes.resize(end, 0);
    }
    bytes[at as usize..end].copy_from_slice(b);
}

fn eio() -> io::Error {
    io::Error::from_raw_os_error(5)
}

impl State {
    /// Counts an operation; Some(fault) when this one must fail.
    fn op(&mut self) -> Option<Fault> {
        let n = self.ops;
        self.ops += 1;
        if self.crash_at == Some(n) {
            self.image = Some(self.image());
        }
        match self.fault {
            Some((at, f)) if at == n => Some(f),
            _ => None,
        }
    }

    fn image(&mut self) -> HashMap<PathBuf, Vec<u8>> {
        let mut rng = Rng(self.rng);
        let mut out = HashMap::new();
        for (name, &ino) in &self.durable {
            let inode = &self.inodes[ino];
            let mut bytes = inode.synced.clone();
            for p in &inode.pending {
                let keep = rng.below(3);
                match p {
                    _ if keep == 0 => {}
                    Pending::SetLen(n) => bytes.resize(*n as usize, 0),
                    Pending::Write(at, b) => {
                        let n = if keep == 1 {
                            b.len()
                        } else {
                            rng.below(b.len() as u64 + 1) as usize
                        };
                        write_at(&mut bytes, *at, &b[..n]);
                    }
                }
            }
            out.insert(name.clone(), bytes);
        }
        self.rng = rng.0;
        out
    }
}

/// The simulated disk of one `db/` directory.
#[derive(Clone)]
pub struct SimIo {
    state: Arc<Mutex<State>>,
}

struct SimFile {
    state: Arc<Mutex<State>>,
    ino: usize,
    file: File,
}

impl SimIo {
    /// Takes over the files of `db` as they are, all of them durable.
    pub fn new(db: &Path, seed: u64) -> io::Result<SimIo> {
        let mut st = State {
            rng: Rng::new(seed).0,
            ..State::default()
        };
        for e in fs::read_dir(db)? {
            let e = e?;
            if e.file_type()?.is_file() {
                let ino = st.inodes.len();
                st.inodes.push(Inode {
                    synced: fs::read(e.path())?,
                    pending: Vec::new(),
                });
                st.names.insert(e.path(), ino);
                st.durable.insert(e.path(), ino);
            }
        }
        Ok(SimIo {
            state: Arc::new(Mutex::new(st)),
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Makes operation number `n` (counting from 0) fail as `fault` says.
    pub fn fail_at(&self, n: u64, fault: Fault) {
        self.lock().fault = Some((n, fault));
    }

    /// Takes the crash image when operation number `n` is about to run.
    pub fn crash_at(&self, n: u64) {
        self.lock().crash_at = Some(n);
    }

    /// Operations counted so far.
    pub fn ops(&self) -> u64 {
        self.lock().ops
    }

    /// What a crash leaves of the files: the image taken at `crash_at` if that was reached,
    /// else one taken now. Keys are the files' paths.
    pub fn crash_image(&self) -> HashMap<PathBuf, Vec<u8>> {
        let mut st = self.lock();
        match st.image.take() {
            Some(i) => i,
            None => st.image(),
        }
    }
}

impl StoreIo for SimIo {
    fn open_rw(&self, path: &Path) -> io::Result<Box<dyn IoFile>> {
        let ino = *self
            .lock()
            .names
            .get(path)
            .ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))?;
        let file = OpenOptions::new().read(true).write(true).open(path)?;
        Ok(Box::new(SimFile {
            state: self.state.clone(),
            ino,
            file,
        }))
    }

    fn create(&self, path: &Path) -> io::Result<Box<dyn IoFile>> {
        let file = File::create(path)?;
        let mut st = self.lock();
        let ino = st.inodes.len();
        st.inodes.push(Inode::default());
        st.names.insert(path.to_path_buf(), ino);
        Ok(Box::new(SimFile {
            state: self.state.clone(),
            ino,
            file,
        }))
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let mut st = self.lock();
        if st.op().is_some() {
            return Err(eio());
        }
        fs::rename(from, to)?;
        let ino = st
            .names
            .remove(from)
            .ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))?;
        st.names.insert(to.to_path_buf(), ino);
        Ok(())
    }

    fn sync_dir(&self, _dir: &Path) -> io::Result<()> {
        let mut st = self.lock();
        if st.op().is_some() {
            return Err(eio());
        }
        st.durable = st.names.clone();
        Ok(())
    }
}

impl IoFile for SimFile {
    fn size(&self) -> io::Result<u64> {
        Ok(self.file.metadata()?.len())
    }

    fn write_all_at(&mut self, buf: &[u8], offset: u64) -> io::Result<()> {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let fault = st.op();
        let n = match fault {
            None => buf.len(),
            Some(Fault::Fail) => 0,
            Some(Fault::Tear) => buf.len() / 2,
        };
        if n > 0 {
            self.file.write_all_at(&buf[..n], offset)?;
            let p = Pending::Write(offset, buf[..n].to_vec());
            st.inodes[self.ino].pending.push(p);
        }
        match fault {
            None => Ok(()),
            Some(_) => Err(eio()),
        }
    }

    fn set_len(&mut self, len: u64) -> io::Result<()> {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if st.op().is_some() {
            return Err(eio());
        }
        self.file.set_len(len)?;
        st.inodes[self.ino].pending.push(Pending::SetLen(len));
        Ok(())
    }

    fn sync_data(&mut self) -> io::Result<()> {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let fault = st.op();
        let inode = &mut st.inodes[self.ino];
        let pending = std::mem::take(&mut inode.pending);
        if fault.is_some() {
            // The kernel forgets the dirty pages of a failed writeback.
            return Err(eio());
        }
        for p in pending {
            match p {
                Pending::SetLen(n) => inode.synced.resize(n as usize, 0),
                Pending::Write(at, b) => write_at(&mut inode.synced, at, &b),
            }
        }
        Ok(())
    }
}
