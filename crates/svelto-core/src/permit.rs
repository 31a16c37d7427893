//! A place in a bounded count (connections served, refusals being sent), held by a guard
//! that gives it back when dropped: when its thread ends, by a panic too, or when the
//! thread that was to own it could not start. Both front ends bound their connections
//! with it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// A place in the count `counter(owner)`, given back on drop.
pub struct Permit<O> {
    owner: Arc<O>,
    counter: fn(&O) -> &AtomicUsize,
}

impl<O> Permit<O> {
    /// A place in `counter(owner)`, unless it already counts `max`.
    pub fn take(owner: &Arc<O>, counter: fn(&O) -> &AtomicUsize, max: usize) -> Option<Self> {
        counter(owner)
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < max).then_some(n + 1)
            })
            .ok()
            .map(|_| Permit {
                owner: owner.clone(),
                counter,
            })
    }

    /// What holds the count (the server's shared state).
    pub fn owner(&self) -> &Arc<O> {
        &self.owner
    }
}

impl<O> Drop for Permit<O> {
    fn drop(&mut self) {
        (self.counter)(&self.owner).fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_are_bounded_and_given_back() {
        let count = Arc::new(AtomicUsize::new(0));
        fn of(c: &AtomicUsize) -> &AtomicUsize {
            c
        }
        let a = Permit::take(&count, of, 2).expect("a first place");
        let b = Permit::take(&count, of, 2).expect("a second place");
        assert!(Permit::take(&count, of, 2).is_none(), "two places only");
        drop(a);
        let c = Permit::take(&count, of, 2).expect("the place given back");
        let joined = std::thread::spawn(move || {
            let _held = c;
            panic!("a connection's bug");
        })
        .join();
        assert!(joined.is_err());
        drop(b);
        assert_eq!(count.load(Ordering::Acquire), 0);
    }
}
