//! The dates of sitemaps and feeds, to Unix milliseconds: W3C Datetime
//! (`<lastmod>`, Atom's RFC 3339 `<updated>`) and RFC 822 (RSS `<pubDate>`).
//! A date that cannot be read is None, never an error.

/// Parses a W3C Datetime (<https://www.w3.org/TR/NOTE-datetime>):
/// `YYYY`, `YYYY-MM`, `YYYY-MM-DD`, or a date with `Thh:mm`, `Thh:mm:ss` or
/// `Thh:mm:ss.s…` and a zone (`Z`, `+hh:mm`, `-hh:mm`). Also taken, as
/// sites write them: a space for the `T`, `+hhmm` or `+hh`, and no zone
/// (read as UTC). Returns Unix milliseconds, or None for anything else,
/// including dates that do not exist (`2024-02-30`).
pub fn parse_w3c_datetime(s: &str) -> Option<i64> {
    let b = s.trim().as_bytes();
    let year = digits(b, 0, 4)?;
    let (mut month, mut day) = (1, 1);
    let mut i = 4;
    if i < b.len() {
        if b[i] != b'-' {
            return None;
        }
        month = digits(b, i + 1, 2)?;
        i += 3;
        if i < b.len() {
            if b[i] != b'-' {
                return None;
            }
            day = digits(b, i + 1, 2)?;
            i += 3;
        }
    }
    let days = common::timefmt::days_from_date(year, month, day)?;
    let mut ms = days * 86_400_000;
    if i == b.len() {
        return Some(ms);
    }
    if !(b[i] == b'T' || b[i] == b't' || b[i] == b' ') || day_missing(i) {
        return None;
    }
    let hour = digits(b, i + 1, 2)?;
    if b.get(i + 3) != Some(&b':') {
        return None;
    }
    let minute = digits(b, i + 4, 2)?;
    i += 6;
    let mut second = 0;
    let mut millis = 0;
    if b.get(i) == Some(&b':') {
        second = digits(b, i + 1, 2)?;
        i += 3;
        if b.get(i) == Some(&b'.') || b.get(i) == Some(&b',') {
            i += 1;
            let start = i;
            let mut scale = 100;
            while i < b.len() && b[i].is_ascii_digit() {
                millis += i64::from(b[i] - b'0') * scale;
                scale /= 10;
                i += 1;
            }
            if i == start {
                return None;
            }
        }
    }
    if hour > 24 || (hour == 24 && (minute, second, millis) != (0, 0, 0)) || minute > 59 {
        return None;
    }
    // A leap second is read as the second before it.
    if second > 60 {
        return None;
    }
    let second = second.min(59);
    ms += (hour * 3600 + minute * 60 + second) * 1000 + millis;
    let offset = match b.get(i..)? {
        [] | [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), rest @ ..] => {
            let (h, m) = match rest {
                [_, _] => (digits(rest, 0, 2)?, 0),
                [_, _, b':', _, _] | [_, _, _, _] => {
                    (digits(rest, 0, 2)?, digits(rest, rest.len() - 2, 2)?)
                }
                _ => return None,
            };
            if h > 23 || m > 59 {
                return None;
            }
            let off = (h * 60 + m) * 60_000;
            if *sign == b'-' { -off } else { off }
        }
        _ => return None,
    };
    Some(ms - offset)
}

/// `i` is the index after the date: a time needs the day (`YYYY-MM-DD` is
/// 10 bytes).
fn day_missing(i: usize) -> bool {
    i != 10
}

/// Parses an RFC 822 date as RSS uses them (RFC 1123 years): `Sun, 19 May
/// 2002 15:21:36 GMT`, the weekday and seconds optional, two-digit years
/// read as 1950–2049, zones `GMT`, `UT`, `UTC`, `Z`, the US zones (`EST` …
/// `PDT`) and `+hhmm` / `-hhmm`; an unknown zone is read as UTC. Returns
/// Unix milliseconds, or None when it is not such a date.
pub fn parse_rfc822(s: &str) -> Option<i64> {
    let mut parts = s
        .split(|c: char| c.is_ascii_whitespace() || c == ',')
        .filter(|p| !p.is_empty());
    let mut first = parts.next()?;
    if first.as_bytes()[0].is_ascii_alphabetic() {
        // The weekday is not checked.
        first = parts.next()?;
    }
    let day = first.parse::<i64>().ok().filter(|_| first.len() <= 2)?;
    let month = month_number(parts.next()?)?;
    let year_s = parts.next()?;
    let mut year = year_s.parse::<i64>().ok()?;
    match year_s.len() {
        2 => year += if year < 50 { 2000 } else { 1900 },
        4 => {}
        _ => return None,
    }
    let days = common::timefmt::days_from_date(year, month, day)?;
    let time = parts.next()?.as_bytes();
    let hour = digits(time, 0, 2)?;
    if time.get(2) != Some(&b':') {
        return None;
    }
    let minute = digits(time, 3, 2)?;
    let second = match time.len() {
        5 => 0,
        8 if time[5] == b':' => digits(time, 6, 2)?,
        _ => return None,
    };
    if hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let offset_minutes = match parts.next() {
        None => 0,
        Some(zone) => zone_minutes(zone)?,
    };
    let secs = days * 86_400 + hour * 3600 + minute * 60 + second.min(59) - offset_minutes * 60;
    Some(secs * 1000)
}

/// `Jan` … `Dec` (any case, full names too) to 1 … 12.
fn month_number(s: &str) -> Option<i64> {
    const MONTHS: [&str; 12] = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ];
    let head = s.get(..3)?;
    MONTHS
        .iter()
        .position(|m| m.eq_ignore_ascii_case(head))
        .map(|i| i as i64 + 1)
}

/// A zone's offset from UTC in minutes.
fn zone_minutes(zone: &str) -> Option<i64> {
    let b = zone.as_bytes();
    if let [sign @ (b'+' | b'-'), ..] = b {
        if b.len() != 5 {
            return None;
        }
        let (h, m) = (digits(b, 1, 2)?, digits(b, 3, 2)?);
        if h > 23 || m > 59 {
            return None;
        }
        let off = h * 60 + m;
        return Some(if *sign == b'-' { -off } else { off });
    }
    const US_ZONES: [(&str, i64); 8] = [
        ("EST", -5),
        ("EDT", -4),
        ("CST", -6),
        ("CDT", -5),
        ("MST", -7),
        ("MDT", -6),
        ("PST", -8),
        ("PDT", -7),
    ];
    let hours = US_ZONES
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(zone))
        .map_or(0, |&(_, h)| h);
    Some(hours * 60)
}

/// The number written with exactly `n` ASCII digits at `b[at..]`.
fn digits(b: &[u8], at: usize, n: usize) -> Option<i64> {
    let d = b.get(at..at + n)?;
    if !d.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(d.iter().fold(0, |acc, &c| acc * 10 + i64::from(c - b'0')))
}
