//! `svn:mergeinfo` values: parsing, canonical formatting, and the renumbering and
//! prefixing that `svnadmin load` applies when revisions or paths shift.

use std::collections::BTreeMap;
use svelto_core::compare_paths;

/// A merged range: revisions `start+1 ..= end` (Subversion's exclusive start).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    pub start: u64,
    pub end: u64,
    pub inheritable: bool,
}

/// Merge source path (an absolute repository path) to its ranges.
pub type Mergeinfo = Vec<(String, Vec<Range>)>;

pub fn parse(value: &str) -> Result<Mergeinfo, String> {
    let mut out: BTreeMap<String, Vec<Range>> = BTreeMap::new();
    for line in value.split('\n') {
        if line.is_empty() {
            continue;
        }
        let colon = line
            .rfind(':')
            .ok_or_else(|| format!("no ':' in mergeinfo line '{line}'"))?;
        let (path, ranges) = (&line[..colon], &line[colon + 1..]);
        if path.is_empty() {
            return Err(format!("mergeinfo line '{line}' has no source path"));
        }
        let path = if path.starts_with('/') {
            path.to_string()
        } else {
            format!("/{path}")
        };
        let list = out.entry(path).or_default();
        for r in ranges.split(',') {
            let r = r.trim();
            let (r, inheritable) = match r.strip_suffix('*') {
                Some(x) => (x, false),
                None => (r, true),
            };
            let num = |s: &str| {
                s.trim()
                    .parse::<u64>()
                    .map_err(|_| format!("bad revision '{s}' in mergeinfo"))
            };
            let (a, b) = match r.split_once('-') {
                Some((a, b)) => (num(a)?, num(b)?),
                None => {
                    let a = num(r)?;
                    (a, a)
                }
            };
            if a == 0 || a > b {
                return Err(format!("invalid revision range '{r}' in mergeinfo"));
            }
            list.push(Range {
                start: a - 1,
                end: b,
                inheritable,
            });
        }
    }
    let mut v: Mergeinfo = out.into_iter().collect();
    for (_, ranges) in &mut v {
        canonicalize(ranges);
    }
    Ok(v)
}

/// Sorts and joins adjacent or overlapping ranges of the same inheritability.
fn canonicalize(ranges: &mut Vec<Range>) {
    ranges.sort_by_key(|r| (r.start, r.end));
    let mut out: Vec<Range> = Vec::with_capacity(ranges.len());
    for r in ranges.drain(..) {
        match out.last_mut() {
            Some(l) if l.inheritable == r.inheritable && r.start <= l.end => {
                l.end = l.end.max(r.end)
            }
            _ => out.push(r),
        }
    }
    *ranges = out;
}

pub fn format(mi: &Mergeinfo) -> String {
    let mut items: Vec<&(String, Vec<Range>)> = mi.iter().filter(|(_, r)| !r.is_empty()).collect();
    items.sort_by(|a, b| compare_paths(&a.0, &b.0));
    let lines: Vec<String> = items
        .iter()
        .map(|(path, ranges)| {
            let rs: Vec<String> = ranges
                .iter()
                .map(|r| {
                    let mut s = if r.end == r.start + 1 {
                        r.end.to_string()
                    } else {
                        format!("{}-{}", r.start + 1, r.end)
                    };
                    if !r.inheritable {
                        s.push('*');
                    }
                    s
                })
                .collect();
            format!("{path}:{}", rs.join(","))
        })
        .collect();
    lines.join("\n")
}

/// What the loader knows to renumber mergeinfo: dump revision -> loaded revision, the
/// oldest dump revision loaded, and the current revision's offset (dump rev - new rev).
pub struct Renumber<'a> {
    pub rev_map: &'a BTreeMap<u64, u64>,
    pub oldest_dumpstream_rev: Option<u64>,
    pub rev_offset: i64,
}

