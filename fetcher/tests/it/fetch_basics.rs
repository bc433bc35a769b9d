//! A small crawl over three loopback hosts: everything fetched once,
//! politely (checked from the server side), stored as valid WARC, logged.

use crate::support;

use std::time::Duration;

use common::crawllog::Status;
use common::segment::Via;
use support::*;
use testkit::gzip;
use testkit::server::{Response, Routes, Server, assert_polite, assert_polite_by_host};

#[test]
fn fetches_every_host_at_once_politely_into_valid_warc() {
    let page = |n: &str| Response::html(format!("<html><body>page {n}</body></html>"));
    let routes = |robots: &str| {
        let mut r = Routes::new().route("/robots.txt", Response::text(robots.to_string()));
        for i in 0..6 {
            r = r.route(format!("/p{i}"), page(&i.to_string()));
        }
        r
    };
    let server = Server::builder()
        .host("a.test", routes("User-agent: *\nDisallow:\n"))
        .host("b.test", routes("User-agent: *\nCrawl-delay: 0.15\n"))
        .host(
            "c.test",
            routes("User-agent: *\nAllow: /\n").route(
                "/gz",
                Response::html("compressed ".repeat(200))
                    .header("Content-Encoding", "gzip")
                    .body(gzip(("compressed ".repeat(200)).as_bytes())),
            ),
        )
        .start()
        .unwrap();
    let crawl = crawl_dir("basics");
    let mut urls = Vec::new();
    for host in ["a.test", "b.test", "c.test"] {
        for i in 0..6 {
            urls.push((host, format!("/p{i}")));
        }
    }
    urls.push(("c.test", "/gz".to_string()));
    let pairs: Vec<(&str, &str)> = urls.iter().map(|(h, p)| (*h, p.as_str())).collect();
    write_segment(&crawl, "00001", &server, &pairs);

    let out = fetch(
        fetch_cmd(&crawl, &server).args(["--min-delay", "50ms"]),
        &crawl,
        0,
    );
    assert!(crawl.is_fetched("00001"), "DONE written");
    // The summary at the end, even with --progress none.
    let err = &out.stderr;
    let summary = err
        .lines()
        .find(|l| l.starts_with("fetcher: done (complete)"))
        .unwrap_or_else(|| panic!("no summary:\n{err}"));
    assert!(
        summary.contains(&format!(" {} pages ", urls.len())) && summary.contains("0 errors"),
        "{summary}"
    );

    // Server side: one request at a time per host, spaced by the delay
    // (Crawl-delay for b.test).
    let log = server.logs();
    assert_polite_by_host(&log, |h| {
        if h == "b.test" {
            Duration::from_millis(150)
        } else {
            Duration::from_millis(50)
        }
    });
    // robots.txt first on every host, then each URL exactly once.
    for host in ["a.test", "b.test", "c.test"] {
        let mine = server.log(host);
        assert_eq!(mine[0].target, "/robots.txt", "{host}: robots.txt first");
        let pages = mine.iter().filter(|e| e.target != "/robots.txt").count();
        assert_eq!(pages, if host == "c.test" { 7 } else { 6 }, "{host}");
        assert!(
            mine.iter()
                .all(|e| e.user_agent.as_deref().is_some_and(
                    |ua| ua.starts_with("testbot/") && ua.contains("http://bot.test/about")
                )),
            "User-Agent names the product token and contact URL"
        );
    }
    // Hosts were served together, not one after another: b.test (slowest)
    // started before a.test was finished.
    let a_last = server.log("a.test").iter().map(|e| e.end).max().unwrap();
    let b_first = server.log("b.test").iter().map(|e| e.start).min().unwrap();
    assert!(b_first < a_last, "hosts fetched one after another");

    // Crawl log: a line per URL and per robots.txt.
    let lines = crawl_log(&crawl, "00001");
    assert_eq!(lines.len(), urls.len() + 3);
    assert_eq!(lines.iter().filter(|l| l.via == Via::Robots).count(), 3);
    assert!(
        lines.iter().all(|l| l.status == Status::Http(200)),
        "{lines:#?}"
    );

    // WARC: valid for warcio; hops/via fields; the gzip body stored as received.
    warcio_check(&crawl, "00001");
    let recs = responses(&crawl, "00001");
    assert_eq!(recs.len(), urls.len() + 3);
    let gz = recs
        .iter()
        .find(|r| r.target_uri().is_some_and(|u| u.ends_with("/gz")))
        .expect("gz stored");
    assert_eq!(gz.header("X-Crawl-Hops"), Some("1"));
    assert_eq!(gz.header("X-Crawl-Via"), Some("link"));
    assert_eq!(
        gz.header("WARC-IP-Address"),
        Some(server.addr("c.test").ip().to_string().as_str())
    );
    let block = String::from_utf8_lossy(&gz.block);
    assert!(block.contains("Content-Encoding: gzip\r\n"), "{block}");
    assert!(!block.contains("compressed"), "payload stored compressed");
    assert_eq!(
        common::body::decoded_payload(&gz.block, 1 << 20),
        "compressed ".repeat(200).as_bytes(),
        "and it decodes to the page"
    );

    // warcio can index it: one request and one response per fetch.
    let index = testkit::warcio::index(&warc_files(&crawl, "00001")[0]);
    let indexed_responses = index
        .iter()
        .filter(|e| e["warc-type"] == "response")
        .count();
    assert_eq!(indexed_responses, urls.len() + 3, "{index:?}");

    assert!(leftover(&crawl, "00001").is_empty());
    assert_eq!(stats(&crawl, "00001")["responses"], (urls.len() + 3) as u64);
}

