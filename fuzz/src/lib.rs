//! The bodies of the fuzz targets: each feeds arbitrary bytes to one decoder of untrusted
//! input and checks that it answers (a value or an error) without panicking, looping or
//! allocating beyond its limits. Shared by the cargo-fuzz targets (`fuzz_targets/`) and by a
//! stable test over the seed corpus (crates/svelto-cli/tests/engine/fuzz_seeds.rs, which
//! includes this file), so that CI compiles and runs them without nightly.

use std::io::Read;

/// The svn:// item decoder, fed whole and in pieces (the split point is the first byte), and
/// each decoded item walked as a command or a response would be.
pub fn wire(data: &[u8]) {
    use svelto_wire::{Decoder, Limits};
    let limits = Limits {
        max_request: 1 << 20,
        ..Limits::default()
    };
    let whole = decode_all(&mut Decoder::new(limits), data, data.len().max(1));
    let step = usize::from(data.first().copied().unwrap_or(1)).max(1);
    let pieces = decode_all(&mut Decoder::new(limits), data, step);
    // Feeding the input in pieces must not change what is decoded.
    assert_eq!(whole, pieces, "decoding depends on how the input is split");
}

/// Decodes items from `data` arriving `step` bytes at a time; walks each one.
fn decode_all(
    d: &mut svelto_wire::Decoder,
    data: &[u8],
    step: usize,
) -> Result<Vec<svelto_wire::Item>, String> {
    let mut items = Vec::new();
    let (mut start, mut end) = (0, 0);
    loop {
        match d.decode(&data[start..end]) {
            Ok(Some((item, used))) => {
                assert!(used > 0 && used <= end - start);
                start += used;
                walk(&item);
                // What the encoder writes decodes to the same item, and is as long as
                // the server charges it against the memory budget.
                let bytes = item.to_bytes();
                assert_eq!(item.encoded_len(), bytes.len());
                let again = svelto_wire::decode(&bytes, d.limits());
                assert_eq!(again.ok().flatten().map(|(i, _)| i), Some(item.clone()));
                items.push(item);
            }
            Ok(None) if end < data.len() => end = (end + step).min(data.len()),
            Ok(None) => return Ok(items),
            Err(e) => return Err(e.to_string()),
        }
    }
}

/// Reads an item as the server reads a command, and as the client reads a response.
fn walk(item: &svelto_wire::Item) {
    use svelto_wire::{Response, TupleReader};
    let _ = Response::from_item(item);
    if let Ok(mut t) = TupleReader::from_item(item) {
        if let (Ok(_name), Ok(mut params)) = (t.word(), t.tuple()) {
            // The shapes commands' parameters take: revisions, paths, flags, lists.
            let _ = params.opt_rev();
            let _ = params.opt_string();
            let _ = params.bool();
            let _ = params.opt_tuple().map(|t| t.map(|mut t| t.opt_word()));
            let _ = params.list();
            let _ = params.bracket_rev();
            let _ = params.is_at_end();
        }
    }
}

/// svn:// command parsing as a connection does it before running anything: each item
/// decoded from the input read as a command (name, parameter tuple, the command's typed
/// request: `svelto_server::parse_command`); and the input after its first byte given as
/// the parameter tuple of the command that byte picks, so that every command's parser is
/// reached without the fuzzer having to find its name.
pub fn command(data: &[u8]) {
    use svelto_wire::{decode, Limits};
    let limits = Limits {
        max_request: 1 << 20,
        ..Limits::default()
    };
    let mut rest = data;
    while let Ok(Some((item, used))) = decode(rest, &limits) {
        if let Ok(name) = svelto_server::parse_command(&item) {
            assert!(svelto_server::command_names().any(|n| n == name));
        }
        if used == 0 || used > rest.len() {
            break;
        }
        rest = &rest[used..];
    }
    let names: Vec<&str> = svelto_server::command_names().collect();
    if let Some((&pick, params)) = data.split_first() {
        let name = names[usize::from(pick) % names.len()];
        let mut framed = format!("( {name} ( ").into_bytes();
        framed.extend_from_slice(params);
        framed.extend_from_slice(b" ) ) ");
        if let Ok(Some((item, _))) = decode(&framed, &limits) {
            if let Ok(parsed) = svelto_server::parse_command(&item) {
                assert_eq!(parsed, name);
            }
        }
    }
}

/// An svndiff stream (versions 0, 1 and 2, by its header), decoded window by window and
/// applied to a source made from the input.
pub fn svndiff(data: &[u8]) {
    use svelto_delta::{apply_windows, decode_stream, Limits};
    let limits = Limits::default();
    if let Ok(windows) = decode_stream(data, &limits) {
        let source: Vec<u8> = data.iter().rev().copied().collect();
        if let Ok(out) = apply_windows(&windows, &source) {
            let target: usize = windows.iter().map(|w| w.target_len as usize).sum();
            assert_eq!(out.len(), target);
        }
    }
    // A window as the store reads one (svndiff2 without the stream header).
    let _ = svelto_delta::parse_window(data, 2, &limits);
}

/// A dumpfile, read record by record with each text read to its end (a delta text
/// decoded as svndiff), as `svelto admin load` reads one.
pub fn dumpfile(data: &[u8]) {
    use svelto_dump::{DumpReader, Record};
    let mut r = DumpReader::new(data);
    let mut records = 0usize;
    while let Ok(Some(rec)) = r.next_record() {
        records += 1;
        assert!(records <= data.len() + 1, "more records than bytes");
        if let Record::Node(node) = rec {
            let mut text = Vec::new();
            if r.text().read_to_end(&mut text).is_ok() && node.text_delta {
                svndiff(&text);
            }
        }
    }
}

