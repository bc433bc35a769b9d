//! The external sort: with `--memory` far below the size of the input, the
//! segment is identical to an in-memory sort and correctly ordered.

use crate::support;

use std::collections::HashMap;

use common::segment::{SegmentRecord, Via};
use support::*;
use testkit::Rng;

fn prepare(tag: &str, seeds: &str, leftover: &[SegmentRecord]) -> TempCrawl {
    let crawl = TempCrawl::new(tag);
    inject(&crawl, seeds, &[]);
    write_leftover(&crawl, "00001", leftover);
    mark_fetched_empty(&crawl, "00001");
    crawl
}

#[test]
fn spilled_sort_equals_in_memory_sort() {
    // 40,000 lines over 300 hosts of 10 domains, in random order, with many
    // copies of each URL (in-links add up, the fewest hops wins).
    let mut rng = Rng::new(7);
    let soon = common::timefmt::unix_millis(std::time::SystemTime::now()) + 600_000;
    let mut input = Vec::new();
    for _ in 0..40_000 {
        let d = rng.below(10);
        let h = rng.below(30);
        let p = rng.below(200);
        let mut r = rec(
            &format!("http://h{h}.d{d}.test/p{p}"),
            rng.below(6) as u32,
            Via::Leftover,
            0,
        );
        r.inlinks = rng.below(4) as u32;
        // A hold on some copies (an hour or so ahead): the latest one wins.
        if rng.below(8) == 0 {
            r.not_before = Some(soon + rng.below(3_600_000) as i64);
        }
        input.push(r);
    }
    let seeds: String = (0..10).map(|d| format!("http://d{d}.test/\n")).collect();
    let flags = [
        "--max-per-host",
        "1000000",
        "--max-segment-size",
        "10000000",
    ];

    let small = prepare("sort-small", &seeds, &input);
    let mut args = flags.to_vec();
    args.extend(["--memory", "16KiB"]);
    let report = run_round(&small, &args);
    assert!(
        figure(&report, "sort spills:") > 20,
        "a 16 KiB limit must spill many runs:\n{report}"
    );

    let large = prepare("sort-large", &seeds, &input);
    let mut args = flags.to_vec();
    args.extend(["--memory", "512MB"]);
    let report = run_round(&large, &args);
    assert_eq!(figure(&report, "sort spills:"), 0, "{report}");

    let got_small = read_records(&small.dir.segment_path("00002"));
    let got_large = read_records(&large.dir.segment_path("00002"));
    assert_eq!(got_small, got_large);

    // The expected segment, computed here in memory.
    let mut merged: HashMap<String, SegmentRecord> = HashMap::new();
    for r in &input {
        merged
            .entry(r.url.clone())
            .and_modify(|m| {
                m.inlinks += r.inlinks;
                m.hops = m.hops.min(r.hops);
                m.not_before = m.not_before.max(r.not_before);
            })
            .or_insert_with(|| r.clone());
    }
    // (Holds travel in whole seconds, rounded up.)
    for r in merged.values_mut() {
        r.not_before = r.not_before.map(|ms| (ms + 999) / 1000 * 1000);
    }
    let domain = |host: &str| host.split_once('.').unwrap().1.to_string();
    let mut expected: Vec<SegmentRecord> = merged.into_values().collect();
    expected.sort_by(|a, b| {
        (domain(&a.host), &a.host)
            .cmp(&(domain(&b.host), &b.host))
            .then(a.hops.cmp(&b.hops))
            .then(b.inlinks.cmp(&a.inlinks))
            .then(a.url.cmp(&b.url))
    });
    assert_eq!(got_small.len(), expected.len());
    for (i, (g, e)) in got_small.iter().zip(&expected).enumerate() {
        assert_eq!(g, e, "line {}", i + 1);
    }
}
