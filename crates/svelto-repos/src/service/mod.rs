//! The repository as a server offers it to one client, whatever protocol the client
//! speaks (svn:// in svelto-server, HTTP/WebDAV in svelto-http): Subversion's server-side
//! rules, below the wire.
//!
//! A front end decodes a request, calls a method of [`Ctx`] (the client's view of one
//! repository: its handle, the user, the authz rules) and encodes what comes back. The
//! methods return plain data, or drive a trait the front end implements (an [`Editor`]
//! for reports and replay, a [`FileRevsHandler`] for blame, a callback per log entry or
//! location segment). What they check, a front end does not check again:
//! - path-based authorization of every read (`authz`: loaded per client; readable paths
//!   and revisions, revision properties, and the filtering of log, blame, locations,
//!   mergeinfo, inherited properties, locks, reports and replay). A context's identity
//!   (user, rules) is fixed when it is made and private. Every method that takes a path
//!   checks it and answers the same refusal ([`unreadable_path`]: Subversion's
//!   SVN_ERR_AUTHZ_UNREADABLE); a [`Node`] is only made by such a checked lookup, so
//!   reading a node's properties, text or entries cannot skip the check. A front end
//!   chooses only the refusal's form (svn://'s auth request, HTTP's 401 or 403);
//! - the commit's checks and hooks ([`CommitEdit`]: authz of each edit call, start-commit,
//!   locks, pre-commit, the commit point, post-commit, releasing the client's locks);
//! - lock rules (authz per path, hooks, the user who owns them);
//! - revision property rules (pre/post-revprop-change, readability of the revision).
//!
//! Must not: know a wire format, or take a front end's connection or session types.
//! Errors are [`ReposError`]s; each carries the Subversion error a client is told.

pub mod authz;
mod commit;
mod registry;

pub use authz::{AuthzCtx, AuthzSource, Where};
pub use commit::{check_new_name, CommitEdit, CommitRequest, Committed, WriteRule};
pub use registry::{Opened, Repos, WriterSlot, DEFAULT_MAX_OPEN};

use crate::locks::{Lock, LockTarget, Many, UnlockTarget};
use crate::node::Node;
use crate::report::ReadCheck;
use crate::revprops::RevpropChange;
use crate::{
    Editor, FileRevsHandler, FileRevsOptions, Hooks, Inherit, LogEntry, LogEntryRef, LogOptions,
    PreparedDrive, Readable, ReplayOptions, Report, ReportOptions, ReposError, Result, Segment,
    SvnErrorKind,
};
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use svelto_core::{join, Depth, PropList, Revnum};
use svelto_fs::ReadRepo;

/// A revision's `svn:date` and `svn:author`, when it has them.
pub type DateAuthor = (Option<Vec<u8>>, Option<Vec<u8>>);

/// `svn:date` and `svn:author` by revision for one response (the entries of a listing share
/// revisions): each revision's looked up once.
#[derive(Default)]
pub struct RevInfoMemo(HashMap<Revnum, DateAuthor>);

impl RevInfoMemo {
    pub fn get(&mut self, ctx: &Ctx, rev: Revnum) -> Result<&DateAuthor> {
        if !self.0.contains_key(&rev) {
            if self.0.len() >= 100_000 {
                self.0.clear();
            }
            self.0.insert(rev, ctx.rev_info(rev)?);
        }
        Ok(&self.0[&rev])
    }
}

/// One client's view of one repository: the shared handle, its writer, who the client is
/// and what the authz rules let them see. Cloning is cheap (handles and an `Arc`'d rule
/// set): a front end that streams an answer from another thread takes a clone along.
#[derive(Clone)]
pub struct Ctx {
    pub(crate) repo: Arc<dyn ReadRepo>,
    /// The repository's writer, for commits and other changes.
    writer: Arc<WriterSlot>,
    /// The authenticated user name; None for an anonymous client.
    user: Option<String>,
    /// Path-based authorization, when the server configures `authz-db`.
    authz: Option<AuthzCtx>,
    /// The hook environment file for this repository (it need not exist).
    hooks_env: PathBuf,
    /// (svn:date, svn:author) of revisions, for entry props and dirents (behind a lock so
    /// that a walk's receiver may ask while the walk holds the context; shared by clones).
    rev_info: Arc<Mutex<HashMap<Revnum, DateAuthor>>>,
}

