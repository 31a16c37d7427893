//! Changing a revision property after its commit, as `svn_repos_fs_change_rev_prop4`:
//! the value is validated, the pre-revprop-change hook decides (without one, nothing may
//! change), the change is compared with the expected old value when the client asks for
//! an atomic change, written and published, and the post-revprop-change hook runs.

use crate::commit::validate_prop;
use crate::error::{ReposError, Result, SvnErrorKind};
use crate::hooks::Hooks;
use crate::log::{revision_access, Readable, RevisionAccess};
use svelto_core::{PropList, Revnum};
use svelto_fs::{ReadRepo, WriteRepo};

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
pub fn access(
    repo: &dyn ReadRepo,
    rev: Revnum,
    readable: Option<Readable<'_>>,
) -> Result<RevisionAccess> {
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
    repo: &dyn ReadRepo,
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
    repo: &dyn ReadRepo,
    hooks: &Hooks,
    change: &RevpropChange<'_>,
    with_writer: impl FnOnce(&mut dyn FnMut(&mut dyn WriteRepo) -> Result<()>) -> Result<()>,
) -> Result<()> {
    change_rev_prop_with(repo, hooks, change, HookUse::BOTH, with_writer)
}

/// Which of the revision property hooks a change runs. A client's change runs both (and
/// without a pre-revprop-change hook nothing may change); `svnadmin setrevprop` and
/// `delrevprop` run them only when asked (`--use-pre-revprop-change-hook`,
/// `--use-post-revprop-change-hook`), `setlog` unless `--bypass-hooks`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HookUse {
    pub pre: bool,
    pub post: bool,
}

impl HookUse {
    pub const BOTH: HookUse = HookUse {
        pre: true,
        post: true,
    };
    pub const NONE: HookUse = HookUse {
        pre: false,
        post: false,
    };
}

/// Makes `change` running the hooks `use_hooks` names (`svn_repos_fs_change_rev_prop4`).
pub fn change_rev_prop_with(
    repo: &dyn ReadRepo,
    hooks: &Hooks,
    change: &RevpropChange<'_>,
    use_hooks: HookUse,
    with_writer: impl FnOnce(&mut dyn FnMut(&mut dyn WriteRepo) -> Result<()>) -> Result<()>,
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
    if use_hooks.pre {
        hooks.pre_revprop_change(change.rev, change.user, change.name, action, change.value)?;
    }
    let mut write = |w: &mut dyn WriteRepo| -> Result<()> {
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
    if use_hooks.post {
        hooks.post_revprop_change(change.rev, change.user, change.name, action, old.as_deref())?;
    }
    Ok(())
}

/// A property value read from a file, with its line endings made LF as svnadmin makes them
/// (`svn_subst_translate_string2` without repair): a file that mixes line ending styles is
/// refused (`SVN_ERR_IO_INCONSISTENT_EOL`).
pub fn value_from_file(bytes: &[u8]) -> Result<Vec<u8>> {
    to_lf(bytes, false)
}

/// A property value as `--normalize-props` makes it (`svn_repos__normalize_prop`): the
/// line endings of an `svn:*` property made LF, whatever their mix; other properties as
/// they are.
pub fn normalize_prop(name: &[u8], value: &[u8]) -> Vec<u8> {
    if name.starts_with(b"svn:") {
        to_lf(value, true).expect("repairing never fails")
    } else {
        value.to_vec()
    }
}

/// CRLF and CR made LF; a mix of styles refused unless `repair`.
fn to_lf(bytes: &[u8], repair: bool) -> Result<Vec<u8>> {
    if !bytes.contains(&b'\r') {
        return Ok(bytes.to_vec());
    }
    let mut out = Vec::with_capacity(bytes.len());
    let mut style: Option<&[u8]> = None;
    let mut i = 0;
    while i < bytes.len() {
        let eol: &[u8] = match bytes[i] {
            b'\r' if bytes.get(i + 1) == Some(&b'\n') => b"\r\n",
            b'\r' => b"\r",
            b'\n' => b"\n",
            b => {
                out.push(b);
                i += 1;
                continue;
            }
        };
        if !repair && style.is_some_and(|s| s != eol) {
            return Err(ReposError::svn(
                SvnErrorKind::InconsistentEol,
                "Inconsistent line ending style",
            ));
        }
        style = Some(eol);
        out.push(b'\n');
        i += eol.len();
    }
    Ok(out)
}

/// Subversion's `svn_repos_dated_revision`: the youngest revision whose `svn:date` is not
/// after `micros` (microseconds since the epoch), 0 if none; revision dates are taken to
/// increase, as Subversion does (a binary search).
pub fn dated_rev(repo: &dyn ReadRepo, micros: i64) -> Result<Revnum> {
    let head = repo.youngest();
    let (mut lo, mut hi) = (0u64, head);
    let mut found = 0;
    while lo <= hi {
        let mid = lo + (hi - lo) / 2;
        let props = repo.revprops(mid)?;
        let d = props
            .get(&b"svn:date"[..])
            .and_then(|d| std::str::from_utf8(d).ok())
            .and_then(svelto_core::parse_svn_date)
            .unwrap_or(0);
        if d <= micros {
            found = mid;
            lo = mid + 1;
        } else if mid == 0 {
            break;
        } else {
            hi = mid - 1;
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::{normalize_prop, value_from_file};

    #[test]
    fn normalized_props_get_lf_line_endings() {
        assert_eq!(normalize_prop(b"svn:log", b"a\r\nb\rc\n"), b"a\nb\nc\n");
        assert_eq!(normalize_prop(b"other", b"a\r\nb"), b"a\r\nb");
    }

    #[test]
    fn values_from_files_get_lf_line_endings() {
        assert_eq!(value_from_file(b"a\r\nb\r\n").expect("crlf"), b"a\nb\n");
        assert_eq!(value_from_file(b"a\rb").expect("cr"), b"a\nb");
        assert_eq!(value_from_file(b"a\nb\n").expect("lf"), b"a\nb\n");
        assert_eq!(value_from_file(b"\x00\xff").expect("binary"), b"\x00\xff");
        let e = value_from_file(b"a\r\nb\n").expect_err("mixed");
        assert_eq!(e.to_string(), "Inconsistent line ending style");
    }
}
