//! Dates as svnlook shows them: `svn:date` in the local time zone
//! (`svn_time_to_human_cstring`), which the CLI reads from the environment (`$TZ`, else
//! `/etc/localtime`), as the C library would.

use svelto_core::civil_from_days;

/// Seconds since the epoch of an `svn:date` (`YYYY-MM-DDTHH:MM:SS[.ffffff]Z`).
pub fn parse_svn_date(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| s.get(r)?.parse::<i64>().ok();
    let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hh, mm, ss) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || hh > 23 || mm > 59 || ss > 60 {
        return None;
    }
    Some(days_from_civil(y, m as u32, d as u32) * 86_400 + hh * 3600 + mm * 60 + ss)
}

fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = i64::from((m + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `2002-06-23 11:13:02 +0300 (Sun, 23 Jun 2002)` in the local time zone ($TZ, else
/// /etc/localtime; names and POSIX rules the zoneinfo files do not cover count as UTC).
pub fn human_date(svn_date: &str) -> Option<String> {
    let t = parse_svn_date(svn_date)?;
    let off = local_offset(t);
    let local = t + off;
    let days = local.div_euclid(86_400);
    let rem = local.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let wday = DAYS[days.rem_euclid(7) as usize];
    let sign = if off < 0 { '-' } else { '+' };
    Some(format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} {sign}{:02}{:02} ({wday}, {d:02} {} {y:04})",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60,
        off.abs() / 3600,
        (off.abs() / 60) % 60,
        MONTHS[(m - 1) as usize],
    ))
}

/// The local time zone's offset from UTC at `t`, in seconds.
fn local_offset(t: i64) -> i64 {
    let file = match std::env::var("TZ") {
        Ok(tz) if tz.is_empty() => return 0,
        Ok(tz) => {
            let name = tz.strip_prefix(':').unwrap_or(&tz).to_string();
            if name.starts_with('/') {
                std::path::PathBuf::from(name)
            } else {
                std::path::Path::new("/usr/share/zoneinfo").join(name)
            }
        }
        Err(_) => std::path::PathBuf::from("/etc/localtime"),
    };
    std::fs::read(file)
        .ok()
        .and_then(|b| tzif_offset(&b, t))
        .unwrap_or(0)
}

/// The UTC offset at `t` from a TZif file (RFC 8536): the version 2+ 64-bit section when
/// present, else the version 1 section.
fn tzif_offset(b: &[u8], t: i64) -> Option<i64> {
    let be32 = |at: usize| -> Option<i64> {
        Some(i64::from(i32::from_be_bytes(
            b.get(at..at + 4)?.try_into().ok()?,
        )))
    };
    let header = |at: usize| -> Option<[usize; 6]> {
        if b.get(at..at + 4)? != b"TZif" {
            return None;
        }
        let mut c = [0usize; 6];
        for (i, v) in c.iter_mut().enumerate() {
            *v = usize::try_from(be32(at + 20 + 4 * i)?).ok()?;
        }
        Some(c)
    };
    // counts: isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt
    let c1 = header(0)?;
    let v1_len = c1[3] * 5 + c1[4] * 6 + c1[5] + c1[2] * 8 + c1[1] + c1[0];
    let (start, c, tsize) = if b.get(4).copied().unwrap_or(0) >= b'2' {
        let at = 44 + v1_len;
        (at + 44, header(at)?, 8)
    } else {
        (44, c1, 4)
    };
    let read_time = |at: usize| -> Option<i64> {
        if tsize == 8 {
            Some(i64::from_be_bytes(b.get(at..at + 8)?.try_into().ok()?))
        } else {
            be32(at)
        }
    };
    let (timecnt, typecnt) = (c[3], c[4]);
    let idx_at = start + timecnt * tsize;
    let types_at = idx_at + timecnt;
    let mut ty = 0usize;
    // Before the first transition (or with none): the first standard-time type.
    for i in 0..typecnt {
        if b.get(types_at + i * 6 + 4).copied() == Some(0) {
            ty = i;
            break;
        }
    }
    for i in 0..timecnt {
        if read_time(start + i * tsize)? <= t {
            ty = usize::from(*b.get(idx_at + i)?);
        } else {
            break;
        }
    }
    be32(types_at + ty * 6)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_svn_dates() {
        assert_eq!(parse_svn_date("1970-01-01T00:00:01.000000Z"), Some(1));
        assert_eq!(
            parse_svn_date("2026-11-18T11:06:40.123456Z"),
            Some(1_795_000_000)
        );
        assert_eq!(parse_svn_date("garbage"), None);
    }

    #[test]
    fn utc_when_tz_names_no_zone_file() {
        assert_eq!(tzif_offset(b"not a zone file", 0), None);
    }
}
