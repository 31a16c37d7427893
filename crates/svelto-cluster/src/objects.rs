//! Immutable objects in the S3-compatible store (docs/cluster.md, "Where everything
//! lives"; byte layouts in docs/formats/cluster.md): one segment per published revision
//! under `PREFIX/seg/RRRRRRRRRRRR-COMMITID`, and index objects under
//! `PREFIX/idx/FIRST.UPTO` naming the segments that left the head's tail. Every key is
//! written once, by a put-if-absent (`If-None-Match: *`), and never rewritten or deleted
//! while a head can name it.

use std::ops::Range;
use std::sync::Arc;
use std::time::Duration;

use object_store::multipart::MultipartStore;
use object_store::path::Path as ObjectPath;
use object_store::{
    GetOptions, GetRange, ObjectStore, ObjectStoreExt, PutMode, PutOptions as ObjectPutOptions,
    PutPayload,
};

use crate::head::{CommitId, HeadError, IndexRef, Reader, SegmentRef, PARTS};
use crate::ClusterError;

/// A segment object's first four bytes.
pub const SEGMENT_MAGIC: &[u8; 4] = b"SVSG";
/// An index object's first four bytes.
pub const INDEX_MAGIC: &[u8; 4] = b"SVIX";
/// The format number of both (byte 4).
pub const OBJECT_FORMAT: u8 = 1;
/// The length of a segment's header, its CRC included: the parts start here.
pub const SEGMENT_HEADER_LEN: u64 = 73;

/// The bytes one publication appends to each of the local format's five files.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Segment {
    /// In [`PARTS`] order.
    pub parts: [Vec<u8>; 5],
}

impl Segment {
    /// Each part's length.
    pub fn lengths(&self) -> [u64; 5] {
        self.parts.each_ref().map(|p| p.len() as u64)
    }

    /// The object's bytes for revision `revision` published by `commit`.
    pub fn encode(&self, revision: u64, commit: CommitId) -> Vec<u8> {
        let body: usize = self.parts.iter().map(Vec::len).sum();
        let mut out = Vec::with_capacity(SEGMENT_HEADER_LEN as usize + body + 4);
        out.extend_from_slice(SEGMENT_MAGIC);
        out.push(OBJECT_FORMAT);
        out.extend_from_slice(&revision.to_le_bytes());
        out.extend_from_slice(&commit.0);
        for length in self.lengths() {
            out.extend_from_slice(&length.to_le_bytes());
        }
        let crc = crc32fast::hash(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        let mut parts_crc = crc32fast::Hasher::new();
        for part in &self.parts {
            out.extend_from_slice(part);
            parts_crc.update(part);
        }
        out.extend_from_slice(&parts_crc.finalize().to_le_bytes());
        out
    }

    /// Decodes a whole segment object and checks both CRCs and that it is the segment of
    /// `expected` (a renamed or misplaced object is refused).
    pub fn decode(bytes: &[u8], expected: SegmentRef) -> Result<Segment, HeadError> {
        let header = SegmentHeader::decode(bytes)?;
        if header.revision != expected.revision || header.commit != expected.commit {
            return Err(HeadError {
                offset: 5,
                what: format!(
                    "segment of r{} commit {}, expected r{} commit {}",
                    header.revision, header.commit, expected.revision, expected.commit
                ),
            });
        }
        let total = header.body_len();
        let start = SEGMENT_HEADER_LEN as usize;
        let want = total.checked_add(SEGMENT_HEADER_LEN + 4);
        if want != Some(bytes.len() as u64) {
            return Err(HeadError {
                offset: bytes.len(),
                what: format!(
                    "object of {} bytes, its header says {}",
                    bytes.len(),
                    total.saturating_add(SEGMENT_HEADER_LEN + 4)
                ),
            });
        }
        let end = bytes.len() - 4;
        let stored = u32::from_le_bytes(bytes[end..].try_into().expect("4 bytes"));
        let computed = crc32fast::hash(&bytes[start..end]);
        if stored != computed {
            return Err(HeadError {
                offset: end,
                what: format!("parts' CRC-32 {stored:08x} stored, {computed:08x} computed"),
            });
        }
        let mut segment = Segment::default();
        let mut at = start;
        for (part, length) in segment.parts.iter_mut().zip(header.lengths) {
            let length = length as usize;
            *part = bytes[at..at + length].to_vec();
            at += length;
        }
        Ok(segment)
    }
}

/// Where the parts of a segment being written are read from: memory ([`Segment`]) or the
/// local files they were appended to (a large revision is never whole in memory).
pub trait PartSource: Sync {
    /// Each part's length, in [`PARTS`] order.
    fn lengths(&self) -> [u64; 5];
    /// Fills `buf` with part `part`'s bytes from `offset` (within the part).
    fn read_part(&self, part: usize, offset: u64, buf: &mut [u8]) -> std::io::Result<()>;
    /// What a failed read was reading, for its error.
    fn describe(&self, part: usize) -> String;
}

impl PartSource for Segment {
    fn lengths(&self) -> [u64; 5] {
        Segment::lengths(self)
    }
    fn read_part(&self, part: usize, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        let bytes = &self.parts[part];
        let start = usize::try_from(offset).unwrap_or(usize::MAX);
        match bytes.get(start..).and_then(|b| b.get(..buf.len())) {
            Some(have) => {
                buf.copy_from_slice(have);
                Ok(())
            }
            None => Err(std::io::Error::from(std::io::ErrorKind::UnexpectedEof)),
        }
    }
    fn describe(&self, part: usize) -> String {
        format!("the segment's {} part in memory", PARTS[part])
    }
}

/// A segment object's bytes produced in order, chunk by chunk, from a [`PartSource`]: the
/// header, the parts (their CRC computed on the way), the CRC.
pub(crate) struct SegmentStream<'a> {
    header: Vec<u8>,
    source: &'a dyn PartSource,
    lengths: [u64; 5],
    /// The next object byte to produce.
    at: u64,
    total: u64,
    crc: crc32fast::Hasher,
}

