//! The editor that writes a server drive to the wire (protocol doc 5.4–5.6): `d<n>` and
//! `c<n>` tokens from one counter per drive, pipelined without waiting for replies.

use crate::conn::Conn;
use std::io::{Read, Write};
use svelto_core::{Md5, Revnum};
use svelto_repos::{Editor, ReposError, Result, Token};
use svelto_wire::Item;

pub struct WireEditor<'c, R: Read, W: Write> {
    conn: &'c mut Conn<R, W>,
    next: Token,
    /// Set when writing to the connection failed: the drive cannot be aborted cleanly.
    pub broken: bool,
    /// Whether the client announced `absent-entries`.
    absent_entries: bool,
    /// Replay drives end with `finish-replay` instead of `close-edit`, unanswered.
    replay: bool,
}

fn dir(t: Token) -> Item {
    Item::string(format!("d{t}"))
}

fn file(t: Token) -> Item {
    Item::string(format!("c{t}"))
}

fn opt_rev(rev: Option<Revnum>) -> Item {
    Item::opt(rev.map(Item::Number))
}

fn copy_args(copyfrom: Option<(&str, Revnum)>) -> Item {
    match copyfrom {
        Some((p, r)) => Item::list(vec![Item::string(p), Item::Number(r)]),
        None => Item::empty_list(),
    }
}

fn opt_value(value: Option<&[u8]>) -> Item {
    Item::opt(value.map(Item::string))
}

impl<'c, R: Read, W: Write> WireEditor<'c, R, W> {
    pub fn new(conn: &'c mut Conn<R, W>, absent_entries: bool, replay: bool) -> Self {
        WireEditor {
            conn,
            next: 0,
            broken: false,
            absent_entries,
            replay,
        }
    }

    fn token(&mut self) -> Token {
        let t = self.next;
        self.next += 1;
        t
    }

    fn send(&mut self, name: &str, params: Vec<Item>) -> Result<()> {
        let item = svelto_wire::command(name, params);
        self.conn.write_item(&item).map_err(|e| {
            self.broken = true;
            ReposError::Io {
                context: "writing an editor command to the client".into(),
                err: e,
            }
        })
    }
}

impl<R: Read, W: Write> Editor for WireEditor<'_, R, W> {
    fn target_rev(&mut self, rev: Revnum) -> Result<()> {
        self.send("target-rev", vec![Item::Number(rev)])
    }

    fn open_root(&mut self, base_rev: Option<Revnum>) -> Result<Token> {
        let t = self.token();
        self.send("open-root", vec![opt_rev(base_rev), dir(t)])?;
        Ok(t)
    }

    fn delete_entry(&mut self, path: &str, rev: Option<Revnum>, parent: Token) -> Result<()> {
        self.send(
            "delete-entry",
            vec![Item::string(path), opt_rev(rev), dir(parent)],
        )
    }

    fn add_dir(
        &mut self,
        path: &str,
        parent: Token,
        copyfrom: Option<(&str, Revnum)>,
    ) -> Result<Token> {
        let t = self.token();
        self.send(
            "add-dir",
            vec![Item::string(path), dir(parent), dir(t), copy_args(copyfrom)],
        )?;
        Ok(t)
    }

    fn open_dir(&mut self, path: &str, parent: Token, base_rev: Option<Revnum>) -> Result<Token> {
        let t = self.token();
        self.send(
            "open-dir",
            vec![Item::string(path), dir(parent), dir(t), opt_rev(base_rev)],
        )?;
        Ok(t)
    }

    fn change_dir_prop(&mut self, d: Token, name: &[u8], value: Option<&[u8]>) -> Result<()> {
        self.send(
            "change-dir-prop",
            vec![dir(d), Item::string(name), opt_value(value)],
        )
    }

    fn close_dir(&mut self, d: Token) -> Result<()> {
        self.send("close-dir", vec![dir(d)])
    }

    fn absent_dir(&mut self, path: &str, parent: Token) -> Result<()> {
        if !self.absent_entries {
            return Ok(());
        }
        self.send("absent-dir", vec![Item::string(path), dir(parent)])
    }

    fn add_file(
        &mut self,
        path: &str,
        parent: Token,
        copyfrom: Option<(&str, Revnum)>,
    ) -> Result<Token> {
        let t = self.token();
        self.send(
            "add-file",
            vec![
                Item::string(path),
                dir(parent),
                file(t),
                copy_args(copyfrom),
            ],
        )?;
        Ok(t)
    }

    fn open_file(&mut self, path: &str, parent: Token, base_rev: Option<Revnum>) -> Result<Token> {
        let t = self.token();
        self.send(
            "open-file",
            vec![Item::string(path), dir(parent), file(t), opt_rev(base_rev)],
        )?;
        Ok(t)
    }

    fn apply_textdelta(&mut self, f: Token, base_md5: Option<&Md5>) -> Result<()> {
        self.send(
            "apply-textdelta",
            vec![
                file(f),
                Item::opt(base_md5.map(|m| Item::string(m.to_hex()))),
            ],
        )
    }

    fn textdelta_chunk(&mut self, f: Token, chunk: &[u8]) -> Result<()> {
        // Written without building an Item around the (possibly large) chunk.
        let tok = format!("c{f}");
        let head = format!("( textdelta-chunk ( {}:{tok} ", tok.len());
        let res = self
            .conn
            .write_raw(head.as_bytes())
            .and_then(|()| self.conn.write_string(chunk))
            .and_then(|()| self.conn.write_raw(b") ) "));
        res.map_err(|e| {
            self.broken = true;
            ReposError::Io {
                context: "writing a text delta to the client".into(),
                err: e,
            }
        })
    }

    fn textdelta_end(&mut self, f: Token) -> Result<()> {
        self.send("textdelta-end", vec![file(f)])
    }

    fn change_file_prop(&mut self, f: Token, name: &[u8], value: Option<&[u8]>) -> Result<()> {
        self.send(
            "change-file-prop",
            vec![file(f), Item::string(name), opt_value(value)],
        )
    }

    fn close_file(&mut self, f: Token, text_md5: Option<&Md5>) -> Result<()> {
        self.send(
            "close-file",
            vec![
                file(f),
                Item::opt(text_md5.map(|m| Item::string(m.to_hex()))),
            ],
        )
    }

    fn absent_file(&mut self, path: &str, parent: Token) -> Result<()> {
        if !self.absent_entries {
            return Ok(());
        }
        self.send("absent-file", vec![Item::string(path), dir(parent)])
    }

    fn close_edit(&mut self) -> Result<()> {
        if self.replay {
            // Replay drives end with `finish-replay`, which the command sends.
            return Ok(());
        }
        self.send("close-edit", vec![])
    }

    fn abort_edit(&mut self) -> Result<()> {
        self.send("abort-edit", vec![])
    }
}
