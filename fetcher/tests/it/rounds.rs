//! Rounds: the penalty box outlives a run (back to back, and after
//! `kill -9`), and a round ends when the hosts left would mostly make it
//! wait, leaving their URLs with their not-before times.

use crate::support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use common::crawllog::{ErrorCode, Status};
use common::hoststate::HostDb;
use common::segment::Via;
use support::*;
use testkit::bins::Signal;
use testkit::server::{Request, Response, Routes, Server, assert_polite_by_host};

/// Scheduling noise between the crawler's clock and the server's.
const SLACK: Duration = Duration::from_millis(5);

fn pages(n: usize) -> Routes {
    let mut r = Routes::new();
    for i in 0..n {
        r = r.route(format!("/{i}"), Response::html(format!("page {i}")));
    }
    r
}

#[test]
fn back_to_back_runs_keep_every_hosts_delay() {
    let server = Server::builder()
        .host(
            "a.test",
            pages(6).route("/robots.txt", Response::not_found()),
        )
        .host(
            "b.test",
            pages(6).route(
                "/robots.txt",
                Response::text("User-agent: *\nCrawl-delay: 0.8\n"),
            ),
        )
        .start()
        .unwrap();
    let crawl = crawl_dir("back-to-back");
    for (i, id) in ["00001", "00002", "00003"].iter().enumerate() {
        let (p, q) = (format!("/{}", 2 * i), format!("/{}", 2 * i + 1));
        write_segment(
            &crawl,
            id,
            &server,
            &[
                ("a.test", &p),
                ("a.test", &q),
                ("b.test", &p),
                ("b.test", &q),
            ],
        );
        fetch(
            fetch_cmd(&crawl, &server).args([id, "--min-delay", "400ms"]),
            &crawl,
            0,
        );
    }
    // Every request of the three runs, seen from the server: a.test every
    // 400 ms at most, b.test every 800 ms (its Crawl-delay), across the
    // ends of runs too.
    let log = server.logs();
    assert_eq!(
        log.len(),
        2 + 12,
        "robots.txt once per host, each page once"
    );
    assert_polite_by_host(&log, |h| {
        if h == "b.test" {
            Duration::from_millis(800) - SLACK
        } else {
            Duration::from_millis(400) - SLACK
        }
    });
    // The next allowed contact is in the host state, for the next run.
    let db = HostDb::open(crawl.hosts_db_path()).unwrap();
    let b = db.get("b.test").unwrap().unwrap();
    let next = b.next_contact_ms.expect("next contact kept");
    let last = b.last_contact_ms.expect("last contact kept");
    assert!(next >= last + 700, "next {next}, last {last}");
    // Nothing left of the contacts journal after clean runs.
    let journals = std::fs::read_dir(crawl.contacts_dir())
        .map(|d| d.count())
        .unwrap_or(0);
    assert_eq!(journals, 0);
}

#[test]
fn a_domain_queue_holds_across_runs_whichever_host_comes_first() {
    // With --key domain, one queue for both hosts: run 2 starts with
    // a.example.test, which run 1 never asked, and still waits the delay
    // after run 1's request to b.example.test.
    let server = Server::builder()
        .host(
            "a.example.test",
            pages(2).route("/robots.txt", Response::not_found()),
        )
        .host(
            "b.example.test",
            pages(2).route("/robots.txt", Response::not_found()),
        )
        .start()
        .unwrap();
    let crawl = crawl_dir("domain-hold");
    write_segment(&crawl, "00001", &server, &[("b.example.test", "/0")]);
    write_segment(&crawl, "00002", &server, &[("a.example.test", "/0")]);
    for id in ["00001", "00002"] {
        fetch(
            fetch_cmd(&crawl, &server).args([id, "--key", "domain", "--min-delay", "1s"]),
            &crawl,
            0,
        );
    }
    // Seen as one host, the domain.
    let log: Vec<_> = server
        .logs()
        .into_iter()
        .map(|mut e| {
            e.host = "example.test".into();
            e
        })
        .collect();
    assert_eq!(log.len(), 4, "robots.txt and a page on each host");
    assert_polite_by_host(&log, |_| Duration::from_secs(1) - SLACK);
}

