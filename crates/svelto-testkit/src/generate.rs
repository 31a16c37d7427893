//! Dumps generated on the fly, too large to commit (a file of hundreds of
//! megabytes; a history of thousands of revisions), written straight to disk
//! and never held in memory.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use md5::{Digest as _, Md5};
use sha1::Sha1;

/// The UUID of every dump made by [`write_big_file_dump`].
pub const BIG_FILE_UUID: &str = "0b16f11e-5e17-4000-8000-000000000200";

/// Where the large file lives in the generated history.
pub const BIG_FILE_PATH: &str = "big/file.bin";

/// What [`write_big_file_dump`] wrote.
#[derive(Debug, Clone)]
pub struct BigFileDump {
    /// Size of the large file in bytes.
    pub file_size: u64,
    /// Size of the whole dump in bytes.
    pub dump_size: u64,
    /// SHA-1 of the whole dump (hex).
    pub dump_sha1: String,
    /// MD5 and SHA-1 of the large file (hex).
    pub file_md5: String,
    pub file_sha1: String,
}

/// Deterministic, incompressible-looking bytes (xorshift64*), the same for
/// the same seed, produced in chunks.
pub struct NoiseStream {
    state: u64,
}

impl NoiseStream {
    pub fn new(seed: u64) -> NoiseStream {
        NoiseStream {
            state: (seed ^ 0x9e37_79b9_7f4a_7c15) | 1,
        }
    }

    /// Fill `buf` with the next bytes of the stream.
    pub fn fill(&mut self, buf: &mut [u8]) {
        for chunk in buf.chunks_mut(8) {
            self.state ^= self.state >> 12;
            self.state ^= self.state << 25;
            self.state ^= self.state >> 27;
            let word = self.state.wrapping_mul(0x2545_f491_4f6c_dd1d).to_le_bytes();
            chunk.copy_from_slice(&word[..chunk.len()]);
        }
    }

    /// Feed `len` bytes of the stream, in chunks, to `sink`.
    pub fn feed(
        &mut self,
        len: u64,
        mut sink: impl FnMut(&[u8]) -> io::Result<()>,
    ) -> io::Result<()> {
        let mut buf = vec![0u8; 1 << 20];
        let mut left = len;
        while left > 0 {
            let n = left.min(buf.len() as u64) as usize;
            self.fill(&mut buf[..n]);
            sink(&buf[..n])?;
            left -= n as u64;
        }
        Ok(())
    }
}

