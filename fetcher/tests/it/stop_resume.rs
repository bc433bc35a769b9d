//! Stopping: SIGTERM leaves a leftover that completes the segment when
//! fetched next; `kill -9` then a rerun loses no URL and stores none twice.

use crate::support;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use common::crawldir::CrawlDir;
use common::segment::Via;
use support::*;
use testkit::bins::{Running, Signal};
use testkit::server::{Response, Routes, Server};

const HOSTS: [&str; 4] = ["a.test", "b.test", "c.test", "d.test"];

fn server(per_host: usize) -> Server {
    let body: String = "x".repeat(50_000);
    let mut b = Server::builder();
    for h in HOSTS {
        let mut r = Routes::new().route("/robots.txt", Response::not_found());
        for i in 0..per_host {
            r = r.route(format!("/{i}"), Response::html(body.clone()));
        }
        b = b.host(h, r);
    }
    b.start().unwrap()
}

fn segment(crawl: &CrawlDir, server: &Server, per_host: usize) -> Vec<String> {
    let paths: Vec<String> = (0..per_host).map(|i| format!("/{i}")).collect();
    let pairs: Vec<(&str, &str)> = HOSTS
        .iter()
        .flat_map(|h| paths.iter().map(move |p| (*h, p.as_str())))
        .collect();
    write_segment(crawl, "00001", server, &pairs);
    pairs.iter().map(|(h, p)| server.url(h, p)).collect()
}

fn stored_pages(crawl: &CrawlDir, id: &str) -> Vec<String> {
    responses(crawl, id)
        .iter()
        .filter(|r| r.header("X-Crawl-Via") != Some("robots"))
        .filter_map(|r| r.target_uri().map(str::to_string))
        .collect()
}

#[test]
fn sigterm_leaves_a_leftover_that_completes_the_segment() {
    let per_host = 30;
    let server = server(per_host);
    let crawl = crawl_dir("sigterm");
    let all = segment(&crawl, &server, per_host);
    let child = start(fetch_cmd(&crawl, &server).args(["--min-delay", "40ms"]));
    assert!(
        server.wait_for_requests(20, Duration::from_secs(20)),
        "the fetcher never got going"
    );
    child.signal(Signal::Term).unwrap();
    finish(child, RUN_BOUND, &crawl, 130);
    assert!(crawl.is_fetched("00001"), "DONE written after a clean stop");
    warcio_check(&crawl, "00001");
    let first = stored_pages(&crawl, "00001");
    let left = leftover(&crawl, "00001");
    assert!(
        !left.is_empty() && first.len() < all.len(),
        "stopped before the end"
    );
    assert!(left.iter().all(|r| r.via == Via::Leftover && r.tries == 0));
    assert_eq!(
        first.len() + left.len(),
        all.len(),
        "every URL stored or left over"
    );

    // The leftover, fetched as the next segment, completes the work.
    std::fs::copy(crawl.leftover_path("00001"), crawl.segment_path("00002")).unwrap();
    fetch(&mut fetch_cmd(&crawl, &server), &crawl, 0);
    assert!(crawl.is_fetched("00002"));
    let mut stored = first;
    stored.extend(stored_pages(&crawl, "00002"));
    stored.sort();
    let mut expected = all.clone();
    expected.sort();
    assert_eq!(
        stored, expected,
        "each URL stored exactly once over the two runs"
    );
    // The server saw each page once.
    let mut counts: HashMap<String, usize> = HashMap::new();
    for e in server
        .logs()
        .into_iter()
        .filter(|e| e.target != "/robots.txt")
    {
        *counts.entry(format!("{}{}", e.host, e.target)).or_default() += 1;
    }
    assert_eq!(counts.len(), all.len());
    assert!(counts.values().all(|&n| n == 1), "a page was fetched twice");
}

