//! Subversion's LCS on generated histories: three files edited at random in every
//! revision (lines inserted, deleted, replaced and swapped, drawn from a small alphabet so
//! that many lines repeat; CR and CRLF line ends; texts without a final newline), so that
//! the diff's tie-breaking, its identical prefix and suffix, and the whitespace and
//! end-of-line options all get exercised.

use crate::common::Pair;
use std::fmt::Write as _;
use std::io::Write as _;

/// xorshift64*: deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

const WORDS: &[&str] = &[
    "a", "b", "c", "d", "{", "}", "", "  x", "x", "int f()", "\tq r", "$v",
];
const TAILS: &[&str] = &["", "1", "2", " "];

fn line(rng: &mut Rng) -> Vec<u8> {
    let mut l = format!(
        "{}{}",
        WORDS[rng.below(WORDS.len())],
        TAILS[rng.below(TAILS.len())]
    );
    l.push_str(match rng.below(10) {
        0 => "\r\n",
        1 => "\r",
        _ => "\n",
    });
    l.into_bytes()
}

fn mutate(rng: &mut Rng, lines: &mut Vec<Vec<u8>>) {
    for _ in 0..1 + rng.below(6) {
        let at = rng.below(lines.len() + 1);
        match rng.below(20) {
            0..=7 => {
                for _ in 0..1 + rng.below(4) {
                    let l = line(rng);
                    lines.insert(at.min(lines.len()), l);
                }
            }
            8..=13 if !lines.is_empty() => {
                let end = (at + 1 + rng.below(5)).min(lines.len());
                lines.drain(at.min(end)..end);
            }
            14..=16 if !lines.is_empty() => {
                let i = rng.below(lines.len());
                lines[i] = line(rng);
            }
            _ if !lines.is_empty() => {
                let (i, j) = (rng.below(lines.len()), rng.below(lines.len()));
                lines.swap(i, j);
            }
            _ => {}
        }
    }
}

fn node(out: &mut Vec<u8>, path: &str, action: &str, text: &[u8]) {
    let props = if action == "add" { "PROPS-END\n" } else { "" };
    let mut h = format!("Node-path: {path}\nNode-kind: file\nNode-action: {action}\n");
    if !props.is_empty() {
        let _ = writeln!(h, "Prop-content-length: {}", props.len());
    }
    let _ = write!(
        h,
        "Text-content-length: {}\nContent-length: {}\n\n{props}",
        text.len(),
        props.len() + text.len()
    );
    out.extend_from_slice(h.as_bytes());
    out.extend_from_slice(text);
    out.extend_from_slice(b"\n\n");
}

fn revision(out: &mut Vec<u8>, rev: u32) {
    let date = format!("2020-01-01T00:{:02}:{:02}.000000Z", rev / 60 % 60, rev % 60);
    let props = format!(
        "K 10\nsvn:author\nV 1\na\nK 8\nsvn:date\nV {}\n{date}\nK 7\nsvn:log\nV 1\nx\nPROPS-END\n",
        date.len()
    );
    let _ = write!(
        out,
        "Revision-number: {rev}\nProp-content-length: {0}\nContent-length: {0}\n\n{props}\n",
        props.len()
    );
}

/// A dump of `revs` revisions of random edits to three files of up to `max_lines` lines.
fn history(seed: u64, revs: u32, max_lines: usize) -> Vec<u8> {
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let mut out =
        b"SVN-fs-dump-format-version: 2\n\nUUID: 6b2f1c1e-0000-4000-8000-000000000001\n\n".to_vec();
    revision(&mut out, 0);
    let mut files: Vec<Vec<Vec<u8>>> = Vec::new();
    revision(&mut out, 1);
    for i in 0..3 {
        let n = rng.below(max_lines);
        let lines: Vec<Vec<u8>> = (0..n).map(|_| line(&mut rng)).collect();
        node(&mut out, &format!("f{i}"), "add", &lines.concat());
        files.push(lines);
    }
    for rev in 2..=revs {
        revision(&mut out, rev);
        let mut changed = false;
        for (i, lines) in files.iter_mut().enumerate() {
            if rng.chance(60) || (i == 2 && !changed) {
                mutate(&mut rng, lines);
                let mut text = lines.concat();
                if rng.chance(15) && text.last() == Some(&b'\n') {
                    text.pop();
                }
                node(&mut out, &format!("f{i}"), "change", &text);
                changed = true;
            }
        }
    }
    out
}

fn check(seed: u64, revs: u32, max_lines: usize, options: &[&[&str]]) {
    let dir = svelto_testkit::tempdir();
    let dump = dir.path().join("random.dump");
    std::fs::write(&dump, history(seed, revs, max_lines)).expect("write the dump");
    let pair = Pair::load(&dump);
    for rev in 1..=revs {
        let r = rev.to_string();
        for opts in options {
            let mut args = vec!["diff", "REPO", "-r", &r];
            args.extend(*opts);
            pair.same(&args);
        }
    }
}

#[test]
fn short_files_all_options() {
    for seed in 1..=2 {
        check(
            seed,
            40,
            60,
            &[
                &[],
                &["-x", "-b"],
                &["-x", "-w"],
                &["-x", "--ignore-eol-style"],
                &["-x", "-U 0"],
                &["-x", "-p -U 5"],
            ],
        );
    }
}

#[test]
fn long_files() {
    for seed in 10..=11 {
        check(seed, 30, 400, &[&[], &["-x", "-b --ignore-eol-style"]]);
    }
}
