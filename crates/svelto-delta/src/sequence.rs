//! Whole texts as sequences of windows: cutting a target into windows with well-chosen source
//! views, applying a sequence, writing a sequence as one svndiff stream
//! (docs/formats/svndiff.md, "How Svelto picks source views").

use crate::compute::{block_hash, mix, roll, BLOCK};
use crate::parse::stream_header;
use crate::{compute_window, DeltaError, Instruction, Window, WINDOW_SIZE};

/// Target bytes per window when the source is larger than one view: an eighth less than a
/// view, so that the view can reach [`BACK_REACH`] bytes before the expected position and
/// the rest of the eighth after the window's expected end.
const TARGET_WINDOW: usize = WINDOW_SIZE - WINDOW_SIZE / 8;

/// How far a view starts before the source position expected to match the window's start.
const BACK_REACH: usize = WINDOW_SIZE / 32;

/// One anchor in this many source positions is indexed for re-synchronising after large
/// insertions, deletions and moves (chosen by content, so shifted text finds the same anchors).
const ANCHOR_BITS: u32 = 6;

/// The fewest anchors found in one view (and at least a sixteenth of the target window's
/// anchors) that justify moving the view away from where the content was expected.
const MIN_EVIDENCE: usize = 4;

/// How many same-hash anchors a lookup walks before giving up.
const ANCHOR_CHAIN: usize = 16;

/// A sparse, content-defined index of the whole source: the positions whose block hash has
/// its top [`ANCHOR_BITS`] bits clear after mixing, chained by hash.
///
/// About a quarter of a byte per source byte; sources beyond 4 GiB are indexed up to there.
struct AnchorIndex {
    heads: Vec<u32>,
    /// Per anchor: its block hash, the previous anchor in the same chain, its position.
    entries: Vec<(u32, u32, u32)>,
    shift: u32,
}

#[inline]
fn is_anchor(hash: u32) -> bool {
    mix(hash) >> (32 - ANCHOR_BITS) == 0
}

#[inline]
fn anchor_slot(hash: u32, shift: u32) -> usize {
    (hash.wrapping_mul(0x85eb_ca6b) >> shift) as usize
}

impl AnchorIndex {
    fn build(source: &[u8]) -> Self {
        let expected = (source.len() >> ANCHOR_BITS).max(1);
        let size = expected.next_power_of_two().clamp(1 << 8, 1 << 28);
        let shift = 32 - size.trailing_zeros();
        let mut index = AnchorIndex {
            heads: vec![u32::MAX; size],
            entries: Vec::with_capacity(expected + expected / 4),
            shift,
        };
        if source.len() < BLOCK {
            return index;
        }
        let mut hash = block_hash(source);
        let mut pos = 0;
        loop {
            if is_anchor(hash) {
                let (Ok(position), Ok(entry)) =
                    (u32::try_from(pos), u32::try_from(index.entries.len()))
                else {
                    break;
                };
                let slot = anchor_slot(hash, shift);
                index.entries.push((hash, index.heads[slot], position));
                index.heads[slot] = entry;
            }
            if pos + BLOCK >= source.len() {
                break;
            }
            hash = roll(hash, source[pos + BLOCK]);
            pos += 1;
        }
        index
    }

    /// The source position holding the same block as `block` (the [`BLOCK`] bytes hashing to
    /// `hash`), at or after `min`, nearest to `near`.
    fn find(
        &self,
        source: &[u8],
        hash: u32,
        block: &[u8],
        min: usize,
        near: usize,
    ) -> Option<usize> {
        let mut entry = self.heads[anchor_slot(hash, self.shift)];
        let mut best: Option<usize> = None;
        for _ in 0..ANCHOR_CHAIN {
            let Some(&(entry_hash, next, pos)) = self.entries.get(entry as usize) else {
                break;
            };
            let pos = pos as usize;
            if entry_hash == hash
                && pos >= min
                && best.is_none_or(|b| pos.abs_diff(near) < b.abs_diff(near))
                && source[pos..pos + BLOCK] == block[..BLOCK]
            {
                best = Some(pos);
            }
            entry = next;
        }
        best
    }
}

