//! Computing one delta window (docs/formats/svndiff.md, "How Svelto computes deltas").
//!
//! xdelta-style: trim the common prefix and suffix, index the source view by the hash of every
//! [`BLOCK`]-aligned block, roll the same hash over the rest of the target, and at each verified
//! hit extend the match backwards and forwards as far as the bytes agree. Target bytes already
//! passed over without a match are indexed too, so repeats inside the target become target
//! copies.

use crate::{Instruction, Window};

/// Length of the hashed blocks: matches shorter than this may be missed, matches of at least
/// `2 * BLOCK - 1` bytes never are (unless hash slots collide).
pub(crate) const BLOCK: usize = 32;
const _: () = assert!(BLOCK.is_power_of_two());

/// A common prefix or suffix shorter than this is left to the block matcher, since a copy
/// instruction for it would cost about as much as the bytes.
const MIN_TRIM: usize = 4;

/// An edit whose changed middle (what prefix and suffix leave) is at most this long is
/// matched only against the source near it (see [`compute_window`]).
const LOCAL_EDIT: usize = 4096;

/// Random 32-bit values, one per byte value, for the gear hash.
static GEAR: [u32; 256] = gear_table();

const fn gear_table() -> [u32; 256] {
    let mut table = [0u32; 256];
    let mut state: u64 = 0x5356_4e64_6966_6621; // "SVNdiff!"
    let mut i = 0;
    while i < 256 {
        // splitmix64
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        table[i] = (z >> 32) as u32;
        i += 1;
    }
    table
}

/// The gear hash of the first [`BLOCK`] bytes of `bytes`: the sum of `GEAR[b] << (31 - i)`.
/// Because bytes shift out of a 32-bit word after 32 steps, [`roll`] moves it one byte on.
#[inline]
pub(crate) fn block_hash(bytes: &[u8]) -> u32 {
    bytes[..BLOCK].iter().enumerate().fold(0u32, |h, (i, &b)| {
        h.wrapping_add(GEAR[b as usize] << (BLOCK - 1 - i))
    })
}

/// The hash of the block one byte further on, given the byte that enters it.
#[inline]
pub(crate) fn roll(hash: u32, incoming: u8) -> u32 {
    (hash << 1).wrapping_add(GEAR[incoming as usize])
}

/// Spreads all 32 hash bits into the top bits (the gear hash's low bits see only recent bytes).
#[inline]
pub(crate) fn mix(hash: u32) -> u32 {
    hash.wrapping_mul(0x9e37_79b1)
}

/// Length of the common prefix of `a` and `b`, eight bytes at a time.
#[inline]
pub(crate) fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut done = 0;
    for (x, y) in a.chunks_exact(8).zip(b.chunks_exact(8)) {
        let diff = word(x) ^ word(y);
        if diff != 0 {
            return done + (diff.trailing_zeros() / 8) as usize;
        }
        done += 8;
    }
    done + a[done..]
        .iter()
        .zip(&b[done..])
        .take_while(|(x, y)| x == y)
        .count()
}

/// Length of the common suffix of `a` and `b`, eight bytes at a time.
#[inline]
pub(crate) fn common_suffix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let (a, b) = (&a[a.len() - n..], &b[b.len() - n..]);
    let mut done = 0;
    for (x, y) in a.rchunks_exact(8).zip(b.rchunks_exact(8)) {
        let diff = word(x) ^ word(y);
        if diff != 0 {
            return done + (diff.leading_zeros() / 8) as usize;
        }
        done += 8;
    }
    let (a, b) = (&a[..n - done], &b[..n - done]);
    done + a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take_while(|(x, y)| x == y)
        .count()
}

#[inline]
fn word(bytes: &[u8]) -> u64 {
    bytes
        .first_chunk::<8>()
        .map_or(0, |w| u64::from_le_bytes(*w))
}

/// A direct-mapped table from block hash to block position. Each slot keeps the full hash
/// beside the position (plus one; 0 is empty), so that a slot shared by another hash costs a
/// comparison of two integers rather than of two blocks.
struct BlockTable {
    slots: Vec<(u32, u32)>,
    shift: u32,
}

impl BlockTable {
    fn with_blocks(blocks: usize) -> Self {
        let size = (blocks.saturating_mul(4))
            .next_power_of_two()
            .clamp(1 << 8, 1 << 26);
        BlockTable {
            slots: vec![(0, 0); size],
            shift: 32 - size.trailing_zeros(),
        }
    }

