use std::collections::BTreeMap;

/// A property list. Names and values are bytes; the map keeps them sorted bytewise,
/// which is the order Subversion writes them in (`svn_sort_compare_items_lexically`).
pub type PropList = BTreeMap<Vec<u8>, Vec<u8>>;

/// Subversion's rule for `svn:*` properties (`svn_repos__validate_prop`): their values must
/// be UTF-8 and use LF line endings only. Returns a message naming the rule broken.
pub fn validate_svn_prop(name: &[u8], value: &[u8]) -> Result<(), String> {
    if !name.starts_with(b"svn:") {
        return Ok(());
    }
    let shown = String::from_utf8_lossy(name);
    if std::str::from_utf8(value).is_err() {
        return Err(format!(
            "Cannot accept '{shown}' property because it is not encoded in UTF-8"
        ));
    }
    if value.contains(&b'\r') {
        return Err(format!(
            "Cannot accept non-LF line endings in '{shown}' property"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn svn_props_must_be_utf8_lf() {
        assert!(validate_svn_prop(b"svn:log", b"fine\n").is_ok());
        assert!(validate_svn_prop(b"svn:log", b"bad\r\n").is_err());
        assert!(validate_svn_prop(b"svn:log", b"\xff").is_err());
        assert!(validate_svn_prop(b"user:bin", b"\xff\r").is_ok());
    }
}
