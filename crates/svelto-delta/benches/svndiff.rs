//! Micro-benchmarks of svndiff: computing the delta between two versions of a ~30 KB source
//! file, encoding it as svndiff 0, 1 and 2, decoding it, and applying it.
//!
//! Run: `cargo bench -p svelto-delta --bench svndiff`. Throughput is in target (new file)
//! bytes for every benchmark, so the numbers compare across stages.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use svelto_delta::{apply_windows, decode_stream, delta_windows, encode_stream, Limits, Window};

/// The zlib level svnserve uses by default for svndiff1.
const ZLIB_LEVEL: u32 = 5;

/// A deterministic generator (SplitMix64), so every run benchmarks the same bytes.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn pick<'a>(&mut self, words: &[&'a str]) -> &'a str {
        words[(self.next() % words.len() as u64) as usize]
    }
}

const WORDS: &[&str] = &[
    "window", "source", "target", "offset", "length", "buffer", "result", "error", "count",
    "index", "value", "entry", "node", "path", "revision", "delta", "stream", "reader", "writer",
    "limit", "state", "token", "props", "checksum",
];

/// About `size` bytes of C-like source text: functions with comments, declarations and
/// statements, as a typical versioned file looks.
fn source_file(size: usize, seed: u64) -> Vec<u8> {
    let mut rng = Rng(seed);
    let mut out = String::with_capacity(size + 256);
    let mut function = 0;
    while out.len() < size {
        function += 1;
        let (a, b) = (rng.pick(WORDS), rng.pick(WORDS));
        out.push_str(&format!(
            "/* Computes the {a} of the {b}; returns an error when the {b} is invalid. */\n\
             static svn_error_t *\ncompute_{a}_{function}(apr_size_t *{a}, const char *{b},\n\
             \x20                  apr_pool_t *pool)\n{{\n"
        ));
        for _ in 0..(4 + rng.next() % 12) {
            let (x, y, z) = (rng.pick(WORDS), rng.pick(WORDS), rng.pick(WORDS));
            let n = rng.next() % 1000;
            out.push_str(&match rng.next() % 4 {
                0 => format!("  apr_size_t {x}_{n} = {y}->{z} + {n};\n"),
                1 => format!("  if ({x} == NULL || {y}_{n} > {z})\n    return SVN_NO_ERROR;\n"),
                2 => format!("  SVN_ERR(svn_{x}_{y}(&{z}, {x}, pool));\n"),
                _ => format!("  /* {x} {y} {z}: see {n}. */\n"),
            });
        }
        out.push_str("  return SVN_NO_ERROR;\n}\n\n");
    }
    out.into_bytes()
}

/// An edited version of `old`: a few lines changed, a block inserted and a block deleted.
fn edited(old: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(old);
    let lines: Vec<&str> = text.lines().collect();
    let mut out = String::with_capacity(old.len() + 1024);
    for (i, line) in lines.iter().enumerate() {
        if (400..430).contains(&i) {
            continue; // a deleted block
        }
        if i % 97 == 13 {
            out.push_str(&line.replace("SVN_ERR", "SVN_ERR_W"));
        } else {
            out.push_str(line);
        }
        out.push('\n');
        if i == 150 {
            for j in 0..25 {
                out.push_str(&format!("  /* New code, line {j}. */ check_{j}(pool);\n"));
            }
        }
    }
    out.into_bytes()
}

fn bench(c: &mut Criterion) {
    let old = source_file(30_000, 1);
    let new = edited(&old);
    let windows = delta_windows(&old, &new);
    let check = apply_windows(&windows, &old).expect("the delta applies");
    assert_eq!(check, new, "the delta reproduces the edited file");
    let limits = Limits::default();

    let mut g = c.benchmark_group("svndiff");
    g.throughput(Throughput::Bytes(new.len() as u64));

    g.bench_function("compute/edited", |b| {
        b.iter(|| delta_windows(black_box(&old), black_box(&new)))
    });
    g.bench_function("compute/added", |b| {
        b.iter(|| delta_windows(black_box(&[]), black_box(&new)))
    });

    let versions = [(0u8, 0u32), (1, ZLIB_LEVEL), (2, 0)];
    for (version, level) in versions {
        let id = BenchmarkId::new("encode", format!("svndiff{version}"));
        g.bench_with_input(id, &windows, |b, w: &Vec<Window>| {
            b.iter(|| encode_stream(black_box(w), version, level).expect("encode"))
        });
    }
    for (version, level) in versions {
        let bytes = encode_stream(&windows, version, level).expect("encode");
        let id = BenchmarkId::new("decode", format!("svndiff{version}"));
        g.bench_with_input(id, &bytes, |b, bytes| {
            b.iter(|| decode_stream(black_box(bytes), &limits).expect("decode"))
        });
        let id = BenchmarkId::new("decode_apply", format!("svndiff{version}"));
        g.bench_with_input(id, &bytes, |b, bytes| {
            b.iter(|| {
                let w = decode_stream(black_box(bytes), &limits).expect("decode");
                apply_windows(&w, black_box(&old)).expect("apply")
            })
        });
    }
    g.bench_function("apply", |b| {
        b.iter(|| apply_windows(black_box(&windows), black_box(&old)).expect("apply"))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