impl<'a> SegmentStream<'a> {
    pub(crate) fn new(source: &'a dyn PartSource, revision: u64, commit: CommitId) -> Self {
        let lengths = source.lengths();
        let mut header = Vec::with_capacity(SEGMENT_HEADER_LEN as usize);
        header.extend_from_slice(SEGMENT_MAGIC);
        header.push(OBJECT_FORMAT);
        header.extend_from_slice(&revision.to_le_bytes());
        header.extend_from_slice(&commit.0);
        for length in lengths {
            header.extend_from_slice(&length.to_le_bytes());
        }
        let crc = crc32fast::hash(&header);
        header.extend_from_slice(&crc.to_le_bytes());
        let body: u64 = lengths.iter().sum();
        SegmentStream {
            header,
            source,
            lengths,
            at: 0,
            total: SEGMENT_HEADER_LEN + body + 4,
            crc: crc32fast::Hasher::new(),
        }
    }

    /// The object's length.
    pub(crate) fn total(&self) -> u64 {
        self.total
    }

    /// The next at most `max` bytes of the object (empty at its end).
    pub(crate) fn next_chunk(&mut self, max: u64) -> Result<Vec<u8>, ClusterError> {
        let n = max.min(self.total - self.at);
        let mut out = Vec::with_capacity(usize::try_from(n).unwrap_or(0));
        let end = self.at + n;
        while self.at < end {
            if self.at < SEGMENT_HEADER_LEN {
                let upto = end.min(SEGMENT_HEADER_LEN);
                out.extend_from_slice(&self.header[self.at as usize..upto as usize]);
                self.at = upto;
                continue;
            }
            let body_end = self.total - 4;
            if self.at >= body_end {
                let crc = self.crc.clone().finalize().to_le_bytes();
                let from = (self.at - body_end) as usize;
                let upto = (end - body_end) as usize;
                out.extend_from_slice(&crc[from..upto]);
                self.at = end;
                continue;
            }
            // In the parts: which part, and where in it.
            let mut offset = self.at - SEGMENT_HEADER_LEN;
            let mut part = 0;
            while offset >= self.lengths[part] {
                offset -= self.lengths[part];
                part += 1;
            }
            let take = (self.lengths[part] - offset).min(end - self.at);
            let from = out.len();
            out.resize(from + take as usize, 0);
            self.source
                .read_part(part, offset, &mut out[from..])
                .map_err(|source| ClusterError::Local {
                    what: format!(
                        "reading bytes {offset}..{} of {}",
                        offset + take,
                        self.source.describe(part)
                    ),
                    source,
                })?;
            self.crc.update(&out[from..]);
            self.at += take;
        }
        Ok(out)
    }
}

/// Receives a segment's parts as they are read from the object store, in order: part,
/// offset within the part, bytes.
pub type PartSink<'a> = dyn FnMut(usize, u64, &[u8]) -> Result<(), ClusterError> + Send + 'a;

/// Checks a segment object's bytes as they arrive in order (after its header) and hands
/// its parts to a sink; the parts' CRC is checked at the end.
struct SegmentIntake<'a, 'b> {
    header: SegmentHeader,
    key: &'a str,
    sink: &'a mut PartSink<'b>,
    /// The next object byte expected.
    at: u64,
    crc: crc32fast::Hasher,
    trailer: Vec<u8>,
}

impl SegmentIntake<'_, '_> {
    fn total(&self) -> u64 {
        SEGMENT_HEADER_LEN + self.header.body_len() + 4
    }

    /// Takes the object's bytes from `self.at` on.
    fn take(&mut self, mut bytes: &[u8]) -> Result<(), ClusterError> {
        if self.at < SEGMENT_HEADER_LEN {
            let skip = ((SEGMENT_HEADER_LEN - self.at) as usize).min(bytes.len());
            bytes = &bytes[skip..];
            self.at += skip as u64;
        }
        let body_end = self.total() - 4;
        while !bytes.is_empty() && self.at < body_end {
            let mut offset = self.at - SEGMENT_HEADER_LEN;
            let mut part = 0;
            while offset >= self.header.lengths[part] {
                offset -= self.header.lengths[part];
                part += 1;
            }
            let take = ((self.header.lengths[part] - offset) as usize).min(bytes.len());
            self.crc.update(&bytes[..take]);
            (self.sink)(part, offset, &bytes[..take])?;
            bytes = &bytes[take..];
            self.at += take as u64;
        }
        self.trailer.extend_from_slice(bytes);
        self.at += bytes.len() as u64;
        if self.trailer.len() > 4 {
            return Err(self.corrupt(format!(
                "more bytes than the {} its header says",
                self.total()
            )));
        }
        Ok(())
    }