/// Adjusts a mergeinfo value as `svnadmin load` does (renumber, then prefix `parent_dir`).
pub fn adjust(value: &str, ren: &Renumber, parent_dir: Option<&str>) -> Result<String, String> {
    let value = value.replace('\r', "");
    let mi = parse(&value)?;
    let oldest = ren.oldest_dumpstream_rev.unwrap_or(0);
    let mut out: BTreeMap<String, Vec<Range>> = BTreeMap::new();
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
                    r.start = m - 1;
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
    let mut mi: Mergeinfo = out.into_iter().collect();
    for (_, ranges) in &mut mi {
        canonicalize(ranges);
    }
    if let Some(parent) = parent_dir.filter(|p| !p.is_empty()) {
        for (path, _) in &mut mi {
            let rel = path.trim_start_matches('/');
            *path = if rel.is_empty() {
                format!("/{parent}")
            } else {
                format!("/{parent}/{rel}")
            };
        }
    }
    Ok(format(&mi))
}

/// A parsed `svn:mergeinfo` value as Subversion reads it for queries: merge source fspath
/// to its canonical rangelist (sorted, adjacent ranges of equal inheritability joined).
pub type MergeinfoMap = BTreeMap<String, Vec<Range>>;

/// Parses a mergeinfo value with the rules of Subversion's `svn_mergeinfo_parse`: every
/// line is `path:ranges`, a revision has 1 to 10 digits and fits 31 bits, `N-M` needs
/// `N < M`, overlapping ranges of different inheritability are refused, a relative source
/// path is made absolute, and lines naming the same source are merged. A value that fails
/// here is treated by the queries as no mergeinfo at all (Subversion's issue 3896).
pub fn parse_svn(value: &[u8]) -> Result<MergeinfoMap, String> {
    // Subversion reads the value as a C string.
    let value = match value.iter().position(|&b| b == 0) {
        Some(nul) => &value[..nul],
        None => value,
    };
    let text = std::str::from_utf8(value).map_err(|_| "mergeinfo is not UTF-8".to_string())?;
    let mut out = MergeinfoMap::new();
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
        canonicalize_strict(&mut ranges)?;
        match out.get_mut(&path) {
            Some(existing) => {
                existing.extend(ranges);
                *existing = rangelist_union(existing);
            }
            None => {
                out.insert(path, ranges);
            }
        }
    }
    Ok(out)
}

/// `svn_fspath__canonicalize` for a merge source: one leading slash, no empty or `.`
/// components, no trailing slash.
fn canonical_fspath(path: &str) -> String {
    let comps: Vec<&str> = path
        .split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .collect();
    format!("/{}", comps.join("/"))
}

fn parse_revnum(s: &str) -> Result<(u64, &str), String> {
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return Err(format!("Invalid revision number found parsing '{s}'"));
    }
    if digits > 10 {
        return Err(format!("Revision number longer than 10 digits '{s}'"));
    }
    let n: u64 = s[..digits]
        .parse()
        .map_err(|_| format!("Invalid revision number found parsing '{s}'"))?;
    if n > i32::MAX as u64 {
        return Err(format!("Revision number too large '{s}'"));
    }
    Ok((n, &s[digits..]))
}

/// The ranges after a source path's colon, in the order written.
fn parse_rangelist(text: &str) -> Result<Vec<Range>, String> {
    let mut s = text.trim_start_matches([' ', '\t', '\r', '\x0b', '\x0c']);
    let mut out = Vec::new();
    while !s.is_empty() {
        let (first, after) = parse_revnum(s)?;
        if first == 0 {
            return Err("Invalid revision number '0' found in range list".into());
        }
        let mut range = Range {
            start: first - 1,
            end: first,
            inheritable: true,
        };
        s = after;
        if let Some(after_dash) = s.strip_prefix('-') {
            let (second, after) = parse_revnum(after_dash)?;
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
            s = after;
        }
        if let Some(after_star) = s.strip_prefix('*') {
            range.inheritable = false;
            s = after_star;
        }
        out.push(range);
        if s.is_empty() {
            break;
        }
        match s.strip_prefix(',') {
            Some(after_comma) => s = after_comma,
            None => {
                let c = s.chars().next().unwrap_or(' ');
                return Err(format!("Invalid character '{c}' found in range list"));
            }
        }
    }
    Ok(out)
}

