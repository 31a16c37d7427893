//! Line diffs as Subversion's `libsvn_diff` computes and prints them, so that `svelto look
//! diff` is byte-identical to `svnlook diff`.
//!
//! The algorithm is the one Subversion documents for its LCS: Wu, Manber and Myers' O(NP)
//! comparison, run over line tokens (lines compared after the whitespace and end-of-line
//! normalisation the options ask for), where lines that occur in only one of the texts are
//! stepped over as they are met, and the furthest-reaching paths for each diagonal are
//! extended in Subversion's order (diagonals below the end diagonal from the outside in,
//! then the others from the outside in), a tie going to the path from the diagonal below.
//! Which of several equally long answers comes out depends on exactly these choices, so
//! they are kept. File texts first lose their identical prefix and suffix (found byte by
//! byte, whole lines only, with 50 lines of the suffix given back to the comparison);
//! property values are compared whole.
//!
//! Output is the unified format of `svn_diff_file_output_unified4` (file texts) and of the
//! property diffs (`##` hunks, "\ No newline at end of property").

use std::collections::HashMap;

/// How whitespace is compared (`-b`, `-w`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IgnoreSpace {
    #[default]
    None,
    /// `-b`: a run of whitespace compares as one space.
    Change,
    /// `-w`: whitespace is ignored.
    All,
}

/// Subversion's internal diff options (`svn_diff_file_options_t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DiffOptions {
    pub ignore_space: IgnoreSpace,
    pub ignore_eol_style: bool,
    /// `-p`: the last line before a hunk that starts like a C function, after `@@`.
    pub show_c_function: bool,
    /// Lines of context (`-U N`); 3 by default.
    pub context: i64,
}

impl Default for DiffOptions {
    fn default() -> Self {
        DiffOptions {
            ignore_space: IgnoreSpace::None,
            ignore_eol_style: false,
            show_c_function: false,
            context: 3,
        }
    }
}

impl DiffOptions {
    /// Parses `-x` arguments as `svn_diff_file_options_parse` does: `-b`, `-w`,
    /// `--ignore-space-change`, `--ignore-all-space`, `--ignore-eol-style`, `-p`,
    /// `--show-c-function`, `-u`, `--unified`, `-U N`, `--context N`. The error is the text
    /// Subversion chains under "Error in options to internal diff".
    pub fn parse(args: &[String]) -> Result<DiffOptions, String> {
        let mut o = DiffOptions::default();
        let mut i = 0;
        while i < args.len() {
            let a = &args[i];
            i += 1;
            if a == "--" {
                break;
            }
            let context_arg = |inline: Option<&str>, i: &mut usize| -> Result<i64, String> {
                let v = match inline {
                    Some(v) => v.to_string(),
                    None => {
                        let v = args
                            .get(*i)
                            .ok_or_else(|| "missing argument: U\n".to_string())?;
                        *i += 1;
                        v.clone()
                    }
                };
                v.trim()
                    .parse::<i32>()
                    .map(i64::from)
                    .map_err(|_| format!("Could not convert '{v}' into a number"))
            };
            if let Some(long) = a.strip_prefix("--") {
                let (name, inline) = match long.split_once('=') {
                    Some((n, v)) => (n, Some(v)),
                    None => (long, None),
                };
                match name {
                    "ignore-space-change" => {
                        if o.ignore_space == IgnoreSpace::None {
                            o.ignore_space = IgnoreSpace::Change;
                        }
                    }
                    "ignore-all-space" => o.ignore_space = IgnoreSpace::All,
                    "ignore-eol-style" => o.ignore_eol_style = true,
                    "show-c-function" => o.show_c_function = true,
                    "unified" => {}
                    "context" => o.context = context_arg(inline, &mut i)?,
                    _ => return Err(format!("invalid option: {a}\n")),
                }
            } else if let Some(shorts) = a.strip_prefix('-').filter(|s| !s.is_empty()) {
                for (pos, c) in shorts.char_indices() {
                    match c {
                        'b' => {
                            if o.ignore_space == IgnoreSpace::None {
                                o.ignore_space = IgnoreSpace::Change;
                            }
                        }
                        'w' => o.ignore_space = IgnoreSpace::All,
                        'p' => o.show_c_function = true,
                        'u' => {}
                        'U' => {
                            let rest = &shorts[pos + 1..];
                            let inline = (!rest.is_empty()).then_some(rest);
                            o.context = context_arg(inline, &mut i)?;
                            break;
                        }
                        _ => return Err(format!("invalid option character: {c}\n")),
                    }
                }
            }
            // Arguments that are not options are ignored, as apr_getopt leaves them.
        }
        Ok(o)
    }
}

