//! Rescue: a URL the Bloom filter calls seen but that is in none of the
//! crawl's exact sets (the history, the backlog, the segments waiting, the
//! round's own lists) is scheduled after all, and counted; one that is in
//! them is not.

use crate::support;

use std::collections::BTreeSet;
use std::fs;

use support::*;

/// Sets every bit of the crawl's `seen.bloom` (and records it): a filter
/// that calls every URL seen.
fn saturate(crawl: &TempCrawl) {
    let path = crawl.dir.bloom_path();
    let params = common::bloom::BloomFilter::open_read_only(&path)
        .unwrap()
        .params();
    let mut bytes = fs::read(&path).unwrap();
    bytes.truncate(params.file_bytes() as usize);
    bytes[64..].fill(0xff);
    bytes[48..56].copy_from_slice(&params.bits.to_le_bytes());
    fs::write(&path, bytes).unwrap();
}

#[test]
fn urls_a_saturated_filter_calls_seen_are_scheduled_unless_the_crawl_knows_them() {
    let crawl = TempCrawl::new("rescue");
    inject(&crawl, "http://a.test/\nhttp://b.test/\n", &[]);
    // Round 1: a.test/ is fetched and links to twenty pages; three a round.
    let first: Vec<String> = (0..20).map(|i| format!("/w{i:02}")).collect();
    let refs: Vec<&str> = first.iter().map(String::as_str).collect();
    write_done(
        &crawl,
        "00001",
        &[
            Page::html("http://a.test/", 0, &refs),
            Page::html("http://b.test/", 0, &[]),
        ],
    );
    run_round(&crawl, &["--max-per-host", "3"]);
    let waiting: BTreeSet<String> = urls(&backlog(&crawl)).into_iter().collect();
    assert_eq!(waiting.len(), 17);

    // The filter now calls everything seen: a page with links to the
    // history, to the backlog, to the segment being consumed, and to ten
    // URLs never seen.
    saturate(&crawl);
    let new: Vec<String> = (0..10).map(|i| format!("http://b.test/new{i}")).collect();
    let mut links: Vec<String> = new.clone();
    links.push("http://a.test/".into());
    links.extend(waiting.iter().take(5).cloned());
    links.extend(urls(&segments(&crawl)["00002"]));
    let refs: Vec<&str> = links.iter().map(String::as_str).collect();
    let fetched: Vec<Page> = segments(&crawl)["00002"]
        .iter()
        .map(|r| Page::html(&r.url, 1, &[]))
        .chain([Page::html("http://b.test/", 0, &refs)])
        .collect();
    write_done(&crawl, "00002", &fetched);
    let report = run_round(&crawl, &["--max-per-host", "100"]);

    assert_eq!(figure(&report, "dupes:"), links.len() as u64, "{report}");
    assert_eq!(figure(&report, "rescued:"), 10, "{report}");
    let line = report.lines().find(|l| l.starts_with("rescued:")).unwrap();
    assert!(
        line.contains(&format!("of {} distinct URLs", links.len()))
            && line.contains(" 4 in the history")
            && line.contains(" 5 waiting")
            && line.contains(" 10 in neither")
            && line.contains(" 0 not checked"),
        "{line}"
    );
    // The ten are scheduled once, with the backlog; nothing twice.
    let scheduled: BTreeSet<String> = urls(&segments(&crawl)["00003"]).into_iter().collect();
    assert!(new.iter().all(|u| scheduled.contains(u)), "{scheduled:?}");
    assert_eq!(scheduled.len(), 10 + 17, "{scheduled:?}");
    let all: Vec<String> = segments(&crawl).values().flat_map(|r| urls(r)).collect();
    assert_eq!(all.len(), all.iter().collect::<BTreeSet<_>>().len());
    // The full filter grew, and counts its rescues.
    assert!(report.contains("bloom commit:          grown"), "{report}");
    assert!(report.contains(" 10 rescued in all"), "{report}");
    let status = testkit::bins::run(
        &mut segmenter_cmd(&["status", crawl.root().to_str().unwrap()]),
        crawl.root(),
    )
    .stdout;
    assert!(
        status.contains("bloom_rescued: 10\n") && status.contains("round_rescued: 10\n"),
        "{status}"
    );
}

#[test]
fn a_host_with_more_suspects_than_memory_allows_is_checked_in_part_and_said_so() {
    let crawl = TempCrawl::new("rescue-memory");
    inject(&crawl, "http://a.test/\n", &[]);
    saturate(&crawl);
    let links: Vec<String> = (0..400)
        .map(|i| format!("/page-with-a-long-name-{i:04}"))
        .collect();
    let refs: Vec<&str> = links.iter().map(String::as_str).collect();
    write_done(&crawl, "00001", &[Page::html("http://a.test/", 0, &refs)]);
    // A quarter of 64 KiB for one host's suspects: about 180 of them.
    let report = run_round(&crawl, &["--memory", "64KiB", "--max-per-host", "1000"]);
    let rescued = figure(&report, "rescued:");
    let line = report.lines().find(|l| l.starts_with("rescued:")).unwrap();
    let unchecked: u64 = line
        .split(", ")
        .find_map(|p| p.strip_suffix(" not checked)"))
        .unwrap()
        .parse()
        .unwrap();
    assert!(rescued > 100 && unchecked > 100, "{line}");
    assert_eq!(rescued + unchecked, 400, "{line}");
    assert!(report.contains("were not looked up"), "{report}");
    assert_eq!(segments(&crawl)["00002"].len() as u64, rescued);
}