    fn corrupt(&self, detail: String) -> ClusterError {
        ClusterError::Corrupt {
            what: "segment",
            key: self.key.to_owned(),
            detail,
        }
    }

    /// Checks that the whole object came and its parts' CRC.
    fn finish(self) -> Result<(), ClusterError> {
        if self.at != self.total() {
            return Err(self.corrupt(format!(
                "object of {} bytes, its header says {}",
                self.at,
                self.total()
            )));
        }
        let stored = u32::from_le_bytes(self.trailer[..].try_into().expect("4 bytes"));
        let computed = self.crc.clone().finalize();
        if stored != computed {
            return Err(self.corrupt(format!(
                "parts' CRC-32 {stored:08x} stored, {computed:08x} computed"
            )));
        }
        Ok(())
    }
}

/// A segment object's header (its first [`SEGMENT_HEADER_LEN`] bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SegmentHeader {
    /// The revision it holds.
    pub revision: u64,
    /// The attempt that wrote it.
    pub commit: CommitId,
    /// Its parts' lengths, in [`PARTS`] order.
    pub lengths: [u64; 5],
}

impl SegmentHeader {
    /// Decodes and checks the header at the start of `bytes`.
    pub fn decode(bytes: &[u8]) -> Result<SegmentHeader, HeadError> {
        let mut r = Reader { bytes, pos: 0 };
        if r.take(4)? != SEGMENT_MAGIC {
            return Err(HeadError {
                offset: 0,
                what: "not a segment object (no SVSG magic)".into(),
            });
        }
        let format = r.u8()?;
        if format != OBJECT_FORMAT {
            return Err(HeadError {
                offset: 4,
                what: format!("segment format {format}, this Svelto reads {OBJECT_FORMAT}"),
            });
        }
        let revision = r.u64()?;
        let commit = CommitId(r.take(16)?.try_into().expect("16 bytes"));
        let mut lengths = [0u64; 5];
        for length in &mut lengths {
            *length = r.u64()?;
        }
        let covered = r.pos;
        let stored = u32::from_le_bytes(r.take(4)?.try_into().expect("4 bytes"));
        let computed = crc32fast::hash(&bytes[..covered]);
        if stored != computed {
            return Err(HeadError {
                offset: covered,
                what: format!("header CRC-32 {stored:08x} stored, {computed:08x} computed"),
            });
        }
        let header = SegmentHeader {
            revision,
            commit,
            lengths,
        };
        if lengths
            .iter()
            .try_fold(0u64, |a, &l| a.checked_add(l))
            .is_none()
        {
            return Err(HeadError {
                offset: 29,
                what: "part lengths overflow".into(),
            });
        }
        Ok(header)
    }

    /// The parts' total length.
    pub fn body_len(&self) -> u64 {
        self.lengths.iter().sum()
    }

    /// Where part `part`'s bytes `range` are in the object, or why they are not there.
    pub fn object_range(&self, part: usize, range: Range<u64>) -> Result<Range<u64>, String> {
        let Some(&length) = self.lengths.get(part) else {
            return Err(format!("no part {part} (0 to 4)"));
        };
        if range.start > range.end || range.end > length {
            return Err(format!(
                "bytes {}..{} of part {} ({length} bytes)",
                range.start, range.end, PARTS[part]
            ));
        }
        let start = SEGMENT_HEADER_LEN + self.lengths[..part].iter().sum::<u64>();
        Ok(start + range.start..start + range.end)
    }
}

/// An index object: the segments of revisions `first..=upto` and the index before it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Index {
    /// The revisions it covers.
    pub covers: IndexRef,
    /// The index object before it (None: it starts at r0).
    pub previous: Option<IndexRef>,
    /// One commit id per revision, `first` first.
    pub commits: Vec<CommitId>,
}

impl Index {
    /// The index of `segments` (contiguous, oldest first), after `previous`.
    pub fn of(segments: &[SegmentRef], previous: Option<IndexRef>) -> Index {
        let first = segments
            .first()
            .expect("an index covers a segment")
            .revision;
        Index {
            covers: IndexRef {
                first,
                upto: first + segments.len() as u64 - 1,
            },
            previous,
            commits: segments.iter().map(|s| s.commit).collect(),
        }
    }

    /// The segment of `revision`, if this index covers it.
    pub fn get(&self, revision: u64) -> Option<SegmentRef> {
        let i = usize::try_from(revision.checked_sub(self.covers.first)?).ok()?;
        self.commits
            .get(i)
            .map(|&commit| SegmentRef { revision, commit })
    }

    /// Its bytes (docs/formats/cluster.md).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(64 + 16 * self.commits.len());
        out.extend_from_slice(INDEX_MAGIC);
        out.push(OBJECT_FORMAT);
        out.extend_from_slice(&self.covers.first.to_le_bytes());
        out.extend_from_slice(&self.covers.upto.to_le_bytes());
        match self.previous {
            None => out.push(0),
            Some(p) => {
                out.push(1);
                out.extend_from_slice(&p.first.to_le_bytes());
                out.extend_from_slice(&p.upto.to_le_bytes());
            }
        }
        for commit in &self.commits {
            out.extend_from_slice(&commit.0);
        }
        let crc = crc32fast::hash(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        out
    }

