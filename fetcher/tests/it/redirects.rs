//! Redirects: stored and not followed by default; followed within limits
//! with --follow-redirects.

use crate::support;

use common::crawllog::Status;
use common::segment::Via;
use support::*;
use testkit::server::{Response, Routes, Server};

fn chain_server() -> Server {
    let routes = Routes::new()
        .route(
            "/robots.txt",
            Response::text("User-agent: *\nDisallow: /secret\n"),
        )
        .route("/r1", Response::redirect(301, "/r2"))
        .route("/r2", Response::redirect(302, "/r3"))
        .route("/r3", Response::redirect(302, "/r4"))
        .route("/r4", Response::html("end of the chain"))
        .route("/to-secret", Response::redirect(302, "/secret"))
        .route("/secret", Response::html("hidden"));
    Server::builder()
        .host("a.test", routes)
        .host(
            "b.test",
            Routes::new()
                .route("/robots.txt", Response::not_found())
                .route_fn("/start", |req: &testkit::server::Request| {
                    let port = req.local_addr().port();
                    Response::redirect(301, format!("http://a.test:{port}/r4"))
                }),
        )
        .start()
        .unwrap()
}

#[test]
fn redirects_are_stored_not_followed_by_default() {
    let server = chain_server();
    let crawl = crawl_dir("redirect-default");
    write_segment(&crawl, "00001", &server, &[("a.test", "/r1")]);
    fetch(&mut fetch_cmd(&crawl, &server), &crawl, 0);
    let targets: Vec<String> = server.log("a.test").into_iter().map(|e| e.target).collect();
    assert_eq!(targets, ["/robots.txt", "/r1"]);
    let lines = crawl_log(&crawl, "00001");
    let l = lines.iter().find(|l| l.via != Via::Robots).unwrap();
    assert_eq!(l.status, Status::Http(301));
    assert_eq!(l.note, format!("redirect {}", server.url("a.test", "/r2")));
    let recs = responses(&crawl, "00001");
    assert!(
        recs.iter()
            .any(|r| r.target_uri() == Some(server.url("a.test", "/r1").as_str()))
    );
    warcio_check(&crawl, "00001");
}

#[test]
fn follow_redirects_within_the_hop_limit_and_robots() {
    let server = chain_server();
    let crawl = crawl_dir("redirect-follow");
    std::fs::write(crawl.root().join("crawl.toml"), "[scope]\nmode = \"any\"\n").unwrap();
    write_segment(
        &crawl,
        "00001",
        &server,
        &[
            ("a.test", "/r1"),
            ("a.test", "/to-secret"),
            ("b.test", "/start"),
        ],
    );
    fetch(
        fetch_cmd(&crawl, &server).args(["--follow-redirects", "2"]),
        &crawl,
        0,
    );
    let mut targets: Vec<String> = server.log("a.test").into_iter().map(|e| e.target).collect();
    targets.sort();
    // r1 → r2 → r3 followed (2 hops); r3's own redirect is a third hop and
    // is left for the next round; /secret is disallowed by robots.txt;
    // b.test's redirect lands on a.test's queue.
    assert!(targets.contains(&"/r2".to_string()), "{targets:?}");
    assert!(targets.contains(&"/r3".to_string()), "{targets:?}");
    assert!(
        !targets.contains(&"/secret".to_string()),
        "robots.txt ignored for a redirect target"
    );
    assert_eq!(targets.iter().filter(|t| *t == "/r3").count(), 1);
    assert_eq!(
        targets.iter().filter(|t| *t == "/r4").count(),
        1,
        "{targets:?}"
    );
    let lines = crawl_log(&crawl, "00001");
    let r2 = lines
        .iter()
        .find(|l| l.url == server.url("a.test", "/r2"))
        .expect("r2 logged");
    assert_eq!(r2.via, Via::Redirect);
    assert_eq!(r2.hops, 2);
    let r3 = lines
        .iter()
        .find(|l| l.url == server.url("a.test", "/r3"))
        .unwrap();
    assert_eq!(r3.note, format!("redirect {}", server.url("a.test", "/r4")));
    // /r4 came from b.test's redirect (2 hops from the seed), not as a
    // third hop of a.test's chain (which would make it 4).
    let r4: Vec<_> = lines
        .iter()
        .filter(|l| l.url == server.url("a.test", "/r4"))
        .collect();
    assert_eq!(r4.len(), 1);
    assert_eq!((r4[0].via, r4[0].hops), (Via::Redirect, 2));
    assert!(
        lines
            .iter()
            .any(|l| l.url == server.url("a.test", "/secret")
                && l.status == Status::Error(common::crawllog::ErrorCode::Robots)),
        "the disallowed target is logged"
    );
    warcio_check(&crawl, "00001");
}

#[test]
fn a_redirect_target_already_seen_is_left_to_the_segmenter() {
    let server = chain_server();
    let crawl = crawl_dir("redirect-seen");
    std::fs::write(crawl.root().join("crawl.toml"), "[scope]\nmode = \"any\"\n").unwrap();
    // /r2 was put in an earlier segment: seen.bloom knows it.
    let params = common::bloom::BloomParams::optimal(1000, 0.001).unwrap();
    let seen = common::bloom::BloomFilter::create(crawl.bloom_path(), params).unwrap();
    seen.insert(server.url("a.test", "/r2").as_bytes());
    seen.flush().unwrap();
    drop(seen);
    write_segment(&crawl, "00001", &server, &[("a.test", "/r1")]);
    fetch(
        fetch_cmd(&crawl, &server).args(["--follow-redirects", "3"]),
        &crawl,
        0,
    );
    let targets: Vec<String> = server.log("a.test").into_iter().map(|e| e.target).collect();
    assert_eq!(
        targets,
        ["/robots.txt", "/r1"],
        "a seen target was followed"
    );
}
