//! Whole texts: delta_windows then apply_windows gives the target back, for all sorts of edits.

use proptest::prelude::*;
use svelto_delta::{apply_windows, delta_windows, Window, WINDOW_SIZE};

use crate::common::{apply_like_svn, text, through_stream, Rng};

#[derive(Debug, Clone)]
enum Edit {
    Insert { at: usize, len: usize, seed: u64 },
    Delete { at: usize, len: usize },
    Move { from: usize, len: usize, to: usize },
    Replace { at: usize, len: usize, seed: u64 },
}

fn edit() -> impl Strategy<Value = Edit> {
    let len = prop_oneof![1usize..100, 100usize..5_000, 5_000usize..250_000];
    prop_oneof![
        (any::<usize>(), len.clone(), any::<u64>()).prop_map(|(at, len, seed)| Edit::Insert {
            at,
            len,
            seed
        }),
        (any::<usize>(), len.clone()).prop_map(|(at, len)| Edit::Delete { at, len }),
        (any::<usize>(), len.clone(), any::<usize>()).prop_map(|(from, len, to)| Edit::Move {
            from,
            len,
            to
        }),
        (any::<usize>(), len, any::<u64>()).prop_map(|(at, len, seed)| Edit::Replace {
            at,
            len,
            seed
        }),
    ]
}

fn apply_edit(data: &mut Vec<u8>, edit: &Edit, binary: bool) {
    let fresh = |len: usize, seed: u64| {
        if binary {
            Rng::new(seed).bytes(len)
        } else {
            text(len, seed)[..len].to_vec()
        }
    };
    let n = data.len();
    match *edit {
        Edit::Insert { at, len, seed } => {
            let at = at % (n + 1);
            data.splice(at..at, fresh(len, seed));
        }
        Edit::Delete { at, len } if n > 0 => {
            let at = at % n;
            data.drain(at..(at + len).min(n));
        }
        Edit::Move { from, len, to } if n > 0 => {
            let from = from % n;
            let moved: Vec<u8> = data.drain(from..(from + len).min(n)).collect();
            let to = to % (data.len() + 1);
            data.splice(to..to, moved);
        }
        Edit::Replace { at, len, seed } if n > 0 => {
            let at = at % n;
            let end = (at + len).min(n);
            data.splice(at..end, fresh(end - at, seed));
        }
        _ => {}
    }
}

fn check_views(windows: &[Window]) {
    let mut previous = (0, 0);
    for w in windows {
        assert!(w.target_len as usize <= WINDOW_SIZE);
        assert!(
            w.target_len > 0 || w.source_len > 0,
            "window without purpose"
        );
        assert!(
            w.source_offset <= previous.0 + previous.1,
            "gap before the view"
        );
        assert!(w.source_len as usize <= WINDOW_SIZE);
        assert!(w.source_offset >= previous.0, "view start slid back");
        assert!(
            w.source_offset + w.source_len >= previous.0 + previous.1,
            "view end slid back"
        );
        previous = (w.source_offset, w.source_len);
    }
}

proptest! {
    #![proptest_config(crate::common::proptest_config(96))]

    #[test]
    fn delta_then_apply_gives_the_target(
        size in prop_oneof![Just(0usize), 1usize..200, 200usize..20_000, 20_000usize..700_000],
        binary in any::<bool>(),
        seed in any::<u64>(),
        edits in prop::collection::vec(edit(), 0..6),
        version in 0u8..3,
    ) {
        let source = if binary { Rng::new(seed).bytes(size) } else { text(size, seed)[..size].to_vec() };
        let mut target = source.clone();
        for e in &edits {
            apply_edit(&mut target, e, binary);
        }
        let windows = delta_windows(&source, &target);
        check_views(&windows);
        prop_assert_eq!(&apply_windows(&windows, &source).expect("applies"), &target);
        prop_assert_eq!(&apply_like_svn(&windows, &source), &target);
        prop_assert_eq!(&through_stream(&windows, &source, version), &target);
        // Unchanged bytes are copied, not sent: new data stays near the size of what the edits
        // brought in (moves may cost up to a window where a view cannot reach).
        let new: usize = windows.iter().map(|w| w.new_data.len()).sum();
        let brought: usize = edits.iter().map(|e| match *e {
            Edit::Insert { len, .. } | Edit::Replace { len, .. } | Edit::Move { len, .. } => len,
            Edit::Delete { .. } => 0,
        }).sum();
        prop_assert!(new <= target.len(), "new data {} > target {}", new, target.len());
        if !binary && edits.iter().all(|e| matches!(e, Edit::Insert { .. } | Edit::Delete { .. })) {
            prop_assert!(new <= brought + 3 * 1024 * (edits.len() + 1), "new data {} for {} brought", new, brought);
        }
    }

    #[test]
    fn unrelated_and_tiny_inputs(source in prop::collection::vec(any::<u8>(), 0..300), target in prop::collection::vec(any::<u8>(), 0..300)) {
        let windows = delta_windows(&source, &target);
        check_views(&windows);
        prop_assert_eq!(&apply_windows(&windows, &source).expect("applies"), &target);
        prop_assert_eq!(apply_like_svn(&windows, &source), target);
    }
}

#[test]
fn insertion_early_in_a_large_file_keeps_everything_after_it() {
    let source = text(2_000_000, 11);
    let inserted = text(50_000, 12);
    let target = [&source[..1000], &inserted, &source[1000..]].concat();
    let windows = delta_windows(&source, &target);
    check_views(&windows);
    let new: usize = windows.iter().map(|w| w.new_data.len()).sum();
    assert!(new < inserted.len() + 1000, "{new}");
    assert_eq!(apply_windows(&windows, &source).expect("applies"), target);
    assert_eq!(apply_like_svn(&windows, &source), target);
}

#[test]
fn many_windows_of_runs_and_empty_source() {
    let mut target = vec![0u8; 500_000];
    target.extend(text(300_000, 13));
    let windows = delta_windows(&[], &target);
    check_views(&windows);
    assert!(windows.iter().all(|w| w.source_len == 0));
    assert_eq!(apply_windows(&windows, &[]).expect("applies"), target);
    let zeros: usize = windows.iter().take(4).map(|w| w.new_data.len()).sum();
    assert!(zeros < 1000, "{zeros}");
}