    /// Decodes and checks an index object that should cover `expected`.
    pub fn decode(bytes: &[u8], expected: IndexRef) -> Result<Index, HeadError> {
        if bytes.len() < 4 {
            return Err(HeadError {
                offset: 0,
                what: format!("only {} bytes", bytes.len()),
            });
        }
        let end = bytes.len() - 4;
        let mut r = Reader {
            bytes: &bytes[..end],
            pos: 0,
        };
        if r.take(4)? != INDEX_MAGIC || r.u8()? != OBJECT_FORMAT {
            return Err(HeadError {
                offset: 0,
                what: "not an index object of format 1 (SVIX, 1)".into(),
            });
        }
        let stored = u32::from_le_bytes(bytes[end..].try_into().expect("4 bytes"));
        let computed = crc32fast::hash(&bytes[..end]);
        if stored != computed {
            return Err(HeadError {
                offset: end,
                what: format!("CRC-32 {stored:08x} stored, {computed:08x} computed"),
            });
        }
        let covers = IndexRef {
            first: r.u64()?,
            upto: r.u64()?,
        };
        if covers != expected {
            return Err(HeadError {
                offset: 5,
                what: format!(
                    "covers r{}..=r{}, expected r{}..=r{}",
                    covers.first, covers.upto, expected.first, expected.upto
                ),
            });
        }
        let previous = match r.u8()? {
            0 => None,
            1 => Some(IndexRef {
                first: r.u64()?,
                upto: r.u64()?,
            }),
            other => {
                return Err(HeadError {
                    offset: 21,
                    what: format!("previous flag {other}, not 0 or 1"),
                })
            }
        };
        let count = covers.upto - covers.first + 1;
        let left = (end - r.pos) as u64;
        if left != count.saturating_mul(16) {
            return Err(HeadError {
                offset: r.pos,
                what: format!("{left} bytes of commit ids for {count} revisions"),
            });
        }
        let mut commits = Vec::with_capacity(count as usize);
        for _ in 0..count {
            commits.push(CommitId(r.take(16)?.try_into().expect("16 bytes")));
        }
        Ok(Index {
            covers,
            previous,
            commits,
        })
    }
}

/// The slowest transfer to or from the object store that is not taken for a dead store:
/// a transfer of N bytes may take `request-timeout` plus N at this rate (a 390 MB segment,
/// about 95 s more). One timeout for every size refused any object over what 2 s carries.
pub(crate) const SLOWEST_TRANSFER_BYTES_PER_SEC: u64 = 4 << 20;

/// The smallest chunk used whatever the configuration says (a header must fit in one).
const MIN_CHUNK: u64 = 4096;

/// The key of the record of segment `key`'s multipart upload while it runs: its upload id.
pub(crate) fn upload_marker(key: &str) -> String {
    format!("{key}.upload")
}

/// The object store of one repository: its keys under a prefix, with timeouts.
#[derive(Clone)]
pub(crate) struct Objects {
    pub(crate) store: Arc<dyn ObjectStore>,
    pub(crate) prefix: String,
    /// The time a request that moves no bytes may take (`request-timeout`).
    pub(crate) timeout: Duration,
    /// The same store's multipart uploads.
    pub(crate) multipart: Arc<dyn MultipartStore>,
    /// The largest segment object written by one PUT or read by one GET (`chunk-bytes`).
    pub(crate) chunk: u64,
}

impl Objects {
    /// The time a request that moves `bytes` may take.
    pub(crate) fn timeout_for(&self, bytes: u64) -> Duration {
        self.timeout
            + Duration::from_millis(bytes.saturating_mul(1000) / SLOWEST_TRANSFER_BYTES_PER_SEC)
    }

    pub(crate) fn segment_key(&self, segment: SegmentRef) -> String {
        format!(
            "{}/seg/{:012}-{}",
            self.prefix,
            segment.revision,
            segment.commit.hex()
        )
    }

    pub(crate) fn index_key(&self, index: IndexRef) -> String {
        format!("{}/idx/{:012}.{:012}", self.prefix, index.first, index.upto)
    }

    /// Writes `bytes` at `key` unless something is there. `Ok(false)` when an object of
    /// the same length already is (an earlier attempt of the same put whose answer was
    /// lost: keys carry 128 random bits, or are deterministic with deterministic content);
    /// an error otherwise.
    pub(crate) async fn put_once(
        &self,
        what: &'static str,
        key: &str,
        bytes: Vec<u8>,
    ) -> Result<bool, ClusterError> {
        let path = ObjectPath::from(key);
        let len = bytes.len() as u64;
        let within = self.timeout_for(len);
        let put = self.store.put_opts(
            &path,
            PutPayload::from(bytes),
            ObjectPutOptions::from(PutMode::Create),
        );
        match tokio::time::timeout(within, put).await {
            Ok(Ok(_)) => Ok(true),
            Ok(Err(object_store::Error::AlreadyExists { .. })) => {
                let meta = self
                    .timed(what, key, self.timeout, self.store.head(&path))
                    .await?;
                if meta.size == len {
                    Ok(false)
                } else {
                    Err(ClusterError::Corrupt {
                        what,
                        key: key.to_owned(),
                        detail: format!(
                            "an object of {} bytes is there already, {len} were to be written",
                            meta.size
                        ),
                    })
                }
            }
            Ok(Err(source)) => Err(ClusterError::ObjectStore {
                what,
                key: key.to_owned(),
                source: Box::new(source),
            }),
            Err(_) => Err(ClusterError::ObjectStoreTimeout {
                what,
                key: key.to_owned(),
                after: within,
            }),
        }
    }

