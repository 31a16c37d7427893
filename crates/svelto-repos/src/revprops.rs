//! Changing a revision property after its commit, as `svn_repos_fs_change_rev_prop4`:
//! the value is validated, the pre-revprop-change hook decides (without one, nothing may
//! change), the change is compared with the expected old value when the client asks for
//! an atomic change, written and published, and the post-revprop-change hook runs.

use crate::commit::validate_prop;
use crate::error::{ReposError, Result, SvnErrorKind};
use crate::hooks::Hooks;
use crate::log::{revision_access, Readable, RevisionAccess};
use svelto_core::{PropList, Revnum};
use svelto_store::{Repo, Writer};

/// One requested change.
pub struct RevpropChange<'a> {
    pub rev: Revnum,
    pub name: &'a str,
    /// None deletes the property.
    pub value: Option<&'a [u8]>,
    /// `Some(expected)` for an atomic change: the property must have this value (None =
    /// must be absent) when the change is made.
    pub expected: Option<Option<&'a [u8]>>,
    pub user: Option<&'a str>,
    /// The user's read check (None: everything readable). A revision the user cannot read
    /// whole cannot have its properties changed.
    pub readable: Option<Readable<'a>>,
}

/// The access `readable` gives to revision `rev` (Subversion's
/// `svn_repos_check_revision_access`): full without a check.
pub fn access(repo: &Repo, rev: Revnum, readable: Option<Readable<'_>>) -> Result<RevisionAccess> {
    let Some(readable) = readable else {
        return Ok(RevisionAccess::Full);
    };
    let meta = repo.rev_meta(rev)?;
    Ok(revision_access(&meta, readable).0)
}

/// The revision properties of `rev` that `readable` lets the user see, as
/// `svn_repos_fs_revision_proplist`: all of them for a wholly readable revision, only
/// `svn:author` and `svn:date` for a partly readable one, none for an unreadable one.
pub fn readable_revprops(
    repo: &Repo,
    rev: Revnum,
    readable: Option<Readable<'_>>,
) -> Result<PropList> {
    let mut props = repo.revprops(rev)?;
    match access(repo, rev, readable)? {
        RevisionAccess::Full => {}
        RevisionAccess::Partial => {
            props.retain(|k, _| k.as_slice() == b"svn:author" || k.as_slice() == b"svn:date")
        }
        RevisionAccess::None => props.clear(),
    }
    Ok(props)
}

/// Makes `change`; `with_writer` runs its argument with the repository's writer held.
pub fn change_rev_prop(
    repo: &Repo,
    hooks: &Hooks,
    change: &RevpropChange<'_>,
    with_writer: impl FnOnce(&mut dyn FnMut(&mut Writer) -> Result<()>) -> Result<()>,
) -> Result<()> {
    let youngest = repo.refresh()?;
    if change.rev > youngest {
        return Err(ReposError::NoSuchRevision(change.rev));
    }
    if access(repo, change.rev, change.readable)? != RevisionAccess::Full {
        return Err(ReposError::svn(
            SvnErrorKind::AuthzUnreadable,
            format!(
                "Write denied:  not authorized to read all of revision {}",
                change.rev
            ),
        ));
    }
    validate_prop(change.name.as_bytes(), change.value)?;
    let old = match change.expected {
        Some(e) => e.map(<[u8]>::to_vec),
        None => repo
            .revprops(change.rev)?
            .get(change.name.as_bytes())
            .cloned(),
    };
    let action = match (change.value, &old) {
        (None, _) => 'D',
        (Some(_), None) => 'A',
        (Some(_), Some(_)) => 'M',
    };
    hooks.pre_revprop_change(change.rev, change.user, change.name, action, change.value)?;
    let mut write = |w: &mut Writer| -> Result<()> {
        let mut props = w.view()?.revprops(change.rev)?;
        if let Some(expected) = change.expected {
            if props.get(change.name.as_bytes()).map(Vec::as_slice) != expected {
                return Err(ReposError::svn(
                    SvnErrorKind::PropBaseValueMismatch,
                    format!(
                        "revprop '{}' has unexpected value in filesystem",
                        change.name
                    ),
                ));
            }
        }
        match change.value {
            Some(v) => props.insert(change.name.as_bytes().to_vec(), v.to_vec()),
            None => props.remove(change.name.as_bytes()),
        };
        w.set_revprops(change.rev, props)?;
        w.sync()?;
        Ok(())
    };
    with_writer(&mut write)?;
    repo.refresh()?;
    hooks.post_revprop_change(change.rev, change.user, change.name, action, old.as_deref())
}
