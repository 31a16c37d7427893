//! The writing of a checkout's or an export's files (an update's too), spread over worker
//! threads while the session decodes, when asked for (`Options::writers`; none by default:
//! on two cores they won under load and lost nearly quiet, with more system time,
//! bench/results/2026-11-29/client-writers.md). A job is one file whose texts are whole in memory (at most
//! [`crate::checkout::SMALL_TEXT`] each): its pristine under its final name and its working
//! file (created new, written, its mode set); the worker reports the working file's size and
//! modification time, which the session's thread records in wc.db. The queue is bounded (so
//! is the memory it holds); larger texts are streamed by the session's thread as before.
//!
//! The first error a worker meets (with the path) stops the checkout: the session's thread
//! returns it at its next hand-off or at [`Writers::finish`], before wc.db's transaction
//! commits, as with an error of its own.

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use crate::error::{file_err, Error, Result};

/// What a working file is made of.
pub(crate) enum Content {
    /// The pristine's bytes, as they are.
    Pristine,
    /// Bytes of its own (a translated text).
    Bytes(Vec<u8>),
}

/// One file to write.
pub(crate) struct Job {
    /// The caller's tag for the result.
    pub(crate) tag: usize,
    /// The pristine text's final path and bytes (None: none to write).
    pub(crate) pristine: Option<(PathBuf, Vec<u8>)>,
    /// The pristine text's bytes when none is written but the working file is them.
    pub(crate) text: Option<Vec<u8>>,
    /// The working file (None: none).
    pub(crate) working: Option<WorkingFile>,
}

pub(crate) struct WorkingFile {
    pub(crate) path: PathBuf,
    pub(crate) content: Content,
    pub(crate) executable: bool,
    pub(crate) read_only: bool,
    /// `export --force`: a file (or link) there is removed first.
    pub(crate) make_room: bool,
    /// An update's: written to this temporary (in the working copy's `.svn/tmp`, which
    /// `svn cleanup` empties) and renamed over the file there.
    pub(crate) replace: Option<PathBuf>,
    /// Its modification time (µs since the epoch: a commit's date), else now.
    pub(crate) mtime: Option<i64>,
}

/// A finished job: its tag and the working file's size and modification time (µs).
pub(crate) type Done = (usize, Option<(u64, Option<i64>)>);

/// The worker threads and their queue.
pub(crate) struct Writers {
    jobs: Option<SyncSender<Job>>,
    done: Receiver<Result<Done>>,
    threads: Vec<JoinHandle<()>>,
    /// Set at the first error, or when the session's thread gives up: the workers write
    /// nothing more.
    stop: Arc<AtomicBool>,
    /// Jobs handed over and not yet reported.
    pending: usize,
}

impl Writers {
    /// `n` worker threads (at least one) behind a queue of `depth` jobs.
    pub(crate) fn new(n: usize, depth: usize) -> Result<Writers> {
        let (jobs, queue) = mpsc::sync_channel::<Job>(depth);
        let queue = Arc::new(Mutex::new(queue));
        let (report, done) = mpsc::channel();
        let stop = Arc::new(AtomicBool::new(false));
        let mut threads = Vec::new();
        for i in 0..n.max(1) {
            let queue = Arc::clone(&queue);
            let report = report.clone();
            let stop = Arc::clone(&stop);
            let t = std::thread::Builder::new()
                .name(format!("svelto-writer-{i}"))
                .spawn(move || work(&queue, &report, &stop))
                .map_err(|e| Error::Usage(format!("cannot start a writer thread: {e}")))?;
            threads.push(t);
        }
        Ok(Writers {
            jobs: Some(jobs),
            done,
            threads,
            stop,
            pending: 0,
        })
    }