    #[inline]
    fn slot(&self, hash: u32) -> usize {
        (mix(hash) >> self.shift) as usize
    }

    #[inline]
    fn get(&self, hash: u32) -> Option<usize> {
        match self.slots[self.slot(hash)] {
            (h, p) if h == hash && p != 0 => Some(p as usize - 1),
            _ => None,
        }
    }

    /// Records `position` for `hash`; `keep_first` leaves an occupied slot alone.
    #[inline]
    fn insert(&mut self, hash: u32, position: usize, keep_first: bool) {
        let Ok(value) = u32::try_from(position + 1) else {
            return;
        };
        let slot = self.slot(hash);
        if !keep_first || self.slots[slot].1 == 0 {
            self.slots[slot] = (hash, value);
        }
    }
}

/// Collects instructions and new data, merging neighbours where the encoding allows.
struct Emitter<'t> {
    target: &'t [u8],
    instructions: Vec<Instruction>,
    new_data: Vec<u8>,
}

impl<'t> Emitter<'t> {
    fn new_data(&mut self, from: usize, to: usize) {
        if to <= from {
            return;
        }
        self.new_data.extend_from_slice(&self.target[from..to]);
        let add = (to - from) as u64;
        if let Some(Instruction::NewData { len }) = self.instructions.last_mut() {
            *len += add;
        } else {
            self.instructions.push(Instruction::NewData { len: add });
        }
    }

    fn copy_source(&mut self, offset: usize, len: usize) {
        let (offset, len) = (offset as u64, len as u64);
        if let Some(Instruction::CopySource { offset: o, len: l }) = self.instructions.last_mut() {
            if *o + *l == offset {
                *l += len;
                return;
            }
        }
        self.instructions
            .push(Instruction::CopySource { offset, len });
    }

    fn copy_target(&mut self, offset: usize, len: usize) {
        self.instructions.push(Instruction::CopyTarget {
            offset: offset as u64,
            len: len as u64,
        });
    }
}

/// A verified match: `len` target bytes at `at` equal the bytes at `from` in the source view
/// (or, for target copies, earlier in the target).
#[derive(Clone, Copy)]
struct Match {
    from: usize,
    at: usize,
    len: usize,
    in_target: bool,
}

/// Computes a delta window that rebuilds `target` from `source_view`, which starts at
/// `source_offset` in the whole source.
///
/// Finds copies from anywhere in the source view (so insertions, deletions and moved blocks
/// inside the view cost only their new bytes and a few instruction bytes) and repeats inside
/// the target. Meant for targets of up to [`crate::WINDOW_SIZE`] bytes but works for any
/// length; note that stock Subversion clients refuse windows larger than that.
pub fn compute_window(source_view: &[u8], source_offset: u64, target: &[u8]) -> Window {
    let mut emit = Emitter {
        target,
        instructions: Vec::new(),
        new_data: Vec::new(),
    };
    let source = source_view;
    let mut prefix = common_prefix(source, target);
    if prefix < MIN_TRIM {
        prefix = 0;
    }
    let mut suffix = common_suffix(&source[prefix..], &target[prefix..]);
    if suffix < MIN_TRIM {
        suffix = 0;
    }
    if prefix > 0 {
        emit.copy_source(0, prefix);
    }
    let (lo, hi) = (prefix, target.len() - suffix);
    let src_hi = source.len() - suffix;
    if hi - lo <= LOCAL_EDIT {
        local_edit(source, (lo, src_hi), target, (lo, hi), &mut emit);
    } else if let Some((at, from, len)) = shifted_run(source, src_hi, target, lo, hi) {
        // Edits near both ends of one long run: each matched near its own place.
        local_edit(source, (lo, from), target, (lo, at), &mut emit);
        emit.copy_source(from, len);
        local_edit(
            source,
            (from + len, src_hi),
            target,
            (at + len, hi),
            &mut emit,
        );
    } else {
        segment(source, (0, source.len()), target, (lo, hi), &mut emit);
    }
    if suffix > 0 {
        emit.copy_source(source.len() - suffix, suffix);
    }
    Window {
        source_offset,
        source_len: source.len() as u64,
        target_len: target.len() as u64,
        instructions: emit.instructions,
        new_data: emit.new_data,
    }
}

