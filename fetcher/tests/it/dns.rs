//! Name resolution as a crawl sees it, against a DNS server on loopback
//! (`--dns-server`; no test asks the machine's name servers): one lookup
//! per name whatever the number of its URLs, a name that does not exist
//! gives its host up at once, a failing or slow server is a temporary
//! failure retried like any other, and `--key ip` resolves a segment's
//! names before fetching.

use crate::support;

use std::net::{IpAddr, Ipv4Addr};
use std::process::Command;

use common::crawldir::CrawlDir;
use common::crawllog::{ErrorCode, LogLine, Status};
use common::segment::Via;
use support::*;
use testkit::dns::{DnsAnswer, DnsServer};
use testkit::server::{Response, Routes, Server};

/// `fetcher fetch` with the test defaults, names resolved by `dns` only
/// (an empty hosts file replaces the server's).
fn dns_fetch_cmd(crawl: &CrawlDir, server: &Server, dns: &DnsServer) -> Command {
    let empty = crawl.root().join("no-hosts");
    std::fs::write(&empty, "").unwrap();
    let mut cmd = fetch_cmd(crawl, server);
    cmd.arg("--hosts-file")
        .arg(&empty)
        .arg("--dns-server")
        .arg(dns.addr().to_string());
    cmd
}

fn ipv4(server: &Server, host: &str) -> Ipv4Addr {
    match server.addr(host).ip() {
        IpAddr::V4(ip) => ip,
        IpAddr::V6(_) => unreachable!("the test servers are on 127.x"),
    }
}

fn site(pages: usize) -> Routes {
    (0..pages).fold(
        Routes::new().route("/robots.txt", Response::not_found()),
        |r, i| r.route(format!("/{i}"), Response::html(format!("page {i}"))),
    )
}

fn lines_for<'a>(log: &'a [LogLine], url: &str) -> Vec<&'a LogLine> {
    log.iter().filter(|l| l.url == url).collect()
}

#[test]
fn one_lookup_serves_every_url_of_a_host() {
    let server = Server::builder()
        .host("a.test", site(6))
        .host("b.test", site(6))
        .start()
        .unwrap();
    let dns = DnsServer::builder()
        .name("a.test", DnsAnswer::a(ipv4(&server, "a.test")))
        .name("b.test", DnsAnswer::a(ipv4(&server, "b.test")))
        .start()
        .unwrap();
    let crawl = crawl_dir("dns-cache");
    let urls: Vec<(&str, String)> = ["a.test", "b.test"]
        .iter()
        .flat_map(|h| (0..6).map(move |i| (*h, format!("/{i}"))))
        .collect();
    let pairs: Vec<(&str, &str)> = urls.iter().map(|(h, p)| (*h, p.as_str())).collect();
    write_segment(&crawl, "00001", &server, &pairs);
    let out = fetch(&mut dns_fetch_cmd(&crawl, &server, &dns), &crawl, 0);

    let log = crawl_log(&crawl, "00001");
    let ok = log.iter().filter(|l| l.status == Status::Http(200)).count();
    assert_eq!(ok, 12, "every page fetched: {log:#?}");
    assert_eq!(server.log("a.test").len(), 7, "robots.txt and six pages");
    // One lookup each, for robots.txt and six pages (A records exist, so
    // no AAAA query either).
    assert_eq!(dns.queries("a.test"), 1);
    assert_eq!(dns.queries("b.test"), 1);
    assert!(out.stderr.contains("dns: 2 lookups"), "{}", out.stderr);
    for r in responses(&crawl, "00001") {
        let host = url::Url::parse(r.target_uri().unwrap()).unwrap();
        let host = host.host_str().unwrap();
        assert_eq!(
            r.header("WARC-IP-Address"),
            Some(ipv4(&server, host).to_string().as_str()),
            "the address the name server gave"
        );
    }
}

