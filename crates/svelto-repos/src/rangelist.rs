//! Mergeinfo as Subversion's history queries read it: the strict `svn:mergeinfo` parser
//! (`svn_mergeinfo_parse`'s grammar and canonical form) and the set algebra on revision
//! ranges that `log -g` needs (union, difference, equality, inheritable part).
//!
//! A rangelist is kept canonical: sorted, non-overlapping, and two ranges that touch differ
//! in inheritability. Every operation reads its inputs that way and returns them that way.

use std::collections::BTreeMap;
use svelto_core::Revnum;

/// Revisions `start+1 ..= end` (Subversion's exclusive start), inheritable unless marked `*`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    pub start: Revnum,
    pub end: Revnum,
    pub inheritable: bool,
}

pub type Rangelist = Vec<Range>;

/// Merge source (an fspath such as `/trunk`) to its canonical rangelist.
pub type Mergeinfo = BTreeMap<String, Rangelist>;

/// Canonicalizes an fspath the way `svn_fspath__canonicalize` does for mergeinfo keys:
/// one leading slash, no empty or `.` components, no trailing slash.
pub fn canonical_fspath(path: &str) -> String {
    let comps: Vec<&str> = path
        .split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .collect();
    format!("/{}", comps.join("/"))
}

/// Parses an `svn:mergeinfo` value with Subversion's rules; the error says what is wrong.
pub fn parse(value: &[u8]) -> Result<Mergeinfo, String> {
    let text = std::str::from_utf8(value).map_err(|_| "mergeinfo is not UTF-8".to_string())?;
    // Subversion parses the value as a C string.
    let text = text.split('\0').next().unwrap_or("");
    let mut out = Mergeinfo::new();
    let mut rest = text;
    while !rest.is_empty() {
        let (line, next) = match rest.find('\n') {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (rest, ""),
        };
        let colon = line
            .rfind(':')
            .ok_or_else(|| "Pathname not terminated by ':'".to_string())?;
        let path = canonical_fspath(&line[..colon]);
        let mut ranges = parse_rangelist(&line[colon + 1..])?;
        if ranges.is_empty() {
            return Err(format!(
                "Mergeinfo for '{path}' maps to an empty revision range"
            ));
        }
        canonicalize(&mut ranges)?;
        let merged = match out.get(&path) {
            Some(existing) => union(existing, &ranges),
            None => ranges,
        };
        out.insert(path, merged);
        rest = next;
    }
    Ok(out)
}

/// `svn_revnum_parse`: decimal digits only, at most a 32-bit signed value.
fn parse_revnum(s: &str) -> Result<(Revnum, &str), String> {
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return Err(if s.starts_with('-') {
            format!("Negative revision number found parsing '{s}'")
        } else {
            format!("Invalid revision number found parsing '{s}'")
        });
    }
    if digits > 10 {
        return Err(format!("Revision number longer than 10 digits '{s}'"));
    }
    let n: Revnum = s[..digits]
        .parse()
        .map_err(|_| format!("Invalid revision number found parsing '{s}'"))?;
    if n > i32::MAX as Revnum {
        return Err(format!("Revision number too large '{s}'"));
    }
    Ok((n, &s[digits..]))
}

fn parse_rangelist(text: &str) -> Result<Rangelist, String> {
    let mut cur = text.trim_start_matches(|c: char| c.is_ascii_whitespace());
    let mut out = Rangelist::new();
    if cur.is_empty() {
        return Ok(out);
    }
    loop {
        let (first, after) = parse_revnum(cur)?;
        cur = after;
        if first == 0 {
            return Err("Invalid revision number '0' found in range list".into());
        }
        let mut range = Range {
            start: first - 1,
            end: first,
            inheritable: true,
        };
        if let Some(after) = cur.strip_prefix('-') {
            let (second, after) = parse_revnum(after)?;
            cur = after;
            if first > second {
                return Err(format!(
                    "Unable to parse reversed revision range '{first}-{second}'"
                ));
            }
            if first == second {
                return Err(format!(
                    "Unable to parse revision range '{first}-{second}' with same start and end revisions"
                ));
            }
            range.end = second;
        }
        if let Some(after) = cur.strip_prefix('*') {
            range.inheritable = false;
            cur = after;
        }
        out.push(range);
        match cur.chars().next() {
            None => return Ok(out),
            Some(',') => cur = &cur[1..],
            Some(c) => return Err(format!("Invalid character '{c}' found in range list")),
        }
    }
}

