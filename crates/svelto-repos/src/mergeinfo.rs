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
}
