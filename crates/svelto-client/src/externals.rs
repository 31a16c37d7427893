//! `svn:externals`: the definitions a directory's property holds, read as the stock 1.14
//! client reads them (both line forms, `-r N`/`-rN`, `URL@PEG`, quoting), and the
//! relative URLs (`^/`, `../`, `//`, `/`) resolved as it resolves them.

use std::collections::HashSet;
use std::path::Path;

use crate::checkout::{fetch_file_external, run_in, FileExternal, Notify, Options};
use crate::error::{Error, Result};
use crate::ra;
use crate::skel;
use crate::url;
use crate::wc::{External, WcDb};

/// One line of an `svn:externals` property.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    /// Where it goes, relative to the defining directory (`/`-separated).
    pub target_dir: String,
    /// As written: absolute, or relative (`^/`, `../`, `//`, `/`).
    pub url: String,
    /// The peg revision (`URL@N`, or the old form's `-r N`); None: HEAD.
    pub peg: Option<u64>,
    /// The operative revision (`-r N`); None: the peg's.
    pub revision: Option<u64>,
}

impl Item {
    /// The revision to check out (None: HEAD).
    pub fn operative(&self) -> Option<u64> {
        self.revision.or(self.peg)
    }
}

fn invalid(msg: String) -> Error {
    Error::Usage(msg)
}

/// Whether `s` is an absolute URL (`scheme://`), as `svn_path_is_url` judges.
pub fn is_url(s: &str) -> bool {
    match s.find("://") {
        Some(i) if i > 0 => s[..i]
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'-' || b == b'.'),
        _ => false,
    }
}

/// Splits a line into words as `apr_tokenize_to_argv` does: whitespace separates, `"` and
/// `'` quote, a backslash escapes the next character.
fn tokenize(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        if chars.peek().is_none() {
            return out;
        }
        let mut word = String::new();
        let mut quote: Option<char> = None;
        while let Some(c) = chars.next() {
            match (c, quote) {
                ('\\', _) => {
                    if let Some(n) = chars.next() {
                        word.push(n);
                    }
                }
                (c, Some(q)) if c == q => quote = None,
                ('"' | '\'', None) => quote = Some(c),
                (c, None) if c.is_whitespace() => break,
                (c, _) => word.push(c),
            }
        }
        out.push(word);
    }
}

/// A revision number of a definition (`N`, `rN` is not accepted, as with svn: only
/// numbers; dates are refused here with a clear message).
fn revision_number(s: &str) -> Option<u64> {
    s.parse().ok()
}

