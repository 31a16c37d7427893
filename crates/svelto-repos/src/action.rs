//! What a request did, in the words of Subversion's operational log (`libsvn_subr/log.c`,
//! the `svn_log__*` "log actions"): what svnserve's `--log-file` writes and what mod_dav_svn
//! puts in Apache's `SVN-ACTION` note. Both of Svelto's front ends log these lines for the
//! same client command (`docs/formats/server-log.md`); this module is the one spelling of
//! every action word.
//!
//! Paths are fspaths (`/trunk/a`, raw: each function URI-encodes them as
//! `svn_path_uri_encode` does); a missing revision is `-1`.

use svelto_core::{Depth, Revnum};

/// The action words that are also svnserve's command names (its log names each command by
/// its wire word): the svn:// command table spells its commands with these.
pub mod word {
    pub const REPARENT: &str = "reparent";
    pub const GET_LATEST_REV: &str = "get-latest-rev";
    pub const GET_DATED_REV: &str = "get-dated-rev";
    pub const CHANGE_REV_PROP: &str = "change-rev-prop";
    pub const REV_PROPLIST: &str = "rev-proplist";
    pub const REV_PROP: &str = "rev-prop";
    pub const COMMIT: &str = "commit";
    pub const GET_FILE: &str = "get-file";
    pub const GET_DIR: &str = "get-dir";
    pub const LIST: &str = "list";
    pub const CHECK_PATH: &str = "check-path";
    pub const STAT: &str = "stat";
    pub const UPDATE: &str = "update";
    pub const SWITCH: &str = "switch";
    pub const STATUS: &str = "status";
    pub const DIFF: &str = "diff";
    pub const LOG: &str = "log";
    pub const GET_LOCATIONS: &str = "get-locations";
    pub const GET_LOCATION_SEGMENTS: &str = "get-location-segments";
    pub const GET_FILE_REVS: &str = "get-file-revs";
    pub const GET_DELETED_REV: &str = "get-deleted-rev";
    pub const GET_MERGEINFO: &str = "get-mergeinfo";
    pub const LOCK: &str = "lock";
    pub const UNLOCK: &str = "unlock";
    pub const GET_LOCK: &str = "get-lock";
    pub const GET_LOCKS: &str = "get-locks";
    pub const REPLAY: &str = "replay";
    pub const REPLAY_RANGE: &str = "replay-range";
}

use word::*;

/// Subversion's `svn_path_uri_encode`: everything but unreserved characters and a few
/// sub-delimiters as `%XX` (upper-case hex).
pub fn uri_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"!$&'()*+,-./:=@_~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The fspath of a repository relpath, for the front ends' log lines.
pub use svelto_core::fspath;

/// A revision number, or `-1` for none.
pub fn rev_text(r: Option<Revnum>) -> String {
    r.map_or_else(|| "-1".into(), |r| r.to_string())
}

/// ` depth=WORD`, or nothing for an unknown depth (`log_depth`).
fn depth_text(d: Depth) -> String {
    match d {
        Depth::Unknown => String::new(),
        d => format!(" depth={}", d.as_str()),
    }
}

fn flag(on: bool, text: &str) -> &str {
    if on {
        text
    } else {
        ""
    }
}

/// `(/P1 /P2)`'s inside.
fn paths_text(paths: &[String]) -> String {
    let encoded: Vec<String> = paths.iter().map(|p| uri_encode(p)).collect();
    encoded.join(" ")
}

/// A path that may be empty (`/` then).
fn or_root(path: &str) -> String {
    if path.is_empty() {
        "/".into()
    } else {
        uri_encode(path)
    }
}

pub fn reparent(path: &str) -> String {
    format!("{REPARENT} {}", uri_encode(path))
}

pub fn get_latest_rev() -> String {
    GET_LATEST_REV.into()
}

pub fn get_dated_rev(date: &str) -> String {
    format!("{GET_DATED_REV} {date}")
}

pub fn change_rev_prop(rev: Revnum, name: &str) -> String {
    format!("{CHANGE_REV_PROP} r{rev} {}", uri_encode(name))
}

pub fn rev_proplist(rev: Revnum) -> String {
    format!("{REV_PROPLIST} r{rev}")
}

pub fn rev_prop(rev: Revnum, name: &str) -> String {
    format!("{REV_PROP} r{rev} {}", uri_encode(name))
}

pub fn commit(rev: Revnum) -> String {
    format!("{COMMIT} r{rev}")
}

/// `get-file PATH rN[ text][ props]`.
pub fn get_file(path: &str, rev: Revnum, text: bool, props: bool) -> String {
    get_node(GET_FILE, path, rev, text, props)
}

