//! What each command did, in the words svnserve's `--log-file` uses (its "log action"
//! strings, `docs/formats/server-log.md`): `checkout-or-export /trunk r5 depth=infinity`,
//! `get-dir /trunk r5 props`, `commit r6`, `log (/trunk) r1:5 revprops=all` ...
//!
//! Computed from the command's parameters before it runs (revisions the client left out are
//! HEAD then, as svnserve resolves them), and finished after it ran for what only the run
//! knows: whether an update's report made it a checkout, a diff's base revision, a
//! commit's new revision.

use svelto_core::{Depth, Revnum};
use svelto_wire::Item;

/// What the command loop learns from a report and a commit, for the log.
#[derive(Debug, Clone, Copy, Default)]
pub struct RunNote {
    /// `set-path` and `link-path` entries in the report.
    pub report_entries: u32,
    /// Some entry did not start empty.
    pub report_not_empty: bool,
    /// The revision `set-path ""` reported (a diff's base).
    pub report_root_rev: Option<Revnum>,
    /// The revision a commit made.
    pub committed: Option<Revnum>,
    /// The range a `replay-range` found valid and began to replay.
    pub replayed: Option<(Revnum, Revnum)>,
}

impl RunNote {
    /// Called by the report reader for each `set-path` / `link-path`.
    pub fn report_entry(&mut self, path: &str, rev: Option<Revnum>, start_empty: bool, set: bool) {
        self.report_entries += 1;
        if !start_empty {
            self.report_not_empty = true;
        }
        if set && path.is_empty() {
            self.report_root_rev = rev;
        }
    }
}

/// An action, or what is needed to finish it once the command ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pending {
    /// Not logged (svnserve writes nothing for it, or the parameters did not parse).
    Nothing,
    Done(Vec<String>),
    /// `update`: a checkout when the report held one entry that started empty.
    Update {
        path: String,
        rev: Revnum,
        depth: String,
        copyfrom: bool,
    },
    /// `diff`: the base revision comes from the report.
    Diff {
        path: String,
        versus: String,
        rev: Revnum,
        opts: String,
    },
    /// `commit`: logged only when it made a revision.
    Commit,
    /// `replay-range`: one line for the range, once it was found valid (nothing for a
    /// range refused before any work).
    ReplayRange {
        path: String,
    },
}

impl Pending {
    /// The action lines, now that the command ran.
    pub fn finish(self, note: &RunNote) -> Vec<String> {
        match self {
            Pending::Nothing => Vec::new(),
            Pending::Done(v) => v,
            Pending::Update {
                path,
                rev,
                depth,
                copyfrom,
            } => {
                if note.report_entries == 1 && !note.report_not_empty {
                    vec![format!("checkout-or-export {path} r{rev}{depth}")]
                } else {
                    let c = if copyfrom { " send-copyfrom-args" } else { "" };
                    vec![format!("update {path} r{rev}{depth}{c}")]
                }
            }
            Pending::Diff {
                path,
                versus,
                rev,
                opts,
            } => {
                let from = rev_text(note.report_root_rev);
                if path == versus {
                    vec![format!("diff {path} r{from}:{rev}{opts}")]
                } else {
                    vec![format!("diff {path}@{from} {versus}@{rev}{opts}")]
                }
            }
            Pending::Commit => note
                .committed
                .map(|r| vec![format!("commit r{r}")])
                .unwrap_or_default(),
            Pending::ReplayRange { path } => note
                .replayed
                .map(|(start, end)| vec![format!("replay-range {path} r{start}:{end}")])
                .unwrap_or_default(),
        }
    }
}

/// Where the session is, for turning the parameters into repository paths.
pub struct Ctx<'a> {
    /// The session path as an fspath (`/` or `/trunk`).
    pub fs_path: String,
    /// The repository root URL as the client spells it (for `reparent`, `switch`, `diff`).
    pub root_url: &'a str,
    /// HEAD, read when a command leaves its revision out.
    pub head: &'a dyn Fn() -> Revnum,
}

impl Ctx<'_> {
    /// `fs_path` joined with a client relpath, URI-encoded.
    fn full(&self, rel: &[u8]) -> String {
        uri_encode(&fspath_join(&self.fs_path, rel))
    }

    fn rev(&self, r: Option<Revnum>) -> Revnum {
        r.unwrap_or_else(|| (self.head)())
    }

    /// The fspath of a URL inside the repository, URI-encoded.
    fn url_path(&self, url: &[u8]) -> Option<String> {
        let url = std::str::from_utf8(url).ok()?;
        let rel = crate::url::path_in_repo(self.root_url, url).ok()?;
        Some(uri_encode(&format!("/{rel}")))
    }
}

