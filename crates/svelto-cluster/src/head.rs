//! The head: the etcd value that plays `db/current`'s role for a repository in the cluster,
//! and the ids it names. Its bytes are laid out in docs/formats/cluster.md; this module is
//! pure (no I/O): the encoder, and a decoder that checks every length and invariant and says
//! what is wrong and where.

use std::fmt;

/// The head value's first four bytes.
pub const HEAD_MAGIC: &[u8; 4] = b"SVHD";
/// The head value's format number (byte 4).
pub const HEAD_FORMAT: u8 = 1;
/// At most this many segments are named by the head itself; older ones are in index objects.
pub const MAX_TAIL: usize = 64;
/// A writer id is 1 to this many bytes of UTF-8.
pub const MAX_WRITER_ID: usize = 255;
/// The largest head value the decoder accepts (the encoder never writes more than about
/// 1.9 KiB: see docs/formats/cluster.md).
pub const MAX_HEAD_BYTES: usize = 4096;
/// The five files of the local format, in the order of [`Head::lengths`] and of a
/// segment's parts.
pub const PARTS: [&str; 5] = ["data", "revs", "meta", "dedup", "revprops"];

/// 128 bits chosen at random by the writer for one attempt at publishing one revision; it
/// makes every segment key unique, so no two attempts ever write the same object.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CommitId(pub [u8; 16]);

impl CommitId {
    /// Lower-case hexadecimal, 32 characters (as in object keys).
    pub fn hex(&self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }
}

impl fmt::Debug for CommitId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CommitId({})", self.hex())
    }
}

impl fmt::Display for CommitId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.hex())
    }
}

/// One published revision's segment: its revision and the commit id in its key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SegmentRef {
    /// The revision the segment holds.
    pub revision: u64,
    /// The attempt that published it.
    pub commit: CommitId,
}

/// Which index object holds the segments before the head's tail: revisions `first..=upto`
/// (object `idx/FIRST.UPTO`, see [`crate::objects`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct IndexRef {
    /// Its first revision.
    pub first: u64,
    /// Its last revision.
    pub upto: u64,
}

/// A decoded head value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Head {
    /// The youngest published revision.
    pub youngest: u64,
    /// The lengths of the local format's five files after it ([`PARTS`] order): readers
    /// read below these only.
    pub lengths: [u64; 5],
    /// The etcd revision of the repository's last lock change (0: none yet).
    pub locks_revision: u64,
    /// The id of the writer that published it.
    pub writer: String,
    /// The newest index object, if the history is longer than the tail.
    pub index: Option<IndexRef>,
    /// The newest segments, oldest first, contiguous, ending at `youngest` (1 to
    /// [`MAX_TAIL`] of them).
    pub tail: Vec<SegmentRef>,
}

/// Why bytes are not a head value: what is wrong and at which byte offset.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad head value at byte {offset}: {what}")]
pub struct HeadError {
    /// The offset in the value where the problem was found.
    pub offset: usize,
    /// What is wrong.
    pub what: String,
}

fn bad(offset: usize, what: impl Into<String>) -> HeadError {
    HeadError {
        offset,
        what: what.into(),
    }
}

impl Head {
    /// The head of a repository whose only revision is 0, published by `writer`.
    pub fn initial(writer: &str, commit: CommitId, lengths: [u64; 5]) -> Head {
        Head {
            youngest: 0,
            lengths,
            locks_revision: 0,
            writer: writer.to_owned(),
            index: None,
            tail: vec![SegmentRef {
                revision: 0,
                commit,
            }],
        }
    }

    /// The attempt that published the youngest revision.
    pub fn commit(&self) -> CommitId {
        self.tail
            .last()
            .expect("a head's tail is never empty")
            .commit
    }

    /// The head that publishing `commit` as revision `youngest + 1` with parts of
    /// `part_lengths` bytes makes, and the segments that leave the tail for a new index
    /// object (empty unless the tail was full).
    pub fn next(
        &self,
        writer: &str,
        commit: CommitId,
        part_lengths: [u64; 5],
    ) -> (Head, Vec<SegmentRef>) {
        let mut lengths = self.lengths;
        for (total, part) in lengths.iter_mut().zip(part_lengths) {
            *total += part;
        }
        let revision = self.youngest + 1;
        let mut tail = self.tail.clone();
        let mut index = self.index;
        let mut flushed = Vec::new();
        if tail.len() == MAX_TAIL {
            // The youngest revision stays in the tail: its segment may still be replaced
            // (a revision property change) by the head an attempt builds on, so an index
            // object names only final segments, and two attempts at the same revision
            // write the same index object.
            let youngest = tail.pop().expect("a full tail");
            flushed = std::mem::take(&mut tail);
            index = Some(IndexRef {
                first: flushed[0].revision,
                upto: flushed[flushed.len() - 1].revision,
            });
            tail.push(youngest);
        }
        tail.push(SegmentRef { revision, commit });
        let head = Head {
            youngest: revision,
            lengths,
            locks_revision: self.locks_revision,
            writer: writer.to_owned(),
            index,
            tail,
        };
        (head, flushed)
    }

