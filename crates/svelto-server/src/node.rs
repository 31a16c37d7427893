//! The commands that read nodes (protocol doc 4): reparent, get-latest-rev, get-dated-rev,
//! check-path, stat, get-file, get-dir, list, get-iprops.

use crate::actions::{one, Ctx, Pending};
use crate::command::{Command, Reply};
use crate::conn::{Conn, StringChunks};
use crate::error::{code, CmdError, CmdResult, Failure};
use crate::items::{proplist_item, EPOCH};
use crate::session::Session;
use crate::url::path_in_repo;
use std::io::{Read, Write};
use svelto_core::{parse_svn_date, Depth, NodeKind, PropList, Revnum};
use svelto_repos::action;
use svelto_repos::list::DirentFields as Fields;
use svelto_repos::{ListedNode, Node};
use svelto_wire::{success, Item, ItemWriter, TupleReader};

/// The size svnserve sends for a directory in `stat` and `list` (the client's "invalid").
const DIR_SIZE: u64 = u64::MAX;

/// `reparent ( url:string )`: the session moves to another path of the repository.
pub struct Reparent {
    url: String,
}

impl Command for Reparent {
    fn parse(p: &mut TupleReader<'_>) -> CmdResult<Self> {
        let url = String::from_utf8_lossy(p.string()?).into_owned();
        Ok(Reparent { url })
    }

    fn run<R: Read, W: Write>(&self, s: &mut Session, _: &mut Conn<R, W>) -> CmdResult<Reply> {
        s.path = path_in_repo(&s.root_url, &self.url)?;
        Ok(Some(vec![]))
    }

    fn action(&self, ctx: &Ctx<'_>) -> Pending {
        match ctx.url_path(self.url.as_bytes()) {
            Some(path) => one(action::reparent(&path)),
            None => Pending::Nothing,
        }
    }
}

/// `get-latest-rev ( )`.
pub struct GetLatestRev;

impl Command for GetLatestRev {
    fn parse(_: &mut TupleReader<'_>) -> CmdResult<Self> {
        Ok(GetLatestRev)
    }

    fn run<R: Read, W: Write>(&self, s: &mut Session, _: &mut Conn<R, W>) -> CmdResult<Reply> {
        Ok(Some(vec![Item::Number(s.ctx.head()?)]))
    }

    fn action(&self, _: &Ctx<'_>) -> Pending {
        one(action::get_latest_rev())
    }
}

/// `get-dated-rev ( date:string )`: the youngest revision not after the date.
pub struct GetDatedRev {
    date: String,
}

impl Command for GetDatedRev {
    fn parse(p: &mut TupleReader<'_>) -> CmdResult<Self> {
        let date = String::from_utf8_lossy(p.string()?).into_owned();
        Ok(GetDatedRev { date })
    }

    fn run<R: Read, W: Write>(&self, s: &mut Session, _: &mut Conn<R, W>) -> CmdResult<Reply> {
        get_dated_rev(s, &self.date)
    }

    fn action(&self, _: &Ctx<'_>) -> Pending {
        one(action::get_dated_rev(&self.date))
    }
}

fn get_dated_rev(s: &mut Session, text: &str) -> CmdResult<Reply> {
    let want = parse_svn_date(text)
        .ok_or_else(|| CmdError::new(code::BAD_DATE, format!("Can't parse date '{text}'")))?;
    Ok(Some(vec![Item::Number(s.ctx.dated_rev(want)?)]))
}

fn kind_word(k: NodeKind) -> Item {
    Item::word(k.as_str())
}

/// A client path and a revision (HEAD when left out): what several reads take first.
pub struct PathRev {
    path: Vec<u8>,
    rev: Option<Revnum>,
}

impl PathRev {
    fn parse(p: &mut TupleReader<'_>) -> CmdResult<Self> {
        let path = p.string()?.to_vec();
        let rev = p.bracket_rev()?;
        Ok(PathRev { path, rev })
    }

    /// The repository path and the revision, checked.
    fn resolve(&self, s: &Session) -> CmdResult<(String, Revnum)> {
        let path = s.full_path(&self.path)?;
        Ok((path, s.ctx.rev_or_head(self.rev)?))
    }
}

/// `check-path ( path:string [ rev:number ] )`.
pub struct CheckPath(PathRev);