/// `/a` + `b/c` → `/a/b/c`, without doubled or trailing slashes.
fn fspath_join(base: &str, rel: &[u8]) -> String {
    let rel = String::from_utf8_lossy(rel);
    let rel = rel.trim_matches('/');
    let base = base.trim_end_matches('/');
    if rel.is_empty() {
        if base.is_empty() {
            "/".into()
        } else {
            base.into()
        }
    } else {
        format!("{base}/{rel}")
    }
}

/// svnserve's `svn_path_uri_encode`: everything but unreserved and a few sub-delimiters as
/// `%XX` (upper-case hex).
pub fn uri_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        let keep = b.is_ascii_alphanumeric() || b"!$&'()*+,-./:=@_~".contains(&b);
        if keep {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn rev_text(r: Option<Revnum>) -> String {
    r.map_or_else(|| "-1".into(), |r| r.to_string())
}

/// ` depth=WORD`, or nothing for an unknown depth (svnserve's `log_depth`).
fn depth_text(d: Depth) -> String {
    match d {
        Depth::Unknown => String::new(),
        d => format!(" depth={}", d.as_str()),
    }
}

/// The depth a command's optional depth word (or its old `recurse` flag) gives.
fn command_depth(word: Option<&str>, recurse: bool, not_recursive: Depth) -> Depth {
    match word {
        Some(w) => Depth::from_word(w).unwrap_or(Depth::Unknown),
        None if recurse => Depth::Infinity,
        None => not_recursive,
    }
}

/// Loose accessors over a command's parameter tuple: `None` on a mismatch (the command
/// itself then fails and reports the malformed request).
struct P<'a>(&'a [Item]);

impl<'a> P<'a> {
    fn get(&self, i: usize) -> Option<&'a Item> {
        self.0.get(i)
    }
    fn s(&self, i: usize) -> Option<&'a [u8]> {
        self.get(i)?.as_string()
    }
    fn n(&self, i: usize) -> Option<u64> {
        self.get(i)?.as_number()
    }
    fn w(&self, i: usize) -> Option<&'a str> {
        self.get(i)?.as_word()
    }
    fn b(&self, i: usize) -> Option<bool> {
        match self.w(i)? {
            "true" => Some(true),
            "false" => Some(false),
            _ => None,
        }
    }
    fn l(&self, i: usize) -> Option<&'a [Item]> {
        self.get(i)?.as_list()
    }
    /// `( [ rev ] )`: the outer option parsed, the inner revision perhaps absent.
    fn br(&self, i: usize) -> Option<Option<Revnum>> {
        Some(self.l(i)?.first().and_then(Item::as_number))
    }
}

/// The action of command `name` with parameters `params`.
pub fn describe(name: &str, params: &[Item], ctx: &Ctx<'_>) -> Pending {
    describe_opt(name, &P(params), ctx).unwrap_or(Pending::Nothing)
}

fn one(s: String) -> Option<Pending> {
    Some(Pending::Done(vec![s]))
}

