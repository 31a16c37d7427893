//! The delta editor a repository drive talks to (Subversion's `svn_delta_editor_t`, in the
//! shape of the svn:// editor commands, `docs/formats/svn-protocol.md` §5.4).
//!
//! Update, switch, status, diff and replay drive an [`Editor`]; the server's implementation
//! writes each call to the wire, tests use a recording one. Tokens are chosen by the
//! editor: `open_root`, `add_dir`, `open_dir`, `add_file` and `open_file` return the token
//! the later calls name.

use crate::Result;
use std::ops::Range;
use std::sync::Arc;
use svelto_core::{Md5, Revnum};
use svelto_delta::{delta_windows, fulltext_v0_header, stream_header, Window, WINDOW_SIZE};

/// An open directory or file, as the editor named it.
pub type Token = u32;

pub trait Editor {
    fn target_rev(&mut self, rev: Revnum) -> Result<()>;
    fn open_root(&mut self, base_rev: Option<Revnum>) -> Result<Token>;
    /// `path` is relative to the drive's anchor, like every path below.
    fn delete_entry(&mut self, path: &str, rev: Option<Revnum>, parent: Token) -> Result<()>;
    /// `copyfrom` is (fspath or URL, revision) when the add keeps history.
    fn add_dir(
        &mut self,
        path: &str,
        parent: Token,
        copyfrom: Option<(&str, Revnum)>,
    ) -> Result<Token>;
    fn open_dir(&mut self, path: &str, parent: Token, base_rev: Option<Revnum>) -> Result<Token>;
    /// `value` None deletes the property.
    fn change_dir_prop(&mut self, dir: Token, name: &[u8], value: Option<&[u8]>) -> Result<()>;
    fn close_dir(&mut self, dir: Token) -> Result<()>;
    fn absent_dir(&mut self, path: &str, parent: Token) -> Result<()>;
    fn add_file(
        &mut self,
        path: &str,
        parent: Token,
        copyfrom: Option<(&str, Revnum)>,
    ) -> Result<Token>;
    fn open_file(&mut self, path: &str, parent: Token, base_rev: Option<Revnum>) -> Result<Token>;
    /// Starts a text delta against the text whose MD5 is `base_md5` (None for adds).
    fn apply_textdelta(&mut self, file: Token, base_md5: Option<&Md5>) -> Result<()>;
    /// The next bytes of one svndiff stream; boundaries may fall anywhere.
    fn textdelta_chunk(&mut self, file: Token, chunk: &[u8]) -> Result<()>;
    /// `textdelta_chunk` of `text[range]`, the text shared: an editor that writes its output
    /// later may hold on to it instead of copying it (the server's wire editor writes it
    /// with the commands around it in one `writev`).
    fn textdelta_shared(
        &mut self,
        file: Token,
        text: &Arc<Vec<u8>>,
        range: Range<usize>,
    ) -> Result<()> {
        self.textdelta_chunk(file, &text[range])
    }
    fn textdelta_end(&mut self, file: Token) -> Result<()>;
    fn change_file_prop(&mut self, file: Token, name: &[u8], value: Option<&[u8]>) -> Result<()>;
    fn close_file(&mut self, file: Token, text_md5: Option<&Md5>) -> Result<()>;
    fn absent_file(&mut self, path: &str, parent: Token) -> Result<()>;
    fn close_edit(&mut self) -> Result<()>;
    fn abort_edit(&mut self) -> Result<()>;
}

/// How text is sent during a drive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextOptions {
    /// svndiff version computed deltas are sent in (0, 1 or 2): what the receiver accepts
    /// best, or 0 where compressing costs more than the bytes it saves (a peer on this
    /// machine).
    pub svndiff_version: u8,
    /// The newest svndiff version the receiver decodes: a text stored self-contained in that
    /// version or an older one is sent as stored ([`send_stream`]), nothing compressed.
    pub accepts: u8,
    /// False for `status` and `diff --summarize`: the stream is the 4-byte header alone.
    pub send_deltas: bool,
}

impl Default for TextOptions {
    fn default() -> Self {
        TextOptions {
            svndiff_version: 0,
            accepts: 0,
            send_deltas: true,
        }
    }
}

