//! The memory of `svelto admin load` and `dump` against svnadmin's (issue 18: within twice
//! svnadmin's, whatever the history): a history of many texts, 400 versions of 300 KB
//! files (120 MB of contents), is more than the 64 MiB read cache an admin handle had,
//! so a load or dump that kept what it read until the cache was full peaked at 104 and
//! 59 MB against svnadmin's 22 MB. Peaks are the children's `ru_maxrss`, reported by
//! GNU time when each has exited (no polling to miss the peak).

use std::io::{BufWriter, Write};
use std::path::Path;
use std::time::Duration;

use svelto_testkit::generate::{NoiseStream, Sha1Sink};
use svelto_testkit::{svnadmin_create, Run};

use crate::common::SveltoRepo;

const REVISIONS: usize = 25;
const FILES: usize = 16;
const FILE_SIZE: usize = 300_000;

/// A format-2 dump: `f00`..`f15` added in r1, and in each later revision every file gets
/// 100 new bytes somewhere (each version a small delta from the one before, as most
/// histories are; each is reconstructed whole by a load that deltas against it and by a
/// dump that writes it).
fn write_many_texts_dump(path: &Path) {
    let file = std::fs::File::create(path).expect("the dump can be created");
    let mut out = BufWriter::with_capacity(1 << 20, file);
    let mut noise = NoiseStream::new(18);
    let mut texts: Vec<Vec<u8>> = (0..FILES)
        .map(|_| {
            let mut t = vec![0u8; FILE_SIZE];
            noise.fill(&mut t);
            t
        })
        .collect();
    let props = "K 8\nsvn:date\nV 27\n2026-11-25T12:00:00.000000Z\nPROPS-END\n";
    let mut w = |bytes: &[u8]| out.write_all(bytes).expect("the dump is written");
    w(b"SVN-fs-dump-format-version: 2\n\nUUID: 6a4d3c1e-0000-4000-8000-000000000018\n\n");
    for rev in 0..=REVISIONS {
        w(format!(
            "Revision-number: {rev}\nProp-content-length: {0}\nContent-length: {0}\n\n{props}\n",
            props.len()
        )
        .as_bytes());
        if rev == 0 {
            continue;
        }
        for (i, text) in texts.iter_mut().enumerate() {
            let at = (rev * 7919 + i * 104_729) % (FILE_SIZE - 100);
            noise.fill(&mut text[at..at + 100]);
            let action = if rev == 1 { "add" } else { "change" };
            w(format!(
                "Node-path: f{i:02}\nNode-kind: file\nNode-action: {action}\n\
                 Text-content-length: {FILE_SIZE}\nContent-length: {FILE_SIZE}\n\n"
            )
            .as_bytes());
            w(text);
            w(b"\n\n");
        }
    }
    out.flush().expect("the dump is written");
}

/// `program args...` run under GNU time: the child's peak resident memory in KiB, and
/// its standard output's SHA-1 and length.
fn peak_kib(
    dir: &Path,
    name: &str,
    program: &str,
    args: &[&dyn AsRef<std::ffi::OsStr>],
) -> (u64, (String, u64)) {
    let report = dir.join(format!("{name}.time"));
    let sink = Sha1Sink::new();
    let mut run = Run::new("/usr/bin/time")
        .args(["-f", "%M", "-o"])
        .arg(&report)
        .arg(program);
    for a in args {
        run = run.arg(a);
    }
    run.stdout_sink(sink.clone())
        .timeout(Duration::from_secs(600))
        .success();
    let text = std::fs::read_to_string(&report)
        .unwrap_or_else(|e| panic!("GNU time's report {report:?} cannot be read: {e}"));
    let kib = text
        .trim()
        .lines()
        .last()
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or_else(|| panic!("GNU time's report for {name} is not a number: {text:?}"));
    (kib, sink.result())
}

#[test]
fn load_and_dump_of_many_texts_stay_within_twice_svnadmins_memory() {
    let svelto_repo = SveltoRepo::create();
    let fsfs = svnadmin_create();
    let dir = svelto_repo.dir();
    let dump = dir.join("many.dump");
    write_many_texts_dump(&dump);
    let svelto_bin = env!("CARGO_BIN_EXE_svelto");

    let (svelto_load, _) = peak_kib(
        dir,
        "svelto-load",
        svelto_bin,
        &[&"admin", &"load", &"-q", &"-F", &dump, &svelto_repo.path()],
    );
    let (svnadmin_load, _) = peak_kib(
        dir,
        "svnadmin-load",
        "svnadmin",
        &[
            &"load",
            &"-q",
            &"--no-flush-to-disk",
            &"-F",
            &dump,
            &fsfs.path(),
        ],
    );
    std::fs::remove_file(&dump).expect("the dump can be removed");
    let (svelto_dump, svelto_out) = peak_kib(
        dir,
        "svelto-dump",
        svelto_bin,
        &[&"admin", &"dump", &"-q", &svelto_repo.path()],
    );
    let (svnadmin_dump, svnadmin_out) = peak_kib(
        dir,
        "svnadmin-dump",
        "svnadmin",
        &[&"dump", &"-q", &fsfs.path()],
    );
    assert_eq!(
        svelto_out, svnadmin_out,
        "svelto admin dump differs from svnadmin dump of the same history (sha1, length)"
    );
    eprintln!(
        "many texts: load {} MiB (svnadmin {} MiB), dump {} MiB (svnadmin {} MiB)",
        svelto_load >> 10,
        svnadmin_load >> 10,
        svelto_dump >> 10,
        svnadmin_dump >> 10
    );
    for (what, svelto, svnadmin) in [
        ("load", svelto_load, svnadmin_load),
        ("dump", svelto_dump, svnadmin_dump),
    ] {
        assert!(
            svelto <= 2 * svnadmin,
            "svelto admin {what} peaked at {} MiB resident, more than twice svnadmin {what}'s \
             {} MiB on the same history of 120 MB of texts",
            svelto >> 10,
            svnadmin >> 10
        );
    }
}