#[test]
fn kill_9_then_rerun_loses_nothing_and_stores_nothing_twice() {
    let per_host = 40;
    let server = server(per_host);
    let crawl = crawl_dir("kill9");
    let all = segment(&crawl, &server, per_host);
    let child = start(fetch_cmd(&crawl, &server).args(["--min-delay", "25ms"]));
    assert!(
        server.wait_for_requests(40, Duration::from_secs(20)),
        "the fetcher never got going"
    );
    child.signal(Signal::Kill).unwrap();
    child.finish(RUN_BOUND);
    assert!(!crawl.is_fetched("00001"));
    let before: usize = server
        .logs()
        .iter()
        .filter(|e| e.target != "/robots.txt")
        .count();
    let stored_before = stored_urls_tolerant(&crawl, "00001");
    assert!(!stored_before.is_empty(), "nothing stored before the kill");

    // Make sure both files end torn, as after a kill in the middle of a
    // write: half a gzip member on the WARC file, half a line on the log.
    let last_warc = warc_files(&crawl, "00001").pop().unwrap();
    let head = std::fs::read(&last_warc).unwrap()[..100].to_vec();
    append(&last_warc, &head);
    append(
        &crawl.fetched_dir("00001").join("crawl.log"),
        b"2026-01-01T00:00:00.000Z\t200\t5",
    );

    let rerun_at = Instant::now();
    let out = fetch(&mut fetch_cmd(&crawl, &server), &crawl, 0);
    assert!(crawl.is_fetched("00001"));
    let err = &out.stderr;
    assert!(
        err.contains("torn bytes cut off the last WARC file")
            && err.contains("a torn crawl-log line cut"),
        "{err}"
    );
    warcio_check(&crawl, "00001");

    let mut stored = stored_pages(&crawl, "00001");
    stored.sort();
    let mut expected = all.clone();
    expected.sort();
    assert_eq!(stored, expected, "every URL stored, none twice");
    let lines = crawl_log(&crawl, "00001");
    let mut logged: Vec<String> = lines
        .iter()
        .filter(|l| l.via != Via::Robots)
        .map(|l| l.url.clone())
        .collect();
    logged.sort();
    assert_eq!(logged, expected, "one crawl-log line per URL");
    assert!(leftover(&crawl, "00001").is_empty());

    // From the server side: nothing stored before the kill was asked for
    // again, and only requests in flight at the kill (at most one per
    // host) were made twice.
    let asked_again: Vec<String> = server
        .logs()
        .iter()
        .filter(|e| e.start > rerun_at)
        .map(|e| server.url(&e.host, &e.target))
        .filter(|u| stored_before.contains(u))
        .collect();
    assert!(
        asked_again.is_empty(),
        "stored, then fetched again: {asked_again:?}"
    );
    let mut counts: HashMap<String, usize> = HashMap::new();
    for e in server
        .logs()
        .into_iter()
        .filter(|e| e.target != "/robots.txt")
    {
        *counts.entry(format!("{}{}", e.host, e.target)).or_default() += 1;
    }
    let twice = counts.values().filter(|&&n| n > 1).count();
    assert!(counts.values().all(|&n| n <= 2));
    assert!(
        twice <= HOSTS.len(),
        "{twice} pages fetched again after the kill"
    );
    assert!(
        before > 0 && before < all.len(),
        "killed mid-run ({before} pages before)"
    );
}

fn append(path: &std::path::Path, bytes: &[u8]) {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    f.write_all(bytes).unwrap();
}

