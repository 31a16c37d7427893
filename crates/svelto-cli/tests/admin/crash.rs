//! `kill -9` during `svelto admin load`, at several moments: afterwards the
//! repository passes `verify`, holds some complete revision K, and its dump of
//! `0:K` is svnadmin's; loading the rest of the dump then completes the
//! history exactly.
//!
//! The moments are drawn from a seeded generator: set SVELTO_TEST_SEED to
//! repeat a run (the seed is printed on failure).

use std::time::Duration;

use svelto_testkit::dumpfile::{assert_dumps_eq, dump_prefix, head_revision};
use svelto_testkit::scenario_dump;

use crate::common::{read, svelto, SveltoRepo};

const KILLS: usize = 8;

/// xorshift64*, enough to spread kills over a load.
struct Rng(u64);

impl Rng {
    fn unit(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn seed() -> u64 {
    std::env::var("SVELTO_TEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_c0de)
}

/// `-r` arguments that load what follows revision `k` up to `upto` (from
/// revision 0 when the repository is still empty, so that revision 0's
/// properties and the UUID come too).
fn range_after(k: u64, upto: u64) -> Vec<String> {
    let lower = if k == 0 { 0 } else { k + 1 };
    vec!["-r".to_owned(), format!("{lower}:{upto}")]
}

#[test]
fn kill_9_during_load_leaves_the_last_complete_revision() {
    let path = scenario_dump("many-revs");
    let full = read(&path);
    let head = head_revision(&full);
    let seed = seed();
    let mut rng = Rng(seed | 1);

    // How long an uninterrupted load takes here, to spread the kills over it.
    let whole = {
        let probe = SveltoRepo::create();
        probe.load(&path, &[]).elapsed
    };

    let repo = SveltoRepo::create();
    let mut k = 0u64;
    let mut history = Vec::new();
    for attempt in 0..KILLS {
        if attempt == KILLS / 2 && k < head / 2 {
            // The second half of the kills hit loads into a repository that
            // already holds revisions (a load that is not the first).
            let args = range_after(k, head / 2);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            repo.load(&path, &args);
            k = head / 2;
            history.push((Duration::ZERO, k));
        }
        if k == head {
            break;
        }
        let left = (head - k) as f64 / head as f64;
        // Somewhere in the part of the load that is left, short of its end.
        let delay = whole.mul_f64(left * (0.02 + 0.88 * rng.unit()));
        let running = svelto()
            .args(["admin", "load", "-q"])
            .args(range_after(k, head))
            .arg("-F")
            .arg(&path)
            .arg(repo.path())
            .spawn();
        std::thread::sleep(delay);
        let out = running.kill();
        let context = format!(
            "seed {seed}, kill {attempt} after {delay:?} (whole load {whole:?}), \
             repository was at r{k}; earlier: {history:?}"
        );
        let verify = svelto().args(["admin", "verify"]).arg(repo.path()).output();
        assert!(
            verify.success(),
            "verify fails after kill -9 ({context}):\n{verify}\nload:\n{out}"
        );
        let youngest = repo.info().youngest;
        assert!(
            youngest >= k,
            "youngest went back from {k} to {youngest} ({context})"
        );
        if youngest > 0 {
            let range = format!("0:{youngest}");
            assert_dumps_eq(
                dump_prefix(&full, youngest),
                &repo.dump(&["-r", &range]),
                &format!("dump -r {range} after kill -9 ({context})"),
            );
        }
        history.push((delay, youngest));
        k = youngest;
    }
    eprintln!(
        "kills (delay, youngest after; a zero delay is a complete load): {history:?} \
         of {head} revisions, whole load {whole:?}, seed {seed}"
    );

    // Loading again takes up where the killed loads stopped.
    if k < head {
        let args = range_after(k, head);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        repo.load(&path, &args);
    }
    repo.verify();
    assert_dumps_eq(
        &full,
        &repo.dump(&[]),
        &format!("after kills and a final load (seed {seed})"),
    );
}
