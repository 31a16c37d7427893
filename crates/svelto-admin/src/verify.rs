//! `verify`: every revision's data and checksums, with svnadmin's progress lines
//! (standard output), its error lines (standard error) and its `--keep-going` summary.

use crate::{AdminError, Result, PROG};
use std::io::Write;
use svelto_core::Revnum;
use svelto_fs::ReadRepo;
use svelto_repos::verify::{self as check, NormalizationIssue};
use svelto_repos::ReposError;

/// What `verify` checks and says.
#[derive(Debug, Clone, Default)]
pub struct VerifyOptions {
    /// The revisions verified, `start..=end`.
    pub start: Revnum,
    pub end: Revnum,
    /// No progress lines (errors still).
    pub quiet: bool,
    /// Go on after a damaged revision; list them all at the end.
    pub keep_going: bool,
    /// Only the repository's metadata, not each revision's tree.
    pub metadata_only: bool,
    /// Also report names that differ only in their Unicode normalization.
    pub check_normalization: bool,
}

/// An error as svnadmin prints it: (code, message) lines, outermost first.
pub type ErrorLines<'a> = &'a dyn Fn(&ReposError) -> Vec<(u32, String)>;

/// FSFS verifies its index of each shard of 1,000 revisions and says so at the first
/// revision of each; Svelto reads each revision's records in the same pass and says it at
/// the same revisions, so that the output is svnadmin's.
const SHARD: Revnum = 1000;

/// Writes without failing: a reader that went away does not stop a verification.
fn say(w: &mut dyn Write, text: &str) {
    let _ = w.write_all(text.as_bytes());
    let _ = w.flush();
}

/// Verifies `repo` as `svnadmin verify` does, writing its progress to `out` and its error
/// lines to `err` (each error's lines as `lines` gives them); `progress` hears each
/// revision verified. Ok(true): all verified; Ok(false): damage found and reported with
/// `keep_going` (svnadmin then fails with "Failed to verify repository"); Err: the
/// first damage, without `keep_going` (its "* Error verifying" line written).
pub fn verify(
    repo: &dyn ReadRepo,
    opts: &VerifyOptions,
    out: &mut dyn Write,
    err: &mut dyn Write,
    progress: &mut dyn FnMut(Revnum),
    lines: ErrorLines<'_>,
) -> Result<bool> {
    let (start, end) = (opts.start, opts.end);
    let youngest = repo.youngest();
    let mut failed: Vec<(Revnum, ReposError)> = Vec::new();
    let mut metadata_failed = false;
    // A damaged revision (or the metadata), as svnadmin's verify callback reports it.
    let mut fail = |err: &mut dyn Write, rev: Option<Revnum>, e: ReposError| -> Result<()> {
        match rev {
            Some(rev) => say(err, &format!("* Error verifying revision {rev}.\n")),
            None => say(err, "* Error verifying repository metadata.\n"),
        }
        if !opts.keep_going {
            return Err(AdminError::Repos(e));
        }
        let mut text = String::new();
        for (code, message) in lines(&e) {
            text.push_str(&format!("{PROG}: E{code:06}: {message}\n"));
        }
        say(err, &text);
        match rev {
            Some(rev) => failed.push((rev, e)),
            None => metadata_failed = true,
        }
        Ok(())
    };
    if !opts.quiet {
        let mut text = String::new();
        for rev in (start..=end).filter(|r| r % SHARD == 0) {
            text.push_str(&format!("* Verifying metadata at revision {rev} ...\n"));
        }
        text.push_str("* Verifying repository metadata ...\n");
        say(out, &text);
    }
    if let Err(e) = check::verify_metadata(repo) {
        fail(&mut *err, None, e)?;
    }
    if !opts.metadata_only {
        for rev in start..=end {
            let result = check::verify_revision(repo, rev).and_then(|()| {
                if opts.check_normalization {
                    check::normalization(repo, rev)
                } else {
                    Ok(Vec::new())
                }
            });
            match result {
                Ok(issues) => {
                    if !opts.quiet {
                        let mut text: String = issues.iter().map(warning).collect();
                        text.push_str(&format!("* Verified revision {rev}.\n"));
                        say(out, &text);
                    }
                }
                Err(e) => fail(&mut *err, Some(rev), e)?,
            }
            progress(rev);
        }
    }
    // Every record the backend keeps, on whole-history runs; damage the revisions reached
    // was reported above by revision and path.
    if start == 0 && end >= youngest {
        if let Err(e) = repo.verify_records() {
            fail(&mut *err, None, ReposError::from(e))?;
        }
    }
    if failed.is_empty() && !metadata_failed {
        return Ok(true);
    }
    if !failed.is_empty() {
        let width = 6.max(format!("r{}", failed[failed.len() - 1].0).len());
        let mut text = String::from("\n-----Summary of corrupt revisions-----\n");
        for (rev, e) in &failed {
            for (code, message) in lines(e) {
                text.push_str(&format!(
                    "{:>width$}: E{code:06}: {message}\n",
                    format!("r{rev}")
                ));
            }
        }
        say(out, &text);
    }
    Ok(false)
}

/// svnadmin's warning for a name that collides with another once normalized.
fn warning(issue: &NormalizationIssue) -> String {
    format!("WARNING 0x{:04x}: {}\n", issue.warning, issue.message)
}
