//! The fuzz targets' bodies (fuzz/src/lib.rs, included here) run on stable over the seed
//! corpus: every dump fixture, the svndiff texts of the delta dumps and of svelto-delta's
//! data, typical svn:// requests and responses, and every record of a loaded repository
//! (db/data and db/meta payloads by tag, db/current, db/revs records, db/uuid), patches of
//! a loaded repository's files, plus each
//! input a fuzzer once found a crash with (fuzz/regressions/TARGET/). So CI compiles and runs
//! the targets without nightly; `fuzz/run` fuzzes from the same seeds.
//!
//! With SVELTO_FUZZ_CORPUS=DIR the seeds are also written to DIR/TARGET/ (what `fuzz/run`
//! starts from).

#[path = "../../../../fuzz/src/lib.rs"]
mod bodies;

use std::fs;
use std::path::{Path, PathBuf};
use svelto_dump::{DumpReader, Record};

type Target = (&'static str, fn(&[u8]));

const TARGETS: [Target; 6] = [
    ("wire", bodies::wire),
    ("command", bodies::command),
    ("svndiff", bodies::svndiff),
    ("dumpfile", bodies::dumpfile),
    ("store_record", bodies::store_record),
    ("store_repo", bodies::store_repo),
];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn files_in(dir: &Path, ext: Option<&str>) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = fs::read_dir(dir)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    out.retain(|p| p.is_file() && ext.is_none_or(|x| p.extension().is_some_and(|e| e == x)));
    out.sort();
    out
}

fn dump_seeds() -> Vec<Vec<u8>> {
    let mut dumps = files_in(&svelto_testkit::fixtures_dir(), Some("dump"));
    dumps.extend(files_in(
        &workspace().join("crates/svelto-dump/tests/data"),
        Some("dump"),
    ));
    dumps.extend(files_in(
        &workspace().join("crates/svelto-delta/tests/data"),
        Some("dump"),
    ));
    dumps
        .iter()
        .map(|p| fs::read(p).expect("fixture"))
        .filter(|d| d.len() <= 256 << 10)
        .collect()
}

fn svndiff_seeds(dumps: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for d in dumps {
        let mut r = DumpReader::new(&d[..]);
        while let Ok(Some(rec)) = r.next_record() {
            if let Record::Node(n) = rec {
                let mut text = Vec::new();
                if std::io::Read::read_to_end(&mut r.text(), &mut text).is_ok() && n.text_delta {
                    out.push(text);
                }
            }
        }
    }
    for dir in ["fsfs7/revs", "fsfs8/revs"] {
        let d = workspace().join("crates/svelto-delta/tests/data").join(dir);
        out.extend(
            files_in(&d, None)
                .iter()
                .map(|p| fs::read(p).expect("read")),
        );
    }
    out
}

fn wire_seeds() -> Vec<Vec<u8>> {
    [
        &b"( success ( 2 2 ( ) ( edit-pipeline svndiff1 accepts-svndiff2 absent-entries depth \
           inherited-props log-revprops partial-replay ) ) ) "[..],
        b"( 2 ( edit-pipeline svndiff1 accepts-svndiff2 depth mergeinfo log-revprops ) \
           24:svn://127.0.0.1/repo/trunk 53:SVN/1.14.2 (x86_64-pc-linux-gnu) ra_svn ( ) ) ",
        b"( CRAM-MD5 ( ) ) 44:harry 2f5e8f1a7f3f9f3c0d6bbd5d3c0a1f2e3d4c5b6a ",
        b"( get-latest-rev ( ) ) ",
        b"( get-dir ( 5:trunk ( 3 ) true true ( kind size has-props created-rev ) false ) ) ",
        b"( update ( ( 7 ) 0: true infinity false false ) ) ( set-path ( 0: 6 false ( ) \
           infinity ) ) ( finish-report ( ) ) ",
        b"( log ( ( 0: ) ( 1 ) ( 9 ) true false 0 false revprops ( 10:svn:author ) ) ) ",
        b"( replay-range ( 0 2147483648 0 true ) ) ",
        b"( commit ( 3:msg ( ) false ( ) ) ) ( open-root ( ( 4 ) 2:d0 ) ) \
           ( add-file ( 3:a.c 2:d0 2:c1 ( ) ) ) ( apply-textdelta ( 2:c1 ( ) ) ) \
           ( textdelta-chunk ( 2:c1 4:SVN\x02 ) ) ( close-file ( 2:c1 ( 32:d41d8cd98f00b204e9800998ecf8427e ) ) ) \
           ( close-edit ( ) ) ",
        b"( failure ( ( 160006 19:No such revision 9 0: 0 ) ) ) ",
        b"( success ( ( ) 0: ) ) ( ( ( ( ( ( ( ( ( ( ) ) ) ) ) ) ) ) ) ) 0 0 0 0 0 0 0 0 ",
    ]
    .iter()
    .map(|b| b.to_vec())
    .collect()
}

