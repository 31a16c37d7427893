//! Fixtures and helpers shared by the test modules.

use std::io::Read;
use std::path::PathBuf;
use std::process::Command;

use svelto_dump::{DumpError, DumpReader, Record};

/// The fixtures written by tests/data/make.sh.
pub const FIXTURES: [&str; 4] = ["full.dump", "deltas.dump", "incremental.dump", "rdump.dump"];

pub fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

pub fn fixture(name: &str) -> Vec<u8> {
    let path = data_dir().join(name);
    std::fs::read(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read fixture {}: {e} (regenerate with tests/data/make.sh)",
            path.display()
        )
    })
}

/// A record with its text (empty when it has none).
pub type Parsed = (Record, Vec<u8>);

/// Every record, texts read through `text()`. Text errors are unwrapped back into the
/// `DumpError` they carry.
pub fn parse_all(input: &[u8]) -> Result<Vec<Parsed>, DumpError> {
    let mut r = DumpReader::new(input);
    let mut out = Vec::new();
    while let Some(rec) = r.next_record()? {
        let mut text = Vec::new();
        r.text().read_to_end(&mut text).map_err(into_dump_error)?;
        out.push((rec, text));
    }
    Ok(out)
}

/// The `DumpError` inside an `io::Error` from `TextReader`.
pub fn into_dump_error(e: std::io::Error) -> DumpError {
    let inner = e
        .into_inner()
        .expect("TextReader errors on a slice always wrap a DumpError");
    *inner
        .downcast::<DumpError>()
        .expect("TextReader errors on a slice always wrap a DumpError")
}

/// Path of a Subversion binary, or a loud failure: these tests never skip.
pub fn require_tool(name: &str) -> PathBuf {
    let path = PathBuf::from("/usr/bin").join(name);
    let ok = Command::new(&path)
        .arg("--version")
        .arg("--quiet")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    assert!(
        ok,
        "{name} is required by this test but {} cannot be run; install Subversion \
         (apt-get install subversion)",
        path.display()
    );
    path
}