/// Parses the property `desc` of the directory `defining` (shown in messages).
pub fn parse(defining: &str, desc: &[u8]) -> Result<Vec<Item>> {
    let text = String::from_utf8_lossy(desc);
    let mut items = Vec::new();
    for line in text.split(['\n', '\r']) {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let parse_error = || {
            invalid(format!(
                "Error parsing svn:externals property on '{defining}': '{line}'"
            ))
        };
        let mut parts = tokenize(line);
        if parts.len() < 2 || parts.len() > 4 {
            return Err(parse_error());
        }
        // `-r N` or `-rN` in the first two words.
        let mut rev_idx = None;
        let mut revision = None;
        for i in 0..2 {
            let Some(rest) = parts[i].strip_prefix("-r") else {
                continue;
            };
            let (digits, shift) = if rest.is_empty() {
                if parts.len() != 4 {
                    return Err(parse_error());
                }
                (parts[i + 1].clone(), 2)
            } else {
                if parts.len() != 3 {
                    return Err(parse_error());
                }
                (rest.to_string(), 1)
            };
            if digits.starts_with('{') {
                return Err(invalid(format!(
                    "svn:externals on '{defining}': '{line}': svelto does not resolve \
                     dates in externals yet; use 'svn checkout'"
                )));
            }
            revision = Some(revision_number(&digits).ok_or_else(parse_error)?);
            parts.drain(i..i + shift);
            rev_idx = Some(i);
            break;
        }
        if rev_idx.is_none() && parts.len() != 2 {
            return Err(parse_error());
        }
        let (t0, t1) = (parts[0].clone(), parts[1].clone());
        let (u0, u1) = (is_url(&t0), is_url(&t1));
        if u0 && u1 {
            return Err(invalid(format!(
                "Invalid svn:externals property on '{defining}': cannot use two absolute \
                 URLs ('{t0}' and '{t1}') in an external; one must be a path where an \
                 absolute or relative URL is checked out to"
            )));
        }
        if (rev_idx == Some(0) && u1) || (rev_idx == Some(1) && u0) {
            let url = if u1 { &t1 } else { &t0 };
            return Err(invalid(format!(
                "Invalid svn:externals property on '{defining}': cannot use a URL '{url}' \
                 as the target directory for an external definition"
            )));
        }
        let (target_dir, url, peg, revision) =
            if rev_idx == Some(0) || (rev_idx.is_none() && (u0 || !u1)) {
                // URL[@PEG] DIR
                let (url, peg) = split_peg(&t0).ok_or_else(parse_error)?;
                (t1, url, peg, revision)
            } else {
                // DIR [-r N] URL: the revision is the peg too.
                (t0, t1, revision, revision)
            };
        let target_dir = target_dir.trim_end_matches('/').to_string();
        if target_dir.is_empty()
            || target_dir.starts_with('/')
            || target_dir.split('/').any(|c| c == "..")
        {
            return Err(invalid(format!(
                "Invalid svn:externals property on '{defining}': target '{target_dir}' is \
                 an absolute path or involves '..'"
            )));
        }
        let target_dir = target_dir
            .split('/')
            .filter(|c| !c.is_empty() && *c != ".")
            .collect::<Vec<_>>()
            .join("/");
        items.push(Item {
            target_dir,
            url,
            peg,
            revision: revision.or(peg),
        });
    }
    Ok(items)
}

/// `URL@PEG` as `svn_opt_parse_path` splits it: the last `@` and a revision after it
/// (`HEAD` and an empty one mean none). None when what follows the `@` is no revision.
fn split_peg(s: &str) -> Option<(String, Option<u64>)> {
    let Some(at) = s.rfind('@') else {
        return Some((s.to_string(), None));
    };
    // An '@' before the path (user@host) is no peg.
    if s[at..].contains('/') {
        return Some((s.to_string(), None));
    }
    let rev = &s[at + 1..];
    let url = s[..at].to_string();
    if rev.is_empty() || rev.eq_ignore_ascii_case("HEAD") {
        return Some((url, None));
    }
    let rev = rev.strip_prefix('r').unwrap_or(rev);
    rev.parse().ok().map(|n| (url, Some(n)))
}

/// `scheme://authority` and the path (starting with `/`, or empty) of an absolute URL.
fn split_url(url: &str) -> Option<(&str, &str)> {
    let start = url.find("://")? + 3;
    match url[start..].find('/') {
        Some(i) => Some((&url[..start + i], &url[start + i..])),
        None => Some((url, "")),
    }
}

/// Canonical path segments: no empty ones, no `.`.
fn segments(path: &str) -> impl Iterator<Item = &str> {
    path.split('/').filter(|c| !c.is_empty() && *c != ".")
}

