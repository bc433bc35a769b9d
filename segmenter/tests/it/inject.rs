//! `segmenter inject` (seeds files with comments and bad lines) and
//! `segmenter inspect` (text and JSON).

use crate::support;

use std::fs;

use common::segment::Via;
use support::*;
use testkit::bins;

#[test]
fn inject_reports_bad_lines_by_number_and_keeps_the_rest() {
    let crawl = TempCrawl::new("inject-bad");
    let seeds = "\
# seeds for the test crawl
http://Example.TEST:80/a/./b/../c

   https://www.other.test/x   # a trailing comment
not a url
ftp://files.example.test/
http://
http://example.test/a/c
";
    // The crawl directory does not exist yet: inject creates it.
    fs::remove_dir_all(crawl.root()).unwrap();
    let stderr = inject(&crawl, seeds, &[]);
    let seeds_path = crawl.side("seeds.txt");
    let name = seeds_path.display().to_string();
    assert!(stderr.contains(&format!("{name}:5:")), "{stderr}");
    assert!(stderr.contains(&format!("{name}:6:")), "{stderr}");
    assert!(stderr.contains(&format!("{name}:7:")), "{stderr}");
    assert!(!stderr.contains(&format!("{name}:2:")), "{stderr}");
    assert_eq!(figure(&stderr, "seeds:"), 6, "{stderr}");
    assert_eq!(figure(&stderr, "bad seed lines:"), 3, "{stderr}");
    // The duplicate (line 2 and line 8 canonicalize alike) counts once.
    assert_eq!(figure(&stderr, "dupes:"), 0, "{stderr}");

    let seg = read_records(&crawl.dir.segment_path("00001"));
    assert_eq!(
        urls(&seg),
        ["http://example.test/a/c", "https://www.other.test/x"]
    );
    assert!(seg.iter().all(|r| r.hops == 0 && r.via == Via::Seed));
    assert_eq!(
        list_entries(&crawl.dir.scope_seeds_path()),
        "example.test\nother.test\n"
    );
    assert!(crawl.dir.bloom_path().is_file());
    assert!(crawl.dir.logs_dir().read_dir().unwrap().count() >= 1);

    // Injecting the same seeds again finds nothing new: each of the three
    // valid lines is a copy of a URL seen before.
    let stderr = inject(&crawl, seeds, &[]);
    assert_eq!(figure(&stderr, "new urls:"), 0, "{stderr}");
    assert_eq!(figure(&stderr, "dupes:"), 3, "{stderr}");
    assert!(stderr.contains("no new segment"), "{stderr}");
    assert_eq!(crawl.dir.segment_ids().unwrap(), ["00001"]);

    // New seeds of another domain extend the scope.
    let stderr = inject(&crawl, "http://third.test/\n", &[]);
    assert_eq!(figure(&stderr, "new urls:"), 1, "{stderr}");
    assert_eq!(
        list_entries(&crawl.dir.scope_seeds_path()),
        "example.test\nother.test\nthird.test\n"
    );
}

#[test]
fn line_numbers_stay_right_in_a_seeds_file_read_in_pieces() {
    // Large enough to be cut into several pieces read in parallel.
    let crawl = TempCrawl::new("inject-pieces");
    let mut seeds = String::new();
    let bad_lines = [3u64, 70_001, 123_456];
    let padding = "p".repeat(60);
    for line in 1..=130_000u64 {
        if bad_lines.contains(&line) {
            seeds.push_str("this is not a URL\n");
        } else {
            seeds.push_str(&format!("http://h{}.test/{padding}/{line}\n", line % 97));
        }
    }
    assert!(seeds.len() > 8 << 20);
    let stderr = inject(
        &crawl,
        &seeds,
        &[
            "--threads",
            "2",
            "--max-per-host",
            "1000000",
            "--min-delay",
            "0",
        ],
    );
    let name = crawl.side("seeds.txt").display().to_string();
    for line in bad_lines {
        assert!(
            stderr.contains(&format!("{name}:{line}: ")),
            "{line}: {stderr}"
        );
    }
    assert_eq!(figure(&stderr, "bad seed lines:"), 3, "{stderr}");
    assert_eq!(figure(&stderr, "scheduled:"), 130_000 - 3, "{stderr}");
}

#[test]
fn a_missing_seeds_file_is_an_error_naming_it() {
    let crawl = TempCrawl::new("inject-missing");
    let missing = crawl.side("nope.txt");
    let args = [
        "inject",
        crawl.root().to_str().unwrap(),
        missing.to_str().unwrap(),
    ];
    let out = bins::run_expecting(&mut segmenter_cmd(&args), crawl.root(), 1);
    let stderr = &out.stderr;
    assert!(
        stderr.starts_with(&format!("segmenter: {}:", missing.display())),
        "{stderr}"
    );

    let args = ["run", crawl.root().to_str().unwrap(), "--memory", "lots"];
    bins::run_expecting(&mut segmenter_cmd(&args), crawl.root(), 2);
}

#[test]
fn inspect_prints_text_and_json() {
    let crawl = TempCrawl::new("inspect");
    inject(
        &crawl,
        "http://a.test/1\nhttp://a.test/2\nhttp://www.a.test/\nhttp://b.test/\n",
        &[],
    );
    let seg = crawl.dir.segment_path("00001");
    let args = ["inspect", seg.to_str().unwrap()];
    let text = bins::run(&mut segmenter_cmd(&args), crawl.root()).stdout;
    assert!(text.contains("format version:   5"), "{text}");
    assert!(text.lines().any(|l| l == "URLs:             4"), "{text}");
    assert!(text.lines().any(|l| l == "hosts:            3"), "{text}");
    assert!(
        text.contains("domains:          2, lines grouped by domain"),
        "{text}"
    );

    let args = ["inspect", seg.to_str().unwrap(), "--json"];
    let out = bins::run(&mut segmenter_cmd(&args), crawl.root());
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v["urls"], 4);
    assert_eq!(v["hosts"], 3);
    assert_eq!(v["domains"], 2);
    assert_eq!(v["format_version"], 5);
    assert_eq!(v["not_before_urls"], 0);
    assert_eq!(v["grouped_by_domain"], true);
    assert_eq!(v["top_hosts"][0]["host"], "a.test");
    assert_eq!(v["top_hosts"][0]["urls"], 2);
    assert_eq!(v["hops"]["0"], 4);
    assert_eq!(v["via"]["seed"], 4);

    let args = ["inspect", "/nonexistent/x.v1.tsv.zst"];
    let out = bins::run_expecting(&mut segmenter_cmd(&args), crawl.root(), 1);
    assert!(out.stderr.contains("/nonexistent/x.v1.tsv.zst"));
}