#[test]
fn a_name_that_does_not_exist_gives_its_host_up_at_once() {
    let server = Server::builder().host("a.test", site(2)).start().unwrap();
    let dns = DnsServer::builder()
        .name("a.test", DnsAnswer::a(ipv4(&server, "a.test")))
        .start()
        .unwrap();
    let crawl = crawl_dir("dns-nxdomain");
    let port = server.addr("a.test").port();
    let gone: Vec<String> = (0..3)
        .map(|i| format!("http://gone.test:{port}/{i}"))
        .collect();
    let mut urls = vec![server.url("a.test", "/0"), server.url("a.test", "/1")];
    urls.extend(gone.iter().cloned());
    write_urls(&crawl, "00001", &urls);
    fetch(
        dns_fetch_cmd(&crawl, &server, &dns).args(["--robots-retry-delay", "100ms"]),
        &crawl,
        0,
    );

    let log = crawl_log(&crawl, "00001");
    let robots = lines_for(&log, &format!("http://gone.test:{port}/robots.txt"));
    assert_eq!(robots.len(), 1, "asked once, not again: {log:#?}");
    assert_eq!(robots[0].status, Status::Error(ErrorCode::Dns));
    assert!(
        robots[0].note.contains("NXDOMAIN") && robots[0].note.contains("permanent"),
        "{}",
        robots[0].note
    );
    for url in &gone {
        let lines = lines_for(&log, url);
        assert_eq!(lines.len(), 1, "{url}: {log:#?}");
        assert_eq!(lines[0].status, Status::Error(ErrorCode::Dns));
        assert!(lines[0].note.contains("host dropped"), "{}", lines[0].note);
    }
    // Its URLs wait for a later round, one try spent.
    let left = leftover(&crawl, "00001");
    for url in &gone {
        assert!(
            left.iter()
                .any(|r| &r.url == url && r.via == Via::Retry && r.tries == 1),
            "{url} in leftover as a retry: {left:#?}"
        );
    }
    // One lookup (an A query, then an AAAA query for a name without A records).
    assert!(
        dns.queries("gone.test") <= 2,
        "{}",
        dns.queries("gone.test")
    );
    let ok = log.iter().filter(|l| l.status == Status::Http(200)).count();
    assert_eq!(ok, 2, "the other host is fetched");
}

#[test]
fn a_failing_name_server_is_a_temporary_failure_retried_later() {
    let server = Server::builder().host("a.test", site(1)).start().unwrap();
    let dns = DnsServer::builder()
        .name("a.test", DnsAnswer::a(ipv4(&server, "a.test")))
        .name("failing.test", DnsAnswer::ServFail)
        .start()
        .unwrap();
    let crawl = crawl_dir("dns-servfail");
    let port = server.addr("a.test").port();
    let urls = vec![
        server.url("a.test", "/0"),
        format!("http://failing.test:{port}/0"),
        format!("http://failing.test:{port}/1"),
    ];
    write_urls(&crawl, "00001", &urls);
    fetch(
        dns_fetch_cmd(&crawl, &server, &dns).args(["--robots-retry-delay", "100ms"]),
        &crawl,
        0,
    );

    let log = crawl_log(&crawl, "00001");
    let robots = lines_for(&log, &format!("http://failing.test:{port}/robots.txt"));
    assert_eq!(
        robots.len(),
        3,
        "robots.txt asked again after each temporary failure, three times in all: {log:#?}"
    );
    for l in &robots {
        assert_eq!(l.status, Status::Error(ErrorCode::Dns));
        assert!(l.note.contains("temporary"), "{}", l.note);
    }
    assert!(
        dns.queries("failing.test") >= 3,
        "a temporary failure is not kept: each try asks again"
    );
    // Given up as robots.txt unavailable (not as a name that does not
    // exist); the URLs wait for a later round, with no try used.
    for url in &urls[1..] {
        let lines = lines_for(&log, url);
        assert_eq!(lines[0].status, Status::Error(ErrorCode::RobotsUnavailable));
    }
    let left = leftover(&crawl, "00001");
    assert_eq!(
        left.iter()
            .filter(|r| r.host == "failing.test" && r.via == Via::Leftover && r.tries == 0)
            .count(),
        2,
        "{left:#?}"
    );
}

#[test]
fn a_slow_name_server_is_given_up_at_the_dns_timeout_and_asked_again_later() {
    let server = Server::builder()
        .host("a.test", site(1))
        .host("slow.test", site(2))
        .start()
        .unwrap();
    let slow_ip = ipv4(&server, "slow.test");
    let dns = DnsServer::builder()
        .name("a.test", DnsAnswer::a(ipv4(&server, "a.test")))
        // Far too late the first time; at once when asked again.
        .answers(
            "slow.test",
            vec![
                DnsAnswer::a(slow_ip).after(std::time::Duration::from_secs(20)),
                DnsAnswer::a(slow_ip),
            ],
        )
        .start()
        .unwrap();
    let crawl = crawl_dir("dns-timeout");
    write_segment(
        &crawl,
        "00001",
        &server,
        &[("a.test", "/0"), ("slow.test", "/0"), ("slow.test", "/1")],
    );
    fetch(
        dns_fetch_cmd(&crawl, &server, &dns).args([
            "--dns-timeout",
            "300ms",
            "--robots-retry-delay",
            "100ms",
        ]),
        &crawl,
        0,
    );

    let log = crawl_log(&crawl, "00001");
    let robots = lines_for(&log, &server.url("slow.test", "/robots.txt"));
    assert_eq!(robots.len(), 2, "{log:#?}");
    assert_eq!(robots[0].status, Status::Error(ErrorCode::Dns));
    assert!(
        robots[0].note.contains("timeout") && robots[0].note.contains("temporary"),
        "{}",
        robots[0].note
    );
    assert!(
        robots[0].duration_ms < 5_000,
        "the lookup was given up at the DNS timeout, not held for the answer: {} ms",
        robots[0].duration_ms
    );
    assert_eq!(robots[1].status, Status::Http(404), "asked again, answered");
    for path in ["/0", "/1"] {
        let lines = lines_for(&log, &server.url("slow.test", path));
        assert_eq!(lines.len(), 1);
        assert_eq!(lines[0].status, Status::Http(200), "{path}");
    }
}