/// The absolute URL of an external whose definition says `url`, in a directory whose URL
/// is `parent_dir_url`, in the repository at `repos_root_url`.
pub fn resolve(url: &str, repos_root_url: &str, parent_dir_url: &str) -> Result<String> {
    if is_url(url) {
        return Ok(url.trim_end_matches('/').to_string());
    }
    let bad = |what: &str| Error::Url {
        url: url.to_string(),
        reason: what.to_string(),
    };
    let (parent_base, parent_path) = split_url(parent_dir_url)
        .ok_or_else(|| bad("the parent directory's URL is not absolute"))?;
    let join = |base: &str, comps: Vec<&str>| {
        if comps.is_empty() {
            base.to_string()
        } else {
            format!("{base}/{}", comps.join("/"))
        }
    };
    if let Some(rel) = url
        .strip_prefix("^/")
        .or_else(|| url.starts_with("../").then_some(url))
    {
        let (base, base_path) = if url.starts_with("^/") {
            split_url(repos_root_url).ok_or_else(|| bad("the repository root is not absolute"))?
        } else {
            (parent_base, parent_path)
        };
        let mut comps: Vec<&str> = segments(base_path).collect();
        for c in segments(rel) {
            if c == ".." {
                comps.pop();
            } else {
                comps.push(c);
            }
        }
        return Ok(join(base, comps));
    }
    if url.starts_with('/') && segments(url).any(|c| c == "..") {
        return Err(bad(
            "The external relative URL cannot have backpaths, i.e. '..'",
        ));
    }
    if let Some(rest) = url.strip_prefix("//") {
        let scheme = &repos_root_url[..repos_root_url.find("://").unwrap_or(0)];
        let mut it = rest.splitn(2, '/');
        let host = it.next().unwrap_or("");
        let comps: Vec<&str> = segments(it.next().unwrap_or("")).collect();
        return Ok(join(&format!("{scheme}://{host}"), comps));
    }
    if url.starts_with('/') {
        return Ok(join(parent_base, segments(url).collect()));
    }
    Err(bad(&format!(
        "Unrecognized format for the relative external URL '{url}'"
    )))
}

/// The working copy (or export) whose externals are fetched.
pub struct Parent<'a> {
    pub root: &'a Path,
    /// None for an export.
    pub db: Option<WcDb>,
    /// The pristine texts the working copy has (SHA-1 hex).
    pub pristines: HashSet<String>,
    pub opts: &'a Options,
    /// The repository root URL and the URL checked out at `root`.
    pub root_url: &'a str,
    pub url: &'a str,
    pub export: bool,
}

fn join_relpath(a: &str, b: &str) -> String {
    match (a.is_empty(), b.is_empty()) {
        (true, _) => b.to_string(),
        (_, true) => a.to_string(),
        _ => format!("{a}/{b}"),
    }
}

/// Fetches the externals that `definitions` (directory relpath, `svn:externals` value)
/// define below `parent.root`, each as the stock client does: a directory external is a
/// working copy (or export) of its own, registered in the parent's `EXTERNALS` table; the
/// externals of externals are fetched in turn. A definition that fails is notified and
/// the others go on; the result says whether any failed.
pub fn fetch(
    mut parent: Parent,
    definitions: &[(String, Vec<u8>)],
    notify: &mut dyn FnMut(Notify),
) -> Result<bool> {
    let mut failed = false;
    let mut order: Vec<&(String, Vec<u8>)> = definitions.iter().collect();
    order.sort_by(|a, b| a.0.cmp(&b.0));
    for (dir, value) in order {
        let shown = parent.root.join(dir).display().to_string();
        let items = match parse(&shown, value) {
            Ok(items) => items,
            Err(e) => {
                notify(Notify::ExternalFailed {
                    relpath: dir,
                    message: e.to_string(),
                });
                failed = true;
                continue;
            }
        };
        let parent_dir_url = if dir.is_empty() {
            parent.url.to_string()
        } else {
            format!("{}/{}", parent.url, url::encode(dir))
        };
        for item in &items {
            let local = join_relpath(dir, &item.target_dir);
            match fetch_one(&mut parent, dir, &local, item, &parent_dir_url, notify) {
                Ok(sub_failed) => failed |= sub_failed,
                Err(e) => {
                    notify(Notify::ExternalFailed {
                        relpath: &local,
                        message: e.to_string(),
                    });
                    failed = true;
                }
            }
        }
    }
    Ok(failed)
}

