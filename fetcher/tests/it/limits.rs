//! Servers that misbehave: never answering, trickling, huge bodies, gzip
//! bombs, Retry-After, failing hosts, private addresses.

use crate::support;

use std::time::{Duration, Instant};

use common::crawllog::{ErrorCode, Status};
use common::segment::Via;
use support::*;
use testkit::server::{Response, Routes, Server, assert_polite};

fn robots_ok(r: Routes) -> Routes {
    r.route("/robots.txt", Response::text("User-agent: *\nDisallow:\n"))
}

fn status_of(lines: &[common::crawllog::LogLine], url: &str) -> Status {
    lines
        .iter()
        .find(|l| l.url == url)
        .unwrap_or_else(|| panic!("{url} not logged"))
        .status
}

#[test]
fn silent_and_trickling_servers_time_out_without_holding_others() {
    let mut fast = robots_ok(Routes::new());
    for i in 0..20 {
        fast = fast.route(format!("/{i}"), Response::html(format!("fast {i}")));
    }
    let server = Server::builder()
        .host("fast.test", fast)
        .host(
            "silent.test",
            robots_ok(Routes::new()).route("/x", Response::never_answer()),
        )
        .host(
            "mute-robots.test",
            Routes::new()
                .route("/robots.txt", Response::never_answer())
                .route("/x", Response::html("x")),
        )
        .host(
            "trickle.test",
            robots_ok(Routes::new()).route(
                "/x",
                Response::html("z".repeat(10_000)).trickle(10, Duration::from_millis(50)),
            ),
        )
        .start()
        .unwrap();
    let crawl = crawl_dir("timeouts");
    let mut urls = vec![
        ("silent.test", "/x".to_string()),
        ("mute-robots.test", "/x".to_string()),
        ("trickle.test", "/x".to_string()),
    ];
    urls.extend((0..20).map(|i| ("fast.test", format!("/{i}"))));
    let pairs: Vec<(&str, &str)> = urls.iter().map(|(h, p)| (*h, p.as_str())).collect();
    write_segment(&crawl, "00001", &server, &pairs);
    let started = Instant::now();
    fetch(
        fetch_cmd(&crawl, &server).args([
            "--first-byte-timeout",
            "2s",
            "--download-timeout",
            "2500ms",
            "--min-delay",
            "10ms",
            "--robots-retry-delay",
            "100ms",
        ]),
        &crawl,
        0,
    );
    assert!(started.elapsed() < Duration::from_secs(20));

    let lines = crawl_log(&crawl, "00001");
    assert_eq!(
        status_of(&lines, &server.url("silent.test", "/x")),
        Status::Error(ErrorCode::Timeout)
    );
    let trickle = lines
        .iter()
        .find(|l| l.url == server.url("trickle.test", "/x"))
        .unwrap();
    assert!(trickle.note.contains("truncated time"), "{trickle:?}");
    assert!(trickle.bytes > 0 && trickle.bytes < 10_000, "{trickle:?}");
    // The fast host was done while the slow ones were still hanging.
    let fast_end = server.log("fast.test").iter().map(|e| e.end).max().unwrap();
    let silent_start = server
        .log("silent.test")
        .iter()
        .find(|e| e.target == "/x")
        .unwrap()
        .start;
    assert!(
        fast_end < silent_start + Duration::from_millis(1900),
        "fast host held up by the silent one"
    );
    assert_eq!(server.log("fast.test").len(), 21);
    // A robots.txt that never answers holds back only its own host: the
    // page waits for a later run.
    assert!(
        fast_end < started + Duration::from_millis(4000),
        "fast host held up by a robots.txt that never answers"
    );
    assert!(
        !server
            .log("mute-robots.test")
            .iter()
            .any(|e| e.target == "/x")
    );
    // The timed-out URL is retried in a later run.
    let left = leftover(&crawl, "00001");
    assert!(
        left.iter().any(|r| r.url == server.url("silent.test", "/x")
            && r.via == Via::Retry
            && r.tries == 1)
    );
    assert_eq!(
        status_of(&lines, &server.url("mute-robots.test", "/x")),
        Status::Error(ErrorCode::RobotsUnavailable)
    );
    // Held back by its robots.txt, it uses no try: a host that does not
    // answer is held by its backoff (and parked after `park_after`), and
    // its URLs come back whole when it answers again.
    assert!(
        left.iter()
            .any(|r| r.url == server.url("mute-robots.test", "/x")
                && r.via == Via::Leftover
                && r.tries == 0),
        "{left:?}"
    );
    warcio_check(&crawl, "00001");
}

