//! Skels, the wc.db's serialization of property lists (`NODES.properties`,
//! `NODES.inherited_props`): `(name value name value)`, each atom bare when it is short,
//! starts with a letter and holds no white space or brackets, else `LEN SP bytes`.

/// Appends one atom.
pub fn atom(out: &mut Vec<u8>, bytes: &[u8]) {
    if is_bare(bytes) {
        out.extend_from_slice(bytes);
    } else {
        out.extend_from_slice(bytes.len().to_string().as_bytes());
        out.push(b' ');
        out.extend_from_slice(bytes);
    }
}

fn is_bare(bytes: &[u8]) -> bool {
    let space = |b: u8| matches!(b, b' ' | b'\t' | b'\n' | 0x0c | b'\r');
    let bracket = |b: u8| matches!(b, b'(' | b')' | b'[' | b']');
    match bytes.split_first() {
        Some((first, rest)) if bytes.len() < 100 && first.is_ascii_alphabetic() => {
            rest.iter().all(|&b| !space(b) && !bracket(b))
        }
        _ => false,
    }
}

/// A list of atoms: `(a b c)` (a work queue item: `(file-install RELPATH 0 1)`).
pub fn list(atoms: &[&[u8]]) -> Vec<u8> {
    let mut out = vec![b'('];
    for (i, a) in atoms.iter().enumerate() {
        if i > 0 {
            out.push(b' ');
        }
        atom(&mut out, a);
    }
    out.push(b')');
    out
}

/// A property list as a skel, in the order given.
pub fn proplist<'a>(props: impl IntoIterator<Item = (&'a [u8], &'a [u8])>) -> Vec<u8> {
    let mut out = vec![b'('];
    for (name, value) in props {
        if out.len() > 1 {
            out.push(b' ');
        }
        atom(&mut out, name);
        out.push(b' ');
        atom(&mut out, value);
    }
    out.push(b')');
    out
}

/// Properties as (name, value) pairs.
pub type Props = Vec<(Vec<u8>, Vec<u8>)>;

/// Reads a property list skel `(name value ...)` back; None when it is not one.
pub fn parse_proplist(skel: &[u8]) -> Option<Props> {
    let space = |b: u8| matches!(b, b' ' | b'\t' | b'\n' | 0x0c | b'\r');
    let inner = skel.trim_ascii().strip_prefix(b"(")?.strip_suffix(b")")?;
    let mut atoms = Vec::new();
    let mut i = 0;
    while i < inner.len() {
        let b = inner[i];
        if space(b) {
            i += 1;
        } else if b.is_ascii_digit() {
            let digits = inner[i..].iter().take_while(|b| b.is_ascii_digit()).count();
            let len: usize = std::str::from_utf8(&inner[i..i + digits])
                .ok()?
                .parse()
                .ok()?;
            let start = i + digits + 1;
            if inner.get(i + digits) != Some(&b' ') || start + len > inner.len() {
                return None;
            }
            atoms.push(inner[start..start + len].to_vec());
            i = start + len;
        } else if b.is_ascii_alphabetic() {
            let len = inner[i..]
                .iter()
                .take_while(|&&b| !space(b) && !matches!(b, b'(' | b')' | b'[' | b']'))
                .count();
            atoms.push(inner[i..i + len].to_vec());
            i += len;
        } else {
            return None;
        }
    }
    if atoms.len() % 2 != 0 {
        return None;
    }
    let mut props = Vec::with_capacity(atoms.len() / 2);
    let mut it = atoms.into_iter();
    while let (Some(n), Some(v)) = (it.next(), it.next()) {
        props.push((n, v));
    }
    Some(props)
}

/// Inherited properties as the wc.db caches them at a working copy's root:
/// `(path (props) path (props) ...)`, nearest ancestor last.
pub fn iprops(list: &[(Vec<u8>, Props)]) -> Vec<u8> {
    let mut out = vec![b'('];
    for (path, props) in list {
        if out.len() > 1 {
            out.push(b' ');
        }
        atom(&mut out, path);
        out.push(b' ');
        out.extend(proplist(
            props.iter().map(|(n, v)| (n.as_slice(), v.as_slice())),
        ));
    }
    out.push(b')');
    out
}

/// Where a node of a tree conflict was, as svn's conflict skel records it: the repository
/// relpath, the revision and the kind (`file`, `dir`, `none`).
pub struct ConflictSide<'a> {
    pub repos_path: &'a str,
    pub revision: u64,
    pub kind: &'a str,
}