/// Where the next window's view may go and where its content is expected in the source.
struct ViewPlanner<'s> {
    source: &'s [u8],
    anchors: Option<AnchorIndex>,
    /// The source position after the last source copy: where the target continues if the bytes
    /// since were inserted.
    after_insert: usize,
    /// The same plus the target bytes since: where the target continues if they replaced
    /// source bytes.
    after_replace: usize,
    previous_start: usize,
}

impl<'s> ViewPlanner<'s> {
    /// The view `start..start + WINDOW_SIZE` for the target window `chunk`.
    fn view_for(&mut self, chunk: &[u8]) -> usize {
        let last_start = self.source.len() - WINDOW_SIZE;
        let place = |expected: usize, previous: usize| {
            expected
                .saturating_sub(BACK_REACH)
                .max(previous)
                .min(last_start)
        };
        if chunk.len() >= BLOCK {
            for expected in [self.after_insert, self.after_replace] {
                if self.source.get(expected..expected + BLOCK) == Some(&chunk[..BLOCK]) {
                    return place(expected, self.previous_start);
                }
            }
            let expected = place(self.after_insert, self.previous_start);
            if let Some(start) = self.resynchronise(chunk, expected) {
                return start;
            }
        }
        place(self.after_insert, self.previous_start)
    }

    /// Finds the view that holds the most anchors of `chunk`, or `None` when the evidence for
    /// moving away from the `expected` view start is weak: views cannot come back, so a jump
    /// forward on a few chance matches would lose the source bytes jumped over.
    fn resynchronise(&mut self, chunk: &[u8], expected: usize) -> Option<usize> {
        let source = self.source;
        let anchors = self
            .anchors
            .get_or_insert_with(|| AnchorIndex::build(source));
        let mut found = Vec::new();
        let mut looked_up = 0usize;
        let mut hash = block_hash(chunk);
        let mut pos = 0;
        loop {
            if is_anchor(hash) {
                looked_up += 1;
                let near = self.after_insert + pos;
                if let Some(at) =
                    anchors.find(source, hash, &chunk[pos..], self.previous_start, near)
                {
                    found.push(at);
                }
            }
            if pos + BLOCK >= chunk.len() {
                break;
            }
            hash = roll(hash, chunk[pos + BLOCK]);
            pos += 1;
        }
        if found.is_empty() {
            return None;
        }
        found.sort_unstable();
        // The densest run of anchors that fits in one view; ties go to the run nearest to
        // where the target was expected to continue.
        let span = WINDOW_SIZE - BLOCK;
        let mut best = (0usize, usize::MAX, 0usize, 0usize); // (count, distance, first, last)
        let mut last = 0;
        for first in 0..found.len() {
            last = last.max(first);
            while last + 1 < found.len() && found[last + 1] - found[first] <= span {
                last += 1;
            }
            let count = last - first + 1;
            let distance = found[first].abs_diff(self.after_insert);
            if count > best.0 || (count == best.0 && distance < best.1) {
                best = (count, distance, first, last);
            }
        }
        let in_expected = found
            .iter()
            .filter(|&&p| p >= expected && p + BLOCK <= expected + WINDOW_SIZE)
            .count();
        let (first, last) = (found[best.2], found[best.3]);
        let back = BACK_REACH.min(span - (last - first));
        let start = first
            .saturating_sub(back)
            .max(self.previous_start)
            .min(self.source.len() - WINDOW_SIZE);
        let convincing = if start <= expected {
            // Staying behind the expected view loses nothing later windows could use.
            best.0 >= MIN_EVIDENCE && best.0 > in_expected
        } else {
            best.0 >= MIN_EVIDENCE.max(looked_up / 16) && best.0 > 2 * in_expected
        };
        convincing.then_some(start)
    }