#[test]
fn key_ip_shares_politeness_between_names_of_one_address() {
    let mut routes = Routes::new().route("/robots.txt", Response::not_found());
    for i in 0..5 {
        routes = routes.route(format!("/{i}"), Response::html("x"));
    }
    let server = Server::builder().host("one.test", routes).start().unwrap();
    let crawl = crawl_dir("key-ip");
    // Two names for the one server address.
    let ip = server.addr("one.test").ip();
    let port = server.port();
    let hosts = crawl.root().join("two-names");
    std::fs::write(&hosts, format!("{ip} one.test\n{ip} two.test\n")).unwrap();
    let mut w = common::segment::SegmentWriter::create(crawl.segment_path("00001")).unwrap();
    for name in ["one.test", "two.test"] {
        for i in 0..5 {
            w.write(&common::segment::SegmentRecord {
                host: name.into(),
                url: format!("http://{name}:{port}/{i}"),
                ..Default::default()
            })
            .unwrap();
        }
    }
    w.finish().unwrap();
    fetch(
        fetch_cmd(&crawl, &server)
            .arg("--hosts-file")
            .arg(&hosts)
            .args(["--key", "ip", "--min-delay", "40ms"]),
        &crawl,
        0,
    );
    let log = server.log("one.test");
    assert_eq!(log.len(), 12, "two robots.txt and ten pages");
    // Both names hit one address: one queue, so the delay holds across them.
    assert_polite(&log, Duration::from_millis(40));
}

#[test]
fn warc_files_roll_over_at_the_size_limit() {
    let mut routes = Routes::new().route("/robots.txt", Response::not_found());
    for i in 0..30 {
        routes = routes.route(
            format!("/{i}"),
            Response::html(format!("{i} {}", "y".repeat(20_000))),
        );
    }
    let server = Server::builder().host("a.test", routes).start().unwrap();
    let crawl = crawl_dir("rollover");
    let paths: Vec<String> = (0..30).map(|i| format!("/{i}")).collect();
    let pairs: Vec<(&str, &str)> = paths.iter().map(|p| ("a.test", p.as_str())).collect();
    write_segment(&crawl, "00001", &server, &pairs);
    fetch(
        fetch_cmd(&crawl, &server).args(["--warc-max-size", "2000"]),
        &crawl,
        0,
    );
    let files = warc_files(&crawl, "00001");
    assert!(files.len() > 5, "only {} WARC files", files.len());
    warcio_check(&crawl, "00001");
    for f in &files {
        let mut r = common::warc::WarcReader::open(f, 1024).unwrap();
        let mut rec = common::warc::WarcRecord::default();
        assert!(r.read_next(&mut rec).unwrap());
        assert_eq!(rec.record_type(), Some("warcinfo"), "{}", f.display());
    }
    assert_eq!(responses(&crawl, "00001").len(), 31);
}

