//! `svn:date` values without a clock: microseconds since the Unix epoch, formatted as
//! Subversion writes them ("2011-11-30T16:41:55.154754Z").

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
pub fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = i64::from((month + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day number (inverse of `days_from_civil`).
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Microseconds since the epoch to an `svn:date` value.
pub fn svn_date(micros: i64) -> String {
    let secs = micros.div_euclid(1_000_000);
    let frac = micros.rem_euclid(1_000_000);
    let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
    let s = secs.rem_euclid(86_400);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{frac:06}Z",
        s / 3600,
        s / 60 % 60,
        s % 60
    )
}

/// The calendar day (YYYY-MM-DD) of a timestamp, as ChangeLog entries start.
pub fn day(micros: i64) -> String {
    let (y, m, d) = civil_from_days(micros.div_euclid(86_400_000_000));
    format!("{y:04}-{m:02}-{d:02}")
}

/// The year of a timestamp.
pub fn year(micros: i64) -> u16 {
    civil_from_days(micros.div_euclid(86_400_000_000)).0 as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_like_subversion() {
        let t = (days_from_civil(2011, 11, 30) * 86_400 + 16 * 3600 + 41 * 60 + 55) * 1_000_000
            + 154_754;
        assert_eq!(svn_date(t), "2011-11-30T16:41:55.154754Z");
        assert_eq!(day(t), "2011-11-30");
        assert_eq!(year(t), 2011);
    }

    #[test]
    fn round_trips_days() {
        for d in [-1000, 0, 11_016, 12_477, 20_000] {
            let (y, m, dd) = civil_from_days(d);
            assert_eq!(days_from_civil(y, m, dd), d);
        }
    }
}
