//! The repositories a server has opened: one shared handle and one writer slot per
//! repository, whatever the protocol the clients speak.

use crate::{ReposError, Result};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use svelto_core::Env;
use svelto_fs::{Backend, ReadRepo, StoreError, WriteRepo};

/// A repository's shared handle and its writer slot, as [`Repos::open`] gives them (a
/// front end hands them to [`super::Ctx::new`]).
pub type Opened = (Arc<dyn ReadRepo>, Arc<WriterSlot>);

/// The repositories a server keeps open, by directory: at most `max_open` of them (more
/// only while more are in use), the least recently used idle one closed first. A handle is
/// shared by every client of its repository, with its caches, so the first checkout warms what the next one reads;
/// each open handle holds a few descriptors and its caches, so a root of thousands of
/// repositories cannot keep them all.
pub struct Repos {
    /// How a repository is opened (the composition root's choice: the local engine).
    backend: Arc<dyn Backend>,
    map: Mutex<Open>,
    /// Memory for the caches of each repository's handle.
    cache_bytes: usize,
    /// How many handles to keep open when they are idle.
    max_open: usize,
    /// The time and fresh names every handle opened here gives its users.
    env: Arc<dyn Env>,
}

/// The open handles and the clock their last use is read on.
#[derive(Default)]
struct Open {
    handles: HashMap<PathBuf, Handle>,
    clock: u64,
}

/// One repository's handle and writer slot, and when it was last handed out.
struct Handle {
    repo: Arc<dyn ReadRepo>,
    writer: Arc<WriterSlot>,
    used: u64,
}

impl Handle {
    /// Whether nobody holds it but the map: every user of a handle (a connection's or a
    /// request's `service::Ctx`) holds its writer slot too.
    fn idle(&self) -> bool {
        Arc::strong_count(&self.writer) == 1
    }
}

impl Open {
    /// Hands out `dir`'s handle, marking it used now.
    fn take(&mut self, dir: &Path) -> Option<Opened> {
        self.clock += 1;
        let now = self.clock;
        let h = self.handles.get_mut(dir)?;
        h.used = now;
        Some((h.repo.clone(), h.writer.clone()))
    }

    /// Closes the least recently used idle handles until at most `keep` remain, or only
    /// handles in use do.
    fn trim(&mut self, keep: usize) {
        if self.handles.len() <= keep {
            return;
        }
        let mut idle: Vec<(u64, PathBuf)> = self
            .handles
            .iter()
            .filter(|(_, h)| h.idle())
            .map(|(p, h)| (h.used, p.clone()))
            .collect();
        idle.sort_unstable();
        let excess = self.handles.len() - keep;
        for (_, p) in idle.into_iter().take(excess) {
            self.handles.remove(&p);
        }
    }
}

/// Idle handles a server keeps open by default (`Repos::default`).
pub const DEFAULT_MAX_OPEN: usize = 256;

impl Repos {
    /// Repositories opened by `backend`, handles with `cache_bytes` of caches each, at most
    /// `max_open` (at least 1) kept open when idle, whose users take the time and fresh
    /// names from `env` (the composition root's: the system's in a server).
    pub fn new(
        backend: Arc<dyn Backend>,
        cache_bytes: usize,
        max_open: usize,
        env: Arc<dyn Env>,
    ) -> Repos {
        Repos {
            backend,
            map: Mutex::new(Open::default()),
            cache_bytes,
            max_open: max_open.max(1),
            env,
        }
    }

    /// The time and fresh names the repositories' users take (a front end's nonces and
    /// dates outside any repository).
    pub fn env(&self) -> &Arc<dyn Env> {
        &self.env
    }

    /// The backend's caches' counters: (the name a metric labels the cache with, hits,
    /// misses).
    pub fn cache_stats(&self) -> Vec<(&'static str, u64, u64)> {
        self.backend.cache_stats()
    }

    /// How many repositories are open now.
    pub fn open_count(&self) -> usize {
        self.map
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .handles
            .len()
    }

    /// Whether `dir` holds a repository of the backend.
    pub fn is_repo(&self, dir: &Path) -> bool {
        self.backend.is_repository(dir)
    }

