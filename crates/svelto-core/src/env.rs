//! The time and the fresh names a library needs, given to it instead of read by it: the
//! binary passes the system's ([`SystemEnv`]), tests fixed ones ([`FixedEnv`]), and a
//! cluster backend may pass one that agrees across servers.

use std::sync::atomic::{AtomicU64, Ordering};

/// Where the time and fresh unique names come from.
pub trait Env: Send + Sync {
    /// Now, as Subversion writes `svn:date` (`YYYY-MM-DDTHH:MM:SS.uuuuuuZ`).
    fn svn_date(&self) -> String;
    /// A UUID in APR's syntax never handed out before (the body of a lock token).
    fn uuid(&self) -> String;
    /// A number that tells this process from the others serving the same repositories
    /// (the system's: the process id), for names several server processes make in one
    /// place (transactions under `db/txns`); 0 when there is one process.
    fn process_id(&self) -> u64 {
        0
    }
}

/// The system's clock and random version 4 UUIDs.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemEnv;

impl Env for SystemEnv {
    fn svn_date(&self) -> String {
        crate::svn_date_now()
    }

    fn uuid(&self) -> String {
        uuid::Uuid::new_v4().to_string()
    }

    fn process_id(&self) -> u64 {
        u64::from(std::process::id())
    }
}

/// A clock that always says `date` and UUIDs counted from 1
/// (`00000000-0000-4000-8000-000000000001`, ...): deterministic tests.
#[derive(Debug)]
pub struct FixedEnv {
    date: String,
    next: AtomicU64,
}

impl FixedEnv {
    pub fn new(date: &str) -> FixedEnv {
        FixedEnv {
            date: date.to_string(),
            next: AtomicU64::new(1),
        }
    }
}

impl Env for FixedEnv {
    fn svn_date(&self) -> String {
        self.date.clone()
    }

    fn uuid(&self) -> String {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        format!("00000000-0000-4000-8000-{:012x}", n & 0xffff_ffff_ffff)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_envs_repeat_their_date_and_count_their_uuids() {
        let e = FixedEnv::new("2026-01-01T00:00:00.000000Z");
        assert_eq!(e.svn_date(), "2026-01-01T00:00:00.000000Z");
        assert_eq!(e.uuid(), "00000000-0000-4000-8000-000000000001");
        assert_eq!(e.uuid(), "00000000-0000-4000-8000-000000000002");
        let s = SystemEnv;
        assert_ne!(s.uuid(), s.uuid());
        assert_eq!(s.svn_date().len(), 27);
        assert_eq!(
            (s.process_id(), e.process_id()),
            (u64::from(std::process::id()), 0)
        );
    }
}
