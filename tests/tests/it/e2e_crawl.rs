//! A whole crawl of the demo web with the real binaries, driven by
//! `scripts/crawl.sh` until it stops by itself, judged against the link
//! graph of the demo (`Demo::expected`), the servers' request logs, the
//! crawl logs, the WARC files (with the real `warcio`) and the segments (with
//! the real `zstdcat`).

use crate::support;

use std::collections::{BTreeMap, BTreeSet};

use common::crawllog::{ErrorCode, Status};
use testkit::demo::{Demo, DemoParams, Exclusion};
use testkit::warcio;

use support::{CrawlSettings, DemoCrawl, Outcome, requested_url, some, zstdcat};

#[test]
fn crawling_the_demo_web_to_the_end_fetches_exactly_what_the_link_graph_allows() {
    let demo = Demo::with_params(DemoParams {
        crawl_delay: 0.25,
        ..DemoParams::new(11)
    });
    let mut settings = CrawlSettings::default();
    // A hop limit that binds (the traps host goes 6 hops deep), so that the
    // check covers it; everything else at the defaults of `[filter]`.
    settings.filter.max_hops = 5;
    let c = DemoCrawl::start("full", &demo, settings);
    let expected = c.web.expected(&c.limits());
    assert!(
        expected.fetch.len() > 2000,
        "the full demo: {}",
        expected.fetch.len()
    );
    assert!(
        expected
            .excluded
            .values()
            .any(|x| matches!(x, Exclusion::Filter(common::filter::Reject::TooManyHops)))
    );
    // Pages only sitemaps lead to are part of a correct crawl.
    assert!(expected.by_sitemap.len() > 20, "{:?}", expected.by_sitemap);

    let out = c.crawl_to_the_end();
    let rounds = out
        .stdout
        .lines()
        .filter(|l| l.starts_with("round "))
        .count();
    assert!(
        rounds as u32 > expected.max_hops(),
        "{rounds} rounds for URLs {} hops deep:\n{}",
        expected.max_hops(),
        out.stdout
    );

    // Every check runs, and the failure lists them all: one broken rule
    // does not hide another.
    let outcome = c.outcome();
    let mut failures = check_fetched_exactly_the_expected(&c, &expected, &outcome);
    failures.extend(check_politeness(&c));
    failures.extend(check_files_with_standard_tools(&outcome));
    assert!(
        failures.is_empty(),
        "{} check(s) failed on the crawl in {}:\n\n{}",
        failures.len(),
        c.crawl.display(),
        failures.join("\n")
    );
}