impl Command for CheckPath {
    fn parse(p: &mut TupleReader<'_>) -> CmdResult<Self> {
        PathRev::parse(p).map(CheckPath)
    }

    fn authz_path(&self) -> Option<&[u8]> {
        Some(&self.0.path)
    }

    fn run<R: Read, W: Write>(&self, s: &mut Session, _: &mut Conn<R, W>) -> CmdResult<Reply> {
        check_path(s, &self.0)
    }

    fn action(&self, ctx: &Ctx<'_>) -> Pending {
        one(action::check_path(
            &ctx.full(&self.0.path),
            ctx.rev(self.0.rev),
        ))
    }
}

fn check_path(s: &mut Session, req: &PathRev) -> CmdResult<Reply> {
    let rev = s.ctx.rev_or_head(req.rev)?;
    if names_nothing(&req.path) {
        return Ok(Some(vec![Item::word("none")]));
    }
    let path = s.full_path(&req.path)?;
    let kind = match s.ctx.node(&path, rev)? {
        Some(n) => kind_word(n.kind()),
        None => Item::word("none"),
    };
    Ok(Some(vec![kind]))
}

/// A path with a control character names no node (commits and loads refuse them): svnserve
/// looks it up and finds nothing, so `svn copy URL URL/tab%09dir` reaches the commit, which
/// refuses the path with E160005, instead of failing at the client's existence check.
fn names_nothing(raw: &[u8]) -> bool {
    raw.iter().any(u8::is_ascii_control)
}

fn opt_string(v: Option<Vec<u8>>) -> Item {
    Item::opt(v.map(Item::String))
}

/// `stat ( path:string [ rev:number ] )`.
pub struct Stat(PathRev);

impl Command for Stat {
    fn parse(p: &mut TupleReader<'_>) -> CmdResult<Self> {
        PathRev::parse(p).map(Stat)
    }

    fn authz_path(&self) -> Option<&[u8]> {
        Some(&self.0.path)
    }

    fn run<R: Read, W: Write>(&self, s: &mut Session, _: &mut Conn<R, W>) -> CmdResult<Reply> {
        stat(s, &self.0)
    }

    fn action(&self, ctx: &Ctx<'_>) -> Pending {
        one(action::stat(&ctx.full(&self.0.path), ctx.rev(self.0.rev)))
    }
}

fn stat(s: &mut Session, req: &PathRev) -> CmdResult<Reply> {
    let rev = s.ctx.rev_or_head(req.rev)?;
    if names_nothing(&req.path) {
        return Ok(Some(vec![Item::empty_list()]));
    }
    let path = s.full_path(&req.path)?;
    let Some(node) = s.ctx.node(&path, rev)? else {
        return Ok(Some(vec![Item::empty_list()]));
    };
    let (date, author) = s.ctx.rev_info(node.created_rev())?;
    let size = match node.kind() {
        NodeKind::File => node.size(),
        NodeKind::Dir => DIR_SIZE,
    };
    let dirent = Item::list(vec![
        kind_word(node.kind()),
        Item::Number(size),
        Item::bool(node.has_props()),
        Item::Number(node.created_rev()),
        Item::opt(Some(Item::string(date.unwrap_or_else(|| EPOCH.into())))),
        opt_string(author),
    ]);
    Ok(Some(vec![Item::list(vec![dirent])]))
}

/// A node's properties followed by the entry props the client keeps in its working copy.
fn props_with_entry_props(s: &Session, node: &Node) -> CmdResult<PropList> {
    let mut props = s.ctx.node_props(node)?;
    let (date, author) = s.ctx.rev_info(node.created_rev())?;
    props.insert(
        b"svn:entry:committed-rev".to_vec(),
        node.created_rev().to_string().into_bytes(),
    );
    if let Some(d) = date {
        props.insert(b"svn:entry:committed-date".to_vec(), d);
    }
    if let Some(a) = author {
        props.insert(b"svn:entry:last-author".to_vec(), a);
    }
    props.insert(b"svn:entry:uuid".to_vec(), s.uuid.clone().into_bytes());
    Ok(props)
}

/// The properties of each ancestor of `path` that has any, root first.
pub fn inherited_props(s: &Session, path: &str, rev: Revnum) -> CmdResult<Vec<(String, PropList)>> {
    Ok(s.ctx.inherited_props(path, rev)?)
}

