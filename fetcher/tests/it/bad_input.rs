//! Bad input and failing output: each gets one clear error naming the file
//! (or line), and loses nothing.

use crate::support;

use std::process::Command;

use common::crawllog::{ErrorCode, Status};
use common::segment::Via;
use support::*;
use testkit::server::{Response, Routes, Server};

/// `fetcher: ` lines of stderr that contain `needle`.
fn lines_with<'a>(stderr: &'a str, needle: &str) -> Vec<&'a str> {
    stderr.lines().filter(|l| l.contains(needle)).collect()
}

#[test]
fn malformed_segment_lines_are_named_skipped_and_counted() {
    let server = Server::builder()
        .host(
            "a.test",
            Routes::new()
                .route("/robots.txt", Response::not_found())
                .route("/1", Response::html("one"))
                .route("/2", Response::html("two")),
        )
        .start()
        .unwrap();
    let crawl = crawl_dir("malformed-line");
    let text = format!(
        "a.test\t{}\t0\t1\tseed\t0\t-\t-\t-\t-\t-\t-\nthis line has no fields\na.test\t{}\tmany\t1\tseed\t0\t-\t-\t-\t-\t-\t-\na.test\t{}\t0\t1\tseed\t0\t-\t-\t-\t-\t-\t-\n",
        server.url("a.test", "/1"),
        server.url("a.test", "/bad"),
        server.url("a.test", "/2"),
    );
    let zst = zstd::encode_all(text.as_bytes(), 3).unwrap();
    std::fs::write(crawl.segment_path("00001"), zst).unwrap();

    let out = fetch(&mut fetch_cmd(&crawl, &server), &crawl, 0);
    let err = &out.stderr;
    let seg = crawl.segment_path("00001").display().to_string();
    assert_eq!(lines_with(err, &format!("{seg}:2: ")).len(), 1, "{err}");
    assert_eq!(lines_with(err, &format!("{seg}:3: ")).len(), 1, "{err}");
    assert!(err.contains("2 malformed lines skipped"), "{err}");
    // The good lines around them are fetched.
    let mut fetched: Vec<String> = server.log("a.test").into_iter().map(|e| e.target).collect();
    fetched.sort();
    assert_eq!(fetched, ["/1", "/2", "/robots.txt"]);
    let run_stats = stats(&crawl, "00001");
    assert_eq!(run_stats["malformed_lines"], 2);
    assert_eq!(run_stats["segment_urls"], 2);
}