#[test]
fn time_limit_and_min_hosts_stop_with_a_leftover() {
    let per_host = 30;
    let server = server(per_host);
    let crawl = crawl_dir("time-limit");
    let all = segment(&crawl, &server, per_host);
    fetch(
        fetch_cmd(&crawl, &server).args(["--min-delay", "50ms", "--time-limit", "400ms"]),
        &crawl,
        0,
    );
    assert!(crawl.is_fetched("00001"));
    assert_eq!(stats(&crawl, "00001")["stop_reason"], "time-limit");
    let stored = stored_pages(&crawl, "00001").len();
    let left = leftover(&crawl, "00001").len();
    assert!(left > 0 && stored > 0);
    assert_eq!(stored + left, all.len());

    // min-hosts: one host with one URL, one with many; with --min-hosts 2
    // the run stops once only the big host still has work.
    let crawl = crawl_dir("min-hosts");
    let mut pairs = vec![("a.test", "/0")];
    let paths: Vec<String> = (0..per_host).map(|i| format!("/{i}")).collect();
    pairs.extend(paths.iter().map(|p| ("b.test", p.as_str())));
    write_segment(&crawl, "00001", &server, &pairs);
    fetch(
        fetch_cmd(&crawl, &server).args(["--min-delay", "50ms", "--min-hosts", "2"]),
        &crawl,
        0,
    );
    assert_eq!(stats(&crawl, "00001")["stop_reason"], "min-hosts");
    let left = leftover(&crawl, "00001");
    assert!(!left.is_empty() && left.iter().all(|r| r.host == "b.test"));

    // A segment that starts with fewer queues than --min-hosts is fetched
    // whole (stopping at once would leave it unfetched every round).
    let crawl = crawl_dir("min-hosts-small");
    write_segment(
        &crawl,
        "00001",
        &server,
        &[("a.test", "/0"), ("b.test", "/0")],
    );
    let out = fetch(
        fetch_cmd(&crawl, &server).args(["--min-hosts", "5"]),
        &crawl,
        0,
    );
    let err = &out.stderr;
    assert!(err.contains("--min-hosts 5 ignored"), "{err}");
    assert_eq!(stats(&crawl, "00001")["stop_reason"], "complete");
    assert_eq!(stored_pages(&crawl, "00001").len(), 2);
}

/// A host whose `/hang` never answers and whose `/ok` does, and a flag set
/// once `/hang` is being served.
fn stuck_server() -> (Server, Arc<AtomicBool>) {
    let hanging = Arc::new(AtomicBool::new(false));
    let seen = hanging.clone();
    let server = Server::builder()
        .host(
            "stuck.test",
            Routes::new()
                .route("/robots.txt", Response::not_found())
                .route_fn("/hang", move |_: &testkit::server::Request| {
                    seen.store(true, Ordering::SeqCst);
                    Response::never_answer()
                })
                .route("/ok", Response::html("ok")),
        )
        .start()
        .unwrap();
    (server, hanging)
}

/// Waits until `/hang` of [`stuck_server`] is in flight (20 s at most).
fn wait_hanging(hanging: &AtomicBool) {
    let t0 = Instant::now();
    while !hanging.load(Ordering::SeqCst) && t0.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(hanging.load(Ordering::SeqCst), "/hang never requested");
}

/// `fetch` with timeouts so long that `/hang` only ends with a stop, and
/// `--stop-grace grace`.
fn spawn_stuck_fetch(crawl: &CrawlDir, server: &Server, grace: &str) -> Running {
    start(
        fetch_cmd(crawl, server)
            .args(["--first-byte-timeout", "30s", "--download-timeout", "30s"])
            .args(["--stop-grace", grace]),
    )
}

#[test]
fn a_second_signal_exits_at_once_and_the_rerun_completes() {
    let (server, hanging) = stuck_server();
    let crawl = crawl_dir("second-signal");
    write_segment(
        &crawl,
        "00001",
        &server,
        &[("stuck.test", "/hang"), ("stuck.test", "/ok")],
    );
    let child = spawn_stuck_fetch(&crawl, &server, "30s");
    // Signal once /hang is in flight (it never gets an answer).
    wait_hanging(&hanging);
    child.signal(Signal::Term).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    child.signal(Signal::Int).unwrap();
    let started = Instant::now();
    finish(child, Duration::from_secs(10), &crawl, 131);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the second signal did not exit at once"
    );
    assert!(!crawl.is_fetched("00001"), "no DONE after a second signal");

    fetch(
        fetch_cmd(&crawl, &server).args(["--first-byte-timeout", "300ms"]),
        &crawl,
        0,
    );
    assert!(crawl.is_fetched("00001"));
    let lines = crawl_log(&crawl, "00001");
    assert_eq!(lines.iter().filter(|l| l.via != Via::Robots).count(), 2);
}

