//! What the first (uncached) view of a highlighted file costs: the 600-line Rust-like
//! text of `bench/web.sh` (`big.rs`), a real Rust source (this crate's `browse.rs`) and a
//! C-like text such as `svelto-gen` writes, each highlighted without the cache, by the
//! quick lexer (`quick/`) and by syntect's grammar for the same language (`grammar/`).
//!
//! Run: `cargo bench -p svelto-web --bench highlight`. Throughput is in lines.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use svelto_web::highlight::highlight_uncached;

/// `bench/web.sh`'s `big.rs` at r1: 600 lines of `let` statements with a string and a
/// comment each.
fn big_rs() -> String {
    (1..=600)
        .map(|i| format!("    let x_{i} = compute({i}, \"text {i}\"); // note {i}\n"))
        .collect()
}

/// About 600 lines of C: a license header, includes, functions with nested blocks.
fn c_file() -> String {
    let mut s = String::from(
        "/*\n * Licensed to the Apache Software Foundation (ASF) under one\n * or more contributor license agreements.\n */\n\n#include <stdio.h>\n#include \"svn_error.h\"\n\n",
    );
    let mut i = 0;
    while s.lines().count() < 600 {
        i += 1;
        s.push_str(&format!(
            "/* Return the {i}th window of BATON, or NULL. */\nstatic svn_error_t *\nwindow_{i}(void *baton, apr_size_t len, int flags)\n{{\n  int count = {i};\n  if (len > 0x{i:x} && flags & 4)\n    {{\n      const char *msg = \"window %d: \\\"short\\\"\\n\";\n      printf(msg, count); /* note */\n      return SVN_NO_ERROR;\n    }}\n  return svn_error_create(SVN_ERR_BASE, NULL, \"no window\");\n}}\n\n"
        ));
    }
    s
}

fn highlight(c: &mut Criterion) {
    let texts = [
        ("big.rs", big_rs()),
        ("browse.rs", include_str!("../src/browse.rs").to_string()),
        ("window.c", c_file()),
    ];
    let mut g = c.benchmark_group("highlight_uncached");
    g.sample_size(10);
    for (name, text) in &texts {
        g.throughput(Throughput::Elements(text.lines().count() as u64));
        for (kind, grammar) in [("quick", false), ("grammar", true)] {
            // The grammar's regexes compile on its first use: not part of a view's cost.
            highlight_uncached(name, text, grammar).expect("highlighted");
            g.bench_function(format!("{kind}/{name}"), |b| {
                b.iter(|| highlight_uncached(black_box(name), black_box(text), grammar))
            });
        }
    }
    g.finish();
}

criterion_group!(benches, highlight);
criterion_main!(benches);
