//! Micro-benchmarks of the svn:// item codec on realistic traffic: a `get-dir` response
//! with 2,000 entries, a `log` response with many changed paths, and an editor drive
//! (`open-dir` / `add-file` / `apply-textdelta` / `textdelta-chunk` ...) as `update` sends.
//!
//! Run: `cargo bench -p svelto-wire --bench items`. Encoding writes prebuilt item trees into
//! a reused buffer; decoding frames and parses every top-level item of the encoded bytes,
//! either all in memory or arriving in 16 KiB reads as from a socket. Throughput is in
//! encoded bytes.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use svelto_wire::{command, success, Decoder, Item, Limits};

const DATE: &str = "2026-11-23T21:40:00.123456Z";

fn opt_string(s: &str) -> Item {
    Item::opt(Some(Item::string(s)))
}

fn props(pairs: &[(&str, &str)]) -> Item {
    Item::List(
        pairs
            .iter()
            .map(|(n, v)| Item::list(vec![Item::string(*n), Item::string(*v)]))
            .collect(),
    )
}

/// `( success ( rev props ( dirent ... ) ) )` for a directory of `n` entries.
fn get_dir_response(n: usize) -> Vec<Item> {
    let entries = (0..n)
        .map(|i| {
            let dir = i % 10 == 0;
            let name = if dir {
                format!("module-{i:05}")
            } else {
                format!("source_file_{i:05}.rs")
            };
            Item::list(vec![
                Item::string(name),
                Item::word(if dir { "dir" } else { "file" }),
                Item::Number(if dir {
                    0
                } else {
                    1_000 + (i as u64 * 37) % 50_000
                }),
                Item::bool(i % 7 == 0),
                Item::Number(1 + (i as u64 * 13) % 3_000),
                opt_string(DATE),
                opt_string("developer"),
            ])
        })
        .collect();
    let dir_props = props(&[
        ("svn:entry:committed-rev", "2999"),
        ("svn:entry:committed-date", DATE),
        ("svn:entry:last-author", "developer"),
        ("svn:entry:uuid", "00000000-0000-4000-8000-000000000000"),
        ("svn:ignore", "target\n*.o\n"),
    ]);
    vec![success(vec![
        Item::Number(3_000),
        dir_props,
        Item::List(entries),
    ])]
}

/// The items of a `log` response: `revs` log entries of `paths` changed paths each, `done`
/// and the final `( success ( ) )`.
fn log_response(revs: usize, paths: usize) -> Vec<Item> {
    let mut items: Vec<Item> = (0..revs)
        .map(|r| {
            let changed = (0..paths)
                .map(|p| {
                    let copy = if p % 25 == 0 {
                        Item::list(vec![
                            Item::string(format!("/trunk/src/module-{p:03}/file-{r}.c")),
                            Item::Number(r as u64),
                        ])
                    } else {
                        Item::empty_list()
                    };
                    Item::list(vec![
                        Item::string(format!("/branches/feature-{r}/src/module-{p:03}/file.c")),
                        Item::word(["M", "A", "D", "R"][p % 4]),
                        copy,
                        Item::list(vec![
                            Item::word("file"),
                            Item::bool(p % 3 != 0),
                            Item::bool(p % 5 == 0),
                        ]),
                    ])
                })
                .collect();
            Item::list(vec![
                Item::List(changed),
                Item::Number(10_000 - r as u64),
                opt_string("developer"),
                opt_string(DATE),
                opt_string("Refactor the module loader and fix the off-by-one in the parser.\n"),
                Item::bool(false),
                Item::bool(false),
                Item::Number(0),
                Item::empty_list(),
            ])
        })
        .collect();
    items.push(Item::word("done"));
    items.push(success(vec![]));
    items
}