    /// The shared handle of the repository in `dir` and its writer slot, opened on first
    /// use, and opened again when the directory no longer holds the files the handle opened
    /// (the repository was deleted and created again, or replaced with `mv`), as svnserve
    /// opens the repository for each connection. Opening one closes the least recently
    /// used idle handles past `max_open`. The map's lock is not held while a repository is
    /// opened.
    pub fn open(&self, dir: &Path) -> svelto_fs::Result<Opened> {
        let lock = || self.map.lock().unwrap_or_else(|e| e.into_inner());
        let cached = lock().take(dir);
        if let Some((r, w)) = cached {
            if !r.replaced() {
                return Ok((r, w));
            }
        }
        let r = self.backend.open(dir, &self.env)?;
        r.set_cache_limit(self.cache_bytes);
        // Forget the handles of other repositories deleted or replaced since (their open files
        // would keep the deleted data on disk, and their caches in memory).
        let known: Vec<(PathBuf, Arc<dyn ReadRepo>)> = lock()
            .handles
            .iter()
            .map(|(p, h)| (p.clone(), h.repo.clone()))
            .collect();
        let gone: Vec<(PathBuf, Arc<dyn ReadRepo>)> =
            known.into_iter().filter(|(_, r)| r.replaced()).collect();
        let mut open = lock();
        for (p, old) in &gone {
            if open
                .handles
                .get(p)
                .is_some_and(|h| Arc::ptr_eq(&h.repo, old))
            {
                open.handles.remove(p);
            }
        }
        // Another connection may have opened it meanwhile: keep one handle per repository.
        if let Some(h) = open.handles.get(dir) {
            if h.repo.same_storage(&*r) {
                return Ok(open.take(dir).expect("present above"));
            }
        }
        open.trim(self.max_open - 1);
        open.handles.insert(
            dir.to_path_buf(),
            Handle {
                repo: r,
                writer: Arc::new(WriterSlot::new(self.backend.clone(), dir)),
                used: 0,
            },
        );
        Ok(open.take(dir).expect("inserted above"))
    }
}

/// The repository's writer, kept open between commits (opening one reads the dedup index)
/// but holding the repository's write lock only while a commit runs, so that `svelto
/// admin` and other servers can write between commits. Handed out in arrival order: each
/// caller takes a ticket and waits for its turn (a thread that just had the writer and
/// asks again goes to the back, never ahead of those waiting).
pub struct WriterSlot {
    open: Opener,
    writer: Mutex<Option<Box<dyn WriteRepo>>>,
    queue: Mutex<Tickets>,
    turn: Condvar,
}

/// Opens the repository's writer (the backend's: the slot knows only the trait).
type Opener = Box<dyn Fn() -> std::result::Result<Box<dyn WriteRepo>, StoreError> + Send + Sync>;

/// The next ticket to hand out and the one being served.
#[derive(Default)]
struct Tickets {
    next: u64,
    serving: u64,
}

/// A caller's turn with the writer; the next ticket is served when it ends, however it
/// ends (a panic included).
struct Turn<'a>(&'a WriterSlot);

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        let mut q = self.0.queue.lock().unwrap_or_else(|e| e.into_inner());
        q.serving += 1;
        drop(q);
        self.0.turn.notify_all();
    }
}

impl WriterSlot {
    /// The slot of the repository in `dir`, whose writer `backend` opens.
    pub fn new(backend: Arc<dyn Backend>, dir: &Path) -> WriterSlot {
        let dir = dir.to_path_buf();
        WriterSlot::with_opener(Box::new(move || backend.open_writer(&dir)))
    }

    /// The slot of a repository whose writer `open` opens (any backend).
    pub fn with_opener(open: Opener) -> WriterSlot {
        WriterSlot {
            open,
            writer: Mutex::new(None),
            queue: Mutex::new(Tickets::default()),
            turn: Condvar::new(),
        }
    }

    /// How many callers hold or wait for the writer.
    pub fn queued(&self) -> u64 {
        let q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        q.next - q.serving
    }

