//! A commit as a client drives it, under the server's rules: the authz check of each edit
//! call (svnserve's and mod_dav_svn's commit editor), start-commit when the edit opens,
//! and at the end the lock check, pre-commit, the commit point, post-commit and the
//! release of the client's locks.

use super::Ctx;
use crate::commit::TextDelta;
use crate::locks::UnlockTarget;
use crate::{CommitTxn, Hooks, ReposError, Result, SvnErrorKind};
use std::ops::Deref;
use svelto_core::{Env, NodeKind, PropList, Revnum};

fn base36(mut n: u64, width: usize) -> String {
    let mut digits = Vec::new();
    while n > 0 || digits.len() < width.max(1) {
        digits.push(b"0123456789abcdefghijklmnopqrstuvwxyz"[(n % 36) as usize]);
        n /= 36;
    }
    digits.reverse();
    String::from_utf8_lossy(&digits).into_owned()
}

/// Transaction names: the base revision, the process id of the handle's `Env` in five
/// base-36 digits, so that the names of every server process on a repository differ (one
/// `svelto serve -t` runs per svn+ssh connection, and staged transactions of all of them
/// share `db/txns`), and 64 bits of a fresh UUID of that `Env` (random from the system's)
/// in 13 base-36 digits: names one process makes differ, and over HTTP a transaction's
/// name is all a request names it by, so it must not be guessable from another (the owner
/// check in `svelto-http` refuses other users anyway).
fn txn_name(base: Revnum, env: &dyn Env) -> String {
    // Base 36, as FSFS names its transactions; Linux process ids fit five digits.
    let pid = env.process_id();
    // A fresh UUID's halves each hold a few fixed bits; their sum of bits does not.
    let fresh = u128::from_str_radix(&env.uuid().replace('-', ""), 16).unwrap_or_default();
    let random = (fresh >> 64) as u64 ^ fresh as u64;
    format!("{base}-{}{}", base36(pid, 5), base36(random, 13))
}

/// What a client asks for besides the edit.
#[derive(Debug, Clone, Default)]
pub struct CommitRequest {
    /// The revision properties; `svn:author` is replaced by the user's name.
    pub revprops: PropList,
    /// The lock tokens the client holds, with the repository paths they name.
    pub lock_tokens: Vec<(String, String)>,
    /// The same tokens with the paths as the client sent them: what the pre-commit hook
    /// is handed.
    pub hook_lock_tokens: Vec<(String, String)>,
    /// Keep the locks after the commit (else they are released).
    pub keep_locks: bool,
    /// The client's capabilities as the start-commit hook is given them (`mergeinfo`).
    pub capabilities: String,
    /// Which paths an addition or a deletion needs write access to.
    pub write_rule: WriteRule,
    /// Appended to the transaction's name after a `_` when not empty: a cluster front end's
    /// id, so that any front end can tell which one holds an HTTP transaction
    /// (docs/cluster.md, "HTTP transactions"). Empty on one machine: names unchanged.
    pub name_tag: String,
}

/// Which paths an addition or a deletion needs write access to. The peers differ, and each
/// protocol answers as its peer does (Subversion's authz_tests 5 passes on both).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum WriteRule {
    /// svnserve's commit editor (svn://): the path (recursively, for a directory) and its
    /// parent directory.
    #[default]
    PathAndParent,
    /// mod_authz_svn with mod_dav_svn (HTTP): each request's own path only (a `DELETE`
    /// recursively; a `MKCOL`, `PUT` or `COPY` destination itself); mod_dav_svn adds and
    /// deletes without the editor's check of the parent, so `svn rm` of a writable
    /// directory under a read-only parent goes through.
    PathOnly,
}

/// A revision committed.
#[derive(Debug, Clone)]
pub struct Committed {
    pub rev: Revnum,
    /// Its `svn:date`.
    pub date: String,
    /// Its `svn:author`.
    pub author: Option<String>,
    /// What a failing post-commit hook said.
    pub post_commit_warning: Option<String>,
}

/// An edit being driven by a client (see the module comment). Each call checks the authz
/// rules, then the recorded edit's own rules (`CommitTxn`). `C` holds the client's [`Ctx`]:
/// a borrow for svn://, where the edit lives inside one command, or an `Arc<Ctx>` for
/// HTTP, where the transaction outlives the request that began it.
pub struct CommitEdit<C: Deref<Target = Ctx>> {
    ctx: C,
    txn: CommitTxn,
    hooks: Hooks,
    req: CommitRequest,
}

