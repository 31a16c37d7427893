//! The editor that writes a server drive to the wire (protocol doc 5.4–5.6): `d<n>` and
//! `c<n>` tokens from one counter per drive, pipelined without waiting for replies.

use crate::conn::Conn;
use std::io::{Read, Write};
use std::ops::Range;
use std::sync::Arc;
use svelto_core::{Md5, Revnum};
use svelto_repos::{Editor, ReposError, Result, Token};
use svelto_wire::ItemWriter;

pub struct WireEditor<'c, R: Read, W: Write> {
    conn: &'c mut Conn<R, W>,
    next: Token,
    /// Set when writing to the connection failed: the drive cannot be aborted cleanly.
    pub broken: bool,
    /// Whether the client announced `absent-entries`.
    absent_entries: bool,
    /// Replay drives end with `finish-replay` instead of `close-edit`, unanswered.
    replay: bool,
    /// Where each command is written before it goes to the connection: an export sends
    /// several per file, written in place without an `Item` tree or a formatted token.
    buf: Vec<u8>,
}

/// The token string `d<n>` (a directory) or `c<n>` (a file).
fn token(w: &mut ItemWriter<'_>, kind: u8, t: Token) {
    let mut bytes = [0u8; 11];
    let mut i = bytes.len();
    let mut n = t;
    loop {
        i -= 1;
        bytes[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    i -= 1;
    bytes[i] = kind;
    w.string(&bytes[i..]);
}

fn dir(w: &mut ItemWriter<'_>, t: Token) {
    token(w, b'd', t);
}

fn file(w: &mut ItemWriter<'_>, t: Token) {
    token(w, b'c', t);
}

/// `( rev )` or `( )`.
fn opt_rev(w: &mut ItemWriter<'_>, rev: Option<Revnum>) {
    w.open();
    if let Some(rev) = rev {
        w.number(rev);
    }
    w.close();
}

/// `( path rev )` or `( )`.
fn copy_args(w: &mut ItemWriter<'_>, copyfrom: Option<(&str, Revnum)>) {
    w.open();
    if let Some((p, r)) = copyfrom {
        w.string(p.as_bytes()).number(r);
    }
    w.close();
}

fn opt_md5(w: &mut ItemWriter<'_>, md5: Option<&Md5>) {
    let hex = md5.map(Md5::to_hex);
    w.opt_string(hex.as_deref().map(str::as_bytes));
}

impl<'c, R: Read, W: Write> WireEditor<'c, R, W> {
    pub fn new(conn: &'c mut Conn<R, W>, absent_entries: bool, replay: bool) -> Self {
        WireEditor {
            conn,
            next: 0,
            broken: false,
            absent_entries,
            replay,
            buf: Vec::new(),
        }
    }

    fn token(&mut self) -> Token {
        let t = self.next;
        self.next += 1;
        t
    }

    /// Writes the command `( name ( params ) ) `, its parameters written by `params`.
    fn send(&mut self, name: &str, params: impl FnOnce(&mut ItemWriter<'_>)) -> Result<()> {
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        let mut w = ItemWriter(&mut buf);
        w.open().word(name).open();
        params(&mut w);
        w.close().close();
        let r = self.conn.write_raw(&buf);
        self.buf = buf;
        r.map_err(|e| self.failed("writing an editor command to the client", e))
    }

    /// A write to the client failed: nothing more is sent (the connection is broken).
    fn failed(&mut self, context: &str, err: std::io::Error) -> ReposError {
        self.broken = true;
        ReposError::Io {
            context: context.into(),
            err,
        }
    }

    /// Writes `( textdelta-chunk ( file-token string ) ) `, the string's length and bytes
    /// written by `body` (without building an Item around a possibly large chunk).
    fn send_chunk(
        &mut self,
        f: Token,
        body: impl FnOnce(&mut Conn<R, W>) -> std::io::Result<()>,
    ) -> Result<()> {
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        let mut w = ItemWriter(&mut buf);
        w.open().word("textdelta-chunk").open();
        file(&mut w, f);
        let res = self
            .conn
            .write_raw(&buf)
            .and_then(|()| body(self.conn))
            .and_then(|()| self.conn.write_raw(b") ) "));
        self.buf = buf;
        res.map_err(|e| self.failed("writing a text delta to the client", e))
    }
}

impl<R: Read, W: Write> Editor for WireEditor<'_, R, W> {
    fn target_rev(&mut self, rev: Revnum) -> Result<()> {
        self.send("target-rev", |w| {
            w.number(rev);
        })
    }

    fn open_root(&mut self, base_rev: Option<Revnum>) -> Result<Token> {
        let t = self.token();
        self.send("open-root", |w| {
            opt_rev(w, base_rev);
            dir(w, t);
        })?;
        Ok(t)
    }

    fn delete_entry(&mut self, path: &str, rev: Option<Revnum>, parent: Token) -> Result<()> {
        self.send("delete-entry", |w| {
            w.string(path.as_bytes());
            opt_rev(w, rev);
            dir(w, parent);
        })
    }

    fn add_dir(
        &mut self,
        path: &str,
        parent: Token,
        copyfrom: Option<(&str, Revnum)>,
    ) -> Result<Token> {
        let t = self.token();
        self.send("add-dir", |w| {
            w.string(path.as_bytes());
            dir(w, parent);
            dir(w, t);
            copy_args(w, copyfrom);
        })?;
        Ok(t)
    }

    fn open_dir(&mut self, path: &str, parent: Token, base_rev: Option<Revnum>) -> Result<Token> {
        let t = self.token();
        self.send("open-dir", |w| {
            w.string(path.as_bytes());
            dir(w, parent);
            dir(w, t);
            opt_rev(w, base_rev);
        })?;
        Ok(t)
    }

    fn change_dir_prop(&mut self, d: Token, name: &[u8], value: Option<&[u8]>) -> Result<()> {
        self.send("change-dir-prop", |w| {
            dir(w, d);
            w.string(name).opt_string(value);
        })
    }

    fn close_dir(&mut self, d: Token) -> Result<()> {
        self.send("close-dir", |w| dir(w, d))
    }

    fn absent_dir(&mut self, path: &str, parent: Token) -> Result<()> {
        if !self.absent_entries {
            return Ok(());
        }
        self.send("absent-dir", |w| {
            w.string(path.as_bytes());
            dir(w, parent);
        })
    }

    fn add_file(
        &mut self,
        path: &str,
        parent: Token,
        copyfrom: Option<(&str, Revnum)>,
    ) -> Result<Token> {
        let t = self.token();
        self.send("add-file", |w| {
            w.string(path.as_bytes());
            dir(w, parent);
            file(w, t);
            copy_args(w, copyfrom);
        })?;
        Ok(t)
    }

    fn open_file(&mut self, path: &str, parent: Token, base_rev: Option<Revnum>) -> Result<Token> {
        let t = self.token();
        self.send("open-file", |w| {
            w.string(path.as_bytes());
            dir(w, parent);
            file(w, t);
            opt_rev(w, base_rev);
        })?;
        Ok(t)
    }

    fn apply_textdelta(&mut self, f: Token, base_md5: Option<&Md5>) -> Result<()> {
        self.send("apply-textdelta", |w| {
            file(w, f);
            opt_md5(w, base_md5);
        })
    }

    fn textdelta_chunk(&mut self, f: Token, chunk: &[u8]) -> Result<()> {
        self.send_chunk(f, |conn| conn.write_string(chunk))
    }

    fn textdelta_shared(
        &mut self,
        f: Token,
        text: &Arc<Vec<u8>>,
        range: Range<usize>,
    ) -> Result<()> {
        self.send_chunk(f, |conn| conn.write_string_shared(text, range))
    }

    fn textdelta_end(&mut self, f: Token) -> Result<()> {
        self.send("textdelta-end", |w| file(w, f))
    }

    fn change_file_prop(&mut self, f: Token, name: &[u8], value: Option<&[u8]>) -> Result<()> {
        self.send("change-file-prop", |w| {
            file(w, f);
            w.string(name).opt_string(value);
        })
    }

    fn close_file(&mut self, f: Token, text_md5: Option<&Md5>) -> Result<()> {
        self.send("close-file", |w| {
            file(w, f);
            opt_md5(w, text_md5);
        })
    }

    fn absent_file(&mut self, path: &str, parent: Token) -> Result<()> {
        if !self.absent_entries {
            return Ok(());
        }
        self.send("absent-file", |w| {
            w.string(path.as_bytes());
            dir(w, parent);
        })
    }

    fn close_edit(&mut self) -> Result<()> {
        if self.replay {
            // Replay drives end with `finish-replay`, which the command sends.
            return Ok(());
        }
        self.send("close-edit", |_| {})
    }

    fn abort_edit(&mut self) -> Result<()> {
        self.send("abort-edit", |_| {})
    }
}
