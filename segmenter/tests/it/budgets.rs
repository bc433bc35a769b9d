//! Limits a round plans with besides the delays: the page budgets over the
//! crawl (`max_host_pages`, `max_domain_pages`), the hosts held by their
//! failures (`backoff`, `parked`) or their bytes (`max_host_bytes`), the
//! crawl's byte budget, the links taken from one page, the extensions not
//! fetched and the free-disk floor. Every URL held waits in the backlog and
//! is counted with its reason.

use crate::support;

use std::collections::BTreeMap;
use std::time::SystemTime;

use common::hoststate::{HostDb, HostState};
use support::*;
use testkit::bins;

/// URLs per host in a list of records.
fn per_host(recs: &[common::segment::SegmentRecord]) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for r in recs {
        *m.entry(r.host.clone()).or_default() += 1;
    }
    m
}

/// The `held REASON:` line of a report: (hosts, URLs).
fn held(report: &str, reason: &str) -> (u64, u64) {
    let text = testkit::report::line(report, &format!("held {reason}:"));
    let n: Vec<u64> = text
        .split(|c: char| !c.is_ascii_digit())
        .filter(|w| !w.is_empty())
        .take(2)
        .map(|w| w.parse().unwrap())
        .collect();
    (n[0], n[1])
}

#[test]
fn page_budgets_cut_at_their_limit_and_the_rest_waits() {
    let crawl = TempCrawl::new("page-budgets");
    inject(&crawl, "http://www.site.test/\n", &[]);
    let www: Vec<String> = (0..20).map(|i| format!("/p{i}")).collect();
    let blog: Vec<String> = (0..20)
        .map(|i| format!("http://blog.site.test/q{i}"))
        .collect();
    let links: Vec<&str> = www.iter().chain(&blog).map(String::as_str).collect();
    write_done(
        &crawl,
        "00001",
        &[Page::html("http://www.site.test/", 0, &links)],
    );
    let flags = ["--max-host-pages", "5", "--max-domain-pages", "8"];
    let report = run_round(&crawl, &flags);
    // Hosts in order: blog takes its 5; the domain has 1 page in the
    // history, so www takes 8 - 1 - 5 = 2.
    let seg = per_host(&segments(&crawl)["00002"]);
    assert_eq!(seg["blog.site.test"], 5, "{report}");
    assert_eq!(seg["www.site.test"], 2, "{report}");
    assert_eq!(held(&report, "host-pages"), (1, 15), "{report}");
    assert_eq!(held(&report, "domain-pages"), (1, 18), "{report}");
    let waiting = per_host(&backlog(&crawl));
    assert_eq!(
        (waiting["blog.site.test"], waiting["www.site.test"]),
        (15, 18)
    );
    // Once fetched, the budgets are spent: nothing more is scheduled, and
    // the URLs still wait in the backlog (never dropped).
    let fetched: Vec<Page> = segments(&crawl)["00002"]
        .iter()
        .map(|r| Page::html(&r.url, 1, &[]))
        .collect();
    write_done(&crawl, "00002", &fetched);
    let report = run_round(&crawl, &flags);
    assert!(!crawl.dir.segment_path("00003").exists(), "{report}");
    assert_eq!(held(&report, "host-pages"), (1, 15), "{report}");
    assert_eq!(held(&report, "domain-pages"), (1, 18), "{report}");
    assert_eq!(backlog(&crawl).len(), 33);
    // The JSON report has the same counts, with the hosts.
    let json = newest_json_report(&crawl);
    assert_eq!(json["selection"]["held"]["host-pages"]["urls"], 15);
    assert_eq!(
        json["selection"]["held"]["domain-pages"]["examples"][0],
        "www.site.test"
    );
}

#[test]
fn failing_hosts_and_hosts_over_their_bytes_are_held_with_their_reason() {
    let crawl = TempCrawl::new("holds");
    let now = common::timefmt::unix_millis(SystemTime::now());
    let hour = 3_600_000;
    let mut db = HostDb::open(crawl.dir.hosts_db_path()).unwrap();
    db.put_many(&[
        // Failing for an hour, three failures in a row: a 40 s delay
        // (5 s x 8), and held 10 minutes more.
        HostState {
            host: "failing.test".into(),
            consecutive_errors: 3,
            failing_since_ms: Some(now - hour),
            next_contact_ms: Some(now + 10 * 60_000),
            ..HostState::default()
        },
        // Failing for four days: parked, one URL a round.
        HostState {
            host: "parked.test".into(),
            consecutive_errors: 40,
            failing_since_ms: Some(now - 96 * hour),
            ..HostState::default()
        },
        // 2 MB stored over the crawl, for a budget of 1 MB.
        HostState {
            host: "big.test".into(),
            bytes_total: 2_000_000,
            ..HostState::default()
        },
    ])
    .unwrap();
    drop(db);
    let mut seeds = String::new();
    for host in ["failing.test", "parked.test", "big.test", "fine.test"] {
        for i in 0..100 {
            seeds.push_str(&format!("http://{host}/{i}\n"));
        }
    }
    let report = inject(&crawl, &seeds, &["--max-host-bytes", "1MB"]);
    let seg = per_host(&segments(&crawl)["00001"]);
    // 20 minutes of the round left at a 40 s cycle (one for robots.txt).
    assert_eq!(seg.get("failing.test"), Some(&29), "{report}");
    assert_eq!(seg.get("parked.test"), Some(&1), "{report}");
    assert_eq!(seg.get("big.test"), None, "{report}");
    assert_eq!(seg.get("fine.test"), Some(&100), "{report}");
    assert_eq!(held(&report, "backoff"), (1, 71), "{report}");
    assert_eq!(held(&report, "parked"), (1, 99), "{report}");
    assert_eq!(held(&report, "host-bytes"), (1, 100), "{report}");
    assert_eq!(backlog(&crawl).len(), 71 + 99 + 100);
}