/// The conflict skel (`ACTUAL_NODE.conflict_data`) of a tree conflict an update raised:
/// `((update (OLD NEW)) ((tree () REASON ACTION)))`, each side
/// `(subversion ROOT UUID RELPATH REV KIND)` or `()` where the node was not (an addition's
/// old side). `reason`: `unversioned`, `edited`, `deleted`...; `action`: `added`,
/// `deleted`, `edited`, `replaced`.
pub fn update_tree_conflict(
    root_url: &str,
    uuid: &str,
    old: Option<&ConflictSide>,
    new: &ConflictSide,
    reason: &str,
    action: &str,
) -> Vec<u8> {
    let side = |s: &mut Vec<u8>, c: Option<&ConflictSide>| {
        let Some(c) = c else {
            s.extend_from_slice(b"()");
            return;
        };
        s.extend_from_slice(b"(subversion");
        for a in [
            root_url.as_bytes(),
            uuid.as_bytes(),
            c.repos_path.as_bytes(),
            c.revision.to_string().as_bytes(),
            c.kind.as_bytes(),
        ] {
            s.push(b' ');
            atom(s, a);
        }
        s.push(b')');
    };
    let mut s = b"((update (".to_vec();
    side(&mut s, old);
    s.push(b' ');
    side(&mut s, Some(new));
    s.extend_from_slice(b")) ((tree () ");
    atom(&mut s, reason.as_bytes());
    s.push(b' ');
    atom(&mut s, action.as_bytes());
    s.extend_from_slice(b")))");
    s
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_proplist_reads_back() {
        let props: Props = vec![
            (b"svn:eol-style".to_vec(), b"native".to_vec()),
            (b"empty".to_vec(), Vec::new()),
            (b"two words".to_vec(), b"a (b) c\n".to_vec()),
        ];
        let skel = proplist(props.iter().map(|(n, v)| (n.as_slice(), v.as_slice())));
        assert_eq!(parse_proplist(&skel), Some(props));
        assert_eq!(parse_proplist(b"()"), Some(Vec::new()));
        assert_eq!(parse_proplist(b"(a)"), None, "a name without a value");
        assert_eq!(
            parse_proplist(b"(5 ab)"),
            None,
            "an atom longer than the skel"
        );
        assert_eq!(parse_proplist(b"a b"), None);
    }
    use super::*;

    #[test]
    fn atoms_are_bare_only_when_the_reader_can_tell_where_they_end() {
        let p = proplist([
            (&b"svn:eol-style"[..], &b"native"[..]),
            (b"svn:special", b"*"),
            (b"empty", b""),
            (b"multi", b"line one\nline two"),
            (b"9lives", b"x(y)"),
        ]);
        assert_eq!(
            p,
            b"(svn:eol-style native svn:special 1 * empty 0  multi 17 line one\nline two 6 9lives 4 x(y))"
        );
        assert_eq!(proplist([]), b"()");
        let long = vec![b'a'; 100];
        let mut out = Vec::new();
        atom(&mut out, &long);
        assert!(out.starts_with(b"100 a"));
    }

    #[test]
    fn inherited_props_nest_a_list_per_path() {
        let list = vec![(
            b"trunk".to_vec(),
            vec![(b"svn:auto-props".to_vec(), b"*.c = x".to_vec())],
        )];
        assert_eq!(iprops(&list), b"(trunk (svn:auto-props 7 *.c = x))");
        assert_eq!(iprops(&[]), b"()");
    }
    #[test]
    fn tree_conflict_skels_are_svns() {
        let new = ConflictSide {
            repos_path: "trunk/a b",
            revision: 7,
            kind: "file",
        };
        assert_eq!(
            update_tree_conflict("svn://h/r", "u-1", None, &new, "unversioned", "added"),
            b"((update (() (subversion svn://h/r u-1 9 trunk/a b 1 7 file))) \
              ((tree () unversioned added)))"
                .to_vec()
        );
        let old = ConflictSide {
            repos_path: "",
            revision: 3,
            kind: "dir",
        };
        let gone = ConflictSide {
            repos_path: "",
            revision: 4,
            kind: "none",
        };
        assert_eq!(
            update_tree_conflict("svn://h/r", "u", Some(&old), &gone, "edited", "deleted"),
            b"((update ((subversion svn://h/r u 0  1 3 dir) (subversion svn://h/r u 0  1 4 none))) \
              ((tree () edited deleted)))"
                .to_vec()
        );
    }
}
