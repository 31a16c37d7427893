//! One connection's byte streams: items in through the sans-io decoder, items out through a
//! buffer. Output is flushed before every blocking read, so a reply is never stuck in the
//! buffer while we wait for the peer.
//!
//! An idle connection costs kilobytes: the buffers start small, grow while a command needs
//! them (reads double from 4 KiB up to 64 KiB, or to the size of a string being read), and
//! are given back once the connection waits for its next command with nothing pending.

use crate::budget::{Charge, MemoryBudget, OverBudget, FREE_PER_CONNECTION};
use std::io::{self, IoSlice, Read, Write};
use std::ops::Range;
use std::sync::Arc;
use svelto_wire::{Decoder, Item, Limits, WireError};

/// Why a connection cannot go on.
#[derive(Debug, thiserror::Error)]
pub enum ConnError {
    #[error(transparent)]
    Wire(#[from] WireError),
    #[error("connection I/O: {0}")]
    Io(io::Error),
    /// The request would take the server over `--memory-budget`.
    #[error(transparent)]
    Budget(#[from] OverBudget),
}

/// An I/O error, or the memory budget's refusal of a response a write carried out as one.
impl From<io::Error> for ConnError {
    fn from(e: io::Error) -> Self {
        if e.get_ref().is_some_and(|i| i.is::<OverBudget>()) {
            let kind = e.kind();
            match e.into_inner().map(|i| i.downcast::<OverBudget>()) {
                Some(Ok(b)) => return ConnError::Budget(*b),
                Some(Err(other)) => return ConnError::Io(io::Error::new(kind, other)),
                None => return ConnError::Io(io::Error::from(kind)),
            }
        }
        ConnError::Io(e)
    }
}

/// The first read of a connection, and of each command after an idle wait.
const MIN_READ: usize = 4 * 1024;
/// Reads grow to this while each one fills the space it was given.
const READ_CHUNK: usize = 64 * 1024;
/// Output is written to the peer once this much is buffered (copied bytes and held text
/// slices together). Measured on a hot null-export of the medium history over loopback
/// (2026-11-27, 15 interleaved rounds): 64 KiB writes cost 0.23 s of server CPU, 512 KiB
/// and 1 MiB 0.17 s, almost all of the difference the kernel's (fewer sends, each moving
/// several segments under one socket lock); 256 KiB was level with 64 KiB, 4 MiB with 512.
/// The buffer is released between commands (`IDLE_KEEP`).
const OUT_CHUNK: usize = 512 * 1024;
/// A shared text slice at least this long is held until the output goes out, not copied.
const HOLD_MIN: usize = 1024;
/// A buffer bigger than this is released while the connection waits between commands.
const IDLE_KEEP: usize = 8 * 1024;

/// A command's response went over `--max-response-size`.
#[derive(Debug, thiserror::Error)]
#[error("The server response size exceeds the configured limit (--max-response-size)")]
pub struct ResponseTooLarge;

pub struct Conn<R: Read, W: Write> {
    reader: R,
    buf: Vec<u8>,
    start: usize,
    decoder: Decoder,
    /// The next read's size (grows from `MIN_READ` to `READ_CHUNK`).
    read_size: usize,
    writer: W,
    /// Output not yet written to `writer`: these bytes, with the `held` slices in their
    /// places.
    out: Vec<u8>,
    /// Slices of shared texts (a file's contents in the text cache) that go out with `out`,
    /// each before the byte of `out` it names, in order: written with `writev`, not copied.
    held: Vec<Held>,
    /// The bytes `held` names.
    held_len: usize,
    /// Reused to encode outgoing items.
    scratch: Vec<u8>,
    /// Bytes read over the connection's life (for the log).
    pub bytes_in: u64,
    /// Bytes written over the connection's life.
    pub bytes_out: u64,
    /// `--max-response-size`: a command's response may not exceed this (0: no limit).
    max_out: u64,
    /// `bytes_out` when the current command began.
    command_start_out: u64,
    /// The first failure response sent since the command began: (code, message) per link,
    /// for the log and the metrics (handlers that answer failures themselves included).
    failure: Option<Vec<(u64, String)>>,
    /// Bytes already counted in the metrics (in, out).
    pub metered_in: u64,
    pub metered_out: u64,
    /// The connection's buffers (input, output, the item being encoded) and the decoded
    /// tree of the last item read, against the server's memory budget.
    charge: Charge,
    /// What the last item read takes decoded (held until the next read).
    tree: usize,
}

impl<R: Read, W: Write> Conn<R, W> {
    pub fn new(reader: R, writer: W, limits: Limits) -> Self {
        Conn {
            reader,
            buf: Vec::new(),
            start: 0,
            decoder: Decoder::new(limits),
            read_size: MIN_READ,
            writer,
            out: Vec::new(),
            held: Vec::new(),
            held_len: 0,
            scratch: Vec::new(),
            bytes_in: 0,
            bytes_out: 0,
            max_out: 0,
            command_start_out: 0,
            failure: None,
            metered_in: 0,
            metered_out: 0,
            charge: Charge::default(),
            tree: 0,
        }
    }

    /// Counts what this connection buffers for its client against `budget` (the first
    /// `FREE_PER_CONNECTION` bytes are free).
    pub fn set_budget(&mut self, budget: Arc<MemoryBudget>) {
        self.charge = Charge::new(Some(budget), FREE_PER_CONNECTION);
    }

    /// A charge against the same budget, for what a command keeps (a report).
    pub fn new_charge(&self) -> Charge {
        self.charge.sibling()
    }

    /// Bounds each command's response (svnserve's `--max-response-size`; 0: no bound).
    pub fn set_max_response(&mut self, bytes: u64) {
        self.max_out = bytes;
    }

    /// A new command starts: its response is measured from here.
    pub fn start_command(&mut self) {
        self.command_start_out = self.bytes_out;
        self.failure = None;
    }

    /// The first failure the current command sent, if any.
    pub fn take_failure(&mut self) -> Option<Vec<(u64, String)>> {
        self.failure.take()
    }

    /// Remembers the chain of a `( failure ( ( code message file line ) ... ) )` response.
    fn note_failure(&mut self, item: &Item) {
        if self.failure.is_some() {
            return;
        }
        let Some([word, Item::List(links)]) = item.as_list() else {
            return;
        };
        if word.as_word() != Some("failure") {
            return;
        }
        let chain = links
            .iter()
            .filter_map(|l| {
                let l = l.as_list()?;
                let code = l.first()?.as_number()?;
                let msg = l.get(1)?.as_string()?;
                Some((code, String::from_utf8_lossy(msg).into_owned()))
            })
            .collect::<Vec<_>>();
        // An auth exchange's `( failure ( message ) )` has no chain: not a command error.
        if !chain.is_empty() {
            self.failure = Some(chain);
        }
    }

    /// Counts `n` bytes about to be written, failing once the command's response is over
    /// its bound (the connection is then closed, as svnserve does).
    fn count_out(&mut self, n: usize) -> io::Result<()> {
        self.bytes_out += n as u64;
        if self.max_out > 0 && self.bytes_out - self.command_start_out > self.max_out {
            return Err(io::Error::other(ResponseTooLarge));
        }
        Ok(())
    }

    /// The next top-level item; `None` when the peer closed cleanly between items.
    pub fn read_item(&mut self) -> Result<Option<Item>, ConnError> {
        self.flush()?;
        loop {
            if let Some((item, used)) = self.decoder.decode(&self.buf[self.start..])? {
                self.start += used;
                if self.start == self.buf.len() {
                    self.buf.clear();
                    self.start = 0;
                }
                // Held until the next read: the command works on the item meanwhile.
                self.tree = self.decoder.last_cost();
                self.charge_buffers(self.buf.capacity(), self.scratch.capacity())?;
                return Ok(Some(item));
            }
            if self.start > 0 {
                self.buf.drain(..self.start);
                self.start = 0;
            }
            let have = self.buf.len();
            if have == 0 {
                // Between commands, most likely waiting for the peer: give back what a large
                // command left behind.
                self.release_idle();
            }
            let want = match self.decoder.hint() {
                Some(h) => h.clamp(self.read_size, 1 << 20),
                None => self.read_size,
            };
            // Charged before it is taken: the buffer as it will grow (Vec doubles), and the
            // tree of the item framed so far.
            let cap = self.buf.capacity();
            let grown = if have + want > cap {
                (cap * 2).max(have + want)
            } else {
                cap
            };
            self.tree = self.decoder.pending_cost();
            self.charge_buffers(grown, self.scratch.capacity())?;
            self.buf.resize(have + want, 0);
            let n = loop {
                match self.reader.read(&mut self.buf[have..]) {
                    Ok(n) => break n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => {
                        self.buf.truncate(have);
                        return Err(e.into());
                    }
                }
            };
            if n == want {
                self.read_size = (self.read_size * 2).min(READ_CHUNK);
            }
            self.buf.truncate(have + n);
            self.bytes_in += n as u64;
            if n == 0 {
                // Only whitespace left over is a clean end.
                if self.buf.iter().all(|b| *b == b' ' || *b == b'\n') {
                    self.decoder.finish()?;
                    return Ok(None);
                }
                self.decoder.finish()?;
                return Err(WireError::ConnectionClosed {
                    offset: self.buf.len(),
                }
                .into());
            }
        }
    }

    /// Drops buffers grown past `IDLE_KEEP` (called with no input pending and the output
    /// flushed), and starts reads small again.
    fn release_idle(&mut self) {
        for b in [&mut self.buf, &mut self.out, &mut self.scratch] {
            if b.capacity() > IDLE_KEEP {
                *b = Vec::new();
            }
        }
        self.read_size = MIN_READ;
        self.tree = 0;
        let _ = self.charge.set(0);
    }

    /// Charges the connection's buffers with the input buffer at `input` bytes and the
    /// encoding buffer at `scratch` (what they are about to grow to), the output buffer as
    /// it is, and the last item's decoded tree.
    fn charge_buffers(&mut self, input: usize, scratch: usize) -> Result<(), OverBudget> {
        self.charge
            .set(input + self.out.capacity() + scratch + self.tree)
    }

    /// Bytes held in the connection's buffers (capacity), for tests and metrics.
    pub fn buffered_capacity(&self) -> usize {
        self.buf.capacity() + self.out.capacity() + self.scratch.capacity()
    }

    /// Buffers `bytes` for the peer, writing out once `OUT_CHUNK` is reached (a large
    /// write goes straight through).
    fn put(&mut self, bytes: &[u8]) -> io::Result<()> {
        if self.out.len() + self.held_len + bytes.len() > OUT_CHUNK {
            self.flush_out()?;
            if bytes.len() >= OUT_CHUNK {
                return self.writer.write_all(bytes);
            }
        }
        self.out.extend_from_slice(bytes);
        Ok(())
    }

    /// Like [`put`](Self::put) of `text[range]`, holding the text instead of copying it;
    /// what is buffered goes out, in one `writev`, once `OUT_CHUNK` is reached.
    fn put_shared(&mut self, text: &Arc<Vec<u8>>, range: Range<usize>) -> io::Result<()> {
        if range.len() < HOLD_MIN {
            return self.put(&text[range]);
        }
        self.held_len += range.len();
        self.held.push(Held {
            at: self.out.len(),
            text: text.clone(),
            range,
        });
        if self.out.len() + self.held_len >= OUT_CHUNK {
            self.flush_out()?;
        }
        Ok(())
    }

    fn flush_out(&mut self) -> io::Result<()> {
        if self.held.is_empty() {
            if !self.out.is_empty() {
                let r = self.writer.write_all(&self.out);
                self.out.clear();
                r?;
            }
            return Ok(());
        }
        let mut slices = Vec::with_capacity(2 * self.held.len() + 1);
        let mut from = 0;
        for h in &self.held {
            if h.at > from {
                slices.push(IoSlice::new(&self.out[from..h.at]));
                from = h.at;
            }
            slices.push(IoSlice::new(&h.text[h.range.clone()]));
        }
        if from < self.out.len() {
            slices.push(IoSlice::new(&self.out[from..]));
        }
        let r = write_all_vectored(&mut self.writer, &mut slices);
        self.out.clear();
        self.held.clear();
        self.held_len = 0;
        r
    }

    /// Like [`read_item`](Self::read_item), but the end of input is an error.
    pub fn expect_item(&mut self) -> Result<Item, ConnError> {
        self.read_item()?.ok_or_else(|| {
            ConnError::Io(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the client closed the connection in the middle of a command",
            ))
        })
    }

    /// Writes one item. Its encoding is charged against the memory budget first: over it,
    /// the write fails with the budget's error (the connection ends).
    pub fn write_item(&mut self, item: &Item) -> io::Result<()> {
        let need = item.encoded_len();
        if need > self.scratch.capacity() {
            self.charge_buffers(self.buf.capacity(), need)
                .map_err(io::Error::other)?;
        }
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        item.encode(&mut scratch);
        let mut r = self.count_out(scratch.len());
        if r.is_ok() {
            self.note_failure(item);
            r = self.put(&scratch);
        }
        self.scratch = scratch;
        r
    }

    /// Writes bytes that already form whole items.
    pub fn write_raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.count_out(bytes.len())?;
        self.put(bytes)
    }