    /// Writes index object `key`, whose name and bytes the published history fixes: every
    /// writer that flushes the same revisions from the same published head writes the same
    /// bytes. An object of that name with other bytes is therefore named by no published head:
    /// it is an orphan of commits that a restored backup lost (docs/cluster.md, "Restore"),
    /// made when the old cluster flushed the same revisions. It is replaced, before the head
    /// that names the index is published. `Ok(true)` when an orphan was replaced.
    pub(crate) async fn put_index(&self, key: &str, bytes: Vec<u8>) -> Result<bool, ClusterError> {
        let what = "put index object";
        let path = ObjectPath::from(key);
        let within = self.timeout_for(bytes.len() as u64);
        let create = self.store.put_opts(
            &path,
            PutPayload::from(bytes.clone()),
            ObjectPutOptions::from(PutMode::Create),
        );
        match tokio::time::timeout(within, create).await {
            Ok(Ok(_)) => return Ok(false),
            Ok(Err(object_store::Error::AlreadyExists { .. })) => {}
            Ok(Err(source)) => {
                return Err(ClusterError::ObjectStore {
                    what,
                    key: key.to_owned(),
                    source: Box::new(source),
                })
            }
            Err(_) => {
                return Err(ClusterError::ObjectStoreTimeout {
                    what,
                    key: key.to_owned(),
                    after: within,
                })
            }
        }
        if self.get("index object", key).await? == bytes {
            return Ok(false);
        }
        let replace = self.store.put_opts(
            &path,
            PutPayload::from(bytes),
            ObjectPutOptions::from(PutMode::Overwrite),
        );
        self.timed(what, key, within, replace).await?;
        Ok(true)
    }

    /// Writes segment `key` (revision `revision`, commit `commit`) from `source`: an object
    /// of at most `chunk-bytes` by [`Self::put_once`]; a larger one by a multipart upload
    /// of `chunk-bytes` parts read from `source` one at a time (never whole in memory),
    /// recorded under `KEY.upload` (the upload id) while it runs, so that the collector can
    /// abort the upload of a writer killed meanwhile (docs/cluster.md, "Large revisions").
    /// Each part has the timeout its size allows.
    pub(crate) async fn put_segment(
        &self,
        key: &str,
        revision: u64,
        commit: CommitId,
        source: &dyn PartSource,
    ) -> Result<bool, ClusterError> {
        let what = "put segment";
        let chunk = self.chunk.max(MIN_CHUNK);
        let mut stream = SegmentStream::new(source, revision, commit);
        if stream.total() <= chunk {
            let bytes = stream.next_chunk(stream.total())?;
            return self.put_once(what, key, bytes).await;
        }
        let path = ObjectPath::from(key);
        let marker = upload_marker(key);
        let id = self
            .timed(
                "start multipart upload",
                key,
                self.timeout,
                self.multipart.create_multipart(&path),
            )
            .await?;
        let marker_path = ObjectPath::from(marker.as_str());
        let record = self
            .store
            .put(&marker_path, PutPayload::from(id.clone().into_bytes()));
        if let Err(e) = self
            .timed("record multipart upload", &marker, self.timeout, record)
            .await
        {
            let _ = self.abort_upload(key, &id).await;
            return Err(e);
        }
        let mut parts = Vec::new();
        let uploaded = async {
            loop {
                let bytes = stream.next_chunk(chunk)?;
                if bytes.is_empty() {
                    break;
                }
                let within = self.timeout_for(bytes.len() as u64);
                let put = self
                    .multipart
                    .put_part(&path, &id, parts.len(), PutPayload::from(bytes));
                parts.push(self.timed("put segment part", key, within, put).await?);
            }
            let complete = self.multipart.complete_multipart(&path, &id, parts);
            self.timed(
                "complete multipart upload",
                key,
                self.timeout_for(chunk),
                complete,
            )
            .await
        }
        .await;
        match uploaded {
            Ok(_) => {
                // Left behind if this fails: the collector deletes it.
                let _ = self.delete_quietly(&marker).await;
                Ok(true)
            }
            Err(e) => {
                if self.abort_upload(key, &id).await.is_ok() {
                    let _ = self.delete_quietly(&marker).await;
                }
                Err(e)
            }
        }
    }

    /// Aborts multipart upload `id` of object `key`.
    pub(crate) async fn abort_upload(&self, key: &str, id: &str) -> Result<(), ClusterError> {
        let path = ObjectPath::from(key);
        let id = id.to_owned();
        let abort = self.multipart.abort_multipart(&path, &id);
        self.timed("abort multipart upload", key, self.timeout, abort)
            .await
    }

    async fn delete_quietly(&self, key: &str) -> Result<(), ClusterError> {
        let path = ObjectPath::from(key);
        self.timed("delete object", key, self.timeout, self.store.delete(&path))
            .await
    }