#[test]
fn a_domain_sorted_segment_keeps_every_host_active_with_small_batches() {
    // One big host first in the file, small hosts after it: with 4 URLs
    // of a queue in memory at a time, the small hosts must still start
    // at once, not after the big one is done.
    let mut big = Routes::new().route("/robots.txt", Response::not_found());
    for i in 0..60 {
        big = big.route(format!("/{i}"), Response::html(format!("big {i}")));
    }
    let small = || {
        Routes::new()
            .route("/robots.txt", Response::not_found())
            .route("/a", Response::html("a"))
            .route("/b", Response::html("b"))
    };
    let server = Server::builder()
        .host("big.test", big)
        .host("s1.test", small())
        .host("s2.test", small())
        .host("s3.test", small())
        .start()
        .unwrap();
    let crawl = crawl_dir("domain-sorted");
    let big_paths: Vec<String> = (0..60).map(|i| format!("/{i}")).collect();
    let mut pairs: Vec<(&str, &str)> = big_paths.iter().map(|p| ("big.test", p.as_str())).collect();
    for h in ["s1.test", "s2.test", "s3.test"] {
        pairs.extend([(h, "/a"), (h, "/b")]);
    }
    write_segment(&crawl, "00001", &server, &pairs);
    fetch(
        fetch_cmd(&crawl, &server).args([
            "--min-delay",
            "30ms",
            "--queue-batch",
            "4",
            "--threads",
            "2",
        ]),
        &crawl,
        0,
    );
    let big_log = server.log("big.test");
    assert_eq!(
        big_log.len(),
        61,
        "every URL of the big host, read in batches"
    );
    let tenth_big = big_log.iter().map(|e| e.start).nth(10).unwrap();
    for h in ["s1.test", "s2.test", "s3.test"] {
        let log = server.log(h);
        assert_eq!(log.len(), 3, "{h}");
        let last = log.iter().map(|e| e.end).max().unwrap();
        assert!(last < tenth_big, "{h} waited for the big host");
    }
    assert_polite(&big_log, Duration::from_millis(30));
}

/// After a run, `hosts.db` alone is whole (its write-ahead log folded in):
/// a copy of the file by itself, the obvious backup, holds every host.
/// And a fetch with nothing to do says so and leaves no log file.
#[test]
fn hosts_db_alone_holds_every_host_after_a_run() {
    let page = Response::html("<html><body>p</body></html>");
    let routes = || {
        Routes::new()
            .route("/robots.txt", Response::text("User-agent: *\nDisallow:\n"))
            .route("/p", page.clone())
    };
    let server = Server::builder()
        .host("a.test", routes())
        .host("b.test", routes())
        .start()
        .unwrap();
    let crawl = crawl_dir("hosts-db-alone");
    write_segment(
        &crawl,
        "00001",
        &server,
        &[("a.test", "/p"), ("b.test", "/p")],
    );
    fetch(&mut fetch_cmd(&crawl, &server), &crawl, 0);

    let wal = crawl.root().join("hosts.db-wal");
    assert_eq!(
        std::fs::metadata(&wal).map_or(0, |m| m.len()),
        0,
        "the write-ahead log is folded into hosts.db"
    );
    let copy_dir = crawl.root().join("backup");
    std::fs::create_dir_all(&copy_dir).unwrap();
    let copy = copy_dir.join("hosts.db");
    std::fs::copy(crawl.hosts_db_path(), &copy).unwrap();
    let db = common::hoststate::HostDb::open_read_only(&copy)
        .unwrap()
        .expect("the copy is there");
    assert_eq!(db.count().unwrap(), 2);
    for host in ["a.test", "b.test"] {
        let state = db
            .get(host)
            .unwrap()
            .unwrap_or_else(|| panic!("{host} missing"));
        assert_eq!(state.pages_total, 1, "{host}: {state:?}");
        assert!(state.robots.is_some(), "{host}: robots.txt kept");
    }

    // Nothing waits to be fetched: said on stderr, no log file.
    let logs_before = std::fs::read_dir(crawl.logs_dir()).unwrap().count();
    let out = fetch(&mut fetch_cmd(&crawl, &server), &crawl, 0);
    assert!(
        out.stderr.contains("no segment waiting to be fetched"),
        "{}",
        out.stderr
    );
    assert_eq!(
        std::fs::read_dir(crawl.logs_dir()).unwrap().count(),
        logs_before
    );
}