    /// Writes one string item `len:bytes ` without copying the bytes into an `Item`.
    pub fn write_string(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.put_string_head(bytes.len())?;
        self.put(bytes)?;
        self.put(b" ")
    }

    /// Writes one string item whose bytes are `text[range]`, held rather than copied.
    pub fn write_string_shared(
        &mut self,
        text: &Arc<Vec<u8>>,
        range: Range<usize>,
    ) -> io::Result<()> {
        self.put_string_head(range.len())?;
        self.put_shared(text, range)?;
        self.put(b" ")
    }

    /// Counts a string item of `len` bytes and buffers its `len:` head.
    fn put_string_head(&mut self, len: usize) -> io::Result<()> {
        let mut buf = [0u8; 20];
        let digits = svelto_core::decimal(len as u64, &mut buf);
        self.count_out(digits.len() + len + 2)?;
        self.put(digits)?;
        self.put(b":")
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.flush_out()?;
        self.writer.flush()
    }
}

/// A slice of a shared text waiting in the output (see `Conn::held`).
struct Held {
    /// Where in `Conn::out` it goes: before the byte at this index.
    at: usize,
    text: Arc<Vec<u8>>,
    range: Range<usize>,
}

/// `Write::write_all` over several buffers (`write_all_vectored` is not stable).
fn write_all_vectored<W: Write>(w: &mut W, mut bufs: &mut [IoSlice<'_>]) -> io::Result<()> {
    while !bufs.is_empty() {
        match w.write_vectored(bufs) {
            Ok(0) => {
                return Err(io::Error::new(
                    io::ErrorKind::WriteZero,
                    "failed to write whole buffer",
                ))
            }
            Ok(n) => IoSlice::advance_slices(&mut bufs, n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Streams file contents as string items of at most `CHUNK` bytes.
pub struct StringChunks<'c, R: Read, W: Write> {
    conn: &'c mut Conn<R, W>,
    pending: Vec<u8>,
}

const CHUNK: usize = 64 * 1024;

impl<'c, R: Read, W: Write> StringChunks<'c, R, W> {
    pub fn new(conn: &'c mut Conn<R, W>) -> Self {
        StringChunks {
            conn,
            pending: Vec::with_capacity(CHUNK),
        }
    }

    /// Sends what is buffered.
    pub fn finish(mut self) -> io::Result<()> {
        self.send()
    }

    fn send(&mut self) -> io::Result<()> {
        if !self.pending.is_empty() {
            self.conn.write_string(&self.pending)?;
            self.pending.clear();
        }
        Ok(())
    }
}

impl<R: Read, W: Write> Write for StringChunks<'_, R, W> {
    fn write(&mut self, mut data: &[u8]) -> io::Result<usize> {
        let n = data.len();
        while !data.is_empty() {
            let room = CHUNK - self.pending.len();
            let take = room.min(data.len());
            self.pending.extend_from_slice(&data[..take]);
            data = &data[take..];
            if self.pending.len() == CHUNK {
                self.send()?;
            }
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_split_across_reads_and_clean_end() {
        // A reader that hands out one byte at a time.
        struct Trickle(Vec<u8>, usize);
        impl Read for Trickle {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                if self.1 >= self.0.len() || buf.is_empty() {
                    return Ok(0);
                }
                buf[0] = self.0[self.1];
                self.1 += 1;
                Ok(1)
            }
        }
        let input = b"( get-latest-rev ( ) ) ( stat ( 3:a b ( 1 ) ) ) \n".to_vec();
        let mut conn = Conn::new(Trickle(input, 0), Vec::new(), Limits::default());
        let a = conn.read_item().expect("read").expect("item");
        assert_eq!(a.to_bytes(), b"( get-latest-rev ( ) ) ".to_vec());
        let b = conn.read_item().expect("read").expect("item");
        assert_eq!(b.to_bytes(), b"( stat ( 3:a b ( 1 ) ) ) ".to_vec());
        assert!(conn.read_item().expect("clean end").is_none());
    }

    /// Shared text slices held in the output come out in their places, whole, through a
    /// peer that takes a few bytes of one buffer per write, and in as many writes as the
    /// same output copied (one per `OUT_CHUNK`).
    #[test]
    fn held_text_slices_go_out_in_place_through_partial_writes() {
        // Takes at most 7 bytes per call, of the first non-empty buffer only.
        #[derive(Default)]
        struct Stingy {
            got: Vec<u8>,
            calls: usize,
        }
        impl Write for Stingy {
            fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
                self.calls += 1;
                let n = buf.len().min(7);
                self.got.extend_from_slice(&buf[..n]);
                Ok(n)
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        // Counts the writes, whole.
        #[derive(Default)]
        struct Counting {
            got: Vec<u8>,
            writes: usize,
        }
        impl Write for Counting {
            fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
                self.writes += 1;
                self.got.extend_from_slice(buf);
                Ok(buf.len())
            }
            fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
                self.writes += 1;
                let mut n = 0;
                for b in bufs {
                    self.got.extend_from_slice(b);
                    n += b.len();
                }
                Ok(n)
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let texts: Vec<Arc<Vec<u8>>> = [10usize, 1023, 1024, 5000, 40_000, 70_000, 150_000]
            .iter()
            .enumerate()
            .map(|(i, &n)| Arc::new((0..n).map(|k| (k * 31 + i) as u8).collect()))
            .collect();
        let mut expected = Vec::new();
        let mut copied = Conn::new(&b""[..], Counting::default(), Limits::default());
        let mut stingy = Conn::new(&b""[..], Stingy::default(), Limits::default());
        let mut held = Conn::new(&b""[..], Counting::default(), Limits::default());
        for round in 0..3 {
            for t in &texts {
                let ranges = [0..t.len(), t.len() / 3..t.len(), 0..t.len() / 2];
                let r = ranges[round].clone();
                let cmd = format!("( textdelta-chunk ( 2:c{round} ");
                expected.extend_from_slice(cmd.as_bytes());
                expected.extend_from_slice(format!("{}:", r.len()).as_bytes());
                expected.extend_from_slice(&t[r.clone()]);
                expected.extend_from_slice(b" ) ) ");
                copied.write_raw(cmd.as_bytes()).expect("write");
                copied.write_string(&t[r.clone()]).expect("write");
                copied.write_raw(b") ) ").expect("write");
                stingy.write_raw(cmd.as_bytes()).expect("write");
                stingy.write_string_shared(t, r.clone()).expect("write");
                stingy.write_raw(b") ) ").expect("write");
                held.write_raw(cmd.as_bytes()).expect("write");
                held.write_string_shared(t, r.clone()).expect("write");
                held.write_raw(b") ) ").expect("write");
            }
        }
        copied.flush().expect("flush");
        stingy.flush().expect("flush");
        held.flush().expect("flush");
        assert!(held.held.is_empty() && held.out.is_empty());
        assert_eq!(copied.writer.got, expected);
        assert_eq!(held.writer.got, expected);
        assert_eq!(stingy.writer.got, expected);
        assert!(stingy.writer.calls >= expected.len() / 7);
        assert_eq!(held.bytes_out, expected.len() as u64);
        assert!(
            held.writer.writes <= copied.writer.writes,
            "{} writes held against {} copied",
            held.writer.writes,
            copied.writer.writes
        );
    }

    #[test]
    fn buffers_grown_by_a_large_request_are_given_back_when_idle() {
        let big = vec![b'x'; 3 << 20];
        let mut input = format!("( 1:a {}:", big.len()).into_bytes();
        input.extend_from_slice(&big);
        input.extend_from_slice(b" ) ( 1:b ) ");
        let mut conn = Conn::new(&input[..], Vec::new(), Limits::default());
        assert!(
            conn.buffered_capacity() == 0,
            "nothing allocated before a read"
        );
        let a = conn.read_item().expect("read").expect("item");
        assert_eq!(a.as_list().map(<[Item]>::len), Some(2));
        conn.write_item(&a).expect("echo");
        assert!(conn.buffered_capacity() > 3 << 20);
        let b = conn.read_item().expect("read").expect("item");
        assert_eq!(b.to_bytes(), b"( 1:b ) ".to_vec());
        // Waiting for the next command with nothing pending: the big buffers are gone.
        assert!(conn.read_item().expect("clean end").is_none());
        assert!(
            conn.buffered_capacity() <= 2 * MIN_READ,
            "{} bytes kept",
            conn.buffered_capacity()
        );
        assert_eq!(conn.writer.len(), a.to_bytes().len());
    }

    #[test]
    fn a_request_over_the_memory_budget_is_refused_and_its_charge_given_back() {
        let budget = MemoryBudget::new(2 << 20);
        let big = vec![b'x'; 3 << 20];
        let mut input = format!("( 1:a {}:", big.len()).into_bytes();
        input.extend_from_slice(&big);
        input.extend_from_slice(b" ) ");
        let mut conn = Conn::new(&input[..], Vec::new(), Limits::default());
        conn.set_budget(budget.clone());
        match conn.read_item() {
            Err(ConnError::Budget(e)) => assert_eq!(e.limit, 2 << 20),
            other => panic!("expected the budget's refusal, got {other:?}"),
        }
        assert!(budget.used() <= 2 << 20);
        drop(conn);
        assert_eq!(budget.used(), 0, "the connection's charge is given back");

        // Under the budget: read, and charged only while the connection holds it.
        let budget = MemoryBudget::new(64 << 20);
        input.extend_from_slice(b"( 1:b ) ");
        let mut conn = Conn::new(&input[..], Vec::new(), Limits::default());
        conn.set_budget(budget.clone());
        conn.read_item().expect("read").expect("item");
        assert!(budget.used() >= (3 << 20) - FREE_PER_CONNECTION);
        conn.read_item().expect("read").expect("item");
        assert!(conn.read_item().expect("clean end").is_none());
        assert_eq!(budget.used(), 0, "nothing held while idle");
    }

    /// A response item is charged before it is encoded: over the budget, the write fails
    /// with the budget's error (which ends the connection) and nothing is encoded; under
    /// it, the encoding buffer stays charged until the connection is idle again.
    #[test]
    fn a_response_over_the_memory_budget_is_refused_before_it_is_encoded() {
        let entries: Vec<Item> = (0..40_000u64)
            .map(|i| {
                Item::list(vec![
                    Item::string(format!("entry-{i:060}")),
                    Item::Number(i),
                ])
            })
            .collect();
        let listing = Item::list(entries);
        let need = listing.encoded_len();
        assert_eq!(need, listing.to_bytes().len());
        assert!(need > 2 << 20, "{need}");

        let budget = MemoryBudget::new(1 << 20);
        let mut conn = Conn::new(&b"( 1:a ) "[..], Vec::new(), Limits::default());
        conn.set_budget(budget.clone());
        conn.read_item().expect("read").expect("item");
        let e = conn.write_item(&listing).expect_err("over the budget");
        match ConnError::from(e) {
            ConnError::Budget(b) => assert_eq!(b.limit, 1 << 20),
            other => panic!("expected the budget's refusal, got {other:?}"),
        }
        assert!(conn.buffered_capacity() < 1 << 20, "encoded anyway");
        assert!(conn.writer.is_empty());

        let budget = MemoryBudget::new(64 << 20);
        let mut conn = Conn::new(&b"( 1:a ) "[..], Vec::new(), Limits::default());
        conn.set_budget(budget.clone());
        conn.read_item().expect("read").expect("item");
        conn.write_item(&listing).expect("under the budget");
        assert!(budget.used() >= need - FREE_PER_CONNECTION);
        assert!(conn.read_item().expect("clean end").is_none());
        assert_eq!(budget.used(), 0, "nothing held while idle");
        assert_eq!(conn.writer.len(), need);
    }

    #[test]
    fn end_inside_an_item_is_an_error() {
        let mut conn = Conn::new(&b"( stat ( 3:a"[..], Vec::new(), Limits::default());
        assert!(conn.read_item().is_err());
    }

    #[test]
    fn absurd_length_is_refused_without_allocating() {
        let mut conn = Conn::new(&b"( stat ( 99999999999:"[..], Vec::new(), Limits::default());
        match conn.read_item() {
            Err(ConnError::Wire(WireError::RequestTooLarge { .. })) => {}
            other => panic!("expected request too large, got {other:?}"),
        }
    }
}