#[test]
fn huge_bodies_are_cut_at_the_limit_and_gzip_bombs_decoded_no_further() {
    let server = Server::builder()
        .host(
            "big.test",
            robots_ok(Routes::new())
                .route("/huge", Response::huge(200_000_000))
                .route("/bomb", Response::gzip_bomb(1_000_000_000))
                .route("/exact", Response::html("e".repeat(1_000_000))),
        )
        .start()
        .unwrap();
    let crawl = crawl_dir("big");
    write_segment(
        &crawl,
        "00001",
        &server,
        &[
            ("big.test", "/huge"),
            ("big.test", "/bomb"),
            ("big.test", "/exact"),
        ],
    );
    fetch(
        fetch_cmd(&crawl, &server).args(["--max-body", "1000000", "--download-timeout", "30s"]),
        &crawl,
        0,
    );

    let recs = responses(&crawl, "00001");
    let rec = |p: &str| {
        recs.iter()
            .find(|r| r.target_uri() == Some(server.url("big.test", p).as_str()))
            .unwrap_or_else(|| panic!("{p} not stored"))
    };
    // The huge body is stored as received up to the limit; the bomb is
    // small as sent, so it is stored whole, and decoding it stops at the limit.
    let huge = rec("/huge");
    assert_eq!(huge.header("WARC-Truncated"), Some("length"));
    let head = common::http::parse_response_head(&huge.block).unwrap();
    let stored: usize = huge.header("Content-Length").unwrap().parse().unwrap();
    assert_eq!(stored - head.body_offset, 1_000_000, "the WARC block");
    assert_eq!(head.header("Content-Length"), Some("200000000"), "as sent");
    let bomb = rec("/bomb");
    assert!(bomb.block.len() <= 1_000_000 + 1000);
    assert_eq!(
        common::body::decoded_payload(&bomb.block, 1_000_000).len(),
        1_000_000
    );
    assert_eq!(
        rec("/exact").header("WARC-Truncated"),
        None,
        "exactly the limit is complete"
    );
    let lines = crawl_log(&crawl, "00001");
    for p in ["/huge", "/bomb"] {
        let l = lines
            .iter()
            .find(|l| l.url == server.url("big.test", p))
            .unwrap();
        assert!(l.bytes <= 1_000_000, "{l:?}");
        assert!(l.note.starts_with("too-big"), "{l:?}");
    }
    // Memory: the fetcher's own record of its peak resident size.
    let peak = stats(&crawl, "00001")["peak_rss_bytes"].as_u64().unwrap();
    assert!(
        peak > 0 && peak < 100_000_000,
        "peak RSS {peak} bytes for a 200 MB body and a 1 GB bomb"
    );
    warcio_check(&crawl, "00001");
}