/// Sends the text change of an open file: `apply_textdelta`, the svndiff stream turning
/// `base` (empty for adds) into `target`, one chunk per window after the header chunk,
/// and `textdelta_end`. With `send_deltas` false only the header is sent, as svnserve does.
pub fn send_text(
    editor: &mut dyn Editor,
    file: Token,
    base: Option<(&[u8], &Md5)>,
    target: &[u8],
    opts: TextOptions,
) -> Result<()> {
    editor.apply_textdelta(file, base.map(|(_, md5)| md5))?;
    editor.textdelta_chunk(file, &stream_header(opts.svndiff_version))?;
    if opts.send_deltas {
        let source = base.map_or(&[][..], |(b, _)| b);
        if source.is_empty() && opts.svndiff_version == 0 {
            // Uncompressed adds: each window's few header bytes, then the text itself.
            for piece in target.chunks(WINDOW_SIZE) {
                editor.textdelta_chunk(file, &fulltext_v0_header(piece.len() as u64))?;
                editor.textdelta_chunk(file, piece)?;
            }
            return editor.textdelta_end(file);
        }
        // Against nothing, a window is its target as new data (what svnserve sends for
        // adds); searching the target for repeats costs more than it saves here.
        let windows: Vec<Window> = if source.is_empty() {
            target.chunks(WINDOW_SIZE).map(Window::fulltext).collect()
        } else {
            delta_windows(source, target)
        };
        send_window_chunks(editor, file, &windows, opts)?;
    }
    editor.textdelta_end(file)
}

/// [`send_text`] of an added file (no base) whose contents are shared: uncompressed, each
/// window's bytes go to the editor as a slice of `target` it may hold instead of copy.
pub fn send_added_text(
    editor: &mut dyn Editor,
    file: Token,
    target: &Arc<Vec<u8>>,
    opts: TextOptions,
) -> Result<()> {
    if !(opts.send_deltas && opts.svndiff_version == 0) {
        return send_text(editor, file, None, target, opts);
    }
    editor.apply_textdelta(file, None)?;
    editor.textdelta_chunk(file, &stream_header(0))?;
    let mut at = 0;
    while at < target.len() {
        let end = (at + WINDOW_SIZE).min(target.len());
        editor.textdelta_chunk(file, &fulltext_v0_header((end - at) as u64))?;
        editor.textdelta_shared(file, target, at..end)?;
        at = end;
    }
    editor.textdelta_end(file)
}

/// Sends a text change as `stream[from..]`, a whole svndiff stream as the repository stores
/// it (header included), against the base whose MD5 `base_md5` names: a delta stored against
/// that base, or a self-contained text (its windows copy nothing from a source, so it applies
/// over any base, or none). In pieces of at most a window's size handed to the editor shared:
/// nothing decoded, encoded or copied. A piece may end inside a window; receivers parse the
/// stream across the chunks.
pub fn send_stream(
    editor: &mut dyn Editor,
    file: Token,
    base_md5: Option<&Md5>,
    stream: &Arc<Vec<u8>>,
    from: usize,
) -> Result<()> {
    editor.apply_textdelta(file, base_md5)?;
    let header = (from + 4).min(stream.len());
    editor.textdelta_chunk(file, &stream[from..header])?;
    let mut at = header;
    while at < stream.len() {
        let end = (at + WINDOW_SIZE).min(stream.len());
        editor.textdelta_shared(file, stream, at..end)?;
        at = end;
    }
    editor.textdelta_end(file)
}

/// Sends the text change of an open file as `windows`, a delta already made against the
/// text whose MD5 is `base_md5` (a version stored as a delta against the one the receiver
/// has): the same calls as [`send_text`], nothing computed.
pub fn send_windows(
    editor: &mut dyn Editor,
    file: Token,
    base_md5: &Md5,
    windows: &[Window],
    opts: TextOptions,
) -> Result<()> {
    editor.apply_textdelta(file, Some(base_md5))?;
    editor.textdelta_chunk(file, &stream_header(opts.svndiff_version))?;
    if opts.send_deltas {
        send_window_chunks(editor, file, windows, opts)?;
    }
    editor.textdelta_end(file)
}

