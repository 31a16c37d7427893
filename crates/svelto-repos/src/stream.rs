//! Reading texts in blocks.

use crate::{ReposError, Result};
use std::io::Read;

/// Fills `buf` from `r` as far as it goes (short only at the end of the stream); the
/// number of bytes read.
pub(crate) fn read_full(r: &mut dyn Read, buf: &mut [u8]) -> Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(err) => {
                return Err(ReposError::Io {
                    context: "reading file contents".into(),
                    err,
                })
            }
        }
    }
    Ok(n)
}