/// Emits instructions for a small edit, `target[t.0..t.1]` (at most [`LOCAL_EDIT`] bytes)
/// replacing `source[s.0..s.1]`: matched against the source around the place it replaces,
/// not the whole view. Indexing every block of a 100 KB view for each of thousands of
/// one-line changes was most of the cost of a blame. What this can miss is bounded by the
/// edit's own length.
fn local_edit(
    source: &[u8],
    s: (usize, usize),
    target: &[u8],
    t: (usize, usize),
    emit: &mut Emitter<'_>,
) {
    let reach = (4 * (t.1 - t.0)).max(1024);
    let index = (
        s.0.saturating_sub(reach),
        s.1.saturating_add(reach).min(source.len()),
    );
    segment(source, index, target, t, emit);
}

/// Emits instructions for `target[t.0..t.1]` from copies of `source[index.0..index.1]` (and
/// of the target), or as new data when it is too short to match.
fn segment(
    source: &[u8],
    index: (usize, usize),
    target: &[u8],
    t: (usize, usize),
    emit: &mut Emitter<'_>,
) {
    let (lo, hi) = t;
    if hi - lo >= BLOCK && (source.len() >= BLOCK || hi - lo >= 2 * BLOCK) {
        match_blocks(source, index, target, lo, hi, emit);
    } else {
        emit.new_data(lo, hi);
    }
}

/// For a changed middle longer than [`LOCAL_EDIT`] (`target[lo..hi]` against
/// `source[lo..src_hi]`), one long run of source bytes that it keeps, moved by an edit of at
/// most `LOCAL_EDIT` bytes at its front and followed by at most that many: entries removed
/// from the top of a change log and others added at its bottom, or added at its top and
/// removed from its bottom. Returns where the run is in the target, where in the source and
/// its length. Finding it costs a search of a few KB and a comparison, where indexing every
/// block of the view cost most of a blame's versions stored as skip-deltas.
fn shifted_run(
    source: &[u8],
    src_hi: usize,
    target: &[u8],
    lo: usize,
    hi: usize,
) -> Option<(usize, usize, usize)> {
    if hi - lo < 2 * BLOCK || src_hi < lo + 2 * BLOCK {
        return None;
    }
    let mut best: Option<(usize, usize, usize)> = None;
    // Bytes removed at the front: the target's first block further on in the source.
    let hay = &source[lo..src_hi.min(lo + LOCAL_EDIT + BLOCK)];
    if let Some(i) = find_block(hay, &target[lo..lo + BLOCK]) {
        let from = lo + i;
        let len = common_prefix(&source[from..src_hi], &target[lo..hi]);
        best = Some((lo, from, len));
    }
    // Bytes inserted at the front: the source's first block further on in the target.
    let hay = &target[lo..hi.min(lo + LOCAL_EDIT + BLOCK)];
    if let Some(i) = find_block(hay, &source[lo..lo + BLOCK]) {
        let at = lo + i;
        let len = common_prefix(&source[lo..src_hi], &target[at..hi]);
        if best.is_none_or(|b| len > b.2) {
            best = Some((at, lo, len));
        }
    }
    best.filter(|&(at, _, len)| hi - (at + len) <= LOCAL_EDIT)
}

/// The first place `needle` ([`BLOCK`] bytes) occurs in `hay`.
fn find_block(hay: &[u8], needle: &[u8]) -> Option<usize> {
    let last = hay.len().checked_sub(needle.len())?;
    let first = word(needle);
    (0..=last).find(|&i| word(&hay[i..]) == first && hay[i..i + needle.len()] == *needle)
}

