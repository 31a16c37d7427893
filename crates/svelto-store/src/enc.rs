//! Byte encodings shared by every record: LEB128 varints, length-prefixed strings,
//! property lists, and the CRC-framed record layout (docs/formats/store.md).

use crate::error::Corruption;
use svelto_core::PropList;

pub fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

pub fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put_varint(out, b.len() as u64);
    out.extend_from_slice(b);
}

pub fn put_props(out: &mut Vec<u8>, props: &PropList) {
    put_varint(out, props.len() as u64);
    for (k, v) in props {
        put_bytes(out, k);
        put_bytes(out, v);
    }
}

/// A cursor over a record payload; every read is bounds-checked and reports corruption.
pub struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
    what: &'static str,
}

impl<'a> Cursor<'a> {
    pub fn new(buf: &'a [u8], what: &'static str) -> Self {
        Cursor { buf, pos: 0, what }
    }

    fn bad(&self, why: &str) -> Corruption {
        Corruption::new(format!(
            "{} record: {} at byte {}",
            self.what, why, self.pos
        ))
    }

    pub fn u8(&mut self) -> Result<u8, Corruption> {
        let b = *self
            .buf
            .get(self.pos)
            .ok_or_else(|| self.bad("truncated"))?;
        self.pos += 1;
        Ok(b)
    }

    pub fn varint(&mut self) -> Result<u64, Corruption> {
        let mut v: u64 = 0;
        for i in 0..10 {
            let b = self.u8()?;
            v |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(self.bad("varint longer than 10 bytes"))
    }

    pub fn fixed<const N: usize>(&mut self) -> Result<[u8; N], Corruption> {
        let s = self.take(N)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }

    pub fn take(&mut self, n: usize) -> Result<&'a [u8], Corruption> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.buf.len());
        let end = end.ok_or_else(|| self.bad("length past end of record"))?;
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    pub fn bytes(&mut self) -> Result<&'a [u8], Corruption> {
        let n = self.varint()?;
        let n = usize::try_from(n).map_err(|_| self.bad("absurd length"))?;
        self.take(n)
    }

    pub fn string(&mut self) -> Result<String, Corruption> {
        let b = self.bytes()?;
        String::from_utf8(b.to_vec()).map_err(|_| self.bad("path is not UTF-8"))
    }

    pub fn props(&mut self) -> Result<PropList, Corruption> {
        let n = self.varint()?;
        let mut props = PropList::new();
        for _ in 0..n {
            let k = self.bytes()?.to_vec();
            let v = self.bytes()?.to_vec();
            props.insert(k, v);
        }
        Ok(props)
    }

    pub fn finish(&self) -> Result<(), Corruption> {
        if self.pos == self.buf.len() {
            Ok(())
        } else {
            Err(self.bad("trailing bytes"))
        }
    }
}

/// Record framing: tag, u32 length, payload, CRC-32 of all three.
pub const FRAME_OVERHEAD: usize = 9;
pub const MAX_PAYLOAD: usize = 64 << 20;

pub fn frame(tag: u8, payload: &[u8], out: &mut Vec<u8>) {
    let start = out.len();
    out.push(tag);
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(payload);
    let crc = crc32fast::hash(&out[start..]);
    out.extend_from_slice(&crc.to_le_bytes());
}

/// The 16-byte header every append-only file starts with.
#[cfg(test)]
pub fn file_header(name: &[u8; 11]) -> [u8; 16] {
    let mut h = [0u8; 16];
    h[..11].copy_from_slice(name);
    h[15] = 1;
    h
}

/// 8 lowercase hex digits.
pub(crate) fn parse_crc(s: &str) -> Option<u32> {
    let valid = s.len() == 8
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    u32::from_str_radix(s, 16).ok().filter(|_| valid)
}

/// The one line of a small `db/` file (`current`, `uuid`): its text ends in a newline and
/// may carry ` crc=` and the CRC-32 of what precedes it as 8 hex digits, checked here;
/// `what` names the text in the mismatch message ("the line", "the UUID"). Errors are
/// reasons, to be prefixed with the file's name.
pub(crate) fn checked_line<'a>(text: &'a str, what: &str) -> Result<&'a str, String> {
    let line = text
        .strip_suffix('\n')
        .filter(|l| !l.contains('\n'))
        .ok_or_else(|| "not one line ending in a newline".to_string())?;
    let Some((body, crc)) = line.split_once(" crc=") else {
        return Ok(line);
    };
    let stored = parse_crc(crc)
        .ok_or_else(|| format!("checksum '{}' is not 8 hex digits", crc.escape_debug()))?;
    let actual = crc32fast::hash(body.as_bytes());
    if stored != actual {
        return Err(format!(
            "checksum mismatch (stored {stored:08x}, {what} gives {actual:08x})"
        ));
    }
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varint_round_trip() {
        for v in [0u64, 1, 127, 128, 300, u32::MAX as u64, u64::MAX] {
            let mut b = Vec::new();
            put_varint(&mut b, v);
            let mut c = Cursor::new(&b, "test");
            assert_eq!(c.varint().expect("valid"), v);
            c.finish().expect("consumed");
        }
    }

    #[test]
    fn truncated_and_overlong_are_corruption() {
        let mut c = Cursor::new(&[0x80, 0x80], "test");
        assert!(c.varint().is_err());
        let mut c = Cursor::new(&[0xff; 11], "test");
        assert!(c.varint().is_err());
        let mut c = Cursor::new(&[5, b'a'], "test");
        assert!(c.bytes().is_err());
    }
}
