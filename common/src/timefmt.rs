//! Timestamps as the formats need them: ISO 8601 UTC (`WARC-Date`, crawl log)
//! and the 17-digit form used in WARC and log file names. Times before 1970
//! are written as 1970-01-01T00:00:00Z.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Splits a time into UTC calendar fields
/// (year, month, day, hour, minute, second, millisecond).
pub fn civil(t: SystemTime) -> (i64, u32, u32, u32, u32, u32, u32) {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or(Duration::ZERO);
    let secs = d.as_secs() as i64;
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400) as u32;
    let (y, m, day) = civil_from_days(days);
    (
        y,
        m,
        day,
        sod / 3600,
        sod / 60 % 60,
        sod % 60,
        d.subsec_millis(),
    )
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian
/// (the well-known "civil from days" algorithm by H. Hinnant).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
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

/// `2026-11-23T04:27:02Z` (seconds precision, as `WARC-Date` usually is).
pub fn iso_seconds(t: SystemTime) -> String {
    let (y, mo, d, h, mi, s, _) = civil(t);
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z")
}

/// `2026-11-23T04:27:02.123Z` (milliseconds, for logs).
pub fn iso_millis(t: SystemTime) -> String {
    let (y, mo, d, h, mi, s, ms) = civil(t);
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{ms:03}Z")
}

/// `20261123042702123` (17 digits, for file names that sort by time).
pub fn compact_millis(t: SystemTime) -> String {
    let (y, mo, d, h, mi, s, ms) = civil(t);
    format!("{y:04}{mo:02}{d:02}{h:02}{mi:02}{s:02}{ms:03}")
}

/// Parses the forms written by [`iso_seconds`] and [`iso_millis`]. Dates
/// that do not exist (`2026-02-30`) are refused, not rolled over.
pub fn parse_iso(s: &str) -> Option<SystemTime> {
    let b = s.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || !s.ends_with('Z') {
        return None;
    }
    // Digits only: `str::parse` would also take a sign (`+026`).
    let num = |r: std::ops::Range<usize>| {
        let digits = b.get(r)?;
        digits.iter().all(u8::is_ascii_digit).then(|| {
            digits
                .iter()
                .fold(0i64, |n, &d| n * 10 + i64::from(d - b'0'))
        })
    };
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let ms = match &b[19..b.len() - 1] {
        b"" => 0,
        [b'.', ..] => num(20..23).filter(|_| b.len() == 24)?,
        _ => return None,
    };
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    let days = days_from_civil(y, mo as u32, d as u32);
    if civil_from_days(days) != (y, mo as u32, d as u32) {
        return None;
    }
    let secs = days * 86_400 + h * 3600 + mi * 60 + sec;
    Some(
        UNIX_EPOCH
            + Duration::from_secs(u64::try_from(secs).ok()?)
            + Duration::from_millis(ms as u64),
    )
}

fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = i64::from((m + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Milliseconds since the Unix epoch (the unit of stored timestamps); 0 for
/// a time before it.
pub fn unix_millis(t: SystemTime) -> i64 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Inverse of [`unix_millis`]; a negative count gives the epoch itself.
pub fn from_unix_millis(ms: i64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(ms.max(0) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_dates() {
        let t = UNIX_EPOCH + Duration::from_millis(1_795_408_022_123);
        assert_eq!(iso_millis(t), "2026-11-23T04:27:02.123Z");
        assert_eq!(iso_seconds(t), "2026-11-23T04:27:02Z");
        assert_eq!(compact_millis(t), "20261123042702123");
        assert_eq!(iso_seconds(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        // 2000-02-29 exists, 2100 is not a leap year.
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400);
        assert_eq!(iso_seconds(leap), "2000-02-29T00:00:00Z");
    }

    #[test]
    fn round_trip() {
        for ms in [0i64, 951_782_400_000, 1_795_408_022_123, 4_102_444_800_999] {
            let t = from_unix_millis(ms);
            assert_eq!(parse_iso(&iso_millis(t)), Some(t));
        }
        assert_eq!(parse_iso("2026-13-01T00:00:00Z"), None);
        assert_eq!(parse_iso("garbage"), None);
    }

    #[test]
    fn only_real_dates_in_the_written_form_parse() {
        let ok = |s: &str| parse_iso(s).map(iso_millis);
        assert_eq!(
            ok("2024-02-29T23:59:59.999Z").as_deref(),
            Some("2024-02-29T23:59:59.999Z")
        );
        for bad in [
            "2026-02-29T00:00:00Z",
            "2100-02-29T00:00:00Z",
            "2026-04-31T00:00:00Z",
            "2026-02-30T00:00:00.000Z",
            "+026-01-01T00:00:00Z",
            "2026-+1-01T00:00:00Z",
            "2026-01-01T00:00:00.+12Z",
            "2026-01-01T00:00:00.1234Z",
            "2026-01-01T00:00:00.12Z",
            "2026-01-01T24:00:00Z",
            "2026-01-01 00:00:00Z",
            "1969-12-31T23:59:59Z",
            "2026-01-01T00:00:0\u{e9}Z",
        ] {
            assert_eq!(ok(bad), None, "{bad:?}");
        }
    }
}
