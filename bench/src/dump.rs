//! Writes dumpfile format 2 byte for byte as `svnadmin dump` (1.14) writes it.
//!
//! The byte format is in Subversion's `notes/dump-load-format.txt`. Beyond that note,
//! this follows what `svnadmin dump` does, so that a generated dump loaded with
//! `svnadmin load` dumps back to the same bytes:
//! - node records of a revision come in the order of a depth-first walk over the
//!   changed paths sorted as paths (`/` sorts before every other byte), except that
//!   deletes are held back until the walk leaves their parent directory;
//! - header order: path, kind, action, copyfrom rev and path, text-copy-source
//!   checksums, text-content checksums, then the three lengths;
//! - adds and replaces without history carry full properties (and text); copies carry
//!   properties only when they differ from the source's and text only when it differs;
//!   changes carry whichever of the two differs from the previous version;
//! - a replace with history is written as a delete record (ended by a single blank
//!   line) followed by an add record.

use std::io::{self, Write};

use crate::model::{Action, Change, Checksums, Node, Props};

/// Serialises a property block ("K n\nkey\nV n\nvalue\n"... "PROPS-END\n").
pub fn props_block(out: &mut Vec<u8>, props: &Props) {
    for (k, v) in props {
        out.extend_from_slice(format!("K {}\n", k.len()).as_bytes());
        out.extend_from_slice(k.as_bytes());
        out.extend_from_slice(format!("\nV {}\n", v.len()).as_bytes());
        out.extend_from_slice(v.as_bytes());
        out.push(b'\n');
    }
    out.extend_from_slice(b"PROPS-END\n");
}

/// Orders two paths as `svn_path_compare_paths` does.
pub fn compare_paths(a: &str, b: &str) -> std::cmp::Ordering {
    let key = |c: u8| if c == b'/' { 0 } else { c };
    a.bytes().map(key).cmp(b.bytes().map(key))
}

fn parent_of(path: &str) -> &str {
    path.rfind('/').map_or("", |i| &path[..i])
}

fn is_ancestor_or_self(dir: &str, path: &str) -> bool {
    dir.is_empty()
        || path == dir
        || (path.len() > dir.len() && path.starts_with(dir) && path.as_bytes()[dir.len()] == b'/')
}

/// A dumpfile being written. Counts the bytes it writes.
pub struct DumpWriter<W: Write> {
    out: W,
    bytes: u64,
    head: Vec<u8>,
    body: Vec<u8>,
}

impl<W: Write> DumpWriter<W> {
    pub fn new(out: W) -> DumpWriter<W> {
        DumpWriter {
            out,
            bytes: 0,
            head: Vec::with_capacity(1024),
            body: Vec::with_capacity(1 << 20),
        }
    }

    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    pub fn into_inner(self) -> W {
        self.out
    }

    fn put(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.bytes += bytes.len() as u64;
        self.out.write_all(bytes)
    }

    /// The version stamp and UUID records.
    pub fn start(&mut self, uuid: &str) -> io::Result<()> {
        self.put(format!("SVN-fs-dump-format-version: 2\n\nUUID: {uuid}\n\n").as_bytes())
    }

    /// A revision record with its revision properties.
    pub fn revision(&mut self, rev: u32, revprops: &Props) -> io::Result<()> {
        let mut props = Vec::new();
        props_block(&mut props, revprops);
        let head = format!(
            "Revision-number: {rev}\nProp-content-length: {n}\nContent-length: {n}\n\n",
            n = props.len()
        );
        self.put(head.as_bytes())?;
        props.push(b'\n');
        self.put(&props)
    }

    /// All node records of one revision, in `svnadmin dump`'s order.
    pub fn nodes(&mut self, changes: &mut [Change]) -> io::Result<()> {
        changes.sort_by(|a, b| compare_paths(&a.path, &b.path));
        // Open directories of the walk, each with the deletes held back for it.
        let mut stack: Vec<(String, Vec<usize>)> = vec![(String::new(), Vec::new())];
        for i in 0..changes.len() {
            let parent = parent_of(&changes[i].path).to_owned();
            while let Some((dir, _)) = stack.last() {
                if is_ancestor_or_self(dir, &parent) {
                    break;
                }
                if let Some((_, deletes)) = stack.pop() {
                    for d in deletes {
                        self.node(&changes[d])?;
                    }
                }
            }
            let top = stack.last().map(|(d, _)| d.clone()).unwrap_or_default();
            if top != parent {
                // Open the directories between the top of the stack and the parent.
                let rest = if top.is_empty() {
                    parent.as_str()
                } else {
                    &parent[top.len() + 1..]
                };
                let mut dir = top;
                for comp in rest.split('/') {
                    if !dir.is_empty() {
                        dir.push('/');
                    }
                    dir.push_str(comp);
                    stack.push((dir.clone(), Vec::new()));
                }
            }
            if changes[i].action == Action::Delete {
                if let Some((_, deletes)) = stack.last_mut() {
                    deletes.push(i);
                }
            } else {
                self.node(&changes[i])?;
            }
        }
        while let Some((_, deletes)) = stack.pop() {
            for d in deletes {
                self.node(&changes[d])?;
            }
        }
        Ok(())
    }