#[test]
fn a_run_killed_between_two_requests_holds_its_hosts_for_the_next_run() {
    let server = Server::builder()
        .host(
            "a.test",
            pages(4).route("/robots.txt", Response::not_found()),
        )
        .start()
        .unwrap();
    let crawl = crawl_dir("killed-holds");
    write_segment(
        &crawl,
        "00001",
        &server,
        &[("a.test", "/0"), ("a.test", "/1")],
    );
    // (A host whose robots.txt a killed run read, and which the next run
    // does not know, waits the longest Crawl-delay obeyed: here the delay.)
    let delays = ["--min-delay", "1500ms", "--max-crawl-delay", "1500ms"];
    let killed = start(fetch_cmd(&crawl, &server).arg("00001").args(delays));
    // robots.txt, 1.5 s, /0; then kill -9 while the fetcher waits to ask /1.
    assert!(server.wait_for_requests(2, Duration::from_secs(20)));
    std::thread::sleep(Duration::from_millis(100));
    killed.signal(Signal::Kill).unwrap();
    killed.finish(RUN_BOUND);
    assert_eq!(server.log("a.test").len(), 2, "killed before /1");

    // Another segment on the same host, at once: its first request waits
    // the delay after /0, as the killed run would have.
    write_segment(&crawl, "00002", &server, &[("a.test", "/2")]);
    fetch(
        fetch_cmd(&crawl, &server).arg("00002").args(delays),
        &crawl,
        0,
    );
    // And the killed run, resumed.
    fetch(
        fetch_cmd(&crawl, &server).arg("00001").args(delays),
        &crawl,
        0,
    );
    let log = server.log("a.test");
    // (robots.txt may be asked again: the killed run may have died before
    // it put the answer in hosts.db.)
    let pages: Vec<&str> = log
        .iter()
        .map(|e| e.target.as_str())
        .filter(|t| *t != "/robots.txt")
        .collect();
    assert_eq!(pages, ["/0", "/2", "/1"]);
    assert_polite_by_host(&log, |_| Duration::from_millis(1500) - SLACK);
}

#[test]
fn a_round_ends_when_only_waiting_hosts_are_left() {
    let hole_asked = Arc::new(AtomicBool::new(false));
    let asked = hole_asked.clone();
    let server = Server::builder()
        .host(
            "fast.test",
            pages(20).route("/robots.txt", Response::not_found()),
        )
        // robots.txt unavailable: nothing there before it is asked again.
        .host(
            "down.test",
            pages(3).route("/robots.txt", Response::status(503)),
        )
        // Accepts and never answers.
        .host(
            "hole.test",
            Routes::new().route_fn("/robots.txt", move |_: &Request| {
                asked.store(true, Ordering::SeqCst);
                Response::never_answer()
            }),
        )
        .start()
        .unwrap();
    let crawl = crawl_dir("tail");
    let mut urls: Vec<(&str, String)> = (0..20).map(|i| ("fast.test", format!("/{i}"))).collect();
    urls.extend((0..3).map(|i| ("down.test", format!("/{i}"))));
    urls.extend((0..3).map(|i| ("hole.test", format!("/{i}"))));
    let pairs: Vec<(&str, &str)> = urls.iter().map(|(h, p)| (*h, p.as_str())).collect();
    write_segment(&crawl, "00001", &server, &pairs);

    let started = Instant::now();
    let out = fetch(
        fetch_cmd(&crawl, &server).args([
            "--min-delay",
            "50ms",
            "--robots-retry-delay",
            "60s",
            "--first-byte-timeout",
            "60s",
            "--download-timeout",
            "60s",
            "--tail-time",
            "1s",
            "--stop-grace",
            "1s",
        ]),
        &crawl,
        0,
    );
    let took = started.elapsed();
    let err = &out.stderr;
    assert!(hole_asked.load(Ordering::SeqCst));
    // fast.test is done in about a second; the round does not wait a
    // minute for down.test nor for hole.test's answer.
    assert!(
        took < Duration::from_secs(15),
        "the round took {took:?}\n{err}"
    );
    assert_eq!(stats(&crawl, "00001")["stop_reason"], "tail", "{err}");
    assert!(
        err.contains("end of the round: the 2 host(s) left"),
        "{err}"
    );
    let done = std::fs::read_to_string(crawl.fetched_dir("00001").join("DONE")).unwrap();
    assert!(done.contains("stop_reason tail"), "{done}");

    let fetched = server
        .log("fast.test")
        .iter()
        .filter(|e| e.target != "/robots.txt")
        .count();
    assert_eq!(fetched, 20, "every page of the fast host");
    // hole.test's robots.txt, abandoned with the round, counts as a timeout.
    let lines = crawl_log(&crawl, "00001");
    let hole_robots = lines
        .iter()
        .find(|l| l.url.starts_with("http://hole.test") && l.via == Via::Robots)
        .expect("hole.test's robots.txt logged");
    assert_eq!(hole_robots.status, Status::Error(ErrorCode::Timeout));
    assert!(hole_robots.note.contains("abandoned when the round ended"));

    // The URLs of both hosts wait in the leftover, with their tries (their
    // robots.txt failed in this run: the hosts are down), until their
    // robots.txt may be asked again, about a minute from now.
    let left = leftover(&crawl, "00001");
    assert_eq!(left.len(), 6, "{left:?}");
    let now = common::timefmt::unix_millis(std::time::SystemTime::now());
    for r in &left {
        assert!(r.host == "down.test" || r.host == "hole.test", "{r:?}");
        assert_eq!((r.via, r.tries), (Via::Leftover, 0), "{r:?}");
        let nb = r
            .not_before
            .unwrap_or_else(|| panic!("no not_before: {r:?}"));
        assert!(nb > now + 40_000 && nb < now + 61_000, "{}", nb - now);
    }
    // The host state says the same, for the next run.
    let db = HostDb::open(crawl.hosts_db_path()).unwrap();
    let down = db.get("down.test").unwrap().unwrap();
    assert!(down.next_contact_ms.unwrap() > now + 40_000);
}
