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

/// [`parse_iso`] then [`unix_millis`], in one step: the same result for
/// every input, with a fast path for the form [`iso_millis`] writes
/// (`2026-11-23T04:27:02.123Z`, what the fetch history holds several
/// times a line): no `SystemTime`, and the date checked against the
/// month's length instead of a round trip through the calendar.
pub fn parse_iso_millis(s: &str) -> Option<i64> {
    // The layout checked eight bytes at a time: each byte XORed with the
    // template's is 0 at a separator and the digit's value at a digit.
    const TEMPLATE: &[u8; 24] = b"0000-00-00T00:00:00.000Z";
    const SEPARATORS: [u64; 3] = [
        0xff00_00ff_0000_0000,
        0x0000_ff00_00ff_0000,
        0xff00_0000_ff00_00ff,
    ];
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let word = |b: &[u8], k: usize| u64::from_le_bytes(b[8 * k..8 * k + 8].try_into().expect("8"));
    let b = s.as_bytes();
    if b.len() != 24 {
        return parse_iso(s).map(unix_millis);
    }
    let x = [
        word(b, 0) ^ word(TEMPLATE, 0),
        word(b, 1) ^ word(TEMPLATE, 1),
        word(b, 2) ^ word(TEMPLATE, 2),
    ];
    if x.iter().zip(SEPARATORS).any(|(w, sep)| w & sep != 0) {
        return parse_iso(s).map(unix_millis);
    }
    // A byte above 9 (or with its high bit set) is not a digit; adding
    // 0x76 carries into the high bit of exactly those below 0x80.
    if x.iter()
        .any(|&w| (w | w.wrapping_add(0x7676_7676_7676_7676)) & HIGH != 0)
    {
        return None;
    }
    let digit = |i: usize| ((x[i / 8] >> (8 * (i % 8))) & 0xff) as i64;
    let two = |i: usize| digit(i) * 10 + digit(i + 1);
    let days = days_from_date(two(0) * 100 + two(2), two(5), two(8))?;
    let (h, mi, sec) = (two(11), two(14), two(17));
    let ms = digit(20) * 100 + two(21);
    if h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    let secs = days * 86_400 + h * 3600 + mi * 60 + sec;
    // (Before 1970: refused, as by `parse_iso`.)
    (secs >= 0).then_some(secs * 1000 + ms)
}

/// Days from 1970-01-01 to the date `y`-`m`-`d` (proleptic Gregorian);
/// `None` when the date does not exist.
pub fn days_from_date(y: i64, m: i64, d: i64) -> Option<i64> {
    if !(1..=12).contains(&m) || d < 1 || d > days_in_month(y, m) {
        return None;
    }
    Some(days_from_civil(y, m as u32, d as u32))
}

/// Days in month `m` (1 to 12) of year `y`, proleptic Gregorian.
fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if y % 4 == 0 && (y % 100 != 0 || y % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
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

    /// The fast path of `parse_iso_millis` reads every input as
    /// `parse_iso` then `unix_millis` do: every day from 1969 to 2101 (leap
    /// days, year ends, 2100), times at the day's edges, and the odd forms.
    #[test]
    fn parse_iso_millis_reads_as_parse_iso() {
        let slow = |s: &str| parse_iso(s).map(unix_millis);
        let mut checked = 0;
        for y in [1969, 1970, 1999, 2000, 2024, 2025, 2026, 2096, 2100, 2101] {
            for mo in 0..=13 {
                for d in 0..=32 {
                    for time in [
                        "00:00:00.000",
                        "23:59:59.999",
                        "23:59:60.500",
                        "24:00:00.000",
                    ] {
                        let s = format!("{y:04}-{mo:02}-{d:02}T{time}Z");
                        assert_eq!(parse_iso_millis(&s), slow(&s), "{s}");
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 10_000);
        for odd in [
            "2026-11-23T04:27:02.123Z",
            "2026-11-23T04:27:02Z",
            "2024-02-29T12:00:00.001Z",
            "2023-02-29T12:00:00.001Z",
            "1970-01-01T00:00:00.000Z",
            "1969-12-31T23:59:59.999Z",
            "0000-01-01T00:00:00.000Z",
            "9999-12-31T23:59:59.999Z",
            "2026-11-23T04:60:02.123Z",
            "2026-11-23T04:27:02.12aZ",
            "2026-11-23T04:27:02.123z",
            "2026-11-23 04:27:02.123Z",
            "2026-11-23T04:27:02,123Z",
            "+026-11-23T04:27:02.123Z",
            "2026-+1-23T04:27:02.123Z",
            "2026-11-23T04:27:02.1\u{e9}Z",
            "2026-11-23T04:27:02.123ZZ",
            "-",
            "",
            "not a time at all, 24b",
        ] {
            assert_eq!(parse_iso_millis(odd), slow(odd), "{odd:?}");
        }
        // Each byte of the written form changed (`parse_iso` does not check
        // every separator: what it reads, the fast path reads alike).
        let written = "2024-02-29T23:59:60.250Z";
        for at in 0..written.len() {
            for c in ['x', '0', '9', ':', '-', '.', 'Z', '\u{80}'] {
                let mut odd = written.as_bytes().to_vec();
                odd[at] = c as u8;
                let odd = String::from_utf8_lossy(&odd);
                assert_eq!(parse_iso_millis(&odd), slow(&odd), "{odd:?}");
            }
        }
        assert_eq!(
            parse_iso_millis("2024-02-29T00:00:00.250Z"),
            Some(1_709_164_800_250)
        );
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
