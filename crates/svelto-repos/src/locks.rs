//! Locks (`svn lock`), with Subversion's rules (`svn_fs_lock_many`, `svn_fs_unlock_many`,
//! the lock checks of a commit) and hooks (pre/post-lock, pre/post-unlock).
//!
//! All locks of a repository live in the store's lock table (`Repo::locks`, `db/locks`:
//! docs/formats/store.md), replaced whole and atomically on each change while the
//! repository's writer is held (`Writer::set_locks`), so changes are serialized with
//! commits and survive a crash; readers read it without locking.

use crate::error::{ReposError, Result, SvnErrorKind};
use crate::hooks::Hooks;
use std::collections::BTreeMap;
use std::sync::Arc;
use svelto_core::{is_ancestor, NodeKind, Revnum};
use svelto_fs::{LockTable, ReadRepo, WriteRepo};

pub use svelto_core::Lock;

/// Reads every lock of the repository (without the expired ones), to change them.
pub fn read_locks(repo: &dyn ReadRepo) -> Result<BTreeMap<String, Lock>> {
    Ok(current(repo)?.locks().clone())
}

/// The repository's locks now, without the expired ones.
fn current(repo: &dyn ReadRepo) -> Result<Arc<LockTable>> {
    let table = repo.locks()?;
    if !table.any_expiring() {
        return Ok(table);
    }
    let now = repo.env().svn_date();
    let expired = |l: &Lock| l.expires.as_deref().is_some_and(|e| e <= now.as_str());
    let mut live = table.locks().clone();
    live.retain(|_, l| !expired(l));
    Ok(Arc::new(LockTable::new(live)))
}

/// Replaces the repository's locks, under `w`, the writer of `repo`.
fn write_locks(
    repo: &dyn ReadRepo,
    w: &mut dyn WriteRepo,
    locks: BTreeMap<String, Lock>,
) -> Result<()> {
    Ok(w.set_locks(locks, repo)?)
}

/// The lock on `path`, if any.
pub fn get_lock(repo: &dyn ReadRepo, path: &str) -> Result<Option<Lock>> {
    Ok(current(repo)?.locks().get(path).cloned())
}

/// The locks at or below `path`, to `depth` (0 = the path itself, 1 = and its children,
/// None = all).
pub fn get_locks(repo: &dyn ReadRepo, path: &str, depth: Option<usize>) -> Result<Vec<Lock>> {
    let prefix_len = if path.is_empty() { 0 } else { path.len() + 1 };
    Ok(current(repo)?
        .locks()
        .values()
        .filter(|l| l.path == path || is_ancestor(path, &l.path))
        .filter(|l| match depth {
            None => true,
            Some(d) => {
                let below = l.path.get(prefix_len..).unwrap_or("");
                let n = if below.is_empty() {
                    0
                } else {
                    below.split('/').count()
                };
                n <= d
            }
        })
        .cloned()
        .collect())
}

fn uuid_of(repo: &dyn ReadRepo) -> String {
    repo.uuid().unwrap_or_default()
}

/// What a lock or unlock of several paths did: one result per target, in order, and the
/// failure of the post-lock or post-unlock hook, if it failed. A failing post hook undoes
/// nothing: the paths stay locked (unlocked), and the caller reports it after the results
/// (svnserve sends it after `done`; svnadmin exits with it).
pub struct Many<T> {
    pub results: Vec<Result<T>>,
    /// `SVN_ERR_REPOS_POST_LOCK_HOOK_FAILED` or `..._POST_UNLOCK_HOOK_FAILED`, wrapping
    /// the hook's own failure.
    pub post_hook_failure: Option<ReposError>,
}

impl<T> Many<T> {
    /// The outcome of a single target, as `svn_repos_fs_lock` gives it: the target's own
    /// failure, else the post hook's, else the result.
    pub fn single(mut self) -> Result<T> {
        let r = self
            .results
            .pop()
            .ok_or_else(|| ReposError::Internal("no lock target".into()))?;
        let v = r?;
        match self.post_hook_failure {
            Some(e) => Err(e),
            None => Ok(v),
        }
    }
}

/// What a client asks to lock.
pub struct LockTarget {
    pub path: String,
    /// The revision the client's copy is at: a newer version means out of date.
    pub current_rev: Option<Revnum>,
}

/// Whether `text` is XML-safe as `svn_xml_is_xml_safe` decides: no control character but
/// tab, line feed, carriage return and DEL.
fn xml_safe(text: &str) -> bool {
    !text
        .bytes()
        .any(|b| b.is_ascii_control() && !matches!(b, b'\t' | b'\n' | b'\r' | 0x7f))
}