impl Ctx {
    /// Begins a commit on the youngest revision. svnserve checks write access on each path
    /// whose lock token the client hands over before the commit starts
    /// (`SVN_ERR_RA_NOT_AUTHORIZED`, no message).
    pub fn begin_commit(&self, req: CommitRequest) -> Result<CommitEdit<&Ctx>> {
        CommitEdit::begin(self, req)
    }
}

impl<C: Deref<Target = Ctx>> CommitEdit<C> {
    /// [`Ctx::begin_commit`] for any holder of the client's [`Ctx`].
    pub fn begin(ctx: C, mut req: CommitRequest) -> Result<CommitEdit<C>> {
        let this: &Ctx = &ctx;
        if req
            .lock_tokens
            .iter()
            .any(|(path, _)| !this.allowed(path, true))
        {
            return Err(ReposError::svn(SvnErrorKind::NotAuthorized, ""));
        }
        // The author is who authenticated; a client cannot claim another name.
        req.revprops.remove(&b"svn:author"[..]);
        if let Some(u) = &this.user {
            req.revprops
                .insert(b"svn:author".to_vec(), u.as_bytes().to_vec());
        }
        let base = this.head()?;
        let mut name = txn_name(base, &*this.repo.env());
        if !req.name_tag.is_empty() {
            name.push('_');
            name.push_str(&req.name_tag);
        }
        let txn = CommitTxn::begin(this.repo.clone(), &name, req.revprops.clone())?;
        let hooks = this.hooks()?;
        Ok(CommitEdit {
            ctx,
            txn,
            hooks,
            req,
        })
    }

    /// The transaction's name (what hooks see).
    pub fn name(&self) -> &str {
        self.txn.name()
    }

    /// The client's view of the repository the edit is on.
    pub fn ctx(&self) -> &Ctx {
        &self.ctx
    }

    /// What is at `path` in the edit so far (None: nothing).
    pub fn lookup(&self, path: &str) -> Result<Option<crate::commit::Seen>> {
        self.txn.lookup(path)
    }

    /// The lock tokens the client hands over when it ends the edit (HTTP's MERGE carries
    /// them), with the paths as the pre-commit hook is to see them, and whether the locks
    /// are kept afterwards: checked as [`Ctx::begin_commit`] checks those given at the start.
    pub fn hand_over_locks(
        &mut self,
        tokens: Vec<(String, String)>,
        hook_tokens: Vec<(String, String)>,
        keep_locks: bool,
    ) -> Result<()> {
        if tokens.iter().any(|(path, _)| !self.ctx.allowed(path, true)) {
            return Err(ReposError::svn(SvnErrorKind::NotAuthorized, ""));
        }
        self.req.lock_tokens = tokens;
        self.req.hook_lock_tokens = hook_tokens;
        self.req.keep_locks = keep_locks;
        Ok(())
    }

    /// Sets (None: deletes) the revision property `name` the commit will have, as a
    /// client changes a transaction's properties before committing it. `svn:author` is
    /// who the client is and stays so.
    pub fn set_revprop(&mut self, name: &[u8], value: Option<&[u8]>) -> Result<()> {
        if name == b"svn:author" {
            return Ok(());
        }
        crate::commit::validate_prop(name, value)?;
        match value {
            Some(v) => {
                self.txn.revprops.insert(name.to_vec(), v.to_vec());
            }
            None => {
                self.txn.revprops.remove(name);
            }
        }
        Ok(())
    }

    /// What the edit holds in memory so far (`CommitTxn::memory`; open text deltas are
    /// the caller's, `TextDelta::memory`).
    pub fn memory(&self) -> usize {
        self.txn.memory()
    }

    /// Opens the edit's root at base revision `rev`; the start-commit hook runs.
    pub fn open_root(&mut self, rev: Option<Revnum>) -> Result<()> {
        self.txn.open_root(rev)?;
        self.hooks.start_commit(
            self.ctx.user.as_deref(),
            &self.req.capabilities,
            self.txn.name(),
        )
    }

    /// Deletes `path` (as of `rev`) from directory `parent`: needs write access to the path
    /// (recursive, for a directory) and, by [`WriteRule::PathAndParent`], to its parent.
    pub fn delete(&mut self, path: &str, rev: Option<Revnum>, parent: &str) -> Result<()> {
        if self.ctx.authz.is_some() {
            let is_dir = self
                .txn
                .lookup(path)?
                .is_some_and(|seen| seen.kind == NodeKind::Dir);
            self.ctx.require(path, true, is_dir)?;
            if self.req.write_rule == WriteRule::PathAndParent {
                self.ctx.require(parent, true, false)?;
            }
        }
        self.txn.delete(path, rev)
    }

