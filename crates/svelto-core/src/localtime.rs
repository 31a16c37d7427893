//! Dates in a time zone as Subversion shows them (`svn_time_to_human_cstring`): svnlook's
//! dates, and the long date of a keyword expanded for mod_dav_svn's `?kw=1`. The zone is
//! given as a TZif file's bytes (RFC 8536); reading it from the environment (`$TZ`,
//! `/etc/localtime`) is the binary's job.

use std::sync::Arc;

use crate::{civil_from_days, parse_svn_date};

/// A time zone, as its TZif file describes it; without one (or one that cannot be read,
/// or a rule past its transitions), UTC.
#[derive(Clone, Debug, Default)]
pub struct Zone {
    tzif: Option<Arc<[u8]>>,
}

impl Zone {
    /// UTC.
    pub fn utc() -> Zone {
        Zone::default()
    }

    /// The zone a TZif file's bytes describe.
    pub fn from_tzif(bytes: Vec<u8>) -> Zone {
        Zone {
            tzif: Some(bytes.into()),
        }
    }

    /// The zone's offset from UTC at `t` (seconds since the epoch), in seconds.
    pub fn offset(&self, t: i64) -> i64 {
        self.tzif
            .as_deref()
            .and_then(|b| tzif_offset(b, t))
            .unwrap_or(0)
    }
}

/// `2002-06-23 11:13:02 +0300 (Sun, 23 Jun 2002)`: an `svn:date` in `zone`.
pub fn human_date(svn_date: &str, zone: &Zone) -> Option<String> {
    let t = parse_svn_date(svn_date)?.div_euclid(1_000_000);
    let off = zone.offset(t);
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
    fn human_dates() {
        let utc = Zone::utc();
        assert_eq!(
            human_date("2026-11-18T11:06:40.123456Z", &utc).as_deref(),
            Some("2026-11-18 11:06:40 +0000 (Wed, 18 Nov 2026)")
        );
        assert_eq!(human_date("garbage", &utc), None);
        // A TZif file (version 1) of one type, UTC+05:30, no transitions.
        let mut tzif = b"TZif".to_vec();
        tzif.extend_from_slice(&[0; 16]);
        for count in [0u32, 0, 0, 0, 1, 4] {
            tzif.extend_from_slice(&count.to_be_bytes());
        }
        tzif.extend_from_slice(&19_800i32.to_be_bytes());
        tzif.extend_from_slice(&[0, 0]);
        tzif.extend_from_slice(b"IST\0");
        assert_eq!(
            human_date("2026-11-18T23:06:40Z", &Zone::from_tzif(tzif)).as_deref(),
            Some("2026-11-19 04:36:40 +0530 (Thu, 19 Nov 2026)")
        );
    }

    #[test]
    fn utc_when_tz_names_no_zone_file() {
        assert_eq!(tzif_offset(b"not a zone file", 0), None);
    }
}