/// Subversion's error for a request on a path the user cannot read: the one refusal every
/// method of [`Ctx`] answers (a front end recognizes it with [`ReposError::is_unreadable`]).
pub fn unreadable_path() -> ReposError {
    ReposError::svn(
        SvnErrorKind::AuthzUnreadable,
        "Unreadable path encountered; access denied",
    )
}

/// The refusal of one path of a lock or unlock of many (svnserve's "Authorization failed").
pub fn not_authorized() -> ReposError {
    ReposError::svn(SvnErrorKind::NotAuthorized, "Authorization failed")
}

impl Ctx {
    pub fn new(
        repo: Arc<dyn ReadRepo>,
        writer: Arc<WriterSlot>,
        user: Option<String>,
        authz: Option<AuthzCtx>,
        hooks_env: PathBuf,
    ) -> Ctx {
        Ctx {
            repo,
            writer,
            user,
            authz,
            hooks_env,
            rev_info: Arc::new(Mutex::new(HashMap::new())),
        }
    }

    /// This context for another user (svn://'s mid-session login): the same repository,
    /// rules and caches; the identity is again fixed.
    pub fn with_user(&self, user: Option<String>) -> Ctx {
        Ctx {
            user,
            ..self.clone()
        }
    }

    /// This context with the identity admission decided (HTTP reads the repository's
    /// configuration and rules through an anonymous context first).
    pub fn admitted(
        self,
        user: Option<String>,
        authz: Option<AuthzCtx>,
        hooks_env: PathBuf,
    ) -> Ctx {
        Ctx {
            user,
            authz,
            hooks_env,
            ..self
        }
    }

    /// The authenticated user name; None for an anonymous client.
    pub fn user(&self) -> Option<&str> {
        self.user.as_deref()
    }

    /// Whether path-based rules apply to this client.
    pub fn has_authz(&self) -> bool {
        self.authz.is_some()
    }

    /// The repository's writer slot.
    pub fn writer(&self) -> &Arc<WriterSlot> {
        &self.writer
    }

    /// Where the time and fresh names come from for this repository's users (the `Env`
    /// the composition root gave [`Repos::new`]): a front end takes the dates it writes
    /// (a lock's, a commit's earliest `svn:date`, a page's "now") and its nonces here.
    pub fn env(&self) -> Arc<dyn svelto_core::Env> {
        self.repo.env()
    }

    /// The hook environment file for this repository.
    pub fn hooks_env(&self) -> &std::path::Path {
        &self.hooks_env
    }

    /// The refusal unless the user may read `path`.
    fn readable(&self, path: &str) -> Result<()> {
        if self.allowed(path, false) {
            Ok(())
        } else {
            Err(unreadable_path())
        }
    }

    /// Whether the rules allow reading (`write`: writing) at `at` (always without authz).
    pub fn allows(&self, at: &Where, write: bool) -> bool {
        self.authz
            .as_ref()
            .is_none_or(|a| a.allows(self.user.as_deref(), at, write))
    }

    /// Whether `path` (a repository relpath) may be read (`write`: written).
    pub fn allowed(&self, path: &str, write: bool) -> bool {
        // Without rules nothing is built: every lookup of a node asks.
        self.authz.is_none() || self.allows(&Where::Path(path.to_string()), write)
    }

    /// Whether `path` and everything below it may be read (`write`: written): mod_authz_svn's
    /// check of a recursive request's URL (always without authz).
    pub fn allowed_recursive(&self, path: &str, write: bool) -> bool {
        self.authz
            .as_ref()
            .is_none_or(|a| a.allows_recursive(self.user.as_deref(), path, write))
    }

    /// The commit editor's check: "Access denied" (not readable / not writable) unless the
    /// path (with `recursive`, everything below it too) is allowed.
    pub fn require(&self, path: &str, write: bool, recursive: bool) -> Result<()> {
        let ok = match &self.authz {
            None => true,
            Some(a) if recursive => a.allows_recursive(self.user.as_deref(), path, write),
            Some(_) => self.allowed(path, write),
        };
        if ok {
            Ok(())
        } else if write {
            Err(ReposError::svn(
                SvnErrorKind::AuthzUnwritable,
                "Access denied",
            ))
        } else {
            Err(ReposError::svn(
                SvnErrorKind::AuthzUnreadable,
                "Access denied",
            ))
        }
    }