#[test]
fn the_grace_period_abandons_a_hanging_request_and_keeps_its_url() {
    let (server, hanging) = stuck_server();
    let crawl = crawl_dir("grace");
    write_segment(
        &crawl,
        "00001",
        &server,
        &[("stuck.test", "/hang"), ("stuck.test", "/ok")],
    );
    let child = spawn_stuck_fetch(&crawl, &server, "300ms");
    wait_hanging(&hanging);
    child.signal(Signal::Term).unwrap();
    let signalled = Instant::now();
    finish(child, Duration::from_secs(20), &crawl, 130);
    assert!(
        signalled.elapsed() < Duration::from_secs(10),
        "the hanging request held the stop for {:?}",
        signalled.elapsed()
    );
    assert!(crawl.is_fetched("00001"), "a clean stop writes DONE");
    // The abandoned request was never answered: not logged as attempted,
    // and left over untried with the URL never reached.
    let lines = crawl_log(&crawl, "00001");
    assert!(lines.iter().all(|l| l.via == Via::Robots), "{lines:#?}");
    let mut left: Vec<(String, Via, u32)> = leftover(&crawl, "00001")
        .into_iter()
        .map(|r| (r.url, r.via, r.tries))
        .collect();
    left.sort();
    assert_eq!(
        left,
        [
            (server.url("stuck.test", "/hang"), Via::Leftover, 0),
            (server.url("stuck.test", "/ok"), Via::Leftover, 0)
        ]
    );
}

#[test]
fn a_second_fetcher_on_the_same_segment_is_refused() {
    let (server, hanging) = stuck_server();
    let crawl = crawl_dir("two-fetchers");
    write_segment(&crawl, "00001", &server, &[("stuck.test", "/hang")]);
    let first = spawn_stuck_fetch(&crawl, &server, "100ms");
    wait_hanging(&hanging);
    // The first fetcher's WARC file (its robots.txt record) may be written
    // after /hang is in flight: wait for it (20 s at most), so that the
    // files compared below are all the first fetcher's.
    let t0 = Instant::now();
    while warc_files(&crawl, "00001").is_empty() && t0.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(10));
    }
    let warc_before = warc_files(&crawl, "00001");
    assert!(!warc_before.is_empty(), "the first fetcher stored nothing");

    let out = fetch(&mut fetch_cmd(&crawl, &server), &crawl, 1);
    let err = &out.stderr;
    assert!(err.contains("being fetched by another fetcher"), "{err}");
    assert_eq!(
        warc_files(&crawl, "00001"),
        warc_before,
        "the second one wrote"
    );

    first.signal(Signal::Term).unwrap();
    finish(first, Duration::from_secs(20), &crawl, 130);
    assert!(crawl.is_fetched("00001"));
    warcio_check(&crawl, "00001");
}

#[test]
fn a_signal_while_the_segment_loads_is_a_clean_stop() {
    // A segment big enough that loading it takes a noticeable time, on
    // hosts that answer slowly, so the signal lands early in the run.
    let mut b = Server::builder();
    for h in HOSTS {
        b = b.host(h, |_: &testkit::server::Request| {
            Response::html("<p>page</p>").delay(Duration::from_millis(200))
        });
    }
    let server = b.start().unwrap();
    let crawl = crawl_dir("signal-at-load");
    let paths: Vec<String> = (0..50_000).map(|i| format!("/{i}")).collect();
    let pairs: Vec<(&str, &str)> = HOSTS
        .iter()
        .flat_map(|h| paths.iter().map(move |p| (*h, p.as_str())))
        .collect();
    write_segment(&crawl, "00001", &server, &pairs);
    let child = start(&mut fetch_cmd(&crawl, &server));
    // The work file appears while the segment is being loaded.
    let work = crawl.fetched_dir("00001").join(".work.tsv");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !work.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(work.exists(), "the fetcher never started loading");
    child.signal(Signal::Term).unwrap();
    finish(child, RUN_BOUND, &crawl, 130);
    assert!(crawl.is_fetched("00001"), "DONE written after a clean stop");
    let stored = stored_pages(&crawl, "00001");
    let left = leftover(&crawl, "00001");
    assert_eq!(
        stored.len() + left.len(),
        pairs.len(),
        "every URL stored or left over"
    );
}