/// A lock token a caller or the pre-lock hook chose, checked as `svn_fs_lock_many` checks
/// it: an `opaquelocktoken:` URI of printable ASCII that XML can carry.
pub fn check_token(token: &str) -> Result<()> {
    let bad = |message: String| Err(ReposError::svn(SvnErrorKind::BadLockToken, message));
    if !token.starts_with("opaquelocktoken:") {
        return bad(format!(
            "Lock token URI '{token}' has bad scheme; expected 'opaquelocktoken'"
        ));
    }
    if let Some(at) = token
        .bytes()
        .position(|b| !b.is_ascii() || b.is_ascii_control())
    {
        return bad(format!(
            "Lock token '{token}' is not ASCII or is a control character at byte {at}"
        ));
    }
    if !xml_safe(token) {
        return bad(format!("Lock token URI '{token}' is not XML-safe"));
    }
    Ok(())
}

/// The date `secs` seconds after the svn:date `date`.
fn date_after(date: &str, secs: u64) -> Option<String> {
    let at = svelto_core::parse_svn_date(date)?
        .checked_add(i64::try_from(secs).ok()?.checked_mul(1_000_000)?)?;
    let at = u64::try_from(at).ok()?;
    Some(svelto_core::format_svn_date(
        at / 1_000_000,
        (at % 1_000_000) as u32,
    ))
}

/// Locks `targets` for `user`: one result per target, in order (a failing pre-lock hook
/// fails only its target, as with `svn_repos_fs_lock_many`), the pre-lock and post-lock
/// hooks run only when `hooks` is given (`svnadmin lock --bypass-hooks` runs none), the
/// tokens the caller chose (None: a new
/// one), and locks that expire `expires_in` seconds after they are made (None: never; a
/// WebDAV client's `Timeout:`; an expired lock is no lock: it is left out of every read of
/// the locks, and dropped when they are next written). A token the pre-lock hook prints
/// (its whole standard output) wins; every chosen token is checked by [`check_token`], and
/// a bad one fails only its target. The locks' creation date is the later of `date` and the
/// clock once the writer is held.
#[allow(clippy::too_many_arguments)]
pub fn lock_many_with(
    repo: &dyn ReadRepo,
    hooks: Option<&Hooks>,
    user: &str,
    comment: Option<&str>,
    steal: bool,
    date: &str,
    expires_in: Option<u64>,
    targets: &[LockTarget],
    chosen: &[Option<String>],
    with_writer: impl FnOnce(&mut dyn FnMut(&mut dyn WriteRepo) -> Result<()>) -> Result<()>,
) -> Result<Many<Lock>> {
    if comment.is_some_and(|c| !xml_safe(c)) {
        return Err(ReposError::svn(
            SvnErrorKind::XmlUnescapableData,
            "Lock comment contains illegal characters",
        ));
    }
    // Hooks first: each may refuse, or choose the token.
    let mut tokens: Vec<Option<Result<Option<String>>>> = Vec::new();
    for (i, t) in targets.iter().enumerate() {
        let own = chosen.get(i).cloned().flatten();
        let from_hook = match hooks {
            Some(h) => h.pre_lock(&t.path, user, comment.unwrap_or(""), steal),
            None => Ok(None),
        };
        let token = from_hook.and_then(|hook_token| {
            let token = hook_token.or(own);
            if let Some(tok) = &token {
                check_token(tok)?;
            }
            Ok(token)
        });
        tokens.push(Some(token));
    }
    let mut results: Vec<Option<Result<Lock>>> = (0..targets.len()).map(|_| None).collect();
    let uuid = uuid_of(repo);
    let env = repo.env();
    let mut body = |w: &mut dyn WriteRepo| -> Result<()> {
        // Stamped once the writer is held, so creation dates follow the order locks are made.
        let now = env.svn_date();
        let date = now.as_str().max(date);
        let head = repo.refresh()?;
        let mut locks = read_locks(repo)?;
        let mut changed = false;
        for (i, t) in targets.iter().enumerate() {
            let token = match tokens[i].take() {
                Some(Ok(tok)) => tok,
                Some(Err(e)) => {
                    results[i] = Some(Err(e));
                    continue;
                }
                None => None,
            };
            let r = (|| -> Result<Lock> {
                let fs = format!("/{}", t.path);
                let node = repo.lookup(head, &t.path)?;
                match &node {
                    Some((_, n)) if n.kind == NodeKind::Dir => {
                        return Err(ReposError::svn(
                            SvnErrorKind::NotFile,
                            format!("'{fs}' is not a file in filesystem '{uuid}'"),
                        ))
                    }
                    None => {
                        let kind = if t.current_rev.is_some() {
                            SvnErrorKind::OutOfDate
                        } else {
                            SvnErrorKind::NotFound
                        };
                        return Err(ReposError::svn(
                            kind,
                            format!("Path '{fs}' doesn't exist in HEAD revision"),
                        ));
                    }
                    _ => {}
                }
                if let (Some(cur), Some((_, n))) = (t.current_rev, &node) {
                    if cur > head {
                        return Err(ReposError::svn(
                            SvnErrorKind::NoSuchRevision,
                            format!("No such revision {cur}"),
                        ));
                    }
                    if cur < n.created_rev {
                        return Err(ReposError::svn(
                            SvnErrorKind::OutOfDate,
                            format!("Lock failed: newer version of '{fs}' exists"),
                        ));
                    }
                }
                if let Some(existing) = locks.get(&t.path) {
                    if !steal {
                        return Err(ReposError::svn(
                            SvnErrorKind::PathAlreadyLocked,
                            format!(
                                "Path '{fs}' is already locked by user '{}' in filesystem '{uuid}'",
                                existing.owner
                            ),
                        ));
                    }
                }
                let token = token
                    .clone()
                    .unwrap_or_else(|| format!("opaquelocktoken:{}", env.uuid()));
                Ok(Lock {
                    path: t.path.clone(),
                    token,
                    owner: user.to_string(),
                    comment: comment.map(str::to_string),
                    created: date.to_string(),
                    expires: expires_in.and_then(|secs| date_after(date, secs)),
                })
            })();
            if let Ok(l) = &r {
                locks.insert(l.path.clone(), l.clone());
                changed = true;
            }
            results[i] = Some(r);
        }
        if changed {
            write_locks(repo, w, locks)?;
        }
        Ok(())
    };
    with_writer(&mut body)?;
    let results: Vec<Result<Lock>> = results
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err(ReposError::Internal("lock not attempted".into()))))
        .collect();
    let locked: Vec<String> = results
        .iter()
        .filter_map(|r| r.as_ref().ok().map(|l| l.path.clone()))
        .collect();
    let mut post_hook_failure = None;
    if let (false, Some(hooks)) = (locked.is_empty(), hooks) {
        if let Err(e) = hooks.post_lock(user, &locked) {
            post_hook_failure = Some(ReposError::Wrapped {
                kind: SvnErrorKind::PostLockHookFailed,
                message: "Locking succeeded, but post-lock hook failed".into(),
                source: Box::new(e),
            });
        }
    }
    Ok(Many {
        results,
        post_hook_failure,
    })
}

