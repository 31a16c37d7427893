//! Live interop with the stock Subversion tools, which must be installed: these tests fail,
//! loudly, when `svnadmin` or `svnmucc` is missing.
//!
//! Ours to theirs: deltas from `delta_windows`, as svndiff 0, 1 and 2, are loaded with
//! `svnadmin load` (Subversion's own decoder and limits), read back with `svnlook cat` and
//! verified with `svnadmin verify`. Theirs to ours: files committed with `svnmucc`, dumped with
//! `svnadmin dump --deltas`, decoded and applied here.

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use svelto_delta::{apply_windows, decode_stream, delta_windows, encode_stream, Limits};

use crate::common::{text, Rng};
use crate::fixtures::dump_records;

fn run(program: &str, args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut child = Command::new(program)
        .args(args)
        .env("LANG", "C")
        .env("LC_ALL", "C")
        .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| {
            panic!("cannot run `{program}` ({e}): the stock Subversion tools are required for these tests (apt-get install subversion)")
        });
    if let Some(input) = stdin {
        let mut pipe = child.stdin.take().expect("stdin is piped");
        pipe.write_all(input).expect("write to child");
    }
    let output = child.wait_with_output().expect("child finishes");
    assert!(
        output.status.success(),
        "`{program} {}` failed: {}",
        args.join(" "),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn path_str(path: &Path) -> &str {
    path.to_str().expect("temporary paths are UTF-8")
}

/// Pairs of (base, new version) covering what delta_windows must get right.
fn cases() -> Vec<(&'static str, Vec<u8>, Vec<u8>)> {
    let base = text(1_200_000, 21);
    let block = text(70_000, 22);
    let small = text(30_000, 23);
    let binary = Rng::new(24).bytes(300_000);
    let mut binary_patched = binary.clone();
    binary_patched[150_000..150_100].fill(0xaa);
    binary_patched.splice(10_000..10_000, Rng::new(25).bytes(5_000));
    vec![
        (
            "insert",
            base.clone(),
            [&base[..400_000], &block, &base[400_000..]].concat(),
        ),
        (
            "delete",
            base.clone(),
            [&base[..300_000], &base[700_000..]].concat(),
        ),
        ("move", base.clone(), {
            let moved = &base[200_000..260_000];
            [
                &base[..200_000],
                &base[260_000..900_000],
                moved,
                &base[900_000..],
            ]
            .concat()
        }),
        (
            "small-edit",
            small.clone(),
            [&small[..100], b"new line\n", &small[100..]].concat(),
        ),
        ("binary", binary, binary_patched),
        (
            "from-empty",
            Vec::new(),
            [vec![0u8; 150_000], small.clone()].concat(),
        ),
        ("to-empty", small, Vec::new()),
    ]
}

fn node(out: &mut Vec<u8>, path: &str, action: &str, svndiff: &[u8]) {
    write!(
        out,
        "Node-path: {path}\nNode-kind: file\nNode-action: {action}\nText-delta: true\n\
         Text-content-length: {len}\nContent-length: {len}\n\n",
        len = svndiff.len()
    )
    .expect("write to Vec");
    out.extend_from_slice(svndiff);
    out.extend_from_slice(b"\n\n");
}

fn revision(out: &mut Vec<u8>, number: u64) {
    write!(
        out,
        "Revision-number: {number}\nProp-content-length: 10\nContent-length: 10\n\nPROPS-END\n\n"
    )
    .expect("write to Vec");
}

#[test]
fn svnadmin_load_accepts_our_deltas() {
    let tmp = tempfile::tempdir().expect("temporary directory");
    let repo = tmp.path().join("repo");
    let cases = cases();
    let mut dump = b"SVN-fs-dump-format-version: 3\n\n".to_vec();
    revision(&mut dump, 1);
    for (name, base, _) in &cases {
        for version in 0..=2u8 {
            let svndiff = encode_stream(&delta_windows(&[], base), version, 5).expect("encodes");
            node(&mut dump, &format!("{name}-v{version}"), "add", &svndiff);
        }
    }
    revision(&mut dump, 2);
    for (name, base, new) in &cases {
        for version in 0..=2u8 {
            let svndiff = encode_stream(&delta_windows(base, new), version, 5).expect("encodes");
            node(&mut dump, &format!("{name}-v{version}"), "change", &svndiff);
        }
    }
    run("svnadmin", &["create", path_str(&repo)], None);
    run("svnadmin", &["load", "-q", path_str(&repo)], Some(&dump));
    run("svnadmin", &["verify", "-q", path_str(&repo)], None);
    for (name, base, new) in &cases {
        for version in 0..=2u8 {
            let path = format!("{name}-v{version}");
            for (rev, expected) in [("1", base), ("2", new)] {
                let got = run("svnlook", &["cat", "-r", rev, path_str(&repo), &path], None).stdout;
                assert!(
                    got == *expected,
                    "svnlook cat -r {rev} {path}: {} bytes, expected {}",
                    got.len(),
                    expected.len()
                );
            }
        }
    }
}

#[test]
fn we_decode_live_svnadmin_dump_deltas() {
    let tmp = tempfile::tempdir().expect("temporary directory");
    let repo = tmp.path().join("repo");
    let config = tmp.path().join("config");
    run("svnadmin", &["create", path_str(&repo)], None);
    let url = format!("file://{}", path_str(&repo));
    let cases = cases();
    let mut sizes = Vec::new();
    for (step, pick) in [(1, 1usize), (2, 2)] {
        let mut args = vec![
            "--config-dir".to_owned(),
            path_str(&config).to_owned(),
            "-U".to_owned(),
            url.clone(),
            "-m".to_owned(),
            format!("r{step}"),
        ];
        for (i, case) in cases.iter().enumerate() {
            let content = if pick == 1 { &case.1 } else { &case.2 };
            let file = tmp.path().join(format!("{}.{step}", case.0));
            std::fs::write(&file, content).expect("write temporary file");
            args.extend([
                "put".to_owned(),
                path_str(&file).to_owned(),
                format!("f{i}"),
            ]);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        run("svnmucc", &args, None);
    }
    let dump = run(
        "svnadmin",
        &["dump", "--deltas", "-q", path_str(&repo)],
        None,
    )
    .stdout;
    let mut files: HashMap<String, Vec<u8>> = HashMap::new();
    let mut checked = 0;
    for record in dump_records(&dump) {
        let (Some(path), Some(svndiff)) = (record.headers.get("Node-path"), record.text) else {
            continue;
        };
        let base = files.remove(path).unwrap_or_default();
        let windows =
            decode_stream(svndiff, &Limits::default()).unwrap_or_else(|e| panic!("{path}: {e}"));
        let full = apply_windows(&windows, &base).unwrap_or_else(|e| panic!("{path}: {e}"));
        let i: usize = path[1..].parse().expect("f<number>");
        let rev: u64 = if base.is_empty() && record.headers["Node-action"] == "add" {
            1
        } else {
            2
        };
        let expected = if rev == 1 { &cases[i].1 } else { &cases[i].2 };
        assert!(
            full == *expected,
            "{path} r{rev}: reconstructed {} bytes, expected {}",
            full.len(),
            expected.len()
        );
        if rev == 2 {
            let ours =
                encode_stream(&delta_windows(&cases[i].1, &cases[i].2), 0, 0).expect("encodes");
            sizes.push((cases[i].0, svndiff.len(), ours.len()));
        }
        files.insert(path.clone(), full);
        checked += 1;
    }
    assert_eq!(checked, 2 * cases.len());
    println!(
        "{:<12} {:>16} {:>16}",
        "change", "svn svndiff0", "svelto svndiff0"
    );
    for (name, theirs, ours) in sizes {
        println!("{name:<12} {theirs:>16} {ours:>16}");
    }
}