/// `get-dir PATH rN[ text][ props]`.
pub fn get_dir(path: &str, rev: Revnum, text: bool, props: bool) -> String {
    get_node(GET_DIR, path, rev, text, props)
}

fn get_node(word: &str, path: &str, rev: Revnum, text: bool, props: bool) -> String {
    format!(
        "{word} {} r{rev}{}{}",
        uri_encode(path),
        flag(text, " text"),
        flag(props, " props")
    )
}

/// `check-path PATH@N`.
pub fn check_path(path: &str, rev: Revnum) -> String {
    format!("{CHECK_PATH} {}@{rev}", uri_encode(path))
}

/// `stat PATH@N`.
pub fn stat(path: &str, rev: Revnum) -> String {
    format!("{STAT} {}@{rev}", uri_encode(path))
}

/// `list PATH rN[ depth=D] PATTERNS` (`<ANY>` without patterns).
pub fn list(path: &str, rev: Revnum, depth: Depth, patterns: Option<&[String]>) -> String {
    let patterns = match patterns {
        None => " <ANY>".to_string(),
        Some(l) => l.iter().map(|p| format!(" {p}")).collect(),
    };
    format!(
        "{LIST} {} r{rev}{}{patterns}",
        or_root(path),
        depth_text(depth)
    )
}

/// `checkout-or-export PATH rN[ depth=D]`: an update whose report held one entry that
/// started empty.
pub fn checkout(path: &str, rev: Revnum, depth: Depth) -> String {
    format!(
        "checkout-or-export {} r{rev}{}",
        uri_encode(path),
        depth_text(depth)
    )
}

/// `update PATH rN[ depth=D][ send-copyfrom-args]`.
pub fn update(path: &str, rev: Revnum, depth: Depth, send_copyfrom_args: bool) -> String {
    format!(
        "{UPDATE} {} r{rev}{}{}",
        uri_encode(path),
        depth_text(depth),
        flag(send_copyfrom_args, " send-copyfrom-args")
    )
}

/// `switch PATH TARGET@N[ depth=D]`.
pub fn switch(path: &str, target: &str, rev: Revnum, depth: Depth) -> String {
    format!(
        "{SWITCH} {} {}@{rev}{}",
        uri_encode(path),
        uri_encode(target),
        depth_text(depth)
    )
}

/// `status PATH rN[ depth=D]`.
pub fn status(path: &str, rev: Revnum, depth: Depth) -> String {
    format!("{STATUS} {} r{rev}{}", uri_encode(path), depth_text(depth))
}

/// `diff PATH rFROM:N ...` (one path) or `diff PATH@FROM VERSUS@N ...`.
pub fn diff(
    path: &str,
    from: Option<Revnum>,
    versus: &str,
    rev: Revnum,
    depth: Depth,
    ignore_ancestry: bool,
) -> String {
    let (from, opts) = (
        rev_text(from),
        format!(
            "{}{}",
            depth_text(depth),
            flag(ignore_ancestry, " ignore-ancestry")
        ),
    );
    if path == versus {
        format!("{DIFF} {} r{from}:{rev}{opts}", uri_encode(path))
    } else {
        format!(
            "{DIFF} {}@{from} {}@{rev}{opts}",
            uri_encode(path),
            uri_encode(versus)
        )
    }
}

/// A `log` request's parameters.
pub struct Log<'a> {
    pub paths: &'a [String],
    pub start: Option<Revnum>,
    pub end: Option<Revnum>,
    /// 0: no limit.
    pub limit: u64,
    pub changed_paths: bool,
    pub strict: bool,
    pub include_merged: bool,
    /// The revision properties asked for; None: all of them.
    pub revprops: Option<&'a [String]>,
}

/// `log (PATHS) rSTART:END[ limit=N][ discover-changed-paths][ strict]
/// [ include-merged-revisions][ revprops=all|revprops=(A B)]`.
pub fn log(l: &Log<'_>) -> String {
    let mut opts = String::new();
    if l.limit > 0 {
        opts.push_str(&format!(" limit={}", l.limit));
    }
    opts.push_str(flag(l.changed_paths, " discover-changed-paths"));
    opts.push_str(flag(l.strict, " strict"));
    opts.push_str(flag(l.include_merged, " include-merged-revisions"));
    match l.revprops {
        None => opts.push_str(" revprops=all"),
        Some([]) => {}
        Some(names) => opts.push_str(&format!(" revprops=({})", paths_text(names))),
    }
    format!(
        "{LOG} ({}) r{}:{}{opts}",
        paths_text(l.paths),
        rev_text(l.start),
        rev_text(l.end)
    )
}

