//! A 200 MB file: loaded and dumped back identically, streamed, with the
//! memory of `svelto admin load` and `dump` staying far below the file's size.

use std::time::Duration;

use svelto_testkit::generate::{write_big_file_dump, Sha1Sink};

use crate::common::{svelto, SveltoRepo};

const FILE_SIZE: u64 = 200 * 1024 * 1024;
/// "Well below 200 MB": a streaming load or dump needs buffers, not the file.
const PEAK_RSS_LIMIT_KIB: u64 = 100 * 1024;

#[test]
fn a_200_mb_file_loads_and_dumps_back_identically_in_bounded_memory() {
    let repo = SveltoRepo::create();
    let dump_path = repo.dir().join("big.dump");
    let expected = write_big_file_dump(&dump_path, FILE_SIZE).expect("the big dump is written");

    let load = svelto()
        .args(["admin", "load", "-q", "-F"])
        .arg(&dump_path)
        .arg(repo.path())
        .watch_memory()
        .timeout(Duration::from_secs(600))
        .success();
    let load_peak = load.peak_rss_kib.expect("memory was watched");
    // The dump file is not needed any more; free the space before dumping.
    std::fs::remove_file(&dump_path).expect("the big dump can be removed");
    assert!(
        load_peak < PEAK_RSS_LIMIT_KIB,
        "svelto admin load of a {} MiB file peaked at {} MiB resident (limit {} MiB): \
         file contents must be streamed, not held in memory",
        FILE_SIZE >> 20,
        load_peak >> 10,
        PEAK_RSS_LIMIT_KIB >> 10
    );

    let info = repo.info();
    assert_eq!(info.youngest, 2);

    let sink = Sha1Sink::new();
    let dump = svelto()
        .args(["admin", "dump", "-q"])
        .arg(repo.path())
        .stdout_sink(sink.clone())
        .watch_memory()
        .timeout(Duration::from_secs(600))
        .success();
    let (sha1, len) = sink.result();
    assert_eq!(
        (sha1.as_str(), len),
        (expected.dump_sha1.as_str(), expected.dump_size),
        "the dump of the big file differs from the dump that was loaded (sha1, length)"
    );
    let dump_peak = dump.peak_rss_kib.expect("memory was watched");
    assert!(
        dump_peak < PEAK_RSS_LIMIT_KIB,
        "svelto admin dump of a {} MiB file peaked at {} MiB resident (limit {} MiB)",
        FILE_SIZE >> 20,
        dump_peak >> 10,
        PEAK_RSS_LIMIT_KIB >> 10
    );
    eprintln!(
        "big file: load {:.1?} peak {} MiB; dump {:.1?} peak {} MiB",
        load.elapsed,
        load_peak >> 10,
        dump.elapsed,
        dump_peak >> 10
    );
}
