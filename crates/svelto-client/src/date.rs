//! Revisions given as dates (`-r {DATE}`): the forms `svn_parse_date` reads (ISO 8601:
//! `YYYY-MM-DD`, `YYYYMMDD`, with `THH:MM[:SS[.frac]]` or ` HH:MM...`, then `Z` or `±HH[:MM]`,
//! local time without; `HH:MM[:SS]` alone is today), as the `svn:date` form the servers
//! take (`2011-03-13T10:10:13.000000Z`).

use svelto_core::localtime::Zone;

/// Days since 1970-01-01 of a civil date.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

fn digits(s: &str, n: usize) -> Option<(i64, &str)> {
    if s.len() < n || !s.as_bytes()[..n].iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some((s[..n].parse().ok()?, &s[n..]))
}

/// `HH:MM[:SS[.frac]]` (or `HHMM[SS]`): seconds of the day, microseconds, the rest.
fn time_of_day(s: &str) -> Option<(i64, u32, &str)> {
    let (h, rest) = digits(s, 2)?;
    let rest = rest.strip_prefix(':').unwrap_or(rest);
    let (m, mut rest) = digits(rest, 2)?;
    let mut sec = 0;
    let mut micros = 0u32;
    let after = rest.strip_prefix(':').unwrap_or(rest);
    if let Some((sv, r)) = digits(after, 2) {
        sec = sv;
        rest = r;
        if let Some(frac) = rest.strip_prefix('.') {
            let n = frac.bytes().take_while(u8::is_ascii_digit).count();
            let mut f = frac[..n].to_string();
            f.truncate(6);
            while f.len() < 6 {
                f.push('0');
            }
            micros = f.parse().ok()?;
            rest = &frac[n..];
        }
    }
    if h > 23 || m > 59 || sec > 60 {
        return None;
    }
    Some((h * 3600 + m * 60 + sec, micros, rest))
}

/// A date as seconds since the epoch (UTC) and microseconds; `now` for the time-only form.
pub fn parse(text: &str, zone: &Zone, now: i64) -> Option<(i64, u32)> {
    let s = text.trim();
    // The date part, if any.
    let (days, rest) = if let Some((y, r)) = digits(s, 4) {
        let dashed = r.starts_with('-');
        let r = r.strip_prefix('-').unwrap_or(r);
        let (m, r) = digits(r, 2)?;
        let r = if dashed { r.strip_prefix('-')? } else { r };
        let (d, r) = digits(r, 2)?;
        if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
            return None;
        }
        (Some(days_from_civil(y, m, d)), r)
    } else {
        (None, s)
    };
    let (secs, micros, rest) = match days {
        Some(_) if rest.is_empty() => (0, 0, rest),
        Some(_) => {
            let r = rest.strip_prefix(['T', ' '])?;
            time_of_day(r)?
        }
        None => time_of_day(rest)?,
    };
    let rest = rest.trim_start();
    let zone_offset = if rest.is_empty() {
        None
    } else if rest == "Z" {
        Some(0)
    } else {
        let sign = match rest.as_bytes()[0] {
            b'+' => 1,
            b'-' => -1,
            _ => return None,
        };
        let (h, r) = digits(&rest[1..], 2)?;
        let r = r.strip_prefix(':').unwrap_or(r);
        let (m, r) = if r.is_empty() { (0, r) } else { digits(r, 2)? };
        if !r.is_empty() {
            return None;
        }
        Some(sign * (h * 3600 + m * 60))
    };
    let day = match days {
        Some(d) => d,
        None => {
            // Today, in the zone the time is in.
            let off = zone_offset.unwrap_or_else(|| zone.offset(now));
            (now + off).div_euclid(86400)
        }
    };
    let local = day * 86400 + secs;
    let t = match zone_offset {
        Some(off) => local - off,
        None => {
            let guess = local - zone.offset(local);
            local - zone.offset(guess)
        }
    };
    Some((t, micros))
}

/// `{DATE}` (with or without the braces) as the `svn:date` a server takes.
pub fn to_svn_date(text: &str, zone: &Zone) -> Option<String> {
    let inner = text
        .trim()
        .strip_prefix('{')
        .and_then(|t| t.strip_suffix('}'));
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let (t, micros) = parse(inner.unwrap_or(text), zone, now)?;
    Some(svelto_core::format_svn_date(t.max(0) as u64, micros))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_forms_svn_reads() {
        let utc = Zone::utc();
        for (text, want) in [
            ("{2011-03-13}", "2011-03-13T00:00:00.000000Z"),
            ("{20110313}", "2011-03-13T00:00:00.000000Z"),
            ("{2011-03-13T10:10}", "2011-03-13T10:10:00.000000Z"),
            ("{2011-03-13 10:10:13}", "2011-03-13T10:10:13.000000Z"),
            ("{2011-03-13T10:10:13.5Z}", "2011-03-13T10:10:13.500000Z"),
            ("{2011-03-13T12:10:13+02:00}", "2011-03-13T10:10:13.000000Z"),
            ("{2011-03-13T05:10:13-0500}", "2011-03-13T10:10:13.000000Z"),
            ("{19700101T0000Z}", "1970-01-01T00:00:00.000000Z"),
        ] {
            assert_eq!(to_svn_date(text, &utc).as_deref(), Some(want), "{text}");
        }
        // The time alone: today.
        let noon = days_from_civil(2026, 11, 29) * 86400 + 12 * 3600;
        assert_eq!(
            parse("08:30", &utc, noon),
            Some((
                days_from_civil(2026, 11, 29) * 86400 + 8 * 3600 + 30 * 60,
                0
            ))
        );
        for bad in [
            "{yesterday}",
            "{2011-13-01}",
            "{2011-03-13T25:00}",
            "{2011-03-13X}",
            "",
        ] {
            assert_eq!(to_svn_date(bad, &utc), None, "{bad}");
        }
    }
}