/// Four hosts of `per_host` pages whose bodies do not compress (so that a
/// small `--warc-max-size` rolls the WARC file every few records).
fn random_server(per_host: usize) -> Server {
    let mut rng = common::testutil::Rng::new(16);
    let mut b = Server::builder();
    for h in HOSTS {
        let mut r = Routes::new().route("/robots.txt", Response::not_found());
        for i in 0..per_host {
            let body: String = (0..3000)
                .map(|_| char::from(b'a' + (rng.next_u64() % 26) as u8))
                .collect();
            r = r.route(format!("/{i}"), Response::html(body));
        }
        b = b.host(h, r);
    }
    b.start().unwrap()
}

/// A run fetched whole into many small WARC files, then made to look like
/// one killed before its end (no `DONE`, leftover or `stats.json`).
fn unfinished_run(test: &str, server: &Server, per_host: usize) -> (TempCrawl, Vec<String>) {
    let crawl = crawl_dir(test);
    let all = segment(&crawl, server, per_host);
    fetch(
        fetch_cmd(&crawl, server).args(["--warc-max-size", "8000"]),
        &crawl,
        0,
    );
    let dir = crawl.fetched_dir("00001");
    for name in ["DONE", "stats.json", "leftover.v5.tsv.zst"] {
        std::fs::remove_file(dir.join(name)).unwrap();
    }
    assert!(!crawl.is_fetched("00001"));
    (crawl, all)
}

/// Page URLs (not robots.txt) of the response records of one WARC file,
/// read up to the first damage.
fn pages_in(file: &std::path::Path) -> Vec<String> {
    responses_in(file, false)
}

/// The target URIs of the response records in `file`, robots.txt
/// responses included when `robots` is set.
fn responses_in(file: &std::path::Path, robots: bool) -> Vec<String> {
    let mut out = Vec::new();
    let Ok(mut r) = common::warc::WarcReader::open(file, 1024) else {
        return out;
    };
    let mut rec = common::warc::WarcRecord::default();
    while let Ok(true) = r.read_next(&mut rec) {
        if rec.record_type() == Some("response")
            && (robots || rec.header("X-Crawl-Via") != Some("robots"))
        {
            out.extend(rec.target_uri().map(str::to_string));
        }
    }
    out
}

/// Pages requested from the server since `t` (robots.txt left out).
fn asked_since(server: &Server, t: Instant) -> Vec<String> {
    let mut asked: Vec<String> = server
        .logs()
        .iter()
        .filter(|e| e.start > t && e.target != "/robots.txt")
        .map(|e| server.url(&e.host, &e.target))
        .collect();
    asked.sort();
    asked
}

/// The crawl log agrees with the WARC files: every line parses, each URL
/// with an HTTP status has exactly one response record and each response
/// record one line.
fn assert_log_agrees(crawl: &CrawlDir, id: &str, all: &[String]) {
    // `crawl_log` panics on a line that is not a crawl-log line.
    let lines = crawl_log(crawl, id);
    let mut logged: Vec<String> = lines
        .iter()
        .filter(|l| matches!(l.status, common::crawllog::Status::Http(_)))
        .map(|l| l.url.clone())
        .collect();
    logged.sort();
    let mut records: Vec<String> = responses(crawl, id)
        .iter()
        .filter_map(|r| r.target_uri().map(str::to_string))
        .collect();
    records.sort();
    assert_eq!(logged, records, "crawl.log and the WARC files disagree");
    let mut pages = stored_pages(crawl, id);
    pages.sort();
    let mut expected = all.to_vec();
    expected.sort();
    assert_eq!(pages, expected, "every page stored once");
}

