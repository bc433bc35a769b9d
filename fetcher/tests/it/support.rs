//! What the fetcher's tests share: a crawl directory with one segment, the
//! real binary run against loopback servers (through `testkit::bins`, with a
//! time bound and a report on failure), and readers for what it wrote.
#![allow(dead_code)] // each test file uses its own part of this module

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use common::crawldir::CrawlDir;
use common::crawllog::{LogLine, parse_line};
use common::segment::SegmentRecord;
use common::warc::{WarcReader, WarcRecord};
use testkit::bins::{self, Finished, Running};
pub use testkit::segment::read as read_segment;
use testkit::server::Server;
pub use testkit::tempdir::TempCrawl;

/// Longest a fetcher run may take in a test before it is killed.
pub const RUN_BOUND: Duration = Duration::from_secs(60);

/// A fresh crawl directory for one test, with its `segments/`, `fetched/`
/// and `logs/` (removed when the test passes, kept when it fails).
pub fn crawl_dir(test: &str) -> TempCrawl {
    let crawl = TempCrawl::new(&format!("fetcher-{test}"));
    CrawlDir::create(crawl.root()).expect("create crawl dir");
    crawl
}

/// Writes segment `id` with `(host, path)` pairs served by `server`.
pub fn write_segment(crawl: &CrawlDir, id: &str, server: &Server, urls: &[(&str, &str)]) {
    testkit::segment::write_links(
        &crawl.segment_path(id),
        urls.iter()
            .map(|(host, path)| (host.to_string(), server.url(host, path))),
    );
}

/// Writes segment `id` with `urls` in the order given, each in its host's
/// queue (hosts the server may not have).
pub fn write_urls(crawl: &CrawlDir, id: &str, urls: &[String]) {
    testkit::segment::write_links(
        &crawl.segment_path(id),
        urls.iter()
            .map(|u| (testkit::segment::host_of(u), u.clone())),
    );
}

/// Writes the server's names to `CRAWL/hosts` and returns the path.
pub fn hosts_file(crawl: &CrawlDir, server: &Server) -> PathBuf {
    let p = crawl.root().join("hosts");
    std::fs::write(&p, server.hosts_file()).expect("hosts file");
    p
}

/// `fetcher fetch CRAWL` with the test defaults (`testkit::bins::fetch_cmd`:
/// agent `testbot`, the server's hosts file, loopback allowed, no delay,
/// quiet progress, no proxy from the environment), eight threads and short
/// timeouts.
pub fn fetch_cmd(crawl: &CrawlDir, server: &Server) -> Command {
    let hosts = hosts_file(crawl, server);
    let mut cmd = bins::fetch_cmd(crawl.root(), &hosts);
    cmd.args([
        "--threads",
        "8",
        "--connect-timeout",
        "2s",
        "--first-byte-timeout",
        "2s",
        "--download-timeout",
        "5s",
    ]);
    cmd
}

/// Runs `cmd` (a fetcher command) to its end, at most [`RUN_BOUND`], and
/// panics with a report (its output and the files under the crawl
/// directory) unless it exits with `code`.
pub fn fetch(cmd: &mut Command, crawl: &CrawlDir, code: i32) -> Finished {
    bins::run_within(cmd, crawl.root(), code, RUN_BOUND)
}

/// Starts `cmd` (a fetcher command) in the background, for a test that
/// signals it while it runs; end it with [`finish`].
pub fn start(cmd: &mut Command) -> Running {
    bins::spawn(cmd).expect("start fetcher")
}

/// Waits for a fetcher started by [`start`] (killed after `bound`) and
/// panics with a report unless it exits with `code`.
pub fn finish(run: Running, bound: Duration, crawl: &CrawlDir, code: i32) -> Finished {
    let out = run.finish(bound);
    bins::assert_code(&out, code, Some(crawl.root()));
    out
}

/// Lines of `fetched/ID/crawl.log`.
pub fn crawl_log(crawl: &CrawlDir, id: &str) -> Vec<LogLine> {
    let text = std::fs::read_to_string(crawl.fetched_dir(id).join("crawl.log")).unwrap_or_default();
    text.lines()
        .map(|l| parse_line(l).unwrap_or_else(|e| panic!("bad crawl-log line {l:?}: {e}")))
        .collect()
}

/// Records of `fetched/ID/leftover.v5.tsv.zst`.
pub fn leftover(crawl: &CrawlDir, id: &str) -> Vec<SegmentRecord> {
    read_segment(&crawl.leftover_path(id))
}

/// The WARC files of a run.
pub fn warc_files(crawl: &CrawlDir, id: &str) -> Vec<PathBuf> {
    testkit::warcio::warc_files(&crawl.fetched_dir(id))
}

/// Every response record of a run (blocks cut at 64 KiB).
pub fn responses(crawl: &CrawlDir, id: &str) -> Vec<WarcRecord> {
    let mut out = Vec::new();
    for f in warc_files(crawl, id) {
        let mut r = WarcReader::open(&f, 64 * 1024).expect("open WARC");
        let mut rec = WarcRecord::default();
        while r.read_next(&mut rec).expect("read WARC") {
            if rec.record_type() == Some("response") {
                out.push(rec.clone());
            }
        }
    }
    out
}

/// URLs of the pages (not robots.txt) stored in the run's WARC files as
/// they are, reading each file up to a torn or damaged record (as after a
/// crash, before the rerun repairs it).
pub fn stored_urls_tolerant(crawl: &CrawlDir, id: &str) -> Vec<String> {
    let mut out = Vec::new();
    for f in warc_files(crawl, id) {
        let mut r = WarcReader::open(&f, 1024).expect("open WARC");
        let mut rec = WarcRecord::default();
        while let Ok(true) = r.read_next(&mut rec) {
            if rec.record_type() == Some("response") && rec.header("X-Crawl-Via") != Some("robots")
            {
                out.extend(rec.target_uri().map(str::to_string));
            }
        }
    }
    out
}

/// `stats.json` of a run.
pub fn stats(crawl: &CrawlDir, id: &str) -> serde_json::Value {
    let path = crawl.fetched_dir(id).join("stats.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Runs `warcio check` on every WARC file of the run.
pub fn warcio_check(crawl: &CrawlDir, id: &str) {
    let files = warc_files(crawl, id);
    assert!(!files.is_empty(), "no WARC file written");
    testkit::warcio::check(&files).unwrap_or_else(|e| panic!("warcio check failed: {e}"));
}