/// Sorts and joins a parsed rangelist (`svn_rangelist__canonicalize`).
fn canonicalize(ranges: &mut Rangelist) -> Result<(), String> {
    ranges.sort_by_key(|r| (r.start, r.end));
    let mut out: Rangelist = Vec::with_capacity(ranges.len());
    for r in ranges.drain(..) {
        if let Some(last) = out.last_mut() {
            if last.start <= r.end && r.start <= last.end {
                if r.start < last.end && r.inheritable != last.inheritable {
                    return Err(format!(
                        "Unable to parse overlapping revision ranges '{}' and '{}' with different inheritance types",
                        range_text(last),
                        range_text(&r)
                    ));
                }
                if last.inheritable == r.inheritable {
                    last.end = last.end.max(r.end);
                    continue;
                }
            }
        }
        out.push(r);
    }
    *ranges = out;
    Ok(())
}

fn range_text(r: &Range) -> String {
    let mut s = if r.end == r.start + 1 {
        r.end.to_string()
    } else {
        format!("{}-{}", r.start + 1, r.end)
    };
    if !r.inheritable {
        s.push('*');
    }
    s
}

/// The state of a rangelist over each elementary interval between the boundaries of `a`
/// and `b`, combined by `f` (None = revision absent, Some(inheritable)).
fn combine(
    a: &[Range],
    b: &[Range],
    f: impl Fn(Option<bool>, Option<bool>) -> Option<bool>,
) -> Rangelist {
    let mut points: Vec<Revnum> = a.iter().chain(b).flat_map(|r| [r.start, r.end]).collect();
    points.sort_unstable();
    points.dedup();
    let (mut i, mut j) = (0, 0);
    let mut out: Rangelist = Vec::new();
    for w in points.windows(2) {
        let (lo, hi) = (w[0], w[1]);
        while i < a.len() && a[i].end <= lo {
            i += 1;
        }
        while j < b.len() && b[j].end <= lo {
            j += 1;
        }
        let sa = a
            .get(i)
            .filter(|r| r.start <= lo && r.end >= hi)
            .map(|r| r.inheritable);
        let sb = b
            .get(j)
            .filter(|r| r.start <= lo && r.end >= hi)
            .map(|r| r.inheritable);
        if let Some(inheritable) = f(sa, sb) {
            match out.last_mut() {
                Some(last) if last.end == lo && last.inheritable == inheritable => last.end = hi,
                _ => out.push(Range {
                    start: lo,
                    end: hi,
                    inheritable,
                }),
            }
        }
    }
    out
}

/// Every revision in either list; inheritable where either is (`svn_rangelist_merge2`).
pub fn union(a: &[Range], b: &[Range]) -> Rangelist {
    combine(a, b, |x, y| match (x, y) {
        (None, None) => None,
        (Some(p), None) | (None, Some(p)) => Some(p),
        (Some(p), Some(q)) => Some(p || q),
    })
}

/// The part of `whitelist` that `eraser` does not cover (`svn_rangelist_remove`); with
/// `consider_inheritance`, a revision is covered only by a range of the same inheritability.
pub fn remove(eraser: &[Range], whitelist: &[Range], consider_inheritance: bool) -> Rangelist {
    combine(eraser, whitelist, |e, w| match (e, w) {
        (_, None) => None,
        (None, Some(p)) => Some(p),
        (Some(q), Some(p)) => (consider_inheritance && p != q).then_some(p),
    })
}

/// The ranges of a list that are inheritable.
pub fn inheritable_only(mi: &Mergeinfo) -> Mergeinfo {
    mi.iter()
        .filter_map(|(path, ranges)| {
            let kept: Rangelist = ranges.iter().filter(|r| r.inheritable).copied().collect();
            (!kept.is_empty()).then(|| (path.clone(), kept))
        })
        .collect()
}