#[test]
fn pages_lost_from_the_warc_files_are_fetched_again_and_the_log_is_corrected() {
    let per_host = 8;
    let server = random_server(per_host);
    let (crawl, all) = unfinished_run("lost-records", &server, per_host);
    let dir = crawl.fetched_dir("00001");
    let files = warc_files(&crawl, "00001");
    assert!(files.len() >= 5, "{} WARC files", files.len());

    // One file emptied, one moved out of the run, the last cut in half,
    // and garbage among the crawl-log lines.
    let emptied = &files[1];
    let moved = &files[2];
    let last = files.last().unwrap();
    let mut lost: Vec<String> = pages_in(emptied);
    lost.extend(pages_in(moved));
    // robots.txt responses may be lost too (their lines go, they are not
    // asked again while the host state holds the rules).
    let mut lost_lines = responses_in(emptied, true).len() + responses_in(moved, true).len();
    std::fs::write(emptied, b"").unwrap();
    std::fs::rename(moved, crawl.root().join("moved-away.warc.gz")).unwrap();
    let last_bytes = std::fs::read(last).unwrap();
    let before_cut = pages_in(last);
    let lines_before_cut = responses_in(last, true).len();
    std::fs::write(last, &last_bytes[..last_bytes.len() / 2]).unwrap();
    let kept = pages_in(last);
    lost_lines += lines_before_cut - responses_in(last, true).len();
    lost.extend(before_cut.into_iter().filter(|u| !kept.contains(u)));
    lost.sort();
    assert!(!lost.is_empty());

    let log_path = dir.join("crawl.log");
    let text = std::fs::read(&log_path).unwrap();
    let mut lines: Vec<&[u8]> = text.split_inclusive(|&b| b == b'\n').collect();
    lines.insert(3, b"this is not a crawl-log line\n");
    lines.insert(6, b"\x00\xff\xfe binary\n");
    std::fs::write(&log_path, lines.concat()).unwrap();

    let rerun_at = Instant::now();
    let out = fetch(&mut fetch_cmd(&crawl, &server), &crawl, 0);
    assert!(crawl.is_fetched("00001"));
    let err = &out.stderr;

    // The lost pages, and only they, were asked for again, once each.
    assert_eq!(asked_since(&server, rerun_at), lost, "{err}");
    assert_log_agrees(&crawl, "00001", &all);

    // Each damage is named with its file (and line).
    let log = log_path.display().to_string();
    let emptied_name = emptied.file_name().unwrap().to_str().unwrap();
    assert!(
        err.contains(&format!("{log}:4: not a crawl-log line"))
            && err.contains(&format!("{log}:7: not a crawl-log line")),
        "{err}"
    );
    assert!(
        err.contains(emptied_name) && err.contains("empty WARC file"),
        "{err}"
    );
    assert!(
        err.contains(&format!("{log}:")) && err.contains("is in no WARC file"),
        "{err}"
    );
    // The lines taken out are kept as they were.
    let dropped = std::fs::read(dir.join("crawl.log.dropped")).unwrap();
    let dropped: Vec<&[u8]> = dropped.split_inclusive(|&b| b == b'\n').collect();
    assert!(dropped.contains(&b"this is not a crawl-log line\n".as_slice()));
    assert!(dropped.contains(&b"\x00\xff\xfe binary\n".as_slice()));
    assert_eq!(
        dropped.len(),
        2 + lost_lines,
        "the garbage and the lines of lost pages"
    );
}

