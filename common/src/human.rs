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

/// A size in megabytes with one decimal (`0.3 MB`), for figures that grow
/// and are compared line to line.
pub fn megabytes(b: u64) -> String {
    format!("{:.1} MB", b as f64 / 1e6)
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
}
