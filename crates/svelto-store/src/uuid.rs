//! `db/uuid`: the repository's UUID on one line with its CRC-32.

use crate::enc::checked_line;
use crate::error::Corruption;

/// The UUID line of `db/uuid`: the UUID, ` crc=` and the CRC-32 of the UUID as 8 hex
/// digits, and a newline (the form without the checksum is read too).
pub(crate) fn parse_uuid(text: &str) -> std::result::Result<String, Corruption> {
    let bad = |why: String| Corruption::new(format!("db/uuid: {why}"));
    let uuid = checked_line(text, "the UUID").map_err(bad)?;
    if !is_uuid(uuid) {
        return Err(bad(format!("'{}' is not a UUID", uuid.escape_debug())));
    }
    Ok(uuid.to_string())
}

/// APR's UUID syntax (`apr_uuid_parse`, as `svn_fs_set_uuid` checks it).
pub(crate) fn is_uuid(uuid: &str) -> bool {
    let b = uuid.as_bytes();
    b.len() == 36
        && b.iter()
            .enumerate()
            .all(|(i, &c)| c.is_ascii_hexdigit() || (c == b'-' && matches!(i, 8 | 13 | 18 | 23)))
}

pub(crate) fn render_uuid(uuid: &str) -> String {
    format!("{uuid} crc={:08x}\n", crc32fast::hash(uuid.as_bytes()))
}