/// The server saw requests for, and the WARC files hold responses to,
/// exactly the URLs to fetch (plus robots.txt), each page once; the crawl
/// log accounts for every attempt, with the reason for every URL not
/// fetched.
fn check_fetched_exactly_the_expected(
    c: &DemoCrawl,
    expected: &testkit::demo::Expected,
    outcome: &Outcome,
) -> Vec<String> {
    let mut failures = Vec::new();
    // From the server's side.
    let requests = c.web.logs();
    let requested: Vec<String> = requests.iter().map(|e| requested_url(&c.web, e)).collect();
    let forbidden: BTreeSet<&String> = requested
        .iter()
        .filter(|u| !expected.may_request(u))
        .collect();
    if !forbidden.is_empty() {
        failures.push(format!(
            "the servers saw requests for URLs a correct crawl never asks for \
             (trap, disallowed, out of scope, past the hop limit):\n{}",
            some(forbidden.iter().map(|u| describe(expected, u)), 30)
        ));
    }
    let requested_set: BTreeSet<&str> = requested.iter().map(String::as_str).collect();
    let missed: Vec<&String> = expected
        .fetch
        .keys()
        .chain(&expected.robots)
        .filter(|u| !requested_set.contains(u.as_str()))
        .collect();
    if !missed.is_empty() {
        failures.push(format!(
            "{} of {} URLs a correct crawl fetches were never requested:\n{}",
            missed.len(),
            expected.fetch.len(),
            some(&missed, 30)
        ));
    }
    // (robots.txt URLs, and the redirects followed to read them, are left
    // out here: the WARC check below tells them from pages.)
    let mut page_requests: BTreeMap<&str, usize> = BTreeMap::new();
    for u in requested.iter().filter(|u| !expected.robots.contains(*u)) {
        *page_requests.entry(u).or_default() += 1;
    }
    let twice: Vec<String> = page_requests
        .iter()
        .filter(|(_, n)| **n > 1)
        .map(|(u, n)| format!("{u} ({n} times)"))
        .collect();
    if !twice.is_empty() {
        failures.push(format!(
            "pages requested more than once in an uninterrupted crawl:\n{}",
            some(&twice, 30)
        ));
    }

    // From the WARC files: one response per page, with the expected status.
    let stored = outcome.pages_stored();
    let mut wrong = Vec::new();
    for (url, f) in &expected.fetch {
        match stored.get(url.as_str()).map(Vec::as_slice) {
            Some([one]) if one.status == f.status => {}
            Some([one]) => wrong.push(format!(
                "{url}: status {} stored, {} expected",
                one.status, f.status
            )),
            Some(many) => wrong.push(format!("{url}: stored {} times", many.len())),
            None => wrong.push(format!("{url}: no response record")),
        }
    }
    for url in stored.keys() {
        if !expected.fetch.contains_key(*url) {
            wrong.push(format!("stored as a page: {}", describe(expected, url)));
        }
    }
    for s in outcome.stored.iter().filter(|s| s.via == "robots") {
        if !expected.robots.contains(&s.url) {
            wrong.push(format!(
                "{}: a robots.txt fetch on a host never needing it",
                s.url
            ));
        }
    }
    if !wrong.is_empty() {
        failures.push(format!(
            "the WARC files do not hold exactly one response per URL to fetch:\n{}",
            some(&wrong, 30)
        ));
    }

    // From the crawl logs: every request is there, every response too, and
    // every URL left out is there with its reason.
    let log = outcome.log_by_url();
    let mut problems = Vec::new();
    for url in &requested_set {
        if !log.contains_key(url) {
            problems.push(format!("{url}: requested, but not in any crawl.log"));
        }
    }
    for s in &outcome.stored {
        let logged = log
            .get(s.url.as_str())
            .is_some_and(|lines| lines.iter().any(|l| l.status == Status::Http(s.status)));
        if !logged {
            problems.push(format!(
                "{}: stored with status {}, but no crawl.log line says so",
                s.url, s.status
            ));
        }
    }
    // Hops are counted along the path the crawl took: a round that ends
    // early leaves some pages for the next one, and a page one hop further
    // from the seeds, on another host, may then be the first to link a URL.
    // So never fewer hops than its distance from the seeds, sometimes more,
    // and the same in every line of the URL.
    for (url, f) in &expected.fetch {
        if let Some(lines) = log.get(url.as_str()) {
            let hops: BTreeSet<u32> = lines.iter().map(|l| l.hops).collect();
            if hops.len() != 1 || hops.iter().any(|&h| h < f.hops) {
                problems.push(format!(
                    "{url}: logged with hops {hops:?}, {} expected (or more)",
                    f.hops
                ));
            }
        }
    }
    for (url, why) in &expected.excluded {
        let lines = log.get(url.as_str());
        let ok = match why {
            // The segmenter drops these: never scheduled, never attempted.
            Exclusion::Filter(_) => lines.is_none(),
            Exclusion::RobotsDisallowed => lines.is_some_and(|ls| {
                ls.iter()
                    .all(|l| l.status == Status::Error(ErrorCode::Robots))
            }),
            Exclusion::RobotsUnavailable => lines.is_some_and(|ls| {
                ls.iter()
                    .all(|l| l.status == Status::Error(ErrorCode::RobotsUnavailable))
            }),
            Exclusion::CrawlDelayTooHigh => lines.is_some_and(|ls| {
                ls.iter()
                    .all(|l| l.status == Status::Error(ErrorCode::CrawlDelay))
            }),
        };
        if !ok {
            let seen: Vec<String> = lines
                .into_iter()
                .flatten()
                .map(|l| support::status_word(l.status))
                .collect();
            problems.push(format!("{url}: {why:?} expected; crawl.log has {seen:?}"));
        }
    }
    for url in expected.refused.keys() {
        let ok = log.get(url.as_str()).is_some_and(|ls| {
            ls.iter().all(|l| {
                matches!(
                    l.status,
                    Status::Error(ErrorCode::RobotsUnavailable | ErrorCode::Refused)
                )
            })
        });
        if !ok {
            problems.push(format!(
                "{url}: on the host refusing connections, not logged as such"
            ));
        }
    }
    if !problems.is_empty() {
        failures.push(format!(
            "the crawl logs do not account for the crawl:\n{}",
            some(&problems, 40)
        ));
    }
    failures
}