/// A changed range: lines `[orig_start, orig_start + orig_len)` of the original became
/// `[mod_start, mod_start + mod_len)` of the modified text (0-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Change {
    pub orig_start: i64,
    pub orig_len: i64,
    pub mod_start: i64,
    pub mod_len: i64,
}

/// Splits a text into lines, each with its end of line (`\n`, `\r\n` or `\r`).
pub fn split_lines(text: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < text.len() {
        match text[i] {
            b'\n' => {
                out.push(&text[start..=i]);
                start = i + 1;
            }
            b'\r' => {
                if text.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
                out.push(&text[start..=i]);
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | 0x0b | 0x0c)
}

/// A line as the comparison sees it under the options.
fn normalize(line: &[u8], o: &DiffOptions) -> Vec<u8> {
    if o.ignore_space == IgnoreSpace::None && !o.ignore_eol_style {
        return line.to_vec();
    }
    let mut out = Vec::with_capacity(line.len());
    let mut after_cr = false;
    let mut in_space = false;
    for &c in line {
        match c {
            b'\r' => {
                out.push(if o.ignore_eol_style { b'\n' } else { b'\r' });
                after_cr = true;
                in_space = false;
            }
            b'\n' => {
                if !(after_cr && o.ignore_eol_style) {
                    out.push(b'\n');
                }
                after_cr = false;
                in_space = false;
            }
            c if is_space(c) && o.ignore_space != IgnoreSpace::None => {
                if !in_space && o.ignore_space == IgnoreSpace::Change {
                    out.push(b' ');
                }
                in_space = true;
                after_cr = false;
            }
            c => {
                out.push(c);
                in_space = false;
                after_cr = false;
            }
        }
    }
    out
}

/// The identical leading lines of two texts, found byte by byte: (byte length, lines,
/// whether one text is all prefix).
fn identical_prefix(a: &[u8], b: &[u8]) -> (usize, i64, bool) {
    let mut lines = 0i64;
    let mut had_cr = false;
    let mut i = 0;
    while i < a.len() && i < b.len() && a[i] == b[i] {
        match a[i] {
            b'\r' => {
                lines += 1;
                had_cr = true;
            }
            b'\n' if !had_cr => lines += 1,
            _ => had_cr = false,
        }
        i += 1;
    }
    let one_at_eof = i == a.len() || i == b.len();
    let mut m = i;
    if had_cr && (a.get(m) == Some(&b'\n') || b.get(m) == Some(&b'\n')) {
        lines -= 1;
        m -= 1;
    }
    // Back to just after the last end of line inside the identical bytes.
    let mut p = m;
    while p > 0 && a[p - 1] != b'\n' && a[p - 1] != b'\r' {
        p -= 1;
    }
    (p, lines, one_at_eof)
}

const SUFFIX_LINES_TO_KEEP: i64 = 50;

/// The identical trailing lines, not overlapping the prefix (which ends at byte `prefix`
/// of both texts), less the 50 lines given back to the comparison: (start in `a`, start in
/// `b`, lines). Called only when neither text is all prefix.
fn identical_suffix(a: &[u8], b: &[u8], prefix: usize) -> (usize, usize, i64) {
    let min_len = a.len().min(b.len());
    // Where the backward scan of `a` must stop: the prefix, shifted by the length difference.
    let stop0 = prefix as i64 + (a.len() - min_len) as i64;
    let mut i0 = a.len() as i64 - 1;
    let mut i1 = b.len() as i64 - 1;
    let mut lines = 0i64;
    let at = |t: &[u8], i: i64| t[i as usize];
    let mut is_match = at(a, i0) == at(b, i1);
    if is_match && at(a, i0) != b'\r' && at(a, i0) != b'\n' {
        lines += 1;
    }
    let mut had_nl = false;
    while is_match {
        match at(a, i0) {
            b'\n' => {
                lines += 1;
                had_nl = true;
            }
            b'\r' if !had_nl => lines += 1,
            _ => had_nl = false,
        }
        i0 -= 1;
        i1 -= 1;
        if i0 == stop0 || i0 < 0 || i1 < 0 {
            break;
        }
        is_match = at(a, i0) == at(b, i1);
    }
    // Forward to the first byte of the identical suffix.
    i0 += 1;
    i1 += 1;
    let eof = |i0: i64, i1: i64| i0 >= a.len() as i64 || i1 >= b.len() as i64;
    let mut keep = SUFFIX_LINES_TO_KEEP;
    loop {
        let mut had_cr = false;
        while !eof(i0, i1) && at(a, i0) != b'\n' && at(a, i0) != b'\r' {
            i0 += 1;
            i1 += 1;
        }
        if !eof(i0, i1) && at(a, i0) == b'\r' {
            lines -= 1;
            had_cr = true;
            i0 += 1;
            i1 += 1;
        }
        if !eof(i0, i1) && at(a, i0) == b'\n' {
            if !had_cr {
                lines -= 1;
            }
            i0 += 1;
            i1 += 1;
        }
        if eof(i0, i1) {
            break;
        }
        let go_on = keep != 0;
        keep -= 1;
        if !go_on {
            break;
        }
    }
    if eof(i0, i1) {
        lines = 0;
    }
    (i0 as usize, i1 as usize, lines)
}

/// One match found by the comparison: `len` equal tokens from offset `a` and `b` (1-based
/// line numbers of the whole texts).
#[derive(Clone, Copy)]
struct Run {
    a: i64,
    b: i64,
    len: i64,
    /// The previous run on this path (an index into the arena), or none.
    prev: Option<usize>,
    refs: u32,
}

/// The furthest point reached on one diagonal.
#[derive(Clone, Copy, Default)]
struct Front {
    /// Offset in `b` + 1 (0: never reached).
    y: i64,
    pos_a: usize,
    pos_b: usize,
    run: Option<usize>,
}

struct Lcs<'t> {
    /// Token ids of each text's compared lines, with a sentinel of its own at the end.
    toks: [&'t [i64]; 2],
    counts: [&'t [u32]; 2],
    base: [i64; 2],
    runs: Vec<Run>,
    free: Vec<usize>,
}

impl Lcs<'_> {
    fn next(&self, t: usize, i: usize) -> usize {
        if i + 1 >= self.toks[t].len() {
            0
        } else {
            i + 1
        }
    }

    fn release(&mut self, mut run: Option<usize>) {
        while let Some(r) = run {
            self.runs[r].refs -= 1;
            if self.runs[r].refs > 0 {
                break;
            }
            run = self.runs[r].prev;
            self.free.push(r);
        }
    }

    fn new_run(&mut self, run: Run) -> usize {
        match self.free.pop() {
            Some(i) => {
                self.runs[i] = run;
                i
            }
            None => {
                self.runs.push(run);
                self.runs.len() - 1
            }
        }
    }

    /// Extends diagonal `k` (stored at `fp[at]`) from the better of its neighbours.
    fn snake(&mut self, fp: &mut [Front], at: usize) {
        if at == 0 || at + 1 >= fp.len() {
            return;
        }
        let old = fp[at].run;
        self.release(old);
        let (below, above) = (fp[at - 1], fp[at + 1]);
        let (mut s0, mut s1, mut prev) = if below.y >= above.y {
            (below.pos_a, self.next(1, below.pos_b), below.run)
        } else {
            (self.next(0, above.pos_a), above.pos_b, above.run)
        };
        if let Some(p) = prev {
            self.runs[p].refs += 1;
        }
        let (mut p0, mut p1) = (s0, s1);
        loop {
            while self.toks[0][p0] == self.toks[1][p1] {
                p0 = self.next(0, p0);
                p1 = self.next(1, p1);
            }
            if p1 != s1 {
                let len = p1 as i64 - s1 as i64;
                let r = self.new_run(Run {
                    a: self.base[0] + s0 as i64,
                    b: self.base[1] + s1 as i64,
                    len,
                    prev,
                    refs: 1,
                });
                prev = Some(r);
                s0 = p0;
                s1 = p1;
            }
            let t0 = self.toks[0][p0];
            let t1 = self.toks[1][p1];
            if t0 >= 0 && self.counts[1][t0 as usize] == 0 {
                p0 = self.next(0, p0);
                s0 = p0;
            } else if t1 >= 0 && self.counts[0][t1 as usize] == 0 {
                p1 = self.next(1, p1);
                s1 = p1;
            } else {
                break;
            }
        }
        fp[at] = Front {
            y: p1 as i64 + 1,
            pos_a: p0,
            pos_b: p1,
            run: prev,
        };
    }
}

/// The matches between token sequences `ta` and `tb` (ids below `ntok`), whose first
/// lines are line `prefix + 1` of their texts: runs (a, b, len), oldest first.
fn lcs_runs(ta: &[i64], tb: &[i64], ntok: usize, prefix: i64) -> Vec<(i64, i64, i64)> {
    if ta.is_empty() || tb.is_empty() {
        return Vec::new();
    }
    let mut counts = [vec![0u32; ntok], vec![0u32; ntok]];
    for (t, toks) in [ta, tb].iter().enumerate() {
        for &x in toks.iter() {
            counts[t][x as usize] += 1;
        }
    }
    let unique_a = ta.iter().filter(|&&x| counts[1][x as usize] == 0).count() as i64;
    let unique_b = tb.iter().filter(|&&x| counts[0][x as usize] == 0).count() as i64;
    let len_a = ta.len() as i64 - unique_a;
    let len_b = tb.len() as i64 - unique_b;
    let mut sa = ta.to_vec();
    sa.push(-1);
    let mut sb = tb.to_vec();
    sb.push(-2);
    let mut lcs = Lcs {
        toks: [&sa, &sb],
        counts: [&counts[0], &counts[1]],
        base: [prefix + 1, prefix + 1],
        runs: Vec::new(),
        free: Vec::new(),
    };
    let origin = len_b + 1;
    let mut fp = vec![Front::default(); (len_a + len_b + 3) as usize];
    // Diagonal k lives at fp[origin + k]; the search never leaves the array, which has a
    // spare slot at each end (checked all the same).
    let slot = |k: i64| -> Option<usize> {
        let i = origin + k;
        (i >= 0 && (i as usize) < fp_len(len_a, len_b)).then_some(i as usize)
    };
    let d = len_a - len_b;
    let sentinel_b = sb.len() - 1;
    let (Some(start), Some(end)) = (slot(d - 1), slot(0)) else {
        return Vec::new();
    };
    fp[start].pos_a = 0;
    fp[start].pos_b = sentinel_b;
    let mut p = 0i64;
    loop {
        let mut k = d.min(0) - p;
        while k < 0 {
            if let Some(i) = slot(k) {
                lcs.snake(&mut fp, i);
            }
            k += 1;
        }
        let mut k = d.max(0) + p;
        while k >= 0 {
            if let Some(i) = slot(k) {
                lcs.snake(&mut fp, i);
            }
            k -= 1;
        }
        p += 1;
        if fp[end].pos_b == sentinel_b || p > len_a + len_b + 2 {
            break;
        }
    }
    let mut out = Vec::new();
    let mut r = fp[end].run;
    while let Some(i) = r {
        let run = lcs.runs[i];
        out.push((run.a, run.b, run.len));
        r = run.prev;
    }
    out.reverse();
    out
}

fn fp_len(len_a: i64, len_b: i64) -> usize {
    (len_a + len_b + 3) as usize
}

/// The changed ranges, given the tokens between the identical prefix and suffix.
fn diff_tokens(
    ta: &[i64],
    tb: &[i64],
    ntok: usize,
    prefix: i64,
    suffix: i64,
    na: i64,
    nb: i64,
) -> Vec<Change> {
    let mut runs = Vec::new();
    if prefix > 0 {
        runs.push((1, 1, prefix));
    }
    runs.extend(lcs_runs(ta, tb, ntok, prefix));
    let end_a = prefix + na + suffix + 1;
    let end_b = prefix + nb + suffix + 1;
    if suffix > 0 {
        runs.push((end_a - suffix, end_b - suffix, suffix));
    }
    runs.push((end_a, end_b, 0));
    let mut out = Vec::new();
    let (mut oa, mut ob) = (1i64, 1i64);
    for (a, b, len) in runs {
        if oa < a || ob < b {
            out.push(Change {
                orig_start: oa - 1,
                orig_len: a - oa,
                mod_start: ob - 1,
                mod_len: b - ob,
            });
        }
        if len == 0 {
            break;
        }
        oa = a + len;
        ob = b + len;
    }
    out
}

fn tokenize<'t>(
    lines_a: &[&'t [u8]],
    lines_b: &[&'t [u8]],
    o: &DiffOptions,
) -> (Vec<i64>, Vec<i64>, usize) {
    if o.ignore_space == IgnoreSpace::None && !o.ignore_eol_style {
        // Lines compare as they are: no normalised copies.
        let mut ids: HashMap<&'t [u8], i64> = HashMap::new();
        let mut toks = [
            Vec::with_capacity(lines_a.len()),
            Vec::with_capacity(lines_b.len()),
        ];
        for (t, lines) in [lines_a, lines_b].into_iter().enumerate() {
            for &l in lines {
                let n = ids.len() as i64;
                toks[t].push(*ids.entry(l).or_insert(n));
            }
        }
        let n = ids.len();
        let [ta, tb] = toks;
        return (ta, tb, n);
    }
    let mut ids: HashMap<Vec<u8>, i64> = HashMap::new();
    let mut id = |l: &[u8]| {
        let n = ids.len() as i64;
        *ids.entry(normalize(l, o)).or_insert(n)
    };
    let ta: Vec<i64> = lines_a.iter().map(|l| id(l)).collect();
    let tb: Vec<i64> = lines_b.iter().map(|l| id(l)).collect();
    let n = ids.len();
    (ta, tb, n)
}

/// The changed ranges between two file texts (`svn_diff_file_diff_2`).
pub fn file_diff(a: &[u8], b: &[u8], o: &DiffOptions) -> Vec<Change> {
    let (mut pa, mut prefix_lines, mut sa, mut sb, mut suffix_lines) = (0, 0, a.len(), b.len(), 0);
    if !a.is_empty() && !b.is_empty() {
        let (p, lines, one_eof) = identical_prefix(a, b);
        pa = p;
        prefix_lines = lines;
        if !one_eof {
            let (s0, s1, lines) = identical_suffix(a, b, p);
            sa = s0;
            sb = s1;
            suffix_lines = lines;
        }
    }
    let mid_a = split_lines(&a[pa..sa.max(pa)]);
    let mid_b = split_lines(&b[pa..sb.max(pa)]);
    let (ta, tb, n) = tokenize(&mid_a, &mid_b, o);
    diff_tokens(
        &ta,
        &tb,
        n,
        prefix_lines,
        suffix_lines,
        ta.len() as i64,
        tb.len() as i64,
    )
}

/// The changed ranges between two property values (`svn_diff_mem_string_diff`).
pub fn mem_diff(a: &[u8], b: &[u8]) -> Vec<Change> {
    let la = split_lines(a);
    let lb = split_lines(b);
    let (ta, tb, n) = tokenize(&la, &lb, &DiffOptions::default());
    diff_tokens(&ta, &tb, n, 0, 0, ta.len() as i64, tb.len() as i64)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Skip,
    Context,
    Delete,
    Insert,
}

/// Writes unified hunks of one diff (`output_unified_diff_modified` and its flush).
struct Unified<'t> {
    lines: [Vec<&'t [u8]>; 2],
    /// Property values: a range that reaches the end of a value without an end of line
    /// says so whatever the range; file texts say so only for printed lines.
    memory: bool,
    delimiter: &'static str,
    no_newline: &'static str,
    context: i64,
    show_c_function: bool,
    current: [i64; 2],
    hunk_start: [i64; 2],
    hunk_len: [i64; 2],
    hunk: Vec<u8>,
    extra_context: Vec<u8>,
    hunk_extra: Vec<u8>,
    out: &'t mut Vec<u8>,
}

impl Unified<'_> {
    fn line(&mut self, kind: Kind, idx: usize) {
        let n = self.current[idx];
        self.current[idx] += 1;
        let Some(line) = self.lines[idx].get(n as usize).copied() else {
            return;
        };
        match kind {
            Kind::Context => {
                self.hunk.push(b' ');
                self.hunk_len[0] += 1;
                self.hunk_len[1] += 1;
            }
            Kind::Delete => {
                self.hunk.push(b'-');
                self.hunk_len[0] += 1;
            }
            Kind::Insert => {
                self.hunk.push(b'+');
                self.hunk_len[1] += 1;
            }
            Kind::Skip => {}
        }
        if self.show_c_function
            && matches!(kind, Kind::Skip | Kind::Context)
            && line
                .first()
                .is_some_and(|&c| c.is_ascii_alphabetic() || c == b'$' || c == b'_')
            && ![&b"public:"[..], b"private:", b"protected:"]
                .iter()
                .any(|p| line.starts_with(p))
        {
            self.extra_context = line.to_vec();
        }
        if kind != Kind::Skip {
            self.hunk.extend_from_slice(line);
            let ends = matches!(line.last(), Some(b'\n') | Some(b'\r'));
            if !self.memory && !ends {
                self.hunk.extend_from_slice(self.no_newline.as_bytes());
            }
        }
    }

    fn range(&mut self, idx: usize, kind: Kind, until: i64) {
        if self.memory {
            let n = self.lines[idx].len() as i64;
            let until = until.min(n);
            if until <= self.current[idx] {
                return;
            }
            while self.current[idx] < until {
                self.line(kind, idx);
            }
            let ends = self.lines[idx]
                .last()
                .is_some_and(|l| matches!(l.last(), Some(b'\n') | Some(b'\r')));
            if self.current[idx] == n && !ends {
                self.hunk.extend_from_slice(self.no_newline.as_bytes());
            }
        } else {
            while self.current[idx] < until {
                self.line(kind, idx);
            }
        }
    }

    fn flush(&mut self) {
        if self.hunk.is_empty() {
            return;
        }
        let target = self.hunk_start[0] + self.hunk_len[0] + self.context;
        self.range(0, Kind::Context, target);
        let mut old_start = self.hunk_start[0];
        let mut new_start = self.hunk_start[1];
        if self.hunk_len[0] > 0 {
            old_start += 1;
        }
        if self.hunk_len[1] > 0 {
            new_start += 1;
        }
        let d = self.delimiter;
        self.out
            .extend_from_slice(format!("{d} -{old_start}").as_bytes());
        if self.hunk_len[0] != 1 {
            self.out
                .extend_from_slice(format!(",{}", self.hunk_len[0]).as_bytes());
        }
        self.out
            .extend_from_slice(format!(" +{new_start}").as_bytes());
        if self.hunk_len[1] != 1 {
            self.out
                .extend_from_slice(format!(",{}", self.hunk_len[1]).as_bytes());
        }
        self.out.extend_from_slice(b" ");
        self.out.extend_from_slice(d.as_bytes());
        if !self.hunk_extra.is_empty() {
            self.out.push(b' ');
            self.out.extend_from_slice(&self.hunk_extra);
        }
        self.out.push(b'\n');
        self.out.append(&mut self.hunk);
        self.hunk_len = [0, 0];
        self.hunk_start = [0, 0];
    }

    fn modified(&mut self, c: &Change) {
        let ctx = self.context;
        let prefix_len = c.orig_start.min(ctx);
        let mut init = false;
        let prev_end = if self.hunk_len[0] > 0 || self.hunk_len[1] > 0 {
            self.hunk_start[0] + self.hunk_len[0] + ctx
        } else {
            if self.hunk_start[0] == 0 && (c.orig_len > 0 || c.mod_len > 0) {
                init = true;
            }
            -1
        };
        let new_start = c.orig_start - prefix_len;
        if self.current[0] < new_start && prev_end <= new_start {
            self.flush();
            init = true;
        } else if self.hunk_len[0] > 0 || self.hunk_len[1] > 0 {
            self.range(0, Kind::Context, c.orig_start);
        }
        self.range(0, Kind::Skip, c.orig_start - prefix_len);
        if init {
            self.hunk_start = [c.orig_start - prefix_len, c.mod_start - prefix_len];
            if self.show_c_function {
                self.hunk_extra = c_function_context(&self.extra_context);
            }
        }
        self.range(1, Kind::Skip, c.mod_start);
        self.range(0, Kind::Context, c.orig_start);
        self.range(0, Kind::Delete, c.orig_start + c.orig_len);
        self.range(1, Kind::Insert, c.mod_start + c.mod_len);
    }
}

/// The `-p` text after `@@`: at most 50 bytes of the line, trailing whitespace trimmed,
/// cut before an incomplete UTF-8 sequence.
fn c_function_context(line: &[u8]) -> Vec<u8> {
    let mut v: Vec<u8> = line.iter().take(50).copied().collect();
    if let Some(z) = v.iter().position(|&c| c == 0) {
        v.truncate(z);
    }
    while v
        .last()
        .is_some_and(|c| c.is_ascii_whitespace() || *c == 0x0b)
    {
        v.pop();
    }
    let valid = match std::str::from_utf8(&v) {
        Ok(_) => v.len(),
        Err(e) => e.valid_up_to(),
    };
    v.truncate(valid);
    v
}

/// Writes the unified diff of two file texts after `--- label_a` / `+++ label_b`, as
/// `svn_diff_file_output_unified4` does; nothing when `changes` is empty.
pub fn write_unified_file(
    out: &mut Vec<u8>,
    a: &[u8],
    b: &[u8],
    changes: &[Change],
    label_a: &[u8],
    label_b: &[u8],
    o: &DiffOptions,
) {
    if changes.is_empty() {
        return;
    }
    out.extend_from_slice(b"--- ");
    out.extend_from_slice(label_a);
    out.extend_from_slice(b"\n+++ ");
    out.extend_from_slice(label_b);
    out.push(b'\n');
    let mut u = Unified {
        lines: [split_lines(a), split_lines(b)],
        memory: false,
        delimiter: "@@",
        no_newline: "\n\\ No newline at end of file\n",
        context: if o.context >= 0 { o.context } else { 3 },
        show_c_function: o.show_c_function,
        current: [0, 0],
        hunk_start: [0, 0],
        hunk_len: [0, 0],
        hunk: Vec::new(),
        extra_context: Vec::new(),
        hunk_extra: Vec::new(),
        out,
    };
    for c in changes {
        u.modified(c);
    }
    u.flush();
}

/// Writes the `##` hunks of a property value change (no header), as Subversion's property
/// diffs do; nothing when the values are equal.
pub fn write_prop_hunks(out: &mut Vec<u8>, old: &[u8], new: &[u8]) {
    let changes = mem_diff(old, new);
    if changes.is_empty() {
        return;
    }
    let mut u = Unified {
        lines: [split_lines(old), split_lines(new)],
        memory: true,
        delimiter: "##",
        no_newline: "\n\\ No newline at end of property\n",
        context: 3,
        show_c_function: false,
        current: [0, 0],
        hunk_start: [0, 0],
        hunk_len: [0, 0],
        hunk: Vec::new(),
        extra_context: Vec::new(),
        hunk_extra: Vec::new(),
        out,
    };
    for c in &changes {
        u.modified(c);
    }
    u.flush();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unified(a: &str, b: &str) -> String {
        let changes = file_diff(a.as_bytes(), b.as_bytes(), &DiffOptions::default());
        let mut out = Vec::new();
        write_unified_file(
            &mut out,
            a.as_bytes(),
            b.as_bytes(),
            &changes,
            b"a",
            b"b",
            &DiffOptions::default(),
        );
        String::from_utf8(out).unwrap_or_default()
    }

    #[test]
    fn one_line_changed() {
        assert_eq!(
            unified("a\nb\nc\n", "a\nx\nc\n"),
            "--- a\n+++ b\n@@ -1,3 +1,3 @@\n a\n-b\n+x\n c\n"
        );
    }

    #[test]
    fn added_to_empty_and_no_newline() {
        assert_eq!(
            unified("", "x\ny"),
            "--- a\n+++ b\n@@ -0,0 +1,2 @@\n+x\n+y\n\\ No newline at end of file\n"
        );
    }

    #[test]
    fn equal_texts_have_no_diff() {
        assert_eq!(unified("a\nb\n", "a\nb\n"), "");
        assert!(file_diff(b"", b"", &DiffOptions::default()).is_empty());
    }

    #[test]
    fn options_parse() {
        let o = DiffOptions::parse(&["-b".into(), "--ignore-eol-style".into()]).unwrap_or_default();
        assert_eq!(o.ignore_space, IgnoreSpace::Change);
        assert!(o.ignore_eol_style);
        let o = DiffOptions::parse(&["-U".into(), "5".into()]).unwrap_or_default();
        assert_eq!(o.context, 5);
        assert!(DiffOptions::parse(&["-z".into()]).is_err());
    }

    #[test]
    fn prop_hunks() {
        let mut out = Vec::new();
        write_prop_hunks(&mut out, b"", b"v");
        assert_eq!(
            String::from_utf8(out).unwrap_or_default(),
            "## -0,0 +1 ##\n+v\n\\ No newline at end of property\n"
        );
    }
}