#[test]
fn retry_after_and_failing_hosts() {
    let server = Server::builder()
        .host(
            "busy.test",
            robots_ok(Routes::new())
                .route("/1", Response::retry_after(429, 1))
                .route("/2", Response::html("two"))
                .route("/3", Response::html("three")),
        )
        .host(
            "broken.test",
            robots_ok(Routes::new()).fallback(|_: &testkit::server::Request| Response::status(500)),
        )
        .start()
        .unwrap();
    let crawl = crawl_dir("retry");
    let mut urls = vec![
        ("busy.test", "/1".to_string()),
        ("busy.test", "/2".to_string()),
        ("busy.test", "/3".to_string()),
    ];
    urls.extend((0..10).map(|i| ("broken.test", format!("/{i}"))));
    let pairs: Vec<(&str, &str)> = urls.iter().map(|(h, p)| (*h, p.as_str())).collect();
    write_segment(&crawl, "00001", &server, &pairs);
    fetch(
        fetch_cmd(&crawl, &server).args(["--max-failures", "3", "--min-delay", "20ms"]),
        &crawl,
        0,
    );

    // Retry-After: 1 s between the 429 and the next request.
    let busy = server.log("busy.test");
    let i = busy.iter().position(|e| e.target == "/1").unwrap();
    assert!(
        busy[i + 1].start.duration_since(busy[i].end) >= Duration::from_millis(990),
        "Retry-After not honoured"
    );
    assert_polite(&busy, Duration::from_millis(20));

    // Three 500s in a row: the host is dropped, the rest left over.
    let broken: Vec<_> = server
        .log("broken.test")
        .into_iter()
        .filter(|e| e.target != "/robots.txt")
        .collect();
    assert_eq!(broken.len(), 3, "requests after the host was dropped");
    let lines = crawl_log(&crawl, "00001");
    let dropped = lines
        .iter()
        .filter(|l| l.status == Status::Error(ErrorCode::HostDropped))
        .count();
    assert_eq!(dropped, 7);
    let left = leftover(&crawl, "00001");
    assert_eq!(left.iter().filter(|r| r.host == "broken.test").count(), 10);
    // The 3 attempted come back as retries: the first with one more try
    // (the host had answered its robots.txt), the two after it with none
    // (the host was failing: those failures are its backoff's); the 7 never
    // asked use no try: an outage costs a host none of its frontier.
    let retried = |tries: u32| {
        left.iter()
            .filter(|r| r.host == "broken.test" && r.via == Via::Retry && r.tries == tries)
            .count()
    };
    assert_eq!((retried(1), retried(0)), (1, 2), "{left:#?}");
    assert_eq!(
        left.iter()
            .filter(|r| r.host == "broken.test" && r.via == Via::Leftover && r.tries == 0)
            .count(),
        7
    );
    assert!(
        left.iter()
            .any(|r| r.url == server.url("busy.test", "/1") && r.via == Via::Retry)
    );
}

#[test]
fn private_addresses_are_refused_unless_allowed() {
    let server = Server::builder()
        .host(
            "inside.test",
            robots_ok(Routes::new()).route("/", Response::html("secret")),
        )
        .start()
        .unwrap();
    let crawl = crawl_dir("private");
    write_segment(&crawl, "00001", &server, &[("inside.test", "/")]);
    let cmd = fetch_cmd(&crawl, &server);
    // The same command without --allow-private.
    let args: Vec<_> = cmd
        .get_args()
        .filter(|a| *a != "--allow-private")
        .map(|a| a.to_owned())
        .collect();
    let mut strict = std::process::Command::new(cmd.get_program());
    strict.args(args);
    fetch(&mut strict, &crawl, 0);
    assert!(server.logs().is_empty(), "a loopback address was contacted");
    let lines = crawl_log(&crawl, "00001");
    assert!(
        lines
            .iter()
            .any(|l| l.status == Status::Error(ErrorCode::PrivateAddress)),
        "{lines:#?}"
    );
    assert!(
        lines.iter().any(|l| l.url == server.url("inside.test", "/")
            && l.status == Status::Error(ErrorCode::PrivateAddress)),
        "the page itself is logged as refused: {lines:#?}"
    );
}

