//! Progress of long runs (`load`, `dump`, `verify`, `hotcopy`) on standard error: a bar with
//! the revisions done, the bytes, the rate and the time left, drawn by indicatif only when
//! standard error is a terminal and `-q` was not given. Otherwise nothing is drawn, so
//! scripts and hooks see exactly svnadmin's output. svnadmin's own lines still appear; while
//! the bar is shown they are printed above it ([`Progress::above`]).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::{self, IsTerminal, Write};
use svelto_core::Revnum;

pub struct Progress {
    bar: Option<ProgressBar>,
}

fn shown(quiet: bool) -> bool {
    !quiet && io::stderr().is_terminal()
}

impl Progress {
    /// A bar over the revisions `first..=last`.
    pub fn revisions(what: &str, first: Revnum, last: Revnum, quiet: bool) -> Progress {
        if !shown(quiet) {
            return Progress { bar: None };
        }
        let bar = ProgressBar::with_draw_target(
            Some(last.saturating_sub(first) + 1),
            ProgressDrawTarget::stderr(),
        );
        bar.set_style(
            ProgressStyle::with_template(
                "{prefix} [{bar:30}] {pos}/{len} revisions, {per_sec}, {msg}ETA {eta}",
            )
            .expect("a valid template")
            .progress_chars("#>-"),
        );
        bar.set_prefix(what.to_string());
        Progress { bar: Some(bar) }
    }

    /// A bar over the bytes of an input (`total` when its length is known).
    pub fn bytes(what: &str, total: Option<u64>, quiet: bool) -> Progress {
        if !shown(quiet) {
            return Progress { bar: None };
        }
        let bar = ProgressBar::with_draw_target(total, ProgressDrawTarget::stderr());
        let template = if total.is_some() {
            "{prefix} [{bar:30}] {bytes}/{total_bytes}, {binary_bytes_per_sec}, {msg}ETA {eta}"
        } else {
            "{prefix} {spinner} {bytes}, {binary_bytes_per_sec}, {msg}"
        };
        bar.set_style(
            ProgressStyle::with_template(template)
                .expect("a valid template")
                .progress_chars("#>-"),
        );
        bar.set_prefix(what.to_string());
        Progress { bar: Some(bar) }
    }

    /// One more revision done (`rev`).
    pub fn revision(&self, rev: Revnum) {
        if let Some(bar) = &self.bar {
            bar.inc(1);
            bar.set_message(format!("r{rev}, "));
        }
    }

    /// The bytes done so far, and the revision reached.
    pub fn bytes_at(&self, done: u64, rev: Option<&str>) {
        if let Some(bar) = &self.bar {
            bar.set_position(done);
            if let Some(rev) = rev {
                bar.set_message(format!("revision {rev}, "));
            }
        }
    }

    /// Runs `print` (svnadmin's lines) with the bar out of the way.
    pub fn above<T>(&self, print: impl FnOnce() -> T) -> T {
        match &self.bar {
            Some(bar) => bar.suspend(print),
            None => print(),
        }
    }

    /// Leaves the finished bar on the terminal.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish();
        }
    }
}

/// Writes what the library says with the progress bar out of the way.
pub struct Above<'a, W: Write>(pub &'a Progress, pub W);

impl<W: Write> Write for Above<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let Above(bar, w) = self;
        bar.above(|| w.write(buf))
    }
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        let Above(bar, w) = self;
        bar.above(|| w.write_all(buf))
    }
    fn flush(&mut self) -> io::Result<()> {
        self.1.flush()
    }
}
