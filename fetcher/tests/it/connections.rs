//! The fetcher's connections: a connection kept between two requests of a
//! host that the server closed meanwhile is replaced without losing or
//! repeating a request, and the limit on open files bounds the requests in
//! flight (each holds a socket) instead of failing them.

use crate::support;

use std::process::Command;
use std::time::Duration;

use common::crawllog::Status;
use support::*;
use testkit::server::{Response, Routes, Server};

fn pages(n: usize) -> Routes {
    let mut r = Routes::new().route("/robots.txt", Response::not_found());
    for i in 0..n {
        r = r.route(format!("/{i}"), Response::html(format!("page {i}")));
    }
    r
}

#[test]
fn a_kept_connection_the_server_closed_is_replaced_without_losing_or_repeating_a_request() {
    // The server closes a connection idle for 100 ms, without saying so in
    // its answers; the host's delay is longer, so every request after the
    // first finds its kept connection closed.
    let server = Server::builder()
        .host("a.test", pages(5))
        .idle_timeout(Duration::from_millis(100))
        .start()
        .unwrap();
    let crawl = crawl_dir("conn-closed");
    let urls: Vec<(&str, String)> = (0..5).map(|i| ("a.test", format!("/{i}"))).collect();
    let urls: Vec<(&str, &str)> = urls.iter().map(|(h, p)| (*h, p.as_str())).collect();
    write_segment(&crawl, "00001", &server, &urls);
    fetch(
        fetch_cmd(&crawl, &server).args(["--min-delay", "300ms"]),
        &crawl,
        0,
    );
    let log = crawl_log(&crawl, "00001");
    let ok = log.iter().filter(|l| l.status == Status::Http(200)).count();
    assert_eq!(ok, 5, "every page answered: {log:#?}");
    let seen = server.log("a.test");
    let mut asked: Vec<&str> = seen.iter().map(|e| e.target.as_str()).collect();
    asked.sort();
    assert_eq!(
        asked,
        ["/0", "/1", "/2", "/3", "/4", "/robots.txt"],
        "each request reached the server once"
    );
    let mut connections: Vec<u64> = seen.iter().map(|e| e.connection).collect();
    connections.dedup();
    assert!(
        connections.len() > 1,
        "the server closed the idle connection: {seen:#?}"
    );
    warcio_check(&crawl, "00001");
}

#[test]
fn the_limit_on_open_files_bounds_the_requests_in_flight() {
    let names: Vec<String> = (0..40).map(|i| format!("h{i:02}.test")).collect();
    let mut builder = Server::builder();
    for n in &names {
        builder = builder.host(n.as_str(), pages(2));
    }
    let server = builder.start().unwrap();
    let crawl = crawl_dir("conn-nofile");
    let urls: Vec<(&str, &str)> = names
        .iter()
        .flat_map(|n| [(n.as_str(), "/0"), (n.as_str(), "/1")])
        .collect();
    write_segment(&crawl, "00001", &server, &urls);
    // 320 open files at most, hard limit too: 256 are kept apart for the
    // run's files, 32 of the 64 left for connections kept between
    // requests (one per queue: 40 queues), the other 32 for requests.
    let mut inner = testkit::bins::fetch_cmd(crawl.root(), &hosts_file(&crawl, &server));
    inner.args(["--threads", "4096", "--download-timeout", "10s"]);
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg("ulimit -n 320 && exec \"$@\"")
        .arg("sh")
        .arg(inner.get_program())
        .args(inner.get_args());
    for (k, v) in inner.get_envs() {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
    let out = fetch(&mut cmd, &crawl, 0);
    assert!(
        out.stderr
            .contains("at most 32 requests in flight, not 4096: the limit on open files"),
        "the log says what lowered them: {}",
        out.stderr
    );
    let log = crawl_log(&crawl, "00001");
    let ok = log.iter().filter(|l| l.status == Status::Http(200)).count();
    assert_eq!(ok, 80, "every page fetched: {log:#?}");
}