#[test]
fn a_segment_that_is_not_zstd_is_refused_with_its_name() {
    let server = Server::builder()
        .host("a.test", Routes::new())
        .start()
        .unwrap();
    let crawl = crawl_dir("not-zstd");
    std::fs::write(
        crawl.segment_path("00001"),
        "a.test\thttp://a.test/\t0\t0\tseed\t0\n",
    )
    .unwrap();
    let out = fetch(&mut fetch_cmd(&crawl, &server), &crawl, 1);
    let err = &out.stderr;
    let seg = crawl.segment_path("00001").display().to_string();
    let named = lines_with(err, &format!("fetcher: {seg}: "));
    assert_eq!(named.len(), 1, "{err}");
    assert!(named[0].contains("zstd"), "{err}");
    assert!(!crawl.is_fetched("00001"));
    assert!(server.logs().is_empty(), "nothing fetched");
    // No scratch file is left behind (only the lock, which is no data).
    let left: Vec<_> = std::fs::read_dir(crawl.fetched_dir("00001"))
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name())
        .filter(|n| n != ".lock")
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_robots_txt_of_garbage_allows_what_it_cannot_read() {
    let mut garbage: Vec<u8> = (0..20_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    garbage.extend_from_slice(b"\nUser-agent: *\nDisallow: /no\n\0\xff\xfe");
    let server = Server::builder()
        .host(
            "a.test",
            Routes::new()
                .route(
                    "/robots.txt",
                    Response::status(200)
                        .header("Content-Type", "text/plain")
                        .body(garbage),
                )
                .route("/yes", Response::html("yes"))
                .route("/no", Response::html("no")),
        )
        .start()
        .unwrap();
    let crawl = crawl_dir("robots-garbage");
    write_segment(
        &crawl,
        "00001",
        &server,
        &[("a.test", "/yes"), ("a.test", "/no")],
    );
    fetch(&mut fetch_cmd(&crawl, &server), &crawl, 0);
    let targets: Vec<String> = server.log("a.test").into_iter().map(|e| e.target).collect();
    assert_eq!(
        targets,
        ["/robots.txt", "/yes"],
        "the readable rule applies"
    );
    let lines = crawl_log(&crawl, "00001");
    let no = lines
        .iter()
        .find(|l| l.url == server.url("a.test", "/no"))
        .unwrap();
    assert_eq!(no.status, Status::Error(ErrorCode::Robots));
    assert_eq!(
        no.note, "robots.txt: Disallow: /no",
        "the note names the rule"
    );
}

/// Pages whose bodies do not compress much, so that the WARC file grows.
fn noisy_page(seed: u32) -> String {
    let mut x = seed.wrapping_mul(747_796_405).wrapping_add(1);
    (0..30_000)
        .map(|_| {
            x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            char::from(b'a' + (x >> 27) as u8 % 26)
        })
        .collect()
}

#[test]
fn a_full_disk_stops_the_run_naming_the_file_and_the_rerun_completes() {
    let n = 40;
    let mut routes = Routes::new().route("/robots.txt", Response::not_found());
    for i in 0..n {
        routes = routes.route(format!("/{i}"), Response::html(noisy_page(i)));
    }
    let server = Server::builder().host("a.test", routes).start().unwrap();
    let crawl = crawl_dir("full-disk");
    let paths: Vec<String> = (0..n).map(|i| format!("/{i}")).collect();
    let pairs: Vec<(&str, &str)> = paths.iter().map(|p| ("a.test", p.as_str())).collect();
    write_segment(&crawl, "00001", &server, &pairs);
    let all: Vec<String> = paths.iter().map(|p| server.url("a.test", p)).collect();

    // A file size limit of 200 KiB (with SIGXFSZ ignored, a write past it
    // fails with EFBIG) stands in for a full disk: the WARC file hits it
    // after a few pages, every other file stays far below it.
    let cmd = fetch_cmd(&crawl, &server);
    let mut limited = Command::new("bash");
    limited
        .arg("-c")
        .arg(r#"trap "" XFSZ; ulimit -f 200; exec "$0" "$@""#)
        .arg(cmd.get_program())
        .args(cmd.get_args());
    let out = fetch(&mut limited, &crawl, 1);
    let err = &out.stderr;
    let failures = lines_with(err, "File too large");
    assert_eq!(failures.len(), 1, "the error is printed once:\n{err}");
    let dir = crawl.fetched_dir("00001").display().to_string();
    assert!(
        failures[0].starts_with(&format!("fetcher: {dir}/crawl-00001-"))
            && failures[0].contains(".warc.gz: "),
        "the error names the WARC file:\n{err}"
    );
    assert!(
        failures[0].contains("fetcher fetch"),
        "the error says how to resume:\n{err}"
    );
    // The run's log file (for cron) holds the error too.
    let logs: Vec<String> = std::fs::read_dir(crawl.logs_dir())
        .unwrap()
        .filter_map(|e| std::fs::read_to_string(e.unwrap().path()).ok())
        .collect();
    assert!(
        logs.iter().any(|l| l.contains("File too large")),
        "error missing from CRAWL/logs: {logs:?}"
    );
    assert!(!crawl.is_fetched("00001"), "no DONE after a failed write");
    assert!(!crawl.leftover_path("00001").exists(), "no leftover either");
    let stored_before = stored_urls_tolerant(&crawl, "00001");
    assert!(
        !stored_before.is_empty() && stored_before.len() < all.len(),
        "stopped part way: {} stored",
        stored_before.len()
    );
    // Fetching stopped with the writer. Requests made: robots.txt, the
    // pages stored, the one whose write failed, those queued for the
    // writer (one slot per worker: 8) and the one a worker was handing
    // over when the writer gave up; not the rest of the segment.
    let requests_before = server.logs().len();
    assert!(
        requests_before <= 1 + stored_before.len() + 1 + 8 + 1,
        "{requests_before} requests for {} pages stored: fetching went on after the failure",
        stored_before.len()
    );
    // The failed run closed hosts.db cleanly: one plain file, which a
    // reader (the segmenter) opens without leaving a file beside it.
    assert_hosts_db_alone(&crawl);
    drop(common::hoststate::HostDb::open_read_only(crawl.hosts_db_path()).unwrap());
    assert_hosts_db_alone(&crawl);

    // With space again, the same command completes the segment.
    fetch(&mut fetch_cmd(&crawl, &server), &crawl, 0);
    assert!(crawl.is_fetched("00001"));
    warcio_check(&crawl, "00001");
    let mut stored: Vec<String> = responses(&crawl, "00001")
        .iter()
        .filter(|r| r.header("X-Crawl-Via") != Some("robots"))
        .filter_map(|r| r.target_uri().map(str::to_string))
        .collect();
    stored.sort();
    let mut expected = all.clone();
    expected.sort();
    assert_eq!(stored, expected, "every page stored exactly once");
    let mut logged: Vec<String> = crawl_log(&crawl, "00001")
        .into_iter()
        .filter(|l| l.via != Via::Robots)
        .map(|l| l.url)
        .collect();
    logged.sort();
    assert_eq!(logged, expected, "one crawl-log line per URL");
    // What was stored before the failure was not asked for again.
    let asked_again: Vec<String> = server.logs()[requests_before..]
        .iter()
        .map(|e| server.url("a.test", &e.target))
        .filter(|u| stored_before.contains(u))
        .collect();
    assert!(asked_again.is_empty(), "fetched twice: {asked_again:?}");
}

/// `hosts.db` is one plain SQLite file: not in WAL mode, without
/// `hosts.db-wal` or `hosts.db-shm` beside it.
fn assert_hosts_db_alone(crawl: &common::crawldir::CrawlDir) {
    let beside: Vec<String> = ["-wal", "-shm"]
        .iter()
        .map(|s| format!("{}{s}", crawl.hosts_db_path().display()))
        .filter(|p| std::path::Path::new(p).exists())
        .collect();
    assert!(beside.is_empty(), "left beside hosts.db: {beside:?}");
    // The journal mode is byte 18 of the header: 2 in WAL mode, 1 without.
    let header = std::fs::read(crawl.hosts_db_path()).unwrap();
    assert_eq!(header[18], 1, "hosts.db left in WAL mode");
}
