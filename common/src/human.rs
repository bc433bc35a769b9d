//! Numbers, sizes and durations as people write and read them: the one
//! place that formats them for progress lines, reports and summaries, and
//! parses them from flags and `crawl.toml` (`512MB`, `250ms`).

use std::time::Duration;

/// `1234567` → `1,234,567`.
pub fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Characters of a text shown whole in a message (a URL, a line of input);
/// a longer one is cut by [`clipped`].
pub const CLIP_CHARS: usize = 200;

/// `text` as a message shows it: whole up to [`CLIP_CHARS`] characters,
/// else its start and end around `…`, with its length
/// (`http://a.example/xxx…xxx.html (5,000 characters)`), so that one long
/// URL makes one readable line.
pub fn clipped(text: &str) -> std::borrow::Cow<'_, str> {
    let n = text.chars().count();
    if n <= CLIP_CHARS {
        return text.into();
    }
    let head: String = text.chars().take(CLIP_CHARS - 50).collect();
    let tail: String = text.chars().skip(n - 30).collect();
    format!("{head}…{tail} ({} characters)", count(n as u64)).into()
}

/// A size in the largest decimal unit that keeps it above one: `1.5 GB`,
/// `2.3 MB`, `20 kB`, `512 B`.
pub fn bytes(b: u64) -> String {
    let b = b as f64;
    if b >= 1e9 {
        format!("{:.1} GB", b / 1e9)
    } else if b >= 1e6 {
        format!("{:.1} MB", b / 1e6)
    } else if b >= 1e3 {
        format!("{:.0} kB", b / 1e3)
    } else {
        format!("{b:.0} B")
    }
}

/// `1.50 GB`, `300.0 kB`, `17 bytes`: a size with more precision, for a
/// message that compares it with a limit (powers of 1000).
pub fn bytes_precise(bytes: u64) -> String {
    let b = bytes as f64;
    if b >= 1e9 {
        format!("{:.2} GB", b / 1e9)
    } else if b >= 1e6 {
        format!("{:.2} MB", b / 1e6)
    } else if b >= 1e3 {
        format!("{:.1} kB", b / 1e3)
    } else {
        format!("{bytes} bytes")
    }
}

/// A size in megabytes with one decimal (`0.3 MB`), for figures that grow
/// and are compared line to line.
pub fn megabytes(b: u64) -> String {
    format!("{:.1} MB", b as f64 / 1e6)
}

/// A duration in its largest whole unit: `30 days`, `12 h`, `45 min`, `10 s`.
pub fn duration(d: std::time::Duration) -> String {
    let s = d.as_secs();
    if s >= 86_400 && s.is_multiple_of(86_400) {
        format!("{} day(s)", s / 86_400)
    } else if s >= 3600 && s.is_multiple_of(3600) {
        format!("{} h", s / 3600)
    } else if s >= 60 && s.is_multiple_of(60) {
        format!("{} min", s / 60)
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
}

/// Parses `250ms`, `5s`, `1.5` (seconds), `2m`, `1h`, `30d`.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let (num, unit) = split_unit(s);
    let value: f64 = num
        .parse()
        .map_err(|_| format!("`{s}` is not a duration (examples: 250ms, 5s, 1.5, 2m, 1h)"))?;
    let secs = match unit.to_ascii_lowercase().as_str() {
        "ms" => value / 1000.0,
        "" | "s" => value,
        "m" | "min" => value * 60.0,
        "h" => value * 3600.0,
        "d" => value * 86_400.0,
        other => {
            return Err(format!(
                "`{s}`: unknown unit `{other}` (use ms, s, m, h or d)"
            ));
        }
    };
    if !(secs.is_finite() && secs >= 0.0) {
        return Err(format!("`{s}`: a duration must be zero or positive"));
    }
    Duration::try_from_secs_f64(secs).map_err(|_| format!("`{s}`: too long a duration"))
}