/// A writer that counts and hashes what passes through it.
struct Hashing<W> {
    inner: W,
    sha1: Sha1,
    len: u64,
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.sha1.update(&buf[..n]);
        self.len += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

fn props(pairs: &[(&str, &str)]) -> String {
    let mut s = String::new();
    for (k, v) in pairs {
        s.push_str(&format!("K {}\n{k}\nV {}\n{v}\n", k.len(), v.len()));
    }
    s.push_str("PROPS-END\n");
    s
}

fn revision_record(rev: u64, pairs: &[(&str, &str)]) -> String {
    let p = props(pairs);
    format!(
        "Revision-number: {rev}\nProp-content-length: {len}\nContent-length: {len}\n\n{p}\n",
        len = p.len()
    )
}

/// Write, to `path`, a format-2 dump exactly as `svnadmin dump` would write
/// it for this history:
///
/// * r1 adds `big/` (with a property), `big/file.bin` (`file_size` bytes of
///   [`NoiseStream`] noise, with `svn:mime-type`) and a small `big/small.txt`;
/// * r2 copies `big/file.bin` to `big/copy.bin` (a copy without changes).
///
/// The content is generated twice (once for its checksums, which come before
/// it in the dump, once to write it), so memory use stays small whatever the
/// size.
pub fn write_big_file_dump(path: &Path, file_size: u64) -> io::Result<BigFileDump> {
    const SEED: u64 = 200;
    let mut md5 = Md5::new();
    let mut sha1 = Sha1::new();
    NoiseStream::new(SEED).feed(file_size, |chunk| {
        md5.update(chunk);
        sha1.update(chunk);
        Ok(())
    })?;
    let file_md5 = hex::encode(md5.finalize());
    let file_sha1 = hex::encode(sha1.finalize());

    let file = File::create(path)?;
    let mut out = Hashing {
        inner: BufWriter::with_capacity(1 << 20, file),
        sha1: Sha1::new(),
        len: 0,
    };
    write!(
        out,
        "SVN-fs-dump-format-version: 2\n\nUUID: {BIG_FILE_UUID}\n\n{}",
        revision_record(0, &[("svn:date", "2016-01-02T03:04:05.060708Z")])
    )?;
    write!(
        out,
        "{}",
        revision_record(
            1,
            &[
                ("svn:author", "big"),
                ("svn:date", "2016-01-02T04:05:06.070809Z"),
                ("svn:log", "A large file"),
            ],
        )
    )?;
    let dir_props = props(&[("purpose", "large file test")]);
    write!(
        out,
        "Node-path: big\nNode-kind: dir\nNode-action: add\nProp-content-length: {len}\nContent-length: {len}\n\n{dir_props}\n\n",
        len = dir_props.len()
    )?;
    let file_props = props(&[("svn:mime-type", "application/octet-stream")]);
    write!(
        out,
        "Node-path: {BIG_FILE_PATH}\nNode-kind: file\nNode-action: add\n\
         Text-content-md5: {file_md5}\nText-content-sha1: {file_sha1}\n\
         Prop-content-length: {plen}\nText-content-length: {file_size}\nContent-length: {total}\n\n{file_props}",
        plen = file_props.len(),
        total = file_props.len() as u64 + file_size,
    )?;
    NoiseStream::new(SEED).feed(file_size, |chunk| out.write_all(chunk))?;
    out.write_all(b"\n\n")?;
    let small = "a small file next to a large one\n";
    let small_md5 = hex::encode(Md5::digest(small.as_bytes()));
    let small_sha1 = hex::encode(Sha1::digest(small.as_bytes()));
    write!(
        out,
        "Node-path: big/small.txt\nNode-kind: file\nNode-action: add\n\
         Text-content-md5: {small_md5}\nText-content-sha1: {small_sha1}\n\
         Prop-content-length: 10\nText-content-length: {slen}\nContent-length: {total}\n\nPROPS-END\n{small}\n\n",
        slen = small.len(),
        total = 10 + small.len(),
    )?;
    write!(
        out,
        "{}",
        revision_record(
            2,
            &[
                ("svn:author", "big"),
                ("svn:date", "2016-01-02T05:06:07.080910Z"),
                ("svn:log", "Copy the large file"),
            ],
        )
    )?;
    write!(
        out,
        "Node-path: big/copy.bin\nNode-kind: file\nNode-action: add\n\
         Node-copyfrom-rev: 1\nNode-copyfrom-path: {BIG_FILE_PATH}\n\
         Text-copy-source-md5: {file_md5}\nText-copy-source-sha1: {file_sha1}\n\n\n"
    )?;
    out.flush()?;
    Ok(BigFileDump {
        file_size,
        dump_size: out.len,
        dump_sha1: hex::encode(out.sha1.finalize()),
        file_md5,
        file_sha1,
    })
}

/// The UUID of every dump made by [`write_long_history_dump`].
pub const LONG_HISTORY_UUID: &str = "0b16f11e-5e17-4000-8000-000000000300";

/// What [`write_long_history_dump`] wrote.
#[derive(Debug, Clone)]
pub struct LongHistoryDump {
    /// The youngest revision: the dump holds `0..=head`.
    pub head: u64,
    /// Size of the whole dump in bytes.
    pub dump_size: u64,
    /// SHA-1 of the whole dump (hex).
    pub dump_sha1: String,
    /// Node records in the dump, and how many of them are copies.
    pub nodes: u64,
    pub copies: u64,
    /// Files under `trunk` in the head revision.
    pub files_at_head: usize,
}

/// Write, to `path`, a format-2 dump of a long and busy history, exactly as
/// `svnadmin dump` would write it (a test in this module checks that against
/// `svnadmin load` and `dump`):
///
/// * r1 makes `branches`, `tags`, `trunk` and `trunk/m0` .. `trunk/m9`;
/// * most revisions add one or two files of 100 bytes to 2 kB of text under
///   `trunk/m*`, or change a few lines of one to three files at once, or
///   change a file's properties, or delete a file (about 1.7 kB of dump a
///   revision);
/// * every 500th revision copies `trunk` to `tags/t<rev>`, the odd multiples
///   of 125 copy a file, revisions `1000k + 300` add a directory with a file
///   in it, and every 173rd revision changes nothing.
///
/// The history is the same for every `head`: a dump made with a smaller
/// `head` is the first part of one made with a larger. The text is written
/// as it is made; only the files of the youngest revision are kept in memory
/// (some megabytes for tens of thousands of revisions).
pub fn write_long_history_dump(path: &Path, head: u64) -> io::Result<LongHistoryDump> {
    let file = File::create(path)?;
    let mut out = Hashing {
        inner: BufWriter::with_capacity(1 << 20, file),
        sha1: Sha1::new(),
        len: 0,
    };
    write!(
        out,
        "SVN-fs-dump-format-version: 2\n\nUUID: {LONG_HISTORY_UUID}\n\n{}",
        revision_record(0, &[("svn:date", &svn_date(0))])
    )?;
    let mut history = LongHistory::new();
    let (mut nodes, mut copies) = (0, 0);
    for rev in 1..=head {
        let (log, mut changes) = history.revision(rev);
        // svnadmin dump replays a revision's changes in path order, compared
        // component by component.
        changes.sort_by(|a, b| a.path.split('/').cmp(b.path.split('/')));
        write!(
            out,
            "{}",
            revision_record(
                rev,
                &[
                    ("svn:author", AUTHORS[(rev % AUTHORS.len() as u64) as usize]),
                    ("svn:date", &svn_date(rev)),
                    ("svn:log", &log),
                ],
            )
        )?;
        for change in &changes {
            change.write(&mut out)?;
            nodes += 1;
            copies += u64::from(change.copyfrom.is_some());
        }
    }
    out.flush()?;
    Ok(LongHistoryDump {
        head,
        dump_size: out.len,
        dump_sha1: hex::encode(out.sha1.finalize()),
        nodes,
        copies,
        files_at_head: history.live.len(),
    })
}

const AUTHORS: &[&str] = &["alice", "bob", "carol", "dave", "erin"];

const WORDS: &[&str] = &[
    "revision",
    "node",
    "delta",
    "trunk",
    "branch",
    "merge",
    "copy",
    "path",
    "property",
    "lock",
    "commit",
    "editor",
    "report",
    "txn",
    "repository",
    "checksum",
    "window",
    "stream",
    "svndiff",
    "mergeinfo",
    "author",
    "log",
    "tree",
    "file",
    "directory",
];

/// Files bigger than this lose lines when they are edited.
const MAX_FILE_BYTES: usize = 3000;

/// `svn:date` of revision `rev`: a minute and a second after the one before,
/// with microseconds that vary.
fn svn_date(rev: u64) -> String {
    let secs = 1_450_000_000 + rev * 61;
    let micros = rev * 7919 % 1_000_000;
    let (y, m, d) = civil_from_days(secs / 86_400);
    let s = secs % 86_400;
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{micros:06}Z",
        s / 3600,
        s / 60 % 60,
        s % 60
    )
}