/// What a client asks to unlock: the path and the token it holds.
pub struct UnlockTarget {
    pub path: String,
    pub token: Option<String>,
}

/// Unlocks `targets` (hooks included); `brk` breaks others' locks. One result per target.
pub fn unlock_many(
    repo: &dyn ReadRepo,
    hooks: &Hooks,
    user: Option<&str>,
    brk: bool,
    targets: &[UnlockTarget],
    with_writer: impl FnOnce(&mut dyn FnMut(&mut dyn WriteRepo) -> Result<()>) -> Result<()>,
) -> Result<Many<()>> {
    unlock_many_with(repo, Some(hooks), user, brk, targets, with_writer)
}

/// [`unlock_many`] with the pre-unlock and post-unlock hooks run only when `hooks` is given
/// (`svnadmin unlock --bypass-hooks` and `rmlocks` run none).
pub fn unlock_many_with(
    repo: &dyn ReadRepo,
    hooks: Option<&Hooks>,
    user: Option<&str>,
    brk: bool,
    targets: &[UnlockTarget],
    with_writer: impl FnOnce(&mut dyn FnMut(&mut dyn WriteRepo) -> Result<()>) -> Result<()>,
) -> Result<Many<()>> {
    let uuid = uuid_of(repo);
    let mut pre: Vec<Option<Result<()>>> = targets
        .iter()
        .map(|t| {
            Some(match hooks {
                Some(h) => h.pre_unlock(
                    &t.path,
                    user.unwrap_or(""),
                    t.token.as_deref().unwrap_or(""),
                    brk,
                ),
                None => Ok(()),
            })
        })
        .collect();
    let mut results: Vec<Option<Result<()>>> = (0..targets.len()).map(|_| None).collect();
    let mut body = |w: &mut dyn WriteRepo| -> Result<()> {
        let mut locks = read_locks(repo)?;
        let mut changed = false;
        for (i, t) in targets.iter().enumerate() {
            if let Some(Err(e)) = pre[i].take() {
                results[i] = Some(Err(e));
                continue;
            }
            let fs = format!("/{}", t.path);
            let r = (|| -> Result<()> {
                let Some(lock) = locks.get(&t.path) else {
                    return Err(ReposError::svn(
                        SvnErrorKind::NoSuchLock,
                        format!("No lock on path '{fs}' in filesystem '{uuid}'"),
                    ));
                };
                if !brk {
                    let Some(u) = user else {
                        return Err(ReposError::svn(
                            SvnErrorKind::NoUser,
                            format!(
                                "Cannot unlock path '{fs}', no authenticated username available"
                            ),
                        ));
                    };
                    if t.token.as_deref() != Some(lock.token.as_str()) {
                        return Err(ReposError::svn(
                            SvnErrorKind::NoSuchLock,
                            format!("No lock on path '{fs}' in filesystem '{uuid}'"),
                        ));
                    }
                    if u != lock.owner {
                        return Err(ReposError::svn(
                            SvnErrorKind::LockOwnerMismatch,
                            format!(
                                "User '{u}' is trying to use a lock owned by '{}' in filesystem '{uuid}'",
                                lock.owner
                            ),
                        ));
                    }
                }
                Ok(())
            })();
            if r.is_ok() {
                locks.remove(&t.path);
                changed = true;
            }
            results[i] = Some(r);
        }
        if changed {
            write_locks(repo, w, locks)?;
        }
        Ok(())
    };
    with_writer(&mut body)?;
    let results: Vec<Result<()>> = results
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err(ReposError::Internal("unlock not attempted".into()))))
        .collect();
    let unlocked: Vec<String> = targets
        .iter()
        .zip(&results)
        .filter(|(_, r)| r.is_ok())
        .map(|(t, _)| t.path.clone())
        .collect();
    let mut post_hook_failure = None;
    if let (false, Some(hooks)) = (unlocked.is_empty(), hooks) {
        if let Err(e) = hooks.post_unlock(user.unwrap_or(""), &unlocked) {
            post_hook_failure = Some(ReposError::Wrapped {
                kind: SvnErrorKind::PostUnlockHookFailed,
                message: "Unlock succeeded, but post-unlock hook failed".into(),
                source: Box::new(e),
            });
        }
    }
    Ok(Many {
        results,
        post_hook_failure,
    })
}