#[test]
fn key_ip_resolves_every_name_of_the_segment_and_groups_them_by_address() {
    const HOSTS: usize = 40;
    let names: Vec<String> = (0..HOSTS).map(|i| format!("h{i}.test")).collect();
    let server = names
        .iter()
        .fold(Server::builder(), |b, n| b.host(n.clone(), site(2)))
        .start()
        .unwrap();
    // Every name answers a little late: one after another would add up.
    let late = std::time::Duration::from_millis(30);
    let dns = names
        .iter()
        .fold(DnsServer::builder(), |b, n| {
            b.name(n, DnsAnswer::a(ipv4(&server, n)).after(late))
        })
        // A second name of h0's address: the same queue.
        .name(
            "alias.test",
            DnsAnswer::a(ipv4(&server, "h0.test")).after(late),
        )
        .start()
        .unwrap();
    let crawl = crawl_dir("dns-key-ip");
    let port = server.addr("h0.test").port();
    let mut urls: Vec<String> = names
        .iter()
        .flat_map(|n| [server.url(n, "/0"), server.url(n, "/1")])
        .collect();
    urls.push(format!("http://alias.test:{port}/1"));
    urls.sort();
    write_urls(&crawl, "00001", &urls);
    let out = fetch(
        dns_fetch_cmd(&crawl, &server, &dns).args(["--key", "ip", "--dns-concurrency", "16"]),
        &crawl,
        0,
    );

    assert!(
        out.stderr.contains(&format!(
            "--key ip: {HOSTS} queues after {} DNS lookups",
            HOSTS + 1
        )),
        "one queue per address, one lookup per name: {}",
        out.stderr
    );
    for n in names.iter().chain([&"alias.test".to_string()]) {
        assert_eq!(dns.queries(n), 1, "{n}: looked up once, then cached");
    }
    let log = crawl_log(&crawl, "00001");
    let pages = log.iter().filter(|l| l.status == Status::Http(200)).count();
    assert_eq!(pages, urls.len(), "{log:#?}");
    // The alias's URL went to h0's address, in h0's queue: one request at a time.
    let h0 = server.log("h0.test");
    assert_eq!(
        h0.len(),
        5,
        "the robots.txt of both names, two pages and the alias's page: {h0:#?}"
    );
    testkit::server::assert_polite(&h0, std::time::Duration::ZERO);
}

#[test]
fn a_name_gone_since_its_robots_txt_was_read_gives_its_host_up_at_its_first_page() {
    let server = Server::builder().host("a.test", site(4)).start().unwrap();
    let ip = ipv4(&server, "a.test");
    // Known in the first run; no such name in the second (one lookup per run).
    let dns = DnsServer::builder()
        .answers("a.test", vec![DnsAnswer::a(ip), DnsAnswer::NxDomain])
        .start()
        .unwrap();
    let crawl = crawl_dir("dns-gone-later");
    write_segment(&crawl, "00001", &server, &[("a.test", "/0")]);
    fetch(&mut dns_fetch_cmd(&crawl, &server, &dns), &crawl, 0);
    assert_eq!(server.log("a.test").len(), 2, "robots.txt and /0");

    // robots.txt is kept in hosts.db for a day: the next run asks for a page first.
    write_segment(
        &crawl,
        "00002",
        &server,
        &[("a.test", "/1"), ("a.test", "/2"), ("a.test", "/3")],
    );
    fetch(dns_fetch_cmd(&crawl, &server, &dns).arg("00002"), &crawl, 0);
    let log = crawl_log(&crawl, "00002");
    assert_eq!(log.len(), 3, "{log:#?}");
    assert!(
        log.iter()
            .all(|l| l.status == Status::Error(ErrorCode::Dns)),
        "{log:#?}"
    );
    assert!(
        log[0].note.contains("NXDOMAIN") && log[0].note.contains("permanent"),
        "the page asked: {}",
        log[0].note
    );
    assert!(
        log[1..].iter().all(|l| l.note.contains("host dropped")),
        "the others, given up without a request: {log:#?}"
    );
    assert_eq!(
        server.log("a.test").len(),
        2,
        "nothing more reached the server"
    );
    let left = leftover(&crawl, "00002");
    assert_eq!(left.len(), 3, "{left:#?}");
    assert!(left.iter().all(|r| r.via == Via::Retry && r.tries == 1));
}