/// Fetches one external into `local` (relative to the parent's root).
fn fetch_one(
    parent: &mut Parent,
    dir: &str,
    local: &str,
    item: &Item,
    parent_dir_url: &str,
    notify: &mut dyn FnMut(Notify),
) -> Result<bool> {
    let opts = parent.opts;
    let ext_url = resolve(&item.url, parent.root_url, parent_dir_url)?;
    // An export announces the external before it looks at it; a checkout after.
    if parent.export {
        notify(Notify::External { relpath: local });
    }
    let mut session = ra::open(&ext_url, &opts.credentials)?;
    let rev = match item.operative() {
        Some(r) => r,
        None => session.latest_rev()?,
    };
    // The definition names the URL at its peg revision (HEAD when none): it must be there.
    // (Svelto does not follow a node moved between the peg and the operative revision.)
    if item.peg != Some(rev) {
        let peg = match item.peg {
            Some(p) => p,
            None => session.latest_rev()?,
        };
        if session.check_path(peg)? == "none" {
            let path = url::relpath_below(session.root_url(), session.url()).unwrap_or_default();
            return Err(Error::Usage(format!(
                "File not found: revision {peg}, path '/{path}'"
            )));
        }
    }
    let kind = session.check_path(rev)?;
    let (ext_root, uuid) = (session.root_url().to_string(), session.uuid().to_string());
    let def_repos_relpath = url::relpath_below(&ext_root, session.url()).unwrap_or_default();
    match kind.as_str() {
        "dir" => {}
        "file" => {
            if ext_root != parent.root_url {
                return Err(Error::Usage(format!(
                    "Unsupported external: URL of file external '{ext_url}' is not in \
                     repository '{}'",
                    parent.root_url
                )));
            }
            let iprops = match session.inherited_props(rev)? {
                Some(ip) => skel::iprops(&ip),
                None => skel::iprops(&[]),
            };
            let (dir_url, name) = session
                .url()
                .rsplit_once('/')
                .map(|(d, n)| (d.to_string(), n.to_string()))
                .unwrap_or_default();
            let name = String::from_utf8_lossy(&url::decode(&name)).into_owned();
            drop(session);
            let dir_session = ra::open(&dir_url, &opts.credentials)?;
            if !parent.export {
                notify(Notify::External { relpath: local });
            }
            let fx = FileExternal {
                local_relpath: local.to_string(),
                repos_path: def_repos_relpath.clone(),
            };
            let (db, pristines, revision) = fetch_file_external(
                dir_session,
                rev,
                &name,
                fx,
                iprops,
                parent.root,
                parent.db.take(),
                std::mem::take(&mut parent.pristines),
                opts,
                notify,
            )?;
            parent.db = db;
            parent.pristines = pristines;
            if let Some(db) = &parent.db {
                db.put_external(&External {
                    local_relpath: local,
                    def_local_relpath: dir,
                    kind: "file",
                    repos_root: &ext_root,
                    uuid: &uuid,
                    def_repos_relpath: &def_repos_relpath,
                    peg: item.peg,
                    revision: item.revision,
                })?;
            }
            // An exported file external ends without a revision, as with svn.
            notify(Notify::ExternalDone {
                revision: parent.db.is_some().then_some(revision),
            });
            return Ok(false);
        }
        _ => {
            return Err(Error::Usage(format!(
                "URL '{ext_url}' at revision {rev} doesn't exist"
            )))
        }
    }
    if !parent.export {
        notify(Notify::External { relpath: local });
    }
    let sub = Options {
        url: ext_url.clone(),
        path: parent.root.join(local),
        revision: Some(rev),
        date: None,
        peg: None,
        depth: None,
        ..opts.clone()
    };
    let mut below = |n: Notify| below(local, n, notify);
    let summary = run_in(session, rev, &sub, &mut below, parent.export, None)?;
    if let Some(db) = &parent.db {
        db.put_external(&External {
            local_relpath: local,
            def_local_relpath: dir,
            kind: "dir",
            repos_root: &ext_root,
            uuid: &uuid,
            def_repos_relpath: &def_repos_relpath,
            peg: item.peg,
            revision: item.revision,
        })?;
    }
    notify(Notify::ExternalDone {
        revision: Some(summary.revision),
    });
    Ok(summary.externals_failed)
}