    /// Learns from the window just computed. Only source copies of at least
    /// [`CURSOR_COPY`] bytes move the expected position: shorter ones are often chance
    /// matches far from where the text continues.
    fn record(&mut self, window: &Window) {
        let chunk_len = window.target_len as usize;
        let start = window.source_offset as usize;
        self.previous_start = start;
        let mut position = 0usize;
        let mut last_copy = None;
        for instruction in &window.instructions {
            position += instruction.len() as usize;
            if let Instruction::CopySource { offset, len } = *instruction {
                if len >= CURSOR_COPY {
                    last_copy = Some((start + (offset + len) as usize, position));
                }
            }
        }
        match last_copy {
            Some((source_end, target_end)) => {
                self.after_insert = source_end;
                self.after_replace = source_end + (chunk_len - target_end);
            }
            None => self.after_replace += chunk_len,
        }
    }
}

/// The shortest source copy that tells where the target continues in the source.
const CURSOR_COPY: u64 = 2 * BLOCK as u64;

/// Deltas the whole `target` against the whole `source`, as windows of at most
/// [`WINDOW_SIZE`] target bytes whose source views are at most [`WINDOW_SIZE`] bytes (so stock
/// Subversion clients accept them) and never slide backwards.
///
/// A source no larger than one view is the view of every window. Otherwise each view is placed
/// where the window's content is expected in the source, reaching a little before it and
/// further after it, following insertions and deletions of any size. An empty source gives
/// windows without source (new data and target copies only); an empty target gives no window.
pub fn delta_windows(source: &[u8], target: &[u8]) -> Vec<Window> {
    if source.len() <= WINDOW_SIZE {
        return target
            .chunks(WINDOW_SIZE)
            .map(|chunk| compute_window(source, 0, chunk))
            .collect();
    }
    let mut planner = ViewPlanner {
        source,
        anchors: None,
        after_insert: 0,
        after_replace: 0,
        previous_start: 0,
    };
    let mut windows = Vec::with_capacity(target.len().div_ceil(TARGET_WINDOW));
    let mut done = 0;
    // A stock client reads the source once, front to back: a view may overlap the previous
    // one but must not leave a gap after it, or the client would read the wrong bytes. Views
    // that jump further are reached through windows that produce nothing.
    let mut view_end = 0;
    while done < target.len() {
        let chunk = &target[done..target.len().min(done + TARGET_WINDOW)];
        let start = planner.view_for(chunk);
        while view_end < start {
            windows.push(Window {
                source_offset: view_end as u64,
                source_len: WINDOW_SIZE as u64,
                ..Window::default()
            });
            view_end += WINDOW_SIZE;
        }
        view_end = start + WINDOW_SIZE;
        let mut window = compute_window(&source[start..start + WINDOW_SIZE], start as u64, chunk);
        trim_unmatched_tail(&mut window);
        planner.record(&window);
        done += window.target_len as usize;
        windows.push(window);
    }
    windows
}

/// The least number of target bytes worth a second look with a view placed for them.
const RETRY_TAIL: u64 = 512;

/// Ends a window early where its view stops working: at the first instruction boundary after
/// which at least [`RETRY_TAIL`] bytes remain, less than a quarter of them copied from the
/// source, while at least half of the bytes before it were copied from the source. The cut
/// bytes start the next window, whose view is placed for them (after a large deletion, they
/// are source bytes beyond this view).
fn trim_unmatched_tail(window: &mut Window) {
    let copied = |i: &Instruction| match *i {
        Instruction::CopySource { len, .. } => len,
        _ => 0,
    };
    let total_len = window.target_len;
    let total_copied: u64 = window.instructions.iter().map(copied).sum();
    let (mut kept_len, mut kept_copied, mut kept_new) = (0u64, 0u64, 0u64);
    for (cut, instruction) in window.instructions.iter().enumerate() {
        let tail_len = total_len - kept_len;
        if cut > 0
            && !matches!(instruction, Instruction::CopySource { .. })
            && tail_len >= RETRY_TAIL
            && (total_copied - kept_copied) * 4 < tail_len
            && kept_copied * 2 >= kept_len
        {
            window.instructions.truncate(cut);
            window.new_data.truncate(kept_new as usize);
            window.target_len = kept_len;
            return;
        }
        kept_len += instruction.len();
        kept_copied += copied(instruction);
        if let Instruction::NewData { len } = *instruction {
            kept_new += len;
        }
    }
}

