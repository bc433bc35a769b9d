//! A run prints a plain progress line on stderr every `--progress-interval`.

use crate::support;

use support::*;

/// The first number after `key` in a progress line (`1,234 pages` → 1234).
fn count_before(line: &str, key: &str) -> u64 {
    let head = &line[..line.find(key).unwrap_or_else(|| panic!("{key}: {line}"))];
    let word = head.split_whitespace().last().unwrap();
    word.replace(',', "").parse().unwrap()
}

#[test]
fn progress_lines_while_a_round_runs() {
    let crawl = TempCrawl::new("progress");
    inject(&crawl, "http://a.test/\n", &[]);
    let mut pages = Vec::new();
    for i in 0..400 {
        let links: Vec<String> = (0..50).map(|j| format!("/p{i}-{j}")).collect();
        let refs: Vec<&str> = links.iter().map(String::as_str).collect();
        pages.push(Page::html(&format!("http://a.test/{i}"), 1, &refs));
    }
    write_done(&crawl, "00001", &pages);

    let report = run_round(&crawl, &["--progress-interval", "1ms"]);
    let lines: Vec<&str> = report
        .lines()
        .filter(|l| l.starts_with("segmenter: progress: "))
        .collect();
    assert!(!lines.is_empty(), "{report}");
    // The counts only grow, and never past the totals of the report.
    let pages_seen: Vec<u64> = lines.iter().map(|l| count_before(l, " pages")).collect();
    let links_seen: Vec<u64> = lines.iter().map(|l| count_before(l, " links")).collect();
    assert!(pages_seen.windows(2).all(|w| w[0] <= w[1]), "{lines:?}");
    assert!(links_seen.windows(2).all(|w| w[0] <= w[1]), "{lines:?}");
    assert!(*pages_seen.last().unwrap() <= figure(&report, "pages scanned:"));
    assert!(*links_seen.last().unwrap() <= figure(&report, "links found:"));
    assert!(
        lines.iter().all(|l| l.contains(" MB of HTML, ")),
        "{lines:?}"
    );
    assert_eq!(figure(&report, "pages scanned:"), 400, "{report}");

    // 0 turns it off.
    write_done(&crawl, "00002", &pages[..50]);
    let report = run_round(&crawl, &["--progress-interval", "0"]);
    assert!(!report.contains("progress:"), "{report}");
}
