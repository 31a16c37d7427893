//! Running `svelto admin` against temporary repositories, and comparing what
//! it does with what the real `svnadmin` does with the same input.

use std::path::{Path, PathBuf};

use svelto_testkit::dumpfile::{
    assert_dumps_eq, mask_revision_date, records, uuid_of, with_uuid, RecordKind,
};
use svelto_testkit::{svnadmin_create, tempdir, Outcome, Run, TempRepo};
use tempfile::TempDir;

/// A command running the `svelto` binary under test.
pub fn svelto() -> Run {
    Run::new(env!("CARGO_BIN_EXE_svelto"))
}

/// A Svelto repository made by `svelto admin create` in a temporary
/// directory, removed on drop.
pub struct SveltoRepo {
    dir: TempDir,
    path: PathBuf,
}

/// What `svelto admin info` says.
#[derive(Debug)]
pub struct Info {
    pub uuid: String,
    pub youngest: u64,
    pub text: String,
}

impl SveltoRepo {
    pub fn create() -> SveltoRepo {
        let dir = tempdir();
        let path = dir.path().join("repo");
        svelto().args(["admin", "create"]).arg(&path).success();
        SveltoRepo { dir, path }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The temporary directory holding the repository (free for other files).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// `svelto admin load -q [args] -F dump REPO`; panics unless it succeeds.
    pub fn load(&self, dump: &Path, args: &[&str]) -> Outcome {
        let out = self.try_load(dump, args);
        assert!(out.success(), "svelto admin load failed:\n{out}");
        out
    }

    /// `svelto admin load -q [args] -F dump REPO`, whatever the outcome.
    pub fn try_load(&self, dump: &Path, args: &[&str]) -> Outcome {
        self.load_command(args)
            .arg("-F")
            .arg(dump)
            .arg(&self.path)
            .output()
    }

    /// `svelto admin load -q [args] REPO` with the dump on standard input.
    pub fn try_load_bytes(&self, dump: &[u8], args: &[&str]) -> Outcome {
        self.load_command(args)
            .arg(&self.path)
            .stdin_bytes(dump.to_vec())
            .output()
    }

    fn load_command(&self, args: &[&str]) -> Run {
        let mut run = svelto().args(["admin", "load"]);
        if !args.iter().any(|a| *a == "-q" || *a == "--quiet") {
            run = run.arg("-q");
        }
        run.args(args)
    }

    /// `svelto admin dump -q [args] REPO`: what it writes on standard output.
    pub fn dump(&self, args: &[&str]) -> Vec<u8> {
        svelto()
            .args(["admin", "dump", "-q"])
            .args(args)
            .arg(&self.path)
            .success()
            .stdout
    }

    /// `svelto admin verify REPO`; panics unless it passes.
    pub fn verify(&self) -> Outcome {
        svelto().args(["admin", "verify"]).arg(&self.path).success()
    }

    /// `svelto admin info REPO`, parsed.
    pub fn info(&self) -> Info {
        let out = svelto().args(["admin", "info"]).arg(&self.path).success();
        parse_info(&out)
    }
}

pub fn parse_info(out: &Outcome) -> Info {
    let text = out.stdout_text();
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.trim().strip_prefix(name).map(|v| v.trim().to_owned()))
            .unwrap_or_else(|| panic!("svelto admin info printed no '{name}' line:\n{out}"))
    };
    let uuid = field("UUID:");
    let youngest = field("Revisions:");
    let youngest = youngest
        .parse()
        .unwrap_or_else(|e| panic!("Revisions {youngest:?} is not a number: {e}\n{out}"));
    Info {
        uuid,
        youngest,
        text,
    }
}

/// Write bytes to a file in `dir` and return its path.
pub fn write_file(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap_or_else(|e| panic!("cannot write {path:?}: {e}"));
    path
}

pub fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("cannot read {path:?}: {e}"))
}

/// Assert that `lines` appear in `text`, in this order, each as a whole line
/// (other lines may come between them).
pub fn assert_lines_in_order(text: &str, lines: &[String], what: &str) {
    let mut have = text.lines();
    for want in lines {
        if !have.any(|l| l == want) {
            panic!(
                "{what}: expected the line {want:?} (after the ones before it in this list:\n{lines:#?})\n\
                 in:\n{}",
                excerpt(text)
            );
        }
    }
}

fn excerpt(text: &str) -> String {
    if text.len() > 6000 {
        let cut = (0..=6000)
            .rev()
            .find(|&i| text.is_char_boundary(i))
            .unwrap_or(0);
        format!("{}\n[... {} more bytes]", &text[..cut], text.len() - cut)
    } else {
        text.to_owned()
    }
}

/// Whether an error message names revision `rev` ("revision 5", "r5",
/// "revision: 5", "rev 5"), not just contains the digits.
pub fn names_revision(message: &str, rev: u64) -> bool {
    let lower = message.to_lowercase();
    let n = rev.to_string();
    let bytes = lower.as_bytes();
    let mut from = 0;
    while let Some(i) = lower[from..].find(&n).map(|i| i + from) {
        let after_ok = bytes.get(i + n.len()).is_none_or(|b| !b.is_ascii_digit());
        let before = lower[..i].trim_end_matches([' ', ':', '#']);
        let prefix_ok = before.ends_with("revision")
            || before.ends_with("rev")
            || (before.ends_with('r')
                && !before[..before.len() - 1]
                    .chars()
                    .next_back()
                    .is_some_and(|c| c.is_alphanumeric()));
        if after_ok && prefix_ok {
            return true;
        }
        from = i + n.len();
    }
    false
}