    /// Hands `job` to a worker (waiting while the queue is full); returns the jobs finished
    /// meanwhile, or the first error a worker met.
    pub(crate) fn send(&mut self, job: Job, finished: &mut Vec<Done>) -> Result<()> {
        let Some(jobs) = &self.jobs else {
            return Err(Error::Usage("the writer threads have stopped".into()));
        };
        if jobs.send(job).is_err() {
            // Every worker is gone: one of them reported why.
            return self
                .wait(finished)
                .and(Err(Error::Usage("the writer threads have stopped".into())));
        }
        self.pending += 1;
        while let Ok(r) = self.done.try_recv() {
            self.pending -= 1;
            finished.push(r?);
        }
        Ok(())
    }

    /// Waits for every job handed over; returns them (or the first error, at once).
    pub(crate) fn wait(&mut self, finished: &mut Vec<Done>) -> Result<()> {
        while self.pending > 0 {
            match self.done.recv() {
                Ok(r) => finished.push(r?),
                Err(_) => {
                    return Err(Error::Usage(
                        "the writer threads stopped before their work was done".into(),
                    ))
                }
            }
            self.pending -= 1;
        }
        Ok(())
    }
}

impl Drop for Writers {
    fn drop(&mut self) {
        // Closing the queue ends each worker after the job it is on (what is queued is
        // not written).
        self.stop.store(true, Ordering::SeqCst);
        self.jobs = None;
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

fn work(queue: &Mutex<Receiver<Job>>, report: &mpsc::Sender<Result<Done>>, stop: &AtomicBool) {
    loop {
        let job = {
            let Ok(q) = queue.lock() else { return };
            match q.recv() {
                Ok(j) => j,
                Err(_) => return,
            }
        };
        if stop.load(Ordering::SeqCst) {
            return;
        }
        let r = write(job);
        if r.is_err() {
            stop.store(true, Ordering::SeqCst);
        }
        if report.send(r).is_err() {
            return;
        }
    }
}

fn write(job: Job) -> Result<Done> {
    let mut text = job.text;
    if let Some((path, bytes)) = job.pristine {
        let mut f = crate::checkout::create_read_only(&path)?;
        f.write_all(&bytes).map_err(file_err(&path))?;
        text = Some(bytes);
    }
    let Some(w) = job.working else {
        return Ok((job.tag, None));
    };
    if w.make_room {
        crate::checkout::remove_in_way(&w.path)?;
    }
    let bytes = match &w.content {
        Content::Pristine => text.as_deref().unwrap_or_default(),
        Content::Bytes(b) => b.as_slice(),
    };
    let tmp = w.replace.as_deref();
    let target = tmp.unwrap_or(&w.path);
    let mut f = match crate::checkout::create_new(target) {
        // (a temporary an interrupted update left)
        Err(Error::Obstructed { .. }) if tmp.is_some() => {
            std::fs::remove_file(target).map_err(file_err(target))?;
            crate::checkout::create_new(target)?
        }
        other => other?,
    };
    f.write_all(bytes).map_err(file_err(target))?;
    let meta = f.metadata().map_err(file_err(target))?;
    if w.executable || w.read_only {
        let mut mode = meta.permissions().mode();
        if w.executable {
            // Execute wherever read is allowed, as the stock client does.
            mode |= (mode & 0o444) >> 2;
        }
        if w.read_only {
            mode &= !0o222;
        }
        f.set_permissions(std::fs::Permissions::from_mode(mode))
            .map_err(file_err(target))?;
    }
    let meta = match w.mtime {
        Some(us) => {
            crate::checkout::set_mtime(&f, target, us)?;
            f.metadata().map_err(file_err(target))?
        }
        None => meta,
    };
    if let Some(tmp) = &tmp {
        drop(f);
        if let Err(e) = std::fs::rename(tmp, &w.path) {
            let _ = std::fs::remove_file(tmp);
            if w.path.symlink_metadata().is_ok_and(|m| m.is_dir()) {
                return Err(Error::Usage(format!(
                    "'{}' is a directory where the update puts a file; use 'svn update'",
                    w.path.display()
                )));
            }
            return Err(file_err(&w.path)(e));
        }
    }
    Ok((
        job.tag,
        Some((meta.len(), crate::checkout::modified_us(&meta))),
    ))
}
