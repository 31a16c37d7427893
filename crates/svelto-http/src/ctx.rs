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
use svelto_core::Revnum;

/// The first line of every XML answer.
pub(crate) const XML_HEADER: &str = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n";

/// One request's view of its repository.
pub(crate) struct Ctx<'a> {
    pub state: &'a State,
    /// The repository as the service layer offers it to this request's user: the handle,
    /// the writer, the user (`svc.user`: the authenticated name, None for an anonymous
    /// request; the commit author and the authz user) and the authz rules.
    pub svc: svelto_repos::service::Ctx,
    /// What the configuration lets the user do beyond the rules, and the realm.
    pub gate: crate::access::Gate,
    pub youngest: Revnum,
    pub target: Target,
    /// The request's path, as sent (what mod_dav_svn's 404 messages name).
    pub uri: String,
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

    /// The node at `path` in `rev`, or a 404 in mod_dav_svn's words.
    pub fn node(&self, rev: Revnum, path: &str) -> Result<Node, HttpError> {
        let rev = self.check_rev(rev)?;
        match self.svc.node(path, rev)? {
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
                let uri = percent_encoding::percent_decode_str(&self.uri).decode_utf8_lossy();
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
        self.svc
            .dir_entries(&dir.path, &dir.node, &mut |name, node| {
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