/// `get-locations PATH@PEG (R1 R2)`.
pub fn get_locations(path: &str, peg: Revnum, revs: &[Revnum]) -> String {
    let revs: Vec<String> = revs.iter().map(|n| n.to_string()).collect();
    format!(
        "{GET_LOCATIONS} {}@{peg} ({})",
        uri_encode(path),
        revs.join(" ")
    )
}

/// `get-location-segments PATH@PEG rSTART:END`.
pub fn get_location_segments(
    path: &str,
    peg: Option<Revnum>,
    start: Option<Revnum>,
    end: Option<Revnum>,
) -> String {
    format!(
        "{GET_LOCATION_SEGMENTS} {}@{} r{}:{}",
        uri_encode(path),
        rev_text(peg),
        rev_text(start),
        rev_text(end)
    )
}

/// `get-file-revs PATH rSTART:END[ include-merged-revisions]` (blame).
pub fn get_file_revs(
    path: &str,
    start: Option<Revnum>,
    end: Option<Revnum>,
    include_merged: bool,
) -> String {
    format!(
        "{GET_FILE_REVS} {} r{}:{}{}",
        uri_encode(path),
        rev_text(start),
        rev_text(end),
        flag(include_merged, " include-merged-revisions")
    )
}

pub fn get_deleted_rev() -> String {
    GET_DELETED_REV.into()
}

/// `get-mergeinfo (PATHS) INHERIT[ include-descendants]`.
pub fn get_mergeinfo(paths: &[String], inherit: &str, include_descendants: bool) -> String {
    format!(
        "{GET_MERGEINFO} ({}) {inherit}{}",
        paths_text(paths),
        flag(include_descendants, " include-descendants")
    )
}

/// `get-inherited-props PATH rN`.
pub fn get_inherited_props(path: &str, rev: Revnum) -> String {
    format!("get-inherited-props {} r{rev}", or_root(path))
}

/// `lock (PATHS)[ steal]`.
pub fn lock(paths: &[String], steal: bool) -> String {
    format!("{LOCK} ({}){}", paths_text(paths), flag(steal, " steal"))
}

/// `unlock (PATHS)[ break]`.
pub fn unlock(paths: &[String], break_lock: bool) -> String {
    format!(
        "{UNLOCK} ({}){}",
        paths_text(paths),
        flag(break_lock, " break")
    )
}

pub fn get_lock(path: &str) -> String {
    format!("{GET_LOCK} {}", uri_encode(path))
}

pub fn get_locks(path: &str) -> String {
    format!("{GET_LOCKS} {}", uri_encode(path))
}

/// `replay PATH rN`.
pub fn replay(path: &str, rev: Revnum) -> String {
    format!("{REPLAY} {} r{rev}", or_root(path))
}

/// `replay-range PATH rSTART:END` (Svelto's one line for svnserve's `replay` per revision).
pub fn replay_range(path: &str, start: Revnum, end: Revnum) -> String {
    format!("{REPLAY_RANGE} {} r{start}:{end}", or_root(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn actions_read_as_subversions() {
        assert_eq!(
            checkout("/trunk", 5, Depth::Infinity),
            "checkout-or-export /trunk r5 depth=infinity"
        );
        assert_eq!(
            update("/a b", 5, Depth::Unknown, true),
            "update /a%20b r5 send-copyfrom-args"
        );
        assert_eq!(
            diff("/a", Some(2), "/a", 5, Depth::Unknown, true),
            "diff /a r2:5 ignore-ancestry"
        );
        assert_eq!(
            diff("/a", None, "/b", 5, Depth::Files, false),
            "diff /a@-1 /b@5 depth=files"
        );
        let (paths, names) = (["/trunk".to_string()], ["svn:author".to_string()]);
        let l = Log {
            paths: &paths,
            start: Some(9),
            end: Some(0),
            limit: 3,
            changed_paths: true,
            strict: false,
            include_merged: false,
            revprops: None,
        };
        assert_eq!(
            log(&l),
            "log (/trunk) r9:0 limit=3 discover-changed-paths revprops=all"
        );
        let l = Log {
            revprops: Some(&names),
            limit: 0,
            ..l
        };
        assert_eq!(
            log(&l),
            "log (/trunk) r9:0 discover-changed-paths revprops=(svn:author)"
        );
        assert_eq!(uri_encode("/a b/é;"), "/a%20b/%C3%A9%3B");
        assert_eq!(
            get_file_revs("/f", Some(1), None, true),
            "get-file-revs /f r1:-1 include-merged-revisions"
        );
        assert_eq!(
            list("", 3, Depth::Immediates, None),
            "list / r3 depth=immediates <ANY>"
        );
        assert_eq!(fspath(""), "/");
        assert_eq!(fspath("trunk/a"), "/trunk/a");
    }
}
