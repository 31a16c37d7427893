//! The server-wide memory budget: what connections buffer on behalf of their clients
//! (requests being read, their decoded items, responses being encoded and written, update
//! reports, commits' edits while they are sent) is counted against one bound,
//! and a request that would go over it is refused with an error instead of being taken
//! (`--memory-budget`); HTTP requests' bodies are charged against the same bound. Each
//! connection's first [`FREE_PER_CONNECTION`] bytes are not counted, so ordinary commands
//! never touch the shared counter.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Bytes a connection may buffer without a charge (its idle buffers and small commands;
/// `--max-connections` bounds their sum).
pub const FREE_PER_CONNECTION: usize = 256 * 1024;

/// The bound and what is charged against it now.
#[derive(Debug)]
pub struct MemoryBudget {
    limit: usize,
    used: AtomicUsize,
}

/// A request would take the server over its memory budget.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "The server is short of memory for this request: it needs {wanted} bytes more, and \
     {used} of the {limit} bytes the server may buffer for its clients are in use \
     (--memory-budget); try again later"
)]
pub struct OverBudget {
    pub wanted: usize,
    pub used: usize,
    pub limit: usize,
}

impl MemoryBudget {
    pub fn new(limit: usize) -> Arc<MemoryBudget> {
        Arc::new(MemoryBudget {
            limit,
            used: AtomicUsize::new(0),
        })
    }

    /// Bytes charged now.
    pub fn used(&self) -> usize {
        self.used.load(Ordering::Acquire)
    }

    pub fn limit(&self) -> usize {
        self.limit
    }

    fn take(&self, n: usize) -> Result<(), OverBudget> {
        let mut used = self.used.load(Ordering::Acquire);
        loop {
            let next = used
                .checked_add(n)
                .filter(|&next| next <= self.limit)
                .ok_or(OverBudget {
                    wanted: n,
                    used,
                    limit: self.limit,
                })?;
            match self
                .used
                .compare_exchange_weak(used, next, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return Ok(()),
                Err(now) => used = now,
            }
        }
    }

    fn give(&self, n: usize) {
        self.used.fetch_sub(n, Ordering::AcqRel);
    }
}

/// What one holder (a connection's buffers, a report) has charged; given back when it is
/// dropped, so a failing or panicking command cannot leak its share.
#[derive(Debug, Default)]
pub struct Charge {
    budget: Option<Arc<MemoryBudget>>,
    held: usize,
    free: usize,
}

impl Charge {
    /// A charge against `budget` (None: nothing is counted) whose first `free` bytes cost
    /// nothing.
    pub fn new(budget: Option<Arc<MemoryBudget>>, free: usize) -> Charge {
        Charge {
            budget,
            held: 0,
            free,
        }
    }

    /// The holder now needs `bytes` in all: the charge grows (refused, and left as it was,
    /// when the budget has no room) or shrinks to that.
    pub fn set(&mut self, bytes: usize) -> Result<(), OverBudget> {
        let Some(budget) = &self.budget else {
            return Ok(());
        };
        let want = bytes.saturating_sub(self.free);
        if want > self.held {
            budget.take(want - self.held)?;
        } else {
            budget.give(self.held - want);
        }
        self.held = want;
        Ok(())
    }

    /// A new charge against the same budget, without a free share.
    pub fn sibling(&self) -> Charge {
        Charge::new(self.budget.clone(), 0)
    }
}

impl Drop for Charge {
    fn drop(&mut self) {
        if let Some(b) = &self.budget {
            b.give(self.held);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charges_are_bounded_and_given_back() {
        let budget = MemoryBudget::new(1000);
        let mut a = Charge::new(Some(budget.clone()), 100);
        assert_eq!(a.set(100), Ok(()));
        assert_eq!(budget.used(), 0, "the free share costs nothing");
        assert_eq!(a.set(700), Ok(()));
        assert_eq!(budget.used(), 600);
        let mut b = a.sibling();
        assert_eq!(
            b.set(500),
            Err(OverBudget {
                wanted: 500,
                used: 600,
                limit: 1000
            })
        );
        assert_eq!(budget.used(), 600, "a refused charge takes nothing");
        assert_eq!(b.set(400), Ok(()));
        assert_eq!(budget.used(), 1000);
        assert_eq!(a.set(0), Ok(()));
        assert_eq!(budget.used(), 400);
        drop(b);
        assert_eq!(budget.used(), 0);
        let mut none = Charge::default();
        assert_eq!(none.set(usize::MAX), Ok(()));
    }
}
