//! Requests through an HTTP proxy on loopback: taken from the usual
//! environment variables or `--proxy`, bypassed for `NO_PROXY` names, the
//! private-address guard still applied to the target, `http` URLs asked in
//! absolute form and recorded in the WARC as written, and a proxy the
//! fetcher cannot use refused at start instead of failing every request.

use crate::support;

use std::process::Command;

use common::crawldir::CrawlDir;
use common::crawllog::{ErrorCode, Status};
use common::warc::{WarcReader, WarcRecord};
use support::*;
use testkit::bins;
use testkit::proxy::ProxyServer;
use testkit::server::{Response, Routes, Server};

/// `fetcher fetch` with the test defaults (no proxy variables from the
/// environment) and `env` set instead.
fn proxy_cmd(crawl: &CrawlDir, server: &Server, env: &[(&str, &str)]) -> Command {
    let mut cmd = fetch_cmd(crawl, server);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

fn site() -> Routes {
    Routes::new()
        .route("/robots.txt", Response::not_found())
        .route("/0", Response::html("page 0"))
        .route("/1", Response::html("page 1"))
}

fn two_hosts() -> Server {
    Server::builder()
        .host("a.test", site())
        .host("b.test", site())
        .start()
        .unwrap()
}

fn segment(crawl: &CrawlDir, server: &Server) {
    write_segment(
        crawl,
        "00001",
        server,
        &[("a.test", "/0"), ("a.test", "/1"), ("b.test", "/0")],
    );
}

/// Every record of the run's WARC files.
fn records(crawl: &CrawlDir) -> Vec<WarcRecord> {
    let mut out = Vec::new();
    for f in warc_files(crawl, "00001") {
        let mut r = WarcReader::open(&f, 64 * 1024).unwrap();
        let mut rec = WarcRecord::default();
        while r.read_next(&mut rec).unwrap() {
            out.push(rec.clone());
        }
    }
    out
}

/// Requests the proxy got for `host` (`http` URLs come in absolute form).
fn connects(proxy: &ProxyServer, host: &str) -> usize {
    proxy
        .requests()
        .iter()
        .filter(|r| {
            r.line.starts_with(&format!("CONNECT {host}:"))
                || r.line.contains(&format!(" http://{host}:"))
        })
        .count()
}

#[test]
fn requests_go_through_the_proxy_of_the_environment_except_no_proxy_names() {
    let server = two_hosts();
    let proxy = ProxyServer::start(&server.hosts_file()).unwrap();
    let crawl = crawl_dir("proxy-env");
    segment(&crawl, &server);
    let out = fetch(
        &mut proxy_cmd(
            &crawl,
            &server,
            &[("http_proxy", &proxy.url()), ("NO_PROXY", "b.test")],
        ),
        &crawl,
        0,
    );
    assert!(
        out.stderr.contains(&format!(
            "requests go through the proxy {} (from http_proxy)",
            proxy.url()
        )),
        "the log says which proxy and where it came from: {}",
        out.stderr
    );
    let log = crawl_log(&crawl, "00001");
    let ok = log.iter().filter(|l| l.status == Status::Http(200)).count();
    assert_eq!(ok, 3, "{log:#?}");
    let asked: Vec<String> = proxy.requests().into_iter().map(|r| r.line).collect();
    let port = server.addr("a.test").port();
    for path in ["/robots.txt", "/0", "/1"] {
        let line = format!("GET http://a.test:{port}{path} HTTP/1.1");
        assert!(asked.contains(&line), "{line} in {asked:#?}");
    }
    assert!(proxy.requests().iter().all(|r| r.status == 200));
    assert_eq!(connects(&proxy, "b.test"), 0, "b.test is in NO_PROXY");
    assert_eq!(
        server.log("a.test").len(),
        3,
        "robots.txt and two pages, by the tunnel"
    );

    // The WARC request records hold the requests as written: to the proxy
    // in absolute form, to b.test directly in origin form; only the direct
    // connection knows the server's address.
    let recs = records(&crawl);
    for r in recs.iter().filter(|r| r.record_type() == Some("request")) {
        let uri = r.target_uri().unwrap();
        let path = url::Url::parse(uri).unwrap().path().to_string();
        let block = String::from_utf8_lossy(&r.block);
        let first = block.lines().next().unwrap();
        if uri.contains("a.test") {
            assert_eq!(first, format!("GET {uri} HTTP/1.1"), "absolute form");
        } else {
            assert_eq!(first, format!("GET {path} HTTP/1.1"), "origin form");
        }
        assert!(block.to_ascii_lowercase().contains("\r\nhost: "), "{block}");
    }
    for r in recs.iter().filter(|r| r.record_type() == Some("response")) {
        let uri = r.target_uri().unwrap();
        let ip = r.header("WARC-IP-Address");
        if uri.contains("a.test") {
            assert_eq!(ip, None, "{uri}: through the proxy");
        } else {
            assert_eq!(ip, Some(server.addr("b.test").ip().to_string().as_str()));
        }
    }
    warcio_check(&crawl, "00001");
}

#[test]
fn the_proxy_flag_wins_and_none_ignores_the_environment() {
    let server = two_hosts();
    let proxy = ProxyServer::start(&server.hosts_file()).unwrap();
    // Nothing listens there: a request through it would fail.
    let dead = "http://127.0.0.1:9";

    let crawl = crawl_dir("proxy-flag");
    segment(&crawl, &server);
    let with_credentials = proxy.url().replace("http://", "http://me:secret@");
    let out = fetch(
        proxy_cmd(&crawl, &server, &[("HTTPS_PROXY", dead)]).args(["--proxy", &with_credentials]),
        &crawl,
        0,
    );
    assert!(!out.stderr.contains("secret"), "{}", out.stderr);
    let ok = crawl_log(&crawl, "00001")
        .iter()
        .filter(|l| l.status == Status::Http(200))
        .count();
    assert_eq!(ok, 3);
    assert!(connects(&proxy, "a.test") >= 1 && connects(&proxy, "b.test") >= 1);
    for r in proxy.requests() {
        assert_eq!(
            r.authorization.as_deref(),
            Some("Basic bWU6c2VjcmV0"),
            "{}: the credentials of --proxy",
            r.line
        );
    }
    for r in records(&crawl) {
        let block = String::from_utf8_lossy(&r.block).to_ascii_lowercase();
        assert!(
            !block.contains("proxy-authorization"),
            "credentials are not archived: {block}"
        );
    }

    let crawl = crawl_dir("proxy-none");
    segment(&crawl, &server);
    let before = proxy.requests().len();
    fetch(
        proxy_cmd(&crawl, &server, &[("ALL_PROXY", dead)]).args(["--proxy", "none"]),
        &crawl,
        0,
    );
    let ok = crawl_log(&crawl, "00001")
        .iter()
        .filter(|l| l.status == Status::Http(200))
        .count();
    assert_eq!(ok, 3, "no proxy at all, whatever the environment says");
    assert_eq!(proxy.requests().len(), before);
}

#[test]
fn a_private_target_is_refused_before_the_proxy_is_asked() {
    let server = two_hosts();
    let proxy = ProxyServer::start(&server.hosts_file()).unwrap();
    let crawl = crawl_dir("proxy-private");
    segment(&crawl, &server);
    let hosts = hosts_file(&crawl, &server);
    // The test defaults without --allow-private: the proxy (on 127.0.0.1,
    // the operator's choice) is reached, the targets (127.0.0.x) are not.
    let mut cmd = bins::guarded_fetch_cmd(crawl.root(), &hosts);
    cmd.args(["--proxy", &proxy.url()]);
    fetch(&mut cmd, &crawl, 0);
    let log = crawl_log(&crawl, "00001");
    assert!(!log.is_empty());
    for l in &log {
        assert_eq!(
            l.status,
            Status::Error(ErrorCode::PrivateAddress),
            "{}: {}",
            l.url,
            l.note
        );
    }
    assert!(proxy.requests().is_empty(), "{:#?}", proxy.requests());
    assert!(server.logs().is_empty());
}

#[test]
fn a_name_only_the_proxy_can_resolve_is_left_to_it() {
    let server = two_hosts();
    let proxy = ProxyServer::start(&server.hosts_file()).unwrap();
    // This machine's name server knows none of the names (NXDOMAIN).
    let dns = testkit::dns::DnsServer::builder().start().unwrap();
    let crawl = crawl_dir("proxy-resolves");
    segment(&crawl, &server);
    let empty = crawl.root().join("no-hosts");
    std::fs::write(&empty, "").unwrap();
    let mut cmd = bins::guarded_fetch_cmd(crawl.root(), &empty);
    cmd.args(["--dns-server", &dns.addr().to_string()])
        .args(["--proxy", &proxy.url()]);
    fetch(&mut cmd, &crawl, 0);
    let log = crawl_log(&crawl, "00001");
    let ok = log.iter().filter(|l| l.status == Status::Http(200)).count();
    assert_eq!(
        ok, 3,
        "fetched through the proxy, which resolved them: {log:#?}"
    );
    assert!(dns.queries("a.test") >= 1, "asked here first");
    assert!(connects(&proxy, "a.test") >= 1 && connects(&proxy, "b.test") >= 1);
}

#[test]
fn a_proxy_the_fetcher_cannot_use_is_refused_at_start() {
    let server = two_hosts();
    let crawl = crawl_dir("proxy-socks");
    segment(&crawl, &server);
    let out = fetch(
        &mut proxy_cmd(
            &crawl,
            &server,
            &[("ALL_PROXY", "socks5://user:secret@127.0.0.1:1080")],
        ),
        &crawl,
        2,
    );
    let err = &out.stderr;
    assert!(err.starts_with("fetcher: "), "{err}");
    assert!(
        err.contains("ALL_PROXY") && err.contains("socks5") && err.contains("--proxy none"),
        "names the variable and the way out: {err}"
    );
    assert!(!err.contains("secret"), "no password in messages: {err}");
    assert!(server.logs().is_empty());
}