/// The `http-header-from` field of each WARC file's `warcinfo` record of a
/// run (`None` where it has none).
fn warcinfo_from(crawl: &common::crawldir::CrawlDir, id: &str) -> Vec<Option<String>> {
    let mut out = Vec::new();
    for f in warc_files(crawl, id) {
        let mut r = common::warc::WarcReader::open(&f, 64 * 1024).unwrap();
        let mut rec = common::warc::WarcRecord::default();
        assert!(r.read_next(&mut rec).unwrap());
        assert_eq!(rec.record_type(), Some("warcinfo"), "{}", f.display());
        let block = String::from_utf8_lossy(&rec.block).into_owned();
        out.push(
            block
                .lines()
                .find_map(|l| l.strip_prefix("http-header-from: "))
                .map(str::to_string),
        );
    }
    out
}

#[test]
fn from_is_sent_with_every_request_and_kept_in_warcinfo() {
    use std::sync::{Arc, Mutex};
    // Each request's path and From header.
    type Seen = Mutex<Vec<(String, Option<String>)>>;
    let seen: Arc<Seen> = Arc::default();
    let answer = |body: &'static str| {
        let seen = seen.clone();
        move |req: &testkit::server::Request| {
            seen.lock().unwrap().push((
                req.path().to_string(),
                req.header("From").map(str::to_string),
            ));
            Response::text(body)
        }
    };
    let server = Server::builder()
        .host(
            "a.test",
            Routes::new()
                .route_fn("/robots.txt", answer("User-agent: *\nDisallow:\n"))
                .route_fn("/1", answer("one")),
        )
        .host(
            "b.test",
            Routes::new()
                .route_fn("/robots.txt", answer("User-agent: *\nDisallow:\n"))
                .route_fn("/2", answer("two")),
        )
        .start()
        .unwrap();
    let crawl = crawl_dir("from");
    let taken = |seen: &Seen| std::mem::take(&mut *seen.lock().unwrap());

    // Unset (the default): no From header, no warcinfo field.
    write_segment(&crawl, "00001", &server, &[("a.test", "/1")]);
    fetch(&mut fetch_cmd(&crawl, &server), &crawl, 0);
    let asked = taken(&seen);
    assert_eq!(asked.len(), 2, "robots.txt and /1: {asked:?}");
    assert!(asked.iter().all(|(_, from)| from.is_none()), "{asked:?}");
    assert_eq!(warcinfo_from(&crawl, "00001"), [None]);

    // In crawl.toml: on every request (robots.txt included), as written in
    // the request records, and in the warcinfo record of every file.
    std::fs::write(crawl.config_path(), "[agent]\nfrom = \"ops@example.org\"\n").unwrap();
    write_segment(&crawl, "00002", &server, &[("b.test", "/2")]);
    fetch(&mut fetch_cmd(&crawl, &server), &crawl, 0);
    let asked = taken(&seen);
    assert_eq!(asked.len(), 2, "robots.txt and /2: {asked:?}");
    assert!(
        asked
            .iter()
            .all(|(_, from)| from.as_deref() == Some("ops@example.org")),
        "{asked:?}"
    );
    assert_eq!(
        warcinfo_from(&crawl, "00002"),
        [Some("ops@example.org".to_string())]
    );
    for f in warc_files(&crawl, "00002") {
        let mut r = common::warc::WarcReader::open(&f, 64 * 1024).unwrap();
        let mut rec = common::warc::WarcRecord::default();
        let mut requests = 0;
        while r.read_next(&mut rec).unwrap() {
            if rec.record_type() == Some("request") {
                requests += 1;
                let head = String::from_utf8_lossy(&rec.block).to_ascii_lowercase();
                assert!(head.contains("\r\nfrom: ops@example.org\r\n"), "{head}");
            }
        }
        assert_eq!(requests, 2);
    }
    warcio_check(&crawl, "00002");
}