    /// Reads segment `segment` and hands its parts to `sink` in order: an object of at
    /// most `chunk-bytes` with one GET (its first `chunk-bytes` are asked for), a larger
    /// one with ranged GETs of `chunk-bytes` each, never whole in memory. Its header is
    /// checked first and its parts' CRC once every byte was handed over: nothing the sink
    /// got may be used unless this returns `Ok`. Returns its header.
    pub(crate) async fn read_segment_into(
        &self,
        segment: SegmentRef,
        sink: &mut PartSink<'_>,
    ) -> Result<SegmentHeader, ClusterError> {
        let what = "read segment";
        let key = self.segment_key(segment);
        let path = ObjectPath::from(key.as_str());
        let chunk = self.chunk.max(MIN_CHUNK);
        let options = GetOptions {
            range: Some(GetRange::Bounded(0..chunk)),
            ..GetOptions::default()
        };
        let first = self
            .timed(
                what,
                &key,
                self.timeout,
                self.store.get_opts(&path, options),
            )
            .await?;
        let size = first.meta.size;
        let got = first.range.clone();
        let within = self.timeout_for(got.end - got.start);
        let bytes = self.timed(what, &key, within, first.bytes()).await?;
        let corrupt = |detail: String| ClusterError::Corrupt {
            what: "segment",
            key: key.clone(),
            detail,
        };
        if got.start != 0 || bytes.len() as u64 != got.end {
            return Err(corrupt(format!(
                "asked for its bytes 0..{chunk}, got {} bytes as {}..{}",
                bytes.len(),
                got.start,
                got.end
            )));
        }
        let header = SegmentHeader::decode(&bytes).map_err(|e| corrupt(e.to_string()))?;
        if header.revision != segment.revision || header.commit != segment.commit {
            return Err(corrupt(format!(
                "its header names r{} commit {}",
                header.revision, header.commit
            )));
        }
        let mut intake = SegmentIntake {
            header,
            key: &key,
            sink,
            at: 0,
            crc: crc32fast::Hasher::new(),
            trailer: Vec::with_capacity(4),
        };
        if size != intake.total() {
            return Err(corrupt(format!(
                "object of {size} bytes, its header says {}",
                intake.total()
            )));
        }
        intake.take(&bytes)?;
        drop(bytes);
        let mut at = got.end;
        while at < size {
            let end = size.min(at.saturating_add(chunk));
            // The client's buffer itself (`get_range` copies it into a Vec).
            let within = self.timeout_for(end - at);
            let bytes = self
                .timed(what, &key, within, self.store.get_range(&path, at..end))
                .await?;
            if bytes.len() as u64 != end - at {
                return Err(intake.corrupt(format!(
                    "asked for its bytes {at}..{end}, got {}",
                    bytes.len()
                )));
            }
            intake.take(&bytes)?;
            at = end;
        }
        intake.finish()?;
        Ok(header)
    }

