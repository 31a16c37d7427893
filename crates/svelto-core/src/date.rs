//! `svn:date` values from the system clock (the libraries take dates as input).

use std::time::{SystemTime, UNIX_EPOCH};

/// Now, as Subversion writes `svn:date`: `YYYY-MM-DDTHH:MM:SS.uuuuuuZ`.
pub fn svn_date_now() -> String {
    let d = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    format_svn_date(d.as_secs(), d.subsec_micros())
}

/// Formats seconds and microseconds since the epoch as `svn:date`.
pub fn format_svn_date(secs: u64, micros: u32) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{micros:06}Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
}

/// Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's algorithm).
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// Microseconds since the epoch of an `svn:date` (`YYYY-MM-DDTHH:MM:SS[.ffffff]Z`).
pub fn parse_svn_date(s: &str) -> Option<i64> {
    let s = s.trim().strip_suffix('Z').unwrap_or(s.trim());
    let (date, time) = s.split_once('T')?;
    let mut d = date.split('-');
    let y: i64 = d.next()?.parse().ok()?;
    let m: i64 = d.next()?.parse().ok()?;
    let day: i64 = d.next()?.parse().ok()?;
    let (hms, frac) = time.split_once('.').unwrap_or((time, "0"));
    let mut t = hms.split(':');
    let hh: i64 = t.next()?.parse().ok()?;
    let mm: i64 = t.next()?.parse().ok()?;
    let ss: i64 = t.next().unwrap_or("0").parse().ok()?;
    let frac6: String = frac.chars().chain(std::iter::repeat('0')).take(6).collect();
    let micros: i64 = frac6.parse().ok()?;
    if !(1..=12).contains(&m) || !(1..=31).contains(&day) || hh > 23 || mm > 59 || ss > 60 {
        return None;
    }
    // Days from civil (proleptic Gregorian).
    let y2 = if m <= 2 { y - 1 } else { y };
    let era = y2.div_euclid(400);
    let yoe = y2 - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(((days * 86_400 + hh * 3600 + mm * 60 + ss) * 1_000_000) + micros)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(parse_svn_date("1970-01-01T00:00:00.000000Z"), Some(0));
        assert_eq!(
            parse_svn_date("1970-01-02T00:00:01.5Z"),
            Some(86_401_500_000)
        );
        assert_eq!(
            parse_svn_date("2024-05-01T12:00:00.000000Z"),
            Some(1_714_564_800_000_000)
        );
        assert_eq!(parse_svn_date("garbage"), None);
    }

    #[test]
    fn formats_known_instants() {
        assert_eq!(format_svn_date(0, 0), "1970-01-01T00:00:00.000000Z");
        assert_eq!(
            format_svn_date(1_795_000_000, 123_456),
            "2026-11-18T11:06:40.123456Z"
        );
        assert_eq!(
            format_svn_date(951_782_400, 1),
            "2000-02-29T00:00:00.000001Z"
        );
    }
}