    /// The read check handed to drives (None without authz).
    pub fn read_check(&self) -> Option<ReadCheck> {
        self.authz
            .as_ref()
            .map(|a| a.read_check(self.user.as_deref()))
    }

    /// The repository's hooks, with this client's hook environment.
    pub fn hooks(&self) -> Result<Hooks> {
        match self.repo.local_dir() {
            Some(dir) => Hooks::new(dir, Some(&self.hooks_env)),
            None => Ok(Hooks::none()),
        }
    }

    /// The youngest revision, read again (commits by others are seen).
    pub fn head(&self) -> Result<Revnum> {
        Ok(self.repo.refresh()?)
    }

    /// A requested revision, or HEAD (freshly read) when none was given.
    pub fn rev_or_head(&self, rev: Option<Revnum>) -> Result<Revnum> {
        let head = self.head()?;
        match rev {
            None => Ok(head),
            Some(r) if r > head => Err(ReposError::NoSuchRevision(r)),
            Some(r) => Ok(r),
        }
    }

    /// The youngest revision as last read (no file read: for the request log).
    pub fn youngest(&self) -> Revnum {
        self.repo.youngest()
    }

    /// [`Ctx::youngest`] as a function that outlives a borrow of the context.
    pub fn youngest_fn(&self) -> impl Fn() -> Revnum + Send + 'static {
        let repo = self.repo.clone();
        move || repo.youngest()
    }

    /// svn:date and svn:author of a revision, cached for the client's life (bounded).
    pub fn rev_info(&self, rev: Revnum) -> Result<DateAuthor> {
        let cache = || self.rev_info.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(v) = cache().get(&rev) {
            return Ok(v.clone());
        }
        let props = self.repo.revprops(rev)?;
        let v = (
            props.get(&b"svn:date"[..]).cloned(),
            props.get(&b"svn:author"[..]).cloned(),
        );
        let mut cache = cache();
        if cache.len() > 100_000 {
            cache.clear();
        }
        cache.insert(rev, v.clone());
        Ok(v)
    }

    /// The youngest revision whose `svn:date` is not after `micros` (svn_repos_dated_revision),
    /// HEAD read again first.
    pub fn dated_rev(&self, micros: i64) -> Result<Revnum> {
        self.head()?;
        crate::revprops::dated_rev(&*self.repo, micros)
    }

    /// The node at `path` in `rev`, or None when there is none; the refusal when the user
    /// may not read `path`.
    pub fn node(&self, path: &str, rev: Revnum) -> Result<Option<Node>> {
        self.readable(path)?;
        Ok(self
            .repo
            .lookup(rev, path)?
            .map(|(_, n)| Node(n, Arc::from(path))))
    }

    /// The entry `name` of the directory `dir`, or None when there is none (or `dir` is a
    /// file): one step of a path lookup, for a front end that keeps the directories it
    /// found ([`Ctx::node`] walks from the root). The refusal when the user may not read
    /// the entry's path.
    pub fn child(&self, dir: &Node, name: &str) -> Result<Option<Node>> {
        let path = join(dir.path(), name);
        self.readable(&path)?;
        Ok(self
            .repo
            .child(&dir.0, name)?
            .map(|(_, n)| Node(n, Arc::from(path))))
    }

    /// The node at `path` in `rev` when `rev` changed `path` (None otherwise: use
    /// [`Ctx::node`]): no walk from the root (the changed paths' index). The refusal when
    /// the user may not read `path`.
    pub fn changed_node(&self, path: &str, rev: Revnum) -> Result<Option<Node>> {
        self.readable(path)?;
        Ok(self
            .repo
            .changed_node(rev, path)?
            .map(|(_, n)| Node(n, Arc::from(path))))
    }

    /// The node at `path` in `rev`; "File not found" when there is none, the refusal when
    /// the user may not read `path`.
    pub fn node_at(&self, path: &str, rev: Revnum) -> Result<Node> {
        self.readable(path)?;
        Ok(Node(self.repo.node_at(rev, path)?.1, Arc::from(path)))
    }

    /// A node's own properties.
    pub fn node_props(&self, node: &Node) -> Result<PropList> {
        Ok(self.repo.props(&node.0)?)
    }

    /// A node's own properties as the repository's cache holds them, shared: no copy (a
    /// `GET` reads one, `svn:mime-type`).
    pub fn node_props_shared(&self, node: &Node) -> Result<Arc<PropList>> {
        Ok(self.repo.props_shared(node.0.props)?)
    }

    /// A file's contents to `out`.
    pub fn write_text(&self, file: &Node, out: &mut dyn std::io::Write) -> Result<()> {
        Ok(self.repo.write_text(&file.0.file_text(), out)?)
    }

    /// A file's contents window by window when it is stored self-contained and too large
    /// to be held whole (as [`Ctx::write_text`] streams it: past `svelto_fs::DELTA_MAX`);
    /// None otherwise: [`Ctx::read_text`] then holds it (as `write_text` would).
    pub fn large_text(&self, file: &Node) -> Result<Option<TextChunks>> {
        Ok(self
            .repo
            .large_text_chunks(&file.0.file_text())?
            .map(TextChunks))
    }

    /// A file's whole contents, shared with the repository's text cache (empty for a
    /// directory or an empty file).
    pub fn read_text(&self, file: &Node) -> Result<Arc<Vec<u8>>> {
        match &file.0.text {
            Some(t) if t.rep.is_some() => Ok(self.repo.read_text(t)?),
            _ => Ok(Arc::new(Vec::new())),
        }
    }

    /// The delta from the contents of file `base` to those of file `target`: the windows
    /// `target` is stored as when they are a delta against `base`'s version (one read; the
    /// writer made them with the same [`svelto_delta::delta_windows`] from the same two
    /// texts), else computed from both texts.
    pub fn file_delta(&self, base: &Node, target: &Node) -> Result<Vec<svelto_delta::Window>> {
        let (b, t) = (base.0.file_text(), target.0.file_text());
        if let Some(windows) = self.repo.stored_delta(&t, b.rep)? {
            return Ok(windows);
        }
        let source = self.read_text(base)?;
        let text = self.read_text(target)?;
        Ok(svelto_delta::delta_windows(&source, &text))
    }

    /// The repository's UUID.
    pub fn uuid(&self) -> Result<String> {
        Ok(self.repo.uuid()?)
    }

    /// The authz rules of `src` for this repository (in `repo_dir`), read now
    /// ([`authz::load`]).
    pub fn load_authz(
        &self,
        src: AuthzSource<'_>,
        repo_dir: &std::path::Path,
    ) -> std::result::Result<AuthzCtx, String> {
        authz::load(src, &*self.repo, repo_dir)
    }

    /// The "safe created revisions" of nodes in `rev` (mod_dav_svn's, for its hrefs).
    pub fn safe_cr(&self, rev: Revnum) -> crate::SafeCr {
        crate::SafeCr::new(self.repo.clone(), rev)
    }

    /// The entries of directory `dir` the user may read, in order, each with its name and
    /// node, to `receiver` (the others are left out, as svnserve and mod_dav_svn leave them).
    pub fn dir_entries(
        &self,
        dir: &Node,
        receiver: &mut dyn FnMut(&str, &Node) -> Result<()>,
    ) -> Result<()> {
        for e in self.repo.dir(&dir.0)?.iter() {
            let path = join(dir.path(), &e.name);
            if !self.allowed(&path, false) {
                continue;
            }
            receiver(&e.name, &Node(self.repo.node(e.node)?, Arc::from(path)))?;
        }
        Ok(())
    }

    /// `svn ls`'s walk of `path` in `rev` (svn_repos_list): each entry the user may read, to
    /// `depth`, whose name matches one of `patterns` (all without), to `receiver`.
    pub fn list(
        &self,
        path: &str,
        rev: Revnum,
        depth: Depth,
        patterns: Option<&[Vec<u8>]>,
        receiver: &mut dyn FnMut(&str, &crate::ListedNode) -> Result<()>,
    ) -> Result<()> {
        self.readable(path)?;
        let allowed = |p: &str| self.allowed(p, false);
        crate::list::list(
            &*self.repo,
            path,
            rev,
            depth,
            patterns,
            Some(&allowed),
            receiver,
        )
    }

    /// Runs `f` with the read check as the history functions take it.
    fn with_readable<T>(&self, f: impl FnOnce(Option<Readable<'_>>) -> T) -> T {
        let check = self.read_check();
        f(check.as_ref().map(|c| c.as_ref() as Readable<'_>))
    }

    /// The revision properties of `rev` the user may see (all of them without authz).
    pub fn readable_revprops(&self, rev: Revnum) -> Result<PropList> {
        self.with_readable(|r| crate::revprops::readable_revprops(&*self.repo, rev, r))
    }

    /// The properties of each ancestor of `path` that has any, root first; ancestors the
    /// user cannot read are left out (svn_repos_fs_get_inherited_props).
    pub fn inherited_props(&self, path: &str, rev: Revnum) -> Result<Vec<(String, PropList)>> {
        self.readable(path)?;
        let mut iprops = crate::inherited_props(&*self.repo, path, rev)?;
        iprops.retain(|(p, _)| self.allowed(p, false));
        Ok(iprops)
    }

    /// `log`: each entry to `receiver`, filtered by the authz rules.
    pub fn log(
        &self,
        opts: &LogOptions,
        receiver: &mut dyn FnMut(LogEntry) -> Result<()>,
    ) -> Result<()> {
        self.with_readable(|r| crate::log_authz(&*self.repo, opts, r, receiver))
    }

    /// [`Ctx::log`] giving each entry borrowed from the revisions' metadata.
    pub fn log_ref(
        &self,
        opts: &LogOptions,
        receiver: &mut dyn FnMut(&LogEntryRef<'_>) -> Result<()>,
    ) -> Result<()> {
        self.with_readable(|r| crate::log_authz_ref(&*self.repo, opts, r, receiver))
    }

    /// Where `path@peg` was in each of `revs` (youngest first under authz): the path must be
    /// readable; tracing stops at the first location that is not (svn_repos_trace_node_locations).
    pub fn locations(
        &self,
        path: &str,
        peg: Revnum,
        revs: &[Revnum],
    ) -> Result<Vec<(Revnum, String)>> {
        self.head()?;
        let mut locations = crate::get_locations(&*self.repo, path, peg, revs)?;
        if let Some(readable) = self.read_check() {
            if !readable(path) {
                return Err(unreadable_path());
            }
            locations.sort_by_key(|l| std::cmp::Reverse(l.0));
            let keep = locations.iter().take_while(|(_, p)| readable(p)).count();
            locations.truncate(keep);
        }
        Ok(locations)
    }

    /// The location segments of `path@peg` from `start` down to `end`, youngest first; the
    /// first unreadable one ends the answer.
    pub fn location_segments(
        &self,
        path: &str,
        peg: Revnum,
        start: Revnum,
        end: Revnum,
        receiver: &mut dyn FnMut(Segment) -> Result<()>,
    ) -> Result<()> {
        let check = self.read_check();
        if check.as_ref().is_some_and(|r| !r(path)) {
            return Err(unreadable_path());
        }
        let mut stopped = false;
        crate::location_segments(&*self.repo, path, peg, start, end, &mut |seg| {
            if stopped {
                return Ok(());
            }
            if let (Some(r), Some(p)) = (&check, &seg.path) {
                if !r(p) {
                    stopped = true;
                    return Ok(());
                }
            }
            receiver(seg)
        })
    }

    /// The revision `path@peg` was deleted in, up to `end` (None: it was not).
    pub fn deleted_rev(&self, path: &str, peg: Revnum, end: Revnum) -> Result<Option<Revnum>> {
        self.readable(path)?;
        self.head()?;
        crate::deleted_rev(&*self.repo, path, peg, end)
    }

    /// Blame's input: each version of `path` to `handler`, filtered by the authz rules.
    pub fn file_revs(
        &self,
        path: &str,
        opts: &FileRevsOptions,
        handler: &mut dyn FileRevsHandler,
    ) -> Result<()> {
        self.readable(path)?;
        self.head()?;
        self.with_readable(|r| crate::get_file_revs_authz(&*self.repo, path, opts, r, handler))
    }

    /// The mergeinfo of `paths` at `rev`. Unreadable paths are left out before looking (the
    /// mergeinfo found, and descendants' paths, are not filtered: Subversion does not either).
    pub fn mergeinfo(
        &self,
        paths: &[String],
        rev: Revnum,
        inherit: Inherit,
        include_descendants: bool,
    ) -> Result<BTreeMap<String, String>> {
        let paths: Vec<String> = paths
            .iter()
            .filter(|p| self.allowed(p, false))
            .cloned()
            .collect();
        if paths.is_empty() {
            return Ok(BTreeMap::new());
        }
        crate::get_mergeinfo(&*self.repo, &paths, Some(rev), inherit, include_descendants)
    }

    /// Revision `rev` as an editor drive, filtered by the authz rules.
    pub fn replay(&self, rev: Revnum, opts: &ReplayOptions, editor: &mut dyn Editor) -> Result<()> {
        self.readable(opts.base_dir.trim_matches('/'))?;
        self.with_readable(|r| crate::replay::replay_authz(&*self.repo, rev, opts, r, editor))
    }

    /// A report checked against the repository, ready to drive an editor under the authz
    /// rules.
    pub fn prepare_report(&self, opts: &ReportOptions, report: Report) -> Result<PreparedDrive> {
        let mut prepared = crate::prepare(&self.repo, opts, report)?;
        if let Some(check) = self.read_check() {
            prepared = prepared.with_read_check(check);
        }
        Ok(prepared)
    }

    /// Sets (or, with `value` None, deletes) revision property `name` of `rev`, through the
    /// pre- and post-revprop-change hooks; `expected` is the atomic change's old value.
    pub fn change_rev_prop(
        &mut self,
        rev: Revnum,
        name: &str,
        value: Option<&[u8]>,
        expected: Option<Option<&[u8]>>,
    ) -> Result<()> {
        let hooks = self.hooks()?;
        let writer = self.writer.clone();
        self.with_readable(|readable| {
            let req = RevpropChange {
                rev,
                name,
                value,
                expected,
                user: self.user.as_deref(),
                readable,
            };
            crate::revprops::change_rev_prop(&*self.repo, &hooks, &req, |f| writer.run(f))
        })?;
        self.rev_info
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&rev);
        Ok(())
    }

    /// Locks `targets` for the user (who must be named), one result per target in order
    /// (a path the authz rules do not let the user write gets [`not_authorized`]), and the
    /// post-lock hook's failure, if it failed.
    pub fn lock_many(
        &self,
        comment: Option<&str>,
        steal: bool,
        date: &str,
        targets: Vec<LockTarget>,
    ) -> Result<Many<Lock>> {
        self.lock_many_expiring(comment, steal, date, None, targets)
    }

    /// [`Ctx::lock_many`] of locks that expire `expires_in` seconds after they are made
    /// (None: never; a WebDAV `Timeout:`).
    pub fn lock_many_expiring(
        &self,
        comment: Option<&str>,
        steal: bool,
        date: &str,
        expires_in: Option<u64>,
        targets: Vec<LockTarget>,
    ) -> Result<Many<Lock>> {
        let tokens = vec![None; targets.len()];
        self.lock_many_tokens(comment, steal, date, expires_in, targets, tokens)
    }

    /// A lock made again with its token and comment, for `expires_in` more seconds (None:
    /// never) from `date`: a WebDAV client's refresh, which mod_dav_svn makes by stealing
    /// the lock with its own token (the hooks run as for a steal; the owner becomes the
    /// user, the creation date `date`).
    pub fn refresh_lock(
        &self,
        lock: &Lock,
        date: &str,
        expires_in: Option<u64>,
    ) -> Result<Many<Lock>> {
        let target = LockTarget {
            path: lock.path.clone(),
            current_rev: None,
        };
        let tokens = vec![Some(lock.token.clone())];
        self.lock_many_tokens(
            lock.comment.as_deref(),
            true,
            date,
            expires_in,
            vec![target],
            tokens,
        )
    }

    fn lock_many_tokens(
        &self,
        comment: Option<&str>,
        steal: bool,
        date: &str,
        expires_in: Option<u64>,
        targets: Vec<LockTarget>,
        tokens: Vec<Option<String>>,
    ) -> Result<Many<Lock>> {
        let user = self.user.clone().ok_or_else(not_authorized)?;
        let hooks = self.hooks()?;
        let (denied, allowed) = self.split_writable(targets, |t| &t.path);
        let tokens: Vec<Option<String>> = tokens
            .into_iter()
            .zip(&denied)
            .filter(|(_, d)| !**d)
            .map(|(t, _)| t)
            .collect();
        let done = crate::locks::lock_many_with(
            &*self.repo,
            Some(&hooks),
            &user,
            comment,
            steal,
            date,
            expires_in,
            &allowed,
            &tokens,
            |f| self.writer.run(f),
        )?;
        Ok(merge_refused(&denied, done))
    }

    /// Unlocks `targets` (`brk`: others' locks too), one result per target in order (a path
    /// the authz rules do not let the user write gets [`not_authorized`]), and the
    /// post-unlock hook's failure, if it failed.
    pub fn unlock_many(&self, brk: bool, targets: Vec<UnlockTarget>) -> Result<Many<()>> {
        let hooks = self.hooks()?;
        let (denied, allowed) = self.split_writable(targets, |t| &t.path);
        let done = crate::locks::unlock_many(
            &*self.repo,
            &hooks,
            self.user.as_deref(),
            brk,
            &allowed,
            |f| self.writer.run(f),
        )?;
        Ok(merge_refused(&denied, done))
    }

    /// Which of `targets` the user may not write, and those they may.
    fn split_writable<T>(&self, targets: Vec<T>, path: impl Fn(&T) -> &str) -> (Vec<bool>, Vec<T>) {
        let denied: Vec<bool> = targets
            .iter()
            .map(|t| !self.allowed(path(t), true))
            .collect();
        let allowed = targets
            .into_iter()
            .zip(&denied)
            .filter(|(_, d)| !**d)
            .map(|(t, _)| t)
            .collect();
        (denied, allowed)
    }

    /// Whether this user, holding the lock tokens `tokens`, may change `path` (`recurse`:
    /// and everything below it) as the repository's locks stand: the check a commit makes
    /// of the paths it changes, made as each change arrives (FSFS makes it on every change
    /// of a transaction; HTTP's requests carry their tokens in `If:` headers).
    pub fn check_locks(&self, path: &str, recurse: bool, tokens: &[String]) -> Result<()> {
        let tokens: Vec<(String, String)> =
            tokens.iter().map(|t| (String::new(), t.clone())).collect();
        crate::locks::check_commit(
            &*self.repo,
            &[(path.to_string(), recurse)],
            self.user.as_deref(),
            &tokens,
        )
    }

    /// The lock on `path`, if any.
    pub fn get_lock(&self, path: &str) -> Result<Option<Lock>> {
        self.readable(path)?;
        crate::locks::get_lock(&*self.repo, path)
    }

    /// The locks at or below `path` to `depth` levels (None: all) that the user may read.
    pub fn get_locks(&self, path: &str, depth: Option<usize>) -> Result<Vec<Lock>> {
        self.readable(path)?;
        let mut locks = crate::locks::get_locks(&*self.repo, path, depth)?;
        locks.retain(|l| self.allowed(&l.path, false));
        Ok(locks)
    }
}

/// The results of the allowed targets, with [`not_authorized`] in the places of the denied.
fn merge_refused<T>(denied: &[bool], done: Many<T>) -> Many<T> {
    let mut results = done.results.into_iter();
    let results = denied
        .iter()
        .map(|d| {
            if *d {
                Err(not_authorized())
            } else {
                results.next().unwrap_or_else(|| Err(not_authorized()))
            }
        })
        .collect();
    Many {
        results,
        post_hook_failure: done.post_hook_failure,
    }
}

/// A large file's contents, one piece per stored window, in order ([`Ctx::large_text`]).
pub struct TextChunks(svelto_fs::TextChunks);

impl Iterator for TextChunks {
    type Item = Result<Vec<u8>>;

    fn next(&mut self) -> Option<Result<Vec<u8>>> {
        self.0.next().map(|r| r.map_err(Into::into))
    }
}