/// A commit may change a locked path only with the lock's token, as the lock's owner.
/// `changed`: each path the commit changes, and whether everything below it changes too
/// (a delete or replace). `tokens`: the tokens the client sent (path, token).
pub fn check_commit(
    repo: &dyn ReadRepo,
    changed: &[(String, bool)],
    user: Option<&str>,
    tokens: &[(String, String)],
) -> Result<()> {
    let table = current(repo)?;
    let locks = table.locks();
    if locks.is_empty() {
        return Ok(());
    }
    for (path, recurse) in changed {
        // The path's lock, then (a delete or replace) those below it: keys sharing the
        // prefix `path/` are next to each other in the map's byte order.
        let below = if path.is_empty() {
            String::new()
        } else {
            format!("{path}/")
        };
        let under = recurse
            .then(|| {
                locks
                    .range::<str, _>((
                        std::ops::Bound::Included(below.as_str()),
                        std::ops::Bound::Unbounded,
                    ))
                    .take_while(|(k, _)| k.starts_with(below.as_str()))
                    .filter(|(k, _)| *k != path)
                    .map(|(_, l)| l)
            })
            .into_iter()
            .flatten();
        let hit = locks.get(path).into_iter().chain(under);
        for lock in hit {
            let fs = format!("/{}", lock.path);
            let Some(u) = user else {
                return Err(ReposError::svn(
                    SvnErrorKind::NoUser,
                    format!("Cannot verify lock on path '{fs}'; no username available"),
                ));
            };
            if u != lock.owner {
                return Err(ReposError::svn(
                    SvnErrorKind::LockOwnerMismatch,
                    format!(
                        "User '{u}' does not own lock on path '{fs}' (currently locked by '{}')",
                        lock.owner
                    ),
                ));
            }
            if !tokens.iter().any(|(_, t)| t == &lock.token) {
                return Err(ReposError::svn(
                    SvnErrorKind::BadLockToken,
                    format!("Cannot verify lock on path '{fs}'; no matching lock-token available"),
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use svelto_testkit::memfs::{Backend, TestRepo, BACKENDS};

    fn empty(backend: Backend) -> TestRepo {
        TestRepo::create(
            backend,
            "00000000-0000-4000-8000-000000000000",
            "2026-01-01T00:00:00.000000Z",
        )
    }

    #[test]
    fn locks_round_trip_through_the_store_and_expired_ones_are_left_out() {
        for backend in BACKENDS {
            let t = empty(backend);
            let repo = &*t.repo;
            let mut m = BTreeMap::new();
            for (p, c) in [("a b/c", Some("multi\nline: comment")), ("d", None)] {
                m.insert(
                    p.to_string(),
                    Lock {
                        path: p.to_string(),
                        token: format!("opaquelocktoken:{p}"),
                        owner: "alice".into(),
                        comment: c.map(str::to_string),
                        created: "2026-01-01T00:00:00.000000Z".into(),
                        expires: None,
                    },
                );
            }
            let mut w = t.writer();
            write_locks(repo, &mut *w, m.clone()).expect("write");
            assert_eq!(read_locks(repo).expect("read"), m, "{backend:?}");
            assert_eq!(get_locks(repo, "", Some(1)).expect("locks").len(), 1);
            assert_eq!(get_locks(repo, "", None).expect("locks").len(), 2);
            // Another handle (another process) reads the same table.
            let other = t.open_again();
            assert_eq!(read_locks(&*other).expect("read"), m, "{backend:?}");
            // A lock past its expiry date is no lock.
            let mut expiring = m.clone();
            for (p, when) in [
                ("d", "2000-01-01T00:00:00.000000Z"),
                ("a b/c", "2999-01-01T00:00:00.000000Z"),
            ] {
                expiring.get_mut(p).expect("lock").expires = Some(when.into());
            }
            write_locks(repo, &mut *w, expiring).expect("write");
            let left = read_locks(repo).expect("read");
            assert_eq!(left.keys().collect::<Vec<_>>(), ["a b/c"], "{backend:?}");
            assert_eq!(
                read_locks(&*other)
                    .expect("read")
                    .keys()
                    .collect::<Vec<_>>(),
                ["a b/c"],
                "{backend:?}: the other handle sees the new version of the table"
            );
            drop(w);
            // The local engine's table is a file: damage in it is reported.
            if let Some(path) = t.path() {
                std::fs::write(path.join("db/locks"), "svelto-locks 1\n99999:x\n").expect("write");
                let e = read_locks(repo).expect_err("garbage");
                assert!(e.to_string().contains("lock table"), "{e}");
            }
        }
        assert_eq!(
            date_after("2026-11-25T23:59:30.500000Z", 3600).as_deref(),
            Some("2026-11-26T00:59:30.500000Z")
        );
    }

    #[test]
    fn lock_dates_tokens_and_expiry_follow_the_handles_env() {
        for backend in BACKENDS {
            let t = empty(backend);
            let mut w = t.writer();
            let mut txn = w.begin().expect("txn");
            txn.make_node("f", NodeKind::File).expect("add");
            txn.set_text("f", &mut &b"text"[..]).expect("text");
            txn.commit().expect("commit");
            w.sync().expect("sync");
            let repo = &*t.repo;
            repo.refresh().expect("refresh");
            t.set_env(Arc::new(svelto_core::FixedEnv::new(
                "2030-01-01T00:00:00.000000Z",
            )));
            let lock = lock_many_with(
                repo,
                None,
                "alice",
                None,
                false,
                "2026-01-01T00:00:00.000000Z",
                Some(60),
                &[LockTarget {
                    path: "f".into(),
                    current_rev: None,
                }],
                &[None],
                |f| f(&mut *w),
            )
            .expect("lock")
            .single()
            .expect("locked");
            assert_eq!(
                lock.token, "opaquelocktoken:00000000-0000-4000-8000-000000000001",
                "{backend:?}"
            );
            assert_eq!(lock.created, "2030-01-01T00:00:00.000000Z");
            assert_eq!(lock.expires.as_deref(), Some("2030-01-01T00:01:00.000000Z"));
            assert_eq!(get_lock(repo, "f").expect("read"), Some(lock));
            t.set_env(Arc::new(svelto_core::FixedEnv::new(
                "2030-01-01T00:01:00.000000Z",
            )));
            assert_eq!(get_lock(repo, "f").expect("read"), None, "expired");
        }
    }
}