/// Sends the text change of an open file as the contents read from `text`, each window its
/// bytes as new data (applying to any base, here the text whose MD5 is `base_md5`), read as a
/// stream so memory stays at one window whatever the size: what an add sends, and a change
/// whose delta would find nothing to copy.
pub fn send_new_text(
    editor: &mut dyn Editor,
    file: Token,
    base_md5: Option<&Md5>,
    text: &mut dyn std::io::Read,
    opts: TextOptions,
) -> Result<()> {
    editor.apply_textdelta(file, base_md5)?;
    editor.textdelta_chunk(file, &stream_header(opts.svndiff_version))?;
    let mut buf = vec![0u8; WINDOW_SIZE];
    let mut chunk = Vec::new();
    loop {
        let n = crate::stream::read_full(text, &mut buf)?;
        if n == 0 {
            break;
        }
        if opts.svndiff_version == 0 {
            editor.textdelta_chunk(file, &fulltext_v0_header(n as u64))?;
            editor.textdelta_chunk(file, &buf[..n])?;
        } else {
            chunk.clear();
            Window::fulltext(&buf[..n])
                .encode(opts.svndiff_version, 1, &mut chunk)
                .map_err(|e| crate::ReposError::Internal(format!("encoding a text delta: {e}")))?;
            editor.textdelta_chunk(file, &chunk)?;
        }
    }
    editor.textdelta_end(file)
}

fn send_window_chunks(
    editor: &mut dyn Editor,
    file: Token,
    windows: &[Window],
    opts: TextOptions,
) -> Result<()> {
    let mut chunk = Vec::new();
    for window in windows {
        chunk.clear();
        window
            .encode(opts.svndiff_version, 1, &mut chunk)
            .map_err(|e| crate::ReposError::Internal(format!("encoding a text delta: {e}")))?;
        editor.textdelta_chunk(file, &chunk)?;
    }
    Ok(())
}

/// One editor call, as [`Recorder`] keeps it. Tokens are the recorder's own counter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Call {
    TargetRev(Revnum),
    OpenRoot(Option<Revnum>, Token),
    DeleteEntry(String, Option<Revnum>, Token),
    AddDir(String, Token, Token, Option<(String, Revnum)>),
    OpenDir(String, Token, Token, Option<Revnum>),
    ChangeDirProp(Token, Vec<u8>, Option<Vec<u8>>),
    CloseDir(Token),
    AbsentDir(String, Token),
    AddFile(String, Token, Token, Option<(String, Revnum)>),
    OpenFile(String, Token, Token, Option<Revnum>),
    ApplyTextdelta(Token, Option<Md5>),
    TextdeltaChunk(Token, Vec<u8>),
    TextdeltaEnd(Token),
    ChangeFileProp(Token, Vec<u8>, Option<Vec<u8>>),
    CloseFile(Token, Option<Md5>),
    AbsentFile(String, Token),
    CloseEdit,
    AbortEdit,
}

/// An editor that records every call; for tests and for inspecting a drive.
#[derive(Debug, Default)]
pub struct Recorder {
    pub calls: Vec<Call>,
    next: Token,
}

impl Recorder {
    fn token(&mut self) -> Token {
        let t = self.next;
        self.next += 1;
        t
    }
}

fn owned(copyfrom: Option<(&str, Revnum)>) -> Option<(String, Revnum)> {
    copyfrom.map(|(p, r)| (p.to_string(), r))
}

