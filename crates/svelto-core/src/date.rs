//! `svn:date` values from the system clock (the libraries take dates as input).

use std::time::{SystemTime, UNIX_EPOCH};

/// Now, as Subversion writes `svn:date`: `YYYY-MM-DDTHH:MM:SS.uuuuuuZ`.
pub fn svn_date_now() -> String {
    let d = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    format_svn_date(d.as_secs(), d.subsec_micros())
}

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

#[cfg(test)]
mod tests {
    use super::*;

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