    /// Adds `path` of `kind` in directory `parent`, a copy of `copy` (source path and
    /// revision) or new. Needs write access to the path (recursive for a copied directory)
    /// and, by [`WriteRule::PathAndParent`], to its parent; a copy needs read access to its
    /// source.
    pub fn add(
        &mut self,
        path: &str,
        kind: NodeKind,
        copy: Option<(String, Option<Revnum>)>,
        parent: &str,
        parent_copied: bool,
    ) -> Result<()> {
        if self.ctx.authz.is_some() {
            let is_dir = kind == NodeKind::Dir;
            self.ctx.require(path, true, copy.is_some() && is_dir)?;
            if self.req.write_rule == WriteRule::PathAndParent {
                self.ctx.require(parent, true, false)?;
            }
            if let Some((from, Some(_))) = &copy {
                self.ctx.require(from, false, is_dir)?;
            }
        }
        let copy = match copy {
            Some((from, Some(rev))) => Some((from, rev)),
            Some((_, None)) => {
                return Err(ReposError::svn(
                    SvnErrorKind::FsGeneral,
                    format!("Got source path but no source revision for '/{path}'"),
                ))
            }
            None => None,
        };
        self.txn.add(path, kind, copy, parent_copied)
    }

    /// Opens directory `path` (`client_path` as the client named it, for messages).
    pub fn open_dir(&mut self, path: &str, client_path: &str) -> Result<()> {
        self.txn.open_dir(path, client_path)
    }

    /// Opens file `path` at base revision `rev`: needs read access.
    pub fn open_file(&mut self, path: &str, rev: Option<Revnum>) -> Result<()> {
        self.ctx.require(path, false, false)?;
        self.txn.open_file(path, rev)
    }

    /// Checks that directory `path`'s properties are those of revision `rev` (before its
    /// first property change).
    pub fn check_dir_current(&mut self, path: &str, rev: Revnum) -> Result<()> {
        self.txn.check_dir_current(path, rev)
    }

    /// Sets (None: deletes) property `name` of `path`: needs write access.
    pub fn change_prop(&mut self, path: &str, name: &[u8], value: Option<&[u8]>) -> Result<()> {
        self.ctx.require(path, true, false)?;
        self.txn.change_prop(path, name, value)
    }

    /// Starts a new text for file `path` (a delta against the text whose MD5 is `base`):
    /// needs write access.
    pub fn start_text(&mut self, path: &str, base: Option<&str>) -> Result<TextDelta> {
        self.ctx.require(path, true, false)?;
        self.txn.start_text(path, base)
    }

    /// Applies a chunk of the client's svndiff.
    pub fn text_chunk(&mut self, td: &mut TextDelta, chunk: &[u8]) -> Result<()> {
        self.txn.text_chunk(td, chunk)
    }

    /// Ends a text.
    pub fn end_text(&mut self, td: TextDelta) -> Result<()> {
        self.txn.end_text(td)
    }

    /// The MD5 (hex) of file `path`'s text in the edit so far.
    pub fn text_md5(&self, path: &str) -> Result<String> {
        self.txn.text_md5(path)
    }

    /// Closes file `path`, checking its text against `md5` when given.
    pub fn close_file(&mut self, path: &str, md5: Option<&str>) -> Result<()> {
        self.txn.close_file(path, md5)
    }