/// Applies a sequence of windows to a source held in memory and returns the target.
///
/// Each window's view must lie inside `source`; views need not be monotonic here (only the
/// stream decoder enforces that, as Subversion does).
pub fn apply_windows(windows: &[Window], source: &[u8]) -> Result<Vec<u8>, DeltaError> {
    let mut out = Vec::new();
    for (number, window) in windows.iter().enumerate() {
        let target_offset = out.len() as u64;
        let view = window
            .source_offset
            .checked_add(window.source_len)
            .filter(|&end| end <= source.len() as u64)
            .map(|end| &source[window.source_offset as usize..end as usize])
            .ok_or(DeltaError::SourceViewOutside {
                offset: window.source_offset,
                len: window.source_len,
                source_len: source.len() as u64,
            });
        view.and_then(|view| window.apply(view, &mut out))
            .map_err(|e| e.in_window(number as u64, target_offset))?;
    }
    Ok(out)
}

/// Writes a whole svndiff stream of `version`: the 4-byte header, then every window.
pub fn encode_stream(
    windows: &[Window],
    version: u8,
    zlib_level: u32,
) -> Result<Vec<u8>, DeltaError> {
    if version > 2 {
        return Err(DeltaError::UnsupportedVersion(version));
    }
    let mut out = stream_header(version).to_vec();
    let mut target_offset = 0u64;
    for (number, window) in windows.iter().enumerate() {
        window
            .encode(version, zlib_level, &mut out)
            .map_err(|e| e.in_window(number as u64, target_offset))?;
        target_offset += window.target_len;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(lines: usize, salt: &str) -> Vec<u8> {
        let mut out = Vec::new();
        for i in 0..lines {
            out.extend_from_slice(
                format!(
                    "{salt} line {i}: {}\n",
                    i.wrapping_mul(2_654_435_761) % 99_991
                )
                .as_bytes(),
            );
        }
        out
    }

    fn check(source: &[u8], target: &[u8]) -> Vec<Window> {
        let windows = delta_windows(source, target);
        assert_eq!(apply_windows(&windows, source).expect("valid"), target);
        let mut previous = (0u64, 0u64);
        for w in &windows {
            assert!(w.target_len as usize <= WINDOW_SIZE);
            assert!(w.source_len as usize <= WINDOW_SIZE);
            assert!(w.source_offset >= previous.0);
            assert!(
                w.source_offset <= previous.0 + previous.1,
                "gap before view"
            );
            assert!(w.source_offset + w.source_len >= previous.0 + previous.1);
            previous = (w.source_offset, w.source_len);
        }
        windows
    }

    fn new_bytes(windows: &[Window]) -> usize {
        windows.iter().map(|w| w.new_data.len()).sum()
    }

    #[test]
    fn large_insertion_and_deletion_resynchronise() {
        let source = text(40_000, "base"); // about 1 MB
        let inserted = text(20_000, "new");
        let at = source.len() / 3;
        let target = [&source[..at], &inserted, &source[at..]].concat();
        let windows = check(&source, &target);
        assert!(
            new_bytes(&windows) < inserted.len() + 2_000,
            "{}",
            new_bytes(&windows)
        );

        let target = [&source[..at], &source[at + 500_000..]].concat();
        let windows = check(&source, &target);
        assert!(new_bytes(&windows) < 2_000, "{}", new_bytes(&windows));
    }

    #[test]
    fn empty_inputs() {
        assert!(delta_windows(b"abc", b"").is_empty());
        let windows = check(b"", &text(10_000, "x"));
        assert!(windows.iter().all(|w| w.source_len == 0));
    }

    #[test]
    fn apply_rejects_views_outside_the_source() {
        let w = Window {
            source_offset: 5,
            source_len: 10,
            ..Window::default()
        };
        let err = apply_windows(&[Window::default(), w], b"0123456789").expect_err("outside");
        assert_eq!(
            err.to_string(),
            "window 1 (target offset 0): source view 5+10 lies outside the source of 10 bytes"
        );
    }
}