/// Year, month and day of a day counted from 1970-01-01 (Howard Hinnant's
/// `civil_from_days`, for days after 1970).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + u64::from(m <= 2);
    (y, m, d)
}

/// xorshift64*, for the choices the history makes.
struct Choices(u64);

impl Choices {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        ((self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) % n as u64) as usize
    }

    /// A line of text: `prefix` and some words.
    fn line(&mut self, prefix: &str) -> String {
        let mut line = prefix.to_owned();
        for _ in 0..2 + self.below(8) {
            line.push(' ');
            line.push_str(WORDS[self.below(WORDS.len())]);
        }
        line
    }
}

#[derive(Clone)]
struct FileState {
    lines: Vec<String>,
    props: BTreeMap<String, String>,
}

impl FileState {
    fn text(&self) -> Vec<u8> {
        let mut text = Vec::with_capacity(self.lines.iter().map(|l| l.len() + 1).sum());
        for line in &self.lines {
            text.extend_from_slice(line.as_bytes());
            text.push(b'\n');
        }
        text
    }

    fn props_block(&self) -> String {
        let pairs: Vec<(&str, &str)> = self
            .props
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        props(&pairs)
    }
}

/// One node record, as svnadmin dump writes it in format 2.
struct Change {
    path: String,
    kind: Option<&'static str>,
    action: &'static str,
    copyfrom: Option<(u64, String)>,
    /// MD5 and SHA-1 of a copied file's source text.
    copy_source: Option<(String, String)>,
    props: Option<String>,
    text: Option<Vec<u8>>,
}