/// `text` with each `'string'` written as an svn:// string (`LEN:string`).
fn quoted(text: &str) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, part) in text.split('\'').enumerate() {
        if i % 2 == 1 {
            out.extend_from_slice(format!("{}:", part.len()).as_bytes());
        }
        out.extend_from_slice(part.as_bytes());
    }
    out
}

/// For `command`: typical requests of every command the server runs (what `wire` gets),
/// and each command's typical parameters after the byte that picks it.
fn command_seeds() -> Vec<Vec<u8>> {
    let params: &[(&str, &str)] = &[
        ("reparent", "'svn://127.0.0.1/repo/trunk' "),
        ("get-latest-rev", ""),
        ("get-dated-rev", "'2026-11-25T12:00:00.000000Z' "),
        ("change-rev-prop", "3 'svn:log' 'new' "),
        ("change-rev-prop2", "3 'svn:log' ( 'new' ) ( false 'old' ) "),
        ("rev-proplist", "3 "),
        ("rev-prop", "3 'svn:author' "),
        (
            "commit",
            "'msg' ( ( 'a.c' 'opaquelocktoken:abc' ) ) false ( ( 'svn:log' 'msg' ) ) ",
        ),
        ("get-file", "'a.txt' ( 3 ) true true false "),
        (
            "get-dir",
            "'trunk' ( 3 ) true true ( kind size has-props created-rev ) false ",
        ),
        ("list", "'' ( 2 ) immediates ( kind size ) ( '*c' ) "),
        ("check-path", "'trunk' ( 3 ) "),
        ("stat", "'trunk' ( ) "),
        ("get-iprops", "'trunk' ( 3 ) "),
        ("update", "( 7 ) '' true infinity false false "),
        (
            "switch",
            "( 7 ) '' true 'svn://127.0.0.1/repo/branch' infinity false false ",
        ),
        ("status", "'' true ( 7 ) infinity "),
        (
            "diff",
            "( 7 ) '' true false 'svn://127.0.0.1/repo/tags' true infinity ",
        ),
        (
            "log",
            "( '' ) ( 1 ) ( 9 ) true false 0 false revprops ( 'svn:author' ) ",
        ),
        ("get-locations", "'trunk' 9 ( 1 5 8 ) "),
        ("get-location-segments", "'trunk' ( 9 ) ( 9 ) ( 0 ) "),
        ("get-file-revs", "'a.txt' ( 1 ) ( 9 ) true "),
        ("get-deleted-rev", "'a.txt' 1 9 "),
        ("get-mergeinfo", "( 'trunk' ) ( 9 ) inherited true "),
        ("lock", "'a.txt' ( 'note' ) false ( 3 ) "),
        (
            "lock-many",
            "( 'note' ) false ( ( 'a.txt' ( 3 ) ) ( 'b.txt' ( ) ) ) ",
        ),
        ("unlock", "'a.txt' ( 'opaquelocktoken:abc' ) false "),
        (
            "unlock-many",
            "false ( ( 'a.txt' ( 'opaquelocktoken:abc' ) ) ) ",
        ),
        ("get-lock", "'a.txt' "),
        ("get-locks", "'' ( infinity ) "),
        ("replay", "3 0 true "),
        ("replay-range", "0 2147483648 0 true "),
    ];
    let names: Vec<&str> = svelto_server::command_names().collect();
    let mut out = wire_seeds();
    let params: Vec<(&str, Vec<u8>)> = params.iter().map(|(n, p)| (*n, quoted(p))).collect();
    for (name, p) in &params {
        let Some(pick) = names.iter().position(|n| n == name) else {
            panic!("{name} is no command of the server");
        };
        let mut seed = vec![u8::try_from(pick).expect("fewer than 256 commands")];
        seed.extend_from_slice(p);
        out.push(seed);
        let mut whole = format!("( {name} ( ").into_bytes();
        whole.extend_from_slice(p);
        whole.extend_from_slice(b") ) ");
        out.push(whole);
    }
    // Every command has a seed, and each seed's request parses.
    assert_eq!(params.len(), names.len(), "a command without a seed");
    let mut refused = Vec::new();
    for (name, p) in &params {
        let mut whole = format!("( {name} ( ").into_bytes();
        whole.extend_from_slice(p);
        whole.extend_from_slice(b") ) ");
        let (item, _) = svelto_wire::decode(&whole, &svelto_wire::Limits::default())
            .expect("decodes")
            .expect("whole");
        if let Err(e) = svelto_server::parse_command(&item) {
            refused.push(format!("{name}: {e}"));
        }
    }
    assert!(refused.is_empty(), "seeds refused:\n{}", refused.join("\n"));
    out
}