    /// The head that a publication adding no revision makes (a revision property change:
    /// `added` bytes appended to the files while `youngest` stays): the youngest revision's
    /// segment is replaced by `commit`'s, which holds the replaced one's bytes followed by
    /// the added ones (docs/formats/cluster.md, "Revision property changes").
    pub fn replace_youngest(&self, writer: &str, commit: CommitId, added: [u64; 5]) -> Head {
        let mut head = self.clone();
        for (total, part) in head.lengths.iter_mut().zip(added) {
            *total += part;
        }
        head.writer = writer.to_owned();
        if let Some(last) = head.tail.last_mut() {
            last.commit = commit;
        }
        head
    }

    /// The segment of `revision` if the head names it in its tail.
    pub fn in_tail(&self, revision: u64) -> Option<SegmentRef> {
        let first = self.tail.first()?.revision;
        let i = usize::try_from(revision.checked_sub(first)?).ok()?;
        self.tail.get(i).copied()
    }

    /// The value's bytes (docs/formats/cluster.md). Panics only on a head that breaks the
    /// invariants [`Head::decode`] checks (a caller bug).
    pub fn encode(&self) -> Vec<u8> {
        if let Err(e) = self.check() {
            panic!("encoding an invalid head: {e}");
        }
        let mut out = Vec::with_capacity(128 + self.writer.len() + self.tail.len() * 24);
        out.extend_from_slice(HEAD_MAGIC);
        out.push(HEAD_FORMAT);
        out.extend_from_slice(&self.youngest.to_le_bytes());
        for length in self.lengths {
            out.extend_from_slice(&length.to_le_bytes());
        }
        out.extend_from_slice(&self.locks_revision.to_le_bytes());
        out.push(u8::try_from(self.writer.len()).expect("checked"));
        out.extend_from_slice(self.writer.as_bytes());
        match self.index {
            None => out.push(0),
            Some(index) => {
                out.push(1);
                out.extend_from_slice(&index.first.to_le_bytes());
                out.extend_from_slice(&index.upto.to_le_bytes());
            }
        }
        out.push(u8::try_from(self.tail.len()).expect("checked"));
        for segment in &self.tail {
            out.extend_from_slice(&segment.revision.to_le_bytes());
            out.extend_from_slice(&segment.commit.0);
        }
        let crc = crc32fast::hash(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        out
    }

    /// Decodes and checks a head value; never panics, never allocates more than the value.
    pub fn decode(bytes: &[u8]) -> Result<Head, HeadError> {
        if bytes.len() > MAX_HEAD_BYTES {
            return Err(bad(
                MAX_HEAD_BYTES,
                format!(
                    "{} bytes, more than the {MAX_HEAD_BYTES} allowed",
                    bytes.len()
                ),
            ));
        }
        if bytes.len() < 4 {
            return Err(bad(0, format!("only {} bytes", bytes.len())));
        }
        let body_len = bytes.len() - 4;
        let stored = u32::from_le_bytes(bytes[body_len..].try_into().expect("4 bytes"));
        let mut r = Reader {
            bytes: &bytes[..body_len],
            pos: 0,
        };
        if r.take(4)? != HEAD_MAGIC {
            return Err(bad(0, "not a head value (no SVHD magic)"));
        }
        let format = r.u8()?;
        if format != HEAD_FORMAT {
            return Err(bad(
                4,
                format!("format {format}, this Svelto reads format {HEAD_FORMAT} only"),
            ));
        }
        let computed = crc32fast::hash(&bytes[..body_len]);
        if computed != stored {
            return Err(bad(
                body_len,
                format!("CRC-32 {stored:08x} stored, {computed:08x} computed"),
            ));
        }
        let youngest = r.u64()?;
        let mut lengths = [0u64; 5];
        for length in &mut lengths {
            *length = r.u64()?;
        }
        let locks_revision = r.u64()?;
        let writer_at = r.pos;
        let writer_len = usize::from(r.u8()?);
        let writer = std::str::from_utf8(r.take(writer_len)?)
            .map_err(|e| bad(writer_at + 1, format!("writer id is not UTF-8: {e}")))?
            .to_owned();
        let index_at = r.pos;
        let index = match r.u8()? {
            0 => None,
            1 => Some(IndexRef {
                first: r.u64()?,
                upto: r.u64()?,
            }),
            other => return Err(bad(index_at, format!("index flag {other}, not 0 or 1"))),
        };
        let tail_at = r.pos;
        let count = usize::from(r.u8()?);
        let mut tail = Vec::with_capacity(count.min(MAX_TAIL));
        for _ in 0..count {
            let revision = r.u64()?;
            let commit = CommitId(r.take(16)?.try_into().expect("16 bytes"));
            tail.push(SegmentRef { revision, commit });
        }
        if r.pos != body_len {
            return Err(bad(
                r.pos,
                format!("{} bytes after the tail", body_len - r.pos),
            ));
        }
        let head = Head {
            youngest,
            lengths,
            locks_revision,
            writer,
            index,
            tail,
        };
        head.check().map_err(|what| {
            let offset = if what.contains("writer") {
                writer_at
            } else if what.contains("index") {
                index_at
            } else {
                tail_at
            };
            bad(offset, what)
        })?;
        Ok(head)
    }

    /// The invariants of docs/formats/cluster.md, or the first one broken.
    fn check(&self) -> Result<(), String> {
        if self.writer.is_empty() || self.writer.len() > MAX_WRITER_ID {
            return Err(format!(
                "writer id of {} bytes (1 to {MAX_WRITER_ID} allowed)",
                self.writer.len()
            ));
        }
        if self.tail.is_empty() || self.tail.len() > MAX_TAIL {
            return Err(format!(
                "tail of {} segments (1 to {MAX_TAIL} allowed)",
                self.tail.len()
            ));
        }
        for pair in self.tail.windows(2) {
            if pair[0].revision.checked_add(1) != Some(pair[1].revision) {
                return Err(format!(
                    "tail not contiguous: r{} then r{}",
                    pair[0].revision, pair[1].revision
                ));
            }
        }
        let last = self.tail[self.tail.len() - 1].revision;
        if last != self.youngest {
            return Err(format!(
                "tail ends at r{last}, the youngest revision is r{}",
                self.youngest
            ));
        }
        let first = self.tail[0].revision;
        match self.index {
            None if first != 0 => Err(format!(
                "no index object, yet the tail starts at r{first}, not r0"
            )),
            Some(index) if index.first > index.upto || index.upto.checked_add(1) != Some(first) => {
                Err(format!(
                    "index r{}..=r{} does not end just before the tail's r{first}",
                    index.first, index.upto
                ))
            }
            _ => Ok(()),
        }
    }
}

/// A cursor over bytes whose reads fail, naming the offset, past the end.
pub(crate) struct Reader<'a> {
    pub(crate) bytes: &'a [u8],
    pub(crate) pos: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], HeadError> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.bytes.len());
        let Some(end) = end else {
            return Err(bad(
                self.pos,
                format!(
                    "truncated: {n} bytes wanted, {} left",
                    self.bytes.len() - self.pos
                ),
            ));
        };
        let out = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(out)
    }

    pub(crate) fn u8(&mut self) -> Result<u8, HeadError> {
        Ok(self.take(1)?[0])
    }

    pub(crate) fn u64(&mut self) -> Result<u64, HeadError> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u8) -> CommitId {
        CommitId([n; 16])
    }

    fn grown(revisions: u64) -> Head {
        let mut head = Head::initial("fe-a", id(0), [1, 2, 3, 4, 5]);
        for r in 1..=revisions {
            head = head.next("fe-a", id(r as u8), [10, 0, 1, 0, 2]).0;
        }
        head
    }

    #[test]
    fn a_head_round_trips_and_its_layout_is_as_documented() {
        let head = Head::initial("fe-a", id(7), [1, 2, 3, 4, 5]);
        let bytes = head.encode();
        // magic 4 + format 1 + youngest 8 + lengths 40 + locks 8 + writer 1+4 + index 1 +
        // tail count 1 + one entry 24 + CRC 4.
        assert_eq!(bytes.len(), 4 + 1 + 8 + 40 + 8 + 5 + 1 + 1 + 24 + 4);
        assert_eq!(&bytes[..5], b"SVHD\x01");
        assert_eq!(&bytes[13..21], &1u64.to_le_bytes());
        assert_eq!(bytes[61], 4);
        assert_eq!(&bytes[62..66], b"fe-a");
        assert_eq!(Head::decode(&bytes), Ok(head));
    }

    #[test]
    fn the_tail_moves_to_an_index_object_when_full() {
        let head = grown(63);
        assert_eq!(head.tail.len(), 64);
        assert_eq!(head.index, None);
        let (next, flushed) = head.next("fe-b", id(200), [1, 1, 1, 1, 1]);
        // The youngest revision (r63, whose segment a revision property change may still
        // replace) stays in the tail: index objects name final segments only.
        assert_eq!(flushed.len(), 63);
        assert_eq!(flushed[0].revision, 0);
        assert_eq!(next.index, Some(IndexRef { first: 0, upto: 62 }));
        assert_eq!(
            next.tail,
            vec![
                SegmentRef {
                    revision: 63,
                    commit: id(63)
                },
                SegmentRef {
                    revision: 64,
                    commit: id(200)
                }
            ]
        );
        assert_eq!(next.lengths, [1 + 630 + 1, 3, 3 + 63 + 1, 5, 5 + 126 + 1]);
        assert_eq!(next.in_tail(64), Some(next.tail[1]));
        assert_eq!(next.in_tail(63), Some(next.tail[0]));
        assert_eq!(next.in_tail(62), None);
        let full = grown(64 + 63);
        assert!(full.encode().len() < 1900);
        assert_eq!(Head::decode(&full.encode()), Ok(full));
    }

    #[test]
    fn a_revision_property_change_replaces_the_youngest_segment_only() {
        let head = grown(70);
        let changed = head.replace_youngest("fe-b", id(99), [0, 0, 7, 0, 20]);
        assert_eq!(changed.youngest, 70);
        assert_eq!(changed.index, head.index, "index objects never change");
        assert_eq!(changed.tail.len(), head.tail.len());
        assert_eq!(
            changed.tail[..head.tail.len() - 1],
            head.tail[..head.tail.len() - 1]
        );
        assert_eq!(changed.commit(), id(99));
        assert_eq!(changed.in_tail(70).map(|s| s.commit), Some(id(99)));
        let grew: Vec<u64> = (0..5)
            .map(|i| changed.lengths[i] - head.lengths[i])
            .collect();
        assert_eq!(grew, [0, 0, 7, 0, 20]);
        assert_eq!(changed.writer, "fe-b");
        assert_eq!(Head::decode(&changed.encode()), Ok(changed.clone()));
        // A commit after it builds on the replaced segment as on any other.
        let (next, _) = changed.next("fe-b", id(100), [1, 1, 1, 1, 1]);
        assert_eq!(next.in_tail(70).map(|s| s.commit), Some(id(99)));
        assert_eq!(next.youngest, 71);
    }

    #[test]
    fn bad_head_values_are_refused_saying_what_and_where() {
        let bytes = grown(3).encode();
        let err = |b: &[u8]| Head::decode(b).expect_err("must be refused");
        assert_eq!(err(&bytes[..2]).what, "only 2 bytes");
        let mut wrong = bytes.clone();
        wrong[0] = b'X';
        assert_eq!(err(&wrong).offset, 0);
        let mut newer = bytes.clone();
        newer[4] = 2;
        assert!(err(&newer).what.contains("format 2"));
        let mut flipped = bytes.clone();
        flipped[20] ^= 1;
        assert!(err(&flipped).what.contains("CRC-32"));
        // A truncated value whose CRC is made right again still fails, at the tail.
        let mut short = bytes[..bytes.len() - 4 - 10].to_vec();
        short.extend_from_slice(&crc32fast::hash(&short).to_le_bytes());
        assert!(
            err(&short).what.starts_with("truncated"),
            "{:?}",
            err(&short)
        );
        assert!(err(&vec![0u8; 5000]).what.contains("more than the 4096"));
        // A non-contiguous tail, CRC made right.
        let mut gap = grown(3).encode();
        gap.truncate(gap.len() - 4);
        let entry_at = gap.len() - 3 * 24;
        gap[entry_at..entry_at + 8].copy_from_slice(&9u64.to_le_bytes());
        gap.extend_from_slice(&crc32fast::hash(&gap).to_le_bytes());
        let e = err(&gap);
        assert!(e.what.contains("not contiguous"), "{e:?}");
        assert!(e.to_string().starts_with("bad head value at byte "));
    }

    #[test]
    #[should_panic(expected = "writer id of 0 bytes")]
    fn encoding_an_invalid_head_is_a_caller_bug() {
        Head::initial("", id(1), [0; 5]).encode();
    }
}