/// Emits instructions for `target[lo..hi]`, which is at least [`BLOCK`] bytes long, from
/// copies of the blocks of `source[index.0..index.1]` (extended into the rest of the source
/// as far as the bytes agree) and of the target itself.
fn match_blocks(
    source: &[u8],
    index: (usize, usize),
    target: &[u8],
    lo: usize,
    hi: usize,
    emit: &mut Emitter<'_>,
) {
    let indexed = &source[index.0..index.1];
    let mut source_table = BlockTable::with_blocks(indexed.len() / BLOCK);
    if indexed.len() >= BLOCK {
        for start in (0..=indexed.len() - BLOCK).step_by(BLOCK) {
            source_table.insert(block_hash(&indexed[start..]), index.0 + start, true);
        }
    }
    let mut target_table = BlockTable::with_blocks((hi - lo) / BLOCK);

    let mut pending = lo; // first target byte not yet covered by an instruction
    let mut pos = lo;
    let mut hash = block_hash(&target[pos..]);
    loop {
        let mut best: Option<Match> = None;
        if let Some(from) = source_table.get(hash) {
            best = extend(source, from, target, pos, pending, hi, false);
        }
        if let Some(from) = target_table.get(hash) {
            if let Some(m) = extend(target, from, target, pos, pending, hi, true) {
                if best.is_none_or(|b| m.len > b.len) {
                    best = Some(m);
                }
            }
        }
        if let Some(m) = best {
            emit.new_data(pending, m.at);
            if m.in_target {
                emit.copy_target(m.from, m.len);
            } else {
                emit.copy_source(m.from, m.len);
            }
            pos = m.at + m.len;
            pending = pos;
            if pos + BLOCK > hi {
                break;
            }
            hash = block_hash(&target[pos..]);
            continue;
        }
        if (pos - lo) & (BLOCK - 1) == 0 {
            target_table.insert(hash, pos, false);
        }
        if pos + BLOCK >= hi {
            break;
        }
        hash = roll(hash, target[pos + BLOCK]);
        pos += 1;
    }
    emit.new_data(pending, hi);
}

