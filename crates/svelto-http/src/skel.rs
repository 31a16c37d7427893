//! Subversion's "skel" syntax, as the body of a `POST` to `!svn/me` carries it
//! (`( create-txn )`, `( create-txn-with-props (NAME VALUE ...) )`): lists in parentheses,
//! atoms either a bare word starting with a letter (`create-txn`) or a decimal length, one
//! space and that many bytes (`7 message`). Bounded in depth; the body's size bounds the
//! rest.

/// One node of a skel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Skel {
    Atom(Vec<u8>),
    List(Vec<Skel>),
}

/// Lists nested deeper than this are refused.
const MAX_DEPTH: usize = 32;

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0c')
}

fn is_delim(b: u8) -> bool {
    is_space(b) || b == b'(' || b == b')'
}

/// Parses a whole body as one skel (surrounding whitespace allowed).
pub fn parse(body: &[u8]) -> Result<Skel, String> {
    let mut pos = 0;
    let skel = parse_at(body, &mut pos, 0)?;
    while pos < body.len() && is_space(body[pos]) {
        pos += 1;
    }
    if pos != body.len() {
        return Err(format!("unexpected data after the skel at byte {pos}"));
    }
    Ok(skel)
}

fn parse_at(b: &[u8], pos: &mut usize, depth: usize) -> Result<Skel, String> {
    while *pos < b.len() && is_space(b[*pos]) {
        *pos += 1;
    }
    let Some(&c) = b.get(*pos) else {
        return Err("the skel ends early".into());
    };
    if c == b'(' {
        if depth >= MAX_DEPTH {
            return Err("the skel is nested too deeply".into());
        }
        *pos += 1;
        let mut items = Vec::new();
        loop {
            while *pos < b.len() && is_space(b[*pos]) {
                *pos += 1;
            }
            match b.get(*pos) {
                None => return Err("a list of the skel is not closed".into()),
                Some(b')') => {
                    *pos += 1;
                    return Ok(Skel::List(items));
                }
                Some(_) => items.push(parse_at(b, pos, depth + 1)?),
            }
        }
    }
    if c.is_ascii_digit() {
        let start = *pos;
        while *pos < b.len() && b[*pos].is_ascii_digit() {
            *pos += 1;
        }
        let len: usize = std::str::from_utf8(&b[start..*pos])
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("bad atom length at byte {start}"))?;
        if b.get(*pos).copied().is_none_or(|s| !is_space(s)) {
            return Err(format!("no space after the atom length at byte {start}"));
        }
        *pos += 1;
        let end = pos
            .checked_add(len)
            .filter(|&e| e <= b.len())
            .ok_or_else(|| format!("the atom at byte {start} runs past the end"))?;
        let atom = b[*pos..end].to_vec();
        *pos = end;
        return Ok(Skel::Atom(atom));
    }
    if c.is_ascii_alphabetic() {
        let start = *pos;
        while *pos < b.len() && !is_delim(b[*pos]) {
            *pos += 1;
        }
        return Ok(Skel::Atom(b[start..*pos].to_vec()));
    }
    Err(format!("unexpected byte 0x{c:02x} at byte {}", *pos))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn atom(s: &str) -> Skel {
        Skel::Atom(s.as_bytes().to_vec())
    }

    #[test]
    fn what_ra_serf_posts() {
        assert_eq!(
            parse(b"( create-txn )").expect("plain"),
            Skel::List(vec![atom("create-txn")])
        );
        assert_eq!(
            parse(b"(create-txn-with-props (svn:log 9 two words 7 svn:foo 0 ))").expect("props"),
            Skel::List(vec![
                atom("create-txn-with-props"),
                Skel::List(vec![
                    atom("svn:log"),
                    atom("two words"),
                    atom("svn:foo"),
                    atom("")
                ]),
            ])
        );
    }

    #[test]
    fn bad_skels_are_refused() {
        for bad in [
            &b""[..],
            b"(",
            b"(a",
            b"(5 abc)",
            b"(99999999999999999999999 a)",
            b"(a) b",
            b"(\x01)",
            b"(3abc)",
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
        let deep = "(".repeat(100) + &")".repeat(100);
        assert!(parse(deep.as_bytes()).is_err());
    }
}
