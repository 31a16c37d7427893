//! The client's floor: record what a server sends over svn:// for each request, then
//! answer the same requests from memory with those bytes (no storage, no computation).
//! What a stock client takes against the replay is the least any server can make it take.
//!
//! A request is known by everything the client sent on its connection up to it: a hash of
//! its complete top-level items (the port of `127.0.0.1:PORT` URLs left out). Recording,
//! the server's bytes that arrive after the client's k-th item are filed under the hash of
//! items 1..k (the bytes before the first item, the greeting, under the empty history).
//! The client sent item k before it could see those bytes, so a replay that sends them
//! right after reading item k never waits for something the client waits for.
//!
//! Recording file: `svelto-floor 1 PORT\n` (the recorder's port, which the server's
//! bytes name in URLs), then records of a key (u64 LE), a length (u32 LE) and the bytes.

use std::collections::HashMap;
use std::io::{self, Read, Write};

/// The hash of an empty history: the key of the greeting.
pub const START: u64 = 0xcbf2_9ce4_8422_2325;

/// Folds one client item into a history hash (FNV-1a), with every `127.0.0.1:DIGITS`
/// read as `127.0.0.1:` and its digits as zeros, so that the port does not matter.
pub fn fold(mut h: u64, item: &[u8]) -> u64 {
    const HOST: &[u8] = b"127.0.0.1:";
    let mut i = 0;
    let mut port = false;
    while i < item.len() {
        let mut b = item[i];
        if port && b.is_ascii_digit() {
            b = b'0';
        } else {
            port = false;
        }
        if item[..=i].ends_with(HOST) {
            port = true;
        }
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
        i += 1;
    }
    // Item boundary.
    h ^= 0x1f;
    h.wrapping_mul(0x0100_0000_01b3)
}

/// Finds where top-level items of the svn:// protocol end in a byte stream, as bytes
/// arrive in pieces: lists, words, numbers and `N:bytes` strings.
#[derive(Default)]
pub struct Items {
    depth: usize,
    state: State,
    /// The bytes of the item being read.
    item: Vec<u8>,
}

#[derive(Default, Clone, Copy)]
enum State {
    #[default]
    Between,
    Number(u64),
    Bytes(u64),
    Word,
}

/// Items are requests: a client's are small. A bound keeps a broken stream from growing
/// the buffer without end.
const MAX_ITEM: usize = 64 << 20;

impl Items {
    /// Feeds `data`; calls `done` with each complete top-level item.
    pub fn feed(&mut self, data: &[u8], mut done: impl FnMut(&[u8])) -> io::Result<()> {
        let mut i = 0;
        while i < data.len() {
            let b = data[i];
            match self.state {
                State::Bytes(n) => {
                    let take = usize::try_from(n).unwrap_or(usize::MAX).min(data.len() - i);
                    self.item.extend_from_slice(&data[i..i + take]);
                    i += take;
                    let left = n - take as u64;
                    self.state = State::Bytes(left);
                    if left == 0 {
                        self.state = State::Between;
                        self.end_token(&mut done);
                    }
                    continue;
                }
                State::Number(n) => {
                    if b.is_ascii_digit() {
                        let n = n
                            .checked_mul(10)
                            .and_then(|n| n.checked_add(u64::from(b - b'0')))
                            .ok_or_else(|| bad("number too large"))?;
                        self.state = State::Number(n);
                    } else if b == b':' {
                        self.state = State::Bytes(n);
                        self.item.push(b);
                        i += 1;
                        if n == 0 {
                            self.state = State::Between;
                            self.end_token(&mut done);
                        }
                        continue;
                    } else {
                        self.state = State::Between;
                        self.end_token(&mut done);
                        continue;
                    }
                }
                State::Word => {
                    if !(b.is_ascii_alphanumeric() || b == b'-') {
                        self.state = State::Between;
                        self.end_token(&mut done);
                        continue;
                    }
                }
                State::Between => match b {
                    b'(' => self.depth += 1,
                    b')' => {
                        self.depth = self
                            .depth
                            .checked_sub(1)
                            .ok_or_else(|| bad("unbalanced ')'"))?;
                        self.item.push(b);
                        i += 1;
                        if self.depth == 0 {
                            self.finish(&mut done);
                        }
                        continue;
                    }
                    b' ' | b'\n' => {
                        if self.depth == 0 {
                            i += 1;
                            continue;
                        }
                    }
                    b'0'..=b'9' => self.state = State::Number(u64::from(b - b'0')),
                    b if b.is_ascii_alphabetic() => self.state = State::Word,
                    _ => return Err(bad("not an svn:// item")),
                },
            }
            self.item.push(b);
            if self.item.len() > MAX_ITEM {
                return Err(bad("item over 64 MiB"));
            }
            i += 1;
        }
        Ok(())
    }

    fn end_token(&mut self, done: &mut impl FnMut(&[u8])) {
        if self.depth == 0 {
            self.finish(done);
        }
    }

    fn finish(&mut self, done: &mut impl FnMut(&[u8])) {
        done(&self.item);
        self.item.clear();
    }
}

fn bad(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what)
}

/// Writes the header of a recording.
pub fn write_header(out: &mut dyn Write, port: u16) -> io::Result<()> {
    writeln!(out, "svelto-floor 1 {port}")
}