    /// Waits for this caller's turn, in arrival order.
    fn wait_turn(&self) -> Turn<'_> {
        let mut q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        let ticket = q.next;
        q.next += 1;
        while q.serving != ticket {
            q = self.turn.wait(q).unwrap_or_else(|e| e.into_inner());
        }
        Turn(self)
    }

    /// Runs `f` with the writer, holding the write lock: commits of one repository are
    /// applied one at a time, in the order they asked.
    pub fn with<T, E: From<StoreError>>(
        &self,
        f: impl FnOnce(&mut dyn WriteRepo) -> std::result::Result<T, E>,
    ) -> std::result::Result<T, E> {
        let _turn = self.wait_turn();
        let mut slot = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        let fresh = match slot.as_mut() {
            Some(w) => w.relock()?,
            None => false,
        };
        if !fresh {
            *slot = None;
            *slot = Some((self.open)()?);
        }
        let w = &mut **slot.as_mut().expect("opened above");
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
    pub fn run(&self, f: &mut dyn FnMut(&mut dyn WriteRepo) -> Result<()>) -> Result<()> {
        self.with(|w| -> Result<(), ReposError> { f(w) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Duration;
    use svelto_core::NodeKind;

    fn local() -> Arc<dyn Backend> {
        svelto_testkit::memfs::local_backend()
    }

    /// At most `max_open` handles stay open while idle, the least recently used idle one
    /// closed first; a handle in use is never closed, however old; a closed repository
    /// opens again on its next use.
    #[test]
    fn idle_handles_past_the_bound_are_closed_least_recently_used_first() {
        let dir = tempfile::tempdir().expect("tempdir");
        let paths: Vec<PathBuf> = (0..4)
            .map(|i| {
                let p = dir.path().join(format!("r{i}"));
                crate::create::create(
                    &*local(),
                    &p,
                    "00000000-0000-4000-8000-000000000000",
                    "2026-01-01T00:00:00.000000Z",
                )
                .expect("create");
                p
            })
            .collect();
        let repos = Repos::new(
            local(),
            1 << 20,
            2,
            Arc::new(svelto_core::FixedEnv::new("2026-01-01T00:00:00.000000Z")),
        );
        let weak = |i: usize| Arc::downgrade(&repos.open(&paths[i]).expect("open").1);
        let (a, b) = (weak(0), weak(1));
        assert_eq!(repos.open_count(), 2);
        // r0 used again, then r2 opened: r1, the least recently used, is closed.
        let _ = weak(0);
        let _c = weak(2);
        assert_eq!(repos.open_count(), 2);
        assert!(a.upgrade().is_some(), "r0 was used last but one");
        assert!(b.upgrade().is_none(), "r1 was the least recently used");
        // r2 held by a user: opening r3 and r1 closes r0, then r3, never r2.
        let held = repos.open(&paths[2]).expect("open r2");
        let d = weak(3);
        assert!(a.upgrade().is_none(), "r0 is closed");
        let _ = weak(1);
        assert!(d.upgrade().is_none(), "r3 is closed");
        assert_eq!(repos.open_count(), 2);
        assert!(Arc::ptr_eq(&held.1, &repos.open(&paths[2]).expect("r2").1));
        // Nothing idle to close: the bound is passed while the handles are in use.
        let more: Vec<Opened> = (0..4)
            .map(|i| repos.open(&paths[i]).expect("open"))
            .collect();
        assert_eq!(repos.open_count(), 4);
        drop(more);
        let _ = weak(0);
        assert_eq!(repos.open_count(), 4, "closed only when another opens");
        drop(held);
        let extra = dir.path().join("r4");
        crate::create::create(
            &*local(),
            &extra,
            "00000000-0000-4000-8000-000000000000",
            "2026-01-01T00:00:00.000000Z",
        )
        .expect("create");
        repos.open(&extra).expect("open r4");
        assert_eq!(repos.open_count(), 2);
    }

    /// Commits get the writer in the order they asked for it: eight committers queue
    /// one after the other behind a held writer, then commit in that order (revisions 1 to
    /// 8), and the first, asking again at once, comes after all of them (with a plain
    /// mutex it could take the writer again ahead of those waiting).
    #[test]
    fn the_writer_is_handed_out_in_arrival_order() {
        let dir = tempfile::tempdir().expect("tempdir");
        crate::create::create(
            &*local(),
            dir.path(),
            "00000000-0000-4000-8000-000000000000",
            "2026-01-01T00:00:00.000000Z",
        )
        .expect("create");
        let slot = Arc::new(WriterSlot::new(local(), dir.path()));
        let order = Arc::new(Mutex::new(Vec::new()));
        let (held_tx, held_rx) = mpsc::channel::<()>();
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let holder = {
            let slot = Arc::clone(&slot);
            std::thread::spawn(move || {
                slot.with(|_| -> Result<(), StoreError> {
                    held_tx.send(()).expect("held");
                    release_rx.recv().expect("release");
                    Ok(())
                })
            })
        };
        held_rx.recv().expect("the writer is held");
        let mut committers = Vec::new();
        for i in 0..8u64 {
            let (mine, order) = (Arc::clone(&slot), Arc::clone(&order));
            committers.push(std::thread::spawn(move || {
                for round in 0..if i == 0 { 2 } else { 1 } {
                    mine.with(|w| -> Result<(), StoreError> {
                        let mut t = w.begin()?;
                        t.make_node(&format!("f{i}-{round}"), NodeKind::File)?;
                        let rev = t.commit()?;
                        w.sync()?;
                        order.lock().expect("order").push((i, rev));
                        Ok(())
                    })
                    .expect("commit");
                }
            }));
            while slot.queued() < i + 2 {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        release_tx.send(()).expect("release");
        holder.join().expect("holder").expect("held");
        for c in committers {
            c.join().expect("committer");
        }
        let order = order.lock().expect("order").clone();
        let want: Vec<(u64, u64)> = [0, 1, 2, 3, 4, 5, 6, 7, 0].into_iter().zip(1..).collect();
        assert_eq!(order, want);
        assert_eq!(slot.queued(), 0);
    }
}