#[test]
fn nothing_is_scheduled_once_the_crawl_budget_is_spent() {
    let crawl = TempCrawl::new("crawl-bytes");
    inject(&crawl, "http://a.test/\n", &[]);
    let links: Vec<String> = (0..10).map(|i| format!("/{i}")).collect();
    let links: Vec<&str> = links.iter().map(String::as_str).collect();
    write_done(&crawl, "00001", &[Page::html("http://a.test/", 0, &links)]);
    let report = run_round(&crawl, &["--max-crawl-bytes", "100"]);
    assert!(!crawl.dir.segment_path("00002").exists(), "{report}");
    assert_eq!(held(&report, "crawl-bytes"), (1, 10), "{report}");
    assert!(report.contains("max_crawl_bytes is 100"), "{report}");
    assert_eq!(backlog(&crawl).len(), 10);
}

#[test]
fn a_page_of_ten_thousand_links_gives_the_capped_number() {
    let crawl = TempCrawl::new("links-cap");
    inject(&crawl, "http://a.test/\n", &[]);
    let links: Vec<String> = (0..10_000).map(|i| format!("/l{i}")).collect();
    let links: Vec<&str> = links.iter().map(String::as_str).collect();
    write_done(&crawl, "00001", &[Page::html("http://a.test/", 0, &links)]);
    let report = run_round(
        &crawl,
        &["--max-per-host", "100000", "--round-time", "100h"],
    );
    eprintln!(
        "10,000 links, default cap: over page cap: {}",
        testkit::report::line(&report, "over page cap:")
    );
    assert_eq!(figure(&report, "over page cap:"), 9_000, "{report}");
    assert!(
        report.contains("of 1 pages over max_links_per_page"),
        "{report}"
    );
    assert_eq!(figure(&report, "links found:"), 10_000, "{report}");
    let scheduled = segments(&crawl)["00002"].len();
    assert_eq!(scheduled, 1_000);
}

#[test]
fn links_to_archives_and_video_are_not_fetched_and_counted() {
    let crawl = TempCrawl::new("extensions");
    inject(&crawl, "http://a.test/\n", &[]);
    let links = [
        "/page.html",
        "/dist/tool-1.0.tar.gz",
        "/dist/tool.zip",
        "/media/talk.MP4",
        "/sitemap.xml.gz",
    ];
    write_done(&crawl, "00001", &[Page::html("http://a.test/", 0, &links)]);
    let report = run_round(&crawl, &[]);
    assert_eq!(figure(&report, "rejected extension:"), 3, "{report}");
    let got = urls(&segments(&crawl)["00002"]);
    assert_eq!(
        got,
        ["http://a.test/page.html", "http://a.test/sitemap.xml.gz"]
    );
    // An empty list turns the filter off.
    let crawl = TempCrawl::new("extensions-off");
    inject(&crawl, "http://a.test/\n", &[]);
    write_done(&crawl, "00001", &[Page::html("http://a.test/", 0, &links)]);
    let report = run_round(&crawl, &["--skip-extensions", ""]);
    assert_eq!(figure(&report, "rejected extension:"), 0, "{report}");
}

/// Every file under `dir` with its bytes (`.segmenter.lock` and logs aside).
fn snapshot(dir: &std::path::Path) -> BTreeMap<std::path::PathBuf, Vec<u8>> {
    testkit::files::snapshot(dir, |p| {
        p.starts_with("logs") || p == std::path::Path::new(".segmenter.lock")
    })
}

#[test]
fn a_round_that_would_not_fit_above_the_floor_is_refused_with_nothing_changed() {
    let crawl = TempCrawl::new("disk-floor");
    inject(&crawl, "http://a.test/\n", &[]);
    write_done(
        &crawl,
        "00001",
        &[Page::html("http://a.test/", 0, &["/x", "/y"])],
    );
    let before = snapshot(crawl.root());
    let out = bins::run_within(
        &mut segmenter_cmd(&[
            "run",
            crawl.root().to_str().unwrap(),
            "--min-free-disk",
            "99.999%",
        ]),
        crawl.root(),
        3,
        std::time::Duration::from_secs(60),
    );
    assert!(
        out.stderr.contains("not enough free disk space")
            && out.stderr.contains("free at least")
            && out.stderr.contains("needed besides"),
        "{}",
        out.stderr
    );
    assert_eq!(snapshot(crawl.root()), before, "nothing changed");
    // With room, the same round goes on.
    run_round(&crawl, &[]);
    assert!(crawl.dir.segment_path("00002").exists());
}
