//! Deterministic test data and helpers shared by the modules.

use std::fmt::Write as _;

use sha1::{Digest, Sha1};
use svelto_delta::{apply_windows, decode_stream, encode_stream, Limits, Window};

/// A small xorshift generator, so that data is the same on every run.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| (self.next() >> 32) as u8).collect()
    }
}

/// Source-code-like text of about `len` bytes.
pub fn text(len: usize, seed: u64) -> Vec<u8> {
    const WORDS: [&str; 16] = [
        "fn", "let", "mut", "self", "window", "source", "target", "delta", "return", "match",
        "Some", "None", "offset", "len", "=", "+",
    ];
    let mut rng = Rng::new(seed);
    let mut out = String::with_capacity(len + 100);
    let mut line = 0;
    while out.len() < len {
        line += 1;
        let indent = rng.below(4) * 4;
        let _ = write!(out, "{:indent$}", "");
        for _ in 0..3 + rng.below(8) {
            out.push_str(WORDS[rng.below(WORDS.len())]);
            out.push(' ');
        }
        let _ = writeln!(out, "{}; // {line}", rng.below(100_000));
    }
    out.into_bytes()
}

pub fn sha1_hex(data: &[u8]) -> String {
    Sha1::digest(data).iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// Encodes `windows` as a stream of `version`, decodes it back and applies it to `source`.
pub fn through_stream(windows: &[Window], source: &[u8], version: u8) -> Vec<u8> {
    let bytes = encode_stream(windows, version, 5).expect("our windows encode");
    let decoded = decode_stream(&bytes, &Limits::default()).expect("our streams decode");
    assert_eq!(decoded, windows, "version {version} round trip");
    apply_windows(&decoded, source).expect("our windows apply")
}

pub fn encoded_len(windows: &[Window], version: u8) -> usize {
    encode_stream(windows, version, 9).expect("valid").len()
}

/// Applies windows the way Subversion 1.14's `svn_txdelta_apply` does: the source is a stream
/// read once, front to back; each view keeps the overlap with the previous view and reads the
/// rest from where the stream stands, whatever the view's offset says. Panics where Subversion
/// would fail an assertion (a view sliding backwards).
pub fn apply_like_svn(windows: &[Window], source: &[u8]) -> Vec<u8> {
    let mut stream = 0usize; // bytes of `source` read so far
    let (mut buf_offset, mut buf): (usize, Vec<u8>) = (0, Vec::new());
    let mut out = Vec::new();
    for w in windows {
        let (offset, len) = (w.source_offset as usize, w.source_len as usize);
        assert!(
            len == 0 || (offset >= buf_offset && offset + len >= buf_offset + buf.len()),
            "view {offset}+{len} slides back from {buf_offset}+{}",
            buf.len()
        );
        if offset != buf_offset || len > buf.len() {
            if buf_offset + buf.len() > offset {
                buf.drain(..offset - buf_offset);
            } else {
                buf.clear();
            }
            buf_offset = offset;
        }
        if buf.len() < len {
            let more = len - buf.len();
            assert!(
                stream + more <= source.len(),
                "delta source ended unexpectedly"
            );
            buf.extend_from_slice(&source[stream..stream + more]);
            stream += more;
        }
        w.apply(&buf[..len], &mut out).expect("window applies");
    }
    out
}

/// Proptest settings: `cases` cases (unless `PROPTEST_CASES` says otherwise) from a fixed
/// seed (unless `PROPTEST_RNG_SEED` gives one), so that CI runs are repeatable and a developer
/// can still explore.
pub fn proptest_config(cases: u32) -> proptest::test_runner::Config {
    use proptest::test_runner::{Config, RngSeed};
    let mut config = Config::default();
    if std::env::var_os("PROPTEST_CASES").is_none() {
        config.cases = cases;
    }
    if config.rng_seed == RngSeed::Random {
        config.rng_seed = RngSeed::Fixed(0x5356_4e64_6966_6621);
    }
    config
}