#[test]
fn a_file_that_is_not_a_warc_in_place_of_the_last_is_moved_aside_with_a_warning() {
    let per_host = 4;
    let server = random_server(per_host);
    let (crawl, all) = unfinished_run("not-warc", &server, per_host);
    let last = warc_files(&crawl, "00001").pop().unwrap();
    let lost = {
        let mut l = pages_in(&last);
        l.sort();
        l
    };
    assert!(!lost.is_empty());
    let other = b"<html>a page saved under the WARC file's name</html>\n".repeat(100);
    std::fs::write(&last, &other).unwrap();

    let rerun_at = Instant::now();
    let out = fetch(&mut fetch_cmd(&crawl, &server), &crawl, 0);
    let mut aside = last.clone().into_os_string();
    aside.push(".not-warc");
    assert_eq!(
        std::fs::read(&aside).unwrap(),
        other,
        "moved aside untouched"
    );
    assert_eq!(asked_since(&server, rerun_at), lost);
    assert_log_agrees(&crawl, "00001", &all);
    // A warning (in the run log as such), naming the file.
    let name = last.file_name().unwrap().to_str().unwrap();
    assert!(out.stderr.contains(name), "{}", out.stderr);
    let run_log: String = std::fs::read_dir(crawl.logs_dir())
        .unwrap()
        .flatten()
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
        .collect();
    assert!(
        run_log
            .lines()
            .any(|l| l.contains(" warning ") && l.contains(name) && l.contains("moved aside")),
        "{run_log}"
    );
}

/// Starts `cmd` with the testing hook set to pause at `point`, waits (at
/// most 30 s) until it says it paused there, and kills it with `SIGKILL`.
fn kill_9_at(cmd: &mut std::process::Command, point: &str) {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let mut child = cmd
        .env("FETCHER_PAUSE_AT", point)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let want = format!("fetcher: paused at {point}");
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut seen = Vec::new();
    let reached = loop {
        match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(line) if line == want => break true,
            Ok(line) => seen.push(line),
            Err(_) => break false,
        }
    };
    let _ = child.kill();
    child.wait().unwrap();
    reader.join().unwrap();
    assert!(reached, "never paused at {point}:\n{}", seen.join("\n"));
}

#[test]
fn a_kill_just_after_robots_txt_was_read_breaks_no_crawl_delay() {
    let crawl_delay = Duration::from_secs(1);
    let mut routes = Routes::new().route(
        "/robots.txt",
        Response::text("User-agent: *\nCrawl-delay: 1\n"),
    );
    for i in 0..3 {
        routes = routes.route(format!("/{i}"), Response::html("page"));
    }
    let server = Server::builder().host("a.test", routes).start().unwrap();
    let crawl = crawl_dir("kill-after-robots");
    write_segment(
        &crawl,
        "00001",
        &server,
        &[("a.test", "/0"), ("a.test", "/1"), ("a.test", "/2")],
    );
    // The run is killed once robots.txt is read, before anything (the WARC
    // files, hosts.db) keeps its Crawl-delay; only the contacts journal
    // knows a request went out.
    let cmd = || {
        let mut cmd = fetch_cmd(&crawl, &server);
        cmd.args(["--max-crawl-delay", "1500ms", "--tail-share", "0"]);
        cmd
    };
    kill_9_at(&mut cmd(), "robots-read");
    assert!(!crawl.is_fetched("00001"));
    assert!(server.wait_for_requests(1, Duration::from_secs(5)));
    assert_eq!(server.log("a.test").len(), 1, "only robots.txt was asked");
    fetch(&mut cmd(), &crawl, 0);
    assert!(crawl.is_fetched("00001"));

    // From the server's log: robots.txt asked again by the rerun, every
    // page asked, and no two requests closer than the Crawl-delay.
    let mut log = server.log("a.test");
    log.sort_by_key(|e| e.start);
    let targets: Vec<&str> = log.iter().map(|e| e.target.as_str()).collect();
    assert_eq!(targets[..2], ["/robots.txt", "/robots.txt"], "{targets:?}");
    assert_eq!(targets.len(), 5, "{targets:?}");
    for pair in log.windows(2) {
        let gap = pair[1].start.saturating_duration_since(pair[0].end);
        assert!(
            gap >= crawl_delay,
            "{} asked {} ms after {} (Crawl-delay: {} ms)",
            pair[1].target,
            gap.as_millis(),
            pair[0].target,
            crawl_delay.as_millis()
        );
    }
}