impl Editor for Recorder {
    fn target_rev(&mut self, rev: Revnum) -> Result<()> {
        self.calls.push(Call::TargetRev(rev));
        Ok(())
    }
    fn open_root(&mut self, base_rev: Option<Revnum>) -> Result<Token> {
        let t = self.token();
        self.calls.push(Call::OpenRoot(base_rev, t));
        Ok(t)
    }
    fn delete_entry(&mut self, path: &str, rev: Option<Revnum>, parent: Token) -> Result<()> {
        self.calls
            .push(Call::DeleteEntry(path.to_string(), rev, parent));
        Ok(())
    }
    fn add_dir(
        &mut self,
        path: &str,
        parent: Token,
        copyfrom: Option<(&str, Revnum)>,
    ) -> Result<Token> {
        let t = self.token();
        self.calls
            .push(Call::AddDir(path.to_string(), parent, t, owned(copyfrom)));
        Ok(t)
    }
    fn open_dir(&mut self, path: &str, parent: Token, base_rev: Option<Revnum>) -> Result<Token> {
        let t = self.token();
        self.calls
            .push(Call::OpenDir(path.to_string(), parent, t, base_rev));
        Ok(t)
    }
    fn change_dir_prop(&mut self, dir: Token, name: &[u8], value: Option<&[u8]>) -> Result<()> {
        self.calls.push(Call::ChangeDirProp(
            dir,
            name.to_vec(),
            value.map(<[u8]>::to_vec),
        ));
        Ok(())
    }
    fn close_dir(&mut self, dir: Token) -> Result<()> {
        self.calls.push(Call::CloseDir(dir));
        Ok(())
    }
    fn absent_dir(&mut self, path: &str, parent: Token) -> Result<()> {
        self.calls.push(Call::AbsentDir(path.to_string(), parent));
        Ok(())
    }
    fn add_file(
        &mut self,
        path: &str,
        parent: Token,
        copyfrom: Option<(&str, Revnum)>,
    ) -> Result<Token> {
        let t = self.token();
        self.calls
            .push(Call::AddFile(path.to_string(), parent, t, owned(copyfrom)));
        Ok(t)
    }
    fn open_file(&mut self, path: &str, parent: Token, base_rev: Option<Revnum>) -> Result<Token> {
        let t = self.token();
        self.calls
            .push(Call::OpenFile(path.to_string(), parent, t, base_rev));
        Ok(t)
    }
    fn apply_textdelta(&mut self, file: Token, base_md5: Option<&Md5>) -> Result<()> {
        self.calls
            .push(Call::ApplyTextdelta(file, base_md5.copied()));
        Ok(())
    }
    fn textdelta_chunk(&mut self, file: Token, chunk: &[u8]) -> Result<()> {
        self.calls.push(Call::TextdeltaChunk(file, chunk.to_vec()));
        Ok(())
    }
    fn textdelta_end(&mut self, file: Token) -> Result<()> {
        self.calls.push(Call::TextdeltaEnd(file));
        Ok(())
    }
    fn change_file_prop(&mut self, file: Token, name: &[u8], value: Option<&[u8]>) -> Result<()> {
        self.calls.push(Call::ChangeFileProp(
            file,
            name.to_vec(),
            value.map(<[u8]>::to_vec),
        ));
        Ok(())
    }
    fn close_file(&mut self, file: Token, text_md5: Option<&Md5>) -> Result<()> {
        self.calls.push(Call::CloseFile(file, text_md5.copied()));
        Ok(())
    }
    fn absent_file(&mut self, path: &str, parent: Token) -> Result<()> {
        self.calls.push(Call::AbsentFile(path.to_string(), parent));
        Ok(())
    }
    fn close_edit(&mut self) -> Result<()> {
        self.calls.push(Call::CloseEdit);
        Ok(())
    }
    fn abort_edit(&mut self) -> Result<()> {
        self.calls.push(Call::AbortEdit);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use svelto_delta::{apply_windows, decode_stream, Limits};

    fn stream_of(calls: &[Call]) -> Vec<u8> {
        calls
            .iter()
            .filter_map(|c| match c {
                Call::TextdeltaChunk(_, b) => Some(b.clone()),
                _ => None,
            })
            .flatten()
            .collect()
    }

    #[test]
    fn send_text_streams_a_delta_the_receiver_can_apply() {
        let base = b"line\n".repeat(50_000);
        let mut target = base.clone();
        target.extend_from_slice(b"one more\n");
        let md5 = Md5([7; 16]);
        for version in 0..=2 {
            let mut rec = Recorder::default();
            let opts = TextOptions {
                svndiff_version: version,
                accepts: version,
                send_deltas: true,
            };
            send_text(&mut rec, 3, Some((&base, &md5)), &target, opts).expect("send");
            assert_eq!(rec.calls[0], Call::ApplyTextdelta(3, Some(md5)));
            assert_eq!(rec.calls.last(), Some(&Call::TextdeltaEnd(3)));
            let stream = stream_of(&rec.calls);
            assert_eq!(&stream[..4], &[b'S', b'V', b'N', version]);
            let windows = decode_stream(&stream, &Limits::default()).expect("decode");
            assert!(windows.len() > 1, "a 250 KB text needs several windows");
            assert_eq!(apply_windows(&windows, &base).expect("apply"), target);
        }
    }

    #[test]
    fn without_deltas_only_the_header_is_sent() {
        let mut rec = Recorder::default();
        let opts = TextOptions {
            svndiff_version: 1,
            accepts: 1,
            send_deltas: false,
        };
        send_text(&mut rec, 1, None, b"contents", opts).expect("send");
        assert_eq!(
            rec.calls,
            vec![
                Call::ApplyTextdelta(1, None),
                Call::TextdeltaChunk(1, b"SVN\x01".to_vec()),
                Call::TextdeltaEnd(1),
            ]
        );
    }
}
