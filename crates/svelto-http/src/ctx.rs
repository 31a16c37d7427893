//! One request's view of its repository ([`Ctx`]: the request's `service::Ctx`, its gate,
//! the youngest revision it sees, its target) and what every handler shares: finding the
//! node a URL names (a 404 in mod_dav_svn's words), hrefs, the request's XML body, the
//! svndiff version a client takes. The handlers (`resource.rs`, the reports, `write.rs`)
//! build on it; `resource::handle` makes one per request.

use crate::error::HttpError;
use crate::uri::{encode_dav, Target};
use crate::xml::{self, Elem};
use crate::{Req, State};
use hyper::StatusCode;
use std::cell::RefCell;
use svelto_core::{NodeKind, Revnum};

/// The first line of every XML answer.
pub(crate) const XML_HEADER: &str = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n";

/// One request's view of its repository.
pub(crate) struct Ctx<'a> {
    pub state: &'a State,
    /// The repository as the service layer offers it to this request's user: the handle,
    /// the writer, the user (`svc.user`: the authenticated name, None for an anonymous
    /// request; the commit author and the authz user) and the authz rules.
    pub svc: &'a svelto_repos::service::Ctx,
    /// What the configuration lets the user do beyond the rules, and the realm.
    pub gate: &'a crate::access::Gate,
    pub youngest: Revnum,
    pub target: Target,
    /// The request's path, as sent (what mod_dav_svn's 404 messages name).
    pub uri: &'a str,
    /// The directories the connection found lately through the same repository handle
    /// (None: a write, which keeps nothing).
    pub dirs: Option<&'a RefCell<Dirs>>,
}

/// The directories a connection looked up last, by revision and path, so that the next
/// request for a file in one of them (ra_serf's checkouts and exports are a `GET` per
/// file, in tree order, on a few connections) looks up one entry instead of walking from
/// the root. A revision's tree never changes, so an entry stays true for as long as the
/// repository handle it was found through: [`crate::ConnCache`] empties it when it reads
/// the repository again.
#[derive(Default)]
pub(crate) struct Dirs {
    entries: Vec<(Revnum, String, svelto_repos::Node)>,
    /// The entry replaced next once there are [`DIRS`].
    next: usize,
}

/// How many directories a connection keeps.
const DIRS: usize = 32;

impl Dirs {
    fn get(&self, rev: Revnum, path: &str) -> Option<svelto_repos::Node> {
        self.entries
            .iter()
            .find(|(r, p, _)| *r == rev && p == path)
            .map(|(_, _, n)| n.clone())
    }

    /// The deepest directory kept of `rev` that is `path` or above it (not the root: a
    /// walk from the root starts there anyway), with its path's length.
    fn above(&self, rev: Revnum, path: &str) -> Option<(usize, svelto_repos::Node)> {
        self.entries
            .iter()
            .filter(|(r, p, _)| {
                *r == rev
                    && !p.is_empty()
                    && path.starts_with(p.as_str())
                    && matches!(path.as_bytes().get(p.len()), None | Some(b'/'))
            })
            .max_by_key(|(_, p, _)| p.len())
            .map(|(_, p, n)| (p.len(), n.clone()))
    }

    fn put(&mut self, rev: Revnum, path: &str, node: svelto_repos::Node) {
        let entry = (rev, path.to_string(), node);
        if self.entries.len() < DIRS {
            self.entries.push(entry);
        } else {
            self.entries[self.next] = entry;
            self.next = (self.next + 1) % DIRS;
        }
    }

    pub fn clear(&mut self) {
        self.entries.clear();
        self.next = 0;
    }
}

/// A node found at a path in a revision.
pub(crate) struct Node {
    pub rev: Revnum,
    pub path: String,
    pub node: svelto_repos::Node,
}

