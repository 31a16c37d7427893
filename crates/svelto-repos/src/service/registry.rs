//! The repositories a server has opened: one shared handle and one writer slot per
//! repository, whatever the protocol the clients speak.

use crate::{ReposError, Result};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use svelto_store::{Repo, Writer};

/// The storage caches' counters, shared by every repository: (the name a metric labels the
/// cache with, hits, misses).
pub fn cache_stats() -> Vec<(&'static str, u64, u64)> {
    svelto_store::stats::caches()
        .iter()
        .map(|(name, c)| (*name, c.hits(), c.misses()))
        .collect()
}

/// Every repository opened so far, by directory. `Repo` is a cheap handle onto shared
/// caches, so the first checkout warms what the next one reads.
#[derive(Default)]
pub struct Repos {
    map: Mutex<HashMap<PathBuf, (Repo, Arc<WriterSlot>)>>,
    /// Memory for reconstructed file texts, per repository.
    text_cache_bytes: usize,
}

impl Repos {
    pub fn new(text_cache_bytes: usize) -> Repos {
        Repos {
            map: Mutex::new(HashMap::new()),
            text_cache_bytes,
        }
    }

    /// Whether `dir` holds a Svelto repository.
    pub fn is_repo(dir: &Path) -> bool {
        dir.join("db").join("format").is_file()
    }

    /// The shared handle of the repository in `dir` and its writer slot, opened on first
    /// use, and opened again when the directory no longer holds the files the handle opened
    /// (the repository was deleted and created again, or replaced with `mv`), as svnserve
    /// opens the repository for each connection. The map's lock is not held while a
    /// repository is opened.
    pub fn open(&self, dir: &Path) -> svelto_store::Result<(Repo, Arc<WriterSlot>)> {
        let lock = || self.map.lock().unwrap_or_else(|e| e.into_inner());
        let cached = lock().get(dir).cloned();
        if let Some((r, w)) = cached {
            if !r.replaced() {
                return Ok((r, w));
            }
        }
        let r = Repo::open(dir)?;
        r.set_text_cache_limit(self.text_cache_bytes);
        // Forget the handles of other repositories deleted or replaced since (their open files
        // would keep the deleted data on disk, and their caches in memory).
        let known: Vec<(PathBuf, Repo)> = lock()
            .iter()
            .map(|(p, (r, _))| (p.clone(), r.clone()))
            .collect();
        let gone: Vec<(PathBuf, Repo)> = known.into_iter().filter(|(_, r)| r.replaced()).collect();
        let mut map = lock();
        for (p, old) in &gone {
            if map.get(p).is_some_and(|(r, _)| r.same_files(old)) {
                map.remove(p);
            }
        }
        // Another connection may have opened it meanwhile: keep one handle per repository.
        if let Some((other, w)) = map.get(dir) {
            if other.same_files(&r) {
                return Ok((other.clone(), w.clone()));
            }
        }
        let w = Arc::new(WriterSlot {
            path: dir.to_path_buf(),
            writer: Mutex::new(None),
        });
        map.insert(dir.to_path_buf(), (r.clone(), w.clone()));
        Ok((r, w))
    }
}

/// The repository's writer, kept open between commits (opening one reads the dedup index)
/// but holding the repository's write lock only while a commit runs, so that `svelto
/// admin` and other servers can write between commits.
pub struct WriterSlot {
    path: PathBuf,
    writer: Mutex<Option<Writer>>,
}

impl WriterSlot {
    /// Runs `f` with the writer, holding the write lock: commits of one repository are
    /// applied one at a time.
    pub fn with<T, E: From<svelto_store::StoreError>>(
        &self,
        f: impl FnOnce(&mut Writer) -> std::result::Result<T, E>,
    ) -> std::result::Result<T, E> {
        let mut slot = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        let fresh = match slot.as_mut() {
            Some(w) => w.relock()?,
            None => false,
        };
        if !fresh {
            *slot = None;
            *slot = Some(Writer::open(&self.path)?);
        }
        let w = slot.as_mut().expect("opened above");
        let result = f(w);
        // Anything left unpublished (a failure after the commit point) is dropped, and a
        // writer that cannot unlock is not kept.
        let clean = (w.youngest() == w.published() || w.discard_unpublished().is_ok())
            && w.unlock().is_ok();
        if !clean {
            *slot = None;
        }
        result
    }

    /// [`WriterSlot::with`] in the shape the repository's write operations take it.
    pub fn run(&self, f: &mut dyn FnMut(&mut Writer) -> Result<()>) -> Result<()> {
        self.with(|w| -> Result<(), ReposError> { f(w) })
    }
}