fn iprops_item(iprops: &[(String, PropList)]) -> Item {
    Item::List(
        iprops
            .iter()
            .map(|(p, props)| Item::list(vec![Item::string(p.clone()), proplist_item(props)]))
            .collect(),
    )
}

/// `get-file ( path:string [ rev:number ] want-props:bool want-contents:bool
/// ? want-iprops:bool )`.
pub struct GetFile {
    at: PathRev,
    want_props: bool,
    want_contents: bool,
    want_iprops: bool,
}

impl Command for GetFile {
    fn parse(p: &mut TupleReader<'_>) -> CmdResult<Self> {
        Ok(GetFile {
            at: PathRev::parse(p)?,
            want_props: p.bool()?,
            want_contents: p.bool()?,
            want_iprops: p.opt_bool()?.unwrap_or(false),
        })
    }

    fn authz_path(&self) -> Option<&[u8]> {
        Some(&self.at.path)
    }

    fn run<R: Read, W: Write>(&self, s: &mut Session, conn: &mut Conn<R, W>) -> CmdResult<Reply> {
        get_file(s, conn, self)
    }

    fn action(&self, ctx: &Ctx<'_>) -> Pending {
        one(action::get_file(
            &ctx.full(&self.at.path),
            ctx.rev(self.at.rev),
            self.want_contents,
            self.want_props,
        ))
    }
}

fn get_file<R: Read, W: Write>(
    s: &mut Session,
    conn: &mut Conn<R, W>,
    req: &GetFile,
) -> CmdResult<Reply> {
    let (path, rev) = req.at.resolve(s)?;
    let (want_props, want_contents, want_iprops) =
        (req.want_props, req.want_contents, req.want_iprops);
    let node = s.ctx.node_at(&path, rev)?;
    if node.kind() != NodeKind::File {
        return Err(CmdError::new(
            code::FS_NOT_FILE,
            "Attempted to get checksum of a *non*-file node",
        )
        .into());
    }
    let props = if want_props {
        props_with_entry_props(s, &node)?
    } else {
        PropList::new()
    };
    let mut results = vec![
        Item::opt(Some(Item::string(node.md5().to_hex()))),
        Item::Number(rev),
        proplist_item(&props),
    ];
    if want_iprops {
        results.push(iprops_item(&inherited_props(s, &path, rev)?));
    }
    if !want_contents {
        return Ok(Some(results));
    }
    conn.write_item(&success(results))?;
    let mut chunks = StringChunks::new(conn);
    let streamed = s.ctx.write_text(&node, &mut chunks);
    match streamed {
        Ok(()) => {
            chunks.finish()?;
            conn.write_string(b"")?;
            Ok(Some(vec![]))
        }
        Err(e) => {
            // The client reads the end marker, then this error as the second response.
            chunks.finish()?;
            conn.write_string(b"")?;
            Err(Failure::from(e))
        }
    }
}

/// Which dirent fields the client asked for (`kind size has-props created-rev time
/// last-author`); all when the list is missing.
fn parse_fields(list: Option<&[Item]>) -> Fields {
    let Some(items) = list else {
        return Fields::ALL;
    };
    let has = |w: &str| items.iter().any(|i| i.as_word() == Some(w));
    Fields {
        kind: has("kind"),
        size: has("size"),
        has_props: has("has-props"),
        created_rev: has("created-rev"),
        time: has("time"),
        author: has("last-author"),
    }
}

/// `get-dir ( path:string [ rev:number ] want-props:bool want-contents:bool
/// ? ( field:dirent-field ... ) ? want-iprops:bool )`.
pub struct GetDir {
    at: PathRev,
    want_props: bool,
    want_contents: bool,
    fields: Fields,
    want_iprops: bool,
}

impl Command for GetDir {
    fn parse(p: &mut TupleReader<'_>) -> CmdResult<Self> {
        Ok(GetDir {
            at: PathRev::parse(p)?,
            want_props: p.bool()?,
            want_contents: p.bool()?,
            fields: parse_fields(p.opt_list()?),
            want_iprops: p.opt_bool()?.unwrap_or(false),
        })
    }

    fn authz_path(&self) -> Option<&[u8]> {
        Some(&self.at.path)
    }

    fn run<R: Read, W: Write>(&self, s: &mut Session, _: &mut Conn<R, W>) -> CmdResult<Reply> {
        get_dir(s, self)
    }

