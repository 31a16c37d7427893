//! Large revisions (docs/cluster.md, "Large revisions") against the real rig, with
//! `chunk-bytes = 5242880` (5 MiB, the smallest part S3 and weed take): a segment larger than
//! a chunk goes up as a multipart upload of 5 MiB parts and comes down on a cold front end by
//! ranged GETs of 5 MiB, byte for byte;
//! `svelto admin load --cluster` and `dump` round-trip it; a front end killed in the middle
//! of such an upload publishes nothing and the collector aborts its upload.

use std::path::Path;
use std::time::{Duration, Instant};

use object_store::multipart::MultipartStore;
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStoreExt, PutPayload};
use svelto_testkit::Run;

use super::{bucket_client, objects, runtime, svelto_bin, svn, svnmucc, Rig};

const CHUNK: &str = "chunk-bytes = 5242880\n";

/// `len` bytes no compressor shrinks (xorshift), different for each `seed`.
fn noise(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

fn put_file(dir: &Path, url: &str, name: &str, bytes: &[u8]) -> svelto_testkit::Outcome {
    let file = dir.join(format!("{name}.upload-src"));
    std::fs::write(&file, bytes).expect("the file");
    svnmucc(
        &format!("add {name}"),
        &[
            "put",
            file.to_str().expect("a UTF-8 path"),
            &format!("{url}/{name}"),
        ],
    )
}

fn cat(url: &str) -> Vec<u8> {
    Run::tool("svn")
        .args(["cat", "--non-interactive", url])
        .timeout(Duration::from_secs(120))
        .success()
        .stdout
}

fn admin(args: &[&str], file: &Path, tail: &[&str]) -> svelto_testkit::Outcome {
    Run::new(svelto_bin())
        .arg("admin")
        .args(args)
        .arg("--cluster")
        .arg(file)
        .args(tail)
        .timeout(Duration::from_secs(180))
        .output()
}

/// A dump without its `UUID: ...` line.
fn without_uuid(dump: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(dump.len());
    let mut rest = dump;
    while !rest.is_empty() {
        let end = rest
            .iter()
            .position(|&b| b == b'\n')
            .map_or(rest.len(), |i| i + 1);
        let (line, tail) = rest.split_at(end);
        if !(out.len() < 200 && line.starts_with(b"UUID: ")) {
            out.extend_from_slice(line);
        }
        rest = tail;
    }
    out
}

fn youngest(url: &str) -> u64 {
    svn(&["info", "--show-item", "revision", url])
        .trim()
        .parse()
        .expect("a revision number")
}

#[test]
fn a_large_revision_goes_up_in_chunks_and_comes_down_byte_identical() {
    let (rig, servers) = Rig::start_with(2, &[CHUNK, CHUNK]);
    let dir = rig.dir.path();
    let url = |i: usize| servers[i].url("proj");
    // 16 MB: four parts of 5 MiB, the last shorter.
    let big = noise(16_000_000, 1);
    let out = put_file(dir, &url(0), "big.bin", &big);
    assert!(out.success(), "{}", out.stderr_text());
    let listed = objects(&rig._s3);
    let segments: Vec<(&String, &u64)> = listed
        .iter()
        .filter(|(k, _)| k.contains("/proj/seg/000000000001-"))
        .collect();
    assert_eq!(segments.len(), 1, "{listed:?}");
    assert!(*segments[0].1 > 16_000_000, "{segments:?}");
    assert!(
        !listed.keys().any(|k| k.ends_with(".upload")),
        "an upload record left: {listed:?}"
    );
    // B's cache has r0 only: its first read fetches r1 by ranged GETs.
    assert_eq!(cat(&format!("{}/big.bin", url(1))), big);
    let export = dir.join("export-b");
    svn(&["export", &url(1), export.to_str().expect("a UTF-8 path")]);
    assert_eq!(
        std::fs::read(export.join("big.bin")).expect("exported"),
        big
    );

    // A revision property change of the large youngest revision replaces its segment by a
    // large one; B, holding r1, appends only the new bytes.
    let msg = dir.join("msg");
    std::fs::write(&msg, "a large revision, described again").expect("msg");
    let out = Run::new(svelto_bin())
        .args(["admin", "setlog", "--cluster"])
        .arg(&rig.files[0])
        .args(["proj", "-r", "1", "--bypass-hooks"])
        .arg(&msg)
        .timeout(Duration::from_secs(120))
        .output();
    assert!(out.success(), "setlog: {}", out.stderr_text());
    let log = svn(&["log", "-r", "1", &url(1)]);
    assert!(log.contains("a large revision, described again"), "{log}");
    assert_eq!(cat(&format!("{}/big.bin", url(1))), big);

    // The cluster's dump, loaded into another cluster repository with 5 MiB chunks and into
    // one machine, dumps the same bytes from both.
    let dump = admin(&["dump", "-q"], &rig.files[1], &["proj"]);
    assert!(dump.success(), "{}", dump.stderr_text());
    let dump_file = dir.join("proj.dump");
    std::fs::write(&dump_file, &dump.stdout).expect("dump");
    let created = admin(&["create"], &rig.files[1], &["copy"]);
    assert!(created.success(), "{}", created.stderr_text());
    let started = Instant::now();
    let loaded = admin(
        &["load", "-q"],
        &rig.files[1],
        &["copy", "-F", dump_file.to_str().expect("a UTF-8 path")],
    );
    assert!(loaded.success(), "{}", loaded.stderr_text());
    eprintln!(
        "load --cluster of {} bytes: {:?}",
        dump.stdout.len(),
        started.elapsed()
    );
    let single = dir.join("single-copy");
    Run::new(svelto_bin())
        .args(["admin", "create"])
        .arg(&single)
        .success();
    Run::new(svelto_bin())
        .args(["admin", "load", "-q", "-F"])
        .arg(&dump_file)
        .arg(&single)
        .success();
    let from_cluster = admin(&["dump", "-q"], &rig.files[0], &["copy"]);
    assert!(from_cluster.success(), "{}", from_cluster.stderr_text());
    let from_single = Run::new(svelto_bin())
        .args(["admin", "dump", "-q"])
        .arg(&single)
        .success()
        .stdout;
    // Each repository has its own UUID (the cluster's keeps the one it was created with).
    let (a, b) = (
        without_uuid(&from_cluster.stdout),
        without_uuid(&from_single),
    );
    if a != b {
        let at = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
        let show = |d: &[u8]| {
            String::from_utf8_lossy(&d[at.saturating_sub(200)..(at + 200).min(d.len())])
                .into_owned()
        };
        panic!(
            "the dumps differ at byte {at} ({} and {} bytes):\n{}\n----\n{}",
            a.len(),
            b.len(),
            show(&a),
            show(&b)
        );
    }
    assert!(
        from_cluster.stdout.len() > 16_000_000,
        "{}",
        from_cluster.stdout.len()
    );
    let listed = objects(&rig._s3);
    assert!(
        listed
            .iter()
            .any(|(k, n)| k.contains("/copy/seg/000000000001-") && *n > 16_000_000),
        "{listed:?}"
    );
}

#[test]
fn a_front_end_killed_during_a_chunked_upload_publishes_nothing_and_gc_aborts_it() {
    let (rig, mut servers) = Rig::start_with(2, &[CHUNK, CHUNK]);
    let dir = rig.dir.path();
    let (url_a, url_b) = (servers[0].url("proj"), servers[1].url("proj"));
    // 64 MB in 5 MiB parts: long enough to be caught in the middle.
    let big = noise(64_000_000, 2);
    let file = dir.join("big.src");
    std::fs::write(&file, &big).expect("the file");
    let target = format!("{url_a}/big.bin");
    let src = file.to_str().expect("a UTF-8 path").to_owned();
    let client = std::thread::spawn(move || svnmucc("a large one", &["put", &src, &target]));
    let deadline = Instant::now() + Duration::from_secs(120);
    let marker = loop {
        let listed = objects(&rig._s3);
        if let Some(k) = listed.keys().find(|k| k.ends_with(".upload")) {
            break k.clone();
        }
        assert!(
            Instant::now() < deadline,
            "no upload record appeared: {listed:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    servers[0].kill_hard();
    let out = client.join().expect("svnmucc");
    assert!(
        !out.success(),
        "the commit was acknowledged: {}",
        out.stdout_text()
    );
    assert!(marker.contains("/proj/seg/000000000001-"), "{marker}");
    // Nothing of r1 is visible; the upload is open and its record is there.
    assert_eq!(youngest(&url_b), 0);
    let store = bucket_client(&rig._s3);
    let segment_key = marker.strip_suffix(".upload").expect("a record").to_owned();
    let segment = ObjectPath::from(segment_key.as_str());
    let id = runtime()
        .block_on(async {
            store
                .get(&ObjectPath::from(marker.as_str()))
                .await?
                .bytes()
                .await
        })
        .expect("the upload record");
    let id = String::from_utf8(id.to_vec()).expect("an upload id");
    runtime()
        .block_on(store.put_part(&segment, &id, 900, PutPayload::from("x")))
        .expect("the upload is still open");
    assert!(!objects(&rig._s3).contains_key(&segment_key));

    // The next commits (through B, once A's lease is gone) succeed.
    let (r1, _) = super::put(dir, &url_b, "small.txt", "after the kill\n");
    assert_eq!(r1, 1);
    let (r2, _) = super::put(dir, &url_b, "small.txt", "and once more\n");
    assert_eq!(r2, 2);
    assert_eq!(
        Run::tool("svn")
            .args(["cat", "--non-interactive", &format!("{url_b}/small.txt")])
            .success()
            .stdout_text(),
        "and once more\n"
    );

    // The collector aborts the dead attempt's upload and deletes its record.
    let out = Run::new(svelto_bin())
        .args(["admin", "gc", "--cluster"])
        .arg(&rig.files[1])
        .args(["proj", "--min-age", "0"])
        .success()
        .stdout_text();
    assert!(out.contains(&format!("ended upload {marker}")), "{out}");
    let listed = objects(&rig._s3);
    assert!(!listed.contains_key(&marker), "{listed:?}");
    assert!(!listed.contains_key(&segment_key), "{listed:?}");
    let again = runtime().block_on(store.put_part(&segment, &id, 901, PutPayload::from("x")));
    assert!(
        again.is_err(),
        "the upload is still open after the collector's pass"
    );
    // A second pass finds nothing more to do.
    let out = Run::new(svelto_bin())
        .args(["admin", "gc", "--cluster"])
        .arg(&rig.files[1])
        .args(["proj", "--min-age", "0"])
        .success()
        .stdout_text();
    assert!(!out.contains("ended upload"), "{out}");
}

#[test]
fn a_corrupt_chunk_is_a_clear_error_naming_the_key() {
    let (rig, servers) = Rig::start_with(2, &[CHUNK, CHUNK]);
    let dir = rig.dir.path();
    let big = noise(12_000_000, 3);
    let out = put_file(dir, &servers[0].url("proj"), "big.bin", &big);
    assert!(out.success(), "{}", out.stderr_text());
    let listed = objects(&rig._s3);
    let key = listed
        .keys()
        .find(|k| k.contains("/proj/seg/000000000001-"))
        .expect("r1's segment")
        .clone();
    // One byte flipped in its third chunk.
    let store = bucket_client(&rig._s3);
    let path = ObjectPath::from(key.as_str());
    let mut bytes = runtime()
        .block_on(async { store.get(&path).await?.bytes().await })
        .expect("the segment")
        .to_vec();
    bytes[11_000_000] ^= 0x40;
    runtime()
        .block_on(store.put(&path, PutPayload::from(bytes)))
        .expect("put back");
    let out = Run::tool("svn")
        .args([
            "cat",
            "--non-interactive",
            &format!("{}/big.bin", servers[1].url("proj")),
        ])
        .timeout(Duration::from_secs(60))
        .output();
    assert!(!out.success(), "a corrupt segment was served");
    let err = out.stderr_text();
    assert!(
        err.contains(&key) && err.contains("CRC-32"),
        "the error names neither the key nor the CRC: {err}"
    );
    assert!(servers[1].is_running(), "the front end died");
}