/// Passes an external's notification on, its paths below the parent's root.
fn below(local: &str, n: Notify, notify: &mut dyn FnMut(Notify)) {
    match n {
        Notify::Added { relpath, is_dir } => notify(Notify::Added {
            relpath: &join_relpath(local, relpath),
            is_dir,
        }),
        Notify::Updated {
            relpath,
            text,
            props,
        } => notify(Notify::Updated {
            relpath: &join_relpath(local, relpath),
            text,
            props,
        }),
        Notify::Deleted { relpath } => notify(Notify::Deleted {
            relpath: &join_relpath(local, relpath),
        }),
        Notify::Existed { relpath, is_dir } => notify(Notify::Existed {
            relpath: &join_relpath(local, relpath),
            is_dir,
        }),
        Notify::External { relpath } => notify(Notify::External {
            relpath: &join_relpath(local, relpath),
        }),
        Notify::ExternalFailed { relpath, message } => notify(Notify::ExternalFailed {
            relpath: &join_relpath(local, relpath),
            message,
        }),
        Notify::ExternalRemoved { relpath, message } => notify(Notify::ExternalRemoved {
            relpath: &join_relpath(local, relpath),
            message,
        }),
        Notify::TreeConflict { relpath } => notify(Notify::TreeConflict {
            relpath: &join_relpath(local, relpath),
        }),
        Notify::ShadowedAdd { relpath } => notify(Notify::ShadowedAdd {
            relpath: &join_relpath(local, relpath),
        }),
        Notify::Restored { relpath } => notify(Notify::Restored {
            relpath: &join_relpath(local, relpath),
        }),
        other => notify(other),
    }
}

/// An external the working copy has: (local relpath, kind, repository root URL,
/// repository relpath), as `WcDb::externals` reads them.
type Registered = (String, String, String, String);

/// After `svelto update` brought the tree at `root` (whose URL is `url`, in the repository
/// at `repos_root`) to its revision: the externals its `svn:externals` now define, as
/// `svn update` handles them. An external already there from the same URL is updated in
/// place (a directory external with `update`, itself and its own externals; a file
/// external fetched again, `U` when its text or properties changed); a new one (or one
/// whose URL or kind changed) is fetched as a checkout fetches it; one whose definition
/// is gone is removed ("Removed external"), unless it has local changes, which stay on
/// disk. The result says whether a definition failed (each was notified).
pub(crate) fn update_all(
    root: &Path,
    db: WcDb,
    opts: &crate::update::UpdateOptions,
    repos_root: &str,
    url: &str,
    notify: &mut dyn FnMut(Notify),
) -> Result<bool> {
    let mut definitions = Vec::new();
    for (relpath, properties) in db.dirs_with_externals()? {
        let props = skel::parse_proplist(&properties).unwrap_or_default();
        if let Some(v) = crate::checkout::prop_value(&props, b"svn:externals") {
            definitions.push((relpath, v.to_vec()));
        }
    }
    let registered = db.externals()?;
    let pristines = db.pristine_sha1s()?;
    let copts = Options {
        url: url.to_string(),
        path: root.to_path_buf(),
        revision: None,
        date: None,
        peg: None,
        depth: None,
        credentials: opts.credentials.clone(),
        native_eol: None,
        zone: opts.zone.clone(),
        ignore_externals: false,
        force: false,
        writers: opts.writers,
        use_commit_times: opts.use_commit_times,
    };
    let mut parent = Parent {
        root,
        db: Some(db),
        pristines,
        opts: &copts,
        root_url: repos_root,
        url,
        export: false,
    };
    let mut failed = false;
    let mut defined = HashSet::new();
    definitions.sort_by(|a, b| a.0.cmp(&b.0));
    for (dir, value) in &definitions {
        let shown = root.join(dir).display().to_string();
        let items = match parse(&shown, value) {
            Ok(items) => items,
            Err(e) => {
                notify(Notify::ExternalFailed {
                    relpath: dir,
                    message: e.to_string(),
                });
                failed = true;
                // What it defined stays as it is.
                for r in registered.iter().filter(|r| is_below(&r.0, dir)) {
                    defined.insert(r.0.clone());
                }
                continue;
            }
        };
        let parent_dir_url = if dir.is_empty() {
            url.to_string()
        } else {
            format!("{url}/{}", url::encode(dir))
        };
        for item in &items {
            let local = join_relpath(dir, &item.target_dir);
            defined.insert(local.clone());
            let was = registered.iter().find(|r| r.0 == local);
            match update_one(
                &mut parent,
                dir,
                &local,
                item,
                &parent_dir_url,
                was,
                opts,
                notify,
            ) {
                Ok(sub_failed) => failed |= sub_failed,
                Err(e) => {
                    notify(Notify::ExternalFailed {
                        relpath: &local,
                        message: e.to_string(),
                    });
                    failed = true;
                }
            }
        }
    }
    for r in registered.iter().filter(|r| !defined.contains(&r.0)) {
        let message = remove_one(&mut parent, r, opts)?;
        notify(Notify::ExternalRemoved {
            relpath: &r.0,
            message,
        });
    }
    Ok(failed)
}