    fn action(&self, ctx: &Ctx<'_>) -> Pending {
        one(action::get_dir(
            &ctx.full(&self.at.path),
            ctx.rev(self.at.rev),
            self.want_contents,
            self.want_props,
        ))
    }
}

fn get_dir(s: &mut Session, req: &GetDir) -> CmdResult<Reply> {
    let (path, rev) = req.at.resolve(s)?;
    let (want_props, want_contents, fields, want_iprops) = (
        req.want_props,
        req.want_contents,
        req.fields,
        req.want_iprops,
    );
    let node = s.ctx.node_at(&path, rev)?;
    if node.kind() != NodeKind::Dir {
        return Err(CmdError::new(
            code::FS_NOT_DIRECTORY,
            format!("Path '/{path}' not a directory"),
        )
        .into());
    }
    let props = if want_props {
        props_with_entry_props(s, &node)?
    } else {
        PropList::new()
    };
    let mut entries = Vec::new();
    if want_contents {
        s.ctx.dir_entries(&node, &mut |name, child| {
            let (date, author) = if fields.time || fields.author {
                s.ctx.rev_info(child.created_rev())?
            } else {
                (None, None)
            };
            let size = match (fields.size, child.kind()) {
                (true, NodeKind::File) => child.size(),
                _ => 0,
            };
            entries.push(Item::list(vec![
                Item::string(name),
                if fields.kind {
                    kind_word(child.kind())
                } else {
                    Item::word("none")
                },
                Item::Number(size),
                Item::bool(fields.has_props && child.has_props()),
                Item::Number(if fields.created_rev {
                    child.created_rev()
                } else {
                    0
                }),
                Item::opt(Some(Item::string(match (fields.time, date) {
                    (true, Some(d)) => d,
                    _ => EPOCH.as_bytes().to_vec(),
                }))),
                opt_string(if fields.author { author } else { None }),
            ]));
            Ok(())
        })?;
    }
    let mut results = vec![
        Item::Number(rev),
        proplist_item(&props),
        Item::List(entries),
    ];
    if want_iprops {
        results.push(iprops_item(&inherited_props(s, &path, rev)?));
    }
    Ok(Some(results))
}

/// `list ( path:string [ rev:number ] depth:word ( field:dirent-field ... )
/// ? ( pattern:string ... ) )`: entries streamed, then `done`.
pub struct List {
    at: PathRev,
    depth: String,
    fields: Fields,
    patterns: Option<Vec<Vec<u8>>>,
}

impl Command for List {
    fn parse(p: &mut TupleReader<'_>) -> CmdResult<Self> {
        let at = PathRev::parse(p)?;
        let depth = p.word()?.to_string();
        let fields = parse_fields(Some(p.list()?));
        let patterns = match p.opt_list()? {
            None => None,
            Some(items) => Some(
                items
                    .iter()
                    .map(|i| i.as_string().map(<[u8]>::to_vec))
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(|| {
                        CmdError::new(
                            code::RA_SVN_MALFORMED_DATA,
                            "list: patterns must be strings",
                        )
                    })?,
            ),
        };
        Ok(List {
            at,
            depth,
            fields,
            patterns,
        })
    }

    fn authz_path(&self) -> Option<&[u8]> {
        Some(&self.at.path)
    }

    fn run<R: Read, W: Write>(&self, s: &mut Session, conn: &mut Conn<R, W>) -> CmdResult<Reply> {
        list(s, conn, self)
    }

    fn action(&self, ctx: &Ctx<'_>) -> Pending {
        let depth = Depth::from_word(&self.depth).unwrap_or(Depth::Unknown);
        let patterns: Option<Vec<String>> = self.patterns.as_ref().map(|l| {
            l.iter()
                .map(|s| String::from_utf8_lossy(s).into_owned())
                .collect()
        });
        one(action::list(
            &ctx.full(&self.at.path),
            ctx.rev(self.at.rev),
            depth,
            patterns.as_deref(),
        ))
    }
}

