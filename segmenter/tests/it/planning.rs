//! Segments sized by time: each host gets as many URLs as its delay allows
//! in a round (from hosts.db and the fetcher's politeness settings), a host
//! that may not be asked before the round is over waits in the backlog, and
//! the URLs of a host that waits carry its next allowed contact.

use crate::support;

use std::time::SystemTime;

use common::hoststate::{HostDb, HostState, RobotsEntry};
use common::segment::Via;
use support::*;

/// 200 seeds on each of four hosts.
fn seeds() -> String {
    let mut s = String::new();
    for host in ["fast.test", "slow.test", "later.test", "gone.test"] {
        for i in 0..200 {
            s.push_str(&format!("http://{host}/{i}\n"));
        }
    }
    s
}

#[test]
fn each_host_gets_what_its_delay_allows_in_a_round() {
    let crawl = TempCrawl::new("plan-by-time");
    let now = common::timefmt::unix_millis(SystemTime::now());
    let robots = |ms| {
        Some(RobotsEntry {
            status: 200,
            body: b"User-agent: *\n".to_vec(),
            fetched_ms: ms,
            sitemaps: Vec::new(),
        })
    };
    let mut db = HostDb::open(crawl.dir.hosts_db_path()).unwrap();
    db.put_many(&[
        // Known, robots.txt fresh, answers in 1 s: a 3 s cycle at the
        // 2 s minimum delay.
        HostState {
            host: "fast.test".into(),
            robots: robots(now),
            response_times_ms: vec![1000],
            ..HostState::default()
        },
        // Crawl-delay 10 s, robots.txt fresh.
        HostState {
            host: "slow.test".into(),
            robots: robots(now),
            crawl_delay_ms: Some(10_000),
            ..HostState::default()
        },
        // May be asked in 50 s: 10 s of the round left.
        HostState {
            host: "later.test".into(),
            robots: robots(now),
            next_contact_ms: Some(now + 50_000),
            ..HostState::default()
        },
        // Not before the round is over.
        HostState {
            host: "gone.test".into(),
            robots: robots(now),
            next_contact_ms: Some(now + 3_600_000),
            ..HostState::default()
        },
    ])
    .unwrap();
    drop(db);

    // (new.test is not in hosts.db: the minimum delay, and one cycle for
    // its robots.txt.)
    let mut all = seeds();
    for i in 0..200 {
        all.push_str(&format!("http://new.test/{i}\n"));
    }
    let report = inject(
        &crawl,
        &all,
        &[
            "--round-time",
            "60s",
            "--min-delay",
            "2s",
            "--delay-factor",
            "2",
        ],
    );
    let seg = &segments(&crawl)["00001"];
    let count = |host: &str| seg.iter().filter(|r| r.host == host).count();
    // fast: delay max(2 s, 2 × 1 s) + 1 s response = 3 s → 20.
    assert_eq!(count("fast.test"), 20, "{report}");
    // slow: Crawl-delay 10 s → 6.
    assert_eq!(count("slow.test"), 6, "{report}");
    // later: 10 s left at 2 s → 5.
    assert_eq!(count("later.test"), 5, "{report}");
    assert_eq!(count("gone.test"), 0, "{report}");
    // new: 60 s at 2 s, less one for robots.txt → 29.
    assert_eq!(count("new.test"), 29, "{report}");

    // What waits for later rounds is in the backlog, nothing is dropped.
    let back = backlog(&crawl);
    assert_eq!(seg.len() + back.len(), 1000);
    assert!(back.iter().all(|r| r.via == Via::Backlog));
    assert_eq!(back.iter().filter(|r| r.host == "gone.test").count(), 200);
    assert_eq!(figure(&report, "time-capped hosts:"), 4, "{report}");
    assert_eq!(figure(&report, "waiting hosts:"), 1, "{report}");

    // later.test's URLs carry the time it may be asked; the others none.
    for r in seg {
        match r.host.as_str() {
            "later.test" => {
                let nb = r.not_before.expect("later.test waits");
                assert!((now + 49_000..now + 52_000).contains(&nb), "{}", nb - now);
            }
            _ => assert_eq!(r.not_before, None, "{r:?}"),
        }
    }
}

#[test]
fn max_per_host_still_caps_hosts_the_round_time_would_allow_more() {
    let crawl = TempCrawl::new("plan-max-per-host");
    let report = inject(
        &crawl,
        &seeds(),
        &["--max-per-host", "7", "--round-time", "1h"],
    );
    let seg = &segments(&crawl)["00001"];
    assert_eq!(seg.len(), 4 * 7);
    assert_eq!(figure(&report, "capped hosts:"), 4, "{report}");
    assert_eq!(figure(&report, "time-capped hosts:"), 0, "{report}");
}

#[test]
fn the_fetchers_settings_in_crawl_toml_plan_the_round() {
    let crawl = TempCrawl::new("plan-from-toml");
    std::fs::create_dir_all(crawl.root()).unwrap();
    std::fs::write(
        crawl.dir.config_path(),
        "[crawl]\nround_time = \"30s\"\n[fetcher]\nmin_delay = \"3s\"\nthreads = 4\n",
    )
    .unwrap();
    inject(&crawl, &seeds(), &[]);
    let seg = &segments(&crawl)["00001"];
    // 30 s at 3 s, less one for robots.txt.
    assert_eq!(seg.iter().filter(|r| r.host == "fast.test").count(), 9);
}
