//! Repository maintenance that `svnadmin` does outside revisions, locks and revision
//! properties: the repository UUID (`svnadmin setuuid`).

use crate::error::{ReposError, Result, SvnErrorKind};
use svelto_fs::WriteRepo;

/// Checks `uuid` as `svn_fs_set_uuid` does (APR's `apr_uuid_parse`): 36 characters, each a
/// hexadecimal digit or, at offsets 8, 13, 18 and 23, a '-'. Subversion's
/// `SVN_ERR_BAD_UUID` otherwise.
pub fn check_uuid(uuid: &str) -> Result<()> {
    let b = uuid.as_bytes();
    let ok = b.len() == 36
        && b.iter()
            .enumerate()
            .all(|(i, &c)| c.is_ascii_hexdigit() || (c == b'-' && matches!(i, 8 | 13 | 18 | 23)));
    if ok {
        Ok(())
    } else {
        Err(ReposError::svn(
            SvnErrorKind::BadUuid,
            format!("Malformed UUID '{uuid}'"),
        ))
    }
}

/// Sets the UUID of a repository (checked as [`check_uuid`]) with its writer, so that it
/// is serialized with commits.
pub fn set_uuid(writer: &mut dyn WriteRepo, uuid: &str) -> Result<()> {
    check_uuid(uuid)?;
    writer.set_uuid(uuid)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuids_are_checked_as_apr_does() {
        for good in [
            "e63e4df0-24d0-4424-8fbb-001481502539",
            "ABCDEF78-1234-1234-1234-123456789012",
            "12345678a1234b1234c1234d123456789012",
        ] {
            assert!(check_uuid(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "bogus",
            "e63e4df0-24d0-4424-8fbb-00148150253",
            "e63e4df0-24d0-4424-8fbb-0014815025399",
            "e63e4df0-24d0-4424-8fbb-00148150253g",
            "e63e4df0224d0-4424-8fbb-00148150253-",
        ] {
            let e = check_uuid(bad).expect_err(bad);
            assert_eq!(e.to_string(), format!("Malformed UUID '{bad}'"));
        }
    }
}
