//! The local time zone, read from the environment as the C library reads it: `$TZ` (a
//! zone name under /usr/share/zoneinfo or an absolute path, with or without a leading
//! `:`; empty is UTC), else /etc/localtime. svnlook's dates use it, and `svelto serve`
//! hands it to the HTTP server for keywords' long dates.

use svelto_core::localtime::Zone;

/// The local time zone (UTC when its file cannot be read).
pub fn zone() -> Zone {
    let file = match std::env::var("TZ") {
        Ok(tz) if tz.is_empty() => return Zone::utc(),
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
    std::fs::read(file).map_or_else(|_| Zone::utc(), Zone::from_tzif)
}

/// `2002-06-23 11:13:02 +0300 (Sun, 23 Jun 2002)`: an `svn:date` in the local time zone
/// (read once per process, as the C library's `tzset` does).
pub fn human_date(svn_date: &str) -> Option<String> {
    static ZONE: std::sync::OnceLock<Zone> = std::sync::OnceLock::new();
    svelto_core::localtime::human_date(svn_date, ZONE.get_or_init(zone))
}