    pub(crate) async fn timed<T>(
        &self,
        what: &'static str,
        key: &str,
        within: Duration,
        op: impl std::future::Future<Output = object_store::Result<T>>,
    ) -> Result<T, ClusterError> {
        match tokio::time::timeout(within, op).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(source)) => Err(ClusterError::ObjectStore {
                what,
                key: key.to_owned(),
                source: Box::new(source),
            }),
            Err(_) => Err(ClusterError::ObjectStoreTimeout {
                what,
                key: key.to_owned(),
                after: within,
            }),
        }
    }

    pub(crate) async fn get_range(
        &self,
        what: &'static str,
        key: &str,
        range: Range<u64>,
    ) -> Result<Vec<u8>, ClusterError> {
        if range.is_empty() {
            return Ok(Vec::new());
        }
        let path = ObjectPath::from(key);
        let within = self.timeout_for(range.end - range.start);
        let bytes = self
            .timed(what, key, within, self.store.get_range(&path, range))
            .await?;
        Ok(bytes.to_vec())
    }

    /// A whole object: its answer within `request-timeout`, its body within the time its
    /// size allows.
    pub(crate) async fn get(&self, what: &'static str, key: &str) -> Result<Vec<u8>, ClusterError> {
        let path = ObjectPath::from(key);
        let found = self
            .timed(what, key, self.timeout, self.store.get(&path))
            .await?;
        let within = self.timeout_for(found.meta.size);
        Ok(self.timed(what, key, within, found.bytes()).await?.to_vec())
    }

    /// The header of `segment` (one ranged GET).
    pub(crate) async fn segment_header(
        &self,
        segment: SegmentRef,
    ) -> Result<SegmentHeader, ClusterError> {
        let key = self.segment_key(segment);
        let bytes = self
            .get_range("segment header", &key, 0..SEGMENT_HEADER_LEN)
            .await?;
        let header = SegmentHeader::decode(&bytes).map_err(|e| ClusterError::Corrupt {
            what: "segment",
            key: key.clone(),
            detail: e.to_string(),
        })?;
        if header.revision != segment.revision || header.commit != segment.commit {
            return Err(ClusterError::Corrupt {
                what: "segment",
                key,
                detail: format!(
                    "its header names r{} commit {}",
                    header.revision, header.commit
                ),
            });
        }
        Ok(header)
    }

    pub(crate) async fn index(&self, index: IndexRef) -> Result<Index, ClusterError> {
        let key = self.index_key(index);
        let bytes = self.get("index object", &key).await?;
        Index::decode(&bytes, index).map_err(|e| ClusterError::Corrupt {
            what: "index object",
            key,
            detail: e.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn memory_objects(prefix: &str, timeout: Duration, chunk: u64) -> Objects {
        let store = Arc::new(object_store::memory::InMemory::new());
        Objects {
            store: store.clone(),
            prefix: prefix.to_owned(),
            timeout,
            multipart: store,
            chunk,
        }
    }

    #[test]
    fn a_transfer_may_take_its_size_at_the_slowest_rate_beyond_the_request_timeout() {
        let objects = memory_objects("p", Duration::from_secs(2), 1 << 20);
        assert_eq!(objects.timeout_for(0), Duration::from_secs(2));
        assert_eq!(objects.timeout_for(4 << 20), Duration::from_secs(3));
        // A 390 MB segment (the medium history's import) gets about 95 s more.
        let big = objects.timeout_for(390_000_000);
        assert!(
            big > Duration::from_secs(90) && big < Duration::from_secs(100),
            "{big:?}"
        );
        // Absurd sizes saturate rather than overflow.
        assert!(objects.timeout_for(u64::MAX) > Duration::from_secs(1 << 30));
    }

    fn seg() -> Segment {
        Segment {
            parts: [
                b"data bytes".to_vec(),
                vec![],
                b"meta".to_vec(),
                vec![7; 100],
                b"p".to_vec(),
            ],
        }
    }

    #[test]
    fn a_segment_round_trips_and_its_parts_are_where_the_header_says() {
        let commit = CommitId([9; 16]);
        let bytes = seg().encode(12, commit);
        assert_eq!(&bytes[..5], b"SVSG\x01");
        assert_eq!(
            bytes.len() as u64,
            SEGMENT_HEADER_LEN + 10 + 4 + 100 + 1 + 4
        );
        let header = SegmentHeader::decode(&bytes).expect("header");
        assert_eq!(header.lengths, [10, 0, 4, 100, 1]);
        let meta = header.object_range(2, 1..3).expect("in range");
        assert_eq!(&bytes[meta.start as usize..meta.end as usize], b"et");
        assert!(header.object_range(2, 3..5).is_err());
        assert!(header.object_range(5, 0..0).is_err());
        let wanted = SegmentRef {
            revision: 12,
            commit,
        };
        assert_eq!(Segment::decode(&bytes, wanted), Ok(seg()));
        let other = SegmentRef {
            revision: 13,
            commit,
        };
        assert!(Segment::decode(&bytes, other).is_err());
        let mut flipped = bytes.clone();
        flipped[80] ^= 1;
        let e = Segment::decode(&flipped, wanted).expect_err("a flipped byte");
        assert!(e.what.contains("parts' CRC-32"), "{e}");
        let e = Segment::decode(&bytes[..bytes.len() - 1], wanted).expect_err("truncated");
        assert!(e.what.contains("its header says"), "{e}");
        let e = SegmentHeader::decode(&bytes[..40]).expect_err("short header");
        assert!(e.what.starts_with("truncated"), "{e}");
    }

    #[test]
    fn an_index_round_trips_and_refuses_what_it_does_not_cover() {
        let segments: Vec<SegmentRef> = (64..128)
            .map(|r| SegmentRef {
                revision: r,
                commit: CommitId([r as u8; 16]),
            })
            .collect();
        let before = IndexRef { first: 0, upto: 63 };
        let index = Index::of(&segments, Some(before));
        let bytes = index.encode();
        assert_eq!(bytes.len(), 5 + 16 + 17 + 64 * 16 + 4);
        let covers = IndexRef {
            first: 64,
            upto: 127,
        };
        assert_eq!(Index::decode(&bytes, covers), Ok(index.clone()));
        assert_eq!(index.get(100), Some(segments[36]));
        assert_eq!(index.get(63), None);
        assert_eq!(index.get(128), None);
        assert!(Index::decode(&bytes, before).is_err());
        let mut cut = bytes[..bytes.len() - 20].to_vec();
        cut.extend_from_slice(&crc32fast::hash(&cut).to_le_bytes());
        let e = Index::decode(&cut, covers).expect_err("short");
        assert!(e.what.contains("commit ids for 64 revisions"), "{e}");
    }

    #[test]
    fn an_index_object_replaces_an_orphan_of_other_bytes_and_keeps_its_own() {
        let objects = memory_objects("p/uuid", Duration::from_secs(5), 1 << 20);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("runtime");
        let segments = |seed: u8| -> Vec<SegmentRef> {
            (0..64)
                .map(|r| SegmentRef {
                    revision: r,
                    commit: CommitId([seed; 16]),
                })
                .collect()
        };
        let ours = Index::of(&segments(1), None);
        let orphan = Index::of(&segments(2), None);
        let key = objects.index_key(ours.covers);
        runtime.block_on(async {
            assert!(!objects.put_index(&key, orphan.encode()).await.expect("put"));
            // Same name, other bytes, same length: replaced.
            assert!(objects.put_index(&key, ours.encode()).await.expect("put"));
            assert_eq!(objects.index(ours.covers).await.expect("read"), ours);
            // The same bytes again (a deposed writer's flush): left as they are.
            assert!(!objects.put_index(&key, ours.encode()).await.expect("put"));
            assert_eq!(objects.index(ours.covers).await.expect("read"), ours);
        });
    }

    fn big_segment() -> Segment {
        let mut parts: [Vec<u8>; 5] = Default::default();
        for (i, part) in parts.iter_mut().enumerate() {
            // Lengths that cross the 64 KiB chunks anywhere: 0, and odd sizes.
            let len = [200_003, 0, 70_000, 1, 131_072][i];
            *part = (0..len).map(|n| (n * 7 + i * 13) as u8).collect();
        }
        Segment { parts }
    }

    fn read_back(
        runtime: &tokio::runtime::Runtime,
        objects: &Objects,
        at: SegmentRef,
    ) -> Result<Segment, ClusterError> {
        let mut got = Segment::default();
        let mut sink = |part: usize, offset: u64, bytes: &[u8]| {
            assert_eq!(got.parts[part].len() as u64, offset, "in order");
            got.parts[part].extend_from_slice(bytes);
            Ok(())
        };
        runtime.block_on(objects.read_segment_into(at, &mut sink))?;
        Ok(got)
    }

    #[test]
    fn a_segment_larger_than_a_chunk_is_uploaded_in_parts_and_read_back_by_ranges() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("runtime");
        let objects = memory_objects("p/uuid", Duration::from_secs(5), 64 << 10);
        let segment = big_segment();
        let at = SegmentRef {
            revision: 7,
            commit: CommitId([3; 16]),
        };
        let key = objects.segment_key(at);
        assert!(runtime
            .block_on(objects.put_segment(&key, 7, at.commit, &segment))
            .expect("put"));
        // The same bytes as one PUT of the encoded segment; no upload record left.
        let stored = runtime.block_on(objects.get("t", &key)).expect("get");
        assert_eq!(stored, segment.encode(7, at.commit));
        let marker = upload_marker(&key);
        assert!(runtime.block_on(objects.get("t", &marker)).is_err());
        assert_eq!(read_back(&runtime, &objects, at).expect("read"), segment);
        // A small one: one PUT, one GET.
        let small = seg();
        let at_small = SegmentRef {
            revision: 8,
            commit: CommitId([4; 16]),
        };
        let small_key = objects.segment_key(at_small);
        runtime
            .block_on(objects.put_segment(&small_key, 8, at_small.commit, &small))
            .expect("put");
        assert_eq!(
            read_back(&runtime, &objects, at_small).expect("read"),
            small
        );
        // A flipped byte in the third chunk: the CRC check at the end names the key.
        let mut bad = stored.clone();
        bad[150_000] ^= 1;
        runtime
            .block_on(
                objects
                    .store
                    .put(&ObjectPath::from(key.as_str()), bad.into()),
            )
            .expect("overwrite");
        let e = read_back(&runtime, &objects, at).expect_err("corrupt");
        let text = e.to_string();
        assert!(
            text.contains("parts' CRC-32") && text.contains(&key),
            "{text}"
        );
        // Cut short: refused before any part, naming the sizes.
        runtime
            .block_on(objects.store.put(
                &ObjectPath::from(key.as_str()),
                stored[..stored.len() - 10].to_vec().into(),
            ))
            .expect("overwrite");
        let e = read_back(&runtime, &objects, at).expect_err("short");
        assert!(e.to_string().contains("its header says"), "{e}");
        // Another revision's object under this key: refused.
        let elsewhere = SegmentRef {
            revision: 9,
            commit: at.commit,
        };
        runtime
            .block_on(objects.store.put(
                &ObjectPath::from(objects.segment_key(elsewhere).as_str()),
                stored.into(),
            ))
            .expect("put");
        let e = read_back(&runtime, &objects, elsewhere).expect_err("misplaced");
        assert!(e.to_string().contains("its header names r7"), "{e}");
    }

    struct Failing;
    impl PartSource for Failing {
        fn lengths(&self) -> [u64; 5] {
            [300_000, 0, 0, 0, 0]
        }
        fn read_part(&self, _: usize, offset: u64, _: &mut [u8]) -> std::io::Result<()> {
            if offset > 100_000 {
                Err(std::io::Error::other("disk gone"))
            } else {
                Ok(())
            }
        }
        fn describe(&self, _: usize) -> String {
            "db/data".into()
        }
    }

    #[test]
    fn a_failed_read_of_the_local_files_aborts_the_upload_and_names_the_file() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("runtime");
        let objects = memory_objects("p/uuid", Duration::from_secs(5), 64 << 10);
        let at = SegmentRef {
            revision: 1,
            commit: CommitId([5; 16]),
        };
        let key = objects.segment_key(at);
        let e = runtime
            .block_on(objects.put_segment(&key, 1, at.commit, &Failing))
            .expect_err("the read fails");
        assert!(
            e.to_string().contains("db/data") && e.to_string().contains("disk gone"),
            "{e}"
        );
        assert!(runtime.block_on(objects.get("t", &key)).is_err());
        assert!(runtime
            .block_on(objects.get("t", &upload_marker(&key)))
            .is_err());
    }
}