/// Whether `relpath` is `dir` or below it.
fn is_below(relpath: &str, dir: &str) -> bool {
    dir.is_empty()
        || relpath == dir
        || relpath
            .strip_prefix(dir)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// The URL of a registered external.
fn registered_url(r: &Registered) -> String {
    if r.3.is_empty() {
        r.2.clone()
    } else {
        format!("{}/{}", r.2, url::encode(&r.3))
    }
}

/// Whether two URLs name the same node (escaping aside).
fn same_url(a: &str, b: &str) -> bool {
    url::decode(a.trim_end_matches('/')) == url::decode(b.trim_end_matches('/'))
}

/// Updates (or fetches) the external `item` at `local`; `was`: what was registered there.
#[allow(clippy::too_many_arguments)]
fn update_one(
    parent: &mut Parent,
    dir: &str,
    local: &str,
    item: &Item,
    parent_dir_url: &str,
    was: Option<&Registered>,
    opts: &crate::update::UpdateOptions,
    notify: &mut dyn FnMut(Notify),
) -> Result<bool> {
    let ext_url = resolve(&item.url, parent.root_url, parent_dir_url)?;
    let path = parent.root.join(local);
    if let Some(r) = was {
        let same = same_url(&registered_url(r), &ext_url);
        if r.1 == "dir" && path.join(".svn/wc.db").is_file() {
            // Updated in place at the same URL; switched there when the URL moved within its
            // repository, as svn switches it (one from another repository is checked out anew).
            let in_place = if same {
                Some((None, r.3.clone()))
            } else {
                let (ext_root, _) = WcDb::open(&path)?.repository()?;
                url::relpath_below(&ext_root, &ext_url).map(|rel| (Some(ext_url.clone()), rel))
            };
            if let Some((switch_url, def_repos_relpath)) = in_place {
                notify(Notify::External { relpath: local });
                let sub = crate::update::UpdateOptions {
                    path: path.clone(),
                    revision: item.operative(),
                    date: None,
                    switch_url,
                    ..opts.clone()
                };
                let summary = crate::update::update(&sub, &mut |n| below(local, n, notify))?;
                if let Some(db) = &parent.db {
                    let (ext_root, uuid) = WcDb::open(&path)?.repository()?;
                    db.put_external(&External {
                        local_relpath: local,
                        def_local_relpath: dir,
                        kind: "dir",
                        repos_root: &ext_root,
                        uuid: &uuid,
                        def_repos_relpath: &def_repos_relpath,
                        peg: item.peg,
                        revision: item.revision,
                    })?;
                }
                notify(Notify::ExternalDone {
                    revision: Some(summary.revision),
                });
                return Ok(summary.externals_failed);
            }
        }
        if same && r.1 == "file" {
            return refresh_file(parent, dir, local, item, parent_dir_url, opts, notify);
        }
        // Another URL or kind: the old one goes, the new one is fetched.
        if let Some(why) = remove_one(parent, r, opts)? {
            return Err(Error::Usage(format!(
                "'{}' is in the way of the external now defined there ({why})",
                path.display()
            )));
        }
    }
    fetch_one(parent, dir, local, item, parent_dir_url, notify)
}

/// The BASE row of a file external.
fn file_external_node(db: &WcDb, local: &str) -> Result<Option<crate::wc::OwnedNode>> {
    Ok(db
        .base_nodes()?
        .into_iter()
        .find(|n| n.local_relpath == local && n.file_external))
}

/// Whether a file external's working file differs from its pristine (or is missing).
fn file_external_modified(
    parent: &Parent,
    db: &WcDb,
    node: &crate::wc::OwnedNode,
    opts: &crate::update::UpdateOptions,
) -> bool {
    !crate::update::local_changes(
        parent.root,
        db,
        std::slice::from_ref(node),
        parent.root_url,
        &opts.zone,
    )
    .is_ok_and(|m| m.is_empty())
}

/// Fetches a file external again at its definition's revision: `U` when its text or
/// properties changed, nothing else when not (svn's update of a file external).
#[allow(clippy::too_many_arguments)]
fn refresh_file(
    parent: &mut Parent,
    dir: &str,
    local: &str,
    item: &Item,
    parent_dir_url: &str,
    opts: &crate::update::UpdateOptions,
    notify: &mut dyn FnMut(Notify),
) -> Result<bool> {
    let path = parent.root.join(local);
    let before = match &parent.db {
        Some(db) => file_external_node(db, local)?,
        None => None,
    };
    if let (Some(db), Some(node)) = (&parent.db, &before) {
        if file_external_modified(parent, db, node, opts) {
            return Err(Error::Usage(format!(
                "the file external '{}' has local changes; use 'svn update'",
                path.display()
            )));
        }
    }
    notify(Notify::External { relpath: local });
    if let Some(db) = &parent.db {
        db.delete_external(local)?;
    }
    match std::fs::remove_file(&path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(crate::error::file_err(&path)(e)),
    }
    let mut done = None;
    let result = fetch_one(parent, dir, local, item, parent_dir_url, &mut |n| match n {
        Notify::External { .. } | Notify::Added { .. } => {}
        Notify::ExternalDone { revision } => done = Some(revision),
        other => notify(other),
    });
    result?;
    if let (Some(db), Some(author)) = (
        &parent.db,
        before.as_ref().and_then(|b| b.changed_author.as_deref()),
    ) {
        db.keep_author(local, author)?;
    }
    let after = match &parent.db {
        Some(db) => file_external_node(db, local)?,
        None => None,
    };
    let (text, props) = match (&before, &after) {
        (Some(b), Some(a)) => (b.checksum != a.checksum, b.properties != a.properties),
        _ => (true, false),
    };
    if text || props {
        notify(Notify::Updated {
            relpath: local,
            text,
            props,
        });
    }
    notify(Notify::ExternalDone {
        revision: done.flatten(),
    });
    Ok(false)
}

/// Removes a registered external whose definition is gone (or changed): its working copy
/// (or file) and its rows. What has local changes stays on disk; the result says why.
fn remove_one(
    parent: &mut Parent,
    r: &Registered,
    opts: &crate::update::UpdateOptions,
) -> Result<Option<String>> {
    let (local, kind) = (r.0.as_str(), r.1.as_str());
    let path = parent.root.join(local);
    let mut left = None;
    if kind == "file" {
        if let Some(db) = &parent.db {
            if let Some(node) = file_external_node(db, local)? {
                if file_external_modified(parent, db, &node, opts) {
                    left = Some("the file has local changes and was left in place".to_string());
                }
            }
        }
        if left.is_none() {
            match std::fs::remove_file(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(crate::error::file_err(&path)(e)),
            }
        }
    } else if path.join(".svn/wc.db").is_file() {
        if external_is_clean(&path, opts) {
            std::fs::remove_dir_all(&path).map_err(crate::error::file_err(&path))?;
        } else {
            left = Some(
                "the working copy has local changes (or could not be read) and was left in place"
                    .to_string(),
            );
        }
    }
    if let Some(db) = &parent.db {
        if kind == "file" {
            db.remove_file_external(local)?;
        } else {
            db.delete_external(local)?;
        }
    }
    Ok(left)
}

/// Whether the working copy at `path` has nothing `svn` would lose: nothing scheduled, no
/// property changes or conflicts, no working file that differs from its pristine.
fn external_is_clean(path: &Path, opts: &crate::update::UpdateOptions) -> bool {
    let check = || -> Result<bool> {
        let db = WcDb::open(path)?;
        for sql in [
            "SELECT COUNT(*) FROM NODES WHERE op_depth > 0",
            "SELECT COUNT(*) FROM ACTUAL_NODE",
            "SELECT COUNT(*) FROM WORK_QUEUE",
        ] {
            if db.count(sql)? > 0 {
                return Ok(false);
            }
        }
        let (repos_root, _) = db.repository()?;
        let nodes = db.base_nodes()?;
        let modified = crate::update::local_changes(path, &db, &nodes, &repos_root, &opts.zone)?;
        Ok(modified.is_empty())
    };
    check().unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(target: &str, url: &str, peg: Option<u64>, revision: Option<u64>) -> Item {
        Item {
            target_dir: target.into(),
            url: url.into(),
            peg,
            revision,
        }
    }

    #[test]
    fn every_line_form_parses_as_svn_parses_it() {
        let desc = "# a comment\n\
            ^/trunk/a/b new\n\
            -r 3 ^/trunk/src pinned\n\
            -r3 ../x pinned2\n\
            ^/trunk/src@5 pegged\n\
            old svn://h/r/trunk\n\
            old2 -r 4 svn://h/r/trunk\n\
            old3 -r4 svn://h/r/trunk\n\
            \"with space/x\" '^/a b'\n\
            \r\n";
        let items = parse("wc", desc.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            items,
            vec![
                item("new", "^/trunk/a/b", None, None),
                item("pinned", "^/trunk/src", None, Some(3)),
                item("pinned2", "../x", None, Some(3)),
                item("pegged", "^/trunk/src", Some(5), Some(5)),
                item("old", "svn://h/r/trunk", None, None),
                item("old2", "svn://h/r/trunk", Some(4), Some(4)),
                item("old3", "svn://h/r/trunk", Some(4), Some(4)),
                // Both are relative: taken as URL DIR, as svn takes them.
                item("^/a b", "with space/x", None, None),
            ]
        );
    }

    #[test]
    fn bad_lines_are_refused_with_the_line() {
        for bad in [
            "onlyone",
            "a b c d e",
            "svn://h/a svn://h/b",
            "-r 3 x svn://h/u",
            "^/x ../up",
            "^/x /abs",
            "-r x ^/a b",
            "-r 3 ^/a",
        ] {
            let e = parse("wc/dir", bad.as_bytes()).err().map(|e| e.to_string());
            let e = e.unwrap_or_else(|| panic!("{bad:?} was accepted"));
            assert!(e.contains("wc/dir"), "{bad:?}: {e}");
        }
    }

    #[test]
    fn relative_urls_resolve_as_svn_resolves_them() {
        let root = "svn://h:1/repos";
        let parent = "svn://h:1/repos/trunk/a";
        for (url, want) in [
            ("^/trunk/src", "svn://h:1/repos/trunk/src"),
            ("^/../other/x", "svn://h:1/other/x"),
            ("../b", "svn://h:1/repos/trunk/b"),
            ("../../../../../x", "svn://h:1/x"),
            ("//other:2/r/x", "svn://other:2/r/x"),
            ("/repos/tags", "svn://h:1/repos/tags"),
            ("http://x/y/", "http://x/y"),
        ] {
            assert_eq!(
                resolve(url, root, parent).ok().as_deref(),
                Some(want),
                "{url}"
            );
        }
        assert!(resolve("/a/../b", root, parent).is_err());
        assert!(resolve("plain", root, parent).is_err());
    }
}