impl Change {
    fn new(path: &str, kind: Option<&'static str>, action: &'static str) -> Change {
        Change {
            path: path.to_owned(),
            kind,
            action,
            copyfrom: None,
            copy_source: None,
            props: None,
            text: None,
        }
    }

    fn write(&self, out: &mut impl Write) -> io::Result<()> {
        writeln!(out, "Node-path: {}", self.path)?;
        if let Some(kind) = self.kind {
            writeln!(out, "Node-kind: {kind}")?;
        }
        writeln!(out, "Node-action: {}", self.action)?;
        if let Some((rev, from)) = &self.copyfrom {
            write!(
                out,
                "Node-copyfrom-rev: {rev}\nNode-copyfrom-path: {from}\n"
            )?;
        }
        if let Some((md5, sha1)) = &self.copy_source {
            write!(
                out,
                "Text-copy-source-md5: {md5}\nText-copy-source-sha1: {sha1}\n"
            )?;
        }
        if let Some(text) = &self.text {
            write!(
                out,
                "Text-content-md5: {}\nText-content-sha1: {}\n",
                hex::encode(Md5::digest(text)),
                hex::encode(Sha1::digest(text))
            )?;
        }
        let props = self.props.as_deref();
        if let Some(props) = props {
            writeln!(out, "Prop-content-length: {}", props.len())?;
        }
        if let Some(text) = &self.text {
            writeln!(out, "Text-content-length: {}", text.len())?;
        }
        if props.is_none() && self.text.is_none() {
            return out.write_all(b"\n\n");
        }
        let len = props.map_or(0, str::len) + self.text.as_ref().map_or(0, Vec::len);
        write!(out, "Content-length: {len}\n\n{}", props.unwrap_or(""))?;
        out.write_all(self.text.as_deref().unwrap_or(b""))?;
        out.write_all(b"\n\n")
    }
}

/// The youngest tree of [`write_long_history_dump`]'s history, and what
/// makes the next revision.
struct LongHistory {
    choices: Choices,
    files: BTreeMap<String, FileState>,
    /// The paths of `files`, in an order that choices index.
    live: Vec<String>,
    dirs: Vec<String>,
    next_file: usize,
}

impl LongHistory {
    fn new() -> LongHistory {
        LongHistory {
            choices: Choices(0x1098_2015_0bad_cafe),
            files: BTreeMap::new(),
            live: Vec::new(),
            dirs: Vec::new(),
            next_file: 0,
        }
    }

    /// The log message and the changes of revision `rev`.
    fn revision(&mut self, rev: u64) -> (String, Vec<Change>) {
        if rev == 1 {
            let mut changes = Vec::new();
            for dir in ["trunk", "branches", "tags"] {
                changes.push(self.add_dir(dir));
            }
            for m in 0..10 {
                changes.push(self.add_dir(&format!("trunk/m{m}")));
            }
            return ("Layout".to_owned(), changes);
        }
        if rev.is_multiple_of(173) {
            return (format!("Nothing changes in r{rev}"), Vec::new());
        }
        if rev.is_multiple_of(500) {
            let mut tag = Change::new(&format!("tags/t{rev}"), Some("dir"), "add");
            tag.copyfrom = Some((rev - 1, "trunk".to_owned()));
            return (format!("Tag trunk as t{rev}"), vec![tag]);
        }
        if rev % 1000 == 300 {
            let dir = format!("trunk/m{}", self.dirs.len());
            let changes = vec![self.add_dir(&dir), self.add_file(rev, Some(&dir))];
            return (format!("New directory {dir}\n\nwith a first file"), changes);
        }
        if rev % 250 == 125 {
            return self.copy_file(rev);
        }
        let roll = self.choices.below(100);
        if self.live.len() < 40 || roll < 25 {
            let mut changes = vec![self.add_file(rev, None)];
            if roll.is_multiple_of(2) {
                changes.push(self.add_file(rev, None));
            }
            if roll < 8 {
                let added: Vec<String> = changes.iter().map(|c| c.path.clone()).collect();
                let path = self.pick_file(&added);
                changes.push(self.edit_file(rev, &path));
            }
            (format!("Add {} files", changes.len()), changes)
        } else if roll < 85 {
            let mut picked = Vec::new();
            for _ in 0..1 + self.choices.below(3) {
                let path = self.pick_file(&picked);
                picked.push(path);
            }
            let changes: Vec<Change> = picked.iter().map(|p| self.edit_file(rev, p)).collect();
            let log = format!(
                "Edit {}\n\nTouches {} files.\n",
                changes[0].path,
                changes.len()
            );
            (log, changes)
        } else if roll < 93 {
            let path = self.pick_file(&[]);
            let state = self.files.get_mut(&path).expect("a live file");
            state.props.insert("touched".to_owned(), format!("r{rev}"));
            if self.choices.below(3) == 0 && state.props.remove("svn:eol-style").is_none() {
                state
                    .props
                    .insert("svn:eol-style".to_owned(), "native".to_owned());
            }
            let mut change = Change::new(&path, Some("file"), "change");
            change.props = Some(state.props_block());
            (format!("Properties of {path}"), vec![change])
        } else {
            let at = self.choices.below(self.live.len());
            let path = self.live.swap_remove(at);
            self.files.remove(&path);
            (
                format!("Delete {path}"),
                vec![Change::new(&path, None, "delete")],
            )
        }
    }