/// Parses `512MB`, `10MiB`, `64k`, `1G`, `1000` (bytes). `K/M/G` and `KB/MB/GB`
/// are powers of 1000, `KiB/MiB/GiB` powers of 1024.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let (num, unit) = split_unit(s);
    let value: f64 = num
        .parse()
        .map_err(|_| format!("`{s}` is not a size (examples: 512MB, 10MiB, 4096)"))?;
    let mult: f64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kb" => 1e3,
        "m" | "mb" => 1e6,
        "g" | "gb" => 1e9,
        "t" | "tb" => 1e12,
        "kib" => 1024.0,
        "mib" => 1024.0 * 1024.0,
        "gib" => 1024.0 * 1024.0 * 1024.0,
        "tib" => 1024f64.powi(4),
        other => {
            return Err(format!(
                "`{s}`: unknown unit `{other}` (use KB, MB, GB, KiB, MiB, GiB)"
            ));
        }
    };
    let bytes = (value * mult).round();
    if !(bytes.is_finite() && bytes >= 0.0) {
        return Err(format!("`{s}`: a size must be zero or positive"));
    }
    // 2⁶⁴: an `as` cast would quietly saturate at u64::MAX instead.
    if bytes >= 18_446_744_073_709_551_616.0 {
        return Err(format!("`{s}`: too large a size"));
    }
    Ok(bytes as u64)
}

fn split_unit(s: &str) -> (&str, &str) {
    let idx = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    (s[..idx].trim(), s[idx..].trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_texts_are_clipped_with_their_length() {
        assert_eq!(clipped("http://a.test/"), "http://a.test/");
        let long = format!("http://a.test/{}.html", "x".repeat(4981));
        let shown = clipped(&long);
        assert!(shown.starts_with("http://a.test/xxx"), "{shown}");
        assert!(shown.ends_with("xxx.html (5,000 characters)"), "{shown}");
        assert!(shown.chars().count() < 240, "{shown}");
        let wide = "é".repeat(300);
        assert!(clipped(&wide).ends_with("(300 characters)"));
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_duration("5s").unwrap(), Duration::from_secs(5));
        assert_eq!(parse_duration("1.5").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(
            parse_duration("30d").unwrap(),
            Duration::from_secs(30 * 86_400)
        );
        assert!(parse_duration("5 parsecs").is_err());
        assert!(parse_duration("").is_err());
        // Too long for a Duration: an error, not a panic.
        let e = parse_duration("99999999999999999999999h").unwrap_err();
        assert!(e.contains("too long"), "{e}");
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("512MB").unwrap(), 512_000_000);
        assert_eq!(parse_size("10MiB").unwrap(), 10 * 1024 * 1024);
        assert_eq!(parse_size("4096").unwrap(), 4096);
        assert!(parse_size("lots").is_err());
        // Past u64::MAX: refused rather than silently capped.
        let e = parse_size("20000000000000000000").unwrap_err();
        assert!(e.contains("too large"), "{e}");
        assert!(parse_size("99999999TiB").unwrap_err().contains("too large"));
        assert_eq!(
            parse_size("16777216TiB").unwrap_err(),
            "`16777216TiB`: too large a size"
        );
        assert_eq!(parse_size("16777215TiB").unwrap(), 16_777_215 << 40);
    }

    #[test]
    fn numbers_are_grouped_by_thousands() {
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(1000), "1,000");
        assert_eq!(count(2_641_309), "2,641,309");
    }

    #[test]
    fn sizes_take_the_unit_that_fits() {
        assert_eq!(bytes(0), "0 B");
        assert_eq!(bytes(999), "999 B");
        assert_eq!(bytes(20_000), "20 kB");
        assert_eq!(bytes(2_340_000), "2.3 MB");
        assert_eq!(bytes(1_500_000_000), "1.5 GB");
        assert_eq!(megabytes(300_000), "0.3 MB");
        assert_eq!(megabytes(244_912_345), "244.9 MB");
    }

    #[test]
    fn durations_take_their_largest_whole_unit() {
        use std::time::Duration;
        assert_eq!(duration(Duration::from_secs(30 * 86_400)), "30 day(s)");
        assert_eq!(duration(Duration::from_secs(7200)), "2 h");
        assert_eq!(duration(Duration::from_secs(90 * 60)), "90 min");
        assert_eq!(duration(Duration::from_millis(1500)), "1.5 s");
    }
}
