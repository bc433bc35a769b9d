//! Rounds on a web with a tail (a host that accepts and never answers, a
//! robots.txt that answers 500 or 503, a refused port, a `Crawl-delay`
//! host, one host far larger than the others, many small ones), crawled by
//! `scripts/crawl.sh` to its end: no round lasts longer than its target
//! because of one host, none waits for the black hole, politeness holds
//! across every round boundary, the crawl still reaches every page a
//! correct crawl reaches, and once at its end it says so without another
//! round.

use crate::support;

use std::collections::BTreeSet;
use std::time::Duration;

use common::crawllog::{ErrorCode, Status};
use testkit::demo::{Demo, DemoParams, HostRole};

use support::{CrawlSettings, DemoCrawl, some};

#[test]
fn no_round_waits_for_one_host_and_every_page_is_reached() {
    let demo = Demo::with_params(DemoParams {
        crawl_delay: 0.3,
        ..DemoParams::small(17)
    });
    let round_time = Duration::from_secs(8);
    let grace = Duration::from_secs(1);
    let settings = CrawlSettings {
        round_time,
        // The black hole holds a request for as long as it is let: half a
        // minute, more than a round.
        first_byte_timeout: Duration::from_secs(30),
        fetcher_extra: format!("stop_grace = \"{}ms\"\n", grace.as_millis()),
        ..CrawlSettings::default()
    };
    let c = DemoCrawl::start("rounds-tail", &demo, settings);
    let hole = c
        .web
        .demo()
        .host_with_role(HostRole::BlackHole)
        .name
        .clone();
    let out = c.crawl_to_the_end();

    // Each fetch, from its stats.json: never longer than the round's target
    // (plus the grace for requests in flight), and the black hole never
    // held one for its 30 s timeout. Some rounds ended by their tail.
    let mut reasons = Vec::new();
    for entry in std::fs::read_dir(c.crawl.join("fetched")).unwrap() {
        let dir = entry.unwrap().path();
        let text = std::fs::read_to_string(dir.join("stats.json")).unwrap();
        let stats: serde_json::Value = serde_json::from_str(&text).unwrap();
        let seconds = stats["seconds"].as_f64().unwrap();
        let reason = stats["stop_reason"].as_str().unwrap().to_string();
        assert!(
            seconds <= (round_time + grace).as_secs_f64() + 1.0,
            "{}: a fetch of {seconds:.1}s ({reason}) with a round time of {round_time:?}\n{}",
            dir.display(),
            out.stdout
        );
        reasons.push(reason);
    }
    assert!(
        reasons.iter().any(|r| r == "tail"),
        "no round ended by its tail: {reasons:?}\n{}",
        out.stdout
    );

    // The black hole was asked for its robots.txt, never for a page; each
    // attempt was given up when its round ended, as a timeout.
    let outcome = c.outcome();
    let hole_lines: Vec<_> = outcome
        .log
        .iter()
        .map(|(_, l)| l)
        .filter(|l| l.url.contains(&format!("//{hole}")))
        .collect();
    let attempts: Vec<_> = hole_lines
        .iter()
        .filter(|l| l.url.ends_with("/robots.txt"))
        .collect();
    assert!(!attempts.is_empty());
    for a in &attempts {
        assert_eq!(a.status, Status::Error(ErrorCode::Timeout), "{a:?}");
        assert!(a.note.contains("abandoned when the round ended"), "{a:?}");
    }
    assert!(
        hole_lines
            .iter()
            .filter(|l| !l.url.ends_with("/robots.txt"))
            .all(|l| l.status == Status::Error(ErrorCode::RobotsUnavailable)),
        "{hole_lines:?}"
    );

    // Every page a correct crawl fetches was stored, and nothing else.
    let expected = c.web.expected(&c.limits());
    let stored: BTreeSet<&str> = outcome.pages_stored().keys().copied().collect();
    let want: BTreeSet<&str> = expected.fetch.keys().map(String::as_str).collect();
    let missed: Vec<&&str> = want.difference(&stored).collect();
    let extra: Vec<&&str> = stored.difference(&want).collect();
    assert!(
        missed.is_empty() && extra.is_empty(),
        "missed:\n{}extra:\n{}",
        some(&missed, 20),
        some(&extra, 20)
    );

    // Run again, the crawl says it has ended (naming when the next refetch
    // is due) and stops with exit code 0, without a round: no journal line,
    // no fetched run.
    let journal = || std::fs::read_to_string(c.crawl.join("rounds.v1.tsv")).unwrap();
    let runs = || std::fs::read_dir(c.crawl.join("fetched")).unwrap().count();
    let (lines, fetched) = (journal(), runs());
    let again = c.run_crawl_sh(&[]);
    testkit::bins::assert_code(&again, 0, Some(&c.crawl));
    assert!(
        again.stdout.contains("the crawl has ended")
            && again.stdout.contains("is due for a refetch before 20"),
        "{}",
        again.stdout
    );
    assert_eq!((journal(), runs()), (lines, fetched), "{}", again.stdout);

    // Politeness across every round boundary, from the servers' side.
    let violations = c.politeness_violations();
    assert!(
        violations.is_empty(),
        "politeness violated {} time(s):\n{}",
        violations.len(),
        some(&violations, 20)
    );
}
