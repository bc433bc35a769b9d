//! Byte budgets of a run: `--max-run-bytes` ends the run within one
//! response, `--max-host-round-bytes` sends a host's other URLs to the
//! leftover, `--max-crawl-bytes` ends the crawl; every cut is in
//! `stats.json`, `DONE` and `fetcher status` with its reason, and the URLs
//! cut wait in the leftover untried.

use crate::support;

use common::segment::Via;
use support::*;
use testkit::server::{Response, Routes, Server};

/// About 6 KB of text that deflate cannot shrink much (26 letters).
fn page(seed: u32) -> String {
    let mut x = seed.wrapping_mul(2_654_435_761).wrapping_add(7);
    (0..6_000)
        .map(|_| {
            x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            char::from(b'a' + (x >> 27) as u8 % 26)
        })
        .collect()
}

/// A server with `hosts`, each serving `/0` .. `/n-1`, and a segment of them.
fn web(test: &str, hosts: &[&str], n: u32) -> (Server, TempCrawl) {
    let mut b = Server::builder();
    for h in hosts {
        let mut routes = Routes::new().route("/robots.txt", Response::not_found());
        for i in 0..n {
            routes = routes.route(format!("/{i}"), Response::html(page(i)));
        }
        b = b.host(*h, routes);
    }
    let server = b.start().unwrap();
    let crawl = crawl_dir(test);
    let paths: Vec<(String, String)> = hosts
        .iter()
        .flat_map(|h| (0..n).map(move |i| (h.to_string(), format!("/{i}"))))
        .collect();
    let pairs: Vec<(&str, &str)> = paths
        .iter()
        .map(|(h, p)| (h.as_str(), p.as_str()))
        .collect();
    write_segment(&crawl, "00001", &server, &pairs);
    (server, crawl)
}

/// An upper bound on the WARC bytes of one exchange (request and response
/// records) of the run: twice the mean, pages being alike.
fn largest_exchange(crawl: &common::crawldir::CrawlDir, id: &str) -> u64 {
    let total: u64 = warc_files(crawl, id)
        .iter()
        .map(|f| std::fs::metadata(f).unwrap().len())
        .sum();
    let n = responses(crawl, id).len() as u64;
    // Pages are alike: no exchange is twice the mean.
    2 * total / n.max(1)
}

#[test]
fn the_run_budget_ends_the_run_within_one_response() {
    let (server, crawl) = web("run-bytes", &["a.test", "b.test"], 15);
    let budget = 60_000u64;
    let out = fetch(
        fetch_cmd(&crawl, &server).args(["--max-run-bytes", &budget.to_string()]),
        &crawl,
        0,
    );
    let st = stats(&crawl, "00001");
    assert_eq!(st["stop_reason"], "run-bytes", "{}", out.stderr);
    let stored = st["warc_bytes"].as_u64().unwrap();
    let one = largest_exchange(&crawl, "00001");
    eprintln!("run budget {budget}: {stored} WARC bytes at the cut (one exchange: up to {one})");
    assert!(
        stored >= budget && stored < budget + one,
        "{stored} bytes stored for a budget of {budget} (one exchange: {one})"
    );
    // The rest waits in the leftover, untried, counted with its reason.
    let left = leftover(&crawl, "00001");
    let stored_pages = responses(&crawl, "00001")
        .iter()
        .filter(|r| r.header("X-Crawl-Via") != Some("robots"))
        .count();
    assert_eq!(
        left.len() + stored_pages,
        30,
        "every URL stored or left over"
    );
    assert!(left.iter().all(|r| r.via == Via::Leftover && r.tries == 0));
    assert_eq!(st["cuts"]["run-bytes"].as_u64(), Some(left.len() as u64));
    let done = std::fs::read_to_string(crawl.fetched_dir("00001").join("DONE")).unwrap();
    assert!(
        done.contains("stop_reason run-bytes") && done.contains("stop_detail max_run_bytes"),
        "{done}"
    );
    let status = fetch(
        testkit::bins::fetcher_cmd().args(["status", crawl.root().to_str().unwrap(), "00001"]),
        &crawl,
        0,
    )
    .stdout;
    assert!(
        status.contains("stop_reason: run-bytes")
            && status.contains(&format!("cuts: run-bytes={}", left.len())),
        "{status}"
    );
    warcio_check(&crawl, "00001");
}

#[test]
fn a_host_over_its_round_budget_leaves_its_other_urls_for_later() {
    let (server, crawl) = web("host-round-bytes", &["big.test", "small.test"], 12);
    let budget = 20_000u64;
    fetch(
        fetch_cmd(&crawl, &server).args(["--max-host-round-bytes", &budget.to_string()]),
        &crawl,
        0,
    );
    let st = stats(&crawl, "00001");
    assert_eq!(st["stop_reason"], "complete");
    let pages = |host: &str| {
        server
            .log(host)
            .iter()
            .filter(|e| e.target != "/robots.txt")
            .count()
    };
    // Each host stops at the page that reaches its budget: what it stored
    // reaches the budget, and without its last page (pages are alike) it
    // would not have.
    let db = common::hoststate::HostDb::open(crawl.hosts_db_path()).unwrap();
    for host in ["big.test", "small.test"] {
        let n = pages(host) as u64;
        let bytes = db.get(host).unwrap().unwrap().bytes_total;
        eprintln!("{host}: round budget {budget}: {n} pages, {bytes} WARC bytes at the cut");
        assert!(n < 12, "{host}: every page fetched");
        assert!(
            bytes >= budget && bytes - bytes / n < budget + bytes / n / 4,
            "{host}: {n} pages, {bytes} bytes for a budget of {budget}"
        );
    }
    drop(db);
    let left = leftover(&crawl, "00001");
    assert_eq!(left.len(), 24 - pages("big.test") - pages("small.test"));
    assert!(left.iter().all(|r| r.via == Via::Leftover && r.tries == 0));
    assert_eq!(
        st["cuts"]["host-round-bytes"].as_u64(),
        Some(left.len() as u64),
        "{st}"
    );
}

#[test]
fn the_crawl_budget_ends_the_crawl() {
    let (server, crawl) = web("crawl-bytes", &["a.test"], 10);
    let budget = 30_000u64;
    let flag = ["--max-crawl-bytes", &budget.to_string()];
    fetch(fetch_cmd(&crawl, &server).args(flag), &crawl, 0);
    let st = stats(&crawl, "00001");
    assert_eq!(st["stop_reason"], "crawl-bytes");
    let files: u64 = warc_files(&crawl, "00001")
        .iter()
        .map(|f| std::fs::metadata(f).unwrap().len())
        .sum();
    eprintln!("crawl budget {budget}: WARC files hold {files} bytes at the cut");
    assert!(files >= budget, "{files}");
    // A next run of the crawl fetches nothing: its budget is spent.
    let requests = server.logs().len();
    testkit::segment::write_links(
        &crawl.segment_path("00002"),
        [("a.test".to_string(), server.url("a.test", "/9"))],
    );
    let out = fetch(
        fetch_cmd(&crawl, &server).args(flag).arg("00002"),
        &crawl,
        0,
    );
    assert_eq!(server.logs().len(), requests, "no request: {}", out.stderr);
    let st = stats(&crawl, "00002");
    assert_eq!(st["stop_reason"], "crawl-bytes");
    assert_eq!(st["cuts"]["crawl-bytes"], 1);
    assert_eq!(leftover(&crawl, "00002").len(), 1);
}