fn list<R: Read, W: Write>(s: &mut Session, conn: &mut Conn<R, W>, req: &List) -> CmdResult<Reply> {
    let (path, rev) = req.at.resolve(s)?;
    let (depth_word, fields, patterns) = (&req.depth, req.fields, &req.patterns);
    let depth = match Depth::from_word(depth_word) {
        Some(d) if d >= Depth::Empty => d,
        _ => {
            conn.write_item(&Item::word("done"))?;
            return Err(CmdError::new(
                code::REPOS_BAD_ARGS,
                format!("Invalid depth '{depth_word}' for list"),
            )
            .into());
        }
    };
    let result = list_walk(s, conn, &path, rev, depth, fields, patterns.as_deref());
    conn.write_item(&Item::word("done"))?;
    result.map(|()| Some(vec![]))
}

fn list_walk<R: Read, W: Write>(
    s: &Session,
    conn: &mut Conn<R, W>,
    path: &str,
    rev: Revnum,
    depth: Depth,
    fields: Fields,
    patterns: Option<&[Vec<u8>]>,
) -> CmdResult<()> {
    // The walk and its authz filtering are the service's (svn_repos_list); the wire is ours.
    let mut failure: Option<Failure> = None;
    let mut entry = ListEntry::default();
    let result = s.ctx.list(path, rev, depth, patterns, &mut |p, n| {
        entry.send(s, conn, p, n, fields).map_err(|f| {
            failure = Some(f);
            svelto_repos::ReposError::Stopped("the list entry could not be sent".into())
        })
    });
    match (failure, result) {
        (Some(f), _) => Err(f),
        (None, r) => Ok(r?),
    }
}

/// What `list` writes for each entry, reused from one entry to the next: the entry's bytes
/// and the date and author of the revisions seen so far (a tree's entries share them).
#[derive(Default)]
struct ListEntry {
    buf: Vec<u8>,
    revs: svelto_repos::service::RevInfoMemo,
}

impl ListEntry {
    /// Writes `( path:string kind:word ( ?size ) ( ?has-props ) ( ?created-rev ) ( ?date )
    /// ( ?author ) )` for `node` at `path`, the fields asked for filled in, without an item
    /// tree.
    fn send<R: Read, W: Write>(
        &mut self,
        s: &Session,
        conn: &mut Conn<R, W>,
        path: &str,
        node: &ListedNode,
        fields: Fields,
    ) -> CmdResult<()> {
        self.buf.clear();
        let mut w = ItemWriter(&mut self.buf);
        w.open().fspath(path.as_bytes());
        w.word(if fields.kind {
            node.kind().as_str()
        } else {
            "unknown"
        });
        if !fields.only_kind() {
            let rev = node.created_rev();
            let (date, author) = if fields.time || fields.author {
                let (date, author) = self.revs.get(&s.ctx, rev)?;
                (date.as_deref(), author.as_deref())
            } else {
                (None, None)
            };
            let size = match node.kind() {
                NodeKind::File => node.size(),
                NodeKind::Dir => DIR_SIZE,
            };
            w.open();
            if fields.size {
                w.number(size);
            }
            w.close().open();
            if fields.has_props {
                w.bool(node.has_props());
            }
            w.close().open();
            if fields.created_rev {
                w.number(rev);
            }
            w.close();
            w.opt_string(date.filter(|_| fields.time));
            w.opt_string(author.filter(|_| fields.author));
        }
        w.close();
        conn.write_raw(&self.buf)?;
        Ok(())
    }
}

/// `get-iprops ( path:string [ rev:number ] )`.
pub struct GetIprops(PathRev);

impl Command for GetIprops {
    fn parse(p: &mut TupleReader<'_>) -> CmdResult<Self> {
        PathRev::parse(p).map(GetIprops)
    }

    fn authz_path(&self) -> Option<&[u8]> {
        Some(&self.0.path)
    }

    fn run<R: Read, W: Write>(&self, s: &mut Session, _: &mut Conn<R, W>) -> CmdResult<Reply> {
        get_iprops(s, &self.0)
    }

    fn action(&self, ctx: &Ctx<'_>) -> Pending {
        one(action::get_inherited_props(
            &ctx.full(&self.0.path),
            ctx.rev(self.0.rev),
        ))
    }
}

fn get_iprops(s: &mut Session, req: &PathRev) -> CmdResult<Reply> {
    let (path, rev) = req.resolve(s)?;
    if s.ctx.node(&path, rev)?.is_none() {
        return Err(CmdError::new(code::FS_NOT_FOUND, format!("'/{path}' path not found")).into());
    }
    Ok(Some(vec![iprops_item(&inherited_props(s, &path, rev)?)]))
}
