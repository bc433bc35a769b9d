//! Many slow servers at once: a loopback web whose hosts answer each
//! request after a pause, fetched by the real fetcher with its default
//! number of workers. Counted from the servers' request logs, many more
//! requests than the old fixed 64 workers are in flight together, never two
//! on one host, and every page is stored; `--threads` still caps the count.

use std::path::Path;
use std::time::{Duration, Instant};

use common::crawldir::CrawlDir;
use common::testutil::TempDir;
use testkit::bins::{fetcher_cmd, run_within};
use testkit::server::{LogEntry, Request, Response, Server, assert_polite};

const BOUND: Duration = Duration::from_secs(120);
/// How long every host takes to answer.
const LATENCY: Duration = Duration::from_millis(300);

/// A server of `hosts` hosts answering after [`LATENCY`] (robots.txt: 404 at once).
fn slow_web(hosts: usize) -> Server {
    let mut b = Server::builder().idle_timeout(Duration::from_secs(30));
    for i in 0..hosts {
        b = b.host(format!("h{i:03}.slow.test"), |req: &Request| {
            if req.path() == "/robots.txt" {
                Response::not_found()
            } else {
                Response::html(format!("<p>{}</p>", req.path())).delay(LATENCY)
            }
        });
    }
    b.start().unwrap()
}

/// A crawl directory whose segment 00001 lists `per_host` pages of every host.
fn crawl_of(dir: &Path, server: &Server, per_host: usize) -> CrawlDir {
    let crawl = CrawlDir::create(dir.join("crawl")).unwrap();
    std::fs::write(crawl.root().join("hosts"), server.hosts_file()).unwrap();
    let mut names: Vec<&str> = server.host_names().collect();
    names.sort();
    let lines = names.into_iter().flat_map(|name| {
        (0..per_host).map(move |i| (name.to_string(), server.url(name, &format!("/page/{i}"))))
    });
    testkit::segment::write_links(&crawl.segment_path("00001"), lines);
    crawl
}

fn fetch(crawl: &CrawlDir, extra: &[&str]) {
    let mut cmd = fetcher_cmd();
    cmd.arg("fetch")
        .arg(crawl.root())
        .arg("00001")
        .args([
            "--agent-name",
            "slowbot",
            "--agent-url",
            "http://slowbot.test/",
        ])
        .arg("--hosts-file")
        .arg(crawl.root().join("hosts"))
        .args(["--allow-private", "--min-delay", "0", "--delay-factor", "0"])
        .args(["--progress", "none", "--time-limit", "0"])
        .args(extra);
    run_within(&mut cmd, crawl.root(), 0, BOUND);
}

/// The most requests in flight at one moment, over all hosts: from the
/// arrival of a request to the end of its answer.
fn most_in_flight(log: &[LogEntry]) -> usize {
    let mut events: Vec<(Instant, i32)> = log
        .iter()
        .flat_map(|e| [(e.start, 1), (e.end, -1)])
        .collect();
    // Ends before starts at the same instant: touching is not overlapping.
    events.sort();
    let (mut now, mut most) = (0i32, 0i32);
    for (_, step) in events {
        now += step;
        most = most.max(now);
    }
    most as usize
}

/// Pages stored with status 200, from the crawl log.
fn pages_stored(crawl: &CrawlDir) -> usize {
    let log = std::fs::read_to_string(crawl.crawl_log_path("00001")).unwrap();
    log.lines()
        .filter(|l| l.split('\t').nth(1) == Some("200"))
        .count()
}

#[test]
fn hundreds_of_slow_hosts_are_fetched_at_once_one_request_each() {
    let dir = TempDir::new("latency-web");
    let hosts = 300;
    let server = slow_web(hosts);
    let crawl = crawl_of(dir.path(), &server, 2);
    fetch(&crawl, &[]);

    assert_eq!(pages_stored(&crawl), 2 * hosts, "every page stored");
    let log = server.logs();
    let pages: Vec<LogEntry> = log
        .into_iter()
        .filter(|e| e.target != "/robots.txt")
        .collect();
    assert_eq!(pages.len(), 2 * hosts, "each page asked for once");
    // One request per host at a time, whatever the number of workers.
    assert_polite(&pages, Duration::ZERO);
    let most = most_in_flight(&pages);
    assert!(
        most >= 200,
        "only {most} requests were in flight together, for {hosts} hosts each taking \
         {LATENCY:?} to answer: the workers do not follow the number of hosts"
    );
}

#[test]
fn threads_caps_the_requests_in_flight() {
    let dir = TempDir::new("latency-cap");
    let hosts = 40;
    let server = slow_web(hosts);
    let crawl = crawl_of(dir.path(), &server, 1);
    fetch(&crawl, &["--threads", "8"]);

    assert_eq!(pages_stored(&crawl), hosts);
    let most = most_in_flight(&server.logs());
    assert!(
        (2..=8).contains(&most),
        "{most} requests in flight together with --threads 8"
    );
}