    fn add_dir(&mut self, dir: &str) -> Change {
        if dir.starts_with("trunk/") {
            self.dirs.push(dir.to_owned());
        }
        let mut change = Change::new(dir, Some("dir"), "add");
        change.props = Some(props(&[]));
        change
    }

    /// A path for a new file, in `dir` or in one chosen at random.
    fn new_file_path(&mut self, dir: Option<&str>) -> String {
        let dir = match dir {
            Some(dir) => dir.to_owned(),
            None => self.dirs[self.choices.below(self.dirs.len())].clone(),
        };
        self.next_file += 1;
        format!("{dir}/f{:05}.txt", self.next_file)
    }

    fn add_file(&mut self, rev: u64, dir: Option<&str>) -> Change {
        let path = self.new_file_path(dir);
        let mut lines = vec![format!("{path}, added in r{rev}")];
        for i in 1..2 + self.choices.below(30) {
            lines.push(self.choices.line(&format!("{i}:")));
        }
        let mut props = BTreeMap::new();
        match self.choices.below(8) {
            0 | 1 => {
                props.insert("svn:eol-style".to_owned(), "native".to_owned());
            }
            2 => {
                props.insert("review".to_owned(), "pending".to_owned());
            }
            _ => {}
        }
        let state = FileState { lines, props };
        let mut change = Change::new(&path, Some("file"), "add");
        change.props = Some(state.props_block());
        change.text = Some(state.text());
        self.files.insert(path.clone(), state);
        self.live.push(path);
        change
    }

    /// A live file not in `not`.
    fn pick_file(&mut self, not: &[String]) -> String {
        loop {
            let path = &self.live[self.choices.below(self.live.len())];
            if !not.contains(path) {
                return path.clone();
            }
        }
    }

    /// A few lines of `path` replaced, inserted or removed.
    fn edit_file(&mut self, rev: u64, path: &str) -> Change {
        let choices = &mut self.choices;
        let state = self.files.get_mut(path).expect("a live file");
        let before = state.lines.clone();
        for op in 0..1 + choices.below(3) {
            let at = choices.below(state.lines.len());
            let line = choices.line(&format!("r{rev}.{op}:"));
            match choices.below(4) {
                0 | 1 => state.lines[at] = line,
                2 => state.lines.insert(at, line),
                _ if state.lines.len() > 3 => {
                    state.lines.remove(at);
                }
                _ => state.lines.push(line),
            }
        }
        while state.lines.iter().map(|l| l.len() + 1).sum::<usize>() > MAX_FILE_BYTES {
            let at = choices.below(state.lines.len());
            state.lines.remove(at);
        }
        if state.lines == before {
            // An insert undone by a removal: a change must change the text.
            state.lines.push(choices.line(&format!("r{rev}:")));
        }
        let mut change = Change::new(path, Some("file"), "change");
        change.text = Some(state.text());
        change
    }