/// Load the same sequence of dumps, with the same options, into a Svelto
/// repository and into an FSFS one with `svnadmin load`, and require the same
/// outcome: each step succeeds or fails on both, the same youngest revision
/// after each, and then the same dump and UUID (see [`comparable_dumps`]).
pub fn compare_load_sequence(what: &str, steps: &[(&Path, &[&str])]) {
    let fs = svnadmin_create();
    let sv = SveltoRepo::create();
    for (i, (dump, args)) in steps.iter().enumerate() {
        let f = fs.try_load(dump, args);
        let s = sv.try_load(dump, args);
        assert_eq!(
            s.success(),
            f.success(),
            "{what}, step {i}: svnadmin load {} but svelto admin load {}\nsvnadmin:\n{f}\nsvelto:\n{s}",
            if f.success() { "succeeded" } else { "failed" },
            if s.success() { "succeeded" } else { "failed" },
        );
        let fs_youngest = fs.youngest();
        let sv_info = sv.info();
        assert_eq!(
            sv_info.youngest, fs_youngest,
            "{what}, step {i}: youngest revision after\n{s}"
        );
    }
    sv.verify();
    let sources: Vec<Vec<u8>> = steps.iter().map(|(d, _)| read(d)).collect();
    let (fs_dump, sv_dump) =
        comparable_dumps(&fs, &sv, &sources).unwrap_or_else(|problem| panic!("{what}: {problem}"));
    assert_dumps_eq(&fs_dump, &sv_dump, what);
}

/// The dumps of an FSFS and a Svelto repository into which the same `sources`
/// were loaded the same way, made comparable:
///
/// - the UUID must be the same when svnadmin took it from one of the sources;
///   otherwise each repository keeps its own, which must not be a source's,
///   and Svelto's is replaced by svnadmin's for the comparison;
/// - revision 0's `svn:date` is compared only when svnadmin's revision 0 came
///   from a source (otherwise each has the time it was created).
///
/// Also checks that `svelto admin info` reports the UUID the dump says.
pub fn comparable_dumps(
    fs: &TempRepo,
    sv: &SveltoRepo,
    sources: &[Vec<u8>],
) -> Result<(Vec<u8>, Vec<u8>), String> {
    let fs_dump = fs.dump(&[]);
    let mut sv_dump = sv.dump(&[]);
    let info = sv.info();
    if Some(&info.uuid) != uuid_of(&sv_dump).as_ref() {
        return Err(format!(
            "svelto admin info says UUID {} but its dump says {:?}",
            info.uuid,
            uuid_of(&sv_dump)
        ));
    }
    let source_uuids: Vec<String> = sources.iter().filter_map(|d| uuid_of(d)).collect();
    let fs_uuid = fs.uuid();
    if source_uuids.contains(&fs_uuid) {
        if info.uuid != fs_uuid {
            return Err(format!(
                "the UUID should be the dump's {fs_uuid}, not {}",
                info.uuid
            ));
        }
    } else {
        if source_uuids.contains(&info.uuid) {
            return Err(format!(
                "the repository should have kept its own UUID, not taken {} from a dump",
                info.uuid
            ));
        }
        sv_dump = with_uuid(&sv_dump, &fs_uuid);
    }

    let r0_of = |dump: &[u8]| -> Option<Vec<u8>> {
        let recs = records(dump).ok()?;
        recs.iter()
            .find(|r| r.kind == RecordKind::Revision(0))
            .map(|r| r.bytes(dump).to_vec())
    };
    let fs_r0 = r0_of(&fs_dump);
    if sources.iter().any(|d| r0_of(d) == fs_r0) {
        Ok((fs_dump, sv_dump))
    } else {
        Ok((
            mask_revision_date(&fs_dump, 0),
            mask_revision_date(&sv_dump, 0),
        ))
    }
}

/// Installs an executable hook `name` of `repo` running `body` under /bin/sh.
pub fn install_hook(repo: &Path, name: &str, body: &str) {
    let p = repo.join("hooks").join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}")).expect("write hook");
    let mut perm = std::fs::metadata(&p).expect("hook").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
    std::fs::set_permissions(&p, perm).expect("chmod hook");
}

#[cfg(test)]
mod tests {
    use super::names_revision;

    #[test]
    fn recognises_revision_mentions() {
        assert!(names_revision("error in revision 5: bad", 5));
        assert!(names_revision("Revision 5", 5));
        assert!(names_revision("while loading r5, path 'a'", 5));
        assert!(names_revision("original revision: 12", 12));
        assert!(!names_revision("revision 15", 5));
        assert!(!names_revision("revision 51", 5));
        assert!(!names_revision("offset 5", 5));
        assert!(!names_revision("for5", 5));
    }
}