    /// The edit is complete. The locks are checked; when the repository has a pre-commit
    /// hook, the edit is staged as a transaction apart from the revision files
    /// (`CommitTxn::stage`) and the hook runs on it without the writer held, as svnserve
    /// runs pre-commit before FSFS takes its write lock: a slow or hung hook holds up only
    /// its own commit. Then, under the writer (no lock can be taken or broken between the
    /// check and the commit, no other revision lands), the locks are checked again, the
    /// edit is checked against the revisions committed meanwhile (`Conflict at 'PATH'`
    /// when they touched what it touches, as FSFS's merge of a transaction into a newer
    /// HEAD) and applied to the youngest revision, and the revision is published. Its
    /// `svn:date` is stamped once the writer is held, as FSFS stamps it inside its write
    /// lock: the latest of `date` (the earliest date wanted), the clock then, and the
    /// youngest revision's date, so dates never go backwards as revision numbers go up.
    /// Then post-commit runs and, unless the client keeps them, the locks it handed over
    /// are released (errors there are not reported).
    pub fn finish(self, date: &str) -> Result<Committed> {
        let CommitEdit {
            ctx,
            mut txn,
            hooks,
            req,
        } = self;
        let name = txn.name().to_string();
        let changed = txn.changed_paths();
        let check_locks = || {
            crate::locks::check_commit(&*ctx.repo, &changed, ctx.user.as_deref(), &req.lock_tokens)
        };
        check_locks()?;
        if hooks.exists("pre-commit")? {
            let staged = txn.stage(ctx.repo.env().svn_date().as_str().max(date))?;
            let verdict = hooks.pre_commit(&name, &req.hook_lock_tokens);
            drop(staged);
            verdict?;
        }
        // Recorded with the publication: a cluster runs the hook on another front end if
        // this one dies before it ran (docs/cluster.md, "Hooks").
        let post_commit = matches!(hooks.exists("post-commit"), Ok(true));
        let (rev, date) = ctx
            .writer
            .with(|w| -> Result<(Revnum, String), ReposError> {
                check_locks()?;
                let now = ctx.repo.env().svn_date();
                let prepared = txn.prepare(w, now.as_str().max(date))?;
                let date = prepared.date().to_string();
                let rev = if post_commit {
                    prepared.publish_running_post_commit(&name)?
                } else {
                    prepared.publish()?
                };
                Ok((rev, date))
            })?;
        // Published: whatever follows, the hook runs and the client hears of the commit
        // (an error here used to skip both, the hook then left to no front end while this
        // one lives; the refresh is tried again by the next request).
        let _ = ctx.head();
        let warning = hooks.post_commit(rev, &name);
        if post_commit {
            ctx.repo.post_commit_ran(rev);
        }
        if !req.keep_locks && !req.lock_tokens.is_empty() {
            let targets: Vec<UnlockTarget> = req
                .lock_tokens
                .iter()
                .map(|(path, token)| UnlockTarget {
                    path: path.clone(),
                    token: Some(token.clone()),
                })
                .collect();
            let _ = crate::locks::unlock_many(
                &*ctx.repo,
                &hooks,
                ctx.user.as_deref(),
                false,
                &targets,
                |f| ctx.writer.run(f),
            );
        }
        Ok(Committed {
            rev,
            date,
            author: ctx.user.clone(),
            post_commit_warning: warning,
        })
    }
}

/// Subversion refuses new names with control characters (`svn_path_check_valid`), quoting
/// the path with those characters as octal escapes.
pub fn check_new_name(path: &[u8]) -> Result<()> {
    let Some(&c) = path.iter().find(|b| b.is_ascii_control()) else {
        return Ok(());
    };
    let mut shown = String::new();
    for &b in path {
        if b.is_ascii_control() {
            shown.push_str(&format!("\\{b:03o}"));
        } else {
            shown.push(b as char);
        }
    }
    Err(ReposError::svn(
        SvnErrorKind::PathSyntax,
        format!("Invalid control character '0x{c:02x}' in path '{shown}'"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use svelto_core::SystemEnv;

    /// Names differ between commits of one process and between processes (the process id
    /// of the `Env`, in five base-36 digits), and end in 13 random digits.
    #[test]
    fn transaction_names_hold_the_process_id_and_random_digits() {
        let (a, b) = (txn_name(7, &SystemEnv), txn_name(7, &SystemEnv));
        assert_ne!(a, b);
        let pid = base36(SystemEnv.process_id(), 5);
        for name in [&a, &b] {
            assert!(name.starts_with("7-"), "{name}");
            assert_eq!(&name[name.len() - 18..name.len() - 13], pid, "{name}");
            assert!(
                name[2..].bytes().all(|c| c.is_ascii_alphanumeric()),
                "{name}"
            );
        }
        let same = a[a.len() - 13..]
            .bytes()
            .zip(b[b.len() - 13..].bytes())
            .filter(|(x, y)| x == y)
            .count();
        assert!(same < 10, "{a} {b}");
        // The names come from the Env alone: a fixed one names alike in every run.
        let fixed = svelto_core::FixedEnv::new("2026-01-01T00:00:00.000000Z");
        let (c, d) = (txn_name(3, &fixed), txn_name(3, &fixed));
        assert_ne!(c, d);
        assert_eq!(c, txn_name(3, &svelto_core::FixedEnv::new("")));
        assert!(c.starts_with("3-00000") && c.len() == 20, "{c}");
        assert_eq!(base36(0, 5), "00000");
        assert_eq!(base36(36, 1), "10");
    }
}