#[test]
fn refused_connections_are_logged_and_drop_the_host() {
    let server = Server::builder()
        .host(
            "up.test",
            Routes::new()
                .route("/robots.txt", Response::not_found())
                .route("/", Response::html("up")),
        )
        .start()
        .unwrap();
    let ip = server.addr("up.test").ip();
    // A port on the server's address where nothing listens.
    let closed = {
        let l = std::net::TcpListener::bind((ip, 0)).unwrap();
        l.local_addr().unwrap().port()
    };
    let crawl = crawl_dir("refused");
    // First run: up.test's robots.txt is fetched and kept in hosts.db.
    write_segment(&crawl, "00001", &server, &[("up.test", "/")]);
    fetch(&mut fetch_cmd(&crawl, &server), &crawl, 0);

    // Then up.test stops listening (same name, a closed port): its pages
    // are refused, and after two failures in a row it is dropped. For
    // down.test, whose robots.txt is not known, robots.txt is refused.
    let mut w = common::segment::SegmentWriter::create(crawl.segment_path("00002")).unwrap();
    let url = |host: &str, i: u32| format!("http://{host}:{closed}/{i}");
    for host in ["up.test", "down.test"] {
        for i in 0..5 {
            w.write(&common::segment::SegmentRecord {
                host: host.into(),
                url: url(host, i),
                ..Default::default()
            })
            .unwrap();
        }
    }
    w.finish().unwrap();
    let hosts = crawl.root().join("hosts-refused");
    std::fs::write(&hosts, format!("{ip} up.test down.test\n")).unwrap();
    fetch(
        fetch_cmd(&crawl, &server)
            .arg("--hosts-file")
            .arg(&hosts)
            .args(["--max-failures", "2", "--robots-retry-delay", "50ms"]),
        &crawl,
        0,
    );
    let lines = crawl_log(&crawl, "00002");
    for i in 0..2 {
        assert_eq!(
            status_of(&lines, &url("up.test", i)),
            Status::Error(ErrorCode::Refused)
        );
    }
    for i in 2..5 {
        assert_eq!(
            status_of(&lines, &url("up.test", i)),
            Status::Error(ErrorCode::HostDropped)
        );
    }
    let robots: Vec<_> = lines.iter().filter(|l| l.via == Via::Robots).collect();
    assert!(
        !robots.is_empty()
            && robots
                .iter()
                .all(|l| l.status == Status::Error(ErrorCode::Refused)),
        "{lines:#?}"
    );
    for i in 0..5 {
        assert_eq!(
            status_of(&lines, &url("down.test", i)),
            Status::Error(ErrorCode::RobotsUnavailable)
        );
    }
    // Nothing is lost: every URL of both given-up hosts comes back. Of
    // up.test's two pages asked (refused), the first costs its URL a try
    // (the host had answered before it), the second none (the host was
    // failing: its backoff's); those never asked (dropped after failures)
    // come back untried, and so do down.test's, whose robots.txt was
    // refused (a host that does not answer is held by its backoff).
    let left = leftover(&crawl, "00002");
    assert_eq!(left.len(), 10, "{left:#?}");
    let is = |via: Via, tries: u32| {
        move |r: &&common::segment::SegmentRecord| r.via == via && r.tries == tries
    };
    let up_left: Vec<_> = left.iter().filter(|r| r.host == "up.test").collect();
    let count = |via, tries| up_left.iter().copied().filter(is(via, tries)).count();
    assert_eq!(count(Via::Retry, 1), 1, "{left:#?}");
    assert_eq!(count(Via::Retry, 0), 1, "{left:#?}");
    assert_eq!(count(Via::Leftover, 0), 3, "{left:#?}");
    assert!(
        left.iter()
            .filter(|r| r.host == "down.test")
            .all(|r| is(Via::Leftover, 0)(&r)),
        "{left:#?}"
    );
}

#[test]
fn retry_after_is_capped_and_the_delay_follows_response_times() {
    let slow = |body: &str| Response::html(body.to_string()).delay(Duration::from_millis(100));
    let server = Server::builder()
        .host(
            "forever.test",
            robots_ok(Routes::new())
                .route("/1", Response::retry_after(503, 86_400))
                .route("/2", Response::html("two")),
        )
        .host(
            "slow.test",
            Routes::new()
                .route("/robots.txt", slow("User-agent: *\nDisallow:\n"))
                .route("/1", slow("one"))
                .route("/2", slow("two"))
                .route("/3", slow("three")),
        )
        .start()
        .unwrap();
    let crawl = crawl_dir("retry-after-cap");
    write_segment(
        &crawl,
        "00001",
        &server,
        &[
            ("forever.test", "/1"),
            ("forever.test", "/2"),
            ("slow.test", "/1"),
            ("slow.test", "/2"),
            ("slow.test", "/3"),
        ],
    );
    let started = Instant::now();
    fetch(
        fetch_cmd(&crawl, &server).args(["--max-retry-after", "700ms", "--delay-factor", "2"]),
        &crawl,
        0,
    );
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "a day-long Retry-After was not capped"
    );
    // Retry-After: one day, capped at 0.7 s.
    let forever = server.log("forever.test");
    let i = forever.iter().position(|e| e.target == "/1").unwrap();
    let gap = forever[i + 1].start.duration_since(forever[i].end);
    assert!(
        gap >= Duration::from_millis(700),
        "capped wait not kept: {gap:?}"
    );
    let lines = crawl_log(&crawl, "00001");
    let l = lines
        .iter()
        .find(|l| l.url == server.url("forever.test", "/1"))
        .unwrap();
    assert!(
        l.note.contains("retry-after 700ms"),
        "the note says the wait kept: {l:?}"
    );
    // Every answer of slow.test takes 100 ms: with factor 2 the delay is
    // at least 200 ms although --min-delay is 0.
    assert_polite(&server.log("slow.test"), Duration::from_millis(200));
}
