//! `svn:mergeinfo`: the one parser (`svn_mergeinfo_parse`'s grammar and canonical form),
//! the printer (`svn_mergeinfo_to_string`), the rangelist arithmetic the history queries
//! need (union, difference, equality, inheritance), and the renumbering and prefixing that
//! `svnadmin load` applies when revisions or paths shift.
//!
//! A rangelist is kept canonical: sorted, non-overlapping, and two ranges that touch differ
//! in inheritability. Every operation reads its inputs that way and returns them that way.

use std::collections::BTreeMap;
use svelto_core::{compare_paths, Revnum};

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

/// Parses an `svn:mergeinfo` value with the rules of Subversion's `svn_mergeinfo_parse`:
/// every line is `path:ranges`, a revision has 1 to 10 digits and fits 31 bits, `N-M`
/// needs `N < M`, overlapping ranges of different inheritability are refused, a relative
/// source path is made absolute, and lines naming the same source are merged. The value
/// is read as a C string (up to a NUL). The error says what is wrong; the queries treat a
/// value that fails here as no mergeinfo at all (Subversion's issue 3896).
pub fn parse(value: &[u8]) -> Result<Mergeinfo, String> {
    let value = match value.iter().position(|&b| b == 0) {
        Some(nul) => &value[..nul],
        None => value,
    };
    let text = std::str::from_utf8(value).map_err(|_| "mergeinfo is not UTF-8".to_string())?;
    let mut out = Mergeinfo::new();
    let mut rest = text;
    while !rest.is_empty() {
        let (line, next) = match rest.find('\n') {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (rest, ""),
        };
        rest = next;
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
        if let Some((a, b)) = canonicalize(&mut ranges) {
            return Err(format!(
                "Unable to parse overlapping revision ranges '{}' and '{}' with different inheritance types",
                range_text(&a),
                range_text(&b)
            ));
        }
        let merged = match out.get(&path) {
            Some(existing) => union(existing, &ranges),
            None => ranges,
        };
        out.insert(path, merged);
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

/// The ranges after a source path's colon, in the order written (leading white space,
/// as C's `isspace` sees it, is skipped).
fn parse_rangelist(text: &str) -> Result<Rangelist, String> {
    let mut cur = text.trim_start_matches([' ', '\t', '\r', '\x0b', '\x0c']);
    let mut out = Rangelist::new();
    while !cur.is_empty() {
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
            None => break,
            Some(',') => cur = &cur[1..],
            Some(c) => return Err(format!("Invalid character '{c}' found in range list")),
        }
    }
    Ok(out)
}

/// Sorts and joins ranges written in any order (`svn_rangelist__canonicalize`): adjacent
/// or overlapping ranges of equal inheritability become one. Overlapping ranges of
/// different inheritability are left as they are; the first such pair is returned.
fn canonicalize(ranges: &mut Rangelist) -> Option<(Range, Range)> {
    ranges.sort_by_key(|r| (r.start, r.end));
    let mut conflict = None;
    let mut out: Rangelist = Vec::with_capacity(ranges.len());
    for r in ranges.drain(..) {
        if let Some(last) = out.last_mut() {
            if r.start <= last.end {
                if last.inheritable == r.inheritable {
                    last.end = last.end.max(r.end);
                    continue;
                }
                if r.start < last.end && conflict.is_none() {
                    conflict = Some((*last, r));
                }
            }
        }
        out.push(r);
    }
    *ranges = out;
    conflict
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

/// The `svn:mergeinfo` text of a map (`svn_mergeinfo_to_string`): sources in path order,
/// one per line, sources without ranges left out; an empty map is the empty string.
pub fn to_svn_string(mi: &Mergeinfo) -> String {
    let mut items: Vec<(&String, &Rangelist)> = mi.iter().filter(|(_, r)| !r.is_empty()).collect();
    items.sort_by(|a, b| compare_paths(a.0, b.0));
    let lines: Vec<String> = items
        .iter()
        .map(|(path, ranges)| {
            let rs: Vec<String> = ranges.iter().map(range_text).collect();
            format!("{path}:{}", rs.join(","))
        })
        .collect();
    lines.join("\n")
}

/// The state of two rangelists over each elementary interval between their boundaries,
/// combined by `f` (None = revision absent, Some(inheritable)).
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

/// The part of `whiteboard` that `eraser` does not cover (`svn_rangelist_remove`); with
/// `consider_inheritance`, a revision is covered only by a range of the same
/// inheritability.
pub fn remove(eraser: &[Range], whiteboard: &[Range], consider_inheritance: bool) -> Rangelist {
    combine(eraser, whiteboard, |e, w| match (e, w) {
        (_, None) => None,
        (None, Some(p)) => Some(p),
        (Some(q), Some(p)) => (consider_inheritance && p != q).then_some(p),
    })
}

/// `svn_mergeinfo_diff2` without regard to inheritance: (deleted, added) from `from` to
/// `to`; an absent side counts as empty.
pub fn diff(from: Option<&Mergeinfo>, to: Option<&Mergeinfo>) -> (Mergeinfo, Mergeinfo) {
    let empty = Mergeinfo::new();
    let (from, to) = (from.unwrap_or(&empty), to.unwrap_or(&empty));
    let mut deleted = Mergeinfo::new();
    let mut added = Mergeinfo::new();
    for (path, fr) in from {
        match to.get(path) {
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
    for (path, tr) in to {
        if !from.contains_key(path) {
            added.insert(path.clone(), tr.clone());
        }
    }
    (deleted, added)
}

/// What changed from `from` to `to`, ignoring inheritability: the ranges only in `from`
/// and the ranges only in `to`, joined into one map ([`diff`], then [`merge_into`] of its
/// two halves).
pub fn changed_ranges(from: &Mergeinfo, to: &Mergeinfo) -> Mergeinfo {
    let (mut deleted, added) = diff(Some(from), Some(to));
    merge_into(&mut deleted, &added);
    deleted
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

/// Mergeinfo as a path inherits it from an ancestor `rel` (a relpath, "" for the ancestor
/// itself) above it: non-inheritable ranges dropped (and sources left without ranges),
/// `rel` appended to every source.
pub fn inherited_by(mi: &Mergeinfo, rel: &str) -> Mergeinfo {
    mi.iter()
        .filter_map(|(path, ranges)| {
            let kept: Rangelist = ranges.iter().filter(|r| r.inheritable).copied().collect();
            if kept.is_empty() {
                return None;
            }
            let path = match (path.as_str(), rel) {
                (_, "") => path.clone(),
                ("/", _) => format!("/{rel}"),
                _ => format!("{path}/{rel}"),
            };
            Some((path, kept))
        })
        .collect()
}

/// What the loader knows to renumber mergeinfo: dump revision -> loaded revision, the
/// oldest dump revision loaded, and the current revision's offset (dump rev - new rev).
pub struct Renumber<'a> {
    pub rev_map: &'a BTreeMap<u64, u64>,
    pub oldest_dumpstream_rev: Option<u64>,
    pub rev_offset: i64,
}

/// Adjusts a mergeinfo value as `svnadmin load` does: line endings normalized to `\n`,
/// the value parsed (as [`parse`]), revisions renumbered, then `parent_dir` prefixed to
/// every source.
pub fn adjust(value: &str, ren: &Renumber, parent_dir: Option<&str>) -> Result<String, String> {
    let value = value.replace("\r\n", "\n").replace('\r', "\n");
    let mi = parse(value.as_bytes())?;
    let oldest = ren.oldest_dumpstream_rev.unwrap_or(0);
    let mut out = Mergeinfo::new();
    for (path, ranges) in mi {
        let mut kept = Vec::new();
        for r in ranges {
            // Split at oldest-1: the part before the stream shifts by the offset.
            if oldest > 1 && r.start < oldest - 1 {
                let before = Range {
                    start: r.start,
                    end: r.end.min(oldest - 1),
                    ..r
                };
                let s = before.start as i64 - ren.rev_offset;
                let e = before.end as i64 - ren.rev_offset;
                if e > 0 {
                    let s = s.max(0) as u64;
                    out.entry(path.clone()).or_default().push(Range {
                        start: s,
                        end: e as u64,
                        ..r
                    });
                }
                if r.end < oldest {
                    continue;
                }
                kept.push(Range {
                    start: oldest - 1,
                    ..r
                });
            } else {
                kept.push(r);
            }
        }
        for mut r in kept {
            if let Some(&m) = ren.rev_map.get(&r.start) {
                r.start = m;
            } else if oldest > 0 && r.start == oldest - 1 {
                if let Some(&m) = ren.rev_map.get(&oldest) {
                    r.start = m.saturating_sub(1);
                }
            } else {
                out.entry(path.clone()).or_default().push(r);
                continue;
            }
            if let Some(&m) = ren.rev_map.get(&r.end) {
                r.end = m;
            }
            out.entry(path.clone()).or_default().push(r);
        }
    }
    for ranges in out.values_mut() {
        // Renumbering can make ranges of different inheritability overlap; they stay.
        canonicalize(ranges);
    }
    let out: Mergeinfo = match parent_dir.filter(|p| !p.is_empty()) {
        Some(parent) => out
            .into_iter()
            .map(|(path, ranges)| {
                let rel = path.trim_start_matches('/');
                let path = if rel.is_empty() {
                    format!("/{parent}")
                } else {
                    format!("/{parent}/{rel}")
                };
                (path, ranges)
            })
            .collect(),
        None => out,
    };
    Ok(to_svn_string(&out))
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
        let mi = parse(b"trunk:5,3-4*\n/b//x/.:1-2,3").expect("parses");
        assert_eq!(mi["/trunk"], vec![r(2, 4, false), r(4, 5, true)]);
        assert_eq!(mi["/b/x"], vec![r(0, 3, true)]);
        assert_eq!(to_svn_string(&mi), "/b/x:1-3\n/trunk:3-4*,5");
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
        // The same source on two lines is merged; the inheritable part wins an overlap.
        let mi = parse(b"/a:1-4*\na:3-6").expect("parses");
        assert_eq!(to_svn_string(&mi), "/a:1-2*,3-6");
        assert!(parse(b"").expect("empty is fine").is_empty());
        // A C string: whatever follows a NUL is not read.
        assert_eq!(
            parse(b"/a: 7\x00garbage\xff").map(|m| to_svn_string(&m)),
            Ok("/a:7".into())
        );
        assert_eq!(
            parse(b"/a:\x0b7").map(|m| to_svn_string(&m)),
            Ok("/a:7".into())
        );
        for bad in [
            &b"/a:4-3"[..],
            b"/a:3-3",
            b"/a:0",
            b"/a:",
            b"/a",
            b"/a:1 ",
            b"/a:1-5,3*",
            b"/a:1-3,2*",
            b"/a:1,x",
            b"/a:x",
            b"/a:1**",
            b"/a:-1",
            b"/a:12345678901",
            b"/a:2147483648",
            b"/a:1\n\n",
            b"\n",
            b"/a:1\r",
            b"/a:\xff",
        ] {
            assert!(parse(bad).is_err(), "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn prints_sources_in_path_order() {
        let mi = parse(b"/a/b:1\n/a-b:2\n/a:3\n/empty:4").expect("parses");
        let mut mi = mi;
        mi.insert("/none".into(), Vec::new());
        assert_eq!(to_svn_string(&mi), "/a:3\n/a/b:1\n/a-b:2\n/empty:4");
    }

    #[test]
    fn range_arithmetic() {
        let a = vec![r(0, 5, true)];
        let b = vec![r(3, 8, false)];
        assert_eq!(union(&a, &b), vec![r(0, 5, true), r(5, 8, false)]);
        assert_eq!(remove(&b, &a, false), vec![r(0, 3, true)]);
        assert_eq!(remove(&b, &a, true), a);
        assert_eq!(
            remove(&[r(1, 2, true)], &[r(0, 4, true)], false),
            vec![r(0, 1, true), r(2, 4, true)]
        );
        let a = [r(0, 5, true), r(7, 9, false)];
        let b = [r(2, 8, true)];
        assert_eq!(remove(&b, &a, false), vec![r(0, 2, true), r(8, 9, false)]);
        assert_eq!(remove(&a, &b, false), vec![r(5, 7, true)]);
        assert_eq!(union(&a, &b), vec![r(0, 8, true), r(8, 9, false)]);
        let x: Mergeinfo = [("/t".to_string(), vec![r(0, 2, true), r(2, 3, false)])].into();
        let y: Mergeinfo = [("/t".to_string(), vec![r(0, 3, true)])].into();
        assert!(equals(Some(&x), Some(&y), false));
        assert!(!equals(Some(&x), Some(&y), true));
        assert!(!equals(Some(&x), None, false));
        let (d, a) = diff(Some(&y), Some(&x));
        assert!(d.is_empty() && a.is_empty());
        assert!(contains(&y["/t"], 3) && !contains(&y["/t"], 0));
        let from = parse(b"/t:1-5\n/gone:3").expect("parses");
        let to = parse(b"/t:1-3,7\n/new:2*").expect("parses");
        assert_eq!(
            to_svn_string(&changed_ranges(&from, &to)),
            "/gone:3\n/new:2*\n/t:4-5,7"
        );
        assert!(changed_ranges(&from, &from).is_empty());
    }

    #[test]
    fn inheritance_drops_non_inheritable_and_appends_the_path() {
        let mi = parse(b"/t:1-3,5*\n/only:4*\n/:9").expect("parses");
        assert_eq!(
            to_svn_string(&inherited_by(&mi, "a/b")),
            "/a/b:9\n/t/a/b:1-3"
        );
        assert_eq!(to_svn_string(&inherited_by(&mi, "")), "/:9\n/t:1-3");
        assert_eq!(
            to_svn_string(&inherited_by(&parse(b"/x:1*").expect("ok"), "f")),
            ""
        );
    }

    #[test]
    fn load_renumbers_through_the_map() {
        let map: BTreeMap<u64, u64> = [(3, 1), (4, 2), (5, 3)].into_iter().collect();
        let ren = Renumber {
            rev_map: &map,
            oldest_dumpstream_rev: Some(3),
            rev_offset: 2,
        };
        assert_eq!(adjust("/trunk:4-5", &ren, None).expect("ok"), "/trunk:2-3");
        assert_eq!(
            adjust("/trunk:4-5", &ren, Some("sub")).expect("ok"),
            "/sub/trunk:2-3"
        );
        assert_eq!(
            adjust("/b:4\r\n/a:5\r", &ren, None).expect("ok"),
            "/a:3\n/b:2"
        );
        let none: BTreeMap<u64, u64> = BTreeMap::new();
        let ren = Renumber {
            rev_map: &none,
            oldest_dumpstream_rev: None,
            rev_offset: 0,
        };
        assert_eq!(
            adjust("/branches/b:3-5,7*\n/trunk:2", &ren, None).expect("ok"),
            "/branches/b:3-5,7*\n/trunk:2"
        );
        assert_eq!(adjust("/a:5,3-4,6", &ren, None).expect("ok"), "/a:3-6");
        assert!(adjust("/a:x", &ren, None).is_err());
        assert!(adjust("/a:5-3", &ren, None).is_err());
    }
}