/// Writes one record: bytes the server sent after the history `key`.
pub fn write_record(out: &mut dyn Write, key: u64, bytes: &[u8]) -> io::Result<()> {
    let len = u32::try_from(bytes.len()).map_err(|_| bad("record over 4 GiB"))?;
    out.write_all(&key.to_le_bytes())?;
    out.write_all(&len.to_le_bytes())?;
    out.write_all(bytes)
}

/// Reads a recording: every history's bytes, with the recorder's `127.0.0.1:PORT`
/// rewritten to `port` (the replay's own, of the same number of digits).
pub fn read_recording(input: &mut dyn Read, port: u16) -> io::Result<HashMap<u64, Vec<u8>>> {
    let mut all = Vec::new();
    input.read_to_end(&mut all)?;
    let nl = all
        .iter()
        .position(|&b| b == b'\n')
        .ok_or_else(|| bad("no header"))?;
    let header = std::str::from_utf8(&all[..nl]).map_err(|_| bad("header not UTF-8"))?;
    let rec_port = header
        .strip_prefix("svelto-floor 1 ")
        .and_then(|p| p.parse::<u16>().ok())
        .ok_or_else(|| bad("not a svelto-floor 1 recording"))?;
    let (from, to) = (format!("127.0.0.1:{rec_port}"), format!("127.0.0.1:{port}"));
    if from.len() != to.len() {
        return Err(bad(
            "the replay's port has another number of digits than the recorder's",
        ));
    }
    let mut map: HashMap<u64, Vec<u8>> = HashMap::new();
    let mut at = nl + 1;
    while at < all.len() {
        if all.len() - at < 12 {
            return Err(bad("truncated record"));
        }
        let key = u64::from_le_bytes(all[at..at + 8].try_into().map_err(|_| bad("key"))?);
        let len = u32::from_le_bytes(all[at + 8..at + 12].try_into().map_err(|_| bad("len"))?);
        at += 12;
        let end = at.checked_add(len as usize).filter(|&e| e <= all.len());
        let end = end.ok_or_else(|| bad("truncated record"))?;
        map.entry(key).or_default().extend_from_slice(&all[at..end]);
        at = end;
    }
    for bytes in map.values_mut() {
        replace_all(bytes, from.as_bytes(), to.as_bytes());
    }
    Ok(map)
}

/// Replaces every `from` by `to` (same length) in place.
fn replace_all(bytes: &mut [u8], from: &[u8], to: &[u8]) {
    let Some(&first) = from.first() else { return };
    let mut i = 0;
    while i + from.len() <= bytes.len() {
        match bytes[i..].iter().position(|&b| b == first) {
            Some(p) if i + p + from.len() <= bytes.len() => {
                i += p;
                if bytes[i..i + from.len()] == *from {
                    bytes[i..i + from.len()].copy_from_slice(to);
                    i += from.len();
                } else {
                    i += 1;
                }
            }
            _ => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(pieces: &[&[u8]]) -> Vec<Vec<u8>> {
        let mut it = Items::default();
        let mut out = Vec::new();
        for p in pieces {
            it.feed(p, |i| out.push(i.to_vec())).expect("valid items");
        }
        out
    }

    #[test]
    fn items_end_where_their_lists_close_whatever_the_pieces() {
        let stream: &[u8] =
            b"( 2 ( edit-pipeline svndiff1 ) 10:a ( b ) c:d 0: ) ( get-latest-rev ( ) ) ";
        let whole = items(&[stream]);
        assert_eq!(whole.len(), 2);
        assert_eq!(whole[1], b"( get-latest-rev ( ) )".to_vec());
        // One byte at a time: the same items.
        let bytes: Vec<&[u8]> = stream.chunks(1).collect();
        assert_eq!(items(&bytes), whole);
        // A string holding parentheses does not end the list.
        assert_eq!(items(&[b"( 3:)))", b" ) "]), vec![b"( 3:))) )".to_vec()]);
    }

    #[test]
    fn the_port_does_not_change_the_key() {
        let a = fold(START, b"( 2 ( ) 28:svn://127.0.0.1:41234/medium ) ");
        let b = fold(START, b"( 2 ( ) 28:svn://127.0.0.1:50007/medium ) ");
        let c = fold(START, b"( 2 ( ) 28:svn://127.0.0.1:50007/mediun ) ");
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_ne!(fold(a, b"( x )"), fold(START, b"( x )"));
    }

    #[test]
    fn a_recording_reads_back_with_the_replay_port() {
        let mut f = Vec::new();
        write_header(&mut f, 41234).expect("to memory");
        write_record(&mut f, START, b"( success ( svn://127.0.0.1:41234/r ) ) ")
            .expect("to memory");
        write_record(&mut f, 7, b"abc").expect("to memory");
        write_record(&mut f, 7, b"def").expect("to memory");
        let map = read_recording(&mut &f[..], 50007).expect("a valid recording");
        assert_eq!(
            map[&START],
            b"( success ( svn://127.0.0.1:50007/r ) ) ".to_vec()
        );
        assert_eq!(map[&7], b"abcdef".to_vec());
        assert!(read_recording(&mut &f[..f.len() - 1], 50007).is_err());
    }
}
