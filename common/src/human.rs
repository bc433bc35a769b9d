//! Numbers and sizes as the programs print them for people (progress lines,
//! reports, summaries): the one place that formats them.

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

#[cfg(test)]
mod tests {
    use super::*;

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