fn describe_opt(name: &str, p: &P<'_>, ctx: &Ctx<'_>) -> Option<Pending> {
    match name {
        "reparent" => one(format!("reparent {}", ctx.url_path(p.s(0)?)?)),
        "get-latest-rev" => one("get-latest-rev".into()),
        "get-dated-rev" => one(format!(
            "get-dated-rev {}",
            String::from_utf8_lossy(p.s(0)?)
        )),
        "change-rev-prop" | "change-rev-prop2" => one(format!(
            "change-rev-prop r{} {}",
            p.n(0)?,
            uri_encode(&String::from_utf8_lossy(p.s(1)?))
        )),
        "rev-proplist" => one(format!("rev-proplist r{}", p.n(0)?)),
        "rev-prop" => one(format!(
            "rev-prop r{} {}",
            p.n(0)?,
            uri_encode(&String::from_utf8_lossy(p.s(1)?))
        )),
        "commit" => Some(Pending::Commit),
        "get-file" | "get-dir" => {
            let path = ctx.full(p.s(0)?);
            let rev = ctx.rev(p.br(1)?);
            let props = p.b(2)?;
            let text = p.b(3)?;
            one(format!(
                "{name} {path} r{rev}{}{}",
                if text { " text" } else { "" },
                if props { " props" } else { "" }
            ))
        }
        "update" => {
            let rev = ctx.rev(p.br(0)?);
            let path = ctx.full(p.s(1)?);
            let depth = command_depth(p.w(3), p.b(2)?, Depth::Files);
            Some(Pending::Update {
                path,
                rev,
                depth: depth_text(depth),
                copyfrom: p.b(4) == Some(true),
            })
        }
        "switch" => {
            let rev = ctx.rev(p.br(0)?);
            let path = ctx.full(p.s(1)?);
            let target = ctx.url_path(p.s(3)?)?;
            let depth = command_depth(p.w(4), p.b(2)?, Depth::Files);
            one(format!("switch {path} {target}@{rev}{}", depth_text(depth)))
        }
        "status" => {
            let path = ctx.full(p.s(0)?);
            let rev = ctx.rev(p.br(2).unwrap_or(None));
            let depth = command_depth(p.w(3), p.b(1)?, Depth::Empty);
            one(format!("status {path} r{rev}{}", depth_text(depth)))
        }
        "diff" => {
            let rev = ctx.rev(p.br(0)?);
            let path = ctx.full(p.s(1)?);
            let recurse = p.b(2)?;
            let ignore_ancestry = p.b(3)?;
            let versus = ctx.url_path(p.s(4)?)?;
            let depth = command_depth(p.w(6), recurse, Depth::Files);
            let ia = if ignore_ancestry {
                " ignore-ancestry"
            } else {
                ""
            };
            Some(Pending::Diff {
                path,
                versus,
                rev,
                opts: format!("{}{ia}", depth_text(depth)),
            })
        }
        "get-mergeinfo" => {
            let paths = joined_paths(p.l(0)?, ctx)?;
            let inherit = match p.w(2)? {
                w @ ("explicit" | "inherited" | "nearest-ancestor") => w,
                _ => "explicit",
            };
            let desc = if p.b(3)? { " include-descendants" } else { "" };
            one(format!("get-mergeinfo ({paths}) {inherit}{desc}"))
        }
        "log" => describe_log(p, ctx),
        "check-path" | "stat" => {
            let path = ctx.full(p.s(0)?);
            let rev = ctx.rev(p.br(1)?);
            one(format!("{name} {path}@{rev}"))
        }
        "get-locations" => {
            let path = ctx.full(p.s(0)?);
            let peg = p.n(1)?;
            let revs: Vec<String> = p
                .l(2)?
                .iter()
                .filter_map(|i| i.as_number().map(|n| n.to_string()))
                .collect();
            one(format!("get-locations {path}@{peg} ({})", revs.join(" ")))
        }
        "get-location-segments" => {
            let path = ctx.full(p.s(0)?);
            one(format!(
                "get-location-segments {path}@{} r{}:{}",
                rev_text(p.br(1)?),
                rev_text(p.br(2)?),
                rev_text(p.br(3)?)
            ))
        }
        "get-file-revs" => {
            let path = ctx.full(p.s(0)?);
            let merged = if p.b(3) == Some(true) {
                " include-merged-revisions"
            } else {
                ""
            };
            one(format!(
                "get-file-revs {path} r{}:{}{merged}",
                rev_text(p.br(1)?),
                rev_text(p.br(2)?)
            ))
        }
        "lock" => {
            let path = ctx.full(p.s(0)?);
            let steal = if p.b(2)? { " steal" } else { "" };
            one(format!("lock ({path}){steal}"))
        }
        "lock-many" => {
            let steal = if p.b(1)? { " steal" } else { "" };
            let paths = first_strings(p.l(2)?, ctx)?;
            one(format!("lock ({paths}){steal}"))
        }
        "unlock" => {
            let path = ctx.full(p.s(0)?);
            let brk = if p.b(2)? { " break" } else { "" };
            one(format!("unlock ({path}){brk}"))
        }
        "unlock-many" => {
            let brk = if p.b(0)? { " break" } else { "" };
            let paths = first_strings(p.l(1)?, ctx)?;
            one(format!("unlock ({paths}){brk}"))
        }
        "get-lock" => one(format!("get-lock {}", ctx.full(p.s(0)?))),
        "get-locks" => one(format!("get-locks {}", ctx.full(p.s(0)?))),
        "replay" => one(format!("replay {} r{}", uri_encode(&ctx.fs_path), p.n(0)?)),
        "replay-range" => Some(Pending::ReplayRange {
            path: uri_encode(&ctx.fs_path),
        }),
        "get-deleted-rev" => one("get-deleted-rev".into()),
        "get-iprops" => {
            let path = ctx.full(p.s(0)?);
            let rev = ctx.rev(p.br(1)?);
            one(format!("get-inherited-props {path} r{rev}"))
        }
        "list" => {
            let path = ctx.full(p.s(0)?);
            let rev = ctx.rev(p.br(1)?);
            let depth = Depth::from_word(p.w(2)?).unwrap_or(Depth::Unknown);
            let patterns = match p.l(4) {
                None => " <ANY>".to_string(),
                Some(l) => l
                    .iter()
                    .filter_map(Item::as_string)
                    .map(|s| format!(" {}", String::from_utf8_lossy(s)))
                    .collect(),
            };
            one(format!("list {path} r{rev}{}{patterns}", depth_text(depth)))
        }
        _ => None,
    }
}