/// What `expected` says of `url`.
fn describe(expected: &testkit::demo::Expected, url: &str) -> String {
    match expected.excluded.get(url) {
        Some(why) => format!("{url} (excluded: {why:?})"),
        None if expected.refused.contains_key(url) => format!("{url} (on the refusing host)"),
        None if expected.robots.contains(url) => {
            format!("{url} (a robots.txt URL or a redirect followed to read one: not a page)")
        }
        None => format!("{url} (not reachable from the seeds)"),
    }
}

/// From the servers' request logs: no overlap on any host, and no two
/// requests to one host closer than the crawl's delay, or than the
/// `Crawl-delay` where robots.txt sets one.
fn check_politeness(c: &DemoCrawl) -> Vec<String> {
    let violations = c.politeness_violations();
    if violations.is_empty() {
        return Vec::new();
    }
    vec![format!(
        "politeness violated {} time(s) (gap = end of one response to the start of the next \
         request on the host):\n{}",
        violations.len(),
        some(&violations, 20)
    )]
}

/// The files, read with the tools a user has: `warcio check` on every WARC
/// file, `zstdcat` on every segment, leftover and backlog file.
fn check_files_with_standard_tools(outcome: &Outcome) -> Vec<String> {
    let mut failures = Vec::new();
    assert!(!outcome.warc_files.is_empty());
    if let Err(e) = warcio::check(&outcome.warc_files) {
        failures.push(e);
    }
    assert!(
        outcome.segment_files.len() > 3,
        "{:?}",
        outcome.segment_files
    );
    for file in &outcome.segment_files {
        let text = zstdcat(file);
        for (n, line) in text.lines().enumerate() {
            let fields: Vec<&str> = line.split('\t').collect();
            assert!(
                fields.len() == 12
                    && fields[1].starts_with("http://")
                    && fields[1].contains(&format!("//{}", fields[0]))
                    && fields[2].parse::<u32>().is_ok()
                    && (fields[6] == "-" || common::timefmt::parse_iso(fields[6]).is_some()),
                "{} line {}: not `host url hops inlinks via tries not_before etag \
                 last_modified digest fetched record_id`: {line:?}",
                file.display(),
                n + 1
            );
        }
        // The same count as the project's own reader.
        let summary = common::segment::SegmentSummary::compute(file, 1).unwrap();
        assert_eq!(
            text.lines().count() as u64,
            summary.urls,
            "{}",
            file.display()
        );
    }
    // Every segment keeps the URLs of a registrable domain together.
    for file in outcome
        .segment_files
        .iter()
        .filter(|f| f.parent().is_some_and(|p| p.ends_with("segments")))
    {
        let summary = common::segment::SegmentSummary::compute(file, 1).unwrap();
        if !summary.grouped_by_domain {
            failures.push(format!("{}: not grouped by domain", file.display()));
        }
    }
    failures
}