/// A record of the store: the first byte picks what the rest is (a record payload by tag,
/// `db/current`, a `db/revs` record, `db/uuid`).
pub fn store_record(data: &[u8]) {
    let Some((&kind, rest)) = data.split_first() else {
        return;
    };
    match kind {
        0xf0 => {
            if let Ok(text) = std::str::from_utf8(rest) {
                if let Ok(cur) = svelto_store::Current::parse(text) {
                    // What parses renders back to itself in its checked form.
                    let again = svelto_store::Current::parse(&cur.render()).ok();
                    assert_eq!(again, Some(cur));
                }
            }
        }
        0xf1 => {
            if let Ok(r) = svelto_store::RevRecord::decode(rest) {
                assert_eq!(svelto_store::RevRecord::decode(&r.encode()), Ok(r));
            }
        }
        0xf2 => {
            if let Ok(text) = std::str::from_utf8(rest) {
                let _ = svelto_store::parse_uuid_file(text);
            }
        }
        tag => {
            let _ = svelto_store::decode_record(tag, rest);
        }
    }
}

/// A whole repository damaged by the input, as a bad disk or a bad copy could leave it:
/// the input is a list of patches (file, offset, bytes) applied to a small loaded
/// repository, after which the CRC of every frame of `db/data` and `db/meta` is fixed, so
/// that the damage reaches the decoders and the walks over on-disk pointers. Opening,
/// verifying, dumping and reading every revision must answer without panicking, looping or
/// recursing without bound.
pub fn store_repo(data: &[u8]) {
    use std::sync::OnceLock;
    static TEMPLATE: OnceLock<Vec<(&'static str, Vec<u8>)>> = OnceLock::new();
    let template = TEMPLATE.get_or_init(|| {
        let dir = scratch().join("template");
        let _ = std::fs::remove_dir_all(&dir);
        svelto_repos::create(
            &svelto_store::LocalBackend,
            &dir,
            "00000000-0000-4000-8000-000000000000",
            "2026-01-01T00:00:00.000000Z",
        )
        .expect("create");
        let dump = include_bytes!("../../crates/svelto-testkit/fixtures/copies.dump");
        let opts = svelto_repos::LoadOptions::default();
        let mut w = svelto_store::Writer::open(&dir).expect("writer");
        svelto_repos::load(&mut w, &dump[..], opts, &mut |_| {}).expect("load");
        drop(w);
        // The files damage may reach first; both format files last.
        let names = [
            "db/data",
            "db/meta",
            "db/revs",
            "db/dedup",
            "db/revprops",
            "db/current",
            "db/uuid",
            "db/format",
            "format",
        ];
        names
            .iter()
            .map(|n| (*n, std::fs::read(dir.join(n)).expect("read")))
            .collect()
    });
    let mut files: Vec<(&str, Vec<u8>)> = template.clone();
    // Patches: [file] [offset: 2 bytes LE] [length] [bytes].
    let mut rest = data;
    while let [file, a, b, len, tail @ ..] = rest {
        let bytes = &mut files[usize::from(*file) % 7].1;
        let n = usize::from(*len).min(tail.len());
        let at = usize::from(u16::from_le_bytes([*a, *b])) % (bytes.len() + 1);
        let end = (at + n).min(bytes.len());
        bytes[at..end].copy_from_slice(&tail[..end - at]);
        rest = &tail[n..];
    }
    for (name, bytes) in files.iter_mut() {
        if *name == "db/data" || *name == "db/meta" {
            fix_frames(bytes);
        }
    }
    let dir = scratch().join("repo");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("db")).expect("mkdir");
    for (name, bytes) in &files {
        std::fs::write(dir.join(name), bytes).expect("write");
    }
    let opened = svelto_store::Repo::open(&dir);
    let Ok(repo) = opened else {
        assert!(!data.is_empty(), "the undamaged repository does not open");
        return;
    };
    let y = repo.youngest();
    let verified = svelto_repos::verify(&repo, 0, y, &mut |_| {});
    assert!(
        verified.is_ok() || !data.is_empty(),
        "the undamaged repository fails verify"
    );
    let opts = svelto_repos::DumpOptions {
        start: 0,
        end: y,
        incremental: false,
        deltas: true,
        filter: None,
    };
    let _ = svelto_repos::dump(&repo, &mut std::io::sink(), opts, &mut |_| {});
}

/// Recomputes the CRC of every frame (tag, length, payload, CRC-32) from byte 16 on, as
/// far as the lengths lead.
fn fix_frames(bytes: &mut [u8]) {
    let mut at = 16;
    while at + 9 <= bytes.len() {
        let len = u32::from_le_bytes([bytes[at + 1], bytes[at + 2], bytes[at + 3], bytes[at + 4]]);
        let end = at + 5 + len as usize;
        if end + 4 > bytes.len() {
            return;
        }
        let crc = crc32fast::hash(&bytes[at..end]);
        bytes[end..end + 4].copy_from_slice(&crc.to_le_bytes());
        at = end + 4;
    }
}

/// A directory of this process for scratch repositories (tmpfs where there is one).
pub fn scratch() -> std::path::PathBuf {
    let base = if std::path::Path::new("/dev/shm").is_dir() {
        std::path::PathBuf::from("/dev/shm")
    } else {
        std::env::temp_dir()
    };
    let dir = base.join(format!("svelto-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}