fn describe_log(p: &P<'_>, ctx: &Ctx<'_>) -> Option<Pending> {
    let paths = joined_paths(p.l(0)?, ctx)?;
    let start = p.br(1)?;
    let end = p.br(2)?;
    let changed = p.b(3)?;
    let strict = p.b(4)?;
    let limit = p.n(5).filter(|l| *l <= i32::MAX as u64).unwrap_or(0);
    let merged = p.b(6) == Some(true);
    let mut opts = String::new();
    if limit > 0 {
        opts.push_str(&format!(" limit={limit}"));
    }
    if changed {
        opts.push_str(" discover-changed-paths");
    }
    if strict {
        opts.push_str(" strict");
    }
    if merged {
        opts.push_str(" include-merged-revisions");
    }
    match p.w(7) {
        // A pre-1.5 client: the three standard properties.
        None => opts.push_str(" revprops=(svn:author svn:date svn:log)"),
        Some("all-revprops") => opts.push_str(" revprops=all"),
        Some(_) => {
            let names: Vec<String> = p
                .l(8)
                .unwrap_or(&[])
                .iter()
                .filter_map(Item::as_string)
                .map(|s| uri_encode(&String::from_utf8_lossy(s)))
                .collect();
            if !names.is_empty() {
                opts.push_str(&format!(" revprops=({})", names.join(" ")));
            }
        }
    }
    one(format!(
        "log ({paths}) r{}:{}{opts}",
        rev_text(start),
        rev_text(end)
    ))
}

/// Client relpaths as space-separated, encoded fspaths.
fn joined_paths(items: &[Item], ctx: &Ctx<'_>) -> Option<String> {
    let v: Option<Vec<String>> = items
        .iter()
        .map(|i| i.as_string().map(|s| ctx.full(s)))
        .collect();
    Some(v?.join(" "))
}

/// The first string of each tuple in `items` (lock-many's `( path [ rev ] )`).
fn first_strings(items: &[Item], ctx: &Ctx<'_>) -> Option<String> {
    let v: Option<Vec<String>> = items
        .iter()
        .map(|i| i.as_list()?.first()?.as_string().map(|s| ctx.full(s)))
        .collect();
    Some(v?.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx_at(path: &str) -> Ctx<'static> {
        Ctx {
            fs_path: path.into(),
            root_url: "svn://h/repo",
            head: &|| 7,
        }
    }

    fn items(text: &[u8]) -> Vec<Item> {
        let (item, _) = svelto_wire::decode(text, &svelto_wire::Limits::default())
            .expect("decodes")
            .expect("whole");
        item.as_list().expect("list").to_vec()
    }

    fn done(name: &str, params: &[u8], path: &str) -> Vec<String> {
        describe(name, &items(params), &ctx_at(path)).finish(&RunNote::default())
    }

    #[test]
    fn actions_read_like_svnserves() {
        assert_eq!(
            done("get-file", b"( 1:a ( ) false true ) ", "/trunk"),
            ["get-file /trunk/a r7 text"]
        );
        assert_eq!(
            done("check-path", b"( 0: ( 2 ) ) ", "/"),
            ["check-path /@2"]
        );
        assert_eq!(
            done("stat", b"( 5:a b%c ( ) ) ", "/t"),
            ["stat /t/a%20b%25c@7"]
        );
        assert_eq!(
            done(
                "log",
                b"( ( 0: ) ( 2 ) ( 0 ) false false 0 false revprops ( 10:svn:author 8:svn:date ) ) ",
                "/trunk"
            ),
            ["log (/trunk) r2:0 revprops=(svn:author svn:date)"]
        );
        assert_eq!(
            done("list", b"( 0: ( 2 ) immediates ( kind ) ) ", "/"),
            ["list / r2 depth=immediates <ANY>"]
        );
        assert_eq!(
            done("reparent", b"( 12:svn://h/repo ) ", "/trunk"),
            ["reparent /"]
        );
        assert_eq!(done("commit", b"( 1:m ) ", "/"), Vec::<String>::new());
    }

    #[test]
    fn update_is_a_checkout_when_the_report_starts_empty() {
        let p = items(b"( ( 2 ) 0: true infinity false ) ");
        let mut note = RunNote::default();
        note.report_entry("", Some(2), true, true);
        assert_eq!(
            describe("update", &p, &ctx_at("/trunk")).finish(&note),
            ["checkout-or-export /trunk r2 depth=infinity"]
        );
        let mut note = RunNote::default();
        note.report_entry("", Some(1), false, true);
        assert_eq!(
            describe("update", &p, &ctx_at("/trunk")).finish(&note),
            ["update /trunk r2 depth=infinity"]
        );
    }
}