    fn copy_file(&mut self, rev: u64) -> (String, Vec<Change>) {
        let from = self.pick_file(&[]);
        let to = self.new_file_path(None);
        let state = self.files[&from].clone();
        let text = state.text();
        let mut change = Change::new(&to, Some("file"), "add");
        change.copyfrom = Some((rev - 1, from.clone()));
        change.copy_source = Some((
            hex::encode(Md5::digest(&text)),
            hex::encode(Sha1::digest(&text)),
        ));
        self.files.insert(to.clone(), state);
        self.live.push(to.clone());
        (format!("Copy {from} to {to}"), vec![change])
    }
}

/// A writer that keeps only the SHA-1 and length of what it is given (for
/// comparing hundreds of megabytes of output without holding them).
#[derive(Clone, Default)]
pub struct Sha1Sink {
    state: std::sync::Arc<std::sync::Mutex<(Sha1, u64)>>,
}

impl Sha1Sink {
    pub fn new() -> Sha1Sink {
        Sha1Sink::default()
    }

    /// The hex SHA-1 and length of everything written so far.
    pub fn result(&self) -> (String, u64) {
        let state = self.state.lock().expect("Sha1Sink lock");
        (hex::encode(state.0.clone().finalize()), state.1)
    }
}

impl Write for Sha1Sink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut state = self.state.lock().expect("Sha1Sink lock");
        state.0.update(buf);
        state.1 += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// SHA-1 (hex) and length of a file, read in chunks.
pub fn sha1_of_file(path: &Path) -> io::Result<(String, u64)> {
    let mut sink = Sha1Sink::new();
    io::copy(&mut File::open(path)?, &mut sink)?;
    Ok(sink.result())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn noise_is_deterministic_and_chunking_does_not_matter() {
        let mut a = vec![0u8; 1000];
        NoiseStream::new(7).fill(&mut a);
        let mut b = Vec::new();
        NoiseStream::new(7)
            .feed(1000, |c| {
                b.extend_from_slice(c);
                Ok(())
            })
            .expect("feeds");
        assert_eq!(a, b);
        assert_ne!(a[..8], a[8..16]);
    }

    #[test]
    fn writes_what_it_reports() {
        let dir = crate::svnadmin::tempdir();
        let path = dir.path().join("big.dump");
        let info = write_big_file_dump(&path, 3 << 20).expect("writes");
        let (sha1, len) = sha1_of_file(&path).expect("reads");
        assert_eq!(len, info.dump_size);
        assert_eq!(sha1, info.dump_sha1);
        assert!(crate::dumpfile::records(&std::fs::read(&path).expect("reads")).is_ok());
    }

    #[test]
    fn a_long_history_is_the_same_for_every_head() {
        let dir = crate::svnadmin::tempdir();
        let (short, long) = (dir.path().join("short.dump"), dir.path().join("long.dump"));
        let info = write_long_history_dump(&short, 1100).expect("writes");
        write_long_history_dump(&long, 1600).expect("writes");
        let (short, long) = (
            std::fs::read(&short).expect("reads"),
            std::fs::read(&long).expect("reads"),
        );
        assert_eq!(info.dump_size, short.len() as u64);
        assert_eq!(crate::dumpfile::head_revision(&short), 1100);
        assert_eq!(crate::dumpfile::dump_prefix(&long, 1100), &short[..]);
    }

    /// svnadmin loads the long history and dumps it back byte for byte: the
    /// generator writes exactly svnadmin's format. 700 revisions hold every
    /// kind of change the history makes (file copies at 125, 375 and 625, a
    /// new directory at 300, a tag at 500, empty revisions at multiples of
    /// 173) in a few seconds of svnadmin's time; a longer history only has
    /// more of them.
    #[test]
    fn svnadmin_dumps_the_long_history_back_identically() {
        let repo = crate::svnadmin::svnadmin_create();
        let path = repo.dir().join("long.dump");
        let info = write_long_history_dump(&path, 700).expect("writes");
        assert_eq!(info.copies, 4, "{info:?}");
        repo.load(&path, &[]);
        crate::dumpfile::assert_dumps_eq(
            &std::fs::read(&path).expect("reads"),
            &repo.dump(&[]),
            "svnadmin dump of the generated long history",
        );
    }
}