/// Verifies a hash hit of the block at `at` against the block at `from` of `base` (the source
/// view, or the target itself) and extends it backwards down to `pending` and forwards up to
/// `hi`.
#[inline]
fn extend(
    base: &[u8],
    from: usize,
    target: &[u8],
    at: usize,
    pending: usize,
    hi: usize,
    in_target: bool,
) -> Option<Match> {
    if base[from..from + BLOCK] != target[at..at + BLOCK] {
        return None;
    }
    let forward = if in_target {
        // The copy may run into the bytes it produces; comparing the target with itself
        // shifted by `at - from` is exactly what a byte-by-byte copy yields.
        BLOCK + common_prefix(&target[from + BLOCK..hi], &target[at + BLOCK..hi])
    } else {
        BLOCK + common_prefix(&base[from + BLOCK..], &target[at + BLOCK..hi])
    };
    let back_limit = (at - pending).min(from);
    let back = common_suffix(&base[from - back_limit..from], &target[at - back_limit..at]);
    Some(Match {
        from: from - back,
        at: at - back,
        len: back + forward,
        in_target,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rebuild(source: &[u8], target: &[u8]) -> Window {
        let w = compute_window(source, 7, target);
        let mut out = Vec::new();
        w.apply(source, &mut out).expect("valid window");
        assert_eq!(out, target);
        assert_eq!(w.source_offset, 7);
        w
    }

    #[test]
    fn rolling_matches_fresh_hash() {
        let data: Vec<u8> = (0u32..500).map(|i| (i * 7 + i / 13) as u8).collect();
        let mut h = block_hash(&data);
        for pos in 1..data.len() - BLOCK {
            h = roll(h, data[pos + BLOCK - 1]);
            assert_eq!(h, block_hash(&data[pos..]), "at {pos}");
        }
    }

    #[test]
    fn prefix_and_suffix() {
        assert_eq!(common_prefix(b"abcdefghijklmnop", b"abcdefghijklmnoX"), 15);
        assert_eq!(common_prefix(b"abcdefghij", b"abcdefghij"), 10);
        assert_eq!(common_prefix(b"abc", b"abcdef"), 3);
        assert_eq!(common_prefix(b"", b"abc"), 0);
        assert_eq!(common_suffix(b"Xbcdefghijklmnop", b"abcdefghijklmnop"), 15);
        assert_eq!(common_suffix(b"0123456789", b"xx0123456789"), 10);
        assert_eq!(common_suffix(b"abc9", b"abd9"), 1);
        for i in 0..40 {
            let a = vec![1u8; 40];
            let mut b = a.clone();
            b[i] = 2;
            assert_eq!(common_prefix(&a, &b), i);
            assert_eq!(common_suffix(&a, &b), 39 - i);
        }
    }

    #[test]
    fn identical_is_one_copy() {
        let text = b"The quick brown fox jumps over the lazy dog.\n".repeat(100);
        let w = rebuild(&text, &text);
        assert_eq!(
            w.instructions,
            [Instruction::CopySource {
                offset: 0,
                len: text.len() as u64
            }]
        );
    }

    #[test]
    fn empty_cases() {
        assert!(rebuild(b"", b"").instructions.is_empty());
        assert!(rebuild(b"abc", b"").instructions.is_empty());
        assert_eq!(
            rebuild(b"", b"abc").instructions,
            [Instruction::NewData { len: 3 }]
        );
    }

    #[test]
    fn moved_blocks_are_copies() {
        let a: Vec<u8> = (0u32..3000)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 7) as u8)
            .collect();
        let (x, rest) = a.split_at(1000);
        let (y, z) = rest.split_at(1000);
        let target = [z, x, y].concat();
        let w = rebuild(&a, &target);
        assert!(w.new_data.is_empty(), "{:?}", w.instructions);
        assert_eq!(w.instructions.len(), 2);
    }

    #[test]
    fn runs_become_target_copies() {
        let target = [b"header".as_slice(), &[0u8; 5000], b"trailer"].concat();
        let w = rebuild(b"", &target);
        assert!(w.new_data.len() < 100, "{} new bytes", w.new_data.len());
        assert!(w
            .instructions
            .iter()
            .any(|i| matches!(i, Instruction::CopyTarget { .. })));
        let line = b"a line that repeats in the new text, more than once\n";
        let target = line.repeat(50);
        let w = rebuild(b"unrelated", &target);
        assert!(
            w.new_data.len() < 2 * line.len(),
            "{} new bytes",
            w.new_data.len()
        );
    }

    #[test]
    fn small_edits_of_large_texts_stay_small() {
        let mut text = Vec::new();
        for i in 0..4000 {
            text.extend_from_slice(format!("{i:05} an entry of a long change log\n").as_bytes());
        }
        // An entry added at the top, one changed in the middle, a line removed at the end,
        // and an edit whose new bytes repeat lines from far away in the source.
        let entry = b"99999 a new entry, written at the top of the log\n";
        let prepended = [entry.as_slice(), &text].concat();
        let w = rebuild(&text, &prepended);
        assert!(
            w.new_data.len() <= entry.len(),
            "{} new bytes",
            w.new_data.len()
        );
        let mut middle = text.clone();
        middle.splice(70_000..70_010, b"CHANGED".iter().copied());
        assert!(rebuild(&text, &middle).new_data.len() <= 7);
        let shorter = text[..text.len() - 40].to_vec();
        assert!(rebuild(&text, &shorter).instructions.len() <= 2);
        let far = [&text[..60_000], &text[1000..3000], &text[60_000..]].concat();
        let w = rebuild(&text, &far);
        assert!(w.new_data.len() <= 2000, "{} new bytes", w.new_data.len());
    }

    #[test]
    fn edits_at_both_ends_of_a_long_text() {
        let mut text = Vec::new();
        for i in 0..3000 {
            text.extend_from_slice(format!("{i:05} an entry of a long change log\n").as_bytes());
        }
        let entry = b"99999 a new entry, written at the end of the log\n";
        // Entries removed from the top and one added at the bottom; and the other way round.
        let rotated = [&text[3000..], entry.as_slice()].concat();
        let w = rebuild(&text, &rotated);
        assert!(w.new_data.len() <= entry.len(), "{} new", w.new_data.len());
        assert_eq!(
            shifted_run(&text, text.len(), &rotated, 0, rotated.len()).map(|r| r.1),
            Some(3000)
        );
        let back = [entry.as_slice(), &text[..text.len() - 3000]].concat();
        let w = rebuild(&text, &back);
        assert!(w.new_data.len() <= entry.len(), "{} new", w.new_data.len());
        // Copies near the edits are still found: the new bottom entry repeats the last ones.
        let again = [&text[3000..], &text[text.len() - 200..], entry.as_slice()].concat();
        let w = rebuild(&text, &again);
        assert!(w.new_data.len() <= entry.len(), "{} new", w.new_data.len());
        // An edit longer than a local one falls back to the whole view.
        let long = [&text[3000..60_000], &vec![b'x'; 5000], &text[..2000]].concat();
        assert!(shifted_run(&text, text.len(), &long, 0, long.len()).is_none());
        rebuild(&text, &long);
    }

    #[test]
    fn scattered_edits() {
        let mut text = Vec::new();
        for i in 0..2000 {
            text.extend_from_slice(
                format!("line {i}: some text that is typical of source code\n").as_bytes(),
            );
        }
        let mut changed = text.clone();
        for at in [500, 20_000, 50_000, 90_000] {
            changed.splice(at..at + 10, b"EDITED!".iter().copied());
        }
        let w = rebuild(&text, &changed);
        assert!(w.new_data.len() < 200, "{} new bytes", w.new_data.len());
    }
}