impl Ctx<'_> {
    /// Whether the user may read the repository relpath `path`.
    pub fn can_read(&self, path: &str) -> bool {
        self.svc.allowed(path, false)
    }

    /// Refuses (401 or 403, as Apache) unless the user may read `path`.
    pub fn require_read(&self, path: &str) -> Result<(), HttpError> {
        if self.can_read(path) {
            Ok(())
        } else {
            Err(self.gate.refuse(false))
        }
    }

    /// `PREFIX/REPO`.
    pub fn root_href(&self) -> &str {
        &self.target.root_href
    }

    /// `PREFIX/REPO/!svn/KIND/REV/path`, encoded as the href of a resource mod_dav walks.
    pub fn special_href(&self, kind: &str, rev: Revnum, path: &str) -> String {
        let mut h = format!("{}/!svn/{kind}/{rev}", self.root_href());
        if !path.is_empty() {
            h.push('/');
            h.push_str(&encode_dav(path));
        }
        h
    }

    /// Checks a revision the client named.
    pub fn check_rev(&self, rev: Revnum) -> Result<Revnum, HttpError> {
        if rev > self.youngest {
            return Err(HttpError::svn(
                StatusCode::NOT_FOUND,
                crate::error::FS_NO_SUCH_REVISION,
                format!("No such revision {rev}"),
            ));
        }
        Ok(rev)
    }

    /// The node at `path` in `rev` (None when there is none): from the revision's changed
    /// paths when it changed `path` (ra_serf fetches each file by the revision that last
    /// changed it), else through the connection's directories when it has its parent's,
    /// else by a walk from the root.
    fn find(&self, rev: Revnum, path: &str) -> Result<Option<svelto_repos::Node>, HttpError> {
        if path.is_empty() {
            return Ok(self.svc.node(path, rev)?);
        }
        if let Some(n) = self.svc.changed_node(path, rev)? {
            return Ok(Some(n));
        }
        let (Some(dirs), Some((parent, name))) = (self.dirs, path.rsplit_once('/')) else {
            return Ok(self.svc.node(path, rev)?);
        };
        match self.find_below(dirs, rev, parent, name) {
            // A directory on the way is hidden from the user (authz is per path: `path`
            // itself may be readable): one lookup of the path itself.
            Err(e) if e.is_unreadable() => Ok(self.svc.node(path, rev)?),
            found => Ok(found?),
        }
    }

    /// [`Ctx::find`] of `parent/name` through the connection's directories.
    fn find_below(
        &self,
        dirs: &RefCell<Dirs>,
        rev: Revnum,
        parent: &str,
        name: &str,
    ) -> svelto_repos::Result<Option<svelto_repos::Node>> {
        let known = dirs.borrow().get(rev, parent);
        let dir = match known {
            Some(d) => d,
            None => {
                // Down from the deepest directory kept above it (a file in a sibling
                // directory was asked for just before, most often), keeping each directory
                // on the way; from the root when none is kept.
                let above = dirs.borrow().above(rev, parent);
                let (mut at, mut dir) = match above {
                    Some((len, d)) => (len, d),
                    None => match self.svc.node("", rev)? {
                        Some(root) => (0, root),
                        None => return Ok(None),
                    },
                };
                while at < parent.len() {
                    let from = if at == 0 { 0 } else { at + 1 };
                    let end = parent[from..].find('/').map_or(parent.len(), |i| from + i);
                    match self.svc.child(&dir, &parent[from..end])? {
                        Some(d) if d.kind() == NodeKind::Dir => {
                            dirs.borrow_mut().put(rev, &parent[..end], d.clone());
                            dir = d;
                        }
                        _ => return Ok(None),
                    }
                    at = end;
                }
                dir
            }
        };
        self.svc.child(&dir, name)
    }

    /// The node at `path` in `rev`, or a 404 in mod_dav_svn's words.
    pub fn node(&self, rev: Revnum, path: &str) -> Result<Node, HttpError> {
        let rev = self.check_rev(rev)?;
        match self.find(rev, path)? {
            Some(node) => Ok(Node {
                rev,
                path: path.to_string(),
                node,
            }),
            None => Err(HttpError::not_found(format!(
                "'/{path}' path not found in revision {rev}"
            ))),
        }
    }

    /// The node the request's URL names; a missing one is a 404 naming the URL, in
    /// mod_dav_svn's words.
    pub fn target_node(&self) -> Result<Node, HttpError> {
        let rev = self.target.rev().unwrap_or(self.youngest);
        self.node(rev, &self.target.path).map_err(|e| {
            if e.code == crate::error::FS_NOT_FOUND {
                let uri = percent_encoding::percent_decode_str(self.uri).decode_utf8_lossy();
                HttpError::not_found(format!("'{uri}' path not found"))
            } else {
                e
            }
        })
    }

    /// svn:date and svn:author of a revision.
    pub fn date_author(&self, rev: Revnum) -> Result<(Option<String>, Option<String>), HttpError> {
        let (date, author) = self.svc.rev_info(rev)?;
        let text = |v: Option<Vec<u8>>| v.map(|v| String::from_utf8_lossy(&v).into_owned());
        Ok((text(date), text(author)))
    }

    /// The entries of a directory the user may read, in order.
    pub fn entries(&self, dir: &Node) -> Result<Vec<(String, svelto_repos::Node)>, HttpError> {
        let mut entries = Vec::new();
        self.svc.dir_entries(&dir.node, &mut |name, node| {
            entries.push((name.to_string(), node.clone()));
            Ok(())
        })?;
        Ok(entries)
    }
}

/// The svndiff version a request's `Accept-Encoding` accepts best, if any.
pub(crate) fn svndiff_version(accept: Option<&str>) -> Option<u8> {
    let a = accept?;
    let has = |name: &str| {
        a.split(',')
            .any(|p| p.split(';').next().is_some_and(|n| n.trim() == name))
    };
    if has("svndiff2") {
        Some(2)
    } else if has("svndiff1") {
        Some(1)
    } else if has("svndiff") {
        Some(0)
    } else {
        None
    }
}

/// The request body as XML, refusing an empty one.
pub(crate) fn body_xml(req: &Req) -> Result<Elem, HttpError> {
    Ok(xml::parse(&req.body)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_encoding() {
        assert_eq!(
            svndiff_version(Some("svndiff1;q=0.9,svndiff;q=0.8")),
            Some(1)
        );
        assert_eq!(svndiff_version(Some("gzip,svndiff")), Some(0));
        assert_eq!(svndiff_version(Some("gzip")), None);
    }
}
