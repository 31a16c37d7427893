//! A server's shutdown and the writes it waits for, shared by both front ends: once
//! shutdown begins no new connection or write is taken, and the process exits when the
//! writes running (commits, lock and revision property changes) have finished and their
//! clients have been answered, or when the grace period ends.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The shutdown flag and the count of writes running.
#[derive(Debug, Default)]
pub struct Drain {
    shutdown: AtomicBool,
    writes: AtomicUsize,
}

/// A write running, counted until dropped (after its client has its answer).
#[derive(Debug)]
pub struct Writing(Arc<Drain>);

impl Drop for Writing {
    fn drop(&mut self) {
        self.0.writes.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Drain {
    /// Begins the shutdown: [`Drain::is_shutting_down`] answers true from now on.
    pub fn begin_shutdown(&self) {
        self.shutdown.store(true, Ordering::SeqCst);
    }

    pub fn is_shutting_down(&self) -> bool {
        self.shutdown.load(Ordering::SeqCst)
    }

    /// Counts a write as running until the guard is dropped.
    pub fn write(self: &Arc<Self>) -> Writing {
        self.writes.fetch_add(1, Ordering::SeqCst);
        Writing(self.clone())
    }

    /// Writes running now.
    pub fn writes(&self) -> usize {
        self.writes.load(Ordering::SeqCst)
    }

    /// Waits until no write runs, at most `grace`; the number still running when it gave
    /// up (0: all finished).
    pub fn wait(&self, grace: Duration) -> usize {
        let deadline = Instant::now() + grace;
        loop {
            let n = self.writes();
            if n == 0 || Instant::now() >= deadline {
                return n;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shutdown_waits_for_running_writes_and_no_longer_than_the_grace() {
        let drain = Arc::new(Drain::default());
        assert!(!drain.is_shutting_down());
        let w = drain.write();
        drain.begin_shutdown();
        assert!(drain.is_shutting_down());
        assert_eq!(drain.wait(Duration::from_millis(30)), 1);
        let held = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            drop(w);
        });
        assert_eq!(drain.wait(Duration::from_secs(10)), 0);
        held.join().expect("the writer");
    }
}