/// An editor drive adding `dirs` directories of `files` files of `file_len` bytes each, as
/// `update` of a fresh checkout sends: the `SVN\0` header chunk, then the text in 16 KiB
/// `textdelta-chunk`s (plain bytes standing in for svndiff windows; the codec does not care).
fn editor_drive(dirs: usize, files: usize, file_len: usize) -> Vec<Item> {
    let text: Vec<u8> = b"fn main() { println!(\"hello\"); }\n"
        .iter()
        .copied()
        .cycle()
        .take(file_len)
        .collect();
    let mut items = vec![
        command("target-rev", vec![Item::Number(3_000)]),
        command(
            "open-root",
            vec![Item::opt(Some(Item::Number(2_999))), Item::string("d0")],
        ),
    ];
    for d in 0..dirs {
        let dir = format!("trunk/module-{d:03}");
        let token = format!("d{}", d + 1);
        items.push(command(
            "open-dir",
            vec![
                Item::string(dir.clone()),
                Item::string("d0"),
                Item::string(token.clone()),
                Item::opt(Some(Item::Number(2_999))),
            ],
        ));
        for f in 0..files {
            let ft = format!("c{d}.{f}");
            items.push(command(
                "add-file",
                vec![
                    Item::string(format!("{dir}/file-{f:03}.rs")),
                    Item::string(token.clone()),
                    Item::string(ft.clone()),
                    Item::empty_list(),
                ],
            ));
            items.push(command(
                "apply-textdelta",
                vec![Item::string(ft.clone()), Item::empty_list()],
            ));
            items.push(command(
                "textdelta-chunk",
                vec![Item::string(ft.clone()), Item::string(&b"SVN\0"[..])],
            ));
            for chunk in text.chunks(16 * 1024) {
                items.push(command(
                    "textdelta-chunk",
                    vec![Item::string(ft.clone()), Item::string(chunk)],
                ));
            }
            items.push(command("textdelta-end", vec![Item::string(ft.clone())]));
            items.push(command(
                "change-file-prop",
                vec![
                    Item::string(ft.clone()),
                    Item::string("svn:entry:committed-rev"),
                    opt_string("2999"),
                ],
            ));
            items.push(command(
                "close-file",
                vec![
                    Item::string(ft),
                    opt_string("d41d8cd98f00b204e9800998ecf8427e"),
                ],
            ));
        }
        items.push(command("close-dir", vec![Item::string(token)]));
    }
    items.push(command("close-dir", vec![Item::string("d0")]));
    items.push(command("close-edit", vec![]));
    items
}

fn encode_all(items: &[Item], out: &mut Vec<u8>) {
    out.clear();
    for item in items {
        item.encode(out);
    }
}

/// Decodes every item of `buf`, which holds whole items only; returns how many.
fn decode_all(buf: &[u8], limits: Limits) -> usize {
    let mut decoder = Decoder::new(limits);
    let mut rest = buf;
    let mut count = 0;
    while let Some((item, used)) = decoder.decode(rest).expect("valid items") {
        black_box(item);
        rest = &rest[used..];
        count += 1;
    }
    count
}

/// Like [`decode_all`], but with the bytes arriving `read` at a time into a buffer from
/// which decoded items are dropped, as a connection reads them.
fn decode_streamed(bytes: &[u8], read: usize, limits: Limits) -> usize {
    let mut decoder = Decoder::new(limits);
    let mut buf = Vec::with_capacity(2 * read);
    let mut start = 0;
    let mut count = 0;
    for piece in bytes.chunks(read) {
        buf.drain(..start);
        start = 0;
        buf.extend_from_slice(piece);
        while let Some((item, used)) = decoder.decode(&buf[start..]).expect("valid items") {
            black_box(item);
            start += used;
            count += 1;
        }
    }
    count
}

fn bench(c: &mut Criterion) {
    let limits = Limits::default();
    let cases = [
        ("get_dir_2000", get_dir_response(2_000)),
        ("log_500x40", log_response(500, 40)),
        ("editor_drive_20x50", editor_drive(20, 50, 6_000)),
    ];
    let mut g = c.benchmark_group("items");
    for (name, items) in &cases {
        let mut bytes = Vec::new();
        encode_all(items, &mut bytes);
        assert_eq!(decode_all(&bytes, limits), items.len(), "{name} decodes");
        assert_eq!(decode_streamed(&bytes, 16 * 1024, limits), items.len());
        g.throughput(Throughput::Bytes(bytes.len() as u64));

        let mut out = Vec::with_capacity(bytes.len());
        g.bench_function(format!("encode/{name}"), |b| {
            b.iter(|| {
                encode_all(black_box(items), &mut out);
                out.len()
            })
        });
        g.bench_function(format!("decode/{name}"), |b| {
            b.iter(|| decode_all(black_box(&bytes), limits))
        });
        g.bench_function(format!("decode_16k_reads/{name}"), |b| {
            b.iter(|| decode_streamed(black_box(&bytes), 16 * 1024, limits))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