/// Every framed record of `db/data` and `db/meta` as (tag, payload), `db/current`,
/// each `db/revs` record and `db/uuid` of the `mixed` scenario loaded, each prefixed as
/// `store_record` expects.
fn store_seeds() -> Vec<Vec<u8>> {
    let dir = svelto_testkit::tempdir();
    let (repo, _) = crate::damage::loaded_repo(dir.path());
    let db = repo.join("db");
    let mut out = Vec::new();
    for name in ["data", "meta"] {
        let bytes = fs::read(db.join(name)).expect("read");
        let mut at = 16;
        while at + 9 <= bytes.len() {
            let len = u32::from_le_bytes(bytes[at + 1..at + 5].try_into().expect("4")) as usize;
            let mut seed = vec![bytes[at]];
            seed.extend_from_slice(&bytes[at + 5..at + 5 + len]);
            out.push(seed);
            at += len + 9;
        }
        assert_eq!(at, bytes.len(), "db/{name} is not a sequence of frames");
    }
    let mut prefixed = |kind: u8, bytes: &[u8]| {
        let mut seed = vec![kind];
        seed.extend_from_slice(bytes);
        out.push(seed);
    };
    prefixed(0xf0, &fs::read(db.join("current")).expect("current"));
    prefixed(0xf2, &fs::read(db.join("uuid")).expect("uuid"));
    let revs = fs::read(db.join("revs")).expect("revs");
    for rec in revs[16..].chunks(48) {
        prefixed(0xf1, rec);
    }
    out
}

/// Patch lists for `store_repo` (file, offset, length, bytes): one for each file of `db/`
/// at a few offsets, and none (the repository as loaded).
fn repo_seeds() -> Vec<Vec<u8>> {
    let mut out = vec![Vec::new()];
    for file in 0..7u8 {
        for (i, at) in [0u16, 16, 40, 100, 400, 2000].iter().enumerate() {
            let mut seed = vec![file];
            seed.extend_from_slice(&at.to_le_bytes());
            seed.push(2);
            seed.extend_from_slice(&[0x7f ^ i as u8, file.wrapping_mul(37)]);
            out.push(seed);
        }
    }
    out
}

fn regressions(target: &str) -> Vec<Vec<u8>> {
    let dir = workspace().join("fuzz/regressions").join(target);
    files_in(&dir, None)
        .iter()
        .map(|p| fs::read(p).expect("read"))
        .collect()
}

#[test]
fn fuzz_bodies_run_over_the_seed_corpus() {
    let dumps = dump_seeds();
    let seeds: [Vec<Vec<u8>>; 6] = [
        wire_seeds(),
        command_seeds(),
        svndiff_seeds(&dumps),
        dumps.clone(),
        store_seeds(),
        repo_seeds(),
    ];
    let corpus = std::env::var_os("SVELTO_FUZZ_CORPUS").map(PathBuf::from);
    for ((name, body), seeds) in TARGETS.iter().zip(seeds) {
        assert!(seeds.len() >= 10, "{name}: only {} seeds", seeds.len());
        for (i, seed) in seeds.iter().enumerate() {
            body(seed);
            // Damaged copies too: each seed cut short and with a byte flipped.
            body(&seed[..seed.len() / 2]);
            let mut flipped = seed.clone();
            if let Some(b) = flipped.get_mut(i * 7 % seed.len().max(1)) {
                *b ^= 0x5a;
            }
            body(&flipped);
            if let Some(dir) = &corpus {
                let dir = dir.join(name);
                fs::create_dir_all(&dir).expect("mkdir");
                fs::write(dir.join(format!("seed-{i:04}")), seed).expect("write");
            }
        }
        for input in regressions(name) {
            body(&input);
        }
    }
    let _ = fs::remove_dir_all(bodies::scratch());
}