/// `svn_mergeinfo_diff2` without regard to inheritance: (deleted, added) from `from` to `to`.
pub fn diff(from: Option<&Mergeinfo>, to: Option<&Mergeinfo>) -> (Mergeinfo, Mergeinfo) {
    let mut deleted = Mergeinfo::new();
    let mut added = Mergeinfo::new();
    match (from, to) {
        (Some(f), None) => deleted = f.clone(),
        (None, Some(t)) => added = t.clone(),
        (None, None) => {}
        (Some(f), Some(t)) => {
            for (path, fr) in f {
                match t.get(path) {
                    None => {
                        deleted.insert(path.clone(), fr.clone());
                    }
                    Some(tr) => {
                        let d = remove(tr, fr, false);
                        if !d.is_empty() {
                            deleted.insert(path.clone(), d);
                        }
                        let a = remove(fr, tr, false);
                        if !a.is_empty() {
                            added.insert(path.clone(), a);
                        }
                    }
                }
            }
            for (path, tr) in t {
                if !f.contains_key(path) {
                    added.insert(path.clone(), tr.clone());
                }
            }
        }
    }
    (deleted, added)
}

/// `svn_mergeinfo__equals`: both absent, or the same paths with the same revisions.
pub fn equals(a: Option<&Mergeinfo>, b: Option<&Mergeinfo>, consider_inheritance: bool) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => {
            a.len() == b.len()
                && a.iter().all(|(path, ra)| {
                    b.get(path).is_some_and(|rb| {
                        remove(rb, ra, consider_inheritance).is_empty()
                            && remove(ra, rb, consider_inheritance).is_empty()
                    })
                })
        }
        _ => false,
    }
}

/// Adds `changes` to `target` path by path (`svn_mergeinfo_merge2`).
pub fn merge_into(target: &mut Mergeinfo, changes: &Mergeinfo) {
    for (path, ranges) in changes {
        match target.get_mut(path) {
            Some(existing) => *existing = union(existing, ranges),
            None => {
                target.insert(path.clone(), ranges.clone());
            }
        }
    }
}

/// True if `rev` lies in one of the ranges.
pub fn contains(ranges: &[Range], rev: Revnum) -> bool {
    ranges.iter().any(|r| rev > r.start && rev <= r.end)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(start: Revnum, end: Revnum, inheritable: bool) -> Range {
        Range {
            start,
            end,
            inheritable,
        }
    }

    #[test]
    fn parses_like_subversion() {
        let mi = parse(b"/trunk:1-3,5*,7\n/b//x/:4").expect("parses");
        assert_eq!(
            mi["/trunk"],
            vec![r(0, 3, true), r(4, 5, false), r(6, 7, true)]
        );
        assert_eq!(mi["/b/x"], vec![r(3, 4, true)]);
        assert_eq!(
            parse(b"trunk:2-3,4").expect("parses")["/trunk"],
            vec![r(1, 4, true)]
        );
        for bad in [
            &b"/a:0"[..],
            b"/a:3-2",
            b"/a:3-3",
            b"/a",
            b"/a:",
            b"/a:1 ",
            b"/a:1-3,2*",
            b"\n",
            b"/a:x",
        ] {
            assert!(parse(bad).is_err(), "{:?}", String::from_utf8_lossy(bad));
        }
        assert!(parse(b"").expect("empty is fine").is_empty());
    }

    #[test]
    fn set_algebra() {
        let a = vec![r(0, 5, true)];
        let b = vec![r(3, 8, false)];
        assert_eq!(union(&a, &b), vec![r(0, 5, true), r(5, 8, false)]);
        assert_eq!(remove(&b, &a, false), vec![r(0, 3, true)]);
        assert_eq!(remove(&b, &a, true), a);
        assert_eq!(
            remove(&[r(1, 2, true)], &[r(0, 4, true)], false),
            vec![r(0, 1, true), r(2, 4, true)]
        );
        let x: Mergeinfo = [("/t".to_string(), vec![r(0, 2, true), r(2, 3, false)])].into();
        let y: Mergeinfo = [("/t".to_string(), vec![r(0, 3, true)])].into();
        assert!(equals(Some(&x), Some(&y), false));
        assert!(!equals(Some(&x), Some(&y), true));
        assert!(!equals(Some(&x), None, false));
        let (d, a) = diff(Some(&y), Some(&x));
        assert!(d.is_empty() && a.is_empty());
        assert!(contains(&y["/t"], 3) && !contains(&y["/t"], 0));
    }
}
