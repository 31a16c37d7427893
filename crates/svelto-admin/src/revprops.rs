//! `setlog`, `setrevprop`, `delrevprop`: revision property changes as svnadmin makes
//! them. The rules (validation, the hooks, the writer) are `svelto_repos::revprops`';
//! svnadmin runs the revision property hooks only when asked (`setlog` unless
//! `--bypass-hooks`, the others with `--use-pre-revprop-change-hook` and
//! `--use-post-revprop-change-hook`), as the administrator, with no authz.

use crate::{open, svn_error, Result};
use std::path::Path;
use std::sync::Arc;
use svelto_core::{code, Env, Revnum};
use svelto_fs::{Backend, WriteRepo};
use svelto_repos::revprops::{change_rev_prop_with, HookUse, RevpropChange};
use svelto_repos::Hooks;

/// What runs its argument with the repository's writer held.
pub type WithWriter<'a> = Box<
    dyn FnOnce(
            &mut dyn FnMut(&mut dyn WriteRepo) -> svelto_repos::Result<()>,
        ) -> svelto_repos::Result<()>
        + 'a,
>;

/// Sets (`Some`) or deletes (`None`) revision property `name` of `rev`, running the hooks
/// `use_hooks` names; `with_writer` runs the change with the writer held.
pub fn change(
    repo: &dyn svelto_fs::ReadRepo,
    hooks: &Hooks,
    rev: Revnum,
    name: &str,
    value: Option<&[u8]>,
    use_hooks: HookUse,
    with_writer: WithWriter<'_>,
) -> Result<()> {
    let change = RevpropChange {
        rev,
        name,
        value,
        expected: None,
        user: None,
        readable: None,
    };
    change_rev_prop_with(repo, hooks, &change, use_hooks, with_writer)?;
    Ok(())
}

/// `setlog`: the log message of `rev`, the hooks run unless `bypass_hooks`.
pub fn setlog(
    repo: &dyn svelto_fs::ReadRepo,
    hooks: &Hooks,
    rev: Revnum,
    message: &[u8],
    bypass_hooks: bool,
    with_writer: WithWriter<'_>,
) -> Result<()> {
    let use_hooks = if bypass_hooks {
        HookUse::NONE
    } else {
        HookUse::BOTH
    };
    change(
        repo,
        hooks,
        rev,
        "svn:log",
        Some(message),
        use_hooks,
        with_writer,
    )
}

/// `-t TXN` of `setrevprop` and `delrevprop`: a Svelto transaction exists only while a
/// hook examines it, and its properties are the ones the commit brought, so a
/// transaction that exists is refused (one that does not, as svnadmin says it).
pub fn txn_prop(backend: &dyn Backend, env: &Arc<dyn Env>, path: &Path, txn: &str) -> Result<()> {
    open(backend, path, env)?;
    backend.open_txn(path, txn, env)?;
    Err(svn_error(
        code::UNSUPPORTED_FEATURE,
        format!(
            "Svelto cannot change the properties of transaction '{txn}' while its commit \
             runs; change them in the revision after the commit"
        ),
    ))
}
