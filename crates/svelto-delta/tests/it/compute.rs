//! Delta quality (compactness) and speed of `compute_window`, `delta_windows` and applying.
//! Speeds are printed, never asserted: run with `--release -- --nocapture compute` to read them.

use std::time::Instant;

use svelto_delta::{apply_windows, compute_window, delta_windows, Window, WINDOW_SIZE};

use crate::common::{apply_like_svn, encoded_len, text, through_stream, Rng};

/// Replaces, inserts or deletes a short run at `count` random places.
fn few_edits(base: &[u8], count: usize, seed: u64) -> Vec<u8> {
    let mut rng = Rng::new(seed);
    let mut out = base.to_vec();
    for _ in 0..count {
        let at = rng.below(out.len().saturating_sub(100));
        match rng.below(3) {
            0 => drop(out.splice(at..at, b"an inserted line of new code;\n".iter().copied())),
            1 => drop(out.drain(at..at + 40)),
            _ => drop(out.splice(at..at + 20, b"CHANGED".iter().copied())),
        }
    }
    out
}

#[test]
fn one_inserted_line_costs_little() {
    let source = text(50_000, 1);
    let at = source.iter().position(|&b| b == b'\n').expect("lines") + 1;
    let target = [
        &source[..at],
        b"a brand new line near the start\n",
        &source[at..],
    ]
    .concat();
    let windows = delta_windows(&source, &target);
    assert_eq!(through_stream(&windows, &source, 0), target);
    let size = encoded_len(&windows, 0);
    println!("50 KB text, one line inserted near the start: svndiff0 delta of {size} bytes");
    assert!(size < 1024, "{size} bytes");
}

#[test]
fn compactness_table() {
    let base = text(1_000_000, 2);
    let block = text(60_000, 3);
    let cut = |a: usize, b: usize| [&base[..a], &base[b..]].concat();
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("identical", base.clone()),
        ("10 small edits", few_edits(&base, 10, 4)),
        ("100 small edits", few_edits(&base, 100, 5)),
        (
            "60 KB inserted at 1/3",
            [&base[..333_333], &block, &base[333_333..]].concat(),
        ),
        ("300 KB deleted at 1/3", cut(333_333, 633_333)),
        ("60 KB block moved 200 KB later", {
            let moved = &base[100_000..160_000];
            [
                &base[..100_000],
                &base[160_000..360_000],
                moved,
                &base[360_000..],
            ]
            .concat()
        }),
        (
            "first half and second half swapped",
            [&base[500_000..], &base[..500_000]].concat(),
        ),
    ];
    println!(
        "{:<36} {:>10} {:>8} {:>10} {:>10} {:>10}",
        "1 MB text", "new data", "windows", "svndiff0", "svndiff1", "svndiff2"
    );
    for (name, target) in &cases {
        let windows = delta_windows(&base, target);
        assert_eq!(
            apply_windows(&windows, &base).expect("applies"),
            *target,
            "{name}"
        );
        assert_eq!(apply_like_svn(&windows, &base), *target, "{name}");
        let new: usize = windows.iter().map(|w| w.new_data.len()).sum();
        println!(
            "{:<36} {:>10} {:>8} {:>10} {:>10} {:>10}",
            name,
            new,
            windows.len(),
            encoded_len(&windows, 0),
            encoded_len(&windows, 1),
            encoded_len(&windows, 2)
        );
    }
    // Bounds that hold with room to spare, so the table's meaning does not rot.
    let new_data = |target: &[u8]| -> usize {
        delta_windows(&base, target)
            .iter()
            .map(|w| w.new_data.len())
            .sum()
    };
    assert_eq!(new_data(&cases[0].1), 0);
    assert!(new_data(&cases[3].1) < 64_000);
    assert!(new_data(&cases[4].1) < 4_000);
}

#[test]
fn throughput() {
    let base = text(8 << 20, 6);
    let edited = few_edits(&base, 80, 7);
    let mb = |bytes: usize, secs: f64| bytes as f64 / secs / 1e6;

    // compute_window over aligned 100 KB windows (each has about one edit).
    let start = Instant::now();
    let mut windows: Vec<Window> = Vec::new();
    for (i, target) in edited.chunks(WINDOW_SIZE).enumerate() {
        let from = (i * WINDOW_SIZE).min(base.len() - WINDOW_SIZE);
        let view = &base[from..from + WINDOW_SIZE];
        windows.push(compute_window(view, from as u64, target));
    }
    let compute = start.elapsed().as_secs_f64();

    let start = Instant::now();
    let all = delta_windows(&base, &edited);
    let whole = start.elapsed().as_secs_f64();

    let start = Instant::now();
    let rebuilt = apply_windows(&all, &base).expect("applies");
    let apply = start.elapsed().as_secs_f64();
    assert_eq!(rebuilt, edited);

    let noise = Rng::new(8).bytes(4 << 20);
    let start = Instant::now();
    for (i, target) in noise.chunks(WINDOW_SIZE).enumerate() {
        let from = i * WINDOW_SIZE;
        let window = compute_window(&base[from..from + WINDOW_SIZE], from as u64, target);
        assert_eq!(window.target_len as usize, target.len());
    }
    let unrelated_window = start.elapsed().as_secs_f64();

    let start = Instant::now();
    let random = delta_windows(&base[..4 << 20], &noise);
    let unrelated = start.elapsed().as_secs_f64();
    assert_eq!(apply_windows(&random, &base).expect("applies"), noise);

    println!(
        "8 MB text, 80 edits: compute_window {:.0} MB/s, delta_windows {:.0} MB/s, apply {:.0} MB/s",
        mb(edited.len(), compute),
        mb(edited.len(), whole),
        mb(edited.len(), apply),
    );
    println!(
        "4 MB random bytes against unrelated text: compute_window {:.0} MB/s, delta_windows {:.0} MB/s",
        mb(noise.len(), unrelated_window),
        mb(noise.len(), unrelated)
    );
}