/// Sorts and joins as `svn_rangelist__canonicalize` does; overlapping ranges of different
/// inheritability are an error.
fn canonicalize_strict(ranges: &mut Vec<Range>) -> Result<(), String> {
    ranges.sort_by_key(|r| (r.start, r.end));
    let mut out: Vec<Range> = Vec::with_capacity(ranges.len());
    for r in ranges.drain(..) {
        if let Some(last) = out.last_mut() {
            if r.start <= last.end {
                if r.start < last.end && r.inheritable != last.inheritable {
                    return Err(format!(
                        "Unable to parse overlapping revision ranges with different inheritance types at r{}",
                        r.start + 1
                    ));
                }
                if r.inheritable == last.inheritable {
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

/// The union of ranges in any order, as `svn_rangelist_merge2` leaves it: where ranges of
/// different inheritability overlap, the overlap is inheritable; adjacent ranges of equal
/// inheritability are joined.
pub fn rangelist_union(ranges: &[Range]) -> Vec<Range> {
    let mut bounds: Vec<u64> = ranges.iter().flat_map(|r| [r.start, r.end]).collect();
    bounds.sort_unstable();
    bounds.dedup();
    let mut out: Vec<Range> = Vec::new();
    for w in bounds.windows(2) {
        let (a, b) = (w[0], w[1]);
        let mut covered = false;
        let mut inheritable = false;
        for r in ranges.iter().filter(|r| r.start <= a && b <= r.end) {
            covered = true;
            inheritable |= r.inheritable;
        }
        if !covered {
            continue;
        }
        match out.last_mut() {
            Some(l) if l.end == a && l.inheritable == inheritable => l.end = b,
            _ => out.push(Range {
                start: a,
                end: b,
                inheritable,
            }),
        }
    }
    out
}

/// The parts of `whiteboard` that no range of `eraser` covers, whatever the
/// inheritability (`svn_rangelist_remove` without considering inheritance). Both lists
/// must be canonical.
pub fn rangelist_remove(eraser: &[Range], whiteboard: &[Range]) -> Vec<Range> {
    let mut out = Vec::new();
    for w in whiteboard {
        let mut start = w.start;
        for e in eraser {
            if e.end <= start || e.start >= w.end {
                continue;
            }
            if e.start > start {
                out.push(Range {
                    start,
                    end: e.start,
                    ..*w
                });
            }
            start = start.max(e.end);
            if start >= w.end {
                break;
            }
        }
        if start < w.end {
            out.push(Range { start, ..*w });
        }
    }
    out
}

/// What changed from `from` to `to`, ignoring inheritability: the ranges only in `from`
/// and the ranges only in `to`, joined into one map (`svn_mergeinfo_diff2` followed by
/// `svn_mergeinfo_merge2` of its two halves).
pub fn changed_ranges(from: &MergeinfoMap, to: &MergeinfoMap) -> MergeinfoMap {
    let mut out = MergeinfoMap::new();
    let mut add = |path: &str, ranges: Vec<Range>| {
        if ranges.is_empty() {
            return;
        }
        let entry = out.entry(path.to_string()).or_default();
        entry.extend(ranges);
        *entry = rangelist_union(entry);
    };
    for (path, from_ranges) in from {
        match to.get(path) {
            Some(to_ranges) => {
                add(path, rangelist_remove(to_ranges, from_ranges));
                add(path, rangelist_remove(from_ranges, to_ranges));
            }
            None => add(path, from_ranges.clone()),
        }
    }
    for (path, to_ranges) in to {
        if !from.contains_key(path) {
            add(path, to_ranges.clone());
        }
    }
    out
}

/// Mergeinfo as a child inherits it from an ancestor `rel` above it: non-inheritable
/// ranges dropped (and sources left without ranges), `rel` appended to every source.
pub fn inherited_by(mi: &MergeinfoMap, rel: &str) -> MergeinfoMap {
    mi.iter()
        .filter_map(|(path, ranges)| {
            let kept: Vec<Range> = ranges.iter().filter(|r| r.inheritable).copied().collect();
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

/// The `svn:mergeinfo` text of a map (`svn_mergeinfo_to_string`): sources in path order,
/// one per line; an empty map is the empty string.
pub fn to_svn_string(mi: &MergeinfoMap) -> String {
    let v: Mergeinfo = mi.iter().map(|(p, r)| (p.clone(), r.clone())).collect();
    format(&v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_canonical() {
        let v = "/branches/b:3-5,7*\n/trunk:2";
        assert_eq!(format(&parse(v).expect("parses")), v);
        assert_eq!(format(&parse("/a:5,3-4,6").expect("parses")), "/a:3-6");
        assert!(parse("/a:x").is_err());
        assert!(parse("/a:5-3").is_err());
    }

    #[test]
    fn renumbers_through_the_map() {
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
    }

    fn r(start: u64, end: u64, inheritable: bool) -> Range {
        Range {
            start,
            end,
            inheritable,
        }
    }

    #[test]
    fn parse_svn_follows_subversion() {
        let mi = parse_svn(b"trunk:5,3-4*\n/b//x/.:1-2,3").expect("parses");
        assert_eq!(
            mi.get("/trunk").map(Vec::as_slice),
            Some(&[r(2, 4, false), r(4, 5, true)][..])
        );
        assert_eq!(
            mi.get("/b/x").map(Vec::as_slice),
            Some(&[r(0, 3, true)][..])
        );
        assert_eq!(to_svn_string(&mi), "/b/x:1-3\n/trunk:3-4*,5");
        // The same source on two lines is merged; the inheritable part wins an overlap.
        let mi = parse_svn(b"/a:1-4*\na:3-6").expect("parses");
        assert_eq!(to_svn_string(&mi), "/a:1-2*,3-6");
        assert_eq!(parse_svn(b"").expect("empty").len(), 0);
        assert_eq!(
            parse_svn(b"/a: 7\x00garbage").map(|m| to_svn_string(&m)),
            Ok("/a:7".into())
        );
        for bad in [
            &b"/a:4-3"[..],
            b"/a:3-3",
            b"/a:0",
            b"/a:",
            b"/a",
            b"/a:1-5,3*",
            b"/a:1,x",
            b"/a:1**",
            b"/a:12345678901",
            b"/a:2147483648",
            b"/a:1\n\n",
            b"/a:1\r",
        ] {
            assert!(
                parse_svn(bad).is_err(),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn range_arithmetic() {
        let a = [r(0, 5, true), r(7, 9, false)];
        let b = [r(2, 8, true)];
        assert_eq!(
            rangelist_remove(&b, &a),
            vec![r(0, 2, true), r(8, 9, false)]
        );
        assert_eq!(rangelist_remove(&a, &b), vec![r(5, 7, true)]);
        assert_eq!(
            rangelist_union(&[r(0, 5, true), r(7, 9, false), r(2, 8, true)]),
            vec![r(0, 8, true), r(8, 9, false)]
        );
        let from = parse_svn(b"/t:1-5\n/gone:3").expect("parses");
        let to = parse_svn(b"/t:1-3,7\n/new:2*").expect("parses");
        assert_eq!(
            to_svn_string(&changed_ranges(&from, &to)),
            "/gone:3\n/new:2*\n/t:4-5,7"
        );
        assert!(changed_ranges(&from, &from).is_empty());
    }

    #[test]
    fn inheritance_drops_non_inheritable_and_appends_the_path() {
        let mi = parse_svn(b"/t:1-3,5*\n/only:4*\n/:9").expect("parses");
        assert_eq!(
            to_svn_string(&inherited_by(&mi, "a/b")),
            "/a/b:9\n/t/a/b:1-3"
        );
        assert_eq!(
            to_svn_string(&inherited_by(&parse_svn(b"/x:1*").expect("ok"), "f")),
            ""
        );
    }
}