    fn node(&mut self, ch: &Change) -> io::Result<()> {
        self.head.clear();
        self.body.clear();
        let path = &ch.path;
        if ch.action == Action::Delete {
            self.head.extend_from_slice(
                format!("Node-path: {path}\nNode-action: delete\n\n\n").as_bytes(),
            );
            let head = std::mem::take(&mut self.head);
            let r = self.put(&head);
            self.head = head;
            return r;
        }
        let Some(node) = &ch.node else {
            return Err(io::Error::other(format!("change of {path} without a node")));
        };
        let kind = if node.is_dir() { "dir" } else { "file" };
        let mut action = match ch.action {
            Action::Add => "add",
            Action::Change => "change",
            Action::Replace => "replace",
            Action::Delete => "delete",
        };
        if ch.action == Action::Replace && ch.copyfrom.is_some() {
            let delete = format!("Node-path: {path}\nNode-action: delete\n\n");
            self.put(delete.as_bytes())?;
            action = "add";
        }
        self.head.extend_from_slice(
            format!("Node-path: {path}\nNode-kind: {kind}\nNode-action: {action}\n").as_bytes(),
        );
        // Decide what the record carries.
        let fresh = ch.copyfrom.is_none() && ch.action != Action::Change;
        let (with_props, with_text) = match &ch.base {
            Some(base) if !fresh => {
                let text = match (node, base) {
                    (Node::File(a), Node::File(b)) => a.sums != b.sums,
                    _ => false,
                };
                (node.props() != base.props(), text)
            }
            _ => (true, !node.is_dir()),
        };
        if let Some((rev, from)) = &ch.copyfrom {
            self.head.extend_from_slice(
                format!("Node-copyfrom-rev: {rev}\nNode-copyfrom-path: {from}\n").as_bytes(),
            );
            if let Some(Node::File(src)) = &ch.base {
                let s: &Checksums = &src.sums;
                self.head.extend_from_slice(
                    format!(
                        "Text-copy-source-md5: {}\nText-copy-source-sha1: {}\n",
                        hex::encode(s.md5),
                        hex::encode(s.sha1)
                    )
                    .as_bytes(),
                );
            }
        }
        let mut prop_len = 0;
        if with_props {
            props_block(&mut self.body, node.props());
            prop_len = self.body.len();
        }
        let mut text_len = None;
        if with_text {
            if let Node::File(f) = node {
                let start = self.body.len();
                f.body.render(&mut self.body);
                text_len = Some(self.body.len() - start);
                debug_assert_eq!(Checksums::of(&self.body[start..]), f.sums);
                self.head.extend_from_slice(
                    format!(
                        "Text-content-md5: {}\nText-content-sha1: {}\n",
                        hex::encode(f.sums.md5),
                        hex::encode(f.sums.sha1)
                    )
                    .as_bytes(),
                );
            }
        }
        if with_props {
            self.head
                .extend_from_slice(format!("Prop-content-length: {prop_len}\n").as_bytes());
        }
        if let Some(t) = text_len {
            self.head
                .extend_from_slice(format!("Text-content-length: {t}\n").as_bytes());
        }
        let has_content = with_props || text_len.is_some();
        if has_content {
            self.head
                .extend_from_slice(format!("Content-length: {}\n", self.body.len()).as_bytes());
        }
        self.head.push(b'\n');
        let head = std::mem::take(&mut self.head);
        let body = std::mem::take(&mut self.body);
        let result = (|| {
            self.put(&head)?;
            if has_content {
                self.put(&body)?;
                self.put(b"\n\n")
            } else {
                self.put(b"\n")
            }
        })();
        self.head = head;
        self.body = body;
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Ordering;

    #[test]
    fn paths_sort_with_slash_first() {
        assert_eq!(compare_paths("a/b", "a-c"), Ordering::Less);
        assert_eq!(compare_paths("a", "a/b"), Ordering::Less);
        assert_eq!(compare_paths("a b", "a/x"), Ordering::Greater);
    }

    #[test]
    fn ancestry() {
        assert!(is_ancestor_or_self("", "trunk"));
        assert!(is_ancestor_or_self("trunk", "trunk/a"));
        assert!(is_ancestor_or_self("trunk", "trunk"));
        assert!(!is_ancestor_or_self("trunk", "trunk2/a"));
    }
}
