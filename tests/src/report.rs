//! Reading figures out of the segmenter's `key: value` report, as a user
//! would with `grep`.

/// The first number after `key` in `report` (`dupes:   12` gives 12);
/// panics with the report when there is none.
pub fn figure(report: &str, key: &str) -> u64 {
    line(report, key)
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no `{key}` figure in:\n{report}"))
}

/// The text after `key` in `report`, trimmed; panics with the report when
/// no line starts with `key`.
pub fn line<'a>(report: &'a str, key: &str) -> &'a str {
    report
        .lines()
        .find_map(|l| l.strip_prefix(key).map(str::trim))
        .unwrap_or_else(|| panic!("no `{key}` in:\n{report}"))
}
